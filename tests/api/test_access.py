"""Who may use every endpoint and page. ROUTES is the source of truth for README.md's table
("Endpoints and who may use them"); a test keeps both in sync and another checks every URL is listed."""

import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token

from tests.factories import README, ROLES, ROUTES, WHO, readme_table, route_url


def test_readme_lists_every_route_with_who_may_use_it():
    assert readme_table() in README.read_text(), "update README.md's table from tests/factories.py"


def _patterns(resolvers, prefix: str = "") -> list[str]:
    paths = []
    for pattern in resolvers:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if not route.startswith("admin/"):
                paths += _patterns(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            paths.append("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route))
    return paths


def test_every_url_is_in_the_table():
    listed = {path for _, path, _, _ in ROUTES}
    missing = [path for path in _patterns(get_resolver().url_patterns) if path not in listed]
    assert not missing, f"add these to ROUTES and README.md: {missing}"


def _client(role: str, users: dict, api: bool) -> Client:
    client = Client()
    if role != "anonymous":
        if api:
            token = Token.objects.create(user=users[role])
            client.defaults["HTTP_AUTHORIZATION"] = f"Token {token.key}"
        else:
            client.force_login(users[role])
    return client


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "who"), [route[:3] for route in ROUTES])
def test_who_may_use_it(world, role, method, path, who):
    users, ids, tasks = world
    api = path.startswith("/api/")
    url = route_url(path, ids, tasks)
    client = _client(role, users, api)
    if method in ("PATCH", "PUT"):
        response = client.generic(method, url, "{}", content_type="application/json")
    elif method == "DELETE":
        response = client.delete(url)
    else:
        response = client.post(url, {}) if method == "POST" else client.get(url)
    login_redirect = response.status_code == 302 and "login/?next=" in response.get("Location", "")
    denied = response.status_code in (401, 403) or login_redirect
    if role in WHO[who]:
        assert not denied and response.status_code != 404, (role, url, response.status_code)
        assert response.status_code < 500
        return
    assert denied, (role, url, response.status_code)
    if api:
        assert response.status_code == (401 if role == "anonymous" else 403)
    elif role == "anonymous":
        assert login_redirect
