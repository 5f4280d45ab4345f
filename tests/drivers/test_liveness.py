"""Driver liveness (``last_activity``, the systemd watchdog's input) for every family.

On an idle connected board ``last_activity`` keeps moving: the board streams (Certabo, Chessnut,
the DGT 3000's Time packets) or the driver's keep-alive makes it answer (DGT ``45``, Millennium ``S``).
When the device falls silent with its port still open it stands still, until the driver's own
watchdog gives the link up and its reconnection attempts move it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from boardd.core.events import BoardEvent, BoardSnapshot, Link, LinkChanged
from drivers.base import BoardDriver
from drivers.certabo import CertaboDriver, CertaboOptions
from drivers.certabo.emulator import CertaboEmulator
from drivers.chessnut import ChessnutDriver, ChessnutOptions
from drivers.chessnut.emulator import ChessnutUsbEmulator
from drivers.dgt import DgtDriver, DgtOptions
from drivers.dgt.codec import Command
from drivers.dgt.emulator import DgtEmulator
from drivers.dgt3000_i2c import Dgt3000Driver, Dgt3000Options
from drivers.dgt3000_i2c.emulator import Dgt3000Emulator
from drivers.millennium import MillenniumDriver, MillenniumOptions
from drivers.millennium.codec import StatusRequest
from drivers.millennium.emulator import MillenniumEmulator
from drivers.sim import Options as SimOptions
from drivers.sim import SimulatedBoard
from tests.drivers.test_dgt_driver import eventually

SCAN = 0.02
#: The driver's watchdog (real seconds): longer than the silent window the test watches.
WATCHDOG = 3.0
#: The keep-alive / poll period under test (real seconds).
KEEPALIVE = 0.1
FAST = {"reconnect_initial_s": 0.05, "reconnect_max_s": 0.2}


@dataclass
class Setup:
    driver: BoardDriver
    silence: Callable[[], None]  # the device stops answering; its port stays open
    keepalives: Callable[[], int]  # keep-alive requests the device received so far (-1: it streams)
    link: Link = Link.BOARD  # the device's link (the DGT 3000 is a clock)


@contextlib.asynccontextmanager
async def family(name: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Setup]:
    if name == "dgt":
        async with DgtEmulator(scan_interval=SCAN) as dgt:
            dgt.set_clock(300, 300)  # stopped: an idle board and clock send nothing by themselves
            options = DgtOptions(port=dgt.path, keepalive_s=KEEPALIVE, watchdog_s=WATCHDOG, settle_dump_s=0,
                                 periodic_dump_s=0, **FAST)  # type: ignore[arg-type]
            yield Setup(DgtDriver(options), lambda: setattr(dgt, "hung", True),
                        lambda: dgt.received.count(Command.RETURN_SERIALNR))
    elif name == "millennium":
        async with MillenniumEmulator(scan_interval=SCAN) as mil:  # reports on change only: idle = silent
            options = MillenniumOptions(port=mil.path, poll_s=KEEPALIVE, watchdog_s=WATCHDOG,
                                        **FAST)  # type: ignore[arg-type]
            yield Setup(MillenniumDriver(options), lambda: setattr(mil, "hung", True),
                        lambda: sum(isinstance(c, StatusRequest) for c in mil.received))
    elif name == "certabo":
        async with CertaboEmulator(scan_interval=SCAN) as cer:
            options = CertaboOptions(port=cer.path, watchdog_s=WATCHDOG, **FAST)  # type: ignore[arg-type]
            yield Setup(CertaboDriver(options, calibration=cer.calibration()), lambda: setattr(cer, "hung", True),
                        lambda: -1)
    elif name in ("chessnut", "chessnut-ble"):
        async with ChessnutUsbEmulator(scan_interval=SCAN) as cn:
            port = "usb"
            if name == "chessnut-ble":
                monkeypatch.setitem(sys.modules, "bleak", cn.bleak_module())
                port = f"ble:{cn.serial}"
            options = ChessnutOptions(port=port, poll_s=KEEPALIVE * 2, watchdog_s=WATCHDOG, write_interval_s=0.01,
                                      **FAST)  # type: ignore[arg-type]
            yield Setup(ChessnutDriver(options, backend=cn.backend), lambda: setattr(cn, "hung", True), lambda: -1)
    else:
        clock = Dgt3000Emulator(time_interval=KEEPALIVE)  # stopped, but in mode 25 it sends Time packets
        options3 = Dgt3000Options(watchdog_s=WATCHDOG, reconnect_initial_s=0.05, reconnect_max_s=0.2)
        yield Setup(Dgt3000Driver(options3, bus_factory=lambda: clock), clock.unplug, lambda: -1, Link.CLOCK)


async def next_link(events: AsyncIterator[BoardEvent], link: Link, within: float) -> LinkChanged:
    async with asyncio.timeout(within):
        while True:
            event = await anext(events)
            if isinstance(event, LinkChanged) and event.link is link:
                return event


async def advances(driver: BoardDriver, times: int, within: float = 5.0) -> None:
    """``last_activity`` moves forward *times* times (a property: checked every 10 ms), or fail."""
    seen, moves = driver.last_activity, 0
    for _ in range(int(within / 0.01)):
        if driver.last_activity > seen:
            seen, moves = driver.last_activity, moves + 1
            if moves == times:
                return
        await asyncio.sleep(0.01)
    raise AssertionError(f"last_activity moved {moves} time(s) in {within} s, expected {times}")


@pytest.mark.parametrize("name", ["dgt", "millennium", "certabo", "chessnut", "chessnut-ble", "dgt3000-i2c"])
async def test_last_activity_moves_on_an_idle_board_and_stops_when_the_device_falls_silent(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async with family(name, monkeypatch) as setup, setup.driver as driver:
        events = driver.events()
        up = await next_link(events, setup.link, 5.0)
        assert up.up
        if name == "dgt":  # the start-up answers (the ~8 KB EEPROM log, then the dump) arrive first
            async with asyncio.timeout(5.0):
                while not isinstance(await anext(events), BoardSnapshot):
                    pass
        before = setup.keepalives()
        await advances(driver, 5)  # idle: nothing is played
        if before >= 0:
            assert setup.keepalives() >= before + 3  # the keep-alive made the quiet board answer
        setup.silence()
        await asyncio.sleep(0.3)  # what was already on its way arrives
        frozen = driver.last_activity
        await asyncio.sleep(0.6)  # several keep-alive periods, well within the driver's watchdog
        assert driver.last_activity == frozen
        down = await next_link(events, setup.link, WATCHDOG + 3.0)  # the driver's own watchdog gives the link up ...
        assert not down.up
        await advances(driver, 1)  # ... and its reconnection attempts are signs of life again


async def test_simulator_marks_life_while_the_players_think() -> None:
    board = SimulatedBoard(options=SimOptions(tempo=1.0, profile="clean"))
    board.heartbeat_s = 0.02
    delivered: list[BoardEvent] = []

    async def consume() -> None:
        async for event in board.events():
            delivered.append(event)

    async with board:
        consumer = asyncio.create_task(consume())
        try:
            await eventually(lambda: bool(delivered), within=5.0)
            count = len(delivered)
            marks = {board.last_activity}
            for _ in range(10):
                await asyncio.sleep(0.03)
                marks.add(board.last_activity)
            assert len(marks) > len(delivered) - count + 3  # more marks than events in the window
        finally:
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consumer
        frozen = board.last_activity  # nobody pulls the events any more: no sign of life
        await asyncio.sleep(0.1)
        assert board.last_activity == frozen
