"""Shared helpers of the daemon tests: config writing, a deduping MQTT consumer, a random game."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt
import chess


def random_moves(seed: int, plies: int) -> list[str]:
    rng = random.Random(seed)
    board = chess.Board()
    moves: list[str] = []
    for _ in range(plies):
        legal = list(board.legal_moves)
        if not legal:
            break
        move = rng.choice(legal)
        moves.append(move.uci())
        board.push(move)
    return moves


def scaled_timing(tempo: float) -> str:
    """A [board.rules.timing] table with the spec's defaults divided by *tempo* (players moving faster)."""
    from boardd.core.settings import Timing

    d = Timing()
    names = ("t_flicker", "t_settle", "t_scan", "t_simul", "t_latency", "t_knock", "t_adjust", "t_bounce")
    return "[board.rules.timing]\n" + "".join(f"{n} = {getattr(d, n) / tempo:.4f}\n" for n in names)


def write_config(tmp_path: Path, port: int, *, board: str = "t1", extra: str = "", tokens: str = "",
                 tempo: float = 1.0, game: str = "") -> Path:
    path = tmp_path / "boardd.toml"
    path.write_text(f"""
[mqtt]
host = "127.0.0.1"
port = {port}
keepalive = 5
prefix = "boardd"

[journal]
directory = "{tmp_path / 'state'}"
{tokens}
[[board]]
id = "{board}"
[board.driver]
kind = "sim"
[board.game]
event = "Test Open"
round = "1"
board_no = 1
time_control = "300+0"
white = "Alice"
black = "Bob"
{game}
{scaled_timing(tempo)}
{extra}
""")
    return path


@dataclass
class Consumer:
    """Subscribes to ``boardd/<board>/#`` like a broadcast screen; dedupes on (board, session, seq)."""

    port: int
    board: str = "t1"
    seen: set[tuple[str, int, int]] = field(default_factory=set)
    messages: list[tuple[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    retained: dict[str, Any] = field(default_factory=dict)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    persistent: bool = False

    def moves(self, phase: str = "completed") -> list[str]:
        return [p["uci"] for t, p in self.messages if t.endswith("/move") and p["phase"] == phase]

    def of(self, kind: str) -> list[Any]:
        return [p for t, p in self.messages if t.endswith("/" + kind)]

    async def run(self) -> None:
        while True:
            try:
                async with aiomqtt.Client("127.0.0.1", self.port, identifier=f"consumer-{id(self)}",
                                          clean_session=not self.persistent) as client:
                    await client.subscribe(f"boardd/{self.board}/#", qos=1)
                    self.connected.set()
                    async for msg in client.messages:
                        self._on(msg.topic.value, bytes(msg.payload) if isinstance(msg.payload, bytes | bytearray)
                                 else str(msg.payload).encode())
            except aiomqtt.MqttError:
                self.connected.clear()
                await asyncio.sleep(0.2)

    def _on(self, topic: str, raw: bytes) -> None:
        if "/cmd/" in topic:
            return
        if topic.endswith("/pgn"):
            self.retained["pgn"] = raw.decode()
            return
        payload = json.loads(raw)
        key = (payload["board"], payload["session"], payload["seq"])
        kind = topic.rsplit("/", 1)[-1]
        if kind in {"state", "status"}:
            self.retained[kind] = payload
        if key in self.seen:
            self.duplicates += 1
            return
        self.seen.add(key)
        self.messages.append((topic, payload))

    async def wait_for(self, predicate: Any, within: float, what: str = "condition") -> None:
        deadline = time.monotonic() + within
        while not predicate():
            if time.monotonic() > deadline:
                seqs = sorted(s for _, _, s in self.seen)
                gaps = [s for s in range(1, seqs[-1]) if s not in set(seqs)] if seqs else []
                raise AssertionError(f"timed out waiting for {what}; state moves="
                                     f"{(self.retained.get('state') or {}).get('moves')}; completed={self.moves()}; "
                                     f"made={self.moves('made')}; seq gaps={gaps}; dups={self.duplicates}")
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def consumer(port: int, board: str = "t1", *, persistent: bool = False) -> AsyncIterator[Consumer]:
    """A consumer; *persistent* keeps its session (and queued QoS 1 messages) across its reconnects."""
    c = Consumer(port, board, persistent=persistent)
    task = asyncio.create_task(c.run(), name="consumer")
    try:
        await asyncio.wait_for(c.connected.wait(), 10)
        yield c
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def read_retained(port: int, topic: str, within: float = 5.0) -> bytes | None:
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"reader-{time.monotonic_ns()}") as client:
        await client.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(within):
                async for msg in client.messages:
                    if msg.retain:
                        return bytes(msg.payload) if isinstance(msg.payload, bytes | bytearray) else None
        except TimeoutError:
            return None
    return None


async def send_command(port: int, board: str, name: str, payload: bytes | dict[str, Any],
                       within: float = 10.0) -> dict[str, Any]:
    """Publish a command and wait for its cmd-result (matched on id)."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    cid = payload.get("id") if isinstance(payload, dict) else None
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"arbiter-{time.monotonic_ns()}") as client:
        await client.subscribe(f"boardd/{board}/cmd-result", qos=1)
        await client.publish(f"boardd/{board}/cmd/{name}", raw, qos=1)
        async with asyncio.timeout(within):
            async for msg in client.messages:
                result = json.loads(bytes(msg.payload))  # type: ignore[arg-type]
                if cid is None or result.get("id") == cid:
                    return dict(result)
    raise AssertionError("no cmd-result")
