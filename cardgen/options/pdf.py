"""The options of the print-and-play PDF: game.yaml's `print:` section and the flags of `cardgen print` (the stage
is `cardgen.outputs.pdf.PrintStage`), with what the sheets are laid out by derived from them (lengths in mm, the
grid, the sheet layout read from the workspace)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar, Literal, Mapping

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

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


def paper_name(paper: str) -> str:
    """A paper as file names say it: 'letter', 'a4', '210x297mm'."""
    return re.sub(r"[^a-z0-9.x-]+", "", paper.lower())


def layout_for(root: Path, name: str, papers: str | list[str], read_as: Mapping[str, str] | None = None
               ) -> SheetLayout:
    """The sheet layout called `name`, checked to be made for each of the papers; CardgenError if not (`read_as`:
    see `Catalogue.read`)."""
    layout = load_layout(root, name, read_as)
    for paper in [papers] if isinstance(papers, str) else papers:
        if not layout.fits_paper(paper):
            raise CardgenError(f"the layout '{name}' is made for a {layout.page[0]:g} x {layout.page[1]:g} mm "
                               f"page, not {paper} paper; print it on that paper (paper:, --paper) or choose "
                               "another layout")
    return layout


class PrintSpec(Strict):
    """Defaults of the print-and-play PDF; the flags of `cardgen print` override them.

    The options of one PDF are a PrintSpec of one paper whose sheet layout is read (`per_paper`); imposition
    reads the numbers it lays sheets out by from its properties (`margin_mm`, `grid_size`, `sheet_layout`...).
    """

    # A flag of one of these replaces the manifest's other: `--layout` over `grid: 3x3` prints with the layout.
    flag_replaces: ClassVar[dict[str, tuple[str, ...]]] = {"layout": ("grid",), "grid": ("layout",)}

    paper: str | list[str] = Field("letter", description="letter, a4, legal, a3, or a size such as 210x297mm or "
                                                         "8.5x11in; in game.yaml a list makes one PDF per paper")
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
    cut_lines: bool | Literal["auto"] = Field(
        "auto", description="thin lines along every trim; auto: on a page whose crop marks cannot stay out of the "
                            "unprintable band")
    back_marks: bool = Field(True, description="crop marks on back pages too")
    images: Literal["png", "jpeg"] = Field("png", description="png keeps text crisp; jpeg makes smaller files")
    jpeg_quality: int = Field(92, ge=50, le=100, description="JPEG quality of images: jpeg (50-100)")
    pod: bool = Field(False, description="also write the print-on-demand files (kept from before `pod:`: the same "
                                         "as a `pod:` section, The Game Crafter unless it names other vendors)",
                      json_schema_extra={"manifest_only": True})  # its flag: `build --pod`
    _sheet: SheetLayout | None = PrivateAttr(None)  # the sheet layout `layout` names, read by `per_paper`

    def per_paper(self, root: Path, read_as: Mapping[str, str] | None = None) -> list[PrintSpec]:
        """The options of each PDF: one per paper listed (one per file name), its sheet layout read from the
        workspace at `root` (CardgenError naming the layout's file and line, or when it is not for that paper;
        `read_as`: the game's `Game.read_as`, see `Catalogue.read`)."""
        pdfs: dict[str, PrintSpec] = {}
        for paper in self.papers:
            one = self.model_copy(update={"paper": paper})
            one._sheet = layout_for(root, self.layout, paper, read_as) if self.layout else None
            pdfs[one.paper_name] = one  # the last of two papers named alike, in the first one's place
        return list(pdfs.values())

    @property
    def sheet(self) -> str:
        """The paper of one PDF's sheets (the first one listed)."""
        return self.papers[0]

    @property
    def paper_name(self) -> str:
        """The paper as file names say it (`paper_name`)."""
        return paper_name(self.sheet)

    @property
    def sheet_layout(self) -> SheetLayout | None:
        """The sheet layout the cards go into (None: laid out to fit); read by `per_paper`."""
        if self.layout is not None and self._sheet is None:
            raise ValueError(f"the layout '{self.layout}' is read by per_paper(root) first")
        return self._sheet

    @property
    def gap_mm(self) -> float:
        """`gap` in mm."""
        return parse_length(self.gap)

    @property
    def margin_mm(self) -> float:
        """`margin` in mm."""
        return parse_length(self.margin)

    @property
    def unprintable_mm(self) -> float:
        """`unprintable` in mm."""
        return parse_length(self.unprintable)

    @property
    def back_offset_mm(self) -> tuple[float, float]:
        """`back_offset` as (x, y) in mm."""
        return parse_offset(self.back_offset)

    @property
    def grid_size(self) -> tuple[int, int] | None:
        """`grid` as (columns, rows), None when the cards are laid out to fit."""
        return parse_grid(self.grid) if self.grid else None

    def words(self) -> dict[str, str]:
        """Each option as a short word for file names ('fold', 'gap3mm', 'no-marks', ...), paper aside."""
        grid = self.grid_size
        return {"orientation": self.orientation, "duplex": self.duplex, "spacing": self.spacing,
                "gap": f"gap{self.gap_mm:g}mm", "margin": f"margin{self.margin_mm:g}mm",
                "back_offset": "offset{:g}x{:g}".format(*self.back_offset_mm),
                "crop_marks": "marks" if self.crop_marks else "no-marks",
                "cut_lines": {True: "cut-lines", False: "no-cut-lines", "auto": "auto-cut-lines"}[self.cut_lines],
                "back_marks": "back-marks" if self.back_marks else "no-back-marks",
                "images": self.images, "jpeg_quality": f"q{self.jpeg_quality}",
                "grid": "grid{}x{}".format(*grid) if grid else "" if self.layout else "fit",
                "layout": self.layout or "no-layout", "unprintable": f"edge{self.unprintable_mm:g}mm"}

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
