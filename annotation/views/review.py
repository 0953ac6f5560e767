"""Reviewers' pages: the queue of disputed tasks and the page that settles one (post, then redirect to the
next open task)."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from annotation.errors import TaskError
from annotation.forms import AdjudicationForm, ReviewQueueForm, form_errors_text
from annotation.models import Campaign, RelevanceTask, SideBySideTask
from annotation.roles import can_review, role_required
from annotation.selectors.review import QueueState, review_queue, review_task
from annotation.services.adjudication import adjudication_set, review_lease_next, review_lease_take
from annotation.task_kinds import task_kind

QUEUE_PAGE_SIZE = 50


@role_required(can_review)
def queue(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = ReviewQueueForm(request.GET)
    form.is_valid()  # a field that does not parse keeps its default, and the page says so
    filters = form.cleaned_data
    review = review_queue(
        campaign=campaign,
        state=filters.get("state", QueueState.OPEN),
        kind=filters.get("kind"),
        reviewer=request.user,
    )
    # QueueItems is a lazy sequence (len and slices), which is all a Paginator uses.
    paginator = Paginator(review.items, QUEUE_PAGE_SIZE)  # type: ignore[arg-type, var-annotated]
    page = paginator.get_page(filters.get("page"))
    return render(
        request,
        "annotation/review_queue.html",
        {"queue": review, "page": page, "form": form, "states": list(QueueState)},
    )


def _review(request, task, url_name: str):
    # `?kind=` (the queue's kind filter) keeps "next task" to that kind.
    form = ReviewQueueForm(request.GET)
    form.is_valid()
    next_kind = form.cleaned_data.get("kind")
    keep = f"?{urlencode({'kind': next_kind.name})}" if next_kind else ""
    if request.method == "POST":
        here = redirect(reverse(url_name, args=[task.pk]) + keep)
        posted = AdjudicationForm(request.POST, relevance=isinstance(task, RelevanceTask))
        if not posted.is_valid():
            messages.error(request, form_errors_text(posted))
            return here
        try:
            adjudication_set(
                reviewer=request.user,
                task=task,
                reason=posted.cleaned_data["reason"],
                version=posted.cleaned_data["version"] or None,
                **posted.cleaned_data["label"],
            )
        except TaskError as error:
            messages.error(request, error.for_page())  # a stale page: the page shows the final label now
            return here
        messages.success(request, _("Final label of %(task)s saved.") % {"task": task})
        after = (task_kind(task).name, task.pk)
        following = review_lease_next(
            reviewer=request.user, campaign=task.campaign, after=after, kind=next_kind
        )
        if following is None:
            return redirect(reverse("annotation:review_queue", args=[task.campaign_id]) + keep)
        following_kind, following_pk = following
        return redirect(reverse(f"annotation:review_{following_kind}", args=[following_pk]) + keep)
    review_lease_take(reviewer=request.user, task=task)  # kept from the other reviewers' queues a while
    return render(
        request,
        "annotation/review_task.html",
        {"review": review_task(task=task, next_kind=next_kind, reviewer=request.user), "keep": keep},
    )


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
