"""`cardgen build` and `cardgen watch`: build games and report what each build did."""
from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from cardgen.core.errors import LEFT_OUT, CardgenError, OutputBusy, Problem

if TYPE_CHECKING:
    from cardgen.commands.tts_push import PushTarget


def build_games(root: Path, names: list[str], out: Path | None, jobs: int, keep_svg: bool, force: bool,
                always: tuple[str, ...] = (), draft: bool = False, lang: str | None = None) -> None:
    """Build the games and report each, with the stages `always` run whatever the manifests say (`build --pod`); a
    CardgenError lists every game's problems, and a forced build that left cards out exits with 1. With `lang`, the
    games are built in that language into `<out>/<lang>/`."""
    out_root = output_root(root, out, lang)
    problems: list[Problem] = []
    errors = left_out = 0
    for name in names:
        try:
            done = bring_up_to_date(root, name, out_root, jobs, keep_svg, force, always, draft, lang)
        except CardgenError as exc:
            problems += exc.problems
            continue
        errors, left_out = errors + done.errors, left_out + done.left_out
    if problems:
        raise CardgenError(problems)
    if errors:
        cards = f"the {left_out} card(s) named above are left out" if left_out else "no card was left out"
        click.echo(f"built with {errors} error(s) (--force): {cards}", err=True)
        sys.exit(1)


def output_root(root: Path, out: Path | None, lang: str | None) -> Path:
    """The output root a command builds into: `out` (default `<root>/output`), or with `lang` its language's
    folder `<out>/<lang>/` (see `language_root`), made and stamped as cardgen's."""
    from cardgen.core.ownership import check_output_root, mark, refuse_foreign

    out_root = check_output_root(root, language_root(root, out or root / "output", lang))
    if lang is not None:  # output/fr/ is cardgen's, as a game's folder is (`clean --outputs` removes it)
        refuse_foreign(out_root)  # a folder of the designer's own, named like the language, is never taken
        mark(out_root)
    return out_root


def language_root(root: Path, out_root: Path, lang: str | None) -> Path:
    """Where a language's builds go: `<out_root>/<lang>/` (the output root itself for the game's own language,
    None); an error when a game of the workspace has the language's name (its build would be that folder)."""
    if lang is None:
        return out_root
    from cardgen.core.workspace import list_games
    from cardgen.load.manifest import LANGUAGE_CODE

    if not re.fullmatch(LANGUAGE_CODE, lang):
        raise CardgenError(f"--lang {lang}: not a language code; write it as in game.yaml's languages: (fr, de, "
                           "pt-BR)")
    if lang in list_games(root):
        raise CardgenError(f"--lang {lang}: a game is named '{lang}', and its build is {out_root / lang}, where "
                           f"the {lang} builds would go; rename the game")
    return out_root / lang


class Done(NamedTuple):
    """What bringing a game up to date did: the errors a forced build kept, how many cards they left out, and
    whether the game was built (its output changed) or was current already."""

    errors: int
    left_out: int
    built: bool


def bring_up_to_date(root: Path, name: str, out_root: Path, jobs: int = os.cpu_count() or 1,
                     keep_svg: bool = False, force: bool = False, always: tuple[str, ...] = (),
                     draft: bool = False, lang: str | None = None) -> Done:
    """Build one game unless its last build is current, and report what was done (see `Done`). The stages named
    in `always` run whatever the manifest says (`build --pod`).

    A current build is reported from its build.json alone, without importing the pipeline (pydantic,
    cairosvg, reportlab stay unloaded): the settings compared are the ones build_game records.
    """
    from cardgen.core.ownership import check_game_name
    from cardgen.load.freshness import current_build, settings_key
    from cardgen.outputs import stage_names

    started = time.perf_counter()
    current = current_build(out_root / check_game_name(name), root, name,
                            settings_key(keep_svg, force, draft, stage_names(), always, lang))
    built = False
    if current is not None:
        cards, findings = current
        show_findings(findings)
        click.echo(up_to_date_line(name, cards, time.perf_counter() - started))
    else:
        result = build_one(root, name, out_root, jobs, keep_svg, force, always, draft, lang)
        findings, built = result.findings, not result.up_to_date
    errors = [f for f in findings if f.severity == "error"]
    return Done(len(errors), sum(f.rule == LEFT_OUT for f in errors), built)


