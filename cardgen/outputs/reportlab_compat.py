"""Every private part of reportlab that cardgen uses, in one place (the print PDF of `cardgen.outputs.pdf`).

reportlab has no public way to embed an image it did not decode itself, to put a page's operators back, or to
write a document as it is formatted; these do it through its internals. pyproject.toml pins reportlab below its
next major version for them, and `tests/test_reportlab_compat.py` checks that each name below is still there with
the shape used here, so that an upgrade that changes one fails that test by name instead of the print PDF.

The private names, and why each is used:

- `Canvas._doc` (the canvas's `PDFDocument`): its `getXObjectName`, `idToObject`, `Reference` and `addForm`
  register an image XObject cardgen made (its own PNG data, or streams made by the render workers) once per
  document, as `Canvas.drawImage` does after decoding and compressing the file again (most of a PDF's writing
  time); its `getInternalFontName` is the footer font's name a page uses.
- `Canvas._setXObjects(image)`: hands the canvas an image XObject, as `drawImage` does.
- `Canvas._code`, `Canvas._formsinuse`: a page's operators and the forms it draws, kept after a page is drawn and
  put back on a later build instead of drawing the same page again.
- `PDFDocument.idToObjectNumberAndVersion` and `pdfdoc.PDFIndirectObject`: the object numbers of a file's images,
  kept after it is written, and their new versions formatted under those numbers (an incremental update:
  `cardgen.outputs.pdf_update`); `PDFImageXObject.smask` (public, but set by the code here) names an image's soft
  mask.
- `PDFImageXObject._filters`: the stream filters of an image given as Flate data.
- `PDFImageXObject._smask`: the soft mask image reportlab makes beside a picture with transparency (`mask="auto"`),
  which cardgen registers under a name by its content.
- `PDFImageXObject.format(document)` and `PDFStream.dictionary.dict`: an image object that writes a PNG's own
  compressed rows with the /DecodeParms they need, which reportlab's image object has no way to say.
- `pdfdoc.PDFFile`: the output collector class a document looks up by name when it saves; swapped for one that
  writes each object as it is formatted (its `strings` list, `write`, `add` and `format(document)` are its protocol).
- `pdfdoc.PDFIndirectObject` (looked up by name as a document saves: its `name`, `content` and `format`): swapped
  while streaming for one that hands a PNG image's object to the collector in pieces, its IDAT chunks unjoined
  (`PDFFile.offset` counted for them); only in a document whose `encrypt` is reportlab's `pdfdoc.NoEncryption`.
"""
from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, BinaryIO, Callable, Iterator, Union

from cardgen.outputs.pdf_update import image_pieces

Buffer = Union[bytes, memoryview]  # a piece of a stream


def xobject_name(pdf: Any, name: str) -> str:
    """The document's internal name of the image XObject `name`."""
    return str(pdf._doc.getXObjectName(name))


def is_registered(pdf: Any, internal_name: str) -> bool:
    """Whether the document holds an object of this internal name."""
    return internal_name in pdf._doc.idToObject


def register_image(pdf: Any, image: Any, internal_name: str) -> None:
    """Register an image XObject (its `name` set) on the canvas and in the document, as `drawImage` does."""
    pdf._setXObjects(image)
    pdf._doc.Reference(image, internal_name)
    pdf._doc.addForm(image.name, image)


def attach_soft_mask(pdf: Any, image: Any, mask: Any) -> None:
    """Give a registered image its soft mask image, registered once per document by the mask's name."""
    from reportlab.pdfbase.pdfdoc import PDFObjectReference

    mask_name = xobject_name(pdf, mask.name)
    image.smask = (PDFObjectReference(mask_name) if is_registered(pdf, mask_name)
                   else pdf._doc.Reference(mask, mask_name))


