"""Reading TREC files and scoring runs: conventions, errors, and agreement with pytrec_eval."""

import gzip
import io
import math

import numpy as np
import pytest
import pytrec_eval
from hypothesis import example, given, settings
from hypothesis import strategies as st

import trec.files as trec
import trec.tokenizer as tokenizer
from metrics.compute import pairs
from metrics.compute.evaluation import QrelsIndex, evaluate_run
from metrics.compute.ranking import Gain, RankingSettings
from metrics.evaluation_files import read_files
from tests.factories import TREC_EVAL_WITH_COMMENTS, gzip_bomb, peak_memory
from trec.files import (
    ranked_order,
    read_qrels,
    read_run,
    read_run_rankings,
    write_qrels,
)
from trec.tokenizer import TrecFormatError, TrecTooLargeError

LINEAR = RankingSettings(gain=Gain.LINEAR)


def write(path, lines, *, gzipped=False):
    text = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(text) if gzipped else text)
    return path


def run_lines(run):
    return [f"{q} Q0 {d} {i} {s} tag" for q, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1)]


def qrels_lines(qrels):
    return [f"{q} 0 {d} {label}" for q, docs in qrels.items() for d, label in docs.items()]


def scores(tmp_path, qrels, run, measures, **options):
    index = QrelsIndex(read_qrels(write(tmp_path / "qrels", qrels_lines(qrels))))
    result = evaluate_run(index, read_run(write(tmp_path / "run", run_lines(run))), measures, **options)
    return {
        query: {m: float(v[i]) for m, v in result.per_query.items()}
        for i, query in enumerate(result.query_ids)
    }


def test_reads_columns_with_tabs_blank_lines_crlf_and_gzip(tmp_path):
    path = write(
        tmp_path / "q.gz", ["301\t0  doc-1\t2\r", "", "301 0 doc-2 -1", "302 0 doc-1 0.5"], gzipped=True
    )
    qrels = read_qrels(path)
    assert qrels.query.tolist() == [b"301", b"301", b"302"]
    assert qrels.document.tolist() == [b"doc-1", b"doc-2", b"doc-1"]
    assert qrels.label.tolist() == [2.0, -1.0, 0.5]
    assert qrels.line.tolist() == [1, 3, 4]


@pytest.mark.parametrize("window", [40, 1 << 20])
def test_qrels_comment_lines_are_skipped_as_trec_eval_10_does(tmp_path, monkeypatch, window):
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", window)
    qrels = read_qrels(write(tmp_path / "qrels", TREC_EVAL_WITH_COMMENTS, gzipped=True))
    assert qrels.document.tolist() == [
        b"CR93E-10279",
        b"CR93E-10505",
        b"CR93E-1282",
        b"CR93E-1850",
        b"CR#93E-1860",
        b"CR93E-3103",
    ]
    assert qrels.line.tolist() == [2, 3, 5, 6, 8, 9]
    with pytest.raises(TrecFormatError, match=r"qrels:4: label 'x' is not a number"):
        read_qrels(write(tmp_path / "qrels", ["# one", "#two", "1 0 a 1", "1 0 b x"]))


def test_qrels_comments_start_at_the_lines_first_byte_run_comments_at_its_first_non_blank(tmp_path):
    # trec_eval reads an indented `#` in qrels as a query id; in a run it skips the line.
    qrels = read_qrels(write(tmp_path / "qrels", ["  # 0 d 1", "1 0 #a 2", "# last, no newline"]))
    assert qrels.query.tolist() == [b"#", b"1"] and qrels.document.tolist() == [b"d", b"#a"]
    (tmp_path / "run").write_bytes(b"\t# a comment\n1 Q0 a#1 1 2 t\n # 1 Q0 b 2 1 t\n#\n1 Q0 #c 3 0 t #x")
    run = read_run(tmp_path / "run")
    assert run.document.tolist() == [b"a#1", b"#c"] and run.line.tolist() == [2, 5]


NUL = "the line holds a NUL byte (\\x00), which no id or number may contain"


