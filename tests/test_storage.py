"""Storage: atomic writes leave the old file on failure, the cache layout, links and the folder swap."""
from __future__ import annotations

import json
import operator
import os
import re
import time
from pathlib import Path

import pytest

from cardgen.core import storage
from cardgen.core.ownership import STAMP, mark
from cardgen.core.storage import Cache, cache_root, file_digest, place_file, swap_into_place, write_atomic, write_json

PACKAGE = Path(__file__).resolve().parent.parent / "cardgen"


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old")

    def half_write(temp: Path) -> None:
        temp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomic(target, half_write)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]  # no temporary file left behind


def test_write_json_is_readable_utf8(tmp_path: Path) -> None:
    write_json(tmp_path / "sub" / "x.json", {"name": "Épée"})
    text = (tmp_path / "sub" / "x.json").read_text(encoding="utf-8")
    assert "Épée" in text and json.loads(text) == {"name": "Épée"}


def test_file_digest_follows_the_content(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"one")
    first = file_digest(path)
    path.write_bytes(b"two!")
    assert file_digest(path) != first


def _seal_of(entry: Path) -> bytes:
    """An entry's seal as written: its extended attribute, or its seal file where the file system has none."""
    try:
        return os.getxattr(entry, storage.SEAL_ATTRIBUTE)
    except OSError:
        return entry.with_name(entry.name + ".seal").read_bytes()


def _reseal(entry: Path, record: bytes) -> None:
    """Put a seal on an entry where `seal` put its own."""
    try:
        os.getxattr(entry, storage.SEAL_ATTRIBUTE)
        os.setxattr(entry, storage.SEAL_ATTRIBUTE, record)
    except OSError:
        entry.with_name(entry.name + ".seal").write_bytes(record)


