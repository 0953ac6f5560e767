"""A run read and scored in pieces (`trec.pieces`, `metrics.evaluation_files.scored_runs`): the same values,
to the bit, and the same errors with the same lines as the run read whole."""

import random

import numpy as np
import pytest

import metrics.evaluation_files as evaluation_files
import trec.tokenizer as tokenizer
from metrics.compute.evaluation import QrelsIndex, evaluate_labels, evaluate_run, run_labels
from metrics.compute.ranking import Gain, RankingSettings
from metrics.evaluation_files import ScoredRun, scored_runs
from trec.files import read_qrels, read_run
from trec.pieces import query_pieces, run_pieces
from trec.tokenizer import TrecFormatError

MEASURES = ["nDCG@10", "nDCG", "AP", "RR", "P@5", "R@20", "Judged@10"]


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def generated(rng: random.Random, queries: int = 60) -> tuple[list[str], list[str]]:
    """Qrels and a run: lists of any length (rows of different widths), tied scores, queries the qrels lack,
    unjudged documents, the qrels' queries some of which the run lacks, comments and blank lines."""
    qrels, run = [], []
    order = list(range(queries))
    rng.shuffle(order)
    for q in order:
        documents = [f"doc-{rng.randrange(400)}" for _ in range(rng.randrange(1, 40))]
        documents = list(dict.fromkeys(documents))
        if q % 7:
            judged = documents + [f"doc-{rng.randrange(400, 420)}" for _ in range(3)]
            for document in dict.fromkeys(judged):
                if rng.random() < 0.7:
                    qrels.append(f"q{q} 0 {document} {rng.choice([0, 0, 1, 2, 3, -1])}")
        if q % 11 == 5:
            continue  # judged, not retrieved (-c scores it 0)
        for rank, document in enumerate(documents, 1):
            run.append(f"q{q} Q0 {document} {rank} {rng.choice([1.5, 2.25, rng.random()])} tag")
        if q % 13 == 0:
            run.append(rng.choice(["", "# a comment", "   "]))
    return qrels, run


def whole(qrels_path, run_path, **options):
    return evaluate_run(QrelsIndex(read_qrels(qrels_path)), read_run(run_path), MEASURES, **options)


def in_pieces(qrels_path, run_path, **options) -> ScoredRun:
    files = scored_runs(qrels_path, [run_path], MEASURES, workers=2, **options)
    next(files)
    scored = next(files)
    assert isinstance(scored, ScoredRun)
    return scored


def assert_same(a, b):
    assert a.query_ids == b.query_ids
    assert a.per_query.keys() == b.per_query.keys()
    for measure in a.per_query:
        # To the bit: the same doubles, not merely close ones.
        assert a.per_query[measure].tobytes() == b.per_query[measure].tobytes(), measure


@pytest.fixture
def small_pieces(monkeypatch) -> list[tuple[int, int] | None]:
    """Pieces of 512 bytes and more, each of several windows; the spans read, None for a whole run."""
    monkeypatch.setattr(evaluation_files, "PIECE_BYTES", 512)
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 256)
    spans: list[tuple[int, int] | None] = []

    def read(path, progress=None, max_bytes=None, span=None):
        spans.append(span)
        return read_run(path, progress, max_bytes, span)

    monkeypatch.setattr(evaluation_files, "read_run", read)
    return spans


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"judged_only": True},
        {"complete": True},
        {"judged_only": True, "complete": True, "settings": RankingSettings(gain=Gain.LINEAR)},
    ],
)
def test_a_run_scored_in_pieces_scores_as_the_run_read_whole(tmp_path, small_pieces, seed, options):
    qrels, run = generated(random.Random(seed))
    qrels_path, run_path = write(tmp_path / "qrels", qrels), write(tmp_path / "run", run)
    scored = in_pieces(qrels_path, run_path, **options)
    assert len(small_pieces) == 4 and None not in small_pieces  # read in four pieces, never whole
    assert scored.entries == read_run(run_path).query.size
    assert_same(scored.evaluation, whole(qrels_path, run_path, **options))


def test_a_run_whose_query_lines_lie_apart_is_scored_whole(tmp_path, small_pieces):
    qrels, run = generated(random.Random(3))
    run = [*run, "q1 Q0 doc-late 99 0.001 tag"]  # q1's last line far from its others
    qrels_path, run_path = write(tmp_path / "qrels", qrels), write(tmp_path / "run", run)
    assert_same(in_pieces(qrels_path, run_path).evaluation, whole(qrels_path, run_path))
    assert small_pieces[-1] is None  # read again, whole


