"""The gallery's playtest table (`index.html`, *Table* view): pick decks, shuffle with a seed shown and settable,
draw, deal hands, flip, discard, put back, reset, with the exact odds of drawing what a filter matches.

Everything runs in the page (assets/gallery/table.js) from the build's card images and the card data written
into it here, so it works from file:// with no network. The shuffle is mulberry32 and Fisher-Yates, both simple
enough to compute again elsewhere (the tests do, in Python), so a seed deals the same cards everywhere.
"""
from __future__ import annotations

import functools
import html
import json
import operator
from pathlib import Path
from typing import Collection, Iterator, Sequence

from cardgen.core.bundled import ASSETS
from cardgen.core.storage import JSON_PAD, Run, kept_blocks
from cardgen.record.record import BuildRecord, CardEntry, kept_piece

STATS_PAGE = "stats/{game}.html"  # under the output root: written by `cardgen stats GAME --page`


def stats_page(out_root: Path, game: str) -> Path:
    """Where the Stats page of a game is (the gallery links it when it is there)."""
    return out_root / STATS_PAGE.format(game=game)


def _scalar(value: object) -> object:
    return ", ".join(map(str, value)) if isinstance(value, list) else value


def _table_card(card: CardEntry) -> dict:
    """What the table deals of a unique card: its images, copies and fields."""
    return {"id": card.id, "deck": card.deck, "name": card.name, "copies": card.copies, "face": card.face,
            "back": card.back, "fields": {k: _scalar(v) for k, v in card.fields.items()
                                          if isinstance(v, (str, int, float, bool, list))}}


def _table_data(card: CardEntry) -> str:
    """A card's entry in the table's data."""
    return _script_json(_table_card(card))


def _script_json(value: object) -> str:
    """JSON of a value for a script element: no markup in it."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_DECK = operator.attrgetter("deck")


def table_section(record: BuildRecord, shown: Collection[str] | None = None) -> Iterator[str | Run]:
    """The table's HTML: its controls, piles and zones, and the card data as JSON for table.js (one entry per unique
    card, in the record's order), in pieces of a card each (see `gallery.gallery_parts`); `shown`: the decks that
    have cards, when known."""
    if shown is None:
        shown = set(map(_DECK, record.cards))  # (one C loop over the cards, not one a deck)
    decks = "".join(f'<label><input type="checkbox" name="table-deck" value="{html.escape(name)}"> '
                    f"{html.escape(deck.title)}</label>" for name, deck in record.decks.items() if name in shown)
    yield (f'<section id="table" hidden><div class="table-controls"><fieldset id="table-decks"><legend>Decks'
           f"</legend>{decks}</fieldset><label>Seed <input id=\"seed\" type=\"number\" min=\"0\" max=\"4294967295\">"
           '</label><button id="shuffle">Shuffle</button><button id="new-seed">New seed</button>'
           '<button id="draw">Draw</button><label>Hands <input id="hands" type="number" value="2" min="1" max="8">'
           '</label><label>Cards each <input id="hand-size" type="number" value="5" min="1" max="30"></label>'
           '<button id="deal">Deal</button><button id="reset">Reset</button></div>'
           '<div class="table-top"><div class="pile" id="draw-pile"></div><div id="odds"><label>Odds of at least '
           '<input id="odds-k" type="number" value="1" min="0" max="99"> card(s) with <select id="odds-filter">'
           '</select> in the next <input id="odds-n" type="number" value="5" min="0" max="999"> draws</label>'
           '<output id="odds-result"></output></div><div class="pile" id="discard-pile"></div></div>'
           '<h3>In play</h3><div class="zone" id="in-play"></div><div id="hands-zone"></div>'
           '<script type="application/json" id="table-data">'
           f'{{"decks": {_script_json({n: d.title for n, d in record.decks.items()})}, "cards": [')
    # (a block of unchanged cards: the last build's run, see storage.kept_blocks; padded with spaces, which
    # JSON.parse skips: see storage.padding)
    yield from kept_blocks(("table", record.game.name), record.cards, None, _table_parts)
    yield "]}</script></section>"


def _table_parts(start: int, cards: Sequence[CardEntry]) -> Run:
    """The table data of the cards from the card at `start` of the record on, each after its separator (each
    unchanged card's made once in a long-running process), as one part."""
    parts: list[str] = []
    for number, card in enumerate(cards, start):
        parts += ", " if number else "", kept_piece(card, "table", functools.partial(_table_data, card))
    return Run(tuple(parts), JSON_PAD)  # (each the same object as last time: spliced, see storage)


def table_script() -> str:
    """The table's script (after the gallery's)."""
    return (ASSETS / "gallery" / "table.js").read_text(encoding="utf-8")
