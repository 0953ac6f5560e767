"""The Behaviour page: what users did with the models' lists, beside what the judges said."""

from django.http import Http404
from django.shortcuts import get_object_or_404, render

from annotation.errors import InputError
from annotation.models import Campaign
from annotation.roles import can_manage, can_review, role_required
from metrics.reports.data import behaviour_data
from metrics.reports.html import behaviour_charts
from metrics.selectors.launch import launch_report_build
from plumbing.routers import reads_from_replica

# The page's resamples: enough for its 95% intervals and p-values to two decimals, in a second or two.
PAGE_RESAMPLES = 2000


@role_required(can_review)
@reads_from_replica
def behaviour(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        report = launch_report_build(
            campaign=campaign,
            model=request.GET.get("model") or None,
            agreement=False,
            n_resamples=PAGE_RESAMPLES,
        )
    except InputError:
        raise Http404("no such experimental model") from None
    data = behaviour_data(report.behaviour)
    context = {
        "campaign": campaign,
        "report": report,
        "behaviour": data,
        "charts": behaviour_charts(data),
        "can_manage": can_manage(request.user),
    }
    return render(request, "metrics/behaviour.html", context)
