"""Print sheet geometry: which card copy goes where on which page, as plain data.

Lengths are mm, axes as in PDF (origin at the bottom left of the page, y up). Nothing here draws:
`cardgen.outputs.pdf` turns these pages into a PDF. Keeping the geometry pure lets tests check
positions, mirrored backs and crop marks without reading a PDF.
"""
from __future__ import annotations

import functools
import hashlib
import operator
import weakref
from dataclasses import dataclass, field
from itertools import groupby
from typing import Iterable, Literal, Sequence

from cardgen.core.storage import KeptRuns, blocks, builds_again, derived
from cardgen.core.units import parse_paper
from cardgen.options.layouts import SheetLayout
from cardgen.options.pdf import PrintSpec
from cardgen.record.record import CardEntry, kept_piece

EDGE_MM = 3.0            # marks and the footer stay this far from the paper edge
MARK_CLEARANCE_MM = 1.0  # crop marks stop this short of the cards
MARK_LENGTH_MM = 5.0     # longest crop mark (they are shorter when the margin is narrow)
MIN_MARK_MM = 2.0        # a mark kept out of the unprintable band is at least this long, else it goes into the band

Duplex = Literal["none", "long-edge", "short-edge", "fold"]
Side = Literal["front", "back", "fold"]


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle: lower-left corner, width and height (mm)."""

    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        """x of the right edge."""
        return self.x + self.w

    @property
    def top(self) -> float:
        """y of the top edge."""
        return self.y + self.h

    def grow(self, d: float) -> Rect:
        """The rectangle enlarged by d on every side."""
        return Rect(self.x - d, self.y - d, self.w + 2 * d, self.h + 2 * d)

    def shift(self, dx: float, dy: float) -> Rect:
        """The rectangle moved by (dx, dy)."""
        return Rect(self.x + dx, self.y + dy, self.w, self.h)

    def mirror(self, axis: str, page_w: float, page_h: float) -> Rect:
        """The rectangle mirrored left-right (axis "x") or top-bottom (axis "y") on a page."""
        if axis == "x":
            return Rect(page_w - self.right, self.y, self.w, self.h)
        return Rect(self.x, page_h - self.top, self.w, self.h)

    def overlaps(self, other: Rect, tol: float = 1e-6) -> bool:
        """Whether the interiors of two rectangles intersect."""
        return (self.x < other.right - tol and other.x < self.right - tol
                and self.y < other.top - tol and other.y < self.top - tol)

    def contains(self, other: Rect, tol: float = 1e-6) -> bool:
        """Whether another rectangle lies inside this one."""
        return (other.x >= self.x - tol and other.right <= self.right + tol
                and other.y >= self.y - tol and other.top <= self.top + tol)


def bounds(rects: Iterable[Rect]) -> Rect:
    """The smallest rectangle holding all the given ones."""
    rects = list(rects)
    x, y = min(r.x for r in rects), min(r.y for r in rects)
    return Rect(x, y, max(r.right for r in rects) - x, max(r.top for r in rects) - y)


@dataclass(frozen=True)
class Line:
    """A straight line segment (mm)."""

    x1: float
    y1: float
    x2: float
    y2: float

    def box(self) -> Rect:
        """The segment's bounding rectangle (zero width or height for straight marks)."""
        return Rect(min(self.x1, self.x2), min(self.y1, self.y2), abs(self.x2 - self.x1), abs(self.y2 - self.y1))


@dataclass(frozen=True)
class Item:
    """One printed copy of a card: its images and its trim size."""

    card_id: str
    deck: str
    copy: int
    face: str
    back: str | None
    width_mm: float
    height_mm: float
    bleed_mm: float
    kind: str = "card"


def items_from_cards(cards: list[CardEntry]) -> list[Item]:
    """Every copy of every card of a build record, in data order (in a process that builds again, an unchanged
    card's as the last build made them: `kept_piece`, so that the sheets of the last imposition are found by their
    items' identities, see `_KeptLeaves`; and those of a block of RUN_ITEMS unchanged cards the last build's list,
    `storage.KeptRuns`: a look-up a card was ~6 ms of an edit at 10,000 cards)."""
    runs = KeptRuns("print-items")
    items: list[Item] = []
    for _, block in blocks(cards):
        items += runs.made("items", block, functools.partial(_block_items, block))
    runs.keep()
    return items