@pytest.mark.parametrize(
    ("last", "message"),
    [("q30 Q0 d30 1 oops run", "score 'oops' is not a number"), ("q30 Q0 d\x0030 1 0.5 run", NUL)],
)
def test_line_numbers_stay_right_across_read_windows(tmp_path, monkeypatch, last, message):
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 40)
    lines = [f"q{i} Q0 d{i} 1 {i}.5 run" for i in range(30)] + [last]
    with pytest.raises(TrecFormatError) as error:
        read_run(write(tmp_path / "run", lines))
    assert str(error.value) == f"{tmp_path / 'run'}:31: {message}"
    assert read_run(write(tmp_path / "ok", lines[:30])).line.tolist() == list(range(1, 31))


@pytest.mark.parametrize("gzipped", [False, True])
def test_columns_grow_and_widen_across_windows(tmp_path, monkeypatch, gzipped):
    """Each column is written a window at a time into one array: sized from a plain file's length, grown
    for a gzipped one; an id longer than any before it widens the column."""
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 64)
    lines = [f"q{i} Q0 {'d' * (1 + i // 10)}{i} {i} {i / 4} run" for i in range(100)]
    run = read_run(write(tmp_path / "run", lines, gzipped=gzipped))
    assert run.query.tolist() == [f"q{i}".encode() for i in range(100)]
    assert run.document.tolist() == [f"{'d' * (1 + i // 10)}{i}".encode() for i in range(100)]
    assert run.score.tolist() == [i / 4 for i in range(100)] and run.line.tolist() == list(range(1, 101))


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["1 Q0 a 1 2.0 t", "1 Q0 b 1 2.0"], "run:2: expected at least 6 fields, found 5"),
        # Six separators a line, as in the usual layout, but one of them opens an empty token.
        (["1 Q0 a 1 2.0 t", "1 Q0  b 1 2.0"], "run:2: expected at least 6 fields, found 5"),
        ([" 1 Q0 b 1 2.0"], "run:1: expected at least 6 fields, found 5"),
        (["1 Q0 a 1 nan t"], "run:1: score 'nan' is not a number"),
        (["1 Q0 a 1 1e999 t"], "run:1: score '1e999' is not a number"),
        (
            ["1 Q0 a 1 3 t", "1 Q0 b 2 2 t", "1 Q0 a 3 1 t"],
            "run:3: document 'a' is listed twice for its query (also line 1)",
        ),
        (["1 Q0 " + "x" * 300 + " 1 3 t"], "run:1: the document id is longer than 255 bytes"),
    ],
)
def test_bad_run_lines_are_named(tmp_path, lines, message):
    qrels = QrelsIndex(read_qrels(write(tmp_path / "qrels", ["1 0 a 1"])))
    with pytest.raises(TrecFormatError) as error:
        evaluate_run(qrels, read_run(write(tmp_path / "run", lines)), ["nDCG"])
    assert str(error.value) == f"{tmp_path}/{message}"


@pytest.mark.parametrize(
    ("read", "line"),
    [
        (read_run, "1 Q0 d\x001 2.0 t"),  # laid out as usual: read as document "d" before
        (read_run, "1 Q0 d\x001 2 1.0 t"),  # seven fields: read as "d" with rank "1" as its score before
        (read_run, "1\x00 Q0 b 2 1.0 t"),
        (read_run, "1 Q0 b 2 1.0 t\x00"),
        (read_qrels, "1 0 d\x001"),  # read as "1 0 d 1" before
        (read_qrels, "q\x001 0 b 1"),
    ],
)
def test_a_nul_byte_is_refused_at_its_line_not_cut(tmp_path, read, line):
    first = "1 0 a 1" if read is read_qrels else "1 Q0 a 1 3 t"
    path = write(tmp_path / "file", [first, line])
    with pytest.raises(TrecFormatError) as error:
        read(path)
    assert str(error.value) == f"{path}:2: {NUL}"


