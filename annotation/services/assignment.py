"""Handing tasks out, and skips.

Order: the campaign's `task_order` says which kind an annotator is handed first (interleaved: drawn per
hand-out); within a kind, tasks come from random points of a shuffled order.

Side-by-side tasks whose two lists are identical are never handed out when the campaign has
`auto_same_identical`: no Preference rows are written for them; the metrics count them as Same.

A task's slots and leases (their expiry, a lease claimed and finished by a label): `services/leases.py`.
"""

import functools
import random
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Case, Q, When
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import SHUFFLE_KEYS, Assignment, Campaign, SkipReason, TaskOrder
from annotation.roles import can_review
from annotation.selectors.workbench import task_candidates
from annotation.services import round_trip
from annotation.services.leases import leases_expire, slot_open, slots_change
from annotation.services.locks import task_lock
from annotation.services.read_only import campaign_writable_check
from annotation.task_kinds import RELEVANCE, SIDE_BY_SIDE, TaskKind, assignment_task, task_kind
from plumbing import rows

# A fresh statement after the lock sees leases committed meanwhile; a few rounds cover those races.
LEASE_ATTEMPTS = 5


def task_next(*, annotator, campaign: Campaign) -> Assignment | None:
    """The annotator's live lease in the campaign, else a new lease on a task with an open slot, else None.

    On PostgreSQL candidate tasks are locked with SKIP LOCKED, so concurrent annotators take different
    tasks; SQLite runs the same code serially (its transactions are IMMEDIATE). On PostgreSQL a new lease
    comes in one round trip with the annotator's lock, without BEGIN and COMMIT (`round_trip._LOCK`); the
    rest (a lease to go back to, a refusal, nothing left) takes the general path, in a transaction.
    """
    member_check(annotator=annotator, campaign=campaign)
    now = timezone.now()
    draws = _draws(campaign)
    tried = False
    if round_trip.enabled():
        new = _lease_new(
            annotator=annotator, campaign=campaign, now=now, draws=draws, lock=round_trip.lock_sql()
        )
        if new.lease is not None:
            return new.lease
        tried = new.open  # open to them and nothing new to take: not asked again below
    with transaction.atomic():
        locked = _annotator_lock(annotator=annotator, campaign_id=campaign.pk, now=now)
        return _hand_out(
            annotator=annotator, campaign=campaign, locked=locked, now=now, draws=draws, tried=tried
        )


def task_next_in(*, annotator, campaign_id: int) -> Assignment | None:
    """`task_next` in the campaign named by its id (the API's next-task). Raises Campaign.DoesNotExist for
    one they may not see (`selectors.campaigns.campaign_list`: open to them, or any for reviewers; archived
    ones too). On PostgreSQL, in autocommit (no BEGIN and COMMIT): once this process has seen the campaign,
    the annotator's lock reads it again and a new lease built from what was seen comes in the same round
    trip, its statement checking that the settings it was built from still hold (`round_trip._SEEN`);
    otherwise the campaign is read with whether they are a member, then a new lease comes with the lock in
    one round trip, as in `task_next`. The rest takes the general path, in a transaction, the campaign read
    again with the lock."""
    now = timezone.now()
    draws, tried = None, False
    if round_trip.enabled():
        seen = _campaigns_seen.get(campaign_id)
        if seen is not None:
            new = _lease_new(
                annotator=annotator,
                campaign=seen,
                now=now,
                draws=_draws(seen),
                lock=_annotator_lock_sql(locks=True, campaign=True),
                seen=True,
            )
            read = _locked_from(new.locked)
            if new.lease is not None:
                assert read.campaign is not None  # the lease's statement found it, locked by the read
                new.lease.campaign = _campaign_remember(read.campaign)  # as read now, not as seen
                return new.lease
            # Nothing new to take, or nothing taken until the general path has acted (excluded, or a lease
            # ran out somewhere): the plain lease below would not take one either.
            tried = new.open or read.excluded or read.expired
        else:
            read = _annotator_lock(
                annotator=annotator, campaign_id=campaign_id, now=now, campaign=True, lock=False
            )
        campaign = _campaign_seen(annotator=annotator, locked=read)
        _campaign_remember(campaign)
        if not tried:
            draws = _draws(campaign)
            new = _lease_new(
                annotator=annotator, campaign=campaign, now=now, draws=draws, lock=round_trip.lock_sql()
            )
            if new.lease is not None:
                return new.lease
            tried = new.open  # open to them and nothing new to take: not asked again below
    with transaction.atomic():
        locked = _annotator_lock(annotator=annotator, campaign_id=campaign_id, now=now, campaign=True)
        campaign = _campaign_seen(annotator=annotator, locked=locked)
        return _hand_out(
            annotator=annotator,
            campaign=campaign,
            locked=locked,
            now=now,
            draws=draws or _draws(campaign),
            tried=tried,
        )


