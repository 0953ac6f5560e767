"""Row locks, taken in one order by every transaction, so that no two wait on each other (a deadlock):

    campaign → person (auth_user) → task → assignment → label, adjudication, review lease

A transaction may skip a level but never goes back up one. Two rules make the order hold whatever the foreign
keys do (an INSERT or UPDATE of a row that refers to another takes FOR KEY SHARE on the row referred to):

- Rows below the campaign are locked FOR NO KEY UPDATE (`select_for_update(no_key=True)`), never FOR UPDATE:
  a foreign key's FOR KEY SHARE never waits on them, so a label naming its annotator does not wait on that
  annotator's hand-out, nor a lease naming its task on the task's label.
- The campaign row is taken first. The annotators' and reviewers' work (a hand-out, a label, a skip, a final
  label) holds it FOR KEY SHARE, which they share. A manager's write holds it too (`campaign_lock`, through
  `read_only.campaign_writable_lock`): FOR NO KEY UPDATE, which waits for no label or lease, unless the
  write changes the tasks' slots, leases or labels (settings, exclusions, imported labels) or archives the
  campaign: then FOR UPDATE (`exclusive`), so it waits for the work in flight and the work that follows
  waits for it (and reads the campaign archived: `read_only.py`). Without that,
  a settings change holding the campaign and recounting every task's slots met a hand-out holding a task
  and waiting on the campaign for its lease's foreign key, and a recount missed leases not yet committed.

SKIP LOCKED reads (a task to hand out, leases to give back) never wait, so they may take rows of any level.
A new campaign's import locks its CampaignImport row, then writes only rows nobody else sees yet.
SQLite has no row locks: its transactions are IMMEDIATE, one writer at a time.
"""

from django.db import connection

from annotation.models import Campaign
from annotation.task_kinds import task_kind

_TASK_LOCK = """
SELECT c.archived_at IS NOT NULL FROM annotation_campaign c JOIN {task_table} t ON t.campaign_id = c.id
WHERE t.id = %s {lock}
"""


def campaign_lock(*, campaign: Campaign, exclusive: bool) -> Campaign:
    """The campaign's row, read again under a lock held to the end of the transaction: FOR NO KEY UPDATE, or
    with `exclusive` FOR UPDATE (the hand-outs and labels in flight end first, those that follow wait)."""
    return Campaign.objects.select_for_update(no_key=not exclusive).get(pk=campaign.pk)


def task_lock(*, task) -> bool:
    """Serialize everything that spends a task's slots or sets its final label: its campaign shared, then
    the task (the lock clauses' order is the order PostgreSQL takes them in). Returns whether the campaign is
    archived as committed now, for the caller's `read_only.campaign_writable_check`: an archiving waits for
    the work in flight, and this waits for an archiving under way, then reads its outcome."""
    lock = "FOR KEY SHARE OF c FOR NO KEY UPDATE OF t" if connection.features.has_select_for_update else ""
    table = task_kind(task).model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(_TASK_LOCK.format(task_table=table, lock=lock), [task.pk])
        return bool(cursor.fetchone()[0])
