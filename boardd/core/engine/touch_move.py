"""Touch-move (rules-spec §3.4, §3.7; articles 4.3–4.5, 4.7): the Article 4 heuristics at made time."""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _castling_king_square, _castling_rook_square, _piece_text
from boardd.core.outputs import (
    Evidence,
    MoveRecord,
    Output,
)
from boardd.core.recognizer import Diff

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


class TouchMove:
    """Touch-move (rules-spec §3.4, §3.7; articles 4.3–4.5, 4.7): the Article 4 heuristics at made time."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules

    def check_touch_rules(self, outs: list[Output], pre: chess.Board, move: chess.Move, side: chess.Color, *,
                           at: float, lifts: list[tuple[float, int, chess.Piece]],
                           replaced: MoveRecord | None) -> None:
        t_scan = self.rules.timing.t_scan
        own = [x for x in lifts if x[2].color == side]
        if pre.is_castling(move) and self._king_moves(pre, move):
            # 4.4.2: the rook touched (lifted) first, then the king. In Chess960 too (rules-spec R27: 4.4 carries
            # over) wherever the king moves: Guidelines II.3.2 has the king move first (II.3.2.1) or the king off
            # the board first (II.3.2.5.1); only a rook-only castling has the rook first as its normal way. In a
            # king-only castling (II.3.2.3, the rook already on its final square) the rook lifted and put back (or
            # held off the board) before the king is touched first all the same: no castling on that side
            king_lift = next((x for x in own if x[1] == move.from_square and x[2].piece_type == chess.KING), None)
            rook_from = _castling_rook_square(pre, move)
            rook_lift = next((x for x in own if x[1] == rook_from and x[2].piece_type == chess.ROOK), None)
            if king_lift and rook_lift and rook_lift[0] < king_lift[0] - t_scan:
                self.e.findings.raise_finding(outs, "CASTLING_ROOK_FIRST", side, at,
                            [Evidence(at=rook_lift[0], event=f"L {chess.square_name(rook_from)}"),
                             Evidence(at=king_lift[0], event=f"L {chess.square_name(move.from_square)}")],
                            text="rook lifted before the king: no castling on that side this move; the rook must "
                                 "move if it can (4.4.2, 4.3.1)",
                            move=replaced.san if replaced else None)
        # touch-capture: an opponent piece lifted first (and put back) that could be captured (4.3.2)
        captured_sq = move.to_square
        if pre.is_en_passant(move):
            captured_sq = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
        opp_lifts = [x for x in lifts if x[2].color != side and pre.piece_at(x[1]) == x[2]]
        if opp_lifts and replaced is None:
            t_opp, sq_opp, p_opp = opp_lifts[0]
            own_first = own[0][0] if own else None
            if (sq_opp != captured_sq and (own_first is None or t_opp < own_first - t_scan)
                    and any(m.to_square == sq_opp for m in pre.legal_moves if pre.is_capture(m))):
                self.e.findings.raise_finding(outs, "TOUCH_CAPTURE_SUSPECTED", side, at,
                            [Evidence(at=t_opp, event=f"L {chess.square_name(sq_opp)}")],
                            text=f"{_piece_text(p_opp)} on {chess.square_name(sq_opp)} was touched first and could be "
                                 "captured (4.3.2); alternative reading: the opponent adjusted it on this "
                                 "player's time",
                            constraints=(f"capture the piece on {chess.square_name(sq_opp)}",))
                return
        # touch-move: first own piece lifted (and put back) while a different piece moved
        moved_from = {move.from_square}
        if pre.is_castling(move):
            moved_from.add(_castling_rook_square(pre, move))
        first = own[0] if own else None
        if (first is not None and first[1] not in moved_from and pre.piece_at(first[1]) == first[2]
                and any(m.from_square == first[1] for m in pre.legal_moves) and replaced is None):
                self.e.findings.raise_finding(outs, "TOUCH_MOVE_SUSPECTED", side, at,
                            [Evidence(at=first[0], event=f"L {chess.square_name(first[1])}")],
                            text=f"{_piece_text(first[2])} on {chess.square_name(first[1])} was lifted first and "
                                 "could move (4.3.1); j'adoube is not observable",
                            constraints=(f"move the piece on {chess.square_name(first[1])}",))

    @staticmethod
    def _king_moves(pre: chess.Board, move: chess.Move) -> bool:
        """The castling *move* moves the king (always in standard chess; not a Chess960 castling by the rook
        alone, II.3.2.4, where the rook first is the normal way)."""
        return _castling_king_square(pre, move) != move.from_square

    def first_touched(self, pre: chess.Board) -> int | None:
        """The square of the first own piece lifted from its square in the mover's segment (4.3), if any."""
        for _, sq, piece in self.g.extra_lifts + self.g.seg_lifts:
            if piece.color == pre.turn and pre.piece_at(sq) == piece:
                return sq
        return None

    def replacement_constraints(self, pre: chess.Board, diff: Diff, code: str = "") -> tuple[str, ...]:
        """Touch-move constraints for the replacement move after reinstatement (§3.7).

        A move released on its square binds (4.7, applied by 7.5.1): a king released on its castling square
        must castle on that side when legal (4.7.2); a pawn released diagonally onto the en passant square
        must capture en passant; a pawn left on the last rank is replaced by a queen from 2014 (7.5.2).
        """
        bound = diff.move if diff.move is not None and diff.move in pre.legal_moves else None
        if bound is not None and code in ("CASTLING_INCOMPLETE_AT_PRESS", "EN_PASSANT_INCOMPLETE_AT_PRESS"):
            castling = code.startswith("CASTLING")
            released = _castling_king_square(pre, bound) if castling else bound.to_square
            if castling and self.g.phys.squares[released] != pre.piece_at(bound.from_square):
                # the king not put down on its castling square (both in hand, or the king beside the board):
                # king and rook touched to castle (4.4.1)
                return (f"{pre.san(bound)} (4.4.1: the king and the rook were touched to castle)",)
            return (f"{pre.san(bound)} ({'4.7.2' if castling else '4.7.1'}: the {'king' if castling else 'pawn'} "
                    f"was released on {chess.square_name(released)})",)
        if bound is not None and diff.subtype == "CASTLING_ILLEGAL" and pre.is_castling(bound) \
                and self._touched_order(pre, diff)[:1] == [bound.from_square]:
            # a castling that is legal, finished with king or rook on a wrong square, the king touched first (or
            # with the rook, inside one scan): king and rook touched to castle, castle on that side (4.4.1)
            return (f"{pre.san(bound)} (4.4.1: the king and the rook were touched to castle)",)
        if code == "PAWN_NOT_REPLACED" and diff.move is not None and self.g.edition >= 2014:
            queen = chess.Move(diff.move.from_square, diff.move.to_square, promotion=chess.QUEEN)
            if queen in pre.legal_moves:
                return (f"{pre.san(queen)} (7.5.2: the pawn is replaced by a queen)",)
        sq = self.replacement_square(pre, diff)
        if sq is not None:
            moves = [m for m in pre.legal_moves if m.from_square == sq]
            touched = pre.piece_at(sq)
            name = _piece_text(touched) if touched else "piece"
            return (f"the {name} on {chess.square_name(sq)} must move: "
                    + ", ".join(sorted(pre.san(m) for m in moves)),)
        why = "the king, touched to castle, has no legal move, 4.4.3" if self._king_stuck_after_castling(pre, diff) \
            else "no touched piece can move, 4.5"
        return (f"any legal move ({why}): " + ", ".join(sorted(pre.san(m) for m in pre.legal_moves)),)

    def _king_stuck_after_castling(self, pre: chess.Board, diff: Diff) -> bool:
        """An illegal castling begun with the king (or king and rook together) and the king has no legal move:
        the player is free to make any legal move (4.4.3); the rook is not bound as a touched piece."""
        if diff.subtype != "CASTLING_ILLEGAL":
            return False
        order = self._touched_order(pre, diff)
        return bool(order) and pre.piece_type_at(order[0]) == chess.KING \
            and not any(m.from_square == order[0] for m in pre.legal_moves)

    def _touched_order(self, pre: chess.Board, diff: Diff) -> list[int]:
        """The squares of the pieces touched (lifted) first, then of the pieces moved."""
        squares: list[int] = []
        times: list[float] = []
        for t, sq, piece in self.g.extra_lifts + self.g.seg_lifts:
            if piece.color == pre.turn and pre.piece_at(sq) == piece and sq not in squares:
                squares.append(sq)
                times.append(t)
        if len(squares) >= 2 and times[1] - times[0] <= self.rules.timing.t_scan \
                and pre.piece_type_at(squares[0]) == chess.ROOK and pre.piece_type_at(squares[1]) == chess.KING:
            # a rook and the king lifted inside one scan: no order (rules-spec §2), touched together (4.4.1),
            # so an intended castling that is illegal binds the king (4.4.3), not the rook as if first (4.4.2)
            squares[0], squares[1] = squares[1], squares[0]
        for origin, _ in diff.relocations:
            if origin not in squares:
                squares.append(origin)
        return squares

    def replacement_square(self, pre: chess.Board, diff: Diff) -> int | None:
        """The square of the piece the replacement move must be made with (4.3.1 via 7.5.1), if any can move.

        The first piece touched (lifted) counts first, then the pieces that were moved: after an illegal
        castling begun with the king, the king (4.4.3: another king move), whatever the square order; if the
        king has no legal move, none (any legal move, 4.4.3).
        """
        if self._king_stuck_after_castling(pre, diff):
            return None
        squares = self._touched_order(pre, diff)
        return next((sq for sq in squares if any(m.from_square == sq for m in pre.legal_moves)), None)
