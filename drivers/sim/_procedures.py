"""The Laws' physical procedures, played as a person would: Chess960 castling, one-hand captures, corrections.

Everything here is written from the Laws (``../shared/seeds``, ``rules-spec.md`` R01, R16,
R17, R21, R27), not from what the engine expects, and every choice (method, order,
timing) is drawn from the simulator's seeded random generator:

* :class:`Castling960` -- the four castling methods of the 2009/2014 Laws' appendix F.3 b
  (double move, transposition, king only, rook only) plus the recommended procedure of
  the F.3 "Recommendation" (king off the board beside its final square, rook moved, king
  placed) and the king held in the hand while the same hand moves the rook;
* :class:`CaptureStyle` -- a one-hand capture: victim first and the capturer 150-300 ms
  later, possibly far away (the common way), or capturer first and the victim as quickly;
* :class:`Correction` -- the arbiter's correction cycle of 7.5.1 / 7.5.2 (E2009 7.4 a,
  E2014 7.5 a) after a completed illegal move or a pawn not replaced: the clock paused or
  left running, the pieces put back in a random valid order (a captured piece comes back
  from beside the board, a promoted piece is swapped back for the pawn), the times
  corrected (penalty to the opponent per edition and category, the increment earned by
  the illegal press taken back) on the clock itself, from the tablet, both or neither
  (7.1: "leaving them unchanged"), the clock restarted with the offender's side running
  (the lever turned while paused, the lever pressed at the restart, or set-and-run), the
  tablet's ``Reinstate`` before, during, after the restoration or after the restart (or
  never), then the offender's replacement move with the piece touched in the illegal move
  (4.3 via 7.5.1) and his press. A further illegal move that reaches the limit of the
  edition (E2009: the third, E2014+: the second) ends the game: the arbiter enters the loss
  (or a draw if the opponent cannot mate, 7.5.5).

:class:`_Script` operations are relative to the start of the ply; see :mod:`drivers.sim._core`.
"""

from __future__ import annotations

import enum
import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import chess

from boardd.core.events import Content, Event, Reinstate, SetClock, SetResult
from drivers.sim._clock import SimClock
from drivers.sim._inject import _geometry_ok, _king_rook, illegal_targets
from drivers.sim._script import _Call, _Command, _Pause, _Press, _Resume, _Script, _stamp, _victim_square

if TYPE_CHECKING:
    from boardd.core.clock import TimeControl

__all__ = ["CaptureStyle", "Castling960", "Correction", "CorrectionKind", "CycleResult", "castling960_methods",
           "category_of", "correction_applicable", "correction_codes", "correction_counts",
           "illegal_castlings", "illegal_move_limit", "penalty_seconds",
           "script_released_changed", "script_released_taken_back", "takeback_order"]


# --- Chess960 castling ----------------------------------------------------------------


class Castling960(enum.StrEnum):
    """How a Chess960 castling is carried out on a physical board (Laws 2009/2014 F.3)."""

    #: F.3 Recommendation 1: king off the board beside its final square, rook moved, king placed.
    KING_OFF_BOARD = "king-off-board"
    #: The king held in the hand while the same hand moves the rook (both in the air), put down in either order.
    #: The king is touched first (4.4.1; the rook first is the 4.4.2 case: the ``rook-first`` injection).
    KING_IN_HAND = "king-in-hand"
    #: F.3 b.1 double move: a king move followed by a rook move.
    DOUBLE_MOVE = "double-move"
    #: F.3 b.1 taken to the letter: the king move made and released on its castling square (standing 0.5-1.5 s,
    #: longer than the release time), then the rook move. Where the king's step is a legal king move of its own
    #: the castling carries the order note (CHESS960_CASTLING_ORDER, rules-spec R27: the arbiter checks the
    #: intention); the king is touched first (4.4.1).
    DOUBLE_MOVE_RELEASED = "double-move-released"
    #: F.3 b.2 transposition: king and rook swap squares (both in the air at once): the king lifted first, or the
    #: two neighbours grasped together (inside one scan, either reported first: order unknown, 4.4.1).
    SWAP = "swap"
    #: F.3 b.3 king move only (the rook already stands on its final square).
    KING_ONLY = "king-only"
    #: F.3 b.4 rook move only (the king already stands on its final square).
    ROOK_ONLY = "rook-only"
    #: "King takes rook": the way the DGT e-board software and chess GUIs take a Chess960 castling, carried to the
    #: board by players used to it: the king lifted, the rook taken off by the same hand as in a capture, the king
    #: put down on the rook's square for a moment or a while, then king and rook put on their final squares in
    #: either order (the king stays where the rook's square is its final square). The rook taken first is the
    #: 4.4.2 case (the ``rook-first`` injection).
    KING_ON_ROOK = "king-on-rook"
    #: King and rook side by side (both moving, not an exact swap) grasped together by one hand: their lifts inside
    #: one scan, either reported first (order unknown: touched together, 4.4.1), then put down in either order.
    GRASPED_TOGETHER = "grasped-together"
    #: Rook-only castling (F.3 b.4, the king already on its final square) with the king touched first to show the
    #: castling (lifted and put back on its square, 0.3-0.9 s: longer than a flicker), then the rook: the king
    #: first (4.4.1); the rook first is this castling's normal way (rules-spec R27) anyway.
    KING_TOUCHED_ROOK_ONLY = "king-touched-rook-only"


def castling960_methods(board: chess.Board, move: chess.Move) -> list[Castling960]:
    """The methods physically possible for the Chess960 castling *move* from *board*."""
    king_from, king_to, rook_from, rook_to = _king_rook(board, move)
    if king_from == king_to:  # rook only; the king may still be lifted and put back
        return [Castling960.ROOK_ONLY, Castling960.KING_OFF_BOARD, Castling960.KING_TOUCHED_ROOK_ONLY]
    if rook_from == rook_to:  # king only; "off the board" then placed is the same with a pause
        return [Castling960.KING_ONLY, Castling960.KING_OFF_BOARD, Castling960.KING_ON_ROOK]
    methods = [Castling960.KING_OFF_BOARD, Castling960.KING_IN_HAND, Castling960.KING_ON_ROOK]
    if king_to != rook_from:
        methods += [Castling960.DOUBLE_MOVE, Castling960.DOUBLE_MOVE_RELEASED]
    if king_to == rook_from and rook_to == king_from:
        methods.append(Castling960.SWAP)
    elif chess.square_distance(king_from, rook_from) == 1:
        methods.append(Castling960.GRASPED_TOGETHER)
    return methods


