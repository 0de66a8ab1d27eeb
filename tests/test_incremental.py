"""Incremental builds: what is redrawn after an edit, interrupted builds, change summaries, snapshots, watch."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardgen.build.build import BuildOptions, build_game
from cardgen.build.plan import png_cache
from cardgen.build.watch import affected_games, watch_games
from cardgen.commands.cli import main
from cardgen.outputs.stage import Stage, StageContext


def _build(root: Path, **kw):
    return build_game(root, "tiny", BuildOptions(root / "output", jobs=1), **kw)


def _drawn_ids(root: Path, before: dict) -> set[str]:
    after = json.loads((root / "output" / "tiny" / "build.json").read_text())
    old = {c["id"]: c["hash"] for c in before["cards"]}
    return {c["id"] for c in after["cards"] if old.get(c["id"]) != c["hash"]}


def _record(root: Path) -> dict:
    return json.loads((root / "output" / "tiny" / "build.json").read_text())


def test_no_change_rebuild_draws_nothing(tiny_game: Path) -> None:
    first = _build(tiny_game)
    assert (first.rendered, first.cached) == (4, 0)
    again = _build(tiny_game)
    assert again.up_to_date and again.rendered == 0

def test_a_file_added_to_the_game_while_it_builds_makes_the_next_build_run(tiny_game: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A file saved into the game's folder after the build stamped its sources (here: while it validates) is not in
    the record's stamps (the build never read it): the next build sees it new and loads the game again (its outputs
    are the same: it keeps them and says so), and stamps it."""
    from cardgen import validate

    validate_context = validate.validate_context

    def saving(*args, **kwargs):  # (validation runs after the sources are stamped and the game is loaded)
        (tiny_game / "data" / "tiny" / "extra.csv").write_text("name\nLate\n")
        return validate_context(*args, **kwargs)

    monkeypatch.setattr(validate, "validate_context", saving)
    _build(tiny_game)
    assert "data/tiny/extra.csv" not in _record(tiny_game)["sources"]
    monkeypatch.setattr(validate, "validate_context", validate_context)
    assert _build(tiny_game).up_to_date
    assert "data/tiny/extra.csv" in _record(tiny_game)["sources"]


def test_csv_edit_redraws_exactly_that_card(tiny_game: Path) -> None:
    _build(tiny_game)
    before = _record(tiny_game)
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Plain", "Plainer"))
    result = _build(tiny_game)
    assert (result.rendered, result.cached) == (1, 3)
    assert _drawn_ids(tiny_game, before) == {"na"}
    assert [c.id for c in result.changes.changed] == ["na"]
    assert result.changes.changed[0].fields == {"text": ("Plain", "Plainer")}
    assert _record(tiny_game)["stats"] == {"cards": 3, "copies": 6, "rendered": 1, "cached": 3}


def test_icon_edit_redraws_cards_using_it(tiny_game: Path) -> None:
    _build(tiny_game)
    before = _record(tiny_game)
    icon = tiny_game / "icons" / "hexagonal-nut.svg"  # a workspace icon overrides the bundled one of its name
    icon.parent.mkdir()
    icon.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><circle r="200" cx="256" '
                    'cy="256"/></svg>')
    result = _build(tiny_game)
    assert result.rendered == 1 and _drawn_ids(tiny_game, before) == {"beta"}


def test_font_edit_redraws_every_card_using_it(tiny_game: Path) -> None:
    from cardgen.core.bundled import FONTS_DIR

    _build(tiny_game)
    font = tiny_game / "fonts" / "RobotoMono-Regular.ttf"  # a workspace font overrides the bundled face
    font.parent.mkdir()
    font.write_bytes((FONTS_DIR / font.name).read_bytes() + b"\0\0\0\0")  # same font, different bytes
    result = _build(tiny_game)
    assert result.rendered == 3  # every face uses Roboto Mono; the plain back has no text
    assert [(c.id, c.image_changed, c.fields) for c in result.changes.changed] == [
        ("alpha", True, {}), ("beta", True, {}), ("na", True, {})]  # the same SVGs: the font file tells


