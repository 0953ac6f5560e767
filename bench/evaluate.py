"""Time `judgeboard evaluate` against pytrec_eval (and a pyarrow.csv read of the same files), whole processes,
on a quiet machine and with the other core kept busy.

    flock /tmp/bench.lock .venv/bin/python bench/evaluate.py [--queries 50000] [--docs 100]
        [--shape bench|other] [--repeat 3] [--modes quiet,loaded] [--ranx]

Generates (once, cached in bench/out/) a run and qrels of one of two shapes:
- `bench`: QUERIES × DOCS run lines with distinct scores, ids `q17` / `d17-104729`, qrels that judge 90% of
  them (labels 0–3, half 0), both files in the same query order;
- `other`: numeric query ids, MS MARCO v2.1-style document ids (`msmarco_v2.1_doc_07_694843847#0_1223433614`:
  long, with a `#`), scores with ties, the run's queries in shuffled order; qrels of 25 judgments a query, 15
  from the run's top 50 and 10 documents the run never retrieved, sorted by query id as text: the run four
  times longer than the qrels, 85% of its documents unjudged.
Then, in each mode (`quiet`: nothing started; `loaded`: a Python busy loop on the other core for the mode's
rounds), prints the load average and runs each program REPEAT times as its own process, taking turns in each
round: our command, nDCG@10, AP, RR and P@10 with linear gain (trec_eval's); pytrec_eval-terrier, parsing
the files in Python and calling `RelevanceEvaluator`; a `pyarrow.csv` read of both files into tables, the
floor of reading them; with --ranx, ranx. It prints the median wall time, CPU time and the peak resident
memory of each, the ratios, and checks that ours and pytrec_eval agree on the means. Targets (issue 30):
wall ≤ 0.25 × pytrec_eval's at 50,000 queries and ≤ 0.2 × at 100,000, memory ≤ 0.5 ×, wall ≤ 1.2 × the
pyarrow read, in both modes. A last part times the compute step alone (`evaluate_ranked`) on 10 million
in-memory entries (target < 1 s).
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
OUT = ROOT / "bench" / "out"
MEASURES = {"nDCG@10": "ndcg_cut_10", "AP": "map", "RR": "recip_rank", "P@10": "P_10"}

PYTREC = """
import json, sys, pytrec_eval
measures = json.loads(sys.argv[3])
qrels, run = {}, {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, label = line.split()
        qrels.setdefault(q, {})[d] = int(label)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
result = pytrec_eval.RelevanceEvaluator(qrels, set(measures.values())).evaluate(run)
n = len(result)
print(json.dumps({ours: sum(r[theirs] for r in result.values()) / n for ours, theirs in measures.items()}))
"""

ARROW = """
import json, sys
import pyarrow.csv as csv
blank = csv.ParseOptions(delimiter=" ")
names = lambda columns: csv.ReadOptions(column_names=list(columns))
qrels = csv.read_csv(sys.argv[1], read_options=names("qidl"), parse_options=blank)
run = csv.read_csv(sys.argv[2], read_options=names("qzdkst"), parse_options=blank)
print(json.dumps({"rows": qrels.num_rows + run.num_rows}))
"""

RANX = """
import json, sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
result = evaluate(qrels, run, ["ndcg@10", "map", "mrr", "precision@10"])
print(json.dumps({"nDCG@10": float(result["ndcg@10"]), "AP": float(result["map"]), "RR": float(result["mrr"]),
                  "P@10": float(result["precision@10"])}))
"""

BUSY = "while True: pass"


def generate(queries: int, docs: int, shape: str = "bench") -> tuple[Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    name = f"{queries}x{docs}" if shape == "bench" else f"{shape}-{queries}x{docs}"
    qrels_path, run_path = OUT / f"qrels-{name}.txt", OUT / f"run-{name}.txt"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    if shape == "other":
        _generate_other(queries, docs, qrels_path, run_path)
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


def _generate_other(queries: int, docs: int, qrels_path: Path, run_path: Path) -> None:
    rng = np.random.default_rng(43)
    query_ids = [str(100_003 + 37 * q) for q in range(queries)]
    qrels_lines = []
    with open(run_path, "w") as run:
        for q in rng.permutation(queries).tolist():
            # Distinct within the query: the low bits are the document's place.
            number = rng.integers(0, 10**9 >> 8, size=docs + 10) << 8 | np.arange(docs + 10)
            ids = [
                f"msmarco_v2.1_doc_{n % 60:02d}_{n}#{n % 23}_{(n * 7919) % 10**10}" for n in number.tolist()
            ]
            # Scores of three decimals, descending: ties for the tie-break rule.
            scores = np.sort(np.round(rng.random(docs) * 20, 3))[::-1].tolist()
            run.write(
                "".join(
                    f"{query_ids[q]} Q0 {ids[rank]} {rank + 1} {scores[rank]} other\n" for rank in range(docs)
                )
            )
            judged = rng.choice(min(50, docs), size=min(15, docs), replace=False).tolist() + list(
                range(docs, docs + 10)
            )
            labels = rng.integers(0, 4, size=len(judged)).tolist()
            qrels_lines += [(query_ids[q], ids[d], label) for d, label in zip(judged, labels, strict=True)]
    qrels_lines.sort(key=lambda line: line[0])
    with open(qrels_path, "w") as qrels:
        qrels.write("".join(f"{q} 0 {d} {label}\n" for q, d, label in qrels_lines))


def run_process(command: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + system, all threads), the child's peak resident KiB (from wait4:
    all its threads; the programs here start no processes of their own, which wait4 would not add up)
    and its standard output."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(command[:4])} failed:\n{err.decode()}")
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
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--shape", choices=["bench", "other"], default="bench")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", default="quiet,loaded", help="quiet, loaded or both (comma-separated)")
    parser.add_argument("--ranx", action="store_true", help="time ranx too (≈1 min a run at 100,000 queries)")
    args = parser.parse_args()
    qrels, run = generate(args.queries, args.docs, args.shape)
    print(
        f"files: {qrels.name} ({qrels.stat().st_size >> 20} MiB), {run.name} ({run.stat().st_size >> 20} MiB)"
    )
    python = sys.executable
    measures = [argument for measure in MEASURES for argument in ("-m", measure)]
    commands = {
        "judgeboard": [
            python,
            "-m",
            "judgeboard",
            "evaluate",
            str(qrels),
            str(run),
            *measures,
            "--gain",
            "linear",
        ]
        + ["--format", "json"],
        "pytrec_eval": [python, "-c", PYTREC, str(qrels), str(run), json.dumps(MEASURES)],
        "pyarrow.csv": [python, "-c", ARROW, str(qrels), str(run)],
    }
    if args.ranx:
        commands["ranx"] = [python, "-c", RANX, str(qrels), str(run)]
    for mode in args.modes.split(","):
        busy = subprocess.Popen([python, "-c", BUSY]) if mode == "loaded" else None
        try:
            time.sleep(1 if busy else 0)
            load = " ".join(f"{value:.2f}" for value in os.getloadavg())
            started = "a busy loop on the other core" if busy else "nothing started"
            print(f"\n{mode} ({started}), load average {load}")
            _measure(commands, str(run), args.repeat)
        finally:
            if busy:
                busy.kill()
                busy.wait()
    sys.path.insert(0, str(ROOT))
    print(
        f"\ncompute step alone, 10,000,000 in-memory entries: {compute_step(10_000_000):.3f} s (target < 1 s)"
    )


def _measure(commands: dict[str, list[str]], run: str, repeat: int) -> None:
    # Interleaved (each program once per round), so a change in the machine's load hits all of them alike.
    walls, cpus, peaks, means = ({name: [] for name in commands} for _ in range(4))
    for _ in range(repeat):
        for name, command in commands.items():
            wall, cpu, peak, out = run_process(command)
            walls[name].append(wall)
            cpus[name].append(cpu)
            peaks[name].append(peak)
            parsed = json.loads(out)
            means[name].append(parsed["runs"][run]["aggregate"] if name == "judgeboard" else parsed)
    median = {name: statistics.median(walls[name]) for name in commands}
    for name in commands:
        mean = means[name][-1]
        shown = "  ".join(f"{measure} {mean[measure]:.6f}" for measure in MEASURES if measure in mean)
        print(
            f"{name:12s} wall {median[name]:6.2f} s  cpu {statistics.median(cpus[name]):6.2f} s  "
            f"peak {max(peaks[name]) / 1024:5.0f} MiB  (walls {', '.join(f'{w:.2f}' for w in walls[name])})  "
            f"{shown}"
        )
    ours, theirs, read = median["judgeboard"], median["pytrec_eval"], median["pyarrow.csv"]
    memory = max(peaks["judgeboard"]) / max(peaks["pytrec_eval"])
    cpu = {name: statistics.median(cpus[name]) for name in commands}
    print(
        f"ours / pytrec_eval: wall {ours / theirs:.3f}, cpu {cpu['judgeboard'] / cpu['pytrec_eval']:.3f}, "
        f"memory {memory:.3f}; ours / pyarrow.csv read: wall {ours / read:.3f}, "
        f"cpu {cpu['judgeboard'] / cpu['pyarrow.csv']:.3f}"
    )
    if "ranx" in commands:
        print(f"ours / ranx: wall {ours / median['ranx']:.3f}")
    agree = all(
        abs(means["judgeboard"][-1][measure] - means["pytrec_eval"][-1][measure]) < 1e-6
        for measure in MEASURES
    )
    print(f"ours and pytrec_eval agree on every mean to 1e-6: {agree}")


if __name__ == "__main__":
    main()
