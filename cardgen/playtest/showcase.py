"""Pictures to share (`cardgen showcase GAME --cards ...`): a hand of built cards fanned, and a row of them in
perspective with a reflection, as PNGs on a transparent or chosen background (Pillow).

Cards are shown as printed: the bleed trimmed, the corners of a rounded deck rounded. Tokens keep their shape.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from cardgen.core.errors import CardgenError
from cardgen.core.storage import write_atomic
from cardgen.record.record import BuildRecord, CardEntry

MAX_CARDS = 20  # in one picture: more would make cards too small to read
CORNER_MM = 3.0  # the rounding of a rounded card's corners
FAN_DEGREES = 8.0  # between two neighbouring cards of the fan, at most 70 in all
GAP = 0.08  # between the cards of the row, as a share of a card's width
REFLECTION = 0.35  # the height of the reflection, as a share of a card's; it fades from 35% opacity to nothing
RECEDE = 0.6  # the far (right) end of the row is this much of the near end's height


@dataclass(frozen=True)
class Look:
    """How the pictures are drawn: the cards' height in pixels and the background (None: transparent)."""

    height: int = 600
    background: tuple[int, int, int] | None = None


def chosen_cards(record: BuildRecord, ids: list[str]) -> list[CardEntry]:
    """The record's cards with these ids, in the order given (an unknown id is an error naming the close ones)."""
    by_id = {c.id: c for c in record.cards}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        import difflib

        hints = [f"{i} (did you mean {', '.join(difflib.get_close_matches(i, list(by_id), 3)) or 'none'}?)"
                 for i in unknown]
        raise CardgenError(f"{record.game.name}: no card with the id {'; '.join(hints)}; see the ids in the gallery")
    if not 1 <= len(ids) <= MAX_CARDS:
        raise CardgenError(f"--cards: {len(ids)} cards; a showcase shows 1 to {MAX_CARDS}")
    return [by_id[i] for i in ids]


def card_image(out_dir: Path, record: BuildRecord, card: CardEntry, height: int) -> Image.Image:
    """A card as printed, `height` pixels high: its bleed trimmed and, for a rounded deck, its corners rounded."""
    deck = record.decks[card.deck]
    with Image.open(out_dir / card.face) as opened:
        image = opened.convert("RGBA")
    bleed = deck.bleed_px
    image = image.crop((bleed, bleed, image.width - bleed, image.height - bleed))
    image = image.resize((max(1, round(image.width * height / image.height)), height), Image.Resampling.LANCZOS)
    if deck.kind == "card" and deck.shape == "rounded":
        radius = round(CORNER_MM / deck.size_mm.height * height)  # the trimmed card is size_mm high
        mask = Image.new("L", image.size, 0)
        ImageDraw.Draw(mask).rounded_rectangle((0, 0, image.width - 1, image.height - 1), radius, fill=255)
        image.putalpha(Image.fromarray(np.minimum(np.asarray(image.getchannel("A")), np.asarray(mask))))
    return image


