"""The bundled fonts' index (`fonts/metrics.json`, written by tools/font_index.py): what a build measures text with
instead of reading the bundled font files with fontTools."""
from __future__ import annotations

import json

from cardgen.build.build import BuildOptions, build_game
from cardgen.core import bundled
from cardgen.load import fonts


def _parsed(monkeypatch) -> list:
    """The font files fontTools reads from now on, whole or for their names."""
    parsed: list = []
    for name in ("_parse_face", "_parse_names"):
        parse = getattr(fonts, name)
        monkeypatch.setattr(fonts, name, lambda p, parse=parse: parsed.append(p) or parse(p))
    return parsed


def test_the_index_holds_what_fonttools_reads_from_every_bundled_font() -> None:
    """Every bundled font file has its entry, equal to what fontTools reads from it now (names, sizes, advances,
    the file's size), and no other file has one: a font added or updated without running tools/font_index.py
    fails here."""
    index = json.loads((bundled.FONTS_DIR / fonts.FONT_INDEX).read_text(encoding="utf-8"))
    files = sorted(p for p in bundled.FONTS_DIR.iterdir() if p.suffix.lower() in fonts.FONT_SUFFIXES)
    assert sorted(index) == [p.name for p in files] and len(files) == 26
    for path in files:
        assert index[path.name] == fonts.index_entry(fonts._parse_face(path)), path.name


def test_a_cold_build_reads_no_bundled_font_and_measures_as_fonttools(tiny_game, tmp_path, monkeypatch) -> None:
    """With an empty user cache folder a build reads no bundled font file with fontTools: each face, and the widths
    of its text, are what fontTools reads from the file; a file whose size is not the index's is read again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    fonts._scan.cache_clear()  # as in a new process
    parsed = _parsed(monkeypatch)
    build_game(tiny_game, "tiny", BuildOptions(out_root=tmp_path / "a", jobs=1), None, ["gallery"])
    faces = fonts._faces_in(bundled.FONTS_DIR)
    measured = [face for face in faces.values() if face.read_advances is not None]
    assert parsed == [] and measured and len(faces) == 26
    for face in faces.values():
        read = fonts._parse_face(face.path)
        assert face == read and face.width("Fire & Ice", 12) == read.width("Fire & Ice", 12)
    roboto = bundled.FONTS_DIR / "Roboto-Regular.ttf"
    changed = {**fonts.bundled_index(), roboto.name: {**fonts.bundled_index()[roboto.name], "size": 1}}
    monkeypatch.setattr(fonts, "bundled_index", lambda: changed)
    fonts._scan.cache_clear()
    parsed.clear()
    face = fonts._faces_in(bundled.FONTS_DIR)[("roboto", False, False)]
    assert parsed == [roboto]  # its names and sizes, the others from the index
    assert face == fonts._parse_face(roboto)
