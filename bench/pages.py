"""Server time of every page of the demo campaign, the first request of a fresh worker included.

    .venv/bin/python bench/pages.py [--repeat 5] [--starts 1] [--database NAME] [--loaded] [--large N]

Loads the demo into its own PostgreSQL database (judgeboard_bench_pages on BENCH_PG's server, created and
dropped here). Then, for each page, a new Python process starts as a gunicorn worker does (it imports
`config.wsgi`, in production mode), signs in the page's user, and times the page through the WSGI
application it built: the first call, then the median of --repeat more. `/healthz` (no database, no
template) is measured the same way as the floor. With --starts N each page gets N new processes, and the
table shows the median of their first calls and of their medians (on a machine shared with other work, one
first call can be tens of milliseconds off). With --loaded another process keeps one core busy while the
pages are timed (`bench/busy.py`); the load average is printed either way.

With --large N the database also holds a campaign of N queries (`bench/annotate.py`'s, eight documents a
query: 8N relevance tasks, N side by side) with 450 labels, and the table times its manager's pages too
(progress, review queue, metrics overview, quality) besides the home page, which counts every campaign: a
read that grows with a campaign's tasks, or with every campaign's documents, shows there and not on the demo.

The results pages keep their figures in the shared cache under a digest of their inputs, and the first
visit after any label computes them anew: every results page is visited once before timing (so its rows
time a worker that finds them kept), and is timed again in rows marked "computed", whose worker drops the
kept figures before each call, as a new label would make it (the interaction log's estimates stay kept: a
label does not change them).

Target: every page's first call and median ≤ 150 ms.
"""

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

from busy import load_average, other_core_busy

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE = "judgeboard_bench_pages"
TARGET_MS = 150.0


def psql(sql: str) -> None:
    subprocess.run(["psql", f"{SERVER}/postgres", "-qAt", "-c", sql], check=True, capture_output=True)


def environment(database: str, debug: bool) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": f"{SERVER}/{database}",
        "DEBUG": "1" if debug else "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "testserver",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }


# A large campaign beside the demo (`--large`): `bench/annotate.py`'s, labelled a little by its annotators.
LARGE = """
import sys
sys.path.insert(0, "bench")
import annotate
annotate.DATABASE = sys.argv[1]
annotate.setup_django(redis=False)
from django.contrib.auth import get_user_model
from annotation.models import Campaign
from annotation.services.assignment import task_next
from annotation.services.labels import judgment_submit, preference_submit
campaign = Campaign.objects.get(pk=annotate.seed(int(sys.argv[2]), 3)[0])
for annotator in get_user_model().objects.filter(username__startswith="bench"):
    for _ in range(150):
        lease = task_next(annotator=annotator, campaign=campaign)
        if lease.relevance_task_id:
            judgment_submit(annotator=annotator, task=lease.relevance_task, grade=1)
        else:
            preference_submit(annotator=annotator, task=lease.side_by_side_task, side="same")
print(campaign.pk)
"""


