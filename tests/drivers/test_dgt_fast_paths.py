"""The replay path's fast paths (issue 12, sixth round) give what the general paths give.

* ``DgtDecoder.feed`` takes a read that is one whole fixed-size message without the buffer; the
  buffered loop (``_feed_buffered``) is the general path: both must give the same messages, counters,
  pending bytes and log lines, on valid frames, damaged ones and garbage.
* ``DgtCaptureCodec.events`` builds the events of field updates and clock readings without the
  mapper's dispatch: the same events and counters as ``DgtMapper.map``.
* The lookup tables (BCD digits, fields to squares, lever and running side) equal the functions
  they stand in for; a reading says what protocols.md §1.7.1 says its status byte means.
* ``SquareChanged`` and ``ClockReading`` let the usual values pass their checks inline: they refuse
  exactly what the full checks refuse.
* ``Engine.next_deadline`` answers None at once when nothing arms a timer: the same answer as asking
  every timer, at every step of replayed captures and simulated games.
"""

from __future__ import annotations

import logging
import math
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.errors import EventError
from boardd.core.events import (
    ClockReading,
    ClockSide,
    Event,
    GameInfo,
    Marker,
    SquareChanged,
    _check_clock_time,
    _check_content,
    _check_square,
    _check_time,
)
from boardd.core.settings import RulesConfig
from drivers._codec import TRACE
from drivers.capture import events_from_capture
from drivers.dgt import codec as dgt_codec
from drivers.dgt import mapping as dgt_mapping
from drivers.dgt.codec import ClockMessageError, ClockTimes, DgtDecoder, DgtMessage, decode_message
from drivers.dgt.mapping import ClockButton, DgtCaptureCodec, field_to_square
from drivers.sim import Injection, InjectionKind, random_game, simulate_game

CAPTURES = Path(__file__).parent / "captures"


# --- the decoder ------------------------------------------------------------------------------------------------


def _frame(rng: random.Random) -> bytes:
    """A frame as a board sends it, or one damaged on the way."""
    kind = rng.random()
    if kind < 0.35:  # a field update, now and then an unknown piece code or a field out of range
        field = rng.randrange(64) if rng.random() < 0.9 else rng.randrange(64, 128)
        code = rng.randrange(13) if rng.random() < 0.9 else rng.randrange(13, 128)
        frame = bytes((0x8E, 0x00, 0x05, field, code))
    elif kind < 0.75:  # a clock reading: plausible times, or any data bytes (bad BCD, hours > 9, acks)
        if rng.random() < 0.7:
            data = bytes(x for _ in range(2) for x in (rng.choice((0, 0x10, 0x40)) | rng.randrange(10),
                                                       rng.randrange(6) << 4 | rng.randrange(10),
                                                       rng.randrange(6) << 4 | rng.randrange(10)))
            frame = bytes((0x8D, 0x00, 0x0A)) + data + bytes((rng.randrange(0x40),))
        else:
            frame = bytes((0x8D, 0x00, 0x0A)) + bytes(rng.randrange(0x80) for _ in range(7))
    elif kind < 0.85:  # the other fixed-size messages
        frame = rng.choice((bytes.fromhex("91 00 08 31 32 33 34 35"), bytes.fromhex("93 00 05 03 0a"),
                            bytes.fromhex("96 00 05 01 02"), bytes.fromhex("90 00 05 01 02"),
                            bytes.fromhex("a2 00 0d 33 2e 31 30 41 31 32 33 34 35")))
    elif kind < 0.9:  # a message of variable size, and an id nobody knows
        frame = rng.choice((bytes.fromhex("92 00 06 44 47 54"), bytes.fromhex("a0 00 05 40 00"),
                            bytes.fromhex("c5 00 04 01")))
    else:  # garbage
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12)))
    damage = rng.random()
    if damage < 0.05:  # a byte turned into an id byte
        i = rng.randrange(1, len(frame))
        frame = frame[:i] + bytes((frame[i] | 0x80,)) + frame[i + 1:]
    elif damage < 0.08:  # a wrong length
        frame = frame[:2] + bytes(((frame[2] + rng.choice((-1, 1))) & 0x7F,)) + frame[3:]
    return frame


def _reads(rng: random.Random, n: int) -> Iterator[bytes]:
    """The frames of a stream as the serial port hands them over: mostly one frame a read, sometimes cut
    anywhere or several together."""
    stream = b"".join(_frame(rng) for _ in range(n))
    i = 0
    while i < len(stream):
        if rng.random() < 0.75 and stream[i] >= 0x80:  # the rest of this frame, up to the next id byte
            j = i + 1
            while j < len(stream) and stream[j] < 0x80:
                j += 1
        else:
            j = i + rng.randrange(1, 25)
        yield stream[i:j]
        i = j


