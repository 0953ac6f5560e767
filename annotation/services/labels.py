"""Submitting labels from the workbench (and the API): relevance grades and side-by-side verdicts.

A first label needs the annotator's lease on the task; a later one changes the label in place, unless the
task is leased to them again as a repeat: then the answer is a RepeatAnswer and their first label stays.
Every create and change leaves a LabelRevision. Time spent is measured on the server from the lease.
"""

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import (
    Assignment,
    GSBScale,
    Judgment,
    LabelRevision,
    Preference,
    RelevanceTask,
    RepeatAnswer,
    SideBySideTask,
    Verdict,
)
from annotation.selectors.rankings import side_by_side_lists
from annotation.selectors.task_page import label_version, preference_side
from annotation.services import round_trip
from annotation.services.assignment import member_check, repeat_lease_live
from annotation.services.leases import lease_claim, lease_finish
from annotation.services.locks import task_lock
from annotation.services.read_only import campaign_writable_check
from annotation.task_kinds import RELEVANCE, SIDE_BY_SIDE, TaskKind, task_kind

SIDES = ("left", "same", "right")


def field_needed(field: str) -> TaskError:
    """The error of a label without the field its task's kind needs."""
    return TaskError(TaskErrorCode.INVALID_LABEL, _("is required for this kind of task."), field=field)


def _refuse(**fields: object) -> None:
    """Refuse the first field given (not None) that the task's kind does not take."""
    for field, value in fields.items():
        if value is not None:
            raise TaskError(TaskErrorCode.INVALID_LABEL, _("is not for this kind of task."), field=field)


def label_submit(
    *,
    annotator,
    assignment: Assignment,
    grade: int | None = None,
    verdict: str | None = None,
    strength: int | None = None,
    intents: list[str] | None = None,
    duplicates: list | None = None,
    comment: str = "",
    seconds_spent: float | None = None,
    version: str | None = None,
) -> tuple[Judgment | Preference, bool]:
    """Label the assignment's task, whichever its kind: a grade and, where the query has intents, the ones
    the document serves, for a relevance task; a verdict (the side the annotator found better: left, same
    or right), on the 5-point scale a strength, and near-duplicates marked in the lists for a side-by-side
    task. A field of the other kind is refused. Returns the label and whether it was created (else
    changed); `judgment_submit` or `preference_submit` writes it, in its own transaction."""
    task = assignment.task
    if isinstance(task, RelevanceTask):
        if grade is None:
            raise field_needed("grade")
        _refuse(verdict=verdict, strength=strength, duplicates=duplicates)
        return judgment_submit(
            annotator=annotator,
            task=task,
            grade=grade,
            intents=intents,
            comment=comment,
            seconds_spent=seconds_spent,
            version=version,
        )
    if verdict is None:
        raise field_needed("verdict")
    _refuse(grade=grade, intents=intents)
    return preference_submit(
        annotator=annotator,
        task=task,
        side=verdict,
        strength=strength,
        duplicates=duplicates,
        comment=comment,
        seconds_spent=seconds_spent,
        version=version,
    )


def _invalid(message: str, field: str) -> TaskError:
    return TaskError(TaskErrorCode.INVALID_LABEL, message, field=field)


def intents_checked(task: RelevanceTask, intents: list[str] | None) -> list[str] | None:
    """The intents ticked, in the query's order, each once; None when not asked."""
    if intents is None:
        return None
    known = [intent["id"] for intent in task.query.intents]
    if not known:
        raise _invalid("this query has no intents to tick", "intents")
    if isinstance(intents, str) or not all(isinstance(intent, str) for intent in intents):
        raise _invalid("must be a list of the query's intent ids", "intents")
    unknown = next((intent for intent in intents if intent not in known), None)
    if unknown is not None:
        raise _invalid(f"{unknown!r} is not an intent of this query ({', '.join(known)})", "intents")
    ticked = set(intents)
    return [intent for intent in known if intent in ticked]


