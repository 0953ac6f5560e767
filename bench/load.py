"""50 simulated annotators on the REST API of two gunicorn servers sharing one PostgreSQL database.

    .venv/bin/python -m bench.load [--annotators 50] [--seconds 30] [--queries 300]

Creates and drops its own database (judgeboard_bench_load) on BENCH_PG's server. Two servers (gunicorn -w 4
each) listen on different loopback ports; annotators alternate between them. Each gets a token from
POST /api/auth/token/, then loops: POST next-task (200 a task, 204 nothing left), POST the label, until time
is up. Afterwards: no task holds more labels than its overlap, and every 201 answered is a label in the
database (and nothing else is). Prints throughput and latency percentiles; exits non-zero on a failure.
"""

import argparse
import os
import random
import signal
import sys
import threading
import time
from collections import Counter

from bench import annotate

DATABASE = "judgeboard_bench_load"
annotate.DATABASE = DATABASE  # annotate's helpers (Django setup, gunicorn) use this database


def get_token(base: str, index: int) -> str:
    body = {"username": f"bench{index}", "password": annotate.PASSWORD}
    response = annotate.client(base).post(f"{base}/api/auth/token/", json=body, timeout=30)
    response.raise_for_status()
    return response.json()["token"]


def annotator(base: str, token: str, index: int, campaign: int, deadline: float, stats: dict, lock):
    rng = random.Random(index)
    session = annotate.client(base)
    session.headers["Authorization"] = f"Token {token}"
    nexts, labels, created, statuses = [], [], [], Counter()
    while time.monotonic() < deadline:
        started = time.perf_counter()
        response = session.post(f"{base}/api/campaigns/{campaign}/next-task/")
        nexts.append(time.perf_counter() - started)
        statuses[response.status_code] += 1
        if response.status_code != 200:
            break  # 204: nothing left for this annotator
        task = response.json()
        started = time.perf_counter()
        body = annotate.api_label(rng, task["kind"])
        response = session.post(f"{base}/api/tasks/{task['id']}/judgment/", json=body)
        labels.append(time.perf_counter() - started)
        statuses[response.status_code] += 1
        if response.status_code == 201:
            created.append(task["id"])
    with lock:
        stats["next"] += nexts
        stats["label"] += labels
        stats["created"] += created
        stats["statuses"].update(statuses)


def labels_missing(created: list[int]) -> int:
    """201s whose label is not in the database (the assignment submitted, its annotator's label there)."""
    from django.db.models import Exists, OuterRef, Q

    from annotation.models import Assignment, Judgment, Preference

    judged = Judgment.objects.filter(task=OuterRef("relevance_task"), annotator=OuterRef("annotator"))
    preferred = Preference.objects.filter(task=OuterRef("side_by_side_task"), annotator=OuterRef("annotator"))
    stored = Assignment.objects.filter(pk__in=created, status=Assignment.Status.SUBMITTED).filter(
        Q(Exists(judged)) | Q(Exists(preferred))
    )
    return len(set(created)) - stored.count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()

    os.environ["LOGIN_THROTTLE_RATE"] = "100000/min"  # every annotator logs in from this one address
    annotate.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    annotate.psql(f"CREATE DATABASE {DATABASE}")
    servers = []
    try:
        annotate.setup_django(redis=False)  # sessions and the cache in the shared database, as before
        campaign, _ = annotate.seed(args.queries, args.annotators)  # tokens come from the API below
        from django.db import connections

        from annotation.models import RelevanceTask, SideBySideTask

        tasks = RelevanceTask.objects.count(), SideBySideTask.objects.filter(lists_identical=False).count()
        connections.close_all()
        bases = []
        for _ in range(2):
            port = annotate.free_port()
            servers.append(annotate.start_gunicorn(port))
            bases.append(f"http://127.0.0.1:{port}")
        for base in bases:
            annotate.wait_ready(base)
        tokens = [get_token(bases[i % 2], i) for i in range(args.annotators)]  # before the clock
        stats = {"next": [], "label": [], "created": [], "statuses": Counter()}
        lock = threading.Lock()
        started = time.monotonic()
        deadline = started + args.seconds
        threads = [
            threading.Thread(target=annotator, args=(bases[i % 2], token, i, campaign, deadline, stats, lock))
            for i, token in enumerate(tokens)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        created = stats["created"]
        stored = annotate.labels_stored()  # answers to repeats included: each had its 201
        requests_made = len(stats["next"]) + len(stats["label"])
        print(
            f"campaign: {tasks[0]} relevance + {tasks[1]} side-by-side tasks, overlap 3; {args.annotators} "
            f"annotators on 2 servers (gunicorn -w 4 each), one PostgreSQL database, {elapsed:.1f} s"
        )
        print(
            f"requests: {requests_made} ({requests_made / elapsed:.1f}/s); labels created (201): "
            f"{len(created)} ({len(created) / elapsed:.1f}/s); stored: {stored}"
        )
        print("statuses: " + ", ".join(f"{code}: {n}" for code, n in sorted(stats["statuses"].items())))
        for name, key in (("next-task", "next"), ("judgment", "label")):
            cuts = annotate.percentiles(stats[key])
            print(
                f"{name:10} n={len(stats[key]):6}  " + "  ".join(f"{k} {v:7.1f} ms" for k, v in cuts.items())
            )
        overfull, missing = annotate.over_assigned(), labels_missing(created)
        print(f"over-assigned tasks: {overfull}; 201s without their label: {missing}")
        connections.close_all()
        server_errors = sum(n for code, n in stats["statuses"].items() if code >= 500)
        if overfull or missing or stored != len(created) or server_errors:
            sys.exit(1)
    finally:
        for server in servers:
            os.killpg(server.pid, signal.SIGINT)  # gunicorn's quick shutdown
            server.wait(timeout=30)
        annotate.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    main()
