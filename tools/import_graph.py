"""Print cardgen's internal import graph (module -> cardgen modules it imports), and any import that runs
up the pipeline (from an earlier stage to a later one). Ranks are by folder (cardgen/core/, cardgen/load/...).

Usage: python tools/import_graph.py [--graph] [package folder]   (default: the cardgen/ of this checkout)
Without --graph only the upward imports are printed; the exit code is 1 when there are any.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

from cardgen.core.codemap import imports_of  # the same reading salts the caches with the code that makes them

# Pipeline order, by folder of cardgen/: a module may import modules of its own rank or lower ranks only. A new
# module goes into the folder of its rank and needs no edit here; a new top-level module or folder is an error.
# The SVG renderer ranks before validation because the layout checks render cards to measure them; `options` (the
# outputs' options models) loads with the manifest.
STAGES = [
    ("core", ["core", "__init__"]),  # errors, units, storage and caches, the registry, cardgen's own files
    ("load", ["load", "options"]),  # game.yaml, data, markup, fonts, icons, freshness; the options models
    ("svg", ["svg"]),  # the sandboxed templates, text layout, the game loaded with its renderer
    ("validate", ["validate"]),
    ("raster", ["raster"]),  # cairosvg in the render workers
    ("record", ["record"]),  # build.json and the changes between builds
    ("outputs", ["outputs"]),
    ("build", ["build"]),  # plan, build, watch
    ("playtest", ["playtest"]),  # after a build: `cardgen stats` and `simulate` (their modules once merged)
    ("commands", ["commands", "__main__"]),  # the command line
]


def rank(module: str) -> int:
    """The pipeline rank of a module path such as 'outputs.pdf': that of its folder."""
    parts = module.split(".")
    for index, (_, folders) in enumerate(STAGES):
        if parts[0] in folders:
            return index
    where = "folder" if len(parts) > 1 else "module or folder"
    sys.exit(f"cardgen/{parts[0]} is a top-level {where} of no pipeline rank: put the module into the folder of "
             "its rank (or add a folder to STAGES in tools/import_graph.py)")


def top_level(package: Path) -> list[str]:
    """The modules and folders of cardgen/ itself (assets aside), as module names."""
    return sorted(p.stem for p in package.iterdir()
                  if (p.suffix == ".py" or (p / "__init__.py").is_file()) and p.name != "__pycache__")


def main() -> None:
    """Print the graph and the upward imports; exit 1 when there are any."""
    args = [a for a in sys.argv[1:] if a != "--graph"]
    package = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "cardgen"
    for name in top_level(package):
        rank(name)  # a top-level module of no rank stops here, even when nothing imports it
    upward = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
        targets = sorted(imports_of(ast.parse(path.read_text(encoding="utf-8")), package) - {module})
        if "--graph" in sys.argv:
            print(f"{module or '__init__'} -> {', '.join(targets) or '-'}")
        upward += [(module, t) for t in targets if rank(t) > rank(module)]
    print("imports from an earlier stage to a later one:" if upward else "no import runs up the pipeline")
    for module, target in upward:
        print(f"  {module} ({STAGES[rank(module)][0]}) -> {target} ({STAGES[rank(target)][0]})")
    sys.exit(1 if upward else 0)


if __name__ == "__main__":
    main()
