"""Rendering: templates to SVG (escaping, undefined fields), text layout, cairosvg to PNG, the url fetcher."""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Callable, Sequence
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from cardgen.build.build import BuildOptions, build_game
from cardgen.build.plan import BuildPlan, plan_build
from cardgen.core import bundled
from cardgen.core.errors import CardgenError, Problem
from cardgen.load.fonts import FontBook, configure_fontconfig
from cardgen.outputs.stage import Stage, StageContext
from cardgen.raster.render import RenderFailure, draw_svg, make_url_fetcher
from cardgen.record.record import BuildRecord
from cardgen.svg.context import BuildContext
from cardgen.svg.text import TextMeasurer, fit_text
from tests.conftest import REPO, SIMPLE_BACK, SIMPLE_FACE, SIMPLE_MANIFEST, write_game

FONTS = FontBook(REPO / "fonts")
SVG_NS = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    root = ElementTree.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}tspan")]


def _plan_with_face(workspace: Path, face: str, cards: str = "name,power\nAlpha,1\n"):
    """Write a one-deck game `g` with this face template and data, then plan its build."""
    write_game(workspace, "g", SIMPLE_MANIFEST, {"cards.csv": cards}, {"face.svg": face, "back.svg": SIMPLE_BACK})
    return plan_build(BuildContext.load(workspace, "g", workspace / "output"))


def test_wrapped_lines_fit_their_box() -> None:
    measurer = TextMeasurer(FONTS, "Roboto Mono")
    text = "Deal 20 damage to the opposing Lane and 10 splash damage to each adjacent Lane. " * 2
    layout = fit_text(text, measurer, width=500, height=400, size=40, min_size=20)
    assert layout.fits and len(layout.lines) > 1
    for line in layout.lines:
        assert not line.words[0].spaces  # the space where a line wraps is not drawn
        measured = sum(measurer.width(w.spaces + w.pieces, layout.size) for w in line.words)
        assert measured <= 500 + 1e-6
        assert measured == pytest.approx(line.width)
    assert len(layout.lines) * layout.size * 1.2 <= 400


def test_text_shrinks_then_reports_overflow() -> None:
    measurer = TextMeasurer(FONTS, "Roboto Mono")
    text = "word " * 40
    roomy = fit_text(text, measurer, 600, 2000, 40, 10)
    tight = fit_text(text, measurer, 600, 300, 40, 10)
    hopeless = fit_text(text * 10, measurer, 600, 100, 40, 30)
    assert roomy.size == 40 and roomy.fits
    assert 10 <= tight.size < 40 and tight.fits
    assert hopeless.size == 30 and not hopeless.fits


def test_a_face_measures_every_text_as_its_glyph_advances_add_up(monkeypatch) -> None:
    """Widths are kept per text (fitting measures the same words again and again): never another text's."""
    import cardgen.load.fonts

    monkeypatch.setattr(cardgen.load.fonts, "MEASURED_TEXTS", 6)  # keeps 6 texts, measures the others each time
    bold = FONTS.face("Roboto", bold=True)
    face = cardgen.load.fonts.FontFace(bold.path, bold.family, True, False, bold.units_per_em, bold.ascent,
                                  bold.descent, bold.advances)
    blank = face.advances[0x20]
    words = ["Will", "mill", "iiii", "WWWW", "Wi", "iW", "café", "\u0d9e"]  # same lengths, different widths

    def expected(text: str, size: float) -> float:
        return sum(face.advances.get(ord(ch), blank) for ch in text) * size / face.units_per_em

    for size in (40.0, 12.5, 40.0):
        for word in words + words[::-1]:
            assert face.width(word, size) == pytest.approx(expected(word, size)), word
    assert face.width("iiii", 10) < face.width("WWWW", 10)
    assert len(face._measured) == 6  # what it keeps is bounded
    book = FontBook(REPO / "fonts")  # a book keeps the face chosen for each family and style asked
    for _ in range(2):
        assert [(f.bold, f.italic) for f in (book.face("Roboto"), book.face("Roboto", bold=True),
                                              book.face("Roboto", italic=True), book.face("'roboto'", True, True))] \
            == [(False, False), (True, False), (False, True), (True, True)]


LAID_OUT_FACE = """\
    <svg {{ geo.svg_attrs }}>
      {{ text_box(card.text, 80, card.top, card.wide, 300, 50, min_size=20, fill=card.ink) }}
      {{ text_line(card.text, 80, 600, 600, 40, min_size=10, align="center") }}
    </svg>
"""
LAID_OUT_CARDS = """\
    name,text,top,wide,ink
    A,Deal **3** damage to *the* opposing lane,80px,600px,black
    B,Deal **3** damage to *the* opposing lane,80px,200px,black
    C,Deal **3** damage to *the* opposing lane,80px,200px,red
    D,Deal **3** damage to *the* opposing lane,90px,200px,red
    E,Deal **3** damage to *the* opposing lane,80px,600px,black
    F,Deal :hexagonal-nut: damage,80px,600px,black
"""


def test_a_text_laid_out_again_is_the_one_laid_out_anew(workspace: Path, monkeypatch) -> None:
    """A text box whose text a process laid out before (`text.laid_out`) is taken as it was only when made from the
    same inputs: the same text in another width, place or colour is laid out for its own box. Each card's SVG is
    the one laid out with nothing kept."""
    import cardgen.svg.text

    write_game(workspace, "g", SIMPLE_MANIFEST, {"cards.csv": LAID_OUT_CARDS},
               {"face.svg": LAID_OUT_FACE, "back.svg": SIMPLE_BACK})

    def faces(out: str) -> dict[str, str]:
        plan = plan_build(BuildContext.load(workspace, "g", workspace / out))
        return {card.name: plan.faces[card.id].rendered.svg for card in plan.cards}

    kept = faces("one")
    monkeypatch.setattr(cardgen.svg.text, "LAID_OUT_AT_MOST", 0)  # emptied at each text: all laid out anew
    assert kept == faces("two")
    assert kept["A"] == kept["E"] and len({kept[name] for name in "ABCDF"}) == 5
    assert '<g transform=' in kept["F"]  # the icon drawn inline


