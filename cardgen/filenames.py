"""Names from data that become file names (card ids, deck names): safe on Windows, macOS and Linux, or refused.

A card's image is `cards/<deck>/<id>.png`, so an id or deck name is a file name: it may not hold a path
(`../x`), a character Windows refuses, a device name Windows reserves (CON, aux, com1), or end in a dot or
space. Two names that differ only in case or in how an accent is encoded name the same file on Windows
and macOS: `collision_key` finds them.
"""
from __future__ import annotations

import re
import unicodedata

MAX_NAME = 120
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def unsafe_reason(name: str) -> str | None:
    """Why `name` cannot be a file name on every system, or None when it can."""
    forbidden = _FORBIDDEN.search(name)
    if forbidden:
        shown = repr(forbidden.group())[1:-1]
        return f"it holds '{shown}', which cannot be part of a file name (no / \\ < > : \" | ? * or control " \
               "characters)"
    if not name.strip():
        return "it is empty"
    if name.startswith(".") or name.endswith((".", " ")):
        return "a file name may not start with a dot or end with a dot or a space"
    if name.split(".")[0].strip().lower() in WINDOWS_RESERVED:
        return f"Windows reserves the name '{name.split('.')[0]}' for a device"
    if len(name) > MAX_NAME:
        return f"it is {len(name)} characters long; the limit is {MAX_NAME}"
    return None


def safe_slug(slug: str) -> str:
    """A slug made from a name, kept short and clear of the device names Windows reserves ('aux' -> 'aux-card')."""
    slug = slug[:MAX_NAME].rstrip("-")
    return f"{slug}-card" if slug in WINDOWS_RESERVED else slug


def collision_key(name: str) -> str:
    """What a case-insensitive, normalising file system (Windows, macOS) sees of a name."""
    return unicodedata.normalize("NFC", name).casefold()