def build_one(root: Path, name: str, out_root: Path, jobs: int, keep_svg: bool = False, force: bool = False,
              always: tuple[str, ...] = (), draft: bool = False,
              lang: str | None = None) -> Any:
    """Run the whole pipeline for one game with every registered output stage, and report it.

    A rebuild forks its render worker first, before the pipeline is imported: it sets cairosvg up on the other
    core while this process imports (~0.2 s), loads and validates the game (forked after the imports, it was
    still setting up when a one-card edit's job came, on a busy machine). A first build forks its workers after
    the imports (see `build_game`): they inherit the modules they would otherwise each import, on the cores this
    process needs meanwhile (measured: cold 20 cards no faster, ~0.1 s more CPU). A first run reads cardgen's code
    map beside the imports (`codemap.read_aside`), for the build's cache keys.
    """
    from cardgen.commands.startup import settled_imports
    from cardgen.core.cachebound import cache_limit, settle
    from cardgen.core.codemap import read_aside
    from cardgen.core.storage import builds_again
    from cardgen.load.fonts import configure_fontconfig
    from cardgen.outputs import stage_names, work_modules
    from cardgen.raster.pool import started_workers

    cache_limit()  # (its error, if any, before the build)
    rebuild = not force and (out_root / name / "build.json").is_file()
    configure_fontconfig([root / "fonts"])  # before the workers fork: they inherit it
    aside = read_aside() if jobs > 1 else contextlib.nullcontext()  # on another core: not with --jobs 1
    early = started_workers(jobs, 1, work_modules(stage_names())) if rebuild else contextlib.nullcontext()
    with aside, early as workers:
        with settled_imports() if "cardgen.build.build" not in sys.modules else contextlib.nullcontext():
            from cardgen.build.build import BuildOptions, build_game
            from cardgen.core.progress import make_reporter

            if not rebuild and jobs > 1:  # the output stages' card work, which its stages import before the first
                for module in work_modules(stage_names()):  # job anyway: the workers forked next inherit it (~10 ms
                    importlib.import_module(module)  # each); not on a rebuild, which may have nothing to do

        options = BuildOptions(out_root, jobs, keep_svg, force, always, draft, lang)
        result = build_game(root, name, options, make_reporter(sys.stderr.isatty()), stage_names(), workers)
    report_build(result)
    if not builds_again():  # the cache kept under its bound once the build has reported (a watch: between saves)
        settle()
    return result


def warm_games(root: Path, out_root: Path, jobs: int, names: list[str], always: tuple[str, ...] = (),
               draft: bool = False, lang: str | None = None) -> None:
    """Load what the next rebuild of each game `build_one` built reads (`build.warm_up`), with its options; a
    problem met is left for that rebuild to report."""
    from cardgen.build.build import BuildOptions, warm_up
    from cardgen.outputs import stage_names

    options = BuildOptions(out_root, jobs, always=always, draft=draft, lang=lang)
    for name in names:
        try:
            warm_up(root, name, options, stage_names())
        except (CardgenError, OSError):
            pass


def show_findings(findings: list[Problem]) -> None:
    """Print findings, errors in red and warnings in yellow."""
    for finding in findings:
        click.secho(str(finding), fg="red" if finding.severity == "error" else "yellow", err=True)


def up_to_date_line(name: str, cards: int, seconds: float) -> str:
    """What a build with nothing to do says."""
    return f"{name}: up to date ({cards} cards), nothing to do, {seconds:.1f}s"


def report_build(result: Any) -> None:
    """Print a build's findings, what changed since the previous build, and its counts."""
    from cardgen.record.changes import describe

    show_findings(result.findings)
    if result.changes is not None and not result.changes.empty:
        for line in describe(result.changes):
            click.echo(f"  {line}")
    if result.up_to_date:
        click.echo(up_to_date_line(result.name, result.cards, result.seconds))
    else:
        click.echo(f"{result.name}: {result.cards} cards ({result.copies} with copies), {result.rendered} drawn, "
                   f"{result.cached} from cache, {result.seconds:.1f}s -> {result.out_dir}")


def watch_games(root: Path, names: list[str], out: Path | None, jobs: int, push: PushTarget | None = None,
                draft: bool = False, lang: str | None = None) -> None:
    """Build the games, then rebuild whatever an edit affects until Ctrl-C; with `push` (a PushTarget), send
    each game built into a running Tabletop Simulator. `draft` and `lang` are `build`'s: each build draws a
    missing image as a placeholder, and builds the games in that language into `<out>/<lang>/`."""
    import threading
    from functools import partial

    from cardgen.build.watch import watch_games as watch
    from cardgen.build.watch import when_free

    out_root = output_root(root, out, lang)

    def rebuild(todo: list[str]) -> None:
        for name in todo:
            try:
                when_free(partial(build_one, root, name, out_root, jobs, draft=draft, lang=lang), out_root,
                          partial(click.echo, err=True))
            except OutputBusy as exc:  # not the save's fault
                click.echo(f"{name}: not rebuilt: {exc.problems[0].message}", err=True)
            except CardgenError as exc:
                show_findings(exc.problems)
                click.echo(f"{name}: not rebuilt; fix the problems above and save again", err=True)
            else:
                if push is not None:
                    from cardgen.commands.tts_push import push_built_game, report

                    report(push_built_game(out_root / name, push))

    click.echo(f"watching {root} for changes to {', '.join(names)} (Ctrl-C to stop)")
    try:
        warm = partial(warm_games, root, out_root, jobs, draft=draft, lang=lang)  # then, for the first save
        watch(root, names, rebuild, threading.Event(), build_first=True, warm=warm)  # a save during it is seen
    except KeyboardInterrupt:
        click.echo("stopped watching")
