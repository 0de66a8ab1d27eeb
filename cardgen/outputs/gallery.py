"""An HTML gallery of a build: every card with its name, deck, copies and back, to review before printing."""
from __future__ import annotations

import html

from cardgen.errors import Problem
from cardgen.outputs.stage import Stage, StageContext
from cardgen.record import BuildRecord, CardEntry
from cardgen.storage import write_text

GALLERY_FILE = "index.html"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; background: #2b2a28; color: #eee; }
h1 small { font-weight: normal; color: #aaa; font-size: 60%; }
section { margin-bottom: 2.5rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 1rem; }
figure { margin: 0; background: #3a3936; padding: .5rem; border-radius: 6px; }
figure img { width: 100%; display: block; border-radius: 4px; }
figcaption { font-size: .85rem; margin-top: .3rem; }
figcaption .copies { float: right; color: #e8c21a; }
figcaption .id { color: #999; font-size: .75rem; display: block; }
"""


def _figure(card: CardEntry) -> str:
    name, card_id = html.escape(card.name), html.escape(card.id)
    return (f'<figure id="{card_id}"><a href="{html.escape(card.face)}"><img loading="lazy" '
            f'src="{html.escape(card.face)}" alt="{name}"></a><figcaption>{name}'
            f'<span class="copies">x{card.copies}</span><span class="id">{card_id} &middot; '
            f'{html.escape(card.source.file)}:{card.source.row}</span></figcaption></figure>')


def gallery_html(record: BuildRecord) -> str:
    """The gallery page of a build record: one section per deck, its back first."""
    game = record.game
    sections = []
    for deck_name, deck in record.decks.items():
        cards = record.cards_of(deck_name)
        if not cards:
            continue
        backs = sorted({c.back for c in cards if c.back})
        back_figures = "".join(f'<figure><img loading="lazy" src="{html.escape(b)}" alt="back">'
                               f"<figcaption>back</figcaption></figure>" for b in backs)
        copies = sum(c.copies for c in cards)
        sections.append(f'<section><h2>{html.escape(deck.title)} <small>{len(cards)} cards, {copies} '
                        f'with copies</small></h2><div class="grid">{back_figures}'
                        f'{"".join(_figure(c) for c in cards)}</div></section>')
    title = html.escape(f"{game.title} v{game.version}")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{_STYLE}</style></head><body><h1>{title} <small>built {html.escape(record.built_at)}, "
            f"{record.stats.copies} cards</small></h1>{''.join(sections)}</body></html>\n")


class GalleryStage(Stage):
    """`index.html`: every card of the build on one page, to look over before printing."""

    name = "gallery"

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write index.html next to the card images."""
        write_text(ctx.out_dir / GALLERY_FILE, gallery_html(ctx.record))
        return []
