"""`manage.py evaluate`: formats, comparisons and errors, on real files."""

import csv
import gzip
import io
import json
import os
import pty
import select

import pytest
from django.core.management import CommandError, call_command

from annotation.management.cli import progress_bar

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
    ],
)
def test_bad_files_fail_with_file_and_line(files, lines, message):
    with pytest.raises(CommandError, match=message):
        evaluate(files["qrels"], files["write"]("bad.txt", lines))


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
    with progress_bar(10, "reading", unit="B") as bar:  # pytest's captured stderr: not a terminal
        assert bar.disable
