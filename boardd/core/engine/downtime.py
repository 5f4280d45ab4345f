"""Downtime (issue 11): the daemon was not reading the board; what was played meanwhile is recovered, never judged.

The daemon feeds ``LinkChanged(BOARD, up=False, detail=RESTART_DETAIL)`` (and the same for the clock) when
it starts again on a journal that holds a game: for the engine the board and the clock were out of sight
since the last journaled event. The clock outage means the first reading afterwards takes the lever as it
finds it (no press judged); the board outage means presses are not judged and the board's next dump is
reconciled. That dump comes here first (:meth:`Downtime.reconcile`, hooked into
``Restoration.reconcile``): :func:`boardd.core.recovery.recover` explains it with the board's own log
(``BoardLog``, the DGT EEPROM) or a search of up to 12 plies. A unique sequence enters the record as made
and completed moves marked ``recovered`` (the last one is completed by its player's next move); several
sequences or none leave a marked gap (a ``legal=False`` entry ``0000`` with the physical position), and the
game goes on from the board. Either way one ``GameEvent MOVES_RECOVERED`` says what was recovered and how;
nothing is raised against the players.

Plies missed while the daemon runs (a board link outage, lost frames: ``Restoration.forward_jump``) are
recovered the same way (:meth:`Downtime.missed`; a link outage as deep as a restart, ``DEFAULT_MAX_PLIES``):
the moves are marked as recovered and announced by the same ``MOVES_RECOVERED``; when their order is not known
they leave the same gap, through the same :meth:`Downtime.apply`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _CENTRE_BB, _LOGGER, squares_kings_result
from boardd.core.events import (
    BoardLog,
    BoardSnapshot,
    ClockSide,
    Content,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
    SquareChanged,
)
from boardd.core.outputs import (
    ClockState,
    Completion,
    Evidence,
    GameEvent,
    MoveCompleted,
    MoveMade,
    MoveRecord,
    MovesRetracted,
    Output,
    StateChanged,
)
from boardd.core.recognizer import DiffClass, PhysicalBoard, PositionIndex, describe_change
from boardd.core.recovery import (
    BUDGET_EXHAUSTED,
    DEFAULT_MAX_PLIES,
    ILLEGAL_LAST,
    STEP_NODES,
    TWICE_LAST,
    Recovery,
    RecoveryKind,
    Steps,
    comes_back,
    finish,
    log_placements,
    place_presses,
    recover,
    recover_illegal_steps,
    recover_steps,
    recover_twice_steps,
    sans_of,
)

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine

__all__ = ["GAP_TEXT", "MISSED_DETAIL", "OUTAGE_DETAIL", "RESTART_DETAIL", "SEARCHES_KEPT", "Downtime", "SearchNeeded"]

#: ``LinkChanged.detail`` of the outage the daemon reports when it starts again on a game in progress.
RESTART_DETAIL = "daemon restarted"
#: ``MOVES_RECOVERED.reason`` of plies missed while the board link was down (the daemon running).
OUTAGE_DETAIL = "board link down"
#: ``MOVES_RECOVERED.reason`` of plies missed with the board in sight: lost frames, a dump after lost updates.
MISSED_DETAIL = "missed updates"
#: The gap entry's text (its ``san``) by ``MOVES_RECOVERED.reason``: what happened, for people.
GAP_TEXT = {RESTART_DETAIL: "gap after downtime", OUTAGE_DETAIL: "gap after the board link was down",
            MISSED_DETAIL: "gap after missed board updates"}
#: Positions the search may visit at a restart (about 1-2 s of CPU at worst).
NODE_BUDGET = 150_000
#: How long a dump no sequence explains is held (a move in progress?) before it is taken as a gap.
HOLD_S = 20.0
#: The board must be this quiet after the restart's dump (no change) before it is recovered.
SETTLE_S = 1.0
#: ... and this quiet before a board nothing explains is taken as a gap (not a move in progress).
GAP_QUIET_S = 1.5
#: How long a gap's event waits for the first move after it (:meth:`Downtime.after_gap`): then it is published as
#: it stands (the gap left for the arbiter), so that no gap goes unannounced when play does not go on.
GAP_EVENT_WAIT_S = 30.0
#: Searches whose results the engine keeps (``Engine.search_cache``), keyed by all of their inputs.
SEARCHES_KEPT = 8


class SearchNeeded(BaseException):
    """Stepwise, probing (``Engine.probing``): a search the call needs and no result is kept for.

    Raised where the search would run within the call; the engine undoes the call (it restores the state it
    had before it), does the search in steps (:meth:`Engine.work`), which keeps its result, and processes the
    call again: the search is then found kept. A ``BaseException``: the engine's ``except Exception`` (never
    crash on input) must not take it for a failure.
    """

    def __init__(self, steps: Steps[Recovery]) -> None:
        super().__init__("a recovery search is needed")
        self.steps = steps


class Downtime:
    """Downtime (issue 11): the daemon was not reading the board; what was played meanwhile is recovered."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        #: A restart outage whose reconciling dump has not come yet.
        self.pending = False
        self.log: tuple[LogEntry, ...] = ()
        #: The dump (board frame) held while it shows no position a sequence explains, and since when.
        self.held: list[Content] | None = None
        self.held_since: float | None = None
        self.quiet_since: float | None = None
        self.gap_seen = False
        #: The log holds the board's own records (else only the changes seen after the restart).
        self.board_log = False
        #: The last recovered move (or gap), made before the clock was read again: its press is unknown.
        self.awaiting_clock: int | None = None
        #: the clock's link went down with the daemon's restart, and its first reading since has not come yet
        self.restarted_clock = False
        #: The clock the journal ended with (for the times of the presses in the board's log).
        self.restart_clock = ClockState()
        #: An outage of the clock's link while the daemon runs (not its restart): the first ply whose press it may
        #: hide (the first move then waiting for its press, or the next move), and the clock last shown before it
        #: (:meth:`_pressed_unseen`).
        self.clock_outage: tuple[int, ClockState] | None = None
        #: The clock was out of sight (or not there) during the board link's outage: presses may be missing.
        self.clock_missed = True
        #: Plies recovered by search while the clock was out of sight (its first reading may tell another
        #: number of plies fits): the ply before them, the placement they explain (official frame), the
        #: recovery, and the reason of its event. The one ``MOVES_RECOVERED`` waits for that reading: the
        #: recovery's (kind ``unique``), or the gap's when the reading turns the plies into one.
        self.unsure: tuple[int, tuple[Content, ...], Recovery, str] | None = None
        #: Positions each search may visit (:data:`NODE_BUDGET`; smaller in tests). Running out proves nothing:
        #: what was found is a gap's candidates, never the record (:attr:`Recovery.exhausted`).
        self.node_budget = NODE_BUDGET
        #: The ply of a gap that left the side to move open (:meth:`after_gap`: the first move after it tells), and
        #: its ``MOVES_RECOVERED``, which waits for that move (one incident, one event: ``unique`` when it fills the
        #: gap, the gap's own otherwise): the recovery, the ply before the gap, the reason.
        self.open_gap: int | None = None
        self.gap_event: tuple[Recovery, int, str, float] | None = None
        #: A gap left with the clock out of sight, its candidates agreeing on their plies: (its ply, the plies), for
        #: the clock's first reading (:meth:`_gap_longer`).
        self.gap_parity: tuple[int, int] | None = None
        #: :meth:`_recover_steps` found its result kept (no step to do).
        self._kept_hit = False
        #: Positions between two steps of the stepwise search (:data:`boardd.core.recovery.STEP_NODES`).
        self.step_nodes = STEP_NODES
        #: One illegal move missed while the board link was down, the clock out of sight with it (on the board's
        #: jack): the placement the board showed at its return, for the clock's first reading (:meth:`illegal_back`).
        self.illegal_wait: tuple[int, ...] | None = None
        #: The gap a game that ended while the board was out of sight left (:meth:`ended`), for the result signal
        #: that follows in the same call (one incident: the signal names the gap, the gap's event folds under it).
        self.ended_gap: int | None = None
        #: Stepwise (``Engine.stepwise``): the held board's search in progress, with what :meth:`tick` had when
        #: it started it (the placement, the time, overdue): :meth:`step` goes on with it, then concludes.
        self.search: tuple[Steps[Recovery], list[Content], float, bool] | None = None

    def on_link(self, outs: list[Output], event: LinkChanged, at: float) -> None:
        if event.link is Link.BOARD and not event.up:
            self.settle_gap(outs, at)  # a gap waiting for the first move after it: the board is out of sight again
        if event.link is Link.CLOCK and not event.up and event.detail == RESTART_DETAIL and not self.pending:
            self.restart_clock = self.g.clock  # what the clock showed when the journal ended (places the presses)
        if event.link is Link.CLOCK and not event.up:
            self.clock_outage = None
            if event.detail != RESTART_DETAIL and self.g.clock_seen and not self.g.clock_down \
                    and not self.g.clock_resync:
                self.clock_outage = (min(self.g.uncompleted.values(), default=len(self.g.records) + 1), self.g.clock)
            self.clock_missed = True
            # the daemon's restart (not a clock outage while it ran): see clock_back
            self.restarted_clock = event.detail == RESTART_DETAIL
        if event.link is Link.BOARD and not event.up and event.detail != RESTART_DETAIL and not self.pending:
            # a link outage while the daemon runs: the board's log read at its reconnection is this outage's
            # (Restoration.forward_jump), and the presses are all seen only if the clock stays in sight meanwhile
            self.settle_unsure(outs, at)
            self.illegal_wait = None
            self.log = ()
            self.board_log = False
            self.clock_missed = not self.g.clock_seen or self.g.clock_down or self.g.clock_resync
        if event.link is Link.BOARD and not event.up and event.detail == RESTART_DETAIL:
            if not self.pending:
                self.log = ()  # a restart before the last one was recovered keeps what is known of its downtime
                self.board_log = False
            self.pending = True
            self.held = None
            self.held_since = None
            self.quiet_since = None

    def on_log(self, event: BoardLog) -> None:
        """The board's own log, read at the reconnection: kept for the reconciling dump."""
        self.log = self.log + event.entries
        self.board_log = True

    def on_snapshot(self, outs: list[Output], event: BoardSnapshot, at: float) -> bool:
        """The first dump after a restart is held (True) until the board is quiet; see :meth:`tick`."""
        if self.held is not None:
            changes = [(sq, c) for sq, c in enumerate(event.squares) if self.held[sq] != c]
            if not changes:
                return True  # boards that send every scan as a full frame: nothing new, still quiet
            # the frames seen in order are a log of the changes (order within one frame unknown)
            self.log = (*self.log, *(LoggedChange(square=sq, content=c) for sq, c in changes))
            self.gap_seen = False
        self.held = list(event.squares)
        if self.held_since is None:
            self.held_since = at
        self.quiet_since = at
        mapped = self._mapped_held()
        if not self.log and self.g.playing and not self.g.setting_up \
                and mapped == [self.g.board.piece_at(sq) for sq in chess.SQUARES]:
            # Nothing was played meanwhile: reconciled at once (as after the quiet second), and what comes next
            # is play. Held, a move begun within that second was "recovered" at its first square, so a piece
            # slid on to its square made a changed move of it (RELEASED_MOVE_CHANGED, a false alert).
            self._finish(outs, recover(self.g.board, mapped, node_budget=self.node_budget, max_plies=0), mapped, at)
            return True
        twice = self.e.whose_change.twice
        if self.g.playing and not self.g.setting_up and twice is not None \
                and twice.ply == len(self.g.records) and mapped == list(twice.stood.squares) \
                and mapped == list(self.g.phys.squares):
            # Nothing was played meanwhile either: the board still shows the move out of turn seen before the
            # restart (no clock, R13: WhoseChange.moved_twice), pending until the reply. Nothing to recover (the
            # search would find no move of the side to move and mark a gap); the engine goes on as if it had
            # stayed up: the reply enters the move out of turn in the record, then itself (G6). With the board's
            # own log too (the DGT's EEPROM, protocols.md §1.9): the board as the engine last saw it, the log
            # holds the changes it saw before it went down (the board keeps those of its last seconds, a host
            # that died may not have kept them) and none since that changed the board; replayed from the
            # official position it would read that move out of turn as the side to move's and mark a gap.
            squares = tuple(self.held)
            self._release()
            self.e.board_input.on_snapshot(outs, BoardSnapshot(at=at, squares=squares), at)
            return True
        self._try_log(outs, at)
        return True

    def on_square(self, outs: list[Output], event: SquareChanged, at: float) -> bool:
        """A change while a dump is held, or before the restart's first dump: held (and, seen in order, logged)."""
        if self.held is None:
            if not self.pending:
                return False
            self.held = list(self.g.raw)  # field updates the board queued before it knew nobody read them
            self.held_since = at
        self.held[event.square] = event.content
        self.log = (*self.log, LoggedChange(square=event.square, content=event.content))
        self.quiet_since = at
        self.gap_seen = False
        self._try_log(outs, at)
        return True

    def _try_log(self, outs: list[Output], at: float) -> None:
        """Players do not wait for the board to be quiet: the log alone may explain the held board at once.

        Only the log's own path counts here (a move in progress matches no legal position of the walk);
        the search waits for a quiet board (:meth:`tick`).
        """
        if self.held is None or not self.log or not self.g.playing or self.g.setting_up:
            return
        if self._wants_clock():
            return  # the first clock reading places the logged presses: it comes within a second
        mapped = self._mapped_held()
        board, log, budget = self.g.board.copy(stack=False), self._mapped_log(), self.node_budget
        key: tuple[object, ...] = ("log", board.fen(en_passant="fen"), board.chess960, tuple(mapped), tuple(log),
                                   budget)
        result = self._now(key, lambda: _log_steps(board, mapped, log, budget, self.step_nodes))
        if result.kind is RecoveryKind.UNIQUE:
            self._finish(outs, result, mapped, at)

    def due(self) -> float | None:
        """When the held board will have been quiet long enough, or a gap's event waited long enough (timers)."""
        if self.held is None and self.gap_event is not None and self.open_gap == len(self.g.records):
            return self.gap_event[3] + GAP_EVENT_WAIT_S
        if self.held is None or self.quiet_since is None:
            return None
        due = self.quiet_since + (GAP_QUIET_S if self.gap_seen else SETTLE_S)
        if self._clock_pending() and self.held_since is not None:
            due = max(due, self.held_since + HOLD_S)  # the clock's reading (an event) comes first, as a rule
        return due

    def _clock_pending(self) -> bool:
        """A clock was read in this game before the restart and not since: who has the move is not known yet.

        Only a clock device counts (``clock_seen``): a board without one keeps time by the engine's model,
        which shows times too but is never read again; waiting for it held the board through every restart.
        """
        return self.g.clock_seen and self.g.clock_resync

    def tick(self, outs: list[Output], at: float) -> None:
        """Any event: once the held board has been quiet ``SETTLE_S`` (no move in progress), recover.

        A unique sequence, an ambiguous one (the arbiter chooses: waiting does not help) or none needed:
        applied, and the engine then processes the held board as the reconciling dump. Nothing explains
        it: held on (a move may still be in progress) until it has been quiet ``GAP_QUIET_S`` or ``HOLD_S``
        passed since the dump, then a marked gap.
        Presses meanwhile stay unjudged (for the engine the board link is still down).
        """
        # (each wait compared as :meth:`due` computes it, ``since + wait``: ``at - since`` rounds below the wait at the
        # deadline itself for some times (127.0125 + 1.0 is 128.0125, 128.0125 - 127.0125 is 0.99999...), and the timer
        # fired at its deadline did nothing, so it stayed due at the same time for ever)
        if self.held is None or self.quiet_since is None or at < self.quiet_since + SETTLE_S:
            return
        if self.gap_seen and at < self.quiet_since + GAP_QUIET_S:
            return
        if not self.g.playing or self.g.setting_up:
            squares = tuple(self.held)
            self._release()
            self.e.board_input.on_snapshot(outs, BoardSnapshot(at=at, squares=squares), at)
            return
        mapped = self._mapped_held()
        if self.ended(outs, mapped, at, RESTART_DETAIL):
            squares = tuple(self.held)
            self._release()
            self.e.board_input.on_snapshot(outs, BoardSnapshot(at=at, squares=squares), at)  # the result signal
            self.e.clock_readings.new_segment(at)
            self.g.prev_lifts = []
            self.g.two_hands.clear()
            return
        overdue = self.held_since is not None and at >= self.held_since + HOLD_S
        if self._clock_pending() and not overdue:
            return  # the search is checked against the running clock (_recover): its first reading comes soon
        mapped = self._mapped_held()
        if self.e.stepwise:  # the engine does it in steps (Engine.work), its inputs fixed from now on
            self.search = (self._recover_steps(mapped, overdue=overdue), mapped, at, overdue)
            return
        self._concluded(outs, self._recover(mapped, overdue=overdue), mapped, at, overdue)

    def step(self, outs: list[Output]) -> bool:
        """One step of the held board's search (stepwise); True: it is over and concluded (as :meth:`tick`)."""
        assert self.search is not None
        steps, mapped, at, overdue = self.search
        try:
            next(steps)
        except StopIteration as stop:
            result: Recovery = stop.value
        except BaseException:
            self.search = None
            raise
        else:
            return False
        self.search = None
        self._concluded(outs, result, mapped, at, overdue)
        return True

    def _concluded(self, outs: list[Output], result: Recovery, mapped: list[Content], at: float,
                   overdue: bool) -> None:
        """:meth:`tick` after the search: held on (nothing explains the board yet), or finished."""
        assert self.quiet_since is not None
        if result.kind is RecoveryKind.GAP and not overdue and at < self.quiet_since + GAP_QUIET_S:
            self.gap_seen = True  # a move in progress, or a gap: a longer quiet tells
            _LOGGER.info("restart: board held at %.2f: %s", at, result.describe())
            return
        self._finish(outs, result, mapped, at)

    def _recover(self, mapped: list[Content], *, max_plies: int = DEFAULT_MAX_PLIES, min_plies: int = 1,
                 overdue: bool = False, board_off: bool = True) -> Recovery:
        """:meth:`_recover_steps` within the call (stepwise and probing: :class:`SearchNeeded` unless kept)."""
        self._kept_hit = False
        steps = self._recover_steps(mapped, max_plies=max_plies, min_plies=min_plies, overdue=overdue,
                                    board_off=board_off)
        if self.e.probing and not self._kept_hit:
            raise SearchNeeded(steps)
        return finish(steps)

    def _recover_steps(self, mapped: list[Content], *, max_plies: int = DEFAULT_MAX_PLIES, min_plies: int = 1,
                       overdue: bool = False, board_off: bool = True) -> Steps[Recovery]:
        """:func:`recover` (the board's log, else the search), the search checked against the running clock.

        The search takes the fewest plies whichever side they leave to move. The clock read since the restart
        tells who has the move: the side whose clock runs (6.2.1: a player completes his move by pressing). A
        shortest sequence that leaves the other side to move fits only if its last mover has not pressed yet;
        when a sequence of one ply more leaves the running side to move (a piece that took two moves where one
        would do: a1-a2-a3), both explanations fit and neither is taken: ambiguous, for the arbiter.
        No clock to tell (none in the game, paused or down, or its reading *overdue*): :meth:`_parity_open`.

        The inputs are read now (not at the first step): the steps search what the engine had at this call.
        """
        log = self._mapped_log()
        turn = self._clock_turn()
        # without a clock reading: its first one tells (the restart waits for it; a link outage, _revise)
        wait_clock = self._clock_pending() and not overdue
        board = self.g.board.copy(stack=False)
        key: tuple[object, ...] = ("recover", board.fen(en_passant="fen"), board.chess960, tuple(mapped), tuple(log),
                                   turn, wait_clock, board_off, self.node_budget, max_plies, min_plies)
        kept = self.e.search_cache.get(key)
        if kept is not None:
            _LOGGER.debug("recovery: the same inputs as a search made before: its result reused")
            self._kept_hit = True
            return _done(kept)
        return self._searched(key, board, list(mapped), log, turn, max_plies=max_plies, min_plies=min_plies,
                              wait_clock=wait_clock, board_off=board_off)

    def _keep(self, key: tuple[object, ...], result: Recovery) -> None:
        """Keep *result* for the inputs *key* (the answer is a pure function of them), the last few only."""
        cache = self.e.search_cache
        cache.pop(key, None)
        cache[key] = result
        while len(cache) > SEARCHES_KEPT:
            del cache[next(iter(cache))]

    def _kept_steps(self, key: tuple[object, ...], steps: Steps[Recovery]) -> Steps[Recovery]:
        """*steps*, its result kept for *key*."""
        result = yield from steps
        self._keep(key, result)
        return result

    def _now(self, key: tuple[object, ...], make: Callable[[], Steps[Recovery]]) -> Recovery:
        """A search needed within the call: kept from before, else done now, or (stepwise, probing) asked for.

        A held gap is searched again after ``GAP_QUIET_S`` of quiet with the same board, log and clock: the
        second search is the first one kept. Stepwise, the engine probes the calls that may search
        (``Engine.probing``): a search not kept raises :class:`SearchNeeded` instead of running within the call.
        """
        kept = self.e.search_cache.get(key)
        if kept is not None:
            return kept
        steps = self._kept_steps(key, make())
        if self.e.probing:
            raise SearchNeeded(steps)
        return finish(steps)

    def _searched(self, key: tuple[object, ...], board: chess.Board, mapped: list[Content], log: list[LogEntry],
                  turn: chess.Color | None, *, max_plies: int, min_plies: int, wait_clock: bool,
                  board_off: bool) -> Steps[Recovery]:
        """:meth:`_recover_steps` itself (nothing kept for *key*), in steps; its result kept for *key*."""
        result = yield from recover_steps(board, mapped, log=log, node_budget=self.node_budget,
                                          max_plies=max_plies, min_plies=min_plies, step=self.step_nodes)
        if board_off and result.kind is not RecoveryKind.NONE and (
                _lost_plies(result) or (result.method == "search" and any(isinstance(e, LoggedChange) for e in log))):
            # the board's log did not lead to the board, or only after plies it lacks at its start were assumed
            result = yield from _whole_log_illegal(result, board, mapped, log, budget=self.node_budget,
                                             step=self.step_nodes)
        if board_off and not self.g.clock_seen and (result.kind is RecoveryKind.GAP or (
                result.kind is RecoveryKind.AMBIGUOUS and (any(isinstance(e, LoggedChange) for e in log) or all(
                    comes_back(board, line) for line in result.candidates)))):
            # no clock: the player who had just moved may have moved again on the opponent's turn (R13, 1.3): the
            # board's log shows it in order (exact, before the search's candidates), or no ply was played before it
            # (nothing else explains the board but plies that take a piece away and back: no evidence of play)
            twice = yield from recover_twice_steps(self.g.board.copy(stack=1), mapped, log=log,
                                                   node_budget=self.node_budget, step=self.step_nodes)
            if twice.kind is RecoveryKind.UNIQUE:
                _LOGGER.info("recovery: %s, then a move out of turn on the board", " ".join(twice.sans) or "no ply")
                result = dataclasses.replace(twice, nodes=result.nodes + twice.nodes)
        lines = result.sequences() if result.detail not in (ILLEGAL_LAST, TWICE_LAST) else ()
        if result.method == "search" and lines:
            plies = len(lines[0])
            if turn is None:
                if not wait_clock and board_off:
                    result = yield from self._parity_open(board, mapped, result, min_plies)
            elif (board.turn if plies % 2 == 0 else not board.turn) != turn:
                result = yield from self._longer(result, board, mapped, turn, plies=plies, min_plies=min_plies)
        elif result.kind is RecoveryKind.GAP and board_off and max_plies > 1:
            # nothing legal explains the board out of sight: the last ply may have been an illegal move (7.5.1)
            illegal = yield from recover_illegal_steps(
                board, mapped, log=log, max_plies=max_plies, node_budget=self.node_budget, step=self.step_nodes,
                proven=0 if result.exhausted else max_plies)
            if illegal.kind is RecoveryKind.UNIQUE:
                _LOGGER.info("recovery: %s, then an illegal move on the board", " ".join(illegal.sans))
                result = illegal
        self._keep(key, result)
        return result

    def _longer(self, result: Recovery, board: chess.Board, mapped: list[Content], turn: chess.Color, *, plies: int,
                min_plies: int) -> Steps[Recovery]:
        """The shortest sequences leave the other side to move than the running clock's: one ply longer?"""
        lines = result.sequences()
        longer = yield from recover_steps(board, mapped, turn=turn, max_plies=plies + 1,
                                          node_budget=self.node_budget, min_plies=min_plies, step=self.step_nodes)
        other = longer.sequences()
        if not other and not longer.exhausted:
            return result  # the last mover has not pressed yet: the only way
        # both kinds listed (at most 9, as the event carries): those the clock fits first. The longer search out
        # of budget proves nothing: the shorter ones are candidates only (a gap), never the record
        exhausted = result.exhausted or longer.exhausted
        return Recovery(kind=RecoveryKind.AMBIGUOUS, candidates=tuple(other[:5] + lines[:4]), method="search",
                        nodes=result.nodes + longer.nodes, detail=BUDGET_EXHAUSTED if exhausted else "")

    def _parity_open(self, board: chess.Board, mapped: list[Content], result: Recovery,
                     min_plies: int) -> Steps[Recovery]:
        """No clock says who has the move: the fewest plies do not decide it either.

        A sequence one ply longer (a king's walk of two steps where one would do, a pawn by e3 and e4) explains the
        board as well and leaves the other side to move; with no press seen, nothing tells which was played. Then
        neither is taken: ambiguous, both kinds listed (the fewest plies first, at most 9 as the event carries).
        Only when the board was out of sight (a restart, a board link outage: *board_off*); frames lost with the
        board in sight (a few seconds of a snapshot-only board) keep the fewest plies.
        The gap leaves the side to move open: the first move after it tells (``Restoration.adopted_turn``), and
        the arbiter fills it (``fill-gap``). No longer sequence: the fewest plies are the only way (a knight's
        move, a pawn's single step, captures: the parity is the board's own).
        """
        if result.exhausted:
            return result  # candidates only already, the side to move left open (Downtime.gap)
        plies = len(result.sequences()[0])
        after = board.turn if plies % 2 else not board.turn  # to move after one ply more
        longer = yield from recover_steps(board, mapped, turn=after, max_plies=plies + 1, node_budget=self.node_budget,
                                          min_plies=max(min_plies, plies + 1), step=self.step_nodes)
        other = longer.sequences()
        if not other and not longer.exhausted:
            return result
        # the longer search out of budget proves nothing either: the fewest plies are candidates only
        lines = result.sequences()
        room = min(len(other), max(1, 9 - len(lines)))  # one of the longer kind at least: the other side to move
        return Recovery(kind=RecoveryKind.AMBIGUOUS, candidates=tuple(lines[:9 - room] + other[:room]),
                        method="search", nodes=result.nodes + longer.nodes,
                        detail=BUDGET_EXHAUSTED if longer.exhausted else "")

    def _clock_turn(self) -> chess.Color | None:
        """The side whose clock runs, read since the restart (None: not read yet, paused, or down)."""
        g = self.g
        if not g.clock_seen or g.clock_resync or g.clock_down or g.paused:
            return None
        return g.running

    def _mapped_held(self) -> list[Content]:
        assert self.held is not None
        mapped: list[Content] = [None] * 64
        for raw, content in enumerate(self.held):
            mapped[self.e.board_input.map(raw)] = content
        return mapped

    def _finish(self, outs: list[Output], result: Recovery, mapped: list[Content], at: float) -> None:
        assert self.held is not None
        twice = result.kind is RecoveryKind.UNIQUE and result.detail == TWICE_LAST
        if result.moves or not twice:
            self.apply(outs, result, mapped, at)
        squares = tuple(self.held)
        since = self.quiet_since if self.quiet_since is not None else at
        self._release()
        if twice:
            # the board as if the move out of turn had just been seen live (R13): raised once, recorded at the reply
            self.e.whose_change.seen_out_of_sight(outs, mapped, at, since)
        # the engine now sees the board as the reconciling dump, against the recovered record
        self.e.board_input.on_snapshot(outs, BoardSnapshot(at=at, squares=squares), at)
        # an illegal placement it shows was made out of sight: no touch was seen (4.3), a piece may have been
        # displaced (7.4): put right, it binds no piece (ILLEGAL_PLACEMENT_CORRECTED stays a note)
        self.g.illegal_unseen = self.g.illegal_state
        if result.kind is RecoveryKind.UNIQUE and result.detail == ILLEGAL_LAST:
            self._illegal_after_restart(outs, at)
        # the dump's changes are the downtime's, no player's handling: the next segment starts clean
        self.e.clock_readings.new_segment(at)
        self.g.prev_lifts = []
        self.g.two_hands.clear()

    def _wants_clock(self) -> bool:
        """The board logged presses and the clock was known: wait for its first reading before recovering."""
        return (self.board_log and self.g.clock_resync and self.restart_clock.white is not None
                and any(isinstance(e, LoggedPress) for e in self.log))

    def clock_back(self, outs: list[Output], lever: chess.Color | None, at: float, *, resync: bool = False,
                   before: chess.Color | None = None) -> None:
        """The first clock reading after the restart: the opponent's side running completes the last recovered
        move (or gap) still waiting for its press: it was pressed in the downtime. A held board waiting for
        this reading (to place the logged presses) is recovered now.

        *resync*: the clock was read before in this game and its link was lost since. After the daemon's restart,
        the last move of the record made before it and still waiting for its press is completed the same way when
        the reading shows the opponent's clock: its press happened while the daemon was down (killed between the
        press and its journal). After an outage of the clock's link while the daemon ran (*before*: the lever last
        seen before it), the last move still waiting for its press is completed when the lever moved meanwhile and
        the reading shows the opponent's clock: the mover pressed while the clock could not be seen (6.2.1). Its
        press time is not known: the move carries no clock times (no ``[%clk]`` invented). Else it would wait for
        the mover's next move, and the opponent's reply be made and completed before it (the record's completions
        out of order)."""
        restarted, self.restarted_clock = self.restarted_clock, False
        if self.held is not None:
            self._try_log(outs, at)
        waiting, self.illegal_wait = self.illegal_wait, None
        if waiting is not None and lever is not None and lever != self.g.board.turn \
                and waiting == self.g.phys.key():
            self._illegal_pressed(outs, at)  # the mover's clock stopped: he pressed during the outage
        unsure, self.unsure = self.unsure, None
        if unsure is not None and not (lever is not None and self._revise(outs, unsure, lever, at)):
            self._announce_unsure(outs, unsure, at)
        ply, self.awaiting_clock = self.awaiting_clock, None
        outage, self.clock_outage = self.clock_outage, None
        if ply is None and resync and lever is not None and self.g.records and self.g.playing:
            last = self.g.records[-1]
            if restarted:
                if last.completed_at is None and self.g.uncompleted.get(last.side) == last.ply \
                        and lever != last.side:
                    self.e.made_moves.complete(outs, last.ply, at, Completion.PRESS)
                    outs.append(StateChanged(at=at))
            elif outage is not None and before is not None and not self.g.board_down:
                self._pressed_unseen(outs, outage, before, lever, at)
            return
        if ply is None or ply != len(self.g.records) or lever is None:
            return
        rec = self.g.records[ply - 1]
        parity, self.gap_parity = self.gap_parity, None
        if parity is not None and parity[0] == ply and lever == rec.side and self.g.adopted_open is None:
            self._gap_longer(ply, parity[1], lever)
        if rec.completed_at is None and self.g.uncompleted.get(rec.side) == ply and lever != rec.side:
            self.e.made_moves.complete(outs, ply, at, Completion.PRESS)
            outs.append(StateChanged(at=at))

    def _pressed_unseen(self, outs: list[Output], outage: tuple[int, ClockState], before: chess.Color,
                        lever: chess.Color, at: float) -> None:
        """The clock read again after an outage of its link while the daemon ran: the presses it could not report.

        The moves since the outage began (the first one then waiting for its press, *before*'s clock running, or
        made after it) were each completed by their player's press (6.2.1), in order, as play goes: presses
        alternate, the first by *before*, so the lever now tells how many there were. Running for the last mover's
        opponent: all were pressed; for the last mover: all but his move, which waits for his press, seen now.
        (Fewer presses by two leave the lever where it is: then the first press never started the other clock, so
        that clock shows the time it showed before the outage: then none was pressed.) Each is completed now, in
        order, before any reply the clock's return lets through; a move the same player's next one completed during
        the outage (6.2.1.2, as without a clock) was completed by its press: its completion says so, republished.

        When the presses happened is not known: no ``[%clk]`` is invented, except for the last move pressed: its
        mover's clock has stood since his press, and shows now the time it left him (after the increment), as a
        reading just after the press would have. The clock times now are the reading's.
        """
        start, shown = outage
        moves = self.g.records[start - 1:]
        if self.g.clock.running != lever or (moves and moves[0].side != before):
            return  # the clock paused (the arbiter's), or play out of order before the outage: no evidence
        if any(rec.recovered or (rec.completed_at is not None
                                 and not (rec.completion is Completion.NEXT_MOVE and rec.ply in self.g.clockless))
               for rec in moves):
            # a move completed otherwise meanwhile (its game's end, a correction), or recovered (the board's link
            # lost too: its recovery says what it can): the clock no evidence of its own
            return
        pressed = len(moves) if not moves or lever != moves[-1].side else len(moves) - 1
        other = not before
        ran = _shown(self.g.clock, other) != _shown(shown, other)  # (the display: a clock that ran, or an increment)
        if pressed >= 2 and lever == before and not ran:
            pressed = 0  # the first press would have started the other clock: it has not run, none was made
        if (not moves and lever != before) or (len(moves) == 1 and pressed == 0 and ran):
            # the lever moved with no move seen, or it is back and the other clock ran, with one move seen: a
            # press no move explains (7.5.3), by the player who had the move then
            presser = before if not moves else other
            if self.g.phys.key() == self.g.index.key and self.g.board.turn == presser:
                self._press_without_move(outs, presser, lever, at)
                if not moves:
                    return
                pressed = 1
        for index, rec in enumerate(moves[:pressed]):
            if rec.completed_at is not None:  # completed by the player's next move meanwhile: by its press
                rec = dataclasses.replace(rec, completion=Completion.PRESS)
                self.g.records[rec.ply - 1] = rec
                outs.append(MoveCompleted(move=rec))
                continue
            clock = ClockState()
            if index == pressed - 1 and lever != rec.side:  # his clock stopped at his press: the time it shows
                clock = ClockState(white=self.g.clock.white) if rec.side == chess.WHITE else \
                    ClockState(black=self.g.clock.black)
            self.e.made_moves.complete(outs, rec.ply, at, Completion.PRESS, clock=clock)
        if pressed:
            _LOGGER.info("clock back: %d move(s) made during the outage of its link pressed meanwhile", pressed)
            outs.append(StateChanged(at=at))

    def _press_without_move(self, outs: list[Output], side: chess.Color, lever: chess.Color, at: float) -> None:
        """*side* had the move, none of his is on the board, and the clock read again after the outage of its link
        says he pressed meanwhile (the lever moved, or the other clock ran): a press without a move (7.5.3), unseen.
        One finding, as a press seen would raise it; what follows from it on the board is his (as after one seen)."""
        name = "White" if side == chess.WHITE else "Black"
        how = "the lever moved" if lever != side else "the lever is back and the other clock ran"
        _LOGGER.info("clock back: %s, no move of %s's on the board: a press without a move", how, name)
        self.e.findings.raise_finding(
            outs, "CLOCK_PRESS_NO_MOVE", side, at, [Evidence(at=at, event="clock read again")],
            penalty=self.e.findings.penalty(side, "CLOCK_PRESS_NO_MOVE"),
            text=f"press without a move, unseen: while the clock's link was down {how}, and {name} had the move "
                 "with none of his made (when he pressed is not known)")
        self.g.pressed_no_move = side

    def ended(self, outs: list[Output], squares: list[Content], at: float, reason: str) -> bool:
        """The board back (a restart, the board link down) showing the result gesture: both kings on the centre
        squares (rules-spec §3.6). The game ended while the board was out of sight; True: taken as such.

        No search explains that board (the kings did not get there by moves). The moves before the gesture are
        recovered when the board's own log shows them (DGT EEPROM: its placements replayed as far as legal moves
        lead, :func:`_log_before_gesture`), as ``eeprom`` moves; else, when the board (kings and centre squares
        aside) is not the official position, moves were missed that nobody can tell: the record gets the gap mark
        (as for any unexplained gap, the arbiter's ``fill-gap``). The result signal follows (the caller processes
        the board: ``RESULT_SIGNAL``), and the incident is one: the signal names the gap (``gap_ply``), the gap's
        ``MOVES_RECOVERED`` folds under it (``incident: RESULT_SIGNAL``). One alert, not two.
        """
        g = self.g
        if not self.e.rules.result_gesture or not g.playing or g.setting_up:
            return False
        result = squares_kings_result(squares)
        if result is None:
            return False
        board = g.board
        log = self._mapped_log() if self.board_log else []
        before: Recovery | None = None
        if any(isinstance(e, LoggedChange) for e in log):
            budget = self.node_budget
            key: tuple[object, ...] = ("ended", board.fen(en_passant="fen"), board.chess960, tuple(log), budget)
            start = board.copy(stack=False)
            before = self._now(key, lambda: _log_before_gesture(start, log, budget, self.step_nodes))
        from_ply = len(g.records)
        self.settle_gap(outs, at)
        if before is not None and before.kind is RecoveryKind.UNIQUE:
            _LOGGER.info("%s: the game ended meanwhile (%s); %s", reason, result, before.describe())
            self._recovered(outs, before, at, reason)
            self.announce(outs, before, from_ply, at, reason)
        elif (before is None or before.kind is RecoveryKind.GAP) and not _only_kings_moved(board, squares):
            _LOGGER.info("%s: the game ended meanwhile (%s); the moves before it are not known: a gap", reason, result)
            gap = Recovery(kind=RecoveryKind.GAP, detail="0")
            self.gap(outs, gap, squares, at, reason)
            text = (f"the game ended while the board was out of sight (kings on the centre squares: {result}); the "
                    "moves played before it are not known: a gap, for the arbiter's fill-gap")
            self.announce(outs, gap, from_ply, at, reason, text=text)
            event = outs[-2]
            assert isinstance(event, GameEvent)
            outs[-2] = dataclasses.replace(event, details={**event.details, "incident": "RESULT_SIGNAL",
                                                           "result": result})
            self.ended_gap = len(g.records)
        self.e.restoration.divergence_key = None
        return True

    def illegal_back(self, outs: list[Output], at: float) -> None:
        """The board back after its link was down, one ply played meanwhile and an illegal one (7.5.1: a piece moved
        where it cannot go, the board showing one illegal move of the side to move from the official position).

        Live, its press would have raised ``ILLEGAL_MOVE`` (with the article and penalty of the edition) and the
        record gone on from the board (G6); the outage must not hide it. The press seen meanwhile (the clock on its
        own link) is that press: judged now as it would have been then, once (the press is given to it, no longer
        a press "not judged"). The clock out of sight with the board (on its jack): its first reading tells
        (:meth:`clock_back`): the opponent's time running, the mover pressed during the outage. No press (none seen,
        not pressed yet, no clock): the illegal placement waits as it would live (his press or the opponent's move
        completes it).
        """
        g = self.g
        if g.cand is not None or g.press is not None or not g.playing or g.setting_up or self.pending:
            return
        if g.index.classify(g.phys).kind is not DiffClass.ILLEGAL_1:
            return
        side = g.board.turn
        seen = next((p for p in g.blind_presses if p.side == side), None)
        if seen is not None:
            g.blind_presses.remove(seen)
            g.blind_matched += 1
            self._illegal_pressed(outs, seen.at)
        elif g.clock_seen and (g.clock_resync or g.clock_down):
            self.illegal_wait = g.phys.key()
        else:
            self._illegal_awaits_reply(at)

    def _illegal_awaits_reply(self, at: float) -> None:
        """No clock to complete the illegal move the board came back with: 7.5.1, in a game without a clock the
        opponent's move completes it. Taken as if its placement had just been seen live
        (``Recognition._completed_by_the_reply``): the opponent's reply judges it then, as live, once."""
        g = self.g
        if g.clock_seen:
            return
        diff = g.index.classify(g.phys)
        if diff.kind is DiffClass.ILLEGAL_1:
            self.e.recognition.illegal_seen = (len(g.records), at, diff, PhysicalBoard(g.phys.base_board()), None)

    def _illegal_after_restart(self, outs: list[Output], at: float) -> None:
        """The restart's legal plies recovered, the board showing one illegal move of the side to move after them
        (:func:`boardd.core.recovery.recover_illegal_steps`). The clock read since the restart tells whether its
        mover pressed during the downtime (the opponent's time running, 6.2.1): judged as that press was live
        (:meth:`_illegal_pressed`), once. His time running (not pressed yet) or no clock to tell: the placement
        waits, as it would live (his press, or the opponent's move, completes it)."""
        g = self.g
        if g.cand is not None or g.press is not None or not g.playing or g.setting_up or self.pending:
            return
        running = self._clock_turn()
        if running is not None and running != g.board.turn:
            self._illegal_pressed(outs, at)
        elif running is None:
            self._illegal_awaits_reply(at)

    def _illegal_pressed(self, outs: list[Output], at: float) -> None:
        """The illegal move the board shows completed by its mover's press at *at*: judged as that press live."""
        g = self.g
        diff = g.index.classify(g.phys)
        if diff.kind is not DiffClass.ILLEGAL_1:
            return
        side = g.board.turn
        _LOGGER.info("board back: an illegal move missed during the outage, pressed at %.2f", at)
        g.illegal_state = None
        board_t, g.last_board_t = g.last_board_t, min(g.last_board_t, at)  # made by its press at the latest
        try:
            press = Evidence(at=at, event=f"C {'W' if side == chess.WHITE else 'B'}")
            self.e.presses.illegal_press(outs, side, at, press, "ILLEGAL_MOVE", subtype=diff.subtype, diff=diff)
        finally:
            g.last_board_t = board_t

    def _gap_longer(self, ply: int, plies: int, lever: chess.Color) -> None:
        """A gap left while the clock was out of sight (on the board's jack), its candidates agreeing on the side to
        move; the clock read again runs for the gap's last mover. Either he has not pressed yet (the candidates'
        side to move), or a sequence one ply longer was played and pressed (the running side to move), as
        :meth:`_longer` finds after a restart. When one fits (or the search runs out of budget: no proof), the side
        to move is left open: the first move after the gap tells (``Restoration.adopted_turn``), and no move of the
        other side is taken for an illegal or out-of-turn one."""
        before = self.e.restoration.replay_board(ply - 1)
        if before is None:
            return
        gap = self.g.records[ply - 1]
        squares = tuple(chess.Board(gap.fen_after, chess960=before.chess960).piece_at(sq) for sq in chess.SQUARES)
        budget = self.node_budget
        key: tuple[object, ...] = ("gap-longer", before.fen(en_passant="fen"), before.chess960, squares, lever, plies,
                                   budget)
        longer = self._now(key, lambda: recover_steps(before, squares, turn=lever, max_plies=plies + 1,
                                                      min_plies=plies + 1, node_budget=budget, step=self.step_nodes))
        if longer.sequences() or longer.exhausted:
            _LOGGER.info("gap at ply %d: a sequence of %d plies fits the clock too; the side to move is open", ply,
                         plies + 1)
            self.g.adopted_open = ply

    def settle_unsure(self, outs: list[Output], at: float) -> None:
        """Plies recovered while the clock was out of sight, its reading not come (the board lost again): announced
        as they stand (no reading to revise them by)."""
        unsure, self.unsure = self.unsure, None
        if unsure is not None:
            self._announce_unsure(outs, unsure, at)

    def _announce_unsure(self, outs: list[Output], unsure: tuple[int, tuple[Content, ...], Recovery, str],
                         at: float) -> None:
        ply, _, result, reason = unsure
        records = self.g.records
        plies = len(result.moves)
        if len(records) >= ply + plies and all(rec.recovered == result.method for rec in records[ply:ply + plies]):
            self.announce(outs, result, ply, at, reason, to_ply=ply + plies)

    def _revise(self, outs: list[Output], unsure: tuple[int, tuple[Content, ...], Recovery, str], lever: chess.Color,
                at: float) -> bool:
        """The clock read again after plies were recovered without it: does another number of plies fit too?

        The recovered plies leave the other side to move than the one whose clock runs: they fit if their last
        mover has not pressed yet; a sequence one ply longer that leaves the running side to move (a pawn by
        e3 and e4 where e4 would do) fits as well. Then the record did not know: the plies are retracted and the
        gap of :meth:`apply` takes their place, with both kinds, as :meth:`_recover` decides after a restart.
        True: they were (the gap's event published), False: they stand.
        """
        ply, squares, recovered, reason = unsure
        plies = len(recovered.moves)
        records = self.g.records
        if len(records) != ply + plies or self.g.board.turn == lever:
            return False  # play went on from them (its mover tells the side), or the clock agrees
        before = self.e.restoration.replay_board(ply)
        if before is None:
            return False
        budget = self.node_budget
        key: tuple[object, ...] = ("revise", before.fen(en_passant="fen"), before.chess960, squares, lever, plies,
                                   budget)
        longer = self._now(key, lambda: recover_steps(before, squares, turn=lever, max_plies=plies + 1, min_plies=2,
                                                      node_budget=budget, step=self.step_nodes))
        other = longer.sequences()
        if not other and not longer.exhausted:
            return False  # the last mover has not pressed yet: the only way
        # another order fits, or the search ran out of budget (no proof that none does): the plies are not known
        recorded = tuple(chess.Move.from_uci(rec.uci) for rec in records[ply:])
        result = Recovery(kind=RecoveryKind.AMBIGUOUS, candidates=(*other[:8], recorded), method="search",
                          nodes=longer.nodes, detail=BUDGET_EXHAUSTED if longer.exhausted else "")
        self.e.restoration.retract_to(outs, ply, at, "missed updates: the clock read again fits another order")
        self.apply(outs, result, list(squares), at, reason)
        return True

    def _release(self) -> None:
        self.pending = False
        self.held = None
        self.held_since = None
        self.quiet_since = None
        self.gap_seen = False
        self.log = ()

    def _mapped_log(self) -> list[LogEntry]:
        out: list[LogEntry] = []
        for entry in self.log:
            if isinstance(entry, LoggedChange):
                out.append(dataclasses.replace(entry, square=self.e.board_input.map(entry.square)))
            else:
                out.append(entry)
        return out

    def reconcile(self, outs: list[Output], at: float) -> bool:
        """A reconciling dump while a restart is pending (no dump came first): recover, or mark a gap."""
        if not self.pending or not self.g.playing or self.g.setting_up:
            return False
        self.pending = False
        result = self._recover(list(self.g.phys.squares))
        self.log = ()
        if result.kind is RecoveryKind.NONE:
            return False
        self.apply(outs, result, list(self.g.phys.squares), at)
        return True

    def apply(self, outs: list[Output], result: Recovery, squares: list[Content], at: float,
               reason: str = RESTART_DETAIL) -> None:
        """Enter *result* in the record: the recovered moves, or a gap (ambiguous, none); one ``MOVES_RECOVERED``.

        The restart's dump comes here, and so does an ambiguous jump after a link outage or lost frames
        (:meth:`Restoration.forward_jump`, *reason* ``board link down`` or ``missed updates``): one way for both.
        """
        if result.method == "eeprom" and not self.board_log:  # only the changes seen after the restart
            result = dataclasses.replace(result, method="changes")
        _LOGGER.info("%s: %s (%d positions searched)", reason, result.describe(), result.nodes)
        if result.kind is RecoveryKind.NONE:
            return
        from_ply = len(self.g.records)
        self.settle_gap(outs, at)
        if result.kind is RecoveryKind.UNIQUE:
            self._recovered(outs, result, at, reason)
        else:
            self.gap(outs, result, squares, at, reason)
        if self.open_gap is not None:
            # the first move after the gap may settle it (after_gap): its one event waits for that move
            self.gap_event = (result, from_ply, reason, at)
        else:
            self.announce(outs, result, from_ply, at, reason)
        self.e.restoration.divergence_key = None

    def settle_gap(self, outs: list[Output], at: float) -> None:
        """A gap whose event waited for the first move after it (:meth:`after_gap`), settled otherwise (the board
        lost again, the arbiter's fill, a new game, an illegal move after it): its event as it stood."""
        waiting, self.gap_event = self.gap_event, None
        self.open_gap = None
        if waiting is not None:
            result, from_ply, reason, _ = waiting
            self.announce(outs, result, from_ply, at, reason, to_ply=from_ply + 1)

    def announce(self, outs: list[Output], result: Recovery, from_ply: int, at: float, reason: str, *,
                 to_ply: int | None = None, text: str | None = None) -> None:
        """The one ``MOVES_RECOVERED`` of an incident: what was recovered after ply *from_ply* (up to *to_ply*, by
        default the record's end), or the gap."""
        details: dict[str, object] = {
            "kind": result.kind.value, "method": result.method, "from_ply": from_ply + 1,
            "to_ply": len(self.g.records) if to_ply is None else to_ply, "moves": list(result.sans),
            "candidates": [[m.uci() for m in c] for c in result.candidates], "reason": reason,
            "text": result.describe() if text is None else text}
        if result.exhausted:
            details["incomplete"] = BUDGET_EXHAUSTED  # the candidates are those found before it ran out
        outs.append(GameEvent(at=at, type="MOVES_RECOVERED", details=details))
        outs.append(StateChanged(at=at))

    def missed(self, squares: list[Content], max_plies: int, presses: list[chess.Color] | None) -> Recovery:
        """Missed updates while the daemon ran (a link outage, lost frames, a dump after lost field updates).

        The restart's recovery (:meth:`_recover`: the board's log read at the reconnection, else the search,
        the clock read now telling who has the move) over 2..*max_plies* plies. Several sequences are
        narrowed by the presses seen meanwhile (*presses*: their sides in order, when the clock was in sight
        throughout; ``None`` otherwise): a player completes his move by pressing (6.2.1), so a sequence whose
        movers do not match them, the last mover excepted (he may not have pressed yet), is contradicted. One
        left: unique. Several left (moves that commute, c3 h6 d3 and d3 h6 c3; a piece by two routes): the
        order cannot be known; the caller leaves a gap (:meth:`apply`), never a guess.
        """
        result = self._recover(squares, max_plies=max_plies, min_plies=2, board_off=self.g.board_down)
        if result.kind is not RecoveryKind.AMBIGUOUS or presses is None:
            return result
        fit = tuple(c for c in result.candidates if _pressed(self.g.board, c, presses))
        if len(fit) == 1 and not comes_back(self.g.board, fit[0]) and not result.exhausted:
            # presses show no route (candidates found before the budget ran out are not all: no proof)
            return Recovery(kind=RecoveryKind.UNIQUE, moves=fit[0], method=result.method, nodes=result.nodes,
                            sans=sans_of(self.g.board, fit[0]))
        if fit:
            return dataclasses.replace(result, candidates=fit)
        return result  # the presses fit none (one forgotten, one without a move): they tell nothing

    def missed_reason(self) -> str:
        """``MOVES_RECOVERED.reason`` of plies missed while the daemon runs."""
        return OUTAGE_DETAIL if self.g.board_down else MISSED_DETAIL

    def recorded(self, outs: list[Output], result: Recovery, start: int, from_ply: int, *, squares: list[Content],
                 at: float) -> None:
        """Plies missed while the daemon ran, recorded (the board's log's order, or the one sequence the search
        found): marked ``eeprom`` or ``search`` (the records after *from_ply*, and their outputs from *start* on),
        as after a restart, and one ``MOVES_RECOVERED``. Found by search with the clock out of sight (on the
        DGT's jack), the event waits for the clock's first reading, which may turn the plies into a gap
        (:meth:`clock_back`)."""
        mark(self.g.records, outs, start, set(range(from_ply + 1, len(self.g.records) + 1)), result.method,
             reason=self.missed_reason())
        if result.method == "search" and self.g.clock_seen and self.g.clock_resync:
            self.unsure = (from_ply, tuple(squares), result, self.missed_reason())
            return
        self.announce(outs, result, from_ply, at, self.missed_reason())

    def forget_log(self) -> None:
        """The dump after the board's log has been seen: the log was for it (a later jump has its own)."""
        if not self.pending:
            self.log = ()
            self.board_log = False

    # --- the arbiter fills a gap ---------------------------------------------------------------

    def fill_error(self, ply: int, moves: tuple[str, ...]) -> str | None:
        """Why the arbiter's moves cannot fill the gap at *ply* (None: they can)."""
        records = self.g.records
        if not 1 <= ply <= len(records) or records[ply - 1].recovered != "gap":
            return f"ply {ply} is not a gap of the record"
        board = self.e.restoration.replay_board(ply - 1)
        if board is None:
            return f"the position before ply {ply} cannot be rebuilt"
        for i, text in enumerate(moves):
            move = _parse(board, text)
            if move is None:
                return f"move {i + 1} ({text}) is not legal in {board.fen()}"
            board.push(move)
        want = chess.Board(records[ply - 1].fen_after, chess960=self.g.board.chess960).board_fen()
        if board.board_fen() != want:
            return f"the moves lead to {board.board_fen()}, the gap stands for {want}"
        if ply < len(records) and board.turn != records[ply].side:
            # the record goes on with the side that moved after the gap: the moves must leave it to move
            # (candidates of a gap may differ by a ply: Ra3 Kd8 or Ra2 Kd8 Ra3)
            names = {chess.WHITE: "White", chess.BLACK: "Black"}
            return (f"the moves leave {names[board.turn]} to move, the record goes on with "
                    f"{names[records[ply].side]}'s move {records[ply].san}")
        return None

    def after_gap(self, outs: list[Output], at: float) -> None:
        """A gap that left the side to move open (no clock: candidates of both parities): the first move after it
        tells who had the move; the fewest plies that leave that side to move, when one sequence only, fill it.

        What the clock would have told at the restart (the side whose clock runs has the move: :meth:`_recover`
        then takes the fewest plies of that parity), the first move tells now (its colour moved next, 6.2.1 has no
        press without a clock). The search with that side to move (the board before the gap, the gap's placement):
        one sequence (within the budget, no piece away and back: :func:`recover` says ``unique``) fills the gap as
        the arbiter's ``fill-gap`` would, its moves marked ``search``, one ``MOVES_RECOVERED`` (``kind: filled``,
        ``method: search``) saying so; several or none: the gap stays for the arbiter. Done at the end of a call
        (no caller holds a ply number), once nothing is in progress on the board.
        """
        if self.open_gap is None:
            return
        ply = self.open_gap
        records = self.g.records
        if ply > len(records) or records[ply - 1].recovered != "gap":
            self.settle_gap(outs, at)  # retracted
            return
        g = self.g
        if len(records) == ply and self.gap_event is not None and at >= self.gap_event[3] + GAP_EVENT_WAIT_S:
            self.settle_gap(outs, at)  # no move after it for so long: the arbiter is told, the gap is his
            return
        if len(records) == ply or g.cand is not None or g.press is not None or g.mask or g.buffer:
            return  # no move after it yet, or one in progress
        after = records[ply]
        before = self.e.restoration.replay_board(ply - 1)
        if not after.legal or after.uci == "0000" or before is None:
            self.settle_gap(outs, at)  # an illegal move (another gap) after it: it does not tell who had the move
            return
        gap = records[ply - 1]
        squares = tuple(chess.Board(gap.fen_after, chess960=before.chess960).piece_at(sq) for sq in chess.SQUARES)
        turn, budget = after.side, self.node_budget
        key: tuple[object, ...] = ("after-gap", before.fen(en_passant="fen"), before.chess960, squares, turn, budget)
        result = self._now(key, lambda: recover_steps(before, squares, turn=turn, node_budget=budget,
                                                      step=self.step_nodes))
        side = "White" if turn == chess.WHITE else "Black"
        if result.kind is not RecoveryKind.UNIQUE:
            _LOGGER.info("gap at ply %d: %s with %s to move; it stays for the arbiter", ply, result.describe(), side)
            self.settle_gap(outs, at)
            return
        waiting, self.gap_event, self.open_gap = self.gap_event, None, None
        self.fill(outs, ply, tuple(m.uci() for m in result.moves), at, by=True)
        reason = gap.recovered_reason or (waiting[2] if waiting is not None else RESTART_DETAIL)
        text = f"{result.describe()} (the first move after the board's return, {after.san}, showed {side} to move)"
        self.announce(outs, dataclasses.replace(result, detail="", candidates=()), ply - 1, at, reason,
                      to_ply=ply - 1 + len(result.moves), text=text)

    def fill(self, outs: list[Output], ply: int, moves: tuple[str, ...], at: float, *, by: bool = False) -> None:
        """Replace the gap at *ply* by the arbiter's moves; the rest of the record is rebuilt and republished.

        *by*: not the arbiter's moves but those the search found once the side to move was known
        (:meth:`after_gap`, which publishes the incident's one event): marked ``search``, no ``ARBITER_ACTION``.
        """
        error = self.fill_error(ply, moves)
        if error is not None:
            _LOGGER.warning("fill-gap refused: %s", error)
            return
        if not by:
            self.settle_gap(outs, at)  # the gap's own event first, when it waited for a move after it
        records = self.g.records
        gap = records[ply - 1]
        later = records[ply:]
        board = self.e.restoration.replay_board(ply - 1)
        assert board is not None
        rebuilt: list[MoveRecord] = list(records[: ply - 1])
        completed_at = gap.completed_at if gap.completed_at is not None else (at if later else None)
        filled: list[str] = []
        for text in moves:
            move = _parse(board, text)
            assert move is not None
            side = board.turn
            san = board.san(move)
            board.push(move)
            filled.append(san)
            rebuilt.append(MoveRecord(
                ply=len(rebuilt) + 1, uci=move.uci(), san=san, side=side, fen_after=board.fen(),
                made_at=gap.made_at, completed_at=completed_at,
                completion=Completion.NEXT_MOVE if completed_at is not None else None,
                recovered="search" if by else "arbiter", recovered_reason=gap.recovered_reason))
        last_filled = len(rebuilt)
        for rec in later:
            move = chess.Move.from_uci(rec.uci) if rec.legal and rec.uci != "0000" else None
            if move is not None and move in board.legal_moves:
                san = board.san(move)
                board.push(move)
                rebuilt.append(dataclasses.replace(rec, ply=len(rebuilt) + 1, san=san, fen_after=board.fen()))
            else:  # an illegal move that stood, another gap: the record goes on from its position
                board = chess.Board(rec.fen_after, chess960=self.g.board.chess960)
                rebuilt.append(dataclasses.replace(rec, ply=len(rebuilt) + 1))
        shift = last_filled - ply
        uncompleted = {}
        for color, p in self.g.uncompleted.items():
            if p == ply:
                if rebuilt[last_filled - 1].side == color and completed_at is None:
                    uncompleted[color] = last_filled
            elif p > ply:
                uncompleted[color] = p + shift
            else:
                uncompleted[color] = p
        self.g.records[:] = rebuilt
        self.g.uncompleted = uncompleted
        self.g.board = self.e.restoration.replay_board(len(rebuilt)) or board
        self.e.recognition.rebuild_index()
        self.g.keys[:] = [self._key(n) for n in range(len(rebuilt) + 1)]
        self.g.adopted_open = None
        self.g.cand = None
        # the plies made without a clock move with the record: the gap's become the filled moves (no clock was seen
        # for them, the arbiter's or the search's), the later ones shift with their moves
        self.g.clockless = {p if p < ply else p + shift for p in self.g.clockless if p != ply} \
            | set(range(ply, last_filled + 1))
        outs.append(MovesRetracted(at=at, to_ply=ply - 1, reason="downtime gap filled: the side to move is known"
                                   if by else "downtime gap filled by the arbiter"))
        for rec in rebuilt[ply - 1:]:
            outs.append(MoveMade(move=rec))
            if rec.completed_at is not None:
                outs.append(MoveCompleted(move=rec))
        if by:
            return
        outs.append(GameEvent(at=at, type="MOVES_RECOVERED", details={
            "kind": "filled", "method": "arbiter", "from_ply": ply, "to_ply": last_filled, "moves": filled,
            "candidates": [], "reason": "fill-gap", "text": f"gap at ply {ply} filled by the arbiter: "
                                                            f"{' '.join(filled)}"}))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"fill_gap": ply, "moves": filled}))
        outs.append(StateChanged(at=at))

    def _key(self, ply: int) -> tuple[int, ...]:
        board = self.e.restoration.replay_board(ply)
        if board is None:
            board = chess.Board(self.g.records[ply - 1].fen_after, chess960=self.g.board.chess960)
        return PositionIndex(board).key

    def _recovered(self, outs: list[Output], result: Recovery, at: float, reason: str = RESTART_DETAIL) -> None:
        """The recovered moves, made and completed in order.

        A press seen since the restart (not judged: the board link is down for the engine) completes the
        first recovered move of its side not completed yet, in order; the other moves are completed by the
        next one. The last one is completed at once when the clock already has the opponent's side running
        (its press happened in the downtime), else by its side's next press or move.
        """
        start = len(outs)
        plies: list[int] = []
        blind = self.g.blind_presses
        previous = -1e18
        lever = self.e.clock_readings.lever
        self._complete_pending(outs, at)
        logged = self._logged_presses(result, at)
        for i, move in enumerate(result.moves):
            last = i == len(result.moves) - 1
            side = self.g.board.turn
            seen = next((p for p in blind if p.side == side and p.at > previous), None)
            press = logged.get(i)
            if press is not None and press[0] > previous and press[0] <= at:
                # the board logged this move's press: its time from the clock, its clock as the log holds it
                previous = press[0]
                if seen is not None and seen.at <= press[0] + 1.0:
                    blind.remove(seen)  # the same press, seen again since the restart
                    self.g.blind_matched += 1
                rec = self.e.made_moves.make(outs, move, press[0], completed=True, completion=Completion.PRESS,
                                             press_at=press[0], recovered=True, clock=press[1])
            elif seen is not None:
                blind.remove(seen)
                previous = seen.at
                self.g.blind_matched += 1
                rec = self.e.made_moves.make(outs, move, min(at, seen.at), completed=True,
                                             completion=Completion.PRESS, press_at=seen.at, recovered=True,
                                             clock=seen.clock)
            else:
                clock_now = self.g.clock_seen and not self.g.clock_resync and not self.g.clock_down
                pressed = not last or (clock_now and lever is not None and lever != side)
                rec = self.e.made_moves.make(outs, move, at, completed=pressed,
                                             completion=Completion.NEXT_MOVE if not last else Completion.PRESS,
                                             recovered=True, clock=ClockState())
                if not pressed and not clock_now:
                    self.awaiting_clock = rec.ply  # the first reading tells whether it was pressed
            plies.append(rec.ply)
            self.g.clockless.add(rec.ply)
        mark(self.g.records, outs, start, set(plies), result.method, reason=reason)

    def _logged_presses(self, result: Recovery, at: float) -> dict[int, tuple[float, ClockState]]:
        """Move index -> (time, clock) of its press in the board's log, placed by the clock readings.

        The press of a move is the first logged press of its side after the change that completed it and
        before the next move's; :func:`boardd.core.recovery.place_presses` gives the times, backwards from
        the clock reading now (the first since the restart) and the clock the journal ended with.
        """
        if not self.board_log or result.method != "eeprom" or not self.g.clock_seen or self.g.clock_resync:
            return {}
        entries = list(self.log)
        presses = [(j, e) for j, e in enumerate(entries) if isinstance(e, LoggedPress)]
        if not presses:
            return {}
        white_side = self.e.rules.white_clock_side
        now, start = self.g.clock, self.restart_clock

        def by_side(state: ClockState) -> tuple[float | None, float | None]:
            return (state.white, state.black) if white_side is ClockSide.LEFT else (state.black, state.white)

        left, right = by_side(now)
        start_left, start_right = by_side(start)
        running = None if now.running is None else (white_side if now.running == chess.WHITE else white_side.other)
        times = place_presses([e for _, e in presses], now=at, left=left, right=right, running=running,
                              start_left=start_left, start_right=start_right, increment=self.g.increment)
        order = {j: n for n, (j, _) in enumerate(presses)}
        out: dict[int, tuple[float, ClockState]] = {}
        for k, mover, j in self._moves_log_presses(result, entries):
            t = times[order[j]]
            if t is not None:
                out[k] = (t, self._logged_clock(mover, entries[j]))
        return out

    def logged_clocks(self, result: Recovery) -> dict[int, ClockState]:
        """Move index -> its mover's clock after his press, as the board's log holds it (DGT EEPROM: a lever change
        with the presser's time when the lever went down, protocols.md §1.9; plus the increment the clock adds).

        The press of a move is the first logged press of its side after the change that completed it and before the
        next move's. Only for moves replayed from the board's own log (``eeprom``): the search knows no order of the
        changes. The time of the press is not known here (:meth:`_logged_presses` places it with clock readings).
        """
        if not self.board_log or result.method != "eeprom" or result.kind is not RecoveryKind.UNIQUE:
            return {}
        entries = list(self.log)
        return {k: self._logged_clock(mover, entries[j]) for k, mover, j in self._moves_log_presses(result, entries)}

    def _moves_log_presses(self, result: Recovery, entries: list[LogEntry]) -> Iterator[tuple[int, chess.Color, int]]:
        """(move index, its mover, the index in *entries* of its press) for each move of *result* whose press the
        board's log holds: the first logged press of the mover's side after the change that completed the move and
        before the next move's."""
        white_side = self.e.rules.white_clock_side
        used = list(result.changes_used)
        board = self.g.board.copy(stack=False)
        for k, move in enumerate(result.moves):
            mover = board.turn
            board.push(move)
            if k >= len(used) or used[k] < 0:
                continue
            end = next((u for u in used[k + 1:] if u >= 0), len(entries))
            side = white_side if mover == chess.WHITE else white_side.other
            for j in range(used[k] + 1, end):
                entry = entries[j]
                if isinstance(entry, LoggedPress) and entry.side is side:
                    yield k, mover, j
                    break

    def _logged_clock(self, mover: chess.Color, press: LogEntry) -> ClockState:
        """The mover's clock after a logged press: the presser's time as the lever went down, plus the increment."""
        assert isinstance(press, LoggedPress)
        shown = press.shown + self.g.increment
        return ClockState(white=shown if mover == chess.WHITE else None, black=shown if mover == chess.BLACK else None)

    def _complete_pending(self, outs: list[Output], at: float) -> None:
        """Moves made before the restart and not completed yet: play went on after them, so they were completed
        meanwhile (by a press seen since, in order, or by the next move): completed first, in record order."""
        blind = self.g.blind_presses
        for ply in sorted(self.g.uncompleted.values()):
            side = self.g.records[ply - 1].side
            seen = next((p for p in blind if p.side == side), None)
            if seen is not None:
                blind.remove(seen)
                self.g.blind_matched += 1
                self.e.made_moves.complete(outs, ply, seen.at, Completion.PRESS, clock=seen.clock)
            else:
                self.e.made_moves.complete(outs, ply, at, Completion.NEXT_MOVE)

    def gap(self, outs: list[Output], result: Recovery, squares: list[Content], at: float,
            reason: str = RESTART_DETAIL) -> None:
        """No unique sequence: the game goes on from the board (a marked gap the arbiter may fill later)."""
        self._complete_pending(outs, at)
        side = self.g.board.turn
        board = chess.Board(None, chess960=self.g.board.chess960)
        for sq, content in enumerate(squares):
            if isinstance(content, chess.Piece):
                board.set_piece_at(sq, content)
        lengths = {len(c) % 2 for c in result.candidates}
        # a search out of budget may have missed those of the other parity: the side to move is left open
        plies = len(result.candidates[0]) if len(lengths) == 1 and not result.exhausted else None
        # the side to move: after an odd number of plies the other side (unknown when the candidates disagree on
        # it: kept, turned by its first move). The candidates agreeing while the other side's clock runs: their
        # last mover has not pressed yet (:meth:`_recover` found no longer sequence that fits the clock), and his
        # press completes the gap (it once turned the side to move round, and that press was judged "no move")
        board.turn = (not side) if plies is not None and plies % 2 else side
        board.castling_rights = self.g.board.castling_rights
        board.castling_rights = board.clean_castling_rights()
        board.ep_square = None
        # the move number after the plies of the candidates (kept when they disagree on how many)
        board.fullmove_number = self.g.board.fullmove_number + (
            (plies + (1 if side == chess.BLACK else 0)) // 2 if plies is not None else 0)
        desc = describe_change(self.g.board, squares)
        text = GAP_TEXT.get(reason, GAP_TEXT[RESTART_DETAIL])  # what happened: a restart, the link down, lost updates
        rec = MoveRecord(ply=len(self.g.records) + 1, uci="0000", san=f"{text}: {desc}",
                         side=not board.turn, fen_after=board.fen(), made_at=at, legal=False, recovered="gap",
                         recovered_reason=reason)
        self.g.records.append(rec)
        self.g.board = board
        self.e.recognition.rebuild_index()
        self.g.keys.append(self.g.index.key)
        self.g.uncompleted.clear()
        # made, not completed: its side's press (if it was not made in the downtime) or next move completes it
        self.g.uncompleted[rec.side] = rec.ply
        self.g.clockless.add(rec.ply)
        # the side to move is known when the candidates agree on it and a clock tells (its running side, read now or
        # at its return: _longer, _gap_longer). Without a clock nothing says the players went by the fewest plies: the
        # last ply may have been an illegal move not completed yet (7.5.1, the opponent's move completes it: the
        # turn passed with it), or a sequence longer than the search fits. The first move after the gap tells, as
        # after a position adopted without a clock (Restoration.adopted_turn): the other side's is no move out of
        # turn (R13 needs a side known to be without the move; the gap is already the arbiter's one alert)
        self.g.adopted_open = None if plies is not None and self.g.clock_seen else rec.ply
        # candidates of both parities, none out of budget: the first move after the gap tells the side to move, then
        # the fewest plies of that parity may be one sequence (after_gap)
        self.open_gap = rec.ply if len(lengths) == 2 and not result.exhausted else None
        self.g.cand = None
        self.e.clock_readings.new_segment(at)
        outs.append(MoveMade(move=rec))
        if not (self.g.clock_seen and not self.g.clock_resync and not self.g.clock_down):
            self.awaiting_clock = rec.ply
            if plies is not None and self.g.clock_seen:
                self.gap_parity = (rec.ply, plies)  # the clock read again may run for the other side (clock_back)
        elif self.e.clock_readings.lever is not None and self.e.clock_readings.lever != rec.side:
            self.e.made_moves.complete(outs, rec.ply, at, Completion.PRESS)


def _shown(clock: ClockState, side: chess.Color) -> float | None:
    return clock.white if side == chess.WHITE else clock.black


def _log_before_gesture(board: chess.Board, log: list[LogEntry], budget: int, step: int) -> Steps[Recovery]:
    """The moves the board's log shows before the result gesture: its placements, latest first, replayed from the
    official one (:func:`recover_steps`); the latest that legal moves lead to ends them (``unique``, ``eeprom``; none
    when it is the official placement itself: ``none``). The changes after it are the gesture's."""
    official = [board.piece_at(sq) for sq in chess.SQUARES]
    for i, squares in reversed(log_placements(board, log)):
        if squares == official:
            return Recovery(kind=RecoveryKind.NONE, method="eeprom")  # nothing played before the gesture
        found = yield from recover_steps(board, squares, log=log[:i + 1], node_budget=budget, max_plies=0, step=step)
        if found.kind is RecoveryKind.UNIQUE:
            return found
    return Recovery(kind=RecoveryKind.GAP, method="eeprom", detail="0")  # the log does not tell (its start lost?)


def _lost_plies(result: Recovery) -> bool:
    """Did the board's log explain the board only after plies it lacks at its start were assumed?"""
    return result.method == "eeprom" and any(used < 0 for used in result.changes_used)


def _whole_log_illegal(result: Recovery, board: chess.Board, mapped: list[Content], log: list[LogEntry], *,
                       budget: int, step: int) -> Steps[Recovery]:
    """*result* explained the board from the board's log only after plies it lacks at its start were assumed (a
    daemon killed as it read the board), or by the search (the log did not lead to the board). When the log itself,
    whole and in order, leads to the board with an illegal move as its last (7.5.1), that needs nothing lost and is
    what the board recorded: taken instead (the plies "lost" were the log's own moves, the illegal one read as a
    legal one: h2-h4 ... h4-h3 taken for h2-h3 first; the search's sequences are those of a board that shows no
    illegal move)."""
    illegal = yield from recover_illegal_steps(board, mapped, log=log, max_plies=0, node_budget=budget, step=step)
    if illegal.kind is RecoveryKind.UNIQUE:
        _LOGGER.info("recovery: the board's log whole: %s, then an illegal move", " ".join(illegal.sans))
        return illegal
    return result


def _log_steps(board: chess.Board, mapped: list[Content], log: list[LogEntry], budget: int,
               step: int) -> Steps[Recovery]:
    """The board's log alone (no search), as :func:`recover_steps`; see :func:`_whole_log_illegal`."""
    result = yield from recover_steps(board, mapped, log=log, node_budget=budget, max_plies=0, step=step)
    if result.kind is RecoveryKind.UNIQUE and _lost_plies(result):
        result = yield from _whole_log_illegal(result, board, mapped, log, budget=budget, step=step)
    return result


def _only_kings_moved(board: chess.Board, squares: list[Content]) -> bool:
    """Does the board differ from the official position only by the kings and the centre squares (the gesture)?"""
    skip = board.kings | _CENTRE_BB
    for sq, content in enumerate(squares):
        if isinstance(content, chess.Piece) and content.piece_type == chess.KING:
            skip |= chess.BB_SQUARES[sq]
    return all(board.piece_at(sq) == squares[sq] for sq in chess.SQUARES if not chess.BB_SQUARES[sq] & skip)


def _done(result: Recovery) -> Steps[Recovery]:
    """*result*, known already, as steps (none)."""
    yield from ()
    return result



def _pressed(board: chess.Board, moves: tuple[chess.Move, ...], presses: list[chess.Color]) -> bool:
    """Do the presses seen (their sides, in order) complete *moves* from *board*, the last one perhaps not yet?"""
    movers = [board.turn if i % 2 == 0 else not board.turn for i in range(len(moves))]
    return presses in (movers, movers[:-1])


def _parse(board: chess.Board, text: str) -> chess.Move | None:
    try:
        move = chess.Move.from_uci(text)
        if move in board.legal_moves:
            return move
    except ValueError:
        pass
    try:
        return board.parse_san(text)
    except ValueError:
        return None


def mark(records: list[MoveRecord], outs: list[Output], start: int, plies: set[int], how: str, *,
         reason: str) -> None:
    """Mark the records of *plies* (and their outputs from *start* on) as recovered *how*, missed for *reason*."""
    for ply in plies:
        records[ply - 1] = dataclasses.replace(records[ply - 1], recovered=how, recovered_reason=reason)
    for i in range(start, len(outs)):
        out = outs[i]
        if isinstance(out, MoveMade | MoveCompleted) and out.move.ply in plies:
            outs[i] = dataclasses.replace(out, move=dataclasses.replace(out.move, recovered=how,
                                                                        recovered_reason=reason))

