"""Bulk writes: the keys `rows_insert_pks` hands back are those of the rows it wrote, on either database."""

from annotation.models import Document
from plumbing.bulk import rows_insert_pks


def test_the_keys_returned_are_the_rows_written(campaign):
    before = set(Document.objects.values_list("pk", flat=True))
    rows = [(campaign.pk, f"bulk-{i}", f"title {i}", "", "") for i in range(6000)]  # two batches on SQLite
    fields = ["campaign_id", "external_id", "title", "url", "body"]
    pks = rows_insert_pks(Document, fields, iter(rows), count=len(rows))
    assert len(pks) == len(set(pks)) == len(rows)
    assert not before & set(pks)
    stored = dict(Document.objects.filter(pk__in=pks).values_list("pk", "external_id"))
    assert [stored[pk] for pk in pks] == [row[1] for row in rows]
    # The sequence moved past the reserved keys: the next row written the ORM's way gets a new one.
    assert Document.objects.create(campaign=campaign, external_id="after").pk not in set(pks) | before


def test_no_rows_no_keys(campaign):
    assert rows_insert_pks(Document, ["campaign_id", "external_id"], [], count=0) == []
