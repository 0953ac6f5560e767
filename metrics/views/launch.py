from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import content_disposition_header

from annotation.errors import InputError
from annotation.models import Campaign, Query
from annotation.roles import can_review, role_required
from annotation.selectors.labels import campaign_label_stamp
from metrics.reports import (
    CONTENT_TYPES,
    FORMAT_LABELS,
    REPORT_FORMATS,
    report_file,
    report_filename,
)
from metrics.reports.data import chart_data, report_data
from metrics.selectors.drilldown import query_drilldown
from metrics.selectors.launch import launch_report_build
from metrics.selectors.overview import campaign_overview
from plumbing.routers import reads_from_replica


@role_required(can_review)
@reads_from_replica
def overview(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    context = {
        "overview": campaign_overview(campaign=campaign),
        "report_formats": FORMAT_LABELS.items(),
        "refresh_ms": int(settings.RESULTS_REFRESH_SECONDS * 1000),
    }
    return render(request, "metrics/overview.html", context)


def _report(campaign: Campaign, model: str):
    try:
        return launch_report_build(campaign=campaign, model=model)
    except InputError:
        raise Http404("no such experimental model") from None


@role_required(can_review)
@reads_from_replica
def comparison(request, campaign_id: int, model: str):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    # Read before the labels: a label that arrives in between makes the page reload once more, not never.
    stamp = campaign_label_stamp(campaign=campaign)
    report = _report(campaign, model)
    data = report_data(report)
    context = {
        "label_stamp": stamp,
        "refresh_ms": int(settings.RESULTS_REFRESH_SECONDS * 1000),
        "report": report,
        "data": data,
        "selected": data["comparisons"][report.model],
        "charts": chart_data(report),
        "formats": FORMAT_LABELS.items(),
    }
    return render(request, "metrics/comparison.html", context)


@role_required(can_review)
@reads_from_replica
def report_download(request, campaign_id: int, model: str, format: str):
    if format not in REPORT_FORMATS:
        raise Http404("unknown report format")
    report = _report(get_object_or_404(Campaign, pk=campaign_id), model)
    response = HttpResponse(
        report_file(report, format), content_type=f"{CONTENT_TYPES[format]}; charset=utf-8"
    )
    response["Content-Disposition"] = content_disposition_header(True, report_filename(report, format))
    return response


@role_required(can_review)
@reads_from_replica
def decision_badge(request, campaign_id: int):
    """The campaign's current decision as a small piece of HTML: the home page fetches one per campaign
    after it has shown, so a slow report holds up no other row. The overview's report, agreement included,
    so that each finds the other's in the cache."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    report = launch_report_build(campaign=campaign)
    return render(request, "metrics/_decision_badge.html", {"report": report})


@role_required(can_review)
@reads_from_replica
def query_detail(request, campaign_id: int, query_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        drilldown = query_drilldown(campaign=campaign, query_pk=query_id)
    except Query.DoesNotExist:
        raise Http404("no such query in this campaign") from None
    return render(request, "metrics/query_drilldown.html", {"drilldown": drilldown})
