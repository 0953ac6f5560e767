"""API for reviewers and managers: the launch report (metrics, GSB, decision), the raw labels as JSONL and
the aggregated labels as TREC qrels."""

import io
import json

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.views import APIView

from annotation.api.permissions import IsReviewer
from annotation.api.views.campaigns import campaign_or_404
from annotation.selectors.labels import campaign_labels_export
from metrics.reports.text import report_json
from metrics.selectors.evaluation_data import campaign_aggregated_labels
from metrics.selectors.launch import launch_report_build
from plumbing.routers import reads_from_replica, replica_stream
from trec.files import QRELS_INTEGER, write_qrels

REVIEWER = [IsAuthenticated, IsReviewer]


class TextRenderer(BaseRenderer):
    """Lets a client ask for the export's own media type; errors are still JSON."""

    format = "txt"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return json.dumps(data).encode() if isinstance(data, dict) else data


class JsonlRenderer(TextRenderer):
    media_type = "application/x-ndjson"
    format = "jsonl"


class PlainTextRenderer(TextRenderer):
    media_type = "text/plain"


class JudgmentsExportView(APIView):
    permission_classes = REVIEWER
    renderer_classes = [JSONRenderer, JsonlRenderer]

    @extend_schema(
        tags=["results"],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR, description="One raw label per line, as `import_judgments` reads them."
            ),
        },
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        rows = replica_stream(campaign_labels_export(campaign=campaign_or_404(campaign_id)))
        lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
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
    renderer_classes = [JSONRenderer, PlainTextRenderer]

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
        query = QrelsFilter(data=request.query_params)
        query.is_valid(raise_exception=True)
        labels = campaign_aggregated_labels(campaign=campaign_or_404(campaign_id))
        out = io.StringIO()
        integer = query.validated_data.get("integer")
        write_qrels(out, labels.query_ids, labels.document_ids, labels.grades, integer=integer)
        response = HttpResponse(out.getvalue(), content_type="text/plain; charset=utf-8")
        # The exact and the integer qrels are different files: their names differ too.
        suffix = f"-{integer}" if integer else ""
        response["Content-Disposition"] = f'attachment; filename="campaign-{campaign_id}{suffix}.qrels"'
        return response


class ReportFilter(serializers.Serializer):
    model = serializers.CharField(
        required=False, max_length=100, help_text="The experimental model (default: the first)."
    )


class LaunchReportView(APIView):
    permission_classes = REVIEWER

    @extend_schema(
        tags=["results"],
        parameters=[ReportFilter],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The launch report, as the JSON download.")
        },
        description="Every model's measures with intervals, each experimental model against the online one "
        "(deltas, GSB, significance), the launch decision and its reasons, label agreement.",
    )
    @reads_from_replica
    def get(self, request, campaign_id: int):
        query = ReportFilter(data=request.query_params)
        query.is_valid(raise_exception=True)
        campaign = campaign_or_404(campaign_id)
        report = launch_report_build(campaign=campaign, model=query.validated_data.get("model"))
        return HttpResponse(report_json(report), content_type="application/json")
