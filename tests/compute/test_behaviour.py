"""Labels from behaviour: the action mapping on a worked example, the per-(query, document) grade, and its
agreement with the judges' grades."""

import io

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from metrics.compute.interactions.behaviour import (
    ActionGrades,
    GradeAggregation,
    action_grades,
    behaviour_agreement,
    behaviour_qrels,
)
from metrics.compute.interactions.impressions import Impressions
from metrics.compute.interactions.simulation import default_click_model, simulate_log, simulated_rankings
from trec.files import write_qrels

NAN = np.nan
# The worked example: each impression's actions and, by hand, its grade under the default mapping.
# clicked, dwell, cart, purchase, rating -> grade
WORKED = [
    (False, NAN, False, False, NAN, 0),  # shown, nothing done
    (True, 40.0, False, False, NAN, 1),  # clicked and read
    (True, 3.0, False, False, NAN, 1),  # a 3-second click still counts with min_dwell 0
    (True, 60.0, True, False, NAN, 2),  # put in the cart
    (True, 90.0, True, True, 5.0, 3),  # bought, rated 5: good
    (True, 90.0, True, True, 4.0, 3),  # bought, rated 4: good (at least good_rating)
    (True, 90.0, True, True, NAN, 2),  # bought, not rated: as a cart
    (True, 20.0, True, True, 2.0, 1),  # bought, rated 2: looked right and was not
    (False, NAN, True, False, NAN, 2),  # added to the cart from the list, without a click
    (False, NAN, False, False, 5.0, 0),  # a rating without a purchase is not read
    (True, NAN, False, False, NAN, 1),  # a click whose dwell is unknown counts
]


def worked_columns():
    clicked, dwell, cart, purchase, rating, grade = (np.array(column) for column in zip(*WORKED, strict=True))
    return clicked.astype(bool), dwell, cart.astype(bool), purchase.astype(bool), rating, grade.astype(float)


def test_the_worked_example_maps_as_by_hand():
    clicked, dwell, cart, purchase, rating, expected = worked_columns()
    assert action_grades(clicked, dwell, cart, purchase, rating).tolist() == expected.tolist()


def test_the_mapping_is_configurable():
    clicked, dwell, cart, purchase, rating, _ = worked_columns()
    mapping = ActionGrades(purchase_unrated=3, purchase_poor=0, good_rating=5, min_dwell=5)
    grades = action_grades(clicked, dwell, cart, purchase, rating, mapping=mapping)
    # The 3-second click is a bounce; a 4 is no longer good; unrated purchases earn 3, poor ones 0.
    assert grades.tolist() == [0, 1, 0, 2, 3, 0, 3, 0, 2, 0, 1]
    assert mapping.grades.tolist() == [0, 1, 2, 3]


def test_omitted_actions_mean_never():
    assert action_grades(np.array([True, False])).tolist() == [1, 0]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("click", float("nan"), "click must be a finite number"),
        ("min_dwell", -1, "min_dwell must be 0 or more"),
    ],
)
def test_action_grades_refuse_bad_settings(field, value, message):
    with pytest.raises(ValueError, match=message):
        ActionGrades(**{field: value})


def impressions_of(rows: list[tuple[int, int, int]]) -> Impressions:
    """(query, document, row of WORKED) per impression, one request each."""
    clicked, dwell, cart, purchase, rating, _ = worked_columns()
    query, document, action = (np.array(column) for column in zip(*rows, strict=True))
    n = query.size
    return Impressions.of(
        query=query,
        model=np.zeros(n, int),
        request=np.arange(n),
        position=np.ones(n, int),
        document=document,
        clicked=clicked[action],
        dwell=dwell[action],
        cart=cart[action],
        purchase=purchase[action],
        rating=rating[action],
    )


# Query 0, document 7: shown 3 times (nothing, a click, a cart); query 0, document 2: twice (a well-rated
# purchase, nothing); query 1, document 7: once, nothing.
PAIRS = [(0, 7, 0), (0, 2, 4), (0, 7, 1), (1, 7, 0), (0, 7, 3), (0, 2, 0)]


def test_the_behaviour_grade_of_a_pair_is_its_furthest_action():
    qrels = behaviour_qrels(impressions_of(PAIRS))
    assert qrels.aggregation is GradeAggregation.MAX
    assert list(zip(qrels.query.tolist(), qrels.document.tolist(), strict=True)) == [(0, 2), (0, 7), (1, 7)]
    assert qrels.grade.tolist() == [3, 2, 0]
    assert qrels.impressions.tolist() == [2, 3, 1]
    assert qrels.clicks.tolist() == [1, 2, 0]


def test_the_highest_grade_enough_impressions_reached():
    qrels = behaviour_qrels(impressions_of(PAIRS), min_count=2)
    # (0, 2): a good purchase and nothing; (0, 7): nothing, a click, a cart; (1, 7) has one impression only.
    assert qrels.grade.tolist() == [0, 1, 0]


