"""Online metrics per model, their paired difference per query, offline–online agreement, and the impression
columns' checks."""

import numpy as np
import pytest
from scipy import stats

from metrics.compute.interactions.impressions import ClusterBy, Impressions
from metrics.compute.interactions.offline_online import offline_online_agreement
from metrics.compute.interactions.online import (
    metric_names,
    online_differences,
    online_metrics,
    query_metrics,
)
from metrics.compute.interactions.simulation import default_click_model, simulate_log, simulated_rankings
from metrics.compute.significance import paired_comparison

# Model 0 shows two lists. Request 10 (query 0): clicks at positions 1 and 2 (30 s and 10 s), a purchase at
# 2, nothing at 3. Request 11 (query 1): two results, no click. Model 1 shows one list, request 12 (query 0):
# a click at 1 with unknown dwell.
WORKED = {
    "query": [0, 0, 0, 1, 1, 0, 0],
    "model": [0, 0, 0, 0, 0, 1, 1],
    "request": [10, 10, 10, 11, 11, 12, 12],
    "position": [1, 2, 3, 1, 2, 1, 2],
    "document": [5, 6, 7, 8, 9, 6, 5],
    "clicked": [True, True, False, False, False, True, False],
    "dwell": [30.0, 10.0, np.nan, np.nan, np.nan, np.nan, np.nan],
    "purchase": [False, True, False, False, False, False, False],
    "session": [0, 0, 0, 1, 1, 2, 2],
}


def worked(**changes) -> Impressions:
    columns = WORKED | changes
    return Impressions.of(
        **{name: None if values is None else np.array(values) for name, values in columns.items()}
    )


def test_online_metrics_of_the_worked_example_by_hand():
    metrics = online_metrics(worked(), model=0, k=2, propensity=[1.0, 0.5], n_resamples=50)
    values = {name: estimate.value for name, estimate in metrics.estimates.items()}
    assert values == {
        "CTR@2": 2 / 4,  # two clicks among the four results at positions 1 and 2
        "IPS-CTR@2": (1 / 1 + 1 / 0.5) / 4,
        "SNIPS-CTR@2": (1 + 2) / (4 * 1.0),  # θ · w is 1 at every position without clipping
        "Clicks": (2 + 0) / 2,
        "Abandonment": 1 / 2,
        "Dwell": (30 + 10) / 2,
        "Conversion": 1 / 2,
    }
    assert (metrics.n_lists, metrics.n_impressions, metrics.n_clicks) == (2, 5, 2)
    assert metrics.cluster_by is ClusterBy.SESSION
    assert metrics.estimates["CTR@2"].n_clusters == 2


def test_clipped_and_self_normalised_ips_by_hand():
    metrics = online_metrics(worked(), model=0, k=2, propensity=[1.0, 0.5], max_weight=1.5, n_resamples=50)
    # w = (1, 1.5): a click at position 2 weighs 1.5 instead of 2; θ · w = (1, 0.75).
    assert metrics.estimates["IPS-CTR@2"].value == pytest.approx((1 + 1.5) / 4)
    assert metrics.estimates["SNIPS-CTR@2"].value == pytest.approx((1 + 1.5) / (1 + 0.75 + 1 + 0.75))


def test_without_propensities_there_are_no_ips_metrics():
    metrics = online_metrics(worked(), model=1, k=10, n_resamples=50)
    assert tuple(metrics.estimates) == metric_names(10, ips=False)
    assert metrics.estimates["Dwell"].value != metrics.estimates["Dwell"].value  # NaN: no dwell known
    assert metrics.estimates["CTR@10"].value == 1 / 2


def test_query_metrics_by_hand():
    per_query = query_metrics(worked(), model=0, k=2)
    assert per_query["CTR@2"].tolist() == [1.0, 0.0]
    assert per_query["Abandonment"].tolist() == [0.0, 1.0]
    assert np.isnan(per_query["Dwell"][1])


def test_the_bootstrap_draws_clusters_together():
    # One session holding every list: each resample draws it whole, so the interval is a point.
    impressions = worked(session=[0] * 7)
    estimate = online_metrics(impressions, model=0, k=2, n_resamples=50).estimates["CTR@2"]
    assert estimate.ci_low == estimate.ci_high == estimate.value == 0.5
    by_query = online_metrics(impressions, model=0, k=2, n_resamples=200, cluster_by="query")
    assert by_query.cluster_by is ClusterBy.QUERY
    assert by_query.estimates["CTR@2"].ci_low == 0 and by_query.estimates["CTR@2"].ci_high == 1


def test_without_sessions_clusters_are_queries():
    impressions = worked(session=None)
    assert online_metrics(impressions, model=0, n_resamples=10).cluster_by is ClusterBy.QUERY
    with pytest.raises(ValueError, match="no sessions"):
        online_metrics(impressions, model=0, cluster_by="session")


