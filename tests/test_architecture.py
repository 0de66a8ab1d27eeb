"""The shape of the code and the habits around it: the linters run first, bench scripts use the installed package."""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

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


def _import_check(package: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "tools" / "import_graph.py"), str(package)],
                          capture_output=True, text=True, timeout=60)


def _package_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "cardgen"
    shutil.copytree(REPO / "cardgen", copy, ignore=shutil.ignore_patterns("assets", "__pycache__"))
    return copy


def test_no_module_imports_a_later_stage() -> None:
    done = _import_check(REPO / "cardgen")
    assert done.returncode == 0 and "no import runs up the pipeline" in done.stdout, done.stdout + done.stderr


def test_the_import_check_ranks_by_folder(tmp_path: Path) -> None:
    package = _package_copy(tmp_path)
    # a new module in a folder needs no edit of the check: its folder gives its rank
    (package / "load" / "sources.py").write_text('"""Readers."""\nfrom cardgen.core.errors import CardgenError\n')
    assert _import_check(package).returncode == 0
    # ... and one of its imports up the pipeline is found
    (package / "load" / "sources.py").write_text('"""Readers."""\nfrom cardgen.raster import render\n')
    upward = _import_check(package)
    assert upward.returncode == 1 and "load.sources (load) -> raster.render (raster)" in upward.stdout, upward.stdout
    (package / "load" / "sources.py").unlink()
    # a new top-level module is an error, even when nothing imports it
    (package / "sources.py").write_text('"""Readers."""\n')
    stray = _import_check(package)
    assert stray.returncode != 0 and "cardgen/sources is a top-level module" in stray.stderr, stray.stderr



def test_the_architecture_page_names_every_output_and_the_readme_links_it() -> None:
    from cardgen.core.registry import OUTPUTS

    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| `")}
    for name, output in OUTPUTS.items():
        module = output.stage.split(":")[0].removeprefix("cardgen.").replace(".", "/") + ".py"
        assert f"`{name}`" in rows, f"output {name} is not in the outputs table of docs/architecture.md"
        assert module in rows[f"`{name}`"], f"the row of {name} does not name {module}"
    for word in ("while_drawing", "wait_for", "card_work", "reads", "helpers", "code_digest", "config_class",
                 "build_flag"):
        assert re.search(rf"`[\w.]*\b{word}\b", page), f"the stage contract's {word} is not on the page"
    how_it_works = (REPO / "README.md").read_text(encoding="utf-8").split("## How it works")[1].split("\n## ")[0]
    assert "(docs/architecture.md)" in how_it_works
