"""URL sources: a sheet kept online (a Google Sheets export or "publish to web" link, any http(s) CSV, XLSX or JSON).

Each fetch is bounded (CONNECT_SECONDS to connect, READ_SECONDS for the whole answer, MAX_URL_BYTES) and asks the
server whether its copy changed (If-None-Match / If-Modified-Since): a 304 costs a round trip and nothing else. The
last good copy is kept in the user's cache (`~/.cache/cardgen/sources/`, written atomically, with the digest of its
bytes checked before it is used). When the server cannot be reached or answers with an error (or a web page: a
sign-in page instead of the sheet), the build reads that copy and says in one warning how old it is; with no copy,
it is one error naming the URL.
"""
from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardgen.core.errors import CardgenError, Problem
from cardgen.core.registry import imported

if TYPE_CHECKING:
    from cardgen.load.data import Table
    from cardgen.load.manifest import DataSource, Game

CONNECT_SECONDS = 10.0
READ_SECONDS = 30.0  # for the whole answer, however slowly it trickles
MAX_URL_BYTES = 100_000_000  # as a data file
_CHUNK = 1 << 16
_TYPES = {"text/csv": "csv", "text/tab-separated-values": "tsv", "application/json": "json",
          "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
          "application/vnd.oasis.opendocument.spreadsheet": "ods"}
_read_now: dict[str, str] = {}  # URL -> digest of the copy this process read last (what the build records)


class FetchFailed(Exception):
    """The server could not be reached or did not answer with the sheet; the message says why, for people."""


@dataclass
class Copy:
    """The last good copy of a URL in the user's cache."""

    body: Path
    meta: dict[str, Any]

    @property
    def age(self) -> str:
        """How long ago the server last gave (or confirmed) this copy, for people."""
        seconds = max(0.0, time.time() - float(self.meta.get("checked", 0)))
        for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
            if seconds >= size:
                count = int(seconds // size)
                return f"{count} {unit}{'s' if count > 1 else ''} old"
        return "less than a minute old"


def _folder(url: str) -> Path | None:
    from cardgen.core.storage import user_cache

    cache = user_cache()
    return cache / "sources" / hashlib.sha256(url.encode()).hexdigest()[:32] if cache else None


def _copy(url: str) -> Copy | None:
    """The cached copy of a URL when there is one whose bytes are those noted (never a damaged one)."""
    folder = _folder(url)
    if folder is None:
        return None
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        body = folder / "body"
        if meta.get("url") == url and meta.get("sha256") == hashlib.sha256(body.read_bytes()).hexdigest():
            return Copy(body, meta)
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _keep(url: str, data: bytes, headers: Any, old: Copy | None) -> Copy:
    """Keep a new answer as the URL's copy (the body, then its note: a copy is never half written)."""
    from cardgen.core.storage import write_bytes, write_json

    meta = {"url": url, "sha256": hashlib.sha256(data).hexdigest(), "checked": time.time(),
            "etag": headers.get("ETag"), "modified": headers.get("Last-Modified"),
            "type": headers.get_content_type() if data else (old.meta.get("type") if old else None)}
    folder = _folder(url)
    if folder is None:  # no user cache: the answer is used once, from a folder removed when the process ends
        import atexit
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="cardgen-url-"))
        atexit.register(shutil.rmtree, folder, True)
    write_bytes(folder / "body", data)
    write_json(folder / "meta.json", meta)
    return Copy(folder / "body", meta)


def _confirmed(url: str, copy: Copy) -> Copy:
    from cardgen.core.storage import write_json

    copy.meta["checked"] = time.time()
    folder = _folder(url)
    if folder is not None:
        write_json(folder / "meta.json", copy.meta)
    return copy


