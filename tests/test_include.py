"""`include:` in a deck: a deck definition kept elsewhere in the workspace, with overrides, on tiny games."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cardgen.build.build import BuildOptions, build_game
from cardgen.core.errors import CardgenError
from cardgen.load.data import load_cards, read_game_data
from cardgen.load.manifest import load_game
from cardgen.validate import validate_game
from tests.conftest import write_game

DEFINITION = """\
    # A tiny shared deck: four cards, one of them a joker.
    title: Mini Deck
    source: cards.csv
    face: face.svg
    back: back.svg
    options:
      jokers: true
      back_color: "#224466"
    filter: "jokers or rank != 'Joker'"
    fields:
      value: int
    rules:
      - id: mini-complete
        message: "A mini deck has three numbered cards"
        where: "rank != 'Joker'"
        total: "rows() == 3"
"""
CARDS = """\
    name,rank,value
    One,1,1
    Two,2,2
    Three,3,3
    Joker,Joker,0
"""
FACE = """\
    {% import "./parts.svg" as parts %}
    <svg {{ geo.svg_attrs }}>{{ parts.frame(geo) }}
      <text x="10" y="40" font-family="Roboto Mono">{{ card.name }}</text></svg>
"""
PARTS = """\
    {% macro frame(geo) %}<rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#fafafa"/>{% endmacro %}
"""
BACK = """\
    <svg {{ geo.svg_attrs }}>
      <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="{{ deck.options.back_color }}"/></svg>
