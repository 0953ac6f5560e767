"""A soak: 100 annotators, 5 reviewers and 2 managers on a threaded gunicorn over PostgreSQL, a fresh
campaign, for 3 minutes, with a `db_worker` killed once in the middle of a browser import.

    .venv/bin/python -m bench.soak [--seconds 180] [--annotators 100] [--reviewers 5] [--managers 2]
                                   [--workers 4] [--threads 8] [--queries 300] [--import-queries 5000]

Creates and drops its own database (judgeboard_bench_soak on BENCH_PG's server). The server is
`gunicorn -w WORKERS --threads THREADS`, in production mode, the cache in the database. At the clock's
start every annotator asks for a task at once (a fresh campaign's start), then each loops over the REST API:
next task, label. Reviewers loop over the review queue: the first task nobody else holds, read (which holds
it), a final label sent with the version read (409 `stale` when another reviewer changed it since: counted,
not an error). Managers, signed in on the pages, read the overview, the review queue, the quality page, the
query explorer, the progress page and the home page in turn; one of them, a third into the run, uploads a
new campaign (IMPORT_QUERIES queries, 105 ranking rows each) through the browser import, confirms it, and
the bench kills (SIGKILL) the `db_worker` importing it once rows are being written; a new worker starts,
the page shows the import stopped once its heartbeat falls silent, the manager retries it, and it completes.

It fails (exit 1) unless: no answer was a 5xx (or a connection error); every 2xx label is in the database,
and every 2xx final label one revision; no task holds more labels than its overlap; PostgreSQL counted no
deadlock in the database (`pg_stat_database.deadlocks`) nor logged one (BENCH_PG_LOG, when readable); the
import completed after the kill. Prints the figures, the load average before and after, and the command.
"""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench import annotate, load

