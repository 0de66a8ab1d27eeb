"""Print-on-demand vendor profiles: what a printing service wants, as a small YAML file (`cardgen/assets/vendors/`,
one per vendor; a workspace's `vendors/NAME.yaml` adds a vendor or replaces a bundled one). `pod: {vendor: NAME}`
or `cardgen pod GAME --vendor NAME` picks them.

```yaml
name: The Game Crafter
spec: https://help.thegamecrafter.com/...   # where the figures come from (docs/print.md cites it)
dpi: 300
bleed: 0.125in                      # added to the trim on every side
safe: 0.125in                       # inside the trim: keep text and art that matters out of the band
min_text_pt: 6                      # the smallest text it prints legibly, in points (0: no check)
sizes:                              # the card sizes it prints: trim, and the file's pixels when the spec says them
  poker: {width: 2.5in, height: 3.5in, pixels: [825, 1125]}
format: png                         # png: one image per file; pdf: pages
colour: rgb                         # or cmyk (converted with an ICC profile, `profile:`)
files: per-card                     # per-card: one file per unique card and a quantity; per-copy: a file per copy
order: fronts                       # pdf pages: back-front, front-back, fronts
group: deck                         # pdf: one file per deck, or per size (card format)
naming: "{deck}/{number:03d}-{id}"  # a file's name without its suffix
```
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping

from pydantic import Field, ValidationInfo, field_validator, model_validator

from cardgen.core.bundled import ASSETS
from cardgen.core.errors import CardgenError
from cardgen.core.keypaths import line_of
from cardgen.core.units import MM_PER_INCH, parse_length
from cardgen.options import Strict
from cardgen.options.catalogue import Catalogue

VENDORS = Catalogue("vendor", "vendors", "vendors", ASSETS / "vendors")  # a workspace's own, beside layouts/
BUNDLED_PROFILES = ASSETS / "icc"  # the ICC profiles a vendor file may name by file name
SIZE_TOLERANCE_MM = 0.3  # a card's trim matches a vendor's size within this (inch and mm presets round apart)
# None of the bundled vendors' specs names a smallest text size; 6 pt is the least a card printer's spec we found
# names (docs/print.md), and what a vendor file says when it does not say otherwise.
DEFAULT_MIN_TEXT_PT = 6.0
_FIELDS = ("deck", "number", "id", "name", "copy", "side", "size")


class VendorSize(Strict):
    """One card size a vendor prints: its trim and, when the spec gives it, the file's pixel size."""

    width: str | float
    height: str | float
    pixels: tuple[int, int] | None = None

    @field_validator("width", "height")
    @classmethod
    def _length(cls, value: str | float) -> str | float:
        if not 10 <= parse_length(value) <= 500:
            raise ValueError(f"'{value}' is not a card's side: 10 to 500 mm")
        return value