def test_a_text_with_an_icon_draws_the_icon_as_its_file_is_now(workspace: Path) -> None:
    """A text showing an icon is not taken from what was laid out before: the icon's file may have changed."""
    from cardgen.svg.helpers import CardHelpers

    (workspace / "icons").mkdir()
    icon = workspace / "icons" / "dot.svg"
    icon.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"/></svg>')
    write_game(workspace, "g", SIMPLE_MANIFEST, {"cards.csv": "name\nA\n"},
               {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    context = BuildContext.load(workspace, "g", None)
    size = context.game.deck_size(context.game.spec.decks["main"])
    helpers = CardHelpers(context.game, context.fonts, context.icons, size, None, "test")
    first = helpers.text_box("Hit :dot: now", 80, 80, 600, 300, 50)
    icon.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="8" height="8"/></svg>')
    os.utime(icon, ns=(icon.stat().st_atime_ns, icon.stat().st_mtime_ns + 10**9))
    second = helpers.text_box("Hit :dot: now", 80, 80, 600, 300, 50)
    assert "circle" in first and "rect" not in first
    assert "rect" in second and "circle" not in second
    assert helpers.text_box("Hit now", 80, 80, 600, 300, 50) == helpers.text_box("Hit now", 80, 80, 600, 300, 50)


def test_an_icon_in_a_text_is_drawn_in_the_colour_the_manifest_names(workspace: Path) -> None:
    """`icon_colors:` may name the palette (`colors:`): an icon inside a text box is drawn in that colour, the
    others in the text's."""
    from cardgen.svg.helpers import CardHelpers

    manifest = SIMPLE_MANIFEST + '    colors: {rust: "#c98a2b"}\n    icon_colors: {gears: rust}\n'
    write_game(workspace, "g", manifest, {"cards.csv": "name\nA\n"}, {"face.svg": SIMPLE_FACE, "back.svg": SIMPLE_BACK})
    context = BuildContext.load(workspace, "g", None)
    size = context.game.deck_size(context.game.spec.decks["main"])
    helpers = CardHelpers(context.game, context.fonts, context.icons, size, None, "test")
    for _ in range(2):
        svg = helpers.text_box("Spin :gears: or :hexagonal-nut:", 80, 80, 600, 300, 50, fill="#123456")
        assert svg.count('fill="#c98a2b"') == 1 and svg.count('fill="#123456"') == 2  # the text's and the nut's


def test_measured_width_matches_cairo_ink(tmp_path: Path) -> None:
    """The wrap widths are only right if cairosvg draws text exactly as wide as the font metrics say."""
    configure_fontconfig([REPO / "fonts"])
    for family in ("Roboto Mono", "Share Tech Mono"):
        text = "MMMMMMMMMMMMMMMMMMMMMMMMMMMMMM"
        size = 41.3
        expected = FONTS.face(family).width(text, size)
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="100"><rect width="1600" height="100" '
               f'fill="white"/><text x="10" y="70" font-family="{family}" font-size="{size}" '
               f'text-rendering="geometricPrecision">{text}I</text></svg>')
        image = np.asarray(draw_svg(svg, 1600, 100, 300, REPO, REPO.as_uri() + "/").convert("L"))
        ink = np.where(image.min(axis=0) < 128)[0]
        # The trailing I is drawn where the M run ends: its stem sits about mid-advance after it.
        i_center = FONTS.face(family).width("I", size) / 2
        assert ink.max() - ink.min() > 0
        stem = ink[ink > 10 + expected - 2]
        assert abs((stem.min() + stem.max()) / 2 - (10 + expected + i_center)) < 0.004 * expected


def test_escaping_and_markup_render_as_text(tiny_game) -> None:
    plan = plan_build(BuildContext.load(tiny_game, "tiny", tiny_game / "output"))
    svg = plan.faces["alpha"].rendered.svg
    ElementTree.fromstring(svg)  # well-formed despite & < > "
    assert "Fire" in _texts(svg) and "&" in _texts(svg) and "<2>" in _texts(svg) and '"quoted"' in _texts(svg)
    beta = plan.faces["beta"].rendered.svg
    assert 'font-weight="bold">Bold<' in beta and 'font-style="italic">italic<' in beta
    assert '<g transform=' in beta  # the :scrap: icon drawn inline


def test_undefined_field_names_template_line_and_card(workspace) -> None:
    with pytest.raises(CardgenError) as info:
        _plan_with_face(workspace, '<svg {{ geo.svg_attrs }}>\n  <text>{{ card.nmae }}</text>\n</svg>\n')
    problem = info.value.problems[0]
    assert problem.file == "templates/g/face.svg" and problem.row == 2
    assert "nmae" in problem.message and "card 'alpha'" in problem.message and "cards.csv:2" in problem.message


def test_empty_number_cell_prints_nothing_alone_or_joined(workspace) -> None:
    """An empty `power: int` cell is None to tests (`is none`), and prints nothing in `{{ }}` and in `~`, as an
    empty text cell does (nanDeck and Squib print an empty cell as nothing)."""
    face = ('<svg {{ geo.svg_attrs }}><text id="alone">[{{ card.power }}]</text>'
            '<text id="joined">{{ card.power ~ " power" }}</text><text id="test">{{ card.power is none }}</text>'
            '{{ text_line(card.power ~ " x", 10, 10, 500, 40) }}</svg>')
    plan = _plan_with_face(workspace, face, "name,power\nAlpha,\nBeta,3\n")
    texts = {e.get("id"): "".join(e.itertext()) for e in ElementTree.fromstring(plan.faces["alpha"].rendered.svg)
             .iter(f"{SVG_NS}text") if e.get("id")}
    assert texts == {"alone": "[]", "joined": " power", "test": "True"}
    assert _texts(plan.faces["alpha"].rendered.svg) == ["x"]
    assert _texts(plan.faces["beta"].rendered.svg) == ["3", "x"]


def test_position_in_raw_svg_counts_percentages_from_the_cut_line_as_the_helpers_do(workspace) -> None:
    """`position('15%')` in a raw SVG attribute is where `text_box`'s x of "15%" is (in from the cut line, past the
    bleed), while `length('15%')` is a width (15% of the trim width); both as the box a helper records."""
    face = ('<svg {{ geo.svg_attrs }}><rect id="r" x="{{ position(\'15%\') }}" y="{{ position(\'10%\', \'y\') }}" '
            'width="{{ length(\'70%\') }}" height="{{ length(\'20%\', \'y\') }}"/>'
            '{{ text_box(card.name, "15%", "10%", "70%", "20%", 40) }}</svg>')
    plan = _plan_with_face(workspace, face)
    rendered = plan.faces["alpha"].rendered
    root = ElementTree.fromstring(rendered.svg)
    rect = next(e for e in root.iter(f"{SVG_NS}rect") if e.get("id") == "r")
    [box] = rendered.boxes
    bleed = 3.175 / 25.4 * 300  # the default bleed at the default 300 DPI: 37.5 px
    trim_width = float(root.get("width", "").removesuffix("px")) - 2 * bleed
    assert (box.x, box.width) == pytest.approx((bleed + 0.15 * trim_width, 0.7 * trim_width))
    assert [float(rect.get(k, "")) for k in ("x", "y", "width", "height")] == pytest.approx(
        [box.x, box.y, box.width, box.height])


def test_template_syntax_error_names_line(workspace) -> None:
    with pytest.raises(CardgenError, match="template syntax error") as info:
        _plan_with_face(workspace, '<svg {{ geo.svg_attrs }}>\n{% if card.name %}\n</svg>\n')
    assert info.value.problems[0].file == "templates/g/face.svg"


def test_unbundled_font_is_an_error(workspace) -> None:
    with pytest.raises(CardgenError, match="font family 'Comic Sans MS' is not available"):
        _plan_with_face(workspace, '<svg {{ geo.svg_attrs }}><text font-family="Comic Sans MS">x</text></svg>')


def test_family_with_only_a_bold_face_names_the_missing_face(tmp_path: Path) -> None:
    """A fonts/ folder holding only the bold file of a family: the message says the regular face is missing,
    not that the family is unavailable (with a "did you mean" naming the same family)."""
    from fontTools.ttLib import TTFont

    fonts = tmp_path / "fonts"
    fonts.mkdir()
    font = TTFont(bundled.FONTS_DIR / "Roboto-Bold.ttf")
    for record in font["name"].names:
        if record.nameID in (1, 16):
            record.string = "Liberation Sans Narrow"
    font.save(fonts / "LiberationSansNarrow-Bold.ttf")
    book = FontBook(fonts)
    assert book.face("Liberation Sans Narrow", bold=True).path.name == "LiberationSansNarrow-Bold.ttf"
    with pytest.raises(CardgenError) as info:
        book.face("Liberation Sans Narrow")
    message = info.value.problems[0].message
    assert "has no regular face" in message and "only bold (LiberationSansNarrow-Bold.ttf)" in message
    assert "not available" not in message and "did you mean" not in message


def test_a_font_saved_with_its_size_and_time_is_read_again(tmp_path: Path) -> None:
    """The faces of a fonts/ folder are kept by each file's content stamp (`storage.content_stamp`): a same-size save
    keeping the modification time (another family name of as many letters) is read again, not taken for the font it
    replaced (whose metrics would lay out the cards the renders' key says are of the new font)."""
    from fontTools.ttLib import TTFont

    fonts = tmp_path / "fonts"
    fonts.mkdir()
    path = fonts / "Mine-Regular.ttf"

    def saved(family: str) -> None:
        font = TTFont(bundled.FONTS_DIR / "Roboto-Regular.ttf")
        for record in font["name"].names:
            if record.nameID in (1, 16):
                record.string = family
        font.save(path)

    saved("Aaaa Sans")
    size, stamped = path.stat().st_size, path.stat().st_mtime_ns
    assert FontBook(fonts).face("Aaaa Sans").path == path
    saved("Bbbb Sans")
    os.utime(path, ns=(stamped, stamped))
    assert path.stat().st_size == size
    assert FontBook(fonts).face("Bbbb Sans").path == path


def test_url_fetcher_refuses_outside_and_network(tmp_path: Path) -> None:
    inside = tmp_path / "project"
    inside.mkdir()
    (inside / "art.png").write_bytes(b"png")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", inside / "link.png")
    fetch = make_url_fetcher(inside)
    assert fetch((inside / "art.png").as_uri(), "image/*") == b"png"
    assert fetch("data:image/png;base64,cG5n", "image/*") == b"png"  # decoded locally
    for url in [(tmp_path / "secret.txt").as_uri(), (inside / "link.png").as_uri(),
                (inside / ".." / "secret.txt").as_uri(), "http://example.com/a.png", "https://x/y.png"]:
        with pytest.raises(RenderFailure):
            fetch(url, "image/*")


def test_url_fetcher_serves_a_file_only_as_its_digest_says(tmp_path: Path) -> None:
    """A file the card's cache key was made of is served only with those bytes (a save meanwhile fails the drawing,
    rather than draw the save into an image kept under the earlier content's key); another file as it is."""
    import hashlib

    (tmp_path / "art.png").write_bytes(b"png")
    (tmp_path / "other.png").write_bytes(b"other")
    fetch = make_url_fetcher(tmp_path, {str(tmp_path / "art.png"): hashlib.sha256(b"png").hexdigest()})
    assert fetch((tmp_path / "art.png").as_uri(), "image/*") == b"png"
    assert fetch((tmp_path / "other.png").as_uri(), "image/*") == b"other"
    (tmp_path / "art.png").write_bytes(b"new")
    with pytest.raises(RenderFailure, match="changed while the build drew it"):
        fetch((tmp_path / "art.png").as_uri(), "image/*")


def test_setting_cairosvg_up_imports_no_network_code_and_cairosvg_s_own_reader_still_reads(tmp_path: Path) -> None:
    """A render worker's set-up leaves urllib.request (http.client, ssl, email: ~11 ms) unimported, though cairosvg
    names its `urlopen` as it is imported; that reader still works (a data: URL read through it), and then
    urllib.request is the real module, as any import of it after the set-up gets."""
    import subprocess

    code = ("import sys; from pathlib import Path; from cardgen.raster.render import draw_svg, setup_cairosvg\n"
            "setup_cairosvg()\n"
            "svg = '<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><rect width=\"4\" "
            "height=\"2\" fill=\"red\"/></svg>'\n"
            "image = draw_svg(svg, 4, 4, 96, Path(sys.argv[1]), 'file:///')\n"
            "print(image.getpixel((0, 0)), image.getpixel((0, 3)))\n"
            "print(sorted({'urllib.request', 'http.client', 'ssl', 'email'} & set(sys.modules)))\n"
            "import cairosvg.url\n"
            "print(cairosvg.url.fetch('data:text/plain;base64,aGk=', 'text/css'))\n"
            "import urllib.request\n"
            "print(hasattr(urllib.request, 'build_opener'), sys.modules['urllib.request'] is urllib.request)\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["(255, 0, 0) (255, 255, 255)", "[]", "b'hi'", "True True"], done.stderr
    # Another thread importing urllib.request while cairosvg is imported gets the stand-in: its other names are the
    # real module's, and its own two read through the real module too
    code = ("import sys; from cardgen.raster.render import _urllib_request_deferred\n"
            "with _urllib_request_deferred():\n"
            "    import urllib.request as meanwhile\n"
            "    print(meanwhile.urlopen(meanwhile.Request('data:text/plain;base64,aGk=')).read(), "
            "meanwhile.HTTPRedirectHandler.__module__)\n"
            "import urllib.request\n"
            "print(sys.modules['urllib.request'] is urllib.request, hasattr(urllib.request, 'build_opener'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["b'hi' urllib.request", "True True"], done.stderr


def test_image_helper_refuses_escaping_paths(workspace) -> None:
    with pytest.raises(CardgenError, match="outside the project"):
        _plan_with_face(workspace, '<svg {{ geo.svg_attrs }}>{{ image(card.art, 0, 0, 100, 100) }}</svg>',
                        "name,art\nA,../../../etc/passwd\n")


def test_image_in_card_is_drawn(workspace) -> None:
    face = '<svg {{ geo.svg_attrs }}><rect width="100%" height="100%" fill="white"/>' \
           '{{ image(card.art, 100, 100, 400, 400, fit="stretch") }}</svg>'
    data = write_game(workspace, "i", SIMPLE_MANIFEST, {"cards.csv": "name,art\nA,art/red.png\n"},
                      {"face.svg": face, "back.svg": SIMPLE_BACK})
    (data / "art").mkdir()
    Image.new("RGB", (20, 20), (255, 0, 0)).save(data / "art" / "red.png")
    result = build_game(workspace, "i", BuildOptions(workspace / "output", jobs=1))
    image = Image.open(result.out_dir / "cards" / "main" / "a.png")
    assert image.getpixel((300, 300)) == (255, 0, 0) and image.getpixel((50, 50)) == (255, 255, 255)


def _count_parses(monkeypatch) -> list[Path]:
    """The font files fontTools reads from now on (each `_parse_face` call)."""
    from cardgen.load import fonts

    parsed: list[Path] = []
    parse = fonts._parse_face
    monkeypatch.setattr(fonts, "_parse_face", lambda p: parsed.append(p) or parse(p))
    return parsed


def _count_name_parses(monkeypatch) -> list[Path]:
    """The font files fontTools reads the names and sizes of from now on (each `_parse_names` call)."""
    from cardgen.load import fonts

    parsed: list[Path] = []
    parse = fonts._parse_names
    monkeypatch.setattr(fonts, "_parse_names", lambda p: parsed.append(p) or parse(p))
    return parsed


def test_font_metrics_are_kept_between_builds_and_read_again_when_damaged(tmp_path, monkeypatch) -> None:
    """Metrics read from a workspace's own font file are kept in the output root's cache: the next build reads
    no font file with fontTools; an entry that is damaged, or not what this cardgen writes, is read from the
    font again."""
    import shutil

    from cardgen.core.storage import Cache
    from cardgen.load import fonts

    monkeypatch.setattr(fonts, "_metrics", None)
    fonts.keep_metrics(tmp_path)
    (tmp_path / "fonts").mkdir()
    path = tmp_path / "fonts" / "Mine.ttf"
    shutil.copyfile(sorted(bundled.FONTS_DIR.glob("*.ttf"))[0], path)
    first = fonts._read_face(path)
    parsed = _count_parses(monkeypatch)
    assert fonts._read_face(path) == first and not parsed  # the same face, advances and all, from the cache
    (entry,) = (tmp_path / ".cache" / "font-metrics").rglob("*.json")
    entry.write_text(entry.read_text().replace('"advances": {', '"advances": {"32": 1, '))  # damaged
    assert fonts._read_face(path) == first and parsed == [path]
    Cache(tmp_path, "font-metrics", ".json").put_json(entry.stem, {"family": "Other"})  # sealed, not ours
    assert fonts._read_face(path) == first and parsed == [path, path]


def test_bundled_font_metrics_are_read_once_per_user_cache(tiny_game, tmp_path, monkeypatch) -> None:
    """Without the bundled fonts' index (or with one out of date), their metrics are kept in the user's cache
    folder (XDG_CACHE_HOME), so a cold build into an empty output root reads no bundled font with fontTools once
    any build has; the first reads every face's names and sizes but the advances of the faces it measures text
    with only; a damaged entry is read from the font again; without a user cache folder that can be written, they
    are kept in the output root's cache."""
    from cardgen.core import bundled
    from cardgen.load import fonts

    monkeypatch.setattr(fonts, "bundled_index", dict)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    parsed = _count_parses(monkeypatch)

    def cold_build(out: str) -> list[Path]:
        fonts._scan.cache_clear()  # as in a new process
        parsed.clear()
        build_game(tiny_game, "tiny", BuildOptions(out_root=tmp_path / out, jobs=1), None, ["gallery"])
        return [p for p in parsed if p.parent == bundled.FONTS_DIR]

    faces = sorted(p for p in bundled.FONTS_DIR.iterdir() if p.suffix in fonts.FONT_SUFFIXES)
    names = _count_name_parses(monkeypatch)
    measured = cold_build("a")  # the first build anywhere reads every bundled face's names, a few faces whole
    assert sorted(names) == faces and 0 < len(measured) <= 4 and set(measured) < set(faces)
    kept = sorted((tmp_path / "user-cache" / "cardgen" / "font-metrics").rglob("*.json"))
    assert len(kept) == len(faces) and not (tmp_path / "a" / ".cache" / "font-metrics").exists()
    names.clear()
    assert cold_build("b") == [] and names == []  # another empty output root: no bundled font read again
    whole = [entry for entry in kept if b'"advances": {' in entry.read_bytes()]
    assert len(whole) == len(measured)  # the faces measured with are kept with their advances
    whole[0].write_bytes(whole[0].read_bytes().replace(b'"advances": {', b'"advances": {"32": 1, '))  # damaged
    assert len(cold_build("c")) == 1 and len(names) == 1
    assert cold_build("d") == []  # and kept again
    (tmp_path / "a-file").write_text("")  # no user cache folder can be made there: the output root's cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))
    assert sorted(cold_build("e")) == sorted(measured)
    assert len(list((tmp_path / "e" / ".cache" / "font-metrics").rglob("*.json"))) == len(faces)


def test_kept_advances_are_read_only_for_the_faces_that_measure_text(tiny_game, tmp_path, monkeypatch) -> None:
    """A build reads the kept advances of the faces its text uses, not of all 26 bundled ones; a face reads the
    same advances as its font file holds, and advances kept in another form are read from the font (the kept
    advances of the user's cache, used without the bundled fonts' index)."""
    from cardgen.core import bundled
    from cardgen.core.storage import Cache
    from cardgen.load import fonts

    monkeypatch.setattr(fonts, "bundled_index", dict)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    for out in ("a", "b"):  # the first keeps every bundled face's metrics, the second reads them kept
        fonts._scan.cache_clear()
        build_game(tiny_game, "tiny", BuildOptions(out_root=tmp_path / out, jobs=1), None, ["gallery"])
    faces = list(fonts._faces_in(bundled.FONTS_DIR).values())
    read = [face for face in faces if face.read_advances is not None]
    assert 0 < len(read) <= 4 < len(faces)
    parsed = _count_parses(monkeypatch)
    for face in faces:
        assert face.advances == fonts._parse_face(face.path).advances and face.advances
    assert len(parsed) == 2 * len(faces) - len(read)  # those never measured with read their advances now
    (entry,) = [path for path in (tmp_path / "user-cache" / "cardgen" / "font-metrics").rglob("*.json")
                if path.read_bytes().startswith(b'{"family": "Roboto", "bold": true, "italic": false')]
    header = entry.read_bytes().partition(b"\n")[0]
    Cache.in_folder(entry.parents[1], ".json").put_bytes(entry.stem, header + b"\n[1, 2]")  # sealed, not ours
    fonts._scan.cache_clear()
    parsed.clear()
    bold = fonts.FontBook(tmp_path).face("Roboto", bold=True)
    assert bold.path == fonts._read_face(bold.path).path and not parsed
    assert bold.width("Will", 10) == fonts._parse_face(bold.path).width("Will", 10) and parsed == [bold.path] * 2


def test_a_build_that_fails_leaves_its_cache_folder_marked_as_cardgen_s(tiny_game) -> None:
    """The cache is marked before anything can go into it (the font metrics are read before the game is
    loaded): a build stopped by an error must not leave an unmarked .cache/ that the next build would refuse
    as someone else's folder."""
    from cardgen.core.ownership import is_ours

    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    good = manifest.read_text()
    manifest.write_text(good + "decks: [\n")  # not YAML: the build stops while loading the game
    out = tiny_game / "output"
    with pytest.raises(CardgenError):
        build_game(tiny_game, "tiny", BuildOptions(out_root=out, jobs=1), None, ["gallery"])
    assert is_ours(out / ".cache")
    manifest.write_text(good)
    assert build_game(tiny_game, "tiny", BuildOptions(out_root=out, jobs=1), None, ["gallery"]).cards == 3


class _FrozenCount:
    """Card work that writes how many objects the worker's garbage collector leaves alone (frozen ones)."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __call__(self, image: object) -> None:
        import gc

        self.target.write_text(str(gc.get_freeze_count()))


def test_forked_render_workers_leave_the_build_s_objects_to_the_main_process(tmp_path: Path) -> None:
    """The main process's objects are frozen before the workers fork: a worker's garbage collector would
    otherwise visit (and so copy) every page of the build's heap, which at 10,000 cards is hundreds of MiB
    per worker."""
    from cardgen.raster.pool import run_jobs
    from cardgen.raster.render import Drawing, RasterJob

    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'
    drawing = Drawing(svg, 8, 8, 96, str(tmp_path), tmp_path.as_uri() + "/", ())
    jobs = [RasterJob(f"k{n}", drawing, str(tmp_path / f"{n}.png"), work=(_FrozenCount(tmp_path / f"{n}.frozen"),))
            for n in range(4)]
    done: list[tuple[str, str | None]] = []
    run_jobs(jobs, 2, lambda key, error: done.append((key, error)))
    assert sorted(done) == [(f"k{n}", None) for n in range(4)]
    counts = [int((tmp_path / f"{n}.frozen").read_text()) for n in range(4)]
    assert min(counts) > 10_000, counts  # everything the main process had made when it forked
    import gc

    assert gc.get_freeze_count() == 0  # and unfrozen again once drawing is over


class _PNGSeen:
    """Card work that notes whether the card's PNG was written when it ran, then fails if asked to."""

    def __init__(self, png: Path, seen: list[bool], fail: bool = False) -> None:
        self.png, self.seen, self.fail = png, seen, fail

    def __call__(self, card: object) -> None:
        self.seen.append(self.png.exists())
        if self.fail:
            raise RuntimeError("the work failed")


def test_a_drawn_card_s_work_is_done_before_its_png_is_encoded(tmp_path: Path) -> None:
    """A card drawn now has its work done first, on the pixels just drawn (still in the processor's cache), then its
    PNG encoded into its cache entry: written and sealed also when the work fails, and in a thread beside the work
    with `encode_beside`."""
    from cardgen.core.storage import verify
    from cardgen.raster.render import Drawing, RasterJob, run_job

    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="4" fill="red"/></svg>'
    drawing = Drawing(svg, 8, 8, 96, str(tmp_path), tmp_path.as_uri() + "/", ())
    seen: list[bool] = []
    first, second, third = (tmp_path / f"{n}.png" for n in range(3))
    assert run_job(RasterJob("k", drawing, str(first), work=(_PNGSeen(first, seen),))) == ("k", None)
    with pytest.raises(RuntimeError):
        run_job(RasterJob("k", drawing, str(second), work=(_PNGSeen(second, seen, fail=True),)))
    assert run_job(RasterJob("k", drawing, str(third), work=(_PNGSeen(third, [], fail=False),), encode_beside=True)) \
        == ("k", None)
    assert seen == [False, False]
    for png in (first, second, third):
        assert verify(png)
        with Image.open(png) as image:
            assert image.size == (8, 8) and image.convert("RGB").getpixel((1, 1)) == (255, 0, 0)


def test_drawn_pixels_keep_their_colours_and_transparency(tmp_path: Path) -> None:
    """cairo's premultiplied BGRA pixels come out as the SVG's colours: on white for cards, with their alpha for
    tokens and boards (transparent), where uncovered pixels are fully transparent and a half-transparent red
    stays red at half alpha."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="10"><rect width="10" height="10" fill="#f00"/>'
           '<rect x="10" width="10" height="10" fill="#00f"/><rect x="20" width="10" height="10" fill="#f00" '
           'fill-opacity="0.5"/></svg>')
    card = draw_svg(svg, 40, 10, 96, tmp_path, tmp_path.as_uri() + "/")
    token = draw_svg(svg, 40, 10, 96, tmp_path, tmp_path.as_uri() + "/", transparent=True)
    assert card.mode == "RGB" and token.mode == "RGBA"
    assert [card.getpixel((x, 5)) for x in (5, 15, 35)] == [(255, 0, 0), (0, 0, 255), (255, 255, 255)]
    assert [token.getpixel((x, 5)) for x in (5, 15)] == [(255, 0, 0, 255), (0, 0, 255, 255)]
    red, green, blue, alpha = token.getpixel((25, 5))
    assert red >= 250 and green == blue == 0 and 126 <= alpha <= 129
    assert token.getpixel((35, 5))[3] == 0


_FEATURES = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="300" '
             'height="200"><defs><linearGradient id="g"><stop offset="0" stop-color="#f80"/><stop offset="1" '
             'stop-color="#08f"/></linearGradient><radialGradient id="r"><stop offset="0" stop-color="#fff"/><stop '
             'offset="1" stop-color="#606" stop-opacity="0.4"/></radialGradient><pattern id="p" width="10" height="10" '
             'patternUnits="userSpaceOnUse"><circle cx="5" cy="5" r="3" fill="#0a0"/></pattern><clipPath id="c">'
             '<circle cx="220" cy="60" r="50"/></clipPath><mask id="m"><rect width="300" height="200" fill="#fff"/>'
             '<circle cx="60" cy="150" r="30" fill="#000"/></mask></defs><rect width="300" height="100" '
             'fill="url(#g)"/>'
             '<rect y="100" width="150" height="100" fill="url(#p)" mask="url(#m)"/><rect x="150" y="100" width="150" '
             'height="100" fill="url(#r)" opacity="0.7"/><rect x="170" width="120" height="120" fill="#222" '
             'clip-path="url(#c)"/><image x="10" y="10" width="40" height="40" xlink:href="data:image/png;base64,'
             'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFUlEQVR4nAXBAQEAAACAEP9PF0JQGR7vBPykAXTzAAAAAElFTkSuQmCC"/>'
             '<text x="20" y="90" font-family="Roboto" font-size="22" text-rendering="geometricPrecision" '
             'transform="rotate(-5)">Fire &amp; Ice</text></svg>')


def test_a_card_resampled_to_a_cell_is_the_card_drawn_at_that_size_within_a_tolerance(tmp_path: Path) -> None:
    """A TTS cell is the card's pixels, the part inside the bleed resampled to the cell's size (`scaled`): its
    colours where they were, within a tolerance of drawing the SVG at that size (measured on this picture: 2.3/255
    on average, at edges; red and blue swapped give 32), and the same pixels from the surface the card was just drawn
    into as from its PNG file."""
    from cardgen.raster.render import Drawing, DrawnCard, encode_png, scaled

    configure_fontconfig([])
    card = Drawing(_FEATURES, 600, 400, 192, str(tmp_path), tmp_path.as_uri() + "/", ()).draw(tmp_path / "card.png")
    (tmp_path / "card.png").write_bytes(encode_png(card.image))
    small = np.asarray(draw_svg(_FEATURES, 300, 200, 96, tmp_path, tmp_path.as_uri() + "/"), dtype=int)
    cell = scaled(card, (300, 200), (0, 0, 600, 400))
    assert cell.tobytes() == scaled(DrawnCard(tmp_path / "card.png"), (300, 200), (0, 0, 600, 400)).tobytes()
    pixels = np.asarray(cell, dtype=int)
    assert pixels.shape == small.shape and np.abs(pixels - small).mean() <= 4
    assert np.abs(pixels[5, 5] - small[5, 5]).max() <= 2  # the gradient's orange corner stays orange
    middle = np.asarray(scaled(card, (150, 100), (150, 100, 450, 300)), dtype=int)  # the bleed cut off
    assert np.abs(middle - small[50:150, 75:225]).mean() <= 4


def test_a_build_that_stops_while_drawing_draws_no_more_jobs(tmp_path: Path) -> None:
    """When the build stops while workers draw (an error placing a card file, Ctrl-C), the jobs not started yet are
    dropped: leaving the process pool otherwise waits for every queued card to be drawn for nothing."""
    from cardgen.raster.pool import run_jobs
    from cardgen.raster.render import Drawing, RasterJob

    shapes = "".join(f'<circle cx="{n * 7 % 400}" cy="{n * 13 % 400}" r="{n % 50}"/>' for n in range(300))
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400">{shapes}</svg>'
    drawing = Drawing(svg, 400, 400, 96, str(tmp_path), tmp_path.as_uri() + "/", ())
    jobs = [RasterJob(f"k{n}", drawing, str(tmp_path / f"{n}.png")) for n in range(120)]

    def stop(key: str, error: str | None) -> None:
        raise OSError("no space left on device")

    with pytest.raises(OSError):
        run_jobs(jobs, 2, stop)
    drawn = len(list(tmp_path.glob("*.png")))
    # the first batch of jobs, and the batches the two workers had started or were sent meanwhile (pool.batches)
    assert 1 <= drawn < 40, drawn


def _note_drawing_process(folder: str, key: str, image: object) -> None:
    """Per-card work: note which process has the card's image (picklable: a module function, partly applied)."""
    (Path(folder) / key).write_text(str(os.getpid()))


class _DrawnWhere(Stage):
    """A stage whose only work is `_note_drawing_process` on every image of the build."""

    name = "drawn-where"

    def card_work(self, game: object, record: BuildRecord, out_root: Path) -> dict:
        folder = out_root.parent / "drawn-where"
        folder.mkdir(exist_ok=True)
        keys = [c.hash for c in record.cards] + [b.hash for b in record.backs.values()]
        return {key: functools.partial(_note_drawing_process, str(folder), key) for key in keys}

    def run(self, ctx: StageContext) -> list[Problem]:
        return []


@pytest.mark.parametrize("jobs", [1, 2])
def test_render_workers_start_before_the_game_is_loaded_and_draw_every_card(tiny_game: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            jobs: int) -> None:
    """With several jobs the render workers are forked before the game is loaded and validated (they set cairosvg up
    on the other core meanwhile), even for a game of a few cards, and they draw every card; with one job the build
    draws in its own process and starts none. No worker outlives the build."""
    import multiprocessing

    import cardgen.validate

    validate, during_validation = cardgen.validate.validate_context, []

    def watched(context: BuildContext, **options: object) -> list[Problem]:
        during_validation.append({p.pid for p in multiprocessing.active_children()})
        return validate(context, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(cardgen.validate, "validate_context", watched)
    result = build_game(tiny_game, "tiny", BuildOptions(tiny_game / "output", jobs=jobs), None, [_DrawnWhere()])
    assert result.rendered == 4
    drawn_in = {int(p.read_text()) for p in (tiny_game / "drawn-where").iterdir()}
    workers = during_validation[0]
    if jobs == 1:
        assert workers == set() and drawn_in == {os.getpid()}
    else:
        assert len(workers) == 2 and drawn_in <= workers and os.getpid() not in drawn_in
    assert multiprocessing.active_children() == []


def test_a_build_stopped_by_its_game_leaves_no_render_worker_running(tiny_game: Path) -> None:
    """Workers started early are ended when the build stops before drawing (an error in the data): the error is the
    designer's one-line problem, and nothing keeps running."""
    import multiprocessing

    (tiny_game / "data" / "tiny" / "cards.csv").write_text("name,power,text,count\nAlpha,not a number,x,1\n")
    with pytest.raises(CardgenError) as raised:
        build_game(tiny_game, "tiny", BuildOptions(tiny_game / "output", jobs=2))
    assert "power" in str(raised.value)
    assert multiprocessing.active_children() == []


def _end_the_process(image: object) -> None:
    """Per-card work that kills the render worker doing it, as the kernel does when memory runs out."""
    os._exit(9)


class _KillsItsWorker(Stage):
    """A stage whose work on the build's first card ends the worker that draws it."""

    name = "kills-its-worker"

    def card_work(self, game: object, record: BuildRecord, out_root: Path) -> dict:
        return {record.cards[0].hash: _end_the_process}

    def run(self, ctx: StageContext) -> list[Problem]:
        return []


def test_a_render_worker_that_dies_is_one_readable_error_and_leaves_the_previous_output(tiny_game: Path) -> None:
    import multiprocessing

    out = tiny_game / "output"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2))
    before = sorted(p.relative_to(out).as_posix() for p in (out / "tiny").rglob("*"))
    (tiny_game / "data" / "tiny" / "cards.csv").write_text("name,power,text,count\nGamma,3,new,1\n")
    with pytest.raises(CardgenError, match="a drawing process stopped unexpectedly") as raised:
        build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), None, [_KillsItsWorker(), "gallery"])
    assert len(raised.value.problems) == 1
    assert sorted(p.relative_to(out).as_posix() for p in (out / "tiny").rglob("*")) == before
    assert not list(out.glob(".tiny.building-*")) and multiprocessing.active_children() == []


