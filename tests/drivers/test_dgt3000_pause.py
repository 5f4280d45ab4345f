"""DGT 3000 on I²C under central control: the play/pause button is the pause (6.11; rules-spec R14, §7.5).

Under central control (mode 25) the clock runs what the host commands and only reports its buttons (protocols.md
§2.3-2.5): it neither switches sides at the lever nor stops at play/pause by itself. Before, the driver switched
sides at the lever but ignored play/pause: the arbiter stopping the clock to deal with an incident left it running,
and no reading ever showed a pause (the engine raised no CLOCK_PAUSED, the correction never saw the arbiter at the
board). Now a press of play/pause stops both sides (a set-and-run with both stopped, the reading of the button shows
``running`` None) and, paused, a press starts the side whose lever is up again (rules-spec §7.5).
"""

from __future__ import annotations

import asyncio

import chess

from boardd.core.engine import Engine
from boardd.core.events import BoardEvent, BoardSnapshot, ClockReading, ClockSide, GameInfo, LinkChanged, NewGame
from boardd.core.outputs import IrregularityRaised, Output
from drivers.base import SetClock
from drivers.dgt3000_i2c.codec import BUTTON_PLAY, SetAndRun
from drivers.dgt3000_i2c.emulator import Dgt3000Emulator
from tests.drivers.test_dgt3000_e2e import make, next_of
from tests.drivers.test_millennium_e2e import game_time


async def _until(predicate: object, what: str) -> None:
    for _ in range(100):
        if callable(predicate) and predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


async def _session(emu: Dgt3000Emulator) -> list[BoardEvent]:
    """Start White's side (left); the arbiter presses play/pause, waits, presses it again."""
    got: list[BoardEvent] = []
    async with make(emu) as driver:
        events = driver.events()
        got.append(await next_of(events, LinkChanged))
        await driver.send(SetClock(left_s=300, right_s=300, running=ClockSide.LEFT))

        async def collect() -> None:
            async for event in events:
                got.append(event)

        task = asyncio.create_task(collect())
        try:
            await asyncio.sleep(0.3)  # 3 s of game time: White's clock runs
            emu.press_button(BUTTON_PLAY)  # the arbiter stops the clock
            await _until(lambda: emu.modes == {ClockSide.LEFT: 0, ClockSide.RIGHT: 0}, "the clock was not stopped")
            stopped = emu.time_of(ClockSide.LEFT)
            await asyncio.sleep(0.3)  # 3 s of game time paused
            assert emu.time_of(ClockSide.LEFT) == stopped  # (the clock is really stopped)
            emu.press_button(BUTTON_PLAY)  # the arbiter restarts it
            await _until(lambda: emu.modes[ClockSide.LEFT] == 1, "the clock was not restarted")
            await asyncio.sleep(0.3)
        finally:
            task.cancel()
    assert any(isinstance(c, SetAndRun) and (c.left_mode, c.right_mode) == (0, 0) for c in emu.received)
    return got


async def test_play_pause_under_central_control_pauses_and_restarts_the_clock() -> None:
    emu = Dgt3000Emulator(time_source=game_time, time_interval=1.0)
    emu.press(ClockSide.RIGHT)  # left lever up: White (left) to move
    events = await _session(emu)
    runs = [r.running for r in events if isinstance(r, ClockReading) and r.left != 0]
    # White's side runs, the pause shows both stopped, the restart White's side again
    collapsed = [x for i, x in enumerate(runs) if i == 0 or runs[i - 1] != x]
    assert collapsed == [ClockSide.LEFT, None, ClockSide.LEFT], runs


async def test_the_engine_sees_the_arbiters_pause() -> None:
    """The same session through the engine: the pause is CLOCK_PAUSED (6.11.2: the arbiter checks the reason), the
    state's clock stopped while paused, White's clock running again after the restart."""
    emu = Dgt3000Emulator(time_source=game_time, time_interval=1.0)
    emu.press(ClockSide.RIGHT)
    events = await _session(emu)
    readings = [e for e in events if isinstance(e, ClockReading) and e.left == 300 and e.right == 300]
    assert readings  # (the set-and-run shown)
    start = readings[0].at - 0.01
    engine = Engine()
    outs: list[Output] = engine.feed(NewGame(at=start - 0.02, game=GameInfo(time_control="300")))
    outs += engine.feed(BoardSnapshot.from_board(chess.Board(), at=start - 0.01))
    running: list[object] = []
    for event in events:
        if event.at >= start:
            outs += engine.feed(event)
            running.append(engine.state.clock.running)
    paused = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)
              and o.irregularity.code == "CLOCK_PAUSED"]
    assert len(paused) == 1
    collapsed = [x for i, x in enumerate(running) if i == 0 or running[i - 1] != x]
    assert collapsed[-3:] == [chess.WHITE, None, chess.WHITE], collapsed


def test_play_switch_reads_the_button_as_the_laws_do() -> None:
    """The mapper's decision (pure): running, play/pause is the pause; paused, the side whose lever is up runs
    again; before any side was commanded (no central control yet) or for another button, nothing."""
    from drivers.dgt3000_i2c.codec import BUTTON_LEVER, BUTTON_PLUS, Button, Time
    from drivers.dgt3000_i2c.mapping import Dgt3000Mapper

    mapper = Dgt3000Mapper()
    mapper.map(Time(300, 300, lever=True), 0.0)  # lever bit set: the left lever up (the default reading)
    press = Button(BUTTON_PLAY | BUTTON_LEVER, BUTTON_LEVER)
    assert mapper.play_switch(press) is None  # nothing commanded: not under the host's control
    mapper.note_running(ClockSide.LEFT)
    assert mapper.play_switch(Button(BUTTON_PLUS | BUTTON_LEVER, BUTTON_LEVER)) is None
    assert mapper.play_switch(press) == (None,)
    mapper.note_running(None)
    (reading,) = [o for o in mapper.map(press, 1.0) if isinstance(o, ClockReading)]
    assert reading.running is None
    assert mapper.play_switch(press) == (ClockSide.LEFT,)
