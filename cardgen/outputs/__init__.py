"""Output stages: each reads the build record and the card images and writes one kind of output.

A stage is a function `(game, record, out_dir) -> None` (see `cardgen.build.OutputStage`):
`record` is the build.json dict, `out_dir` the game's output folder being built (images are
at `out_dir / card["face"]`). A new output format is one new module here plus one line below.

The stages are named here as text and imported only when a build runs them: a rebuild with nothing
to do needs their names (part of the build settings) but none of their libraries.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cardgen.render import CardWork

# (module, function) of each stage `cardgen build` runs after the card PNGs and build.json, in order.
DEFAULT_STAGES = (("cardgen.outputs.pdf", "print_stage"), ("cardgen.outputs.pod", "pod_stage"),
                  ("cardgen.outputs.tts", "tts_stage"), ("cardgen.outputs.gallery", "write_gallery"))
# `--pod` writes the print-on-demand files whatever the manifest says.
ALWAYS_POD = ("cardgen.outputs.pod", "write_pod")


GUIDES = ("cardgen.outputs.guides", "write_guides")  # `--guides`: copies of the images with layout guides


def _chosen(pod: bool, guides: bool = False) -> list[tuple[str, str]]:
    stages = list(DEFAULT_STAGES)
    if pod:
        stages = [s for s in stages if s[1] != "pod_stage"] + [ALWAYS_POD]
    if guides:  # before the gallery, which shows them
        stages.insert(stages.index(("cardgen.outputs.gallery", "write_gallery")), GUIDES)
    return stages


def stage_names(pod: bool = False, guides: bool = False) -> list[str]:
    """The names of the stages `default_stages(pod, guides)` returns, without importing them."""
    return [name for _, name in _chosen(pod, guides)]


def default_stages(pod: bool = False, guides: bool = False) -> list:
    """The output stages of `cardgen build` (`pod`: print-on-demand files always; `guides`: layout guides)."""
    return [getattr(importlib.import_module(module), name) for module, name in _chosen(pod, guides)]


# The per-card work of stages that have some (see `cardgen.render.CardWork`), by stage name.
CARD_WORK = {"tts_stage": ("cardgen.outputs.tts", "stage_card_work")}


def card_work(stages: list, game: Any, record: Any, out_root: Path) -> dict[str, list[CardWork]]:
    """The stages' work on card images for the render workers, by image key."""
    work: dict[str, list[CardWork]] = {}
    for stage in stages:
        if getattr(stage, "__qualname__", None) in CARD_WORK:
            module, name = CARD_WORK[stage.__qualname__]
            for key, item in getattr(importlib.import_module(module), name)(game, record, out_root).items():
                work.setdefault(key, []).append(item)
    return work
