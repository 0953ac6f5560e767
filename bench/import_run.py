"""Time the import of two different TREC runs against PostgreSQL's own COPY of the same rows, two ways: the
`import_campaign --run` command (a new process: Django's start-up included), and the browser's import task
(`campaign_import_run`) in a process that has Django started, as `db_worker` runs it.

    flock /tmp/bench.lock .venv/bin/python bench/import_run.py [--queries 10000] [--depth 100] [--repeat 3]
        [--loaded]

Creates and drops its own databases (judgeboard_bench_import*) on BENCH_PG's server, each a copy of one
migrated template. The peer, measured in the same run, is `COPY` of the run's rows into a bare table: the
floor for getting a million rows into PostgreSQL. The ratio says what start-up, validation, id mapping,
pooling and constraints cost on top. The command's memory is its peak RSS less that of the same command
only starting (`--help`), over the size of the runs it reads; the task's is its process's peak RSS while the
task runs (the peak is reset before, `/proc/self/clear_refs`). The task's import is staged and checked as
the browser's is (upload, preview, confirm: not timed), then timed from the task's start to its end. Each of
--repeat rounds imports with the command into a new database, copies, then imports with the task into
another; the medians are printed, and those of the command's own steps as it reports them with `-v 2`
(reading and checking the files, the import; the rest of its wall time is start-up and exit). With
--loaded another process keeps one core busy throughout (`bench/busy.py`). The project's modules are
compiled to bytecode first, as any start but the first finds them: where PYTHONDONTWRITEBYTECODE is set and
nothing compiled them, every start compiles them again (15 % of the command's start-up, in instructions
counted by callgrind).
"""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from busy import load_average, other_core_busy

ROOT = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE = "judgeboard_bench_import"
TEMPLATE = f"{DATABASE}_template"
PACKAGES = ["annotation", "config", "judgeboard", "metrics", "plumbing", "trec"]
# What `import_campaign -v 2` says of its steps (in English, the default language).
STEPS = re.compile(r"files read and checked in ([\d.]+) s, imported in ([\d.]+) s")


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


def timed(command: list[str], env: dict) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in bytes and what it wrote to stderr, of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode()
    if child.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{errors}")
    return elapsed, usage.ru_maxrss * 1024, errors  # kilobytes on Linux


