"""The typed event model: everything the core can be fed.

Theory of operation
-------------------
Drivers turn bytes into these events; the daemon turns arbiter commands into
them; the journal stores them; the engine (:mod:`boardd.core.engine`) consumes them.
Every event carries ``at``: the time it was observed, in seconds, on the
daemon's monotonic time line (drivers stamp it on receipt). The core never
reads a clock: time only ever comes from ``at``.

Events are frozen, slotted and keyword-only. They validate themselves on
construction, so an impossible event (a square number of 64, a negative time)
cannot exist; the constructor raises :class:`boardd.core.errors.EventError`.

Square contents use python-chess vocabulary: ``chess.Piece`` for a piece,
``None`` for an empty square, and :class:`Marker` for the things a sensor can
report that are not chess pieces (DGT's "magic" result pieces, an unreadable
piece code).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias

import chess

from boardd.core._slots import slot_setters
from boardd.core.errors import EventError

__all__ = [
    "EDITIONS",
    "Acknowledge",
    "ArbiterCommand",
    "BoardEvent",
    "BoardLog",
    "BoardSnapshot",
    "ClockReading",
    "ClockSide",
    "Content",
    "Event",
    "FillGap",
    "GameInfo",
    "Link",
    "LinkChanged",
    "LogEntry",
    "LoggedChange",
    "LoggedPress",
    "Marker",
    "NewGame",
    "Reinstate",
    "Reopen",
    "Resolve",
    "SetClock",
    "SetOrientation",
    "SetPlayers",
    "SetResult",
    "SquareChanged",
    "clock_reading",
    "square_changed",
]


class Marker(enum.Enum):
    """A sensor reading that is not a chess piece."""

    #: DGT piece code 0x0d: the "draw" result piece.
    DRAW = "draw"
    #: DGT piece code 0x0e: the "white wins" result piece.
    WHITE_WINS = "white-wins"
    #: DGT piece code 0x0f: the "black wins" result piece.
    BLACK_WINS = "black-wins"
    #: Something stands there but the board cannot say what (unknown code,
    #: uncalibrated RFID tag, ...).
    UNKNOWN = "unknown"


#: What a sensor reports for one square.
Content: TypeAlias = chess.Piece | Marker | None


#: Editions of the Laws the engine knows (rules-spec 0.4); also :data:`boardd.core.settings.EDITIONS`.
EDITIONS = (2009, 2014, 2018, 2023)


def _check_time(at: float) -> None:
    if not isinstance(at, (int, float)) or math.isnan(at) or math.isinf(at):
        raise EventError(f"event time must be a finite number, got {at!r}")


#: The bounds of a finite float: ``type(x) is float and -_INF < x < _INF`` is the hot events' inline test that
#: lets the usual values pass without the calls of the full checks (which decide every other value).
_INF = math.inf


def _check_square(square: int) -> None:
    if not isinstance(square, int) or not 0 <= square < 64:
        raise EventError(f"square must be 0..63 (python-chess numbering), got {square!r}")


def _check_clock_time(name: str, value: object) -> None:
    if not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise EventError(f"clock time {name} must be >= 0 seconds, got {value!r}")


def _check_content(content: object) -> None:
    if content is not None and not isinstance(content, (chess.Piece, Marker)):
        raise EventError(f"square content must be chess.Piece, Marker or None, got {content!r}")


def content_symbol(content: Content) -> str:
    """Return a one-character symbol for *content*: ``P``..``k``, ``.`` or ``?``/``=``/``+``/``-``."""
    if content is None:
        return "."
    if isinstance(content, chess.Piece):
        return content.symbol()
    return {Marker.DRAW: "=", Marker.WHITE_WINS: "+", Marker.BLACK_WINS: "-"}.get(content, "?")


def content_from_symbol(symbol: str) -> Content:
    """Inverse of :func:`content_symbol`.

    Raises:
        EventError: the symbol is not one of the known ones.
    """
    if symbol == ".":
        return None
    if symbol in {"=", "+", "-", "?"}:
        return {"=": Marker.DRAW, "+": Marker.WHITE_WINS, "-": Marker.BLACK_WINS}.get(
            symbol, Marker.UNKNOWN
        )
    try:
        return chess.Piece.from_symbol(symbol)
    except ValueError:
        raise EventError(f"unknown square content symbol {symbol!r}") from None


# --- Board events ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SquareChanged:
    """One square's reading changed (a lift when ``content`` is None, else a place/replace)."""

    at: float
    square: chess.Square
    content: Content

    def __post_init__(self) -> None:
        # one event per sensor change: the usual values pass inline, anything else goes to the full checks
        at, square, content = self.at, self.square, self.content
        if type(at) is not float or not -_INF < at < _INF:
            _check_time(at)
        if type(square) is not int or not 0 <= square < 64:
            _check_square(square)
        if content is not None and type(content) is not chess.Piece:
            _check_content(content)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardSnapshot:
    """A full-board reading (a DGT board dump, a Millennium status, a Chessnut frame).

    ``squares[sq]`` is the content of python-chess square ``sq`` (a1=0 .. h8=63),
    always in the board's own frame: orientation is the engine's business.
    """

    at: float
    squares: tuple[Content, ...]

    def __post_init__(self) -> None:
        _check_time(self.at)
        if len(self.squares) != 64:
            raise EventError(f"a snapshot has 64 squares, got {len(self.squares)}")
        for content in self.squares:
            _check_content(content)

    @classmethod
    def from_board(cls, board: chess.BaseBoard, *, at: float) -> BoardSnapshot:
        """Snapshot of a python-chess board's piece placement."""
        return cls(at=at, squares=tuple(board.piece_at(sq) for sq in chess.SQUARES))

    def placement(self) -> str:
        """The snapshot as 64 symbols, a1..h8 (see :func:`content_symbol`)."""
        return "".join(content_symbol(c) for c in self.squares)


