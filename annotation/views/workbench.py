"""The annotator's workbench: the current task, a label's POST, a skip; each view parses, calls one service,
renders."""

from dataclasses import asdict

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation.errors import TaskError
from annotation.forms import LabelForm, SkipForm, form_errors_text
from annotation.models import Assignment, Campaign, SkipReason
from annotation.roles import can_annotate, role_required
from annotation.selectors import task_page
from annotation.selectors import workbench as selectors
from annotation.services import assignment as assignment_services
from annotation.services.labels import label_submit

# Where the page a workbench request answered with lives: a label's POST may answer with the next task.
WORKBENCH_LOCATION = "X-Workbench-Location"
# Set when the answer is only the part of the page that changes from task to task (`_workbench_part.html`):
# the script swaps it in and keeps the head, top bar and scripts it has; without it, a whole page.
WORKBENCH_PART = "X-Workbench-Part"
LAYOUTS = {False: "annotation/_workbench_page.html", True: "annotation/_workbench_part.html"}


def _render_task(request, assignment: Assignment, *, part: bool = False):
    view = task_page.task_view(assignment=assignment)
    template = (
        "annotation/work_relevance.html"
        if isinstance(view, task_page.RelevanceTaskView)
        else "annotation/work_gsb.html"
    )
    context = {"task": view, "skip_reasons": SkipReason.choices, "layout": LAYOUTS[part]}
    response = render(request, template, context)
    if part:
        response[WORKBENCH_PART] = "main"
    return response


def _work_page(request, campaign: Campaign, *, part: bool = False):
    """The annotator's current task, leasing the next one when they hold none; its address in a header, for
    the workbench's script to show when it swapped the page in place (`part`: only what changes, for the
    script). When none may be handed to them any more (their labels left out meanwhile), home with the
    reason."""
    try:
        assignment = assignment_services.task_next(annotator=request.user, campaign=campaign)
    except TaskError as error:
        messages.error(request, error.for_page())
        return redirect("annotation:home")
    if assignment is None:
        response = render(request, "annotation/work_done.html", {"campaign": campaign})
        response[WORKBENCH_LOCATION] = reverse("annotation:work", args=[campaign.pk])
        return response
    response = _render_task(request, assignment, part=part)
    response[WORKBENCH_LOCATION] = reverse("annotation:task", args=[campaign.pk, assignment.pk])
    return response


@never_cache
@role_required(can_annotate)
@require_GET
def work(request, campaign_id: int):
    campaigns = selectors.campaigns_open(annotator=request.user, archived=True)  # archived: a message
    return _work_page(request, get_object_or_404(campaigns, pk=campaign_id))


@never_cache
@role_required(can_annotate)
@require_GET
def work_progress(request, campaign_id: int):
    """The annotator's progress bar, per kind (the workbench's script shows it)."""
    campaign = get_object_or_404(selectors.campaigns_open(annotator=request.user), pk=campaign_id)
    kinds = selectors.annotator_kind_progress(annotator=request.user, campaign=campaign)
    return JsonResponse({"kinds": [asdict(kind) for kind in kinds]})


def _assignment_or_404(request, campaign_id: int, assignment_id: int) -> Assignment:
    assignment = selectors.assignment_get(annotator=request.user, campaign_id=campaign_id, pk=assignment_id)
    if assignment is None:
        raise Http404("No such task of yours.")
    return assignment


@never_cache
@role_required(can_annotate)
def task(request, campaign_id: int, assignment_id: int):
    """GET shows one of the annotator's tasks (to change an earlier label); POST submits its label, then
    redirects to the next task, or shows it at once when the workbench's script asks (one round trip)."""
    assignment = _assignment_or_404(request, campaign_id, assignment_id)
    if request.method != "POST":
        return _render_task(request, assignment)
    form = LabelForm(request.POST)
    if not form.is_valid():
        messages.error(request, form_errors_text(form))
        # Built only when answered: reversing its URL is about 60 µs, 2 % of a label in one process.
        return redirect("annotation:task", campaign_id, assignment_id)
    data = form.cleaned_data
    try:
        _label, created = label_submit(
            annotator=request.user,
            assignment=assignment,
            grade=data["grade"],
            verdict=data["side"],
            strength=data["strength"],
            intents=data["intents"],
            duplicates=data["duplicate"],
            comment=data["comment"],
            version=data["version"] or None,
        )
    except TaskError as error:
        messages.error(request, error.for_page())
        return redirect("annotation:task", campaign_id, assignment_id)
    if not created:
        messages.success(request, _("Your earlier answer was changed."))
    if request.headers.get("X-Workbench") == "next":
        return _work_page(request, assignment.campaign, part=True)
    return redirect("annotation:work", campaign_id)


@role_required(can_annotate)
@require_POST
def task_skip(request, campaign_id: int, assignment_id: int):
    assignment = _assignment_or_404(request, campaign_id, assignment_id)
    form = SkipForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose why you skip the task."))
        return redirect("annotation:work", campaign_id)
    try:
        assignment_services.task_skip(
            annotator=request.user, assignment=assignment, reason=form.cleaned_data["reason"]
        )
    except TaskError as error:
        messages.error(request, error.for_page())
        return redirect("annotation:task", campaign_id, assignment_id)  # back to the task, as a refused label
    return redirect("annotation:work", campaign_id)


@role_required(can_annotate)
@require_POST
def skip_undo(request, campaign_id: int, assignment_id: int):
    assignment = _assignment_or_404(request, campaign_id, assignment_id)
    try:
        assignment_services.skip_undo(annotator=request.user, assignment=assignment)
    except TaskError as error:
        messages.error(request, error.for_page())
    return redirect("annotation:task", campaign_id, assignment_id)
