"""Fonts: cardgen's bundled fonts plus a workspace's `fonts/`, the only fonts cairo sees; text measured as drawn.

A workspace's fonts add families and override a bundled face of the same family and style.
"""
from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from cardgen.core import bundled
from cardgen.core.errors import CardgenError, Problem
from cardgen.core.storage import Cache, content_stamp, user_cache, user_store, write_text

FONT_SUFFIXES = (".ttf", ".otf")
_configured_dirs: list[Path] = []


def configure_fontconfig(font_dirs: list[Path]) -> None:
    """Point fontconfig at the workspace font folders and the bundled fonts only, before cairo draws text.

    System fonts are left out on purpose: a family that is not available then cannot silently
    fall back to DejaVu, and cards render the same on every machine. A bundled face that a
    workspace font overrides (same family and style) is hidden from cairo too.
    """
    wanted = [d.resolve() for d in font_dirs] + [bundled.FONTS_DIR]
    new = [d for d in dict.fromkeys(wanted) if d not in _configured_dirs]
    if not new:
        return
    if not _configured_dirs and "CARDGEN_FONTCONFIG_SET" not in os.environ:
        home = user_cache()
        cache = (home or _private_folder()) / "fontconfig"
        dirs = "".join(f"<dir>{_xml(d)}</dir>" for d in new)
        hidden = "".join(f"<glob>{_xml(f)}</glob>" for f in _overridden_bundled_files(new))
        reject = f"<selectfont><rejectfont>{hidden}</rejectfont></selectfont>" if hidden else ""
        conf = (f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>{dirs}{reject}'
                f"<cachedir>{_xml(cache)}</cachedir></fontconfig>\n")
        os.environ["FONTCONFIG_FILE"] = _config_file(home, conf)
        os.environ["CARDGEN_FONTCONFIG_SET"] = "1"
    else:
        # fontconfig may already be initialised in this process: add the folder to the live config.
        lib = ctypes.CDLL(ctypes.util.find_library("fontconfig") or "libfontconfig.so.1")
        for d in new:
            lib.FcConfigAppFontAddDir(None, str(d).encode())
    _configured_dirs.extend(new)


def _config_file(home: Path | None, conf: str) -> str:
    """A fontconfig file holding `conf`: in the user's cache one file per distinct configuration, reused by
    every run (so that no run, not even a killed one, leaves a file behind); else in a private temporary
    folder removed when cardgen exits."""
    if home is not None:
        path = home / f"fonts-{hashlib.sha256(conf.encode()).hexdigest()[:16]}.conf"
        try:
            if not path.is_file() or path.read_text(encoding="utf-8") != conf:
                write_text(path, conf)
            return str(path)
        except (OSError, UnicodeDecodeError):
            pass
    path = _private_folder() / "fonts.conf"
    path.write_text(conf, encoding="utf-8")
    return str(path)


