"""Bundled fonts: make them the only fonts cairo sees, and measure text exactly as cairosvg draws it."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from cardgen.errors import CardgenError

FONT_SUFFIXES = (".ttf", ".otf")
_configured_dirs: list[Path] = []


def configure_fontconfig(font_dirs: list[Path]) -> None:
    """Point fontconfig at the bundled font folders only, before cairo draws any text.

    System fonts are left out on purpose: a family that is not bundled then cannot silently
    fall back to DejaVu, and cards render the same on every machine.
    """
    new = [d.resolve() for d in font_dirs if d.resolve() not in _configured_dirs]
    if not new:
        return
    if not _configured_dirs and "CARDGEN_FONTCONFIG_SET" not in os.environ:
        cache = Path(tempfile.gettempdir()) / "cardgen-fontconfig-cache"
        dirs = "".join(f"<dir>{d}</dir>" for d in new)
        conf = (f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>{dirs}'
                f"<cachedir>{cache}</cachedir></fontconfig>\n")
        handle, name = tempfile.mkstemp(prefix="cardgen-fonts-", suffix=".conf")
        os.write(handle, conf.encode())
        os.close(handle)
        os.environ["FONTCONFIG_FILE"] = name
        os.environ["CARDGEN_FONTCONFIG_SET"] = "1"
    else:
        # fontconfig may already be initialised in this process: add the folder to the live config.
        lib = ctypes.CDLL(ctypes.util.find_library("fontconfig") or "libfontconfig.so.1")
        for d in new:
            lib.FcConfigAppFontAddDir(None, str(d).encode())
    _configured_dirs.extend(new)


@dataclass
class FontFace:
    """One font file's metrics: advance widths per character, in font units."""

    path: Path
    family: str
    bold: bool
    italic: bool
    units_per_em: int
    ascent: int
    descent: int
    advances: dict[int, int] = field(repr=False, default_factory=dict)

    def width(self, text: str, size: float) -> float:
        """Width of a text at a size, as cairosvg draws it (glyph by glyph, no kerning)."""
        missing = self.advances.get(0x20, self.units_per_em // 2)
        return sum(self.advances.get(ord(ch), missing) for ch in text) * size / self.units_per_em

    def missing_glyphs(self, text: str) -> set[str]:
        """Characters of a text that this font cannot draw."""
        return {ch for ch in text if ord(ch) not in self.advances and not ch.isspace()}


def _read_face(path: Path) -> FontFace:
    from fontTools.ttLib import TTFont

    font = TTFont(path, lazy=True)
    names = font["name"]
    family = str(names.getDebugName(16) or names.getDebugName(1))
    os2 = font["OS/2"]
    cmap = font.getBestCmap() or {}
    hmtx = font["hmtx"].metrics
    advances = {code: hmtx[glyph][0] for code, glyph in cmap.items() if glyph in hmtx}
    return FontFace(path, family, os2.usWeightClass >= 600, bool(os2.fsSelection & 1) or
                    bool(font["head"].macStyle & 2), font["head"].unitsPerEm,
                    font["hhea"].ascent, -font["hhea"].descent, advances)


@lru_cache(maxsize=None)
def _scan(folder: Path, stamp: tuple) -> dict[tuple[str, bool, bool], FontFace]:
    faces: dict[tuple[str, bool, bool], FontFace] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in FONT_SUFFIXES:
            face = _read_face(path)
            faces.setdefault((face.family.lower(), face.bold, face.italic), face)
    return faces


class FontBook:
    """The bundled fonts of a workspace, by family and style."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*"))) if folder.is_dir() else ()
        self.faces = _scan(folder, stamp) if folder.is_dir() else {}

    @property
    def families(self) -> list[str]:
        """The bundled family names."""
        return sorted({face.family for face in self.faces.values()})

    def face(self, family: str, bold: bool = False, italic: bool = False) -> FontFace:
        """The face cairo will use for a family and style (falling back to the regular style)."""
        key = family.strip().strip("'\"").lower()
        for style in ((bold, italic), (bold, False), (False, italic), (False, False)):
            if (key, *style) in self.faces:
                return self.faces[(key, *style)]
        raise CardgenError(f"font family '{family}' is not bundled in {self.folder.name}/; "
                           f"bundled families: {', '.join(self.families) or 'none'}")

    def files_for(self, family: str) -> list[Path]:
        """Every bundled file of a family (a change in any of them changes how text renders)."""
        key = family.strip().strip("'\"").lower()
        return [face.path for k, face in sorted(self.faces.items()) if k[0] == key]


_FAMILY = re.compile(r"""font-family\s*(?:=\s*["']|:)\s*(?:'|&apos;|&quot;)?([^"';,&<>]+)""")


def families_in_svg(svg: str) -> set[str]:
    """The font families an SVG names (cairosvg uses only the first of a list)."""
    return {m.strip().strip("'\"") for m in _FAMILY.findall(svg)}
