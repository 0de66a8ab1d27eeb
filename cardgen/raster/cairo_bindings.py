"""cairo's C declarations for cairocffi, parsed once per machine instead of once per drawing process.

cairocffi parses cairo's C headers with pycparser each time it is imported: ~0.1-0.25 s of CPU in every
process that draws (each render worker of every build, before its first card). cffi can write parsed
declarations as an "out-of-line ABI" module (its `set_source(name, None)` and `emit_python_code`). cardgen
keeps the arguments of the two FFI objects that `cairocffi/ffi.py` makes in the user's cache folder (a sealed
entry, keyed by the text of cairocffi's declarations and the versions of cffi's backend and Python), and
puts them in place of `cairocffi.ffi` before cairocffi is imported. The entry is read as Python literals,
never run as code. Anything unexpected (xcffib installed, another cairocffi layout, a damaged entry) means
cairocffi is imported as it is, and a missing entry is made from cairocffi's own declarations, by one process at
a time: the render workers of a first build set up together, and one parses while the others wait for its entry.
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

if TYPE_CHECKING:
    from cardgen.core.storage import Cache

_MAIN, _PIXBUF = "cardgen_cairo_ffi", "cardgen_cairo_pixbuf_ffi"  # the names cffi gives the two FFI objects


def import_cairocffi() -> None:
    """Import cairocffi, with its declarations from the user's cache when they are kept there (and kept
    there when they are not). Does nothing once cairocffi is imported."""
    if "cairocffi" in sys.modules:
        return
    from cardgen.core.storage import user_store

    key = _key()
    cache = user_store("cairo-declarations", ".txt")
    if key is None or cache is None:
        import cairocffi  # noqa: F401  as it is
        return
    kept = _read(cache.read_bytes(key))
    if kept is None:
        # None kept (a first run): one process parses and keeps them, and the others (a build's render workers
        # all set up at once) wait for its entry rather than each parse them too, on the cores the build needs.
        with _one_at_a_time(cache.path(key, ".lock")):
            kept = _read(cache.read_bytes(key))
            if kept is None:
                _import_and_keep(cache, key)
                return
    sys.modules["cairocffi.ffi"] = kept
    try:
        import cairocffi  # noqa: F401
    except Exception:  # noqa: BLE001  kept declarations cairocffi could not use: import it as it is
        for name in [n for n in sys.modules if n == "cairocffi" or n.startswith("cairocffi.")]:
            del sys.modules[name]
        _import_and_keep(cache, key)


def _import_and_keep(cache: Cache, key: str) -> None:
    """Import cairocffi as it is (parsing its declarations), and keep what it parsed under `key`."""
    import cairocffi  # noqa: F401

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


def _key() -> str | None:
    """What the kept declarations depend on: cardgen's code, cairocffi's declaring files, cffi's backend, Python;
    None when cairocffi adds declarations of another package (xcffib) or is laid out otherwise."""
    if importlib.util.find_spec("xcffib") is not None:
        return None
    spec = importlib.util.find_spec("cairocffi")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0])
    try:
        import _cffi_backend

        texts = [(folder / name).read_bytes() for name in ("ffi.py", "constants.py")]
        from cardgen.core.bundled import code_digest

        versions = (code_digest(__name__), _cffi_backend.__version__, sys.version)
    except (OSError, ImportError, AttributeError):
        return None
    digest = hashlib.sha256(repr(versions).encode())
    for text in texts:
        digest.update(hashlib.sha256(text).digest())
    return digest.hexdigest()[:32]


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
