"""What many test modules build: the small and worked-example campaigns, the launch pages, the route table.

Test modules import from here, never from each other.
"""

import gzip
import json
import re
import tracemalloc
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

from django.core.management import call_command
from django.urls import reverse

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import Document, Query, Ranking
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_import
from annotation.services.label_import import labels_import
from annotation.services.labels import label_submit

SMALL_BUNDLE = {
    "name": "Small",
    "guidelines": "Grade each page.\nSkip what you cannot read.",
    # Relevance first: many tests walk the tasks in that order (interleaving has its own tests).
    "settings": {
        "overlap": 2,
        "gsb_overlap": 2,
        "pool_depth": 3,
        "gsb_depth": 2,
        "task_order": "relevance_first",
        "repeat_rate": 0,  # repeats have their own tests; elsewhere a walk through the tasks is predictable
    },
    "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
    "queries": [
        {"id": "q1", "text": "cheap flights to lisbon", "segment": "head"},
        {"id": "q2", "text": "how to boil an egg", "description": "a recipe", "segment": "tail"},
    ],
    "documents": [
        {"id": f"d{i}", "title": f"Doc {i}", "url": f"https://example.com/{i}", "body": f"Body {i}"}
        for i in range(1, 9)
    ],
    "rankings": [
        {"model": "online", "query": "q1", "documents": ["d1", "d2", "d3", "d4"]},
        {"model": "exp", "query": "q1", "documents": ["d2", "d1", "d5", "d3"]},
        {"model": "online", "query": "q2", "documents": ["d6", "d7", "d8"]},
        {"model": "exp", "query": "q2", "documents": ["d6", "d7", "d1"]},
    ],
}


# A campaign in Chinese throughout, its models' names too: they are part of page addresses and file names.
ONLINE_ZH, EXPERIMENTAL_ZH = "线上模型", "实验模型"
QUERIES = ["北京旅游攻略", "机器学习教程", "运动鞋推荐", "红烧肉做法"]
DOCUMENTS = {
    f"d{i}": (f"文档{i}：{topic}", f"关于{topic}的详细介绍，第{i}篇。")
    for i, topic in enumerate(["故宫", "长城", "神经网络", "梯度下降", "跑鞋", "篮球鞋", "五花肉", "冰糖"], 1)
}
CHINESE_BUNDLE = {
    "name": "中文评测",
    "description": "搜索相关性评测",
    "guidelines": "按相关性打分。",
    "scale": [
        {"value": 0, "label": "不相关", "description": "与查询无关"},
        {"value": 1, "label": "相关", "description": "部分满足需求"},
        {"value": 2, "label": "非常相关", "description": "完全满足需求"},
    ],
    "settings": {"overlap": 1, "gsb_overlap": 1, "pool_depth": 2, "gsb_depth": 2, "min_queries": 2},
    "models": [{"name": ONLINE_ZH, "role": "online"}, {"name": EXPERIMENTAL_ZH, "role": "experimental"}],
    "queries": [
        {"id": f"q{i}", "text": text, "description": f"{text}的意图", "segment": "头部" if i < 3 else "长尾"}
        for i, text in enumerate(QUERIES, 1)
    ],
    "documents": [
        {"id": key, "title": title, "url": f"https://example.com/{key}", "body": body}
        for key, (title, body) in DOCUMENTS.items()
    ],
    "rankings": [
        {"model": model, "query": f"q{i}", "documents": pair if model == ONLINE_ZH else pair[::-1]}
        for i, pair in enumerate([["d1", "d2"], ["d3", "d4"], ["d5", "d6"], ["d7", "d8"]], 1)
        for model in (ONLINE_ZH, EXPERIMENTAL_ZH)
    ],
}

