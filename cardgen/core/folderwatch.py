"""Which files of an output folder changed since a process last looked, told by the kernel, not by a `stat` of each.

A process that builds again (watch, serve) keeps an unchanged card's file where it is, taking it for what the
build's stamps say it is, and must still notice a file changed behind its back before it keeps it again. A `stat`
of every kept card file took ~30 ms of an edit at 10,000 cards. Instead the process watches each output folder it
keeps files of (inotify, Linux only: every folder in it) and looks only at the files the kernel named since it
last asked (`changed_since`): created, written, closed after writing, their mode, times or owner changed, moved or
deleted. The kernel tells these of a path in a watched folder as they happen; the queue is read when asked, so
nothing done before the question is missed.

What it cannot tell, it says (`changed_since` returns None, the caller looks at every file, and the folder is
watched anew): no inotify (not Linux, no instance or watch left), events lost (the kernel's queue overflowed), a
folder made, moved or deleted in it, or the folder no longer the one watched (moved, or swapped for a whole build).
Not told at all, as the kernel tells it to no watch of the folder: a write through another hard link to the file
made elsewhere while the process runs, and a write through a memory mapping (a `cardgen build` of its own looks at
every file: it notices those).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cardgen.core.storage import builds_again

WATCHED_AT_MOST = 8  # output folders watched by one process (a watch of a few games), the oldest closed beyond
NAMES_AT_MOST = 1 << 16  # changed files noted, not yet looked at: beyond, the watch says it cannot tell


class FolderWatch:
    """The paths (relative to the folder) of the files anything changed in a folder and its subfolders since the
    watch began (before the caller looked at the files it holds), until the caller says it looked at them again
    (`looked_at`: a build that fails after looking leaves them noted)."""

    def __init__(self, folder: Path) -> None:
        from inotify_simple import INotify, flags

        self.folder, self.identity = folder, _identity(folder)
        self.inotify: Any = INotify(nonblocking=True)
        self.flags: Any = flags
        self.paths: dict[int, str] = {}  # each watched folder (its path and a slash, "" for the folder) by its watch
        self.names: set[str] = set()
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

    def close(self) -> None:
        """Stop watching: the watch tells nothing more."""
        self.whole = False
        self.inotify.close()


def _identity(folder: Path) -> tuple[int, int] | None:
    """The device and inode of a folder (another folder moved to its path has others), None when it is not there."""
    try:
        stat = folder.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


_WATCHES: dict[Path, FolderWatch] = {}


def changed_since(folder: Path) -> set[str] | None:
    """In a process that builds again, the files of `folder` changed since the caller last looked at them (see
    `looked_at`); None when that is not known (the first call, or see `FolderWatch.changed`): the caller then looks
    at every file, as the watch is begun anew before this returns. Always None in a process that builds once."""
    if not builds_again():
        return None
    watch = _WATCHES.pop(folder, None)
    names = watch.changed() if watch is not None else None
    if names is None:
        try:
            watch = FolderWatch(folder)
        except (ImportError, OSError):  # not Linux, or no inotify instance left: every file is looked at
            return None
    assert watch is not None
    if watch.whole:
        _WATCHES[folder] = watch  # the latest last
        while len(_WATCHES) > WATCHED_AT_MOST:
            _WATCHES.pop(next(iter(_WATCHES))).close()
    return names


def looked_at(folder: Path, names: set[str] | None) -> None:
    """The caller of `changed_since` looked at the files it named (and the build is in place): they are no longer
    noted as changed (with None, nothing to do)."""
    watch = _WATCHES.get(folder)
    if watch is not None and names:
        watch.looked_at(names)
