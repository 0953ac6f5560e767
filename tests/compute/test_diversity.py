"""Diversity and novelty measures: intent-aware measures equal to ndeval (through ir_measures and pyndeval),
ILS, novelty, redundancy-aware nDCG and position weights on hand-computed examples, and their invariants."""

import math

import ir_measures
import numpy as np
import pyndeval
import pytest
from ir_measures import Qrel, ScoredDoc

from metrics.compute.diversity import evaluate_intents, intra_list_similarity, near_duplicate_groups, novelty
from metrics.compute.ranking import Gain, RankingSettings, evaluate_ranked
from trec.measures import Measure, parse_measure

MEASURES = [
    "alpha_nDCG@1",
    "alpha_nDCG@5",
    "alpha_nDCG@10",
    "alpha_nDCG@20",
    "alpha_DCG@1",
    "alpha_DCG@5",
    "alpha_DCG@20",
    "ERR_IA@1",
    "ERR_IA@2",
    "ERR_IA@10",
    "ERR_IA@20",
    "nERR_IA@1",
    "nERR_IA@5",
    "nERR_IA@20",
    "P_IA@1",
    "P_IA@5",
    "P_IA@20",
    "StRecall@1",
    "StRecall@5",
    "StRecall@20",
]


def random_judgments(seed, n_queries=150):
    """Qrels (query, intent, document, graded judgment) and ranked lists: intents no document serves,
    queries with nothing relevant, documents relevant to several intents, unjudged documents in the lists."""
    rng = np.random.default_rng(seed)
    qrels, rankings = [], {}
    for query in map(str, range(n_queries)):
        n_intents = int(rng.integers(1, 7))
        documents = sorted({f"d{rng.integers(0, 300)}" for _ in range(rng.integers(1, 40))})
        for document in documents:
            for intent in map(str, range(n_intents)):
                if rng.random() < 0.5:
                    qrels.append((query, intent, document, int(rng.choice([0, 0, 1, 2, 3]))))
        pool = documents + [f"unjudged{i}" for i in range(10)]
        rankings[query] = [str(d) for d in rng.permutation(pool)[: rng.integers(1, 30)]]
    return qrels, rankings


def as_arrays(qrels, rankings):
    """The measures' input, built plainly: each query's intents in the order the qrels first name them,
    its judged documents sorted by id."""
    queries = sorted({query for query, *_ in qrels})
    first_seen = {}
    for _, intent, _, _ in qrels:
        first_seen.setdefault(intent, len(first_seen))
    judged = {query: {} for query in queries}
    for query, intent, document, judgment in qrels:
        judged[query].setdefault(document, {})[intent] = judgment >= 1
    columns = {
        query: {
            intent: column
            for column, intent in enumerate(
                sorted({i for d in judged[query].values() for i in d}, key=first_seen.get)
            )
        }
        for query in queries
    }
    n_intents = max(len(c) for c in columns.values())
    width = max(len(judged[q]) for q in queries)
    depth = max((len(rankings.get(q, [])) for q in queries), default=1)
    ideal = np.zeros((len(queries), width, n_intents), bool)
    ranked = np.zeros((len(queries), max(depth, 1), n_intents), bool)
    for row, query in enumerate(queries):
        for position, document in enumerate(sorted(judged[query])):
            for intent, relevant in judged[query][document].items():
                ideal[row, position, columns[query][intent]] = relevant
        for rank, document in enumerate(rankings.get(query, [])):
            for intent, relevant in judged[query].get(document, {}).items():
                ranked[row, rank, columns[query][intent]] = relevant
    return queries, ranked, ideal


def ndeval(qrels, rankings, measures):
    """ir_measures' values (pyndeval, i.e. ndeval's C code): query → measure → value. The lists go in as
    distinct descending scores, so their order is the one given."""
    run = [
        ScoredDoc(query, document, float(len(documents) - rank))
        for query, documents in rankings.items()
        for rank, document in enumerate(documents)
    ]
    judged = [Qrel(query, document, judgment, intent) for query, intent, document, judgment in qrels]
    values: dict[str, dict[str, float]] = {}
    # One alpha at a time: ir_measures 0.4.3 hands the run to the first of several pyndeval calls only, and
    # the measures of another alpha then come out 0.
    by_alpha: dict[object, list] = {}
    for name in measures:
        measure = ir_measures.parse_measure(name)
        by_alpha.setdefault(measure.params.get("alpha"), []).append(measure)
    for group in by_alpha.values():
        for metric in ir_measures.iter_calc(group, judged, run):
            values.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    return values