def script_castling960(s: _Script, board: chess.Board, move: chess.Move, method: Castling960) -> None:
    """Script the castling *move* by *method* (which must be one of :func:`castling960_methods`)."""
    king_from, king_to, rook_from, rook_to = _king_rook(board, move)
    king = chess.Piece(chess.KING, board.turn)
    rook = chess.Piece(chess.ROOK, board.turn)
    rng = s.rng
    if method is Castling960.KING_OFF_BOARD:
        s.lift(king_from)
        s.wait(0.40, 1.20)  # the king is put down beside the board, next to its final square
        if rook_from != rook_to:
            s.lift(rook_from)
            s.wait(0.25, 0.60)
            s.put(rook_to, rook)
            s.wait(0.30, 0.90)
        s.put(king_to, king)
    elif method is Castling960.KING_IN_HAND:
        # The king stays in the hand that fetches the rook, however far, and the two are put down in either
        # order: each destination is free once both are in the air. The king first (4.4.1): the rook touched
        # first is the rook-first injection (4.4.2, which rules-spec R27 carries over); the order draw is kept so
        # that the random stream stays as it was.
        rng.random()
        s.lift(king_from)
        s.wait(0.05, 0.30)
        s.lift(rook_from)
        s.wait(0.25, 0.60)
        placements = [(rook_to, rook), (king_to, king)]
        if rng.random() < 0.4:
            placements.reverse()
        s.put(*placements[0])
        s.wait(0.10, 0.50)
        s.put(*placements[1])
    elif method is Castling960.DOUBLE_MOVE:
        s.lift(king_from)
        s.wait(0.20, 0.60)
        s.put(king_to, king)
        s.wait(0.20, 0.70)
        s.lift(rook_from)
        s.wait(0.20, 0.60)
        s.put(rook_to, rook)
    elif method is Castling960.DOUBLE_MOVE_RELEASED:
        s.lift(king_from)
        s.wait(0.20, 0.60)
        s.put(king_to, king)
        s.wait(0.50, 1.50)  # the king released on its square (over the release time), then the hand goes to the rook
        s.lift(rook_from)
        s.wait(0.20, 0.60)
        s.put(rook_to, rook)
    elif method is Castling960.SWAP:
        first, second = (king_from, rook_from) if rng.random() < 0.5 else (rook_from, king_from)
        s.lift(first)
        if first == king_from:
            s.wait(0.05, 0.50)
        else:  # the neighbours grasped together: inside one scan, the rook reported first (order unknown, 4.4.1)
            s.wait(0.02, 0.20)
        s.lift(second)
        s.wait(0.20, 0.60)
        placements = [(king_to, king), (rook_to, rook)]
        rng.shuffle(placements)
        s.put(*placements[0])
        s.wait(0.05, 0.50)
        s.put(*placements[1])
    elif method is Castling960.KING_ON_ROOK:
        rng.random()  # (the order draw kept, the random stream as it was: the king first, 4.4.1)
        s.lift(king_from)
        s.wait(0.15, 0.30)  # one hand, as in a capture
        s.lift(rook_from)
        s.wait(0.25, 0.60)
        s.put(rook_from, king)
        s.wait(0.05, 1.50)  # a moment, or a while as a GUI user waits for the software
        if king_to != rook_from:
            s.lift(rook_from)
            s.wait(0.20, 0.50)
            placements = [(king_to, king), (rook_to, rook)]
            if rng.random() < 0.5:
                placements.reverse()
            s.put(*placements[0])
            s.wait(0.10, 0.50)
            s.put(*placements[1])
        else:
            s.wait(0.10, 0.40)
            s.put(rook_to, rook)
    elif method is Castling960.KING_ONLY:
        s.lift(king_from)
        s.wait(0.25, 0.70)
        s.put(king_to, king)
    elif method is Castling960.GRASPED_TOGETHER:
        first, second = (king_from, rook_from) if rng.random() < 0.5 else (rook_from, king_from)
        s.lift(first)
        s.wait(0.02, 0.20)  # one hand round both: inside one scan, either reported first
        s.lift(second)
        s.wait(0.20, 0.60)
        placements = [(king_to, king), (rook_to, rook)]  # (both free: the castling's squares are empty, II.3.2.7.4)
        rng.shuffle(placements)
        s.put(*placements[0])
        s.wait(0.05, 0.50)
        s.put(*placements[1])
    elif method is Castling960.KING_TOUCHED_ROOK_ONLY:
        s.lift(king_from)
        s.wait(0.30, 0.90)
        s.put(king_from, king)
        s.wait(0.20, 0.80)
        s.lift(rook_from)
        s.wait(0.25, 0.70)
        s.put(rook_to, rook)
    else:  # ROOK_ONLY: the rook passes the king
        s.lift(rook_from)
        s.wait(0.25, 0.70)
        s.put(rook_to, rook)


# --- one-hand captures ------------------------------------------------------------------


class CaptureStyle(enum.StrEnum):
    """A capture made with one hand (R01: a captured piece and its capturer are never two-hands evidence)."""

    #: The victim lifted first, the capturer 150-300 ms later wherever it stands (the common way).
    VICTIM_FIRST = "victim-first"
    #: The capturer lifted first, the victim taken off 150-300 ms later by the same hand.
    CAPTURER_FIRST = "capturer-first"


def script_one_hand_capture(s: _Script, board: chess.Board, move: chess.Move, style: CaptureStyle) -> None:
    """Script a capture (en passant included; no promotion) in *style*."""
    victim = _victim_square(board, move)
    assert victim is not None and move.promotion is None
    piece = board.piece_at(move.from_square)
    if style is CaptureStyle.VICTIM_FIRST:
        s.lift(victim)
        s.wait(0.15, 0.30)
        s.lift(move.from_square)
    else:
        s.lift(move.from_square)
        s.wait(0.15, 0.30)
        s.lift(victim)
    s.wait(0.25, 0.70)
    s.put(move.to_square, piece)


