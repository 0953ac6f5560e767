"""The label round trip's common case on PostgreSQL, one statement each: a first label on a live lease, or
the answer to a live repeat (`first_label_store`: the task locked, the lease closed, the label and its
revision or the repeat's answer written), a new lease (`lease_new`: an unseen task with an open slot locked,
its slot taken, the lease written) and a repeat's (`repeat_lease_new`: one of the annotator's earlier
answers leased again).

Each returns None when its case does not hold (a changed label, a late or refused submit, a lease to renew
or none to take); the caller then takes the general path in `labels.py` / `assignment.py`, which
decides and words the outcome, so the rules live there and these statements only say when they surely hold.
SQLite always takes the general path.

Why: the ORM spends about a millisecond of a worker's CPU building each statement, and the round trip is the
request hundreds of raters repeat all day (docs/performance.md).
"""

import functools
import random
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection
from psycopg.types.json import Jsonb

from annotation.models import Assignment
from annotation.selectors.workbench import PAGE_ROW, task_page_sql, task_page_width
from annotation.task_kinds import RELEVANCE, TASK_KINDS, TaskKind

# The lease closed by a first label or a repeat's answer: the annotator's own, live (a repeat only of a task
# they labelled: `labels.judgment_submit`), with the campaign (shared, not archived as committed now) and the
# task locked first, in that order (`services/locks.py`); a member unless the campaign is open to all. At
# most one is live: a task is repeated only once its first lease was submitted.
_LEASE_CLOSE = """
task AS (SELECT t.id FROM annotation_campaign c JOIN {task_table} t ON t.campaign_id = c.id
         WHERE t.id = %(task)s AND c.archived_at IS NULL FOR KEY SHARE OF c FOR NO KEY UPDATE OF t),
lease AS (
    UPDATE annotation_assignment SET status = 'submitted', finished_at = %(now)s
    WHERE {task_column} = (SELECT id FROM task) AND annotator_id = %(annotator)s AND status = 'leased'
      AND (NOT repeat OR EXISTS (
          SELECT 1 FROM {label_table} WHERE task_id = %(task)s AND annotator_id = %(annotator)s))
      AND (%(open_to_all)s OR EXISTS (
          SELECT 1 FROM annotation_campaign_members
          WHERE campaign_id = %(campaign)s AND user_id = %(annotator)s))
    RETURNING id, repeat, leased_at, experimental_on_left
)"""

# A repeat's answer, kept apart from the labels (`labels._repeat_answer`).
_REPEAT_ANSWER = """
answer AS (
    INSERT INTO annotation_repeatanswer (assignment_id, grade, verdict, strength, seconds_spent, created_at)
    SELECT lease.id, {grade}, {verdict}, {strength}, {seconds}, %(now)s FROM lease WHERE lease.repeat
    RETURNING seconds_spent
)"""

# The server's measure of time spent, which a client's own may only shorten (`labels._seconds_spent`).
_SECONDS = "LEAST(EXTRACT(EPOCH FROM %(now)s - lease.leased_at)::float8, %(reported)s)"

_JUDGMENT_STORE = f"""
WITH {
    _LEASE_CLOSE.format(
        task_table="annotation_relevancetask",
        task_column="relevance_task_id",
        label_table="annotation_judgment",
    )
},
label AS (
    INSERT INTO annotation_judgment (task_id, annotator_id, grade, intents, comment, seconds_spent,
                                     created_at, updated_at)
    SELECT %(task)s, %(annotator)s, %(grade)s, %(intents)s, %(comment)s, {_SECONDS}, %(now)s, %(now)s
    FROM lease WHERE NOT lease.repeat
    RETURNING id, seconds_spent
),
revision AS (
    INSERT INTO annotation_labelrevision (kind, relevance_task_id, changed_by_id, old_value, new_value, note,
                                          created_at)
    SELECT 'judgment', %(task)s, %(annotator)s, '', (%(grade)s)::text, '', %(now)s FROM label
),
{_REPEAT_ANSWER.format(grade="%(grade)s", verdict="''", strength="NULL::smallint", seconds=_SECONDS)}
SELECT label.id, COALESCE(label.seconds_spent, answer.seconds_spent), '', false, lease.repeat
FROM lease LEFT JOIN label ON true LEFT JOIN answer ON true
"""

