"""The template helper table (`cardgen/svg/helper_table.py`): what templates see, what the guides and the gallery
colour, what the validator reads from a call, and the enum arguments checked at the template line."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image, ImageColor

from cardgen.commands.cli import main
from cardgen.svg.helper_table import GUIDE_COLORS, HELPERS, Helper
from cardgen.validate import validate_game
from tests.test_validate_support import MANIFEST, mini_workspace, write_game

BACK = "<svg {{ geo.svg_attrs }}/>"
# A call of every helper of the table, apart from each other on a 173 x 253 px card; an enum argument is left to
# fill ({argument}={value}). A new helper needs a line here.
CALLS = {"text_box": "text_box(card.text, 20, 50, 120, 60, 12, {argument}={value})",
         "text_line": "text_line(card.name, 20, 20, 120, 14, {argument}={value})",
         "icon": "icon('scrap', 20, 120, 30)",
         "image": "image('art.png', 80, 120, 40, 40, {argument}={value})",
         "mm": "mm(10)", "pt": "pt(9)", "inch": "inch(1)", "length": "length('50%')",
         "position": "position('15%', 'y')", "color": "color('red')"}
ENUMS = [(helper, argument) for helper in HELPERS for argument in helper.choices]


@pytest.fixture(name="ws")
def _ws(tmp_path: Path) -> Path:
    root = mini_workspace(tmp_path)
    Image.new("RGB", (8, 8), (40, 90, 160)).save(root / "data" / "mini" / "art.png")
    return root


def _face(lines: list[str]) -> str:
    body = "".join(f"  {{{{ {line} }}}}\n" for line in lines)
    return f"<svg {{{{ geo.svg_attrs }}}}>\n{body}</svg>\n"


def _call(helper: Helper) -> str:
    """The helper's call of `CALLS`, an enum argument given its first value."""
    argument = next(iter(helper.choices), None)
    return CALLS[helper.name].format(argument=argument, value=repr(helper.choices[argument][0])) if argument \
        else CALLS[helper.name]


def test_every_box_a_helper_records_is_drawn_in_its_tables_colour_by_the_guides_and_the_gallery(ws: Path) -> None:
    white = '<rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ffffff"/>'
    face = _face([_call(helper) for helper in HELPERS if helper.box]).replace("\n", f"\n{white}\n", 1)
    write_game(ws, templates={"face.svg": face, "back.svg": BACK})
    result = CliRunner().invoke(main, ["--root", str(ws), "build", "mini", "-j", "1", "--guides"])
    assert result.exit_code == 0, result.output
    out = ws / "output" / "mini"
    card = json.loads((out / "build.json").read_text(encoding="utf-8"))["cards"][0]
    boxes = card["boxes"]
    assert {box["kind"] for box in boxes} == set(GUIDE_COLORS)  # every helper that records a box has a colour
    with Image.open(out / "guides" / card["face"]) as opened:
        guides = opened.convert("RGB")
    for box in boxes:  # the middle of the box's left edge, drawn over the white card
        pixel = guides.getpixel((round(box["x"]) + 1, round(box["y"] + box["height"] / 2)))
        expected = ImageColor.getrgb(GUIDE_COLORS[box["kind"]])
        assert max(abs(a - b) for a, b in zip(pixel, expected)) <= 2, (box, pixel, expected)
    page = (out / "index.html").read_text(encoding="utf-8")
    drawn = dict(re.findall(r'stroke="(#[0-9a-f]{6})" stroke-width="1.5"[^>]*><title>(\w+):', page))
    assert {kind: color for color, kind in drawn.items()} == GUIDE_COLORS


@pytest.mark.parametrize(("helper", "argument"), ENUMS, ids=[f"{h.name}-{a}" for h, a in ENUMS])
def test_every_allowed_value_of_an_enum_argument_draws_and_another_is_found_at_its_line(ws: Path, helper: Helper,
                                                                                       argument: str) -> None:
    allowed = helper.choices[argument]
    good = [CALLS[helper.name].format(argument=argument, value=repr(value)) for value in allowed]
    write_game(ws, templates={"face.svg": _face(good), "back.svg": BACK})
    assert not [f for f in validate_game(ws, "mini") if f.severity == "error"]
    write_game(ws, templates={"face.svg": _face([*good, CALLS[helper.name].format(argument=argument,
                                                                                   value="'sideways'")]),
                              "back.svg": BACK})
    [finding] = validate_game(ws, "mini")
    assert (finding.file, finding.row, finding.rule) == ("templates/mini/face.svg", len(allowed) + 2,
                                                         "helper-argument")
    assert finding.message == f"{helper.name}: {argument} is 'sideways'; expected one of {', '.join(allowed)}"


def test_an_enum_value_from_the_data_is_a_located_error_when_the_card_is_drawn(ws: Path) -> None:
    # valign given by position (the 11th argument of text_box), from a column: only drawing can check it
    face = _face(["text_box(card.text, 20, 50, 120, 60, 12, 8, none, '#000', 'left', card.place)"])
    manifest = MANIFEST.replace("      text: str\n", "      text: str\n      place: str\n")
    cards = "name,kind,power,count,text,place\nAlpha,Unit,1,2,a,middle\nBeta,Spell,2,1,b,centre\n"
    write_game(ws, manifest=manifest, files={"cards.csv": cards}, templates={"face.svg": face, "back.svg": BACK})
    [finding] = validate_game(ws, "mini")
    assert (finding.file, finding.row, finding.rule) == ("templates/mini/face.svg", 2, "helper-argument")
    assert finding.message == ("text_box: valign is 'centre'; expected one of top, middle, bottom (while rendering "
                               "card 'beta' (data/mini/cards.csv:3))")


def test_an_icon_or_image_named_by_keyword_is_checked_before_drawing(ws: Path) -> None:
    face = _face(["icon(name='no-such-icon-here', x=5, y=5, size=20)", "image(x=5, y=40, width=20, height=20, "
                  "path='missing.png')"])
    write_game(ws, templates={"face.svg": face, "back.svg": BACK})
    findings = sorted(validate_game(ws, "mini"), key=lambda f: f.row or 0)
    assert [(f.file, f.row, f.rule) for f in findings] == [("templates/mini/face.svg", 2, "unknown-icon"),
                                                           ("templates/mini/face.svg", 3, "image")]
    assert "no-such-icon-here" in findings[0].message and "missing.png" in findings[1].message


def test_every_helper_of_the_table_is_what_a_template_sees(ws: Path) -> None:
    assert set(CALLS) == {helper.name for helper in HELPERS}, "CALLS needs a call of every helper of the table"
    write_game(ws, templates={"face.svg": _face([_call(helper) for helper in HELPERS]), "back.svg": BACK})
    assert not [f for f in validate_game(ws, "mini") if f.severity == "error"]
