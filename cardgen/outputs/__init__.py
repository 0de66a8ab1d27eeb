"""Output stages: each reads the build record and the card images and writes one kind of output.

A stage is a `Stage` object (see `cardgen.outputs.stage`): a name, the options model that is its manifest
section, and `run(ctx) -> findings`. A new output format is one new module here plus one line in
`cardgen.core.registry.OUTPUTS`, which names its stage and its options model.

Stages are registered by name as text and imported only when a build runs them: a rebuild with nothing
to do needs their names (part of the build settings) but none of their libraries.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from cardgen.core.registry import OUTPUTS, imported

if TYPE_CHECKING:
    from cardgen.load.manifest import Game
    from cardgen.outputs.stage import Stage


def stage_names() -> list[str]:
    """The names of the registered stages, in the order a build runs them (nothing is imported)."""
    return list(OUTPUTS)


def stage_modules(stages: Sequence[object], on_request: bool = False) -> list[str]:
    """The modules of the named stages among `stages` that run on every build, and with `on_request` also those
    run only when asked for (nothing is imported): the code a build's outputs come from (`build_fingerprint`), and
    what a watch imports as it starts (it runs the stages in its own process)."""
    return [OUTPUTS[s].stage.split(":")[0] for s in stages if isinstance(s, str) and s in OUTPUTS
            and (on_request or not OUTPUTS[s].on_request)]


def work_modules(stages: Sequence[object]) -> list[str]:
    """The modules of the card work (`Stage.card_work`) of the named stages among `stages` that run on every build:
    the render workers import them as they start, before the game is loaded, not while a first job waits to be
    unpickled; they import nothing of the pipeline (a stage run only on request is imported with its first job)."""
    return [work for s in stages if isinstance(s, str) and s in OUTPUTS and not OUTPUTS[s].on_request
            and (work := OUTPUTS[s].work) is not None]


def requested(name: str, game: Game) -> bool:
    """Whether `cardgen build` runs the output registered as `name` for a game, as far as the registry tells
    without importing its stage: an output registered `on_request` only when game.yaml's section of it says
    `build: true`, one registered with `asked` when that function says so (`Stage.enabled` may say no to the
    others)."""
    output = OUTPUTS.get(name)
    if output is not None and output.asked is not None:
        return bool(imported(output.asked)(game))
    return output is None or not output.on_request or bool(getattr(game.options(name), "build", False))


def stage_class(name: str) -> type[Stage]:
    """The stage registered under a name (its module is imported now)."""
    return imported(OUTPUTS[name].stage)
