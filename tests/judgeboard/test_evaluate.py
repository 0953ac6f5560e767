"""`judgeboard evaluate`: no Django, trec_eval's options and comment lines, exit codes; `manage.py evaluate`
is the same code."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytrec_eval
from django.core.management import call_command

from judgeboard.cli import main
from judgeboard.errors import Exit
from tests.factories import TREC_EVAL_WITH_COMMENTS as WITH_COMMENTS

ROOT = Path(__file__).resolve().parent.parent.parent
RUN = [
    "301 Q0 CR93E-1282 1 9 t",
    "301 Q0 CR#93E-1860 2 8 t",
    "# a comment in the run",
    "301 Q0 unjudged 3 7 t",
    "301 Q0 CR93E-10279 4 6 t",
    "302 Q0 CR93E-3103 1 2 t",
    "303 Q0 CR93E-3103 1 2 t",
]


def write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def judgeboard(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out), out.getvalue()


def test_runs_in_an_empty_environment_and_imports_no_django(tmp_path):
    qrels, run = write(tmp_path / "qrels", WITH_COMMENTS), write(tmp_path / "run", RUN)
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "judgeboard", "evaluate", qrels, run, "-m", "P@2"],
        cwd=tmp_path,  # no manage.py, no settings module, no SECRET_KEY, no database
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[2].split()[1] == "0.5000"  # (1/2 + 1/2) / 2
    imported = [line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line]
    assert "judgeboard.evaluate" in imported and "numpy" in imported
    # No Django, and no HTTP library: `evaluate` starts in a tenth of a second.
    assert not [name for name in imported if name.split(".")[0] in ("django", "annotation", "requests")]
    assert list(tmp_path.iterdir()) == [tmp_path / "qrels", tmp_path / "run"]


def test_trec_eval_with_comments_scores_as_pytrec_eval_on_the_same_judgments(tmp_path):
    qrels, run = write(tmp_path / "qrels", WITH_COMMENTS), write(tmp_path / "run", RUN)
    code, out = judgeboard(
        "evaluate", qrels, run, "-q", "--gain", "linear", "--format", "json",
        "-m", "map", "-m", "ndcg_cut.2,10", "-m", "P.2", "-m", "recip_rank", "-m", "ndcg",
    )  # fmt: skip
    assert code == Exit.OK
    per_query = json.loads(out)["runs"][run]["per_query"]
    judgments: dict[str, dict[str, int]] = {}
    for line in WITH_COMMENTS:
        if not line.startswith("#"):
            query, _, document, label = line.split()
            judgments.setdefault(query, {})[document] = int(label)
    ranked: dict[str, dict[str, float]] = {}
    for line in RUN:
        if not line.startswith("#"):
            query, _, document, _, score, _ = line.split()
            ranked.setdefault(query, {})[document] = float(score)
    names = {"map": "AP", "ndcg_cut_2": "nDCG@2", "ndcg_cut_10": "nDCG@10", "P_2": "P@2",
             "recip_rank": "RR", "ndcg": "nDCG"}  # fmt: skip
    expected = pytrec_eval.RelevanceEvaluator(judgments, set(names)).evaluate(ranked)
    assert set(per_query) == set(expected) == {"301", "302"}
    for query, values in expected.items():
        for theirs, ours in names.items():
            assert per_query[query][ours] == pytest.approx(values[theirs], abs=1e-12), (query, ours)


def test_trec_eval_option_spellings_mean_the_long_ones(tmp_path):
    qrels, run = write(tmp_path / "qrels", WITH_COMMENTS), write(tmp_path / "run", RUN)
    short = judgeboard("evaluate", qrels, run, "-q", "-c", "-J", "-l", "2", "-m", "P.1,2", "--format", "json")
    long = judgeboard(
        "evaluate", qrels, run, "--per-query", "--complete", "--judged-only", "--rel-threshold", "2",
        "-m", "P@1", "-m", "P@2", "--format", "json",
    )  # fmt: skip
    assert short == long
    report = json.loads(short[1])
    assert report["settings"]["rel_threshold"] == 2 and report["settings"]["complete"] is True
    assert set(report["runs"][run]["per_query"]) == {"301", "302"}


def test_exit_codes_name_usage_and_input_errors(tmp_path, capsys):
    qrels = write(tmp_path / "qrels", WITH_COMMENTS)
    assert judgeboard("evaluate", qrels, str(tmp_path / "missing"))[0] == Exit.INPUT
    assert "missing: cannot read" in capsys.readouterr().err
    bad = write(tmp_path / "bad", ["301 Q0 a 1 high t"])
    assert judgeboard("evaluate", qrels, bad)[0] == Exit.INPUT
    assert f"{bad}:1: score 'high' is not a number" in capsys.readouterr().err
    assert judgeboard("evaluate", qrels, bad, "-m", "ndcg_cut.x")[0] == Exit.USAGE
    assert "unknown measure 'ndcg_cut.x'" in capsys.readouterr().err
    # argparse's own exit code, 2, is `decision`'s "inconclusive": usage errors are 4.
    with pytest.raises(SystemExit) as stopped:
        judgeboard("evaluate", qrels)
    assert stopped.value.code == Exit.USAGE


def test_manage_py_evaluate_is_the_same_command(tmp_path):
    qrels, run = write(tmp_path / "qrels", WITH_COMMENTS), write(tmp_path / "run", RUN)
    for output in ("table", "csv", "json"):
        args = [qrels, run, "-q", "-m", "ndcg_cut.10", "--format", output]
        out = io.StringIO()
        call_command("evaluate", *args, stdout=out)
        assert out.getvalue() == judgeboard("evaluate", *args)[1]
