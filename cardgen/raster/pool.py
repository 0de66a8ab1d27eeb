"""The render workers: processes forked for a build, set up to draw while the game loads, that draw its jobs
(`render.run_job`) and end with it (on Ctrl-C, or when the build is killed).
"""
from __future__ import annotations

import gc
import os
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from cardgen.core.errors import CardgenError
from cardgen.raster import render
from cardgen.raster.render import RasterJob, draw_svg, encode_png, setup_cairosvg


def _follow_the_build(parent: int) -> None:
    """Tie a render worker to the build that started it. Ctrl-C (sent to every process of the terminal's
    group) is the build's to handle: it drops the jobs not started and ends the workers, and a worker waiting
    for a job would otherwise print a traceback. A killed build cannot end its workers: they exit when it is
    gone, rather than draw on for nothing."""
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # blocked while it was forked (see `_started`); a Ctrl-C then is dropped
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="cardgen-parent-watch", daemon=True).start()


# Drawn once by each render worker as it starts: a first drawing costs ~30 ms more than the next ones (fontconfig
# reads its configuration and caches, cffi parses the C types cairosvg asks for), paid while the game loads.
_WARM_UP_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><linearGradient id="g"><stop '
                'offset="0"/></linearGradient><rect width="8" height="8" rx="1" fill="url(#g)" stroke="red"/>'
                '<path d="M0 0L4 4Z" transform="rotate(9)"/><text y="6" font-size="6">Ag</text></svg>')


def _start_worker(parent: int, held: Any = None, modules: Sequence[str] = (),
                  ahead: Callable[[], None] | None = None) -> None:
    """Set a render worker up while the build is still loading the game: import and configure cairosvg (parsing
    cairo's C declarations is most of it), draw a first small picture and encode it, and import `modules` (those
    of the output stages' card work, which comes with the jobs: `outputs.work_modules`, which import nothing of the
    pipeline), so that its first card costs a card. A worker
    `held` back (see `RenderPool`) first waits until the build wants it, and each sets up in its turn (see
    `_HeldBack.setting_up`). The first to set up does `ahead` first (see `RenderPool`)."""
    _follow_the_build(parent)
    if held is None:
        warm_up(modules)
    elif held.wait_turn():  # else the build ended without needing it: it takes no job, and ends at the shutdown
        with held.setting_up():
            if ahead is not None and held.ahead.acquire(block=False):
                try:
                    ahead()
                except Exception:  # noqa: BLE001,S110  work ahead of the build's own: the build does it if need be
                    pass
            warm_up(modules)


def warm_up(modules: Sequence[str] = ()) -> None:
    """Make this process ready to draw a card at the cost of a card: import and configure cairosvg (parsing cairo's
    C declarations is most of it), draw a first small picture and encode it, and import `modules` (those of the
    output stages' card work, which comes with the jobs; `cardgen watch` names the stages themselves, which it runs).
    A render worker does it as it starts; `cardgen watch`
    once it watches, for the card of the first edit it draws itself (~0.15 s, then not again)."""
    import importlib

    setup_cairosvg()
    try:
        encode_png(draw_svg(_WARM_UP_SVG, 8, 8, 96, Path(os.sep), "file:///"))
        for name in modules:  # else imported while unpickling the first job, on the way to an edit's card
            importlib.import_module(name)
    except Exception:  # noqa: BLE001  a worker that fails to start would break the pool: its first card says why
        pass


# How long a worker waits at most for its turn to set up (one killed while setting up never leaves it).
SETUP_WAIT_SECONDS = 2.0


