"""SVG -> pixels: cairosvg draws to a surface, Pillow encodes; results are cached by content.

A card is drawn again only when its SVG text, its pixel size, the renderer or a file it uses
(an image, a font) changed. Cache files are written to a temporary name and renamed, so an
interrupted build never leaves a half-written PNG behind.
"""
from __future__ import annotations

import gc
import hashlib
import os
import threading
import urllib.parse
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from cardgen.core.errors import CardgenError
from cardgen.core.storage import file_digest, write_sealed
from cardgen.load.svgart import is_svg as _is_svg

# zlib level 1 with the run-length strategy: card art is mostly flat colour, which RLE packs
# smaller and faster than the default strategy (measured: 20 ms and 151 kB against 25 ms and 171 kB).
PNG_OPTIONS = {"compress_level": 1, "compress_type": zlib.Z_RLE}


# An output stage's work on one card image, done in the render worker that draws it while the image is in memory
# (a TTS sheet cell, a sheet its cell completes). It is given the `DrawnCard` and must be picklable.
CardWork = Callable[["DrawnCard"], None]


@dataclass(frozen=True)
class Drawing:
    """How one card image is drawn: its SVG text, its pixel size and resolution, the workspace its files are read
    from, its fonts folders, and whether it keeps its transparency (tokens and boards)."""

    svg: str
    width: int
    height: int
    dpi: int
    root: str
    base_url: str
    font_dirs: tuple[str, ...]
    transparent: bool = False

    def record(self) -> CardVectors:
        """Draw the SVG as cairo's recording of it (RenderFailure when cairosvg cannot)."""
        from cardgen.load.fonts import configure_fontconfig

        configure_fontconfig([Path(d) for d in self.font_dirs])
        return record_svg(self.svg, self.width, self.height, self.dpi, Path(self.root), self.base_url,
                          self.transparent)


@dataclass(frozen=True)
class RasterJob:
    """Everything a worker needs to turn one SVG into one cached PNG, and the output stages' work on it.

    When the PNG is cached already (`cached`), the work gets the cached image (and the drawing's vectors). With
    `encode_beside`, the PNG is encoded in a thread of its own while the work is done (a build drawing fewer
    images than it has cores: an edit's card).
    """

    key: str
    drawing: Drawing
    target: str
    cached: bool = False
    work: tuple[CardWork, ...] = ()
    encode_beside: bool = False


class RenderFailure(Exception):
    """cairosvg could not draw an SVG; the message says why."""


def look_key(svg: str, width: int, height: int, dpi: int, files: Iterable[Path]) -> str:
    """What a card image shows: a hash of its SVG text, pixel size and the files it draws (by content), but not of
    the code that draws it. The build record keeps it for the change report: a new cardgen draws every card again
    (`content_key`), and reports as changed only the cards whose drawing differs."""
    digest = hashlib.sha256()
    for part in (f"{width}x{height}@{dpi}", svg):
        digest.update(part.encode())
        digest.update(b"\0")
    for path in sorted(set(files)):
        digest.update(f"{path.name}:{file_digest(path)}".encode())
    return digest.hexdigest()[:32]


def content_key(look: str) -> str:
    """The cache key of a rendered image: what it shows (`look_key`), cardgen's code and cairosvg's version."""
    from cardgen.core.bundled import code_digest

    return hashlib.sha256(f"{code_digest()}\0{_drawing_library_version()}\0{look}".encode()).hexdigest()[:32]


@lru_cache(maxsize=1)
def _drawing_library_version() -> str:
    """cairosvg's version, read without importing it: importing cairosvg (and cairocffi) costs more than planning
    a small game, and only workers draw. cairosvg reads its `__version__` from the VERSION file of its package;
    its package metadata is read when there is none (importlib.metadata costs 10-20 ms to import)."""
    from importlib.util import find_spec

    spec = find_spec("cairosvg")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        with suppress(OSError, UnicodeDecodeError):
            return (Path(folder) / "VERSION").read_text(encoding="utf-8").strip()
    from importlib.metadata import version

    return version("cairosvg")


