"""SVG art as icons and images: bounded before it is drawn (pictures and SVG images nested in it, references
expanded), and drawn as an independent renderer draws it."""
from __future__ import annotations

import base64
import gzip
import struct
import time
import urllib.parse
import zlib
from pathlib import Path

import pytest

from cardgen.validate import validate_game
from tests.conftest import make_workspace, write_game

ART_MANIFEST = """\
    title: Art
    version: 1
    font: Roboto Mono
    fields:
      art: str
      glyph: str
    decks:
      main:
        source: cards.csv
        face: face.svg
"""
ART_FACE = """\
    <svg {{ geo.svg_attrs }}>
      {% if card.art %}{{ image(card.art, 0, 0, 100, 100) }}{% endif %}
      {% if card.glyph %}{{ icon(card.glyph, 100, 0, 100) }}{% endif %}
    </svg>
"""
SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">'


def _art_game(tmp_path: Path, svg: str, as_icon: bool) -> Path:
    """A workspace whose one card draws `svg` as an image (data/art/art.svg) or as an icon (icons/art.svg)."""
    root = make_workspace(tmp_path)
    row = "name,art,glyph\nA,,art\n" if as_icon else "name,art,glyph\nA,art.svg,\n"
    data = write_game(root, "art", ART_MANIFEST, {"cards.csv": row}, {"face.svg": ART_FACE})
    if as_icon:
        (root / "icons").mkdir()
        (root / "icons" / "art.svg").write_text(svg, encoding="utf-8")
    else:
        (data / "art.svg").write_text(svg, encoding="utf-8")
    return root


def _finding(root: Path, shown: str) -> str:
    """The one error of validating the art game: at the card's row, naming the art file; its message."""
    started = time.monotonic()
    errors = [f for f in validate_game(root, "art") if f.severity == "error"]
    assert time.monotonic() - started < 10, "the art was measured by drawing it"
    assert len(errors) == 1, errors
    [error] = errors
    assert (error.file, error.row) == ("data/art/cards.csv", 2), error
    assert shown in error.message, error.message
    return error.message


def _shown(as_icon: bool) -> str:
    return "icon file icons/art.svg cannot be used: " if as_icon else "image 'data/art/art.svg' cannot be used: "


def _png_header(width: int, height: int) -> bytes:
    """A valid PNG claiming any size with one tiny row (a reader learns its size from the header alone)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 11)) + \
        chunk(b"IEND", b"")


def _embedding(svg: str, how: str) -> str:
    """An SVG embedding `svg` as an image through a data: URL written `how`."""
    if how == "base64":
        url = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    elif how == "gzip":
        url = "data:image/svg+xml;base64," + base64.b64encode(gzip.compress(svg.encode())).decode()
    else:
        url = "data:image/svg+xml;utf8," + urllib.parse.quote(svg)
    return f'{SVG_OPEN}<image width="10" height="10" xlink:href="{url}"/></svg>'


HUGE_PICTURE = (f'{SVG_OPEN}<image width="10" height="10" '
                f'xlink:href="data:image/png;base64,{base64.b64encode(_png_header(20000, 20000)).decode()}"/></svg>')


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
@pytest.mark.parametrize("how", ["base64", "gzip", "percent"])
def test_a_picture_in_an_svg_image_embedded_in_svg_art_is_measured(tmp_path: Path, as_icon: bool, how: str) -> None:
    """The 400 Mpx picture of an SVG image embedded in the art (a 1.6 GB decode) is refused before anything is
    drawn, however the embedded SVG is written."""
    message = _finding(_art_game(tmp_path, _embedding(HUGE_PICTURE, how), as_icon), _shown(as_icon))
    assert "embeds a picture with far too many pixels" in message, message


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_svg_images_nested_too_deep_are_refused(tmp_path: Path, as_icon: bool) -> None:
    svg = f'{SVG_OPEN}<rect width="5" height="5"/></svg>'
    for _ in range(4):
        svg = _embedding(svg, "base64")
    message = _finding(_art_game(tmp_path, svg, as_icon), _shown(as_icon))
    assert "embeds SVG images in SVG images more than 3 deep" in message, message


def _use_bomb(levels: int) -> str:
    """Each level draws the one below ten times: 10**levels squares from a file of about 2 kB."""
    parts = ['<rect id="l0" width="1" height="1"/>']
    for level in range(1, levels + 1):
        parts.append(f'<g id="l{level}">' + f'<use xlink:href="#l{level - 1}"/>' * 10 + "</g>")
    return f'{SVG_OPEN}<defs>{"".join(parts)}</defs><use xlink:href="#l{levels}"/></svg>'


def _pattern_bomb(levels: int) -> str:
    """Each pattern fills ten squares with the pattern below: references through url(#id), not <use>."""
    parts = ['<pattern id="p0" width="1" height="1"><rect width="1" height="1"/></pattern>']
    for level in range(1, levels + 1):
        parts.append(f'<pattern id="p{level}" width="1" height="1">'
                     + f'<rect width="1" height="1" fill="url(#p{level - 1})"/>' * 10 + "</pattern>")
    return f'{SVG_OPEN}<defs>{"".join(parts)}</defs><rect width="10" height="10" fill="url(#p{levels})"/></svg>'


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
@pytest.mark.parametrize("bomb", [_use_bomb, _pattern_bomb], ids=["use", "url"])
def test_a_reference_bomb_is_refused_before_it_is_drawn(tmp_path: Path, as_icon: bool, bomb) -> None:
    """A 2 kB file drawing 100,000 elements (43-80 s a card in cairosvg) is a finding naming the file."""
    svg = bomb(5)
    assert len(svg) < 3_000
    message = _finding(_art_game(tmp_path, svg, as_icon), _shown(as_icon))
    assert "draws more than 20,000 elements once its references" in message, message


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_art_drawing_itself_is_refused(tmp_path: Path, as_icon: bool) -> None:
    svg = f'{SVG_OPEN}<g id="loop"><rect width="1" height="1"/><use xlink:href="#loop"/></g></svg>'
    message = _finding(_art_game(tmp_path, svg, as_icon), _shown(as_icon))
    assert "element 'loop' draws itself through a reference" in message, message


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_art_with_references_under_the_bound_is_fine(tmp_path: Path, as_icon: bool) -> None:
    """1,000 squares drawn through <use> are art, not a bomb: no finding."""
    root = _art_game(tmp_path, _use_bomb(3), as_icon)
    assert [f for f in validate_game(root, "art") if f.severity == "error"] == []
