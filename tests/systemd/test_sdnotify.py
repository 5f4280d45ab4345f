"""sd_notify protocol and the progress watchdog, against sockets bound by the test."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardd.daemon.sdnotify import Notifier, ProgressWatchdog


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    """A bound Unix datagram socket standing in for systemd's notify socket."""
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    try:
        yield str(path), sock
    finally:
        sock.close()


def _drain(sock: socket.socket) -> list[str]:
    """Every datagram waiting on the socket, decoded."""
    received = []
    sock.setblocking(False)
    try:
        while True:
            received.append(sock.recv(4096).decode())
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(2)
    return received


def test_lifecycle_messages_arrive_in_order(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    env = {"NOTIFY_SOCKET": path}
    notifier = Notifier.from_environment(env)
    assert notifier.enabled
    assert notifier.ready()
    assert notifier.status("board connected\nwaiting for clock")
    assert notifier.watchdog()
    assert notifier.stopping()
    assert [sock.recv(4096).decode() for _ in range(4)] == [
        "READY=1",
        "STATUS=board connected waiting for clock",
        "WATCHDOG=1",
        "STOPPING=1",
    ]
    assert notifier.sent == 4
    assert notifier.failures == 0
    notifier.close()


def test_ready_with_status_is_one_datagram(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    notifier = Notifier(path)
    notifier.ready("board t12 on /dev/boardd/dgt-A1")
    assert sock.recv(4096).decode() == "READY=1\nSTATUS=board t12 on /dev/boardd/dgt-A1"


def test_reloading_carries_monotonic_usec(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    notifier = Notifier(path)
    before = time_usec()
    assert notifier.reloading()
    after = time_usec()
    first, second = sock.recv(4096).decode().split("\n")
    assert first == "RELOADING=1"
    key, value = second.split("=")
    assert key == "MONOTONIC_USEC"
    assert before <= int(value) <= after


def time_usec() -> int:
    import time

    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def test_extend_timeout_and_trigger(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    notifier = Notifier(path)
    notifier.extend_timeout(2.5)
    notifier.watchdog_trigger()
    assert _drain_n(sock, 2) == ["EXTEND_TIMEOUT_USEC=2500000", "WATCHDOG=trigger"]
    with pytest.raises(ValueError, match="positive"):
        notifier.extend_timeout(0)


def _drain_n(sock: socket.socket, count: int) -> list[str]:
    return [sock.recv(4096).decode() for _ in range(count)]


def test_abstract_namespace_socket() -> None:
    name = f"boardd-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        notifier = Notifier.from_environment({"NOTIFY_SOCKET": "@" + name})
        assert notifier.ready()
        assert notifier.watchdog()
        assert _drain_n(sock, 2) == ["READY=1", "WATCHDOG=1"]


def test_no_op_without_notify_socket() -> None:
    notifier = Notifier.from_environment({"WATCHDOG_USEC": "30000000"})
    assert not notifier.enabled
    assert notifier.ready() is False
    assert notifier.status("x") is False
    assert notifier.watchdog() is False
    assert notifier.stopping() is False
    # No socket means no watchdog either, whatever WATCHDOG_USEC says.
    assert notifier.watchdog_interval() is None
    assert notifier.sent == 0
    assert notifier.failures == 0


def test_empty_notify_socket_is_no_op() -> None:
    assert not Notifier.from_environment({"NOTIFY_SOCKET": ""}).enabled


def test_unsupported_address_is_disabled_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="boardd.daemon.sdnotify"):
        notifier = Notifier.from_environment({"NOTIFY_SOCKET": "vsock:2:1234"})
    assert not notifier.enabled
    assert notifier.ready() is False
    assert "unsupported NOTIFY_SOCKET" in caplog.text


def test_from_environment_reads_os_environ(
    notify_socket: tuple[str, socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, sock = notify_socket
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "4000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    notifier = Notifier.from_environment()
    assert notifier.watchdog_interval() == 4.0
    notifier.ready()
    assert sock.recv(4096) == b"READY=1"


def test_unset_environment_removes_variables(notify_socket: tuple[str, socket.socket]) -> None:
    path, _ = notify_socket
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": str(os.getpid()), "OTHER": "x"}
    notifier = Notifier.from_environment(env, unset_environment=True)
    assert notifier.enabled
    assert notifier.watchdog_interval() == 1.0
    assert env == {"OTHER": "x"}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 30.0),
        ({"WATCHDOG_USEC": "500000", "WATCHDOG_PID": "{pid}"}, 0.5),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "{other}"}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "-5"}, None),
        ({"WATCHDOG_USEC": "thirty"}, None),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "me"}, None),
        ({}, None),
    ],
)
def test_watchdog_interval_from_environment(
    notify_socket: tuple[str, socket.socket], env: dict[str, str], expected: float | None
) -> None:
    path, _ = notify_socket
    pid = os.getpid()
    full = {key: value.format(pid=pid, other=pid + 1) for key, value in env.items()}
    full["NOTIFY_SOCKET"] = path
    assert Notifier.from_environment(full).watchdog_interval() == expected


