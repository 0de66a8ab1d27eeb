"""SVG art as icons and images: bounded before it is drawn (pictures and SVG images nested in it, references
expanded), and drawn as an independent renderer draws it."""
from __future__ import annotations

import base64
import gzip
import io
import os
import shutil
import struct
import subprocess
import time
import urllib.parse
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from cardgen.core import bundled
from cardgen.validate import validate_game
from tests.conftest import make_workspace, run_cli, write_game

RSVG = shutil.which("rsvg-convert")

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


# ---------------------------------------------------------------- art as editors save it, drawn as librsvg draws it

CORPUS = Path(__file__).resolve().parent / "svg_corpus"
CORPUS_FILES = sorted(p.name for p in CORPUS.glob("*.svg"))
BOX = 200  # px: each card draws its file as an image in a BOX square on the left, as an icon in one on the right
CORPUS_MANIFEST = """\
    title: Corpus
    version: 1
    font: Alegreya Sans
    fields:
      art: str
      glyph: str
    decks:
      main:
        source: cards.csv
        size: {width: 40mm, height: 20mm, bleed: 0mm, safe: 0mm, dpi: 254}
        face: face.svg
"""
CORPUS_FACE = f"""\
    <svg {{{{ geo.svg_attrs }}}}>
      {{{{ image(card.art, 0, 0, {BOX}, {BOX}) }}}}
      {{{{ icon(card.glyph, {BOX}, 0, {BOX}) }}}}
    </svg>
"""


@pytest.fixture(scope="module")
def corpus_cards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus built as one game, a card per file: validated without an error, then drawn; its cards' folder."""
    root = make_workspace(tmp_path_factory.mktemp("corpus"))
    rows = "".join(f"{name.replace('.', '-')[:-4]},art/{name},{name[:-4]}\n" for name in CORPUS_FILES)
    data = write_game(root, "corpus", CORPUS_MANIFEST, {"cards.csv": "name,art,glyph\n" + rows},
                      {"face.svg": CORPUS_FACE})
    (data / "art").mkdir()
    (root / "icons").mkdir()
    for name in CORPUS_FILES:
        shutil.copy(CORPUS / name, data / "art" / name)
        shutil.copy(CORPUS / name, root / "icons" / name)
    assert [f for f in validate_game(root, "corpus") if f.severity == "error"] == []
    run_cli(root, "build", "corpus", "--jobs", "1")
    return root / "output" / "corpus" / "cards" / "main"


def _reference(name: str, fonts: Path) -> Image.Image:
    """librsvg's drawing of a corpus file fitted into a BOX square, on white, with cardgen's bundled fonts only."""
    drawn = subprocess.run([str(RSVG), "--keep-aspect-ratio", "-w", str(BOX), "-h", str(BOX), "-b", "white",
                            str(CORPUS / name)], capture_output=True, check=True, timeout=60,
                           env={**os.environ, "FONTCONFIG_FILE": str(fonts)}).stdout
    with Image.open(io.BytesIO(drawn)) as image:
        return image.convert("RGB")


@pytest.fixture(scope="module")
def bundled_fonts_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fontconfig file offering librsvg the fonts cardgen draws with (its bundled ones), and no others."""
    folder = tmp_path_factory.mktemp("fontconfig")
    conf = folder / "fonts.conf"
    conf.write_text(f'<?xml version="1.0"?><fontconfig><dir>{bundled.FONTS_DIR}</dir>'
                    f"<cachedir>{folder / 'cache'}</cachedir></fontconfig>\n", encoding="utf-8")
    return conf


def _placed(drawing: Image.Image, centred: bool) -> Image.Image:
    """A drawing fitted into the BOX square as image() places it (centred) or icon() does (top left)."""
    box = Image.new("RGB", (BOX, BOX), "white")
    width, height = drawing.size
    box.paste(drawing, ((BOX - width) // 2, (BOX - height) // 2) if centred else (0, 0))
    return box


def _differences(ours: Image.Image, theirs: Image.Image) -> tuple[float, float]:
    """The mean difference of two drawings (0-255 a channel) and the share of pixels that differ by more than 64."""
    difference = ImageChops.difference(ours, theirs).convert("L")
    histogram = difference.histogram()
    pixels = ours.width * ours.height
    return sum(i * n for i, n in enumerate(histogram)) / pixels, sum(histogram[65:]) / pixels


def _ink(image: Image.Image) -> float:
    """The share of pixels that are not white."""
    histogram = image.convert("L").histogram()
    return 1 - histogram[255] / (image.width * image.height)


@pytest.mark.skipif(RSVG is None, reason="librsvg's rsvg-convert is not installed (Debian: librsvg2-bin)")
@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_editors_svg_draws_as_librsvg_draws_it(corpus_cards: Path, bundled_fonts_only: Path, name: str,
                                               as_icon: bool) -> None:
    """Each file as Inkscape (plain and Inkscape SVG), Illustrator, Affinity, Figma or game-icons.net saves it
    draws within a tolerance of librsvg's drawing, as an image and as an icon: never blank, never broken."""
    with Image.open(corpus_cards / f"{name.replace('.', '-')[:-4]}.png") as card:
        ours = card.convert("RGB").crop((BOX, 0, 2 * BOX, BOX) if as_icon else (0, 0, BOX, BOX))
    theirs = _placed(_reference(name, bundled_fonts_only), centred=not as_icon)
    assert _ink(theirs) > 0.05
    mean, share = _differences(ours, theirs)
    assert mean < 4 and share < 0.02, (name, mean, share)


