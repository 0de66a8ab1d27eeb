"""`cardgen showcase`: the fanned hand and the row in perspective, checked by their pixels: cards of one colour
each (their bleed another colour, which must not show), transparent or coloured background, the reflection."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import SIMPLE_BACK, run_cli, write_game

MANIFEST = """\
    title: Colours
    dpi: 100
    decks:
      swatches:
        source: cards.csv
        face: face.svg
        back: back.svg
        fields: {colour: str}
"""
FACE = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ff00ff"/>
      <rect x="{{ geo.trim.x }}" y="{{ geo.trim.y }}" width="{{ geo.trim.width }}" height="{{ geo.trim.height }}"
            fill="{{ card.colour }}"/>
    </svg>
"""
COLOURS = {"red": (220, 20, 20), "green": (20, 200, 20), "blue": (20, 20, 220)}


@pytest.fixture
def swatches(workspace: Path) -> Path:
    rows = "name,colour\n" + "".join(f"{name},#{r:02x}{g:02x}{b:02x}\n" for name, (r, g, b) in COLOURS.items())
    write_game(workspace, "w", MANIFEST, {"cards.csv": rows}, {"face.svg": FACE, "back.svg": SIMPLE_BACK})
    run_cli(workspace, "build", "w", "-j", "1")
    return workspace


def _pixels(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "RGBA"
        return np.asarray(image).astype(int)


def _count(pixels: np.ndarray, colour: tuple[int, int, int], alpha: tuple[int, int] = (250, 255)) -> int:
    """Pixels of this colour (within 12 per channel) whose alpha lies in the range."""
    near = (np.abs(pixels[..., :3] - np.array(colour)) <= 12).all(axis=-1)
    return int((near & (pixels[..., 3] >= alpha[0]) & (pixels[..., 3] <= alpha[1])).sum())


def test_fan_shows_every_card_trimmed_on_a_transparent_background(swatches: Path) -> None:
    run_cli(swatches, "showcase", "w", "--cards", "red,green", "--cards", "blue", "--height", "300")
    fan = _pixels(swatches / "output" / "showcase" / "w-fan.png")
    assert fan[0, 0, 3] == 0 and fan[-1, -1, 3] == 0 and fan[0, -1, 3] == 0  # transparent corners
    area = 300 * round(300 * 63.5 / 88.9)  # a poker card 300 px high, trimmed
    counts = {name: _count(fan, colour) for name, colour in COLOURS.items()}
    assert counts["blue"] == pytest.approx(area, rel=0.06)  # the front card whole (its corners rounded, turned)
    assert 0 < counts["red"] < area and 0 < counts["green"] < area  # behind it, partly covered
    assert _count(fan, (255, 0, 255), (1, 255)) == 0  # no bleed


def test_row_in_perspective_with_its_reflection_on_a_colour(swatches: Path) -> None:
    run_cli(swatches, "showcase", "w", "--cards", "red,green,blue", "--height", "300", "--background", "#102030")
    row = _pixels(swatches / "output" / "showcase" / "w-row.png")
    assert (row[0, 0] == [16, 32, 48, 255]).all() and (row[..., 3] == 255).all()  # opaque, the colour chosen
    red, blue = _count(row, COLOURS["red"]), _count(row, COLOURS["blue"])
    assert red > blue > 0  # the near end larger than the far end
    # the reflection: below the red card, red faded into the background (at most 35% red)
    column = row[:, np.argmax((np.abs(row[..., :3] - COLOURS["red"]) <= 12).all(axis=-1).sum(axis=0))]
    last_red = max(i for i, p in enumerate(column) if (np.abs(p[:3] - COLOURS["red"]) <= 12).all())
    below = column[last_red + 1:]
    faded = [p for p in below if p[0] > 16 + 20 and p[0] <= 16 + 0.36 * (220 - 16) + 3]
    assert len(faded) > 20


def test_unknown_card_and_bad_colour_are_one_line(swatches: Path) -> None:
    result = run_cli(swatches, "showcase", "w", "--cards", "redd", expect=1)
    assert "no card with the id redd (did you mean red?)" in result.output and "Traceback" not in result.output
    assert "not transparent or a colour #rrggbb" in run_cli(swatches, "showcase", "w", "--cards", "red",
                                                          "--background", "red", expect=2).output
