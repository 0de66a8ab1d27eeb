"""A game's build plan: every card face and distinct back rendered to SVG with its image cache key, drawn to
PNG where the cache lacks it, then placed as card files with the build record beside them."""
from __future__ import annotations

import collections
import datetime
import functools
import itertools
import operator
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Collection, Hashable, Mapping, Protocol, Sequence, cast

from cardgen import __version__
from cardgen.core.errors import LEFT_OUT, CardgenError, Problem
from cardgen.core.folderwatch import entry_trust
from cardgen.core.progress import Reporter
from cardgen.core.storage import (
    Cache,
    builds_again,
    copy_into_staging,
    derived,
    file_digest,
    keep_latest,
    verify,
    write_text,
)
from cardgen.load.data import Card
from cardgen.load.freshness import PreviousOutputs
from cardgen.load.manifest import CardSize, Game
from cardgen.raster.pool import RenderPool, run_jobs
from cardgen.raster.render import CardWork, Drawing, RasterJob, content_key, look_key
from cardgen.record.record import (
    KNOWN_RECORDS,
    BackEntry,
    BuildRecord,
    CardEntry,
    DeckEntry,
    Dimensions,
    GameEntry,
    Pixels,
    SourceRef,
    Stats,
    keep_entries,
    kept_entry,
)
from cardgen.svg.context import BuildContext
from cardgen.svg.templates import RenderedSVG, SVGRenderer
from cardgen.validate.findings import unique
from cardgen.validate.layout import checked_anew


@dataclass
class Artwork:
    """One image to produce: a card face or a distinct back, its SVG, what it shows (`look_key`), its cache key
    (`content_key`) and its cache file."""

    name: str
    rendered: RenderedSVG
    deck: str
    look: str
    key: str
    cache_path: Path
    template: str = ""  # a back's template
    per_card: bool = False  # a back whose template reads the card (drawn for each card, shared by content)
    files: tuple[tuple[str, str], ...] = ()  # the image files it draws and the digests its `look` was made of
    cache_file: str = field(init=False, repr=False)  # the cache file as text, made once (see `_found_in_cache`)

    def __post_init__(self) -> None:
        self.cache_file = str(self.cache_path)


_PLAN_NUMBERS = itertools.count()  # (see `BuildPlan.number`)


@dataclass
class BuildPlan:
    """What a game's build draws: faces per card id, backs per name, plus the game and its cards."""

    game: Game
    cards: list[Card]
    faces: dict[str, Artwork] = field(default_factory=dict)
    backs: dict[str, Artwork] = field(default_factory=dict)
    card_back: dict[str, str | None] = field(default_factory=dict)
    findings: list[Problem] = field(default_factory=list)  # warnings, and errors of a forced build
    back_names: dict[tuple[str, str], str] = field(default_factory=dict)  # (deck, template) -> name in backs
    back_keys: dict[str, str] = field(default_factory=dict)  # image key -> name in backs: backs shared by content
    # The files cards draw (fonts, images) by content, each digested once a plan: most cards draw the same fonts.
    file_digests: dict[Path, str] = field(default_factory=dict)
    # sets of files with their digests, by identity (see `_FILE_SETS`): whether still so
    same_files: dict[int, tuple[tuple, bool]] = field(default_factory=dict)
    drawn: dict[int, tuple] = field(default_factory=dict)  # the sets of files its artworks draw, by identity
    places: dict[str, tuple] = field(default_factory=dict)  # what each deck's images are drawn at (see `artwork_of`)
    sizes: dict[str, CardSize] = field(default_factory=dict)  # each deck's card size, resolved once a plan
    # What each card shows (`look_key`), by its SVG and what else it hashes: in a process that builds again, the
    # looks of the last plan of the game are taken from `_LOOKS` (an SVG kept between builds is one string object,
    # whose hash Python keeps: a look found again costs no hashing of its text).
    looks: dict[tuple, str] = field(default_factory=dict)
    # The faces' renders in the order of `faces`, when the plan holds them already (a plan made from the game's last
    # one, see `_LastPlan`): not read again from 10,000 artworks (see `files_drawn`).
    face_renders: list[RenderedSVG] | None = None
    # This plan's number in the process and, for a plan made from the game's last one (`_LastPlan.planned`), that
    # one's number and the places (of `cards`, and of the faces in their order) whose card or face render is another
    # object: at every other place the card, its face's render and artwork and its back are the last plan's objects.
    # What follows the plans of a game (the record, the hand-out, the files drawn: `changed_since`) compares those
    # places only when it last followed that very plan, not 10,000 places by identity.
    number: int = field(default_factory=lambda: next(_PLAN_NUMBERS))
    since: tuple[int, list[int]] | None = None

    def size(self, deck: str) -> CardSize:
        """The card size of a deck."""
        if deck not in self.sizes:
            self.sizes[deck] = self.game.deck_size(self.game.spec.decks[deck])
        return self.sizes[deck]

    def drawing(self, art: Artwork) -> Drawing:
        """How a card image is drawn."""
        game, size = self.game, self.size(art.deck)
        return Drawing(art.rendered.svg, size.full_width_px, size.full_height_px, size.dpi, *self._places,
                       game.spec.decks[art.deck].kind != "card", art.files)

    @functools.cached_property
    def _places(self) -> tuple[str, str, tuple[str, ...]]:
        """The root, base URL and font folders of every drawing, resolved once (a resolve per card costs a tenth
        of a second at 1,000 cards)."""
        game = self.game
        return (str(game.root.resolve()), game.data_dir.resolve().as_uri() + "/",
                (str((game.root / "fonts").resolve()),))


# The looks of the last plan of each game (see `BuildPlan.looks`), in a process that builds again.
_LOOKS: dict[str, dict[tuple, str]] = {}

@functools.lru_cache(maxsize=8)  # asked for each card a plan keys (~20 us each: the cache folder found)
def png_cache(out_root: Path) -> Cache:
    """The content-addressed cache of drawn card images, shared by all games of an output root."""
    return Cache(out_root, "png", ".png")


