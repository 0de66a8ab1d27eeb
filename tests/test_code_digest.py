"""Caches keyed on cardgen's own code, each on the code that makes its entries: an edit of cardgen (an editable
install) or an upgrade makes anew what it changes and nothing else, and the no-change check notices any edit."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import cardgen
from cardgen.core import bundled, codemap
from cardgen.svg import text


def _age(root: Path) -> None:
    """Make every file under root (outputs aside) look older than the racy window of the build stamps."""
    old = time.time() - 10
    for path in root.rglob("*"):
        if path.is_file() and "output" not in path.parts:
            os.utime(path, (old, old))


class Copy:
    """An editable-style copy of cardgen (first on PYTHONPATH) building the tiny game in fresh processes."""

    def __init__(self, tmp_path: Path, root: Path) -> None:
        self.parent, self.root, self.home = tmp_path / "copy", root, tmp_path / "home"
        shutil.copytree(Path(cardgen.__file__).parent, self.parent / "cardgen",
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.out = root / "output" / "tiny"
        _age(root)
        _age(self.parent)

    def edit(self, module: str, old: str = "", new: str = "") -> None:
        """Edit a module of the copy in place (with no `old`: a comment added at its end), dated before the racy
        window of the stamps and after the other files (the time alone of no other file changes)."""
        path = self.parent / "cardgen" / module
        source = path.read_text(encoding="utf-8")
        assert not old or old in source, old
        path.write_text(source.replace(old, new, 1) if old else source + "\n# edited\n", encoding="utf-8")
        os.utime(path, (time.time() - 5, time.time() - 5))

    def build(self) -> str:
        """`cardgen build` of the copy; its output."""
        code = ("import sys, cardgen; from cardgen.commands.cli import main; print(cardgen.__file__); "
                "main(sys.argv[1:], standalone_mode=False)")
        env = {**os.environ, "PYTHONPATH": str(self.parent), "XDG_CACHE_HOME": str(self.home)}
        done = subprocess.run([sys.executable, "-c", code, "--root", str(self.root), "build", "-j", "1"],
                              capture_output=True, text=True, env=env, cwd=self.home.parent, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith(str(self.parent / "cardgen")), done.stdout  # the copy ran, not the checkout
        return done.stdout

    def files(self) -> dict[str, int]:
        """The output files of the game by path, each with its inode: a file kept from the build before keeps it."""
        return {p.relative_to(self.out).as_posix(): p.stat().st_ino for p in self.out.rglob("*") if p.is_file()}

    def settings(self) -> str:
        """The build settings the no-change check compares (its key holds cardgen's code)."""
        return str(json.loads((self.out / ".build-stamps.json").read_text())["settings"])


def _drawn(output: str) -> tuple[int, int]:
    """(drawn, from cache) of a build's report."""
    found = re.search(r"(\d+) drawn, (\d+) from cache", output)
    assert found, output
    return int(found.group(1)), int(found.group(2))


def _made_from_cache(before: dict[str, int], after: dict[str, int]) -> tuple[set[str], set[str]]:
    """(kept, remade): the card images, TTS sheets and print PDFs of a build kept from the build before (the same
    file), and those made anew. The other files (build.json, the gallery's page, the TTS save) are written by every
    build that runs."""
    made = {name for name in after if name.endswith((".png", ".jpg", ".pdf")) and name != "tts/Tiny.png"}
    kept = {name for name in made if before.get(name) == after[name]}
    return kept, made - kept


CARDS = {"cards/main/alpha.png", "cards/main/beta.png", "cards/main/na.png"}


def test_an_edit_of_the_print_code_remakes_the_print_pdf_and_draws_no_card(tiny_game: Path, tmp_path: Path) -> None:
    copy = Copy(tmp_path, tiny_game)
    assert _drawn(copy.build()) == (4, 0)
    before = copy.files()
    copy.edit("outputs/pdf.py")  # a comment: the print code is another; the drawing's is the same
    again = copy.build()
    assert _drawn(again) == (0, 4) and "up to date" not in again, again
    kept, remade = _made_from_cache(before, copy.files())
    assert remade == {"print/tiny-letter.pdf"}  # the PDF alone: the card files and the TTS sheets kept
    assert CARDS | {"backs/back.png"} <= kept and [name for name in kept if name.startswith("tts/")]


def test_an_edit_of_an_output_run_on_request_remakes_its_files(tiny_game: Path, tmp_path: Path) -> None:
    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "trimmed:\n  build: true\n")
    copy = Copy(tmp_path, tiny_game)
    copy.build()
    before = copy.files()
    copy.edit("outputs/trimmed.py")  # a stage run only when game.yaml asks for it is code of the build too
    again = copy.build()
    assert "up to date" not in again, again
    kept, remade = _made_from_cache(before, copy.files())
    assert {name for name in remade if name.startswith("trimmed/")}, remade


