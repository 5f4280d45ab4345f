"""Two hands (rules-spec §3.3; articles 4.1, 7.5.4): moves made with both hands, castling with two hands."""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _piece_text
from boardd.core.outputs import (
    Evidence,
    Output,
)

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


class TwoHands:
    """Two hands (rules-spec §3.3; articles 4.1, 7.5.4): moves made with both hands, castling with two hands."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules

    def genuine_lifts(self, color: chess.Color | None = None) -> list[tuple[float, int, chess.Piece]]:
        """Lifts of pieces from their official squares, minus scan artefacts (piece seen elsewhere first)."""
        out = []
        for t, sq, piece in self.g.seg_lifts:
            if self.g.index.piece_at(sq) != piece or (color is not None and piece.color != color):
                continue
            if any(p == piece and tp < t and psq != sq for tp, psq, p in self.g.seg_places):
                continue  # new square reported before the old one was cleared (same scan)
            out.append((t, sq, piece))
        return out

    def check_two_hands_lift(self, outs: list[Output], at: float, sq: int, piece: chess.Piece) -> None:
        """R01 (a): two lifts of different pieces within T_simul, at least D_far apart."""
        timing = self.rules.timing
        side = self.g.board.turn
        if piece.color != side:
            return  # R01 (clarified): a captured piece and its capturer are never two-hands evidence
        if self.g.two_hands.get(side) is not None or not self.g.playing or sq in self.g.mask:
            return
        if not self.far_lift_seen(at, sq, side) or self.e.correction.arbiter_hands():
            return
        lifts = self.genuine_lifts()
        if not any(t == at and s == sq for t, s, _ in lifts):
            return
        for t0, sq0, p0 in lifts:
            if sq0 == sq or at - t0 > timing.t_simul or sq0 in self.g.mask or p0.color != side:
                continue
            if chess.square_distance(sq0, sq) < timing.d_far:
                continue
            if self._castling_pair(side, sq0, p0, sq, piece):
                continue  # the king and a rook it may castle with: judged by rule (c), and never in Chess960 (R27)
            self.g.two_hands[side] = self.e.findings.raise_finding(
                outs, "TWO_HANDS_SUSPECTED", side, at,
                [Evidence(at=t0, event=f"L {chess.square_name(sq0)}"),
                 Evidence(at=at, event=f"L {chess.square_name(sq)}")],
                text=f"two lifts {1000 * (at - t0):.0f} ms apart, {chess.square_distance(sq0, sq)} squares apart "
                     "(4.1); a fast single hand cannot be excluded below the scan period")
            return

    def far_lift_seen(self, at: float, sq: int, side: chess.Color) -> bool:
        """Fast path of :meth:`check_two_hands_lift`: is there another lift of *side* in the segment, recent and far
        enough from *sq*? The genuine lifts are a subset of the segment's lifts, so without one the check finds
        nothing (the usual case: one lift in the segment), and the genuine lifts need not be worked out."""
        timing = self.rules.timing
        t_simul, d_far = timing.t_simul, timing.d_far
        return any(sq0 != sq and at - t0 <= t_simul and p0.color == side and chess.square_distance(sq0, sq) >= d_far
                   for t0, sq0, p0 in self.g.seg_lifts)

    def check_two_hands_places(self, outs: list[Output], at: float, sq: int, piece: chess.Piece) -> None:
        """R01 (b): two own pieces put down within T_simul, at least D_far apart."""
        timing = self.rules.timing
        side = self.g.board.turn
        if piece.color != side or not self.g.seg_places or self.g.two_hands.get(side) is not None \
                or not self.g.playing or self.e.correction.arbiter_hands():
            return  # (nothing put down before it in the segment: no pair)
        ghost = self.g.phys.count(piece) > self.g.board.pieces_mask(piece.piece_type, piece.color).bit_count()
        for t0, sq0, p0 in reversed(self.g.seg_places):
            if ghost and p0 == piece:
                continue  # one piece seen on two squares: its new square reported before the old one cleared (§1.5)
            if at - t0 > timing.t_simul:
                break
            if p0.color != side or chess.square_distance(sq0, sq) < timing.d_far or self.g.phys.squares[sq0] != p0:
                continue  # (a piece placed and lifted again was a transit of the same hand)
            if self._king_on_castling_rook(sq0, p0, sq, piece):
                continue  # (the "king takes rook" step of a Chess960 castling and its rook: one castling, R01)
            if self._castling_places(side, sq0, p0, sq, piece):
                continue  # king and rook of a castling put down on its squares (even one finished on wrong ones):
                #           parts of one move, judged by rule (c) as for their lifts, never in Chess960 (R01, R27)
            self.g.two_hands[side] = self.e.findings.raise_finding(
                outs, "TWO_HANDS_SUSPECTED", side, at,
                [Evidence(at=t0, event=f"P {chess.square_name(sq0)} {_piece_text(p0)}"),
                 Evidence(at=at, event=f"P {chess.square_name(sq)} {_piece_text(piece)}")],
                text=f"two pieces put down {1000 * (at - t0):.0f} ms apart, {chess.square_distance(sq0, sq)} "
                     "squares apart (4.1)")
            return

    def _castling_pair(self, side: chess.Color, sq0: int, p0: chess.Piece, sq: int, piece: chess.Piece) -> bool:
        """Pieces on *sq0* and *sq* (official squares) are *side*'s king and a rook on its first rank: the pieces of
        a castling (3.8.2, 4.4.1), a legal one or one whose right is lost (an illegal castling, R04/R16)."""
        if {p0.piece_type, piece.piece_type} != {chess.KING, chess.ROOK}:
            return False
        king_sq, rook_sq = (sq0, sq) if p0.piece_type == chess.KING else (sq, sq0)
        return self._castling_rook(side, king_sq, rook_sq)

    def _castling_rook(self, side: chess.Color, king_sq: int, rook_sq: int) -> bool:
        """*side*'s king on *king_sq* and a rook of its colour on *rook_sq*, both on the player's first rank: the
        pieces castling moves (3.8.2: "a move of the king and either rook of the same colour along the player's
        first rank"), whether the right is kept or lost (then an illegal castling, R04/R16) (:meth:`_castling_pair`)."""
        board = self.g.board
        rank = 0 if side == chess.WHITE else 7
        return board.king(side) == king_sq and chess.square_rank(king_sq) == rank \
            and chess.square_rank(rook_sq) == rank and board.piece_at(rook_sq) == chess.Piece(chess.ROOK, side)

    def _castling_places(self, side: chess.Color, sq0: int, p0: chess.Piece, sq: int, piece: chess.Piece) -> bool:
        """King and rook put down on the squares of their castling: the king and one of its castling rooks lifted
        from their squares (this segment, :meth:`_castling_pair`), both put down on the back rank inside that
        castling's span (its king's and rook's start and castled squares, and between). The places of one hand
        castling in turn (a slide over the squares passed, the king put on the rook's square and then the rook, a
        castling finished on wrong squares of its own: rules-spec R01, R27, docs/chess960-castling.md Ruling 3).
        Any other king and rook — put down off that span, or another rook, or the king off its square — are two
        pieces as any other (R01 (b)): a castling right kept is not a licence for the king and any rook."""
        if {p0.piece_type, piece.piece_type} != {chess.KING, chess.ROOK}:
            return False
        board = self.g.board
        king_from = board.king(side)
        if king_from is None:
            return False
        king_to, rook_to = (sq0, sq) if p0.piece_type == chess.KING else (sq, sq0)
        king, rook = chess.Piece(chess.KING, side), chess.Piece(chess.ROOK, side)
        lifted = {s for _, s, p in self.g.seg_lifts if p in (king, rook)}
        if king_from not in lifted:
            return False
        rank = chess.square_rank(king_from)
        if chess.square_rank(king_to) != rank or chess.square_rank(rook_to) != rank:
            return False
        for rook_from in lifted:
            if not self._castling_rook(side, king_from, rook_from):  # (a rook of side's on its first rank)
                continue
            kingside = rook_from > king_from
            ends = (chess.square(6 if kingside else 2, rank), chess.square(5 if kingside else 3, rank))
            span = [chess.square_file(s) for s in (king_from, rook_from, *ends)]
            if all(min(span) <= chess.square_file(s) <= max(span) for s in (king_to, rook_to)):
                return True
        return False

    def _king_on_castling_rook(self, sq0: int, p0: chess.Piece, sq: int, piece: chess.Piece) -> bool:
        """Chess960: the king put down on the square of its castling rook (the "king takes rook" way, rules-spec
        R27) and that rook put down: parts of one castling (R01 (a) exempts them), the king's place a transit on
        its way to its final square whose lift may come in the same scan as the rook's place (rules-spec §2)."""
        board = self.g.board
        if not board.chess960 or {p0.piece_type, piece.piece_type} != {chess.KING, chess.ROOK}:
            return False
        king_sq = sq0 if p0.piece_type == chess.KING else sq
        return any(board.is_castling(m) and m.to_square == king_sq for m in board.legal_moves)

    def check_two_hands_castling(self, outs: list[Output], at: float, sq: int, piece: chess.Piece) -> None:
        """R01 (c): king and rook taken off the board together (their lifts within T_simul, R01 (a)'s timing) and
        both off for more than one scan while castling, judged when the first of them is put down.

        Both off the board is not two hands on its own: one hand puts the king down beside the board, moves the
        rook, then puts the king on its square (the Chess960 way, Guidelines II.3.2.5.1, which players use in
        standard chess too), or takes the rook off as in a capture and puts the king down on the rook's square
        (the "king takes rook" way): one hand in turn (4.1), the lifts apart by the time the hand needs."""
        side = self.g.board.turn
        if piece.color != side or piece.piece_type not in (chess.KING, chess.ROOK) or self.g.board.chess960:
            return
        if self.g.two_hands.get(side) is not None or not self.g.playing or self.e.correction.arbiter_hands():
            return
        lifts = self.genuine_lifts(side)
        king = next((x for x in lifts if x[2].piece_type == chess.KING), None)
        rook = next((x for x in lifts if x[2].piece_type == chess.ROOK), None)
        if king is None or rook is None or not self._castling_pair(side, king[1], king[2], rook[1], rook[2]):
            return  # (c) is castling's signature: another king and rook are two pieces as any (R01 (a), (b))
        if any(p.piece_type in (chess.KING, chess.ROOK) and p.color == side for _, _, p in self.g.seg_places):
            return  # one of them was already put down
        timing = self.rules.timing
        if abs(king[0] - rook[0]) > timing.t_simul:
            return  # one hand in turn: the king put down beside the board, or held, while the hand fetched the rook
        if piece.piece_type == chess.KING and sq == rook[1]:
            return  # the king put down on the rook's square: "king takes rook", one hand as in a capture (R01)
        both_off = at - max(king[0], rook[0])
        if both_off > timing.t_scan:
            self.g.two_hands[side] = self.e.findings.raise_finding(
                outs, "TWO_HANDS_SUSPECTED", side, at,
                [Evidence(at=king[0], event=f"L {chess.square_name(king[1])}"),
                 Evidence(at=rook[0], event=f"L {chess.square_name(rook[1])}")],
                text=f"king and rook both off the board for {1000 * both_off:.0f} ms (4.1)")

    def knock(self, pre: chess.BaseBoard, side: chess.Color, lifts: list[tuple[float, int, chess.Piece]],
               involved: set[int]) -> bool:
        """R15 knock signature: an own piece not part of the move lifted within T_knock of another change."""
        t_knock = self.rules.timing.t_knock
        events = [(t, s) for t, s, _ in lifts] + [(t, s) for t, s, _ in self.g.seg_places]
        for t, sq, piece in lifts:
            if piece.color != side or sq in involved or pre.piece_at(sq) != piece:
                continue
            if any(abs(t2 - t) <= t_knock and s2 != sq for t2, s2 in events):
                return True
        return False
