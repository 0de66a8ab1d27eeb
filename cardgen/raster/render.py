"""SVG -> pixels: cairosvg draws to a surface, Pillow encodes; results are cached by content.

A card is drawn again only when its SVG text, its pixel size, the renderer or a file it uses
(an image, a font) changed. Cache files are written to a temporary name and renamed, so an
interrupted build never leaves a half-written PNG behind. The processes that draw the jobs are `raster/pool.py`'s.
"""
from __future__ import annotations

import copy
import hashlib
import importlib
import struct
import sys
import threading
import types
import urllib.parse
import zlib
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from cardgen.core.errors import CardgenError, saved_meanwhile
from cardgen.core.storage import write_sealed_bytes
from cardgen.load.svgart import is_svg as _is_svg

# Pillow's PNG options where it encodes a card (see `encode_png`): zlib level 1 with the run-length strategy, which
# packs the rows Pillow filters smaller and faster than the default strategy (20 ms and 151 kB against 25 and 171).
PNG_OPTIONS = {"compress_level": 1, "compress_type": zlib.Z_RLE}
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_COLOURS = {"RGB": (3, 2), "RGBA": (4, 6)}  # a mode's bytes per pixel and PNG colour type
_SAMPLE_BANDS, _SAMPLE_ROWS = 4, 16  # the rows `encode_png` compresses both ways to choose
_STRIP_ROWS = 64  # the rows `encode_png` deflates at a time


# An output stage's work on one card image, done in the render worker that draws it while the image is in memory
# (a TTS sheet cell, a sheet its cell completes). It is given the `DrawnCard` and must be picklable.
CardWork = Callable[["DrawnCard"], None]


@dataclass(frozen=True)
class Drawing:
    """How one card image is drawn: its SVG text, its pixel size and resolution, the workspace its files are read
    from, its fonts folders, whether it keeps its transparency (tokens and boards), and the digest of each image
    file it draws as its cache key was made (`files`: path, SHA-256)."""

    svg: str
    width: int
    height: int
    dpi: int
    root: str
    base_url: str
    font_dirs: tuple[str, ...]
    transparent: bool = False
    files: tuple[tuple[str, str], ...] = ()

    def draw(self, path: Path) -> DrawnCard:
        """Draw the SVG: the card whose file will be `path` (RenderFailure when cairosvg cannot)."""
        from cardgen.load.fonts import configure_fontconfig

        configure_fontconfig([Path(d) for d in self.font_dirs])
        surface = draw_surface(self.svg, self.width, self.height, self.dpi, Path(self.root), self.base_url,
                               self.transparent, dict(self.files))
        image = _image(surface, (self.width, self.height), self.transparent)
        # On white, the drawn pixels are the card's opaque pixels as cairo holds them (see `DrawnCard.opaque`).
        return DrawnCard(path, image, None if self.transparent or image.size != surface_size(surface) else surface)


@dataclass(frozen=True)
class RasterJob:
    """Everything a worker needs to turn one SVG into one cached PNG, and the output stages' work on it.

    When the PNG is cached already (`cached`), the work gets the cached image. With
    `encode_beside`, the PNG is encoded in a thread of its own while the work is done (a build drawing fewer
    images than it has cores: an edit's card). With `keep`, the card is drawn before its work is known (`build.early`:
    while the build still validates) and kept in the worker for the job that brings the work (see `_KEPT`).
    """

    key: str
    drawing: Drawing
    target: str
    cached: bool = False
    work: tuple[CardWork, ...] = ()
    encode_beside: bool = False
    keep: bool = False


class RenderFailure(Exception):
    """cairosvg could not draw an SVG; the message says why."""


def look_key(svg: str, width: int, height: int, dpi: int, files: Mapping[Path, str]) -> str:
    """What a card image shows: a hash of its SVG text, pixel size and the files it draws (`files`: each file's
    `file_digest`, its content), but not of the code that draws it. The build record keeps it for the change
    report: a new cardgen draws every card again (`content_key`), and reports as changed only the cards whose
    drawing differs."""
    digest = hashlib.sha256()
    for part in (f"{width}x{height}@{dpi}", svg):
        digest.update(part.encode())
        digest.update(b"\0")
    for path in sorted(files):
        digest.update(f"{path.name}:{files[path]}".encode())
    return digest.hexdigest()[:32]