class ClockSide(enum.Enum):
    """A side of the physical clock. Which player sits there is configuration (rules-spec 2.2)."""

    LEFT = "left"
    RIGHT = "right"

    @property
    def other(self) -> ClockSide:
        """The opposite side."""
        return ClockSide.RIGHT if self is ClockSide.LEFT else ClockSide.LEFT


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockReading:
    """One clock status message.

    Times are the remaining seconds shown on each side (``None`` when unknown).
    ``running`` is the side whose time is running, ``None`` when the clock is
    stopped or paused. ``lever_high`` is the side whose lever/button is up (on a
    DGT clock the up side is the side to move); ``None`` when unknown. A press by
    X is a transition of the lever from X high to the other side high; the
    engine derives presses from consecutive readings (rules-spec 2.2, 3.5).
    """

    at: float
    left: float | None
    right: float | None
    running: ClockSide | None
    lever_high: ClockSide | None = None
    left_flag: bool = False
    right_flag: bool = False
    battery_low: bool = False
    connected: bool = True
    model: str | None = None

    def __post_init__(self) -> None:
        # the most frequent event (a reading or more a second): the usual values pass inline, anything else
        # goes to the full checks
        at, left, right = self.at, self.left, self.right
        if type(at) is not float or not -_INF < at < _INF:
            _check_time(at)
        if left is not None and (type(left) is not float or not left >= 0):
            _check_clock_time("left", left)
        if right is not None and (type(right) is not float or not right >= 0):
            _check_clock_time("right", right)

    def time_of(self, side: ClockSide) -> float | None:
        """Remaining time on *side*."""
        return self.left if side is ClockSide.LEFT else self.right

    def flag_of(self, side: ClockSide) -> bool:
        """Flag indicator of *side*."""
        return self.left_flag if side is ClockSide.LEFT else self.right_flag


