"""Output stages: options declared once (the manifest section), flags derived from it, one merge, findings
returned, per-card hooks, and a new output added with one module plus one registration line."""
from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path
from typing import Literal, get_args, get_origin

import click
import pytest
from click.testing import CliRunner
from pydantic import BaseModel, Field

import cardgen.build
import cardgen.options
import cardgen.outputs
from cardgen.build.build import BuildOptions, build_game, select_stages
from cardgen.commands.cli import main
from cardgen.core.errors import CardgenError, Problem
from cardgen.core.registry import OUTPUTS, Output, imported
from cardgen.load.manifest import load_game
from cardgen.options import Strict
from cardgen.options.pdf import PrintSpec
from cardgen.options.pod import PodSpec
from cardgen.options.trimmed import TrimmedSpec
from cardgen.outputs import stage_class, stage_modules, stage_names
from cardgen.outputs.pdf import PrintStage
from cardgen.outputs.stage import NoOptions, Stage, StageContext, merge_options, options_model
from cardgen.raster.render import DrawnCard
from cardgen.record.record import BuildRecord
from tests.conftest import REPO, SIMPLE_MANIFEST, hold_drawing, run_cli


def _command(name: str) -> click.Command:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    return command


@pytest.mark.parametrize("command", [name for name, output in OUTPUTS.items() if output.options])
def test_every_option_of_a_section_is_a_flag_of_its_command(command: str) -> None:
    model = options_model(command)
    assert model is not None
    params = {p.name: p for p in _command(command).params if isinstance(p, click.Option)}
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if extra.get("manifest_only"):  # game.yaml's only, as the field says
            assert name not in params
            continue
        option = params[name]
        assert option.default is None  # only flags given override the manifest
        assert field.description and field.description.split()[0] in (option.help or "")
        if field.annotation is bool or bool in get_args(field.annotation):  # cut_lines: bool | Literal["auto"]
            assert option.secondary_opts, name
        if get_origin(field.annotation) is Literal:
            assert isinstance(option.type, click.Choice)
            assert list(option.type.choices) == list(get_args(field.annotation))
        number = {int, float} & {field.annotation, *get_args(field.annotation)}
        if number and str not in get_args(field.annotation):  # a length with units (str | float) is text
            assert option.type is {int: click.INT, float: click.FLOAT}[number.pop()], name


def test_a_number_flag_is_typed_as_one_and_a_length_with_units_is_text(tiny_game: Path) -> None:
    # Before: `cardgen cut --help` showed `--gap TEXT` (a float field had no click type); only ints had one
    def shown(command: str, flag: str) -> str:
        return next(line.split()[1] for line in run_cli(tiny_game, command, "--help").output.splitlines()
                    if line.strip().startswith(flag + " "))

    assert shown("cut", "--gap") == "FLOAT" and shown("print", "--gap") == "TEXT"
    assert shown("print", "--jpeg-quality") == "INTEGER" and shown("trimmed", "--dpi") == "INTEGER"
    wrong = run_cli(tiny_game, "cut", "tiny", "--gap", "2mm", expect=2).output
    assert "Invalid value for '--gap': '2mm' is not a valid float" in wrong


def test_flags_keep_their_documented_names() -> None:
    assert "--marks" in {o for p in _command("print").params for o in p.opts}
    assert "--format" in {o for p in _command("tts").params for o in p.opts}


def test_one_merge_flags_given_over_the_manifest_section(tiny_game: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print:\n  paper: a4\n  duplex: none\n  gap: 3mm\n")
    game = load_game(tiny_game, "tiny")
    stage = PrintStage.for_game(game, {"duplex": "fold", "gap": None, "crop_marks": False})
    assert isinstance(stage.config, PrintSpec)
    assert (stage.config.paper, stage.config.duplex, stage.config.gap, stage.config.crop_marks) == \
        ("a4", "fold", "3mm", False)
    with pytest.raises(CardgenError, match="--paper: unknown paper 'napkin'"):
        merge_options(PrintSpec, game.options("print"), {"paper": "napkin"})


def test_a_bad_flag_is_one_located_line(tiny_game: Path) -> None:
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "print", "tiny", "--margin", "-1mm"])
    assert result.exit_code == 1 and "--margin: must be at least 0 mm" in result.output  # 0: cards to the edge
    assert "Traceback" not in result.output


