"""`cardgen print` and `cardgen tts` on a workspace as a designer has it: they build what is missing or out
of date first, and the PDFs they make are kept up to date by later builds until the designer deletes them."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pypdf
import pytest

from cardgen.options.pdf import PrintSpec
from cardgen.outputs.kept_prints import pdf_name
from tests.conftest import SIMPLE_MANIFEST, run_cli

A4_PT = (595, 842)


def _size(path: Path) -> tuple[int, int]:
    return tuple(round(float(v)) for v in pypdf.PdfReader(path).pages[0].mediabox[2:])  # type: ignore[return-value]


def _edit_card(root: Path, old: str, new: str) -> None:
    cards = root / "data" / "tiny" / "cards.csv"
    cards.write_text(cards.read_text().replace(old, new))


def test_print_on_a_fresh_checkout_builds_then_writes_the_pdf_and_draws_nothing_twice(tiny_game: Path) -> None:
    result = run_cli(tiny_game, "print", "tiny", "--paper", "a4")
    game = tiny_game / "output" / "tiny"
    assert (game / "build.json").is_file() and "3 cards" in result.output
    assert _size(game / "print" / "tiny-a4.pdf") == A4_PT
    assert (game / "print" / "tiny-letter.pdf").is_file()  # the build's own PDF, from game.yaml
    made = (game / "print" / "tiny-a4.pdf").stat().st_mtime_ns
    again = run_cli(tiny_game, "print", "tiny", "--paper", "a4")
    assert "up to date" in again.output and "drawn" not in again.output
    assert (game / "print" / "tiny-a4.pdf").stat().st_mtime_ns == made


def test_a_pdf_made_by_print_follows_later_builds_until_deleted(tiny_game: Path) -> None:
    run_cli(tiny_game, "print", "tiny", "--paper", "a4")
    pdf = tiny_game / "output" / "tiny" / "print" / "tiny-a4.pdf"
    before = pdf.read_bytes()
    _edit_card(tiny_game, "Plain", "Plainer text")
    result = run_cli(tiny_game, "build", "tiny")
    assert "1 drawn" in result.output  # only the edited card
    assert pdf.is_file() and pdf.read_bytes() != before  # remade with the new card, not left stale
    assert _size(pdf) == A4_PT
    pdf.unlink()  # the designer is done with it
    _edit_card(tiny_game, "Plainer text", "Plain again")
    run_cli(tiny_game, "build", "tiny")
    assert not pdf.exists() and not (pdf.parent / "kept.json").exists()
    assert (pdf.parent / "tiny-letter.pdf").is_file()


def test_other_options_make_a_pdf_beside_the_builds_own(tiny_game: Path) -> None:
    run_cli(tiny_game, "print", "tiny", "--duplex", "fold", "--no-marks")
    folder = tiny_game / "output" / "tiny" / "print"
    assert sorted(p.name for p in folder.glob("*.pdf")) == ["tiny-letter-fold-no-marks.pdf", "tiny-letter.pdf"]
    kept = json.loads((folder / "kept.json").read_text())
    assert kept["tiny-letter-fold-no-marks.pdf"]["duplex"] == "fold"
    assert len(pypdf.PdfReader(folder / "tiny-letter.pdf").pages) % 2 == 0  # the build's own: duplex, untouched


# kept.json as cardgen wrote it before the print options had one model (lengths in mm, the grid as a list)
OLDER_KEPT = {"paper": "letter", "orientation": "auto", "duplex": "long-edge", "spacing": "touching", "gap_mm": 2.0,
              "margin_mm": 6.35, "back_offset": [0.0, 0.0], "crop_marks": False, "cut_lines": False,
              "back_marks": True, "images": "png", "jpeg_quality": 92, "grid": [2, 2], "layout": None,
              "unprintable_mm": 6.35}


def test_a_pdf_noted_by_an_older_cardgen_is_still_remade_by_builds(tiny_game: Path) -> None:
    run_cli(tiny_game, "print", "tiny", "--grid", "2x2", "--no-marks")
    folder = tiny_game / "output" / "tiny" / "print"
    name = "tiny-letter-no-marks-grid2x2.pdf"
    assert set(json.loads((folder / "kept.json").read_text())) == {name}
    (folder / "kept.json").write_text(json.dumps({name: OLDER_KEPT}))
    before = (folder / name).read_bytes()
    _edit_card(tiny_game, "Plain", "Plainer text")
    run_cli(tiny_game, "build", "tiny")
    assert (folder / name).read_bytes() != before  # remade with the new card
    noted = json.loads((folder / "kept.json").read_text())[name]
    assert (noted["grid"], noted["margin"], noted["crop_marks"]) == ("2x2", 6.35, False)  # now noted as print:'s keys


def test_a_pdf_written_elsewhere_is_not_remade_by_builds(tiny_game: Path, tmp_path: Path) -> None:
    run_cli(tiny_game, "print", "tiny", "--paper", "a4", "--out", str(tmp_path / "prints"))
    assert (tmp_path / "prints" / "tiny-a4.pdf").is_file()
    assert not (tiny_game / "output" / "tiny" / "print" / "kept.json").exists()


def test_a_manifest_may_list_several_papers(tiny_game: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "print:\n  paper: [letter, a4]\n")
    run_cli(tiny_game, "build", "tiny")
    folder = tiny_game / "output" / "tiny" / "print"
    assert sorted(p.name for p in folder.glob("*.pdf")) == ["tiny-a4.pdf", "tiny-letter.pdf"]
    assert _size(folder / "tiny-a4.pdf") == A4_PT
    assert "up to date" in run_cli(tiny_game, "print", "tiny").output  # both made by the build already
    manifest.write_text(manifest.read_text().replace("[letter, a4]", "[]"))
    assert "print.paper" in run_cli(tiny_game, "validate", "tiny", expect=1).output


def test_tts_on_a_fresh_checkout_builds_then_exports(tiny_game: Path) -> None:
    result = run_cli(tiny_game, "tts", "tiny")
    saved = tiny_game / "output" / "tiny" / "tts" / "Tiny.json"
    assert "Tabletop Simulator saved object" in result.output and saved.is_file()
    assert json.loads(saved.read_text())["ObjectStates"][0]["Name"] == "DeckCustom"
    made = saved.stat().st_mtime_ns
    run_cli(tiny_game, "tts", "tiny")  # the build's export is current: not written again
    assert saved.stat().st_mtime_ns == made
    run_cli(tiny_game, "tts", "tiny", "--format", "png")
    assert any(p.suffix == ".png" and "-main-" in p.name for p in saved.parent.iterdir())


@pytest.mark.parametrize("flags, name", [
    ({}, "g-letter.pdf"),
    ({"paper": "a4"}, "g-a4.pdf"),
    ({"duplex": "fold"}, "g-letter-fold.pdf"),
    ({"paper": "A4", "spacing": "gap", "gap": 3.0, "back_offset": (0.5, -1.0)}, "g-a4-gap-gap3mm-offset0.5x-1.pdf"),
])
def test_pdf_names_say_what_differs_from_the_manifest(flags: dict, name: str) -> None:
    usual = [PrintSpec(paper="letter")]
    assert pdf_name("g", PrintSpec(**{"paper": "letter", **flags}), usual) == name


def test_the_manifest_paper_list_is_checked(tiny_game: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(textwrap.dedent(SIMPLE_MANIFEST) + "print:\n  paper: [letter, napkin]\n")
    assert "unknown paper 'napkin'" in run_cli(tiny_game, "validate", "tiny", expect=1).output