# q1: the online model ranks documents graded 3, 2, 3, 0, 1, 2 (linear nDCG 0.9608); the experimental model
# puts them in the ideal order. q2: both lists identical. Side by side: Good, (identical) Same, Bad, Bad.
GRADES = {"a": 3, "b": 2, "c": 3, "d": 0, "e": 1, "f": 2}
WORKED = {
    "name": "Worked example",
    "settings": {
        "overlap": 1,
        "gsb_overlap": 1,
        "pool_depth": 6,
        "gsb_depth": 6,
        "gain": "linear",
        "cutoffs": [3, 6],
        "primary_measure": "ndcg@6",
        "min_queries": 4,  # every query is judged, so the decision is shown
    },
    "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
    "queries": [
        {"id": "q1", "text": "one", "segment": "head"},
        {"id": "q2", "text": "two", "segment": "head"},
        {"id": "q3", "text": "three", "segment": "tail"},
        {"id": "q4", "text": "four", "segment": "tail"},
    ],
    "documents": [{"id": doc} for doc in [*GRADES, "x", "y", "z"]],
    "rankings": [
        {"model": "online", "query": "q1", "documents": ["a", "b", "c", "d", "e", "f"]},
        {"model": "exp", "query": "q1", "documents": ["a", "c", "b", "f", "e", "d"]},
        {"model": "online", "query": "q2", "documents": ["x", "y"]},
        {"model": "exp", "query": "q2", "documents": ["x", "y"]},
        {"model": "online", "query": "q3", "documents": ["x", "z"]},
        {"model": "exp", "query": "q3", "documents": ["z", "x"]},
        {"model": "online", "query": "q4", "documents": ["y", "z"]},
        {"model": "exp", "query": "q4", "documents": ["z", "y"]},
    ],
}
VERDICTS = {"q1": "good", "q3": "bad", "q4": "bad"}


def worked_campaign(verdicts=VERDICTS, swap_q1=False):
    """The worked example; `swap_q1` gives the online model the ideal order of q1, so q1 loses."""
    bundle = json.loads(json.dumps(WORKED))
    if swap_q1:
        bundle["rankings"][0]["model"], bundle["rankings"][1]["model"] = "exp", "online"
    campaign = campaign_import(bundle=parse_bundle(bundle, "worked.json"))
    judgments = [JudgmentRow(0, "ann", "q1", doc, grade) for doc, grade in GRADES.items()]
    judgments += [
        JudgmentRow(0, "ann", query, doc, 1) for query in ("q2", "q3", "q4") for doc in ("x", "y", "z")
    ]
    preferences = [PreferenceRow(0, "ann", query, "exp", verdict) for query, verdict in verdicts.items()]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="test")
    return campaign


# The seed's failure case of NDCG: the online model shows five editions of one book, every one graded Perfect
# (NDCG@5 = 1.0), the experimental one the book, its film, two sequels and a game. Intents: the novel, the
# film, the sequels; popularity: the editions 0.25, the film 0.125, the sequels 0.0625, the game unknown.
EDITIONS = ["hardcover", "paperback", "ebook", "audio", "box"]
FIVE_EDITIONS = {
    "name": "Five editions",
    "settings": {
        "overlap": 1,
        "gsb_overlap": 1,
        "pool_depth": 5,
        "gsb_depth": 5,
        "cutoffs": [5],
        "repeat_rate": 0,
    },
    "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
    "queries": [
        {
            "id": "dune",
            "text": "dune",
            "intents": [
                {"id": "novel", "text": "the novel"},
                {"id": "film", "text": "the film"},
                {"id": "sequel", "text": "the sequels"},
            ],
        }
    ],
    "documents": [
        *(
            {
                "id": f"e{i}",
                "title": f"Dune ({edition})",
                "attributes": {"work": "dune", "author": "herbert", "format": edition},
                "popularity": 0.25,
            }
            for i, edition in enumerate(EDITIONS, start=1)
        ),
        {
            "id": "f1",
            "title": "Dune (2021 film)",
            "attributes": {"work": "dune-film", "author": "villeneuve", "format": "film"},
            "popularity": 0.125,
        },
        {
            "id": "m1",
            "title": "Dune Messiah",
            "attributes": {"work": "messiah", "author": "herbert", "format": "paperback"},
            "popularity": 0.0625,
        },
        {
            "id": "c1",
            "title": "Children of Dune",
            "attributes": {"work": "children", "author": "herbert", "format": "paperback"},
            "popularity": 0.0625,
        },
        {"id": "g1", "title": "Dune: Spice Wars", "attributes": {"work": "spice-wars", "format": "game"}},
    ],
    "rankings": [
        {"model": "online", "query": "dune", "documents": ["e1", "e2", "e3", "e4", "e5"]},
        {"model": "exp", "query": "dune", "documents": ["e1", "f1", "m1", "c1", "g1"]},
    ],
}
FIVE_EDITIONS_INTENTS = {"f1": ["film"], "m1": ["sequel"], "c1": ["sequel"], "g1": []}


