"""The options of the Tabletop Simulator export: game.yaml's `tts:` section and the flags of `cardgen tts` (the stage
is `cardgen.outputs.tts.TTSStage`)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from cardgen.options import Strict


class TTSSpec(Strict):
    """The `tts:` section: how the Tabletop Simulator saved object and its images are written."""

    image_format: Literal["jpeg", "png"] = Field("jpeg", description="format of card sheets and boards",
                                                 json_schema_extra={"flag": "format"})
    jpeg_quality: int = Field(92, ge=50, le=100, description="JPEG quality of sheets and boards (50-100)")
    base_url: str | None = Field(None, description="URL the images are uploaded to (default: local file:/// paths)")
    cutout: list[str] = Field(default_factory=list,
                              description="token decks exported as Custom_Token: shape cut from transparency")
