"""Layer 5, layout: every face and back is rendered to SVG (not drawn) and its text is inspected.

Text that does not fit its box even at the minimum size is an error; text outside the safe zone
and characters the font cannot draw are warnings.

A render's findings depend only on what its SVG cache key covers (the manifest, every template, icon
and font, the card's fields, id and row, the deck and the template), so with an output root they are
kept by that key (`KnownFindings`): a one-card edit inspects the text of that card only.
"""
from __future__ import annotations

import dataclasses
import html
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cardgen.context import BuildContext
from cardgen.data import Card
from cardgen.errors import CardgenError, Problem
from cardgen.fonts import FontFace
from cardgen.markup import parse, plain_text
from cardgen.storage import KeptByGame
from cardgen.templates import Geometry, RenderedSVG, SVGCache
from cardgen.validate.findings import as_error

_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.DOTALL)
_TSPAN = re.compile(r"<tspan\b([^>]*)>(.*?)</tspan>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_ATTR = re.compile(r'(?<![\w-])([\w-]+)\s*=\s*"([^"]*)"')
TOLERANCE_PX = 1.0
CHECK_VERSION = "1"  # part of the key of kept findings: bump it when what the check finds changes


def _attrs(text: str) -> dict[str, str]:
    """The double-quoted attributes of a tag, first one of a name wins (one scan, not one per name asked)."""
    found: dict[str, str] = {}
    for name, value in _ATTR.findall(text):
        found.setdefault(name, value)
    return found


def _attr(attrs: dict[str, str], name: str) -> str | None:
    value = attrs.get(name)
    return html.unescape(value) if value is not None else None


def _float(text: str | None, default: float) -> float:
    try:
        return float(text) if text is not None else default
    except ValueError:
        return default


@dataclass
class TextRun:
    """A run of text in a rendered SVG: where it starts, its size and face."""

    text: str
    x: float
    baseline: float
    size: float
    family: str
    bold: bool
    italic: bool
    anchor: str = "start"


def text_runs(svg: str, default_family: str | None) -> list[TextRun]:
    """The text runs of an SVG written by cardgen's text helpers (or plain <text> in a template)."""
    runs = []
    for text_attrs, body in _TEXT.findall(svg):
        attrs = _attrs(text_attrs)
        family = (_attr(attrs, "font-family") or default_family or "").split(",")[0].strip().strip("'\"")
        size = _float(_attr(attrs, "font-size"), 16.0)
        baseline = _float(_attr(attrs, "y"), 0.0)
        spans = _TSPAN.findall(body) or [("", body)]
        for span_text, inner in spans:
            text = html.unescape(_TAG.sub("", inner))
            if text.strip():
                span_attrs = _attrs(span_text)
                x = _float(_attr(span_attrs, "x") or _attr(attrs, "x"), 0.0)
                bold = (_attr(span_attrs, "font-weight") or _attr(attrs, "font-weight")) == "bold"
                italic = (_attr(span_attrs, "font-style") or _attr(attrs, "font-style")) == "italic"
                anchor = _attr(span_attrs, "text-anchor") or _attr(attrs, "text-anchor") or "start"
                runs.append(TextRun(text, x, baseline, size, family, bold, italic, anchor))
    return runs


class KnownFindings(KeptByGame):
    """The layout findings of each render of a game's last check, by the render's SVG cache key.

    One sealed entry per game in the output root's cache (`layout/`), read once and written once per
    check, holding only the renders of that check: a damaged or unreadable entry is ignored (every card
    is inspected again), never trusted.
    """

    def __init__(self, out_root: Path, game: str, svg_cache: SVGCache) -> None:
        super().__init__(out_root, "layout", f"{CHECK_VERSION}\0{game}")
        self.svg_cache = svg_cache

    def key(self, template: str, deck: str, card: Card | None) -> str:
        """The key of one render's findings: its SVG cache key and the version of this check."""
        return f"{CHECK_VERSION}-{self.svg_cache.key(template, deck, card)}"

    def get(self, key: str) -> list[Problem] | None:
        """The findings kept for a render, or None when there are none (or they cannot be read)."""
        kept = self.kept.get(key)
        if not isinstance(kept, list):
            return None
        try:
            findings = [Problem(**item) for item in kept]
        except TypeError:
            return None
        self.used[key] = kept
        return findings

    def put(self, key: str, findings: list[Problem]) -> None:
        """Note a render's findings, to keep."""
        self.used[key] = [dataclasses.asdict(p) for p in findings]


class LayoutChecker:
    """Renders every card of a game to SVG and checks its text."""

    def __init__(self, context: BuildContext) -> None:
        self.game, self.fonts, self.renderer = context.game, context.fonts, context.renderer
        self.cards = context.data.cards
        cache = context.renderer.cache
        self.known = KnownFindings(context.out_root, self.game.name, cache) \
            if context.out_root is not None and cache is not None else None

    def check(self, skip_rows: set[tuple[str, int]], skip_templates: set[str]) -> list[Problem]:
        """Findings of every card face and every deck's back (cards and templates with errors are skipped)."""
        findings: list[Problem] = []
        backs: set[tuple[str, str]] = set()
        for card in self.cards:
            if (card.source_file, card.source_row) in skip_rows or card.copies == 0:
                continue
            if card.face_template not in skip_templates:
                findings += self._render(card.face_template, card.deck, card)
            if card.back_template and card.back_template not in skip_templates:
                backs.add((card.deck, card.back_template))
        for deck, template in sorted(backs):
            findings += self._render(template, deck, None)
        if self.known is not None:
            self.known.save()
        if self.renderer.cache is not None:
            self.renderer.cache.save()
        return list(dict.fromkeys(findings))

    def _render(self, template: str, deck: str, card: Card | None) -> list[Problem]:
        try:
            rendered = self.renderer.render(template, card.id if card else template, deck, card)
        except CardgenError as exc:
            return exc.problems
        except Exception as exc:  # a helper given nonsense by a template (align="sideways"): a finding, not a crash
            where = f"card '{card.id}'" if card else f"the back of deck '{deck}'"
            return [Problem(f"cannot render {where} with {template}: {type(exc).__name__}: {exc}",
                            file=card.source_file if card else self.renderer.shown(template),
                            row=card.source_row if card else None, rule="render")]
        if self.known is None:
            return self._inspect(rendered, template, deck, card)
        key = self.known.key(template, deck, card)
        findings = self.known.get(key)
        if findings is None:
            findings = self._inspect(rendered, template, deck, card)
            self.known.put(key, findings)
        return findings

    def _inspect(self, rendered: RenderedSVG, template: str, deck: str, card: Card | None) -> list[Problem]:
        """The findings of one rendered face or back: overflowing text, missing glyphs, text outside the safe
        zone."""
        findings = [as_error(w) if w.rule == "text-overflow" else w for w in rendered.warnings]
        geo = Geometry(self.game.deck_size(self.game.spec.decks[deck]))
        shown = self.renderer.shown(template)
        label = f"card '{card.id}'" if card else f"the back of deck '{deck}'"
        at = {"file": card.source_file, "row": card.source_row} if card else {"file": shown}
        overflowing = {w.column for w in findings}
        missing: dict[tuple[str, str | None], tuple[FontFace, set[str]]] = {}
        outside: dict[str | None, tuple[str, set[str]]] = {}
        for run in text_runs(rendered.svg, self.game.spec.font):
            try:
                face = self.fonts.face(run.family, run.bold, run.italic)
            except CardgenError:
                continue  # an unknown family is a reference finding already
            column = _column_of(card, run.text)
            missing.setdefault((face.family, column), (face, set()))[1].update(face.missing_glyphs(run.text))
            sides = _outside_safe_zone(face, run, geo)
            if sides and column not in overflowing:  # overflowing text spills out anyway; said once
                outside.setdefault(column, (run.text, set()))[1].update(sides)
        for (_, column), (face, chars) in missing.items():
            if chars:
                findings.append(_glyph_finding(face, sorted(chars), label, column, at))
        for column, (text, sides) in outside.items():
            safe = geo.safe
            findings.append(Problem(f"{label}: text '{text[:30]}' crosses the {' and '.join(sorted(sides))} edge "
                                    f"of the safe zone (x {safe.x:.0f}-{safe.x + safe.width:.0f}, y {safe.y:.0f}-"
                                    f"{safe.y + safe.height:.0f} px); it may be cut off", column=column,
                                    severity="warning", rule="safe-zone", **at))
        return findings


def _glyph_finding(face: FontFace, chars: list[str], label: str, column: str | None, at: dict) -> Problem:
    shown = ", ".join(f"'{ch}' (U+{ord(ch):04X})" for ch in chars[:5]) + (" ..." if len(chars) > 5 else "")
    return Problem(f"{label}: font '{face.family}' ({face.path.name}) has no glyph for {shown}; it will print "
                   "as an empty box or nothing", column=column, severity="warning", rule="missing-glyph", **at)


def _outside_safe_zone(face: FontFace, run: TextRun, geo: Geometry) -> set[str]:
    """The edges of the safe zone a run of text crosses."""
    safe = geo.safe
    width = face.width(run.text, run.size)
    left = run.x - {"middle": width / 2, "end": width}.get(run.anchor, 0.0)
    right = left + width
    top, bottom = run.baseline - 0.75 * run.size, run.baseline + 0.2 * run.size  # the ink of most letters
    return {side for side, out in (("left", left < safe.x - TOLERANCE_PX),
                                   ("right", right > safe.x + safe.width + TOLERANCE_PX),
                                   ("top", top < safe.y - TOLERANCE_PX),
                                   ("bottom", bottom > safe.y + safe.height + TOLERANCE_PX)) if out}


def _column_of(card: Card | None, text: str) -> str | None:
    """The field a piece of rendered text most likely comes from."""
    if card is None:
        return None
    wanted = text.strip()
    return next((k for k, v in card.fields.items() if isinstance(v, str) and wanted in _plain(v)), None)


@lru_cache(maxsize=4096)
def _plain(value: str) -> str:
    """A field's text without its markup: asked of every field for each text run of a card, so kept."""
    return plain_text(parse(value))