def ours(qrels, rankings, measures, **options):
    queries, ranked, ideal = as_arrays(qrels, rankings)
    per_query = evaluate_intents(ranked, ideal, measures, **options)
    return {query: {m: float(v[row]) for m, v in per_query.items()} for row, query in enumerate(queries)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_intent_aware_measures_equal_ndeval_on_random_judgments(seed):
    qrels, rankings = random_judgments(seed)
    expected = ndeval(qrels, rankings, MEASURES)
    got = ours(qrels, rankings, MEASURES)
    assert expected.keys() == got.keys()
    for query, values in expected.items():
        for measure, value in values.items():
            assert got[query][measure] == pytest.approx(value, abs=1e-9), (query, measure)


@pytest.mark.parametrize("alpha", [0, 0.1, 0.3, 0.9, 1])
def test_every_alpha_equals_ndeval(alpha):
    qrels, rankings = random_judgments(7, n_queries=60)
    # ir_measures sets alpha on alpha_nDCG and alpha_DCG only; pyndeval's own evaluator takes it for all.
    ndeval_names = {
        "alpha_nDCG@10": "alpha-nDCG@10",
        "alpha_DCG@5": "alpha-DCG@5",
        "ERR_IA@10": "ERR-IA@10",
        "nERR_IA@20": "nERR-IA@20",
    }
    evaluator = pyndeval.RelevanceEvaluator(qrels, list(ndeval_names.values()), alpha=alpha)
    expected = evaluator.evaluate(
        [(q, d, float(len(docs) - rank)) for q, docs in rankings.items() for rank, d in enumerate(docs)]
    )
    got = ours(qrels, rankings, list(ndeval_names), alpha=alpha)
    for query, values in expected.items():
        for ours_name, ndeval_name in ndeval_names.items():
            assert got[query][ours_name] == pytest.approx(values[ndeval_name], abs=1e-9), (query, ours_name)


def test_an_alpha_in_the_name_equals_ir_measures_with_it():
    qrels, rankings = random_judgments(3, n_queries=40)
    names = ["alpha_nDCG(alpha=0.3)@10", "alpha_DCG(alpha=1.0)@5", "alpha_nDCG@10"]
    expected = ndeval(qrels, rankings, names)
    got = ours(qrels, rankings, [parse_measure(name, intents=True) for name in names])
    assert list(next(iter(got.values()))) == names  # ir_measures' spelling
    for query, values in expected.items():
        for measure, value in values.items():
            assert got[query][measure] == pytest.approx(value, abs=1e-9)


# Edge cases, each checked against ndeval: (qrels, rankings).
EDGES = {
    "unjudged documents only": ([("1", "a", "x", 1)], {"1": ["u1", "u2"]}),
    "an intent no document serves": (
        [("1", "1", "a", 1), ("1", "2", "a", 0), ("1", "2", "b", 0), ("1", "3", "b", 1)],
        {"1": ["b", "a"]},
    ),
    "a query with nothing relevant": ([("1", "1", "a", 0), ("1", "2", "b", 0)], {"1": ["a", "b"]}),
    "a list shorter than every cut-off": (
        [("1", "1", "a", 1), ("1", "2", "b", 1), ("1", "2", "c", 2)],
        {"1": ["c"]},
    ),
    "one document serving every intent": (
        [("1", str(i), "a", 1) for i in range(4)] + [("1", "0", "b", 1), ("1", "3", "c", 1)],
        {"1": ["b", "c", "a"]},
    ),
    "equal greedy gains: ndeval takes the larger id": (
        [("1", "1", "a", 1), ("1", "2", "b", 1), ("1", "1", "c", 1), ("1", "2", "c", 1), ("1", "3", "d", 1)],
        {"1": ["a", "b", "c", "d"]},
    ),
    "a single intent": ([("1", "1", d, 1) for d in "abcde"], {"1": ["x", "c", "y", "a"]}),
}


@pytest.mark.parametrize("case", EDGES)
def test_edge_cases_equal_ndeval(case):
    qrels, rankings = EDGES[case]
    expected = ndeval(qrels, rankings, MEASURES)
    got = ours(qrels, rankings, MEASURES)
    for query, values in expected.items():
        for measure, value in values.items():
            assert got[query][measure] == pytest.approx(value, abs=1e-9), measure


def test_hand_computed_example_and_ndeval_rank_one_quirk():
    # Intents 1, 2, 3 are served (4 is judged 0 only): S = 3. Rank 1 serves 1 and 2, rank 2 serves 2 again.
    qrels = [
        ("1", "1", "a", 1),
        ("1", "2", "a", 1),
        ("1", "2", "b", 1),
        ("1", "3", "c", 1),
        ("1", "4", "d", 0),
    ]
    got = ours(qrels, {"1": ["a", "b", "x"]}, ["ERR_IA@1", "ERR_IA@2", "alpha_DCG@1", "StRecall@2", "P_IA@3"])
    # ERR-IA@2 = (2/1 + 0.5/2) / (3/1 + 3·0.5/2); at rank 1 ndeval divides by nothing: 2 intents served.
    assert got["1"]["ERR_IA@2"] == pytest.approx(2.25 / 3.75)
    assert got["1"]["ERR_IA@1"] == got["1"]["alpha_DCG@1"] == 2
    assert got["1"]["StRecall@2"] == pytest.approx(2 / 3)
    assert got["1"]["P_IA@3"] == pytest.approx(3 / 9)


def test_bounds_monotone_subtopic_recall_and_the_ideal_scoring_one():
    qrels, rankings = random_judgments(11, n_queries=80)
    queries, ranked, ideal = as_arrays(qrels, rankings)
    values = evaluate_intents(ranked, ideal, [*MEASURES, "StRecall@2", "StRecall@3"])
    for name, value in values.items():
        k = parse_measure(name, intents=True).k
        if name.startswith(("alpha_nDCG", "nERR_IA", "StRecall", "P_IA")) or k > 1:
            assert ((value >= 0) & (value <= 1 + 1e-12)).all(), name
    recall = [values[f"StRecall@{k}"] for k in (1, 2, 3, 5, 20)]
    assert all((a <= b).all() for a, b in zip(recall, recall[1:], strict=False))
    # The ideal list itself (judged documents, ndeval's greedy order) scores 1 wherever anything is relevant.
    served = ideal.any(axis=(1, 2))
    greedy = _greedy_lists(ideal)
    best = evaluate_intents(greedy, ideal, ["alpha_nDCG@20", "nERR_IA@20"])
    assert np.allclose(best["alpha_nDCG@20"][served], 1) and np.allclose(best["nERR_IA@20"][served], 1)


def _greedy_lists(ideal, alpha=0.5):
    """ndeval's greedy ideal ranking written out plainly, one query at a time."""
    out = np.zeros_like(ideal)
    for row in range(ideal.shape[0]):
        gains, left = np.ones(ideal.shape[2]), list(range(ideal.shape[1]))
        for rank in range(ideal.shape[1]):
            scores = [(ideal[row, d] * gains).sum() for d in left]
            taken = left[max(range(len(left)), key=lambda i: (scores[i], i))]
            out[row, rank] = ideal[row, taken]
            gains[ideal[row, taken]] *= 1 - alpha
            left.remove(taken)
    return out


def test_alpha_zero_is_ndcg_with_the_number_of_intents_served_as_linear_gain():
    qrels, rankings = random_judgments(5, n_queries=80)
    _, ranked, ideal = as_arrays(qrels, rankings)
    got = evaluate_intents(ranked, ideal, ["alpha_nDCG@10"], alpha=0)["alpha_nDCG@10"]
    plain = evaluate_ranked(
        ranked.sum(axis=2).astype(float),
        ["nDCG@10"],
        judged_labels=ideal.sum(axis=2).astype(float),
        settings=RankingSettings(gain=Gain.LINEAR),
    )["nDCG@10"]
    assert np.allclose(got, plain, atol=1e-12)


def test_err_ia_with_alpha_one_and_one_intent_is_reciprocal_rank():
    rng = np.random.default_rng(2)
    ranked = rng.random((300, 12, 1)) < 0.2
    ideal = np.concatenate([ranked, np.ones((300, 1, 1), bool)], axis=1)
    got = evaluate_intents(ranked, ideal, ["ERR_IA@10"], alpha=1)["ERR_IA@10"]
    rr = evaluate_ranked(ranked[:, :, 0].astype(float), ["RR@10"])["RR@10"]
    assert np.allclose(got, rr)


def test_order_of_intents_and_of_documents_within_subtopic_recall_changes_nothing():
    qrels, rankings = random_judgments(9, n_queries=80)
    _, ranked, ideal = as_arrays(qrels, rankings)
    values = evaluate_intents(ranked, ideal, MEASURES)
    flipped = evaluate_intents(ranked[:, :, ::-1], ideal[:, :, ::-1], MEASURES)
    for name in MEASURES:
        assert np.array_equal(values[name], flipped[name]), name  # alpha 0.5: every sum is exact
    top = ranked[:, :5]
    shuffled = np.concatenate([top[:, np.random.default_rng(0).permutation(5)], ranked[:, 5:]], axis=1)
    assert np.array_equal(
        evaluate_intents(shuffled, ideal, ["StRecall@5"])["StRecall@5"], values["StRecall@5"]
    )


def test_many_queries_in_one_call():
    rng = np.random.default_rng(0)
    ranked = rng.random((10_000, 20, 5)) < 0.2
    ideal = np.concatenate([ranked, rng.random((10_000, 30, 5)) < 0.2], axis=1)
    values = evaluate_intents(ranked, ideal, ["alpha_nDCG@20", "ERR_IA@20", "StRecall@20"])
    assert all(v.shape == (10_000,) for v in values.values())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: evaluate_intents(np.zeros((2, 3)), np.zeros((2, 3, 1), bool), ["ERR_IA@5"]),
            "relevance must",
        ),
        (
            lambda: evaluate_intents(np.zeros((2, 3, 1), bool), np.zeros((3, 3, 1), bool), ["ERR_IA@5"]),
            "judged_relevance is 3 queries",
        ),
        (lambda: evaluate_intents(*_one(), ["ERR_IA@5"], alpha=1.5), "alpha must be"),
        (lambda: evaluate_intents(*_one(), ["nDCG@5"]), "not intent-aware"),
        (lambda: evaluate_intents(*_one(), [Measure("nDCG", 5)]), "not an intent-aware measure"),
        (lambda: evaluate_intents(*_one(), []), "at least one"),
        (
            lambda: evaluate_intents(np.ones((1, 1, 1), bool), np.zeros((1, 1, 1), bool), ["ERR_IA@5"]),
            "no judged document serves",
        ),
    ],
)
def test_bad_intent_inputs_name_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _one():
    return np.zeros((1, 2, 1), bool), np.ones((1, 2, 1), bool)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("alpha_nDCG@20", "alpha_nDCG@20"),
        ("alpha-ndcg@20", "alpha_nDCG@20"),
        ("alpha_nDCG(alpha=0.5)@20", "alpha_nDCG@20"),
        ("alpha_nDCG(alpha=0.30)@20", "alpha_nDCG(alpha=0.3)@20"),
        ("alpha_nDCG(alpha = 1)@5", "alpha_nDCG(alpha=1.0)@5"),
        ("alpha_DCG(alpha=.25)@5", "alpha_DCG(alpha=0.25)@5"),
        ("err-ia@10", "ERR_IA@10"),
        ("nERR_IA@10", "nERR_IA@10"),
        ("P-IA@5", "P_IA@5"),
        ("strec@20", "StRecall@20"),
        ("StRecall@20", "StRecall@20"),
    ],
)
def test_intent_measure_names_are_spelt_as_ir_measures_spells_them(name, canonical):
    assert str(parse_measure(name, intents=True)) == canonical
    assert str(ir_measures.parse_measure(canonical)) == canonical


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("alpha_nDCG", "needs a cut-off"),
        ("alpha_nDCG(alpha=2)@5", "alpha must be a number from 0 to 1"),
        ("alpha_nDCG(alpha=x)@5", "alpha must be"),
        ("ERR_IA(alpha=0.3)@5", "only alpha_nDCG and alpha_DCG take an alpha"),
        ("nDCG(alpha=0.3)@5", "not intent-aware"),
        ("alpha_nDCG@0", "at least 1"),
    ],
)
def test_bad_intent_measure_names_are_refused(name, message):
    with pytest.raises(ValueError, match=message):
        parse_measure(name, intents=True)