class _HeldBack:
    """Which workers of a `RenderPool` start at once: the first `early` to ask, the others when `release`d.

    Shared by the forked workers: multiprocessing's semaphores live in shared memory (a shared value would import
    ctypes and map an arena, ~4 ms of every build). Released with semaphores, not an event: setting a
    multiprocessing event waits for every waiter to wake, and a worker killed while it waits never does.
    """

    def __init__(self, context: Any, workers: int, early: int) -> None:
        self.early = context.Semaphore(early)
        self.go = context.Semaphore(0)
        self.stop = context.Semaphore(0)  # given before `go` when the held workers are let go to end
        self.held = workers - early
        self.released = False  # in the build's process only
        self.spare = context.Semaphore(max(1, (os.cpu_count() or 1) - 1))  # the cores the build leaves (`setting_up`)
        self.ahead = context.Semaphore(1)  # taken by the worker that does the pool's work ahead (`_start_worker`)
        self.workers, self.turns_open = workers, False  # (in the build's process)

    @contextmanager
    def setting_up(self) -> Iterator[None]:
        """In a worker: the block (its set-up) once no more workers are in it than there are cores the build leaves,
        once the jobs are handed out (`open_turns`), or after SETUP_WAIT_SECONDS. The workers set up while the build
        loads and validates the game: on 2 cores, two at once made three busy processes, and took a third of the
        build's core on its way to the first card; one after the other, both are ready before the first job all the
        same."""
        entered = self.spare.acquire(timeout=SETUP_WAIT_SECONDS)
        try:
            yield
        finally:
            if entered:
                self.spare.release()

    def open_turns(self) -> None:
        """Let every worker still waiting for its turn to set up go at once: the jobs are handed out, and the build
        needs no core of its own for its way to them any more."""
        if not self.turns_open:
            self.turns_open = True
            for _ in range(self.workers):
                self.spare.release()

    def wait_turn(self) -> bool:
        """In a worker: True at once for the early ones, else once released; False when the build ended first."""
        if self.early.acquire(block=False):
            return True
        self.go.acquire()
        return not self.stop.acquire(block=False)

    def release(self, wanted: bool) -> None:
        """Let the held workers go: to set up and draw (`wanted`), or to end."""
        if not self.released:
            self.released = True
            for semaphore in ([] if wanted else [self.stop]) + [self.go]:
                for _ in range(self.held):
                    semaphore.release()


class RenderPool(ProcessPoolExecutor):
    """Render workers forked now, of which only the first `early` set cairosvg up and take jobs at once; the
    others wait, forked but idle, until `grow` (a rebuild that turns out to have many jobs) lets them.

    A rebuild mostly draws a card or two: a second worker setting cairosvg up meanwhile would only take a core
    from this process while it loads and validates the game. All workers are forked now all the same: forking
    later, once the pool's own thread runs, can deadlock.
    """

    def __init__(self, workers: int, early: int, context: Any, modules: Sequence[str] = (),
                 ahead: Callable[[], None] | None = None) -> None:
        self._held = _HeldBack(context, workers, early)
        super().__init__(max_workers=workers, mp_context=context, initializer=_start_worker,
                         initargs=(os.getpid(), self._held, tuple(modules), ahead))

    def grow(self) -> None:
        """Let every held worker set up and take jobs."""
        self._held.release(wanted=True)

    def handing_out(self) -> None:
        """The build hands its jobs out: the workers set up from now on go at once (see `_HeldBack.setting_up`)."""
        self._held.open_turns()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """End the pool; held workers that were never wanted end without setting anything up."""
        self._held.release(wanted=False)
        super().shutdown(wait, cancel_futures=cancel_futures)


@contextmanager
def started_workers(workers: int, early: int | None = None, modules: Sequence[str] = (),
                    ahead: Callable[[], None] | None = None) -> Iterator[RenderPool | None]:
    """Render workers forked now, before the game is loaded, validated and planned: the first `early` (default:
    all) set cairosvg up (and import `modules`) on the other core meanwhile, and `run_jobs` gives them the jobs,
    letting the others start too when there are many (None with one worker, or when forking is not safe: another
    thread runs, as in `cardgen watch`; `run_jobs` then starts its own). The first worker to set up does `ahead`
    before (work for the build's way to its first job, in its set-up's turn: see `_HeldBack.setting_up`).

    Leaving the block drops the jobs not started and waits for the workers to end.
    """
    import multiprocessing
    import threading

    if workers <= 1 or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield None
        return
    context = multiprocessing.get_context("fork")
    pool = _started(lambda: RenderPool(workers, min(early or workers, workers), context, modules, ahead))
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _started(make: Callable[[], ProcessPoolExecutor]) -> Any:
    """The pool `make` returns, its workers started now (forked workers all start at the first submit)."""
    # A forked worker shares the objects made so far with the main process until it writes to their pages; the
    # garbage collector's passes write to every object they visit, so each worker would copy the whole heap bit
    # by bit. Frozen objects are never visited: the pages stay shared.
    gc.freeze()
    # Ctrl-C is held back while the workers fork, and a worker lets it in only once it ignores it (see
    # `_follow_the_build`): one that came before, while the worker was still starting, raised the build's
    # KeyboardInterrupt in the worker and printed its traceback. The build's own Ctrl-C comes once the fork is done.
    held = _hold_ctrl_c()
    try:
        pool = make()
        pool.submit(int)  # nothing to do: it makes the pool start its workers
    finally:
        held()
        gc.unfreeze()
    return pool


