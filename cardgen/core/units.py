"""Lengths, card size presets, papers and offsets, parsed in one place (mm is the internal unit)."""
from __future__ import annotations

import math
import re

MM_PER_INCH = 25.4
PT_PER_INCH = 72.0

# Trim sizes in mm, portrait (width, height).
CARD_PRESETS: dict[str, tuple[float, float]] = {
    "poker": (63.5, 88.9),
    "bridge": (57.15, 88.9),
    "mini": (44.45, 63.5),
    "mini-euro": (44.0, 68.0),
    "tarot": (69.85, 120.65),
    "square": (69.85, 69.85),
    "business": (50.8, 88.9),
    "jumbo": (88.9, 127.0),
}

# Paper sizes in mm, portrait (width, height).
PAPERS: dict[str, tuple[float, float]] = {
    "letter": (215.9, 279.4), "legal": (215.9, 355.6), "tabloid": (279.4, 431.8),
    "a4": (210.0, 297.0), "a3": (297.0, 420.0),
}

MAX_PAPER_MM = 3000.0  # wide-format roll printers take about 1.5 m; 3 m is past every printer

_LENGTH = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(mm|cm|in|px|pt)?\s*$")


def parse_length(value: str | float | int, dpi: float = 300.0) -> float:
    """Turn `'63.5mm'`, `'2.5in'`, `'750px'`, `'9pt'` or a bare number (mm) into mm."""
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"'{value}' is not a length; expected a finite number")
        return float(value)
    match = _LENGTH.match(str(value))
    if not match:
        raise ValueError(f"'{value}' is not a length; expected a number with mm, cm, in, pt or px")
    number, unit = float(match.group(1)), match.group(2) or "mm"
    factor = {"mm": 1.0, "cm": 10.0, "in": MM_PER_INCH, "pt": MM_PER_INCH / PT_PER_INCH,
              "px": MM_PER_INCH / dpi}[unit]
    return number * factor


def mm_to_px(mm: float, dpi: float) -> float:
    """Millimetres to pixels at a resolution."""
    return mm / MM_PER_INCH * dpi


def mm_to_pt(mm: float) -> float:
    """Millimetres to PDF points."""
    return mm / MM_PER_INCH * PT_PER_INCH


_PAPER_SIZE = re.compile(r"^\s*([\d.]+)\s*x\s*([\d.]+)\s*(mm|cm|in)?\s*$", re.IGNORECASE)


def parse_paper(text: str) -> tuple[float, float]:
    """A paper name or 'WIDTHxHEIGHT[mm|cm|in]' as (width, height) in mm."""
    name = text.strip().lower()
    if name in PAPERS:
        return PAPERS[name]
    match = _PAPER_SIZE.match(name)
    if not match:
        raise ValueError(f"unknown paper '{text}'; expected {', '.join(PAPERS)} or a size such as 210x297mm")
    unit = match.group(3) or "mm"
    width, height = (parse_length(f"{match.group(i)}{unit}") for i in (1, 2))
    if min(width, height) < 50:
        raise ValueError(f"paper '{text}' is too small")
    if max(width, height) > MAX_PAPER_MM:
        raise ValueError(f"paper '{text}' is larger than {MAX_PAPER_MM:g} mm on a side; no printer takes it")
    return width, height


def parse_offset(value: str | list[float] | tuple[float, float]) -> tuple[float, float]:
    """A back offset 'X,Y' (mm) or [X, Y] as a pair of floats."""
    parts = value.split(",") if isinstance(value, str) else list(value)
    try:
        x, y = (float(p) for p in parts)
        if not (math.isfinite(x) and math.isfinite(y)):
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(f"back offset '{value}' is not 'X,Y' in mm (for example 0.5,-1)") from None
    if max(abs(x), abs(y)) > 10:
        raise ValueError(f"back offset '{value}' is larger than 10 mm; measure it with `cardgen calibrate`")
    return x, y
