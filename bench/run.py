"""cardgen benchmarks: prints figures and ratios measured side by side, and writes bench/RESULTS.md.

Run with `make bench` (or `python bench/run.py --quick` for a short run). Every figure is measured in
this one run on this machine; nothing here is a pass/fail test.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cardgen.build import BuildOptions, build_game, plan_build  # noqa: E402
from cardgen.fonts import configure_fontconfig  # noqa: E402
from cardgen.manifest import list_games  # noqa: E402
from cardgen.outputs import default_stages  # noqa: E402

CARDGEN = [sys.executable, "-m", "cardgen"]


def workspace_copy(target: Path) -> Path:
    """A copy of the repository's workspace (data, templates, fonts, icons) to edit freely."""
    for folder in ("data", "templates", "fonts", "icons"):
        shutil.copytree(REPO / folder, target / folder, ignore=shutil.ignore_patterns("snapshots"))
    return target


def generated_game(root: Path, cards: int) -> str:
    """Add a game `generated` of `cards` unique Scrapbots-style cards (one copy each) to a workspace."""
    source = root / "data" / "scrapbots"
    target = root / "data" / "generated"
    target.mkdir()
    manifest = (source / "game.yaml").read_text().split("\nrules:")[0]  # Scrapbots' rules count its own cards
    (target / "game.yaml").write_text(manifest.replace("title: Scrapbots", "title: Generated"))
    for extra in source.iterdir():
        if extra.is_file() and extra.name not in ("game.yaml", "cards.csv"):
            shutil.copy(extra, target / extra.name)
    rows = [r for r in csv.DictReader(line for line in (source / "cards.csv").read_text().splitlines()
                                      if not line.startswith("#"))]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    for i in range(cards):
        row = dict(rows[i % len(rows)])
        row.update(name=f"{row['name']} {i:05d}", count="1")
        writer.writerow(row)
    (target / "cards.csv").write_text(out.getvalue())
    shutil.copytree(root / "templates" / "scrapbots", root / "templates" / "generated")
    return "generated"


def timed_build(root: Path, game: str, out: Path, jobs: int, stages: list | None = None):
    """Build a game in this process (all output stages unless told); return (seconds, result)."""
    started = time.perf_counter()
    result = build_game(root, game, BuildOptions(out, jobs=jobs), None, default_stages() if stages is None else stages)
    return time.perf_counter() - started, result


def cold_builds(root: Path, games: list[str], jobs: int, stages: list | None = None) -> tuple[float, int]:
    """Build games from an empty cache; return total seconds and images drawn."""
    out = Path(tempfile.mkdtemp(prefix="cardgen-bench-"))
    seconds, drawn = 0.0, 0
    for game in games:
        s, result = timed_build(root, game, out, jobs, stages)
        seconds, drawn = seconds + s, drawn + result.rendered
    shutil.rmtree(out)
    return seconds, drawn


def svgs_of(root: Path, games: list[str]) -> list[tuple[str, int, int]]:
    """The SVG text and pixel size of every distinct image the games draw."""
    items = []
    for game in games:
        plan = plan_build(root, game, root / "output")
        for art in [*plan.faces.values(), *plan.backs.values()]:
            size = plan.game.deck_size(plan.game.spec.decks[art.deck])
            items.append((art.rendered.svg, size.full_width_px, size.full_height_px))
    return items


def floor_seconds(root: Path, items) -> float:
    """cairosvg drawing to a surface plus the same PNG encoding, with no cardgen around it."""
    import cairosvg.parser
    import cairosvg.surface
    from PIL import Image

    from cardgen.render import PNG_OPTIONS, make_url_fetcher
    fetch = make_url_fetcher(root)
    started = time.perf_counter()
    for svg, width, height in items:
        tree = cairosvg.parser.Tree(bytestring=svg.encode(), url=root.as_uri() + "/", url_fetcher=fetch)
        surface = cairosvg.surface.PNGSurface(tree, None, 300, output_width=width, output_height=height,
                                              background_color="white").cairo
        image = Image.frombuffer("RGB", (surface.get_width(), surface.get_height()), bytes(surface.get_data()),
                                 "raw", "BGRX", surface.get_stride(), 1)
        image.save(io.BytesIO(), format="PNG", **PNG_OPTIONS)
    return time.perf_counter() - started


