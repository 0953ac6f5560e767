"""The home page (an annotator's campaigns), a campaign's progress page, and the health check."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from annotation.models import Campaign
from annotation.roles import can_annotate, can_manage, can_review, role_required
from annotation.selectors.campaigns import campaign_progress, campaigns_summary
from annotation.selectors.labels import campaign_label_stamp
from annotation.selectors.workbench import annotator_campaigns


@require_GET
def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


@login_required
def home(request):
    """An annotator's campaigns with their own progress; a reviewer's or manager's, every campaign with the
    team's progress, disputes waiting and last label (the decision is fetched by the page)."""
    campaigns = annotator_campaigns(annotator=request.user)
    reviewer = can_review(request.user)
    summaries = campaigns_summary(campaigns=[row.campaign for row in campaigns]) if reviewer else {}
    context = {
        "campaigns": [(row, summaries.get(row.campaign.pk)) for row in campaigns],
        "can_annotate": can_annotate(request.user),
        "can_review": reviewer,
        "can_manage": can_manage(request.user),
    }
    return render(request, "annotation/home.html", context)


@role_required(can_review)
@require_GET
def progress(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    context = {"campaign": campaign, "progress": campaign_progress(campaign=campaign)}
    return render(request, "annotation/progress.html", context)


@never_cache
@role_required(can_review)
@require_GET
def label_stamp(request, campaign_id: int):
    """What results pages poll to refresh themselves when the campaign's labels change."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return JsonResponse({"stamp": campaign_label_stamp(campaign=campaign)})
