"""``boardd record`` for every family: the tap passed to ``create_driver`` records what replays as the live run.

Each family's ``create_driver`` is given a :class:`~drivers.capture.CaptureWriter` as its tap while the
family's emulator plays a few moves (pty for the serial boards, the pyusb test backend and the fake
``bleak`` for Chessnut, the emulated bus for the DGT 3000) and the live events feed an engine; the capture
then replays through :func:`~drivers.capture.events_from_capture` into a fresh engine, which must
recognise the same moves (for the DGT 3000, a clock only: the same readings). The DGT board has the
same check in test_capture.py (``record()`` against its emulator).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import usb.core

import drivers.record
from boardd.core.engine import Engine
from boardd.core.events import ClockReading, ClockSide, GameInfo, Link, LinkChanged, NewGame
from boardd.core.settings import RulesConfig
from drivers.base import BoardDriver, DriverKind, SetClock, family_module
from drivers.capture import CaptureError, CaptureWriter, events_from_capture, read_capture
from drivers.certabo import CertaboOptions
from drivers.certabo.emulator import CertaboEmulator
from drivers.chessnut import ChessnutOptions
from drivers.chessnut.emulator import ChessnutUsbEmulator
from drivers.dgt3000_i2c import Dgt3000Options
from drivers.dgt3000_i2c.emulator import Dgt3000Emulator
from drivers.millennium import MillenniumOptions
from drivers.millennium.emulator import MillenniumEmulator
from drivers.millennium.pty_emulator import PtyBoardEmulator
from drivers.record import _recording_driver, record
from tests.drivers.test_capture import links, tee_recorded_events
from tests.drivers.test_dgt3000_e2e import next_of
from tests.drivers.test_dgt_driver import eventually
from tests.drivers.test_millennium_e2e import SCAN, game_of, game_time, run_through_engine

SCRIPT = "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5c6 d7c6"
FAST = {"reconnect_initial_s": 0.05, "reconnect_max_s": 0.2}


def replayed_moves(path: Path, family: str) -> list[str]:
    """The moves a fresh engine (no clock, as in the live run) recognises in the capture."""
    engine = Engine(RulesConfig(clock_expected=False))
    engine.feed(NewGame(at=0.0, game=GameInfo(time_control="5400")))
    last = 0.0
    for event in events_from_capture(path, family):
        engine.feed(event)
        last = event.at
    engine.advance(last + 10.0)
    return [m.uci for m in engine.state.moves]


def emulator_and_options(family: str, monkeypatch: pytest.MonkeyPatch) -> tuple[PtyBoardEmulator, Callable[[], object]]:
    """The family's emulator, and its options as the configuration would give them (after the emulator opened)."""
    if family == "millennium":
        millennium = MillenniumEmulator(scan_interval=SCAN)
        return millennium, lambda: MillenniumOptions(port=millennium.path, **FAST)  # type: ignore[arg-type]
    if family == "certabo":
        certabo = CertaboEmulator(scan_interval=SCAN)
        return certabo, lambda: CertaboOptions(port=certabo.path, **FAST)  # type: ignore[arg-type]
    chessnut = ChessnutUsbEmulator(scan_interval=SCAN)
    if family == "chessnut-ble":
        monkeypatch.setitem(sys.modules, "bleak", chessnut.bleak_module())
        return chessnut, lambda: ChessnutOptions(port=f"ble:{chessnut.serial}", write_interval_s=0.01,
                                                 **FAST)  # type: ignore[arg-type]
    # create_driver opens libusb's default backend: point pyusb's device search at the emulated bus.
    find = usb.core.find

    def find_on_emulator(*args: Any, **kwargs: Any) -> Any:
        return find(*args, **{**kwargs, "backend": chessnut.backend})

    monkeypatch.setattr(usb.core, "find", find_on_emulator)
    return chessnut, lambda: ChessnutOptions(port="usb", write_interval_s=0.01, **FAST)  # type: ignore[arg-type]


