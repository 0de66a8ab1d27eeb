"""reportlab's private parts that cardgen uses (`cardgen/outputs/reportlab_compat.py`) are still there with the
shape it uses: an upgrade of reportlab that changes one fails here, naming it, rather than somewhere in the print
PDF."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Callable

import pypdf
import pytest
from PIL import Image

from cardgen.outputs import reportlab_compat as rl


def _canvas() -> Any:
    from reportlab.pdfgen.canvas import Canvas

    return Canvas(io.BytesIO())


def _rgba_png(tmp_path: Path) -> str:
    path = tmp_path / "token.png"
    Image.new("RGBA", (4, 3), (200, 10, 10, 128)).save(path)
    return str(path)


def _image(tmp_path: Path) -> Any:
    from reportlab.pdfbase.pdfdoc import PDFImageXObject

    return PDFImageXObject("token", _rgba_png(tmp_path), mask="auto")


def _collector(tmp_path: Path) -> Any:
    from reportlab.pdfbase.pdfdoc import PDFFile

    return PDFFile()


def _stream(tmp_path: Path) -> Any:
    from reportlab.pdfbase.pdfdoc import PDFStream

    return PDFStream(content=b"")


def _image_class(tmp_path: Path) -> Any:
    from reportlab.pdfbase.pdfdoc import PDFImageXObject

    return PDFImageXObject


def _pdfdoc(tmp_path: Path) -> Any:
    from reportlab.pdfbase import pdfdoc

    return pdfdoc


def _is(kind: type) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, kind)


# (what owns it, the dotted private name on it, its shape as reportlab_compat uses it, the check of that shape)
SHAPES: list[tuple[Callable[[Path], Any], str, str, Callable[[Any], bool]]] = [
    (lambda _: _canvas(), "Canvas._doc", "the canvas's PDFDocument", lambda doc: doc is not None),
    (lambda _: _canvas(), "Canvas._doc.getXObjectName", "a method", callable),
    (lambda _: _canvas(), "Canvas._doc.idToObject", "a dict of the document's objects", _is(dict)),
    (lambda _: _canvas(), "Canvas._doc.Reference", "a method", callable),
    (lambda _: _canvas(), "Canvas._doc.idToObjectNumberAndVersion", "a dict of (number, version) by internal name",
     _is(dict)),
    (_pdfdoc, "pdfdoc.PDFIndirectObject", "a class of (internal name, object) formatted with its number",
     lambda cls: isinstance(cls, type) and callable(getattr(cls, "format", None))),
    (lambda _: _canvas(), "Canvas._doc.addForm", "a method", callable),
    (lambda _: _canvas(), "Canvas._doc.getInternalFontName", "a method", callable),
    (lambda _: _canvas(), "Canvas._setXObjects", "a method", callable),
    (lambda _: _canvas(), "Canvas._code", "a list of the page's operators", _is(list)),
    (lambda _: _canvas(), "Canvas._formsinuse", "a list of the forms the page draws", _is(list)),
    (_image, "PDFImageXObject._filters", "a tuple of filter names", _is(tuple)),
    (_image, "PDFImageXObject._smask", "the soft mask made for a picture with transparency",
     lambda mask: type(mask).__name__ == "PDFImageXObject"),
    (_image_class, "PDFImageXObject.format", "a method formatting the object", callable),
    (_stream, "PDFStream.dictionary.dict", "the dict of the stream's dictionary", _is(dict)),
    (_collector, "PDFFile.strings", "a list of the bytes collected (the header first)",
     lambda strings: isinstance(strings, list) and all(isinstance(s, bytes) for s in strings) and strings),
    (_collector, "PDFFile.write", "the method adding bytes", callable),
    (_collector, "PDFFile.format", "the method joining what was collected", callable),
    (_collector, "PDFFile.add", "the method adding an object, giving where it starts", callable),
    (_collector, "PDFFile.offset", "the length collected so far", _is(int)),
    (lambda _: _canvas(), "Canvas._doc.encrypt", "the document's encryption (none: NoEncryption)",
     lambda encrypt: type(encrypt).__name__ == "NoEncryption"),
    (_pdfdoc, "pdfdoc.NoEncryption", "the class of a document without encryption", _is(type)),
]


@pytest.mark.parametrize(("owner", "name", "shape", "check"), SHAPES, ids=[s[1] for s in SHAPES])
def test_each_private_name_reportlab_compat_uses_is_there(tmp_path: Path, owner: Callable[[Path], Any], name: str,
                                                           shape: str, check: Callable[[Any], bool]) -> None:
    """Each private name is there, with the shape `reportlab_compat` uses; a message names what changed."""
    from reportlab import Version

    value = owner(tmp_path)
    for attribute in name.split(".")[1:]:
        assert hasattr(value, attribute), (
            f"reportlab {Version} has no {name} (no {attribute!r}): cardgen.outputs.reportlab_compat uses it; adapt "
            "that module (its docstring says why it is used) before allowing this version in pyproject.toml")
        value = getattr(value, attribute)
    assert check(value), (f"reportlab {Version}'s {name} is {value!r}, not {shape} as cardgen.outputs."
                          "reportlab_compat uses it; adapt that module before allowing this version in pyproject.toml")


def test_the_private_names_checked_are_the_ones_the_module_names() -> None:
    """The compat module's docstring names every private name checked here, so neither list forgets one."""
    documented = rl.__doc__ or ""
    for _, name, _, _ in SHAPES:
        for attribute in name.split(".")[1:]:
            assert attribute in documented, f"{name} ({attribute}) is not named in reportlab_compat's docstring"