def duplicates_checked(duplicates: list | None) -> list[list]:
    """Near-duplicate marks as shown, `[side, position, same as position]`: the side left or right, the
    same-as position above the marked one, each result marked at most once. Sorted; [] for none."""
    marks: dict[tuple[str, int], list] = {}
    for mark in duplicates or []:
        if not isinstance(mark, list | tuple) or len(mark) != 3:
            raise _invalid("each mark is [side, position, same as position]", "duplicates")
        side, position, same_as = mark
        if side not in ("left", "right"):
            raise _invalid(f"a mark's side is left or right, not {side!r}", "duplicates")
        if not all(type(value) is int for value in (position, same_as)) or not 1 <= same_as < position:
            raise _invalid("a result can only be the same as an earlier one (#3 same as #2)", "duplicates")
        if (side, position) in marks:
            raise _invalid(f"{side} #{position} is marked twice: one earlier result each", "duplicates")
        marks[side, position] = [side, position, same_as]
    return [marks[key] for key in sorted(marks)]


def _duplicates_fit(task: SideBySideTask, marks: list[list], experimental_on_left: bool) -> None:
    """Each mark within the list shown on its side (refused after the write: the transaction undoes it)."""
    if not marks:
        return
    experimental, online = side_by_side_lists(task=task, depth=task.campaign.gsb_depth)
    left, right = (experimental, online) if experimental_on_left else (online, experimental)
    shown = {"left": len(left), "right": len(right)}
    for side, position, _same in marks:
        if position > shown[side]:
            raise _invalid(f"the {side} list shows {shown[side]} results, not #{position}", "duplicates")


def _seconds_spent(assignment: Assignment, reported: float | None) -> float:
    """Lease to now; a client's own measure (e.g. time the page was visible) may only shorten it."""
    measured = (timezone.now() - assignment.leased_at).total_seconds()
    if reported is None:
        return measured
    if reported < 0:
        raise TaskError(TaskErrorCode.INVALID_LABEL, _("must not be negative"), field="seconds_spent")
    return min(reported, measured)


def judgment_submit(
    *,
    annotator,
    task: RelevanceTask,
    grade: int,
    intents: list[str] | None = None,
    comment: str = "",
    seconds_spent: float | None = None,
    version: str | None = None,
) -> tuple[Judgment, bool]:
    """Grade a relevance task, and tick the query's intents the document serves (`intents_checked`);
    returns the judgment and whether it was created (else changed). `version` is what the page showed
    (`label_version`): when the label changed since, nothing is written. The common case is one statement
    (`_first_label_store`); any other runs in a transaction."""
    campaign_writable_check(campaign=task.campaign)
    values = task.campaign.grade_values
    if isinstance(grade, bool) or grade not in values:
        raise TaskError(
            TaskErrorCode.GRADE_NOT_ON_SCALE,
            _("%(grade)r is not on this campaign's scale (%(values)s)")
            % {"grade": grade, "values": ", ".join(map(str, values))},
            field="grade",
        )
    intents = intents_checked(task, intents)
    stored = _first_label_store(
        kind=RELEVANCE,
        task=task,
        annotator=annotator,
        version=version,
        reported=seconds_spent,
        answer={"grade": grade, "intents": intents},
        comment=comment,
    )
    if stored is not None and stored.repeat:
        return Judgment(task=task, annotator=annotator, grade=grade, comment=comment), True
    if stored is not None:
        shown = Judgment(task=task, annotator=annotator, grade=grade, intents=intents, comment=comment)
        shown.pk, shown.seconds_spent = stored.id, stored.seconds_spent
        return shown, True
    with transaction.atomic():  # the general path
        # A change too, after a manager removed them.
        member_check(annotator=annotator, campaign=task.campaign)
        archived = task_lock(task=task)  # first: a double submit must see the label its twin just wrote
        campaign_writable_check(campaign=task.campaign, archived=archived)  # as committed now
        judgment = Judgment.objects.filter(task=task, annotator=annotator).first()
        repeat = judgment and repeat_lease_live(annotator=annotator, task=task)
        if repeat:
            _repeat_answer(repeat, seconds_spent, grade=grade)
            return Judgment(task=task, annotator=annotator, grade=grade, comment=comment), True
        _version_check(judgment, version, lambda label: str(label.grade))
        if judgment is not None:
            old = judgment.grade
            if (old, judgment.comment, judgment.intents) != (grade, comment, intents):
                judgment.grade, judgment.comment, judgment.intents = grade, comment, intents
                judgment.save(update_fields=["grade", "comment", "intents", "updated_at"])
                if old != grade:
                    _revision(annotator, task, LabelRevision.Kind.JUDGMENT, str(old), str(grade))
            return judgment, False
        assignment = lease_claim(annotator=annotator, task=task)
        judgment = Judgment.objects.create(
            campaign_id=task.campaign_id,
            task=task,
            annotator=annotator,
            grade=grade,
            intents=intents,
            comment=comment,
            seconds_spent=_seconds_spent(assignment, seconds_spent),
        )
        lease_finish(assignment=assignment, task=task)
        _revision(annotator, task, LabelRevision.Kind.JUDGMENT, "", str(grade))
        return judgment, True


