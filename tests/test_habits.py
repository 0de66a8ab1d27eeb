"""Messages for designers' common habits, colour palettes and lengths with units or % of the card."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from PIL import Image

from cardgen.commands.cli import main
from cardgen.record.changes import field_change
from cardgen.validate import validate_game
from tests.conftest import SIMPLE_BACK, write_game

MANIFEST = """\
    title: Habits
    font: Roboto
    decks:
      main: {source: cards.csv, face: face.svg, back: back.svg}
"""


def _game(ws: Path, face: str, cards: str = "name,x,text\nAlpha,35,Hello\n", manifest: str = MANIFEST) -> list[str]:
    write_game(ws, "h", manifest, {"cards.csv": cards}, {"face.svg": face, "back.svg": SIMPLE_BACK})
    return [str(f) for f in validate_game(ws, "h")]


def test_a_number_written_as_dot_35_says_write_0_35(workspace: Path) -> None:
    found = _game(workspace, '<svg {{ geo.svg_attrs }}>\n{{ text_line(card.name, .35, 10, 300, 40) }}</svg>')
    assert any("templates/h/face.svg:2" in f and "write 0.35, not .35" in f for f in found), found


def test_text_where_a_number_is_needed_names_the_line_and_fields(workspace: Path) -> None:
    found = _game(workspace, '<svg {{ geo.svg_attrs }}>\n\n{{ text_line(card.name, card.x, 10, 300, 40) }}</svg>')
    assert any("face.svg:3" in f and "x is the text '35'" in f and "under fields:" in f for f in found), found
    sums = _game(workspace, '<svg {{ geo.svg_attrs }}>\n{{ text_line(card.name, 10 + card.x, 10, 300, 40) }}</svg>')
    assert any("face.svg:2" in f and "declare its column's type under fields:" in f for f in sums), sums
    typed = _game(workspace, '<svg {{ geo.svg_attrs }}>\n{{ text_line(card.name, card.x, 10, 300, 40) }}</svg>',
                  manifest=MANIFEST + "    fields: {x: int}\n")
    assert not [f for f in typed if "error" in f], typed


def test_sheet_by_name_or_number_and_a_wrong_one_lists_the_sheets(workspace: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Notes"
    book.active.append(["not", "cards"])
    cards = book.create_sheet("Cards")
    cards.append(["name", "text"])
    cards.append(["Alpha", "Hi"])
    write_game(workspace, "x", MANIFEST.replace("source: cards.csv", "source: {file: cards.xlsx, sheet: 2}"), {},
               {"face.svg": '<svg {{ geo.svg_attrs }}>{{ text_line(card.name, 10, 10, 300, 40) }}</svg>',
                "back.svg": SIMPLE_BACK})
    book.save(workspace / "data" / "x" / "cards.xlsx")
    assert [str(f) for f in validate_game(workspace, "x") if f.severity == "error"] == []
    manifest = workspace / "data" / "x" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("sheet: 2", "sheet: Crads"))
    errors = [str(f) for f in validate_game(workspace, "x") if f.severity == "error"]
    assert any("no sheet 'Crads'; did you mean 'Cards'?" in f and "1: 'Notes', 2: 'Cards'" in f for f in errors), errors


def test_unnamed_column_data_empty_names_and_unused_columns_without_fields(workspace: Path) -> None:
    found = _game(workspace, '<svg {{ geo.svg_attrs }}>{{ text_line(card.name, 10, 10, 300, 40) }}</svg>',
                  "name,x,text,\nAlpha,35,Hello,stray note\n,1,Nameless,\n")
    assert any("cards.csv:2:#4: warning: column 4 holds data ('stray note')" in f for f in found), found
    assert any("cards.csv:3:name: error: this row has no name" in f for f in found), found
    unused = [f for f in found if "(unknown-column)" in f]  # no fields: declared, yet unused columns are said
    assert [f.split("column '")[1].split("'")[0] for f in unused] == ["x", "text"], found


def test_a_change_of_type_alone_is_not_shown_as_8_to_8() -> None:
    assert field_change("power", "8", 8) == "power 8 (now read as a whole number, was text)"
    assert field_change("power", 8, 9) == "power 8 -> 9"


def test_palette_colours_and_lengths_as_percent_of_the_card(workspace: Path) -> None:
    face = ('<svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" '
            'fill="{{ colors.paper }}"/>{{ icon("gears", "0%", "0%", "50%", color="rust") }}'
            '{{ text_box(card.text, "50%", "50%", "50%", "10%", "5%", fill="rust") }}</svg>')
    manifest = MANIFEST + '    colors: {paper: "#102030", rust: "#c98a2b"}\n    icon_colors: {gears: rust}\n'
    assert [f for f in _game(workspace, face, manifest=manifest) if "error" in f] == []
    result = CliRunner().invoke(main, ["--root", str(workspace), "build", "h", "-j", "1"])
    assert result.exit_code == 0, result.output
    image = Image.open(workspace / "output" / "h" / "cards" / "main" / "alpha.png").convert("RGB")
    w, h = image.size
    assert image.getpixel((w - 5, 5)) == (16, 32, 48)  # the palette colour by name in the template
    icon = [image.getpixel((x, y)) for x in range(0, w // 2) for y in range(0, h // 2, 7)]
    assert (201, 138, 43) in icon  # gears in "rust", from icon_colors naming the palette
    record = (workspace / "output" / "h" / "build.json").read_text()
    assert '"kind": "text_box"' in record and '"kind": "icon"' in record
    bad = _game(workspace, face, manifest=MANIFEST + "    colors: {paper: c98a2b}\n")
    assert any("colors" in f and "#rrggbb" in f for f in bad), bad