@pytest.mark.parametrize("family", ["millennium", "certabo", "chessnut", "chessnut-ble"])
async def test_capture_recorded_through_create_driver_replays_the_live_moves(
        family: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = family.removesuffix("-ble")
    emu, make_options = emulator_and_options(family, monkeypatch)
    path = tmp_path / f"{family}.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        writer = CaptureWriter(stream, family=kind, port=family, time_source=game_time)
        async with emu:
            driver: BoardDriver = family_module(kind).create_driver(make_options(), time_source=game_time,
                                                                    tap=writer)

            async def script(board: PtyBoardEmulator) -> None:
                assert await board.play(game_of(SCRIPT), think_scans=4) == len(SCRIPT.split())

            engine, _, _ = await run_through_engine(emu, driver, script, GameInfo(time_control="5400"))
    live = [m.uci for m in engine.state.moves]
    assert live == SCRIPT.split()
    records = list(read_capture(path))
    assert {r.direction for r in records} >= {"rx", "tx"}  # both directions went through the tap
    assert replayed_moves(path, kind) == live


async def test_dgt3000_capture_replays_the_live_clock_readings(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    emu = Dgt3000Emulator(time_source=game_time, time_interval=1.0)
    emu.press(ClockSide.RIGHT)  # the left lever is up
    monkeypatch.setattr("drivers.dgt3000_i2c.driver.PiI2CBus", lambda bus: emu)  # what create_driver opens
    options = Dgt3000Options(reconnect_initial_s=0.05, reconnect_max_s=0.2)
    live: list[ClockReading] = []
    path = tmp_path / "dgt3000.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        writer = CaptureWriter(stream, family="dgt3000-i2c", port=options.port, time_source=game_time)
        driver = family_module("dgt3000-i2c").create_driver(options, time_source=game_time, tap=writer)
        async with driver:
            events = driver.events()

            async def collect() -> None:
                async for event in events:
                    if isinstance(event, ClockReading):
                        live.append(event)

            assert (await next_of(events, LinkChanged)).up
            collector = asyncio.create_task(collect())
            try:
                await driver.send(SetClock(left_s=300, right_s=300, running=ClockSide.LEFT))
                for mover in (ClockSide.LEFT, ClockSide.RIGHT, ClockSide.LEFT):
                    await asyncio.sleep(0.25)  # 2.5 s of game time
                    emu.press(mover)
                await asyncio.sleep(0.25)
            finally:
                collector.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await collector
    replayed = [e for e in events_from_capture(path, "dgt3000-i2c") if isinstance(e, ClockReading)]

    def after_set(readings: list[ClockReading]) -> list[tuple[float | None, float | None, object, object]]:
        seen = [(r.left, r.right, r.running, r.lever_high) for r in readings]
        first = next(i for i, r in enumerate(seen) if r[0] == 300 and r[1] == 300)
        return seen[first:]

    assert after_set(replayed) == after_set(live)
    runs = [r.running for r in live if r.running is not None]
    assert runs[0] is ClockSide.LEFT and ClockSide.RIGHT in runs  # the presses switched sides


@pytest.mark.parametrize("kind", [k for k in DriverKind if k is not DriverKind.SIM])
def test_every_family_can_be_recorded(kind: DriverKind) -> None:
    port = {DriverKind.CHESSNUT: "usb", DriverKind.DGT3000_I2C: "/dev/i2c-1"}.get(kind, "/dev/ttyACM0")
    writer = CaptureWriter(io.StringIO(), family=kind.value, port=port)
    driver = _recording_driver(kind.value, port, writer)
    assert driver.info.driver == kind.value


def test_a_codec_module_that_cannot_be_imported_is_a_capture_error(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"t": 0.0, "rx": "01 24"}\n')
    monkeypatch.setitem(sys.modules, "drivers.chessnut.capture", None)  # as if the module failed to import
    with pytest.raises(CaptureError, match="chessnut"):
        list(events_from_capture(path, "chessnut"))


async def test_dgt3000_recording_keeps_the_clock_link_and_replays_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The DGT 3000 on I²C is a clock only: its link is the clock's. ``record()`` writes its changes
    (the clock pulled off the bus and put back) and the replay reports them as the clock's, as live."""
    emu = Dgt3000Emulator(time_source=game_time, time_interval=1.0)
    monkeypatch.setattr("drivers.dgt3000_i2c.driver.PiI2CBus", lambda bus: emu)
    monkeypatch.setattr(drivers.record, "options_from_mapping", lambda kind, mapping: Dgt3000Options(
        port=mapping["port"], watchdog_s=0.3, reconnect_initial_s=0.05, reconnect_max_s=0.1))
    live = tee_recorded_events(monkeypatch)
    path = tmp_path / "dgt3000.jsonl"
    stop = asyncio.Event()
    with path.open("w", encoding="utf-8") as stream:
        task = asyncio.create_task(record("/dev/i2c-1", stream, driver="dgt3000-i2c", stop=stop))
        await eventually(lambda: (Link.CLOCK, True) in links(live))
        emu.unplug()
        await eventually(lambda: (Link.CLOCK, False) in links(live))
        emu.replug()
        await eventually(lambda: links(live).count((Link.CLOCK, True)) == 2)
        stop.set()
        await task
    assert links(live) == [(Link.CLOCK, True), (Link.CLOCK, False), (Link.CLOCK, True)]
    assert [r.direction for r in read_capture(path) if r.direction.startswith("link")] == [
        "link-up", "link-down", "link-up"]
    assert links(list(events_from_capture(path, "dgt3000-i2c"))) == links(live)
