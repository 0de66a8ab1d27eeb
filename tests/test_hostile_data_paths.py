"""Names from data become file names: card ids and deck names are safe file names or located errors, and names
that would be one file on Windows or macOS are findings."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from cardgen.load.data import slugify
from tests.hostile_example import GAME, run


def _with_ids(root: Path, ids: dict[str, str]) -> None:
    """Give the card decks an `id:` column `key`: the given ids by card name, a slug for the others."""
    cards = root / "data" / GAME / "cards.csv"
    lines = []
    for line in cards.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line:
            lines.append(line)
            continue
        name = line.split(",")[0]
        key = "key" if name == "name" else ids.get(name, re.sub(r"\W+", "-", name.lower()))
        lines.append(f"{line},{key}")
    cards.write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = root / "data" / GAME / "game.yaml"
    manifest.write_text(manifest.read_text().replace("    source: cards.csv\n", "    source: cards.csv\n    id: key\n"))


def _errors(root: Path) -> list[str]:
    result = run(root, "validate", GAME)
    assert "Traceback" not in result.output
    return [line for line in result.output.splitlines() if ": error: " in line]


def _files_outside_output(root: Path) -> list[Path]:
    return [p for p in root.parent.rglob("*.png") if not p.is_relative_to(root / "output")
            and not p.is_relative_to(root / "data") and not p.is_relative_to(root / "icons")]


def test_card_id_that_is_a_path_is_refused(fresh_example: Path) -> None:
    _with_ids(fresh_example, {"Drone": "../../../../X"})
    [error] = _errors(fresh_example)
    assert error.startswith(f"data/{GAME}/cards.csv:10:key: error: card id '../../../../X' cannot be a file name")
    result = run(fresh_example, "build", "-j", "1")
    assert result.exit_code == 1 and _files_outside_output(fresh_example) == []


def test_deck_name_that_is_a_path_is_refused(fresh_example: Path) -> None:
    manifest = fresh_example / "data" / GAME / "game.yaml"
    manifest.write_text(manifest.read_text().replace("\n  wounds:\n", '\n  "../../../X":\n'))
    [error] = _errors(fresh_example)
    assert re.match(rf"data/{GAME}/game.yaml:\d+: error: decks: the deck name '../../../X' cannot be a folder", error)
    result = run(fresh_example, "build", "-j", "1")
    assert result.exit_code == 1 and _files_outside_output(fresh_example) == [] and not (fresh_example / "X").exists()


@pytest.mark.parametrize("ids, words", [
    ({"Drone": "Fire", "Scout": "fire"}, "differ only in case or accents"),
    ({"Drone": "Café", "Scout": unicodedata.normalize("NFD", "Café")}, "duplicate card id 'Café'"),  # read as NFC
    ({"Drone": "Fire!", "Scout": "Fire?"}, "card id 'Fire?' cannot be a file name: it holds '?'"),
    ({"Drone": "CON"}, "Windows reserves the name 'CON'"),
    ({"Drone": "aux.old"}, "Windows reserves the name 'aux'"),
    ({"Drone": "trailing."}, "may not start with a dot or end with a dot"),
    ({"Drone": "COM\u00b9"}, "Windows reserves the name 'COM\u00b9'"),
    ({"Drone": "CONIN$"}, "Windows reserves the name 'CONIN$'"),
    ({"Drone": "conout$.x"}, "Windows reserves the name 'conout$'"),
    ({"Drone": "\U0001f525" * 120}, "it is 480 bytes long in UTF-8 (120 characters); the limit is 120 bytes"),
])
def test_ids_that_are_one_file_on_some_system_are_findings(fresh_example: Path, ids: dict, words: str) -> None:
    _with_ids(fresh_example, ids)
    errors = _errors(fresh_example)
    assert len(errors) == 1 and words in errors[0], errors
    assert errors[0].startswith(f"data/{GAME}/cards.csv:1")


def test_decks_whose_folders_are_one_on_some_system_are_findings(fresh_example: Path) -> None:
    manifest = fresh_example / "data" / GAME / "game.yaml"
    manifest.write_text(manifest.read_text().replace("\n  wounds:\n", "\n  Center:\n"))
    [error] = _errors(fresh_example)
    assert "the deck name 'Center' cannot be a folder name: it differs from deck 'center' only in case" in error


def test_ids_made_from_names_are_safe_file_names() -> None:
    assert [slugify(n) for n in ("Aux", "Con", "LPT1", "Fire!", "x" * 300)] == \
        ["aux-card", "con-card", "lpt1-card", "fire", "x" * 120]