def content_key(look: str) -> str:
    """The cache key of a rendered image: what it shows (`look_key`), the code that draws it (the render workers'
    closure: the SVG's text is in the look, so the code that makes it is not) and cairosvg's version."""
    from cardgen.core.bundled import code_digest

    code = code_digest("cardgen.raster.pool")
    return hashlib.sha256(f"{code}\0{_drawing_library_version()}\0{look}".encode()).hexdigest()[:32]


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


def make_url_fetcher(root: Path, digests: Mapping[str, str] | None = None) -> Callable[[str, str], bytes]:
    """A cairosvg url_fetcher that serves data: URLs and files inside the project, nothing else; a file `digests`
    names (by its resolved path) only while its bytes are those of its digest.

    The digests are those the card image's cache key was made of: a file saved after that (during the build) would
    be drawn into an image kept under the key of its earlier content, and served the next time the file holds that
    content again. The drawing fails instead, saying so; the next build draws the file as it is then."""
    root, digests = root.resolve(), digests or {}

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
        data = path.read_bytes()
        expected = digests.get(str(path))
        if expected is not None and hashlib.sha256(data).hexdigest() != expected:
            raise RenderFailure(saved_meanwhile(f"image '{path}'"))
        return data

    return fetch


def _prepared_svg(data: bytes, url: str) -> bytes:
    """An SVG image as cairosvg is given it: its drawing alone, sized by its viewBox (see `svgart.document`)."""
    from cardgen.load.svgart import document, inflated, read_art

    try:
        return document(read_art(inflated(data, url[:80]) if data.startswith(b"\x1f\x8b") else data, url[:80]))
    except CardgenError as exc:
        raise RenderFailure(f"cannot draw the SVG image {url[:80]}: {exc.problems[0].message}") from None


def setup_cairosvg() -> None:
    """Import and configure cairosvg in this process (once is enough; a forked render worker inherits it)."""
    from cardgen.raster.cairo_bindings import import_cairocffi

    import_cairocffi()  # before cairosvg imports it: with cairo's declarations kept, not parsed again
    import cairocffi

    with _urllib_request_deferred():
        import cairosvg.surface

    # geometricPrecision keeps glyph advances unhinted (widths match the font's metrics);
    # cairo 1.16 garbles ANTIALIAS_BEST, so ask for grey antialiasing instead.
    cairosvg.surface.TEXT_ANTIALIAS["geometricPrecision"] = cairocffi.ANTIALIAS_GRAY
    paint_mask = cairosvg.surface.paint_mask
    if not getattr(paint_mask, "by_luminance", False):
        cairosvg.surface.paint_mask = partial(_paint_luminance_mask, paint_mask)
        cairosvg.surface.paint_mask.by_luminance = True
    if not getattr(cairosvg.surface.text, "outlined_for_strokes", False):
        _outline_text_for_strokes(cairosvg.surface)
    if not isinstance(cairosvg.surface.copy, _CursorCopy):
        cairosvg.surface.copy = _CursorCopy()
    if not hasattr(cairosvg.helpers.normalize, "cache_info"):
        _normalized_once(cairosvg.helpers)
        _parsed_once(cairosvg.url.parse_url)


@contextmanager
def _urllib_request_deferred() -> Iterator[None]:
    """Within the block, `from urllib.request import Request, urlopen` (cairosvg.url's, as cairosvg is imported)
    gets stand-ins that import urllib.request when called: importing it pulls in http.client, ssl and email, ~11 ms
    of CPU in each render worker's set-up, for cairosvg's own URL reader, which cardgen's `make_url_fetcher`
    replaces in every drawing. After the block, an import of urllib.request gets the real module; a thread that
    imports it meanwhile gets the stand-in, whose every other name is the real module's (imported then)."""
    name = "urllib.request"
    if name in sys.modules:
        yield
        return
    stand_in = types.ModuleType(name, "cardgen's stand-in while cairosvg is imported (see `setup_cairosvg`)")

    def real() -> Any:
        if sys.modules.get(name) is stand_in:  # (not imported through the stand-in itself)
            del sys.modules[name]
        return importlib.import_module(name)

    stand_in.urlopen = lambda *args, **kwargs: real().urlopen(*args, **kwargs)  # type: ignore[attr-defined]
    stand_in.Request = lambda *args, **kwargs: real().Request(*args, **kwargs)  # type: ignore[attr-defined]

    def other(attribute: str) -> Any:
        if attribute.startswith("__"):  # what the import system asks of any module (`__path__`...)
            raise AttributeError(attribute)
        return getattr(real(), attribute)

    stand_in.__getattr__ = other  # type: ignore[method-assign]
    sys.modules[name] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]


