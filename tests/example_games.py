"""Helpers for the example games' tests: a copy of a game to break, and one build per test session."""
from __future__ import annotations

import fcntl
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from cardgen.commands.cli import main
from cardgen.validate import validate_game

REPO = Path(__file__).resolve().parent.parent  # not from conftest, which registers the fixtures below


def game_copy(base: Path, game: str) -> Path:
    """A workspace under `base` holding a copy of one example game (its data, the deck definitions games
    include from data/common/, and every template; fonts and icons are cardgen's bundled ones)."""
    root = base / "ws"
    for folder in ("templates", f"data/{game}", "data/common"):
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("snapshots"))
    return root


@pytest.fixture
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> tuple[Path, str]:
    """The session's one build of the test module's example game (its `GAME`): output folder and CLI output."""
    return shared_build(tmp_path_factory, worker_id, request.module.GAME)


@pytest.fixture
def copy(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A workspace holding a copy of the test module's example game (its `GAME`), to break."""
    return game_copy(tmp_path, request.module.GAME)


def edit(root: Path, game: str, file: str, old: str, new: str) -> None:
    """Replace the one occurrence of `old` in a data file of the copy (the test fails if it is not there once)."""
    path = root / "data" / game / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {file}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def rules_fired(root: Path, game: str) -> set[str]:
    """The rule ids of the findings (errors and warnings) the validator reports; layout is skipped, rules
    need no rendering."""
    return {f.rule for f in validate_game(root, game, layout=False) if f.rule}


def shared_build(tmp_path_factory, worker_id: str, game: str) -> tuple[Path, str]:
    """Build an example game from the repository with the CLI once per test session, even with pytest-xdist
    (the workers share one build under a file lock); return its output folder and the CLI's output."""
    base = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        base = base.parent  # the folder all workers of this session share
    out = base / f"example-{game}"
    with open(base / f"example-{game}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        log = out / "cli.txt"
        if not log.is_file():
            result = CliRunner().invoke(main, ["--root", str(REPO), "build", game, "--out", str(out)])
            assert result.exit_code == 0, result.output
            log.write_text(result.output, encoding="utf-8")
    return out / game, log.read_text(encoding="utf-8")


def readme_counts(game: str) -> dict[str, tuple[str, int, int]]:
    """The deck table of data/<game>/README.md: deck -> (kind, unique cards, copies)."""
    rows = re.findall(r"^\| `([\w-]+)` \| (\w+) \| (\d+) \| (\d+) \|", (REPO / "data" / game / "README.md")
                      .read_text(encoding="utf-8"), re.MULTILINE)
    return {deck: (kind, int(cards), int(copies)) for deck, kind, cards, copies in rows}


def built_counts(out: Path) -> dict[str, tuple[str, int, int]]:
    """The same table from a build's build.json."""
    record = json.loads((out / "build.json").read_text(encoding="utf-8"))
    unique = Counter(c["deck"] for c in record["cards"])
    copies: Counter = Counter()
    for card in record["cards"]:
        copies[card["deck"]] += card["copies"]
    return {deck: (spec["kind"], unique[deck], copies[deck]) for deck, spec in record["decks"].items()}
