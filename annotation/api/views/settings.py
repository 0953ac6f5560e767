"""API for managers, as the campaign's settings pages: archive and restore, which annotators' labels are
left out, and labels imported from a JSONL file as `import_judgments` reads it."""

import tempfile

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.parsers import BaseParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin
from annotation.api.parsers import BoundedJSONParser
from annotation.api.permissions import IsManager
from annotation.api.serializers.campaigns import CampaignReviewSerializer
from annotation.api.serializers.people import (
    ArchiveSerializer,
    ExclusionActionSerializer,
    ExclusionSerializer,
    LabelsImportedSerializer,
)
from annotation.api.views.campaigns import campaign_or_404
from annotation.bundle import parse_judgment_lines
from annotation.bundle.reading import read_text_file
from annotation.errors import InputError, InputErrorCode
from annotation.selectors.exclusions import campaign_exclusions
from annotation.services.campaigns import campaign_archive
from annotation.services.exclusions import annotator_exclude, annotator_reinstate, exclusions_confirm
from annotation.services.label_import import labels_import

MANAGER = [IsAuthenticated, IsManager]


class ArchiveView(BodyLimitMixin, APIView):
    permission_classes = MANAGER
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["campaigns"],
        request=ArchiveSerializer,
        responses={200: CampaignReviewSerializer},
        description="Archive the campaign (read-only: every write is a 409 `archived`; hidden from "
        "annotators) or restore it.",
    )
    def post(self, request, campaign_id: int):
        data = ArchiveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        campaign = campaign_archive(
            campaign=campaign_or_404(campaign_id), archived=data.validated_data["archived"]
        )
        return Response(CampaignReviewSerializer(campaign).data)


def _exclusions(campaign) -> list:
    return ExclusionSerializer(campaign_exclusions(campaign=campaign), many=True).data


class ExclusionsView(BodyLimitMixin, APIView):
    permission_classes = MANAGER
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        tags=["campaigns"],
        responses={200: ExclusionSerializer(many=True)},
        description="Every exclusion, in force or reinstated, oldest first.",
    )
    def get(self, request, campaign_id: int):
        return Response(_exclusions(campaign_or_404(campaign_id)))

    @extend_schema(
        tags=["campaigns"],
        request=ExclusionActionSerializer,
        responses={200: ExclusionSerializer(many=True)},
        description='`{"action": "exclude", "annotator": "ann", "reason": "..."}` leaves their labels out of '
        'every result; `{"action": "reinstate", "annotator": "ann"}` counts them again; '
        '`{"action": "confirm"}` confirms the exclusions in force. Answers every exclusion.',
    )
    def post(self, request, campaign_id: int):
        campaign = campaign_or_404(campaign_id)
        action = ExclusionActionSerializer(data=request.data)
        action.is_valid(raise_exception=True)
        data = action.validated_data
        if data["action"] == "confirm":
            exclusions_confirm(campaign=campaign)
        elif "annotator" not in data:
            raise InputError(InputErrorCode.MISSING_FIELD, _("name the annotator"), field="annotator")
        elif data["action"] == "exclude":
            annotator_exclude(
                campaign=campaign, username=data["annotator"], by=request.user, reason=data["reason"]
            )
        else:
            annotator_reinstate(campaign=campaign, username=data["annotator"], by=request.user)
        return Response(_exclusions(campaign))


class RawBodyParser(BaseParser):
    """A file sent as the body itself: its bytes, for the view to read."""

    media_type = "application/octet-stream"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


class JsonlBodyParser(RawBodyParser):
    media_type = "application/x-ndjson"


class JudgmentsImportView(BodyLimitMixin, APIView):
    permission_classes = MANAGER
    parser_classes = [RawBodyParser, JsonlBodyParser]

    @extend_schema(
        tags=["campaigns"],
        # `application/x-ndjson` is read too; generated clients know only octet-stream for a file as the body.
        request={"application/octet-stream": OpenApiTypes.BINARY},
        responses={201: LabelsImportedSerializer},
        description="Import labels: the body is JSONL as `import_judgments` reads it (and the judgments "
        "export writes it), may be gzipped; all or nothing. A bad line is a 400 naming it.",
    )
    def post(self, request, campaign_id: int):
        campaign = campaign_or_404(campaign_id)
        with tempfile.NamedTemporaryFile(suffix=".jsonl") as file:
            file.write(request.data or b"")  # no body at all: DRF's empty data, {}
            file.flush()
            text = read_text_file(file.name, "request", max_bytes=settings.MAX_UPLOAD_BYTES)
        judgments, preferences = parse_judgment_lines(
            text.splitlines(), "request", scale_values=set(campaign.grade_values)
        )
        grades, verdicts = labels_import(
            campaign=campaign,
            judgments=judgments,
            preferences=preferences,
            source="request",
        )
        return Response(
            LabelsImportedSerializer({"judgments": grades, "preferences": verdicts}).data, status=201
        )
