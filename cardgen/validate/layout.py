"""Layer 5, layout: every face and back is rendered to SVG (not drawn) and its text is inspected.

Text that does not fit its box even at the minimum size is an error; text outside the safe zone
and characters the font cannot draw are warnings.

A render's findings depend only on what its SVG cache key covers (the manifest, every template, icon
and font, the card's fields, id and row, the deck and the template), so with an output root they are
kept by that key (`KnownFindings`): a one-card edit inspects the text of that card only.
"""
from __future__ import annotations

import collections
import dataclasses
import hashlib
import html
import itertools
import operator
import re
import sys
import weakref
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Protocol

from cardgen.core.errors import CardgenError, Problem
from cardgen.core.storage import KeptByGame, builds_again, keep_latest
from cardgen.load.data import Card
from cardgen.load.fonts import FontFace
from cardgen.load.markup import parse, plain_text
from cardgen.load.svgart import ART_TEXT
from cardgen.svg.context import BuildContext
from cardgen.svg.helpers import Box, Geometry
from cardgen.svg.templates import RenderedSVG, SVGCache, SVGRenderer, subject
from cardgen.validate.findings import as_error

_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.DOTALL)
_TSPAN = re.compile(r"<tspan\b([^>]*)>(.*?)</tspan>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_ATTR = re.compile(r'(?<![\w-])([\w-]+)\s*=\s*"([^"]*)"')
TOLERANCE_PX = 1.0
_CROSSES = re.compile(r"text '(.*)' crosses the ([a-z ]+) edge of the safe zone")  # its text and edges


def _attrs(text: str) -> dict[str, str]:
    """The double-quoted attributes of a tag, their entities unescaped, first one of a name wins (one scan, not
    one per name asked; each value unescaped once, and only when it holds an entity)."""
    found: dict[str, str] = {}
    for name, value in _ATTR.findall(text):
        found.setdefault(name, html.unescape(value) if "&" in value else value)
    return found


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
        if ART_TEXT in attrs:
            continue  # an icon's lettering, placed by its own transforms: part of the art
        family = (attrs.get("font-family") or default_family or "").split(",")[0].strip().strip("'\"")
        size = _float(attrs.get("font-size"), 16.0)
        baseline = _float(attrs.get("y"), 0.0)
        spans = _TSPAN.findall(body) or [("", body)]
        for span_text, inner in spans:
            text = html.unescape(_TAG.sub("", inner))
            if text.strip():
                span_attrs = _attrs(span_text)
                x = _float(span_attrs.get("x") or attrs.get("x"), 0.0)
                bold = (span_attrs.get("font-weight") or attrs.get("font-weight")) == "bold"
                italic = (span_attrs.get("font-style") or attrs.get("font-style")) == "italic"
                anchor = span_attrs.get("text-anchor") or attrs.get("text-anchor") or "start"
                runs.append(TextRun(text, x, baseline, size, family, bold, italic, anchor))
    return runs


class KnownFindings(KeptByGame):
    """The layout findings of each render of a game's last check, by the render's SVG cache key.

    One sealed entry per game in the output root's cache (`layout/`), read once and written once per
    check, holding only the renders of that check: a damaged or unreadable entry is ignored (every card
    is inspected again), never trusted. An edit's few findings in a process that builds again stay in memory
    (`KeptByGame.deferred`).
    """

    deferred = True

    def __init__(self, out_root: Path, game: str, svg_cache: SVGCache) -> None:
        from cardgen.core.bundled import code_digest

        super().__init__(out_root, "layout", game)
        self.svg_cache = svg_cache
        self.code = code_digest(__name__)  # the code that checks: the SVG's key holds the code that renders

    def key(self, template: str, deck: str, card: Card | None) -> str:
        """The key of one render's findings: its SVG cache key and the digest of the code that checks it (kept with
        the card, as its SVG cache key is)."""
        about = (self.code, self.svg_cache.key(template, deck, card))
        made = card.made.get(("layout", template, deck)) if card is not None else None
        if made is not None and made[0] == about:
            return str(made[1])
        known = hashlib.sha256(f"{about[0]}\0{about[1]}".encode()).hexdigest()[:32]
        if card is not None:
            card.made["layout", template, deck] = (about, known)
        return known

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

    def served(self, key: str, value: Any) -> bool:
        """Whether a render's findings are still kept as `value` (this object, which the build that took them held):
        then noted as used, as `get` notes them."""
        if self.kept.get(key) is not value:
            return False
        self.used[key] = value
        return True

    def put(self, key: str, findings: list[Problem]) -> None:
        """Note a render's findings, to keep."""
        self.used[key] = [dataclasses.asdict(p) for p in findings]


@dataclass
class _Taken:
    """What the entries of a check's cards (`LayoutChecker._entry`) hold, gathered for the next check to take at once
    (patched card by card, not gathered again from every card): each render's SVG cache value and findings by their
    keys, its render by its memo in the renderer, and how many of the cards draw each deck back (once for the deck)
    and each image file."""

    svg: dict[str, Any] = field(default_factory=dict)
    known: dict[str, Any] = field(default_factory=dict)
    done: dict[tuple, Any] = field(default_factory=dict)
    backs: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    files: collections.Counter[str] = field(default_factory=collections.Counter)

    def add(self, entry: tuple, backs: list[tuple[str, str]]) -> None:
        """Gather a card's entry and the deck backs it draws."""
        for memo, svg_key, svg_value, key, value, render in entry:
            self.svg[svg_key], self.known[key], self.done[memo] = svg_value, value, render
            self.files.update(svg_value["files"])
        self.backs.update(backs)

    def remove(self, entry: tuple, backs: list[tuple[str, str]]) -> None:
        """Take a card's entry and backs out (a value another card's entry holds now stays)."""
        for memo, svg_key, svg_value, key, value, render in entry:
            for held, at, what in ((self.svg, svg_key, svg_value), (self.known, key, value), (self.done, memo, render)):
                if held.get(at) is what:
                    del held[at]
            self.files.subtract(svg_value["files"])
        self.backs.subtract(backs)


_CHECK_NUMBERS = itertools.count()  # (see `_LastCheck.number`)


@dataclass
class _LastCheck:
    """A game's last layout check in this process: what it read besides the cards (`LayoutChecker._about`), the
    cards (held, so no other object takes their place), and for each card what the next check takes whole of its
    renders (`LayoutChecker._entry`, None when it cannot), its findings and the deck backs it has drawn once, these
    entries gathered (`_Taken`), the findings joined and which cards have an entry."""

    about: tuple
    cards: list[Card]
    entries: list[tuple | None]
    found: list[list[tuple[Any, Problem]]]
    backs: list[list[tuple[str, str]]]
    taken: _Taken
    joined: list[tuple[Any, Problem]]  # the cards' findings, in order
    reusable: list[bool]  # whether each card has an entry
    # The renderer it checked with (not held: a build's renderer is freed with it), its number in the process, and,
    # when it took the cards of the check before whole but at some places, that check's number and those places (see
    # `checked_anew`).
    renderer: Callable[[], SVGRenderer | None] = lambda: None
    number: int = field(default_factory=lambda: next(_CHECK_NUMBERS))
    since: tuple[int, list[int]] | None = None
    # The tokens of the SVG cache and findings cache it took from and put in (`KeptByGame.copied_from`)
    tokens: tuple[object, object] = (None, None)


# In a process that builds again, each game's last layout check (see `LayoutChecker._reused`), a few games at most.
_LAST_CHECKS: dict[tuple, _LastCheck] = {}
_LAST_CHECKS_AT_MOST = 8


def cards_unchecked(context: BuildContext) -> list[Card] | None:
    """The cards of a loaded game that the game's last layout check in this process did not have at their places (by
    identity, a C loop: an edit's few), when that check rendered with the same templates, icons, fonts and manifest
    (the SVG cache's base); None when there is no such check or the game has another number of cards."""
    game, cards, cache = context.game, context.data.cards, context.renderer.cache
    last = _LAST_CHECKS.get((game.root, game.name, game.lang)) if builds_again() else None
    if last is None or cache is None or last.about[1] != cache.base or len(last.cards) != len(cards):
        return None
    return list(itertools.compress(cards, map(operator.is_not, cards, last.cards)))


def checked_anew(context: BuildContext) -> tuple[int | None, list[int] | None, int] | None:
    """What the layout check of this build (made with `context.renderer`) took of the game's check before it: that
    check's number and the places of the cards it did not take whole (None, None when it took none), and its own
    number; None when the game has no such check. At every other place the card is the earlier check's object and
    the renderer holds that check's render of its face (`_Taken.done`), which no render of this check replaced: a
    plan made from the renders of that check takes them without looking them up (`plan._LastPlan.planned`)."""
    last = _LAST_CHECKS.get((context.game.root, context.game.name, context.game.lang)) if builds_again() else None
    if last is None or last.renderer() is not context.renderer:
        return None
    return (*last.since, last.number) if last.since is not None else (None, None, last.number)


# Renders missing from the caches from which the layout check shares them out to helper processes (a build's render
# workers, idle while it validates): below, a helper's setting the game up (~30 ms) outweighs its share.
SHARE_FROM = 200
SHARE_CHUNK = 25  # renders a helper is given at once (~30 ms of work): the check takes the last ones itself
# How long this process's rendering thread keeps the interpreter lock from a thread that wants it while renders are
# shared (seconds; Python's default is 5 ms). The pool's own threads (which take a helper's results in and hand it
# its next chunk) each waited up to 5 ms for the lock at every step, several steps a chunk: the helpers idled half
# the time (10,000 cards: 3,200 of 10,000 renders made by the two helpers, the check 6.2 s; with 0.2 ms: ~7,000,
# 4.7-5.0 s).
SHARE_SWITCH_SECONDS = 0.0002


class Helpers(Protocol):
    """Processes that can run a function (a build's render pool): `grow` lets those held back take jobs too."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run `fn(*args, **kwargs)` in one of the processes."""

    def grow(self) -> None:
        """Let every process take jobs."""


Render = tuple[str, str, Card | None]  # (template, deck, card or None for a deck's back)
Place = Callable[[str, str | None], tuple[str, int | None] | None]  # (deck, column) -> its template file and line
Made = tuple[RenderedSVG | None, list[Problem]]  # a render (None when it failed) and its findings


class LayoutChecker:
    """Renders every card of a game to SVG and checks its text; with `helpers`, the renders of a large game are
    shared with them (see `render_share`)."""

    def __init__(self, context: BuildContext, helpers: Helpers | None = None) -> None:
        self.game, self.fonts, self.renderer = context.game, context.fonts, context.renderer
        self.cards = context.data.cards
        self.helpers = helpers
        cache = context.renderer.cache
        self.known = KnownFindings(context.out_root, self.game.name, cache) \
            if context.out_root is not None and cache is not None else None
        self._last: _LastCheck | None = None  # the game's last check, which this one takes (see `_reused`)
        self._taken = _Taken()  # its entries this one takes

    def check(self, skip_rows: set[tuple[str, int]], skip_templates: set[str],
              place: Place | None = None, keep_renders: bool = True) -> list[Problem]:
        """Findings of every card face and every deck's back (cards and templates with errors are skipped); the
        cards whose text crosses the safe zone at the same place of a template are one finding (see `_grouped`),
        at the template line `place(deck, column)` gives. The renders are saved in the renderer's cache unless
        not `keep_renders` (the caller saves them)."""
        about = self._about(skip_rows, skip_templates)
        reused = self._reused(about)
        cards = self.cards
        todo = list(itertools.compress(itertools.count(), map(operator.not_, reused)))  # (a C loop: 10,000 cards)
        faces = [self._card_renders(cards[place], skip_rows, skip_templates) for place in todo]
        backs = set(+self._taken.backs)  # (the reused cards' backs)
        backs.update(itertools.chain.from_iterable(back for _, back in faces))
        renders = [*itertools.chain.from_iterable(face for face, _ in faces),
                   *[(template, deck, None) for deck, template in sorted(backs)]]
        shared = self._share_out(renders)
        made_of: list[list[tuple[Render, Problem]]] = []  # each render's findings, in `renders`' order
        for number, render in enumerate(renders):
            made = shared[number] if number in shared else self._render(*render)
            made_of.append([(render, finding) for finding in made] if made else [])
        found = self._found(about, reused, todo, faces, made_of, backs)
        if self.known is not None:
            self.known.save()
        if keep_renders and self.renderer.cache is not None:
            self.renderer.cache.save()
        return list(dict.fromkeys(self._grouped(found, place or (lambda deck, column: None))))

    def _grouped(self, found: list[tuple[Render, Problem]], place: Place) -> list[Problem]:
        """The findings, with the safe-zone warnings of two or more cards that share a cause (the same template,
        column and edges crossed: one box of the template) said once, naming the template place, how many cards
        and a few of them; 76 identical warnings, one per card, hid every other finding."""
        causes: dict[tuple, list[Card]] = {}
        keys = [_cause(render, finding) for render, finding in found]
        for ((_, _, card), _), key in zip(found, keys):
            if key is not None and card is not None:
                causes.setdefault(key, []).append(card)
        findings, said = [], set()
        for (_, finding), key in zip(found, keys):
            if key is None or len(causes[key]) == 1:
                findings.append(finding)
            elif key not in said:
                said.add(key)
                findings.append(self._group_finding(key, causes[key], place))
        return findings

    def _group_finding(self, cause: tuple, cards: list[Card], place: Place) -> Problem:
        template, deck, column, text, sides = cause
        listed = ", ".join(f"'{card.id}'" for card in cards[:3]) + (f" and {len(cards) - 3:,} more"
                                                                     if len(cards) > 3 else "")
        what = f"text of column '{column}'" if column else f"text '{text}'"
        file, row = place(deck, column) or (self.renderer.shown(template), None)
        geo = Geometry(self.game.deck_size(self.game.spec.decks[deck]))
        return Problem(f"{what} {_crossing(sides, geo.safe)} on {len(cards):,} cards of deck '{deck}' drawn by "
                       f"{self.renderer.shown(template)} ({listed}); it may be cut off: move or shrink its box in "
                       "the template", file=file, row=row, column=column, severity="warning", rule="safe-zone")

    def _card_renders(self, card: Card, skip_rows: set[tuple[str, int]], skip_templates: set[str]
                      ) -> tuple[list[Render], list[tuple[str, str]]]:
        """A card's face (and its back when the back reads the card) to render and check, and the deck's back it
        has drawn once for the deck (by deck and template); none for a card with errors or no copies."""
        if (card.source_file, card.source_row) in skip_rows or card.copies == 0:
            return [], []
        renders: list[Render] = []
        backs: list[tuple[str, str]] = []
        if card.face_template not in skip_templates:
            renders.append((card.face_template, card.deck, card))
        if card.back_template and card.back_template not in skip_templates:
            if self.renderer.reads_card(card.back_template):  # drawn for each card: checked for each
                renders.append((card.back_template, card.deck, card))
            else:
                backs.append((card.deck, card.back_template))
        return renders, backs

    def _about(self, skip_rows: set[tuple[str, int]], skip_templates: set[str]) -> tuple:
        """What a card's render and findings read besides the card (its SVG cache key's base: templates, icons,
        fonts, manifest; the code that checks) and the cards and templates left out, by the game it is of."""
        cache, known = self.renderer.cache, self.known
        return ((self.game.root, self.game.name, self.game.lang), cache.base if cache is not None else None,
                known.code if known is not None else None, frozenset(skip_rows), frozenset(skip_templates))

    def _reused(self, about: tuple) -> list[bool]:
        """For each card, whether its renders and findings are taken whole from the game's last check in this
        process (`_LastCheck`): the same card object at the same place, its renders' SVGs and findings still what
        the caches keep by the same keys (the same values, the image files the renders draw there), so the
        look-ups `_checked` does a card (~5 us, ~50 ms at 10,000 cards) are done for all of them at once, on the
        last check's entries gathered (`_Taken`) less the cards that changed (found by identity in a C loop)."""
        cards, cache, known = self.cards, self.renderer.cache, self.known
        # (taken out: this check patches its `_Taken`, and one that stops half-way leaves none to take)
        last = _LAST_CHECKS.pop(about[0], None) if builds_again() else None
        self._last, self._taken = last, _Taken()
        if last is None or cache is None or known is None or last.about != about or len(last.cards) != len(cards):
            return [False] * len(cards)
        reused = list(last.reusable)  # (True and False: no entry looked at)
        taken = last.taken
        for place in itertools.compress(itertools.count(), map(operator.is_not, cards, last.cards)):
            if reused[place]:
                taken.remove(last.entries[place], last.backs[place])  # type: ignore[arg-type]
                reused[place] = False
        cache_kept, known_kept = cache.kept, known.kept
        # Both caches kept as the last check's saved them (`copied_from`): every value it took is still kept by its
        # key, not looked up (~2-3 ms of an edit at 10,000 cards); else each is looked up
        saved = cache.copied_from(last.tokens[0]) and known.copied_from(last.tokens[1])
        if not ((saved or all(map(operator.is_, map(cache_kept.get, taken.svg), taken.svg.values())) and
                 all(map(operator.is_, map(known_kept.get, taken.known), taken.known.values()))) and
                cache.present(list(+taken.files))):
            return [False] * len(cards)
        cache.used.update(taken.svg)
        known.used.update(taken.known)
        self.renderer.done.update(taken.done)
        self._taken = taken
        return reused

    def _found(self, about: tuple, reused: list[bool], todo: list[int],
               faces: list[tuple[list[Render], list[tuple[str, str]]]], made_of: list[list[tuple[Render, Problem]]],
               backs: set[tuple[str, str]]) -> list[tuple[Render, Problem]]:
        """Every render's findings in card order, then the decks' backs': the reused cards' from the last check, the
        others' from `made_of` (in the order of `faces`, each card's renders, then the backs'). In a process that
        builds again, the check is kept for the next (`_LastCheck`)."""
        last = self._last if any(reused) else None  # (taken out by `_reused`: its lists are patched, not copied)
        found: list[list[tuple[Render, Problem]]] = last.found if last is not None else [[]] * len(reused)
        backs_of: list[list[tuple[str, str]]] = last.backs if last is not None else [[]] * len(reused)
        entries: list[tuple | None] = last.entries if last is not None else [None] * len(reused)
        reusable: list[bool] = last.reusable if last is not None else [False] * len(reused)
        had = last is not None and any(found[place] for place in todo)  # (a changed card's findings before)
        made = iter(made_of)
        for place, (renders, backs_here) in zip(todo, faces):
            found[place] = list(itertools.chain.from_iterable(next(made) for _ in renders))
            backs_of[place] = backs_here
            entries[place] = self._entry(self.cards[place], renders)
            reusable[place] = entries[place] is not None
        back_found = list(itertools.chain.from_iterable(made))
        # the cards' findings joined: the last check's when no card looked at had one, then or now
        joined = last.joined if last is not None and not had and not any(found[place] for place in todo) else \
            list(itertools.chain.from_iterable(found))
        if builds_again() and self.known is not None and self.renderer.cache is not None:
            taken = self._taken  # (the reused cards' entries: the others' are added)
            for place in todo:
                if entries[place] is not None:
                    taken.add(entries[place], backs_of[place])  # type: ignore[arg-type]
            keep_latest(_LAST_CHECKS, about[0],
                        _LastCheck(about, list(self.cards), entries, found, backs_of, taken, joined, reusable,
                                   weakref.ref(self.renderer), since=(last.number, todo) if last is not None else None,
                                   tokens=(self.renderer.cache.token, self.known.token)),
                        _LAST_CHECKS_AT_MOST)
        return [*joined, *back_found]

    def _entry(self, card: Card, renders: list[Render]) -> tuple | None:
        """What the next check takes of a card's renders whole (see `_reused`): for each, its memo in the renderer,
        SVG cache key and value, findings key and value, and render, when this check took each from the caches
        (`Card.made`'s 'checked'); else None (checked again, card by card)."""
        cache, known = self.renderer.cache, self.known
        entry = []
        for template, deck, _ in renders:
            made = card.made.get(("checked", template, deck))
            if cache is None or known is None or made is None or made[0] != (cache.base, known.code) or \
                    cache.used.get(made[1]) is not made[2] or known.used.get(made[3]) is not made[4]:
                return None
            entry.append(((template, deck, card.id), *made[1:6]))
        return tuple(entry)

    def _share_out(self, renders: list[Render]) -> dict[int, list[Problem]]:
        """The findings of the renders made in the helpers (and of those of their share this process took back), by
        place in `renders`; each render kept as made (see `_kept`).

        The missing renders go out in chunks, first ones first, while this process makes the last ones itself, each
        chunk no helper has begun: the two meet where the work is done. A helper's chunk is kept as soon as this
        process sees it done, between its own: kept after the meeting (~45 ms of a cold 1,000 cards), the helpers
        idled. A helper that sees other templates, icons, fonts or manifest than this process loaded (a file saved
        meanwhile) makes nothing, and this process renders its share (see `render_share`).
        """
        if self.helpers is None:  # (a watch's rebuild: looking for the missing renders was ~15 ms at 10,000 cards)
            return {}
        missing = [number for number, render in enumerate(renders) if not self.renderer.kept(*render)]
        if len(missing) < SHARE_FROM:
            return {}
        self.helpers.grow()
        inputs = self.renderer.inputs
        chunks = [missing[at:at + SHARE_CHUNK] for at in range(0, len(missing), SHARE_CHUNK)]
        futures = [self.helpers.submit(render_share, self.game.root, self.game.name, inputs,
                                       [renders[number] for number in chunk], self.game.lang) for chunk in chunks]
        shared: dict[int, list[Problem]] = {}
        helped = list(zip(chunks, futures))
        with _quick_switches(SHARE_SWITCH_SECONDS):
            for chunk, future in reversed(helped):
                helped = self._keep_done(renders, helped, shared,
                                         lambda future: future.done() and not future.cancelled())
                if future.cancel():  # no helper began it: made here
                    shared.update((number, self._kept(renders[number], self._made(*renders[number])))
                                  for number in chunk)
        self._keep_done(renders, helped, shared, lambda future: not future.cancelled())
        return shared

    def _keep_done(self, renders: list[Render], helped: list[tuple[list[int], Future[list[Made] | None]]],
                   shared: dict[int, list[Problem]], ready: Callable[[Future[Any]], bool]
                   ) -> list[tuple[list[int], Future[list[Made] | None]]]:
        """Keep the renders of the helpers' chunks `ready` says to take (waiting for each), their findings put in
        `shared`; the chunks left."""
        left = []
        for chunk, future in helped:
            if not ready(future):
                left.append((chunk, future))
                continue
            made = _result(future) or []  # none: `check` renders them
            shared.update((number, self._kept(renders[number], one)) for number, one in zip(chunk, made))
        return left

    def _kept(self, render: Render, made: Made) -> list[Problem]:
        """The findings of a render made elsewhere, its SVG kept by the renderer (and the findings by `known`)."""
        rendered, findings = made
        template, deck, card = render
        if rendered is not None:
            self.renderer.keep(template, deck, card, rendered)
            if self.known is not None:
                self.known.put(self.known.key(template, deck, card), findings)
        return findings

    def _made(self, template: str, deck: str, card: Card | None) -> Made:
        """A render made now and its findings (the render None when it failed: the findings say why)."""
        try:
            rendered = self.renderer.make(template, card.id if card else template, deck, card)
        except Exception as exc:  # noqa: BLE001  said as the findings of the render (see `_failed`)
            return None, _failed(exc, self.renderer, template, deck, card)
        return rendered, self._inspect(rendered, template, deck, card)

    def _render(self, template: str, deck: str, card: Card | None) -> list[Problem]:
        checked = self._checked(template, deck, card)
        if checked is not None:
            return checked
        try:
            rendered = self.renderer.render(template, card.id if card else template, deck, card)
        except Exception as exc:  # noqa: BLE001  said as the findings of the render (see `_failed`)
            return _failed(exc, self.renderer, template, deck, card)
        if self.known is None:
            return self._inspect(rendered, template, deck, card)
        key = self.known.key(template, deck, card)
        findings = self.known.get(key)
        if findings is None:
            findings = self._inspect(rendered, template, deck, card)
            self.known.put(key, findings)
        cache = self.renderer.cache
        if card is not None and cache is not None:
            svg_key = cache.key(template, deck, card)
            if svg_key in cache.used:  # (a placeholder's render is not kept)
                card.made["checked", template, deck] = ((cache.base, self.known.code), svg_key, cache.used[svg_key],
                                                         key, self.known.used[key], rendered, findings)
        return findings

    def _checked(self, template: str, deck: str, card: Card | None) -> list[Problem] | None:
        """The findings of a card's render as the last check made them (kept with the card, see `Card.made`), when
        the render and its findings are still what the caches keep by the same keys (the same values, the image
        files the render draws there): taken as `_render` would take them from the caches, with none of its
        look-ups (~5 us a card, ~50 ms at 10,000 cards). None otherwise."""
        made = card.made.get(("checked", template, deck)) if card is not None else None
        cache, known = self.renderer.cache, self.known
        if made is None or cache is None or known is None or made[0] != (cache.base, known.code):
            return None
        _, svg_key, value, key, kept, rendered, findings = made
        if not (cache.served(svg_key, value) and known.served(key, kept)):
            return None
        self.renderer.took(template, deck, card, rendered)
        return findings

    def _inspect(self, rendered: RenderedSVG, template: str, deck: str, card: Card | None) -> list[Problem]:
        """The findings of one rendered face or back: overflowing text, missing glyphs, text outside the safe
        zone."""
        findings = [as_error(w) if w.rule == "text-overflow" else w for w in rendered.warnings]
        safe = Geometry(self.game.deck_size(self.game.spec.decks[deck])).safe  # once a card, not once a run
        shown = self.renderer.shown(template)
        label = subject(template, deck, card)
        at = {"file": card.source_file, "row": card.source_row} if card else {"file": shown}
        overflowing = {w.column for w in findings}
        missing: dict[tuple[str, str | None], tuple[FontFace, set[str]]] = {}
        outside: dict[str | None, tuple[str, set[str]]] = {}
        fields = _plain_fields(card)
        for run in text_runs(rendered.svg, self.game.spec.font):
            try:
                face = self.fonts.face(run.family, run.bold, run.italic)
            except CardgenError:
                continue  # an unknown family is a reference finding already
            column = _column_of(fields, run.text)
            missing.setdefault((face.family, column), (face, set()))[1].update(face.missing_glyphs(run.text))
            sides = _outside_safe_zone(face, run, safe)
            if sides and column not in overflowing:  # overflowing text spills out anyway; said once
                outside.setdefault(column, (run.text, set()))[1].update(sides)
        for (_, column), (face, chars) in missing.items():
            if chars:
                findings.append(_glyph_finding(face, sorted(chars), label, column, at))
        for column, (text, sides) in outside.items():
            findings.append(Problem(f"{label}: text '{text[:30]}' {_crossing(' and '.join(sorted(sides)), safe)}; "
                                    "it may be cut off", column=column, severity="warning", rule="safe-zone", **at))
        return findings


def _crossing(sides: str, safe: Box) -> str:
    return (f"crosses the {sides} edge of the safe zone (x {safe.x:.0f}-{safe.x + safe.width:.0f}, y {safe.y:.0f}-"
            f"{safe.y + safe.height:.0f} px)")


def _cause(render: Render, finding: Problem) -> tuple | None:
    """What a card's safe-zone finding shares with the others of one template box: (template, deck, column, the
    text when no column gives it, the edges crossed); None for other findings."""
    template, deck, card = render
    crossed = _CROSSES.search(finding.message) if finding.rule == "safe-zone" and card is not None else None
    if crossed is None:
        return None
    return template, deck, finding.column, None if finding.column else crossed.group(1), crossed.group(2)


def _glyph_finding(face: FontFace, chars: list[str], label: str, column: str | None, at: dict) -> Problem:
    shown = ", ".join(f"'{ch}' (U+{ord(ch):04X})" for ch in chars[:5]) + (" ..." if len(chars) > 5 else "")
    return Problem(f"{label}: font '{face.family}' ({face.path.name}) has no glyph for {shown}; it will print "
                   "as an empty box or nothing", column=column, severity="warning", rule="missing-glyph", **at)


def _outside_safe_zone(face: FontFace, run: TextRun, safe: Box) -> set[str]:
    """The edges of the safe zone `safe` a run of text crosses."""
    width = face.width(run.text, run.size)
    left = run.x - {"middle": width / 2, "end": width}.get(run.anchor, 0.0)
    right = left + width
    top, bottom = run.baseline - 0.75 * run.size, run.baseline + 0.2 * run.size  # the ink of most letters
    return {side for side, out in (("left", left < safe.x - TOLERANCE_PX),
                                   ("right", right > safe.x + safe.width + TOLERANCE_PX),
                                   ("top", top < safe.y - TOLERANCE_PX),
                                   ("bottom", bottom > safe.y + safe.height + TOLERANCE_PX)) if out}


def _plain_fields(card: Card | None) -> list[tuple[str, str]]:
    """A card's text fields without their markup, by column (none for a deck's back): once a card, for `_column_of`
    to look through for each of its runs of text."""
    return [(k, _plain(v)) for k, v in card.fields.items() if isinstance(v, str)] if card is not None else []


def _column_of(fields: list[tuple[str, str]], text: str) -> str | None:
    """The field (of a card's `_plain_fields`) a piece of rendered text most likely comes from."""
    wanted = text.strip()
    return next((column for column, plain in fields if wanted in plain), None)


@lru_cache(maxsize=4096)
def _plain(value: str) -> str:
    """A field's text without its markup: asked of every field for each text run of a card, so kept."""
    return plain_text(parse(value))


def _failed(exc: Exception, renderer: SVGRenderer, template: str, deck: str, card: Card | None) -> list[Problem]:
    """The findings of a render that failed: the template's own problems, or a helper given nonsense by a template
    (align="sideways"), which is a finding, not a crash."""
    if isinstance(exc, CardgenError):
        return exc.problems
    where = subject(template, deck, card)
    return [Problem(f"cannot render {where} with {template}: {type(exc).__name__}: {exc}",
                    file=card.source_file if card else renderer.shown(template),
                    row=card.source_row if card else None, rule="render")]


def _result(future: Future[list[Made] | None]) -> list[Made] | None:
    """What a helper made of its chunk; None when it made nothing (other inputs) or failed (killed, out of memory):
    the check then renders the chunk in this process."""
    try:
        return future.result()
    except Exception:  # noqa: BLE001  the chunk is rendered here, and a broken pool is said when drawing
        return None


# The layout checker of the game a helper process renders for, set up for its first chunk (the game without its data:
# the cards come with each chunk), by (workspace, game, inputs, language).
_HELPING: dict[tuple[Path, str, str, str | None], LayoutChecker] = {}


@contextmanager
def _quick_switches(seconds: float) -> Iterator[None]:
    """In the block, a thread that wants the interpreter lock gets it after `seconds` (`sys.setswitchinterval`)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, seconds))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def render_share(root: Path, name: str, inputs: str, renders: list[Render], lang: str | None = None
                 ) -> list[Made] | None:
    """In a helper process: make renders and their findings for a layout check running in another process (of the
    game in `lang`), or None when this process would render other inputs (`SVGRenderer.inputs`) than that check
    loaded (a file saved between)."""
    checker = _HELPING.get((root, name, inputs, lang))
    if checker is None:
        _HELPING.clear()
        checker = LayoutChecker(BuildContext.load(root, name, with_data=False, lang=lang))
        if checker.renderer.inputs != inputs:
            return None
        _HELPING[(root, name, inputs, lang)] = checker
    return [checker._made(*render) for render in renders]
