"""ndeval's qrels (`topic intent docno judgment`) read from files, and runs scored against them from files:
the reader's errors and comments, and equality with ndeval (ir_measures and pyndeval) on random files full
of ties, unjudged documents and queries only one side has."""

import gzip

import ir_measures
import numpy as np
import pytest
from ir_measures import Qrel, ScoredDoc

import trec.tokenizer as tokenizer
from metrics.compute.evaluation import IntentQrelsIndex, evaluate_intent_run
from metrics.evaluation_files import read_files
from trec.files import read_run
from trec.intents import read_intent_qrels
from trec.tokenizer import TrecFormatError

MEASURES = [
    "alpha_nDCG@5",
    "alpha_nDCG@20",
    "alpha_DCG@10",
    "ERR_IA@20",
    "nERR_IA@10",
    "P_IA@5",
    "StRecall@20",
]


def write(path, lines, *, gzipped=False):
    text = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(text) if gzipped else text)
    return path


def test_reads_intent_qrels_with_comments_blank_lines_tabs_and_gzip(tmp_path):
    lines = [
        "# TREC 2009 Web track, diversity task",
        "1 1 a 1",
        "",
        "  # an indented comment",
        "1\t2  a#1 0",
        "2 x b 2",
    ]
    qrels = read_intent_qrels(write(tmp_path / "q.gz", lines, gzipped=True))
    assert qrels.query.tolist() == [b"1", b"1", b"2"]
    assert qrels.intent.tolist() == [b"1", b"2", b"x"]
    assert qrels.document.tolist() == [b"a", b"a#1", b"b"]  # a # inside a line is no comment
    assert qrels.judgment.tolist() == [1.0, 0.0, 2.0]
    assert qrels.line.tolist() == [2, 5, 6]


def test_comment_lines_keep_line_numbers_right_across_read_windows(tmp_path, monkeypatch):
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 32)
    lines = [f"# comment {i}" if i % 3 == 0 else f"q{i} {i % 4} d{i} 1" for i in range(40)] + ["q 1 d x"]
    with pytest.raises(TrecFormatError) as error:
        read_intent_qrels(write(tmp_path / "q", lines))
    assert str(error.value) == f"{tmp_path / 'q'}:41: judgment 'x' is not a number"
    assert read_intent_qrels(write(tmp_path / "ok", lines[:40])).line.tolist() == [
        i + 1 for i in range(40) if i % 3
    ]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["1 1 a 1", "1 Q0 a"], "q:2: expected 4 fields, found 3"),
        (["1 1 a 1", "1 1 b 1 extra"], "q:2: expected 4 fields, found 5"),
        (["1 1 a high"], "q:1: judgment 'high' is not a number"),
        (["1 " + "i" * 300 + " a 1"], "q:1: the intent is longer than 255 bytes"),
    ],
)
def test_bad_intent_qrels_lines_are_named(tmp_path, lines, message):
    with pytest.raises(TrecFormatError, match=message):
        read_intent_qrels(write(tmp_path / "q", lines))


def test_a_judgment_repeated_for_the_same_intent_is_refused_with_both_lines(tmp_path):
    qrels = read_intent_qrels(write(tmp_path / "q", ["1 1 a 1", "1 2 a 1", "1 1 b 0", "1 1 a 0"]))
    with pytest.raises(TrecFormatError) as error:
        IntentQrelsIndex(qrels)
    assert (
        str(error.value)
        == f"{tmp_path / 'q'}:4: document 'a' is judged twice for intent '1' of query '1' (also line 1)"
    )


