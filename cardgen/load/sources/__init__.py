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
    kept: bool = False  # parsing costs more than reading it back: its table is kept in the user's cache (`_kept`)


# Suffix (lower case, with its dot) or URL scheme (with "://") -> its reader.
READERS: dict[str, Reader] = {
    ".csv": Reader("cardgen.load.sources.files:read_csv"),
    ".tsv": Reader("cardgen.load.sources.files:read_csv"),
    ".txt": Reader("cardgen.load.sources.files:read_csv"),
    ".yaml": Reader("cardgen.load.sources.files:read_yaml", kept=True),
    ".yml": Reader("cardgen.load.sources.files:read_yaml", kept=True),
    ".xlsx": Reader("cardgen.load.sources.files:read_xlsx", kept=True),
    ".json": Reader("cardgen.load.sources.json_rows:read_json"),
    ".ods": Reader("cardgen.load.sources.ods:read_ods", kept=True),
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
    reader = reader_for(path.suffix.lower(), shown_as)
    try:
        return _kept(reader, path, shown_as, source) if reader.kept else imported(reader.read)(path, shown_as, source)
    except OSError as exc:
        raise CardgenError(f"cannot read the file: {exc.strerror or exc}", file=shown_as) from None


KEPT_TABLES = "tables"  # the user cache's folder of kept tables


def _kept(reader: Reader, path: Path, shown_as: str, source: DataSource) -> Table:
    """A file's table as its reader made it from the same bytes before, kept in the user's cache (a sealed entry
    keyed by the file's digest, how it is read and the reading code), else read now and kept. A one-card edit of
    another file then neither imports PyYAML (~13 ms) or openpyxl nor parses this one. An entry that does not
    verify or unpickle is read again, never served; a file changed while it was read is not kept."""
    import hashlib
    import pickle

    from cardgen.core.bundled import code_digest
    from cardgen.core.storage import file_digest, note_read, user_store
    from cardgen.load.data import Table

    store, digest = user_store(KEPT_TABLES, ".pickle"), file_digest(path)
    about = (code_digest(__name__, reader.read.split(":")[0]), digest, shown_as, repr(source))
    key = hashlib.sha256(repr(about).encode()).hexdigest()[:32]
    data = store.read_bytes(key) if store is not None else None
    if data is not None:
        try:
            table = pickle.loads(data)  # noqa: S301  a sealed entry of the user's own cache, written by cardgen
        except Exception:  # noqa: BLE001  an entry another cardgen wrote: read again, never served
            table = None
        if isinstance(table, Table):
            note_read(path, digest)  # (the build's rows are those of these bytes; a reader notes what it reads)
            return table
    table = imported(reader.read)(path, shown_as, source)
    if store is not None and file_digest(path) == digest:
        store.put_bytes(key, pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
    return table


def stamp(root: Path, location: str) -> list[int]:
    """The freshness stamp of a source that is not a file (a URL), by its reader."""
    reader = reader_for(key_of(location), location)
    if reader.stamp is None:
        raise ValueError(f"{location} is a file: load/freshness.py stamps it")
    return imported(reader.stamp)(root, location)
