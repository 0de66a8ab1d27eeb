"""Ctrl-C, kept even when Python loses it.

Python turns SIGINT into a KeyboardInterrupt raised in the main thread. One that comes while the main thread runs a
weakref callback (an import's lock let go while another thread imports: output stages import beside the drawing) is
printed as "Exception ignored" and lost: the build then went on, swapped its outputs in and exited 0 (seen in about
one run in ten of the Ctrl-C test). `notice_interrupts` installs a handler that also notes each Ctrl-C, and a build
checks the note (`check`) before it swaps its outputs in.
"""
from __future__ import annotations

import signal
import sys
import threading
from typing import Any, Callable

_noted = threading.Event()


def _on_sigint(signum: int, frame: Any) -> None:
    _noted.set()
    raise KeyboardInterrupt


def _quiet_when_noted(hook: Callable[[Any], object]) -> Callable[[Any], None]:
    """An unraisable-exception hook that says nothing of a noted Ctrl-C (`check` raises it again) and passes any
    other exception on to `hook`."""
    def quiet(unraisable: Any) -> None:
        if not (unraisable.exc_type is KeyboardInterrupt and _noted.is_set()):
            hook(unraisable)

    return quiet


def notice_interrupts() -> None:
    """Note every Ctrl-C from now on (forgetting any before); only from the main thread, where Python's own handler
    or this one is set (a handler of the program running cardgen is left alone)."""
    _noted.clear()
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
        sys.unraisablehook = _quiet_when_noted(sys.unraisablehook)


def noted() -> bool:
    """Whether a Ctrl-C came since `notice_interrupts` (an error raised after it is its consequence: see `cli`)."""
    return _noted.is_set()


def check() -> None:
    """Raise KeyboardInterrupt when a Ctrl-C came since `notice_interrupts`, even one Python lost."""
    if _noted.is_set():
        raise KeyboardInterrupt
