"""A running watch's edit makes the outputs' share of the cards it changed, not of the game: the print's sheets are
laid out again only where their cards changed, and the outputs after each edit are those of a cold build."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cardgen.build.build import BuildOptions, build_game
from cardgen.core import storage
from cardgen.outputs import stage_names
from tests.test_edit import _same_as_cold


def _build(root: Path, out: str = "output") -> None:
    build_game(root, "tiny", BuildOptions(root / out, jobs=1), stages=stage_names())


def _cold(root: Path) -> None:
    """Build the game into cold/ as a process that builds once (nothing of the watch's kept state used)."""
    shutil.rmtree(root / "cold", ignore_errors=True)
    storage.BUILDS_AGAIN.clear()
    try:
        _build(root, "cold")
    finally:
        storage.keep_for_next_builds()


def _rows(root: Path, rows: list[str]) -> None:
    (root / "data" / "tiny" / "cards.csv").write_text("\n".join(["name,power,text,count", *rows, ""]))


ALPHA, BETA, NA = 'Alpha,1,Fire & Ice <2> "quoted",20', "Beta,2,**Bold** and *italic* with :scrap: icon,1", \
    "NA,3,Plain,3"


@pytest.fixture
def laid(tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """In a process that builds again, with a print of a file per sheet (front and back), and no imposition kept from a
    test before: the cards of each sheet the print lays out (`imposition._leaf`), in order."""
    import cardgen.outputs.pdf as pdf_module
    from cardgen.outputs import imposition

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 2)
    monkeypatch.setattr(imposition, "_KEPT_LEAVES", {})
    # nor the last imposition, kept by game and options (`storage.derived`): a test before this one that built a
    # `tiny` of the same cards left one equal to this first build's, which is taken whole (rightly: its pages are
    # made of the cards' items and the options only), and no sheet would be laid out
    monkeypatch.setattr(storage, "_DERIVED", {})
    storage.keep_for_next_builds()
    seen: list[list[str]] = []
    leaf = imposition._leaf
    monkeypatch.setattr(imposition, "_leaf", lambda chunk, *rest: seen.append([i.card_id for i in chunk]) or
                        leaf(chunk, *rest))
    return seen


def test_a_watchs_print_lays_out_only_the_sheets_whose_cards_changed_and_writes_a_cold_builds_files(
        tiny_game: Path, laid: list[list[str]]) -> None:
    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    _rows(tiny_game, [ALPHA, BETA, NA])  # 24 copies: sheets of 9, 9 and 6 poker cards on Letter
    _build(tiny_game)
    assert [len(sheet) for sheet in laid] == [9, 9, 6]
    laid.clear()
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plainer")])  # a new image, in the same places
    _build(tiny_game)
    assert laid == []
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, cold)
    laid.clear()
    _rows(tiny_game, [ALPHA, BETA, NA.replace(",3", ",4")])  # one more NA: the last sheet changes
    _build(tiny_game)
    assert laid == [["alpha", "alpha", "beta", "na", "na", "na", "na"]]
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, cold)
    laid.clear()
    _rows(tiny_game, [NA, ALPHA.replace(",20", ",9"), BETA])  # another order, a sheet less: every sheet changes
    _build(tiny_game)
    assert [len(sheet) for sheet in laid] == [9, 4]
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, cold)


