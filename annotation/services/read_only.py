"""An archived campaign is read-only. Every service that writes to a campaign calls
`campaign_writable_check` first, so that each surface refuses it alike: the API answers 409 `archived`, a
page shows the message, a command exits with it; nothing is written. Only `campaign_archive` (archiving and
restoring) passes.

Labels, skips, hand-outs and final labels check the campaign as their request read it (their hot path holds
the campaign's row FOR KEY SHARE only, which archiving does not wait for); the manager's writes lock the row
first (`campaign_writable_lock`), so that archiving waits for one under way, and one that starts after it
sees it.
"""

from django.utils.translation import gettext as _

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Campaign
from annotation.services.locks import campaign_lock


def campaign_writable_check(*, campaign: Campaign) -> None:
    """Refuse any write to an archived campaign (`TaskErrorCode.ARCHIVED`)."""
    if campaign.archived_at is not None:
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
