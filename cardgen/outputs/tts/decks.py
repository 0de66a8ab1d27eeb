"""A deck of cards in the export: its sheets of faces (and of backs, or one back), and the DeckCustom holding a
Card per copy."""
from __future__ import annotations

import functools
import itertools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from cardgen.core.storage import changed_places
from cardgen.outputs.tts.objects import base_object
from cardgen.outputs.tts.pictures import Cell, Plain, Scaled, SheetPicture, Source
from cardgen.outputs.tts.sheets import SLOTS_PER_SHEET, Sheet, first_key, plan_sheet
from cardgen.record.record import CardEntry, DeckEntry, kept_piece

if TYPE_CHECKING:
    from cardgen.outputs.tts.exporter import Exporter

DECK_TYPES = {"rounded": 0, "rectangle": 1, "square": 1, "hex": 3, "circle": 4}


def card_deck(export: Exporter, deck_name: str, deck: DeckEntry, cards: list[CardEntry], transform: dict) -> dict:
    """A DeckCustom of a deck's cards (copies repeated), or a lone Card when it has one card; only its sheets
    (`CustomDeck`) when the export collects the recipes of its images (`card_work`: a card's objects, its guids
    and description, were ~half of that planning at 1,000 cards)."""
    export.cover.append((cards[0].face, deck))
    export.shown(cards[0])
    plans = _sheet_plans(export, deck_name, deck, cards)
    unique_back = plans[0].backs is not None  # different backs: a back sheet per face sheet
    if not unique_back:  # one back image for the deck (and one file for decks sharing a back)
        sharpest = max((plan.sheet for plan in plans), key=lambda s: s.cell_width * s.cell_height)
        size = (sharpest.cell_width, sharpest.cell_height)
        back_inputs = [export.image_hash(cards[0].back), f"{size}", f"{deck.bleed_mm}"]
        back = cards[0].back
        shared_back = export.save_cached(Scaled(export.source(back, deck), size) if back else Plain(size), "back",
                                         back_inputs, last=True)
    custom = {}
    for index, plan in enumerate(plans):
        sheet = plan.sheet
        face_url = export.save_cached(plan.faces, f"{deck_name}-{index + 1}", plan.face_inputs)
        if plan.backs is not None:
            back_url = export.save_cached(plan.backs, f"{deck_name}-{index + 1}-backs", plan.back_inputs, last=True)
        else:
            back_url = shared_back
        custom[str(sheet.key)] = {"FaceURL": face_url, "BackURL": back_url, "NumWidth": sheet.columns,
                                  "NumHeight": sheet.rows, "BackIsHidden": True, "UniqueBack": unique_back,
                                  "Type": DECK_TYPES[deck.shape]}
    if export.recipes is not None:  # collecting the images only (see `card_work`): no card's objects are read
        return {"CustomDeck": custom}
    sideways = deck.size_mm.width > deck.size_mm.height
    contained: list[dict] = []
    ids: list[int] = []
    placed = repr(tuple(transform.items()))  # (as text, which keeps its hash: each card's piece is looked up by it)
    # In a process that builds again, the objects of a sheet planned as the last export planned it (the same plan)
    # and showing the same are the last export's, unless a GUID its cards took is not the one they get now (the GUIDs
    # are handed out in order: see `Guids.take`): an edit looks at the deck's sheets by identity, not at each sheet's
    # 70 cards.
    last: _DeckObjects | None = export.objects.last(("deck", deck_name), ())
    if last is None or last.placed != (sideways, placed):
        last = _DeckObjects((sideways, placed), [], [], [])
    sheets, entries = [], []
    for index, plan in enumerate(plans):
        entry = custom[str(plan.sheet.key)]
        entries.append(entry)
        objects = last.sheets[index] if index < len(last.plans) and last.plans[index] is plan and \
            last.custom[index] == entry else None
        if objects is None or not export.guid.take(objects.names, objects.guids, objects.first_choices):
            objects = _sheet_objects(export, plan.sheet, plan.cards, custom, transform, sideways, placed)
        contained += objects.objects
        ids += objects.ids
        sheets.append(objects)
    export.objects.put(("deck", deck_name), (), _DeckObjects((sideways, placed), plans, entries, sheets))
    if len(contained) == 1:  # (a copy: the export marks the deck's own object, not the card's kept one)
        return dict(contained[0])
    return base_object("DeckCustom", export.guid(f"deck/{deck_name}"), deck.title,
                       f"{export.record.game.title} v{export.record.game.version}: {len(contained)} cards",
                       transform, SidewaysCard=sideways, HideWhenFaceDown=True,
                       DeckIDs=ids, CustomDeck=custom, ContainedObjects=contained)


@dataclass(frozen=True)
class _DeckObjects:
    """The objects of a deck's sheets as an export made them: where its cards lie (sideways, `placed`), and each
    sheet's plan, `CustomDeck` entry and objects."""

    placed: tuple[bool, str]
    plans: list[SheetPlan]
    custom: list[dict]
    sheets: list[SheetObjects]


