"""A process that builds again writes build.json, index.html and the TTS save from the file it wrote last
(`storage.write_spliced`): the pieces that file holds are copied from it, the new ones written. The file is byte for
byte what a write of every piece makes, and a file changed since (appended to, rewritten, touched) is written whole."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import BinaryIO, Callable, Iterable

import pytest

from cardgen.build.build import BuildOptions, build_game
from cardgen.core import storage
from cardgen.load import data, freshness
from cardgen.outputs import stage_names
from cardgen.outputs.tts.objects import write_saved_object
from tests.test_kept_rows import _fresh, _outputs, _rows

PIECES = [f"piece {number} of the file; ".encode() * 14 for number in range(12)]  # each >= SPLICED_PIECE bytes


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A process that builds again and splices files of any size; the bytes each `copy_file_range` copied."""
    storage.keep_for_next_builds()
    monkeypatch.setattr(storage, "SPLICE_FROM", 0)
    monkeypatch.setattr(storage, "_SPLICED", {})
    monkeypatch.setattr(storage, "RUN_ITEMS", 3)  # a tiny game's cards in several runs
    counts: list[int] = []
    copy = storage._copy_range

    def counted(source: BinaryIO | None, target: BinaryIO, start: int, end: int) -> None:
        if source is not None and end > start:
            counts.append(end - start)
            SPLICED_INTO.add(Path(target.name).name.split(".")[1])  # its temporary file: .<name>.<random>.tmp
        copy(source, target, start, end)

    monkeypatch.setattr(storage, "_copy_range", counted)
    SPLICED_INTO.clear()
    return counts


SPLICED_INTO: set[str] = set()  # the stems of the files spliced


def _write(path: Path, parts: list[bytes | str | storage.Run], copied: list[int], previous: Path | None = None
           ) -> int:
    """Write the parts with `write_spliced`; check the file holds them; the bytes it copied from the last file."""
    copied.clear()
    storage.write_spliced(path, iter(parts), previous)
    assert path.read_bytes() == _bytes(parts)
    return sum(copied)


def unpadded(text: str) -> str:
    """A JSON text cardgen wrote with its runs' pads (spaces at the end of a line, before its comma if any:
    `storage.padding`; a string holds no line break) taken out: what `json.dumps(indent=2)` writes."""
    return re.sub(r" +(?=,?\n)", "", text)


def _bytes(parts: Iterable[bytes | str | storage.Run]) -> bytes:
    """The bytes of the parts, a run's its parts'."""
    return b"".join(_bytes(part.parts) if isinstance(part, storage.Run) else part.encode() if isinstance(part, str)
                    else part for part in parts)


def test_a_file_written_again_copies_the_pieces_it_held_and_writes_the_rest(tmp_path: Path, copied: list[int]
                                                                            ) -> None:
    """Pieces changed, added, removed, reordered, growing and shrinking, text and bytes, a file renamed in between:
    each write holds exactly its pieces, the ones the last write held copied from it."""
    path = tmp_path / "out.json"
    parts: list[bytes | str] = [b"[", *(p for piece in PIECES for p in (piece, b",\n")), b"]"]
    assert _write(path, parts, copied) == 0  # the first write has nothing to copy from
    length = len(path.read_bytes())
    parts[5] = b"a changed piece, longer than it was " * 10
    # all but the changed piece and the short pieces not after a copied one (the opening bracket, its comma)
    assert _write(path, parts, copied) == length - len(b"[") - len(PIECES[2]) - len(b",\n")
    edits = [lambda p: p[:7] + p[9:],  # a piece removed
             lambda p: [*p[:3], "a piece added as text, é " * 12, *p[3:]],  # (not ASCII)
             lambda p: [p[0], *p[5:-1], *p[1:5], p[-1]],  # reordered
             lambda p: [*p[:3], p[3] + b"grown", *p[4:]],
             lambda p: [*p[:3], p[3][:40], *p[4:]]]  # shrunk
    for edit in edits:
        parts = edit(parts)
        assert _write(path, parts, copied) > 0
    moved = tmp_path / "final.json"
    os.replace(path, moved)  # as a build puts its staging folder's files in place: the same file
    assert parts[:2] == [b"[", b",\n"]  # short pieces first: written, all the rest copied
    assert _write(tmp_path / "staging.json", parts, copied, previous=moved) == len(moved.read_bytes()) - 3