def test_ranking_measures_refuse_intent_aware_names():
    # The campaign settings (primary_measure) read names without intents: they cannot compute these yet.
    with pytest.raises(ValueError, match="intent-aware"):
        parse_measure("alpha_nDCG@20")
    with pytest.raises(ValueError, match="intent-aware"):
        evaluate_ranked([[1.0]], [Measure("alpha_nDCG", 20)])


# Intra-list similarity: three books of which two share category and author, and a toy with no brand or
# author. Fields: category, brand, author; -1 where a document has no value.
BOOKS = np.array([[[0, 0, 0], [0, 1, 0], [1, -1, -1], [0, 0, 0]]])


def test_ils_is_the_mean_share_of_equal_fields_over_pairs():
    # sim(1,2) = 2/3 (category and author equal, brand not); sim(1,3) = sim(2,3) = 0/1 (only the category
    # is shared, and differs). ILS@3 = (2/3 + 0 + 0) / 3 pairs.
    assert intra_list_similarity(BOOKS, 3)[0] == pytest.approx(2 / 9)
    assert intra_list_similarity(BOOKS, 2)[0] == pytest.approx(2 / 3)
    # Document 4 repeats document 1: sim 1 with it, 2/3 with 2, 0 with 3. Six pairs.
    assert intra_list_similarity(BOOKS, 10)[0] == pytest.approx((2 / 3 + 0 + 0 + 1 + 2 / 3 + 0) / 6)


