"""DGT messages -> :mod:`boardd.events` (pure; time is passed in).

Decisions (protocols.md §1.4, §1.7, §9):

* Fields: DGT numbers ``a8=0 .. h1=63``; python-chess ``a1=0 .. h8=63``. Squares
  stay in the board's own frame (orientation is the engine's business).
* Piece codes ``0x01..0x0c`` are pieces (note K=5 before Q=6); ``0x0d/0x0e/0x0f``
  are the result pieces (:class:`boardd.events.Marker` DRAW / WHITE_WINS /
  BLACK_WINS). A code above ``0x0f`` means *something* stands on the square but
  the board cannot say what: it becomes ``Marker.UNKNOWN`` (counted as
  ``unknown_piece_codes`` and logged). It is never dropped, because dropping a
  field update would hide a change and dropping it from a dump would claim the
  square empty; and it is never guessed, so no move can be invented from it.
* BWTIME status byte, as the real captures show (§1.7.1, §9.1): D0 running;
  D1 lever high on the right (0: left high); D3 the left side (bytes 6-8) is to
  move, D4 the right side (bytes 3-5); D2 battery low; D5 no clock connected.
  The running side is D3/D4 when D0 is set (falling back to the lever when
  neither is set). Flags: D4 (blocked at zero) or D6 (shown) of the hours byte.
* D5 gives ``LinkChanged(link=CLOCK, up=False)`` (once per change) and no
  reading; the first good reading after it gives ``LinkChanged(up=True)``. The
  clock hangs on the board's jack, so when the board link drops the clock link
  is reported down too (:meth:`DgtMapper.reset_link`).
* An all-zero BWTIME is the firmware's "empty" message: ignored, counted
  (``clock_zero``). Hours > 9 and non-BCD values are rejected by the codec
  (counted there as ``bad_clock``).
* A side's time going *up* while the lever did not move and the host did not
  set the clock is counted (``clock_time_up``) and logged, but still reported:
  the engine judges clock anomalies, the driver only reports what the clock shows.
  (An increment arrives together with the lever change, so it is not counted.)
* Clock acks: a version reply sets the clock model (major 2 → ``"dgt3000"``,
  otherwise ``"dgtxl"``); button acks become :class:`ClockButton` values for
  operator tools (they are not game events); error acks are counted.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

import chess

from boardd.events import (
    BoardEvent,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Link,
    LinkChanged,
    Marker,
    SquareChanged,
)
from drivers.dgt.codec import (
    BatteryStatus,
    BoardDump,
    ClockAck,
    ClockSetNRun,
    ClockTimes,
    DgtDecoder,
    DgtMessage,
    FieldUpdate,
    HostDecoder,
    LongSerialNr,
    SerialNr,
    Version,
)

__all__ = [
    "BUTTONS",
    "ClockButton",
    "DgtCaptureCodec",
    "DgtMapper",
    "content_from_code",
    "field_to_square",
    "square_to_field",
]

_LOGGER = logging.getLogger(__name__)

_PIECES: dict[int, Content] = {
    0x00: None,
    0x01: chess.Piece(chess.PAWN, chess.WHITE),
    0x02: chess.Piece(chess.ROOK, chess.WHITE),
    0x03: chess.Piece(chess.KNIGHT, chess.WHITE),
    0x04: chess.Piece(chess.BISHOP, chess.WHITE),
    0x05: chess.Piece(chess.KING, chess.WHITE),
    0x06: chess.Piece(chess.QUEEN, chess.WHITE),
    0x07: chess.Piece(chess.PAWN, chess.BLACK),
    0x08: chess.Piece(chess.ROOK, chess.BLACK),
    0x09: chess.Piece(chess.KNIGHT, chess.BLACK),
    0x0A: chess.Piece(chess.BISHOP, chess.BLACK),
    0x0B: chess.Piece(chess.KING, chess.BLACK),
    0x0C: chess.Piece(chess.QUEEN, chess.BLACK),
    0x0D: Marker.DRAW,
    0x0E: Marker.WHITE_WINS,
    0x0F: Marker.BLACK_WINS,
}
_CODES: dict[Content, int] = {content: code for code, content in _PIECES.items()}

#: Button codes of clock auto-acks (ack3), §1.7.2.
BUTTONS: dict[int, str] = {0x31: "back", 0x32: "plus", 0x33: "run", 0x34: "minus", 0x35: "ok"}

_STATUS_RUNNING = 0x01
_STATUS_RIGHT_HIGH = 0x02
_STATUS_BATTERY_LOW = 0x04
_STATUS_LEFT_TO_MOVE = 0x08
_STATUS_RIGHT_TO_MOVE = 0x10
_STATUS_NO_CLOCK = 0x20
_FLAG_BITS = 0x10 | 0x40


def field_to_square(field: int) -> chess.Square:
    """DGT field (a8=0 .. h1=63) -> python-chess square (a1=0 .. h8=63)."""
    return chess.square(field % 8, 7 - field // 8)


def square_to_field(square: chess.Square) -> int:
    """python-chess square -> DGT field (the same formula: the map is its own inverse)."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