class StampOptions(Strict):
    """The options of the test output: game.yaml's `stamp:` section and the flags of `cardgen stamp`."""

    word: str = Field("hello", description="what to write")
    shout: bool = Field(False, description="write it in capitals")


def _hook(folder: str, key: str, card: DrawnCard) -> None:
    """Per-card work: note each card's key and image size (picklable: a module function, partly applied)."""
    path = Path(folder) / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{card.image.size}")


class StampStage(Stage[StampOptions]):
    """A new output for the test: one file, one finding, and per-card work in the render workers."""

    name = "stamp"

    def run(self, ctx: StageContext) -> list[Problem]:
        word = self.config.word.upper() if self.config.shout else self.config.word
        (ctx.out_dir / "stamp.txt").write_text(f"{ctx.record.game.title}: {len(ctx.record.cards)} cards, {word}")
        return [Problem("the stamp is only a test", severity="warning", rule="stamp")]

    def card_work(self, game: object, record: BuildRecord, out_root: Path) -> dict:
        keys = [c.hash for c in record.cards] + [b.hash for b in record.backs.values()]
        return {key: functools.partial(_hook, str(out_root / "hooked"), key) for key in keys}


STAMP = Output(f"{__name__}:StampStage", options=f"{__name__}:StampOptions")  # the one registration line


def test_a_new_output_is_one_module_plus_one_registration_line(tiny_game: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(OUTPUTS, "stamp", STAMP)
    out = tiny_game / "output"
    result = build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), None, stage_names())
    assert (out / "tiny" / "stamp.txt").read_text() == "Tiny: 3 cards, hello"
    assert (out / "tiny" / "index.html").is_file() and (out / "tiny" / "tts").is_dir()
    letter = "a printer may not print"  # the print's own: 9 poker cards leave Letter's marks in the printer's band
    assert [f.rule for f in result.findings if letter not in f.message] == ["stamp"]  # they come back, not logged
    assert [w["rule"] for w in json.loads((out / "tiny" / "build.json").read_text())["warnings"]
            if letter not in w["message"]] == ["stamp"]
    record = json.loads((out / "tiny" / "build.json").read_text())
    drawn = {c["hash"] for c in record["cards"]} | {b["hash"] for b in record["backs"].values()}
    assert {p.name for p in (out / "hooked").iterdir()} == drawn  # the work saw every image
    first = record["cards"][0]
    assert (out / "hooked" / first["hash"]).read_text() == str((first["pixels"]["width"], first["pixels"]["height"]))


def test_a_new_outputs_options_are_its_manifest_section_and_its_flags(tiny_game: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "stamp:\n  word: howdy\n")
    unregistered = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "tiny", "-j", "1"])
    assert unregistered.exit_code == 1 and "unknown key 'stamp'" in unregistered.output

    monkeypatch.setitem(OUTPUTS, "stamp", STAMP)
    assert isinstance(load_game(tiny_game, "tiny").options("stamp"), StampOptions)
    built = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "tiny", "-j", "1"])
    assert built.exit_code == 0, built.output
    stamp = tiny_game / "output" / "tiny" / "stamp.txt"
    assert stamp.read_text() == "Tiny: 3 cards, howdy"  # the section is read

    listed = CliRunner().invoke(main, ["--help"])
    assert "stamp" in listed.output
    helped = CliRunner().invoke(main, ["stamp", "--help"])
    assert "--word" in helped.output and "--shout / --no-shout" in helped.output
    assert "game.yaml's stamp: word, else hello" in " ".join(helped.output.split())
    flagged = CliRunner().invoke(main, ["--root", str(tiny_game), "stamp", "tiny", "--shout"])
    assert flagged.exit_code == 0, flagged.output
    assert stamp.read_text() == "Tiny: 3 cards, HOWDY"  # flag over the manifest's section

    manifest.write_text(manifest.read_text().replace("  word: howdy", "  wrod: howdy"))
    typo = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "tiny", "-j", "1"])
    line = manifest.read_text().splitlines().index("  wrod: howdy") + 1
    assert typo.exit_code == 1
    assert f"data/tiny/game.yaml:{line}: error: stamp.wrod: unknown key 'wrod'; did you mean 'word'?" in typo.output