def plan_build(context: BuildContext, findings: list[Problem] | None = None, force: bool = False) -> BuildPlan:
    """Render every face and distinct back of a loaded game to SVG; nothing is drawn yet.

    Errors in the game's data or in `findings` (validation's) stop the plan. With `force` they do
    not: a card whose data cannot be read (an error in its row) or that cannot be rendered is left out
    with an error finding, and every other card is planned, errors of the other layers and all.
    """
    # validation's findings hold the data's own problems already (a build passes them): each error once
    errors = [p for p in unique(context.data.problems, findings or []) if p.severity == "error"]
    if errors and not force:
        raise CardgenError(errors)
    broken = {(p.file, p.row) for p in context.data.problems if p.severity == "error" and p.row is not None}
    last = _LAST_PLANS.get(context.game.name) if builds_again() and not force and not broken else None
    plan = last.planned(context) if last is not None else None
    if plan is None:
        plan = _planned(context, broken, force)
        last = _LastPlan.of(plan, context)
    plan.findings = unique(plan.findings)  # a missing font once, not once per card
    if builds_again():
        keep_latest(_LOOKS, plan.game.name, plan.looks, KNOWN_RECORDS)
        if last is not None:
            keep_latest(_LAST_PLANS, plan.game.name, last, KNOWN_RECORDS)
        else:
            _LAST_PLANS.pop(plan.game.name, None)
    return plan


def _planned(context: BuildContext, broken: set[tuple[str | None, int]], force: bool) -> BuildPlan:
    """The plan of every card, one by one (see `plan_build`), its findings not made unique yet."""
    plan = BuildPlan(context.game, [])
    for card in context.data.cards:
        if card.copies == 0:
            plan.findings.append(Problem(f"card '{card.id}' has 0 copies; it is left out of the build",
                                         file=card.source_file, row=card.source_row, severity="warning"))
        elif (card.source_file, card.source_row) in broken:
            plan.findings.append(_left_out(card, "its data has errors (above)"))
        else:
            _plan_card(plan, context, card, force)
    for art in [*plan.faces.values(), *plan.backs.values()]:
        plan.findings += art.rendered.warnings
    return plan


class _LastPlan:
    """The last plan of a game in a process that builds again, card by card: the next plan takes it whole and plans
    again only the places whose card is another object or whose face this build rendered anew (`planned`), its
    backs planned again at the first card of each (deck, template). A plan a card cost ~25-30 ms an edit at 10,000
    cards, each unchanged card's artwork looked up; the lists compared by identity, ~1 ms.

    Only a plan of every card of the game (none left out, no 0 copies, each id once) with no back drawn for each
    card is kept; another build plans one by one."""

    def __init__(self, cards: list[Card], faces: dict[str, Artwork], card_back: dict[str, str | None],
                 memos: list[tuple[str, str, str]], renders: list[RenderedSVG], plan: BuildPlan,
                 firsts: list[int], warnings: dict[int, list[Problem]], check: int | None) -> None:
        self.cards, self.faces, self.card_back, self.memos, self.renders = cards, faces, card_back, memos, renders
        self.places, self.drawn, self.back_names = plan.places, plan.drawn, plan.back_names
        self.firsts, self.warnings = firsts, warnings  # the first card of each back; each face's warnings by place
        self.number = plan.number  # the plan this one is (see `BuildPlan.since`)
        self.check = check  # the layout check whose renders it took (see `layout.checked_anew`), if known

    @classmethod
    def of(cls, plan: BuildPlan, context: BuildContext) -> _LastPlan | None:
        """What the next plan of the game takes of `plan` (a plan made card by card), or None when it cannot."""
        cards = context.data.cards
        if not builds_again() or len(plan.cards) != len(cards) or len(plan.faces) != len(cards) or \
                any(art.per_card for art in plan.backs.values()):
            return None
        firsts: dict[tuple[str, str], int] = {}
        for place, card in enumerate(cards):
            if card.back_template is not None:
                firsts.setdefault((card.deck, card.back_template), place)
        faces = list(plan.faces.values())
        plan.face_renders = list(map(_RENDERED, faces))
        checked = checked_anew(context)
        return cls(list(cards), plan.faces, plan.card_back, [(c.face_template, c.deck, c.id) for c in cards],
                   plan.face_renders, plan, sorted(firsts.values()),
                   {place: art.rendered.warnings for place, art in enumerate(faces) if art.rendered.warnings},
                   checked[2] if checked is not None else None)

    def planned(self, context: BuildContext) -> BuildPlan | None:
        """The plan of the game's cards from this one (and this one replaced by the new plan's), or None when it
        cannot be made so: cards added or removed, many changed, a deck's size or a file cards draw changed, a
        changed card's id, deck or back another."""
        cards, renderer = context.data.cards, context.renderer
        plan = BuildPlan(context.game, list(cards))
        if len(cards) != len(self.cards) or \
                any(_place_of(plan, deck, context) != at for deck, at in self.places.items()) or \
                not all(_same_files(plan, files) for files in self.drawn.values()):
            return None
        checked = checked_anew(context)
        changed = self._changed(cards, renderer, checked)
        if len(changed) > CHANGED_AT_MOST or any(_moved(cards[place], self.cards[place]) for place in changed):
            return None
        for place in self.firsts:  # the backs, as a plan card by card names them
            _plan_back(plan, context, cards[place])
        if plan.back_names != self.back_names:
            return None
        plan.drawn = dict(self.drawn)
        plan.faces, plan.card_back = dict(self.faces), self.card_back  # (the same names: the same backs)
        memos, renders, warnings = list(self.memos), list(self.renders), dict(self.warnings)
        for place in changed:
            card = cards[place]
            face = renders[place] = renderer.render(card.face_template, card.id, card.deck, card)
            plan.faces[card.id] = artwork_of(card.id, face, plan, card.deck, context, card)
            memos[place] = (card.face_template, card.deck, card.id)
            warnings.pop(place, None)
            if face.warnings:
                warnings[place] = face.warnings
        plan.findings = [*itertools.chain.from_iterable(warnings[place] for place in sorted(warnings)),
                         *itertools.chain.from_iterable(art.rendered.warnings for art in plan.backs.values())]
        self.cards, self.faces, self.memos, self.renders, self.warnings = plan.cards, plan.faces, memos, renders, \
            warnings
        self.drawn, plan.face_renders = plan.drawn, renders
        plan.since, self.number = (self.number, changed), plan.number
        self.check = checked[2] if checked is not None else None
        return plan

    def _changed(self, cards: list[Card], renderer: SVGRenderer, checked: tuple[int | None, list[int] | None, int]
                 | None) -> list[int]:
        """The places whose card is another object or whose face's render (validation rendered each card's face)
        is not this plan's: of those the layout check did not take whole from the check this plan took its renders
        from, when it took from that one (`layout.checked_anew`: at the others, the card and the render are that
        check's, so this plan's; ~10,000 renders looked up, ~3.5 ms at 10,000 cards, otherwise); else of all."""
        places = checked[1] if checked is not None and checked[0] is not None and checked[0] == self.check else None
        if places is None or len(places) > CHANGED_AT_MOST:
            return list(itertools.compress(range(len(cards)), map(operator.not_, map(
                operator.and_, map(operator.is_, cards, self.cards),
                map(operator.is_, renderer.faces_done(self.memos), self.renders)))))
        done = renderer.faces_done([self.memos[place] for place in places])
        return [place for place, render in zip(places, done)
                if cards[place] is not self.cards[place] or render is not self.renders[place]]


