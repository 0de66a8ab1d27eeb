"""Watch mode: rebuild the games an edit affects, shortly after each save, until stopped."""
from __future__ import annotations

import gc
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

from cardgen.core.errors import OutputBusy
from cardgen.core.ownership import wait_until_free
from cardgen.core.storage import run_after_rebuild

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver, ObservedWatch

T = TypeVar("T")
WATCHED_FOLDERS = ("data", "templates", "icons", "fonts", "layouts", "vendors")
_IGNORED_SUFFIXES = (".tmp", ".swp", ".swx", "~", ".part")
# How long the workspace must stay quiet after a write the file system does not say is finished (a plain
# "modified", from an observer that reports no closes, or a file still open for writing) before the rebuild starts: an
# editor saving several files, or a spreadsheet writing a temp file and renaming it, is one rebuild.
QUIET_SECONDS = 0.3
# After a write the file system says is finished (the file closed after writing, a save by rename, a deletion; on
# Linux inotify reports closes), the rebuild starts once this long passes without another event: enough to gather the
# events of one save (its write, close and rename come within a millisecond or two), not a timer to wait out.
SAVE_SECONDS = 0.025
# In a watch, the garbage collector's full passes wait for this many passes of its middle generation (Python's
# default: 10): a rebuild's garbage is collected once it is done (`_settled`), not in passes over the whole heap
# during it.
FULL_PASSES_AFTER = 1000
# In a watch, the youngest generation is collected once this many more objects were made than freed (a build of its
# own: `startup.YOUNG_OBJECTS`): an edit of 10,000 cards makes ~120,000 that live until it ends (its plan, record,
# hand-out), which 12 passes walked and moved on (~5-10 ms of each edit's CPU, measured), to be walked again by the
# collection after it (`_settled`). Its cyclic garbage, freed only by a pass, stays bounded by it meanwhile.
YOUNG_OBJECTS = 250_000
# How long a rebuild waits for another command (a print, a tts export, a clean) to let go of the output root
# before it gives up until the next save.
BUSY_SECONDS = 300.0


def affected_games(path: Path, root: Path, games: list[str]) -> set[str]:
    """Which of the watched games a changed file can affect (shared folders affect all of them)."""
    try:
        parts = path.resolve().relative_to(root.resolve()).parts
    except ValueError:
        return set()
    if not parts or parts[0] not in WATCHED_FOLDERS or path.name.startswith(".") or \
            path.name.endswith(_IGNORED_SUFFIXES) or "snapshots" in parts:
        return set()
    if parts[0] in ("data", "templates") and len(parts) > 2 and parts[1] in games:
        return {parts[1]}
    if parts[0] == "data" and len(parts) > 1 and parts[1] not in games and \
            (root / "data" / parts[1] / "game.yaml").is_file():
        return set()  # another game's data
    return set(games)  # shared: templates/, fonts, icons, deck definitions games include (data/common/)