def test_an_output_section_cannot_take_a_manifest_key(tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(OUTPUTS, "title", STAMP)
    with pytest.raises(CardgenError, match="the output 'title' cannot have a section in game.yaml"):
        load_game(tiny_game, "tiny")


def test_build_pod_selects_the_pod_stage(tiny_game: Path) -> None:
    args = ["--root", str(tiny_game), "build", "tiny", "-j", "1"]
    assert CliRunner().invoke(main, args).exit_code == 0
    assert not (tiny_game / "output" / "tiny" / "pod").exists()  # the manifest does not ask for it
    result = CliRunner().invoke(main, [*args, "--pod"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tiny_game / "output" / "tiny" / "pod" / "thegamecrafter" / "main").iterdir()) \
        == ["001-alpha.png", "002-beta.png", "003-na.png", "back.png"]  # the default vendor's: a file per card


def test_the_manifest_pod_switch_enables_the_pod_stage(tiny_game: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print:\n  pod: true\n")
    assert SIMPLE_MANIFEST  # the tiny game's manifest, with the switch appended
    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "tiny", "-j", "1"]).exit_code == 0
    assert (tiny_game / "output" / "tiny" / "pod" / "thegamecrafter" / "quantities.csv").is_file()


class ProbeStage(Stage):
    """A stage noting what it found when it began: how many of the build's card files were placed."""

    name = "probe"

    def __init__(self, while_drawing: bool, notes: dict[str, object], wait_for: str | None = "") -> None:
        super().__init__()
        self.while_drawing, self.notes, self.waits = while_drawing, notes, wait_for

    def run(self, ctx: StageContext) -> list[Problem]:
        """Note what is there, let the held worker draw (see `hold_drawing`), and wait for a card file if told."""
        cards = ctx.out_dir / "cards"
        self.notes["placed at start"] = len(list(cards.rglob("*.png"))) if cards.is_dir() else 0
        (ctx.out_root / "go").touch()
        if self.waits != "":
            found = ctx.wait_for(self.waits)  # the image's file (its cache entry), maybe before its card file
            self.notes["there after waiting"] = self.waits is None or (found is not None and found.is_file())
        return []


def test_a_stage_that_can_runs_while_the_cards_are_drawn(tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tiny_game / "output"
    seen_go = hold_drawing(monkeypatch, out)
    beside, after = {}, {}
    stages = [ProbeStage(True, beside, "cards/main/beta.png"), ProbeStage(False, after)]
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), None, stages)
    # It began before any card was drawn (the workers waited for it), and waiting for a card image returned its file
    # once it was drawn.
    assert seen_go.read_text() == "True" and beside["placed at start"] == 0
    assert beside["there after waiting"] is True
    # A stage that does not say it can began once every card file was placed.
    assert after["placed at start"] == 3


class NotingStage(Stage):
    """A stage named as asked, which notes when it began and ended (in `log`, shared), after `pause` seconds; it
    touches `go` when it begins (see `hold_drawing`)."""

    def __init__(self, name: str, while_drawing: bool, log: list[str], reads: tuple[str, ...] = (),
                 pause: float = 0.0) -> None:
        super().__init__()
        self.name, self.while_drawing, self.reads, self.log, self.pause = name, while_drawing, reads, log, pause

    def run(self, ctx: StageContext) -> list[Problem]:
        """Note, touch `go`, pause, note."""
        self.log.append(f"{self.name} began")
        (ctx.out_root / "go").touch()
        time.sleep(self.pause)
        self.log.append(f"{self.name} ended")
        return [Problem(f"{self.name} ran", severity="warning")]


def test_stages_that_can_run_beside_the_drawing_each_in_a_thread_after_the_stages_they_read(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tiny_game / "output"
    seen_go = hold_drawing(monkeypatch, out)
    log: list[str] = []
    stages = [NotingStage("waits", False, log), NotingStage("slow", True, log, pause=0.3),
              NotingStage("reader", True, log, reads=("slow",))]
    result = build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), None, stages)
    # "slow" began while the workers were held (it let them draw), not after "waits", which waits for every card;
    # "reader" began once "slow" had ended; the findings come in the stages' order.
    assert seen_go.read_text() == "True"
    assert log.index("slow began") < log.index("waits began")
    assert log.index("slow ended") < log.index("reader began")
    assert [f.message for f in result.findings] == ["waits ran", "slow ran", "reader ran"]


