"""The demo campaign: real-looking content (annotation/demo/), demo logins, and part of the work done.

Labels come from simulated raters who mostly agree with a latent truth (annotation/demo/truth.json),
one of them careless and one leaning to the left side, so that agreement, gold and bias figures have
something to show. They are loaded through the same label import a team would use. The same raters tick the
intents of the ambiguous queries (jaguar, mercury, java, dune book) and mark the five editions of Dune as
near-duplicates (annotation/demo/diversity.json): the seed's case of NDCG@5 = 1.0 with a high ILS.

Users come too: a simulated interaction log (annotation/demo/interactions.jsonl.gz, 4,000 result lists
written by `manage.py simulate_interactions` from these labels, users under the position-based click model)
is imported into the first campaign, so the Behaviour page, the guardrails and the explorer's users' side
have something to show.

A second campaign, the next week's, compares a newer re-ranker under the same judging standard: it starts
with the first week's labels wherever the same query, document or pair of lists comes back.

A Chinese campaign stands beside them (annotation/demo/campaign_zh.json: queries such as 北京旅游攻略, its
documents, scale and guidelines in Chinese), with Chinese annotators and a reviewer whose pages are in
Chinese (their profile's language).
"""

import json
import math
import random
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.bundle.reading import text_lines
from annotation.models import Campaign, Judgment, Preference, RankingModel
from annotation.roles import Role
from annotation.services.campaigns import campaign_import
from annotation.services.interactions import interaction_log_import
from annotation.services.label_import import labels_import
from annotation.services.labels import duplicates_checked
from annotation.services.people import campaign_members_set, person_language_set

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
DEMO_NAME = "Demo: web search ranker v2"  # annotation/demo/campaign.json's name
DEMO_PASSWORD = "demo"
DEMO_USERS = {
    "manager": Role.MANAGER,
    "reviewer": Role.REVIEWER,
    "annotator1": Role.ANNOTATOR,
    "annotator2": Role.ANNOTATOR,
    "annotator3": Role.ANNOTATOR,
}
# name -> (probability of grading the truth exactly, probability of preferring the left list when unsure)
SIMULATED_RATERS = {
    "rater_ana": (0.85, 0.5),
    "rater_ben": (0.75, 0.5),
    "rater_chloe": (0.8, 0.5),
    "rater_dev": (0.45, 0.5),
    "rater_eli": (0.8, 0.8),
}
JUDGED_SHARE = 0.6  # of the queries, so annotators still find work
WEEK_2 = ("Demo: web search ranker v3 (week 2)", "neural-rerank-v3")
GOLD_TASKS = 12
DEMO_ZH_NAME = "演示：中文网页搜索排序 v2"  # annotation/demo/campaign_zh.json's name
# The Chinese campaign's team: their pages are in Chinese whatever their browser says.
DEMO_ZH_USERS = {
    "reviewer_zh": Role.REVIEWER,
    "annotator_zh1": Role.ANNOTATOR,
    "annotator_zh2": Role.ANNOTATOR,
}
DEMO_ZH_GOLD_TASKS = 6


def demo_users_ensure() -> None:
    """The demo logins, each in its group; the manager may use the admin for campaign settings and gold."""
    User = get_user_model()
    manager_permissions = Permission.objects.filter(content_type__app_label="annotation")
    Group.objects.get(name=Role.MANAGER).permissions.set(manager_permissions)
    for username, role in {**DEMO_USERS, **DEMO_ZH_USERS}.items():
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(DEMO_PASSWORD)
        user.is_staff = role == Role.MANAGER
        user.save()
        user.groups.add(Group.objects.get(name=role))
        if username in DEMO_ZH_USERS:
            person_language_set(user=user, language="zh-hans")


def _dcg(grades: list[int]) -> float:
    return sum((2**grade - 1) / math.log2(rank + 2) for rank, grade in enumerate(grades))


def _simulated_grade(rng: random.Random, truth: int, accuracy: float, scale: list[int]) -> int:
    if rng.random() < accuracy:
        return truth
    neighbours = [grade for grade in scale if abs(grade - truth) == 1] or scale
    return rng.choice(neighbours)