@dataclass(frozen=True)
class SheetObjects:
    """The objects of the cards a sheet shows, one a copy; their CardIDs, the names of their GUIDs and the GUIDs, and
    whether each GUID was its name's first choice (`Guids.take`)."""

    objects: list[dict]
    ids: list[int]
    names: tuple[str, ...]
    guids: tuple[str, ...]
    first_choices: bool


def _sheet_objects(export: Exporter, sheet: Sheet, cards: Sequence[CardEntry], custom: dict, transform: dict,
                   sideways: bool, placed: str) -> SheetObjects:
    """The objects of a sheet's cards, their GUIDs taken now."""
    images = (str(sheet.key), tuple(custom[str(sheet.key)].items()))
    shown = repr(images)
    objects: list[dict] = []
    names = []
    for slot, card in enumerate(cards):
        own = [f"card/{card.id}/{copy}" for copy in range(card.copies)]
        names += own
        guids = tuple(export.guid(name) for name in own)
        # in a process that builds again, an unchanged card's objects are the last build's (their JSON texts
        # are then kept too: see `objects.kept_text`), by everything else they hold
        made = functools.partial(_card_objects, export, card, guids, dict(transform), sheet.tts_id(slot),
                                 sideways, {images[0]: custom[images[0]]})
        objects += kept_piece(card, ("tts", guids, shown, sheet.tts_id(slot), sideways, placed), made)
    guids = tuple(obj["GUID"] for obj in objects)
    return SheetObjects(objects, [obj["CardID"] for obj in objects], tuple(names), guids,
                        export.guid.first_choices(names, guids))


def _card_objects(export: Exporter, card: CardEntry, guids: tuple[str, ...], where: dict, card_id: int,
                  sideways: bool, custom: dict) -> list[dict]:
    """A card's objects in its deck, one a copy."""
    return [base_object("Card", guid, card.name, export.description(card), dict(where), CardID=card_id,
                        SidewaysCard=sideways, CustomDeck=custom, Hands=True, HideWhenFaceDown=True, GMNotes=card.id)
            for guid in guids]


@dataclass(frozen=True)
class SheetPlan:
    """A sheet of a deck as the export plans it: its cards, their places (`Sheet`), whether its key was the first
    choice of what it shows (`sheets.first_key`), and the recipe and inputs of its faces' image and, when the deck's
    cards have different backs, of its backs' (else None)."""

    cards: tuple[CardEntry, ...]
    sheet: Sheet
    first_choice: bool
    faces: SheetPicture
    face_inputs: list[str]
    backs: SheetPicture | None
    back_inputs: list[str]


@dataclass(frozen=True)
class _DeckSheets:
    """A deck's sheets as an export planned them: its cards (the list given, held: compared by identity), the ids
    and backs of each block of SLOTS_PER_SHEET of them, its distinct cards, what its sheets' pictures are made of
    (`kind`), each sheet's plan, and whether its cards' ids are all different and the backs they show (`_deck_facts`).
    """

    cards: list[CardEntry]
    facts: list[tuple[tuple[str, ...], frozenset[str | None]]]
    distinct: list[CardEntry]
    kind: tuple
    plans: list[SheetPlan]
    unique: bool
    shown: frozenset[str | None]


def _sheet_plans(export: Exporter, deck_name: str, deck: DeckEntry, cards: list[CardEntry]) -> list[SheetPlan]:
    """The sheets of a deck's distinct cards (by id), SLOTS_PER_SHEET at a time in order. In a process that builds
    again, a sheet of the same cards (by identity) showing the same is the last export's plan, while its key is its
    first choice and still free (keys are handed out in order, like the GUIDs: see `Guids.take`): an edit plans
    again, and looks at the cards of, only the sheets holding a changed card, found by C loops over the deck's
    cards against the last export's (at 10,000 cards each export's planning of every sheet was ~40 ms of an edit,
    twice: `card_work`'s and the export's; looking each sheet and block up by its cards' identities ~5 ms)."""
    last: _DeckSheets = export.sheets.last(("deck", deck_name), ()) or _NO_SHEETS
    redone = _redone(cards, last.cards, SLOTS_PER_SHEET)
    facts = [_block_facts(cards[start:start + SLOTS_PER_SHEET]) if number in redone else last.facts[number]
             for number, start in enumerate(range(0, len(cards), SLOTS_PER_SHEET))]
    unique, shown = _deck_facts(facts, last, redone)
    distinct = cards if unique else list(dict(zip(map(_ID, cards), cards)).values())
    backs = {back: export.image_hash(back) for back in shown}
    bleed = 2 * deck.bleed_px
    card_size = (deck.pixels.width - bleed, deck.pixels.height - bleed)  # as `trimmed` cuts
    # A key names the sheet's images: it changes whenever they do, or a table holding an older export
    # of the deck would show the first images loaded under that key for both.
    picture = f"{card_size}/{deck.bleed_mm}/{export.options.image_format}/{export.options.jpeg_quality}"
    kind = (deck_name, picture, deck.bleed_px, tuple(sorted(backs.items(), key=str)))
    if last.kind != kind:  # (other pictures: every sheet planned again)
        last = _NO_SHEETS
    redone = _redone(distinct, last.distinct, SLOTS_PER_SHEET)
    plans = []
    for index, start in enumerate(range(0, len(distinct), SLOTS_PER_SHEET)):
        plan = None if index in redone else last.plans[index]
        if plan is None or not (plan.first_choice and export.take_key(plan.sheet.key)):
            plan = _sheet_plan(export, deck_name, deck, index, distinct[start:start + SLOTS_PER_SHEET], card_size,
                               picture, backs)
        plans.append(plan)
    export.sheets.put(("deck", deck_name), (), _DeckSheets(cards, facts, distinct, kind, plans, unique, shown))
    return plans


