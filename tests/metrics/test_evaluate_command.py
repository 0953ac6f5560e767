"""`manage.py evaluate`: formats, comparisons and errors, on real files."""

import csv
import gzip
import io
import json
import math
import os
import pty
import select

import pytest
from django.core.management import CommandError, call_command

from plumbing.progress import progress_bar

QRELS = ["1 0 a 3", "1 0 b 2", "1 0 c 3", "1 0 d 0", "1 0 e 1", "1 0 f 2", "2 0 x 1", "2 0 y 0"]
RUN = [
    "1 Q0 a 1 6 t",
    "1 Q0 b 2 5 t",
    "1 Q0 c 3 4 t",
    "1 Q0 d 4 3 t",
    "1 Q0 e 5 2 t",
    "1 Q0 f 6 1 t",
    "2 Q0 y 1 2 t",
    "2 Q0 x 2 1 t",
]
# The candidate puts the relevant document of query 2 first.
BETTER = RUN[:6] + ["2 Q0 x 1 2 t", "2 Q0 y 2 1 t"]


@pytest.fixture
def files(tmp_path):
    def write(name, lines, gzipped=False):
        data = ("\n".join(lines) + "\n").encode()
        path = tmp_path / name
        path.write_bytes(gzip.compress(data) if gzipped else data)
        return str(path)

    return {
        "qrels": write("qrels.gz", QRELS, gzipped=True),
        "run": write("run.txt", RUN),
        "better": write("better.txt", BETTER),
        "write": write,
    }


def evaluate(*args):
    out = io.StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def test_json_has_the_documented_shape_and_worked_example(files):
    report = json.loads(
        evaluate(
            files["qrels"],
            files["run"],
            "-m",
            "ndcg",
            "-m",
            "map",
            "--gain",
            "linear",
            "--format",
            "json",
            "--per-query",
        )
    )
    assert report["settings"] == {
        "gain": "linear",
        "discount": "log2",
        "rel_threshold": 1,
        "judged_only": False,
        "complete": False,
    }
    run = report["runs"][files["run"]]
    assert set(run["aggregate"]) == {"nDCG", "AP"}
    assert run["per_query"]["1"]["nDCG"] == pytest.approx(0.9608, abs=5e-5)
    assert run["aggregate"]["nDCG"] == pytest.approx(
        (run["per_query"]["1"]["nDCG"] + run["per_query"]["2"]["nDCG"]) / 2
    )
    assert "comparisons" not in report


def test_default_measures_and_per_query_only_when_asked(files):
    report = json.loads(evaluate(files["qrels"], files["run"], "--format", "json"))
    run = report["runs"][files["run"]]
    assert list(run["aggregate"]) == ["nDCG@1", "nDCG@3", "nDCG@5", "nDCG@10", "nDCG", "AP", "RR", "P@10"]
    assert "per_query" not in run


def test_baseline_comparison_in_json_table_and_csv(files):
    args = [files["qrels"], files["run"], files["better"], "-m", "RR", "--baseline", files["run"]]
    report = json.loads(evaluate(*args, "--format", "json"))
    compared = report["comparisons"][files["better"]]["RR"]
    assert compared["mean_delta"] == pytest.approx(0.25)
    assert (compared["wins"], compared["ties"], compared["losses"]) == (1, 1, 0)
    assert compared["ci95"][0] <= 0.25 <= compared["ci95"][1]
    assert 0 < compared["p_value"] <= 1
    table = evaluate(*args)
    assert "Δ RR" in table and "1/1/0" in table and "baseline" in table
    rows = list(csv.reader(io.StringIO(evaluate(*args, "--format", "csv"))))
    assert rows[0][:3] == ["run", "RR", "Δ RR"]
    assert rows[2][0] == files["better"] and float(rows[2][2]) == pytest.approx(0.25)


