"""The gallery (`output/<game>/index.html`): every card of a build to review in a browser, from file:// too.

Cards are grouped by deck with their name, copies and source row; a filter by deck and a search by name
and text; the build's findings at the top and on the cards they concern; cards changed since the previous
build marked, with their previous image beside the new one (kept in `previous/`); layout guides (trim,
bleed, safe zone and every helper's box) drawn over the images on demand. Everything is inline: no network.
"""
from __future__ import annotations

import functools
import html
import itertools
import json
import operator
from pathlib import Path
from typing import Hashable, Iterable, Iterator, Sequence

from cardgen.core import storage
from cardgen.core.bundled import ASSETS
from cardgen.core.errors import Problem
from cardgen.core.storage import HTML_PAD, Run, derived, kept_blocks, place_file, write_spliced
from cardgen.outputs.playtable import STATS_PAGE, stats_page, table_script, table_section
from cardgen.outputs.stage import Stage, StageContext
from cardgen.record.changes import Changes, diff_records, field_change
from cardgen.record.record import (
    BUILD_RECORD,
    BackEntry,
    BuildRecord,
    CardEntry,
    DeckEntry,
    GuideBox,
    cards_by_deck,
    kept_piece,
)
from cardgen.svg.helper_table import GUIDE_COLORS

GALLERY_FILE = "index.html"
PREVIOUS = "previous"  # images of the changed cards as the previous build drew them


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def guides_svg(deck: DeckEntry, boxes: list[GuideBox]) -> str:
    """An SVG overlay, in the card's pixels, of its bleed, trim line, safe zone and helper boxes."""
    w, h = deck.pixels.width, deck.pixels.height
    bleed = deck.bleed_mm / 25.4 * deck.dpi
    safe = bleed + deck.safe_mm / 25.4 * deck.dpi
    parts = [f'<svg class="guides" viewBox="0 0 {w} {h}" preserveAspectRatio="none" aria-hidden="true">',
             f'<path fill="#e53935" fill-opacity="0.3" fill-rule="evenodd" d="M0 0H{w}V{h}H0Z M{bleed:.1f} {bleed:.1f}'
             f'V{h - bleed:.1f}H{w - bleed:.1f}V{bleed:.1f}Z"/>',
             _rect(bleed, bleed, w - 2 * bleed, h - 2 * bleed, 'stroke="#e53935" stroke-width="2"'),
             _rect(safe, safe, w - 2 * safe, h - 2 * safe,
                   'stroke="#00bcd4" stroke-width="1.5" stroke-dasharray="6 4"')]
    for box in boxes:
        color = GUIDE_COLORS.get(box.kind, "#ffffff")
        fill = ' fill="#e53935" fill-opacity="0.35"' if box.overflow else ""
        parts.append(_rect(box.x, box.y, box.width, box.height, f'stroke="{color}" stroke-width="1.5"{fill}',
                           f"{box.kind}: {box.label}" + (" (does not fit)" if box.overflow else "")))
    parts.append("</svg>")
    return "".join(parts)


def _rect(x: float, y: float, w: float, h: float, style: str, title: str = "") -> str:
    inner = f"<title>{_e(title)}</title>" if title else ""
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="none" {style} '
            f'vector-effect="non-scaling-stroke">{inner}</rect>')


def _finding_item(problem: Problem, link: str | None = None) -> str:
    text = _e(str(problem))
    return f'<li class="{_e(problem.severity)}">' + (f'<a href="#{_e(link)}">{text}</a>' if link else text) + "</li>"


def _card_of(problem: Problem, cards: list[CardEntry]) -> CardEntry | None:
    """The card a finding is about: the one whose data row it names or, in a YAML file (where a finding names the
    line of the key holding the value), the record that starts last at or above that line."""
    if problem.row is None or problem.file is None:
        return None
    same_file = [c for c in cards if c.source.file == problem.file]
    exact = next((c for c in same_file if c.source.row == problem.row), None)
    if exact or not problem.file.endswith((".yaml", ".yml")):
        return exact
    above = [(c.source.row, c) for c in same_file if c.source.row is not None and c.source.row <= problem.row]
    return max(above, key=lambda pair: pair[0], default=(0, None))[1]


def _cards(count: int) -> str:
    """A count of cards as a person writes it: "1 card", "3 cards"."""
    return f"{count} card" if count == 1 else f"{count} cards"


