"""The real daemon (boardd.daemon.serve, in-process) speaking sd_notify to a socket bound by the test.

This is what the units in systemd/ rely on: READY=1 once the board is open, WATCHDOG=1 while the
board and MQTT components progress, STOPPING=1 at shutdown, and no watchdog starvation when the
broker is down (a restart would not bring the broker back, and the board must keep recording).
The board is a quiet fake driver: it is open and sends nothing, like a board between moves.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from boardd import sdnotify
from boardd.config import load_config
from boardd.daemon import serve
from tests.mosquitto import Broker, free_port


class QuietBoard:
    """A driver that opens and then reports nothing (a board between moves)."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def __aenter__(self) -> QuietBoard:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        return None

    async def send(self, command: Any) -> None:
        self.sent.append(command)

    async def events(self) -> AsyncIterator[Any]:
        await asyncio.Event().wait()
        yield  # pragma: no cover - never reached


def quiet_factory(_kind: str, _options: object, *, time_source: Any) -> QuietBoard:
    return QuietBoard()


def write_config(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "boardd.toml"
    path.write_text(f"""
[mqtt]
host = "127.0.0.1"
port = {port}
keepalive = 5

[journal]
directory = "{tmp_path / 'state'}"

[[board]]
id = "t1"
[board.driver]
kind = "sim"
""")
    return path


@pytest.fixture
def notify_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    # 6 s: above the daemon's 5 s idle timer tick (its board progress) and keepalive/2 (its MQTT progress).
    monkeypatch.setenv("WATCHDOG_USEC", "6000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    try:
        yield sock
    finally:
        sock.close()


@pytest.fixture
def watchdogs(monkeypatch: pytest.MonkeyPatch) -> list[sdnotify.ProgressWatchdog]:
    """Every ProgressWatchdog the daemon creates, for inspection."""
    created: list[sdnotify.ProgressWatchdog] = []

    class Recording(sdnotify.ProgressWatchdog):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            created.append(self)

    monkeypatch.setattr(sdnotify, "ProgressWatchdog", Recording)
    return created


async def run_daemon(config: Path, sock: socket.socket, seconds: float) -> list[str]:
    """Run the daemon for ``seconds``, stop it, and return the notifications in order."""
    received: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(serve(load_config(config), stop=stop, driver_factory=quiet_factory))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        received += _drain(sock)
        await asyncio.sleep(0.05)
    stop.set()
    assert await asyncio.wait_for(task, 20) == 0
    received += _drain(sock)
    return received


def _drain(sock: socket.socket) -> list[str]:
    out = []
    while True:
        try:
            out.append(sock.recv(4096).decode())
        except BlockingIOError:
            return out


async def test_ready_watchdog_stopping_in_order(tmp_path: Path, mosquitto: Broker,
                                                notify_socket: socket.socket,
                                                watchdogs: list[sdnotify.ProgressWatchdog]) -> None:
    received = await run_daemon(write_config(tmp_path, mosquitto.port), notify_socket, 4.0)
    assert received[0].split("\n")[0] == "READY=1"
    assert received[-1] == "STOPPING=1"
    middle = received[1:-1]
    # Checks at 0 s and 3 s (interval / 2) while everything progresses.
    assert middle.count("WATCHDOG=1") >= 2, received
    assert not [m for m in middle if m.startswith("STATUS=stalled")], received
    [watchdog] = watchdogs
    assert watchdog.interval == 6.0
    assert watchdog.last_progress("mqtt:t1") is not None
    assert set(watchdog.components) == {"board:t1", "mqtt:t1"}


async def test_broker_down_still_counts_as_mqtt_progress(tmp_path: Path, notify_socket: socket.socket,
                                                         watchdogs: list[sdnotify.ProgressWatchdog]) -> None:
    """With no broker at all, the MQTT loop still turns (connect attempts): it must report progress."""
    received = await run_daemon(write_config(tmp_path, free_port()), notify_socket, 2.5)
    assert received[0].split("\n")[0] == "READY=1"
    [watchdog] = watchdogs
    # The MQTT task made several connect attempts during these seconds; each one is progress.
    assert watchdog.last_progress("mqtt:t1") is not None
