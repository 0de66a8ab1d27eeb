"""The options of cardgen's outputs: each model is game.yaml's section of one output (`print:`, `tts:`) and the
flags of its command. The registry (`cardgen.core.registry.OUTPUTS`) names each output's model next to its stage.

They load with the manifest, before any output stage runs, so they live here, early in the pipeline, and import
nothing later than the manifest. `Strict` is the base of every manifest model, these included.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base of every manifest model: unknown keys are errors, not silently ignored.

    Each model's validator is built at its first use, not as its module is imported: a game whose validated
    manifest is kept (`cardgen.load.manifest`) builds none of those it does not use.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