def test_images_and_pages_through_the_compat_module_are_written_as_they_are_formatted(tmp_path: Path) -> None:
    """The module's functions, together, make a readable PDF: a PNG's own rows with their predictor, a picture with
    its soft mask registered by its own name, a page's operators put back on the next page, the file streamed."""
    from reportlab.pdfgen.canvas import Canvas

    opaque = tmp_path / "card.png"
    Image.new("RGB", (5, 2), (10, 20, 30)).save(opaque)
    data = opaque.read_bytes()  # one IDAT chunk: the PNG's own compressed rows
    at = data.index(b"IDAT")
    length = int.from_bytes(data[at - 4:at], "big")
    idat = data[at + 4:at + 4 + length]
    target = tmp_path / "out.pdf"
    with target.open("wb") as handle:
        pdf = Canvas(handle)
        png = rl.png_image("card", 5, 2, lambda: [idat])
        picture, mask = rl.picture_image("token", _rgba_png(tmp_path))
        for image, soft in ((png, None), (picture, mask)):
            internal = rl.xobject_name(pdf, image.name)
            assert not rl.is_registered(pdf, internal)
            rl.register_image(pdf, image, internal)
            assert rl.is_registered(pdf, internal)
            if soft is not None:
                rl.attach_soft_mask(pdf, image, soft)
            pdf.doForm(image.name)
        code, forms = rl.page_operators(pdf)
        pdf.showPage()
        rl.put_page_operators(pdf, code, forms)
        pdf.showPage()
        with rl.streaming(handle):
            pdf.save()
    reader = pypdf.PdfReader(target, strict=True)
    assert len(reader.pages) == 2
    for page in reader.pages:  # the second page is the first's operators, put back
        drawn = {obj["/Width"]: obj for obj in (x.get_object() for x in page["/Resources"]["/XObject"].values())}
        assert drawn[5]["/DecodeParms"]["/Predictor"] == 15 and "/SMask" not in drawn[5]
        assert "/SMask" in drawn[4]
        pixels = {image.image.size: image.image.convert("RGBA") for image in page.images}
        assert pixels[(5, 2)].getpixel((4, 1)) == (10, 20, 30, 255)
        assert pixels[(4, 3)].getpixel((0, 0))[:3] == (200, 10, 10)
    assert mask is not None


def test_objects_are_formatted_again_under_the_numbers_a_file_gave_them(tmp_path: Path) -> None:
    """The objects of a registered image (and its soft mask) and their numbers, formatted again under other numbers
    (a revision of a file: `cardgen.outputs.pdf_update`), the image's reference to its mask included."""
    from reportlab.pdfgen.canvas import Canvas

    pdf = Canvas(io.BytesIO())
    picture, mask = rl.picture_image("token", _rgba_png(tmp_path))
    rl.register_image(pdf, picture, rl.xobject_name(pdf, "token"))
    rl.attach_soft_mask(pdf, picture, mask)
    own = rl.embedded_objects(pdf, "token")
    assert len(own) == 2 and len(set(rl.object_numbers(pdf, own))) == 2
    assert rl.pixel_size(pdf, own[0]) == (4, 3)
    formatted = rl.formatted_objects(pdf, {own[0]: 40, own[1]: 41})
    assert formatted[40].startswith(b"40 0 obj\n") and b"/SMask 41 0 R" in formatted[40]
    assert formatted[41].startswith(b"41 0 obj\n") and formatted[41].endswith(b"endobj\n")