def _illegal_action(s: _Script, from_square: int, to_square: int, *, placed: chess.Piece, victim: int | None) -> None:
    """One hand makes the (illegal) move from→to, placing *placed*, taking *victim* off first or second."""
    if victim is not None and s.rng.random() < 0.6:
        s.lift(victim)
        s.wait(0.15, 0.30)
        s.lift(from_square)
    else:
        s.lift(from_square)
        if victim is not None:
            s.wait(0.15, 0.30)
            s.lift(victim)
    s.wait(0.30, 0.80)
    s.put(to_square, placed)


# --- the arbiter's correction cycle ------------------------------------------------------


class CorrectionKind(enum.StrEnum):
    """The completed irregularity the arbiter corrects (the incident of the cycle)."""

    #: The game's moving piece released on an empty square it cannot reach, the clock pressed (7.5.1).
    ILLEGAL_GEOMETRY = "illegal-geometry"
    #: The game's moving piece captures an opponent's piece it cannot reach, the clock pressed (7.5.1).
    ILLEGAL_CAPTURE = "illegal-capture"
    #: The game's moving piece makes a move that leaves or puts its king in check (3.9 / 7.5.1).
    ILLEGAL_SELF_CHECK = "illegal-self-check"
    #: The pawn left on the last rank and the clock pressed (7.5.2; E2009: 7.4 a, reinstated).
    PAWN_NOT_REPLACED = "pawn-not-replaced"
    #: The pawn promoted to a piece of the opponent's colour (3.7.5.1: of the same colour), the clock
    #: pressed; the arbiter swaps the piece back for the pawn and the promotion is made again (7.5.1).
    ILLEGAL_PROMOTION_PIECE = "illegal-promotion-piece"
    #: Castling begun with the king (released on its castling square), the rook not moved, the clock
    #: pressed (CASTLING_INCOMPLETE_AT_PRESS); reinstated, the castling is then made (4.7.2).
    CASTLING_INCOMPLETE = "castling-incomplete"
    #: En passant with the captured pawn left on the board, the clock pressed
    #: (EN_PASSANT_INCOMPLETE_AT_PRESS); reinstated, the pawn then captures en passant.
    EN_PASSANT_INCOMPLETE = "en-passant-incomplete"
    #: A castling that is illegal (the right lost, the king in check, a square the king crosses or lands on
    #: attacked), the king touched first (or king and rook together), the clock pressed
    #: (ILLEGAL_MOVE/CASTLING_ILLEGAL); reinstated, the king must make another legal move (E2009/E2014 4.4 c,
    #: E2018+ 4.4.3, 4.7.2), castling with the other rook among them: the game's king move. Chess960 too (F.3 /
    #: Guidelines II.3); never the rook-only way (the rook touched first binds the rook, 4.3).
    CASTLING_ILLEGAL = "castling-illegal"
    #: The promotion piece exchanged: the game's piece put on the promotion square (the pawn off) and released,
    #: then exchanged for another piece, the clock pressed (PROMOTION_CHOICE_CHANGED: the choice is final when
    #: the piece touched the square, E2009/E2014 4.4 d, E2018+ 4.4.4). The arbiter puts the first piece back
    #: (an Article 4 breach: no time penalty, no illegal move counted); the promotion stands with it.
    PROMOTION_CHOICE_CHANGED = "promotion-choice-changed"


@dataclass(frozen=True, slots=True)
class Correction:
    """A correction cycle of *kind* at *ply* (1-based): the offender's illegal move there, then the game's move.

    ``seconds_left``: the offender thinks until only this many seconds are left on his clock before he
    starts the illegal move (at least 12: the cycle's own handling must not lose on time).
    """

    kind: CorrectionKind
    ply: int
    seconds_left: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", CorrectionKind(self.kind))
        if not isinstance(self.ply, int) or self.ply < 1:
            raise ValueError(f"correction ply must be >= 1, got {self.ply!r}")
        if self.seconds_left is not None and self.seconds_left < 12:
            raise ValueError(f"seconds_left must be >= 12, got {self.seconds_left!r}")

    @classmethod
    def parse(cls, text: str) -> Correction:
        """Parse ``KIND@PLY`` (``"illegal-capture@14"``).

        Raises:
            ValueError: malformed text or unknown kind.
        """
        kind, sep, ply = text.partition("@")
        try:
            if not sep:
                raise ValueError(text)
            return cls(CorrectionKind(kind.strip()), int(ply))
        except ValueError:
            known = ", ".join(k.value for k in CorrectionKind)
            raise ValueError(f"bad correction {text!r} (kinds: {known}; ply is a positive integer)") from None

    def __str__(self) -> str:
        left = f" ({self.seconds_left:.0f} s left)" if self.seconds_left is not None else ""
        return f"{self.kind.value}@{self.ply}{left}"


def _capture_targets(board: chess.Board, from_square: int) -> list[int]:
    """Opponent pieces (not the king) within three squares that the piece on *from_square* cannot reach."""
    piece = board.piece_at(from_square)
    if piece is None:
        return []
    targets = []
    for square in chess.SquareSet(board.occupied_co[not piece.color]):
        if board.piece_type_at(square) == chess.KING or chess.square_distance(square, from_square) > 3:
            continue
        if piece.piece_type == chess.PAWN and chess.square_rank(square) in (0, 7):
            continue
        if piece.piece_type == chess.KING and chess.square_distance(square, from_square) <= 2:
            continue  # king shapes of two squares are castling-like
        if not _geometry_ok(piece, from_square, square):
            targets.append(square)
    return targets


def _self_check_moves(board: chess.Board, from_square: int) -> list[chess.Move]:
    """Pseudo-legal moves of the piece on *from_square* that leave or put its own king in check."""
    return [m for m in board.generate_pseudo_legal_moves(chess.BB_SQUARES[from_square])
            if not board.is_castling(m) and not board.is_legal(m)]


