"""Caches keyed on cardgen's own code: an edit of cardgen (an editable install) or an upgrade makes everything anew."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import cardgen
from cardgen.core import bundled
from cardgen.svg import text


def _age(root: Path) -> None:
    """Make every file under root (outputs aside) look older than the racy window of the build stamps."""
    old = time.time() - 10
    for path in root.rglob("*"):
        if path.is_file() and "output" not in path.parts:
            os.utime(path, (old, old))


def _build(package_parent: Path, root: Path, home: Path) -> str:
    """`cardgen build` in a fresh process importing cardgen from `package_parent`; its output."""
    code = ("import sys, cardgen; from cardgen.commands.cli import main; print(cardgen.__file__); "
            "main(sys.argv[1:], standalone_mode=False)")
    env = {**os.environ, "PYTHONPATH": str(package_parent), "XDG_CACHE_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", code, "--root", str(root), "build", "-j", "1"],
                          capture_output=True, text=True, env=env, cwd=home.parent, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(str(package_parent / "cardgen")), done.stdout  # the copy ran, not the checkout
    return done.stdout


def test_an_edit_of_cardgen_s_code_redraws_instead_of_up_to_date(tiny_game: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(Path(cardgen.__file__).parent, copy / "cardgen", ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    _age(tiny_game)
    _age(copy)
    assert "4 drawn" in _build(copy, tiny_game, home)
    assert "tiny: up to date" in _build(copy, tiny_game, home)
    # a template helper's module edited in place, as in an editable install (a comment: its output is the same)
    helper = copy / "cardgen" / Path(text.__file__).relative_to(bundled.PACKAGE)
    helper.write_text(helper.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    again = _build(copy, tiny_game, home)
    assert "up to date" not in again and "4 drawn, 0 from cache" in again, again
    assert "~ " not in again, again  # drawn again, the same cards: none reported changed
    _age(copy)
    assert "tiny: up to date" in _build(copy, tiny_game, home)  # and then current again


def test_the_code_digest_covers_code_and_files_but_not_bytecode_nor_the_render_inputs() -> None:
    names = {bundled.package_name(p) for p in bundled.code_files()}  # as in an installed package
    code = {Path(module.__file__).relative_to(bundled.PACKAGE).as_posix() for module in (bundled, text)}
    assert code | {"assets/fonts/OFL-Roboto.txt", "assets/gallery/gallery.js"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not names & {bundled.package_name(p) for p in bundled.render_inputs()}