def random_files(tmp_path, seed, n_queries=120):
    """Intent qrels and a run with many tied scores, unjudged documents, run queries without judgments and
    judged queries without a run; the intents of a query named in no particular order."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for query in map(str, range(n_queries)):
        intents = [str(i) for i in rng.permutation(7)[: rng.integers(1, 7)]]
        documents = sorted({f"d{rng.integers(0, 300)}" for _ in range(rng.integers(1, 40))})
        for document in documents:
            for intent in intents:
                if rng.random() < 0.5:
                    qrels.append((query, intent, document, int(rng.choice([0, 0, 1, 2, 3]))))
        if rng.random() < 0.1:
            continue  # judged, not retrieved
        pool = documents + [f"unjudged{i}" for i in range(10)]
        for document in rng.permutation(pool)[: rng.integers(1, 30)]:
            run.append((query, str(document), float(rng.integers(0, 6))))  # ties everywhere
    for query in ("extra1", "extra2"):  # retrieved, never judged
        run += [(query, "d1", 1.0), (query, "d2", 0.5)]
    order = rng.permutation(len(qrels))  # the file need not be grouped by query or intent
    qrels = [qrels[i] for i in order]
    qrels_path = write(tmp_path / f"qrels{seed}", [f"{q} {i} {d} {j}" for q, i, d, j in qrels])
    run_path = write(tmp_path / f"run{seed}", [f"{q} Q0 {d} 1 {s} tag" for q, d, s in run])
    return qrels, run, qrels_path, run_path


def traditional(run):
    """The run with distinct scores in ndeval's -traditional order (score descending, ties by document id
    descending, as trec_eval): pyndeval breaks ties by document id ascending instead."""
    ordered = sorted(run, key=lambda entry: (entry[0], entry[2], entry[1].encode()), reverse=True)
    return [ScoredDoc(q, d, float(-rank)) for rank, (q, d, _) in enumerate(ordered)]


def reference(qrels, run, measures):
    judged = [Qrel(q, d, j, i) for q, i, d, j in qrels]
    values: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(
        [ir_measures.parse_measure(m) for m in measures], judged, traditional(run)
    ):
        values.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    return values


def scored(qrels_path, run_path, measures, **options):
    result = evaluate_intent_run(
        IntentQrelsIndex(read_intent_qrels(qrels_path)), read_run(run_path), measures, **options
    )
    return {
        q: {m: float(v[row]) for m, v in result.per_query.items()} for row, q in enumerate(result.query_ids)
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_runs_from_files_equal_ndeval_traditional(tmp_path, seed):
    qrels, run, qrels_path, run_path = random_files(tmp_path, seed)
    expected = reference(qrels, run, MEASURES)
    # ir_measures scores judged queries missing from the run 0, as ndeval -c and `complete` do.
    got = scored(qrels_path, run_path, MEASURES, complete=True)
    assert set(got) == set(expected) == {q for q, *_ in qrels}
    for query, values in expected.items():
        for measure, value in values.items():
            assert got[query][measure] == pytest.approx(value, abs=1e-9), (query, measure)
    # Without it they are left out, as are run queries without judgments (ndeval prints those, but
    # averages over the others).
    default = scored(qrels_path, run_path, MEASURES)
    assert set(default) == {q for q, *_ in run} & {q for q, *_ in qrels} < set(got)
    assert all(default[query] == got[query] for query in default)


def test_judged_only_equals_ndeval_on_the_run_without_unjudged_documents(tmp_path):
    # ir_measures' judged_only (which fails on a run given as a list in 0.4.3): the run less the documents
    # the qrels have no line for, for the query.
    qrels, run, qrels_path, run_path = random_files(tmp_path, 4)
    judged = {(q, d) for q, _, d, _ in qrels}
    expected = reference(qrels, [entry for entry in run if entry[:2] in judged], MEASURES)
    got = scored(qrels_path, run_path, MEASURES, judged_only=True, complete=True)
    assert got != scored(qrels_path, run_path, MEASURES, complete=True)
    assert set(got) == set(expected)
    for query, values in expected.items():
        for measure, value in values.items():
            assert got[query][measure] == pytest.approx(value, abs=1e-9), (query, measure)


def test_complete_scores_judged_queries_without_a_run_zero_as_ndeval_c(tmp_path):
    qrels_path = write(tmp_path / "q", ["1 1 a 1", "2 1 b 1", "3 1 c 0"])
    run_path = write(tmp_path / "r", ["1 Q0 a 1 1 t", "9 Q0 a 1 1 t"])
    assert scored(qrels_path, run_path, ["StRecall@5"]) == {"1": {"StRecall@5": 1.0}}
    complete = scored(qrels_path, run_path, ["StRecall@5"], complete=True)
    assert complete == {"1": {"StRecall@5": 1.0}, "2": {"StRecall@5": 0.0}, "3": {"StRecall@5": 0.0}}


def test_ties_go_to_the_larger_document_id_and_the_threshold_sets_relevance(tmp_path):
    qrels_path = write(tmp_path / "q", ["1 1 a 1", "1 2 b 2"])
    run_path = write(tmp_path / "r", ["1 Q0 a 1 5 t", "1 Q0 b 2 5 t"])
    # b (larger id) first: it serves intent 2 at rank 1, a intent 1 at rank 2.
    index = IntentQrelsIndex(read_intent_qrels(qrels_path))
    result = evaluate_intent_run(index, read_run(run_path), ["StRecall@1", "ERR_IA@1"])
    assert result.per_query["StRecall@1"][0] == 0.5
    strict = IntentQrelsIndex(read_intent_qrels(qrels_path), rel_threshold=2)
    result = evaluate_intent_run(strict, read_run(run_path), ["StRecall@1", "StRecall@2"])
    assert result.per_query["StRecall@1"][0] == 1.0  # only intent 2 is served now


def test_files_read_together_give_the_intent_index(tmp_path):
    qrels_path = write(tmp_path / "q", ["1 1 a 1"])
    run_path = write(tmp_path / "r", ["1 Q0 a 1 1 t"])
    files = read_files(
        qrels_path, [run_path], load_qrels=lambda path, told: IntentQrelsIndex(read_intent_qrels(path, told))
    )
    index = next(files)
    assert isinstance(index, IntentQrelsIndex)
    assert evaluate_intent_run(index, next(files), ["alpha_nDCG@5"]).per_query["alpha_nDCG@5"].tolist() == [
        1.0
    ]