def _first_label_store(
    *, kind: TaskKind, task, annotator, version: str | None, reported: float | None, **label
) -> round_trip.StoredLabel | None:
    """The common case in one statement where the database can (`round_trip`): a first label on a live
    lease, or the answer to a live repeat. None when it does not apply or did not hold (nothing written);
    then the general path decides. The statement is atomic on its own: run outside a transaction, it saves
    the BEGIN and COMMIT round trips, about a tenth of a label's CPU (docs/performance.md)."""
    if not round_trip.enabled() or version not in (None, label_version(None)):
        return None
    if reported is not None and reported < 0:
        return None  # refused by the general path, with its reason
    return round_trip.first_label_store(
        kind=kind, task=task, annotator=annotator, now=timezone.now(), reported=reported, **label
    )


def _repeat_answer(repeat: Assignment, seconds_spent: float | None, **answer) -> None:
    """Keep the answer to a repeat apart from the labels, and close the repeat's lease."""
    RepeatAnswer.objects.create(
        assignment=repeat, seconds_spent=_seconds_spent(repeat, seconds_spent), **answer
    )
    repeat.status, repeat.finished_at = Assignment.Status.SUBMITTED, timezone.now()
    repeat.save(update_fields=["status", "finished_at"])


def _verdict(side: str, experimental_on_left: bool) -> Verdict:
    if side == "same":
        return Verdict.SAME
    return Verdict.GOOD if (side == "left") == experimental_on_left else Verdict.BAD


def _revision_value(preference: Preference) -> str:
    """e.g. "good", or "good:2" (much better) on the 5-point scale."""
    strength = preference.strength
    return preference.verdict if strength is None else f"{preference.verdict}:{strength}"