def test_settings_change_the_numbers(files):
    linear = json.loads(
        evaluate(files["qrels"], files["run"], "-m", "nDCG", "--gain", "linear", "--format", "json")
    )
    exponential = json.loads(evaluate(files["qrels"], files["run"], "-m", "nDCG", "--format", "json"))
    assert (
        linear["runs"][files["run"]]["aggregate"]["nDCG"]
        != exponential["runs"][files["run"]]["aggregate"]["nDCG"]
    )
    strict = json.loads(
        evaluate(files["qrels"], files["run"], "-m", "P@6", "--rel-threshold", "3", "--format", "json")
    )
    assert strict["runs"][files["run"]]["aggregate"]["P@6"] == pytest.approx((2 / 6 + 0) / 2)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["1 Q0 a 1 6"], "bad.txt:1: expected at least 6 fields, found 5"),
        (["1 Q0 a 1 6 t", "1 Q0 b 2 high t"], "bad.txt:2: score 'high' is not a number"),
        (["1 Q0 a 1 6 t", "1 Q0 b\x001 5 t"], r"bad.txt:2: the line holds a NUL byte \(\\x00\)"),
    ],
)
def test_bad_files_fail_with_file_and_line(files, lines, message):
    with pytest.raises(CommandError, match=message):
        evaluate(files["qrels"], files["write"]("bad.txt", lines))


def test_a_nul_byte_in_the_qrels_is_named_with_its_line(files):
    qrels = files["write"]("qrels.txt", ["1 0 a 3", "1 0 b\x001"])  # read as "1 0 b 1" before
    with pytest.raises(CommandError, match=r"qrels.txt:2: the line holds a NUL byte"):
        evaluate(qrels, files["run"])


def test_missing_file_and_unknown_measure(files, tmp_path):
    with pytest.raises(CommandError, match="missing.txt: cannot read"):
        evaluate(files["qrels"], str(tmp_path / "missing.txt"))
    with pytest.raises(CommandError, match="unknown measure 'ndgc@10'"):
        evaluate(files["qrels"], files["run"], "-m", "ndgc@10")


def test_command_line_exits_non_zero_without_traceback(files, tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "manage.py", "evaluate", files["qrels"], str(tmp_path / "missing.txt")],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "cannot read" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("threshold", ["nan", "inf", "-inf"])
def test_a_non_finite_relevance_threshold_is_refused(files, threshold):
    with pytest.raises(CommandError, match=f"--rel-threshold must be a finite number, got {threshold}"):
        evaluate(files["qrels"], files["run"], f"--rel-threshold={threshold}")


def test_empty_inputs_say_what_is_empty(files):
    empty = files["write"]("empty.txt", [])
    with pytest.raises(CommandError, match=r"empty\.txt: no judgments \(the qrels are empty\)"):
        evaluate(empty, files["run"])
    with pytest.raises(CommandError, match=r"empty\.txt: no ranked documents \(the run is empty\)"):
        evaluate(files["qrels"], empty)
    elsewhere = files["write"]("elsewhere.txt", ["9 Q0 a 1 6 t"])
    with pytest.raises(CommandError, match=r"elsewhere\.txt: no query of this run has judgments in"):
        evaluate(files["qrels"], elsewhere)


def test_the_progress_bar_draws_on_a_terminal_only():
    """What `evaluate` shows while it reads big files (after two seconds): bytes read, their rate."""
    leader, follower = pty.openpty()
    with (
        os.fdopen(follower, "w") as terminal,
        progress_bar(3 << 20, "reading", unit="B", file=terminal) as bar,
    ):
        bar.update(3 << 20)
    shown = b""
    try:
        while select.select([leader], [], [], 0.2)[0]:
            shown += os.read(leader, 4096)
    except OSError:  # Linux answers EIO once the terminal's other end is closed and drained
        pass
    os.close(leader)
    shown = shown.decode()
    assert "reading" in shown and "100%" in shown and "3.15M/3.15M" in shown


