"""Reusing output files (PDFs, sheets) made earlier from the same inputs, via the shared cache."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Iterable

from cardgen.core.storage import Cache, file_digest, place_file


def inputs_key(inputs: Iterable[str | Path]) -> str:
    """A hash of an output's inputs (text parts as they are, files by their content) and of cardgen's code."""
    from cardgen.core.bundled import code_digest

    digest = hashlib.sha256(code_digest().encode())
    for item in inputs:
        digest.update(b"\0")
        digest.update(file_digest(item).encode() if isinstance(item, Path) else str(item).encode())
    return digest.hexdigest()[:32]


def make_cached(out_root: Path, suffix: str, inputs: Iterable[str | Path], make: Callable[[Path], object]) -> Path:
    """The cached file that `make(path)` writes from `inputs` (made now unless it is there); its path."""
    key = inputs_key(inputs)
    cache = Cache(out_root, "outputs", suffix)
    return cache.path(key) if cache.has(key) else cache.write(key, make)


def reuse_or_make(out_dir: Path, target: Path, inputs: Iterable[str | Path], make: Callable[[Path], object]) -> bool:
    """Put at `target` the file that `make(path)` writes from `inputs`; skip making it when cached.

    `out_dir` is the game's output folder (the cache lives beside it). Returns True when the file
    was made now, False when it was reused.
    """
    made = not Cache(out_dir.parent, "outputs", target.suffix).has(inputs_key(inputs))
    place_file(make_cached(out_dir.parent, target.suffix, inputs, make), target)
    return made