def when_free(build: Callable[[], T], out_root: Path, say: Callable[[str], None],
              seconds: float = BUSY_SECONDS) -> T:
    """Run `build`; while another command holds the output root's lock, wait until it lets go (at most `seconds` in
    all, saying so once) and run it again. After that, OutputBusy: nothing was wrong with the save."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return build()
        except OutputBusy:
            if time.monotonic() >= deadline:
                raise OutputBusy(f"another cardgen command kept {out_root} busy for {seconds:.0f} s; save again "
                                 "to rebuild") from None
            say(f"{out_root} is busy with another cardgen command; rebuilding once it has finished")
            say = _quiet  # once per rebuild
            wait_until_free(out_root, deadline - time.monotonic())


def _quiet(text: str) -> None:
    """Say nothing."""


def watch_games(root: Path, games: list[str], rebuild: Callable[[list[str]], None], stop: threading.Event,
                debounce: float = QUIET_SECONDS, build_first: bool = False,
                warm: Callable[[list[str]], None] | None = None) -> None:
    """Call `rebuild(games)` for every burst of edits under the workspace until `stop` is set (and with
    `build_first`, once as soon as the workspace is watched: an edit saved during that build is seen too).
    `warm(games)` (`build.warm_up`) then loads what their next rebuild reads, unless a save came meanwhile: a save
    during it is rebuilt once it is done.

    A save the file system says is finished (a close after writing, a rename, a deletion) rebuilds once
    SAVE_SECONDS pass without another event; a write it says nothing more of (an observer without closes, a file
    kept open) waits until `debounce` seconds pass without one (an editor saving several files, a spreadsheet writing
    a temp file and renaming it: one rebuild). A source folder made while watching (`icons/` or `fonts/`, which a
    workspace from `cardgen init` lacks) is watched from then on.
    """
    from cardgen.load.data import remember_rows
    from cardgen.outputs import stage_modules, stage_names
    from cardgen.raster.pool import warm_up

    remember_rows()  # every build of this process but the first converts only the rows that changed
    events: queue.Queue[_Change] = queue.Queue()
    observer = _Observer(root, events)
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], YOUNG_OBJECTS), thresholds[1], FULL_PASSES_AFTER)
    try:
        if build_first:
            _settled(rebuild, list(games))
        sheets = _Sheets(root, games)
        warm_up(stage_modules(stage_names()))  # a rebuild draws an edit's card or two in this process
        if warm is not None and events.empty():  # the first save as fast as the later ones (its collection too)
            _settled(warm, list(games))
        while not stop.is_set():
            try:
                first = events.get(timeout=0.2)
            except queue.Empty:
                if changed := sheets.changed():
                    _settled(rebuild, sorted(changed))
                continue
            touched = _one_save(first, events, observer, debounce)
            todo = set().union(*(affected_games(p, root, games) for p in touched))
            if todo:
                _settled(rebuild, sorted(todo))
                sheets.look_for_new()  # an edit of game.yaml may name another URL
    finally:
        observer.stop()
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def _settled(rebuild: Callable[[list[str]], None], games: list[str]) -> None:
    """Rebuild the games, then (once it has said what it did) do the work it left (`storage.after_rebuild`: its
    staging folders deleted, a print file copied ahead), collect the rebuild's garbage and freeze what is left:
    the state kept for the next rebuild (records, rendered SVGs, converted rows, pieces of the outputs). A rebuild's
    collections then walk only what it makes itself, and (see FULL_PASSES_AFTER) none walks the whole heap: at
    10,000 cards, full passes over the kept state took ~1 s of every edit."""
    try:
        rebuild(games)
    finally:
        run_after_rebuild()
        gc.collect()
        gc.freeze()


def _one_save(first: _Change, events: queue.Queue[_Change], observer: _Observer, debounce: float) -> set[Path]:
    """The paths of one save, from its first event: gathered until SAVE_SECONDS pass without an event when every
    file written was finished (closed, renamed into place, deleted), else until `debounce` seconds do."""
    touched: set[Path] = set()
    writing: set[Path] = set()  # files written and not (yet) closed
    change = first
    while True:
        if change.changed:
            touched.add(observer.saw(change.path))
        if change.finished:
            writing.discard(change.path)
        else:
            writing.add(change.path)
        try:
            change = events.get(timeout=debounce if writing else SAVE_SECONDS)
        except queue.Empty:
            return touched


class _Sheets:
    """The URL sources of the watched games (`source: {url: ...}`), each looked at every `poll:` seconds: a game
    whose sheet changed is rebuilt (a look is a conditional request: an unchanged sheet costs a round trip)."""

    def __init__(self, root: Path, games: list[str]) -> None:
        self.root, self.games = root, games
        self.seen: dict[str, list[int]] = {}  # URL -> its stamp when last looked at
        self.due: dict[str, float] = {}  # URL -> when to look at it next
        self.readers: dict[str, set[str]] = {}  # URL -> the games reading it
        self.polls: dict[str, float] = {}  # URL -> seconds between two looks
        self.look_for_new()

    def look_for_new(self) -> None:
        """Note the URLs the games read now (a game whose manifest does not load reads none until it does)."""
        from cardgen.core.errors import CardgenError
        from cardgen.load.manifest import load_game
        from cardgen.load.sources import stamp

        self.readers = {}
        polls: dict[str, float] = {}
        for game in self.games:
            try:
                urls = load_game(self.root, game).urls()
            except (CardgenError, OSError):  # a broken manifest: its rebuild said what is wrong
                continue
            for url, seconds in urls.items():
                self.readers.setdefault(url, set()).add(game)
                polls[url] = min(seconds, polls.get(url, seconds))
        for url, seconds in polls.items():
            if url not in self.seen:  # what the build just read: the first look compares with it
                self.seen[url] = stamp(self.root, url)
            self.due[url] = min(self.due.get(url, float("inf")), time.monotonic() + seconds)
        self.polls = polls

    def changed(self) -> set[str]:
        """The games reading a URL that is due a look and changed since the last look."""
        from cardgen.load.sources import stamp

        changed: set[str] = set()
        for url, seconds in self.polls.items():
            if time.monotonic() < self.due[url]:
                continue
            now = stamp(self.root, url)
            if now != self.seen[url]:
                changed |= self.readers[url]
            self.seen[url], self.due[url] = now, time.monotonic() + seconds
        return changed


@dataclass(frozen=True)
class _Change:
    """A path the file system reported, whether it says the change is finished (a file closed after writing,
    renamed into place or away, deleted, or a folder made: its files report their own writes), and whether the
    event is a change itself: a close is not (a file opened for writing and closed unwritten is as it was; one that
    was written reported its writes)."""

    path: Path
    finished: bool
    changed: bool = True


# The events a change is finished by; "created" and "modified" are followed by a close where the system reports one.
_FINISHED = ("closed", "moved", "deleted")


class _Observer:
    """The file system observer of a workspace: each source folder (WATCHED_FOLDERS) with everything in it, and the
    workspace itself for a source folder made, or moved in, meanwhile."""

    def __init__(self, root: Path, events: queue.Queue[_Change]) -> None:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        self.root = root
        self.watches: dict[str, ObservedWatch] = {}

        def changed(event: FileSystemEvent) -> Path:
            return Path(str(getattr(event, "dest_path", "") or event.src_path))

        class Files(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.is_directory or event.event_type not in ("created", "modified", *_FINISHED):
                    return  # opened and closed unwritten: the build's own reads
                if event.event_type == "moved":  # the name it left is finished with too
                    events.put(_Change(Path(str(event.src_path)), True))
                kind = event.event_type
                events.put(_Change(changed(event), kind in _FINISHED, changed=kind != "closed"))

        class Folders(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("created", "moved") and event.is_directory and \
                        changed(event).name in WATCHED_FOLDERS:
                    events.put(_Change(changed(event), True))

        self.files = Files()
        self.observer: BaseObserver = Observer()
        for name in WATCHED_FOLDERS:
            if (root / name).is_dir():
                self._watch(name)
        self.observer.schedule(Folders(), str(root))  # not recursive: output/ is written into at every build
        self.observer.start()

    def _watch(self, name: str) -> None:
        """Watch a source folder (again: one deleted and made anew is another folder to the system)."""
        old = self.watches.pop(name, None)
        if old is not None:
            self.observer.unschedule(old)
        self.watches[name] = self.observer.schedule(self.files, str(self.root / name), recursive=True)

    def saw(self, path: Path) -> Path:
        """Note a changed path, watching it from now on when it is a source folder made meanwhile."""
        if path.parent == self.root and path.name in WATCHED_FOLDERS and path.is_dir():
            self._watch(path.name)
        return path

    def stop(self) -> None:
        """Stop observing."""
        self.observer.stop()
        self.observer.join()