def changed_since(plan: BuildPlan, number: int | None) -> list[int] | None:
    """The places of the plan's cards (and faces) whose card or face differs from those of the plan numbered `number`
    (see `BuildPlan.since`), when the plan was made from that one; else None: every place is to be compared."""
    since = plan.since
    return since[1] if since is not None and number is not None and since[0] == number else None


def _moved(card: Card, last: Card) -> bool:
    """Whether a changed card takes another place in the plan's dicts or backs than the card it replaces."""
    return card.copies == 0 or (card.id, card.deck, card.back_template) != (last.id, last.deck, last.back_template)


_RENDERED = operator.attrgetter("rendered")
# The last plan of each game in this process (see `_LastPlan`), the latest KNOWN_RECORDS.
_LAST_PLANS: dict[str, _LastPlan] = {}


def _left_out(card: Card, why: str) -> Problem:
    return Problem(f"card '{card.id}' is left out of the build: {why}", file=card.source_file, row=card.source_row,
                   rule=LEFT_OUT)


def _plan_card(plan: BuildPlan, context: BuildContext, card: Card, force: bool) -> None:
    """Render a card's face and back into the plan; a card that cannot be rendered stops the plan unless forced."""
    try:
        face = context.renderer.render(card.face_template, card.id, card.deck, card)
        back = _plan_back(plan, context, card)
    except CardgenError as exc:
        if not force:
            raise
        plan.findings += [*exc.problems, _left_out(card, "it cannot be rendered")]
        return
    plan.faces[card.id] = artwork_of(card.id, face, plan, card.deck, context, card)
    plan.card_back[card.id] = back
    plan.cards.append(card)


def _plan_back(plan: BuildPlan, context: BuildContext, card: Card) -> str | None:
    """Render a card's back, once per (deck, template) unless the template reads `card`, and share it by content."""
    if card.back_template is None:
        return None
    per_card = context.renderer.reads_card(card.back_template)
    known = None if per_card else plan.back_names.get((card.deck, card.back_template))
    if known is not None:  # a deck sharing another deck's back would otherwise be keyed again for every card
        return known
    stem = Path(card.back_template).stem
    rendered = context.renderer.render(card.back_template, card.back_template, card.deck, card if per_card else None)
    art = artwork_of(stem, rendered, plan, card.deck, context)
    name = plan.back_keys.get(art.key)
    if name is None:  # a new back: named by its template (and deck, when taken), or by its card as its face is
        wanted = [f"{card.deck}/{card.id}"] if per_card else [stem, f"{stem}-{card.deck}"]
        name = art.name = _free_name(wanted, plan.backs)
        art.template, art.per_card = card.back_template, per_card
        plan.backs[name] = art
        plan.back_keys[art.key] = name
    if not per_card:
        plan.back_names[(card.deck, card.back_template)] = name
    return name


def _free_name(wanted: list[str], taken: Mapping[str, object]) -> str:
    """The first name of `wanted` not taken, else the last one numbered (`back-foes-2`)."""
    numbered = (f"{wanted[-1]}-{number}" for number in itertools.count(2))
    return next(name for name in itertools.chain(wanted, numbered) if name not in taken)


def artwork_of(name: str, rendered: RenderedSVG, plan: BuildPlan, deck: str, context: BuildContext,
               card: Card | None = None) -> Artwork:
    """The image to produce of a render: its look and cache key (kept with the `card` it shows, the artwork itself,
    while its render, deck size, output root and the content of the files it draws are the same: see `Card.made`)."""
    at = _place_of(plan, deck, context)
    made = card.made.get(("art", name, deck)) if card is not None else None
    if made is not None and made[0] is rendered and made[1] == at and _same_files(plan, made[2]):
        plan.drawn[id(made[2])] = made[2]
        return made[3]  # (a face's artwork is not changed once made)
    size, kind = plan.size(deck), at[0]
    font_files = [f for family in rendered.families for f in context.fonts.files_for(family)]
    files = {path: _digest(plan, path) for path in {*rendered.files, *font_files}}
    drawn = tuple(sorted(files.items(), key=_path_text))  # (by text: Path objects compare part by part, slower)
    about = (rendered.svg, *at[:4], _FILE_SETS.setdefault(drawn, drawn))
    plan.drawn[id(about[-1])] = about[-1]
    look = plan.looks.get(about) or (_LOOKS.get(plan.game.name, {}).get(about) if builds_again() else None)
    if look is None:
        look = look_key(rendered.svg + kind, size.full_width_px, size.full_height_px, size.dpi, files)
    plan.looks[about] = look
    key = content_key(look)
    assert context.out_root is not None, "a build context has an output root"
    art = Artwork(name, rendered, deck, look, key, png_cache(context.out_root).path(key),
                  files=tuple((str(path), files[path]) for path in dict.fromkeys(rendered.files)))
    if card is not None:
        card.made["art", name, deck] = (rendered, at, about[-1], art)
    while len(_FILE_SETS) > FILE_SETS_AT_MOST:  # (a back's artwork adds to it too)
        del _FILE_SETS[next(iter(_FILE_SETS))]
    return art


