"""Backs that read their card (issue 32: nanDeck's duplex backs print the row's fields), through the CLI on a small
game: a back template that uses `card` (itself or in a template it includes or extends) is drawn for each card and
shared by the cards whose back comes out the same; the print PDF puts each card's own back behind it, Tabletop
Simulator gets back sheets (UniqueBack), the gallery shows each back beside its face; a back that does not read
the card is drawn once for its deck."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pypdf
import pytest
from PIL import Image, ImageChops, ImageStat

from cardgen.record.record import BuildRecord
from tests.conftest import make_workspace, run_cli, write_game
from tests.test_pdf import PT, _pixels, placed_images
from tests.test_tts import _difference, _objects, _path, _slot_image

MANIFEST = """\
title: Arms
font: Roboto
print: {paper: a4}
decks:
  weapons:                       # shaped like a nanDeck game: an XLSX, 70 x 99 mm cards, each weapon's name on its back
    source: {file: weapons.xlsx, sheet: Weapons}
    size: {width: 70mm, height: 99mm}
    face: face.svg
    back: named-back.svg
  potions:
    source: potions.csv
    face: face.svg
    back: school-back.svg
  gear:
    source: gear.csv
    face: face.svg
    back: plain-back.svg
"""
FACE = """\
<svg {{ geo.svg_attrs }}>
  <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#f4ecd8"/>
  {{ text_line(card.name, "10%", "10%", "80%", pt(16)) }}
