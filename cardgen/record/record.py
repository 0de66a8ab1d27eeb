"""The build record (`output/<game>/build.json`): the typed contract between a build and every output.

A build writes it last; `print`, `tts`, `snapshot`, `changes` and every output stage read it. Each card
carries the content hash of its image, so outputs key their caches by it and never hash image files again.
A record that is missing, from an older cardgen, or edited by hand into something unreadable is never
served: a build starts afresh, and commands run after a build say to build again.
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import json
import operator
from pathlib import Path
from typing import Annotated, Any, Callable, Hashable, Iterator, Literal, Sequence, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from cardgen.core.boxes import GuideBox
from cardgen.core.errors import CardgenError, Problem
from cardgen.core.storage import (
    JSON_PAD,
    KeptRuns,
    Run,
    blocks,
    builds_again,
    derived,
    file_identity,
    keep_latest,
    write_spliced,
)
from cardgen.load.freshness import record_intact, seal_record

BUILD_RECORD = "build.json"
MAX_RECORD_BYTES = 64_000_000  # a build record or snapshot: ~3.5 kB a card (10,000 cards: ~35 MB), ~10x that read
MAX_RECORD_VALUES = 4_000_000  # its JSON values (~140 a card): a short one holds ~100 bytes for 3-5 written ({},)
Kind = Literal["card", "token", "board"]
T = TypeVar("T")


def _inside_build(image: str) -> str:
    """An image path of the record names a file inside the build folder: never an absolute path or '..'."""
    parts = [part for part in image.split("/") if part not in ("", ".")]  # PurePosixPath(image).parts, ~5x faster
    if image.startswith("/") or ".." in parts or "\\" in image or ":" in image or not parts:
        raise ValueError(f"'{image}' is not a path inside the build folder")
    return image


ImagePath = Annotated[str, AfterValidator(_inside_build)]


class Entry(BaseModel):
    """Base of the record's parts: keys a later cardgen adds are ignored by an earlier one."""

    model_config = ConfigDict(extra="ignore")


class Dimensions(Entry):
    """A width and a height (mm)."""

    width: float
    height: float


class Pixels(Entry):
    """A width and a height in whole pixels."""

    width: int
    height: int


class SourceRef(Entry):
    """Where a card's data came from: the data file and its row."""

    file: str
    row: int | None = None


class GameEntry(Entry):
    """The game a record was built from."""

    name: str
    title: str
    version: str
    description: str | None = None


class DeckEntry(Entry):
    """One deck: its title, kind, shape and card size."""

    title: str
    kind: Kind = "card"
    shape: str = "rounded"
    supply: bool = False
    size_mm: Dimensions
    bleed_mm: float
    safe_mm: float = 0.0
    dpi: int
    pixels: Pixels

    @property
    def bleed_px(self) -> int:
        """The bleed in image pixels."""
        return round(self.bleed_mm / 25.4 * self.dpi)


class BackEntry(Entry):
    """A distinct card back: its image (relative to the build folder), deck, template and content hash; `per_card`
    when its template reads the card (a back drawn for each card, shared by the cards it comes out the same for)."""

    image: ImagePath
    deck: str
    template: str
    hash: str
    per_card: bool = False
    boxes: list[GuideBox] = Field(default_factory=list)


class CardEntry(Entry):
    """One card: its data, its face and back images (relative to the build folder), its content hash (the image's
    cache key) and what its face shows."""

    id: str
    deck: str
    kind: Kind = "card"
    name: str
    copies: int = Field(ge=0)
    face: ImagePath
    back: ImagePath | None = None
    source: SourceRef
    size_mm: Dimensions
    bleed_mm: float
    dpi: int
    pixels: Pixels
    hash: str
    look: str = ""  # what its face shows, not the code drawing it (`look_key`): what the change report compares
    text: str = ""
    fields: dict[str, Any] = Field(default_factory=dict)
    boxes: list[GuideBox] = Field(default_factory=list)

    def indented_json(self) -> bytes:
        """The card's JSON as build.json holds it, indented to its place in the record's list of cards."""
        return self.__pydantic_serializer__.to_json(self, indent=2).replace(b"\n", b"\n    ")

    def json_digest(self) -> bytes:
        """The SHA-256 digest of the card's JSON in build.json (`indented_json`)."""
        return hashlib.sha256(kept_piece(self, "json", self.indented_json)).digest()


class Stats(Entry):
    """Counts of a build: distinct cards, cards with copies, images drawn and taken from the cache."""

    cards: int
    copies: int
    rendered: int = 0
    cached: int = 0