def test_an_edit_of_a_template_helper_draws_the_cards_it_changes(tiny_game: Path, tmp_path: Path) -> None:
    copy = Copy(tmp_path, tiny_game)
    copy.build()
    before = copy.files()
    copy.edit("svg/helpers.py")  # a comment: every card rendered again to SVG, the same SVGs: none drawn
    assert _drawn(copy.build()) == (0, 4)
    copy.edit("svg/helpers.py", 'fill: str = "#000000"', 'fill: str = "#000001"')  # text_box's default colour
    edited = copy.build()
    assert _drawn(edited) == (3, 1), edited  # the three faces, not the back; they look different now
    assert re.findall(r"~ (\w+): image changed", edited) == ["alpha", "beta", "na"], edited
    kept, remade = _made_from_cache(before, copy.files())
    assert CARDS | {"print/tiny-letter.pdf"} <= remade  # the faces, and the print that holds them
    assert "backs/back.png" in kept and [name for name in kept if name.startswith("tts/tiny-back")]


def test_an_upgrade_is_noticed_by_the_no_change_check_and_makes_anew_only_what_it_changes(
        tiny_game: Path, tmp_path: Path) -> None:
    copy = Copy(tmp_path, tiny_game)
    copy.build()
    assert "tiny: up to date" in copy.build()
    before, settings = copy.files(), copy.settings()
    copy.edit("__init__.py", '__version__ = "', '__version__ = "9')  # a new version; no module draws by it
    upgraded = copy.build()
    assert copy.settings() != settings  # the no-change check saw it: the build ran again
    assert _drawn(upgraded) == (0, 4), upgraded
    assert json.loads((copy.out / "build.json").read_text())["cardgen"].startswith("9")
    assert _made_from_cache(before, copy.files())[1] == {"print/tiny-letter.pdf"}  # it says which cardgen made it
    settings = copy.settings()
    copy.edit("commands/scaffold.py")  # a module no build runs
    assert "tiny: up to date" in copy.build() and copy.settings() != settings


def test_each_cache_is_keyed_by_the_closure_of_the_modules_that_make_it() -> None:
    known = codemap.code_map()
    drawing = known.closure(["cardgen.raster.pool"])
    assert {"raster/pool.py", "raster/render.py", "core/bundled.py", "core/codemap.py"} <= set(drawing)
    assert not [name for name in drawing if name.startswith(("svg/", "outputs/", "validate/")) or name == "__init__.py"]
    printing = known.closure(["cardgen.outputs.pdf"])
    assert {"outputs/pdf.py", "outputs/imposition.py", "outputs/reportlab_compat.py"} <= set(printing)
    assert not [name for name in printing if name.startswith(("svg/", "outputs/tts/"))]
    assert "assets/gallery/gallery.js" in known.closure(["cardgen.outputs.gallery"])  # `ASSETS / "gallery"`
    assert "assets/gallery/gallery.js" not in printing
    # every asset folder a build may read is named so by a module (else no cache would be keyed on its files); the
    # fonts' licences and the icons' attribution are read by no build
    named = {asset for facts in known.files.values() for asset in facts.assets}
    folders = {name.split("/")[1] for name in known.files if name.startswith("assets/") and name.count("/") > 1}
    assert folders - named == {"fonts", "icons"}, folders - named
    assert bundled.code_digest("cardgen.raster.pool") != bundled.code_digest("cardgen.outputs.pdf")