def test_pieces_cut_where_the_query_changes_and_tile_the_file(tmp_path):
    lines = [f"q{q} Q0 d{d} {d} 1.0 t" for q in range(50) for d in range(q % 9 + 1)]
    path = write(tmp_path / "run", lines)
    data = path.read_bytes()
    spans = query_pieces(path, 5)
    assert len(spans) == 5
    assert spans[0][0] == 0 and spans[-1][1] == len(data)
    assert all(stop == start for (_, stop), (start, _) in zip(spans, spans[1:], strict=False))
    for start, _ in spans[1:]:
        before = data[:start].splitlines()[-1]
        assert data[start - 1 : start] == b"\n"
        assert before.split()[0] != data[start:].split()[0]


def test_no_cut_within_a_query_whose_lines_span_the_look(tmp_path, monkeypatch):
    monkeypatch.setattr("trec.pieces.LOOK_BYTES", 64)
    path = write(tmp_path / "run", [f"q1 Q0 d{d} {d} 1.0 t" for d in range(200)])
    assert query_pieces(path, 4) == [(0, path.stat().st_size)]


def test_gzipped_and_small_runs_are_read_whole(tmp_path):
    path = write(tmp_path / "run", [f"q{q} Q0 d 1 1.0 t" for q in range(100)])
    assert run_pieces(path, 4, 1 << 20) is None
    assert run_pieces(tmp_path / "missing", 4, 1) is None


def test_a_piece_reads_its_span_with_its_own_line_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr(tokenizer, "WINDOW_BYTES", 32)
    path = write(tmp_path / "run", ["a Q0 x 1 1 t", "", "b Q0 y 1 2 t", "# note", "c Q0 z 1 3 t"])
    start = path.read_bytes().index(b"b Q0")
    piece = read_run(path, span=(start, path.stat().st_size))
    assert piece.query.tolist() == [b"b", b"c"]
    assert piece.line.tolist() == [1, 3]
    assert piece.lines == 3
    head = read_run(path, span=(0, start))
    assert head.query.tolist() == [b"a"] and head.lines == 2


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("q{q} Q0 doc-x 1 oops tag", "score"),
        ("q{q} Q0 {same} 1 1.0 tag", "listed twice"),
    ],
)
def test_an_error_in_a_later_piece_names_the_line_of_the_whole_file(tmp_path, small_pieces, bad, problem):
    qrels, run = generated(random.Random(5))
    at = len(run) - 3
    query, _, same = run[at].split()[:3]
    run.insert(at + 1, bad.format(q=query.removeprefix("q"), same=same))
    qrels_path, run_path = write(tmp_path / "qrels", qrels), write(tmp_path / "run", run)
    with pytest.raises(TrecFormatError) as read_whole:
        whole(qrels_path, run_path)
    with pytest.raises(TrecFormatError) as read_in_pieces:
        in_pieces(qrels_path, run_path)
    assert problem in str(read_in_pieces.value)
    assert str(read_in_pieces.value) == str(read_whole.value)
    assert read_in_pieces.value.line == at + 2


def test_a_problem_in_the_qrels_is_told_before_one_in_the_run(tmp_path, small_pieces):
    qrels, run = generated(random.Random(6))
    qrels_path = write(tmp_path / "qrels", [*qrels, "q1 0 d oops"])
    run_path = write(tmp_path / "run", ["q1 Q0 d 1 oops tag", *run])
    with pytest.raises(TrecFormatError, match="qrels:"):
        in_pieces(qrels_path, run_path)


def test_progress_is_told_every_byte_of_a_run_read_in_pieces(tmp_path, small_pieces):
    qrels, run = generated(random.Random(7))
    qrels_path, run_path = write(tmp_path / "qrels", qrels), write(tmp_path / "run", run)
    told: list[int] = []
    files = scored_runs(qrels_path, [run_path], MEASURES, workers=2, progress=told.append)
    next(files), next(files)
    assert sum(told) == qrels_path.stat().st_size + run_path.stat().st_size
    assert np.all(np.array(told) >= 0)


def test_pieces_that_share_a_query_are_refused(tmp_path):
    qrels, run = generated(random.Random(8))
    index = QrelsIndex(read_qrels(write(tmp_path / "qrels", qrels)))
    labels = run_labels(index, read_run(write(tmp_path / "run", run)))
    with pytest.raises(ValueError, match="two pieces"):
        evaluate_labels(index, [labels, labels], MEASURES)
