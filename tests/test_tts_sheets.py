"""Sheet packing as plain data: grids, cell sizes, keys and GUIDs (no image is drawn)."""
from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardgen.outputs.jpeg_tiles import BLOCK_PX
from cardgen.outputs.tts.sheets import (
    KEY_COUNT,
    KEY_FIRST,
    MAX_SIDE_PX,
    SLOTS_PER_SHEET,
    Guids,
    cell_size,
    choose_grid,
    derive_key,
    plan_sheets,
)


@given(count=st.integers(1, SLOTS_PER_SHEET), width=st.integers(50, 3000), height=st.integers(50, 3000))
def test_a_grid_holds_the_cards_within_the_limits(count: int, width: int, height: int) -> None:
    columns, rows = choose_grid(count, width, height)
    cell_w, cell_h = cell_size(width, height, columns, rows)
    assert 1 <= columns <= 10 and 1 <= rows <= 7 and columns * rows >= count
    assert columns * cell_w <= MAX_SIDE_PX and rows * cell_h <= MAX_SIDE_PX
    assert cell_w <= width and cell_h <= height  # never scaled up
    # Cells are whole JPEG blocks (a JPEG sheet is joined from its cells' blocks), and the trimmed card's aspect
    # ratio is kept to within a block of rounding.
    assert cell_w % BLOCK_PX == 0 and cell_h % BLOCK_PX == 0
    assert abs(cell_w * height / (cell_h * width) - 1) <= BLOCK_PX / min(cell_w, cell_h)


def test_poker_cards_fill_a_full_sheet_at_about_409_px() -> None:
    assert choose_grid(70, 750, 1050) == (10, 7)
    assert cell_size(750, 1050, 10, 7) == (408, 568)  # 409.6 wide at most: 408, and 571.2 high to the nearest block
    assert cell_size(750, 1050, 3, 1) == (744, 1040)  # full size, rounded down to whole blocks


def test_small_decks_keep_full_resolution_without_empty_cells() -> None:
    assert choose_grid(15, 750, 1050) == (5, 3)
    assert choose_grid(3, 750, 1050) == (3, 1)
    assert choose_grid(1, 750, 1050) == (1, 1)


def test_a_sheet_never_holds_more_than_70() -> None:
    with pytest.raises(ValueError):
        choose_grid(71, 100, 100)


def test_a_large_deck_spreads_over_sheets_in_order() -> None:
    ids = [f"c{i}" for i in range(150)]
    sheets = plan_sheets("g", "d", ids, 750, 1050, set())
    assert [len(s.card_ids) for s in sheets] == [70, 70, 10]
    assert [i for s in sheets for i in s.card_ids] == ids
    assert len({s.key for s in sheets}) == 3
    last = sheets[2]
    assert (last.columns, last.rows) == (5, 2)
    assert last.tts_id(7) == last.key * 100 + 7 and last.origin(7) == (2 * last.cell_width, last.cell_height)


def test_keys_are_stable_distinct_and_fit_a_card_id() -> None:
    taken: set[int] = set()
    first = derive_key("scrapbots", "center", 0, taken)
    assert derive_key("scrapbots", "center", 0, set()) == first  # same names, same key, build after build
    assert derive_key("scrapbots", "center", 0, taken) != first  # taken: the next free one
    keys = {derive_key(game, deck, i, set()) for game in ("a", "b") for deck in ("x", "y") for i in range(3)}
    assert len(keys) == 12
    assert all(KEY_FIRST <= k < KEY_FIRST + KEY_COUNT and k * 100 + 99 < 2**31 for k in keys)
    # What the sheet shows is part of its key: other pictures, another key.
    assert derive_key("g", "d", 0, set(), "faces-v1") != derive_key("g", "d", 0, set(), "faces-v2")


def test_guids_are_six_hex_digits_unique_and_reproducible() -> None:
    guids = Guids("game")
    made = [guids(f"card/{i % 50}") for i in range(400)]  # names repeat: each call still gets a new GUID
    assert len(set(made)) == 400 and all(re.fullmatch(r"[0-9a-f]{6}", g) for g in made)
    assert Guids("game")("card/0") == made[0]


def test_guids_taken_again_are_those_a_fresh_export_hands_out_also_where_a_name_got_its_second_choice() -> None:
    """A rebuild takes a sheet's GUIDs again only when each is the one its name gets now, in order: a name whose first
    choice was taken (two names of a 10,000-card game share a first choice) keeps its second choice while the first
    is taken, and nothing is taken when one would differ."""
    firsts: dict[str, str] = {}
    for number in range(20_000):  # (~12 names share a first choice with another among 20,000)
        name = f"card/{number}/0"
        first = Guids("game")(name)
        if first in firsts:
            earlier, later = firsts[first], name
            break
        firsts[first] = name
    fresh = Guids("game")
    earlier_guid, later_guid = fresh(earlier), fresh(later)
    assert earlier_guid != later_guid  # (the later name: its second choice)
    again = Guids("game")
    assert again.take((earlier,), (earlier_guid,), True) and again.take((later,), (later_guid,), False)
    assert again.used == fresh.used
    alone = Guids("game")  # the earlier name gone: the later one gets its first choice, nothing is taken
    assert not alone.take(("card/x/0", later), (Guids("game")("card/x/0"), later_guid), False)
    assert alone.used == set()
    assert alone(later) == earlier_guid


def test_a_decks_facts_are_the_last_exports_while_the_blocks_made_again_hold_the_same_ids_and_backs() -> None:
    """`decks._deck_facts`: whether a deck's ids are all different and the backs its cards show are the last
    export's while each block made again (an edited card's) holds the same ids and backs as it did; worked out again
    from every block when one of them changed its ids or backs, or blocks were added or removed."""
    from cardgen.outputs.tts.decks import _deck_facts, _DeckSheets

    facts = [(("a", "b"), frozenset({"back"})), (("c", "d"), frozenset({"back"}))]
    last = _DeckSheets([], facts, [], (), [], True, frozenset({"back"}))
    same = [facts[0], (("c", "d"), frozenset({"back"}))]  # (the second block made again: equal, another object)
    assert _deck_facts(same, last, {1}) == (True, frozenset({"back"}))
    assert _deck_facts(same, last, {1})[1] is last.shown  # (taken, not worked out again)
    assert _deck_facts([facts[0], (("c", "a"), frozenset({"back"}))], last, {1}) == (False, frozenset({"back"}))
    assert _deck_facts([facts[0], (("c", "d"), frozenset({"other"}))], last, {1}) == \
        (True, frozenset({"back", "other"}))
    assert _deck_facts([*facts, (("a",), frozenset({None}))], last, {2}) == (False, frozenset({"back", None}))
