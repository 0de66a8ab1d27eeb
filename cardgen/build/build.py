"""The build pipeline of one game: manifest -> cards -> SVG -> PNG (cached) -> outputs, swapped in atomically."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from cardgen.build.early import drawn_early
from cardgen.build.plan import BuildPlan, CardFiles, draw_plan, files_drawn, plan_build, record_of
from cardgen.core.cachebound import built, noting
from cardgen.core.errors import CardgenError, Problem
from cardgen.core.ownership import (
    check_game_name,
    check_output_root,
    discard,
    make_staging,
    mark,
    output_lock,
    refuse_foreign,
)
from cardgen.core.progress import Reporter, SilentReporter
from cardgen.core.storage import (
    Read,
    cache_root,
    noting_reads,
    rehearsing,
    write_spliced,
)
from cardgen.load.fonts import configure_fontconfig, keep_metrics
from cardgen.load.freshness import (
    PreviousOutputs,
    Stamp,
    current_build,
    outputs_intact,
    record_intact,
    seal_outputs,
    settings_key,
    source_stamp,
    with_read_digests,
)
from cardgen.load.manifest import Game
from cardgen.outputs import stage_modules, work_modules
from cardgen.outputs.stage import Stage, StageContext
from cardgen.raster.pool import RenderPool, started_workers
from cardgen.raster.render import CardWork
from cardgen.record.changes import Changes, diff_records
from cardgen.record.record import BUILD_RECORD, BuildRecord
from cardgen.svg.context import BuildContext
from cardgen.svg.templates import SVGCache, compile_ahead
from cardgen.validate.findings import unique


@dataclass
class BuildOptions:
    """How to build: where outputs go, how many processes, whether to keep SVGs."""

    out_root: Path
    jobs: int = os.cpu_count() or 1
    keep_svg: bool = False
    force: bool = False  # build despite errors, leaving out the cards they concern
    always: tuple[str, ...] = ()  # stages run whatever the manifest says (`build --pod`)
    draft: bool = False  # a missing image is drawn as a placeholder (`build --draft`)
    lang: str | None = None  # build the game in this one of its languages (`build --lang`)


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


# Output stages of a build: registered names (see cardgen.outputs) or stage objects.
StageChoice = Sequence[str | Stage]


def _stage_names(stages: StageChoice, options: BuildOptions) -> list[object]:
    """What the build settings record of the stages: their names, those run whatever the manifest says, and the
    language."""
    return [[s if isinstance(s, str) else s.name for s in stages], options.always, options.lang]


def select_stages(game: Game, stages: StageChoice, always: tuple[str, ...] = ()) -> list[Stage]:
    """The stage objects a build of a game runs: named ones with the game's options, when enabled (or always)."""
    from cardgen.outputs import requested, stage_class

    selected = []
    for choice in stages:
        if isinstance(choice, str) and choice not in always and not requested(choice, game):
            continue  # a stage not run is not imported either
        stage = stage_class(choice).for_game(game) if isinstance(choice, str) else choice
        if not isinstance(choice, str) or stage.enabled(game) or choice in always:
            selected.append(stage)
    return selected


def build_fingerprint(record: BuildRecord, game: Game, options: BuildOptions, stages: StageChoice) -> str:
    """A hash of everything a build's outputs depend on: cards, images, manifest, options, stages and the code that
    makes them (`bundled.code_digest` of this module and of the stages' modules)."""
    from cardgen.core.bundled import code_digest
    # The record's JSON as build.json holds it (pydantic's own JSON writer, in pieces: each card's by its digest,
    # which a long-running process made once for a card it built before, see `record.kept_piece`) less what says
    # nothing of the outputs
    digest = hashlib.sha256()
    for part in record.digest_parts(exclude={"built_at", "stats", "fingerprint", "settings", "sources", "warnings"}):
        digest.update(part)
    digest.update(game.settings_digest.encode())  # (as loaded: a save since is the next build's to see)
    # every stage's code, those run only on request too: an upgrade of one must remake its files
    modules = [*stage_modules(stages, on_request=True), *(type(s).__module__ for s in stages if not isinstance(s, str))]
    modules = [m for m in modules if m.split(".")[0] == "cardgen"]  # a stage of another package is not cardgen's code
    digest.update(f"{options.keep_svg}|{_stage_names(stages, options)}|{code_digest(__name__, *modules)}".encode())
    return digest.hexdigest()[:32]