def _path_text(item: tuple[Path, str]) -> str:
    """A drawn file's path as text, to order a card's files by (a plan's own order: only compared within a process)."""
    return str(item[0])


def _place_of(plan: BuildPlan, deck: str, context: BuildContext) -> tuple:
    """What a deck's images are drawn at (their kind, pixel size and DPI) and where they are kept, once a plan."""
    at = plan.places.get(deck)
    if at is None:
        size, kind = plan.size(deck), plan.game.spec.decks[deck].kind  # tokens and boards keep transparency: keyed
        at = plan.places[deck] = (kind, size.full_width_px, size.full_height_px, size.dpi, context.out_root)
    return at


# The sets of files (with their digests) cards draw, one object each: the cards of a deck draw the same few, each set
# checked once a plan by its identity (see `_same_files`), not hashed again for every card (~2 us a card).
_FILE_SETS: dict[tuple, tuple] = {}
FILE_SETS_AT_MOST = 256


def _same_files(plan: BuildPlan, files: tuple[tuple[Path, str], ...]) -> bool:
    """Whether the files hold what they held (by their digests), asked once a plan for a set of files (the cards of
    a deck draw the same few: one object, see `_FILE_SETS`)."""
    known = plan.same_files.get(id(files))
    if known is None or known[0] is not files:
        known = plan.same_files[id(files)] = (files, all(_digest(plan, path) == digest for path, digest in files))
    return known[1]


def _digest(plan: BuildPlan, path: Path) -> str:
    """The digest of a file cards draw, found once a plan."""
    digests = plan.file_digests
    return digests.get(path) or digests.setdefault(path, file_digest(path))


def files_drawn(plan: BuildPlan) -> set[Path]:
    """The files the plan's faces and backs draw (images, as their renders name them). In a process that builds
    again, the last plan's of the game patched where its renders are other objects (`_FilesDrawn`): a set made of
    every render's files cost ~5 ms an edit at 10,000 cards."""
    faces = plan.face_renders if plan.face_renders is not None else map(_RENDERED, plan.faces.values())
    renders = [*faces, *map(_RENDERED, plan.backs.values())]
    if not builds_again():
        return set(itertools.chain.from_iterable(map(_FILES, renders)))
    last = _LAST_FILES.get(plan.game.name)
    if last is None or not last.patched(renders, changed_since(plan, last.number), len(plan.backs)):
        last = _FilesDrawn(renders)
    last.number = plan.number
    keep_latest(_LAST_FILES, plan.game.name, last, KNOWN_RECORDS)
    return set(last.counts)


class _FilesDrawn:
    """How many of a plan's renders draw each file, and the renders (see `files_drawn`)."""

    def __init__(self, renders: list[RenderedSVG]) -> None:
        self.renders = renders
        self.counts = collections.Counter(itertools.chain.from_iterable(map(_FILES, renders)))
        self.number: int | None = None  # the plan whose renders these are (see `BuildPlan.since`)

    def patched(self, renders: list[RenderedSVG], faces: list[int] | None, backs: int) -> bool:
        """Take the renders of the next plan (its faces', then its `backs` backs'), counting again only the places
        whose render is another object: of the faces, those of `faces` when known (`changed_since`), else all; False
        (nothing changed) when the plans differ in length or in many places."""
        if len(renders) != len(self.renders):
            return False
        if faces is None:
            changed = list(itertools.compress(range(len(renders)), map(operator.is_not, renders, self.renders)))
        else:  # (each plan's backs: a few, compared)
            places = itertools.chain(faces, range(len(renders) - backs, len(renders)))
            changed = [place for place in places if renders[place] is not self.renders[place]]
        if len(changed) > CHANGED_AT_MOST:
            return False
        for place in changed:
            self.counts.subtract(self.renders[place].files)
            self.counts.update(renders[place].files)
            for path in self.renders[place].files:  # a file no render draws any more: not counted at 0 forever
                if self.counts[path] <= 0:
                    del self.counts[path]
        self.renders = renders
        return True


_FILES = operator.attrgetter("files")
# The files the last plan of each game drew (see `files_drawn`), the latest KNOWN_RECORDS.
_LAST_FILES: dict[str, _FilesDrawn] = {}


class DrawListener(Protocol):
    """What hears of the drawing as `draw_plan` goes, in the build's process: the build, which places card files
    and starts its output stages meanwhile."""

    def handed(self) -> None:
        """The workers have every job: what is not drawing may start now."""

    def ready(self, keys: list[str]) -> None:
        """The images of `keys` are in the cache and verified (drawn, or found there), while the workers draw on."""


