"""API: campaigns (list, detail, create from a bundle, run uploads, models, queries, progress)."""

import tempfile

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiExample, PolymorphicProxySerializer, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin, ErrorSerializer, PayloadTooLarge
from annotation.api.parsers import BoundedJSONParser, query_of
from annotation.api.permissions import IsManager, IsReviewer
from annotation.api.serializers.bundle import BundleSerializer
from annotation.api.serializers.campaigns import (
    CampaignChangedSerializer,
    CampaignChangeSerializer,
    CampaignDetailSerializer,
    CampaignProgressSerializer,
    CampaignReviewListSerializer,
    CampaignReviewSerializer,
    CampaignSerializer,
    QuerySerializer,
    RankingModelSerializer,
    RunUploadedSerializer,
)
from annotation.api.serializers.requests import RunUploadSerializer
from annotation.bundle import load_run, parse_bundle, parse_campaign_change
from annotation.campaign_settings import setting_values
from annotation.errors import InputError, InputErrorCode
from annotation.models import Campaign, RankingModel
from annotation.previews import campaign_texts, import_preview, model_names_in
from annotation.roles import can_review
from annotation.selectors import campaigns as campaign_selectors
from annotation.services.campaigns import campaign_change, campaign_import, model_rankings_replace
from trec.files import RankedRun


def campaign_or_404(campaign_id: int, *, viewer=None, archived: bool = False) -> Campaign:
    """The campaign; with `viewer`, only one they may see (annotators: open to them; with `archived`, an
    archived one too, for a write that then answers 409 `archived`)."""
    campaigns = (
        Campaign.objects.all()
        if viewer is None
        else campaign_selectors.campaign_list(viewer=viewer, archived=archived)
    )
    return get_object_or_404(campaigns, pk=campaign_id)


# --- Campaigns --------------------------------------------------------------------------------------------


class CampaignFilter(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=200, help_text="Part of the name.")


BUNDLE_EXAMPLE = {
    "name": "Spring launch",
    "models": [{"name": "online", "role": "online"}, {"name": "exp-v2", "role": "experimental"}],
    "queries": [{"id": "q1", "text": "cheap flights"}],
    "documents": [{"id": "d1", "title": "Flights", "url": "https://example.com/1"}],
    "rankings": [
        {"model": "online", "query": "q1", "documents": ["d1"]},
        {"model": "exp-v2", "query": "q1", "documents": ["d1"]},
    ],
}


class CampaignListView(BodyLimitMixin, generics.ListAPIView):
    parser_classes = [BoundedJSONParser]

    def get_serializer_class(self):
        return CampaignReviewListSerializer if can_review(self.request.user) else CampaignSerializer

    def get_permissions(self):
        return [IsAuthenticated(), IsManager()] if self.request.method == "POST" else [IsAuthenticated()]

    def get_queryset(self):
        filters = CampaignFilter(data=query_of(self.request))
        filters.is_valid(raise_exception=True)
        return campaign_selectors.campaign_list(viewer=self.request.user, **filters.validated_data)

    @extend_schema(
        tags=["campaigns"],
        parameters=[CampaignFilter],
        responses={
            200: PolymorphicProxySerializer(
                component_name="CampaignListItemForRole",
                serializers=[CampaignReviewListSerializer, CampaignSerializer],
                resource_type_field_name=None,
                many=True,
            )
        },
        description="The campaigns you may see; the description (which may name the models) only for "
        "reviewers and managers.",
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        tags=["campaigns"],
        request=BundleSerializer,
        responses={201: CampaignChangedSerializer},
        examples=[OpenApiExample("bundle", value=BUNDLE_EXAMPLE, request_only=True)],
        description="Managers: create a campaign from a bundle (the format `import_campaign` reads, see the "
        "README), all or nothing. A problem is a 400 naming the field path, e.g. `rankings[3].query`.",
    )
    def post(self, request):
        bundle = parse_bundle(request.data, "bundle")
        campaign = campaign_import(bundle=bundle)
        context = {"warnings": import_preview(bundle, {}).warnings}
        return Response(
            CampaignChangedSerializer(campaign, context=context).data, status=status.HTTP_201_CREATED
        )


CHANGE_EXAMPLE = {
    "guidelines": "Grade for a first-time visitor.",
    "settings": {"overlap": 5, "pool_depth": 20},
}


