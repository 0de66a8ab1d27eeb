"""The repository laid out as the design card says: the bundled fonts and icons at its top level (`fonts/`,
`icons/`), mapped into the package by the build; and the repository, the example games' workspace, reads them
once, as the bundled set, never again as the workspace's own."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardgen.commands.cli import main
from cardgen.core import bundled
from cardgen.load.freshness import source_stamp
from cardgen.load.icons import IconLibrary
from tests.conftest import REPO
from tests.example_games import game_copy

GAME = "scrapbots"


@pytest.fixture
def editable() -> None:
    """Skip unless cardgen runs from this repository, as `make install` installs it (editable)."""
    if bundled.PACKAGE != REPO / "cardgen":
        pytest.skip("cardgen is not installed from this repository in editable mode")


def test_an_editable_install_finds_the_bundled_files_at_the_repository_s_top_level(editable: None) -> None:
    assert bundled.FONTS_DIR == REPO / "fonts" and bundled.ICON_BUNDLE == REPO / "icons" / "game-icons.zip"
    fonts = {p for p in (REPO / "fonts").iterdir() if p.suffix == ".ttf"}
    assert len(fonts) > 20 and fonts | {bundled.ICON_BUNDLE} <= set(bundled.render_inputs())
    # their licenses are cardgen's files too, named as in an installed package
    names = set(bundled.code_files())
    assert {"assets/fonts/OFL-Roboto.txt", "assets/icons/ATTRIBUTION.md", "core/bundled.py"} <= names


def test_the_repository_s_fonts_and_icons_are_the_bundled_set_not_its_own(editable: None) -> None:
    # neither stamped by the no-change check nor hashed into the SVG cache's key as the workspace's files
    assert bundled.own_folders(REPO, ("templates", "icons", "fonts")) == [REPO / "templates"]
    assert not [p for p in source_stamp(REPO, GAME) if p.startswith(("fonts/", "icons/"))]
    assert IconLibrary(REPO).files == {} and IconLibrary(REPO).has("gears")
    listed = CliRunner().invoke(main, ["--root", str(REPO), "fonts"])
    assert listed.exit_code == 0 and "(bundled)" in listed.stdout and "(fonts/)" not in listed.stdout, listed.stdout


def _pngs(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in out.rglob("*.png")}


def test_the_example_built_from_the_repository_is_the_same_as_built_without_fonts_and_icons(
        built: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = built  # built from the repository's root: its fonts/ and icons/ are the bundled set
    root = game_copy(tmp_path, GAME)  # data and templates only: the bundled fonts and icons
    result = CliRunner().invoke(main, ["--root", str(root), "build", GAME, "-j", "1"])
    assert result.exit_code == 0, result.output
    made = _pngs(root / "output" / GAME)
    assert len(made) > 20 and made == _pngs(out)
