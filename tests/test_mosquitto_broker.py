"""The test broker itself: with ``persistence=True`` a subscriber's session survives a restart.

Fault tests (broker outage, daemon killed while the broker is down) rely on it, as the hall's
Mosquitto does with ``persistence true``. Run as root, mosquitto drops to user 'mosquitto' unless told
otherwise, and then cannot save its database in pytest's private temp dir: it would forget every
session on restart, and the fault tests would fail on the broker, not on the daemon.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiomqtt

from tests.mosquitto import Broker


async def test_a_persistent_session_and_its_queue_survive_a_restart(tmp_path: Path) -> None:
    (tmp_path / "mosq").mkdir()
    with Broker(directory=tmp_path / "mosq", persistence=True) as broker:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="sub", clean_session=False) as sub:
            await sub.subscribe("t/#", qos=1)
        broker.restart()
        assert (tmp_path / "mosq" / "mosquitto.db").exists(), broker.log_path.read_text()[-1000:]
        assert "Error saving" not in broker.log_path.read_text()
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="pub") as pub:
            await pub.publish("t/1", b"queued while the subscriber was away", qos=1)
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="sub", clean_session=False) as sub:
            message = await asyncio.wait_for(anext(aiter(sub.messages)), 5)
        assert (message.topic.value, message.payload) == ("t/1", b"queued while the subscriber was away")
