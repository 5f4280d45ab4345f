"""The real daemon (boardd.daemon.service.serve, in-process) speaking sd_notify to a socket bound by the test.

This is what the units in systemd/ rely on: READY=1 once the board is open, WATCHDOG=1 while the
board and MQTT components progress, STOPPING=1 at shutdown, and no watchdog starvation when the
broker is down (a restart would not bring the broker back, and the board must keep recording).
The board is a quiet fake driver: it is open and sends nothing, like a board between moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from boardd.daemon import sdnotify
from boardd.daemon.config import load_config
from boardd.daemon.service import serve
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


# -- a hung driver must starve the watchdog; an unplugged one that keeps retrying must not ------------------------


class ActiveBoard(QuietBoard):
    """A driver that sends no events but reports ``last_activity`` like a real one.

    Every ``poll`` seconds it touches ``last_activity`` (an answer to its idle poll, or a reconnect
    attempt while the device is unplugged), until ``hang`` is set: then its loop stops turning
    (port open, no bytes, no reconnect attempt), the failure the watchdog exists for.
    """

    def __init__(self, time_source: Any, hang: asyncio.Event, poll: float = 0.2) -> None:
        super().__init__()
        self._now = time_source
        self._hang = hang
        self._poll = poll
        self.last_activity: float = time_source()
        self.polls = 0

    async def events(self) -> AsyncIterator[Any]:
        while not self._hang.is_set():
            self.last_activity = self._now()
            self.polls += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hang.wait(), self._poll)
        await asyncio.Event().wait()  # hung: nothing more, ever
        yield  # pragma: no cover - never reached


@pytest.fixture
def short_watchdog(notify_socket: socket.socket, monkeypatch: pytest.MonkeyPatch) -> socket.socket:
    # 4 s: the daemon checks driver activity every 1.3 s (stall limit 4 s) and the MQTT link
    # reports progress every keepalive/2 = 2.5 s.
    monkeypatch.setenv("WATCHDOG_USEC", "4000000")
    return notify_socket


async def _run_until(config: Path, sock: socket.socket, factory: Any, done: Any, *,
                     on_datagram: Any = lambda _d: None, within: float = 30.0) -> list[str]:
    """Run the daemon until ``done()`` holds (checked at every datagram and every 50 ms), then stop it."""
    received: list[str] = []
    stop = asyncio.Event()
    task = asyncio.create_task(serve(load_config(config), stop=stop, driver_factory=factory))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    try:
        while not done():
            assert loop.time() < deadline, f"condition not reached within {within} s: {received}"
            assert not task.done(), f"daemon ended early: {task}"
            for datagram in _drain(sock):
                received.append(datagram)
                on_datagram(datagram)
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 20) == 0
    received += _drain(sock)
    return received


async def test_hung_driver_stops_the_pings_and_is_named(tmp_path: Path, mosquitto: Broker,
                                                        short_watchdog: socket.socket,
                                                        watchdogs: list[sdnotify.ProgressWatchdog],
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """The reader task stays alive but the driver's loop stops: the daemon must stop feeding systemd."""
    hang = asyncio.Event()
    boards: list[ActiveBoard] = []

    def factory(_kind: str, _options: object, *, time_source: Any) -> ActiveBoard:
        boards.append(ActiveBoard(time_source, hang))
        return boards[0]

    def on_datagram(datagram: str) -> None:
        if datagram == "WATCHDOG=1":
            hang.set()  # the daemon was healthy (first ping): now the driver hangs

    def withheld_twice() -> bool:
        return bool(watchdogs) and watchdogs[0].withheld >= 2

    received = await _run_until(write_config(tmp_path, mosquitto.port), short_watchdog, factory, withheld_twice,
                                on_datagram=on_datagram)
    assert hang.is_set() and boards[0].polls >= 1
    stalled = [i for i, d in enumerate(received) if d.startswith("STATUS=stalled")]
    assert stalled, received
    assert "board:t1" in received[stalled[0]], received
    assert "mqtt:t1" not in received[stalled[0]], received  # the broker was fine: only the board is named
    # No ping after the watchdog found the stall (systemd kills the service WatchdogSec after the last one).
    assert "WATCHDOG=1" not in received[stalled[0]:], received
    assert "board:t1" in watchdogs[0].stalled()
    # The daemon's own log says which board and why, before the watchdog's verdict.
    hung = [r for r in caplog.records if r.name == "boardd.daemon.service" and "board t1" in r.getMessage()
            and "no activity" in r.getMessage()]
    assert hung and hung[0].levelname == "ERROR", [r.getMessage() for r in caplog.records]


async def test_unplugged_board_that_keeps_retrying_keeps_the_pings(tmp_path: Path, mosquitto: Broker,
                                                                   short_watchdog: socket.socket,
                                                                   watchdogs: list[sdnotify.ProgressWatchdog],
                                                                   ) -> None:
    """No event at all for longer than the watchdog interval, but reconnect attempts: not a hang."""
    never = asyncio.Event()
    boards: list[ActiveBoard] = []

    def factory(_kind: str, _options: object, *, time_source: Any) -> ActiveBoard:
        boards.append(ActiveBoard(time_source, never, poll=0.5))
        return boards[0]

    def checked_past_the_limit() -> bool:
        # six checks, 2 s apart: 10 s without a single driver event, past the 4 s stall limit twice
        return bool(watchdogs) and watchdogs[0].pings + watchdogs[0].withheld >= 6

    received = await _run_until(write_config(tmp_path, mosquitto.port), short_watchdog, factory,
                                checked_past_the_limit)
    assert boards[0].polls >= 10
    assert not [d for d in received if d.startswith("STATUS=stalled") and "board:t1" in d], received
    assert "board:t1" not in watchdogs[0].stalled()
    assert received.count("WATCHDOG=1") >= 5, received
