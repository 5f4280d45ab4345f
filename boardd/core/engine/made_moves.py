"""Made moves and release (rules-spec §3.4; articles 4.6, 4.7; game end 5, 9.6): the record grows here."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import (
    _Candidate,
    _castling_king_square,
    _castling_rook_square,
    _fen,
    _illegal_position,
)
from boardd.core.engine.modes import PhaseTrigger
from boardd.core.laws.articles import cite_all
from boardd.core.laws.positions import (
    automatic_draw,
    can_claim_threefold,
    is_dead_in_feed,
    push_noting_facts,
    repetition_counts,
)
from boardd.core.outputs import (
    ClockState,
    Completion,
    Evidence,
    GameEvent,
    Irregularity,
    MoveCompleted,
    MoveMade,
    MoveRecord,
    MovesRetracted,
    Output,
    StateChanged,
    Status,
)
from boardd.core.recognizer import DiffClass, PhysicalBoard, PositionIndex, board_key, key_after
from boardd.core.record import PositionKey, note_made_move, position_key, shared_prefix
from boardd.core.settings import Regime

#: The codes of the automatic draws of 9.6 (:func:`boardd.core.laws.positions.automatic_draw`).
_AUTOMATIC_DRAW = {"fivefold": "GAME_END_FIVEFOLD", "seventy-five": "GAME_END_75_MOVES"}

#: What the last mover's hands changing his released move into a capture read as before the capture showed
#: (:meth:`MadeMoves.start_revised`): the opponent starting, the press not made, a change out of turn.
_START_READINGS = frozenset({"OPPONENT_STARTED_BEFORE_MOVE_MADE", "CLOCK_NOT_PRESSED", "OUT_OF_TURN_CHANGE"})


def _promotion_text(first: str, moves: list[str]) -> str:
    """PROMOTION_CHOICE_CHANGED's text: the first piece placed stands (4.4.4), and what it was changed to."""
    if len(moves) == 1:
        return "the first piece placed on the promotion square stands (4.4.4)"
    return f"the first piece placed on the promotion square stands (4.4.4); changed to {', then '.join(moves)}"


def _castling_order_text(first: str, moves: list[str]) -> str:
    """CHESS960_CASTLING_ORDER's text: the lone king (or rook) step released, then the castling completed."""
    return (f"{first} was presumed released, then the rook completed {', then '.join(moves)}: the arbiter checks the "
            "intention (Guidelines II.3)")


if TYPE_CHECKING:
    from boardd.core.clock import ClockModel
    from boardd.core.engine.facade import Engine


@dataclasses.dataclass(slots=True)
class _Released:
    """The first move of a ply presumed released (4.7) and then taken back on the board before it was completed
    (R07): the law-based move while the player thinks again (:meth:`MadeMoves.take_back`)."""

    first: MoveRecord


@dataclasses.dataclass(slots=True)
class _Changed:
    """The ``RELEASED_MOVE_CHANGED`` of a ply not completed yet (R07: one incident of the player, one alert): its
    first released move is the suggestion, a later change of the same ply updates this finding."""

    ply: int
    side: chess.Color
    first: str  # the SAN of the first released legal move of the ply
    finding: Irregularity
    moves: list[str]  # the moves it was changed to, in order


def _illegal_signature(board: chess.Board) -> tuple[int, int, int]:
    """What makes a position illegal in R23's sense: the pawns on the last ranks, and the kings' squares when both
    are in check (the same signature after the next moves: the same illegal position still on the board)."""
    kings = board.kings if _illegal_position(board) == "both kings in check" else 0
    return board.pawns & (chess.BB_RANK_1 | chess.BB_RANK_8), board.occupied_co[chess.WHITE] & board.pawns & \
        (chess.BB_RANK_1 | chess.BB_RANK_8), kings


