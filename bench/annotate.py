"""50 simulated annotators against gunicorn (4 workers) on PostgreSQL, over HTTP on loopback.

    .venv/bin/python bench/annotate.py [--annotators 50] [--seconds 30] [--phase-rounds 3] [--queries 1000]
    .venv/bin/python bench/annotate.py --in-process [--rounds 100]   # only the in-process measure

Creates and drops its own database (judgeboard_bench_annotate) on BENCH_PG's server, starts one gunicorn,
then measures these phases on it with the same number of client threads:

0. floor: every client loops on a second gunicorn (4 workers) serving a WSGI callable that answers "ok"
   without Django (`bare_app`), for a third of the time: what the serving stack alone costs a request;
1. trivial: every client loops on /healthz (a view that touches no database) for a third of the time:
   the most requests per second this server and these clients can do;
2. task page: each annotator loops on GET of the task it holds (signed in, nothing written) for a third of
   the time: a floor, since every label round trip does at least this much;
3. annotation: each annotator (logged in before the clock) opens the workbench, then loops as its script
   does: POST a label, which answers with the next task (leased in the same request), until time is up or
   nothing is left;
4. API: each annotator with its token, as a labelling script would: POST next-task once, then each
   judgment with `?next=true`, whose answer holds the next task (one request per label), for the same time;
5. API in two requests per label: each judgment, then POST next-task.

Phases 3–5 are taken in turn, in `--phase-rounds` rounds (3 by default) of `--seconds / rounds` each (web,
API, API in two requests; again), so that a drift of the machine's speed falls on every path alike: it prints
each round's server CPU per label and their median.

With --loaded another process keeps one core busy through the phases (`bench/busy.py`); the load average is
printed either way. For the web and API phases it reports labels/s, p50/p95 and the server's CPU per label:
the CPU seconds gunicorn's processes spent in the phase (from /proc) over the labels stored, and beside it
PostgreSQL's (every process named postgres: the bench's database is the only busy one). In one process it
counts the SQL statements of each path. Sessions and the cache are in Redis (BENCH_REDIS, `--no-redis` for the
database), as in production. Targets: at most 5 ms of server CPU and 6 SQL statements per label on every
path. `--in-process` measures only that (no gunicorn, no clients), then splits a web label's CPU into its
parts (`web_label_parts`), prints what one round trip to PostgreSQL and to the cache costs this process
(`round_trip_costs`), and the API's next-task as a process's first in its campaign against once it has seen
it (`next_task_costs`); BENCH_DATABASE names the database.
Before the phases (and with `--in-process`) it prints the plan of the general path's lease query, and
PostgreSQL's time for the side-by-side page's statement, which a new lease's statement holds too.
Afterwards it checks that no task holds more labels than its overlap and that
every answer was a success (200 or 201) stored.
"""

import argparse
import os
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

try:
    from busy import load_average, other_core_busy
