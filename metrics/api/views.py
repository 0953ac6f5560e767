"""API for reviewers and managers: the launch decision, the launch report (metrics, GSB, decision) in each
format of the download, the raw labels as JSONL and the aggregated labels as TREC qrels."""

import io
import json

import numpy as np
from django.http import HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.parsers import query_of
from annotation.api.permissions import IsReviewer
from annotation.api.views.campaigns import campaign_or_404
from annotation.selectors.labels import campaign_labels_export
from metrics.api.serializers import DecisionSerializer, ReportSerializer
from metrics.reports import CONTENT_TYPES, REPORT_FORMATS, report_filename, report_render
from metrics.reports.data import behaviour_data, decision_summary
from metrics.selectors.aggregation import campaign_aggregated_labels
from metrics.selectors.diversity import intent_qrels_rows
from metrics.selectors.impressions import behaviour_qrels_rows
from metrics.selectors.launch import launch_report_build
from plumbing.routers import reads_from_replica, replica_stream
from trec.files import QRELS_INTEGER, write_qrels
from trec.intents import write_intent_qrels

REVIEWER = [IsAuthenticated, IsReviewer]


class FileRenderer(BaseRenderer):
    """Lets a client ask for a file's own media type; the view renders the file, errors are JSON
    (`annotation.api.exceptions`)."""

    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class JsonlRenderer(FileRenderer):
    media_type = "application/x-ndjson"
    format = "jsonl"


class PlainTextRenderer(FileRenderer):
    media_type = "text/plain"
    format = "txt"


class HtmlRenderer(FileRenderer):
    media_type = "text/html"
    format = "html"


class CsvRenderer(FileRenderer):
    media_type = "text/csv"
    format = "csv"


class CsvSummaryRenderer(FileRenderer):
    media_type = "text/csv"
    format = "summary.csv"


class MarkdownRenderer(FileRenderer):
    media_type = "text/markdown"
    format = "md"


