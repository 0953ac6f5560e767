"""The import rules of docs/architecture.md are import-linter contracts (pyproject.toml), run by `make lint`;
these tests run them here too and show that each kind of contract sees the import it forbids."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("annotation", "config", "judgeboard", "metrics", "plumbing", "trec")


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root)})


def test_the_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def copy_of_the_code(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("code")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("migrations", "demo"))
    shutil.copy(ROOT / "pyproject.toml", root)
    return root


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("annotation/errors.py", "import metrics.compute.ranking", "Apps run one way"),
        ("metrics/compute/ranking.py", "import django.db", "The pure computation"),
        ("trec/files.py", "from concurrent.futures import ThreadPoolExecutor", "The pure computation"),
        ("annotation/bundle/reading.py", "import threading", "No thread is started in annotation.bundle"),
        ("annotation/selectors/people.py", "from annotation.services import people", "Layers of annotation"),
        ("metrics/selectors/quality.py", "from metrics.reports import data", "Layers of metrics"),
        ("plumbing/rows.py", "from annotation import errors", "plumbing imports neither"),
        ("judgeboard/cli.py", "import django.conf", "The judgeboard command line"),
        # By a chain: the command line reads its files through metrics.evaluation_files.
        ("metrics/evaluation_files.py", "from django.conf import settings", "The judgeboard command line"),
        # Inside a function counts: the cycle the task queue once had with the import service.
        (
            "annotation/services/people.py",
            "def _f():\n    from annotation import admin",
            "Layers of annotation",
        ),
        ("annotation/choices.py", "def _f():\n    from annotation import task_kinds", "No import cycle"),
    ],
)
def test_each_contract_sees_what_it_forbids(copy_of_the_code, module, line, broken):
    path = copy_of_the_code / module
    original = path.read_text()
    path.write_text(f"{original}\n\n{line}\n")
    try:
        result = _lint_imports(copy_of_the_code)
    finally:
        path.write_text(original)
    assert result.returncode == 1
    assert broken in result.stdout.split("Broken contracts")[1], result.stdout[-3000:]
