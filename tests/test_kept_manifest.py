"""The validated manifest kept in the user's cache: a game loaded again takes it from there, without reading YAML or
building pydantic's validators, and never when game.yaml, an included definition, a layout or vendor file, or the
entry itself changed."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cardgen.core import yamlsource
from cardgen.core.errors import CardgenError
from cardgen.load.manifest import KEPT_MANIFESTS, load_game
from tests.conftest import REPO, write_game
from tests.test_include import DEFINITION, game_with, write_definition

INCLUDING = """\
    faces:
      include: ../common/mini/deck.yaml
"""


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache folder of this test's own."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder / "cardgen" / KEPT_MANIFESTS


@pytest.fixture
def yaml_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The YAML files `load_game` parses (by the name it shows them as)."""
    read: list[str] = []
    parse = yamlsource.parse_yaml_bytes

    def counted(data: bytes, shown: str) -> object:
        read.append(shown)
        return parse(data, shown)

    monkeypatch.setattr(yamlsource, "parse_yaml_bytes", counted)
    return read


def entries(folder: Path) -> list[Path]:
    """The kept manifests in a user cache folder."""
    return sorted(folder.rglob("*.pickle"))


def test_a_game_loaded_again_is_taken_from_the_user_cache(workspace: Path, user_cache: Path,
                                                         yaml_reads: list[str]) -> None:
    write_definition(workspace)
    game_with(workspace, INCLUDING)
    first = load_game(workspace, "g")
    assert yaml_reads == ["data/g/game.yaml", "data/common/mini/deck.yaml"] and len(entries(user_cache)) == 1
    again = load_game(workspace, "g")
    assert yaml_reads == ["data/g/game.yaml", "data/common/mini/deck.yaml"]  # nothing read again
    assert again.spec == first.spec and again.lines == first.lines and again.files == first.files
    assert again.includes == first.includes and again.root == workspace and again.lang is None


def test_an_edit_of_game_yaml_or_of_an_included_definition_loads_it_again(workspace: Path, user_cache: Path,
                                                                          yaml_reads: list[str]) -> None:
    definition = write_definition(workspace)
    game_with(workspace, INCLUDING)
    load_game(workspace, "g")
    definition.write_text(textwrap.dedent(DEFINITION).replace("title: Mini Deck", "title: Smaller Deck"))
    assert load_game(workspace, "g").spec.decks["faces"].title == "Smaller Deck"
    definition.write_text(textwrap.dedent(DEFINITION).replace("  value: int", "  value: number"))
    with pytest.raises(CardgenError) as info:  # the included file's own problem, at its file and line
        load_game(workspace, "g")
    assert {(p.file, p.row) for p in info.value.problems} == {("data/common/mini/deck.yaml", 11)}
    game_with(workspace, INCLUDING + "      title: Mine\n")
    definition.write_text(textwrap.dedent(DEFINITION))
    assert load_game(workspace, "g").spec.decks["faces"].title == "Mine"
    assert yaml_reads.count("data/g/game.yaml") == 4


def test_a_layout_added_to_the_workspace_loads_it_again(workspace: Path, user_cache: Path,
                                                        yaml_reads: list[str]) -> None:
    game_with(workspace, "main: {source: cards.csv, face: face.svg}\n")
    load_game(workspace, "g")
    (workspace / "layouts").mkdir()
    (workspace / "layouts" / "mine.yaml").write_text("title: x\n")
    game = load_game(workspace, "g")
    assert yaml_reads == ["data/g/game.yaml"] * 2 and workspace / "layouts" / "mine.yaml" in game.manifest_files


def test_a_broken_manifest_is_not_kept_and_says_the_same_each_time(workspace: Path, user_cache: Path) -> None:
    game_with(workspace, "main: {source: cards.csv, face: face.svg, fase: x}\n")
    problems = []
    for _ in range(2):
        with pytest.raises(CardgenError) as info:
            load_game(workspace, "g")
        problems.append([str(p) for p in info.value.problems])
    assert problems[0] == problems[1] and "did you mean 'face'" in problems[0][0] and entries(user_cache) == []


def test_a_language_is_checked_on_a_kept_game(workspace: Path, user_cache: Path) -> None:
    write_game(workspace, "g", "title: G\nlanguages: {others: [fr]}\ndecks:\n  main: {source: c.csv, face: f.svg}\n",
               {}, {})
    assert load_game(workspace, "g").lang is None
    assert load_game(workspace, "g", "fr").lang == "fr" and load_game(workspace, "g").lang is None
    with pytest.raises(CardgenError, match="the game has no language 'de'"):
        load_game(workspace, "g", "de")


