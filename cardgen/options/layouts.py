"""Sheet layouts: where the cards of one size go on a page, as a small YAML file a designer can write and reuse
(Squib calls them sprues). `print: {layout: NAME}` or `cardgen print --layout NAME` picks one: the workspace's
`layouts/NAME.yaml`, else one bundled with cardgen (`cardgen/assets/layouts/`).

```yaml
paper: a4                               # the paper it is made for (as `print: paper`), and its orientation
orientation: portrait
card: {width: 70mm, height: 99mm}       # the trim size of its slots (or a preset: poker, tarot, ...)
slots:                                  # each card's top-left corner, measured from the page's top-left
  - {x: 0, y: 0}
  - {x: 70mm, y: 0}
```

Cards whose trims touch share their cut lines (their bleed is cut off at the trim); cards apart keep their bleed.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping

from pydantic import Field, field_validator

from cardgen.core.bundled import ASSETS
from cardgen.core.errors import CardgenError
from cardgen.core.keypaths import line_of
from cardgen.core.units import CARD_PRESETS, parse_length, parse_paper
from cardgen.options import Strict
from cardgen.options.catalogue import Catalogue

# the workspace's own in layouts/, beside data/ and templates/
LAYOUTS = Catalogue("sheet layout", "layouts", "layouts", ASSETS / "layouts")
MAX_SLOTS = 500  # 5 mm cards on A3 touching are 4,700: a layout of more is a typo


class SlotSpec(Strict):
    """One card's place: the top-left corner of its trim box, from the page's top-left corner."""

    x: str | float
    y: str | float

    @field_validator("x", "y")
    @classmethod
    def _length(cls, value: str | float) -> str | float:
        if not 0 <= parse_length(value) <= 3000:
            raise ValueError(f"'{value}' is not on a page: 0 to 3,000 mm")
        return value


class CardSpec(Strict):
    """The trim size a layout's slots hold."""

    width: str | float
    height: str | float


class LayoutSpec(Strict):
    """A sheet layout file."""

    description: str | None = None
    paper: str
    orientation: Literal["portrait", "landscape"] = "portrait"
    card: CardSpec | str
    slots: list[SlotSpec] = Field(min_length=1, max_length=MAX_SLOTS)

    @field_validator("paper")
    @classmethod
    def _paper(cls, value: str) -> str:
        parse_paper(value)
        return value

    @field_validator("card")
    @classmethod
    def _card(cls, value: CardSpec | str) -> CardSpec | str:
        if isinstance(value, str) and value not in CARD_PRESETS:
            raise ValueError(f"unknown card size '{value}'; a preset ({', '.join(CARD_PRESETS)}) or "
                             "{width: 70mm, height: 99mm}")
        return value


@dataclass(frozen=True)
class SheetLayout:
    """A loaded layout in mm: the page as laid out, the card's trim size, each slot's top-left corner from the
    page's top-left, in reading order."""

    name: str
    page: tuple[float, float]
    card: tuple[float, float]
    slots: tuple[tuple[float, float], ...]

    @classmethod
    def of(cls, values: dict) -> SheetLayout:
        """A layout from its fields as JSON holds them (lists for tuples)."""
        return cls(values["name"], tuple(values["page"]), tuple(values["card"]),
                   tuple(tuple(s) for s in values["slots"]))

    def holds(self, width: float, height: float) -> bool:
        """Whether cards of this trim size go into the slots."""
        return abs(width - self.card[0]) < 0.05 and abs(height - self.card[1]) < 0.05

    def fits_paper(self, paper: str) -> bool:
        """Whether the layout is made for this paper (either way up)."""
        return sorted(parse_paper(paper)) == sorted(self.page)


def load_layout(root: Path, name: str, read_as: Mapping[str, str] | None = None) -> SheetLayout:
    """The layout called `name`: `layouts/<name>.yaml` of the workspace, else a bundled one. CardgenError with the
    file and line of each problem (`read_as`: see `Catalogue.read`)."""
    read = LAYOUTS.read(root, name, LayoutSpec, read_as)
    spec, shown, lines = read.spec, read.shown, read.lines
    layout = _resolved(name, spec)
    problem = _misplaced(layout)
    if problem is not None:
        index, message = problem
        raise CardgenError(f"slots.{index}: {message}", file=shown, row=line_of(lines, ("slots", index)))
    return layout


def _resolved(name: str, spec: LayoutSpec) -> SheetLayout:
    width, height = sorted(parse_paper(spec.paper))
    page = (height, width) if spec.orientation == "landscape" else (width, height)
    card = CARD_PRESETS[spec.card] if isinstance(spec.card, str) else \
        (parse_length(spec.card.width), parse_length(spec.card.height))
    return SheetLayout(name, page, card, tuple((parse_length(s.x), parse_length(s.y)) for s in spec.slots))


def _misplaced(layout: SheetLayout) -> tuple[int, str] | None:
    """The first slot off the page or over another one, with what is wrong."""
    (page_w, page_h), (card_w, card_h), tol = layout.page, layout.card, 1e-6
    for index, (x, y) in enumerate(layout.slots):
        if x + card_w > page_w + tol or y + card_h > page_h + tol:
            return index, (f"a {card_w:g} x {card_h:g} mm card at {x:g}, {y:g} mm runs off the {page_w:g} x "
                           f"{page_h:g} mm page")
        for other, (ox, oy) in enumerate(layout.slots[:index]):
            if x < ox + card_w - tol and ox < x + card_w - tol and y < oy + card_h - tol and oy < y + card_h - tol:
                return index, f"the card at {x:g}, {y:g} mm lies over slot {other}'s at {ox:g}, {oy:g} mm"
    return None
