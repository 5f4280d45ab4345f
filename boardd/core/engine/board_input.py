"""Board input: sensor changes and dumps into the physical position (rules-spec §3.1, §3.6)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import (
    _CENTRE_BB,
    _JUMP_DEPTH,
    _ROTATIONS,
    _SNAPSHOT_INCREMENTAL,
    _change_text,
    _fen,
    _search,
)
from boardd.core.engine.modes import Phase, PhaseTrigger
from boardd.core.events import (
    BoardSnapshot,
    Content,
    Marker,
)
from boardd.core.outputs import (
    Completion,
    Evidence,
    GameEvent,
    MoveCompleted,
    MoveMade,
    MoveRecord,
    MovesRetracted,
    Output,
    StateChanged,
    Status,
)
from boardd.core.recognizer import Diff, DiffClass, PhysicalBoard, board_key

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


def _queen_article(edition: int) -> str:
    """Where the Laws say that the pawn left on the last rank is replaced by a queen."""
    return "7.5 a" if edition == 2014 else "7.5.2"


class BoardInput:
    """Board input: sensor changes and dumps into the physical position (rules-spec §3.1, §3.6)."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.impossible_raised = False
        self.seen_board = False
        self.burst: dict[int, tuple[float, Content]] = {}
        self.recent: list[tuple[float, int]] = []

    def map(self, square: int) -> int:
        return _ROTATIONS[self.g.rot][square]

    def on_snapshot(self, outs: list[Output], snap: BoardSnapshot, at: float) -> None:
        first = not self.seen_board
        blind = self.g.board_down
        if blind:
            self.g.resync = True  # the board is back (link event or not): its dump reconciles the outage
            if self.g.press is not None and self.g.press.blind:
                self.e.presses.judge_press(outs, at)  # made during the outage: recorded for the reconciliation below
        if first and not self.g.orientation_known and len(self.g.records) == 0:
            self.e.orientation.detect_orientation_snapshot(outs, snap.squares, at)
        changes = [(sq, c) for sq, c in enumerate(snap.squares) if self.g.raw[sq] != c]
        if first:
            self.e.orientation.check_setup(outs, snap.squares, at)
        if changes:
            # boards that only send full frames (Millennium, Chessnut, Certabo) report every scan as a snapshot:
            # a few changed squares are ordinary changes; the first dump, one after a link outage, or a large
            # jump is a reconciliation (missed updates, divergence)
            reconcile = first or self.g.resync or len(changes) > _SNAPSHOT_INCREMENTAL
            if blind and self.g.resync:
                mapped: list[Content] = [None] * 64
                for raw_sq, content in enumerate(snap.squares):
                    mapped[self.map(raw_sq)] = content if isinstance(content, chess.Piece) else None
                # the game ended while the board link was down (kings on the centre): the moves before, or a gap
                self.e.downtime.ended(outs, mapped, at, self.e.downtime.missed_reason())
            if not reconcile and not self.g.field_updates and self.scan_jump(snap.squares):
                reconcile = True  # a lost scan: the next one is two or three plies ahead (missed updates)
            if reconcile and not self.g.records and \
                    sum(1 for c in snap.squares if isinstance(c, chess.Piece)) < self.g.board.occupied.bit_count():
                # the pieces are being set up: quiet until the start position is there
                self.g.phase.fire(PhaseTrigger.PIECES_MISSING)
            self.on_board(outs, changes, at, snapshot=reconcile)
        self.g.resync = False
        self.seen_board = True
        self.e.downtime.forget_log()  # the board's log read at a reconnection was for this dump
        if blind:
            cand = self.g.cand
            seen = next((p for p in self.g.blind_presses if p.side == self.g.board.turn), None)
            if cand is not None and not cand.replace and seen is not None:
                # one ply missed: the dump shows it as a move in progress; the press seen during the outage
                # completed it
                self.g.cand = None
                self.g.blind_presses.remove(seen)
                self.g.blind_matched += 1
                self.e.made_moves.make(outs, cand.move, min(cand.at, seen.at), completed=True,
                                       completion=Completion.PRESS,
                           press_at=seen.at, recovered=True, clock=seen.clock)
            else:
                self.e.downtime.illegal_back(outs, at)  # one ply missed, an illegal one: judged as at its press
            self.e.links.board_back(outs, at)

    def scan_jump(self, squares: tuple[Content, ...]) -> bool:
        """Does a few-square scan of a snapshot-only board show two or three plies played at once?

        Boards that only send full frames (Millennium, Chessnut, Certabo) lose a frame now and then
        (Bluetooth drop, USB hiccup): the next one is then ahead by more than one ply. It is a jump only
        when it is neither an ordinary intermediate state (no change, one legal move, a move in progress,
        one illegal move) nor, while the last move may still be changed, a replacement of it (R07), and a
        sequence of 2..``_JUMP_DEPTH`` legal moves leads from the official position to it.
        """
        if not self.g.playing or self.g.setting_up or self.g.mask or self.g.pending_fix is not None \
                or self.g.press is not None:
            return False
        mapped = chess.BaseBoard.empty()
        for raw_sq, content in enumerate(squares):
            if isinstance(content, Marker):
                return False
            if content is not None:
                mapped.set_piece_at(self.map(raw_sq), content)
        view = PhysicalBoard(mapped)
        ordinary = (DiffClass.NONE, DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND, DiffClass.ILLEGAL_1)
        if self.g.index.classify(view).kind in ordinary:
            return False
        if self.e.recognition.post_made_open() and self.e.recognition.base_index().classify(view).kind in ordinary:
            return False
        return _search(self.g.board, view.key(), _JUMP_DEPTH, self.g.index.changed_squares(view)) is not None

    def on_board(self, outs: list[Output], changes: list[tuple[int, Content]], at: float, *,
                 snapshot: bool) -> None:
        """Square changes (one instant) into the physical position, then recognition (§3.1, §3.2)."""
        g = self.g
        model = g.model
        if (not g.model_started and model is not None and not snapshot
                and (not self.rules.clock_expected or not g.clock_seen)):  # (ClockReadings.keeps_time)
            model.start(at, g.board.turn)  # no clock: White's time starts with the first activity
            g.model_started = True
        changed_any = False
        batch: list[tuple[int, Content, Content]] = []
        for raw_sq, content in changes:
            if self._change(outs, raw_sq, content, at, snapshot=snapshot, batch=batch):
                changed_any = True
        if self.g.markers:
            self.e.gestures.check_result_gesture(outs, at)
        if not changed_any:
            return
        if not self.g.orientation_known and not self.g.records:
            self.e.orientation.detect_orientation_changes(outs, at)
        if not (self.e.quiet and not self.g.markers and self.e.gestures.gesture_sent is None
                and not self.g.phys.key()[7] & _CENTRE_BB):
            # (quiet: no result piece, no gesture sent and no king on the centre squares: the check finds none and
            # leaves gesture_sent None)
            self.e.gestures.check_result_gesture(outs, at)
        if self.g.gesture_hold:
            if self.g.phys.key()[7] & _CENTRE_BB:
                # a king still stands on the centre after the result signal: nothing is inferred from it
                self.g.cand = None
                self.g.last_diff = Diff(DiffClass.NONE)
                return
            # the kings have left the centre: recognition resumes from the board as it is (a fresh segment,
            # the gesture's lifts and placements are nobody's move)
            self.g.gesture_hold = False
            self.g.seg_lifts = []
            self.g.seg_places = []
            self.g.seg_evidence = []
            self.g.mask.clear()
            batch = []
        self.e.recognition.evaluate(outs, at, snapshot=snapshot, batch=batch)
        self.check_impossible(at)

    def _change(self, outs: list[Output], raw_sq: int, content: Content, at: float, *, snapshot: bool,
                batch: list[tuple[int, Content, Content]]) -> bool:
        """One square's new content; True if the physical position changed (the change is added to *batch*)."""
        g = self.g
        g.raw_touched.add(raw_sq)
        raw = g.raw
        was = raw[raw_sq]
        # (a piece's == is a Python call: only asked when both are something)
        if was is content or (was is not None and content is not None and was == content):
            return False
        raw[raw_sq] = content
        sq = _ROTATIONS[g.rot][raw_sq]
        if isinstance(content, Marker):
            self.on_marker(outs, sq, content, at)
            return False
        if sq in g.markers:
            del g.markers[sq]
        old = g.phys.set(sq, content)
        if old is content or (old is not None and content is not None and old == content):
            return False
        batch.append((sq, old, content))
        g.note_change(at, sq, old, content)
        if self._flicker(outs, sq, content, old, at, snapshot=snapshot):
            batch.pop()
        elif content is None and isinstance(old, chess.Piece):
            g.seg_lifts.append((at, sq, old))
            if not snapshot and g.phase.state is not Phase.SETTING_UP and not (
                    self.e.quiet and (old.color != g.board.turn or len(g.seg_lifts) == 1)):
                # (quiet: not the side to move's piece, or the segment's only lift: no pair of lifts to judge,
                # TwoHands.check_two_hands_lift and far_lift_seen return at once)
                self.e.two_hands.check_two_hands_lift(outs, at, sq, old)
        elif isinstance(content, chess.Piece):
            if not snapshot and g.phase.state is not Phase.SETTING_UP:
                if not (self.e.quiet and content.piece_type not in (chess.KING, chess.ROOK)):
                    self.e.two_hands.check_two_hands_castling(outs, at, sq, content)  # (quiet: only a king or a rook)
                if not (self.e.quiet and not g.seg_places):
                    self.e.two_hands.check_two_hands_places(outs, at, sq, content)  # (quiet: no earlier placement)
            g.seg_places.append((at, sq, content))
        g.last_board_t = at
        return True

    def _flicker(self, outs: list[Output], sq: int, content: Content, old: Content, at: float, *, snapshot: bool
                 ) -> bool:
        """A square that reverted within T_flicker with nothing else nearby: a sensor glitch (True), ignored."""
        timing = self.rules.timing
        burst = self.burst.get(sq)
        if burst is None or at - burst[0] > timing.t_flicker:
            burst = (at, old)
            self.burst[sq] = burst
        self.recent.append((at, sq))
        if len(self.recent) > 64:
            del self.recent[:32]
        before = burst[1]
        if (snapshot or (before is not content and (before is None or content is None or before != content))
                or at - burst[0] > timing.t_flicker
                # (the same answer in any order: from the latest, where another square usually is)
                or any(t >= burst[0] - timing.t_flicker and s != sq for t, s in reversed(self.recent))
                or (content is None and isinstance(old, chess.Piece) and self._king_down_on_its_rook(sq, old))):
            return False
        self.burst.pop(sq, None)
        self.e.whose_change.flickered(sq)
        self.e.findings.raise_finding(outs, "SENSOR_FLICKER", None, at,
                    [Evidence(at=burst[0], event=f"{chess.square_name(sq)} glitch"),
                     Evidence(at=at, event=_change_text(sq, old, content))],
                    text="sensor glitch ignored (not a touch, not a displacement)")
        self.g.seg_lifts = [x for x in self.g.seg_lifts if not (x[1] == sq and x[0] >= burst[0])]
        self.g.seg_places = [x for x in self.g.seg_places if not (x[1] == sq and x[0] >= burst[0])]
        self.g.mask.discard(sq)
        return True

    def may_flicker(self, sq: int, at: float) -> bool:
        """Can the change of *sq* at *at* still turn out a sensor flicker (:meth:`_flicker`): no other square
        changed within T_flicker before it?"""
        since = at - self.rules.timing.t_flicker
        return not any(t >= since and s != sq for t, s in reversed(self.recent))

    def _king_down_on_its_rook(self, sq: int, piece: chess.Piece) -> bool:
        """The side to move's king, in the hand (off its square), put down on the empty square of its castling rook
        and taken up again: the "king takes rook" step of a castling (rules-spec R27, R01), however short. Not a
        sensor glitch (rules-spec §2.4 ``T_flicker``): the piece read is the one in the air beside the square, the
        rook lifted from it; dropped as a glitch, a standard castling's one hand lost its evidence (R01 (c)). The
        castling need not be legal (an illegal one is judged at the press, R16)."""
        board = self.g.board
        if piece.piece_type != chess.KING or piece.color != board.turn:
            return False
        king = board.king(piece.color)
        if king is None or self.g.phys.squares[king] == piece or board.piece_at(sq) != chess.Piece(chess.ROOK,
                                                                                                   piece.color):
            return False
        # a castling whether legal or not: the illegal one (R16, the right lost, in check, through an attacked square)
        # is made by the same hands and judged at the press
        home = 0 if piece.color == chess.WHITE else 7
        return chess.square_rank(king) == chess.square_rank(sq) == home

    def apply_fix(self, outs: list[Output], at: float) -> bool:
        """The board now shows the law-based outcome of the last illegal completion: record that move instead."""
        assert self.g.pending_fix is not None
        ply, key, move, pre, irr_id = self.g.pending_fix
        if ply != len(self.g.records):
            self.g.pending_fix = None  # play went on: the physical record stands
            return False
        lawful, queen = True, move
        if self.g.phys.key() != key:
            other = self._other_promotion(move, pre)
            if other is None:
                return False
            # 7.5.2: the pawn exchanged for another piece than the queen: the choice is open in E2009 (7.4 a: the
            # replacement under 4.3/4.6), from 2014 the Law wants a queen; the board stands as it is (G6)
            move, lawful = other, self.g.edition < 2014
        self.g.pending_fix = None
        old = self.g.records[-1]
        del self.g.records[-1]
        del self.g.keys[-1]
        outs.append(MovesRetracted(at=at, to_ply=ply - 1, reason=f"board put right after {irr_id}"))
        self.g.board = self.e.restoration.replay_board(ply - 1) or pre.copy()
        self.e.recognition.rebuild_index()
        side = self.g.board.turn
        san = self.g.board.san(move)
        self.g.board.push(move)
        rec = MoveRecord(ply=ply, uci=move.uci(), san=san, side=side, fen_after=_fen(self.g.board),
                         made_at=old.made_at, completed_at=old.completed_at, completion=old.completion,
                         clock_white=old.clock_white, clock_black=old.clock_black, emt=old.emt)
        self.g.records.append(rec)
        self.e.recognition.rebuild_index()
        self.g.keys.append(self.g.index.key)
        self.g.mask.clear()
        self.g.oot_raised = False
        outs.append(MoveMade(move=rec))
        outs.append(MoveCompleted(move=rec))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"fixed": irr_id, "move": san}))
        # put right (7.5.2: the pawn exchanged for a queen; a castling finished), by the arbiter or by a player on a
        # running clock, in any order, with detours: the pieces handled until the board showed it are the hands of
        # the fix, part of the illegal move's incident, not touched by the player on move (4.3); his thinking time
        # still runs from the press
        self.g.seg_lifts = []
        self.g.seg_places = []
        self.g.seg_evidence = []
        self.e.correction.board_fixed(outs, irr_id, san, at)
        if not lawful:
            self._not_a_queen(outs, irr_id, san, pre.san(queen), side=side, at=at)
        outs.append(StateChanged(at=at))
        return True

    def _not_a_queen(self, outs: list[Output], irr_id: str, san: str, queen: str, *, side: chess.Color,
                     at: float) -> None:
        """From 2014 the pawn left on the last rank is replaced by a queen (7.5.2); the board shows *san* instead.
        One incident, one alert: the finding still open says so; resolved (the arbiter's hands), the replacement
        contrary to the Law is a finding of the incident (rules-spec §3.7: TOUCH_MOVE_VIOLATION)."""
        irr = self.g.irr.get(irr_id)
        note = f"the board shows {san}: the pawn is replaced by a queen, {queen} ({_queen_article(self.g.edition)})"
        if irr is not None and irr.status is not Status.RESOLVED:
            if note not in irr.suggestion.text:
                self.e.findings.update_finding(outs, dataclasses.replace(irr, suggestion=dataclasses.replace(
                    irr.suggestion, text=f"{irr.suggestion.text}; {note}")))
            return
        self.e.findings.raise_finding(
            outs, "TOUCH_MOVE_VIOLATION", side, at, [Evidence(at=at, event=f"board shows {san}")], incident=irr_id,
            related=(irr_id,), move=queen, constraints=(f"{queen} ({_queen_article(self.g.edition)}: the pawn is "
                                                         "replaced by a queen)",),
            text=f"the pawn left on the last rank ({irr_id}) was exchanged for another piece: {note}")

    def _other_promotion(self, fix: chess.Move, pre: chess.Board) -> chess.Move | None:
        """The board shows the pawn of a pending 7.5.2 fix exchanged for a rook, bishop or knight instead of the
        queen: that promotion (else None)."""
        shown = self.g.phys.squares[fix.to_square]
        if fix.promotion is None or not isinstance(shown, chess.Piece) or shown.color != pre.turn \
                or shown.piece_type not in (chess.KNIGHT, chess.ROOK, chess.BISHOP):
            return None
        other = chess.Move(fix.from_square, fix.to_square, promotion=shown.piece_type)
        if other not in pre.legal_moves:
            return None
        after = pre.copy(stack=False)
        after.push(other)
        return other if board_key(after) == self.g.phys.key() else None

    def fix_in_progress(self) -> bool:
        """Changes on the squares where the board differs from a pending fix are the fix, not out-of-turn play."""
        pending = self.g.pending_fix
        if pending is None or pending[0] != len(self.g.records):
            return False
        after = pending[3].copy(stack=False)
        after.push(pending[2])
        official = self.g.index
        fix_squares = {sq for sq in chess.SQUARES if after.piece_at(sq) != official.piece_at(sq)}
        return all(sq in fix_squares for sq in self.g.mask)

    def check_impossible(self, at: float) -> None:
        """Readings no chess position can have (two kings of a colour, 17 pieces, 9 pawns)."""
        key = self.g.phys.key()
        white, black, kings, pawns = key[0], key[1], key[7], key[2]
        if ((white & kings).bit_count() <= 1 and (black & kings).bit_count() <= 1 and white.bit_count() <= 16
                and black.bit_count() <= 16 and (white & pawns).bit_count() <= 8 and (black & pawns).bit_count() <= 8):
            # (every reading a position can have: the loop below finds no problem)
            self.g.impossible_since = None
            self.impossible_raised = False
            return
        problem = None
        for ci, name in ((0, "White"), (1, "Black")):
            side = key[ci]
            if (side & key[7]).bit_count() > 1:
                problem = f"{name} has {(side & key[7]).bit_count()} kings"
            elif side.bit_count() > 16:
                problem = f"{name} has {side.bit_count()} pieces"
            elif (side & key[2]).bit_count() > 8:
                problem = f"{name} has {(side & key[2]).bit_count()} pawns"
        if problem is not None and self.g.last_diff.kind in (DiffClass.PARTIAL, DiffClass.LEGAL):
            problem = None  # e.g. the new piece put on the promotion square before the pawn is taken off (R06 P3)
        if problem is None:
            self.g.impossible_since = None
            self.impossible_raised = False
        elif self.g.impossible_since is None or self.g.impossible_since[1] != problem:
            self.g.impossible_since = (at, problem)  # a transient within one scan is normal: wait T_settle
            self.impossible_raised = False

    def impossible_due(self) -> float | None:
        if self.g.impossible_since is None or self.impossible_raised:
            return None
        return self.g.impossible_since[0] + self.rules.timing.t_settle

    def impossible_overdue(self, outs: list[Output], due: float) -> None:
        """An impossible reading persisted: ``SENSOR_FAULT`` (no move is inferred from it)."""
        since = self.g.impossible_since
        assert since is not None
        self.impossible_raised = True
        self.e.findings.raise_finding(outs, "SENSOR_FAULT", None, due, [Evidence(at=since[0], event="reading")],
                    text=f"impossible reading: {since[1]}; no move is inferred from it until "
                         "the readings make sense (check the board and the pieces)")

    def on_marker(self, outs: list[Output], sq: int, marker: Marker, at: float) -> None:
        self.g.markers[sq] = marker
        # inference on that square is suspended: the square keeps its official content
        self.g.phys.set(sq, self.g.index.piece_at(sq))
        if marker is Marker.UNKNOWN:
            name = chess.square_name(sq)
            self.e.findings.raise_finding(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event=f"? {name}")],
                        text=f"unreadable piece on {chess.square_name(sq)}; inference suspended on that square")
