"""Seeded simulations behind the statistical claims of docs/statistics.md and docs/quality.md.

    .venv/bin/python bench/simulate_statistics.py

Not a timing: it prints (1) the coverage of the percentile bootstrap interval of a mean delta at n = 10
and 30 queries (2,000 resamples, as in the launch report), (2) the false-positive rate at α = 0.05 of the
sign-flip randomization test when the deltas have mean 0 but are skewed (the symmetry assumption broken),
(3) the GSB p-value's false-positive rate at 0.05 by judgment (the old sign test) and by query, 3 judges a
query, judges of a query correlated, and (4) Dawid–Skene's accuracy against majority's.
"""

import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics.compute.aggregation import dawid_skene, majority_grades  # noqa: E402
from metrics.compute.significance import exact_sign_flip_p_value, paired_comparison  # noqa: E402

RUNS = 2000


def bootstrap_coverage(rng: np.random.Generator) -> None:
    draws = {"normal": lambda n: rng.normal(0, 1, n), "skewed": lambda n: rng.exponential(1, n) - 1}
    for name, draw in draws.items():
        for n in (10, 30):
            hits = 0
            for _ in range(RUNS):
                seed = int(rng.integers(1 << 30))
                comparison = paired_comparison(np.zeros(n), draw(n), n_resamples=2000, n_flips=1, seed=seed)
                hits += comparison.ci_low <= 0 <= comparison.ci_high
            print(f"bootstrap 95% interval, {name} deltas, n={n}: covers the true mean {hits / RUNS:.1%}")


def randomization_under_skew(rng: np.random.Generator) -> None:
    for n in (10, 30):
        rejected = 0
        for _ in range(RUNS):
            seed = int(rng.integers(1 << 30))
            deltas = rng.exponential(1, n) - 1
            comparison = paired_comparison(np.zeros(n), deltas, n_resamples=1, n_flips=2000, seed=seed)
            rejected += comparison.p_value < 0.05
        print(f"sign-flip test, skewed mean-0 deltas, n={n}: rejects at 0.05 {rejected / RUNS:.1%}")


def gsb_false_positives(rng: np.random.Generator) -> None:
    for n_queries in (30, 100):
        lean = rng.choice([-1, 1], (RUNS, n_queries)) * rng.uniform(0, 1, (RUNS, n_queries))
        draw = rng.random((RUNS, n_queries, 3))
        verdict = np.where(
            draw < 0.35 * (1 + lean[..., None]), 1, np.where(draw > 1 - 0.35 * (1 - lean[..., None]), -1, 0)
        )
        good, bad = (verdict == 1).sum(axis=(1, 2)), (verdict == -1).sum(axis=(1, 2))
        by_judgment = np.mean(
            [stats.binomtest(int(g), int(g + b)).pvalue < 0.05 for g, b in zip(good, bad, strict=True)]
        )
        by_query = np.mean([exact_sign_flip_p_value(net) < 0.05 for net in verdict.sum(axis=2)])
        print(
            f"GSB null, {n_queries} queries x 3 correlated judges: false positives at 0.05 "
            f"by judgment {by_judgment:.1%}, by query {by_query:.1%}"
        )


def dawid_skene_against_majority(rng: np.random.Generator) -> None:
    scale = np.arange(4)
    for n_tasks, n_annotators in ((20, 3), (20, 6), (200, 3)):
        accuracy = np.zeros(2)
        for _ in range(200):
            truth = rng.choice(4, n_tasks, p=[0.4, 0.3, 0.2, 0.1])
            task = np.repeat(np.arange(n_tasks), 3)
            annotator = np.array([rng.choice(n_annotators, 3, replace=False) for _ in range(n_tasks)]).ravel()
            grade = np.where(rng.random(task.size) < 0.7, truth[task], rng.choice(4, task.size))
            fit = dawid_skene(task, annotator, grade, n_tasks=n_tasks, scale=scale)
            majority = majority_grades(task, annotator, grade, n_tasks=n_tasks, scale=scale)
            accuracy += [(fit.grade == truth).mean(), (majority == truth).mean()]
        ds, mj = accuracy / 200
        print(f"{n_tasks} tasks, {n_annotators} annotators: Dawid-Skene {ds:.1%} correct, majority {mj:.1%}")


if __name__ == "__main__":
    rng = np.random.default_rng(10)
    bootstrap_coverage(rng)
    randomization_under_skew(rng)
    gsb_false_positives(rng)
    dawid_skene_against_majority(rng)
