"""cardgen's own package data: default fonts, the game-icons.net set, shared template partials, `init` files.

A workspace needs only `data/` and `templates/`; its `fonts/`, `icons/` and `templates/` folders add to
these and take precedence over them.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
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


_DIGEST_FORMAT = "1"  # what a kept bundle digest is; part of its key


@lru_cache(maxsize=4)
def _digest(stamp: tuple) -> str:
    """The content hash of the bundled files of a stamp (paths, sizes, times): kept in the user's cache folder
    (a sealed entry), else computed from every file's content and kept."""
    from cardgen.storage import file_digest, user_store

    cache = user_store("bundle-digest", ".json")
    key = hashlib.sha256(repr((_DIGEST_FORMAT, stamp)).encode()).hexdigest()[:32]
    kept = cache.read_json(key) if cache is not None else None
    if isinstance(kept, str) and len(kept) == 32:
        return kept
    digest = hashlib.sha256()
    for path in render_inputs():
        digest.update(f"{path.name}:{file_digest(path)}\0".encode())
    value = digest.hexdigest()[:32]
    if cache is not None:
        cache.put_json(key, value)
    return value


def bundle_stamp() -> tuple:
    """Path, size and modification time of every bundled render input: cheap, and new after any reinstall."""
    return tuple((str(p), s.st_size, s.st_mtime_ns) for p in render_inputs() for s in (p.stat(),))


def bundle_digest() -> str:
    """A content hash of the bundled render inputs, for cache keys.

    Hashing them (7 MB of fonts and icons) took 20-35 ms of every build that renders, so the hash is kept
    by the files' paths, sizes and modification times (all new after any reinstall): the trust a verified
    cache entry gets (`storage.verify`).
    """
    return _digest(bundle_stamp())