def _outline_text_for_strokes(surface_module: Any) -> None:
    """Have cairosvg make a text node's glyph outlines only when they are stroked.

    cairosvg draws every text and tspan node twice: first as glyph outlines added to the path (`text` called as the
    node's drawer), then as glyphs in the fill colour (`text(..., draw_as_text=True)`), and then strokes the path.
    With no stroke the path is stroked in a clear colour, which cairo skips: the outlines, made a letter at a time,
    are thrown away (~2.2 ms of a gen1000 card's ~13.5). They are still made wherever they can show or count: a
    stroke, a fill whose gradient or pattern is sized by the text's box (measured as the outlines are made), a node
    not filled after (hidden, in a clip path: the path is the clip, and the cursor moves on from the outlines), a
    textPath itself.
    """
    drawn = surface_module.text

    def text(surface: Any, node: Any, draw_as_text: bool = False) -> None:
        if draw_as_text or not _outlines_unseen(surface, node):
            drawn(surface, node, draw_as_text)

    text.outlined_for_strokes = True  # type: ignore[attr-defined]
    # cairosvg tells a text node by its drawer being `text` (surface.draw): every entry and the name are replaced
    surface_module.TAGS.update({tag: text for tag, drawer in surface_module.TAGS.items() if drawer is drawn})
    surface_module.text = text


def _normalized_once(helpers: Any) -> None:
    """Have cairosvg normalise each text of values once a process: its `normalize` (three regular expression
    substitutions) is a function of its text alone, called ~150 times a gen1000 card (each length with a unit, the
    transforms, a text's x, y, dx and dy, a path's data, a dash array), mostly with the same few texts: ~1 ms of a
    card's drawing. Every cairosvg module that imported it by name gets the kept one."""
    _rebind("normalize", helpers.normalize, lru_cache(maxsize=NORMALIZED_AT_MOST)(helpers.normalize))


NORMALIZED_AT_MOST = 1024  # texts kept by cairosvg's `normalize` (`_normalized_once`): a path's data is a few kB


def _parsed_once(parse_url: Callable[..., Any]) -> None:
    """Have cairosvg parse each URL given without a base once a process: `draw` parses a node's `mask`, `filter` and
    `clip-path` (most often none: `urlparse('')`) and a text its path's link, ~130 times a gen1000 card, each a
    function of its text alone (a URL with a base is joined to the base by looking at the file system: parsed as
    before). The parsed URL is an immutable named tuple, shared by its callers."""
    kept = lru_cache(maxsize=NORMALIZED_AT_MOST)(parse_url)

    def parsed(url: Any, base: Any = None) -> Any:
        return kept(url) if base is None and (url is None or type(url) is str) else parse_url(url, base)

    parsed.__wrapped__ = parse_url  # type: ignore[attr-defined]
    _rebind("parse_url", parse_url, parsed, besides="cairosvg.url")


def _rebind(name: str, function: Callable[..., Any], kept: Callable[..., Any], besides: str = "") -> None:
    """Give every cairosvg module that imported `function` by `name` (but `besides`, its own) `kept` instead."""
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("cairosvg.") and module_name != besides and \
                getattr(module, name, None) is function:
            vars(module)[name] = kept


class _CursorCopy:
    """The `copy` module as cairosvg's surface module sees it: `deepcopy` of the text cursor that `draw` saves before
    every node (its position, a list or tuple of numbers; its shift, a list of numbers; the width along a text path, a
    number) copied by hand: ~6-8 us a node as `copy.deepcopy` walks it, ~1.5 here (a gen1000 card has ~46 nodes).
    The copy is the same (numbers are not copied by `deepcopy` either); any other value is deep-copied as before."""

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value: Any, memo: Any = None) -> Any:
        """`copy.deepcopy`, quick for cairosvg's text cursor."""
        if type(value) is tuple and len(value) == 3:
            position, shift, width = value
            if type(position) in _POINTS and type(shift) is list and _numbers(*position, *shift, width):
                return list(position) if type(position) is list else position, list(shift), width
        return copy.deepcopy(value, memo)


