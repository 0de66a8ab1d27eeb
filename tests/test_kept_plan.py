"""A running watch's edit takes the last build's record entries and hand-out whole and makes only the changed
cards' (`plan._LastRecord`): after cards changed, added, removed and reordered, and a template edited, the record and
every output are those of a cold build of the edited game."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardgen.build import plan as plan_module
from cardgen.core import storage
from tests.test_edit import _same_as_cold
from tests.test_watch_outputs import ALPHA, BETA, NA, _build, _cold, _rows

GAMMA = "Gamma,4,A new card,2"


def _record(folder: Path) -> dict:
    """build.json but what an edit's own record says (the time, the sources' stamps, how many images it drew)."""
    record = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    del record["stats"]["rendered"], record["stats"]["cached"]
    return {key: value for key, value in record.items() if key not in ("built_at", "sources")}


@pytest.fixture
def entries_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """In a process that builds again: the cards whose record entry `record_of` looks at one by one."""
    storage.keep_for_next_builds()
    seen: list[str] = []
    card_entry = plan_module._card_entry
    monkeypatch.setattr(plan_module, "_card_entry", lambda game, card, *rest: seen.append(card.id) or
                        card_entry(game, card, *rest))
    return seen


@pytest.mark.parametrize("rows, template, changed", [
    ([ALPHA, BETA, NA.replace("Plain", "Plainer")], None, ["na"]),  # a card's text
    ([ALPHA, BETA, NA, GAMMA], None, ["gamma"]),  # a card added
    ([ALPHA, NA], None, ["na"]),  # a card removed: the next one's row, in its entry, changes
    ([NA, ALPHA, BETA], None, ["na", "alpha", "beta"]),  # reordered: each card's row, in its entry, changes
    ([ALPHA, BETA, NA], ('fill="#ffffff"', 'fill="#fffff0"'), ["alpha", "beta", "na"]),  # every face
])
def test_a_watchs_edit_makes_the_changed_cards_entries_only_and_a_cold_builds_record_and_outputs(
        tiny_game: Path, entries_made: list[str], rows: list[str], template: tuple[str, str] | None,
        changed: list[str]) -> None:
    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    entries_made.clear()
    _rows(tiny_game, rows)
    if template is not None:
        face = tiny_game / "templates" / "tiny" / "face.svg"
        face.write_text(face.read_text().replace(*template))
    _build(tiny_game)
    assert entries_made == changed
    _cold(tiny_game)
    assert _record(out) == _record(cold)
    _same_as_cold(tiny_game, out, cold)