@pytest.mark.parametrize("seed", range(8))
def test_decoder_fast_read_equals_the_buffered_path(seed: int, caplog: pytest.LogCaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    reads = list(_reads(rng, 800))
    fast, general = DgtDecoder(), DgtDecoder()
    buffered = DgtDecoder._feed_buffered
    calls = Counter[str]()

    def counted(self: DgtDecoder, data: bytes, messages: list[DgtMessage]) -> list[DgtMessage]:
        calls["fast" if self is fast else "general"] += 1
        return buffered(self, data, messages)

    monkeypatch.setattr(DgtDecoder, "_feed_buffered", counted)
    with caplog.at_level(TRACE, logger="drivers.dgt.codec"):
        for data in reads:
            caplog.clear()
            got = fast.feed(data)
            fast_log = [(r.levelno, r.getMessage()) for r in caplog.records]
            caplog.clear()
            expected = general._feed_buffered(data, [])
            general_log = [(r.levelno, r.getMessage()) for r in caplog.records]
            assert got == expected, data.hex(" ")
            assert fast_log == general_log, data.hex(" ")
            assert (fast.stats, fast.pending) == (general.stats, general.pending), data.hex(" ")
    # the fast decoder took both ways (the reads it buffered, and the others), and the stream had every kind
    # of trouble in it
    assert calls["general"] == len(reads) and len(reads) // 10 < calls["fast"] < len(reads) * 9 // 10
    assert all(fast.stats[key] > 0 for key in ("messages", "discarded_bytes", "invalid_frames", "bad_clock",
                                                 "unknown_messages")), fast.stats


def test_bcd_table_and_the_first_bad_byte_named() -> None:
    for value in range(256):
        try:
            expected = dgt_codec._bcd(value, "x", b"")
        except ClockMessageError:
            expected = -1
        assert dgt_codec._BCD[value] == expected
    good = bytes.fromhex("8d 00 0a 00 12 34 00 45 56 09")
    assert decode_message(good) == ClockTimes(right_s=12 * 60 + 34, left_s=45 * 60 + 56, right_flags=0,
                                              left_flags=0, status=9)
    for position, name in ((4, "right minutes"), (5, "right seconds"), (7, "left minutes"), (8, "left seconds")):
        bad = bytearray(good)
        for later in range(position, 9):
            if later != 6:
                bad[later] = 0x6A  # 6 tens: not BCD 00..59, and every later one too
        with pytest.raises(ClockMessageError, match=name):
            decode_message(bytes(bad))


# --- the mapper -------------------------------------------------------------------------------------------------


def _clock(left: int, right: int, status: int) -> ClockTimes:
    return ClockTimes(right_s=right, left_s=left, right_flags=0, left_flags=0, status=status)


#: A press (the lever from left high to right high) with the increment shown in the next reading; the all-zero
#: message.
_PRESS = [_clock(100, 100, 0x09), _clock(100, 100, 0x13), _clock(102, 100, 0x13)]
_ZERO = [_clock(0, 0, 0)]


def _messages(rng: random.Random, n: int) -> list[DgtMessage]:
    decoder = DgtDecoder()
    messages: list[DgtMessage] = []
    for data in _reads(rng, n):
        messages += decoder.feed(data)
        if rng.random() < 0.02:
            messages += rng.choice((_PRESS, _ZERO))
    return messages


@pytest.mark.parametrize("seed", range(6))
def test_capture_codec_events_equal_the_mapper(seed: int, caplog: pytest.LogCaptureFixture) -> None:
    rng = random.Random(100 + seed)
    messages = _messages(rng, 1500)
    fast, general = DgtCaptureCodec(), DgtCaptureCodec()
    at = 0.0
    kinds = Counter[str]()
    with caplog.at_level(logging.DEBUG, logger="drivers.dgt.mapping"):
        for message in messages:
            at += rng.choice((0.0, 0.1, 0.4, 1.0, 3.0))
            if rng.random() < 0.02:  # the host set the clock now and then
                fast.mapper.note_clock_set()
                general.mapper.note_clock_set()
            caplog.clear()
            got = fast.events(message, at)
            fast_log = [(r.levelno, r.getMessage()) for r in caplog.records]
            caplog.clear()
            expected = [e for e in general.mapper.map(message, at) if not isinstance(e, ClockButton)]
            general_log = [(r.levelno, r.getMessage()) for r in caplog.records]
            assert got == expected, message
            assert fast_log == general_log, message
            assert fast.mapper.stats == general.mapper.stats
            kinds.update(type(e).__name__ for e in got)
    assert kinds["SquareChanged"] > 100 and kinds["ClockReading"] > 100 and kinds["LinkChanged"] > 2, kinds
    stats = fast.mapper.stats
    assert all(stats[key] for key in ("unknown_piece_codes", "clock_time_up", "clock_late_increments",
                                      "clock_zero")), stats


def test_mapper_tables_equal_their_functions() -> None:
    assert tuple(field_to_square(field) for field in range(64)) == dgt_mapping._FIELD_SQUARES
    assert sorted(dgt_mapping._FIELD_SQUARES) == list(chess.SQUARES)
    for status in range(256):
        assert dgt_mapping._LEVER_RUNNING[status & dgt_mapping._SIDE_BITS] == dgt_mapping._lever_and_running(status)


@pytest.mark.parametrize("status", range(0x20))
def test_a_reading_says_what_its_status_byte_means(status: int) -> None:
    """protocols.md §1.7.1: D0 running, D1 lever high on the right, D2 battery low, D3 left to move, D4 right
    to move (the running side; either both or neither: the lever's side); flags D4 or D6 of the hours byte."""
    mapper = dgt_mapping.DgtMapper()
    events = mapper.map(ClockTimes(right_s=61, left_s=3599, right_flags=0x40, left_flags=0x20, status=status), 2.5)
    reading = events[-1]
    assert isinstance(reading, ClockReading)
    lever = ClockSide.RIGHT if status & 0x02 else ClockSide.LEFT
    left_moves, right_moves = bool(status & 0x08), bool(status & 0x10)
    running = None if not status & 0x01 else (
        ClockSide.LEFT if left_moves and not right_moves else ClockSide.RIGHT if right_moves and not left_moves
        else lever)
    assert reading == ClockReading(at=2.5, left=3599.0, right=61.0, running=running, lever_high=lever,
                                   left_flag=False, right_flag=True, battery_low=bool(status & 0x04))
    assert type(reading.left) is float and type(reading.left_flag) is bool and type(reading.battery_low) is bool


def test_the_mapper_still_reads_status_zero_as_a_stopped_clock() -> None:
    mapper = dgt_mapping.DgtMapper()
    assert mapper.map(ClockTimes(right_s=0, left_s=0, right_flags=0, left_flags=0, status=0), 1.0) == []
    assert mapper.stats["clock_zero"] == 1
    events = mapper.map(ClockTimes(right_s=5, left_s=0, right_flags=0, left_flags=0, status=0), 2.0)
    assert isinstance(events[-1], ClockReading) and events[-1].running is None


# --- the events' checks -----------------------------------------------------------------------------------------

_VALUES: list[object] = [0, 1, 63, 64, -1, 0.0, -0.0, 1.5, -1.5, 1e300, math.inf, -math.inf, math.nan, True, False,
                         10 ** 400, None, "1", chess.Piece(chess.PAWN, chess.WHITE), Marker.UNKNOWN, Marker.DRAW,
                         chess.WHITE]


class _Float(float):
    """A float subclass (numpy's floats are): the inline tests leave it to the full checks."""


_VALUES += [_Float(2.0), _Float(-2.0), _Float(math.nan)]


def _refuses(check: object, *args: object) -> object:
    try:
        check(*args)  # type: ignore[operator]
    except EventError:
        return EventError
    except Exception as exc:
        return type(exc)
    return None


def _built(cls: type, **kwargs: object) -> object:
    return _refuses(lambda: cls(**kwargs))


@pytest.mark.parametrize("value", _VALUES, ids=repr)
def test_event_checks_refuse_what_the_full_checks_refuse(value: object) -> None:
    piece = chess.Piece(chess.KING, chess.BLACK)
    assert _built(SquareChanged, at=value, square=3, content=piece) == _refuses(_check_time, value)
    assert _built(SquareChanged, at=1.0, square=value, content=piece) == _refuses(_check_square, value)
    assert _built(SquareChanged, at=1.0, square=3, content=value) == _refuses(_check_content, value)
    assert _built(ClockReading, at=value, left=1.0, right=2.0, running=None) == _refuses(_check_time, value)
    for side in ("left", "right"):
        times: dict[str, object] = {"left": 1.0, "right": 2.0, side: value}
        expected = None if value is None else _refuses(_check_clock_time, side, value)
        assert _built(ClockReading, at=1.0, running=None, **times) == expected


# --- the engine's next deadline ---------------------------------------------------------------------------------


def _streams() -> Iterator[list[Event]]:
    for path in sorted(CAPTURES.glob("*.jsonl")):
        yield list(events_from_capture(path, "dgt", stats=Counter()))
    kinds = list(InjectionKind)
    for seed in range(12):
        game = random_game(2000 + seed, max_plies=50)
        profile = ("clean", "casual", "clumsy")[seed % 3]
        injections = [Injection(kinds[seed % len(kinds)], 5 + seed % 9)] if seed % 2 else []
        try:
            yield simulate_game(game, seed=seed, profile=profile, injections=injections).events
        except Exception:
            yield simulate_game(game, seed=seed, profile=profile).events


def _checked(engine: Engine, answers: Counter[str]) -> float | None:
    deadline = engine.next_deadline()
    assert deadline == engine._next_deadline_of_all()
    answers["none" if deadline is None else "due"] += 1
    return deadline


def test_next_deadline_equals_asking_every_timer() -> None:
    answers = Counter[str]()
    for events in _streams():
        engine = Engine(RulesConfig(), GameInfo(time_control="?", variant="auto"))
        for event in events:
            while (deadline := _checked(engine, answers)) is not None and deadline < event.at:
                engine.advance(deadline)
            engine.feed(event)
        while (deadline := _checked(engine, answers)) is not None:
            engine.advance(deadline)
    assert answers["none"] > 1000 and answers["due"] > 1000, answers