# The campaigns `task_next_in` read last in this process, by id: what its next lease's statement is built
# from (checked by it). A few hundred at most: emptied when full.
_campaigns_seen: dict[int, Campaign] = {}
CAMPAIGNS_SEEN = 256


def _campaign_remember(campaign: Campaign) -> Campaign:
    if len(_campaigns_seen) >= CAMPAIGNS_SEEN:
        _campaigns_seen.clear()
    _campaigns_seen[campaign.pk] = campaign
    return campaign


def _campaign_seen(*, annotator, locked: "_Locked") -> Campaign:
    """The campaign read with the annotator (`_annotator_lock`) if they may see it and work on it."""
    campaign = locked.campaign
    if campaign is None or not (campaign.open_to_all or locked.member or can_review(annotator)):
        raise Campaign.DoesNotExist
    member_check(annotator=annotator, campaign=campaign, member=locked.member)
    return campaign


@dataclass(frozen=True)
class _Draws:
    kinds: tuple[TaskKind, ...]  # in the order to try
    repeat: bool  # a repeat is drawn


def _draws(campaign: Campaign) -> _Draws:
    kinds = _kinds_in_order(campaign)
    return _Draws(kinds, bool(campaign.repeat_rate) and random.random() < campaign.repeat_rate)


def _hand_out(
    *, annotator, campaign: Campaign, locked: "_Locked", now, draws: _Draws, tried: bool = False
) -> Assignment | None:
    """`task_next` under the annotator's lock; `tried`: the round trip's statements found nothing new to
    take a moment ago."""
    campaign_writable_check(campaign=campaign, archived=locked.archived)  # as committed now
    if locked.excluded:
        raise TaskError(
            TaskErrorCode.EXCLUDED, _("Your labels in this campaign are no longer used; ask its manager.")
        )
    if locked.expired:
        leases_expire(now=now)
    if round_trip.enabled() and not tried:
        # The common case in one statement (a repeat's first); the general path below when it does not
        # hold.
        new = _lease_new(annotator=annotator, campaign=campaign, now=now, draws=draws)
        if new.lease is not None:
            return new.lease
    own = _lease_own(annotator=annotator, campaign=campaign, now=now)
    if own is not None:
        return own
    if draws.repeat:
        repeat = _repeat_lease(annotator=annotator, campaign=campaign, now=now)
        if repeat is not None:
            return repeat
    for kind in draws.kinds:
        task = _task_lock_open(kind=kind, annotator=annotator, campaign=campaign)
        if task is not None:
            return _lease(kind=kind, annotator=annotator, task=task, campaign=campaign)
    return None


def _lease_new(
    *, annotator, campaign: Campaign, now, draws: _Draws, lock: str = "", seen: bool = False
) -> round_trip.NewLease:
    """The round trip's new lease (`round_trip`): a repeat when one is drawn, else (or when there is none to
    repeat) an unseen task; with `lock`, each statement after that one, which takes the annotator's lock, in
    the same round trip; `seen` as in `round_trip.lease_new`."""
    expires = now + timedelta(minutes=settings.TASK_LEASE_MINUTES)
    if draws.repeat:
        new = round_trip.repeat_lease_new(
            annotator=annotator,
            campaign=campaign,
            now=now,
            expires=expires,
            gap=REPEAT_GAP,
            choices=REPEAT_CHOICES,
            lock=lock,
            seen=seen,
        )
        if new.lease is not None or new.held or not new.open:
            return new
    return round_trip.lease_new(
        kinds=draws.kinds,
        annotator=annotator,
        campaign=campaign,
        now=now,
        expires=expires,
        lock=lock,
        seen=seen,
    )


