"""The render cache kept under a bound (`core/cachebound.py`): a watch's edits add entries, and once a rebuild has
reported the entries no game's latest build uses go, least recently used first, while the cache holds more than its
bound; what a latest build uses stays, and an entry gone is made again by whoever needs it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cardgen.build.build import BuildOptions, BuildResult, build_game
from cardgen.core import cachebound, storage
from cardgen.load.freshness import STAMPS, parse_stamps
from cardgen.outputs import stage_names
from tests.test_edit import _same_as_cold
from tests.test_print_update import CHIPS

ROWS = ['Alpha,1,Fire & Ice <2> "quoted",2', "Beta,2,**Bold** and *italic* with :scrap: icon,1", "NA,3,Plain {},3"]


def _rows(root: Path, game: str, power: int) -> None:
    (root / "data" / game / "cards.csv").write_text("\n".join(["name,power,text,count", *ROWS, ""]).format(power))


def _build(root: Path, game: str = "tiny", out: str = "output") -> BuildResult:
    return build_game(root, game, BuildOptions(root / out, jobs=1), stages=stage_names())


def _edit(root: Path, power: int, game: str = "tiny") -> BuildResult:
    """An edit of one card under a watch, and the work the watch does once it has reported."""
    _rows(root, game, power)
    result = _build(root, game)
    storage.run_after_rebuild()
    return result


def _entries(out_root: Path) -> dict[str, int]:
    """The cache's entries (but a watch's copies ahead and the uses kept), by path in the cache: their sizes."""
    folder = storage.cache_root(out_root)
    return {path.relative_to(folder).as_posix(): path.stat().st_size for path in folder.rglob("*")
            if path.is_file() and len(path.relative_to(folder).parts) == 3 and
            path.relative_to(folder).parts[0] not in cachebound.NOT_ENTRIES}


def _used(out_root: Path, *games: str) -> set[str]:
    used: set[str] = set()
    for game in games:
        used |= set((storage.cache_root(out_root) / cachebound.USES_FOLDER / game).read_text().split("\n"))
    return used


def _cold(root: Path) -> None:
    """Build the game into cold/ as a process that builds once."""
    shutil.rmtree(root / "cold", ignore_errors=True)
    storage.BUILDS_AGAIN.clear()
    try:
        _build(root, out="cold")
    finally:
        storage.keep_for_next_builds()


@pytest.fixture
def watching(tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A process that builds again (a watch), with no cache walked yet."""
    monkeypatch.setattr(cachebound, "_INDEX", {})
    monkeypatch.setattr(cachebound, "_BUILT", {})
    storage.keep_for_next_builds()
    return tiny_game


def test_a_watchs_edits_keep_the_cache_under_its_bound_and_its_outputs_those_of_a_cold_build(
        watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = watching / "output"
    _rows(watching, "tiny", 3)
    _build(watching)
    storage.run_after_rebuild()
    live = sum(_entries(out).values())
    bound = int(live * 1.5)  # room for a few edits' new card, cell and sheet: not for eight
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, str(bound))
    made = dict(_entries(out))
    for power in range(4, 12):
        assert _edit(watching, power).rendered == 1
        now = _entries(out)
        made.update(now)
        assert sum(now.values()) <= bound
    assert sum(made.values()) > 2 * bound  # (what the edits made: the bound kept the cache from holding it)
    _cold(watching)
    _same_as_cold(watching, out / "tiny", watching / "cold" / "tiny")