def draw_plan(plan: BuildPlan, jobs: int, reporter: Reporter, listener: DrawListener,
              work: Mapping[str, Sequence[CardWork]] | None = None, workers: RenderPool | None = None,
              early: Collection[str] = ()) -> tuple[int, int]:
    """Draw every artwork missing from the cache, in `workers` when started already, telling `listener` as it goes;
    return (rendered, cached).

    `work` is the output stages' work on card images, by image key: done in the workers while each image
    is in memory (a cached image is read for it). `early` are the keys `workers` were sent to draw while the game
    was validated (`build.early`): drawn by this build, each has its job as any card drawn now (the worker that
    drew it takes the card it kept instead of drawing it again).
    """
    game, work = plan.game, work or {}
    arts = _arts_by_key([*plan.faces.values(), *plan.backs.values()], game.name)
    found, todo = _found_in_cache(arts, early, work)
    raster_jobs = [RasterJob(art.key, plan.drawing(art), str(art.cache_path), cached, tuple(work.get(art.key, ())))
                   for art, cached in todo]
    # Those drawn early first, to the one worker started, which keeps their cards (a worker let go once the jobs are
    # many would draw them again); then the largest images: a board drawn last would keep one worker busy while the
    # other has nothing left; the backs last of all, after smaller tokens: the TTS export puts its images of backs
    # last (`Exporter.put_last`) and makes its thumbnail while they are drawn, once every other image is (a token
    # drawn last put the thumbnail after the last card: ~40 ms of a cold 20-card build's tail at load 8).
    backs = set(map(_KEY, plan.backs.values()))
    raster_jobs.sort(key=lambda job: (job.key not in early, job.key in backs, -job.drawing.width * job.drawing.height))
    drawn = sum(not job.cached for job in raster_jobs)
    if drawn < jobs:  # cores left idle (an edit's card): each PNG is encoded beside the stages' work on its card
        raster_jobs = [job if job.cached else replace(job, encode_beside=True) for job in raster_jobs]
    problems: list[Problem] = []

    def begin() -> None:
        reporter.start(f"{game.name}: drawing", len(raster_jobs))
        listener.ready(found)  # while the workers draw
        # The stages start once the images found are placed, not beside it: placing is a `stat` of each file kept
        # (an edit keeps most), and each stat let the stages' threads take the GIL for a switch interval (an
        # edit of 1,000 cards placed them in ~0.3 s instead of ~0.03 s, its stages no sooner done).
        listener.handed()

    def done(key: str, error: str | None) -> None:
        reporter.advance()
        if error:
            art = arts[key]
            card = next((c for c in plan.cards if c.id == art.name), None)
            problems.append(Problem(f"{'card ' + repr(card.id) if card else 'back ' + repr(art.name)}: {error}",
                                    file=card.source_file if card else None, row=card.source_row if card else None))
        elif not problems:  # a build that fails places nothing more
            listener.ready([key])

    run_jobs(raster_jobs, jobs, done, begin, workers)
    reporter.finish()
    if problems:
        raise CardgenError(problems)
    return drawn, len(arts) - drawn


def _arts_by_key(every: list[Artwork], game: str) -> dict[str, Artwork]:
    """Each artwork by its image key (of two with one key, the later); in a process that builds again, the last
    build's dict but at the places holding another artwork (`storage.derived`: reading 10,000 artworks' keys, by C
    loops, was ~3-5 ms of an edit at 10,000 cards), while no two share a key."""
    def whole() -> dict[str, Artwork]:
        return dict(zip(map(_KEY, every), every))

    def patched(made: dict[str, Artwork], last: list[Artwork], places: list[int] | None) -> dict[str, Artwork] | None:
        if places is None or len(made) != len(last):  # (another length, or a key shared: made whole)
            return None
        arts = dict(made)  # (what `derived` made is never changed)
        for place in places:
            del arts[last[place].key]
        arts.update(zip(map(_KEY, map(every.__getitem__, places)), map(every.__getitem__, places)))
        return arts if len(arts) == len(every) else None

    return derived(("artworks", game), every, None, whole, patched)


def _found_in_cache(arts: dict[str, Artwork], early: Collection[str], work: Mapping[str, Sequence[CardWork]]
                    ) -> tuple[list[str], list[tuple[Artwork, bool]]]:
    """The keys of the images the cache holds (verified) that no stage works on, and the other artworks, each with
    whether the cache holds its image.

    In a process that builds again, an entry it verified that nothing has touched since (`folderwatch`: the kernel
    says what was) is taken by C loops, not looked at (`storage.verify`: one `stat` each, ~45-65 ms an edit at
    10,000 cards); the others are verified, and trusted from then on (the cache folder is watched)."""
    values = list(arts.values())
    watch = entry_trust(values[0].cache_path.parent.parent) if values else None
    untouched = watch.untouched(map(_CACHE_FILE, values)) if watch is not None else [False] * len(values)
    special = {*early, *(key for key, items in work.items() if items)}
    if special:  # drawn early, or worked on: each looked at below
        untouched = list(map(operator.and_, untouched, map(operator.not_, map(special.__contains__, arts))))
    found, todo, trusted = list(itertools.compress(arts, untouched)), [], []
    for art in itertools.compress(values, map(operator.not_, untouched)):
        # (one stat for an entry this process verified before)
        cached = art.key not in early and verify(art.cache_path)
        if cached:
            trusted.append(art.cache_file)
        if cached and not work.get(art.key):
            found.append(art.key)
        else:
            todo.append((art, cached))
    if watch is not None:
        watch.trust(trusted)
    return found, todo


_CACHE_FILE, _KEY = operator.attrgetter("cache_file"), operator.attrgetter("key")


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def card_text(card: Card) -> str:
    """A card's rules text as descriptions show it (Tabletop Simulator): each filled column of its deck's `text:`
    on a line of its own, after the column's name in bold when there are several (`**Damage:** 3`): the values
    alone do not say which is which."""
    filled = [(column, _shown(card.fields.get(column))) for column in card.text_fields]
    filled = [(column, text) for column, text in filled if text]
    if len(card.text_fields) == 1:
        return filled[0][1] if filled else ""
    return "\n".join(f"**{column.replace('_', ' ').capitalize()}:** {text}" for column, text in filled)


def _shown(value: Any) -> str:
    """A field's value as text: nothing for an empty cell, a list's items joined (never Python's `['a', 'b']`)."""
    if value is None:
        return ""
    return ", ".join(map(str, value)).strip() if isinstance(value, list) else str(value).strip()


def _deck_entry(game: Game, name: str) -> DeckEntry:
    deck = game.spec.decks[name]
    size = game.deck_size(deck)
    return DeckEntry(title=deck.title or name.replace("_", " ").title(), kind=deck.kind, shape=deck.shape,
                     supply=deck.supply, size_mm=Dimensions(width=size.width_mm, height=size.height_mm),
                     bleed_mm=size.bleed_mm, safe_mm=size.safe_mm, dpi=size.dpi,
                     pixels=Pixels(width=size.full_width_px, height=size.full_height_px))


def _record_texts(card: Card) -> tuple[str, str]:
    """A card's text as the record holds it and its fields as text (what the record's entry is kept by), made once
    a card (see `Card.made`)."""
    texts = card.made.get(("record",))
    if texts is None:
        texts = card.made["record",] = (card_text(card), repr(card.fields))
    return texts