DATABASE = "judgeboard_bench_soak"
annotate.DATABASE = DATABASE  # annotate's helpers (Django setup, seed) use this database
PG_LOG = Path(os.environ.get("BENCH_PG_LOG", "/var/log/postgresql/postgresql-15-main.log"))
WORKER_TIMEOUT = 5.0  # IMPORT_WORKER_TIMEOUT_SECONDS of the server and the workers
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Tally:
    """Answers by client kind and status, latencies, and what the 2xx answers said was stored."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses: dict[str, Counter] = {}
        self.times: dict[str, list[float]] = {}
        self.labels: list[int] = []  # assignment ids answered 201
        self.finals = 0  # final labels answered 200
        self.errors: list[str] = []

    def request(self, kind: str, session, method: str, url: str, **options):
        started = time.perf_counter()
        try:
            response = session.request(method, url, timeout=120, **options)
        except Exception as error:  # noqa: BLE001 - a dropped connection counts as a failure
            with self.lock:
                self.statuses.setdefault(kind, Counter())["error"] += 1
                self.errors.append(f"{kind} {method} {url}: {error!r}")
            return None
        elapsed = time.perf_counter() - started
        with self.lock:
            self.statuses.setdefault(kind, Counter())[response.status_code] += 1
            self.times.setdefault(kind, []).append(elapsed)
            if response.status_code >= 500:
                self.errors.append(f"{kind} {method} {url}: {response.status_code} {response.text[:200]}")
        return response


def api_session(base: str, token: str):
    session = annotate.client(base)
    session.headers["Authorization"] = f"Token {token}"
    return session


def page_session(base: str, username: str):
    session = annotate.client(base)
    form = session.get(f"{base}/login/")
    data = {
        "username": username,
        "password": annotate.PASSWORD,
        "csrfmiddlewaretoken": CSRF.search(form.text)[1],
    }
    session.post(f"{base}/login/", data=data, allow_redirects=False).raise_for_status()
    return session


def annotator(base, token, index, campaign, start, clock, tally: Tally) -> None:
    rng = random.Random(index)
    session = api_session(base, token)
    start.wait()
    deadline = clock["deadline"]
    while time.monotonic() < deadline:
        task = tally.request(
            "annotator next-task", session, "POST", f"{base}/api/campaigns/{campaign}/next-task/"
        )
        if task is None or task.status_code != 200:
            return  # 204: nothing left for them; else counted
        body = task.json()
        answer = annotate.api_label(rng, body["kind"])
        stored = tally.request(
            "annotator label", session, "POST", f"{base}/api/tasks/{body['id']}/judgment/", json=answer
        )
        if stored is not None and stored.status_code == 201:
            with tally.lock:
                tally.labels.append(body["id"])


def reviewer(base, token, index, campaign, start, clock, think, tally: Tally) -> None:
    rng = random.Random(1000 + index)
    session = api_session(base, token)
    start.wait()
    deadline = clock["deadline"]
    while time.monotonic() < deadline:
        time.sleep(think)
        queue = tally.request(
            "reviewer queue", session, "GET", f"{base}/api/campaigns/{campaign}/review-queue/"
        )
        if queue is None or queue.status_code != 200:
            continue
        for item in queue.json()["results"][:10]:
            if item["held_by"] not in (None, f"reviewer{index}"):
                continue
            url = f"{base}/api/review/{item['kind'].replace('_', '-')}/{item['task_id']}/"
            read = tally.request("reviewer task", session, "GET", url)
            if read is None or read.status_code != 200:
                break
            task = read.json()
            if task["held_by"] is not None:
                continue  # another reviewer opened it first
            if task["kind"] == "relevance":
                label = {"grade": rng.choice([0, 1, 2, 3])}
            else:
                label = {"verdict": rng.choice(["good", "same", "bad"])}
            body = {**label, "reason": "soak", "version": task["version"]}
            final = tally.request("reviewer final label", session, "POST", url + "adjudication/", json=body)
            if final is not None and final.status_code == 200:
                with tally.lock:
                    tally.finals += 1
            break


def manager(base, username, campaign, start, clock, think, tally: Tally) -> None:
    session = page_session(base, username)
    pages = [
        f"/metrics/campaigns/{campaign}/",
        f"/campaigns/{campaign}/review/",
        f"/metrics/campaigns/{campaign}/quality/",
        f"/metrics/campaigns/{campaign}/queries/",
        f"/campaigns/{campaign}/progress/",
        "/",
    ]
    start.wait()
    deadline = clock["deadline"]
    turn = 0
    while time.monotonic() < deadline:
        time.sleep(think)
        tally.request("manager page", session, "GET", base + pages[turn % len(pages)])
        turn += 1


def import_files(folder: Path, queries: int) -> None:
    """bundle.json (the queries; the runs' documents are created bare), online.run (100 deep), exp.run (5)."""
    bundle = {
        "name": "Soak import",
        "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
        "queries": [{"id": f"q{q}", "text": f"query {q}"} for q in range(queries)],
        "documents": [],
    }
    (folder / "bundle.json").write_text(json.dumps(bundle))
    for model, shift, depth in (("online", 0, 100), ("exp", 1, 5)):
        with (folder / f"{model}.run").open("w") as run:
            for q in range(queries):
                run.writelines(
                    f"q{q} Q0 d{(q * 7 + r + shift) % 50_000} {r + 1} {depth - r} {model}\n"
                    for r in range(depth)
                )


class Workers:
    """`manage.py db_worker` processes with the server's environment."""

    def __init__(self, folder: Path):
        self.folder, self.processes = folder, []

    def start(self) -> subprocess.Popen:
        command = [
            sys.executable,
            "manage.py",
            "db_worker",
            "--no-reload",
            "--no-startup-delay",
            "--interval",
            "0.2",
        ]
        log = (self.folder / f"worker-{len(self.processes)}.log").open("w")
        self.processes.append(
            subprocess.Popen(
                command, cwd=annotate.ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        )
        return self.processes[-1]

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=60)


def wait_for(condition, seconds: float, what: str, events: list):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.1)
    events.append(f"gave up waiting for {what}")
    return None


