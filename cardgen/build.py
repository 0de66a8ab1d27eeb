"""The build pipeline of one game: manifest -> cards -> SVG -> PNG (cached) -> outputs, swapped in atomically."""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cardgen.changes import Changes, diff_records
from cardgen.context import BuildContext
from cardgen.errors import CardgenError, Problem
from cardgen.fonts import configure_fontconfig
from cardgen.freshness import current_build, outputs_intact, seal_outputs, settings_key, source_stamp
from cardgen.manifest import Game
from cardgen.ownership import (
    check_game_name,
    check_output_root,
    make_staging,
    mark,
    output_lock,
    refuse_foreign,
    remove_ours,
)
from cardgen.plan import BuildPlan, draw_plan, place_card_files, plan_build, record_of
from cardgen.progress import Reporter, SilentReporter
from cardgen.record import BuildRecord
from cardgen.storage import cache_root, swap_into_place
from cardgen.validate.findings import unique


@dataclass
class BuildOptions:
    """How to build: where outputs go, how many processes, whether to keep SVGs."""

    out_root: Path
    jobs: int = os.cpu_count() or 1
    keep_svg: bool = False
    force: bool = False  # build even when validation finds errors


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
    findings: list[Problem]  # warnings, and the errors of a forced build
    changes: Changes | None = None
    up_to_date: bool = False


# An output stage takes the game, its build record and the (staging) output folder, and writes files.
OutputStage = Callable[[Game, BuildRecord, Path], None]


def build_fingerprint(record: BuildRecord, game: Game, options: BuildOptions, stages: list[OutputStage]) -> str:
    """A hash of everything a build's outputs depend on: cards, images, manifest, options and stages."""
    stable = record.model_dump(mode="json", exclude={"built_at", "stats", "fingerprint", "settings", "sources",
                                                     "warnings"})
    digest = hashlib.sha256(json.dumps(stable, sort_keys=True, default=str).encode())
    for manifest in game.manifest_files:
        digest.update(manifest.read_bytes())
    digest.update(f"{options.keep_svg}|{[getattr(s, '__qualname__', repr(s)) for s in stages]}".encode())
    return digest.hexdigest()[:32]


def _up_to_date(name: str, final: Path, record: BuildRecord, started: float,
                changes: Changes | None = None) -> BuildResult:
    stats = record.stats
    return BuildResult(name, final, stats.cards, stats.copies, 0, stats.rendered + stats.cached,
                       time.perf_counter() - started, list(record.warnings), changes, up_to_date=True)


def build_game(root: Path, name: str, options: BuildOptions, reporter: Reporter | None = None,
               stages: list[OutputStage] | None = None) -> BuildResult:
    """Build one game into `<out_root>/<name>/`; the previous output stays until the new one is complete.

    When no file the last build read has changed (sizes and times), nothing is validated, drawn or
    written; when files changed but what they make did not, only build.json's file stamps are renewed.
    """
    started = time.perf_counter()
    check_output_root(root, options.out_root)
    final = options.out_root / check_game_name(name)
    with output_lock(options.out_root):  # one build per output root at a time
        for folder in (final, cache_root(options.out_root)):  # before any work: what a build replaces is ours
            refuse_foreign(folder)
        try:
            return _build(root, name, options, reporter, stages or [], started)
        except OSError as exc:  # a full disk, a folder made read-only meanwhile: the previous output stays
            where = f" ({exc.filename})" if exc.filename else ""
            raise CardgenError(f"cannot write the build: {exc.strerror or exc}{where}; the previous output is "
                               "left as it was", file=str(final)) from None


def _build(root: Path, name: str, options: BuildOptions, reporter: Reporter | None, stages: list[OutputStage],
           started: float) -> BuildResult:
    """The build of one game, holding the output root's lock."""
    from cardgen.validate import check_output_folder, validate_context

    final = options.out_root / name
    previous = BuildRecord.previous(final)
    stage_names = [getattr(stage, "__qualname__", repr(stage)) for stage in stages]
    settings = settings_key(options.keep_svg, options.force, stage_names)
    if previous is not None and current_build(final, root, name, settings) is not None:
        return _up_to_date(name, final, previous, started)
    configure_fontconfig([root / "fonts"])
    check_output_folder(options.out_root)
    # Stamped before anything is read: a file edited during the build then differs from its stamp, and
    # the next build sees the edit (stamped after, the build would record what it never read).
    read_from = source_stamp(root, name, recording=True)
    context = BuildContext.load(root, name, options.out_root)
    findings = validate_context(context)
    mark(cache_root(options.out_root))
    plan = plan_build(context, findings, options.force)
    plan.findings = unique(findings, [w for w in plan.findings if w.rule != "text-overflow"])
    record = record_of(plan)
    record.fingerprint = build_fingerprint(record, plan.game, options, stages)
    used = {f.relative_to(root.resolve()).as_posix() for a in [*plan.faces.values(), *plan.backs.values()]
            for f in a.rendered.files} | set(plan.game.files_elsewhere())
    record.settings = settings
    record.sources = {**source_stamp(root, name, sorted(used), recording=True), **read_from}
    record.warnings = plan.findings
    changes = diff_records(previous, record) if previous else None
    if previous and previous.fingerprint == record.fingerprint and outputs_intact(final):
        previous = previous.model_copy(update={"settings": settings, "sources": record.sources,
                                               "warnings": record.warnings})
        previous.save(final)
        seal_outputs(final)
        return _up_to_date(name, final, previous, started, changes)
    from cardgen.outputs import card_work

    work = card_work(stages or [], plan.game, record, options.out_root)
    rendered, cached = draw_plan(plan, options.jobs, reporter or SilentReporter(), work)
    record.stats.rendered, record.stats.cached = rendered, cached
    _write_outputs(plan, record, options, stages, final)
    return BuildResult(name, final, len(plan.cards), record.stats.copies, rendered, cached,
                       time.perf_counter() - started, plan.findings, changes)


def _write_outputs(plan: BuildPlan, record: BuildRecord, options: BuildOptions, stages: list[OutputStage],
                   final: Path) -> None:
    """Write card files and every output stage into a staging folder, then swap it into place."""
    staging = make_staging(options.out_root, final.name)
    try:
        place_card_files(plan, record, staging, options.keep_svg)
        for stage in stages:
            stage(plan.game, record, staging)
        seal_outputs(staging)
        swap_into_place(staging, final)
    except OSError as exc:
        raise CardgenError(f"cannot write the output: {exc}", file=str(final)) from None
    finally:
        remove_ours(staging)