def test_bad_qrels_lines_are_named(tmp_path):
    with pytest.raises(TrecFormatError, match=r"qrels:2: label 'high' is not a number"):
        read_qrels(write(tmp_path / "qrels", ["1 0 a 1", "1 0 b high"]))
    with pytest.raises(TrecFormatError, match=r"qrels:3: document 'a' is listed twice"):
        QrelsIndex(read_qrels(write(tmp_path / "qrels", ["1 0 a 1", "1 0 b 0", "1 0 a 2"])))
    with pytest.raises(TrecFormatError, match="cannot read"):
        read_qrels(tmp_path / "missing")


def test_ties_are_broken_by_document_id_descending(tmp_path):
    # Same score: trec_eval ranks "b" before "a"; only "a" is relevant.
    result = scores(tmp_path, {"1": {"a": 1, "b": 0}}, {"1": {"a": 1.0, "b": 1.0}}, ["RR"])
    assert result["1"]["RR"] == 0.5
    assert read_run_rankings(write(tmp_path / "r", ["1 Q0 a 1 1.0 t", "1 Q0 b 2 1.0 t", "1 Q0 c 3 5 t"])) == {
        "1": ["c", "b", "a"]
    }


@pytest.mark.parametrize("layout", ["grouped", "blocks shuffled", "interleaved"])
@pytest.mark.parametrize("seed", range(6))
def test_ranked_order_sorts_ties_by_document_as_a_sort_of_every_id_would(seed, layout):
    rng = np.random.default_rng(seed)
    n = 400
    rows = np.sort(rng.integers(0, 12, size=n))
    score = rng.integers(0, 4, size=n).astype(float)  # ties everywhere
    document = np.array([f"doc-{rng.integers(0, 10**6)}-{i}".encode() for i in range(n)])
    if layout == "grouped":  # blocks in row order, scores descending: only the ties out of order
        order = np.lexsort((-score, rows))
        rows, score, document = rows[order], score[order], document[order]
    elif layout == "blocks shuffled":
        blocks = rng.permutation(12)
        order = np.lexsort((-score, np.argsort(blocks)[rows]))
        rows, score, document = rows[order], score[order], document[order]
    else:
        order = rng.permutation(n)
        rows, score, document = rows[order], score[order], document[order]
    reference = np.lexsort((document, score, -rows))[::-1]
    got = ranked_order(rows, score, document)
    got = np.arange(n) if got is None else got
    for row in range(12):
        assert (
            document[got][rows[got] == row].tolist() == document[reference][rows[reference] == row].tolist()
        )
    assert ranked_order(rows[reference], score[reference], document[reference]) is None


def test_rank_column_is_ignored_and_unsorted_runs_are_sorted(tmp_path):
    run = {"1": {"a": 0.1, "b": 0.9, "c": 0.5}}
    result = scores(tmp_path, {"1": {"b": 1}}, run, ["RR"])
    assert result["1"]["RR"] == 1.0


def test_query_sets_follow_trec_eval(tmp_path):
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}, "3": {"z": 1.0}}
    assert list(scores(tmp_path, qrels, run, ["AP"])) == ["1"]
    complete = scores(tmp_path, qrels, run, ["AP"], complete=True)
    assert complete == {"1": {"AP": 1.0}, "2": {"AP": 0.0}}


def test_judged_only_drops_unjudged_documents_before_ranking(tmp_path):
    qrels = {"1": {"b": 1, "c": 0}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert scores(tmp_path, qrels, run, ["RR", "Judged@2"])["1"] == {"RR": 0.5, "Judged@2": 0.5}
    assert scores(tmp_path, qrels, run, ["RR", "Judged@2"], judged_only=True)["1"] == {
        "RR": 1.0,
        "Judged@2": 1.0,
    }


def test_judged_only_keeps_a_query_whose_documents_are_all_unjudged_as_trec_eval_j(tmp_path):
    # trec_eval -J: q2 retrieved only x (unjudged) and scores 0; mean AP 0.5, not 1.0.
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}, "2": {"x": 1.0}}
    result = scores(tmp_path, qrels, run, ["AP"], judged_only=True)
    assert result == {"1": {"AP": 1.0}, "2": {"AP": 0.0}}


