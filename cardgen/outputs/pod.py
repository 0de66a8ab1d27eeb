"""Print-on-demand export: the files each vendor asks for, from its profile (`cardgen.options.vendors`), in
`pod/<vendor>/` of the game's output folder, with `manifest.json` and `quantities.csv` listing every file.

Image vendors (The Game Crafter, MakePlayingCards) get one image per unique card at trim + the vendor's bleed and
DPI (or one per copy when the profile says `files: per-copy`) and the backs; PDF vendors (DriveThruCards, MB Print)
get one PDF per deck or per card format, one card per page in the profile's page order, converted to CMYK through
its ICC profile (`cardgen.outputs.press`). What a vendor would refuse is a finding naming the card: a size it does
not print, an image drawn below its DPI, text in its safe zone or under its smallest size, more ink than it allows.
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Self

from PIL import Image

from cardgen.core.errors import CardgenError, Problem, relative, saved_meanwhile
from cardgen.core.ownership import make_staging, mark
from cardgen.core.storage import Cache, place_file, swap_into_place, write_atomic, write_text
from cardgen.core.units import MM_PER_INCH, PT_PER_INCH
from cardgen.load.manifest import Game
from cardgen.options.pod import PodSpec, pod_asked
from cardgen.options.vendors import BUNDLED_PROFILES, Vendor, load_vendor
from cardgen.outputs.press import Page, Profile, check_profile, to_cmyk, total_ink, write_pdfx
from cardgen.outputs.reuse import inputs_key
from cardgen.outputs.stage import Stage, StageContext, manifest_file
from cardgen.record.record import BuildRecord, CardEntry

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SUFFIX = {"png": ".png", "jpeg": ".jpg", "pdf": ".pdf"}


@dataclass
class VendorExport:
    """What one vendor's export wrote: its manifest's rows, and findings for the designer."""

    vendor: Vendor
    folder: Path
    rows: list[dict[str, object]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def write_pod(game: Game, record: BuildRecord, out_dir: Path, spec: PodSpec, out_root: Path) -> list[Problem]:
    """Write `pod/<vendor>/` for each vendor the options name; return the findings. PDFs are kept in the cache of
    `out_root`, by their inputs."""
    own = _own_profile(game, spec.profile) if spec.profile else None
    problems: list[Problem] = []
    for name in spec.vendor:
        vendor = load_vendor(game.root, name, game.read_as)  # (as the game's load read it)
        pod = mark(out_dir / "pod")
        export = VendorExport(vendor, make_staging(pod, vendor.key))  # swapped in whole: no file of a last run stays
        decks = {deck: [c for c in record.cards_of(deck) if c.copies > 0]
                 for deck in dict.fromkeys(card.deck for card in record.cards)}
        printed = {deck: cards for deck, cards in decks.items() if cards and _printable(export, game, deck, cards)}
        for cards in printed.values():
            _check_safe_zone(export, game, cards)
            _check_text_size(export, game, cards)
        if vendor.spec.format == "pdf":
            profile = own or vendor.profile
            read = _as_loaded(game, profile) if profile is not None else None
            for group, cards in _pdf_groups(vendor, printed).items():
                _write_pdf(export, out_dir, group, cards, read, out_root)
        else:
            for deck, cards in printed.items():
                _write_images(export, out_dir, deck, cards)
        _write_manifest(export)
        swap_into_place(export.folder, pod / vendor.key)
        problems += export.problems
    return problems


def _pdf_groups(vendor: Vendor, decks: dict[str, list[CardEntry]]) -> dict[str, list[CardEntry]]:
    """The cards of each PDF: a deck each, or every deck of one of the vendor's card formats (`group: size`)."""
    groups: dict[str, list[CardEntry]] = {}
    for deck, cards in decks.items():
        size = cards[0].size_mm
        groups.setdefault(deck if vendor.spec.group == "deck" else vendor.size_of(size.width, size.height) or deck,
                          []).extend(cards)
    return groups


def _own_profile(game: Game, name: str) -> Path:
    """The designer's ICC profile (`pod: profile:`), a CMYK profile inside the workspace."""
    path = game.root / name
    if not path.resolve().is_relative_to(game.root.resolve()) or not path.is_file():
        raise CardgenError(f"pod.profile: no file '{name}' in the workspace; give the path of an ICC profile "
                           "(.icc) from the workspace", file=manifest_file(game))
    try:
        check_profile(path)
    except ValueError as exc:
        raise CardgenError(f"pod.profile: '{name}' is {exc}", file=manifest_file(game)) from None
    return path


