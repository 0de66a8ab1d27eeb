"""The manifest: schema errors name the key and line; sizes resolve to the right mm and pixels."""
from __future__ import annotations

import pytest

from cardgen.core.errors import CardgenError
from cardgen.load.manifest import GameSpec, load_game, resolve_size
from tests.conftest import REPO, SIMPLE_MANIFEST, write_game


def test_scrapbots_manifest_loads() -> None:
    game = load_game(REPO, "scrapbots")
    assert game.spec.title == "Scrapbots"
    assert {"starting", "center", "wounds"} <= set(game.spec.decks)
    size = game.deck_size(game.spec.decks["center"])
    assert (size.full_width_px, size.full_height_px) == (825, 1125)


def test_unknown_key_is_named_with_line_and_suggestion(workspace) -> None:
    write_game(workspace, "bad", SIMPLE_MANIFEST.replace("        face: face.svg", "        fase: face.svg"), {}, {})
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "bad")
    lines = [str(p) for p in info.value.problems]
    assert any("decks.main.fase" in line and "did you mean 'face'" in line and ":9:" in line for line in lines), lines
    assert any("decks.main.face" in line and "required" in line for line in lines), lines


def test_wrong_type_names_key(workspace) -> None:
    write_game(workspace, "bad", SIMPLE_MANIFEST + "    dpi: lots\n", {}, {})
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "bad")
    problem = info.value.problems[0]
    assert problem.message.startswith("dpi:") and problem.row == 11 and problem.file == "data/bad/game.yaml"


def test_yaml_syntax_error_names_line(workspace) -> None:
    write_game(workspace, "bad", "title: [unclosed\ndecks: {}\n", {}, {})
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "bad")
    assert "YAML syntax error" in str(info.value) and info.value.problems[0].row is not None


def test_unknown_game_suggests(workspace) -> None:
    write_game(workspace, "tiny", SIMPLE_MANIFEST, {}, {})
    with pytest.raises(CardgenError, match="did you mean 'tiny'"):
        load_game(workspace, "tinny")


@pytest.mark.parametrize("size,expected_mm", [
    ("poker", (63.5, 88.9)),
    ("poker landscape", (88.9, 63.5)),
    ("tarot", (69.85, 120.65)),
    ({"width": "2.5in", "height": "3.5in"}, (63.5, 88.9)),
    ({"width": "750px", "height": "1050px"}, (63.5, 88.9)),
    ({"preset": "business", "orientation": "landscape"}, (88.9, 50.8)),
])
def test_sizes(size, expected_mm) -> None:
    spec = GameSpec.model_validate({"title": "t", "decks": {"d": {"source": "x.csv", "face": "f.svg"}},
                                    "size": size})
    resolved = resolve_size(spec.size, spec)
    assert (round(resolved.width_mm, 3), round(resolved.height_mm, 3)) == pytest.approx(expected_mm)
    assert resolved.bleed_mm == pytest.approx(3.175)


def test_poker_pixels_with_bleed() -> None:
    spec = GameSpec.model_validate({"title": "t", "decks": {"d": {"source": "x.csv", "face": "f.svg"}}})
    size = resolve_size("poker", spec)
    assert (size.full_width_px, size.full_height_px) == (825, 1125)


def test_capitalised_deck_and_column_names_stay_in_the_key_path(workspace) -> None:
    manifest = SIMPLE_MANIFEST.replace("      main:", "      Main:")
    manifest = manifest.replace("      power: int", "      Power: {type: integer}")
    write_game(workspace, "caps", manifest.replace("        face: face.svg", "        face: {by: kind}"), {}, {})
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "caps")
    messages = [p.message for p in info.value.problems]
    assert any(m.startswith("fields.Power.type:") for m in messages), messages
    assert any(m.startswith("decks.Main.face.templates: this key is required") for m in messages), messages


def test_unknown_key_in_an_aliased_section_gets_a_suggestion(workspace) -> None:
    write_game(workspace, "p", SIMPLE_MANIFEST + "    print:\n      papr: a4\n    prnt: {}\n", {}, {})
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "p")
    messages = [p.message for p in info.value.problems]
    assert "print.papr: unknown key 'papr'; did you mean 'paper'?" in messages
    assert "prnt: unknown key 'prnt'; did you mean 'print'?" in messages


def test_yaml_is_parsed_once_with_the_lines_of_keys_as_written() -> None:
    """The line map is made from the nodes as parsed, before building the data merges `<<:` keys into them."""
    import yaml

    from cardgen.core import yamlsource

    text = "a: &x {b: 1, c: 2}\nd:\n  <<: *x\n  c: 3\n"
    parsed: list[int] = []
    single = yamlsource._Loader.get_single_node
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlsource._Loader, "get_single_node", lambda self: parsed.append(1) or single(self))
        data, lines = yamlsource.parse_yaml(text, "x.yaml")
    assert data == yaml.safe_load(text) == {"a": {"b": 1, "c": 2}, "d": {"b": 1, "c": 3}}
    assert lines == {(): 1, ("a",): 1, ("a", "b"): 1, ("a", "c"): 1, ("d",): 2, ("d", "<<"): 3, ("d", "c"): 4}
    assert parsed == [1]


def test_yaml_is_read_by_libyaml_into_what_pyyaml_reads() -> None:
    """Data files are read by libyaml's parser when PyYAML has it (~7x faster); every example YAML file gives the
    same data and key lines as PyYAML's own parser, and a list of cards the same table."""
    import yaml

    from cardgen.core import yamlsource
    from cardgen.load import data

    assert not yaml.__with_libyaml__ or issubclass(yamlsource._Loader, yaml.CSafeLoader)
    assert not yaml.__with_libyaml__ or yamlsource.BASE_LOADER is yaml.CBaseLoader
    texts = {path: path.read_text(encoding="utf-8") for path in sorted((REPO / "data").rglob("*.yaml"))}
    read = {path: yamlsource.parse_yaml(text, path.name) for path, text in texts.items()}
    tables = {path: data.yaml_table(text, path.name) for path, text in texts.items()
              if isinstance(read[path][0], list)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yamlsource, "_Loader", yamlsource._PythonLoader)
        patch.setattr(yamlsource, "BASE_LOADER", yaml.BaseLoader)
        assert read == {path: yamlsource.parse_yaml(text, path.name) for path, text in texts.items()}
        assert tables == {path: data.yaml_table(texts[path], path.name) for path in tables}
    assert len(tables) >= 3 and len(read) >= 10


@pytest.mark.parametrize("text, line, message", [
    ("- a: 1\n- b: *nope\n", 2, "found undefined alias 'nope'"),
    ("a:\n\t- x\n", 2, "found character '\\t' that cannot start any token"),
])
def test_a_yaml_syntax_error_says_what_pyyaml_says(text: str, line: int, message: str) -> None:
    """libyaml's messages are terser (no alias name, no character): a refused file is read again for PyYAML's."""
    from cardgen.core.yamlsource import parse_yaml

    with pytest.raises(CardgenError) as caught:
        parse_yaml(text, "x.yaml")
    assert caught.value.problems[0].row == line and message in caught.value.problems[0].message
