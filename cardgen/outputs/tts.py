"""Tabletop Simulator export: deck sheet images, token and board images, and a saved-object JSON.

Writes `output/<game>/tts/`: `<Game title>.json` (every deck face down side by side, tokens, bags and boards),
`<Game title>.png` (256 x 256 thumbnail) and the images, named with a hash of their content so that
Tabletop Simulator, which caches images by URL, never shows a stale one. Sheet packing and keys are plain
data in `tts_sheets.py`; copying into Tabletop Simulator's Saved Objects folder is `tts_install.py`.
"""
from __future__ import annotations

import functools
import io
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from PIL import Image

from cardgen.errors import CardgenError, relative
from cardgen.manifest import Game, TTSSpec
from cardgen.markup import parse
from cardgen.outputs.reuse import inputs_key, reuse_or_make
from cardgen.outputs.tts_sheets import MAX_SIDE_PX, Guids, Sheet, plan_sheets
from cardgen.outputs.tts_sizes import board_scale, card_scale, table_units, tile_scale
from cardgen.ownership import make_staging, remove_ours
from cardgen.record import BuildRecord, CardEntry, DeckEntry
from cardgen.storage import Cache, swap_into_place, write_json

TTS_DIR = "tts"
THUMBNAIL_PX = 256
GAP_UNITS = 1.0  # space between objects laid out on the table
TILE_TYPES = {"rectangle": 0, "square": 0, "hex": 1, "circle": 2, "rounded": 3}
DECK_TYPES = {"rounded": 0, "rectangle": 1, "square": 1, "hex": 3, "circle": 4}
PLAIN_BACK = "#3a3733"  # the back of cards whose deck declares none


@dataclass(frozen=True)
class TTSOptions:
    """How images are encoded and addressed: format, JPEG quality, and the base URL (None: file:/// paths)."""

    image_format: str = "jpeg"
    jpeg_quality: int = 92
    base_url: str | None = None
    cutout: tuple[str, ...] = ()

    @classmethod
    def from_spec(cls, spec: TTSSpec, **overrides: object) -> "TTSOptions":
        """Options from the manifest's `tts:` section, with command-line values (not None) on top."""
        values: dict[str, Any] = {"image_format": spec.image_format, "jpeg_quality": spec.jpeg_quality,
                  "base_url": spec.base_url, "cutout": tuple(spec.cutout)}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def tts_stage(game: Game, record: BuildRecord, out_dir: Path) -> None:
    """The output stage of `cardgen build`: export with the manifest's settings."""
    export_tts(game, record, out_dir, TTSOptions.from_spec(game.spec.tts))


def export_tts(game: Game, record: BuildRecord, out_dir: Path, options: TTSOptions) -> Path:
    """Write `<out_dir>/tts/` from a build record; return the saved-object JSON path (at its final place)."""
    _check_cutout(game, record, options)
    # During `cardgen build` out_dir is a staging folder renamed to output/<game> at the end: URLs name the
    # final place.
    final_dir = out_dir.parent / game.name / TTS_DIR
    staging = make_staging(out_dir, TTS_DIR)
    try:
        exporter = _Exporter(game.name, record, out_dir, staging, options, _url_maker(options.base_url, final_dir))
        saved = exporter.saved_object()
        stem = file_stem(record.game.title)
        write_json(staging / f"{stem}.json", saved)
        reuse_or_make(out_dir, staging / f"{stem}.png", ["thumbnail", *exporter.cover_hashes()],
                      lambda temp: exporter.thumbnail().save(temp, format="PNG"))
        swap_into_place(staging, out_dir / TTS_DIR)
    finally:
        remove_ours(staging)
    return final_dir / f"{stem}.json"


def saved_object_path(out_dir: Path, record: BuildRecord) -> Path:
    """Where the export of a built game (in `out_dir`) puts its saved object."""
    return out_dir / TTS_DIR / f"{file_stem(record.game.title)}.json"


def file_stem(title: str) -> str:
    """A file name from a game title: characters Windows or macOS refuse are replaced."""
    return re.sub(r'[<>:"/\\|?*\x00-\x1f]', "_", title).strip(" .") or "game"


def _check_cutout(game: Game, record: BuildRecord, options: TTSOptions) -> None:
    for name in options.cutout:
        if name not in record.decks or record.decks[name].kind != "token":
            raise CardgenError(f"tts.cutout: '{name}' is not a token deck of this game",
                               file=relative(game.manifest_path, game.root), row=game.line("tts", "cutout"))


