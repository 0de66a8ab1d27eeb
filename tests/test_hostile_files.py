"""Odd files in a workspace (a font that is no font, an icon that is a folder, links out of the project, a stray
byte, a full disk): each is a located finding or handled as a designer expects, never a traceback."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.hostile_example import GAME, run


def _validate(root: Path) -> tuple[int, list[str]]:
    result = run(root, "validate", GAME)
    assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit))
    return result.exit_code, [line for line in result.output.splitlines() if ": error: " in line or
                              ": warning: " in line or line.startswith(("error:", "warning:"))]


def _edit_cards(root: Path, old: str, new: str | bytes) -> None:
    cards = root / "data" / GAME / "cards.csv"
    raw = cards.read_bytes()
    assert old.encode() in raw
    cards.write_bytes(raw.replace(old.encode(), new if isinstance(new, bytes) else new.encode()))


def test_a_file_that_is_no_font_in_fonts_is_named(fresh_example: Path) -> None:
    (fresh_example / "fonts").mkdir()
    (fresh_example / "fonts" / "Broken.ttf").write_text("not a font")
    code, findings = _validate(fresh_example)
    assert code == 1 and len(findings) == 1 and findings[0].startswith("fonts/Broken.ttf: error: cannot read the "
                                                                       "file as a font"), findings


@pytest.mark.parametrize("folder, name", [("fonts", "Outside.ttf"), ("icons", "gears.svg"),
                                          (f"templates/{GAME}", "back.svg")])
def test_links_to_files_outside_the_project_are_refused(fresh_example: Path, tmp_path: Path, folder: str,
                                                         name: str) -> None:
    outside = tmp_path / "outside" / name
    outside.parent.mkdir()
    source = fresh_example / folder / name
    outside.write_bytes(source.read_bytes() if source.is_file() else
                        (Path(sys.prefix) / "bin" / "python").read_bytes()[:0] + b"<svg/>")
    source.parent.mkdir(parents=True, exist_ok=True)
    source.unlink(missing_ok=True)
    source.symlink_to(outside)
    code, findings = _validate(fresh_example)
    assert code == 1 and findings and all("outside the project" in f for f in findings), findings


def test_an_icon_that_is_not_utf8_or_is_a_folder(fresh_example: Path) -> None:
    icons = fresh_example / "icons"
    icons.mkdir()
    (icons / "gears.svg").write_bytes(b'<svg xmlns="http://www.w3.org/2000/svg">\xff\xfe</svg>')
    (icons / "delivery-drone.svg").mkdir()  # a folder with an icon's name: not an icon, the bundled one is used
    code, findings = _validate(fresh_example)
    assert code == 1 and findings and all("icons/gears.svg" in f and "not UTF-8" in f for f in findings), findings


def test_one_stray_latin1_byte_is_read_as_such_in_a_utf8_file(example: Path) -> None:
    _edit_cards(example, "Cheap, fast", "Café, fast")  # UTF-8, row 10
    _edit_cards(example, "It saw you first", b"It saw you na\xefve")  # one Latin-1 byte, row 11
    code, findings = _validate(example)
    assert code == 0 and len(findings) == 1 and findings[0].startswith(f"data/{GAME}/cards.csv:11: warning: "), \
        findings
    assert run(example, "build", "-j", "1").exit_code == 0
    texts = {c["id"]: c["text"] for c in json.loads((example / "output" / GAME / "build.json").read_text())["cards"]}
    assert "Café, fast" in texts["drone"] and "naïve" in texts["scout"]


def test_one_missing_data_file_is_one_error(fresh_example: Path) -> None:
    (fresh_example / "data" / GAME / "cards.csv").unlink()
    assert _validate(fresh_example) == (1, [f"data/{GAME}/cards.csv: error: the data file does not exist"])


def test_one_unreadable_data_file_is_one_error(fresh_example: Path) -> None:
    cards = fresh_example / "data" / GAME / "cards.csv"
    cards.write_text("name,count\n" + "".join(f"Card {i},1\n" for i in range(200_001)))  # one row too many
    code, findings = _validate(fresh_example)
    assert code == 1 and len(findings) == 1 and findings[0].startswith(f"data/{GAME}/cards.csv:"), findings


def test_a_value_under_a_column_without_a_name_is_a_warning(fresh_example: Path) -> None:
    components = fresh_example / "data" / GAME / "components.csv"
    lines = components.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    lines[header + 1:] = [line + ("" if line.startswith("#") or not line else ",") for line in lines[header + 1:]]
    lines[header] += ","
    lines[header + 1] += "forgotten"
    components.write_text("\n".join(lines) + "\n")
    code, findings = _validate(fresh_example)
    assert code == 0 and len(findings) == 1 and "has no name in the header" in findings[0], findings
    assert findings[0].startswith(f"data/{GAME}/components.csv:{header + 2}:")


def test_decomposed_accents_draw_as_composed_ones(example: Path) -> None:
    _edit_cards(example, "Cheap, fast", "Café, fast")
    assert run(example, "build", "-j", "1").exit_code == 0
    record = json.loads((example / "output" / GAME / "build.json").read_text())
    composed = next(c["hash"] for c in record["cards"] if c["id"] == "drone")
    _edit_cards(example, "Café, fast", unicodedata.normalize("NFD", "Café, fast"))
    assert run(example, "build", "-j", "1").exit_code == 0
    record = json.loads((example / "output" / GAME / "build.json").read_text())
    assert next(c["hash"] for c in record["cards"] if c["id"] == "drone") == composed  # the very same image


def test_a_font_shorthand_naming_a_missing_family_is_a_finding(fresh_example: Path) -> None:
    back = fresh_example / "templates" / GAME / "back.svg"
    back.write_text(back.read_text().replace("</svg>", "<text x='9' y='9' style=\"font: bold 12px 'Comic Sans MS', "
                                                        "serif\">x</text></svg>"))
    code, findings = _validate(fresh_example)
    assert code == 1 and findings and all("font family 'Comic Sans MS' is not available" in f for f in findings)


def test_the_font_shorthand_is_read_only_as_the_css_property_font() -> None:
    from cardgen.load.fonts import families_in_svg

    svg = ("<text style=\"font: bold 12px/1.2 'Some Family', serif\"/><text style='x;font :9pt &quot;Baz Q&quot;'/>"
           "<text style='my-font: 12px Mine; xfont: 12px Other; font-size: 12px' font-family='Plain'/>")
    assert families_in_svg(svg) == {"Some Family", "Baz Q", "Plain"}
    assert families_in_svg("font: 10px First") == {"First"}  # at the very start too


def test_no_file_is_left_in_the_temporary_folder(fresh_example: Path, tmp_path: Path) -> None:
    temp, home = tmp_path / "temp", tmp_path / "home"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "HOME": str(home)}
    for name in ("CARDGEN_FONTCONFIG_SET", "FONTCONFIG_FILE", "XDG_CACHE_HOME"):
        env.pop(name, None)
    for args in (["build", GAME, "-j", "1"], ["validate", GAME]):
        subprocess.run([sys.executable, "-m", "cardgen", "--root", str(fresh_example), *args], env=env, check=True,
                       capture_output=True)
    assert list(temp.iterdir()) == []  # not even the font cache: another user could plant files there
    assert len(list((home / ".cache" / "cardgen").glob("fonts-*.conf"))) == 1  # one, used by every run


def _full_disk(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device", "output/.cache/png/ab/abcd.png")


def test_a_full_disk_while_drawing_is_an_error(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = (example / "output" / GAME / "build.json").read_bytes()
    _edit_cards(example, "It saw you first", "It saw you second")
    monkeypatch.setattr("cardgen.raster.render.write_sealed_bytes", _full_disk)
    result = run(example, "build", "-j", "1")
    assert result.exit_code == 1 and "No space left on device" in result.output, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    assert (example / "output" / GAME / "build.json").read_bytes() == before


def test_a_full_disk_when_only_build_json_is_written_is_an_error(example: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cards = example / "data" / GAME / "cards.csv"
    os.utime(cards)  # a new time, the same content: only build.json's stamps are written again
    monkeypatch.setattr("cardgen.record.record.write_spliced", _full_disk)
    result = run(example, "build", "-j", "1")
    assert result.exit_code == 1 and "No space left on device" in result.output, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


def test_clean_of_a_folder_it_cannot_delete_says_so(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr("cardgen.core.ownership.shutil.rmtree", refuse)
    result = run(example, "clean", "--outputs")
    assert result.exit_code == 1 and "cannot remove" in result.output and "Permission denied" in result.output
    assert not any(line.startswith("removed") for line in result.output.splitlines())


# ---------------------------------------------------------------- files cardgen itself wrote, edited by others

def test_a_snapshot_with_git_conflict_markers_is_a_located_error(example: Path) -> None:
    assert run(example, "snapshot", GAME, "v1").exit_code == 0
    snapshot = example / "data" / GAME / "snapshots" / "v1.json"
    mine = snapshot.read_text()
    snapshot.write_text(f"<<<<<<< HEAD\n{mine}=======\n{mine.replace('Drone', 'Drone II')}>>>>>>> playtest-3\n")
    result = run(example, "changes", GAME, "--since", "v1")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    [error] = [line for line in result.output.splitlines() if "error:" in line]
    assert error.startswith(f"data/{GAME}/snapshots/v1.json:1: error: the file holds git merge-conflict markers")
    assert "cardgen snapshot scrapbots v1 --force" in error
    snapshot.write_text(mine[:-40])  # cut short: where the JSON breaks
    result = run(example, "changes", GAME, "--since", "v1")
    assert result.exit_code == 1 and f"data/{GAME}/snapshots/v1.json:{mine[:-40].count(chr(10)) + 1}: error: " \
        "not valid JSON" in result.output, result.output


@pytest.mark.parametrize("key, value", [("copies", 1000), ("face", "../../../../etc/hostname"),
                                        ("hash", "0" * 32)])
def test_a_hand_edited_build_json_is_never_served(example: Path, key: str, value: object) -> None:
    build = example / "output" / GAME
    record = json.loads((build / "build.json").read_text())
    original = record["cards"][0][key]
    record["cards"][0][key] = value
    (build / "build.json").write_text(json.dumps(record, indent=1))
    result = run(example, "snapshot", GAME, "v1")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"{build / 'build.json'}: error: " in result.output and "cardgen build scrapbots" in result.output
    result = run(example, "print", GAME, "--paper", "a4")  # builds what is out of date first
    assert result.exit_code == 0 and "up to date (" not in result.output, result.output
    assert json.loads((build / "build.json").read_text())["cards"][0][key] == original
    assert run(example, "snapshot", GAME, "v1").exit_code == 0


@pytest.mark.parametrize("image", ["../../../../etc/hostname", "/etc/hostname", "C:/x.png", "cards\\..\\..\\x.png"])
def test_a_build_record_never_names_an_image_outside_its_folder(built_example: Path, image: str) -> None:
    from cardgen.core.errors import CardgenError
    from cardgen.record.record import BuildRecord

    record = json.loads((built_example / "output" / GAME / "build.json").read_text())
    record["cards"][0]["face"] = image
    with pytest.raises(CardgenError, match="cards.0.face: .* is not a path inside the build folder"):
        BuildRecord.parse(record, "build.json")


def test_a_template_too_big_to_read_is_refused_before_it_is_read_even_when_imported(fresh_example: Path) -> None:
    from cardgen.svg.templates import MAX_TEMPLATE_BYTES
    macros = fresh_example / "templates" / GAME / "macros.svg"
    with macros.open("a") as file:  # an editor's runaway paste: a few MB of path data in a template it imports
        file.write("{# " + "M0 0L1 1" * (MAX_TEMPLATE_BYTES // 8 + 1) + " #}")
    code, findings = _validate(fresh_example)
    assert code == 1 and findings and all(f.startswith(f"templates/{GAME}/macros.svg: error: template ") and
                                          "the limit is 5 MB" in f for f in findings), findings
