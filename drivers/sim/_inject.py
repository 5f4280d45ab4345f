"""Injectable irregularities: what the simulator can make a player do wrong, as data.

Each kind names one scenario family of rules-spec §8 and the codes the engine
must raise for it (:func:`expected_codes`). An :class:`Injection` pins a kind to
a ply of the game (1-based: ply 1 is the first move played in the game).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import chess
import chess.pgn

__all__ = ["NO_CLOCK_KINDS", "Injection", "InjectionKind", "applicable", "changed_candidates", "expected_codes",
           "illegal_targets",
           "knock_candidates", "released_candidates", "seeded_injection", "touch_candidates"]

_EDITIONS = (2009, 2014, 2018, 2023)


class InjectionKind(enum.StrEnum):
    """The irregularities the simulator can inject (rules-spec scenario in brackets)."""

    #: Rook lifted and put on its castling square before the king is lifted (T05).
    ROOK_FIRST = "rook-first"
    #: Pawn put on the last rank, clock pressed; the arbiter then puts a queen there (T26).
    PAWN_NOT_REPLACED = "pawn-not-replaced"
    #: Clock pressed before moving; the arbiter restarts the presser's clock, the move follows (T29).
    PRESS_NO_MOVE = "press-no-move"
    #: Clock pressed with the piece still in hand; the piece is placed on the opponent's time (T30).
    PRESS_PIECE_IN_HAND = "press-piece-in-hand"
    #: The piece of the move released on a square it cannot reach and the clock pressed; the arbiter
    #: reinstates (``Reinstate`` command), restarts the clock, and the same piece makes the game's move (T34).
    ILLEGAL_MOVE = "illegal-move"
    #: Castling with king and rook lifted within one scan, three or more squares apart (T08).
    TWO_HANDS_CASTLING = "two-hands-castling"
    #: A neighbouring own piece knocked off its square and not put back before the press (T47b); the
    #: arbiter pauses the clock, the piece is restored, the clock resumes.
    KNOCK_NOT_RESTORED = "knock-not-restored"
    #: The mover forgets to press; the opponent replies, then the mover presses late (T48).
    LATE_PRESS = "late-press"
    #: Another own piece that could move is lifted and put back, then the game's move is made (T45).
    TOUCH_MOVE = "touch-move"
    #: Another legal move made and released (it stands past T_settle), taken back by hand before the press, then
    #: the game's move made and pressed: the released move changed (R07, 4.7).
    RELEASED_TAKEN_BACK = "released-taken-back"
    #: Another legal move made and released (it stands past T_settle), then changed by hand straight into the
    #: game's move before the press (a quiet move into a capture, a capture into another move: the victim lifted,
    #: the piece captured first put back from beside the board, in any valid order): R07, 4.7.
    RELEASED_CHANGED = "released-changed"


_CODES: dict[InjectionKind, tuple[str, ...]] = {
    InjectionKind.ROOK_FIRST: ("CASTLING_ROOK_FIRST",),
    InjectionKind.PAWN_NOT_REPLACED: ("PAWN_NOT_REPLACED",),
    InjectionKind.PRESS_NO_MOVE: ("CLOCK_PRESS_NO_MOVE",),
    InjectionKind.PRESS_PIECE_IN_HAND: ("CLOCK_PRESS_PIECE_IN_HAND", "CLOCK_PRESS_OTHER_HAND_SUSPECTED",
                                        "OUT_OF_TURN_CHANGE"),
    InjectionKind.ILLEGAL_MOVE: ("ILLEGAL_MOVE/GEOMETRY",),
    InjectionKind.TWO_HANDS_CASTLING: ("TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"),
    InjectionKind.KNOCK_NOT_RESTORED: ("DISPLACED_NOT_RESTORED_AT_PRESS",),
    InjectionKind.LATE_PRESS: ("CLOCK_NOT_PRESSED", "CLOCK_LATE_PRESS"),
    InjectionKind.TOUCH_MOVE: ("TOUCH_MOVE_SUSPECTED",),
    InjectionKind.RELEASED_TAKEN_BACK: ("RELEASED_MOVE_CHANGED",),
    InjectionKind.RELEASED_CHANGED: ("RELEASED_MOVE_CHANGED",),
}


#: The kinds that can be played on a board without a clock (``simulate_game(..., clock=False)``): the hands
#: alone. The others are a press (or a forgotten one) or the arbiter's handling of a paused clock.
NO_CLOCK_KINDS = frozenset({InjectionKind.ROOK_FIRST, InjectionKind.TWO_HANDS_CASTLING, InjectionKind.TOUCH_MOVE,
                            InjectionKind.RELEASED_TAKEN_BACK})

#: Without a clock nothing is completed by a press: the codes a press would add are not raised.
_PRESS_CODES = frozenset({"TWO_HANDS_AT_PRESS"})


@dataclass(frozen=True, slots=True)
class Injection:
    """An irregularity of *kind* at *ply* (1-based half-move number within the game)."""

    kind: InjectionKind
    ply: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", InjectionKind(self.kind))  # accepts the kind's string too
        if not isinstance(self.ply, int) or self.ply < 1:
            raise ValueError(f"injection ply must be >= 1, got {self.ply!r}")

    @classmethod
    def parse(cls, text: str) -> Injection:
        """Parse ``KIND@PLY`` (``"rook-first@9"``).

        Raises:
            ValueError: malformed text or unknown kind.
        """
        kind, sep, ply = text.partition("@")
        if not sep:
            raise ValueError(f"expected KIND@PLY, got {text!r}")
        try:
            return cls(InjectionKind(kind.strip()), int(ply))
        except ValueError:
            known = ", ".join(k.value for k in InjectionKind)
            raise ValueError(f"bad injection {text!r} (kinds: {known}; ply is a positive integer)") from None

    def __str__(self) -> str:
        return f"{self.kind.value}@{self.ply}"


def expected_codes(injection: Injection, edition: int = 2023, *, clock: bool = True) -> list[str]:
    """The irregularity codes the engine must raise for *injection* under *edition*.

    Codes with a subtype are written ``CODE/SUBTYPE`` (``ILLEGAL_MOVE/GEOMETRY``).
    Info codes that may come along (``ADJUST_OBSERVED``, ``CLOCK_PAUSED``,
    ``ARBITER_ADJUST``, ``LATENCY_RACE``) are not listed. The codes are the same in
    every edition; their severity differs (rules-spec 6.2: ``CLOCK_PRESS_*`` and
    ``TWO_HANDS_AT_PRESS`` are illegal-move class only from E2018). Without a *clock* (a kind of
    :data:`NO_CLOCK_KINDS`) the codes of a press are left out: the move is completed by the reply (6.2.1.2).

    Raises:
        ValueError: unknown edition.
    """
    if edition not in _EDITIONS:
        raise ValueError(f"edition must be one of {_EDITIONS}, got {edition!r}")
    codes = _CODES[injection.kind]
    return [code for code in codes if clock or code not in _PRESS_CODES]


# --- where an injection can go --------------------------------------------------


def _king_rook(board: chess.Board, move: chess.Move) -> tuple[int, int, int, int]:
    """(king from, king to, rook from, rook to) of a castling move (standard or Chess960 encoding)."""
    color = board.turn
    rank = 0 if color == chess.WHITE else 7
    king_from = move.from_square
    if board.chess960 or board.piece_type_at(move.to_square) == chess.ROOK:
        rook_from = move.to_square
    else:
        rook_from = chess.square(7 if chess.square_file(move.to_square) > chess.square_file(king_from) else 0, rank)
    kingside = chess.square_file(rook_from) > chess.square_file(king_from)
    king_to = chess.square(6 if kingside else 2, rank)
    rook_to = chess.square(5 if kingside else 3, rank)
    return king_from, king_to, rook_from, rook_to


def _geometry_ok(piece: chess.Piece, from_square: int, to_square: int) -> bool:
    """Could *piece* go from→to on an empty board (ignoring check and blockers)?"""
    if piece.piece_type == chess.PAWN:
        step = 8 if piece.color == chess.WHITE else -8
        start_rank = 1 if piece.color == chess.WHITE else 6
        forward = to_square - from_square
        file_diff = abs(chess.square_file(to_square) - chess.square_file(from_square))
        if file_diff == 0:
            return forward == step or (forward == 2 * step and chess.square_rank(from_square) == start_rank)
        return file_diff == 1 and chess.square_rank(to_square) - chess.square_rank(from_square) == step // 8
    if piece.piece_type == chess.KING and chess.square_distance(from_square, to_square) <= 2 and (
            chess.square_rank(from_square) == chess.square_rank(to_square)):
        return True  # castling shapes are not clean "geometry" errors
    attacks = chess.BaseBoard.empty()
    attacks.set_piece_at(from_square, piece)
    return bool(attacks.attacks_mask(from_square) & chess.BB_SQUARES[to_square])


def illegal_targets(board: chess.Board, from_square: int) -> list[int]:
    """Empty squares within two squares of *from_square* that its piece cannot reach by any geometry.

    A placement there is ``ILLEGAL_MOVE/GEOMETRY`` when completed. Pawns exclude
    the last ranks (that would be a promotion shape).
    """
    piece = board.piece_at(from_square)
    if piece is None:
        return []
    targets = []
    for square in chess.SQUARES:
        if square == from_square or board.piece_at(square) is not None:
            continue
        if chess.square_distance(square, from_square) > 2:
            continue
        if piece.piece_type == chess.PAWN and chess.square_rank(square) in (0, 7):
            continue
        if _geometry_ok(piece, from_square, square):
            continue
        targets.append(square)
    return targets


def knock_candidates(board: chess.Board, move: chess.Move) -> list[int]:
    """Own pieces next to the move's target that are not part of the move (they can be knocked)."""
    involved = {move.from_square, move.to_square}
    if board.is_castling(move):
        involved.update(_king_rook(board, move))
    return [square for square in chess.SQUARES
            if chess.square_distance(square, move.to_square) == 1 and square not in involved
            and (piece := board.piece_at(square)) is not None and piece.color == board.turn]