class BuildRecord(Entry):
    """Everything a build made, as written to build.json."""

    cardgen: str
    built_at: str
    game: GameEntry
    decks: dict[str, DeckEntry]
    backs: dict[str, BackEntry] = Field(default_factory=dict)
    stats: Stats
    cards: Annotated[list[CardEntry], Field(fail_fast=True)]  # one wrong card is enough: not 7 million errors
    fingerprint: str | None = None
    settings: str | None = None
    sources: dict[str, list[int | str]] = Field(default_factory=dict)  # (`freshness.source_stamp`)
    warnings: list[Problem] = Field(default_factory=list)  # the build's findings (errors too, when forced)

    @model_validator(mode="after")
    def _backs_listed(self) -> BuildRecord:
        """Every card's back is one of the record's backs, so that its hash is known."""
        listed: set[str | None] = {None, *(back.image for back in self.backs.values())}  # (None: a card with no back)
        if listed.issuperset(map(_BACK, self.cards)):  # (a C loop: a Python step a card was ~1 ms at 10,000 cards)
            return self
        for index, card in enumerate(self.cards):
            if card.back not in listed:
                raise ValueError(f"cards.{index}.back: '{card.back}' is not one of the record's backs")
        return self

    def cards_of(self, deck: str) -> list[CardEntry]:
        """The cards of one deck, in data order."""
        return [card for card in self.cards if card.deck == deck]

    def image_hash(self, image: str | None) -> str | None:
        """The content hash the build recorded for a face or back image path (None for no image)."""
        if image is None:
            return None
        for card in self.cards:
            if card.face == image:
                return card.hash
        return next((back.hash for back in self.backs.values() if back.image == image), None)

    def image_hashes(self) -> dict[str, str]:
        """Content hash of every face and back image, by its path relative to the build folder; in a process that
        builds again, the faces' the last call's with the changed cards' put in (`face_values`: a look-up a card was
        ~0.9 us, ~9 ms an edit at 10,000 cards)."""
        return {**{back.image: back.hash for back in self.backs.values()},
                **face_values(("image-hashes", self.game.name), self.cards, None, _HASH)}

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON data."""
        return self.model_dump(mode="json")

    def save(self, out_dir: Path, previous: Path | None = None, out_root: Path | None = None) -> None:
        """Write `<out_dir>/build.json` atomically, and its stamps for the no-change check (freshness.py); in a
        process that builds again, the unchanged cards' JSON copied from the `previous` build.json where this
        process wrote it, or patched into a copy of it made ahead in `out_root` (`storage.write_spliced`)."""
        write_spliced(out_dir / BUILD_RECORD, self.json_parts(), previous, out_root)
        seal_record(out_dir / BUILD_RECORD, self.model_dump(mode="json", include={"settings", "sources", "stats",
                                                                                "warnings"}))
        _remember(out_dir / BUILD_RECORD, self)

    def json_parts(self, exclude: set[str] | None = None) -> Iterator[bytes | Run]:
        """build.json's bytes in pieces of a card each: a 10,000-card record is ~35 MB, written as it is made at
        the end of the build, when its memory is at its peak, never held whole (~4 KB a card held at once);
        with `exclude`, without those keys of the record.

        pydantic's own JSON writer: the same text as json.dumps(indent=2), which is pure Python with an indent
        (0.3-0.9 s for a record of 1,000 cards, on every edit). The record without its cards, then each card's
        JSON indented to its place (a JSON text holds no line break but those of its indent): in a long-running
        process, each unchanged card's as the last build made it (`kept_piece`), and each block of RUN_ITEMS
        unchanged cards one `Run`, the last build's (`storage.KeptRuns`: spliced as one part)."""
        yield from self._parts(exclude, False)

    def digest_parts(self, exclude: set[str] | None = None) -> Iterator[bytes]:
        """`json_parts` with each card's JSON as its SHA-256 digest, made once too: what `build_fingerprint`
        hashes (not the 39 MB of 10,000 cards at each edit), in pieces of a block of cards each."""
        for part in self._parts(exclude, True):
            assert isinstance(part, bytes)  # (a block's digests joined)
            yield part

    def _parts(self, exclude: set[str] | None, digests: bool) -> Iterator[bytes | Run]:
        """The pieces of `json_parts` (`digest_parts` with `digests`)."""
        to_json = self.__pydantic_serializer__.to_json
        around = to_json(self.model_copy(update={"cards": []}), indent=2, exclude=exclude)
        empty = b'\n  "cards": []'  # at the record's top level: any other key is indented further
        if not self.cards or around.count(empty) != 1:
            yield to_json(self, indent=2, exclude=exclude)
            return
        head, _, tail = around.partition(empty)
        opening = head + b'\n  "cards": ['  # (padded, as a run of cards: its counts change, `storage.padding`)
        yield opening if digests else Run((opening,), JSON_PAD)
        runs, cards = KeptRuns(("record", self.game.name, digests), JSON_PAD), self.cards
        for start, block in blocks(cards):
            make = functools.partial(_card_parts, block, start, digests)
            yield runs.joined(start == 0, block, make) if digests else runs.run(start == 0, block, make)
        runs.keep()
        yield b"\n  ]" + tail

    @classmethod
    def parse(cls, data: Any, shown_as: str) -> BuildRecord:
        """A record from JSON data; a CardgenError naming the first unreadable key when it is not one."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise _unreadable(exc, shown_as) from None

    @classmethod
    def read(cls, path: Path) -> BuildRecord:
        """Read a record file; a CardgenError when it is missing, too large, not JSON or not a record."""
        try:
            size = path.stat().st_size
            if size > MAX_RECORD_BYTES:  # measured before it is read: JSON held as Python takes ~10x its size
                raise CardgenError(f"the file is {size / 1e6:,.0f} MB, more than the {MAX_RECORD_BYTES / 1e6:,.0f} "
                                   "MB a build record may be", file=str(path), rule="too-long")
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CardgenError(f"cannot read it: {exc.strerror or exc}", file=str(path)) from None
        except UnicodeDecodeError:
            raise CardgenError("not valid JSON (not UTF-8 text)", file=str(path)) from None
        if text.count(",") + text.count("{") + text.count("[") > MAX_RECORD_VALUES:  # (an upper bound: texts' too)
            raise CardgenError(f"the file holds more than {MAX_RECORD_VALUES:,} JSON values, more than a build record "
                               "may", file=str(path), rule="too-long")
        try:  # a record as cardgen wrote it, read by pydantic's parser (twice as fast as json.loads + validate)
            return cls.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            if first["type"] != "json_invalid":
                raise _unreadable(exc, str(path)) from None
            reason = str(first.get("ctx", {}).get("error", first["msg"]))  # "recursion limit exceeded at line 1 ..."
        try:  # not JSON: Python's parser names the line where it breaks
            json.loads(text)
        except json.JSONDecodeError as exc:
            conflict = next((n for n, line in enumerate(text.splitlines(), 1) if line.startswith("<<<<<<<")), None)
            if conflict is not None:  # a snapshot or record committed in the middle of a git merge
                raise CardgenError("the file holds git merge-conflict markers (<<<<<<<, =======, >>>>>>>); resolve "
                                   "the conflict by keeping one side", file=str(path), row=conflict) from None
            raise CardgenError(f"not valid JSON ({exc.msg}, column {exc.colno})", file=str(path),
                               row=exc.lineno) from None
        except RecursionError:
            pass
        raise CardgenError(f"not valid JSON ({reason})", file=str(path))  # JSON to Python, not to pydantic

    @classmethod
    def previous(cls, out_dir: Path) -> BuildRecord | None:
        """The record of the last finished build in a folder, or None when there is none it can trust.

        A record from an older cardgen, or one edited by hand, is not an error here: the build that
        asks simply starts afresh and writes a new one.
        """
        path = out_dir / BUILD_RECORD
        known = _remembered(path)
        if known is not None:
            return known
        try:
            record = cls.read(path)
        except CardgenError:
            return None
        _remember(path, record)
        return record

    @classmethod
    def of_build(cls, out_dir: Path) -> BuildRecord:
        """The record of a built game, for commands run after a build; a clear error when there is none."""
        path = out_dir / BUILD_RECORD
        if not path.is_file():
            raise CardgenError(f"no build found at {path}; run `cardgen build {out_dir.name}` first")
        try:
            record = cls.read(path)
        except CardgenError as exc:
            problem = exc.problems[0]
            raise CardgenError(f"{problem.message}; run `cardgen build {out_dir.name}` again to rewrite it",
                               file=problem.file, row=problem.row) from None
        if not record_intact(out_dir):  # edited by hand into another valid record: not what the build made
            raise CardgenError(f"the file changed since the build wrote it (edited by hand?); run `cardgen build "
                               f"{out_dir.name}` again to rewrite it", file=str(path))
        return record


def _card_parts(cards: Sequence[CardEntry], start: int, digests: bool) -> Iterator[bytes]:
    """The parts of build.json's cards from the card at `start` of the record on: each card's JSON (or, with
    `digests`, its digest) after its separator; an unchanged card's as the last build made it (`kept_piece`)."""
    for number, card in enumerate(cards, start):
        yield b",\n    " if number else b"\n    "
        yield kept_piece(card, "digest", card.json_digest) if digests else kept_piece(card, "json", card.indented_json)


