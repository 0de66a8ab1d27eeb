"""The print PDF's work on card images in the render workers of a build (see `PrintStage.card_work`): the JPEG of
a card image, and the streams of an image with transparency, each kept in a cache by the image's content hash.

The workers unpickle this work with every job: this module imports nothing of the pipeline (no manifest, pydantic
or reportlab; PIL only where an image file is read), so that a worker does not load the whole pipeline to draw an
edit's card.
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cardgen.core.storage import Cache

if TYPE_CHECKING:
    from cardgen.raster.render import DrawnCard

try:  # ISA-L's deflate: a 400 x 300 mm board's 12.6 MB of colour in ~2 ms, not ~18 (zlib's level 1), as large
    from isal.isal_zlib import compress as deflate
except ImportError:  # (a platform without its wheel) the same streams' pixels, from zlib
    from zlib import compress as deflate


class _CachedFromCard:
    """What the print's card work shares: its own cache folder, an entry keyed by the card image's content hash
    (and `_keyed_also`) with this module's code, and `make` called in a render worker when the entry is missing."""

    out_root: Path
    key: str  # the card image's content hash
    folder: ClassVar[str]  # its cache's folder and file suffix
    suffix: ClassVar[str]

    @property
    def cache(self) -> Cache:
        """The cache of this kind of work."""
        return Cache(self.out_root, self.folder, self.suffix)

    def _keyed_also(self) -> str:
        """What the entry is keyed by beyond the image and the code (nothing by default)."""
        return ""

    @property
    def entry(self) -> str:
        """Its key in the cache: the image, what `_keyed_also` adds and the code that makes it."""
        from cardgen.core.bundled import code_digest

        return hashlib.sha256(f"{code_digest(__name__)}/{self.key}{self._keyed_also()}".encode()).hexdigest()[:32]

    def __call__(self, card: DrawnCard) -> None:
        """Do the work in a render worker (see `make`), unless the cache has it."""
        if not self.cache.has(self.entry):
            self.make(card.image)

    def make(self, picture: Any) -> None:
        """Make the cache entry from a card image."""
        raise NotImplementedError


@dataclass(frozen=True)
class PrintJPEG(_CachedFromCard):
    """A card image as the JPEG a print PDF with `images: jpeg` embeds, kept in the cache by its content hash
    and quality; made in the render workers while the card is in memory (see `PrintStage.card_work`)."""

    out_root: Path
    key: str  # the card image's content hash
    quality: int
    folder: ClassVar[str] = "print-jpeg"
    suffix: ClassVar[str] = ".jpg"

    def _keyed_also(self) -> str:
        """The quality."""
        return f"/{self.quality}"

    def make(self, picture: Any) -> None:
        """Encode a card image missing from the cache (opaque images only: transparency needs PNG)."""
        if picture.mode in ("RGB", "L"):
            # 4:4:4 chroma keeps coloured text edges sharp.
            self.cache.write(self.entry, lambda temp: picture.save(temp, "JPEG", quality=self.quality,
                                                                   subsampling=0, optimize=True))

    def path(self, source: Path) -> Path:
        """The JPEG of the card image file `source` (made now when missing); `source` itself when it has
        transparency."""
        if not self.cache.has(self.entry):
            from PIL import Image

            with Image.open(source) as picture:
                picture.load()
                self.make(picture)
        return self.cache.path(self.entry) if self.cache.has(self.entry) else source


@dataclass(frozen=True)
class MaskedImage(_CachedFromCard):
    """A card image with transparency (a token, a board) as the streams a PDF embeds: its colours and, unless
    every pixel is opaque, its alpha as a soft mask, each Flate-compressed. Made in the render workers while
    the card is in memory (see `PrintStage.card_work`) and kept in the cache by the image's content hash (`entry`),
    so that writing a PDF only reads them."""

    out_root: Path
    key: str  # the card image's content hash
    folder: ClassVar[str] = "print-masked"
    suffix: ClassVar[str] = ".bin"

    def make(self, picture: Any) -> None:
        """Compress the streams of a card image missing from the cache, with an alpha channel (others are
        embedded otherwise)."""
        if picture.mode == "RGBA":
            # Level 1 (`deflate`): Scrapbots' mat's colour is a stream of 0.22 MB, not 0.15 (zlib's level 6, 42 ms
            # against zlib's level 1's 18): most of a cold 20-card build's print work above the floor's. Its colour
            # packed straight from the RGBA pixels (~3 ms), not converted to an RGB image first (~30 ms).
            colour = deflate(picture.tobytes("raw", "RGB"), 1)
            alpha = picture.getchannel("A")
            mask = b"" if alpha.getextrema() == (255, 255) else deflate(alpha.tobytes(), 1)
            header = struct.pack(">III", picture.width, picture.height, len(colour))
            self.cache.write(self.entry, lambda temp: temp.write_bytes(header + colour + mask))

    def streams(self, source: Path) -> tuple[int, int, bytes, bytes] | None:
        """(width, height, colour stream, alpha stream or b"") of the card image file `source`, made now when
        missing; None when the file has no alpha channel."""
        data = self.cache.read_bytes(self.entry)
        if data is None:
            from PIL import Image

            with Image.open(source) as picture:
                picture.load()
                self.make(picture)
            data = self.cache.read_bytes(self.entry)
        if data is None or len(data) < 12:
            return None
        width, height, length = struct.unpack(">III", data[:12])
        return width, height, data[12:12 + length], data[12 + length:]
