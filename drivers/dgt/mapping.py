"""DGT messages -> :mod:`boardd.core.events` (pure; time is passed in).

Decisions (protocols.md §1.4, §1.7, §9):

* Fields: DGT numbers ``a8=0 .. h1=63``; python-chess ``a1=0 .. h8=63``. Squares
  stay in the board's own frame (orientation is the engine's business).
* Piece codes ``0x01..0x0c`` are pieces (note K=5 before Q=6); ``0x0d/0x0e/0x0f``
  are the result pieces (:class:`boardd.core.events.Marker` DRAW / WHITE_WINS /
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
  An increment usually arrives together with the lever change; a DGT 3000 may show
  it in a later reading: a rise of the presser's time within 2 s of the press is
  that (``clock_late_increments``), not an anomaly.
* Clock acks: a version reply sets the clock model (major 2 → ``"dgt3000"``,
  otherwise ``"dgtxl"``); button acks become :class:`ClockButton` values for
  operator tools (they are not game events); error acks are counted.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess

from boardd.core.events import (
    BoardEvent,
    BoardLog,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
    Marker,
    SquareChanged,
    clock_reading,
    square_changed,
)
from drivers.dgt.codec import (
    BatteryStatus,
    BoardDump,
    ClockAck,
    ClockSetNRun,
    ClockTimes,
    DgtDecoder,
    DgtMessage,
    EEClock,
    EEFieldChange,
    EEMoves,
    EETag,
    EETagRecord,
    FieldUpdate,
    HostDecoder,
    LongSerialNr,
    SerialNr,
    Version,
    decode_ee_log,
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
#: The status bits that say which side's lever is high and which side runs.
_SIDE_BITS = _STATUS_RUNNING | _STATUS_RIGHT_HIGH | _STATUS_LEFT_TO_MOVE | _STATUS_RIGHT_TO_MOVE


def _lever_and_running(status: int) -> tuple[ClockSide, ClockSide | None]:
    """The side whose lever is high, and the side whose time runs (None: stopped), of a BWTIME status byte."""
    lever_high = ClockSide.RIGHT if status & _STATUS_RIGHT_HIGH else ClockSide.LEFT
    running: ClockSide | None = None
    if status & _STATUS_RUNNING:
        if status & _STATUS_LEFT_TO_MOVE and not status & _STATUS_RIGHT_TO_MOVE:
            running = ClockSide.LEFT
        elif status & _STATUS_RIGHT_TO_MOVE and not status & _STATUS_LEFT_TO_MOVE:
            running = ClockSide.RIGHT
        else:
            running = lever_high
    return lever_high, running


#: :func:`_lever_and_running` of every combination of :data:`_SIDE_BITS`, looked up (one per reading).
_LEVER_RUNNING: tuple[tuple[ClockSide, ClockSide | None], ...] = tuple(
    _lever_and_running(status) for status in range(_SIDE_BITS + 1))

#: How long after a press the presser's time may still go up (a DGT 3000 may show the increment
#: in a later reading than the one carrying the new lever position).
_INCREMENT_WINDOW_S = 2.0


def field_to_square(field: int) -> chess.Square:
    """DGT field (a8=0 .. h1=63) -> python-chess square (a1=0 .. h8=63)."""
    return chess.square(field % 8, 7 - field // 8)


#: :func:`field_to_square` of every field, looked up (one per field update).
_FIELD_SQUARES: tuple[chess.Square, ...] = tuple(field_to_square(field) for field in range(64))


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
    ``clock_late_increments``, ``clock_error_acks`` and ``clock_buttons``.
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
        self._pressed: tuple[ClockSide, float] | None = None  # the side that pressed last, and when

    def reset_link(self, at: float) -> list[BoardEvent]:
        """The board link went down: the clock on its jack is gone too; its state is re-learnt later.

        Returns ``LinkChanged(CLOCK, up=False)`` when the clock was up.
        """
        was_up = self._clock_up
        self._clock_up = None
        self._last = None
        self._pressed = None
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
            case FieldUpdate():
                return [self.square_changed(message, at)]
            case BoardDump(codes=codes):
                squares: list[Content] = [None] * 64
                for field, code in enumerate(codes):
                    squares[_FIELD_SQUARES[field]] = self._content(code, field)
                return [BoardSnapshot(at=at, squares=tuple(squares))]
            case ClockTimes():
                return [*self.clock_times(message, at)]
            case ClockAck():
                return self._clock_ack(message, at)
            case EEMoves(data=data):
                return self._ee_log(data, at)
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

    def _ee_log(self, data: bytes, at: float) -> list[BoardEvent | ClockButton]:
        """The EEPROM records no host has downloaded yet (after the last ``EE_DOWNLOADED``) as a ``BoardLog``.

        Field changes become :class:`LoggedChange` (board frame), clock records :class:`LoggedPress` (the
        record names the clock whose time it holds: the side whose lever went down). Nothing new: no event.
        """
        records = decode_ee_log(data)
        last = max((i for i, r in enumerate(records)
                    if isinstance(r, EETagRecord) and r.tag is EETag.DOWNLOADED), default=-1)
        entries: list[LogEntry] = []
        for record in records[last + 1:]:
            if isinstance(record, EEFieldChange):
                content = content_from_code(record.code)
                if content is Marker.UNKNOWN:
                    self.stats["ee_unknown_codes"] += 1
                    continue
                entries.append(LoggedChange(square=field_to_square(record.field), content=content))
            elif isinstance(record, EEClock):
                entries.append(LoggedPress(side=ClockSide.LEFT if record.left else ClockSide.RIGHT,
                                           shown=float(record.seconds)))
        self.stats["ee_logs"] += 1
        self.stats["ee_entries"] += len(entries)
        if not entries:
            return []
        return [BoardLog(at=at, entries=tuple(entries), source="eeprom")]

    def square_changed(self, message: FieldUpdate, at: float) -> SquareChanged:
        """The event of a field update (:meth:`map` of a ``FieldUpdate``, without the dispatch)."""
        field = message.field
        content = _PIECES.get(message.code, Marker.UNKNOWN)
        if content is Marker.UNKNOWN:
            content = self._content(message.code, field)  # counted and logged there
        return square_changed(at, _FIELD_SQUARES[field], content)   # SquareChanged(at=at, square=..., content=...)

    def clock_times(self, message: ClockTimes, at: float) -> list[BoardEvent]:
        """The events of a clock reading (:meth:`map` of a ``ClockTimes``, without the dispatch)."""
        status = message.status
        if not status and message.is_all_zero:
            self.stats["clock_zero"] += 1
            _LOGGER.debug("all-zero DGT clock message ignored")
            return []
        if status & _STATUS_NO_CLOCK:
            if self._clock_up is False:
                return []
            self._clock_up = False
            self._last = None
            self.clock_model = self.clock_version = None  # the clock plugged in next may be another model
            return [LinkChanged(at=at, link=Link.CLOCK, up=False, detail="no clock connected")]
        out: list[BoardEvent] = []
        if self._clock_up is not True:
            self._clock_up = True
            out.append(LinkChanged(at=at, link=Link.CLOCK, up=True, detail=self.clock_model or ""))
        lever_high, running = _LEVER_RUNNING[status & _SIDE_BITS]
        # ClockReading(at=at, left=..., right=..., running=..., lever_high=..., left_flag=..., right_flag=...,
        # battery_low=..., connected=True, model=...), built through the slot descriptors (the hot path)
        left, right = float(message.left_s), float(message.right_s)
        reading = clock_reading(at, left, right, running, lever_high, message.left_flags & _FLAG_BITS != 0,
                                message.right_flags & _FLAG_BITS != 0, status & _STATUS_BATTERY_LOW != 0, True,
                                self.clock_model)
        last = self._last
        if last is None:
            pass
        elif last.lever_high is not lever_high:
            self._pressed = (lever_high.other, at)
        elif not self._clock_set_by_host and (
                # a time shown went up (most readings: no, and nothing more to look at)
                ((last_left := last.left) is not None and left > last_left)
                or ((last_right := last.right) is not None and right > last_right)):
            for side in (ClockSide.LEFT, ClockSide.RIGHT):
                before, now = last.time_of(side), reading.time_of(side)
                if before is None or now is None or now <= before:
                    continue
                pressed = self._pressed
                if pressed is not None and pressed[0] is side and at - pressed[1] <= _INCREMENT_WINDOW_S:
                    self._pressed = None  # the increment (or the next period's time) shown after the press
                    self.stats["clock_late_increments"] += 1
                    continue
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


#: Raw-capture time line (:meth:`DgtCaptureCodec.timeline`): without times, two field updates are
#: assumed one scan period (§1.5) apart, a lift and a placement ...
_SCAN_S = 0.2
#: ... but two lifts or two placements a little more than ``T_simul`` (0.25 s), so that they are not
#: taken for two hands without evidence; both stay below ``T_settle`` (0.4 s), so that a square passed
#: over is not taken for a made move ...
_APART_S = 0.3
#: ... and the first and last update of a burst half of that from the reading next to them (a burst
#: that goes on across a reading has its updates on both sides ``_APART_S`` apart) ...
_EDGE_S = _APART_S / 2
#: ... the time from the last report before a press to the reading carrying it ...
_PRESS_S = 0.5
#: ... from a press to the new running side's first change of display (anywhere in 0..1 s; a short
#: guess keeps an opponent's quick reply that goes on across that change short too) ...
_FIRST_TICK_S = 0.3
#: ... and the time between a message that is no field update and the one before it.
_MIN_GAP = 0.001
#: Where no clock runs (a board without a clock, a stopped clock), a move made (the board at rest:
#: a piece put down and no piece too many, and the next update not lifting it again) is assumed
#: to rest this long before the next update, so that it settles (``T_settle``) as a real one would.
_REST_S = 1.0


#: DGT piece codes of the standard starting position, field a8=0 .. h1=63 (White at the board's a1).
_START_CODES: tuple[int, ...] = tuple(
    code_from_content(chess.BaseBoard().piece_at(field_to_square(field))) for field in range(64))
#: The same on a board turned round (White at the board's h8).
_TURNED_START_CODES: tuple[int, ...] = _START_CODES[::-1]


def _first_board(messages: Sequence[object]) -> list[int]:
    """The board a raw capture's field updates start from where no dump comes before them.

    A recording begun while the board dump was in flight (or after it) has none: like the engine,
    the time line then takes the starting position, turned round when the first updates (up to
    four) only fit a turned board: a lifted square whose piece is the one put down.
    """
    first: list[FieldUpdate] = []
    for m in messages:
        if isinstance(m, BoardDump) or len(first) == 4:
            break
        if isinstance(m, FieldUpdate) and 0 <= m.field < 64:
            first.append(m)
    lifted = [m.field for m in first if m.code == 0]
    placed = {m.code for m in first if m.code != 0}
    fits = {start: sum(start[f] in placed for f in lifted) for start in (_START_CODES, _TURNED_START_CODES)}
    return list(_TURNED_START_CODES if fits[_TURNED_START_CODES] > fits[_START_CODES] else _START_CODES)


def _within_move(lifted_before: bool, lift: bool) -> float:
    """Seconds between two field updates of one move: :data:`_APART_S` for two lifts or two
    placements (not taken for two hands), else one scan (:data:`_SCAN_S`)."""
    return _APART_S if lifted_before == lift else _SCAN_S


def _same_piece(lifted: int, placed: int) -> bool:
    """The piece code *lifted* can be the one put down as *placed* (the same, or a pawn promoted)."""
    return lifted == placed or (lifted in (0x01, 0x07) and placed in ((0x02, 0x03, 0x04, 0x06) if lifted == 0x01
                                                                      else (0x08, 0x09, 0x0A, 0x0C)))


def _clockless_gaps(messages: Sequence[object]) -> dict[int, float]:
    """Seconds before each field update of a raw capture where no clock gives times.

    Scans report a move within a fraction of a second, and players pause between moves. The
    updates are followed on the board (from the last dump) to tell the two apart. The board is
    *at rest* when no piece is in hand and none is too many (count as at the last rest, or one
    fewer after a capture); then the next update comes after :data:`_REST_S`, so that the move
    settles, unless the mover's piece goes on: one of the next two updates lifts a square put
    down since the last rest and the same piece is put down elsewhere around it (a slide, a
    pawn slid two squares with the new square seen first; a pawn put down on the way and then
    its promoted piece on the promotion square: the same piece, :func:`_same_piece`). Within a move, a placement follows
    a lift one scan later (:data:`_SCAN_S`, below ``T_settle``), and two lifts or two placements
    come :data:`_APART_S` apart (above ``T_simul``).
    """
    gaps: dict[int, float] = {}
    updates: list[FieldUpdate | BoardDump] = []
    where: list[int] = []
    for j, m in enumerate(messages):
        if isinstance(m, BoardDump) or (isinstance(m, FieldUpdate) and 0 <= m.field < 64):
            updates.append(m)
            where.append(j)
    board = _first_board(messages)
    rest_count = sum(1 for c in board if c)
    placed: set[int] = set()  # fields put down since the last rest

    def goes_on(k: int) -> bool:
        """The piece just put down moves on (the updates from *k* on)."""
        for i in range(k, min(k + 2, len(updates))):
            m = updates[i]
            if isinstance(m, BoardDump):
                return False
            if m.code == 0 and m.field in placed:
                code = board[m.field]
                return any(isinstance(o, FieldUpdate) and _same_piece(code, o.code) and o.field != m.field
                           for o in updates[k:i + 3])
        return False

    prev: FieldUpdate | None = None
    for k, message in enumerate(updates):
        if isinstance(message, BoardDump):
            board = list(message.codes)
            rest_count = sum(1 for c in board if c)
            placed.clear()
            prev = None
            continue
        count = sum(1 for c in board if c)
        lift = message.code == 0
        if prev is None:
            gap = _REST_S
        elif count in (rest_count, rest_count - 1) and not (prev.code == 0 and count < rest_count) \
                and not goes_on(k):
            gap = _REST_S  # a placement that leaves nothing in hand, or the old square cleared last
            rest_count = count
            placed.clear()
        else:
            gap = _within_move(prev.code == 0, lift)
        gaps[where[k]] = gap
        board[message.field] = message.code
        if not lift:
            placed.add(message.field)
        prev = message
    return gaps


def _stopped(message: object) -> bool:
    """A reading of a clock that is connected and not running."""
    return isinstance(message, ClockTimes) and not message.is_all_zero \
        and not message.status & (_STATUS_NO_CLOCK | _STATUS_RUNNING)


def _running_side(message: object) -> ClockSide | None:
    """The side whose time runs in a clock reading (None: not a reading of a running clock)."""
    if not isinstance(message, ClockTimes) or message.is_all_zero:
        return None
    status = message.status
    if status & _STATUS_NO_CLOCK:
        return None
    return _LEVER_RUNNING[status & _SIDE_BITS][1]


def _layout(messages: Sequence[object], updates: list[int]) -> list[float]:
    """Natural offsets of field updates from the reading before them: ``[0.0, first, ..., last]``.

    The first comes :data:`_EDGE_S` after the reading, then :data:`_SCAN_S` between a lift and a
    placement, :data:`_APART_S` between two lifts or two placements.
    """
    offsets = [0.0]
    lift: bool | None = None
    for j in updates:
        message = messages[j]
        now = isinstance(message, FieldUpdate) and message.code == 0
        offsets.append(offsets[-1] + (_EDGE_S if lift is None else _within_move(lift, now)))
        lift = now
    return offsets


def _placement(message: object) -> bool:
    """A field update that puts something down."""
    return isinstance(message, FieldUpdate) and message.code != 0


def _early_replies(messages: Sequence[object], anchors: list[int], kinds: dict[int, str]) -> dict[int, int]:
    """For each press (anchor index), where the opponent's updates that came before its reading begin.

    The board is followed from the dump and the updates to know whose piece each update
    puts down or lifts; which clock side plays which colour is what most presses say (the
    first piece put down since the previous press is the presser's). A mover's own move
    ends with his own piece put down (or its old square cleared after it), so the updates
    after that in the press's interval (the opponent's pieces, or a victim lifted) are the
    opponent's early start.
    """
    board = _first_board(messages)
    colour: dict[int, bool | None] = {}
    piece: dict[int, int] = {}  # the piece code put down or lifted
    for j, message in enumerate(messages):
        if isinstance(message, BoardDump):
            board = list(message.codes)
        elif isinstance(message, FieldUpdate):
            code = message.code if 1 <= message.code <= 12 else board[message.field] if message.code == 0 else 0
            colour[j] = None if not 1 <= code <= 12 else code <= 6
            piece[j] = code
            board[message.field] = message.code
    votes: Counter[tuple[ClockSide, bool]] = Counter()
    sides: dict[int, ClockSide | None] = {i: _running_side(messages[i]) for i in anchors}
    since = 0
    for k, b in enumerate(anchors):
        if kinds[b] != "press" or not k:
            since = b if kinds[b] == "start" else since
            continue
        presser = sides[anchors[k - 1]]
        placed = next((j for j in range(since, b) if colour.get(j) is not None and _placement(messages[j])), None)
        if presser is not None and placed is not None:
            votes[(presser, bool(colour[placed]))] += 1
        since = b
    side_colour = {side: votes[(side, True)] > votes[(side, False)] for side in (ClockSide.LEFT, ClockSide.RIGHT)
                   if votes[(side, True)] != votes[(side, False)]}
    early: dict[int, int] = {}
    for k, b in enumerate(anchors):
        presser = sides[anchors[k - 1]] if k else None
        if kinds[b] != "press" or presser not in side_colour:
            continue
        start = b
        a = anchors[k - 1]
        for j in range(b - 1, a, -1):
            if isinstance(messages[j], FieldUpdate):
                if colour.get(j) is side_colour[presser] and (_placement(messages[j]) or any(
                        _placement(messages[x]) and _same_piece(piece[j], piece.get(x, 0)) for x in range(a + 1, j))):
                    break  # the presser's piece put down, or its old square cleared after (§1.5)
                start = j
        if start < b:
            early[b] = start
    return early


class DgtCaptureCodec:
    """Replays DGT captures (:mod:`drivers.capture`): the driver's decoder and mapper, plus raw-capture timing.

    Raw captures have no times; :meth:`timeline` infers them from the clock's own
    readings (see there). :meth:`spacing` is the fallback where no clock runs:
    0.05 s per field update, 1.0 s per clock message, 0.01 s for anything else.
    """

    def __init__(self) -> None:
        self.decoder = DgtDecoder()
        self.mapper = DgtMapper()
        self._host = HostDecoder()
        #: Decode received bytes (the decoder's ``feed``, without a call in between: every record of a capture).
        self.decode: Callable[[bytes], list[DgtMessage]] = self.decoder.feed

    def spacing(self, message: object) -> float:
        """Synthetic seconds before *message* in a raw capture where no clock runs."""
        if isinstance(message, FieldUpdate):
            return 0.05
        if isinstance(message, (ClockTimes, ClockAck)):
            return 1.0
        return 0.01

    def timeline(self, messages: Sequence[object]) -> list[float]:
        """Times for the messages of a raw capture, from the running clock's displayed seconds.

        In UPDATE_NICE a running clock sends a BWTIME each time the running side's display
        changes (protocols.md §1.6), so those readings are a time line (*anchors*): a reading
        whose running side shows *k* seconds less than when its display last changed comes
        *k* seconds later. A change of the running side is a press: it comes 0.5 s after the
        field updates before it (the move is made, released, then the clock is pressed); the
        new side's display first changes 0.3 s after the press, or later when the updates in
        between need it (the fraction of its second is unknown). Readings that change nothing
        on the running side carry no time and ride along.

        Field updates between two anchors are laid out as scans would report them (:func:`_layout`;
        an anchor is moved later when its interval needs more room). Updates that continue
        across a reading (a piece still sliding when the second changed) hug it on both sides,
        so a square passed over never lasts ``T_settle``; those before a press follow the
        previous anchor, except the opponent's updates at its end (he may start before the
        reading of the press arrives, :func:`_early_replies`), which hug the press; a burst
        within one second, or across both ends of it, is stretched over it. Other messages
        follow the update before them. Where no clock runs (before the start, during a stop,
        without a clock), field updates are spaced by :func:`_clockless_gaps` (a move at rest
        settles, a slide does not) and other messages by :meth:`spacing`.
        """
        n = len(messages)
        times = [0.0] * n
        is_field = [isinstance(m, FieldUpdate) for m in messages]
        clockless = _clockless_gaps(messages)

        def gap(j: int) -> float:
            return clockless.get(j) or self.spacing(messages[j])

        anchors: list[int] = []
        kinds: dict[int, str] = {}
        readings = [i for i, m in enumerate(messages) if _running_side(m) is not None]
        t = 0.0
        for i in range(readings[0] if readings else n):
            t += gap(i)
            times[i] = t
        ref_t, ref_shown = 0.0, 0
        prev: int | None = None
        for i in readings:
            message = messages[i]
            assert isinstance(message, ClockTimes)
            side = _running_side(message)
            shown = message.left_s if side is ClockSide.LEFT else message.right_s
            between = range(prev + 1, i) if prev is not None else range(0)
            if prev is None or any(_stopped(messages[j]) for j in between):
                kind = "start"
                base = times[prev] if prev is not None else t
                at = base + sum(gap(j) for j in between) + self.spacing(message)
            else:
                offsets = _layout(messages, [j for j in between if is_field[j]])
                lower = times[prev] + offsets[-1] + _EDGE_S
                if _running_side(messages[prev]) is side:
                    if shown == ref_shown:
                        continue  # the running side's display did not change: no time information
                    kind = "tick"
                    at = ref_t + (ref_shown - shown) if shown < ref_shown else lower
                else:
                    kind = "press"
                    at = times[prev] + offsets[-1] + _PRESS_S
                at = max(at, lower)
            ref_t, ref_shown = (at, shown) if kind == "tick" else (at + _FIRST_TICK_S - 1.0, shown)
            times[i] = at
            kinds[i] = kind
            anchors.append(i)
            prev = i
        bounds = [*anchors, n]
        crossing = {
            i: kinds[i] == "tick" and any(is_field[(bounds[k - 1] + 1 if k else 0):i])
            and any(is_field[i + 1:bounds[k + 1]])
            for k, i in enumerate(anchors)
        }
        # The opponent may start before the reading of the press arrives (the clock is polled
        # 2-3 times a second, §1.8): his updates at the end of the press's interval go with it.
        early = _early_replies(messages, anchors, kinds)
        for k, b in enumerate(anchors):
            if b in early:
                crossing[b] = any(is_field[b + 1:bounds[k + 1]])
        for k, i in enumerate(anchors):
            # a burst does not go on across a tick into the next player's early start
            if crossing[i] and bounds[k + 1] in early:
                crossing[i] = any(is_field[i + 1:early[bounds[k + 1]]])
        for k, a in enumerate(anchors):
            b = bounds[k + 1]
            if b == n or kinds[b] == "start":
                at = times[a]
                for j in range(a + 1, b):
                    at += gap(j)
                    times[j] = at
                continue
            updates = [j for j in range(a + 1, b) if is_field[j]]
            if not updates:
                slots: list[float] = []
            elif kinds[b] == "press" or crossing[a] != crossing[b]:
                # hug the reading the burst continues across (a press: the mover's part hugs the previous
                # reading, the opponent's early start the press)
                head = sum(1 for j in updates if j < early.get(b, b)) if kinds[b] == "press" else \
                    len(updates) if crossing[a] else 0
                first, last = _layout(messages, updates[:head]), _layout(messages, updates[head:])
                slots = [times[a] + x for x in first[1:]] + [times[b] - _EDGE_S - last[-1] + x for x in last[1:]]
            else:
                # one burst within the interval, or across both ends of it: the natural layout, stretched
                offsets = _layout(messages, updates)
                if crossing[a]:  # the burst goes on across both ends: keep the edges, stretch the inside
                    inside = offsets[-1] - _EDGE_S
                    stretch = (times[b] - times[a] - 2 * _EDGE_S) / inside if inside > 0 else 0.0
                    slots = [times[a] + _EDGE_S + (x - _EDGE_S) * stretch for x in offsets[1:]]
                else:
                    stretch = (times[b] - times[a]) / (offsets[-1] + _EDGE_S)
                    slots = [times[a] + x * stretch for x in offsets[1:]]
            slot = dict(zip(updates, slots, strict=True))
            at = times[a]
            for j in range(a + 1, b):
                at = slot[j] if j in slot else at + _MIN_GAP
                times[j] = at
        return times

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """Board and clock events of *message* (clock buttons are operator events and left out).

        The EEPROM log the driver asks for at every connection (§1.9) is a ``BoardLog``, as the driver emits it.
        """
        # the messages of play without the dispatch (neither gives a clock button)
        if type(message) is FieldUpdate:
            return [self.mapper.square_changed(message, at)]
        if type(message) is ClockTimes:
            return self.mapper.clock_times(message, at)
        if not isinstance(message, (BoardDump, FieldUpdate, ClockTimes, ClockAck, EEMoves, Version, SerialNr,
                                    LongSerialNr, BatteryStatus)):
            return []
        return [e for e in self.mapper.map(message, at) if not isinstance(e, ClockButton)]

    def link_changed(self, up: bool, at: float) -> list[BoardEvent]:
        """The board link was lost: as the driver, forget a partial message and report the clock on the
        board's jack gone too (``LinkChanged(CLOCK, up=False)``; up again at its next reading)."""
        if up:
            return []
        self.decoder.reset()
        self._host.reset()
        return self.mapper.reset_link(at)

    def sent(self, data: bytes) -> None:
        """Host bytes: a SetNRun explains the next increase of a clock time."""
        if any(isinstance(c, ClockSetNRun) for c in self._host.feed(data)):
            self.mapper.note_clock_set()
