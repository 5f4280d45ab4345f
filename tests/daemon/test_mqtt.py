"""MqttLink on its own: backoff, outbox drain with acks after PUBACK, behaviour with no broker."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import aiomqtt

from boardd.config import MqttConfig
from boardd.journal import AsyncJournal, Journal
from boardd.mqtt import Backoff, MqttLink, RawPublication
from tests.mosquitto import Broker, free_port


def test_backoff_is_jittered_exponential_and_capped() -> None:
    b = Backoff(base=0.5, cap=8.0, floor=0.1, rng=random.Random(1))
    delays = [b.next() for _ in range(12)]
    ceilings = [min(8.0, 0.5 * 2**n) for n in range(12)]
    assert all(0.1 <= d <= max(c, 0.1) for d, c in zip(delays, ceilings, strict=True))
    assert len(set(delays)) == len(delays)  # jittered
    assert max(delays[6:]) > 2.0  # it does grow
    b.reset()
    assert b.attempt == 0 and b.next() <= 0.5


def _pub(seq: int, topic: str = "boardd/t1/move", retain: bool = False) -> RawPublication:
    return RawPublication(topic, json.dumps({"v": 1, "board": "t1", "session": 1, "seq": seq}).encode(), retain, 1)


def _link(port: int, journal: AsyncJournal, commands: list[tuple[str, bytes]], progress: list[int]) -> MqttLink:
    async def on_connect() -> None:
        return None

    async def on_command(name: str, payload: bytes) -> None:
        commands.append((name, payload))

    return MqttLink(config=MqttConfig(host="127.0.0.1", port=port, keepalive=5), client_id="link-test",
                    root="boardd/t1", journal=journal,
                    will=RawPublication("boardd/t1/status", b'{"state":"offline"}', True, 1),
                    on_connect=on_connect, on_command=on_command, on_progress=lambda: progress.append(1),
                    backoff=Backoff(base=0.2, cap=0.5))


async def test_drains_outbox_in_order_and_acks(tmp_path: Path, mosquitto: Broker) -> None:
    journal = Journal.open(tmp_path / "j.sqlite")
    journal.start_session()
    journal.record(None, [_pub(i) for i in range(1, 121)], seq=120)
    aj = AsyncJournal(journal)
    commands: list[tuple[str, bytes]] = []
    progress: list[int] = []
    got: list[int] = []
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="sub") as sub:
        await sub.subscribe("boardd/t1/#", qos=1)
        link = _link(mosquitto.port, aj, commands, progress)
        task = asyncio.create_task(link.run(final=lambda: RawPublication("boardd/t1/status", b'{"seq":999}', True,
                                                                           1)))
        async with asyncio.timeout(20):
            async for msg in sub.messages:
                payload = json.loads(bytes(msg.payload))  # type: ignore[arg-type]
                if msg.topic.value == "boardd/t1/move":
                    got.append(payload["seq"])
                if len(got) == 120:
                    break
        await link.wait_connected()
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="arbiter") as arb:
            await arb.publish("boardd/t1/cmd/ack", b'{"id":"x"}', qos=1)
        for _ in range(100):
            if commands:
                break
            await asyncio.sleep(0.05)
        link.stop()
        await asyncio.wait_for(task, 10)
    assert got == list(range(1, 121))
    assert await aj.call(journal.unacked_count) == 0
    assert commands == [("ack", b'{"id":"x"}')]
    assert progress and link.connects == 1
    await aj.aclose()


async def test_no_broker_keeps_trying_reports_progress_and_stops(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path / "j.sqlite")
    journal.start_session()
    journal.record(None, [_pub(1)], seq=1)
    aj = AsyncJournal(journal)
    progress: list[int] = []
    link = _link(free_port(), aj, [], progress)
    task = asyncio.create_task(link.run())
    await asyncio.sleep(1.5)
    assert not link.connected and len(progress) >= 2
    link.stop()
    await asyncio.wait_for(task, 3)
    assert await aj.call(journal.unacked_count) == 1  # nothing acked without a PUBACK
    await aj.aclose()