def test_game_icons_names_with_their_author_are_accepted(tmp_path: Path) -> None:
    """`lorc/punch`, as game-icons.net and Squib's game_icons gem write it, is the bundled icon `punch`: in an icon
    column, in a template and in text markup; a name that is no icon still has its "did you mean"."""
    root = make_workspace(tmp_path)
    face = ART_FACE.replace("{% endif %}\n    </svg>", "{% endif %}\n      {{ icon('delapouite/gears', 0, 100, 50) }}"
                            "\n      {{ text_box(card.text, 0, 150, 300, 50, 30) }}\n    </svg>")
    manifest = ART_MANIFEST.replace("      glyph: str\n", "      glyph: str\n      text: str\n")
    write_game(root, "art", manifest, {"cards.csv": "name,art,glyph,text\nA,,lorc/punch,Hit :lorc/punch: twice\n"},
               {"face.svg": face})
    assert [f for f in validate_game(root, "art") if f.severity == "error"] == []
    run_cli(root, "build", "art", "--jobs", "1")
    with Image.open(root / "output" / "art" / "cards" / "main" / "a.png") as card:
        assert _ink(card.convert("RGB").crop((100, 0, 200, 100))) > 0.05  # the punch, drawn
    write_game(root, "art", manifest, {"cards.csv": "name,art,glyph,text\nA,,lorc/punchh,x\n"}, {"face.svg": face})
    [error] = [f for f in validate_game(root, "art") if f.severity == "error"]
    assert "unknown icon 'lorc/punchh'; did you mean" in error.message, error.message


def _pixel(image: Image.Image, x: int, y: int) -> tuple[int, int, int]:
    red, green, blue = image.getpixel((x, y))[:3]
    return red, green, blue


def test_icons_saved_by_one_editor_keep_their_own_ids_and_styles(tmp_path: Path) -> None:
    """Two icons naming their gradient `g1` and their style `.st0` alike draw each its own colours, and an icon's
    style sheet does not restyle the card's own elements of that class."""
    root = make_workspace(tmp_path)
    face = ('<svg {{ geo.svg_attrs }}>{{ icon("red", 0, 0, 100) }}{{ icon("blue", 100, 0, 100) }}'
            '<circle cx="250" cy="50" r="50" class="st0" fill="#00ff00"/></svg>')
    write_game(root, "art", ART_MANIFEST, {"cards.csv": "name,art,glyph\nA,,\n"}, {"face.svg": face})
    (root / "icons").mkdir()
    for name, colour in (("red", "#ff0000"), ("blue", "#0000ff")):
        (root / "icons" / f"{name}.svg").write_text(
            f'{SVG_OPEN}<style>.st0{{fill:{colour}}} circle {{fill:{colour}}}</style><defs><linearGradient id="g1">'
            f'<stop offset="0" stop-color="{colour}"/></linearGradient></defs><rect width="10" height="5" class="st0"/>'
            '<rect y="5" width="10" height="5" fill="url(#g1)"/></svg>')
    run_cli(root, "build", "art", "--jobs", "1")
    with Image.open(root / "output" / "art" / "cards" / "main" / "a.png") as card:
        assert [_pixel(card, x, y) for x, y in ((50, 25), (50, 75), (150, 25), (150, 75), (250, 50))] == \
            [(255, 0, 0), (255, 0, 0), (0, 0, 255), (0, 0, 255), (0, 255, 0)]


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
@pytest.mark.parametrize("svg, words", [
    ('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><g><rect/></svg>',
     "the file is not valid SVG: mismatched tag: line 2"),
    ('<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="100%"><rect width="5" height="5"/></svg>',
     "the SVG has no viewBox and no width and height in absolute units (width='100%'); give its root a viewBox"),
    ('<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>', "the file's root element is <html>, not <svg>"),
    (f'{SVG_OPEN}<image width="10" height="10" xlink:href="photo.png"/></svg>',
     "the SVG refers to an external file or URL; art must be self-contained (embed pictures as data: URLs)"),
    (f'{SVG_OPEN}<image width="10" height="10" xlink:href="data:image/png;base64,bm90IGEgcGljdHVyZQ=="/></svg>',
     "the SVG embeds a picture that cannot be read as an image"),
])
def test_art_that_cannot_be_drawn_is_a_finding_saying_why(tmp_path: Path, as_icon: bool, svg: str,
                                                          words: str) -> None:
    """Never a blank card nor cairosvg's error at build time: validate names the file and what is wrong."""
    message = _finding(_art_game(tmp_path, svg, as_icon), _shown(as_icon))
    assert words in message, message


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_a_marker_is_counted_at_every_vertex(tmp_path: Path, as_icon: bool) -> None:
    """A marker is drawn at each vertex of its path: 3,000 vertices times a marker of ten elements is a bomb."""
    marker = '<marker id="m">' + '<rect width="1" height="1"/>' * 10 + "</marker>"
    svg = f'{SVG_OPEN}<defs>{marker}</defs><path marker-mid="url(#m)" d="M0 0{" l0.001 0" * 3000}"/></svg>'
    message = _finding(_art_game(tmp_path, svg, as_icon), _shown(as_icon))
    assert "draws more than 20,000 elements once its references" in message, message



