from django.shortcuts import get_object_or_404, render

from annotation.models import Campaign
from annotation.roles import can_manage, can_review, role_required
from metrics.selectors.quality import campaign_quality
from plumbing.routers import reads_from_replica


@role_required(can_review)
@reads_from_replica
def quality(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    context = {"quality": campaign_quality(campaign=campaign), "can_manage": can_manage(request.user)}
    return render(request, "metrics/quality.html", context)
