"""The saved object's JSON beyond its layout: the fields every object has, card text as Tabletop Simulator rich text,
the tags and hashes a push into a running game finds the objects by, and the file written as Tabletop Simulator
writes one."""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

from cardgen.core.storage import JSON_PAD, KeptRuns, Run, blocks, builds_again, derived, kept_blocks, write_spliced
from cardgen.load.markup import parse

if TYPE_CHECKING:
    pass

T = TypeVar("T")


# In a process that builds again, an unchanged card's object in a deck is the last build's (`decks.card_deck`): its
# JSON texts (as written, as its Memo hashes it) are kept by its identity, holding the object so that no other takes
# its id meanwhile; those of the last export's use only, by (identity, kind of text), one dict a kind's first part
# ("memo", "json"): an export replaces its kind's dict whole (`keep_texts`), not ~10,000 entries taken out of one dict
# of every kind and ~10,000 put back (~1-2 ms of an edit at 10,000 cards).
_TEXTS: dict[str, dict[tuple[int, tuple], tuple[dict, Any]]] = {}


def kept_text(obj: dict, kind: tuple, make: Callable[[], T], used: dict[tuple[int, tuple], tuple[dict, Any]]) -> T:
    """A text made of an object: made once for an object the last export made it of too, noted in `used` (the texts
    to keep: see `keep_texts`). An object is not changed once written (only its tags are set again, the same)."""
    key = (id(obj), kind)
    kept = _TEXTS.get(kind[0], _NO_TEXTS).get(key)
    if kept is None or kept[0] is not obj:
        kept = (obj, make())
    used[key] = kept
    return kept[1]


_NO_TEXTS: dict[tuple[int, tuple], tuple[dict, Any]] = {}  # (none kept of a kind: never written to)


def keep_texts(kind: str, used: dict[tuple[int, tuple], tuple[dict, Any]]) -> None:
    """Keep the texts of a kind (its first part) made or used now for the next export, in a process that builds
    again: `used`, which holds that kind's only and is not changed after."""
    _TEXTS.pop(kind, None)
    if builds_again():
        _TEXTS[kind] = used


def write_saved_object(path: Path, saved: dict, previous: Path | None = None, out_root: Path | None = None) -> None:
    """Write the saved object as `json.dumps(indent=2, ensure_ascii=False)` writes it, with pydantic's JSON writer:
    an indent makes the json module use its pure-Python encoder (0.14 s at 1,000 cards, against 0.02 s). The one
    difference, numbers under 1e-4 written without an exponent (the same value), does not arise in a saved object:
    its numbers are positions, scales and proportions of objects on a table, rounded to 3 to 6 places.

    Written an object at a time (`json_parts`): the text of a 10,000-card game (~20 MB) is never held whole, at the
    end of the build when its memory is at its peak; in a process that builds again, the objects the last export
    wrote copied from the `previous` file where this process wrote it, or patched into a copy of it made ahead in
    `out_root` (`storage.write_spliced`)."""
    used: dict[tuple[int, tuple], tuple[dict, Any]] = {}
    runs = KeptRuns(("tts", path.name), JSON_PAD)
    write_spliced(path, json_parts(saved, used=used, runs=runs), previous, out_root)
    keep_texts("json", used)
    runs.keep()


_MANY = 8  # a list of more items than this is written an item at a time


def json_parts(value: Any, depth: int = 0, used: dict[tuple[int, tuple], tuple[dict, Any]] | None = None,
               runs: KeptRuns | None = None) -> Iterator[bytes | Run]:
    """`pydantic_core.to_json(value, indent=2)` in pieces: the lists of many items (a deck's cards) an item at a time,
    each item written whole (an object the last export wrote, as it wrote it: see `kept_text`, with `used`), and the
    objects holding such lists key by key; with `runs`, such a list's items in runs of RUN_ITEMS, each the last
    write's for the same items (`storage.KeptRuns`: a deck's unchanged cards are the same objects)."""
    import pydantic_core

    if used is not None and isinstance(value, dict):  # an object the last export wrote whole: not looked into
        kept = _TEXTS.get("json", _NO_TEXTS).get((id(value), ("json", depth)))
        if kept is not None and kept[0] is value:
            used[(id(value), ("json", depth))] = kept
            yield kept[1]
            return
    if not _holds_many(value):
        def text() -> bytes:
            return pydantic_core.to_json(value, indent=2).replace(b"\n", b"\n" + b"  " * depth)

        yield kept_text(value, ("json", depth), text, used) if used is not None and isinstance(value, dict) else text()
        return
    yield b"{" if isinstance(value, dict) else b"["
    if runs is not None and isinstance(value, list):
        for start, block in blocks(value):
            yield runs.run((depth, start == 0), block, functools.partial(_items, block, start, depth, used, runs),
                           functools.partial(_whole, block))
    else:
        yield from _items(value, 0, depth, used, runs)
    yield b"\n" + b"  " * depth + (b"}" if isinstance(value, dict) else b"]")


