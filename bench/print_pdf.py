"""Print PDF size and time for 100 distinct poker cards (PNG vs JPEG images), one copy each.

Run: .venv/bin/python bench/print_pdf.py
The cards are synthetic but not flat: a gradient, shapes, text and a photo-like noisy patch, so the
PNG figure is near the worst case for card art (flat vector art compresses far better).
"""
from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

from cardgen.core.storage import file_digest
from cardgen.options.pdf import PrintSpec
from cardgen.outputs.pdf import write_print_pdf
from cardgen.record.record import BuildRecord

CARDS = 100
SIZE = (825, 1125)


def synthetic_card(path: Path, seed: int) -> None:
    """A card-like RGB image: gradient frame, shapes, text and a blurred noise 'illustration'."""
    rng = random.Random(seed)
    image = Image.linear_gradient("L").resize(SIZE).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y = rng.randrange(SIZE[0]), rng.randrange(SIZE[1])
        draw.ellipse([x, y, x + rng.randrange(40, 200), y + rng.randrange(40, 200)],
                     fill=tuple(rng.randrange(256) for _ in range(3)))
    noise = Image.effect_noise((600, 400), 60).filter(ImageFilter.GaussianBlur(1.5)).convert("RGB")
    image.paste(noise, (112, 150))
    draw.text((100, 650), f"Card {seed}: some rules text for the bench", fill="black")
    image.save(path)


def main() -> None:
    """Write the PDFs and print time and size for each image format."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "cards").mkdir()
        cards = []
        for n in range(CARDS):
            synthetic_card(root / "cards" / f"c{n}.png", n)
            cards.append({"id": f"c{n}", "deck": "main", "name": f"Card {n}", "copies": 1, "face": f"cards/c{n}.png",
                          "back": None, "source": {"file": "bench"}, "size_mm": {"width": 63.5, "height": 88.9},
                          "bleed_mm": 3.175, "dpi": 300, "pixels": {"width": SIZE[0], "height": SIZE[1]},
                          "hash": file_digest(root / "cards" / f"c{n}.png")})
        size = {"size_mm": {"width": 63.5, "height": 88.9}, "bleed_mm": 3.175, "dpi": 300,
                "pixels": {"width": SIZE[0], "height": SIZE[1]}}
        record = BuildRecord.model_validate({
            "cardgen": "bench", "built_at": "2026-01-01T00:00:00", "cards": cards, "stats": {"cards": CARDS,
                                                                                           "copies": CARDS},
            "game": {"name": "bench", "title": "Bench", "version": "1"}, "decks": {"main": {"title": "Main", **size}}})
        for images in ("png", "jpeg"):
            target = root / f"{images}.pdf"
            started = time.perf_counter()
            result = write_print_pdf(record, root, PrintSpec(images=images), target)
            seconds = time.perf_counter() - started
            print(f"{CARDS} distinct cards, {images}: {result.pages} pages, {target.stat().st_size / 2**20:.1f} MiB, "
                  f"{seconds:.1f} s")


if __name__ == "__main__":
    main()