def test_the_key_of_a_drawn_image_holds_the_version_of_cairosvg_that_draws_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    import cairosvg

    # cairosvg's version, as cairosvg itself reports it, is read without importing cairosvg (only workers draw)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from cardgen.raster.render import _drawing_library_version as v, content_key; "
            "print(v(), 'cairosvg' in sys.modules, content_key('0' * 32))")
    real = subprocess.run([sys.executable, "-c", code, str(tmp_path / "nothing")], capture_output=True, text=True,
                          check=True).stdout.split()
    assert real[:2] == [cairosvg.__version__, "False"]
    # another cairosvg (its VERSION file, or only its package metadata when it has none) changes every key
    for version_file, metadata in ((True, False), (False, True)):
        site = tmp_path / f"site-{version_file}"
        (site / "cairosvg").mkdir(parents=True)
        (site / "cairosvg" / "__init__.py").write_text("")
        if version_file:
            (site / "cairosvg" / "VERSION").write_text("99.1\n")
        if metadata:
            (site / "CairoSVG-98.2.dist-info").mkdir()
            (site / "CairoSVG-98.2.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: CairoSVG\n"
                                                                       "Version: 98.2\n")
        other = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True,
                               check=True).stdout.split()
        assert other[0] == ("99.1" if version_file else "98.2")
        assert other[2] != real[2]


