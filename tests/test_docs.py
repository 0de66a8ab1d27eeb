"""The README and docs/ are the manual: every command, every option and every manifest key is documented.

Commands and options come from walking the click command tree, manifest keys from walking the pydantic
models of game.yaml, so a command, option or key added anywhere in cardgen fails here until it is
described. A command counts as documented when a paragraph or table row of README.md or docs/*.md
names it (`cardgen print`); each of its options when one of those paragraphs or rows names the flag.
"""
from __future__ import annotations

import re
import typing

import click
from pydantic import BaseModel

from cardgen.commands.cli import main
from cardgen.load.fonts import FontBook
from cardgen.load.manifest import game_model
from tests.conftest import REPO


def _blocks() -> list[str]:
    """Paragraphs and table rows of the manual."""
    blocks = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for paragraph in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
            rows = [line for line in paragraph.splitlines() if line.lstrip().startswith("|")]
            blocks += rows if rows else [paragraph]
    return blocks


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    context = click.Context(group)
    for name in group.list_commands(context):  # the lazily loaded commands (print, tts) too
        command = group.get_command(context, name)
        assert command is not None
        path = f"{prefix}{name}"
        found.append((path, command))
        if isinstance(command, click.Group):
            found += _commands(command, path + " ")
    return found


def _flag(option: click.Option) -> str:
    return max(option.opts, key=len)


def test_every_command_and_option_is_documented() -> None:
    blocks = _blocks()
    missing = []
    for flag in (_flag(p) for p in main.params if isinstance(p, click.Option)):
        if not any(flag in block for block in blocks):
            missing.append(f"global option {flag}")
    for path, command in _commands(main):
        naming = [b for b in blocks if re.search(rf"cardgen {re.escape(path)}(?![\w-])", b)]
        if not naming:
            missing.append(f"command `cardgen {path}` (no paragraph or table row names it)")
            continue
        for option in (p for p in command.params if isinstance(p, click.Option) and not p.hidden):
            flags = option.opts + option.secondary_opts
            if not any(re.search(rf"{re.escape(f)}(?![\w-])", b) for f in flags for b in naming):
                missing.append(f"option {_flag(option)} of `cardgen {path}`")
    assert not missing, ("Undocumented in README.md or docs/*.md (describe each in the paragraph or table row "
                         "that names its command):\n  " + "\n  ".join(missing))


def _model_of(annotation: object) -> list[type[BaseModel]]:
    """The manifest models an annotation holds (inside unions, lists and dicts)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _model_of(arg)]


def _keys(model: type[BaseModel], prefix: str, seen: set) -> list[tuple[str, str]]:
    keys = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        keys.append((f"{prefix}{key}", key))
        for inner in _model_of(info.annotation):
            if inner not in seen:
                keys += _keys(inner, f"{prefix}{key}.", seen | {inner})
    return keys


def test_every_manifest_key_is_documented() -> None:
    text = "\n".join(_blocks())
    code = " ".join(re.findall(r"```.*?```|`[^`\n]+`", text, re.S))  # code spans and fenced examples
    missing = [path for path, key in _keys(game_model(), "", {game_model()})
               if not re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", code)]
    assert not missing, ("Manifest keys (game.yaml) not described in README.md or docs/*.md; write each as "
                         "`key` in the manifest reference:\n  " + "\n  ".join(missing))


def test_readme_names_every_bundled_font_family(tmp_path) -> None:
    """The README's "Fonts." paragraph lists the bundled families: each family the fonts folder holds is named."""
    paragraph = next(block for block in _blocks() if block.startswith("**Fonts.**"))
    listed = re.search(r"bundled with cardgen \(([^;]*);", paragraph)
    assert listed, paragraph
    named = {name.strip() for name in listed.group(1).replace("\n", " ").split(",")}
    assert named == set(FontBook(tmp_path / "no-fonts").families)


def test_every_template_helper_and_its_choices_are_documented() -> None:
    from cardgen.svg.helper_table import HELPERS

    section = (REPO / "README.md").read_text(encoding="utf-8").split("\n## Templates\n")[1].split("\n## ")[0]
    names = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]  # each row's first cell
    missing = []
    for helper in HELPERS:
        row = next((cell for cell in names if f"`{helper.name}(" in cell), None)
        if row is None:
            missing.append(f"{helper.name}: no row of the table names `{helper.name}(`")
            continue
        missing += [f"{helper.name}: its row does not say {argument}={'/'.join(allowed)}"
                    for argument, allowed in helper.choices.items() if f"{argument}={'/'.join(allowed)}" not in row]
    documented = {name for cell in names for name in re.findall(r"`(\w+)\(", cell)}
    missing += [f"{name}: in the table but not a helper of HELPERS" for name in documented - {h.name for h in HELPERS}]
    recipe = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").split("new template helper")[1]
    assert "cardgen/svg/helper_table.py" in recipe and "`HELPERS`" in recipe
    assert not missing, "Template helpers (cardgen/svg/helper_table.py) not in README's Templates table:\n  " + \
        "\n  ".join(missing)
