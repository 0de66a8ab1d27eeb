"""Trimmed images (`trimmed/`, issue 32: per-card PNGs always carried the bleed): every face and back cut at its trim
line, at the trim size in pixels, written by every build when game.yaml says so or by `cardgen trimmed GAME`."""
from __future__ import annotations

from pathlib import Path

from PIL import Image

from cardgen.record.record import BuildRecord
from tests.conftest import run_cli, write_game

# Red in the bleed, white inside the trim line, a black bar across the middle of the card as cut, the name on top.
FACE = """\
<svg {{ geo.svg_attrs }}>
  <rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#ff0000"/>
  <rect x="{{ geo.trim.x }}" y="{{ geo.trim.y }}" width="{{ geo.trim.width }}" height="{{ geo.trim.height }}"
        fill="#ffffff"/>
  <rect x="{{ geo.trim.x }}" y="{{ length('45%', 'y') + geo.trim.y }}" width="{{ geo.trim.width }}"
        height="{{ length('10%', 'y') }}" fill="#000000"/>
  {{ text_line(card.name, "10%", "10%", "80%", pt(12), font="Roboto") }}
</svg>
"""
BACK = '<svg {{ geo.svg_attrs }}><rect width="{{ geo.width }}" height="{{ geo.height }}" fill="#2f4858"/></svg>\n'


def _game(root: Path, extra: str = "") -> None:
    manifest = f"title: Cut\ndecks:\n  main:\n    source: cards.csv\n    face: face.svg\n    back: back.svg\n{extra}"
    write_game(root, "cut", manifest, {"cards.csv": "name\nAlpha\nBeta\n"}, {"face.svg": FACE, "back.svg": BACK})


def _edges(image: Image.Image) -> list[tuple[int, ...]]:
    """The colours one pixel in from each edge, at the middle of each side."""
    w, h = image.size
    return [image.getpixel(p)[:3] for p in ((w // 2, 1), (w // 2, h - 2), (1, h // 4), (w - 2, h // 4))]


def test_a_build_writes_every_face_and_back_cut_at_the_trim_line(workspace) -> None:
    _game(workspace, "trimmed: {build: true}\n")
    run_cli(workspace, "build", "cut")
    out = workspace / "output" / "cut"
    record = BuildRecord.read(out / "build.json")
    images = [c.face for c in record.cards] + [b.image for b in record.backs.values()]
    assert sorted(p.relative_to(out / "trimmed").as_posix() for p in (out / "trimmed").rglob("*.png")) == sorted(images)
    face = Image.open(out / "trimmed" / record.cards[0].face).convert("RGB")
    assert face.size == (750, 1050)  # 63.5 x 88.9 mm at 300 DPI; the card image is 825 x 1125 with its bleed
    assert Image.open(out / record.cards[0].face).size == (825, 1125)
    assert _edges(face) == [(255, 255, 255)] * 4  # no red: the bleed is gone
    # the bar spans 45-55% of the card as cut: the same place in the trimmed image
    assert face.getpixel((375, round(0.44 * 1050)))[0] > 250 and face.getpixel((375, round(0.46 * 1050)))[0] < 5
    assert face.getpixel((375, round(0.54 * 1050)))[0] < 5 and face.getpixel((375, round(0.56 * 1050)))[0] > 250
    back = Image.open(out / "trimmed" / "backs" / "back.png").convert("RGB")
    assert back.size == (750, 1050) and back.getpixel((0, 0)) == (0x2f, 0x48, 0x58)


def test_the_trimmed_command_writes_them_at_a_lower_resolution(workspace) -> None:
    _game(workspace)
    run_cli(workspace, "build", "cut")
    assert not (workspace / "output" / "cut" / "trimmed").exists()  # only when asked for
    run_cli(workspace, "trimmed", "cut", "--dpi", "150")
    face = Image.open(workspace / "output" / "cut" / "trimmed" / "cards" / "main" / "alpha.png")
    assert face.size == (375, 525) and round(face.info["dpi"][0]) == 150
    assert _edges(face.convert("RGB")) == [(255, 255, 255)] * 4
    run_cli(workspace, "trimmed", "cut", "--dpi", "600")  # never more pixels than the card was drawn with
    assert Image.open(workspace / "output" / "cut" / "trimmed" / "cards" / "main" / "alpha.png").size == (750, 1050)
    result = run_cli(workspace, "trimmed", "cut", "--dpi", "5", expect=1)
    assert "--dpi: Input should be greater than or equal to 30" in result.output


def test_a_rebuild_cuts_only_the_images_it_drew_again(workspace, monkeypatch) -> None:
    import cardgen.outputs.trimmed as trimmed

    cut: list[str] = []
    real = trimmed.write_trimmed
    monkeypatch.setattr(trimmed, "write_trimmed", lambda source, *args: (cut.append(source.name), real(source, *args)))
    _game(workspace, "trimmed: {build: true}\n")
    run_cli(workspace, "build", "cut")
    assert len(cut) == 3  # two faces and the back
    csv = workspace / "data" / "cut" / "cards.csv"
    csv.write_text(csv.read_text().replace("Beta", "Gamma"), encoding="utf-8")
    cut.clear()
    run_cli(workspace, "build", "cut")
    assert len(cut) == 1  # the new card's face only
    out = workspace / "output" / "cut" / "trimmed" / "cards" / "main"
    assert sorted(p.name for p in out.iterdir()) == ["alpha.png", "gamma.png"]