def _worker_state(pause: float) -> tuple[int, bool]:
    """A job for a render worker: its process, and whether it has cairosvg set up (after a pause, so that the
    jobs of a batch are spread over every worker taking jobs)."""
    import sys
    import time

    time.sleep(pause)
    return os.getpid(), "cairosvg" in sys.modules


def test_workers_held_back_take_no_job_until_the_pool_grows() -> None:
    """A rebuild's pool forks every worker but lets only the early one set cairosvg up and take jobs; once grown,
    the others do both. A pool that never grew still ends all its workers."""
    import multiprocessing

    from cardgen.raster.pool import started_workers

    with started_workers(2, early=1) as pool:
        assert pool is not None and len(multiprocessing.active_children()) == 2
        before = set(pool.map(_worker_state, [0.03] * 12))
        assert len(before) == 1 and all(ready for _, ready in before), before
        pool.grow()
        after = set(pool.map(_worker_state, [0.05] * 40))
        assert len({pid for pid, _ in after}) == 2 and all(ready for _, ready in after), after
    with started_workers(2, early=1) as pool:
        assert pool is not None and len(set(pool.map(_worker_state, [0.03] * 12))) == 1
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(("cores", "handed_out"), [(2, False), (3, False), (2, True)])
def test_render_workers_set_up_one_at_a_time_on_the_cores_the_build_leaves(tmp_path: Path, cores: int,
                                                                           handed_out: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers set up as many at once as there are cores besides the build's (which loads and validates the game
    meanwhile): on 2 cores one after the other, on 3 both at once; once the build hands its jobs out, those waiting
    go at once."""
    import time

    import cardgen.raster.pool
    from cardgen.raster.pool import run_jobs, started_workers

    def noted(modules: Sequence[str] = ()) -> None:  # forked workers run it as they set up
        began = time.monotonic()
        time.sleep(0.3)
        (tmp_path / f"{os.getpid()}.set-up").write_text(f"{began} {time.monotonic()}")

    monkeypatch.setattr(cardgen.raster.pool, "warm_up", noted)
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    with started_workers(2) as pool:
        assert pool is not None
        if handed_out:
            time.sleep(0.1)  # the first is setting up
            run_jobs([], 2, lambda key, error: None, pool=pool)  # a build handing its (here no) jobs out
        assert len(set(pool.map(_worker_state, [0.05] * 12))) == 2  # both take jobs
    (first, first_end), (second, _) = sorted(tuple(map(float, p.read_text().split())) for p in
                                             tmp_path.glob("*.set-up"))
    assert (second >= first_end) == (cores == 2 and not handed_out), (first, first_end, second)


def test_the_first_render_worker_to_set_up_does_the_work_ahead_in_its_turn(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The work a build gives its workers ahead (a first build's templates compiled) is done once, by the first worker
    to set up, before its own set-up and within its turn: on 2 cores the other sets up after both."""
    import functools
    import time

    import cardgen.raster.pool
    from cardgen.raster.pool import started_workers

    def noted(kind: str, modules: Sequence[str] = ()) -> None:  # forked workers run it
        began = time.monotonic()
        time.sleep(0.2)
        (tmp_path / f"{os.getpid()}.{kind}").write_text(f"{began} {time.monotonic()}")

    monkeypatch.setattr(cardgen.raster.pool, "warm_up", functools.partial(noted, "set-up"))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with started_workers(2, ahead=functools.partial(noted, "ahead")) as pool:
        assert pool is not None and len(set(pool.map(_worker_state, [0.05] * 12))) == 2  # both take jobs
    [ahead] = tmp_path.glob("*.ahead")
    spans = {p.name: tuple(map(float, p.read_text().split())) for p in tmp_path.iterdir()}
    (_, first_end), (second, _) = sorted(spans[p] for p in spans if p.endswith(".set-up"))
    assert spans[ahead.stem + ".set-up"][0] >= spans[ahead.name][1]  # ahead, then its own set-up
    assert second >= first_end  # the other's set-up after both


