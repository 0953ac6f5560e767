"""Loading existing human labels (JSONL) into a campaign, all or nothing."""

import random

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from annotation.bundle import JudgmentRow, PreferenceRow
from annotation.bundle.reading import with_id
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import (
    Campaign,
    Judgment,
    LabelRevision,
    Preference,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
)
from annotation.roles import Role
from annotation.selectors.campaigns import campaign_document_pks, campaign_query_pks
from annotation.services.labels import _revision_value
from annotation.services.leases import task_slots_recount
from annotation.services.read_only import campaign_writable_lock
from plumbing.bulk import bulk_create_batched, rows_insert


def annotators_get_or_create(*, rows: list, source: str) -> dict[str, int]:
    """Map the rows' annotators to user ids; missing ones become annotators who cannot log in until given a
    password. Usernames are unique whatever their case: a new name that differs only in case from a user's
    (or from one earlier in the file) is refused at its first line."""
    User = get_user_model()
    first_row: dict[str, JudgmentRow | PreferenceRow] = {}
    for row in sorted(rows, key=lambda row: row.line):
        first_row.setdefault(row.annotator, row)
    known = dict(User.objects.filter(username__in=first_row).values_list("username", "pk"))
    missing = [username for username in first_row if username not in known]
    if missing:
        group, _created = Group.objects.get_or_create(name=Role.ANNOTATOR)
        for username in missing:
            taken = User.objects.filter(username__iexact=username).values_list("username", flat=True).first()
            if taken is not None:
                message = format_lazy(
                    _("{username} and {taken} differ only in case; a username is unique in any case"),
                    username=repr(username),
                    taken=repr(taken),
                )
                line = first_row[username].line
                raise InputError(Code.ALREADY_EXISTS, message, source=source, line=line, field="annotator")
            user = User(username=username)
            user.set_unusable_password()
            user.save()
            user.groups.add(group)
            known[username] = user.pk
    return known