def test_a_damaged_entry_is_never_served(workspace: Path, user_cache: Path, yaml_reads: list[str]) -> None:
    game_with(workspace, "main: {source: cards.csv, face: face.svg}\n")
    first = load_game(workspace, "g")
    (entry,) = entries(user_cache)
    stat = entry.stat()
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte changed, the size and time put back: the seal tells
    entry.write_bytes(bytes(data))
    os.utime(entry, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert load_game(workspace, "g").spec == first.spec and len(yaml_reads) == 2
    from cardgen.core.storage import Cache

    # an entry that verifies (sealed anew) but is not one: a truncated pickle, then a pickle of something else
    for garbage in (entry.read_bytes()[:40], b"\x80\x05K\x01."):
        Cache.in_folder(user_cache, ".pickle").put_bytes(entry.stem, garbage)
        assert load_game(workspace, "g").spec == first.spec
    assert len(yaml_reads) == 4


def test_a_kept_game_builds_none_of_the_manifest_validators(workspace: Path, user_cache: Path) -> None:
    """A fresh process taking the game from the user cache builds no validator of the manifest's models, nor of the
    options of the stages a build runs (given no flags, a stage's options are the manifest's section as it is), and
    imports no YAML parser."""
    write_game(workspace, "g", "title: G\nprint: {paper: a4}\ndecks:\n  main: {source: c.csv, face: face.svg}\n",
               {}, {})
    load_game(workspace, "g")
    probe = ("import sys; from pathlib import Path; from cardgen.load.manifest import GameSpec, DeckSpec, game_model, "
             "load_game; from cardgen.build.build import select_stages; from cardgen.outputs import stage_names; "
             "game = load_game(Path(sys.argv[1]), 'g'); stages = select_stages(game, stage_names()); "
             "print(game.spec.decks['main'].face, stages[0].config.paper, stages[0].config is game.spec.print, "
             "[model.__pydantic_complete__ for model in (GameSpec, DeckSpec, game_model(), type(stages[0].config), "
             "type(stages[1].config))], 'yaml' in sys.modules, [stage.name for stage in stages])")
    env = {**os.environ, "XDG_CACHE_HOME": str(user_cache.parent.parent)}
    out = subprocess.run([sys.executable, "-c", probe, str(workspace)], capture_output=True, text=True, env=env,
                         cwd=REPO, check=True).stdout.split(maxsplit=3)
    assert out == ["face.svg", "a4", "False",
                   "[False, False, False, False, False] False ['print', 'tts', 'gallery']\n"]  # nor imports PyYAML


def test_a_vendors_profile_gone_is_the_error_it_was(workspace: Path, user_cache: Path) -> None:
    """A workspace's vendor naming an ICC profile of the workspace: the profile is one of the files the kept entry
    checks, so the manifest that names the vendor is not served once the profile is gone."""
    from cardgen.options.vendors import BUNDLED_PROFILES, VENDORS

    (workspace / "vendors").mkdir()
    bundled = (VENDORS.bundled / "drivethrucards.yaml").read_text()
    (workspace / "vendors" / "mine.yaml").write_text(bundled.replace("cardgen-fogra39-tac240.icc", "press.icc"))
    (workspace / "press.icc").write_bytes((BUNDLED_PROFILES / "cardgen-fogra39-tac240.icc").read_bytes())
    write_game(workspace, "g", "title: G\npod: {vendor: mine}\ndecks:\n  main: {source: c.csv, face: f.svg}\n", {}, {})
    assert load_game(workspace, "g").spec.pod.vendor == ["mine"] and len(entries(user_cache)) == 1
    (workspace / "press.icc").unlink()
    with pytest.raises(CardgenError, match="no ICC profile 'press.icc'"):
        load_game(workspace, "g")


SETTINGS = {"layout": ("layouts/mine.yaml", "print: {paper: letter, layout: mine}\n"),
            "vendor": ("vendors/mine.yaml", "pod: {vendor: mine}\n")}


@pytest.mark.parametrize("kind", SETTINGS)
def test_a_settings_file_saved_while_the_game_loads_is_never_served_as_kept(workspace: Path, user_cache: Path,
                                                                            monkeypatch, kind: str) -> None:
    """A sheet layout or vendor saved (broken) right after validation read it: the game is kept, if at all, as made
    of the bytes validation read, never of the file saved since; the next load reads the file again and says what is
    wrong with it."""
    from cardgen.options.layouts import LAYOUTS
    from cardgen.options.vendors import VENDORS

    name, section = SETTINGS[kind]
    catalogue = LAYOUTS if kind == "layout" else VENDORS
    path = workspace / name
    path.parent.mkdir()
    path.write_text((catalogue.bundled / ("poker-3x3-letter.yaml" if kind == "layout" else "thegamecrafter.yaml"))
                    .read_text())
    write_game(workspace, "g", f"title: G\n{section}decks:\n  main: {{source: c.csv, face: f.svg}}\n", {}, {})
    read = yamlsource.read_yaml

    def read_then_saved(file: Path, shown: str) -> bytes:
        """Validation reads the file; then it is saved with a problem."""
        value = read(file, shown)
        if file == path and "dpi: 99999" not in path.read_text():
            path.write_text(path.read_text() + "dpi: 99999\n")  # (a key a layout has not, a DPI out of range)
        return value

    monkeypatch.setattr(yamlsource, "read_yaml", read_then_saved)
    try:
        load_game(workspace, "g")  # (a vendor is read twice: the save is seen as the load's own error)
    except CardgenError as exc:
        assert kind == "vendor" and exc.problems[0].file == name
    monkeypatch.setattr(yamlsource, "read_yaml", read)  # (not `undo`: the user cache is the fixture's)
    with pytest.raises(CardgenError) as info:
        load_game(workspace, "g")
    assert any(name in str(problem) and "dpi" in str(problem) for problem in info.value.problems)
