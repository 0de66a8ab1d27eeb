"""`cardgen tts GAME --upload`: the export's images put in an S3-compatible bucket, so that every player of a game
loads them (`file:///` addresses load on the host's machine only).

Each image is stored under a name made of its content's hash (`<prefix><sha256>.jpg`): a name is never reused for
other pixels, so Tabletop Simulator, which keeps images by address, never shows an old one, and an image the
bucket has (from an earlier upload, or another game) is not sent again. What the bucket holds is listed once, under
the prefix. The saved object is then written again with the public addresses. Credentials are boto3's own (the
environment, or its usual config files): cardgen neither reads nor prints them.
"""
from __future__ import annotations

import hashlib
import json
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardgen.core.errors import CardgenError
from cardgen.options.tts import UploadSpec

CONTENT_TYPES = {".jpg": "image/jpeg", ".png": "image/png"}


@dataclass(frozen=True)
class Uploaded:
    """What an upload did: how many images were sent, and how many the bucket had already."""

    sent: int
    kept: int


def upload_export(saved: Path, game: str, spec: UploadSpec, client: Any = None) -> Uploaded:
    """Upload the images the saved object at `saved` names (files beside it) to the bucket, and write the saved
    object again with their public addresses (and the hashes `--push` compares, which hold them). `client`: a
    boto3 S3 client (default: one made from `spec`)."""
    from cardgen.outputs.tts.objects import mark_for_push, write_saved_object

    data = json.loads(saved.read_text(encoding="utf-8"))
    images = _images(data, saved.parent, spec)
    names = {url: spec.prefix + digest + path.suffix for url, (digest, path) in images.items()}
    client = client or _client(spec)
    try:
        present = _listed(client, spec)
        missing = {name: images[url][1] for url, name in names.items() if name not in present}
        for name, path in missing.items():
            client.put_object(Bucket=spec.bucket, Key=name, Body=path.read_bytes(),
                              ContentType=CONTENT_TYPES[path.suffix])
    except Exception as exc:  # botocore's errors: one line naming the bucket, never the credentials
        raise CardgenError(f"cannot upload to bucket '{spec.bucket}' (game.yaml, tts.upload): {_reason(exc)}") from None
    public = spec.public_url.rstrip("/")
    _addresses(data, {url: f"{public}/{name}" for url, name in names.items()})
    mark_for_push(data["ObjectStates"], game)
    write_saved_object(saved, data)
    return Uploaded(len(missing), len(names) - len(missing))


def _images(saved: dict, folder: Path, spec: UploadSpec) -> dict[str, tuple[str, Path]]:
    """The saved object's image addresses that name an image of `folder`, each with that file and its hash: a
    file address names it by its name, an address of an earlier upload by its hash (so an upload run again on the
    saved object it rewrote finds its images)."""
    files = {path.name: path for path in folder.iterdir() if path.suffix in CONTENT_TYPES}
    hashes = {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in files.values()}
    by_name = {spec.prefix + digest + path.suffix: path for path, digest in hashes.items()}
    public = spec.public_url.rstrip("/") + "/"
    found = {}
    for url, name in _addresses(saved).items():
        path = by_name.get(url[len(public):]) if url.startswith(public) else files.get(name)
        if path is not None:
            found[url] = (hashes[path], path)
    return found


def _addresses(saved: dict, replace: dict[str, str] | None = None) -> dict[str, str]:
    """The image addresses of a saved object (its `...URL` fields) with the file name each ends in; with
    `replace`, those addresses it maps are replaced."""
    found: dict[str, str] = {}
    stack: list[Any] = [saved]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack += node
        elif isinstance(node, dict):
            for key, value in node.items():
                if key.endswith("URL") and isinstance(value, str) and value:
                    found[value] = urllib.parse.unquote(value.rsplit("/", 1)[-1])
                    node[key] = (replace or {}).get(value, value)
                else:
                    stack.append(value)
    return found


def _client(spec: UploadSpec) -> Any:
    """A boto3 S3 client for the bucket (boto3 is imported only by an upload)."""
    import boto3
    from botocore.config import Config

    # Bounded: a host that does not answer is an error in seconds, not minutes of retries.
    bounds = Config(connect_timeout=5, read_timeout=30, retries={"max_attempts": 2})
    return boto3.client("s3", endpoint_url=spec.endpoint_url, region_name=spec.region, config=bounds)


def _listed(client: Any, spec: UploadSpec) -> set[str]:
    """The names the bucket holds under the prefix."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=spec.bucket, Prefix=spec.prefix)
    return {item["Key"] for page in pages for item in page.get("Contents", [])}


def _reason(exc: Exception) -> str:
    """What went wrong, from botocore's error: the service's code and message, or the error's own text."""
    error = getattr(exc, "response", {}).get("Error", {})
    if error:
        code, message = error.get("Code", ""), error.get("Message", "")
        hint = "; check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" if code in (
            "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403") else ""
        return f"{code}: {message}{hint}" if message else f"{code}{hint}"
    return str(exc)
