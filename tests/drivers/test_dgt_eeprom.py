"""The DGT EEPROM move log (protocols.md §1.9): codec bytes, the emulator's log, the driver's BoardLog.

The emulator and the driver talk through a real pty; the "host gone" is a driver that stopped reading
(its port closed: a crashed daemon), the host back is a new driver opening the same path.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random

import chess
import pytest

from boardd.core.eventlog import event_from_json, event_to_json
from boardd.core.events import BoardLog, BoardSnapshot, ClockSide, LoggedChange, LoggedPress
from drivers.dgt import DgtDriver
from drivers.dgt.codec import (
    EE_MOVES_SIZE,
    Command,
    DgtDecoder,
    EEClock,
    EEFieldChange,
    EEMoves,
    EETag,
    EETagRecord,
    decode_ee_log,
    encode,
    encode_ee_log,
)
from drivers.dgt.emulator import DgtEmulator, Mode
from drivers.dgt.mapping import DgtMapper, square_to_field
from tests.drivers.test_dgt_driver import SCAN, Events, eventually, is_reading, is_snapshot, options

E2, E4, E7, E5 = chess.E2, chess.E4, chess.E7, chess.E5
WP = chess.Piece(chess.PAWN, chess.WHITE)
BP = chess.Piece(chess.PAWN, chess.BLACK)


def h(text: str) -> bytes:
    return bytes.fromhex(text)


# --- codec -------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "record"), [
    (h("41 34"), EEFieldChange(field=0x34, code=1)),          # e2 (field 52) white pawn
    (h("40 34"), EEFieldChange(field=0x34, code=0)),          # e2 emptied
    (h("57 1c"), EEFieldChange(field=0x1C, code=7, quick=True)),  # e5 black pawn, < 250 ms after the previous
    (h("71 29 59"), EEClock(left=True, seconds=3600 + 29 * 60 + 59)),   # left clock 1:29:59
    (h("60 05 00"), EEClock(left=False, seconds=300)),        # right clock 0:05:00
    (h("6e"), EETagRecord(tag=EETag.DOWNLOADED)),
    (h("7a"), EETagRecord(tag=EETag.BEGINPOS_ROT)),
])
def test_ee_records_round_trip_byte_for_byte(raw: bytes, record: EEFieldChange | EEClock | EETagRecord) -> None:
    data = encode_ee_log([record])
    assert len(data) == EE_MOVES_SIZE - 3
    assert data.endswith(raw + h("6b"))  # oldest first, ending in EE_EOF
    assert set(data[:-len(raw) - 1]) == {0x7F}  # NOP padding in front
    assert decode_ee_log(data) == [record]


def test_ee_log_skips_padding_and_damage_and_stops_at_eof() -> None:
    data = h("00 7f 6a 6f  41 34  40 99  62 6a 00  7d  57 1c  6b  41 00")
    # "40 99": a field byte >= 0x80 is impossible; "62 6a 00": minutes 0x6a are not tens/units
    assert decode_ee_log(data) == [EETagRecord(tag=EETag.POWERUP), EETagRecord(tag=EETag.BEGINPOS),
                                   EEFieldChange(field=0x34, code=1), EETagRecord(tag=EETag.POWERUP),
                                   EEFieldChange(field=0x1C, code=7, quick=True)]


def test_ee_ring_buffer_keeps_the_newest_records() -> None:
    records = [EEFieldChange(field=i % 64, code=i % 13) for i in range(5000)]  # 10000 bytes > 0x1f00
    data = encode_ee_log(list(records))
    assert len(data) == EE_MOVES_SIZE - 3
    decoded = decode_ee_log(data)
    assert decoded == records[-len(decoded):] and len(decoded) == (EE_MOVES_SIZE - 4) // 2


def test_ee_moves_frame_decodes_and_maps_to_board_log_after_the_last_download() -> None:
    log = [EETagRecord(tag=EETag.POWERUP), EEFieldChange(field=square_to_field(E2), code=0),
           EETagRecord(tag=EETag.DOWNLOADED),
           EEFieldChange(field=square_to_field(E2), code=0), EEFieldChange(field=square_to_field(E4), code=1),
           EEClock(left=True, seconds=295), EEFieldChange(field=square_to_field(E5), code=7, quick=True)]
    frame = bytes((0x8F, 0x3E, 0x03)) + encode_ee_log(log)
    assert len(frame) == EE_MOVES_SIZE
    [message] = DgtDecoder().feed(frame)
    assert isinstance(message, EEMoves)
    [event] = DgtMapper().map(message, 12.5)
    assert event == BoardLog(at=12.5, entries=(LoggedChange(square=E2, content=None),
                                               LoggedChange(square=E4, content=WP),
                                               LoggedPress(side=ClockSide.LEFT, shown=295.0),
                                               LoggedChange(square=E5, content=BP)))
    # journaled as JSON and back
    assert event_from_json(event_to_json(event)) == event
    # nothing new since the last download: no event
    assert DgtMapper().map(EEMoves(data=encode_ee_log([*log[:3]])), 1.0) == []


# --- emulator + driver on a pty -------------------------------------------------------


async def test_board_logs_while_no_host_reads_and_the_next_host_gets_it_first() -> None:
    async with DgtEmulator(scan_interval=SCAN, seed=3, host_timeout=0.3) as emu:
        emu.set_clock(300, 300)
        async with DgtDriver(options(emu.path), rng=random.Random(1)) as driver:
            events = Events(driver)
            await events.until(is_snapshot)
            await events.until(is_reading)
            emu.start(ClockSide.LEFT)
            await emu.wait_scan(2)
            assert not emu.recording
        # the host is gone (its port closed, nobody reads): the board keeps writing, nobody takes it
        await eventually(lambda: emu.recording, 5.0)
        assert emu.mode == Mode.IDLE and emu.stats["host_gone"] == 1
        emu.move(E2, E4)
        await emu.wait_scan(2)
        assert emu.press(ClockSide.LEFT)
        emu.lift(E7)
        await emu.wait_scan(1)
        emu.place(E5, BP)
        await emu.wait_scan(2)
        assert emu.press(ClockSide.RIGHT)
        await emu.wait_scan(1)
        # raw bytes: a host asking for the log gets it, the EEPROM says it was downloaded
        fd = os.open(emu.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            os.write(fd, encode(Command.SEND_EE_MOVES))
            got = b""
            async with asyncio.timeout(5):
                while len(got) < EE_MOVES_SIZE:
                    await asyncio.sleep(0.01)
                    with contextlib.suppress(BlockingIOError):
                        got += os.read(fd, 10000)
        finally:
            os.close(fd)
        assert got[:3] == h("8f 3e 03")
        records = decode_ee_log(got[3:EE_MOVES_SIZE])
        assert records[:2] == [EETagRecord(tag=EETag.POWERUP), EETagRecord(tag=EETag.BEGINPOS)]
        assert records[2] == EETagRecord(tag=EETag.DOWNLOADED)  # the first driver's download at its connect
        tail = records[3:]
        changes = [r for r in tail if isinstance(r, EEFieldChange)]
        clocks = [r for r in tail if isinstance(r, EEClock)]
        assert sorted((r.field, r.code) for r in changes[:2]) == sorted(
            [(square_to_field(E2), 0), (square_to_field(E4), 1)])
        assert [(r.field, r.code) for r in changes[2:]] == [(square_to_field(E7), 0), (square_to_field(E5), 7)]
        assert [c.left for c in clocks] == [True, False]
        assert 290 <= clocks[0].seconds <= 300 and clocks[1].seconds == 300
        assert tail.index(clocks[0]) == 2 and tail.index(clocks[1]) == 5  # each press after its move
        assert emu.ee_log[-1] == EETagRecord(tag=EETag.DOWNLOADED)
        # the log was downloaded: a new driver gets nothing old, only what happens while no one reads
        assert emu.recording  # the raw host above set no update mode: still nobody reading
        emu.move(chess.G1, chess.F3)
        await emu.wait_scan(2)
        async with DgtDriver(options(emu.path), rng=random.Random(2)) as driver:
            events = Events(driver)
            seen = await events.until(is_snapshot)
            logs = [e for e in seen if isinstance(e, BoardLog)]
            assert len(logs) == 1, seen
            assert sorted(logs[0].entries, key=lambda e: getattr(e, "square", 0)) == [
                LoggedChange(square=chess.G1, content=None),
                LoggedChange(square=chess.F3, content=chess.Piece(chess.KNIGHT, chess.WHITE))]
            assert seen.index(logs[0]) < seen.index(seen[-1])  # the log comes before the dump
            snapshot = seen[-1]
            assert isinstance(snapshot, BoardSnapshot)
            assert snapshot.squares[chess.F3] == chess.Piece(chess.KNIGHT, chess.WHITE)
            assert emu.mode == Mode.UPDATE_NICE and not emu.recording


async def test_changes_written_but_never_read_go_to_the_log() -> None:
    """The host died with bytes unread: they are lost on the line but the board logs them."""
    async with DgtEmulator(scan_interval=SCAN, seed=5, host_timeout=0.5) as emu:
        emu.set_clock(300, 300)
        async with DgtDriver(options(emu.path), rng=random.Random(1)) as driver:
            events = Events(driver)
            await events.until(is_snapshot)
            await events.until(is_reading)
        emu.move(E2, E4)  # written to a port nobody reads any more
        await emu.wait_scan(2)
        assert not emu.recording
        await eventually(lambda: emu.recording, 5.0)
        async with DgtDriver(options(emu.path), rng=random.Random(2)) as driver:
            events = Events(driver)
            seen = await events.until(is_snapshot)
            [log] = [e for e in seen if isinstance(e, BoardLog)]
            assert sorted(log.entries, key=lambda e: getattr(e, "square", 0)) == [
                LoggedChange(square=E2, content=None), LoggedChange(square=E4, content=WP)]
            # the stale field updates were not delivered as if they happened now
            assert not any(getattr(e, "square", None) == E4 for e in seen
                           if not isinstance(e, BoardSnapshot | BoardLog))


async def test_without_host_timeout_the_board_never_logs() -> None:
    async with DgtEmulator(scan_interval=SCAN, seed=5) as emu:
        async with DgtDriver(options(emu.path), rng=random.Random(1)) as driver:
            events = Events(driver)
            await events.until(is_snapshot)
        emu.move(E2, E4)
        await emu.wait_scan(20)
        assert not emu.recording
        async with DgtDriver(options(emu.path), rng=random.Random(2)) as driver:
            events = Events(driver)
            seen = await events.until(is_snapshot)
            assert not any(isinstance(e, BoardLog) for e in seen)