def test_a_render_worker_sets_up_after_a_while_when_the_one_before_never_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed while it set up never lets the next one in: that one waits SETUP_WAIT_SECONDS, then sets up,
    and gives back no turn it did not take."""
    import multiprocessing
    import time

    import cardgen.raster.pool

    monkeypatch.setattr(cardgen.raster.pool, "SETUP_WAIT_SECONDS", 0.2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    held = cardgen.raster.pool._HeldBack(multiprocessing.get_context("fork"), 2, 2)
    assert held.spare.acquire(block=False)  # the turn of the worker that was killed
    began = time.monotonic()
    with held.setting_up():
        waited = time.monotonic() - began
    assert 0.15 < waited < 2 and not held.spare.acquire(block=False)


def _imported(name: str) -> bool:
    return name in sys.modules


def test_render_workers_import_the_card_work_modules_as_they_start() -> None:
    """The modules of the output stages' card work (it comes with the jobs) are imported by each worker as it
    starts, while the build loads the game, not while the first job waits to be unpickled; a build names its
    stages' (not the stages themselves: those import the whole pipeline, see test_pdf)."""
    from cardgen.outputs import work_modules
    from cardgen.raster.pool import started_workers

    assert "tabnanny" not in sys.modules  # a module nothing here imports, standing in for a stage's
    with started_workers(2, modules=["tabnanny"]) as pool:
        assert pool is not None and pool.submit(_imported, "tabnanny").result()
    assert "tabnanny" not in sys.modules
    assert work_modules(["print", "pod", "tts", "gallery", "trimmed"]) == \
        ["cardgen.outputs.print_work", "cardgen.outputs.tts.work"]