def five_editions_campaign(annotator, *, marks: bool = True, **settings):
    """The five-editions campaign, every task labelled by `annotator` (`five_editions_label`)."""
    bundle = json.loads(json.dumps(FIVE_EDITIONS))
    bundle["settings"].update(settings)
    campaign = campaign_import(bundle=parse_bundle(bundle, "editions.json"))
    five_editions_label(campaign, annotator, marks=marks)
    return campaign


def five_editions_label(campaign, annotator, *, marks: bool = True, intents=FIVE_EDITIONS_INTENTS) -> None:
    """Every task the annotator is handed, labelled through the label service: the editions Perfect (3) and
    serving the novel, the game 1, the others 3 with `intents`; with `marks`, editions 2 to 5 of the online
    list marked the same as the first."""
    while (lease := task_next(annotator=annotator, campaign=campaign)) is not None:
        if lease.relevance_task_id:
            document = lease.relevance_task.document.external_id
            grade = 1 if document == "g1" else 3
            label_submit(
                annotator=annotator, assignment=lease, grade=grade, intents=intents.get(document, ["novel"])
            )
        else:
            online_side = "right" if lease.experimental_on_left else "left"
            duplicates = [[online_side, position, 1] for position in range(2, 6)] if marks else None
            label_submit(annotator=annotator, assignment=lease, verdict="same", duplicates=duplicates)


def ranked_ids(**filters) -> list[str]:
    """External ids of the documents of one stored list (`Ranking` filters, e.g. `model__name=`), in rank
    order."""
    pks = Ranking.objects.get(**filters).document_pks.tolist()
    documents = Document.objects.in_bulk(pks)
    return [documents[pk].external_id for pk in pks]


def launch_page_urls(campaign) -> list[str]:
    """Every launch page of the worked example's campaign."""
    q1 = Query.objects.get(campaign=campaign, external_id="q1")
    return [
        reverse("metrics:campaign_overview", args=[campaign.pk]),
        reverse("metrics:comparison", args=[campaign.pk, "exp"]),
        reverse("metrics:launch_report", args=[campaign.pk, "exp", "html"]),
        reverse("metrics:query_drilldown", args=[campaign.pk, q1.pk]),
    ]