def preference_submit(
    *,
    annotator,
    task: SideBySideTask,
    side: str,
    strength: int | None = None,
    duplicates: list | None = None,
    comment: str = "",
    seconds_spent: float | None = None,
    version: str | None = None,
) -> tuple[Preference, bool]:
    """Record which side the annotator found better, stored relative to the experimental model, and the
    near-duplicates they marked in the lists, as shown (`duplicates_checked`).

    `strength` (1 slightly, 2 much) is required on the 5-point scale unless the lists are about the same,
    and refused otherwise. Returns the preference and whether it was created (else changed). As with
    `judgment_submit`, the common case is one statement; marks are checked against the lists after it, in
    its transaction.
    """
    campaign_writable_check(campaign=task.campaign)
    if side not in SIDES:
        raise TaskError(
            TaskErrorCode.INVALID_LABEL,
            _("side must be one of %(sides)s") % {"sides": ", ".join(SIDES)},
            field="side",
        )
    if task.campaign.gsb_scale == GSBScale.FIVE_POINT and side != "same":
        if strength not in (1, 2):
            raise TaskError(
                TaskErrorCode.INVALID_LABEL, _("choose 1 (slightly) or 2 (much) better"), field="strength"
            )
    elif strength is not None:
        raise TaskError(TaskErrorCode.INVALID_LABEL, _("no strength on this choice"), field="strength")
    marks = duplicates_checked(duplicates)
    with transaction.atomic() if marks else nullcontext():
        stored = _first_label_store(
            kind=SIDE_BY_SIDE,
            task=task,
            annotator=annotator,
            version=version,
            reported=seconds_spent,
            answer={"side": side, "strength": strength, "duplicates": marks},
            comment=comment,
        )
        if stored is not None and not stored.repeat:
            _duplicates_fit(task, marks, stored.experimental_on_left)
    if stored is not None and stored.repeat:
        shown = Preference(
            task=task, annotator=annotator, verdict=stored.verdict, strength=strength, comment=comment
        )
        return shown, True
    if stored is not None:
        shown = Preference(
            task=task,
            annotator=annotator,
            experimental_on_left=stored.experimental_on_left,
            verdict=stored.verdict,
            strength=strength,
            duplicates=marks,
            comment=comment,
        )
        shown.pk, shown.seconds_spent = stored.id, stored.seconds_spent
        return shown, True
    with transaction.atomic():  # the general path
        member_check(annotator=annotator, campaign=task.campaign)
        campaign_writable_check(campaign=task.campaign, archived=task_lock(task=task))
        preference = Preference.objects.filter(task=task, annotator=annotator).first()
        repeat = preference and repeat_lease_live(annotator=annotator, task=task)
        if repeat:
            verdict = _verdict(side, bool(repeat.experimental_on_left))
            _repeat_answer(repeat, seconds_spent, verdict=verdict, strength=strength)
            shown = Preference(
                task=task, annotator=annotator, verdict=verdict, strength=strength, comment=comment
            )
            return shown, True
        _version_check(
            preference,
            version,
            lambda label: preference_side(
                verdict=label.verdict, experimental_on_left=label.experimental_on_left
            ),
        )
        if preference is not None:
            _duplicates_fit(task, marks, preference.experimental_on_left)
            old, old_rest = _revision_value(preference), (preference.comment, preference.duplicates)
            preference.verdict = _verdict(side, preference.experimental_on_left)
            preference.strength, preference.comment, preference.duplicates = strength, comment, marks
            if (old, old_rest) != (_revision_value(preference), (comment, marks)):
                preference.save(update_fields=["verdict", "strength", "comment", "duplicates", "updated_at"])
                if old != _revision_value(preference):
                    _revision(
                        annotator, task, LabelRevision.Kind.PREFERENCE, old, _revision_value(preference)
                    )
            return preference, False
        assignment = lease_claim(annotator=annotator, task=task)
        _duplicates_fit(task, marks, bool(assignment.experimental_on_left))
        preference = Preference.objects.create(
            campaign_id=task.campaign_id,
            task=task,
            annotator=annotator,
            experimental_on_left=bool(assignment.experimental_on_left),  # set on every side-by-side lease
            verdict=_verdict(side, bool(assignment.experimental_on_left)),
            strength=strength,
            duplicates=marks,
            comment=comment,
            seconds_spent=_seconds_spent(assignment, seconds_spent),
        )
        lease_finish(assignment=assignment, task=task)
        _revision(annotator, task, LabelRevision.Kind.PREFERENCE, "", _revision_value(preference))
        return preference, True


def _version_check(label, version: str | None, shown: Callable[[Any], str]) -> None:
    """Refuse a submit from a page rendered before the label last changed (another tab answered since);
    `shown(label)` says the label as the page would."""
    if version is None or version == label_version(label):
        return
    current = (
        f"your answer now is {shown(label)}" if label is not None else "your answer there was taken back"
    )
    raise TaskError(
        TaskErrorCode.STALE,
        f"This task was answered in another tab or window since this page was shown: {current}. "
        "Nothing was changed.",
        field="version",
    )


def _revision(annotator, task, kind: LabelRevision.Kind, old: str, new: str) -> None:
    LabelRevision.objects.create(
        kind=kind,
        changed_by=annotator,
        old_value=old,
        new_value=new,
        **{task_kind(task).assignment_field: task},
    )