def test_judged_only_treats_a_negative_label_as_unjudged_as_trec_eval(tmp_path):
    qrels = {"1": {"a": -1, "b": 1}}
    run = {"1": {"a": 2.0, "b": 1.0}}
    assert scores(tmp_path, qrels, run, ["RR"])["1"] == {"RR": 0.5}  # judged non-relevant
    assert scores(tmp_path, qrels, run, ["RR"], judged_only=True)["1"] == {"RR": 1.0}  # dropped


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=12), st.randoms(use_true_random=False))
def test_swapping_documents_of_equal_label_changes_nothing(tmp_path_factory, labels, random):
    tmp_path = tmp_path_factory.mktemp("swap")
    docs = [f"d{i}" for i in range(len(labels))]
    qrels = {"1": dict(zip(docs, labels, strict=True))}
    run = {"1": {doc: float(len(docs) - i) for i, doc in enumerate(docs)}}
    # Exchange the ranks of two documents that have the same label.
    swapped = dict(run["1"])
    pairs = [(a, b) for a in docs for b in docs if a < b and qrels["1"][a] == qrels["1"][b]]
    if pairs:
        a, b = random.choice(pairs)
        swapped[a], swapped[b] = swapped[b], swapped[a]
    measures = ["nDCG", "nDCG@3", "AP", "RR", "P@5", "R@5"]
    assert scores(tmp_path, qrels, run, measures) == scores(tmp_path, qrels, {"1": swapped}, measures)


PYTREC_MEASURES = {
    "ndcg": "nDCG",
    "ndcg_cut_5": "nDCG@5",
    "ndcg_cut_10": "nDCG@10",
    "map": "AP",
    "map_cut_5": "AP@5",
    "recip_rank": "RR",
    "P_5": "P@5",
    "P_10": "P@10",
    "recall_5": "R@5",
    "recall_10": "R@10",
}


@pytest.mark.parametrize("judged_only", [False, True])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [None, 3])
def test_agrees_with_pytrec_eval_per_query(tmp_path, seed, judged_only, depth):
    # A run cut at depth 3 is shorter than its qrels: the join then looks the run up in the qrels.
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(40):
        pool = [f"doc{d}" for d in rng.choice(200, size=int(rng.integers(1, 40)), replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in pool if rng.random() < 0.7} or {pool[0]: 0}
        candidates = pool + [f"x{d}" for d in range(20)]
        size = int(rng.integers(1, len(candidates)))
        retrieved = list(rng.choice(candidates, size=size, replace=False))[:depth]
        # Few distinct scores: plenty of ties for the tie-break rule.
        run[f"q{q}"] = {d: float(rng.integers(0, 5)) for d in retrieved}
    run["only-in-run"] = {"doc1": 1.0}
    run["all-unjudged"] = {"x1": 1.0, "x2": 0.5}
    qrels["all-unjudged"] = {"doc9": 1}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES), judged_docs_only_flag=judged_only)
    expected = evaluator.evaluate(run)
    ours = scores(
        tmp_path, qrels, run, list(PYTREC_MEASURES.values()), settings=LINEAR, judged_only=judged_only
    )
    assert set(ours) == set(expected)
    for query, values in expected.items():
        for theirs, mine in PYTREC_MEASURES.items():
            assert math.isclose(ours[query][mine], values[theirs], abs_tol=1e-9), (query, mine)


def test_single_separated_files_read_like_any_other_layout(tmp_path):
    lines = [f"q{i % 7} Q0 doc-{i} {i} {i * 0.25 - 3} tag" for i in range(200)]
    simple = read_run(write(tmp_path / "simple", lines))
    spaced = read_run(
        write(tmp_path / "spaced", ["  " + line.replace(" ", " \t ") + " \r" for line in lines])
    )
    for column in ("query", "document", "score", "line"):
        assert getattr(simple, column).tolist() == getattr(spaced, column).tolist()