@pytest.mark.parametrize("count", [3, 40])
def test_a_rebuild_lets_its_held_workers_draw_only_when_it_has_many_jobs(tmp_path: Path, count: int) -> None:
    """A few jobs (a card or two edited) are drawn by the one early worker; many jobs (a template edited) by
    every worker."""
    from cardgen.raster.pool import run_jobs, started_workers
    from cardgen.raster.render import Drawing, RasterJob

    shapes = "".join(f'<circle cx="{n * 7 % 400}" cy="{n * 13 % 400}" r="{n % 50}"/>' for n in range(300))
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400">{shapes}</svg>'
    drawing = Drawing(svg, 400, 400, 96, str(tmp_path), tmp_path.as_uri() + "/", ())
    (tmp_path / "where").mkdir()
    jobs = [RasterJob(f"k{n}", drawing, str(tmp_path / f"{n}.png"),
                      work=(functools.partial(_note_drawing_process, str(tmp_path / "where"), f"k{n}"),))
            for n in range(count)]
    with started_workers(2, early=1) as pool:
        run_jobs(jobs, 2, lambda key, error: None, pool=pool)
    drawn_in = {p.read_text() for p in (tmp_path / "where").iterdir()}
    assert len(list((tmp_path / "where").iterdir())) == count
    assert len(drawn_in) == (1 if count == 3 else 2)


def test_a_rebuild_starts_one_early_worker_and_a_first_or_forced_build_all(tiny_game: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The early workers a build asks for: all on a first build and with --force (every card is drawn), one on a
    rebuild (a card or two, mostly), so that this process keeps a core while it loads and validates; only a first
    build has them compile its templates ahead."""
    import cardgen.build.build

    started, asked = cardgen.build.build.started_workers, []

    def watched(workers: int, early: int | None = None, modules: Sequence[str] = (),
                ahead: Callable[[], None] | None = None) -> object:
        asked.append((early, ahead is not None))
        return started(workers, early, modules, ahead)

    monkeypatch.setattr(cardgen.build.build, "started_workers", watched)
    out = tiny_game / "output"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2))
    cards = tiny_game / "data" / "tiny" / "cards.csv"
    cards.write_text(cards.read_text().replace("Plain", "Plainer"))
    assert build_game(tiny_game, "tiny", BuildOptions(out, jobs=2)).rendered == 1
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2, force=True))
    assert asked == [(2, True), (1, False), (2, False)]


def test_a_rebuild_forks_its_render_worker_before_importing_the_pipeline(tiny_game: Path) -> None:
    """A rebuild forks its worker first, so that it sets cairosvg up on the other core while the build imports
    the pipeline (cardgen.build.build: pydantic, jinja2, ~0.2 s) and loads the game; a first build forks its workers
    after the imports, which they inherit, the output stages' card work too (each worker imported it as it set up).
    Both builds are whole."""
    import subprocess

    code = ("import sys, cardgen.raster.pool as pool; fork = pool.started_workers\n"
            "from cardgen.outputs import stage_names, work_modules\n"
            "def noting(*args, **kwargs):\n"
            "    print('pipeline imported at fork:', 'cardgen.build.build' in sys.modules,\n"
            "          all(m in sys.modules for m in work_modules(stage_names())), flush=True)\n"
            "    return fork(*args, **kwargs)\n"
            "pool.started_workers = noting\n"
            "from cardgen.commands.cli import main; main(['--root', sys.argv[1], 'build', 'tiny', '-j', '2'])")
    forks = []
    for edit in ("", "Gamma,4,New,1\n"):
        with (tiny_game / "data" / "tiny" / "cards.csv").open("a") as cards:
            cards.write(edit)
        result = subprocess.run([sys.executable, "-c", code, str(tiny_game)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        forks.append(result.stdout.splitlines()[0])
        assert (tiny_game / "output" / "tiny" / "tts").is_dir()
    assert forks == ["pipeline imported at fork: True True", "pipeline imported at fork: False False"]
    assert (tiny_game / "output" / "tiny" / "cards" / "main" / "gamma.png").is_file()


def test_a_render_worker_holds_ctrl_c_back_until_it_ignores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that reaches a render worker while it starts (forked, before it ignores Ctrl-C) waits, and is then
    dropped: let in, it raised the build's KeyboardInterrupt in the worker, which printed its traceback (seen in the
    Ctrl-C test under load). The build's own Ctrl-C is held only while it forks."""
    import signal

    import cardgen.raster.pool
    from cardgen.raster.pool import started_workers

    follow = cardgen.raster.pool._follow_the_build

    def watched(parent: int) -> None:
        blocked_at_start = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
        follow(parent)
        blocked_after = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
        (tmp_path / f"{os.getpid()}.mask").write_text(f"{blocked_at_start} {blocked_after}")

    monkeypatch.setattr(cardgen.raster.pool, "_follow_the_build", watched)
    with started_workers(2) as pool:
        assert pool is not None
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the build's, let in again
        pool.submit(int).result()
    masks = [path.read_text() for path in tmp_path.glob("*.mask")]
    assert masks and all(mask == "True False" for mask in masks), masks


def _save_as_jpeg(target: Path, card: object) -> None:
    """Card work that saves the card's own image (as a print JPEG does), again and again until its PNG is written
    (at most 500 times): a PNG encoding beside it meanwhile must not take this save's options for its own."""
    for _ in range(500):
        card.image.save(target, "JPEG", quality=50)  # type: ignore[attr-defined]
        if card.path.exists():  # type: ignore[attr-defined]
            break


def test_a_png_encoded_beside_the_card_s_work_is_the_same_file_and_leaves_no_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `encode_beside` (an edit's card), the PNG is encoded in a thread while the stages' work is done on the
    card: the same sealed file as when encoded first (its options its own, though the work saves the same card
    meanwhile), the work done on the same pixels, no thread left running (a process with one cannot fork render
    workers), and an error of the encoding raised by the job."""
    import threading
    import time

    from PIL import PngImagePlugin

    from cardgen.core.storage import verify
    from cardgen.raster.render import Drawing, RasterJob, run_job

    def slowly(image: Image.Image, *args: object) -> None:  # the work's saves come between its options and use
        time.sleep(0.05)
        PngImagePlugin._save(image, *args)  # type: ignore[arg-type]

    monkeypatch.setitem(Image.SAVE, "PNG", slowly)

    drawing = Drawing(_FEATURES, 300, 200, 96, str(tmp_path), tmp_path.as_uri() + "/", ())
    threads = threading.active_count()
    for name, beside in (("first", False), ("beside", True)):
        work = (functools.partial(_save_as_jpeg, tmp_path / f"{name}.jpg"),)
        job = RasterJob(name, drawing, str(tmp_path / f"{name}.png"), work=work, encode_beside=beside)
        assert run_job(job) == (name, None)
        assert threading.active_count() == threads
    assert (tmp_path / "beside.png").read_bytes() == (tmp_path / "first.png").read_bytes()
    assert verify(tmp_path / "beside.png")
    assert (tmp_path / "beside.jpg").read_bytes() == (tmp_path / "first.jpg").read_bytes()
    (tmp_path / "a-file").write_text("")
    with pytest.raises(OSError):
        run_job(RasterJob("nowhere", drawing, str(tmp_path / "a-file" / "nowhere.png"), encode_beside=True))
    assert threading.active_count() == threads


def test_only_a_build_drawing_fewer_images_than_its_cores_encodes_beside(tiny_game: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-card edit with two drawing processes encodes its PNG beside the card's work; a first build (more images
    than processes) and an edit with --jobs 1 (no core to spare) encode first."""
    import cardgen.build.plan

    real, beside = cardgen.build.plan.run_jobs, []

    def watched(jobs: list, *args: object, **kwargs: object) -> None:
        beside.append([job.encode_beside for job in jobs if not job.cached])
        real(jobs, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cardgen.build.plan, "run_jobs", watched)
    out, cards = tiny_game / "output", tiny_game / "data" / "tiny" / "cards.csv"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2))
    for jobs, text in ((2, "Plainer"), (1, "Plainest")):
        cards.write_text(cards.read_text().replace(",Plain", f",{text}", 1))
        assert build_game(tiny_game, "tiny", BuildOptions(out, jobs=jobs)).rendered == 1
    assert beside == [[False] * 4, [True], [False]]


