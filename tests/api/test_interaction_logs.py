"""The API's interaction logs: a manager adds one, reviewers list them, a bad line is a 400 at its line."""

import gzip
import json

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Impression, InteractionLog


def _log(*rows: dict) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _line(**fields) -> dict:
    base = {"query": "q1", "model": "exp", "request": "r1", "position": 1, "document": "d2", "clicked": True}
    return base | fields


def _post(client, campaign, content: bytes, name="log.jsonl.gz"):
    upload = SimpleUploadedFile(name, content)
    return client.post(f"/api/campaigns/{campaign.pk}/interactions/", {"file": upload}, format="multipart")


def test_a_manager_adds_a_gzipped_log_and_a_reviewer_lists_it(manager, reviewer, campaign):
    response = _post(manager, campaign, gzip.compress(_log(_line(), _line(position=2, document="d1"))))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert {key: body[key] for key in ("source", "impressions", "requests", "clicks", "sessions")} == {
        "source": "log.jsonl.gz",
        "impressions": 2,
        "requests": 1,
        "clicks": 2,
        "sessions": False,
    }
    listed = reviewer.get(f"/api/campaigns/{campaign.pk}/interactions/")
    assert listed.status_code == 200
    assert [log["id"] for log in listed.json()] == [body["id"]]
    assert InteractionLog.objects.get().created_by == manager.user


def test_a_bad_line_is_a_400_at_its_line_and_field_and_nothing_is_written(manager, campaign):
    response = _post(manager, campaign, _log(_line(), _line(position=2, clicked="yes")), name="log.jsonl")
    assert response.status_code == 400
    body = response.json()
    assert (body["line"], body["field"], body["code"]) == (2, "clicked", "wrong_type")
    assert body["detail"].startswith("log.jsonl:2: clicked: must be a boolean")
    assert (InteractionLog.objects.count(), Impression.objects.count()) == (0, 0)


def test_a_log_that_inflates_past_the_limit_is_a_413(manager, campaign, settings):
    settings.MAX_UPLOAD_BYTES = 2000
    rows = [_line(request=f"r{r}") for r in range(100)]
    response = _post(manager, campaign, gzip.compress(_log(*rows)))
    assert response.status_code == 413, response.json()
    assert Impression.objects.count() == 0


def test_a_reviewer_may_not_add_a_log(reviewer, campaign):
    assert _post(reviewer, campaign, _log(_line())).status_code == 403
