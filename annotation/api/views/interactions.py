"""API: a campaign's interaction logs (list, add one)."""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin, ErrorSerializer, PayloadTooLarge
from annotation.api.permissions import IsManager, IsReviewer
from annotation.api.serializers.campaigns import InteractionLogSerializer, InteractionLogUploadSerializer
from annotation.api.views.campaigns import campaign_or_404
from annotation.bundle.reading import spooled_lines
from annotation.selectors.interactions import interaction_logs
from annotation.services.interactions import interaction_log_import


class InteractionLogListView(BodyLimitMixin, APIView):
    parser_classes = [MultiPartParser]

    def get_permissions(self):
        return [IsAuthenticated(), IsManager() if self.request.method == "POST" else IsReviewer()]

    @extend_schema(tags=["interactions"], responses={200: InteractionLogSerializer(many=True)})
    def get(self, request, campaign_id: int):
        logs = interaction_logs(campaign=campaign_or_404(campaign_id))
        return Response(InteractionLogSerializer(logs, many=True).data)

    @extend_schema(
        tags=["interactions"],
        request={"multipart/form-data": InteractionLogUploadSerializer},
        responses={201: InteractionLogSerializer, 409: ErrorSerializer},
        description="Managers: add an interaction log (JSONL, one impression a line, may be gzipped; "
        "docs/interactions.md) to the campaign, whole or not at all. A bad line is a 400 naming its `line` "
        "and `field`; a log that inflates past the upload limit is a 413.",
    )
    def post(self, request, campaign_id: int):
        campaign = campaign_or_404(campaign_id)
        upload = InteractionLogUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        file = upload.validated_data["file"]
        if file.size > settings.MAX_UPLOAD_BYTES:
            raise PayloadTooLarge(f"the log is larger than {settings.MAX_UPLOAD_BYTES} bytes")
        with spooled_lines(file.chunks(), file.name, settings.MAX_UPLOAD_BYTES) as lines:
            log = interaction_log_import(
                campaign=campaign, lines=lines, source=file.name, created_by=request.user
            )
        return Response(InteractionLogSerializer(log).data, status=status.HTTP_201_CREATED)
