"""Icons: the bundled game-icons.net set and a workspace's `icons/**/*.svg`, by name or a game's alias.

The bundled set (about 4,000 icons) stays one zip file inside the package; an icon is read from it
by name when a card uses it. A workspace icon of the same name takes precedence.
"""
from __future__ import annotations

import hashlib
import os
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cardgen.core import bundled
from cardgen.core.errors import CardgenError, relative, saved_meanwhile
from cardgen.core.storage import content_stamp, note_read, user_store
from cardgen.load.svgart import icon_body, read_art

_MAX_ICON_BYTES = 1_000_000
_DECLARED_ENCODING = re.compile(rb"\s*<\?xml[^>]*\sencoding\s*=")


@dataclass(frozen=True)
class Icon:
    """An icon's drawing: its viewBox and the SVG markup inside its root element."""

    name: str
    path: Path
    viewbox: tuple[float, float, float, float]
    body: str
    digest: str = ""  # a workspace icon's: the SHA-256 of the bytes it was parsed from (see `IconLibrary.get`)


def _parse_svg(text: str | bytes, name: str, path: Path, shown_as: str, digest: str = "") -> Icon:
    art = read_art(text, shown_as)
    prefix = f"icon-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}-"  # its classes' prefix too: no dot, no space
    return Icon(name, path, art.viewbox, icon_body(art, prefix), digest)


@lru_cache(maxsize=512)
def _parse_icon(path: Path, stamp: tuple[int, ...], shown_as: str) -> Icon:
    """A workspace icon, parsed once while its file is as `stamp` (`storage.content_stamp`: by modification time only,
    a same-size save in the same tick of the file clock kept the icon it replaced in a watch)."""
    if path.stat().st_size > _MAX_ICON_BYTES:
        raise CardgenError(f"the icon is larger than {_MAX_ICON_BYTES // 1000} kB", file=shown_as)
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        if not _DECLARED_ENCODING.match(data):  # as older Illustrator writes: encoding="iso-8859-1"
            raise CardgenError("the icon is not UTF-8 text and does not declare its encoding (<?xml ... "
                               "encoding=...?>); save it as UTF-8", file=shown_as) from None
    return _parse_svg(data, path.stem, path, shown_as, hashlib.sha256(data).hexdigest())


_INDEX_ROW = struct.Struct("<5Q")  # header offset, compressed size, size, method, CRC
Member = tuple[int, int, int, int, int]


def _index_to_bytes(index: dict[str, Member]) -> bytes:
    """A zip index as kept: the count, one row of five numbers per icon, then the icons' names, one per line.

    Not JSON: parsing 4,000 names and rows from JSON took ~7 ms of every build that checks an icon name."""
    rows = b"".join(_INDEX_ROW.pack(*member) for member in index.values())
    return struct.pack("<I", len(index)) + rows + "\n".join(index).encode("utf-8")


def _index_from_bytes(data: bytes | None) -> dict[str, Member] | None:
    """A kept zip index as `BundledIcons` uses it, or None when it is not one this cardgen writes."""
    if data is None or len(data) < 4:
        return None
    (count,) = struct.unpack_from("<I", data)
    end = 4 + count * _INDEX_ROW.size
    try:
        names = data[end:].decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    if len(data) < end or len(names) != count:
        return None
    return dict(zip(names, _INDEX_ROW.iter_unpack(memoryview(data)[4:end])))


def index_file(path: Path) -> Path:
    """Where the index of a bundled zip of icons ships beside it (`tools/build_icon_bundle.py` writes it)."""
    return path.with_suffix(".index")


def shipped_index(path: Path) -> dict[str, Member] | None:
    """The index shipped beside a zip of icons when it is the index of that zip as it is (the zip's size, kept in
    its first 8 bytes, is the file's); else None. An icon read through it is still checked (CRC and size)."""
    try:
        data = index_file(path).read_bytes()
        size = path.stat().st_size
    except OSError:
        return None
    if len(data) < 8 or struct.unpack_from("<Q", data)[0] != size:
        return None
    return _index_from_bytes(data[8:])


def index_bytes(path: Path) -> bytes:
    """The index of a zip of icons as it ships beside it (see `shipped_index`), read from the zip now."""
    with zipfile.ZipFile(path) as bundle:
        index = {info.filename[:-4]: (info.header_offset, info.compress_size, info.file_size, info.compress_type,
                                      info.CRC) for info in bundle.infolist() if info.filename.endswith(".svg")}
    return struct.pack("<Q", path.stat().st_size) + _index_to_bytes(index)


