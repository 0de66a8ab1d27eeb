"""The cache is never trusted blindly: what is read from it is verified, a damaged entry is made again, and an
edit of an output never reaches it."""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from PIL import Image

from cardgen.build.build import BuildOptions, build_game
from cardgen.core.progress import SilentReporter
from cardgen.outputs import stage_names
from tests.hostile_example import GAME, run

CARDS = f"output/{GAME}/cards"


def _entry(root: Path, card_id: str) -> Path:
    """The cache entry of a card's image, found by the hash build.json records."""
    record = json.loads((root / "output" / GAME / "build.json").read_text())
    digest = next(c["hash"] for c in record["cards"] if c["id"] == card_id)
    return root / "output" / ".cache" / "png" / digest[:2] / f"{digest}.png"


def _rebuild(root: Path, text: str = "It saw you second") -> None:
    """Change one card's text so that the next build writes its outputs again, and build."""
    cards = root / "data" / GAME / "cards.csv"
    cards.write_text(re.sub(r"It saw you \w+", text, cards.read_text()))
    result = run(root, "build", "-j", "1")
    assert result.exit_code == 0, result.output


def test_an_output_edited_in_place_never_reaches_the_cache(example: Path) -> None:
    _rebuild(example)  # outputs placed by a build in this workspace (the fixture's copy made them plain files)
    drone, drone_entry = example / CARDS / "center" / "drone.png", _entry(example, "drone")
    spare = example / CARDS / "starting" / "spare-parts.png"
    original, entry_before = spare.read_bytes(), _entry(example, "spare-parts").read_bytes()
    spare.write_bytes(drone.read_bytes())  # cp drone.png spare-parts.png, writing into the file in place
    assert _entry(example, "spare-parts").read_bytes() == entry_before and drone_entry.is_file()
    _rebuild(example, "It saw you third")
    assert spare.read_bytes() == original


def test_damaged_cache_entries_are_made_again_not_published(example: Path) -> None:
    spare, drone = example / CARDS / "starting" / "spare-parts.png", example / CARDS / "center" / "drone.png"
    originals = {path: path.read_bytes() for path in (spare, drone)}
    truncated, emptied = _entry(example, "spare-parts"), _entry(example, "drone")
    truncated.write_bytes(truncated.read_bytes()[:2000])
    emptied.write_bytes(b"")
    _rebuild(example)
    assert {path: path.read_bytes() for path in originals} == originals
    for path in originals:
        with Image.open(path) as image:
            image.load()


def _pdf_images(pdf: Path) -> list[bytes]:
    from pypdf import PdfReader

    found = []  # the raw streams of the pages' images (decoding them all would take long)
    for page in PdfReader(pdf).pages:
        objects = page["/Resources"].get("/XObject", {})
        found += [objects[name].get_object().get_data() for name in sorted(objects)]
    return found


def test_every_kind_of_damaged_cache_entry_is_made_again(example: Path) -> None:
    build = example / "output" / GAME
    sheets = {p.name: p.read_bytes() for p in (build / "tts").iterdir() if p.suffix in (".jpg", ".png")}
    [pdf] = (build / "print").glob("*.pdf")
    images = _pdf_images(pdf)
    entries = [p for p in (example / "output" / ".cache").rglob("*") if p.is_file() and p.suffix != ".seal"
               and p.name != ".cardgen-made"]
    assert {p.relative_to(example / "output" / ".cache").parts[0] for p in entries} >= {"png", "tts-cells"}
    for entry in entries:  # card images, TTS sheet cells, finished outputs: each cut to its first 100 bytes
        entry.write_bytes(entry.read_bytes()[:100])
    shutil.rmtree(build / "tts")
    shutil.rmtree(build / "print")
    result = run(example, "build", "-j", "1")
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in (build / "tts").iterdir() if p.suffix in (".jpg", ".png")} == sheets
    assert _pdf_images(pdf) == images


def test_a_cache_entry_swapped_for_another_cards_image_is_detected(example: Path) -> None:
    spare = example / CARDS / "starting" / "spare-parts.png"
    original = spare.read_bytes()
    _entry(example, "spare-parts").write_bytes(_entry(example, "drone").read_bytes())  # same size or not: caught
    _rebuild(example)
    assert spare.read_bytes() == original


def test_outputs_deleted_or_edited_by_hand_are_made_again(example: Path) -> None:
    card, sheet = example / CARDS / "center" / "drone.png", next((example / "output" / GAME / "print").glob("*.pdf"))
    original = card.read_bytes()
    card.write_bytes(b"edited by hand")
    sheet.unlink()
    result = run(example, "build", "-j", "1")
    assert result.exit_code == 0 and "up to date" not in result.output, result.output
    assert card.read_bytes() == original and sheet.is_file()
    assert run(example, "print", GAME).exit_code == 0
    assert "up to date" in run(example, "build", "-j", "1").output


def _save(cards: Path, text: str) -> None:
    """Save the card data with one text changed, dated a minute ago (as if the build ran on long after)."""
    cards.write_text(re.sub(r"It saw you \w+|Edited mid-build", text, cards.read_text()))
    past = time.time() - 60
    os.utime(cards, (past, past))


def test_data_edited_during_a_build_is_built_by_the_next_one(example: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import cardgen.validate

    cards = example / "data" / GAME / "cards.csv"
    _save(cards, "It saw you second")
    validate = cardgen.validate.validate_context

    def validate_while_the_designer_saves(*args: object, **kwargs: object) -> list:
        _save(cards, "Edited mid-build")  # the data was read already: this build draws "second"
        return validate(*args, **kwargs)

    monkeypatch.setattr(cardgen.validate, "validate_context", validate_while_the_designer_saves)
    options = BuildOptions((example / "output").resolve(), jobs=1)
    build_game(example, GAME, options, SilentReporter(), stage_names())
    assert "It saw you second" in (example / "output" / GAME / "build.json").read_text()  # what it read
    monkeypatch.setattr(cardgen.validate, "validate_context", validate)
    result = build_game(example, GAME, options, SilentReporter(), stage_names())
    assert not result.up_to_date and "Edited mid-build" in (example / "output" / GAME / "build.json").read_text()
