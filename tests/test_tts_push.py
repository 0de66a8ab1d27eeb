"""`--push`: the export sent into a running Tabletop Simulator through its External Editor API.

The stand-in game below listens on a free 127.0.0.1 port as Tabletop Simulator listens on 39999, records each
message, and answers on the editor's port as the game does (externaleditorapi.md): message 5 with the return value
of the Lua it ran, or message 3 with a Lua error. It runs the Lua with lupa against a table of objects whose
functions are the Tabletop Simulator ones the script calls (getObjectsWithTag, spawnObjectJSON, destruct ...).
"""
from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from click.testing import CliRunner
from lupa import LuaRuntime

from cardgen.commands.cli import main
from cardgen.commands.tts_push import PushTarget, push_saved_object, push_script, send_lua


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Table:
    """The objects on a stand-in game's table, and the Tabletop Simulator functions a script sees."""

    def __init__(self, objects: list[dict]) -> None:
        self.objects = [dict(o) for o in objects]
        self.spawned: list[dict] = []
        self.broadcasts: list[str] = []
        self.lua = LuaRuntime(unpack_returned_tuples=True)
        self.lua.globals().getObjectsWithTag = self.with_tag
        self.lua.globals().spawnObjectJSON = self.spawn
        self.lua.globals().broadcastToAll = self.broadcasts.append

    def run(self, script: str) -> Any:
        return self.lua.execute(script)

    def with_tag(self, tag: str) -> Any:
        return self.lua.table_from([self.as_lua(o) for o in self.objects if tag in o.get("Tags", [])])

    def as_lua(self, obj: dict) -> Any:
        transform = obj["Transform"]
        return self.lua.table_from({
            "memo": obj.get("Memo"), "held_by_color": obj.get("held"),
            "getTags": lambda: self.lua.table_from(obj.get("Tags", [])),
            "getName": lambda: obj["Nickname"], "getGMNotes": lambda: obj.get("GMNotes", ""),
            "getPosition": lambda: [transform["posX"], transform["posY"], transform["posZ"]],
            "getRotation": lambda: [transform["rotX"], transform["rotY"], transform["rotZ"]],
            "destruct": lambda: self.objects.remove(obj)})

    def spawn(self, params: Any) -> None:
        obj = json.loads(params["json"])
        if params["position"] is not None:  # spawnObjectJSON's position and rotation replace the JSON's
            for axis, pos, rot in zip("XYZ", params["position"], params["rotation"]):
                obj["Transform"][f"pos{axis}"], obj["Transform"][f"rot{axis}"] = pos, rot
        self.objects.append(obj)
        self.spawned.append(obj)


class StandIn:
    """A stand-in Tabletop Simulator on free ports: `answer` is "run" (run the Lua on `table`), "error" (a Lua
    error, as the game reports one), "kept open" (a reply in pieces on a connection left open) or "silent"."""

    def __init__(self, table: Table | None = None, answer: str = "run") -> None:
        self.table, self.answer = table or Table([]), answer
        self.received: list[dict] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port, self.reply_port = self.server.getsockname()[1], free_port()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def close(self) -> None:
        """Stop listening and end the thread (a thread left running would keep later builds from forking)."""
        self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        self.thread.join(10)

    def target(self, **options: Any) -> PushTarget:
        return PushTarget(self.port, self.reply_port, **options)

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:  # closed
                return
            with conn, conn.makefile("rb") as stream:
                data = stream.read()  # the message ends where the sender shuts its side
            message = json.loads(data)
            self.received.append(message)
            if self.answer == "run":
                self.reply({"messageID": 5, "returnValue": self.table.run(message["script"])})
            elif self.answer == "kept open":  # the answer in two pieces, and the connection left open a while
                with socket.create_connection(("127.0.0.1", self.reply_port), timeout=2) as conn:
                    conn.sendall(b'{"messageID": 2, "message": "hi"} {"messageID": 5, ')
                    time.sleep(0.2)
                    conn.sendall(b'"returnValue": "done"}')
                    time.sleep(1)
            elif self.answer == "error":
                self.reply({"messageID": 2, "message": "a print first"})
                self.reply({"messageID": 3, "error": "chunk_0:(3,4-8): attempt to call a nil value",
                            "guid": "-1", "errorMessagePrefix": "Error in Global Script: "})

    def reply(self, message: dict) -> None:
        with socket.create_connection(("127.0.0.1", self.reply_port), timeout=2) as conn:
            conn.sendall(json.dumps(message).encode())


@pytest.fixture
def stand_in() -> Iterator[Callable[..., StandIn]]:
    """Start stand-in games (StandIn's arguments); each is closed after the test."""
    started: list[StandIn] = []

    def start(*args: Any, **kwargs: Any) -> StandIn:
        started.append(StandIn(*args, **kwargs))
        return started[-1]

    yield start
    for game in started:
        game.close()


