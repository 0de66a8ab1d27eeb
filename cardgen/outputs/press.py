"""Files for a press: RGB card images converted to CMYK through an ICC profile (littleCMS, by Pillow's ImageCms),
their total ink measured, and PDF/X-1a files of one card per page with the profile as the OutputIntent and a
TrimBox and BleedBox on every page.

A PDF/X-1a:2003 file (ISO 15930-4) holds only CMYK (or grey and spot) colour, no transparency, fonts embedded or
none (these pages are images only), a TrimBox or ArtBox on every page, an OutputIntent naming the printing
condition, `GTS_PDFXVersion` and `Trapped` in its Info dictionary, and a file ID.
"""
from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from PIL import Image, ImageCms

from cardgen.core.units import MM_PER_INCH

PT_PER_MM = 72 / MM_PER_INCH
PDFX_VERSION = "PDF/X-1a:2003"


@dataclass(frozen=True)
class Profile:
    """An ICC profile as read once: its bytes, which a file is converted with and embeds, and their digest, which it
    is keyed by (read again, a profile saved meanwhile would key one content and make another)."""

    data: bytes = field(repr=False, compare=False)
    digest: str

    @classmethod
    def read(cls, path: Path) -> Profile:
        """The profile a file holds, read now."""
        data = path.read_bytes()
        return cls(data, hashlib.sha256(data).hexdigest())


@lru_cache(maxsize=8)
def _transform(profile: Profile) -> ImageCms.ImageCmsTransform:
    """sRGB to the profile's CMYK, relative colorimetric with black point compensation (what prepress tools use
    for photographs and flat art alike: in-gamut colours stay as they are, the darkest RGB maps to the press's
    darkest black). Kept by the profile's content."""
    return ImageCms.buildTransform(ImageCms.createProfile("sRGB"), ImageCms.getOpenProfile(io.BytesIO(profile.data)),
                                   "RGB", "CMYK", renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC,
                                   flags=ImageCms.Flags.BLACKPOINTCOMPENSATION)


MAX_PROFILE_BYTES = 20_000_000  # press profiles are 0.5-5 MB; a file this big is not one


def check_profile(path: Path) -> str:
    """The description of the CMYK output ICC profile in a file; ValueError when the file is not one."""
    if path.stat().st_size > MAX_PROFILE_BYTES:
        raise ValueError(f"not an ICC profile (over {MAX_PROFILE_BYTES // 1_000_000} MB)")
    return describe(Profile.read(path))


def describe(profile: Profile) -> str:
    """The description of a CMYK output ICC profile; ValueError when it is not one."""
    try:
        opened = ImageCms.getOpenProfile(io.BytesIO(profile.data))
    except (ImageCms.PyCMSError, OSError) as exc:
        raise ValueError(f"not an ICC profile ({exc})") from None
    if opened.profile.xcolor_space.strip() != "CMYK":
        raise ValueError(f"an ICC profile of {opened.profile.xcolor_space.strip()} colour, not CMYK")
    return ImageCms.getProfileDescription(opened).strip()


def to_cmyk(image: Image.Image, profile: Profile, rich_black: tuple[int, int, int, int] | None = None) -> Image.Image:
    """An image in the profile's CMYK (transparency flattened onto white first: PDF/X-1a has none). With
    `rich_black` (C, M, Y, K in %), the image's black (RGB all at most 8 of 255) becomes that mix instead of the
    profile's darkest black: the mix a press asks for solid black areas."""
    if image.mode in ("RGBA", "LA", "P"):
        image = image.convert("RGBA")
        white = Image.new("RGBA", image.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, image)
    rgb = image.convert("RGB")
    converted = ImageCms.applyTransform(rgb, _transform(profile))
    assert converted is not None  # None only when converting in place
    return converted if rich_black is None else _with_rich_black(rgb, converted, rich_black)


def _with_rich_black(rgb: Image.Image, cmyk: Image.Image, mix: tuple[int, int, int, int]) -> Image.Image:
    import numpy

    black = numpy.asarray(rgb).max(axis=2) <= 8
    if not black.any():
        return cmyk
    pixels = numpy.array(cmyk)
    pixels[black] = [round(part * 255 / 100) for part in mix]
    return Image.fromarray(pixels, "CMYK")


def total_ink(image: Image.Image) -> float:
    """The most ink (C+M+Y+K, in %) of any pixel of a CMYK image."""
    import numpy

    return float(numpy.asarray(image, dtype=numpy.uint16).sum(axis=2).max()) * 100 / 255


@dataclass(frozen=True)
class Page:
    """One page: a CMYK image covering trim + bleed."""

    image: Image.Image
    trim_mm: tuple[float, float]
    bleed_mm: float


def write_pdfx(path: Path, pages: Iterable[Page], profile: Profile, condition: str, title: str) -> None:
    """Write a PDF/X-1a:2003 file of one image per page, with the profile as its OutputIntent (at a temporary
    path: its caller makes the write atomic).
    Each image is compressed into the file as its page is drawn, and an image already in it is used again."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    buffer = io.BytesIO()
    canvas = Canvas(buffer, pageCompression=1, invariant=1)
    canvas.setTitle(title)
    for page in pages:
        bleed = page.bleed_mm * PT_PER_MM
        width, height = ((side + 2 * page.bleed_mm) * PT_PER_MM for side in page.trim_mm)
        canvas.setPageSize((width, height))
        canvas.setBleedBox((0, 0, width, height))
        canvas.setTrimBox((bleed, bleed, width - bleed, height - bleed))
        canvas.drawImage(ImageReader(page.image), 0, 0, width, height)  # one image object per content
        canvas.showPage()
    canvas.save()
    data = _with_output_intent(buffer.getvalue(), profile, condition, title)
    path.write_bytes(data)


def _with_output_intent(pdf: bytes, profile: Profile, condition: str, title: str) -> bytes:
    """The PDF with the PDF/X OutputIntent (the ICC profile embedded) and the PDF/X keys of its Info dictionary."""
    from pypdf import PdfWriter
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, NumberObject, StreamObject, TextStringObject

    writer = PdfWriter(clone_from=io.BytesIO(pdf))
    icc = StreamObject()
    icc.set_data(profile.data)
    icc[NameObject("/N")] = NumberObject(4)
    intent = DictionaryObject({
        NameObject("/Type"): NameObject("/OutputIntent"),
        NameObject("/S"): NameObject("/GTS_PDFX"),
        NameObject("/OutputConditionIdentifier"): TextStringObject(condition),
        NameObject("/RegistryName"): TextStringObject("http://www.color.org"),
        NameObject("/Info"): TextStringObject(describe(profile)),
        NameObject("/DestOutputProfile"): writer._add_object(icc),  # pypdf has no public way to add an indirect object
    })
    writer.root_object[NameObject("/OutputIntents")] = ArrayObject([intent])
    now = datetime.now(timezone.utc).strftime("D:%Y%m%d%H%M%SZ")
    writer.add_metadata({"/GTS_PDFXVersion": PDFX_VERSION, "/Title": title, "/Trapped": NameObject("/False"),
                         "/CreationDate": now, "/ModDate": now})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