class PlacementProbe(Stage):
    """A stage that waits for Alpha's image and then for its card file, noting what the staging folder holds, before
    it lets the held Beta be drawn (see `hold_drawing`)."""

    name = "placement-probe"
    while_drawing = True

    def __init__(self, notes: dict[str, bool]) -> None:
        super().__init__()
        self.notes = notes

    def run(self, ctx: StageContext) -> list[Problem]:
        """Wait for Alpha's card file (at most 10 s), note which card files are there, let Beta be drawn."""
        ctx.wait_for("cards/main/alpha.png")
        alpha, beta = ctx.out_dir / "cards" / "main" / "alpha.png", ctx.out_dir / "cards" / "main" / "beta.png"
        for _ in range(200):
            if alpha.is_file():
                break
            time.sleep(0.05)
        self.notes.update({"alpha placed": alpha.is_file(), "beta placed": beta.exists()})
        (ctx.out_root / "go").touch()
        return []


def test_card_files_are_placed_as_each_image_is_ready_while_the_others_are_drawn(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tiny_game / "output"
    seen_go = hold_drawing(monkeypatch, out, only="Beta")  # Beta's face waits until the probe has looked
    notes: dict[str, bool] = {}
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), None, [PlacementProbe(notes)])
    # The probe began while Beta was still waiting (the stage starts beside the drawing), and found Alpha's card file
    # placed in the staging folder before Beta was drawn: card files are not placed once every card is drawn.
    assert seen_go.read_text() == "True"
    assert notes == {"alpha placed": True, "beta placed": False}
    assert (out / "tiny" / "cards" / "main" / "beta.png").is_file()  # and Beta's was placed in the end


def test_a_stage_waiting_for_cards_that_fail_stops_and_the_build_says_why(tiny_game: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    out = tiny_game / "output"
    hold_drawing(monkeypatch, out, error="broken on purpose")
    notes: dict[str, object] = {}
    with pytest.raises(CardgenError, match="broken on purpose"):
        build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), None, [ProbeStage(True, notes, None)])
    assert "there after waiting" not in notes  # its wait ended with the drawing, not with the files
    assert not (out / "tiny").exists()  # and nothing was swapped in


