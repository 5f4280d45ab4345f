"""A pulled cable: the TCP connection to the broker goes silent without being closed.

A proxy between the daemon and Mosquitto swallows all traffic for a while (no RST, no FIN),
as a dead switch or an unplugged Wi-Fi access point would. The daemon must notice through its
short keepalive (or an unacknowledged publish), reconnect once the path is back, and re-send
what never got a PUBACK: the subscriber sees every move exactly once, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from boardd.daemon.config import load_config
from boardd.daemon.service import serve
from tests.daemon._helpers import consumer, random_moves, write_config
from tests.daemon._world import factory, script
from tests.mosquitto import Broker, free_port

TEMPO = 2.5


class BlackholeProxy:
    """TCP proxy to 127.0.0.1:*target*; while ``silent`` it reads and drops every byte, both ways."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self.silent = False
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> BlackholeProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                if not self.silent:
                    dst.write(data)
                    await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.close()


async def test_silent_connection_is_noticed_and_nothing_is_lost(tmp_path: Path, mosquitto: Broker) -> None:
    moves = random_moves(41, 40)
    steps = script(moves, seed=41)
    async with BlackholeProxy(mosquitto.port) as proxy, consumer(mosquitto.port) as c:
        cfg = write_config(tmp_path, proxy.port, tempo=TEMPO)  # keepalive 5 s
        stop = asyncio.Event()
        task = asyncio.create_task(serve(load_config(cfg), stop=stop,
                                         driver_factory=factory(steps, tmp_path / "world.json", TEMPO)))
        await c.wait_for(lambda: len(c.moves("completed")) >= 4, 30, "first moves")
        proxy.silent = True
        silent_from = len(c.moves("made"))
        await asyncio.sleep(9.0)
        assert len(c.moves("made")) == silent_from, "nothing may get through a silent path"
        proxy.silent = False
        await c.wait_for(lambda: c.moves("completed") == moves, 60, "all moves after the silent period")
        await c.wait_for(lambda: (c.retained.get("state") or {}).get("moves") == moves, 10, "retained state")
        stop.set()
        assert await asyncio.wait_for(task, 20) == 0
    assert c.moves("made") == moves
    assert proxy.connections >= 2, "the daemon must have reconnected"
