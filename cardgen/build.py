"""The build pipeline of one game: manifest -> cards -> SVG -> PNG (cached) -> outputs, swapped in atomically."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from cardgen.changes import Changes, diff_records
from cardgen.data import Card, load_cards
from cardgen.errors import CardgenError, Problem
from cardgen.fonts import FontBook, configure_fontconfig
from cardgen.freshness import is_current, settings_key, source_stamp
from cardgen.icons import IconLibrary
from cardgen.manifest import Game, load_game
from cardgen.ownership import check_game_name, check_output_root, make_staging, mark, refuse_foreign, remove_ours
from cardgen.render import RasterJob, content_key, run_jobs
from cardgen.storage import Cache, cache_root, swap_into_place, write_json
from cardgen.templates import RenderedSVG, SVGCache, SVGRenderer


class Reporter(Protocol):
    """Where the pipeline reports progress; the CLI supplies a rich or a plain one."""

    def start(self, label: str, total: int) -> None:
        """Begin a phase of `total` items."""

    def advance(self) -> None:
        """One item of the phase is done."""

    def finish(self) -> None:
        """The phase is over."""


class SilentReporter:
    """A reporter that says nothing (tests, library use)."""

    def start(self, label: str, total: int) -> None:
        """Begin a phase."""

    def advance(self) -> None:
        """One item done."""

    def finish(self) -> None:
        """Phase over."""


@dataclass
class BuildOptions:
    """How to build: where outputs go, how many processes, whether to keep SVGs."""

    out_root: Path
    jobs: int = os.cpu_count() or 1
    keep_svg: bool = False
    force: bool = False  # build even when validation finds errors


@dataclass
class Artwork:
    """One image to produce: a card face or a distinct back, its SVG and its cache file."""

    name: str
    rendered: RenderedSVG
    deck: str
    key: str
    cache_path: Path


@dataclass
class BuildPlan:
    """What a game's build draws: faces per card id, backs per name, plus the game and its cards."""

    game: Game
    cards: list[Card]
    faces: dict[str, Artwork] = field(default_factory=dict)
    backs: dict[str, Artwork] = field(default_factory=dict)
    card_back: dict[str, str | None] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)


@dataclass
class BuildResult:
    """What a build did, for the CLI to report."""

    name: str
    out_dir: Path
    cards: int
    copies: int
    rendered: int
    cached: int
    seconds: float
    warnings: list[Problem]
    changes: Changes | None = None
    up_to_date: bool = False


# An output stage takes the game, its build record and the (staging) output folder, and writes files.
OutputStage = Callable[[Game, dict, Path], None]


def png_cache(out_root: Path) -> Cache:
    """The content-addressed cache of drawn card images, shared by all games of an output root."""
    return Cache(out_root, "png", ".png")


def plan_build(root: Path, name: str, out_root: Path, rendered: dict | None = None) -> BuildPlan:
    """Load a game and render every face and distinct back to SVG; nothing is drawn yet.

    `rendered` holds SVGs rendered already (by validation), keyed by (template, deck, card id or None).
    """
    game = load_game(root, name)
    cards = load_cards(game)
    fonts = FontBook(root / "fonts")
    icons = IconLibrary(root, game.spec.icons)
    renderer = SVGRenderer(game, fonts, icons, rendered, SVGCache(out_root, game))
    plan = BuildPlan(game, [c for c in cards if c.copies > 0])
    for card in cards:
        if card.copies == 0:
            plan.warnings.append(Problem(f"card '{card.id}' has 0 copies; it is left out of the build",
                                         file=card.source_file, row=card.source_row, severity="warning"))
    problems: list[Problem] = []
    for card in plan.cards:
        try:
            plan.faces[card.id] = _artwork(card.id, renderer.render(card.face_template, card.id, card.deck, card),
                                           game, card.deck, fonts, out_root)
            plan.card_back[card.id] = _plan_back(plan, renderer, card, fonts, out_root)
        except CardgenError as exc:
            problems += exc.problems
    if problems:
        raise CardgenError(problems)
    for art in [*plan.faces.values(), *plan.backs.values()]:
        plan.warnings += art.rendered.warnings
    return plan


def _plan_back(plan: BuildPlan, renderer: SVGRenderer, card: Card, fonts: FontBook, out_root: Path) -> str | None:
    """Render a card's back once per (deck, template) and share it by content."""
    if card.back_template is None:
        return None
    stem = Path(card.back_template).stem
    for name, art in plan.backs.items():
        if art.deck == card.deck and art.rendered.key == card.back_template:
            return name
    rendered = renderer.render(card.back_template, card.back_template, card.deck, None)
    art = _artwork(stem, rendered, plan.game, card.deck, fonts, out_root)
    for name, existing in plan.backs.items():
        if existing.key == art.key:
            return name
    name = stem if stem not in plan.backs else f"{stem}-{card.deck}"
    art.name = name
    plan.backs[name] = art
    return name


def _artwork(name: str, rendered: RenderedSVG, game: Game, deck: str, fonts: FontBook, out_root: Path) -> Artwork:
    from cardgen.fonts import families_in_svg

    size = game.deck_size(game.spec.decks[deck])
    font_files = [f for family in families_in_svg(rendered.svg) for f in fonts.files_for(family)]
    kind = game.spec.decks[deck].kind  # tokens and boards keep transparency: part of the key
    key = content_key(rendered.svg + kind, size.full_width_px, size.full_height_px, size.dpi,
                      [*rendered.files, *font_files])
    return Artwork(name, rendered, deck, key, png_cache(out_root).path(key))