def touch_candidates(board: chess.Board, move: chess.Move, *, movable: bool) -> list[int]:
    """Own pieces other than the mover (and the castling rook) that have (``movable``) or lack a legal move."""
    excluded = {move.from_square}
    if board.is_castling(move):
        excluded.update(_king_rook(board, move))
    can_move = {m.from_square for m in board.legal_moves}
    return [square for square in chess.SquareSet(board.occupied_co[board.turn])
            if square not in excluded and (square in can_move) == movable]


def released_candidates(board: chess.Board, move: chess.Move) -> list[chess.Move]:
    """Legal moves other than the game's *move* that a player could release first and take back: any but one
    that ends the game on the board (mate, stalemate, ...) and the under-promotions."""
    candidates = []
    for other in board.legal_moves:
        if other == move or other.promotion not in (None, chess.QUEEN):
            continue
        board.push(other)
        over = board.is_game_over(claim_draw=False)
        board.pop()
        if not over:
            candidates.append(other)
    return candidates


def changed_candidates(board: chess.Board, move: chess.Move) -> list[chess.Move]:
    """Legal moves a player could release first and then change by hand into the game's *move*: those of
    :func:`released_candidates` but the ones whose change the Laws flag with more than ``RELEASED_MOVE_CHANGED``
    (another piece on the same promotion square, 4.4.4; a king or castling rook moved before castling, 4.4.2 and
    Guidelines II.3) and Chess960 castlings (their squares overlap)."""
    castling_pieces: set[int] = set()
    if board.is_castling(move):
        king_from, _, rook_from, _ = _king_rook(board, move)
        castling_pieces = {king_from, rook_from}
    return [other for other in released_candidates(board, move)
            if not (other.promotion and move.promotion and other.to_square == move.to_square)
            and other.from_square not in castling_pieces
            and not (board.chess960 and board.is_castling(other))]


