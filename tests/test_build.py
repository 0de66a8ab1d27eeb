"""Whole builds: card files, build.json, PNG sizes, the Scrapbots reference card, the CLI, atomic output."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from cardgen.commands.cli import main
from tests.conftest import REPO

REFERENCE = REPO / "tests" / "reference" / "scrapbots-scout.png"


@pytest.fixture
def scrapbots_build(built_example: Path) -> Path:
    """The example game's output folder, from the session's one build (read only)."""
    return built_example / "output" / "scrapbots"


def test_build_record_lists_every_card(scrapbots_build: Path) -> None:
    record = json.loads((scrapbots_build / "build.json").read_text())
    cards = [c for c in record["cards"] if c["kind"] == "card"]
    assert sum(c["copies"] for c in cards) == 100
    assert record["game"]["title"] == "Scrapbots"
    for card in cards:
        assert {"id", "deck", "name", "copies", "face", "back", "source", "size_mm", "bleed_mm", "dpi"} <= set(card)
        assert (scrapbots_build / card["face"]).is_file() and (scrapbots_build / card["back"]).is_file()
        assert card["face"] == f"cards/{card['deck']}/{card['id']}.png"
        assert card["source"]["file"] == "data/scrapbots/cards.csv" and card["source"]["row"] > 1
    ids = [c["id"] for c in record["cards"]]
    assert len(ids) == len(set(ids))


def test_png_size_is_trim_plus_bleed_at_dpi(scrapbots_build: Path) -> None:
    record = json.loads((scrapbots_build / "build.json").read_text())
    for card in record["cards"][:5]:
        image = Image.open(scrapbots_build / card["face"])
        w = round((card["size_mm"]["width"] + 2 * card["bleed_mm"]) / 25.4 * card["dpi"])
        h = round((card["size_mm"]["height"] + 2 * card["bleed_mm"]) / 25.4 * card["dpi"])
        assert image.size == (w, h) == (825, 1125) and image.mode == "RGB"


def test_one_back_rendered_for_all_cards(scrapbots_build: Path) -> None:
    record = json.loads((scrapbots_build / "build.json").read_text())
    assert {c["back"] for c in record["cards"] if c["kind"] == "card"} == {"backs/back.png"}


def test_scrapbots_card_matches_reference(scrapbots_build: Path) -> None:
    """Compare one rendered card with the stored reference, within a small pixel tolerance."""
    rendered = Image.open(scrapbots_build / "cards" / "center" / "scout.png").convert("RGB")
    if os.environ.get("CARDGEN_UPDATE_REFERENCE"):
        rendered.save(REFERENCE)
    reference = Image.open(REFERENCE).convert("RGB")
    assert rendered.size == reference.size
    diff = np.abs(np.asarray(rendered, dtype=np.int16) - np.asarray(reference, dtype=np.int16))
    assert diff.mean() < 1.0, f"mean pixel difference {diff.mean():.2f}"
    assert (diff.max(axis=2) > 64).mean() < 0.002, "more than 0.2% of pixels differ strongly"


def test_reference_comparison_can_fail(scrapbots_build: Path) -> None:
    """The tolerance is tight enough to see a different card."""
    other = np.asarray(Image.open(scrapbots_build / "cards" / "center" / "drone.png").convert("RGB"), dtype=np.int16)
    reference = np.asarray(Image.open(REFERENCE).convert("RGB"), dtype=np.int16)
    assert (np.abs(other - reference).max(axis=2) > 64).mean() > 0.002


def test_cli_build_and_list(tiny_game: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--root", str(tiny_game), "build", "--jobs", "1", "--svg"])
    assert result.exit_code == 0, result.output
    assert "tiny: 3 cards (6 with copies), 4 drawn, 0 from cache" in result.output
    out = tiny_game / "output" / "tiny"
    assert (out / "cards" / "main" / "alpha.svg").is_file() and (out / "backs" / "back.png").is_file()
    again = runner.invoke(main, ["--root", str(tiny_game), "build", "--jobs", "1"])
    assert "0 drawn, 4 from cache" in again.output
    listing = runner.invoke(main, ["--root", str(tiny_game), "list"])
    assert listing.exit_code == 0 and "main: 3 cards, 6 with copies, 63.5 x 88.9 mm" in listing.output


def test_cli_error_is_one_line_without_traceback(tiny_game: Path) -> None:
    (tiny_game / "data" / "tiny" / "cards.csv").write_text("name,power\nAlpha,strong\n")
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "--jobs", "1"])
    assert result.exit_code == 1
    assert "data/tiny/cards.csv:2:power: error: 'strong' is not a whole number" in result.output
    assert "Traceback" not in result.output


def test_failed_build_keeps_previous_output(tiny_game: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    record = tiny_game / "output" / "tiny" / "build.json"
    before = record.read_text()
    (tiny_game / "templates" / "tiny" / "face.svg").write_text("<svg {{ geo.svg_attrs }}>{{ card.oops }}</svg>")
    result = runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"])
    assert result.exit_code == 1
    assert record.read_text() == before
    assert not [p for p in (tiny_game / "output").iterdir() if p.name.startswith(".tiny")]


def test_out_option(tiny_game: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "build", "-j", "1", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0 and (tmp_path / "o" / "tiny" / "build.json").is_file()
    shutil.rmtree(tmp_path / "o")


@pytest.mark.parametrize("card_id", ["../escaped", f"deep{os.sep}..{os.sep}..{os.sep}..{os.sep}escaped"])
def test_card_files_refuse_a_path_that_leads_out_of_the_output_folder(tmp_path: Path, card_id: str) -> None:
    """A card whose id would place its file outside the build's folder (ids are checked on loading: this is the
    last guard) is refused before any file is placed."""
    from types import SimpleNamespace

    from cardgen.build.plan import CardFiles
    from cardgen.core.errors import CardgenError

    def art(name: str) -> SimpleNamespace:  # a face's artwork is named by its card's id
        return SimpleNamespace(name=name, deck="main", key="k", cache_path=tmp_path / "k.png")

    plan = SimpleNamespace(backs={"back": art("back")}, faces={"fine": art("fine"), card_id: art(card_id)},
                           cards=[SimpleNamespace(deck="main", id="fine"), SimpleNamespace(deck="main", id=card_id)],
                           number=0, since=None)
    with pytest.raises(CardgenError, match="outside the output folder"):
        CardFiles(plan, tmp_path / "staging", keep_svg=False)  # type: ignore[arg-type]
    assert CardFiles(SimpleNamespace(backs={"back": art("back")}, faces={"fine": art("fine")}, cards=plan.cards[:1],  # type: ignore
                                     number=1, since=None),
                     tmp_path / "staging", keep_svg=False).pending == {"backs/back.png", "cards/main/fine.png"}
