"""An archived campaign is read-only. Every service that writes to a campaign calls
`campaign_writable_check` first, so that each surface refuses it alike: the API answers 409 `archived`, a
page shows the message, a command exits with it; nothing is written. Only `campaign_archive` (archiving and
restoring) passes.

Archiving locks the campaign's row FOR UPDATE, so it waits for every write under way and every write that
follows waits for it. Labels, skips, hand-outs and final labels check the campaign as their request read it,
then again as their lock on its row (FOR KEY SHARE: `locks.task_lock`, the hand-out's annotator lock, the
first label's statement) reads it; the manager's writes lock the row first (`campaign_writable_lock`). So a
write either commits before the archiving or is refused.
"""

from django.utils.translation import gettext as _

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Campaign
from annotation.services.locks import campaign_lock


def campaign_writable_check(*, campaign: Campaign, archived: bool | None = None) -> None:
    """Refuse any write to an archived campaign (`TaskErrorCode.ARCHIVED`): as `campaign` was read, or as
    `archived` says, when the caller read that again under its lock."""
    if (campaign.archived_at is not None) if archived is None else archived:
        raise TaskError(
            TaskErrorCode.ARCHIVED,
            _("This campaign is archived: nothing in it changes until a manager restores it."),
        )


def campaign_writable_lock(*, campaign: Campaign, exclusive: bool = False) -> Campaign:
    """The campaign's row locked for the rest of the transaction and read again, then checked. The lock
    (FOR NO KEY UPDATE) waits only for other writes to the row itself, never for a label or a lease, whose
    rows merely refer to it; `exclusive` (FOR UPDATE) waits for them too and holds back those that follow,
    for a write that changes the tasks' slots, leases or labels (`services/locks.py`)."""
    locked = campaign_lock(campaign=campaign, exclusive=exclusive)
    campaign_writable_check(campaign=locked)
    return locked
