"""Interaction logs in: the command line's import, its checks, and what it stores."""

import gzip
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.bundle.interactions import InteractionLogReader
from annotation.bundle.reading import text_lines
from annotation.errors import InputError
from annotation.models import Document, Impression, InteractionLog
from annotation.services.interactions import interaction_log_import
from tests.factories import peak_memory

pytestmark = pytest.mark.django_db


def line(**fields) -> dict:
    return (
        {"query": "q1", "model": "online", "request": "r1", "position": 1, "document": "d1"}
        | {"clicked": False}
        | fields
    )


LOG = [
    line(session="s1", clicked=True, dwell=30.5),
    line(session="s1", position=2, document="d2"),
    line(session="s1", position=3, document="d3", clicked=True, cart=True, purchase=True, rating=5),
    line(session="s1", request="r2", model="exp", query="q2", document="d6"),
    line(session="s2", request=7, model="exp", query="q2", document="new-doc", clicked=True),
]


def write(path, rows, *, zipped=False) -> str:
    text = "".join(json.dumps(row) + "\n" if isinstance(row, dict) else row for row in rows)
    if zipped:
        with gzip.open(path, "wt") as file:
            file.write(text)
    else:
        path.write_text(text)
    return str(path)


@pytest.mark.parametrize("zipped", [False, True])
def test_a_log_imports_with_every_field(campaign, tmp_path, capsys, zipped):
    path = write(tmp_path / "log.jsonl", LOG, zipped=zipped)
    call_command("import_interactions", str(campaign.pk), path)
    assert "imported 5 impressions (3 lists, 3 clicks); 1 documents added" in capsys.readouterr().out

    log = InteractionLog.objects.get()
    assert (log.campaign, log.impressions, log.requests, log.clicks, log.sessions) == (
        campaign,
        5,
        3,
        3,
        True,
    )
    rows = list(
        Impression.objects.order_by("request", "position").values_list(
            "log",
            "query__external_id",
            "model__name",
            "document__external_id",
            "request",
            "position",
            "clicked",
            "dwell",
            "cart",
            "purchase",
            "rating",
        )
    )
    assert rows == [
        (log.pk, "q1", "online", "d1", 0, 1, True, 30.5, False, False, None),
        (log.pk, "q1", "online", "d2", 0, 2, False, None, False, False, None),
        (log.pk, "q1", "online", "d3", 0, 3, True, None, True, True, 5.0),
        (log.pk, "q2", "exp", "d6", 1, 1, False, None, False, False, None),
        (log.pk, "q2", "exp", "new-doc", 2, 1, True, None, False, False, None),
    ]
    sessions = list(Impression.objects.order_by("request", "position").values_list("session", flat=True))
    assert sessions[0] == sessions[1] == sessions[2] == sessions[3] != sessions[4]
    assert Document.objects.get(campaign=campaign, external_id="new-doc").title == ""


def test_spaces_around_a_line_and_integer_ids_are_read(campaign, tmp_path):
    path = write(
        tmp_path / "log.jsonl", ["  " + json.dumps(line(request=5, query="q1", document="d1")) + "  \n"]
    )
    interaction_log_import(campaign=campaign, lines=text_lines(path, "log.jsonl"), source="log.jsonl")
    assert Impression.objects.get().document.external_id == "d1"


def test_a_second_log_adds_to_the_first(campaign, tmp_path):
    path = write(tmp_path / "log.jsonl", LOG[:3])
    for _ in range(2):
        interaction_log_import(campaign=campaign, lines=text_lines(path, "log.jsonl"), source="log.jsonl")
    assert Impression.objects.filter(campaign=campaign).count() == 6
    assert InteractionLog.objects.filter(campaign=campaign).count() == 2


BAD_LINES = [
    ('{"query": "q1",', 1, "", "malformed JSON"),
    ('{"dwell": NaN}', 1, "", "NaN is not a number JSON allows"),
    (json.dumps(line(request="r3", dwell=1)).replace(": 1}", ": 1e999}") + "\n", 1, "dwell", "finite"),
    ("[" * 50_000, 1, "", "nested too deeply"),
    ([], 1, "(line)", "must be an object"),
    (line(query="nope"), 1, "query", "'nope' is not one of the campaign's queries"),
    (line(model="nope"), 1, "model", "'nope' is not one of the campaign's models"),
    (line(clicks=True), 1, "clicks", "is not a field of a log line"),
    (line(clicked=1), 1, "clicked", "must be a boolean, not int"),
    (line(position=0), 1, "position", "must be 1 or more"),
    (line(position=1.5), 1, "position", "must be an integer"),
    (line(dwell=-1), 1, "dwell", "must be seconds"),
    (line(rating="good"), 1, "rating", "must be an integer or a number"),
    (line(request=""), 1, "request", "must not be empty"),
    (line(document="d\u0000"), 1, "document", "NUL"),
    (line(document="x" * 201), 1, "document", "longer than 200"),
]


@pytest.mark.parametrize(("bad", "number", "field", "message"), BAD_LINES, ids=[bad[3] for bad in BAD_LINES])
def test_a_bad_line_is_named_and_nothing_is_written(campaign, tmp_path, bad, number, field, message):
    documents = Document.objects.count()
    before = [line(clicked=True), line(request="r2", model="exp", query="q2", document="d6")]
    path = write(tmp_path / "log.jsonl", [*before, bad if isinstance(bad, (dict, str)) else "[]\n"])
    with pytest.raises(CommandError) as raised:
        call_command("import_interactions", campaign.name, path)
    where = f"{path}:{number + 2}" + (f": {field}" if field else "")
    assert str(raised.value).startswith(where)
    assert message in str(raised.value)
    assert (InteractionLog.objects.count(), Impression.objects.count()) == (0, 0)
    assert Document.objects.count() == documents


