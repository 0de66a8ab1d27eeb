"""The bundled `cardgen/tracks.svg` partial: numbered tracks (VP tracks, trackers, round tracks) for any game."""
from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

from cardgen.build.plan import plan_build
from cardgen.svg.context import BuildContext
from tests.conftest import SIMPLE_BACK, SIMPLE_MANIFEST, write_game

SVG = "{http://www.w3.org/2000/svg}"

FACE = """\
    {% import "cardgen/tracks.svg" as tracks with context %}
    <svg {{ geo.svg_attrs }}>
      <g id="vp">{{ tracks.grid(0, card.power, 40, 40, 740, 300, 8, fill="#ffffff", marked={card.power: "#e6b422"},
                               labels={0: "start"}) }}</g>
      <g id="rounds">{{ tracks.grid(1, 9, 40, 500, 740, 100, 9, fill="#dddddd", every=3, every_fill="#e59a8f",
                                   every_label="PvP") }}</g>
    </svg>
"""


def _cells(svg: str, group: str) -> list[tuple[str, str]]:
    """(fill, text) of each cell of a track: its rect's fill and the texts drawn before the next rect."""
    cells: list[tuple[str, str]] = []
    for element in ElementTree.fromstring(svg).find(f".//{SVG}g[@id='{group}']").iter():  # type: ignore[union-attr]
        if element.tag == f"{SVG}rect":
            cells.append((element.get("fill", ""), ""))
        elif element.tag == f"{SVG}tspan" and cells and element.text:
            cells[-1] = (cells[-1][0], (cells[-1][1] + " " + element.text).strip())
    return cells


def test_grid_draws_numbered_marked_and_labelled_cells(workspace: Path) -> None:
    write_game(workspace, "g", SIMPLE_MANIFEST, {"cards.csv": "name,power\nTrack,15\n"},
               {"face.svg": FACE, "back.svg": SIMPLE_BACK})
    svg = plan_build(BuildContext.load(workspace, "g", workspace / "output")).faces["track"].rendered.svg
    vp = _cells(svg, "vp")
    assert [text.split()[0] for _, text in vp] == [str(n) for n in range(16)]
    assert vp[0] == ("#ffffff", "0 start") and vp[15][0] == "#e6b422"
    assert [fill for fill, _ in vp[1:15]] == ["#ffffff"] * 14
    rounds = _cells(svg, "rounds")
    assert [n for n, (fill, text) in enumerate(rounds, 1) if fill == "#e59a8f" and text.endswith("PvP")] == [3, 6, 9]
    assert {fill for n, (fill, _) in enumerate(rounds, 1) if n % 3} == {"#dddddd"}
