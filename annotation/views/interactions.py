"""A campaign's interaction logs in the browser: the logs it has, and a form to add one."""

from django.conf import settings
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.bundle.reading import spooled_lines
from annotation.errors import InputError, TaskError
from annotation.forms import InteractionLogForm
from annotation.models import Campaign
from annotation.roles import can_manage, role_required
from annotation.selectors.interactions import interaction_logs
from annotation.services.interactions import interaction_log_delete, interaction_log_import


@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def interactions(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = InteractionLogForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            with spooled_lines(upload.chunks(), upload.name, settings.MAX_UPLOAD_BYTES) as lines:
                log = interaction_log_import(
                    campaign=campaign, lines=lines, source=upload.name, created_by=request.user
                )
        except InputError as error:
            form.add_error("file", error.for_page())
        except TaskError as error:  # an archived campaign
            form.add_error(None, str(error))
        else:
            messages.success(
                request,
                _("%(source)s: %(impressions)s impressions in %(requests)s lists added.")
                % {"source": log.source, "impressions": log.impressions, "requests": log.requests},
            )
            return redirect("annotation:campaign_interactions", campaign_id=campaign.pk)
    context = {"campaign": campaign, "form": form, "logs": interaction_logs(campaign=campaign)}
    return render(request, "annotation/interactions.html", context)


@role_required(can_manage)
@require_POST
def interaction_log_remove(request, campaign_id: int, log_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        log = interaction_log_delete(campaign=campaign, log_id=log_id)
    except (InputError, TaskError) as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("%(source)s: its %(impressions)s impressions removed.")
            % {"source": log.source, "impressions": log.impressions},
        )
    return redirect("annotation:campaign_interactions", campaign_id=campaign.pk)
