"""The options of the print-on-demand export: game.yaml's `pod:` section and the flags of `cardgen pod` (the stage
is `cardgen.outputs.pod.PodStage`; the vendors are `cardgen.options.vendors`)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, ValidationInfo, field_validator

from cardgen.core.errors import CardgenError
from cardgen.options import Strict
from cardgen.options.vendors import load_vendor

if TYPE_CHECKING:
    from cardgen.load.manifest import Game


class PodSpec(Strict):
    """Which vendors' files `cardgen pod` and a build write (a `pod:` section in game.yaml turns the export on)."""

    vendor: list[str] = Field(default_factory=lambda: ["thegamecrafter"], min_length=1, max_length=20,
                              description="the vendors to write files for: thegamecrafter, makeplayingcards, "
                                          "drivethrucards, mbprint, or a workspace's vendors/NAME.yaml")
    profile: str | None = Field(None, description="an ICC profile file of the workspace for CMYK vendors, instead "
                                                  "of the vendor's (e.g. the one your printer sends)")

    @field_validator("vendor", mode="before")
    @classmethod
    def _one_vendor(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value  # `vendor: mbprint` is a list of one

    @field_validator("vendor")
    @classmethod
    def _vendors(cls, value: list[str], info: ValidationInfo) -> list[str]:
        root = (info.context or {}).get("root")
        if isinstance(root, Path):  # the manifest's (flags are checked when the export runs)
            for name in value:
                try:
                    load_vendor(root, name)
                except CardgenError as exc:
                    raise ValueError("; ".join(f"{p.file}:{p.row}: {p.message}" if p.file else p.message
                                               for p in exc.problems)) from None
        return list(dict.fromkeys(value))


def pod_asked(game: Game) -> bool:
    """Whether a build writes the print-on-demand files: game.yaml has a `pod:` section, or says `print: {pod: true}`
    (told without importing the stage: the registry's `asked`)."""
    return "pod" in game.spec.model_fields_set or bool(getattr(game.options("print"), "pod", False))
