"""API for managers: a new campaign's upload as the new-campaign page takes it, checked in the background;
its status and preview; then confirm (imported in the background), cancel, or retry a stopped one. The
same form, task starters and services as the pages (annotation/views/imports.py)."""

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin
from annotation.api.permissions import IsManager
from annotation.api.serializers.imports import ImportSerializer, ImportUploadSerializer
from annotation.errors import InputError, InputErrorCode
from annotation.forms import CampaignUploadForm, form_errors_text
from annotation.models import CampaignImport
from annotation.selectors.imports import import_view
from annotation.tasks import IMPORT_ACTIONS, campaign_import_start

MANAGER = [IsAuthenticated, IsManager]


def _answer(staged: CampaignImport, code: int = status.HTTP_200_OK) -> Response:
    return Response(ImportSerializer(import_view(staged=staged)).data, status=code)


class ImportsView(BodyLimitMixin, APIView):
    permission_classes = MANAGER
    parser_classes = [MultiPartParser]

    @extend_schema(
        tags=["imports"],
        request={"multipart/form-data": ImportUploadSerializer},
        responses={202: ImportSerializer},
        description="Stage a bundle and its runs and check them in the background; poll the import until "
        "`ready` (then confirm it) or `invalid` (`error` says why). The form of the new-campaign page: the "
        "same sizes and model names are refused.",
    )
    def post(self, request):
        upload = ImportUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data = upload.validated_data
        if len(data["models"]) != len(data["runs"]):
            raise InputError(InputErrorCode.INVALID_VALUE, _("give one model's name per run"), field="models")
        form = CampaignUploadForm(
            {f"run_model_{index}": model for index, model in enumerate(data["models"])},
            {
                "bundle": data["bundle"],
                **{f"run_file_{index}": run for index, run in enumerate(data["runs"])},
            },
        )
        if not form.is_valid():
            raise InputError(InputErrorCode.INVALID_VALUE, form_errors_text(form))
        staged = campaign_import_start(
            user=request.user, bundle=form.cleaned_data["bundle"], runs=form.cleaned_data["runs"]
        )
        return _answer(staged, status.HTTP_202_ACCEPTED)


class ImportView(APIView):
    permission_classes = MANAGER

    @extend_schema(tags=["imports"], responses={200: ImportSerializer})
    def get(self, request, import_id: int):
        return _answer(get_object_or_404(CampaignImport, pk=import_id))


class ImportActionView(APIView):
    """One of the import page's buttons: `action` is given by the route."""

    permission_classes = MANAGER
    action = ""

    @extend_schema(
        tags=["imports"],
        request=None,
        responses={200: ImportSerializer},
        description="confirm: create the campaign in the background (a `ready` import); cancel: nothing "
        "is written (not while a worker writes the campaign); retry: queue again an import whose worker "
        "stopped.",
    )
    def post(self, request, import_id: int):
        staged = get_object_or_404(CampaignImport, pk=import_id)
        IMPORT_ACTIONS[self.action](staged=staged)
        staged.refresh_from_db()
        return _answer(staged)
