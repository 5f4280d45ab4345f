"""The script of one ply: timed operations on the board, the clock and the tablet.

A :class:`_Script` is built by the handling code (the handler of :mod:`drivers.sim._core`,
the injections and :mod:`drivers.sim._procedures`) relative to the start of the move, and
played by the timeline of :mod:`drivers.sim._core`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import chess

from boardd.core.events import Content, Event
from drivers.sim._clock import SimClock

# --- the script of one ply --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Square:
    square: int
    content: Content


@dataclass(frozen=True, slots=True)
class _Press:
    color: chess.Color


@dataclass(frozen=True, slots=True)
class _Pause:
    pass


@dataclass(frozen=True, slots=True)
class _Resume:
    color: chess.Color


@dataclass(frozen=True, slots=True)
class _Command:
    """An arbiter command; built at emission time from (time, clock) so it can carry current clock values."""

    make: Callable[[float, SimClock], Event]


@dataclass(frozen=True, slots=True)
class _Call:
    """A physical action on the clock that is neither a board change nor a press, called with (time, timeline).

    Used for the arbiter's handling of a paused clock: the lever turned, the times set on the clock itself.
    """

    fn: Callable[[float, Any], None]


_Op = _Square | _Press | _Pause | _Resume | _Command | _Call


class _Script:
    """Timed operations relative to the start of the move (the first hand movement)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.t = 0.0
        self.ops: list[tuple[float, _Op]] = []

    def wait(self, low: float, high: float) -> None:
        self.t += self.rng.uniform(low, high)

    def lift(self, square: int) -> None:
        self.ops.append((self.t, _Square(square, None)))

    def put(self, square: int, piece: Content) -> None:
        self.ops.append((self.t, _Square(square, piece)))

    def press(self, color: chess.Color) -> None:
        self.ops.append((self.t, _Press(color)))

    def op(self, op: _Op) -> None:
        self.ops.append((self.t, op))

    @property
    def has_press(self) -> bool:
        return any(isinstance(op, _Press) for _, op in self.ops)


def _stamp(at: float) -> float:
    """Event times are written to 0.1 ms: real boards are stamped on receipt far less precisely."""
    return round(at, 4)


def _path(from_square: int, to_square: int) -> list[int]:
    """Squares strictly between from and to on a line, in the order a sliding piece crosses them."""
    between = list(chess.SquareSet(chess.between(from_square, to_square)))
    return sorted(between, key=lambda sq: chess.square_distance(sq, from_square))


def _victim_square(board: chess.Board, move: chess.Move) -> int | None:
    if board.is_en_passant(move):
        return move.to_square + (-8 if board.turn == chess.WHITE else 8)
    if board.is_capture(move):
        return move.to_square
    return None


def _slides(board: chess.Board, move: chess.Move) -> bool:
    piece = board.piece_type_at(move.from_square)
    if piece in (chess.ROOK, chess.BISHOP, chess.QUEEN):
        return chess.square_distance(move.from_square, move.to_square) >= 2
    return piece == chess.PAWN and abs(move.to_square - move.from_square) == 16
