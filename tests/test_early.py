"""A rebuild's edited card drawn by the render worker while the game is still validated (`cardgen/build/early.py`)."""
from __future__ import annotations

import hashlib
import json
import os
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable

import pytest
from PIL import Image

from cardgen.build.build import BuildOptions, build_game
from cardgen.core.errors import CardgenError
from cardgen.core.storage import verify
from cardgen.outputs import stage_names
from cardgen.raster import render
from cardgen.raster.pool import RenderPool, started_workers
from cardgen.raster.render import Drawing, RasterJob, run_job

_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect width="120" height="80" fill="#f80"/>'
        '<circle cx="60" cy="40" r="30" fill="#08f"/></svg>')


def test_a_card_drawn_early_is_kept_for_the_job_that_brings_its_work(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker keeps the card it drew for a `keep` job (its PNG sealed in the cache at once); the job of that key
    that brings the stages' work does the work on that card without drawing it again, and lets it go."""
    drawing = Drawing(_SVG, 120, 80, 96, str(tmp_path), tmp_path.as_uri() + "/", ())
    target = tmp_path / "card.png"
    assert run_job(RasterJob("k", drawing, str(target), keep=True)) == ("k", None)
    assert verify(target)
    drawn_again: list[Path] = []
    monkeypatch.setattr(Drawing, "draw", lambda self, path: drawn_again.append(path))
    seen: list[bytes] = []
    job = RasterJob("k", drawing, str(target), work=(lambda card: seen.append(card.image.tobytes()),))
    assert run_job(job) == ("k", None)
    assert drawn_again == []
    with Image.open(target) as stored:
        assert seen == [stored.convert("RGB").tobytes()]
    assert "k" not in render._KEPT


def _edit(root: Path, old: str, new: str) -> None:
    cards = root / "data" / "tiny" / "cards.csv"
    cards.write_text(cards.read_text().replace(old, new))


class _Spy:
    """Notes, in order, the jobs a build sends its render workers and when it validates and plans; `settle` makes
    the plan wait until every job sent before it is done (an early drawing done before the plan looks its card up)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, settle: bool) -> None:
        import cardgen.build.build
        import cardgen.validate

        self.events: list[tuple[str, str]] = []
        self.futures: list[Future[Any]] = []
        submit, plan = RenderPool.submit, cardgen.build.build.plan_build
        validate = cardgen.validate.validate_context

        def noted_validate(*args: Any, **kwargs: Any) -> Any:
            self.events.append(("validate", ""))
            return validate(*args, **kwargs)

        def noted_submit(pool: RenderPool, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
            for job in (args[0] if args and isinstance(args[0], list) else args[:1]):  # a job, or a batch
                if isinstance(job, RasterJob):
                    self.events.append(("keep" if job.keep else "job", job.key))
            self.futures.append(submit(pool, fn, *args, **kwargs))
            return self.futures[-1]

        def noted_plan(*args: Any, **kwargs: Any) -> Any:
            if settle:
                for future in list(self.futures):
                    future.result()
            self.events.append(("plan", ""))
            return plan(*args, **kwargs)

        monkeypatch.setattr(RenderPool, "submit", noted_submit)
        monkeypatch.setattr(cardgen.build.build, "plan_build", noted_plan)
        monkeypatch.setattr(cardgen.validate, "validate_context", noted_validate)


def _count_drawings(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Callable[[], int]:
    """Make every card drawing (in this process or a worker forked from it) leave a file in `folder`; return what
    counts them."""
    folder.mkdir()
    draw = Drawing.draw

    def counted(self: Drawing, path: Path) -> Any:
        (folder / f"{os.getpid()}-{threading.get_ident()}-{len(os.listdir(folder))}").touch()
        return draw(self, path)

    monkeypatch.setattr(Drawing, "draw", counted)
    return lambda: len(os.listdir(folder))


@pytest.mark.parametrize("settle", [False, True])
def test_a_rebuild_draws_its_edited_card_while_validating(tiny_game: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, settle: bool) -> None:
    """An edit's card goes to the rebuild's render worker before the game is validated (rendered first, the layout
    check then takes its render); it is
    drawn once (the plan's job brings the stages' work on the card the worker kept), counted as drawn whether or not
    its drawing was done before the plan looked it up, and the outputs are a cold build's of the edited game."""
    out = tiny_game / "output"
    options = BuildOptions(out, jobs=2)
    build_game(tiny_game, "tiny", options, stages=stage_names())
    _edit(tiny_game, "Plain", "Plainer")
    drawings = _count_drawings(monkeypatch, tmp_path / "drawings")
    spy = _Spy(monkeypatch, settle)
    with started_workers(2, 1) as workers:
        assert workers is not None  # (none while another thread runs: the builds before leave none)
        result = build_game(tiny_game, "tiny", options, stages=stage_names(), workers=workers)
    record = json.loads((out / "tiny" / "build.json").read_text())
    edited = next(card["hash"] for card in record["cards"] if card["id"] == "na")
    assert spy.events == [("keep", edited), ("validate", ""), ("plan", ""), ("job", edited)]
    assert (result.rendered, drawings()) == (1, 1)

    cold = tmp_path / "cold"
    build_game(tiny_game, "tiny", BuildOptions(cold, jobs=1), stages=stage_names())
    for relative in ("cards/main/na.png", "cards/main/alpha.png"):
        assert (out / "tiny" / relative).read_bytes() == (cold / "tiny" / relative).read_bytes(), relative
    sheets = sorted((out / "tiny" / "tts").glob("*.jpg"))
    assert sheets
    assert [hashlib.sha256(p.read_bytes()).hexdigest() for p in sheets] == \
        [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((cold / "tiny" / "tts").glob("*.jpg"))]


def test_a_watchs_rebuild_looks_only_at_its_changed_cards_for_the_early_drawing(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that builds again, the faces rendered before validating (for the worker to draw early) are looked
    for among the cards the game's last layout check did not have (an edit's), not among every card; after a
    template edit every card is looked at again. The edited card goes first either way."""
    from cardgen.core import storage
    from cardgen.load import data
    from cardgen.svg.templates import SVGRenderer

    storage.keep_for_next_builds()
    data.remember_rows()
    options = BuildOptions(tiny_game / "output", jobs=2)
    build_game(tiny_game, "tiny", options, stages=stage_names())
    spy = _Spy(monkeypatch, settle=False)
    kept = SVGRenderer.kept

    def noted_kept(renderer: SVGRenderer, template: str, deck: str, card: Any) -> bool:
        spy.events.append(("looked at", card.id if card is not None else template))
        return kept(renderer, template, deck, card)

    monkeypatch.setattr(SVGRenderer, "kept", noted_kept)
    face = tiny_game / "templates" / "tiny" / "face.svg"
    for edit, looked in ((lambda: _edit(tiny_game, "Plain", "Plainer"), ["na"]),
                         (lambda: face.write_text(face.read_text().replace("#ffffff", "#fffffe")),
                          ["alpha", "beta", "na"])):
        edit()
        spy.events.clear()
        with started_workers(2, 1) as workers:
            assert workers is not None
            build_game(tiny_game, "tiny", options, stages=stage_names(), workers=workers)
        before = spy.events[:spy.events.index(("validate", ""))]
        assert [card for kind, card in before if kind == "looked at"] == looked
        assert [kind for kind, _ in before if kind != "looked at"][:1] == ["keep"]


def test_an_edit_that_fails_validation_leaves_its_early_drawing_in_the_cache_only(
        tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A card drawn while validating goes into the PNG cache, never into the output: a rebuild whose validation then
    fails leaves the previous build as it was, the new card's image sealed in the cache for the next build."""
    out = tiny_game / "output"
    options = BuildOptions(out, jobs=2)
    build_game(tiny_game, "tiny", options, stages=stage_names())
    before = {p: p.read_bytes() for p in (out / "tiny").rglob("*") if p.is_file()}
    _edit(tiny_game, "Plain", "Plainer")
    _edit(tiny_game, "Alpha,1,", "Alpha,one,")  # power is an int: a data error
    spy = _Spy(monkeypatch, settle=False)
    with started_workers(2, 1) as workers:
        assert workers is not None
        with pytest.raises(CardgenError, match="power"):
            build_game(tiny_game, "tiny", options, stages=stage_names(), workers=workers)
    assert [kind for kind, _ in spy.events] == ["keep", "validate", "plan"]
    assert {p: p.read_bytes() for p in (out / "tiny").rglob("*") if p.is_file()} == before
    assert [p.name for p in out.iterdir() if p.name.startswith(".tiny")] == []  # no staging folder left
    drawn = spy.events[0][1]
    assert verify(out / ".cache" / "png" / drawn[:2] / f"{drawn}.png")


def test_an_edit_that_breaks_the_template_says_what_validation_says(tiny_game: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Rendering an edit's faces first tries at most EARLY_AT_MOST renders (a template broken for every card costs
    no render a card more), and the build says what it says without a render worker."""
    from cardgen.build.early import EARLY_AT_MOST
    from cardgen.svg.templates import SVGRenderer

    with (tiny_game / "data" / "tiny" / "cards.csv").open("a") as cards:
        cards.writelines(f"Extra {n},{n},Text {n},1\n" for n in range(3 * EARLY_AT_MOST))
    out = tiny_game / "output"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), stages=stage_names())
    face = tiny_game / "templates" / "tiny" / "face.svg"
    face.write_text(face.read_text().replace("{{ geo.width }}", "{{ geo.width + 'x' }}"))
    made: list[str] = []  # the templates rendered
    make = SVGRenderer.make
    monkeypatch.setattr(SVGRenderer, "make", lambda self, *args: made.append(args[0]) or make(self, *args))
    with started_workers(2, 1) as workers:
        assert workers is not None
        with pytest.raises(CardgenError) as early:
            build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), stages=stage_names(), workers=workers)
    faces_early = made.count("face.svg")  # (faces only: the back, made again by this build, is kept for the next)
    made.clear()
    with pytest.raises(CardgenError) as alone:  # one job: no render worker, nothing drawn early
        build_game(tiny_game, "tiny", BuildOptions(out, jobs=1), stages=stage_names())
    assert str(early.value) == str(alone.value) and "face.svg" in str(alone.value)
    assert made.count("face.svg") < faces_early <= made.count("face.svg") + EARLY_AT_MOST


def test_the_cards_drawn_early_are_handed_out_first(tiny_game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A template edit draws every card: those drawn early go first, to the one worker started, which kept them (a
    worker let go for the many jobs would draw them again), though a deck of larger cards comes after them."""
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text().replace("icons:", "  big:\n    source: big.csv\n    face: face.svg\n"
                                                     "    size: tarot\nicons:", 1))  # the last deck
    (tiny_game / "data" / "tiny" / "big.csv").write_text("name,power,text,count\nGiant,9,Large,1\nTitan,8,Huge,1\n")
    out = tiny_game / "output"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), stages=stage_names())
    face = tiny_game / "templates" / "tiny" / "face.svg"
    face.write_text(face.read_text().replace("#ffffff", "#fffffe"))
    spy = _Spy(monkeypatch, settle=False)
    with started_workers(2, 1) as workers:
        assert workers is not None
        build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), stages=stage_names(), workers=workers)
    early = [key for kind, key in spy.events if kind == "keep"]
    jobs = [key for kind, key in spy.events if kind == "job"]
    assert len(early) == 4 and len(jobs) == 5 and set(jobs[:4]) == set(early)


def test_a_rebuild_lets_its_workers_end_while_it_is_put_in_place(tiny_game: Path) -> None:
    """Once every stage is done, the rebuild's render workers end while build.json is written and the files are
    moved into place: when the build returns, none is running and no thread waits for them (a thread left running
    would make the command's exit Python's slower one)."""
    import multiprocessing

    out = tiny_game / "output"
    build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), stages=stage_names())
    _edit(tiny_game, "Plain", "Plainer")
    with started_workers(2, 1) as workers:
        assert workers is not None and len(multiprocessing.active_children()) == 2
        assert build_game(tiny_game, "tiny", BuildOptions(out, jobs=2), stages=stage_names(),
                          workers=workers).rendered == 1
        assert (multiprocessing.active_children(), threading.active_count()) == ([], 1)
