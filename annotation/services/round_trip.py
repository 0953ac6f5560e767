"""The label round trip's common case on PostgreSQL, one statement each: a first label on a live lease, or
the answer to a live repeat (`first_label_store`: the task locked, the lease closed, the label and its
revision or the repeat's answer written), a new lease (`lease_new`: an unseen task with an open slot
locked, of the first kind in the campaign's order that has one, its slot taken, the lease written) and a
repeat's (`repeat_lease_new`: one of the annotator's earlier answers leased again). A new lease may come
with the annotator's lock in the same round trip (`lock`): see `_LOCK`; and be built from the campaign as
this process saw it last, its statement then checking the settings it was built from (`seen`: `_SEEN`).

Each returns no label or lease when its case does not hold (a changed label, a late or refused submit, a
lease to renew or none to take); the caller then takes the general path in `labels.py` / `assignment.py`,
which decides and words the outcome, so the rules live there and these statements only say when they surely
hold.
SQLite always takes the general path.

Why: the ORM spends about a millisecond of a worker's CPU building each statement, and the round trip is the
request hundreds of raters repeat all day (docs/performance.md). The new-lease and label statements are
prepared once per connection (`plumbing.prepared`): parsed and planned as text, they cost PostgreSQL several
times what running them does.
"""

import functools
import random
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from psycopg.types.json import Jsonb

from annotation.models import SHUFFLE_KEYS, Assignment
from annotation.selectors.task_page import PAGE_ROW, task_page_sql, task_page_width
from annotation.task_kinds import RELEVANCE, TASK_KINDS, TaskKind
from plumbing.prepared import PreparedStatement

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

_JUDGMENT_STORE = PreparedStatement(f"""
WITH {
    _LEASE_CLOSE.format(
        task_table="annotation_relevancetask",
        task_column="relevance_task_id",
        label_table="annotation_judgment",
    )
},
label AS (
    INSERT INTO annotation_judgment (campaign_id, task_id, annotator_id, grade, intents, comment,
                                     seconds_spent, created_at, updated_at)
    SELECT %(campaign)s, %(task)s, %(annotator)s, %(grade)s, %(intents)s, %(comment)s, {_SECONDS}, %(now)s,
           %(now)s
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
""")

# The verdict relative to the experimental model from the side pressed (`labels._verdict`).
_VERDICT = """CASE WHEN %(side)s = 'same' THEN 'same'
    WHEN (%(side)s = 'left') = COALESCE(lease.experimental_on_left, false) THEN 'good' ELSE 'bad' END"""

_PREFERENCE_STORE = PreparedStatement(f"""
WITH {
    _LEASE_CLOSE.format(
        task_table="annotation_sidebysidetask",
        task_column="side_by_side_task_id",
        label_table="annotation_preference",
    )
},
label AS (
    INSERT INTO annotation_preference (campaign_id, task_id, annotator_id, experimental_on_left, verdict,
                                       strength, duplicates, comment, seconds_spent, created_at, updated_at)
    SELECT %(campaign)s, %(task)s, %(annotator)s, COALESCE(lease.experimental_on_left, false), {_VERDICT},
           %(strength)s, %(duplicates)s, %(comment)s, {_SECONDS}, %(now)s, %(now)s FROM lease
    WHERE NOT lease.repeat
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
""")


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
        cursor.execute((_JUDGMENT_STORE if kind is RELEVANCE else _PREFERENCE_STORE).text(), params)
        row = cursor.fetchone()
    return None if row is None else StoredLabel(*row)


# An open task the annotator never met (`selectors.workbench._tasks_unseen` less the renewable leases, which
# the general path handles), with a slot left.
_TASK_OPEN = """t.campaign_id = %(campaign)s AND t.slots_spent < %(overlap_{kind})s
      AND NOT EXISTS (SELECT 1 FROM annotation_assignment a
                      WHERE a.{task_column} = t.id AND a.annotator_id = %(annotator)s)
      AND NOT EXISTS (SELECT 1 FROM {label_table} l WHERE l.task_id = t.id AND l.annotator_id = %(annotator)s)
      {identical}"""

# Read under the annotator's lock, by the general path (`assignment._annotator_lock`) and by a new lease sent
# with the lock (`_OPEN`): the annotator's labels in the campaign excluded, and a lease anywhere past its time
# (`leases_expire` gives its slot back first). The lock itself: the campaign shared, then the person
# (`services/locks.py`), on `c` and `u`.
EXCLUDED = """EXISTS (SELECT 1 FROM annotation_annotatorexclusion
               WHERE annotator_id = %(annotator)s AND campaign_id = %(campaign)s AND reinstated_at IS NULL)"""
