"""DGT 3000 on the emulated I²C bus: configuration, readings, presses, commands, link loss, engine.

The emulated clock runs on game time (``SCALE`` x wall clock), like the driver's stamps and
the engine, so a Time packet per game second arrives every 0.1 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import TypeVar

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.errors import DeviceDisconnectedError
from boardd.core.events import BoardEvent, BoardSnapshot, ClockReading, ClockSide, GameInfo, Link, LinkChanged, NewGame
from boardd.core.outputs import Completion, Output
from drivers.base import ClockDisplay, DriverKind, RequestDump, SetClock, UnsupportedCommandError, open_driver
from drivers.dgt3000_i2c import Dgt3000Driver, Dgt3000Options
from drivers.dgt3000_i2c.codec import (
    BUTTON_BACK,
    ChangeState,
    Display,
    EndDisplay,
    SetAndRun,
    SetCentralControl,
    Wake,
)
from drivers.dgt3000_i2c.emulator import Dgt3000Emulator
from tests.drivers.test_millennium_e2e import game_time, problems

OPTIONS = Dgt3000Options(reconnect_initial_s=0.05, reconnect_max_s=0.2, watchdog_s=1.0)


def make(emu: Dgt3000Emulator, options: Dgt3000Options = OPTIONS) -> Dgt3000Driver:
    return Dgt3000Driver(options, time_source=game_time, bus_factory=lambda: emu)


E = TypeVar("E", ClockReading, LinkChanged)


async def next_of(events: AsyncIterator[BoardEvent], kind: type[E], within: float = 3.0) -> E:
    async with asyncio.timeout(within):
        while True:
            event = await anext(events)
            if isinstance(event, kind):
                return event


async def test_configure_wakes_the_clock_and_takes_central_control() -> None:
    emu = Dgt3000Emulator(time_source=game_time)
    async with make(emu) as driver:
        up = await next_of(driver.events(), LinkChanged)
        assert isinstance(up, LinkChanged) and up.up and up.link is Link.CLOCK
    # dgtpicom's order: mode 25 (not acked: asleep) -> wake -> mode 25 (refused) -> central control -> mode 25
    assert emu.received[:4] == [Wake(), ChangeState(25), SetCentralControl(), ChangeState(25)]
    assert driver.counters["wakes"] == 1 and driver.counters["negative_acks"] == 1
    assert driver.info.connected and driver.info.clock_model == "dgt3000" and driver.info.version == "22 01"


async def test_readings_presses_and_switching_sides() -> None:
    emu = Dgt3000Emulator(time_source=game_time, time_interval=1.0)
    emu.press(ClockSide.RIGHT)  # White (left) to move: the left lever is up
    async with make(emu) as driver:
        events = driver.events()
        await next_of(events, LinkChanged)
        await driver.send(SetClock(left_s=300, right_s=300, running=ClockSide.LEFT))
        assert SetAndRun(300, 300, 1, 0) in emu.received
        await asyncio.sleep(0.25)  # 2.5 s of game time
        readings: list[ClockReading] = []
        while not readings or readings[-1].right != 300 or (readings[-1].left or 0) >= 300:
            reading = await next_of(events, ClockReading)
            assert isinstance(reading, ClockReading)
            readings.append(reading)
        assert readings[0].left == readings[0].right == 0  # before the set-and-run
        reading = readings[-1]
        assert reading.running is ClockSide.LEFT and reading.lever_high is ClockSide.LEFT
        assert reading.right == 300
        emu.press(ClockSide.LEFT)
        press = await next_of(events, ClockReading)
        while isinstance(press, ClockReading) and press.lever_high is ClockSide.LEFT:  # sent before the press
            press = await next_of(events, ClockReading)
        assert isinstance(press, ClockReading)
        assert press.lever_high is ClockSide.RIGHT and press.running is ClockSide.RIGHT
        for _ in range(50):  # the driver started the right side with set-and-run
            if emu.modes[ClockSide.RIGHT] == 1:
                break
            await asyncio.sleep(0.01)
        assert emu.modes == {ClockSide.LEFT: 0, ClockSide.RIGHT: 1}
        await asyncio.sleep(0.2)
        assert emu.time_of(ClockSide.RIGHT) < 300
        emu.press_button(BUTTON_BACK)
        button = await asyncio.wait_for(anext(driver.buttons()), 2)
        assert button.name == "back"


async def test_display_commands_and_unsupported_ones() -> None:
    emu = Dgt3000Emulator(time_source=game_time)
    async with make(emu) as driver:
        await next_of(driver.events(), LinkChanged)
        await driver.send(ClockDisplay(text="boardd"))
        assert emu.text == "boardd" and Display("boardd") in emu.received
        await driver.send(ClockDisplay(text=""))
        assert emu.text == "" and EndDisplay() in emu.received
        with pytest.raises(UnsupportedCommandError):
            await driver.send(RequestDump())


async def test_clock_unplugged_and_back_and_switched_off() -> None:
    emu = Dgt3000Emulator(time_source=game_time, time_interval=1.0)
    async with make(emu) as driver:
        events = driver.events()
        assert (await next_of(events, LinkChanged)).up
        emu.unplug()
        down = await next_of(events, LinkChanged, within=5)
        assert isinstance(down, LinkChanged) and not down.up and down.link is Link.CLOCK
        with pytest.raises(DeviceDisconnectedError):
            await driver.send(SetClock(left_s=60, right_s=60))
        emu.replug()
        up = await next_of(events, LinkChanged, within=5)
        assert isinstance(up, LinkChanged) and up.up
        # The on/off button puts the clock to sleep; the driver wakes and re-configures it at once.
        wakes = driver.counters["wakes"]
        emu.switch_off()
        for _ in range(100):
            if emu.mode25 and driver.counters["wakes"] > wakes:
                break
            await asyncio.sleep(0.01)
        assert emu.mode25 and driver.counters["reconfigures"] >= 1
        await driver.send(SetClock(left_s=60, right_s=60))
    assert driver.counters["disconnects"] == 1 and driver.counters["connects"] == 2


async def test_absent_clock_is_link_down() -> None:
    emu = Dgt3000Emulator(time_source=game_time)
    emu.unplug()
    async with make(emu) as driver:
        down = await next_of(driver.events(), LinkChanged)
        assert isinstance(down, LinkChanged) and not down.up and "does not answer" in down.detail


async def test_garbage_on_the_bus_is_counted() -> None:
    emu = Dgt3000Emulator(time_source=game_time)
    async with make(emu) as driver:
        events = driver.events()
        await next_of(events, LinkChanged)
        emu._out.put(b"\x00\x10\x07\x02\x22\x01\x06")  # bad CRC
        emu._out.put(b"\x00\x10")
        await driver.send(SetClock(left_s=30, right_s=30))
        reading = await next_of(events, ClockReading)
        while isinstance(reading, ClockReading) and reading.left != 30:  # readings from before the set-and-run
            reading = await next_of(events, ClockReading)
        assert driver.counters["bad_crc"] == 1 and driver.counters["invalid_packets"] == 1


def test_registry_options_and_missing_extra() -> None:
    with pytest.raises(ValueError):
        Dgt3000Options(port="/dev/ttyUSB0")
    assert Dgt3000Options(port="/dev/i2c-3").bus_number == 3
    driver = open_driver(DriverKind.DGT3000_I2C, {"port": "/dev/i2c-1"})
    assert isinstance(driver, Dgt3000Driver)


async def test_missing_i2c_extra_is_a_permanent_driver_error() -> None:
    with contextlib.suppress(ImportError):
        import smbus2  # noqa: F401
        pytest.skip("smbus2 is installed here: the missing-extra path cannot be shown")
    async with Dgt3000Driver(OPTIONS) as driver:
        with pytest.raises(Exception, match="i2c"):
            await asyncio.wait_for(anext(driver.events()), 3)


SCRIPT = "e2e4 d7d5 e4d5 d8d5 b1c3 d5a5 g1f3 c8g4 f1e2 b8c6 e1g1 e8c8"


async def test_presses_complete_moves_in_the_engine() -> None:
    """Board snapshots (from any board) plus this clock's readings: every move is completed by its press."""
    emu = Dgt3000Emulator(time_source=game_time, time_interval=1.0)
    emu.press(ClockSide.RIGHT)  # left lever up: White (left) to move
    engine = Engine()
    outputs: list[Output] = []
    inbox: asyncio.Queue[BoardEvent | chess.Board] = asyncio.Queue()
    board = chess.Board()
    last_at = 0.0

    async def consume() -> None:
        nonlocal last_at
        while True:
            item = await inbox.get()
            at = max(game_time(), last_at)
            event = BoardSnapshot.from_board(item, at=at) if isinstance(item, chess.Board) else item
            if event.at < last_at:
                # Two devices merged here: a reading stamped before the snapshot queued ahead of it
                # is fed at the snapshot's time (the merge is this harness's job, not the driver's).
                event = dataclasses.replace(event, at=last_at)
            last_at = event.at
            outputs.extend(engine.feed(event))

    outputs.extend(engine.feed(NewGame(at=game_time(), game=GameInfo(time_control="300"))))
    async with make(emu) as driver:
        events = driver.events()
        await next_of(events, LinkChanged)

        async def forward() -> None:
            async for event in events:
                await inbox.put(event)

        tasks = [asyncio.create_task(consume()), asyncio.create_task(forward())]
        try:
            await inbox.put(board.copy())
            await driver.send(SetClock(left_s=300, right_s=300, running=ClockSide.LEFT))
            await asyncio.sleep(0.2)
            for uci in SCRIPT.split():
                mover = ClockSide.LEFT if board.turn == chess.WHITE else ClockSide.RIGHT
                board.push_uci(uci)
                await inbox.put(board.copy())
                await asyncio.sleep(0.1)  # 1 s of game time between the move and the press
                emu.press(mover)
                await asyncio.sleep(0.15)
            await asyncio.sleep(0.2)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    moves = engine.state.moves
    assert [m.uci for m in moves] == SCRIPT.split()
    assert all(m.completion is Completion.PRESS for m in moves)
    assert problems(outputs) == []
    white_times = [m.clock_white for m in moves if m.side == chess.WHITE and m.clock_white is not None]
    assert len(white_times) == len(moves) // 2 and all(280 < t < 300 for t in white_times)
    assert white_times == sorted(white_times, reverse=True)  # White's clock only went down


async def test_events_end_when_the_driver_stops() -> None:
    emu = Dgt3000Emulator(time_source=game_time)
    driver = make(emu)
    async with driver:
        events = driver.events()
        await next_of(events, LinkChanged)
    async with asyncio.timeout(5):  # what was queued, then the end (no hang)
        rest = [e async for e in events]
    assert all(isinstance(e, (LinkChanged, ClockReading)) for e in rest)
