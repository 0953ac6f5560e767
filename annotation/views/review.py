"""Reviewers' pages: the queue of disputed tasks and the page that settles one (post, then redirect)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.errors import TaskError
from annotation.models import Campaign, RelevanceTask, SideBySideTask
from annotation.roles import can_review, role_required
from annotation.selectors.review import review_queue, review_task
from annotation.services.adjudication import adjudication_set


@role_required(can_review)
def queue(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return render(request, "annotation/review_queue.html", {"queue": review_queue(campaign=campaign)})


def _review(request, task, url_name: str):
    if request.method == "POST":
        label = request.POST.get("label", "")
        if isinstance(task, RelevanceTask):
            grade = int(label) if label.lstrip("-").isdigit() else None
            label_args = {"grade": grade}
        else:
            label_args = {"verdict": label}
        try:
            adjudication_set(
                reviewer=request.user, task=task, reason=request.POST.get("reason", ""), **label_args
            )
        except TaskError as error:
            messages.error(request, str(error))
            return redirect(url_name, task_id=task.pk)
        messages.success(request, f"Final label of {task} saved.")
        return redirect("annotation:review_queue", campaign_id=task.campaign_id)
    return render(request, "annotation/review_task.html", {"review": review_task(task=task)})


@role_required(can_review)
@require_http_methods(["GET", "POST"])
def relevance(request, task_id: int):
    task = get_object_or_404(
        RelevanceTask.objects.select_related("campaign", "query", "document"), pk=task_id
    )
    return _review(request, task, "annotation:review_relevance")


@role_required(can_review)
@require_http_methods(["GET", "POST"])
def side_by_side(request, task_id: int):
    task = get_object_or_404(
        SideBySideTask.objects.select_related("campaign", "query", "experimental_model"), pk=task_id
    )
    return _review(request, task, "annotation:review_side_by_side")
