"""The built wheel carries everything a designer needs: installed outside the repository, in an empty folder,
`cardgen init` + `cardgen build` make card PNGs, a print PDF and a Tabletop Simulator save."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

BUNDLED = ("fonts", "icons")  # the repository's top-level folders shipped as cardgen.assets.fonts and .icons


def _run(args: list[str | Path], cwd: Path, env: dict | None = None) -> str:
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def _build_wheel(tmp: Path) -> Path:
    """Build the wheel from a clean copy of the sources (a stale build/ folder could add files to it)."""
    source = tmp / "src"
    for folder in ("cardgen", *BUNDLED):  # the fonts and icons: at the top level, mapped into the package
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, source / name)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp / "dist",
          source], cwd=tmp)
    return next((tmp / "dist").glob("cardgen-*.whl"))


def _fresh_venv(tmp: Path, wheel: Path) -> Path:
    """A new virtual environment with the wheel installed by pip.

    The wheel's dependencies are the ones this test session runs on, made visible through a .pth
    line instead of downloaded again (that would take minutes); `pip check` then confirms they
    satisfy what the wheel declares.
    """
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel], cwd=tmp)
    site = next((venv / "lib").glob("python3*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "zz-test-dependencies.pth").write_text("\n".join(deps) + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "check"], cwd=tmp)
    return venv


@pytest.mark.wheel
def test_wheel_installs_and_builds_a_new_game_in_an_empty_folder(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    # every file of the top-level fonts/ and icons/ (the fonts, the icon set, their licenses), in the package
    sources = [f"cardgen/assets/{p.relative_to(REPO).as_posix()}" for folder in BUNDLED
               for p in (REPO / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for needed in (*sources, "cardgen/assets/icons/game-icons.zip", "cardgen/assets/fonts/OFL-Roboto.txt",
                   "cardgen/assets/templates/cardgen/card.svg", "cardgen/assets/scaffold/game.yaml.tmpl",
                   "cardgen/assets/vendors/drivethrucards.yaml", "cardgen/assets/icc/cardgen-fogra39-tac240.icc",
                   "cardgen/assets/icc/README.md"):
        assert needed in names, f"{needed} is missing from the wheel"
    assert not [n for n in names if n.startswith(tuple(f"{folder}/" for folder in BUNDLED))]  # not as packages
    venv = _fresh_venv(tmp_path, wheel)
    work = tmp_path / "my folder"  # an empty folder, outside the repository, with a space in its name
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FONTCONFIG_FILE", "CARDGEN_FONTCONFIG_SET")}
    cardgen = venv / "bin" / "cardgen"
    where = _run([venv / "bin" / "python", "-c", "import cardgen; print(cardgen.__file__)"], work, env)
    assert str(venv) in where and str(REPO) not in where
    found = _run([venv / "bin" / "python", "-c", "from cardgen.core import bundled as b; "
                  "print(b.FONTS_DIR, b.ICON_BUNDLE, *sorted(p.name for p in b.render_inputs()), sep='\\n')"],
                 work, env).splitlines()
    package = Path(where.strip()).resolve().parent
    assert found[:2] == [str(package / "assets" / "fonts"), str(package / "assets" / "icons" / "game-icons.zip")]
    fonts = sorted(p.name for p in (REPO / "fonts").iterdir() if p.suffix == ".ttf")
    assert fonts and set(fonts) | {"game-icons.zip"} <= set(found[2:])  # every font and the icon set, found

    _run([cardgen, "init", "quest", "--paper", "a4"], work, env)
    assert sorted(p.name for p in work.iterdir()) == [".gitignore", "data", "templates"]
    built = _run([cardgen, "build", "quest", "-j", "2"], work, env)
    out = work / "output" / "quest"
    record = json.loads((out / "build.json").read_text())
    assert len(record["cards"]) == 4 and all((out / c["face"]).is_file() for c in record["cards"]), built
    assert (out / "backs" / "back.png").is_file()
    assert [p.name for p in (out / "print").glob("*.pdf")] == ["quest-a4.pdf"]
    saves = list((out / "tts").glob("*.json"))
    assert len(saves) == 1 and json.loads(saves[0].read_text())["ObjectStates"]
    assert "game-icons.net" in _run([cardgen, "icons", "--credits"], work, env)
    assert "cardgen, version" in _run([venv / "bin" / "python", "-m", "cardgen", "--version"], work, env)