# The records this process last wrote or read, by the identity of their file (device, inode, size, time: a rename
# keeps it, any write changes it): a watch or serve finds its last build's record here instead of parsing its
# build.json again (~85 ms at 1,000 cards, ten times that at 10,000). A few, for a watch of several games.
_KNOWN: dict[tuple[int, ...], BuildRecord] = {}
KNOWN_RECORDS = 8


def _remember(path: Path, record: BuildRecord) -> None:
    """Note the record a file holds (just written or read), forgetting the oldest beyond KNOWN_RECORDS."""
    identity = file_identity(path)
    if identity is not None:
        keep_latest(_KNOWN, identity, record, KNOWN_RECORDS)


def _remembered(path: Path) -> BuildRecord | None:
    """The record a file holds when this process wrote or read that very file (a copy: its fields may be set)."""
    identity = file_identity(path)
    record = _KNOWN.get(identity) if identity is not None else None
    return record.model_copy() if record is not None else None


def _unreadable(exc: ValidationError, shown_as: str) -> CardgenError:
    """The error for data that is not a record: its first unreadable key and what is wrong with it."""
    first = exc.errors(include_url=False)[0]
    key = ".".join(str(part) for part in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return CardgenError(f"not a build record cardgen can read ({key + ': ' if key else ''}{message})", file=shown_as)


# A process that builds again (watch, serve: `storage.builds_again`) makes each build's card entries from the last
# build's where a card is made of the same (`record_of` asks `kept_entry`), and keeps what it made of each entry (its
# JSON in build.json, its figure in the gallery) by the entry's identity: an edit writes build.json and index.html
# from these pieces, making only the changed card's. An entry is never changed once made (a changed card is a new
# entry), so a piece made of one stays true. The entries of the last build of each game, the latest KNOWN_RECORDS.
_KEPT_ENTRIES: dict[str, dict[Hashable, CardEntry]] = {}
_PIECES: dict[int, tuple[CardEntry, dict[Hashable, Any]]] = {}  # id(entry) -> the entry, its pieces by kind
PIECES_AT_MOST = 16  # of one entry: a build asks for ~5 kinds (JSON, figure, table data, Tabletop Simulator objects)


def kept_entry(game: str, key: Hashable) -> CardEntry | None:
    """The entry the last build of a game in this process made of a card made of `key` (everything the entry holds),
    if it kept one."""
    return _KEPT_ENTRIES.get(game, {}).get(key) if builds_again() else None


def keep_entries(game: str, entries: dict[Hashable, CardEntry],
                 changed: tuple[list[CardEntry], list[CardEntry]] | None = None) -> None:
    """Keep a build's card entries by what each is made of, for the next build of the game (when this process
    builds again); the pieces of entries no longer kept are forgotten. `changed`: the entries that came in and those
    that went out since the game's last entries kept, when the caller knows them (an edit's few)."""
    if not builds_again():
        return
    before = _KEPT_ENTRIES.pop(game, {})
    _KEPT_ENTRIES[game] = entries
    if changed is not None and before and len(_KEPT_ENTRIES) <= KNOWN_RECORDS:
        _keep_changed(entries, *changed)
        return
    while len(_KEPT_ENTRIES) > KNOWN_RECORDS:
        before = {**before, **_KEPT_ENTRIES.pop(next(iter(_KEPT_ENTRIES)))}
    # by C loops over the entries' ids (map, set operations): a Python loop an entry was ~10 ms at 10,000 cards
    ids = dict(zip(map(id, entries.values()), entries.values()))
    _PIECES.update((new, (ids[new], {})) for new in ids.keys() - _PIECES.keys())
    kept = set(map(id, itertools.chain.from_iterable(map(dict.values, _KEPT_ENTRIES.values()))))
    for gone in set(map(id, before.values())) - kept:
        _PIECES.pop(gone, None)


def face_values(kind: Hashable, cards: Sequence[CardEntry], basis: Hashable, value: Callable[[CardEntry], T | None]
                ) -> dict[str, T]:
    """Each card's `value` (what it reads beside the card: `basis`) by its face's path, of the cards whose value is
    not None (of two cards with one face, the later's); in a process that builds again, the last call's of this kind
    with the changed cards' put in (`storage.derived`), while each face is one card's and stays that card's. Not to
    be changed: the caller's copy."""
    def whole() -> tuple[dict[str, T], bool]:
        values = {card.face: made for card in cards if (made := value(card)) is not None}
        return values, len(set(map(_FACE, cards))) == len(cards)

    def patched(made: tuple[dict[str, T], bool], last: list[CardEntry], places: list[int] | None
                ) -> tuple[dict[str, T], bool] | None:
        values, unique = made
        if places is None or not unique or any(cards[place].face != last[place].face for place in places):
            return None
        values = dict(values) if places else values
        for card in map(cards.__getitem__, places):
            if (new := value(card)) is None:
                values.pop(card.face, None)
            else:
                values[card.face] = new
        return values, True

    return derived(kind, cards, basis, whole, patched)[0]


def _keep_changed(entries: dict[Hashable, CardEntry], added: list[CardEntry], gone: list[CardEntry]) -> None:
    """`keep_entries` of a game's entries that replace its last ones but for the `added` and `gone`: only those are
    added to or dropped from `_PIECES`, not every entry's id listed (~4 ms an edit at 10,000 cards)."""
    _PIECES.update((id(entry), (entry, {})) for entry in added if id(entry) not in _PIECES)
    dropped = set(map(id, gone)) - set(map(id, added))
    for other in _KEPT_ENTRIES.values():  # (another game's entries, when this process builds several)
        if dropped and other is not entries:
            dropped -= set(map(id, other.values()))
    for gone_id in dropped:
        _PIECES.pop(gone_id, None)


def cards_by_deck(cards: Sequence[CardEntry], kind: Hashable = None) -> dict[str, list[CardEntry]]:
    """The cards of each deck that has some, in data order, the decks in the order of their first cards (one C loop
    over the cards, `itertools.groupby`: ~0.6 ms at 10,000 cards, where a loop appending each took ~2 ms); with a
    `kind` (a game's name, say), in a process that builds again, the last call's lists with the changed cards put in
    at their places (`storage.derived`), while each stays in its deck."""
    Runs = tuple[list[int], list[tuple[str, int]]]  # each run of one deck's cards: its first place; its deck and
    # the place of its first card in the deck

    def whole() -> tuple[dict[str, list[CardEntry]], Runs]:
        grouped: dict[str, list[CardEntry]] = {}
        starts, runs, start = [], [], 0
        for deck, run in itertools.groupby(cards, key=_DECK):
            cards_of = grouped.setdefault(deck, [])
            starts.append(start)
            runs.append((deck, len(cards_of)))
            cards_of.extend(run)
            start += len(cards_of) - runs[-1][1]
        return grouped, (starts, runs)

    def patched(made: tuple[dict[str, list[CardEntry]], Runs], last: list[CardEntry], places: list[int] | None
                ) -> tuple[dict[str, list[CardEntry]], Runs] | None:
        grouped, (starts, runs) = made
        if places is None or any(cards[place].deck != last[place].deck for place in places):
            return None
        grouped = {deck: list(cards_of) for deck, cards_of in grouped.items()} if places else grouped
        for place in places:
            at = bisect.bisect_right(starts, place) - 1
            deck, first = runs[at]
            grouped[deck][first + place - starts[at]] = cards[place]
        return grouped, (starts, runs)

    made = whole() if kind is None else derived(("by-deck", kind), cards, None, whole, patched)
    return {deck: list(cards_of) for deck, cards_of in made[0].items()}  # (the caller's: the lists copied)


_DECK = operator.attrgetter("deck")
_FACE = operator.attrgetter("face")
_HASH = operator.attrgetter("hash")
_BACK = operator.attrgetter("back")


def kept_piece(entry: CardEntry, kind: Hashable, make: Callable[[], T]) -> T:
    """What `make` makes of a card entry: made once for a kept entry (see `keep_entries`), else made now."""
    kept = _PIECES.get(id(entry))
    if kept is None or kept[0] is not entry:
        return make()
    pieces = kept[1]
    if kind not in pieces:
        if len(pieces) >= PIECES_AT_MOST:  # kinds no longer asked for (a sheet of the card's deck changed)
            pieces.clear()
        pieces[kind] = make()
    return pieces[kind]
