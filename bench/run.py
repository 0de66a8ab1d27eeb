"""cardgen benchmarks: the figures of the speed targets, each against a floor or baseline measured in the same run.

Run `make bench` (every figure, 10,000 cards in the scale figure) or
`.venv/bin/python bench/run.py --quick` (the scale figure at 1,000 cards, the edit figure without 10,000), or
pick figures:
`.venv/bin/python bench/run.py --figures cold20,nochange`. Each figure prints a table and replaces its
own section of bench/RESULTS.md. Builds run as whole `cardgen build` commands in a fresh process, on
generated games of N different Scrapbots-style cards (one copy each); nothing here is a pass/fail test.

Figures: cold1000 and cold20 (cold build with every output, against the floor of bench/floor.py on the
same SVGs), nochange (a rebuild with nothing to do, against Python's own start-up), edit (one card
changed, against the cold build at 20, 100, 1,000 and 10,000 cards: as a whole command, against a fresh process drawing
that card alone, and in a running `cardgen watch`), serve (from a save to the new image shown in the gallery
of a running `cardgen serve`, in a headless Chromium driven through DevTools, against the rebuild itself),
examples (the five example games of data/, each and all together: cold against the floor, no change, one card's
text edited), scale (cost per card at 10,000 against 1,000 cards, --jobs 2 against --jobs 1, both timed
unobserved, and peak memory in a build of its own). Cold builds, and the floor runs, start with empty output and
user cache folders.
"""
from __future__ import annotations

import argparse
import compileall
import csv
import io
import json
import os
import platform
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterator

import cardgen

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
RESULTS = BENCH / "RESULTS.md"

_script = Path(sys.executable).parent / "cardgen"
CARDGEN = [str(_script)] if _script.exists() else [sys.executable, "-m", "cardgen"]
EDITED_FIELD = "scrap"  # a number every Scrapbots-style card shows; editing it changes one card's face only


# ---------------------------------------------------------------- workspaces and games


def workspace(target: Path) -> Path:
    """A copy of the repository's workspace (data, templates; its fonts/ and icons/ are cardgen's bundled set) to
    build and edit freely."""
    for folder in ("data", "templates"):
        shutil.copytree(REPO / folder, target / folder, ignore=shutil.ignore_patterns("snapshots"))
    return target


def generated_game(root: Path, cards: int) -> str:
    """Add a game `gen<cards>` of `cards` different Scrapbots-style cards (one copy each); return its name."""
    name = f"gen{cards}"
    source, target = root / "data" / "scrapbots", root / "data" / name
    if target.exists():
        return name
    target.mkdir()
    manifest = (source / "game.yaml").read_text().split("\nrules:")[0]  # Scrapbots' rules count its own cards
    (target / "game.yaml").write_text(manifest.replace("title: Scrapbots", f"title: Generated {cards}"))
    for extra in source.iterdir():
        if extra.is_file() and extra.name not in ("game.yaml", "cards.csv"):
            shutil.copy(extra, target / extra.name)
    rows = list(csv.DictReader(line for line in (source / "cards.csv").read_text().splitlines()
                               if not line.startswith("#")))
    generated = []
    for i in range(cards):
        row = dict(rows[i % len(rows)])
        row.update(name=f"{row['name']} {i:05d}", count="1")
        generated.append(row)
    _write_rows(target / "cards.csv", generated)
    shutil.copytree(root / "templates" / "scrapbots", root / "templates" / name)
    return name


def _write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text(_rows_text(rows))


