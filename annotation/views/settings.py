"""Managers' pages for one campaign's settings: texts, settings and scale, archiving, and which annotators'
labels are left out."""

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.bundle import parse_campaign_change
from annotation.campaign_settings import setting_values
from annotation.errors import InputError, TaskError
from annotation.forms import CampaignArchiveForm, CampaignSettingsForm, ExclusionForm, form_errors_text
from annotation.models import Campaign
from annotation.previews import campaign_texts, model_names_in
from annotation.roles import can_manage, role_required
from annotation.selectors.campaigns import campaign_settings_view
from annotation.services.campaigns import campaign_archive, campaign_change
from annotation.services.exclusions import annotator_exclude, annotator_reinstate, exclusions_confirm


@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def campaign_settings(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    view = campaign_settings_view(campaign=campaign)
    initial = {key: getattr(campaign, key) for key in CampaignSettingsForm.OUTSIDE_SETTINGS}
    initial.update(setting_values(campaign))
    form = CampaignSettingsForm(request.POST or None, initial=initial, scale_locked=view.scale_locked)
    if request.method == "POST" and form.is_valid():
        try:
            changes = parse_campaign_change(form.change(), setting_values(campaign), "settings")
            campaign = campaign_change(campaign=campaign, changes=changes)
        except (InputError, TaskError) as error:
            form.add_input_error(error)
        else:
            messages.success(request, _("Settings of %(name)s saved.") % {"name": campaign.name})
            texts = campaign_texts(campaign.name, campaign.guidelines, campaign.scale)
            for warning in model_names_in(texts, view.model_names):
                messages.warning(request, warning)
            return redirect("annotation:campaign_settings", campaign_id=campaign.pk)
    context = {"campaign": campaign, "form": form, "view": view}
    return render(request, "annotation/campaign_settings.html", context)


@role_required(can_manage)
@require_POST
def archive(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = CampaignArchiveForm(request.POST)
    if not form.is_valid():
        messages.error(request, form_errors_text(form))
    else:
        archived = form.cleaned_data["archived"]
        campaign_archive(campaign=campaign, archived=archived)
        if archived:
            done = _("%(name)s archived: read-only and hidden from annotators.")
        else:
            done = _("%(name)s restored.")
        messages.success(request, done % {"name": campaign.name})
    return redirect("annotation:campaign_settings", campaign_id=campaign.pk)


@role_required(can_manage)
@require_POST
def exclusions(request, campaign_id: int):
    """Exclude an annotator's labels, reinstate them, or confirm the exclusions; then back to `next`."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = ExclusionForm(request.POST)
    if not form.is_valid():
        messages.error(request, form_errors_text(form))
        return redirect("annotation:campaign_settings", campaign_id=campaign.pk)
    data = form.cleaned_data
    try:
        if data["action"] == "exclude":
            annotator_exclude(
                campaign=campaign, username=data["annotator"], by=request.user, reason=data["reason"]
            )
            messages.success(
                request,
                _("%(annotator)s's labels are left out of %(name)s.")
                % {"annotator": data["annotator"], "name": campaign.name},
            )
        elif data["action"] == "reinstate":
            annotator_reinstate(campaign=campaign, username=data["annotator"], by=request.user)
            messages.success(
                request,
                _("%(annotator)s's labels count again in %(name)s.")
                % {"annotator": data["annotator"], "name": campaign.name},
            )
        else:
            exclusions_confirm(campaign=campaign)
            messages.success(request, _("Exclusions confirmed."))
    except (InputError, TaskError) as error:
        messages.error(request, str(error))
    back = data["next"]
    if back.startswith("/") and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        return HttpResponseRedirect(back)  # a path, never a view's name for redirect() to look up
    return redirect("annotation:campaign_settings", campaign_id=campaign.pk)