def make_url_fetcher(root: Path) -> Callable[[str, str], bytes]:
    """A cairosvg url_fetcher that serves data: URLs and files inside the project, nothing else."""
    root = root.resolve()

    def fetch(url: str, resource_type: str) -> bytes:
        data = read(url)
        return _prepared_svg(data, url) if resource_type == "image/*" and _is_svg(data) else data

    def read(url: str) -> bytes:
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme == "data":
            from urllib.request import urlopen  # here: it pulls in http, ssl and email, needed for nothing else

            with urlopen(url) as response:  # data: URLs decode locally, no network
                return response.read()
        if parsed.scheme not in ("file", ""):
            raise RenderFailure(f"refused to load '{url}': only files inside the project are read")
        path = Path(urllib.parse.unquote(parsed.path)).resolve()
        if not path.is_relative_to(root):
            raise RenderFailure(f"refused to load '{path}': it lies outside the project folder")
        if not path.is_file():
            raise RenderFailure(f"image '{path}' does not exist")
        return path.read_bytes()

    return fetch


def _prepared_svg(data: bytes, url: str) -> bytes:
    """An SVG image as cairosvg is given it: its drawing alone, sized by its viewBox (see `svgart.document`)."""
    from cardgen.load.svgart import document, inflated, read_art

    try:
        return document(read_art(inflated(data, url[:80]) if data.startswith(b"\x1f\x8b") else data, url[:80]))
    except CardgenError as exc:
        raise RenderFailure(f"cannot draw the SVG image {url[:80]}: {exc.problems[0].message}") from None


def _setup_cairosvg() -> None:
    from cardgen.raster.cairo_bindings import import_cairocffi

    import_cairocffi()  # before cairosvg imports it: with cairo's declarations kept, not parsed again
    import cairocffi
    import cairosvg.surface

    # geometricPrecision keeps glyph advances unhinted (widths match the font's metrics);
    # cairo 1.16 garbles ANTIALIAS_BEST, so ask for grey antialiasing instead.
    cairosvg.surface.TEXT_ANTIALIAS["geometricPrecision"] = cairocffi.ANTIALIAS_GRAY
    paint_mask = cairosvg.surface.paint_mask
    if not getattr(paint_mask, "by_luminance", False):
        cairosvg.surface.paint_mask = partial(_paint_luminance_mask, paint_mask)
        cairosvg.surface.paint_mask.by_luminance = True


def _paint_luminance_mask(paint_mask: Callable[..., None], surface: Any, *args: Any) -> None:
    """cairosvg's paint_mask, masking by the mask's luminance as SVG says (a black shape in a mask hides, a white
    one shows: Inkscape's masks, drawn so by librsvg and browsers), not by its alpha, which showed both."""
    context = surface.context
    surface.context = _LuminanceMasking(context)
    try:
        paint_mask(surface, *args)
    finally:
        surface.context = context


class _LuminanceMasking:
    """A cairo context whose mask_surface masks with the luminance of the mask drawn at the device's resolution."""

    def __init__(self, context: Any) -> None:
        self._context = context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def mask_surface(self, source: Any, x: float = 0.0, y: float = 0.0) -> None:
        """Mask with `source`'s luminance (times its alpha) in place of its alpha."""
        import cairocffi
        from PIL import Image

        target = self._context.get_target()
        extents = target.get_extents() if isinstance(target, cairocffi.RecordingSurface) else \
            (0, 0, target.get_width(), target.get_height())
        width, height = int(extents[2]), int(extents[3])
        drawn = cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, width, height)
        painter = cairocffi.Context(drawn)
        painter.set_matrix(self._context.get_matrix())
        painter.set_source_surface(source, x, y)
        painter.paint()
        drawn.flush()
        # cairo's pixels are premultiplied: the luminance of the colours as stored is luminance times alpha.
        colours = Image.frombuffer("RGBA", (width, height), bytes(drawn.get_data()), "raw", "BGRA",
                                   drawn.get_stride(), 1).convert("RGB")
        stride = cairocffi.ImageSurface.format_stride_for_width(cairocffi.FORMAT_A8, width)
        rows = Image.new("L", (stride, height))
        rows.paste(colours.convert("L", (0.2125, 0.7154, 0.0721, 0)))
        alpha = cairocffi.ImageSurface.create_for_data(bytearray(rows.tobytes()), cairocffi.FORMAT_A8, width,
                                                       height, stride)
        self._context.save()
        self._context.identity_matrix()
        self._context.mask_surface(alpha, 0, 0)
        self._context.restore()