def _shadowed(image: Image.Image, blur: int) -> Image.Image:
    """The image over a soft shadow of itself (offset down and right), on a margin of `blur` * 3 pixels."""
    margin = blur * 3
    out = Image.new("RGBA", (image.width + 2 * margin, image.height + 2 * margin), (0, 0, 0, 0))
    shadow = Image.new("RGBA", image.size, (0, 0, 0, 0))
    shadow.putalpha(image.getchannel("A").point(lambda a: a * 45 // 100))
    out.alpha_composite(shadow, (margin + blur // 2, margin + blur))
    out = out.filter(ImageFilter.GaussianBlur(blur))
    out.alpha_composite(image, (margin, margin))
    return out


def fan(cards: list[Image.Image]) -> Image.Image:
    """A hand of cards fanned about a point below them, the middle card upright, the first at the back."""
    height = max(c.height for c in cards)
    step = min(FAN_DEGREES, 70.0 / max(len(cards) - 1, 1))
    radius = height * 2.2  # the pivot, below the hand: the cards' centres lie on this circle
    placed = []
    for index, card in enumerate(cards):
        angle = (index - (len(cards) - 1) / 2) * step
        turned = _shadowed(card, max(2, height // 60)).rotate(-angle, resample=Image.Resampling.BICUBIC, expand=True)
        centre = (radius * math.sin(math.radians(angle)), -radius * math.cos(math.radians(angle)))
        placed.append((turned, centre))
    left = min(c[0] - t.width / 2 for t, c in placed)
    top = min(c[1] - t.height / 2 for t, c in placed)
    width = max(c[0] + t.width / 2 for t, c in placed) - left
    bottom = max(c[1] + t.height / 2 for t, c in placed) - top
    out = Image.new("RGBA", (math.ceil(width), math.ceil(bottom)), (0, 0, 0, 0))
    for turned, (x, y) in placed:
        out.alpha_composite(turned, (round(x - turned.width / 2 - left), round(y - turned.height / 2 - top)))
    return out


def _reflected_row(cards: list[Image.Image]) -> Image.Image:
    """The cards side by side on one baseline, each with its reflection fading below it."""
    height = max(c.height for c in cards)
    gap = round(GAP * cards[0].width)
    width = sum(c.width for c in cards) + gap * (len(cards) - 1)
    reflection = round(height * REFLECTION)
    out = Image.new("RGBA", (width, height + gap // 2 + reflection), (0, 0, 0, 0))
    fade = np.linspace(0.35, 0.0, reflection)[:, None]  # opacity of each row of the reflection
    x = 0
    for card in cards:
        y = height - card.height
        out.alpha_composite(card, (x, y))
        mirror = np.asarray(card.transpose(Image.Transpose.FLIP_TOP_BOTTOM).crop((0, 0, card.width, reflection)))
        mirror = mirror.copy()
        mirror[..., 3] = (mirror[..., 3] * fade[: mirror.shape[0]]).astype(np.uint8)
        out.alpha_composite(Image.fromarray(mirror, "RGBA"), (x, height + gap // 2))
        x += card.width + gap
    return out


Points = Sequence[tuple[float, float]]


def _perspective_coefficients(source: Points, target: Points) -> list[float]:
    """Pillow's PERSPECTIVE coefficients mapping each point of `target` (the output) to its point of `source`."""
    rows, values = [], []
    for (x, y), (u, v) in zip(target, source):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        values += [u, v]
    return list(np.linalg.solve(np.array(rows, dtype=float), np.array(values, dtype=float)))


def perspective_row(cards: list[Image.Image]) -> Image.Image:
    """The row of cards with their reflection, seen from its near (left) end: the far end smaller."""
    flat = _reflected_row(cards)
    w, h = flat.size
    width = round(w * (0.55 + 0.45 * RECEDE))  # foreshortened
    far = h * RECEDE
    target = [(0, 0), (width, (h - far) / 2), (width, (h + far) / 2), (0, h)]
    source = [(0, 0), (w, 0), (w, h), (0, h)]
    return flat.transform((width, h), Image.Transform.PERSPECTIVE, _perspective_coefficients(source, target),
                          Image.Resampling.BICUBIC)


def on_background(image: Image.Image, look: Look, margin: int) -> Image.Image:
    """The picture with a margin around it, over the background colour (or transparent)."""
    colour = (*look.background, 255) if look.background else (0, 0, 0, 0)
    out = Image.new("RGBA", (image.width + 2 * margin, image.height + 2 * margin), colour)
    out.alpha_composite(image, (margin, margin))
    return out


def _save_png(image: Image.Image, path: Path) -> None:
    image.save(path, format="PNG", optimize=True)


def write_showcase(out_dir: Path, record: BuildRecord, ids: list[str], look: Look, target: Path) -> list[Path]:
    """Write <game>-fan.png and <game>-row.png of the chosen cards into `target`; return their paths."""
    cards = [card_image(out_dir, record, card, look.height) for card in chosen_cards(record, ids)]
    written = []
    for name, picture in (("fan", fan(cards)), ("row", perspective_row(cards))):
        path = target / f"{record.game.name}-{name}.png"
        image = on_background(picture, look, look.height // 12)
        write_atomic(path, functools.partial(_save_png, image))
        written.append(path)
    return written
