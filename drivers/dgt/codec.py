"""Pure codec of the DGT e-board serial protocol (protocols.md §1): bytes <-> typed messages.

Theory of operation
-------------------
Board -> host messages are framed as ``id | len_hi | len_lo | data...`` where
``id`` has bit 7 set and every other byte has bit 7 clear (§1.3). So the
decoder can always resynchronise: any byte >= 0x80 starts a new message, and
a partial message interrupted by such a byte is discarded. Discarded bytes
are counted in :attr:`DgtDecoder.stats` and TRACE-logged with ``>>``.

:class:`DgtDecoder` only frames; :func:`decode_message` turns one complete
frame into a typed message and raises a :class:`DgtProtocolError` subclass
when the frame is impossible (wrong length for its id, field > 63, clock
hours > 9, non-BCD minutes). The decoder catches those, counts them and
carries on: a byte stream can never crash it.

Host -> board commands are single bytes (:class:`Command`) or
length-prefixed (the ``0x2b`` clock wrapper and the ``0x60``/``0x63`` LED and
key commands). :func:`encode` writes them; :class:`HostDecoder` reads them
(the emulator's side). :func:`encode_message` writes board messages (the
emulator's other side), so every message round-trips.

Nothing here does I/O or reads a clock.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

from boardd.core.errors import ProtocolError
from drivers._codec import TRACE, BufferedDecoder

__all__ = [
    "BATTERY_STATUS_SIZE",
    "EE_MOVES_SIZE",
    "TRACE",
    "BatteryStatus",
    "BoardDump",
    "BusAddress",
    "ClockAck",
    "ClockAscii",
    "ClockBeep",
    "ClockButtonRequest",
    "ClockDisplayXL",
    "ClockEnd",
    "ClockMessageError",
    "ClockSetNRun",
    "ClockTimes",
    "ClockVersionRequest",
    "Command",
    "DgtDecoder",
    "DgtMessage",
    "DgtProtocolError",
    "EEClock",
    "EEFieldChange",
    "EEMoves",
    "EERecord",
    "EETag",
    "EETagRecord",
    "FieldUpdate",
    "FrameError",
    "HardwareVersion",
    "HostCommand",
    "HostDecoder",
    "LongSerialNr",
    "MessageId",
    "RawHostCommand",
    "SerialNr",
    "SetNRunMode",
    "Trademark",
    "Unknown",
    "Version",
    "decode_ee_log",
    "decode_message",
    "encode",
    "encode_ee_log",
    "encode_message",
]

_LOGGER = logging.getLogger(__name__)

#: Total size of DGT_MSG_EE_MOVES: 0x2000 - 0x100 + 3 (§1.3).
EE_MOVES_SIZE = 0x2000 - 0x100 + 3
#: Total size of DGT_MSG_BATTERY_STATUS as sent in practice (§1.3, §9.3).
BATTERY_STATUS_SIZE = 12
#: Any byte with bit 7 set: only a message id can have it (§1.3).
_ID_BYTE = re.compile(rb"[\x80-\xff]")
#: Largest total length the 14-bit length field can express.
_MAX_LENGTH = 0x3FFF


class DgtProtocolError(ProtocolError):
    """Bytes from a DGT board did not follow the protocol."""


class FrameError(DgtProtocolError):
    """A frame is impossible: bad length for its id, field out of range, bad text."""


class ClockMessageError(DgtProtocolError):
    """A BWTIME message carries an impossible time (hours > 9, non-BCD minutes/seconds)."""


# --- Wire constants ------------------------------------------------------------


class Command(enum.IntEnum):
    """Single-byte host commands (§1.2)."""

    RESET = 0x40
    SEND_CLK = 0x41
    SEND_BRD = 0x42
    SEND_UPDATE = 0x43
    SEND_UPDATE_BRD = 0x44
    RETURN_SERIALNR = 0x45
    RETURN_BUSADRES = 0x46
    SEND_TRADEMARK = 0x47
    SEND_HARDWARE_VERSION = 0x48
    SEND_EE_MOVES = 0x49
    TO_BUSMODE = 0x4A
    SEND_UPDATE_NICE = 0x4B
    SEND_BATTERY_STATUS = 0x4C
    SEND_VERSION = 0x4D
    START_BOOTLOADER = 0x4E
    RETURN_LONG_SERIALNR = 0x55


class MessageId(enum.IntEnum):
    """Board -> host message ids, bit 7 included (§1.3)."""

    BOARD_DUMP = 0x86
    BWTIME = 0x8D
    FIELD_UPDATE = 0x8E
    EE_MOVES = 0x8F
    BUSADRES = 0x90
    SERIALNR = 0x91
    TRADEMARK = 0x92
    VERSION = 0x93
    HARDWARE_VERSION = 0x96
    BATTERY_STATUS = 0xA0
    LONG_SERIALNR = 0xA2


#: Fixed total sizes; ids missing here have a variable size.
_FIXED_SIZE: dict[int, int] = {
    MessageId.BOARD_DUMP: 67,
    MessageId.BWTIME: 10,
    MessageId.FIELD_UPDATE: 5,
    MessageId.BUSADRES: 5,
    MessageId.SERIALNR: 8,
    MessageId.VERSION: 5,
    MessageId.HARDWARE_VERSION: 5,
    MessageId.LONG_SERIALNR: 13,
}

#: The ids of the messages of play as plain ints (compared without the enum).
_FIELD_UPDATE: Final = int(MessageId.FIELD_UPDATE)
_BWTIME: Final = int(MessageId.BWTIME)

_CLOCK_WRAPPER = 0x2B
_CLOCK_START = 0x03
_CLOCK_END_BYTE = 0x00
#: Multi-byte host commands framed as ``cmd, len, payload..., 00`` (§1.2).
_LENGTH_PREFIXED = frozenset({_CLOCK_WRAPPER, 0x60, 0x63})


class ClockCommandId(enum.IntEnum):
    """Sub-commands inside the ``0x2b`` clock wrapper (§1.8)."""

    DISPLAY = 0x01
    ICONS = 0x02
    END = 0x03
    BUTTON = 0x08
    VERSION = 0x09
    SETNRUN = 0x0A
    BEEP = 0x0B
    ASCII = 0x0C
    REV2_ASCII = 0x0D


class SetNRunMode(enum.IntFlag):
    """Mode byte of SetNRun (§1.8)."""

    LEFT_RUNS = 0x01
    RIGHT_RUNS = 0x02
    PAUSE = 0x04
    TOGGLE_ON_LEVER = 0x08


# --- Board -> host messages --------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoardDump:
    """DGT_MSG_BOARD_DUMP: 64 raw piece codes in DGT field order (a8=0 .. h1=63)."""

    codes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FieldUpdate:
    """DGT_MSG_FIELD_UPDATE: DGT field (a8=0 .. h1=63) now holds piece ``code`` (0 = empty)."""

    field: int
    code: int


@dataclass(frozen=True, slots=True)
class ClockTimes:
    """DGT_MSG_BWTIME, clock-times form (§1.7.1).

    Attributes:
        right_s: seconds shown on the "right" side (bytes 3-5).
        left_s: seconds shown on the "left" side (bytes 6-8).
        right_flags: upper bits of byte 3: 0x10 flag fallen and blocked at zero,
            0x20 time-per-move icon, 0x40 flag fallen and shown.
        left_flags: the same for byte 6.
        status: byte 9: D0 running, D1 lever high on the right, D2 battery low,
            D3 left to move, D4 right to move (as the real captures show, §9.1),
            D5 no clock connected.
    """

    right_s: int
    left_s: int
    right_flags: int
    left_flags: int
    status: int

    @property
    def is_all_zero(self) -> bool:
        """The "empty" BWTIME some firmware sends after a clock command (§1.7.1)."""
        return not (self.right_s or self.left_s or self.right_flags or self.left_flags or self.status)


@dataclass(frozen=True, slots=True)
class ClockAck:
    """DGT_MSG_BWTIME, clock-ack form (§1.7.2): the four decoded ack bytes."""

    ack0: int
    ack1: int
    ack2: int
    ack3: int

    @property
    def is_error(self) -> bool:
        """The clock refused the command (``ack0 == 0x40``)."""
        return self.ack0 == 0x40

    @property
    def is_auto(self) -> bool:
        """Generated by the clock itself (ready, button pressed), not a reply to a command."""
        return bool(self.ack1 & 0x80)

    @property
    def command(self) -> int:
        """The clock command or auto code this ack is about (``ack1`` without bit 7)."""
        return self.ack1 & 0x7F


@dataclass(frozen=True, slots=True)
class SerialNr:
    """DGT_MSG_SERIALNR: 5 ASCII digits."""

    text: str


@dataclass(frozen=True, slots=True)
class LongSerialNr:
    """DGT_MSG_LONG_SERIALNR: 10 ASCII characters."""

    text: str


@dataclass(frozen=True, slots=True)
class Trademark:
    """DGT_MSG_TRADEMARK: free ASCII text."""

    text: str


@dataclass(frozen=True, slots=True)
class Version:
    """DGT_MSG_VERSION: board firmware version."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}"