def test_a_near_duplicate_mark_makes_a_pair_similar_whatever_its_attributes():
    marks = np.zeros((1, 4, 4), bool)
    marks[0, 2, 0] = True  # "the toy is the same as #1", marked one way round
    assert intra_list_similarity(BOOKS, 3, near_duplicates=marks)[0] == pytest.approx((2 / 3 + 1 + 0) / 3)


def test_five_editions_of_one_book_are_as_alike_as_a_list_can_be():
    editions = np.tile(np.array([[[0, 0, 0]]]), (1, 5, 1))
    assert intra_list_similarity(editions, 5)[0] == 1
    no_attributes = np.full((1, 5, 1), -1)
    marks = np.ones((1, 5, 5), bool)
    assert intra_list_similarity(no_attributes, 5, near_duplicates=marks)[0] == 1
    assert intra_list_similarity(no_attributes, 5)[0] == 0


def test_ils_of_short_lists_and_its_invariants():
    rng = np.random.default_rng(1)
    attributes = rng.integers(-1, 3, (200, 8, 4))
    lengths = rng.integers(0, 9, 200)
    values = intra_list_similarity(attributes, 6, lengths=lengths)
    assert ((values >= 0) & (values <= 1)).all()
    assert (values[lengths < 2] == 0).all()
    # Only the set of the top k counts, not its order; what lies past a list's end is ignored.
    order = rng.permutation(6)
    shuffled = np.concatenate([attributes[:, order], attributes[:, 6:]], axis=1)
    full = lengths >= 6
    assert np.allclose(intra_list_similarity(shuffled, 6, lengths=lengths)[full], values[full])
    garbled = attributes.copy()
    garbled[np.arange(8) >= lengths[:, None]] = 2
    assert np.array_equal(intra_list_similarity(garbled, 6, lengths=lengths), values)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: intra_list_similarity(np.zeros((2, 3)), 3), "attributes must be"),
        (lambda: intra_list_similarity(np.zeros((2, 3, 1)), 3), "integer array"),
        (lambda: intra_list_similarity(BOOKS, 0), "k must be"),
        (lambda: intra_list_similarity(BOOKS, 3, lengths=[5, 5]), "lengths must be 1"),
        (
            lambda: intra_list_similarity(BOOKS, 3, near_duplicates=np.zeros((1, 3, 3), bool)),
            "near_duplicates",
        ),
    ],
)
def test_bad_ils_inputs_name_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_novelty_is_the_mean_self_information_of_known_popularities():
    popularity = np.array(
        [[0.5, 0.25, np.nan, 1.0], [np.nan, np.nan, 0.5, 0.5], [0.125, np.nan, np.nan, np.nan]]
    )
    # Query 1: (1 + 2 + 0) bits over the three known; query 2 knows none in its top 2; query 3 one.
    assert novelty(popularity, 4).tolist() == [1.0, 1.0, 3.0]
    top2 = novelty(popularity, 2)
    assert top2[0] == 1.5 and math.isnan(top2[1]) and top2[2] == 3.0
    assert novelty(np.ones((1, 3)), 3)[0] == 0 and not math.copysign(1, novelty(np.ones((1, 3)), 3)[0]) < 0