def _figure(card: CardEntry, deck: DeckEntry, findings: list[Problem], changes: Changes,
            back: BackEntry | None = None) -> str:
    """A card's figure: its face (with its previous image when changed, and `back`, its own back, when given)."""
    changed = next((c for c in changes.changed if c.id == card.id), None)
    added = any(c.id == card.id for c in changes.added)
    classes = ["card", *(["changed"] if changed else []), *(["added"] if added else []),
               *(["has-error"] if any(f.severity == "error" for f in findings) else []),
               *(["with-back"] if back else [])]
    previous = ""
    if changed is not None and changed.image_changed:
        before = _e(PREVIOUS + "/" + card.face)
        previous = f'<div class="prev"><img src="{before}" alt="before"><span>before</span></div>'
    badges = ('<span class="badge added">new</span>' if added else "") + \
        ('<span class="badge changed">changed</span>' if changed else "")
    what = ""
    if changed is not None and changed.fields:
        what = '<span class="changes">' + "; ".join(_e(field_change(k, a, b))
                                                     for k, (a, b) in changed.fields.items()) + "</span>"
    search = " ".join([card.name, card.id, card.text, card.deck]).lower()
    items = "".join(_finding_item(f) for f in findings)
    return (f'<figure class="{" ".join(classes)}" id="card-{_e(card.id)}" data-deck="{_e(card.deck)}" '
            f'data-search="{_e(search)}"><div class="images">{previous}<div class="frame">'
            f'<a href="{_e(card.face)}"><img src="{_e(card.face)}" alt="{_e(card.name)}"></a>'
            f"{guides_svg(deck, card.boxes)}</div>{_back_frame(back, deck) if back else ''}</div>"
            f"<figcaption>{badges}<b>{_e(card.name)}</b>"
            f'<span class="copies">x{card.copies}</span><span class="id">{_e(card.id)} &middot; '
            f"{_e(card.source.file)}:{card.source.row}</span>{what}"
            + (f'<ul class="findings">{items}</ul>' if items else "") + "</figcaption></figure>")


def _back_frame(back: BackEntry, deck: DeckEntry) -> str:
    return (f'<div class="frame"><a href="{_e(back.image)}"><img src="{_e(back.image)}" alt="back"></a>'
            f'{guides_svg(deck, back.boxes)}<span>back</span></div>')


def _back_figure(back: BackEntry, deck: DeckEntry) -> str:
    """A back shared by cards of a deck, captioned by its template (a deck choosing backs by type has several)."""
    return (f'<figure class="back"><div class="frame"><img src="{_e(back.image)}" alt="back">'
            f'{guides_svg(deck, back.boxes)}</div><figcaption><b>back</b><span class="id">{_e(back.template)}</span>'
            "</figcaption></figure>")


def gallery_parts(record: BuildRecord, changes: Changes | None = None, guides: bool = False,
                  stats: bool = False) -> Iterator[str | Run]:
    """The gallery page of a build record (with the changes since the previous build, when known), its playtest
    table, and a link to the Stats page when there is one (`stats`), in pieces of a card or so each: written as
    they come, the page of a 10,000-card game (~35 MB) is never held whole, nor its copies while it is put together
    (held, they were ~100 MB of the build's process that it kept to the end of the build)."""
    changes = changes or Changes()
    per_card: dict[str, list[Problem]] = {}
    top = []
    for problem in record.warnings:
        card = _card_of(problem, record.cards)
        if card is not None:
            per_card.setdefault(card.id, []).append(problem)
        top.append(_finding_item(problem, f"card-{card.id}" if card else None))
    errors = sum(p.severity == "error" for p in record.warnings)
    findings = (f'<section id="findings"><h2>{errors} error(s), {len(record.warnings) - errors} warning(s) in this '
                f'build</h2><ul>{"".join(top)}</ul></section>') if top else ""
    by_deck = cards_by_deck(record.cards, record.game.name)
    options = "".join(f'<option value="{_e(n)}">{_e(d.title)}</option>' for n, d in record.decks.items()
                      if n in by_deck)
    moved = ("the first build of this output folder" if changes.first else
             f"{len(changes.added)} new, {len(changes.changed)} changed, {len(changes.removed)} removed since the "
             "previous build" if not changes.empty else "no change since the previous build")
    title = _e(f"{record.game.title} v{record.game.version}")
    style = "".join((ASSETS / "gallery" / name).read_text(encoding="utf-8") for name in ("gallery.css", "table.css"))
    views = '<button id="view-table" aria-pressed="false">Table</button>' + (
        f'<a href="../{_e(STATS_PAGE.format(game=record.game.name))}">Stats</a>' if stats else "")
    legend = "".join(f'<b style="border-bottom:2px solid {c}">{k}</b>' for k, c in GUIDE_COLORS.items())
    # (one run, padded: its counts and findings change as the cards do, its length the pad takes up: `storage.padding`)
    yield Run((f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
           f'<meta name="viewport" content="width=device-width"><style>{style}</style></head>'
           f'<body data-game="{_e(record.game.name)}" data-built="{_e(build_id(record))}"><header>'
           f"<h1>{title} <small>built {_e(record.built_at)}, {_cards(len(record.cards))}, {record.stats.copies} with "
           f'copies; {moved}</small></h1><div class="controls"><label>Deck <select id="deck"><option value="">'
           f'all decks</option>{options}</select></label><input id="search" type="search" placeholder="Search names '
           f'and text" aria-label="Search"><label><input type="checkbox" id="guides"{" checked" * guides}> '
           f'Guides</label><span class="legend">trim (red line), bleed (red), safe zone (cyan) {legend}</span>'
           f'<label><input type="checkbox" id="changed-only"> Changed only</label><span id="count"></span>'
           f'<span class="views">{views}</span></div></header><div id="banner" hidden></div>'
           f"<main>{findings}",), HTML_PAD)
    yield from _deck_sections(record, by_deck, per_card, changes)
    yield from table_section(record, by_deck.keys())
    script = (ASSETS / "gallery" / "gallery.js").read_text(encoding="utf-8") + table_script()
    yield f"</main><script>{script}</script></body></html>\n"