LEASE_RAN_OUT = """EXISTS (SELECT 1 FROM annotation_assignment
                    WHERE status = 'leased' AND expires_at <= %(now)s)"""
ANNOTATOR_LOCK = "FOR KEY SHARE OF c FOR NO KEY UPDATE OF u"

# What `assignment._hand_out` refuses, or does first, under the annotator's lock, as committed now: an
# archived campaign, the annotator's labels in it excluded, a lease anywhere past its time. While any of
# these holds nothing is taken: the general path says which.
_OPEN = f"""open AS (
    SELECT 1 FROM annotation_campaign c
    WHERE c.id = %(campaign)s AND c.archived_at IS NULL
      AND NOT {EXCLUDED}
      AND NOT {LEASE_RAN_OUT}{{seen}}
)"""

# A statement built from the campaign as this process saw it last (`seen`), not read in this request: it
# takes nothing unless the settings it was built from still hold (the draws: `task_order`, `repeat_rate`;
# the parameters: each kind's overlap, `auto_same_identical`, `gsb_depth`) and the campaign is open to the
# annotator (`assignment.member_check`'s rule: open to all, or they are a member).
_SEEN = """
      AND c.repeat_rate = %(repeat_rate)s AND c.gsb_depth = %(depth)s{settings}
      AND (c.open_to_all OR EXISTS (SELECT 1 FROM annotation_campaign_members
                                    WHERE campaign_id = c.id AND user_id = %(annotator)s))"""


def _open_sql(seen: str | None) -> str:
    """`_OPEN`, with `_SEEN` and its further `settings` when the statement is built from a campaign seen."""
    return _OPEN.format(seen="" if seen is None else _SEEN.format(settings=seen))


# The annotator's lock (`assignment._annotator_lock`), sent with a new lease as one string. In autocommit
# PostgreSQL runs such a string as one transaction, so the lock holds until the lease is written, without a
# BEGIN and a COMMIT of their own: one round trip instead of four. Each statement reads what is committed
# when it starts (READ COMMITTED), so the lease, which starts once the lock is granted, sees the lease
# another tab took meanwhile (`mine`) and what `_OPEN` checks.
_LOCK = f"""SELECT 1 FROM annotation_campaign c, {{user_table}} u
WHERE c.id = %(campaign)s AND u.id = %(annotator)s {ANNOTATOR_LOCK}"""


@functools.cache
def lock_sql() -> str:
    """The annotator's lock alone, to send before a new lease (`lease_new`'s `lock`)."""
    return _LOCK.format(user_table=get_user_model()._meta.db_table)


# A lease the annotator holds to go back to (`assignment._lease_own`): then nothing new is handed out.
_MINE = """mine AS (
    SELECT 1 FROM annotation_assignment
    WHERE annotator_id = %(annotator)s AND campaign_id = %(campaign)s
      AND ((status = 'leased' AND expires_at > %(now)s) OR (status = 'expired' AND NOT repeat))
)"""

# One kind's open task from a random point of its shuffle order on, then before it
# (`selectors.workbench.task_candidates`), its slot taken; nothing when the campaign is not open to them
# (`_OPEN`), they hold a lease to go back to, or a kind tried before this one gave a task (`{before}`).
_SLOT_TAKE = """
after_{kind} AS (
    SELECT t.id FROM {task_table} t
    WHERE {task_open} AND t.shuffle_key >= %(start_{kind})s {free} {before}
    ORDER BY t.shuffle_key LIMIT 1 FOR NO KEY UPDATE OF t SKIP LOCKED
),
before_{kind} AS (
    SELECT t.id FROM {task_table} t
    WHERE {task_open} AND t.shuffle_key < %(start_{kind})s {free} {before}
      AND NOT EXISTS (SELECT 1 FROM after_{kind})
    ORDER BY t.shuffle_key LIMIT 1 FOR NO KEY UPDATE OF t SKIP LOCKED
),
slot_{kind} AS (
    UPDATE {task_table} t SET slots_spent = t.slots_spent + 1
    WHERE t.id IN (SELECT id FROM after_{kind} UNION ALL SELECT id FROM before_{kind})
      AND t.slots_spent < %(overlap_{kind})s
    RETURNING t.id
)"""