# ndeval's qrels: query 1 has intents 1, 2, 3 served and intent 4 judged 0 only; query 2 nothing relevant;
# query 3 is judged but not retrieved.
INTENT_QRELS = [
    "# topic intent docno judgment",
    "1 1 a 1",
    "1 2 a 2",
    "1 2 b 1",
    "1 3 c 1",
    "1 4 d 0",
    "2 1 x 0",
    "3 1 z 1",
]
# u and b tie: u (the larger id) goes first, as in trec_eval and ndeval -traditional; query 9 is not judged.
INTENT_RUN = ["1 Q0 a 1 3 t", "1 Q0 u 2 2 t", "1 Q0 b 3 2 t", "1 Q0 c 4 1 t", "2 Q0 x 1 1 t", "9 Q0 a 1 1 t"]


def test_intents_print_ir_measures_names_and_ndeval_values(files):
    import ir_measures

    qrels, run = files["write"]("intents.txt", INTENT_QRELS), files["write"]("irun.txt", INTENT_RUN)
    names = ["alpha_nDCG@20", "alpha_nDCG(alpha=0.3)@5", "ERR_IA@20", "nERR_IA@10", "StRecall@2", "P_IA@5"]
    report = json.loads(
        evaluate(qrels, run, "--intents", "--format", "json", "--per-query", *[f"-m{name}" for name in names])
    )
    assert report["settings"] == {
        "gain": "exponential",
        "discount": "log2",
        "rel_threshold": 1,
        "judged_only": False,
        "complete": False,
        "intents": True,
    }
    scored = report["runs"][run]
    assert list(scored["aggregate"]) == names
    assert set(scored["per_query"]) == {"1", "2"}
    # The reference: pyndeval through ir_measures, the tie broken as above by distinct scores.
    judged = [ir_measures.Qrel(q, d, int(j), i) for q, i, d, j in (line.split() for line in INTENT_QRELS[1:])]
    ranked = [
        ir_measures.ScoredDoc(*entry)
        for entry in [("1", "a", 4.0), ("1", "u", 3.0), ("1", "b", 2.0), ("1", "c", 1.0), ("2", "x", 1.0)]
    ]
    expected = {}
    for name in names:  # one at a time: ir_measures 0.4.3 drops the run after a first alpha
        for metric in ir_measures.iter_calc([ir_measures.parse_measure(name)], judged, ranked):
            expected.setdefault(metric.query_id, {})[name] = metric.value
    for query in ("1", "2"):
        assert scored["per_query"][query] == pytest.approx(expected[query], abs=1e-9)
    assert scored["per_query"]["1"]["StRecall@2"] == pytest.approx(1 / 3 * 2)  # a serves 1 and 2, u nothing
    assert scored["aggregate"]["ERR_IA@20"] == pytest.approx(expected["1"]["ERR_IA@20"] / 2)
    complete = json.loads(evaluate(qrels, run, "--intents", "--complete", "--format", "json", "-mERR_IA@20"))
    assert complete["runs"][run]["aggregate"]["ERR_IA@20"] == pytest.approx(expected["1"]["ERR_IA@20"] / 3)


def test_intents_have_their_own_default_measures_and_a_baseline_comparison(files):
    qrels, run = files["write"]("intents.txt", INTENT_QRELS), files["write"]("irun.txt", INTENT_RUN)
    better = files["write"]("better.txt", ["1 Q0 a 1 3 t", "1 Q0 c 2 2 t", "1 Q0 b 3 1 t", "2 Q0 x 1 1 t"])
    report = json.loads(evaluate(qrels, run, better, "--intents", "--format", "json", "--baseline", run))
    names = ["alpha_nDCG@5", "alpha_nDCG@10", "alpha_nDCG@20", "ERR_IA@20", "nERR_IA@20", "StRecall@20"]
    assert list(report["runs"][run]["aggregate"]) == names
    compared = report["comparisons"][better]["StRecall@20"]
    assert compared["mean_delta"] == 0 and compared["ties"] == 2
    assert report["comparisons"][better]["alpha_nDCG@5"]["wins"] == 1
    table = evaluate(qrels, run, "--intents", "-m", "strec@20")
    assert "StRecall@20" in table and "0.5000" in table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-m", "alpha_nDCG@20"],
            r"measure 'alpha_nDCG@20' is intent-aware: it needs qrels with intents \(add --intents\)",
        ),
        (["--intents", "-m", "nDCG@10"], "measure 'nDCG@10' is not intent-aware"),
        (["--intents", "-m", "alpha_nDCG(alpha=1.5)@20"], "alpha must be a number from 0 to 1"),
    ],
)
def test_measures_of_the_other_kind_are_refused(files, args, message):
    qrels, run = files["write"]("intents.txt", INTENT_QRELS), files["write"]("irun.txt", INTENT_RUN)
    with pytest.raises(CommandError, match=message):
        evaluate(qrels, run, *args)