def test_text_after_a_run_lines_sixth_field_is_ignored_as_trec_eval_does(tmp_path):
    lines = [f"q{i % 7} Q0 doc-{i} {i} {i * 0.25 - 3} tag" for i in range(20)]
    plain = read_run(write(tmp_path / "plain", lines))
    # As in trec_eval's test/results.trunc: some lines carry more text, in any layout.
    trailing = [line + " extra words here" if i % 3 == 0 else line for i, line in enumerate(lines)]
    for name, text in (("trailing", trailing), ("all", [line + "\tmore" for line in lines])):
        run = read_run(write(tmp_path / name, text))
        for column in ("query", "document", "score", "line"):
            assert getattr(run, column).tolist() == getattr(plain, column).tolist(), (name, column)


def test_run_rankings_refuse_a_document_listed_twice_anywhere_in_its_query(tmp_path):
    # The twin lines are not neighbours once ranked by score: b sits between them.
    path = write(tmp_path / "run", ["1 Q0 a 1 3 t", "1 Q0 b 2 2 t", "1 Q0 a 3 1 t"])
    with pytest.raises(
        TrecFormatError, match=r"run:3: document 'a' appears twice for query '1' \(also on line 1\)"
    ):
        read_run_rankings(path)


@pytest.mark.parametrize("gzipped", [False, True])
def test_lines_longer_than_the_read_buffer_and_any_score_form(tmp_path, monkeypatch, gzipped):
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 16)
    scores = ["1e-3", "0.12345678901234567", "-2.5", "+7", "123456789.5", "1E2", "-0.0", ".25"]
    lines = [f"q{i % 3} Q0 document-{i:04d} {i} {score} tag" for i, score in enumerate(scores)]
    run = read_run(write(tmp_path / "run.gz", lines, gzipped=gzipped))
    assert run.score.tolist() == [float(score) for score in scores]
    assert run.document.tolist() == [f"document-{i:04d}".encode() for i in range(len(scores))]
    assert run.line.tolist() == list(range(1, len(scores) + 1))


def test_a_gzip_bomb_is_refused_once_it_inflates_past_the_bound_in_bounded_memory(tmp_path):
    bomb = gzip_bomb(tmp_path / "bomb.run.gz", 200 << 20)
    error, peak = peak_memory(lambda: read_run(bomb, max_bytes=4 << 20))
    assert isinstance(error, TrecTooLargeError)
    assert str(error) == f"{bomb}: inflates to more than 4194304 bytes"
    assert peak < 16 << 20  # a read window (8 MiB) and a step of gzip's output, not the 200 MiB inflated


def test_a_plain_file_past_the_bound_is_refused_and_one_at_it_read(tmp_path):
    lines = [f"q1 Q0 d{i} {i} 1 tag" for i in range(100)]
    path = write(tmp_path / "run", lines)
    size = path.stat().st_size
    assert read_run(path, max_bytes=size).document.size == 100
    with pytest.raises(TrecTooLargeError, match=f"run: is more than {size - 1} bytes"):
        read_qrels(path, max_bytes=size - 1)


def test_a_line_too_long_to_hold_is_refused_by_its_number_in_bounded_memory(tmp_path, monkeypatch):
    # Without a bound on the file, a gzipped line of blanks would grow the read buffer to its inflated size.
    monkeypatch.setattr(tokenizer, "MAX_LINE_BYTES", 16 << 20)
    bomb = gzip_bomb(tmp_path / "bomb.run.gz", 200 << 20)
    error, peak = peak_memory(lambda: read_run(bomb))
    assert str(error) == f"{bomb}:1: the line is longer than 16777216 bytes"
    assert peak < 48 << 20  # the buffer grown to 16 MiB and the half it was grown from
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 64)
    monkeypatch.setattr(tokenizer, "MAX_LINE_BYTES", 256)
    path = write(tmp_path / "run", ["q1 Q0 d1 1 1 tag", "", "q1 Q0 d2 2 1 " + "t" * 300])
    with pytest.raises(TrecFormatError, match=r"run:3: the line is longer than 256 bytes"):
        read_run(path)