def test_novelty_ignores_order_within_the_top_k_and_refuses_impossible_popularities():
    rng = np.random.default_rng(3)
    popularity = rng.uniform(0.01, 1, (50, 10))
    assert np.allclose(novelty(popularity[:, ::-1][:, 5:], 5), novelty(popularity[:, :5][:, ::-1], 5))
    assert (novelty(popularity, 10) >= 0).all()
    for bad in (0.0, 1.5, -0.2, np.inf):
        with pytest.raises(ValueError, match=r"probability in \(0, 1\]"):
            novelty([[0.5, bad]], 2)
    with pytest.raises(ValueError, match="k must be"):
        novelty([[0.5]], 0)


# Redundancy-aware nDCG: the seed's five editions of one book, each labelled 3 (gain 7), in one group, and
# two other judged books labelled 2 and 1.
EDITIONS = [[3.0, 3.0, 3.0, 3.0, 3.0]]
EDITION_GROUPS = [[0, 0, 0, 0, 0]]
JUDGED = [[3.0, 3.0, 3.0, 3.0, 3.0, 2.0, 1.0]]
JUDGED_GROUPS = [[0, 0, 0, 0, 0, -1, -1]]


def test_five_editions_score_one_on_ndcg_but_not_when_duplicates_gain_nothing():
    plain = evaluate_ranked(EDITIONS, ["nDCG@5"], judged_labels=JUDGED)["nDCG@5"][0]
    aware = evaluate_ranked(
        EDITIONS,
        ["nDCG@5", "DCG@5", "CG@5", "P@5"],
        judged_labels=JUDGED,
        duplicate_groups=EDITION_GROUPS,
        judged_duplicate_groups=JUDGED_GROUPS,
    )
    assert plain == 1.0
    # Only the first edition gains: DCG 7. The ideal shows one edition, then the books labelled 2 and 1.
    ideal = 7 + 3 / math.log2(3) + 1 / math.log2(4)
    assert aware["DCG@5"][0] == pytest.approx(7.0)
    assert aware["CG@5"][0] == pytest.approx(7.0)
    assert aware["nDCG@5"][0] == pytest.approx(7 / ideal)
    assert aware["P@5"][0] == 1.0  # binary measures are unchanged