class _NoRedirectOffHttp(urllib.request.HTTPRedirectHandler):
    """Follows redirects (Google's export answers with one) to http(s) addresses only."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        """The request for the redirect's target, or None (not followed) when it is not http(s)."""
        if not newurl.lower().startswith(("http://", "https://")):
            return None
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch(url: str) -> Copy:
    """The URL's current copy: asked of the server with what the cached copy was (304: the cached copy);
    FetchFailed when the server cannot be reached or does not give the sheet."""
    old = _copy(url)
    request = urllib.request.Request(url, headers={"User-Agent": "cardgen", "Accept": "*/*"})
    if old and old.meta.get("etag"):
        request.add_header("If-None-Match", old.meta["etag"])
    if old and old.meta.get("modified"):
        request.add_header("If-Modified-Since", old.meta["modified"])
    opener = urllib.request.build_opener(_NoRedirectOffHttp)
    try:
        with opener.open(request, timeout=CONNECT_SECONDS) as answer:
            data = _body(answer)
            if _is_web_page(answer.headers.get_content_type(), data):
                raise FetchFailed("the address answered with a web page, not the sheet (a sign-in page?): share the "
                                  "sheet with 'Anyone with the link' or use File > Share > Publish to web, CSV")
            return _keep(url, data, answer.headers, old)
    except urllib.error.HTTPError as exc:
        if exc.code == 304 and old:
            return _confirmed(url, old)
        raise FetchFailed(f"the server answered {exc.code} {exc.reason}" + _hint(exc.code)) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchFailed(f"cannot reach the server ({reason})") from None


def _hint(code: int) -> str:
    if code in (401, 403):
        return " (the sheet is not shared: share it with 'Anyone with the link' or publish it to the web)"
    if code == 404:
        return " (no such sheet: check the link, and the gid of the tab)"
    return ""


def _body(answer: Any) -> bytes:
    """The answer's bytes, within MAX_URL_BYTES (a declared length over it is refused before reading) and
    READ_SECONDS for the whole of it."""
    declared = answer.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > MAX_URL_BYTES:
        raise FetchFailed(f"the answer is {int(declared):,} bytes, more than the limit of {MAX_URL_BYTES:,}")
    deadline, parts, size = time.monotonic() + READ_SECONDS, [], 0
    while chunk := answer.read1(_CHUNK):
        size += len(chunk)
        if size > MAX_URL_BYTES:
            raise FetchFailed(f"the answer is more than the limit of {MAX_URL_BYTES:,} bytes")
        if time.monotonic() > deadline:
            raise FetchFailed(f"the answer took more than {READ_SECONDS:g} s")
        parts.append(chunk)
    return b"".join(parts)


def _is_web_page(content_type: str, data: bytes) -> bool:
    return content_type in ("text/html", "application/xhtml+xml") or \
        data.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))


def format_of(url: str, copy: Copy, source: DataSource) -> str:
    """The format of a URL's answer: the source's `format:`, else the address's (Google's `format=` or
    `output=`, or its path's suffix), else the answer's content type; CSV when nothing says."""
    if source.format:
        return source.format
    parsed = urllib.parse.urlparse(url)
    query = urllib.parse.parse_qs(parsed.query)
    for name in ("format", "output"):
        if query.get(name, [""])[0].lower() in ("csv", "tsv", "xlsx", "ods", "json"):
            return query[name][0].lower()
    suffix = Path(parsed.path).suffix.lower().lstrip(".")
    if suffix in ("csv", "tsv", "xlsx", "ods", "json"):
        return suffix
    return _TYPES.get(str(copy.meta.get("type")), "csv")


def read_url(game: Game, source: DataSource) -> Table:
    """A URL source's rows, read from its current copy (or, failing that, from the last good one, with a warning
    saying how old it is); its rows are located at the URL and their row."""
    from cardgen.load.sources import READERS

    url, note = str(source.url), None
    try:
        copy = fetch(url)
    except FetchFailed as exc:
        kept = _copy(url)
        if kept is None:
            raise CardgenError(f"cannot read the sheet: {exc}; and there is no copy of it from an earlier build",
                               file=url, rule="source-offline") from None
        copy, note = kept, Problem(f"cannot read the sheet ({exc}); this build uses the copy from an earlier one, "
                                   f"{kept.age}", file=url, severity="warning", rule="source-offline")
    _read_now[url] = copy.meta["sha256"]
    table: Table = imported(READERS["." + format_of(url, copy, source)].read)(copy.body, url, source)
    if note:
        table.problems.insert(0, note)
    return table


def url_stamp(root: Path, url: str) -> list[int]:
    """The stamp of a URL: the digest of the copy this process read last (a build records what it read), else of
    its current copy (asked of the server: a 304 costs nothing), else of the last good copy; [-1, -1] with none."""
    digest = _read_now.pop(url, None)
    if digest is None:
        try:
            digest = fetch(url).meta["sha256"]
        except FetchFailed:
            kept = _copy(url)
            digest = kept.meta["sha256"] if kept else None
    return [int(str(digest)[:15], 16)] if digest else [-1, -1]
