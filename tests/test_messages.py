"""What `build` and `tts` say about what they did: each problem once, what --force left out, and whether the output
was changed before a command failed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cardgen.commands.cli import main

RULE = """
rules:
  - id: ten-cards
    message: "The game has 10 cards (rulebook: Setup)"
    total: "sum(count) == 10"
"""


@pytest.fixture
def quest(tmp_path: Path) -> Path:
    """A workspace made by `cardgen init quest` (4 cards, 8 with copies)."""
    root = tmp_path / "ws"
    root.mkdir()
    assert CliRunner().invoke(main, ["--root", str(root), "init", "quest"]).exit_code == 0
    return root


def _cardgen(root: Path, *args: str, expect: int) -> Result:
    result = CliRunner().invoke(main, ["--root", str(root), *args])
    assert result.exit_code == expect, result.output
    return result


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_data_error_is_printed_once_and_counted_once(quest: Path) -> None:
    _edit(quest / "data" / "quest" / "cards.csv", "Fireball,3,", "Fireball,three,")
    result = _cardgen(quest, "build", "quest", "-j", "1", expect=1)
    assert result.stderr.count("'three' is not a whole number") == 1, result.stderr
    assert "1 problem(s)" in result.stderr


def test_force_says_which_cards_it_left_out_and_not_when_none_were(quest: Path) -> None:
    """A game rule's error leaves no card out: --force says so (and still exits 1); a row it cannot read is left
    out, and counted."""
    _edit(quest / "data" / "quest" / "game.yaml", "\ndecks:", RULE + "\ndecks:")
    ruled = _cardgen(quest, "build", "quest", "-j", "1", "--force", expect=1)
    assert "(ten-cards)" in ruled.stderr
    assert "no card was left out" in ruled.stderr and "named above are left out" not in ruled.stderr, ruled.stderr
    again = _cardgen(quest, "build", "quest", "-j", "1", "--force", expect=1)  # up to date: told from build.json
    assert "up to date" in again.output and "no card was left out" in again.stderr
    _edit(quest / "data" / "quest" / "cards.csv", "Fireball,3,", "Fireball,three,")
    broken = _cardgen(quest, "build", "quest", "-j", "1", "--force", expect=1)
    assert "card 'fireball' is left out of the build" in broken.stderr
    assert "built with 3 error(s) (--force): the 1 card(s) named above are left out" in broken.stderr, broken.stderr


def test_tts_that_rebuilt_the_game_before_failing_does_not_say_nothing_was_changed(quest: Path,
                                                                                   tmp_path: Path) -> None:
    """`tts --install` after an edit builds the game (the output changes), then cannot install: its error must not
    claim the output was left as it was. When it built nothing, the claim is true and made."""
    _cardgen(quest, "build", "quest", "-j", "1", expect=0)
    record = quest / "output" / "quest" / "build.json"
    first = json.loads(record.read_text())["fingerprint"]
    tts_dir = tmp_path / "tts"
    (tts_dir / "Saves").mkdir(parents=True)
    (tts_dir / "cardgen").write_text("a file where the images' folder goes")  # the install cannot write there
    _edit(quest / "data" / "quest" / "cards.csv", "Fireball,3,", "Fireball,4,")
    rebuilt = _cardgen(quest, "tts", "quest", "--install", "--tts-dir", str(tts_dir), expect=1)
    assert json.loads(record.read_text())["fingerprint"] != first  # the build ran and changed the output
    assert "cannot install the export" in rebuilt.stderr
    assert "nothing was changed" not in rebuilt.stderr, rebuilt.stderr
    current = _cardgen(quest, "tts", "quest", "--install", "--tts-dir", str(tts_dir), expect=1)
    assert "cannot install the export" in current.stderr and "nothing was changed" in current.stderr