def test_the_code_map_is_kept_and_a_file_edited_since_is_read_again(tmp_path: Path) -> None:
    """The map is read from the user's cache when each file is as kept (its path, size and time): the new process
    reads no module; an edited file is read again, and its digest changes. A file is read when a closure first
    reaches it: a digest reads the files of its closure, no other."""
    copy = tmp_path / "copy"
    shutil.copytree(Path(cardgen.__file__).parent, copy / "cardgen", ignore=shutil.ignore_patterns("__pycache__"))
    _age(copy)
    code = ("import sys; from cardgen.core import bundled, codemap; read = []; facts = codemap.read_facts; "
            "codemap.read_facts = lambda path: read.append(path.name) or facts(path); "
            "print(bundled.code_digest('cardgen.raster.pool'), len(read), len(codemap.code_map().closure("
            "['cardgen.raster.pool'])))")
    env = {**os.environ, "PYTHONPATH": str(copy), "XDG_CACHE_HOME": str(tmp_path / "home")}

    def digest() -> tuple[str, int]:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                              cwd=tmp_path)  # not the checkout's folder, whose cardgen would come first
        found, read, closure = done.stdout.split()
        return found, int(read), int(closure)

    first, read, closure = digest()
    assert read == closure and 5 < read < len(list((copy / "cardgen").rglob("*.py"))) / 2  # its closure's files, once
    assert digest() == (first, 0, closure)
    render = copy / "cardgen" / "raster" / "render.py"
    render.write_text(render.read_text() + "\n# edited\n")
    os.utime(render, (time.time() - 5, time.time() - 5))  # older than the racy window, newer than the others
    again, read, _ = digest()
    assert again != first and read == 1


_READ_ASIDE = """\
import json, os, pathlib
from cardgen.core import codemap
from cardgen.core.storage import user_store
forked, fork = [], os.fork
def noting():
    pid = fork()
    if pid:
        forked.append(pid)
    return pid
os.fork = noting
read, facts = [], codemap.read_facts
codemap.read_facts = lambda path: read.append(path.name) or facts(path)  # this process's reads (not the reader's)
with codemap.read_aside():
    pass
try:
    os.waitpid(forked[0], os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
with codemap.read_aside():  # kept now: nothing to read aside
    pass
kept = codemap.code_map().files
now = {name: facts(pathlib.Path(path)) for name, (path, *_) in codemap.code_map().stamps.items()}
print(json.dumps({"forked": len(forked), "reaped": reaped, "read": len(read), "same": kept == now,
                  "bundle": bool(list(user_store("bundle-digest").folder.rglob("*")))}))
"""


