"""Who may act on whom on the People page (the role rule, held by the services, not only hidden by the page),
how long a set-password link lives, and usernames unique whatever their case."""

import html
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from annotation.errors import InputError
from annotation.models import PasswordLink
from annotation.roles import Role
from annotation.services import people as services
from tests.factories import handed_link, password_set_through

User = get_user_model()
ACTIONS = [
    {"action": "password_reset"},
    {"action": "deactivate"},
    {"action": "activate"},
    {"action": "role", "role": "annotator"},
]
LINK_DEAD = "Ask a manager for a new one."


@pytest.fixture
def staff(make_user) -> dict:
    return {
        "root": User.objects.create_superuser("root", password="pw-root-1"),
        "boss": make_user("boss", "manager"),
        "other": make_user("other", "manager"),
        "ann": make_user("ann", "annotator"),
        "rita": make_user("rita", "reviewer"),
    }


def _state(user) -> tuple:
    """Everything an action on the People page could change about a person."""
    user.refresh_from_db()
    generation = PasswordLink.objects.filter(user=user).values_list("generation", flat=True).first()
    return user.password, user.is_active, sorted(user.groups.values_list("name", flat=True)), generation


def _person_url(user) -> str:
    return reverse("annotation:person", args=[user.pk])


@pytest.mark.parametrize("target", ["root", "other"])
@pytest.mark.parametrize("body", ACTIONS, ids=lambda body: body["action"])
def test_a_manager_cannot_act_on_a_superuser_or_another_manager(client, staff, target, body):
    client.force_login(staff["boss"])
    before = _state(staff[target])
    response = client.post(_person_url(staff[target]), body)
    assert response.status_code == 403
    assert "/password/set/" not in response.content.decode()
    assert _state(staff[target]) == before


@pytest.mark.parametrize("body", ACTIONS, ids=lambda body: body["action"])
@pytest.mark.parametrize("who", ["root", "boss"])
def test_nobody_acts_on_themselves(client, staff, who, body):
    client.force_login(staff[who])
    before = _state(staff[who])
    page = client.post(_person_url(staff[who]), body, follow=True).content.decode()
    assert "You cannot change your own account here" in page
    assert "/password/set/" not in page
    assert _state(staff[who]) == before


REFUSED = [
    ("person_password_reset", "boss", {"user": "root"}),
    ("person_active_set", "boss", {"user": "other", "active": False}),
    ("person_role_set", "boss", {"user": "other", "role": Role.ANNOTATOR}),
    ("person_role_set", "boss", {"user": "ann", "role": Role.MANAGER}),  # giving the manager role
    ("person_create", "boss", {"username": "newboss", "name": "", "role": Role.MANAGER}),
    ("person_create", "rita", {"username": "newann", "name": "", "role": Role.ANNOTATOR}),  # a reviewer
    ("person_active_set", "rita", {"user": "ann", "active": False}),
]


@pytest.mark.parametrize(("service", "by", "arguments"), REFUSED, ids=lambda value: str(value))
def test_the_services_hold_the_rule_whatever_the_page_shows(staff, service, by, arguments):
    arguments = {key: staff.get(value, value) if key == "user" else value for key, value in arguments.items()}
    before = {name: _state(user) for name, user in staff.items()}
    with pytest.raises(PermissionDenied):
        getattr(services, service)(by=staff[by], **arguments)
    assert {name: _state(user) for name, user in staff.items()} == before
    assert User.objects.count() == len(staff)


def test_a_superuser_manages_managers_and_superusers(client, staff):
    second = User.objects.create_superuser("root2", password="pw-root-2")
    client.force_login(staff["root"])
    assert client.post(_person_url(staff["ann"]), {"action": "role", "role": "manager"}).status_code == 302
    assert list(staff["ann"].groups.values_list("name", flat=True)) == ["manager"]
    client.post(_person_url(staff["other"]), {"action": "deactivate"})
    assert not _state(staff["other"])[1]
    link = handed_link(client.post(_person_url(second), {"action": "password_reset"}, follow=True))
    password_set_through(Client(), link, "a long new secret 42")
    assert Client().login(username="root2", password="a long new secret 42")


def _row(page: str, username: str) -> str:
    return re.search(rf"<tr[^>]*>\s*<td>{username}[ <].*?</tr>", page, re.S).group(0)


