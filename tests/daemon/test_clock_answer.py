"""The physical clock's real answer in the command result: the daemon over the DGT driver and emulator."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from boardd.core.events import ClockSide
from boardd.daemon.config import load_config
from boardd.daemon.service import serve
from drivers.base import SetClock
from drivers.dgt.driver import DgtDriver, DgtOptions
from drivers.dgt.emulator import DgtEmulator
from tests.daemon._helpers import consumer, send_command, write_config
from tests.mosquitto import Broker


async def test_set_clock_result_reports_ack_refusal_and_silence(tmp_path: Path, mosquitto: Broker) -> None:
    async with DgtEmulator(scan_interval=0.05, seed=3) as emu:
        emu.set_clock(300, 300)
        drivers: list[DgtDriver] = []

        def make(_kind: str, _options: Any, *, time_source: Any) -> DgtDriver:
            options = DgtOptions(port=emu.path, settle_dump_s=0.0, periodic_dump_s=0.0, clock_ack_timeout_s=0.3,
                                 clock_tries=2)
            drivers.append(DgtDriver(options, time_source=time_source, rng=random.Random(1)))
            return drivers[-1]

        stop = asyncio.Event()
        cfg = load_config(write_config(tmp_path, mosquitto.port))
        async with consumer(mosquitto.port) as c:
            task = asyncio.create_task(serve(cfg, stop=stop, driver_factory=make))
            try:
                await c.wait_for(lambda: (c.retained.get("status") or {}).get("clock_link", {}).get("connected"),
                                 10, "clock connected")
                port = mosquitto.port
                r = await send_command(port, "t1", "set-clock", {"id": "c1", "white": 120, "black": 90})
                assert (r["ok"], r["clock_set"], r["clock_answer"]) == (True, True, "ack"), r
                assert (emu.time_of(ClockSide.LEFT), emu.time_of(ClockSide.RIGHT)) == (120, 90)

                emu.clock_mode = 1  # not mode 23: the clock refuses SetNRun (protocols.md §1.8)
                r = await send_command(port, "t1", "set-clock", {"id": "c2", "white": 60, "black": 60})
                assert (r["ok"], r["clock_set"], r["clock_answer"]) == (True, False, "refused"), r
                assert "mode 23" in r["clock_error"]
                assert (emu.time_of(ClockSide.LEFT), emu.time_of(ClockSide.RIGHT)) == (120, 90)
                assert emu.stats["refused_clock_commands"] == 1
                assert drivers[-1].counters["clock_commands_refused"] == 1

                emu.clock_mode = 23
                emu.drop_acks = 2  # the clock misses both sends: the driver gives up
                r = await send_command(port, "t1", "set-clock", {"id": "c3", "white": 45, "black": 45})
                assert (r["ok"], r["clock_set"], r["clock_answer"]) == (True, False, "not confirmed"), r
                assert drivers[-1].counters["clock_commands_dropped"] == 1
                # the engine took the arbiter's setting in every case (the record is the arbiter's word)
                await c.wait_for(lambda: any(p["white"] == 45 for p in c.of("clock")), 5, "the setting published")
            finally:
                stop.set()
                assert await asyncio.wait_for(task, 20) == 0


@pytest.mark.parametrize("mode", [23, 5])
async def test_emulator_processes_setnrun_only_in_mode_23(mode: int) -> None:
    async with DgtEmulator(scan_interval=0.05, seed=3) as emu:
        emu.set_clock(300, 300)
        options = DgtOptions(port=emu.path, settle_dump_s=0.0, periodic_dump_s=0.0)
        async with DgtDriver(options, rng=random.Random(1)) as driver:
            async for event in driver.events():
                if getattr(event, "left", None) is not None:
                    break  # the board and the clock are up
            emu.clock_mode = mode

            acked = await asyncio.wait_for(driver.send_confirmed(SetClock(left_s=10, right_s=20)), 5)
            assert acked is (mode == 23)
            assert emu.time_of(ClockSide.RIGHT) == (20 if mode == 23 else 300)


async def test_clock_plugged_in_after_start_fills_the_status_model(tmp_path: Path, mosquitto: Broker) -> None:
    async with DgtEmulator(scan_interval=0.05, seed=3, clock=False) as emu:
        def make(_kind: str, _options: Any, *, time_source: Any) -> DgtDriver:
            options = DgtOptions(port=emu.path, settle_dump_s=0.0, periodic_dump_s=0.0)
            return DgtDriver(options, time_source=time_source, rng=random.Random(1))

        stop = asyncio.Event()
        cfg = load_config(write_config(tmp_path, mosquitto.port))
        async with consumer(mosquitto.port) as c:
            task = asyncio.create_task(serve(cfg, stop=stop, driver_factory=make))
            try:
                await c.wait_for(lambda: (c.retained.get("status") or {}).get("board_link", {}).get("connected"),
                                 10, "board connected")
                assert c.retained["status"]["clock_link"]["model"] is None
                emu.clock_connected = True  # the clock is plugged into the board's jack
                await c.wait_for(lambda: c.retained["status"]["clock_link"] == {"model": "dgt3000",
                                                                                "connected": True},
                                 10, "the clock's model in the status")
            finally:
                stop.set()
                assert await asyncio.wait_for(task, 20) == 0