@lru_cache(maxsize=1)
def _recording_surface() -> type:
    """cairosvg's PNG surface drawing into a cairo recording surface of the same size, not into pixels."""
    _setup_cairosvg()
    import cairocffi
    import cairosvg.surface

    class RecordingSurface(cairosvg.surface.PNGSurface):
        def _create_surface(self, width: float, height: float) -> tuple[Any, int, int]:
            width, height = int(round(width)), int(round(height))  # as PNGSurface rounds them
            return cairocffi.RecordingSurface(cairocffi.CONTENT_COLOR_ALPHA, (0, 0, width, height)), width, height

    return RecordingSurface


def record_svg(svg: str, width: int, height: int, dpi: int, root: Path, base_url: str,
               transparent: bool = False) -> CardVectors:
    """Draw SVG text at width x height pixels as cairo's recording of the drawing (on white, or transparent)."""
    surface_class = _recording_surface()  # first: it sets cairo's bindings up before cairosvg is imported
    import cairosvg.parser

    try:
        tree = cairosvg.parser.Tree(bytestring=svg.encode(), url=base_url, url_fetcher=make_url_fetcher(root))
        surface = surface_class(tree, None, dpi, output_width=width, output_height=height,
                                background_color=None if transparent else "white")
    except RenderFailure:
        raise
    except Exception as exc:  # cairosvg and its XML parser raise many types for bad SVG
        raise RenderFailure(f"cairosvg could not draw the SVG: {type(exc).__name__}: {exc}") from None
    return CardVectors(surface.cairo, (surface.width, surface.height), (width, height), transparent)


class CardVectors:
    """A card as cairo recorded it being drawn: replayed into its own pixels (the same pixels as drawing the SVG
    straight into them), or into a smaller picture drawn from the vectors, not resampled from the pixels (a TTS
    sheet cell: sharp text, and ~2 ms where resampling the pixels took ~9)."""

    def __init__(self, recording: Any, drawn_size: tuple[int, int], size: tuple[int, int], transparent: bool) -> None:
        self.recording, self.drawn_size, self.size, self.transparent = recording, drawn_size, size, transparent

    def image(self) -> Any:
        """The card's pixels: a Pillow image of its size, RGB on white or RGBA."""
        import cairocffi

        surface = cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, *self.drawn_size)
        self._replay(surface, 1.0, 1.0, 0.0, 0.0)
        # On a white background every pixel is opaque, so cairo's premultiplied BGRA reads as plain BGRX.
        image = _pixels(surface, ("RGBA", "BGRa") if self.transparent else ("RGB", "BGRX"))
        return image if image.size == self.size else image.resize(self.size)

    def scaled(self, size: tuple[int, int], box: tuple[float, float, float, float]) -> Any:
        """The part `box` (left, top, right, bottom, in the card's pixels) drawn to fill `size`, in RGB."""
        import cairocffi

        left, top, right, bottom = box
        scale_x, scale_y = self.drawn_size[0] / self.size[0], self.drawn_size[1] / self.size[1]
        surface = cairocffi.ImageSurface(cairocffi.FORMAT_RGB24, *size)
        self._replay(surface, size[0] / ((right - left) * scale_x), size[1] / ((bottom - top) * scale_y),
                     left * scale_x, top * scale_y)
        return _pixels(surface, ("RGB", "BGRX"))

    def _replay(self, surface: Any, scale_x: float, scale_y: float, left: float, top: float) -> None:
        import cairocffi

        context = cairocffi.Context(surface)
        context.scale(scale_x, scale_y)
        context.translate(-left, -top)
        context.set_source_surface(self.recording)
        context.paint()
        surface.flush()