def test_bad_intent_qrels_fail_with_file_and_line(files):
    run = files["write"]("irun.txt", INTENT_RUN)
    short = files["write"]("short.txt", ["1 1 a 1", "1 2 b"])
    with pytest.raises(CommandError, match=r"short\.txt:2: expected 4 fields, found 3"):
        evaluate(short, run, "--intents")
    twice = files["write"]("twice.txt", ["1 1 a 1", "1 1 a 0"])
    with pytest.raises(CommandError, match=r"twice\.txt:2: document 'a' is judged twice for intent '1'"):
        evaluate(twice, run, "--intents")


def test_discount_weights_replace_the_discount_of_ndcg(files):
    # The seed's promoted slot: rank 1 weighted 0.8 instead of 1, the rest as log2 would weigh them.
    weights = files["write"](
        "weights.txt",
        ["# rank 1 is a promoted slot", "0.8", "", *(str(1 / math.log2(r + 1)) for r in range(2, 11))],
    )
    qrels = files["write"]("q.txt", ["1 0 a 1", "1 0 b 3", "1 0 c 2"])
    run = files["write"]("r.txt", ["1 Q0 a 1 3 t", "1 Q0 b 2 2 t", "1 Q0 c 3 1 t"])
    report = json.loads(
        evaluate(qrels, run, "--discount-weights", weights, "-m", "nDCG@3", "-m", "AP", "--format", "json")
    )
    settings = report["settings"]
    assert settings["discount"] == "weights" and settings["discount_weights"][0] == 0.8
    assert len(settings["discount_weights"]) == 10
    dcg = 1 * 0.8 + 7 / math.log2(3) + 3 / 2
    ideal = 7 * 0.8 + 3 / math.log2(3) + 1 / 2
    assert report["runs"][run]["aggregate"]["nDCG@3"] == pytest.approx(dcg / ideal)
    plain = json.loads(evaluate(qrels, run, "-m", "nDCG@3", "--format", "json"))
    assert plain["runs"][run]["aggregate"]["nDCG@3"] != pytest.approx(dcg / ideal)


@pytest.mark.parametrize(
    ("lines", "args", "message"),
    [
        (["1", "oops"], [], r"weights\.txt:2: the weight 'oops' is not a number"),
        (["1", "inf"], [], r"weights\.txt:2: the weight 'inf' is not a number"),
        (["1", "-0.5"], [], r"weights\.txt:2: the weight -0.5 is not ≥ 0"),
        (["1", "0.5 0.25"], [], r"weights\.txt:2: expected 1 fields, found 2"),
        (["# nothing"], [], r"weights\.txt: no weights"),
        (
            ["1", "0.5"],
            ["-m", "nDCG@3"],
            "nDCG@3 needs a position weight for each of its 3 ranks; 2 are given",
        ),
        (["1", "0.5"], ["-m", "nDCG"], "nDCG needs a cut-off with position weights"),
        (["1", "0.5"], ["-m", "nDCG@2", "--discount", "jarvelin"], "--discount-weights and --discount"),
        (["1", "0.5"], ["--intents", "-m", "ERR_IA@2"], "--discount-weights and --intents"),
    ],
)
def test_bad_discount_weights_are_refused(files, lines, args, message):
    weights = files["write"]("weights.txt", lines)
    with pytest.raises(CommandError, match=message):
        evaluate(files["qrels"], files["run"], "--discount-weights", weights, *args)