@transaction.atomic
def labels_import(
    *, campaign: Campaign, judgments: list[JudgmentRow], preferences: list[PreferenceRow], source: str
) -> tuple[int, int]:
    """Write parsed labels, each with the first entry of its history ("imported from `source`"); any
    unknown id or repeated label fails the whole import with its line.

    A grade for a document the campaign has but never pooled creates that relevance task: a human label is
    worth keeping, and the ideal DCG counts every judged document.
    """
    campaign_writable_lock(campaign=campaign, exclusive=True)  # the slots are recounted
    query_pk = campaign_query_pks(campaign=campaign)
    document_pk = campaign_document_pks(campaign=campaign)
    # Read unordered: the models' default order joins the campaign, query and document only to sort.
    experimental = dict(
        RankingModel.objects.filter(campaign=campaign, role=RankingModel.Role.EXPERIMENTAL)
        .order_by()
        .values_list("name", "pk")
    )
    task_pk = _relevance_task_pks(campaign)
    sbs_pk = {
        (q, m): pk
        for pk, q, m in SideBySideTask.objects.filter(campaign=campaign)
        .order_by()
        .values_list("pk", "query", "experimental_model")
    }

    def located(row, code: Code, field: str, message: StrOrPromise) -> InputError:
        return InputError(code, message, source=source, line=row.line, field=field)

    pairs = []
    for row in judgments:
        if row.query not in query_pk:
            raise located(row, Code.UNKNOWN_QUERY, "query", with_id(_("unknown query {id}"), row.query))
        if row.document not in document_pk:
            message = with_id(_("unknown document {id}"), row.document)
            raise located(row, Code.UNKNOWN_DOCUMENT, "document", message)
        pairs.append((query_pk[row.query], document_pk[row.document]))
    new_pairs = sorted(set(pairs) - set(task_pk))
    bulk_create_batched(
        RelevanceTask, (RelevanceTask(campaign=campaign, query_id=q, document_id=d) for q, d in new_pairs)
    )
    if new_pairs:
        task_pk = _relevance_task_pks(campaign)

    sbs_tasks = []
    for preference_row in preferences:
        if preference_row.query not in query_pk:
            message = with_id(_("unknown query {id}"), preference_row.query)
            raise located(preference_row, Code.UNKNOWN_QUERY, "query", message)
        if preference_row.model not in experimental:
            raise located(
                preference_row,
                Code.UNKNOWN_MODEL,
                "model",
                with_id(_("{id} is not an experimental model of this campaign"), preference_row.model),
            )
        key = (query_pk[preference_row.query], experimental[preference_row.model])
        if key not in sbs_pk:
            raise located(
                preference_row,
                Code.UNKNOWN_QUERY,
                "query",
                format_lazy(
                    _("query {query} has no side-by-side task for {model}"),
                    query=repr(preference_row.query),
                    model=repr(preference_row.model),
                ),
            )
        sbs_tasks.append(sbs_pk[key])

    users = annotators_get_or_create(rows=[*judgments, *preferences], source=source)
    existing = set(
        Judgment.objects.filter(campaign=campaign).order_by().values_list("task_id", "annotator_id")
    )
    judgment_objects = []
    for row, pair in zip(judgments, pairs, strict=True):
        key = (task_pk[pair], users[row.annotator])
        if key in existing:
            raise located(
                row,
                Code.DUPLICATE_ID,
                "annotator",
                format_lazy(
                    _("{annotator} already graded {query}/{document}"),
                    annotator=repr(row.annotator),
                    query=row.query,
                    document=row.document,
                ),
            )
        existing.add(key)
        judgment_objects.append(
            Judgment(
                campaign=campaign,
                task_id=key[0],
                annotator_id=key[1],
                grade=row.grade,
                comment=row.comment,
                seconds_spent=row.seconds_spent,
            )
        )
    existing = set(
        Preference.objects.filter(campaign=campaign).order_by().values_list("task_id", "annotator_id")
    )
    preference_objects = []
    for preference_row, task in zip(preferences, sbs_tasks, strict=True):
        key = (task, users[preference_row.annotator])
        if key in existing:
            raise located(
                preference_row,
                Code.DUPLICATE_ID,
                "annotator",
                format_lazy(
                    _("{annotator} already judged {query}/{model}"),
                    annotator=repr(preference_row.annotator),
                    query=preference_row.query,
                    model=preference_row.model,
                ),
            )
        existing.add(key)
        # A file without the side shown gets a fair coin, fixed per (task, annotator) so re-imports agree.
        on_left = preference_row.experimental_on_left
        if on_left is None:
            on_left = random.Random(f"{task}:{key[1]}").random() < 0.5
        preference_objects.append(
            Preference(
                campaign=campaign,
                task_id=task,
                annotator_id=key[1],
                verdict=preference_row.verdict,
                strength=preference_row.strength,
                experimental_on_left=on_left,
                comment=preference_row.comment,
                seconds_spent=preference_row.seconds_spent,
            )
        )
    bulk_create_batched(Judgment, judgment_objects)
    bulk_create_batched(Preference, preference_objects)
    # Each imported label starts its history, as a label given in the workbench does.
    note, now = f"imported from {source}", timezone.now()
    fields = ["kind", "relevance_task_id", "side_by_side_task_id", "changed_by_id"]
    fields += ["old_value", "new_value", "note", "created_at"]
    revisions: list[tuple] = [
        (LabelRevision.Kind.JUDGMENT.value, label.task_id, None, label.annotator_id, "", str(label.grade))
        for label in judgment_objects
    ]
    revisions += [
        (
            LabelRevision.Kind.PREFERENCE.value,
            None,
            label.task_id,
            label.annotator_id,
            "",
            _revision_value(label),
        )
        for label in preference_objects
    ]
    rows_insert(LabelRevision, fields, (revision + (note, now) for revision in revisions))
    task_slots_recount(campaign=campaign)
    return len(judgment_objects), len(preference_objects)


def _relevance_task_pks(campaign: Campaign) -> dict[tuple[int, int], int]:
    """(query pk, document pk) → the campaign's relevance task."""
    return {
        (q, d): pk
        for pk, q, d in RelevanceTask.objects.filter(campaign=campaign)
        .order_by()
        .values_list("pk", "query", "document")
    }
