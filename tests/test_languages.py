"""The language of the pages: English by default, the browser's Accept-Language, the switcher (a cookie, and
for a signed-in person their profile, read again at each sign-in), and the Chinese catalogue complete and
compiled."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Profile

LOCALE = Path(settings.BASE_DIR) / "locale"
CATALOGUES = sorted(LOCALE.glob("*/LC_MESSAGES/*.po"))


def _language(page) -> str:
    return re.search(r'<html lang="([^"]+)"', page.content.decode()).group(1)


@pytest.mark.django_db
def test_english_unless_the_browser_asks_for_chinese():
    assert _language(Client().get(reverse("login"))) == "en"
    assert _language(Client().get(reverse("login"), headers={"accept-language": "fr, de;q=0.8"})) == "en"
    for asked in ("zh-CN,zh;q=0.9,en;q=0.8", "zh-Hans", "zh"):
        page = Client().get(reverse("login"), headers={"accept-language": asked})
        assert _language(page) == "zh-hans", asked
        assert page.headers["Content-Language"] == "zh-hans"


@pytest.mark.django_db
def test_the_switcher_keeps_an_anonymous_choice_in_a_cookie_and_goes_back():
    client = Client()
    answer = client.post(reverse("language_set"), {"language": "zh-hans", "next": "/login/?next=/people/"})
    assert answer.status_code == 302 and answer.url == "/login/?next=/people/"
    assert answer.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert _language(client.get(reverse("login"), headers={"accept-language": "en"})) == "zh-hans"


@pytest.mark.django_db
@pytest.mark.parametrize("elsewhere", ["https://evil.example/", "//evil.example/x", ""])
def test_the_switcher_goes_back_only_to_this_site(elsewhere):
    answer = Client().post(reverse("language_set"), {"language": "en", "next": elsewhere})
    assert answer.status_code == 302 and answer.url == "/"


@pytest.mark.django_db
def test_the_switcher_refuses_a_language_not_offered():
    answer = Client().post(reverse("language_set"), {"language": "fr", "next": "/login/"})
    assert answer.status_code == 302 and settings.LANGUAGE_COOKIE_NAME not in answer.cookies
    assert Client().get(reverse("language_set")).status_code == 405


def test_a_persons_language_is_on_their_profile_and_follows_them_to_their_next_sign_in(make_user):
    make_user("mei", "annotator", password="pw-mei-1")
    first = Client()
    first.post(reverse("login"), {"username": "mei", "password": "pw-mei-1"})
    first.post(reverse("language_set"), {"language": "zh-hans", "next": "/"})
    assert Profile.objects.get(user__username="mei").language == "zh-hans"
    page = first.get(reverse("annotation:home"), headers={"accept-language": "en"})
    assert _language(page) == "zh-hans" and "退出登录" in page.content.decode()

    elsewhere = Client(headers={"accept-language": "en"})  # another browser: no cookie, English asked
    assert _language(elsewhere.get(reverse("login"))) == "en"
    elsewhere.post(reverse("login"), {"username": "mei", "password": "pw-mei-1"})
    assert _language(elsewhere.get(reverse("annotation:home"))) == "zh-hans"

    elsewhere.post(reverse("language_set"), {"language": "en", "next": "/"})
    assert Profile.objects.get(user__username="mei").language == "en"
    assert _language(first.get(reverse("annotation:home"))) == "zh-hans"  # the first session keeps its own


def test_without_a_choice_a_person_follows_their_browser(make_user):
    make_user("lei", "annotator", password="pw-lei-1")
    client = Client(headers={"accept-language": "zh-CN"})
    client.post(reverse("login"), {"username": "lei", "password": "pw-lei-1"})
    assert _language(client.get(reverse("annotation:home"))) == "zh-hans"
    assert not Profile.objects.filter(user__username="lei").exists()


@pytest.mark.django_db
def test_the_javascript_catalogue_is_in_the_pages_language():
    english = Client().get(reverse("javascript_catalog"))
    chinese = Client().get(reverse("javascript_catalog"), headers={"accept-language": "zh-CN"})
    assert english.status_code == chinese.status_code == 200
    assert english.headers["Content-Type"].startswith("text/javascript")
    assert "django.gettext" in chinese.content.decode()


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=lambda path: str(path.relative_to(LOCALE)))
def test_every_message_of_the_catalogue_is_translated_and_none_fuzzy(catalogue, tmp_path):
    checked = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", str(tmp_path / "out.mo"), str(catalogue)],
        capture_output=True,
        text=True,
        env={"LC_ALL": "C"},
    )
    assert checked.returncode == 0, checked.stderr
    statistics = checked.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ translated messages?\.", statistics), statistics
    compiled = catalogue.with_suffix(".mo")
    assert compiled.read_bytes() == (tmp_path / "out.mo").read_bytes(), f"{compiled} is stale: run make"


def test_there_is_a_catalogue_of_pages_and_one_of_scripts_for_chinese():
    assert [str(path.relative_to(LOCALE)) for path in CATALOGUES] == [
        "zh_Hans/LC_MESSAGES/django.po",
        "zh_Hans/LC_MESSAGES/djangojs.po",
    ]


def test_the_apis_words_follow_accept_language_its_codes_and_fields_stay_english(campaign, make_user):
    from rest_framework.authtoken.models import Token

    from annotation.services.assignment import task_next

    annotator = make_user("ann", "annotator")
    assignment = task_next(annotator=annotator, campaign=campaign)
    token = Token.objects.create(user=annotator)
    url = f"/api/tasks/{assignment.pk}/judgment/"
    answers = {}
    for language in ("en", "zh-CN"):
        client = Client(headers={"authorization": f"Token {token.key}", "accept-language": language})
        answers[language] = client.post(url, {"grade": 99}, content_type="application/json")
    english, chinese = answers["en"].json(), answers["zh-CN"].json()
    assert answers["en"].status_code == answers["zh-CN"].status_code == 400
    assert english["code"] == chinese["code"] == "grade_not_on_scale" and english["field"] == chinese["field"]
    assert "is not on this campaign's scale" in english["detail"]
    assert "不在本评测项目的评分档位中" in chinese["detail"], chinese


def _messages(catalogue: Path) -> set[tuple[str, str]]:
    """The (context, msgid) of every entry of a .po file but its header."""
    entries, entry, field = set(), {}, ""
    for line in [*catalogue.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith('"'):
            entry[field] = entry.get(field, "") + line[1:-1]
        elif line.startswith(("msgctxt ", "msgid ", "msgid_plural ", "msgstr")):
            field, text = line.split(" ", 1)
            entry[field] = text[1:-1]
        elif not line.strip():
            if entry.get("msgid"):
                entries.add((entry.get("msgctxt", ""), entry["msgid"]))
            entry, field = {}, ""
    return entries


def test_the_catalogues_hold_every_string_marked_in_the_sources(tmp_path, settings, monkeypatch):
    # makemessages writes into the locale folder beside the sources: it runs on a copy of them.
    base = Path(settings.BASE_DIR)
    for folder in ("annotation", "metrics", "config", "plumbing", "trec", "templates", "static", "locale"):
        shutil.copytree(base / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(tmp_path)
    ignored = ["staticfiles", "var"]
    for domain, extensions in (("django", ["html", "txt", "py", "md"]), ("djangojs", ["js"])):
        call_command(
            "makemessages",
            locale=["zh_Hans"],
            domain=domain,
            extensions=extensions,
            ignore_patterns=ignored,
            no_obsolete=True,
            verbosity=0,
        )
        gathered = _messages(tmp_path / "locale" / "zh_Hans" / "LC_MESSAGES" / f"{domain}.po")
        committed = _messages(LOCALE / "zh_Hans" / "LC_MESSAGES" / f"{domain}.po")
        assert len(committed) > 10, domain
        assert gathered == committed, f"run make messages and translate: {sorted(gathered ^ committed)[:10]}"
