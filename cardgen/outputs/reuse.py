"""Reusing output files (PDFs, sheets) made earlier from the same inputs, via the shared cache."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Iterable

from cardgen.core.storage import Cache, file_digest, place_file


def inputs_key(inputs: Iterable[str | Path], maker: str) -> str:
    """A hash of an output's inputs (text parts as they are, files by their content) and of the code that makes it:
    the closure of the module `maker` (the caller's `__name__`; see `bundled.code_digest`)."""
    from cardgen.core.bundled import code_digest

    digest = hashlib.sha256(code_digest(maker).encode())
    texts = [file_digest(item) if isinstance(item, Path) else str(item) for item in inputs]
    if texts:  # each after a NUL, hashed at once (a TTS sheet's ~70 card hashes: not two updates each)
        digest.update(("\0" + "\0".join(texts)).encode())
    return digest.hexdigest()[:32]


def make_cached(out_root: Path, suffix: str, inputs: Iterable[str | Path], make: Callable[[Path], object],
                maker: str) -> Path:
    """The cached file that `make(path)` writes from `inputs` (made now unless it is there); its path. `maker` is
    the module whose code makes it (see `inputs_key`)."""
    key = inputs_key(inputs, maker)
    cache = Cache(out_root, "outputs", suffix)
    return cache.path(key) if cache.has(key) else cache.write(key, make)


def reuse_or_make(out_root: Path, target: Path, inputs: Iterable[str | Path], make: Callable[[Path], object],
                  maker: str) -> bool:
    """Put at `target` the file that `make(path)` writes from `inputs`; skip making it when cached.

    `out_root` is the output root whose cache holds it (`StageContext.out_root`: a stage's `out_dir` may be a folder
    elsewhere); `maker` the module whose code makes it (see `inputs_key`). Returns True when the file was made now,
    False when it was reused.
    """
    inputs = list(inputs)
    made = not Cache(out_root, "outputs", target.suffix).has(inputs_key(inputs, maker))
    place_file(make_cached(out_root, target.suffix, inputs, make, maker), target)
    return made
