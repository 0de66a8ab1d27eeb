"""What a template draws with: the card's geometry and `CardHelpers`, the functions of one card's render (text
boxes, icons, images, lengths, colours). `helper_table.py` lists which of them a template sees."""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from cardgen.core.boxes import GuideBox
from cardgen.core.errors import CardgenError, Problem
from cardgen.core.units import MM_PER_INCH, PT_PER_INCH, mm_to_px
from cardgen.load.data import Card
from cardgen.load.fonts import FontBook
from cardgen.load.icons import IconLibrary
from cardgen.load.manifest import CardSize, Game
from cardgen.svg.text import Layout, TextMeasurer, TextStyle, icon_svg, laid_out

FIT_ASPECT = {"contain": "xMidYMid meet", "cover": "xMidYMid slice", "stretch": "none"}  # image(fit=...)


@dataclass(frozen=True)
class Box:
    """A rectangle in card pixels."""

    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Geometry:
    """Card geometry for templates: full (with bleed), trim and safe boxes in px, sizes in mm."""

    size: CardSize

    @property
    def width(self) -> int:
        """Full width in px, bleed included."""
        return self.size.full_width_px

    @property
    def height(self) -> int:
        """Full height in px, bleed included."""
        return self.size.full_height_px

    @property
    def bleed(self) -> float:
        """Bleed in px."""
        return mm_to_px(self.size.bleed_mm, self.size.dpi)

    @property
    def trim(self) -> Box:
        """The cut line."""
        b = self.bleed
        return Box(b, b, self.width - 2 * b, self.height - 2 * b)

    @property
    def safe(self) -> Box:
        """Where text and important art belong."""
        inset = self.bleed + mm_to_px(self.size.safe_mm, self.size.dpi)
        return Box(inset, inset, self.width - 2 * inset, self.height - 2 * inset)

    @property
    def mm(self) -> dict[str, float]:
        """Trim width, height, bleed and safe margin in mm."""
        s = self.size
        return {"width": s.width_mm, "height": s.height_mm, "bleed": s.bleed_mm, "safe": s.safe_mm}

    @property
    def svg_attrs(self) -> Markup:
        """Attributes for the root <svg>: namespace, pixel size and viewBox."""
        return Markup(f'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                      f'width="{self.width}" height="{self.height}" viewBox="0 0 {self.width} {self.height}"')


_UNIT_LENGTH = re.compile(r"^\s*(-?\d+(?:\.\d+)?|-?\.\d+)\s*(%|mm|cm|in|pt|px)\s*$")


class CardHelpers:
    """Functions a template calls for one card: text boxes, icons, images, unit conversion.

    Every position and length they take is a number of card pixels, or a text with a unit: `12mm`,
    `0.5in`, `9pt`, `40px`, or `50%` of the card as cut (x and widths of its width, y and heights of its
    height; positions are measured from the cut line). Colours may name the manifest's `colors:`.
    Each call records its box, for layout guides.
    """

    def __init__(self, game: Game, fonts: FontBook, icons: IconLibrary, size: CardSize,
                 card: Card | None, label: str, draft: bool = False) -> None:
        self.game, self.fonts, self.icons, self.dpi, self.card = game, fonts, icons, size.dpi, card
        self.label = label  # what its messages say it draws (`subject`)
        self.draft = draft  # a missing image is drawn as a placeholder (`build --draft`)
        self.geo = Geometry(size)
        self.files: list[Path] = []
        self.warnings: list[Problem] = []
        self.boxes: list[GuideBox] = []

    def mm(self, value: float) -> float:
        """Millimetres to card pixels."""
        return value / MM_PER_INCH * self.dpi

    def pt(self, value: float) -> float:
        """Points to card pixels (font sizes)."""
        return value / PT_PER_INCH * self.dpi

    def inch(self, value: float) -> float:
        """Inches to card pixels."""
        return value * self.dpi

    def length(self, value: Any, axis: str = "x", position: bool = False, name: str = "length") -> float:
        """A length (a width, a height, a size) in card pixels from a number or a text with a unit (`12mm`, `50%`
        of the trim size, ...); with `position`, a position as `position` below gives it."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        match = _UNIT_LENGTH.match(value) if isinstance(value, str) else None
        if match is None:
            shown = f"the text '{value}'" if isinstance(value, str) else repr(value)
            raise CardgenError(f"{name} is {shown}, not a number or a length such as 12mm or 50%; if it comes from "
                               "a data column, declare the column's type under fields: in game.yaml (e.g. cost: int)")
        number, unit = float(match.group(1)), match.group(2)
        if unit == "%":
            trim = self.geo.trim
            extent, start = (trim.width, trim.x) if axis == "x" else (trim.height, trim.y)
            return (start if position else 0.0) + number / 100 * extent
        return {"mm": self.mm(number), "cm": self.mm(number * 10), "in": self.inch(number), "pt": self.pt(number),
                "px": number}[unit]

    def position(self, value: Any, axis: str = "x") -> float:
        """A position in card pixels from the image's top-left corner, as the helpers take x and y: `"15%"` is 15%
        of the trim width (or height, axis "y") in from the cut line, a number or `"12mm"` from the image's edge.
        For raw SVG (`<rect x="{{ position('15%') }}"`): `length('15%')` is a width, counted from the image's edge."""
        return self.length(value, axis, True, "position")

    def color(self, value: Any) -> str:
        """A colour: a name from the manifest's `colors:` palette, or any SVG colour as given."""
        text = str(value)
        return self.game.spec.colors.get(text, text)

    def place(self, helper: str, x: Any, y: Any, width: Any, height: Any) -> tuple[float, float, float, float]:
        """A helper's box in card pixels from the position and size a template gave it (`length` of each)."""
        box = (self.length(x, "x", True, f"{helper}: x"), self.length(y, "y", True, f"{helper}: y"),
               self.length(width, "x", False, f"{helper}: width"), self.length(height, "y", False, f"{helper}: height"))
        return box

    @functools.cached_property
    def _icon_colors(self) -> dict[str, str]:
        """The colour of each icon the manifest colours (`icon_colors:`), made once a card, not once a text box."""
        return {k: self.color(v) for k, v in self.game.spec.icon_colors.items()}

    def text_box(self, text: Any, x: Any, y: Any, width: Any, height: Any, size: Any,
                 min_size: Any = None, font: str | None = None, fill: str = "#000000",
                 align: str = "left", valign: str = "top", line_height: float = 1.2,
                 max_lines: int | None = None, _helper: str = "text_box") -> Markup:
        """Wrap and shrink a text (with **bold**, *italic*, :icon:) into a box; warn when it overflows."""
        text = "" if text is None else unicodedata.normalize("NFC", str(text))  # accents as one character
        family = font or self.game.spec.font
        if not family:
            raise CardgenError(f"{_helper} needs font= (or a `font:` default in game.yaml)")
        bx, by, bw, bh = self.place(_helper, x, y, width, height)
        px = self.length(size, "y", False, f"{_helper}: size")
        least = self.length(min_size, "y", False, f"{_helper}: min_size") if min_size is not None else px
        style = TextStyle(family, self.color(fill), align, valign, line_height, self._icon_colors)
        layout, svg = laid_out(text, TextMeasurer(self.fonts, family), (bx, by, bw, bh), px, least, max_lines, style,
                               self.icons.get)
        if not layout.fits:
            self._overflow(text, layout)
        self.boxes.append(GuideBox(_helper, bx, by, bw, bh, text[:40], not layout.fits, layout.size))
        return svg

    def text_line(self, text: Any, x: Any, y: Any, width: Any, size: Any,
                  min_size: Any = None, **style: Any) -> Markup:
        """One line of text shrunk to fit the width (a title, a type line).

        `y` is the top of the line, not its baseline: the line's box is `size * 1.2` high and the
        text sits on a baseline inside it, as in a text_box of one line.
        """
        px = self.length(size, "y", False, "text_line: size")
        return self.text_box(text, x, y, width, px * 1.2, px, min_size, max_lines=1, _helper="text_line", **style)

    def icon(self, name: str, x: Any, y: Any, size: Any, color: str | None = None) -> Markup:
        """An icon by name or alias, size x size px at (x, y), recoloured."""
        color = self.color(color or self.game.spec.icon_colors.get(name, "#000000"))
        bx, by, side, _ = self.place("icon", x, y, size, size)
        self.boxes.append(GuideBox("icon", bx, by, side, side, str(name)))
        return Markup(icon_svg(self.icons.get(name), bx, by, side, color))

    def image(self, path: str, x: Any, y: Any, width: Any, height: Any, fit: str = "contain") -> Markup:
        """An image file from the game's data folder, placed in a box (fit: contain, cover or stretch)."""
        try:
            resolved = safe_path(self.game, str(path))
        except MissingImage:
            if not self.draft:
                raise
            return self._placeholder(str(path), *self.place("image", x, y, width, height))
        self.files.append(resolved)
        bx, by, bw, bh = self.place("image", x, y, width, height)
        self.boxes.append(GuideBox("image", bx, by, bw, bh, str(path)))
        aspect = FIT_ASPECT[fit]
        return Markup(f'<image x="{bx}" y="{by}" width="{bw}" height="{bh}" preserveAspectRatio="{aspect}" '
                      f'xlink:href="{escape(resolved.as_uri())}"/>')

    def _placeholder(self, path: str, bx: float, by: float, bw: float, bh: float) -> Markup:
        """What `--draft` draws for an image not made yet: its box crossed out, labelled with the file's name and
        the box's size (in Roboto Mono, bundled, whose letters are 0.6 em wide: the label is sized to fit)."""
        self.boxes.append(GuideBox("image", bx, by, bw, bh, path))
        mm = 25.4 / self.dpi
        lines = ["MISSING IMAGE", Path(path).name, f"{bw * mm:.0f} x {bh * mm:.0f} mm"]
        size = max(1.0, min(bh / 5, 0.9 * bw / (0.6 * max(map(len, lines)))))
        baseline = by + bh / 2 - size * 0.9  # three lines 1.2 em apart, centred on the box (0.35 em below centre)
        label = "".join(f'<text x="{bx + bw / 2:.2f}" y="{baseline + i * size * 1.2:.2f}" font-family="Roboto Mono" '
                        f'font-size="{size:.2f}" text-anchor="middle" fill="#000000">{escape(line)}</text>'
                        for i, line in enumerate(lines))
        stroke = max(1.0, min(bw, bh) / 100)
        return Markup(f'<g {PLACEHOLDER_MARK}><rect x="{bx}" y="{by}" width="{bw}" height="{bh}" '
                      f'fill="#ff00ff" fill-opacity="0.25" stroke="#ff00ff" stroke-width="{stroke:.2f}"/>'
                      f'<path d="M{bx},{by} L{bx + bw},{by + bh} M{bx + bw},{by} L{bx},{by + bh}" stroke="#ff00ff" '
                      f'stroke-width="{stroke:.2f}"/>{label}</g>')

    def _overflow(self, text: str, layout: Layout) -> None:
        card = self.card
        column = next((k for k, v in card.fields.items() if str(v) == text), None) if card else None
        self.warnings.append(Problem(f"{self.label}: text does not fit its box even at the minimum size "
                                     f"{layout.size:.1f}px: '{text[:40]}': {layout.why}",
                                     **_cell_of(card, column), rule="text-overflow", severity="warning"))


def _cell_of(card: Card | None, column: str | None) -> dict[str, Any]:
    """Where a finding about a card's text points: the cell holding it (its translation's, when translated)."""
    if card is None:
        return {"file": None, "row": None, "column": column}
    file, row, column = card.where(column)
    return {"file": file, "row": row, "column": column}


def safe_path(game: Game, path: str) -> Path:
    """Resolve a file named in data, relative to the game folder; refuse anything outside the project."""
    if "://" in path or path.startswith(("file:", "data:", "http:", "https:")):
        raise CardgenError(f"'{path}' is a URL; only files inside the project can be used")
    candidate = Path(path)
    if candidate.is_absolute():
        raise CardgenError(f"'{path}' is an absolute path; write it relative to data/{game.name}/")
    resolved = (game.data_dir / candidate).resolve()
    if not resolved.is_relative_to(game.root.resolve()):
        raise CardgenError(f"'{path}' leads outside the project folder; only files inside it can be used")
    if not resolved.is_file():
        raise MissingImage(f"image '{path}' does not exist (looked in data/{game.name}/); `cardgen build --draft` "
                           "draws a placeholder until it does", rule="image")
    return resolved


PLACEHOLDER_MARK = 'class="draft-placeholder"'  # on what `--draft` draws for a missing image


class MissingImage(CardgenError):
    """An image named inside the project that is not there (yet): `--draft` draws a placeholder for it."""

