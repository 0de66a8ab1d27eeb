"""Output stages: each reads the build record and the card images and writes one kind of output.

A stage is a function `(game, record, out_dir) -> None` (see `cardgen.build.OutputStage`):
`record` is the build.json dict, `out_dir` the game's output folder being built (images are
at `out_dir / card["face"]`). A new output format is one new module here plus one line below.
"""
from __future__ import annotations


def default_stages() -> list:
    """The output stages `cardgen build` runs after the card PNGs and build.json, in order."""
    from cardgen.outputs.gallery import write_gallery
    from cardgen.outputs.pdf import print_stage
    from cardgen.outputs.pod import pod_stage
    from cardgen.outputs.tts import tts_stage

    return [print_stage, pod_stage, tts_stage, write_gallery]
