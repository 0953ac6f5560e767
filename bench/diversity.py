"""Time the diversity measures against pyndeval (ndeval's C code) on the same judgments, in one process.

    .venv/bin/python bench/diversity.py [--queries 10000] [--depth 20] [--intents 5] [--judged 40]

Generates QUERIES queries, each with INTENTS intents, JUDGED judged documents (each relevant to each intent
with probability 0.2) and a ranked list of DEPTH documents (a quarter unjudged). Times `evaluate_intents`
(alpha_nDCG@5/10/20, ERR_IA@20, nERR_IA@20, StRecall@20) against pyndeval's `RelevanceEvaluator` (building
its qrels, then evaluating), checks that they agree to 1e-9, and times ILS@DEPTH over 5 attribute fields
and novelty@DEPTH. Target: the intent-aware measures well under a few seconds at 10,000 × 20 × 5.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics.compute.diversity import (  # noqa: E402
    DEFAULT_INTENT_MEASURES,
    evaluate_intents,
    intra_list_similarity,
    novelty,
)

NDEVAL_NAMES = {
    "alpha_nDCG@5": "alpha-nDCG@5",
    "alpha_nDCG@10": "alpha-nDCG@10",
    "alpha_nDCG@20": "alpha-nDCG@20",
    "ERR_IA@20": "ERR-IA@20",
    "nERR_IA@20": "nERR-IA@20",
    "StRecall@20": "strec@20",
}


def generate(queries: int, depth: int, intents: int, judged: int):
    rng = np.random.default_rng(42)
    relevance = rng.random((queries, judged, intents)) < 0.2
    # Each list: DEPTH positions, three quarters judged documents (distinct), the rest unjudged.
    picks = np.argsort(rng.random((queries, judged)), axis=1)[:, :depth]
    unjudged = rng.random((queries, depth)) < 0.25
    ranked = np.take_along_axis(relevance, picks[:, :, None], axis=1) & ~unjudged[:, :, None]
    return relevance, picks, unjudged, ranked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--intents", type=int, default=5)
    parser.add_argument("--judged", type=int, default=40)
    args = parser.parse_args()
    relevance, picks, unjudged, ranked = generate(args.queries, args.depth, args.intents, args.judged)

    start = time.perf_counter()
    ours = evaluate_intents(ranked, relevance, DEFAULT_INTENT_MEASURES)
    ours_seconds = time.perf_counter() - start

    import pyndeval

    # Document ids sort as the judged columns do (d0000, d0001...), so ndeval's ties fall alike.
    qrels = [(str(q), str(i), f"d{d:04d}", 1) for q, d, i in zip(*np.nonzero(relevance), strict=True)]
    run = [
        (str(q), f"u{r:04d}" if unjudged[q, r] else f"d{picks[q, r]:04d}", float(args.depth - r))
        for q in range(args.queries)
        for r in range(args.depth)
    ]
    run.sort(key=lambda entry: entry[0])
    start = time.perf_counter()
    evaluator = pyndeval.RelevanceEvaluator(qrels, list(NDEVAL_NAMES.values()))
    theirs = evaluator.evaluate(run)
    theirs_seconds = time.perf_counter() - start

    worst = max(
        abs(ours[name][q] - theirs[str(q)][ndeval_name])
        for name, ndeval_name in NDEVAL_NAMES.items()
        for q in range(args.queries)
        if str(q) in theirs
    )
    print(f"{args.queries:,} queries × {args.depth} ranks × {args.intents} intents, {args.judged} judged")
    print(f"evaluate_intents   {ours_seconds:8.3f} s")
    print(f"pyndeval           {theirs_seconds:8.3f} s   ratio {ours_seconds / theirs_seconds:.3f}")
    print(f"largest difference {worst:.1e}")

    rng = np.random.default_rng(7)
    attributes = rng.integers(-1, 4, (args.queries, args.depth, 5))
    marks = rng.random((args.queries, args.depth, args.depth)) < 0.02
    start = time.perf_counter()
    intra_list_similarity(attributes, args.depth, near_duplicates=marks)
    print(f"ILS@{args.depth}            {time.perf_counter() - start:8.3f} s")
    popularity = rng.uniform(0.001, 1, (args.queries, args.depth))
    start = time.perf_counter()
    novelty(popularity, args.depth)
    print(f"novelty@{args.depth}        {time.perf_counter() - start:8.3f} s")


if __name__ == "__main__":
    main()
