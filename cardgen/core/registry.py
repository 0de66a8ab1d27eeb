"""The registry of outputs: one line per output names the stage that writes it during `cardgen build` and, when it
has options, the model of its options, which is both game.yaml's section named like the output and its flags.

Everything is named as text ("module:name") and imported only where it is used: the manifest imports the options
models (they load with game.yaml, early in the pipeline, so they live in `cardgen.options` or any module that
imports nothing later than the manifest), a build imports the stages it runs, and a rebuild with nothing to do
imports neither. An output a build writes only when asked says so with the help of its `cardgen build --<name>`
flag, which the build command derives from here. A new output is one module plus one line here.
"""
from __future__ import annotations

import importlib
from typing import Any, NamedTuple


class Output(NamedTuple):
    """One registered output."""

    stage: str  # "module:Class" of its stage (a `cardgen.outputs.stage.Stage`)
    options: str | None = None  # "module:Class" of its options model (pydantic): game.yaml's `<name>:` section
    command: str | None = None  # "module:name" of its own click command; an output with options gets one anyway
    # For an output a build writes only when asked (its stage's `enabled` says no unless game.yaml asks): the help
    # of `cardgen build --<name>`, which asks for it on one build. None: every build writes it.
    build_flag: str | None = None
    # True: `cardgen build` runs it only when game.yaml's section of it says `build: true` (or a flag asks for it),
    # told without importing its stage (importing the stages a build does not run cost ~20 ms of every build)
    on_request: bool = False
    # "module:function" (game -> bool) telling whether a build runs it, for an output that runs when its game.yaml
    # says so otherwise than by `build: true`; imported instead of its stage, as `on_request` (pod: ~15 ms)
    asked: str | None = None
    # The module of its stage's work on card images (`Stage.card_work`), which the render workers unpickle with
    # their jobs and import as they start: a module importing nothing of the pipeline (no manifest, no pydantic)
    work: str | None = None


# name -> output, in the order `cardgen build` runs their stages after the card PNGs.
OUTPUTS: dict[str, Output] = {
    "print": Output("cardgen.outputs.pdf:PrintStage", "cardgen.options.pdf:PrintSpec",
                    "cardgen.commands.print_cmd:print_command", work="cardgen.outputs.print_work"),
    "pod": Output("cardgen.outputs.pod:PodStage", "cardgen.options.pod:PodSpec",
                  build_flag="Also write the print-on-demand files (game.yaml's pod: vendors) to pod/.",
                  asked="cardgen.options.pod:pod_asked"),
    "tts": Output("cardgen.outputs.tts.stage:TTSStage", "cardgen.options.tts:TTSSpec",
                  "cardgen.commands.tts_cmd:tts_command", work="cardgen.outputs.tts.work"),
    "trimmed": Output("cardgen.outputs.trimmed:TrimmedStage", "cardgen.options.trimmed:TrimmedSpec",
                      build_flag="Also write trimmed/: every face and back cut at its trim line, without bleed (as "
                                 "game.yaml's trimmed: {build: true}).", on_request=True),
    "playground": Output("cardgen.outputs.playground:PlaygroundStage", "cardgen.options.tables:PlaygroundSpec",
                         build_flag="Also write playground/: the Tabletop Playground package (as game.yaml's "
                                    "playground: {build: true}).", on_request=True),
    "pcio": Output("cardgen.outputs.pcio:PcioStage", "cardgen.options.tables:PcioSpec",
                   build_flag="Also write pcio/: the playingcards.io room file (as game.yaml's pcio: {build: true}).",
                   on_request=True),
    "tabletopia": Output("cardgen.outputs.tabletopia:TabletopiaStage", "cardgen.options.tables:TabletopiaSpec",
                         build_flag="Also write tabletopia/: the images and components.csv for Tabletopia's "
                                    "workshop (as game.yaml's tabletopia: {build: true}).", on_request=True),
    "cut": Output("cardgen.outputs.cutting:CutStage", "cardgen.options.cutting:CutSpec",
                  build_flag="Also write cut/: the cutting machines' print-then-cut sheets and cut files (as "
                             "game.yaml's cut: {build: true}).", on_request=True),
    # before the gallery, which shows them; it has no section: only `build --guides` asks for it
    "guides": Output("cardgen.outputs.guides:GuidesStage",
                     build_flag="Also write guides/: the card images with trim, bleed, safe zone and every text box, "
                                "icon and image box drawn over them (and turn the gallery's guides on). The real "
                                "outputs do not change.", on_request=True),
    "gallery": Output("cardgen.outputs.gallery:GalleryStage"),
}


def imported(reference: str) -> Any:
    """The object a "module:name" reference names (its module is imported now)."""
    module, name = reference.split(":")
    return getattr(importlib.import_module(module), name)


def asked_for() -> dict[str, str]:
    """The outputs a build writes only when asked, each with the help of its `cardgen build --<name>`."""
    return {name: output.build_flag for name, output in OUTPUTS.items() if output.build_flag}


def sections() -> dict[str, str]:
    """The manifest sections of the outputs: output name -> "module:Class" of its options model."""
    return {name: output.options for name, output in OUTPUTS.items() if output.options}