def svg2png_seconds(root: Path, items) -> float:
    """What a quick script does: cairosvg.svg2png per card, writing PNG files."""
    import cairosvg

    started = time.perf_counter()
    for svg, width, height in items:
        cairosvg.svg2png(bytestring=svg.encode(), url=root.as_uri() + "/", output_width=width, output_height=height)
    return time.perf_counter() - started


def inkscape_seconds(items) -> float | None:
    """Inkscape's batch export of the same SVGs, when inkscape is installed."""
    if not shutil.which("inkscape"):
        return None
    folder = Path(tempfile.mkdtemp(prefix="cardgen-inkscape-"))
    files = []
    for i, (svg, _, _) in enumerate(items):
        files.append(folder / f"{i}.svg")
        files[-1].write_text(svg)
    started = time.perf_counter()
    subprocess.run(["inkscape", "--export-type=png", *map(str, files)], check=True, capture_output=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(folder)
    return seconds


def one_card_edit(root: Path, out: Path, games: list[str]) -> tuple[float, int]:
    """Change one number of one Scrapbots card and rebuild every game; return seconds and images drawn."""
    path = root / "data" / "scrapbots" / "cards.csv"
    text = path.read_text()
    path.write_text(text.replace("Golem,Scrapbot,center,2,9,,70", "Golem,Scrapbot,center,2,9,,80"))
    started = time.perf_counter()
    drawn = sum(timed_build(root, game, out, 1)[1].rendered for game in games)
    seconds = time.perf_counter() - started
    path.write_text(text)
    for game in games:
        timed_build(root, game, out, 1)
    return seconds, drawn


def watch_latency(root: Path) -> float:
    """Seconds from saving a CSV edit to the updated build.json, with `cardgen watch` running."""
    out = root / "output"
    process = subprocess.Popen([*CARDGEN, "--root", str(root), "watch", "scrapbots", "-j", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in process.stdout or []:  # wait for the first build and the observer
            if line.startswith("watching"):
                break
        time.sleep(0.5)
        record = out / "scrapbots" / "build.json"
        before = record.read_text()
        path = root / "data" / "scrapbots" / "cards.csv"
        text = path.read_text()
        saved = time.perf_counter()
        path.write_text(text.replace("Drone,Scrapbot,center,8,2,,10", "Drone,Scrapbot,center,8,2,,20"))
        while record.read_text() == before and time.perf_counter() - saved < 60:
            time.sleep(0.02)
        latency = time.perf_counter() - saved
        path.write_text(text)
        return latency
    finally:
        process.terminate()
        process.wait()


def scale_run(root: Path, cards: int) -> tuple[float, int, float]:
    """Build a generated game of `cards` cards in a subprocess; return seconds, images drawn, peak RSS MiB."""
    game = generated_game(root, cards) if not (root / "data" / "generated").exists() else "generated"
    out = Path(tempfile.mkdtemp(prefix="cardgen-scale-"))
    started = time.perf_counter()
    done = subprocess.run([*CARDGEN, "--root", str(root), "build", game, "--out", str(out), "-j", "2"],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"scale build failed:\n{done.stdout}\n{done.stderr}")
    record = json.loads((out / game / "build.json").read_text())
    shutil.rmtree(out)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return seconds, record["stats"]["rendered"], peak


def main() -> None:
    """Run every measurement, print it, and write bench/RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small scale test (1,000 cards instead of 10,000)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cardgen-bench-ws-"))
    root = workspace_copy(work / "ws")
    configure_fontconfig([root / "fonts"])
    games = list_games(root)
    lines: list[str] = []
    cold_builds(root, games, 1)  # warm-up: imports, font cache and template compilation are paid once

    def report(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    report(f"# cardgen benchmarks\n\nMachine: {platform.machine()}, {os.cpu_count()} cores, Python "
           f"{platform.python_version()}; games: {', '.join(games)}; stages: "
           f"{', '.join(s.__module__.split('.')[-1] for s in default_stages()) or 'card PNGs only'}.\n")
    report("| measurement | figure |\n| --- | --- |")
    cold1, drawn = cold_builds(root, games, 1, [])
    cold2, _ = cold_builds(root, games, 2, [])
    report(f"| card images only (no PDF/TTS): cold build of every example game, --jobs 1 | {cold1:.2f} s, "
           f"{drawn} images, {drawn / cold1:.1f} images/s, {1000 * cold1 / drawn:.0f} ms/image |")
    report(f"| card images only, cold, --jobs 2 | {cold2:.2f} s, {1000 * cold2 / drawn:.0f} ms/image; "
           f"speed-up {cold1 / cold2:.2f}x |")
    items = svgs_of(root, games)
    floor = floor_seconds(root, items)
    quick = svg2png_seconds(root, items)
    report(f"| floor: cairosvg draw + the same PNG encoding, no cardgen ({len(items)} images) | {floor:.2f} s, "
           f"{1000 * floor / len(items):.0f} ms/image |")
    report(f"| pipeline overhead (card images, --jobs 1 / floor) | {cold1 / floor:.2f}x |")
    report(f"| cairosvg.svg2png per card | {quick:.2f} s, {1000 * quick / len(items):.0f} ms/image; "
           f"cardgen --jobs 1 is {quick / cold1:.2f}x faster, --jobs 2 {quick / cold2:.2f}x |")
    inkscape = inkscape_seconds(items)
    report("| Inkscape batch export | " + (f"{inkscape:.2f} s; cardgen --jobs 2 is {inkscape / cold2:.2f}x faster |"
                                           if inkscape else "inkscape not installed here |"))
    full1, _ = cold_builds(root, games, 1)
    full2, _ = cold_builds(root, games, 2)
    report(f"| full cold build (cards, PDF, TTS, gallery), --jobs 1 / --jobs 2 | {full1:.2f} s / {full2:.2f} s |")
    out = root / "output"
    first = sum(timed_build(root, g, out, 1)[0] for g in games)
    warm = sum(timed_build(root, g, out, 1)[0] for g in games)
    report(f"| no-change rebuild (in process) | {warm * 1000:.0f} ms = {100 * warm / first:.1f}% of the cold build "
           f"({first:.2f} s) |")
    started = time.perf_counter()
    subprocess.run([*CARDGEN, "--root", str(root), "build"], capture_output=True, check=True)
    report(f"| no-change rebuild (`cardgen build` command, with Python start-up) | "
           f"{time.perf_counter() - started:.2f} s |")
    edit, edit_drawn = one_card_edit(root, out, games)
    report(f"| one card edited in a CSV | {edit_drawn} image(s) drawn, {edit * 1000:.0f} ms = "
           f"{100 * edit / first:.1f}% of the cold build |")
    report(f"| watch mode: save -> updated build.json | {watch_latency(root):.2f} s |")
    small_s, small_n, _ = scale_run(workspace_copy(work / "ws100"), 100)
    big_cards = 1000 if args.quick else 10000
    big_s, big_n, peak = scale_run(workspace_copy(work / "wsbig"), big_cards)
    gen = workspace_copy(work / "wsgen")
    generated_game(gen, 100)
    g1, g_drawn = cold_builds(gen, ["generated"], 1, [])
    g2, _ = cold_builds(gen, ["generated"], 2, [])
    g_floor = floor_seconds(gen, svgs_of(gen, ["generated"]))
    report(f"| generated game of 100 unique cards, card images only: --jobs 1 / --jobs 2 | {g1:.2f} s / {g2:.2f} s "
           f"({g_drawn} images), speed-up {g1 / g2:.2f}x; floor {g_floor:.2f} s, overhead {g1 / g_floor:.2f}x |")
    g_out = Path(tempfile.mkdtemp(prefix="cardgen-bench-"))
    g_cold, _ = timed_build(gen, "generated", g_out, 2)
    csv_path = gen / "data" / "generated" / "cards.csv"
    golem = "Golem 00005,Scrapbot,center,1,9,,"
    csv_path.write_text(csv_path.read_text().replace(golem + "70", golem + "80"))
    g_edit, g_result = timed_build(gen, "generated", g_out, 2)
    report(f"| generated game of 100 cards, all outputs: cold {g_cold:.2f} s; one card edited | {g_result.rendered} "
           f"image(s) drawn, {g_edit * 1000:.0f} ms = {100 * g_edit / g_cold:.1f}% of its cold build |")
    shutil.rmtree(g_out)
    report(f"| generated game, 100 cards (--jobs 2, command) | {small_s:.1f} s, "
           f"{1000 * small_s / small_n:.0f} ms/image |")
    report(f"| generated game, {big_cards} cards (--jobs 2, command) | {big_s:.1f} s, "
           f"{1000 * big_s / big_n:.0f} ms/image = {(big_s / big_n) / (small_s / small_n):.2f}x the 100-card "
           f"cost per card; peak RSS of one process {peak:.0f} MiB |")
    shutil.rmtree(work)
    (REPO / "bench" / "RESULTS.md").write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {REPO / 'bench' / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
