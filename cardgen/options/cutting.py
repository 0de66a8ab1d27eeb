"""The options of the cutting-machine sheets: game.yaml's `cut:` section and the flags of `cardgen cut` (the stage
is `cardgen.outputs.cutting.CutStage`)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from cardgen.options import Strict


class CutSpec(Strict):
    """The `cut:` section: print-then-cut sheets and the cut files of the card outlines, per machine family."""

    build: bool = Field(False, description="write cut/ on every cardgen build",
                        json_schema_extra={"manifest_only": True})
    machine: Literal["all", "silhouette", "cricut", "brother"] = Field(
        "all", description="which machine family's sheets")
    paper: Literal["letter", "a4"] = Field(
        "letter", description="the paper the Silhouette and Brother sheets are printed on")
    gap: float = Field(1.0, ge=0.5, le=10, description="space between two cards on a sheet, in mm (0.5-10)")
