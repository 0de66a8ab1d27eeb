"""`cardgen init`: a new game (manifest, example cards, face and back templates, README) in a workspace.

Files come from `cardgen/assets/scaffold/`; nothing that exists is ever overwritten or written through.
"""
from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from cardgen.core.bundled import ASSETS
from cardgen.core.errors import CardgenError
from cardgen.core.filenames import unsafe_reason
from cardgen.core.units import CARD_PRESETS
from cardgen.core.yamlsource import parse_yaml
from cardgen.load.manifest import check_size, game_model

GAME_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_COMMENTED = re.compile(r"^( *[^#\s][^#\n]*?) +(# .*)$", re.MULTILINE)
COMMENT_COLUMN = 28  # where game.yaml's comments start, as in the scaffold's lines without a value filled in
SCAFFOLD_DIR = ASSETS / "scaffold"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x\s*(\d+(?:\.\d+)?)\s*(mm|cm|in)?\s*$", re.IGNORECASE)


@dataclass
class InitOptions:
    """What `cardgen init` makes: card size, paper and decks."""

    size: str = "poker"
    paper: str = "letter"
    decks: list[str] = field(default_factory=lambda: ["main"])


def size_yaml(text: str) -> str:
    """A card size given at init (`poker`, `tarot landscape`, `70x120mm`) as a manifest value."""
    words = text.lower().split()
    if words and words[0] in CARD_PRESETS and len(words) <= 2 and words[1:] in ([], ["portrait"], ["landscape"]):
        return " ".join(words)
    match = _SIZE.match(text)
    if match:
        unit = match.group(3) or "mm"
        return f"{{width: {match.group(1)}{unit}, height: {match.group(2)}{unit}}}"
    raise CardgenError(f"--size: '{text}' is not a card size; use a preset ({', '.join(CARD_PRESETS)}), "
                       f"optionally with 'landscape', or WIDTHxHEIGHT such as 63x88mm")


def check_card_size(manifest: str) -> None:
    """Refuse a new game's card size as its manifest would (the same `check_size` every build applies), so that
    `init --size` never writes a size the game's first build refuses."""
    raw, _ = parse_yaml(manifest, "game.yaml")
    spec = game_model().model_validate(raw)
    try:
        check_size(spec.size, spec)
    except ValueError as exc:
        raise CardgenError(f"--size: {exc}") from None


def deck_names(text: str) -> list[str]:
    """`--decks 3` (deck1..deck3) or `--decks heroes,monsters` as deck names."""
    if text.strip().isdigit():
        count = int(text)
        if not 1 <= count <= 20:
            raise CardgenError("--decks: give between 1 and 20 decks")
        return ["main"] if count == 1 else [f"deck{i}" for i in range(1, count + 1)]
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if not GAME_NAME.match(n)]
    if not names or bad or len(set(names)) != len(names):
        raise CardgenError(f"--decks: '{text}' should be a number or distinct names such as heroes,monsters "
                           "(lower-case letters, digits, - and _)")
    return names


def _fill(template: str, **values: str) -> str:
    return string.Template((SCAFFOLD_DIR / template).read_text(encoding="utf-8")).substitute(values)


def _aligned(manifest: str) -> str:
    """The manifest with each comment after a value at COMMENT_COLUMN (or two spaces after a longer line):
    the values filled in (a size, a deck's file, the paper) are of any length."""
    return _COMMENTED.sub(lambda m: f"{m[1]:<{COMMENT_COLUMN - 2}}  {m[2]}", manifest)


