"""Hostile use of output folders: cardgen replaces or deletes only folders it made itself, and never writes its
outputs over or among the designer's own files."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cardgen.ownership import mark
from tests.hostile_example import GAME, assert_refused, run, snapshot_files


def _sources(root: Path) -> dict[str, bytes]:
    return {name: data for folder in ("data", "templates", "fonts", "icons")
            for name, data in snapshot_files(root / folder).items()}


@pytest.mark.parametrize("out, words", [
    ("data", ["is data/"]), ("data/" + GAME, ["is inside data/"]), ("templates", ["is templates/"]),
    ("fonts/more", ["is inside fonts/"]), ("icons", ["is icons/"]), (".", ["is the workspace"]),
    ("..", ["holding the workspace"]),
])
def test_build_refuses_an_output_root_among_the_designers_files(fresh_example: Path, out: str, words: list[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    before = _sources(fresh_example)
    assert_refused(run(fresh_example, "build", "--out", out, "-j", "1", monkeypatch=monkeypatch),
                   "the output root", *words)
    assert _sources(fresh_example) == before


def test_build_of_a_game_named_by_a_path_is_refused(fresh_example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _sources(fresh_example)
    for args in (["build", f"../data/{GAME}"], ["build", "--out", "output/x", f"../../data/{GAME}"],
                 ["validate", f"../data/{GAME}"]):
        assert_refused(run(fresh_example, *args, monkeypatch=monkeypatch), "is not a game name")
    assert _sources(fresh_example) == before


def test_clean_refuses_the_workspace_and_source_folders(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _sources(example)
    for out in (".", "data", ".."):
        assert_refused(run(example, "clean", "--outputs", "--out", out, monkeypatch=monkeypatch), "output root")
    assert _sources(example) == before and (example / "output" / GAME / "build.json").is_file()


def test_build_never_replaces_a_folder_it_did_not_make(fresh_example: Path) -> None:
    mine = fresh_example / "output" / GAME
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("my notes")
    assert_refused(run(fresh_example, "build", "-j", "1"), str(mine), "not made by cardgen")
    assert snapshot_files(mine) == {"notes.txt": b"my notes"}


def test_build_never_deletes_a_leftover_folder_it_did_not_make(example: Path) -> None:
    old = example / "output" / f".{GAME}.old"  # where the swap keeps the previous output for a moment
    old.mkdir()
    (old / "precious.txt").write_text("keep me")
    cards = example / "data" / GAME / "cards.csv"
    cards.write_text(cards.read_text().replace("It saw you first", "It saw you second"))
    assert_refused(run(example, "build", "-j", "1"), str(old), "not made by cardgen")
    assert snapshot_files(old) == {"precious.txt": b"keep me"}
    assert (example / "output" / GAME / "build.json").is_file()  # the previous output is still there


def test_clean_outputs_removes_only_what_cardgen_made(example: Path) -> None:
    output = example / "output"
    (output / "mine").mkdir()
    (output / "mine" / "notes.txt").write_text("my notes")
    (output / "readme.txt").write_text("mine too")
    result = run(example, "clean", "--outputs")
    assert result.exit_code == 0, result.output
    assert "left alone (not made by cardgen)" in result.output
    assert sorted(p.name for p in output.iterdir()) == [".cardgen.lock", "mine", "readme.txt"]
    assert snapshot_files(output) == {".cardgen.lock": b"", "mine/notes.txt": b"my notes", "readme.txt": b"mine too"}
    assert (example / "data" / GAME / "cards.csv").is_file()


def test_clean_outputs_removes_the_output_root_when_only_cardgen_files_were_there(example: Path) -> None:
    result = run(example, "clean", "--outputs")
    assert result.exit_code == 0, result.output
    assert not (example / "output").exists()


def test_clean_leaves_a_cache_folder_it_did_not_make(fresh_example: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"  # `--out ~` with the home's own .cache
    (home / ".cache" / "pip").mkdir(parents=True)
    (home / ".cache" / "pip" / "wheel").write_text("not cardgen's")
    result = run(fresh_example, "clean", "--out", str(home))
    assert result.exit_code == 0, result.output
    assert "left alone" in result.output and (home / ".cache" / "pip" / "wheel").is_file()
    assert_refused(run(fresh_example, "build", "--out", str(home), "-j", "1"), ".cache", "not made by cardgen")
    assert (home / ".cache" / "pip" / "wheel").is_file()


# ---------------------------------------------------------------- one command writes into an output root at a time

def _hold_lock(output: Path) -> subprocess.Popen:
    """Another process holding the output root's lock, as a running build does."""
    code = ("import sys, time; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
            "print('held', flush=True); time.sleep(120)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(output / ".cardgen.lock")], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_second_command_while_one_writes_is_refused(example: Path) -> None:
    output = example / "output"
    cards = example / "data" / GAME / "cards.csv"
    cards.write_text(cards.read_text().replace("It saw you first", "It saw you second"))
    before = snapshot_files(output)
    holder = _hold_lock(output)
    try:
        for args in (["build", "-j", "1"], ["print", GAME], ["tts", GAME], ["clean", "--outputs"]):
            assert_refused(run(example, *args), "another cardgen command", "is writing into")
    finally:
        holder.kill()
        holder.wait()
    assert snapshot_files(output) == before
    result = run(example, "build", "-j", "1")
    assert result.exit_code == 0 and "It saw you second" in (output / GAME / "build.json").read_text()


def test_leftovers_of_killed_commands_are_removed_and_nothing_else(example: Path) -> None:
    output = example / "output"
    leftovers = [mark(output / f".{GAME}.building-x1"), mark(output / GAME / ".tts.building-x2")]
    temporaries = [output / GAME / ".build.json.x3.tmp", output / GAME / "print" / ".scrapbots.pdf.x4.tmp"]
    for path in temporaries:
        path.write_text("half a file")
    mine = output / ".mine.building-x5"  # not made by cardgen
    mine.mkdir()
    result = run(example, "print", GAME)
    assert result.exit_code == 0, result.output
    assert not any(p.exists() for p in [*leftovers, *temporaries]) and mine.is_dir()


def test_output_of_a_swap_killed_between_its_renames_is_restored(example: Path) -> None:
    output = example / "output"
    (output / GAME).rename(output / f".{GAME}.old")  # killed after moving the old output away
    result = run(example, "tts", GAME)
    assert result.exit_code == 0, result.output
    assert (output / GAME / "build.json").is_file() and not (output / f".{GAME}.old").exists()
