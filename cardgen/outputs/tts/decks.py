"""A deck of cards in the export: its sheets of faces (and of backs, or one back), and the DeckCustom holding a
Card per copy."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cardgen.core.storage import builds_again
from cardgen.outputs.tts.objects import base_object
from cardgen.outputs.tts.pictures import Cell, Plain, Scaled, SheetPicture, Source
from cardgen.outputs.tts.sheets import Sheet, plan_sheets
from cardgen.record.record import CardEntry, DeckEntry, kept_piece

if TYPE_CHECKING:
    from cardgen.outputs.tts.exporter import Exporter

DECK_TYPES = {"rounded": 0, "rectangle": 1, "square": 1, "hex": 3, "circle": 4}


def card_deck(export: Exporter, deck_name: str, deck: DeckEntry, cards: list[CardEntry], transform: dict) -> dict:
    """A DeckCustom of a deck's cards (copies repeated), or a lone Card when it has one card; only its sheets
    (`CustomDeck`) when the export collects the recipes of its images (`card_work`: a card's objects, its guids
    and description, were ~half of that planning at 1,000 cards)."""
    by_id = {c.id: c for c in cards}
    bleed = 2 * deck.bleed_px
    card_size = (deck.pixels.width - bleed, deck.pixels.height - bleed)  # as `trimmed` cuts
    export.cover.append((cards[0].face, deck))
    # A key names the sheet's images: it changes whenever they do, or a table holding an older export
    # of the deck would show the first images loaded under that key for both.
    picture = f"{card_size}/{deck.bleed_mm}/{export.options.image_format}/{export.options.jpeg_quality}"
    sheets = plan_sheets(export.game, deck_name, list(by_id), *card_size, export.keys, lambda ids: "|".join(
        [picture, *(f"{by_id[i].hash}/{export.image_hash(by_id[i].back)}" for i in ids)]))
    unique_back = len({c.back for c in cards}) > 1  # different backs: a back sheet per face sheet
    if not unique_back:  # one back image for the deck (and one file for decks sharing a back)
        sharpest = max(sheets, key=lambda s: s.cell_width * s.cell_height)
        size = (sharpest.cell_width, sharpest.cell_height)
        back_inputs = [export.image_hash(cards[0].back), f"{size}", f"{deck.bleed_mm}"]
        back = cards[0].back
        shared_back = export.save_cached(Scaled(export.source(back, deck), size) if back else Plain(size), "back",
                                         back_inputs, last=True)
    custom = {}
    for index, sheet in enumerate(sheets):
        layout = f"{sheet.width}x{sheet.height}/{sheet.cell_width}x{sheet.cell_height}/{deck.bleed_mm}"
        faces = _sheet_picture(export, sheet, [by_id[i].face for i in sheet.card_ids], deck)
        face_url = export.save_cached(faces, f"{deck_name}-{index + 1}",
                                      [layout, *(by_id[i].hash for i in sheet.card_ids)])
        if unique_back:
            backs = _sheet_picture(export, sheet, [by_id[i].back for i in sheet.card_ids], deck)
            back_url = export.save_cached(backs, f"{deck_name}-{index + 1}-backs",
                                          [layout, *(export.image_hash(by_id[i].back) for i in sheet.card_ids)],
                                          last=True)
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
    for sheet in sheets:
        shown = repr((str(sheet.key), tuple(custom[str(sheet.key)].items())))
        cards_shown = [by_id[card_id] for card_id in sheet.card_ids]
        make = functools.partial(_sheet_objects, export, sheet, cards_shown, custom, transform, sideways, placed)
        # in a process that builds again, a sheet of the same cards showing the same is the last build's, unless
        # a GUID its cards took is taken already (the GUIDs are handed out in order: see `Guids`)
        objects = export.objects.last((shown, sideways, placed), cards_shown)
        if objects is None or not (objects.first_choices and export.guid.take(objects.guids)):
            objects = make()
        export.objects.put((shown, sideways, placed), cards_shown, objects)
        contained += objects.objects
        ids += objects.ids
    if len(contained) == 1:  # (a copy: the export marks the deck's own object, not the card's kept one)
        return dict(contained[0])
    return base_object("DeckCustom", export.guid(f"deck/{deck_name}"), deck.title,
                       f"{export.record.game.title} v{export.record.game.version}: {len(contained)} cards",
                       transform, SidewaysCard=sideways, HideWhenFaceDown=True,
                       DeckIDs=ids, CustomDeck=custom, ContainedObjects=contained)


@dataclass(frozen=True)
class SheetObjects:
    """The objects of the cards a sheet shows, one a copy; their CardIDs and GUIDs, and whether each GUID was its
    name's first choice (`Guids.take`)."""

    objects: list[dict]
    ids: list[int]
    guids: tuple[str, ...]
    first_choices: bool


def _sheet_objects(export: Exporter, sheet: Sheet, cards: list[CardEntry], custom: dict, transform: dict,
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
    return SheetObjects(objects, [obj["CardID"] for obj in objects], guids, export.guid.first_choices(names, guids))


def _card_objects(export: Exporter, card: CardEntry, guids: tuple[str, ...], where: dict, card_id: int,
                  sideways: bool, custom: dict) -> list[dict]:
    """A card's objects in its deck, one a copy."""
    return [base_object("Card", guid, card.name, export.description(card), dict(where), CardID=card_id,
                        SidewaysCard=sideways, CustomDeck=custom, Hands=True, HideWhenFaceDown=True, GMNotes=card.id)
            for guid in guids]


def _sheet_picture(export: Exporter, sheet: Sheet, images: list[str | None], deck: DeckEntry) -> SheetPicture:
    """A sheet's recipe from the image of each of its slots (None: a plain back); in a process that builds again, the
    last exports' recipe of a sheet showing the same (an edit makes anew those of the sheets whose cards changed)."""
    quality = None if export.options.image_format == "png" else export.options.jpeg_quality
    size, bleed = (sheet.cell_width, sheet.cell_height), deck.bleed_px
    hashes = export.hashes  # (`export.image_hash` of each, without a call a card)
    shows = tuple((path, hashes.get(path) or path) if path else None for path in images)
    key = (sheet.width, sheet.height, sheet.columns, size, bleed, quality, shows)
    picture = _PICTURES.get(key)
    if picture is None:
        picture = SheetPicture(sheet.width, sheet.height, sheet.columns, tuple(
            Cell(Source(shown[1], shown[0], bleed), size, quality) if shown else Plain(size) for shown in shows))
        if builds_again():
            if len(_PICTURES) >= PICTURES_AT_MOST:
                _PICTURES.clear()
            _PICTURES[key] = picture
    return picture


# In a process that builds again, the sheets' recipes the exports made (`_sheet_picture`), by all they hold; at most
# PICTURES_AT_MOST (then begun afresh): a 1,000-card edit's two planning runs made 2,000 cells again (~9 ms).
_PICTURES: dict[tuple, SheetPicture] = {}
PICTURES_AT_MOST = 2048
