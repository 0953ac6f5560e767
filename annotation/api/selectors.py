"""The API's list reads, with the filters its query parameters name."""

from django.db.models import Q, QuerySet

from annotation.models import (
    Assignment,
    Campaign,
    LabelRevision,
    Query,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
)


def campaign_list(*, name: str = "") -> QuerySet[Campaign]:
    campaigns = Campaign.objects.order_by("-created_at", "-pk")
    return campaigns.filter(name__icontains=name) if name else campaigns


def ranking_model_list(*, campaign: Campaign, role: str = "", name: str = "") -> QuerySet[RankingModel]:
    models = RankingModel.objects.filter(campaign=campaign).order_by("role", "name")
    if role:
        models = models.filter(role=role)
    return models.filter(name__icontains=name) if name else models


def query_list(*, campaign: Campaign, segment: str = "", text: str = "") -> QuerySet[Query]:
    queries = Query.objects.filter(campaign=campaign).order_by("external_id")
    if segment:
        queries = queries.filter(segment=segment)
    return queries.filter(text__icontains=text) if text else queries


def assignment_list(
    *, annotator, campaign_id: int | None = None, status: str = "", kind: str = ""
) -> QuerySet[Assignment]:
    """The annotator's own tasks, newest first."""
    assignments = Assignment.objects.filter(annotator=annotator).select_related(
        "relevance_task__query", "side_by_side_task__query"
    )
    if campaign_id is not None:
        assignments = assignments.filter(
            Q(relevance_task__campaign_id=campaign_id) | Q(side_by_side_task__campaign_id=campaign_id)
        )
    if status:
        assignments = assignments.filter(status=status)
    if kind:
        assignments = assignments.filter(**{f"{_task_field(kind)}__isnull": False})
    return assignments.order_by("-leased_at", "-pk")


def assignment_of(*, annotator, pk: int) -> Assignment | None:
    """One of the annotator's own tasks; None for anyone else's."""
    return (
        Assignment.objects.filter(pk=pk, annotator=annotator)
        .select_related("relevance_task__campaign", "side_by_side_task__campaign")
        .first()
    )


def review_task_get(*, kind: str, pk: int) -> RelevanceTask | SideBySideTask | None:
    model = RelevanceTask if kind == "relevance" else SideBySideTask
    related = ("campaign", "query", "document") if kind == "relevance" else ("campaign", "query")
    return model.objects.select_related(*related).filter(pk=pk).first()


def label_history(*, task: RelevanceTask | SideBySideTask) -> QuerySet[LabelRevision]:
    """Who changed the task's labels, when, from what to what; newest first."""
    field = "relevance_task" if isinstance(task, RelevanceTask) else "side_by_side_task"
    return (
        LabelRevision.objects.filter(**{field: task})
        .select_related("changed_by")
        .order_by("-created_at", "-pk")
    )


def _task_field(kind: str) -> str:
    return "relevance_task" if kind == "relevance" else "side_by_side_task"


def ranking_model_get(*, campaign: Campaign, name: str) -> RankingModel | None:
    return RankingModel.objects.filter(campaign=campaign, name=name).first()