def _deck_sections(record: BuildRecord, by_deck: dict[str, list[CardEntry]], per_card: dict[str, list[Problem]],
                   changes: Changes) -> Iterator[str | Run]:
    """Each deck's section of the gallery: its backs, then a figure per card."""
    by_image = {back.image: back for back in record.backs.values()}
    touched = {change.id for change in changes.changed} | {card.id for card in changes.added}
    per_card_backs = frozenset(image for image, back in by_image.items() if back.per_card)
    for deck_name, deck in record.decks.items():
        cards = by_deck.get(deck_name)
        if not cards:
            continue
        kind = (record.game.name, deck_name)
        # A card with no finding, no back of its own and no change shows only itself on its deck's guides: in a
        # long-running process its figure is made once (`kept_piece`), not again at every edit of another card, and
        # a block of such cards is one part, the last build's while it holds the same cards (`storage.kept_blocks`:
        # no card of it looked at), so the splice copies it as one range; so are the facts of a block its deck's
        # section says (`_block_facts`).
        plain = ("figure", deck.pixels.width, deck.pixels.height, deck.bleed_mm, deck.safe_mm, deck.dpi)
        made = kept_blocks(("gallery",) + kind, cards, (plain, per_card_backs),
                           functools.partial(_plain_block, deck=deck, plain=plain, per_card=per_card_backs))
        own_images, shared, copies = _deck_facts(facts for facts, _ in made)
        own = {card_id: by_image[image] for card_id, image in own_images.items()}  # shown with the card
        backs = "".join(_back_figure(by_image[image], deck) for image in sorted(shared))
        yield (f'<section class="deck" data-deck="{_e(deck_name)}"><h2>{_e(deck.title)} <small>{_cards(len(cards))}'
               f', {copies} with copies</small></h2><div class="grid">{backs}')
        special = per_card.keys() | own.keys() | touched
        shown = _special_blocks(kind, cards, special)
        for number, (_, run) in enumerate(made):
            if number not in shown:
                yield run
                continue
            yield Run(tuple(_figure(card, deck, per_card.get(card.id, []), changes, own.get(card.id))
                            if card.id in special else
                            kept_piece(card, plain, functools.partial(_figure, card, deck, [], Changes()))
                            for card in cards[number * storage.RUN_ITEMS:(number + 1) * storage.RUN_ITEMS]),
                      HTML_PAD)  # padded as the others (`storage.padding`)
        yield "</div></section>"


