"""The pure simulator: a game in, the events a real board and clock would produce out.

Theory of operation
-------------------
:func:`simulate_game` walks the game's moves. For every ply it

1. decides how long the player thinks (from the PGN ``[%clk]``/``[%emt]``
   comments when present, otherwise a seeded log-normal draw scaled to the time
   control), capped so that nobody loses on time;
2. builds a *script* for the move: timed square changes as a board would report
   them, in the style of the chosen handling profile (see ``docs/event-log.md``
   §Simulator and :data:`PROFILES`), plus the clock press, and for an injected
   irregularity the arbiter's follow-up (pause, ``Reinstate``, ``SetClock``, ...);
3. plays the script on a :class:`_Timeline`, which keeps the physical board, the
   clock model and the pending clock readings, and emits the events in time
   order: the DGT-style clock reading about once a second while a clock runs
   (whenever the displayed whole second changes), and 100–300 ms after every
   press, pause or resume (a clock read through the board is polled).

Everything is a function of the arguments: the same game, seed, profile and
injections give the same events. No clock is read, nothing sleeps.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import chess
import chess.pgn

from boardd.core.eventlog import LogHeader
from boardd.core.events import (
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Event,
    GameInfo,
    NewGame,
    Reinstate,
    SetClock,
    SetResult,
    SquareChanged,
)
from boardd.core.settings import RulesConfig
from drivers.sim._clock import SimClock, parse_time_control
from drivers.sim._inject import (
    NO_CLOCK_KINDS,
    Injection,
    InjectionKind,
    _king_rook,
    applicable,
    changed_candidates,
    expected_codes,
    illegal_targets,
    knock_candidates,
    released_candidates,
    touch_candidates,
)
from drivers.sim._procedures import (
    CaptureStyle,
    Correction,
    castling960_methods,
    category_of,
    correction_applicable,
    correction_codes,
    correction_counts,
    illegal_move_limit,
    penalty_seconds,
    script_castling960,
    script_correction,
    script_one_hand_capture,
    script_released_changed,
    script_released_taken_back,
)
from drivers.sim._script import (
    _Call,
    _Command,
    _path,
    _Pause,
    _Press,
    _Resume,
    _Script,
    _slides,
    _Square,
    _stamp,
    _victim_square,
)

__all__ = ["DEFAULT_TIME_CONTROL", "PROFILES", "SimulatedGame", "SimulationError", "simulate_game"]

#: The FIDE standard control, used when the game has no usable TimeControl tag.
DEFAULT_TIME_CONTROL = "40/5400+30:1800+30"

#: Handling profiles. ``clean``: textbook one-hand moves. ``casual``: what real boards report
#: for normal play (slides, flicker, scan order, j'adoube of the moved piece, all promotion
#: orders) -- never an irregularity. ``clumsy``: casual plus knocked pieces restored before
#: the press, both pieces of a capture held in the air, changed minds, illegal placements
#: corrected before the press; it may raise ``TOUCH_MOVE_SUSPECTED`` (listed in
#: ``SimulatedGame.expected_codes`` each time) and info codes.
PROFILES = ("clean", "casual", "clumsy")

#: Info codes a simulated game may come with, whatever the profile: they never call for the arbiter.
INFO_CODES = frozenset({
    "SENSOR_FLICKER", "ADJUST_OBSERVED", "LATENCY_RACE", "DISPLACED_PIECES", "ILLEGAL_PLACEMENT_CORRECTED",
    "PROMOTION_ORDER_2009", "DRAW_CLAIM_AVAILABLE", "CLOCK_PAUSED", "ARBITER_ADJUST", "MOVE_AFTER_GAME_END",
    "CHESS960_CASTLING_ORDER", "CAPTURED_PIECE_PARKED",
})


class SimulationError(ValueError):
    """The simulator was asked for something it cannot do (unknown profile, injection at an unfit ply)."""


# --- the timeline ---------------------------------------------------------------------


class _Timeline:
    """Emits events in time order: script operations, periodic and pending clock readings."""

    def __init__(self, *, rng: random.Random, clock: SimClock, white_side: ClockSide, model: str,
                 connected: bool = True) -> None:
        self.rng = rng
        self.clock = clock
        #: A clock is connected to the board. Without one (False) no reading is ever emitted and nobody presses:
        #: :attr:`clock` is then only the time each player has used, switched when a move is made (the engine's
        #: model does the same, rules-spec 6.2.1.2), so that think times stay within the time control.
        self.connected = connected
        self.white_side = white_side
        self.model = model
        self.events: list[Event] = []
        self.now = 0.0
        self.physical: list[Content] = [None] * 64
        self.lever: chess.Color = chess.WHITE
        self._pending: list[float] = []
        self._last_tick: float | None = None

    def side(self, color: chess.Color) -> ClockSide:
        return self.white_side if color == chess.WHITE else self.white_side.other

    def reading(self, at: float) -> ClockReading:
        white = self.clock.remaining(chess.WHITE, at)
        black = self.clock.remaining(chess.BLACK, at)
        shown = {chess.WHITE: float(math.ceil(round(white, 6))), chess.BLACK: float(math.ceil(round(black, 6)))}
        left_color = chess.WHITE if self.white_side is ClockSide.LEFT else chess.BLACK
        running = None if self.clock.running is None else self.side(self.clock.running)
        return ClockReading(at=_stamp(at), left=shown[left_color], right=shown[not left_color], running=running,
                            lever_high=self.side(self.lever), left_flag=shown[left_color] <= 0,
                            right_flag=shown[not left_color] <= 0, model=self.model)

    def advance(self, until: float) -> None:
        """Emit every clock reading due up to *until* (inclusive), then move the time cursor there."""
        while self.connected:
            tick = self.clock.next_tick(self.now if self._last_tick is None else max(self.now, self._last_tick))
            pending = min(self._pending) if self._pending else None
            # The tolerance matters: a tick that falls on *until* up to float noise is due now; left for
            # later, next_tick() (which rounds) would skip it.
            due = min((t for t in (tick, pending) if t is not None and t <= until + 1e-6), default=None)
            if due is None:
                break
            if pending is not None and due == pending:
                self._pending.remove(pending)
            elif tick is not None and due == tick:
                self._last_tick = tick
                if pending is not None:
                    # The clock changed state and the board has not passed that on yet: the next
                    # message is the pending one, which shows the new state (protocols.md 1.7.1).
                    continue
            # A tick pulled forward by the tolerance is stamped at *until*: events stay in time order.
            due = min(due, until)
            self.now = max(self.now, due)
            self.events.append(self.reading(due))
        self.now = max(self.now, until)

    def square(self, at: float, square: int, content: Content) -> None:
        self.advance(at)
        self.physical[square] = content
        self.events.append(SquareChanged(at=_stamp(at), square=square, content=content))

    def _schedule_reading(self, at: float) -> None:
        if not self.connected:
            return
        self._pending.append(at + self.rng.uniform(0.10, 0.30))

    def press(self, at: float, color: chess.Color) -> None:
        self.advance(at)
        self.clock.press(color, at)
        self.lever = not color
        self._last_tick = None
        self._schedule_reading(at)

    def pause(self, at: float) -> None:
        self.advance(at)
        self.clock.pause(at)
        self._last_tick = None
        self._schedule_reading(at)

    def resume(self, at: float, color: chess.Color) -> None:
        self.advance(at)
        self.clock.start(at, color)
        self.lever = color
        self._last_tick = None
        self._schedule_reading(at)

    def command(self, at: float, event: Event) -> None:
        self.advance(at)
        self.events.append(event)

    def run(self, start: float, script: _Script) -> float:
        """Play *script* from *start*; returns the time of its last operation."""
        last = start
        for offset, op in script.ops:
            at = start + offset
            last = at
            match op:
                case _Square():
                    self.square(at, op.square, op.content)
                case _Press():
                    self.press(at, op.color)
                case _Pause():
                    self.pause(at)
                case _Resume():
                    self.resume(at, op.color)
                case _Command():
                    self.command(at, op.make(at, self.clock))
                case _Call():
                    self.advance(at)
                    op.fn(at, self)
        return last

    def turn_lever(self, at: float, color: chess.Color) -> None:
        """The lever is put high on *color*'s side while the clock is paused (the arbiter's doing)."""
        self.advance(at)
        self.lever = color
        self._schedule_reading(at)

    def set_times(self, at: float, white: float, black: float, moves_white: int, moves_black: int) -> None:
        """The arbiter sets the times on the clock itself (DGT 3000 menu, clock paused): seen in its readings."""
        self.advance(at)
        self.clock.correct(at, white, black, moves_white, moves_black)
        self._last_tick = None
        self._schedule_reading(at)


# --- handling of one move -------------------------------------------------------------


@dataclass(slots=True)
class _PlyNotes:
    """What the script of a ply did that the engine will notice."""

    codes: list[str] = field(default_factory=list)


class _Handler:
    """Builds the script of one ply for a profile."""

    def __init__(self, rng: random.Random, profile: str, *, procedures: bool = False) -> None:
        self.rng = rng
        self.profile = profile
        #: Draw from the Laws' whole repertoire (:mod:`drivers.sim._procedures`); off, the historical handling.
        self.procedures = procedures
        #: Labels of the procedures used at the current ply (drained by :func:`simulate_game`).
        self.labels: list[str] = []

    def laws_procedure(self, s: _Script, board: chess.Board, move: chess.Move) -> bool:
        """With :attr:`procedures`: script a Chess960 castling by a random F.3 method, or (half the time) a
        capture with one hand at 150-300 ms; True when it did."""
        if not self.procedures:
            return False
        if board.chess960 and board.is_castling(move):
            method = self.rng.choice(castling960_methods(board, move))
            script_castling960(s, board, move, method)
            self.labels.append(f"960/{method.value}")
            return True
        if _victim_square(board, move) is not None and move.promotion is None and self.chance(0.5):
            style = self.rng.choice(list(CaptureStyle))
            script_one_hand_capture(s, board, move, style)
            self.labels.append(f"capture/{style.value}")
            return True
        return False

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # Textbook parts ---------------------------------------------------------------

    def castle(self, s: _Script, board: chess.Board, move: chess.Move, *, king_slide: bool = False) -> None:
        king_from, king_to, rook_from, rook_to = _king_rook(board, move)
        king = chess.Piece(chess.KING, board.turn)
        rook = chess.Piece(chess.ROOK, board.turn)
        if board.chess960:
            # Guidelines II.3 recommended procedure: king off the board, rook to its square, king to its square.
            if king_from != king_to:
                s.lift(king_from)
                s.wait(0.30, 0.50)
            if rook_from != rook_to:
                s.lift(rook_from)
                s.wait(0.20, 0.40)
                s.put(rook_to, rook)
                s.wait(0.20, 0.40)
            if king_from != king_to:
                s.put(king_to, king)
            return
        s.lift(king_from)
        if king_slide:
            s.wait(0.05, 0.12)
            middle = (king_from + king_to) // 2
            s.put(middle, king)
            s.wait(0.04, 0.10)
            s.lift(middle)
            s.wait(0.03, 0.08)
        else:
            s.wait(0.25, 0.50)
        s.put(king_to, king)
        s.wait(0.30, 0.60)
        s.lift(rook_from)
        s.wait(0.20, 0.40)
        s.put(rook_to, rook)

    def clean_move(self, s: _Script, board: chess.Board, move: chess.Move) -> None:
        if self.laws_procedure(s, board, move):
            return
        if board.is_castling(move):
            self.castle(s, board, move)
            return
        piece = board.piece_at(move.from_square)
        final = chess.Piece(move.promotion, board.turn) if move.promotion else piece
        victim = _victim_square(board, move)
        s.lift(move.from_square)
        if victim is not None:
            s.wait(0.30, 0.60)  # > T_simul: a far victim lifted at once would look like two hands
            s.lift(victim)
        if move.promotion:
            s.wait(0.40, 1.00)  # fetching the new piece
        else:
            s.wait(0.25, 0.80)
        s.put(move.to_square, final)

    # Casual variants ----------------------------------------------------------------

    def slide(self, s: _Script, move: chess.Move, piece: chess.Piece) -> None:
        """Lift, transit squares (each for well under T_settle), place; sometimes out of scan order."""
        # Every square of the path is reported: skipping some would make two lifts within one scan
        # look far apart, which is the two-hands signature (R01).
        path = _path(move.from_square, move.to_square)
        s.lift(move.from_square)
        previous: int | None = None
        out_of_order = self.chance(0.3)
        for square in path:
            s.wait(0.03, 0.08)
            if out_of_order:
                s.put(square, piece)
                if previous is not None:
                    s.wait(0.01, 0.04)
                    s.lift(previous)
            else:
                if previous is not None:
                    s.lift(previous)
                    s.wait(0.01, 0.04)
                s.put(square, piece)
            previous = square
        s.wait(0.03, 0.08)
        if out_of_order:
            s.put(move.to_square, piece)
            if previous is not None:
                s.wait(0.01, 0.04)
                s.lift(previous)
        else:
            if previous is not None:
                s.lift(previous)
                s.wait(0.01, 0.04)
            s.put(move.to_square, piece)

    def casual_promotion(self, s: _Script, board: chess.Board, move: chess.Move) -> None:
        """The legal promotion orders of R06 (P1-P4)."""
        pawn = chess.Piece(chess.PAWN, board.turn)
        assert move.promotion is not None
        new = chess.Piece(move.promotion, board.turn)
        victim = _victim_square(board, move)
        orders = ["P1", "P2", "P3"] if victim is None else ["P1", "P2", "P4a", "P4b"]
        order = self.rng.choice(orders)
        if order == "P1":  # pawn placed on the promotion square, then exchanged
            s.lift(move.from_square)
            if victim is not None:
                s.wait(0.30, 0.50)
                s.lift(victim)
            s.wait(0.25, 0.50)
            s.put(move.to_square, pawn)
            s.wait(0.30, 0.60)
            s.lift(move.to_square)
            s.wait(0.40, 0.90)
            s.put(move.to_square, new)
        elif order == "P2":  # pawn taken off from the 7th rank, piece placed
            self.clean_move(s, board, move)
        elif order == "P3":  # new piece first, pawn removed afterwards
            s.put(move.to_square, new)
            s.wait(0.30, 0.60)
            s.lift(move.from_square)
        elif order == "P4a":  # capture-promotion: victim off, new piece placed, pawn off (T24)
            assert victim is not None
            s.lift(victim)
            s.wait(0.30, 0.60)
            s.put(move.to_square, new)
            s.wait(0.30, 0.60)
            s.lift(move.from_square)
        else:  # P4b: victim off, pawn off, new piece placed
            assert victim is not None
            s.lift(victim)
            s.wait(0.30, 0.60)
            s.lift(move.from_square)
            s.wait(0.40, 0.90)
            s.put(move.to_square, new)

    def casual_move(self, s: _Script, board: chess.Board, move: chess.Move) -> None:
        piece = board.piece_at(move.from_square)
        assert piece is not None
        if self.laws_procedure(s, board, move):
            return
        if board.is_castling(move):
            self.castle(s, board, move, king_slide=not board.chess960 and self.chance(0.2))
            return
        if move.promotion is not None:
            self.casual_promotion(s, board, move)
            return
        if self.chance(0.12):  # j'adoube of the piece that is about to move
            s.lift(move.from_square)
            s.wait(0.30, 0.70)
            s.put(move.from_square, piece)
            s.wait(0.40, 1.20)
        victim = _victim_square(board, move)
        if board.is_en_passant(move):
            assert victim is not None
            if self.chance(0.5):  # capturing pawn placed first, captured pawn removed afterwards (T16)
                s.lift(move.from_square)
                s.wait(0.25, 0.60)
                s.put(move.to_square, piece)
                s.wait(0.25, 0.50)
                s.lift(victim)
            else:  # captured pawn first (T17)
                s.lift(victim)
                s.wait(0.30, 0.50)
                s.lift(move.from_square)
                s.wait(0.25, 0.50)
                s.put(move.to_square, piece)
            return
        if victim is not None:
            style = self.rng.choice(["capturer-first", "victim-first", "replace", "slide"])
            if style == "slide" and not _slides(board, move):
                style = "replace"
            if style == "capturer-first":
                self.clean_move(s, board, move)
            elif style == "victim-first":  # T12
                s.lift(victim)
                s.wait(0.30, 0.60)
                s.lift(move.from_square)
                s.wait(0.25, 0.60)
                s.put(move.to_square, piece)
            elif style == "replace":  # one-scan X replacement (T13)
                s.lift(move.from_square)
                s.wait(0.30, 0.80)
                s.put(move.to_square, piece)
            else:  # victim off first, then a slide (T66)
                s.lift(victim)
                s.wait(0.30, 0.50)
                self.slide(s, move, piece)
            return
        if _slides(board, move) and self.chance(0.6):
            self.slide(s, move, piece)
        elif self.chance(0.3):  # new square reported before the old one clears, within one scan (T65)
            s.put(move.to_square, piece)
            s.wait(0.02, 0.18)
            s.lift(move.from_square)
        else:
            s.lift(move.from_square)
            s.wait(0.25, 0.80)
            s.put(move.to_square, piece)

    # Clumsy incidents ---------------------------------------------------------------------

    def clumsy_move(self, s: _Script, board: chess.Board, move: chess.Move, notes: _PlyNotes) -> None:
        piece = board.piece_at(move.from_square)
        assert piece is not None
        incident = self.rng.choice(["knock", "both-in-air", "changed-mind", "illegal-corrected", "none", "none"])
        victim = _victim_square(board, move)
        simple = not board.is_castling(move) and move.promotion is None and not board.is_en_passant(move)
        if incident == "knock" and simple and (candidates := knock_candidates(board, move)):
            knocked = self.rng.choice(candidates)
            s.lift(move.from_square)
            if victim is not None:
                s.wait(0.30, 0.60)
                s.lift(victim)
            s.wait(0.30, 0.70)
            s.lift(knocked)  # the hand arriving on the target square knocks a neighbour over
            s.wait(0.04, 0.14)
            s.put(move.to_square, piece)
            s.wait(0.50, 1.20)
            s.put(knocked, board.piece_at(knocked))  # ... and puts it back before pressing (7.4.1)
            return
        if incident == "both-in-air" and victim is not None and simple:
            s.lift(move.from_square)
            s.wait(0.30, 0.60)
            s.lift(victim)
            s.wait(0.80, 2.00)
            s.put(move.to_square, piece)
            return
        if incident == "changed-mind":
            movable = self.chance(0.7)
            candidates = touch_candidates(board, move, movable=movable)
            if candidates:
                touched = self.rng.choice(candidates)
                s.lift(touched)
                s.wait(0.50, 1.20)
                s.put(touched, board.piece_at(touched))
                s.wait(0.60, 1.50)
                if movable:
                    notes.codes.append("TOUCH_MOVE_SUSPECTED")
        if (incident == "illegal-corrected" and simple and victim is None and piece.piece_type != chess.KING
                and (targets := illegal_targets(board, move.from_square))):
            wrong = self.rng.choice(targets)
            s.lift(move.from_square)
            s.wait(0.30, 0.70)
            s.put(wrong, piece)
            s.wait(0.60, 1.50)  # settles: released on an illegal square ...
            s.lift(wrong)
            s.wait(0.30, 0.60)
            s.put(move.to_square, piece)  # ... and corrected with the same piece before the press
            return
        self.casual_move(s, board, move)

    def move(self, s: _Script, board: chess.Board, move: chess.Move, notes: _PlyNotes) -> None:
        if self.profile == "clean":
            self.clean_move(s, board, move)
        elif self.profile == "casual":
            self.casual_move(s, board, move)
        else:
            self.clumsy_move(s, board, move, notes)

    def press_delay(self, s: _Script) -> None:
        """The hand goes from the board to the clock: 0.3-2 s after the last change."""
        s.wait(0.30, 2.00)


# --- injections ------------------------------------------------------------------------


def _arbiter_correction(offender: chess.Color) -> Callable[[float, SimClock], Event]:
    """The arbiter undoes what an illegal press did to the clock (7.1, 6.10.2; rules-spec R21).

    The increment the press earned is taken back and the press is removed from the
    move counter; no time penalty is entered (that is the arbiter's call, G1).
    """

    def make(at: float, clock: SimClock) -> Event:
        times = {color: clock.remaining(color, at) for color in chess.COLORS}
        times[offender] = max(0.0, times[offender] - clock.last_bonus[offender])
        counts = {color: clock.presses(color) for color in chess.COLORS}
        counts[offender] = max(0, counts[offender] - 1)
        clock.correct(at, times[chess.WHITE], times[chess.BLACK], counts[chess.WHITE], counts[chess.BLACK])
        return SetClock(at=_stamp(at), white=times[chess.WHITE], black=times[chess.BLACK],
                        moves_white=counts[chess.WHITE], moves_black=counts[chess.BLACK])

    return make


def _inject(s: _Script, h: _Handler, injection: Injection, board: chess.Board, move: chess.Move, *,
            ply_index: int, remaining: float, notes: _PlyNotes) -> None:
    """Script the injected irregularity at this ply (without the reply; LATE_PRESS is handled by the caller).

    *remaining*: the mover's time on the clock when his turn began (long incidents leave him time to play on).
    *notes*: the ply's expected codes, for the handler's way of making a move scripted here (a piece touched
    first and put back, ``TOUCH_MOVE_SUSPECTED``).
    """
    rng = h.rng
    color = board.turn
    piece = board.piece_at(move.from_square)
    assert piece is not None
    kind = injection.kind
    if kind is InjectionKind.ROOK_FIRST:  # T05: rook on f1 for < T_settle, king lifted > T_scan after the rook
        king_from, king_to, rook_from, rook_to = _king_rook(board, move)
        if rook_to == king_from:  # Chess960: the rook's square is the king's; the rook held while the king moves
            s.lift(rook_from)
            s.wait(0.30, 0.43)
            s.lift(king_from)
            s.wait(0.20, 0.35)
            s.put(king_to, chess.Piece(chess.KING, color))
            s.wait(0.10, 0.30)
            s.put(rook_to, chess.Piece(chess.ROOK, color))
        else:
            s.lift(rook_from)
            s.wait(0.10, 0.15)
            s.put(rook_to, chess.Piece(chess.ROOK, color))
            s.wait(0.20, 0.28)
            s.lift(king_from)
            s.wait(0.20, 0.35)
            s.put(king_to, chess.Piece(chess.KING, color))
        h.press_delay(s)
        s.press(color)
    elif kind is InjectionKind.TWO_HANDS_CASTLING:  # T08
        king_from, king_to, rook_from, rook_to = _king_rook(board, move)
        s.lift(king_from)
        s.wait(0.02, 0.06)
        s.lift(rook_from)
        s.wait(0.30, 0.45)
        s.put(king_to, chess.Piece(chess.KING, color))
        s.wait(0.02, 0.06)
        s.put(rook_to, chess.Piece(chess.ROOK, color))
        h.press_delay(s)
        s.press(color)
    elif kind is InjectionKind.PAWN_NOT_REPLACED:  # T26, then the arbiter applies 7.5.2: the pawn becomes a queen
        victim = _victim_square(board, move)
        s.lift(move.from_square)
        if victim is not None:
            s.wait(0.30, 0.50)
            s.lift(victim)
        s.wait(0.30, 0.60)
        s.put(move.to_square, piece)
        h.press_delay(s)
        s.press(color)
        s.wait(3.0, 8.0)
        s.op(_Pause())
        s.wait(2.0, 4.0)
        s.lift(move.to_square)
        s.wait(0.5, 1.5)
        s.put(move.to_square, chess.Piece(chess.QUEEN, color))
        s.wait(2.0, 4.0)
        s.op(_Resume(not color))
    elif kind is InjectionKind.PRESS_NO_MOVE:  # T29; the arbiter restarts the presser's clock, then the move
        s.press(color)
        s.wait(3.0, 8.0)
        s.op(_Pause())
        s.wait(2.0, 4.0)
        s.op(_Command(_arbiter_correction(color)))
        s.wait(1.0, 2.0)
        s.op(_Resume(color))
        s.wait(2.0, 5.0)
        h.move(s, board, move, notes)
        h.press_delay(s)
        s.press(color)
    elif kind is InjectionKind.PRESS_PIECE_IN_HAND:  # T30
        s.lift(move.from_square)
        s.wait(0.30, 0.60)
        s.press(color)
        s.wait(0.80, 1.50)  # placed well after T_latency: on the opponent's time
        s.put(move.to_square, piece)
    elif kind is InjectionKind.ILLEGAL_MOVE:  # T34, then reinstatement (7.5.1) and the same piece moves (4.3)
        wrong = rng.choice(illegal_targets(board, move.from_square))
        s.lift(move.from_square)
        s.wait(0.30, 0.70)
        s.put(wrong, piece)
        h.press_delay(s)
        s.press(color)
        s.wait(3.0, 8.0)
        s.op(_Pause())
        s.wait(1.0, 2.0)
        s.op(_Command(lambda at, _clock: Reinstate(at=_stamp(at), ply=ply_index)))
        s.wait(1.0, 2.0)
        s.lift(wrong)
        s.wait(0.30, 0.60)
        s.put(move.from_square, piece)
        s.wait(1.0, 2.0)
        s.op(_Command(_arbiter_correction(color)))
        s.wait(1.0, 2.0)
        s.op(_Resume(color))
        s.wait(1.0, 3.0)
        h.clean_move(s, board, move)
        h.press_delay(s)
        s.press(color)
    elif kind is InjectionKind.KNOCK_NOT_RESTORED:  # T47b; the arbiter pauses, the piece is put back, resume
        knocked = rng.choice(knock_candidates(board, move))
        victim = _victim_square(board, move)
        s.lift(move.from_square)
        if victim is not None:
            s.wait(0.30, 0.60)
            s.lift(victim)
        s.wait(0.30, 0.60)
        s.lift(knocked)
        s.wait(0.04, 0.14)
        s.put(move.to_square, chess.Piece(move.promotion, color) if move.promotion else piece)
        h.press_delay(s)
        s.press(color)
        s.wait(3.0, 8.0)
        s.op(_Pause())
        s.wait(1.0, 2.0)
        s.put(knocked, board.piece_at(knocked))
        s.wait(1.0, 2.0)
        s.op(_Resume(not color))
    elif kind is InjectionKind.TOUCH_MOVE:  # T45
        touched = rng.choice(touch_candidates(board, move, movable=True))
        s.lift(touched)
        s.wait(0.50, 1.20)
        s.put(touched, board.piece_at(touched))
        s.wait(0.80, 1.50)
        h.clean_move(s, board, move)
        h.press_delay(s)
        s.press(color)
    elif kind is InjectionKind.LATE_PRESS:
        h.clean_move(s, board, move)  # no press: the caller lets the opponent reply first
    elif kind is InjectionKind.RELEASED_TAKEN_BACK:  # R07: another move released, taken back, the game's move
        candidates = released_candidates(board, move)
        same_piece = [m for m in candidates if m.from_square == move.from_square]
        first = rng.choice(same_piece if same_piece and h.chance(0.5) else candidates)
        script_released_taken_back(s, board, first, make=h.clean_move, t_settle=_T_SETTLE,
                                   think_high=min(60.0, 0.25 * remaining))
        h.clean_move(s, board, move)
        h.press_delay(s)
        s.press(color)
    elif kind is InjectionKind.RELEASED_CHANGED:  # R07: another move released, changed by hand into the game's
        candidates = changed_candidates(board, move)
        captures = [m for m in candidates if board.is_capture(m) or board.is_capture(move)]
        first = rng.choice(captures if captures and h.chance(0.7) else candidates)
        script_released_changed(s, board, first, move, make=h.clean_move, t_settle=_T_SETTLE)
        h.press_delay(s)
        s.press(color)
    else:  # pragma: no cover - exhaustive
        raise AssertionError(kind)


# --- the game --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimulatedGame:
    """The events of one simulated game and what they are meant to show.

    Attributes:
        events: the events, in time order, starting with ``NewGame`` and the start snapshot.
        moves: UCI of the game's moves (Chess960 castling as king-takes-rook), the record the
            engine must produce.
        expected_codes: ``(ply, code)`` of every irregularity the script deliberately caused
            (injections, clumsy changed minds); codes with a subtype as ``CODE/SUBTYPE``.
        allowed_info: info codes that may come along without being a defect.
        header: the event-log header (rules, game, and the simulator's parameters under ``"simulator"``).
        game: the game information of the ``NewGame`` command.
        profile: the handling profile.
        seed: the seed.
        injections: the injections.
        corrections: the arbiter's correction cycles.
        handled: ``(ply, label)`` of every Laws procedure played (``procedures=True``, corrections):
            ``960/swap``, ``capture/victim-first``, ``correction/illegal-capture paused reinstate-during
            times-clock restart-lever-in-pause``, ...
        result: the result the arbiter entered when an illegal move reached the limit, else None.
    """

    events: list[Event]
    moves: list[str]
    expected_codes: list[tuple[int, str]]
    allowed_info: frozenset[str]
    header: LogHeader
    game: GameInfo
    profile: str
    seed: int
    injections: tuple[Injection, ...]
    corrections: tuple[Correction, ...] = ()
    handled: tuple[tuple[int, str], ...] = ()
    result: str | None = None

    @property
    def codes(self) -> list[str]:
        """The expected codes without their plies."""
        return [code for _, code in self.expected_codes]


def _time_control_of(game: chess.pgn.Game | None, requested: str | None) -> str:
    if requested is not None:
        parse_time_control(requested)  # raises ValueError on a bad one
        return requested
    tag = game.headers.get("TimeControl") if game is not None else None
    if tag:
        try:
            periods = parse_time_control(tag)
        except ValueError:
            return DEFAULT_TIME_CONTROL
        # Engine matches ("10+0.05") cannot be played by hand: fall back to a human control.
        if periods.periods[0].seconds >= 60:
            return tag
    return DEFAULT_TIME_CONTROL


def _game_info(game: chess.pgn.Game, board: chess.Board, time_control: str, edition: int) -> GameInfo:
    headers = game.headers
    standard = not board.chess960 and board.fen() == chess.STARTING_FEN
    return GameInfo(
        id=f"{headers.get('Event', '?')} r{headers.get('Round', '?')}: {headers.get('White', '?')}-"
           f"{headers.get('Black', '?')}",
        white=headers.get("White", "?"), black=headers.get("Black", "?"), event=headers.get("Event", "?"),
        site=headers.get("Site", "?"), date=headers.get("Date", "????.??.??"), round=headers.get("Round", "?"),
        time_control=time_control, edition=edition, start_fen=None if standard else board.fen(),
        chess960=board.chess960,
    )


def _typical_think(t60_s: float) -> float:
    """Median think time: a third of the average time per move over 60 moves (T60, rules-spec 7.1)."""
    return min(60.0, max(0.8, t60_s / 60.0 / 3.0))


#: Without a clock, the earliest start of the opponent's reply after the last change of the move (seconds): the
#: engine's ``T_settle`` (a change standing that long is presumed released, rules-spec §3.4.1) and 50 ms.
NO_CLOCK_REPLY_FROM = 0.45

def simulate_game(
    game: chess.pgn.Game | None = None,
    *,
    seed: int,
    profile: str = "clean",
    injections: Sequence[Injection] = (),
    time_control: str | None = None,
    start_at: float = 0.0,
    edition: int = 2023,
    white_clock_side: ClockSide = ClockSide.LEFT,
    think_median: float | None = None,
    max_plies: int | None = None,
    corrections: Sequence[Correction] = (),
    procedures: bool = False,
    clock: bool = True,
    reply_from: float = NO_CLOCK_REPLY_FROM,
    moved_twice: int | None = None,
) -> SimulatedGame:
    """Simulate a game on an electronic board with a DGT-style clock (or, ``clock=False``, without one).

    Args:
        game: the game to play; ``None`` plays :func:`drivers.sim.random_game` of *seed*.
        seed: seeds every random choice (think times, handling variants, incidents).
        profile: one of :data:`PROFILES`.
        injections: irregularities to inject (at most one per ply).
        time_control: PGN TimeControl of the clock; default: the game's tag when it is a
            human control (base >= 60 s), else :data:`DEFAULT_TIME_CONTROL`.
        start_at: time of the ``NewGame`` command.
        edition: edition of the Laws written into the game information.
        white_clock_side: where White's time is on the sim_clock.
        think_median: median think time in seconds (default: from the time control). PGN
            ``[%emt]``/``[%clk]`` comments override it move by move.
        max_plies: play only this many plies of the game.
        corrections: the arbiter's correction cycles to play (:class:`drivers.sim.Correction`: an
            illegal move or a pawn not replaced at that ply, corrected, then the game's move); an
            illegal move that reaches the edition's limit ends the game there (the arbiter enters
            the result), and the record stops before it.
        procedures: draw from the Laws' whole repertoire (:mod:`drivers.sim._procedures`): every
            Chess960 castling method of F.3, one-hand captures at 150-300 ms, now and then a move
            released, taken back and made again before the press (:func:`_released_again`). False
            (the default) keeps the historical handling, event for event.
        clock: a clock is connected (the default). False: a game on the board alone (a casual club game,
            the clock link lost before the start; the event log's rules say ``clock_expected: false``): no
            clock reading, nobody presses, a move is completed by the player's next move (6.2.1.2), and the
            opponent starts his reply any time from *reply_from* seconds after the release. Only the injections
            of :data:`drivers.sim._inject.NO_CLOCK_KINDS` (the hands alone) and no correction cycles (the
            arbiter's clock handling) can be played.
        reply_from: without a clock, the earliest start of a reply after the last change of the move it answers
            (the floor is drawn between it and 1.5 s); the default, :data:`NO_CLOCK_REPLY_FROM`, is just past
            ``T_settle``. Lower values play the blitz race of a reply started before the board presumes the
            release (rules-spec §3.4.1, ``MadeMoves.replied_before_settled``).
        moved_twice: without a clock, the ply after which its player moves again before the reply (R13, seed 004
            exercise 17: a move on the opponent's turn, ``OUT_OF_TURN_CHANGE``): another piece of his, a quiet
            move (:func:`moved_twice_candidates`); the opponent calls the arbiter, who reinstates the position
            before it (7.6: ``Reinstate`` before or after the piece is put back), and the game goes on with the
            reply. The record is the game's.

    Returns:
        The events and what they should produce.

    Raises:
        SimulationError: unknown profile, an injection that does not fit its ply (e.g. rook-first
            at a move that is not a castling), two injections at one ply, a bad time control.
    """
    if profile not in PROFILES:
        raise SimulationError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    if game is None:
        from drivers.sim._games import random_game  # noqa: PLC0415 - avoids an import cycle

        game = random_game(seed)
    rng = random.Random(f"boardd-sim:{seed}:{profile}")
    try:
        tc = _time_control_of(game, time_control)
        sim_clock = SimClock(tc)
    except ValueError as exc:
        raise SimulationError(f"bad time control: {exc}") from None
    board = game.board()
    moves = list(game.mainline_moves())
    nodes = list(game.mainline())
    if max_plies is not None:
        moves = moves[:max_plies]
    by_ply: dict[int, Injection] = {}
    for wanted in sorted(injections, key=lambda i: i.ply):
        if wanted.ply in by_ply:
            raise SimulationError(f"two injections at ply {wanted.ply}")
        late = by_ply.get(wanted.ply - 1)
        if late is not None and late.kind is InjectionKind.LATE_PRESS:
            raise SimulationError(f"{wanted}: the ply after a late press is the reply, it cannot be injected")
        if wanted.ply > len(moves):
            raise SimulationError(f"{wanted}: the game has only {len(moves)} plies")
        by_ply[wanted.ply] = wanted
    cycles: dict[int, Correction] = {}
    for wanted_cycle in sorted(corrections, key=lambda c: c.ply):
        if wanted_cycle.ply in by_ply or wanted_cycle.ply in cycles:
            raise SimulationError(f"{wanted_cycle}: another injection or correction at ply {wanted_cycle.ply}")
        late = by_ply.get(wanted_cycle.ply - 1)
        if late is not None and late.kind is InjectionKind.LATE_PRESS:
            raise SimulationError(f"{wanted_cycle}: the ply after a late press is the reply, it cannot be corrected")
        if wanted_cycle.ply > len(moves):
            raise SimulationError(f"{wanted_cycle}: the game has only {len(moves)} plies")
        cycles[wanted_cycle.ply] = wanted_cycle
    if moved_twice is not None and (clock or moved_twice in by_ply or moved_twice + 1 in by_ply
                                    or not 1 <= moved_twice < len(moves)):
        raise SimulationError(f"moved twice after ply {moved_twice}: without a clock, at a ply without an "
                              "injection and with a reply after it")
    if not clock:
        needs_clock = [str(i) for i in injections if i.kind not in NO_CLOCK_KINDS] + [str(c) for c in corrections]
        if needs_clock:
            raise SimulationError(f"{', '.join(needs_clock)}: not played without a clock (a press or the arbiter's "
                                  "clock handling)")
    illegal_counts = {chess.WHITE: 0, chess.BLACK: 0}
    category = category_of(sim_clock.time_control, edition)
    entered_result: str | None = None
    played = len(moves)
    labels: list[tuple[int, str]] = []

    info = _game_info(game, board, tc, edition)
    rules = RulesConfig(white_clock_side=white_clock_side) if clock else RulesConfig(
        white_clock_side=white_clock_side, clock_expected=False)
    timeline = _Timeline(rng=rng, clock=sim_clock, white_side=white_clock_side, model="dgt3000", connected=clock)
    handler = _Handler(rng, profile, procedures=procedures)
    median = think_median if think_median is not None else _typical_think(sim_clock.time_control.t60_s)
    expected: list[tuple[int, str]] = []

    # Set-up: the new game, the start position, the clock set and then started for the side to move.
    timeline.now = start_at
    timeline.events.append(NewGame(at=start_at, game=info))
    snapshot = BoardSnapshot.from_board(board, at=start_at + 0.05)
    timeline.physical = list(snapshot.squares)
    timeline.events.append(snapshot)
    timeline.lever = board.turn
    timeline.advance(start_at + 0.3)
    if clock:
        timeline.events.append(timeline.reading(start_at + 0.3))
    turn_start = start_at + 1.0 + rng.uniform(0.0, 1.0)
    timeline.resume(turn_start, board.turn)
    busy_until = turn_start  # the previous script's last operation (an arbiter may act after a press)

    late_pending: chess.Color | None = None  # a player who has not pressed yet (LATE_PRESS)
    for index, move in enumerate(moves):
        ply = index + 1
        if move not in board.legal_moves:
            raise SimulationError(f"ply {ply}: {move.uci()} is not legal in {board.fen()}")
        color = board.turn
        injection = by_ply.get(ply)
        if injection is not None and not applicable(injection.kind, board, move, has_next=ply < len(moves)):
            raise SimulationError(f"{injection} does not fit ply {ply} ({board.san(move)})")
        notes = _PlyNotes()
        script = _Script(rng)
        ends_game = False
        cycle = cycles.get(ply)
        no_replacement = False
        if injection is not None:
            _inject(script, handler, injection, board, move, ply_index=index,
                    remaining=sim_clock.remaining(color, turn_start), notes=notes)
            notes.codes.extend(expected_codes(injection, edition, clock=clock))
            if injection.kind in _ILLEGAL_CLASS or (edition >= 2018 and injection.kind in _ILLEGAL_CLASS_2018):
                illegal_counts[color] += 1
        elif cycle is not None:
            if not correction_applicable(cycle.kind, board, move):
                raise SimulationError(f"{cycle} does not fit ply {ply} ({board.san(move)})")
            counted = correction_counts(cycle.kind)
            illegal_counts[color] += counted
            final = counted and illegal_counts[color] >= illegal_move_limit(edition)
            board.push(move)
            ends_game = ply == len(moves) and board.is_game_over(claim_draw=False)
            board.pop()
            way = handler.clean_move if profile == "clean" else handler.casual_move

            def replacement(s: _Script, board: chess.Board = board, move: chess.Move = move,
                            way: Callable[[_Script, chess.Board, chess.Move], None] = way) -> None:
                way(s, board, move)
            outcome = script_correction(
                script, kind=cycle.kind, board=board, move=move, ply_index=index, edition=edition,
                penalty=penalty_seconds(edition, category), final=final, replacement=replacement,
                press_replacement=not ends_game, press_delay=handler.press_delay)
            handler.labels.insert(0, outcome.label)
            notes.codes.extend(correction_codes(cycle.kind))
            no_replacement = outcome.result is not None or outcome.exchanged
            entered_result = outcome.result
        else:
            handler.move(script, board, move, notes)
            board.push(move)
            # A last move that ends the game (mate, stalemate, ...) is complete without a press (6.2.1.1).
            # Earlier "ends" (a fivefold repetition in a game played before 2014) were played on: press.
            ends_game = ply == len(moves) and board.is_game_over(claim_draw=False)
            board.pop()
            if not ends_game and clock:
                handler.press_delay(script)
                script.press(color)
            if (procedures and not ends_game and not notes.codes and late_pending is None
                    and ply - 1 not in by_ply and ply - 1 not in cycles and moved_twice not in (ply, ply - 1)):
                script = _released_again(script, board, move, seed=seed, profile=profile, ply=ply,
                                         remaining=sim_clock.remaining(color, turn_start), labels=handler.labels)
        if late_pending is not None:
            # The previous mover presses late, once this reply is made (T48), then this player presses.
            script.ops = [op for op in script.ops if not isinstance(op[1], _Press)]
            script.wait(0.60, 1.20)
            script.press(late_pending)
            if not ends_game:
                script.wait(0.50, 1.50)
                script.press(color)
            late_pending = None
        if injection is not None and injection.kind is InjectionKind.LATE_PRESS:
            late_pending = color
        if not clock:  # nobody presses: the move is completed by the player's next one (6.2.1.2)
            script.ops = [op for op in script.ops if not isinstance(op[1], _Press)]
        if ply == moved_twice:
            second = _moved_again(script, board, move, ply)
            notes.codes.append("OUT_OF_TURN_CHANGE")
            handler.labels.append(f"moved-twice/{second.uci()}")

        # Think time: the PGN's clock data when present, else a seeded draw; never into the last seconds.
        handling = script.ops[-1][0] if script.ops else 0.0
        remaining = sim_clock.remaining(color, turn_start)
        node = nodes[index]
        emt, clk = node.emt(), node.clock()
        if emt is not None:  # [%emt]: the time the move took
            desired: float | None = emt
        elif clk is not None:  # [%clk]: the time left after the move (the bonus included)
            desired = remaining - clk + sim_clock.time_control.bonus_s
        else:
            desired = None
        if cycle is not None and cycle.seconds_left is not None:  # thinks until only seconds are left
            think = max(1.0, remaining - cycle.seconds_left)
        elif desired is None:
            think = min(rng.lognormvariate(math.log(median), 0.8), 0.25 * remaining)
        else:
            think = min(desired - handling, remaining - handling - 1.0)
        # Nobody touches a piece within a second of the opponent's press: the reading showing the press
        # comes up to 300 ms after it, and board changes inside T_latency of it belong to the press (3.5).
        # Without a clock the opponent may start as soon as the move is made, when the piece is released
        # (1.3, 4.7): here from *reply_from* after the last change of the move.
        think = max(1.0, think) if clock else max(rng.uniform(reply_from, max(reply_from, 1.5)), think)
        move_start = max(turn_start + think, busy_until + (0.5 if clock else 0.0))

        # Sensor flicker while the player thinks (casual, clumsy): away from every other change (T44).
        if profile != "clean" and think > 2.0 and handler.chance(0.12):
            quiet_from = max(turn_start, busy_until)
            if move_start - quiet_from > 2.0:
                _flicker(timeline, rng, board, move, quiet_from + rng.uniform(0.8, move_start - quiet_from - 0.8))

        last = timeline.run(move_start, script)
        expected.extend((ply, code) for code in notes.codes)
        labels.extend((ply, label) for label in handler.labels)
        handler.labels.clear()
        if entered_result is not None:  # the illegal move that loses: the game ends before this ply's move
            played = index
            break
        board.push(move)
        presses = [offset for offset, op in script.ops if isinstance(op, _Press)]
        turn_start = move_start + presses[-1] if presses and late_pending is None and not no_replacement else last
        if not clock:  # the time used, as the engine's model counts it: switched when the move is made
            timeline.press(last, color)
        busy_until = last
        _check_physical(timeline, board, ply)

    # The end: a board-decided end needs no press; otherwise the players stop the clock and the
    # arbiter enters the result of the PGN.
    end = timeline.now + rng.uniform(3.0, 8.0)
    if entered_result is None and clock:
        timeline.pause(end)
    result = game.headers.get("Result", "*")
    if entered_result is None and not board.is_game_over(claim_draw=False) and result in (
            "1-0", "0-1", "1/2-1/2") and (max_plies is None or max_plies >= len(nodes)):
        entered = end + rng.uniform(5.0, 15.0)
        timeline.command(entered, SetResult(at=_stamp(entered), result=result))
    timeline.advance(timeline.now + 0.5)

    replay_board = game.board()
    uci_moves = []
    for move in moves[:played]:
        uci_moves.append(replay_board.uci(move))
        replay_board.push(move)
    simulator: dict[str, object] = {
        "seed": seed, "profile": profile, "injections": [str(i) for i in injections],
        "moves": uci_moves, "expected_codes": [[ply, code] for ply, code in expected],
    }
    if procedures or corrections:  # absent otherwise: historical event logs stay byte-identical
        simulator.update(procedures=procedures, corrections=[str(c) for c in corrections],
                         handled=[[ply, label] for ply, label in labels], result=entered_result)
    if not clock:
        simulator["clock"] = False
    if moved_twice is not None:
        simulator["moved_twice"] = moved_twice
    header = LogHeader(rules=rules, game=info, extra={"simulator": simulator})
    return SimulatedGame(events=timeline.events, moves=uci_moves, expected_codes=expected,
                         allowed_info=INFO_CODES, header=header, game=info, profile=profile, seed=seed,
                         injections=tuple(injections), corrections=tuple(corrections), handled=tuple(labels),
                         result=entered_result)


def moved_twice_candidates(board: chess.Board, move: chess.Move) -> list[chess.Move]:
    """The quiet moves the player of *move* (played from *board*) could make again before the reply: another
    piece than the one he has just moved (that would be his released move changed, R07), no capture, castling,
    promotion or check, never to a position the game has had (that would be a takeback, R29), the opponent not
    in check after *move*."""
    after = board.copy()
    after.push(move)
    if after.is_check() or after.is_game_over(claim_draw=False):
        return []
    seen = set()
    history = after.copy()
    while True:
        seen.add(history.board_fen())
        if not history.move_stack:
            break
        history.pop()
    other = after.copy(stack=False)
    other.turn = board.turn
    other.ep_square = None
    candidates = []
    for second in other.legal_moves:
        if second.from_square == move.to_square or other.is_capture(second) or other.is_castling(second) \
                or second.promotion is not None or other.gives_check(second):
            continue
        other.push(second)
        fen = other.board_fen()
        other.pop()
        if fen not in seen:
            candidates.append(second)
    return candidates


def _moved_again(s: _Script, board: chess.Board, move: chess.Move, ply: int) -> chess.Move:
    """After *move* stands (released, the opponent thinking), its player moves another piece; the opponent calls
    the arbiter, who reinstates the position after *move* (7.6), before or after the piece is put back."""
    candidates = moved_twice_candidates(board, move)
    if not candidates:
        raise SimulationError(f"moved twice after ply {ply}: no quiet second move fits")
    second = s.rng.choice(sorted(candidates, key=lambda m: m.uci()))
    piece = board.piece_at(second.from_square)
    s.wait(_T_SETTLE + 0.6, 4.0)
    s.lift(second.from_square)
    s.wait(0.25, 0.70)
    s.put(second.to_square, piece)
    s.wait(1.5, 5.0)  # the opponent objects; the arbiter comes
    arbiter_first = s.rng.random() < 0.5
    if arbiter_first:
        s.op(_Command(lambda at, _clock: Reinstate(at=_stamp(at), ply=ply)))
        s.wait(1.0, 2.0)
    s.lift(second.to_square)
    s.wait(0.30, 0.60)
    s.put(second.from_square, piece)
    if not arbiter_first:
        s.wait(1.0, 2.0)
        s.op(_Command(lambda at, _clock: Reinstate(at=_stamp(at), ply=ply)))
    s.wait(0.5, 1.5)
    return second


#: How often (per ply) the benign takeback of :func:`_released_again` is played with ``procedures=True``.
RELEASED_AGAIN_RATE = 0.01


def _released_again(script: _Script, board: chess.Board, move: chess.Move, *, seed: int, profile: str, ply: int,
                    remaining: float, labels: list[str]) -> _Script:
    """Sometimes (:data:`RELEASED_AGAIN_RATE`) the game's move made and released first, taken back by hand
    before the press, and after some thought the same move made again and pressed (R07: nothing to flag).

    Drawn from a generator of its own (seed, profile, ply): the simulator's draws stay those of the historical
    handling, so a game in which it is never played is the same game event for event. Returns *script*, or
    the procedure followed by *script* (its times shifted).
    """
    rng = random.Random(f"boardd-sim-released-again:{seed}:{profile}:{ply}")
    if rng.random() >= RELEASED_AGAIN_RATE:
        return script
    combined = _Script(rng)
    script_released_taken_back(combined, board, move, make=_Handler(rng, profile, procedures=True).clean_move,
                               t_settle=_T_SETTLE, think_high=min(60.0, 0.25 * remaining))
    shift = combined.t
    combined.ops.extend((at + shift, op) for at, op in script.ops)
    combined.t = shift + script.t
    combined.rng = script.rng  # any later draw of the ply is the simulator's own, as without the procedure
    labels.append("undo/same-again")
    return combined


#: How long a change must stand to be settled (the engine's default ``T_settle``): a move released.
_T_SETTLE = RulesConfig().timing.t_settle

#: Injections of the illegal-move class in every edition, and from E2018 (rules-spec 6.2).
_ILLEGAL_CLASS = frozenset({InjectionKind.ILLEGAL_MOVE, InjectionKind.PAWN_NOT_REPLACED})
_ILLEGAL_CLASS_2018 = frozenset({InjectionKind.PRESS_NO_MOVE, InjectionKind.PRESS_PIECE_IN_HAND})


def _flicker(timeline: _Timeline, rng: random.Random, board: chess.Board, move: chess.Move, at: float) -> None:
    """One square's reading reverts within a scan: a dropout, or a misread piece type (T44)."""
    involved = {move.from_square, move.to_square}
    squares = [sq for sq in chess.SquareSet(board.occupied) if sq not in involved]
    if not squares:
        return
    square = rng.choice(squares)
    piece = board.piece_at(square)
    assert piece is not None
    if rng.random() < 0.5:
        glitch: Content = None
    else:
        glitch = chess.Piece(rng.choice([t for t in (chess.KNIGHT, chess.BISHOP, chess.ROOK) if t != piece.piece_type]),
                             piece.color)
    timeline.square(at, square, glitch)
    timeline.square(at + rng.uniform(0.04, 0.20), square, piece)


def _check_physical(timeline: _Timeline, board: chess.Board, ply: int) -> None:
    expected = board.piece_map()
    physical = {sq: content for sq, content in enumerate(timeline.physical) if content is not None}
    if physical != expected:
        diff = [chess.square_name(sq) for sq in chess.SQUARES if physical.get(sq) != expected.get(sq)]
        raise AssertionError(f"simulator bug: physical board differs after ply {ply} on {diff}")