@pytest.mark.parametrize("bad", ["READY", "=1", "STATUS=a\nREADY=1"])
def test_malformed_assignment_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="KEY=value"):
        Notifier("/nonexistent").notify(bad)
    with pytest.raises(ValueError, match="at least one"):
        Notifier("/nonexistent").notify()


def test_send_failure_is_counted_and_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    notifier = Notifier(str(tmp_path / "gone.sock"))
    assert notifier.enabled
    with caplog.at_level(logging.WARNING, logger="boardd.daemon.sdnotify"):
        assert notifier.watchdog() is False
        assert notifier.watchdog() is False
        assert notifier.watchdog() is False
    assert notifier.failures == 3
    assert notifier.sent == 0
    assert sum("sd_notify WATCHDOG" in r.getMessage() for r in caplog.records) == 1


def test_socket_recovers_after_failure(tmp_path: Path) -> None:
    path = tmp_path / "late.sock"
    notifier = Notifier(str(path))
    assert notifier.ready() is False
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(2)
        assert notifier.ready() is True
        assert sock.recv(4096) == b"READY=1"
    assert (notifier.sent, notifier.failures) == (1, 1)


def test_full_receive_queue_does_not_block(notify_socket: tuple[str, socket.socket]) -> None:
    """Nobody reads the socket: sends must fail fast (EAGAIN), never block the event loop."""
    path, sock = notify_socket
    notifier = Notifier(path)
    results = [notifier.status("x" * 2000) for _ in range(5000)]
    assert results[0] is True
    assert results[-1] is False
    assert notifier.failures > 0
    assert notifier.sent + notifier.failures == 5000
    _drain(sock)


# --- ProgressWatchdog -------------------------------------------------------------------------------------------