def test_an_icons_lettering_is_art_not_card_text(tmp_path: Path) -> None:
    """Text inside an icon is drawn with the icon: the layout check does not measure it as the card's text (it
    found 'Loot!' at the icon's own coordinates, across the card's safe zone)."""
    root = _art_game(tmp_path, (CORPUS / "inkscape-text.svg").read_text(encoding="utf-8"), as_icon=True)
    assert [f.message for f in validate_game(root, "art") if f.rule in ("safe-zone", "missing-glyph")] == []


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_a_file_of_too_many_elements_is_refused_while_it_is_read(tmp_path: Path, as_icon: bool) -> None:
    """Elements are counted as the file is read: a file of 100,001 is refused before its whole tree is built (a 50 MB
    image of 1.3 million elements took 0.5 GB as a tree)."""
    svg = f'{SVG_OPEN}{"<g/>" * 100_001}</svg>'
    message = _finding(_art_game(tmp_path, svg, as_icon), _shown(as_icon))
    assert "the SVG holds more than 100,000 elements; simplify it" in message, message


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_art_in_the_encoding_it_declares_is_read(tmp_path: Path, as_icon: bool) -> None:
    """Older Illustrator saves ISO-8859-1 and says so in its XML declaration: read as declared, not refused."""
    svg = ('<?xml version="1.0" encoding="iso-8859-1"?>\n' + SVG_OPEN + '<title>Ébauche</title>'
           '<rect width="10" height="10" fill="#ff0000"/></svg>')
    root = _art_game(tmp_path, "", as_icon)
    (root / "icons" / "art.svg" if as_icon else root / "data" / "art" / "art.svg").write_bytes(svg.encode("latin-1"))
    run_cli(root, "build", "art", "--jobs", "1")
    with Image.open(root / "output" / "art" / "cards" / "main" / "a.png") as card:
        assert _pixel(card, 150 if as_icon else 50, 50) == (255, 0, 0)


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
@pytest.mark.parametrize("where", ["group", "style sheet"])
def test_a_marker_set_on_a_group_or_in_a_style_sheet_is_counted(tmp_path: Path, as_icon: bool, where: str) -> None:
    """The marker bomb's marker set on the path's group, or by a style sheet's rule: counted as drawn."""
    marker = '<marker id="m">' + '<rect width="1" height="1"/>' * 10 + "</marker>"
    path = f'<path d="M0 0{" l0.001 0" * 3000}"/>'
    drawn = f'<g marker-mid="url(#m)">{path}</g>' if where == "group" else \
        f"<style>path {{ marker-mid: url(#m) }}</style>{path}"
    message = _finding(_art_game(tmp_path, f"{SVG_OPEN}<defs>{marker}</defs>{drawn}</svg>", as_icon), _shown(as_icon))
    assert "draws more than 20,000 elements once its references" in message, message


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_letters_of_text_count(tmp_path: Path, as_icon: bool) -> None:
    """Each letter of text costs a glyph to draw: 100,000 of them (~7 s) in one <text> are refused; a title is not."""
    svg = f'{SVG_OPEN}<text font-size="1"><tspan>Title</tspan>{"a" * 100_000}</text></svg>'
    message = _finding(_art_game(tmp_path, svg, as_icon), _shown(as_icon))
    assert "draws more than 20,000 elements once its references" in message, message
    assert "four letters of text and 10,000 pixels of a picture as one" in message


@pytest.mark.parametrize("as_icon", [False, True], ids=["image", "icon"])
def test_the_pixels_of_every_embedded_picture_count(tmp_path: Path, as_icon: bool) -> None:
    """A picture of 40 million pixels is art; the same one drawn six times (240 million pixels to decode) is not."""
    picture = base64.b64encode(_png_header(8000, 5000)).decode()
    image = f'<image width="10" height="10" xlink:href="data:image/png;base64,{picture}"/>'
    assert [f for f in validate_game(_art_game(tmp_path / "one", f"{SVG_OPEN}{image}</svg>", as_icon), "art")
            if f.severity == "error"] == []
    message = _finding(_art_game(tmp_path / "six", f"{SVG_OPEN}{image * 6}</svg>", as_icon), _shown(as_icon))
    assert "draws more than 20,000 elements" in message, message
