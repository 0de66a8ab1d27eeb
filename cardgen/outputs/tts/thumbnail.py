"""The export's thumbnail: the first face of up to three decks, fanned out on a 256 x 256 picture (remade only when
what it shows changes)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from cardgen.outputs.tts.pictures import CoverFace

if TYPE_CHECKING:
    from PIL import Image

    from cardgen.outputs.tts.exporter import Exporter

THUMBNAIL_PX = 256


def cover_hashes(export: Exporter) -> list[str]:
    """What the thumbnail shows, as content hashes (it is remade only when they change)."""
    return [export.image_hash(path) for path, _ in export.cover[:3]]


def cover_faces(export: Exporter) -> list[CoverFace]:
    """The faces the thumbnail shows: the first face of up to three decks."""
    return [CoverFace(export.source(path, deck)) for path, deck in export.cover[:3]]


def thumbnail(export: Exporter) -> Image.Image:
    """A 256 x 256 picture of the game: the first face of up to three decks, fanned out."""
    from PIL import Image

    canvas = Image.new("RGBA", (THUMBNAIL_PX, THUMBNAIL_PX), "#1f1d1a")
    shown = cover_faces(export)
    for path, _ in export.cover[:3]:
        export.wait(path)
    for i, cover in enumerate(shown):
        face = cover.load(export.out_root, export.card_image)
        angle = (i - (len(shown) - 1) / 2) * -12
        turned = face.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
        x = (THUMBNAIL_PX - turned.width) // 2 + round((i - (len(shown) - 1) / 2) * 50)
        canvas.alpha_composite(turned, (max(0, x), (THUMBNAIL_PX - turned.height) // 2))
    return canvas.convert("RGB")
