"""Whose change (rules-spec §3.3; articles 4.1, 4.2, 6.2.1): out-of-turn changes, adjustments, early starts."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _ARTICLE4, _TAKEBACK_DEPTH, _castling_king_square, _piece_text
from boardd.core.events import (
    Content,
)
from boardd.core.outputs import (
    Evidence,
    Irregularity,
    Output,
    Status,
)
from boardd.core.recognizer import Diff, DiffClass, PhysicalBoard, PositionIndex, describe_change, promotion_origin
from boardd.core.recovery import target_board

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


@dataclass(frozen=True, slots=True)
class _Twice:
    """Without a clock, the player who just moved has moved again on the opponent's turn (R13)."""

    ply: int  # the record's length when he did (his own move is its last entry)
    since: float  # when the piece was put down
    left: float | None  # when the board left that position (None: it still shows it)
    stood: PhysicalBoard  # the position the out-of-turn move made
    reading: Diff  # that position read from the official one with him to move again
    finding: str | None  # the OUT_OF_TURN_CHANGE raised for it


class WhoseChange:
    """Whose change (rules-spec §3.3; articles 4.1, 4.2, 6.2.1): out-of-turn changes, adjustments, early starts."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.twice: _Twice | None = None
        #: the OUT_OF_TURN_CHANGE of the player's earlier move on the opponent's turn, for his next one (a third move)
        self._carried: str | None = None
        self._again: tuple[int, PositionIndex] | None = None

    def opp_change(self, sq: int, old: Content, new: Content, turn: chess.Color) -> bool:
        """Is this change the doing of the side without the move (not part of the mover's move)?"""
        opp = not turn
        old_opp = isinstance(old, chess.Piece) and old.color == opp
        new_opp = isinstance(new, chess.Piece) and new.color == opp
        if not old_opp and not new_opp:
            return False
        if sq in self.g.mask:
            return True
        if new_opp and self.wrong_colour_promotion(sq):
            return False  # the mover's pawn promoted to a piece of the wrong colour (3.7.5.1): his illegal move
        targets = self.g.index.capture_targets  # a bitboard
        if old_opp and new is None and (targets >> sq & 1 or self.g.index.piece_at(sq) is None):
            return False  # the mover removing the piece he captures (or a parked captured piece)
        if new_opp and self.g.index.piece_at(sq) == new and targets >> sq & 1:
            return False  # a piece to be captured put back
        if new_opp and not old_opp and any(x[2] == new and targets >> x[1] & 1 for x in self.g.seg_lifts):
            self.g.parked = True
            return False  # a captured piece parked on another square (§5 CAPTURED_PIECE_PARKED)
        if new_opp and not old_opp and self.promotion_taken_back(sq, new):
            return False  # his released promotion taken back: the pawn put back from beside the board (R07)
        # a capture seen as a replacement is the mover's; anything else is the opponent's
        return not (old_opp and isinstance(new, chess.Piece) and new.color == turn)

    def promotion_taken_back(self, sq: int, new: Content) -> bool:
        """The last mover's pawn put back on the origin square of his promotion, not completed, the promoted piece
        gone from the promotion square: his hand taking the released move back (R07, ``MadeMoves.take_back``), not
        the opponent's. The pawn comes from beside the board (it left the board with the promotion): no piece lifted
        this segment, so the parked-capture reading above does not see it."""
        g = self.g
        if not g.board.move_stack:
            return False
        last = g.board.peek()
        mover = not g.board.turn
        return (last.promotion is not None and sq == last.from_square
                and new == chess.Piece(chess.PAWN, mover) and g.uncompleted.get(mover) == len(g.records)
                and g.records[-1].completed_at is None
                and g.phys.squares[last.to_square] != g.index.piece_at(last.to_square))

    def wrong_colour_promotion(self, sq: int) -> bool:
        """An opponent-coloured piece put on a square where the mover's lifted pawn promotes."""
        lifted = 0
        for _, s, _piece in self.g.seg_lifts:
            if self.g.phys.squares[s] is None:
                lifted |= chess.BB_SQUARES[s]
        return promotion_origin(self.g.index.board, lifted, sq) is not None

    def masked_view(self) -> PhysicalBoard:
        view = PhysicalBoard()
        for sq, content in enumerate(self.g.phys.squares):
            if sq in self.g.mask:
                content = self.g.index.piece_at(sq)
            if isinstance(content, chess.Piece):
                view.set(sq, content)
        return view

    def parked_capture(self, changed: list[int]) -> bool:
        """An opponent piece that a legal move could capture was put down elsewhere (captured piece parked)."""
        targets = {m.to_square for m in self.g.index.legal_moves if self.g.index.board.is_capture(m)}
        gone = [sq for sq in changed if self.g.phys.squares[sq] is None and self.g.index.piece_at(sq) is not None]
        return bool(gone) and all(sq in targets for sq in gone)

    def own_changed(self, color: chess.Color) -> bool:
        """Do *color*'s pieces on the board differ from the official position (bitboards)?"""
        key = self.g.phys.key()
        off = self.g.index.key
        ci = 0 if color == chess.WHITE else 1
        mine = key[ci] | off[ci]
        diff = 0
        for i in range(2, 8):
            diff |= key[i] ^ off[i]
        diff = (diff | (key[ci] ^ off[ci])) & mine
        if diff & key[ci]:
            return True  # a piece of *color* where the official content differs
        missing = diff & off[ci] & ~key[ci]
        if missing and self.g.index.board.turn != color:
            missing &= ~self.g.index.capture_targets  # the opponent capturing it
        return bool(missing)

    def note_started(self, outs: list[Output], side: chess.Color, at: float) -> None:
        """The side to move is touching pieces: the previous mover's post-made window closes."""
        if self.g.opp_started:
            return
        if not self.g.seg_lifts and not self.g.seg_places:  # (any lift: a1 is square 0)
            return
        if self._castling_rook_lifted(not side):
            return  # the mover finishing his castling, or the opponent's capture of that rook: known at the place
        self.g.opp_started = True
        mover = not side
        ply = self.g.uncompleted.get(mover)
        press_pending = self.g.press is not None and self.g.press.lever_before == mover
        not_pressed = ply is not None and self.e.presses.press_expected(ply) and ply == len(self.g.records) \
            and not press_pending
        lone = self.g.seg_lifts[0] if len(self.g.seg_lifts) == 1 and not self.g.seg_places else None
        due = lone[0] + self.rules.timing.t_flicker if lone is not None else at
        if at < due and lone is not None and self.e.board_input.may_flicker(lone[1], lone[0]):
            # a lone lift with nothing else near it may be a sensor flicker (reverted within T_flicker, rules-spec
            # §2.4): what the opponent's first touch says is said once it stood T_flicker (:meth:`started_due`)
            self.g.start_pending = (due, lone[1], mover, len(self.g.records), not_pressed, at,
                                    tuple(self.g.seg_evidence[-1:]))
            return
        self._started(outs, mover, at, not_pressed, self.g.seg_evidence[-1:])

    def started_due(self, outs: list[Output], now: float) -> None:
        """T_flicker after the opponent's lone first lift: it stood (not a flicker), so he started when it was
        read as his start."""
        pending = self.g.start_pending
        self.g.start_pending = None
        if pending is None:
            return
        _, _, mover, ply, not_pressed, at, evidence = pending
        if ply == len(self.g.records):
            self._started(outs, mover, at, not_pressed, list(evidence))

    def flickered(self, sq: int) -> None:
        """A sensor flicker on *sq*: if it was the lone lift that started the opponent's segment, he has not
        started (a flicker is noise: no note, no Article 4 claim window closed, the segment as before it)."""
        pending = self.g.start_pending
        if pending is not None and pending[1] == sq:
            self.g.start_pending = None
            self.g.opp_started = False

    def _started(self, outs: list[Output], mover: chess.Color, at: float, not_pressed: bool,
                 evidence: list[Evidence]) -> None:
        """The opponent's first touch at *at*: the mover's press not made (info), Article 4 claims closed (R08)."""
        if not_pressed:
            self.e.findings.raise_finding(outs, "CLOCK_NOT_PRESSED", mover, at, evidence,
                        text="the mover has not pressed and the opponent is already moving (arbiter only, 12.6)")
        # R08: Article 4 claims against the previous mover close at this first touch
        for irr in list(self.g.irr.values()):
            if irr.side == mover and irr.claim_deadline is None and irr.code in _ARTICLE4 and irr.t_raised <= at \
                    and irr.status is not Status.RESOLVED and irr.ply >= len(self.g.records) - 1:
                self.e.findings.update_finding(outs, dataclasses.replace(irr, claim_deadline=at))

    def _castling_rook_lifted(self, mover: chess.Color) -> bool:
        """R27: the mover's last move is a lone king step onto its castling square (a legal king move, released)
        and the only piece lifted since is the rook of that castling, nothing put down: the mover is completing
        his castling (CHESS960_CASTLING_ORDER when it stands), not yet the opponent starting a capture of the rook
        victim first (R01); which of the two is seen when a piece comes down."""
        board = self.g.board
        lifts = self.g.seg_lifts
        if not board.chess960 or not board.move_stack or self.g.seg_places or not lifts \
                or any(p.color != mover or p.piece_type != chess.ROOK for _, _, p in lifts):
            return False
        step = board.peek()
        if board.piece_type_at(step.to_square) != chess.KING:
            return False
        base = board.copy(stack=1)
        base.pop()
        return any(base.is_castling(m) and step.from_square == m.from_square
                   and step.to_square == _castling_king_square(base, m)
                   and all(sq == m.to_square for _, sq, _ in lifts) for m in base.legal_moves)

    def _appeared(self, placed: list[int], actor: chess.Color) -> bool:
        """Only pieces of ``actor`` on squares empty in the official position, and none of his missing."""
        if any(self.g.index.piece_at(sq) is not None for sq in placed):
            return False
        if not any(sq == p for _, p, _ in self.g.seg_places for sq in placed):
            return False
        ci = 0 if actor == chess.WHITE else 1
        return not (self.g.index.key[ci] & ~self.g.phys.key()[ci])

    def recheck_out_of_turn(self, outs: list[Output], at: float) -> None:
        """T_flicker after a piece appeared: still there (a change out of turn), or gone (a glitch, ignored); or
        the wait for a piece put down off the position being reinstated (:meth:`Correction.on_the_way`)."""
        self.g.oot_recheck = None
        self.twice_due(outs, at)
        self.e.correction.withheld_due(outs, at)
        if self.e.correction.judge_held(at) and not self.g.oot_raised and self.g.playing:
            self.raise_out_of_turn(outs, not self.g.board.turn, at)  # left off the position being reinstated
            return
        if self.g.mask and self.g.playing:
            self.e.recognition.evaluate(outs, at, snapshot=False, batch=[])

    def check_out_of_turn_move(self, outs: list[Output], side: chess.Color, at: float) -> None:
        if self.g.pressed_no_move == side and not self.g.oot_raised and self.g.seg_places:
            last = self.g.seg_places[-1]
            if last[0] > (self.g.last_press_at or -1e18) + self.rules.timing.t_latency:
                self.g.oot_raised = True
                self.e.findings.raise_finding(outs, "OUT_OF_TURN_CHANGE", side, at, self.g.seg_evidence[-1:],
                            text="change made on the opponent's time after the press; the arbiter may reinstate "
                                 "(7.6)")

    def check_adjust(self, outs: list[Output], at: float) -> None:
        """Board back to the official position: a lift-and-replace is a possible adjust (R02)."""
        lifts = [x for x in self.g.seg_lifts if x[0] >= at - self.rules.timing.t_adjust]
        if not lifts:
            return
        t0, sq, piece = lifts[-1]
        if self.g.phys.squares[sq] == piece:
            side = self.g.board.turn
            actor = piece.color
            if actor == side and self.g.pressed_no_move != side:
                self.e.findings.raise_finding(outs, "ADJUST_OBSERVED", actor, at,
                            [Evidence(at=t0, event=f"L {chess.square_name(sq)}"),
                             Evidence(at=at, event=f"P {chess.square_name(sq)} {_piece_text(piece)}")],
                            text="possible adjustment (j'adoube is not observable)")

    def out_of_turn(self, outs: list[Output], actor: chess.Color, at: float, snapshot: bool) -> None:
        """Changes by the side without the move (R13), takebacks (R29), missed updates."""
        # takeback: the physical board is an earlier official position
        ply = self.e.recognition.earlier_position(_TAKEBACK_DEPTH)
        if ply is not None:
            if self.e.correction.partial_restore(outs, ply, at) or self.e.made_moves.undo_pending(ply, at) \
                    or self.e.made_moves.stands_taken_back(ply):
                return
            if not self.g.oot_raised and not snapshot:
                self.g.oot_raised = True
                self.e.findings.raise_finding(outs, "OUT_OF_TURN_CHANGE", actor, at, self.g.seg_evidence[-4:],
                            text="the side without the move changed the position")
            self.e.restoration.takeback(outs, ply, at)
            return
        if snapshot:
            self.e.restoration.reconcile(outs, at)
            return
        squares = self.g.phys.squares
        placed = [sq for sq in self.g.mask if isinstance(squares[sq], chess.Piece)
                  and squares[sq] != self.g.index.piece_at(sq)]
        if not placed or self.e.board_input.fix_in_progress() or self.e.correction.restoring(placed):
            return  # only lifts so far (wait for where the piece goes), or the board being put right
        if all(self.g.index.piece_at(sq) is not None for sq in placed) and len(placed) == len(self.g.mask):
            return  # a piece read as another one on the same square: wait (sensor or flicker)
        if not self.g.oot_raised and self.e.correction.on_the_way(placed, at):
            return  # set down off the position being reinstated: judged if it stays (7.5.1)
        if not self.g.oot_raised and self._appeared(placed, actor):
            since = max(t for t, sq, _ in self.g.seg_places if sq in placed)
            if at < since + self.rules.timing.t_flicker:
                # a piece out of nowhere (none of the actor's lifted) may be a sensor glitch: judged if it stays
                self.g.oot_recheck = since + self.rules.timing.t_flicker
                return
        if not self.g.oot_raised:
            self.raise_out_of_turn(outs, actor, at)

    def raise_out_of_turn(self, outs: list[Output], actor: chess.Color, at: float, text: str = "") -> Irregularity:
        self.g.oot_raised = True
        return self.e.findings.raise_finding(outs, "OUT_OF_TURN_CHANGE", actor, at, self.g.seg_evidence[-4:],
                    text=text or "the side without the move changed the position; the arbiter may reinstate (7.6)",
                    reinstate_ply=len(self.g.records))

    def moved_twice(self, outs: list[Output], at: float) -> bool:
        """Without a clock, the player who has just moved moves again before the opponent replies (R13).

        No press gives the move away here: his move stood (released, 1.3 and 4.7) and the opponent has the
        move. Another relocation of his (not his released move changed, R07: the caller read that first) is a
        move on the opponent's turn: an irregularity, not an illegal move (seed 004, exercise 17), raised once
        as ``OUT_OF_TURN_CHANGE`` when the piece is put down, with the position before it to reinstate (7.6).
        Nothing is counted or penalised. He may still move it on or put it back before the reply.

        If nobody intervenes, play continues from the physical position (G6): when the opponent starts his reply
        from it (the out-of-turn position stood ``T_settle`` and a piece of the opponent's changed since, and the
        board read from it with the opponent to move is his move in progress), the out-of-turn move enters the
        record where it was made (``legal=False``, the opponent still to move: his turn was skipped) and the
        reply is recorded after it. The arbiter's answers: ``Reinstate`` to the finding's ply (7.6) takes it
        back with what followed, as for any entry; resolving the finding without reinstating adopts the
        board's position at once (:meth:`confirmed`). Returns True when it entered the record.
        """
        g = self.g
        n = len(g.records)
        offender = not g.board.turn
        if not n or g.records[-1].side != offender or g.uncompleted.get(offender) != n \
                or self.e.presses.press_expected(n + 1) or g.press is not None or not g.playing or g.paused \
                or self.e.correction.awaiting_reinstatement() or g.pending_fix is not None:
            self._drop_twice()  # not his move the last, or the opponent has replied, or a clock gives the move
            return False
        twice = self.twice
        if twice is not None and twice.ply != n:
            self._drop_twice()
            twice = None
        key = g.phys.key()
        if len(g.keys) >= 2 and key == g.keys[-2]:
            return False  # the position before his move: his move taken back (R07, MadeMoves.take_back), not a second
        if twice is None and (key == g.index.key or not self.own_changed(offender)):
            return False  # none of his pieces elsewhere (the opponent's move under way, or nothing)
        if twice is not None and twice.left is None and twice.stood.key() != key:
            twice = self.twice = dataclasses.replace(twice, left=at)
        if twice is not None and key == g.index.key:
            self._drop_twice()  # put back before the reply: the record goes on as it was
            self._drop_hands(offender, twice.stood)
            return False
        if twice is not None:
            seen = (twice.ply, twice.since, twice.reading, twice.stood, twice.left)
            if self.e.recognition.reply_started(seen, at, offender):
                reply = self.e.recognition.index_after(twice.stood, offender).classify(g.phys)
                if reply.kind in (DiffClass.IN_HAND, DiffClass.PARTIAL, DiffClass.LEGAL):
                    self.enter_twice(outs, twice, at)
                    return True
                return False
        if self.e.recognition.base_index().classify(g.phys).kind in (DiffClass.LEGAL, DiffClass.PARTIAL,
                                                                     DiffClass.IN_HAND) \
                or self.e.made_moves.changing_from_base():
            return False  # his released move being changed (R07, the piece it captured maybe not back yet)
        reading = self._index_again(n).classify(g.phys)
        if twice is not None and reading.kind not in (DiffClass.LEGAL, DiffClass.ILLEGAL_1) \
                and self.e.recognition.index_after(twice.stood, not offender).classify(g.phys).kind in (
                    DiffClass.LEGAL, DiffClass.ILLEGAL_1):
            # a third move of his before the reply, from the position his second made: he played on from it, so
            # that one enters the record (G6, as at the reply), and this one is read against it as his second was
            # against his move; the same finding (one incident, one alert) goes with it
            self._carried = self.enter_twice(outs, twice, at)
            try:
                self.moved_twice(outs, at)
            finally:
                self._carried = None
            return True
        if reading.kind not in (DiffClass.LEGAL, DiffClass.ILLEGAL_1) or (twice is not None
                                                                         and twice.stood.key() == key):
            if twice is not None and key == g.index.key:
                self._drop_twice()  # put back before the reply: the record goes on as it was
            return False
        finding = twice.finding if twice is not None else self._carried or next(
            (i.id for i in reversed(g.irr.values()) if i.code == "OUT_OF_TURN_CHANGE" and i.side == offender
             and i.ply == n), None)  # raised already with his first change (masked, :meth:`out_of_turn`)
        if finding is None and (not g.oot_raised or (twice is not None and twice.finding is None)):
            # raised once the position has stood T_settle (:meth:`twice_due`): his hands going on within it are one
            # gesture (R07), e.g. his released move's piece taken back after a capture made in full by another
            # piece, which is his released move changed (one incident, one alert); a piece moved on within it
            # (a slide) waits for where it stands
            g.oot_raised = True
            g.recheck_by(at + self.rules.timing.t_settle)
        self.twice = _Twice(n, at, None, PhysicalBoard(g.phys.base_board()), reading, finding)
        self._drop_hands(offender, self.twice.stood)
        # his hands, not the opponent's early start: a capture's victim he lifted while the opponent had the
        # move reads as the opponent's move under way (one incident, one alert)
        g.opp_early_raised = True
        self.e.recognition.early_pending = None
        return False

    def seen_out_of_sight(self, outs: list[Output], squares: list[Content], at: float, since: float) -> None:
        """The board back (no clock) showing one move of the player who has just moved after the record
        (:func:`boardd.core.recovery.recover_twice_steps`): his move on the opponent's turn made while the board was
        out of sight. The same state as if it had just been seen live (:meth:`moved_twice`), its position standing
        since *since* (the board back, its dump: when it was put down is not known) and stood (the board quiet): its
        ``OUT_OF_TURN_CHANGE`` raised now (*at*), once, and the opponent's reply enters it in the record (G6)."""
        g = self.g
        stood = PhysicalBoard(target_board(squares))
        n = len(g.records)
        if self.twice is not None and self.twice.ply == n and self.twice.stood.key() == stood.key():
            return  # (the restart's dump, seen again as the reconciling one)
        g.oot_raised = True
        twice = _Twice(n, since, None, stood, self._index_again(n).classify(stood), None)
        self.twice = dataclasses.replace(self._twice_raised(outs, dataclasses.replace(twice, since=at)), since=since)

    def _drop_twice(self) -> None:
        """No move out of turn pending any more; if its finding was not raised yet (:meth:`twice_due`), none was
        for this segment: a later change out of turn is raised as any (``oot_raised`` set back)."""
        twice, self.twice = self.twice, None
        if twice is not None and twice.finding is None and not any(
                i.code == "OUT_OF_TURN_CHANGE" and i.ply == twice.ply for i in self.g.irr.values()):
            self.g.oot_raised = False

    def twice_due(self, outs: list[Output], at: float) -> None:
        """The out-of-turn move of :meth:`moved_twice` has stood ``T_settle`` (the gesture over, the board still
        showing it, nothing read since): its ``OUT_OF_TURN_CHANGE`` is raised, at the time the piece was put down."""
        twice = self.twice
        g = self.g
        if twice is not None and twice.finding is None and twice.left is None \
                and at < twice.since + self.rules.timing.t_settle:
            g.recheck_by(twice.since + self.rules.timing.t_settle)  # (an earlier recheck fired: this one's again)
            return
        if twice is None or twice.finding is not None or twice.left is not None \
                or at < twice.since + self.rules.timing.t_settle or twice.ply != len(g.records) \
                or g.phys.key() != twice.stood.key() or not g.playing:
            return
        self.twice = self._twice_raised(outs, twice)

    def _twice_raised(self, outs: list[Output], twice: _Twice) -> _Twice:
        """*twice* with its ``OUT_OF_TURN_CHANGE`` (raised now if it was not, at the time the piece was put down)."""
        if twice.finding is not None:
            return twice
        offender = not self.g.board.turn
        raised = next((i.id for i in reversed(self.g.irr.values()) if i.code == "OUT_OF_TURN_CHANGE"
                       and i.side == offender and i.ply == twice.ply and i.status is not Status.RESOLVED), None)
        if raised is None:
            raised = self.raise_out_of_turn(outs, offender, twice.since, text=(
                "the player who has just moved moved again on the opponent's turn (no clock): an irregularity, not "
                "an illegal move (seed 004 ex. 17); the arbiter may reinstate the position before it (7.6), "
                "otherwise play goes on from the board")).id
        return dataclasses.replace(twice, finding=raised)

    def _drop_hands(self, offender: chess.Color, stood: PhysicalBoard) -> None:
        """The out-of-turn move's lifts and placements of the offender's pieces (made, or put back) were his hands:
        no touch of the opponent's, who has the move (4.3.2: a piece of the offender's his to capture)."""
        squares = {sq for sq in chess.SQUARES if stood.squares[sq] != self.g.index.piece_at(sq)}
        g = self.g
        g.seg_lifts = [x for x in g.seg_lifts if not (x[1] in squares and x[2].color == offender)]
        g.seg_places = [x for x in g.seg_places if not (x[1] in squares and x[2].color == offender)]

    def reinstated(self) -> None:
        """The arbiter reinstated a position (7.6, 7.5.1): an out-of-turn move still waiting for the reply to enter
        the record is settled by it (put back, or to be put back, on the board), never entered after it."""
        self.twice = None

    def _index_again(self, n: int) -> PositionIndex:
        """The official position with the player who has just moved to move again (his moves on the opponent's
        turn read from it), kept for the record's length *n*."""
        if self._again is None or self._again[0] != n:
            board = self.g.board.copy(stack=False)
            board.turn = not board.turn
            board.ep_square = None
            self._again = (n, PositionIndex(board))
        return self._again[1]

    def enter_twice(self, outs: list[Output], twice: _Twice, at: float) -> str | None:
        """The out-of-turn move enters the record, made when it was put down (G6): it completes its player's
        previous move (6.2.1.2) and is itself completed by his next one; the opponent keeps the move. Returns its
        ``OUT_OF_TURN_CHANGE`` (raised now if its position had not stood ``T_settle`` yet)."""
        g = self.g
        offender = not g.board.turn
        self.twice = None
        finding = self._twice_raised(outs, twice).finding if twice.ply == len(g.records) else twice.finding
        self.e.made_moves.complete_previous(outs, offender, twice.since, recovered=False)
        desc = describe_change(g.board, twice.stood.squares)
        phys, last_t = g.phys, g.last_board_t
        lifts, places, evidence = g.seg_lifts, g.seg_places, g.seg_evidence
        g.phys, g.last_board_t = twice.stood, twice.since
        g.mask.clear()
        try:
            self.e.restoration.adopt_physical(outs, offender, at, desc, twice.reading, out_of_turn=True)
        finally:
            g.phys, g.last_board_t = phys, last_t
        self.e.recognition.not_completed_yet(outs, offender)
        self.e.recognition.reply_segment(twice.since, lifts, places, evidence)
        return finding

    def confirmed(self, outs: list[Output], finding: str, at: float) -> None:
        """The arbiter ruled on the out-of-turn finding without reinstating (R13: "continue recognition from the
        physical position only if the arbiter confirms"): the out-of-turn move standing on the board enters the
        record now, the opponent to move."""
        twice = self.twice
        if twice is not None and twice.finding == finding and twice.ply == len(self.g.records) \
                and self.g.phys.key() == twice.stood.key() and self.g.playing:
            self.enter_twice(outs, twice, at)
