"""Image addresses in the saved object: `file:///` URLs of the export's own folder, as Tabletop Simulator
writes them, or URLs under the `base_url` the images are uploaded to."""
from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    pass


def file_url(path: Path) -> str:
    """A file:/// URL as Tabletop Simulator writes one for a local image: the plain absolute path with its
    spaces (file:///C:/Users/Me/My Games/... on Windows), except `%` and `#`, which would otherwise start an
    escape or cut the address short."""
    absolute = _escaped(path.resolve().as_posix())
    return "file://" + (absolute if absolute.startswith("/") else "/" + absolute)


def _escaped(path: str) -> str:
    return path.replace("%", "%25").replace("#", "%23")


def url_maker(base_url: str | None, folder: Path) -> Callable[[str], str]:
    """The URL of an image of the export by its file name: under `base_url`, or a file:/// URL in `folder`."""
    if base_url:
        return lambda name: f"{base_url.rstrip('/')}/{urllib.parse.quote(name)}"
    # The folder resolved once, not each image's path: resolving walks every folder of it again (~0.5 ms an image).
    at = file_url(folder)
    return lambda name: f"{at}/{_escaped(name)}"