def record_of(plan: BuildPlan) -> BuildRecord:
    """The build record (build.json) of a planned build: game, decks, backs and every card with its hash.

    In a process that builds again, a card made of the same as in its last build gets that build's entry, and with
    it what was made of it (see `record.kept_entry`): the cards of the game's last record that are the same objects
    with the same face artwork and back, found by C loops (`_LastRecord`), and the others by what they hold."""
    game = plan.game
    backs = {name: BackEntry(image=f"backs/{name}.png", deck=art.deck, template=art.template, hash=art.key,
                             per_card=art.per_card, boxes=art.rendered.boxes)
             for name, art in plan.backs.items()}
    decks = {name: _deck_entry(game, name) for name in game.spec.decks}
    deck_keys = {name: deck.model_dump_json() for name, deck in decks.items()}
    if len(plan.faces) == len(plan.cards):  # a face and a back a card, in its order (its id is its own)
        faces, card_backs = list(plan.faces.values()), list(plan.card_back.values())
    else:
        ids = list(map(_CARD_ID, plan.cards))
        faces, card_backs = list(map(plan.faces.__getitem__, ids)), list(map(plan.card_back.__getitem__, ids))
    last = _LAST_RECORDS.get(game.name) if builds_again() else None
    if last is not None and last.deck_keys == deck_keys:
        keys, cards, entries, missing = last.aligned(plan.cards, faces, card_backs, changed_since(plan, last.number))
    else:
        keys, cards, entries, missing = [None] * len(faces), [None] * len(faces), {}, list(range(len(faces)))
    # the other cards one by one (an equal card's entry is one object: the first one's)
    for place in missing:
        card = plan.cards[place]
        key, entry = _card_entry(game.name, card, decks[card.deck], faces[place], card_backs[place], backs,
                                 deck_keys[card.deck])
        keys[place], cards[place] = key, entries.setdefault(key, entry)
    kept_cards = cast(list[CardEntry], cards)
    # the entries that came and went, where the last record's were taken by place (each card's own entry)
    aligned = last is not None and len(last.entries) == len(kept_cards) == len(last.by_key) == len(entries)
    changes = ([kept_cards[place] for place in missing], [last.entries[place] for place in missing]) \
        if last is not None and aligned else None
    keep_entries(game.name, entries, changes)
    # the copies counted again at those places only (reading 10,000 entries was ~1.5-6 ms of an edit)
    copies = last.copies + sum(map(_COPIES, changes[0])) - sum(map(_COPIES, changes[1])) \
        if last is not None and changes is not None else sum(map(_COPIES, kept_cards))
    if builds_again():
        keep_latest(_LAST_RECORDS, game.name,
                    _LastRecord(plan.cards, faces, card_backs, deck_keys, keys, kept_cards, entries, copies,
                                plan.number),
                    KNOWN_RECORDS)
    # made of entries valid already, each card's back one of `backs`: not validated again (~1-1.5 ms at 10,000 cards)
    return BuildRecord.model_construct(
        cardgen=__version__,
        built_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        game=GameEntry(name=game.name, title=game.spec.title, version=game.spec.version,
                       description=game.spec.description),
        decks=decks, backs=backs,
        stats=Stats(cards=len(kept_cards), copies=copies), cards=kept_cards)


_CARD_ID, _COPIES = operator.attrgetter("id"), operator.attrgetter("copies")
_CACHE_PATH, _FIRST = operator.attrgetter("cache_path"), operator.itemgetter(0)


def _card_entry(game: str, card: Card, deck: DeckEntry, face: Artwork, back: str | None,
                backs: dict[str, BackEntry], deck_key: str) -> tuple[Hashable, CardEntry]:
    """A card's record entry and what it is kept by: its last entry when made of the same (kept with the card, see
    `Card.made`), else the last build's entry made of the same (`kept_entry`), else a new one."""
    # what the entry holds besides the card's own (the boxes by identity: the render's own, kept with it; an entry
    # kept holds them, so no other object has their ids meanwhile)
    about = (back and backs[back].image, deck_key, face.key, face.look, tuple(map(id, face.rendered.boxes)))
    made = card.made.get(("entry",))
    if made is not None and made[0] == about:  # the card's last entry (no key made and looked up: ~3 us a card)
        return made[1], made[2]
    text, fields = _record_texts(card)
    key = (card.id, card.deck, card.name, card.copies, about[0], card.source_file, card.source_row, *about[1:4],
           text, fields, about[4])  # everything the entry holds
    entry = kept_entry(game, key) or CardEntry(
        id=card.id, deck=card.deck, kind=deck.kind, name=card.name, copies=card.copies,
        face=f"cards/{card.deck}/{card.id}.png", back=backs[back].image if back else None,
        source=SourceRef(file=card.source_file, row=card.source_row),
        size_mm=deck.size_mm, bleed_mm=deck.bleed_mm, dpi=deck.dpi, pixels=deck.pixels,
        hash=face.key, look=face.look, text=text,
        fields={k: _jsonable(v) for k, v in card.fields.items()},
        boxes=face.rendered.boxes)  # the render's own boxes, not copies
    card.made["entry",] = (about, key, entry)
    return key, entry


