"""Names from data that become file names (card ids, deck names): safe on Windows, macOS and Linux, or refused.

A card's image is `cards/<deck>/<id>.png`, so an id or deck name is a file name: it may not hold a path
(`../x`), a character Windows refuses, a device name Windows reserves (CON, aux, com1), or end in a dot or
space. Two names that differ only in case or in how an accent is encoded name the same file on Windows
and macOS: `collision_key` finds them.
"""
from __future__ import annotations

import re
import unicodedata

MAX_NAME = 120  # bytes in UTF-8: file systems count a name's bytes (255 at most), not its characters
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
# Windows's device names, as Microsoft lists them: COM and LPT take a digit 0-9 or a superscript 1-3 (COM¹),
# and the console's own CONIN$ and CONOUT$.
WINDOWS_RESERVED = {"con", "prn", "aux", "nul", "conin$", "conout$",
                    *(f"{port}{digit}" for port in ("com", "lpt") for digit in "0123456789\u00b9\u00b2\u00b3")}


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
    size = len(name.encode("utf-8"))
    if size > MAX_NAME:
        return f"it is {size} bytes long in UTF-8 ({len(name)} characters); the limit is {MAX_NAME} bytes"
    return None


def slugify(text: str, kind: str = "card", keep_case: bool = False) -> str:
    """A safe file name made from a name (a card's, a game's title): its ASCII letters and digits, accents
    dropped, every other run of characters one hyphen ('#Shitstorm' -> 'shitstorm', 'Épée!' -> 'epee'), lower
    case unless `keep_case`, at most MAX_NAME long. `kind` says what it names: a name Windows reserves for a
    device takes it as a suffix ('aux' -> 'aux-card'), and a name with nothing left is `kind` itself."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9]+", "-", ascii_text if keep_case else ascii_text.lower()).strip("-")
    slug = slug[:MAX_NAME].rstrip("-")
    return f"{slug}-{kind}" if slug.lower() in WINDOWS_RESERVED else slug or kind


def collision_key(name: str) -> str:
    """What a case-insensitive, normalising file system (Windows, macOS) sees of a name."""
    return unicodedata.normalize("NFC", name).casefold()