def test_a_list_showing_each_groups_best_once_in_order_scores_one():
    labels = [[3.0, 2.0, 1.0, 3.0]]
    groups = [[0, -1, 1, 0]]
    judged = [[2.0, 3.0, 3.0, 1.0, 2.0]]
    judged_groups = [[0, 0, 0, 1, -1]]  # the best of group 0 is a 3, of group 1 a 1
    kwargs = {"judged_labels": judged, "duplicate_groups": groups, "judged_duplicate_groups": judged_groups}
    assert evaluate_ranked(labels, ["nDCG@3"], **kwargs)["nDCG@3"][0] == pytest.approx(1.0)
    # The repeat of group 0 at rank 4 gains nothing: nDCG@4 is still 1.
    assert evaluate_ranked(labels, ["nDCG@4"], **kwargs)["nDCG@4"][0] == pytest.approx(1.0)
    # Without judged labels the list's own groups make the ideal.
    alone = evaluate_ranked(labels, ["nDCG@4"], duplicate_groups=groups)["nDCG@4"][0]
    assert alone == pytest.approx(1.0)


def test_redundancy_aware_ndcg_stays_within_bounds_and_without_groups_is_plain_ndcg():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 4, (300, 10)).astype(float)
    groups = rng.integers(-1, 3, (300, 10))
    aware = evaluate_ranked(labels, ["nDCG@5", "nDCG@10"], duplicate_groups=groups)
    assert all(((v >= 0) & (v <= 1 + 1e-12)).all() for v in aware.values())
    no_groups = evaluate_ranked(labels, ["nDCG@10"], duplicate_groups=np.full((300, 10), -1))["nDCG@10"]
    assert np.array_equal(no_groups, evaluate_ranked(labels, ["nDCG@10"])["nDCG@10"])