def _as_loaded(game: Game, path: Path) -> Profile:
    """An ICC profile read once (what the PDFs are converted with, embed and are keyed by), as the game's load found
    it (`Game.read_as`: the build is keyed by that): CardgenError when saved since."""
    profile = Profile.read(path)
    if game.read_as.get(str(path), profile.digest) != profile.digest:
        raise CardgenError(saved_meanwhile("the ICC profile", "the build used it"), file=relative(path, game.root))
    return profile


def _printable(export: VendorExport, game: Game, deck: str, cards: list[CardEntry]) -> bool:
    """Whether the vendor prints the deck's size (a finding naming its cards when not), noting cards drawn
    below the vendor's DPI."""
    vendor, size = export.vendor, cards[0].size_mm
    low = [c for c in cards if c.dpi < vendor.spec.dpi]
    if low:
        export.problems.append(_finding(game, low, f"drawn at {low[0].dpi} DPI, below the {vendor.spec.dpi} DPI "
                                        f"{vendor.spec.name} asks for: its files are enlarged and print soft; "
                                        "raise the deck's dpi"))
    if vendor.size_of(size.width, size.height) is None:
        sizes = ", ".join(f"{n}: {w:g} x {h:g} mm" for n, (w, h) in vendor.sizes.items())
        export.problems.append(_finding(game, cards, f"{size.width:g} x {size.height:g} mm is a size "
                                        f"{vendor.spec.name} does not print ({sizes}); the deck '{deck}' is "
                                        f"left out of pod/{vendor.key}"))
        return False
    return True


def _check_safe_zone(export: VendorExport, game: Game, cards: list[CardEntry]) -> None:
    """A finding naming the deck's cards whose text is laid out in the band inside the trim the vendor may cut
    (its safe zone), by the boxes the text helpers recorded."""
    vendor = export.vendor
    crossing = [(card, texts) for card in cards if (texts := _texts_outside(card, vendor.safe))]
    if crossing:
        card, texts = crossing[0]
        shown = ", ".join(f"'{t}'" for t in texts[:3]) + (" ..." if len(texts) > 3 else "")
        export.problems.append(_finding(game, [c for c, _ in crossing], f"text {shown} is laid out within "
                                        f"{vendor.safe:g} mm of the trim, where {vendor.spec.name} may cut; keep it "
                                        f"inside (the deck's safe: {vendor.safe:g}mm shows the line)"))


def _texts_outside(card: CardEntry, safe_mm: float) -> list[str]:
    """The labels of a card's text boxes that reach into the band of `safe_mm` inside its trim."""
    px = card.dpi / MM_PER_INCH
    inset, tolerance = (card.bleed_mm + safe_mm) * px, 1.0
    right, bottom = card.pixels.width - inset, card.pixels.height - inset
    return [box.label for box in card.boxes if box.kind in ("text_line", "text_box") and (
        box.x < inset - tolerance or box.y < inset - tolerance or box.x + box.width > right + tolerance
        or box.y + box.height > bottom + tolerance)]


def _check_text_size(export: VendorExport, game: Game, cards: list[CardEntry]) -> None:
    """A finding naming the deck's cards with text laid out smaller than the vendor prints legibly (its
    `min_text_pt`), by the sizes the text helpers recorded (after shrinking to fit)."""
    least = export.vendor.spec.min_text_pt
    small = [(card, texts) for card in cards if (texts := _texts_below(card, least))]
    if small:
        card, texts = small[0]
        shown = ", ".join(f"'{label}' ({size:.1f} pt)" for label, size in texts[:3]) + (" ..." if len(texts) > 3
                                                                                         else "")
        export.problems.append(_finding(game, [c for c, _ in small], f"text {shown} is smaller than the "
                                        f"{least:g} pt {export.vendor.spec.name} prints legibly; give it a larger "
                                        "size or min_size, or shorten it so that it need not shrink"))


def _texts_below(card: CardEntry, least_pt: float) -> list[tuple[str, float]]:
    """The labels and sizes (pt) of a card's texts laid out below `least_pt` (a record without sizes has none)."""
    to_pt = PT_PER_INCH / card.dpi
    tolerance = 0.05  # a size given in pt comes back through pixels a hair off
    return [(box.label, box.size * to_pt) for box in card.boxes if box.kind in ("text_line", "text_box")
            and 0 < box.size * to_pt < least_pt - tolerance]


def _finding(game: Game, cards: list[CardEntry], message: str) -> Problem:
    """A warning naming the first card (its data file and row) and how many more it is about."""
    more = f" (and {len(cards) - 1} more card{'s' if len(cards) > 2 else ''} of the deck)" if len(cards) > 1 else ""
    first = cards[0]
    return Problem(f"card '{first.id}'{more}: {message}", file=first.source.file or manifest_file(game),
                   row=first.source.row, severity="warning")