# The verdict relative to the experimental model from the side pressed (`labels._verdict`).
_VERDICT = """CASE WHEN %(side)s = 'same' THEN 'same'
    WHEN (%(side)s = 'left') = COALESCE(lease.experimental_on_left, false) THEN 'good' ELSE 'bad' END"""

_PREFERENCE_STORE = f"""
WITH {
    _LEASE_CLOSE.format(
        task_table="annotation_sidebysidetask",
        task_column="side_by_side_task_id",
        label_table="annotation_preference",
    )
},
label AS (
    INSERT INTO annotation_preference (task_id, annotator_id, experimental_on_left, verdict, strength,
                                       duplicates, comment, seconds_spent, created_at, updated_at)
    SELECT %(task)s, %(annotator)s, COALESCE(lease.experimental_on_left, false), {_VERDICT}, %(strength)s,
           %(duplicates)s, %(comment)s, {_SECONDS}, %(now)s, %(now)s FROM lease WHERE NOT lease.repeat
    RETURNING id, seconds_spent, verdict, experimental_on_left
),
revision AS (
    INSERT INTO annotation_labelrevision (kind, side_by_side_task_id, changed_by_id, old_value, new_value,
                                          note, created_at)
    SELECT 'preference', %(task)s, %(annotator)s, '',
           verdict || COALESCE(':' || (%(strength)s)::text, ''), '', %(now)s FROM label
),
{_REPEAT_ANSWER.format(grade="NULL::smallint", verdict=_VERDICT, strength="%(strength)s", seconds=_SECONDS)}
SELECT label.id, COALESCE(label.seconds_spent, answer.seconds_spent), {_VERDICT},
       COALESCE(lease.experimental_on_left, false), lease.repeat
FROM lease LEFT JOIN label ON true LEFT JOIN answer ON true
"""


@dataclass(frozen=True)
class StoredLabel:
    id: int | None  # None for a repeat's answer: the first label stands
    seconds_spent: float
    verdict: str  # side by side: as stored, relative to the experimental model ("" for a grade)
    experimental_on_left: bool
    repeat: bool


def enabled() -> bool:
    """On PostgreSQL, unless ROUND_TRIP_STATEMENTS is off (then every request takes the general path)."""
    return connection.vendor == "postgresql" and settings.ROUND_TRIP_STATEMENTS


def first_label_store(
    *, kind: TaskKind, task, annotator, now: datetime, answer: dict, comment: str, reported: float | None
) -> StoredLabel | None:
    """Store the annotator's first label of `task` on their live lease, or their answer to its live repeat,
    in one statement; None (nothing written) when they hold neither. `answer` is {"grade": g, "intents":
    list or None} or {"side": s, "strength": n, "duplicates": list}."""
    campaign = task.campaign
    params = {
        "task": task.pk,
        "annotator": annotator.pk,
        "campaign": campaign.pk,
        "open_to_all": campaign.open_to_all,
        "now": now,
        "reported": reported,
        "comment": comment,
        # The JSON fields' values as JSON (None stays SQL's NULL).
        **{key: Jsonb(value) if isinstance(value, list) else value for key, value in answer.items()},
    }
    with connection.cursor() as cursor:
        cursor.execute(_JUDGMENT_STORE if kind is RELEVANCE else _PREFERENCE_STORE, params)
        row = cursor.fetchone()
    return None if row is None else StoredLabel(*row)


# An open task the annotator never met (`selectors.workbench._tasks_unseen` less the renewable leases, which
# the general path handles), with a slot left.
_TASK_OPEN = """t.campaign_id = %(campaign)s AND t.slots_spent < %(overlap)s
      AND NOT EXISTS (SELECT 1 FROM annotation_assignment a
                      WHERE a.{task_column} = t.id AND a.annotator_id = %(annotator)s)
      AND NOT EXISTS (SELECT 1 FROM {label_table} l WHERE l.task_id = t.id AND l.annotator_id = %(annotator)s)
      {identical}"""

