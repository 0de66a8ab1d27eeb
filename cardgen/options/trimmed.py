"""The options of the trimmed images: game.yaml's `trimmed:` section and the flags of `cardgen trimmed` (the stage
is `cardgen.outputs.trimmed.TrimmedStage`)."""
from __future__ import annotations

from pydantic import Field

from cardgen.options import Strict


class TrimmedSpec(Strict):
    """The `trimmed:` section: every card and back cut at its trim line, without bleed (rulebooks, websites)."""

    build: bool = Field(False, description="write trimmed/ on every cardgen build",
                        json_schema_extra={"manifest_only": True})
    dpi: int | None = Field(None, ge=30, le=1200,
                            description="resolution of the trimmed images, at most the cards' own (30-1200)")
