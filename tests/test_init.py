"""`cardgen init`: a new game that validates cleanly and builds at once; never overwrites a designer's files.
Also the command line's own conveniences: --version, `python -m cardgen`, shell completion."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from cardgen.commands.cli import main


def _cardgen(root: Path, *args: str):
    return CliRunner().invoke(main, ["--root", str(root), *args])


def test_init_in_an_empty_folder_makes_a_workspace_that_builds(tmp_path: Path) -> None:
    made = _cardgen(tmp_path, "init", "my-game")
    assert made.exit_code == 0, made.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore", "data", "templates"]
    assert sorted(p.name for p in (tmp_path / "data" / "my-game").iterdir()) == ["README.md", "cards.csv",
                                                                               "game.yaml"]
    assert sorted(p.name for p in (tmp_path / "templates" / "my-game").iterdir()) == ["back.svg", "face.svg"]
    assert '{% extends "cardgen/card.svg" %}' in (tmp_path / "templates" / "my-game" / "face.svg").read_text()
    checked = _cardgen(tmp_path, "validate", "my-game")
    assert checked.exit_code == 0 and "0 errors, 0 warnings" in checked.output, checked.output
    built = _cardgen(tmp_path, "build", "my-game", "-j", "1")
    assert built.exit_code == 0, built.output
    out = tmp_path / "output" / "my-game"
    assert sorted(p.name for p in (out / "cards" / "main").iterdir()) == [
        "fireball.png", "healing-potion.png", "iron-shield.png", "scout.png"]
    assert (out / "print" / "my-game-letter.pdf").is_file()


def test_init_options_size_paper_and_decks(tmp_path: Path) -> None:
    made = _cardgen(tmp_path, "init", "big", "--size", "tarot landscape", "--paper", "a4", "--decks", "heroes,foes")
    assert made.exit_code == 0, made.output
    manifest = yaml.safe_load((tmp_path / "data" / "big" / "game.yaml").read_text())
    assert manifest["size"] == "tarot landscape" and manifest["print"]["paper"] == "a4"
    assert {name: deck["source"] for name, deck in manifest["decks"].items()} == {"heroes": "heroes.csv",
                                                                                  "foes": "foes.csv"}
    assert _cardgen(tmp_path, "init", "custom", "--size", "70x120mm", "--decks", "3").exit_code == 0
    custom = yaml.safe_load((tmp_path / "data" / "custom" / "game.yaml").read_text())
    assert custom["size"] == {"width": "70mm", "height": "120mm"} and list(custom["decks"]) == ["deck1", "deck2",
                                                                                                 "deck3"]
    for game in ("big", "custom"):  # several decks of example cards still have unique ids
        checked = _cardgen(tmp_path, "validate", game)
        assert checked.exit_code == 0 and "0 errors, 0 warnings" in checked.output, checked.output
    listed = _cardgen(tmp_path, "list").output
    assert "120.65 x 69.85 mm" in listed and "70 x 120 mm" in listed


def test_init_manifest_comments_stay_in_one_column_whatever_is_filled_in(tmp_path: Path) -> None:
    made = _cardgen(tmp_path, "init", "long", "--size", "poker landscape", "--paper", "a4", "--decks",
                    "heroes,monsters")
    assert made.exit_code == 0, made.output
    text = (tmp_path / "data" / "long" / "game.yaml").read_text()
    columns = {line.index("  # ") + 2 for line in text.splitlines() if "  # " in line and line.strip()[0] != "#"}
    assert columns == {28}, text  # "size: poker landscape", "source: monsters.csv", "paper: a4" as the rest
    assert yaml.safe_load(text)["decks"]["monsters"]["source"] == "monsters.csv"


def test_init_refuses_bad_input_and_never_overwrites(tmp_path: Path) -> None:
    assert _cardgen(tmp_path, "init", "game").exit_code == 0
    face = tmp_path / "templates" / "game" / "face.svg"
    face.write_text("my own work")
    again = _cardgen(tmp_path, "init", "game")
    assert again.exit_code == 1 and "exists already" in again.stderr and face.read_text() == "my own work"
    (tmp_path / ".gitignore").write_text("mine\n")
    assert _cardgen(tmp_path, "init", "other").exit_code == 0
    assert (tmp_path / ".gitignore").read_text() == "mine\n"
    for args, message in ((["../escape"], "cannot be a game name"), (["Bad Name"], "cannot be a game name"),
                          (["x", "--size", "huge"], "--size"), (["x", "--paper", "napkin"], "--paper"),
                          (["x", "--decks", "0"], "--decks"), (["x", "--decks", "a,a"], "--decks")):
        result = _cardgen(tmp_path, "init", *args)
        assert result.exit_code == 1 and message in result.stderr, (args, result.output)
    assert not (tmp_path.parent / "escape").exists() and not (tmp_path / "data" / "x").exists()


def test_init_size_is_checked_by_the_manifest_s_own_rules(tmp_path: Path) -> None:
    # Before: init wrote sizes its game's first build refused (99999x99999mm, 0x0) and took 0.0001 mm.
    for size, reason in (("99999x99999mm", "the size is 99999 x 99999 mm; more than 2000 mm on a side is refused"),
                         ("0x0", "the size is 0 x 0 mm; a side under 5 mm cannot be cut out"),
                         ("0.0001x0.0001mm", "the size is 0.0001 x 0.0001 mm; a side under 5 mm cannot be cut out"),
                         ("80x0.1in", "the size is 2032 x 2.54 mm; a side under 5 mm")):
        result = _cardgen(tmp_path, "init", "x", "--size", size)
        assert result.exit_code == 1 and f"error: --size: {reason}" in result.stderr, (size, result.output)
        assert not (tmp_path / "data").exists() and not (tmp_path / "templates").exists()
    assert _cardgen(tmp_path, "init", "x", "--size", "5x5mm").exit_code == 0  # the smallest size a manifest takes
    checked = _cardgen(tmp_path, "validate", "x", "--no-layout")
    assert checked.exit_code == 0, checked.output


def test_version_python_dash_m_and_shell_completion(tmp_path: Path) -> None:
    from cardgen import __version__

    assert CliRunner().invoke(main, ["--version"]).output.strip() == f"cardgen, version {__version__}"
    env = {**os.environ, "_CARDGEN_COMPLETE": "bash_complete", "COMP_WORDS": "cardgen bu", "COMP_CWORD": "1"}
    run = subprocess.run([sys.executable, "-m", "cardgen", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and "Usage: cardgen" in run.stdout
    assert _cardgen(tmp_path, "init", "alpha").exit_code == 0
    completion = subprocess.run([sys.executable, "-m", "cardgen"], env=env, capture_output=True, text=True,
                                cwd=tmp_path)
    assert "plain,build" in completion.stdout.splitlines()
    env.update(COMP_WORDS="cardgen build al", COMP_CWORD="2")
    games = subprocess.run([sys.executable, "-m", "cardgen"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert games.stdout.splitlines() == ["plain,alpha"]
