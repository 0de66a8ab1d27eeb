"""What changed between two builds (or a build and a named snapshot): cards added, removed, changed."""
from __future__ import annotations

import itertools
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardgen.core.errors import CardgenError, relative
from cardgen.core.filenames import unsafe_reason
from cardgen.core.storage import write_json
from cardgen.record.record import BuildRecord, CardEntry

_SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass
class CardChange:
    """One changed card: which fields went from what to what, and whether its image changed."""

    id: str
    name: str
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    image_changed: bool = False


@dataclass
class Changes:
    """The difference between an older and a newer build record."""

    added: list[CardEntry] = field(default_factory=list)
    removed: list[CardEntry] = field(default_factory=list)
    changed: list[CardChange] = field(default_factory=list)
    first: bool = False  # there is no older build: nothing to compare with

    @property
    def empty(self) -> bool:
        """True when nothing differs."""
        return not (self.added or self.removed or self.changed)

    def card_ids(self) -> set[str]:
        """Ids of the cards to reprint: added or changed ones."""
        return {c.id for c in self.added} | {c.id for c in self.changed}


def _card_fields(card: CardEntry) -> dict[str, Any]:
    return {**card.fields, "copies": card.copies}


def _image_changed(old: CardEntry, new: CardEntry) -> bool:
    """Whether a card's face shows something else: compared by what it shows, which a new cardgen drawing the same
    card leaves alone (its `hash`, the cache key, holds the code); by the hash when a record is older than `look`."""
    if old.look and new.look:
        return old.look != new.look
    return old.hash != new.hash


def diff_records(old: BuildRecord, new: BuildRecord) -> Changes:
    """Compare two build records card by card (by id)."""
    # By C loops (map, zip, compress): after an edit most entries are the same objects (`record.kept_entry`), and a
    # Python loop an entry was ~8 ms at 10,000 cards
    if len(old.cards) == len(new.cards):  # (most edits: the same cards in the same places, a few entries new)
        places = list(itertools.compress(itertools.count(), map(operator.is_not, old.cards, new.cards)))
        if all(old.cards[place].id == new.cards[place].id for place in places):
            return Changes(changed=_changed([(old.cards[place], new.cards[place]) for place in places]))
    by_id = operator.attrgetter("id")
    before = dict(zip(map(by_id, old.cards), old.cards))
    after = dict(zip(map(by_id, new.cards), new.cards))
    differ = itertools.compress(after, map(operator.is_not, after.values(), map(before.get, after)))
    return Changes(added=[] if after.keys() <= before.keys() else [after[i] for i in after if i not in before],
                   removed=[] if before.keys() <= after.keys() else [before[i] for i in before if i not in after],
                   changed=_changed([(before[i], after[i]) for i in differ if i in before]))


def _changed(pairs: list[tuple[CardEntry, CardEntry]]) -> list[CardChange]:
    """How each card's entry changed, of the (before, after) entries of one card given: its fields and image."""
    changed = []
    for was_entry, now_entry in pairs:
        was, now = _card_fields(was_entry), _card_fields(now_entry)
        fields = {k: (was.get(k), now.get(k)) for k in sorted(set(was) | set(now)) if was.get(k) != now.get(k)}
        image = _image_changed(was_entry, now_entry)
        if fields or image:
            changed.append(CardChange(now_entry.id, now_entry.name, fields, image))
    return changed


def describe(changes: Changes) -> list[str]:
    """Short human lines: `+ added`, `- removed`, `~ changed: field old -> new`."""
    if changes.empty:
        return ["no card changed"]
    lines = [f"+ {c.id} ({c.name}) added" for c in changes.added]
    lines += [f"- {c.id} ({c.name}) removed" for c in changes.removed]
    for change in changes.changed:
        parts = [field_change(k, a, b) for k, (a, b) in change.fields.items()]
        if change.image_changed and not parts:
            parts = ["image changed (template, icon, font or art)"]
        lines.append(f"~ {change.id}: " + "; ".join(parts))
    return lines


def field_change(name: str, old: Any, new: Any) -> str:
    """`health 10 -> 20`; a value that only changed type (a column given a type under fields:) says so."""
    if _show(old) == _show(new):
        return f"{name} {_show(new)} (now read as {_kind(new)}, was {_kind(old)})"
    return f"{name} {_show(old)} -> {_show(new)}"


def _kind(value: Any) -> str:
    return {bool: "yes/no", int: "a whole number", float: "a number", str: "text", list: "a list"}.get(
        type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = "(empty)" if value in (None, "") else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def snapshot_path(root: Path, game: str, name: str, lang: str | None = None) -> Path:
    """Where a named snapshot of a game is kept: data/<game>/snapshots/<name>.json (commit it); one of its build in
    another language in data/<game>/snapshots/<lang>/, apart (its cards' names and text are that language's)."""
    unsafe = unsafe_reason(name)  # `con`, `v1.`: con.json and v1..json are no file names on Windows
    if not _SNAPSHOT_NAME.match(name) or unsafe:
        raise CardgenError(f"snapshot name '{name}' is not allowed{': ' + unsafe if unsafe else ''}; use letters, "
                           "digits, '.', '_' and '-'")
    folder = root / "data" / game / "snapshots"
    return (folder / lang if lang else folder) / f"{name}.json"


def load_snapshot(root: Path, game: str, name: str, lang: str | None = None) -> BuildRecord:
    """Read a named snapshot (of the build in `lang`); a clear error lists the existing ones when it is missing
    or unreadable."""
    path = snapshot_path(root, game, name, lang)
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.json")) if path.parent.is_dir() else []
        where = f" in {lang}" if lang else ""
        make = f"`cardgen snapshot {game} NAME{' --lang ' + lang if lang else ''}`"
        raise CardgenError(f"no snapshot '{name}' of {game}{where}"
                           + (f"; snapshots{where}: {', '.join(known)}" if known else f"; make one with {make}"))
    try:
        return BuildRecord.read(path)
    except CardgenError as exc:
        problem = exc.problems[0]
        raise CardgenError(f"{problem.message}; or make the snapshot again with `cardgen snapshot {game} {name} "
                           "--force`", file=relative(path, root), row=problem.row) from None


def save_snapshot(record: BuildRecord, root: Path, game: str, name: str, replace: bool = False,
                  lang: str | None = None) -> Path:
    """Keep a build record as a named snapshot of a game (of its build in `lang`); an error when that name exists
    (unless `replace`)."""
    path = snapshot_path(root, game, name, lang)
    if path.exists() and not replace:
        raise CardgenError(f"snapshot '{name}' of {game} exists already ({path}); use --force to replace it")
    write_json(path, record.to_json())
    return path
