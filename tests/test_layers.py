"""The import rules of docs/architecture.md, read from the source: annotation never imports metrics, and the
pure computation (metrics/compute/, trec/) imports no Django."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _offenders(package: str, forbidden: tuple[str, ...], root: Path = ROOT) -> list[str]:
    return sorted(
        f"{path.relative_to(root)}: {name}"
        for path in (root / package).rglob("*.py")
        for name in _imported_modules(path)
        if name.split(".")[0] in forbidden
    )


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("annotation", ("metrics",)),
        ("metrics/compute", ("django", "rest_framework", "annotation")),
        ("trec", ("django", "rest_framework", "annotation", "metrics")),
    ],
)
def test_imports_run_one_way(package, forbidden):
    assert _offenders(package, forbidden) == []


def test_the_check_sees_a_wrong_import(tmp_path):
    (tmp_path / "annotation").mkdir()
    (tmp_path / "annotation" / "views.py").write_text("import django\nfrom metrics.compute import ranking\n")
    assert _offenders("annotation", ("metrics",), root=tmp_path) == ["annotation/views.py: metrics.compute"]