def test_interleaved_queries_score_like_grouped_ones(tmp_path):
    rng = np.random.default_rng(3)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in range(12)} for q in range(6)}
    run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(15)} for q in range(6)}
    grouped = scores(tmp_path, qrels, run, ["nDCG", "AP"], settings=LINEAR)
    qrels_file = write(tmp_path / "qrels-shuffled", list(rng.permutation(qrels_lines(qrels))))
    run_file = write(tmp_path / "run-shuffled", list(rng.permutation(run_lines(run))))
    result = evaluate_run(
        QrelsIndex(read_qrels(qrels_file)), read_run(run_file), ["nDCG", "AP"], settings=LINEAR
    )
    shuffled = {
        q: {m: float(v[i]) for m, v in result.per_query.items()} for i, q in enumerate(result.query_ids)
    }
    assert shuffled == grouped


def test_keys_too_wide_to_pack_fall_back_to_an_argsort(tmp_path, monkeypatch):
    qrels = {f"q{q}": {f"d{d}": (q + d) % 4 for d in range(9)} for q in range(7)}
    run = {f"q{q}": {f"d{d}": float(20 - d) for d in range(11)} for q in range(7)}
    packed = scores(tmp_path, qrels, run, ["nDCG@5", "RR"], settings=LINEAR)
    # 60 hash bits leave no room for the row and the position: the argsort path.
    monkeypatch.setattr(pairs, "_DOCUMENT_BITS", 60)
    assert scores(tmp_path, qrels, run, ["nDCG@5", "RR"], settings=LINEAR) == packed
    with pytest.raises(TrecFormatError, match="listed twice"):
        QrelsIndex(read_qrels(write(tmp_path / "dup", ["1 0 a 1", "1 0 b 0", "1 0 a 2"])))


def test_files_read_together_report_the_qrels_problem_first(tmp_path):
    good_qrels = write(tmp_path / "qrels", ["1 0 a 1"])
    bad_qrels = write(tmp_path / "bad-qrels", ["1 0 a high"])
    good_run = write(tmp_path / "run", ["1 Q0 a 1 1.5 t"])
    bad_run = write(tmp_path / "bad-run", ["1 Q0 a 1 oops t"])
    with pytest.raises(TrecFormatError, match="bad-qrels:1: label"):
        list(read_files(bad_qrels, [bad_run]))
    with pytest.raises(TrecFormatError, match="bad-run:1: score"):
        list(read_files(good_qrels, [bad_run]))
    index, run, second = read_files(good_qrels, [good_run, good_run])
    assert evaluate_run(index, run, ["RR"]).aggregate() == {"RR": 1.0}
    assert second.document.tolist() == [b"a"]


@pytest.mark.parametrize(
    ("integer", "expected"),
    [
        (None, ["1.6666666666666667", "1.5", "2", "-0.5", "2.5"]),
        ("round", ["2", "2", "2", "0", "3"]),  # halves up, not to even
        ("floor", ["1", "1", "2", "-1", "2"]),
    ],
)
def test_qrels_for_trec_eval_hold_integer_labels(integer, expected):
    out = io.StringIO()
    write_qrels(out, ["q"] * 5, list("abcde"), [5 / 3, 1.5, 2.0, -0.5, 2.5], integer=integer)
    assert [line.split()[3] for line in out.getvalue().splitlines()] == expected


def test_qrels_integer_choice_is_checked():
    with pytest.raises(ValueError, match="integer must be one of round, floor"):
        write_qrels(io.StringIO(), ["q"], ["a"], [1.0], integer="ceil")


