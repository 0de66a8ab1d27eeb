"""JPEGs joined from tiles without decoding them: the joined image's pixels are the tiles' own, exactly."""
from __future__ import annotations

import io
import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from cardgen.outputs.jpeg_tiles import encode_tile, join_tiles, read_tile

SIZE = (48, 40)


def _picture(seed: int, size: tuple[int, int] = SIZE) -> Image.Image:
    """A tile with edges, colours and noise, different for each seed."""
    rng = random.Random(seed)
    image = Image.effect_noise(size, 40).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        box = sorted(rng.sample(range(size[0]), 2)), sorted(rng.sample(range(size[1]), 2))
        draw.rectangle((box[0][0], box[1][0], box[0][1], box[1][1]), fill=tuple(rng.randrange(256) for _ in "rgb"))
    return image


def _pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))


def test_joined_tiles_are_one_jpeg_with_each_tiles_pixels_exactly() -> None:
    columns, rows = 3, 2
    tiles = [encode_tile(_picture(seed), 90) for seed in range(columns * rows)]
    joined = join_tiles([read_tile(tile, SIZE) for tile in tiles], columns)
    pixels = _pixels(joined)
    width, height = SIZE
    assert pixels.shape == (rows * height, columns * width, 3)
    for slot, tile in enumerate(tiles):
        x, y = slot % columns * width, slot // columns * height
        assert (pixels[y:y + height, x:x + width] == _pixels(tile)).all(), slot
    # and it is a JPEG every decoder reads: its restart markers count 0 to 7 in order (30 rows of blocks here)
    with Image.open(io.BytesIO(joined)) as image:
        assert image.format == "JPEG" and image.info.get("progressive", 0) == 0


@pytest.mark.parametrize("options", [
    {"quality": 90, "subsampling": 0},  # no restarts
    {"quality": 90, "subsampling": 0, "progressive": True, "restart_marker_blocks": SIZE[0] // 8},
    {"quality": 90, "subsampling": 2, "restart_marker_blocks": SIZE[0] // 16},  # chroma subsampled
    {"quality": 90, "subsampling": 0, "restart_marker_blocks": 1},  # a restart after each block, not each row
])
def test_a_jpeg_that_is_not_a_tile_is_refused(options: dict) -> None:
    buffer = io.BytesIO()
    _picture(1).save(buffer, format="JPEG", **options)
    with pytest.raises(ValueError):
        read_tile(buffer.getvalue(), SIZE)


def test_tiles_of_another_size_or_quality_are_not_joined() -> None:
    tile = encode_tile(_picture(1), 90)
    with pytest.raises(ValueError):
        read_tile(tile, (SIZE[0], SIZE[1] + 8))  # not the size it is
    with pytest.raises(ValueError):
        read_tile(encode_tile(_picture(1, (44, 40)), 90), (44, 40))  # not whole blocks
    with pytest.raises(ValueError):
        join_tiles([read_tile(tile, SIZE), read_tile(encode_tile(_picture(2), 80), SIZE)], 2)  # other tables
    with pytest.raises(ValueError):
        join_tiles([read_tile(tile, SIZE)] * 3, 2)  # not a full grid


@pytest.mark.parametrize("data", [
    b"\xff\xd8\xff\xd9",  # nothing between its start and its end
    b"\xff\xd8\xff\xda\xff\xd9",  # a scan cut short
    b"\xff\xd8\xff\xc0\x00\x03\x08\xff\xda\x00\x03\x03\xff\xd9",  # a frame cut short
])
def test_a_damaged_jpeg_is_not_a_tile(data: bytes) -> None:
    with pytest.raises(ValueError):
        read_tile(data, SIZE)