def test_the_mean_grade_and_the_minimum_impressions():
    qrels = behaviour_qrels(impressions_of(PAIRS), aggregation="mean", min_impressions=2)
    assert qrels.grade.tolist() == [3 / 2, (0 + 1 + 2) / 3]
    assert qrels.document.tolist() == [2, 7]


def test_behaviour_qrels_are_written_as_trec_qrels():
    qrels = behaviour_qrels(impressions_of(PAIRS))
    query_ids, document_ids = np.array(["q0", "q1"]), np.array([f"d{i}" for i in range(8)])
    out = io.StringIO()
    write_qrels(out, query_ids[qrels.query], document_ids[qrels.document], qrels.grade)
    assert out.getvalue() == "q0 0 d2 3\nq0 0 d7 2\nq1 0 d7 0\n"


def agreement_with_true_grades(n_lists: int, **aggregation):
    """Behaviour grades of simulated users (40 queries) against the true grades."""
    rankings, grade = simulated_rankings(n_queries=40, seed=5)
    log = simulate_log(
        rankings=rankings, ranked_grade=grade, click_model=default_click_model(), n_lists=n_lists, seed=6
    )
    qrels = behaviour_qrels(log.impressions, **aggregation)
    true_grade = dict(zip(rankings.ravel().tolist(), grade.ravel().tolist(), strict=True))
    truth = np.array([true_grade[document] for document in qrels.document.tolist()])
    behaviour = np.floor(qrels.grade + 0.5)  # a mean grade, to the nearest grade
    return behaviour_agreement(
        behaviour, truth, query=qrels.query, scale=[0, 1, 2, 3], n_resamples=10
    ).overall


def test_the_maximum_reads_behaviour_and_the_mean_reads_position():
    # About 36 impressions per (query, document).
    maximum = agreement_with_true_grades(2000)
    assert maximum.kappa.value > 0.75 and maximum.spearman.value > 0.75
    assert agreement_with_true_grades(2000, aggregation="mean").kappa.value < 0.2


def test_with_heavy_traffic_asking_several_users_to_agree_helps():
    # About 360 impressions per pair: stray clicks and purchases lift the plain maximum of poor documents.
    assert agreement_with_true_grades(20_000, min_count=5).kappa.value > 0.9
    assert agreement_with_true_grades(20_000).kappa.value < 0.75


def random_pairs(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 4, n) + rng.choice([0.0, 1 / 3, 2 / 3], n)  # means of three judges
    behaviour = np.clip(np.round(human + rng.normal(0, 1, n)), 0, 3)
    return behaviour, np.minimum(human, 3), rng.integers(0, 40, n)


def test_behaviour_agreement_matches_sklearn_and_scipy():
    behaviour, human, query = random_pairs(1)
    agreement = behaviour_agreement(behaviour, human, query=query, scale=[0, 1, 2, 3], n_resamples=300)
    rounded = np.floor(human + 0.5)  # the nearest grade, halves up
    expected_kappa = cohen_kappa_score(behaviour, rounded, labels=[0, 1, 2, 3], weights="quadratic")
    assert agreement.overall.kappa.value == pytest.approx(expected_kappa)
    assert agreement.overall.spearman.value == pytest.approx(stats.spearmanr(behaviour, human).statistic)
    assert agreement.overall.n_pairs == 300
    assert agreement.overall.kappa.n_tasks == agreement.overall.spearman.n_clusters == 40
    for coefficient in (agreement.overall.kappa, agreement.overall.spearman):
        assert coefficient.ci_low < coefficient.value < coefficient.ci_high


def test_behaviour_agreement_per_segment_is_that_of_the_segments_pairs():
    behaviour, human, query = random_pairs(2)
    segment = np.where(query < 10, "head", "tail")
    agreement = behaviour_agreement(behaviour, human, query=query, scale=[0, 1, 2, 3], segment=segment)
    assert list(agreement.by_segment) == ["head", "tail"]
    head = segment == "head"
    alone = behaviour_agreement(behaviour[head], human[head], query=query[head], scale=[0, 1, 2, 3])
    assert agreement.by_segment["head"] == alone.overall


def test_behaviour_agreement_refuses_grades_off_the_scale():
    with pytest.raises(ValueError, match="behaviour_grade holds 0.5"):
        behaviour_agreement([0.5, 1], [1, 2], query=[0, 1], scale=[0, 1, 2, 3])


def test_behaviour_qrels_refuse_bad_settings():
    with pytest.raises(ValueError, match="aggregation must be one of 'max', 'mean'"):
        behaviour_qrels(impressions_of(PAIRS), aggregation="median")
    with pytest.raises(ValueError, match="min_count must be at least 1"):
        behaviour_qrels(impressions_of(PAIRS), min_count=0)
