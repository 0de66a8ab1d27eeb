"""cardgen's bundled fonts, icons and partials: used by any workspace, overridden by its own, in cache keys."""
from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardgen.commands.cli import main
from cardgen.core import bundled
from cardgen.core.errors import CardgenError
from cardgen.load.fonts import FontBook, _overridden_bundled_files
from cardgen.load.icons import IconLibrary, bundled_icons
from tests.conftest import SIMPLE_BACK, write_game


def _build(root: Path, *args: str):
    return CliRunner().invoke(main, ["--root", str(root), "build", "-j", "1", *args])


# ---------------------------------------------------------------- icons

def _path_data(svg: str) -> list[str]:
    """What an icon draws: the path data of its elements (its markup is written again when read)."""
    return re.findall(r'\sd="([^"]*)"', svg)


def test_every_bundled_icon_is_a_safe_512_square_svg() -> None:
    icons = bundled_icons()
    assert len(icons.names) > 4000
    for name in sorted(icons.names):
        assert icons.get(name).viewbox == (0, 0, 512, 512)


def test_bundled_icons_are_read_one_at_a_time_from_the_zip(tmp_path: Path) -> None:
    library = IconLibrary(tmp_path)  # a folder with no icons/ at all
    gears = library.get("gears")
    assert gears.path == bundled.ICON_BUNDLE and "<path" in gears.body
    assert _path_data(gears.body) == _path_data(zipfile.ZipFile(bundled.ICON_BUNDLE).read("gears.svg").decode())
    assert not (bundled.ICON_BUNDLE.parent / "gears.svg").exists()  # nothing unpacked


def _index_entry(home: Path) -> Path:
    [entry] = (home / "cardgen" / "icon-index").rglob("*.bin")
    return entry


