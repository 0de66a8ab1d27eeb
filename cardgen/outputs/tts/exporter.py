"""One game's export: its images, put into the staging folder (or collected as recipes for the render
workers), and its saved object: the objects of its decks (`decks.py`), tokens (`tokens.py`) and boards
(`boards.py`) laid out on the table. The thumbnail is `thumbnail.py`'s."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from cardgen.core.storage import KeptRuns, place_file
from cardgen.load.freshness import PreviousOutputs
from cardgen.options.tts import TTSSpec
from cardgen.outputs.reuse import inputs_key
from cardgen.outputs.tts.boards import board
from cardgen.outputs.tts.decks import card_deck
from cardgen.outputs.tts.layout import Footprint, lay_out, outside
from cardgen.outputs.tts.objects import mark_for_push, transform, tts_text
from cardgen.outputs.tts.pictures import Component, ExportImage, Picture, Source, shown_paths
from cardgen.outputs.tts.sheets import Guids
from cardgen.outputs.tts.sizes import card_scale, table_units
from cardgen.outputs.tts.tokens import token_objects
from cardgen.outputs.tts.work import Recipes
from cardgen.raster.render import DrawnCard
from cardgen.record.record import BuildRecord, CardEntry, DeckEntry, cards_by_deck

TTS_DIR = "tts"


def _footprint(deck: DeckEntry, least: float = 0.0) -> Footprint:
    """What one object of a deck covers on the table: its size, at least `least` units a side (a token's bag)."""
    return Footprint(max(table_units(deck.size_mm.width), least), max(table_units(deck.size_mm.height), least))


class Exporter:
    """Writes one game's images into the staging folder and builds its saved object; the objects of each kind are
    made by their modules, which put their images in through `save_cached`."""

    def __init__(self, game: str, record: BuildRecord, out_dir: Path, staging: Path, options: TTSSpec,
                 url: Callable[[str], str], recipes: Recipes | None = None,
                 previous: PreviousOutputs | None = None,
                 wait: Callable[[str], Path | None] = lambda image: None, out_root: Path | None = None) -> None:
        self.game, self.record, self.out_dir, self.staging = game, record, out_dir, staging
        self.out_root = out_root or out_dir.parent  # whose caches hold its images (`out_dir` may be a staging folder)
        self.options, self.url = options, url
        self.recipes = recipes  # when given, images are only collected there (see `card_work`), not made
        self.guid = Guids(game)
        self.keys: set[int] = set()
        self.cover: list[tuple[str, DeckEntry]] = []  # (face image path, deck) of each deck's first card
        # The content hashes of the images the export asks for without a card at hand: the backs', and the faces of
        # the cards it has shown (`shown`); every face's (`hashes`) only when another path is asked for, not a dict
        # of 10,000 faces made twice an edit.
        self.back_hashes = {back.image: back.hash for back in record.backs.values()}
        self.face_hashes: dict[str, str] = {}
        self.previous = previous  # the previous build's images to keep (during a build)
        self.wait = wait  # returns once the image of a path is drawn, with its file (see `export_tts`)
        self.last: list[Callable[[], None]] = []  # images to put in once every other is (see `save_cached`)
        self.held: list[tuple[ExportImage, str, str]] = []  # images, keys and names `_put` held for `put_held`
        self.outside = 0  # objects the layout could not keep inside the play area
        self.objects = KeptRuns(("tts-objects", game))  # each sheet's objects (`decks.card_deck`), for the next
        self.sheets = KeptRuns(("tts-sheets", game))  # each sheet's plan (`decks._sheet_plans`), for the next
        # each image's key by its inputs' identity (a kept sheet plan's): not ~150 hashes of a sheet's 70 card hashes
        self.image_keys = KeptRuns(("tts-image-keys", game, recipes is None))

    # ------------------------------------------------------------ images

    def card_image(self, source: Source) -> DrawnCard:
        """A card of the build: its pixels read from its file."""
        return DrawnCard(self.wait(source.path) or self.out_dir / source.path)

    def source(self, path: str, deck: DeckEntry) -> Source:
        """A face or back image of the build, with what to cut off."""
        return Source(self.image_hash(path), path, deck.bleed_px)

    def save_cached(self, picture: Picture, stem: str, inputs: list[str], keep_alpha: bool = False,
                    last: bool = False) -> str:
        """Put an image into the export, made from its recipe or reused from the cache; return its URL. An image
        put `last` is put in once every other is (`put_last`): a build draws the backs after the faces, and the
        faces' sheets and texts are made as their cards are drawn, not after a deck's back.

        The name carries a hash of the inputs (card hashes, cell size, format), which changes whenever the
        content does; in a process that builds again, the key, name and image are the last export's for the same
        inputs and picture (by identity: neither is changed once given, as a kept sheet plan's are not), so that the
        image's own key (`ExportImage.key`) is not hashed again for each of ~150 sheets an edit either.
        """
        png = keep_alpha or self.options.image_format == "png"
        quality = self.options.jpeg_quality
        key, name, image = self.image_keys.made((png, quality, stem), (inputs, picture),
                                                functools.partial(self._image, picture, stem, inputs, png))
        if self.recipes is not None:
            self.recipes.add(image)
        elif last:
            self.last.append(functools.partial(self._put, image, key, name))
        else:
            self._put(image, key, name)
        return self.url(name)

    def _image(self, picture: Picture, stem: str, inputs: list[str], png: bool) -> tuple[str, str, ExportImage]:
        """An image of the export made of its inputs: its key, its file's name and the image (see `save_cached`)."""
        quality = self.options.jpeg_quality
        key = inputs_key([*inputs, str(png), str(quality)], __name__)
        return key, f"{self.game}-{stem}-{key[:12]}{'.png' if png else '.jpg'}", ExportImage(picture, png, quality,
                                                                                            (key,))

    def put_last(self) -> None:
        """Put in the images put `last` (see `save_cached`)."""
        for put in self.last:
            put()
        self.last.clear()
        self.put_held()

    def _put(self, image: ExportImage, key: str, name: str) -> None:
        """Put an image into the export's folder, made once the cards it shows are drawn (one the previous build
        made of the same is kept without waiting for them: ~1 look-up a card); with a previous build, held until
        `put_held` puts the images in together."""
        if self.previous is None:
            self._make(image, name)
        else:
            self.held.append((image, key, name))

    def put_held(self) -> None:
        """Put in the images `_put` held. In a process that builds again, those the previous build made are kept on
        trust, unread, all at once (`PreviousOutputs.keep_trusted`: by C loops, not a `place` of each of ~150 sheets
        an edit at 10,000 cards, ~3 ms): the build looks at each once it is in place, only if the kernel says it
        changed, and makes it then into the export's folder where it lies by then (see `_make`). The others are
        placed one by one: kept when the previous build's file is as it sealed it, else made."""
        held, self.held = self.held, []
        previous = self.previous
        if not held or previous is None:
            return
        makers = {name: functools.partial(self._make, image, name) for image, _, name in held}
        kept = previous.keep_trusted([f"{TTS_DIR}/{name}" for _, _, name in held], [key for _, key, _ in held],
                                     str(self.out_dir), lambda target: makers[target.name]())
        for (_, key, name), was_kept in zip(held, kept):
            if not was_kept:
                previous.place(f"{self.staging}/{name}", key, makers[name], name=f"{TTS_DIR}/{name}", trust=True)

    def _make(self, image: ExportImage, name: str, _target: object = None) -> None:
        """Make an image into the export's folder as it is when called (`self.staging`), not at a target `place`
        names, the TTS staging folder of the time of the call to `place`: swapped in and gone by the time a file
        kept on trust is found changed."""
        for path in shown_paths(image.picture):  # (by path: not a dict of every image's path by hash an edit)
            self.wait(path)
        place_file(image.make(self.out_root, self.card_image), self.staging / name)

    def take_key(self, key: int) -> bool:
        """Take a sheet's key a rebuild planned before, when no sheet took it yet (False: nothing taken)."""
        if key in self.keys:
            return False
        self.keys.add(key)
        return True

    def description(self, card: CardEntry) -> str:
        """A card's text as its description in Tabletop Simulator (asked only for the saved object: an export
        collecting recipes makes no card's objects, see `card_deck`)."""
        return tts_text(card.text)

    def image_hash(self, path: str | None) -> str:
        """The content hash the build recorded for a face or back image path."""
        if path is None:
            return "None"
        digest = self.back_hashes.get(path)  # (backs/ and cards/ hold no path in common)
        if digest is None:
            digest = self.face_hashes.get(path)
        return (digest if digest is not None else self.hashes.get(path)) or path

    def shown(self, card: CardEntry) -> None:
        """Note the hash of a card's face (`image_hash` finds it without `hashes`)."""
        self.face_hashes[card.face] = card.hash

    @functools.cached_property
    def hashes(self) -> dict[str, str]:
        """The content hash of every face and back image, by path."""
        return self.record.image_hashes()

    def component_image(self, card: CardEntry, deck: DeckEntry, keep_alpha: bool) -> str:
        """A token's or board's image, trimmed and kept within the size limit; its URL."""
        self.cover.append((card.face, deck))
        if card.face not in self.back_hashes:  # (a token's back is given as a card whose face is the back)
            self.shown(card)
        return self.save_cached(Component(self.source(card.face, deck)), card.id, [card.hash, f"{deck.bleed_mm}"],
                                keep_alpha)


    # ------------------------------------------------------------ objects

    def saved_object(self, marked: bool = True) -> dict:
        """The whole saved-object file: header plus every deck, token supply and board of the game.

        Boards lie in the middle of the table, the decks face down in rows in front of them and the tokens in
        rows behind, each at its size in game.yaml (see `sizes`), all inside the play area (`layout`). Unless
        `marked`, the objects lack their tags and memos (`mark_for_push`): for the images the export draws only.
        """
        rows: dict[str, list[tuple[str, DeckEntry, list[CardEntry]]]] = {"card": [], "token": [], "board": []}
        # (one C loop over the cards, not one a deck; in a process that builds again, the last call's with the
        # changed cards put in, shared by `card_work`'s planning, the export and the gallery: `storage.derived`)
        by_deck = cards_by_deck(self.record.cards, self.game)
        for deck_name, deck in self.record.decks.items():
            cards = by_deck.get(deck_name)
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
            objects.append(card_deck(self, deck_name, deck, cards, transform(
                x, z, face_down=True, scale=card_scale(deck.size_mm.width, deck.size_mm.height))))
        board_objects = [board(self, deck_name, deck, card, *next(places)) for deck_name, deck, card in boards]
        for deck_name, deck, card in tokens:
            objects += token_objects(self, deck_name, deck, card, *next(places))
        objects += board_objects
        self.put_held()
        if marked:  # a hash of every object's JSON: ~40% of the export's planning at 1,000 cards
            mark_for_push(objects, self.game)
        if self.recipes is None:
            self.objects.keep()
        self.sheets.keep()  # (`card_work`'s plans are the export's, made once a build)
        self.image_keys.keep()
        game = self.record.game
        return {"SaveName": game.title, "Date": self.record.built_at, "VersionNumber": "",
                "GameMode": game.title, "GameType": "", "GameComplexity": "", "Tags": [], "Gravity": 0.5,
                "PlayArea": 0.5, "Table": "", "Sky": "", "Note": "", "TabStates": {},
                "LuaScript": "", "LuaScriptState": "", "XmlUI": "", "ObjectStates": objects}