def illegal_castlings(board: chess.Board) -> list[chess.Move]:
    """The castlings a hand can make on *board* that the Laws forbid: the king on its square of the start
    position, a rook of the start position on its square of the same rank, every square the two pass or land on
    empty but for them (F.3 / II.3), and no legal castling with that rook (the right lost, the king in check, a
    square it crosses or lands on attacked). King-takes-rook encoding (``e1h1``); the king moves (a rook-only
    castling binds the rook, 4.3), and a one-square king step only with the rook moving too."""
    color = board.turn
    root = board.root()
    king = board.king(color)
    if king is None or root.king(color) != king or chess.square_rank(king) != (0 if color == chess.WHITE else 7):
        return []
    legal_rooks = {_king_rook(board, m)[2] for m in board.legal_moves if board.is_castling(m)}
    out = []
    for rook in sorted(root.pieces(chess.ROOK, color)):
        if chess.square_rank(rook) != chess.square_rank(king) or rook in legal_rooks \
                or board.piece_at(rook) != chess.Piece(chess.ROOK, color):
            continue
        move = chess.Move(king, rook)
        king_from, king_to, rook_from, rook_to = _king_rook(board, move)
        if king_from == king_to or (rook_from == rook_to and chess.square_distance(king_from, king_to) < 2):
            continue
        path: set[int] = set()
        for a, b in ((king_from, king_to), (rook_from, rook_to)):
            path |= set(range(min(a, b), max(a, b) + 1))
        if any(board.piece_at(sq) is not None for sq in path - {king_from, rook_from}):
            continue
        out.append(move)
    return out


def correction_applicable(kind: CorrectionKind, board: chess.Board, move: chess.Move) -> bool:
    """Whether *kind* can precede the game's *move* from *board* (the illegal move uses the move's piece)."""
    if kind is CorrectionKind.CASTLING_ILLEGAL:  # the replacement: another king move (4.4.3)
        return board.piece_type_at(move.from_square) == chess.KING and bool(illegal_castlings(board))
    if kind is CorrectionKind.PROMOTION_CHOICE_CHANGED:
        return move.promotion is not None
    if kind is CorrectionKind.PAWN_NOT_REPLACED:
        return move.promotion == chess.QUEEN
    if kind is CorrectionKind.ILLEGAL_PROMOTION_PIECE:
        return move.promotion is not None
    if kind is CorrectionKind.CASTLING_INCOMPLETE:  # standard castling: the king's two-square step
        return board.is_castling(move) and not board.chess960
    if kind is CorrectionKind.EN_PASSANT_INCOMPLETE:
        return board.is_en_passant(move)
    if board.is_castling(move):
        return False
    if kind is CorrectionKind.ILLEGAL_GEOMETRY:
        return bool(illegal_targets(board, move.from_square))
    if kind is CorrectionKind.ILLEGAL_CAPTURE:
        return bool(_capture_targets(board, move.from_square))
    return bool(_self_check_moves(board, move.from_square))


def correction_codes(kind: CorrectionKind) -> list[str]:
    """The finding the incident warrants (warning or illegal-move class); the cycle itself warrants none."""
    return {
        CorrectionKind.ILLEGAL_GEOMETRY: ["ILLEGAL_MOVE/GEOMETRY"],
        CorrectionKind.ILLEGAL_CAPTURE: ["ILLEGAL_MOVE/GEOMETRY"],
        CorrectionKind.ILLEGAL_SELF_CHECK: ["ILLEGAL_MOVE/SELF_CHECK"],
        CorrectionKind.PAWN_NOT_REPLACED: ["PAWN_NOT_REPLACED"],
        CorrectionKind.ILLEGAL_PROMOTION_PIECE: ["ILLEGAL_MOVE/PROMOTION_INVALID_PIECE"],
        CorrectionKind.CASTLING_INCOMPLETE: ["CASTLING_INCOMPLETE_AT_PRESS"],
        CorrectionKind.EN_PASSANT_INCOMPLETE: ["EN_PASSANT_INCOMPLETE_AT_PRESS"],
        CorrectionKind.CASTLING_ILLEGAL: ["ILLEGAL_MOVE/CASTLING_ILLEGAL"],
        # T25: the first piece was released with the pawn off, so the move was made (4.7) and changed as well
        CorrectionKind.PROMOTION_CHOICE_CHANGED: ["PROMOTION_CHOICE_CHANGED", "RELEASED_MOVE_CHANGED"],
    }[kind]


def correction_counts(kind: CorrectionKind) -> bool:
    """Whether the incident is an illegal move (7.5: penalty and count); a changed promotion choice is an
    Article 4 breach (4.4.4): the first piece stands, no time penalty by default (rules-spec §6)."""
    return kind is not CorrectionKind.PROMOTION_CHOICE_CHANGED


def category_of(time_control: TimeControl, edition: int) -> str:
    """standard / rapid / blitz from T60 (rules-spec 7.1)."""
    minutes = time_control.t60_s / 60.0
    if minutes >= 60:
        return "standard"
    if edition == 2009:
        return "blitz" if minutes < 15 else "rapid"
    return "blitz" if minutes <= 10 else "rapid"


def penalty_seconds(edition: int, category: str) -> float:
    """Time added to the opponent for an illegal move (E2009 7.4 b, E2014 7.5 b + B.2, E2018 7.5.5 + B.2,
    E2023 7.5.5 + A.3/B.3; adequately supervised E2023 blitz taken as one minute, rules-spec O1)."""
    if edition == 2009:
        return 120.0
    if edition in (2014, 2018):
        return 60.0 if category == "blitz" else 120.0
    return 120.0 if category == "standard" else 60.0


def illegal_move_limit(edition: int) -> int:
    """The illegal move that loses: the third in E2009 (7.4 b), the second from E2014 (7.5 b / 7.5.5)."""
    return 3 if edition == 2009 else 2


@dataclass(frozen=True, slots=True)
class _Restore:
    """One hand action of the restoration: take *square*'s piece off (content None) or put *content* there."""

    square: int
    content: Content


def _put_back(s: _Script, rng: random.Random, actions: Sequence[tuple[int, Content]], reinstate: str,
              ply_index: int) -> Callable[[], None]:
    """The pieces set back by hand (*actions*: take a square's piece off, or put a piece there), the tablet's
    ``Reinstate`` of *ply_index* sent ``"before"``, ``"during"`` or ``"after"`` them as *reinstate* says (any other
    value: not here); returns the sending, for a ``Reinstate`` sent later."""

    def send_reinstate() -> None:
        s.op(_Command(lambda at, _clock: Reinstate(at=_stamp(at), ply=ply_index)))

    if reinstate == "before":
        send_reinstate()
        s.wait(0.5, 3.0)
    during_at = rng.randrange(1, len(actions)) if reinstate == "during" else -1
    for index, (square, content) in enumerate(actions):
        if index == during_at:
            send_reinstate()
            s.wait(0.3, 2.0)
        if content is None:
            s.lift(square)
        else:
            s.put(square, content)
        s.wait(0.3, 1.5)
    if reinstate == "after":
        s.wait(0.5, 2.0)
        send_reinstate()
    s.wait(1.0, 3.0)
    return send_reinstate