def test_a_rehearsal_takes_a_previous_file_as_written_only_when_it_holds_the_same_bytes(tmp_path: Path,
                                                                                     copied: list[int]) -> None:
    """`storage.rehearsing` (a watch's warm-up): the file a write splices from, written by another process, is then
    spliced from as this process's own, each piece it holds where the write put it with the same bytes; one of
    another size, or outside a rehearsal, is not."""
    pieces = [f"piece {number} of the file; ".encode() * 14 for number in range(40)]  # beyond its end's digest
    parts: list[bytes | str] = [b"[", *(p for piece in pieces for p in (piece, b",\n")), b"]"]
    same, other, outside = (tmp_path / name for name in ("same.json", "other.json", "outside.json"))
    longer = tmp_path / "longer.json"
    for path in (same, outside):
        path.write_bytes(_bytes(parts))
    other.write_bytes(_bytes([*parts[:5], pieces[2][:-1] + b"!", *parts[6:]]))  # a byte apart, far from its end
    longer.write_bytes(_bytes(parts) + b" ")
    assert len(_bytes(parts)) > 2 * storage.SPLICE_TAIL
    with storage.rehearsing():
        for previous in (same, other, longer):
            _write(tmp_path / f"rehearsed-{previous.name}", parts, copied, previous)
    _write(tmp_path / "not-rehearsed.json", parts, copied, outside)
    edited = [*parts[:5], b"an edit", *parts[6:]]
    # all but the changed piece and the short pieces not after a copied one (as in the test above)
    assert _write(tmp_path / "edited.json", edited, copied, same) == \
        len(same.read_bytes()) - len(b"[") - len(pieces[2]) - len(b",\n")
    assert _write(tmp_path / "edited-other.json", parts, copied, other) == \
        len(other.read_bytes()) - len(b"[") - len(pieces[2]) - len(b",\n")  # its piece 2 not taken: written
    for previous in (longer, outside):
        assert _write(tmp_path / f"edited-{previous.name}", parts, copied, previous) == 0  # written whole


def test_runs_are_copied_whole_or_taken_apart_into_the_pieces_the_file_holds(tmp_path: Path, copied: list[int]
                                                                             ) -> None:
    """A run the last write wrote is copied as one range; a new run holding pieces the file holds (a run of them
    among them) is taken apart, those pieces copied and only the others written."""
    path = tmp_path / "out.json"
    inner = storage.Run(tuple(PIECES[2:5]))
    parts: list[bytes | str | storage.Run] = [storage.Run((PIECES[0], PIECES[1], inner)), *PIECES[5:]]
    _write(path, parts, copied)
    length = len(path.read_bytes())
    changed = b"a changed piece, " * 20
    parts[0] = storage.Run((PIECES[0], changed, inner))  # a new run: its first and inner pieces copied
    assert _write(path, parts, copied) == length - len(PIECES[1])
    assert copied == [len(PIECES[0]), sum(map(len, PIECES[2:]))]
    assert _write(path, parts, copied) == len(path.read_bytes())  # all copied, the run in one range
    assert copied == [len(path.read_bytes())]


@pytest.mark.parametrize("change", ["appended", "rewritten at the same size", "touched",
                                    "its end rewritten with its time put back"])
def test_a_file_changed_since_this_process_wrote_it_is_written_whole(tmp_path: Path, copied: list[int],
                                                                     change: str) -> None:
    """A file that is no longer what the last write made is never copied from: the new one is written whole."""
    path = tmp_path / "out.json"
    parts: list[bytes | str | storage.Run] = [storage.Run(tuple(PIECES[:6])), *PIECES[6:]]  # (a run too)
    _write(path, parts, copied)
    time.sleep(0.02)  # a file's time moves by the kernel's tick
    before = path.stat()
    if change == "appended":
        with open(path, "ab") as handle:
            handle.write(b" ")
    elif change == "touched":
        os.utime(path)
    else:
        text = path.read_bytes()
        at = len(text) - 10 if change.startswith("its end") else len(text) // 2
        path.write_bytes(text[:at] + b"X" * 5 + text[at + 5:])
        if change.startswith("its end"):
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _write(path, parts, copied) == 0


