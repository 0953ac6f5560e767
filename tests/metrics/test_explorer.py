"""The query explorer: every query with its measures, delta, verdicts, disagreement and review state;
search, filters, sorting and paging."""

import pytest
from django.urls import reverse

from annotation.bundle import JudgmentRow, PreferenceRow
from annotation.services.label_import import labels_import
from metrics.selectors.explorer import ExplorerFilter, Lists, query_explorer
from tests.factories import worked_campaign


@pytest.fixture
def worked(db):
    return worked_campaign()


def rows_by_id(view):
    return {row.external_id: row for row in view.rows}


def test_rows_hold_the_worked_examples_numbers(worked):
    view = query_explorer(campaign=worked, measure="nDCG@6")
    assert (view.model, view.measure, view.total) == ("exp", "nDCG@6", 4)
    q1, q2, q3 = (rows_by_id(view)[q] for q in ("q1", "q2", "q3"))
    assert q1.online == pytest.approx(0.9608, abs=1e-4) and q1.experimental == pytest.approx(1.0)
    assert q1.delta == pytest.approx(1 - 0.9608, abs=1e-4) and (q1.good, q1.same, q1.bad) == (1, 0, 0)
    assert q2.identical and (q2.good, q2.same, q2.bad) == (0, 1, 0) and q2.verdict == "same"
    assert q3.verdict == "bad" and q3.segment == "tail"
    assert [row.external_id for row in view.won] == ["q1"] and view.lost == []
    assert all(row.disagreement == 0 and row.open_disputes == 0 for row in view.rows)


def test_disagreement_and_review_state(worked):
    labels_import(
        campaign=worked,
        judgments=[JudgmentRow(0, "other", "q3", "x", 3)],
        preferences=[PreferenceRow(0, "other", "q4", "exp", "good")],
        source="test",
    )
    rows = rows_by_id(query_explorer(campaign=worked))
    assert rows["q3"].disagreement == pytest.approx(1 / 4)  # x disputed; y, z and the verdict agree
    assert rows["q3"].open_disputes == 1
    assert rows["q4"].disagreement == pytest.approx(1 / 4) and rows["q4"].verdict == "same"  # good vs bad


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (ExplorerFilter(search="THR"), ["q3"]),
        (ExplorerFilter(search="q4"), ["q4"]),
        (ExplorerFilter(segment="head"), ["q1", "q2"]),
        (ExplorerFilter(verdict="bad"), ["q3", "q4"]),
        (ExplorerFilter(lists=Lists.IDENTICAL), ["q2"]),
        (ExplorerFilter(lists=Lists.CHANGED, sort="delta", descending=True), ["q1", "q3", "q4"]),
        (ExplorerFilter(disputed=True), []),
        (ExplorerFilter(sort="segment", descending=True), ["q3", "q4", "q1", "q2"]),
    ],
)
def test_search_filter_and_sort(worked, filters, expected):
    assert [row.external_id for row in query_explorer(campaign=worked, filters=filters).rows] == expected


def test_the_page_filters_sorts_and_links(client, worked, make_user):
    client.force_login(make_user("rev", "reviewer"))
    url = reverse("metrics:query_explorer", args=[worked.pk])
    page = client.get(
        url, {"segment": "tail", "sort": "bad", "order": "desc", "verdict": "nonsense"}
    ).content.decode()
    assert "Queries 1–2 of 2" in page and "(of 4 in the campaign)" in page
    assert "verdict: Select a valid choice" in page  # ignored, and said so
    assert (
        reverse("metrics:query_drilldown", args=[worked.pk, worked.queries.get(external_id="q3").pk]) in page
    )
    assert 'aria-sort="descending"' in page and "sort=bad&amp;order=asc" in page
    assert client.get(url, {"page": "99"}).status_code == 200
    client.force_login(make_user("ann2", "annotator"))
    assert client.get(url).status_code == 403


def test_a_campaign_with_no_labels_yet(client, campaign, make_user):
    client.force_login(make_user("rev", "reviewer"))
    page = client.get(reverse("metrics:query_explorer", args=[campaign.pk])).content.decode()
    assert "Queries 1–2 of 2" in page and 'id="won-lost"' not in page
