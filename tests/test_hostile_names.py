"""Hostile names and ownership, round 3: names that become file names are safe on every system (a card id
counted in bytes, a snapshot name, a title made a slug), a game's saved object in Tabletop Simulator is its own,
`cardgen init` checks everything before it writes anything, a game folder linked from outside the project is not
read, and what is not stamped is not cardgen's to delete. Every case through the command line: one located
error, no traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import SIMPLE_MANIFEST, run_cli
from tests.hostile_example import assert_refused, run


def test_an_id_too_long_in_bytes_is_one_error_before_the_build(tiny_game: Path) -> None:
    """120 emoji are 120 characters but 480 bytes, more than a file name holds: one error, nothing built."""
    cards = tiny_game / "data" / "tiny" / "cards.csv"
    rows = cards.read_text(encoding="utf-8").splitlines()
    ids = ["key", "\U0001f525" * 120, "beta", "na"]
    cards.write_text("".join(f"{row},{key}\n" for row, key in zip(rows, ids)), encoding="utf-8")
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("source: cards.csv\n", "source: cards.csv\n    id: key\n"))
    assert_refused(run(tiny_game, "build", "tiny", "-j", "1"), "data/tiny/cards.csv:2:key:", "480 bytes long in UTF-8")
    assert not (tiny_game / "output" / "tiny").exists()


def test_a_snapshot_name_is_a_safe_file_name(tiny_game: Path) -> None:
    run_cli(tiny_game, "build", "tiny", "-j", "1")
    for name in ("con", "LPT1.v2", "v1."):
        assert_refused(run(tiny_game, "snapshot", "tiny", name), f"snapshot name '{name}' is not allowed: ")
    assert not (tiny_game / "data" / "tiny" / "snapshots").exists()
    run_cli(tiny_game, "snapshot", "tiny", "v1.2")
    assert (tiny_game / "data" / "tiny" / "snapshots" / "v1.2.json").is_file()


def _retitle(root: Path, title: str, game: str = "tiny") -> None:
    manifest = root / "data" / game / "game.yaml"
    text = manifest.read_text(encoding="utf-8").replace("title: Tiny", f"title: {json.dumps(title)}", 1)
    manifest.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("title, stem", [("#Shitstorm", "Shitstorm"), ("Con", "Con-game"), ("Com¹", "Com1-game"),
                                         ("Épée " * 56, ("Epee-" * 24)[:119])])
def test_the_saved_objects_file_name_is_a_safe_slug_of_the_title(tiny_game: Path, title: str, stem: str) -> None:
    _retitle(tiny_game, title)
    run_cli(tiny_game, "build", "tiny", "-j", "1")
    tts = tiny_game / "output" / "tiny" / "tts"
    assert sorted(p.name for p in tts.iterdir() if p.suffix == ".json") == [f"{stem}.json"]
    assert (tts / f"{stem}.png").is_file()
    saved = json.loads((tts / f"{stem}.json").read_text(encoding="utf-8"))
    assert saved["SaveName"] == title  # the title itself is the object's name in Tabletop Simulator


def test_two_games_with_one_title_never_overwrite_each_others_installed_object(tiny_game: Path,
                                                                                  tmp_path: Path) -> None:
    other = tiny_game / "data" / "other"
    other.mkdir()
    for name in ("game.yaml", "cards.csv"):
        (other / name).write_bytes((tiny_game / "data" / "tiny" / name).read_bytes())
    (tiny_game / "templates" / "other").symlink_to(tiny_game / "templates" / "tiny")
    tts_home = tmp_path / "Tabletop Simulator"
    (tts_home / "Saves").mkdir(parents=True)
    run_cli(tiny_game, "tts", "tiny", "--install", "--tts-dir", str(tts_home))
    installed = tts_home / "Saves" / "Saved Objects" / "cardgen" / "Tiny.json"
    before = installed.read_bytes()
    assert "/cardgen/tiny/" in before.decode()
    refused = run(tiny_game, "tts", "other", "--install", "--tts-dir", str(tts_home))
    assert_refused(refused, "Tiny.json", "was installed by game 'tiny'", "another `title:`")
    assert installed.read_bytes() == before and not (tts_home / "cardgen" / "other").exists()
    run_cli(tiny_game, "tts", "tiny", "--install", "--tts-dir", str(tts_home))  # its own game installs again
    _retitle(tiny_game, "Other", "other")
    run_cli(tiny_game, "tts", "other", "--install", "--tts-dir", str(tts_home))
    assert installed.read_bytes() == before and (installed.parent / "Other.json").is_file()


@pytest.mark.parametrize("name", ["con", "nul", "aux", "com1", "lpt9"])
def test_init_refuses_a_name_windows_reserves(tmp_path: Path, name: str) -> None:
    assert_refused(run(tmp_path, "init", name), f"'{name}' cannot be a game name", "reserves")
    assert_refused(run(tmp_path, "init", "game", "--decks", f"heroes,{name}"), f"'{name}' cannot be a deck name")
    assert list(tmp_path.iterdir()) == []


def test_init_never_writes_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".gitignore").symlink_to(outside / "planted")
    run_cli(root, "init", "game")
    assert list(outside.iterdir()) == [] and (root / ".gitignore").is_symlink()  # nothing written through it
    assert (root / "data" / "game" / "game.yaml").is_file()


@pytest.mark.parametrize("link", ["templates", "data", "data/game", "templates/game"])
@pytest.mark.parametrize("leads_to", ["nowhere", "elsewhere"])
def test_init_over_a_link_that_leads_nowhere_or_outside_writes_nothing(tmp_path: Path, link: str,
                                                                       leads_to: str) -> None:
    root = tmp_path / "ws"
    (root / link).parent.mkdir(parents=True)
    (root / link).symlink_to(tmp_path / leads_to)
    if leads_to == "elsewhere":  # a folder outside the workspace, which cardgen would not read the game from
        (tmp_path / leads_to).mkdir()
    before = sorted(tmp_path.rglob("*"))
    result = run(root, "init", "game")
    if "/" in link:  # the game's own folder: a link by its name is a game that exists
        assert_refused(result, link, "exists already")
    else:
        assert_refused(result, link, "does not exist" if leads_to == "nowhere" else "outside the workspace")
    assert sorted(tmp_path.rglob("*")) == before


def test_a_game_folder_linked_from_outside_the_project_is_not_read(tiny_game: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "game.yaml").write_text(textwrap.dedent(SIMPLE_MANIFEST))
    (tiny_game / "data" / "linked").symlink_to(outside)
    for command in ("validate", "build"):
        assert_refused(run(tiny_game, command, "linked"), "data/linked/game.yaml", "outside the project")
    assert not (tiny_game / "output" / "linked").exists()
    for folder in ("data", "templates"):  # a link within the project is fine
        (tiny_game / folder / "inside").symlink_to(tiny_game / folder / "tiny")
    assert "inside: 0 errors" in run_cli(tiny_game, "validate", "inside", "--no-layout").output


def _forged(folder: Path) -> Path:
    """A folder of the designer's own that holds a build.json with the keys a build record has."""
    folder.mkdir(parents=True)
    (folder / "build.json").write_text(json.dumps({"cardgen": "1", "cards": []}))
    (folder / "notes.txt").write_text("my own work")
    return folder


