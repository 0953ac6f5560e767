"""API for reviewers and managers: the review queue, one task with every label, adjudication, history."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin, ErrorSerializer
from annotation.api.parsers import query_of
from annotation.api.permissions import IsReviewer
from annotation.api.serializers.requests import AdjudicationRequestSerializer
from annotation.api.serializers.review import QueueItemSerializer, ReviewTaskSerializer, RevisionSerializer
from annotation.api.views.campaigns import campaign_or_404
from annotation.selectors.review import (
    QueueState,
    label_history,
    review_queue,
    review_task,
    review_task_get,
)
from annotation.services.adjudication import adjudication_set, review_lease_take
from annotation.task_kinds import KIND_NAMES, TASK_KINDS, kind_named, kind_of_slug

REVIEWER = [IsAuthenticated, IsReviewer]
KIND_PARAMETER = OpenApiParameter(
    "kind",
    str,
    OpenApiParameter.PATH,
    enum=[kind.slug for kind in TASK_KINDS],
    description="The kind of task",
)


def _task(kind: str, task_id: int):
    task_kind = kind_of_slug(kind)
    task = review_task_get(kind=task_kind, pk=task_id) if task_kind else None
    if task is None:
        raise Http404("No such task.")
    return task


class QueueFilter(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=[state.value for state in QueueState],
        default=QueueState.OPEN.value,
        help_text="open: not yet adjudicated; settled: adjudicated; all: open ones, then settled ones.",
    )
    kind = serializers.ChoiceField(choices=KIND_NAMES, required=False, help_text="Only this kind of task.")


@extend_schema(tags=["review"], parameters=[QueueFilter])
class ReviewQueueView(generics.ListAPIView):
    """Disputed tasks (labels differ) first, the most disputed first, then failed gold; paginated."""

    permission_classes = REVIEWER
    serializer_class = QueueItemSerializer

    def get_queryset(self):
        filters = QueueFilter(data=query_of(self.request))
        filters.is_valid(raise_exception=True)
        kind = filters.validated_data.get("kind")
        return review_queue(
            campaign=campaign_or_404(self.kwargs["campaign_id"]),
            state=QueueState(filters.validated_data["state"]),
            kind=kind_named(kind) if kind else None,
            reviewer=self.request.user,
        ).items


class ReviewTaskView(APIView):
    permission_classes = REVIEWER

    @extend_schema(
        tags=["review"],
        parameters=[KIND_PARAMETER],
        responses={200: ReviewTaskSerializer},
        description="A task (the task's own id, not an annotator's assignment id) with model names, every "
        "annotator's label, the adjudication, the label history and `version`. Opening it holds it for you "
        "for `REVIEW_LEASE_MINUTES` unless another reviewer holds it (`held_by`): the queue lists the tasks "
        "others hold after the free ones.",
    )
    def get(self, request, kind: str, task_id: int):
        task = _task(kind, task_id)
        review_lease_take(reviewer=request.user, task=task)
        return Response(ReviewTaskSerializer(review_task(task=task, reviewer=request.user)).data)


class AdjudicationView(BodyLimitMixin, APIView):
    permission_classes = REVIEWER

    @extend_schema(
        tags=["review"],
        parameters=[KIND_PARAMETER],
        request=AdjudicationRequestSerializer,
        responses={200: ReviewTaskSerializer, 409: ErrorSerializer},
        description='Set the final label: `{"grade": 2, "reason": "..."}`, or `{"verdict": "good", '
        '"reason": "..."}` (good, same or bad: relative to the experimental model). Send the `version` '
        "the task showed: when another reviewer changed the final label since, 409 `stale` names it now "
        "and nothing changes.",
    )
    def post(self, request, kind: str, task_id: int):
        task = _task(kind, task_id)
        request_data = AdjudicationRequestSerializer(data=request.data)
        request_data.is_valid(raise_exception=True)
        data = request_data.validated_data
        adjudication_set(
            reviewer=request.user,
            task=task,
            reason=data["reason"],
            grade=data.get("grade"),
            verdict=data.get("verdict"),
            version=data.get("version"),
        )
        return Response(ReviewTaskSerializer(review_task(task=task, reviewer=request.user)).data)


@extend_schema(tags=["review"], parameters=[KIND_PARAMETER])
class HistoryView(generics.ListAPIView):
    """Every change of the task's labels: who, when, old value → new value; newest first."""

    permission_classes = REVIEWER
    serializer_class = RevisionSerializer

    def get_queryset(self):
        return label_history(task=_task(self.kwargs["kind"], self.kwargs["task_id"]))
