"""SVG art, the icons and SVG images a card draws: read safely, measured before it is drawn, prepared to draw.

Editors save more than a drawing: an XML declaration, a DOCTYPE, comments, their own namespaces (inkscape:,
sodipodi:, rdf:), a root size in mm. Reading a file keeps its drawing: the root's viewBox (made from its size
when it has none), the root's presentation attributes, and the elements in SVG's namespace; the rest is dropped.

Measuring it counts what drawing it would cost, before anything is drawn: every element once for each time it is
drawn (a `<use>`, `href="#id"` or `url(#id)` draws its target again; an SVG image embedded as a `data:` URL draws
its own elements, measured the same way, nested at most `MAX_NESTING` deep), and each embedded picture's pixels.
"""
from __future__ import annotations

import base64
import binascii
import io
import re
import urllib.parse
import zlib
from dataclasses import dataclass
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

from cardgen.core.errors import CardgenError

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
XML_NS = "http://www.w3.org/XML/1998/namespace"

ART_TEXT = "data-art"  # the attribute marking an icon's own <text> in a card
MAX_EMBEDDED_PIXELS = 64_000_000  # as for image files (validate/references.py)
MAX_ELEMENTS = 20_000  # drawn, references expanded: ~0.25-0.5 ms each in cairosvg, so at most ~5-10 s
MAX_FILE_ELEMENTS = 5 * MAX_ELEMENTS  # in the file, editors' own (dropped) included
PIXELS_PER_ELEMENT = 10_000  # decoding and painting this many of a picture's pixels costs about an element
MAX_NESTING = 3        # SVG images embedded in an SVG, in an SVG embedded in it, ...
MAX_DEPTH = 100        # elements inside elements, references followed included
MAX_SIDE = 20_000      # px, for the size an SVG declares
_MAX_INFLATED = 50_000_000  # bytes of a gzipped SVG embedded in an SVG, once inflated

