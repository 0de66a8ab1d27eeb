"""A timeline of one cardgen command: when each of a chosen set of functions ran, in every process, and its CPU.

Run: python bench/timeline.py [--span MODULE:FUNCTION ...] [--only] -- build gen20 --out /tmp/x -j 2

Runs the command in this process (as `cardgen` would) with the chosen functions wrapped as their modules are
imported, and prints, once the command ends, one line per call sorted by start: the process, the thread, its start
and end (seconds since this script started) and the thread CPU it used (ms); then each function's calls and CPU in
all. Processes forked by the command (the render workers, the code-map reader) inherit the wrapping and log into
the same file; the process ids tell them apart. The first line of each process is `process`, from its start (for
a forked one, the fork). `--span` adds functions (a method as `Class.method`); with `--only` they replace the
default set (`SPANS`).

Sessions 19-26 measured the cold build's and the edit's phases this way (bench/RESULTS.md): a function's thread
CPU is what the function cost its thread, unlike wall time on a loaded machine.
"""
from __future__ import annotations

import argparse
import atexit
import functools
import importlib.abc
import importlib.util
import os
import runpy
import sys
import tempfile
import threading
import time
from collections import defaultdict
from types import ModuleType
from typing import Any, Callable, Sequence

# The phases of a build (this process), of the render workers' jobs and of the stages, by module
SPANS = {
    "cardgen.commands.build_cmd": ["bring_up_to_date", "build_one"],
    "cardgen.core.codemap": ["read_aside"],
    "cardgen.build.build": ["build_game", "_Build.plan_cards", "_Build.selected", "_Build.draw_and_run",
                            "_finish", "_templates_ahead", "warm_up"],
    "cardgen.validate": ["validate_context"],
    "cardgen.build.plan": ["draw_plan"],
    "cardgen.raster.pool": ["_start_worker", "warm_up", "_started"],
    "cardgen.raster.render": ["run_job", "setup_cairosvg", "Drawing.draw", "_store_png"],
    "cardgen.outputs.tts.work": ["TTSCardWork.__call__"],
    "cardgen.outputs.print_work": ["PrintJPEG.make", "MaskedImage.make"],
    "cardgen.outputs.pdf": ["PrintStage.run"],
    "cardgen.outputs.tts.stage": ["TTSStage.run"],
    "cardgen.outputs.gallery": ["GalleryStage.run"],
}

STARTED = time.time()


class Log:
    """Lines appended to one file by every process (each line one `write` of an `O_APPEND` file: whole lines)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def add(self, name: str, start: float, end: float, cpu: float) -> None:
        """One span: wall seconds since the script started, thread CPU in seconds."""
        line = (f"{os.getpid()} {threading.current_thread().name[:16]:16s} {start - STARTED:8.3f} "
                f"{end - STARTED:8.3f} {cpu * 1000:8.1f} {name}\n")
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line.encode())
        finally:
            os.close(descriptor)


def spanned(function: Callable[..., Any], name: str, log: Log) -> Callable[..., Any]:
    """`function`, logging the wall span and thread CPU of each call."""
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        start, cpu = time.time(), time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            log.add(name, start, time.time(), time.thread_time() - cpu)

    return call


def wrap(module: ModuleType, names: Sequence[str], log: Log, missing: list[str]) -> None:
    """Wrap the named functions of a module just imported (a name it lacks is noted in `missing`)."""
    for name in names:
        *path, last = name.split(".")
        owner: Any = module
        for part in path:
            owner = getattr(owner, part, None)
        function = getattr(owner, last, None)
        if function is None:
            missing.append(f"{module.__name__}:{name}")
            continue
        setattr(owner, last, spanned(function, f"{module.__name__.removeprefix('cardgen.')}:{name}", log))


class Wrapper(importlib.abc.MetaPathFinder):
    """Wraps the chosen functions of each chosen module as it is imported."""

    def __init__(self, spans: dict[str, list[str]], log: Log) -> None:
        self.spans, self.log, self.missing = spans, log, list[str]()

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        """The module's own spec, its loading followed by the wrapping (None: not a chosen module)."""
        if name not in self.spans:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            wrap(module, self.spans[name], self.log, self.missing)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def chosen(extra: Sequence[str], only: bool) -> dict[str, list[str]]:
    """The functions to wrap, by module: the defaults (unless `only`) and `MODULE:FUNCTION` items."""
    spans: dict[str, list[str]] = defaultdict(list)
    if not only:
        for module, names in SPANS.items():
            spans[module] += names
    for item in extra:
        module, _, name = item.partition(":")
        spans[module].append(name)
    return spans


def report(log: Log, missing: list[str], unseen: list[str]) -> None:
    """Print the timeline and each function's totals (in the process that started, once the command ends)."""
    with open(log.path, encoding="utf-8") as lines:
        rows = [line.split(maxsplit=5) for line in lines]
    rows.sort(key=lambda row: float(row[2]))
    print(f"{'pid':>7} {'thread':16s} {'start':>8} {'end':>8} {'cpu ms':>8} function", file=sys.stderr)
    for row in rows:
        print("{:>7} {:16s} {:>8} {:>8} {:>8} {}".format(*row[:5], row[5].rstrip()), file=sys.stderr)
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for row in rows:
        totals[row[5].rstrip()][0] += 1
        totals[row[5].rstrip()][1] += float(row[4])
    print("\ncalls  cpu ms  function (all processes)", file=sys.stderr)
    for name, (calls, spent) in sorted(totals.items(), key=lambda item: -item[1][1]):
        print(f"{calls:5.0f} {spent:7.1f}  {name}", file=sys.stderr)
    for name in missing:
        print(f"not found, not wrapped: {name}", file=sys.stderr)
    for module in unseen:
        print(f"not imported by this process: {module} (its spans come from the processes that did)", file=sys.stderr)


def main() -> None:
    """Run the command after `--` with the chosen functions wrapped; print the timeline when it ends."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--span", action="append", default=[], help="MODULE:FUNCTION to wrap as well")
    parser.add_argument("--only", action="store_true", help="wrap only the --span functions")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="cardgen's arguments, after --")
    args = parser.parse_args()
    log = Log(tempfile.mkstemp(prefix="cardgen-timeline-", suffix=".log")[1])
    wrapper = Wrapper(chosen(args.span, args.only), log)
    sys.meta_path.insert(0, wrapper)
    me = os.getpid()
    os.register_at_fork(after_in_child=lambda: log.add("process", time.time(), time.time(), 0.0))
    log.add("process", STARTED, time.time(), time.process_time())

    def end() -> None:  # atexit runs it last (registered first); forked processes end without it
        if os.getpid() == me:
            report(log, wrapper.missing, [module for module in wrapper.spans if module not in sys.modules])
            os.unlink(log.path)

    atexit.register(end)
    sys.argv = ["cardgen", *(args.command[1:] if args.command[:1] == ["--"] else args.command)]
    runpy.run_module("cardgen", run_name="__main__")


if __name__ == "__main__":
    main()
