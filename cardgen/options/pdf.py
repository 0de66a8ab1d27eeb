"""The options of the print-and-play PDF: game.yaml's `print:` section and the flags of `cardgen print` (the stage
is `cardgen.outputs.pdf.PrintStage`)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from cardgen.core.units import parse_length, parse_offset, parse_paper
from cardgen.options import Strict


class PrintSpec(Strict):
    """Defaults of the print-and-play PDF; the flags of `cardgen print` override them."""

    paper: str | list[str] = Field("letter", description="letter, a4, legal, a3, or a size such as 210x297mm or "
                                                         "8.5x11in; a list makes one PDF per paper")
    orientation: Literal["auto", "portrait", "landscape"] = Field("auto", description="auto: whichever fits more cards")
    duplex: Literal["none", "long-edge", "short-edge", "fold"] = Field(
        "long-edge", description="none: backs in a separate PDF; long-edge/short-edge: a back page after each "
                                 "front; fold: fronts and mirrored backs on one page, fold in the middle")
    spacing: Literal["touching", "gap"] = Field(
        "touching", description="touching: cards share cuts, bleed clipped; gap: each card keeps its bleed")
    gap: str | float = Field("2mm", description="space between cards (bleed to bleed) when spacing is gap")
    margin: str | float = Field("6.35mm", description="least distance of a card from the paper edge")
    back_offset: str | list[float] = Field("0,0", description="x,y in mm added to back pages (right, up); see "
                                                            "`cardgen calibrate`")
    crop_marks: bool = Field(True, description="crop marks in the margin", json_schema_extra={"flag": "marks"})
    cut_lines: bool = Field(False, description="thin lines along every trim")
    back_marks: bool = Field(True, description="crop marks on back pages too")
    images: Literal["png", "jpeg"] = Field("png", description="png keeps text crisp; jpeg makes smaller files")
    jpeg_quality: int = Field(92, ge=50, le=100, description="JPEG quality of images: jpeg (50-100)")
    pod: bool = Field(False, description="also write print-on-demand PNGs (The Game Crafter sizes)")

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

    @field_validator("margin", "gap")
    @classmethod
    def _length(cls, value: str | float, info: Any) -> str | float:
        least = 3.0 if info.field_name == "margin" else 0.0
        if parse_length(value) < least:
            raise ValueError(f"must be at least {least:g} mm")
        if parse_length(value) > 100:
            raise ValueError("must be at most 100 mm")
        return value

    @model_validator(mode="after")
    def _room_on_paper(self) -> PrintSpec:
        margin = parse_length(self.margin)
        for paper in self.papers:
            if 2 * margin + 20 > min(parse_paper(paper)):
                raise ValueError(f"a margin of {margin:g} mm leaves no room for cards on {paper} paper")
        return self
