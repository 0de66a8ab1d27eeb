"""Which entries of a cache folder this process verified and no one has touched since, told by the kernel (Linux
inotify), so that a process that builds again (watch, serve) need not look at each of a large game's card images
again for an edit: at 10,000 cards a `stat` each (`storage.verify`) cost ~45-65 ms of every edit.

A folder's watch notes every entry created, written, changed in its attributes (a seal), renamed or deleted in it;
an entry noted so is no longer trusted and is verified again (`storage.verify`), as is every entry once the kernel's
queue of notes overflowed or a folder went. Only an entry verified after its folder was watched is trusted. Not told:
a write through a hard link made elsewhere, or through a memory mapping (cardgen makes neither of its cache entries).
Without inotify (another system, no watches left), nothing is trusted: every entry is verified as before.
"""
from __future__ import annotations

import ctypes
import errno
import os
import struct
from pathlib import Path
from typing import Iterable

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_UNMOUNT, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_IN_ONLYDIR, _IN_ISDIR = 0x01000000, 0x40000000
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
         | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
_LOST = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_Q_OVERFLOW | _IN_IGNORED  # every trust ends
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows

WATCHES_AT_MOST = 4  # cache folders watched at once by a process (inotify instances are few: 128 a user)


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc if hasattr(libc, "inotify_init1") and hasattr(libc, "inotify_add_watch") else None
    except OSError:
        return None


class EntryWatch:
    """The entries of a cache folder (`<folder>/<key[:2]>/<entry>`, see `storage.Cache`) this process verified and
    that nothing has touched since (see the module's notes)."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.trusted: set[str] = set()  # paths of entries verified after their folder was watched
        self.watched: dict[int, str] = {}  # watch descriptor -> folder
        self.folders: set[str] = set()  # the folders watched
        self.fd = -1
        libc = _libc()
        if libc is not None:
            self._libc = libc
            self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)

    def close(self) -> None:
        """Stop watching (every entry untrusted)."""
        if self.fd >= 0:
            os.close(self.fd)
        self.fd, self.trusted, self.watched, self.folders = -1, set(), {}, set()

    def untouched(self, paths: Iterable[str]) -> list[bool]:
        """For each entry path, whether it was verified by this process (`trust`) and nothing has touched it since."""
        self._drain()
        return list(map(self.trusted.__contains__, paths))

    def watch(self, path: str) -> bool:
        """Watch the folder of an entry (before it is verified: a change after that is told); False when it cannot
        be watched (its entry is then never trusted)."""
        folder = os.path.dirname(path)
        if folder in self.folders:
            return True
        if self.fd < 0:
            return False
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK)
        if wd < 0:
            return False
        self.watched[wd] = folder
        self.folders.add(folder)
        return True

    def trust(self, paths: Iterable[str]) -> None:
        """Note entries verified after `watch` said their folders are watched."""
        self.trusted.update(paths)

    def _drain(self) -> None:
        """Read what the kernel told since the last read: each entry touched is no longer trusted."""
        while self.fd >= 0:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError as exc:  # the descriptor is gone: trust nothing from now on
                if exc.errno != errno.EINTR:
                    self.close()
                continue
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size:offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & _LOST or wd not in self.watched:
                    self._lost(wd)
                elif name and not mask & _IN_ISDIR:
                    self.trusted.discard(f"{self.watched[wd]}/{os.fsdecode(name)}")

    def _lost(self, wd: int) -> None:
        """A folder no longer watched, or notes lost: nothing is trusted, the folder watched again when next asked."""
        self.trusted.clear()
        self.folders.discard(self.watched.pop(wd, ""))


_WATCHES: dict[str, EntryWatch] = {}


def entry_watch(folder: Path) -> EntryWatch:
    """The watch of a cache folder in this process (made once; the oldest closed beyond WATCHES_AT_MOST)."""
    key = str(folder)
    watch = _WATCHES.pop(key, None) or EntryWatch(folder)
    _WATCHES[key] = watch
    while len(_WATCHES) > WATCHES_AT_MOST:
        _WATCHES.pop(next(iter(_WATCHES))).close()
    return watch