def test_bundled_icons_are_read_through_a_kept_index_that_never_serves_a_wrong_icon(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.core.storage import seal
    from cardgen.load import icons
    from cardgen.load.icons import BundledIcons, _index_from_bytes, _index_to_bytes

    monkeypatch.setattr(icons, "shipped_index", lambda path: None)  # as with a shipped index out of date
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = zipfile.ZipFile(bundled.ICON_BUNDLE)
    BundledIcons(bundled.ICON_BUNDLE).get("gears")  # makes the index
    opened: list[str] = []
    monkeypatch.setattr(BundledIcons, "_open", lambda self: opened.append("zip") or source)
    kept = BundledIcons(bundled.ICON_BUNDLE)
    assert {f"{name}.svg" for name in kept.names} == {n for n in source.namelist() if n.endswith(".svg")}
    for name in ("gears", "splash", "hexagonal-nut"):
        assert kept._read(name) == source.read(f"{name}.svg")
    assert opened == []  # names and icons came through the index, not the zip's directory
    # An index sealed again after its places were swapped (as a bug would write it): the CRC tells, the zip reads
    entry = _index_entry(tmp_path)
    index = _index_from_bytes(entry.read_bytes())
    assert index is not None and index["gears"] == kept._members()["gears"]
    index["gears"], index["splash"] = index["splash"][:2] + index["gears"][2:], index["gears"][:2] + index["splash"][2:]
    entry.write_bytes(_index_to_bytes(index))
    seal(entry)
    assert BundledIcons(bundled.ICON_BUNDLE)._read("gears") == source.read("gears.svg") and opened
    # A damaged index (not as sealed) is made again from the zip
    entry.write_bytes(entry.read_bytes().replace(b"gears", b"gearz"))
    again = BundledIcons(bundled.ICON_BUNDLE)
    assert "gears" in again.names
    assert _path_data(again.get("gears").body) == _path_data(source.read("gears.svg").decode())
    # An index cut short, or holding fewer names than rows, is not one: it is made again
    whole = _index_to_bytes(index)
    assert _index_from_bytes(whole) == index
    assert _index_from_bytes(whole[:-40]) is None and _index_from_bytes(whole[:100]) is None
    assert _index_from_bytes(whole.rsplit(b"\n", 1)[0]) is None and _index_from_bytes(b"") is None


def test_the_shipped_index_is_the_zip_s_and_a_first_build_reads_no_zip_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index beside the bundled zip (tools/build_icon_bundle.py writes it) is what the zip holds now: a zip
    updated without it fails here. Icons are read through it with no user cache and without opening the zip; an
    index of another zip (its size) is not used."""
    from cardgen.load.icons import BundledIcons, index_bytes, index_file, shipped_index

    assert index_file(bundled.ICON_BUNDLE).read_bytes() == index_bytes(bundled.ICON_BUNDLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = zipfile.ZipFile(bundled.ICON_BUNDLE)
    opened: list[str] = []
    monkeypatch.setattr(BundledIcons, "_open", lambda self: opened.append("zip") or source)
    icons = BundledIcons(bundled.ICON_BUNDLE)
    assert {f"{name}.svg" for name in icons.names} == {n for n in source.namelist() if n.endswith(".svg")}
    assert icons._read("gears") == source.read("gears.svg") and opened == []
    assert not (tmp_path / "cardgen" / "icon-index").exists()
    other = tmp_path / "other.zip"
    shutil.copyfile(bundled.ICON_BUNDLE, other)
    index_file(other).write_bytes(index_bytes(bundled.ICON_BUNDLE))
    assert shipped_index(other) is not None
    with other.open("ab") as grown:
        grown.write(b"\0")
    assert shipped_index(other) is None


def test_an_icon_changed_in_the_zip_under_the_same_size_and_time_is_never_served(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from cardgen.load.icons import BundledIcons

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    icons = tmp_path / "icons.zip"
    text = zipfile.ZipFile(bundled.ICON_BUNDLE).read("gears.svg")
    with zipfile.ZipFile(icons, "w", zipfile.ZIP_STORED) as copy:
        copy.writestr("gears.svg", text)
    assert _path_data(BundledIcons(icons).get("gears").body) == _path_data(text.decode())  # the index is made
    stat = icons.stat()
    icons.write_bytes(icons.read_bytes().replace(b"<path", b"<pxth"))  # same size; time set back below
    os.utime(icons, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(zipfile.BadZipFile):  # the index's CRC tells; the zip then says it is damaged
        BundledIcons(icons).get("gears")


def test_workspace_icon_overrides_the_bundled_one_and_adds_new_names(tmp_path: Path) -> None:
    (tmp_path / "icons" / "mine").mkdir(parents=True)
    own = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><circle r="40" cx="50" cy="50"/></svg>'
    (tmp_path / "icons" / "mine" / "gears.svg").write_text(own)
    (tmp_path / "icons" / "mine" / "my-logo.svg").write_text(own)
    library = IconLibrary(tmp_path)
    assert library.get("gears").viewbox == (0, 0, 100, 100)
    assert library.get("my-logo").body.startswith("<circle")
    assert library.search(["logo"]) == ["my-logo"]


def test_unknown_icon_keeps_its_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(CardgenError, match="unknown icon 'gearz'; did you mean 'gears'"):
        IconLibrary(tmp_path).get("gearz")


def test_icons_search_show_and_credits(tmp_path: Path) -> None:
    runner = CliRunner()
    found = runner.invoke(main, ["--root", str(tmp_path), "icons", "search", "sword"])
    assert found.exit_code == 0 and "crossed-swords" in found.stdout.split() and "gears" not in found.stdout
    both = runner.invoke(main, ["--root", str(tmp_path), "icons", "search", "sword", "crossed"])
    assert both.stdout.split() == ["crossed-swords"]
    none = runner.invoke(main, ["--root", str(tmp_path), "icons", "search", "gearz"])
    assert none.exit_code == 1 and "did you mean" in none.stderr
    target = tmp_path / "preview.png"
    shown = runner.invoke(main, ["--root", str(tmp_path), "icons", "show", "gears", "cog", "--out", str(target)])
    assert shown.exit_code == 0, shown.output
    from PIL import Image

    image = Image.open(target).convert("L")
    assert image.size[0] == 2 * 180 and image.getextrema()[0] < 60  # two cells, dark ink drawn
    unknown = runner.invoke(main, ["--root", str(tmp_path), "icons", "show", "cogg"])
    assert unknown.exit_code == 1 and "did you mean 'cog'" in unknown.stderr
    credits = runner.invoke(main, ["icons", "--credits"])
    assert "CC BY 3.0" in credits.stdout and "Lorc" in credits.stdout and "Delapouite" in credits.stdout


# ---------------------------------------------------------------- fonts

def test_bundled_fonts_without_a_fonts_folder(tmp_path: Path) -> None:
    book = FontBook(tmp_path / "fonts")
    assert {"Roboto", "Roboto Condensed", "Roboto Mono", "Crimson Text", "Cinzel"} <= set(book.families)
    assert book.face("Roboto", bold=True).path == bundled.FONTS_DIR / "Roboto-Bold.ttf"
    for face in book.faces.values():  # every bundled font ships with its license
        assert (bundled.FONTS_DIR / f"OFL-{face.path.stem.split('-')[0]}.txt").is_file()


def test_workspace_font_overrides_the_bundled_face(tmp_path: Path) -> None:
    (tmp_path / "fonts").mkdir()
    shutil.copy(bundled.FONTS_DIR / "ShareTechMono-Regular.ttf", tmp_path / "fonts" / "MyShareTech.ttf")
    book = FontBook(tmp_path / "fonts")
    assert book.face("Share Tech Mono").path == tmp_path / "fonts" / "MyShareTech.ttf"
    assert book.face("Roboto").path.parent == bundled.FONTS_DIR
    # cairo must not see the bundled face either, or it could draw with it
    assert _overridden_bundled_files([tmp_path / "fonts", bundled.FONTS_DIR]) == [
        bundled.FONTS_DIR / "ShareTechMono-Regular.ttf"]


def test_a_missing_font_family_is_one_finding_that_says_where_fonts_come_from(workspace: Path) -> None:
    rows = "".join(f"Card {i},text {i}\n" for i in range(12))
    write_game(workspace, "fonty", "title: F\nfont: Comic Sans\ndecks:\n  main: {source: cards.csv, face: face.svg}\n",
               {"cards.csv": "name,text\n" + rows},
               {"face.svg": '<svg {{ geo.svg_attrs }}>{{ text_line(card.name, 10, 10, 500, 40) }}'
                            '{{ text_box(card.text, 10, 100, 500, 300, 30) }}</svg>'})
    for args in (["validate"], ["build", "-j", "1"], ["build", "-j", "1", "--force"]):
        result = CliRunner().invoke(main, ["--root", str(workspace), *args])
        lines = [line for line in result.output.splitlines() if "Comic Sans" in line]
        assert result.exit_code == 1 and len(lines) == 1, (args, result.output)
        assert "fonts/" in lines[0] and "Roboto" in lines[0] and ".ttf" in lines[0]
    listed = CliRunner().invoke(main, ["--root", str(workspace), "fonts"])
    assert "Roboto Condensed: regular, italic, bold, bold italic (bundled)" in listed.stdout


# ---------------------------------------------------------------- cache keys cover the bundled files

def test_a_change_to_a_bundled_file_redraws_the_cards_using_it(tiny_game: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fonts = tmp_path / "bundled-fonts"
    shutil.copytree(bundled.FONTS_DIR, fonts)
    monkeypatch.setattr(bundled, "FONTS_DIR", fonts)
    assert _build(tiny_game).exit_code == 0
    assert "up to date" in _build(tiny_game).stdout
    font = fonts / "RobotoMono-Regular.ttf"
    font.write_bytes(font.read_bytes() + b"\0\0\0\0")  # same glyphs, new bytes: as after an upgrade
    assert "3 drawn" in _build(tiny_game).stdout  # every face has Roboto Mono text; the back has none

    icons = tmp_path / "game-icons.zip"
    with zipfile.ZipFile(bundled.ICON_BUNDLE) as source, zipfile.ZipFile(icons, "w") as copy:
        for name in ("hexagonal-nut.svg", "gears.svg"):
            text = source.read(name).decode()
            copy.writestr(name, text.replace("<path", '<circle r="99" cx="99" cy="99"/><path', 1))
    monkeypatch.setattr(bundled, "ICON_BUNDLE", icons)
    assert "1 drawn" in _build(tiny_game).stdout  # only Beta shows :scrap: (hexagonal-nut)


def test_bundled_partials_are_found_by_any_game(workspace: Path) -> None:
    write_game(workspace, "kit", "title: Kit\nfont: Roboto\ndecks:\n  main: {source: cards.csv, face: face.svg, "
               "back: back.svg}\n", {"cards.csv": "name,icon,text\nSpark,lightning-helix,Zap **2**\n"},
               {"face.svg": '{% extends "cardgen/card.svg" %}{% set accent = "#aa0000" %}',
                "back.svg": SIMPLE_BACK})
    result = _build(workspace)
    assert result.exit_code == 0, result.output
    from PIL import Image

    face = Image.open(workspace / "output" / "kit" / "cards" / "main" / "spark.png").convert("RGB")
    assert face.getpixel((5, 5)) == (170, 0, 0)  # the accent setting reached the shared layout


def test_the_digest_of_the_bundled_files_is_kept_and_a_damaged_one_is_computed_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cardgen.core import storage

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    hashed: list[str] = []
    digest_of = storage.file_digest
    monkeypatch.setattr(storage, "file_digest", lambda path: hashed.append(path.name) or digest_of(path))
    bundled._digest.cache_clear()
    first = bundled.bundle_digest()
    assert "game-icons.zip" in hashed
    hashed.clear()
    bundled._digest.cache_clear()  # as a new process
    assert bundled.bundle_digest() == first and hashed == []
    [entry] = (tmp_path / "cardgen" / "bundle-digest").rglob("*.json")
    entry.write_text(entry.read_text().replace(first[:4], "0000" if first[:4] != "0000" else "1111"))  # same size
    bundled._digest.cache_clear()
    assert bundled.bundle_digest() == first and "game-icons.zip" in hashed
    bundled._digest.cache_clear()
