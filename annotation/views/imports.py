"""Managers create a campaign in the browser: upload, read the preview, confirm or cancel; the checking and
the import run in the background (annotation.tasks) while the page shows their progress."""

from dataclasses import asdict
from pathlib import Path

from django.contrib import messages
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from annotation.errors import InputError
from annotation.forms import CampaignUploadForm, ImportActionForm
from annotation.models import CampaignImport
from annotation.roles import can_manage, role_required
from annotation.selectors.imports import import_view
from annotation.services.demo import DEMO_DIR
from annotation.tasks import IMPORT_ACTIONS, campaign_import_start


@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def campaign_new(request):
    form = CampaignUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        staged = campaign_import_start(user=request.user, bundle=data["bundle"], runs=data["runs"])
        return redirect("annotation:campaign_import", import_id=staged.pk)
    return render(request, "annotation/campaign_new.html", {"form": form})


@role_required(can_manage)
@require_GET
def campaign_template(request):
    """The demo's bundle, to start a new campaign from."""
    response = HttpResponse((Path(DEMO_DIR) / "campaign.json").read_bytes(), content_type="application/json")
    response["Content-Disposition"] = 'attachment; filename="campaign-template.json"'
    return response


@never_cache
@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def campaign_import(request, import_id: int):
    staged = get_object_or_404(CampaignImport, pk=import_id)
    if request.method == "POST":
        form = ImportActionForm(request.POST)
        if form.is_valid():
            action = IMPORT_ACTIONS[form.cleaned_data["action"]]
            try:
                action(staged=staged)
            except InputError as error:
                messages.error(request, error.message)
        return redirect("annotation:campaign_import", import_id=staged.pk)
    return render(request, "annotation/campaign_import.html", {"view": import_view(staged=staged)})


@never_cache
@role_required(can_manage)
@require_GET
def campaign_import_status(request, import_id: int):
    """What the import page polls while the files are checked or imported."""
    view = import_view(staged=get_object_or_404(CampaignImport, pk=import_id))
    progress = asdict(view.progress) if view.progress else None
    return JsonResponse({"status": view.status, "actions": view.actions, "progress": progress})