def applicable(kind: InjectionKind, board: chess.Board, move: chess.Move, *, has_next: bool) -> bool:
    """Whether *kind* can be injected at *move* played from *board*.

    Args:
        kind: the injection kind.
        board: the position before the move.
        move: the game's move at that ply.
        has_next: whether the game has another move after this one (late press needs the reply).
    """
    standard_castling = board.is_castling(move) and not board.chess960
    if kind is InjectionKind.ROOK_FIRST:  # a castling that moves king and rook (Chess960 too: R27 carries 4.4 over)
        if not board.is_castling(move):
            return False
        king_from, king_to, rook_from, rook_to = _king_rook(board, move)
        return king_from != king_to and rook_from != rook_to
    if kind is InjectionKind.TWO_HANDS_CASTLING:
        return standard_castling
    if kind is InjectionKind.PAWN_NOT_REPLACED:
        return move.promotion == chess.QUEEN
    if kind is InjectionKind.PRESS_NO_MOVE:
        return True
    if kind is InjectionKind.PRESS_PIECE_IN_HAND:
        return not (board.is_capture(move) or board.is_castling(move) or move.promotion is not None)
    if kind is InjectionKind.ILLEGAL_MOVE:
        return not board.is_castling(move) and bool(illegal_targets(board, move.from_square))
    if kind is InjectionKind.KNOCK_NOT_RESTORED:
        return not board.is_castling(move) and bool(knock_candidates(board, move))
    if kind is InjectionKind.LATE_PRESS:
        return has_next
    if kind is InjectionKind.TOUCH_MOVE:
        return bool(touch_candidates(board, move, movable=True))
    if kind is InjectionKind.RELEASED_TAKEN_BACK:
        return bool(released_candidates(board, move))
    if kind is InjectionKind.RELEASED_CHANGED:
        return bool(changed_candidates(board, move))
    raise AssertionError(kind)  # pragma: no cover - exhaustive


def seeded_injection(kind: InjectionKind | None, game: chess.pgn.Game, seed: int) -> list[Injection]:
    """One injection of *kind* at a ply of *game*'s main line where it is :func:`applicable`, the ply chosen by
    *seed*; none when *kind* is ``None`` or fits nowhere."""
    if kind is None:
        return []
    board = game.board()
    moves = list(game.mainline_moves())
    fits = []
    for ply, move in enumerate(moves, 1):
        if applicable(kind, board, move, has_next=ply < len(moves)):
            fits.append(ply)
        board.push(move)
    return [Injection(kind, fits[seed % len(fits)])] if fits else []
