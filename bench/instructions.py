"""Instructions a label costs a process, counted by Valgrind rather than timed: a count that the machine's
speed and load do not move, for comparing two versions of the round trip.

    flock /tmp/bench.lock .venv/bin/python bench/instructions.py [--labels 100] [--no-redis]

Seeds a campaign as bench/annotate.py does, in a database of its own (BENCH_DATABASE, by default
judgeboard_bench_instructions), then for each label path (web, API `?next=true`, API in two requests) runs
one process under `valgrind --tool=callgrind --instr-atstart=no`: it signs in, labels 30 tasks to warm up,
turns the count on (`callgrind_control -i on`), labels `--labels` tasks, and turns it off. Prints each
path's instructions a label, in millions. The paths take their turns on the one campaign, each going on
from where the one before left it, in any version alike. Django's test client is counted with the server's
work (the same in any two versions compared); PostgreSQL and Redis are not (other processes). The count
moves by about 1–2 % between runs of the same code (which tasks come up, a cache's state). Needs Valgrind
(`apt-get install valgrind`).
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import annotate

ROOT = Path(__file__).resolve().parent.parent
DATABASE = os.environ.get("BENCH_DATABASE", "judgeboard_bench_instructions")
PATHS = ("web", "API ?next=true", "API, two requests")
WARM_LABELS = 30
COUNTED = re.compile(r"I\s+refs:\s+([\d,]+)")


def labeller(path: str, campaign: int, token: str):
    if path == "web":
        browser, page = annotate.workbench_open(campaign, "bench0")
        return lambda: annotate.web_label(browser, page)
    return annotate.api_labeller(campaign, token, two_requests=path == PATHS[2])


def child(path: str, labels: int, redis: bool, seeded: dict) -> None:
    """Under Valgrind: warm up, then label with the count on."""
    annotate.setup_django(redis=redis)
    label = labeller(path, seeded["campaign"], seeded["tokens"][0])
    for _ in range(WARM_LABELS):
        label()
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
    for _ in range(labels):
        label()
    subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)


def counted(path: str, labels: int, redis: bool, seeded: dict) -> float:
    """Millions of instructions a label on `path`, in a new process under Valgrind."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--child",
        path,
        "--labels",
        str(labels),
        "--seeded",
        json.dumps(seeded),
        *([] if redis else ["--no-redis"]),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    found = COUNTED.search(done.stderr)
    if done.returncode or found is None:
        raise SystemExit(f"{path}: valgrind failed ({done.returncode})\n{done.stderr[-3000:]}")
    return int(found[1].replace(",", "")) / labels / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=100, help="labels counted a path")
    parser.add_argument("--no-redis", action="store_true", help="sessions and cache in the database")
    parser.add_argument("--child", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--seeded", help=argparse.SUPPRESS)
    args = parser.parse_args()
    annotate.DATABASE = DATABASE
    redis = not args.no_redis
    if args.child:
        child(args.child, args.labels, redis, json.loads(args.seeded))
        return
    annotate.setup_django(redis=redis)  # the settings collectstatic and the seeding need
    annotate.static_collect()  # the pages name their static files by the manifest
    annotate.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    annotate.psql(f"CREATE DATABASE {DATABASE}")
    try:
        campaign, tokens = annotate.seed(2000, 5)
        seeded = {"campaign": campaign, "tokens": tokens}
        revision = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True)
        print(
            f"{revision.stdout.decode().strip()}: {args.labels} labels a path after {WARM_LABELS}, "
            f"sessions and cache in {'Redis' if redis else 'the database'}"
        )
        for path in PATHS:
            instructions = counted(path, args.labels, redis, seeded)
            print(f"{path:20s} {instructions:7.3f} M instructions a label", flush=True)
    finally:
        annotate.psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    main()
