"""Every page in both languages: in Chinese, no English is left in the chrome (what the product says, as
opposed to the campaign's data, usernames, model names and the brand and measure names every team writes in
Latin letters); in English, no Chinese is in the chrome. The campaign's texts are Chinese, so the Chinese
pages are what a Chinese team sees."""

import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import CampaignImport
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_import
from annotation.services.label_import import labels_import
from tests.factories import CHINESE_BUNDLE, DOCUMENTS, EXPERIMENTAL_ZH, ONLINE_ZH, QUERIES, ROUTES, route_url

USERS = ["root", "ann"]
# Written the same in a Chinese page: the brand, measures, formats, keys, and the test's data.
LATIN = {
    *("Judgeboard", "GSB", "nDCG", "DCG", "AP", "RR", "ERR", "IA", "NDCG", "ILS", "TREC", "JSON", "CSV"),
    *("HTML", "Markdown", "md", "API", "Dawid", "Skene", "rel", "gzip", "Esc", "Enter", "Shift", "qrels"),
    *("trec_eval", "Krippendorff", "Fleiss", "Cohen's", "Wilson", "bootstrap", "Judged", "JSONL", "Qrels"),
    *("ID", "SHA", "log", "rater_x", "value", "label", "description", "English"),
    *("json", "html", "csv", *USERS),
}
# Addresses, file names, fingerprints (hex), and the history note a label import stored ("imported from
# test": data, written when the labels came in).
URL = re.compile(r"https?://\S+|\S+\.(?:json|md|csv|html)\b|\b[0-9a-f]{16}\b|imported from test")
WORD = re.compile(r"[A-Za-z][A-Za-z_'-]*[A-Za-z]")
CJK = re.compile(r"[\u4e00-\u9fff]")


class _Chrome(HTMLParser):
    """The text a person reads, and the attributes they read: not scripts, styles, code or the data
    blocks of charts."""

    SKIPPED = {"script", "style", "code", "kbd", "textarea", "pre"}
    READ = {"title", "placeholder", "aria-label", "alt"}

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []
        self.skipping: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self.skipping.append(tag)
        self.texts += [value for name, value in attrs if name in self.READ and value]

    def handle_endtag(self, tag):
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()

    def handle_data(self, data):
        if not self.skipping:
            self.texts.append(data)


def _chrome(body: str, html: bool) -> str:
    if not html:
        return body
    reader = _Chrome()
    reader.feed(body)
    return "\n".join(reader.texts)


def english_left(body: str, html: bool = True) -> list[str]:
    text = URL.sub(" ", _chrome(body, html))
    return sorted({word for word in WORD.findall(text) if word not in LATIN})


@pytest.fixture
def chinese_world(db):
    campaign = campaign_import(bundle=parse_bundle(CHINESE_BUNDLE, "中文.json"))
    root = get_user_model().objects.create_superuser("root", password="pw-root-1")
    judgments = [JudgmentRow(0, "ann", f"q{i}", doc, i % 3) for i in range(1, 5) for doc in ("d1", "d2")]
    judgments = [JudgmentRow(0, "ann", f"q{(n // 2) + 1}", f"d{n + 1}", n % 3) for n in range(8)]
    preferences = [
        PreferenceRow(0, "ann", f"q{i}", EXPERIMENTAL_ZH, verdict) for i, verdict in [(1, "good"), (3, "bad")]
    ]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="test")
    assignment = task_next(annotator=root, campaign=campaign)
    ids = {
        "campaign_id": campaign.pk,
        "assignment_id": assignment.pk,
        "kind": "relevance",
        "model": EXPERIMENTAL_ZH,
        "query_id": campaign.queries.first().pk,
        "import_id": CampaignImport.objects.create(created_by=root, folder="-", bundle_file="中文.json").pk,
        "uidb64": "MQ",
        "token": "expired-token",
    }
    tasks = {
        "relevance": campaign.relevance_tasks.first().pk,
        "side-by-side": campaign.side_by_side_tasks.first().pk,
    }
    return root, ids, tasks


NOT_PAGES = (
    "/api/",
    "/admin/",
    "/healthz",
    "/jsi18n/",
    "/work/progress/",
    "/labels/stamp/",
    "/status/",
    ".json",
    "favicon",
)
PAGES = [
    path for method, path, _, _ in ROUTES if method == "GET" and not any(part in path for part in NOT_PAGES)
]
PAGES += ["/metrics/campaigns/{campaign_id}/compare/{model}/report.md"]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_speaks_the_language_asked_for(chinese_world, path):
    root, ids, tasks = chinese_world
    url = route_url(path.replace("{format}", "html"), ids, tasks)
    html = not url.endswith(".md")
    pages = {}
    for language in ("en", "zh-hans"):
        client = Client(headers={"accept-language": language})
        client.force_login(root)
        page = client.get(url, follow=True)
        assert page.status_code == 200, (language, url)
        pages[language] = page.content.decode()
    if "<html" in pages["en"]:  # a page, not a fragment fetched into one
        assert '<html lang="zh-hans">' in pages["zh-hans"] and '<html lang="en">' in pages["en"]
    left = english_left(pages["zh-hans"], html)
    assert not left, f"English in the Chinese page {url}: {left}"
    chinese_in_english = set(CJK.findall(_chrome(pages["en"], html))) - set(
        "".join(
            [
                *QUERIES,
                *(t + b for t, b in DOCUMENTS.values()),
                ONLINE_ZH + EXPERIMENTAL_ZH,
                "中文评测搜索相关性评测按相关性打分。不相关非常相关与查询无关部分满足需求完全满足需求的意图头部长尾简体",
            ]
        )
    )
    assert not chinese_in_english, url
