"""Watch mode: rebuild the games an edit affects, shortly after each save, until stopped."""
from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Callable

WATCHED_FOLDERS = ("data", "templates", "icons", "fonts", "layouts")
_IGNORED_SUFFIXES = (".tmp", ".swp", ".swx", "~", ".part")
# How long the workspace must stay quiet after a save before the rebuild starts: an editor saving several files,
# or a spreadsheet writing a temp file and renaming it, is one rebuild.
QUIET_SECONDS = 0.3


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


def watch_games(root: Path, games: list[str], rebuild: Callable[[list[str]], None], stop: threading.Event,
                debounce: float = QUIET_SECONDS) -> None:
    """Call `rebuild(games)` for every burst of edits under the workspace until `stop` is set.

    Edits that arrive within `debounce` seconds of each other (an editor saving several files,
    a spreadsheet writing a temp file and renaming it) are handled as one rebuild.
    """
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    from cardgen.outputs import stage_modules, stage_names
    from cardgen.render import warm_up

    events: queue.Queue[Path] = queue.Queue()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.event_type in ("created", "modified", "moved", "deleted") and not event.is_directory:
                events.put(Path(str(getattr(event, "dest_path", "") or event.src_path)))

    observer = Observer()
    for folder in WATCHED_FOLDERS:
        if (root / folder).is_dir():
            observer.schedule(Handler(), str(root / folder), recursive=True)
    observer.start()
    try:
        warm_up(stage_modules(stage_names()))  # a rebuild draws an edit's card or two in this process
        while not stop.is_set():
            try:
                first = events.get(timeout=0.2)
            except queue.Empty:
                continue
            touched = {first}
            while True:
                try:
                    touched.add(events.get(timeout=debounce))
                except queue.Empty:
                    break
            todo = set().union(*(affected_games(p, root, games) for p in touched))
            if todo:
                rebuild(sorted(todo))
    finally:
        observer.stop()
        observer.join()
