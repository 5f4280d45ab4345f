"""Press judgement (rules-spec §3.5; articles 6.2.1, 6.2.2, 7.5.3, 7.5.4): the press table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _bits, _castling_rook_square, _nearest_legal, _Press, _side_letter
from boardd.core.engine.modes import Phase
from boardd.core.outputs import (
    Completion,
    Evidence,
    MoveMade,
    MovesRetracted,
    Output,
    StateChanged,
)
from boardd.core.recognizer import Diff, DiffClass, describe_change

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


class Presses:
    """Press judgement (rules-spec §3.5; articles 6.2.1, 6.2.2, 7.5.3, 7.5.4): the press table."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules

    def press_expected(self, ply: int) -> bool:
        """Is a press expected to complete the move of *ply*? (A clock is there and was there when it was made.)"""
        return self.rules.clock_expected and self.g.clock_seen and not self.g.clock_down and ply not in self.g.clockless

    def on_transition(self, outs: list[Output], before: chess.Color, after: chess.Color, at: float) -> None:
        ev = Evidence(at=at, event=f"C {_side_letter(before)}")
        press = self.g.press
        if press is not None and at - press.last_at <= self.rules.timing.t_bounce:
            press.last_at = at
            press.lever_after = after
            press.transitions += 1
            press.evidence.append(ev)
            return
        press = _Press(first_at=at, last_at=at, lever_before=before, lever_after=after, transitions=1,
                       evidence=[ev], pre_clock=self.g.pre_clock, blind=self.e.links.presses_blind())
        self.g.press = press
        if not press.blind and self.clean_press(before):
            self.complete_fast(outs, press)

    def clean_press(self, side: chess.Color) -> bool:
        """Fast path of §3.5: *side* presses with a settled made move and nothing else going on.

        The ``T_latency`` window exists for board events that race the press; when the presser's
        made move is already settled (release presumed), is the last move of the record, the board
        shows exactly the official position (nothing in hand, no change masked) and no other
        recognition is pending, no board event can change the outcome of the table's first row.
        """
        if not self.g.playing or self.g.paused or side == self.g.board.turn:
            return False
        ply = self.g.uncompleted.get(side)
        if ply is None or ply != len(self.g.records) or self.g.records[ply - 1].completed_at is not None:
            return False
        if (self.g.cand is not None or self.g.buffer or self.g.mask or self.g.pending_fix is not None
                or self.g.two_hands.get(side) is not None or self.g.impossible_since is not None
                or self.g.castle_king is not None or self.replacement_awaited()):
            return False
        return self.g.phys.key() == self.g.index.key

    def replacement_awaited(self) -> bool:
        """The offender's replacement move of an illegal press is still to come (§3.7): the correction cycle of
        that illegal move is open (the arbiter may yet put the position back, or has and the move is due).

        ``g.replacement`` itself outlives the cycle: it is what a later reinstatement to its ply (found later,
        7.5.1, or the arbiter's) arms touch-move with, so it is no sign of a correction under way once the
        replacement was made or the illegal move stood (the cycle closed).
        """
        rep = self.g.replacement
        cycle = self.e.correction.cycle
        return rep is not None and cycle is not None and cycle.irregularity_id == rep[0]

    def complete_fast(self, outs: list[Output], press: _Press) -> None:
        """Complete the presser's move at the press itself (``completed_at`` = press time).

        The press stays open for ``T_bounce`` after its last transition: a bounce that keeps the
        press is ``CLOCK_BOUNCE`` only; one that ends with the lever back where it was is no press,
        and :meth:`judge_press` withdraws the completion (see :meth:`close_fast`).
        """
        side = press.lever_before
        assert side is not None
        ply = self.g.uncompleted[side]
        press.fast_record = self.g.records[ply - 1]
        press.fast_prev_press_at = self.g.last_press_at
        self.on_press(outs, side, press.first_at, press.evidence[0])

    def close_fast(self, outs: list[Output], press: _Press, due: float) -> None:
        """End of the bounce window of a fast-completed press.

        If the lever is back where it was before the press, there was no press (6.2.4: only the
        final lever state counts): the move returns to made-not-completed. Consumers see the
        ``CLOCK_BOUNCE`` finding (which says so), the move republished in the ``made`` phase
        (``MoveMade`` with ``completed_at`` None) and a new ``state``. Otherwise the completion
        stands and only the period check of the press is left.
        """
        side = press.lever_before
        old = press.fast_record
        assert side is not None and old is not None
        ply = old.ply
        if ply > len(self.g.records) or self.g.records[ply - 1].uci != old.uci \
                or self.g.records[ply - 1].completed_at != press.first_at:
            # the record moved on (arbiter, retraction): nothing to withdraw, and no period check either (the
            # move the press completed is out of the record, the count it would be judged by is gone with it)
            return
        if press.lever_after != side:
            self.e.clock_readings.check_period(outs, side, press)
            return
        self.g.records[ply - 1] = old
        self.g.uncompleted[side] = ply
        self.g.last_press_at = press.fast_prev_press_at
        outs.append(MoveMade(move=old))
        outs.append(StateChanged(at=due))

    def judge_press(self, outs: list[Output], due: float) -> None:
        press = self.g.press
        assert press is not None
        self.g.press = None
        if press.lever_before is None or self.restoration_press(press.lever_before) is None:
            # a press: the findings of the hands before it are out (not one in the middle of a restoration found
            # later, the clock handled in the correction: they wait for the position)
            self.e.correction.release_withheld(outs, due)
        if press.transitions > 1:
            withdrawn = press.fast_record is not None and press.lever_after == press.lever_before
            self.e.findings.raise_finding(outs, "CLOCK_BOUNCE", None, press.first_at, press.evidence,
                        text="several lever transitions within T_bounce: one physical event; only the final lever "
                             "state counts (6.2.4)"
                             + ("; the lever ended where it was, so there was no press: the completion of "
                                f"{press.fast_record.san if press.fast_record else ''} is withdrawn"
                                if withdrawn else ""))
        if press.fast_record is not None:
            self.close_fast(outs, press, due)
            return
        if press.blind:
            self.e.links.blind_press(outs, press)
        elif press.lever_before is not None and press.lever_after is not None and \
                press.lever_before != press.lever_after:
            side = press.lever_before
            done = self.e.made_moves.law_moves(side)
            self.on_press(outs, side, press.first_at, press.evidence[0])
            if self.e.made_moves.law_moves(side) > done:
                self.e.clock_readings.check_period(outs, side, press)
        buffered, self.g.buffer = self.g.buffer, []
        for event in buffered:
            self.e._fire(outs, event.at, inclusive=False)
            if self.e._defer(event, event.at):
                continue
            self.e._dispatch(outs, event, event.at)

    def restoration_press(self, side: chess.Color) -> str | None:
        """Is *side*'s press one in the middle of a restoration found later (the illegal-move finding's id:
        :meth:`Correction.press_during_restoration`)? Never a press that completes a move of his: his made move
        not completed yet and standing on the board, or the board showing a legal move of his."""
        ply = self.g.uncompleted.get(side)
        if side != self.g.board.turn and ply is not None and ply == len(self.g.records) \
                and self.g.records[ply - 1].completed_at is None and self.g.phys.key() == self.g.index.key:
            return None
        if side == self.g.board.turn and self.g.index.classify(self.g.phys).kind is DiffClass.LEGAL:
            return None
        return self.e.correction.press_during_restoration()

    def on_press(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence) -> None:
        self.g.last_press_at = at
        if self.g.phase.state is Phase.GAME_OVER or self.g.phase.state is Phase.AWAIT_RESTORE:
            return
        self.e.recognition.flush_early(outs)
        if self.e.correction.arbiter_restart(outs, side, at):
            return  # 7.5.1: the arbiter gives the offender the clock back; no press by the opponent
        restoring = self.restoration_press(side)
        if restoring is not None:
            self.e.correction.clock_handled(outs, side, restoring, at)
            return  # 7.5.1 found later: the clock handled while the position is put back, no player's press
        if self.e.restoration.adopted_press(outs, side, at):
            return  # after a gap of unknown parity: the presser moved last
        if side != self.g.board.turn:
            self.e.made_moves.take_back(outs, at)  # (his made move taken back on the board, maybe under T_settle ago)
        cand = self.g.cand
        if cand is not None and cand.replace and side != self.g.board.turn:
            self.e.made_moves.settle(outs, at)  # R07: his changed move stood on the board when he pressed
        turn = self.g.board.turn
        if side == turn and self.g.uncompleted.get(side) is not None:
            # late press (6.2.2): the opponent has already replied; this press completes the earlier move
            ply = self.g.uncompleted[side]
            self.e.made_moves.complete(outs, ply, at, Completion.PRESS)
            self.e.findings.raise_finding(outs, "CLOCK_LATE_PRESS", side, at, [ev],
                        text="press after the opponent's reply: allowed (6.2.2)")
            outs.append(StateChanged(at=at))
            return
        if side != turn:
            own_ply = self.g.uncompleted.get(side)
            if own_ply is not None:
                ply = own_ply
                if self.e.whose_change.own_changed(side) and self.g.board.move_stack:
                    # (a record going on from a gap or an adopted position has no move to undo: not "changed")
                    base = self.e.recognition.base_index()
                    bdiff = base.classify(self.g.phys)
                    if bdiff.kind is not DiffClass.LEGAL and bdiff.kind is not DiffClass.NONE:
                        # the made move was changed into something that is not a legal move
                        last = self.g.records[-1]
                        self.g.board.pop()
                        self.g.records.pop()
                        self.g.keys.pop()
                        self.e.recognition.rebuild_index()
                        outs.append(MovesRetracted(at=at, to_ply=len(self.g.records), reason="released move changed"))
                        self.g.uncompleted.pop(side, None)
                        # once for the ply (R07): a change raised before is updated, its first move the suggestion
                        now = f"no legal move ({bdiff.kind.name.lower()})"
                        self.e.made_moves.released_move_changed(outs, last, now, side, at, reinstate_ply=last.ply)
                        self.g.extra_lifts = self.g.prev_lifts  # the mover's segment before his made move
                        try:
                            self.press_as_mover(outs, side, at, ev, bdiff)
                        finally:
                            self.g.extra_lifts = []
                        return
                late = ply < len(self.g.records)
                self.e.made_moves.complete(outs, ply, at, Completion.PRESS)
                self.press_completed(outs, side, at, ev)
                if late:
                    self.e.findings.raise_finding(outs, "CLOCK_LATE_PRESS", side, at, [ev],
                                text="press after the opponent's reply: allowed (6.2.2)")
                outs.append(StateChanged(at=at))
                return
            self.e.findings.raise_finding(outs, "CLOCK_PRESS_NO_MOVE", side, at, [ev],
                                          penalty=self.e.findings.penalty(side, "CLOCK_PRESS_NO_MOVE"),
                        text="press without a move")
            return
        diff = self.g.index.classify(self.g.phys)
        self.press_as_mover(outs, side, at, ev, diff)

    def press_as_mover(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence, diff: Diff) -> None:
        timing = self.rules.timing
        kind = diff.kind
        if kind is DiffClass.LEGAL and diff.move is not None and self.g.board.turn == side:
            made_at = self.g.match_t
            self.g.cand = None
            if made_at > at:
                self.e.findings.raise_finding(outs, "LATENCY_RACE", side, at, [ev, Evidence(at=made_at,
                                                                                            event="placed")],
                            text="the press and the placement that finished the move fell within T_latency")
                if made_at - at > timing.t_latency / 2:
                    self.e.findings.raise_finding(outs, "CLOCK_PRESS_OTHER_HAND_SUSPECTED", side, at, [ev],
                                text="placement registered well after the press (6.2.3)")
            self.e.made_moves.make(outs, diff.move, made_at, completed=True, completion=Completion.PRESS, press_at=at)
            self.press_completed(outs, side, at, ev)
            return
        if kind is DiffClass.NONE:
            if self.e.made_moves.taken_back_at_press(outs, side, at, ev):
                return
            self.e.findings.raise_finding(outs, "CLOCK_PRESS_NO_MOVE", side, at, [ev],
                                          penalty=self.e.findings.penalty(side, "CLOCK_PRESS_NO_MOVE"),
                        text="press without a move")
            self.g.pressed_no_move = side
            return
        if kind is DiffClass.IN_HAND:
            missing = [sq for sq in _bits(diff.changed) if self.g.index.piece_at(sq) is not None
                       and self.g.index.piece_at(sq).color == side]  # type: ignore[union-attr]
            if self.g.promo_seen and len(missing) == 1:
                self.illegal_press(outs, side, at, ev, "PROMOTION_INCOMPLETE_AT_PRESS", subtype=None, diff=diff)
                return
            castling = self._castling_in_hand(missing)
            if castling is not None:
                # king and rook both in the hand (or the king beside the board): a castling under way, the only legal
                # move they both take part in (rules-spec §3.3) -> the castling incomplete at the press (R16), one
                # incident, not a press with a piece in hand
                partial = Diff(DiffClass.PARTIAL, move=castling, candidates=(castling,),
                               subtype="CASTLING_INCOMPLETE_AT_PRESS", changed=diff.changed)
                self.illegal_press(outs, side, at, ev, "CASTLING_INCOMPLETE_AT_PRESS", subtype=None, diff=partial)
                return
            self.e.findings.raise_finding(outs, "CLOCK_PRESS_PIECE_IN_HAND", side, at, [ev],
                        penalty=self.e.findings.penalty(side,
                                                        "CLOCK_PRESS_PIECE_IN_HAND"), text="press with a piece in hand")
            self.e.findings.raise_finding(outs, "CLOCK_PRESS_OTHER_HAND_SUSPECTED", side, at, [ev],
                        text="press while a piece is still in the air: the other hand pressed? (6.2.3)")
            self.g.pressed_no_move = side
            return
        if kind is DiffClass.PARTIAL:
            code = diff.subtype or "POSITION_MISMATCH_AT_PRESS"
            self.illegal_press(outs, side, at, ev, code, subtype=None, diff=diff)
            return
        if kind is DiffClass.ILLEGAL_1:
            self.illegal_press(outs, side, at, ev, "ILLEGAL_MOVE", subtype=diff.subtype, diff=diff)
            return
        first = self.e.two_hands.genuine_lifts(side)
        involved = {first[0][1]} if first else set()
        for a, b in diff.relocations:
            if a in involved:
                involved.add(b)
        knock = self.e.two_hands.knock(self.g.index.board, side, self.g.seg_lifts, involved) if involved else False
        if kind is DiffClass.TWO_MOVES:
            if knock:
                self.illegal_press(outs, side, at, ev, "DISPLACED_NOT_RESTORED_AT_PRESS", subtype=None, diff=diff)
            else:
                self.illegal_press(outs, side, at, ev, "ILLEGAL_MOVE", subtype="TWO_PIECES_MOVED", diff=diff)
            return
        code = "DISPLACED_NOT_RESTORED_AT_PRESS" if knock else "POSITION_MISMATCH_AT_PRESS"
        self.illegal_press(outs, side, at, ev, code, subtype=None, diff=diff)

    def _castling_in_hand(self, missing: list[int]) -> chess.Move | None:
        """The legal castling whose king and rook are the two pieces off the board (*missing*), if any."""
        board = self.g.board
        if len(missing) != 2:
            return None
        king = board.king(board.turn)
        if king not in missing:
            return None
        for move in board.generate_castling_moves():
            if move.from_square == king and _castling_rook_square(board, move) in missing:
                return move
        return None

    def press_completed(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence) -> None:
        """R19: a move made with two hands (suspected) and completed by a press."""
        suspected = self.g.two_hands.pop(side, None)
        if suspected is None:
            return
        confirm = ("if the arbiter confirms it: reinstate and the illegal-move penalty (7.5.4, 7.5.5)"
                   if self.g.edition >= 2018 else "discretionary (4.1)")
        self.e.findings.raise_finding(outs, "TWO_HANDS_AT_PRESS", side, at, [*suspected.evidence, ev],
                    incident=suspected.incident or suspected.id, related=(suspected.id,),
                    text=f"two-handed move ({suspected.id}) completed by a press, suspected from timing only; "
                         f"{confirm}")

    def _suggested_move(self, pre: chess.Board, code: str, subtype: str | None, diff: Diff) -> str | None:
        """The law-based move to suggest with an illegal-move-class completion (7.5.2 queen, castling, nearest)."""
        if code == "PAWN_NOT_REPLACED" and diff.move is not None:
            queen = chess.Move(diff.move.from_square, diff.move.to_square, promotion=chess.QUEEN)
            if queen in pre.legal_moves and self.g.edition >= 2014:
                return pre.san(queen)
        elif code == "CASTLING_INCOMPLETE_AT_PRESS" and diff.move is not None:
            return pre.san(diff.move)
        elif code in ("POSITION_MISMATCH_AT_PRESS", "DISPLACED_NOT_RESTORED_AT_PRESS", "ILLEGAL_MOVE") and \
                subtype in (None, "TWO_PIECES_MOVED"):
            near = _nearest_legal(pre, self.g.phys.squares, diff.changed, self.e.touch_move.first_touched(pre))
            if near is not None:
                return pre.san(near)
        return None

    def illegal_press(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence, code: str, *,
                       subtype: str | None, diff: Diff) -> None:
        """An illegal-move-class (or mismatch) completion: report it, then play on from the physical board (G6)."""
        pre = self.g.board.copy(stack=False)
        pen = self.e.findings.penalty(side, code, subtype)  # 7.5.2: a pawn not replaced, a queen (no reinstatement)
        constraints = self.e.touch_move.replacement_constraints(pre, diff, code)
        touched = self.e.touch_move.replacement_square(pre, diff)  # the piece the constraint names (4.3.1, 7.5.1)
        verify = code in ("CASTLING_INCOMPLETE_AT_PRESS", "PROMOTION_INCOMPLETE_AT_PRESS")
        desc = describe_change(pre, self.g.phys.squares)
        move_text = self._suggested_move(pre, code, subtype, diff)
        text = desc if pen is not None else f"position at the press: {desc}; the arbiter inspects"
        if move_text and pen is None:
            text += f"; closest legal move: {move_text} (the rest is restored on the offender's own time, 7.4)"
        irr = self.e.findings.raise_finding(outs, code, side, at, [*self.g.seg_evidence[-8:], ev], subtype=subtype,
                                            text=text,
                          move=move_text, constraints=constraints, verify=verify, penalty=pen,
                          reinstate_ply=len(self.g.records))
        fix: chess.Move | None = None
        if code == "PAWN_NOT_REPLACED" and diff.move is not None:
            # the pawn exchanged on the promotion square: a queen from 2014 (7.5.2), the player's choice in E2009
            # (7.4 a; BoardInput.apply_fix takes any piece then); in the "otherwise" regime too (the arbiter applies
            # 7.5.2 on a claim, A.4.2 / A.5.2; the record follows the board, G6)
            fix = chess.Move(diff.move.from_square, diff.move.to_square, promotion=chess.QUEEN)
        elif code in ("DISPLACED_NOT_RESTORED_AT_PRESS", "POSITION_MISMATCH_AT_PRESS") and move_text:
            fix = pre.parse_san(move_text)
        elif code in ("CASTLING_INCOMPLETE_AT_PRESS", "EN_PASSANT_INCOMPLETE_AT_PRESS") and diff.move is not None:
            fix = diff.move  # finished on the opponent's time: the record gets the move the board then shows
        two_hands = self.g.two_hands.pop(side, None)
        if two_hands is not None:
            # R19: a two-handed move that is also illegal for another reason counts once
            self.e.findings.raise_finding(outs, "TWO_HANDS_AT_PRESS", side, at, [*two_hands.evidence, ev],
                        incident=irr.incident or irr.id, related=(two_hands.id, irr.id),
                        text=f"two-handed move ({two_hands.id}) completed by a press; counted once with {irr.id} "
                             "(Arbiters' Manual)")
        self.e.restoration.adopt_physical(outs, side, at, desc, diff)
        self.e.correction.open(irr, side, len(self.g.records) - 1)
        if fix is not None and fix in pre.legal_moves:
            after = pre.copy(stack=False)
            after.push(fix)
            from boardd.core.recognizer import board_key  # noqa: PLC0415

            # when the board is put right (the arbiter's fix, 7.4.1 / 7.5.2), the law-based move replaces the record
            self.g.pending_fix = (len(self.g.records), board_key(after), fix, pre, irr.id)
        moved = diff.relocations[0][0] if diff.relocations else None
        if moved is None:
            first = self.e.two_hands.genuine_lifts(side)
            moved = first[0][1] if first else None
        if touched is not None and moved is not None and any(m.from_square == moved for m in pre.legal_moves):
            self.g.replacement = (irr.id, len(self.g.records) - 1, touched)