def test_a_sealed_entry_is_written_through_one_temporary_file_and_a_cut_seal_is_damage(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """A cache entry goes in through a temporary file renamed into place, sealed before the rename. A seal cut
    short, or one that describes other content, makes the entry damaged: made again, never served."""
    import tempfile

    made: list[str] = []
    mkstemp = tempfile.mkstemp
    monkeypatch.setattr(storage.tempfile, "mkstemp", lambda **kw: made.append(kw["dir"]) or mkstemp(**kw))
    entry = tmp_path / "entry.png"
    storage.write_sealed(entry, lambda temp: temp.write_bytes(b"card"))
    assert len(made) == 1 and storage.verify(entry)
    record = _seal_of(entry)
    _reseal(entry, record[: len(record) // 2])
    assert not storage.verify(entry)
    storage.write_sealed(tmp_path / "other.png", lambda temp: temp.write_bytes(b"carte"))
    _reseal(entry, _seal_of(tmp_path / "other.png"))
    assert not storage.verify(entry)


def _attributes_here(folder: Path) -> bool:
    probe = folder / "probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, storage.SEAL_ATTRIBUTE, b"{}")
    except (AttributeError, OSError):
        return False
    finally:
        probe.unlink()
    return True


def test_a_seal_is_an_attribute_of_the_entry_where_the_file_system_has_them_else_a_file_beside_it(
        tmp_path: Path, monkeypatch) -> None:
    """Sealed with an extended attribute, an entry is one file, not two (each file made costs ~1 ms after a mass
    deletion); where there are none (another system, or a file system without them), a seal file beside it."""
    entry = tmp_path / "entry.png"
    storage.write_sealed(entry, lambda temp: temp.write_bytes(b"card"))
    if not _attributes_here(tmp_path):
        pytest.skip("this file system has no extended attributes")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.png"] and storage.verify(entry)

    def refused(*args: object) -> None:
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(os, "setxattr", refused)
    elsewhere = tmp_path / "elsewhere.png"
    storage.write_sealed(elsewhere, lambda temp: temp.write_bytes(b"carte"))
    assert (tmp_path / "elsewhere.png.seal").is_file() and storage.verify(elsewhere)
    elsewhere.write_bytes(b"other")
    assert not storage.verify(elsewhere)


def test_an_entry_copied_with_its_seal_under_another_name_is_not_that_entry(tmp_path: Path) -> None:
    """`cp -a` of one entry over another keeps the seal and the time: the name the seal holds tells them apart."""
    import shutil

    first, second = tmp_path / "first.png", tmp_path / "second.png"
    storage.write_sealed(first, lambda temp: temp.write_bytes(b"first card"))
    storage.write_sealed(second, lambda temp: temp.write_bytes(b"other card"))
    shutil.copy2(first, second)  # content, time and (where there are) attributes
    if not _attributes_here(tmp_path):
        shutil.copy2(tmp_path / "first.png.seal", tmp_path / "second.png.seal")
    assert storage.verify(first) and not storage.verify(second)


def test_an_entry_sealed_by_an_earlier_cardgen_with_a_seal_file_still_verifies(tmp_path: Path) -> None:
    entry = tmp_path / "entry.png"
    entry.write_bytes(b"card")
    stat = entry.stat()
    record = {"sha256": storage.file_digest(entry), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    (tmp_path / "entry.png.seal").write_text(json.dumps(record))
    assert storage.verify(entry)
    entry.write_bytes(b"cart")
    assert not storage.verify(entry)


def _reads_of(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files `verify` reads from now on (the real reading, counted)."""
    reads: list[str] = []
    real = storage.digest_now

    def counted(path: str | Path) -> str:
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(storage, "digest_now", counted)
    return reads


def test_an_entry_rewritten_with_its_size_and_time_put_back_is_not_served(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes rewritten and the modification time put back (os.utime) keep size and time as sealed, but not the
    change time, which no one can set: the entry is read, and its digest tells it is not what was sealed. An
    unchanged entry is trusted unread; one whose inode changed without its bytes (chmod) is read once, then
    sealed again."""
    entry = tmp_path / "entry.png"
    storage.write_sealed(entry, lambda temp: temp.write_bytes(b"card A"))
    reads = _reads_of(monkeypatch)
    assert storage.verify(entry) and reads == []  # the no-change path reads nothing
    time.sleep(2 * storage.SEAL_SETTLE_NS / 1e9)
    before = entry.stat()
    entry.write_bytes(b"card B")
    os.utime(entry, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (entry.stat().st_size, entry.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert not storage.verify(entry)

    other = tmp_path / "other.png"
    storage.write_sealed(other, lambda temp: temp.write_bytes(b"card C"))
    time.sleep(2 * storage.SEAL_SETTLE_NS / 1e9)
    os.chmod(other, 0o600)
    reads.clear()
    assert storage.verify(other) and reads == [str(other)]
    assert storage.verify(other) and reads == [str(other)]  # sealed again: unread from then on


def test_an_entry_sealed_by_an_earlier_cardgen_in_an_attribute_is_read_once_then_sealed_anew(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seals of the first attribute format hold no time of sealing: the entry is checked by its digest once."""
    entry = tmp_path / "entry.png"
    entry.write_bytes(b"card")
    stat = entry.stat()
    old = storage._SEAL_1.pack(1, bytes.fromhex(file_digest(entry)), stat.st_size, stat.st_mtime_ns,
                               storage._name_tag(entry.name))
    try:
        os.setxattr(entry, storage.SEAL_ATTRIBUTE, old)
    except OSError:
        pytest.skip("no extended attributes on this file system")
    reads = _reads_of(monkeypatch)
    assert storage.verify(entry) and storage.verify(entry) and reads == [str(entry)]


def test_cache_entries_live_under_kind_and_key_prefix(tmp_path: Path) -> None:
    cache = Cache(tmp_path, "png", ".png")
    key = "ab" + "0" * 30
    assert cache.path(key) == tmp_path / ".cache" / "png" / "ab" / f"{key}.png"
    assert not cache.has(key) and cache.read_bytes(key) is None
    assert cache.put_bytes(key, b"pixels")
    assert cache.has(key) and cache.read_bytes(key) == b"pixels"
    assert cache_root(tmp_path) == tmp_path / ".cache"
    folder = "cd" + "0" * 30  # a folder where an entry would be is no entry
    cache.path(folder).mkdir(parents=True)
    assert not cache.has(folder)


def test_cache_json_round_trip_and_a_torn_entry_reads_as_missing(tmp_path: Path) -> None:
    cache = Cache(tmp_path, "svg", ".json")
    cache.put_json("cd12", {"svg": "<svg/>"})
    assert cache.read_json("cd12") == {"svg": "<svg/>"}
    cache.path("cd12").write_text('{"svg": "<sv')
    assert cache.read_json("cd12") is None


def test_kept_by_game_writes_back_the_lines_it_read_and_encodes_only_new_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.core.storage import KeptByGame, seal

    first = KeptByGame(tmp_path, "kind", "game")
    first.used = {"a": {"svg": "<svg>A & B</svg>"}, "b": [1, 2]}
    first.save()
    storage._KNOWN_ENTRIES.clear()  # a build in another process: "a" and "b" are read from their lines
    encoded: list[object] = []
    dumps = json.dumps
    def counting(value: object, **kw: object) -> str:
        if not (isinstance(value, dict) and "sha256" in value):  # the seal's own record is not a kept value
            encoded.append(value)
        return dumps(value, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "dumps", counting)
    second = KeptByGame(tmp_path, "kind", "game")
    assert second.kept == first.used
    second.used = {"a": second.kept["a"], "c": "new"}
    second.save()
    assert encoded == ["new"]  # "a" went back as the line read, not encoded again
    storage._KNOWN_ENTRIES.clear()  # read from the file, not from what this process remembers of it
    assert KeptByGame(tmp_path, "kind", "game").kept == {"a": {"svg": "<svg>A & B</svg>"}, "c": "new"}
    unchanged = KeptByGame(tmp_path, "kind", "game")
    unchanged.used = dict(unchanged.kept)
    unchanged.save()
    assert encoded == ["new"]
    # A sealed entry that is not lines of a key, a tab and JSON is not one: nothing is kept
    (entry,) = (tmp_path / ".cache" / "kind").rglob("*.jsonl")
    for damaged in (b"a\t{\"svg\": 1}\nno tab here", b"a\t{not json"):
        entry.write_bytes(damaged)
        seal(entry)
        assert KeptByGame(tmp_path, "kind", "game").kept == {}


def test_cache_put_is_best_effort_when_it_cannot_write(tmp_path: Path) -> None:
    (tmp_path / ".cache").write_text("a file where the cache folder should be")
    assert Cache(tmp_path, "svg").put_bytes("ef00", b"x") is False


def test_place_file_links_or_copies_and_replaces(tmp_path: Path) -> None:
    source = tmp_path / "source.png"
    source.write_bytes(b"new")
    target = tmp_path / "out" / "card.png"
    target.parent.mkdir()
    target.write_bytes(b"old")
    place_file(source, target)
    assert target.read_bytes() == b"new"


def test_swap_into_place_replaces_a_folder_whole(tmp_path: Path) -> None:
    final, staging = mark(tmp_path / "game"), mark(tmp_path / ".game.building")  # both made by cardgen
    (final / "stale.png").write_text("old")
    (staging / "fresh.png").write_text("new")
    swap_into_place(staging, final)
    assert sorted(p.name for p in final.iterdir()) == [STAMP, "fresh.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game"]


def test_no_module_but_storage_builds_a_cache_path() -> None:
    """Cache paths come from `Cache` alone: no other module names the .cache folder."""
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.name != "storage.py" and re.search(r"""["']\.cache["']""", p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_kept_after_a_save_is_what_it_wrote_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build saves its kept entries twice (after validating, after planning): the second save, with nothing
    new, neither reads the entry back nor writes it; a value changed after a save is written, not its old line."""
    from cardgen.core.storage import KeptByGame

    first = KeptByGame(tmp_path, "kind", "game")
    first.used = {"a": {"svg": "A"}, "b": [1, 2]}
    first.save()
    reads: list[str] = []
    writes: list[str] = []
    read_bytes, write = Cache.read_bytes, Cache.write
    monkeypatch.setattr(Cache, "read_bytes", lambda self, *a: reads.append(self.kind) or read_bytes(self, *a))
    monkeypatch.setattr(Cache, "write", lambda self, *a: writes.append(self.kind) or write(self, *a))
    first.save()
    assert (reads, writes) == ([], [])
    assert first.kept == {"a": {"svg": "A"}, "b": [1, 2]}

    second = KeptByGame(tmp_path, "kind", "game")
    second.used = {"a": {"svg": "changed"}, "b": second.kept["b"]}  # "a" made anew, "b" from its line
    second.save()
    second.used["c"] = "new"  # a save after the first: "a" must not go back as the line read before it
    second.save()
    assert KeptByGame(tmp_path, "kind", "game").kept == {"a": {"svg": "changed"}, "b": [1, 2], "c": "new"}
    assert reads == [] and writes == ["kind", "kind"]  # what this process wrote is known: not read again
    storage._KNOWN_ENTRIES.clear()
    assert KeptByGame(tmp_path, "kind", "game").kept == {"a": {"svg": "changed"}, "b": [1, 2], "c": "new"}
    assert reads == ["kind"]  # the file itself, read by another process


def test_kept_entries_saved_with_many_new_values_are_read_again_not_held(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """What a save encoded is remembered for the next build in this process only when it is an edit's few values
    (KEPT_ENCODED): a first build's lines, as large as its values, are not held beside them."""
    from cardgen.core.storage import KeptByGame

    reads: list[str] = []
    read_bytes = Cache.read_bytes
    monkeypatch.setattr(Cache, "read_bytes", lambda self, *a: reads.append(self.kind) or read_bytes(self, *a))
    monkeypatch.setattr(storage, "KEPT_ENCODED", 2)
    for values, read in (({"a": 1, "b": 2}, []), ({"a": 1, "b": 2, "c": 3}, ["kind"])):
        storage._KNOWN_ENTRIES.clear()
        saved = KeptByGame(tmp_path / str(len(values)), "kind", "game")
        saved.used = values
        saved.save()
        reads.clear()
        assert KeptByGame(tmp_path / str(len(values)), "kind", "game").kept == values
        assert reads == read


def test_an_entry_verified_once_is_trusted_by_its_state_until_anything_changes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch looks up each card image again at every rebuild: an entry this process verified is trusted while its
    device, inode, size and times are the same (one stat), and verified from its seal again once anything wrote
    to it, even with its modification time set back (its change time tells)."""
    import os

    from cardgen.core.storage import verify

    cache = Cache(tmp_path, "kind", ".bin")
    assert cache.put_bytes("ab" * 16, b"data")
    path = cache.path("ab" * 16)
    assert verify(path)
    reads: list[Path] = []
    read_seal = storage._read_seal
    monkeypatch.setattr(storage, "_read_seal", lambda entry: reads.append(entry) or read_seal(entry))
    stats: list[Path] = []
    stat = Path.stat
    monkeypatch.setattr(Path, "stat", lambda self, **kw: stats.append(self) or stat(self, **kw))
    assert verify(path) and cache.has("ab" * 16)
    assert reads == [] and stats == [path, path]  # one stat each
    monkeypatch.setattr(Path, "stat", stat)
    before = path.stat()
    path.write_bytes(b"DATA")  # written in place, same size, its time set back
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    verify(path)
    assert reads == [path]


def test_a_card_file_copied_into_staging_is_its_cache_entry_s_bytes_in_a_file_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`copy_into_staging` copies in the kernel, and by reading where the kernel cannot (another file system):
    either way the same bytes in a new file (not a link: writing it leaves the entry as it was), over a file
    already there."""
    source = tmp_path / "entry.png"
    source.write_bytes(os.urandom(300_000))
    (tmp_path / "stale.png").write_bytes(b"x" * 500_000)
    calls = []

    def across(*args: object) -> int:
        calls.append(args)
        raise OSError(18, "Invalid cross-device link")

    for name, broken in (("kernel.png", False), ("read.png", True), ("stale.png", False)):
        if broken:
            monkeypatch.setattr(os, "copy_file_range", across)
        storage.copy_into_staging(source, tmp_path / name)
        monkeypatch.undo()
        assert (tmp_path / name).read_bytes() == source.read_bytes()
        assert os.stat(tmp_path / name).st_ino != os.stat(source).st_ino
    assert len(calls) == 1
    (tmp_path / "kernel.png").write_bytes(b"edited")
    assert len(source.read_bytes()) == 300_000


def test_an_entry_written_from_bytes_is_sealed_with_their_digest_without_reading_the_file_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`write_sealed_bytes` (a card's PNG, a TTS cell) seals the bytes it writes: the file is not read for its digest,
    the entry verifies, and so does the same content written again with its time moved (checked by digest), while
    other content of the same size does not."""
    data = os.urandom(50_000)
    entry = Cache(tmp_path, "cells", ".jpg")
    reads: list[object] = []
    real = storage.digest_now
    monkeypatch.setattr(storage, "digest_now", lambda path: reads.append(path) or real(path))
    path = entry.write_bytes("ab" * 16, data)
    assert reads == [] and path.read_bytes() == data and storage.verify(path)
    storage._VERIFIED.clear()
    for content, kept in ((data, True), (os.urandom(50_000), False)):
        path.write_bytes(content)
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        assert storage.verify(path) is kept


def test_an_entry_written_from_bytes_is_whole_of_the_mode_of_any_file_or_not_there_at_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`write_sealed_bytes` writes through one temporary file of its own: the entry comes in whole, with the mode
    of any file cardgen writes, in a folder made for it, and sealed (in a seal file where there are no attributes);
    a temporary name an earlier process left is not taken; a write that fails leaves the previous entry as it was
    and no temporary file."""
    entry = tmp_path / "ab" / "entry.jpg"
    storage.write_sealed_bytes(entry, b"first")
    assert entry.read_bytes() == b"first" and storage.verify(entry)
    assert entry.stat().st_mode & 0o777 == storage.FILE_MODE and os.listdir(entry.parent) == ["entry.jpg"]
    left = entry.parent / f".entry.jpg.{os.getpid()}-{next(storage._TEMP_NUMBERS) + 1}.tmp"
    left.write_bytes(b"left by a killed build")
    storage.write_sealed_bytes(entry, b"second")
    assert entry.read_bytes() == b"second" and storage.verify(entry) and left.read_bytes() == b"left by a killed build"
    left.unlink()
    storage.write_sealed_bytes(entry, b"again")
    assert entry.read_bytes() == b"again" and entry.stat().st_mode & 0o777 == storage.FILE_MODE

    def refused(*args: object) -> None:
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(os, "setxattr", refused)
    storage.write_sealed_bytes(entry, b"third")
    assert entry.read_bytes() == b"third" and storage.verify(entry)
    assert sorted(os.listdir(entry.parent)) == ["entry.jpg", "entry.jpg.seal"]

    def full(handle: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError):
        storage.write_sealed_bytes(entry, b"fourth")
    assert entry.read_bytes() == b"third" and storage.verify(entry)
    assert sorted(os.listdir(entry.parent)) == ["entry.jpg", "entry.jpg.seal"]


def test_exchange_swaps_two_files_in_one_step_or_says_it_cannot(tmp_path: Path) -> None:
    from cardgen.core.storage import exchange

    new, old = tmp_path / "new", tmp_path / "old"
    new.write_bytes(b"made now")
    old.write_bytes(b"made before")
    inodes = new.stat().st_ino, old.stat().st_ino
    if not exchange(new, old):  # not Linux, or a file system without renameat2's exchange: nothing done
        assert (new.read_bytes(), old.read_bytes()) == (b"made now", b"made before")
        pytest.skip("this system cannot swap files")
    assert (old.read_bytes(), new.read_bytes()) == (b"made now", b"made before")
    assert (old.stat().st_ino, new.stat().st_ino) == inodes  # the files themselves moved, nothing was copied
    assert not exchange(new, tmp_path / "missing") and new.read_bytes() == b"made before"


def test_keep_latest_keeps_a_value_as_the_latest_and_drops_the_oldest_beyond_its_bound() -> None:
    """What a process that builds again keeps of its builds: a key kept again becomes the latest, the oldest goes."""
    from cardgen.core.storage import keep_latest

    kept: dict[str, int] = {}
    for key, value in (("a", 1), ("b", 2), ("a", 3), ("c", 4)):
        keep_latest(kept, key, value, 2)
    assert list(kept.items()) == [("a", 3), ("c", 4)]


def test_a_deferred_entry_kept_in_memory_is_written_whole_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    """In a process that builds again, a deferred entry's edits stay in memory (their dicts shared with the next
    build, not copied) and the file keeps the lines of an earlier build; a later save that writes the file holds
    what that build used, a value no longer used and then made again (an edit undone) included."""
    from cardgen.core.storage import KeptByGame

    class Deferred(KeptByGame):
        deferred = True

    monkeypatch.setattr(storage, "DEFERRED_AT_MOST", 1)
    storage.keep_for_next_builds()
    first = Deferred(tmp_path, "kind", "game")
    first.used = {"a": "A", "b": "B"}
    first.save()  # written (all new)
    reads: list[str] = []
    read_bytes = Cache.read_bytes
    monkeypatch.setattr(Cache, "read_bytes", lambda self, *a: reads.append(self.kind) or read_bytes(self, *a))
    builds = [({"a": None, "c": "C"}, False),  # "b" left, "c" new: kept in memory only
              ({"a": None, "b": "B", "d": "D", "e": "E"}, True),  # "b" made again (its line still the file's): written
              ({"a": None, "b": None, "f": "F"}, False)]
    for used, written in builds:
        build = Deferred(tmp_path, "kind", "game")
        build.used = {key: build.kept[key] if value is None else value for key, value in used.items()}
        identity = storage.file_identity(build.store.path(build.entry))
        build.save()
        assert Deferred(tmp_path, "kind", "game").kept == build.used
        assert (storage.file_identity(build.store.path(build.entry)) != identity) == written
    assert reads == []  # each build took the last one's values from memory
    storage._KNOWN_ENTRIES.clear()  # the file itself, as another process reads it
    assert Deferred(tmp_path, "kind", "game").kept == {"a": "A", "b": "B", "d": "D", "e": "E"}


def test_keep_latest_frees_what_it_drops_once_the_rebuild_has_reported() -> None:
    """In a process that builds again, a value replaced or dropped is freed by `run_after_rebuild` (after the rebuild's
    report), not during the build: a watch's first record, read from build.json, freed at its eighth edit took ~35 ms
    of that edit at 10,000 cards. A process that builds once frees it at once."""
    import weakref

    from cardgen.core import storage

    class Value:
        """A value only the dict holds."""

    for again in (True, False):
        if again:
            storage.keep_for_next_builds()
        else:
            storage.BUILDS_AGAIN.clear()
        kept: dict[str, Value] = {"a": Value(), "b": Value()}
        replaced, dropped = weakref.ref(kept["a"]), weakref.ref(kept["b"])
        storage.keep_latest(kept, "a", Value(), 1)
        assert list(kept) == ["a"]
        assert (replaced() is not None and dropped() is not None) is again
        storage.run_after_rebuild()
        assert replaced() is None and dropped() is None


def test_a_deferred_save_counts_the_values_not_in_the_file_by_the_changed_keys_and_those_kept_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deferred save stays in memory while at most DEFERRED_AT_MOST of the values it keeps have no line in the file:
    those it changed and those earlier saves kept in memory only (`KeptByGame._unlined`), not every key looked up;
    when those are not known (a save that wrote more lines than it remembers), every key is looked up."""
    from cardgen.core.storage import KeptByGame

    class Deferred(KeptByGame):
        deferred = True

    class Lines(dict):
        """The lines of an entry, counting the look-ups of keys."""
        asked = 0

        def __contains__(self, key: object) -> bool:
            Lines.asked += 1
            return super().__contains__(key)

    monkeypatch.setattr(storage, "DEFERRED_AT_MOST", 2)
    storage.keep_for_next_builds()
    base = {f"k{number}": f"V{number}" for number in range(40)}
    first = Deferred(tmp_path, "kind", "game")
    first.used = dict(base)
    first.save()  # written: every value has its line
    for new, written in ((["c"], False), (["d"], False), (["e"], True), (["f"], False)):  # c, d, e unlined: written
        build = Deferred(tmp_path, "kind", "game")
        build.used = {**build.kept, **{key: key.upper() for key in new}}
        unlined = sum(key not in build._lines for key in build.used)  # what the file lacks
        build._lines, Lines.asked = Lines(build._lines), 0
        identity = storage.file_identity(build.store.path(build.entry))
        build.save()
        assert (storage.file_identity(build.store.path(build.entry)) != identity) is written is (unlined > 2), new
        assert written or Lines.asked < len(build.used) / 4, new  # the changed and unlined keys only (a write
        # looks up each key for its line)
    same = Deferred(tmp_path, "kind", "game")
    same.used = dict(same.kept)  # the very values: nothing saved, written or remembered anew
    known, identity = dict(storage._KNOWN_ENTRIES), storage.file_identity(same.store.path(same.entry))
    same.save()
    assert storage._KNOWN_ENTRIES == known and storage.file_identity(same.store.path(same.entry)) == identity
    assert all(map(operator.is_, storage._KNOWN_ENTRIES.values(), known.values()))
    monkeypatch.setattr(storage, "KEPT_ENCODED", 0)  # a save's lines not remembered: which lack one is not known
    build = Deferred(tmp_path, "kind", "game")
    build.used = {**build.kept, "g": "G", "h": "H", "i": "I"}
    build.save()  # written
    build.used = {**build.used, "j": "J"}
    identity = storage.file_identity(build.store.path(build.entry))
    build.save()  # "g", "h", "i" have lines in the file, which this object does not hold: all unlined, written
    assert storage.file_identity(build.store.path(build.entry)) != identity
    storage._KNOWN_ENTRIES.clear()
    assert Deferred(tmp_path, "kind", "game").kept == build.used
