"""The label pool: labels made under a judging standard serve every later campaign of that standard.

A campaign's relevance task whose (query, document) pair was already graded under its standard gets those
grades as copies (`reused_from` names the original), up to its overlap, so only the missing labels are asked;
a side-by-side task that shows exactly what an earlier task showed (`lists_hash`: the query and both top
lists, every document's content included) gets its verdicts. Queries and documents match by external id and
content: a changed document is a new document. Copies keep the original's annotator and time; labels of an
annotator excluded from their campaign are not reused.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from annotation.models import (
    AnnotatorExclusion,
    Campaign,
    Document,
    JudgingStandard,
    Judgment,
    Preference,
    Query,
    RelevanceTask,
    SideBySideTask,
)
from annotation.services.leases import task_slots_recount
from annotation.services.read_only import campaign_writable_check


@dataclass(frozen=True)
class Reused:
    judgments: int
    preferences: int


def standard_for(*, name: str, scale: list[dict], guidelines: str) -> JudgingStandard:
    """The latest version of the standard `name` if its scale and guidelines are these, else a new version
    (the first, or one after the latest): labels of different guidelines never share a pool."""
    standards = JudgingStandard.objects.select_for_update(no_key=True).filter(name=name)
    latest = standards.order_by("-version").first()
    if latest is not None and latest.scale == scale and latest.guidelines == guidelines:
        return latest
    version = latest.version + 1 if latest else 1
    return JudgingStandard.objects.create(name=name, version=version, scale=scale, guidelines=guidelines)


def lists_hash(query: tuple, online: list[tuple], experimental: list[tuple]) -> str:
    """SHA-256 of what a side-by-side task shows: the query's id and texts, then each list's documents (id,
    title, URL, body) in rank order."""
    return hashlib.sha256(json.dumps([query, online, experimental]).encode()).hexdigest()


def side_by_side_hashes_set(*, campaign: Campaign, top_lists: dict[tuple[int, int], list[int]]) -> None:
    """Give each side-by-side task of the campaign without one its `lists_hash`, from the models' top lists
    ((model pk, query pk) -> document pks in rank order)."""
    tasks = list(SideBySideTask.objects.filter(campaign=campaign, lists_hash="").select_related("query"))
    if not tasks:
        return
    online = campaign.models.get(role="online").pk
    document_pks = {
        pk
        for task in tasks
        for key in ((online, task.query_id), (task.experimental_model_id, task.query_id))
        for pk in top_lists.get(key, [])
    }
    documents = {
        row[0]: row[1:]
        for row in Document.objects.filter(campaign=campaign)
        .order_by()
        .values_list("pk", "external_id", "title", "url", "body")
        if row[0] in document_pks
    }
    for task in tasks:
        query = (task.query.external_id, task.query.text, task.query.description)
        lists = [
            [documents[pk] for pk in top_lists.get((model, task.query_id), [])]
            for model in (online, task.experimental_model_id)
        ]
        task.lists_hash = lists_hash(query, *lists)
    SideBySideTask.objects.bulk_update(tasks, ["lists_hash"], batch_size=2000)


def _age_limit(campaign: Campaign):
    return (
        timezone.now() - timedelta(days=campaign.reuse_max_age_days) if campaign.reuse_max_age_days else None
    )


# The newest label of each annotator on a matching earlier task, then the newest `overlap` of those per task.
# {label} is the label table, {columns} its copied columns, {matches} the joins from a new task `nt` to the
# earlier campaign `oc` and its labels `label`.
_REUSE = """
    INSERT INTO {label} (campaign_id, task_id, annotator_id, {columns}, created_at, updated_at,
                         reused_from_id)
    SELECT campaign_id, task_id, annotator_id, {columns}, created_at, %s, id FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY task_id ORDER BY created_at DESC, id DESC) AS nth
        FROM (
            SELECT nt.campaign_id, nt.id AS task_id, label.annotator_id, {label_columns}, label.created_at,
                label.id,
                ROW_NUMBER() OVER (
                    PARTITION BY nt.id, label.annotator_id ORDER BY label.created_at DESC, label.id DESC
                ) AS mine
            FROM {task} nt
            {matches}
            JOIN {label} label ON label.task_id = ot.id AND label.reused_from_id IS NULL
            WHERE nt.campaign_id = %s {age}
                AND NOT EXISTS (SELECT 1 FROM {exclusion} x WHERE x.campaign_id = oc.id
                    AND x.annotator_id = label.annotator_id AND x.reinstated_at IS NULL)
                AND NOT EXISTS (SELECT 1 FROM {label} own
                    WHERE own.task_id = nt.id AND own.annotator_id = label.annotator_id)
        ) AS candidates WHERE mine = 1
    ) AS ranked WHERE nth <= %s
