"""Text boxes for SVG: inline markup, word wrapping with the font's real widths, shrink to fit.

SVG has no automatic wrapping, so lines are laid out here and every run is placed at an
explicit x. Widths come from the bundled font's advance widths, which is what cairosvg draws
(no kerning) once text antialiasing is set up as in render.py.
"""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from markupsafe import Markup, escape

from cardgen.load.fonts import FontBook
from cardgen.load.icons import Icon
from cardgen.load.markup import Span, parse

ICON_WIDTH_EM = 1.1  # an inline icon is drawn 1 em high and takes a little more than 1 em
_SPACES = re.compile(r"([ \t]+)")


@dataclass(frozen=True)
class Piece:
    """A run of text in one style, or an inline icon (text is then the icon's name)."""

    text: str
    bold: bool = False
    italic: bool = False
    icon: bool = False


@dataclass
class Word:
    """Pieces with no space between them, and the spaces written before them (dropped where a line wraps)."""

    pieces: list[Piece] = field(default_factory=list)
    spaces: list[Piece] = field(default_factory=list)


@dataclass
class Line:
    """One laid-out line: its words and its width."""

    words: list[Word] = field(default_factory=list)
    width: float = 0.0


@dataclass
class Layout:
    """The result of fitting a text into a box."""

    lines: list[Line]
    size: float
    fits: bool
    why: str = ""  # what does not fit, and by how much, when the text does not fit at its smallest size


def paragraphs(spans: list[Span]) -> list[list[Word]]:
    """Spans split at line breaks into paragraphs of words; spaces at a paragraph's end are dropped."""
    result: list[list[Word]] = [[]]
    word = Word()
    for span in spans:
        if span.kind == "break":
            if word.pieces:
                result[-1].append(word)
            result.append([])
            word = Word()
            continue
        parts = [span.text] if span.kind == "icon" else [p for p in _SPACES.split(span.text) if p]
        for part in parts:
            if span.kind == "text" and _SPACES.fullmatch(part):
                if word.pieces:
                    result[-1].append(word)
                    word = Word()
                word.spaces.append(Piece(" " * len(part), span.bold, span.italic))  # a tab prints as a space
            else:
                word.pieces.append(Piece(part, span.bold, span.italic, icon=span.kind == "icon"))
    if word.pieces:
        result[-1].append(word)
    return result


class TextMeasurer:
    """Measures pieces with a family's faces."""

    def __init__(self, fonts: FontBook, family: str) -> None:
        self.fonts = fonts
        self.family = family

    def piece_width(self, piece: Piece, size: float) -> float:
        """Width of one piece at a size."""
        if piece.icon:
            return ICON_WIDTH_EM * size
        return self.fonts.face(self.family, piece.bold, piece.italic).width(piece.text, size)

    def width(self, pieces: list[Piece], size: float) -> float:
        """Width of pieces drawn one after the other."""
        return sum(self.piece_width(p, size) for p in pieces)


def wrap(paragraphs: list[list[Word]], measurer: TextMeasurer, size: float,
         width: float) -> tuple[list[Line], bool]:
    """Greedy word wrap that keeps spaces as written except where a line wraps; says whether every word fits."""
    lines: list[Line] = []
    fits = True
    for paragraph in paragraphs:
        line = Line()
        for word in paragraph:
            w = measurer.width(word.pieces, size)
            fits = fits and w <= width + 1e-6
            extra = w + measurer.width(word.spaces, size)
            if line.words and line.width + extra > width + 1e-6:
                lines.append(line)
                line = Line([Word(word.pieces)], w)
            else:
                line.words.append(word)
                line.width += extra
        lines.append(line)
    return lines, fits


def fit_text(text: str, measurer: TextMeasurer, width: float, height: float, size: float,
             min_size: float, line_height: float = 1.2, max_lines: int | None = None,
             step: float = 0.05) -> Layout:
    """Lay out text at the largest size from `size` down to `min_size` (in steps) that fits the box."""
    words = paragraphs(parse(text))
    current = size
    while True:
        lines, wide_ok = wrap(words, measurer, current, width)
        tall = len(lines) * current * line_height
        fits = wide_ok and tall <= height + 1e-6 and (max_lines is None or len(lines) <= max_lines)
        if fits or current <= min_size:
            why = "" if fits else _overflow_reason(words, lines, measurer, current, width, height, line_height,
                                                   max_lines)
            return Layout(lines, current, fits, why)
        current = max(min_size, current - size * step)

ALIGN = {"left": 0.0, "center": 0.5, "right": 1.0}  # the share of a line's spare width left of it
VALIGN = {"top": 0.0, "middle": 0.5, "bottom": 1.0}  # the share of a box's spare height above its text


def _overflow_reason(words: list[list[Word]], lines: list[Line], measurer: TextMeasurer, size: float, width: float,
                     height: float, line_height: float, max_lines: int | None) -> str:
    """Which limit the text passes at its smallest size, and by how much (so the designer knows what to change)."""
    line = size * line_height
    if line > height + 1e-6:
        return (f"one line is {line:.1f}px high ({line_height:g} x the size {size:.1f}px) and the box is "
                f"{height:.1f}px high, {line - height:.1f}px too short; make the box taller or min_size smaller")
    widest = max((word for paragraph in words for word in paragraph), default=Word(),
                 key=lambda word: measurer.width(word.pieces, size))
    wide = measurer.width(widest.pieces, size)
    if wide > width + 1e-6:
        text = "".join(piece.text for piece in widest.pieces)
        return (f"the word '{text[:30]}' is {wide:.1f}px wide and the box {width:.1f}px, {wide - width:.1f}px "
                "too narrow; make the box wider or min_size smaller")
    if max_lines is not None and len(lines) > max_lines:
        return f"it takes {len(lines)} lines at this size and max_lines is {max_lines}"
    tall = len(lines) * line
    return (f"its {len(lines)} lines are {tall:.1f}px high ({line_height:g} x the size {size:.1f}px each) and the "
            f"box is {height:.1f}px high, {tall - height:.1f}px too short; shorten the text, enlarge the box or "
            "make min_size smaller")


