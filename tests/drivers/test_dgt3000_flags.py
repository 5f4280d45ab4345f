"""DGT 3000 on I²C: a flag falls only when a running side reaches zero (rules-spec 6.1, 7.4; protocols.md §2.4).

The Time packet has no flag bit, only the two times shown (``[5]``-``[7]`` left, ``[11]``-``[13]`` right, BCD) and
the lever (``[19]``). Before, the mapper read any side showing 0:00 as a fallen flag: the clock configured at
0:00:00 with both sides stopped (the ESP32 port's configure), a stopped side set to 0:00 by the arbiter (the
minus button, or the host's set-and-run) all came out as flag falls. The packets below are built byte by byte
from the layout of §2.2/§2.4 (dest ``00``, src ``10``, length ``18``, type ``04``, CRC-8 poly 0x07 over all bytes
before it) and decoded by the driver's codec.
"""

from __future__ import annotations

import pytest

from boardd.core.events import ClockReading, ClockSide
from drivers.dgt3000_i2c.codec import crc8, decode_command, decode_packet
from drivers.dgt3000_i2c.emulator import Dgt3000Emulator
from drivers.dgt3000_i2c.mapping import Dgt3000Mapper


def _bcd(value: int) -> int:
    return (value // 10) << 4 | value % 10


def _time(left: int, right: int, *, lever: int = 0) -> bytes:
    """A Time packet (§2.4): 24 bytes, the times at [5]-[7] and [11]-[13], the lever at [19], [20] = 0 (update)."""
    data = bytearray(23)
    data[0:4] = bytes((0x00, 0x10, 0x18, 0x04))
    for offset, seconds in ((5, left), (11, right)):
        hours, rest = divmod(seconds, 3600)
        data[offset:offset + 3] = bytes((hours, _bcd(rest // 60), _bcd(rest % 60)))
    data[19] = lever
    return bytes(data) + bytes((crc8(bytes(data)),))


def _button(current: int, previous: int) -> bytes:
    """A Button packet (§2.4): [4] state now, [5] state before (02 minus, 04 play, 08 plus, 40 lever)."""
    head = bytes((0x00, 0x10, 0x07, 0x05, current, previous))
    return head + bytes((crc8(head),))


def _feed(mapper: Dgt3000Mapper, packets: list[tuple[float, bytes]]) -> list[ClockReading]:
    return [o for at, data in packets for o in mapper.map(decode_packet(data), at) if isinstance(o, ClockReading)]


def _flags(readings: list[ClockReading]) -> list[tuple[bool, bool]]:
    return [(r.left_flag, r.right_flag) for r in readings]


def test_the_packet_builder_follows_the_protocol() -> None:
    """(The builder: the codec reads its times and lever back; the CRC is the one the codec checks.)"""
    reading, = _feed(Dgt3000Mapper(), [(0.0, _time(5 * 60 + 7, 3600 + 59, lever=1))])
    assert (reading.left, reading.right) == (307.0, 3659.0)


def test_a_clock_configured_at_zero_with_both_sides_stopped_shows_no_flag() -> None:
    """The ESP32 port's configure ends with set-and-run all stopped at 0:00:00: the clock's Time packets show 0:00
    on both sides, nothing running. No flag fell (before: both flags, BOTH_FLAGS_FALLEN material)."""
    readings = _feed(Dgt3000Mapper(), [(0.0, _time(0, 0)), (1.0, _time(0, 0)), (2.0, _time(0, 0))])
    assert _flags(readings) == [(False, False)] * 3


def test_a_stopped_side_set_to_zero_by_the_arbiter_is_no_flag_fall() -> None:
    """The clock paused, the left side at 0:00:10; the arbiter presses minus (Button 02/00, then 00/02) and the next
    Time packet shows 0:00:00 for the stopped side: set by hand, no flag."""
    packets = [(0.0, _time(10, 300)), (1.0, _time(10, 300)), (1.2, _button(0x02, 0x00)), (1.3, _button(0x00, 0x02)),
               (1.35, _time(0, 300)), (2.35, _time(0, 300)), (3.35, _time(0, 300))]
    readings = _feed(Dgt3000Mapper(), packets)
    assert _flags(readings) == [(False, False)] * len(readings)


def test_a_jump_to_zero_in_one_packet_is_no_flag_fall() -> None:
    """Without the Button packets (lost): the side goes from 1:00 to 0:00 within 0.3 s: no running time, no flag."""
    readings = _feed(Dgt3000Mapper(), [(0.0, _time(60, 300)), (0.3, _time(0, 300)), (1.3, _time(0, 300))])
    assert _flags(readings) == [(False, False)] * 3


def test_a_running_side_that_reaches_zero_is_a_flag_fall_until_time_is_set_again() -> None:
    """The left side runs 0:00:03, 0:00:02, 0:00:01, 0:00:00 (a second a packet): its flag falls at 0:00 and stays
    while it shows 0:00 (the clock blocked at zero, 6.1), also in the reading of a lever change; the arbiter then
    gives it 2 minutes (plus, 6.10.2): the flag is up again. (Guard: the fix must not lose the real flag fall.)"""
    packets = [(0.0, _time(3, 300)), (1.0, _time(2, 300)), (2.0, _time(1, 300)), (3.0, _time(0, 300)),
               (4.0, _time(0, 300)), (4.5, _button(0x40, 0x00))]
    readings = _feed(mapper := Dgt3000Mapper(), packets)
    assert _flags(readings) == [(False, False)] * 3 + [(True, False)] * 3
    later = _feed(mapper, [(6.0, _button(0x48, 0x40)), (6.1, _button(0x40, 0x48)), (6.2, _time(120, 300, lever=1))])
    assert _flags(later) == [(False, False)]


@pytest.mark.parametrize("run_out", [True, False])
def test_under_central_control_the_commanded_side_reaching_zero_is_a_flag_fall(run_out: bool) -> None:
    """Host and clock (emulated) under central control: the host's set-and-run of the protocol's example
    (``10 20 0c 0a 00 05 00 00 05 00 01 02``: left 0:05:00 counting down, right stopped), then the left side runs
    out: flag. A fresh clock whose stopped left side the host sets to 0:00:00 (``10 20 0c 0a 00 00 00 00 05 00 00
    ..``: both stopped) shows no flag."""
    t = [0.0]
    emu = Dgt3000Emulator(time_source=lambda: t[0], asleep=False)
    for raw in (bytes.fromhex("10 20 05 0f 48"), bytes.fromhex("10 20 06 0b 39 b9")):
        assert emu.write(0x08, raw[1:])
    mapper = Dgt3000Mapper()
    if run_out:
        example = bytes.fromhex("10 20 0c 0a 00 05 00 00 05 00 01 02")
        mapper.note_running(ClockSide.LEFT)
    else:
        head = bytes.fromhex("10 20 0c 0a 00 00 00 00 05 00 00")
        example = head + bytes((crc8(head),))
        mapper.note_running(None)
    assert decode_command(0x08, example) is not None and emu.write(0x08, example[1:])
    readings: list[ClockReading] = []
    while t[0] < 310.0:
        t[0] += 0.5
        while (data := emu.receive(0.0)) is not None:
            readings += [o for o in mapper.map(decode_packet(data), t[0]) if isinstance(o, ClockReading)]
    assert readings[-1].left == 0.0 and readings[-1].right == 300.0
    assert readings[-1].left_flag is run_out and not readings[-1].right_flag
    assert any(r.left_flag for r in readings) is run_out