def test_pairwise_marks_become_groups_along_chains():
    marks = np.zeros((2, 6, 6), bool)
    marks[0, 3, 1] = marks[0, 1, 0] = True  # #4 like #2, #2 like #1: one group with #1
    marks[0, 4, 5] = True
    assert near_duplicate_groups(marks).tolist() == [[0, 0, -1, 0, 4, 4], [-1] * 6]
    with pytest.raises(ValueError, match="near_duplicates must be"):
        near_duplicate_groups(np.zeros((1, 2, 3), bool))
    # The five editions, marked "same as #1" one after the other, make one group: nDCG@5 as above.
    editions = np.zeros((1, 5, 5), bool)
    editions[0, 1:, 0] = True
    assert near_duplicate_groups(editions).tolist() == EDITION_GROUPS


def test_duplicate_groups_are_checked():
    with pytest.raises(ValueError, match="judged_duplicate_groups is needed"):
        evaluate_ranked(EDITIONS, ["nDCG@5"], judged_labels=JUDGED, duplicate_groups=EDITION_GROUPS)
    with pytest.raises(ValueError, match="without duplicate_groups"):
        evaluate_ranked(EDITIONS, ["nDCG@5"], judged_labels=JUDGED, judged_duplicate_groups=JUDGED_GROUPS)
    with pytest.raises(ValueError, match="duplicate_groups must be integers of shape"):
        evaluate_ranked(EDITIONS, ["nDCG@5"], duplicate_groups=[[0.5] * 5])


def test_the_seeds_promoted_slot_weighted_point_eight():
    # Rank 1 is a promoted slot, weighted 0.8 instead of 1; the other ranks keep the log2 discount.
    weights = (0.8, 1 / math.log2(3), 1 / math.log2(4))
    settings = RankingSettings(position_weights=weights)
    # Labels 1, 3, 2 (gains 1, 7, 3); the ideal order 3, 2, 1 gets the same weights.
    dcg = 1 * 0.8 + 7 / math.log2(3) + 3 / 2
    ideal = 7 * 0.8 + 3 / math.log2(3) + 1 / 2
    got = evaluate_ranked([[1.0, 3.0, 2.0]], ["DCG@3", "nDCG@3"], settings=settings)
    assert got["DCG@3"][0] == pytest.approx(dcg)  # 6.7165
    assert got["nDCG@3"][0] == pytest.approx(dcg / ideal)  # 0.8403
    # The log2 discount as weights gives plain nDCG.
    log2 = RankingSettings(position_weights=[1 / math.log2(r + 1) for r in range(1, 11)])
    labels = np.random.default_rng(5).integers(0, 4, (100, 10)).astype(float)
    assert np.allclose(
        evaluate_ranked(labels, ["nDCG@10"], settings=log2)["nDCG@10"],
        evaluate_ranked(labels, ["nDCG@10"])["nDCG@10"],
    )


def test_position_weights_are_checked():
    for bad, message in [
        ([], "at least one"),
        ([1, -0.5], "rank 2 must be finite and ≥ 0"),
        ([1, math.inf], "rank 2 must be finite"),
        ([1, "x"], "rank 2 must be a number"),
        ("1 2", "must be a list of numbers"),
    ]:
        with pytest.raises(ValueError, match=message):
            RankingSettings(position_weights=bad)
    settings = RankingSettings.checked(position_weights=[1, 0.5])
    assert settings.position_weights == (1.0, 0.5)
    with pytest.raises(
        ValueError, match="nDCG@3 needs a position weight for each of its 3 ranks; 2 are given"
    ):
        evaluate_ranked([[1.0]], ["nDCG@3"], settings=settings)
    with pytest.raises(ValueError, match="nDCG needs a cut-off with position weights"):
        evaluate_ranked([[1.0]], ["nDCG"], settings=settings)
    assert evaluate_ranked([[1.0]], ["AP", "P@5"], settings=settings)["AP"][0] == 1.0