def _renamed(cards_csv: str, deck: str) -> str:
    """The example cards with the deck's title before each name (card ids must be unique in a game)."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(cards_csv)))
    for row in rows[1:]:
        row[0] = f"{deck.replace('_', ' ').title()} {row[0]}"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _data_file(deck: str, options: InitOptions) -> str:
    return "cards.csv" if len(options.decks) == 1 else f"{deck}.csv"


def game_files(name: str, options: InitOptions) -> dict[str, str]:
    """The files of a new game, by path relative to the workspace."""
    title = name.replace("-", " ").replace("_", " ").title()
    decks = "".join(_fill("deck.yaml.tmpl", deck=d, deck_title=d.replace("_", " ").title(), name=name,
                          source=_data_file(d, options)) for d in options.decks)
    rows = "".join(f"| `data/{name}/{_data_file(d, options)}` | the cards of deck {d}, one row each |\n"
                   for d in options.decks)
    cards = (SCAFFOLD_DIR / "cards.csv").read_text(encoding="utf-8")
    files = {
        f"data/{name}/game.yaml": _aligned(_fill("game.yaml.tmpl", title=title, name=name,
                                                 size=size_yaml(options.size), paper=options.paper, decks=decks)),
        f"data/{name}/README.md": _fill("README.md.tmpl", title=title, name=name, deck_rows=rows),
        f"templates/{name}/face.svg": (SCAFFOLD_DIR / "face.svg").read_text(encoding="utf-8"),
        f"templates/{name}/back.svg": (SCAFFOLD_DIR / "back.svg").read_text(encoding="utf-8"),
    }
    for i, deck in enumerate(options.decks):
        files[f"data/{name}/{_data_file(deck, options)}"] = cards if i == 0 else _renamed(cards, deck)
    return files


def create_game(root: Path, name: str, options: InitOptions) -> list[Path]:
    """Write a new game into a workspace (made when the folder has none); return the files written.

    Every file is checked before any is written (a name Windows reserves, a game that exists, a link on the
    way that leads nowhere, a folder that cannot be written): an error leaves the workspace as it was.
    """
    from cardgen.core.units import parse_paper

    for what, value in (("game", name), *(("deck", deck) for deck in options.decks)):
        if not GAME_NAME.match(value) or unsafe_reason(value):
            folder = f"data/{value}/" if what == "game" else f"cards/{value}/"
            raise CardgenError(f"'{value}' cannot be a {what} name: it becomes the folder {folder}, so use lower-case "
                               "letters, digits, - and _, and not a device name Windows reserves (con, aux, nul, "
                               "com1, lpt1, ...)")
    try:
        parse_paper(options.paper)
    except ValueError as exc:
        raise CardgenError(f"--paper: {exc}") from None
    files = game_files(name, options)
    check_card_size(files[f"data/{name}/game.yaml"])
    existing = [p for p in (root / "data" / name, root / "templates" / name) if os.path.lexists(p)]
    if existing:
        raise CardgenError(f"game '{name}' exists already ({', '.join(str(p) for p in existing)}); "
                           "nothing was written. Choose another name")
    if not (root / "data").is_dir():  # a new workspace: keep cardgen's outputs out of version control
        files[".gitignore"] = (SCAFFOLD_DIR / "gitignore").read_text(encoding="utf-8")
    # Never overwrite a designer's file (an existing .gitignore), nor write through a link where it would be.
    paths = {root / relative: text for relative, text in files.items() if not os.path.lexists(root / relative)}
    for path in paths:
        _check_writable(root, path)
    for path, text in paths.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:  # "x": fails rather than follow a link made meanwhile
            handle.write(text)
    return list(paths)


def _check_writable(root: Path, path: Path) -> None:
    """An error, before anything is written, when `path` cannot be made: a folder on its way is a link that
    leads nowhere or out of the workspace, or a file, or the nearest existing folder cannot be written."""
    for here in (root / folder for folder in reversed(path.relative_to(root).parents)):  # root, data, data/x
        if here.is_symlink() and not here.exists():
            raise CardgenError(f"{here} is a link to {os.readlink(here)}, which does not exist; nothing was "
                               "written. Remove the link or make what it points to")
        if here != root and here.exists() and not here.resolve().is_relative_to(root.resolve()):
            raise CardgenError(f"{here} is a link to {here.resolve()}, outside the workspace, whose files cardgen "
                               "does not read; nothing was written. Make it a folder of the workspace")
        if here.exists() and not here.is_dir():
            raise CardgenError(f"{here} is a file, where init would make a folder; nothing was written")
    nearest = next(p for p in (path.parent, *path.parent.parents) if p.exists())
    if not os.access(nearest, os.W_OK):
        raise CardgenError(f"{nearest} cannot be written (check its permissions); nothing was written")