# A lease the annotator holds to go back to (`assignment._lease_own`): then nothing new is handed out.
_MINE = """mine AS (
    SELECT 1 FROM annotation_assignment
    WHERE annotator_id = %(annotator)s AND campaign_id = %(campaign)s
      AND ((status = 'leased' AND expires_at > %(now)s) OR (status = 'expired' AND NOT repeat))
)"""

# From a random point of the shuffle order on, then before it (`selectors.workbench.task_candidates`),
# unless the annotator holds a lease to go back to.
_LEASE_NEW = """
WITH {mine},
after AS (
    SELECT t.id FROM {task_table} t
    WHERE {task_open} AND t.shuffle_key >= %(start)s AND NOT EXISTS (SELECT 1 FROM mine)
    ORDER BY t.shuffle_key LIMIT 1 FOR NO KEY UPDATE OF t SKIP LOCKED
),
before AS (
    SELECT t.id FROM {task_table} t
    WHERE {task_open} AND t.shuffle_key < %(start)s AND NOT EXISTS (SELECT 1 FROM mine)
      AND NOT EXISTS (SELECT 1 FROM after)
    ORDER BY t.shuffle_key LIMIT 1 FOR NO KEY UPDATE OF t SKIP LOCKED
),
slot AS (
    UPDATE {task_table} t SET slots_spent = t.slots_spent + 1
    WHERE t.id IN (SELECT id FROM after UNION ALL SELECT id FROM before) AND t.slots_spent < %(overlap)s
    RETURNING t.id
),
leased AS (
    INSERT INTO annotation_assignment (annotator_id, campaign_id, {task_column}, status, skip_reason,
                                       leased_at, expires_at, experimental_on_left, repeat)
    SELECT %(annotator)s, %(campaign)s, id, 'leased', '', %(now)s, %(expires)s, %(experimental_on_left)s,
           false
    FROM slot
    RETURNING id, {task_column}
)
SELECT EXISTS (SELECT 1 FROM mine), leased.id, leased.{task_column}, page.*
FROM (SELECT 1) AS one LEFT JOIN leased ON true LEFT JOIN LATERAL ({page}) AS page ON true
"""


@functools.cache
def _lease_new_sql(kind: TaskKind) -> str:
    table = kind.model._meta.db_table
    column = f"{kind.assignment_field}_id"
    task_open = _TASK_OPEN.format(
        task_column=column,
        label_table=kind.label_model._meta.db_table,
        identical="AND NOT (t.lists_identical AND %(auto_same)s)" if kind.is_side_by_side else "",
    )
    # The new lease's page, read in the same statement (its snapshot: the label just stored counts).
    page = task_page_sql(kind, task=f"leased.{column}", assignment="leased.id", finished=False)
    return _LEASE_NEW.format(mine=_MINE, task_table=table, task_column=column, task_open=task_open, page=page)


def lease_new(
    *, kind: TaskKind, annotator, campaign, now: datetime, expires: datetime, start: int
) -> tuple[bool, Assignment | None]:
    """Lease the annotator an unseen open task of `kind` from `start` of the shuffle order, in one statement
    that reads its page too (`selectors.workbench.PAGE_ROW`).

    Returns whether they hold a lease to go back to (then nothing was taken), and the new lease if any."""
    on_left = (random.random() < 0.5) if kind.is_side_by_side else None
    params = {
        "annotator": annotator.pk,
        "campaign": campaign.pk,
        "overlap": kind.overlap(campaign),
        "now": now,
        "expires": expires,
        "start": start,
        "auto_same": campaign.auto_same_identical,
        "experimental_on_left": on_left,
        "depth": campaign.gsb_depth,
    }
    with connection.cursor() as cursor:
        cursor.execute(_lease_new_sql(kind), params)
        held, pk, task_id, *page = cursor.fetchone()
    if pk is None:
        return held, None
    task = {f"{kind.assignment_field}_id": task_id}
    lease = _leased(pk, annotator, campaign, now, expires, on_left, repeat=False, **task)
    setattr(lease, PAGE_ROW, tuple(page))
    return held, lease