def importer(base, username, folder, workers: Workers, start, delay, tally: Tally, events: list) -> None:
    """The manager's browser import, its worker killed once while it writes rows, then retried."""
    session = page_session(base, username)
    start.wait()
    time.sleep(delay)
    form = session.get(f"{base}/campaigns/new/")
    with (
        (folder / "bundle.json").open("rb") as bundle,
        (folder / "online.run").open("rb") as online,
        (folder / "exp.run").open("rb") as exp,
    ):
        files = {"bundle": bundle, "run_file_0": online, "run_file_1": exp}
        data = {
            "run_model_0": "online",
            "run_model_1": "exp",
            "csrfmiddlewaretoken": CSRF.search(form.text)[1],
        }
        posted = tally.request(
            "manager import", session, "POST", f"{base}/campaigns/new/", data=data, files=files
        )
    if posted is None or "/campaigns/imports/" not in posted.url:
        events.append(f"the upload was not staged: {posted and posted.status_code}")
        return
    page_url = posted.url
    staged = int(page_url.rstrip("/").rsplit("/", 1)[1])
    status_url = f"{base}/campaigns/imports/{staged}/status/"

    def status() -> dict:
        answer = tally.request("manager import status", session, "GET", status_url)
        return answer.json() if answer is not None and answer.status_code == 200 else {}

    def act(action: str) -> None:
        page = session.get(page_url)
        data = {"action": action, "csrfmiddlewaretoken": CSRF.search(page.text)[1]}
        tally.request("manager import", session, "POST", page_url, data=data)

    worker = workers.start()
    if not wait_for(lambda: status().get("status") == "ready", 300, "the import's check", events):
        return
    act("confirm")
    rows = wait_for(lambda: (status().get("progress") or {}).get("rows"), 300, "rows being imported", events)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=60)
    events.append(f"db_worker killed (SIGKILL) with {rows} ranking rows written")
    workers.start()  # the next worker, as a supervisor would start
    if wait_for(
        lambda: status().get("status") == "stopped", 60 * WORKER_TIMEOUT, "the import shown stopped", events
    ):
        events.append("the import page showed it stopped")
        act("retry")
        if wait_for(lambda: status().get("status") == "done", 600, "the retried import's end", events):
            events.append("the retried import completed")


def deadlocks_counted() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def deadlocks_logged() -> int | None:
    try:
        return PG_LOG.read_text(errors="replace").count("deadlock detected")
    except OSError:
        return None


def imports_done() -> int:
    from annotation.models import CampaignImport

    return CampaignImport.objects.filter(status=CampaignImport.Status.DONE).count()


def start_gunicorn(port: int, workers: int, threads: int) -> subprocess.Popen:
    collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"]
    subprocess.run(collect, cwd=annotate.ROOT, check=True)
    command = [
        str(annotate.ROOT / ".venv/bin/gunicorn"),
        "config.wsgi",
        "-w",
        str(workers),
        "--threads",
        str(threads),
    ]
    command += ["-b", f"127.0.0.1:{port}"]
    return subprocess.Popen(command, cwd=annotate.ROOT, start_new_session=True)


