"""Time `manage.py evaluate` against pytrec_eval and ranx on the same TREC files, whole processes.

    .venv/bin/python bench/evaluate.py [--queries 100000] [--docs 100] [--repeat 3] [--skip-ranx]

Generates (once, cached in bench/out/) a run of QUERIES × DOCS documents with distinct scores and qrels
that judge 90% of them (labels 0–3, half of them 0). Then runs each evaluator REPEAT times as its own
process, the evaluators taking turns in each round, nDCG@10 and nDCG with linear gain (trec_eval's): our
command (which reads the qrels on a second thread; the peak memory counts every thread); pytrec_eval-terrier,
parsing the files in Python and calling `RelevanceEvaluator`; ranx, `Qrels.from_file`, `Run.from_file` and
`evaluate`. It
prints the median wall time and the peak resident memory of each, the ratios to pytrec_eval, and checks
that the three agree on the means. A second part times the compute step alone (`evaluate_ranked`) on
10 million in-memory entries. Targets: wall ≤ 0.25 × and memory ≤ 0.5 × pytrec_eval's; compute < 1 s.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("DEBUG", "1")  # settings default to production, which needs a SECRET_KEY
OUT = ROOT / "bench" / "out"

PYTREC = """
import json, sys, pytrec_eval
qrels, run = {}, {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, label = line.split()
        qrels.setdefault(q, {})[d] = int(label)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
result = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "ndcg"}).evaluate(run)
n = len(result)
print(json.dumps({"nDCG@10": sum(r["ndcg_cut_10"] for r in result.values()) / n,
                  "nDCG": sum(r["ndcg"] for r in result.values()) / n}))
"""

RANX = """
import json, sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
result = evaluate(qrels, run, ["ndcg@10", "ndcg"])
print(json.dumps({"nDCG@10": float(result["ndcg@10"]), "nDCG": float(result["ndcg"])}))
"""


def generate(queries: int, docs: int) -> tuple[Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = OUT / f"qrels-{queries}x{docs}.txt", OUT / f"run-{queries}x{docs}.txt"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(42)
    query = np.repeat(np.arange(queries), docs)
    # Distinct document ids within a query, in no particular order.
    document = rng.permuted(np.tile(np.arange(docs) * 7919 + 104729, (queries, 1)), axis=1).ravel()
    # Distinct scores, descending within each query, so no evaluator's tie rule matters.
    score = np.tile(np.arange(docs, 0, -1), queries) + rng.random(query.size) * 0.5
    judged = rng.random(query.size) >= 0.1
    label = np.where(rng.random(query.size) < 0.5, 0, rng.integers(1, 4, size=query.size))
    with open(run_path, "w") as run, open(qrels_path, "w") as qrels:
        for start in range(0, query.size, 1_000_000):
            part = slice(start, start + 1_000_000)
            q, d, s, j, r = (
                query[part].tolist(),
                document[part].tolist(),
                score[part].tolist(),
                judged[part].tolist(),
                label[part].tolist(),
            )
            rank = [i % docs + 1 for i in range(start, start + len(q))]
            run.write(
                "".join(
                    f"q{qi} Q0 d{qi}-{di} {ri} {si:.6f} bench\n"
                    for qi, di, ri, si in zip(q, d, rank, s, strict=True)
                )
            )
            qrels.write(
                "".join(f"q{qi} 0 d{qi}-{di} {li}\n" for qi, di, ji, li in zip(q, d, j, r, strict=True) if ji)
            )
    return qrels_path, run_path


def run_process(command: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + system, all threads), the child's peak resident KiB (from wait4:
    all its threads; the evaluators here start no processes of their own, which wait4 would not add up)
    and its standard output."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{err.decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out.decode()


def compute_step(entries: int) -> float:
    from metrics.compute.ranking import Gain, RankingSettings, evaluate_ranked

    rng = np.random.default_rng(7)
    depth = 100
    labels = rng.integers(0, 4, size=(entries // depth, depth)).astype(float)
    labels[rng.random(labels.shape) < 0.1] = np.nan
    judged = labels.copy()
    settings = RankingSettings(gain=Gain.LINEAR)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        evaluate_ranked(labels, ["nDCG@10", "nDCG"], judged_labels=judged, settings=settings)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--skip-ranx", action="store_true", help="leave ranx out (≈1 min a run; for quick iterations only)"
    )
    args = parser.parse_args()
    qrels, run = generate(args.queries, args.docs)
    print(
        f"files: {qrels.name} ({qrels.stat().st_size >> 20} MiB), {run.name} ({run.stat().st_size >> 20} MiB)"
    )
    python = sys.executable
    commands = {
        "judgeboard": [
            python,
            "manage.py",
            "evaluate",
            str(qrels),
            str(run),
            "-m",
            "nDCG@10",
            "-m",
            "nDCG",
            "--gain",
            "linear",
            "--format",
            "json",
        ],
        "pytrec_eval": [python, "-c", PYTREC, str(qrels), str(run)],
        "ranx": [python, "-c", RANX, str(qrels), str(run)],
    }
    if args.skip_ranx:
        del commands["ranx"]
    # Interleaved (each evaluator once per round), so a change in the machine's load hits all of them alike.
    walls, cpus, peaks, means = ({name: [] for name in commands} for _ in range(4))
    for _ in range(args.repeat):
        for name, command in commands.items():
            wall, cpu, peak, out = run_process(command)
            walls[name].append(wall)
            cpus[name].append(cpu)
            peaks[name].append(peak)
            parsed = json.loads(out)
            means[name].append(parsed["runs"][str(run)]["aggregate"] if name == "judgeboard" else parsed)
    results = {}
    for name in commands:
        wall, peak, mean = statistics.median(walls[name]), max(peaks[name]), means[name][-1]
        results[name] = (wall, peak, mean, statistics.median(cpus[name]))
        print(
            f"{name:12s} wall {wall:7.2f} s  cpu {results[name][3]:7.2f} s  peak {peak / 1024:7.0f} MiB  "
            f"nDCG@10 {mean['nDCG@10']:.6f}  "
            f"nDCG {mean['nDCG']:.6f}  (walls: {', '.join(f'{w:.2f}' for w in walls[name])})"
        )
    ours, theirs = results["judgeboard"], results["pytrec_eval"]
    print(
        f"ratio to pytrec_eval: wall {ours[0] / theirs[0]:.3f} (target ≤ 0.25), "
        f"memory {ours[1] / theirs[1]:.3f} (target ≤ 0.5), cpu {ours[3] / theirs[3]:.3f}"
    )
    if "ranx" in results:
        print(
            f"ratio to ranx:        wall {ours[0] / results['ranx'][0]:.3f}, "
            f"memory {ours[1] / results['ranx'][1]:.3f}"
        )
    for measure in ("nDCG@10", "nDCG"):
        values = [result[2][measure] for result in results.values()]
        agree = max(values) - min(values) < 1e-6
        print(f"means of {measure} agree to 1e-6: {agree} ({', '.join(f'{v:.8f}' for v in values)})")
    sys.path.insert(0, str(ROOT))
    print(
        f"compute step alone, 10,000,000 in-memory entries: {compute_step(10_000_000):.3f} s (target < 1 s)"
    )


if __name__ == "__main__":
    main()