@dataclass(frozen=True, slots=True)
class HardwareVersion:
    """Hardware version (message 0x96)."""

    major: int
    minor: int


@dataclass(frozen=True, slots=True)
class BusAddress:
    """DGT_MSG_BUSADRES: the 14-bit bus address."""

    address: int


@dataclass(frozen=True, slots=True)
class BatteryStatus:
    """DGT_MSG_BATTERY_STATUS (Bluetooth boards): ``percent`` and the raw data bytes (§1.9)."""

    percent: int
    data: bytes


@dataclass(frozen=True, slots=True)
class EEMoves:
    """DGT_MSG_EE_MOVES: the EEPROM log, raw; :func:`decode_ee_log` reads its records (§1.9)."""

    data: bytes


class EETag(enum.IntEnum):
    """One-byte records of the EEPROM log (§1.9)."""

    NOP2 = 0x00
    POWERUP = 0x6A
    EOF = 0x6B
    FOURROWS = 0x6C
    EMPTYBOARD = 0x6D
    DOWNLOADED = 0x6E
    BEGINPOS = 0x6F
    BEGINPOS_ROT = 0x7A
    START_TAG = 0x7B
    WATCHDOG_ACTION = 0x7C
    FUTURE_1 = 0x7D
    FUTURE_2 = 0x7E
    NOP = 0x7F


