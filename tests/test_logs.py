"""A refused request is one line in the log: a 403 without the traceback of the PermissionDenied that
answered it (config/logs.py); a 500 keeps its traceback."""

import logging
import sys

from django.test import Client


def test_a_403_is_logged_as_one_line(make_user, caplog):
    client = Client()
    client.force_login(make_user("ann", "annotator"))
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert client.get("/people/").status_code == 403
    records = [record for record in caplog.records if record.name == "django.request"]
    assert [(record.levelname, record.getMessage()) for record in records] == [
        ("WARNING", "Forbidden (Permission denied): /people/")
    ]
    assert records[0].exc_info is None
    assert caplog.text.count("\n") == 1 and "Traceback" not in caplog.text


def test_a_500_keeps_its_traceback(caplog):
    try:
        raise RuntimeError("a fault of the server")
    except RuntimeError:
        with caplog.at_level(logging.ERROR, logger="django.request"):
            logging.getLogger("django.request").error(
                "Internal Server Error: /x/", exc_info=sys.exc_info(), extra={"status_code": 500}
            )
    assert "Traceback" in caplog.text and "a fault of the server" in caplog.text