def peak_rss() -> int:
    """This process's peak RSS in bytes since it last reset it."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) * 1024


def task_worker() -> None:
    """--task-worker: a process with Django started, as `db_worker` is. For each line on stdin (the bundle's
    and the runs' paths, in a new database), stage and check the import as the browser does, then time the
    import task; a line of JSON on stdout says its seconds and peak RSS."""
    import django

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.files import File
    from django.db import connections

    from annotation.models import CampaignImport
    from annotation.services.imports import import_check, import_confirm, import_stage
    from annotation.tasks import campaign_import_run

    for line in sys.stdin:
        bundle, runs = json.loads(line)
        user = get_user_model().objects.create_user("bench")
        with ExitStack() as files:
            staged = import_stage(
                user=user,
                bundle=File(files.enter_context(open(bundle, "rb")), name="bundle.json"),
                runs=[
                    (model, File(files.enter_context(open(path, "rb")), name=f"{model}.trec"))
                    for model, path in runs
                ],
            )
        import_check(staged=staged, attempt=staged.attempt)
        staged = import_confirm(staged=staged)
        Path("/proc/self/clear_refs").write_text("5")
        start = time.perf_counter()
        campaign_import_run.call(staged.pk, staged.attempt)
        seconds = time.perf_counter() - start
        peak = peak_rss()
        staged.refresh_from_db()
        assert staged.status == CampaignImport.Status.DONE, staged.error
        # The next line's database is another: the pool's connections (settings.py) go with this one.
        connections.close_all()
        connections["default"].close_pool()
        print(json.dumps({"seconds": seconds, "peak": peak}), flush=True)


def database_new(database: str) -> None:
    psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    psql(f"CREATE DATABASE {database} TEMPLATE {TEMPLATE}")


def ranking_rows(database: str) -> int:
    # Each list holds its documents' ids as 8-byte integers.
    return int(psql("SELECT sum(octet_length(documents)) / 8 FROM annotation_ranking", database))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--loaded", action="store_true", help="keep one core busy while measuring")
    parser.add_argument("--task-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.task_worker:
        task_worker()
        return
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{DATABASE}", "DEBUG": "1"}
    lines = args.queries * args.depth
    ours, tasks, peers, peaks, task_peaks, steps = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp, other_core_busy(args.loaded):
        bundle, runs = write_inputs(Path(tmp), args.queries, args.depth)
        size = sum(run.stat().st_size for run in runs)
        subprocess.run([sys.executable, "-m", "compileall", "-q", *PACKAGES], cwd=ROOT, check=True)
        _, idle_rss, _ = timed([sys.executable, "manage.py", "import_campaign", "--help"], env)
        psql(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        psql(f"CREATE DATABASE {TEMPLATE}")
        task_database = f"{DATABASE}_task"
        task_env = {**env, "DATABASE_URL": f"{SERVER}/{task_database}", "IMPORTS_DIR": f"{tmp}/imports"}
        worker = subprocess.Popen(
            [sys.executable, __file__, "--task-worker"],
            cwd=ROOT,
            env=task_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "-v0"],
                cwd=ROOT,
                env={**env, "DATABASE_URL": f"{SERVER}/{TEMPLATE}"},
                check=True,
            )
            for _ in range(args.repeat):
                database_new(DATABASE)
                command = [sys.executable, "manage.py", "import_campaign", str(bundle), "-v", "2"]
                seconds, rss, said = timed(
                    [*command, "--run", f"online={runs[0]}", "--run", f"exp={runs[1]}"], env
                )
                ours.append(seconds)
                read, imported = map(float, STEPS.search(said).groups())
                steps.append((read, imported, seconds - read - imported))
                peaks.append(rss)
                rows = ranking_rows(DATABASE)
                assert rows == 2 * lines, f"expected {2 * lines} ranking rows, found {rows}"
                psql(
                    "CREATE TABLE bare_run (qid text, q0 text, docid text, rank int, score float8, tag text)",
                    DATABASE,
                )
                copies = [f"\\copy bare_run FROM '{run}' WITH (FORMAT text, DELIMITER ' ')" for run in runs]
                peers.append(
                    sum(timed(["psql", f"{SERVER}/{DATABASE}", "-q", "-c", c], env)[0] for c in copies)
                )
                psql(f"DROP DATABASE {DATABASE} WITH (FORCE)")

                database_new(task_database)
                models = [["online", str(runs[0])], ["exp", str(runs[1])]]
                worker.stdin.write(json.dumps([str(bundle), models]) + "\n")
                worker.stdin.flush()
                answer = worker.stdout.readline()
                if not answer:
                    sys.exit("the task worker stopped")
                task = json.loads(answer)
                tasks.append(task["seconds"])
                task_peaks.append(task["peak"])
                assert ranking_rows(task_database) == 2 * lines
                psql(f"DROP DATABASE {task_database} WITH (FORCE)")
        finally:
            worker.stdin.close()
            worker.wait()
            for database in (DATABASE, task_database, TEMPLATE):
                psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        load = load_average()
    print(f"{'loaded: one core kept busy' if args.loaded else 'quiet'}; {load}")
    print(f"run lines per model: {lines:,} (two different runs); ranking rows written: {rows:,}")
    print("the project's bytecode compiled before the first start")
    for name, values in (
        ("import_campaign, both runs (new process)", ours),
        ("import task, both runs (Django started)", tasks),
        ("psql COPY of the same rows", peers),
    ):
        print(f"{name}: median {statistics.median(values):.2f} s of {listed(values)}")
    read, imported, rest = (statistics.median(step) for step in zip(*steps, strict=True))
    print(
        f"import_campaign's steps, medians: files read and checked {read:.2f} s, imported {imported:.2f} s, "
        f"the rest (Python and Django starting, the exit) {rest:.2f} s"
    )
    for name, values in (("command", ours), ("task", tasks)):
        ratios = [mine / peer for mine, peer in zip(values, peers, strict=True)]
        print(f"ratio, {name} / COPY: median {statistics.median(ratios):.2f} of {listed(ratios)}")
    own = max(peaks) - idle_rss
    print(f"runs: {size / 2**20:.0f} MiB; command's peak RSS {max(peaks) / 2**20:.0f} MiB")
    print(
        f"  less start-up alone ({idle_rss / 2**20:.0f} MiB): {own / 2**20:.0f} MiB, "
        f"{own / size:.2f}x the runs read"
    )
    print(f"task's peak RSS while it runs: {max(task_peaks) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