class Link(enum.Enum):
    """Which hardware link a :class:`LinkChanged` is about."""

    BOARD = "board"
    CLOCK = "clock"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkChanged:
    """A hardware link went up or down (USB unplugged, Bluetooth drop, clock cable)."""

    at: float
    link: Link
    up: bool
    detail: str = ""

    def __post_init__(self) -> None:
        _check_time(self.at)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedChange:
    """One square change from the board's own memory (no time of its own: the order is what counts)."""

    square: chess.Square
    content: Content

    def __post_init__(self) -> None:
        _check_square(self.square)
        _check_content(self.content)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedPress:
    """A lever change from the board's own memory: *side* pressed, its clock showing *shown* seconds then."""

    side: ClockSide
    shown: float

    def __post_init__(self) -> None:
        if not isinstance(self.shown, (int, float)) or math.isnan(self.shown) or self.shown < 0:
            raise EventError(f"a logged clock time must be >= 0 seconds, got {self.shown!r}")


LogEntry: TypeAlias = LoggedChange | LoggedPress


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardLog:
    """What the board recorded itself while no host read it, oldest first (the DGT EEPROM, protocols.md §1.9).

    ``at`` is when the log was read (the restart); the entries have no times of their own: the
    recovery (:mod:`boardd.core.recovery`) places them with the clock readings. ``source`` names the
    memory (``"eeprom"``).
    """

    at: float
    entries: tuple[LogEntry, ...]
    source: str = "eeprom"

    def __post_init__(self) -> None:
        _check_time(self.at)
        for entry in self.entries:
            if not isinstance(entry, (LoggedChange, LoggedPress)):
                raise EventError(f"a board log holds LoggedChange and LoggedPress entries, got {entry!r}")


BoardEvent: TypeAlias = SquareChanged | BoardSnapshot | ClockReading | LinkChanged | BoardLog


# --- Arbiter and operator commands (already validated by the daemon) -------


#: the values of :attr:`GameInfo.variant` (board config ``variant``)
VARIANTS = ("standard", "chess960", "auto")


