"""`--push`: a game's Tabletop Simulator export sent into a running Tabletop Simulator.

Through its External Editor API (Berserk-Games/Tabletop-Simulator-API, docs/externaleditorapi.md): the game listens
on 127.0.0.1:39999 for JSON messages, and message 3 ("Execute Lua Code", guid "-1": Global) runs a script. What
the game answers does not come back on that connection: it connects to the editor's port, 39998, and sends a
message there, 5 with the script's return value or 3 with a Lua error. So a push listens on the editor's port
first, then sends, then waits a bounded time for the answer. The script (PUSH_LUA) finds the objects of the
game's earlier export by the tags the export gives them (`outputs.tts.objects.mark_for_push`), replaces those
that changed in place, and says on the table what it did.

A push never stops a build: every way it can fail (the game not running, an editor holding the reply port, no
answer, a Lua error) is one line of `PushResult`. The command line imports this module for its options: json and
socket (~4 ms) are imported by a push only.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple

import click

if TYPE_CHECKING:
    import socket

GAME_PORT = 39999  # where Tabletop Simulator listens (externaleditorapi.md, "Tabletop Simulator as the Server")
EDITOR_PORT = 39998  # where it sends its answers (ibid., "Atom as the Server")
CONNECT_SECONDS = 2.0  # a game on this machine accepts at once; a port that does not is not a game
REPLY_SECONDS = 10.0  # the script replaces a few objects: well under a second in a running game
MAX_MESSAGE_BYTES = 1 << 20  # an answer is a line of text; a bigger one is not the game's
EXECUTE_LUA, RETURN_VALUE, LUA_ERROR = 3, 5, 3

# The script run in Global. GAME, PREFIX, NEW (the objects to lay out: slot tag, memo, name, JSON), CARDS (card id
# -> a card's JSON, when dealt cards are to be replaced too) are set before it. TTS objects' methods are called
# with a dot (obj.getTags()), as the Lua API documents them.
PUSH_LUA = """
local function slot_of(obj)
  for _, tag in ipairs(obj.getTags()) do
    if tag:sub(1, #PREFIX) == PREFIX then return tag end
  end
  return nil
end

local function replace(old, json)
  local position, rotation = old.getPosition(), old.getRotation()
  old.destruct()
  spawnObjectJSON({json = json, position = position, rotation = rotation})
end

local wanted, found = {}, {}
for _, entry in ipairs(NEW) do wanted[entry.slot] = entry end
local replaced, added, removed, held = {}, {}, {}, {}
local unchanged, dealt, redealt = 0, 0, 0
for _, obj in ipairs(getObjectsWithTag(GAME)) do
  local slot = slot_of(obj)
  if obj.held_by_color ~= nil then
    table.insert(held, obj.getName())  -- a player is moving it: not taken from their hand
    if slot ~= nil then found[slot] = true end
  elseif slot == nil then
    local card = CARDS[obj.getGMNotes()]
    if card ~= nil then replace(obj, card); redealt = redealt + 1 else dealt = dealt + 1 end
  elseif wanted[slot] == nil then
    table.insert(removed, obj.getName()); obj.destruct()
  elseif not found[slot] then
    found[slot] = true
    if obj.memo == wanted[slot].memo then unchanged = unchanged + 1
    else table.insert(replaced, wanted[slot].name); replace(obj, wanted[slot].json) end
  end
end
for _, entry in ipairs(NEW) do
  if not found[entry.slot] then table.insert(added, entry.name); spawnObjectJSON({json = entry.json}) end
end

local said = {}
local function say(list, what)
  if #list > 0 then table.insert(said, what .. " " .. table.concat(list, ", ")) end
end
say(replaced, "replaced"); say(added, "added"); say(removed, "removed"); say(held, "left alone (held):")
if unchanged > 0 then table.insert(said, unchanged .. " unchanged") end
if redealt > 0 then table.insert(said, redealt .. " dealt cards replaced") end
if dealt > 0 then table.insert(said, dealt .. " dealt cards left alone") end
local summary = TITLE .. " rebuilt: " .. (#said > 0 and table.concat(said, "; ") or "nothing on the table")
broadcastToAll(summary)
return summary
"""


class PushResult(NamedTuple):
    """What a push did, as the one line a command prints: `ok` when the game ran the script."""

    ok: bool
    line: str


class PushTarget(NamedTuple):
    """Where a push goes: the game's port, the port its answers come to, whether dealt cards are replaced too,
    and how long to wait for the connection and for the answer."""

    port: int = GAME_PORT
    reply_port: int = EDITOR_PORT
    dealt: bool = False
    connect_seconds: float = CONNECT_SECONDS
    reply_seconds: float = REPLY_SECONDS


def lua_string(text: str) -> str:
    """`text` as a Lua string literal: backslashes, quotes and control characters escaped (`\\ddd`, decimal, as
    Lua reads it); other characters are written as they are (Lua strings are bytes, UTF-8 here)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\{ord(m.group()):03d}", escaped) + '"'


def push_script(saved: dict, game: str, dealt: bool = False) -> str:
    """The Lua that lays a saved object's objects (`<Game-title>.json` of the export) out on the table."""
    import json

    from cardgen.outputs.tts.objects import game_tag  # not with the command line: the export's modules load pydantic

    tag = game_tag(game)
    entries = []
    cards: dict[str, str] = {}
    for obj in saved["ObjectStates"]:
        slot = next(t for t in obj["Tags"] if t != tag)
        entries.append("{slot = %s, memo = %s, name = %s, json = %s}" % (
            lua_string(slot), lua_string(obj["Memo"]), lua_string(obj["Nickname"] or obj["Name"]),
            lua_string(json.dumps(obj))))
        for card in [obj, *obj.get("ContainedObjects", [])] if dealt else []:
            if card["Name"] == "Card":  # a dealt card takes its place at the table with the game's tag only
                cards.setdefault(card["GMNotes"], json.dumps({**card, "Tags": [tag]}))
    card_table = ", ".join(f"[{lua_string(k)}] = {lua_string(v)}" for k, v in cards.items())
    return (f"local GAME, PREFIX, TITLE = {lua_string(tag)}, {lua_string(tag + ':')}, "
            f"{lua_string(saved['SaveName'])}\nlocal NEW = {{{', '.join(entries)}}}\n"
            f"local CARDS = {{{card_table}}}\n{PUSH_LUA}")


def push_saved_object(path: Path, game: str, target: PushTarget) -> PushResult:
    """Push the export's saved object at `path` into the game Tabletop Simulator is running."""
    import json

    try:
        script = push_script(json.loads(path.read_text(encoding="utf-8")), game, target.dealt)
    except (OSError, ValueError) as exc:
        return PushResult(False, f"{game}: not pushed: cannot read {path}: {exc}")
    except (KeyError, TypeError, StopIteration):  # not an export of this version: its objects carry no tags
        return PushResult(False, f"{game}: not pushed: {path} is not a saved object cardgen tagged; build again")
    result = send_lua(script, target)
    return PushResult(result.ok, f"{game}: {result.line}")


def push_built_game(out_dir: Path, target: PushTarget) -> PushResult:
    """Push the export of the game built in `out_dir` (output/<game>)."""
    from cardgen.core.errors import CardgenError
    from cardgen.outputs.tts.stage import saved_object_path
    from cardgen.record.record import BuildRecord

    try:
        saved = saved_object_path(out_dir, BuildRecord.of_build(out_dir))
    except CardgenError as exc:
        return PushResult(False, f"{out_dir.name}: not pushed: {exc.problems[0].message}")
    return push_saved_object(saved, out_dir.name, target)


def send_lua(script: str, target: PushTarget) -> PushResult:
    """Run `script` in Global with an Execute Lua Code message, and wait for its answer (see the module)."""
    import json
    import socket

    message = json.dumps({"messageID": EXECUTE_LUA, "guid": "-1", "script": script}).encode()
    listener = _listen(target.reply_port)
    try:
        with socket.create_connection(("127.0.0.1", target.port), timeout=target.connect_seconds) as conn:
            conn.sendall(message)
            conn.shutdown(socket.SHUT_WR)  # the end of the message: the game reads the JSON up to here
    except OSError as exc:
        if listener is not None:
            listener.close()
        why = "is it running?" if isinstance(exc, ConnectionRefusedError) else f"{exc.strerror or exc}"
        return PushResult(False, f"not pushed: no Tabletop Simulator on port {target.port} ({why})")
    if listener is None:
        return PushResult(True, f"pushed into Tabletop Simulator; its answer went to the editor that holds port "
                                f"{target.reply_port}")
    with listener:
        return _answer(listener, target.reply_seconds)


def _listen(port: int) -> socket.socket | None:
    """A socket listening on 127.0.0.1:`port`, or None when something else (an editor's plugin) holds it."""
    import socket

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # The last push's answer may have left the port in TIME_WAIT (closed here first): that is no editor holding
    # it. A socket listening on it still makes the bind fail, on Linux and macOS; on Windows SO_REUSEADDR would
    # let two listen at once, so there the exclusive flag is asked instead.
    flag = getattr(socket, "SO_EXCLUSIVEADDRUSE", socket.SO_REUSEADDR)
    listener.setsockopt(socket.SOL_SOCKET, flag, 1)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError:
        listener.close()
        return None
    listener.listen(4)
    return listener


def _answer(listener: socket.socket, seconds: float) -> PushResult:
    """The game's answer to the script: its return value (message 5) or its Lua error (message 3); other
    messages the game sends meanwhile (prints, saves) are passed over."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        listener.settimeout(left)
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            break
        for message in _messages(conn, deadline):
            if message.get("messageID") == RETURN_VALUE:
                return PushResult(True, f"pushed into Tabletop Simulator: {message.get('returnValue')}")
            if message.get("messageID") == LUA_ERROR and "error" in message:
                return PushResult(False, f"not pushed: Tabletop Simulator answered with a Lua error: "
                                         f"{message.get('errorMessagePrefix', '')}{message['error']}")
    return PushResult(False, f"pushed into Tabletop Simulator, but it did not answer within {seconds:g} s")


def _messages(conn: socket.socket, deadline: float) -> Iterator[dict[str, Any]]:
    """The JSON messages one connection brings (one or more objects back to back), each as soon as it is whole,
    until the connection closes, the deadline passes or more than MAX_MESSAGE_BYTES come."""
    import json

    decoder, text, size = json.JSONDecoder(), "", 0
    with conn:
        while size <= MAX_MESSAGE_BYTES and (left := deadline - time.monotonic()) > 0:
            conn.settimeout(left)
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            size += len(chunk)
            text = (text + chunk.decode("utf-8", errors="replace")).lstrip()
            while text:
                try:
                    value, end = decoder.raw_decode(text)
                except ValueError:
                    break  # not whole yet
                if isinstance(value, dict):
                    yield value
                text = text[end:].lstrip()


def push_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of a push, for `cardgen tts`, `watch` and `serve`."""
    for option in reversed([
        click.option("--push", is_flag=True,
                     help="Send the game's Tabletop Simulator objects into a running Tabletop Simulator "
                          "(its External Editor API), replacing those that changed in place."),
        click.option("--push-dealt", is_flag=True,
                     help="With --push, also replace cards dealt from the decks (default: left alone)."),
        click.option("--push-port", type=click.IntRange(1, 65535), default=GAME_PORT, show_default=True,
                     help="The port Tabletop Simulator listens on."),
        click.option("--reply-port", type=click.IntRange(1, 65535), default=EDITOR_PORT, show_default=True,
                     help="The port its answers come to (an editor's)."),
    ]):
        command = option(command)
    return command


def target_of(push: bool, push_dealt: bool, push_port: int, reply_port: int) -> PushTarget | None:
    """The push the options ask for (None: no push)."""
    if push_dealt and not push:
        raise click.UsageError("--push-dealt goes with --push")
    return PushTarget(push_port, reply_port, push_dealt) if push else None


def report(result: PushResult) -> None:
    """Print a push's line: on standard output when it worked, in red on standard error when not."""
    if result.ok:
        click.echo(result.line)
    else:
        click.secho(result.line, fg="red", err=True)
