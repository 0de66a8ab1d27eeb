"""YAML files of one kind that cardgen bundles and a workspace may add to or replace in a folder of its own
(sheet layouts in `layouts/`, print-on-demand vendors in `vendors/`): names, the workspace's own files, and one
file read and validated with a located error per problem."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, TypeVar

from pydantic import BaseModel, ValidationError

from cardgen.core.errors import CardgenError, Problem, saved_meanwhile
from cardgen.core.keypaths import line_of

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
Model = TypeVar("Model", bound=BaseModel)


@dataclass(frozen=True)
class Read:
    """One file of a catalogue as read: its validated spec, where messages say it is, and its key's lines."""

    spec: Any
    shown: str
    lines: Any


@dataclass(frozen=True)
class Catalogue:
    """Files `<name>.yaml` of one kind: the workspace's `folder/` first, then cardgen's `bundled` folder."""

    kind: str  # what messages call one: "sheet layout", "vendor"
    plural: str  # and several: "layouts", "vendors"
    folder: str  # the workspace's own folder, beside data/ and templates/
    bundled: Path

    def names(self, root: Path) -> list[str]:
        """Every name a workspace can use: its own and the bundled ones."""
        folders = [root / self.folder, self.bundled]
        return sorted({p.stem for folder in folders if folder.is_dir() for p in folder.glob("*.yaml")})

    def own_files(self, root: Path) -> list[Path]:
        """The workspace's own files (what a build reads besides the manifest)."""
        folder = root / self.folder
        return sorted(folder.glob("*.yaml")) if folder.is_dir() else []

    def read(self, root: Path, name: str, model: type[Model], read_as: Mapping[str, str] | None = None) -> Read:
        """The file called `name`, validated by `model`: CardgenError naming the file and line of each problem.
        `read_as`: the content digest of the game's settings files as its load read them (`Game.read_as`), for a
        stage reading one again: a file saved since is refused, not used (the build is keyed by what it loaded)."""
        own = root / self.folder / f"{name}.yaml"
        path = own if own.is_file() else self.bundled / f"{name}.yaml"
        if not NAME.match(name) or not path.is_file():
            raise CardgenError(f"no {self.kind} '{name}'; the {self.plural} are {', '.join(self.names(root))} (write "
                               f"your own as {self.folder}/{name if NAME.match(name) else 'NAME'}.yaml)")
        shown = f"{self.folder}/{name}.yaml" if path == own else f"cardgen's {self.folder}/{name}.yaml"
        if path == own and not own.resolve().is_relative_to(root.resolve()):
            raise CardgenError(f"the {self.kind} file is a link to a file outside the workspace; copy the file here",
                               file=shown)
        from cardgen.core.yamlsource import parse_yaml_bytes, read_yaml

        data = read_yaml(path, shown)
        if read_as is not None and read_as.get(str(path), "") not in ("", hashlib.sha256(data).hexdigest()):
            raise CardgenError(saved_meanwhile(f"the {self.kind} file", "the build used it"), file=shown)
        raw, lines = parse_yaml_bytes(data, shown)
        try:
            spec = model.model_validate(raw)
        except ValidationError as exc:
            raise CardgenError([Problem(f"{'.'.join(str(p) for p in e['loc']) or self.kind}: "
                                        f"{e['msg'].removeprefix('Value error, ')}", file=shown,
                                        row=line_of(lines, tuple(e["loc"]))) for e in exc.errors()]) from None
        return Read(spec, shown, lines)
