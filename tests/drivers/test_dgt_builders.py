"""The decoders' hot paths (issue 12, growth) build what the constructors build.

* ``boardd.core.events.clock_reading`` and ``square_changed`` set the fields of ``ClockReading`` and
  ``SquareChanged`` through the slot descriptors: for every value (the usual ones and every value the checks
  refuse) the same object (type, equality, hash, repr) or the same refusal as the constructor.
* ``drivers.dgt.codec.decode_message`` builds a ``ClockTimes`` through the slot descriptors and keeps one
  ``FieldUpdate`` per frame: on random frames, valid and damaged, the messages protocols.md §1.7.1 and §1.5
  define (computed here from the bytes), or the same refusal as before.

Each comparison has a control: a wrong stand-in (times swapped, a check skipped, a cache keyed on the field
alone) fails it.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable

import chess

from boardd.core.errors import EventError
from boardd.core.events import ClockReading, ClockSide, Marker, SquareChanged, clock_reading, square_changed
from drivers.dgt.codec import ClockAck, ClockMessageError, ClockTimes, FieldUpdate, FrameError, decode_message


class _Float(float):
    """A float subclass (numpy's floats are): the builders leave it to the constructor."""


_TIMES: list[object] = [0.0, -0.0, 1.5, 7200.0, -1.5, 1e300, math.inf, -math.inf, math.nan, 0, 3, True, None, "1",
                        _Float(2.0), _Float(-2.0), 10 ** 400]
_SQUARES: list[object] = [0, 1, 63, 64, -1, 1.0, True, None, _Float(3.0)]
_CONTENTS: list[object] = [None, chess.Piece(chess.PAWN, chess.WHITE), chess.Piece(chess.KING, chess.BLACK),
                           Marker.UNKNOWN, Marker.DRAW, "P", 1]


def _outcome(build: Callable[..., object], *args: object, **kwargs: object) -> object:
    try:
        built = build(*args, **kwargs)
    except EventError as exc:
        return ("refused", str(exc))
    except Exception as exc:
        return ("raised", type(exc).__name__)
    return (type(built), built, hash(built), repr(built))


_CLOCK_FIELDS = ("at", "left", "right", "running", "lever_high", "left_flag", "right_flag", "battery_low",
                 "connected", "model")


def _clock_mismatches(builder: Callable[..., object]) -> list[str]:
    mismatches = []
    sides = (None, ClockSide.LEFT, ClockSide.RIGHT)
    for at, left, right in itertools.product(_TIMES, _TIMES, _TIMES):
        for running, lever, flags, model in ((sides[1], sides[2], (False, True, False, True), None),
                                             (None, None, (True, False, True, False), "dgt3000")):
            args = (at, left, right, running, lever, *flags, model)
            expected = _outcome(ClockReading, **dict(zip(_CLOCK_FIELDS, args, strict=True)))
            got = _outcome(builder, *args)
            if got != expected:
                mismatches.append(f"{args!r}: {got!r} != {expected!r}")
    return mismatches


def _square_mismatches(builder: Callable[..., object]) -> list[str]:
    mismatches = []
    for at, square, content in itertools.product(_TIMES, _SQUARES, _CONTENTS):
        expected = _outcome(SquareChanged, at=at, square=square, content=content)
        got = _outcome(builder, at, square, content)
        if got != expected:
            mismatches.append(f"{(at, square, content)!r}: {got!r} != {expected!r}")
    return mismatches


def test_clock_reading_builds_what_the_constructor_builds() -> None:
    assert _clock_mismatches(clock_reading) == []


def test_square_changed_builds_what_the_constructor_builds() -> None:
    assert _square_mismatches(square_changed) == []


def test_builders_control_wrong_stand_ins_fail() -> None:
    def swapped(at: float, left: float, right: float, *rest: object) -> object:
        return clock_reading(at, right, left, *rest)

    def unchecked(at: float, square: int, content: object) -> object:
        event = object.__new__(SquareChanged)
        for name, value in (("at", at), ("square", square), ("content", content)):
            object.__setattr__(event, name, value)
        return event

    assert _clock_mismatches(swapped) != []
    assert _square_mismatches(unchecked) != []


# --- decode_message ---------------------------------------------------------------------------------------------


def _bcd(byte: int) -> int | None:
    high, low = byte >> 4, byte & 0x0F
    return high * 10 + low if high <= 5 and low <= 9 else None


def _defined(frame: bytes) -> object:
    """The message of a field-update or BWTIME frame as the protocol defines it (protocols.md §1.5, §1.7.1), or
    the kind of refusal."""
    if frame[0] == 0x8E:
        if len(frame) != 5:
            return FrameError
        return FrameError if frame[3] > 63 else ("field", frame[3], frame[4])
    if len(frame) != 10:
        return FrameError
    if frame[3] & 0x0F == 0x0A or frame[6] & 0x0F == 0x0A:
        return ClockAck
    hours = (frame[3] & 0x0F, frame[6] & 0x0F)
    digits = [_bcd(b) for b in (frame[4], frame[5], frame[7], frame[8])]
    if max(hours) > 9 or None in digits:
        return ClockMessageError
    right_m, right_s, left_m, left_s = digits
    assert None not in (right_m, right_s, left_m, left_s)
    return ("clock", hours[0] * 3600 + right_m * 60 + right_s, hours[1] * 3600 + left_m * 60 + left_s,  # type: ignore[operator]
            frame[3] & 0x70, frame[6] & 0x70, frame[9])


def _seen(decode: Callable[[bytes], object], frame: bytes | bytearray) -> object:
    try:
        message = decode(frame)  # type: ignore[arg-type]
    except ClockMessageError:
        return ClockMessageError
    except FrameError:
        return FrameError
    if type(message) is FieldUpdate:
        assert message == FieldUpdate(message.field, message.code) and hash(message) == hash((message.field,
                                                                                               message.code))
        return ("field", message.field, message.code)
    if type(message) is ClockTimes:
        same = ClockTimes(message.right_s, message.left_s, message.right_flags, message.left_flags, message.status)
        assert (message, hash(message), repr(message)) == (same, hash(same), repr(same))
        return ("clock", message.right_s, message.left_s, message.right_flags, message.left_flags, message.status)
    return type(message)


def _frames() -> list[bytes]:
    rng = random.Random(5)
    frames = []
    for _ in range(6000):
        if rng.random() < 0.5:
            frames.append(bytes((0x8E, 0, 5, rng.randrange(70), rng.randrange(16))))
        else:
            data = bytes(rng.randrange(0x80) if rng.random() < 0.2 else
                         (rng.choice((0, 0x10, 0x20, 0x40)) | rng.randrange(10)) if i in (0, 3) else
                         rng.randrange(6) << 4 | rng.randrange(10) if i in (1, 2, 4, 5) else rng.randrange(0x40)
                         for i in range(7))
            frames.append(bytes((0x8D, 0, 10)) + data)
    return frames


def _decode_mismatches(decode: Callable[[bytes], object]) -> list[str]:
    mismatches = []
    for frame in _frames():
        for form in (frame, bytearray(frame), frame):   # (the second bytes: a frame decoded before)
            got, expected = _seen(decode, form), _defined(frame)
            if got != expected:
                mismatches.append(f"{frame.hex(' ')}: {got!r} != {expected!r}")
    return mismatches


def test_decode_message_builds_the_messages_the_protocol_defines() -> None:
    assert _decode_mismatches(decode_message) == []


def test_decode_message_control_a_cache_keyed_on_the_field_alone_fails() -> None:
    cache: dict[int, FieldUpdate] = {}

    def keyed_on_field(frame: bytes) -> object:
        if frame[0] == 0x8E and frame[3] < 64:
            return cache.setdefault(frame[3], FieldUpdate(frame[3], frame[4]))
        return decode_message(frame)

    assert _decode_mismatches(keyed_on_field) != []