def draw_plan(plan: BuildPlan, options: BuildOptions, reporter: Reporter) -> tuple[int, int]:
    """Draw every artwork missing from the cache; return (rendered, cached)."""
    game = plan.game
    arts = {a.key: a for a in [*plan.faces.values(), *plan.backs.values()]}
    todo = [a for a in arts.values() if not a.cache_path.is_file()]
    jobs = []
    for art in todo:
        size = game.deck_size(game.spec.decks[art.deck])
        jobs.append(RasterJob(art.key, art.rendered.svg, size.full_width_px, size.full_height_px, size.dpi,
                              str(game.root.resolve()), game.data_dir.resolve().as_uri() + "/",
                              str(art.cache_path), (str((game.root / "fonts").resolve()),),
                              game.spec.decks[art.deck].kind != "card"))
    problems: list[Problem] = []

    def done(key: str, error: str | None) -> None:
        reporter.advance()
        if error:
            art = arts[key]
            card = next((c for c in plan.cards if c.id == art.name), None)
            problems.append(Problem(f"{'card ' + repr(card.id) if card else 'back ' + repr(art.name)}: {error}",
                                    file=card.source_file if card else None, row=card.source_row if card else None))

    run_jobs(jobs, options.jobs, done, lambda: reporter.start(f"{game.name}: drawing", len(jobs)))
    reporter.finish()
    if problems:
        raise CardgenError(problems)
    return len(jobs), len(arts) - len(jobs)


def build_fingerprint(record: dict, game: Game, options: BuildOptions, stages: list[OutputStage]) -> str:
    """A hash of everything a build's outputs depend on: cards, images, manifest, options and stages."""
    stable = {k: v for k, v in record.items()
              if k not in ("built_at", "stats", "fingerprint", "settings", "sources", "warnings")}
    digest = hashlib.sha256(json.dumps(stable, sort_keys=True, default=str).encode())
    digest.update(game.manifest_path.read_bytes())
    digest.update(f"{options.keep_svg}|{[getattr(s, '__qualname__', repr(s)) for s in stages]}".encode())
    return digest.hexdigest()[:32]


def _up_to_date(name: str, final: Path, record: dict, started: float, changes: Changes | None = None) -> BuildResult:
    stats = record["stats"]
    warnings = [Problem(**w) for w in record.get("warnings", [])]
    return BuildResult(name, final, stats["cards"], stats["copies"], 0, stats["rendered"] + stats["cached"],
                       time.perf_counter() - started, warnings, changes, up_to_date=True)


def build_game(root: Path, name: str, options: BuildOptions, reporter: Reporter | None = None,
               stages: list[OutputStage] | None = None) -> BuildResult:
    """Build one game into `<out_root>/<name>/`; the previous output stays until the new one is complete.

    When no file the last build read has changed (sizes and times), nothing is validated, drawn or
    written; when files changed but what they make did not, only build.json's file stamps are renewed.
    """
    from cardgen.outputs.cards import card_record, read_previous_record
    from cardgen.validate import validate_before_build

    started = time.perf_counter()
    check_output_root(root, options.out_root)
    final = options.out_root / check_game_name(name)
    for folder in (final, cache_root(options.out_root)):  # before any work: what a build replaces is cardgen's
        refuse_foreign(folder)
    previous = read_previous_record(final)
    stage_names = [getattr(stage, "__qualname__", repr(stage)) for stage in stages or []]
    settings = settings_key(options.keep_svg, options.force, stage_names)
    if is_current(previous, root, name, settings):
        return _up_to_date(name, final, previous, started)  # type: ignore[arg-type]
    configure_fontconfig([root / "fonts"])
    svgs: dict = {}
    findings = validate_before_build(root, name, options.out_root, options.force, svgs)
    mark(cache_root(options.out_root))
    plan = plan_build(root, name, options.out_root, svgs)
    plan.warnings = list(dict.fromkeys([*findings, *(w for w in plan.warnings if w.rule != "text-overflow")]))
    record = card_record(plan, 0, 0)
    record["fingerprint"] = build_fingerprint(record, plan.game, options, stages or [])
    used = {f.relative_to(root.resolve()).as_posix() for a in [*plan.faces.values(), *plan.backs.values()]
            for f in a.rendered.files}
    record.update(settings=settings, sources=source_stamp(root, name, sorted(used), recording=True),
                  warnings=[dataclasses.asdict(w) for w in plan.warnings])
    changes = diff_records(previous, record) if previous else None
    if previous and previous.get("fingerprint") == record["fingerprint"]:
        previous.update(settings=settings, sources=record["sources"], warnings=record["warnings"])
        write_json(final / "build.json", previous)
        return _up_to_date(name, final, previous, started, changes)
    rendered, cached = draw_plan(plan, options, reporter or SilentReporter())
    record["stats"].update(rendered=rendered, cached=cached)
    _write_outputs(plan, record, options, stages or [], final)
    return BuildResult(name, final, len(plan.cards), record["stats"]["copies"], rendered, cached,
                       time.perf_counter() - started, plan.warnings, changes)


def _write_outputs(plan: BuildPlan, record: dict, options: BuildOptions, stages: list[OutputStage],
                   final: Path) -> None:
    """Write card files and every output stage into a staging folder, then swap it into place."""
    from cardgen.outputs.cards import write_card_files

    staging = make_staging(options.out_root, final.name)
    try:
        write_card_files(plan, record, staging, options.keep_svg)
        for stage in stages:
            stage(plan.game, record, staging)
        swap_into_place(staging, final)
    except OSError as exc:
        raise CardgenError(f"cannot write the output: {exc}", file=str(final)) from None
    finally:
        remove_ours(staging)