# The kinds in the order given, the next tried only when those before it gave nothing: one statement
# whichever kind has a task left.
_LEASE_NEW = """
WITH {open},{mine},{slots},
leased AS (
    INSERT INTO annotation_assignment (annotator_id, campaign_id, relevance_task_id, side_by_side_task_id,
                                       status, skip_reason, leased_at, expires_at, experimental_on_left,
                                       repeat)
    SELECT %(annotator)s, %(campaign)s, relevance_task_id, side_by_side_task_id, 'leased', '', %(now)s,
           %(expires)s, experimental_on_left, false
    FROM ({taken}) AS taken(relevance_task_id, side_by_side_task_id, experimental_on_left)
    RETURNING id, relevance_task_id, side_by_side_task_id, experimental_on_left
)
SELECT EXISTS (SELECT 1 FROM open), EXISTS (SELECT 1 FROM mine), leased.*, {pages}
"""

# Nothing is taken unless the campaign is open to the annotator and they hold no lease to go back to.
_FREE = "AND EXISTS (SELECT 1 FROM open) AND NOT EXISTS (SELECT 1 FROM mine)"

# The page of the lease just written, whichever its kind, after the columns above (`_lease_take`).
_PAGES = """relevance_page.*, side_by_side_page.*
FROM (SELECT 1) AS one LEFT JOIN leased ON true
LEFT JOIN LATERAL ({relevance_page}) AS relevance_page ON true
LEFT JOIN LATERAL ({side_by_side_page}) AS side_by_side_page ON true"""


def _pages_sql() -> str:
    return _PAGES.format(
        **{
            f"{kind.name}_page": task_page_sql(
                kind, task=f"leased.{kind.assignment_field}_id", assignment="leased.id", finished=False
            )
            for kind in TASK_KINDS
        }
    )


@functools.cache
def _lease_new_sql(kinds: tuple[TaskKind, ...], seen: bool = False) -> PreparedStatement:
    slots, taken = [], []
    for i, kind in enumerate(kinds):
        column = f"{kind.assignment_field}_id"
        task_open = _TASK_OPEN.format(
            kind=kind.name,
            task_column=column,
            label_table=kind.label_model._meta.db_table,
            identical="AND NOT (t.lists_identical AND %(auto_same)s)" if kind.is_side_by_side else "",
        )
        before = "".join(f"AND NOT EXISTS (SELECT 1 FROM slot_{earlier.name})" for earlier in kinds[:i])
        slots.append(
            _SLOT_TAKE.format(
                kind=kind.name,
                task_table=kind.model._meta.db_table,
                task_open=task_open,
                free=_FREE,
                before=before,
            )
        )
        ids = ", ".join("id" if other is kind else "NULL::bigint" for other in TASK_KINDS)
        on_left = "%(experimental_on_left)s" if kind.is_side_by_side else "NULL::boolean"
        taken.append(f"SELECT {ids}, {on_left} FROM slot_{kind.name}")
    # The order of the kinds comes from `task_order`; the statement depends on each kind's overlap.
    settings = (
        "".join(f" AND c.{kind.overlap_field} = %(overlap_{kind.name})s" for kind in kinds)
        + " AND c.auto_same_identical = %(auto_same)s AND c.task_order = %(task_order)s"
    )
    return PreparedStatement(
        _LEASE_NEW.format(
            open=_open_sql(settings if seen else None),
            mine=_MINE,
            slots=",".join(slots),
            taken=" UNION ALL ".join(taken),
            pages=_pages_sql(),
        )
    )


@dataclass(frozen=True)
class NewLease:
    open: bool  # the campaign is open to the annotator (`_OPEN`; with `seen`, `_SEEN` too): else none taken
    held: bool  # they hold a lease to go back to: then nothing was taken
    lease: Assignment | None  # the lease taken, if any, with its page
    locked: tuple | None = None  # the row the `lock` statement read, when it reads one


