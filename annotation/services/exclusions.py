"""Leaving an annotator's labels out of a campaign's aggregation, decision and reports, and taking them back
in; every step keeps who did it, when and why. The labels themselves are never touched, but the slots they
held are given back, so that other annotators label those tasks again (and taken again on reinstating: a
task may then hold more labels than its overlap). An excluded annotator is handed no more of its tasks."""

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import InputError, InputErrorCode
from annotation.models import AnnotatorExclusion, Assignment, Campaign
from annotation.services.leases import leases_end
from annotation.services.read_only import campaign_writable_lock
from annotation.task_kinds import TASK_KINDS

REASON_MAX = 5000


@transaction.atomic
def annotator_exclude(*, campaign: Campaign, username: str, by, reason: str) -> AnnotatorExclusion:
    campaign_writable_lock(campaign=campaign, exclusive=True)  # its leases and slots change
    reason = (reason or "").strip()
    if not reason:
        raise InputError(InputErrorCode.MISSING_FIELD, _("say why these labels are left out"), field="reason")
    if len(reason) > REASON_MAX:
        message = _("is longer than %(count)d characters") % {"count": REASON_MAX}
        raise InputError(InputErrorCode.INVALID_VALUE, message, field="reason")
    annotator = get_user_model().objects.filter(username=username).first()
    if annotator is None:
        raise InputError(
            InputErrorCode.INVALID_VALUE,
            _("no person named %(name)s") % {"name": repr(username)},
            field="annotator",
        )
    try:
        with transaction.atomic():  # a savepoint: a second manager may exclude them at the same moment
            exclusion = AnnotatorExclusion.objects.create(
                campaign=campaign, annotator=annotator, reason=reason, excluded_by=by
            )
    except IntegrityError:
        raise InputError(
            InputErrorCode.ALREADY_EXISTS, f"{username}'s labels are already left out", field="annotator"
        ) from None
    leases = Assignment.objects.filter(
        campaign=campaign, annotator=annotator, status=Assignment.Status.LEASED
    )
    leases_end(leases=leases, now=timezone.now())  # their leases' slots go back too
    _slots_move(campaign=campaign, annotator=annotator, by=-1)
    return exclusion


def _slots_move(*, campaign: Campaign, annotator, by: int) -> None:
    """Give back (-1) or take again (+1) the slot each of the annotator's labels holds on its task."""
    for kind in TASK_KINDS:  # their labels found by the label's own campaign, not by joining every task
        labelled = kind.label_model.objects.filter(campaign=campaign, annotator=annotator).values_list(
            "task", flat=True
        )
        kind.model.objects.filter(pk__in=labelled).update(slots_spent=F("slots_spent") + by)


@transaction.atomic
def annotator_reinstate(*, campaign: Campaign, username: str, by) -> AnnotatorExclusion:
    campaign_writable_lock(campaign=campaign, exclusive=True)
    exclusion = (
        AnnotatorExclusion.objects.select_for_update()
        .filter(campaign=campaign, annotator__username=username, reinstated_at__isnull=True)
        .first()
    )
    if exclusion is None:
        message = _("%(name)s's labels are not left out") % {"name": username}
        raise InputError(InputErrorCode.INVALID_VALUE, message, field="annotator")
    exclusion.reinstated_by, exclusion.reinstated_at = by, timezone.now()
    exclusion.save(update_fields=["reinstated_by", "reinstated_at"])
    _slots_move(campaign=campaign, annotator=exclusion.annotator, by=+1)
    return exclusion


@transaction.atomic
def exclusions_confirm(*, campaign: Campaign) -> int:
    """The exclusions in force are settled: the overview stops showing the decision without them."""
    campaign_writable_lock(campaign=campaign)
    return AnnotatorExclusion.objects.filter(
        campaign=campaign, reinstated_at__isnull=True, confirmed_at__isnull=True
    ).update(confirmed_at=timezone.now())