def _items(value: Sequence[Any] | dict, start: int, depth: int, used: dict[tuple[int, tuple], tuple[dict, Any]] | None,
           runs: KeptRuns | None) -> Iterator[bytes | Run]:
    """The pieces of a list's items (from the one at `start` of the list on) or an object's keys and values."""
    import pydantic_core

    inner = b"\n" + b"  " * (depth + 1)
    labelled = ((pydantic_core.to_json(key) + b": ", item) for key, item in value.items()) \
        if isinstance(value, dict) else ((b"", item) for item in value)
    for number, (label, item) in enumerate(labelled, start):
        yield (b"," if number else b"") + inner + label
        yield from json_parts(item, depth + 1, used, runs)


def _whole(items: Sequence[Any], run: Run) -> bool:
    """Whether a run of a list's items is theirs by what they are: each written whole (a separator and a text, not
    looked into) and none a list (an object, like `kept_text`'s, is not changed once written; a list may be)."""
    return len(run.parts) == 2 * len(items) and not any(isinstance(item, list) for item in items)


def _holds_many(value: Any) -> bool:
    """Whether a value is, or holds, a list of many items (and every key of its objects is text, as JSON's). Asked
    of every object an edit makes (a sheet's 70 cards, a deck's CustomDeck of ~150 sheets): the keys by a C loop, and
    only the lists and objects in it looked into, not a call for each number and text (~3x faster)."""
    if isinstance(value, list):
        if len(value) > _MANY:
            return True
        inner = [item for item in value if isinstance(item, _CONTAINERS)]
    elif isinstance(value, dict):
        if not all(map(isinstance, value, itertools.repeat(str))):
            return False
        inner = [item for item in value.values() if isinstance(item, _CONTAINERS)]
    else:
        return False
    for item in inner:
        if _holds_many(item):
            return True
    return False


_CONTAINERS = (list, dict)



def transform(x: float, z: float, y: float = 1.0, face_down: bool = False, scale: float = 1.0) -> dict:
    """Where an object lies on the table: its centre at x, z (y up), face up or down, at a scale."""
    return {"posX": round(x, 3), "posY": y, "posZ": round(z, 3), "rotX": 0, "rotY": 180,
            "rotZ": 180 if face_down else 0, "scaleX": round(scale, 4), "scaleY": 1, "scaleZ": round(scale, 4)}


def base_object(name: str, guid: str, nickname: str, description: str, where: dict, **extra: object) -> dict:
    """The fields every saved object has; `where` is its `transform`."""
    return {"Name": name, "Transform": where, "Nickname": nickname, "Description": description,
            "GMNotes": "", "ColorDiffuse": {"r": 0.713, "g": 0.713, "b": 0.713}, "Locked": False, "Grid": True,
            "Snap": True, "IgnoreFoW": False, "Autoraise": True, "Sticky": True, "Tooltip": True,
            "GridProjection": False, "HideWhenFaceDown": False, "Hands": False, **extra,
            "LuaScript": "", "LuaScriptState": "", "XmlUI": "", "GUID": guid}


# Names Tabletop Simulator would read as a rich-text tag if an icon were written as `[name]`.
_TTS_TAG = re.compile(r"[biusc]|sub|sup|[0-9a-f]{6}|[0-9a-f]{8}|-", re.IGNORECASE)


def tts_icon(name: str) -> str:
    """An inline icon as a readable word: its name as written, in brackets (`:power_up:` -> `[power up]`)."""
    word = re.sub(r"[_-]+", " ", name).strip()
    return f"[{word} ]" if _TTS_TAG.fullmatch(word) else f"[{word}]"