@lru_cache(maxsize=1)
def _private_folder() -> Path:
    """A new folder of this run's own in the temporary folder, removed when cardgen exits (render workers are
    gone by then): mkdtemp makes it readable by this user only, so no other user can plant a font
    configuration or cache in it, as they could in a folder with a fixed name."""
    folder = Path(tempfile.mkdtemp(prefix="cardgen-fonts-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _xml(path: Path) -> str:
    return str(path).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _overridden_bundled_files(dirs: list[Path]) -> list[Path]:
    """Bundled font files whose family and style a workspace folder provides too."""
    workspace = set().union(*(_faces_in(d) for d in dirs if d != bundled.FONTS_DIR))
    if not workspace:  # the bundled faces are then read when text is first measured, not before the workers fork
        return []
    return [face.path for key, face in _faces_in(bundled.FONTS_DIR).items() if key in workspace]


@dataclass(eq=False)
class FontFace:
    """One font file's metrics: advance widths per character, in font units."""

    path: Path
    family: str
    bold: bool
    italic: bool
    units_per_em: int
    ascent: int
    descent: int
    read_advances: dict[int, int] | None = field(repr=False, default=None)
    # the advances as kept (`_read_face`), JSON: read when the face first measures a text, as a game uses a few of
    # the 26 bundled faces (reading every face's advances was ~13 ms of every build)
    kept_advances: bytes = field(repr=False, default=b"")
    # the advance of each text measured: text fitting measures the same words at every size it tries, on every card
    _measured: dict[str, int] = field(init=False, repr=False, default_factory=dict)

    @property
    def advances(self) -> dict[int, int]:
        """Advance width per character code, in font units."""
        if self.read_advances is None:
            try:
                kept = json.loads(self.kept_advances)["advances"]
                self.read_advances = {int(code): int(advance) for code, advance in kept.items()}
            except (ValueError, KeyError, TypeError, AttributeError):  # none kept, or not what this cardgen keeps
                face = _parse_face(self.path)
                self.read_advances = face.advances
                _keep(face)  # for the next build that measures text with it
        return self.read_advances

    def __eq__(self, other: object) -> bool:
        """The same file and metrics."""
        return isinstance(other, FontFace) and self._metrics() == other._metrics()

    def _metrics(self) -> tuple:
        return (self.path, self.family, self.bold, self.italic, self.units_per_em, self.ascent, self.descent,
                self.advances)

    def width(self, text: str, size: float) -> float:
        """Width of a text at a size, as cairosvg draws it (glyph by glyph, no kerning)."""
        units = self._measured.get(text)
        if units is None:
            missing = self.advances.get(0x20, self.units_per_em // 2)
            units = sum(self.advances.get(ord(ch), missing) for ch in text)
            if len(self._measured) < MEASURED_TEXTS:
                self._measured[text] = units
        return units * size / self.units_per_em

    def missing_glyphs(self, text: str) -> set[str]:
        """Characters of a text that this font cannot draw (each character looked at once: a run repeats many)."""
        advances = self.advances
        return {ch for ch in set(text) if ord(ch) not in advances and not ch.isspace()}


MEASURED_TEXTS = 100_000  # texts whose advance a face keeps (a word is ~100 bytes kept)
_metrics: Cache | None = None  # the output root's cache of metrics read from font files (`keep_metrics`)


def keep_metrics(out_root: Path) -> None:
    """Keep the metrics read from a workspace's own font files in an output root's cache (see `_read_face`)."""
    global _metrics
    _metrics = Cache(out_root, "font-metrics", ".json")


def _metrics_cache(path: Path) -> Cache | None:
    """Where a font file's metrics are kept: cardgen's bundled fonts in the user's cache folder, shared by
    every game and output root (so that a build into an empty output root does not read them all again);
    a workspace's own fonts, and bundled ones when the user's cache folder cannot be written, in the
    output root's cache (`keep_metrics`), if any."""
    kept = user_store("font-metrics", ".json") if path.parent == bundled.FONTS_DIR else None
    return kept if kept is not None else _metrics


def _read_face(path: Path) -> FontFace:
    """A font file's metrics, from the cache (`_metrics_cache`) when it has them for the file as it is (same
    path, size and modification time): reading the name, cmap and hmtx tables of every bundled face with
    fontTools takes longer than loading a small game, and most builds read the same files as the build before.
    An entry that does not verify, or is not what this cardgen writes, is read from the font again."""
    indexed = _indexed_face(path)
    if indexed is not None:
        return indexed
    key, cache = _metrics_key(path), _metrics_cache(path)
    # an entry is two lines of JSON: the face's names and sizes, then its advances, read only when used
    header, _, advances = (cache.read_bytes(key) or b"").partition(b"\n") if cache is not None else (b"", b"", b"")
    try:
        kept = json.loads(header)
        return FontFace(path, str(kept["family"]), bool(kept["bold"]), bool(kept["italic"]),
                        int(kept["units_per_em"]), int(kept["ascent"]), int(kept["descent"]), None, advances)
    except (KeyError, TypeError, ValueError, AttributeError):
        pass  # none kept, or not what this cardgen writes: read the font again
    # A bundled face (cardgen's own file) is read for its names and sizes only: a game measures its text with a few
    # of the 26, whose advances are read when first used (`FontFace.advances`); reading them all took ~0.1 s of a
    # first build, before its first card. A workspace's own font is read whole: a damaged one is said at once.
    face = _parse_face(path) if path.parent != bundled.FONTS_DIR else _parse_names(path)
    _keep(face)
    return face


# The bundled fonts' metrics, as fontTools reads them from the files (`tools/font_index.py` writes it; a test checks
# that it still holds what the files do): a first build anywhere then neither imports fontTools (~45 ms) nor reads
# the names and sizes of 26 faces (~70 ms) before its first card.
FONT_INDEX = "metrics.json"


@lru_cache(maxsize=1)
def bundled_index() -> dict[str, dict[str, Any]]:
    """The bundled fonts' metrics by file name (`FONT_INDEX`); empty when it is missing or unreadable."""
    try:
        index = json.loads((bundled.FONTS_DIR / FONT_INDEX).read_bytes())
    except (OSError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}


def _indexed_face(path: Path) -> FontFace | None:
    """A bundled face's metrics from the index, when it has the file at its size; else None (read the file)."""
    entry = bundled_index().get(path.name) if path.parent == bundled.FONTS_DIR else None
    try:
        if entry is None or entry["size"] != path.stat().st_size:
            return None
        return FontFace(path, str(entry["family"]), bool(entry["bold"]), bool(entry["italic"]),
                        int(entry["units_per_em"]), int(entry["ascent"]), int(entry["descent"]), None,
                        str(entry["advances"]).encode())
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def index_entry(face: FontFace) -> dict[str, Any]:
    """A face's entry in the bundled fonts' index (`FONT_INDEX`): its file's size, names, sizes and advances."""
    return {"size": face.path.stat().st_size, "family": face.family, "bold": face.bold, "italic": face.italic,
            "units_per_em": face.units_per_em, "ascent": face.ascent, "descent": face.descent,
            "advances": json.dumps({"advances": face.advances}, separators=(",", ":"))}


def _metrics_key(path: Path) -> str:
    """The cache key of a font file's metrics: its path and content stamp (`storage.content_stamp`: size, times and
    which file; by modification time only, a same-size save keeping it kept the metrics of the font it replaced)."""
    # cardgen's code digest in the key: the user's cache outlives a cardgen version, and what an entry holds may change
    parts = (bundled.code_digest(__name__), path.resolve(), *content_stamp(path.stat()))
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:32]


def _keep(face: FontFace) -> None:
    """Keep a face's metrics in its cache (see `_metrics_cache`): its names and sizes, and its advances when read."""
    cache = _metrics_cache(face.path)
    if cache is None:
        return
    names = {"family": face.family, "bold": face.bold, "italic": face.italic, "units_per_em": face.units_per_em,
             "ascent": face.ascent, "descent": face.descent}
    advances = "" if face.read_advances is None else json.dumps({"advances": face.read_advances})
    cache.put_bytes(_metrics_key(face.path), f"{json.dumps(names)}\n{advances}".encode())


class _Warnings(logging.Handler):
    """fontTools' warnings about one font, kept instead of printed (a damaged name table logs one per record:
    65,535 lines, in every process that reads it)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the message."""
        self.messages.append(record.getMessage())


_FONTTOOLS_LOG = logging.getLogger("fontTools")
_PARSING = threading.Lock()  # one font read at a time: the warnings caught are that font's


def _parse_face(path: Path) -> FontFace:
    """A font file's metrics; a ValueError saying what is wrong when the file is not a font cairo can draw
    with (fontTools reads tables lazily and forgives what FreeType then refuses, drawing no text at all)."""
    return _parse(path, advances=True)


def _parse_names(path: Path) -> FontFace:
    """A font file's metrics but its advances (read when first used): its names and sizes."""
    return _parse(path, advances=False)


def _parse(path: Path, advances: bool) -> FontFace:
    from fontTools.ttLib import TTFont

    caught = _Warnings()
    with _PARSING:
        _FONTTOOLS_LOG.addHandler(caught)
        propagate, _FONTTOOLS_LOG.propagate = _FONTTOOLS_LOG.propagate, False
        try:
            face = _parsed_face(TTFont(path, lazy=True), path, advances)
        finally:
            _FONTTOOLS_LOG.removeHandler(caught)
            _FONTTOOLS_LOG.propagate = propagate
    if caught.messages:
        more = f" and {len(caught.messages) - 1:,} more" if len(caught.messages) > 1 else ""
        raise ValueError(f"the font is damaged: {caught.messages[0]}{more}")
    return face


_REQUIRED_TABLES = ("head", "hhea", "hmtx", "cmap", "name", "OS/2", "maxp")


def _parsed_face(font: Any, path: Path, advances: bool = True) -> FontFace:
    """The metrics of a font fontTools opened, once its tables are found whole and its sizes usable."""
    size = path.stat().st_size
    for tag, entry in font.reader.tables.items():  # a file cut short: a table that ends past the file's end
        if entry.offset + entry.length > size:
            raise ValueError(f"the font is cut short: its '{tag.strip()}' table ends at byte "
                             f"{entry.offset + entry.length:,} of a {size:,}-byte file")
    missing = [tag for tag in _REQUIRED_TABLES if tag not in font]
    if missing or ("glyf" not in font and "CFF " not in font and "CFF2" not in font):
        raise ValueError(f"the font lacks the table(s) {', '.join(missing) or 'glyf or CFF'} that text needs")
    units_per_em = font["head"].unitsPerEm
    if not 16 <= units_per_em <= 16384:  # the OpenType range; text is measured in these units
        raise ValueError(f"the font's unitsPerEm is {units_per_em}, outside 16-16384")
    names = font["name"]
    family = names.getDebugName(16) or names.getDebugName(1)
    if not family:
        raise ValueError("the font's name table gives no family name")
    os2 = font["OS/2"]
    widths = None
    if advances:
        cmap = font.getBestCmap() or {}
        hmtx = font["hmtx"].metrics
        widths = {code: hmtx[glyph][0] for code, glyph in cmap.items() if glyph in hmtx}
    return FontFace(path, str(family), os2.usWeightClass >= 600, bool(os2.fsSelection & 1) or
                    bool(font["head"].macStyle & 2), units_per_em, font["hhea"].ascent, -font["hhea"].descent,
                    widths)


@lru_cache(maxsize=None)
def _scan(folder: Path, stamp: tuple) -> dict[tuple[str, bool, bool], FontFace]:
    faces: dict[tuple[str, bool, bool], FontFace] = {}
    problems: list[Problem] = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in FONT_SUFFIXES and path.is_file():
            shown = f"{folder.name}/{path.name}"
            if folder != bundled.FONTS_DIR and not path.resolve().is_relative_to(folder.resolve().parent):
                problems.append(Problem(f"the font is a link to {path.resolve()}, outside the project; copy the "
                                        "font file itself into fonts/", file=shown))
                continue
            try:
                face = _read_face(path)
            except Exception as exc:  # fontTools raises many types for a file that is no font
                problems.append(Problem(f"cannot read the file as a font ({exc}); replace it with a .ttf or .otf "
                                        "font or remove it", file=shown))
                continue
            faces.setdefault((face.family.lower(), face.bold, face.italic), face)
    if problems:  # each unusable font once, all of them at once
        raise CardgenError(problems)
    return faces


def _faces_in(folder: Path) -> dict[tuple[str, bool, bool], FontFace]:
    """The faces of a font folder by (family, bold, italic), re-read only when its files change (`content_stamp`)."""
    if not folder.is_dir():
        return {}
    stamp = tuple((p.name, *content_stamp(p.stat())) for p in sorted(folder.iterdir()))
    return _scan(folder, stamp)


class FontBook:
    """The fonts a workspace can use: its own `fonts/` folder over cardgen's bundled fonts."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.faces = {**_faces_in(bundled.FONTS_DIR), **_faces_in(folder)}
        self._chosen: dict[tuple[str, bool, bool], FontFace] = {}
        self._files: dict[str, list[Path]] = {}  # asked for each family of each card planned

    @property
    def families(self) -> list[str]:
        """Every family name available."""
        return sorted({face.family for face in self.faces.values()})

    def face(self, family: str, bold: bool = False, italic: bool = False) -> FontFace:
        """The face cairo will use for a family and style (falling back to the regular style)."""
        found = self._chosen.get((family, bold, italic))  # asked for every piece of text measured
        if found is None:
            found = self._chosen[(family, bold, italic)] = self._choose(family, bold, italic)
        return found

    def _choose(self, family: str, bold: bool, italic: bool) -> FontFace:
        key = family.strip().strip("'\"").lower()
        for style in ((bold, italic), (bold, False), (False, italic), (False, False)):
            if (key, *style) in self.faces:
                return self.faces[(key, *style)]
        present = [face for k, face in sorted(self.faces.items()) if k[0] == key]
        if present:  # the family is there, but not in this style nor its regular one to fall back on
            raise CardgenError(Problem(missing_face_message(family, bold, italic, present), rule="missing-font"))
        raise CardgenError(Problem(missing_family_message(family, self.families), rule="missing-font"))

    def files_for(self, family: str) -> list[Path]:
        """Every file of a family (a change in any of them changes how text renders)."""
        if family not in self._files:
            key = family.strip().strip("'\"").lower()
            self._files[family] = [face.path for k, face in sorted(self.faces.items()) if k[0] == key]
        return list(self._files[family])


def _style_name(bold: bool, italic: bool) -> str:
    return {(False, False): "regular", (True, False): "bold", (False, True): "italic"}.get((bold, italic),
                                                                                         "bold italic")


def missing_face_message(family: str, bold: bool, italic: bool, present: list[FontFace]) -> str:
    """What to say about a family whose files hold neither the style asked for nor the regular face."""
    asked = _style_name(bold, italic)
    fallback = "" if asked == "regular" else " nor a regular one to fall back on"
    have = ", ".join(f"{_style_name(face.bold, face.italic)} ({face.path.name})" for face in present)
    return (f"font family '{family}' has no {asked} face{fallback}: its files hold only {have}. Copy the "
            f"family's {asked} .ttf or .otf file (e.g. {family.replace(' ', '')}-"
            f"{_style_name(bold, italic).title().replace(' ', '')}.ttf) into fonts/, or ask for a style it has")


def missing_family_message(family: str, available: list[str]) -> str:
    """What to say about a font family that is neither in the workspace's fonts/ nor bundled."""
    import difflib

    close = difflib.get_close_matches(family, available, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return (f"font family '{family}' is not available{hint}. Fonts come from fonts/ in the workspace and from "
            f"cardgen's bundled families ({', '.join(available)}). To use '{family}', copy its static .ttf or "
            f".otf files (and license) into fonts/ next to data/; `cardgen fonts` lists every family")


_FAMILY = re.compile(r"""font-family\s*(?:=\s*["']|:)\s*(?:'|&apos;|&quot;)?([^"';,&<>]+)""")


# The CSS shorthand `font: bold 12px/1.2 'Some Family', serif`: the family list follows the size. The pattern
# starts with the word `font` (not preceded by a letter or `-`, as in `my-font:`) so that the regex engine looks
# for that word first: with the check in front, every character was tried (~0.2 ms an SVG, 0.2 s of 1,000 cards).
_SHORTHAND = re.compile(r"""font(?<![\w-]font)\s*:\s*[^;"'{}<>]*?[\d.]+(?:px|pt|em|rem|%|mm|cm|in|ex|pc)"""
                        r"""(?:\s*/\s*[\d.]+\w*)?\s+(?:'|&apos;|&quot;|")?([^"';,&<>{}]+)""")


def families_in_svg(svg: str) -> set[str]:
    """The font families an SVG names, by font-family or the `font:` shorthand (cairosvg uses only the first
    of a list)."""
    return {m.strip().strip("'\"") for m in [*_FAMILY.findall(svg), *_SHORTHAND.findall(svg)]}