def test_interrupted_build_leaves_previous_output_and_recovers(tiny_game: Path) -> None:
    _build(tiny_game)
    before = (tiny_game / "output" / "tiny" / "build.json").read_text()
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Plain", "Changed"))

    class Interrupt(Stage):
        name = "interrupt"

        def run(self, ctx: StageContext) -> list:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _build(tiny_game, stages=[Interrupt()])
    assert (tiny_game / "output" / "tiny" / "build.json").read_text() == before
    assert not list((tiny_game / "output").glob(".tiny*"))
    # A worker killed while writing leaves only a temporary file, which is never taken for a cache entry.
    stray = next(png_cache(tiny_game / "output").folder.glob("*/*.png"))
    (stray.parent / f".{stray.name}.junk.tmp").write_bytes(b"half a png")
    result = _build(tiny_game)
    assert not result.up_to_date
    assert "Changed" in (tiny_game / "output" / "tiny" / "build.json").read_text()


class _PlacedSoFar:
    """Card work noting, for each image a worker is given, how many card files the build has placed so far; on
    the `stop_at`-th image it interrupts the build."""

    def __init__(self, out_root: Path, seen: list[int], stop_at: int = 0) -> None:
        self.out_root, self.seen, self.stop_at = out_root, seen, stop_at

    def __call__(self, image: object) -> None:
        self.seen.append(len([p for p in self.out_root.glob(".tiny.building-*/*/**/*.png")]))
        if len(self.seen) == self.stop_at:
            raise KeyboardInterrupt


class _Watching(Stage):
    """A stage whose only work is `_PlacedSoFar` on every image of the build."""

    name = "watching"

    def __init__(self, seen: list[int], stop_at: int = 0) -> None:
        super().__init__()
        self.seen, self.stop_at = seen, stop_at

    def card_work(self, game, record, out_root: Path) -> dict:
        hashes = {c.hash for c in record.cards} | {b.hash for b in record.backs.values()}
        return {key: _PlacedSoFar(out_root, self.seen, self.stop_at) for key in hashes}

    def run(self, ctx: StageContext) -> list:
        return []


def test_card_files_are_placed_while_the_other_cards_are_drawn(tiny_game: Path) -> None:
    """Each card file goes into the folder being built as soon as its image is drawn, not after the last one:
    the main process would otherwise copy every card file after drawing, while the workers sit idle."""
    seen: list[int] = []
    result = _build(tiny_game, stages=[_Watching(seen), "gallery"])
    assert result.rendered == 4
    assert seen == [0, 1, 2, 3]  # the 4th image is drawn when the 3 before it are in place
    cards = sorted(p.relative_to(tiny_game / "output" / "tiny").as_posix()
                   for p in (tiny_game / "output" / "tiny").glob("*/**/*.png"))
    assert cards == ["backs/back.png", "cards/main/alpha.png", "cards/main/beta.png", "cards/main/na.png"]
    for path in cards:  # each the drawn image itself, byte for byte
        key = _record(tiny_game)["backs"]["back"]["hash"] if path.startswith("backs") else next(
            c["hash"] for c in _record(tiny_game)["cards"] if path.endswith(f"/{c['id']}.png"))
        assert (tiny_game / "output" / "tiny" / path).read_bytes() == png_cache(tiny_game / "output").path(
            key).read_bytes()


