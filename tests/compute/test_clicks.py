"""The click simulator, the propensity estimators and the IPS click metrics, proved on simulated logs whose
propensities and relevance are known."""

import dataclasses

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from metrics.compute.interactions.impressions import Impressions
from metrics.compute.interactions.online import online_metrics
from metrics.compute.interactions.propensity import intervention_harvesting, position_based_em
from metrics.compute.interactions.simulation import (
    ClickModel,
    default_click_model,
    power_law_propensity,
    simulate_log,
    simulated_rankings,
)

# The proof's users: θ_k = 1/k^0.8, an examined document clicked with probability 0.1 to 0.7 by grade.
PROOF_USERS = dataclasses.replace(default_click_model(), click=np.array([0.1, 0.3, 0.5, 0.7]))


@pytest.fixture(scope="module")
def large_log():
    """200,000 impressions: 200 queries of 12 candidates, two rankers showing 10 each in different orders."""
    rankings, grade = simulated_rankings(
        n_queries=200, n_candidates=12, grade_share=(0.1, 0.2, 0.3, 0.4), noise=(2.0, 2.0), seed=7
    )
    return simulate_log(
        rankings=rankings, ranked_grade=grade, click_model=PROOF_USERS, n_lists=20_000, seed=8
    )


def cell_impressions(cells: list[tuple[int, int, int, int]]) -> Impressions:
    """Impressions from (query, document, position, clicks) cells of 100 impressions each, one request per
    impression."""
    columns = {"query": [], "document": [], "position": [], "clicked": []}
    for query, document, position, clicks in cells:
        columns["query"] += [query] * 100
        columns["document"] += [document] * 100
        columns["position"] += [position] * 100
        columns["clicked"] += [True] * clicks + [False] * (100 - clicks)
    n = len(columns["query"])
    return Impressions.of(
        **{name: np.array(values) for name, values in columns.items()},
        model=np.zeros(n, int),
        request=np.arange(n),
    )


# θ = (1, 1/2, 1/4); documents of attractiveness 0.8 and 0.4, each shown at two or three positions, with
# exactly θ·γ·100 clicks: both estimators must recover θ exactly.
EXACT_CELLS = [
    (0, 0, 1, 80),
    (0, 0, 2, 40),
    (0, 0, 3, 20),
    (0, 1, 2, 20),
    (0, 1, 3, 10),
    (1, 0, 1, 40),
    (1, 0, 3, 10),
]


def test_the_simulator_clicks_as_the_position_based_model_says(large_log):
    impressions = large_log.impressions
    assert impressions.query.size == 200_000
    grade = large_log.ranked_grade[impressions.model, impressions.query, impressions.position - 1]
    expected = PROOF_USERS.propensity[impressions.position - 1] * PROOF_USERS.click[grade]
    # Clicks per position over their expectation: 1 within sampling error (at most ~4 SD of 20,000 draws).
    for position in range(1, 11):
        at = impressions.position == position
        assert impressions.clicked[at].sum() / expected[at].sum() == pytest.approx(1, abs=0.04)
    assert np.isnan(impressions.dwell[~impressions.clicked]).all()
    assert not (impressions.cart & ~impressions.clicked).any()
    assert not (impressions.purchase & ~impressions.cart).any()
    assert np.isnan(impressions.rating[~impressions.purchase]).all()


def test_the_simulator_is_seeded():
    rankings, grade = simulated_rankings(n_queries=5, seed=1)
    first, second = (
        simulate_log(rankings=rankings, ranked_grade=grade, click_model=PROOF_USERS, n_lists=50, seed=3)
        for _ in range(2)
    )
    assert np.array_equal(first.impressions.clicked, second.impressions.clicked)
    assert np.array_equal(first.impressions.dwell, second.impressions.dwell, equal_nan=True)


def test_two_rankers_share_documents_at_different_positions(large_log):
    online, experimental = large_log.rankings
    shared = [np.intersect1d(o, e).size for o, e in zip(online, experimental, strict=True)]
    same_place = (online == experimental).sum(axis=1)
    # Of a query's 10 results, most are shown by both rankers, and most of those at different positions.
    assert np.mean(shared) > 8 and np.mean(shared - same_place) > 6


