"""The shape of the code and the habits around it: the linters run first, bench scripts use the installed package."""
from __future__ import annotations

import ast
import re

import yaml

from tests.conftest import REPO


def _recipe(target: str) -> list[str]:
    """The commands and prerequisites of a Makefile target: its line, then its recipe's lines."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{target}:(.*)\n((?:\t.*\n)*)", text, re.MULTILINE)
    assert match, f"no target {target}"
    return [match.group(1).strip(), *(line.strip() for line in match.group(2).splitlines())]


def test_make_test_runs_the_linters_first_and_pre_commit_runs_the_same() -> None:
    lint = _recipe("lint")
    assert any("ruff check" in line for line in lint) and any(line.endswith("/mypy") for line in lint)
    assert any("tools/import_graph.py" in line for line in lint)
    test = _recipe("test")
    assert test[0].split() == ["lint"] and "pytest" in test[1]  # the linters are its prerequisite: they run first
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    [hook] = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert hook["entry"] == "make lint" and hook["pass_filenames"] is False


def test_bench_scripts_import_the_installed_package_not_the_checkout_or_a_test_helper() -> None:
    for script in sorted((REPO / "bench").glob("*.py")):
        tree = ast.parse(script.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) == "sys":
                raise AssertionError(f"{script.name}:{node.lineno}: sys.path is changed or read")
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests":
                raise AssertionError(f"{script.name}:{node.lineno}: imports a test helper ({node.module})")
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tests" for a in node.names):
                raise AssertionError(f"{script.name}:{node.lineno}: imports a test helper")