@dataclass(frozen=True, slots=True)
class EEFieldChange:
    """A field change in the EEPROM log: ``0t0r nnnn`` ``00ii iiii`` (§1.9).

    Attributes:
        field: DGT field (a8=0 .. h1=63).
        code: the piece code now on it (0 = empty).
        quick: the ``r`` bit: less than ~250 ms since the previous record.
    """

    field: int
    code: int
    quick: bool = False


@dataclass(frozen=True, slots=True)
class EEClock:
    """A clock record of the EEPROM log, written at a lever change: ``0uuf hhhh`` ``0MMM mmmm`` ``0SSS ssss``.

    Attributes:
        left: the ``f`` bit: the left clock's time (else the right one's).
        seconds: the time that clock showed (h:mm:ss, minutes and seconds as tens/units).
    """

    left: bool
    seconds: int


@dataclass(frozen=True, slots=True)
class EETagRecord:
    """A one-byte record of the EEPROM log (power-up, begin position, downloaded, ...)."""

    tag: EETag


EERecord: TypeAlias = EEFieldChange | EEClock | EETagRecord

#: Records that carry nothing (padding of the ring buffer).
_EE_SKIPPED = frozenset({EETag.NOP, EETag.NOP2, EETag.FUTURE_1, EETag.FUTURE_2})


def decode_ee_log(data: bytes) -> list[EERecord]:
    """The records of an EEPROM log (the data of DGT_MSG_EE_MOVES), oldest first, up to ``EE_EOF``.

    Padding (``NOP``, ``NOP2``, the "future" tags) is skipped. A record cut short by the end of the data,
    a field > 63 or a clock record whose minutes/seconds are not tens/units is skipped too (one byte at
    a time, so the next record is found again): the log is a hint, never a reason to fail.

    >>> decode_ee_log(bytes.fromhex("6a 6f 40 34 51 24 72 05 09 6b 40 00"))  # doctest: +NORMALIZE_WHITESPACE
    [EETagRecord(tag=<EETag.POWERUP: 106>), EETagRecord(tag=<EETag.BEGINPOS: 111>),
     EEFieldChange(field=52, code=0, quick=False), EEFieldChange(field=36, code=1, quick=True),
     EEClock(left=True, seconds=7509)]
    """
    records: list[EERecord] = []
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if 0x40 <= b <= 0x5F:
            if i + 1 < n and data[i + 1] <= 63:
                records.append(EEFieldChange(field=data[i + 1], code=b & 0x0F, quick=bool(b & 0x10)))
                i += 2
                continue
        elif 0x60 <= b <= 0x69 or 0x70 <= b <= 0x79:
            if i + 2 < n:
                mm, ss = data[i + 1], data[i + 2]
                if (mm >> 4) <= 5 and (mm & 0x0F) <= 9 and (ss >> 4) <= 5 and (ss & 0x0F) <= 9:
                    seconds = (b & 0x0F) * 3600 + ((mm >> 4) * 10 + (mm & 0x0F)) * 60 + (ss >> 4) * 10 + (ss & 0x0F)
                    records.append(EEClock(left=bool(b & 0x10), seconds=seconds))
                    i += 3
                    continue
        else:
            try:
                tag = EETag(b)
            except ValueError:
                tag = None
            if tag is EETag.EOF:
                break
            if tag is not None and tag not in _EE_SKIPPED:
                records.append(EETagRecord(tag=tag))
        i += 1
    return records