def _corrected(clock: SimClock, at: float, offender: chess.Color, penalty: float, *, take_back: bool,
               undo_reply: bool) -> tuple[dict[chess.Color, float], dict[chess.Color, int]]:
    """Times and move counters after the arbiter's correction: the penalty to the opponent, the increment
    and the count of the illegal press taken back (and those of the opponent's reply when it is undone)."""
    times = {color: clock.remaining(color, at) for color in chess.COLORS}
    counts = {color: clock.presses(color) for color in chess.COLORS}
    undone = ([offender] if take_back else []) + ([not offender] if undo_reply else [])
    for color in undone:
        times[color] = max(1.0, times[color] - clock.last_bonus[color])
        counts[color] = max(0, counts[color] - 1)
    times[not offender] += penalty
    return times, counts


def _set_times(offender: chess.Color, penalty: float, take_back: bool, *,
               undo_reply: bool = False) -> Callable[[float, Any], None]:
    """The arbiter sets the corrected times on the clock itself (readings show them)."""

    def fn(at: float, timeline: Any) -> None:
        times, counts = _corrected(timeline.clock, at, offender, penalty, take_back=take_back, undo_reply=undo_reply)
        timeline.set_times(at, times[chess.WHITE], times[chess.BLACK], counts[chess.WHITE], counts[chess.BLACK])

    return fn


def _tablet_times(offender: chess.Color, penalty: float, take_back: bool, *,
                  undo_reply: bool = False) -> Callable[[float, SimClock], Event]:
    """The arbiter enters the corrected times on the tablet (``SetClock``); the clock is set from it."""

    def make(at: float, clock: SimClock) -> Event:
        times, counts = _corrected(clock, at, offender, penalty, take_back=take_back, undo_reply=undo_reply)
        clock.correct(at, times[chess.WHITE], times[chess.BLACK], counts[chess.WHITE], counts[chess.BLACK])
        return SetClock(at=_stamp(at), white=times[chess.WHITE], black=times[chess.BLACK],
                        moves_white=counts[chess.WHITE], moves_black=counts[chess.BLACK])

    return make


def _echo_times(at: float, clock: SimClock) -> Event:
    """The tablet's ``SetClock`` with the times the clock already shows (set on the clock first)."""
    return SetClock(at=_stamp(at), white=clock.remaining(chess.WHITE, at), black=clock.remaining(chess.BLACK, at),
                    moves_white=clock.presses(chess.WHITE), moves_black=clock.presses(chess.BLACK))


def _turn_lever(color: chess.Color) -> Callable[[float, Any], None]:
    def fn(at: float, timeline: Any) -> None:
        timeline.turn_lever(at, color)

    return fn


@dataclass(frozen=True, slots=True)
class CycleResult:
    """What a correction cycle did: its label (for the bench) and the result it entered, if it ended the game."""

    label: str
    result: str | None = None
    #: the pawn left on the last rank was exchanged on its square (7.5.2; E2009: the piece chosen): no replacement
    exchanged: bool = False