"""


def write_definition(root: Path, definition: str = DEFINITION, folder: str = "common/mini") -> Path:
    """The shared deck under data/<folder>/ with its templates under templates/<folder>/."""
    data, templates = root / "data" / folder, root / "templates" / folder
    data.mkdir(parents=True, exist_ok=True)
    templates.mkdir(parents=True, exist_ok=True)
    (data / "deck.yaml").write_text(textwrap.dedent(definition))
    (data / "cards.csv").write_text(textwrap.dedent(CARDS))
    for name, text in (("face.svg", FACE), ("parts.svg", PARTS), ("back.svg", BACK)):
        (templates / name).write_text(textwrap.dedent(text))
    return data / "deck.yaml"


def game_with(root: Path, decks: str, templates: dict[str, str] | None = None) -> None:
    """A game `g` whose manifest holds the given `decks:` block (indented 2 spaces)."""
    write_game(root, "g", "title: G\nfont: Roboto Mono\ndecks:\n" + textwrap.indent(textwrap.dedent(decks), "  "),
               {}, templates or {})


def test_included_deck_with_overrides(workspace: Path) -> None:
    write_definition(workspace)
    game_with(workspace, """\
        faces:
          include: ../common/mini/deck.yaml
          title: Only the small ones
          filter: "value <= 2"
          options: {jokers: false, back_color: "#aa0000"}
          rules: false                # only some of the cards: the definition's completeness rule is left out
    """)
    game = load_game(workspace, "g")
    deck = game.spec.decks["faces"]
    assert deck.title == "Only the small ones" and deck.options == {"jokers": False, "back_color": "#aa0000"}
    assert [c.name for c in load_cards(game)] == ["One", "Two"]  # jokers off and the game's filter both hold
    assert game.includes == (workspace / "data" / "common" / "mini" / "deck.yaml",)
    out = workspace / "output"
    build_game(workspace, "g", BuildOptions(out, jobs=1))
    from PIL import Image

    back = Image.open(out / "g" / "backs" / "back.png").convert("RGB")
    assert back.getpixel((40, 40)) == (0xaa, 0, 0)  # the game's back colour reached the definition's template
    assert Image.open(out / "g" / "cards" / "faces" / "one.png").convert("RGB").getpixel((5, 5)) == (250, 250, 250)


def test_two_decks_of_one_definition_need_id_prefixes(workspace: Path) -> None:
    write_definition(workspace)
    game_with(workspace, """\
        red: {include: ../common/mini/deck.yaml}
        blue: {include: ../common/mini/deck.yaml}
    """)
    problems = [p for p in read_game_data(load_game(workspace, "g")).problems if p.rule == "duplicate-id"]
    assert problems and "id_prefix" in problems[0].message
    game_with(workspace, """\
        red: {include: ../common/mini/deck.yaml, id_prefix: red-}
        blue: {include: ../common/mini/deck.yaml, id_prefix: blue-, back: own-back.svg}
    """, {"own-back.svg": BACK})
    cards = load_cards(load_game(workspace, "g"))
    assert [c.id for c in cards][:2] == ["red-one", "red-two"] and len({c.id for c in cards}) == 8
    assert {c.back_template for c in cards} == {"common/mini/back.svg", "own-back.svg"}


def test_error_inside_definition_names_its_file_and_line(workspace: Path) -> None:
    write_definition(workspace, DEFINITION.replace("    face: face.svg", "    fase: face.svg"))
    game_with(workspace, "main: {include: ../common/mini/deck.yaml}\n")
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "g")
    shown = {(p.file, p.row) for p in info.value.problems if "fase" in p.message}
    assert shown == {("data/common/mini/deck.yaml", 4)}, info.value.problems


def test_yaml_error_inside_definition_names_its_file(workspace: Path) -> None:
    write_definition(workspace, "title: [unclosed\nsource: cards.csv\n")
    game_with(workspace, "main: {include: ../common/mini/deck.yaml}\n")
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "g")
    assert info.value.problems[0].file == "data/common/mini/deck.yaml" and info.value.problems[0].row


def test_rule_of_definition_runs_per_deck_and_is_located_in_it(workspace: Path) -> None:
    write_definition(workspace, DEFINITION.replace("rows() == 3", "rows() == 4"))
    game_with(workspace, """\
        red: {include: ../common/mini/deck.yaml, id_prefix: red-}
        blue: {include: ../common/mini/deck.yaml, id_prefix: blue-, rules: false}
    """)
    findings = [p for p in validate_game(workspace, "g", layout=False) if p.rule == "mini-complete"]
    assert [p.message.split(":")[0] for p in findings] == ["deck 'red'"]  # blue left the rules out
    write_definition(workspace, DEFINITION.replace("rows() == 3", "rows(name) == 3"))
    findings = [p for p in validate_game(workspace, "g", layout=False) if p.rule == "mini-complete"]
    assert [(p.file, p.row) for p in findings] == [("data/common/mini/deck.yaml", 13)]


def test_options_are_checked(workspace: Path) -> None:
    write_definition(workspace)
    game_with(workspace, "main: {include: ../common/mini/deck.yaml, options: {joker: false, back_color: 3}}\n")
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "g")
    messages = [(p.file, p.row, p.message) for p in info.value.problems]
    assert any("did you mean 'jokers'" in m and f == "data/g/game.yaml" and r == 4 for f, r, m in messages)
    assert any("back_color" in m and "expected text" in m for _, _, m in messages), messages


@pytest.mark.parametrize("target,expected", [
    ("../../../outside.yaml", "leads outside the workspace's data/ folder"),
    ("../../elsewhere.yaml", "leads outside the workspace's data/ folder"),
    ("/etc/passwd", "relative to this file's folder"),
    ("../common/mini/nothing.yaml", "no file"),
])
def test_include_outside_the_workspace_or_missing_is_refused(workspace: Path, target: str, expected: str) -> None:
    write_definition(workspace)
    (workspace / "elsewhere.yaml").write_text(textwrap.dedent(DEFINITION))  # in the workspace, not under data/
    (workspace.parent / "outside.yaml").write_text(textwrap.dedent(DEFINITION))
    game_with(workspace, f"main: {{include: '{target}'}}\n")
    with pytest.raises(CardgenError, match=expected) as info:
        load_game(workspace, "g")
    assert (info.value.problems[0].file, info.value.problems[0].row) == ("data/g/game.yaml", 4)


def test_include_loop_is_refused(workspace: Path) -> None:
    first = write_definition(workspace, "include: ../b/deck.yaml\ntitle: A\n", "common/a")
    write_definition(workspace, "include: ../a/deck.yaml\ntitle: B\n", "common/b")
    game_with(workspace, "main: {include: ../common/a/deck.yaml}\n")
    with pytest.raises(CardgenError, match="must not loop") as info:
        load_game(workspace, "g")
    problem = info.value.problems[0]
    assert problem.file == "data/common/b/deck.yaml" and problem.row == 1
    assert "data/common/a/deck.yaml -> data/common/b/deck.yaml -> data/common/a/deck.yaml" in problem.message
    assert first.is_file()


def test_nested_include_keeps_each_levels_templates_and_data(workspace: Path) -> None:
    write_definition(workspace)
    write_definition(workspace, "include: ../mini/deck.yaml\ntitle: Variant\nback: back.svg\n", "common/variant")
    (workspace / "data" / "common" / "variant" / "cards.csv").unlink()  # the variant has no data of its own
    game_with(workspace, "main: {include: ../common/variant/deck.yaml}\n")
    game = load_game(workspace, "g")
    deck = game.spec.decks["main"]
    assert deck.title == "Variant" and deck.face == "common/mini/face.svg" and deck.back == "common/variant/back.svg"
    assert deck.source.file == "../common/mini/cards.csv"  # type: ignore[union-attr]
    assert len(load_cards(game)) == 4


def test_editing_the_definition_rebuilds(workspace: Path) -> None:
    definition = write_definition(workspace)
    game_with(workspace, "main: {include: ../common/mini/deck.yaml}\n")
    out = workspace / "output"
    build_game(workspace, "g", BuildOptions(out, jobs=1))
    assert build_game(workspace, "g", BuildOptions(out, jobs=1)).up_to_date
    definition.write_text(definition.read_text().replace("#224466", "#00aa00"))
    result = build_game(workspace, "g", BuildOptions(out, jobs=1))
    from PIL import Image

    assert not result.up_to_date
    assert Image.open(out / "g" / "backs" / "back.png").convert("RGB").getpixel((40, 40)) == (0, 0xaa, 0)


def test_options_bind_as_written_values_only_where_names_are_read() -> None:
    from cardgen.load.include import bind_options

    assert bind_options("jokers or kind != 'joker'", {"jokers": False}) == "False or kind != 'joker'"
    # a helper's column argument and the pattern stay as written; other text too (non-ASCII before the name)
    assert bind_options(r"filled(jokers) and matches(c, '\d+') and name != 'Café' and jokers",
                        {"jokers": True}) == r"filled(jokers) and matches(c, '\d+') and name != 'Café' and True"
    assert bind_options("(n == 2 and\n  jokers)", {"jokers": 2}) == "(n == 2 and\n  2)"
