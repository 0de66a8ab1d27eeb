"""What an output stage is: a name, an options model that is its manifest section, `run(ctx) -> findings`, and an
optional per-card hook the render workers call while a card's image is in memory.

A stage is generic over its options model, as MkDocs' plugins are over their config (`BasePlugin[Config]`):
`class PrintStage(Stage[PrintSpec])` owns `PrintSpec`, and `self.config` is a `PrintSpec`. That model is the one
place of the options: the manifest section named like the stage (`print:`, `tts:`; the registry,
`cardgen.core.registry.OUTPUTS`, names it as text for the manifest to import without the stage), the flags of its
command (derived from it: `commands.flags.option_flags`), merged over the manifest in one way (`merge_options`),
and the values derived from them (lengths in mm, grids) as its properties. Stages report what went wrong softly as
findings; they never log.
"""
from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Generic, Mapping, Self, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, ValidationError

from cardgen.core.errors import CardgenError, Problem, relative
from cardgen.core.registry import OUTPUTS, imported
from cardgen.load.freshness import PreviousOutputs
from cardgen.load.manifest import Game
from cardgen.options import Strict
from cardgen.outputs import requested
from cardgen.raster.render import CardWork
from cardgen.record.changes import Changes
from cardgen.record.record import BuildRecord

Config = TypeVar("Config", bound=BaseModel)
Model = TypeVar("Model", bound=BaseModel)


class NoOptions(Strict):
    """The options of a stage that has none (no manifest section, no flags)."""


@dataclass(frozen=True)
class StageContext:
    """What a stage reads and where it writes: the game, the build record, the folder being built."""

    game: Game
    record: BuildRecord
    out_dir: Path  # the game's output folder being written (a staging folder during `cardgen build`)
    final_dir: Path  # where that folder ends up (for URLs that name files at their final place)
    previous: PreviousOutputs | None = None  # the previous build's files a build may keep (not made again)
    # Waits until the card image at a path of the build record (every image: None) is drawn and the workers'
    # `card_work` on it is done, and returns the file to read it from (its cache entry, there before the card file
    # is in `out_dir`; None: the card file). A build runs a stage that says it can (`Stage.while_drawing`) while its
    # cards are still being drawn; such a stage calls this (or `image_file`) before it reads an image or its work.
    wait_for: Callable[[str | None], Path | None] = lambda path: None
    # What changed since the build this one replaces, when the build knows it (None: a stage finds out itself)
    changes: Changes | None = None
    # Processes a stage may hand work to (a build's render workers): they take it once they have drawn every card
    helpers: Executor | None = None

    def image_file(self, path: str) -> Path:
        """The file holding the card image at a path of the build record, once it is drawn (see `wait_for`)."""
        return self.wait_for(path) or self.out_dir / path

    @property
    def out_root(self) -> Path:
        """The output root: its `.cache/` holds every stage's caches."""
        return self.final_dir.parent


class Stage(Generic[Config]):
    """Base of an output stage, generic over its options model: `class ScoresStage(Stage[ScoresSpec])`, or a
    plain `Stage` for one without options. Subclasses set `name`, the name it is registered under in `OUTPUTS`."""

    name: ClassVar[str]
    # The options model: the class argument of `Stage[...]` (set by `__init_subclass__`), NoOptions without one.
    config_class: ClassVar[type[BaseModel]] = NoOptions
    # Whether `run` may begin while the cards are drawn: it waits for the card files it reads (`ctx.wait_for`).
    # Other stages begin once every card file is placed.
    while_drawing: ClassVar[bool] = False
    # The stages whose output `run` reads, by name: when a build runs them too, this stage runs after them.
    reads: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Take the options model from the class argument: `Stage[PrintSpec]` owns `PrintSpec`."""
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):  # its own bases, not a parent class's
            if get_origin(base) is Stage and isinstance(model := get_args(base)[0], type):
                cls.config_class = model

    def __init__(self, config: Config | None = None) -> None:
        # the model's defaults when none is given (a stage made by hand, as in tests)
        self.config = config if config is not None else cast(Config, self.config_class())

    @classmethod
    def for_game(cls, game: Game, flags: dict[str, Any] | None = None) -> Self:
        """The stage with the game's manifest section, command-line flags (those given) on top."""
        return cls(cast(Config, merge_options(cls.config_class, game.options(cls.name), flags)))

    def enabled(self, game: Game) -> bool:
        """Whether `cardgen build` runs this stage for a game: all do, unless a stage says otherwise, but those
        registered `on_request` only when game.yaml's section of the output says `build: true` (`requested`)."""
        return requested(self.name, game)

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write this output into `ctx.out_dir`; return findings (warnings) for the designer."""
        raise NotImplementedError

    def card_work(self, game: Game, record: BuildRecord, out_root: Path) -> Mapping[str, CardWork]:
        """This stage's work on card images, by image key (its content hash), for the render workers.

        Each item is called in a worker with the card while it is in memory (a `DrawnCard`: its pixels; see
        `CardWork`), so that per-card output work (a TTS
        sheet cell) is done there and kept in a `Cache` under `out_root` for `run` to read. Most stages have
        none.
        """
        return {}


def options_model(output: str) -> type[BaseModel] | None:
    """The options model of a registered output (its manifest section), or None when it has no options."""
    reference = OUTPUTS[output].options
    return imported(reference) if reference else None


def merge_options(model: type[Model], base: BaseModel | None, flags: dict[str, Any] | None) -> Model:
    """The one merge of options: command-line flags that were given (not None) over the manifest's section.

    A flag value the model refuses is a CardgenError naming the flag.
    """
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    if not given and isinstance(base, model):  # validated with the manifest: a copy, with no validator built again
        return base.model_copy(deep=True)
    manifest = base.model_dump() if base else {}
    replaces: dict[str, tuple[str, ...]] = getattr(model, "flag_replaces", {})
    for flag in given:  # a flag for one of two exclusive options drops the manifest's other
        for other in replaces.get(flag, ()):
            manifest.pop(other, None)
    try:
        return model.model_validate({**manifest, **given})
    except ValidationError as exc:
        raise CardgenError([_flag_problem(e["loc"], e["msg"]) for e in exc.errors()]) from None


def _flag_problem(loc: tuple, message: str) -> Problem:
    flag = "--" + "-".join(str(p) for p in loc).replace("_", "-") if loc else "options"
    return Problem(f"{flag}: {message.removeprefix('Value error, ')}")


def manifest_file(game: Game) -> str:
    """The game's manifest as findings show it."""
    return relative(game.manifest_path, game.root)
