"""Managers' pages: people (add, deactivate, reset a password, change a role) and a campaign's members."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.errors import InputError, TaskError
from annotation.forms import CampaignMembersForm, PersonActionForm, PersonForm, form_errors_text
from annotation.models import Campaign
from annotation.roles import ROLE_LABELS, can_manage, role_required, roles_grantable
from annotation.selectors.people import campaign_member_ids, people_list
from annotation.services import people as services


def _hand_over(request, username: str, path: str) -> None:
    """The set-password link, shown once: it is in this message and nowhere else."""
    link = request.build_absolute_uri(path)
    messages.success(
        request,
        _("Hand this link to %(name)s to set their password; it is shown only now: %(link)s")
        % {"name": username, "link": link},
    )


@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def people(request):
    roles = roles_grantable(request.user)
    form = PersonForm(request.POST or None, roles=roles)
    if request.method == "POST" and form.is_valid():
        try:
            user, path = services.person_create(by=request.user, **form.cleaned_data)
        except InputError as error:
            form.add_error(error.field or None, error.message)
        else:
            _hand_over(request, user.username, path)
            return redirect("annotation:people")
    context = {"people": people_list(viewer=request.user), "form": form, "roles": roles}
    return render(request, "annotation/people.html", context)


@role_required(can_manage)
@require_POST
def person(request, user_id: int):
    """One action on a person; one the rules refuse them (`roles.may_manage`) is a 403."""
    user = get_object_or_404(get_user_model(), pk=user_id)
    form = PersonActionForm(request.POST, roles=roles_grantable(request.user))
    if not form.is_valid():
        messages.error(request, form_errors_text(form))
        return redirect("annotation:people")
    action, role = form.cleaned_data["action"], form.cleaned_data["role"]
    try:
        if action == "password_reset":
            _hand_over(request, user.username, services.person_password_reset(by=request.user, user=user))
        elif action == "role":
            services.person_role_set(by=request.user, user=user, role=role)
            messages.success(
                request,
                _("The role of %(name)s is now %(role)s.")
                % {"name": user.username, "role": ROLE_LABELS[role]},
            )
        elif action == "activate":
            services.person_active_set(by=request.user, user=user, active=True)
            messages.success(request, _("%(name)s is active.") % {"name": user.username})
        else:
            services.person_active_set(by=request.user, user=user, active=False)
            messages.success(request, _("%(name)s is deactivated.") % {"name": user.username})
    except InputError as error:
        messages.error(request, error.message)
    return redirect("annotation:people")


@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def members(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    initial = {"open_to_all": campaign.open_to_all, "members": campaign_member_ids(campaign=campaign)}
    form = CampaignMembersForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.campaign_members_set(campaign=campaign, **form.cleaned_data)
        except TaskError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, _("Members of %(name)s saved.") % {"name": campaign.name})
        return redirect("annotation:campaign_members", campaign_id=campaign.pk)
    return render(request, "annotation/members.html", {"campaign": campaign, "form": form})
