"""Who may use every endpoint and page. ROUTES is the source of truth for README.md's table
("Endpoints and who may use them"); a test keeps both in sync and another checks every URL is listed."""

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token

README = Path(__file__).resolve().parents[2] / "README.md"
ROLES = ("anonymous", "annotator", "reviewer", "manager")
# Who may use a route: everyone; any signed-in user; the role (superusers hold every role; reviewer
# includes managers); staff (Django's admin site).
WHO = {
    "anyone": set(ROLES),
    "signed in": {"annotator", "reviewer", "manager"},
    "annotators": {"annotator"},
    "reviewers, managers": {"reviewer", "manager"},
    "managers": {"manager"},
    "staff": set(),
}

ROUTES = [
    # method, path, who, what
    ("GET", "/api/schema/", "anyone", "OpenAPI 3 schema"),
    ("GET", "/api/docs/", "anyone", "Swagger UI"),
    ("GET", "/api/redoc/", "anyone", "ReDoc"),
    ("POST", "/api/auth/token/", "anyone", "a token for a username and password (throttled)"),
    ("DELETE", "/api/auth/token/", "signed in", "revoke your token"),
    ("GET", "/api/campaigns/", "signed in", "campaigns (?name=)"),
    ("POST", "/api/campaigns/", "managers", "create a campaign from a bundle"),
    ("GET", "/api/campaigns/{campaign_id}/", "signed in", "a campaign; models and settings for reviewers"),
    ("PATCH", "/api/campaigns/{campaign_id}/", "managers", "change a campaign's texts and settings"),
    ("GET", "/api/campaigns/{campaign_id}/models/", "reviewers, managers", "models (?role=, ?name=)"),
    ("GET", "/api/campaigns/{campaign_id}/queries/", "reviewers, managers", "queries (?segment=, ?text=)"),
    ("POST", "/api/campaigns/{campaign_id}/runs/", "managers", "upload a TREC run for a model"),
    ("GET", "/api/campaigns/{campaign_id}/progress/", "reviewers, managers", "progress per annotator"),
    ("POST", "/api/campaigns/{campaign_id}/next-task/", "annotators", "your current or next task"),
    ("GET", "/api/campaigns/{campaign_id}/review-queue/", "reviewers, managers", "disputed tasks"),
    ("GET", "/api/campaigns/{campaign_id}/export/judgments/", "reviewers, managers", "raw labels (JSONL)"),
    ("GET", "/api/campaigns/{campaign_id}/export/qrels/", "reviewers, managers", "aggregated labels (qrels)"),
    (
        "GET",
        "/api/campaigns/{campaign_id}/report/",
        "reviewers, managers",
        "launch report: metrics, GSB, decision",
    ),
    ("GET", "/api/tasks/", "annotators", "your own tasks (?campaign=, ?status=, ?kind=)"),
    ("GET", "/api/tasks/{task_id}/", "annotators", "one of your tasks"),
    ("POST", "/api/tasks/{task_id}/judgment/", "annotators", "label your task (201, then 200 on change)"),
    ("POST", "/api/tasks/{task_id}/skip/", "annotators", "give your task back"),
    ("GET", "/api/review/{kind}/{task_id}/", "reviewers, managers", "a task with every label"),
    ("POST", "/api/review/{kind}/{task_id}/adjudication/", "reviewers, managers", "set the final label"),
    ("GET", "/api/review/{kind}/{task_id}/history/", "reviewers, managers", "label history"),
    ("GET", "/login/", "anyone", "sign-in page"),
    ("POST", "/login/", "anyone", "sign in"),
    ("POST", "/logout/", "anyone", "sign out"),
    ("GET", "/password/", "signed in", "change your password"),
    ("POST", "/password/", "signed in", "change your password"),
    ("GET", "/password/done/", "signed in", "password changed"),
    ("GET", "/password/set/{uidb64}/{token}/", "anyone", "set your password from a manager's one-time link"),
    ("GET", "/password/set/done/", "anyone", "password set"),
    ("GET", "/admin/", "staff", "Django admin"),
    ("GET", "/", "signed in", "your campaigns"),
    ("GET", "/healthz", "anyone", "health check"),
    ("GET", "/campaigns/{campaign_id}/work/", "annotators", "workbench: your current or next task"),
    ("GET", "/campaigns/{campaign_id}/work/progress/", "annotators", "your progress per task kind (JSON)"),
    ("GET", "/campaigns/{campaign_id}/tasks/{assignment_id}/", "annotators", "one of your tasks"),
    ("POST", "/campaigns/{campaign_id}/tasks/{assignment_id}/", "annotators", "label your task"),
    ("POST", "/campaigns/{campaign_id}/tasks/{assignment_id}/skip/", "annotators", "skip your task"),
    ("GET", "/campaigns/{campaign_id}/progress/", "reviewers, managers", "campaign progress"),
    ("GET", "/campaigns/{campaign_id}/review/", "reviewers, managers", "review queue"),
    ("GET", "/campaigns/{campaign_id}/members/", "managers", "who may annotate the campaign"),
    ("POST", "/campaigns/{campaign_id}/members/", "managers", "open it to all, or choose its members"),
    ("GET", "/campaigns/new/", "managers", "new campaign: upload a bundle and TREC runs"),
    ("POST", "/campaigns/new/", "managers", "stage the files and check them in the background"),
    ("GET", "/campaigns/new/template.json", "managers", "the demo's bundle, as a template"),
    ("GET", "/campaigns/imports/{import_id}/", "managers", "an import: preview, warnings, errors, progress"),
    ("POST", "/campaigns/imports/{import_id}/", "managers", "confirm (import in the background) or cancel"),
    ("GET", "/campaigns/imports/{import_id}/status/", "managers", "an import's status and progress (JSON)"),
    ("GET", "/people/", "managers", "people: roles, last sign-in, last label"),
    ("POST", "/people/", "managers", "add a person (shows a one-time set-password link)"),
    ("POST", "/people/{user_id}/", "managers", "deactivate, activate, or reset a password"),
    ("GET", "/review/relevance/{task_id}/", "reviewers, managers", "review a relevance task"),
    ("POST", "/review/relevance/{task_id}/", "reviewers, managers", "adjudicate it"),
    ("GET", "/review/side-by-side/{task_id}/", "reviewers, managers", "review a side-by-side task"),
    ("POST", "/review/side-by-side/{task_id}/", "reviewers, managers", "adjudicate it"),
    ("GET", "/metrics/campaigns/{campaign_id}/quality/", "reviewers, managers", "label quality"),
    (
        "GET",
        "/metrics/campaigns/{campaign_id}/",
        "reviewers, managers",
        "campaign overview: models, measures",
    ),
    ("GET", "/metrics/campaigns/{campaign_id}/compare/{model}/", "reviewers, managers", "launch comparison"),
    (
        "GET",
        "/metrics/campaigns/{campaign_id}/compare/{model}/report.{format}",
        "reviewers, managers",
        "launch report download (json, html, csv, md)",
    ),
    (
        "GET",
        "/metrics/campaigns/{campaign_id}/queries/{query_id}/",
        "reviewers, managers",
        "query drill-down",
    ),
]


def readme_table() -> str:
    rows = ["| method | path | who | what |", "| --- | --- | --- | --- |"]
    rows += [f"| {method} | `{path}` | {who} | {what} |" for method, path, who, what in ROUTES]
    return "\n".join(rows)


def test_readme_lists_every_route_with_who_may_use_it():
    assert readme_table() in README.read_text(), "update README.md's table from tests/api/test_access.py"


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


def route_url(path: str, ids: dict, tasks: dict) -> str:
    """A route with real ids: an annotator's task id is their assignment's id, a reviewer's the task's own."""
    kind = {"/review/relevance/": "relevance", "side-by-side": "side-by-side"}
    task_id = tasks[next((value for key, value in kind.items() if key in path), ids["kind"])]
    if path.startswith("/api/tasks/"):
        task_id = ids["assignment_id"]
    return path.format(task_id=task_id, **{key: quote(str(value), safe="") for key, value in ids.items()})


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
    if method == "PATCH":
        response = client.patch(url, "{}", content_type="application/json")
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