def test_a_first_run_reads_the_code_map_aside_in_a_process_of_its_own(tmp_path: Path) -> None:
    """With no map kept in the user's cache, `read_aside` forks a process that reads and keeps every file's facts and
    the bundled files' digest, and waits for it as the block ends: this process then reads no module, and finds
    the facts it would read. A map kept forks nothing; a fork refused leaves it to the build."""
    copy = tmp_path / "copy"
    shutil.copytree(Path(cardgen.__file__).parent, copy / "cardgen", ignore=shutil.ignore_patterns("__pycache__"))
    _age(copy)
    env = {**os.environ, "PYTHONPATH": str(copy), "XDG_CACHE_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", _READ_ASIDE], capture_output=True, text=True, env=env, check=True,
                          cwd=tmp_path)
    assert json.loads(done.stdout) == {"forked": 1, "reaped": True, "read": 0, "same": True, "bundle": True}
    # no process to be had: the block runs all the same, nothing read aside
    shutil.rmtree(tmp_path / "home")
    code = ("import os; from cardgen.core import codemap\n"
            "def refused(): raise OSError(11, 'Resource temporarily unavailable')\n"
            "os.fork = refused\nran = []\n"
            "with codemap.read_aside():\n    ran.append(True)\n"
            "print(ran, codemap._kept_maps()[0].has(codemap._kept_maps()[1]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.stdout.split() == ["[True]", "False"], done.stderr
    # a reader waited for by someone else first (a handler of the process's children): the block ends all the same
    code = ("import os; from cardgen.core import codemap\nfork = os.fork\n"
            "def reaped():\n    pid = fork()\n    if pid:\n        os.waitpid(pid, 0)\n    return pid\n"
            "os.fork = reaped\nwith codemap.read_aside():\n    pass\n"
            "print(codemap._kept_maps()[0].has(codemap._kept_maps()[1]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.stdout.split() == ["True"], done.stderr


def test_a_first_build_reads_the_code_map_aside_before_importing_the_pipeline(tiny_game: Path,
                                                                               tmp_path: Path) -> None:
    """A first build (no map kept) forks the map's reader before it imports the pipeline (~0.15 s, which the reader
    has to itself on the other core), then builds as ever; a build with the map kept forks none."""
    code = ("import sys, cardgen.core.codemap as codemap; aside = codemap.read_aside\n"
            "def noting():\n"
            "    print('read aside, pipeline imported:', codemap._kept_maps()[0].has(codemap._kept_maps()[1]),\n"
            "          'cardgen.build.build' in sys.modules, flush=True)\n"
            "    return aside()\n"
            "codemap.read_aside = noting\n"
            "from cardgen.commands.cli import main\n"
            "main(['--root', sys.argv[1], 'build', 'tiny', '-j', '2', *sys.argv[2:]])")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "home")}
    seen = []
    for out in ("first", "again"):
        result = subprocess.run([sys.executable, "-c", code, str(tiny_game), "--out", str(tmp_path / out)],
                                capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr
        seen.append(result.stdout.splitlines()[0])
        assert (tmp_path / out / "tiny" / "tts").is_dir()
    assert seen == ["read aside, pipeline imported: False False", "read aside, pipeline imported: True False"]


def test_the_code_stamp_covers_code_and_files_but_not_bytecode_nor_the_render_inputs() -> None:
    names = set(bundled.code_files())  # as in an installed package
    code = {Path(module.__file__).relative_to(bundled.PACKAGE).as_posix() for module in (bundled, text)}
    assert code | {"assets/fonts/OFL-Roboto.txt", "assets/gallery/gallery.js"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not names & {bundled.package_name(p) for p in bundled.render_inputs()}
    assert [name for name, *_ in bundled.code_stamp()] == list(bundled.code_files())


def test_the_map_reads_the_imports_the_whole_syntax_tree_holds() -> None:
    """The map reads only the statements that import cardgen modules (`import_statements`, looked for from the
    lines that name cardgen): for every module of the package, and for imports written across lines or after
    another statement, it finds what the module's whole syntax tree holds."""
    package = Path(cardgen.__file__).parent
    for path in sorted(package.rglob("*.py")):
        data = path.read_bytes()
        assert codemap.imports_of(codemap.import_statements(data), package) == \
            codemap.imports_of(ast.parse(data), package), path
    source = textwrap.dedent('''\
        """A docstring."""
        from cardgen.core.errors import (  # why (
            CardgenError,
            Problem)
        import os; from cardgen.core import units
        from \\
            cardgen.core import storage
        x = 1; import cardgen.core.keypaths
        def f():
            if True:
                from cardgen.raster \\
                    import render
                import cardgen.svg.text as text, json
            return "from cardgen.outputs import pdf"
        ''').encode()
    statements = codemap.import_statements(source)
    assert {type(node) for node in statements.body} == {ast.Import, ast.ImportFrom}  # those alone were parsed
    found = codemap.imports_of(statements, package)
    assert found == codemap.imports_of(ast.parse(source), package) == {
        "core.errors", "core.units", "core.storage", "core.keypaths", "raster.render", "svg.text"}
    tricky = b'x = {"a": 1}; y = "b: import cardgen.svg"\nfrom cardgen.core.units import parse_length\n'
    assert codemap.imports_of(codemap.import_statements(tricky), package) == {"core.units"}  # read whole


def _assets_in_whole_tree(tree: ast.AST) -> set[str]:
    """Every `ASSETS / "name"` of a syntax tree, every expression walked."""
    return {node.right.value for node in ast.walk(tree)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and codemap._is_assets(node.left)
            and isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)}


def test_the_map_reads_the_asset_folders_the_whole_syntax_tree_names() -> None:
    """The map walks only the statements spanning a line that names ASSETS: for every module of the package, and for
    a name written across lines, in a default argument or a nested expression, it finds what walking the whole
    tree finds (and not a name in a string)."""
    package = Path(cardgen.__file__).parent
    for path in sorted(package.rglob("*.py")):
        data = path.read_bytes()
        tree = ast.parse(data)
        assert codemap.assets_named(tree, data) == _assets_in_whole_tree(tree), path
    source = textwrap.dedent('''\
        STYLE = (
            bundled.ASSETS
            / "gallery")
        class A:
            def f(self, x=ASSETS / "icc"):
                try:
                    return [p for p in (ASSETS / "layouts").iterdir()]
                except OSError:
                    return "ASSETS / 'nothing'"
        ''').encode()
    tree = ast.parse(source)
    assert codemap.assets_named(tree, source) == _assets_in_whole_tree(tree) == {"gallery", "icc", "layouts"}