def run_cli(root: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--root", str(root), *args], catch_exceptions=False)


def saved_object(root: Path) -> dict:
    return json.loads((root / "output" / "tiny" / "tts" / "Tiny.json").read_text())


def edit_card(root: Path, old: str, new: str) -> None:
    cards = root / "data" / "tiny" / "cards.csv"
    cards.write_text(cards.read_text().replace(old, new))


def test_tts_push_replaces_only_what_changed_in_place_and_leaves_dealt_cards(tiny_game: Path, stand_in) -> None:
    run_cli(tiny_game, "build", "tiny")
    first = saved_object(tiny_game)
    deck = first["ObjectStates"][0]
    moved = {**deck, "Transform": {**deck["Transform"], "posX": 7.5, "posZ": -3.0, "rotY": 90.0}}
    dealt = {**deck["ContainedObjects"][0], "Transform": {**deck["Transform"], "posX": -9.0}}
    table = Table([moved, dealt])
    game = stand_in(table)
    args = ["--push", "--push-port", str(game.port), "--reply-port", str(game.reply_port)]

    result = run_cli(tiny_game, "tts", "tiny", *args)  # the same export: nothing is replaced
    assert "Tiny rebuilt: 1 unchanged; 1 dealt cards left alone" in result.output, result.output
    assert table.spawned == [] and len(table.objects) == 2
    assert game.received == [{"messageID": 3, "guid": "-1", "script": game.received[0]["script"]}]

    edit_card(tiny_game, "Plain", "Plainer")
    result = run_cli(tiny_game, "tts", "tiny", *args)
    assert "tiny: pushed into Tabletop Simulator: Tiny rebuilt: replaced Main; 1 dealt cards left alone" \
        in result.output, result.output
    new_deck = saved_object(tiny_game)["ObjectStates"][0]
    assert table.objects[0] == dealt  # the dealt card is as it was
    placed = table.objects[1]
    assert placed["Memo"] == new_deck["Memo"] != deck["Memo"]
    assert (placed["Transform"]["posX"], placed["Transform"]["posZ"], placed["Transform"]["rotY"]) == (7.5, -3.0, 90)
    assert placed["CustomDeck"] == new_deck["CustomDeck"] != deck["CustomDeck"]  # the new sheet's address
    assert table.broadcasts[-1] in result.output


def test_push_dealt_replaces_dealt_cards_in_place_and_removed_decks_go(tiny_game: Path, stand_in) -> None:
    run_cli(tiny_game, "build", "tiny")
    deck = saved_object(tiny_game)["ObjectStates"][0]
    card = next(c for c in deck["ContainedObjects"] if c["Nickname"] == "NA")
    dealt = {**card, "Transform": {**card["Transform"], "posX": -9.0, "rotZ": 0}}
    gone = {**deck, "Nickname": "Old deck", "Tags": [deck["Tags"][0], deck["Tags"][0] + ":abcdef"]}
    table = Table([deck, dealt, gone])
    edit_card(tiny_game, "Plain", "Plainer")
    run_cli(tiny_game, "build", "tiny")
    saved = tiny_game / "output" / "tiny" / "tts" / "Tiny.json"
    game = stand_in(table)

    result = push_saved_object(saved, "tiny", game.target(dealt=True))
    assert result.ok and result.line == "tiny: pushed into Tabletop Simulator: Tiny rebuilt: replaced Main; " \
                                        "removed Old deck; 1 dealt cards replaced", result.line
    new_card = next(o for o in table.spawned if o["Name"] == "Card")
    new_deck = saved_object(tiny_game)["ObjectStates"][0]
    assert new_card["CustomDeck"] == new_deck["CustomDeck"] != card["CustomDeck"]
    assert (new_card["GMNotes"], new_card["Transform"]["posX"], new_card["Tags"]) == (card["GMNotes"], -9.0,
                                                                                       ["cardgen:tiny"])
    assert [o["Nickname"] for o in table.objects].count("Old deck") == 0


def test_a_deck_a_player_holds_is_left_alone_and_a_missing_one_is_added(tiny_game: Path) -> None:
    run_cli(tiny_game, "build", "tiny")
    deck = saved_object(tiny_game)["ObjectStates"][0]
    table = Table([{**deck, "Memo": "old", "held": "Red"}])
    lines = table.run(push_script(saved_object(tiny_game), "tiny"))
    assert lines == "Tiny rebuilt: left alone (held): Main" and table.spawned == []
    empty = Table([])
    assert empty.run(push_script(saved_object(tiny_game), "tiny")) == "Tiny rebuilt: added Main"
    assert empty.objects[0]["Transform"] == deck["Transform"]  # where the export lays it


def test_lua_strings_survive_quotes_backslashes_and_control_characters() -> None:
    table = Table([])
    title = 'Q"uo\\te\n\x01 — ]]'
    saved = {"SaveName": title, "ObjectStates": []}
    assert table.run(push_script(saved, "g")) == f"{title} rebuilt: nothing on the table"


def test_a_lua_error_no_game_and_no_answer_are_one_line_each_and_nothing_hangs(tiny_game: Path, stand_in) -> None:
    erring = stand_in(answer="error")
    result = send_lua("return 1", erring.target())
    assert not result.ok and result.line == ("not pushed: Tabletop Simulator answered with a Lua error: Error in "
                                             "Global Script: chunk_0:(3,4-8): attempt to call a nil value")
    closed = free_port()
    result = send_lua("return 1", PushTarget(closed, free_port()))
    assert not result.ok and result.line == f"not pushed: no Tabletop Simulator on port {closed} (is it running?)"
    silent = stand_in(answer="silent")
    started = time.monotonic()
    result = send_lua("return 1", silent.target(reply_seconds=0.5))
    assert time.monotonic() - started < 2
    assert not result.ok and "did not answer within 0.5 s" in result.line

    run_cli(tiny_game, "build", "tiny")
    result = CliRunner().invoke(main, ["--root", str(tiny_game), "tts", "tiny", "--push", "--push-port", str(closed)])
    assert result.exit_code == 0 and result.output.count("not pushed") == 1
    assert "Tabletop Simulator saved object" in result.output


def test_an_answer_is_read_as_soon_as_it_is_whole_and_the_next_push_gets_its_own(stand_in) -> None:
    game = stand_in(answer="kept open")
    for _ in range(2):  # the first answer's connection, closed here first, leaves the port in TIME_WAIT
        started = time.monotonic()
        result = send_lua("return 'done'", game.target())
        assert result.ok and result.line == "pushed into Tabletop Simulator: done"
        assert time.monotonic() - started < 2


def test_push_dealt_goes_with_push(tiny_game: Path) -> None:
    result = run_cli(tiny_game, "tts", "tiny", "--push-dealt")
    assert result.exit_code == 2 and "--push-dealt goes with --push" in result.output
    assert not (tiny_game / "output").exists()


def test_a_saved_object_without_tags_is_one_line(tmp_path: Path) -> None:
    untagged = tmp_path / "Old.json"
    untagged.write_text(json.dumps({"SaveName": "Old", "ObjectStates": [{"Name": "Card", "Nickname": "A"}]}))
    result = push_saved_object(untagged, "old", PushTarget(free_port(), free_port()))
    assert not result.ok and result.line == f"old: not pushed: {untagged} is not a saved object cardgen tagged; " \
                                            "build again"


def test_an_editor_holding_the_reply_port_gets_the_answer(tiny_game: Path, stand_in) -> None:
    game = stand_in(answer="silent")
    with socket.create_server(("127.0.0.1", game.reply_port)):
        result = send_lua("return 1", game.target())
    assert result.ok and result.line.endswith(f"its answer went to the editor that holds port {game.reply_port}")
    time.sleep(0.2)
    assert game.received[0]["script"] == "return 1"


@pytest.mark.parametrize("command", ["watch", "serve"])
def test_watch_and_serve_push_every_rebuild(tiny_game: Path, command: str, stand_in) -> None:
    import subprocess
    import sys

    run_cli(tiny_game, "build", "tiny")
    table = Table(saved_object(tiny_game)["ObjectStates"])
    game = stand_in(table)
    extra = ["--port", "0", "--no-open"] if command == "serve" else []
    proc = subprocess.Popen([sys.executable, "-m", "cardgen", "--root", str(tiny_game), command, "tiny", *extra,
                             "--jobs", "1", "--push", "--push-port", str(game.port), "--reply-port",
                             str(game.reply_port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not game.received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(game.received) == 1
        edit_card(tiny_game, "Plain", "Plainer")
        saved_at = time.monotonic()
        while len(table.broadcasts) < 2 and time.monotonic() < deadline:  # the stand-in has run the Lua
            time.sleep(0.05)
        print(f"{command}: on the table {time.monotonic() - saved_at:.2f} s after the save")
        assert len(game.received) == 2 and table.broadcasts[-1] == "Tiny rebuilt: replaced Main"
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_memo_holds_what_an_object_is_but_not_where_it_lies(tiny_game: Path) -> None:
    run_cli(tiny_game, "build", "tiny")
    main_deck = saved_object(tiny_game)["ObjectStates"][0]
    game_dir = tiny_game / "data" / "tiny"
    (game_dir / "extra.csv").write_text("name,power,text,count\nGamma,4,More,2\nDelta,5,Less,1\n")
    manifest = game_dir / "game.yaml"
    manifest.write_text(manifest.read_text().replace("decks:\n", "decks:\n  extra:\n    source: extra.csv\n"
                                                     "    face: face.svg\n    back: back.svg\n", 1))
    run_cli(tiny_game, "build", "tiny")
    decks = {o["Nickname"]: o for o in saved_object(tiny_game)["ObjectStates"]}
    moved = decks[main_deck["Nickname"]]
    assert moved["Transform"] != main_deck["Transform"]  # the new deck lies beside it: it moved over
    assert moved["Memo"] == main_deck["Memo"] and moved["Tags"] == main_deck["Tags"] == ["cardgen:tiny",
                                                                                         f"cardgen:tiny:{moved['GUID']}"]
    assert all(c["Tags"] == ["cardgen:tiny"] for d in decks.values() for c in d["ContainedObjects"])