def script_correction(s: _Script, *, kind: CorrectionKind, board: chess.Board, move: chess.Move, ply_index: int,
                      edition: int, penalty: float, final: bool, replacement: Callable[[_Script], None],
                      press_replacement: bool, press_delay: Callable[[_Script], None]) -> CycleResult:
    """Script the incident of *kind*, the arbiter's correction and the game's *move* as the replacement.

    Args:
        s: the script of the ply.
        kind: the incident.
        board: the position before the ply (the game's position, restored by the arbiter).
        move: the game's move at this ply (made as the replacement, with the piece of the incident).
        ply_index: plies before this one (the position the tablet's ``Reinstate`` names).
        edition: the edition of the Laws (7.5.2: a queen from E2014; E2009: reinstatement).
        penalty: seconds the arbiter adds to the opponent.
        final: this illegal move reaches the limit: the arbiter ends the game instead of correcting.
        replacement: scripts the game's move (the handler's way of moving).
        press_replacement: whether the replacement is completed by a press (not when it ends the game).
        press_delay: scripts the hand going from the board to the clock.
    """
    rng = s.rng
    color = board.turn
    piece = board.piece_at(move.from_square)
    assert piece is not None
    if kind is CorrectionKind.CASTLING_ILLEGAL:
        return _castling_illegal(s, board=board, ply_index=ply_index, penalty=penalty, final=final,
                                 replacement=replacement, press_replacement=press_replacement,
                                 press_delay=press_delay)
    if kind is CorrectionKind.PROMOTION_CHOICE_CHANGED:
        return _promotion_choice_changed(s, board=board, move=move, press_delay=press_delay)
    # 1. The incident: the illegal move, completed by the press.
    if kind is CorrectionKind.PAWN_NOT_REPLACED:
        to_square, placed, victim = move.to_square, piece, _victim_square(board, move)
    elif kind is CorrectionKind.ILLEGAL_PROMOTION_PIECE:  # the piece taken from the wrong colour's spares
        assert move.promotion is not None
        to_square, victim = move.to_square, _victim_square(board, move)
        # Never the very piece it captures: the board could not tell that from a victim left standing.
        kinds = [move.promotion] if victim is None or board.piece_type_at(victim) != move.promotion else [
            kind for kind in (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
            if kind != board.piece_type_at(victim)]
        placed = chess.Piece(rng.choice(kinds), not color)
    elif kind is CorrectionKind.CASTLING_INCOMPLETE:  # the king alone to its castling square
        to_square, placed, victim = _king_rook(board, move)[1], piece, None
    elif kind is CorrectionKind.EN_PASSANT_INCOMPLETE:  # the captured pawn stays where it is
        to_square, placed, victim = move.to_square, piece, None
    elif kind is CorrectionKind.ILLEGAL_GEOMETRY:
        to_square, placed, victim = rng.choice(illegal_targets(board, move.from_square)), piece, None
    elif kind is CorrectionKind.ILLEGAL_CAPTURE:
        to_square = rng.choice(_capture_targets(board, move.from_square))
        placed, victim = piece, to_square
    else:
        wrong = rng.choice(_self_check_moves(board, move.from_square))
        to_square, victim = wrong.to_square, _victim_square(board, wrong)
        placed = chess.Piece(wrong.promotion, color) if wrong.promotion else piece
    _illegal_action(s, move.from_square, to_square, placed=placed, victim=victim)
    press_delay(s)
    s.press(color)
    # 7.5.2 from E2014: the pawn is exchanged for a queen on the promotion square (the move stands as =Q). E2009
    # (7.4 a, the replacement under 4.3/4.6, the piece the player's choice): the position before reinstated and
    # the pawn moved again, or the pawn exchanged on the square for the piece chosen (the game's promotion)
    queen_rule = kind is CorrectionKind.PAWN_NOT_REPLACED and (edition >= 2014 or rng.random() < 0.5)
    chosen = chess.Piece(chess.QUEEN if edition >= 2014 or move.promotion is None else move.promotion, color)
    # 2. The opponent notices and stops the clock (or not); the arbiter comes. Sometimes the opponent
    # replies first and the illegal move is found only then (7.5.1: "found during the game"): the
    # position before the illegal move is reinstated, the reply undone with it.
    reply = None
    if not final and not queen_rule and rng.random() < 0.15:
        reply = _late_reply(rng, board, move.from_square, to_square, placed=placed, victim=victim)
    if reply is not None:
        s.wait(1.0, 4.0)
        s.lift(reply.from_square)
        s.wait(0.25, 0.80)
        s.put(reply.to_square, board.piece_at(reply.from_square))
        press_delay(s)
        s.press(not color)
        paused = True
        s.wait(2.0, 8.0)
        s.op(_Pause())
    else:
        paused = rng.random() < 0.8
        s.wait(2.0, 8.0)
        if paused:
            s.op(_Pause())
    s.wait(2.0, 6.0)
    if final:
        loser_can_be_mated = not board.has_insufficient_material(not color)
        result = ("0-1" if color == chess.WHITE else "1-0") if loser_can_be_mated else "1/2-1/2"
        if not paused:
            s.op(_Pause())
            s.wait(1.0, 3.0)
        s.op(_Command(lambda at, _clock: SetResult(at=_stamp(at), result=result)))
        return CycleResult(f"correction/{kind.value}/final", result)
    parts = [f"correction/{kind.value}", "paused" if paused else "running"]
    if reply is not None:
        parts.append("noticed-after-reply")
    # 3. The pieces: the position before the illegal move, or (7.5.2 from E2014) the pawn becomes a queen.
    if queen_rule:
        actions = [_Restore(move.to_square, None), _Restore(move.to_square, chosen)]
        reinstate = "none"  # 7.5.2: the move stands as a queen promotion; nothing to reinstate
        if edition < 2014:
            parts.append("exchanged")
    else:
        actions = _restoration_order(rng, board, move.from_square, to_square, placed=placed, victim=victim)
        if reply is not None:  # the reply is taken back first
            actions = [_Restore(reply.to_square, None), _Restore(reply.from_square, board.piece_at(reply.from_square)),
                       *actions]
        reinstate = rng.choice(["none", "before", "during", "after", "after-restart"])
    parts.append(f"reinstate-{reinstate}")

    send_reinstate = _put_back(s, rng, [(a.square, a.content) for a in actions], reinstate, ply_index)
    # 4. The times (7.1 / R21): penalty to the opponent, the increment of the illegal press taken back
    # (not under 7.5.2 from E2014, where the press completed the queen promotion that stands).
    take_back = not queen_rule
    clock_mode = rng.choices(["clock", "tablet", "both", "unchanged", "other-penalty"], weights=[4, 3, 2, 1, 1])[0]
    parts.append(f"times-{clock_mode}")
    if clock_mode == "other-penalty":  # set on the clock, but one minute where two were due or vice versa
        clock_mode, penalty = "clock", 180.0 - penalty
    restart_color = not color if queen_rule else color
    if paused:
        undo_reply = reply is not None
        if clock_mode in ("clock", "both"):
            s.op(_Call(_set_times(color, penalty, take_back, undo_reply=undo_reply)))
            s.wait(1.0, 4.0)
        if clock_mode == "tablet":
            s.op(_Command(_tablet_times(color, penalty, take_back, undo_reply=undo_reply)))
            s.wait(1.0, 3.0)
        elif clock_mode == "both":
            s.op(_Command(_echo_times))
            s.wait(1.0, 3.0)
        # 5. The restart with the side to move running (the offender, or the opponent after 7.5.2).
        if queen_rule or reply is not None:  # the lever already stands for the side to move
            restart = "play"
            s.op(_Resume(restart_color))
        else:
            restart = rng.choice(["lever-in-pause", "lever-at-restart", "set-and-run"])
            if restart == "lever-in-pause":
                s.op(_Call(_turn_lever(color)))
                s.wait(0.5, 3.0)
                s.op(_Resume(color))
            elif restart == "lever-at-restart":
                s.op(_Resume(not color))  # play: the lever still stands for the opponent ...
                s.wait(0.10, 0.60)
                s.op(_Press(not color))  # ... and the arbiter turns it at once
            else:
                s.op(_Resume(color))
    else:
        # The clock ran all along (the opponent's time): the arbiter hands the turn back with the lever,
        # then perhaps pauses to set the times.
        if queen_rule:
            restart = "none"
        else:
            restart = "arbiter-press"
            s.op(_Press(not color))
        if clock_mode != "unchanged":
            s.wait(1.0, 3.0)
            s.op(_Pause())
            s.wait(1.0, 3.0)
            if clock_mode in ("clock", "both"):
                s.op(_Call(_set_times(color, penalty, take_back)))
            else:
                s.op(_Command(_tablet_times(color, penalty, take_back)))
            s.wait(1.0, 3.0)
            if clock_mode == "both":
                s.op(_Command(_echo_times))
                s.wait(1.0, 3.0)
            s.op(_Resume(restart_color))
    parts.append(f"restart-{restart}")
    if reinstate == "after-restart":
        s.wait(0.5, 2.0)
        send_reinstate()
    if queen_rule:
        return CycleResult(" ".join(parts), exchanged=True)
    # 6. The replacement: the game's move, made with the piece touched in the illegal move, and the press.
    s.wait(1.0, 4.0)
    replacement(s)
    if press_replacement:
        press_delay(s)
        s.press(color)
    return CycleResult(" ".join(parts))


def _castling_illegal(s: _Script, *, board: chess.Board, ply_index: int, penalty: float, final: bool,
                      replacement: Callable[[_Script], None], press_replacement: bool,
                      press_delay: Callable[[_Script], None]) -> CycleResult:
    """An illegal castling (:func:`illegal_castlings`) by hand, the press, the arbiter's correction (7.5.1: the
    position before, the penalty, the increment of the illegal press taken back, the offender's clock restarted)
    and the game's king move as the replacement (4.4.3 / 4.7.2: another move of the king, the other castling
    among them)."""
    rng = s.rng
    color = board.turn
    castling = rng.choice(illegal_castlings(board))
    king_from, king_to, rook_from, rook_to = _king_rook(board, castling)
    if board.chess960:  # the Laws' ways (F.3 / II.3), the king touched first or with the rook
        methods = [m for m in castling960_methods(board, castling)
                   if m not in (Castling960.ROOK_ONLY, Castling960.DOUBLE_MOVE_RELEASED)]
        method = rng.choice(methods)
        script_castling960(s, board, castling, method)
        way = f"960-{method.value}"
    else:  # king first (4.4.1), then the rook, one hand
        way = "king-first"
        s.lift(king_from)
        s.wait(0.25, 0.80)
        s.put(king_to, chess.Piece(chess.KING, color))
        s.wait(0.20, 0.80)
        s.lift(rook_from)
        s.wait(0.20, 0.60)
        s.put(rook_to, chess.Piece(chess.ROOK, color))
    press_delay(s)
    s.press(color)
    after = board.copy(stack=False)
    after.remove_piece_at(king_from)
    after.remove_piece_at(rook_from)
    after.set_piece_at(king_to, chess.Piece(chess.KING, color))
    after.set_piece_at(rook_to, chess.Piece(chess.ROOK, color))
    side = "g-side" if chess.square_file(rook_from) > chess.square_file(king_from) else "c-side"
    parts = [f"correction/{CorrectionKind.CASTLING_ILLEGAL.value}", side, way]
    # 2. The opponent stops the clock (or not: rapid and blitz, the arbiter coming to a running clock).
    paused = rng.random() < 0.8
    s.wait(2.0, 8.0)
    if paused or final:
        s.op(_Pause())
    s.wait(2.0, 6.0)
    if final:  # the illegal move of the limit: the arbiter enters the result (7.5.5)
        loser_can_be_mated = not board.has_insufficient_material(not color)
        result = ("0-1" if color == chess.WHITE else "1-0") if loser_can_be_mated else "1/2-1/2"
        s.op(_Command(lambda at, _clock: SetResult(at=_stamp(at), result=result)))
        return CycleResult(f"correction/{CorrectionKind.CASTLING_ILLEGAL.value}/final", result)
    parts.append("paused" if paused else "running")
    # 3. King and rook back on their squares, in any order a hand can (takeback_order), the tablet's Reinstate
    # before, during, after or never.
    actions = takeback_order(rng, board, after)
    reinstate = rng.choice(["none", "before", "during", "after"])
    parts.append(f"reinstate-{reinstate}")

    _put_back(s, rng, actions, reinstate, ply_index)
    # 4. The times (7.5.5 / 7.1): the penalty to the opponent, the increment of the illegal press taken back;
    # 5. the offender's clock running again.
    clock_mode = rng.choices(["clock", "tablet", "unchanged"], weights=[4, 3, 1])[0]
    parts.append(f"times-{clock_mode}")
    if paused:
        if clock_mode == "clock":
            s.op(_Call(_set_times(color, penalty, True)))
            s.wait(1.0, 4.0)
        elif clock_mode == "tablet":
            s.op(_Command(_tablet_times(color, penalty, True)))
            s.wait(1.0, 3.0)
        restart = rng.choice(["lever-in-pause", "set-and-run"])
        if restart == "lever-in-pause":
            s.op(_Call(_turn_lever(color)))
            s.wait(0.5, 3.0)
        s.op(_Resume(color))
    else:
        restart = "arbiter-press"
        s.op(_Press(not color))
        if clock_mode != "unchanged":
            s.wait(1.0, 3.0)
            s.op(_Pause())
            s.wait(1.0, 3.0)
            if clock_mode == "clock":
                s.op(_Call(_set_times(color, penalty, True)))
            else:
                s.op(_Command(_tablet_times(color, penalty, True)))
            s.wait(1.0, 3.0)
            s.op(_Resume(color))
    parts.append(f"restart-{restart}")
    # 6. The replacement: the game's king move (4.4.3), and the press.
    s.wait(1.0, 4.0)
    replacement(s)
    if press_replacement:
        press_delay(s)
        s.press(color)
    return CycleResult(" ".join(parts))


def _promotion_choice_changed(s: _Script, *, board: chess.Board, move: chess.Move,
                              press_delay: Callable[[_Script], None]) -> CycleResult:
    """The game's promotion made with its piece put on the square and released, that piece then exchanged for
    another, the press; the opponent stops the clock (or not), the first piece is put back on the square by the
    arbiter (or the player, told to), the clock restarted for the opponent; no times changed (an Article 4
    matter: the first piece stands, 4.4.4)."""
    rng = s.rng
    color = board.turn
    assert move.promotion is not None
    first = chess.Piece(move.promotion, color)
    other = chess.Piece(rng.choice([k for k in (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
                                    if k != move.promotion]), color)
    victim = _victim_square(board, move)
    # 1. The pawn off and the first piece on the square, released; then exchanged for the other; the press.
    order = rng.choice(["pawn-first", "piece-first"]) if victim is None else "pawn-first"
    if order == "pawn-first":
        _illegal_action(s, move.from_square, move.to_square, placed=first, victim=victim)
    else:  # 4.6.2 (E2014+): the new piece on the square first, the pawn off after
        s.put(move.to_square, first)
        s.wait(0.30, 0.90)
        s.lift(move.from_square)
    s.wait(1.0, 3.0)  # released: the choice made (4.4.4, 4.7)
    s.lift(move.to_square)
    s.wait(0.30, 1.20)
    s.put(move.to_square, other)
    press_delay(s)
    s.press(color)
    parts = [f"correction/{CorrectionKind.PROMOTION_CHOICE_CHANGED.value}", order,
             f"{chess.piece_name(move.promotion)}-then-{chess.piece_name(other.piece_type)}"]
    # 2. The opponent stops the clock or not; the piece exchanged back; the clock goes on for the opponent.
    paused = rng.random() < 0.7
    s.wait(2.0, 8.0)
    if paused:
        s.op(_Pause())
        s.wait(2.0, 6.0)
    parts.append("paused" if paused else "running")
    s.lift(move.to_square)
    s.wait(0.30, 1.50)
    s.put(move.to_square, first)
    s.wait(1.0, 3.0)
    if paused:
        s.op(_Resume(not color))
    return CycleResult(" ".join(parts), exchanged=True)


def _late_reply(rng: random.Random, board: chess.Board, from_square: int, to_square: int, *,
                placed: chess.Piece, victim: int | None) -> chess.Move | None:
    """A quiet reply of the opponent on the board as the illegal move left it (None if there is none)."""
    after = board.copy(stack=False)
    after.remove_piece_at(from_square)
    if victim is not None:
        after.remove_piece_at(victim)
    after.set_piece_at(to_square, placed)
    after.turn = not board.turn
    after.ep_square = None
    involved = {from_square, to_square, victim}
    if after.king(after.turn) is None or after.is_check() or not after.is_valid():
        return None
    quiet = [m for m in after.legal_moves if not after.is_capture(m) and not after.is_castling(m)
             and m.promotion is None and m.from_square not in involved and m.to_square not in involved
             and board.piece_at(m.from_square) == after.piece_at(m.from_square)]
    return rng.choice(quiet) if quiet else None


def _restoration_order(rng: random.Random, board: chess.Board, from_square: int, to_square: int, *,
                       placed: chess.Piece, victim: int | None) -> list[_Restore]:
    piece = board.piece_at(from_square)
    assert piece is not None
    off = _Restore(to_square, None)
    home = _Restore(from_square, piece)
    actions = [off, home]
    back = None
    if victim is not None:
        back = _Restore(victim, board.piece_at(victim))
        actions.append(back)
    same_piece = placed == piece  # the very piece must leave the wrong square before it can go home

    def doable(order: tuple[_Restore, ...]) -> bool:
        position = {id(action): i for i, action in enumerate(order)}
        if same_piece and position[id(home)] < position[id(off)]:
            return False
        return not (back is not None and back.square == to_square and position[id(back)] < position[id(off)])

    orders = [order for order in itertools.permutations(actions) if doable(order)]
    return list(rng.choice(orders))


# --- a released move taken back before the press ------------------------------------------


def _one_gesture(s: _Script, steps: list[tuple[int, Content]], t_settle: float) -> None:
    """*steps* by hand as one gesture: each lift or placement within ``T_settle`` of the one before."""
    for index, (square, content) in enumerate(steps):
        if index:
            s.wait(0.05, min(0.30, 0.75 * t_settle))
        if content is None:
            s.lift(square)
        else:
            s.put(square, content)


def takeback_order(rng: random.Random, before: chess.Board, after: chess.Board) -> list[tuple[int, Content]]:
    """The squares of *after* set back to *before* by hand, in a random valid order: ``(square, content)``.

    A piece is put down only once it is in the hand (lifted from its square of *after*) or beside the board
    (a captured piece, the pawn of a promotion); a square is filled only once it has been emptied. Castling
    puts king and rook back in either order.
    """
    changed = [sq for sq in chess.SQUARES if after.piece_at(sq) != before.piece_at(sq)]
    lifts = [sq for sq in changed if after.piece_at(sq) is not None]
    places = [sq for sq in changed if before.piece_at(sq) is not None]
    spare: list[chess.Piece] = []  # beside the board: what *before* has more of than *after*
    for color in chess.COLORS:
        for kind in chess.PIECE_TYPES:
            extra = len(before.pieces(kind, color)) - len(after.pieces(kind, color))
            spare += [chess.Piece(kind, color)] * max(0, extra)
    order: list[tuple[int, Content]] = []
    full = set(lifts)
    while lifts or places:
        ready: list[tuple[int, Content]] = [(sq, None) for sq in lifts]
        ready += [(sq, before.piece_at(sq)) for sq in places if sq not in full and before.piece_at(sq) in spare]
        square, content = rng.choice(ready)
        if content is None:
            lifts.remove(square)
            full.discard(square)
            piece = after.piece_at(square)
            assert piece is not None
            spare.append(piece)  # in the hand (a promoted queen goes back beside the board: the same thing)
        else:
            places.remove(square)
            back = before.piece_at(square)
            assert back is not None
            spare.remove(back)
        order.append((square, content))
    return order


def script_released_taken_back(s: _Script, board: chess.Board, first: chess.Move, *,
                               make: Callable[[_Script, chess.Board, chess.Move], None], t_settle: float,
                               think_high: float) -> None:
    """*first* made and released, standing ``T_settle`` + 0.5-10 s, taken back by hand (one gesture: each step
    within ``T_settle`` of the one before), then the player thinks 1-*think_high* s (the move that follows is
    the caller's). *make* scripts a move the handler's way."""
    make(s, board, first)
    s.wait(t_settle + 0.5, t_settle + 10.0)
    after = board.copy(stack=False)
    after.push(first)
    _one_gesture(s, takeback_order(s.rng, board, after), t_settle)
    s.wait(1.0, max(1.0, think_high))


def script_released_changed(s: _Script, board: chess.Board, first: chess.Move, move: chess.Move, *,
                            make: Callable[[_Script, chess.Board, chess.Move], None], t_settle: float) -> None:
    """*first* made and released, standing ``T_settle`` + 0.5-10 s, then changed by hand straight into *move*
    (one gesture: each step within ``T_settle`` of the one before), the steps in a random valid order: the pieces
    of *first* lifted, *move*'s victim lifted before or after them, the piece *first* captured put back from
    beside the board at any time, a piece put down only on an empty square (R07, 4.7). The press is the
    caller's. *make* scripts a move the handler's way."""
    make(s, board, first)
    s.wait(t_settle + 0.5, t_settle + 10.0)
    shown = board.copy(stack=False)
    shown.push(first)
    target = board.copy(stack=False)
    target.push(move)
    _one_gesture(s, takeback_order(s.rng, target, shown), t_settle)
