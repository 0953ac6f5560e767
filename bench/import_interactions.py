"""Time `import_interactions` on a 10,000,000-impression log against `psql \\copy` of the same rows.

    flock /tmp/bench.lock .venv/bin/python bench/import_interactions.py [--impressions 10000000] [--gzip]

Creates and drops its own database (judgeboard_bench_interactions) on BENCH_PG's server: a campaign of 10,000
queries and two models, then a log of lists 10 deep (sessions of 3 lists, a click on about one impression in
eight, a dwell for each click, some carts, purchases and ratings; a fifth of the documents new to the
campaign). The peer, measured in the same run, is `psql \\copy` of the rows our import wrote (dumped as
text) into a bare copy of the impressions table with the same indexes and checks: the floor for getting
those rows into PostgreSQL. The ratio says what reading, checking JSON line by line and mapping ids cost on
top. Memory: the import's peak RSS less that of the same command only starting (`--help`).
"""

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from import_run import psql, timed  # bench/ is the script's folder, so on its path

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE = "judgeboard_bench_interactions"
QUERIES, DEPTH, RUN_DEPTH = 10_000, 10, 8


def write_inputs(folder: Path, impressions: int, zipped: bool) -> tuple[Path, Path, Path]:
    """The campaign's bundle, its two runs (8 deep: positions 9 and 10 show documents new to the campaign)
    and the log."""
    rng = random.Random(7)
    bundle = {
        "name": "bench interactions",
        "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
        "queries": [{"id": f"q{q}", "text": f"query {q}"} for q in range(QUERIES)],
        "documents": [],
    }
    bundle_path = folder / "bundle.json"
    bundle_path.write_text(json.dumps(bundle))
    lists = {}
    for model, shift in (("online", 0), ("exp", 1)):
        lists[model] = [[f"d{q}-{(r + shift) % DEPTH}" for r in range(DEPTH)] for q in range(QUERIES)]
    run_paths = []
    for model in lists:
        path = folder / f"{model}.run"
        with path.open("w") as run:
            for q, documents in enumerate(lists[model]):
                run.writelines(
                    f"q{q} Q0 {d} {r} {DEPTH - r} {model}\n" for r, d in enumerate(documents[:RUN_DEPTH], 1)
                )
        run_paths.append(path)
    log_path = folder / ("log.jsonl.gz" if zipped else "log.jsonl")
    opener = gzip.open if zipped else open
    with opener(log_path, "wt") as log:
        for request in range(impressions // DEPTH):
            session = request // 3
            model = "online" if session % 2 == 0 else "exp"
            q = rng.randrange(QUERIES)
            lines = []
            for position, document in enumerate(lists[model][q], 1):
                clicked = rng.random() < 0.25 / position**0.5
                row = {
                    "query": f"q{q}",
                    "model": model,
                    "request": f"r{request}",
                    "session": f"s{session}",
                    "position": position,
                    "document": document,
                    "clicked": clicked,
                }
                if clicked:
                    row["dwell"] = round(rng.expovariate(1 / 40), 1)
                    if rng.random() < 0.2:
                        row["cart"] = True
                        if rng.random() < 0.4:
                            row["purchase"] = True
                            row["rating"] = rng.randint(1, 5)
                lines.append(json.dumps(row, separators=(",", ":")) + "\n")
            log.writelines(lines)
    return bundle_path, run_paths, log_path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--impressions", type=int, default=10_000_000)
    parser.add_argument("--gzip", action="store_true", help="write the log gzipped")
    args = parser.parse_args()
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{DATABASE}", "DEBUG": "1"}
    manage = [sys.executable, "manage.py"]
    psql(f"DROP DATABASE IF EXISTS {DATABASE}")
    psql(f"CREATE DATABASE {DATABASE}")
    try:
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        with tempfile.TemporaryDirectory() as tmp:
            bundle, (online, exp), log = write_inputs(Path(tmp), args.impressions, args.gzip)
            runs = ["--run", f"online={online}", "--run", f"exp={exp}"]
            subprocess.run([*manage, "import_campaign", str(bundle), *runs], cwd=ROOT, env=env, check=True)
            _, idle_rss = timed([*manage, "import_interactions", "--help"], env)
            ours, ours_rss = timed([*manage, "import_interactions", "bench interactions", str(log)], env)
            rows = int(psql("SELECT count(*) FROM annotation_impression", DATABASE))
            assert rows == args.impressions, f"expected {args.impressions} impressions, found {rows}"
            dump = Path(tmp) / "rows.tsv"
            columns = (
                "campaign_id, log_id, query_id, model_id, document_id, request, session, position, clicked, "
                "dwell, cart, purchase, rating"
            )
            psql(f"\\copy (SELECT {columns} FROM annotation_impression) TO '{dump}'", DATABASE)
            psql(
                "CREATE TABLE bare_impression (LIKE annotation_impression INCLUDING DEFAULTS INCLUDING "
                "CONSTRAINTS INCLUDING INDEXES INCLUDING IDENTITY)",
                DATABASE,
            )
            copy = f"\\copy bare_impression ({columns}) FROM '{dump}'"
            peer, _ = timed(["psql", f"{SERVER}/{DATABASE}", "-q", "-v", "ON_ERROR_STOP=1", "-c", copy], env)
            size = log.stat().st_size
    finally:
        psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    with open("/proc/loadavg") as loadavg:
        load = " ".join(loadavg.read().split()[:3])
    print(f"impressions: {rows:,}; log file: {size / 2**20:.0f} MiB{' (gzipped)' if args.gzip else ''}")
    print(f"import_interactions: {ours:.1f} s ({rows / ours:,.0f} impressions/s)")
    print(f"psql \\copy of the same rows: {peer:.1f} s")
    print(f"ratio (ours / COPY): {ours / peer:.1f}")
    own = ours_rss - idle_rss
    print(f"peak RSS {ours_rss / 2**20:.0f} MiB; less start-up alone ({idle_rss / 2**20:.0f} MiB): ", end="")
    print(f"{own / 2**20:.0f} MiB")
    print(f"load average at the end: {load}")


if __name__ == "__main__":
    main()
