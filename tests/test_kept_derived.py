"""What a process that builds again derives from a list of cards place by place (`storage.derived`, `kept_blocks`:
the gallery's blocks, the cards of each deck, the images' hashes) is made again only where a place holds another
object, and is always what a process building once makes of the same list."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Sequence

import pytest

from cardgen.core import storage
from cardgen.record.record import cards_by_deck, face_values


@pytest.fixture
def again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that builds again, with blocks of 3 items and nothing derived yet."""
    storage.keep_for_next_builds()
    monkeypatch.setattr(storage, "RUN_ITEMS", 3)
    monkeypatch.setattr(storage, "_DERIVED", {})


def _card(name: str, deck: str = "main", face: str | None = None) -> Any:
    return SimpleNamespace(id=name, deck=deck, face=face or f"cards/{name}.png", hash=f"hash of {name}")


def test_kept_blocks_makes_again_only_the_blocks_holding_another_object(again: None) -> None:
    made: list[tuple[int, tuple[str, ...]]] = []

    def make(start: int, block: Sequence[Any]) -> tuple[int, tuple[str, ...]]:
        made.append((start, tuple(card.id for card in block)))
        return made[-1]

    def blocks_of(cards: list[Any], basis: object = None) -> list[Any]:
        made.clear()
        kept = storage.kept_blocks("test", cards, basis, make)
        assert kept == [(start, tuple(card.id for card in cards[start:start + 3])) for start in range(0, len(cards), 3)]
        return [start for start, _ in made]

    cards = [_card(f"c{n}") for n in range(10)]
    assert blocks_of(cards) == [0, 3, 6, 9]
    assert blocks_of(list(cards)) == []  # the same objects: nothing made
    cards[4] = _card("c4")  # another object at place 4 (an edited card): its block only
    assert blocks_of(list(cards)) == [3]
    cards.insert(7, _card("new"))  # the blocks before place 7 are the same
    assert blocks_of(list(cards)) == [6, 9]
    del cards[1]
    assert blocks_of(list(cards)) == [0, 3, 6, 9]
    cards[0], cards[8] = cards[8], cards[0]  # moved: both places
    assert blocks_of(list(cards)) == [0, 6]
    assert blocks_of(list(cards), basis="other") == [0, 3, 6, 9]  # all else it reads changed: all made again
    storage.BUILDS_AGAIN.clear()  # a process that builds once keeps nothing
    assert blocks_of(list(cards)) == [0, 3, 6, 9]
    assert blocks_of(list(cards)) == [0, 3, 6, 9]


def test_the_cards_of_each_deck_and_their_faces_kept_are_those_of_the_cards_given(again: None) -> None:
    cards = [_card("a1", "a"), _card("b1", "b"), _card("a2", "a"), _card("a3", "a"), _card("c1", "c"),
             _card("b2", "b")]
    edits = [lambda cards: cards.__setitem__(2, _card("a2", "a")),  # an edited card
             lambda cards: cards.__setitem__(3, _card("x", "a")),  # another card in its place
             lambda cards: cards.__setitem__(5, _card("b2", "c")),  # moved to another deck
             lambda cards: cards.insert(0, _card("new", "c")),
             lambda cards: cards.__setitem__(1, _card("dup", "a", face="cards/a2.png")),  # two cards, one face
             lambda cards: cards.__setitem__(1, SimpleNamespace(**{**vars(cards[1]), "hash": "new"})),  # the first
             lambda cards: cards.__setitem__(4, _card("a9", "a")),
             lambda cards: cards.pop(1)]
    for edit in [lambda cards: None, *edits]:
        edit(cards)
        storage.BUILDS_AGAIN.set()
        kept = cards_by_deck(cards, "game"), face_values("faces", cards, None, lambda card: card.hash)
        storage.BUILDS_AGAIN.clear()
        assert kept == (cards_by_deck(cards), {card.face: card.hash for card in cards})
        assert all(a is b for deck, each in kept[0].items() for a, b in zip(each, cards_by_deck(cards)[deck]))