# Plain SQL: asked on every hand-out, and the ORM's building of it cost more than running it. The campaign
# is locked before the annotator (`services/locks.py`: the clauses' order is the order of the locks).
_ANNOTATOR_LOCK = f"""
SELECT {{campaign}}c.archived_at IS NOT NULL,
       EXISTS (SELECT 1 FROM annotation_campaign_members WHERE campaign_id = c.id AND user_id = u.id),
       {round_trip.EXCLUDED},
       {round_trip.LEASE_RAN_OUT}
FROM annotation_campaign c, {{user_table}} u WHERE c.id = %(campaign)s AND u.id = %(annotator)s {{lock}}
"""


@functools.cache
def _annotator_lock_sql(*, locks: bool, campaign: bool) -> str:
    return _ANNOTATOR_LOCK.format(
        campaign=f"{rows.select_list(Campaign, 'c')}, " if campaign else "",
        user_table=get_user_model()._meta.db_table,
        lock=round_trip.ANNOTATOR_LOCK if locks else "",
    )


@dataclass(frozen=True)
class _Locked:
    campaign: Campaign | None  # as committed now, when asked for (None: no such campaign)
    archived: bool  # as committed now
    member: bool
    excluded: bool  # a manager excluded their labels in it
    expired: bool  # a lease anywhere ran out: `leases_expire` has work


def _annotator_lock(
    *, annotator, campaign_id: int, now, campaign: bool = False, lock: bool = True
) -> _Locked:
    """Lock the campaign (shared) and the annotator's row: one annotator's parallel requests (two tabs) queue
    here instead of taking two leases. Reads whether the campaign is archived as committed now (with
    `campaign`, the whole row), whether they are a member, excluded, and whether any lease anywhere ran
    out; without `lock`, only reads them."""
    with connection.cursor() as cursor:
        cursor.execute(
            _annotator_lock_sql(locks=lock and connection.features.has_select_for_update, campaign=campaign),
            {"annotator": annotator.pk, "campaign": campaign_id, "now": now},
        )
        row = cursor.fetchone()
    return _locked_from(row, campaign=campaign)


def _locked_from(row: tuple | None, *, campaign: bool = True) -> _Locked:
    """`_annotator_lock`'s row (None: no such campaign) as read."""
    if row is None:
        return _Locked(None, archived=False, member=False, excluded=False, expired=False)
    read, end = rows.instance_at(Campaign, row) if campaign else (None, 0)
    archived, member, excluded, expired = map(bool, row[end:])
    return _Locked(read, archived=archived, member=member, excluded=excluded, expired=expired)


REPEAT_GAP = 3  # a repeat is never one of the annotator's last three answers: not back to back
REPEAT_CHOICES = 200  # drawn from their latest answers beyond the gap


def _repeat_lease(*, annotator, campaign: Campaign, now) -> Assignment | None:
    """A task the annotator answered earlier (not among their last REPEAT_GAP, not repeated yet), leased
    again as a repeat: no slot, side-by-side sides swapped; None when there is none to repeat."""
    repeated = Assignment.objects.filter(campaign=campaign, annotator=annotator, repeat=True)
    answered = (
        Assignment.objects.filter(
            campaign=campaign, annotator=annotator, status=Assignment.Status.SUBMITTED, repeat=False
        )
        .order_by("-finished_at", "-pk")
        .values_list("pk", flat=True)
    )
    recent = list(answered[:REPEAT_GAP])
    if len(recent) < REPEAT_GAP:
        return None
    candidates = list(
        answered.exclude(pk__in=recent)  # one repeat per task:
        .exclude(relevance_task__in=repeated.filter(relevance_task__isnull=False).values("relevance_task"))
        .exclude(
            side_by_side_task__in=repeated.filter(side_by_side_task__isnull=False).values("side_by_side_task")
        )[:REPEAT_CHOICES]
    )
    if not candidates:
        return None
    first = Assignment.objects.get(pk=random.choice(candidates))
    swapped = None if first.experimental_on_left is None else not first.experimental_on_left
    return Assignment.objects.create(
        annotator=annotator,
        campaign=campaign,
        relevance_task_id=first.relevance_task_id,
        side_by_side_task_id=first.side_by_side_task_id,
        experimental_on_left=swapped,
        repeat=True,
        leased_at=now,
        expires_at=now + timedelta(minutes=settings.TASK_LEASE_MINUTES),
    )