def test_the_page_offers_only_the_actions_the_viewer_may_take(client, staff):
    client.force_login(staff["boss"])
    page = client.get(reverse("annotation:people")).content.decode()
    for name in ("ann", "rita"):
        assert "Reset password" in _row(page, name) and "Change role" in _row(page, name)
    for name in ("root", "other"):
        assert "Managed by a superuser" in _row(page, name) and "<form" not in _row(page, name)
    assert "You" in _row(page, "boss") and "<form" not in _row(page, "boss")
    assert 'value="manager"' not in page  # neither in the new person's roles nor in a row's

    client.force_login(staff["root"])
    page = client.get(reverse("annotation:people")).content.decode()
    assert "Change role" in _row(page, "other") and 'value="manager"' in _row(page, "other")
    assert '<option value="manager">manager</option>' in page.split("<table")[0]


def test_a_manager_changes_an_annotators_role(client, staff):
    client.force_login(staff["boss"])
    ann = staff["ann"]
    page = client.post(_person_url(ann), {"action": "role", "role": "reviewer"}, follow=True)
    assert "The role of ann is now reviewer." in page.content.decode()
    assert list(ann.groups.values_list("name", flat=True)) == ["reviewer"]
    page = client.post(_person_url(ann), {"action": "role", "role": "manager"}, follow=True)
    assert "role: Select a valid choice." in page.content.decode()
    assert list(ann.groups.values_list("name", flat=True)) == ["reviewer"]


def _link(client, person) -> str:
    return handed_link(client.post(_person_url(person), {"action": "password_reset"}, follow=True))


def test_a_link_dies_when_a_newer_one_is_made_and_when_used(client, staff):
    client.force_login(staff["boss"])
    older, newer = _link(client, staff["ann"]), _link(client, staff["ann"])
    assert LINK_DEAD in Client().get(older, follow=True).content.decode()
    password_set_through(Client(), newer, "a long new secret 42")
    assert LINK_DEAD in Client().get(newer, follow=True).content.decode()
    assert Client().login(username="ann", password="a long new secret 42")


def test_a_link_dies_on_deactivation_and_stays_dead_after_reactivation(client, staff):
    client.force_login(staff["boss"])
    ann = staff["ann"]
    link = _link(client, ann)
    client.post(_person_url(ann), {"action": "deactivate"})
    client.post(_person_url(ann), {"action": "activate"})
    assert LINK_DEAD in Client().get(link, follow=True).content.decode()
    stranger = Client()
    stranger.post(link, {"new_password1": "a long new secret 42", "new_password2": "a long new secret 42"})
    assert not Client().login(username="ann", password="a long new secret 42")
    ann.refresh_from_db()
    assert not ann.has_usable_password()


def test_a_deactivated_person_gets_no_link(client, staff):
    client.force_login(staff["boss"])
    client.post(_person_url(staff["ann"]), {"action": "deactivate"})
    page = client.post(_person_url(staff["ann"]), {"action": "password_reset"}, follow=True).content.decode()
    assert "Activate ann before resetting their password." in page and "/password/set/" not in page


@pytest.mark.parametrize("username", ["MANAGER", "Manager", "manager"])
def test_usernames_are_unique_whatever_their_case(client, make_user, username):
    make_user("manager", "reviewer")
    client.force_login(make_user("boss", "manager"))
    response = client.post(reverse("annotation:people"), {"username": username, "role": "annotator"})
    page = html.unescape(response.content.decode())
    if username == "manager":
        assert "'manager' is taken." in page
    else:
        assert f"{username!r} is taken: 'manager' differs from it only in case." in page
    assert User.objects.count() == 2


def test_a_taken_username_is_said_in_the_readers_language(client, make_user):
    make_user("manager", "reviewer")
    client.force_login(make_user("boss", "manager"))
    response = client.post(
        reverse("annotation:people"),
        {"username": "Manager", "role": "annotator"},
        HTTP_ACCEPT_LANGUAGE="zh-Hans",
    )
    assert "'Manager' 已被占用：'manager' 与它只有大小写不同。" in html.unescape(response.content.decode())


def test_the_database_keeps_usernames_unique_whatever_their_case(make_user):
    make_user("manager")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="MANAGER")
    boss = make_user("boss", "manager")
    with pytest.raises(InputError):
        services.person_create(by=boss, username="MaNaGeR", name="", role=Role.ANNOTATOR)
