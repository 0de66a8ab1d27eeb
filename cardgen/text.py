"""Text boxes for SVG: inline markup, word wrapping with the font's real widths, shrink to fit.

SVG has no automatic wrapping, so lines are laid out here and every run is placed at an
explicit x. Widths come from the bundled font's advance widths, which is what cairosvg draws
(no kerning) once text antialiasing is set up as in render.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from markupsafe import Markup, escape

from cardgen.fonts import FontBook
from cardgen.icons import Icon

# **bold**, *italic*, :icon-name:, a newline (real or written as \n), or a space.
_TOKEN = re.compile(r"\*\*(?P<bold>.+?)\*\*|\*(?P<italic>[^*\s][^*]*?)\*|:(?P<icon>[a-z][a-z0-9_-]*):"
                    r"|(?P<newline>\r?\n|\\n)|(?P<space>[ \t]+)")
ICON_PATTERN = re.compile(r":([a-z][a-z0-9_-]*):")
ICON_WIDTH_EM = 1.1  # an inline icon is drawn 1 em high and takes a little more than 1 em


@dataclass(frozen=True)
class Piece:
    """A run of text in one style, or an inline icon (text is then the icon's name)."""

    text: str
    bold: bool = False
    italic: bool = False
    icon: bool = False


@dataclass
class Line:
    """One laid-out line: its words (each a list of pieces) and its width."""

    words: list[list[Piece]] = field(default_factory=list)
    width: float = 0.0


@dataclass
class Layout:
    """The result of fitting a text into a box."""

    lines: list[Line]
    size: float
    fits: bool


def parse_markup(text: str) -> list[list[list[Piece]]]:
    """Split card text into paragraphs of words of styled pieces."""
    paragraphs: list[list[list[Piece]]] = [[]]
    word: list[Piece] = []

    def end_word() -> None:
        nonlocal word
        if word:
            paragraphs[-1].append(word)
            word = []

    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() > pos:
            word.append(Piece(text[pos:match.start()]))
        pos = match.end()
        kind = match.lastgroup or ""
        if kind in ("space", "newline"):
            end_word()
            if kind == "newline":
                paragraphs.append([])
        elif kind == "icon":
            word.append(Piece(match.group("icon"), icon=True))
        else:
            inner = match.group(kind)
            for i, part in enumerate(inner.split(" ")):  # styled runs can hold several words
                if i:
                    end_word()
                if part:
                    word.append(Piece(part, bold=kind == "bold", italic=kind == "italic"))
    if pos < len(text):
        word.append(Piece(text[pos:]))
    end_word()
    return paragraphs


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

    def word_width(self, word: list[Piece], size: float) -> float:
        """Width of a word made of pieces."""
        return sum(self.piece_width(p, size) for p in word)

    def space(self, size: float) -> float:
        """Width of a space."""
        return self.fonts.face(self.family).width(" ", size)


def wrap(paragraphs: list[list[list[Piece]]], measurer: TextMeasurer, size: float,
         width: float) -> tuple[list[Line], bool]:
    """Greedy word wrap; also says whether every word fits the width."""
    lines: list[Line] = []
    space = measurer.space(size)
    fits = True
    for paragraph in paragraphs:
        line = Line()
        for word in paragraph:
            w = measurer.word_width(word, size)
            fits = fits and w <= width + 1e-6
            extra = w + (space if line.words else 0)
            if line.words and line.width + extra > width + 1e-6:
                lines.append(line)
                line = Line([word], w)
            else:
                line.words.append(word)
                line.width += extra
        lines.append(line)
    return lines, fits


def fit_text(text: str, measurer: TextMeasurer, width: float, height: float, size: float,
             min_size: float, line_height: float = 1.2, max_lines: int | None = None,
             step: float = 0.05) -> Layout:
    """Lay out text at the largest size from `size` down to `min_size` (in steps) that fits the box."""
    paragraphs = parse_markup(text)
    current = size
    while True:
        lines, wide_ok = wrap(paragraphs, measurer, current, width)
        tall = len(lines) * current * line_height
        fits = wide_ok and tall <= height + 1e-6 and (max_lines is None or len(lines) <= max_lines)
        if fits or current <= min_size:
            return Layout(lines, current, fits)
        current = max(min_size, current - size * step)


@dataclass
class TextStyle:
    """How a text box draws: font, colour, alignment and line spacing."""

    family: str
    fill: str = "#000000"
    align: str = "left"
    valign: str = "top"
    line_height: float = 1.2
    icon_colors: dict[str, str] = field(default_factory=dict)


def layout_to_svg(layout: Layout, x: float, y: float, width: float, height: float, style: TextStyle,
                  measurer: TextMeasurer, icon_lookup: Callable[[str], Icon]) -> Markup:
    """SVG markup for a laid-out text: one <text> per line, each run at an explicit x."""
    size = layout.size
    face = measurer.fonts.face(style.family)
    ascent = face.ascent / face.units_per_em * size
    block = len(layout.lines) * size * style.line_height
    top = y + {"top": 0.0, "middle": (height - block) / 2, "bottom": height - block}[style.valign]
    # The first baseline sits so that a line's ascent and half its extra leading are above it.
    baseline = top + ascent + (style.line_height - 1) * size / 2
    parts = []
    for line in layout.lines:
        left = x + {"left": 0.0, "center": (width - line.width) / 2, "right": width - line.width}[style.align]
        parts.append(_line_svg(line, left, baseline, size, style, measurer, icon_lookup))
        baseline += size * style.line_height
    return Markup("".join(parts))


def _line_svg(line: Line, left: float, baseline: float, size: float, style: TextStyle,
              measurer: TextMeasurer, icon_lookup: Callable[[str], Icon]) -> str:
    spans, icons = [], []
    cursor = left
    space = measurer.space(size)
    for i, word in enumerate(line.words):
        if i:
            cursor += space
        for piece in word:
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
