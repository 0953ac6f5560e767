"""Time `import_campaign --run` on two different TREC runs against PostgreSQL's own COPY of the same rows.

    flock /tmp/bench.lock .venv/bin/python bench/import_run.py [--queries 10000] [--depth 100] [--repeat 3]
        [--loaded]

Creates and drops its own database (judgeboard_bench_import) on BENCH_PG's server. The peer, measured in
the same run, is `COPY` of the run's rows into a bare table: the floor for getting a million rows into
PostgreSQL. The ratio says what start-up, validation, id mapping, pooling and constraints cost on top.
Memory is the import process's peak RSS less that of the same command only starting (`--help`), over the
size of the runs it reads. Each of --repeat rounds imports into a new database, then copies; the medians are
printed. With --loaded another process keeps one core busy throughout (`bench/busy.py`).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from busy import load_average, other_core_busy

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE = "judgeboard_bench_import"


def psql(sql: str, database: str = "postgres") -> str:
    return subprocess.run(
        ["psql", f"{SERVER}/{database}", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def write_inputs(folder: Path, queries: int, depth: int) -> tuple[Path, list[Path]]:
    """The bundle and two different runs over the same queries (each model ranks its own documents)."""
    documents = queries * 20  # runs share documents across queries, as real ones do
    bundle = {
        "name": "bench import",
        "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
        "queries": [{"id": f"q{q}", "text": f"query {q}"} for q in range(queries)],
        "documents": [],
        "rankings": [],
    }
    bundle_path = folder / "bundle.json"
    bundle_path.write_text(json.dumps(bundle))
    runs = []
    for seed, model in ((7, "online"), (8, "exp")):
        rng = random.Random(seed)
        run_path = folder / f"{model}.trec"
        with run_path.open("w") as out:
            for q in range(queries):
                for rank, doc in enumerate(rng.sample(range(documents), depth), start=1):
                    out.write(f"q{q} Q0 doc{doc} {rank} {1000 - rank:.4f} {model}\n")
        runs.append(run_path)
    return bundle_path, runs


def listed(values: list[float]) -> str:
    return ", ".join(f"{value:.2f}" for value in values)


def timed(command: list[str], env: dict) -> tuple[float, int]:
    """Wall seconds and peak RSS in bytes of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode()
    if child.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{errors}")
    return elapsed, usage.ru_maxrss * 1024  # kilobytes on Linux


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--loaded", action="store_true", help="keep one core busy while measuring")
    args = parser.parse_args()
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{DATABASE}", "DEBUG": "1"}
    lines = args.queries * args.depth
    ours, peers, peaks = [], [], []
    with tempfile.TemporaryDirectory() as tmp, other_core_busy(args.loaded):
        bundle, runs = write_inputs(Path(tmp), args.queries, args.depth)
        size = sum(run.stat().st_size for run in runs)
        _, idle_rss = timed([sys.executable, "manage.py", "import_campaign", "--help"], env)
        for _ in range(args.repeat):
            psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
            psql(f"CREATE DATABASE {DATABASE}")
            try:
                subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
                command = [sys.executable, "manage.py", "import_campaign", str(bundle)]
                seconds, rss = timed([*command, "--run", f"online={runs[0]}", "--run", f"exp={runs[1]}"], env)
                ours.append(seconds)
                peaks.append(rss)
                # Each list holds its documents' ids as 8-byte integers.
                rows = int(psql("SELECT sum(octet_length(documents)) / 8 FROM annotation_ranking", DATABASE))
                assert rows == 2 * lines, f"expected {2 * lines} ranking rows, found {rows}"
                psql(
                    "CREATE TABLE bare_run (qid text, q0 text, docid text, rank int, score float8, tag text)",
                    DATABASE,
                )
                copies = [f"\\copy bare_run FROM '{run}' WITH (FORMAT text, DELIMITER ' ')" for run in runs]
                peers.append(
                    sum(timed(["psql", f"{SERVER}/{DATABASE}", "-q", "-c", c], env)[0] for c in copies)
                )
            finally:
                psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        load = load_average()
    ratios = [mine / peer for mine, peer in zip(ours, peers, strict=True)]
    print(f"{'loaded: one core kept busy' if args.loaded else 'quiet'}; {load}")
    print(f"run lines per model: {lines:,} (two different runs); ranking rows written: {rows:,}")
    for name, values in (("import_campaign, both runs", ours), ("psql COPY of the same rows", peers)):
        print(f"{name}: median {statistics.median(values):.2f} s of {listed(values)}")
    print(f"ratio (ours / COPY): median {statistics.median(ratios):.2f} of {listed(ratios)}")
    own = max(peaks) - idle_rss
    print(f"runs: {size / 2**20:.0f} MiB; import peak RSS {max(peaks) / 2**20:.0f} MiB")
    print(
        f"  less start-up alone ({idle_rss / 2**20:.0f} MiB): {own / 2**20:.0f} MiB, "
        f"{own / size:.2f}x the runs read"
    )


if __name__ == "__main__":
    main()
