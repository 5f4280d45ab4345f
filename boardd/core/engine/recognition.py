"""Recognition (rules-spec §3.2–§3.3): the difference official → physical classified after every change."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import (
    _CENTRE_BB,
    _TAKEBACK_DEPTH,
    _bits,
    _board_from,
    _Candidate,
    _castling_king_square,
    _content_text,
)
from boardd.core.engine.modes import Phase, PhaseTrigger
from boardd.core.events import (
    Content,
)
from boardd.core.outputs import (
    Completion,
    Evidence,
    GameEvent,
    Irregularity,
    MoveCompleted,
    MoveMade,
    Output,
    Status,
)
from boardd.core.recognizer import Diff, DiffClass, PhysicalBoard, PositionIndex

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


#: classes that are no move of the side to move: the board may show an earlier position (a takeback)
_NOT_A_MOVE = (DiffClass.UNRECOGNISED, DiffClass.OPP_ONLY, DiffClass.TWO_MOVES, DiffClass.ILLEGAL_1)


class Recognition:
    """Recognition (rules-spec §3.2–§3.3): the difference official → physical classified after every change."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.after_game_raised = False
        self.opp_early: Irregularity | None = None
        self.early_pending: tuple[float, chess.Color, tuple[Evidence, ...]] | None = None
        #: without a clock, the last illegal position of the mover's (record length, since, diff, reading, left at)
        self.illegal_seen: tuple[int, float, Diff, PhysicalBoard, float | None] | None = None

    def rebuild_index(self) -> None:
        self.g.index = PositionIndex(self.g.board)

    def evaluate(self, outs: list[Output], at: float, *, snapshot: bool,
                 batch: list[tuple[int, Content, Content]] | None = None) -> None:
        """Classify the physical position after a change (§3.2) and act on the class (§3.3, §3.4)."""
        g = self.g
        quiet = self.e.quiet
        if not g.records and g.phys.key() != g.index.key:
            self.e.orientation.adopt_chess960_start(outs, at)  # the variant's start array (chess960 / auto)
        if not (quiet and g.phase.state is Phase.PLAY and g.pending_fix is None and g.adopted_open is None) \
                and self._phase_gate(outs, at):
            return  # (quiet: in play, no fix pending, no adopted position open: the gate lets the change through)
        correction = self.e.correction
        if not (quiet and correction.unpublished is None and correction.cycle is None
                and g.illegal_ply < max(0, len(g.records) - correction.depth())) \
                and correction.board_reinstated(outs, at):
            return  # (quiet: no move kept back, no cycle, no illegal move recent enough to be found later: as far
            # back as Correction.depth looks, the whole game on a paused clock)
        g.undo_due = None  # (the board changed: a position before the made move must stand anew)
        turn = g.board.turn
        mover = not turn
        post_open = self.post_made_open()
        before = g.last_diff
        own_only = quiet and not g.mask and not snapshot and batch is not None
        if own_only:
            for _, old, new in batch:  # type: ignore[union-attr]
                if (old is not None and old.color != turn) or (new is not None and new.color != turn):  # type: ignore[union-attr]
                    own_only = False
                    break
        if own_only:
            opp_touch = False  # (quiet: no mask, only pieces of the side to move changed: WhoseChange.opp_change
            # says no to each, and an empty mask leaves _mask_opponent nothing to revise or restore)
        else:
            opp_touch = self._mask_opponent(outs, at, turn, snapshot=snapshot, post_open=post_open, batch=batch)
        view = self.e.whose_change.masked_view() if g.mask else g.phys
        diff = g.index.classify(view)
        kind = diff.kind
        if not post_open and not snapshot and kind is not DiffClass.LEGAL and self._start_contradicted():
            # 4.7: what looked like the opponent starting (his piece lifted, maybe the mover's piece put down there,
            # kept apart) was the last mover capturing it with his released move changed: revised, one change (R07)
            self.e.made_moves.start_revised(outs, at)
            self.g.last_diff = diff
            self._after_made(outs, at, snapshot=snapshot)
            return
        if not snapshot and not (
                quiet and self.illegal_seen is None and self.e.whose_change.twice is None and not g.mask
                and kind in (DiffClass.NONE, DiffClass.IN_HAND, DiffClass.LEGAL)
                and not diff.changed & g.index.board.occupied_co[not turn]) \
                and (self._completed_by_the_reply(outs, diff, view, at) or self.e.whose_change.moved_twice(outs, at)):
            # (quiet: no illegal position of the mover seen, no second move of the last mover, and none of his
            # pieces changed: neither has anything to judge, and both leave their state as it is)
            # the illegal (or out-of-turn) move stands in the record: the opponent's changes are now his move
            view = self.g.phys
            diff = self.g.index.classify(view)
            turn = self.g.board.turn
            mover = not turn
            opp_touch = False
            post_open = self.post_made_open()
        if not post_open and not snapshot and self.g.mask and self.g.opp_started \
                and self.e.made_moves.changing_from_base():
            # the last mover's hands on another move from the position before his made move, the opponent's piece
            # lifted maybe its victim: judged when it shows (a capture: revised above) or the board goes elsewhere
            self.g.last_diff = diff
            return
        self.g.last_diff = diff
        if self.g.cand is not None and not (diff.kind is DiffClass.LEGAL and diff.move == self.g.cand.move):
            # (dropped before the reply is looked for: the change that drops it may complete the reply, blitz or no
            # clock, the opponent's first change kept apart while the move settled)
            self.e.made_moves.dropped(self.g.cand)
            self.g.cand = None
        if diff.kind not in (DiffClass.LEGAL, DiffClass.NONE) and not snapshot \
                and not (quiet and self.e.made_moves.unsettled is None) \
                and self.e.made_moves.replied_before_settled(outs, at):  # (quiet: no candidate dropped unsettled)
            self.evaluate(outs, at, snapshot=snapshot)  # the reply, against the position after the move (blitz)
            return
        if diff.kind is DiffClass.LEGAL and not snapshot and self.e.made_moves.unsettled is not None \
                and self.e.made_moves.touched_back_before_settled(outs, at):
            # the move stood on its squares, the opponent's piece lifted and put back meanwhile: made as placed
            self.evaluate(outs, at, snapshot=snapshot)
            return
        if opp_touch and not self.g.opp_early_raised and before.kind in (DiffClass.PARTIAL, DiffClass.IN_HAND) \
                and diff.kind is not DiffClass.NONE and not self.e.correction.awaiting_reinstatement():
            # held until the opponent's touch is confirmed: the lift may yet turn out the mover's capture
            self.g.opp_early_raised = True
            self.early_pending = (at, mover, tuple(self.g.seg_evidence[-1:]))
        if self.early_pending is not None and self.g.mask and (
                diff.kind is DiffClass.LEGAL or any(isinstance(self.g.phys.squares[sq], chess.Piece)
                                                    for sq in self.g.mask)) \
                and not self.e.made_moves.changing_from_base() \
                and not self.e.made_moves.reply_under_way(self.early_pending[0]):
            # (the opponent's reply to the last move under way after that move stood, not settled yet: judged when
            # the reply shows, MadeMoves.replied_before_settled)
            self.flush_early(outs)
        if post_open and (diff.kind in (DiffClass.OPP_ONLY, DiffClass.UNRECOGNISED)
                          or (not snapshot and self.e.made_moves.hands_on_released())):
            self._after_made(outs, at, snapshot=snapshot)
            return
        if diff.kind in _NOT_A_MOVE and not self.g.mask and not post_open:
            back = self.earlier_position()
            if back is not None and snapshot and self.g.resync and (len(self.g.records) - back > _TAKEBACK_DEPTH
                                                                     or back == 0):
                # the dump after a link outage: an official position this far back, or the game's start position
                # however short the game, is no takeback anyone saw (the board set up again for the next game while
                # it was out of sight): reconciled as any board the outage leaves unexplained (a divergence for the
                # arbiter), the record kept
                back = None
            if back is not None and self.e.correction.partial_restore(outs, back, at):
                return
            if back is not None and self.e.made_moves.undo_pending(back, at):
                return  # the last move, not completed, taken back by its player (R07), if it stands
            if back is not None:
                # R29: the board shows an earlier official position (a takeback of any depth)
                self.e.restoration.takeback(outs, back, at)
                return
        if not (quiet and self.g.castle_king is None and diff.kind is not DiffClass.PARTIAL):
            self.track_castle_king(diff, at, self.g.index)  # (quiet: no king on its castling square, none now)
        self._act(outs, diff, at, snapshot=snapshot)

    def _completed_by_the_reply(self, outs: list[Output], diff: Diff, view: PhysicalBoard, at: float) -> bool:
        """Without a clock, an illegal move released and the opponent's reply started: it is judged now.

        No press completes a move here (6.2.1.2: the same player's next move does, from E2014; E2009 has no
        completion without the clock). An illegal move (R16: ILLEGAL_1, two pieces moved, a castling, en passant
        or promotion left unfinished) presumed released (it stood ``T_settle``) on which the opponent has started
        his reply (1.3: the released move gave him the move; R22's claim window closes when his reply is made) is
        what the arbiter sees and rules on (7.5.1). It is raised as at a press, with its penalty per edition, and
        stands in the record (G6, ``legal=False``) so that the reply and the rest of the game are recorded after
        it, unless the arbiter's correction reinstates the position before it.

        The reply has started when a piece of the opponent's changed since the illegal position stood and the
        board, read from that position with the opponent to move, is his move in progress (a piece in hand, a
        partial or a legal move). A capture's victim lifted first is the mover's colour: it waits for the capturer.
        Returns True when the illegal move entered the record (the current reading is then to be read anew).
        """
        seen = self.illegal_seen
        turn = self.g.board.turn
        if self.e.presses.press_expected(len(self.g.records) + 1) or self.g.press is not None \
                or not self.g.playing or self.g.paused or self.e.correction.awaiting_reinstatement() \
                or self.g.pending_fix is not None:
            self.illegal_seen = None
            return False
        if seen is not None and seen[0] != len(self.g.records):
            seen = self.illegal_seen = None
        key = view.key()
        illegal = diff.kind in (DiffClass.ILLEGAL_1, DiffClass.TWO_MOVES) or (
            diff.kind is DiffClass.PARTIAL and diff.subtype is not None)
        if diff.kind in (DiffClass.NONE, DiffClass.LEGAL):
            # the mover took it back or finished a legal move (an en passant's pawn taken off after a pause): no
            # illegal move to judge, whatever the opponent touched meanwhile
            self.illegal_seen = None
            return False
        if seen is not None and seen[3].key() != key and seen[4] is None:
            seen = self.illegal_seen = (seen[0], seen[1], seen[2], seen[3], at)  # the board left that position
        if seen is not None and not self.reply_started(seen, at, turn):
            if illegal and seen[3].key() != key:
                seen = None  # the mover goes on with his move (his own pieces): a new position of his
            else:
                return False
        if seen is None:
            if illegal:
                self.illegal_seen = (len(self.g.records), at, diff, PhysicalBoard(view.base_board()), None)
            return False
        _, since, held, stood, _left = seen
        reply = self.index_after(stood, turn).classify(self.g.phys)
        if reply.kind not in (DiffClass.IN_HAND, DiffClass.PARTIAL, DiffClass.LEGAL) or self._gesture_open(stood, turn):
            return False
        # made when it was put down (released, 1.3): it completes the offender's previous move (6.2.1.2), and the
        # engine's clock (no clock here) switches then, as for a legal made move
        self.e.made_moves.complete_previous(outs, turn, since, recovered=False)
        if self.g.model is not None and self.g.model_started and self.e.clock_readings.keeps_time():
            self.g.model.press(turn, since)
            self.e.clock_readings.model_clock(since, not turn)
        phys, last_t = self.g.phys, self.g.last_board_t
        lifts, places, evidence = self.g.seg_lifts, self.g.seg_places, self.g.seg_evidence
        self.g.phys, self.g.last_board_t = stood, since
        self.g.mask.clear()
        self.illegal_seen = None
        try:
            self.e.presses.press_as_mover(outs, turn, at, Evidence(at=at, event="reply started"), held)
        finally:
            self.g.phys, self.g.last_board_t = phys, last_t
        self.early_pending = None
        if len(self.g.records) <= seen[0]:
            return False
        self.not_completed_yet(outs, turn)
        self.reply_segment(since, lifts, places, evidence)
        return True

    def reply_segment(self, since: float, lifts: list[tuple[float, int, chess.Piece]],
                      places: list[tuple[float, int, chess.Piece]], evidence: list[Evidence]) -> None:
        """The reply's segment began when the move it answers was made (*since*); what the opponent touched since
        is his (4.3). Also for a move out of turn entered at the reply (``WhoseChange.enter_twice``)."""
        self.g.seg_start = since
        self.g.seg_lifts = [x for x in lifts if x[0] > since]
        self.g.seg_places = [x for x in places if x[0] > since]
        self.g.seg_evidence = [x for x in evidence if x.at > since]

    def not_completed_yet(self, outs: list[Output], turn: chess.Color) -> None:
        """The illegal move (or a move out of turn, ``WhoseChange.enter_twice``) entered the record as at a press;
        without one it is completed by the offender's next move (6.2.1.2), like any move here: it stays made, not
        completed, until then."""
        rec = self.g.records[-1]
        if rec.legal or rec.side != turn or rec.completion is not Completion.PRESS:
            return
        made = dataclasses.replace(rec, completed_at=None, completion=None)
        self.g.records[-1] = made
        self.g.uncompleted[turn] = made.ply
        outs[:] = [MoveMade(move=made) if isinstance(o, MoveMade) and o.move == rec else o for o in outs
                   if not (isinstance(o, MoveCompleted) and o.move == rec)]

    def reply_started(self, seen: tuple[int, float, Diff, PhysicalBoard, float | None], at: float,
                      turn: chess.Color) -> bool:
        """The illegal position *seen* stood ``T_settle`` (released) and a piece of the opponent's changed since
        (also a move out of turn's position, ``WhoseChange.moved_twice``)."""
        since, left = seen[1], seen[4]
        if (at if left is None else left) - since < self.rules.timing.t_settle:
            return False
        return any(t > since and piece.color != turn for t, _, piece in (*self.g.seg_lifts, *self.g.seg_places))

    def _gesture_open(self, stood: PhysicalBoard, turn: chess.Color) -> bool:
        """The mover's king put on a centre square and the opponent's king in hand: maybe a result gesture (the
        opponent's king joining it), never a move (lila#11783); judged once the opponent's king is down."""
        if not self.rules.result_gesture:
            return False
        king = chess.Piece(chess.KING, turn)
        moved = [sq for sq in chess.SquareSet(_CENTRE_BB) if stood.squares[sq] == king
                 and self.g.index.piece_at(sq) != king]
        theirs = chess.Piece(chess.KING, not turn)
        return bool(moved) and theirs not in self.g.phys.squares

    def index_after(self, stood: PhysicalBoard, side: chess.Color) -> PositionIndex:
        """The position *stood* with the opponent of *side* to move (as the record would adopt it, G6)."""
        return PositionIndex(_board_from(stood.squares, self.g.board, not side))

    def _phase_gate(self, outs: list[Output], at: float) -> bool:
        """What the phase of the game does with a change before any recognition; True: nothing more to do."""
        phase = self.g.phase.state
        if phase is Phase.GAME_OVER:
            if not self.after_game_raised:
                self.after_game_raised = True
                self.e.findings.raise_finding(outs, "MOVE_AFTER_GAME_END", None, at, self.g.seg_evidence[-1:],
                            text="board activity after the end of the game (analysis?)")
            return True
        if phase is Phase.AWAIT_RESTORE:
            self.g.restore_check = at + self.rules.timing.t_adjust
            if self.g.phys.key() == self.g.restore_key:
                self.g.restore_check = None
                self.g.phase.fire(PhaseTrigger.RESTORED)
                self.g.seg_lifts = []
                self.g.seg_places = []
                self.g.seg_evidence = []
                self.g.mask.clear()
                outs.append(GameEvent(at=at, type="REINSTATED", details={"ply": len(self.g.records)}))
                self.e.restoration.restored(outs, at)
            return True
        if self.g.pending_fix is not None and self.e.board_input.apply_fix(outs, at):
            return True
        if self.g.setting_up:
            if self.g.phys.key() == self.g.index.key and not self.g.mask:
                # the start position is complete: the game can begin
                self.g.phase.fire(PhaseTrigger.START_POSITION_SHOWN)
                self.g.seg_lifts = []
                self.g.seg_places = []
                self.g.seg_evidence = []
                self.g.two_hands.clear()
            return True
        if self.g.adopted_open is not None:
            if self.g.adopted_open == len(self.g.records):
                self.e.restoration.adopted_turn()
            else:
                self.g.adopted_open = None
        return False

    def _mask_opponent(self, outs: list[Output], at: float, turn: chess.Color, *, snapshot: bool, post_open: bool,
                       batch: list[tuple[int, Content, Content]] | None) -> bool:
        """Keep the opponent's own changes apart (masked); True if the opponent touched a piece in this batch."""
        mover = not turn
        opp_touch = False
        if not post_open and not snapshot:
            for sq, old, new in batch or ():
                if self.e.whose_change.opp_change(sq, old, new, turn):
                    self.g.mask.add(sq)
                    opp_touch = True
        if self.g.mask:
            self._revise_captures(outs, turn, at)
        if self.g.mask:
            # the opponent's own activity is kept apart; restore squares that are back to normal
            restored = [sq for sq in self.g.mask if self.g.phys.squares[sq] == self.g.index.piece_at(sq)]
            for sq in restored:
                self.g.mask.discard(sq)
            restored = [sq for sq in restored if isinstance(self.g.phys.squares[sq], chess.Piece)]
            if restored and not self.g.mask and not self.g.oot_raised and not snapshot \
                    and not self.e.correction.restoring(restored) \
                    and not self.e.made_moves.putting_back(restored) \
                    and not self.e.made_moves.reply_under_way():  # the correction's hands (7.5.1), the move a
                # press completed while taken back put back on the board (4.7), the opponent's reply to a move not
                # settled yet (his piece touched on his own turn, §3.4.1)
                sq = restored[0]
                piece = self.g.phys.squares[sq]
                self.e.findings.raise_finding(outs, "ADJUST_OUT_OF_TURN", mover, at, self.g.seg_evidence[-2:],
                            text=f"{_content_text(piece)} on {chess.square_name(sq)} lifted and put back on the "
                                 "opponent's time (6.2.5); actor unknown: the player on move may have touched it "
                                 "(4.3.2)")
        return opp_touch

    def flush_early(self, outs: list[Output]) -> None:
        """OPPONENT_STARTED_BEFORE_MOVE_MADE, once the opponent's touch is confirmed (or at the press)."""
        pending, self.early_pending = self.early_pending, None
        if pending is None or not self.g.mask:
            return
        at, mover, evidence = pending
        self.opp_early = self.e.findings.raise_finding(
            outs, "OPPONENT_STARTED_BEFORE_MOVE_MADE", mover, at, evidence,
            text="the opponent touched a piece while the move was still being made (1.3); touch-move applies to him")

    def _revise_captures(self, outs: list[Output], turn: chess.Color, at: float) -> None:
        """A lift read as the opponent's that the side to move then fills with his own piece was his capture.

        Two lifts in one scan have no order, and a capturing hand may take its own piece first: the lift
        of an opponent's piece that no legal move captures looks like the opponent's own activity until a
        piece of the side to move lands on that square. Then it is revised: the square belongs to the move
        (legal or not, the press judges it), and an early-start finding that it caused is withdrawn.
        """
        revised = [sq for sq in self.g.mask
                   if isinstance(self.g.phys.squares[sq], chess.Piece)
                   and self.g.phys.squares[sq].color == turn  # type: ignore[union-attr]
                   and isinstance(self.g.index.piece_at(sq), chess.Piece)
                   and self.g.index.piece_at(sq).color != turn]  # type: ignore[union-attr]
        if not revised:
            return
        for sq in revised:
            self.g.mask.discard(sq)
        if not self.g.mask:
            self.early_pending = None
        early = self.opp_early
        if early is not None and not self.g.mask and early.status is not Status.RESOLVED:
            self.opp_early = None
            self.e.findings.update_finding(outs, dataclasses.replace(
                early, status=Status.RESOLVED,
                ruling=f"withdrawn: the piece lifted on {chess.square_name(revised[0])} was captured there by the "
                       "side to move, not touched by the opponent"))

    def _after_made(self, outs: list[Output], at: float, *, snapshot: bool) -> None:
        """A change of the last mover's own move before the opponent started (R07): a replacement candidate."""
        base = self.base_index()
        bdiff = base.classify(self.g.phys)
        if bdiff.kind is DiffClass.LEGAL and bdiff.move is not None:
            self.g.cand = _Candidate(bdiff.move, at, at + self.rules.timing.t_settle, replace=True)
        elif bdiff.kind is DiffClass.NONE:
            # the position before the made move is back: taken back if it stands (MadeMoves.take_back)
            self.e.made_moves.undo_pending(len(self.g.records) - 1, at)
        self.track_castle_king(bdiff, at, base)
        if snapshot and bdiff.kind not in (DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND):
            # a dump that is no change of the last move: missed updates or R15
            self.e.restoration.reconcile(outs, at)

    def _act(self, outs: list[Output], diff: Diff, at: float, *, snapshot: bool) -> None:
        """Act on the class of the difference: back to the official position, a LEGAL candidate, the rest."""
        turn = self.g.board.turn
        mover = not turn
        if diff.kind is DiffClass.NONE:
            self.g.match_t = at
            if self.g.mask or self.g.phys.key() != self.g.index.key:
                self.e.whose_change.out_of_turn(outs, mover, at, snapshot)
            else:
                self.e.whose_change.check_adjust(outs, at)
            return
        quiet = self.e.quiet
        if diff.kind is DiffClass.LEGAL:
            assert diff.move is not None
            if not (quiet and self.g.opp_started):
                self.e.whose_change.note_started(outs, turn, at)  # (quiet: started already, it returns at once)
            if self.g.cand is None:
                self.g.cand = _Candidate(diff.move, at, at + self.rules.timing.t_settle)
                self.g.match_t = at
            if not (quiet and self.g.pressed_no_move is None):
                self.e.whose_change.check_out_of_turn_move(outs, turn, at)  # (quiet: no press without a move)
            return
        if self.g.illegal_state is not None and (diff.kind is not DiffClass.ILLEGAL_1 or diff.move !=
                                                self.g.illegal_state[1]):
            if at - self.g.illegal_state[0] >= self.rules.timing.t_settle:
                self.g.illegal_settled = self.g.illegal_state
            self.g.illegal_state = None
        if diff.kind is DiffClass.ILLEGAL_1 and diff.move is not None and self.g.illegal_state is None \
                and not self._king_onto_castling_rook(diff.move):
            self.g.illegal_state = (at, diff.move)
        if diff.kind is DiffClass.PARTIAL and diff.move is not None and diff.move.promotion:
            self.g.promo_seen = True
        if snapshot and diff.kind in (DiffClass.UNRECOGNISED, DiffClass.TWO_MOVES, DiffClass.OPP_ONLY):
            self.e.restoration.reconcile(outs, at)
            return
        if diff.kind is DiffClass.OPP_ONLY and self.e.whose_change.parked_capture(_bits(diff.changed)):
            self.g.parked = True
        if not (quiet and self.g.opp_started):
            self.e.whose_change.note_started(outs, turn, at)  # (quiet: started already, it returns at once)
        if not (quiet and self.g.pressed_no_move is None):
            self.e.whose_change.check_out_of_turn_move(outs, turn, at)  # (quiet: no press without a move)

    def _king_onto_castling_rook(self, move: chess.Move) -> bool:
        """The king put down on its castling rook's square, the rook in hand: the "king takes rook" way of a
        Chess960 castling (the DGT e-board software's and some GUIs' entry, carried to the board by players used
        to it; II.3 / F.3 leave the order of the hands free). A step of the castling, not an illegal placement
        (no ILLEGAL_PLACEMENT_CORRECTED when the castling is finished, however long the king stood there)."""
        board = self.g.board
        return board.chess960 and board.piece_type_at(move.to_square) == chess.ROOK \
            and board.is_castling(move) and board.is_legal(move)

    def track_castle_king(self, diff: Diff, at: float, index: PositionIndex) -> None:
        """R07: a king released on its castling square commits to castling (4.7.2)."""
        state = None
        if diff.kind is DiffClass.PARTIAL and diff.move is not None and index.board.is_castling(diff.move) \
                and not index.board.chess960:
            king_to = _castling_king_square(index.board, diff.move)
            if self.g.phys.squares[king_to] == chess.Piece(chess.KING, index.board.turn):
                state = (at, diff.move)
        prev = self.g.castle_king
        if prev is not None and (state is None or state[1] != prev[1]):
            if at - prev[0] >= self.rules.timing.t_settle:
                self.g.castle_released = (prev[0], prev[1], index.board.san(prev[1]))
            self.g.castle_king = None
        if state is not None and self.g.castle_king is None:
            self.g.castle_king = state

    def earlier_position(self, depth: int | None = None) -> int | None:
        """The latest earlier ply whose position the board shows (placement), at most *depth* plies back."""
        key = self.g.phys.key()
        keys = self.g.keys
        last = len(keys) - 1
        low = 0 if depth is None else max(0, last - depth)
        if low >= last:
            return None
        # the plies last - 1 down to low, latest first: one search at C speed (a walk of the game, issue 12)
        try:
            return last - 1 - keys[last - 1:low - 1 if low else None:-1].index(key)
        except ValueError:
            return None

    def _start_contradicted(self) -> bool:
        """The opponent seemed to have started, but the board is the last mover's made move changed (R07)."""
        mover = not self.g.board.turn
        ply = self.g.uncompleted.get(mover)
        if ply is None or ply != len(self.g.records) or not self.g.opp_started or not self.g.board.move_stack \
                or not self.e.whose_change.own_changed(mover):  # (bitboards: none of his pieces elsewhere)
            return False
        bdiff = self.base_index().classify(self.g.phys)
        if bdiff.kind is DiffClass.LEGAL:
            return bdiff.move != self.g.board.peek()
        # his hand back on his released piece, another move of his from before it under way
        return self.e.made_moves.hands_on_released()

    def post_made_open(self) -> bool:
        mover = not self.g.board.turn
        ply = self.g.uncompleted.get(mover)
        return (ply is not None and ply == len(self.g.records) and not self.g.opp_started
                and self.g.board.move_stack != [])

    def base_index(self) -> PositionIndex:
        if not self.g.board.move_stack:  # the record goes on from an adopted position (a gap): nothing to undo
            return self.g.index
        board = self.g.board.copy()
        board.pop()
        return PositionIndex(board)