def impose_cards(cards: list[CardEntry], options: PrintSpec, game: str) -> Imposition:
    """`impose` of every copy of the cards (`items_from_cards`); in a process that builds again, the last imposition
    of the game's cards with these options while the cards at the changed places have the same items (a card's text
    or picture edited: its image's content is the print file's, not its layout's), not laid out again (a pass over
    each copy of 10,000 cards, ~10 ms an edit)."""
    def patched(made: Imposition, last: list[CardEntry], places: list[int] | None) -> Imposition | None:
        if places is None or any(_card_items(cards[place]) != _card_items(last[place]) for place in places):
            return None
        return made

    made = derived(("imposition", game, repr(options)), cards, None, lambda: impose(items_from_cards(cards), options),
                   patched)
    return Imposition(list(made.pages), list(made.back_pages), list(made.warnings), made.paired)  # (the caller's)


def _card_items(card: CardEntry) -> tuple[Item, ...]:
    """Every copy of a card, made once for a kept entry (`kept_piece`)."""
    return kept_piece(card, "items", functools.partial(_items_of, card))


def _block_items(cards: Sequence[CardEntry]) -> list[Item]:
    """`items_from_cards` of a block of cards."""
    return [item for card in cards for item in _card_items(card)]


def _items_of(card: CardEntry) -> tuple[Item, ...]:
    """Every copy of a card: an item equal to one still held the same object (a card edited but not moved has the
    same items, and its sheet is found by them: see `_KeptLeaves`)."""
    made = (Item(card.id, card.deck, n, card.face, card.back, card.size_mm.width, card.size_mm.height,
                 card.bleed_mm, card.kind) for n in range(1, card.copies + 1))
    return tuple(_ITEMS.setdefault(item, item) for item in made)


_ITEMS: weakref.WeakValueDictionary[Item, Item] = weakref.WeakValueDictionary()  # the items held, by value


@dataclass(frozen=True)
class Slot:
    """One card image on a page: its trim box, bleed and the part of it that is shown."""

    image: str
    trim: Rect
    bleed: float
    clip: Rect
    card_id: str
    copy: int

    @property
    def image_rect(self) -> Rect:
        """Where the whole image (with bleed) is drawn."""
        return self.trim.grow(self.bleed)


@dataclass(frozen=True)
class TextSlot:
    """A free strip of margin for the footer; vertical strips read bottom to top."""

    rect: Rect
    vertical: bool


@dataclass
class Page:
    """One page: its size, which side it is, its card images, marks and footer place."""

    width: float
    height: float
    side: Side
    deck: str
    slots: list[Slot]
    marks: list[Line] = field(default_factory=list)
    cut_lines: list[Line] = field(default_factory=list)
    fold: Line | None = None
    footer: TextSlot | None = None
    note: str = ""

    # Made once per page: a page is not changed once imposed, and a process that builds again lays out anew only
    # the sheets whose cards changed (`_kept_leaf`): the other pages, and these, are the last imposition's.
    @functools.cached_property
    def digest(self) -> str:
        """A hash of the page as laid out: its size, side, deck, slots (their images' paths), marks, footer place."""
        return hashlib.sha256(repr(self).encode()).hexdigest()

    @functools.cached_property
    def reach(self) -> tuple[float, tuple[tuple[float, float], ...]]:
        """How near the paper's edge its cards come (infinity: it has none), and how near each crop mark's two
        ends are (none on a page with cut lines, whose marks are no loss: see `band_warnings`)."""
        cards = min((_edge_distance(_visible(slot), self) for slot in self.slots), default=float("inf"))
        return cards, tuple(_mark_reach(mark, self) for mark in self.marks) if not self.cut_lines else ()


@dataclass(frozen=True)
class Layout:
    """The grid of one card size on one paper: page size, trim boxes in reading order, frame."""

    width: float
    height: float
    trims: tuple[Rect, ...]
    bleed: float
    clip_bleed: bool
    frame: Rect
    mirror_axis: str
    fold: Line | None = None

    @property
    def capacity(self) -> int:
        """Cards per page."""
        return len(self.trims)


@dataclass
class Leaf:
    """One sheet of paper: its front page and the page printed on its other side (None: fold, one side; `blank`,
    made when first asked for, is then the blank back a duplex print gives it)."""

    front: Page
    back: Page | None = None
    blank: Page | None = None