def people(args) -> dict[str, list[str]]:
    """Reviewers and managers beside `annotate.seed`'s annotators, with tokens (reviewers) and passwords."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group

    from annotation.services.tokens import token_get_or_create

    User, password = get_user_model(), make_password(annotate.PASSWORD)
    tokens = {}
    for role, count in (("reviewer", args.reviewers), ("manager", args.managers)):
        users = User.objects.bulk_create(User(username=f"{role}{i}", password=password) for i in range(count))
        Group.objects.get(name=role).user_set.add(*users)
        tokens[role] = [token_get_or_create(user=user).key for user in users]
    return tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--reviewers", type=int, default=5)
    parser.add_argument("--managers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--import-queries", type=int, default=5000)
    parser.add_argument(
        "--think", type=float, default=0.5, help="seconds between a reviewer's or manager's steps"
    )
    args = parser.parse_args()

    load_before = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="soak-"))
    os.environ.update(
        {"IMPORTS_DIR": str(folder / "imports"), "IMPORT_WORKER_TIMEOUT_SECONDS": str(WORKER_TIMEOUT)}
    )
    annotate.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    annotate.psql(f"CREATE DATABASE {DATABASE}")
    server, workers = None, Workers(folder)
    try:
        annotate.setup_django(redis=False)
        campaign, tokens = annotate.seed(args.queries, args.annotators)
        staff = people(args)
        import_files(folder, args.import_queries)
        from django.db import connections

        from annotation.models import LabelRevision, RelevanceTask, SideBySideTask

        tasks = RelevanceTask.objects.count(), SideBySideTask.objects.filter(lists_identical=False).count()
        deadlocks, logged = deadlocks_counted(), deadlocks_logged()
        connections.close_all()
        port = annotate.free_port()
        server = start_gunicorn(port, args.workers, args.threads)
        base = f"http://127.0.0.1:{port}"
        annotate.wait_ready(base)

        tally, events = Tally(), []
        clients = args.annotators + args.reviewers + args.managers + 1
        start, clock = threading.Barrier(clients + 1), {"deadline": 0.0}
        threads = [
            threading.Thread(target=annotator, args=(base, token, i, campaign, start, clock, tally))
            for i, token in enumerate(tokens)
        ]
        threads += [
            threading.Thread(
                target=reviewer, args=(base, token, i, campaign, start, clock, args.think, tally)
            )
            for i, token in enumerate(staff["reviewer"])
        ]
        threads += [
            threading.Thread(
                target=manager, args=(base, f"manager{i}", campaign, start, clock, args.think, tally)
            )
            for i in range(args.managers)
        ]
        importing = (base, "manager0", folder, workers, start, args.seconds / 3, tally, events)
        threads.append(threading.Thread(target=importer, args=importing))
        for thread in threads:
            thread.start()
        clock["deadline"] = time.monotonic() + args.seconds  # read by each client once the barrier opens
        started = time.monotonic()
        start.wait()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started

        stored = annotate.labels_stored()
        missing = load.labels_missing(tally.labels)
        finals_stored = LabelRevision.objects.filter(kind=LabelRevision.Kind.ADJUDICATION).count()
        overfull = annotate.over_assigned()
        time.sleep(1)  # the backends' statistics reach pg_stat_database within a second
        deadlocks = deadlocks_counted() - deadlocks
        logged = None if logged is None else deadlocks_logged() - logged
        completed = imports_done()
        connections.close_all()
        load_after = os.getloadavg()

        server_errors = sum(
            n
            for counts in tally.statuses.values()
            for code, n in counts.items()
            if code == "error" or code >= 500
        )
        two_xx = sum(
            n
            for counts in tally.statuses.values()
            for code, n in counts.items()
            if code != "error" and 200 <= code < 300
        )
        print(" ".join(["command:", sys.executable, "-m", "bench.soak", *sys.argv[1:]]))
        print(
            f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before "
            f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after "
            f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {os.cpu_count()} cores"
        )
        print(
            f"server: gunicorn -w {args.workers} --threads {args.threads}, PostgreSQL, cache in the "
            f"database; campaign: {tasks[0]} relevance + {tasks[1]} side-by-side tasks, overlap 3"
        )
        print(
            f"clients: {args.annotators} annotators, {args.reviewers} reviewers, {args.managers} managers, "
            f"{elapsed:.0f} s"
        )
        for kind in sorted(tally.statuses):
            counts = tally.statuses[kind]
            cuts = annotate.percentiles(tally.times.get(kind, [0.0]))
            figures = "  ".join(f"{k} {v:.0f} ms" for k, v in cuts.items())
            print(
                f"  {kind:24} "
                + ", ".join(f"{code}: {n}" for code, n in sorted(counts.items(), key=str))
                + f"   {figures}"
            )
        print(f"2xx answers: {two_xx}; 5xx or dropped: {server_errors}")
        print(
            f"labels answered 201: {len(tally.labels)}; stored (labels and repeats' answers): {stored}; "
            f"201s without their label: {missing}"
        )
        print(f"final labels answered 200: {tally.finals}; their revisions stored: {finals_stored}")
        print(f"tasks over their overlap: {overfull}")
        shown = "not readable" if logged is None else logged
        print(f"deadlocks: pg_stat_database {deadlocks}, server log {shown}")
        print(f"import: {'; '.join(events)}; imports done: {completed}")
        for error in tally.errors[:10]:
            print("  " + error)
        failed = (
            server_errors
            or missing
            or stored != len(tally.labels)
            or finals_stored != tally.finals
            or overfull
            or deadlocks
            or logged
            or completed != 1
        )
        if failed:
            sys.exit(1)
    finally:
        workers.stop()
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:  # a worker thread still in a client's keep-alive
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=30)
        annotate.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    main()
