"""Which files of a folder changed since a process last looked, told by the kernel, not by a `stat` of each.

A process that builds again (watch, serve) keeps what its last build made and must still notice a file changed
behind its back before it takes it again: a kept card file of an output folder (a `stat` of each took ~30 ms of an
edit at 10,000 cards) or a card image of the PNG cache (`storage.verify`, ~45-65 ms). Instead the process watches
the folder (inotify, Linux only: every folder in it) and looks only at the files the kernel named since it last
asked (`changed_since`): created, written, closed after writing, their mode, times or owner changed (a cache
entry's seal), moved or deleted. The kernel tells these of a path in a watched folder as they happen; the queue is
read when asked, so nothing done before the question is missed. A cache's entries are trusted on top of that
(`entry_trust`): an entry verified after its folder was watched, until the kernel names it.

What it cannot tell, it says (`changed_since` returns None, the caller looks at every file and trusts none, and the
folder is watched anew): no inotify (not Linux, no instance or watch left), events lost (the kernel's queue
overflowed), a folder moved or deleted in it, or the folder no longer the one watched (moved, or swapped for a
whole build). Not told at all, as the kernel tells it to no watch of the folder: a write through another hard link
to the file made elsewhere while the process runs, and a write through a memory mapping (cardgen makes neither; a
`cardgen build` of its own looks at every file: it notices those). A process that builds once watches nothing.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from cardgen.core.storage import builds_again

WATCHED_AT_MOST = 8  # folders watched by one process (output and cache folders of a few games), the oldest closed
NAMES_AT_MOST = 1 << 16  # changed files noted, not yet looked at: beyond, the watch says it cannot tell


class FolderWatch:
    """The paths (relative to the folder) of the files anything changed in a folder and its subfolders since the
    watch began (before the caller looked at the files it holds), until the caller says it looked at them again
    (`looked_at`: a build that fails after looking leaves them noted); and the files trusted on top of that
    (`trust`, `untouched`)."""

    def __init__(self, folder: Path) -> None:
        from inotify_simple import INotify, flags

        self.folder, self.identity = folder, _identity(folder)
        self.inotify: Any = INotify(nonblocking=True)
        self.flags: Any = flags
        self.paths: dict[int, str] = {}  # each watched folder (its path and a slash, "" for the folder) by its watch
        self.names: set[str] = set()
        self.trusted: set[str] = set()  # paths (as text) of files trusted since the watch began (see `trust`)
        self.whole = self.identity is not None  # False once the watch cannot tell every change
        try:
            self._watch(folder, note=False)
        except OSError:  # no watch left (fs.inotify.max_user_watches)
            self.close()

    def _watch(self, folder: Path, note: bool = True) -> None:
        """Watch a folder and its subfolders; with `note`, a folder made since the watch began: its files are noted as
        changed (made or written before it was watched)."""
        flags = self.flags
        mask = (flags.CREATE | flags.MODIFY | flags.CLOSE_WRITE | flags.ATTRIB | flags.MOVED_FROM | flags.MOVED_TO
                | flags.DELETE | flags.DELETE_SELF | flags.MOVE_SELF)
        for path, _, files in os.walk(folder):
            relative = os.path.relpath(path, self.folder)
            where = "" if relative == "." else relative + "/"
            self.paths[self.inotify.add_watch(path, mask)] = where
            if note:
                self.names.update(where + name for name in files)

    def changed(self) -> set[str] | None:
        """The files events named since the watch began, but those looked at since; None when it cannot tell."""
        if not self.whole:
            return None
        try:
            for event in self.inotify.read(timeout=0):
                if not self._noted(event):
                    self.close()
                    return None
        except OSError:  # (a folder made meanwhile deleted again, or no watch left)
            self.close()
            return None
        if _identity(self.folder) != self.identity or len(self.names) > NAMES_AT_MOST:
            self.close()
            return None
        return set(self.names)

    def _noted(self, event: Any) -> bool:
        """Note what an event says changed; False when the watch can no longer tell (events lost, the folder or one
        of its folders moved, the folder deleted)."""
        flags, where = self.flags, self.paths.get(event.wd)
        if where is None or event.mask & (flags.Q_OVERFLOW | flags.MOVE_SELF | flags.UNMOUNT):
            return False
        if event.mask & (flags.DELETE_SELF | flags.IGNORED):  # a folder deleted (its files' events came before)
            self.paths.pop(event.wd) if event.mask & flags.IGNORED else None
            return where != ""
        if not event.mask & flags.ISDIR:
            self.names.add(where + event.name)
        elif event.mask & flags.MOVED_FROM:  # a folder moved elsewhere: its watch would name its files wrongly
            return False
        elif event.mask & (flags.CREATE | flags.MOVED_TO):  # (an edit's gallery makes previous/ and deletes it)
            self._watch(self.folder / (where + event.name))
        return True

    def looked_at(self, names: set[str]) -> None:
        """The caller has looked at these files (as `changed` gave them): a later change of one is an event anew."""
        self.names -= names

    def untouched(self, paths: Iterable[str]) -> list[bool]:
        """For each file's path (as text, in the folder), whether it was trusted (`trust`) and nothing touched it
        since, as far as `entry_trust` last asked the kernel."""
        return list(map(self.trusted.__contains__, paths))

    def trust(self, paths: Iterable[str]) -> None:
        """Trust files (paths as text, in the folder) looked at since `entry_trust` gave this watch: the folder was
        watched before, so a change after they were looked at is told."""
        if self.whole:
            self.trusted.update(paths)

    def close(self) -> None:
        """Stop watching: the watch tells nothing more, and trusts nothing."""
        self.whole = False
        self.trusted = set()
        self.inotify.close()


def _identity(folder: Path) -> tuple[int, int] | None:
    """The device and inode of a folder (another folder moved to its path has others), None when it is not there."""
    try:
        stat = folder.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


_WATCHES: dict[Path, FolderWatch] = {}


def _watch_of(folder: Path) -> tuple[FolderWatch | None, set[str] | None]:
    """The watch of `folder` in this process (begun anew when there is none or it cannot tell; None without
    inotify) and the files it named since the caller last looked (None when not known)."""
    watch = _WATCHES.pop(folder, None)
    names = watch.changed() if watch is not None else None
    if names is None:
        try:
            watch = FolderWatch(folder)
        except (ImportError, OSError):  # not Linux, or no inotify instance left: every file is looked at
            return None, None
    assert watch is not None
    if not watch.whole:
        return None, None
    _WATCHES[folder] = watch  # the latest last
    while len(_WATCHES) > WATCHED_AT_MOST:
        _WATCHES.pop(next(iter(_WATCHES))).close()
    return watch, names


def changed_since(folder: Path) -> set[str] | None:
    """In a process that builds again, the files of `folder` changed since the caller last looked at them (see
    `looked_at`); None when that is not known (the first call, or see `FolderWatch.changed`): the caller then looks
    at every file, as the watch is begun anew before this returns. Always None in a process that builds once."""
    return _watch_of(folder)[1] if builds_again() else None


def looked_at(folder: Path, names: set[str] | None) -> None:
    """The caller of `changed_since` looked at the files it named (and the build is in place): they are no longer
    noted as changed (with None, nothing to do)."""
    watch = _WATCHES.get(folder)
    if watch is not None and names:
        watch.looked_at(names)


def entry_trust(folder: Path) -> FolderWatch | None:
    """In a process that builds again, the watch of a cache folder (`storage.Cache`) with its trusted entries less
    those the kernel named since (all of them when it cannot tell): take those `untouched`, look at the others and
    `trust` them. None in a process that builds once, or without inotify: every entry is looked at."""
    if not builds_again():
        return None
    watch, names = _watch_of(folder)
    if watch is not None and names:
        watch.trusted.difference_update(f"{folder}/{name}" for name in names)
        watch.looked_at(names)
    return watch
