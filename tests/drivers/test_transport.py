"""drivers.transport: opening paths and URLs, failure as DeviceDisconnectedError, taps, backoff."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import tty
from pathlib import Path

import pytest

from boardd.core.errors import ConfigError, DeviceDisconnectedError, DriverError
from drivers.base import ReconnectPolicy
from drivers.transport import Backoff, SerialLink


def test_backoff_grows_is_jittered_and_capped() -> None:
    policy = ReconnectPolicy(initial=0.5, maximum=4.0, factor=2.0, jitter=0.25)
    backoff = Backoff(policy, rng=random.Random(5))
    delays = [backoff.next_delay() for _ in range(8)]
    for n, delay in enumerate(delays):
        base = min(4.0, 0.5 * 2**n)
        assert base * 0.75 <= delay <= base * 1.25
    assert len(set(delays)) == len(delays)  # jittered: no two retries in lock step
    backoff.reset()
    assert backoff.next_delay() <= 0.5 * 1.25
    assert policy.delay(10_000, 0.5) == 4.0


@pytest.mark.parametrize("kwargs", [{"initial": 0.0}, {"initial": 5.0, "maximum": 1.0}, {"factor": 0.5},
                                    {"jitter": 1.0}])
def test_reconnect_policy_rejects_nonsense(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        ReconnectPolicy(**kwargs)


async def test_pty_link_reads_writes_taps_and_fails_when_the_other_end_closes() -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    tapped: list[tuple[str, bytes]] = []
    link = await SerialLink.open(os.ttyname(slave), tap=lambda d, b: tapped.append((d, b)))
    try:
        link.write(b"\x42")
        await asyncio.sleep(0.05)
        assert os.read(master, 16) == b"\x42"
        os.write(master, b"\x93\x00\x05\x03\x0a")
        async with asyncio.timeout(2):
            assert await link.read() == b"\x93\x00\x05\x03\x0a"
        assert tapped == [("tx", b"\x42"), ("rx", b"\x93\x00\x05\x03\x0a")]
        os.close(master)
        os.close(slave)
        with pytest.raises(DeviceDisconnectedError):
            async with asyncio.timeout(2):
                await link.read()
        assert not link.is_open
        with pytest.raises(DeviceDisconnectedError):
            await link.read()  # every later read fails too
        with pytest.raises(DeviceDisconnectedError):
            link.write(b"\x42")
    finally:
        await link.close()
        await link.close()  # idempotent


async def test_missing_device_is_transient_and_bad_scheme_is_permanent(tmp_path: Path) -> None:
    with pytest.raises(DeviceDisconnectedError):
        await SerialLink.open(str(tmp_path / "ttyUSB9"))
    with pytest.raises(DriverError) as info:
        await SerialLink.open("carrier-pigeon://coop")
    assert not isinstance(info.value, DeviceDisconnectedError)
    with pytest.raises(DeviceDisconnectedError):
        await SerialLink.open("socket://127.0.0.1:1")  # nobody listens: refused, retry later


async def test_threaded_url_scheme_loop() -> None:
    link = await SerialLink.open("loop://")
    try:
        link.write(b"\x8e\x00\x05\x34\x00")
        data = b""
        async with asyncio.timeout(2):
            while len(data) < 5:
                data += await link.read()
        assert data == b"\x8e\x00\x05\x34\x00"
    finally:
        await link.close()
    with pytest.raises(DeviceDisconnectedError):
        await link.read()


async def test_socket_url_eof_is_a_disconnect() -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"\x93\x00\x05\x03\x0a")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    link = await SerialLink.open(f"socket://127.0.0.1:{port}")
    try:
        async with asyncio.timeout(2):
            assert await link.read() == b"\x93\x00\x05\x03\x0a"
            with pytest.raises(DeviceDisconnectedError):
                await link.read()
    finally:
        await link.close()
        server.close()
        await server.wait_closed()


async def test_socket_url_that_never_answers_times_out_as_a_transient_error() -> None:
    """A host that drops SYNs: here a listener whose accept queue is full (Linux drops the SYN)."""
    listener = socket.socket()
    filler = socket.socket()
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)  # room for one unaccepted connection
        port = listener.getsockname()[1]
        filler.connect(("127.0.0.1", port))  # takes it: every later SYN is dropped
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(DeviceDisconnectedError, match=r"no connection within 0\.3 s"):
            async with asyncio.timeout(3):  # without the bound: the kernel's SYN retries, ~2 minutes
                await SerialLink.open(f"socket://127.0.0.1:{port}", open_timeout=0.3)
        assert 0.25 <= loop.time() - start < 1.5
    finally:
        filler.close()
        listener.close()