_POINTS, _NUMBERS = (list, tuple), frozenset((int, float))


def _numbers(*values: Any) -> bool:
    """Whether every value is a plain int or float."""
    return _NUMBERS.issuperset(map(type, values))


def _outlines_unseen(surface: Any, node: Any) -> bool:
    """Whether the glyph outlines cairosvg makes of a text node are stroked in no colour and read by nothing: a
    text or tspan with no stroke, filled after (visible, not in a clip path) with a colour."""
    return (surface.stroke_and_fill and node.tag in ("text", "tspan") and node.get("stroke") in (None, "", "none")
            and not str(node.get("fill", "")).lstrip().startswith("url(")
            and node.get("display", "inline") != "none" and node.get("visibility", "visible") != "hidden")


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

        width, height = surface_size(self._context.get_target())  # the card's recording surface
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


def draw_svg(svg: str, width: int, height: int, dpi: int, root: Path, base_url: str, transparent: bool = False):
    """Draw SVG text to a Pillow image of exactly width x height pixels (RGB on white, or RGBA)."""
    return _image(draw_surface(svg, width, height, dpi, root, base_url, transparent), (width, height), transparent)


@lru_cache(maxsize=1)
def _recording_surface() -> type:
    """cairosvg's PNG surface drawing into a cairo recording surface of the same size, not into pixels."""
    setup_cairosvg()
    import cairocffi
    import cairosvg.surface

    class RecordingSurface(cairosvg.surface.PNGSurface):
        def _create_surface(self, width: float, height: float) -> tuple[Any, int, int]:
            width, height = int(round(width)), int(round(height))  # as PNGSurface rounds them
            return cairocffi.RecordingSurface(cairocffi.CONTENT_COLOR_ALPHA, (0, 0, width, height)), width, height

    return RecordingSurface


def draw_surface(svg: str, width: int, height: int, dpi: int, root: Path, base_url: str,
                 transparent: bool = False, digests: Mapping[str, str] | None = None) -> Any:
    """Draw SVG text into a cairo image surface of about width x height pixels (as cairosvg rounds them), on white
    or transparent; the image files of `digests` only as they were (see `make_url_fetcher`).

    Drawn as cairo's recording first, then replayed into the pixels: cairosvg draws a pattern or a mask into an SVG
    surface, which painted straight into pixels is rasterised at the pattern's own size (a 4-unit stripe pattern
    came out blurred, tests/test_svg_art.py); replayed from a recording, it is drawn at the card's resolution. It
    costs no more than drawing straight (s19-c1k measured 21.3-21.6 against 21.5-21.7 ms a gen1000 card).
    """
    surface_class = _recording_surface()  # first: it sets cairo's bindings up before cairosvg is imported
    import cairocffi
    import cairosvg.parser

    try:
        tree = cairosvg.parser.Tree(bytestring=svg.encode(), url=base_url, url_fetcher=make_url_fetcher(root, digests))
        drawn = surface_class(tree, None, dpi, output_width=width, output_height=height,
                              background_color=None if transparent else "white")
    except RenderFailure:
        raise
    except Exception as exc:  # cairosvg and its XML parser raise many types for bad SVG
        raise RenderFailure(f"cairosvg could not draw the SVG: {type(exc).__name__}: {exc}") from None
    surface = cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, drawn.width, drawn.height)
    context = cairocffi.Context(surface)
    context.set_source_surface(drawn.cairo)
    context.paint()
    surface.flush()
    return surface


def surface_size(surface: Any) -> tuple[int, int]:
    """A cairo image surface's size in pixels, or a recording surface's (a card being drawn, `draw_surface`)."""
    import cairocffi

    if isinstance(surface, cairocffi.RecordingSurface):
        extents = surface.get_extents()
        return int(extents[2]), int(extents[3])
    return surface.get_width(), surface.get_height()


