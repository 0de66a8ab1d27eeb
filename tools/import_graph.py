"""Print cardgen's internal import graph (module -> cardgen modules it imports), and any import that runs
up the pipeline (from an earlier stage to a later one).

Usage: python tools/import_graph.py [--graph] [package folder]   (default: the cardgen/ of this checkout)
Without --graph only the upward imports are printed; the exit code is 1 when there are any.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

# Pipeline order: a module may import modules of its own rank or lower ranks only. The SVG renderer
# (text, templates) ranks before validation because the layout checks render cards to measure them.
STAGES = [
    ("base", ["errors", "units", "filenames", "ownership", "storage", "yamlsource", "expressions", "progress",
              "workspace", "registry", "boxes", "interrupts", "__init__"]),
    ("bundled", ["bundled"]),  # cardgen's own fonts, icons, partials and init files
    ("load", ["options", "manifest", "include", "sources", "data", "markup", "fonts", "svgart", "icons", "freshness"]),
    ("svg", ["text", "sandbox", "templates"]),
    ("context", ["context"]),
    ("validate", ["validate"]),
    ("raster", ["render", "cairo_bindings"]),
    ("record", ["record", "changes"]),
    ("outputs", ["outputs"]),
    ("build", ["plan", "build", "watch"]),
    ("playtest", ["stats", "stats_page", "simulate", "showcase"]),  # numbers, simulations, pictures to share
    ("cli", ["cli", "commands", "__main__", "scaffold", "iconsheet", "serve"]),
]


def rank(module: str) -> int:
    """The pipeline rank of a module path such as 'outputs.pdf'; a new top-level module must be given one."""
    parts = module.split(".")
    for index, (_, names) in enumerate(STAGES):
        if parts[0] in names:
            return index
    sys.exit(f"module '{module}' has no pipeline stage: add it to STAGES in tools/import_graph.py")


def imports_of(path: Path, package: Path) -> set[str]:
    """The cardgen modules a source file imports (at any level, lazy imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cardgen"):
            base = node.module.removeprefix("cardgen").lstrip(".")
            for alias in node.names:
                candidate = f"{base}.{alias.name}" if base else alias.name
                is_module = (package / (candidate.replace(".", "/") + ".py")).is_file() or \
                    (package / candidate.replace(".", "/")).is_dir()
                found.add(candidate if is_module else base)
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("cardgen.") for a in node.names if a.name.startswith("cardgen.")}
    return {f for f in found if f}


def main() -> None:
    """Print the graph and the upward imports; exit 1 when there are any."""
    args = [a for a in sys.argv[1:] if a != "--graph"]
    package = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "cardgen"
    upward = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
        targets = sorted(imports_of(path, package) - {module})
        if "--graph" in sys.argv:
            print(f"{module or '__init__'} -> {', '.join(targets) or '-'}")
        upward += [(module, t) for t in targets if rank(t) > rank(module)]
    print("imports from an earlier stage to a later one:" if upward else "no import runs up the pipeline")
    for module, target in upward:
        print(f"  {module} ({STAGES[rank(module)][0]}) -> {target} ({STAGES[rank(target)][0]})")
    sys.exit(1 if upward else 0)


if __name__ == "__main__":
    main()