def content_from_code(code: int) -> Content:
    """Square content for a DGT piece code; codes above 0x0f are ``Marker.UNKNOWN``."""
    return _PIECES.get(code, Marker.UNKNOWN)


def code_from_content(content: Content) -> int:
    """DGT piece code for *content* (``Marker.UNKNOWN`` has none and raises ``KeyError``)."""
    return _CODES[content]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockButton:
    """A button on the clock was pressed (auto ack). For operator tools, not a game event."""

    at: float
    button: str
    ack2: int
    ack3: int


class DgtMapper:
    """Turns decoded DGT messages into events; remembers what the device told about itself.

    ``stats`` counts ``unknown_piece_codes``, ``clock_zero``, ``clock_time_up``,
    ``clock_error_acks`` and ``clock_buttons``.
    """

    def __init__(self) -> None:
        self.stats: Counter[str] = Counter()
        self.version: str | None = None
        self.serial: str | None = None
        self.long_serial: str | None = None
        self.clock_model: str | None = None
        self.clock_version: str | None = None
        self.battery_percent: int | None = None
        self._clock_up: bool | None = None
        self._last: ClockReading | None = None
        self._clock_set_by_host = False

    def reset_link(self, at: float) -> list[BoardEvent]:
        """The board link went down: the clock on its jack is gone too; its state is re-learnt later.

        Returns ``LinkChanged(CLOCK, up=False)`` when the clock was up.
        """
        was_up = self._clock_up
        self._clock_up = None
        self._last = None
        if was_up:
            return [LinkChanged(at=at, link=Link.CLOCK, up=False, detail="board link down")]
        return []

    def note_clock_set(self) -> None:
        """The host set the clock (SetNRun): the next increase of a time is expected."""
        self._clock_set_by_host = True

    def _content(self, code: int, field: int) -> Content:
        content = content_from_code(code)
        if content is Marker.UNKNOWN:
            self.stats["unknown_piece_codes"] += 1
            _LOGGER.warning("DGT piece code 0x%02x on field %d is unknown: reported as unknown content", code, field)
        return content

    def map(self, message: DgtMessage, at: float) -> list[BoardEvent | ClockButton]:
        """The events *message* means, stamped *at*."""
        match message:
            case FieldUpdate(field=field, code=code):
                return [SquareChanged(at=at, square=field_to_square(field), content=self._content(code, field))]
            case BoardDump(codes=codes):
                squares: list[Content] = [None] * 64
                for field, code in enumerate(codes):
                    squares[field_to_square(field)] = self._content(code, field)
                return [BoardSnapshot(at=at, squares=tuple(squares))]
            case ClockTimes():
                return self._clock_times(message, at)
            case ClockAck():
                return self._clock_ack(message, at)
            case Version():
                self.version = str(message)
            case SerialNr(text=text):
                self.serial = text
            case LongSerialNr(text=text):
                self.long_serial = text
            case BatteryStatus(percent=percent):
                self.battery_percent = percent
            case _:
                pass
        return []

    def _clock_times(self, message: ClockTimes, at: float) -> list[BoardEvent | ClockButton]:
        if message.is_all_zero:
            self.stats["clock_zero"] += 1
            _LOGGER.debug("all-zero DGT clock message ignored")
            return []
        status = message.status
        if status & _STATUS_NO_CLOCK:
            if self._clock_up is False:
                return []
            self._clock_up = False
            self._last = None
            self.clock_model = self.clock_version = None  # the clock plugged in next may be another model
            return [LinkChanged(at=at, link=Link.CLOCK, up=False, detail="no clock connected")]
        out: list[BoardEvent | ClockButton] = []
        if self._clock_up is not True:
            self._clock_up = True
            out.append(LinkChanged(at=at, link=Link.CLOCK, up=True, detail=self.clock_model or ""))
        lever_high = ClockSide.RIGHT if status & _STATUS_RIGHT_HIGH else ClockSide.LEFT
        running: ClockSide | None = None
        if status & _STATUS_RUNNING:
            if status & _STATUS_LEFT_TO_MOVE and not status & _STATUS_RIGHT_TO_MOVE:
                running = ClockSide.LEFT
            elif status & _STATUS_RIGHT_TO_MOVE and not status & _STATUS_LEFT_TO_MOVE:
                running = ClockSide.RIGHT
            else:
                running = lever_high
        reading = ClockReading(
            at=at,
            left=float(message.left_s),
            right=float(message.right_s),
            running=running,
            lever_high=lever_high,
            left_flag=bool(message.left_flags & _FLAG_BITS),
            right_flag=bool(message.right_flags & _FLAG_BITS),
            battery_low=bool(status & _STATUS_BATTERY_LOW),
            connected=True,
            model=self.clock_model,
        )
        last = self._last
        if last is not None and last.lever_high == lever_high and not self._clock_set_by_host:
            for side in (ClockSide.LEFT, ClockSide.RIGHT):
                before, now = last.time_of(side), reading.time_of(side)
                if before is not None and now is not None and now > before:
                    self.stats["clock_time_up"] += 1
                    _LOGGER.warning("DGT clock: %s time went up from %.0f to %.0f s without a lever change",
                                    side.value, before, now)
        self._clock_set_by_host = False
        self._last = reading
        out.append(reading)
        return out

    def _clock_ack(self, ack: ClockAck, at: float) -> list[BoardEvent | ClockButton]:
        if ack.is_error:
            self.stats["clock_error_acks"] += 1
            _LOGGER.warning("DGT clock refused command 0x%02x", ack.command)
            return []
        if not ack.is_auto and ack.command == 0x09:
            major, minor = ack.ack2 >> 4, ack.ack2 & 0x0F
            self.clock_version = f"{major}.{minor}"
            self.clock_model = "dgt3000" if major == 2 else "dgtxl"
            _LOGGER.info("DGT clock version %s (%s)", self.clock_version, self.clock_model)
            return []
        if ack.is_auto and ack.command == 0x08:
            self.stats["clock_buttons"] += 1
            button = BUTTONS.get(ack.ack3, "unknown")
            _LOGGER.info("DGT clock button %s (%02x-%02x)", button, ack.ack2, ack.ack3)
            return [ClockButton(at=at, button=button, ack2=ack.ack2, ack3=ack.ack3)]
        _LOGGER.debug("DGT clock ack %02x %02x %02x %02x", ack.ack0, ack.ack1, ack.ack2, ack.ack3)
        return []


