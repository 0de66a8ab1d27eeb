"""cairo's C declarations shipped with cardgen, or kept in the user's cache: parsed once, drawing the same pixels,
never served damaged, never run as code. Each case runs in a fresh process (cairocffi is imported once per process).
The cases of the user's cache run with shipped declarations that are not those of the cairocffi installed (as after
an upgrade of cairocffi)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from cardgen.core.storage import seal
from cardgen.raster import cairo_bindings

# A card-like picture: text in a bundled font, a gradient, strokes and a transform.
_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><linearGradient id="g"><stop offset="0" '
        'stop-color="#c33"/><stop offset="1" stop-color="#33c"/></linearGradient><rect x="4" y="4" width="112" '
        'height="72" rx="9" fill="url(#g)" stroke="black" stroke-width="3"/><path d="M10 70L60 10L110 70Z" '
        'fill="none" stroke="gold" transform="rotate(4 60 40)"/><text x="12" y="48" font-family="Cinzel" '
        'font-size="22">Ag &amp; 42</text></svg>')

_DRAW = """
import ctypes.util, json, os, sys
from pathlib import Path
import cffi.api  # not its C parser: "parsed" below tells whether anything imported that
searched = []  # each library ctypes searched for (find_library), counted
_find = ctypes.util.find_library
ctypes.util.find_library = lambda name: (searched.append(name), _find(name))[1]
if os.environ.get("FIRST_OPEN_FAILS"):  # as where the loader does not find cairo by its file name
    _open, opened = cffi.api.FFI.dlopen, []
    def _dlopen(ffi, *args):
        opened.append(1)
        if len(opened) == 1:
            raise OSError("cannot open libcairo.so.2")
        return _open(ffi, *args)
    cffi.api.FFI.dlopen = _dlopen
cdefs = []  # each declaration text parsed (cffi's FFI.cdef), counted
_cdef = cffi.api.FFI.cdef
cffi.api.FFI.cdef = lambda ffi, *args, **kwargs: (cdefs.append(1), _cdef(ffi, *args, **kwargs))[1]
if sys.argv[3]:
    from cardgen.raster import cairo_bindings
    cairo_bindings.SHIPPED = Path(sys.argv[3])
from cardgen.load.fonts import configure_fontconfig
from cardgen.raster.render import draw_svg
configure_fontconfig([])
image = draw_svg(sys.argv[1], 120, 80, 96, Path('/'), 'file:///')
image.save(sys.argv[2])
print(json.dumps({"parsed": "pycparser" in sys.modules, "cdefs": len(cdefs), "searched": len(searched),
                  "kept": type(sys.modules["cairocffi"].ffi).__module__ != "cffi.api"}))