def test_the_entries_each_games_latest_build_uses_are_never_evicted_and_a_build_then_is_up_to_date(
        watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = watching / "output"
    shutil.copytree(watching / "data" / "tiny", watching / "data" / "other")
    shutil.copytree(watching / "templates" / "tiny", watching / "templates" / "other")
    _rows(watching, "other", 7)
    _build(watching, "other")  # another game of the output folder, built before
    _rows(watching, "tiny", 3)
    _build(watching)
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "1")  # every entry no latest build uses goes
    for power in (4, 5, 6):
        _edit(watching, power)
    entries = _entries(out)
    used = _used(out, "tiny", "other")
    assert all(path.startswith("png/") for path in used - entries.keys()), used - entries.keys()
    assert entries.keys() <= used  # all else was evicted
    kinds = {path.split("/")[0] for path in entries}
    assert {"png", "outputs", "tts-cells", "tts-cover", "svg", "layout", "print-pages"} <= kinds
    # every card image each game placed is there (the TTS thumbnail's key names no card image)
    for game in ("tiny", "other"):
        made = parse_stamps((out / game / STAMPS).read_text())[0]["made"]
        for name, key in made.items():
            if name.startswith(("cards/", "backs/")):
                assert f"png/{key[:2]}/{key}.png" in entries, (game, name)
    storage.BUILDS_AGAIN.clear()  # another process, a build of each: nothing to do
    assert _build(watching).up_to_date and _build(watching, "other").up_to_date
    storage.keep_for_next_builds()
    result = _edit(watching, 3)  # the card as it was first: evicted, drawn again; nothing else is
    assert result.rendered == 1
    _cold(watching)
    _same_as_cold(watching, out / "tiny", watching / "cold" / "tiny")


def test_an_entry_evicted_is_made_again_by_its_reader(watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch trusts the entries it looked at while the kernel says nothing touched them (`folderwatch`): one
    evicted since is told, and drawn again; the TTS sheet holding it made again from its cells."""
    out = watching / "output"
    _rows(watching, "tiny", 3)
    _build(watching)
    for power in (4, 3, 4):  # each image and sheet looked at, and trusted, once there
        _edit(watching, power)
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "1")
    _edit(watching, 5)  # the images of power 3 and 4 go, and the sheets holding them
    assert not any(path.startswith("outputs/") and path not in _used(out, "tiny") for path in _entries(out))
    result = _edit(watching, 3)
    assert result.rendered == 1
    _cold(watching)
    _same_as_cold(watching, out / "tiny", watching / "cold" / "tiny")


def test_a_build_command_saves_its_uses_and_prunes_once_it_has_reported_and_one_with_nothing_to_do_does_not(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import run_cli

    out = tiny_game / "output"
    for power in (3, 4):
        _rows(tiny_game, "tiny", power)
        run_cli(tiny_game, "build", "tiny", "--jobs", "1")
    assert set(_entries(out)) - _used(out, "tiny")  # the images of power 3, kept
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "1k")
    kept = storage.cache_root(out) / cachebound.USES_FOLDER / cachebound.COUNT_FILE
    counted = kept.stat().st_mtime_ns
    assert "up to date" in run_cli(tiny_game, "build", "tiny", "--jobs", "1").output
    assert kept.stat().st_mtime_ns == counted  # (not looked at)
    _rows(tiny_game, "tiny", 5)
    run_cli(tiny_game, "build", "tiny", "--jobs", "1")
    entries, used = set(_entries(out)), _used(out, "tiny")
    assert entries <= used and all(path.startswith("png/") for path in used - entries)
    assert "up to date" in run_cli(tiny_game, "build", "tiny", "--jobs", "1").output


@pytest.mark.parametrize(("text", "size"), [("800M", 800 << 20), ("2G", 2 << 30), ("1.5gb", 3 << 29), ("4096", 4096),
                                            ("0", 0), ("", None)])
def test_the_limit_is_read_as_a_size(text: str, size: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, text)
    assert cachebound.cache_limit() == size


def test_a_limit_that_is_not_a_size_is_an_error_before_the_build(tiny_game: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import run_cli

    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "lots")
    result = run_cli(tiny_game, "build", "tiny", "--jobs", "1", expect=1)
    assert "CARDGEN_CACHE_LIMIT=lots: not a size" in result.output
    assert not (tiny_game / "output" / "tiny").exists()


def test_a_watch_deletes_at_most_so_many_entries_a_rebuild(watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a change that drew every card again, the entries it replaced go a few at each rebuild, not all while
    the next save waits."""
    out = watching / "output"
    _rows(watching, "tiny", 3)
    _build(watching)
    for power in (4, 5, 6):  # 9 entries no longer used: 3 images, cells and sheets
        _edit(watching, power)
    monkeypatch.setattr(cachebound, "PRUNED_AT_MOST", 2)
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "1")
    unused = set(_entries(out)) - _used(out, "tiny")
    assert len(unused) == 9
    for power in (7, 8):
        _edit(watching, power)
        now = set(_entries(out)) - _used(out, "tiny")
        assert len(unused - now) == 2
        unused = now


