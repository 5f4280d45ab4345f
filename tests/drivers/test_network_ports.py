"""Boards behind ser2net: ``socket://`` (raw TCP) and ``rfc2217://`` (telnet COM-port control) end to end.

:class:`Ser2Net` stands in for ser2net: a TCP port bridged to the DGT emulator's pty, raw or speaking
RFC 2217 with pyserial's server side (:class:`serial.rfc2217.PortManager`, as pyserial's
examples/rfc2217_server.py). Like ser2net it opens the device when a client connects and closes it
when the client leaves; it can be stopped and started again on the same TCP port.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

import chess
import pytest
import serial
import serial.rfc2217
from serial.tools import list_ports

from boardd.core.errors import DeviceDisconnectedError, DriverError
from boardd.core.events import BoardSnapshot, Link, LinkChanged, SquareChanged
from drivers import ports
from drivers.dgt import DgtDriver
from drivers.dgt.codec import Command, DgtDecoder, DgtMessage, Version, encode
from drivers.dgt.emulator import DgtEmulator
from drivers.transport import SerialLink, check_port
from tests.drivers.test_dgt_driver import SCAN, WP, Events, changes, is_snapshot, options


class _PtySerial(serial.Serial):  # type: ignore[misc]
    """The emulator's pty opened with pyserial. A pty has no modem lines (the ioctls fail with ENOTTY):
    report a cable with CTS/DSR/CD asserted and ignore DTR/RTS, like an adapter without handshake lines."""

    @property
    def cts(self) -> bool:
        return True

    @property
    def dsr(self) -> bool:
        return True

    @property
    def ri(self) -> bool:
        return False

    @property
    def cd(self) -> bool:
        return True

    def _update_dtr_state(self) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass


class _Connection:
    """What PortManager writes its telnet answers to."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        self._writer.write(data)


class Ser2Net:
    """A ser2net stand-in: one TCP client at a time bridged to *device*, raw or RFC 2217.

    Args:
        device: the serial device (the emulator's pty).
        rfc2217: speak telnet RFC 2217 (ser2net's ``telnet`` mode with COM port control) instead of raw bytes.
    """

    def __init__(self, device: str, *, rfc2217: bool) -> None:
        self.device = device
        self.rfc2217 = rfc2217
        self.port = 0
        #: Clients accepted so far.
        self.connections = 0
        #: (baud rate, data bits, parity, stop bits) of the device when each RFC 2217 client left.
        self.line_settings: list[tuple[int, int, str, float]] = []
        #: While clear, an accepted client is held before any telnet negotiation.
        self.gate = asyncio.Event()
        self.gate.set()
        self.accepted = asyncio.Event()
        self.client_gone = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._clients: dict[asyncio.StreamWriter, asyncio.Task[None]] = {}

    @property
    def url(self) -> str:
        return f"{'rfc2217' if self.rfc2217 else 'socket'}://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and drop the client, as when ser2net is restarted."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer, task in list(self._clients.items()):
            writer.transport.abort()
            await task

    async def __aenter__(self) -> Ser2Net:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._clients[writer] = task
        self.connections += 1
        self.client_gone.clear()
        self.accepted.set()
        loop = asyncio.get_running_loop()
        # Opened at another speed than the boards': an RFC 2217 client must negotiate its own.
        # Opening flushes what the tty heard while it was closed.
        device = _PtySerial(self.device, baudrate=115200, timeout=0)
        manager = serial.rfc2217.PortManager(device, _Connection(writer)) if self.rfc2217 else None

        def forward() -> None:
            try:
                data = device.read(4096)
            except serial.SerialException:
                loop.remove_reader(device.fileno())
                writer.transport.abort()
                return
            writer.write(b"".join(manager.escape(data)) if manager is not None else data)

        try:
            await self.gate.wait()
            loop.add_reader(device.fileno(), forward)
            while data := await reader.read(4096):
                if manager is not None:
                    data = b"".join(manager.filter(data))
                device.write(data)
        except ConnectionError:
            pass
        finally:
            with contextlib.suppress(ValueError, OSError):
                loop.remove_reader(device.fileno())
            if manager is not None:
                self.line_settings.append((device.baudrate, device.bytesize, device.parity, device.stopbits))
            device.close()
            writer.close()
            del self._clients[writer]
            self.client_gone.set()


@contextlib.asynccontextmanager
async def bridged(*, rfc2217: bool) -> AsyncIterator[tuple[DgtEmulator, Ser2Net]]:
    async with DgtEmulator(scan_interval=SCAN) as emu, Ser2Net(emu.path, rfc2217=rfc2217) as server:
        emu.set_clock(300, 300)
        yield emu, server


# --- the driver over the network ------------------------------------------------------------------------