@pytest.mark.parametrize("swapped", [False, True])
def test_a_watchs_edit_frees_the_files_it_replaced_once_it_has_reported(tiny_game: Path, swapped: bool,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The print file an edit replaces and the TTS sheet it no longer makes are moved into the build's staging
    folder, deleted after the rebuild (`storage.run_after_rebuild`, which a watch calls once the rebuild has
    reported), or by the next command as a leftover; a build of its own leaves nothing behind. `swapped`: every
    file put in place of another by swapping the two (`storage.exchange`, as a large one is), not a rename."""
    swaps: list[Path] = []
    if swapped:
        exchange = storage.exchange
        monkeypatch.setattr(storage, "EXCHANGE_FROM", 0)
        monkeypatch.setattr(storage, "exchange", lambda source, target: exchange(source, target) and
                            not swaps.append(target))
    out = tiny_game / "output"
    _build(tiny_game)
    storage.keep_for_next_builds()
    for number, text in enumerate(["Plainer", "Plainest"]):
        pdf, sheets = out / "tiny" / "print" / "tiny-letter.pdf", set((out / "tiny" / "tts").glob("*.jpg"))
        replaced = {pdf.stat().st_ino, *(sheet.stat().st_ino for sheet in sheets)}
        _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", text)])
        _build(tiny_game)
        [staging] = out.glob(".tiny.building-*")  # the last one's removed by this build, as a leftover
        gone = sheets - set((out / "tiny" / "tts").glob("*.jpg"))
        assert len(gone) == 1 and pdf.stat().st_ino not in replaced
        assert {path.stat().st_ino for path in staging.rglob("*")} >= replaced - {sheet.stat().st_ino for sheet in
                                                                                sheets - gone}
        if number:
            storage.run_after_rebuild()
            assert not staging.exists()
    assert (out / "tiny" / "print" / "tiny-letter.pdf" in swaps) == swapped
    storage.BUILDS_AGAIN.clear()
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    assert list(out.glob(".tiny.building-*")) == []
    _cold(tiny_game)
    _same_as_cold(tiny_game, out / "tiny", tiny_game / "cold" / "tiny")


def test_a_print_file_a_watch_updated_is_written_whole_by_a_process_that_did_not_see_the_update(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch keeps what its print updates made in memory (`KeptByGame.deferred`), not in the pages' entry: another
    process finds there an earlier write's state, which the file no longer is, and writes the file whole."""
    from cardgen.outputs import pdf_update

    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 10.0)  # a small file: its revisions are a large part of it
    pdf = tiny_game / "output" / "tiny" / "print" / "tiny-letter.pdf"
    storage.keep_for_next_builds()
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    for text in ["Plainer", "Plainest"]:
        _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", text)])
        _build(tiny_game)
    assert pdf.read_bytes().count(b"%%EOF") == 3  # written whole, then two revisions
    storage.BUILDS_AGAIN.clear()
    monkeypatch.setattr(storage, "_KNOWN_ENTRIES", {})  # a process of its own
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plain at last")])
    _build(tiny_game)
    assert pdf.read_bytes().count(b"%%EOF") == 1
    _cold(tiny_game)
    _same_as_cold(tiny_game, tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny")


def test_a_watch_looks_at_a_kept_card_file_once_and_makes_one_changed_behind_its_back_again(
        tiny_game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch keeps an unchanged card's file on trust, unread, and looks at it once the build is done (one `stat`,
    not one as it is kept and one at the end): a card file edited, or linked elsewhere, since the last build is made
    again from the cache, not kept."""
    from cardgen.load import freshness

    out = tiny_game / "output" / "tiny"
    storage.keep_for_next_builds()
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    alpha, beta = out / "cards" / "main" / "alpha.png", out / "cards" / "main" / "beta.png"
    with alpha.open("r+b") as handle:  # in place: the same size
        handle.seek(100)
        handle.write(b"edited")
    (tmp_path / "beta.png").hardlink_to(beta)
    looked: list[str] = []
    file_state = freshness._file_state
    monkeypatch.setattr(freshness, "_file_state", lambda path: looked.append(Path(path).name) or file_state(path))
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plainer")])
    _build(tiny_game)
    assert sorted(name for name in looked if name.endswith(".png")) == ["alpha.png", "back.png", "beta.png"]  # once
    assert beta.stat().st_nlink == 1
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")


def _edited_behind(alpha: Path, how: str) -> None:
    """Change a card file of the output folder as a designer or a tool might, behind a watch's back."""
    import os

    if how == "written in place":  # the same size
        with alpha.open("r+b") as handle:
            handle.seek(100)
            handle.write(b"edited")
    elif how == "made older":
        os.utime(alpha, ns=(10**18, 10**18))
    elif how == "made read-only":
        alpha.chmod(0o444)
    elif how == "deleted":
        alpha.unlink()
    else:  # replaced: another file renamed over it, as an image editor saves
        (alpha.parent / "edited.tmp").write_bytes(alpha.read_bytes()[:-1] + b"x")
        os.replace(alpha.parent / "edited.tmp", alpha)


@pytest.mark.skipif(not Path("/proc/sys/fs/inotify").is_dir(), reason="inotify: Linux only")
def test_a_watch_looks_only_at_the_kept_card_files_the_kernel_says_changed_and_makes_each_one_again(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a watch's second edit on, it learns from the kernel (inotify: `core/folderwatch.py`) which files of the
    output folder changed: it looks at no kept card file no one touched, and one written in place, made older or
    read-only, deleted or replaced behind its back is made again. A folder moved in the output folder makes it look
    at every file, as do stamps it did not write; a build stopped after looking leaves the change noted for the next
    one; one killed while moving its files in is built again whole. After all this the next build says up to
    date; a record or stamps corrupted behind its back are built again."""
    import os

    from cardgen.core.errors import CardgenError
    from cardgen.load import freshness

    out = tiny_game / "output" / "tiny"
    alpha = out / "cards" / "main" / "alpha.png"
    storage.keep_for_next_builds()
    texts = iter(f"Plain {number}" for number in range(100))
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", next(texts))])
    _build(tiny_game)  # looks at every kept file: the folder is watched from here on
    made = alpha.read_bytes()
    looked: list[str] = []
    file_state = freshness._file_state
    monkeypatch.setattr(freshness, "_file_state", lambda path: looked.append(Path(path).name) or file_state(path))

    def edit() -> None:
        looked.clear()
        _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", next(texts))])
        _build(tiny_game)

    edit()
    assert not {"alpha.png", "beta.png"} & set(looked)  # nobody touched them
    for how in ("written in place", "made older", "made read-only", "deleted", "replaced"):
        _edited_behind(alpha, how)
        edit()
        assert "alpha.png" in looked and "beta.png" not in looked, how
        assert alpha.read_bytes() == made and alpha.stat().st_mode & 0o777 == storage.FILE_MODE, how
    (out / "cards" / "main").rename(out / "cards" / "moved")  # away and back: its watch named it wrongly meanwhile
    (out / "cards" / "moved").rename(out / "cards" / "main")
    edit()
    assert {"alpha.png", "beta.png"} <= set(looked)  # the kernel's events cannot tell: every file looked at
    edit()
    assert not {"alpha.png", "beta.png"} & set(looked)  # watched anew
    _edited_behind(alpha, "written in place")

    def stopped(self: freshness.PreviousOutputs) -> None:
        raise CardgenError("stopped after looking")

    with monkeypatch.context() as stopping:
        stopping.setattr(freshness.PreviousOutputs, "check_kept", stopped)
        with pytest.raises(CardgenError):
            edit()
    edit()
    assert alpha.read_bytes() == made
    stamps = out / freshness.STAMPS
    stamps.write_bytes(stamps.read_bytes())  # written by another: not the watch's own, every file looked at
    edit()
    assert {"alpha.png", "beta.png"} <= set(looked)
    replace = os.replace

    def killed_moving_na_in(source: str, target: str) -> None:
        if str(target) == str(out / "cards" / "main" / "na.png"):
            raise KeyboardInterrupt
        replace(source, target)

    with monkeypatch.context() as stopping:
        stopping.setattr(os, "replace", killed_moving_na_in)
        with pytest.raises(KeyboardInterrupt):
            edit()
    assert not stamps.exists()  # a folder half moved in is never taken as current: built again whole
    edit()
    again = BuildOptions(tiny_game / "output", jobs=1)
    assert build_game(tiny_game, "tiny", again, stages=stage_names()).up_to_date  # after several edits
    for broken, text in (("build.json", "{"), (freshness.STAMPS, stamps.read_text()[:100])):
        (out / broken).write_text(text)  # corrupted or cut short behind the watch's back: built again, not served
        assert not build_game(tiny_game, "tiny", again, stages=stage_names()).up_to_date, broken
        assert build_game(tiny_game, "tiny", again, stages=stage_names()).up_to_date, broken
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")


@pytest.mark.skipif(not Path("/proc/sys/fs/inotify").is_dir(), reason="inotify: Linux only")
def test_a_watch_keeps_the_tts_images_on_trust_and_makes_one_changed_behind_its_back_again(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch keeps the export's images an edit did not change (the deck's back here) on trust, unread: it looks at
    one only when the kernel says it changed, and then makes it again (written in place, made older or read-only,
    deleted or replaced behind its back); the outputs are then a cold build's."""
    from cardgen.load import freshness

    out = tiny_game / "output" / "tiny"
    storage.keep_for_next_builds()
    texts = iter(f"Plain {number}" for number in range(100))
    looked: list[str] = []

    def edit() -> None:
        looked.clear()
        _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", next(texts))])
        _build(tiny_game)

    edit()
    edit()  # looks at every kept file: the folder is watched from here on
    back = next((out / "tts").glob("tiny-back-*.jpg"))
    made = back.read_bytes()
    file_state = freshness._file_state
    monkeypatch.setattr(freshness, "_file_state", lambda path: looked.append(Path(path).name) or file_state(path))
    edit()
    assert back.name not in looked  # nobody touched it
    for how in ("written in place", "made older", "made read-only", "deleted", "replaced"):
        _edited_behind(back, how)
        edit()
        assert back.name in looked, how
        assert back.read_bytes() == made and back.stat().st_mode & 0o777 == storage.FILE_MODE, how
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")


@pytest.mark.skipif(not Path("/proc/sys/fs/inotify").is_dir(), reason="inotify: Linux only")
def test_a_watchs_export_keeps_its_unchanged_images_at_once_and_places_only_the_changed_one(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit's export keeps the images the previous build made of the same on trust all at once
    (`Exporter.put_held`: `PreviousOutputs.keep_trusted`), not by a `place` each: only the sheet holding the
    changed card is placed (and made); so are the card files found in the cache (`CardFiles.place`, each file's key
    as handed in): only the changed card's is placed; the outputs are a cold build's."""
    from cardgen.load import freshness

    out = tiny_game / "output" / "tiny"
    storage.keep_for_next_builds()
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    placed: list[str] = []
    place = freshness.PreviousOutputs.place
    monkeypatch.setattr(freshness.PreviousOutputs, "place", lambda self, target, *rest, **options:
                        placed.append(Path(target).name) or place(self, target, *rest, **options))
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Edited")])
    _build(tiny_game)
    images = [name for name in placed if name.endswith(".jpg")]  # (the export's: the card files are PNG images)
    assert len(images) == 1 and "-back" not in images[0] and (out / "tts" / images[0]).is_file(), placed
    assert [name for name in placed if name.endswith(".png") and "-" not in name] == ["na.png"], placed
    _cold(tiny_game)
    _same_as_cold(tiny_game, out, tiny_game / "cold" / "tiny")


def _print_copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """With no copy made ahead yet, the names of the print files copied from now on (as the list fills)."""
    from cardgen.outputs import pdf_update

    monkeypatch.setattr(storage, "_AHEAD", {})
    copied: list[str] = []
    clone = storage.clone
    for module in (pdf_update, storage):  # the print file's copies (storage's copies card files too)
        monkeypatch.setattr(module, "clone", lambda source, target: ".pdf" in source.name and
                            copied.append(Path(source.name).name) or clone(source, target))
    return copied


def test_a_watch_copies_the_print_file_it_updated_ahead_for_the_next_update_and_takes_only_that_copy(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a watch's rebuild has reported, the print file it updated is copied (`storage.copy_ahead`); the next
    update of that file takes the copy instead of copying the file then, unless the copy or the file changed since;
    the files are a cold build's either way."""
    from cardgen.outputs import pdf_update

    monkeypatch.setattr(pdf_update, "GROWTH_AT_MOST", 10.0)  # a small file: its revisions are a large part of it
    copied = _print_copies(monkeypatch)
    pdf = tiny_game / "output" / "tiny" / "print" / "tiny-letter.pdf"
    storage.keep_for_next_builds()
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    for number, text in enumerate(["Plainer", "Plainest", "Plain at last", "Plain again"]):
        copied.clear()
        _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", text)])
        _build(tiny_game)
        assert pdf.read_bytes().count(b"%%EOF") == number + 2
        assert len(copied) == (0 if number in (1, 3) else 1)  # the first edit's, and one whose copy was written to
        copied.clear()
        storage.run_after_rebuild()
        assert copied == ["tiny-letter.pdf"]
        [ahead] = (tiny_game / "output" / ".cache" / storage.AHEAD_FOLDER).iterdir()
        assert ahead.name.startswith("tiny-letter.pdf.") and ahead.name.endswith(".ahead")
        if number == 1:
            with ahead.open("r+b") as handle:  # in place: the same size
                handle.seek(100)
                handle.write(b"edited")
    storage.drop_ahead()  # as the process's exit does (atexit)
    assert list((tiny_game / "output" / ".cache" / storage.AHEAD_FOLDER).iterdir()) == []
    _cold(tiny_game)
    _same_as_cold(tiny_game, tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny")


def test_a_watch_copies_a_print_file_it_wrote_whole_ahead_when_only_its_images_changed(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A print file a watch's first edit wrote whole because its kept pages described an earlier state (the previous
    watch kept its last edits in memory only), though only images changed, is copied ahead once the rebuild has
    reported, as an updated one is: the next edit's update takes the copy instead of copying the file itself. A
    file written whole for a new layout is not (a print's every file, none likely edited next)."""
    copied = _print_copies(monkeypatch)
    pdf = tiny_game / "output" / "tiny" / "print" / "tiny-letter.pdf"
    storage.keep_for_next_builds()
    for text in ("Plain", "Plainer"):  # a first build, then an update kept in memory only
        _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", text)])
        _build(tiny_game)
        storage.run_after_rebuild()
    storage.drop_ahead()
    storage._KNOWN_ENTRIES.clear()  # a new watch: the print's kept pages read from their file, the first build's
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plainest")])
    _build(tiny_game)
    assert pdf.read_bytes().count(b"%%EOF") == 1  # written whole
    copied.clear()
    storage.run_after_rebuild()
    assert copied == ["tiny-letter.pdf"]
    copied.clear()
    _rows(tiny_game, [ALPHA, BETA, NA.replace("Plain", "Plain at last")])
    _build(tiny_game)
    assert pdf.read_bytes().count(b"%%EOF") == 2  # updated...
    assert copied == []  # ...in the copy made ahead
    storage.run_after_rebuild()
    _rows(tiny_game, [ALPHA, BETA, NA.replace(",3", ",4")])  # one more NA: another layout, the file written whole
    _build(tiny_game)
    copied.clear()
    storage.run_after_rebuild()
    assert pdf.read_bytes().count(b"%%EOF") == 1 and copied == []
    storage.drop_ahead()
    _cold(tiny_game)
    _same_as_cold(tiny_game, tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny")


def test_a_watchs_print_after_edits_of_kept_rows_is_a_cold_builds(tiny_game: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that keeps its rows (a watch: unchanged cards are the last build's entries, its imposition the
    last one while the changed cards have the same copies, `imposition.impose_cards`, and a file's pages the last
    build's), the print after a card's text or copies change, a card is added or removed and the order changes is a
    cold build's, page by page and pixel by pixel (a file of a sheet: front and back)."""
    import cardgen.outputs.pdf as pdf_module
    from cardgen.load import data

    monkeypatch.setattr(pdf_module, "PAGES_PER_FILE", 2)
    storage.keep_for_next_builds()
    data.remember_rows()
    out, cold = tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny"
    _rows(tiny_game, [ALPHA, BETA, NA])
    _build(tiny_game)
    for rows in ([ALPHA, BETA, NA.replace(",3", ",4")], [ALPHA, BETA.replace("icon", "icons"), NA.replace(",3", ",4")],
                 [ALPHA, BETA, NA, "Delta,4,Added,2"], [BETA, ALPHA, NA, "Delta,4,Added,2"], [BETA, NA]):
        _rows(tiny_game, rows)
        _build(tiny_game)
        _cold(tiny_game)
        _same_as_cold(tiny_game, out, cold)
        files = sorted(path.name for path in (cold / "print").glob("*.pdf"))
        assert files == sorted(path.name for path in (out / "print").glob("*.pdf")), rows
        for name in files:
            assert _pixels(out / "print" / name) == _pixels(cold / "print" / name), (rows, name)


def _pixels(pdf: Path) -> list[bytes]:
    """The RGB pixels of each page of a PDF, drawn at 30 dpi (by poppler's pdftoppm)."""
    import subprocess
    import tempfile

    from PIL import Image

    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(["pdftoppm", "-r", "30", "-png", str(pdf), f"{folder}/page"], check=True, timeout=120)
        return [Image.open(page).convert("RGB").tobytes() for page in sorted(Path(folder).glob("page*.png"))]


def test_a_watchs_tts_export_plans_again_only_the_sheets_holding_a_changed_card_and_writes_a_cold_builds_files(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that keeps its rows (a watch), the export plans again, and makes the card objects of, only the
    sheets holding a changed card (sheets of 2 cards here); after cards change, are added, removed and moved, and
    the deck's back changes, its save, sheets and thumbnail are a cold build's."""
    from cardgen.load import data
    from cardgen.outputs.tts import decks

    monkeypatch.setattr(decks, "SLOTS_PER_SHEET", 2)
    planned: list[int] = []
    made: list[str] = []
    plan, objects = decks._sheet_plan, decks._sheet_objects
    monkeypatch.setattr(decks, "_sheet_plan", lambda export, deck_name, deck, index, *rest:
                        planned.append(index) or plan(export, deck_name, deck, index, *rest))
    monkeypatch.setattr(decks, "_sheet_objects", lambda export, sheet, *rest:
                        made.append(sheet.card_ids[0]) or objects(export, sheet, *rest))
    storage.keep_for_next_builds()
    data.remember_rows()
    cards = [ALPHA, BETA, NA, *(f"Card {n},1,Text {n},1" for n in range(6))]  # 9 cards: 5 sheets
    back = tiny_game / "templates" / "tiny" / "back.svg"
    edits = [(lambda: _rows(tiny_game, cards), None, None),
             (lambda: _rows(tiny_game, [*cards[:6], "Card 3,1,Changed,1", *cards[7:]]), [3], ["card-3"]),
             (lambda: _rows(tiny_game, [*cards, "Card 6,1,Added,1"]), [3, 4], ["card-3", "card-5"]),
             (lambda: _rows(tiny_game, [*cards[:3], *cards[4:], "Card 6,1,Added,1"]), [1, 2, 3, 4],
              ["na", "card-2", "card-4", "card-6"]),  # (the 2nd sheet's last removed: the others move up)
             (lambda: _rows(tiny_game, [cards[1], cards[0], *cards[2:]]), [0, 1, 2, 3, 4], None),
             (lambda: back.write_text(back.read_text().replace("#334455", "#554433")), [0, 1, 2, 3, 4],
              ["beta", "na", "card-1", "card-3", "card-5"]),  # (other backs: other pictures)
             (lambda: _rows(tiny_game, [cards[1], cards[0], *cards[2:4], "Card 1,1,Changed,1", *cards[5:]]), [2],
              ["card-1"]),
             (lambda: _rows(tiny_game, [cards[1], cards[0], cards[2], "Card 0,1,Changed,1", "Card 1,1,Changed,1",
                                        *cards[5:7], "Card 4,1,Changed,1", cards[8]]), [1, 3], ["na", "card-3"])]
    for number, (edit, sheets, first_cards) in enumerate(edits):
        planned.clear(), made.clear()
        edit()
        _build(tiny_game)
        assert sheets is None or planned == sheets, (number, planned)
        assert first_cards is None or made == first_cards, (number, made)
    _cold(tiny_game)
    _same_as_cold(tiny_game, tiny_game / "output" / "tiny", tiny_game / "cold" / "tiny")