class DgtCaptureCodec:
    """Replays DGT captures (:mod:`drivers.capture`): the driver's decoder and mapper, plus raw-capture timing.

    Raw captures have no times; each message advances the synthetic time line by
    :meth:`spacing`: 0.05 s per field update (one scan's reports arrive together),
    1.0 s per clock message (one BWTIME per displayed second, protocols.md §1.6),
    0.01 s for anything else.
    """

    def __init__(self) -> None:
        self.decoder = DgtDecoder()
        self.mapper = DgtMapper()
        self._host = HostDecoder()

    def decode(self, data: bytes) -> list[DgtMessage]:
        """Decode received bytes."""
        return self.decoder.feed(data)

    def spacing(self, message: object) -> float:
        """Synthetic seconds before *message* in a raw capture."""
        if isinstance(message, FieldUpdate):
            return 0.05
        if isinstance(message, (ClockTimes, ClockAck)):
            return 1.0
        return 0.01

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """Board and clock events of *message* (clock buttons are operator events and left out)."""
        if not isinstance(message, (BoardDump, FieldUpdate, ClockTimes, ClockAck, Version, SerialNr,
                                    LongSerialNr, BatteryStatus)):
            return []
        return [e for e in self.mapper.map(message, at) if not isinstance(e, ClockButton)]

    def sent(self, data: bytes) -> None:
        """Host bytes: a SetNRun explains the next increase of a clock time."""
        if any(isinstance(c, ClockSetNRun) for c in self._host.feed(data)):
            self.mapper.note_clock_set()
