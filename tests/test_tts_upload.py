"""`cardgen tts GAME --upload` against a real S3-compatible server: moto's, started on 127.0.0.1 by the test."""
from __future__ import annotations

import hashlib
import json
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest
from click.testing import CliRunner
from moto.server import ThreadedMotoServer

from cardgen.commands.cli import main

SECRET = "s3cr3t-never-shown"


@pytest.fixture
def bucket(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """An S3 server on a free port with an empty bucket `cards`; its address and a client."""
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": SECRET,
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": str(tmp_path / "none"),
                        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}.items():
        monkeypatch.setenv(name, value)  # the user's own AWS config stays out of the test
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = "http://127.0.0.1:%d" % server.get_host_and_port()[1]
    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket="cards")
    client.put_bucket_policy(Bucket="cards", Policy=json.dumps({  # anyone may read, as players' games do
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                                "Resource": "arn:aws:s3:::cards/*"}]}))
    try:
        yield endpoint, client
    finally:
        _require_auth(endpoint, "inf")  # moto's setting is the process's: back to no checks
        server.stop()


def _require_auth(endpoint: str, after: str) -> None:
    """moto checks credentials after `after` more requests (it takes any by default)."""
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=after.encode(),
                                                  headers={"Content-Type": "text/plain"}))


def run_cli(root: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--root", str(root), *args])


def with_upload(root: Path, endpoint: str) -> None:
    manifest = root / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + f"tts:\n  upload:\n    bucket: cards\n    prefix: tiny/\n"
                        f"    public_url: {endpoint}/cards\n    endpoint_url: {endpoint}\n")


def urls(root: Path) -> list[str]:
    saved = (root / "output" / "tiny" / "tts" / "Tiny.json").read_text()
    return sorted({v for line in saved.splitlines() if "URL\":" in line and (v := json.loads(
        "{" + line.strip().rstrip(",") + "}").popitem()[1])})


def test_upload_sends_what_the_bucket_lacks_and_names_it_by_content(tiny_game: Path, bucket) -> None:
    endpoint, client = bucket
    with_upload(tiny_game, endpoint)
    result = run_cli(tiny_game, "tts", "tiny", "--upload")
    assert result.exit_code == 0, result.output
    assert "tiny: uploaded 2 image(s) to cards (0 there already)" in result.output
    addresses = urls(tiny_game)
    assert len(addresses) == 2 and all(a.startswith(f"{endpoint}/cards/tiny/") for a in addresses)
    keys = {o["Key"] for o in client.list_objects_v2(Bucket="cards")["Contents"]}
    assert keys == {a.removeprefix(f"{endpoint}/cards/") for a in addresses}
    for address in addresses:  # what a remote player loads: the image's bytes, named by their hash
        data = urllib.request.urlopen(address).read()
        assert address.endswith(hashlib.sha256(data).hexdigest() + ".jpg")
        head = client.head_object(Bucket="cards", Key=address.removeprefix(f"{endpoint}/cards/"))
        assert head["ContentType"] == "image/jpeg"

    memo = json.loads((tiny_game / "output" / "tiny" / "tts" / "Tiny.json").read_text())["ObjectStates"][0]["Memo"]
    run_cli(tiny_game, "build", "tiny")  # the build notices the export changed and writes it again: file:/// addresses
    assert json.loads((tiny_game / "output" / "tiny" / "tts" / "Tiny.json").read_text())["ObjectStates"][0][
        "Memo"] != memo  # other addresses: a push replaces the deck, so that the table loads the public images
    again = run_cli(tiny_game, "tts", "tiny", "--upload")
    assert "uploaded 0 image(s) to cards (2 there already)" in again.output and urls(tiny_game) == addresses

    cards = tiny_game / "data" / "tiny" / "cards.csv"
    cards.write_text(cards.read_text().replace("Plain", "Plainer"))  # one face sheet changes, the back does not
    run_cli(tiny_game, "build", "tiny")
    edited = run_cli(tiny_game, "tts", "tiny", "--upload")
    assert "uploaded 1 image(s) to cards (1 there already)" in edited.output, edited.output
    assert len(set(urls(tiny_game)) - set(addresses)) == 1


def test_wrong_credentials_are_one_line_and_the_export_stays(tiny_game: Path, bucket, monkeypatch) -> None:
    endpoint, _ = bucket
    with_upload(tiny_game, endpoint)
    run_cli(tiny_game, "build", "tiny")
    before = urls(tiny_game)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG0")
    _require_auth(endpoint, "0")
    result = run_cli(tiny_game, "tts", "tiny", "--upload")
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "upload" in line]
    assert lines == ["error: cannot upload to bucket 'cards' (game.yaml, tts.upload): InvalidAccessKeyId: The AWS "
                     "Access Key Id you provided does not exist in our records.; check AWS_ACCESS_KEY_ID and "
                     "AWS_SECRET_ACCESS_KEY"], result.output
    assert SECRET not in result.output and "Traceback" not in result.output
    assert urls(tiny_game) == before and before[0].startswith("file:///")


def test_upload_without_a_bucket_in_game_yaml_is_refused_before_the_work(tiny_game: Path) -> None:
    result = run_cli(tiny_game, "tts", "tiny", "--upload")
    assert result.exit_code == 1 and "--upload needs the bucket" in result.output
    assert not (tiny_game / "output" / "tiny").exists()


def test_the_upload_section_is_checked_and_holds_no_credentials(tiny_game: Path) -> None:
    from cardgen.core.errors import CardgenError
    from cardgen.load.manifest import load_game

    manifest = tiny_game / "data" / "tiny" / "game.yaml"
    manifest.write_text(manifest.read_text() + "tts:\n  upload:\n    bucket: Cards_Bucket\n    prefix: /abs\n"
                        "    public_url: ftp://host/x\n    secret_access_key: abc\n")
    with pytest.raises(CardgenError) as caught:
        load_game(tiny_game, "tiny")
    wrong = sorted(p.message.split(":")[0] for p in caught.value.problems)
    assert wrong == ["tts.upload.bucket", "tts.upload.prefix", "tts.upload.public_url",
                     "tts.upload.secret_access_key"], [p.message for p in caught.value.problems]