except ImportError:  # imported as bench.annotate (bench/load.py, bench/soak.py), not run as a script
    from bench.busy import load_average, other_core_busy

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/15")
DATABASE = os.environ.get("BENCH_DATABASE", "judgeboard_bench_annotate")
PASSWORD = "bench-password-1"
TASK_URL = re.compile(r'action="(/campaigns/\d+/tasks/\d+/)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def psql(sql: str) -> None:
    subprocess.run(["psql", f"{SERVER}/postgres", "-qAt", "-c", sql], check=True, capture_output=True)


def setup_django(redis: bool) -> None:
    """This process's Django as the server's: production mode, so in-process costs compare (`in_process`)."""
    if redis:
        os.environ["REDIS_URL"] = REDIS
        import redis as redis_client

        redis_client.Redis.from_url(REDIS).flushdb()  # the bench's own database number
    os.environ.update(
        {
            "DATABASE_URL": f"{SERVER}/{DATABASE}",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,testserver",
            "LOG_LEVEL": "ERROR",
            "LOGIN_THROTTLE_RATE": "10000/min",  # every simulated annotator signs in from one address
        }
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def seed(queries: int, annotators: int) -> tuple[int, list[str]]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import connection

    from annotation.bundle import parse_bundle
    from annotation.services.campaigns import campaign_import
    from annotation.services.tokens import token_get_or_create

    call_command("migrate", verbosity=0)
    rng = random.Random(11)
    documents = [f"d{i}" for i in range(queries * 8)]
    bundle = {
        "name": "bench annotate",
        "settings": {"overlap": 3, "gsb_overlap": 3, "pool_depth": 5, "gsb_depth": 5},
        "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
        "queries": [{"id": f"q{q}", "text": f"query number {q}"} for q in range(queries)],
        "documents": [
            {"id": d, "title": f"Title {d}", "url": f"https://example.com/{d}", "body": "text"}
            for d in documents
        ],
        "rankings": [
            {"model": model, "query": f"q{q}", "documents": rng.sample(documents, 5)}
            for q in range(queries)
            for model in ("online", "exp")
        ],
    }
    campaign = campaign_import(bundle=parse_bundle(bundle, "bench.json"))
    group = Group.objects.get(name="annotator")
    password = make_password(PASSWORD)  # one hash for all: 50 PBKDF2 rounds would dominate the setup
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"bench{i}", password=password) for i in range(annotators)
    )
    group.user_set.add(*users)
    tokens = [token_get_or_create(user=user).key for user in users]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum soon would; without stats PostgreSQL picks nested loops
    return campaign.pk, tokens


