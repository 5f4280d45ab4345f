"""The DGT 3000 on I²C while the arbiter sets its times by hand (7.1, 7.5.5; protocols.md §2.4-2.5).

The Time packet carries the two times and the lever, no run/pause bit: without a commanded side the mapper takes
the side whose time went down as running. Setting a stopped side's time on the clock (the minus and plus
buttons, each press a Button packet, the new time in the next Time packet) makes a time go down by a step (ten
seconds, a minute) with the clock stopped: before, that read as the side running for ``hold_s`` (the engine saw
the pause end and start again with every step, the pieces being put back on a "running" clock). Now a time
going down is running only as time runs (by the seconds since the last packet, plus the display's second) and
not just after a setting button. The emulator sets times by hand as the clock does (``set_by_hand``).
"""

from __future__ import annotations

from boardd.core.events import ClockReading, ClockSide
from drivers.dgt3000_i2c.codec import (
    BUTTON_PLAY,
    ChangeState,
    SetAndRun,
    SetCentralControl,
    Time,
    decode_packet,
    encode,
)
from drivers.dgt3000_i2c.emulator import Dgt3000Emulator
from drivers.dgt3000_i2c.mapping import Dgt3000Mapper


class _Line:
    """The emulator on a hand-driven time line, its packets mapped as they come (no central control)."""

    def __init__(self) -> None:
        self.t = 0.0
        self.emu = Dgt3000Emulator(time_source=lambda: self.t, asleep=False)
        for command in (SetCentralControl(), ChangeState(25), SetAndRun(300, 300, 0, 0)):
            address, packet = encode(command)
            assert self.emu.write(address, packet[1:])  # (the bytes after the address)
        # (the mapper is not told the commanded side: the running side is inferred, as in a replay of the clock's
        # packets alone)
        self.mapper = Dgt3000Mapper()
        self.readings: list[ClockReading] = []

    def drain(self) -> None:
        while (data := self.emu.receive(0.0)) is not None:
            self.readings += [o for o in self.mapper.map(decode_packet(data), self.t) if isinstance(o, ClockReading)]

    def wait(self, seconds: float, step: float = 0.25) -> None:
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = min(end, self.t + step)
            self.drain()


def test_times_set_by_hand_on_a_stopped_clock_are_not_a_running_clock() -> None:
    line = _Line()
    emu = line.emu
    emu.set_running(ClockSide.LEFT)
    line.wait(5.0)
    assert line.readings[-1].running is ClockSide.LEFT  # (running is seen)
    emu.press_button(BUTTON_PLAY)  # the arbiter pauses the clock
    emu.set_running(None)
    line.wait(2.0)
    paused_from = len(line.readings)
    for _ in range(3):  # the increment of the illegal press taken back, ten seconds a press
        emu.set_by_hand(ClockSide.LEFT, -10, step=10)
        line.wait(0.3, 0.1)
    emu.set_by_hand(ClockSide.RIGHT, 120, step=60)  # the penalty to the opponent, a minute a press
    line.wait(3.0)
    during = line.readings[paused_from:]
    assert len(during) >= 6
    assert [r.running for r in during] == [None] * len(during), [(r.left, r.running) for r in during]
    assert (during[-1].left, during[-1].right) == (265.0, 420.0)
    assert line.mapper.stats["times_set_by_hand"] == 3
    emu.set_running(ClockSide.LEFT)  # the restart: running is seen again
    line.wait(2.5)
    assert line.readings[-1].running is ClockSide.LEFT


def test_a_jump_down_without_buttons_is_no_running_clock_a_second_a_second_is() -> None:
    """Without the Button packets (a packet lost, another firmware): a step of a minute within a fraction of a
    second is no running time; a second per second is."""
    mapper = Dgt3000Mapper()
    mapper.map(Time(300, 300, lever=True), 0.0)
    (jump,) = mapper.map(Time(240, 300, lever=True), 0.3)
    assert isinstance(jump, ClockReading) and jump.running is None
    (tick,) = mapper.map(Time(239, 300, lever=True), 1.3)
    assert isinstance(tick, ClockReading) and tick.running is ClockSide.LEFT
    (late,) = mapper.map(Time(236, 300, lever=True), 4.3)  # packets three seconds apart: three seconds down
    assert isinstance(late, ClockReading) and late.running is ClockSide.LEFT