def test_a_first_build_makes_its_fingerprint_while_the_workers_draw(tiny_game: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A first build (nothing to keep) makes its build fingerprint once the workers have every job, not before
    its first card; a rebuild makes it before drawing (it compares it with the last build's). build.json and the
    gallery hold it, and it is the one a rebuild computes: a build with a source touched but unchanged keeps all."""
    from concurrent.futures import ProcessPoolExecutor

    import cardgen.build.build as build_module
    from cardgen.raster import render

    events: list[str] = []
    fingerprint, submit = build_module.build_fingerprint, ProcessPoolExecutor.submit

    def noting_fingerprint(*args: object) -> str:
        events.append("fingerprint")
        return fingerprint(*args)  # type: ignore[arg-type]

    def noting_submit(self: ProcessPoolExecutor, fn: object, *args: object, **kwargs: object) -> object:
        if fn is render.run_job:
            events.append("job")
        return submit(self, fn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build_module, "build_fingerprint", noting_fingerprint)
    monkeypatch.setattr(ProcessPoolExecutor, "submit", noting_submit)
    options, stages = BuildOptions(tiny_game / "output", jobs=2), ["print", "tts", "gallery"]
    assert build_game(tiny_game, "tiny", options, stages=stages).rendered == 4
    assert events == ["job"] * 4 + ["fingerprint"]
    first = _record(tiny_game)["fingerprint"]
    assert first and f'data-built="{first}-' in (tiny_game / "output" / "tiny" / "index.html").read_text()
    events.clear()
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text())  # a save with nothing changed: the pipeline runs, and keeps the outputs
    assert build_game(tiny_game, "tiny", options, stages=stages).up_to_date and events == ["fingerprint"]
    events.clear()
    csv.write_text(csv.read_text().replace("Plain", "Plainer"))
    assert build_game(tiny_game, "tiny", options, stages=stages).rendered == 1
    # the edited card drawn while validating (build/early.py), then the fingerprint, then its job with its work
    assert events == ["job", "fingerprint", "job"] and _record(tiny_game)["fingerprint"] not in (None, first)


def test_a_build_interrupted_while_drawing_leaves_the_previous_output(tiny_game: Path) -> None:
    _build(tiny_game)
    out = tiny_game / "output"
    # Without its stamps nothing of the previous output is kept: every card file is placed in the staging folder
    # as its image is drawn (a kept file is placed only when the build is put in place).
    (out / "tiny" / ".build-stamps.json").unlink()
    before = {p.relative_to(out): p.read_bytes() for p in (out / "tiny").rglob("*") if p.is_file()}
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Plain", "Changed").replace("Alpha,1", "Alpha,7"))
    seen: list[int] = []
    with pytest.raises(KeyboardInterrupt):  # on the second image: the first one's file is placed by then
        _build(tiny_game, stages=[_Watching(seen, stop_at=2)])
    assert seen == [0, 1]
    after = {p.relative_to(out): p.read_bytes() for p in (out / "tiny").rglob("*") if p.is_file()}
    assert after == before
    assert not list(out.glob(".tiny*"))
    again = _build(tiny_game)
    assert "Changed" in json.dumps(_record(tiny_game))
    assert again.rendered == 1  # Alpha, drawn before the interruption, came from the cache


def test_cache_shared_between_games(tiny_game: Path) -> None:
    shutil.copytree(tiny_game / "data" / "tiny", tiny_game / "data" / "twin")
    shutil.copytree(tiny_game / "templates" / "tiny", tiny_game / "templates" / "twin")
    _build(tiny_game)
    twin = build_game(tiny_game, "twin", BuildOptions(tiny_game / "output", jobs=1))
    assert (twin.rendered, twin.cached) == (0, 4)


def test_snapshot_and_changes_cli(tiny_game: Path) -> None:
    runner = CliRunner()
    args = ["--root", str(tiny_game)]
    assert runner.invoke(main, args + ["build", "-j", "1"]).exit_code == 0
    result = runner.invoke(main, args + ["snapshot", "tiny", "playtest-1"])
    assert result.exit_code == 0, result.output
    assert (tiny_game / "data" / "tiny" / "snapshots" / "playtest-1.json").is_file()
    assert runner.invoke(main, args + ["snapshot", "tiny", "playtest-1"]).exit_code == 1
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Beta,2,", "Beta,5,") + "Gamma,1,New card,1\n")
    build = runner.invoke(main, args + ["build", "-j", "1"])
    assert "~ beta: power 2 -> 5" in build.output and "+ gamma (Gamma) added" in build.output
    listed = runner.invoke(main, args + ["changes", "tiny", "--since", "playtest-1"])
    assert listed.exit_code == 0
    assert "1 added, 1 changed, 0 removed" in listed.output and "~ beta: power 2 -> 5" in listed.output
    missing = runner.invoke(main, args + ["changes", "tiny", "--since", "nope"])
    assert missing.exit_code == 1 and "snapshots: playtest-1" in missing.output


def test_a_change_of_cardgen_s_code_redraws_but_reports_only_what_the_designer_sees(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from cardgen.core import bundled

    runner = CliRunner()
    args = ["--root", str(tiny_game)]
    page = tiny_game / "output" / "tiny" / "index.html"
    assert runner.invoke(main, args + ["build", "-j", "1"]).exit_code == 0
    assert runner.invoke(main, args + ["snapshot", "tiny", "printed"]).exit_code == 0
    monkeypatch.setattr(bundled, "code_digest", lambda *modules: "0" * 32)  # cardgen upgraded: new digests
    monkeypatch.setattr(bundled, "code_stamp", lambda: ())  # and new files, which the no-change check notices
    redrawn = runner.invoke(main, args + ["build", "-j", "1"])
    assert "4 drawn, 0 from cache" in redrawn.output and "~ " not in redrawn.output, redrawn.output
    assert "no change since the previous build" in page.read_text() and "card changed" not in page.read_text()
    assert "0 added, 0 changed, 0 removed" in runner.invoke(main, args + ["changes", "tiny", "--since",
                                                                          "printed"]).output
    nothing = runner.invoke(main, args + ["print", "tiny", "--changed-since", "printed"])
    assert nothing.exit_code == 1 and "nothing to print" in nothing.output
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Plain", "Plainer"))  # a real edit after the upgrade: that card alone
    edited = runner.invoke(main, args + ["build", "-j", "1"])
    assert re.findall("~ .*", edited.output) == ["~ na: text Plain -> Plainer"], edited.output
    assert re.findall(r'class="card changed[^"]*" id="card-(\w+)"', page.read_text()) == ["na"]
    listed = runner.invoke(main, args + ["changes", "tiny", "--since", "printed"]).output
    assert "0 added, 1 changed, 0 removed" in listed and "~ na: text Plain -> Plainer" in listed, listed
    reprint = runner.invoke(main, args + ["print", "tiny", "--changed-since", "printed"])
    assert reprint.exit_code == 0 and re.findall("~ .*", reprint.output) == ["~ na: text Plain -> Plainer"]


def test_clean_empties_cache(tiny_game: Path) -> None:
    _build(tiny_game)
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "clean"])
    assert result.exit_code == 0 and not (tiny_game / "output" / ".cache").exists()
    assert (tiny_game / "output" / "tiny" / "build.json").is_file()


def test_affected_games(tmp_path: Path) -> None:
    games = ["a", "b"]
    assert affected_games(tmp_path / "data" / "a" / "cards.csv", tmp_path, games) == {"a"}
    assert affected_games(tmp_path / "templates" / "b" / "face.svg", tmp_path, games) == {"b"}
    assert affected_games(tmp_path / "icons" / "x.svg", tmp_path, games) == {"a", "b"}
    assert affected_games(tmp_path / "output" / "a" / "build.json", tmp_path, games) == set()
    assert affected_games(tmp_path / "data" / "a" / ".cards.csv.swp", tmp_path, games) == set()
    (tmp_path / "data" / "c").mkdir(parents=True)
    (tmp_path / "data" / "c" / "game.yaml").write_text("title: C\n")
    assert affected_games(tmp_path / "data" / "c" / "cards.csv", tmp_path, games) == set()  # a game not watched
    # a deck definition games include (data/common/...) may affect any of them
    assert affected_games(tmp_path / "data" / "common" / "deck" / "cards.csv", tmp_path, games) == {"a", "b"}


def test_watch_rebuilds_after_an_edit(tiny_game: Path) -> None:
    _build(tiny_game)
    stop = threading.Event()
    results = []

    def rebuild(names: list[str]) -> None:
        results.append(build_game(tiny_game, names[0], BuildOptions(tiny_game / "output", jobs=1)))
        stop.set()

    thread = threading.Thread(target=watch_games, args=(tiny_game, ["tiny"], rebuild, stop, 0.1), daemon=True)
    thread.start()
    time.sleep(0.5)  # let the observer start
    saved = time.perf_counter()
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Alpha,1", "Alpha,9"))
    thread.join(timeout=20)
    stop.set()
    assert results, "watch did not rebuild within 20 s"
    assert [c.id for c in results[0].changes.changed] == ["alpha"]
    assert time.perf_counter() - saved < 10


def test_watch_gets_ready_to_draw_while_it_waits_for_the_first_save(tiny_game: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch's rebuilds draw an edit's card in its own process: it sets drawing up (cairosvg, a first picture,
    the output stages' modules) as it starts watching, not on the way to the first edit's card; and it keeps the
    rows each build converts (`data.remember_rows`), which a build of its own does not."""
    import cardgen.raster.pool
    from cardgen.core import storage
    from cardgen.outputs import stage_modules, stage_names

    warmed: list[list[str]] = []
    monkeypatch.setattr(cardgen.raster.pool, "warm_up", lambda modules=(): warmed.append(list(modules)))
    monkeypatch.setattr(storage, "BUILDS_AGAIN", threading.Event())
    stop = threading.Event()
    thread = threading.Thread(target=watch_games, args=(tiny_game, ["tiny"], lambda names: None, stop, 0.1),
                              daemon=True)
    thread.start()
    for _ in range(100):
        if warmed:
            break
        time.sleep(0.05)
    stop.set()
    thread.join(timeout=10)
    assert warmed == [stage_modules(stage_names())]
    assert storage.builds_again()


def test_reuse_or_make_caches_by_inputs_in_the_output_roots_cache(tmp_path: Path) -> None:
    from cardgen.outputs.reuse import reuse_or_make

    out_root = tmp_path / "output"
    out_dir = tmp_path / "elsewhere" / "game"  # (a rehearsal's folder: `build.warm_up`) the cache is the root's
    source = tmp_path / "input.txt"
    source.write_text("one")
    calls = []

    def make(path: Path) -> None:
        calls.append(path)
        path.write_text(source.read_text().upper())

    assert reuse_or_make(out_root, out_dir / "a.txt", ["letter", source], make, "cardgen.outputs.reuse")
    assert not reuse_or_make(out_root, out_dir / "b.txt", ["letter", source], make, "cardgen.outputs.reuse")
    assert (out_dir / "b.txt").read_text() == "ONE" and len(calls) == 1
    assert [path.read_text() for path in (out_root / ".cache" / "outputs").rglob("*.txt")] == ["ONE"]
    assert not (tmp_path / "elsewhere" / ".cache").exists()
    source.write_text("two")
    assert reuse_or_make(out_root, out_dir / "a.txt", ["letter", source], make, "cardgen.outputs.reuse")
    assert (out_dir / "a.txt").read_text() == "TWO"


def test_print_changed_since_holds_only_changed_cards(tiny_game: Path) -> None:
    import pypdf

    runner = CliRunner()
    args = ["--root", str(tiny_game)]
    assert runner.invoke(main, args + ["build", "-j", "1"]).exit_code == 0
    assert runner.invoke(main, args + ["snapshot", "tiny", "printed"]).exit_code == 0
    nothing = runner.invoke(main, args + ["print", "tiny", "--changed-since", "printed"])
    assert nothing.exit_code == 1 and "nothing to print" in nothing.output
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("NA,3,Plain,3", "NA,4,Plain,3"))  # 3 copies of one card changed
    assert runner.invoke(main, args + ["build", "-j", "1"]).exit_code == 0
    result = runner.invoke(main, args + ["print", "tiny", "--changed-since", "printed", "--duplex", "long-edge"])
    assert result.exit_code == 0, result.output
    assert "~ na: power 3 -> 4" in result.output
    pdf = tiny_game / "output" / "tiny" / "print" / "tiny-letter-changed-since-printed.pdf"
    reader = pypdf.PdfReader(pdf)
    assert len(reader.pages) == 2  # one front page with the 3 copies, one back page
    assert [len(page.images) for page in reader.pages] == [1, 1]  # one image XObject each: card, back
    assert reader.pages[0].extract_text().count("page 1 of 2") == 1
    content = reader.pages[0].get_contents().get_data().decode("latin-1")
    assert content.count(" Do") == 3  # the changed card drawn three times, once per copy


def _age_sources(root: Path) -> None:
    """Make every input file look older than the racy window, so that stamps are recorded for it."""
    old = time.time() - 10
    for path in root.rglob("*"):
        if path.is_file() and "output" not in path.parts:
            os.utime(path, (old, old))


def test_unchanged_files_skip_validation_and_planning(tiny_game: Path, monkeypatch) -> None:
    import cardgen.build.build

    _build(tiny_game)
    _age_sources(tiny_game)
    second = _build(tiny_game)  # same content: stamps are renewed, nothing drawn
    assert second.up_to_date and second.rendered == 0
    monkeypatch.setattr(cardgen.build.build, "plan_build", lambda *a: pytest.fail("planned although nothing changed"))
    third = _build(tiny_game)
    assert third.up_to_date
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Alpha,1", "Alpha,9"))  # same size, new time
    with pytest.raises(pytest.fail.Exception, match="planned"):
        _build(tiny_game)


def test_print_from_a_build_made_elsewhere(tiny_game: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    elsewhere = tmp_path / "elsewhere"
    assert runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1", "--out", str(elsewhere)]).exit_code == 0
    result = runner.invoke(main, ["--root", str(tiny_game), "print", "tiny", "--from", str(elsewhere),
                                  "--paper", "a4"])
    assert result.exit_code == 0, result.output
    assert "up to date" in result.output  # the build made elsewhere is used, not made again
    assert (elsewhere / "tiny" / "print" / "tiny-a4.pdf").is_file() and not (tiny_game / "output").exists()


def test_svg_cache_renders_only_what_changed(tiny_game: Path, monkeypatch) -> None:
    from cardgen.svg.templates import SVGRenderer

    renders: list[str] = []
    original = SVGRenderer.make

    def counting(self, template_name, key, deck, card):
        renders.append(key)
        return original(self, template_name, key, deck, card)

    monkeypatch.setattr(SVGRenderer, "make", counting)
    _build(tiny_game)
    assert sorted(renders) == ["alpha", "back.svg", "beta", "na"]
    renders.clear()
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Plain", "Plainer"))
    _build(tiny_game)
    assert renders == ["na"]  # validation rendered it once; the build reused that
    renders.clear()
    face = tiny_game / "templates" / "tiny" / "face.svg"
    face.write_text(face.read_text().replace("#ffffff", "#fffff0"))
    result = _build(tiny_game)
    assert sorted(renders) == ["alpha", "back.svg", "beta", "na"] and result.rendered == 3


def test_svg_cache_is_one_entry_per_game_holding_this_build_s_renders(tiny_game: Path, monkeypatch) -> None:
    """The rendered SVGs are kept as one sealed entry per game (not a file and a seal per card), holding the
    renders of the last build only; a damaged entry is not trusted: every card is rendered again."""
    from cardgen.svg.templates import SVGRenderer

    renders: list[str] = []
    original = SVGRenderer.make
    monkeypatch.setattr(SVGRenderer, "make", lambda self, name, key, deck, card: renders.append(key) or
                        original(self, name, key, deck, card))
    _build(tiny_game)
    entries = lambda: sorted((tiny_game / "output" / ".cache" / "svg").rglob("*.jsonl"))  # noqa: E731
    (entry,) = entries()
    assert len(entry.read_text().splitlines()) == 4  # three faces and a back
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Plain", "Plainer"))
    renders.clear()
    _build(tiny_game)
    assert renders == ["na"] and entries() == [entry] and len(entry.read_text().splitlines()) == 4
    entry.write_text(entry.read_text().replace("Plainer", "Tampered"))  # damaged: its seal no longer matches
    csv.write_text(csv.read_text().replace("Plainer", "Plain"))
    renders.clear()
    result = _build(tiny_game)
    assert sorted(renders) == ["alpha", "back.svg", "beta", "na"] and result.rendered == 0  # PNGs from the cache
    assert "Tampered" not in entry.read_text()


def test_cached_svg_with_a_deleted_image_is_an_error_not_a_crash(workspace: Path) -> None:
    from PIL import Image

    from cardgen.core.errors import CardgenError
    from tests.conftest import SIMPLE_BACK, SIMPLE_MANIFEST, write_game

    face = '<svg {{ geo.svg_attrs }}>{{ image(card.art, 0, 0, 100, 100) }}</svg>'
    data = write_game(workspace, "i", SIMPLE_MANIFEST, {"cards.csv": "name,art\nA,red.png\n"},
                      {"face.svg": face, "back.svg": SIMPLE_BACK})
    Image.new("RGB", (4, 4), "red").save(data / "red.png")
    build_game(workspace, "i", BuildOptions(workspace / "output", jobs=1))
    (data / "red.png").unlink()
    with pytest.raises(CardgenError, match="red.png"):
        build_game(workspace, "i", BuildOptions(workspace / "output", jobs=1))


HEAVY_LIBRARIES = {"pandas", "numpy", "pydantic", "cairosvg", "cairocffi", "reportlab", "PIL", "jinja2", "yaml"}


def test_no_change_command_loads_no_pipeline_library(tiny_game: Path) -> None:
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text() + "Spare,4,Not printed,0\n")  # a warning the fast path must repeat
    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    _age_sources(tiny_game)
    assert runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0  # stamps renewed
    code = ("import sys; from cardgen.commands.cli import main; "
            f"main(['--root', {str(tiny_game)!r}, 'build'], standalone_mode=False); "
            # not counted: cardgen's own stand-in for pydantic's plugin loader (cli._no_plugin_loader), no import
            "print(sorted({m.split('.')[0] for m in sys.modules if m != 'pydantic.plugin._loader'} & "
            + repr(HEAVY_LIBRARIES) + "))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "tiny: up to date (3 cards)" in done.stdout
    assert done.stdout.strip().endswith("[]"), done.stdout
    assert "'spare' has 0 copies" in done.stderr


def test_a_build_that_draws_nothing_imports_no_network_code_and_scans_no_plugins(tiny_game: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).exit_code == 0
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text())  # read again, validated, planned: the same cards, nothing to draw
    code = ("import sys; from cardgen.commands.cli import main; "
            f"main(['--root', {str(tiny_game)!r}, 'build'], standalone_mode=False); "
            "print('jinja2' in sys.modules, sorted({'urllib.request', 'http.client', 'ssl'} & set(sys.modules)), "
            "'pydantic' in sys.modules, 'importlib.metadata' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"})
    assert "tiny: up to date" in done.stdout and "built" not in done.stdout
    # validated and planned (templates loaded, models built), without the network modules, and pydantic never
    # looked for plugins: not even importlib.metadata, which its loader imports to look
    assert done.stdout.strip().endswith("True [] True False"), done.stdout