# `assignment._repeat_lease`: one of the annotator's answers in the campaign, not among their last `gap`, of a
# task not repeated yet, from the latest `choices` of them (the `pick`-th share of those), leased again with
# the sides swapped; no slot. Nothing while they hold a lease to go back to.
_REPEAT_LEASE_NEW = """
WITH {mine},
answered AS (
    SELECT id, relevance_task_id, side_by_side_task_id, experimental_on_left, finished_at
    FROM annotation_assignment
    WHERE annotator_id = %(annotator)s AND campaign_id = %(campaign)s AND status = 'submitted' AND NOT repeat
      AND NOT EXISTS (SELECT 1 FROM mine)
    ORDER BY finished_at DESC, id DESC OFFSET %(gap)s
),
candidates AS (
    SELECT * FROM answered a
    WHERE NOT EXISTS (SELECT 1 FROM annotation_assignment r
                      WHERE r.annotator_id = %(annotator)s AND r.campaign_id = %(campaign)s AND r.repeat
                        AND (r.relevance_task_id = a.relevance_task_id
                             OR r.side_by_side_task_id = a.side_by_side_task_id))
    ORDER BY finished_at DESC, id DESC LIMIT %(choices)s
),
chosen AS (
    SELECT * FROM candidates ORDER BY finished_at DESC, id DESC
    OFFSET floor(%(pick)s * (SELECT count(*) FROM candidates))::bigint LIMIT 1
),
leased AS (
    INSERT INTO annotation_assignment (annotator_id, campaign_id, relevance_task_id, side_by_side_task_id,
                                       status, skip_reason, leased_at, expires_at, experimental_on_left,
                                       repeat)
    SELECT %(annotator)s, %(campaign)s, relevance_task_id, side_by_side_task_id, 'leased', '', %(now)s,
           %(expires)s, NOT experimental_on_left, true
    FROM chosen
    RETURNING id, relevance_task_id, side_by_side_task_id, experimental_on_left
)
SELECT EXISTS (SELECT 1 FROM mine), leased.*, relevance_page.*, side_by_side_page.*
FROM (SELECT 1) AS one LEFT JOIN leased ON true
LEFT JOIN LATERAL ({relevance_page}) AS relevance_page ON true
LEFT JOIN LATERAL ({side_by_side_page}) AS side_by_side_page ON true
"""


@functools.cache
def _repeat_lease_new_sql() -> str:
    """With the repeat's page, whichever its kind (`lease_new`)."""
    pages = {
        f"{kind.name}_page": task_page_sql(
            kind, task=f"leased.{kind.assignment_field}_id", assignment="leased.id", finished=False
        )
        for kind in TASK_KINDS
    }
    return _REPEAT_LEASE_NEW.format(mine=_MINE, **pages)


def repeat_lease_new(
    *, annotator, campaign, now: datetime, expires: datetime, gap: int, choices: int
) -> tuple[bool, Assignment | None]:
    """Lease the annotator a repeat of one of their earlier answers, in one statement (the rule is
    `assignment._repeat_lease`'s). Returns whether they hold a lease to go back to (then nothing was taken),
    and the repeat if there was one to take."""
    params = {
        "annotator": annotator.pk,
        "campaign": campaign.pk,
        "now": now,
        "expires": expires,
        "gap": gap,
        "choices": choices,
        "pick": random.random(),
        "depth": campaign.gsb_depth,
    }
    with connection.cursor() as cursor:
        cursor.execute(_repeat_lease_new_sql(), params)
        held, pk, relevance_task_id, side_by_side_task_id, on_left, *pages = cursor.fetchone()
    if pk is None:
        return held, None
    lease = _leased(
        pk,
        annotator,
        campaign,
        now,
        expires,
        on_left,
        repeat=True,
        relevance_task_id=relevance_task_id,
        side_by_side_task_id=side_by_side_task_id,
    )
    width = task_page_width(RELEVANCE)
    setattr(lease, PAGE_ROW, tuple(pages[:width] if relevance_task_id is not None else pages[width:]))
    return held, lease


def _leased(pk, annotator, campaign, now, expires, on_left, **fields) -> Assignment:
    """The lease a statement wrote, as the ORM would read it."""
    return Assignment(
        pk=pk,
        annotator=annotator,
        campaign=campaign,
        status=Assignment.Status.LEASED,
        leased_at=now,
        expires_at=expires,
        experimental_on_left=on_left,
        **fields,
    )
