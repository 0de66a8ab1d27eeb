"""One game's export: its images, put into the staging folder (or collected as recipes for the render
workers), and its objects: decks and their sheets, tokens and their bags, boards, laid out on the table, and the
thumbnail."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from cardgen.core.errors import CardgenError
from cardgen.core.storage import place_file
from cardgen.load.freshness import PreviousOutputs
from cardgen.options.tts import SnapGrid, TTSSpec
from cardgen.outputs.reuse import inputs_key
from cardgen.outputs.tts.layout import Footprint, lay_out, outside, snap_grid
from cardgen.outputs.tts.objects import mark_for_push, tts_text
from cardgen.outputs.tts.pictures import (
    Cell,
    Component,
    CoverFace,
    ExportImage,
    Picture,
    Plain,
    Scaled,
    SheetPicture,
    Source,
)
from cardgen.outputs.tts.sheets import Guids, Sheet, plan_sheets
from cardgen.outputs.tts.sizes import board_scale, card_scale, table_units, tile_scale
from cardgen.outputs.tts.work import Recipes
from cardgen.raster.render import Drawing, DrawnCard
from cardgen.record.record import BuildRecord, CardEntry, DeckEntry

if TYPE_CHECKING:
    from PIL import Image


TTS_DIR = "tts"
THUMBNAIL_PX = 256
TILE_TYPES = {"rectangle": 0, "square": 0, "hex": 1, "circle": 2, "rounded": 3}
DECK_TYPES = {"rounded": 0, "rectangle": 1, "square": 1, "hex": 3, "circle": 4}


@dataclass(frozen=True)
class TTSOptions:
    """How images are encoded and addressed: format, JPEG quality, and the base URL (None: file:/// paths)."""

    image_format: str = "jpeg"
    jpeg_quality: int = 92
    base_url: str | None = None
    cutout: tuple[str, ...] = ()
    snap_points: Mapping[str, list[SnapGrid]] = field(default_factory=dict)  # board deck -> its grids

    @classmethod
    def from_spec(cls, spec: TTSSpec, **overrides: object) -> "TTSOptions":
        """Options from the manifest's `tts:` section, with command-line values (not None) on top."""
        values: dict[str, Any] = {"image_format": spec.image_format, "jpeg_quality": spec.jpeg_quality,
                  "base_url": spec.base_url, "cutout": tuple(spec.cutout), "snap_points": spec.snap_points}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)



def _footprint(deck: DeckEntry, least: float = 0.0) -> Footprint:
    """What one object of a deck covers on the table: its size, at least `least` units a side (a token's bag)."""
    return Footprint(max(table_units(deck.size_mm.width), least), max(table_units(deck.size_mm.height), least))


def _transform(x: float, z: float, y: float = 1.0, face_down: bool = False, scale: float = 1.0) -> dict:
    return {"posX": round(x, 3), "posY": y, "posZ": round(z, 3), "rotX": 0, "rotY": 180,
            "rotZ": 180 if face_down else 0, "scaleX": round(scale, 4), "scaleY": 1, "scaleZ": round(scale, 4)}


def _base(name: str, guid: str, nickname: str, description: str, transform: dict, **extra: object) -> dict:
    """The fields every saved object has."""
    return {"Name": name, "Transform": transform, "Nickname": nickname, "Description": description,
            "GMNotes": "", "ColorDiffuse": {"r": 0.713, "g": 0.713, "b": 0.713}, "Locked": False, "Grid": True,
            "Snap": True, "IgnoreFoW": False, "Autoraise": True, "Sticky": True, "Tooltip": True,
            "GridProjection": False, "HideWhenFaceDown": False, "Hands": False, **extra,
            "LuaScript": "", "LuaScriptState": "", "XmlUI": "", "GUID": guid}