# A rebuild (a running watch's) writes every card's text again, most of it unchanged: each parsed once per process.
@functools.lru_cache(maxsize=1 << 14)
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


def game_tag(game: str) -> str:
    """The tag every object of a game's export carries on the table (`cardgen tts --push` finds them by it)."""
    return f"cardgen:{game}"


# How many contained objects' Memo texts one digest in their object's Memo hashes (`mark_for_push`): a part of what a
# Memo is (a push compares it with the one on the table), so not `storage.RUN_ITEMS`, which only tunes the splicing.
MEMO_BLOCK = 64


def mark_for_push(objects: list[dict], game: str) -> None:
    """Tag the objects so that a push into a running game finds them (`commands/tts_push.py`), and note in each
    object's `Memo` a hash of what it is, but where it lies, so that a push replaces only objects that changed: the
    SHA-256 of its Memo text (`_memo_text`) with the text of each block of MEMO_BLOCK objects it contains replaced by
    that text's own SHA-256 digest, so that an edit hashes again only its card's block (a 10,000-card deck's text is
    ~12 MB: ~12 ms an edit hashed whole), in a process that builds again the last export's for the same objects.

    Every object and everything in it carries the game's tag; an object laid on the table also carries its place's
    own tag, `cardgen:<game>:<GUID>` (GUIDs are derived from the deck and card names, so a rebuild keeps them). A
    card dealt from a deck has the game's tag only, which is how a push tells it from the decks. The hash leaves
    out every `Transform`: a deck that moves over for a new one is the same deck.
    """
    tag = game_tag(game)
    used: dict[tuple[int, tuple], tuple[dict, Any]] = {}
    for obj in objects:
        obj["Tags"] = [tag, f"{tag}:{obj['GUID']}"]
        digest = hashlib.sha256()
        for piece in _memo_pieces(obj, used, tag):
            digest.update(piece)
        obj["Memo"] = digest.hexdigest()[:16]
    keep_texts("memo", used)


def _memo_text(obj: dict, used: dict[tuple[int, tuple], tuple[dict, Any]]) -> str:
    """What an object's Memo hashes: the JSON of the object without its places (`_placeless`), keys sorted, the
    `file:///` folders taken out (see `_memo_pieces`)."""
    return b"".join(_memo_pieces(obj, used)).decode()


def _memo_pieces(obj: dict, used: dict[tuple[int, tuple], tuple[dict, Any]], tag: str | None = None
                 ) -> Iterator[bytes]:
    """`_memo_text` as UTF-8, in pieces. The text of each object it contains is `kept_text`'s, put in the place of
    the list in the object's own text (json.dumps writes a list as its items' texts joined by ", "), and so is the
    text of each list of many integers it holds (a deck's DeckIDs, `_numbers_text`: ~100 KB of a 10,000-card deck's
    ~140 KB, not written and scanned for `file:///` folders whole at every edit). With the game's `tag`
    (`mark_for_push`), each block of MEMO_BLOCK contained objects is tagged and its texts replaced by their digest
    (`_contained_digests`)."""
    contained: list[dict] = obj.get("ContainedObjects") or []
    if not contained:
        yield _FOLDER_OF_FILE.sub('"', json.dumps(_placeless(obj), sort_keys=True)).encode()
        return
    outer = {k: v for k, v in obj.items() if k not in ("Transform", "Memo")}
    numbers: dict[str, bytes] = {key: made for key, value in outer.items() if isinstance(value, list)
                                 and len(value) > _MANY and (made := _numbers_text(value, (obj.get("GUID"), key)))
                                 is not None}
    outer.update({key: _NUMBERS.format(key) for key in numbers})
    outer["ContainedObjects"] = _CONTAINED
    text = _FOLDER_OF_FILE.sub('"', json.dumps(outer, sort_keys=True))
    places: dict[str, str | None] = {json.dumps(_NUMBERS.format(key)): key for key in numbers}
    places[json.dumps(_CONTAINED)] = None  # (the contained objects' place)
    found = sorted((text.find(mark), mark) for mark in places)
    if any(at < 0 or text.count(mark) != 1 for at, mark in found):  # (a mark in a text of its own)
        yield _FOLDER_OF_FILE.sub('"', json.dumps(_placeless(obj), sort_keys=True)).encode()
        return
    done = 0
    for at, mark in found:
        yield text[done:at].encode()
        done = at + len(mark)
        key = places[mark]
        if key is not None:
            yield numbers[key]
        else:
            parts = _contained_digests(contained, used, tag, obj.get("GUID")) if tag is not None else [
                _contained_texts(contained[start:start + MEMO_BLOCK], used) for start in
                range(0, len(contained), MEMO_BLOCK)]
            yield b"[" + b", ".join(parts) + b"]"
    yield text[done:].encode()