# CSS pixels per unit (SVG's user unit is the CSS px: 96 a inch).
_UNITS = {"": 1.0, "px": 1.0, "pt": 96 / 72, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54, "in": 96.0}
_LENGTH = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-z%]*)\s*$")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_URL_REF = re.compile(r"url\(\s*['\"]?#([^)'\"\s]+)['\"]?\s*\)")
_STYLE_REF = re.compile(r"([\w-]+)\s*:\s*url\(\s*['\"]?#([^)'\"\s]+)")
_EXTERNAL = re.compile(r"""(?:href|src)\s*=\s*["'](?!#|data:)""")
# Presentation attributes of a root <svg> that its content inherits (kept on the group an icon's body is drawn in).
_NOT_INHERITED = {"width", "height", "viewBox", "x", "y", "preserveAspectRatio", "version", "baseProfile", "id",
                  "zoomAndPan", "contentScriptType", "contentStyleType", "enable-background"}


@dataclass(frozen=True)
class Art:
    """An SVG's drawing: its viewBox, the presentation attributes of its root, and its SVG elements, written without
    a namespace (they take the card's, or `document`'s); editors' own elements and attributes are dropped."""

    viewbox: tuple[float, float, float, float]
    attributes: dict[str, str]
    elements: list[Element]
    declared: tuple[float, float] | None  # the root's width and height in px, when it gives them in absolute units


def read_art(data: bytes | str, shown: str) -> Art:
    """Read and measure SVG art; a CardgenError naming `shown` when it cannot be drawn safely."""
    return _measured(data.encode("utf-8") if isinstance(data, str) else data, shown, 0)[0]


def _measured(data: bytes, shown: str, level: int) -> tuple[Art, int]:
    """SVG art read at a level of embedding, and how many elements drawing it draws."""
    inside = " (in an SVG image it embeds)" if level else ""
    root = _parse(data, shown, inside)
    if _local(root.tag) != "svg":
        raise CardgenError(f"the file's root element is <{_local(root.tag)}>, not <svg>{inside}", file=shown)
    elements = [_clean(child, shown, 1) for child in root if _svg(child)]
    art = Art(_viewbox(root, shown, inside), _root_attributes(root), elements, _declared(root))
    return art, _Cost(art, shown, level).check()


def _parse(data: bytes, shown: str, inside: str) -> Element:
    """The XML tree of an SVG: a DOCTYPE is read, an entity declaration refused (it can expand without limit)."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    if _EXTERNAL.search(data.decode("utf-8", "replace")):
        raise CardgenError(f"the SVG refers to an external file or URL{inside}; art must be self-contained "
                           "(embed pictures as data: URLs)", file=shown)
    try:
        # Element by element, counted as they come: a 50 MB file of a million elements is refused before its
        # tree takes hundreds of MB.
        events = iterparse(io.BytesIO(data), ("start",), forbid_dtd=False, forbid_entities=True,
                           forbid_external=True)
        for count, _event in enumerate(events, 1):
            if count > MAX_FILE_ELEMENTS:
                raise CardgenError(f"the SVG holds more than {MAX_FILE_ELEMENTS:,} elements{inside}; "
                                   "simplify it", file=shown)
        return events.root
    except DefusedXmlException:
        raise CardgenError(f"the SVG has a DOCTYPE that declares entities{inside}; these are refused (they can "
                           "expand without limit or read other files): remove the <!ENTITY ...> lines",
                           file=shown) from None
    except ElementTree.ParseError as exc:
        raise CardgenError(f"the file is not valid SVG{inside}: {exc}", file=shown) from None


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _svg(element: Element) -> bool:
    """Whether an element is SVG's (or has no namespace, as in an SVG without xmlns): not an editor's own."""
    return isinstance(element.tag, str) and (element.tag.startswith(f"{{{SVG_NS}}}") or "}" not in element.tag)


def _clean(element: Element, shown: str, depth: int) -> Element:
    """A copy of an SVG element, without editors' elements and attributes; xlink:href as href."""
    if depth > MAX_DEPTH:
        raise CardgenError(f"the SVG nests elements more than {MAX_DEPTH} deep", file=shown)
    copy = Element(_local(element.tag))  # written without a namespace: a card's (or `document`'s) is SVG's
    for name, value in element.attrib.items():
        if name == XLINK_HREF or name == "href":
            copy.set("href", value)
        elif "}" not in name or name.startswith(f"{{{XML_NS}}}"):
            copy.set(name, value)
    copy.text, copy.tail = element.text, element.tail
    copy.extend(_clean(child, shown, depth + 1) for child in element if _svg(child))
    return copy


def length_px(text: str | None) -> float | None:
    """An SVG length in px (mm, cm, in, pt, pc or px); None when missing, relative (%, em) or not a length."""
    match = _LENGTH.match(text or "")
    if match is None or match.group(2) not in _UNITS:
        return None
    return float(match.group(1)) * _UNITS[match.group(2)]


def _declared(root: Element) -> tuple[float, float] | None:
    width, height = length_px(root.get("width")), length_px(root.get("height"))
    return (width, height) if width is not None and height is not None else None


def _viewbox(root: Element, shown: str, inside: str) -> tuple[float, float, float, float]:
    """The root's viewBox, or one from its width and height (in any absolute unit) when it has none."""
    box = root.get("viewBox")
    if box is None:
        declared = _declared(root)
        if declared is None:
            raise CardgenError(f"the SVG has no viewBox and no width and height in absolute units{inside} "
                               f"(width='{root.get('width', '')}'); give its root a viewBox", file=shown)
        return (0.0, 0.0, *declared)
    try:
        numbers = tuple(float(v) for v in re.split(r"[\s,]+", box.strip()))
    except ValueError:
        numbers = ()
    if len(numbers) != 4 or numbers[2] <= 0 or numbers[3] <= 0:
        raise CardgenError(f"the SVG's viewBox '{box}' is not four numbers with a positive size{inside}",
                           file=shown)
    return numbers


def _root_attributes(root: Element) -> dict[str, str]:
    return {name: value for name, value in root.attrib.items() if "}" not in name and name not in _NOT_INHERITED}


def _references(element: Element) -> list[tuple[str, int]]:
    """The ids an element draws again, each with how many times: its `href="#id"` and every `url(#id)` in its
    attributes once, a marker once at each vertex of its shape (at most)."""
    found = []
    for name, value in element.attrib.items():
        times = _vertices(element) if "marker" in name or "marker" in value else 1
        found += [(match, times) for match in _URL_REF.findall(value)]
    href = element.get("href", "")
    return [(href[1:], 1), *found] if href.startswith("#") else found


def _vertices(element: Element) -> int:
    """At most how many vertices the shapes of an element (a group's markers mark each shape in it) have: one per
    pair of numbers in their path data or points, and one more each."""
    return sum(len(_NUMBER.findall(f"{shape.get('d', '')} {shape.get('points', '')}")) // 2 + 1
               for shape in element.iter())


def _letters(element: Element) -> int:
    """The characters a text element draws itself (its text and what follows each of its spans)."""
    if _local(element.tag) not in ("text", "tspan", "textPath"):
        return 0
    return len((element.text or "").strip()) + sum(len((child.tail or "").strip()) for child in element)


class _Cost:
    """Counts the elements an SVG draws, each reference and embedded SVG image expanded (an error past the
    bounds), and checks each picture it embeds."""

    def __init__(self, art: Art, shown: str, level: int) -> None:
        self.art, self.shown, self.level = art, shown, level
        self.ids = {element.get("id"): element for top in art.elements for element in top.iter() if element.get("id")}
        self.counted: dict[int, int] = {}
        self.busy: set[int] = set()
        self.embedded: dict[str, int] = {}

    def check(self) -> int:
        """Every element drawn, references and embedded images expanded (the root counts as one)."""
        total = 1
        for top in self.art.elements:
            total += self._count(top, 1)
            if total > MAX_ELEMENTS:
                raise self._too_many()
        return total + self._styled()

    def _styled(self) -> int:
        """What the references of style sheets draw, counted as if each rule applied to every element (to each
        vertex of every shape, for a marker): which elements a selector picks is not worked out here."""
        total = 0
        everything = Element("g")
        everything.extend(self.art.elements)
        for style in everything.iter("style"):
            for prop, name in _STYLE_REF.findall(style.text or ""):
                target = self.ids.get(name)
                if target is not None:
                    times = _vertices(everything) if "marker" in prop else sum(1 for _ in everything.iter())
                    total += times * self._count(target, 1)
                    if total > MAX_ELEMENTS:
                        raise self._too_many()
        return total

    def _too_many(self) -> CardgenError:
        return CardgenError(f"the SVG draws more than {MAX_ELEMENTS:,} elements once its references (<use>, "
                            "url(#...), markers) and embedded SVG images are counted, four letters of text and "
                            f"{PIXELS_PER_ELEMENT:,} pixels of a picture as one; "
                            "it would take minutes to draw: simplify it", file=self.shown)

    def _count(self, element: Element, depth: int) -> int:
        key = id(element)
        if key in self.counted:
            return self.counted[key]
        if key in self.busy:
            raise CardgenError(f"the SVG's element '{element.get('id')}' draws itself through a reference "
                               "(<use> or url(#...)): it would never finish drawing", file=self.shown)
        if depth > MAX_DEPTH:
            raise CardgenError(f"the SVG's references (<use>, url(#...)) lead more than {MAX_DEPTH} deep",
                               file=self.shown)
        self.busy.add(key)
        total = 1 + _letters(element) // 4 + sum(self._count(child, depth + 1) for child in element)
        for name, times in _references(element):
            target = self.ids.get(name)
            total += times * self._count(target, depth + 1) if target is not None else 0
        href = element.get("href", "")
        if href.startswith("data:"):
            total += self._embedded(href)
        self.busy.discard(key)
        if total > MAX_ELEMENTS:
            raise self._too_many()
        self.counted[key] = total
        return total

    def _embedded(self, url: str) -> int:
        """The elements a picture embedded as a data: URL draws (an SVG image's, else 1), checking its size."""
        if url not in self.embedded:
            data = _data_url(url)
            if data is None:
                raise CardgenError("the SVG embeds a data: URL that cannot be decoded", file=self.shown)
            self.embedded[url] = self._embedded_svg(data) if is_svg(data) else self._picture(data)
        return self.embedded[url]

    def _embedded_svg(self, data: bytes) -> int:
        if self.level + 1 > MAX_NESTING:
            raise CardgenError(f"the SVG embeds SVG images in SVG images more than {MAX_NESTING} deep",
                               file=self.shown)
        if data.startswith(b"\x1f\x8b"):
            data = inflated(data, self.shown)
        art, cost = _measured(data, self.shown, self.level + 1)
        if art.declared and max(art.declared) > MAX_SIDE:
            raise CardgenError(f"the SVG embeds an SVG image declaring {art.declared[0]:g} x {art.declared[1]:g} "
                               f"px; more than {MAX_SIDE} px a side is refused", file=self.shown)
        return cost

    def _picture(self, data: bytes) -> int:
        """What drawing a picture costs, in elements: one, and one for each `PIXELS_PER_ELEMENT` pixels it decodes to
        (its header is read, not its pixels): six pictures of 40 million pixels are too many, each one is not."""
        from PIL import Image

        try:
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
        except Image.DecompressionBombError:
            raise CardgenError("the SVG embeds a picture with far too many pixels to draw (scale it down)",
                               file=self.shown) from None
        except (OSError, ValueError, SyntaxError):
            raise CardgenError("the SVG embeds a picture that cannot be read as an image (PNG, JPEG, ...)",
                               file=self.shown) from None
        if width * height > MAX_EMBEDDED_PIXELS:
            raise CardgenError(f"the SVG embeds a picture of {width} x {height} px; more than "
                               f"{MAX_EMBEDDED_PIXELS // 1_000_000} million pixels is refused (scale it down)",
                               file=self.shown)
        return 1 + width * height // PIXELS_PER_ELEMENT


def _data_url(url: str) -> bytes | None:
    """A data: URL's bytes, decoded as urllib (and so cairosvg) decodes them; None when it is not one."""
    header, comma, payload = url[len("data:"):].partition(",")
    if not comma:
        return None
    if header.endswith(";base64"):
        try:
            return base64.b64decode(re.sub(r"\s+", "", payload))
        except (binascii.Error, ValueError):
            return None
    return urllib.parse.unquote_to_bytes(payload)


def is_svg(data: bytes) -> bool:
    """Whether cairosvg draws these bytes as an SVG image (its own test, in cairosvg/image.py)."""
    return not data.startswith(b"\x89PNG") and (data.startswith((b"<svg ", b"<?xml", b"<!DOC", b"\x1f\x8b"))
                                                 or b"<svg" in data)


def inflated(data: bytes, shown: str) -> bytes:
    """A gzipped SVG inflated, at most `_MAX_INFLATED` bytes of it (a small gzip can inflate to gigabytes)."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        svg = inflater.decompress(data, _MAX_INFLATED)
    except zlib.error:
        raise CardgenError("the SVG embeds a gzipped SVG image that cannot be inflated", file=shown) from None
    if inflater.unconsumed_tail:
        raise CardgenError(f"the SVG embeds a gzipped SVG image of more than {_MAX_INFLATED // 1_000_000} MB",
                           file=shown)
    return svg


def icon_body(art: Art, prefix: str) -> str:
    """The art's elements as SVG to place inside a card, in a group holding its root's presentation attributes.

    Its ids and classes, and what refers to them, are given `prefix`, and its style sheets apply inside the group
    only: two icons of a card, or an icon and the card, saved by one editor (`linearGradient1`, Illustrator's
    `.st0`) then cannot draw with each other's gradients, clip paths, `<use>` targets or styles."""
    import copy

    group = Element("g", art.attributes)
    group.extend(copy.deepcopy(art.elements))
    ids = {element.get("id") for element in group.iter()} - {None}

    def renamed(match: re.Match[str]) -> str:
        return f"url(#{prefix}{match.group(1)})" if match.group(1) in ids else match.group(0)

    styled = False
    for element in group.iter():
        for name, value in element.attrib.items():
            if name == "id":
                element.set(name, prefix + value)
            elif name == "class":
                element.set(name, " ".join(prefix + word for word in value.split()))
            elif name == "href" and value.startswith("#") and value[1:] in ids:
                element.set(name, f"#{prefix}{value[1:]}")
            elif "url(" in value:
                element.set(name, _URL_REF.sub(renamed, value))
        if _local(element.tag) == "text":
            element.set(ART_TEXT, "icon")  # drawn as the icon's art: not card text the layout check measures
        if _local(element.tag) == "style" and element.text:
            element.text = _scoped_css(_URL_REF.sub(renamed, element.text), prefix, ids)
            styled = True
    if styled:
        group.set("class", prefix.rstrip("-"))  # no class of the icon's is named so: theirs are `prefix` + name
    if art.attributes or styled:
        return ElementTree.tostring(group, encoding="unicode")
    return "".join(ElementTree.tostring(element, encoding="unicode") for element in group)


_CSS_RULE = re.compile(r"([^{}]*)\{([^{}]*)\}")
_CSS_NAME = re.compile(r"([.#])(-?[_a-zA-Z][\w-]*)")


def _scoped_css(css: str, prefix: str, ids: set[str | None]) -> str:
    """An icon's style sheet with its ids and classes prefixed, each selector applying inside the icon only."""
    def name(match: re.Match[str]) -> str:
        kind, word = match.groups()
        return f"{kind}{prefix}{word}" if kind == "." or word in ids else match.group(0)

    def rule(match: re.Match[str]) -> str:
        selectors, body = match.groups()
        if selectors.strip().startswith("@"):  # @font-face, @page: not selectors
            return match.group(0)
        scoped = ", ".join(f".{prefix.rstrip('-')} {_CSS_NAME.sub(name, selector.strip())}"
                           for selector in selectors.split(",") if selector.strip())
        return f"{scoped} {{{body}}}"

    return _CSS_RULE.sub(rule, re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL))


def document(art: Art) -> bytes:
    """The art as an SVG document of its own, sized by its viewBox alone (cairosvg draws an image whose root is
    sized in mm at a card's resolution blank; without a size, the image's box sizes it, as every viewer does)."""
    root = Element("svg", {"xmlns": SVG_NS, **art.attributes, "viewBox": " ".join(f"{v:g}" for v in art.viewbox)})
    root.extend(art.elements)
    return ElementTree.tostring(root, encoding="utf-8")