@pytest.mark.parametrize("estimator", [intervention_harvesting, position_based_em])
def test_both_estimators_recover_exact_propensities(estimator):
    curve = estimator(cell_impressions(EXACT_CELLS), n_positions=3, n_resamples=20)
    assert curve.propensity == pytest.approx([1, 0.5, 0.25], rel=1e-5)
    assert curve.position.tolist() == [1, 2, 3]


def test_harvesting_with_pairs_at_the_first_position_only_is_the_ratio_to_it():
    # Swaps (1, 2) and (1, 3) only: θ_k = c_k^{1,k} / c_1^{1,k}, the paper's estimator relative to position 1.
    cells = [(0, 0, 1, 50), (0, 0, 2, 30), (0, 1, 1, 20), (0, 1, 2, 9), (0, 2, 1, 60), (0, 2, 3, 15)]
    curve = intervention_harvesting(cell_impressions(cells), n_positions=3, n_resamples=20)
    assert curve.propensity[1] == pytest.approx((0.30 + 0.09) / (0.50 + 0.20))
    assert curve.propensity[2] == pytest.approx(0.15 / 0.60)
    assert curve.evidence.tolist() == [3, 2, 1]


@pytest.mark.parametrize("estimator", [intervention_harvesting, position_based_em])
def test_a_position_no_swap_reaches_has_no_estimate(estimator):
    # Positions 3 and 4 swap only with each other: nothing ties them to position 1.
    cells = [(0, 0, 1, 50), (0, 0, 2, 30), (0, 1, 3, 20), (0, 1, 4, 10)]
    curve = estimator(cell_impressions(cells), n_positions=4, n_resamples=20)
    assert curve.propensity[:2] == pytest.approx([1, 0.6])
    assert np.isnan(curve.propensity[2:]).all() and np.isnan(curve.ci_low[2:]).all()
    assert curve.n_resamples[2:].tolist() == [0, 0]


def test_harvested_propensities_are_within_ten_percent_from_200000_impressions(large_log):
    curve = intervention_harvesting(large_log.impressions, n_resamples=1000, seed=1)
    truth = power_law_propensity(10)
    assert np.abs(curve.propensity / truth - 1).max() < 0.10
    assert (curve.ci_low <= curve.propensity).all() and (curve.propensity <= curve.ci_high).all()
    # The intervals are honest about the noise: at least 8 of the 9 estimated positions cover the truth.
    assert ((curve.ci_low <= truth) & (truth <= curve.ci_high))[1:].sum() >= 8
    assert curve.n_resamples.min() == 1000


def test_em_propensities_are_within_ten_percent_from_200000_impressions(large_log):
    curve = position_based_em(large_log.impressions, n_resamples=20, seed=1)
    assert curve.converged
    assert np.abs(curve.propensity / power_law_propensity(10) - 1).max() < 0.10
    assert (curve.ci_low <= curve.propensity).all() and (curve.propensity <= curve.ci_high).all()


def test_ips_with_harvested_propensities_removes_the_position_bias(large_log):
    truth = large_log.ctr(0, 10, debiased=True)
    curve = intervention_harvesting(large_log.impressions, n_resamples=100)
    estimates = online_metrics(large_log.impressions, model=0, propensity=curve.propensity).estimates
    assert estimates["IPS-CTR@10"].value == pytest.approx(truth, rel=0.03)
    # The naive CTR is a third lower: it counts the results nobody looked at.
    assert estimates["CTR@10"].value < 0.7 * truth


@pytest.fixture(scope="module")
def repeated_experiments():
    """400 seeded experiments of 1,000 lists each (50 queries, sessions of 5 lists whose users are 0.4 or
    1.6 times as eager to click): per experiment, model 0's true naive and debiased CTR@10 and its
    estimates with intervals by session, and by request (sessions ignored).

    BLAS runs on one thread here: its products are small (300 resamples × about 100 sessions, by 14
    columns), and on two shared cores a second BLAS thread made each one twenty times slower."""
    users = default_click_model(eagerness=0.6)
    with threadpool_limits(limits=1, user_api="blas"):
        rows = [_experiment(users, seed) for seed in range(400)]
    return rows