def repeat_lease_live(*, annotator, task) -> Assignment | None:
    """The annotator's live repeat of `task`, locked: their answer to it goes to a RepeatAnswer."""
    kind = task_kind(task)
    return (
        Assignment.objects.select_for_update(no_key=True)
        .filter(
            annotator=annotator, repeat=True, status=Assignment.Status.LEASED, **{kind.assignment_field: task}
        )
        .first()
    )


def _kinds_in_order(campaign: Campaign) -> tuple[TaskKind, ...]:
    """The kinds to try, in the campaign's `task_order`; interleaved draws which comes first per hand-out, so
    side-by-side verdicts arrive from the start instead of after every grade (the other kind follows when
    one runs out)."""
    if campaign.task_order == TaskOrder.RELEVANCE_FIRST:
        return (RELEVANCE, SIDE_BY_SIDE)
    if campaign.task_order == TaskOrder.SIDE_BY_SIDE_FIRST or random.random() < 0.5:
        return (SIDE_BY_SIDE, RELEVANCE)
    return (RELEVANCE, SIDE_BY_SIDE)


def member_check(*, annotator, campaign: Campaign, member: bool | None = None) -> None:
    """Refuse an archived campaign, and an annotator who may not work on it (not open to all nor a member;
    `member` when the caller read it)."""
    campaign_writable_check(campaign=campaign)
    if campaign.open_to_all:
        return
    if not (campaign.members.filter(pk=annotator.pk).exists() if member is None else member):
        raise TaskError(TaskErrorCode.NOT_MEMBER, _("You are not a member of this campaign."))


def _lease_own(*, annotator, campaign: Campaign, now) -> Assignment | None:
    """The annotator's live lease in the campaign; else their last lease that ran out, renewed while its
    task has a slot: back where they were."""
    latest = (
        Assignment.objects.filter(campaign=campaign, annotator=annotator)
        .filter(
            Q(status=Assignment.Status.LEASED, expires_at__gt=now)
            | Q(status=Assignment.Status.EXPIRED, repeat=False)  # a repeat that ran out is dropped
        )
        .order_by(Case(When(status=Assignment.Status.LEASED, then=0), default=1), "-leased_at")
        .first()
    )
    if latest is None or latest.status == Assignment.Status.LEASED:
        if latest is not None:
            latest.campaign = campaign  # as the caller read it: the task's page reads it
        return latest
    kind, task_id = assignment_task(latest)
    task = kind.model.objects.select_for_update(skip_locked=True, no_key=True).filter(pk=task_id).first()
    if task is None or not slot_open(kind=kind, task=task, campaign=campaign):
        return None
    return _lease(kind=kind, annotator=annotator, task=task, campaign=campaign, assignment=latest)


def _task_lock_open(*, kind: TaskKind, annotator, campaign: Campaign):
    """Lock an open task from a random point of the campaign's shuffle order that still has a slot once
    locked; None when the annotator has none left."""
    for _attempt in range(LEASE_ATTEMPTS):
        now = timezone.now()
        start = random.randrange(SHUFFLE_KEYS)
        candidates = task_candidates(kind=kind, campaign=campaign, annotator=annotator, now=now, start=start)
        for tasks in candidates:
            task = tasks.select_for_update(skip_locked=True, no_key=True, of=("self",)).first()
            if task is not None:
                break
        if task is None:
            return None
        # The candidate query's snapshot predates the lock; PostgreSQL hands back the row as now committed.
        if slot_open(kind=kind, task=task, campaign=campaign):
            return task
    return None


def _lease(
    *, kind: TaskKind, annotator, task, campaign: Campaign, assignment: Assignment | None = None
) -> Assignment:
    """Lease the locked task of `campaign` to the annotator, renewing `assignment` (their ran-out lease on
    it) if given; with the campaign, which the task's page reads."""
    now = timezone.now()
    if assignment is None:
        # A candidate may hold an expired lease of this annotator, renewed: one row per annotator and task.
        assignment = Assignment.objects.filter(
            annotator=annotator, repeat=False, **{kind.assignment_field: task}
        ).first()
    if assignment is None:
        assignment = Assignment(
            annotator=annotator, campaign_id=task.campaign_id, **{kind.assignment_field: task}
        )
        if kind.is_side_by_side:
            assignment.experimental_on_left = random.random() < 0.5
    if assignment.status != Assignment.Status.LEASED or assignment.pk is None:
        slots_change(task, +1)  # a lease not yet given back still holds its slot
    assignment.status = Assignment.Status.LEASED
    assignment.leased_at = now
    assignment.expires_at = now + timedelta(minutes=settings.TASK_LEASE_MINUTES)
    assignment.save()
    assignment.campaign = campaign
    return assignment