class VendorSpec(Strict):
    """A vendor profile file."""

    name: str = Field(min_length=1, max_length=100)
    spec: list[str] = Field(default_factory=list, description="the pages the figures come from")
    dpi: int = Field(300, ge=72, le=1200)
    bleed: str | float
    safe: str | float = 0.0
    min_text_pt: float = Field(DEFAULT_MIN_TEXT_PT, ge=0, le=72, description="the smallest text size it prints "
                                                                           "legibly (points); 0: no check")
    sizes: dict[str, VendorSize] = Field(min_length=1, max_length=100)
    format: Literal["png", "jpeg", "pdf"]
    colour: Literal["rgb", "cmyk"] = "rgb"
    profile: str | None = Field(None, description="the ICC profile of CMYK files: a bundled one by name, or a file "
                                                  "of the workspace")
    output_condition: str = "FOGRA39"
    ink_limit: int = Field(400, ge=100, le=400, description="the most total ink (C+M+Y+K, %) a card may have")
    rich_black: tuple[int, int, int, int] | None = Field(None, description="C, M, Y, K (%) for the cards' black")
    pdfx: bool = False
    files: Literal["per-card", "per-copy"] = "per-card"
    order: Literal["fronts", "back-front", "front-back"] = "fronts"
    group: Literal["deck", "size"] = "deck"
    naming: str = "{deck}/{number:03d}-{id}"

    @field_validator("bleed", "safe")
    @classmethod
    def _margin(cls, value: str | float) -> str | float:
        if not 0 <= parse_length(value) <= 20:
            raise ValueError(f"'{value}' must be 0 to 20 mm")
        return value

    @field_validator("naming")
    @classmethod
    def _naming(cls, value: str) -> str:
        fields = set(re.findall(r"{(\w+)", value))
        if not fields <= set(_FIELDS) or "id" not in fields and "number" not in fields:
            raise ValueError(f"'{value}' must name {{id}} or {{number}} and only {', '.join(_FIELDS)}")
        if ".." in value or value.startswith("/"):
            raise ValueError(f"'{value}' must stay inside the vendor's folder")
        return value

    @field_validator("sizes")
    @classmethod
    def _pixels(cls, value: dict[str, VendorSize], info: ValidationInfo) -> dict[str, VendorSize]:
        bleed, dpi = info.data.get("bleed"), info.data.get("dpi")
        if bleed is None or dpi is None:  # refused themselves
            return value
        for name, size in value.items():
            expected = _pixels(parse_length(size.width), parse_length(size.height), parse_length(bleed), dpi)
            if size.pixels is not None and tuple(size.pixels) != expected:
                raise ValueError(f"{name}: trim + bleed at {dpi} DPI is {expected[0]} x {expected[1]} px, not "
                                 f"{size.pixels[0]} x {size.pixels[1]}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> VendorSpec:
        if self.colour == "cmyk" and (not self.profile or self.format != "pdf"):
            raise ValueError("CMYK files are PDFs (format: pdf) made with an ICC profile (profile:)")
        if self.rich_black is not None and (not all(0 <= p <= 100 for p in self.rich_black)
                                            or sum(self.rich_black) > self.ink_limit):
            raise ValueError("rich_black: four percentages (C, M, Y, K, 0-100 each) within ink_limit")
        if self.pdfx and (self.format != "pdf" or self.colour != "cmyk"):
            raise ValueError("pdfx: true is for CMYK PDFs (format: pdf, colour: cmyk)")
        return self


@dataclass(frozen=True)
class Vendor:
    """A loaded vendor profile, lengths in mm."""

    key: str  # its file's name, as `--vendor` names it
    spec: VendorSpec
    bleed: float
    safe: float
    sizes: dict[str, tuple[float, float]]
    profile: Path | None  # the ICC profile file of CMYK output

    def size_of(self, width: float, height: float) -> str | None:
        """The name of the vendor's size a card's trim is (either way up), or None when it prints no such size."""
        for name, (w, h) in self.sizes.items():
            for a, b in ((w, h), (h, w)):
                if abs(a - width) <= SIZE_TOLERANCE_MM and abs(b - height) <= SIZE_TOLERANCE_MM:
                    return name
        return None

    def pixels(self, width: float, height: float) -> tuple[int, int]:
        """A file's pixel size for a trim size: trim + bleed on every side at the vendor's DPI."""
        return _pixels(width, height, self.bleed, self.spec.dpi)


def _pixels(width: float, height: float, bleed: float, dpi: int) -> tuple[int, int]:
    return round((width + 2 * bleed) / MM_PER_INCH * dpi), round((height + 2 * bleed) / MM_PER_INCH * dpi)


def load_vendor(root: Path, name: str, read_as: Mapping[str, str] | None = None) -> Vendor:
    """The vendor called `name`: `vendors/<name>.yaml` of the workspace, else a bundled one. CardgenError with the
    file and line of each problem (`read_as`: see `Catalogue.read`)."""
    read = VENDORS.read(root, name, VendorSpec, read_as)
    spec, shown, lines = read.spec, read.shown, read.lines
    profile = _profile(root, spec.profile, shown, line_of(lines, ("profile",))) if spec.profile else None
    sizes = {n: (parse_length(s.width), parse_length(s.height)) for n, s in spec.sizes.items()}
    return Vendor(name, spec, parse_length(spec.bleed), parse_length(spec.safe), sizes, profile)


def _profile(root: Path, name: str, shown: str, row: int | None) -> Path:
    """An ICC profile named by a vendor: a bundled one by file name, else a file of the workspace."""
    bundled = BUNDLED_PROFILES / name
    if "/" not in name and bundled.is_file():
        return bundled
    own = root / name
    if not own.resolve().is_relative_to(root.resolve()) or not own.is_file():
        raise CardgenError(f"profile: no ICC profile '{name}'; name a bundled one "
                           f"({', '.join(sorted(p.name for p in BUNDLED_PROFILES.glob('*.icc')))}) or a file of "
                           "the workspace, e.g. profiles/vendor.icc", file=shown, row=row)
    return own
