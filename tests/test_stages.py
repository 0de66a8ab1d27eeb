"""Output stages: options declared once (the manifest section), flags derived from it, one merge, findings
returned, per-card hooks, and a new output added with one module plus one registration line."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Literal, get_args, get_origin

import click
import pytest
from click.testing import CliRunner
from pydantic import BaseModel, Field

import cardgen.outputs
from cardgen.build import BuildOptions, build_game
from cardgen.cli import main
from cardgen.errors import CardgenError, Problem
from cardgen.manifest import PrintSpec, TTSSpec, load_game
from cardgen.outputs import stage_names
from cardgen.outputs.pdf import PrintStage
from cardgen.outputs.stage import Stage, StageContext, merge_options
from cardgen.record import BuildRecord
from tests.conftest import SIMPLE_MANIFEST


def _command(name: str) -> click.Command:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    return command


@pytest.mark.parametrize("command, model, excluded", [("print", PrintSpec, {"pod"}), ("tts", TTSSpec, set())])
def test_every_option_of_a_section_is_a_flag_of_its_command(command: str, model: type[BaseModel],
                                                             excluded: set[str]) -> None:
    params = {p.name: p for p in _command(command).params if isinstance(p, click.Option)}
    for name, field in model.model_fields.items():
        if name in excluded:
            assert name not in params
            continue
        option = params[name]
        assert option.default is None  # only flags given override the manifest
        assert field.description and field.description.split()[0] in (option.help or "")
        if field.annotation is bool:
            assert option.secondary_opts, name
        if get_origin(field.annotation) is Literal:
            assert isinstance(option.type, click.Choice)
            assert list(option.type.choices) == list(get_args(field.annotation))


def test_flags_keep_their_documented_names() -> None:
    assert "--marks" in {o for p in _command("print").params for o in p.opts}
    assert "--format" in {o for p in _command("tts").params for o in p.opts}


def test_one_merge_flags_given_over_the_manifest_section(tiny_game: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print:\n  paper: a4\n  duplex: none\n  gap: 3mm\n")
    game = load_game(tiny_game, "tiny")
    stage = PrintStage.for_game(game, {"duplex": "fold", "gap": None, "crop_marks": False})
    assert isinstance(stage.options, PrintSpec)
    assert (stage.options.paper, stage.options.duplex, stage.options.gap, stage.options.crop_marks) == \
        ("a4", "fold", "3mm", False)
    with pytest.raises(CardgenError, match="--paper: unknown paper 'napkin'"):
        merge_options(PrintSpec, game.options("print"), {"paper": "napkin"})


def test_a_bad_flag_is_one_located_line(tiny_game: Path) -> None:
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "print", "tiny", "--margin", "1mm"])
    assert result.exit_code == 1 and "--margin: must be at least 3 mm" in result.output
    assert "Traceback" not in result.output


class StampOptions(BaseModel):
    """The options of the test output (`stamp:` in a manifest would hold them)."""

    word: str = Field("hello", description="what to write")


def _hook(folder: str, key: str, image: object) -> None:
    """Per-card work: note each card's key and image size (picklable: a module function, partly applied)."""
    path = Path(folder) / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{getattr(image, 'size', None)}")


class StampStage(Stage):
    """A new output for the test: one file, one finding, and per-card work in the render workers."""

    name = "stamp"

    def run(self, ctx: StageContext) -> list[Problem]:
        (ctx.out_dir / "stamp.txt").write_text(f"{ctx.record.game.title}: {len(ctx.record.cards)} cards")
        return [Problem("the stamp is only a test", severity="warning", rule="stamp")]

    def card_work(self, game: object, record: BuildRecord, out_root: Path) -> dict:
        keys = [c.hash for c in record.cards] + [b.hash for b in record.backs.values()]
        return {key: functools.partial(_hook, str(out_root / "hooked"), key) for key in keys}


def test_a_new_output_is_one_module_plus_one_registration_line(tiny_game: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cardgen.outputs.STAGES, "stamp", "tests.test_stages:StampStage")
    out = tiny_game / "output"
    result = build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), None, stage_names())
    assert (out / "tiny" / "stamp.txt").read_text() == "Tiny: 3 cards"
    assert (out / "tiny" / "index.html").is_file() and (out / "tiny" / "tts").is_dir()
    assert [f.rule for f in result.findings] == ["stamp"]  # findings come back, nothing is logged
    assert [w["rule"] for w in json.loads((out / "tiny" / "build.json").read_text())["warnings"]] == ["stamp"]
    record = json.loads((out / "tiny" / "build.json").read_text())
    drawn = {c["hash"] for c in record["cards"]} | {b["hash"] for b in record["backs"].values()}
    assert {p.name for p in (out / "hooked").iterdir()} == drawn  # the work saw every image
    first = record["cards"][0]
    assert (out / "hooked" / first["hash"]).read_text() == str((first["pixels"]["width"], first["pixels"]["height"]))


def test_build_pod_selects_the_pod_stage(tiny_game: Path) -> None:
    args = ["--root", str(tiny_game), "build", "tiny", "-j", "1"]
    assert CliRunner().invoke(main, args).exit_code == 0
    assert not (tiny_game / "output" / "tiny" / "pod").exists()  # the manifest does not ask for it
    result = CliRunner().invoke(main, [*args, "--pod"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tiny_game / "output" / "tiny" / "pod" / "main").iterdir())[:2] == \
        ["001-alpha.png", "002-alpha.png"]


def test_the_manifest_pod_switch_enables_the_pod_stage(tiny_game: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print:\n  pod: true\n")
    assert SIMPLE_MANIFEST  # the tiny game's manifest, with the switch appended
    assert CliRunner().invoke(main, ["--root", str(tiny_game), "build", "tiny", "-j", "1"]).exit_code == 0
    assert (tiny_game / "output" / "tiny" / "pod" / "main" / "cards.csv").is_file()