def _experiment(users, seed: int) -> tuple:
    rankings, grade = simulated_rankings(n_queries=50, seed=seed)
    log = simulate_log(
        rankings=rankings,
        ranked_grade=grade,
        click_model=users,
        n_lists=1000,
        mean_session_lists=5,
        seed=seed,
    )
    by_session = online_metrics(
        log.impressions, model=0, propensity=users.propensity, n_resamples=300, seed=seed
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
        n_resamples=300,
        seed=seed,
    ).estimates
    return (
        log.ctr(0, 10, debiased=False),
        log.ctr(0, 10, debiased=True),
        by_session["CTR@10"],
        by_session["IPS-CTR@10"],
        by_session["SNIPS-CTR@10"],
        by_request["CTR@10"],
    )


NAIVE_TRUTH, DEBIASED_TRUTH, NAIVE, IPS, SNIPS, NAIVE_BY_REQUEST = range(6)  # columns of repeated_experiments


def coverage(rows, truth: int, estimate: int) -> float:
    return float(np.mean([row[estimate].ci_low <= row[truth] <= row[estimate].ci_high for row in rows]))


def test_the_ips_ctr_interval_covers_the_debiased_ctr_and_the_naive_one_does_not(repeated_experiments):
    ips_coverage = coverage(repeated_experiments, DEBIASED_TRUTH, IPS)
    assert 0.93 <= ips_coverage <= 0.97
    # Without clipping, self-normalising changes nothing.
    assert coverage(repeated_experiments, DEBIASED_TRUTH, SNIPS) == ips_coverage
    assert coverage(repeated_experiments, DEBIASED_TRUTH, NAIVE) == 0
    ips_bias = np.mean([row[IPS].value - row[DEBIASED_TRUTH] for row in repeated_experiments])
    naive_bias = np.mean([row[NAIVE].value - row[DEBIASED_TRUTH] for row in repeated_experiments])
    assert abs(ips_bias) < 0.002
    assert naive_bias < -0.15


def test_the_cluster_bootstrap_covers_near_nominal_and_ignoring_sessions_does_not(repeated_experiments):
    assert 0.93 <= coverage(repeated_experiments, NAIVE_TRUTH, NAIVE) <= 0.97
    # Lists of one eager user click together: drawn one by one they look more certain than they are.
    assert coverage(repeated_experiments, NAIVE_TRUTH, NAIVE_BY_REQUEST) < 0.8


def test_clipping_lowers_ips_and_self_normalising_restores_its_scale(large_log):
    users = large_log.click_model
    truth = large_log.ctr(0, 10, debiased=True)
    clipped = online_metrics(
        large_log.impressions, model=0, propensity=users.propensity, max_weight=2.0, n_resamples=200
    ).estimates
    # Positions 3 to 10 have θ < 1/2, so their clicks weigh 2 instead of up to 6.3.
    assert clipped["IPS-CTR@10"].value < 0.8 * truth
    assert clipped["SNIPS-CTR@10"].value == pytest.approx(truth, rel=0.1)


def test_click_model_checks_its_probabilities():
    with pytest.raises(ValueError, match="click must hold probabilities"):
        dataclasses.replace(PROOF_USERS, click=np.array([0.1, 1.2, 0.3, 0.4]))
    with pytest.raises(ValueError, match="eagerness"):
        dataclasses.replace(PROOF_USERS, eagerness=0.5)
    with pytest.raises(ValueError, match="one entry per grade"):
        ClickModel(
            propensity=np.ones(3),
            click=np.ones(2) / 2,
            dwell=np.ones(3),
            cart=np.zeros(2),
            purchase=np.zeros(2),
            good_rating=np.zeros(2),
        )


def test_estimators_refuse_what_is_not_impressions():
    with pytest.raises(ValueError, match="impressions must be Impressions"):
        intervention_harvesting({"query": [0]})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tol must be a positive number"):
        position_based_em(cell_impressions(EXACT_CELLS), tol=0)


def test_simulate_log_refuses_grades_the_users_do_not_know():
    rankings, grade = simulated_rankings(n_queries=2, seed=0)
    with pytest.raises(ValueError, match="grade indices 0..3"):
        simulate_log(rankings=rankings, ranked_grade=grade + 4, click_model=PROOF_USERS, n_lists=10)
    with pytest.raises(ValueError, match="propensities for 5 positions only"):
        simulate_log(rankings=rankings, ranked_grade=grade, click_model=default_click_model(5), n_lists=10)