def _hold_ctrl_c() -> Callable[[], None]:
    """Block SIGINT in this thread (forked processes inherit the block); return what lets it in again."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # no signal masks (Windows): nothing is held
        return lambda: None
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def let_in() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)

    return let_in


# From this many jobs, the workers a rebuild held back are let go: drawing ~4 cards takes one worker about as long
# as a second one needs to set cairosvg up, on a core this process leaves idle while it waits for them.
_MANY_JOBS = 4


# Jobs go to the workers in batches of up to this many: each submit costs the build's threads and the worker ~0.5
# ms of CPU (pickling, queueing, waking, sending the result back), and a batch pickles what its jobs share once (the
# recipe of their TTS sheet, the workspace's paths). Few, so that a build that stops leaves few jobs drawn for
# nothing.
BATCH_AT_MOST = 4
# The batches shrink toward the end, so that the last jobs (the last TAIL_BATCHES batches a worker has left) go
# one at a time: no worker waits long for the other to finish a batch.
TAIL_BATCHES = 4


def batches(jobs: list[RasterJob], workers: int) -> list[list[RasterJob]]:
    """The jobs in order, cut into the batches the workers are sent (see `BATCH_AT_MOST`): one job each when there
    are few."""
    cut: list[list[RasterJob]] = []
    at = 0
    while at < len(jobs):
        size = max(1, min(BATCH_AT_MOST, (len(jobs) - at) // (workers * TAIL_BATCHES)))
        cut.append(jobs[at:at + size])
        at += size
    return cut


def run_jobs(jobs: list[RasterJob], workers: int, on_done: Callable[[str, str | None], None],
             begin: Callable[[], None] = lambda: None, pool: RenderPool | None = None) -> None:
    """Render jobs: in `pool` when given (see `started_workers`), else in a process pool started here when there
    are several workers and enough work, else in this process.

    `begin` is called once the workers exist (a progress bar thread must not run while they fork).
    """
    if pool is not None:
        _run_in(pool, jobs, workers, on_done, begin)
        return
    if workers <= 1 or len(jobs) < 4:
        begin()
        for job in jobs:
            on_done(*render.run_job(job))
        return
    import multiprocessing
    import threading

    setup_cairosvg()  # imported once here, not once per worker: forked workers share it
    # fork is cheap (no re-import), but forking while other threads run can deadlock: spawn then.
    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
        else "spawn"
    context = multiprocessing.get_context(method)
    with _started(lambda: ProcessPoolExecutor(min(workers, len(jobs)), context, _follow_the_build,
                                              (os.getpid(),))) as started:
        _run_in(started, jobs, workers, on_done, begin)


def _run_in(pool: ProcessPoolExecutor, jobs: list[RasterJob], workers: int,
            on_done: Callable[[str, str | None], None], begin: Callable[[], None]) -> None:
    """Render jobs in a started pool of `workers`, in `batches`, calling `on_done` in this process as each one
    ends (a batch's as the batch ends)."""
    from concurrent.futures.process import BrokenProcessPool

    futures: list[Future[Any]] = []  # a job's result, or a batch's list of them
    if isinstance(pool, RenderPool):
        pool.handing_out()
        if len(jobs) >= _MANY_JOBS:
            pool.grow()
    try:
        futures = [pool.submit(render.run_job, batch[0]) if len(batch) == 1 else
                   pool.submit(render.run_batch, batch) for batch in batches(jobs, workers)]
        begin()
        for future in as_completed(futures):
            result = future.result()
            for key, error in result if isinstance(result, list) else [result]:
                on_done(key, error)
    except BrokenProcessPool:  # a worker was killed (out of memory, by hand): said in one line, not a traceback
        raise CardgenError("a drawing process stopped unexpectedly (killed, or out of memory); build again, or "
                           "with --jobs 1 to draw in one process") from None
    except BaseException:  # the build stops: the jobs not started yet are not drawn for nothing
        for future in futures:
            future.cancel()
        raise