def test_a_small_file_is_written_whole(tmp_path: Path, copied: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Under SPLICE_FROM bytes (a small game's files), nothing is noted and a file is written whole."""
    monkeypatch.setattr(storage, "SPLICE_FROM", 1 << 20)
    path = tmp_path / "out.json"
    _write(path, [*PIECES], copied)
    assert _write(path, [*PIECES], copied) == 0
    assert storage._SPLICED == {}


def test_edits_in_a_process_building_again_write_the_files_a_cold_build_writes(tiny_game: Path,
                                                                               copied: list[int]) -> None:
    """After several edits in one process (cards changed, added, removed, reordered, a card's text growing and
    shrinking, a card moved and changed), build.json, index.html and the TTS save are spliced from the last
    build's, and byte for byte a cold build's of the edited game."""
    data.remember_rows()
    # more cards than the TTS save writes an object at a time (`objects._MANY`)
    _rows(lambda lines: [*lines, *(f"Card {n},1,Text {n},1" for n in range(10))])(tiny_game)
    edits = [_rows(lambda lines: [line.replace("Plain", "Plain and " + "long " * 30) for line in lines]),
             _rows(lambda lines: [*lines, "Delta,1,Added,1", "Echo,2,Also added,1"]),
             _rows(lambda lines: [line.replace("long " * 30, "short") for line in lines]),
             _rows(lambda lines: lines[:-1]),  # (one before the others would move their rows: all new)
             _rows(lambda lines: [lines[0], lines[3], lines[1], lines[2], *lines[4:]]),
             _rows(lambda lines: [line.replace("Added,1", "Changed,1") for line in lines]),
             _rows(lambda lines: [lines[0], lines[2], lines[1].replace(",1,", ",7,"), *lines[3:]])]  # moved, changed
    build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names())
    _once(tiny_game)
    appended: list[int] = []  # the lines of changes in the stamps after each edit
    for number, edit in enumerate(edits):
        edit(tiny_game)
        copied.clear()
        build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names())
        assert sum(copied) > 0, number
        # (the TTS save's objects here are all on the edited card's sheet: all new, nothing to splice)
        assert SPLICED_INTO == {"build", "index"}, number
        SPLICED_INTO.clear()
        _once(tiny_game)
        kept, made = _outputs(tiny_game / "kept" / "tiny"), _outputs(tiny_game / "cold" / "tiny")
        assert kept.keys() == made.keys()
        for name in kept:
            assert kept[name] == made[name], f"edit {number}: {name}"
        appended.append(_same_stamps(tiny_game / "kept" / "tiny", tiny_game / "cold" / "tiny", number))
    assert appended == list(range(1, len(edits) + 1))  # each edit appends its changes to the stamps
    assert build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names()).up_to_date


