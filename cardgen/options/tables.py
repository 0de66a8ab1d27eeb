"""The options of the exports to virtual tables: game.yaml's `playground:`, `pcio:` and `tabletopia:` sections and
the flags of `cardgen playground`, `cardgen pcio` and `cardgen tabletopia` (the stages are in
`cardgen.outputs.playground`, `cardgen.outputs.pcio` and `cardgen.outputs.tabletopia`). Each is off by default."""
from __future__ import annotations

from typing import Any

from pydantic import Field

from cardgen.options import Strict


def _build_field(folder: str) -> Any:
    """The `build:` key every table export has: write it on every build (game.yaml only; its command writes it once)."""
    return Field(False, description=f"write {folder} on every cardgen build", json_schema_extra={"manifest_only": True})


class PlaygroundSpec(Strict):
    """The `playground:` section: a Tabletop Playground package (card templates, their textures)."""

    build: bool = _build_field("playground/")
    dpi: int | None = Field(None, ge=30, le=1200,
                            description="resolution of the card textures, at most the cards' own (30-1200)")
    texture_size: int = Field(4096, ge=512, le=8192,
                              description="longest side of one texture in pixels (512-8192): a deck that needs "
                                          "more is split into several card templates")


class PcioSpec(Strict):
    """The `pcio:` section: a playingcards.io room file (`pcio/<game>.pcio`)."""

    build: bool = _build_field("pcio/")
    dpi: int = Field(150, ge=30, le=600, description="resolution of the card images in the room file (30-600)")


class TabletopiaSpec(Strict):
    """The `tabletopia:` section: images laid out for Tabletopia's workshop, one folder per component."""

    build: bool = _build_field("tabletopia/")
    px_per_mm: int = Field(10, ge=2, le=20, description="pixels per millimetre (Tabletopia's default: 10)")
