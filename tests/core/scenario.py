"""The scenario notation of rules-spec §8 as engine events.

``parse("0 L e2 · 350 P e4 wP · 700 C W")`` gives the board/clock events of a scenario
(times in ms → seconds). Presses, pauses and flags become :class:`ClockReading` s that a
simple clock simulation keeps consistent (lever high = side to move; ``C W`` moves the
lever to Black's side). ``ARB …`` items stay symbolic (:class:`Arb`): the test runner
turns them into arbiter commands once it knows the ids they refer to.

:func:`setup` builds the named start positions of §8.1. Positions "reached by" a move
sequence are reached by *playing* that sequence through the engine (lift/place/press
events at negative times), so the engine knows the history (takebacks, repetitions).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import chess

from boardd.core.events import ClockReading, ClockSide, Content, Event, SquareChanged

#: §8.1 named positions: name -> (FEN, moves from the standard start or None)
POSITIONS: dict[str, tuple[str, str | None]] = {
    "S0": ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", ""),
    "S1": ("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "e4 e5"),
    "A": ("r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", "e4 e5 Nf3 Nc6 Bc4 Bc5"),
    "B": ("r3kbnr/pppqpppp/2n5/3p1b2/3P1B2/2N1P3/PPPQ1PPP/R3KBNR b KQkq - 0 5",
          "d4 d5 Nc3 Nc6 Bf4 Bf5 Qd2 Qd7 e3"),
    "C": ("4k3/8/8/8/2b5/8/8/4K2R w K - 0 1", None),
    "D": ("r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1", None),
    "E": ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "e4 d5"),
    "G": ("4k3/8/8/1r6/8/8/8/1Q2K3 w - - 0 1", None),
    "H": ("rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", "e4 Nf6 e5 d5"),
    "I": ("r1bqkb1r/ppp1pppp/2n2n2/3pP3/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 2 4", "e4 Nf6 e5 d5 Nc3 Nc6"),
    "J": ("8/4P1k1/8/8/8/8/8/4K3 w - - 0 1", None),
    "K": ("r5k1/1P6/8/8/8/8/8/4K3 w - - 0 1", None),
    "L": ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", "e4 e5 Nf3 Nc6"),
    "L2": ("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2", "e4 e5 Nf3"),
    "N": ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", None),
    "O": ("4k3/7p/8/8/8/8/4r3/R3K3 w - - 0 1", None),
    "P": ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", None),
    "Q1": ("8/8/8/4k3/8/8/8/4K2R b - - 0 60", None),
    "Q2": ("8/8/8/4k3/8/8/8/4K2R w - - 0 60", None),
    "R": ("k7/2P5/1K6/8/8/8/8/8 w - - 0 1", None),
    "S": ("4k3/8/8/8/8/2n5/8/B3K3 w - - 0 1", None),
    "T960": ("rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1", None),
    "U960": ("4k3/8/8/8/8/8/8/4KR2 w F - 0 1", None),
    "V": ("4k3/8/8/3n1b2/4P3/8/8/4K3 w - - 0 1", None),
}

_SIDE = {"W": chess.WHITE, "B": chess.BLACK}


@dataclass(frozen=True, slots=True)
class Arb:
    """An ``ARB …`` item: an arbiter action entered on the tablet."""

    at: float
    text: str


@dataclass(slots=True)
class ClockSim:
    """A minimal clock producing consistent :class:`ClockReading` s (White on the left)."""

    white: float = 5400.0
    black: float = 5400.0
    running: chess.Color | None = chess.WHITE
    lever: chess.Color = chess.WHITE
    last: float = 0.0
    flags: dict[chess.Color, bool] = field(default_factory=lambda: {chess.WHITE: False, chess.BLACK: False})
    white_side: ClockSide = ClockSide.LEFT

    def _tick(self, at: float) -> None:
        dt = max(0.0, at - self.last)
        if self.running == chess.WHITE:
            self.white = max(0.0, self.white - dt)
        elif self.running == chess.BLACK:
            self.black = max(0.0, self.black - dt)
        self.last = at

    def _side(self, color: chess.Color | None) -> ClockSide | None:
        if color is None:
            return None
        return self.white_side if color == chess.WHITE else self.white_side.other

    def reading(self, at: float) -> ClockReading:
        """The reading at *at* (after ticking)."""
        self._tick(at)
        left_is_white = self.white_side is ClockSide.LEFT
        return ClockReading(
            at=at, left=self.white if left_is_white else self.black, right=self.black if left_is_white else self.white,
            running=self._side(self.running), lever_high=self._side(self.lever),
            left_flag=self.flags[chess.WHITE if left_is_white else chess.BLACK],
            right_flag=self.flags[chess.BLACK if left_is_white else chess.WHITE])

    def press(self, color: chess.Color, at: float) -> ClockReading:
        """``C W`` / ``C B``: the lever goes to the other side; that clock runs."""
        self._tick(at)
        self.lever = not color
        self.running = not color
        return self.reading(at)

    def pause(self, at: float, stale: float = 0.0) -> ClockReading:
        """The clock paused; with *stale*, the reading of the pause shows the side that ran as it was *stale* s
        before (a clock that reports a stopped side's time late: the DgtPi, protocols.md §2.5); the next reading
        shows the true time."""
        self._tick(at)
        ran, self.running = self.running, None
        reading = self.reading(at)
        if not stale or ran is None:
            return reading
        left = (ran == chess.WHITE) == (self.white_side is ClockSide.LEFT)
        return dataclasses.replace(reading, left=reading.left + stale) if left else \
            dataclasses.replace(reading, right=reading.right + stale)

    def resume(self, at: float) -> ClockReading:
        self._tick(at)
        self.running = self.lever
        return self.reading(at)

    def flag(self, color: chess.Color, at: float) -> ClockReading:
        self._tick(at)
        if color == chess.WHITE:
            self.white = 0.0
        else:
            self.black = 0.0
        self.flags[color] = True
        return self.reading(at)


def piece(text: str) -> Content:
    """``wK`` → white king, ``bP`` → black pawn."""
    if len(text) != 2 or text[0] not in "wb":
        raise ValueError(f"bad piece {text!r}")
    symbol = text[1].upper() if text[0] == "w" else text[1].lower()
    return chess.Piece.from_symbol(symbol)


_ITEM = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s+(.*?)\s*$")


def parse(text: str, clock: ClockSim, *, offset: float = 0.0) -> list[Event | Arb]:
    """Parse a §8 event string into events (times in ms from *offset* seconds)."""
    out: list[Event | Arb] = []
    for raw in text.split("·"):
        raw = raw.strip()
        if not raw:
            continue
        m = _ITEM.match(raw)
        if not m:
            raise ValueError(f"bad scenario item {raw!r}")
        at = offset + float(m.group(1)) / 1000.0
        words = m.group(2).split()
        kind = words[0]
        if kind == "L":
            out.append(SquareChanged(at=at, square=chess.parse_square(words[1]), content=None))
        elif kind == "P":
            out.append(SquareChanged(at=at, square=chess.parse_square(words[1]), content=piece(words[2])))
        elif kind == "X":
            sq = chess.parse_square(words[1])
            a, b = words[2].split("→")
            del a
            out.append(SquareChanged(at=at, square=sq, content=None))
            out.append(SquareChanged(at=at, square=sq, content=piece(b)))
        elif kind == "C":
            out.append(clock.press(_SIDE[words[1]], at))
        elif kind == "PAUSE":  # PAUSE [stale s]: the reading of the pause shows the side that ran stale s late
            out.append(clock.pause(at, float(words[1]) if len(words) > 1 else 0.0))
        elif kind == "RESUME":
            out.append(clock.resume(at))
        elif kind == "FLAG":
            out.append(clock.flag(_SIDE[words[1]], at))
        elif kind == "LEVER":  # test helper: the arbiter sets the lever while the clock is paused
            clock.lever = _SIDE[words[1]]
        elif kind == "LEVERX":  # the arbiter moves the lever (paused or at the restart): seen in the next reading
            clock.lever = _SIDE[words[1]]
            if clock.running is not None:
                clock.running = clock.lever
            out.append(clock.reading(at))
        elif kind == "SET":  # the arbiter sets the times on the clock: SET <white s> <black s>
            clock._tick(at)
            clock.white, clock.black = float(words[1]), float(words[2])
            out.append(clock.reading(at))
        elif kind == "ADD":  # the arbiter adds (or with a negative number takes) time: ADD <W|B> <seconds>
            clock._tick(at)
            if _SIDE[words[1]] == chess.WHITE:
                clock.white += float(words[2])
            else:
                clock.black += float(words[2])
            out.append(clock.reading(at))
        elif kind == "TICK":  # a reading (about one a second while the clock runs or shows the pause)
            out.append(clock.reading(at))
        elif kind == "ARB":
            out.append(Arb(at, " ".join(words[1:])))
        else:
            raise ValueError(f"unknown scenario event {kind!r} in {raw!r}")
    return out


def move_events(board: chess.Board, move: chess.Move, at: float, clock: ClockSim | None) -> list[Event]:
    """Clean lift/place events of *move* (one hand, king first) and the press, starting at *at*."""
    side = board.turn
    ev: list[Event] = []
    mover = board.piece_at(move.from_square)
    assert mover is not None
    t = at
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = board.is_kingside_castling(move)
        rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, rank)
        king_to = chess.square(6 if kingside else 2, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        rook = board.piece_at(rook_from)
        ev.append(SquareChanged(at=t, square=move.from_square, content=None))
        ev.append(SquareChanged(at=t + 0.1, square=rook_from, content=None))
        ev.append(SquareChanged(at=t + 0.2, square=king_to, content=mover))
        ev.append(SquareChanged(at=t + 0.3, square=rook_to, content=rook))
    else:
        captured_sq = move.to_square
        if board.is_en_passant(move):
            captured_sq = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
        if board.piece_at(captured_sq) is not None:
            ev.append(SquareChanged(at=t, square=captured_sq, content=None))
            t += 0.1
        ev.append(SquareChanged(at=t, square=move.from_square, content=None))
        placed = chess.Piece(move.promotion, side) if move.promotion else mover
        ev.append(SquareChanged(at=t + 0.2, square=move.to_square, content=placed))
    if clock is not None:
        ev.append(clock.press(side, at + 0.8))
    return ev


def history_events(moves: str, clock: ClockSim, *, start: float) -> list[Event]:
    """Events that play *moves* (SAN, from the standard start), one move per second from *start*."""
    board = chess.Board()
    out: list[Event] = []
    t = start
    for san in moves.split():
        move = board.parse_san(san)
        out.extend(move_events(board, move, t, clock))
        board.push(move)
        t += 1.0
    return out


def start_clock(turn: chess.Color, at: float, *, seconds: float = 5400.0) -> tuple[ClockSim, ClockReading]:
    """A clock with the lever on *turn*'s side, *seconds* on each side, and its first reading at *at*."""
    clock = ClockSim(white=seconds, black=seconds, running=turn, lever=turn, last=at)
    return clock, clock.reading(at)
