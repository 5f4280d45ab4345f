"""A recording MQTT subscriber and the bare-Mosquitto baseline for ``bench.bench_daemon``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import aiomqtt

__all__ = ["Received", "Recorder", "iso_seconds", "mosquitto_baseline", "recorder"]

_LOGGER = logging.getLogger(__name__)


def iso_seconds(text: str) -> float:
    """Unix seconds of an ISO-8601 ``...Z`` timestamp (the envelope's ``ts``)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True, slots=True)
class Received:
    """One message as it arrived: wall-clock arrival time, topic, raw payload, retain flag."""

    at: float
    topic: str
    payload: bytes
    retain: bool

    def json(self) -> dict[str, Any] | None:
        """The payload as a JSON object, or None (PGN text, garbage)."""
        try:
            value = json.loads(self.payload)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class Recorder:
    """Subscribes (QoS 1) and keeps every message with its arrival time; parsing is left for later."""

    def __init__(self, port: int, topic: str) -> None:
        self.port = port
        self.topic = topic
        self.messages: list[Received] = []
        self.connected = asyncio.Event()
        self._changed = asyncio.Event()

    async def run(self) -> None:
        """Receive until cancelled."""
        async with aiomqtt.Client("127.0.0.1", self.port, identifier=f"bench-rec-{time.monotonic_ns()}",
                                  max_queued_incoming_messages=0) as client:
            await client.subscribe(self.topic, qos=1)
            self.connected.set()
            async for message in client.messages:
                arrival = time.time()
                payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
                self.messages.append(Received(arrival, message.topic.value, payload, bool(message.retain)))
                self._changed.set()

    async def wait_for(self, predicate: Callable[[], bool], within: float) -> bool:
        """Wait until *predicate* holds (checked at each message); False after *within* seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))
        return True


@contextlib.asynccontextmanager
async def recorder(port: int, topic: str) -> AsyncIterator[Recorder]:
    """A running :class:`Recorder`, connected and subscribed."""
    rec = Recorder(port, topic)
    task = asyncio.create_task(rec.run(), name="bench recorder")
    try:
        await asyncio.wait_for(rec.connected.wait(), 15)
        yield rec
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def mosquitto_baseline(port: int, count: int = 200, gap: float = 0.01) -> tuple[list[float], list[float]]:
    """Bare QoS 1 publishes on loopback: (publish call -> PUBACK, publish call -> arrival at a subscriber), s.

    aiomqtt's ``publish()`` with QoS 1 returns when the PUBACK arrived. Publisher and
    subscriber live in this process, like the daemon benchmark's subscriber.
    """
    acks: list[float] = []
    arrivals: dict[int, float] = {}
    sent: dict[int, float] = {}
    done = asyncio.Event()
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"bench-base-sub-{time.monotonic_ns()}") as sub, \
            aiomqtt.Client("127.0.0.1", port, identifier=f"bench-base-pub-{time.monotonic_ns()}") as pub:
        await sub.subscribe("bench/baseline", qos=1)

        async def read() -> None:
            async for message in sub.messages:
                now = time.perf_counter()
                raw = message.payload if isinstance(message.payload, bytes) else b"-1"
                arrivals[int(raw)] = now
                if len(arrivals) >= count:
                    done.set()

        reader = asyncio.create_task(read())
        payload_pad = b" " * 600  # about the size of a move message
        for i in range(count):
            t0 = time.perf_counter()
            sent[i] = t0
            await pub.publish("bench/baseline", str(i).encode() + payload_pad, qos=1)
            acks.append(time.perf_counter() - t0)
            await asyncio.sleep(gap)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 10)
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    return acks, [arrivals[i] - sent[i] for i in sorted(arrivals) if i in sent]