@dataclass(frozen=True, slots=True, kw_only=True)
class GameInfo:
    """Who plays what under which rules. Strings are free text from the organiser.

    ``time_control`` uses the PGN TimeControl form (``"40/5400+30:1800+30"``,
    ``"900+10"``, ``"180+2"``) or boardd's extended form documented in
    :mod:`boardd.core.clock`. ``start_fen`` is the starting position (a Chess960
    position, or a set-up position for tests); ``None`` is the standard start.
    """

    id: str = ""
    white: str = "?"
    black: str = "?"
    event: str = "?"
    site: str = "?"
    date: str = "????.??.??"
    round: str = "?"
    board_no: int | None = None
    time_control: str = "40/5400+30:1800+30"
    edition: int = 2023
    start_fen: str | None = None
    chess960: bool = False
    #: ``standard``, ``chess960`` or ``auto``; empty: ``chess960`` if :attr:`chess960` else ``standard``.
    #: Without a ``start_fen``, ``chess960`` takes the start array from the board (any of the 960) and ``auto``
    #: accepts a valid Chess960 start array seen before the first move; ``standard`` flags one (SETUP_INCORRECT).
    variant: str = ""

    def __post_init__(self) -> None:
        if self.edition not in EDITIONS:
            raise EventError(f"edition must be one of {', '.join(map(str, EDITIONS))}, got {self.edition!r}")
        if self.variant not in ("", *VARIANTS):
            raise EventError(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")

    @property
    def effective_variant(self) -> str:
        """The variant rule in force: :attr:`variant`, or what :attr:`chess960` says."""
        return self.variant or ("chess960" if self.chess960 else "standard")

    def start_read(self) -> GameInfo:
        """The game as its variant reads its :attr:`start_fen`: under ``auto``, a Chess960 position (a start array
        other than the standard one, or castling rights that name rooks standard chess cannot castle with, X-FEN or
        Shredder-FEN) is a Chess960 game; otherwise the game as it is."""
        if self.chess960 or self.effective_variant != "auto" or self.start_fen is None \
                or not is_chess960_position(self.start_fen):
            return self
        return replace(self, chess960=True)


def is_chess960_position(fen: str) -> bool:
    """Is ``fen`` a legal Chess960 position that standard chess reads otherwise (refuses, or reads other castling
    rights)? The standard start array (518) and standard positions are not."""
    try:
        board = chess.Board(fen, chess960=True)
    except ValueError:
        return False
    if not board.is_valid():
        return False
    number = board.chess960_pos()
    if number is not None:
        return number != 518
    try:
        standard = chess.Board(fen)
    except ValueError:
        return True
    return not standard.is_valid() or standard.castling_rights != board.castling_rights


@dataclass(frozen=True, slots=True, kw_only=True)
class NewGame:
    """Start a new game (the previous one, if any, is closed and archived)."""

    at: float
    game: GameInfo = field(default_factory=GameInfo)

    def __post_init__(self) -> None:
        _check_time(self.at)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetPlayers:
    """Change the player names of the current game."""

    at: float
    white: str
    black: str

    def __post_init__(self) -> None:
        _check_time(self.at)


@dataclass(frozen=True, slots=True, kw_only=True)
class Acknowledge:
    """The arbiter has seen irregularity ``irregularity_id``."""

    at: float
    irregularity_id: str

    def __post_init__(self) -> None:
        _check_time(self.at)


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolve:
    """The arbiter ruled on irregularity ``irregularity_id``.

    ``ruling`` is free text for the record; ``accept`` says whether the law-based
    suggestion was applied (penalty, reinstatement) or dismissed; ``claim`` marks
    a player's claim in the "otherwise" regime (rules-spec R22, T38); ``alone``
    rules on that finding only: the findings of its incident stay as they are
    (the tablet's "Dismiss press only": a press judged a distraction, the illegal
    move folded under it still to be ruled on).
    """

    at: float
    irregularity_id: str
    ruling: str = ""
    accept: bool = True
    claim: bool = False
    alone: bool = False

    def __post_init__(self) -> None:
        _check_time(self.at)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reopen:
    """The arbiter takes back his dismissal of irregularity ``irregularity_id`` (a ``Resolve`` with ``accept``
    false, pressed by mistake): the findings it closed need him again and a counted one counts again."""

    at: float
    irregularity_id: str

    def __post_init__(self) -> None:
        _check_time(self.at)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reinstate:
    """The arbiter reinstates the position after ``ply`` half-moves (7.5.1, 7.4, 7.6)."""

    at: float
    ply: int

    def __post_init__(self) -> None:
        _check_time(self.at)
        if not isinstance(self.ply, int) or self.ply < 0:
            raise EventError(f"ply must be a non-negative integer, got {self.ply!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SetClock:
    """The arbiter sets the clock times (seconds) and optionally the move counter."""

    at: float
    white: float
    black: float
    moves_white: int | None = None
    moves_black: int | None = None

    def __post_init__(self) -> None:
        _check_time(self.at)
        if self.white < 0 or self.black < 0:
            raise EventError("clock times must be >= 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class SetResult:
    """The arbiter enters the result (resignation, agreement, flag accepted, ...)."""

    at: float
    result: str
    termination: str = "normal"

    def __post_init__(self) -> None:
        _check_time(self.at)
        if self.result not in {"1-0", "0-1", "1/2-1/2", "*"}:
            raise EventError(f"result must be 1-0, 0-1, 1/2-1/2 or *, got {self.result!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SetOrientation:
    """Board orientation: ``white_at_a1`` False means the board is turned round (``flip``)."""

    at: float
    white_at_a1: bool

    def __post_init__(self) -> None:
        _check_time(self.at)


@dataclass(frozen=True, slots=True, kw_only=True)
class FillGap:
    """The arbiter enters the moves a downtime gap stands for (record ply ``ply``, a ``0000`` gap entry).

    ``moves`` are UCI or SAN, from the position before the gap; they must lead to the position the gap
    entry recorded. The record is rebuilt from there and republished.
    """

    at: float
    ply: int
    moves: tuple[str, ...]

    def __post_init__(self) -> None:
        _check_time(self.at)
        if not isinstance(self.ply, int) or self.ply < 1:
            raise EventError(f"ply must be a positive integer, got {self.ply!r}")
        if not self.moves or not all(isinstance(m, str) and m for m in self.moves):
            raise EventError("moves must be a non-empty list of moves (UCI or SAN)")


ArbiterCommand: TypeAlias = (
    NewGame | SetPlayers | Acknowledge | Resolve | Reopen | Reinstate | SetClock | SetResult | SetOrientation
    | FillGap
)

#: Everything the engine can be fed.
Event: TypeAlias = BoardEvent | ArbiterCommand


# --- The decoders' hot paths (issue 12) -----------------------------------------------------------------------


def _make_clock_reading() -> Callable[..., ClockReading]:
    setters = slot_setters(ClockReading, ("at", "left", "right", "running", "lever_high", "left_flag",
                                          "right_flag", "battery_low", "connected", "model"))
    new = object.__new__

    # (positional arguments: keywords cost on the hot path)
    def slow(at: float, left: float | None, right: float | None, running: ClockSide | None,  # noqa: PLR0917
             lever_high: ClockSide | None, left_flag: bool, right_flag: bool, battery_low: bool, connected: bool,
             model: str | None) -> ClockReading:
        return ClockReading(at=at, left=left, right=right, running=running, lever_high=lever_high,
                            left_flag=left_flag, right_flag=right_flag, battery_low=battery_low, connected=connected,
                            model=model)

    if setters is None:  # pragma: no cover - the fields changed: the constructor
        return slow
    (set_at, set_left, set_right, set_running, set_lever, set_left_flag, set_right_flag, set_battery,
     set_connected, set_model) = setters

    def clock_reading(at: float, left: float | None, right: float | None, running: ClockSide | None,  # noqa: PLR0917 - positional: keywords cost on the hot path
                      lever_high: ClockSide | None, left_flag: bool, right_flag: bool, battery_low: bool,
                      connected: bool, model: str | None) -> ClockReading:
        if (type(at) is not float or not -_INF < at < _INF or type(left) is not float or not left >= 0
                or type(right) is not float or not right >= 0):
            return slow(at, left, right, running, lever_high, left_flag, right_flag, battery_low, connected, model)
        reading = new(ClockReading)
        set_at(reading, at)
        set_left(reading, left)
        set_right(reading, right)
        set_running(reading, running)
        set_lever(reading, lever_high)
        set_left_flag(reading, left_flag)
        set_right_flag(reading, right_flag)
        set_battery(reading, battery_low)
        set_connected(reading, connected)
        set_model(reading, model)
        return reading
    return clock_reading


def _make_square_changed() -> Callable[[float, int, Content], SquareChanged]:
    setters = slot_setters(SquareChanged, ("at", "square", "content"))
    new = object.__new__
    if setters is None:  # pragma: no cover - the fields changed: the constructor
        return lambda at, square, content: SquareChanged(at=at, square=square, content=content)
    set_at, set_square, set_content = setters

    def square_changed(at: float, square: int, content: Content) -> SquareChanged:
        if (type(at) is not float or not -_INF < at < _INF or type(square) is not int or not 0 <= square < 64
                or (content is not None and type(content) is not chess.Piece)):
            return SquareChanged(at=at, square=square, content=content)
        event = new(SquareChanged)
        set_at(event, at)
        set_square(event, square)
        set_content(event, content)
        return event
    return square_changed


#: ``clock_reading(at, left, right, running, lever_high, left_flag, right_flag, battery_low, connected, model)``
#: is ``ClockReading(at=at, left=left, ...)`` (the same object: equality, hash, repr; the same checks, the same
#: errors), for the decoders' most frequent event: the usual values (finite float times, both clock times known
#: floats >= 0) are set through the slot descriptors, which costs half of the frozen dataclass's ``__init__``
#: (callgrind, issue 12); any other value goes through the constructor and its checks.
clock_reading: Final = _make_clock_reading()

#: ``square_changed(at, square, content)`` is ``SquareChanged(at=at, square=square, content=content)``, built as
#: :func:`clock_reading` (a piece or an empty square on a square 0..63 at a finite float time; anything else: the
#: constructor).
square_changed: Final = _make_square_changed()