def picture_image(name: str, file: str) -> tuple[Any, Any | None]:
    """reportlab's image XObject of a picture file, as `drawImage` makes it, and the soft mask it made beside it for
    transparency (None without one), taken off it to be registered by its own name (see `attach_soft_mask`)."""
    from reportlab.pdfbase.pdfdoc import PDFImageXObject

    image = PDFImageXObject(name, file, mask="auto")
    mask = getattr(image, "_smask", None)
    if mask:
        del image._smask
    return image, mask or None


def png_image(name: str, width: int, height: int, idat: Callable[[], list[Buffer]]) -> Any:
    """reportlab's image XObject of an 8-bit RGB PNG's own IDAT data, which `idat()` gives (its chunks, in order) when
    the document is written (Flate with PNG row filters: predictor 15), so that its pixels are neither decoded nor
    held before."""
    image = _png_image_class()(name)
    image.width, image.height, image.idat = width, height, idat
    return image


@functools.cache
def _png_image_class() -> type:
    """reportlab's image XObject, written with the PNG predictor parameters its IDAT stream needs."""
    from reportlab.pdfbase.pdfdoc import PDFDictionary, PDFImageXObject, PDFName, PDFStream

    class PNGImageXObject(PDFImageXObject):
        """An RGB image whose stream is PNG IDAT data, read when the document is written."""

        idat: Callable[[], list[Buffer]]

        def format(self, document: Any) -> bytes:
            """The object as PDF bytes: the dictionary reportlab writes for an image, plus /DecodeParms.

            /Filter is a single name, not an array: some readers (poppler) read /DecodeParms only as an
            array beside an array of filters.
            """
            data = b"".join(self.idat())
            stream = PDFStream(content=data)
            stream.dictionary.dict.update({
                "Type": PDFName("XObject"), "Subtype": PDFName("Image"), "Width": self.width,
                "Height": self.height, "BitsPerComponent": 8, "ColorSpace": PDFName("DeviceRGB"),
                "Filter": PDFName("FlateDecode"), "Length": len(data),
                "DecodeParms": PDFDictionary({"Predictor": 15, "Colors": 3, "BitsPerComponent": 8,
                                              "Columns": self.width})})
            return stream.format(document)

        def pieces(self, number: int) -> list[Buffer]:
            """The indirect object `number` of this image as `format` writes it, in pieces (`streaming`): its
            dictionary formatted by `pdf_update.image_pieces` (reportlab's took ~70 us an image), then the PNG's
            IDAT chunks as they were read (joined, each card image's ~130 kB was copied ~5 times)."""
            return image_pieces(number, self.width, self.height, "DeviceRGB", self.idat(), png=True)

    return PNGImageXObject


def flate_image(name: str, colours: str, width: int, height: int, stream: bytes) -> Any:
    """reportlab's image XObject of 8-bit pixels given as a Flate stream, as it makes one from a picture."""
    from reportlab.pdfbase.pdfdoc import PDFImageXObject

    image = PDFImageXObject(name)
    image.width, image.height, image.streamContent = width, height, stream
    image.bitsPerComponent, image.colorSpace, image._filters, image.mask = 8, colours, ("FlateDecode",), None
    return image


def embedded_objects(pdf: Any, name: str) -> list[str]:
    """The internal names of the objects a registered image XObject `name` is written as: itself, then its soft
    mask if it has one."""
    image = pdf._doc.idToObject[xobject_name(pdf, name)]
    mask = getattr(image, "smask", None)
    return [xobject_name(pdf, name), *([mask.name] if mask is not None else [])]


def object_numbers(pdf: Any, internal_names: list[str]) -> list[int]:
    """The object numbers the document gave objects of these internal names (when they were registered)."""
    return [pdf._doc.idToObjectNumberAndVersion[name][0] for name in internal_names]


def pixel_size(pdf: Any, internal_name: str) -> tuple[int, int]:
    """The width and height in pixels of a registered image XObject."""
    image = pdf._doc.idToObject[internal_name]
    return int(image.width), int(image.height)


