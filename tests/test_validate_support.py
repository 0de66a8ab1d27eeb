"""Helpers shared by the validator tests: a throw-away workspace with one small game."""
from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import REPO, make_workspace
from tests.conftest import write_game as write_any_game

__all__ = ["REPO", "make_workspace", "write_game", "mini_workspace"]

MANIFEST = """\
    title: Mini
    version: 1
    font: Roboto Mono
    dpi: 100
    size: {width: 40mm, height: 60mm}
    bleed: 2mm
    safe: 2mm
    icons:
      scrap: hexagonal-nut
    fields:
      name: {type: str, required: true}
      kind: {type: enum, values: [Unit, Spell]}
      power: {type: int, min: 0, max: 10}
      count: {type: int}
      text: str
    decks:
      main:
        source: cards.csv
        face: face.svg
        back: back.svg
        text: [text]
"""

FACE = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>
      {{ text_line(card.name, geo.safe.x, geo.safe.y, geo.safe.width, 14, min_size=8) }}
      {{ text_box(card.text, geo.safe.x, 60, geo.safe.width, 100, 12, min_size=8) }}
    </svg>
"""

BACK = '<svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#345"/></svg>\n'

CARDS = """\
    name,kind,power,count,text
    Alpha,Unit,1,2,Gain 1 :scrap:.
    Beta,Spell,2,1,**Bold** and *italic*
"""


def write_game(root: Path, name: str = "mini", manifest: str = MANIFEST, files: dict[str, str | bytes] | None = None,
               templates: dict[str, str] | None = None) -> Path:
    """Write a game into a workspace (by default the small game `mini`); return its data folder."""
    return write_any_game(root, name, manifest, {"cards.csv": CARDS} if files is None else files,
                          {"face.svg": FACE, "back.svg": BACK} if templates is None else templates)


def mini_workspace(tmp_path: Path) -> Path:
    """A workspace holding the small game `mini` (test modules wrap it as their `ws` fixture)."""
    root = make_workspace(tmp_path)
    write_game(root)
    return root


def rules_of(findings: list) -> list[str | None]:
    """The rule ids of findings, in order."""
    return [f.rule for f in findings]


def with_manifest(extra: str) -> str:
    """The mini manifest with more YAML appended (dedented)."""
    return textwrap.dedent(MANIFEST) + textwrap.dedent(extra)