def test_a_command_started_as_a_watch_settles_takes_the_lock_and_the_uses_are_saved(
        watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saving the uses holds no lock: another command (a print, a tts export) taking the output lock right after a
    rebuild's report is not refused, and the uses are saved all the same."""
    from cardgen.core.ownership import output_lock

    out, taken = watching / "output", []
    save_uses = cachebound._save_uses

    def another_command_starts(*args: object) -> cachebound._Count:
        with output_lock(out):  # (OutputBusy if settle held it)
            taken.append(True)
        return save_uses(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(cachebound, "_save_uses", another_command_starts)
    for power in (3, 4):
        _edit(watching, power)
    assert taken == [True, True]
    assert "png/" in "\n".join(_used(out, "tiny"))


def test_a_first_builds_settle_counts_the_cache_while_another_command_holds_the_lock(watching: Path) -> None:
    """The count of a cache is unknown until its first settle walks it: that walk holds no lock either (only deleting
    does), so a command holding the output lock as the first build reports is no more in its way."""
    from cardgen.core.ownership import output_lock

    out = watching / "output"
    _rows(watching, "tiny", 3)
    _build(watching)
    with output_lock(out):  # another command, started as the first build reported
        storage.run_after_rebuild()
    counted = json.loads((storage.cache_root(out) / cachebound.USES_FOLDER / cachebound.COUNT_FILE).read_text())
    assert counted["total"] == sum(_entries(out).values()) and "png/" in "\n".join(_used(out, "tiny"))


def test_a_pruning_due_while_another_command_holds_the_lock_waits_for_a_later_settle(
        watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.core.ownership import output_lock

    out = watching / "output"
    for power in (3, 4):
        _edit(watching, power)
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "1")
    unused = set(_entries(out)) - _used(out, "tiny")
    _rows(watching, "tiny", 5)
    _build(watching)
    with output_lock(out):  # another command started as the rebuild reported
        storage.run_after_rebuild()
    assert unused <= set(_entries(out))  # nothing pruned, no error
    assert json.loads((storage.cache_root(out) / cachebound.USES_FOLDER / cachebound.COUNT_FILE).read_text())
    _edit(watching, 6)
    assert not set(_entries(out)) - _used(out, "tiny")


@pytest.mark.parametrize("when", ["before", "during"])
def test_a_clean_while_a_watch_settles_leaves_no_cache_folder_a_build_refuses(watching: Path, when: str) -> None:
    """`cardgen clean` removes .cache while a watch saves its uses (it holds no lock then). `before`: the folder is
    gone as settle starts: the uses are not written, no .cache is made again. `during`: it goes in the instant
    between settle's look at its stamp and its write, which makes the folder again: that .cache of cardgen's own
    parts is still cardgen's, and the next build takes it."""
    from cardgen.core.ownership import STAMP, clean_output_root

    out = watching / "output"
    cache = storage.cache_root(out)
    _rows(watching, "tiny", 3)
    _build(watching)
    with pytest.MonkeyPatch.context() as patch:
        if when == "before":
            clean_output_root(out, everything=False)
        else:
            def cleaned_then_written(path: Path, text: str) -> None:
                clean_output_root(out, everything=False)
                storage.write_text(path, text)

            patch.setattr(cachebound, "write_text", cleaned_then_written)
        storage.run_after_rebuild()
    assert not cache.exists() if when == "before" else not (cache / STAMP).exists()
    _rows(watching, "tiny", 4)
    _build(watching)  # not refused as the designer's folder (every card drawn again: the cache was cleaned)
    assert (cache / STAMP).is_file()


def test_the_prints_and_print_on_demands_entries_the_latest_build_does_not_use_go_too(
        watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each edit makes a print JPEG of the new card image, the masked streams of a new token image and a new
    print-on-demand PDF and findings: every build looks all its own up, so those it no longer uses go like a card
    image (they stayed used for ever before)."""
    out, data = watching / "output", watching / "data" / "tiny"
    manifest = data / "game.yaml"
    manifest.write_text(manifest.read_text().replace("decks:\n", "decks:\n" + CHIPS) +
                        "print:\n  images: jpeg\npod: {vendor: drivethrucards}\n")
    (watching / "templates" / "tiny" / "chip.svg").write_text(
        '<svg {{ geo.svg_attrs }}><circle cx="{{ geo.width / 2 }}" cy="{{ geo.height / 2 }}" r="{{ geo.width / 2 }}" '
        'fill="{{ card.color }}"/></svg>')
    kinds = ("print-jpeg", "print-masked", "pod")

    def edit(power: int) -> None:
        (data / "chips.csv").write_text(f"name,color\nRed,#aa{power:02d}22\nBlue,#2222aa\n")
        _edit(watching, power)

    def counted() -> dict[str, int]:
        return {kind: len([path for path in _entries(out) if path.startswith(f"{kind}/")]) for kind in kinds}

    edit(3)
    first = counted()
    assert all(first.values()), first
    for power in (4, 5):
        edit(power)
    assert counted() != first  # (each edit made more)
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "1")
    edit(6)
    assert counted() == first  # the latest build's only
    assert {path for path in _entries(out) if path.startswith(kinds)} <= _used(out, "tiny")
    _cold(watching)
    _same_as_cold(watching, out / "tiny", watching / "cold" / "tiny")


def test_a_game_built_without_uses_kept_keeps_its_card_images_and_no_longer_stops_the_pruning(
        watching: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game built by a cardgen before the bound (no uses kept) beside the one being edited: the cache is pruned
    all the same, that game's card images (from its build.json) stay, and its next build draws none of them; a
    build.json that cannot be read stops the pruning as before (better nothing pruned than its images)."""
    out = watching / "output"
    shutil.copytree(watching / "data" / "tiny", watching / "data" / "other")
    shutil.copytree(watching / "templates" / "tiny", watching / "templates" / "other")
    _rows(watching, "other", 7)
    _edit(watching, 7, "other")
    (storage.cache_root(out) / cachebound.USES_FOLDER / "other").unlink()  # as an older cardgen left it
    record = (out / "other" / "build.json").read_text()
    recorded = json.loads(record)
    images = {f"png/{key[:2]}/{key}.png" for key in [entry["hash"] for entry in [*recorded["cards"],
                                                                                 *recorded["backs"].values()]]}
    for power in (3, 4):
        _edit(watching, power)
    monkeypatch.setenv(cachebound.LIMIT_VARIABLE, "1")
    (out / "other" / "build.json").write_text("{")
    _edit(watching, 5)
    assert set(_entries(out)) - _used(out, "tiny") - images  # a record unread: nothing pruned
    (out / "other" / "build.json").write_text(record)
    _edit(watching, 6)
    assert images - _used(out, "tiny")  # (the other game has images of its own)
    assert set(_entries(out)) - _used(out, "tiny") == images - _used(out, "tiny")  # all but the other's images
    _rows(watching, "other", 8)
    assert _edit(watching, 8, "other").rendered == 1  # the edited card only
    _cold(watching)
    _same_as_cold(watching, out / "tiny", watching / "cold" / "tiny")