def _up_to_date(name: str, final: Path, record: BuildRecord, started: float,
                changes: Changes | None = None) -> BuildResult:
    stats = record.stats
    return BuildResult(name, final, stats.cards, stats.copies, 0, stats.rendered + stats.cached,
                       time.perf_counter() - started, list(record.warnings), changes, up_to_date=True)


def build_game(root: Path, name: str, options: BuildOptions, reporter: Reporter | None = None,
               stages: StageChoice = (), workers: RenderPool | None = None) -> BuildResult:
    """Build one game into `<out_root>/<name>/`; the previous output stays until the new one is complete.

    When no file the last build read has changed (sizes and times), nothing is validated, drawn or
    written; when files changed but what they make did not, only build.json's file stamps are renewed.
    `workers` are render workers started for it already (see `build_cmd.build_one`); else they start here.
    """
    started = time.perf_counter()
    check_output_root(root, options.out_root)
    final = options.out_root / check_game_name(name)
    with output_lock(options.out_root):  # one build per output root at a time
        for folder in (final, cache_root(options.out_root)):  # before any work: what a build replaces is ours
            refuse_foreign(folder)
        try:
            return _build(root, name, options, reporter, stages, started, workers)
        except OSError as exc:  # a full disk, a folder made read-only meanwhile: the previous output stays
            where = f" ({exc.filename})" if exc.filename else ""
            raise CardgenError(f"cannot write the build: {exc.strerror or exc}{where}; the previous output is "
                               "left as it was", file=str(final)) from None


def _build(root: Path, name: str, options: BuildOptions, reporter: Reporter | None, stages: StageChoice,
           started: float, workers: RenderPool | None) -> BuildResult:
    """The build of one game, holding the output root's lock."""
    from cardgen.validate import check_output_folder

    build = _Build(root, name, options, reporter or SilentReporter(), stages, started)
    if build.previous is not None and current_build(build.final, root, name, build.settings) is not None:
        return _up_to_date(name, build.final, build.previous, started)
    check_output_folder(options.out_root)
    mark(cache_root(options.out_root))  # before the font metrics go in: a build that fails then leaves it ours
    keep_metrics(options.out_root)
    if workers is not None:
        return build.run(workers)
    configure_fontconfig([root / "fonts"])  # before the workers fork: they inherit it
    # The render workers start now and set cairosvg up on the other core while this process loads the game; on a
    # rebuild (mostly a card or two to draw) one of them, the others only if many jobs come (see RenderPool).
    early = 1 if build.previous is not None and not options.force else options.jobs
    # A first build's templates scanned and compiled by a worker while this process loads the game (none kept yet
    # most likely: see `_templates_ahead`)
    ahead = functools.partial(_templates_ahead, root, name, options.out_root) if build.previous is None else None
    with started_workers(options.jobs, early, work_modules(stages), ahead) as started_now:
        return build.run(started_now)


def _templates_ahead(root: Path, name: str, out_root: Path) -> None:
    """Scan a game's templates into its kept scans, then compile them into the user's cache, as a first build's
    render worker starts (`references.scan_ahead`, `templates.compile_ahead`)."""
    from cardgen.validate.references import scan_ahead

    scan_ahead(root, name, out_root)
    compile_ahead(root, root / "templates" / name)


def warm_up(root: Path, name: str, options: BuildOptions, stages: StageChoice = ()) -> None:
    """Load what the next edit of a built game reads, in a process that builds again (watch, serve) while it waits
    for a save: the game, its record, its rendered SVGs and the output stages' kept state, as the edit path loads
    them, without writing anything (a game never built is left to its first build; the stages of a game changed
    since its build, to its rebuild).

    Its reads take no lock: the next build checks every kept file against its stamps, as it does after a rebuild.
    """
    build = _Build(root, name, options, SilentReporter(), stages, time.perf_counter())
    if build.previous is None:
        return
    build.plan_cards()
    if build.makes_previous():
        build.rehearse()