_NO_SHEETS = _DeckSheets([], [], [], (), [], True, frozenset())  # (no last export's: every block and sheet made)


def _deck_facts(facts: list[tuple[tuple[str, ...], frozenset[str | None]]], last: _DeckSheets, redone: set[int]
                ) -> tuple[bool, frozenset[str | None]]:
    """Whether a deck's cards' ids are all different, and the backs they show, from the facts of its blocks: the last
    export's while the blocks made again (`redone`) hold the same ids and backs as they did (an edit of a card's text
    or numbers: not a set of 10,000 ids made at every edit, ~1.5 ms at 10,000 cards)."""
    if len(facts) == len(last.facts) and all(facts[number] == last.facts[number] for number in redone):
        return last.unique, last.shown
    ids: set[str] = set()
    shown: set[str | None] = set()
    for block_ids, block_backs in facts:
        ids.update(block_ids)
        shown |= block_backs
    return len(ids) == sum(map(len, (block_ids for block_ids, _ in facts))), frozenset(shown)


def _redone(items: list[CardEntry], last: list[CardEntry], size: int) -> set[int]:
    """The numbers of the blocks of `size` items holding another object than the last list at the same place (by C
    loops); when the lengths differ, those from the first place that differs on."""
    places = changed_places(items, last)
    if places is not None:
        return {place // size for place in places}
    first = next(itertools.compress(itertools.count(), map(operator.is_not, items, last)), min(len(items), len(last)))
    return set(range(first // size, (max(len(items), len(last)) + size - 1) // size))


def _sheet_plan(export: Exporter, deck_name: str, deck: DeckEntry, index: int, cards: list[CardEntry],
                card_size: tuple[int, int], picture: str, backs: dict[str | None, str]) -> SheetPlan:
    """A sheet's plan made now (see `_sheet_plans`); `backs` holds the hash of each back its deck's cards show."""
    content = "|".join([picture, *(f"{card.hash}/{backs[card.back]}" for card in cards)])
    sheet = plan_sheet(export.game, deck_name, index, tuple(card.id for card in cards), *card_size, export.keys,
                       content)
    layout = f"{sheet.width}x{sheet.height}/{sheet.cell_width}x{sheet.cell_height}/{deck.bleed_mm}"
    faces = _sheet_picture(export, sheet, [(card.face, card.hash or card.face) for card in cards], deck)
    face_inputs = [layout, *(card.hash for card in cards)]
    if len(backs) == 1:  # one back for the deck (see `card_deck`)
        return SheetPlan(tuple(cards), sheet, sheet.key == first_key(export.game, deck_name, index, content), faces,
                         face_inputs, None, [])
    back_pictures = _sheet_picture(export, sheet, [(card.back, backs[card.back]) if card.back else None
                                                   for card in cards], deck)
    return SheetPlan(tuple(cards), sheet, sheet.key == first_key(export.game, deck_name, index, content), faces,
                     face_inputs, back_pictures, [layout, *(backs[card.back] for card in cards)])


def _block_facts(cards: Sequence[CardEntry]) -> tuple[tuple[str, ...], frozenset[str | None]]:
    """The ids of a block of cards, and the backs they show."""
    return tuple(card.id for card in cards), frozenset(card.back for card in cards)


_ID = operator.attrgetter("id")


def _sheet_picture(export: Exporter, sheet: Sheet, shows: list[tuple[str, str] | None], deck: DeckEntry
                   ) -> SheetPicture:
    """A sheet's recipe from the image of each of its slots, its path and content hash (None: a plain back)."""
    quality = None if export.options.image_format == "png" else export.options.jpeg_quality
    size, bleed = (sheet.cell_width, sheet.cell_height), deck.bleed_px
    return SheetPicture(sheet.width, sheet.height, sheet.columns, tuple(
        Cell(Source(shown[1], shown[0], bleed), size, quality) if shown else Plain(size) for shown in shows))