def test_a_build_imports_no_stage_it_does_not_run() -> None:
    """The outputs run only on request (`build: true` in their section, or a flag) are told from the registry, and
    so is pod (a `pod:` section, or `print: {pod: true}`): a build that does not run them imports none of their
    modules (nor do its render workers as they start, but pod's); one whose game.yaml asks for one runs it."""
    import subprocess

    code = ("import sys; from pathlib import Path; from cardgen.build.build import select_stages; "
            "from cardgen.load.manifest import load_game; from cardgen.outputs import stage_names; "
            "from cardgen.core.registry import OUTPUTS; "
            "game = load_game(Path(sys.argv[1]), 'scrapbots'); "
            "print([stage.name for stage in select_stages(game, stage_names())]); "
            "print(sorted(name for name, output in OUTPUTS.items() if output.stage.split(':')[0] in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["['print', 'tts', 'gallery']", "['gallery', 'print', 'tts']"]
    assert stage_modules(stage_names()) == stage_modules(["print", "pod", "tts", "gallery"])
    game = load_game(REPO, "scrapbots")
    game.spec.trimmed = TrimmedSpec(build=True)
    assert [stage.name for stage in select_stages(game, ["print", "trimmed", "guides"])] == ["print", "trimmed"]
    assert [stage.name for stage in select_stages(game, ["trimmed", "guides"], always=("guides",))] == \
        ["trimmed", "guides"]
    assert [stage.name for stage in select_stages(game, ["print", "pod"], always=("pod",))] == ["print", "pod"]
    game.spec.print.pod = True
    assert [stage.name for stage in select_stages(game, ["print", "pod"])] == ["print", "pod"]
    game.spec.print.pod = False
    game.spec.pod = PodSpec(vendor=["mbprint"])  # a pod: section
    assert [stage.name for stage in select_stages(game, ["print", "pod"])] == ["print", "pod"]


def test_the_output_stages_import_their_libraries_only_when_they_draw() -> None:
    """Choosing the stages of a build imports their modules but not Pillow or reportlab: those are imported by the
    stages as they run (beside the drawing), off the path to the first card."""
    import subprocess

    code = ("import sys; from pathlib import Path; from cardgen.build.build import select_stages; "
            "from cardgen.load.manifest import load_game; "
            "select_stages(load_game(Path(sys.argv[1]), 'scrapbots'), ['tts', 'print', 'gallery']); "
            "print(sorted(m for m in ('PIL', 'reportlab') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_each_registered_stage_owns_the_options_model_the_registry_names() -> None:
    # the registry names the model as text for the manifest; the stage's `Stage[Model]` is what `self.config` is
    for name, output in OUTPUTS.items():
        stage = stage_class(name)
        assert stage.config_class is (options_model(name) or NoOptions), \
            f"{stage.__name__} is not Stage[{output.options}] as the registry's line for '{name}' says"


def test_each_registered_stage_with_card_work_names_its_work_module() -> None:
    """A stage that does work on card images in the render workers (`card_work`) names the module of that work in
    its registry line (`work`), which the workers import as they start; a stage without card work names none."""
    for name, output in OUTPUTS.items():
        has_work = stage_class(name).card_work is not Stage.card_work
        assert has_work == (output.work is not None), f"'{name}': card work {has_work}, registry's work {output.work}"
        if output.work is not None:
            importlib.import_module(output.work)


def _fields(cls: type) -> set[str]:
    """The fields a class holds (a pydantic model, a dataclass, a NamedTuple or annotations), lengths' `_mm`
    suffixes dropped: `gap_mm` copies `gap`."""
    if issubclass(cls, BaseModel):
        names = set(cls.model_fields)
    elif dataclasses.is_dataclass(cls):
        names = {f.name for f in dataclasses.fields(cls)}
    else:
        names = set(getattr(cls, "_fields", ())) | set(getattr(cls, "__annotations__", {}))
    return {name.removesuffix("_mm") for name in names}


def test_no_options_model_is_copied_into_a_second_class() -> None:
    # Before: PrintOptions (outputs/imposition.py) and TTSOptions (outputs/tts/) repeated the fields of the
    # `print:` and `tts:` models, filled by a second merge of their own
    models = [imported(output.options) for output in OUTPUTS.values() if output.options]
    copies = []
    for package in (cardgen.options, cardgen.outputs, cardgen.build):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for cls in vars(module).values():
                if isinstance(cls, type) and cls.__module__ == module.__name__ and cls not in models:
                    copies += [f"{module.__name__}.{cls.__name__} repeats {model.__name__}'s {sorted(shared)}"
                               for model in models if len(shared := _fields(cls) & set(model.model_fields)) >= 3]
    assert not copies, "options copied (use the model: `self.config`, its properties):\n  " + "\n  ".join(copies)


def test_every_output_a_build_writes_only_when_asked_has_its_build_flag(tiny_game: Path) -> None:
    # Before: `build --pod` and `--guides` were written by hand, and trimmed, playground, pcio, tabletopia and cut had
    # no flag: a new output off by default got none
    game = load_game(tiny_game, "tiny")  # no section of any output
    flags = {option for p in _command("build").params for option in p.opts}
    for name, output in OUTPUTS.items():
        off = not stage_class(name).for_game(game).enabled(game)
        assert off == bool(output.build_flag), f"'{name}' is {'off' if off else 'on'} by default: its registry " \
            f"line {'needs' if off else 'has no use for'} a build_flag (the help of `cardgen build --{name}`)"
        assert (f"--{name}" in flags) == off


def test_a_build_flag_writes_its_output_on_that_build(tiny_game: Path) -> None:
    game = tiny_game / "output" / "tiny"
    run_cli(tiny_game, "build", "tiny", "-j", "1")
    assert not (game / "trimmed").exists() and not (game / "cut").exists()
    run_cli(tiny_game, "build", "tiny", "-j", "1", "--trimmed", "--cut")
    assert any((game / "trimmed").rglob("*.png")) and any((game / "cut").rglob("*.pdf"))