def _pixels(surface: Any, modes: tuple[str, str]) -> Any:
    """A cairo image surface's pixels as a Pillow image, unpacked straight from cairo's buffer into an image not
    filled first (Image.frombuffer copied the buffer to bytes and filled a new image first: ~1 ms a card)."""
    from PIL import Image

    image = Image.new(modes[0], (surface.get_width(), surface.get_height()), None)
    image.frombytes(surface.get_data(), "raw", modes[1], surface.get_stride(), 1)
    return image


def draw_svg(svg: str, width: int, height: int, dpi: int, root: Path, base_url: str, transparent: bool = False):
    """Draw SVG text to a Pillow image of exactly width x height pixels (RGB on white, or RGBA)."""
    return record_svg(svg, width, height, dpi, root, base_url, transparent).image()


class DrawnCard:
    """A card image as the output stages' work gets it in a render worker: its pixels and its vectors, each made
    when first asked (a card found in the cache is decoded only for work that needs its pixels, and recorded
    from its SVG only for work that draws it again)."""

    def __init__(self, path: Path, drawing: Callable[[], Drawing], image: Any = None,
                 vectors: CardVectors | None = None) -> None:
        self.path, self.drawing, self._image, self._vectors = path, drawing, image, vectors

    @property
    def image(self) -> Any:
        """The card's pixels (a Pillow image)."""
        if self._image is None:
            from PIL import Image

            with Image.open(self.path) as stored:
                stored.load()
                self._image = stored
        return self._image

    @property
    def vectors(self) -> CardVectors:
        """The card's drawing as cairo recorded it (`drawing()` says how it is drawn: asked only now)."""
        if self._vectors is None:
            self._vectors = self.drawing().record()
        return self._vectors


def run_job(job: RasterJob) -> tuple[str, str | None]:
    """Render one job into its cache file (or take it from the cache), then do its work on the card; return
    (key, error message or None)."""
    path = Path(job.target)
    encoded: Callable[[], None] = lambda: None  # noqa: E731  returns once the PNG is written
    if job.cached:
        card = DrawnCard(path, lambda: job.drawing)
    else:
        try:
            vectors = job.drawing.record()
            card = DrawnCard(path, lambda: job.drawing, vectors.image(), vectors)
        except RenderFailure as exc:
            return job.key, str(exc)
        # Saving sets attributes on the image object: the thread saves a copy of its own (~1 ms), not the image
        # the work may save at the same time (a print JPEG).
        png = card.image.copy() if job.encode_beside else card.image
        # sealed: the build verifies it against this before using it
        encode = partial(write_sealed, path, lambda temp: png.save(temp, format="PNG", **PNG_OPTIONS))
        if job.encode_beside:
            encoded = _beside(encode)
        else:
            encode()
    try:
        for work in job.work:
            work(card)
    finally:
        encoded()
    return job.key, None


