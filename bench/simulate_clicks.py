"""Seeded simulations behind the click statistics of docs/statistics.md ("What users did").

    flock /tmp/bench.lock .venv/bin/python bench/simulate_clicks.py

Prints (1) the time to simulate and to estimate from 200,000 impressions, (2) over 40 seeded logs of
200,000 impressions, how often each propensity estimator is within 10% of the truth at every position 1-10,
its largest error and its mean error per position, for the proof's users and for users who click an
examined relevant result 90% of the time, (3) over 1,000 seeded experiments, the coverage of the 95%
intervals of IPS-CTR@10 and CTR@10 (by session, and by request with sessions ignored) and their bias,
(4) how well behaviour grades agree with the true grades, by aggregation and traffic.
The tests in tests/compute/test_clicks.py check the same claims on fewer seeds.
"""

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics.compute.interactions.behaviour import behaviour_agreement, behaviour_qrels  # noqa: E402
from metrics.compute.interactions.impressions import Impressions  # noqa: E402
from metrics.compute.interactions.online import online_metrics  # noqa: E402
from metrics.compute.interactions.propensity import (  # noqa: E402
    intervention_harvesting,
    position_based_em,
)
from metrics.compute.interactions.simulation import (  # noqa: E402
    default_click_model,
    simulate_log,
    simulated_rankings,
)

PROOF_USERS = dataclasses.replace(default_click_model(), click=np.array([0.1, 0.3, 0.5, 0.7]))
EAGER_USERS = dataclasses.replace(default_click_model(), click=np.array([0.1, 0.3, 0.6, 0.9]))


def large_log(users, seed: int):
    rankings, grade = simulated_rankings(
        n_queries=200, n_candidates=12, grade_share=(0.1, 0.2, 0.3, 0.4), noise=(2.0, 2.0), seed=seed
    )
    return simulate_log(
        rankings=rankings, ranked_grade=grade, click_model=users, n_lists=20_000, seed=seed + 1
    )


def timings() -> None:
    rankings, grade = simulated_rankings(n_queries=200, n_candidates=12, noise=(2.0, 2.0), seed=0)
    start = time.perf_counter()
    log = simulate_log(rankings=rankings, ranked_grade=grade, click_model=PROOF_USERS, n_lists=20_000, seed=1)
    print(f"simulate 200,000 impressions: {time.perf_counter() - start:.3f} s")
    for name, run in (
        ("intervention harvesting, 1,000 resamples", lambda: intervention_harvesting(log.impressions)),
        ("position-based EM, 200 resamples", lambda: position_based_em(log.impressions)),
        (
            "online metrics of one model, 2,000 resamples",
            lambda: online_metrics(log.impressions, model=0, propensity=PROOF_USERS.propensity),
        ),
    ):
        start = time.perf_counter()
        run()
        print(f"{name}: {time.perf_counter() - start:.2f} s")


def propensity_accuracy() -> None:
    for label, users in (
        ("proof users (click 0.1-0.7)", PROOF_USERS),
        ("eager users (click 0.1-0.9)", EAGER_USERS),
    ):
        errors = {"harvesting": [], "EM": []}
        for seed in range(40):
            log = large_log(users, 100 + 2 * seed)
            harvested = intervention_harvesting(log.impressions, n_resamples=1).propensity
            fitted = position_based_em(log.impressions, n_resamples=1).propensity
            errors["harvesting"].append(harvested / users.propensity - 1)
            errors["EM"].append(fitted / users.propensity - 1)
        for name, rows in errors.items():
            error = np.array(rows)
            largest = np.abs(error).max(axis=1)
            print(
                f"{label}, {name}: positions 1-10 all within 10% in {(largest < 0.1).mean():.0%} of 40 logs; "
                f"largest error median {np.median(largest):.1%}, max {largest.max():.1%}; "
                f"mean error by position {np.array2string(error.mean(axis=0)[1:], precision=3)}"
            )


def interval_coverage() -> None:
    users = default_click_model(eagerness=0.6)
    runs = 1000
    hits = {"IPS-CTR@10 by session": 0, "CTR@10 by session": 0, "CTR@10 by request": 0}
    naive_covers_debiased = 0
    ips_error, naive_error, debiased = [], [], []
    for seed in range(runs):
        rankings, grade = simulated_rankings(n_queries=50, seed=seed)
        log = simulate_log(
            rankings=rankings,
            ranked_grade=grade,
            click_model=users,
            n_lists=1000,
            mean_session_lists=5,
            seed=seed,
        )
        naive_truth, debiased_truth = log.ctr(0, 10, debiased=False), log.ctr(0, 10, debiased=True)
        estimates = online_metrics(
            log.impressions, model=0, propensity=users.propensity, n_resamples=1000, seed=seed
        ).estimates
        impressions = log.impressions
        by_request = online_metrics(
            Impressions.of(
                query=impressions.query,
                model=impressions.model,
                request=impressions.request,
                position=impressions.position,
                document=impressions.document,
                clicked=impressions.clicked,
                session=impressions.request,
            ),
            model=0,
            n_resamples=1000,
            seed=seed,
        ).estimates["CTR@10"]
        ips, naive = estimates["IPS-CTR@10"], estimates["CTR@10"]
        hits["IPS-CTR@10 by session"] += ips.ci_low <= debiased_truth <= ips.ci_high
        hits["CTR@10 by session"] += naive.ci_low <= naive_truth <= naive.ci_high
        hits["CTR@10 by request"] += by_request.ci_low <= naive_truth <= by_request.ci_high
        naive_covers_debiased += naive.ci_low <= debiased_truth <= naive.ci_high
        debiased.append(debiased_truth)
        ips_error.append(ips.value - debiased_truth)
        naive_error.append(naive.value - debiased_truth)
    for name, count in hits.items():
        print(f"95% interval of {name} covers its true value in {count / runs:.1%} of {runs} experiments")
    print(f"CTR@10's interval covers the debiased CTR@10 in {naive_covers_debiased / runs:.1%}")
    print(
        f"mean error against the debiased CTR@10 (on average {np.mean(debiased):.3f}): "
        f"IPS {np.mean(ips_error):+.4f}, naive {np.mean(naive_error):+.4f}"
    )


def behaviour_labels() -> None:
    rankings, grade = simulated_rankings(n_queries=40, seed=5)
    true_grade = dict(zip(rankings.ravel().tolist(), grade.ravel().tolist(), strict=True))
    for n_lists in (2000, 20_000):
        log = simulate_log(
            rankings=rankings, ranked_grade=grade, click_model=default_click_model(), n_lists=n_lists, seed=6
        )
        for aggregation, min_count in (("max", 1), ("max", 2), ("max", 5), ("mean", 1)):
            qrels = behaviour_qrels(log.impressions, aggregation=aggregation, min_count=min_count)
            truth = np.array([true_grade[document] for document in qrels.document.tolist()])
            overall = behaviour_agreement(
                np.floor(qrels.grade + 0.5), truth, query=qrels.query, scale=[0, 1, 2, 3], n_resamples=200
            ).overall
            print(
                f"behaviour grades, {n_lists} lists ({qrels.impressions.mean():.0f} impressions a pair), "
                f"{aggregation} with min_count {min_count}: weighted κ {overall.kappa.value:.2f}, "
                f"ρ {overall.spearman.value:.2f} against the true grades"
            )


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        timings()
        propensity_accuracy()
        interval_coverage()
        behaviour_labels()