def lease_query_plan(campaign_id: int) -> str:
    """EXPLAIN ANALYZE of the query that finds an annotator's next task: its plan's top node and time."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Campaign
    from annotation.selectors.workbench import task_candidates
    from annotation.task_kinds import RELEVANCE

    annotator = get_user_model().objects.get(username="bench0")
    campaign = Campaign.objects.get(pk=campaign_id)
    now = timezone.now()
    tasks = task_candidates(kind=RELEVANCE, campaign=campaign, annotator=annotator, now=now, start=0)
    with transaction.atomic(), connection.cursor() as cursor:
        sql, params = tasks[0].select_for_update(skip_locked=True, of=("self",))[:1].query.sql_with_params()
        cursor.execute("EXPLAIN ANALYZE " + sql, params)
        plan = [row[0] for row in cursor.fetchall()]
    scan = next(line.strip() for line in plan if "Scan" in line)
    return f"{plan[-1]}; {scan.split('  (')[0]}"


def side_by_side_page_times(campaign_id: int, tasks: int = 40) -> str:
    """PostgreSQL's planning and execution time of the side-by-side page's statement (`task_page_sql`, which
    a new lease's statement holds too), medians over the campaign's first `tasks` such tasks, read twice."""
    from django.db import connection

    from annotation.models import Document, SideBySideTask
    from annotation.selectors.task_page import task_page_sql
    from annotation.task_kinds import SIDE_BY_SIDE

    sql = task_page_sql(SIDE_BY_SIDE, task="%(task)s", assignment="%(assignment)s", finished=False)
    params = {"annotator": 0, "campaign": campaign_id, "depth": 5, "assignment": 0}
    pks = SideBySideTask.objects.filter(campaign_id=campaign_id).order_by("pk").values_list("pk", flat=True)
    planning, execution = [], []
    with connection.cursor() as cursor:
        for task in [*pks[:tasks]] * 2:
            cursor.execute("EXPLAIN (ANALYZE) " + sql, {**params, "task": task})
            *_, planned, executed = (row[0] for row in cursor.fetchall())
            planning.append(float(planned.split()[2]))
            execution.append(float(executed.split()[2]))
    return (
        f"planning {statistics.median(planning):.3f} ms, execution {statistics.median(execution):.3f} ms "
        f"(medians of {len(execution)}; {Document.objects.count()} documents)"
    )


# The label paths, as printed, and the stats counter of their labels.
LABEL_PATHS = {
    "web": ("web", "labels"),
    "api": ("API ?next=true", "api_labels"),
    "api2": ("API, two requests", "api2_labels"),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def static_collect() -> None:
    """Production serves hashed static files from the manifest collectstatic writes."""
    collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"]
    subprocess.run(collect, cwd=ROOT, check=True)


def start_gunicorn(port: int, app: str = "config.wsgi") -> subprocess.Popen:
    """The app with `setup_django`'s environment (production mode), as behind a TLS proxy: see `client`."""
    if app == "config.wsgi":
        static_collect()
    command = [str(ROOT / ".venv/bin/gunicorn"), app, "-w", "4", "-b", f"127.0.0.1:{port}"]
    return subprocess.Popen(command, cwd=ROOT, start_new_session=True)


def bare_app(environ, start_response):
    """Any request answered "ok" with no Django: gunicorn's and HTTP's own cost of a request (phase 0)."""
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


class _ProxiedSession(requests.Session):
    def send(self, request, **kwargs):
        response = super().send(request, **kwargs)
        for cookie in self.cookies:
            cookie.secure = False  # the proxy would have spoken HTTPS to the browser
        return response


def client(base: str) -> requests.Session:
    """A client as the app sees it behind a TLS-terminating proxy: X-Forwarded-Proto https, an HTTPS
    Referer (Django's CSRF check wants one), and its Secure cookies sent back over the loopback."""
    session = _ProxiedSession()
    session.headers.update({"X-Forwarded-Proto": "https", "Referer": base.replace("http:", "https:") + "/"})
    return session


def wait_ready(base: str) -> None:
    for _ in range(300):
        try:
            client(base).get(f"{base}/healthz", timeout=2).raise_for_status()
            return
        except requests.RequestException:
            time.sleep(0.1)
    raise RuntimeError("gunicorn did not start")


def login(base: str, index: int) -> requests.Session:
    session = client(base)
    page = session.get(f"{base}/login/")
    token = CSRF.search(page.text)[1]
    data = {"username": f"bench{index}", "password": PASSWORD, "csrfmiddlewaretoken": token}
    session.post(f"{base}/login/", data=data, allow_redirects=False).raise_for_status()
    return session


def cpu_seconds(server: subprocess.Popen) -> tuple[float, float]:
    """User and system CPU seconds of gunicorn's processes (its master and workers, one process group), and
    of PostgreSQL's (every process named postgres, the backends that served them included)."""
    ticks = os.sysconf("SC_CLK_TCK")
    gunicorn = database = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().split(" (", 1)[1].rsplit(")", 1)
        except OSError:
            continue  # gone meanwhile
        fields = rest.split()
        used = int(fields[11]) + int(fields[12])
        if int(fields[2]) == server.pid:  # its process group
            gunicorn += used
        elif name == "postgres":
            database += used
    return gunicorn / ticks, database / ticks


def annotator(
    base: str, session: requests.Session, index: int, campaign: int, deadline: float, stats: dict, lock
):
    """The workbench's loop: one GET of the current task, then each label's POST answers with the next
    task (as workbench.js asks), until time is up or nothing is left."""
    rng = random.Random(index)
    posts, labels = [], 0
    page = session.get(f"{base}/campaigns/{campaign}/work/").text
    while time.monotonic() < deadline:
        task = TASK_URL.search(page)
        if task is None:
            break  # nothing left for this annotator
        label = (
            {"grade": rng.randint(0, 3)}
            if 'name="grade"' in page
            else {"side": rng.choice(["left", "same", "right"])}
        )
        started = time.perf_counter()
        response = session.post(
            base + task[1],
            data={**label, "csrfmiddlewaretoken": CSRF.search(page)[1]},
            headers={"X-Workbench": "next"},
            allow_redirects=False,
        )
        posts.append(time.perf_counter() - started)
        if response.status_code != 200:
            with lock:
                stats["refused"] += 1
            break  # refused: the bench would otherwise loop on the same task
        labels += 1
        page = response.text
    with lock:
        stats["post"] += posts
        stats["labels"] += labels


def api_label(rng: random.Random, kind: str) -> dict:
    """A random answer to an API task of `kind`, as the judgment endpoint takes it."""
    if kind == "relevance":
        return {"grade": rng.randint(0, 3)}
    return {"verdict": rng.choice(["left", "same", "right"])}


def api_annotator(
    base: str, token: str, index: int, campaign: int, deadline: float, stats: dict, lock, two: bool = False
):
    """The API's loop, as a labelling script would: POST next-task once, then each judgment with
    `?next=true`, whose answer holds the next task (one request per label); with `two`, each judgment
    without it, then POST next-task (two requests per label)."""
    rng = random.Random(index)
    session = client(base)
    session.headers["Authorization"] = f"Token {token}"
    times, labels, refused = [], 0, 0
    first = session.post(f"{base}/api/campaigns/{campaign}/next-task/")
    task = first.json() if first.status_code == 200 else None
    while task is not None and time.monotonic() < deadline:
        started = time.perf_counter()
        url = f"{base}/api/tasks/{task['id']}/judgment/" + ("" if two else "?next=true")
        response = session.post(url, json=api_label(rng, task["kind"]))
        if response.status_code != 201:
            refused += 1
            break
        labels += 1
        if two:
            following = session.post(f"{base}/api/campaigns/{campaign}/next-task/")
            task = following.json() if following.status_code == 200 else None
        else:
            task = response.json()["next"]
        times.append(time.perf_counter() - started)
    key = "api2" if two else "api"
    with lock:
        stats[key] += times
        stats[f"{key}_labels"] += labels
        stats["refused"] += refused


def reader(base: str, session: requests.Session, campaign: int, deadline: float, stats: dict, lock):
    """GET the page of the task the annotator holds, again and again: signed in, role checked, the task
    read and rendered, nothing written. Every label round trip does at least this much."""
    url = base + TASK_URL.search(session.get(f"{base}/campaigns/{campaign}/work/").text)[1]
    times = []
    while time.monotonic() < deadline:
        started = time.perf_counter()
        session.get(url).raise_for_status()
        times.append(time.perf_counter() - started)
    with lock:
        stats["read"] += times


def health(base: str, deadline: float, stats: dict, lock: threading.Lock):
    session = client(base)
    times = []
    while time.monotonic() < deadline:
        started = time.perf_counter()
        session.get(f"{base}/healthz").raise_for_status()
        times.append(time.perf_counter() - started)
    with lock:
        stats["healthz"] += times


def run_clients(target, arguments: list[tuple]) -> float:
    """Start one thread per argument tuple, wait for all; the elapsed seconds."""
    threads = [threading.Thread(target=target, args=args) for args in arguments]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started


def percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": cuts[49] * 1000, "p95": cuts[94] * 1000, "p99": cuts[98] * 1000}


def workbench_open(campaign: int, username: str):
    """A test client signed in as `username`, and its workbench page in the campaign (`{"html": ...}`)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    browser = Client(headers={"X-Forwarded-Proto": "https"})
    browser.force_login(get_user_model().objects.get(username=username))
    return browser, {"html": browser.get(f"/campaigns/{campaign}/work/", secure=True).text}


def web_label(browser, page: dict) -> None:
    """Labels the task on `page` as the workbench's script posts it (URL-encoded); `page` then holds the next
    task."""
    html = page["html"]
    data = "grade=1" if 'name="grade"' in html else "side=same"
    response = browser.post(
        TASK_URL.search(html)[1],
        data,
        "application/x-www-form-urlencoded",
        secure=True,
        headers={"X-Workbench": "next"},
    )
    assert response.status_code == 200, response.status_code
    page["html"] = response.text


def api_labeller(campaign: int, token: str, *, two_requests: bool):
    """A function that labels the API's next task as a script would, each call one label: a judgment with
    `?next=true`, or with `two_requests` the judgment then POST next-task. The first call takes the task the
    annotator holds (or the next) from next-task."""
    from django.test import Client

    api = Client(headers={"X-Forwarded-Proto": "https", "Authorization": f"Token {token}"})
    next_task_url = f"/api/campaigns/{campaign}/next-task/"
    held: dict = {"next": None}

    def label() -> None:
        if held["next"] is None:
            held["next"] = api.post(next_task_url, secure=True).json()
        task = held["next"]
        data = {"grade": 1} if task["kind"] == "relevance" else {"verdict": "same"}
        url = f"/api/tasks/{task['id']}/judgment/" + ("" if two_requests else "?next=true")
        response = api.post(url, data, "application/json", secure=True)
        assert response.status_code == 201, response.status_code
        if two_requests:
            held["next"] = api.post(next_task_url, secure=True).json()
        else:
            held["next"] = response.json()["next"]

    return label


def in_process(campaign: int, token: str, rounds: int = 100) -> list[tuple[str, float, float, int, float]]:
    """Per request inside this process (Django's test client: no HTTP, no concurrency), one annotator:
    (what, CPU milliseconds, mean and most SQL statements, mean strings sent: the annotator's lock and a new
    lease go as one; a transaction's BEGIN and COMMIT count in both) for /healthz, the read-only task page,
    a label with the next task on the web path and on the API path (a judgment with `?next=true`)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    browser, page = workbench_open(campaign, "bench0")
    task_url = TASK_URL.search(page["html"])[1]
    api_label = api_labeller(campaign, token, two_requests=False)
    api_two_requests = api_labeller(campaign, token, two_requests=True)

    requests_ = (
        ("/healthz", lambda: browser.get("/healthz", secure=True)),
        ("task page (GET)", lambda: browser.get(task_url, secure=True)),
        ("label + next (web)", lambda: web_label(browser, page)),
        ("label + next (API)", api_label),
        ("label, next (2 API)", api_two_requests),
    )
    costs = []
    for name, request in requests_:
        request()  # warm: a first label of a kind compiles its templates
        started = time.process_time()
        for _ in range(rounds):
            request()
        milliseconds = (time.process_time() - started) * 1000 / rounds
        statements, strings = [], []
        for _ in range(rounds):
            # Django's query log: what the cursors ran, and the BEGIN and COMMIT of its transactions.
            with CaptureQueriesContext(connection) as sent:
                request()
            statements.append(sum(1 + query["sql"].count(";\n") for query in sent.captured_queries))
            strings.append(len(sent.captured_queries))
        costs.append(
            (name, milliseconds, statistics.mean(statements), max(statements), statistics.mean(strings))
        )
    return costs


# The web label's view calls these, each once (the lease and the next task's view on its next page): timed
# where the view looks them up, so what is left of a request is Django's machinery around the view.
WEB_LABEL_PARTS = (
    ("annotation.views.workbench", "_assignment_or_404", "assignment read"),
    ("annotation.views.workbench", "LabelForm", "form built"),
    ("annotation.views.workbench", "label_submit", "label stored"),
    ("annotation.services.assignment", "task_next", "next task leased"),
    ("annotation.selectors.task_page", "task_view", "next task read"),
    ("annotation.views.workbench", "render", "next page rendered"),
)


def web_label_parts(campaign: int, rounds: int) -> tuple[float, list[tuple[str, float]]]:
    """The web label with the next task in this process, and the CPU milliseconds of each of its parts
    (WEB_LABEL_PARTS), a label's mean: where the round trip's CPU goes, for what would have to change."""
    import importlib

    browser, page = workbench_open(campaign, "bench1")
    spent = dict.fromkeys([name for *_, name in WEB_LABEL_PARTS], 0.0)

    def timed(function, name):
        def call(*args, **kwargs):
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - started

        return call

    originals = []
    for module_name, attribute, name in WEB_LABEL_PARTS:
        module = importlib.import_module(module_name)
        originals.append((module, attribute, getattr(module, attribute)))
        setattr(module, attribute, timed(getattr(module, attribute), name))
    try:
        for _round in range(2):  # the first warms: a first label of a kind compiles its templates
            spent.update(dict.fromkeys(spent, 0.0))
            started = time.process_time()
            for _ in range(rounds):
                web_label(browser, page)
            total = time.process_time() - started
    finally:
        for module, attribute, original in originals:
            setattr(module, attribute, original)
    return total * 1000 / rounds, [(name, seconds * 1000 / rounds) for name, seconds in spent.items()]


def round_trip_costs(rounds: int = 2000) -> list[tuple[str, float]]:
    """This process's CPU microseconds for one round trip to PostgreSQL (`SELECT 1` in autocommit), the
    same in a transaction of its own (BEGIN and COMMIT are two round trips more), and one to the cache (a
    GET: Redis, or the database with `--no-redis`): what a label pays per round trip before any of its own
    work."""
    from django.core.cache import cache
    from django.db import connection, transaction

    def select_one():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()

    def in_transaction():
        with transaction.atomic():
            select_one()

    costs = []
    for name, call in (
        ("PostgreSQL: SELECT 1", select_one),
        ("PostgreSQL: BEGIN, SELECT 1, COMMIT", in_transaction),
        ("cache GET", lambda: cache.get("bench-absent")),
    ):
        call()
        started = time.process_time()
        for _ in range(rounds):
            call()
        costs.append((name, (time.process_time() - started) * 1e6 / rounds))
    return costs


def next_task_costs(campaign: int, blocks: int = 16, calls: int = 60) -> dict[str, float]:
    """CPU milliseconds of the API's next-task service (`task_next_in`) in this process, the median of
    `blocks` blocks' medians, the two cases taking turns: a process's first call in its campaign (the
    campaign read, then the lock and the lease) and a call once it has seen it (the lock reads it, the lease
    goes with it: `round_trip._SEEN`); the first case made by emptying what the process has seen before
    the call. Fresh annotators, each lease marked submitted after its call (outside the clock): every call
    takes a new lease."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from annotation.models import Assignment
    from annotation.services import assignment

    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"next{i}", password="!") for i in range(calls)
    )
    Group.objects.get(name="annotator").user_set.add(*users)
    first, seen = "first in the campaign", "campaign seen"

    def call(user, case: str) -> float:
        if case == first:
            assignment._campaigns_seen.clear()
        started = time.process_time()
        lease = assignment.task_next_in(annotator=user, campaign_id=campaign)
        spent = time.process_time() - started
        Assignment.objects.filter(pk=lease.pk).update(status=Assignment.Status.SUBMITTED)
        return spent

    for user in users[:10]:  # warm: statements prepared, the process's caches
        call(user, seen)
        call(user, first)
    medians: dict[str, list[float]] = {first: [], seen: []}
    for block in range(blocks):
        for case in (first, seen) if block % 2 else (seen, first):
            medians[case].append(statistics.median(call(user, case) for user in users) * 1000)
    return {case: statistics.median(values) for case, values in medians.items()}


def costs_print(costs: list[tuple[str, float, float, int, float]]) -> None:
    for name, milliseconds, mean, most, strings in costs:
        print(
            f"in one process: {name:19} {milliseconds:6.2f} ms CPU, "
            f"{mean:.2f} SQL statements (at most {most}; target <= 6 for a label with the next task) "
            f"in {strings:.2f} strings sent, BEGIN and COMMIT counted"
        )


def labels_stored() -> int:
    """Labels, and answers to repeats (a repeat's answer is kept apart from the labels)."""
    from annotation.models import Judgment, Preference, RepeatAnswer

    return Judgment.objects.count() + Preference.objects.count() + RepeatAnswer.objects.count()


def over_assigned() -> int:
    from django.db.models import Count, F

    from annotation.models import RelevanceTask, SideBySideTask

    relevance = RelevanceTask.objects.annotate(n=Count("judgments")).filter(n__gt=F("campaign__overlap"))
    sbs = SideBySideTask.objects.annotate(n=Count("preferences")).filter(n__gt=F("campaign__gsb_overlap"))
    return relevance.count() + sbs.count()


def serving_floor(clients: int, seconds: float, loaded: bool) -> tuple[int, float, float]:
    """Phase 0 on its own gunicorn serving `bare_app`: (requests, elapsed seconds, its CPU seconds)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_gunicorn(port, "bench.annotate:bare_app")
    try:
        wait_ready(base)
        stats, lock = {"healthz": []}, threading.Lock()
        with other_core_busy(loaded):
            deadline = time.monotonic() + seconds
            elapsed, cpu, _ = phase(server, health, [(base, deadline, stats, lock)] * clients)
        return len(stats["healthz"]), elapsed, cpu
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=30)


def phase(server, target, arguments: list[tuple]) -> tuple[float, float, float]:
    """Run a phase's clients; its elapsed seconds, and gunicorn's and PostgreSQL's CPU seconds in it."""
    cpu, database = cpu_seconds(server)
    elapsed = run_clients(target, arguments)
    cpu_after, database_after = cpu_seconds(server)
    return elapsed, cpu_after - cpu, database_after - database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30, help="each label path's time, all rounds")
    parser.add_argument("--phase-rounds", type=int, default=3, help="rounds the label paths take in turn")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--no-redis", action="store_true", help="sessions and cache in the database")
    parser.add_argument("--loaded", action="store_true", help="keep one core busy while measuring")
    parser.add_argument("--rounds", type=int, default=100, help="labels per path in the in-process measure")
    parser.add_argument(
        "--in-process", action="store_true", help="only the in-process measure (no gunicorn, no clients)"
    )
    args = parser.parse_args()

    psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    psql(f"CREATE DATABASE {DATABASE}")
    server = None
    try:
        setup_django(redis=not args.no_redis)
        campaign, tokens = seed(args.queries, args.annotators)
        from django.db import connections

        from annotation.models import RelevanceTask, SideBySideTask

        tasks = RelevanceTask.objects.count(), SideBySideTask.objects.filter(lists_identical=False).count()
        print(f"lease query: {lease_query_plan(campaign)}")
        print(f"side-by-side page statement: {side_by_side_page_times(campaign)}")
        if args.in_process:
            static_collect()
            with other_core_busy(args.loaded):
                costs = in_process(campaign, tokens[0], args.rounds)
                total, parts = web_label_parts(campaign, args.rounds)
                trips = round_trip_costs()
                next_task = next_task_costs(campaign)
                load = load_average()
            print(
                f"sessions and cache in {'the database' if args.no_redis else 'Redis'}; "
                f"{'loaded: one core kept busy' if args.loaded else 'quiet'}, {load}"
            )
            costs_print(costs)
            print(f"a web label's parts ({total:.2f} ms CPU in all, a label's mean):")
            for name, milliseconds in parts:
                print(f"  {name:19} {milliseconds:6.2f} ms")
            rest = total - sum(milliseconds for _, milliseconds in parts)
            print(f"  {'the rest':19} {rest:6.2f} ms (middleware, URL, form check, messages, test client)")
            for name, microseconds in trips:
                print(f"a round trip, {name}: {microseconds:.0f} us CPU")
            for case, milliseconds in next_task.items():
                print(f"the API's next-task service, {case}: {milliseconds:.3f} ms CPU (median of blocks)")
            return
        connections.close_all()
        floor = serving_floor(args.annotators, args.seconds / 3, args.loaded)
        port = free_port()
        server = start_gunicorn(port)
        base = f"http://127.0.0.1:{port}"
        wait_ready(base)
        sessions = [login(base, i) for i in range(args.annotators)]  # before the clock: PBKDF2 is slow
        stats, lock = {"post": [], "healthz": [], "read": [], "api": [], "api2": []}, threading.Lock()
        stats.update(labels=0, api_labels=0, api2_labels=0, refused=0)
        with other_core_busy(args.loaded):
            deadline = time.monotonic() + args.seconds / 3
            trivial_elapsed, trivial_cpu, _ = phase(
                server, health, [(base, deadline, stats, lock)] * args.annotators
            )
            deadline = time.monotonic() + args.seconds / 3
            read_elapsed, *_ = phase(
                server, reader, [(base, s, campaign, deadline, stats, lock) for s in sessions]
            )
            rounds: dict[str, list[tuple[int, float, float, float]]] = {path: [] for path in LABEL_PATHS}
            for _round in range(args.phase_rounds):
                for path, (_name, counter) in LABEL_PATHS.items():
                    labels_before = stats[counter]
                    deadline = time.monotonic() + args.seconds / args.phase_rounds
                    if path == "web":
                        target, arguments = (
                            annotator,
                            [(base, s, i, campaign, deadline, stats, lock) for i, s in enumerate(sessions)],
                        )
                    else:
                        target, arguments = (
                            api_annotator,
                            [
                                (base, t, i, campaign, deadline, stats, lock, path == "api2")
                                for i, t in enumerate(tokens)
                            ],
                        )
                    elapsed, cpu, database = phase(server, target, arguments)
                    rounds[path].append((stats[counter] - labels_before, elapsed, cpu, database))
            load = load_average()
            stored = labels_stored()  # before the in-process measure, which stores labels of its own
            costs = in_process(campaign, tokens[0], args.rounds)
        trivial_rate = len(stats["healthz"]) / trivial_elapsed
        read_rate = len(stats["read"]) / read_elapsed
        label_rate = stats["labels"] / sum(seconds for _, seconds, *_ in rounds["web"])
        print(
            f"campaign: {tasks[0]} relevance + {tasks[1]} side-by-side tasks, overlap 3; "
            f"{args.annotators} client threads, gunicorn -w 4, "
            f"sessions and cache in {'the database' if args.no_redis else 'Redis'}; "
            f"{'loaded: one core kept busy' if args.loaded else 'quiet'}, {load}"
        )
        floor_requests, floor_elapsed, floor_cpu = floor
        print(
            f"floor (gunicorn, no Django): {floor_requests} requests in {floor_elapsed:.1f} s "
            f"({floor_requests / floor_elapsed:.1f}/s), "
            f"server CPU {floor_cpu * 1000 / floor_requests:.2f} ms each"
        )
        print(
            f"trivial: {len(stats['healthz'])} requests in {trivial_elapsed:.1f} s ({trivial_rate:.1f}/s), "
            f"server CPU {trivial_cpu * 1000 / len(stats['healthz']):.2f} ms each"
        )
        print(f"task page read: {len(stats['read'])} requests in {read_elapsed:.1f} s ({read_rate:.1f}/s)")
        for path, (name, _counter) in LABEL_PATHS.items():
            labels, seconds = (sum(round_[i] for round_ in rounds[path]) for i in (0, 1))
            per_label = [cpu * 1000 / count for count, _, cpu, _ in rounds[path] if count]
            database_per_label = [used * 1000 / count for count, _, _, used in rounds[path] if count]
            print(
                f"annotation ({name}): {labels} labels in {seconds:.1f} s ({labels / seconds:.1f} labels/s), "
                f"server CPU per label by round {', '.join(f'{value:.2f}' for value in per_label)} ms, "
                f"median {statistics.median(per_label):.2f} ms (target <= 5); "
                f"PostgreSQL's {', '.join(f'{value:.2f}' for value in database_per_label)} ms, "
                f"median {statistics.median(database_per_label):.2f} ms"
            )
        print(f"labels stored: {stored}; refused: {stats['refused']}")
        rows = (
            ("healthz (GET)", "healthz"),
            ("task page (GET)", "read"),
            ("label + next (web)", "post"),
            ("label + next (API)", "api"),
            ("label, next (2 API)", "api2"),
        )
        for name, key in rows:
            cuts = "  ".join(f"{k} {v:7.1f} ms" for k, v in percentiles(stats[key]).items())
            print(f"{name:19} n={len(stats[key]):6}  {cuts}")
        print(f"ratio task page reads/s / trivial requests/s: {read_rate / trivial_rate:.2f} (a floor)")
        print(f"ratio round trips/s / trivial requests/s: {label_rate / trivial_rate:.2f}")
        costs_print(costs)
        overfull = over_assigned()
        print(f"over-assigned tasks: {overfull}")
        connections.close_all()
        if (
            overfull
            or stats["refused"]
            or stored != stats["labels"] + stats["api_labels"] + stats["api2_labels"]
        ):
            sys.exit(1)
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGINT)  # gunicorn's quick shutdown
            server.wait(timeout=30)
        psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    main()