def test_a_build_json_alone_does_not_make_a_folder_cardgens(tiny_game: Path) -> None:
    run_cli(tiny_game, "build", "tiny", "-j", "1")
    mine = _forged(tiny_game / "output" / "mine")
    result = run_cli(tiny_game, "clean", "--outputs")
    assert f"left alone (not made by cardgen): {mine}" in result.output
    assert (mine / "notes.txt").read_text() == "my own work" and not (tiny_game / "output" / "tiny").exists()
    _forged(tiny_game / "output" / "tiny")
    assert_refused(run(tiny_game, "build", "tiny", "-j", "1"), "was not made by cardgen")
    assert (tiny_game / "output" / "tiny" / "notes.txt").read_text() == "my own work"


def test_icons_show_writes_to_a_relative_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(tmp_path, "icons", "show", "gears", "--out", "preview.png", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert Image.open(tmp_path / "preview.png").size[0] > 0
    blocked = tmp_path / "file"
    blocked.write_text("a file, not a folder")
    assert_refused(run(tmp_path, "icons", "show", "gears", "--out", "file/preview.png", monkeypatch=monkeypatch),
                   "file/preview.png", "cannot write the preview")


def test_without_a_user_cache_fonts_use_a_private_temporary_folder(tmp_path: Path) -> None:
    """With no cache folder of the user's to write, the font cache is not a folder of a fixed name another user
    could make first (and fill): cardgen's own temporary folder is made for the run and removed after it."""
    temp = tmp_path / "tmp"
    planted = temp / "cardgen-fontconfig-cache"
    planted.mkdir(parents=True)
    env = {**os.environ, "XDG_CACHE_HOME": "/proc/no-cache-here", "TMPDIR": str(temp)}
    env.pop("CARDGEN_FONTCONFIG_SET", None)
    env.pop("FONTCONFIG_FILE", None)
    made = subprocess.run([sys.executable, "-m", "cardgen", "--root", str(tmp_path), "icons", "show", "gears",
                           "--out", str(tmp_path / "preview.png")], env=env, capture_output=True, text=True,
                          timeout=300)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "preview.png").is_file()
    assert list(temp.iterdir()) == [planted] and list(planted.iterdir()) == []
    probe = ("import os, sys; from cardgen.load.fonts import configure_fontconfig; configure_fontconfig([]); "
             "folder = os.path.dirname(os.environ['FONTCONFIG_FILE']); "
             "print(folder, oct(os.stat(folder).st_mode & 0o777), open(os.environ['FONTCONFIG_FILE']).read())")
    shown = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    folder, mode, conf = shown.stdout.split(" ", 2)
    assert Path(folder).parent == temp and mode == "0o700" and f"<cachedir>{folder}/fontconfig</cachedir>" in conf
    assert list(temp.iterdir()) == [planted]  # removed when the process ended