def _filters(png: bytes) -> set[int]:
    """The filter types of a PNG's rows (8-bit RGB or RGBA, one or more IDAT chunks)."""
    import struct
    import zlib

    at, data, width, bpp = 8, b"", 0, 0
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"IHDR":
            width, bpp = struct.unpack(">I", png[at + 8:at + 12])[0], {2: 3, 6: 4}[png[at + 17]]
        data += png[at + 8:at + 8 + length] if kind == b"IDAT" else b""
        at += 12 + length
    rows = zlib.decompress(data)
    return set(rows[::width * bpp + 1])


def test_a_card_s_png_holds_its_pixels_unfiltered_where_that_packs_it_as_small_as_pillow(tmp_path: Path) -> None:
    """`encode_png`: flat card art (a Scrapbots card; RGB, and RGBA for tokens) is written with its rows unfiltered,
    smaller than Pillow's PNG of it; art like a photograph, which packs worse so, is Pillow's PNG byte for byte;
    either way a PNG reader gets the very pixels back."""
    import io

    from PIL import ImageFilter

    from cardgen.raster.render import PNG_OPTIONS, encode_png

    with Image.open(REPO / "tests" / "reference" / "scrapbots-scout.png") as scout:  # a card cardgen drew
        card = scout.convert("RGB")
    token = card.convert("RGBA")  # with transparent edges
    alpha = Image.new("L", card.size, 0)
    alpha.paste(255, (40, 40, card.width - 40, card.height - 40))
    token.putalpha(alpha)
    noise = Image.effect_noise((300, 400), 60).filter(ImageFilter.GaussianBlur(3))
    photo = Image.merge("RGB", [noise, noise.rotate(90), Image.linear_gradient("L").resize((300, 400))])
    for image, fast in ((card, True), (token, True), (photo, False), (card.resize((7, 5)), None)):
        png = encode_png(image)
        pillow = io.BytesIO()
        image.save(pillow, format="PNG", **PNG_OPTIONS)
        with Image.open(io.BytesIO(png)) as read:
            assert (read.mode, read.size, read.tobytes()) == (image.mode, image.size, image.tobytes())
        if fast:
            assert _filters(png) == {0} and len(png) < len(pillow.getvalue())
        elif fast is False:
            assert png == pillow.getvalue()


def test_a_large_image_s_png_is_deflated_a_strip_of_rows_at_a_time() -> None:
    """`encode_png` copies a board's rows a strip at a time: the bytes it holds at once (Python's, which tracemalloc
    sees) stay a small share of the image's, where its pixels copied whole would be several times them."""
    import tracemalloc

    from cardgen.raster.render import encode_png

    with Image.open(REPO / "tests" / "reference" / "scrapbots-scout.png") as scout:
        card = scout.convert("RGB")
    board = Image.new("RGB", (card.width * 3, card.height * 2), "white")
    for x in range(3):
        for y in range(2):
            board.paste(card, (x * card.width, y * card.height))
    tracemalloc.start()
    try:
        png = encode_png(board)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert _filters(png) == {0}
    assert peak < board.width * board.height * 3 / 4, peak


def test_many_jobs_go_to_the_workers_in_batches_each_job_drawn_and_reported_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build of many images sends them to the workers a few at a time (each submit costs the build's threads and a
    worker CPU), the batches shrinking to one job for the last ones; every job is still drawn and reported once."""
    from concurrent.futures import ProcessPoolExecutor

    from cardgen.raster.pool import BATCH_AT_MOST, TAIL_BATCHES, batches, run_jobs, started_workers
    from cardgen.raster.render import Drawing, RasterJob

    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="5"/></svg>'
    drawing = Drawing(svg, 8, 8, 96, str(tmp_path), tmp_path.as_uri() + "/", ())
    jobs = [RasterJob(f"k{n}", drawing, str(tmp_path / f"{n}.png")) for n in range(60)]
    cut = batches(jobs, 2)
    assert [job for batch in cut for job in batch] == jobs
    assert max(map(len, cut)) == BATCH_AT_MOST and all(len(batch) == 1 for batch in cut[-2 * TAIL_BATCHES:])
    assert [len(batch) for batch in batches(jobs[:7], 2)] == [1] * 7  # few jobs: one at a time
    submits, submit = [], ProcessPoolExecutor.submit

    def counted(self: ProcessPoolExecutor, fn: object, *args: object, **kwargs: object) -> object:
        submits.append(fn)
        return submit(self, fn, *args, **kwargs)  # type: ignore[arg-type]

    done: list[tuple[str, str | None]] = []
    with started_workers(2) as pool:
        monkeypatch.setattr(ProcessPoolExecutor, "submit", counted)
        run_jobs(jobs, 2, lambda key, error: done.append((key, error)), pool=pool)
    assert len(submits) == len(cut) < 30
    assert sorted(done) == sorted((f"k{n}", None) for n in range(60))
    for n in range(60):
        with Image.open(tmp_path / f"{n}.png") as png:
            assert png.size == (8, 8) and png.getpixel((0, 7)) == (255, 255, 255)


def test_a_mask_hides_by_its_luminance_drawn_into_the_card_s_surface(tmp_path: Path) -> None:
    """A black shape in a mask hides and a white one shows (SVG's luminance masks, as Inkscape draws them), with
    the mask drawn at the size of the card's image surface."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><mask id="m"><rect width="40" height="20" '
           'fill="#fff"/><rect width="20" height="20" fill="#000"/></mask><rect width="40" height="20" fill="#f00" '
           'mask="url(#m)"/></svg>')
    configure_fontconfig([])
    card = draw_svg(svg, 80, 40, 192, tmp_path, tmp_path.as_uri() + "/")
    assert card.getpixel((10, 20)) == (255, 255, 255) and card.getpixel((70, 20)) == (255, 0, 0)


_TEXTS = {  # text nodes cairosvg draws, each inside `<svg ...>` and the defs below
    "plain, its tspans on lines and in a colour": '<text x="10" y="40" font-family="Roboto" font-size="24" '
    'text-rendering="geometricPrecision"><tspan x="10" dy="0">Fire &amp; Ice</tspan><tspan x="10" dy="30" '
    'font-weight="bold" fill="#c00">Deal 3</tspan> damage</text>',
    "stroked": '<text x="10" y="60" font-family="Roboto" font-size="40" fill="#ff0" stroke="#00f" stroke-width="2">'
    'Outline</text>',
    "stroked by its group": '<g stroke="#0a0" stroke-width="3"><text x="10" y="60" font-family="Roboto" '
    'font-size="40" fill="none">Hollow</text></g>',
    "filled by a gradient sized by its box": '<text x="10" y="60" font-family="Roboto" font-size="40" '
    'fill="url(#g)">Gradient</text>',
    "a hidden tspan before a shown one": '<text x="10" y="60" font-family="Roboto" font-size="30"><tspan '
    'visibility="hidden">Hidden </tspan><tspan>shown</tspan></text>',
    "clipping": '<clipPath id="t"><text x="10" y="70" font-family="Roboto" font-size="60">CLIP</text></clipPath>'
    '<rect width="200" height="100" fill="#808" clip-path="url(#t)"/>',
    "on a path": '<path id="p" d="M10 80 Q100 0 190 80" fill="none"/><text font-family="Roboto" font-size="20">'
    '<textPath xlink:href="#p">Along <tspan fill="#c00">the</tspan> curve</textPath></text>',
}


@pytest.mark.parametrize("case", list(_TEXTS))
def test_text_is_drawn_as_cairosvg_draws_it_its_outlines_made_only_where_they_show(case: str, tmp_path: Path,
                                                                                    monkeypatch) -> None:
    """cardgen's cairosvg makes a text node's glyph outlines only where they can show or count (see
    `render._outline_text_for_strokes`): the same pixels as cairosvg's own drawing of text, stroked or not, in a
    clip path, on a path, hidden, filled by a gradient sized by its box; a plain unstroked text is drawn without
    making its outlines at all."""
    import cairocffi
    import cairosvg.surface
    import cairosvg.text

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" '
           'height="100"><defs><linearGradient id="g"><stop offset="0" stop-color="#f80"/><stop offset="1" '
           f'stop-color="#08f"/></linearGradient></defs>{_TEXTS[case]}</svg>')
    configure_fontconfig([])
    outlined: list[str] = []
    text_path = cairocffi.Context.text_path
    monkeypatch.setattr(cairocffi.Context, "text_path",
                        lambda self, text: outlined.append(text) or text_path(self, text))

    def drawn() -> np.ndarray:
        outlined.clear()
        return np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/"))

    ours = drawn()
    ours_outlined = list(outlined)
    own = cairosvg.text.text  # cairosvg's own drawer of text, as every tag that draws text names it
    monkeypatch.setattr(cairosvg.surface, "text", own)
    for tag, drawer in list(cairosvg.surface.TAGS.items()):
        if getattr(drawer, "outlined_for_strokes", False):
            monkeypatch.setitem(cairosvg.surface.TAGS, tag, own)
    theirs = drawn()
    assert (ours != 255).any()  # something is drawn
    assert np.array_equal(ours, theirs)
    assert outlined  # cairosvg's own drawing outlines every letter
    assert (ours_outlined == []) == case.startswith("plain")


