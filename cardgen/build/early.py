"""A rebuild's edited cards drawn while the game is still validated.

A whole-command rebuild (an edit) forks its render worker first, which is set up long before the build has loaded,
validated and planned the game. The faces the SVG cache lacks (the one or two cards an edit changed) are rendered
first, before validation, which then takes them from the renderer; each render made while validating (those, and
any the layout check makes) is keyed as the plan keys it and sent to the worker at once, to be drawn into the PNG
cache and kept in the worker's memory (`RasterJob.keep`); the plan's job for it then brings the output stages' work
on the kept card (see `draw_plan`'s `early`). The drawing overlaps validation, the plan, the record and the stages'
imports.

Drawn ahead of knowing whether the build goes on: a drawing goes only into the content-addressed PNG cache (sealed,
written atomically), never into the output, so a build that then fails validation places nothing, and the cache
holds one more entry that the same card, fixed, takes. A drawing that fails is drawn again by the plan's job, which
says why; a render that fails is made again by validation, which says why.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from cardgen.build.plan import BuildPlan, artwork_of
from cardgen.core.storage import verify
from cardgen.load.data import Card
from cardgen.raster import render
from cardgen.raster.pool import RenderPool
from cardgen.raster.render import RasterJob
from cardgen.svg.context import BuildContext
from cardgen.svg.templates import RenderedSVG
from cardgen.validate.layout import cards_unchecked

# The most renders sent early in one build: an edit's few cards. Past them (a template edited: every card rendered
# anew), the plan hands the rest out as it would; the worker keeps as many cards (`render.KEPT_AT_MOST`).
EARLY_AT_MOST = render.KEPT_AT_MOST


class EarlyDrawing:
    """Sends each render made while validating to the render workers, keyed as the plan keys it (see `artwork_of`:
    the key is kept with the card, so the plan does not hash its SVG again), unless its image is in the cache."""

    def __init__(self, context: BuildContext, workers: RenderPool) -> None:
        self.context, self.workers = context, workers
        self.keyed = BuildPlan(context.game, [])  # the deck sizes and file digests of the renders keyed here
        self.sent: set[str] = set()  # image keys

    def made(self, template: str, deck: str, card: Card | None, rendered: RenderedSVG) -> None:
        """Send a render made now to be drawn (a face, or a back: each keyed by what it shows)."""
        if len(self.sent) >= EARLY_AT_MOST:
            return
        face = card is not None and template == card.face_template
        try:
            art = artwork_of(card.id if face and card else template, rendered, self.keyed, deck, self.context,
                             card if face else None)
            if art.key in self.sent or verify(art.cache_path):
                return
            self.workers.submit(render.run_job, RasterJob(art.key, self.keyed.drawing(art), str(art.cache_path),
                                                          keep=True))
        except Exception:  # noqa: BLE001  (a file it draws gone, the pool broken) the plan's job draws it, or says why
            return
        self.sent.add(art.key)

    def render_new(self) -> None:
        """Render now the first faces the caches lack (an edit's), at most EARLY_AT_MOST of them tried, so that they
        are drawn from the start of validation rather than from its layout check, which takes them from the
        renderer (a render that fails is not kept: the layout check renders it again and says why)."""
        renderer, tried = self.context.renderer, 0
        # in a process that builds again, the cards its last check did not have (the others' renders are kept: a look
        # at each was ~20-70 ms of an edit at 10,000 cards); a render missed here is sent when the check makes it
        changed = cards_unchecked(self.context)
        for card in self.context.data.cards if changed is None else changed:
            if tried >= EARLY_AT_MOST:
                return
            if card.copies == 0 or renderer.kept(card.face_template, card.deck, card):
                continue
            tried += 1
            try:
                renderer.render(card.face_template, card.id, card.deck, card)
            except Exception:  # noqa: BLE001,S112  (a template or data error) validation says it
                continue


@contextmanager
def drawn_early(context: BuildContext, workers: RenderPool | None) -> Iterator[set[str]]:
    """Within the block, the renders `context` makes are drawn by `workers` as they are made (see `EarlyDrawing`);
    yields the image keys sent. Nothing is sent without workers."""
    if workers is None:
        yield set()
        return
    early = EarlyDrawing(context, workers)
    context.renderer.on_made = early.made
    try:
        early.render_new()
        yield early.sent
    finally:
        context.renderer.on_made = None