class _LastRecord:
    """What the last record of a game was made of, card by card, in a process that builds again: a card of the next
    plan that is the same object, with the same face artwork (one object while its render, look and key are the
    same: see `artwork_of`) and back, gets the same entry. Found by C loops over the lists' items (`map`), by place
    when the game has as many cards as before, not a Python step a card (~5 us a card at 10,000 cards, most of
    `record_of`). Holding the cards keeps their ids theirs."""

    def __init__(self, cards: list[Card], faces: list[Artwork], backs: list[str | None], deck_keys: dict[str, str],
                 keys: list[Hashable], entries: list[CardEntry], by_key: dict[Hashable, CardEntry], copies: int,
                 number: int) -> None:
        self.cards, self.faces, self.backs, self.deck_keys = cards, faces, backs, deck_keys
        self.keys, self.entries, self.by_key = keys, entries, by_key
        self.copies = copies  # the entries' copies, all together
        self.number = number  # the plan it was made of (see `BuildPlan.since`)

    def aligned(self, cards: list[Card], faces: list[Artwork], backs: list[str | None], changed: list[int] | None
                ) -> tuple[list[Hashable | None], list[CardEntry | None], dict[Hashable, CardEntry], list[int]]:
        """The key and entry of each of `cards` (with its face artwork and back) that the last record holds made of
        the same (None for the others), the entries by key of those, and the places holding None. `changed`: the
        only places that may differ, when known (`changed_since`: the plan was made from the one this record was)."""
        count = len(cards)
        if count != len(self.cards) or len(self.by_key) != count:  # cards added or removed, or equal cards
            return self._found(cards, faces, backs)
        if changed is None:
            same = map(operator.and_, map(operator.and_, map(operator.is_, cards, self.cards),
                                          map(operator.is_, faces, self.faces)), map(operator.eq, backs, self.backs))
            changed = list(itertools.compress(range(count), map(operator.not_, same)))
        # copies of the lists (their items not looked at)
        keys: list[Hashable | None] = list(self.keys)
        entries: list[CardEntry | None] = list(self.entries)
        by_key = dict(self.by_key)
        for place in changed:
            del by_key[keys[place]]
            keys[place] = entries[place] = None
        return keys, entries, by_key, changed

    def _found(self, cards: list[Card], faces: list[Artwork], backs: list[str | None]
               ) -> tuple[list[Hashable | None], list[CardEntry | None], dict[Hashable, CardEntry], list[int]]:
        """`aligned`, each card looked for by its identity (cards added or removed: the others' places moved)."""
        last = len(self.cards)  # the place past the last card, which holds nothing
        places = list(map(dict(zip(map(id, self.cards), itertools.count())).get, map(id, cards),
                          itertools.repeat(last)))
        same = map(operator.and_, map(operator.is_, faces, map([*self.faces, None].__getitem__, places)),
                   map(operator.eq, backs, map([*self.backs, _NO_BACK].__getitem__, places)))
        places = [place if kept else last for place, kept in zip(places, same)]
        keys = list(map([*self.keys, None].__getitem__, places))
        entries = list(map([*self.entries, None].__getitem__, places))
        found = list(map(operator.is_not, entries, itertools.repeat(None)))
        return keys, entries, cast(dict[Hashable, CardEntry], dict(zip(itertools.compress(keys, found),
                                                                       itertools.compress(entries, found)))), \
            list(itertools.compress(range(len(found)), map(operator.not_, found)))


_NO_BACK = object()  # the back of no card (a card has a back name or None)
# The last record of each game made in this process (see `_LastRecord`), the latest KNOWN_RECORDS.
_LAST_RECORDS: dict[str, _LastRecord] = {}


class _HandOut:
    """The card files of a build (see `CardFiles`) before any is placed: the artworks (backs, then each card's face),
    the path of each in the output folder, their image keys' files and the cache entry of each. In a process that
    builds again, the next build of the game takes its game's last one and makes anew only the places whose artwork
    is another object (`patched`): making them all, by C loops, cost ~15-20 ms an edit at 10,000 cards (reading
    10,000 cards' objects scattered in memory), comparing the two lists of artworks by identity ~0.2 ms."""

    def __init__(self, arts: list[Artwork], backs: int, number: int) -> None:
        self.arts, self.backs = arts, backs
        self.number = number  # the plan whose artworks these are (see `BuildPlan.since`)
        self.files = [*map("backs/{}.png".format, map(_NAME, arts[:backs])),
                      *[f"cards/{art.deck}/{art.name}.png" for art in arts[backs:]]]  # (a face: its card's id)
        _check_inside(self.files)
        keys = list(map(_KEY, arts))
        self.waiting: dict[str, list[tuple[str, Artwork]]] = dict(zip(keys, map(list, zip(zip(self.files, arts)))))
        if len(self.waiting) < len(keys):  # images shared by content (equal cards): each key's files together
            self.waiting = {}
            for key, entry in zip(keys, zip(self.files, arts)):
                self.waiting.setdefault(key, []).append(entry)
        self.paths = set(self.files)
        self.cache_path = dict(zip(self.files, map(_CACHE_PATH, arts)))

    def patched(self, arts: list[Artwork], backs: int, plan: BuildPlan) -> _HandOut | None:
        """This hand-out made that of `arts` (the backs, then `plan`'s faces), its places holding another artwork
        made anew (its lists and dicts changed in place: copying them was ~1-2 ms of an edit at 10,000 cards; a build
        takes its own copies of what it changes, and the caller no longer holds this one as the last until it is
        patched); None when many places differ (then it is no longer whole). The faces compared are the places the
        plan names when it was made from this hand-out's (`changed_since`), else all of them."""
        if len(arts) != len(self.arts) or backs != self.backs or len(self.paths) != len(self.files):
            return None
        faces = changed_since(plan, self.number)
        if faces is None:
            changed = list(itertools.compress(range(len(arts)), map(operator.is_not, arts, self.arts)))
        else:  # (each plan makes its backs' artworks anew)
            changed = [place for place in range(backs) if arts[place] is not self.arts[place]] + \
                [backs + place for place in faces if arts[backs + place] is not self.arts[backs + place]]
        if len(changed) > CHANGED_AT_MOST:
            return None
        patched, last = self, self.arts
        for place in changed:  # the last build's files of those places out...
            gone, file = last[place], self.files[place]
            others = [entry for entry in patched.waiting[gone.key] if entry[1] is not gone]
            if others:
                patched.waiting[gone.key] = others
            else:
                del patched.waiting[gone.key]
            patched.paths.discard(file)
            del patched.cache_path[file]
        patched.arts = arts
        for place in changed:  # ... and this build's in
            art = arts[place]
            file = patched.files[place] = f"backs/{art.name}.png" if place < backs else \
                f"cards/{art.deck}/{art.name}.png"
            patched.waiting[art.key] = [*patched.waiting.get(art.key, ()), (file, art)]
            patched.paths.add(file)
            patched.cache_path[file] = art.cache_path
        _check_inside([patched.files[place] for place in changed])
        patched.number = plan.number
        return patched if len(patched.paths) == len(patched.files) else None