def _beside(task: Callable[[], None]) -> Callable[[], None]:
    """Start `task` in a thread of its own (Pillow lets go of the GIL while it encodes: the thread uses a core
    this process would leave idle); return what waits for it to end and raises its error.

    The thread ends with the job: a process with a thread running cannot fork render workers safely."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            task()
        except BaseException as exc:  # noqa: BLE001  raised in the job's thread by the waiting
            errors.append(exc)

    thread = threading.Thread(target=run, name="cardgen-encode", daemon=True)
    thread.start()

    def wait() -> None:
        thread.join()
        if errors:
            raise errors[0]

    return wait


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


def _start_worker(parent: int, held: Any = None, modules: Sequence[str] = ()) -> None:
    """Set a render worker up while the build is still loading the game: import and configure cairosvg (parsing
    cairo's C declarations is most of it), draw a first small picture and encode it, and import `modules` (those
    of the output stages, whose card work comes with the jobs), so that its first card costs a card. A worker
    `held` back (see `RenderPool`) first waits until the build wants it."""
    _follow_the_build(parent)
    if held is not None and not held.wait_turn():
        return  # the build ended without needing it: it takes no job, and ends at the pool's shutdown
    warm_up(modules)


def warm_up(modules: Sequence[str] = ()) -> None:
    """Make this process ready to draw a card at the cost of a card: import and configure cairosvg (parsing cairo's
    C declarations is most of it), draw a first small picture and encode it, and import `modules` (those of the
    output stages, whose card work comes with the jobs). A render worker does it as it starts; `cardgen watch`
    once it watches, for the card of the first edit it draws itself (~0.15 s, then not again)."""
    import importlib
    import io

    _setup_cairosvg()
    try:
        draw_svg(_WARM_UP_SVG, 8, 8, 96, Path(os.sep), "file:///").save(io.BytesIO(), format="PNG", **PNG_OPTIONS)
        for name in modules:  # else imported while unpickling the first job: ~25 ms on the way to an edit's card
            importlib.import_module(name)
    except Exception:  # noqa: BLE001  a worker that fails to start would break the pool: its first card says why
        pass


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

    def __init__(self, workers: int, early: int, context: Any, modules: Sequence[str] = ()) -> None:
        self._held = _HeldBack(context, workers, early)
        super().__init__(max_workers=workers, mp_context=context, initializer=_start_worker,
                         initargs=(os.getpid(), self._held, tuple(modules)))

    def grow(self) -> None:
        """Let every held worker set up and take jobs."""
        self._held.release(wanted=True)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """End the pool; held workers that were never wanted end without setting anything up."""
        self._held.release(wanted=False)
        super().shutdown(wait, cancel_futures=cancel_futures)


@contextmanager
def started_workers(workers: int, early: int | None = None, modules: Sequence[str] = ()
                    ) -> Iterator[RenderPool | None]:
    """Render workers forked now, before the game is loaded, validated and planned: the first `early` (default:
    all) set cairosvg up (and import `modules`) on the other core meanwhile, and `run_jobs` gives them the jobs,
    letting the others start too when there are many (None with one worker, or when forking is not safe: another
    thread runs, as in `cardgen watch`; `run_jobs` then starts its own).

    Leaving the block drops the jobs not started and waits for the workers to end.
    """
    import multiprocessing
    import threading

    if workers <= 1 or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield None
        return
    context = multiprocessing.get_context("fork")
    pool = _started(lambda: RenderPool(workers, min(early or workers, workers), context, modules))
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


def run_jobs(jobs: list[RasterJob], workers: int, on_done: Callable[[str, str | None], None],
             begin: Callable[[], None] = lambda: None, pool: RenderPool | None = None) -> None:
    """Render jobs: in `pool` when given (see `started_workers`), else in a process pool started here when there
    are several workers and enough work, else in this process.

    `begin` is called once the workers exist (a progress bar thread must not run while they fork).
    """
    if pool is not None:
        _run_in(pool, jobs, on_done, begin)
        return
    if workers <= 1 or len(jobs) < 4:
        begin()
        for job in jobs:
            on_done(*run_job(job))
        return
    import multiprocessing
    import threading

    _setup_cairosvg()  # imported once here, not once per worker: forked workers share it
    # fork is cheap (no re-import), but forking while other threads run can deadlock: spawn then.
    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
        else "spawn"
    context = multiprocessing.get_context(method)
    with _started(lambda: ProcessPoolExecutor(min(workers, len(jobs)), context, _follow_the_build,
                                              (os.getpid(),))) as started:
        _run_in(started, jobs, on_done, begin)


def _run_in(pool: ProcessPoolExecutor, jobs: list[RasterJob], on_done: Callable[[str, str | None], None],
            begin: Callable[[], None]) -> None:
    """Render jobs in a started pool, calling `on_done` in this process as each one ends."""
    from concurrent.futures.process import BrokenProcessPool

    futures = []
    if isinstance(pool, RenderPool) and len(jobs) >= _MANY_JOBS:
        pool.grow()
    try:
        futures = [pool.submit(run_job, job) for job in jobs]
        begin()
        for future in as_completed(futures):
            on_done(*future.result())
    except BrokenProcessPool:  # a worker was killed (out of memory, by hand): said in one line, not a traceback
        raise CardgenError("a drawing process stopped unexpectedly (killed, or out of memory); build again, or "
                           "with --jobs 1 to draw in one process") from None
    except BaseException:  # the build stops: the jobs not started yet are not drawn for nothing
        for future in futures:
            future.cancel()
        raise