def _contained_digests(contained: list[dict], used: dict[tuple[int, tuple], tuple[dict, Any]], tag: str,
                       guid: object) -> list[bytes]:
    """The SHA-256 digest of each block of MEMO_BLOCK contained objects' Memo texts joined, the block's objects
    tagged with the game's tag first; in a process that builds again, the last export's for the blocks of the same
    objects (`storage.derived`: one C loop over the deck's objects, not a look-up by each block's 64 ids), whose
    objects it tagged then (every block made again when objects were added or removed)."""
    def digest(start: int) -> bytes:
        block = contained[start:start + MEMO_BLOCK]
        for inner in block:
            inner["Tags"] = [tag]
        return hashlib.sha256(_contained_texts(block, used)).digest()

    def patched(made: list[bytes], last: list[dict], places: list[int] | None) -> list[bytes] | None:
        redo = {place // MEMO_BLOCK for place in places} if places is not None else None
        return None if redo is None else [digest(number * MEMO_BLOCK) if number in redo else done
                                          for number, done in enumerate(made)]

    return derived(("memo", tag, guid), contained, MEMO_BLOCK,
                   lambda: list(map(digest, range(0, len(contained), MEMO_BLOCK))), patched)


_NUMBERS = "\u2063cardgen: the numbers of {}\u2063"  # (in the place of a list of integers: see `_memo_pieces`)


def _numbers_text(values: list, kind: tuple) -> bytes | None:
    """A list of integers as json.dumps writes it, made by blocks (in a process that builds again, each the last
    call's of this `kind` for the same int objects, `storage.kept_blocks`: a deck's unchanged sheets hold the same
    ones); None when one is not exactly an int (json.dumps writes a bool, an int too, its own way)."""
    parts = kept_blocks(("memo-numbers", *kind), values, None, _integers)
    return None if None in parts else b"[" + b", ".join(parts) + b"]"  # type: ignore[arg-type]


def _integers(start: int, values: Sequence[object]) -> bytes | None:
    """A block of integers joined as json.dumps joins a list's items (an int written as `int.__repr__` writes it),
    or None when one is not exactly an int."""
    if set(map(type, values)) != {int}:
        return None
    return ", ".join(map(int.__repr__, values)).encode()


def _contained_texts(objects: Sequence[dict], used: dict[tuple[int, tuple], tuple[dict, Any]]) -> bytes:
    """The Memo texts of contained objects, joined as json.dumps joins a list's items."""
    return ", ".join(kept_text(inner, ("memo",), functools.partial(_memo_text, inner, used), used)
                     for inner in objects).encode()


_CONTAINED = "\u2063cardgen: the contained objects\u2063"  # (an invisible separator: no name or text holds it)


# In an object's JSON: a `file:///` address up to its file name (the name holds the image's hash; the folder is where
# the export was written, which changes nothing on the table).
# (Its runs of plain characters matched a run at a time, each escape after one, and the last run given back to its
# last `/`: the same matches as `(?:[^"\\]|\\.)*/`, which tried each character as an alternation, ~10x faster on a
# 10,000-card deck's `CustomDeck`, ~1.2 ms of an edit's Memo.)
_FOLDER_OF_FILE = re.compile(r'"file://(?:[^"\\]*\\.)*[^"\\]*/')


def _placeless(obj: dict) -> dict:
    """A saved object without its `Transform`s (its own and its contained objects', which copy it: `base_object`
    gives every object one) and its `Memo`. A copy of the objects only: their values are shared (copying every
    value of a 1,000-card deck was ~75% of writing the export on an edit)."""
    placeless = {k: v for k, v in obj.items() if k not in ("Transform", "Memo")}
    if "ContainedObjects" in obj:
        placeless["ContainedObjects"] = [_placeless(inner) for inner in obj["ContainedObjects"]]
    return placeless