def _write_images(export: VendorExport, out_dir: Path, deck: str, cards: list[CardEntry]) -> None:
    """One image per unique card (a quantity each) or per copy, and the deck's backs."""
    vendor = export.vendor
    size = vendor.pixels(cards[0].size_mm.width, cards[0].size_mm.height)
    backs = _backs(export, out_dir, deck, cards, size)
    per_copy = vendor.spec.files == "per-copy"
    number = 0
    for card in cards:
        first: Path | None = None
        for copy in range(1, (card.copies if per_copy else 1) + 1):
            number += 1
            target = export.folder / _name(vendor, deck, number, card, copy)
            if first is None:
                _save(_fitted(out_dir / card.face, size, card.dpi, vendor.spec.dpi), target, vendor.spec.format)
                first = target
            else:
                place_file(first, target)
            back = backs.get(card.back or "")
            export.rows.append({"file": _relative(export, target), "back": back and _relative(export, back),
                                "deck": deck, "id": card.id, "name": card.name,
                                "quantity": 1 if per_copy else card.copies})


def _backs(export: VendorExport, out_dir: Path, deck: str, cards: list[CardEntry],
           size: tuple[int, int]) -> dict[str, Path]:
    """The deck's back images, by the record's back path: `<deck>/back` (or `back-<name>` when it has several)."""
    names = sorted({c.back for c in cards if c.back})
    spec = export.vendor.spec
    backs = {}
    for back in names:
        stem = "back" if len(names) == 1 else f"back-{_UNSAFE.sub('-', Path(back).stem)}"
        target = export.folder / _UNSAFE.sub("-", deck) / f"{stem}{_SUFFIX[spec.format]}"
        _save(_fitted(out_dir / back, size, cards[0].dpi, spec.dpi), target, spec.format)
        backs[back] = target
    return backs


def _write_pdf(export: VendorExport, out_dir: Path, group: str, cards: list[CardEntry], profile: Profile | None,
               out_root: Path) -> None:
    """A CMYK PDF of one card per page (every copy) in the vendor's page order, the ink of every image measured.
    The PDF and its findings are cached by the vendor, the profile and the pages' images (by content)."""
    vendor = export.vendor
    assert profile is not None  # a CMYK vendor names one (VendorSpec)
    trim = (cards[0].size_mm.width, cards[0].size_mm.height)
    target = export.folder / f"{_UNSAFE.sub('-', group)}.pdf"
    sides: list[tuple[str, CardEntry]] = []  # each page's image and card
    order = {"back-front": ("back", "front"), "front-back": ("front", "back")}.get(vendor.spec.order, ("front",))
    for card in cards:
        for _copy in range(card.copies):
            numbers: dict[str, int] = {}
            for side in order:
                path = card.face if side == "front" else card.back
                if path is not None:
                    sides.append((path, card))
                    numbers[side] = len(sides)
            export.rows.append({"file": _relative(export, target), "deck": card.deck, "id": card.id,
                                "name": card.name, "quantity": 1, "front_page": numbers.get("front"),
                                "back_page": numbers.get("back")})
    key = inputs_key([vendor.spec.model_dump_json(), group, profile.digest,
                      *(part for path, card in sides for part in (f"{card.id}|{card.dpi}", out_dir / path))], __name__)
    pdfs, findings = Cache(out_root, "pod", ".pdf"), Cache(out_root, "pod", ".json")
    noted = findings.read_bytes(key) if pdfs.has(key) else None
    if noted is not None:
        export.problems += [Problem(**problem) for problem in json.loads(noted)]
    else:
        first = len(export.problems)
        converter = _Converter(export, out_dir, vendor.pixels(*trim), profile)
        pages = (Page(converter.image(path, card), trim, vendor.bleed) for path, card in sides)
        pdfs.write(key, lambda temp: write_pdfx(temp, pages, profile, vendor.spec.output_condition,
                                                f"{group} ({vendor.spec.name})"))
        findings.put_bytes(key, json.dumps([asdict(p) for p in export.problems[first:]]).encode())
    place_file(pdfs.path(key), target)


