"""One load per build (manifest, data, fonts, icons, each SVG rendered once) and what `build --force` does."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import cardgen.load.data
import cardgen.svg.templates
from cardgen.build.build import BuildOptions, build_game
from cardgen.commands.cli import main
from cardgen.load.data import csv_table, yaml_table
from cardgen.load.fonts import FontBook
from cardgen.load.icons import IconLibrary
from cardgen.load.manifest import Game
from tests.test_validate_support import mini_workspace, write_game


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return mini_workspace(tmp_path)


def _counting(monkeypatch: pytest.MonkeyPatch, calls: Counter, owner: object, name: str) -> None:
    original = getattr(owner, name)
    label = f"{getattr(owner, '__name__', owner)}.{name}"

    def counted(*args: object, **kwargs: object) -> object:
        calls[label] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def test_a_build_loads_the_game_once_and_renders_each_svg_once(ws: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter = Counter()  # counted where they are defined, so a load from anywhere counts
    for owner, name in ((Game, "__init__"), (FontBook, "__init__"), (IconLibrary, "__init__"),
                        (cardgen.load.data, "read_table")):
        _counting(monkeypatch, calls, owner, name)
    rendered: Counter = Counter()
    original = cardgen.svg.templates.SVGRenderer.make

    def render(self: object, template: str, key: str, deck: str, card: object) -> object:
        rendered[(template, key)] += 1
        return original(self, template, key, deck, card)  # type: ignore[arg-type]

    monkeypatch.setattr(cardgen.svg.templates.SVGRenderer, "make", render)
    result = build_game(ws, "mini", BuildOptions(tmp_path / "out", jobs=1))
    assert result.cards == 2
    assert calls == {"Game.__init__": 1, "FontBook.__init__": 1, "IconLibrary.__init__": 1,
                     "cardgen.load.data.read_table": 1}
    # validation's layout layer renders every face and the back; the build draws from those same SVGs
    assert rendered == {("face.svg", "alpha"): 1, ("face.svg", "beta"): 1, ("back.svg", "back.svg"): 1}


CARDS_WITH_A_BAD_ROW = """\
    name,kind,power,count,text
    Alpha,Unit,1,2,Gain 1 :scrap:.
    Broken,Unit,many,1,A power that is not a number
    Beta,Spell,2,1,**Bold** and *italic*
"""


def test_build_stops_on_a_data_error_without_force(ws: Path, tmp_path: Path) -> None:
    write_game(ws, files={"cards.csv": CARDS_WITH_A_BAD_ROW})
    result = CliRunner().invoke(main, ["--root", str(ws), "build", "--out", str(tmp_path / "o"), "-j", "1"])
    assert result.exit_code == 1
    assert "data/mini/cards.csv:3:power: error" in result.output
    assert not (tmp_path / "o" / "mini").exists()


def test_force_leaves_out_the_card_it_cannot_read_builds_the_rest_and_still_fails(ws: Path, tmp_path: Path) -> None:
    write_game(ws, files={"cards.csv": CARDS_WITH_A_BAD_ROW})
    args = ["--root", str(ws), "build", "--out", str(tmp_path / "o"), "-j", "1", "--force"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "data/mini/cards.csv:3:power: error" in result.output
    assert "data/mini/cards.csv:3: error: card 'broken' is left out of the build" in result.output
    record = json.loads((tmp_path / "o" / "mini" / "build.json").read_text())
    assert [c["id"] for c in record["cards"]] == ["alpha", "beta"]
    assert (tmp_path / "o" / "mini" / "cards" / "main" / "beta.png").is_file()
    assert not (tmp_path / "o" / "mini" / "cards" / "main" / "broken.png").exists()
    again = CliRunner().invoke(main, args)  # nothing changed: up to date, and still not a success
    assert again.exit_code == 1 and "up to date" in again.output and "left out" in again.output


def test_force_leaves_out_a_card_that_cannot_be_rendered(ws: Path, tmp_path: Path) -> None:
    face = '<svg {{ geo.svg_attrs }}>{{ icon("no-such-icon" if card.name == "Beta" else "scrap", 0, 0, 9) }}</svg>'
    write_game(ws, templates={"face.svg": face, "back.svg": '<svg {{ geo.svg_attrs }}/>'})
    result = build_game(ws, "mini", BuildOptions(tmp_path / "o", jobs=1, force=True))
    assert result.cards == 1
    assert any("card 'beta' is left out of the build: it cannot be rendered" in f.message for f in result.findings)


def test_data_readers_take_text_as_well_as_files() -> None:
    csv = csv_table("# a comment\nname;power\nAlpha;1\n", "generated")
    assert csv.header == ["name", "power"] and [r.values for r in csv.rows] == [{"name": "Alpha", "power": "1"}]
    assert (csv.rows[0].file, csv.rows[0].line) == ("generated", 3)
    yml = yaml_table("- &base {name: Alpha, power: 1}\n- {<<: *base, name: Beta}\n", "generated")
    assert [r.values for r in yml.rows] == [{"name": "Alpha", "power": "1"}, {"name": "Beta", "power": "1"}]
