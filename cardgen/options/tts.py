"""The options of the Tabletop Simulator export: game.yaml's `tts:` section and the flags of `cardgen tts` (the stage
is `cardgen.outputs.tts.stage.TTSStage`)."""
from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from cardgen.core.units import parse_length
from cardgen.options import Strict

MAX_SNAP_SIDE = 100  # cells a side of a grid of snap points (a 100 x 100 grid is 10,000 points)

_WEB_ADDRESS = r"^https?://[^\s\"<>\\]+$"


class UploadSpec(Strict):
    """`tts: upload:`: the S3-compatible bucket `cardgen tts --upload` puts the images in. No credentials here:
    they come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or the client's usual config."""

    bucket: str = Field(min_length=3, max_length=63, pattern=r"^[a-z0-9][a-z0-9.-]+[a-z0-9]$",
                        description="the bucket's name")
    prefix: str = Field("", max_length=200, pattern=r"^([A-Za-z0-9._-]+/)*$",
                        description="folder in the bucket, ending in / (default: none)")
    public_url: str = Field(pattern=_WEB_ADDRESS, description="address the bucket's objects are read from, "
                                                              "e.g. https://<bucket>.s3.amazonaws.com")
    endpoint_url: str | None = Field(None, pattern=_WEB_ADDRESS,
                                     description="the S3 API's address for R2, B2, MinIO (default: AWS)")
    region: str | None = Field(None, max_length=40, pattern=r"^[a-z0-9-]+$", description="the bucket's region")


class SnapGrid(Strict):
    """A grid of snap points on a board (`tts: snap_points: <board deck>:`): one at each cell's centre, the grid
    centred on the board unless `x`/`y` move it (lengths, as the board's `size:`)."""

    columns: int = Field(ge=1, le=MAX_SNAP_SIDE, description="cells across")
    rows: int = Field(ge=1, le=MAX_SNAP_SIDE, description="cells down")
    across: float = Field(gt=0, description="from one cell's centre to the next across (e.g. 25.4mm)")
    down: float = Field(gt=0, description="from one cell's centre to the next down")
    x: float = Field(0.0, description="the grid's centre right of the board's centre (default 0)")
    y: float = Field(0.0, description="the grid's centre below the board's centre (default 0)")

    @field_validator("across", "down", "x", "y", mode="before")
    @classmethod
    def _length(cls, value: object) -> float:
        """Lengths as the rest of game.yaml writes them: 25.4mm, 1in, or a bare number of mm."""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ValueError(f"'{value}' is not a length; expected a number with mm, cm, in or pt")
        return parse_length(value)


class TTSSpec(Strict):
    """The `tts:` section: how the Tabletop Simulator saved object and its images are written."""

    image_format: Literal["jpeg", "png"] = Field("jpeg", description="format of card sheets and boards",
                                                 json_schema_extra={"flag": "format"})
    jpeg_quality: int = Field(92, ge=50, le=100, description="JPEG quality of sheets and boards (50-100)")
    base_url: str | None = Field(None, description="URL the images are uploaded to (none: local file:/// paths)")
    cutout: list[str] = Field(default_factory=list,
                              description="token decks exported as Custom_Token: shape cut from transparency")
    upload: UploadSpec | None = Field(None, description="the bucket of `cardgen tts --upload`",
                                      json_schema_extra={"manifest_only": True})  # a bucket is no flag
    snap_points: dict[str, list[SnapGrid]] = Field(
        default_factory=dict, description="board decks' grids of snap points: where pieces go",
        json_schema_extra={"manifest_only": True})  # grids by deck are no flag

    @field_validator("base_url")
    @classmethod
    def _web_address(cls, url: str | None) -> str | None:
        """Tabletop Simulator loads images from the web or from files: anything else is a typo or worse."""
        if url is not None and not re.fullmatch(r"(https?://|file:///)[^\s\"<>\\]+", url):
            raise ValueError(f"'{url}' is not a web address; expected http:// or https:// and the folder the "
                             "images are uploaded to (or file:/// and a folder)")
        return url