@dataclass
class TextStyle:
    """How a text box draws: font, colour, alignment and line spacing."""

    family: str
    fill: str = "#000000"
    align: str = "left"
    valign: str = "top"
    line_height: float = 1.2
    icon_colors: dict[str, str] = field(default_factory=dict)


# The texts laid out in this process, for each FontBook (the faces a layout's widths come from; a game's is loaded
# again with its context): a game's cards repeat most of their texts (type lines, rules, costs: ~3 of gen1000's ~8.5
# text boxes a card had one before), so each is fitted once, and its SVG made once where it shows no icon (an icon's
# drawing is read from its file, which may change). ~0.15 ms of a gen1000 card's ~1 ms render; emptied when full.
_LAID_OUT: weakref.WeakKeyDictionary[FontBook, tuple[dict[tuple[Any, ...], Layout], dict[tuple[Any, ...], Markup]]] \
    = weakref.WeakKeyDictionary()
LAID_OUT_AT_MOST = 4096


def laid_out(text: str, measurer: TextMeasurer, box: tuple[float, float, float, float], size: float,
             min_size: float, max_lines: int | None, style: TextStyle,
             icon_lookup: Callable[[str], Icon]) -> tuple[Layout, Markup]:
    """`fit_text` of a text into a box (x, y, width, height) and its `layout_to_svg`, each as this process made
    it before from the same inputs (see `_LAID_OUT`). The layout is shared: read it, never change it."""
    x, y, width, height = box
    layouts, drawings = _LAID_OUT.setdefault(measurer.fonts, ({}, {}))
    if len(layouts) + len(drawings) >= LAID_OUT_AT_MOST:
        layouts.clear()
        drawings.clear()
    fitting = (text, measurer.family, width, height, size, min_size, style.line_height, max_lines)
    layout = layouts.get(fitting)
    if layout is None:
        layout = layouts[fitting] = fit_text(text, measurer, width, height, size, min_size, style.line_height,
                                             max_lines)
    drawing = (fitting, x, y, style.family, style.fill, style.align, style.valign)
    svg = drawings.get(drawing)
    if svg is None:
        svg = layout_to_svg(layout, x, y, width, height, style, measurer, icon_lookup)
        if not any(piece.icon for line in layout.lines for word in line.words for piece in word.pieces):
            drawings[drawing] = svg
    return layout, svg


def layout_to_svg(layout: Layout, x: float, y: float, width: float, height: float, style: TextStyle,
                  measurer: TextMeasurer, icon_lookup: Callable[[str], Icon]) -> Markup:
    """SVG markup for a laid-out text: one <text> per line, each run at an explicit x."""
    size = layout.size
    face = measurer.fonts.face(style.family)
    ascent = face.ascent / face.units_per_em * size
    block = len(layout.lines) * size * style.line_height
    top = y + VALIGN[style.valign] * (height - block)
    # The first baseline sits so that a line's ascent and half its extra leading are above it.
    baseline = top + ascent + (style.line_height - 1) * size / 2
    parts = []
    for line in layout.lines:
        left = x + ALIGN[style.align] * (width - line.width)
        parts.append(_line_svg(line, left, baseline, size, style, measurer, icon_lookup))
        baseline += size * style.line_height
    return Markup("".join(parts))


def _line_svg(line: Line, left: float, baseline: float, size: float, style: TextStyle,
              measurer: TextMeasurer, icon_lookup: Callable[[str], Icon]) -> str:
    spans, icons = [], []
    cursor = left
    for word in line.words:
        cursor += measurer.width(word.spaces, size)
        for piece in word.pieces:
            w = measurer.piece_width(piece, size)
            if piece.icon:
                color = style.icon_colors.get(piece.text, style.fill)
                icons.append(icon_svg(icon_lookup(piece.text), cursor + 0.05 * size, baseline - 0.85 * size,
                                      size, color))
            else:
                attrs = (' font-weight="bold"' if piece.bold else "") + (' font-style="italic"' if piece.italic else "")
                spans.append(f'<tspan x="{cursor:.2f}"{attrs}>{escape(piece.text)}</tspan>')
            cursor += w
    text = ""
    if spans:
        text = (f'<text y="{baseline:.2f}" font-family="{escape(style.family)}" font-size="{size:.2f}" '
                f'fill="{escape(style.fill)}" text-rendering="geometricPrecision" '
                f'xml:space="preserve">{"".join(spans)}</text>')
    return text + "".join(icons)


def icon_svg(icon: Icon, x: float, y: float, size: float, color: str) -> str:
    """An icon scaled into a size x size square at (x, y), drawn in a colour."""
    min_x, min_y, vw, vh = icon.viewbox
    scale = size / max(vw, vh)
    return (f'<g transform="translate({x:.2f} {y:.2f}) scale({scale:.5f}) translate({-min_x:g} {-min_y:g})" '
            f'color="{escape(color)}" fill="{escape(color)}">{icon.body}</g>')