def file_url(path: Path) -> str:
    """A file:/// URL as Tabletop Simulator writes one for a local image: the plain absolute path with its
    spaces (file:///C:/Users/Me/My Games/... on Windows), except `%` and `#`, which would otherwise start an
    escape or cut the address short."""
    absolute = path.resolve().as_posix().replace("%", "%25").replace("#", "%23")
    return "file://" + (absolute if absolute.startswith("/") else "/" + absolute)


def _url_maker(base_url: str | None, folder: Path) -> Callable[[str], str]:
    if base_url:
        return lambda name: f"{base_url.rstrip('/')}/{urllib.parse.quote(name)}"
    return lambda name: file_url(folder / name)


# Names Tabletop Simulator would read as a rich-text tag if an icon were written as `[name]`.
_TTS_TAG = re.compile(r"[biusc]|sub|sup|[0-9a-f]{6}|[0-9a-f]{8}|-", re.IGNORECASE)


def tts_icon(name: str) -> str:
    """An inline icon as a readable word: its name as written, in brackets (`:power_up:` -> `[power up]`)."""
    word = re.sub(r"[_-]+", " ", name).strip()
    return f"[{word} ]" if _TTS_TAG.fullmatch(word) else f"[{word}]"


def tts_text(text: str) -> str:
    """Card markup as Tabletop Simulator rich text: [b]bold[/b], [i]italic[/i], icons as `[name]`."""
    out: list[str] = []
    open_tags: list[str] = []
    for span in parse(text):
        wanted = [tag for tag, on in (("b", span.bold), ("i", span.italic)) if on]
        while set(open_tags) - set(wanted):  # tags nest: close down to the last one still wanted
            out.append(f"[/{open_tags.pop()}]")
        for tag in (t for t in wanted if t not in open_tags):
            out.append(f"[{tag}]")
            open_tags.append(tag)
        out.append(tts_icon(span.text) if span.kind == "icon" else span.text)
    out += [f"[/{tag}]" for tag in reversed(open_tags)]
    return "".join(out)


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