def _campaign_labelled(data: dict, name: str, truth_name: str, seed: int, gold_tasks: int):
    """A demo campaign imported from `data` (annotation/demo/`name`), `gold_tasks` of its top-three pairs
    made gold and its simulated raters' labels in, drawn from `truth_name` with one seeded generator; the
    campaign, its bundle and the generator (later draws continue from it)."""
    truth = json.loads((DEMO_DIR / truth_name).read_text(encoding="utf-8"))
    bundle = parse_bundle(data, f"annotation/demo/{name}")
    rng = random.Random(seed)
    gold_pairs = sorted(
        {(q, d) for run in bundle.rankings.values() for q, docs in run.items() for d in docs[:3]}
    )
    for query, document in rng.sample(gold_pairs, gold_tasks):
        bundle.gold_grades[query, document] = truth[query][document]
    campaign = campaign_import(bundle=bundle)
    judgments, preferences = _simulated_labels(bundle, truth, rng)
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="demo")
    return campaign, bundle, rng


def _simulated_labels(bundle, truth: dict[str, dict[str, int]], rng: random.Random):
    scale = [grade["value"] for grade in bundle.scale]
    depth = bundle.settings["pool_depth"]
    gsb_depth = bundle.settings["gsb_depth"]
    online = next(model.name for model in bundle.models if model.role == RankingModel.Role.ONLINE)
    experimental = [model.name for model in bundle.models if model.role == RankingModel.Role.EXPERIMENTAL]
    queries = sorted(query.external_id for query in bundle.queries)
    # The queries with intents are judged, so that the diversity measures have something to show.
    with_intents = {query.external_id for query in bundle.queries if query.intents}
    judged = {*rng.sample(queries, round(len(queries) * JUDGED_SHARE)), *with_intents}
    judgments, preferences = [], []
    for query in sorted(judged):
        pooled = {doc for run in bundle.rankings.values() for doc in run.get(query, [])[:depth]}
        for document in sorted(pooled):
            for rater in rng.sample(sorted(SIMULATED_RATERS), bundle.settings["overlap"]):
                grade = _simulated_grade(rng, truth[query][document], SIMULATED_RATERS[rater][0], scale)
                seconds = round(rng.lognormvariate(2.6, 0.4), 1)
                judgments.append(JudgmentRow(0, rater, query, document, grade, "", seconds))
        online_list = bundle.rankings[online].get(query, [])[:gsb_depth]
        for model in experimental:
            model_list = bundle.rankings[model].get(query, [])[:gsb_depth]
            if not online_list or model_list == online_list:
                continue
            gap = _dcg([truth[query][d] for d in model_list]) - _dcg([truth[query][d] for d in online_list])
            for rater in rng.sample(sorted(SIMULATED_RATERS), bundle.settings["gsb_overlap"]):
                accuracy, left_lean = SIMULATED_RATERS[rater]
                on_left = rng.random() < 0.5
                if abs(gap) < 0.5 or rng.random() > accuracy:
                    # Unsure: a biased rater picks the left list more often than the right.
                    picked_left = rng.random() < left_lean
                    verdict = "same" if rng.random() < 0.4 else ("good" if picked_left == on_left else "bad")
                else:
                    verdict = "good" if gap > 0 else "bad"
                seconds = round(rng.lognormvariate(3.0, 0.4), 1)
                preferences.append(PreferenceRow(0, rater, query, model, verdict, None, on_left, "", seconds))
    return judgments, preferences


@transaction.atomic
def demo_load() -> tuple[Campaign, bool]:
    """Load the demo; idempotent. Returns the campaign and whether it was created now."""
    demo_users_ensure()
    demo_zh_load()
    data = json.loads((DEMO_DIR / "campaign.json").read_text(encoding="utf-8"))
    existing = Campaign.objects.filter(name=DEMO_NAME).first()
    if existing:
        return existing, False
    campaign, bundle, rng = _campaign_labelled(data, "campaign.json", "truth.json", 20261122, GOLD_TASKS)
    diversity = json.loads((DEMO_DIR / "diversity.json").read_text(encoding="utf-8"))
    _simulated_diversity_labels(campaign, bundle, diversity, rng)
    # Members only, as a team would run it: the demo's annotators and reviewer.
    team = get_user_model().objects.filter(
        username__in=[u for u, r in DEMO_USERS.items() if r != Role.MANAGER]
    )
    campaign_members_set(campaign=campaign, open_to_all=False, members=team)
    log = DEMO_DIR / "interactions.jsonl.gz"
    source = "annotation/demo/interactions.jsonl.gz"
    interaction_log_import(campaign=campaign, lines=text_lines(log, source), source="interactions.jsonl.gz")
    week_2 = campaign_import(bundle=parse_bundle(_week_2(data), "annotation/demo/campaign.json (week 2)"))
    campaign_members_set(campaign=week_2, open_to_all=False, members=team)
    return campaign, True