def _check_inside(paths: list[str]) -> None:
    """Refuse a card file's path that leads out of the output folder.

    Ids and deck names are checked on loading; the folder is new (no link in it leads out), so a path without `..`
    stays inside (resolving each path cost a quarter of a second at 1,000 cards; splitting each, ~8 ms at 10,000)."""
    if ".." in "\0".join(paths):
        for relative_path in paths:
            if ".." in relative_path.replace(os.sep, "/").split("/"):
                raise CardgenError(f"refused to write {relative_path} outside the output folder")


# The last hand-out of each game in this process (see `_HandOut`), the latest KNOWN_RECORDS; one that differs from
# the next build's in more places than this is made anew.
_LAST_HANDOUTS: dict[str, _HandOut] = {}
CHANGED_AT_MOST = 256
_NAME = operator.attrgetter("name")


class DrawingStopped(Exception):
    """The drawing of a build stopped (an error): a card file an output stage waits for never comes."""


class CardFiles:
    """The card files of a build: cards/<deck>/<id>.png and backs/<name>.png (and their SVGs, if kept), copied
    from the cache into the build's staging folder, each as soon as its image is ready (`place`, as `draw_plan`
    says it is, while the workers draw on); those of the `previous` build with the same content are kept
    instead (see `PreviousOutputs`).

    Output stages running in another thread meanwhile `wait` for the images they read: an image is there as soon as
    its cache entry is (before its card file is placed: see `place`), and is read from that entry.
    """

    def __init__(self, plan: BuildPlan, staging: Path, keep_svg: bool, previous: PreviousOutputs | None = None) -> None:
        self.out_dir, self.keep_svg, self.previous = staging, keep_svg, previous
        self.folders: set[Path] = set()  # the folders made in it so far
        faces = list(plan.faces.values()) if len(plan.faces) == len(plan.cards) else \
            list(map(plan.faces.__getitem__, map(_CARD_ID, plan.cards)))  # (a face a card, in its order)
        arts = [*plan.backs.values(), *faces]
        # (the last one taken out while it is patched in place: a build stopped meanwhile leaves none)
        last = _LAST_HANDOUTS.pop(plan.game.name, None) if builds_again() else None
        handout = last.patched(arts, len(plan.backs), plan) if last is not None else None
        if handout is None:
            handout = _HandOut(arts, len(plan.backs), plan.number)
        if builds_again():
            keep_latest(_LAST_HANDOUTS, plan.game.name, handout, KNOWN_RECORDS)
        # (path in the output folder, art) by image key: a copy, which `place` takes from
        self.waiting: dict[str, list[tuple[str, Artwork]]] = dict(handout.waiting)
        self.pending = set(handout.paths)  # by path in the output folder, until available
        self.unplaced = set(handout.paths)  # until placed
        self.cache_path = handout.cache_path  # the cache entry of each (not changed)
        self.stopped = False  # the drawing stopped: what is pending will never be placed
        self.changed = threading.Condition()

    def place(self, keys: list[str]) -> None:
        """Place the files of image keys whose cache entries are there and verified (once each), letting the stages
        read their images at once (see `wait`): all of those found in the cache at once, one lock and one notice for
        them all (~8 ms of a 1,000-card edit one at a time); the files `previous` keeps on trust by C loops
        (`PreviousOutputs.keep_trusted`), the others one by one."""
        files = list(map(self.waiting.pop, keys, itertools.repeat(())))  # (each key's: its artworks have that key)
        placed = list(itertools.chain.from_iterable(files))
        names = list(map(_FIRST, placed))
        with self.changed:
            self.pending.difference_update(names)
            self.changed.notify_all()
        out_dir = str(self.out_dir)
        rest = placed
        if self.previous is not None and not self.keep_svg:
            # (the keys as handed in, each once a file: not read from 10,000 artworks scattered in memory, ~1 ms)
            art_keys = list(itertools.chain.from_iterable(map(itertools.repeat, keys, map(len, files))))
            kept = self.previous.keep_trusted(names, art_keys, out_dir, self._copy_into)
            rest = list(itertools.compress(placed, map(operator.not_, kept)))
        for relative_path, art in rest:
            # the target as text: a Path made for each of 1,000 cards kept was ~4 ms of an edit; `previous` keeps
            # most of them, and makes a Path only of those it writes
            target = f"{out_dir}/{relative_path}"
            if self.previous is None:
                self._copy(art.cache_path, target)
            else:  # (its name given: not worked out again from the path, ~5 ms at 1,000 cards)
                self.previous.place(target, art.key, functools.partial(self._copy, art.cache_path), relative_path,
                                    trust=True)
            if self.keep_svg:
                write_text(Path(target).with_suffix(".svg"), art.rendered.svg)
        with self.changed:
            self.unplaced.difference_update(names)
            self.changed.notify_all()

    def stop(self) -> None:
        """Tell the threads waiting for files that the drawing stopped (an error): they get a `DrawingStopped`."""
        with self.changed:
            self.stopped = True
            self.changed.notify_all()

    def wait(self, path: str | None = None) -> Path | None:
        """Wait until the image of the card file at `path` (in the output folder, as the build record names it) is
        available, and return the file to read it from: its cache entry (None for a path the build does not make).
        With None, wait until every card file is placed. Raises `DrawingStopped` when the drawing stops first."""
        with self.changed:
            while (waiting := path in self.pending if path is not None else bool(self.unplaced)) and not self.stopped:
                self.changed.wait()
            if waiting:
                raise DrawingStopped(path)
        return self.cache_path.get(path) if path is not None else None

    def _copy(self, source: Path, target: Path | str) -> None:
        """Copy a cached image to its place in the staging folder (see `copy_into_staging`: at 1,000 cards
        ~0.2-0.5 ms of this process's CPU a file less than `place_file`, while the workers draw), making each
        folder once."""
        target = Path(target)
        if target.parent not in self.folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            self.folders.add(target.parent)
        copy_into_staging(source, target)

    def _copy_into(self, target: Path) -> None:
        """Copy the cached image of a card file to `target`, its place in the staging folder."""
        self._copy(self.cache_path[target.relative_to(self.out_dir).as_posix()], target)

    def place_rest(self) -> None:
        """Place every file not placed yet."""
        self.place(list(self.waiting))