def _image(surface: Any, size: tuple[int, int], transparent: bool) -> Any:
    """A drawn surface's pixels as a Pillow image of `size`."""
    # On a white background every pixel is opaque, so cairo's premultiplied BGRA reads as plain BGRX.
    image = _pixels(surface, ("RGBA", "BGRa") if transparent else ("RGB", "BGRX"))
    return image if image.size == size else image.resize(size)


def scaled(card: DrawnCard, size: tuple[int, int], box: tuple[float, float, float, float]) -> Any:
    """The part `box` (left, top, right, bottom) of a card's opaque pixels resampled to `size` by cairo (bilinear),
    in RGB.

    A TTS sheet cell (a card ~1.85 times larger than its cell, its bleed cut off): ~1 ms, where drawing it again
    from the card's recorded vectors took ~2 ms, and Pillow's resampling 3.6 (BOX) to 11 ms (LANCZOS) for the same
    difference from the drawn cell (~3/255 on average, at edges).
    """
    import cairocffi

    left, top, right, bottom = box
    surface = cairocffi.ImageSurface(cairocffi.FORMAT_RGB24, *size)
    context = cairocffi.Context(surface)
    context.scale(size[0] / (right - left), size[1] / (bottom - top))
    context.translate(-left, -top)
    context.set_source_surface(card.opaque)
    context.get_source().set_filter(cairocffi.FILTER_BILINEAR)
    context.paint()
    surface.flush()
    return _pixels(surface, ("RGB", "BGRX"))


def _pixels(surface: Any, modes: tuple[str, str]) -> Any:
    """A cairo image surface's pixels as a Pillow image, unpacked straight from cairo's buffer into an image not
    filled first (Image.frombuffer copied the buffer to bytes and filled a new image first: ~1 ms a card)."""
    from PIL import Image

    image = Image.new(modes[0], (surface.get_width(), surface.get_height()), None)
    image.frombytes(surface.get_data(), "raw", modes[1], surface.get_stride(), 1)
    return image


def encode_png(image: Any) -> bytes:
    """A card image (RGB or RGBA) as the bytes of a PNG file: of its rows left unfiltered and deflated at level 1
    where that packs a sample of its rows no larger than Pillow's encoder does, else Pillow's (`PNG_OPTIONS`).

    Pillow filters every row four ways to pick one, then deflates: most of a card's encoding time (a gen1000
    card: 17.9 ms, 161 kB). Card art is mostly flat colour, which deflate packs as well unfiltered: 9.0 ms and 129 kB
    with the choice (the pixels the same). Art with photographs packs worse unfiltered (a blurred noise picture: 1.2
    MB against 566 kB): the sample sends it to Pillow, as before. The choice costs ~1.4 ms: a sample of 4 bands of 16
    rows encoded both ways. The rows are deflated a strip at a time: a board's pixels are not copied whole.
    """
    import io

    if image.mode not in _PNG_COLOURS:
        return _pillow_png(image)
    bpp, colour = _PNG_COLOURS[image.mode]
    width, height = image.size
    sample = _sample(image)
    buffer = io.BytesIO()
    sample.save(buffer, format="PNG", **PNG_OPTIONS)
    if len(zlib.compress(_unfiltered(sample, bpp), 1)) > len(buffer.getvalue()):
        return _pillow_png(image)
    compressor = zlib.compressobj(1)
    data = [compressor.compress(_unfiltered(image.crop((0, top, width, min(top + _STRIP_ROWS, height))), bpp))
            for top in range(0, height, _STRIP_ROWS)]
    data.append(compressor.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return b"".join([_PNG_SIGNATURE, _png_chunk(b"IHDR", header), _png_chunk(b"IDAT", b"".join(data)),
                     _png_chunk(b"IEND", b"")])


def _sample(image: Any) -> Any:
    """`_SAMPLE_BANDS` bands of `_SAMPLE_ROWS` rows spread over an image (all of it when it has few rows)."""
    from PIL import Image

    if image.height <= _SAMPLE_BANDS * _SAMPLE_ROWS:
        return image
    step = image.height // _SAMPLE_BANDS
    sample = Image.new(image.mode, (image.width, _SAMPLE_BANDS * _SAMPLE_ROWS))
    for band in range(_SAMPLE_BANDS):
        sample.paste(image.crop((0, band * step, image.width, band * step + _SAMPLE_ROWS)), (0, band * _SAMPLE_ROWS))
    return sample


def _unfiltered(image: Any, bpp: int) -> bytes:
    """A PNG's filtered image data for an image's rows with the filter None: a 0 before the bytes of each row (the
    rows' bytes made the pixels of an "L" image one byte wider, its first column 0)."""
    from PIL import Image

    rows = Image.frombytes("L", (image.width * bpp, image.height), image.tobytes())
    data = Image.new("L", (rows.width + 1, rows.height), 0)
    data.paste(rows, (1, 0))
    return data.tobytes()


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(body, zlib.crc32(kind)))