"""


def _drawing(home: Path, target: Path, shipped: bool = False, env: dict | None = None) -> subprocess.Popen:
    """A fresh process drawing `_SVG` into `target` with `home` as its user cache folder: with the declarations
    cardgen ships when `shipped`, else with shipped ones of another cairocffi (their first line changed)."""
    env = {**os.environ, **(env or {}), "XDG_CACHE_HOME": str(home)}
    for name in ("CARDGEN_FONTCONFIG_SET", "FONTCONFIG_FILE"):
        env.pop(name, None)
    other = ""
    if not shipped:
        other = str(home / "other-declarations.txt")
        if not Path(other).exists():
            home.mkdir(parents=True, exist_ok=True)
            Path(other).write_bytes(b"0" * 32 + cairo_bindings.SHIPPED.read_bytes()[32:])
    return subprocess.Popen([sys.executable, "-c", _DRAW, _SVG, str(target), other], env=env,
                            stdout=subprocess.PIPE, text=True)


def _result(drawing: subprocess.Popen) -> dict:
    out, _ = drawing.communicate(timeout=120)
    assert drawing.returncode == 0
    return json.loads(out)


def _draw(home: Path, target: Path, shipped: bool = False, env: dict | None = None) -> dict:
    return _result(_drawing(home, target, shipped, env))


def _entries(home: Path) -> list[Path]:
    return sorted((home / "cardgen" / "cairo-declarations").glob("*/*.txt"))


def _pixels(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.int16)


def test_the_shipped_declarations_are_those_cairocffi_parses_now() -> None:
    """cardgen ships cairocffi's declarations as cffi parses them for the cairocffi and cffi installed: updating
    either without running tools/cairo_declarations.py fails here."""
    parse = "import sys; from cardgen.raster import cairo_bindings; sys.stdout.write(cairo_bindings.shipped_text())"
    parsed = subprocess.run([sys.executable, "-c", parse], capture_output=True, text=True, check=True).stdout
    assert parsed.count("\n") == 2 and len(parsed) > 50_000
    assert cairo_bindings.SHIPPED.read_text(encoding="utf-8") == parsed


def test_a_first_run_draws_with_the_shipped_declarations(tmp_path: Path) -> None:
    """With an empty user cache folder nothing is parsed and nothing is kept there, and the pixels are those drawn
    with declarations cairocffi parsed itself."""
    assert _draw(tmp_path / "shipped", tmp_path / "shipped.png", shipped=True) == {
        "parsed": False, "cdefs": 0, "searched": 0, "kept": True}  # cairo opened by its file name, not searched for
    assert not (tmp_path / "shipped" / "cardgen" / "cairo-declarations").exists()
    parsed = _draw(tmp_path / "parsed", tmp_path / "parsed.png")
    assert parsed == {"parsed": True, "cdefs": 2, "searched": 0, "kept": False}
    assert np.array_equal(_pixels(tmp_path / "shipped.png"), _pixels(tmp_path / "parsed.png"))
    assert _pixels(tmp_path / "shipped.png").std() > 10


def test_cairo_is_searched_for_when_it_does_not_open_by_its_file_name(tmp_path: Path) -> None:
    """ctypes' library search (find_library, for cairocffi's three names) is skipped while libcairo.so.2 opens;
    when it does not, cairocffi is imported again and searches, and draws the same pixels."""
    fallen_back = _draw(tmp_path / "a", tmp_path / "searched.png", env={"FIRST_OPEN_FAILS": "1"})
    assert fallen_back == {"parsed": True, "cdefs": 4, "searched": 3, "kept": False}  # parsed again after the failure
    assert _draw(tmp_path / "b", tmp_path / "named.png") == {"parsed": True, "cdefs": 2, "searched": 0, "kept": False}
    assert np.array_equal(_pixels(tmp_path / "searched.png"), _pixels(tmp_path / "named.png"))


def test_declarations_are_parsed_once_then_kept_and_draw_the_same_pixels(tmp_path: Path) -> None:
    first = _draw(tmp_path, tmp_path / "first.png")
    # Nothing kept yet: cairocffi parses its headers (its two declaration texts), and the entry is made from what
    # it parsed, not parsed again (four).
    assert first == {"parsed": True, "cdefs": 2, "searched": 0, "kept": False}
    assert len(_entries(tmp_path)) == 1
    second = _draw(tmp_path, tmp_path / "second.png")
    assert second == {"parsed": False, "cdefs": 0, "searched": 0, "kept": True}  # from the kept entry: no C parser
    assert np.array_equal(_pixels(tmp_path / "first.png"), _pixels(tmp_path / "second.png"))
    assert _pixels(tmp_path / "second.png").std() > 10  # a real drawing, not a blank one


def test_processes_starting_together_parse_the_declarations_once(tmp_path: Path) -> None:
    # As a first build's render workers do: one parses and keeps them, the others wait and read its entry.
    drawings = [_drawing(tmp_path, tmp_path / f"{n}.png") for n in range(3)]
    results = sorted((_result(d) for d in drawings), key=lambda r: r["cdefs"])
    assert results == [{"parsed": False, "cdefs": 0, "searched": 0, "kept": True}] * 2 + [
        {"parsed": True, "cdefs": 2, "searched": 0, "kept": False}]
    assert len(_entries(tmp_path)) == 1
    assert all(np.array_equal(_pixels(tmp_path / "0.png"), _pixels(tmp_path / f"{n}.png")) for n in (1, 2))


def test_damaged_kept_declarations_are_never_used_and_are_made_again(tmp_path: Path) -> None:
    _draw(tmp_path, tmp_path / "first.png")
    entry = _entries(tmp_path)[0]
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0x01  # same size: only the content digest can tell
    entry.write_bytes(bytes(data))
    assert _draw(tmp_path, tmp_path / "again.png") == {"parsed": True, "cdefs": 2, "searched": 0, "kept": False}
    assert np.array_equal(_pixels(tmp_path / "first.png"), _pixels(tmp_path / "again.png"))
    then = _draw(tmp_path, tmp_path / "then.png")
    assert then == {"parsed": False, "cdefs": 0, "searched": 0, "kept": True}  # made again, whole


def test_kept_declarations_are_read_as_literals_never_run(tmp_path: Path) -> None:
    _draw(tmp_path, tmp_path / "first.png")
    entry = _entries(tmp_path)[0]
    planted = tmp_path / "planted"
    entry.write_text(f"__import__('pathlib').Path({str(planted)!r}).write_text('ran')")
    seal(entry)  # sealed as if cardgen wrote it: only reading it as literals keeps it from running
    assert _draw(tmp_path, tmp_path / "again.png") == {"parsed": True, "cdefs": 2, "searched": 0, "kept": False}
    assert not planted.exists()
    assert np.array_equal(_pixels(tmp_path / "first.png"), _pixels(tmp_path / "again.png"))
