"""cardgen's own package data: default fonts, the game-icons.net set, shared template partials, `init` files; and
the digests of the package (its code, its files) that are part of every cache key.

A workspace needs only `data/` and `templates/`; its `fonts/`, `icons/` and `templates/` folders add to
these and take precedence over them.
"""
from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

import cardgen

PACKAGE = Path(cardgen.__file__).resolve().parent  # the package's folder, wherever in it this module lies
ASSETS = PACKAGE / "assets"
FONTS_DIR = ASSETS / "fonts"
ICON_BUNDLE = ASSETS / "icons" / "game-icons.zip"
ICON_ATTRIBUTION = ASSETS / "icons" / "ATTRIBUTION.md"
TEMPLATES_DIR = ASSETS / "templates"
SCAFFOLD_DIR = ASSETS / "scaffold"


def render_inputs() -> list[Path]:
    """Every bundled file that can change how a card renders: fonts, the icon set, shared partials."""
    fonts = sorted(p for p in FONTS_DIR.iterdir() if p.suffix.lower() in (".ttf", ".otf"))
    partials = sorted(p for p in TEMPLATES_DIR.rglob("*") if p.is_file())
    return [*fonts, ICON_BUNDLE, *partials]


def code_files() -> list[Path]:
    """Every other file of cardgen's package: its modules and the rest of its assets (compiled bytecode aside: it
    follows from the modules), in a fixed order."""
    tracked = set(render_inputs())  # keyed one by one, by the cards that use them (`bundle_digest`, render keys)
    found = []
    for folder, subfolders, files in os.walk(PACKAGE):
        subfolders[:] = sorted(s for s in subfolders if s != "__pycache__")
        found += [path for name in sorted(files) if not name.endswith((".pyc", ".pyo"))
                  for path in (Path(folder, name),) if path not in tracked]
    return found


def _stamp(paths: list[Path]) -> tuple:
    """Path, size and modification time of each file: cheap, and new after any reinstall or edit."""
    return tuple((str(p), s.st_size, s.st_mtime_ns) for p in paths for s in (p.stat(),))


@lru_cache(maxsize=4)
def _digest(stamp: tuple, salt: str = "") -> str:
    """The content hash of the files of a stamp (paths, sizes, times): kept in the user's cache folder (a sealed
    entry, keyed by the stamp and `salt`), else computed from every file's content and kept."""
    from cardgen.core.storage import file_digest, user_store

    cache = user_store("bundle-digest", ".json")
    key = hashlib.sha256(repr((salt, stamp)).encode()).hexdigest()[:32]
    kept = cache.read_json(key) if cache is not None else None
    if isinstance(kept, str) and len(kept) == 32:
        return kept
    digest = hashlib.sha256()
    for name, *_ in stamp:
        path = Path(name)
        shown = path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else path.name
        digest.update(f"{shown}:{file_digest(path)}\0".encode())
    value = digest.hexdigest()[:32]
    if cache is not None:
        cache.put_json(key, value)
    return value


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A content hash of cardgen's own code and of its bundled files but the render inputs (which `bundle_digest`
    and the render keys cover one by one): part of every cache key and of the no-change check, so that an
    upgrade, or an edit of cardgen in an editable install, makes anew what it may change (no version number to
    bump by hand).

    Computed once per process (the process runs the code it imported first): ~120 stats, and the hash kept by
    them in the user's cache (`_digest`; bundled.py itself is one of the files, so a new way of hashing is a
    new key).
    """
    return _digest(_stamp(code_files()))


def bundle_stamp() -> tuple:
    """Path, size and modification time of every bundled render input: cheap, and new after any reinstall."""
    return _stamp(render_inputs())


def bundle_digest() -> str:
    """A content hash of the bundled render inputs, for cache keys.

    Hashing them (7 MB of fonts and icons) took 20-35 ms of every build that renders, so the hash is kept
    by the files' paths, sizes and modification times (all new after any reinstall): the trust a verified
    cache entry gets (`storage.verify`).
    """
    return _digest(bundle_stamp(), code_digest())
