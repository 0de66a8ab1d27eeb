"""cairo's C declarations for cairocffi, parsed once, not once per drawing process.

cairocffi parses cairo's C headers with pycparser each time it is imported: ~0.1-0.25 s of CPU in every
process that draws (each render worker of every build, before its first card). cffi can write parsed
declarations as an "out-of-line ABI" module (its `set_source(name, None)` and `emit_python_code`). cardgen
keeps the arguments of the two FFI objects that `cairocffi/ffi.py` makes, and puts them in place of
`cairocffi.ffi` before cairocffi is imported. They ship with cardgen (`assets/cairo/declarations.txt`, written by
tools/cairo_declarations.py for the cairocffi and cffi it is tested with), used while the declarations of the
cairocffi and cffi installed are those; otherwise they are kept in the user's cache folder (a sealed entry, keyed
by the text of cairocffi's declarations and the versions of cffi's backend and Python). Either is read as Python
literals, never run as code. Anything unexpected (xcffib installed, another cairocffi layout, a damaged entry)
means cairocffi is imported as it is, and a missing entry is made from cairocffi's own declarations, by one process
at a time: the render workers of a first build set up together, and one parses while the others wait for its entry.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import types
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from cardgen.core.bundled import ASSETS

if TYPE_CHECKING:
    from cardgen.core.storage import Cache

_MAIN, _PIXBUF = "cardgen_cairo_ffi", "cardgen_cairo_pixbuf_ffi"  # the names cffi gives the two FFI objects
SHIPPED = ASSETS / "cairo" / "declarations.txt"  # named so, the code map keys the drawing's caches on it


def import_cairocffi() -> None:
    """Import cairocffi, with its declarations from those cardgen ships or keeps in the user's cache when they
    are there (and kept there when they are not). Does nothing once cairocffi is imported."""
    if "cairocffi" in sys.modules:
        return
    declared = _declared()
    kept = None if declared is None else _read(_shipped(declared))
    if kept is None or not _imported_with(kept):
        _import_from_user_cache(declared)


def _import_from_user_cache(declared: str | None) -> None:
    """Import cairocffi with its declarations kept in the user's cache folder, parsed and kept there when none
    are (or as it is, when they cannot be kept)."""
    from cardgen.core.storage import user_store

    cache = user_store("cairo-declarations", ".txt")
    if declared is None or cache is None:
        _import()  # as it is
        return
    key = _key(declared)
    kept = _read(cache.read_bytes(key))
    if kept is None:
        # None kept (a first run): one process parses and keeps them, and the others (a build's render workers
        # all set up at once) wait for its entry rather than each parse them too, on the cores the build needs.
        with _one_at_a_time(cache.path(key, ".lock")):
            kept = _read(cache.read_bytes(key))
            if kept is None:
                _import_and_keep(cache, key)
                return
    if not _imported_with(kept):
        _import_and_keep(cache, key)


def _imported_with(kept: types.ModuleType) -> bool:
    """Import cairocffi with `kept` as its declarations; False (and nothing of it imported) when it cannot use
    them."""
    sys.modules["cairocffi.ffi"] = kept
    try:
        _import()
    except Exception:  # noqa: BLE001  kept declarations cairocffi could not use: the caller imports it otherwise
        _forget()
        return False
    return True


def _import() -> None:
    """`import cairocffi`, its cairo library opened by the file names cairocffi tries after ctypes' library search
    (`libcairo.so.2`, `libcairo.2.dylib`, `libcairo-2.dll`), that search skipped; searched for when none opens.

    ctypes' `find_library` runs `ldconfig`, then gcc and ld, for each of the three names cairocffi asks for: ~30 ms
    of CPU in every process that draws (each render worker), to find on Linux `libcairo.so.2`, the very name the
    system's loader opens.
    """
    import ctypes.util

    declarations = sys.modules.get("cairocffi.ffi")
    search = ctypes.util.find_library
    ctypes.util.find_library = lambda name: None  # cairocffi takes it as it is imported
    try:
        import cairocffi  # noqa: F401
    except OSError:  # no library of those names: the loader does not look where ctypes does (macOS' Homebrew)
        _forget()
        if declarations is not None:
            sys.modules["cairocffi.ffi"] = declarations
    finally:
        ctypes.util.find_library = search
    import cairocffi  # noqa: F401, F811  searched for, when the names did not open


def _forget() -> None:
    """Forget every cairocffi module imported, so that it can be imported again."""
    for name in [n for n in sys.modules if n == "cairocffi" or n.startswith("cairocffi.")]:
        del sys.modules[name]


def _import_and_keep(cache: Cache, key: str) -> None:
    """Import cairocffi as it is (parsing its declarations), and keep what it parsed under `key`."""
    _import()

    made = _made()
    if made is not None:
        cache.put_bytes(key, made.encode("utf-8"))


@contextmanager
def _one_at_a_time(lock: Path) -> Iterator[None]:
    """Hold a lock file (one process at a time on this machine); after a minute of waiting, or when the lock
    cannot be made, go on without it (at worst, the declarations are parsed twice)."""
    from filelock import FileLock, Timeout

    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        held = FileLock(lock, timeout=60)
        held.acquire()
    except (Timeout, OSError):
        yield
        return
    try:
        yield
    finally:
        held.release()


def _declared() -> str | None:
    """What the parsed declarations follow from: cairocffi's declaring files and cffi's backend; None when
    cairocffi adds declarations of another package (xcffib) or is laid out otherwise."""
    if importlib.util.find_spec("xcffib") is not None:
        return None
    spec = importlib.util.find_spec("cairocffi")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0])
    try:
        import _cffi_backend

        texts = [(folder / name).read_bytes() for name in ("ffi.py", "constants.py")]
    except (OSError, ImportError, AttributeError):
        return None
    digest = hashlib.sha256(_cffi_backend.__version__.encode())
    for text in texts:
        digest.update(hashlib.sha256(text).digest())
    return digest.hexdigest()[:32]


def _key(declared: str) -> str:
    """The user cache's key of the declarations: what they follow from, cardgen's code, and Python."""
    from cardgen.core.bundled import code_digest

    return hashlib.sha256(repr((declared, code_digest(__name__), sys.version)).encode()).hexdigest()[:32]


def _shipped(declared: str) -> bytes | None:
    """The declarations shipped with cardgen (the literal after their file's first line) when they are those
    `declared` names (that first line)."""
    try:
        with SHIPPED.open("rb") as handle:
            first = handle.readline()
            return handle.read() if first.decode("ascii", "replace").strip() == declared else None
    except OSError:
        return None


def shipped_text() -> str | None:
    """The text of the shipped declarations' file for the cairocffi and cffi installed (parsed now, in this
    process: cairocffi must not be imported yet); None when they cannot be kept (tools/cairo_declarations.py)."""
    declared = _declared()
    _import()  # as it is: parsing its headers

    made = _made()
    return None if declared is None or made is None else f"{declared}\n{made}\n"


def _made() -> str | None:
    """The out-of-line arguments of cairocffi's two FFI objects, as the text of a Python literal, made from
    the declarations cairocffi has just parsed (its own FFI objects: parsing them again would double the cost of a
    first run); None when they do not have the shape this module knows."""
    from cffi import FFI

    own = sys.modules.get("cairocffi.ffi")
    main, pixbuf = getattr(own, "ffi", None), getattr(own, "ffi_pixbuf", None)
    if not (isinstance(main, FFI) and isinstance(pixbuf, FFI) and len(main._cdefsources) == 1
            and not main._included_ffis and pixbuf._included_ffis == [main] and len(pixbuf._cdefsources) == 4
            and not hasattr(main, "_assigned_source") and not hasattr(pixbuf, "_assigned_source")):
        return None
    arguments = {}
    for name, ffi in ((_MAIN, main), (_PIXBUF, pixbuf)):
        # Names the module cffi would write; an FFI object used in ABI mode, as cairocffi's, never reads it.
        ffi.set_source(name, None)
        arguments[name] = _arguments(_python_code(ffi))
    return repr(arguments)


def _python_code(ffi: Any) -> str:
    """The out-of-line module cffi writes for `ffi`, as text."""
    import io

    from cffi import recompiler

    out = io.StringIO()
    recompiler.make_py_source(ffi, ffi._assigned_source[0], out)  # what emit_python_code writes, kept in memory
    return out.getvalue()


def _arguments(code: str) -> dict[str, Any]:
    """The literal keyword arguments of the `ffi = _cffi_backend.FFI(...)` call of cffi's module text
    (`_includes`, the one that names another module, is left out: it is put back when loading)."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "FFI":
            return {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg not in (None, "_includes")}
    raise ValueError("cffi wrote no FFI call")


def _read(data: bytes | None) -> types.ModuleType | None:
    """A module standing in for `cairocffi.ffi`, built from a kept entry; None when there is none or it is
    not what this module keeps."""
    if data is None:
        return None
    try:
        import _cffi_backend

        arguments = ast.literal_eval(data.decode("utf-8"))
        main = _cffi_backend.FFI(_MAIN, **arguments[_MAIN])
        pixbuf = _cffi_backend.FFI(_PIXBUF, _includes=(main,), **arguments[_PIXBUF])
    except Exception:  # noqa: BLE001  any doubt about an entry: cairocffi parses its own declarations
        return None
    module = types.ModuleType("cairocffi.ffi", "cairo's declarations, kept by cardgen (cardgen.raster.cairo_bindings)")
    module.__dict__.update(ffi=main, ffi_pixbuf=pixbuf)  # the two names cairocffi imports from its ffi module
    return module