def test_pydantic_plugins_are_loaded_when_a_user_turns_them_on(tmp_path: Path) -> None:
    # a plugin on the path, declared as an entry point in pydantic's group, counts the models it sees
    site = tmp_path / "site"
    (site / "counting-1.0.dist-info").mkdir(parents=True)
    (site / "counting-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: counting\nVersion: 1.0\n")
    (site / "counting-1.0.dist-info" / "entry_points.txt").write_text("[pydantic]\ncounting = counting:plugin\n")
    (site / "counting.py").write_text("seen = []\n"
                                      "class Plugin:\n"
                                      "    def new_schema_validator(self, schema, schema_type, *args):\n"
                                      "        seen.append(schema_type.__name__)\n"
                                      "        return None, None, None\n"
                                      "plugin = Plugin()\n")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import cardgen.commands.cli; "
            "from cardgen.record.record import BuildRecord; import counting; print('BuildRecord' in counting.seen)")
    for setting, seen in (("", "True"), (None, "False"), ("__all__", "False")):
        env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
        if setting is not None:
            env["PYDANTIC_DISABLE_PLUGINS"] = setting
        done = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == seen, (setting, done.stdout)


def test_touched_build_record_or_stamps_are_rebuilt_not_trusted(tiny_game: Path) -> None:
    runner = CliRunner()
    runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"])
    _age_sources(tiny_game)
    runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"])
    out = tiny_game / "output" / "tiny"
    record, stamps = (out / "build.json").read_text(), (out / ".build-stamps.json").read_text()
    no_cards = json.dumps({k: v for k, v in json.loads(record).items() if k != "cards"})
    nonsense = json.dumps({**json.loads(stamps), "warnings": [{"nonsense": 1}]})
    for file, broken in (("build.json", no_cards), ("build.json", "[1, 2"), (".build-stamps.json", "{"),
                         (".build-stamps.json", nonsense)):
        (out / file).write_text(broken)
        result = runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"])
        assert result.exit_code == 0, result.output
        if file == "build.json":  # a record not as the build wrote it is never trusted: built again
            assert "up to date" not in result.output and "drawn" in result.output
        assert len(json.loads((out / "build.json").read_text())["cards"]) == 3
        assert json.loads((out / ".build-stamps.json").read_text())["cards"] == 3
        assert "up to date" in runner.invoke(main, ["--root", str(tiny_game), "build", "-j", "1"]).output


