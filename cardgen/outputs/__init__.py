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
    from cardgen.outputs.stage import Stage


def stage_names() -> list[str]:
    """The names of the registered stages, in the order a build runs them (nothing is imported)."""
    return list(OUTPUTS)


def stage_modules(stages: Sequence[object]) -> list[str]:
    """The modules of the named stages among `stages` (nothing is imported): the render workers import them as
    they start."""
    return [OUTPUTS[s].stage.split(":")[0] for s in stages if isinstance(s, str) and s in OUTPUTS]


def stage_class(name: str) -> type[Stage]:
    """The stage registered under a name (its module is imported now)."""
    return imported(OUTPUTS[name].stage)