@pytest.fixture(scope="module")
def experiment():
    rankings, grade = simulated_rankings(n_queries=60, noise=(2.0, 0.5), seed=3)
    users = default_click_model()
    return simulate_log(rankings=rankings, ranked_grade=grade, click_model=users, n_lists=6000, seed=4)


def test_online_differences_are_paired_comparisons_of_the_per_query_metrics(experiment):
    users = experiment.click_model
    differences = online_differences(
        experiment.impressions,
        online_model=0,
        experimental_model=1,
        propensity=users.propensity,
        n_resamples=500,
    )
    assert tuple(differences) == metric_names(10, ips=True)
    online = query_metrics(experiment.impressions, model=0, propensity=users.propensity)
    experimental = query_metrics(experiment.impressions, model=1, propensity=users.propensity)
    for name, difference in differences.items():
        both = np.isfinite(online[name]) & np.isfinite(experimental[name])
        assert difference.query.tolist() == np.flatnonzero(both).tolist()
        assert difference.delta == pytest.approx(experimental[name][both] - online[name][both])
        assert difference.comparison == paired_comparison(
            online[name][both], experimental[name][both], n_resamples=500
        )


def test_the_better_ranker_wins_online(experiment):
    # The experimental ranker's noise is a quarter of the online one's: users click more and abandon less.
    differences = online_differences(
        experiment.impressions,
        online_model=0,
        experimental_model=1,
        propensity=experiment.click_model.propensity,
    )
    ips = differences["IPS-CTR@10"].comparison
    truth = np.nanmean(
        experiment.query_ctr(1, 10, debiased=True) - experiment.query_ctr(0, 10, debiased=True)
    )
    assert ips.ci_low > 0 and ips.ci_low <= truth <= ips.ci_high
    assert differences["Abandonment"].comparison.mean_delta < 0


def test_offline_online_agreement_lists_both_directions():
    query = np.array([4, 0, 1, 2, 3, 5, 6])
    offline = np.array([0.10, 0.20, -0.05, 0.005, -0.30, 0.04, 0.02])
    online = np.array([-0.02, 0.03, 0.04, -0.20, 0.002, -0.08, 0.03])
    agreement = offline_online_agreement(query, offline, online, n_resamples=200)
    # Judges prefer the experiment, users the online model: queries 4 and 5; 5's deltas multiply to more.
    assert agreement.judges_only.tolist() == [5, 4]
    assert agreement.users_only.tolist() == [1]
    # Query 2's offline delta and 3's online delta are within the 0.01 margin; 0 and 6 agree.
    assert agreement.agree == 2
    assert agreement.correlation.value == pytest.approx(stats.spearmanr(offline, online).statistic)
    assert agreement.correlation.ci_low <= agreement.correlation.value <= agreement.correlation.ci_high
    wider = offline_online_agreement(query, offline, online, offline_margin=0.06, n_resamples=200)
    assert wider.judges_only.tolist() == [4]


def test_offline_online_agreement_refuses_a_query_listed_twice():
    with pytest.raises(ValueError, match="each query once"):
        offline_online_agreement([0, 0], [0.1, 0.2], [0.1, 0.2])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"position": [1, 1, 3, 1, 2, 1, 2]}, "request 10 shows position 1 more than once"),
        ({"query": [0, 1, 0, 1, 1, 0, 0]}, "request 10 has more than one query"),
        ({"model": [0, 0, 0, 0, 1, 1, 1]}, "request 11 has more than one model"),
        ({"session": [0, 0, 1, 1, 1, 2, 2]}, "request 10 has more than one session"),
        ({"position": [0, 2, 3, 1, 2, 1, 2]}, "position must be 1 or more"),
        ({"clicked": [1, 1, 0, 0, 0, 1, 0]}, "clicked must hold booleans"),
        ({"dwell": [-1.0] + [np.nan] * 6}, "dwell must be seconds"),
        ({"document": [5, 6, 7, 8, 9, 6]}, "the label arrays must have the same length"),
    ],
)
def test_impressions_refuse_bad_columns(changes, message):
    with pytest.raises(ValueError, match=message):
        worked(**changes)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"model": 2}, "model must be less than n_models"),
        ({"k": 0}, "k must be at least 1"),
        ({"propensity": [1.0]}, "propensity must cover positions 1 to k"),
        ({"propensity": [1.0, 0.0]}, "propensity must be known and positive"),
        ({"propensity": [1.0, 0.5], "max_weight": 0.5}, "max_weight must be a number of at least 1"),
        ({"cluster_by": "user"}, "cluster_by must be one of"),
    ],
)
def test_online_metrics_refuse_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        online_metrics(worked(), **({"model": 0, "k": 2} | arguments))


def test_online_differences_refuse_one_model_against_itself():
    with pytest.raises(ValueError, match="must differ"):
        online_differences(worked(), online_model=0, experimental_model=0)
