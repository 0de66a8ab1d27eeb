"""A one-card edit does the work of that card only: its layout is inspected, its files are made; every other
card's findings and files are taken from the previous build, and the outputs are those of a cold build."""
from __future__ import annotations

from pathlib import Path

import pytest

from cardgen.build import BuildOptions, build_game
from cardgen.validate import validate_game
from cardgen.validate.layout import LayoutChecker


def _build(root: Path, out: str = "output"):
    return build_game(root, "tiny", BuildOptions(root / out, jobs=1))


def _edit(root: Path, old: str, new: str) -> None:
    csv = root / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace(old, new))


@pytest.fixture
def inspected(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cards (or backs: None) whose rendered text the layout check inspects, in order."""
    seen: list[str] = []
    inspect = LayoutChecker._inspect

    def counting(self, rendered, template, deck, card):  # type: ignore[no-untyped-def]
        seen.append(card.id if card else None)
        return inspect(self, rendered, template, deck, card)

    monkeypatch.setattr(LayoutChecker, "_inspect", counting)
    return seen


def test_an_edit_inspects_the_layout_of_the_edited_card_only(tiny_game: Path, inspected: list[str]) -> None:
    _edit(tiny_game, "Fire & Ice", "Fire ☃ Ice")  # a snowman: Roboto Mono has no glyph for it (a warning)
    _build(tiny_game)
    assert sorted(inspected, key=str) == [None, "alpha", "beta", "na"]
    inspected.clear()
    _edit(tiny_game, "Plain", "Plainer")
    result = _build(tiny_game)
    assert inspected == ["na"]
    fresh = validate_game(tiny_game, "tiny")  # no output root: every card inspected
    assert [f for f in result.findings if f.rule == "missing-glyph"] == \
        [f for f in fresh if f.rule == "missing-glyph"] != []


def test_kept_layout_findings_that_are_damaged_are_found_again(tiny_game: Path, inspected: list[str]) -> None:
    _edit(tiny_game, "Fire & Ice", "Fire ☃ Ice")
    first = _build(tiny_game)
    [entry] = [p for p in (tiny_game / "output" / ".cache" / "layout").rglob("*.json")]
    entry.write_text(entry.read_text().replace("missing-glyph", "missing-glyph-not"))  # same size: digest told
    inspected.clear()
    _edit(tiny_game, "Plain", "Plainer")
    again = _build(tiny_game)
    assert sorted(inspected, key=str) == [None, "alpha", "beta", "na"]
    assert [f for f in again.findings if f.rule and f.rule.startswith("missing")] == \
        [f for f in first.findings if f.rule and f.rule.startswith("missing")] != []