@dataclass
class _Build:
    """One game's build as it goes through its phases (`run`): what it was asked, then what each phase made.

    It hears of the drawing (`plan.DrawListener`): card files are placed as their images are ready, and the output
    stages start once the workers have every job.
    """

    root: Path
    name: str
    options: BuildOptions
    reporter: Reporter
    stages: StageChoice
    started: float
    workers: RenderPool | None = None  # given by `run`
    final: Path = field(init=False)  # the game's output folder
    previous: BuildRecord | None = field(init=False)  # the last build's record, if any
    settings: str = field(init=False)  # the build settings' key (see `settings_key`)
    plan: BuildPlan = field(init=False)
    record: BuildRecord = field(init=False)
    changes: Changes | None = field(init=False)
    early: set[str] = field(init=False)  # the image keys drawn while validating (see `build.early`)
    renders: SVGCache | None = field(init=False, default=None)  # validation's and planning's (`keep_renders`)
    card_files: CardFiles = field(init=False)
    outputs: _OutputStages = field(init=False)
    made: dict[str, str] | None = field(init=False, default=None)  # its output files' content keys, once in place

    def __post_init__(self) -> None:
        self.final = self.options.out_root / self.name
        self.previous = BuildRecord.previous(self.final)
        options = self.options
        self.settings = settings_key(options.keep_svg, options.force, options.draft,
                                     *_stage_names(self.stages, options))

    def run(self, workers: RenderPool | None) -> BuildResult:
        """Load, validate, plan and draw the game (in `workers` when started), then write its outputs."""
        self.workers = workers
        noting()
        try:
            self.plan_cards()
            return self.keep_previous() or self.write()
        finally:
            self.keep_renders()
            built(self.options.out_root, self.name, self.made)  # (nothing when it wrote nothing)

    def keep_renders(self) -> None:
        """Save the SVGs validation and planning rendered in their cache, once (nothing renders after them: a save
        again compared 10,000 renders with those saved, ~0.5-1 ms of an edit). A build does it once its workers have
        their jobs (`handed`): before, ~50 ms at 1,000 cards of this process alone while the workers waited for their
        first card; at the end otherwise."""
        if self.renders is not None:
            self.renders.save()
            self.renders = None

    def plan_cards(self) -> None:
        """Load and validate the game, render its cards to SVG and make its record (nothing drawn yet), stamping
        the files it reads (see `freshness.source_stamp`)."""
        root, name = self.root, self.name
        with noting_reads() as reads:  # what it read of a file saved just before: the next build compares that
            # Stamped before anything is read: a file edited during the build then differs from its stamp, and
            # the next build sees the edit (stamped after, the build would record what it never read).
            read_from = source_stamp(root, name, recording=True)
            self.load_and_plan()
        resolved, plan, drawn = root.resolve(), self.plan, files_drawn(self.plan)
        used = {f.relative_to(resolved).as_posix() for f in drawn} | set(plan.game.files_elsewhere())
        # the files read outside the folders stamped before reading (images a card names elsewhere); a file that
        # appeared in them since is not stamped: the next build sees it new and builds
        stamp = {**source_stamp(root, name, sorted(used), recording=True, scan=False), **read_from}
        art = {path: read for path, read in self.art_reads(drawn, stamp).items() if path not in reads}
        self.record.sources = with_read_digests(stamp, root, {**reads, **art})
        self.changes = diff_records(self.previous, self.record) if self.previous else None

    def art_reads(self, drawn: set[Path], stamp: dict[str, Stamp]) -> dict[str, Read]:
        """What the cards draw of the racy files of `stamp` (art, which the render workers read later): the digest
        their images are keyed by, by real path. A worker draws such a file only with those bytes
        (`render.make_url_fetcher`: else the build fails), and an image taken from the cache was drawn from them: a
        file saved since holds other bytes, which the next build finds by its content (`freshness._content_current`)."""
        resolved, digests, reads = self.root.resolve(), self.plan.file_digests, {}
        for path in drawn:
            if len(stamp.get(path.relative_to(resolved).as_posix(), ())) == 3 and path in digests:
                reads[os.path.realpath(path)] = Read(digests[path], True)
        return reads

    def load_and_plan(self) -> None:
        """Load and validate the game, render its cards to SVG and make its record, but its sources' stamps."""
        from cardgen.validate import validate_context

        root, name, options = self.root, self.name, self.options
        context = BuildContext.load(root, name, options.out_root, draft=options.draft, lang=options.lang)
        # The workers are idle until the cards are planned: a rebuild's (an edit's) draw the cards validation
        # renders meanwhile; a first build's share out a large game's renders.
        with drawn_early(context, self.workers if self.previous is not None and not options.force else None) as early:
            findings = validate_context(context, helpers=self.workers, keep_renders=False)
        self.early, self.renders = early, context.renderer.cache
        plan = self.plan = plan_build(context, findings, options.force)
        plan.findings = unique(findings, [w for w in plan.findings if w.rule != "text-overflow"])
        record = self.record = record_of(plan)
        if self.previous is not None:  # `keep_previous` compares it; a first build's waits for the drawing
            self.fingerprint()
        record.settings = self.settings
        record.warnings = plan.findings

    def fingerprint(self) -> None:
        """Set the record's build fingerprint (see `build_fingerprint`), unless it is set already."""
        if self.record.fingerprint is None:
            self.record.fingerprint = build_fingerprint(self.record, self.plan.game, self.options, self.stages)

    def makes_previous(self) -> bool:
        """Whether the game, as planned, makes what the previous build made, whose record and outputs are as it
        left them: the previous record is kept only when no one edited it by hand (a build.json edited into another
        valid record, other copies, another image, would otherwise be sealed again and served to print and tts)."""
        previous, final = self.previous, self.final
        return previous is not None and previous.fingerprint == self.record.fingerprint and \
            record_intact(final) and outputs_intact(final)

    def keep_previous(self) -> BuildResult | None:
        """When the game makes what the previous build made, keep its outputs (renewing build.json's stamps) and
        say so; else None."""
        previous, record, final = self.previous, self.record, self.final
        if previous is None or not self.makes_previous():
            return None
        previous = previous.model_copy(update={"settings": self.settings, "sources": record.sources,
                                               "warnings": record.warnings})
        previous.save(final)
        seal_outputs(final)
        return _up_to_date(self.name, final, previous, self.started, self.changes)

    def write(self) -> BuildResult:
        """Draw the cards and write every output into a staging folder, swapped into place when all is done."""
        plan, record, options, workers = self.plan, self.record, self.options, self.workers
        staging = make_staging(options.out_root, self.final.name)
        ending: threading.Thread | None = None
        try:
            kept = self.draw_and_run(staging, self.selected())
            if workers is not None:  # done with: they end (~4 ms) while the build is put in place
                ending = threading.Thread(target=workers.shutdown, name="cardgen-workers-end", daemon=True)
                ending.start()
            _finish(plan, record, self.final, staging, kept)
            self.made = kept.made
        finally:  # an error (a full disk: see `build_game`) leaves the previous output as it was
            discard(staging)
            if ending is not None:  # (before the exit: a thread running makes it Python's slower one)
                ending.join()
        stats = record.stats
        return BuildResult(self.name, self.final, len(plan.cards), stats.copies, stats.rendered, stats.cached,
                           time.perf_counter() - self.started, plan.findings, self.changes)

    def selected(self) -> list[Stage]:
        """The output stages this build runs."""
        return select_stages(self.plan.game, self.stages, self.options.always)

    def draw_and_run(self, staging: Path, selected: list[Stage]) -> PreviousOutputs:
        """Draw the cards and run the output stages into `staging`; the previous build's files, those kept noted."""
        plan, record, options, workers = self.plan, self.record, self.options, self.workers
        work: dict[str, list[CardWork]] = {}
        for stage in selected:  # the stages' work on card images, done in the render workers
            for key, item in stage.card_work(plan.game, record, options.out_root).items():
                work.setdefault(key, []).append(item)
        # The previous build's files this one makes again, kept; left where they are (an edit then moves the
        # few files it makes in) when every stage reads card images through `StageContext.image_file`.
        kept = PreviousOutputs(self.final, staging, all(stage.while_drawing for stage in selected))
        self.card_files = CardFiles(plan, staging, options.keep_svg, kept)
        changes = self.changes if self.changes is not None else Changes(first=True)
        stage_context = StageContext(plan.game, record, staging, self.final, kept, self.card_files.wait,
                                     changes, workers)
        # Card files are placed as their images are ready, while the workers draw the others, and the output
        # stages run beside them. With no workers started, the drawing is this process's own (or a pool forked
        # only without threads): the stages run after it.
        self.outputs = _OutputStages(selected, stage_context)
        with self.outputs.beside(self.card_files) if workers else contextlib.nullcontext():
            record.stats.rendered, record.stats.cached = draw_plan(plan, options.jobs, self.reporter, self, work,
                                                                   workers, self.early)
            self.card_files.place_rest()
        plan.findings += self.outputs.findings()
        return kept

    def rehearse(self) -> None:
        """Run the drawing and the output stages of a game that made what its previous build made (see `warm_up`)
        into a folder thrown away after: every image is found and every file kept, so nothing is drawn, the files
        written at every build (the TTS save, the gallery, build.json) are written there only, and what the stages
        keep in memory for the next build (`storage.KeptRuns`, `derived`, the print's kept pages) is loaded; the
        pieces the previous build's files hold as written there are spliced at the first edit as this process's own
        (`storage.rehearsing`). Nothing when a stage reads card files from its folder: each kept file would be
        copied in."""
        selected, previous = self.selected(), self.previous
        if previous is None or not all(stage.while_drawing for stage in selected):
            return
        with tempfile.TemporaryDirectory(prefix="cardgen-warm-") as folder, rehearsing():
            self.draw_and_run(Path(folder), selected)
            # build.json too, as `_finish` writes it, with the counts of the build that wrote the previous one (this
            # one found every image), so that its head is the same too
            counted = self.record.model_copy(update={"stats": previous.stats})
            write_spliced(Path(folder) / BUILD_RECORD, counted.json_parts(), self.final / BUILD_RECORD,
                          self.options.out_root)

    def handed(self) -> None:
        """The workers have every job: the build fingerprint of a first build is made while they draw (the gallery
        shows it), then the output stages start (see `_OutputStages.start`)."""
        self.fingerprint()
        self.outputs.start()
        self.keep_renders()

    def ready(self, keys: list[str]) -> None:
        """These images are drawn (or found): their card files are placed."""
        self.card_files.place(keys)