def _rows_text(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _middle_row(rows: list[dict]) -> dict:
    return rows[len(rows) // 2]


def edit_one_card(root: Path, game: str, value: int) -> str:
    """Set one number of the middle card of a generated game (a new value each time); return that card's name."""
    path, text, name = one_card_edited(root, game, value)
    path.write_text(text)
    return name


def one_card_edited(root: Path, game: str, value: int) -> tuple[Path, str, str]:
    """`edit_one_card`'s file, its new text and the card's name, not written yet: a figure timing a save starts its
    clock at the write (reading and writing the rows of 10,000 cards here takes ~55 ms of CPU, measured)."""
    path = root / "data" / game / "cards.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    row = _middle_row(rows)
    row[EDITED_FIELD] = str(value)
    return path, _rows_text(rows), row["name"]


def edit_values(root: Path, game: str, count: int) -> list[int]:
    """`count` values for edit_one_card, each a change: one digit (it fits the card's hexagon, as a designer's
    edit would; a larger number overflows it and adds a layout warning to the build), not the current one."""
    rows = list(csv.DictReader(io.StringIO((root / "data" / game / "cards.csv").read_text())))
    return [value for value in range(1, 10) if str(value) != _middle_row(rows)[EDITED_FIELD]][:count]


# One card's text of each example game that a designer might edit: the game's file, and the column (CSV) or the
# start of the line (YAML) of the middle card's entry.
EXAMPLE_EDITS = {"adventure": ("main-deck.csv", "text"), "battle-builder": ("cards.csv", "effect"),
                 "deebz": ("effects.csv", "effect"), "sams-battle": ("reference.yaml", "  title: "),
                 "scrapbots": ("cards.csv", "text")}


def edit_example(root: Path, game: str, value: int) -> None:
    """Change one card's text in an example game of the workspace `root`: the text in the repository's copy with
    ` (value)` after it, so each value is a change. CSV lines are edited one by one (the files' comment lines
    stay), each line a whole record (the example files hold no line breaks in a field)."""
    name, where = EXAMPLE_EDITS[game]
    original = (REPO / "data" / game / name).read_text().splitlines(keepends=True)
    lines = (root / "data" / game / name).read_text().splitlines(keepends=True)
    if name.endswith(".yaml"):
        at = [i for i, line in enumerate(original) if line.startswith(where)]
        i = at[len(at) // 2]
        lines[i] = f"{original[i].rstrip()} ({value})\n"
    else:
        records = [i for i, line in enumerate(original) if line.strip() and not line.startswith("#")]
        header, i = next(csv.reader([original[records[0]]])), records[1:][len(records[1:]) // 2]
        row = dict(zip(header, next(csv.reader([original[i]]))))
        row[where] = f"{row[where]} ({value})"
        out = io.StringIO()
        csv.DictWriter(out, fieldnames=header, lineterminator="\n").writerow(row)
        lines[i] = out.getvalue()
    (root / "data" / game / name).write_text("".join(lines))


def svg_listing(root: Path, game: str | list[str], target: Path, card: str | None = None) -> int:
    """Write the SVG text, size and base URL of every image a build of `game` (or of each of a list of games)
    draws (only the face of the card named `card` when given), for bench/floor.py."""
    from cardgen.build.plan import plan_build
    from cardgen.svg.context import BuildContext

    items = []
    for name in [game] if isinstance(game, str) else game:
        with tempfile.TemporaryDirectory(prefix="cardgen-bench-plan-") as scratch:
            plan = plan_build(BuildContext.load(root, name, Path(scratch)))
        arts = [*plan.faces.values(), *plan.backs.values()]
        if card is not None:
            arts = [plan.faces[c.id] for c in plan.cards if c.name == card]
        for art in arts:
            deck = plan.game.spec.decks[art.deck]
            size = plan.game.deck_size(deck)
            items.append({"svg": art.rendered.svg, "width": size.full_width_px, "height": size.full_height_px,
                          "dpi": size.dpi, "base_url": plan.game.data_dir.resolve().as_uri() + "/",
                          "transparent": deck.kind != "card"})
    target.write_text(json.dumps({"font_dirs": [str(root / "fonts")], "items": items}))
    return len(items)


# ---------------------------------------------------------------- running and measuring


@dataclass
class Run:
    """One whole command: wall seconds, and peak memory of its process tree (MiB; PSS summed, largest RSS)."""

    seconds: float
    peak_pss_mib: float = 0.0
    peak_rss_mib: float = 0.0
    stdout: str = ""


def _tree(pid: int) -> list[int]:
    pids, i = [pid], 0
    while i < len(pids):
        try:
            for task in os.listdir(f"/proc/{pids[i]}/task"):
                with open(f"/proc/{pids[i]}/task/{task}/children") as handle:
                    pids += [int(p) for p in handle.read().split()]
        except OSError:
            pass
        i += 1
    return pids


def _memory(pid: int) -> tuple[float, float]:
    """PSS summed over a process tree (shared pages counted once), and the largest RSS of one process, in MiB."""
    pss, rss = 0, 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup") as handle:
                fields = {line.split(":")[0]: int(line.split()[1]) for line in handle if line.endswith("kB\n")}
        except OSError:
            continue
        pss, rss = pss + fields.get("Pss", 0), max(rss, fields.get("Rss", 0))
    return pss / 1024, rss / 1024


def run(args: list[str], memory: bool = False, env: dict[str, str] | None = None) -> Run:
    """Run a command to its end (in `env` when given); fail loudly when it fails."""
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peaks = [0.0, 0.0]

    def sample() -> None:
        while process.poll() is None:
            pss, rss = _memory(process.pid)
            peaks[0], peaks[1] = max(peaks[0], pss), max(peaks[1], rss)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    if memory:
        sampler.start()
    out, err = process.communicate()
    seconds = time.perf_counter() - started
    if memory:
        sampler.join()
    if process.returncode:
        raise SystemExit(f"failed: {' '.join(args)}\n{out}\n{err}")
    return Run(seconds, peaks[0], peaks[1], out)


def build(root: Path, game: str | None, out: Path, jobs: int = 2, memory: bool = False,
          env: dict[str, str] | None = None) -> Run:
    """`cardgen build [game] --out OUT -j JOBS` in the workspace, as a designer runs it."""
    return run([*CARDGEN, "--root", str(root), "build", *([game] if game else []), "--out", str(out),
                "-j", str(jobs)], memory, env)


def cold_build(root: Path, game: str | None, jobs: int = 2, memory: bool = False) -> Run:
    """A build into an empty output root (so empty caches of its own) with an empty user cache folder (so no
    compiled templates, font metrics, icon index or cairo declarations kept by an earlier build), as on a machine
    where cardgen never ran."""
    out = Path(tempfile.mkdtemp(prefix="cardgen-bench-out-"))
    try:
        with empty_user_cache() as env:
            return build(root, game, out, jobs, memory, env)
    finally:
        shutil.rmtree(out, ignore_errors=True)


@contextmanager
def empty_user_cache() -> Iterator[dict[str, str]]:
    """An environment whose user cache folder (XDG_CACHE_HOME, where `cardgen.core.storage.user_cache` looks)
    is a new empty folder, removed after."""
    folder = tempfile.mkdtemp(prefix="cardgen-bench-xdg-")
    try:
        yield {**os.environ, "XDG_CACHE_HOME": folder}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def floor(listing: Path) -> float:
    """Seconds bench/floor.py takes to draw and encode the listed SVGs (drawing loop only)."""
    return float(json.loads(_floor_run(listing).stdout)["seconds"])


def whole_floor(listing: Path) -> float:
    """Seconds bench/floor.py takes as a whole command: Python's start, importing cairosvg and Pillow, drawing
    and encoding the listed SVGs; the least a fresh process that draws them costs."""
    return _floor_run(listing).seconds


def _floor_run(listing: Path) -> Run:
    """bench/floor.py run on the listed SVGs, its PNGs written to a folder removed after; with an empty user cache
    folder, as the cold builds it is the floor of (fontconfig scans the fonts again)."""
    out = Path(tempfile.mkdtemp(prefix="cardgen-bench-floor-"))
    try:
        with empty_user_cache() as env:
            return run([sys.executable, str(BENCH / "floor.py"), str(listing), str(out)], env=env)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def watched_edits(root: Path, game: str, out: Path, values: list[int]
                  ) -> tuple[list[float], list[int], float]:
    """Edit one card with each of `values` under a running `cardgen watch` of `game` (built into `out` already),
    once the watch has warmed up; return the seconds from each save to the rebuild's report less the time the watch
    waits for after a finished save (cardgen.build.watch.SAVE_SECONDS, gathering its events), the images each
    rebuild drew, and the seconds from the watch's first report until it was idle (its warm-up)."""
    from cardgen.build.watch import QUIET_SECONDS, SAVE_SECONDS

    watch = subprocess.Popen([*CARDGEN, "--root", str(root), "watch", game, "--out", str(out), "-j", "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert watch.stdout is not None
    seconds, drawn = [], []
    try:
        _line_starting(watch.stdout, "watching ")
        _line_starting(watch.stdout, f"{game}: ")  # the watch's own first build ("up to date"), before any save
        warm = _idle_after(watch.pid)
        for value in values:
            time.sleep(2 * QUIET_SECONDS)  # the previous save is long done with
            path, text, _ = one_card_edited(root, game, value)
            started = time.perf_counter()
            path.write_text(text)  # the save
            report = _line_starting(watch.stdout, f"{game}: ")
            seconds.append(time.perf_counter() - started - SAVE_SECONDS)
            drawn.append(int(re.search(r"(\d+) drawn", report).group(1)))  # type: ignore[union-attr]
    finally:
        watch.terminate()  # not Ctrl-C: a command started in the background ignores SIGINT
        watch.communicate(timeout=60)
    return seconds, drawn, warm


def _idle_after(pid: int, quiet: float = 0.5, most: float = 120) -> float:
    """Seconds until the process `pid` uses less than 2% of a core over `quiet` seconds (at most `most`): a watch
    that warms up after its first build (`cardgen.build.build.warm_up`), which a save made meanwhile waits for."""
    started = time.perf_counter()
    used = _cpu_seconds(pid)
    while time.perf_counter() - started < most:
        time.sleep(quiet)
        now = _cpu_seconds(pid)
        if now - used < 0.02 * quiet:
            return time.perf_counter() - started - quiet
        used = now
    return time.perf_counter() - started


def _cpu_seconds(pid: int) -> float:
    """The CPU seconds a process has used (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# When the gallery next loads an image whose address starts with `prefix`: a promise of the page's clock then
# (Date.now(), the same clock as Python's time.time()). Nothing polls meanwhile: the load event resolves it.
NEXT_LOAD = """window.nextLoad = new Promise((resolve) => {
  document.addEventListener("load", function seen(event) {
    if (event.target.tagName === "IMG" && event.target.getAttribute("src").startsWith(%r)) {
      document.removeEventListener("load", seen, true);
      resolve(Date.now());
    }
  }, true);
}), 0"""


def served_edits(root: Path, game: str, out: Path, values: list[int]) -> tuple[list[float], list[float], int]:
    """Edit one card with each of `values` under a running `cardgen serve` of `game` (built into `out` already),
    its gallery open in a headless Chromium; return the seconds from each save to the new image's load event in the
    page, from each save to serve's report of its rebuild, and how many pages the browser loaded after the first."""
    from chromium import Chromium

    serve = subprocess.Popen([*CARDGEN, "--root", str(root), "serve", game, "--out", str(out), "-j", "2", "--port",
                              "0", "--no-open"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[tuple[float, str]] = queue.Queue()  # serve's output lines, each with when it was read

    def read() -> None:
        for line in serve.stdout or ():
            lines.put((time.time(), line))

    threading.Thread(target=read, daemon=True).start()
    shown, reported, loads = [], [], 0
    try:
        url = _next_line(lines, "gallery at ")[1].split("gallery at ")[1].split()[0]
        record = json.loads((out / game / "build.json").read_text())
        edited = _middle_row(list(csv.DictReader(io.StringIO((root / "data" / game / "cards.csv").read_text()))))
        face = next(card["face"] for card in record["cards"] if card["name"] == edited["name"])
        with Chromium() as browser:
            browser.navigate(url)
            for value in values:
                time.sleep(1)  # the previous save is long done with
                while not lines.empty():
                    lines.get()
                browser.evaluate(NEXT_LOAD % (face + "?v="))
                path, text, _ = one_card_edited(root, game, value)
                saved = time.time()
                path.write_text(text)  # the save
                shown.append(browser.evaluate("window.nextLoad") / 1000 - saved)
                reported.append(_next_line(lines, " drawn")[0] - saved)
            loads = browser.loads - 1
    finally:
        serve.terminate()  # not Ctrl-C: a command started in the background ignores SIGINT
        serve.wait(timeout=60)
    return shown, reported, loads


def _next_line(lines: queue.Queue[tuple[float, str]], holding: str, seconds: float = 120) -> tuple[float, str]:
    """The next line holding `holding` from a command's output lines, with when it was read."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            when, line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise SystemExit(f"cardgen serve printed no line holding {holding!r}") from None
        if holding in line:
            return when, line


def _line_starting(stream: IO[str], start: str) -> str:
    """The next line of `stream` that starts with `start`; fail loudly when the stream ends first."""
    for line in stream:
        if line.startswith(start):
            return line
    raise SystemExit(f"cardgen watch ended before printing a line starting with {start!r}")


def median(values: list[float]) -> float:
    """The median of some measurements."""
    return statistics.median(values)


def spread(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    """Measurements as `median (min-max, n runs)`."""
    if len(values) == 1:
        return f"{values[0] * scale:.2f} {unit} (1 run)"
    return (f"{median(values) * scale:.2f} {unit} ({min(values) * scale:.2f}-{max(values) * scale:.2f}, "
            f"{len(values)} runs)")


# ---------------------------------------------------------------- figures


class Bench:
    """Shared state of one benchmark run: the work folder, repetitions, and results figures reuse."""

    def __init__(self, work: Path, repeat: int, quick: bool) -> None:
        self.work, self.repeat, self.quick = work, repeat, quick
        self.root = workspace(work / "ws")
        self.cold: dict[int, list[float]] = {}  # cold build seconds (--jobs 2) by game size

    def game(self, cards: int) -> str:
        """The generated game of `cards` cards in the shared workspace."""
        return generated_game(self.root, cards)

    def cold_against_floor(self, cards: int, target: str, repeat: int, single: bool) -> list[str]:
        """Cold builds of every output (--jobs 2, and --jobs 1 when `single`), interleaved with floor runs."""
        game = self.game(cards)
        listing = self.work / f"{game}-svgs.json"
        images = svg_listing(self.root, game, listing)
        floors, twos, ones = [], [], []
        for _ in range(repeat):
            floors.append(floor(listing))
            twos.append(cold_build(self.root, game, 2).seconds)
            if single:
                ones.append(cold_build(self.root, game, 1).seconds)
        self.cold[cards] = twos
        command = f"cardgen build {game} --out EMPTY -j 2"
        rows = [
            "| measurement | seconds | ratio to the floor |", "| --- | --- | --- |",
            f"| floor: bench/floor.py draws the same {images} SVGs and encodes PNGs, one process | "
            f"{spread(floors)} | 1.00x |",
            f"| `{command}`: every output, cold, whole command | {spread(twos)} | "
            f"**{median(twos) / median(floors):.2f}x** (target {target}) |",
        ]
        if ones:
            rows.append(f"| the same with `-j 1` | {spread(ones)} | {median(ones) / median(floors):.2f}x; "
                        f"`-j 2` is {median(ones) / median(twos):.2f}x faster |")
        return rows

    def cold1000(self) -> list[str]:
        """Figure: 1,000 different cards, cold, every output, --jobs 2, against the floor."""
        return self.cold_against_floor(1000, "at most 0.6x", max(1, min(self.repeat, 3)), single=False)

    def cold20(self) -> list[str]:
        """Figure: 20 different cards (21 images), cold, every output, against the floor."""
        return self.cold_against_floor(20, "at most 1.2x", max(self.repeat, 5), single=True)

    def nochange(self) -> list[str]:
        """Figure: a rebuild with nothing to do as a whole command, against Python's own start-up."""
        examples = workspace(self.work / "examples")
        game = self.game(100)
        out_examples, out_game = self.work / "out-examples", self.work / "out-nochange"
        build(examples, None, out_examples)
        build(self.root, game, out_game)
        repeat = max(self.repeat, 7)
        bare = [run([sys.executable, "-c", "pass"]).seconds for _ in range(repeat)]
        imports = [run([sys.executable, "-c", "import click"]).seconds for _ in range(repeat)]
        all_games = [build(examples, None, out_examples).seconds for _ in range(repeat)]
        one_game = [build(self.root, game, out_game).seconds for _ in range(repeat)]
        check = build(examples, None, out_examples).stdout
        games = len(re.findall(r"up to date", check))
        return [
            "| measurement | seconds | minus Python start-up |", "| --- | --- | --- |",
            f"| baseline: `python -c pass` | {spread(bare)} | |",
            f"| baseline: `python -c 'import click'` | {spread(imports)} | "
            f"{median(imports) - median(bare):.3f} s |",
            f"| `cardgen build` in the example workspace, nothing changed ({games} games up to date) | "
            f"{spread(all_games)} | {median(all_games) - median(bare):.3f} s (target: whole command under 0.3 s) |",
            f"| `cardgen build {game}` (100 cards), nothing changed | {spread(one_game)} | "
            f"{median(one_game) - median(bare):.3f} s |",
        ]

    def edit(self) -> list[str]:
        """Figure: one card edited, every output updated, at 20, 100, 1,000 and 10,000 cards (not 10,000 with
        --quick): as a whole command, against a fresh process that draws that card alone, and in a running
        `cardgen watch`."""
        rows = ["| cards | cold build (-j 2) | one-card edit, whole command | share of the cold build | "
                "floor: that card alone, whole command (bench/floor.py) | its share | in a running `cardgen watch`: "
                "its warm-up | the first save | the saves after it | their share | images drawn (command; watch) | "
                "TTS images rewritten |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for cards in (20, 100, 1000) if self.quick else (20, 100, 1000, 10000):  # issue 37 names all four
            game = self.game(cards)
            out = self.work / f"out-edit-{cards}"
            cold = build(self.root, game, out).seconds
            colds = self.cold.get(cards, []) or [cold]
            runs = max(1, min(self.repeat, 3))
            values = edit_values(self.root, game, 8)  # new values each: every edit draws its card
            edits, drawn, rewritten, card = [], [], "", ""
            for value in values[:runs]:
                card = edit_one_card(self.root, game, value)
                before = set(os.listdir(out / game / "tts"))
                edits.append(build(self.root, game, out).seconds)
                record = json.loads((out / game / "build.json").read_text())
                drawn.append(record["stats"]["rendered"])
                after = set(os.listdir(out / game / "tts"))
                rewritten = f"{len(after - before)} of {len(after)}"
            listing = self.work / f"{game}-edited.json"
            svg_listing(self.root, game, listing, card)  # the edited card as it is now: any value costs the same
            floors = [whole_floor(listing) for _ in range(runs)]
            # In the watch, its first save apart: that rebuild still does some work for the first time in the
            # watch's process (the card drawn there, the print file copied for its update); the saves after it do not.
            (first, *watched), watch_drawn, warm = watched_edits(self.root, game, out, values[runs:])
            base = median(colds)
            rows.append(f"| {cards} | {spread(colds)} | {spread(edits)} | **{100 * median(edits) / base:.1f}%** | "
                        f"{spread(floors)} | {100 * median(floors) / base:.1f}% | {warm:.1f} s | {first:.2f} s | "
                        f"{spread(watched)} | "
                        f"**{100 * median(watched) / base:.1f}%** | {', '.join(map(str, drawn))}; "
                        f"{', '.join(map(str, watch_drawn))} | {rewritten} |")
        rows.append("\nTargets (issue 37): in a running watch, at most 0.15 s at every size; the 100-card edit under "
                    "0.5 s as a whole command (the old 'under 10% of its cold build' is retired). The cold column is "
                    "the median of the cold figures when they ran in this run, else one cold build. The floor is the "
                    "least any fresh process that draws the edited card pays: Python's start, importing cairosvg and "
                    "Pillow, drawing and encoding that one SVG, nothing else. The watch column is the time from the "
                    "save to the watch's report of its rebuild, less the time it waits for after a finished save "
                    "(`cardgen.build.watch.SAVE_SECONDS`): the rebuild a designer who keeps `cardgen watch` or "
                    "`cardgen serve` running waits for (the first save's rebuild, then the median of those after it "
                    "and its share). The saves come once the watch is idle after its first build: its warm-up "
                    "(`cardgen.build.build.warm_up`, the seconds from its first report until it uses under 2% of a "
                    "core), which a save made meanwhile waits for.")
        return rows

    def serve(self) -> list[str]:
        """Figure: from a save to the new image shown in the gallery of a running `cardgen serve` (20 and 100 cards,
        a headless Chromium), against serve's report of the rebuild."""
        from chromium import CHROMIUM

        if CHROMIUM is None:
            return ["Not measured: this figure needs Chromium (`chromium` on the PATH; Debian's package)."]
        rows = ["| cards | the first save: image shown; rebuild reported | the saves after it: from the save to the "
                "new image's load event in the page | from the save to serve's report of the rebuild | between: the "
                "push, the page's swap, the image's load | pages loaded |", "| --- | --- | --- | --- | --- | --- |"]
        for cards in (20, 100):
            game = self.game(cards)
            out = self.work / f"out-serve-{cards}"
            build(self.root, game, out)
            (first_shown, *shown), (first_reported, *reported), loads = served_edits(
                self.root, game, out, edit_values(self.root, game, 8))
            tail = [s - r for s, r in zip(shown, reported)]
            target = " (target: under 0.25 s)" if cards == 100 else ""
            rows.append(f"| {cards} | {first_shown:.2f} s; {first_reported:.2f} s | **{spread(shown)}**{target} | "
                        f"{spread(reported)} | {spread(tail)} | {loads} |")
        return [
            *rows,
            "\nEach save sets one number of one card (`edit_one_card`, a new value each time) with the gallery open in "
            "a headless Chromium driven through DevTools (`bench/chromium.py`); the page records `Date.now()` at each "
            "image's load event, read back after the save (the save's time is `time.time()` just before the write, "
            "the same clock). The rebuild column is when serve's report line was read; it includes the time from "
            "the save to the rebuild's start (the watch starts it once the file is closed, `SAVE_SECONDS` after the "
            "last event). Pages loaded: how many times the browser loaded the gallery again in all those saves "
            "(0: every change was pushed into the page).",
        ]

    def examples(self) -> list[str]:
        """Figure: the example games (data/), each and all together: cold against the floor, no-change, one card
        edited as a whole command."""
        root = workspace(self.work / "examples-figure")
        rows = ["| game | images | floor: bench/floor.py on its SVGs, one process | cold build (-j 2), whole command "
                "| ratio to the floor | no-change rebuild | one card's text edited, whole command | images drawn |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for game in [*EXAMPLE_EDITS, None]:
            listing = self.work / f"examples-{game or 'all'}.json"
            images = svg_listing(root, game or list(EXAMPLE_EDITS), listing)
            floors, colds = [], []
            for _ in range(max(self.repeat, 3)):
                floors.append(floor(listing))
                colds.append(cold_build(root, game).seconds)
            out = self.work / f"out-examples-{game or 'all'}"
            build(root, game, out)
            nochange = [build(root, game, out).seconds for _ in range(max(self.repeat, 5))]
            edits, drawn = self.example_edits(root, game, out) if game is not None else ([], [])
            rows.append(f"| {game or 'all five: `cardgen build`'} | {images} | {spread(floors)} | {spread(colds)} | "
                        f"**{median(colds) / median(floors):.2f}x** | {spread(nochange)} | "
                        f"{spread(edits) if edits else ''} | {', '.join(map(str, drawn))} |")
        rows.append("\nCold builds and the floor start with empty output and user cache folders (XDG_CACHE_HOME). "
                    "Targets (issue 37): the whole-command edit under 0.5 s, the no-change rebuild under 0.1 s.")
        return rows

    def example_edits(self, root: Path, game: str, out: Path) -> tuple[list[float], list[int]]:
        """Edit one card of an example game (built into `out`) a few times, each a whole `cardgen build`; return
        the seconds of each and the images each drew."""
        edits, drawn = [], []
        for value in range(1, max(self.repeat, 3) + 1):
            edit_example(root, game, value)
            edits.append(build(root, game, out).seconds)
            drawn.append(json.loads((out / game / "build.json").read_text())["stats"]["rendered"])
        return edits, drawn

    def scale(self) -> list[str]:
        """Figure: cost per card at N = 10,000 (1,000 with --quick) against N / 10, peak memory, jobs."""
        big = 1000 if self.quick else 10000
        small = big // 10
        small_run = cold_build(self.root, self.game(small), 2)
        # Timed unobserved, memory in a build of its own: reading a process's PSS (smaps_rollup) walks its page
        # tables, ~5 ms for the build's process at 10,000 cards, so sampling it ten times a second took ~5% of
        # a core from a -j 2 build that uses both (and nothing from -j 1, which leaves one idle).
        two = cold_build(self.root, self.game(big), 2)
        one = cold_build(self.root, self.game(big), 1)
        observed = cold_build(self.root, self.game(big), 2, memory=True)
        per_small, per_big = small_run.seconds / small, two.seconds / big
        return [
            "| measurement | figure |", "| --- | --- |",
            f"| baseline: {small} cards, cold, -j 2 | {small_run.seconds:.1f} s, {1000 * per_small:.1f} ms/card |",
            f"| {big} cards, cold, -j 2 | {two.seconds:.1f} s, {1000 * per_big:.1f} ms/card = "
            f"**{per_big / per_small:.2f}x** the cost per card at {small} (target: about 1x, linear) |",
            f"| peak memory, -j 2, a build of its own sampled every 0.1 s (PSS of every process summed; largest "
            f"single RSS) | **{observed.peak_pss_mib:.0f} MiB**; {observed.peak_rss_mib:.0f} MiB (target: under "
            f"500 MiB); that build took {observed.seconds:.1f} s |",
            f"| {big} cards, cold, -j 1 | {one.seconds:.1f} s; -j 2 is **{one.seconds / two.seconds:.2f}x** faster "
            f"(target: at least 1.9x) |",
        ]


FIGURES: dict[str, tuple[str, Callable[[Bench], list[str]]]] = {
    "cold1000": ("Cold build, 1,000 different cards, every output, against the floor", Bench.cold1000),
    "cold20": ("Cold build, 20 different cards (21 images), every output, against the floor", Bench.cold20),
    "nochange": ("No-change rebuild, whole command", Bench.nochange),
    "edit": ("One card edited, every output updated: whole command, its floor, in a running watch", Bench.edit),
    "serve": ("From a save to the new image in the gallery of a running `cardgen serve`, in headless Chromium",
              Bench.serve),
    "examples": ("The example games: cold against the floor, no-change, one card edited", Bench.examples),
    "scale": ("10,000 cards: cost per card, peak memory, --jobs 2 against --jobs 1", Bench.scale),
}


def machine() -> str:
    """The machine a figure was measured on, and how busy it was."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.machine())
    memory = next((int(line.split()[1]) // 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), 0)
    versions = []
    for module in ("cairosvg", "PIL", "reportlab"):
        try:
            versions.append(f"{module} {__import__(module).__version__}")
        except ImportError:
            pass
    return (f"{model}, {os.cpu_count()} cores, {memory} MiB RAM, Python {platform.python_version()}, "
            f"{', '.join(versions)}")


def commit() -> str:
    """The commit measured (with a mark when the work tree has changes)."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    measured = ["cardgen", "bench/run.py", "bench/floor.py"]
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", *measured], capture_output=True,
                           text=True).stdout.strip()
    return head + (" + uncommitted changes" if dirty else "")


def write_section(name: str, text: str) -> None:
    """Replace one figure's section of RESULTS.md (between its markers), keeping the others."""
    begin, end = f"<!-- figure:{name} -->", f"<!-- /figure:{name} -->"
    current = RESULTS.read_text() if RESULTS.exists() else ""
    if "<!-- figure:" not in current:
        current = ("# cardgen benchmarks\n\nWritten by `bench/run.py` (`make bench`); each section is one "
                   "figure of issue 14, measured with its floor or baseline in the same run.\n")
    section = f"{begin}\n{text}\n{end}"
    if begin in current:
        current = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: section, current, flags=re.S)
    else:
        order = list(FIGURES)
        later = [f"<!-- figure:{n} -->" for n in order[order.index(name) + 1:] if f"<!-- figure:{n} -->" in current]
        if later:
            at = current.index(later[0])
            current = current[:at] + section + "\n\n" + current[at:]
        else:
            current = current.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(current)


def compile_cardgen() -> None:
    """Write cardgen's bytecode before measuring, as `pip install` does for an installed package, and the code of
    its dataclasses' methods, as `make install` does (tools/startup_code.py: edited since, they would be compiled
    again in every measured command).

    An editable install leaves the bytecode to the first import, and a machine with PYTHONDONTWRITEBYTECODE set
    (this one) never writes it: every measured command would then compile cardgen's modules again,
    0.1-0.15 s that a designer's installation does not pay.
    """
    compileall.compile_dir(str(Path(cardgen.__file__).parent), quiet=1)
    subprocess.run([sys.executable, str(REPO / "tools" / "startup_code.py")], check=True, capture_output=True)


def main() -> None:
    """Measure the chosen figures, print them and write them into bench/RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="the scale figure at 1,000 cards instead of 10,000, the edit figure without 10,000")
    parser.add_argument("--figures", default=",".join(FIGURES), help=f"comma-separated, of: {', '.join(FIGURES)}")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (some figures use more)")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.figures.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(unknown)}")
    compile_cardgen()
    work = Path(tempfile.mkdtemp(prefix="cardgen-bench-"))
    try:
        bench = Bench(work, args.repeat, args.quick)
        for name in chosen:
            title, measure = FIGURES[name]
            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            table = measure(bench)
            load_after = os.getloadavg()[0]
            command = f"python bench/run.py --figures {name}" + \
                (" --quick" if args.quick and name in ("scale", "edit") else "")
            text = "\n".join([
                f"## {title}", "",
                f"Measured {time.strftime('%Y-%m-%d %H:%M')} on commit {commit()}, in "
                f"{time.perf_counter() - started:.0f} s; machine: {machine()}; load average "
                f"{load_before:.1f} before, {load_after:.1f} after"
                + (" (**the machine was shared and loaded: absolute times are noisy, ratios less so**)"
                   if max(load_before, load_after) > 1.5 else "") + ".",
                f"Reproduce: `{command}`.", "", *table])
            print(text + "\n", flush=True)
            write_section(name, text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
