"""The saved object's JSON beyond its layout: the fields every object has, card text as Tabletop Simulator rich text,
the tags and hashes a push into a running game finds the objects by, and the file written as Tabletop Simulator
writes one."""
from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from cardgen.core.storage import write_atomic
from cardgen.load.markup import parse

if TYPE_CHECKING:
    pass


def write_saved_object(path: Path, saved: dict) -> None:
    """Write the saved object as `json.dumps(indent=2, ensure_ascii=False)` writes it, with pydantic's JSON writer:
    an indent makes the json module use its pure-Python encoder (0.14 s at 1,000 cards, against 0.02 s). The one
    difference, numbers under 1e-4 written without an exponent (the same value), does not arise in a saved object:
    its numbers are positions, scales and proportions of objects on a table, rounded to 3 to 6 places.

    Written an object at a time (`json_parts`): the text of a 10,000-card game (~20 MB) is never held whole, at the
    end of the build when its memory is at its peak."""
    def write(temp: Path) -> None:
        with open(temp, "wb") as handle:
            for part in json_parts(saved):
                handle.write(part)

    write_atomic(path, write)


_MANY = 8  # a list of more items than this is written an item at a time


def json_parts(value: Any, depth: int = 0) -> Iterator[bytes]:
    """`pydantic_core.to_json(value, indent=2)` in pieces: the lists of many items (a deck's cards) an item at a time,
    each item written whole, and the objects holding such lists key by key."""
    import pydantic_core

    if not _holds_many(value):
        yield pydantic_core.to_json(value, indent=2).replace(b"\n", b"\n" + b"  " * depth)
        return
    inner = b"\n" + b"  " * (depth + 1)
    items = value.items() if isinstance(value, dict) else enumerate(value)
    yield b"{" if isinstance(value, dict) else b"["
    for number, (key, item) in enumerate(items):
        label = pydantic_core.to_json(key) + b": " if isinstance(value, dict) else b""
        yield (b"," if number else b"") + inner + label
        yield from json_parts(item, depth + 1)
    yield b"\n" + b"  " * depth + (b"}" if isinstance(value, dict) else b"]")


def _holds_many(value: Any) -> bool:
    """Whether a value is, or holds, a list of many items (and every key of its objects is text, as JSON's)."""
    if isinstance(value, list):
        return len(value) > _MANY or any(_holds_many(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) for key in value) and any(_holds_many(item) for item in value.values())
    return False



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


def mark_for_push(objects: list[dict], game: str) -> None:
    """Tag the objects so that a push into a running game finds them (`commands/tts_push.py`), and note in each
    object's `Memo` a hash of what it is, but where it lies, so that a push replaces only objects that changed.

    Every object and everything in it carries the game's tag; an object laid on the table also carries its place's
    own tag, `cardgen:<game>:<GUID>` (GUIDs are derived from the deck and card names, so a rebuild keeps them). A
    card dealt from a deck has the game's tag only, which is how a push tells it from the decks. The hash leaves
    out every `Transform`: a deck that moves over for a new one is the same deck.
    """
    tag = game_tag(game)
    for obj in objects:
        for inner in obj.get("ContainedObjects", []):
            inner["Tags"] = [tag]
        obj["Tags"] = [tag, f"{tag}:{obj['GUID']}"]
        text = _FOLDER_OF_FILE.sub('"', json.dumps(_placeless(obj), sort_keys=True))
        obj["Memo"] = hashlib.sha256(text.encode()).hexdigest()[:16]


# In an object's JSON: a `file:///` address up to its file name (the name holds the image's hash; the folder is where
# the export was written, which changes nothing on the table).
_FOLDER_OF_FILE = re.compile(r'"file://(?:[^"\\]|\\.)*/')


def _placeless(obj: dict) -> dict:
    """A saved object without its `Transform`s (its own and its contained objects', which copy it: `base_object`
    gives every object one) and its `Memo`. A copy of the objects only: their values are shared (copying every
    value of a 1,000-card deck was ~75% of writing the export on an edit)."""
    placeless = {k: v for k, v in obj.items() if k not in ("Transform", "Memo")}
    if "ContainedObjects" in obj:
        placeless["ContainedObjects"] = [_placeless(inner) for inner in obj["ContainedObjects"]]
    return placeless
