"""MqttLink on its own: backoff, outbox drain with acks after PUBACK, behaviour with no broker."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import aiomqtt

from boardd.daemon.config import MqttConfig
from boardd.daemon.journal import AsyncJournal, Journal, OutboxRow
from boardd.daemon.mqtt import Backoff, MqttLink, RawPublication
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


async def _collect(sub: aiomqtt.Client, got: list[int], count: int, first: asyncio.Event | None = None) -> None:
    async for msg in sub.messages:
        if msg.topic.value == "boardd/t1/move":
            got.append(json.loads(bytes(msg.payload))["seq"])  # type: ignore[arg-type]
            if first is not None:
                first.set()
        if len(got) >= count:
            return


async def test_committed_rows_are_handed_over_without_reading_them_back(tmp_path: Path, mosquitto: Broker) -> None:
    journal = Journal.open(tmp_path / "j.sqlite")
    journal.start_session()
    aj = AsyncJournal(journal)
    queries: list[int] = []
    real_unacked = aj.unacked

    async def counting_unacked(*, limit: int = 100, after: int = 0) -> list[OutboxRow]:
        queries.append(after)
        return await real_unacked(limit=limit, after=after)

    aj.unacked = counting_unacked  # type: ignore[method-assign]
    got: list[int] = []
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="sub") as sub:
        await sub.subscribe("boardd/t1/#", qos=1)
        link = _link(mosquitto.port, aj, [], [])
        task = asyncio.create_task(link.run())
        await link.wait_connected()
        _, rows = await aj.record_rows(None, [_pub(1)], seq=1)
        link.offer(rows)
        assert await link.wait_acked(rows[-1].id, 10)
        before = len(queries)
        for seq in range(2, 21):
            _, rows = await aj.record_rows(None, [_pub(seq)], seq=seq)
            link.offer(rows)
            assert await link.wait_acked(rows[-1].id, 10)
        assert len(queries) == before, "rows handed over were read back from the journal"
        async with asyncio.timeout(10):
            await _collect(sub, got, 20)
        link.stop()
        await asyncio.wait_for(task, 10)
    assert got == list(range(1, 21))
    assert link.published == 20
    assert await aj.call(journal.unacked_count) == 0
    await aj.aclose()


async def test_rows_offered_during_a_backlog_go_out_once_in_order(tmp_path: Path, mosquitto: Broker) -> None:
    """Offered while the journal is still being drained: the rows come from both sides, are sent once."""
    journal = Journal.open(tmp_path / "j.sqlite")
    journal.start_session()
    journal.record(None, [_pub(i) for i in range(1, 1001)], seq=1000)
    aj = AsyncJournal(journal)
    got: list[int] = []
    first = asyncio.Event()
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="sub",
                              max_queued_incoming_messages=0) as sub:
        await sub.subscribe("boardd/t1/#", qos=1)
        link = _link(mosquitto.port, aj, [], [])
        collector = asyncio.create_task(_collect(sub, got, 1010, first))
        task = asyncio.create_task(link.run())
        await asyncio.wait_for(first.wait(), 10)
        assert not link._caught_up, "the backlog was gone before the offers: nothing tested"
        for seq in range(1001, 1011):
            _, rows = await aj.record_rows(None, [_pub(seq)], seq=seq)
            link.offer(rows)
        await asyncio.wait_for(collector, 30)
        link.stop()
        await asyncio.wait_for(task, 10)
    assert got == list(range(1, 1011))
    assert link.published == 1010, "a row was published twice"
    assert await aj.call(journal.unacked_count) == 0
    await aj.aclose()


async def test_a_commit_cut_short_by_the_shutdown_is_published_before_the_link_stops(tmp_path: Path,
                                                                                    mosquitto: Broker) -> None:
    """SIGTERM cancels the board's pipeline task while its journal commit runs on the journal thread: the rows are
    committed, but the task never hands them over (``offer``). The link's last drain at the stop must find them in the
    journal; it took only the rows handed over, so a clean stop left them unacked (the retained state stale until the
    next start: tests/daemon/test_crash.py under load, ``unacked_count() == 2`` after the final SIGTERM)."""
    journal = Journal.open(tmp_path / "j.sqlite")
    journal.start_session()
    aj = AsyncJournal(journal)
    got: list[int] = []
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="sub") as sub:
        await sub.subscribe("boardd/t1/#", qos=1)
        link = _link(mosquitto.port, aj, [], [])
        task = asyncio.create_task(link.run())
        await link.wait_connected()
        _, rows = await aj.record_rows(None, [_pub(1)], seq=1)
        link.offer(rows)
        assert await link.wait_acked(rows[-1].id, 10)
        assert link._caught_up, "the link reads the journal still: nothing tested"
        started = asyncio.Event()
        loop = asyncio.get_running_loop()

        def slow_commit() -> object:  # an fsync that takes its time
            loop.call_soon_threadsafe(started.set)
            time.sleep(0.3)
            return journal.record_rows(None, [_pub(2), _pub(3, "boardd/t1/state", retain=True)], seq=3)

        async def pipeline() -> None:  # BoardRuntime._commit
            _, more = await aj.call(slow_commit)  # type: ignore[misc]
            link.offer(more)

        commit = asyncio.create_task(pipeline())
        await asyncio.wait_for(started.wait(), 10)
        commit.cancel()  # _run_tasks at SIGTERM: the workers are cancelled, then the link stopped
        link.stop()
        await asyncio.wait_for(task, 10)
        async with asyncio.timeout(10):
            await _collect(sub, got, 2)
    assert await aj.call(journal.unacked_count) == 0
    assert got == [1, 2]
    await aj.aclose()