class _Converter:
    """Card images in CMYK at the vendor's size, the ink of each measured once. The last few are kept: a card's
    copies and a deck's back come one after another, and the PDF keeps each image once by its content, so a long
    deck never holds more than these in memory."""

    KEPT = 4

    def __init__(self, export: VendorExport, out_dir: Path, size: tuple[int, int], profile: Profile) -> None:
        self.export, self.out_dir, self.size, self.profile = export, out_dir, size, profile
        self.kept: dict[str, Image.Image] = {}
        self.measured: set[str] = set()

    def image(self, path: str, card: CardEntry) -> Image.Image:
        """The card image at a path of the build record, converted."""
        if path not in self.kept:
            if len(self.kept) >= self.KEPT:
                del self.kept[next(iter(self.kept))]
            vendor = self.export.vendor
            self.kept[path] = to_cmyk(_fitted(self.out_dir / path, self.size, card.dpi, vendor.spec.dpi),
                                      self.profile, vendor.spec.rich_black)
            if path not in self.measured:
                self.measured.add(path)
                self._measure(path, card)
        return self.kept[path]

    def _measure(self, path: str, card: CardEntry) -> None:
        vendor = self.export.vendor
        ink = total_ink(self.kept[path])
        if ink > vendor.spec.ink_limit + 0.5:  # half a percent: the rounding of 8-bit channels
            self.export.problems.append(Problem(
                f"card '{card.id}': {Path(path).name} has {ink:.0f}% ink where {vendor.spec.name} allows "
                f"{vendor.spec.ink_limit}%; darken with black (K) rather than all four inks, or give a profile "
                "that limits ink (pod: profile:)", file=card.source.file, row=card.source.row, severity="warning"))


def _name(vendor: Vendor, deck: str, number: int, card: CardEntry, copy: int) -> str:
    """A card file's path in the vendor's folder, from the profile's `naming` (unsafe characters made '-')."""
    size = vendor.size_of(card.size_mm.width, card.size_mm.height) or "card"
    fields = {"deck": deck, "id": card.id, "name": card.name, "side": "front", "size": size}
    safe = {key: _UNSAFE.sub("-", value) for key, value in fields.items()}
    return vendor.spec.naming.format(number=number, copy=copy, **safe) + _SUFFIX[vendor.spec.format]


def _relative(export: VendorExport, path: Path) -> str:
    return path.relative_to(export.folder).as_posix()


def _fitted(source: Path, size: tuple[int, int], dpi: int, vendor_dpi: int) -> Image.Image:
    """A card image at the vendor's pixel size: as is when it matches, else scaled to its DPI and cut (or
    stretched, for less bleed than the card has) around the centre."""
    with Image.open(source) as image:
        image.load()
        if image.size == size:
            return image
        scale = vendor_dpi / dpi
        scaled = image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.LANCZOS)
    left, top = (scaled.width - size[0]) // 2, (scaled.height - size[1]) // 2
    if left >= 0 and top >= 0:
        return scaled.crop((left, top, left + size[0], top + size[1]))
    return scaled.resize(size, Image.Resampling.LANCZOS)


def _save(image: Image.Image, target: Path, format: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if format == "jpeg":
        image = image.convert("RGB")
    write_atomic(target, lambda temp: image.save(temp, "JPEG" if format == "jpeg" else "PNG", quality=95,
                                                 dpi=(300, 300)))


def _write_manifest(export: VendorExport) -> None:
    """`manifest.json` (the vendor, its spec pages, every file) and `quantities.csv` (one row per file)."""
    if not export.rows:
        return
    spec = export.vendor.spec
    export.folder.mkdir(parents=True, exist_ok=True)
    write_text(export.folder / "manifest.json", json.dumps(
        {"vendor": spec.name, "spec": spec.spec, "dpi": spec.dpi, "bleed_mm": export.vendor.bleed,
         "colour": spec.colour, "files": export.rows}, indent=2) + "\n")
    columns = list(export.rows[0])
    write_atomic(export.folder / "quantities.csv", lambda temp: _write_csv(temp, columns, export.rows))


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, object]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        writer.writerows(rows)


class PodStage(Stage[PodSpec]):
    """`pod/`: the print-on-demand export, when the manifest has a `pod:` section (or the old `print: {pod:
    true}`), or `build --pod`."""

    name = "pod"

    @classmethod
    def for_game(cls, game: Game, flags: dict[str, Any] | None = None) -> Self:
        """The stage with its options, each vendor and the designer's profile checked now (before a build)."""
        stage = super().for_game(game, flags)
        for name in stage.config.vendor:
            profile = load_vendor(game.root, name, game.read_as).profile
            if profile is not None and not profile.is_relative_to(BUNDLED_PROFILES):
                try:
                    check_profile(profile)
                except ValueError as exc:
                    raise CardgenError(f"profile: '{profile.name}' is {exc}", file=f"vendors/{name}.yaml") from None
        if stage.config.profile:
            _own_profile(game, stage.config.profile)
        return stage

    def enabled(self, game: Game) -> bool:
        """When the manifest names vendors (`pod:`) or says `print: {pod: true}` (`pod_asked`)."""
        return pod_asked(game)

    def run(self, ctx: StageContext) -> list[Problem]:
        """Write the export of each vendor."""
        return write_pod(ctx.game, ctx.record, ctx.out_dir, self.config, ctx.out_root)