</svg>
"""
TEMPLATES = {
    "face.svg": FACE,
    # the card is read by an included partial: the back is drawn per card all the same
    "named-back.svg": """\
        <svg {{ geo.svg_attrs }}>
          <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#2f4858"/>
          {% include "./label.svg" %}
        </svg>
        """,
    "label.svg": '{{ text_line(card.name | upper, "10%", "45%", "80%", pt(18), fill="#ffffff", align="center") }}\n',
    # cardgen's ready-made back, its title set from the card
    "school-back.svg": '{% extends "cardgen/back.svg" %}\n{% set back_title = card.school %}\n',
    # `card` in a comment is no use of it: drawn once
    "plain-back.svg": """\
        {# the same for every card: no card.name here #}
        <svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#55606e"/></svg>
        """,
}


def _xlsx(rows: list[tuple]) -> bytes:
    """A workbook with the rows in its sheet `Weapons`."""
    import io

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Weapons"
    for row in rows:
        sheet.append(row)
    data = io.BytesIO()
    book.save(data)
    return data.getvalue()


WEAPONS = [("name", "count"), ("Dagger", 2), ("Longsword", 1), ("Warhammer", 1)]
DATA: dict[str, str | bytes] = {
    "weapons.xlsx": _xlsx(WEAPONS),
    "potions.csv": "name,school\nFire Flask,Fire\nEmber Draught,Fire\nFrost Vial,Ice\n",
    "gear.csv": "name\nRope\nLantern\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, BuildRecord]:
    root = make_workspace(tmp_path_factory.mktemp("backs"))
    write_game(root, "arms", MANIFEST, DATA, TEMPLATES)
    run_cli(root, "build", "arms")
    out = root / "output" / "arms"
    return out, BuildRecord.read(out / "build.json")


def _back_of(record: BuildRecord, card_id: str) -> str:
    back = next(c.back for c in record.cards if c.id == card_id)
    assert back is not None
    return back


def test_each_card_has_its_own_back_where_the_name_differs(built) -> None:
    out, record = built
    dagger, longsword = (Image.open(out / _back_of(record, i)).convert("RGB") for i in ("dagger", "longsword"))
    box = next(b for b in record.backs.values() if b.image == _back_of(record, "dagger")).boxes[0]
    assert box.label == "DAGGER"
    name = (round(box.x), round(box.y), round(box.x + box.width), round(box.y + box.height))
    assert ImageChops.difference(dagger.crop(name), longsword.crop(name)).getbbox() is not None
    # outside the name's box the two backs are the same picture
    for image in (dagger, longsword):
        image.paste((0, 0, 0), name)
    assert ImageChops.difference(dagger, longsword).getbbox() is None
    # the picture is the background with the name in white on it
    assert Image.open(out / _back_of(record, "warhammer")).convert("RGB").getpixel((5, 5)) == (0x2f, 0x48, 0x58)


def test_backs_that_come_out_the_same_are_drawn_once(built) -> None:
    out, record = built
    assert _back_of(record, "fire-flask") == _back_of(record, "ember-draught") != _back_of(record, "frost-vial")
    assert _back_of(record, "rope") == _back_of(record, "lantern") == "backs/plain-back.png"
    per_card = {b.image for b in record.backs.values() if b.per_card}
    assert per_card == {_back_of(record, i) for i in ("dagger", "longsword", "warhammer", "fire-flask", "frost-vial")}
    assert not record.backs["plain-back"].per_card
    # named like the faces (cards/<deck>/<id>.png) after the first card that has them
    assert sorted(p.relative_to(out).as_posix() for p in (out / "backs").rglob("*.png")) == [
        "backs/plain-back.png", "backs/potions/fire-flask.png", "backs/potions/frost-vial.png",
        "backs/weapons/dagger.png", "backs/weapons/longsword.png", "backs/weapons/warhammer.png"]
    assert len(record.backs) == 6  # 3 weapons, 2 schools, 1 gear back


def test_the_print_pdf_puts_each_cards_own_back_behind_it(built) -> None:
    out, record = built
    names = {_pixels(Image.open(out / c.face)): c.id for c in record.cards}
    names.update({_pixels(Image.open(out / b.image)): b.image for b in record.backs.values()})
    path = out / "print" / "arms-a4.pdf"
    pages = placed_images(path, names)
    width = float(pypdf.PdfReader(path).pages[0].mediabox.width) / PT
    seen = set()
    for front, back in zip(pages[::2], pages[1::2]):
        # long-edge duplex: a card's back lies at its slot mirrored left-right
        at = {(round(r.x, 1), round(r.y, 1)): image for image, r in back}
        for card_id, rect in front:
            assert at[(round(width - rect.right, 1), round(rect.y, 1))] == _back_of(record, card_id), card_id
            seen.add(card_id)
        assert len(back) == len(front)
    assert seen == {c.id for c in record.cards}


def test_tabletop_simulator_gets_a_back_sheet_per_face_sheet(built) -> None:
    out, record = built
    saved = json.loads((out / "tts" / "Arms.json").read_text(encoding="utf-8"))
    weapons = _objects(saved)["Weapons"]
    [sheet] = weapons["CustomDeck"].values()
    assert sheet["UniqueBack"] is True and _path(sheet["BackURL"]).is_file()
    by_name, bleed = {c.name: c for c in record.cards}, record.decks["weapons"].bleed_px
    for obj in weapons["ContainedObjects"]:
        cell = _slot_image(sheet, obj["CardID"] % 100, "BackURL")
        wanted, other = (_trimmed(out / _back_of(record, by_name[n].id), bleed).resize(cell.size)
                         for n in (obj["Nickname"], "Warhammer" if obj["Nickname"] != "Warhammer" else "Dagger"))
        assert _difference(cell, wanted) < 5 and _difference(cell, other) > 2 * _difference(cell, wanted)
    [gear] = _objects(saved)["Gear"]["CustomDeck"].values()
    assert gear["UniqueBack"] is False


def _trimmed(path: Path, bleed: int) -> Image.Image:
    image = Image.open(path).convert("RGB")
    return image.crop((bleed, bleed, image.width - bleed, image.height - bleed))


class _Figures(HTMLParser):
    """The images and captions of each figure of the gallery, by the figure's id (or its class)."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "figure":
            self.figures.append({"id": found.get("id"), "class": found.get("class"), "images": [], "text": ""})
        elif tag == "img" and self.figures:
            self.figures[-1]["images"].append(found["src"])

    def handle_data(self, data: str) -> None:
        if self.figures:
            self.figures[-1]["text"] += data


def test_the_gallery_shows_each_back_beside_its_face_and_a_shared_back_by_its_template(built) -> None:
    out, record = built
    parser = _Figures()
    parser.feed((out / "index.html").read_text(encoding="utf-8"))
    by_id = {f["id"]: f for f in parser.figures if f["id"]}
    for card in record.cards:
        shown = by_id[f"card-{card.id}"]["images"]
        assert shown == ([card.face, card.back] if card.deck != "gear" else [card.face]), card.id
    [shared] = [f for f in parser.figures if f["class"] == "back"]
    assert shared["images"] == ["backs/plain-back.png"] and "plain-back.svg" in shared["text"]


def test_validation_checks_each_cards_back_and_names_its_row(workspace) -> None:
    """Only the long name overflows its back (one line high): said at its row, as the back of that card."""
    back = ('<svg {{ geo.svg_attrs }}>{{ text_box(card.name, "10%", "45%", "80%", "12%", pt(18), min_size=pt(18)) }}'
            '</svg>\n')
    rows = [(name if name != "Warhammer" else "Warhammer of the Seven Kings", count) for name, count in WEAPONS]
    write_game(workspace, "arms", MANIFEST.split("  potions:")[0], {"weapons.xlsx": _xlsx(rows)},
               {"face.svg": FACE, "named-back.svg": back})
    result = run_cli(workspace, "validate", "arms", expect=1)
    [line] = [line for line in result.output.splitlines() if "the back" in line]
    assert line.startswith("data/arms/weapons.xlsx:4:name: error: the back of card 'warhammer-of-the-seven-kings': "
                           "text does not fit its box")


def test_the_print_on_demand_export_lists_each_cards_back(built, tmp_path) -> None:
    import csv
    import shutil

    out, record = built
    root = Path(shutil.copytree(out.parent.parent, tmp_path / "ws", symlinks=True))
    (root / "vendors").mkdir()
    (root / "vendors" / "shop.yaml").write_text(  # a vendor of the workspace that prints these sizes, as PNGs
        "name: Shop\nspec: [https://example.com]\ndpi: 300\nbleed: 3mm\nsafe: 3mm\n"
        "sizes:\n  arms: {width: 70mm, height: 99mm}\n  poker: {width: 63.5mm, height: 88.9mm}\n"
        "format: png\ncolour: rgb\nfiles: per-card\n", encoding="utf-8")
    run_cli(root, "pod", "arms", "--vendor", "shop")
    folder = root / "output" / "arms" / "pod" / "shop"
    rows = list(csv.DictReader((folder / "quantities.csv").open(encoding="utf-8")))
    weapons = [(r["id"], r["back"], r["quantity"]) for r in rows if r["deck"] == "weapons"]
    assert weapons == [("dagger", "weapons/back-dagger.png", "2"), ("longsword", "weapons/back-longsword.png", "1"),
                       ("warhammer", "weapons/back-warhammer.png", "1")]
    def distance(made: Image.Image, card_id: str) -> float:
        expected = Image.open(out / _back_of(record, card_id)).convert("RGB")
        difference = ImageChops.difference(made.resize(expected.size), expected).convert("L")
        return ImageStat.Stat(difference).mean[0]  # the mean difference per pixel

    for row in (r for r in rows if r["deck"] == "weapons"):
        made = Image.open(folder / row["back"]).convert("RGB")
        others = [distance(made, other) for other in ("dagger", "longsword", "warhammer") if other != row["id"]]
        assert distance(made, row["id"]) < 1 < min(others), row  # the card's own back, rescaled: not another's
    assert {r["back"] for r in rows if r["deck"] == "gear"} == {"gear/back.png"}
def test_which_templates_read_the_card(workspace) -> None:
    """`card` anywhere in a template or in those it names (extends, include, import: a file of macros that names it,
    whichever macro is used), and a template named by a value may read it; a comment, a loop variable of that name,
    cardgen's own back and a template including itself do not."""
    from cardgen.svg.context import BuildContext

    templates = {
        "face.svg": FACE,
        "macros.svg": '{% macro title() %}{{ card.name }}{% endmacro %}{% macro plain() %}x{% endmacro %}\n',
        "by-macro.svg": '{% import "./macros.svg" as m with context %}<svg {{ geo.svg_attrs }}>{{ m.plain() }}</svg>',
        "by-value.svg": '<svg {{ geo.svg_attrs }}>{% include deck.options.part %}</svg>',
        "looped.svg": '<svg {{ geo.svg_attrs }}>{% for card in [1, 2] %}{{ card }}{% endfor %}</svg>',
        "commented.svg": '{# card.name #}<svg {{ geo.svg_attrs }}></svg>',
        "extends-cardgen.svg": '{% extends "cardgen/back.svg" %}',
        "loops.svg": '{% include "./loops.svg" %}',
    }
    write_game(workspace, "arms", MANIFEST.split("  potions:")[0], {"weapons.xlsx": DATA["weapons.xlsx"]}, templates)
    renderer = BuildContext.load(workspace, "arms").renderer
    reads = {name: renderer.reads_card(name) for name in templates}
    assert reads == {"face.svg": True, "macros.svg": True, "by-macro.svg": True, "by-value.svg": True,
                     "looped.svg": False, "commented.svg": False, "extends-cardgen.svg": False, "loops.svg": False}


def test_what_a_template_reads_is_kept_by_its_text(workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later build (a new process's renderer) knows which templates read the card without parsing them again
    (the user's cache, by each template's text); a template whose text changed is parsed again."""
    from cardgen.svg.context import BuildContext
    from cardgen.svg.templates import SVGEnvironment

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))  # a user cache of its own: nothing kept yet
    templates = {"face.svg": FACE, "back.svg": '{% include "./part.svg" %}', "part.svg": "<svg></svg>"}
    write_game(workspace, "arms", MANIFEST.split("  potions:")[0], {"weapons.xlsx": DATA["weapons.xlsx"]}, templates)
    parsed: list[str] = []
    parse = SVGEnvironment.parse
    monkeypatch.setattr(SVGEnvironment, "parse", lambda env, source, *a, **k: parsed.append(source) or
                        parse(env, source, *a, **k))
    assert BuildContext.load(workspace, "arms").renderer.reads_card("back.svg") is False
    assert len(parsed) == 2  # back.svg and part.svg, the first time
    assert BuildContext.load(workspace, "arms").renderer.reads_card("back.svg") is False
    assert len(parsed) == 2  # kept
    (workspace / "templates" / "arms" / "part.svg").write_text("<svg>{{ card.name }}</svg>")
    assert BuildContext.load(workspace, "arms").renderer.reads_card("back.svg") is True
    assert parsed[2:] == ["<svg>{{ card.name }}</svg>"]
