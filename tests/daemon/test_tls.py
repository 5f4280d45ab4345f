"""The daemon against the hall broker of config/mosquitto: TLS, a password file, the broker's ACLs."""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path

import aiomqtt
import pytest

from boardd.daemon.config import load_config
from boardd.daemon.service import serve
from tests.daemon._helpers import random_moves, scaled_timing
from tests.daemon._world import factory, script
from tests.mosquitto import Broker, free_port
from tests.security._hall import hall_config, make_accounts, make_ca

pytestmark = pytest.mark.broker
TEMPO = 2.5


async def test_daemon_over_tls_with_credentials_and_acl(tmp_path: Path) -> None:
    accounts = tmp_path / "accounts"
    credentials = make_accounts(accounts, "t1")
    ca = make_ca(tmp_path / "ca")
    plain, tls_port = free_port(), free_port()
    (tmp_path / "mosq").mkdir()
    broker = Broker(directory=tmp_path / "mosq", extra_config=hall_config(accounts, ca, plain, tls_port),
                    port=tls_port)
    (tmp_path / "board.pass").write_text(credentials["board-t1"] + "\n")
    config_path = tmp_path / "boardd.toml"
    config_path.write_text(f"""
[mqtt]
host = "localhost"
port = {tls_port}
username = "board-t1"
password_file = "board.pass"
keepalive = 5
[mqtt.tls]
ca = "{ca / 'boardd-ca.crt'}"

[journal]
directory = "state"

[[board]]
id = "t1"
[board.driver]
kind = "sim"
[board.game]
time_control = "300+0"
{scaled_timing(TEMPO)}
""")
    moves = random_moves(31, 6)
    tls = ssl.create_default_context(cafile=str(ca / "boardd-ca.crt"))
    broker.start()
    try:
        stop = asyncio.Event()
        task = asyncio.create_task(serve(load_config(config_path), stop=stop, driver_factory=factory(
            script(moves, seed=31), tmp_path / "world.json", TEMPO)))
        async with aiomqtt.Client("localhost", tls_port, username="display", password=credentials["display"],
                                  tls_context=tls, identifier="screen") as screen, \
                aiomqtt.Client("localhost", tls_port, username="arbiter", password=credentials["arbiter"],
                               tls_context=tls, identifier="tablet") as tablet:
            await screen.subscribe("boardd/t1/#", qos=1)
            state: dict[str, object] = {}
            async with asyncio.timeout(40):
                async for msg in screen.messages:
                    if msg.topic.value == "boardd/t1/state":
                        state = json.loads(bytes(msg.payload))  # type: ignore[arg-type]
                        if state["moves"] == moves:
                            break
            await tablet.subscribe("boardd/t1/cmd-result", qos=1)
            await tablet.publish("boardd/t1/cmd/set-result", b'{"id": "r1", "result": "1-0"}', qos=1)
            # the display account may not send commands: the broker drops it, the daemon never sees it
            await screen.publish("boardd/t1/cmd/set-result", b'{"id": "evil", "result": "0-1"}', qos=1)
            async with asyncio.timeout(10):
                async for msg in tablet.messages:
                    answer = json.loads(bytes(msg.payload))  # type: ignore[arg-type]
                    assert answer["id"] == "r1" and answer["ok"] is True
                    break
            await asyncio.sleep(1.0)
        stop.set()
        assert await asyncio.wait_for(task, 20) == 0
    finally:
        broker.stop()
    from boardd.daemon.journal import Journal

    journal = Journal.open(tmp_path / "state" / "t1.sqlite")
    results = [e for _, e in journal.events() if type(e).__name__ == "SetResult"]
    assert [r.result for r in results] == ["1-0"]  # "evil" never reached the daemon