class MadeMoves:
    """Made moves and release (rules-spec §3.4; articles 4.6, 4.7; game end 5, 9.6): the record grows here."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.pending_position: tuple[str, int] | None = None
        #: the illegal position that persisted (R23: its draw suggested), :func:`_illegal_signature`
        self.persisted: tuple[int, int, int] | None = None
        self.draw_avail = {chess.WHITE: False, chess.BLACK: False}
        #: a candidate (LEGAL(m) on the board) dropped before ``T_settle`` by a change, the official position it
        #: was a move from and whether a captured piece was parked in it (:meth:`replied_before_settled`)
        self.unsettled: tuple[_Candidate, str, bool] | None = None
        #: the index of the position after :attr:`unsettled`'s move, for that very tuple (:meth:`_after_unsettled`)
        self._unsettled_after: tuple[tuple[_Candidate, str, bool], PositionIndex] | None = None
        #: the position after the last move recorded has no legal move (:meth:`_record`, for :meth:`check_game_end`)
        self._no_moves = False
        #: the first released move of the ply being made again, taken back on the board before it was completed
        self.released: _Released | None = None
        #: the move a press completed while it was taken back on the board, and its TAKEBACK_DETECTED
        #: (:meth:`taken_back_at_press`): (its ply, the finding's id)
        self.stood_back: tuple[int, str] | None = None
        #: :meth:`law_moves`: the records counted, and the moves White and Black completed in the first *i* of them
        self._counted: list[MoveRecord] = []
        self._completed: list[tuple[int, int]] = [(0, 0)]
        #: the RELEASED_MOVE_CHANGED raised for the ply being made (updated by a later change, not raised again)
        self.changed: _Changed | None = None
        #: PROMOTION_CHOICE_CHANGED and CHESS960_CASTLING_ORDER raised for the ply being made, by code (the same:
        #: one finding per ply, a later change updating it, :meth:`once_per_ply`)
        self.per_ply: dict[str, _Changed] = {}
        #: without a clock, the engine's clock model before the last made move switched it (ply, model)
        self.model_before: tuple[int, ClockModel] | None = None

    def law_moves(self, color: chess.Color) -> int:
        """Moves *color* has completed by the Laws (6.2.1), counting the moves before a set-up start.

        The count of :func:`completed_moves` over the record, kept record by record (asked at every press:
        issue 12, a walk of the whole game each time): the records already counted are compared with the
        record (:func:`~boardd.core.record.shared_prefix`, at C speed) and only those after the first that
        changed are counted again.
        """
        records = self.g.records
        counted, completed = self._counted, self._completed
        keep = shared_prefix(counted, records)
        if keep < len(counted):
            del counted[keep:], completed[keep + 1:]
        white, black = completed[-1]
        for index in range(keep, len(records)):
            record = records[index]
            if record.completed_at is not None:
                if record.side == chess.WHITE:
                    white += 1
                else:
                    black += 1
            counted.append(record)
            completed.append((white, black))
        return self.g.base_moves[color] + (white if color == chess.WHITE else black)

    def settle(self, outs: list[Output], now: float) -> None:
        cand = self.g.cand
        assert cand is not None
        self.g.cand = None
        g = self.g
        # the opponent's hands on the board after the move stood there, before it settled (kept apart, masked:
        # blitz), not a change out of turn nor one at the same instant (two hands): his lifts and placements are his
        # segment's, not the mover's (touch-move, 4.3)
        since = cand.at
        unsettled = self.unsettled
        if unsettled is not None and unsettled[0].move == cand.move and unsettled[1] == _fen(g.board):
            since = min(since, unsettled[0].at)  # (on the board before, his hand dropped it for a moment)
        theirs = set(g.mask)
        lifts = [x for x in g.seg_lifts if x[1] in theirs]
        places = [x for x in g.seg_places if x[1] in theirs]
        early = bool(theirs) and not g.oot_raised and all(x[0] > since for x in lifts + places)
        if early:
            g.seg_lifts = [x for x in g.seg_lifts if x[1] not in theirs]
            g.seg_places = [x for x in g.seg_places if x[1] not in theirs]
        ply = len(g.records)
        self._settle(outs, cand, now)
        if early and len(g.records) == ply + 1 and g.playing:
            g.seg_lifts, g.seg_places = lifts, places  # (maybe his whole reply:)
            if g.cand is None and g.phys.key() != g.index.key:
                self._judge_reply(outs, now)

    def _judge_reply(self, outs: list[Output], now: float) -> None:
        """The opponent's hands were on the board before the move settled, maybe his whole reply: judged now against
        the position after the move, not only at the next change; a reply complete on the board since the last change
        is a candidate from then (its made time, rules-spec §3.4.1)."""
        g = self.g
        self.e.recognition.evaluate(outs, now, snapshot=False)
        reply = g.cand
        if reply is not None and not reply.replace and g.last_board_t < reply.at:
            g.cand = dataclasses.replace(reply, at=g.last_board_t, deadline=g.last_board_t + self.rules.timing.t_settle)

    def dropped(self, cand: _Candidate) -> None:
        """The board no longer shows the candidate's move before it settled (:meth:`replied_before_settled`)."""
        self.unsettled = None if cand.replace else (cand, _fen(self.g.board), self.g.parked)

    def reply_under_way(self, since: float | None = None) -> bool:
        """The last move's candidate was dropped before it settled and the board, read from the position after it,
        is the opponent's reply under way or done (:meth:`replied_before_settled` will make it as at its settling):
        the opponent's hands since are on his own turn (rules-spec §3.4.1; blitz, or no clock and a quick reply).
        *since*: the candidate's move stood on the board before that time, and whatever the board shows now (a
        piece of the reply set down on its way) the reply may still show."""
        unsettled = self.unsettled
        if unsettled is None:
            return False
        cand, key, _ = unsettled
        if since is not None and cand.at >= since:
            return False
        if key != _fen(self.g.board) or not self.g.board.is_legal(cand.move):
            return False
        after_index = self._after_unsettled(unsettled)
        if since is not None:
            # his pieces where the move left them (one lifted maybe the reply's victim): the mover's own hands are
            # not at work, his move under way is not another one (castling after the rook first)
            mover = self.g.board.turn
            squares = self.g.phys.squares
            after = after_index.board
            return all(not (isinstance(piece, chess.Piece) and piece.color == mover) or after.piece_at(sq) == piece
                       for sq, piece in enumerate(squares))
        return after_index.classify(self.g.phys).kind in (DiffClass.LEGAL, DiffClass.IN_HAND, DiffClass.PARTIAL)

    def _after_unsettled(self, unsettled: tuple[_Candidate, str, bool]) -> PositionIndex:
        """The index of the position after the unsettled candidate's move, made once for that candidate (its
        callers ask it again at the next changes; the caller has seen the board at the candidate's position, *key*).
        The position after a legal move depends on the FEN before it and the move only, so the index made at the
        first call is the index every later call would make."""
        cached = self._unsettled_after
        if cached is not None and cached[0] is unsettled:
            return cached[1]
        after = self.g.board.copy(stack=False)
        after.push(unsettled[0].move)
        index = PositionIndex(after)
        self._unsettled_after = (unsettled, index)
        return index

    def _after_shows(self, unsettled: tuple[_Candidate, str, bool], *, legal: bool) -> bool:
        """Does the board, read from the position after the unsettled candidate's move, show a legal move (*legal*)
        or that position itself? ``_after_unsettled(unsettled).classify(phys).kind`` is ``LEGAL`` (or ``NONE``),
        asked without classifying the other classes, and without making the index while the placement keys already
        say no (a plain move's key after it from the bitboards: the lift that dropped the candidate, issue 12)."""
        phys = self.g.phys
        cached = self._unsettled_after
        if cached is None or cached[0] is not unsettled:
            after = key_after(self.g.board, unsettled[0].move)
            if after is not None:
                key = phys.key()
                if not legal:
                    return key == after and not phys.markers
                # (a fresh index has no targets: LEGAL needs two to four changed squares, PositionIndex.legal_move)
                changed = ((key[0] ^ after[0]) | (key[1] ^ after[1]) | (key[2] ^ after[2]) | (key[3] ^ after[3])
                           | (key[4] ^ after[4]) | (key[5] ^ after[5]) | (key[6] ^ after[6]) | (key[7] ^ after[7]))
                if phys.markers or not 2 <= changed.bit_count() <= 4:
                    return False
        index = self._after_unsettled(unsettled)
        if not legal:
            return phys.key() == index.key and not phys.markers
        return index.legal_move(phys) is not None

    def touched_back_before_settled(self, outs: list[Output], at: float) -> bool:
        """The last move's candidate was dropped before it settled by a lift of the opponent's piece (one the move
        could have captured: read as the mover's capture under way), and the board shows that move again, the
        piece put back on its square, nothing of the mover's touched since: the move stood on its squares all the
        while (rules-spec §3.4.1: made once its squares stand ``T_settle``, whatever changes elsewhere), so it is
        made as at its own placement, and the opponent's lift and placement since are his segment's (his touch,
        4.3, his clock's time: no clock or a quick touch inside ``T_settle``). True if so."""
        unsettled = self.unsettled
        g = self.g
        if unsettled is None:
            return False
        cand, key, _ = unsettled
        mover = g.board.turn
        if key != _fen(g.board) or g.cand is not None or g.mask:
            return False
        if not self._after_shows(unsettled, legal=False):
            return False
        since = [x for x in (*g.seg_lifts, *g.seg_places) if x[0] > cand.at]
        if not since or any(piece.color == mover for _, _, piece in since):
            return False
        return self.replied_before_settled(outs, at, touched_back=True)

    def replied_before_settled(self, outs: list[Output], at: float, *, touched_back: bool = False) -> bool:
        """Blitz: the opponent replied before the last move settled (rules-spec §3.4.1: ``T_settle``), capturing
        the piece just set down (a change on its square: the candidate dropped) or starting at once. The board
        shows the official position plus that move plus a legal reply to it: both were played (the opponent's
        reply shows the first one was released, 4.7). The first is made as at its settling, with the times of
        its own placement; the board is then judged against the position after it (the reply a candidate), the
        opponent's lifts and placements since that placement his segment's. True if so."""
        unsettled = self.unsettled
        if unsettled is None:
            return False
        cand, key, parked = unsettled
        if key != _fen(self.g.board):
            self.unsettled = None
            return False
        if not self._after_shows(unsettled, legal=not touched_back):
            return False  # (asked before the legality, which is the same for as long as the position is: issue 12)
        if not self.g.board.is_legal(cand.move):
            self.unsettled = None
            return False
        self.unsettled = None
        g = self.g
        early = self.e.recognition.early_pending
        if early is not None and early[0] > cand.at:
            # what was held as the opponent starting before the move was made came after it stood on the board:
            # his reply, which shows the move was released (4.7), not an early start (one incident, none here)
            self.e.recognition.early_pending = None
        lifts = [x for x in g.seg_lifts if x[0] > cand.at]
        places = [x for x in g.seg_places if x[0] > cand.at]
        evidence = [x for x in g.seg_evidence if x.at > cand.at]
        g.seg_lifts = [x for x in g.seg_lifts if x[0] <= cand.at]
        g.seg_places = [x for x in g.seg_places if x[0] <= cand.at]
        g.seg_evidence = [x for x in g.seg_evidence if x.at <= cand.at]
        g.cand = None
        g.parked = parked  # (the opponent's piece lifted since, that the move could have captured, is his own)
        self._settle(outs, cand, at)
        if len(g.records) and g.records[-1].uci == cand.move.uci() and g.playing:
            g.seg_lifts, g.seg_places, g.seg_evidence = lifts, places, evidence
        return True

    def _settle(self, outs: list[Output], cand: _Candidate, now: float) -> None:
        correction = self.e.correction
        if correction.defers(cand.move, replace=cand.replace):
            # maybe a restoration's hands: made (never lost), its publication waits (Correction.hold_back)
            made: list[Output] = []
            if cand.replace:
                self.replace_last(made, cand.move, cand.at)
            else:
                self.make(made, cand.move, cand.at, completed=False)
            correction.hold_back(outs, made, cand.at)
            return
        outs += correction.confirmed_by_play(now)  # a move that is no such state: the ones waiting were moves
        if cand.replace:
            self.replace_last(outs, cand.move, cand.at)
            return
        self.make(outs, cand.move, cand.at, completed=False)

    def replace_last(self, outs: list[Output], move: chess.Move, at: float) -> None:
        """R07: the last mover changed his made move before the opponent started."""
        old = self.g.records[-1]
        ply = len(self.g.records) - 1
        self.g.board.pop()
        self.g.records.pop()
        self.g.keys.pop()
        outs.append(MovesRetracted(at=at, to_ply=ply, reason="released move changed"))
        lifts = self.g.prev_lifts + self.g.seg_lifts
        self.g.seg_lifts = lifts
        base = self.g.board.copy(stack=False)
        self.make(outs, move, at, completed=False, replaced=old)
        self._released_changed(outs, old, move, base, at)

    def hands_on_released(self) -> bool:
        """Post-made (the last mover's move made, not completed, the opponent not started): the piece the made move
        put down is off its square and the board, read from the position before that move, is a move of the last
        mover under way or made (in hand, partial, legal). His hand is on his released move (R07): a piece of the
        opponent's lifted meanwhile is the victim of his changed move (a capture), not the opponent starting (1.3),
        until the board says otherwise."""
        g = self.g
        if not g.board.move_stack:
            return False
        last = g.board.peek()
        if g.phys.squares[last.to_square] == g.index.piece_at(last.to_square):
            return False
        mover = not g.board.turn
        if g.index.capture_targets >> last.to_square & 1 and sum(
                1 for p in g.phys.squares if isinstance(p, chess.Piece) and p.color == mover) \
                >= chess.popcount(g.board.occupied_co[mover]) - 1:
            return False  # a piece the opponent can capture lifted, no other of the mover's in hand: his capture
        base = self.e.recognition.base_index()
        return base.classify(g.phys).kind in (DiffClass.IN_HAND, DiffClass.PARTIAL, DiffClass.LEGAL) \
            or self.changing_from_base()

    def changing_from_base(self) -> bool:
        """The last mover's made move is not completed and the board, read from the position before it, is another
        move of his under way (in hand, partial): the opponent's piece lifted meanwhile may yet be its victim, so an
        early start of the opponent's waits (:meth:`start_revised` if the capture shows)."""
        g = self.g
        mover = not g.board.turn
        if not g.board.move_stack or g.uncompleted.get(mover) != len(g.records):
            return False
        base = self.e.recognition.base_index()
        under_way = (DiffClass.IN_HAND, DiffClass.PARTIAL)
        if base.classify(g.phys).kind in under_way:
            return True
        # the made move not taken back yet: its pieces still where they were released or in the hand, the piece it
        # captured not put back yet (from beside the board, any time): read as if they were back
        last = g.board.peek()
        before = base.board
        if before.chess960 and before.is_castling(last):
            return False
        parts = [(last.from_square, last.to_square)]
        if before.is_castling(last):
            rook_from = _castling_rook_square(before, last)
            king_to = _castling_king_square(before, last)
            rank = chess.square_rank(last.from_square)
            parts = [(last.from_square, king_to),
                     (rook_from, chess.square(5 if before.is_kingside_castling(last) else 3, rank))]
        victim = chess.square(chess.square_file(last.to_square), chess.square_rank(last.from_square)) \
            if before.is_en_passant(last) else last.to_square
        captured = before.piece_at(victim) if before.is_capture(last) and not before.is_castling(last) else None
        # a piece still standing where it was released is read back only when another of the opponent's pieces is
        # off its square (the victim lifted of a capture under way) and a press is to complete the move; otherwise
        # another relocation of his is a move on the opponent's turn (R13, WhoseChange.moved_twice; without a clock
        # a capture by another piece with the released one still standing reads so), not this change
        them = not before.turn
        victim_lifted = self.e.presses.press_expected(len(g.records)) and any(
            sq != victim and g.phys.squares[sq] != before.piece_at(sq)
            for sq in chess.SquareSet(before.occupied_co[them]))
        undone = PhysicalBoard(g.phys.base_board())
        for origin, dest in parts:
            if undone.squares[origin] is not None:
                continue  # back already (or something else there)
            if undone.squares[dest] == g.index.piece_at(dest):
                if not victim_lifted:
                    continue
                undone.set(dest, None)
            undone.set(origin, before.piece_at(origin))
        if captured is not None and undone.squares[victim] is None:
            undone.set(victim, captured)
        return undone.key() != g.phys.key() and base.classify(undone).kind in (*under_way, DiffClass.LEGAL)

    def start_revised(self, outs: list[Output], at: float) -> None:
        """What read as the opponent starting since the last move was made (a lift of his piece, maybe the piece
        put down there) was the last mover capturing it with his released move changed (R07, 4.7): one incident,
        his. The opponent's segment is not started, the squares kept apart are the mover's, and what those readings
        raised for this ply (the opponent's early start, the press not made, a change out of turn) is withdrawn."""
        g = self.g
        g.opp_started = False
        g.start_pending = None
        g.mask.clear()
        g.oot_raised = False
        g.opp_early_raised = False
        self.e.recognition.early_pending = None
        self.e.recognition.opp_early = None
        self.e.recognition.illegal_seen = None  # (no reply of the opponent's under way to complete anything)
        self.e.whose_change.twice = None
        ply = len(g.records)
        made_at = g.records[-1].made_at
        for irr in list(g.irr.values()):
            if irr.code in _START_READINGS and irr.ply == ply and irr.t_raised >= made_at \
                    and irr.status is not Status.RESOLVED:
                self.e.findings.update_finding(outs, dataclasses.replace(
                    irr, status=Status.RESOLVED,
                    ruling="withdrawn: the last mover changed his released move (4.7), capturing the piece lifted"))

    def _released_changed(self, outs: list[Output], old: MoveRecord, move: chess.Move, base: chess.Board,
                          at: float) -> None:
        """R07: *move* made from *base* after *old* was presumed released: the first released move stands (4.7).
        Raised once for the ply: after the first released move was taken back on the board (:meth:`take_back`), it
        is the suggestion whatever was released in between."""
        side = base.turn
        released = self.released
        if released is not None and released.first.ply == old.ply and released.first.side == side:
            old = released.first
        old_move = chess.Move.from_uci(old.uci)
        rank = chess.square_rank(move.from_square)
        halves = ((move.from_square, _castling_king_square(base, move)),  # the king onto its castling square
                  (move.to_square, chess.square(5 if base.is_kingside_castling(move) else 3, rank))  # the rook
                  ) if base.is_castling(move) else ()
        if base.chess960 and halves and (old_move.from_square, old_move.to_square) == halves[0]:
            # R27: a lone king step next to its start onto its castling square, then the rook: the double-move
            # castling (Guidelines II.3.2.1, a king move followed by a rook move; F.3 b.1). The rook released first
            # on its square, then the king, is the 4.4.2 case (CASTLING_ROOK_FIRST, TouchMove) and that rook move
            # was made (4.7): a released move changed, as in standard chess (T04); so is a king or rook released
            # elsewhere first (a slide that stopped)
            now = base.san(move)
            self.once_per_ply(outs, "CHESS960_CASTLING_ORDER", ply=old.ply, side=side, at=at,
                              evidence=self.g.seg_evidence[-4:], move=None, now=now,
                              text=_castling_order_text, first=old.san)
            return
        if old_move.promotion and move.promotion and old_move.to_square == move.to_square:
            # the promoted piece lifted off its square read as the opponent starting (a capture of it): it was the
            # mover's hand changing his piece (4.4.4), his incident; what that reading raised is withdrawn
            for irr in list(self.g.irr.values()):
                if irr.code in _START_READINGS and irr.ply == old.ply and irr.t_raised >= old.made_at \
                        and irr.status is not Status.RESOLVED:
                    self.e.findings.update_finding(outs, dataclasses.replace(
                        irr, status=Status.RESOLVED,
                        ruling="withdrawn: the last mover changed the piece of his promotion (4.4.4)"))
            self.once_per_ply(outs, "PROMOTION_CHOICE_CHANGED", ply=old.ply, side=side, at=at,
                              evidence=self.g.seg_evidence[-4:], move=old.san, now=base.san(move),
                              text=_promotion_text)
        self.released_move_changed(outs, old, base.san(move), side, at)

    def released_move_changed(self, outs: list[Output], old: MoveRecord, now: str, side: chess.Color, at: float,
                              *, reinstate_ply: int | None = None) -> None:
        """``RELEASED_MOVE_CHANGED`` for ply ``old.ply`` changed into *now* (a move's SAN, or what the board shows at
        a press): once for the ply (R07: one incident of the player), the first released legal move the suggestion.
        A later change of the same ply updates that finding (its evidence and text) instead of raising another."""
        known = self.changed
        found = None if known is None else self.g.irr.get(known.finding.id, known.finding)
        if known is not None and found is not None and known.ply == old.ply and known.side == side \
                and found.status is not Status.RESOLVED:
            known.moves.append(now)
            seen = set(found.evidence)
            evidence = found.evidence + tuple(x for x in self.g.seg_evidence[-6:] if x not in seen) \
                + (Evidence(at=at, event=f"changed to {now}"),)
            text = cite_all(self._changed_text(known.first, known.moves), self.g.edition)  # (as raise_finding)
            suggestion = dataclasses.replace(found.suggestion, text=text, reinstate_ply=reinstate_ply
                                             if reinstate_ply is not None else found.suggestion.reinstate_ply)
            update = dataclasses.replace(found, evidence=evidence, suggestion=suggestion)
            known.finding = update
            self.e.findings.update_finding(outs, update)
            return
        first = old.san if known is None or known.ply != old.ply or known.side != side else known.first
        irr = self.e.findings.raise_finding(outs, "RELEASED_MOVE_CHANGED", side, at, self.g.seg_evidence[-6:],
                                            move=first, text=self._changed_text(first, [now]),
                                            reinstate_ply=reinstate_ply)
        self.changed = _Changed(old.ply, side, first, irr, [now])

    def once_per_ply(self, outs: list[Output], code: str, *, ply: int, side: chess.Color, at: float,
                     evidence: list[Evidence], move: str | None, now: str,
                     text: Callable[[str, list[str]], str], first: str | None = None) -> None:
        """*code* for ply *ply* changed into *now* (a move's SAN): once for the ply (R05, R27; one incident of the
        player, one alert), as ``RELEASED_MOVE_CHANGED`` (:meth:`released_move_changed`): the first finding's
        suggestion (*move*) stands, a later change of the same ply updates it (its evidence and text). *text* makes
        the text from the first move (*first*, default *move*) and the moves it was changed to."""
        known = self.per_ply.get(code)
        found = None if known is None else self.g.irr.get(known.finding.id, known.finding)
        if known is not None and found is not None and known.ply == ply and known.side == side \
                and found.status is not Status.RESOLVED:
            known.moves.append(now)
            seen = set(found.evidence)
            words = text(known.first, known.moves)
            update = dataclasses.replace(
                found, evidence=found.evidence + tuple(x for x in evidence if x not in seen)
                + (Evidence(at=at, event=f"changed to {now}"),),
                suggestion=dataclasses.replace(found.suggestion, text=cite_all(words, self.g.edition)
                                               if self.g.edition < 2018 else words))
            known.finding = update
            self.e.findings.update_finding(outs, update)
            return
        start = first if first is not None else (move or "")
        irr = self.e.findings.raise_finding(outs, code, side, at, evidence, move=move, text=text(start, [now]))
        self.per_ply[code] = _Changed(ply, side, start, irr, [now])

    @staticmethod
    def _changed_text(first: str, moves: list[str]) -> str:
        if len(moves) == 1:
            return f"{first} was presumed released; the first released move stands (4.7)"
        return (f"{first} was presumed released, then changed to {', then '.join(moves)}; the first released move "
                "stands (4.7)")

    def make(self, outs: list[Output], move: chess.Move, at: float, *, completed: bool,
             completion: Completion | None = None, press_at: float | None = None,
             replaced: MoveRecord | None = None, recovered: bool = False,
             clock: ClockState | None = None) -> MoveRecord:
        """A made move (§3.4): into the record, the made-time findings, then the opponent has the move (1.3)."""
        board = self.g.board
        side = board.turn
        released = self._taken_back(side)
        changed = released.first if released is not None and replaced is None \
            and released.first.uci != move.uci() else None
        replaced = replaced or changed  # (a different move after the released one was taken back, R07)
        self.e.correction.on_move_made(outs, side, at)
        san = board._algebraic_without_suffix(move)  # the check or mate suffix once the move is on the board
        san_at = position_key(board)
        pre_lifts = list(self.g.seg_lifts)
        pre_board = board.copy(stack=False)
        self.complete_previous(outs, side, at, recovered=recovered)
        rec = self._record(outs, move, san, side, at=at, clock=clock, san_at=san_at)
        touch_done = self._illegal_corrected(outs, move, pre_board, side, at, replaced=replaced)
        touch_done = self._replacement_and_promotion(outs, move, pre_board, side, at, replaced=replaced,
                                                     recovered=recovered) or touch_done
        if recovered:
            touch_done = True
            self.g.castle_released = None
            pre_lifts = []
        if not touch_done:
            self.e.touch_move.check_touch_rules(outs, pre_board, move, side, at=at, lifts=pre_lifts, replaced=replaced)
        self._castling_and_knock(outs, move, pre_board, lifts=pre_lifts, side=side, at=at, replaced=replaced)
        self._next_segment(outs, side, pre_lifts, at)
        ended = self.check_game_end(outs, rec, at, no_moves=self._no_moves)
        if ended:
            pass
        elif completed:
            self.complete(outs, rec.ply, press_at if press_at is not None else at,
                          completion or Completion.PRESS, clock=clock)
        else:
            self.g.uncompleted[side] = rec.ply
        if changed is not None:
            self._released_changed(outs, changed, move, pre_board, at)
        outs.append(StateChanged(at=at))
        return rec

    def _taken_back(self, side: chess.Color) -> _Released | None:
        """The first released move of the ply *side* is making now, if it was taken back on the board."""
        released = self.released
        if released is None or released.first.side != side or released.first.ply != len(self.g.records) + 1:
            return None
        return released

    def take_back(self, outs: list[Output], at: float) -> bool:
        """R07: the board shows the position before the last mover's made move, not completed (no press; without
        a clock, not completed by his next move), and stood there ``T_settle`` (a slide or a flicker does not): the
        move is taken back on the board. What is published follows the board: the move leaves the record
        (``MovesRetracted``) and the player has the move again, his segment and his time (the engine's clock model
        without a clock) from when he got it, since the time until the press is the mover's (6.2.1). The first
        released move is remembered (4.7: it stands): a different move made now is ``RELEASED_MOVE_CHANGED`` with
        it as the suggestion (once for the ply); the same move made again is recorded once, made when it is put
        down again; a press with the move still taken back completed that move by the Laws (6.2.1): a takeback,
        ``TAKEBACK_DETECTED`` (:meth:`taken_back_at_press`). True if taken back."""
        g = self.g
        g.undo_due = None
        if not self._undoable():
            return False
        rec = g.records[-1]
        if self.released is None or self.released.first.ply != rec.ply:
            self.released = _Released(rec)
        lifts, places = g.prev_lifts + g.seg_lifts, list(g.seg_places)
        self.e.restoration.retract_to(outs, rec.ply - 1, at, "released move taken back on the board before it was "
                                                              "completed (R07)")
        self.e.correction.taken_back(rec.ply)
        if rec.emt is not None:
            g.seg_start = rec.made_at - rec.emt
        g.seg_lifts, g.seg_places = lifts, places  # (touch-move: what the player touched for this move, 4.3)
        saved = self.model_before
        if saved is not None and saved[0] == rec.ply and g.model is not None and self.e.clock_readings.keeps_time():
            g.model = saved[1]  # his clock ran on: the switch at the made move is undone
            self.e.clock_readings.model_clock(at, rec.side)
        self.model_before = None
        return True

    def _undoable(self) -> bool:
        """The board shows the position before the last move, made by the side without the move and not completed
        (whoever seemed to start since: the captured piece put back is the mover's hand as well)."""
        g = self.g
        ply = g.uncompleted.get(not g.board.turn)
        return g.playing and ply is not None and ply == len(g.records) and bool(g.board.move_stack) \
            and g.records[-1].completed_at is None and g.cand is None and not g.mask and g.phys.key() == g.keys[-2]

    def undo_pending(self, back: int, at: float) -> bool:
        """The board shows the position of ply *back*: if that is the position before the last move, not completed
        (:meth:`_undoable`), it is taken back if it stands ``T_settle`` (:meth:`take_back`), not a takeback of
        completed moves (R29). True if so (the timer is set)."""
        if back != len(self.g.records) - 1 or not self._undoable():
            return False
        self.g.undo_due = at + self.rules.timing.t_settle
        return True

    def taken_back_at_press(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence) -> bool:
        """A press by *side* with his released move taken back on the board (:meth:`take_back`) and no move made
        since: the press completed the released move (4.7, 6.2.1), then gone from the board: ``TAKEBACK_DETECTED``
        (R29) instead of a press without a move. True if so."""
        released = self._taken_back(side)
        if released is None:
            return False
        self.released = None
        rec = released.first
        finding = self.e.findings.raise_finding(outs, "TAKEBACK_DETECTED", side, at,
                    [*self.g.seg_evidence[-3:], ev],
                    text=f"{rec.san} was presumed released, taken back on the board and the clock pressed without a "
                         "move. Under the Laws a released legal move stands (4.7): the record keeps it, completed "
                         "by this press (6.2.1), until the arbiter rules",
                    move=rec.san, reinstate_ply=rec.ply)
        outs.append(GameEvent(at=at, type="TAKEBACK_DETECTED", details={"to_ply": rec.ply - 1, "moves": [rec.san]}))
        # 4.7, R29: the released move stands and the press completed it (6.2.1): it enters the record again as it
        # was made (released then, the same move time), completed now; the board shows the position before it
        # until the move is put back or the arbiter rules (the finding's reinstate_ply is the position after it)
        again = self.make(outs, chess.Move.from_uci(rec.uci), rec.made_at, completed=True,
                          completion=Completion.PRESS, press_at=at, recovered=True)
        self.stood_back = (again.ply, finding.id)
        return True

    def stands_taken_back(self, ply: int) -> bool:
        """The board shows the position of *ply*, the one before the last move, which a press completed while it
        was taken back (:meth:`taken_back_at_press`): flagged already (``TAKEBACK_DETECTED``, open), the record
        keeping the move (4.7), not a new takeback of the players'."""
        stood = self.stood_back
        g = self.g
        if stood is None or stood[0] != len(g.records) or ply != stood[0] - 1:
            return False
        irr = g.irr.get(stood[1])
        return irr is not None and irr.status is not Status.RESOLVED

    def putting_back(self, squares: list[int]) -> bool:
        """The squares are the last move's, which stands taken back (:meth:`stands_taken_back`): the move being
        put back on the board (the player's hands or the arbiter's ruling), not a change out of turn."""
        g = self.g
        if not squares or not self.stands_taken_back(len(g.records) - 1):
            return False
        base = self.e.recognition.base_index()
        return all(base.piece_at(sq) != g.index.piece_at(sq) for sq in squares)

    def complete_previous(self, outs: list[Output], side: chess.Color, at: float, *, recovered: bool) -> None:
        """The player's previous move, not completed yet, is completed now by this move (6.2.1.2)."""
        prev_ply = self.g.uncompleted.pop(side, None)
        if prev_ply is not None and prev_ply <= len(self.g.records):
            self.complete(outs, prev_ply, at, Completion.NEXT_MOVE)
            if self.e.presses.press_expected(prev_ply) and not recovered:
                self.e.findings.raise_finding(outs, "MOVE_COMPLETED_WITHOUT_PRESS", side, at, [],
                            text=f"{self.g.records[prev_ply - 1].san} completed by the player's next move (6.2.1.2)",
                            incident=self.e.correction.replacement_incident(prev_ply - 1))

    def _record(self, outs: list[Output], move: chess.Move, san: str, side: chess.Color, *, at: float,
                clock: ClockState | None, san_at: PositionKey) -> MoveRecord:
        """The move on the official board and in the record (``MoveMade``); the clock model switches.

        *san* is python-chess's SAN of *move* without its check suffix, worked out in the position *san_at*.
        """
        board = self.g.board
        before = position_key(board)
        index = self.g.index
        # the SAN of this position, and the move legal as python-chess says (the position's index answers as
        # board.is_legal, its part kept): the record's PGN then takes this SAN (record.note_made_move) instead of
        # working the move out again
        legal = san_at == before and position_key(index.board) == before and index.is_legal(move)
        push_noting_facts(board, move)
        # python-chess's SAN pushes the move to test for check and mate, then pops it: asked here of the move
        # pushed once, and the legal-move probe kept for the game-end test (check_game_end)
        check = board.is_check()
        self._no_moves = no_moves = not any(board.generate_legal_moves())
        if check:
            san += "#" if no_moves else "+"
        if self.g.model is not None and self.g.model_started and self.e.clock_readings.keeps_time():
            self.model_before = (len(self.g.records) + 1, self.g.model.snapshot())
            self.g.model.press(side, at)
            self.e.clock_readings.model_clock(at, board.turn)
        emt = max(0.0, at - self.g.seg_start)
        shown = self.g.clock if clock is None else clock
        rec = MoveRecord(ply=len(self.g.records) + 1, uci=move.uci(), san=san, side=side, fen_after=_fen(board),
                         made_at=at, clock_white=shown.white, clock_black=shown.black, emt=emt)
        self.g.records.append(rec)
        if legal:
            note_made_move(before, rec.uci, move, san)
        if self.released is not None and self.released.first.ply != rec.ply:
            self.released = None  # (the record went on past that ply)
        if self.changed is not None and self.changed.ply != rec.ply:
            self.changed = None
        self.per_ply = {code: known for code, known in self.per_ply.items() if known.ply == rec.ply}
        self.e.recognition.rebuild_index()
        self.g.keys.append(self.g.index.key)
        if self.g.clock_down:
            self.g.clockless.add(rec.ply)
        outs.append(MoveMade(move=rec))
        return rec

    def _illegal_corrected(self, outs: list[Output], move: chess.Move, pre_board: chess.Board, side: chess.Color,
                           at: float, *, replaced: MoveRecord | None) -> bool:
        """A parked capture, an illegal placement corrected before the press (and with which piece, 4.3).

        Returns whether a touch-move finding was raised (the Article 4 heuristics then stay quiet).
        """
        if self.g.parked and pre_board.is_capture(move):
            self.e.findings.raise_finding(outs, "CAPTURED_PIECE_PARKED", side, at, self.g.seg_evidence[-6:],
                        text="the captured piece was put down on another square during the move, then taken off")
        self.g.parked = False
        touch_done = False
        if self.g.illegal_settled is not None and not replaced:
            t_ill, ill = self.g.illegal_settled
            self.e.findings.raise_finding(outs, "ILLEGAL_PLACEMENT_CORRECTED", side, at,
                        [Evidence(at=t_ill, event=f"P {chess.square_name(ill.to_square)}")],
                        text="illegal placement corrected before the press: no penalty")
            if self.g.illegal_settled != self.g.illegal_unseen and move.from_square != ill.from_square and any(
                    m.from_square == ill.from_square for m in pre_board.legal_moves):
                touch_done = True
                self.e.findings.raise_finding(outs, "TOUCH_MOVE_VIOLATION", side, at,
                            [Evidence(at=t_ill, event=f"L {chess.square_name(ill.from_square)}")],
                            text="the correction was made with a different piece although the touched piece can "
                                 "move (4.3, 7.5.1)",
                            constraints=(f"move the piece on {chess.square_name(ill.from_square)}",))
        self.g.illegal_settled = None
        self.g.illegal_state = None
        self.g.illegal_unseen = None
        return touch_done

    def _replacement_and_promotion(self, outs: list[Output], move: chess.Move, pre_board: chess.Board,
                                   side: chess.Color, at: float, *, replaced: MoveRecord | None,
                                   recovered: bool) -> bool:
        """The E2009 promotion order, the replacement move after a reinstatement (§3.7), the promotion choice.

        Returns whether a touch-move finding was raised.
        """
        touch_done = False
        if self.g.edition == 2009 and move.promotion and not any(
                p[1] == move.to_square and p[2].piece_type == chess.PAWN for p in self.g.seg_places):
            self.once_per_ply(outs, "PROMOTION_ORDER_2009", ply=len(self.g.records), side=side, at=at,
                              evidence=self.g.seg_evidence[-4:], move=None, now=pre_board.san(move),
                              text=lambda _first, _moves: "E2009: the pawn was not exchanged on the promotion square "
                                                     "(3.7 e, 4.6 c): arbiter")
        due = self.g.replacement_due
        if due is not None and len(self.g.records) - 1 == due[1] and not recovered:
            self.g.replacement_due = None
            moved = {move.from_square}
            if pre_board.is_castling(move):
                moved.add(_castling_rook_square(pre_board, move))
            if due[2] not in moved:
                touch_done = True
                self.e.findings.raise_finding(outs, "TOUCH_MOVE_VIOLATION", side, at, self.g.seg_evidence[-4:],
                            text=f"the replacement move after the reinstatement ({due[0]}) was made with another "
                                 f"piece although the piece on {chess.square_name(due[2])} can move (4.3, 7.5.1)",
                            constraints=(f"move the piece on {chess.square_name(due[2])}",))
        queen = self._queen_due(move, pre_board, side) if move.promotion and not recovered else None
        if queen is not None:
            touch_done = True
            self.e.findings.raise_finding(outs, "TOUCH_MOVE_VIOLATION", side, at, self.g.seg_evidence[-4:],
                        incident=queen[0], related=(queen[0],), move=queen[1],
                        text=f"the replacement move after the reinstatement ({queen[0]}) is {pre_board.san(move)}: "
                             f"the pawn left on the last rank is replaced by a queen, {queen[1]} "
                             f"({'7.5 a' if self.g.edition == 2014 else '7.5.2'})",
                        constraints=(f"{queen[1]} (the pawn is replaced by a queen)",))
        if move.promotion and not replaced and not recovered:
            first_piece = next((p for _, sq, p in self.g.seg_places if sq == move.to_square and p.color == side
                                and p.piece_type not in (chess.PAWN, chess.KING)), None)
            if first_piece is not None and first_piece.piece_type != move.promotion:
                first_move = chess.Move(move.from_square, move.to_square, promotion=first_piece.piece_type)
                self.once_per_ply(outs, "PROMOTION_CHOICE_CHANGED", ply=len(self.g.records), side=side, at=at,
                                  evidence=self.g.seg_evidence[-4:],
                                  move=pre_board.san(first_move) if first_move in pre_board.legal_moves else None,
                                  now=pre_board.san(move), text=_promotion_text)
        return touch_done

    def _queen_due(self, move: chess.Move, pre_board: chess.Board, side: chess.Color) -> tuple[str, str] | None:
        """From 2014 the move replacing a pawn left on the last rank (7.5.2), after the position before it was
        reinstated, is that pawn's promotion to a queen: (the finding, the queen move) when *move* is another
        promotion, else None (E2009: the choice is open, 7.4 a via 4.3/4.6)."""
        if self.g.edition < 2014:
            return None
        replaced = self.e.correction.replaced(len(self.g.records) - 1)
        irr = self.g.irr.get(replaced[0]) if replaced is not None and replaced[1] == side else None
        if irr is None or irr.code != "PAWN_NOT_REPLACED" or irr.suggestion.move is None:
            return None
        queen = pre_board.parse_san(irr.suggestion.move)
        if queen == move or queen.from_square != move.from_square:
            return None
        return irr.id, irr.suggestion.move

    def _castling_and_knock(self, outs: list[Output], move: chess.Move, pre_board: chess.Board, *,
                            lifts: list[tuple[float, int, chess.Piece]], side: chess.Color, at: float,
                            replaced: MoveRecord | None) -> None:
        """A castling king released but another move made (4.7.2); a piece knocked and restored (7.4)."""
        if self.g.castle_released is not None and move != self.g.castle_released[1] and replaced is None:
            t_rel, _, castle_san = self.g.castle_released
            king_sq = chess.square_name(_castling_king_square(pre_board, self.g.castle_released[1]))
            self.e.findings.raise_finding(outs, "CASTLING_KING_RELEASED_NOT_COMPLETED", side, at,
                        [Evidence(at=t_rel, event=f"P {king_sq} {'w' if side else 'b'}K")], move=castle_san,
                        text=f"the king was presumed released on {king_sq}: {castle_san} is required if legal, "
                             "otherwise another king move (4.7.2)")
        involved = {move.from_square, move.to_square}
        if pre_board.is_castling(move):
            involved |= {_castling_rook_square(pre_board, move)}
        if self.e.two_hands.knock(pre_board, side, lifts, involved):
            self.e.findings.raise_finding(outs, "DISPLACED_PIECES", side, at, self.g.seg_evidence[-6:],
                        text="a piece was knocked during the move and restored before the press (7.4)")

    def _next_segment(self, outs: list[Output], side: chess.Color, pre_lifts: list[tuple[float, int, chess.Piece]],
                      at: float) -> None:
        """The opponent now has the move (1.3): a new segment; the mover's claim windows close (R22)."""
        self.g.two_hands.pop(not side, None)
        self.g.prev_lifts = pre_lifts
        self.g.opp_early_raised = False
        self.e.recognition.early_pending = None
        self.g.castle_king = None
        self.g.castle_released = None
        self.e.clock_readings.new_segment(at)
        self.g.promo_seen = False
        self.g.pressed_no_move = None if self.g.pressed_no_move == side else self.g.pressed_no_move
        self.e.findings.close_claim_windows(outs, side, at)

    def complete(self, outs: list[Output], ply: int, at: float, how: Completion,
                  clock: ClockState | None = None) -> None:
        """Complete *ply*; its clock times are *clock* (default: the clock now)."""
        rec = self.g.records[ply - 1]
        if rec.completed_at is not None:
            return
        shown = self.g.clock if clock is None else clock
        rec = dataclasses.replace(rec, completed_at=at, completion=how, clock_white=shown.white,
                                  clock_black=shown.black)
        self.g.records[ply - 1] = rec
        if self.g.uncompleted.get(rec.side) == ply:
            del self.g.uncompleted[rec.side]
        if self.released is not None and self.released.first.ply == ply:
            self.released = None  # completed: what was released on the way is the record's history now
        if how is not Completion.GAME_END:
            self._first_piece_due(ply)
            # completed: a later change is another move's (a change that ends the game still updates its ply's)
            if self.changed is not None and self.changed.ply == ply:
                self.changed = None
            self.per_ply = {code: known for code, known in self.per_ply.items() if known.ply != ply}
        outs.append(MoveCompleted(move=rec))
        self.after_completion(outs, rec, at)

    def _first_piece_due(self, ply: int) -> None:
        """The last move completed with its promotion choice changed (R05): the first piece that touched the square
        stands (4.4.4). The board showing it back on the square (the arbiter's correction, or the player told to)
        is that promotion: the record follows the board (a pending fix, :meth:`BoardInput.apply_fix`) and the
        finding is put right, in its incident (one alert)."""
        known = self.per_ply.get("PROMOTION_CHOICE_CHANGED")
        if known is None or known.ply != ply or ply != len(self.g.records) or self.g.pending_fix is not None:
            return
        irr = self.g.irr.get(known.finding.id, known.finding)
        pre = self.e.restoration.replay_board(ply - 1)
        if irr.status is Status.RESOLVED or irr.suggestion.move is None or pre is None:
            return
        try:
            first = pre.parse_san(irr.suggestion.move)
        except ValueError:
            return
        if first.uci() == self.g.records[ply - 1].uci:
            return
        after = pre.copy(stack=False)
        after.push(first)
        self.g.pending_fix = (ply, board_key(after), first, pre, irr.id)

    def after_completion(self, outs: list[Output], rec: MoveRecord, at: float) -> None:
        """R23: both kings in check / pawn on the last rank after a completed move ("otherwise" regime)."""
        board = self.g.board
        illegal_pos = _illegal_position(board)
        if self.pending_position is not None:
            _, ply = self.pending_position
            if ply < rec.ply:
                self.pending_position = None
                if illegal_pos:
                    self.e.findings.raise_finding(outs, "ILLEGAL_POSITION_PERSISTS", None, at, [], result="1/2-1/2",
                                text="the illegal position is still on the board after the next completed move: "
                                     "draw (A.5.4)")
                    self.persisted = _illegal_signature(board)
                    return
        if illegal_pos and self.persisted is not None and self.persisted == _illegal_signature(board):
            return  # the same illegal position still there: its draw was suggested already (one incident, one alert)
        if illegal_pos and self.g.regime == Regime.OTHERWISE.value:
            irr = self.e.findings.raise_finding(outs, "ILLEGAL_POSITION_PENDING", None, at, [],
                              text=f"{illegal_pos}: wait for the next completed move; draw if it is still there")
            self.pending_position = (irr.id, rec.ply)

    def check_game_end(self, outs: list[Output], rec: MoveRecord, at: float, *, no_moves: bool) -> bool:
        """Game end after the move *rec* (5, 9.6); *no_moves*: the side to move has no legal move (:meth:`_record`
        asked: one legal move is enough to know, no full list)."""
        board = self.g.board
        code: str | None = None
        result = "1/2-1/2"
        counts: dict[Hashable, int] | None = None  # the repetition window, read once for 9.6 and the 9.2 claim
        if no_moves and board.is_check():
            code, result = "GAME_END_CHECKMATE", ("1-0" if rec.side == chess.WHITE else "0-1")
        elif no_moves:
            code = "GAME_END_STALEMATE"
        elif is_dead_in_feed(board):
            code = "GAME_END_DEAD_POSITION"
        else:
            counts = repetition_counts(board)
            found = automatic_draw(board, self.g.edition, counts, checkmate=False)  # (a legal move exists)
            code = None if found is None else _AUTOMATIC_DRAW[found]
        if code is None:
            self.check_draw_claim(outs, at, counts)
            return False
        flag_t = self.g.flag_t.get(rec.side)
        if flag_t is not None and flag_t < rec.made_at + self.rules.timing.t_settle:
            # the mover's flag fell before the move was made: the arbiter decides (6.9)
            return False
        self.complete(outs, rec.ply, at, Completion.GAME_END)
        self.g.result = result
        self.g.termination = code
        self.g.phase.fire(PhaseTrigger.GAME_END)
        self.g.game_end_at = at
        self.e.clock_readings.game_over(at)
        outs.append(GameEvent(at=at, type="GAME_END", code=code, details={"result": result, "ply": rec.ply}))
        return True

    def check_draw_claim(self, outs: list[Output], at: float, repetitions: dict[Hashable, int] | None = None) -> None:
        board = self.g.board
        side = board.turn
        threefold = can_claim_threefold(board, repetitions)
        fifty = board.halfmove_clock >= 99 and board.can_claim_fifty_moves()
        available = threefold or fifty
        if available and not self.draw_avail[side]:
            kind = "threefold repetition (9.2)" if threefold else "50 moves (9.3)"
            self.e.findings.raise_finding(outs, "DRAW_CLAIM_AVAILABLE", side, at, [],
                        text=f"a claim by {'White' if side else 'Black'} would be correct: {kind} (arbiter only)")
        self.draw_avail[side] = available


def completed_moves(records: list[MoveRecord], color: chess.Color) -> int:
    """The moves *color* completed in *records* (the definition :meth:`MadeMoves.law_moves` keeps)."""
    return sum(1 for r in records if r.side == color and r.completed_at is not None)
