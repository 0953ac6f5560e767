"""The ranking measures against exact reference values, hand-made edge cases and invariants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.compute.ranking import (
    Discount,
    Gain,
    Ideal,
    Negative,
    RankingSettings,
    evaluate_ranked,
)
from trec.measures import Measure, parse_measure

NAN = math.nan
LINEAR = RankingSettings(gain=Gain.LINEAR)


def score(labels, measure, judged=None, settings=None):
    values = evaluate_ranked(
        [labels], [measure], judged_labels=None if judged is None else [judged], settings=settings
    )
    return float(values[measure][0])


def test_worked_example_linear_gain():
    labels = [3, 2, 3, 0, 1, 2]
    assert score(labels, "DCG@6", settings=LINEAR) == pytest.approx(6.861, abs=5e-4)
    ideal = sorted(labels, reverse=True)
    assert score(ideal, "DCG@6", settings=LINEAR) == pytest.approx(7.141, abs=5e-4)
    assert score(labels, "nDCG", settings=LINEAR) == pytest.approx(0.9608, abs=5e-5)


def test_exponential_gain_reference():
    labels = [3, 1, 2, 3, 2, 0]
    assert score(labels, "DCG@6") == pytest.approx(13.306, abs=5e-4)
    assert score(labels, "nDCG@6") == pytest.approx(0.9117, abs=5e-5)


def test_exponential_is_the_default_and_differs_from_linear():
    labels = [1, 3]
    assert score(labels, "DCG@2") == pytest.approx(1 + 7 / math.log2(3))
    assert score(labels, "DCG@2", settings=LINEAR) == pytest.approx(1 + 3 / math.log2(3))


def test_jarvelin_discount_leaves_ranks_one_and_two_undiscounted():
    settings = RankingSettings(gain=Gain.LINEAR, discount=Discount.JARVELIN)
    assert score([3, 2, 3], "DCG@3", settings=settings) == pytest.approx(3 + 2 + 3 / math.log2(3))


def test_ideal_uses_every_judged_document_not_only_retrieved():
    # The run found one relevant document; a second one was judged but not retrieved.
    retrieved = [2, 0]
    judged = [2, 3, 0]
    with_judged = score(retrieved, "nDCG@2", judged=judged, settings=LINEAR)
    assert with_judged == pytest.approx(2 / (3 + 2 / math.log2(3)))
    retrieved_only = RankingSettings(gain=Gain.LINEAR, ideal=Ideal.RETRIEVED)
    assert score(retrieved, "nDCG@2", judged=judged, settings=retrieved_only) == pytest.approx(1.0)


def test_unjudged_documents_have_gain_zero_and_lower_judged_at_k():
    labels = [NAN, 3, NAN, 1]
    assert score(labels, "DCG@4", settings=LINEAR) == pytest.approx(3 / math.log2(3) + 1 / math.log2(5))
    assert score(labels, "Judged@4") == 0.5
    assert score(labels, "Judged@10") == 0.2
    assert score(labels, "P@2") == 0.5


def test_fractional_labels_are_used_exactly():
    mean_of_three = (3 + 2 + 2) / 3
    assert score([mean_of_three], "DCG@1") == pytest.approx(2**mean_of_three - 1)
    assert score([mean_of_three], "DCG@1", settings=LINEAR) == pytest.approx(mean_of_three)


def test_negative_labels_count_zero_by_default_and_penalize_on_request():
    labels = [-1, 2]
    assert score(labels, "DCG@2", settings=LINEAR) == pytest.approx(2 / math.log2(3))
    penalize = RankingSettings(gain=Gain.LINEAR, negative=Negative.PENALIZE)
    assert score(labels, "DCG@2", settings=penalize) == pytest.approx(-1 + 2 / math.log2(3))
    # The ideal ignores negative labels: it is 2 at rank 1.
    assert score(labels, "nDCG@2", settings=penalize) == pytest.approx((-1 + 2 / math.log2(3)) / 2)
    assert score(labels, "RR") == 0.5


def test_binary_measures_with_threshold():
    labels = [1, 0, 2, 0, 3]
    judged = [1, 0, 2, 0, 3, 2]
    assert score(labels, "AP", judged=judged) == pytest.approx((1 / 1 + 2 / 3 + 3 / 5) / 4)
    assert score(labels, "AP@3", judged=judged) == pytest.approx((1 / 1 + 2 / 3) / 4)
    assert score(labels, "RR") == 1.0
    assert score(labels, "P@5") == pytest.approx(3 / 5)
    assert score(labels, "R@3", judged=judged) == pytest.approx(2 / 4)
    strict = RankingSettings(rel_threshold=2)
    assert score(labels, "RR", settings=strict) == pytest.approx(1 / 3)
    assert score(labels, "P@5", settings=strict) == pytest.approx(2 / 5)
    assert score(labels, "CG@2", settings=LINEAR) == 1.0


def test_query_without_relevant_documents_scores_zero():
    values = evaluate_ranked([[0, 0, NAN]], ["nDCG", "nDCG@3", "AP", "RR", "R@3", "P@3"])
    assert all(float(v[0]) == 0.0 for v in values.values())


def test_empty_rows_and_padding():
    values = evaluate_ranked(np.full((2, 3), NAN), ["nDCG@10", "P@10", "Judged@5"])
    assert values["nDCG@10"].tolist() == [0.0, 0.0]
    values = evaluate_ranked(np.zeros((0, 0)), ["nDCG@10", "AP", "RR"])
    assert values["nDCG@10"].size == 0


def test_many_queries_at_once_match_one_at_a_time():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, size=(50, 12)).astype(float)
    labels[rng.random(labels.shape) < 0.2] = NAN
    measures = ["nDCG@5", "nDCG", "AP", "RR", "P@3", "R@10", "Judged@10"]
    together = evaluate_ranked(labels, measures)
    for row in range(labels.shape[0]):
        alone = evaluate_ranked(labels[row : row + 1], measures)
        for measure in measures:
            assert together[measure][row] == alone[measure][0]


def test_average_precision_keeps_its_definition_across_blocks_of_queries():
    # Enough queries for several of the blocks AP is summed in: each query's value is still its own.
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, size=(3000, 100)).astype(float)
    labels[rng.random(labels.shape) < 0.3] = NAN
    together = evaluate_ranked(labels, ["AP", "P@10", "R@10"])
    for row in range(0, labels.shape[0], 97):
        ranks = [rank for rank, label in enumerate(labels[row], 1) if label >= 1]
        expected = sum(hits / rank for hits, rank in enumerate(ranks, 1)) / len(ranks)
        assert together["AP"][row] == pytest.approx(expected, rel=1e-12)
        assert together["P@10"][row] == sum(rank <= 10 for rank in ranks) / 10
        alone = evaluate_ranked(labels[row : row + 1], ["AP", "R@10"])
        assert together["AP"][row] == alone["AP"][0]
        assert together["R@10"][row] == alone["R@10"][0]


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("ndcg@10", "nDCG@10"),
        ("NDCG", "nDCG"),
        ("map", "AP"),
        ("mrr", "RR"),
        ("p@5", "P@5"),
        ("ap@5", "AP@5"),
    ],
)
def test_measure_names_are_canonicalized(name, canonical):
    assert str(parse_measure(name)) == canonical


@pytest.mark.parametrize("name", ["foo", "P", "nDCG@0", "nDCG@x", "", "judged"])
def test_bad_measure_names_are_refused(name):
    with pytest.raises(ValueError, match="measure"):
        parse_measure(name)


def test_bad_inputs_name_the_problem():
    with pytest.raises(ValueError, match="labels must be"):
        evaluate_ranked([1, 2], ["nDCG"])
    with pytest.raises(ValueError, match="judged_labels has 2 queries"):
        evaluate_ranked([[1]], ["nDCG"], judged_labels=[[1], [2]])
    with pytest.raises(ValueError, match="gain must be one of"):
        RankingSettings.checked(gain="quadratic")
    assert Measure("nDCG", 10) == parse_measure("ndcg@10")


def test_settings_given_as_plain_strings_mean_their_enum():
    # A plain "linear" is not Gain.LINEAR by identity and once silently gave exponential gain.
    assert RankingSettings(gain="linear") == LINEAR
    assert score([2, 0, 1], "DCG", settings=RankingSettings(gain="linear")) == score(
        [2, 0, 1], "DCG", settings=LINEAR
    )
    assert RankingSettings(gain="exponential", discount="log2").gain is Gain.EXPONENTIAL
    with pytest.raises(ValueError, match="gain must be one of"):
        RankingSettings(gain="quadratic")
    with pytest.raises(ValueError, match="rel_threshold"):
        RankingSettings(rel_threshold="1")
    with pytest.raises(ValueError, match="unknown setting 'depth'"):
        RankingSettings.checked(depth=3)


label_lists = st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=15)


@settings(max_examples=150, deadline=None)
@given(label_lists, st.sampled_from(list(Gain)), st.sampled_from([None, 1, 3, 10]))
def test_ndcg_lies_in_zero_one_and_the_ideal_order_scores_one(labels, gain, k):
    measure = "nDCG" if k is None else f"nDCG@{k}"
    config = RankingSettings(gain=gain)
    value = score(labels, measure, settings=config)
    assert 0.0 <= value <= 1.0 + 1e-12
    ideal = sorted(labels, reverse=True)
    expected = 1.0 if any(ideal[: k or len(ideal)]) else 0.0
    assert score(ideal, measure, settings=config) == pytest.approx(expected)


@settings(max_examples=100, deadline=None)
@given(label_lists)
def test_moving_a_better_document_up_never_lowers_dcg(labels):
    i = int(np.argmax(labels))
    if i == 0:
        return
    swapped = list(labels)
    swapped[0], swapped[i] = swapped[i], swapped[0]
    assert score(swapped, "DCG@15") >= score(labels, "DCG@15") - 1e-12