def test_stage_names_match_the_stages() -> None:
    from cardgen.outputs import stage_class, stage_names

    assert [stage_class(name).name for name in stage_names()] == stage_names()


def test_a_watch_collects_a_rebuilds_garbage_once_it_is_done_and_freezes_what_it_keeps(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a watch, the garbage collector's full passes do not walk the state kept between rebuilds over and over (at
    10,000 cards ~1 s of every edit): after each rebuild the watch collects its garbage and freezes what is left
    (`watch._settled`), full passes wait for many more passes of the middle generation (FULL_PASSES_AFTER), and the
    young passes for many more objects (`watch.YOUNG_OBJECTS`: an edit's kept structures are not walked by passes
    during it). Once the watch stops, the collector is as it was."""
    import gc
    import weakref

    from cardgen.build import watch
    from cardgen.core import storage

    monkeypatch.setattr(storage, "BUILDS_AGAIN", threading.Event())
    before = gc.get_threshold()
    seen: list[tuple] = []

    class Cycle:
        """Garbage only the collector frees (a reference to itself)."""

        def __init__(self) -> None:
            self.me = self

    def rebuild(names: list[str]) -> None:
        if seen:  # the second rebuild: the first's garbage is gone, the kept state frozen
            seen.append((seen[0][0](), gc.get_freeze_count(), gc.get_threshold()))
            stop.set()
            return
        garbage = Cycle()
        seen.append((weakref.ref(garbage),))
        del garbage

    stop = threading.Event()
    thread = threading.Thread(target=watch.watch_games, args=(tiny_game, ["tiny"], rebuild, stop, 0.1, True),
                              daemon=True)
    thread.start()
    time.sleep(0.5)  # the first rebuild, and the observer started
    csv = tiny_game / "data" / "tiny" / "cards.csv"
    csv.write_text(csv.read_text().replace("Alpha,1", "Alpha,9"))
    thread.join(timeout=20)
    assert not thread.is_alive() and len(seen) == 2
    gone, frozen, thresholds = seen[1]
    assert gone is None and frozen > 0 and thresholds[2] == watch.FULL_PASSES_AFTER
    assert thresholds[0] >= watch.YOUNG_OBJECTS  # an edit's young passes wait
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