class BundledIcons:
    """The game-icons.net set shipped inside cardgen: one zip, read one icon at a time.

    Opening the zip reads its directory of ~4,000 entries (15-30 ms, a fifth of validating a one-card edit),
    so where each icon lies in the file is kept in a sealed index in the user's cache folder, keyed by the
    zip's path, size and modification time: an icon is then read from its own bytes, checked against the
    zip's CRC and size. A missing or damaged index, or a member that does not check, falls back to the zip.
    The bundled set's index ships beside it (`shipped_index`): a first build needs neither.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip: tuple[int, zipfile.ZipFile] | None = None
        self._index: dict[str, Member] | None = None
        self._names: frozenset[str] | None = None
        self._icons: dict[str, Icon] = {}

    def _open(self) -> zipfile.ZipFile:
        # One handle per process: a handle shared with a forked worker would share its file offset.
        if self._zip is None or self._zip[0] != os.getpid():
            self._zip = (os.getpid(), zipfile.ZipFile(self.path))
        return self._zip[1]

    def _members(self) -> dict[str, Member]:
        """Where each icon lies in the zip: (header offset, compressed size, size, method, CRC), by icon name."""
        if self._index is None:
            self._index = shipped_index(self.path)
        if self._index is None:
            stat = self.path.stat()
            parts = (bundled.code_digest(__name__), self.path.resolve(), stat.st_size, stat.st_mtime_ns)
            key = hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:32]
            cache = user_store("icon-index", ".bin")
            self._index = _index_from_bytes(cache.read_bytes(key) if cache is not None else None)
            if not self._index:
                self._index = {info.filename[:-4]: (info.header_offset, info.compress_size, info.file_size,
                                                    info.compress_type, info.CRC)
                               for info in self._open().infolist() if info.filename.endswith(".svg")}
                if cache is not None:
                    cache.put_bytes(key, _index_to_bytes(self._index))
        return self._index

    def _read(self, name: str) -> bytes:
        """An icon's bytes, at its place in the index when they check (CRC and size), else through the zip."""
        offset, compressed, size, method, crc = self._members()[name]
        member = f"{name}.svg"
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                head = handle.read(30)
                if head[:4] == b"PK\x03\x04" and method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    name_length, extra_length = struct.unpack("<HH", head[26:30])
                    if handle.read(name_length) == member.encode():
                        handle.seek(extra_length, os.SEEK_CUR)
                        data = handle.read(compressed)
                        if method == zipfile.ZIP_DEFLATED:
                            data = zlib.decompress(data, -15)
                        if len(data) == size and zlib.crc32(data) == crc:
                            return data
        except (OSError, zlib.error, struct.error):
            pass
        return self._open().read(member)

    @property
    def names(self) -> frozenset[str]:
        """Every icon name in the bundle."""
        if self._names is None:
            self._names = frozenset(self._members())
        return self._names

    def get(self, name: str) -> Icon:
        """One bundled icon by name (KeyError when there is none)."""
        if name not in self._icons:
            if name not in self.names:
                raise KeyError(name)
            text = self._read(name).decode("utf-8")
            self._icons[name] = _parse_svg(text, name, self.path, f"game-icons.zip:{name}.svg")
        return self._icons[name]


_BUNDLES: dict[Path, BundledIcons] = {}


def bundled_icons() -> BundledIcons:
    """The bundled icon set (opened once per process)."""
    path = bundled.ICON_BUNDLE
    if path not in _BUNDLES:
        _BUNDLES[path] = BundledIcons(path)
    return _BUNDLES[path]


class IconLibrary:
    """Icons of a workspace (`icons/**/*.svg`) over the bundled set, plus a game's aliases (`scrap: hexagonal-nut`)."""

    def __init__(self, root: Path, aliases: dict[str, str] | None = None) -> None:
        self.root = root
        self.aliases = aliases or {}
        self.bundled = bundled_icons()
        folder = root / "icons"
        self.files = {p.stem: p for p in sorted(folder.rglob("*.svg")) if p.is_file()} if folder.is_dir() else {}
        # each file by the digest of the content the renders are keyed by (`SVGRenderer.keyed`): one parsed from
        # other bytes is not drawn (a save since the key was made would be kept under the old content's key)
        self.keyed: dict[Path, str] = {}

    def has(self, name: str) -> bool:
        """Whether an icon file of this name exists (in the workspace or bundled; aliases not followed)."""
        name = self._named(name)
        return name in self.files or name in self.bundled.names

    def _named(self, name: str) -> str:
        """A name as its file is named: game-icons.net's `author/name` (`lorc/punch`, as the site and Squib's
        game_icons gem write it) is the icon `name`, unless a workspace icon is named so itself."""
        if "/" in name and name not in self.files and name not in self.bundled.names:
            return name.rsplit("/", 1)[1]
        return name

    def names(self) -> list[str]:
        """Every name an icon can be asked for."""
        return sorted(set(self.files) | set(self.aliases) | self.bundled.names)

    def suggest(self, name: str) -> str:
        """A "did you mean" for an unknown name, or nothing."""
        import difflib

        close = difflib.get_close_matches(name, self.names(), n=1)
        return f"; did you mean '{close[0]}'?" if close else ""

    def get(self, name: str) -> Icon:
        """The icon for a name or alias; a clear error when there is none."""
        target = self._named(self.aliases.get(name, name))
        path = self.files.get(target)
        if path is not None:
            if not path.resolve().is_relative_to(self.root.resolve()):
                raise CardgenError(f"the icon is a link to {path.resolve()}, outside the project; copy the file "
                                   "itself into icons/", file=relative(path, self.root))
            icon = _parse_icon(path, content_stamp(path.stat()), relative(path, self.root))
            if self.keyed.get(path, icon.digest) != icon.digest:
                raise CardgenError(saved_meanwhile(f"icon '{name}'"), file=relative(path, self.root))
            note_read(path, icon.digest)  # what a card drew (a save since its parse in this process: another digest)
            return icon
        if target in self.bundled.names:
            return self.bundled.get(target)
        raise CardgenError(f"unknown icon '{name}'{self.suggest(name)} (`cardgen icons search WORD` searches "
                           f"the {len(self.bundled.names):,} bundled game-icons.net icons and icons/)")

    def is_bundled(self, name: str) -> bool:
        """Whether a name or alias is an icon of the bundled set that no workspace file takes the place of: cardgen's
        own, each a 512 x 512 drawing (tests/test_bundled.py checks every one), so validation need not read it."""
        target = self._named(self.aliases.get(name, name))
        return target not in self.files and target in self.bundled.names

    def search(self, words: list[str]) -> list[str]:
        """Names (workspace and bundled, not aliases) holding every one of the words."""
        wanted = [w.lower() for w in words]
        return sorted(n for n in set(self.files) | self.bundled.names if all(w in n.lower() for w in wanted))