@pytest.fixture
def patched(copied: list[int], monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """(A process that splices files of any size, `copied`.) Each patch of a copy made ahead (`storage._patch`):
    the stem of the file written, and whether it was patched (False: it moved too much, the file was spliced)."""
    patches: list[tuple[str, bool]] = []
    patch = storage._patch

    def noted(parts: list, temp: Path, old: BinaryIO, written: storage._Spliced) -> storage._Spliced | None:
        made = patch(parts, temp, old, written)
        patches.append((temp.name.split(".")[1], made is not None))  # its temporary file: .<name>.<random>.tmp
        return made

    monkeypatch.setattr(storage, "_patch", noted)
    return patches


def _edited_and_built(root: Path, edit: Callable[[Path], None]) -> None:
    """Edit the game, build it in this process (kept/), and do the work the build left (its files copied ahead)."""
    edit(root)
    build_game(root, "tiny", BuildOptions(root / "kept", jobs=1), stages=stage_names())
    storage.run_after_rebuild()


def _as_cold(root: Path, number: int) -> None:
    """The files in kept/ are byte for byte those a process that builds once writes into cold/."""
    _once(root)
    kept, made = _outputs(root / "kept" / "tiny"), _outputs(root / "cold" / "tiny")
    assert kept.keys() == made.keys()
    for name in kept:
        assert kept[name] == made[name], f"edit {number}: {name}"


SPLICED = {"build", "index", "Tiny"}  # the stems of the files spliced: build.json, index.html, the TTS save


def test_edits_patch_the_copies_made_ahead_into_the_files_a_cold_build_writes(
        tiny_game: Path, patched: list[tuple[str, bool]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a build has reported, the files it spliced are copied ahead (`storage.copy_ahead`, in .cache/ahead/); the
    next build patches each copy in place (only the pieces not where they were, written or moved there), or splices
    the file where that would move more than MOVED_AT_MOST bytes. After a card's text made a little longer (within
    its run's pad), longer still (nothing let move: spliced), a card added, removed, the order changed and a
    card's text changed, build.json, index.html and the TTS save are a cold build's, byte for byte; no copy is left
    after the process's (`drop_ahead`)."""
    monkeypatch.setattr(storage, "PAD_SHARE", 1)  # the tiny runs (RUN_ITEMS 3) padded as a large game's are
    monkeypatch.setattr(storage, "_AHEAD", {})
    data.remember_rows()
    ahead = tiny_game / "kept" / ".cache" / storage.AHEAD_FOLDER
    _rows(lambda lines: [*lines, *(f"Card {n},1,Text {n},1" for n in range(10))])(tiny_game)
    _edited_and_built(tiny_game, lambda root: None)
    _once(tiny_game)
    edits = [_rows(lambda lines: [line.replace("Text 4,", "Text four,") for line in lines]),
             _rows(lambda lines: [line.replace("Text four,", "Text " + "long " * 30 + ",") for line in lines]),
             _rows(lambda lines: [*lines, "Delta,1,Added,1"]),
             _rows(lambda lines: [line for line in lines if not line.startswith("Card 2,")]),
             _rows(lambda lines: [lines[0], lines[3], lines[1], lines[2], *lines[4:]]),
             _rows(lambda lines: [line.replace("Text 7,", "Text 8,") for line in lines])]
    for number, edit in enumerate(edits):
        assert SPLICED <= {path.name.split(".")[0] for path in ahead.iterdir()}, number  # (and the print's)
        patched.clear()
        monkeypatch.setattr(storage, "MOVED_AT_MOST", 0 if number == 1 else 1 << 22)
        _edited_and_built(tiny_game, edit)
        assert {stem for stem, _ in patched} == SPLICED, number  # each copy taken
        if number == 1:  # (nothing may move: spliced)
            assert ("build", False) in patched
        else:  # (here: all that moves is a few kB)
            assert all(done for _, done in patched), (number, patched)
        _as_cold(tiny_game, number)
    storage.drop_ahead()  # (as the process's exit does: atexit)
    assert list(ahead.iterdir()) == []


def test_a_copy_made_ahead_changed_since_is_not_patched(tiny_game: Path, patched: list[tuple[str, bool]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy made ahead that was written to (in place, its size kept) is not taken: the file is spliced from the
    last one, as a cold build writes it."""
    monkeypatch.setattr(storage, "_AHEAD", {})
    data.remember_rows()
    _edited_and_built(tiny_game, lambda root: None)
    _once(tiny_game)
    for copy in (tiny_game / "kept" / ".cache" / storage.AHEAD_FOLDER).iterdir():
        with copy.open("r+b") as handle:
            handle.write(b" ")
    _edited_and_built(tiny_game, _rows(lambda lines: [line.replace("Plain", "Plainer") for line in lines]))
    assert patched == []
    _as_cold(tiny_game, 0)


def test_a_save_before_the_copies_are_made_splices_the_files(tiny_game: Path, patched: list[tuple[str, bool]],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Two saves in quick succession: the first's build takes the copies made ahead; the second's, before the first's
    has reported and its files were copied ahead, splices them from the last files, as a cold build writes them; the
    work both left then makes one copy of each, which the next save patches."""
    monkeypatch.setattr(storage, "_AHEAD", {})
    copies: list[str] = []  # the files copied ahead
    monkeypatch.setattr(storage, "clone", lambda source, target, clone=storage.clone: (
        copies.append(Path(source.name).name), clone(source, target)))
    data.remember_rows()
    _edited_and_built(tiny_game, lambda root: None)
    _once(tiny_game)
    for number, (text, new) in enumerate([("Plain", "Plainer"), ("Plainer", "Plainest")]):
        patched.clear()
        _rows(lambda lines, text=text, new=new: [line.replace(f"{text},", f"{new},") for line in lines])(tiny_game)
        build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names())
        assert all(done for _, done in patched) and len(patched) == (3 if number == 0 else 0), number
        _as_cold(tiny_game, number)
    copies.clear()
    storage.run_after_rebuild()
    # each once (and the print file, when the second build updated it)
    assert sorted(name for name in copies if not name.endswith(".pdf")) == ["Tiny.json", "build.json", "index.html"]
    patched.clear()
    _edited_and_built(tiny_game, _rows(lambda lines: [line.replace("Plainest,", "Plain,") for line in lines]))
    assert {stem for stem, done in patched if done} == SPLICED
    _as_cold(tiny_game, 2)


def test_a_build_stopped_after_patching_leaves_the_previous_files_whole(
        tiny_game: Path, patched: list[tuple[str, bool]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A build stopped between patching the copy of build.json and renaming it into place leaves the previous
    build.json as it was (the copy is a file of its own, deleted); the next build is a cold build's."""
    monkeypatch.setattr(storage, "_AHEAD", {})
    data.remember_rows()
    _edited_and_built(tiny_game, lambda root: None)
    _once(tiny_game)
    before = (tiny_game / "kept" / "tiny" / "build.json").read_bytes()
    replace = os.replace

    def stopped(source: str, target: str) -> None:
        if Path(target).name == "build.json" and Path(source).name.startswith(".build.json."):
            raise KeyboardInterrupt
        replace(source, target)

    edit = _rows(lambda lines: [line.replace("Plain", "Plainer") for line in lines])
    with monkeypatch.context() as stopping:
        stopping.setattr(os, "replace", stopped)
        with pytest.raises(KeyboardInterrupt):
            _edited_and_built(tiny_game, edit)
    assert ("build", True) in patched
    assert (tiny_game / "kept" / "tiny" / "build.json").read_bytes() == before
    assert not [path for path in tiny_game.rglob(".build.json.*")]  # the patched copy deleted
    _edited_and_built(tiny_game, lambda root: None)
    _as_cold(tiny_game, 0)


def test_a_process_leaves_no_copy_made_ahead_behind(tiny_game: Path) -> None:
    """The copies a process made ahead are deleted at its exit; those of a process killed before (no exit of its
    own) by the next process that makes copies there, not those of a process still running."""
    script = (
        "import os, sys; from pathlib import Path\n"
        "from cardgen.build.build import BuildOptions, build_game\n"
        "from cardgen.core import storage\n"
        "from cardgen.outputs import stage_names\n"
        "storage.keep_for_next_builds(); storage.SPLICE_FROM = 0\n"
        "root = Path(sys.argv[1])\n"
        "build_game(root, 'tiny', BuildOptions(root / 'kept', jobs=1), stages=stage_names())\n"
        "storage.run_after_rebuild()\n"
        "print(len(list((root / 'kept' / '.cache' / storage.AHEAD_FOLDER).iterdir())), flush=True)\n"
        "os._exit(0) if sys.argv[2:] == ['killed'] else None\n")
    ahead = tiny_game / "kept" / ".cache" / storage.AHEAD_FOLDER

    def run(*how: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", script, str(tiny_game), *how], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert run("killed") == ["3"]  # build.json, index.html, the TTS save: left behind
    killed = sorted(path.name for path in ahead.iterdir())
    older, running = ahead / "build.json.k2j4_x9q.ahead", ahead / f"build.json.{os.getpid()}.a1b2c3d4.ahead"
    older.write_bytes(b"an earlier cardgen's copy")
    running.write_bytes(b"a copy of a watch still running")
    edit = tiny_game / "data" / "tiny" / "cards.csv"
    edit.write_text(edit.read_text().replace("Alpha,1", "Alpha,7"))
    assert run() == ["4"]  # its own 3 and the running watch's
    assert len(killed) == 3 and [path.name for path in ahead.iterdir()] == [running.name]


def _once(root: Path) -> None:
    """Build the game into cold/ as a process that builds once (its runs as this test makes them: its RUN_ITEMS,
    on which their pads depend), writing its files whole. (cold/: a name as long as kept/, which the TTS save's
    URLs name: a run's pad depends on its length.)"""
    storage.BUILDS_AGAIN.clear()
    try:
        build_game(root, "tiny", BuildOptions(root / "cold", jobs=1), stages=stage_names())
    finally:
        storage.keep_for_next_builds()


def _same_stamps(kept: Path, fresh: Path, number: int) -> int:
    """The stamps of a build in a process building again: those it holds are the file's (the last build's and the
    changes of the edits since, `freshness.parse_stamps`), they stamp the same files with the same content keys as a
    cold build's, and every output as it lies there (the times aside)."""
    stamps, appended = freshness.parse_stamps((kept / freshness.STAMPS).read_text(encoding="utf-8"))
    cold = json.loads((fresh / freshness.STAMPS).read_text(encoding="utf-8"))
    assert freshness._read_stamps(kept / freshness.STAMPS) == stamps, number
    assert stamps["made"] == cold["made"] and stamps["outputs"].keys() == cold["outputs"].keys(), number
    for name, stamp in stamps["outputs"].items():
        state = (kept / name).stat()
        assert stamp == [state.st_size, state.st_mtime_ns], f"edit {number}: {name}"
    return appended


def test_stamps_whose_changes_are_cut_short_or_broken_are_not_read_and_the_game_is_built_again(
        tiny_game: Path) -> None:
    """A process building again appends each edit's changes to the stamps as a line (`freshness.parse_stamps`); the
    file cut short in an append, or with a line that is not a build's changes, is never read as stamps: the next
    build is not up to date and writes them whole, the one after it is, and the outputs are a cold build's."""
    data.remember_rows()
    options = BuildOptions(tiny_game / "kept", jobs=1)
    build_game(tiny_game, "tiny", options, stages=stage_names())
    path = tiny_game / "kept" / "tiny" / freshness.STAMPS
    for number in range(2):
        _rows(lambda lines, number=number: [line.replace("Plain", f"Plain {number}") for line in lines])(tiny_game)
        build_game(tiny_game, "tiny", options, stages=stage_names())
    text = path.read_text(encoding="utf-8")
    assert freshness.parse_stamps(text)[1] == 2
    for broken in (text[:-3], text + "\n", text + '\n{"outputs": ["a.png"]}', text + '\n["not", "changes"]'):
        with pytest.raises(ValueError):
            freshness.parse_stamps(broken)
        path.write_text(broken, encoding="utf-8")
        assert not build_game(tiny_game, "tiny", options, stages=stage_names()).up_to_date, broken[-20:]
        assert freshness.parse_stamps(path.read_text(encoding="utf-8"))[1] == 0  # written whole
        assert build_game(tiny_game, "tiny", options, stages=stage_names()).up_to_date, broken[-20:]
    assert _fresh(tiny_game, "build", "tiny", "--out", str(tiny_game / "fresh"), "-j", "1").returncode == 0
    kept, cold = _outputs(tiny_game / "kept" / "tiny"), _outputs(tiny_game / "fresh" / "tiny")
    del kept["index.html"], cold["index.html"]  # (the gallery says what changed since the previous build)
    assert kept == cold
    _same_stamps(tiny_game / "kept" / "tiny", tiny_game / "fresh" / "tiny", 0)


def test_stamps_changed_behind_a_process_building_again_are_read_again(tiny_game: Path) -> None:
    """The stamps a process holds are those of the file it wrote: the file rewritten in place by anyone else (the
    same inode) is read again: the build is not current (here: other settings) until a build renews them."""
    data.remember_rows()
    out = tiny_game / "kept"
    for source in [*tiny_game.glob("data/**/*"), *tiny_game.glob("templates/**/*")]:  # older than the racy window
        os.utime(source, (time.time() - 5, time.time() - 5))
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), stages=stage_names())
    path = out / "tiny" / freshness.STAMPS
    settings = json.loads(path.read_text(encoding="utf-8"))["settings"]
    assert freshness.current_build(out / "tiny", tiny_game, "tiny", settings) is not None
    with open(path, "r+", encoding="utf-8") as handle:  # in place: another size or time, the same file
        stamps = json.load(handle)
        stamps["settings"] = "another"
        handle.seek(0)
        handle.truncate()
        json.dump(stamps, handle)
    assert freshness.current_build(out / "tiny", tiny_game, "tiny", settings) is None
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), stages=stage_names())  # the same cards: stamps renewed
    assert json.loads(path.read_text(encoding="utf-8"))["settings"] == settings
    assert freshness.current_build(out / "tiny", tiny_game, "tiny", settings) is not None


def test_a_tts_save_written_again_is_spliced_from_the_objects_the_last_export_wrote(tmp_path: Path,
                                                                                   copied: list[int]) -> None:
    """The TTS save of a deck with one object changed copies the others' texts from the last file, and holds what
    `json.dumps(indent=2, ensure_ascii=False)` writes (README's format)."""
    objects = [{"Name": "Card", "Nickname": f"Card {n} é", "Description": "text " * 60, "CardID": 100 + n}
               for n in range(20)]
    saved = {"SaveName": "Tiny", "ObjectStates": [{"Name": "Deck", "ContainedObjects": objects}]}
    path = tmp_path / "Tiny.json"
    for number in range(3):
        copied.clear()
        write_saved_object(path, saved)
        assert unpadded(path.read_text(encoding="utf-8")) == json.dumps(saved, indent=2, ensure_ascii=False)
        assert (sum(copied) > 0) == (number > 0), number
        objects[5] = {**objects[5], "Description": "longer " * (80 + number)}


def test_a_run_of_cards_moved_to_the_front_is_written_as_the_first(tiny_game: Path, copied: list[int]) -> None:
    """The cards of a run (RUN_ITEMS of them, kept by a process that builds again) that become the first of the
    record (the cards before them gone, the same entries) are written after the list's opening, not a comma: in
    build.json, the gallery's table data, and the digests the build fingerprint hashes."""
    from cardgen.outputs.gallery import gallery_parts
    from cardgen.record.record import BuildRecord

    _rows(lambda lines: [*lines, *(f"Card {n},1,Text {n},1" for n in range(10))])(tiny_game)
    build_game(tiny_game, "tiny", BuildOptions(tiny_game / "kept", jobs=1), stages=stage_names())
    record = BuildRecord.read(tiny_game / "kept" / "tiny" / "build.json")
    out = tiny_game / "again"
    out.mkdir()
    digests = []
    for cards in (record.cards, record.cards[storage.RUN_ITEMS:]):
        each = record.model_copy(update={"cards": cards})
        each.save(out)
        assert unpadded((out / "build.json").read_text(encoding="utf-8")) == each.model_dump_json(indent=2)
        storage.write_spliced(out / "index.html", gallery_parts(each))
        table = (out / "index.html").read_text(encoding="utf-8").split('id="table-data">')[1].split("</script>")[0]
        assert [card["id"] for card in json.loads(table)["cards"]] == [card.id for card in cards]
        digests.append(b"".join(each.digest_parts()))
    storage._RUNS.clear()  # (the runs made anew)
    assert b"".join(record.model_copy(update={"cards": record.cards[storage.RUN_ITEMS:]}).digest_parts()) == digests[1]


def test_tts_sheets_kept_by_a_process_building_again_hold_what_a_cold_export_writes(
        tiny_game: Path, copied: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A sheet whose cards are unchanged keeps its objects from the last build (`decks.card_deck`), GUIDs included,
    only while each GUID is what a cold export hands out in order (a card changed on each of three sheets in turn,
    then a copy added on the first whose GUID is the first choice of a card on the third, and taken away again)."""
    from cardgen.outputs.tts import sheets

    def guid(seed: str, name: str, attempt: int) -> str:  # Card 7's second copy takes Card 140's first choice
        return f"{(zlib.crc32(name.replace('card-7/1', 'card-140/0').encode()) + attempt) % 16 ** 6:06x}"

    monkeypatch.setattr(sheets, "_guid", guid)
    data.remember_rows()
    _rows(lambda lines: [*lines, *(f"Card {n},1,Text {n},1" for n in range(150))])(tiny_game)  # three sheets
    edits = [_rows(lambda lines: [line.replace("Text 100,", "Text one hundred,") for line in lines]),
             _rows(lambda lines: [line.replace("Text 20,", "Text twenty,") for line in lines]),
             _rows(lambda lines: [line.replace("Text 145,", "Text 145 again,") for line in lines]),
             _rows(lambda lines: [line.replace("Text 7,1", "Text 7,2") for line in lines]),  # a copy more
             _rows(lambda lines: [line.replace("Text 7,2", "Text 7,1") for line in lines])]  # and gone again
    out = tiny_game / "kept"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), stages=stage_names())
    for number, edit in enumerate(edits):
        edit(tiny_game)
        build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), stages=stage_names())
        made = _same_as_a_cold_export(tiny_game, tmp_path / str(number), monkeypatch)
        guids = [card["GUID"] for deck in json.loads(made)["ObjectStates"] for card in deck["ContainedObjects"]]
        assert len(guids) == len(set(guids)) > 150


def test_tts_sheet_plans_kept_by_a_process_building_again_hold_what_a_cold_export_writes(
        tiny_game: Path, copied: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A sheet whose cards are unchanged keeps its plan from the last build (`decks._sheet_plans`: its key, its
    images' recipes and names) only while its key is what a cold export hands out in order: the first sheet's new
    content made to take the third sheet's key, then given back; a card removed (the cards after it move to the sheet
    before); a card of the last sheet changed. The saved object and every file of tts/ are a cold export's."""
    from cardgen.outputs.tts import decks, sheets

    planned: dict[tuple[str, int], str] = {}  # each sheet's content as first planned
    first_key = sheets.first_key

    def key(game: str, deck: str, index: int, content: str = "") -> int:
        if planned.setdefault((deck, index), content) != content and index == 0:
            return first_key(game, deck, 2, planned[(deck, 2)])  # the third sheet's first key
        return first_key(game, deck, index, content)

    monkeypatch.setattr(sheets, "first_key", key)
    monkeypatch.setattr(decks, "first_key", key)
    data.remember_rows()
    _rows(lambda lines: [*lines, *(f"Card {n},1,Text {n},1" for n in range(150))])(tiny_game)  # three sheets
    edits = [_rows(lambda lines: [line.replace("Text 20,", "Text twenty,") for line in lines]),
             _rows(lambda lines: [line.replace("Text twenty,", "Text 20,") for line in lines]),
             _rows(lambda lines: [line for line in lines if "Text 20," not in line]),
             _rows(lambda lines: [line.replace("Text 145,", "Text 145 again,") for line in lines]),
             _back("#556677")]  # the same cards, another back: every sheet's key changes
    out = tiny_game / "kept"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), stages=stage_names())
    keys = []
    for number, edit in enumerate(edits):
        edit(tiny_game)
        build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), stages=stage_names())
        made = _same_as_a_cold_export(tiny_game, tmp_path / str(number), monkeypatch)
        keys.append([key for deck in json.loads(made)["ObjectStates"] for key in deck["CustomDeck"]])
    assert keys[0][0] == keys[1][2] and keys[0][2] != keys[1][2]  # the third sheet's key taken, and given back
    assert not set(keys[-1][1:]) & set(keys[-2][1:])  # (the first sheet's key is the one `key` gives it)