class JudgmentsExportView(APIView):
    permission_classes = REVIEWER
    # JSON Lines has no registered media type: `text/plain` too, for clients that read only registered ones.
    renderer_classes = [JsonlRenderer, PlainTextRenderer]

    @extend_schema(
        tags=["results"],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR, description="One raw label per line, as `import_judgments` reads them."
            ),
            (200, "text/plain"): OpenApiResponse(
                OpenApiTypes.STR, description="The same lines, for `Accept: text/plain`."
            ),
        },
        description="Every label as JSONL (what `import_judgments` reads), then the reviewers' final labels "
        'and the skips (`"record": "final"|"skip"`).',
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        rows = replica_stream(campaign_labels_export(campaign=campaign_or_404(campaign_id)))
        lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        content_type = f"{request.accepted_renderer.media_type}; charset=utf-8"
        response = StreamingHttpResponse(lines, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="campaign-{campaign_id}-judgments.jsonl"'
        return response


class QrelsFilter(serializers.Serializer):
    integer = serializers.ChoiceField(
        choices=QRELS_INTEGER,
        required=False,
        help_text="For trec_eval, which reads labels as integers: round (halves up) or floor the aggregated "
        "labels. Default: exact values.",
    )


class QrelsExportView(APIView):
    permission_classes = REVIEWER
    renderer_classes = [PlainTextRenderer]

    @extend_schema(
        tags=["results"],
        parameters=[QrelsFilter],
        responses={
            (200, "text/plain"): OpenApiResponse(
                OpenApiTypes.STR, description="`qid 0 docid grade`: the aggregated (or adjudicated) labels."
            ),
        },
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        labels = campaign_aggregated_labels(campaign=campaign_or_404(campaign_id))
        rows = (labels.query_ids, labels.document_ids, labels.grades)
        return _qrels_response(request, rows, f"campaign-{campaign_id}")


def _qrels_response(request, rows: tuple[np.ndarray, np.ndarray, np.ndarray], name: str) -> HttpResponse:
    """(query ids, document ids, grades) as a qrels download, `?integer=` applied, named `name`.qrels."""
    query = QrelsFilter(data=query_of(request))
    query.is_valid(raise_exception=True)
    out = io.StringIO()
    integer = query.validated_data.get("integer")
    query_ids, document_ids, grades = rows
    write_qrels(out, query_ids, document_ids, grades, integer=integer)
    response = HttpResponse(out.getvalue(), content_type="text/plain; charset=utf-8")
    # The exact and the integer qrels are different files: their names differ too.
    suffix = f"-{integer}" if integer else ""
    response["Content-Disposition"] = f'attachment; filename="{name}{suffix}.qrels"'
    return response


class BehaviourQrelsExportView(APIView):
    permission_classes = REVIEWER
    renderer_classes = [PlainTextRenderer]

    @extend_schema(
        tags=["results"],
        parameters=[QrelsFilter],
        responses={
            (200, "text/plain"): OpenApiResponse(
                OpenApiTypes.STR,
                description="`qid 0 docid grade`: each (query, document) pair of the interaction logs "
                "graded by the furthest action users took with it (the campaign's `behaviour_grades`); empty "
                "without logs.",
            ),
        },
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        rows = behaviour_qrels_rows(campaign=campaign_or_404(campaign_id))
        return _qrels_response(request, rows, f"campaign-{campaign_id}-behaviour")


class IntentQrelsExportView(APIView):
    permission_classes = REVIEWER
    renderer_classes = [PlainTextRenderer]

    @extend_schema(
        tags=["results"],
        responses={
            (200, "text/plain"): OpenApiResponse(
                OpenApiTypes.STR,
                description="`qid intent docid judgment` (ndeval's qrels): for each (query, document) of a "
                "query with intents that annotators were asked about, 1 for each intent at least half of "
                "them ticked, else 0; empty without intents. `evaluate --intents` reads it.",
            ),
        },
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        out = io.StringIO()
        write_intent_qrels(out, intent_qrels_rows(campaign=campaign_or_404(campaign_id)))
        response = HttpResponse(out.getvalue(), content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="campaign-{campaign_id}-intents.qrels"'
        return response


class ReportFilter(serializers.Serializer):
    model = serializers.CharField(
        required=False, max_length=100, help_text="The experimental model (default: the first)."
    )


class ReportFormatFilter(ReportFilter):
    format = serializers.ChoiceField(
        choices=REPORT_FORMATS,
        required=False,
        help_text="The report's format, instead of an `Accept` header: json (default), html, csv, "
        "summary.csv or md.",
    )


def _report(request, campaign_id: int):
    query = ReportFilter(data=query_of(request))
    query.is_valid(raise_exception=True)
    return launch_report_build(campaign=campaign_or_404(campaign_id), model=query.validated_data.get("model"))


class LaunchReportView(APIView):
    permission_classes = REVIEWER
    # The formats of the comparison page's download, chosen by `Accept` or `?format=`; JSON by default.
    renderer_classes = [JSONRenderer, HtmlRenderer, CsvRenderer, CsvSummaryRenderer, MarkdownRenderer]

    @extend_schema(
        tags=["results"],
        parameters=[ReportFormatFilter],
        responses={
            (200, "application/json"): ReportSerializer,
            (200, "text/html"): OpenApiResponse(OpenApiTypes.STR, description="A self-contained page."),
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR,
                description="One row per model and query; `?format=summary.csv`: `field,value` rows of what "
                "the report is of.",
            ),
            (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="For a launch review."),
        },
        description="Every model's measures with intervals, each experimental model against the online one "
        "(deltas, GSB, significance), the launch decision and its reasons, label agreement: the comparison "
        "page's download, in the format `Accept` or `?format=` asks for.",
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        report = _report(request, campaign_id)
        format = request.accepted_renderer.format
        response = HttpResponse(
            report_render(report, format), content_type=f"{CONTENT_TYPES[format]}; charset=utf-8"
        )
        if format != "json":
            filename = report_filename(report, format)
            response["Content-Disposition"] = content_disposition_header(True, filename)
        return response


class BehaviourView(APIView):
    permission_classes = REVIEWER

    @extend_schema(
        tags=["results"],
        parameters=[ReportFilter],
        responses={200: OpenApiResponse(description="The launch report's `behaviour` (null without logs).")},
        description="What users did, as the Behaviour page shows it: online metrics per model with cluster "
        "bootstrap intervals, experimental − online per metric, the propensity curves, the guardrails, "
        "judges against users per query, and labels from behaviour with their agreement. The same object "
        "as the JSON report's `behaviour`.",
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        return Response({"behaviour": behaviour_data(_report(request, campaign_id).behaviour)})


class LaunchReportFileView(LaunchReportView):
    """The report as a file, its format in the path: for clients that type an operation's answer by its one
    media type (a generated client reads `/report/` as JSON)."""

    renderer_classes = [HtmlRenderer, CsvRenderer, CsvSummaryRenderer, MarkdownRenderer]

    @extend_schema(
        tags=["results"],
        parameters=[
            ReportFilter,
            OpenApiParameter(
                "format", str, OpenApiParameter.PATH, enum=[f for f in REPORT_FORMATS if f != "json"]
            ),
        ],
        responses={
            (200, "text/html"): OpenApiResponse(
                OpenApiTypes.STR,
                description="The report in the format the path names (html, csv, "
                "summary.csv: text/csv; md: text/markdown).",
            ),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR),
            (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR),
        },
        operation_id="campaigns_report_file_retrieve",
        description="The launch report as the comparison page downloads it, in the format the path names.",
    )
    def get(self, request, campaign_id: int, format: str = ""):  # the renderer DRF chose reads it
        return super().get(request, campaign_id)


class DecisionView(APIView):
    permission_classes = REVIEWER

    @extend_schema(
        tags=["results"],
        parameters=[ReportFilter],
        responses={200: DecisionSerializer},
        description="The launch decision on the labels so far: `collecting` until the rule's thresholds of "
        "queries and coverage are reached (with the `provisional` decision), then `launch`, `no_launch` or "
        "`inconclusive`, with the reasons, the coverage and the labels' fingerprint.",
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        report = _report(request, campaign_id)
        return Response(DecisionSerializer(decision_summary(report)).data)