@dataclass
class Imposition:
    """The pages of the print PDF, the pages of a separate backs PDF (duplex none), and warnings.

    In long-edge and short-edge duplex `pages` alternate front, back, front, back...: page 2k is
    the back of page 2k-1 (`paired`). With duplex none, `back_pages[i]` is the back of `pages[i]`.
    """

    pages: list[Page]
    back_pages: list[Page]
    warnings: list[str]
    paired: bool = False


def _grid(region: Rect, card_w: float, card_h: float, bleed: float, options: PrintSpec,
          grid: tuple[int, int] | None = None) -> tuple[list[Rect], Rect]:
    """Trim boxes of a columns x rows `grid` of cards (none if it does not fit the region), or of as many as fit,
    centred in the region, row by row from the top."""
    gap = options.spacing == "gap"
    cell_w, cell_h = (card_w + 2 * bleed, card_h + 2 * bleed) if gap else (card_w, card_h)
    space = options.gap_mm if gap else 0.0
    fit = int((region.w + space + 1e-9) // (cell_w + space)), int((region.h + space + 1e-9) // (cell_h + space))
    cols, rows = grid or fit
    if cols < 1 or rows < 1 or cols > fit[0] or rows > fit[1]:
        return [], region
    block_w, block_h = cols * cell_w + (cols - 1) * space, rows * cell_h + (rows - 1) * space
    left, top = region.x + (region.w - block_w) / 2, region.top - (region.h - block_h) / 2
    inset = bleed if gap else 0.0
    trims = [Rect(left + c * (cell_w + space) + inset, top - (r + 1) * cell_h - r * space + inset, card_w, card_h)
             for r in range(rows) for c in range(cols)]
    return trims, Rect(left, top - block_h, block_w, block_h)


def _orientations(paper: tuple[float, float], orientation: str) -> list[tuple[float, float]]:
    portrait = (min(paper), max(paper))
    landscape = (max(paper), min(paper))
    return {"portrait": [portrait], "landscape": [landscape]}.get(orientation, [portrait, landscape])


def mirror_axis(duplex: Duplex, width: float, height: float) -> str:
    """How backs are mirrored: "x" (left-right) or "y" (top-bottom).

    The back is mirrored across the edge the sheet turns over: the long edge for long-edge
    duplex (left-right on a portrait page, top-bottom on a landscape one), the short edge for
    short-edge duplex. Printing backs separately (duplex none) assumes a long-edge turn.
    """
    portrait = width <= height
    if duplex == "short-edge":
        return "y" if portrait else "x"
    return "x" if portrait else "y"


def plan_layout(card_w: float, card_h: float, bleed: float, options: PrintSpec,
                grid: tuple[int, int] | None = None) -> Layout | None:
    """The layout holding the most cards of one size (orientation chosen unless set), or a columns x rows `grid`
    of them; None if none fit (or the grid does not)."""
    best: Layout | None = None
    margin = options.margin_mm
    for width, height in _orientations(parse_paper(options.sheet), options.orientation):
        candidates: list[tuple[Rect, str, Line | None]]  # the region of the cards, how backs mirror, the fold
        if options.duplex == "fold":
            # Fronts on one half, backs mirrored on the other; fold along the middle, then cut both layers.
            candidates = [(Rect(margin, margin, width / 2 - 2 * margin, height - 2 * margin), "x",
                           Line(width / 2, EDGE_MM, width / 2, height - EDGE_MM)),
                          (Rect(margin, height / 2 + margin, width - 2 * margin, height / 2 - 2 * margin), "y",
                           Line(EDGE_MM, height / 2, width - EDGE_MM, height / 2))]
        else:
            candidates = [(Rect(margin, margin, width - 2 * margin, height - 2 * margin),
                           mirror_axis(options.duplex, width, height), None)]
        for region, axis, fold in candidates:
            trims, frame = _grid(region, card_w, card_h, bleed, options, grid)
            if trims and (best is None or len(trims) > best.capacity):
                best = Layout(width, height, tuple(trims), bleed, options.spacing == "touching", frame, axis, fold)
    return best


def sheet_layout(sheet: SheetLayout, bleed: float, options: PrintSpec) -> Layout:
    """The layout of a sheet layout file: its slots as trim boxes (PDF axes); touching cards have their bleed
    cut off at the trim (they share cut lines), cards apart keep it."""
    (width, height), (card_w, card_h) = sheet.page, sheet.card
    trims = tuple(Rect(x, height - y - card_h, card_w, card_h) for x, y in sheet.slots)
    touching = any(a.grow(bleed).overlaps(b.grow(bleed)) for i, a in enumerate(trims) for b in trims[:i])
    return Layout(width, height, trims, bleed, touching, bounds(trims), mirror_axis(options.duplex, width, height))


def _slots(items: list[Item], layout: Layout, back: bool, axis: str, offset: tuple[float, float]) -> list[Slot]:
    slots = []
    for item, trim in zip(items, layout.trims):
        image = item.back if back else item.face
        if image is None:
            continue
        if back:
            trim = trim.mirror(axis, layout.width, layout.height).shift(*offset)
        shown = trim if layout.clip_bleed else trim.grow(layout.bleed)
        slots.append(Slot(image, trim, layout.bleed, shown, item.card_id, item.copy))
    return slots


def _mark_end(start: float, band: float) -> float:
    """How far from the paper edge a crop mark that starts `start` mm from it ends: short of the band the printer
    cannot print when a mark of MIN_MARK_MM fits outside it, else (in the band) EDGE_MM from the edge."""
    outside = max(EDGE_MM, band)
    return max(outside if start - outside >= MIN_MARK_MM else EDGE_MM, start - MARK_LENGTH_MM)


def crop_marks(frame: Rect, trims: list[Rect], width: float, height: float, band: float = 0.0) -> list[Line]:
    """Short lines in the margin extending every trim line, stopping short of the frame of cards and, where there
    is room, of the `band` along the paper edge that the printer cannot print."""
    marks = []
    gap = MARK_CLEARANCE_MM
    for x in sorted({round(v, 6) for t in trims for v in (t.x, t.right)}):
        low, high = frame.y - gap, frame.top + gap
        marks.append(Line(x, low, x, _mark_end(low, band)))
        marks.append(Line(x, high, x, height - _mark_end(height - high, band)))
    for y in sorted({round(v, 6) for t in trims for v in (t.y, t.top)}):
        low, high = frame.x - gap, frame.right + gap
        marks.append(Line(low, y, _mark_end(low, band), y))
        marks.append(Line(high, y, width - _mark_end(width - high, band), y))
    # A margin too narrow for the clearance leaves no room for a mark on that side.
    paper = Rect(EDGE_MM, EDGE_MM, width - 2 * EDGE_MM, height - 2 * EDGE_MM)
    return [m for m in marks if (m.x1, m.y1) != (m.x2, m.y2) and paper.contains(m.box())]


def cut_lines(slots: list[Slot]) -> list[Line]:
    """Lines along each card's trim, across its visible bleed (shared cuts are drawn once); of a tile, along the
    edges of the board the page shows."""
    lines = set()
    for slot in slots:
        t, shown = slot.trim, slot.clip
        for x in (t.x, t.right):
            if shown.x - 1e-6 <= x <= shown.right + 1e-6:
                lines.add(Line(*(round(v, 6) for v in (x, shown.y, x, shown.top))))
        for y in (t.y, t.top):
            if shown.y - 1e-6 <= y <= shown.top + 1e-6:
                lines.add(Line(*(round(v, 6) for v in (shown.x, y, shown.right, y))))
    return sorted(lines, key=lambda line: (line.x1, line.y1, line.x2, line.y2))


def footer_slot(page: Page, occupied: Rect) -> TextSlot | None:
    """The longest strip of margin free of cards, marks and fold line, for the page footer; None when cards leave
    no margin (a footer there would be printed over them)."""
    w, h, gap = page.width, page.height, MARK_CLEARANCE_MM
    bands = [(Rect(EDGE_MM, EDGE_MM, w - 2 * EDGE_MM, occupied.y - gap - EDGE_MM), False),
             (Rect(EDGE_MM, occupied.top + gap, w - 2 * EDGE_MM, h - EDGE_MM - occupied.top - gap), False),
             (Rect(EDGE_MM, EDGE_MM, occupied.x - gap - EDGE_MM, h - 2 * EDGE_MM), True),
             (Rect(occupied.right + gap, EDGE_MM, w - EDGE_MM - occupied.right - gap, h - 2 * EDGE_MM), True)]
    obstacles = [*page.marks, *([page.fold] if page.fold else [])]
    best: tuple[float, TextSlot] | None = None
    for band, vertical in bands:
        if min(band.w, band.h) <= 0:
            continue
        start, end = (band.y, band.top) if vertical else (band.x, band.right)
        blocked = sorted((b.y - gap, b.top + gap) if vertical else (b.x - gap, b.right + gap)
                         for b in (o.box() for o in obstacles) if _touches(b, band))
        for low, high in [*_free(start, end, blocked)]:
            strip = Rect(band.x, low, band.w, high - low) if vertical else Rect(low, band.y, high - low, band.h)
            # Long strips win, but a strip too thin for 4 pt text only as a last resort.
            score = (high - low) * (1.0 if min(band.w, band.h) >= 1.8 else 0.01)
            if best is None or score > best[0] + 1e-6:
                best = (score, TextSlot(strip, vertical))
    return best[1] if best else None


def _touches(a: Rect, b: Rect) -> bool:
    return a.x <= b.right and b.x <= a.right and a.y <= b.top and b.y <= a.top


def _free(start: float, end: float, blocked: list[tuple[float, float]]) -> Iterable[tuple[float, float]]:
    """The parts of [start, end] not covered by the sorted blocked intervals."""
    for low, high in blocked:
        if low > start:
            yield start, min(low, end)
        start = max(start, high)
    if end > start:
        yield start, end


def marks_clear_of_band(frame: Rect, width: float, height: float, band: float) -> bool:
    """Whether every crop mark around the cards' `frame` fits outside the unprintable `band` (as `_mark_end` keeps
    one there): the frame's narrowest margin holds the clearance, the band and a mark of MIN_MARK_MM."""
    margin = min(frame.x, frame.y, width - frame.right, height - frame.top)
    return margin - MARK_CLEARANCE_MM - max(EDGE_MM, band) >= MIN_MARK_MM - 1e-9


def _finish(page: Page, frame: Rect, marks: bool, cuts: bool | Literal["auto"], band: float,
            edges: list[Rect] | None = None) -> Page:
    """Add crop marks (out of the unprintable `band` where there is room) of the slots' trims or the `edges` given
    (a tile's: its board's and its neighbours'), cut lines (`auto`: where the marks cannot stay out of the band, so
    the sheet keeps cut guides a home printer prints) and the footer place to a page whose slots are set."""
    places = tuple((s.trim, s.clip) for s in page.slots)
    drawn, lines, page.footer = _page_geometry(page.width, page.height, page.fold, places, frame, marks, cuts, band,
                                               None if edges is None else tuple(edges))
    page.marks, page.cut_lines = list(drawn), list(lines)  # lists of its own: a page's marks may be changed
    return page


# Every full page of a deck has the same geometry (and a rebuild the previous build's): worked out once per process.
@functools.lru_cache(maxsize=1024)
def _page_geometry(width: float, height: float, fold: Line | None, places: tuple[tuple[Rect, Rect], ...],
                   frame: Rect, marks: bool, cuts: bool | Literal["auto"], band: float,
                   edges: tuple[Rect, ...] | None) -> tuple[tuple[Line, ...], tuple[Line, ...], TextSlot | None]:
    """The crop marks, cut lines and footer place of a page of that size and fold whose slots trim and show
    `places` (each slot's trim and clip); see `_finish`."""
    page = Page(width, height, "front", "", [Slot("", trim, 0.0, clip, "", 0) for trim, clip in places], fold=fold)
    trims = [trim for trim, _ in places] if edges is None else list(edges)
    if cuts == "auto":
        cuts = marks and not marks_clear_of_band(frame, width, height, band)
    if marks and trims:
        page.marks = crop_marks(frame, trims, width, height, band)
        if fold:
            back_frame = frame.mirror("x" if fold.x1 == fold.x2 else "y", width, height)
            page.marks = [m for m in page.marks if not m.box().overlaps(back_frame.grow(MARK_CLEARANCE_MM))]
    if cuts:
        page.cut_lines = cut_lines(page.slots)
    occupied = bounds([frame, *(clip for _, clip in places)])
    return tuple(page.marks), tuple(page.cut_lines), footer_slot(page, occupied)


def impose(items: list[Item], options: PrintSpec) -> Imposition:
    """Lay every item out on pages: grouped by deck in data order, one card size per page (in a process that builds
    again, a sheet of the same cards as in the last imposition with these options is that imposition's)."""
    leaves: list[Leaf] = []
    warnings: list[str] = []
    kept = _KeptLeaves(options) if builds_again() else _leaf
    for (deck, width, height, bleed), group in groupby(items, key=_CARD_SIZE):
        group_items = list(group)
        layout = _chosen_layout(deck, group_items[0].kind, (width, height, bleed), options, warnings)
        if layout is None:
            # Larger than the paper (a board) or than half of it (fold): printed one per page, in
            # overlapping tiles when larger than the paper.
            for item in group_items:
                leaves += tile_leaves(item, options)
            if options.duplex == "fold" and any(item.back for item in group_items):
                warnings.append(f"deck '{deck}': {width:g} x {height:g} mm does not fit half a sheet of "
                                f"{options.sheet} paper; printed one per page without its back (fold needs "
                                "room for both sides)")
            continue
        if builds_again():  # one object for equal layouts, so that a sheet is found by its layout's identity
            layout = _LAYOUTS.setdefault(layout, layout)
        for start in range(0, len(group_items), layout.capacity):
            leaves.append(kept(group_items[start:start + layout.capacity], layout, deck, options))
    imposition = _bind(leaves, options, warnings)
    imposition.warnings += band_warnings([*imposition.pages, *imposition.back_pages], options)
    return imposition


_CARD_SIZE = operator.attrgetter("deck", "width_mm", "height_mm", "bleed_mm")  # (a C call an item)


def _chosen_layout(deck: str, kind: str, size: tuple[float, float, float], options: PrintSpec,
                   warnings: list[str]) -> Layout | None:
    """The layout of one card size: the sheet layout's slots if they hold it, the grid asked for (cards only: tokens
    and boards fill the page), else as many as fit; None when not one fits."""
    width, height, bleed = size
    sheet = options.sheet_layout
    if sheet is not None and sheet.holds(width, height):
        return sheet_layout(sheet, bleed, options)
    if sheet is not None and kind == "card":
        warnings.append(f"deck '{deck}': its {width:g} x {height:g} mm cards do not go into the slots of layout "
                        f"'{sheet.name}' ({sheet.card[0]:g} x {sheet.card[1]:g} mm); laid out to fit the page instead")
    if options.grid_size is not None and kind == "card":
        layout = plan_layout(width, height, bleed, options, options.grid_size)
        if layout is not None:
            return layout
        cols, rows = options.grid_size
        warnings.append(f"deck '{deck}': a {cols} x {rows} grid of {width:g} x {height:g} mm cards does not fit "
                        f"{options.sheet} paper within margins of {options.margin_mm:g} mm; laid out to fit instead "
                        "(a smaller margin:, down to 0, or another paper may hold it)")
    return plan_layout(width, height, bleed, options)


def band_warnings(pages: list[Page], options: PrintSpec) -> list[str]:
    """What lies in the band along the paper edge that the printer cannot print (`unprintable`): cards, crop
    marks; each said once, with how far in."""
    band, found = options.unprintable_mm, []
    nearest = min((page.reach[0] for page in pages), default=float("inf"))
    if nearest < band - 1e-6:
        lost = round(band - nearest, 2)
        found.append(f"cards come to {nearest:.1f} mm from the edge of the {options.sheet} paper: a printer that "
                     f"cannot print the outer {band:g} mm leaves up to {lost:g} mm of them blank (set print: "
                     "unprintable: to what your printer cannot print, 0 for borderless)")
    # A page's cut lines put the cuts on the sheet: a mark of it lost in the band is no loss (`Page.reach`).
    marks = [reach for page in pages for reach in page.reach[1]]
    inside = [(near, far) for near, far in marks if near < band - 1e-6]
    if inside:
        found.append(f"crop marks lie {min(n for n, _ in inside):.1f}-{min(band, max(f for _, f in inside)):.1f} mm "
                     f"from the edge of the {options.sheet} paper, inside the outer {band:g} mm a printer may not "
                     "print: the cards leave no room for them outside it (cut_lines: auto or true draws the cuts "
                     "on the cards; print: unprintable: says what your printer cannot print)")
    return found


def _visible(slot: Slot) -> Rect:
    """The part of a slot's card that is kept after cutting: its trim, as far as the page shows it (a tile)."""
    t, c = slot.trim, slot.clip
    x, y = max(t.x, c.x), max(t.y, c.y)
    return Rect(x, y, min(t.right, c.right) - x, min(t.top, c.top) - y)


def _edge_distance(rect: Rect, page: Page) -> float:
    return min(rect.x, rect.y, page.width - rect.right, page.height - rect.top)


def _mark_reach(mark: Line, page: Page) -> tuple[float, float]:
    """How far from the nearest paper edge a crop mark's two ends are: (nearer, farther)."""
    ends = [min(x, y, page.width - x, page.height - y) for x, y in ((mark.x1, mark.y1), (mark.x2, mark.y2))]
    return min(ends), max(ends)


# In a process that builds again (a watch), the sheets of its last impositions (by their options' text, the last
# KEPT_IMPOSITIONS), by everything `_leaf` reads: an edit lays out again only the sheets whose cards changed, and
# the pages of the others keep their digests (`Page.digest`, which the print's file keys hash) and reach.
_KEPT_LEAVES: dict[str, dict[tuple, tuple[tuple[Item, ...], Leaf, Layout]]] = {}
KEPT_IMPOSITIONS = 8
_LAYOUTS: weakref.WeakValueDictionary[Layout, Layout] = weakref.WeakValueDictionary()  # the layouts held, by value


class _KeptLeaves:
    """`_leaf` for one imposition, taking the last imposition's sheets of the same cards with the same options, and
    keeping this imposition's (only) for the next."""

    def __init__(self, options: PrintSpec) -> None:
        self.options = options
        self.named = repr(options)
        self.last = _KEPT_LEAVES.pop(self.named, {})
        self.now: dict[tuple, tuple[tuple[Item, ...], Leaf, Layout]] = {}
        _KEPT_LEAVES[self.named] = self.now  # the newest last
        while len(_KEPT_LEAVES) > KEPT_IMPOSITIONS:
            del _KEPT_LEAVES[next(iter(_KEPT_LEAVES))]

    def __call__(self, chunk: list[Item], layout: Layout, deck: str, options: PrintSpec) -> Leaf:
        """The sheet of these items (see `_leaf`)."""
        # by the items' identities (held with the sheet): an unchanged card's items are the last build's objects
        # (`items_from_cards`), and an item is not hashed and compared field by field; the options are the same for
        # every sheet of the imposition; the layout by its identity too (one object for equal layouts, `_LAYOUTS`:
        # hashing a layout's slots for each sheet was ~8 ms of an edit at 10,000 cards)
        key = (*map(id, chunk), id(layout), deck)
        kept = self.last.get(key)
        if kept is None or kept[2] is not layout:
            kept = (tuple(chunk), _leaf(chunk, layout, deck, options), layout)
        self.now[key] = kept
        return kept[1]


def _bind(leaves: list[Leaf], options: PrintSpec, warnings: list[str]) -> Imposition:
    """The pages in print order: each front followed by its back (a blank page if it has none).

    A duplex printer prints page 2k on the back of page 2k-1; a missing back page would shift
    every later back onto the wrong front, so sheets without backs get a blank one.
    """
    fronts = [leaf.front for leaf in leaves]
    if options.duplex == "fold":
        return Imposition(fronts, [], warnings)
    backs = [leaf.back or _blank_of(leaf, options) for leaf in leaves]
    if options.duplex == "none":
        return Imposition(fronts, backs if any(leaf.back for leaf in leaves) else [], warnings)
    return Imposition([page for pair in zip(fronts, backs) for page in pair], [], warnings, paired=True)


def _blank_of(leaf: Leaf, options: PrintSpec) -> Page:
    """The blank back of a sheet without a back page (made once per sheet: see `_KeptLeaves`)."""
    if leaf.blank is None:
        leaf.blank = blank_back(leaf.front, options)
    return leaf.blank


def blank_back(front: Page, options: PrintSpec) -> Page:
    """The back of a sheet whose pieces have no back design: no images, only its footer."""
    axis = mirror_axis(options.duplex, front.width, front.height)
    occupied = bounds(s.clip for s in front.slots).mirror(axis, front.width, front.height)
    page = Page(front.width, front.height, "back", front.deck, [], note="back (blank: no back design)")
    page.footer = footer_slot(page, occupied.shift(*options.back_offset_mm))
    return page


TILE_OVERLAP_MM = 10.0  # neighbouring tiles repeat this much of the image, for glueing


def _tile_counts(full: float, room: float) -> int:
    return 1 if full <= room else 1 + -int(-(full - room) // (room - TILE_OVERLAP_MM))


def tile_leaves(item: Item, options: PrintSpec) -> list[Leaf]:
    """An item larger than the paper as tiles: each page shows part of the image, neighbours overlap.

    Overlap marks in the margin show where the next tile's edge goes; trim marks show the board's
    own edges. The whole image is embedded once and clipped on each page. In duplex, each tile's
    back shows the part of the item's back behind it.
    """
    full_w, full_h = item.width_mm + 2 * item.bleed_mm, item.height_mm + 2 * item.bleed_mm
    margin = options.margin_mm
    # the orientation needing the fewest tiles (the first of two that need as many)
    width, height, cols, rows = min(((w, h, _tile_counts(full_w, w - 2 * margin), _tile_counts(full_h, h - 2 * margin))
                                     for w, h in _orientations(parse_paper(options.sheet), options.orientation)),
                                    key=lambda choice: choice[2] * choice[3])
    # Equal tiles: the image shared out evenly, each neighbour pair overlapping by TILE_OVERLAP_MM.
    tile_w = full_w if cols == 1 else (full_w + (cols - 1) * TILE_OVERLAP_MM) / cols
    tile_h = full_h if rows == 1 else (full_h + (rows - 1) * TILE_OVERLAP_MM) / rows
    clip = Rect((width - tile_w) / 2, (height - tile_h) / 2, tile_w, tile_h)
    axis = mirror_axis(options.duplex, width, height)
    leaves = []
    for row in range(rows):
        for col in range(cols):
            # Where this tile's top-left corner is within the image, measured from the image's top-left.
            ax, ay = col * (tile_w - TILE_OVERLAP_MM), row * (tile_h - TILE_OVERLAP_MM)
            image = Rect(clip.x - ax, clip.top + ay - full_h, full_w, full_h)
            slot = Slot(item.face, image.grow(-item.bleed_mm), item.bleed_mm, clip, item.card_id, item.copy)
            name = f"tile {row * cols + col + 1} of {rows * cols} (row {row + 1}, column {col + 1})"
            # Overlap lines: where the neighbours' edges fall on this tile.
            overlap = Rect(clip.x + (TILE_OVERLAP_MM if col else 0),
                           clip.y + (TILE_OVERLAP_MM if row < rows - 1 else 0),
                           clip.w - TILE_OVERLAP_MM * ((col > 0) + (col < cols - 1)),
                           clip.h - TILE_OVERLAP_MM * ((row > 0) + (row < rows - 1)))
            edges = [slot.trim, overlap] if rows * cols > 1 else [slot.trim]
            front = _finish(Page(width, height, "front", item.deck, [slot], note=name), clip, options.crop_marks,
                            options.cut_lines, options.unprintable_mm, edges)
            back = None
            if item.back and options.duplex != "fold":
                # The sheet turns over like a card: the back image, unmirrored, at the mirrored place.
                def turned(rect: Rect) -> Rect:
                    return rect.mirror(axis, width, height).shift(*options.back_offset_mm)

                back_slot = Slot(item.back, turned(slot.trim), item.bleed_mm, turned(clip), item.card_id,
                                 item.copy)
                back = _finish(Page(width, height, "back", item.deck, [back_slot], note=f"back of {name}"),
                               turned(clip), *_back_guides(options), options.unprintable_mm,
                               [turned(e) for e in edges])
            leaves.append(Leaf(front, back))
    return leaves


def _leaf(chunk: list[Item], layout: Layout, deck: str, options: PrintSpec) -> Leaf:
    """One sheet of cards: the front and its back (duplex), or both halves on one page (fold)."""
    w, h = layout.width, layout.height
    fronts = _slots(chunk, layout, False, layout.mirror_axis, (0.0, 0.0))
    if options.duplex == "fold":
        backs = _slots(chunk, layout, True, layout.mirror_axis, (0.0, 0.0))
        page = Page(w, h, "fold", deck, fronts + backs, fold=layout.fold)
        return Leaf(_finish(page, layout.frame, options.crop_marks, options.cut_lines, options.unprintable_mm))
    front = _finish(Page(w, h, "front", deck, fronts), layout.frame, options.crop_marks, options.cut_lines,
                    options.unprintable_mm)
    backs = _slots(chunk, layout, True, layout.mirror_axis, options.back_offset_mm)
    if not backs:
        return Leaf(front)
    frame = layout.frame.mirror(layout.mirror_axis, w, h).shift(*options.back_offset_mm)
    back = _finish(Page(w, h, "back", deck, backs), frame, *_back_guides(options), options.unprintable_mm)
    return Leaf(front, back)


def _back_guides(options: PrintSpec) -> tuple[bool, bool | Literal["auto"]]:
    """The crop marks and cut lines of back pages: the fronts' unless `back_marks` is off (then neither)."""
    return options.crop_marks and options.back_marks, options.cut_lines if options.back_marks else False
