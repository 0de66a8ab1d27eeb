"""The data-source registry: one reader per file suffix or URL scheme, each with its own freshness stamp.

A deck's `source:` names a file (`cards.csv`) or a URL (`https://...`). The reader registered for its suffix (or its
scheme) turns it into a `Table` (`cardgen.load.data`): a header and rows as text, each row with its file and line so
that every later finding is located. Each reader also says how the no-change check knows that the source is
unchanged: a file by its size and time, a URL by what its server answered (ETag or Last-Modified).

Readers are named as text ("module:function") and imported only when a deck reads through them, so that the
no-change check, which runs before anything heavy is imported, can ask a reader for its stamp. A new source is one
module plus one line in `READERS`.
"""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from cardgen.core.errors import CardgenError
from cardgen.core.registry import imported

if TYPE_CHECKING:
    from pathlib import Path

    from cardgen.load.data import Table
    from cardgen.load.manifest import DataSource, Game

class Reader(NamedTuple):
    """One registered source.

    `read` is "module:function": for a suffix, `(path, shown_as, source) -> Table` reads a file; for a URL scheme,
    `(game, source) -> Table` fetches it (and reads its copy with the reader of its format). `stamp` is
    "module:function" `(root, location) -> list[int]`: what the no-change check compares with the build's; None
    for a file, which `load/freshness.py` stamps by its size and time.
    """

    read: str
    stamp: str | None = None


# Suffix (lower case, with its dot) or URL scheme (with "://") -> its reader.
READERS: dict[str, Reader] = {
    ".csv": Reader("cardgen.load.sources.files:read_csv"),
    ".tsv": Reader("cardgen.load.sources.files:read_csv"),
    ".txt": Reader("cardgen.load.sources.files:read_csv"),
    ".yaml": Reader("cardgen.load.sources.files:read_yaml"),
    ".yml": Reader("cardgen.load.sources.files:read_yaml"),
    ".xlsx": Reader("cardgen.load.sources.files:read_xlsx"),
    ".json": Reader("cardgen.load.sources.json_rows:read_json"),
    ".ods": Reader("cardgen.load.sources.ods:read_ods"),
    "https://": Reader("cardgen.load.sources.url:read_url", "cardgen.load.sources.url:url_stamp"),
    "http://": Reader("cardgen.load.sources.url:read_url", "cardgen.load.sources.url:url_stamp"),
}


def is_url(location: str) -> bool:
    """Whether a source's location is a URL (`scheme://...`) rather than a file."""
    return "://" in location


def key_of(location: str) -> str:
    """The registry key of a location: its scheme with "://" for a URL, else its file suffix in lower case."""
    if is_url(location):
        return location.split("://", 1)[0].lower() + "://"
    return PurePosixPath(location).suffix.lower()


def reader_for(key: str, shown_as: str) -> Reader:
    """The reader registered for a key (`key_of`); an error naming those there are when none is."""
    reader = READERS.get(key)
    if reader is None:
        kinds = ", ".join(known for known in READERS if not known.endswith("://"))
        schemes = ", ".join(known for known in READERS if known.endswith("://"))
        what = f"URL scheme '{key}'" if key.endswith("://") else f"data file type '{key}'"
        raise CardgenError(f"unknown {what}; expected a file of type {kinds} or a URL ({schemes})", file=shown_as,
                           rule="unknown-source")
    return reader


def read_source(game: Game, source: DataSource) -> Table:
    """A deck's source read as a `Table`, by the reader of its suffix or scheme; a CardgenError when it cannot be
    read at all."""
    from cardgen.load.sources.files import local_file

    if source.url is not None:
        return imported(reader_for(key_of(source.url), source.url).read)(game, source)
    path, shown_as = local_file(game, source)
    read = imported(reader_for(path.suffix.lower(), shown_as).read)
    try:
        return read(path, shown_as, source)
    except OSError as exc:
        raise CardgenError(f"cannot read the file: {exc.strerror or exc}", file=shown_as) from None


def stamp(root: Path, location: str) -> list[int]:
    """The freshness stamp of a source that is not a file (a URL), by its reader."""
    reader = reader_for(key_of(location), location)
    if reader.stamp is None:
        raise ValueError(f"{location} is a file: load/freshness.py stamps it")
    return imported(reader.stamp)(root, location)
