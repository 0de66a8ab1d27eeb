"""Hostile use of output folders: cardgen replaces or deletes only folders it made itself, and never writes its
outputs over or among the designer's own files."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cardgen.core.ownership import STAMP, mark
from tests.hostile_example import GAME, assert_refused, read_only, run, run_as_designer, snapshot_files, writable


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


def test_build_takes_an_empty_folder_of_the_games_name_but_not_one_holding_anything(fresh_example: Path,
                                                                                     tmp_path: Path) -> None:
    # Before: an empty output/<game>/ (as an older `serve` left one) blocked every build: "not made by cardgen"
    game = fresh_example / "output" / GAME
    game.mkdir(parents=True)
    result = run(fresh_example, "build", "-j", "1")
    assert result.exit_code == 0, result.output
    assert (game / STAMP).is_file() and (game / "build.json").is_file()
    holding = tmp_path / "holding" / GAME / "empty-but-mine"  # a folder holding only an empty folder
    holding.mkdir(parents=True)
    assert_refused(run(fresh_example, "build", "--out", str(tmp_path / "holding"), "-j", "1"), "not made by cardgen")
    assert holding.is_dir() and not (holding.parent / STAMP).exists()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / GAME).symlink_to(tmp_path / "elsewhere")  # a link to an empty folder is not taken
    assert_refused(run(fresh_example, "build", "--out", str(tmp_path / "linked"), "-j", "1"), "not made by cardgen")
    assert list((tmp_path / "elsewhere").iterdir()) == []


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


def test_two_builds_at_once_leave_one_whole_build(fresh_example: Path) -> None:
    command = [sys.executable, "-m", "cardgen", "--root", str(fresh_example), "build", "-j", "1"]
    builds = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    results = sorted((b.wait(timeout=300), *b.communicate()) for b in builds)
    assert results[0][0] == 0, results
    second_code, second_out, second_err = results[1]
    assert (second_code == 1 and "another cardgen command" in second_err and "Traceback" not in second_err) or \
        (second_code == 0 and "up to date" in second_out), results  # refused, or started after the first ended
    output = fresh_example / "output" / GAME
    record = json.loads((output / "build.json").read_text())
    images = {c["face"] for c in record["cards"]} | {b["image"] for b in record["backs"].values()}
    assert all((output / image).is_file() for image in images) and list((output / "print").glob("*.pdf"))
    assert "up to date" in run(fresh_example, "build", "-j", "1").output


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
    before = snapshot_files(output / f".{GAME}.old")
    result = run(example, "tts", GAME)
    assert result.exit_code == 0 and "up to date (" in result.output, result.output  # put back, not built again
    assert snapshot_files(output / GAME) == before and not (output / f".{GAME}.old").exists()


# ---------------------------------------------------------------- read-only folders

def _one_error(result: subprocess.CompletedProcess, *words: str) -> str:
    """The process failed with exactly one located error line (no traceback) saying the given words."""
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and all(word in errors[0] for word in words), result.stderr
    return errors[0]


@pytest.mark.parametrize("args", [["tts", GAME, "--format", "png"], ["print", GAME, "--paper", "a3"],
                                  ["build", "-j", "1", "--svg"], ["clean"], ["clean", "--outputs"]])
def test_a_read_only_output_folder_is_one_error_and_left_as_it_is(example: Path, args: list[str]) -> None:
    output = example / "output"
    before = snapshot_files(output)
    read_only(output)
    try:
        result = run_as_designer(example, *args)
    finally:
        writable(output)
    _one_error(result, "Permission denied", str(output))
    assert "removed" not in result.stdout
    assert snapshot_files(output) == before


def test_tts_into_a_read_only_export_folder_keeps_it(example: Path) -> None:
    tts = example / "output" / GAME / "tts"
    before = snapshot_files(example / "output" / GAME)
    read_only(tts)
    try:
        result = run_as_designer(example, "tts", GAME, "--format", "png")
    finally:
        writable(tts)
    assert _one_error(result, "Permission denied").startswith(f"{tts}: error: cannot write the Tabletop Simulator")
    assert snapshot_files(example / "output" / GAME) == before  # no half export, no .tts.old left behind


def test_clean_stopped_by_a_read_only_output_root_deletes_nothing(example: Path) -> None:
    output = example / "output"
    output.chmod(0o555)  # the folders in it cannot go, though everything inside them could
    try:
        result = run_as_designer(example, "clean", "--outputs")
    finally:
        output.chmod(0o755)
    _one_error(result, f"cannot remove {output / '.cache'}", "Permission denied")
    result = run(example, "build", "-j", "1", "--svg")  # the cache and output are still cardgen's: builds go on
    assert result.exit_code == 0 and "0 drawn" in result.output, result.output


def test_clean_stopped_half_way_says_what_it_removed(example: Path) -> None:
    game = example / "output" / GAME
    read_only(game / "cards")
    try:
        result = run_as_designer(example, "clean", "--outputs")
    finally:
        writable(game / "cards")
    _one_error(result, f"cannot remove {game}", "Permission denied", "removed before it: .cache")
    assert "nothing was changed" not in result.stderr
    result = run(example, "build", "-j", "1")  # what is left is still known as cardgen's: the next build goes on
    assert result.exit_code == 0 and (game / "build.json").is_file(), result.output


def test_print_and_tts_install_into_read_only_folders_are_one_error(example: Path, tmp_path: Path) -> None:
    elsewhere, tts_data = tmp_path / "pdfs", tmp_path / "Tabletop Simulator"
    (tts_data / "Saves").mkdir(parents=True)
    elsewhere.mkdir()
    read_only(elsewhere, tts_data)
    try:
        printed = run_as_designer(example, "print", GAME, "--out", str(elsewhere))
        installed = run_as_designer(example, "tts", GAME, "--install", "--tts-dir", str(tts_data))
    finally:
        writable(elsewhere, tts_data)
    assert _one_error(printed, "Permission denied", "choose another folder with --out").startswith(
        f"{elsewhere / GAME}-letter.pdf: error: cannot write the print PDF")
    error = _one_error(installed, "Permission denied", "--tts-dir")
    assert error.startswith(str(tts_data)) and ": error: cannot install the export" in error
    assert list(elsewhere.iterdir()) == [] and snapshot_files(tts_data) == {}
