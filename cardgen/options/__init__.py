"""The options of cardgen's outputs: each model is game.yaml's section of one output (`print:`, `tts:`) and the
flags of its command. The registry (`cardgen.core.registry.OUTPUTS`) names each output's model next to its stage.

They load with the manifest, before any output stage runs, so they live here, early in the pipeline, and import
nothing later than the manifest. `Strict` is the base of every manifest model, these included.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base of every manifest model: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
