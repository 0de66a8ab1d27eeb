"""The options of the print-and-play PDF: game.yaml's `print:` section and the flags of `cardgen print` (the stage
is `cardgen.outputs.pdf.PrintStage`)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from cardgen.core.errors import CardgenError
from cardgen.core.units import parse_length, parse_offset, parse_paper
from cardgen.options import Strict
from cardgen.options.layouts import SheetLayout, load_layout

GRID = re.compile(r"^\s*(\d{1,2})\s*x\s*(\d{1,2})\s*$", re.IGNORECASE)
HOME_PRINTER_MM = 6.35  # the band along the paper edge most home printers cannot print: 1/4 in


def parse_grid(text: str) -> tuple[int, int]:
    """A grid 'COLUMNSxROWS' ('3x3') as (columns, rows)."""
    match = GRID.match(text)
    if not match or not all(1 <= int(n) <= 50 for n in match.groups()):
        raise ValueError(f"'{text}' is not a grid; expected columns x rows such as 3x3 (1 to 50 each)")
    return int(match.group(1)), int(match.group(2))


def layout_for(root: Path, name: str, papers: str | list[str]) -> SheetLayout:
    """The sheet layout called `name`, checked to be made for each of the papers; CardgenError if not."""
    layout = load_layout(root, name)
    for paper in [papers] if isinstance(papers, str) else papers:
        if not layout.fits_paper(paper):
            raise CardgenError(f"the layout '{name}' is made for a {layout.page[0]:g} x {layout.page[1]:g} mm "
                               f"page, not {paper} paper; print it on that paper (paper:, --paper) or choose "
                               "another layout")
    return layout


class PrintSpec(Strict):
    """Defaults of the print-and-play PDF; the flags of `cardgen print` override them."""

    # A flag of one of these replaces the manifest's other: `--layout` over `grid: 3x3` prints with the layout.
    flag_replaces: ClassVar[dict[str, tuple[str, ...]]] = {"layout": ("grid",), "grid": ("layout",)}

    paper: str | list[str] = Field("letter", description="letter, a4, legal, a3, or a size such as 210x297mm or "
                                                         "8.5x11in; a list makes one PDF per paper")
    orientation: Literal["auto", "portrait", "landscape"] = Field("auto", description="auto: whichever fits more cards")
    duplex: Literal["none", "long-edge", "short-edge", "fold"] = Field(
        "long-edge", description="none: backs in a separate PDF; long-edge/short-edge: a back page after each "
                                 "front; fold: fronts and mirrored backs on one page, fold in the middle")
    spacing: Literal["touching", "gap"] = Field(
        "touching", description="touching: cards share cuts, bleed clipped; gap: each card keeps its bleed")
    gap: str | float = Field("2mm", description="space between cards (bleed to bleed) when spacing is gap")
    margin: str | float = Field("6.35mm", description="least distance of a card from the paper edge (0: cards may "
                                                      "reach the edge)")
    grid: str | None = Field(None, description="columns x rows of cards on a page, e.g. 3x3 (tokens and boards "
                                               "are laid out to fit as many as the page holds)")
    layout: str | None = Field(None, description="a sheet layout: layouts/NAME.yaml of the workspace or a "
                                                 "bundled one, e.g. poker-3x3-a4 (see docs/print.md)")
    unprintable: str | float = Field(f"{HOME_PRINTER_MM}mm", description="the band along the paper edge the "
                                     "printer cannot print: crop marks stay out of it when there is room, and "
                                     "what falls in it is reported (0: a borderless printer)")
    back_offset: str | list[float] = Field("0,0", description="x,y in mm added to back pages (right, up); see "
                                                            "`cardgen calibrate`")
    crop_marks: bool = Field(True, description="crop marks in the margin", json_schema_extra={"flag": "marks"})
    cut_lines: bool = Field(False, description="thin lines along every trim")
    back_marks: bool = Field(True, description="crop marks on back pages too")
    images: Literal["png", "jpeg"] = Field("png", description="png keeps text crisp; jpeg makes smaller files")
    jpeg_quality: int = Field(92, ge=50, le=100, description="JPEG quality of images: jpeg (50-100)")
    pod: bool = Field(False, description="also write the print-on-demand files (kept from before `pod:`: the same "
                                         "as a `pod:` section, The Game Crafter unless it names other vendors)")

    @field_validator("paper")
    @classmethod
    def _paper(cls, value: str | list[str]) -> str | list[str]:
        papers = [value] if isinstance(value, str) else value
        if not papers:
            raise ValueError("list at least one paper")
        for paper in papers:
            parse_paper(paper)
        return value

    @property
    def papers(self) -> list[str]:
        """The papers to print on, one PDF each."""
        return [self.paper] if isinstance(self.paper, str) else list(dict.fromkeys(self.paper))

    @field_validator("back_offset")
    @classmethod
    def _offset(cls, value: str | list[float]) -> str | list[float]:
        parse_offset(value)
        return value

    @field_validator("margin", "gap", "unprintable")
    @classmethod
    def _length(cls, value: str | float) -> str | float:
        if parse_length(value) < 0:
            raise ValueError("must be at least 0 mm")
        if parse_length(value) > 100:
            raise ValueError("must be at most 100 mm")
        return value

    @field_validator("grid")
    @classmethod
    def _grid(cls, value: str | None) -> str | None:
        if value is not None:
            parse_grid(value)
        return value

    @field_validator("layout")
    @classmethod
    def _layout(cls, value: str | None, info: ValidationInfo) -> str | None:
        root = (info.context or {}).get("root")
        if value is not None and isinstance(root, Path):  # the manifest's (flags are checked where printed)
            try:
                layout_for(root, value, info.data.get("paper") or [])
            except CardgenError as exc:
                raise ValueError("; ".join(":".join(str(part) for part in (p.file, p.row) if part) + ": " + p.message
                                           if p.file else p.message for p in exc.problems)) from None
        return value

    @model_validator(mode="after")
    def _room_on_paper(self) -> PrintSpec:
        margin = parse_length(self.margin)
        for paper in self.papers:
            if 2 * margin + 20 > min(parse_paper(paper)):
                raise ValueError(f"a margin of {margin:g} mm leaves no room for cards on {paper} paper")
        if self.layout is not None and self.grid is not None:
            raise ValueError("give a grid or a layout, not both (a layout places every card itself)")
        if self.layout is not None and self.duplex == "fold":
            raise ValueError("a sheet layout fills the page; duplex: fold needs half of it for the backs")
        return self
