"""Time `import_campaign --run` on a 1,000,000-line TREC run against PostgreSQL's own COPY of the same rows.

    flock /tmp/bench.lock .venv/bin/python bench/import_run.py [--queries 10000] [--depth 100]

Creates and drops its own database (judgeboard_bench_import) on BENCH_PG's server. The peer, measured in
the same run, is `COPY` of the run's rows into a bare table: the floor for getting a million rows into
PostgreSQL. The ratio says what start-up, validation, id mapping, pooling and constraints cost on top.
Memory is the import process's peak RSS less that of the same command only starting (`--help`), over the
size of the runs it reads.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def write_inputs(folder: Path, queries: int, depth: int) -> tuple[Path, Path]:
    rng = random.Random(7)
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
    run_path = folder / "run.trec"
    with run_path.open("w") as out:
        for q in range(queries):
            for rank, doc in enumerate(rng.sample(range(documents), depth), start=1):
                out.write(f"q{q} Q0 doc{doc} {rank} {1000 - rank:.4f} bench\n")
    return bundle_path, run_path


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
    args = parser.parse_args()
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{DATABASE}", "DEBUG": "1"}
    psql(f"DROP DATABASE IF EXISTS {DATABASE}")
    psql(f"CREATE DATABASE {DATABASE}")
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        with tempfile.TemporaryDirectory() as tmp:
            bundle, run = write_inputs(Path(tmp), args.queries, args.depth)
            size = run.stat().st_size
            lines = args.queries * args.depth
            _, idle_rss = timed([sys.executable, "manage.py", "import_campaign", "--help"], env)
            ours, ours_rss = timed(
                [
                    sys.executable,
                    "manage.py",
                    "import_campaign",
                    str(bundle),
                    "--run",
                    f"online={run}",
                    "--run",
                    f"exp={run}",
                ],
                env,
            )
            # Each list holds its documents' ids as 8-byte integers.
            rows = int(psql("SELECT sum(octet_length(documents)) / 8 FROM annotation_ranking", DATABASE))
            assert rows == 2 * lines, f"expected {2 * lines} ranking rows, found {rows}"
            psql(
                "CREATE TABLE bare_run (qid text, q0 text, docid text, rank int, score float8, tag text)",
                DATABASE,
            )
            copy = f"\\copy bare_run FROM '{run}' WITH (FORMAT text, DELIMITER ' ')"
            # Our import reads and writes the run twice (two models): two COPYs.
            peer = sum(timed(["psql", f"{SERVER}/{DATABASE}", "-q", "-c", copy], env)[0] for _ in range(2))
    finally:
        psql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    print(f"run lines per model: {lines:,}; ranking rows written: {rows:,}")
    print(f"import_campaign --run x2: {ours:.2f} s")
    print(f"psql COPY of the same rows x2: {peer:.2f} s")
    print(f"ratio (ours / COPY): {ours / peer:.1f}")
    own = ours_rss - idle_rss
    print(f"run file: {size / 2**20:.0f} MiB, read twice; import peak RSS {ours_rss / 2**20:.0f} MiB")
    print(
        f"  less start-up alone ({idle_rss / 2**20:.0f} MiB): {own / 2**20:.0f} MiB, "
        f"{own / (2 * size):.2f}x the runs read ({own / size:.2f}x one file)"
    )


if __name__ == "__main__":
    main()
