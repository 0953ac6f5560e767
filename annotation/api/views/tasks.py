"""API: the annotator's contract. A task's id is the annotator's assignment id: it names one task for one
annotator, so nobody can address another's work, and it reveals no model."""

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin, ErrorSerializer
from annotation.api.parsers import query_of
from annotation.api.permissions import IsAnnotator
from annotation.api.serializers.requests import LabelRequestSerializer
from annotation.api.serializers.tasks import (
    AssignmentSerializer,
    LabelQuerySerializer,
    LabelSerializer,
    SkipRequestSerializer,
    TaskSerializer,
)
from annotation.errors import TaskError
from annotation.models import Assignment, Campaign
from annotation.selectors.task_page import TaskView, task_view
from annotation.selectors.workbench import assignment_list, assignment_of
from annotation.services.assignment import task_next, task_next_in, task_skip
from annotation.services.labels import label_submit
from annotation.task_kinds import KIND_NAMES, assignment_task

ANNOTATOR = [IsAuthenticated, IsAnnotator]


def _own_assignment(request, task_id: int) -> Assignment:
    assignment = assignment_of(annotator=request.user, pk=task_id)
    if assignment is None:
        raise Http404("No such task of yours.")
    return assignment


def _next_task(annotator, campaign) -> TaskView | None:
    """The annotator's next task as the API shows it; None when nothing is left, or none may be handed to
    them any more (their label, already stored, stands)."""
    try:
        assignment = task_next(annotator=annotator, campaign=campaign)
    except TaskError:
        return None
    return None if assignment is None else task_view(assignment=assignment)


class NextTaskView(APIView):
    permission_classes = ANNOTATOR

    @extend_schema(
        tags=["tasks"],
        request=None,
        responses={
            200: TaskSerializer,
            204: OpenApiResponse(description="Nothing left for you."),
            409: ErrorSerializer,
        },
        description="Your current task in the campaign, else the next one (leased to you for "
        "TASK_LEASE_MINUTES), else 204. Which kind comes first follows the campaign's `task_order`.",
    )
    def post(self, request, campaign_id: int):
        try:
            assignment = task_next_in(annotator=request.user, campaign_id=campaign_id)
        except Campaign.DoesNotExist:
            raise Http404("No such campaign.") from None
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(TaskSerializer(task_view(assignment=assignment)).data)


class TaskFilter(serializers.Serializer):
    campaign = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    status = serializers.ChoiceField(choices=Assignment.Status.values, required=False)
    kind = serializers.ChoiceField(choices=KIND_NAMES, required=False)


@extend_schema(tags=["tasks"], parameters=[TaskFilter])
class TaskListView(generics.ListAPIView):
    """Your own tasks, newest first."""

    permission_classes = ANNOTATOR
    serializer_class = AssignmentSerializer

    def get_queryset(self):
        filters = TaskFilter(data=query_of(self.request))
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        return assignment_list(
            annotator=self.request.user,
            campaign_id=data.get("campaign"),
            status=data.get("status", ""),
            kind=data.get("kind", ""),
        )


class TaskDetailView(APIView):
    permission_classes = ANNOTATOR

    @extend_schema(tags=["tasks"], responses={200: TaskSerializer})
    def get(self, request, task_id: int):
        return Response(TaskSerializer(task_view(assignment=_own_assignment(request, task_id))).data)


class JudgmentView(BodyLimitMixin, APIView):
    permission_classes = ANNOTATOR

    @extend_schema(
        tags=["tasks"],
        parameters=[LabelQuerySerializer],
        request=LabelRequestSerializer,
        responses={201: LabelSerializer, 200: LabelSerializer, 409: ErrorSerializer},
        description='Label your task: `{"grade": 2}` (relevance) or `{"verdict": "left"|"same"|"right"}` '
        "(side by side), with an optional `comment` and `strength`. 201 the first time; 200 when it changes "
        "your earlier label (its history is kept). With `?next=true` the answer holds your next task too "
        "(`next`), as POST next-task would give it.",
    )
    def post(self, request, task_id: int):
        query = LabelQuerySerializer(data=query_of(request))
        query.is_valid(raise_exception=True)
        label = LabelRequestSerializer(data=request.data)
        label.is_valid(raise_exception=True)
        data = label.validated_data
        assignment = _own_assignment(request, task_id)
        fields = ("grade", "verdict", "strength", "intents", "duplicates")
        answer = {field: data[field] for field in fields if field in data}
        label, created = label_submit(
            annotator=request.user,
            assignment=assignment,
            comment=data["comment"],
            seconds_spent=data.get("seconds_spent"),
            version=data.get("version"),
            **answer,
        )
        # What was stored: the service refuses any answer it would not store as given (intents and marks
        # in their stored order).
        answer.update(
            {field: getattr(label, field) for field in ("intents", "duplicates") if field in answer}
        )
        kind, _ = assignment_task(assignment)
        body = {"id": assignment.pk, "kind": kind.name, **answer, "comment": data["comment"]}
        if query.validated_data["next"]:
            body["next"] = _next_task(request.user, assignment.campaign)
        return Response(
            LabelSerializer(body).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class SkipView(BodyLimitMixin, APIView):
    permission_classes = ANNOTATOR

    @extend_schema(
        tags=["tasks"],
        request=SkipRequestSerializer,
        responses={200: AssignmentSerializer, 409: ErrorSerializer},
        description="Give a task you are working on back, with a reason; you will not get it again.",
    )
    def post(self, request, task_id: int):
        skip = SkipRequestSerializer(data=request.data)
        skip.is_valid(raise_exception=True)
        assignment = task_skip(
            annotator=request.user,
            assignment=_own_assignment(request, task_id),
            reason=skip.validated_data["reason"],
        )
        return Response(AssignmentSerializer(assignment).data)