def large_campaign(database: str, queries: int) -> int:
    """The id of a campaign of `queries` queries with 450 labels, added to the database (`LARGE`)."""
    done = subprocess.run(
        [sys.executable, "-c", LARGE, database, str(queries)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.split()[-1])


def pages(database: str, large: int | None = None) -> list[tuple[str, str]]:
    """(user, path) of every page of the demo campaign, read from the loaded database."""
    script = """
import json, django
django.setup()
from annotation.models import Campaign, Query, RankingModel, RelevanceTask, SideBySideTask
from annotation.services.demo import DEMO_NAME
campaign = Campaign.objects.get(name=DEMO_NAME)
print(json.dumps({
    "campaign": campaign.pk,
    "model": RankingModel.objects.filter(campaign=campaign, role="experimental").first().name,
    "query": Query.objects.filter(campaign=campaign).order_by("pk").first().pk,
    "relevance": RelevanceTask.objects.filter(campaign=campaign).order_by("pk").first().pk,
    "side_by_side": SideBySideTask.objects.filter(campaign=campaign).order_by("pk").first().pk,
}))
"""
    found = json.loads(
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=environment(database, debug=True),
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    c, model = found["campaign"], found["model"]
    metrics = f"/metrics/campaigns/{c}"
    return [
        ("", "/healthz"),
        ("", "/login/"),
        ("annotator1", "/"),
        ("annotator1", f"/campaigns/{c}/work/"),
        ("manager", "/"),
        ("manager", f"/campaigns/{c}/progress/"),
        ("manager", f"/campaigns/{c}/settings/"),
        ("manager", "/people/"),
        ("manager", f"/campaigns/{c}/review/"),
        ("manager", f"/review/relevance/{found['relevance']}/"),
        ("manager", f"/review/side-by-side/{found['side_by_side']}/"),
        ("manager", f"/campaigns/{c}/labels/stamp/"),  # what an open results page polls
        ("manager", f"{metrics}/"),
        ("manager", f"{metrics}/decision/"),
        ("manager", f"{metrics}/quality/"),
        ("manager", f"{metrics}/behaviour/"),
        ("manager", f"{metrics}/compare/{model}/"),
        ("manager", f"{metrics}/compare/{model}/report.html"),
        ("manager", f"{metrics}/compare/{model}/report.json"),
        ("manager", f"{metrics}/queries/"),
        ("manager", f"{metrics}/queries/{found['query']}/"),
        ("manager", "/api/campaigns/"),
        ("manager", f"/api/campaigns/{c}/report/"),
        *(
            []
            if large is None
            else [
                ("manager", f"/campaigns/{large}/progress/"),
                ("manager", f"/campaigns/{large}/review/"),
                ("manager", f"/metrics/campaigns/{large}/"),
                ("manager", f"/metrics/campaigns/{large}/quality/"),
            ]
        ),
    ]


# The shared cache's slots a new label leaves stale (`metrics.selectors.kept.kept_slot`'s names).
KEPT_SLOTS = ("launch-report", "quality", "explorer")
COMPUTED = " (computed)"


def results_page(path: str) -> bool:
    return path.startswith("/metrics/campaigns/") or path.endswith("/report/")


def child(user: str, path: str, repeat: int) -> None:
    """One fresh worker: import the WSGI module as gunicorn does, then time the page through its handler."""
    sys.path.insert(0, str(ROOT))
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client, RequestFactory

    from config.wsgi import application  # what a worker imports before its first request

    computed = path.endswith(COMPUTED)
    path = path.removesuffix(COMPUTED)
    cache = settings.CACHES["default"]
    assert not computed or cache["BACKEND"].endswith("DatabaseCache"), "drops kept figures from the table"

    def drop_kept() -> None:
        with connection.cursor() as cursor:
            for slot in KEPT_SLOTS:
                cursor.execute(f"DELETE FROM {cache['LOCATION']} WHERE cache_key LIKE %s", [f"%:{slot}:%"])

    cookies = Client()
    if user:
        cookies.force_login(get_user_model().objects.get(username=user))
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in cookies.cookies.items())

    def call(url: str) -> tuple[str, dict]:
        environ = RequestFactory().get(url, secure=True, HTTP_COOKIE=cookie).environ
        started = []

        def start_response(status, headers, exc_info=None):
            started.append((status, headers))

        b"".join(application(environ, start_response))
        status, headers = started[0]
        return status, dict(headers)

    def timed() -> tuple[float, str]:
        if computed:
            drop_kept()
        start = time.perf_counter()
        status, headers = call(path)
        if status.startswith("302"):  # the workbench sends an annotator on to their task
            status, _ = call(headers["Location"])
        return (time.perf_counter() - start) * 1000, status.split()[0]

    first, status = timed()
    rest = [timed()[0] for _ in range(repeat)]
    print(json.dumps({"first": first, "median": statistics.median(rest), "status": status}))


def start(user: str, path: str, repeat: int, env: dict) -> dict:
    """One new process's first call and median of `path`."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", user, path, "--repeat", str(repeat)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--starts", type=int, default=1, help="new processes per page")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--loaded", action="store_true", help="keep one core busy while timing")
    parser.add_argument("--large", type=int, metavar="N", help="also a campaign of N queries, and its pages")
    parser.add_argument("--child", nargs=2, metavar=("USER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, repeat=args.repeat)
        return

    psql(f"DROP DATABASE IF EXISTS {args.database}")
    psql(f"CREATE DATABASE {args.database}")
    try:
        setup = environment(args.database, debug=True)
        production = environment(args.database, debug=False)
        for command, env in ((["migrate", "--noinput"], setup), (["load_demo"], setup)) + (
            (["collectstatic", "--noinput"], production),  # the manifest production mode serves from
        ):
            subprocess.run(
                [sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True
            )
        large = None if args.large is None else large_campaign(args.database, args.large)
        listed = pages(args.database, large)
        for user, path in listed:
            if results_page(path):
                start(user, path, 1, production)  # its figures computed and kept
        listed += [(user, path + COMPUTED) for user, path in listed if results_page(path)]
        rows = []
        with other_core_busy(args.loaded):
            measured = [
                (user, path, [start(user, path, args.repeat, production) for _ in range(args.starts)])
                for user, path in listed
            ]
            load = load_average()
        for user, path, starts in measured:
            times = {key: statistics.median(result[key] for result in starts) for key in ("first", "median")}
            rows.append((user or "-", path, {**times, "status": starts[-1]["status"]}))
    finally:
        psql(f"DROP DATABASE IF EXISTS {args.database}")

    print(f"{'loaded: one core kept busy' if args.loaded else 'quiet'}; {load}")
    print(f"{'user':<11} {'page':<52} {'status':>6} {'first ms':>9} {'median ms':>10}")
    for user, path, result in rows:
        first, median = result["first"], result["median"]
        print(f"{user:<11} {path:<52} {result['status']:>6} {first:>9.1f} {median:>10.1f}")
    worst_first = max(result["first"] for *_, result in rows)
    worst_median = max(result["median"] for *_, result in rows)
    floor = rows[0][2]["median"]
    print(f"slowest first call {worst_first:.1f} ms, slowest median {worst_median:.1f} ms", end=" ")
    print(f"(target ≤ {TARGET_MS:.0f})")
    print(f"slowest median / /healthz median: {worst_median / floor:.1f}")


if __name__ == "__main__":
    main()