class _OutputStages:
    """A build's output stages writing into its staging folder: beside the drawing (`beside`), each stage that can
    (`Stage.while_drawing`) beginning at once in a thread of its own and the others once every card file is
    placed; or after the drawing (`findings` runs them). A stage runs after the stages it reads (`Stage.reads`)."""

    def __init__(self, stages: list[Stage], context: StageContext) -> None:
        self.stages, self.context = stages, context
        self.found: dict[int, list[Problem]] = {}  # by the stage's place in `stages`
        self.thread: threading.Thread | None = None
        self.beside_drawing = False
        self.errors: list[BaseException] = []

    def run(self) -> None:
        """Run every stage, keeping their findings and errors."""
        names = {stage.name for stage in self.stages}
        running: dict[int, threading.Thread] = {}
        for place, stage in enumerate(self.stages):
            if stage.while_drawing and not names & set(stage.reads):
                running[place] = threading.Thread(target=self._run, args=(place,), name=f"cardgen-{stage.name}",
                                                  daemon=True)
                running[place].start()
        for place, stage in enumerate(self.stages):
            if place not in running:
                for other, thread in running.items():
                    if self.stages[other].name in stage.reads:
                        thread.join()
                self._run(place)
        for thread in running.values():
            thread.join()

    def _run(self, place: int) -> None:
        """Run one stage, waiting for every card file first unless it waits for those it reads itself."""
        stage = self.stages[place]
        try:
            if not stage.while_drawing:
                self.context.wait_for(None)
            self.found[place] = stage.run(self.context)
        except BaseException as exc:  # re-raised in the build's thread (see `findings`)
            self.errors.append(exc)

    def start(self) -> None:
        """Start the stages in a thread (within `beside`, once the workers have their jobs: started earlier, the
        thread would take this process from handing them out)."""
        if self.thread is None and self.beside_drawing:
            self.thread = threading.Thread(target=self.run, name="cardgen-outputs", daemon=True)
            self.thread.start()

    @contextlib.contextmanager
    def beside(self, card_files: CardFiles) -> Iterator[None]:
        """Let the stages run in a thread (`start`) while the block draws the cards; when the drawing stops with an
        error, the stages waiting for card files stop too, and the block's error is raised once they have."""
        self.beside_drawing = True
        try:
            yield
        except BaseException:
            card_files.stop()
            if self.thread is not None:
                self.thread.join()
            raise

    def findings(self) -> list[Problem]:
        """The stages' findings, once they have all run (here, if they were not run beside the drawing); the
        error that stopped one is raised here."""
        if self.thread is None:
            self.run()
        else:
            self.thread.join()
        if self.errors:
            raise self.errors[0]
        return [finding for place in range(len(self.stages)) for finding in self.found.get(place, [])]


def _finish(plan: BuildPlan, record: BuildRecord, final: Path, staging: Path, previous: PreviousOutputs) -> None:
    """Write build.json (the stages' findings with it) into the staging folder that holds the files the build made,
    then put the build in place (`PreviousOutputs.put_in_place`): an edit's few files moved into the previous
    folder, else the folder swapped in whole, the files the previous build made from the same content kept (hard
    links), not made again."""
    record.warnings = plan.findings
    record.save(staging, final / BUILD_RECORD, final.parent)
    previous.put_in_place(functools.partial(seal_outputs, staging, made=previous.made))