def test_the_kept_sets_of_drawn_files_stay_bounded_after_a_backs_artwork(tiny_game, monkeypatch) -> None:
    """The sets of files cards draw are kept between plans (`plan._FILE_SETS`) up to FILE_SETS_AT_MOST: a back's
    artwork, planned without a card, trims them too."""
    from cardgen.build import plan as planning

    context = BuildContext.load(tiny_game, "tiny", tiny_game / "output")
    plan = plan_build(context)
    back = next(iter(plan.backs.values()))
    monkeypatch.setattr(planning, "FILE_SETS_AT_MOST", 0)
    planning.artwork_of("back", back.rendered, plan, back.deck, context)
    assert not planning._FILE_SETS


def test_the_backs_are_drawn_last_after_smaller_tokens(tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first build hands its images out largest first (a board drawn last would keep one worker busy alone), but
    the backs after every other, even a smaller token: the TTS export makes its thumbnail once every image but the
    backs' is drawn, while they are (a token drawn last put it after the last card)."""
    import cardgen.build.build
    import cardgen.build.plan

    real_plan, real_jobs, backs, order = cardgen.build.build.draw_plan, cardgen.build.plan.run_jobs, set(), []

    def drawn(plan: BuildPlan, *args: object, **kwargs: object) -> tuple[int, int]:
        backs.update(art.key for art in plan.backs.values())
        return real_plan(plan, *args, **kwargs)  # type: ignore[arg-type]

    def watched(jobs: list, *args: object, **kwargs: object) -> None:
        order.extend((job.key, job.drawing.width * job.drawing.height) for job in jobs)
        real_jobs(jobs, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cardgen.build.build, "draw_plan", drawn)
    monkeypatch.setattr(cardgen.build.plan, "run_jobs", watched)
    game = tiny_game / "data" / "tiny"
    (game / "game.yaml").write_text((game / "game.yaml").read_text().replace("\nicons:", """
  counters:
    kind: token
    source: tokens.csv
    face: token.svg
    size: {width: 20mm, height: 20mm, bleed: 1mm, safe: 1mm}
icons:"""))
    (game / "tokens.csv").write_text("name,power,text,count\nHit,1,,5\n")
    (tiny_game / "templates" / "tiny" / "token.svg").write_text(
        '<svg {{ geo.svg_attrs }}><circle cx="50%" cy="50%" r="40%" fill="#aa2222"/></svg>\n')
    build_game(tiny_game, "tiny", BuildOptions(tiny_game / "output", jobs=2))
    assert len(order) == 5 and len(backs) == 1 and order[-1][0] in backs  # 3 faces, the token, the back
    areas = [area for key, area in order[:-1]]
    assert areas == sorted(areas, reverse=True) and areas[-1] < areas[0]  # the token after the faces, before the back


_SHIFTED = {  # texts whose cursor each node's drawing saves and restores (`render._CursorCopy`)
    "shifted tspans, stroked": '<text x="10" y="40" font-family="Roboto" font-size="24" stroke="#00f" fill="#ff0">'
    '<tspan dx="5" dy="4">Fire</tspan><tspan dx="12" dy="-6">Ice</tspan> and <tspan dx="3">more</tspan></text>',
    "shifted on a path, stroked": '<path id="p" d="M10 80 Q100 0 190 80" fill="none"/><text font-family="Roboto" '
    'font-size="20" stroke="#0a0"><textPath xlink:href="#p">Along <tspan dx="8" dy="3">the</tspan> curve'
    '</textPath></text>',
}


@pytest.mark.parametrize("case", list(_SHIFTED))
def test_text_cursor_saved_by_hand_draws_as_cairosvg_s_deep_copy(case: str, tmp_path: Path, monkeypatch) -> None:
    """cairosvg saves the text cursor before each node with `copy.deepcopy`; cardgen's cairosvg copies it by hand
    (`render._CursorCopy`): the same pixels as with cairosvg's own deep copy, for texts shifted by dx and dy, stroked
    (drawn twice from the saved cursor) and on a path, and the copy is made by hand at every node."""
    import copy

    import cairosvg.surface

    from cardgen.raster import render

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" '
           f'height="100">{_SHIFTED[case]}</svg>')
    configure_fontconfig([])
    ours = np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/"))
    assert isinstance(cairosvg.surface.copy, render._CursorCopy)
    walked: list[object] = []
    deep = copy.deepcopy

    def counted(value: object, memo: object = None) -> object:
        walked.append(value)
        return deep(value, memo)

    monkeypatch.setattr(copy, "deepcopy", counted)
    assert np.array_equal(np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/")), ours)
    assert walked == []  # every cursor copied by hand
    monkeypatch.setattr(cairosvg.surface, "copy", copy)
    theirs = np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/"))
    assert walked  # cairosvg's own deep copy, at every node
    assert (ours != 255).any() and np.array_equal(ours, theirs)


def test_cairosvg_normalises_each_text_once_and_draws_the_same_pixels(tmp_path: Path, monkeypatch) -> None:
    """cardgen's cairosvg keeps what `normalize` made of each text (`render._normalized_once`): every cairosvg module
    that calls it gets the kept one, and a card of lengths with units, transforms, shifted text, a path and a dash
    array draws the same pixels as with cairosvg's own, made anew at each call."""
    import cairosvg.helpers

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><g transform="translate(5, 4) '
           'rotate(3)"><rect x="2%" y="1em" width="50%" height="30pt" fill="#c00" stroke="#000" '
           'stroke-dasharray="4, 2 1"/><path d="M10,80 Q100-10 190,80 L150 90z" fill="#0a0"/><polygon '
           'points="5,5 30,5 20,25" fill="#00f"/><text x="10 12 14" y="60" dx="1,2" font-family="Roboto" '
           'font-size="12pt" stroke="#f80">Fire 3</text></g></svg>')
    configure_fontconfig([])
    ours = np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/"))
    kept = cairosvg.helpers.normalize
    assert kept.cache_info().currsize > 5
    own = kept.__wrapped__  # cairosvg's own, kept as it is
    assert (own.__module__, own.__qualname__) == ("cairosvg.helpers", "normalize")
    users = [module for name, module in sys.modules.items() if name.startswith("cairosvg.")
             and getattr(module, "normalize", None) is not None]
    assert len(users) >= 5 and all(module.normalize is kept for module in users)
    for module in users:
        monkeypatch.setattr(module, "normalize", own)
    theirs = np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/"))
    assert (ours != 255).any() and np.array_equal(ours, theirs)


def test_cairosvg_parses_each_url_without_a_base_once_and_draws_the_same_pixels(tmp_path: Path, monkeypatch) -> None:
    """cardgen's cairosvg keeps each URL parsed without a base (`render._parsed_once`): every cairosvg module that
    parses URLs gets the kept one, a URL with a base (joined by looking at the file system) is parsed anew, and a card
    with a clip path, a mask, a gradient, a text on a path and an image drawn by its relative link draws the same
    pixels as with cairosvg's own parsing."""
    import cairosvg.url

    Image.new("RGB", (4, 4), "#0c0").save(tmp_path / "dot.png")
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" '
           'height="100"><defs><clipPath id="c"><rect width="150" height="90"/></clipPath><mask id="m"><rect '
           'width="200" height="100" fill="#fff"/><rect width="40" height="100" fill="#000"/></mask><linearGradient '
           'id="g"><stop offset="0" stop-color="#f80"/><stop offset="1" stop-color="#08f"/></linearGradient><path '
           'id="p" d="M10 80 Q100 0 190 80"/></defs><g clip-path="url(#c)" mask="url(#m)"><rect width="200" '
           'height="100" fill="url(#g)"/><image x="120" y="10" width="40" height="40" xlink:href="dot.png"/><text '
           'font-family="Roboto" font-size="20"><textPath xlink:href="#p">Along the curve</textPath></text></g></svg>')
    configure_fontconfig([])
    ours = np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/"))
    own = cairosvg.url.parse_url  # cairosvg's own, kept as it is
    users = [module for name, module in sys.modules.items() if name.startswith("cairosvg.")
             and getattr(module, "parse_url", own) is not own]
    assert len(users) >= 5 and all(module.parse_url.__wrapped__ is own for module in users)
    parsed = users[0].parse_url
    assert parsed("url(#m)") is parsed("url(#m)") and parsed("url(#m)").fragment == "m"
    assert parsed("dot.png", tmp_path.as_uri() + "/").path == str(tmp_path / "dot.png")  # joined to its base
    for module in users:
        monkeypatch.setattr(module, "parse_url", own)
    theirs = np.asarray(draw_svg(svg, 200, 100, 96, tmp_path, tmp_path.as_uri() + "/"))
    assert ours[30, 140].tolist() == [0, 204, 0]  # the image, drawn by its link
    assert ours[50, 20].tolist() == [255, 255, 255] and np.array_equal(ours, theirs)  # masked out