@pytest.mark.parametrize(
    ("rows", "number", "field", "message"),
    [
        ([line(), line()], 2, "position", "1 is shown twice in request 'r1'"),
        ([line(), line(position=2, query="q2")], 2, "query", "differs within request 'r1'"),
        ([line(), line(position=2, model="exp")], 2, "model", "differs within request 'r1'"),
        ([line(session="a"), line(position=2, session="b")], 2, "session", "differs within request"),
        ([line(session="a"), line(request="r2")], 2, "session", "is required"),
        ([line(), line(request="r2", session="a")], 2, "session", "earlier lines name none"),
        ([line(), line(request="r2"), line(request="r1", position=2)], 3, "request", "comes back"),
    ],
)
def test_requests_must_hold_together(campaign, tmp_path, rows, number, field, message):
    path = write(tmp_path / "log.jsonl", rows)
    with pytest.raises(InputError) as raised:
        interaction_log_import(campaign=campaign, lines=text_lines(path, "log.jsonl"), source="log.jsonl")
    assert (raised.value.line, raised.value.field) == (number, field)
    assert message in raised.value.message
    assert Impression.objects.count() == 0


def test_an_empty_log_and_an_archived_campaign_are_refused(campaign, tmp_path):
    empty = write(tmp_path / "empty.jsonl", ["\n"])
    with pytest.raises(CommandError, match="the log has no impressions"):
        call_command("import_interactions", str(campaign.pk), empty)
    campaign.archived_at = timezone.now()
    campaign.save()
    with pytest.raises(CommandError, match="archived"):
        call_command("import_interactions", str(campaign.pk), write(tmp_path / "log.jsonl", LOG))
    assert InteractionLog.objects.count() == 0


def test_a_gzip_bomb_and_a_huge_line_are_refused_as_they_are_read(tmp_path):
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb") as file:
        file.write(b"x" * (1 << 20))
    with pytest.raises(InputError, match="longer than 65536 bytes"):
        list(text_lines(path, "bomb"))
    with pytest.raises(InputError, match="inflates to more than 1000 bytes"):
        list(text_lines(path, "bomb", max_bytes=1000))
    (tmp_path / "latin.jsonl").write_bytes(b"{}\n\xe9\n")
    with pytest.raises(InputError) as raised:
        list(text_lines(tmp_path / "latin.jsonl", "latin.jsonl"))
    assert (raised.value.line, raised.value.message) == (2, "not UTF-8 text (byte 0)")


def test_reading_holds_one_line_at_a_time(tmp_path):
    """The reader's memory is that of a line and under 64 bytes a request, whatever the file's length."""
    reader_memory = {}
    for lists in (1_000, 10_000):
        rows = (
            json.dumps(line(request=r, position=p, document=f"d{p}", query="q1")) + "\n"
            for r in range(lists)
            for p in range(1, 6)
        )
        path = tmp_path / f"{lists}.jsonl"
        path.write_text("".join(rows))
        reader = InteractionLogReader("log", queries={"q1": 1}, models={"online": 1})
        count, peak = peak_memory(lambda: sum(1 for _ in reader.rows(text_lines(path, "log"))))  # noqa: B023
        assert count == lists * 5
        reader_memory[lists] = peak
    assert reader_memory[10_000] < reader_memory[1_000] + 9_000 * 64


def test_the_page_adds_a_log_and_lists_it(client, campaign, make_user, tmp_path):
    client.force_login(make_user("boss", "manager"))
    url = f"/campaigns/{campaign.pk}/interactions/"
    assert 'id="no-logs"' in client.get(url).content.decode()
    content = "".join(json.dumps(row) + "\n" for row in LOG).encode()
    response = client.post(url, {"file": SimpleUploadedFile("day1.jsonl", content)}, follow=True)
    page = response.content.decode()
    assert "day1.jsonl: 5 impressions in 3 lists added." in page
    assert 'id="log-table"' in page and "<td>day1.jsonl</td>" in page


def test_the_page_names_a_bad_line_and_writes_nothing(client, campaign, make_user):
    client.force_login(make_user("boss", "manager"))
    content = (json.dumps(LOG[0]) + "\n" + json.dumps(line(query="q9")) + "\n").encode()
    url = f"/campaigns/{campaign.pk}/interactions/"
    page = client.post(url, {"file": SimpleUploadedFile("day1.jsonl", content)}).content.decode()
    assert "day1.jsonl, line 2, field query: &#x27;q9&#x27; is not one of the campaign&#x27;s queries" in page
    assert InteractionLog.objects.count() == 0


def test_a_manager_removes_a_log_and_only_its_impressions(client, campaign, make_user, tmp_path):
    path = write(tmp_path / "log.jsonl", LOG)
    kept, removed = (
        interaction_log_import(campaign=campaign, lines=text_lines(path, name), source=name)
        for name in ("kept.jsonl", "wrong.jsonl")
    )
    client.force_login(make_user("boss", "manager"))
    url = f"/campaigns/{campaign.pk}/interactions/{removed.pk}/delete/"
    page = client.post(url, follow=True).content.decode()
    assert "wrong.jsonl: its 5 impressions removed." in page
    assert list(InteractionLog.objects.values_list("pk", flat=True)) == [kept.pk]
    assert set(Impression.objects.values_list("log", flat=True)) == {kept.pk}
    assert Document.objects.filter(campaign=campaign, external_id="new-doc").exists()  # documents stay
    assert "no such interaction log" in client.post(url, follow=True).content.decode()
