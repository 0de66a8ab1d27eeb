"""The layout of a designer's workspace: which games it holds (light: the no-change path reads it)."""
from __future__ import annotations

from pathlib import Path

MANIFEST_NAME = "game.yaml"


def list_games(root: Path) -> list[str]:
    """Names of the games in a workspace: folders of `data/` that hold a game.yaml."""
    data = root / "data"
    if not data.is_dir():
        return []
    return sorted(p.name for p in data.iterdir() if (p / MANIFEST_NAME).is_file())