"""
# Same query text (id and texts) and same document (id and content), in a campaign of the same standard.
_RELEVANCE_MATCHES = """
    JOIN {query} nq ON nq.id = nt.query_id
    JOIN {document} nd ON nd.id = nt.document_id
    JOIN {query} oq ON oq.external_id = nq.external_id AND oq.text = nq.text
        AND oq.description = nq.description AND oq.campaign_id <> nt.campaign_id
    JOIN {campaign} oc ON oc.id = oq.campaign_id AND oc.standard_id = %s
    JOIN {document} od ON od.campaign_id = oc.id AND od.external_id = nd.external_id
        AND od.title = nd.title AND od.url = nd.url AND od.body = nd.body
    JOIN {task} ot ON ot.query_id = oq.id AND ot.document_id = od.id
"""
# The same lists shown (`lists_hash`), in a campaign of the same standard and side-by-side scale.
_SIDE_BY_SIDE_MATCHES = """
    JOIN {task} ot ON ot.lists_hash = nt.lists_hash AND nt.lists_hash <> ''
        AND ot.campaign_id <> nt.campaign_id
    JOIN {campaign} oc ON oc.id = ot.campaign_id AND oc.standard_id = %s AND oc.gsb_scale = %s
"""


def _reuse(
    label_model,
    task_model,
    matches: str,
    columns: list[str],
    params: list,
    since,
    expressions: dict[str, str] | None = None,
) -> int:
    """Copies `columns` of the matching labels; `expressions` reads a column otherwise than as it is."""
    tables = {
        "label": label_model._meta.db_table,
        "task": task_model._meta.db_table,
        "query": Query._meta.db_table,
        "document": Document._meta.db_table,
        "campaign": Campaign._meta.db_table,
        "exclusion": AnnotatorExclusion._meta.db_table,
    }
    sql = _REUSE.format(
        **tables,
        columns=", ".join(columns),
        label_columns=", ".join((expressions or {}).get(column, f"label.{column}") for column in columns),
        matches=matches.format(**tables),
        age="AND label.created_at >= %s" if since else "",
    )
    match_params, (campaign_pk, overlap) = params[:-2], params[-2:]
    with connection.cursor() as cursor:
        cursor.execute(
            sql, [timezone.now(), *match_params, campaign_pk, *([since] if since else []), overlap]
        )
        return cursor.rowcount


@transaction.atomic
def labels_reuse(*, campaign: Campaign) -> Reused:
    """Copy the pool's labels onto the campaign's tasks (at most `overlap` per task, one per annotator, the
    newest first), then recount every task's slots. Does nothing without a standard or with reuse off."""
    campaign_writable_check(campaign=campaign)
    if campaign.standard_id is None or not campaign.reuse_labels:
        return Reused(0, 0)
    since = (
        timezone.now() - timedelta(days=campaign.reuse_max_age_days) if campaign.reuse_max_age_days else None
    )
    judgments = _reuse(
        Judgment,
        RelevanceTask,
        _RELEVANCE_MATCHES,
        ["grade", "intents", "comment", "seconds_spent"],
        [campaign.standard_id, campaign.pk, campaign.overlap],
        since,
        # The intents ticked name the query's intents: kept only where the query has the same ones.
        {"intents": "CASE WHEN nq.intents = oq.intents THEN label.intents END AS intents"},
    )
    preferences = _reuse(
        Preference,
        SideBySideTask,
        _SIDE_BY_SIDE_MATCHES,
        # The same lists shown on the same sides: the near-duplicate marks mean the same documents.
        ["experimental_on_left", "verdict", "strength", "duplicates", "comment", "seconds_spent"],
        [campaign.standard_id, campaign.gsb_scale, campaign.pk, campaign.gsb_overlap],
        since,
    )
    task_slots_recount(campaign=campaign)
    return Reused(judgments, preferences)


@transaction.atomic
def reused_labels_refresh(*, campaign: Campaign) -> Reused:
    """After the campaign's reuse settings or standard changed: drop the copies, then reuse again as the
    settings now say (labels annotators gave in this campaign are untouched)."""
    campaign_writable_check(campaign=campaign)
    Judgment.objects.filter(campaign=campaign, reused_from__isnull=False).delete()
    Preference.objects.filter(campaign=campaign, reused_from__isnull=False).delete()
    task_slots_recount(campaign=campaign)  # the dropped copies' slots, whether or not reuse follows
    return labels_reuse(campaign=campaign)