def _pillow_png(image: Any) -> bytes:
    import io

    buffer = io.BytesIO()
    image.save(buffer, format="PNG", **PNG_OPTIONS)
    return buffer.getvalue()


class DrawnCard:
    """A card image as the output stages' work gets it in a render worker: its pixels, read from its file when first
    asked (a card found in the cache is decoded only for work that needs its pixels), and, drawn now on white, the
    cairo surface it was drawn into."""

    def __init__(self, path: Path, image: Any = None, drawn: Any = None) -> None:
        self.path, self._image, self._drawn = path, image, drawn
        self._opaque: Any = None

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
    def opaque(self) -> Any:
        """The card's pixels in RGB as a cairo RGB24 surface: a view of the surface it was drawn into (on white: the
        same bytes, its alpha unread), else its image's bytes (copying the drawn pixels out cost ~3x the resampling
        under load: a cell's largest cost)."""
        if self._opaque is None:
            import cairocffi

            if self._drawn is not None:
                data, stride = self._drawn.get_data(), self._drawn.get_stride()
            else:
                image = self.image if self.image.mode == "RGB" else self.image.convert("RGB")
                data, stride = bytearray(image.tobytes("raw", "BGRX")), image.width * 4
            width, height = self.image.size
            self._opaque = cairocffi.ImageSurface.create_for_data(data, cairocffi.FORMAT_RGB24, width, height, stride)
        return self._opaque


# The cards a render worker drew for a `RasterJob.keep`, by key, until the job of that key that brings their work
# takes one: its PNG is in the cache then, and the card is not drawn again (nor read back). That job goes to the
# same worker unless the build let its held workers go (see `pool.RenderPool`); the oldest are let go first.
_KEPT: dict[str, DrawnCard] = {}
KEPT_AT_MOST = 4


def run_job(job: RasterJob) -> tuple[str, str | None]:
    """Render one job into its cache file (or take it from the cache, or from the cards this worker keeps) and do its
    work on the card; return (key, error message or None).

    A card drawn now has its work done before its PNG is encoded (or beside it, in a thread): the work reads the
    drawn pixels while the processor's cache still holds them. After the PNG's encoding (which walks ~8 MB of a
    gen1000 card's pixels and rows) a TTS cell's resampling took ~1.0 ms, not ~0.67 (one process, 40 cards)."""
    path = Path(job.target)
    encoded: Callable[[], None] = lambda: None  # noqa: E731  writes the PNG, or returns once it is written
    kept = _KEPT.pop(job.key, None)
    if kept is not None:
        card = kept
    elif job.cached:
        card = DrawnCard(path)
    else:
        try:
            card = job.drawing.draw(path)
        except RenderFailure as exc:
            return job.key, str(exc)
        # Saving sets attributes on the image object: the thread saves a copy of its own (~1 ms), not the image
        # the work may save at the same time (a print JPEG).
        png = card.image.copy() if job.encode_beside else card.image
        encoded = _beside(partial(_store_png, path, png)) if job.encode_beside else partial(_store_png, path, png)
        if job.keep:
            _KEPT[job.key] = card
            while len(_KEPT) > KEPT_AT_MOST:
                del _KEPT[next(iter(_KEPT))]
    try:
        for work in job.work:
            work(card)
    finally:
        encoded()
    return job.key, None


def run_batch(jobs: list[RasterJob]) -> list[tuple[str, str | None]]:
    """Run jobs one after the other (a batch a render worker is sent at once: see `pool.batches`); their results."""
    return [run_job(job) for job in jobs]


def _store_png(path: Path, image: Any) -> None:
    """Encode a card's PNG into its cache entry, sealed (the build verifies it against the seal before using it)."""
    write_sealed_bytes(path, encode_png(image))


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