@pytest.mark.parametrize("gzipped", [False, True])
def test_progress_is_told_every_byte_of_the_files_as_stored(tmp_path, monkeypatch, gzipped):
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 4096)  # many windows: many reports
    qrels = write(tmp_path / "qrels", [f"q{i % 50} 0 d{i} {i % 3}" for i in range(3000)], gzipped=gzipped)
    run = write(tmp_path / "run", [f"q{i % 50} Q0 d{i} 1 {i / 7} t" for i in range(3000)], gzipped=gzipped)
    told: list[int] = []
    files = read_files(qrels, [run], progress=told.append)
    next(files), next(files)
    assert len(told) > 4 and all(count >= 0 for count in told)
    assert sum(told) == qrels.stat().st_size + run.stat().st_size


@given(
    # Few distinct bytes: values often share their first words and differ in a later one.
    st.lists(st.lists(st.sampled_from([b"a", b"b", b"\xff"]), max_size=20).map(b"".join), max_size=60),
    st.sampled_from([4, 8, 16, 20]),
)
@example([b"aaaaaaaab", b"aaaaaaaaa", b"aaaaaaaab", b"b"], 16)
def test_ids_are_coded_as_numpy_unique_codes_them(values, width):
    # Ids of one word, of several, and of a width that is not a whole number of words.
    ids = np.array([value[:width] for value in values], dtype=f"S{width}")
    distinct, codes = trec._coded(ids)
    expected, inverse = np.unique(ids, return_inverse=True)
    assert distinct.tolist() == expected.tolist()
    assert codes.dtype == np.int32
    assert codes.tolist() == inverse.tolist()


def test_ids_longer_than_eight_bytes_on_one_side_only_still_join(tmp_path):
    # The run's longest id takes two 8-byte words, the qrels' one: an id hashes alike in both.
    qrels = {"1": {"a": 1, "doc-0001": 2}, "2": {"x": 1}}
    run = {"1": {"a": 3.0, "unjudged-long-id": 2.0, "doc-0001": 1.0}, "2": {"x": 1.0}}
    got = scores(tmp_path, qrels, run, ["P@1", "P@3"])
    assert got == {
        "1": {"P@1": 1.0, "P@3": pytest.approx(2 / 3)},
        "2": {"P@1": 1.0, "P@3": pytest.approx(1 / 3)},
    }
    swapped = {"1": {"a-very-long-judged-id": 1, "b": 1}}
    assert scores(tmp_path, swapped, {"1": {"b": 1.0}}, ["P@1"]) == {"1": {"P@1": 1.0}}


def test_id_columns_of_any_width_join_as_the_readers_whole_words_do(tmp_path):
    # The reader's id columns are whole 8-byte words, hashed and compared as words in place; others (S13,
    # S17) are padded or compared as strings. The queries differ only in their second word.
    one, two = "topic-0000000001", "topic-0000000002"
    qrels = read_qrels(
        write(tmp_path / "qrels", [f"{one} 0 doc-000000001 2", f"{one} 0 b 1", f"{two} 0 c 1"])
    )
    run = read_run(
        write(tmp_path / "run", [f"{one} Q0 b 1 3 t", f"{one} Q0 doc-000000001 2 2 t", f"{two} Q0 x 1 1 t"])
    )
    assert qrels.document.dtype == run.document.dtype == qrels.query.dtype == "S16"
    narrow_qrels = trec.Qrels(
        qrels.query.astype("S17"), qrels.document.astype("S13"), qrels.label, qrels.line, qrels.path
    )
    narrow_run = trec.Run(run.query.astype("S17"), run.document.astype("S13"), run.score, run.line, run.path)
    measures = ["nDCG@2", "P@1"]
    expected = evaluate_run(QrelsIndex(qrels), run, measures)
    got = evaluate_run(QrelsIndex(narrow_qrels), narrow_run, measures)
    assert got.query_ids == expected.query_ids == [one, two]
    assert {name: values.tolist() for name, values in got.per_query.items()} == {
        name: values.tolist() for name, values in expected.per_query.items()
    }
    assert expected.per_query["P@1"].tolist() == [1.0, 0.0]
