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


@lru_cache(maxsize=1)
def _digest(stamp: tuple) -> str:
    from cardgen.storage import file_digest

    digest = hashlib.sha256()
    for path in render_inputs():
        digest.update(f"{path.name}:{file_digest(path)}\0".encode())
    return digest.hexdigest()[:32]


def bundle_stamp() -> tuple:
    """Name, size and modification time of every bundled render input: cheap, and new after any reinstall."""
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in render_inputs())


def bundle_digest() -> str:
    """A content hash of the bundled render inputs (for cache keys; recomputed only when a file's stamp changes)."""
    return _digest(bundle_stamp())
