"""The options of the Tabletop Simulator export: game.yaml's `tts:` section and the flags of `cardgen tts` (the stage
is `cardgen.outputs.tts.TTSStage`)."""
from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from cardgen.options import Strict


class TTSSpec(Strict):
    """The `tts:` section: how the Tabletop Simulator saved object and its images are written."""

    image_format: Literal["jpeg", "png"] = Field("jpeg", description="format of card sheets and boards",
                                                 json_schema_extra={"flag": "format"})
    jpeg_quality: int = Field(92, ge=50, le=100, description="JPEG quality of sheets and boards (50-100)")
    base_url: str | None = Field(None, description="URL the images are uploaded to (default: local file:/// paths)")
    cutout: list[str] = Field(default_factory=list,
                              description="token decks exported as Custom_Token: shape cut from transparency")

    @field_validator("base_url")
    @classmethod
    def _web_address(cls, url: str | None) -> str | None:
        """Tabletop Simulator loads images from the web or from files: anything else is a typo or worse."""
        if url is not None and not re.fullmatch(r"(https?://|file:///)[^\s\"<>\\]+", url):
            raise ValueError(f"'{url}' is not a web address; expected http:// or https:// and the folder the "
                             "images are uploaded to (or file:/// and a folder)")
        return url