def formatted_objects(pdf: Any, numbers: dict[str, int]) -> dict[int, bytes]:
    """The document's objects of these internal names, each written as the indirect object of the number given
    (references between them, an image's to its soft mask, take those numbers too), by number: the objects of a
    revision appended to a file written before (`cardgen.outputs.pdf_update`). The document is spent after."""
    from reportlab.pdfbase.pdfdoc import PDFIndirectObject

    document = pdf._doc
    document.idToObjectNumberAndVersion.update({name: (number, 0) for name, number in numbers.items()})
    return {number: PDFIndirectObject(name, document.idToObject[name]).format(document)
            for name, number in numbers.items()}


def font_name(pdf: Any, font: str) -> str:
    """The document's internal name of a font (registered in it now if it was not)."""
    return str(pdf._doc.getInternalFontName(font))


def page_operators(pdf: Any) -> tuple[list[str], list[str]]:
    """The current page's operators and the forms it draws, copied."""
    return list(pdf._code), list(pdf._formsinuse)


def put_page_operators(pdf: Any, code: list[str], forms: list[str]) -> None:
    """Make the current page's operators and forms these (a page drawn before: see `page_operators`)."""
    pdf._code[:] = code
    pdf._formsinuse[:] = forms


_STREAMING = threading.Lock()


@contextlib.contextmanager
def streaming(handle: BinaryIO) -> Iterator[None]:
    """While a document is saved, reportlab's output collector writes each object to `handle` as it is formatted.

    reportlab collects every object of a document, image streams included, then joins them into one bytes
    object and writes that: a 120-page file of card images was held twice in memory (~180 MB at once) and
    took twice as long to write (measured on a 1,000-card game: 1.2 s and 220 MB peak against 0.5 s and
    60 MB, the same bytes but for the creation date and the ID derived from it). Its document looks its
    collector class up by name when it saves, so that name is swapped for as long as one save runs (a lock:
    cardgen's only reportlab documents are these); nothing else of reportlab's is changed.
    """
    from reportlab.pdfbase import pdfdoc

    collector, indirect = pdfdoc.PDFFile, pdfdoc.PDFIndirectObject
    png: Any = _png_image_class()

    class StreamingFile(collector):  # type: ignore[misc, valid-type]
        """reportlab's collector, writing at once what it would hold: offsets are counted as before."""

        offset: int  # where the next object starts in the file

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            for piece in self.strings:  # the header, added on creation
                handle.write(piece)
            self.strings: list[bytes] = []
            self.write = handle.write

        def add(self, formatted: Any) -> int:
            """Write an object (a PNG image's in pieces: see `PiecewiseObject`); where it starts in the file."""
            if not isinstance(formatted, _Pieces):
                return int(super().add(formatted))
            offset, self.offset = self.offset, self.offset + formatted.length
            handle.writelines(formatted.pieces)
            return offset

        def format(self, document: Any) -> bytes:
            """Nothing left to join: everything is written."""
            return b""

    class PiecewiseObject(indirect):  # type: ignore[misc, valid-type]
        """reportlab's indirect object, formatted in pieces when its content can be (a PNG image's, see `png_image`),
        the same bytes unjoined."""

        def format(self, document: Any) -> Any:
            """As reportlab formats it: the pieces of a PNG image's object, any other's bytes."""
            number, version = document.idToObjectNumberAndVersion[self.name]
            if (not isinstance(self.content, png) or version != 0
                    or type(document.encrypt) is not pdfdoc.NoEncryption):  # (never in cardgen's files)
                return super().format(document)
            return _Pieces(self.content.pieces(number))

    with _STREAMING:
        pdfdoc.PDFFile, pdfdoc.PDFIndirectObject = StreamingFile, PiecewiseObject
        try:
            yield
        finally:
            pdfdoc.PDFFile, pdfdoc.PDFIndirectObject = collector, indirect


class _Pieces:
    """An object's bytes as the pieces written one after the other (`streaming`)."""

    def __init__(self, pieces: list[Buffer]) -> None:
        self.pieces = pieces
        self.length = sum(map(len, pieces))
