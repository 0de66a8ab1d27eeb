"""`cardgen build --draft`: an image not made yet is a labelled placeholder; a normal build keeps its error."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from conftest import cardgen_running, cardgen_serving, http_get, make_workspace, run_cli, wait_for, write_game
from PIL import Image

MANIFEST = """\
    title: Draft
    font: Roboto Mono
    decks:
      main:
        source: cards.csv
        face: face.svg
"""
FACE = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>
      {{ image(card.art, "10%", "30%", "80%", "40%") }}
    </svg>
"""
PLACEHOLDER = (255, 191, 255)  # the placeholder's magenta at a quarter over the white card


def _game(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path)
    write_game(root, "d", MANIFEST, {"cards.csv": "name,art\nHero,art/hero.png\n"}, {"face.svg": FACE})
    return root


def _near(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 12) -> bool:
    return all(abs(int(a) - b) <= tolerance for a, b in zip(pixel, colour))


def _tinted(image: Image.Image) -> np.ndarray:
    """Where the card shows the placeholder's tint."""
    return np.all(np.abs(np.asarray(image.convert("RGB"), dtype=int) - PLACEHOLDER) <= 12, axis=2)


def _box(image: Image.Image) -> tuple[int, int, int, int]:
    """The placeholder's box on the card image: the bounds of its tinted pixels."""
    rows, columns = np.nonzero(_tinted(image))
    assert rows.size, "no placeholder drawn"
    return int(columns.min()), int(rows.min()), int(columns.max()) + 1, int(rows.max()) + 1


def test_a_normal_build_keeps_the_located_error(tmp_path: Path) -> None:
    root = _game(tmp_path)
    result = run_cli(root, "build", "d", expect=1)
    assert "data/d/cards.csv:2:art: error: image 'art/hero.png' does not exist (looked in data/d/)" in result.output
    assert not (root / "output" / "d").exists()


def test_draft_draws_a_labelled_placeholder_and_builds(tmp_path: Path) -> None:
    root = _game(tmp_path)
    result = run_cli(root, "build", "d", "--draft")
    assert "data/d/cards.csv:2:art: warning: image 'art/hero.png' does not exist: drawn as a placeholder " \
           "(--draft) (image)" in result.output
    card = Image.open(root / "output/d/cards/main/hero.png").convert("RGB")
    left, top, right, bottom = _box(card)
    width, height = card.size
    # the box the template asked for: 10% / 30% of the card as cut, 80% x 40% of it (bleed around it)
    assert abs((right - left) / width - 0.8 * 750 / 825) < 0.02
    assert abs((bottom - top) / height - 0.4 * 1050 / 1125) < 0.02
    middle = (top + bottom) // 2
    assert _near(card.getpixel((left + (right - left) // 25, middle)), PLACEHOLDER)  # tinted, off the cross
    label = card.crop((left, top + (bottom - top) // 4, right, bottom - (bottom - top) // 4))
    assert int((np.asarray(label).max(axis=2) < 60).sum()) > 2000  # the label's black letters
    assert _near(card.getpixel((width // 2, height // 8)), (255, 255, 255))  # the card around it untouched

    # the art arrives: the next build, draft (no placeholder kept in a cache) or not, draws it
    (root / "data/d/art").mkdir()
    Image.new("RGB", (40, 20), (0, 90, 200)).save(root / "data/d/art/hero.png")
    for flags in (["--draft"], []):
        run_cli(root, "build", "d", *flags)
        card = Image.open(root / "output/d/cards/main/hero.png").convert("RGB")
        assert _near(card.getpixel((width // 2, middle)), (0, 90, 200)), flags
        assert not _tinted(card).any()


def test_serve_draft_serves_the_placeholder(tmp_path: Path) -> None:
    """`serve --draft`: the gallery's card, asked for over HTTP, shows the placeholder where the art will be."""
    root = _game(tmp_path)
    with cardgen_serving(root, "d", "--draft", "-j", "1") as port:
        wait_for(lambda: http_get(port, "/cards/main/hero.png")[0] == 200, "the card drawn in draft")
        png = http_get(port, "/cards/main/hero.png")[1]
    left, top, right, bottom = _box(Image.open(io.BytesIO(png)))
    assert right - left > 100 and bottom - top > 100  # the placeholder's box, tinted


def test_watch_draft_draws_the_placeholder(tmp_path: Path) -> None:
    root = _game(tmp_path)
    card = root / "output" / "d" / "cards" / "main" / "hero.png"
    with cardgen_running(root, "watch", "d", "--draft", "-j", "1"):
        wait_for(card.is_file, "the card drawn in draft")
    left, top, right, bottom = _box(Image.open(card))
    assert right - left > 100 and bottom - top > 100
