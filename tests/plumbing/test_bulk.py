"""Bulk writes: the keys `rows_insert_pks` and `columns_insert_pks` hand back are those of the rows they
wrote, and text columns are stored as given, on either database."""

import numpy as np

from annotation.models import Document
from plumbing.bulk import columns_insert, columns_insert_pks, rows_insert_pks


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


# Text a binary COPY must carry byte for byte: several bytes a character, escapes of the text format, the
# longest id a document may have, nothing at all.
AWKWARD = ["文档-一", "back\\slash", "tab\there", "line\nbreak", "quote'\"", "", "x" * 200, "é"]


def test_text_columns_are_stored_as_given_in_row_order(campaign):
    size = len(AWKWARD)
    titles = [f"标题 {i}" for i in range(size)]
    pks = columns_insert_pks(
        Document,
        {
            "campaign_id": np.full(size, campaign.pk),
            "external_id": AWKWARD,
            "title": titles,
            "url": [""] * size,
            "body": AWKWARD[::-1],
        },
    )
    assert len(set(pks)) == size
    stored = {
        pk: (external_id, title, body)
        for pk, external_id, title, body in Document.objects.filter(pk__in=pks).values_list(
            "pk", "external_id", "title", "body"
        )
    }
    assert [stored[pk] for pk in pks] == list(zip(AWKWARD, titles, AWKWARD[::-1], strict=True))


def test_columns_go_in_chunks(campaign):
    size = 7
    columns_insert(
        Document,
        {
            "campaign_id": np.full(size, campaign.pk),
            "external_id": [f"chunked-{i}" for i in range(size)],
            "title": AWKWARD[:size],
            "url": [""] * size,
            "body": [""] * size,
        },
        chunk=3,
    )
    stored = dict(
        Document.objects.filter(external_id__startswith="chunked-").values_list("external_id", "title")
    )
    assert stored == {f"chunked-{i}": AWKWARD[i] for i in range(size)}


def test_no_columns_rows_no_keys(campaign):
    empty = {
        "campaign_id": np.zeros(0, dtype=np.int64),
        "external_id": [],
        "title": [],
        "url": [],
        "body": [],
    }
    assert columns_insert_pks(Document, empty) == []