class _Exporter:
    """Writes one game's images into the staging folder and builds its objects."""

    def __init__(self, game: str, record: BuildRecord, out_dir: Path, staging: Path, options: TTSOptions,
                 url: Callable[[str], str]) -> None:
        self.game, self.record, self.out_dir, self.staging = game, record, out_dir, staging
        self.options, self.url = options, url
        self.guid = Guids(game)
        self.keys: set[int] = set()
        self.cover: list[tuple[str, DeckEntry]] = []  # (face image path, deck) of each deck's first card

    # ------------------------------------------------------------ images

    def trimmed(self, path: str, deck: DeckEntry) -> Image.Image:
        """A card image from the build with its bleed cut off."""
        bleed = deck.bleed_px
        with Image.open(self.out_dir / path) as image:
            image.load()
            return image.crop((bleed, bleed, image.width - bleed, image.height - bleed))

    def encode(self, image: Image.Image, keep_alpha: bool = False) -> tuple[bytes, str]:
        """The image as file bytes in the export's format, and the file suffix."""
        buffer = io.BytesIO()
        if keep_alpha or self.options.image_format == "png":
            image.save(buffer, format="PNG")
            return buffer.getvalue(), ".png"
        # JPEG has no transparency: transparent parts turn white, as on paper
        flat = Image.new("RGB", image.size, "white")
        flat.paste(image, mask=image.getchannel("A") if image.mode == "RGBA" else None)
        flat.save(buffer, format="JPEG", quality=self.options.jpeg_quality, subsampling=0, optimize=True)
        return buffer.getvalue(), ".jpg"

    def save_cached(self, make: Callable[[], Image.Image], stem: str, inputs: list[str],
                    keep_alpha: bool = False) -> str:
        """Like `save`, but reuse the file made earlier from the same inputs (card hashes, cell size, format).

        The name carries a hash of the inputs, which changes whenever the content does.
        """
        png = keep_alpha or self.options.image_format == "png"
        key = inputs_key([*inputs, str(png), str(self.options.jpeg_quality)])
        name = f"{self.game}-{stem}-{key[:12]}{'.png' if png else '.jpg'}"
        reuse_or_make(self.out_dir, self.staging / name, [key],
                      lambda temp: temp.write_bytes(self.encode(make(), keep_alpha)[0]))
        return self.url(name)

    def image_hash(self, path: str | None) -> str:
        """The content hash the build recorded for a face or back image path."""
        return self.record.image_hash(path) or str(path)

    def cell(self, path: str, deck: DeckEntry, size: tuple[int, int]) -> Image.Image:
        """A card trimmed and scaled to a sheet cell, cached by the card's hash and the cell size.

        Decoding and scaling every card of a sheet is most of a sheet's cost; with the cells cached,
        remaking the sheet after a one-card edit decodes small cells and scales one card.
        """
        png = self.options.image_format == "png"
        key = inputs_key(["cell", self.image_hash(path), f"{size}", f"{deck.bleed_mm}", str(png)])
        cache = Cache(self.out_dir.parent, "tts-cells", ".png" if png else ".jpg")
        if cache.has(key):
            with Image.open(cache.path(key)) as stored:
                return stored.convert("RGB")
        image = self.trimmed(path, deck).convert("RGB").resize(size, Image.Resampling.LANCZOS)
        # Cells are kept lossless for PNG sheets; for JPEG sheets a high-quality JPEG is lossless enough.
        options: dict[str, Any] = {"format": "PNG", "compress_level": 1} if png else {"format": "JPEG", "quality": 97,
                                                                         "subsampling": 0}
        cache.write(key, lambda temp: image.save(temp, **options))
        return image

    def face_cell(self, by_id: dict[str, CardEntry], deck: DeckEntry, size: tuple[int, int],
                  card_id: str) -> Image.Image:
        """The face of a card (by id) as a sheet cell of `size`."""
        return self.cell(by_id[card_id].face, deck, size)

    def sheet_image(self, sheet: Sheet, load: Callable[[str], Image.Image]) -> Image.Image:
        """Cards pasted into their cells: slot k at column k % columns, row k // columns, no gaps.

        Images are loaded one at a time (`load(card_id)`), so a large deck never sits in memory whole.
        """
        canvas = Image.new("RGB", (sheet.width, sheet.height), "black")
        for slot, card_id in enumerate(sheet.card_ids):
            cell = load(card_id).convert("RGB").resize((sheet.cell_width, sheet.cell_height), Image.Resampling.LANCZOS)
            canvas.paste(cell, sheet.origin(slot))
        return canvas

    # ------------------------------------------------------------ objects

    def saved_object(self) -> dict:
        """The whole saved-object file: header plus every deck, token supply and board of the game.

        Decks lie face down side by side, tokens in a row in front of them and boards behind, each at
        its size in game.yaml (see `tts_sizes`).
        """
        rows: dict[str, list[tuple[str, DeckEntry, list[CardEntry]]]] = {"card": [], "token": [], "board": []}
        for deck_name, deck in self.record.decks.items():
            cards = self.record.cards_of(deck_name)
            if cards:
                rows[deck.kind].append((deck_name, deck, cards))
        objects = []
        widths = [table_units(deck.size_mm.width) for _, deck, _ in rows["card"]]
        x = -(sum(widths) + GAP_UNITS * (len(widths) - 1)) / 2
        for (deck_name, deck, cards), width in zip(rows["card"], widths):
            objects.append(self.card_deck(deck_name, deck, cards, _transform(
                x + width / 2, 0, face_down=True, scale=card_scale(deck.size_mm.width, deck.size_mm.height))))
            x += width + GAP_UNITS
        front = max((table_units(deck.size_mm.height) / 2 for _, deck, _ in rows["card"]), default=0.0) + GAP_UNITS
        tokens = [(deck_name, deck, card) for deck_name, deck, cards in rows["token"] for card in cards]
        steps = [max(table_units(deck.size_mm.width), 1.0) + GAP_UNITS for _, deck, _ in tokens]
        x = -(sum(steps) - GAP_UNITS) / 2  # a row in front of the decks, centred
        for (deck_name, deck, card), step in zip(tokens, steps):
            depth = table_units(max(deck.size_mm.height, 25.4))
            objects += self.token_objects(deck_name, deck, card, x + (step - GAP_UNITS) / 2, -front - depth / 2)
            x += step
        z = front  # boards go behind the decks, one after the other
        for _, deck, cards in rows["board"]:
            height = table_units(deck.size_mm.height)
            for card in cards:
                objects.append(self.board(deck, card, z + height / 2))
                z += height + GAP_UNITS
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
        backs: dict[str | None, Image.Image] = {}  # each distinct back, loaded once

        def back_of(card_id: str) -> Image.Image:
            path = by_id[card_id].back
            if path not in backs:
                backs[path] = self.back_image(path, deck, card_size)
            return backs[path]

        unique_back = len({c.back for c in cards}) > 1  # different backs: a back sheet per face sheet
        if not unique_back:  # one back image for the deck (and one file for decks sharing a back)
            sharpest = max(sheets, key=lambda s: s.cell_width * s.cell_height)
            size = (sharpest.cell_width, sharpest.cell_height)
            back_inputs = [self.image_hash(cards[0].back), f"{size}", f"{deck.bleed_mm}"]
            shared_back = self.save_cached(lambda: back_of(cards[0].id).resize(size, Image.Resampling.LANCZOS),
                                           "back", back_inputs)
        custom = {}
        for index, sheet in enumerate(sheets):
            layout = f"{sheet.width}x{sheet.height}/{sheet.cell_width}x{sheet.cell_height}/{deck.bleed_mm}"
            cells = functools.partial(self.face_cell, by_id, deck, (sheet.cell_width, sheet.cell_height))
            face_url = self.save_cached(functools.partial(self.sheet_image, sheet, cells), f"{deck_name}-{index + 1}",
                                        [layout, *(by_id[i].hash for i in sheet.card_ids)])
            if unique_back:
                back_url = self.save_cached(functools.partial(self.sheet_image, sheet, back_of),
                                            f"{deck_name}-{index + 1}-backs",
                                            [layout, *(self.image_hash(by_id[i].back) for i in sheet.card_ids)])
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
                        "Card", self.guid(f"card/{card_id}/{copy}"), card.name, tts_text(card.text),
                        dict(transform), CardID=sheet.tts_id(slot), SidewaysCard=sideways,
                        CustomDeck={str(sheet.key): custom[str(sheet.key)]}, Hands=True, HideWhenFaceDown=True,
                        GMNotes=card_id))
        if len(contained) == 1:
            return contained[0]
        return _base("DeckCustom", self.guid(f"deck/{deck_name}"), deck.title,
                     f"{self.record.game.title} v{self.record.game.version}: {len(contained)} cards",
                     transform, SidewaysCard=sideways, HideWhenFaceDown=True,
                     DeckIDs=[c["CardID"] for c in contained], CustomDeck=custom, ContainedObjects=contained)

    def back_image(self, path: str | None, deck: DeckEntry, size: tuple[int, int]) -> Image.Image:
        """A card back, trimmed, at the card's size; a plain one when the deck has none."""
        if path is None:
            return Image.new("RGB", size, PLAIN_BACK)
        return self.trimmed(path, deck).convert("RGB").resize(size, Image.Resampling.LANCZOS)

    def component_image(self, card: CardEntry, deck: DeckEntry, keep_alpha: bool) -> str:
        """A token's or board's image, trimmed and kept within the size limit; its URL."""
        def make() -> Image.Image:
            image = self.trimmed(card.face, deck)
            image.thumbnail((MAX_SIDE_PX, MAX_SIDE_PX), Image.Resampling.LANCZOS)
            return image

        self.cover.append((card.face, deck))
        return self.save_cached(make, card.id, [card.hash, f"{deck.bleed_mm}"], keep_alpha)

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

    def board(self, deck: DeckEntry, card: CardEntry, z: float) -> dict:
        """A Custom_Board, locked as Tabletop Simulator makes boards; `WidthScale` is its image's width over
        its height, as Tabletop Simulator stores it for every board."""
        url = self.component_image(card, deck, keep_alpha=self.options.image_format == "png")
        size = deck.size_mm
        return _base("Custom_Board", self.guid(f"board/{card.id}"), card.name, tts_text(card.text),
                     _transform(0, z, scale=board_scale(size.height)), Locked=True,
                     CustomImage={"ImageURL": url, "ImageSecondaryURL": "", "ImageScalar": 1.0,
                                  "WidthScale": round(size.width / size.height, 6)})

    def cover_hashes(self) -> list[str]:
        """What the thumbnail shows, as content hashes (it is remade only when they change)."""
        return [self.image_hash(path) for path, _ in self.cover[:3]]

    def thumbnail(self) -> Image.Image:
        """A 256 x 256 picture of the game: the first face of up to three decks, fanned out."""
        canvas = Image.new("RGBA", (THUMBNAIL_PX, THUMBNAIL_PX), "#1f1d1a")
        shown = self.cover[:3]
        for i, (path, deck) in enumerate(shown):
            face = self.trimmed(path, deck).convert("RGBA")
            face.thumbnail((110, 154), Image.Resampling.LANCZOS)
            angle = (i - (len(shown) - 1) / 2) * -12
            turned = face.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
            x = (THUMBNAIL_PX - turned.width) // 2 + round((i - (len(shown) - 1) / 2) * 50)
            canvas.alpha_composite(turned, (max(0, x), (THUMBNAIL_PX - turned.height) // 2))
        return canvas.convert("RGB")
