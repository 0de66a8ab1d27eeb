"""A watch (or serve) loads what its first edit reads while it waits for the first save (`build.warm_up`): the
first edit is then as fast as the later ones, its outputs those of a cold build, and the warm-up itself writes
nothing, takes no lock and lets a save made meanwhile be rebuilt."""
from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from cardgen.build import build as build_module
from cardgen.build import plan as plan_module
from cardgen.build.build import BuildOptions, BuildResult, build_game, warm_up
from cardgen.build.watch import watch_games
from cardgen.core import storage
from cardgen.core.ownership import output_lock
from cardgen.outputs import stage_names
from cardgen.record import record as record_module
from tests.test_edit import _same_as_cold
from tests.test_watch_outputs import _cold


def _options(root: Path) -> BuildOptions:
    return BuildOptions(root / "output", jobs=1)


def _build(root: Path) -> BuildResult:
    return build_game(root, "tiny", _options(root), stages=stage_names())


def _files(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under the output root (the caches too): its size, time and content, by path."""
    return {path.relative_to(root).as_posix(): (path.stat().st_size, path.stat().st_mtime_ns, path.read_bytes())
            for path in sorted((root / "output").rglob("*")) if path.is_file()}


@pytest.fixture
def new_watch(tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`tiny` built by a process that built before, then this process made as a new watch's: building again, none of
    the state a process keeps of its builds (records read, plans, stages' runs and derived state, entries read)."""
    monkeypatch.setattr(storage, "BUILDS_AGAIN", threading.Event())
    storage.keep_for_next_builds()
    for path in tiny_game.rglob("*"):  # saved a while ago: the build stamps them, not "racy" (`source_stamp`)
        os.utime(path, (time.time() - 60, time.time() - 60))
    _build(tiny_game)
    for module, name in [(record_module, "_KNOWN"), (plan_module, "_LAST_RECORDS"), (storage, "_RUNS"),
                         (storage, "_DERIVED"), (storage, "_SPLICED"), (storage, "_KNOWN_ENTRIES")]:
        monkeypatch.setattr(module, name, {})
    return tiny_game


def _edit(root: Path) -> None:
    csv = root / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Alpha,1", "Alpha,9"))


def test_a_warm_up_writes_nothing_and_loads_what_the_first_edit_reads_whose_outputs_are_a_cold_builds(
        new_watch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _files(new_watch)
    warm_up(new_watch, "tiny", _options(new_watch), stage_names())
    assert _files(new_watch) == before  # nothing written: outputs, build.json, stamps and caches as they were
    assert record_module._KNOWN and "tiny" in plan_module._LAST_RECORDS  # the record read, the game planned
    # the stages' kept state: the TTS save's objects, the print file's layout, the gallery's blocks
    assert ("tts-objects", "tiny") in storage._RUNS and ("print-file", "tiny", "tiny-letter.pdf") in storage._DERIVED
    assert ("gallery", "tiny", "main") in storage._DERIVED
    reads: list[Path] = []
    read = record_module.BuildRecord.read.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(record_module.BuildRecord, "read",
                        classmethod(lambda cls, path: reads.append(path) or read(cls, path)))
    _edit(new_watch)
    edited = _build(new_watch)
    assert [card.id for card in edited.changes.changed] == ["alpha"] and reads == []  # the record was in memory
    _cold(new_watch)
    _same_as_cold(new_watch, new_watch / "output" / "tiny", new_watch / "cold" / "tiny")


def test_a_warm_up_writes_nothing_outside_its_throwaway_folder_and_takes_the_builds_files_as_its_own(
        new_watch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its stages write into a folder thrown away after, but use the output root's caches and name the files' final
    places; the files written at every build (build.json, the gallery, the TTS save) that hold what it writes are
    then spliced at the first edit as if this process had written them (`storage.rehearsing`)."""
    monkeypatch.setattr(storage, "SPLICE_FROM", 0)  # (the tiny game's files: spliced as a large game's)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temporary"))
    (tmp_path / "temporary").mkdir()
    final = new_watch / "output" / "tiny"
    taken = [final / "build.json", final / "index.html", *final.glob("tts/*.json")]
    warm_up(new_watch, "tiny", _options(new_watch), stage_names())
    assert list((tmp_path / "temporary").iterdir()) == []  # (its folder gone, nothing beside it: no caches there)
    known = {(path.stat().st_dev, path.stat().st_ino) for path in taken}
    assert len(taken) == 3 and known <= storage._SPLICED.keys()
    storage.run_after_rebuild()  # as a watch does once warm: the files are copied ahead for the edit to patch
    spliced: list[tuple[str, bool]] = []
    found = storage._spliced
    monkeypatch.setattr(storage, "_spliced",
                        lambda old, state: spliced.append((Path(old.name).name, found(old, state) is not None))
                        or found(old, state))
    _edit(new_watch)
    _build(new_watch)
    assert {(path.name, True) for path in taken} <= set(spliced)
    _cold(new_watch)
    _same_as_cold(new_watch, final, new_watch / "cold" / "tiny")


def test_a_warm_up_of_a_game_changed_since_its_build_runs_no_stage(new_watch: Path) -> None:
    """Its stages would make files (into the throwaway folder, and the caches); its rebuild makes them."""
    before = _files(new_watch)
    _edit(new_watch)
    warm_up(new_watch, "tiny", _options(new_watch), stage_names())
    assert "tiny" in plan_module._LAST_RECORDS and ("tts-objects", "tiny") not in storage._RUNS
    assert _files(new_watch) == before


def test_a_warm_up_takes_no_lock_a_print_started_meanwhile_is_not_refused(new_watch: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Another command (here the lock a `cardgen print` takes) while the game is planned and while its stages run."""
    locked: list[str] = []

    def other_command(step: str) -> None:
        with output_lock(new_watch / "output"):
            locked.append(step)

    for step in ("plan_cards", "rehearse"):
        original = getattr(build_module._Build, step)
        monkeypatch.setattr(build_module._Build, step,
                            lambda self, step=step, original=original: other_command(step) or original(self))
    warm_up(new_watch, "tiny", _options(new_watch), stage_names())
    assert locked == ["plan_cards", "rehearse"]


def test_a_save_during_a_watchs_warm_up_is_rebuilt_once_it_is_done(new_watch: Path) -> None:
    results: list[BuildResult] = []
    stop = threading.Event()

    def rebuild(names: list[str]) -> None:
        results.append(_build(new_watch))
        if len(results) == 2:  # the first build, then the save's
            stop.set()

    def warm(names: list[str]) -> None:
        _edit(new_watch)  # saved while the watch warms up
        warm_up(new_watch, "tiny", _options(new_watch), stage_names())

    thread = threading.Thread(target=watch_games, args=(new_watch, ["tiny"], rebuild, stop, 0.1, True, warm),
                              daemon=True)
    thread.start()
    thread.join(timeout=30)
    stop.set()
    assert len(results) == 2 and results[0].up_to_date
    assert [card.id for card in results[1].changes.changed] == ["alpha"]
    _cold(new_watch)
    _same_as_cold(new_watch, new_watch / "output" / "tiny", new_watch / "cold" / "tiny")


def test_serve_warms_its_watch_up_once_the_first_build_is_done(tiny_game: Path) -> None:
    from cardgen.commands.serve import serve_game

    warmed: list[tuple[list[str], bool]] = []
    done = threading.Event()

    def warm(names: list[str]) -> None:
        warmed.append((names, (tiny_game / "output" / "tiny" / "build.json").is_file()))
        done.set()

    running = serve_game(tiny_game, "tiny", tiny_game / "output" / "tiny", lambda: _build(tiny_game),
                         say=lambda text: None, warm=warm)
    try:
        assert done.wait(30) and warmed == [(["tiny"], True)]
    finally:
        running.stop()


@pytest.mark.parametrize("command", ["watch", "serve"])
def test_the_watch_and_serve_commands_warm_up_their_games_with_their_build_options(
        new_watch: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    """The commands hand the watch a warm-up of their games (`build_cmd.warm_games`), which loads their state."""
    import cardgen.build.watch
    import cardgen.commands.serve
    from cardgen.commands.build_cmd import watch_games as watch_command
    from cardgen.commands.serve_cmd import serve

    handed: list[object] = []

    def watching(*args: object, warm: object = None, **kwargs: object) -> None:
        handed.append(warm)
        raise KeyboardInterrupt

    monkeypatch.setattr(cardgen.build.watch, "watch_games", watching)
    monkeypatch.setattr(cardgen.commands.serve, "serve_game", watching)
    with pytest.raises(KeyboardInterrupt) if command == "serve" else contextlib.nullcontext():
        if command == "watch":
            watch_command(new_watch, ["tiny"], None, 1)
        else:
            serve(new_watch, "tiny", 0, (), None, 1, False, None)
    assert callable(handed[0])
    handed[0](["tiny"])  # type: ignore[operator]
    assert ("tts-objects", "tiny") in storage._RUNS
