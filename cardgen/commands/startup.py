"""What cardgen does to its own process: a patch at start-up (pydantic's plugin loader), a fast exit, and the garbage
collector of a build (`settled_imports`).

`cli.py` imports this module before any command runs, so the patch is in place before pydantic is imported.
"""
from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager
from typing import Iterator

# pydantic looks for plugins by scanning every installed package's metadata the first time a model is built
# (~20 ms of every build); cardgen uses none. PYDANTIC_DISABLE_PLUGINS set to an empty value loads them.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
PLUGINS_OFF = ("__all__", "1", "true")  # the values with which pydantic's plugin loader loads none


def no_plugin_loader() -> None:
    """With plugins off, stand in for pydantic's plugin loader (`pydantic.plugin._loader`) with a module that
    finds none, as pydantic's does then: importing pydantic's imports importlib.metadata (10-20 ms of every
    command that builds a model) only to look at PYDANTIC_DISABLE_PLUGINS and return nothing. Nothing is done
    when plugins are on, or when pydantic's loader was imported already."""
    name = "pydantic.plugin._loader"
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in PLUGINS_OFF or name in sys.modules:
        return
    import types

    loader = types.ModuleType(name, "cardgen's stand-in for pydantic's plugin loader, while plugins are off.")
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules[name] = loader


no_plugin_loader()


def exit_now(end: SystemExit) -> None:
    """End the process as `end` asks, leaving the freeing of its objects to the system (see `cli.run`)."""
    import atexit
    import threading

    multiprocessing = sys.modules.get("multiprocessing")
    if threading.active_count() > 1 or (multiprocessing is not None and multiprocessing.active_children()):
        raise end
    code = end.code
    if not isinstance(code, int):  # sys.exit's rule: None is success, anything else is printed and fails
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: Python's own exit reports it
        raise end from None
    os._exit(code)


# The collector's youngest generation is collected once this many more objects were made than freed (Python's
# default: 700). A build makes millions of short-lived objects that reference counting frees, and each pass found
# little: a cold build of 300 cards spent 78 ms of its process's CPU in 191 passes (one full), 19 ms in 11 with
# 10,000, at the same peak memory (measured).
YOUNG_OBJECTS = 10_000


@contextmanager
def settled_imports() -> Iterator[None]:
    """Import in the block with the garbage collector off, then freeze what was made (`gc.freeze`), and let the
    collector's youngest generation grow to `YOUNG_OBJECTS` before its passes.

    Importing the pipeline makes ~57,000 objects the collector tracks, all alive until the process ends: its passes
    during the imports found nothing to free (~10-13 ms of a one-card edit's CPU, measured), and every later pass
    of the oldest generation would walk them again. A long-running process (watch, serve) freezes after each of
    its rebuilds instead (`build.watch`)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(max(YOUNG_OBJECTS, gc.get_threshold()[0]), *gc.get_threshold()[1:])
        if enabled:
            gc.enable()