class Exporter:
    """Writes one game's images into the staging folder and builds its objects."""

    def __init__(self, game: str, record: BuildRecord, out_dir: Path, staging: Path, options: TTSOptions,
                 url: Callable[[str], str], recipes: Recipes | None = None,
                 previous: PreviousOutputs | None = None, drawings: Callable[[], Mapping[str, Drawing]] = dict,
                 wait: Callable[[str], Path | None] = lambda image: None) -> None:
        self.game, self.record, self.out_dir, self.staging = game, record, out_dir, staging
        self.options, self.url = options, url
        self.recipes = recipes  # when given, images are only collected there (see `card_work`), not made
        self.guid = Guids(game)
        self.keys: set[int] = set()
        self.cover: list[tuple[str, DeckEntry]] = []  # (face image path, deck) of each deck's first card
        self.hashes = record.image_hashes()  # looked up for every card: once, not a scan of the record each time
        self.previous = previous  # the previous build's images to keep (during a build)
        self.drawings = drawings  # how the game draws each card image, by hash: asked once, when a cell is missing
        self.known_drawings: Mapping[str, Drawing] | None = None
        self.wait = wait  # returns once the image of a path is drawn, with its file (see `export_tts`)
        self.path_of = {digest: path for path, digest in self.hashes.items()}  # a path of each image, by hash
        self.last: list[Callable[[], None]] = []  # images to put in once every other is (see `save_cached`)
        self.outside = 0  # objects the layout could not keep inside the play area

    # ------------------------------------------------------------ images

    def card_image(self, source: Source) -> DrawnCard:
        """A card of the build: its pixels read from its file, its vectors drawn again from its SVG when asked
        (how the game draws it is looked up only then: outside the render workers, a cell cache deleted or other
        export options)."""
        return DrawnCard(self.wait(source.path) or self.out_dir / source.path, lambda: self.drawing(source))

    def drawing(self, source: Source) -> Drawing:
        """How the game draws a card image of the build (a CardgenError when it no longer draws it)."""
        if self.known_drawings is None:
            self.known_drawings = self.drawings()
        drawing = self.known_drawings.get(source.hash)
        if drawing is None:
            raise CardgenError(f"the Tabletop Simulator export must draw {source.path} again, but the game no longer "
                               "draws that image; build the game again (cardgen build)", file=str(source.path))
        return drawing

    def source(self, path: str, deck: DeckEntry) -> Source:
        """A face or back image of the build, with what to cut off."""
        return Source(self.image_hash(path), path, deck.bleed_px)

    def save_cached(self, picture: Picture, stem: str, inputs: list[str], keep_alpha: bool = False,
                    last: bool = False) -> str:
        """Put an image into the export, made from its recipe or reused from the cache; return its URL. An image
        put `last` is put in once every other is (`put_last`): a build draws the backs after the faces, and the
        faces' sheets and texts are made as their cards are drawn, not after a deck's back.

        The name carries a hash of the inputs (card hashes, cell size, format), which changes whenever the
        content does.
        """
        png = keep_alpha or self.options.image_format == "png"
        key = inputs_key([*inputs, str(png), str(self.options.jpeg_quality)])
        name = f"{self.game}-{stem}-{key[:12]}{'.png' if png else '.jpg'}"
        image = ExportImage(picture, png, self.options.jpeg_quality, (key,))
        if self.recipes is not None:
            self.recipes.add(image)
        elif last:
            self.last.append(functools.partial(self._put, image, key, name))
        else:
            self._put(image, key, name)
        return self.url(name)

    def put_last(self) -> None:
        """Put in the images put `last` (see `save_cached`)."""
        for put in self.last:
            put()
        self.last.clear()

    def _put(self, image: ExportImage, key: str, name: str) -> None:
        """Put an image into the export's folder once the cards it shows are drawn."""
        picture = image.picture
        for digest in picture.sources if not isinstance(picture, Plain) else ():
            self.wait(self.path_of.get(digest, digest))
        if self.previous is None:
            place_file(image.make(self.out_dir.parent, self.card_image), self.staging / name)
        else:
            self.previous.place(self.staging / name, key, lambda target: place_file(
                image.make(self.out_dir.parent, self.card_image), target), name=f"{TTS_DIR}/{name}")

    def description(self, card: CardEntry) -> str:
        """A card's text as its description in Tabletop Simulator (none while only collecting recipes: the
        saved object is not kept then, and the markup of 1,000 cards took ~50 ms before the first card's job)."""
        return tts_text(card.text) if self.recipes is None else ""

    def image_hash(self, path: str | None) -> str:
        """The content hash the build recorded for a face or back image path."""
        return (self.hashes.get(path) if path is not None else None) or str(path)

    def sheet_picture(self, sheet: Sheet, images: list[str | None], deck: DeckEntry) -> SheetPicture:
        """A sheet's recipe from the image of each of its slots (None: a plain back)."""
        png, size = self.options.image_format == "png", (sheet.cell_width, sheet.cell_height)
        return SheetPicture(sheet.width, sheet.height, sheet.columns, tuple(
            Cell(self.source(path, deck), size, None if png else self.options.jpeg_quality) if path else Plain(size)
            for path in images))

    # ------------------------------------------------------------ objects

    def saved_object(self, marked: bool = True) -> dict:
        """The whole saved-object file: header plus every deck, token supply and board of the game.

        Boards lie in the middle of the table, the decks face down in rows in front of them and the tokens in
        rows behind, each at its size in game.yaml (see `sizes`), all inside the play area (`layout`). Unless
        `marked`, the objects lack their tags and memos (`mark_for_push`): for the images the export draws only.
        """
        rows: dict[str, list[tuple[str, DeckEntry, list[CardEntry]]]] = {"card": [], "token": [], "board": []}
        for deck_name, deck in self.record.decks.items():
            cards = self.record.cards_of(deck_name)
            if cards:
                rows[deck.kind].append((deck_name, deck, cards))
        tokens = [(deck_name, deck, card) for deck_name, deck, cards in rows["token"] for card in cards]
        boards = [(deck_name, deck, card) for deck_name, deck, cards in rows["board"] for card in cards]
        groups = ([_footprint(deck) for _, deck, _ in rows["card"]], [_footprint(deck) for _, deck, _ in boards],
                  [_footprint(deck, least=1.0) for _, deck, _ in tokens])
        laid = lay_out(*groups)
        self.outside = outside(laid, [item for group in groups for item in group])
        places = iter(laid)
        objects = []
        for deck_name, deck, cards in rows["card"]:
            x, z = next(places)
            objects.append(self.card_deck(deck_name, deck, cards, _transform(
                x, z, face_down=True, scale=card_scale(deck.size_mm.width, deck.size_mm.height))))
        board_objects = [self.board(deck_name, deck, card, *next(places)) for deck_name, deck, card in boards]
        for deck_name, deck, card in tokens:
            objects += self.token_objects(deck_name, deck, card, *next(places))
        objects += board_objects
        if marked:  # a hash of every object's JSON: ~40% of the export's planning at 1,000 cards
            mark_for_push(objects, self.game)
        game = self.record.game
        return {"SaveName": game.title, "Date": self.record.built_at, "VersionNumber": "",
                "GameMode": game.title, "GameType": "", "GameComplexity": "", "Tags": [], "Gravity": 0.5,
                "PlayArea": 0.5, "Table": "", "Sky": "", "Note": "", "TabStates": {},
                "LuaScript": "", "LuaScriptState": "", "XmlUI": "", "ObjectStates": objects}

    def card_deck(self, deck_name: str, deck: DeckEntry, cards: list[CardEntry], transform: dict) -> dict:
        """A DeckCustom of a deck's cards (copies repeated), or a lone Card when it has one card."""
        by_id = {c.id: c for c in cards}
        bleed = 2 * deck.bleed_px
        card_size = (deck.pixels.width - bleed, deck.pixels.height - bleed)  # as `trimmed` cuts
        self.cover.append((cards[0].face, deck))
        # A key names the sheet's images: it changes whenever they do, or a table holding an older export
        # of the deck would show the first images loaded under that key for both.
        picture = f"{card_size}/{deck.bleed_mm}/{self.options.image_format}/{self.options.jpeg_quality}"
        sheets = plan_sheets(self.game, deck_name, list(by_id), *card_size, self.keys, lambda ids: "|".join(
            [picture, *(f"{by_id[i].hash}/{self.image_hash(by_id[i].back)}" for i in ids)]))
        unique_back = len({c.back for c in cards}) > 1  # different backs: a back sheet per face sheet
        if not unique_back:  # one back image for the deck (and one file for decks sharing a back)
            sharpest = max(sheets, key=lambda s: s.cell_width * s.cell_height)
            size = (sharpest.cell_width, sharpest.cell_height)
            back_inputs = [self.image_hash(cards[0].back), f"{size}", f"{deck.bleed_mm}"]
            back = cards[0].back
            shared_back = self.save_cached(Scaled(self.source(back, deck), size) if back else Plain(size), "back",
                                           back_inputs, last=True)
        custom = {}
        for index, sheet in enumerate(sheets):
            layout = f"{sheet.width}x{sheet.height}/{sheet.cell_width}x{sheet.cell_height}/{deck.bleed_mm}"
            faces = self.sheet_picture(sheet, [by_id[i].face for i in sheet.card_ids], deck)
            face_url = self.save_cached(faces, f"{deck_name}-{index + 1}",
                                        [layout, *(by_id[i].hash for i in sheet.card_ids)])
            if unique_back:
                backs = self.sheet_picture(sheet, [by_id[i].back for i in sheet.card_ids], deck)
                back_url = self.save_cached(backs, f"{deck_name}-{index + 1}-backs",
                                            [layout, *(self.image_hash(by_id[i].back) for i in sheet.card_ids)],
                                            last=True)
            else:
                back_url = shared_back
            custom[str(sheet.key)] = {"FaceURL": face_url, "BackURL": back_url, "NumWidth": sheet.columns,
                                      "NumHeight": sheet.rows, "BackIsHidden": True, "UniqueBack": unique_back,
                                      "Type": DECK_TYPES[deck.shape]}
        sideways = deck.size_mm.width > deck.size_mm.height
        contained = []
        for sheet in sheets:
            for slot, card_id in enumerate(sheet.card_ids):
                card = by_id[card_id]
                for copy in range(card.copies):
                    contained.append(_base(
                        "Card", self.guid(f"card/{card_id}/{copy}"), card.name, self.description(card),
                        dict(transform), CardID=sheet.tts_id(slot), SidewaysCard=sideways,
                        CustomDeck={str(sheet.key): custom[str(sheet.key)]}, Hands=True, HideWhenFaceDown=True,
                        GMNotes=card_id))
        if len(contained) == 1:
            return contained[0]
        return _base("DeckCustom", self.guid(f"deck/{deck_name}"), deck.title,
                     f"{self.record.game.title} v{self.record.game.version}: {len(contained)} cards",
                     transform, SidewaysCard=sideways, HideWhenFaceDown=True,
                     DeckIDs=[c["CardID"] for c in contained], CustomDeck=custom, ContainedObjects=contained)

    def component_image(self, card: CardEntry, deck: DeckEntry, keep_alpha: bool) -> str:
        """A token's or board's image, trimmed and kept within the size limit; its URL."""
        self.cover.append((card.face, deck))
        return self.save_cached(Component(self.source(card.face, deck)), card.id, [card.hash, f"{deck.bleed_mm}"],
                                keep_alpha)

    def token_objects(self, deck_name: str, deck: DeckEntry, card: CardEntry, x: float, z: float) -> list[dict]:
        """A token as a Custom_Tile (or Custom_Token when cut out): in an Infinite_Bag for an endless
        supply, else one object per copy, stacked."""
        url = self.component_image(card, deck, keep_alpha=True)
        back_url = self.component_image(card.model_copy(update={"face": card.back, "id": f"{card.id}-back"}), deck,
                                        keep_alpha=True) if card.back else url
        image = {"ImageURL": url, "ImageSecondaryURL": back_url, "ImageScalar": 1.0, "WidthScale": 0.0}
        if deck_name in self.options.cutout:
            kind = "Custom_Token"
            image["CustomToken"] = {"Thickness": 0.2, "MergeDistancePixels": 15.0, "StandUp": False,
                                    "Stackable": True}
        else:
            kind = "Custom_Tile"
            # Stretch off: the tile takes the image's proportions, which are already the token's.
            image["CustomTile"] = {"Type": TILE_TYPES[deck.shape], "Thickness": 0.2, "Stackable": True,
                                   "Stretch": False}
        scale = tile_scale(deck.size_mm.height)

        def token(name: str, y: float) -> dict:
            return _base(kind, self.guid(name), card.name, tts_text(card.text),
                         _transform(x, z, y=y, scale=scale), CustomImage=image)

        if deck.supply:
            return [_base("Infinite_Bag", self.guid(f"bag/{card.id}"), card.name,
                          f"Endless supply: {tts_text(card.text)}", _transform(x, z),
                          ContainedObjects=[token(f"token/{card.id}", 1.0)])]
        return [token(f"token/{card.id}/{copy}", 1.0 + 0.25 * copy) for copy in range(card.copies)]

    def board(self, deck_name: str, deck: DeckEntry, card: CardEntry, x: float, z: float) -> dict:
        """A Custom_Board, locked as Tabletop Simulator makes boards; `WidthScale` is its image's width over
        its height, as Tabletop Simulator stores it for every board. The grids of `tts: snap_points:` for its
        deck become its `AttachedSnapPoints`."""
        url = self.component_image(card, deck, keep_alpha=self.options.image_format == "png")
        size = deck.size_mm
        snaps = [point for grid in self.options.snap_points.get(deck_name, ()) for point in snap_grid(
            grid.columns, grid.rows, grid.across, grid.down, (size.width, size.height), (grid.x, grid.y))]
        return _base("Custom_Board", self.guid(f"board/{card.id}"), card.name, tts_text(card.text),
                     _transform(x, z, scale=board_scale(size.height)), Locked=True,
                     CustomImage={"ImageURL": url, "ImageSecondaryURL": "", "ImageScalar": 1.0,
                                  "WidthScale": round(size.width / size.height, 6)},
                     **({"AttachedSnapPoints": snaps} if snaps else {}))

    def cover_hashes(self) -> list[str]:
        """What the thumbnail shows, as content hashes (it is remade only when they change)."""
        return [self.image_hash(path) for path, _ in self.cover[:3]]

    def cover_faces(self) -> list[CoverFace]:
        """The faces the thumbnail shows: the first face of up to three decks."""
        return [CoverFace(self.source(path, deck)) for path, deck in self.cover[:3]]

    def thumbnail(self) -> Image.Image:
        """A 256 x 256 picture of the game: the first face of up to three decks, fanned out."""
        from PIL import Image

        canvas = Image.new("RGBA", (THUMBNAIL_PX, THUMBNAIL_PX), "#1f1d1a")
        shown = self.cover_faces()
        for path, _ in self.cover[:3]:
            self.wait(path)
        for i, cover in enumerate(shown):
            face = cover.load(self.out_dir.parent, self.card_image)
            angle = (i - (len(shown) - 1) / 2) * -12
            turned = face.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
            x = (THUMBNAIL_PX - turned.width) // 2 + round((i - (len(shown) - 1) / 2) * 50)
            canvas.alpha_composite(turned, (max(0, x), (THUMBNAIL_PX - turned.height) // 2))
        return canvas.convert("RGB")