class FakeTime:
    """A clock and a sleep that advances it: the watchdog loop runs without real waiting."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.on_sleep: list[tuple[float, str]] = []  # (time, component) progress to report while "asleep"
        self.watchdog: ProgressWatchdog | None = None
        self.stop_at = float("inf")
        self.sock: socket.socket | None = None
        self.received: list[str] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        start, target = self.now, self.now + seconds
        assert self.watchdog is not None
        # Components report progress at their scheduled times during the sleep.
        for at, component in sorted(self.on_sleep):
            if start < at <= target:
                self.now = at
                self.watchdog.progress(component)
        self.now = target
        # Read like systemd does (the kernel queues only a few datagrams per socket).
        if self.sock is not None:
            self.received += _drain(self.sock)
        if self.now >= self.stop_at:
            raise asyncio.CancelledError
        await asyncio.sleep(0)


def _fake_time(sock: socket.socket) -> FakeTime:
    fake = FakeTime()
    fake.sock = sock
    return fake


async def test_watchdog_pings_while_all_components_progress(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    fake = _fake_time(sock)
    notifier = Notifier(path, watchdog_seconds=10.0)
    watchdog = ProgressWatchdog(notifier, clock=fake.clock, sleep=fake.sleep)
    fake.watchdog = watchdog
    # Both components report every 4 s for 60 s; the loop is stopped at t0+60.
    fake.on_sleep = [(1000.0 + t, c) for t in range(2, 61, 4) for c in ("board", "mqtt")]
    fake.stop_at = 1060.0
    with pytest.raises(asyncio.CancelledError):
        await watchdog.run()
    assert set(fake.sleeps) == {5.0}  # interval / 2
    received = fake.received + _drain(sock)
    assert received == ["WATCHDOG=1"] * 12
    assert watchdog.pings == 12
    assert watchdog.withheld == 0


async def test_watchdog_stops_pinging_when_a_component_stalls(
    notify_socket: tuple[str, socket.socket], caplog: pytest.LogCaptureFixture
) -> None:
    path, sock = notify_socket
    fake = _fake_time(sock)
    notifier = Notifier(path, watchdog_seconds=10.0)
    watchdog = ProgressWatchdog(notifier, clock=fake.clock, sleep=fake.sleep)
    fake.watchdog = watchdog
    # The board reports every 2 s throughout; MQTT reports every 2 s until t0+20, then hangs.
    fake.on_sleep = [(1000.0 + t, "board") for t in range(2, 61, 2)]
    fake.on_sleep += [(1000.0 + t, "mqtt") for t in range(2, 21, 2)]
    fake.stop_at = 1060.0
    with caplog.at_level(logging.WARNING, logger="boardd.daemon.sdnotify"), pytest.raises(asyncio.CancelledError):
        await watchdog.run()
    received = fake.received + _drain(sock)
    pings = [m for m in received if m == "WATCHDOG=1"]
    statuses = [m for m in received if m.startswith("STATUS=")]
    # Checks at t0+0,5,...,55. mqtt last reported at t0+20; it is stalled once more than 10 s old,
    # i.e. from the check at t0+35 on. Pings: t0+0 .. t0+30 = 7.
    assert len(pings) == 7
    assert watchdog.withheld == 5
    assert received.index(statuses[0]) == 7  # the status comes right after the last ping
    assert statuses == ["STATUS=stalled: mqtt (silent for 15.0 s)"]
    assert "no progress from mqtt" in caplog.text
    assert watchdog.stalled(fake.now) == ("mqtt",)


async def test_watchdog_resumes_when_progress_comes_back(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    fake = _fake_time(sock)
    notifier = Notifier(path, watchdog_seconds=4.0)
    watchdog = ProgressWatchdog(notifier, components=("board",), clock=fake.clock, sleep=fake.sleep)
    fake.watchdog = watchdog
    # Board silent between t0+1 and t0+9, then back.
    fake.on_sleep = [(1001.0, "board"), (1009.0, "board"), (1011.0, "board")]
    fake.stop_at = 1012.0
    with pytest.raises(asyncio.CancelledError):
        await watchdog.run()
    # Checks every 2 s at t0+0..10: 0 (grace) ping, 2 ping, 4 ping (3 s old), 6 stalled (5 s), 8 stalled, 10 ping.
    received = fake.received + _drain(sock)
    assert [m for m in received if m == "WATCHDOG=1"] == ["WATCHDOG=1"] * 4
    assert watchdog.withheld == 2


async def test_component_that_never_reports_is_caught_after_grace(notify_socket: tuple[str, socket.socket]) -> None:
    path, sock = notify_socket
    fake = _fake_time(sock)
    watchdog = ProgressWatchdog(Notifier(path, watchdog_seconds=6.0), clock=fake.clock, sleep=fake.sleep)
    fake.watchdog = watchdog
    fake.on_sleep = [(1000.0 + t, "board") for t in range(1, 30)]
    fake.stop_at = 1030.0
    with pytest.raises(asyncio.CancelledError):
        await watchdog.run()
    # Checks at 0,3,6 are within the 6 s grace of the start; from 9 on, mqtt never reported.
    assert watchdog.pings == 3
    assert "STATUS=stalled: mqtt (never reported)" in fake.received + _drain(sock)


async def test_watchdog_off_returns_immediately() -> None:
    watchdog = ProgressWatchdog(Notifier(None, watchdog_seconds=None))
    await asyncio.wait_for(watchdog.run(), timeout=1)
    assert watchdog.pings == 0
    # Without systemd there is no watchdog even if WATCHDOG_USEC is present.
    off = ProgressWatchdog(Notifier.from_environment({"WATCHDOG_USEC": "1000000"}))
    assert off.interval is None
    await asyncio.wait_for(off.run(), timeout=1)


async def test_watchdog_with_real_clock_and_short_interval(notify_socket: tuple[str, socket.socket]) -> None:
    """The default clock and sleep, with a 0.2 s interval: a real asyncio task, cancelled cleanly."""
    path, sock = notify_socket
    watchdog = ProgressWatchdog(Notifier(path, watchdog_seconds=0.2))

    async def reporter() -> None:
        while True:
            watchdog.progress("board")
            watchdog.progress("mqtt")
            await asyncio.sleep(0.02)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(watchdog.run()), group.create_task(reporter())]
        await asyncio.sleep(0.35)
        for task in tasks:
            task.cancel()
    assert watchdog.pings >= 3
    assert _drain(sock).count("WATCHDOG=1") == watchdog.pings


def test_unknown_component_is_an_error() -> None:
    watchdog = ProgressWatchdog(Notifier(None), interval=10.0)
    with pytest.raises(KeyError, match="unknown watchdog component 'borad'"):
        watchdog.progress("borad")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"components": ()}, "at least one"),
        ({"components": ("board", "board")}, "duplicate"),
        ({"interval": 0.0}, "interval must be positive"),
        ({"interval": 5.0, "stall_after": -1.0}, "stall_after must be positive"),
    ],
)
def test_invalid_watchdog_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProgressWatchdog(Notifier(None), **kwargs)  # type: ignore[arg-type]


def test_notifier_rejects_bad_watchdog_seconds() -> None:
    with pytest.raises(ValueError, match="positive"):
        Notifier("/x", watchdog_seconds=0)


def test_last_progress() -> None:
    now = [7.0]
    watchdog = ProgressWatchdog(Notifier(None), ("board", "mqtt"), interval=30.0, clock=lambda: now[0])
    assert watchdog.last_progress("board") is None
    watchdog.progress("board")
    assert watchdog.last_progress("board") == 7.0
    assert watchdog.last_progress("mqtt") is None
    with pytest.raises(KeyError):
        watchdog.last_progress("clock")


def test_custom_stall_threshold() -> None:
    now = [0.0]
    watchdog = ProgressWatchdog(Notifier(None), ("board",), interval=30.0, stall_after=5.0, clock=lambda: now[0])
    assert watchdog.check() is True  # start of grace
    now[0] = 4.0
    assert watchdog.check() is True
    now[0] = 5.5
    assert watchdog.check() is False
    watchdog.progress("board")
    assert watchdog.check() is True