def _special_blocks(kind: tuple[str, str], cards: list[CardEntry], special: set[str]) -> set[int]:
    """The numbers of the blocks of RUN_ITEMS cards that hold a card of these ids (each, when ids repeat)."""
    places = card_places(("gallery-places",) + kind, cards)
    if places is None:
        return set(range(len(cards) // storage.RUN_ITEMS + 1))
    return {places[card_id] // storage.RUN_ITEMS for card_id in special if card_id in places}


def card_places(kind: Hashable, cards: list[CardEntry]) -> dict[str, int] | None:
    """The place of each card by its id, None when two cards share one (in a process that builds again, the last
    call's of this kind while the cards at the changed places keep their ids: `storage.derived`)."""
    def whole() -> dict[str, int] | None:
        places = dict(zip(map(_ID, cards), itertools.count()))
        return places if len(places) == len(cards) else None

    def patched(made: dict[str, int] | None, last: list[CardEntry], changed: list[int] | None) -> dict[str, int] | None:
        same = made is not None and changed is not None and all(cards[at].id == last[at].id for at in changed)
        return made if same else None

    return derived(kind, cards, None, whole, patched)


def _deck_facts(blocks_facts: Iterable[tuple[dict[str, str], set[str], int]]) -> tuple[dict[str, str], set[str], int]:
    """Of a deck's cards, from the facts of its blocks (`_block_facts`, each made once while the block holds the same
    cards: three passes over 10,000 cards were ~15 ms of an edit): the back image of each card that shows its own,
    by card id, the other backs they show, and their copies."""
    own: dict[str, str] = {}
    shared: set[str] = set()
    copies = 0
    for block_own, block_shared, block_copies in blocks_facts:
        own.update(block_own)
        shared |= block_shared
        copies += block_copies
    return own, shared, copies


def _block_facts(cards: Sequence[CardEntry], per_card: frozenset[str]) -> tuple[dict[str, str], set[str], int]:
    """`_deck_facts` of a block of cards."""
    return ({card.id: card.back for card in cards if card.back in per_card},
            {card.back for card in cards if card.back and card.back not in per_card},
            sum(card.copies for card in cards))


_ID = operator.attrgetter("id")


def _plain_block(start: int, cards: Sequence[CardEntry], deck: DeckEntry, plain: tuple, per_card: frozenset[str]
                 ) -> tuple[tuple[dict[str, str], set[str], int], Run]:
    """Of a block of a deck's cards: its facts (`_block_facts`), and the figures of its cards as cards with no
    finding, no back of their own and no change (see `_deck_sections`), as one part."""
    return _block_facts(cards, per_card), Run(tuple(
        kept_piece(card, plain, functools.partial(_figure, card, deck, [], Changes())) for card in cards), HTML_PAD)


def build_id(record: BuildRecord) -> str:
    """What tells one build from the next (the page under `cardgen serve` updates when it changes)."""
    return f"{record.fingerprint or ''}-{record.built_at}"


def _keep_previous_images(record: BuildRecord, old_dir: Path, out_dir: Path, changes: Changes) -> None:
    """Copy the previous images of changed cards into previous/ of the new build."""
    redrawn = {change.id for change in changes.changed if change.image_changed}
    places = card_places(("gallery-places", record.game.name), record.cards) if redrawn else None
    ids = list(map(_ID, record.cards)) if redrawn and places is None else []  # (ids repeated: the first card's)
    for card_id in redrawn:
        face = record.cards[places[card_id] if places is not None else ids.index(card_id)].face
        if (old_dir / face).is_file():
            place_file(old_dir / face, out_dir / PREVIOUS / face)


class GalleryStage(Stage):
    """`index.html`: every card of the build on one page, with what changed since the build it replaces."""

    name = "gallery"
    while_drawing = True  # it reads the record and the previous build's images only
    reads = ("guides",)  # it links the guides when there are some

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write index.html next to the card images, comparing with the build it replaces."""
        old_dir = ctx.final_dir  # the previous build stays in place until this one is swapped in
        changes = ctx.changes
        if changes is None:
            previous = BuildRecord.previous(old_dir) if (old_dir / BUILD_RECORD).is_file() else None
            changes = diff_records(previous, ctx.record) if previous is not None else Changes(first=True)
        _keep_previous_images(ctx.record, old_dir, ctx.out_dir, changes)
        guides = (ctx.out_dir / "guides").is_dir()
        stats = stats_page(ctx.final_dir.parent, ctx.record.game.name).is_file()
        write_spliced(ctx.out_dir / GALLERY_FILE, gallery_parts(ctx.record, changes, guides, stats),
                      old_dir / GALLERY_FILE, ctx.final_dir.parent)
        return []


def gallery_state(out_dir: Path) -> dict:
    """What `cardgen serve` tells the page about the last finished build of a folder: its id (`built`, the body's
    data-built), its images by path with their content keys (`images`: what a rebuild changed), and which cards,
    decks and backs the page shows (`layout`: when it changes, the page loads again). Empty when there is none."""
    try:
        record = json.loads((out_dir / BUILD_RECORD).read_text(encoding="utf-8"))
        cards, backs = record["cards"], record.get("backs", {}).values()
        images = {**{card["face"]: card["hash"] for card in cards}, **{back["image"]: back["hash"] for back in backs}}
        layout = [list(record["decks"]), sorted(back["image"] for back in backs),
                  [[card["id"], card["deck"], card["face"], card.get("back")] for card in cards]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    return {"built": f"{record.get('fingerprint') or ''}-{record.get('built_at')}", "images": images,
            "layout": layout}