class CampaignDetailView(BodyLimitMixin, APIView):
    parser_classes = [BoundedJSONParser]

    def get_permissions(self):
        return [IsAuthenticated(), IsManager()] if self.request.method == "PATCH" else [IsAuthenticated()]

    @extend_schema(
        tags=["campaigns"],
        responses={
            200: PolymorphicProxySerializer(
                component_name="CampaignForRole",
                serializers=[CampaignReviewSerializer, CampaignDetailSerializer],
                resource_type_field_name=None,
            )
        },
        description="Reviewers and managers get `CampaignReview` (also the models and every setting); "
        "annotators `CampaignDetail` (neither).",
    )
    def get(self, request, campaign_id: int):
        campaign = campaign_or_404(campaign_id, viewer=request.user)
        serializer = CampaignReviewSerializer if can_review(request.user) else CampaignDetailSerializer
        return Response(serializer(campaign).data)

    @extend_schema(
        tags=["campaigns"],
        request=CampaignChangeSerializer,
        responses={200: CampaignChangedSerializer, 409: ErrorSerializer},
        examples=[OpenApiExample("change", value=CHANGE_EXAMPLE, request_only=True)],
        description="Managers: change `description`, `guidelines`, `scale` and any of the bundle's "
        "`settings`, all checked as on import; the scale and some settings are fixed once labelling began, "
        "as each one's description says. A deeper `pool_depth` pools new tasks.",
    )
    def patch(self, request, campaign_id: int):
        campaign = campaign_or_404(campaign_id)
        changes = parse_campaign_change(request.data, setting_values(campaign), "request")
        campaign = campaign_change(campaign=campaign, changes=changes)
        names = campaign_selectors.ranking_model_list(campaign=campaign).values_list("name", flat=True)
        texts = campaign_texts(campaign.name, campaign.guidelines, campaign.scale)
        context = {"warnings": model_names_in(texts, list(names))}
        return Response(CampaignChangedSerializer(campaign, context=context).data)


class ModelFilter(serializers.Serializer):
    role = serializers.ChoiceField(choices=RankingModel.Role.values, required=False)
    name = serializers.CharField(required=False, max_length=200, help_text="Part of the name.")


@extend_schema(tags=["campaigns"], parameters=[ModelFilter])
class ModelListView(generics.ListAPIView):
    permission_classes = [IsAuthenticated, IsReviewer]
    serializer_class = RankingModelSerializer

    def get_queryset(self):
        filters = ModelFilter(data=query_of(self.request))
        filters.is_valid(raise_exception=True)
        campaign = campaign_or_404(self.kwargs["campaign_id"])
        return campaign_selectors.ranking_model_list(campaign=campaign, **filters.validated_data)


class QueryFilter(serializers.Serializer):
    segment = serializers.CharField(required=False, max_length=100, help_text="Exactly this segment.")
    text = serializers.CharField(required=False, max_length=1000, help_text="Part of the query text.")


@extend_schema(tags=["campaigns"], parameters=[QueryFilter])
class QueryListView(generics.ListAPIView):
    permission_classes = [IsAuthenticated, IsReviewer]
    serializer_class = QuerySerializer

    def get_queryset(self):
        filters = QueryFilter(data=query_of(self.request))
        filters.is_valid(raise_exception=True)
        campaign = campaign_or_404(self.kwargs["campaign_id"])
        return campaign_selectors.query_list(campaign=campaign, **filters.validated_data)


class RunUploadView(BodyLimitMixin, APIView):
    permission_classes = [IsAuthenticated, IsManager]
    parser_classes = [MultiPartParser]

    @extend_schema(
        tags=["campaigns"],
        request={"multipart/form-data": RunUploadSerializer},
        responses={200: RunUploadedSerializer, 409: ErrorSerializer},
        description="Managers: replace a model's rankings with a TREC run and pool again; labels are kept. "
        "A malformed run is a 400 naming its line.",
    )
    def post(self, request, campaign_id: int):
        campaign = campaign_or_404(campaign_id)
        upload = RunUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        model = campaign_selectors.ranking_model_get(campaign=campaign, name=upload.validated_data["model"])
        if model is None:
            raise InputError(InputErrorCode.UNKNOWN_MODEL, _("no such model in this campaign"), field="model")
        run = _read_run(upload.validated_data["file"])
        rows = model_rankings_replace(model=model, run=run)
        return Response(RunUploadedSerializer({"model": model.name, "rankings": rows}).data)


def _read_run(upload) -> RankedRun:
    """An uploaded TREC run as rankings; errors name the uploaded file's line. Gzipped, it may inflate to
    no more than MAX_UPLOAD_BYTES either."""
    if upload.size > settings.MAX_UPLOAD_BYTES:
        raise PayloadTooLarge(f"the run is larger than {settings.MAX_UPLOAD_BYTES} bytes")
    with tempfile.NamedTemporaryFile(suffix=".trec") as file:
        for chunk in upload.chunks():
            file.write(chunk)
        file.flush()
        try:
            return load_run(file.name, upload.name, max_bytes=settings.MAX_UPLOAD_BYTES)
        except InputError as exc:
            exc.field = "file"  # the multipart field the client sent it in
            raise


class ProgressView(APIView):
    permission_classes = [IsAuthenticated, IsReviewer]

    @extend_schema(tags=["campaigns"], responses={200: CampaignProgressSerializer})
    def get(self, request, campaign_id: int):
        progress = campaign_selectors.campaign_progress(campaign=campaign_or_404(campaign_id))
        return Response(CampaignProgressSerializer(progress).data)
