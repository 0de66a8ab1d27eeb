"""The registry of outputs: one line per output names the stage that writes it during `cardgen build` and, when it
has options, the model of its options, which is both game.yaml's section named like the output and its flags.

Everything is named as text ("module:name") and imported only where it is used: the manifest imports the options
models (they load with game.yaml, early in the pipeline, so they live in `cardgen.options` or any module that
imports nothing later than the manifest), a build imports the stages it runs, and a rebuild with nothing to do
imports neither. A new output is one module plus one line here.
"""
from __future__ import annotations

import importlib
from typing import Any, NamedTuple


class Output(NamedTuple):
    """One registered output."""

    stage: str  # "module:Class" of its stage (a `cardgen.outputs.stage.Stage`)
    options: str | None = None  # "module:Class" of its options model (pydantic): game.yaml's `<name>:` section
    command: str | None = None  # "module:name" of its own click command; an output with options gets one anyway
    # True: `cardgen build` runs it only when game.yaml's section of it says `build: true` (or a flag asks for it),
    # told without importing its stage (importing the stages a build does not run cost ~20 ms of every build)
    on_request: bool = False


# name -> output, in the order `cardgen build` runs their stages after the card PNGs.
OUTPUTS: dict[str, Output] = {
    "print": Output("cardgen.outputs.pdf:PrintStage", "cardgen.options.pdf:PrintSpec",
                    "cardgen.commands.print_cmd:print_command"),
    "pod": Output("cardgen.outputs.pod:PodStage", "cardgen.options.pod:PodSpec"),  # a `pod:` section, `build --pod`
    "tts": Output("cardgen.outputs.tts.stage:TTSStage", "cardgen.options.tts:TTSSpec",
                  "cardgen.commands.tts_cmd:tts_command"),
    "trimmed": Output("cardgen.outputs.trimmed:TrimmedStage", "cardgen.options.trimmed:TrimmedSpec", on_request=True),
    "playground": Output("cardgen.outputs.playground:PlaygroundStage", "cardgen.options.tables:PlaygroundSpec",
                         on_request=True),
    "pcio": Output("cardgen.outputs.pcio:PcioStage", "cardgen.options.tables:PcioSpec", on_request=True),
    "tabletopia": Output("cardgen.outputs.tabletopia:TabletopiaStage", "cardgen.options.tables:TabletopiaSpec",
                         on_request=True),
    "cut": Output("cardgen.outputs.cutting:CutStage", "cardgen.options.cutting:CutSpec", on_request=True),
    # before the gallery, which shows them; it has no section: only `build --guides` asks for it
    "guides": Output("cardgen.outputs.guides:GuidesStage", on_request=True),
    "gallery": Output("cardgen.outputs.gallery:GalleryStage"),
}


def imported(reference: str) -> Any:
    """The object a "module:name" reference names (its module is imported now)."""
    module, name = reference.split(":")
    return getattr(importlib.import_module(module), name)


def sections() -> dict[str, str]:
    """The manifest sections of the outputs: output name -> "module:Class" of its options model."""
    return {name: output.options for name, output in OUTPUTS.items() if output.options}