def lease_new(
    *,
    kinds: tuple[TaskKind, ...],
    annotator,
    campaign,
    now: datetime,
    expires: datetime,
    lock: str = "",
    seen: bool = False,
) -> NewLease:
    """Lease the annotator an unseen open task of the first of `kinds` that has one, from a random point of
    its shuffle order, in one statement that reads its page too (`selectors.task_page.PAGE_ROW`); with
    `lock` (`lock_sql()`, or another statement that takes the same lock), after it in the same round trip
    (`_LOCK`); with `seen`, `campaign` and `kinds` are as this process saw them last (`_SEEN`)."""
    params = {
        "annotator": annotator.pk,
        "campaign": campaign.pk,
        "now": now,
        "expires": expires,
        "auto_same": campaign.auto_same_identical,
        "experimental_on_left": random.random() < 0.5,
        "depth": campaign.gsb_depth,
        **(_seen_params(campaign) if seen else {}),
    }
    for kind in kinds:
        params[f"overlap_{kind.name}"] = kind.overlap(campaign)
        params[f"start_{kind.name}"] = random.randrange(SHUFFLE_KEYS)
    statement = _lease_new_sql(kinds, seen)
    return _lease_take(statement, params, annotator, campaign, now, expires, lock, repeat=False)


def _seen_params(campaign) -> dict:
    return {"repeat_rate": campaign.repeat_rate, "task_order": campaign.task_order}


# `assignment._repeat_lease`: one of the annotator's answers in the campaign, not among their last `gap`, of a
# task not repeated yet, from the latest `choices` of them (the `pick`-th share of those), leased again with
# the sides swapped; no slot. Nothing while they hold a lease to go back to.
_REPEAT_LEASE_NEW = """
WITH {open},{mine},
answered AS (
    SELECT id, relevance_task_id, side_by_side_task_id, experimental_on_left, finished_at
    FROM annotation_assignment
    WHERE annotator_id = %(annotator)s AND campaign_id = %(campaign)s AND status = 'submitted' AND NOT repeat
      {free}
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
    OFFSET floor(%(pick)s::float8 * (SELECT count(*) FROM candidates))::bigint LIMIT 1
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
SELECT EXISTS (SELECT 1 FROM open), EXISTS (SELECT 1 FROM mine), leased.*, {pages}
"""


@functools.cache
def _repeat_lease_new_sql(seen: bool = False) -> PreparedStatement:
    return PreparedStatement(
        _REPEAT_LEASE_NEW.format(
            open=_open_sql("" if seen else None), mine=_MINE, free=_FREE, pages=_pages_sql()
        )
    )


def repeat_lease_new(
    *,
    annotator,
    campaign,
    now: datetime,
    expires: datetime,
    gap: int,
    choices: int,
    lock: str = "",
    seen: bool = False,
) -> NewLease:
    """Lease the annotator a repeat of one of their earlier answers, in one statement (the rule is
    `assignment._repeat_lease`'s); `lock` and `seen` as in `lease_new`."""
    params = {
        "annotator": annotator.pk,
        "campaign": campaign.pk,
        "now": now,
        "expires": expires,
        "gap": gap,
        "choices": choices,
        "pick": random.random(),
        "depth": campaign.gsb_depth,
        **(_seen_params(campaign) if seen else {}),
    }
    statement = _repeat_lease_new_sql(seen)
    return _lease_take(statement, params, annotator, campaign, now, expires, lock, repeat=True)


def _lease_take(
    statement: PreparedStatement, params, annotator, campaign, now, expires, lock: str, *, repeat: bool
) -> NewLease:
    """Run a new lease's statement (after `lock`, in one string) and read what it wrote (`_LEASE_NEW`'s
    columns) as the ORM would, with its page."""
    sql = statement.text()
    locked = None
    with connection.cursor() as cursor:
        # Django's psycopg cursors bind on the client: the string goes as one simple query.
        cursor.execute(f"{lock};\n{sql}" if lock else sql, params)
        if lock:
            locked = cursor.fetchone()
            cursor.nextset()
        is_open, held, pk, relevance_task_id, side_by_side_task_id, on_left, *pages = cursor.fetchone()
    if pk is None:
        return NewLease(is_open, held, None, locked)
    lease = Assignment(
        pk=pk,
        annotator=annotator,
        campaign=campaign,
        status=Assignment.Status.LEASED,
        leased_at=now,
        expires_at=expires,
        experimental_on_left=on_left,
        repeat=repeat,
        relevance_task_id=relevance_task_id,
        side_by_side_task_id=side_by_side_task_id,
    )
    width = task_page_width(RELEVANCE)
    setattr(lease, PAGE_ROW, tuple(pages[:width] if relevance_task_id is not None else pages[width:]))
    return NewLease(is_open, held, lease, locked)