def _ee_record_bytes(record: EERecord) -> bytes:
    match record:
        case EEFieldChange(field=field, code=code, quick=quick):
            if not 0 <= field <= 63 or not 0 <= code <= 15:
                raise FrameError(f"EEPROM field change needs field 0..63 and code 0..15, got {field}, {code}")
            return bytes((0x40 | (0x10 if quick else 0) | code, field))
        case EEClock(left=left, seconds=seconds):
            if not 0 <= seconds < 10 * 3600:
                raise FrameError(f"EEPROM clock time must be 0..9:59:59, got {seconds} s")
            hours, rest = divmod(seconds, 3600)
            return bytes((0x60 | (0x10 if left else 0) | hours, _to_bcd(rest // 60), _to_bcd(rest % 60)))
        case EETagRecord(tag=tag):
            return bytes((int(tag),))


def encode_ee_log(records: list[EERecord], size: int = EE_MOVES_SIZE - 3) -> bytes:
    """The EEPROM log data holding *records* (oldest first) then ``EE_EOF``, padded in front with ``NOP``.

    Records that do not fit are dropped from the oldest end (a ring buffer), whole.
    """
    chunks = [_ee_record_bytes(r) for r in records]
    room = size - 1
    total = 0
    kept: list[bytes] = []
    for chunk in reversed(chunks):
        if total + len(chunk) > room:
            break
        kept.append(chunk)
        total += len(chunk)
    body = b"".join(reversed(kept)) + bytes((EETag.EOF,))
    return bytes((EETag.NOP,)) * (size - len(body)) + body


@dataclass(frozen=True, slots=True)
class Unknown:
    """A well-framed message with an id boardd does not know."""

    message_id: int
    data: bytes


DgtMessage: TypeAlias = (
    BoardDump | FieldUpdate | ClockTimes | ClockAck | SerialNr | LongSerialNr | Trademark
    | Version | HardwareVersion | BusAddress | BatteryStatus | EEMoves | Unknown
)


def _bcd(value: int, what: str, raw: bytes) -> int:
    high, low = value >> 4, value & 0x0F
    if high > 5 or low > 9:
        raise ClockMessageError(f"{what} is not BCD 00..59", raw=raw)
    return high * 10 + low


#: :func:`_bcd` of every byte value without the call (a reading has four): -1 where it raises.
_BCD: tuple[int, ...] = tuple((b >> 4) * 10 + (b & 0x0F) if b >> 4 <= 5 and b & 0x0F <= 9 else -1 for b in range(256))


def _slot_setter(cls: type, name: str) -> Callable[[object, object], None]:
    """The setter of the slot *name* of the frozen slotted dataclass *cls* (what its ``__init__`` does through
    ``object.__setattr__``, for half the cost)."""
    slot = cls.__dict__[name]
    if not isinstance(slot, types.MemberDescriptorType):  # pragma: no cover - a class without slots
        raise TypeError(f"{cls.__name__}.{name} is not a slot")
    return slot.__set__


if tuple(f.name for f in dataclasses.fields(ClockTimes)) != ("right_s", "left_s", "right_flags", "left_flags",
                                                              "status"):  # pragma: no cover
    raise TypeError("_decode_bwtime sets ClockTimes' fields one by one: update it")
_new = object.__new__
_set_right_s, _set_left_s, _set_right_flags, _set_left_flags, _set_status = (
    _slot_setter(ClockTimes, name) for name in ("right_s", "left_s", "right_flags", "left_flags", "status"))

#: :func:`_field_update`'s messages by frame (at most 64 fields x 16 codes).
_FIELD_UPDATES: dict[bytes, FieldUpdate] = {}
_FIELD_UPDATES_SIZE = 2048


def _ascii(data: bytes, raw: bytes) -> str:
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:  # pragma: no cover - data bytes are < 0x80 by framing
        raise FrameError("text is not ASCII", raw=raw) from None


def _decode_bwtime(raw: bytes) -> ClockTimes | ClockAck:
    b = raw
    if (b[3] & 0x0F) == 0x0A or (b[6] & 0x0F) == 0x0A:
        return ClockAck(
            ack0=(b[4] & 0x7F) | ((b[6] << 3) & 0x80),
            ack1=(b[5] & 0x7F) | ((b[6] << 2) & 0x80),
            ack2=(b[7] & 0x7F) | ((b[3] << 3) & 0x80),
            ack3=(b[8] & 0x7F) | ((b[3] << 2) & 0x80),
        )
    right_h, left_h = b[3] & 0x0F, b[6] & 0x0F
    if right_h > 9 or left_h > 9:
        raise ClockMessageError(f"clock hours must be 0..9, got {right_h} and {left_h}", raw=raw)
    right_m, right_sec, left_m, left_sec = _BCD[b[4]], _BCD[b[5]], _BCD[b[7]], _BCD[b[8]]
    if right_m < 0 or right_sec < 0 or left_m < 0 or left_sec < 0:  # _bcd names the first bad one
        right_m, right_sec = _bcd(b[4], "right minutes", raw), _bcd(b[5], "right seconds", raw)
        left_m, left_sec = _bcd(b[7], "left minutes", raw), _bcd(b[8], "left seconds", raw)
    # ClockTimes(right_s=..., left_s=..., right_flags=b[3] & 0x70, left_flags=b[6] & 0x70, status=b[9]), built
    # through the slot descriptors (a reading a second per board; tests/drivers/test_dgt_fast_paths.py)
    times = _new(ClockTimes)
    _set_right_s(times, right_h * 3600 + right_m * 60 + right_sec)
    _set_left_s(times, left_h * 3600 + left_m * 60 + left_sec)
    _set_right_flags(times, b[3] & 0x70)
    _set_left_flags(times, b[6] & 0x70)
    _set_status(times, b[9])
    return times


def _field_update(frame: bytes) -> FieldUpdate:
    """``FieldUpdate(field=frame[3], code=frame[4])`` of a checked field-update frame, one object per value (a
    frozen dataclass: 64 fields times a few piece codes, kept in :data:`_FIELD_UPDATES`)."""
    if type(frame) is not bytes:  # (a bytearray or memoryview has no hash)
        return FieldUpdate(field=frame[3], code=frame[4])
    message = _FIELD_UPDATES.get(frame)
    if message is None:
        message = FieldUpdate(field=frame[3], code=frame[4])
        if len(_FIELD_UPDATES) < _FIELD_UPDATES_SIZE:
            _FIELD_UPDATES[frame] = message
    return message


def decode_message(frame: bytes) -> DgtMessage:
    """Decode one complete frame (header included).

    Raises:
        FrameError: the frame's length is wrong for its id or a value is out of range.
        ClockMessageError: a BWTIME with an impossible time.
    """
    if len(frame) < 3 or frame[0] < 0x80:
        raise FrameError("a frame starts with an id byte >= 0x80 and two length bytes", raw=frame)
    length = (frame[1] << 7) | frame[2]
    if length != len(frame):
        raise FrameError(f"length field says {length}, frame has {len(frame)} bytes", raw=frame)
    message_id = frame[0]
    expected = _FIXED_SIZE.get(message_id)
    if expected is not None and length != expected:
        raise FrameError(f"message 0x{message_id:02x} must be {expected} bytes, got {length}", raw=frame)
    # the two messages of play first (nearly every message), without copying the data out
    if message_id == _FIELD_UPDATE:
        if frame[3] > 63:
            raise FrameError(f"field must be 0..63, got {frame[3]}", raw=frame)
        return _field_update(frame)
    if message_id == _BWTIME:
        return _decode_bwtime(frame)
    data = frame[3:]
    match message_id:
        case MessageId.BOARD_DUMP:
            return BoardDump(codes=tuple(data))
        case MessageId.SERIALNR:
            return SerialNr(text=_ascii(data, frame))
        case MessageId.LONG_SERIALNR:
            return LongSerialNr(text=_ascii(data, frame))
        case MessageId.TRADEMARK:
            return Trademark(text=_ascii(data, frame))
        case MessageId.VERSION:
            return Version(major=data[0], minor=data[1])
        case MessageId.HARDWARE_VERSION:
            return HardwareVersion(major=data[0], minor=data[1])
        case MessageId.BUSADRES:
            return BusAddress(address=(data[0] << 7) | data[1])
        case MessageId.BATTERY_STATUS:
            if not data:
                raise FrameError("battery status without data", raw=frame)
            return BatteryStatus(percent=data[0], data=bytes(data))
        case MessageId.EE_MOVES:
            return EEMoves(data=bytes(data))
        case _:
            return Unknown(message_id=message_id, data=bytes(data))


class DgtDecoder(BufferedDecoder):
    """Incremental framer + decoder of board -> host bytes; survives any input.

    ``stats`` counts ``messages``, ``discarded_bytes``, ``invalid_frames``,
    ``bad_clock`` and ``unknown_messages``.

    >>> DgtDecoder().feed(bytes.fromhex("8e 00 05 34 00  93 00 05 03 0a"))
    [FieldUpdate(field=52, code=0), Version(major=3, minor=10)]
    """

    _logger = _LOGGER

    def __init__(self) -> None:
        super().__init__()
        self._clean_upto = 0  # bytes of the frame at the buffer's head known to be < 0x80

    def _discard(self, count: int, why: str) -> None:
        if count > 0:
            self._clean_upto = 0
        super()._discard(count, why)

    def feed(self, data: bytes) -> list[DgtMessage]:
        """Add received bytes; return every message completed by them, in order."""
        messages: list[DgtMessage] = []
        size = len(data)
        if not self._buffer and size >= 3 and _FIXED_SIZE.get(data[0]) == size == (data[1] << 7 | data[2]) \
                and _ID_BYTE.search(data, 1) is None:
            # the usual read: one whole message of a fixed size and nothing else; what _feed_buffered does with
            # it, without the buffer (tests/drivers/test_dgt_fast_paths.py holds the two equal)
            self._take(bytes(data), _LOGGER.isEnabledFor(TRACE), messages)
            return messages
        return self._feed_buffered(data, messages)

    def _feed_buffered(self, data: bytes, messages: list[DgtMessage]) -> list[DgtMessage]:
        """:meth:`feed` through the buffer: any bytes, in any pieces."""
        self._buffer += data
        buf = self._buffer
        trace = _LOGGER.isEnabledFor(TRACE)
        while buf:
            if buf[0] < 0x80:
                found = _ID_BYTE.search(buf)
                start = found.start() if found else len(buf)
                self._discard(start, "no message id")
                continue
            # Any later byte >= 0x80 before the frame is complete cuts the frame short.
            if len(buf) < 3:
                found = _ID_BYTE.search(buf, 1)
                if found is not None:
                    self._discard(found.start(), "truncated header")
                    continue
                break
            if buf[1] >= 0x80 or buf[2] >= 0x80:
                self._discard(1 if buf[1] >= 0x80 else 2, "bad length byte")
                continue
            length = (buf[1] << 7) | buf[2]
            expected = _FIXED_SIZE.get(buf[0])
            if length < 3 or (expected is not None and length != expected):
                self.stats["invalid_frames"] += 1
                self._discard(1, f"impossible length {length} for id 0x{buf[0]:02x}")
                continue
            available = min(length, len(buf))
            found = _ID_BYTE.search(buf, max(3, self._clean_upto), available)
            if found is not None:
                self.stats["invalid_frames"] += 1
                self._discard(found.start(), "message cut short by a new id")
                continue
            self._clean_upto = available
            if len(buf) < length:
                break
            frame = bytes(buf[:length])
            del buf[:length]
            self._clean_upto = 0
            self._take(frame, trace, messages)
        return messages

    def _take(self, frame: bytes, trace: bool, messages: list[DgtMessage]) -> None:
        """A complete frame: its message appended to *messages*, or counted and logged as rejected."""
        if trace:  # every frame, also the rejected ones below
            _LOGGER.log(TRACE, ">> %s", frame.hex(" "))
        try:
            message = decode_message(frame)
        except ClockMessageError as exc:
            self.stats["bad_clock"] += 1
            self._warn_sparsely("bad_clock", "DGT clock message rejected: %s", exc)
            return
        except FrameError as exc:
            self.stats["invalid_frames"] += 1
            self._warn_sparsely("invalid_frames", "DGT frame rejected: %s", exc)
            return
        if type(message) is Unknown:
            self.stats["unknown_messages"] += 1
            _LOGGER.debug("unknown DGT message 0x%02x (%d data bytes)", message.message_id, len(message.data))
        self.stats["messages"] += 1
        messages.append(message)


# --- Encoding board messages (the emulator's side) ---------------------------


def _frame(message_id: int, data: bytes) -> bytes:
    length = len(data) + 3
    if length > _MAX_LENGTH:
        raise FrameError(f"message too long: {length} bytes")
    if any(b >= 0x80 for b in data):
        raise FrameError("data bytes must be < 0x80", raw=data)
    return bytes((message_id, length >> 7, length & 0x7F)) + data


def _to_bcd(value: int) -> int:
    return ((value // 10) << 4) | (value % 10)


def _hms(seconds: int, flags: int) -> bytes:
    if not 0 <= seconds < 10 * 3600:
        raise FrameError(f"clock time must be 0..9:59:59, got {seconds} s")
    hours, rest = divmod(seconds, 3600)
    return bytes(((flags & 0x70) | hours, _to_bcd(rest // 60), _to_bcd(rest % 60)))


def encode_message(message: DgtMessage) -> bytes:
    """Encode a board -> host message (what a board or the emulator sends).

    Raises:
        FrameError: a value cannot be encoded (data byte >= 0x80, time out of range).
    """
    match message:
        case BoardDump(codes=codes):
            if len(codes) != 64:
                raise FrameError(f"a board dump has 64 codes, got {len(codes)}")
            return _frame(MessageId.BOARD_DUMP, bytes(codes))
        case FieldUpdate(field=field, code=code):
            return _frame(MessageId.FIELD_UPDATE, bytes((field, code)))
        case ClockTimes():
            data = _hms(message.right_s, message.right_flags) + _hms(message.left_s, message.left_flags)
            return _frame(MessageId.BWTIME, data + bytes((message.status,)))
        case ClockAck(ack0=a0, ack1=a1, ack2=a2, ack3=a3):
            data = bytes((
                0x0A | (a2 & 0x80) >> 3 | (a3 & 0x80) >> 2, a0 & 0x7F, a1 & 0x7F,
                0x0A | (a0 & 0x80) >> 3 | (a1 & 0x80) >> 2, a2 & 0x7F, a3 & 0x7F, 0x00,
            ))
            return _frame(MessageId.BWTIME, data)
        case SerialNr(text=text):
            return _frame(MessageId.SERIALNR, text.encode("ascii"))
        case LongSerialNr(text=text):
            return _frame(MessageId.LONG_SERIALNR, text.encode("ascii"))
        case Trademark(text=text):
            return _frame(MessageId.TRADEMARK, text.encode("ascii"))
        case Version(major=major, minor=minor):
            return _frame(MessageId.VERSION, bytes((major, minor)))
        case HardwareVersion(major=major, minor=minor):
            return _frame(MessageId.HARDWARE_VERSION, bytes((major, minor)))
        case BusAddress(address=address):
            return _frame(MessageId.BUSADRES, bytes((address >> 7 & 0x7F, address & 0x7F)))
        case BatteryStatus(data=data):
            return _frame(MessageId.BATTERY_STATUS, data)
        case EEMoves(data=data):
            return _frame(MessageId.EE_MOVES, data)
        case Unknown(message_id=message_id, data=data):
            return _frame(message_id, data)


# --- Host -> board commands ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClockSetNRun:
    """SetNRun: set both times and the run mode (§1.8). Minutes/seconds go binary on the wire."""

    left_s: int
    right_s: int
    mode: SetNRunMode = SetNRunMode.PAUSE
    left_counts_up: bool = False
    right_counts_up: bool = False


@dataclass(frozen=True, slots=True)
class ClockEnd:
    """END: the clock goes back to showing the times."""


@dataclass(frozen=True, slots=True)
class ClockVersionRequest:
    """Ask the clock for its version (answered by a version ack in UPDATE/NICE modes)."""


@dataclass(frozen=True, slots=True)
class ClockButtonRequest:
    """Ask the clock which button is pressed."""


@dataclass(frozen=True, slots=True)
class ClockBeep:
    """Beep for ``units`` × 64 ms. Never sent during play (rules-spec G2)."""

    units: int


@dataclass(frozen=True, slots=True)
class ClockAscii:
    """Show 8 ASCII characters on a DGT 3000. Never sent during play (rules-spec G2)."""

    text: str
    beep: bool = False


@dataclass(frozen=True, slots=True)
class ClockDisplayXL:
    """Raw 7-segment display of a DGT XL: six segment bytes C B A F E D, icons, beep (§1.8)."""

    segments: bytes
    icons: int = 0
    beep: bool = False


@dataclass(frozen=True, slots=True)
class RawHostCommand:
    """A length-prefixed host command boardd does not model (LEDs ``0x60``, key ``0x63``, icons...)."""

    command: int
    payload: bytes


HostCommand: TypeAlias = (
    Command | ClockSetNRun | ClockEnd | ClockVersionRequest | ClockButtonRequest | ClockBeep
    | ClockAscii | ClockDisplayXL | RawHostCommand
)


def _clock(sub: int, content: bytes = b"") -> bytes:
    body = bytes((_CLOCK_START, sub)) + content + bytes((_CLOCK_END_BYTE,))
    return bytes((_CLOCK_WRAPPER, len(body))) + body


def _setnrun_side(seconds: int, counts_up: bool) -> bytes:
    if not 0 <= seconds < 10 * 3600:
        raise FrameError(f"SetNRun time must be 0..9:59:59, got {seconds} s")
    hours, rest = divmod(seconds, 3600)
    return bytes((hours | (0x10 if counts_up else 0), rest // 60, rest % 60))


def encode(command: HostCommand) -> bytes:
    """Encode a host -> board command.

    >>> encode(ClockSetNRun(left_s=300, right_s=300, mode=SetNRunMode.LEFT_RUNS)).hex(" ")
    '2b 0a 03 0a 00 05 00 00 05 00 01 00'

    Raises:
        FrameError: the command cannot be encoded (time out of range, non-ASCII text).
    """
    match command:
        case Command():
            return bytes((int(command),))
        case ClockSetNRun():
            content = (_setnrun_side(command.left_s, command.left_counts_up)
                       + _setnrun_side(command.right_s, command.right_counts_up) + bytes((int(command.mode),)))
            return _clock(ClockCommandId.SETNRUN, content)
        case ClockEnd():
            return _clock(ClockCommandId.END)
        case ClockVersionRequest():
            return _clock(ClockCommandId.VERSION)
        case ClockButtonRequest():
            return _clock(ClockCommandId.BUTTON)
        case ClockBeep(units=units):
            if not 0 <= units < 0x80:
                raise FrameError(f"beep units must be 0..127, got {units}")
            return _clock(ClockCommandId.BEEP, bytes((units,)))
        case ClockAscii(text=text, beep=beep):
            try:
                chars = text.ljust(8)[:8].encode("ascii")
            except UnicodeEncodeError:
                raise FrameError(f"clock text must be ASCII: {text!r}") from None
            return _clock(ClockCommandId.ASCII, chars + bytes((0x03 if beep else 0x00,)))
        case ClockDisplayXL(segments=segments, icons=icons, beep=beep):
            if len(segments) != 6:
                raise FrameError("a DGT XL display needs 6 segment bytes")
            return _clock(ClockCommandId.DISPLAY, segments + bytes((icons, 0x03 if beep else 0x01)))
        case RawHostCommand(command=cmd, payload=payload):
            return bytes((cmd, len(payload) + 1)) + payload + b"\x00"


def _decode_clock_command(body: bytes) -> HostCommand:
    """*body* is what follows the size byte of a ``0x2b`` command: ``03 sub content... 00``."""
    if len(body) < 3 or body[0] != _CLOCK_START or body[-1] != _CLOCK_END_BYTE:
        raise FrameError("clock command must be 03 <sub> ... 00", raw=body)
    sub, content = body[1], body[2:-1]
    match sub:
        case ClockCommandId.SETNRUN if len(content) == 7:
            lh, lm, ls, rh, rm, rs, mode = content
            return ClockSetNRun(left_s=(lh & 0x0F) * 3600 + lm * 60 + ls, right_s=(rh & 0x0F) * 3600 + rm * 60 + rs,
                                mode=SetNRunMode(mode & 0x0F), left_counts_up=bool(lh & 0x10),
                                right_counts_up=bool(rh & 0x10))
        case ClockCommandId.END if not content:
            return ClockEnd()
        case ClockCommandId.VERSION if not content:
            return ClockVersionRequest()
        case ClockCommandId.BUTTON if not content:
            return ClockButtonRequest()
        case ClockCommandId.BEEP if len(content) == 1:
            return ClockBeep(units=content[0])
        case ClockCommandId.ASCII if len(content) == 9:
            return ClockAscii(text=content[:8].decode("ascii", "replace").rstrip(" "), beep=content[8] != 0)
        case ClockCommandId.DISPLAY if len(content) == 8:
            return ClockDisplayXL(segments=bytes(content[:6]), icons=content[6], beep=content[7] == 0x03)
        case _:
            return RawHostCommand(command=_CLOCK_WRAPPER, payload=bytes(body[:-1]))


class HostDecoder(BufferedDecoder):
    """Incremental decoder of host -> board commands (what the emulator reads).

    Bytes that are neither a known command nor a length-prefixed command are
    counted in ``stats["discarded_bytes"]`` and skipped.
    """

    _logger = _LOGGER

    def feed(self, data: bytes) -> list[HostCommand]:
        """Add received bytes; return every command completed by them."""
        self._buffer += data
        buf = self._buffer
        commands: list[HostCommand] = []
        while buf:
            first = buf[0]
            if first in _LENGTH_PREFIXED:
                if len(buf) < 2:
                    break
                total = 2 + buf[1]
                if len(buf) < total:
                    break
                body = bytes(buf[2:total])
                del buf[:total]
                try:
                    if first == _CLOCK_WRAPPER:
                        commands.append(_decode_clock_command(body))
                    else:
                        if not body or body[-1] != 0:
                            raise FrameError("command must end in 00", raw=body)
                        commands.append(RawHostCommand(command=first, payload=body[:-1]))
                except FrameError as exc:
                    self.stats["invalid_commands"] += 1
                    _LOGGER.debug("host command rejected: %s", exc)
                continue
            del buf[:1]
            try:
                commands.append(Command(first))
            except ValueError:
                self.stats["discarded_bytes"] += 1
                _LOGGER.log(TRACE, "<< unknown host byte %02x", first)
        return commands