README = Path(__file__).resolve().parents[1] / "README.md"
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
    ("GET", "/api/campaigns/{campaign_id}/interactions/", "reviewers, managers", "the interaction logs"),
    (
        "POST",
        "/api/campaigns/{campaign_id}/interactions/",
        "managers",
        "add an interaction log (JSONL, may be gzipped)",
    ),
    ("GET", "/api/campaigns/{campaign_id}/members/", "managers", "who may annotate the campaign"),
    ("PUT", "/api/campaigns/{campaign_id}/members/", "managers", "open it to all, or choose its members"),
    ("POST", "/api/campaigns/{campaign_id}/archive/", "managers", "archive (read-only, hidden) or restore"),
    ("GET", "/api/campaigns/{campaign_id}/exclusions/", "managers", "whose labels are left out, and why"),
    (
        "POST",
        "/api/campaigns/{campaign_id}/exclusions/",
        "managers",
        "leave an annotator's labels out, take them back, or confirm",
    ),
    ("POST", "/api/campaigns/{campaign_id}/judgments/", "managers", "import labels (a JSONL body)"),
    ("POST", "/api/campaigns/{campaign_id}/next-task/", "annotators", "your current or next task"),
    ("GET", "/api/campaigns/{campaign_id}/review-queue/", "reviewers, managers", "disputed tasks"),
    ("GET", "/api/campaigns/{campaign_id}/export/judgments/", "reviewers, managers", "raw labels (JSONL)"),
    ("GET", "/api/campaigns/{campaign_id}/export/qrels/", "reviewers, managers", "aggregated labels (qrels)"),
    (
        "GET",
        "/api/campaigns/{campaign_id}/export/behaviour-qrels/",
        "reviewers, managers",
        "labels from behaviour (qrels)",
    ),
    (
        "GET",
        "/api/campaigns/{campaign_id}/export/intent-qrels/",
        "reviewers, managers",
        "aggregated intent judgments (ndeval's qrels)",
    ),
    (
        "GET",
        "/api/campaigns/{campaign_id}/report/",
        "reviewers, managers",
        "launch report: metrics, GSB, decision (JSON, HTML, CSV, Markdown by Accept or ?format=)",
    ),
    (
        "GET",
        "/api/campaigns/{campaign_id}/report/{format}/",
        "reviewers, managers",
        "launch report as a file: html, csv, summary.csv, md",
    ),
    (
        "GET",
        "/api/campaigns/{campaign_id}/decision/",
        "reviewers, managers",
        "the launch decision: collecting, launch, no_launch or inconclusive, with reasons",
    ),
    ("GET", "/api/people/", "managers", "people: roles, last sign-in, last label"),
    ("POST", "/api/people/", "managers", "add a person (answers a one-time set-password link)"),
    ("PATCH", "/api/people/{user_id}/", "managers", "change a role, deactivate or reactivate"),
    ("POST", "/api/people/{user_id}/password-link/", "managers", "reset a password: a new set-password link"),
    ("POST", "/api/imports/", "managers", "new campaign: stage a bundle and runs, checked in the background"),
    ("GET", "/api/imports/{import_id}/", "managers", "an import: status, preview, error, progress"),
    ("POST", "/api/imports/{import_id}/confirm/", "managers", "create the campaign in the background"),
    ("POST", "/api/imports/{import_id}/cancel/", "managers", "cancel an import"),
    ("POST", "/api/imports/{import_id}/retry/", "managers", "retry an import whose worker stopped"),
    (
        "GET",
        "/api/campaigns/{campaign_id}/behaviour/",
        "reviewers, managers",
        "what users did: online metrics, propensities, guardrails, judges against users",
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
    ("POST", "/language/", "anyone", "choose the pages' language (cookie, and a signed-in person's profile)"),
    ("GET", "/jsi18n/", "anyone", "the scripts' translations in the page's language"),
    ("GET", "/admin/", "staff", "Django admin"),
    ("GET", "/", "signed in", "your campaigns"),
    ("GET", "/healthz", "anyone", "health check"),
    ("GET", "/favicon.ico", "anyone", "the icon (SVG)"),
    ("GET", "/campaigns/{campaign_id}/work/", "annotators", "workbench: your current or next task"),
    ("GET", "/campaigns/{campaign_id}/work/progress/", "annotators", "your progress per task kind (JSON)"),
    ("GET", "/campaigns/{campaign_id}/tasks/{assignment_id}/", "annotators", "one of your tasks"),
    ("POST", "/campaigns/{campaign_id}/tasks/{assignment_id}/", "annotators", "label your task"),
    ("POST", "/campaigns/{campaign_id}/tasks/{assignment_id}/skip/", "annotators", "skip your task"),
    (
        "POST",
        "/campaigns/{campaign_id}/tasks/{assignment_id}/unskip/",
        "annotators",
        "take your skip back (while the task has room)",
    ),
    ("GET", "/campaigns/{campaign_id}/progress/", "reviewers, managers", "campaign progress"),
    ("GET", "/campaigns/{campaign_id}/review/", "reviewers, managers", "review queue"),
    ("GET", "/campaigns/{campaign_id}/members/", "managers", "who may annotate the campaign"),
    ("POST", "/campaigns/{campaign_id}/members/", "managers", "open it to all, or choose its members"),
    ("GET", "/campaigns/{campaign_id}/settings/", "managers", "the campaign's texts, scale and settings"),
    (
        "GET",
        "/campaigns/{campaign_id}/labels/stamp/",
        "reviewers, managers",
        "a stamp that changes with the labels (results pages poll it)",
    ),
    ("POST", "/campaigns/{campaign_id}/settings/", "managers", "change them (checked as by the API)"),
    (
        "GET",
        "/campaigns/{campaign_id}/interactions/",
        "managers",
        "the interaction logs, and a form to add one",
    ),
    ("POST", "/campaigns/{campaign_id}/interactions/", "managers", "add an interaction log"),
    (
        "POST",
        "/campaigns/{campaign_id}/interactions/{log_id}/delete/",
        "managers",
        "remove an interaction log and its impressions",
    ),
    ("POST", "/campaigns/{campaign_id}/archive/", "managers", "archive (read-only, hidden) or restore"),
    (
        "POST",
        "/campaigns/{campaign_id}/exclusions/",
        "managers",
        "leave an annotator's labels out, take them back, or confirm",
    ),
    ("GET", "/campaigns/new/", "managers", "new campaign: upload a bundle and TREC runs"),
    ("POST", "/campaigns/new/", "managers", "stage the files and check them in the background"),
    ("GET", "/campaigns/new/template.json", "managers", "the demo's bundle, as a template"),
    ("GET", "/campaigns/imports/{import_id}/", "managers", "an import: preview, warnings, errors, progress"),
    (
        "POST",
        "/campaigns/imports/{import_id}/",
        "managers",
        "confirm (import in the background), cancel, or retry an import whose worker stopped",
    ),
    ("GET", "/campaigns/imports/{import_id}/status/", "managers", "an import's status and progress (JSON)"),
    ("GET", "/people/", "managers", "people: roles, last sign-in, last label"),
    ("POST", "/people/", "managers", "add a person (shows a one-time set-password link)"),
    (
        "POST",
        "/people/{user_id}/",
        "managers",
        "deactivate, activate, reset a password or change a role (the role rules of docs/security.md)",
    ),
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
    (
        "GET",
        "/metrics/campaigns/{campaign_id}/decision/",
        "reviewers, managers",
        "the current decision, as the home page shows it (HTML)",
    ),
    ("GET", "/metrics/campaigns/{campaign_id}/compare/{model}/", "reviewers, managers", "launch comparison"),
    (
        "GET",
        "/metrics/campaigns/{campaign_id}/compare/{model}/report.{format}",
        "reviewers, managers",
        "launch report download (json, html, csv, summary.csv, md)",
    ),
    (
        "GET",
        "/metrics/campaigns/{campaign_id}/behaviour/",
        "reviewers, managers",
        "what users did: online metrics, position bias, judges against users, labels from behaviour",
    ),
    (
        "GET",
        "/metrics/campaigns/{campaign_id}/queries/",
        "reviewers, managers",
        "query explorer: search, filter, sort every query",
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


def route_url(path: str, ids: dict, tasks: dict) -> str:
    """A route with real ids: an annotator's task id is their assignment's id, a reviewer's the task's own."""
    kind = {"/review/relevance/": "relevance", "side-by-side": "side-by-side"}
    task_id = tasks[next((value for key, value in kind.items() if key in path), ids["kind"])]
    if path.startswith("/api/tasks/"):
        task_id = ids["assignment_id"]
    return path.format(task_id=task_id, **{key: quote(str(value), safe="") for key, value in ids.items()})


def handed_link(response) -> str:
    """The set-password path a People page's message hands over."""
    return re.search(r"http://testserver(/password/set/[^\s<]+)", response.content.decode()).group(1)


def password_set_through(client, link: str, password: str):
    """Opens a set-password link and sets `password` with it; the page it ends on."""
    page = client.get(link, follow=True)
    assert "Set your password" in page.content.decode()
    url = page.redirect_chain[-1][0] if page.redirect_chain else link
    return client.post(url, {"new_password1": password, "new_password2": password}, follow=True)


class _FormReader(HTMLParser):
    """The fields of one form of a page with the values it shows, as a browser would post them."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id, self.inside, self.data = form_id, False, {}
        self._textarea: str | None = None
        self._select: str | None = None
        self._option: dict | None = None  # an option without a value posts its text

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("id") == self.form_id
        if not self.inside or "disabled" in attrs:
            return
        name = attrs.get("name")
        if tag == "input" and name:
            if attrs.get("type") in ("checkbox", "radio"):
                if "checked" in attrs:
                    self.data.setdefault(name, []).append(attrs.get("value", "on"))
            elif attrs.get("type") not in ("submit", "button", "file"):
                self.data[name] = attrs.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea, self.data[name] = name, ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select:
            self._option = {"value": attrs.get("value"), "text": "", "selected": "selected" in attrs}

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea" and self._textarea:
            self.data[self._textarea] = self.data[self._textarea].removeprefix("\n")  # as browsers read it
            self._textarea = None
        elif tag == "option" and self._select and self._option:
            if self._select not in self.data or self._option["selected"]:
                value = self._option["value"]
                self.data[self._select] = self._option["text"] if value is None else value
            self._option = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data
        elif self._option is not None:
            self._option["text"] += data


def field_values(instance) -> dict:
    """A model instance's stored values, to compare one read by plain SQL (`plumbing.rows`) with the ORM's."""
    return {field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields}


def form_data(page: str, form_id: str) -> dict:
    """What the form `form_id` of `page` posts as shown (a checkbox's values as a list)."""
    reader = _FormReader(form_id)
    reader.feed(page)
    return {
        key: value[0] if isinstance(value, list) and len(value) == 1 else value
        for key, value in reader.data.items()
    }


def gzip_bomb(path: Path, inflated_bytes: int) -> Path:
    """A gzip file of `inflated_bytes` zero bytes, about a thousandth of that on disk, written a mebibyte at
    a time."""
    zeros = bytes(1 << 20)
    with gzip.open(path, "wb", compresslevel=9) as file:
        for start in range(0, inflated_bytes, len(zeros)):
            file.write(zeros[: inflated_bytes - start])
    return path


def peak_memory[T](function: Callable[[], T]) -> tuple[T | BaseException, int]:
    """What `function()` returned (or raised) and the most memory Python and NumPy held during it."""
    tracemalloc.start()
    try:
        try:
            result: T | BaseException = function()
        except Exception as error:
            result = error
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def work_off_the_queue() -> None:
    """Runs the queued background tasks as `db_worker --batch` does, here and now."""
    call_command("db_worker", batch=True, reload=False, startup_delay=False, verbosity=0)


# A million ranking rows: 10,000 queries, the online model's run 100 deep and the experimental one's 5.
MILLION_QUERIES, MILLION_DEPTH = 10_000, 100
MILLION_ROWS = MILLION_QUERIES * (MILLION_DEPTH + 5)


def million_rankings_files(folder: Path) -> None:
    """bundle.json (the queries, no documents: the runs' are created bare), online.run and exp.run."""
    bundle = {
        "name": "A million rankings",
        "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
        "queries": [{"id": f"q{q}", "text": f"query {q}"} for q in range(MILLION_QUERIES)],
        "documents": [],
    }
    (folder / "bundle.json").write_text(json.dumps(bundle))
    for model, shift, depth in (("online", 0, MILLION_DEPTH), ("exp", 1, 5)):
        with (folder / f"{model}.run").open("w") as run:
            for q in range(MILLION_QUERIES):
                run.writelines(
                    f"q{q} Q0 d{(q * 7 + r + shift) % 50_000} {r + 1} {depth - r} {model}\n"
                    for r in range(depth)
                )


# The layout of trec_eval 10.0's test/qrels.test.with-comments: comment lines first and between judgments,
# and a `#` inside a document id, which is text.
TREC_EVAL_WITH_COMMENTS = [
    "# comment here",
    "301 0 CR93E-10279 0",
    "301 0 CR93E-10505 0",
    "# and comment here",
    "301 0 CR93E-1282 1",
    "301 0 CR93E-1850 0",
    "# comment in docno",
    "301 0 CR#93E-1860 0",
    "302 0 CR93E-3103 1",
]


def threads_run(threads: list, timeout: float) -> None:
    """Start the threads and wait for them; fail when one still runs `timeout` seconds after the others."""
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads)


def simulated_log_import(campaign, *, lists: int = 3000, seed: int = 0):
    """A simulated interaction log of `campaign` (`simulate_interactions`), imported as a manager would."""
    from annotation.services.interactions import interaction_log_import
    from metrics.selectors.impressions import simulated_interactions

    rows = simulated_interactions(campaign=campaign, n_lists=lists, seed=seed)
    lines = enumerate((json.dumps({k: v for k, v in row.items() if v is not None}) for row in rows), start=1)
    return interaction_log_import(campaign=campaign, lines=lines, source="simulated.jsonl")


def rotated_campaign():
    """Six queries of ten documents: the online model ranks them d0..d9, the experimental one d1..d9, d0 (each
    document one place apart: swaps that connect every position to the first); d_j graded 3 - j // 3, and
    every side-by-side verdict Bad."""
    queries = [f"q{q}" for q in range(6)]
    bundle = {
        "name": "Rotated",
        "settings": {"overlap": 1, "gsb_overlap": 1, "pool_depth": 10, "min_queries": 1},
        "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
        "queries": [
            {"id": q, "text": f"query {q}", "segment": "head" if i < 3 else "tail"}
            for i, q in enumerate(queries)
        ],
        "documents": [{"id": f"{q}-d{j}"} for q in queries for j in range(10)],
        "rankings": [
            {"model": model, "query": q, "documents": [f"{q}-d{(j + shift) % 10}" for j in range(10)]}
            for q in queries
            for model, shift in (("online", 0), ("exp", 1))
        ],
    }
    campaign = campaign_import(bundle=parse_bundle(bundle, "rotated.json"))
    judgments = [JudgmentRow(0, "ann", q, f"{q}-d{j}", 3 - j // 3) for q in queries for j in range(10)]
    preferences = [PreferenceRow(0, "ann", q, "exp", "bad") for q in queries]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="test")
    return campaign