def _back(color: str) -> Callable[[Path], None]:
    """The back every card shows, in one colour."""
    def painted(root: Path) -> None:
        path = root / "templates" / "tiny" / "back.svg"
        path.write_text(path.read_text().replace("#334455", color))
    return painted


def _same_as_a_cold_export(root: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The kept build's saved object and tts/ files are those an export of its own (nothing kept) writes from its
    build record into a copy of the build; the saved object's text."""
    import shutil

    from cardgen.load.manifest import load_game
    from cardgen.outputs.tts import objects
    from cardgen.outputs.tts.stage import TTSStage, export_tts
    from cardgen.record.record import BuildRecord

    out = root / "kept"
    fresh = folder / "tiny"
    shutil.copytree(out / "tiny", fresh, copy_function=os.link, ignore=shutil.ignore_patterns("tts"))
    game = load_game(root, "tiny")
    with monkeypatch.context() as cold:
        cold.setattr(storage, "BUILDS_AGAIN", threading.Event())  # (an export of its own: nothing kept)
        cold.setattr(storage, "_RUNS", {})
        cold.setattr(objects, "_TEXTS", {})
        export_tts(game, BuildRecord.read(fresh / "build.json"), fresh, TTSStage.for_game(game).config)
    [kept] = (out / "tiny" / "tts").glob("*.json")
    # (the runs' pads unlike: the saved object names the folder, of another length here: `storage.padding`)
    made = unpadded((fresh / "tts" / kept.name).read_text(encoding="utf-8")).replace(str(fresh.parent), str(out))
    assert unpadded(kept.read_text(encoding="utf-8")) == made
    names = sorted(path.name for path in (out / "tiny" / "tts").iterdir())
    assert names == sorted(path.name for path in (fresh / "tts").iterdir())
    for name in names:
        if name != kept.name:
            assert (out / "tiny" / "tts" / name).read_bytes() == (fresh / "tts" / name).read_bytes(), name
    return made