@pytest.mark.parametrize("rfc2217", [True, False], ids=["rfc2217", "socket"])
async def test_ser2net_restart_mid_game_reconnects_and_reconciles_with_a_dump(rfc2217: bool) -> None:
    async with (bridged(rfc2217=rfc2217) as (emu, server),
                DgtDriver(options(server.url), rng=random.Random(2)) as driver):
        events = Events(driver)
        got = await events.until(is_snapshot)
        assert got[0] == LinkChanged(at=got[0].at, link=Link.BOARD, up=True, detail=server.url)
        assert isinstance(got[-1], BoardSnapshot) and got[-1].squares[chess.E2] == WP
        emu.move(chess.E2, chess.E4)
        emu.move(chess.G8, chess.F6)
        assert sorted(changes(await events.squares(4))) == [("e2", "."), ("e4", "P"), ("f6", "n"), ("g8", ".")]

        await server.stop()  # ser2net restarted mid-game
        [*_, down] = await events.until(lambda e: isinstance(e, LinkChanged) and e.link is Link.BOARD)
        assert isinstance(down, LinkChanged) and not down.up
        [clock_down] = await events.until(lambda e: True)
        assert clock_down == LinkChanged(at=down.at, link=Link.CLOCK, up=False, detail="board link down")
        emu.move(chess.D2, chess.D4)  # made while the link is down: no field update can report it
        await emu.wait_scan(5)
        await server.start()

        got = await events.until(is_snapshot, within=10)
        assert got[0] == LinkChanged(at=got[0].at, link=Link.BOARD, up=True, detail=server.url)
        assert not any(isinstance(e, SquareChanged) for e in got)  # nothing stale from before the restart
        expected = chess.Board()
        for uci in ("e2e4", "g8f6", "d2d4"):
            expected.push_uci(uci)
        assert isinstance(got[-1], BoardSnapshot)
        assert got[-1].placement() == BoardSnapshot.from_board(expected, at=0).placement()

        emu.move(chess.B8, chess.C6)  # and the new link carries field updates again
        assert sorted(changes(await events.squares(2))) == [("b8", "."), ("c6", "n")]
        assert (driver.counters["disconnects"], driver.counters["connects"]) == (1, 2)
    assert server.connections == 2  # no connection leaked or left half open by the reconnection
    if rfc2217:
        assert server.line_settings == [(9600, 8, "N", 1)] * 2  # negotiated on every connection


async def test_rfc2217_link_reads_writes_and_fails_when_the_server_goes() -> None:
    async with bridged(rfc2217=True) as (_emu, server):
        link = await SerialLink.open(server.url)
        try:
            link.write(encode(Command.SEND_VERSION))
            decoder = DgtDecoder()
            async with asyncio.timeout(3):
                messages: list[DgtMessage] = []
                while not messages:
                    messages = decoder.feed(await link.read())
            assert messages == [Version(3, 10)]
            await server.stop()
            with pytest.raises(DeviceDisconnectedError):
                async with asyncio.timeout(3):
                    await link.read()
            assert not link.is_open
        finally:
            await link.close()


async def test_a_connection_completed_after_the_driver_stopped_is_closed_again() -> None:
    async with bridged(rfc2217=True) as (_emu, server):
        server.gate.clear()  # the server accepts but holds the RFC 2217 negotiation
        async with DgtDriver(options(server.url)):
            async with asyncio.timeout(3):
                await server.accepted.wait()
        # The driver gave up while pyserial was still negotiating in its worker thread.
        server.gate.set()
        async with asyncio.timeout(5):
            await server.client_gone.wait()  # the late connection was closed, not leaked
        assert server.connections == 1


@pytest.mark.parametrize("url", [
    "rfc2217://127.0.0.1", "socket://127.0.0.1", "rfc2217://:4000", "rfc2217://127.0.0.1:0",
    "rfc2217://127.0.0.1:70000", "rfc2217://127.0.0.1:4000?baud=9600", "socket://127.0.0.1:4000?timeout=1",
    "telnet://127.0.0.1:4000",
])
async def test_network_urls_that_can_never_work_are_permanent_errors(url: str) -> None:
    with pytest.raises(DriverError) as info:
        check_port(url)
    assert not isinstance(info.value, DeviceDisconnectedError)
    with pytest.raises(DriverError) as info:
        await SerialLink.open(url)
    assert not isinstance(info.value, DeviceDisconnectedError)  # not retried for ever as "not there yet"


def test_network_urls_that_may_work() -> None:
    for url in ("rfc2217://ser2net.hall:4001", "rfc2217://10.0.0.5:4001?timeout=5&ign_set_control",
                "socket://[::1]:4000", "socket://localhost:4000?logging=debug", "/dev/ttyUSB0", "loop://"):
        check_port(url)


# --- boardd ports --probe over the network ----------------------------------------------------------------


async def test_ports_probe_reports_what_answers_on_socket_and_rfc2217_urls(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(list_ports, "comports", list)  # only the URLs given on the command line
    async with bridged(rfc2217=True) as (_emu1, telnet), bridged(rfc2217=False) as (_emu2, raw):
        async with Ser2Net("/nonexistent", rfc2217=True) as nothing:
            dead = nothing.url
        parser = argparse.ArgumentParser()
        ports.configure_parser(parser)
        args = parser.parse_args(["--probe", "--timeout", "5", telnet.url, raw.url, dead, "rfc2217://127.0.0.1"])
        # ports.run has its own event loop (asyncio.run): give it a thread, the bridges run on this one
        assert await asyncio.to_thread(ports.run, args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{'DEVICE':<20} {'USB ID':<10} {'GUESS':<9} DESCRIPTION",
        f"{telnet.url:<20} {'-':<10} {'-':<9} ",
        "    probe: DGT board, version 3.10, serial 3.10A12345",
        f"{raw.url:<20} {'-':<10} {'-':<9} ",
        "    probe: DGT board, version 3.10, serial 3.10A12345",
        f"{dead:<20} {'-':<10} {'-':<9} ",
        "    probe: no DGT answer",
        f"{'rfc2217://127.0.0.1':<20} {'-':<10} {'-':<9} ",
        "    probe: no DGT answer",
    ]