def _own_assignment(*, annotator, assignment: Assignment) -> Assignment:
    """The assignment with its campaign and task, if it is the annotator's; else NOT_ASSIGNED."""
    own = (
        Assignment.objects.filter(pk=assignment.pk, annotator=annotator)
        .select_related("campaign", "relevance_task", "side_by_side_task")
        .first()
    )
    if own is None:
        raise TaskError(TaskErrorCode.NOT_ASSIGNED, _("This task was not handed to you."))
    return own


@transaction.atomic
def task_skip(*, annotator, assignment: Assignment, reason: SkipReason | str) -> Assignment:
    """Give a leased task back with a reason; the annotator never gets it again, others may."""
    if reason not in SkipReason.values:
        raise TaskError(
            TaskErrorCode.INVALID_LABEL,
            _("unknown skip reason %(reason)r") % {"reason": reason},
            field="reason",
        )
    own = _own_assignment(annotator=annotator, assignment=assignment)
    campaign_writable_check(campaign=own.campaign)
    assignment = own
    task = assignment.relevance_task or assignment.side_by_side_task
    archived = task_lock(task=task)  # the lock order of every slot change: task, then assignment
    campaign_writable_check(campaign=assignment.campaign, archived=archived)  # as committed now
    assignment = Assignment.objects.select_for_update(no_key=True).get(pk=assignment.pk)
    if assignment.status != Assignment.Status.LEASED:
        raise TaskError(TaskErrorCode.NOT_LEASED, _("Only a task you are working on can be skipped."))
    if not assignment.repeat:  # a repeat holds no slot
        slots_change(task, -1)
    assignment.status = Assignment.Status.SKIPPED
    assignment.skip_reason = reason
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "skip_reason", "finished_at"])
    return assignment


@transaction.atomic
def skip_undo(*, annotator, assignment: Assignment) -> Assignment:
    """Take back a skip: the task is the annotator's again, leased anew, while it still has a slot (someone
    may have taken the one the skip gave back) and they may still work on the campaign."""
    own = _own_assignment(annotator=annotator, assignment=assignment)
    member_check(annotator=annotator, campaign=own.campaign)
    now = timezone.now()
    locked = _annotator_lock(annotator=annotator, campaign_id=own.campaign_id, now=now)
    campaign_writable_check(campaign=own.campaign, archived=locked.archived)
    if locked.excluded:
        raise TaskError(
            TaskErrorCode.EXCLUDED, _("Your labels in this campaign are no longer used; ask its manager.")
        )
    kind, task_pk = assignment_task(own)
    task = kind.model.objects.get(pk=task_pk)
    task_lock(task=task)  # the lock order of every slot change: task, then assignment
    assignment = Assignment.objects.select_for_update(no_key=True).get(pk=own.pk)
    if assignment.status != Assignment.Status.SKIPPED:
        raise TaskError(TaskErrorCode.SKIPPED, _("Only a skipped task can be taken back."))
    task.refresh_from_db(fields=["slots_spent"])  # as committed under the lock
    if not assignment.repeat and not slot_open(kind=kind, task=task, campaign=own.campaign):
        raise TaskError(
            TaskErrorCode.LEASE_EXPIRED_FULL,
            _("Others have answered this task since you skipped it: it needs no more answers."),
        )
    assignment.skip_reason, assignment.finished_at = "", None
    if assignment.repeat:  # a repeat holds no slot
        assignment.status = Assignment.Status.LEASED
        assignment.leased_at, assignment.expires_at = (
            now,
            now + timedelta(minutes=settings.TASK_LEASE_MINUTES),
        )
        assignment.save()
        return assignment
    return _lease(kind=kind, annotator=annotator, task=task, campaign=own.campaign, assignment=assignment)