def _simulated_diversity_labels(campaign: Campaign, bundle, diversity: dict, rng: random.Random) -> None:
    """The raters' intents (the true ones; a careless moment toggles one) on their judgments of the queries
    with intents, and their near-duplicate marks (each true pair shown in a list, marked as often as the
    rater is accurate) on their side-by-side verdicts."""
    truth, pairs = diversity["intents"], diversity["near_duplicates"]
    intents_of = {query.external_id: [i["id"] for i in query.intents] for query in bundle.queries}
    judgments = list(
        Judgment.objects.filter(campaign=campaign, task__query__external_id__in=list(truth))
        .select_related("task__query", "task__document", "annotator")
        .order_by("pk")
    )
    for judgment in judgments:
        query, document = judgment.task.query.external_id, judgment.task.document.external_id
        ticked = set(truth[query].get(document, []))
        if rng.random() > SIMULATED_RATERS[judgment.annotator.username][0]:
            ticked ^= {rng.choice(intents_of[query])}
        judgment.intents = [intent for intent in intents_of[query] if intent in ticked]
    Judgment.objects.bulk_update(judgments, ["intents"])
    online = next(model.name for model in bundle.models if model.role == RankingModel.Role.ONLINE)
    depth = bundle.settings["gsb_depth"]
    preferences = list(
        Preference.objects.filter(campaign=campaign, task__query__external_id__in=list(pairs))
        .select_related("task__query", "task__experimental_model", "annotator")
        .order_by("pk")
    )
    for preference in preferences:
        query, model = preference.task.query.external_id, preference.task.experimental_model.name
        marks = []
        for name, is_experimental in ((model, True), (online, False)):
            shown = bundle.rankings[name].get(query, [])[:depth]
            side = "left" if is_experimental == preference.experimental_on_left else "right"
            for document, same_as in pairs[query]:
                accuracy = SIMULATED_RATERS[preference.annotator.username][0]
                if document in shown and same_as in shown and rng.random() < accuracy:
                    later, earlier = sorted(
                        (shown.index(document) + 1, shown.index(same_as) + 1), reverse=True
                    )
                    marks.append([side, later, earlier])
        preference.duplicates = duplicates_checked(marks)
    Preference.objects.bulk_update(preferences, ["duplicates"])


def demo_zh_load() -> tuple[Campaign, bool]:
    """The Chinese campaign, its labels so far and its members; idempotent."""
    existing = Campaign.objects.filter(name=DEMO_ZH_NAME).first()
    if existing:
        return existing, False
    data = json.loads((DEMO_DIR / "campaign_zh.json").read_text(encoding="utf-8"))
    campaign, *_ = _campaign_labelled(data, "campaign_zh.json", "truth_zh.json", 20261126, DEMO_ZH_GOLD_TASKS)
    team = get_user_model().objects.filter(username__in=[u for u, r in DEMO_ZH_USERS.items()])
    campaign_members_set(campaign=campaign, open_to_all=False, members=team)
    return campaign, True


def _week_2(data: dict) -> dict:
    """The next week's campaign: the same queries, documents and production ranker against a newer model,
    which keeps last week's list on every other query and reorders the rest (swaps ranks 2 and 4)."""
    name, model = WEEK_2
    week = json.loads(json.dumps(data))
    experimental = next(m["name"] for m in week["models"] if m["role"] == "experimental")
    week["name"] = name
    week["description"] = f"The week after: {model} against the production ranker, under the same standard."
    week["models"] = [{**m, "name": model} if m["name"] == experimental else m for m in week["models"]]
    for index, ranking in enumerate(r for r in week["rankings"] if r["model"] == experimental):
        ranking["model"] = model
        documents = ranking["documents"]
        if index % 2 and len(documents) >= 4:
            documents[1], documents[3] = documents[3], documents[1]
    return week
