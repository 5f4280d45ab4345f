"""Restoration (rules-spec §3.7; articles 7.5.1, 7.6, takebacks, divergence): reinstating and adopting positions."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _JUMP_DEPTH, _LOGGER, _board_from, _castling_king_square
from boardd.core.engine.modes import Phase, PhaseTrigger
from boardd.core.events import (
    Resolve,
)
from boardd.core.laws.codes import is_illegal_move_class
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
    Severity,
    StateChanged,
    Status,
)
from boardd.core.recognizer import Diff, DiffClass, PositionIndex, describe_change
from boardd.core.recovery import DEFAULT_MAX_PLIES, TWICE_LAST, RecoveryKind

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


def _physical_uci(pre: chess.Board, diff: Diff) -> str:
    """The UCI of what the hand did, for a record entry that is not a legal move (``legal=False``).

    Never a null move where the change can be named: the illegal move itself, the first piece relocated, or
    the piece that moved in an incomplete pattern (the king of an unfinished castling, the pawn left on the
    last rank, the pawn of an unfinished en passant). ``0000`` only when no piece was moved at all.
    """
    if diff.kind is DiffClass.ILLEGAL_1 and diff.move is not None:
        return diff.move.uci()
    if diff.relocations:
        return chess.Move(*diff.relocations[0]).uci()
    move = diff.move
    if move is None:
        return "0000"
    if pre.is_castling(move):
        return chess.Move(move.from_square, _castling_king_square(pre, move)).uci()
    if move.promotion:
        return chess.Move(move.from_square, move.to_square).uci()  # no piece of the promotion chosen (yet)
    return move.uci()


class Restoration:
    """Restoration (rules-spec §3.7; articles 7.5.1, 7.6, takebacks, divergence): reinstating and adopting positions."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.divergence_key: tuple[int, ...] | None = None
        self.restore_irr: str | None = None  # the POSITION_DIVERGENCE of the reinstatement under way (§3.7)
        #: the arbiter's reinstatement the board is awaited for: (ply, the records, keys, board and uncompleted
        #: moves it took back, the plies reinstated to while waiting), for :meth:`withdraw_wait`
        self.awaited: tuple[int, list[MoveRecord], list[tuple[int, ...]], chess.Board, dict[chess.Color, int],
                            frozenset[int]] | None = None

    def forward_jump(self, outs: list[Output], at: float) -> bool:
        """Missed updates (link outage, lost frames, a full dump): the legal plies that lead to the physical board.

        Found as after a restart (:meth:`Downtime.missed`), after a board link outage as deep as after a restart
        (``DEFAULT_MAX_PLIES``: the arbiter sees the same whether the daemon or the cable was down), else (lost
        frames, a dump after lost field updates, the board in sight) up to ``_JUMP_DEPTH`` plies: the board's log
        read at the reconnection (DGT EEPROM) gives the order; else the search, narrowed by the clock and the
        presses seen meanwhile. One sequence: its moves are recorded, marked ``eeprom`` or ``search``, and one
        ``MOVES_RECOVERED`` says so, as after a restart. Several (moves that commute, a piece by two routes):
        which was played cannot be known, so none is recorded: a gap with the candidates, one
        ``MOVES_RECOVERED``, exactly as after a restart (:meth:`Downtime.apply`); the arbiter fills it
        (``fill-gap``). None: False (a divergence).
        """
        down = self.e.downtime
        squares = list(self.g.phys.squares)
        result = down.missed(squares, self.jump_depth(), self._presses_seen())
        logged = down.logged_clocks(result) if self.g.board_down else {}  # the board's log, read before it is dropped
        down.forget_log()
        if result.kind is RecoveryKind.AMBIGUOUS:
            for judged in self.gap_presses().values():
                for irr in judged:  # a frame (or field updates) lost: the press completed one of the gap's moves
                    self.withdraw_gap_press(outs, irr, "a move of the gap")
            down.apply(outs, result, squares, at, down.missed_reason())
            self.divergence_key = None
            return True
        if result.kind is not RecoveryKind.UNIQUE:
            return False
        twice = result.detail == TWICE_LAST  # then a move out of turn of the last mover, on the board (no clock)
        if twice and not result.moves:
            self.e.whose_change.seen_out_of_sight(outs, squares, at, at)
            self.divergence_key = None
            return True
        path = result.moves
        _LOGGER.info("missed updates recovered: %s", " ".join(m.uci() for m in path))
        start, from_ply = len(outs), len(self.g.records)
        presses = self.gap_presses()
        blind = self.g.blind_presses
        previous = -1e18
        for i, move in enumerate(path):
            last = i == len(path) - 1
            side = self.g.board.turn
            if self.g.board_down:
                # a board outage: the presses seen meanwhile complete the recovered moves, in order (a press
                # that fits no recovered move, a double press or one without moving, is left out)
                seen = next((p for p in blind if p.side == side and p.at > previous), None)
                if seen is not None:
                    blind.remove(seen)
                    previous = seen.at
                    self.g.blind_matched += 1
                    self.e.made_moves.make(outs, move, min(at, seen.at), completed=True, completion=Completion.PRESS,
                               press_at=seen.at, recovered=True, clock=seen.clock)
                    continue
                # not pressed in sight of the clock: the board's log may hold the presser's time at his press (DGT,
                # protocols.md §1.9), his [%clk]; else none, rather than one of a later clock
                rec = self.e.made_moves.make(outs, move, at, completed=not last, completion=Completion.NEXT_MOVE,
                                 recovered=True, clock=logged.get(i, ClockState()))
                if not last or any(p.side == side for p in blind):
                    self.g.clockless.add(rec.ply)  # whether it was pressed cannot be told: no press codes for it
                elif self.g.clock_seen and (self.g.clock_resync or self.g.clock_down):
                    # the clock out of sight with the board (on its jack): its first reading tells whether the last
                    # move was pressed meanwhile (the opponent's time running), as after a restart: completed then,
                    # with that reading's clock, not by the next move with a clock of a later press
                    down.awaiting_clock = rec.ply
                continue
            press = presses[side].pop(0) if presses[side] else None
            if press is not None:
                # the press seen while the frame was lost completed this move: made by then at the latest
                self.withdraw_gap_press(outs, press, self.g.board.san(move))
                self.e.made_moves.make(outs, move, min(at, press.t_raised), completed=True, completion=Completion.PRESS,
                           press_at=press.t_raised, recovered=True)
                continue
            self.e.made_moves.make(outs, move, at, completed=not last, completion=Completion.NEXT_MOVE, recovered=True)
        # how the moves were found: said so on the moves and in one event, as after a restart (with the clock out
        # of sight, on the board's jack, the event waits for its first reading: Downtime._revise)
        down.recorded(outs, result, start, from_ply, squares=squares, at=at)
        if twice:
            self.e.whose_change.seen_out_of_sight(outs, squares, at, at)
        self.divergence_key = None
        return True

    def jump_depth(self) -> int:
        """How many missed plies a reconciling dump is searched for: a link outage as many as a restart."""
        return DEFAULT_MAX_PLIES if self.g.board_down else _JUMP_DEPTH

    def _presses_seen(self) -> list[chess.Color] | None:
        """The sides of the presses seen while the board was blind, in order; None when some may be missing.

        A board outage: the presses of the outage not given to a move made before it, when the clock was in sight
        throughout. Lost frames (snapshot-only boards): the presses judged "no move" since the official position.
        """
        g = self.g
        if not g.clock_seen or g.clock_down or g.clock_resync:
            return None
        if g.board_down:
            return None if self.e.downtime.clock_missed else [p.side for p in g.blind_presses]
        if g.field_updates:
            return None  # a dump after lost field updates: the presses meanwhile were judged, not kept
        found = self.gap_presses()
        return [irr.side for irr in sorted((*found[chess.WHITE], *found[chess.BLACK]), key=lambda i: i.t_raised)
                if irr.side is not None]

    def gap_presses(self) -> dict[chess.Color, list[Irregularity]]:
        """The presses judged "no move" since the official position, oldest first.

        A lost frame (snapshot-only boards) or lost field updates (DGT: the dump that follows shows the moves)
        hide the move from the press that completed it; the recovered jump explains them (a false
        ``CLOCK_PRESS_NO_MOVE``, from 2018 an illegal move, is withdrawn).
        """
        found: dict[chess.Color, list[Irregularity]] = {chess.WHITE: [], chess.BLACK: []}
        for irr in self.g.irr.values():
            if irr.code == "CLOCK_PRESS_NO_MOVE" and irr.ply == len(self.g.records) and irr.side is not None \
                    and irr.status is not Status.RESOLVED:
                found[irr.side].append(irr)
        for presses in found.values():
            presses.sort(key=lambda irr: irr.t_raised)
        return found

    def withdraw_gap_press(self, outs: list[Output], irr: Irregularity, san: str) -> None:
        """A "press without a move" explained by a recovered move: resolved, its illegal-move count undone."""
        side = irr.side
        assert side is not None
        self.e.findings.withdraw_count(outs, irr.id, irr.t_raised)  # counted when it was raised (no new finding)
        if self.g.pressed_no_move == side:
            self.g.pressed_no_move = None
        self.e.findings.update_finding(outs, dataclasses.replace(
            irr, status=Status.RESOLVED,
            ruling=f"withdrawn: {'field updates were' if self.g.field_updates else 'a board frame was'} lost; {san} "
                   "was on the board at the press (recovered)"))

    def reconcile(self, outs: list[Output], at: float) -> None:
        """A board dump that is no move in progress: missed updates, else POSITION_DIVERGENCE (R15)."""
        if self.e.downtime.reconcile(outs, at):  # the first dump after a restart: recovered, or a marked gap
            return
        if self.forward_jump(outs, at):
            return
        key = self.g.phys.key()
        if key == self.divergence_key:
            return
        if not self.g.records and self.g.phys.key()[0].bit_count() + self.g.phys.key()[1].bit_count() < \
                self.g.index.board.occupied.bit_count():
            # pieces still being set up before the game: nothing to report yet
            self.g.phase.fire(PhaseTrigger.PIECES_MISSING)
            return
        self.divergence_key = key
        depth = self.jump_depth()
        searched = " found by the search" if depth > _JUMP_DEPTH else ""  # within its budget
        irr = self.e.findings.raise_finding(outs, "POSITION_DIVERGENCE", None, at, [Evidence(at=at,
                                                                                             event="board dump")],
                          text="the board differs from the official position and no sequence of up to "
                               f"{depth} legal moves{searched} explains it: "
                               f"{describe_change(self.g.board, self.g.phys.squares)}"
                               + ("; the board shows the start position (set up for the next game? the game's "
                                  "result is not known)" if self.g.keys and key == self.g.keys[0] else "")
                               + "; reinstate the last official position"
                               + ("; clock presses are not judged until this is resolved"
                                             if self.g.board_down else ""),
                          reinstate_ply=len(self.g.records))
        if self.g.board_down:
            self.g.outage_divergence = irr.id

    def adopt_physical(self, outs: list[Output], side: chess.Color, at: float, desc: str, diff: Diff, *,
                       out_of_turn: bool = False) -> None:
        """G6: play continues from the physical position (MoveRecord.legal=False). *out_of_turn*: *side* moved
        on the opponent's turn (R13), whose ply is skipped (the move number goes on by one whatever the side)."""
        if diff.kind in (DiffClass.NONE, DiffClass.IN_HAND) and not self.g.promo_seen:
            return
        board = _board_from(self.g.phys.squares, self.g.board, not side)
        board.fullmove_number = self.g.board.fullmove_number + (1 if side == chess.BLACK or out_of_turn else 0)
        rec = MoveRecord(ply=len(self.g.records) + 1, uci=_physical_uci(self.g.board, diff), san=desc, side=side,
                         fen_after=board.fen(), made_at=self.g.last_board_t if self.g.last_board_t > -1e17 else at,
                         completed_at=at, completion=Completion.PRESS, clock_white=self.g.clock.white,
                         clock_black=self.g.clock.black, legal=False, out_of_turn=out_of_turn)
        self.g.records.append(rec)
        # keep the python-chess move stack in step with the record: restart from the physical position
        self.g.board = board
        self.e.recognition.rebuild_index()
        self.g.keys.append(self.g.index.key)
        self.g.uncompleted.pop(side, None)
        outs.append(MoveMade(move=rec))
        outs.append(MoveCompleted(move=rec))
        self.g.prev_lifts = self.g.seg_lifts
        self.g.opp_early_raised = False
        self.e.recognition.early_pending = None
        self.g.castle_king = None
        self.g.castle_released = None
        self.e.clock_readings.new_segment(at)
        self.g.promo_seen = False
        self.g.illegal_state = None
        self.g.illegal_settled = None
        self.e.findings.close_claim_windows(outs, side, at)
        self.e.made_moves.after_completion(outs, rec, at)
        outs.append(StateChanged(at=at))

    def on_resolve(self, outs: list[Output], event: Resolve, at: float) -> list[str]:
        """The arbiter's ruling; the correction cycle of an illegal-move finding it closed (directly or with the
        finding ruled on) follows it (:meth:`Correction.ruled`). Returns the ids of the findings it closed."""
        before = {irr.id: irr.status for irr in self.g.irr.values()}
        self._on_resolve(outs, event, at)
        closed = [irr for irr in self.g.irr.values() if irr.status is Status.RESOLVED
                  and before.get(irr.id) in (Status.OPEN, Status.ACKNOWLEDGED)]
        self.e.correction.ruled(outs, closed, accept=event.accept, at=at)
        if not event.accept:
            self.withdraw_wait(outs, event.irregularity_id, at)
        return [irr.id for irr in closed]

    def withdraw_wait(self, outs: list[Output], irr_id: str, at: float) -> None:
        """A dismissal that makes the awaited reinstatement moot ends the wait for the board (§3.7).

        The arbiter pressed Reinstate, then dismissed the finding it was for (or one of its incident, or the
        finding of the wait itself): the position is no longer to be put back. The moves the reinstatement took
        back are the record again (republished, as after a 7.5.2 fix: ``MovesRetracted`` was sent, then the moves
        again; never lose a real move), the wait's finding and the correction cycle of that reinstatement end,
        and play goes on from the board: what the board shows by then is judged as any change.
        """
        awaited = self.awaited
        if awaited is None or self.g.phase.state is not Phase.AWAIT_RESTORE:
            return
        ply, records, keys, board, uncompleted, plies = awaited
        if not any(self._concerns(irr_id, p) for p in plies):
            return
        self.awaited = None
        self.g.phase.fire(PhaseTrigger.REINSTATE_WITHDRAWN)
        self.g.restore_check = None
        self.g.restore_key = None
        wait = self._open_restore_finding()
        self.restore_irr = None
        self.divergence_key = None
        cycle = self.e.correction.cycle
        if cycle is not None and cycle.ply in plies:
            self.e.correction.cycle = None  # its reinstatement will not come: no ruling of it to write
        if len(self.g.records) == ply:
            self.g.records.extend(records)
            self.g.keys.extend(keys)
            self.g.board = board
            self.e.recognition.rebuild_index()
            self.g.uncompleted = uncompleted
            for rec in records:
                outs.append(MoveMade(move=rec))
                if rec.completed_at is not None:
                    outs.append(MoveCompleted(move=rec))
        if wait is not None:
            self.e.findings.update_finding(outs, dataclasses.replace(
                wait, status=Status.RESOLVED, ruling=f"withdrawn: the reinstatement to ply {ply} is moot after the "
                                                     f"ruling on {irr_id}"))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"reinstatement_withdrawn": ply,
                                                                     "irregularity": irr_id}))
        outs.append(StateChanged(at=at))
        self.g.cand = None
        self.g.mask.clear()
        if self.g.phys.key() != self.g.index.key:
            self.e.recognition.evaluate(outs, at, snapshot=False, batch=[])

    def _concerns(self, irr_id: str, ply: int) -> bool:
        """Is the reinstatement to *ply* the one of finding *irr_id*'s incident (or the finding of its wait)?

        A finding's reinstatement is its suggestion's ``reinstate_ply``, else the position before its ply (the
        tablet's default)."""
        if irr_id == self.restore_irr:
            return True
        irr = self.g.irr.get(irr_id)
        if irr is None:
            return False
        root = irr.incident or irr.id
        return any(f.suggestion.reinstate_ply == ply if f.suggestion.reinstate_ply is not None else f.ply - 1 == ply
                   for f in self.g.irr.values() if root in (f.id, f.incident))

    def _on_resolve(self, outs: list[Output], event: Resolve, at: float) -> None:
        irr = self.g.irr.get(event.irregularity_id)
        if irr is None:
            _LOGGER.warning("resolve for unknown irregularity %s", event.irregularity_id)
            return
        win = next((w for w in self.g.claim_windows if w.irregularity_id == irr.id), None)
        ruling = event.ruling or ("accepted" if event.accept else "dismissed")
        if win is not None and event.accept:
            win.claimed = True
            self.g.claim_windows.remove(win)
            pen = self.e.findings.count_claim(irr, win.offender)
            sug = dataclasses.replace(irr.suggestion, add_to_opponent_s=pen.add_to_opponent_s, result=pen.result,
                                      remove_from_offender_s=pen.remove_from_offender_s, text=pen.text)
            self.e.findings.update_finding(outs, dataclasses.replace(irr, suggestion=sug, status=Status.RESOLVED,
                                                                     ruling=ruling))
            self.e.findings.note_limit(outs, irr.id, at)
            return
        if irr.code == "TWO_HANDS_AT_PRESS":
            # Confirmed (7.5.4) or dismissed: the suspected two-handed move it completed closes with it.
            ruled = (self.confirm_two_hands(irr, ruling) if event.accept and irr.side is not None else
                     dataclasses.replace(irr, status=Status.RESOLVED, ruling=ruling))
            self.e.findings.close_two_hands(outs, ruled)
            if ruled.severity is not irr.severity:  # an illegal move now: the state's count changed
                self.e.findings.note_limit(outs, ruled.id, at)
                outs.append(StateChanged(at=at))
            return
        was_open = irr.status is not Status.RESOLVED
        self.e.findings.update_finding(outs, dataclasses.replace(irr, status=Status.RESOLVED, ruling=ruling))
        if irr.code == "OUT_OF_TURN_CHANGE" and was_open:
            self.e.whose_change.confirmed(outs, irr.id, at)  # ruled without reinstating: play on from the board
        if irr.code == "POSITION_DIVERGENCE" and was_open and irr.ply == len(self.g.records) \
                and self.g.playing and self.g.phys.key() != self.g.index.key:
            if event.accept:
                self.on_reinstate(outs, len(self.g.records), at)  # the suggestion: put the position back
            else:
                self.adopt_divergence(outs, irr, at)

    def confirm_two_hands(self, irr: Irregularity, ruling: str) -> Irregularity:
        """R19: the arbiter confirms a two-handed move; from 2018 it is then an illegal move (7.5.4, 7.5.5).

        It counts once: not when the same press was already an illegal move of its own (the finding it names in
        ``related``; the incident's primary may be another player's finding). Returns the finding resolved (the
        caller publishes it).
        """
        assert irr.side is not None
        named = [f for i in irr.related if (f := self.g.irr.get(i)) is not None and f.code != "TWO_HANDS_SUSPECTED"]
        counted = any(is_illegal_move_class(f"{f.code}/{f.subtype}" if f.subtype else f.code, self.g.edition)
                      for f in named)
        if self.g.edition < 2018 or counted or irr.severity is Severity.ILLEGAL_MOVE:
            return dataclasses.replace(irr, status=Status.RESOLVED, ruling=ruling)
        # the position before the two-handed move: the press finding is raised once the move is in the record
        # (its ply is the one after it), the suspicion while the move was being made (a late press, 6.2.2, comes
        # after the opponent's reply: the suspicion's ply is then the earlier one)
        before = min([irr.ply - 1, *(f.ply for i in irr.related if (f := self.g.irr.get(i)) is not None
                                     and f.code == "TWO_HANDS_SUSPECTED")])
        pen = self.e.findings.penalty(irr.side, "TWO_HANDS_AT_PRESS", finding=irr.id, ply=max(0, before))
        assert pen is not None
        sug = dataclasses.replace(irr.suggestion, add_to_opponent_s=pen.add_to_opponent_s, result=pen.result,
                                  remove_from_offender_s=pen.remove_from_offender_s,
                                  reinstate_ply=irr.suggestion.reinstate_ply
                                  if irr.suggestion.reinstate_ply is not None else max(0, before),
                                  text=f"confirmed two-handed move (7.5.4): {pen.text}")
        return dataclasses.replace(irr, severity=Severity.ILLEGAL_MOVE, suggestion=sug, status=Status.RESOLVED,
                                   ruling=ruling)

    def adopt_divergence(self, outs: list[Output], irr: Irregularity, at: float) -> None:
        """A POSITION_DIVERGENCE dismissed (no reinstatement): the game goes on from the board.

        The board still differs from the official position, so the physical position is adopted as a record
        entry with ``legal=False`` (like an illegal move that stood, G6): the moves played from it are
        recorded again instead of the record staying stuck. The side to move is the side whose clock runs;
        without a running clock it is unknown: the side to move stays as it was, and the first move of the
        other side turns it round (:meth:`adopted_turn`). (An accepted divergence is a reinstatement.)
        """
        if self.g.setting_up or self.g.markers or self.g.impossible_since is not None:
            return
        clock_live = self.g.clock_seen and not self.g.clock_down and not self.g.paused and self.g.running is not None
        turn = self.g.running if clock_live and self.g.running is not None else self.g.board.turn
        board = _board_from(self.g.phys.squares, self.g.board, turn)
        board.fullmove_number = self.g.board.fullmove_number + (1 if turn == chess.WHITE and
                                                               self.g.board.turn == chess.BLACK else 0)
        desc = describe_change(self.g.board, self.g.phys.squares)
        rec = MoveRecord(ply=len(self.g.records) + 1, uci="0000", san=f"position adopted ({irr.id}): {desc}",
                         side=not turn, fen_after=board.fen(), made_at=at, completed_at=at, completion=None,
                         clock_white=self.g.clock.white, clock_black=self.g.clock.black, legal=False)
        self.g.records.append(rec)
        self.g.board = board
        self.e.recognition.rebuild_index()
        self.g.keys.append(self.g.index.key)
        self.g.uncompleted.clear()
        self.g.adopted_open = None if clock_live else rec.ply
        self.divergence_key = None
        self.g.cand = None
        self.e.clock_readings.new_segment(at)
        outs.append(MoveMade(move=rec))
        outs.append(MoveCompleted(move=rec))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"adopted": irr.id, "ply": rec.ply}))
        outs.append(StateChanged(at=at))

    def adopted_turn(self) -> None:
        """After a position adopted without knowing the side to move: the first move tells it."""
        ordinary = (DiffClass.NONE, DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND)
        if self.g.index.classify(self.g.phys).kind in ordinary:
            return
        flipped = self.g.board.copy(stack=False)
        flipped.turn = not flipped.turn
        index = PositionIndex(flipped)
        if index.classify(self.g.phys).kind not in (DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND):
            return
        self._turn_round(flipped, index)

    def adopted_press(self, outs: list[Output], side: chess.Color, at: float) -> bool:
        """After a position adopted (or a gap) without knowing the side to move: a press with the board as adopted.

        The side taken to have the move pressed without moving: with the side to move unknown, that is the side
        that moved last completing the adopted entry (6.2.1), not a press without a move (7.5.3). True: the press
        told the side to move and completed the entry.
        """
        g = self.g
        if g.adopted_open is None or g.adopted_open != len(g.records) or side != g.board.turn or g.mask \
                or g.index.classify(g.phys).kind is not DiffClass.NONE:
            return False
        flipped = g.board.copy(stack=False)
        flipped.turn = not flipped.turn
        self._turn_round(flipped, PositionIndex(flipped))
        rec = g.records[-1]
        g.uncompleted = {color: ply for color, ply in g.uncompleted.items() if ply != rec.ply}
        if rec.completed_at is None:
            g.uncompleted[rec.side] = rec.ply
            self.e.made_moves.complete(outs, rec.ply, at, Completion.PRESS)
        outs.append(StateChanged(at=at))
        return True

    def _turn_round(self, flipped: chess.Board, index: PositionIndex) -> None:
        """The adopted entry was made by the other side: the side to move is *flipped*'s."""
        self.g.adopted_open = None
        rec = self.g.records[-1]
        self.g.records[-1] = dataclasses.replace(rec, side=not rec.side, fen_after=flipped.fen())
        self.g.board = flipped
        self.g.index = index
        self.g.keys[-1] = index.key
        self.g.mask.clear()
        self.g.oot_raised = False

    def restore_overdue(self, outs: list[Output], due: float) -> None:
        """T_adjust after a change the board still does not show the reinstated position (§3.7).

        One finding per reinstatement (step 2 of §3.7: show the arbiter the squares that differ): a later
        pause in the same restoration updates it with what still differs, and the board showing the position
        resolves it (:meth:`restored`). It joins the incident of the illegal move being corrected.
        """
        self.g.restore_check = None
        if self.g.phys.key() == self.divergence_key:
            return
        self.divergence_key = self.g.phys.key()
        text = ("the board does not show the reinstated position: "
                f"{describe_change(self.g.board, self.g.phys.squares)} (from the reinstated "
                "position); recognition resumes when it does")
        irr = self._open_restore_finding()
        if irr is not None:
            self.e.findings.update_finding(outs, dataclasses.replace(
                irr, suggestion=dataclasses.replace(irr.suggestion, text=text)))
            outs.append(StateChanged(at=due))
            return
        cycle = self.e.correction.cycle
        incident = cycle.irregularity_id if cycle is not None and cycle.ply == len(self.g.records) else None
        self.restore_irr = self.e.findings.raise_finding(
            outs, "POSITION_DIVERGENCE", None, due, [Evidence(at=due, event="board")], text=text,
            reinstate_ply=len(self.g.records), incident=incident).id

    def _open_restore_finding(self) -> Irregularity | None:
        """The POSITION_DIVERGENCE of the reinstatement under way, while it is not resolved."""
        irr = self.g.irr.get(self.restore_irr) if self.restore_irr is not None else None
        return irr if irr is not None and irr.status is not Status.RESOLVED else None

    def restored(self, outs: list[Output], at: float) -> None:
        """The board shows the reinstated position: the finding of the wait (if any) resolves itself."""
        irr = self._open_restore_finding()
        self.restore_irr = None
        self.divergence_key = None
        self.awaited = None
        if irr is not None:
            self.e.findings.update_finding(outs, dataclasses.replace(
                irr, status=Status.RESOLVED, ruling="the board shows the reinstated position"))
            outs.append(StateChanged(at=at))

    def on_reinstate(self, outs: list[Output], ply: int, at: float) -> None:
        ply = max(0, min(ply, len(self.g.records)))
        self.e.whose_change.reinstated()
        if ply < len(self.g.records):
            self.e.correction.reopen(ply)
        self.arm_replacement(ply)
        taken = (ply, self.g.records[ply:], self.g.keys[ply + 1:], self.g.board.copy(), dict(self.g.uncompleted),
                 frozenset({ply}))
        earlier = self.awaited
        if earlier is not None and self.g.phase.state is Phase.AWAIT_RESTORE and earlier[0] == len(self.g.records):
            # reinstated again while still waiting: a withdrawal gives back what both took
            taken = (ply, [*taken[1], *earlier[1]], [*taken[2], *earlier[2]], earlier[3], earlier[4],
                     earlier[5] | {ply})
        self.retract_to(outs, ply, at, "reinstated by the arbiter")
        self.awaited = None
        if self.g.phys.key() != self.g.index.key:
            self.awaited = taken  # what the wait took back, put back if a ruling withdraws it
            self.g.phase.fire(PhaseTrigger.REINSTATE_PENDING)
            self.g.restore_key = self.g.index.key
            self.restore_irr = None
        else:
            self.g.phase.fire(PhaseTrigger.REINSTATED)
            outs.append(GameEvent(at=at, type="REINSTATED", details={"ply": ply}))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"reinstate_ply": ply}))
        if self.e.correction.arbiter_reinstates(ply):
            self.e.correction.note_reinstated(outs, at, "reinstated by the arbiter")

    def arm_replacement(self, ply: int) -> None:
        """Reinstated at *ply*: the replacement move falls under touch-move for the piece touched (§3.7)."""
        rep = self.g.replacement
        self.g.replacement_due = rep if rep is not None and rep[1] == ply else None

    def reinstate_from_board(self, outs: list[Output], ply: int, at: float) -> None:
        """7.5.1 done on the board: the position before the illegal move is back, the offender has the move."""
        self.arm_replacement(ply)
        if self.g.pending_fix is not None and self.g.pending_fix[0] == ply:
            self.g.pending_fix = None
        self.retract_to(outs, ply, at, "position reinstated on the board (7.5.1)")
        self.divergence_key = None
        # the states the board passed through while it was put back were no placements of the player (4.7)
        self.g.illegal_state = None
        self.g.illegal_settled = None
        outs.append(GameEvent(at=at, type="REINSTATED", details={"ply": ply, "by": "board"}))

    def retract_to(self, outs: list[Output], ply: int, at: float, reason: str) -> None:
        if ply >= len(self.g.records):
            return
        board = chess.Board(self.g.fen_before(ply), chess960=self.g.game.chess960)
        # rebuild the move stack from the last legal restart so repetition checks keep working
        del self.g.records[ply:]
        del self.g.keys[ply + 1:]
        self.g.board = self.replay_board(ply) or board
        self.e.recognition.rebuild_index()
        for color in (chess.WHITE, chess.BLACK):
            p = self.g.uncompleted.get(color)
            if p is not None and p > ply:
                del self.g.uncompleted[color]
        self.g.cand = None
        self.g.mask.clear()
        self.g.seg_lifts = []
        self.g.seg_places = []
        self.g.seg_start = at
        self.g.opp_started = False
        self.g.oot_raised = False
        self.g.pressed_no_move = None
        outs.append(MovesRetracted(at=at, to_ply=ply, reason=reason))
        outs.append(StateChanged(at=at))

    def replay_board(self, ply: int) -> chess.Board | None:
        board = chess.Board(self.g.start_fen, chess960=self.g.game.chess960)
        for rec in self.g.records[:ply]:
            if not rec.legal:
                board = chess.Board(rec.fen_after, chess960=self.g.game.chess960)
                continue
            try:
                board.push_uci(rec.uci)
            except ValueError:
                return None
        return board

    def takeback(self, outs: list[Output], ply: int, at: float) -> None:
        retracted = [r.san for r in self.g.records[ply:]]
        self.retract_to(outs, ply, at, "takeback")
        hint = ""
        if any(i.code == "ILLEGAL_MOVE_STANDS" for i in self.g.irr.values()):
            hint = " Mutual correction of an illegal move is allowed without the arbiter (A.5.2/A.4.2)."
        self.e.findings.raise_finding(outs, "TAKEBACK_DETECTED", None, at, self.g.seg_evidence[-4:],
                    text=f"the board returned to the position after ply {ply}: {' '.join(retracted)} retracted. "
                         f"Under the Laws a released legal move stands (4.7).{hint}",
                    move=retracted[0] if retracted else None, reinstate_ply=ply + len(retracted))
        outs.append(GameEvent(at=at, type="TAKEBACK_DETECTED", details={"to_ply": ply, "moves": retracted}))
