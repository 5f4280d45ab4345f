"""The Engine: board and clock events in, moves and findings out (rules-spec §3–§4).

Theory of operation
-------------------
The engine is a pure state machine. :meth:`Engine.feed` takes one event of
:mod:`boardd.core.events` and returns the outputs of :mod:`boardd.core.outputs`; time only
comes from the events' ``at``. Timers (release inference ``T_settle``, the press
window ``T_latency``/``T_bounce``, a persisting impossible reading, the flag of the
engine's own clock model, a made move taken back on the board) are deadlines that fire
when a later event arrives or when the caller calls :meth:`Engine.advance` (the daemon
sleeps until :meth:`next_deadline`).

* **Positions.** The *official* position is a ``chess.Board`` with the move stack of the
  record. The *physical* position is the sensor reading in the official frame
  (:class:`~boardd.core.recognizer.PhysicalBoard`; the board may be turned round, see
  *Orientation*). After every change, :class:`~boardd.core.recognizer.PositionIndex` classifies
  the difference (§3.2: NONE, LEGAL, PARTIAL, IN_HAND, ILLEGAL_1, TWO_MOVES, OPP_ONLY,
  UNRECOGNISED).
* **Made.** A ``LEGAL(m)`` state that stays ``T_settle`` without change is a *made* move
  (§3.4): it enters the record (``MoveMade``) and the opponent has the move. A made move
  changed by its player before the opponent starts is replaced (``MovesRetracted`` +
  ``MoveMade``) with ``RELEASED_MOVE_CHANGED`` and the law-based move as suggestion. Taken
  back on the board before it is completed (the position before it stood ``T_settle``), it
  leaves the record (``MovesRetracted``) and the first released move is remembered: the same
  move made again is recorded once, a different one is ``RELEASED_MOVE_CHANGED``, a press
  with it still taken back ``TAKEBACK_DETECTED`` (R07, 4.7, 6.2.1), and the move enters the
  record again completed by that press: a released move stands (4.7, R29) until the arbiter rules.
* **Whose change.** Changes of the side without the move that are not part of the mover's
  move (a piece he is capturing, a captured piece parked) are kept apart (masked), so the
  mover's move is still recognised; they give ``OUT_OF_TURN_CHANGE``,
  ``ADJUST_OUT_OF_TURN``, ``OPPONENT_STARTED_BEFORE_MOVE_MADE`` or, when the board shows an
  earlier official position, a takeback (``TAKEBACK_DETECTED``, R29).
* **Presses.** A lever transition is a press (§3.5). Transitions closer than ``T_bounce``
  are one physical event (``CLOCK_BOUNCE``, only the final lever state counts). The press
  is judged ``T_latency`` after it against the board as it was then; later board events
  wait until the press is judged. The table of §3.5 decides: completion, late press,
  ``CLOCK_PRESS_NO_MOVE``, ``CLOCK_PRESS_PIECE_IN_HAND``, the incomplete-pattern codes,
  ``ILLEGAL_MOVE/<subtype>``, ``DISPLACED_NOT_RESTORED_AT_PRESS``, ``POSITION_MISMATCH_AT_PRESS``.
  *Fast path*: when the presser's made move is settled, is the last move, the board shows
  exactly the official position and nothing else is pending, no racing board event can change
  the outcome, so the move is completed at the press, in the ``feed`` of the reading itself
  (``completed_at`` = press time). Only the bounce window stays open: a bounce that ends with
  the lever back at the presser withdraws the completion (``CLOCK_BOUNCE``, the move
  republished as made, ``StateChanged``); board events after such a press are post-press events.
* **State.** A batch that raises or updates a finding, or an arbiter command that sets the
  clock, the players or the orientation, ends with one ``StateChanged`` (the retained state
  carries the open findings in full).
* **G6.** The physical sequence is never overwritten: an illegal move completed by a press
  stays in the record with ``legal=False`` (SAN field = long-algebraic description) and play
  continues from the physical position until the arbiter reinstates (``Reinstate``: the
  engine then waits for the board to show the target position, and checks the replacement
  move against the touch-move constraint, §3.7).
* **Without a clock** (``RulesConfig.clock_expected=False``, or no clock reading yet) the
  engine keeps time with :class:`boardd.core.clock.ClockModel`: White's time starts with the
  first board activity, a made move switches the clocks (increment, period transitions),
  the model's flag time is a timer (``FLAG_FALL``). Moves are then completed by the same
  player's next move (6.2.1.2) or by game end; no press-related codes are raised. An illegal
  move (the press table's illegal rows) that stood ``T_settle`` is judged when the opponent
  starts his reply (a piece of his changed and the board is his move in progress from the
  illegal position): raised as at a press, it enters the record made when put down (``legal=False``,
  the engine's clock switched then, completed by the offender's next move) and the reply is
  recorded after it, unless the arbiter reinstates (7.5.1). The player who has just moved moving again
  before the reply (another piece, not his released move changed) is a move on the opponent's turn (R13,
  an irregularity, not an illegal move): ``OUT_OF_TURN_CHANGE`` once when the piece is put down; when the
  opponent starts his reply from the board it enters the record (``legal=False``, ``out_of_turn``, the
  opponent still to move), unless the arbiter reinstates (7.6); a ruling without reinstatement adopts it at
  once (``WhoseChange.moved_twice``).
* **Orientation.** The first board dump (or, before the first move, the first move seen
  only in a turned frame) decides how the board stands: turned round (180°) is handled
  transparently (``GameEvent ORIENTATION_CHANGED``); a quarter turn is also
  ``SETUP_INCORRECT`` (7.2.2). ``SetOrientation`` forces the frame.
* **Board dumps** are applied as changes at one instant. A dump that is no move in
  progress is reconciled: missed updates (after a board link outage as many plies as after a restart,
  else up to three) are recovered by forward search when their order is known (one sequence, or the board's
  log read at the reconnection; marked ``recovered`` and announced by ``MOVES_RECOVERED``; several orders leave
  the restart's gap for the arbiter's ``fill-gap``, ``Downtime.missed``), otherwise ``POSITION_DIVERGENCE``.
  Resolving it with ``accept`` reinstates the official position;
  dismissing it adopts the board's position (a ``legal=False`` entry) so the record goes on from there.
* **Board link outage.** While the board link is down (``LinkChanged`` until the next board event) the
  clock's presses are recorded (time, presser from the lever, the clock then) but never judged: no press
  code accuses a player of what the board could not see. A press completes the presser's made move still
  waiting for it; the others wait for the board's dump, whose recovered moves they complete in order (their
  ``[%clk]`` is the clock at the press; a recovered move without a press gets no clock). If the dump is a
  ``POSITION_DIVERGENCE``, presses stay unjudged until the arbiter resolves it. ``GameEvent
  PRESSES_NOT_JUDGED`` reports them (``presses``, ``matched``, ``reason``).
* **Result gestures** (both kings on d4/e4/d5/e5, DGT result pieces) are ``GameEvent
  RESULT_SIGNAL`` with the proposed result and never a move (lila#11783): the made-not-completed
  king move(s) onto the centre that form it are retracted, and nothing is inferred while a king
  stays there.
* **Clock readings** are filtered: the running side at 0:00 without the flag bit, or a side losing
  more than the elapsed time (+1.5 s), waits for the next reading; unconfirmed, it is ignored
  (``SENSOR_FLICKER``). While the clock link is down the game goes on as without a clock (clock
  unknown, no press codes). The game's first clock start corrects a clock standing the other way
  round (``GameEvent CLOCK_SIDE_CHANGED``, before ply 2).
* Findings are :class:`boardd.core.outputs.Irregularity` objects with codes verbatim from
  rules-spec §5; severity, confidence and articles come from :mod:`boardd.core.laws.codes` for the
  game's edition, penalties from :func:`boardd.core.laws.penalties.suggest_penalty` (the illegal count
  goes up once per move). Bad input never raises: time going backwards, unknown markers, impossible
  readings and internal errors become ``SENSOR_FAULT`` findings.

Layout
------
:class:`Engine` (this module) is the façade: it dispatches each event to the room that handles it and
fires the timers. The rooms (``findings``, ``board_input``, ``orientation``, ``recognition``,
``whose_change``, ``two_hands``, ``touch_move``, ``made_moves``, ``clock_readings``, ``presses``,
``restoration``, ``correction``, ``links``, ``gestures``) each apply one part of rules-spec §3–§4 and name
their articles in their docstring; they share one :class:`~boardd.core.engine.state.Game` and reach each other through
the façade. The phase of the game and the device links are the state machines of
:mod:`boardd.core.engine.modes`. docs/architecture.md maps every §5.2 code to the function that judges it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Final

import chess

from boardd.core._slots import slot_setters
from boardd.core.engine.board_input import BoardInput
from boardd.core.engine.clock_readings import ClockReadings
from boardd.core.engine.common import (
    _BACKWARDS_REPORT_S,
    _LOGGER,
    _STANDARD_FEN,
    _STATE_COMMANDS,
    _fen,
    _republish_state,
)
from boardd.core.engine.correction import Correction
from boardd.core.engine.dismissals import Dismissals
from boardd.core.engine.downtime import Downtime, SearchNeeded
from boardd.core.engine.findings import Findings
from boardd.core.engine.gestures import Gestures
from boardd.core.engine.links import Links
from boardd.core.engine.made_moves import MadeMoves
from boardd.core.engine.modes import LinkState, Phase, PhaseTrigger
from boardd.core.engine.orientation import Orientation
from boardd.core.engine.presses import Presses
from boardd.core.engine.recognition import Recognition
from boardd.core.engine.restoration import Restoration
from boardd.core.engine.state import Game
from boardd.core.engine.touch_move import TouchMove
from boardd.core.engine.two_hands import TwoHands
from boardd.core.engine.whose_change import WhoseChange
from boardd.core.events import (
    Acknowledge,
    BoardLog,
    BoardSnapshot,
    ClockReading,
    Event,
    FillGap,
    GameInfo,
    LinkChanged,
    NewGame,
    Reinstate,
    Reopen,
    Resolve,
    SetClock,
    SetOrientation,
    SetPlayers,
    SetResult,
    SquareChanged,
)
from boardd.core.outputs import (
    ClockUpdate,
    Evidence,
    GameEvent,
    GameState,
    Irregularity,
    Output,
    StateChanged,
    Status,
)
from boardd.core.recovery import Recovery, Steps
from boardd.core.settings import RulesConfig

__all__ = ["Engine"]

#: What undoing a probed call (``Engine._probed``) leaves as it is: the stepwise machinery and the kept searches.
_RESOLVED, _NOTED = Status.RESOLVED, Status.NOTED

#: :class:`GameState`'s fields in order (:func:`_game_state` takes them so).
_GAME_STATE_FIELDS = ("game_id", "white", "black", "event", "site", "date", "round", "board_no", "time_control",
                      "edition", "start_fen", "chess960", "fen", "moves", "turn", "clock", "result", "termination",
                      "open_irregularities", "illegal_moves_white", "illegal_moves_black", "category", "regime",
                      "open_irregularity_details", "dismissed_irregularity_details")


def _make_game_state() -> Callable[..., GameState]:
    """``_game_state(*values)``: the :class:`GameState` of the values of :data:`_GAME_STATE_FIELDS`, in that
    order, set through its slots (a frozen dataclass's ``__init__`` sets each of its 25 fields through
    ``object.__setattr__``: about 40,000 instructions a state, built twice a move; issue 12). The constructor
    when the fields are not those."""
    setters = slot_setters(GameState, _GAME_STATE_FIELDS)

    def slow(*values: object) -> GameState:
        return GameState(**dict(zip(_GAME_STATE_FIELDS, values, strict=True)))  # type: ignore[arg-type]

    if setters is None:  # pragma: no cover - the fields changed: the constructor
        return slow
    new = object.__new__
    count = len(setters)

    def game_state(*values: object) -> GameState:
        if len(values) != count:
            return slow(*values)
        state = new(GameState)
        for setter, value in zip(setters, values, strict=True):
            setter(state, value)
        return state
    return game_state


_game_state: Final = _make_game_state()

_NOT_UNDONE = frozenset({"rules", "stepwise", "_held_back", "_queue", "search_cache", "probing", "_probe", "_retry"})


class Engine:
    """The sans-I/O recogniser and rules engine (docs/architecture.md).

    Args:
        rules: how to judge (timing, regime, clock side, ...).
        game: the game (players, time control, edition, start position); ``None`` = defaults.
    """

    def __init__(self, rules: RulesConfig = RulesConfig(), game: GameInfo | None = None) -> None:  # noqa: B008
        self.rules = rules
        #: The held board's recovery search after a restart or a link outage is done in bounded steps
        #: (:meth:`work`) instead of within the one call that starts it. Off by default: ``boardd replay``, the
        #: journal's rebuild and the corpus call the engine as before (the results are the same either way).
        self.stepwise = False
        #: Stepwise: the call (an event, or ``None`` for ``advance``, and its time) during which the search
        #: started, held back until it ends, and the calls that came meanwhile, in order.
        self._held_back: tuple[Event | None, float] | None = None
        self._queue: list[tuple[Event | None, float]] = []
        #: The recovery searches' results, keyed by all of their inputs (``Downtime._keep``): kept across the
        #: undoing of a probed call, so its second processing finds the search done in steps.
        self.search_cache: dict[tuple[object, ...], Recovery] = {}
        #: Stepwise, within a call that may search (:meth:`_may_search`): a search not kept raises
        #: :class:`SearchNeeded` (the call is undone, the search done in steps, the call processed again).
        self.probing = False
        #: Stepwise: the search a probed call asked for (:meth:`work` steps it), and that call: (event or ``None``
        #: for ``advance``, its time, the outputs before it when it is the rest of a call, or ``None``).
        self._probe: Steps[Recovery] | None = None
        self._retry: tuple[Event | None, float, tuple[Output, ...] | None] | None = None
        self._last_t: float | None = None
        self._backwards = 0
        self._backwards_reported: float | None = None
        #: The quiet-state guards of the square change (docs/benchmarks.md, issue 12 "the quiet state"): each
        #: skips a check whose state fields prove it has nothing to say. False forces every change onto the full
        #: path (the oracle, tests/core/test_quiet_state.py); the outputs and the state are the same either way.
        self.quiet = True
        self._reset(game or GameInfo(), at=None, carried=None)

    # ------------------------------------------------------------------ setup

    def _reset(self, game: GameInfo, at: float | None, carried: Game | None) -> None:
        """A new game: fresh state, fresh rooms (the board's kind is kept).

        The finding counter starts again with every game: ids are stable within the game (the contract),
        and the daemon, started again, rebuilds the current game from its ``NewGame`` in a fresh engine.
        A counter carried over from the games before gave the rebuilt game other ids than those published
        (a tablet showed its open findings again as new incidents; commands for the old ids were refused).
        """
        if carried is None:
            self.g = Game(self.rules, game, at)
        else:
            self.g = Game(self.rules, game, at, field_updates=carried.field_updates)
        self.findings = Findings(self)
        self.board_input = BoardInput(self)
        self.orientation = Orientation(self)
        self.recognition = Recognition(self)
        self.made_moves = MadeMoves(self)
        self.touch_move = TouchMove(self)
        self.clock_readings = ClockReadings(self)
        self.presses = Presses(self)
        self.restoration = Restoration(self)
        self.links = Links(self)
        self.two_hands = TwoHands(self)
        self.gestures = Gestures(self)
        self.whose_change = WhoseChange(self)
        self.correction = Correction(self)
        self.downtime = Downtime(self)
        self.dismissals = Dismissals(self)

    @property
    def busy(self) -> bool:
        """Stepwise: a search is in progress or calls wait for it (:meth:`work` until it is False)."""
        return (self.downtime.search is not None or self._held_back is not None or bool(self._queue)
                or self._probe is not None or self._retry is not None)

    def _searching(self) -> bool:
        return self.downtime.search is not None or self._probe is not None

    def _may_search(self, event: Event | None) -> bool:
        """Stepwise: may processing *event* (``None``: the timers) search within the call? Then it is probed.

        The searches within a call: a restart's dump (held or reconciled) and the board's log at once
        (``Downtime.reconcile``, ``_try_log``), a board link outage's reconciling dump (``Restoration.forward_jump``),
        the clock read again after plies recovered without it (``Downtime._revise``), a dump after lost field
        updates, the first move after a gap that left the side to move open (``Downtime.after_gap``). A snapshot-only
        board's lost frames (``_JUMP_DEPTH`` plies, the board in sight) are not probed:
        every one of its scans is a dump, and undoing a call costs a copy of the game.
        """
        d, g = self.downtime, self.g
        if d.pending or d.held is not None or d.unsure is not None or d.open_gap is not None \
                or d.gap_parity is not None:
            return True
        if type(event) is ClockReading:
            return False
        return g.board_down or type(event) in (LinkChanged, BoardLog) or (type(event) is BoardSnapshot
                                                                           and g.field_updates)

    def _probed(self, call: Callable[[], list[Output]], event: Event | None, at: float,
                before: list[Output] | None) -> list[Output]:
        """*call* with :attr:`probing` on; a search it asks for (:class:`SearchNeeded`): the call undone (the state
        restored as it was before it), the search left to :meth:`work`, the call processed again after it."""
        kept = {k: v for k, v in vars(self).items() if k not in _NOT_UNDONE}
        backup = copy.deepcopy(kept, {id(self): self, id(self.rules): self.rules})
        prefix = None if before is None else tuple(before)
        self.probing = True
        try:
            return call()
        except SearchNeeded as need:
            vars(self).update(backup)
            self._probe = need.steps
            self._retry = (event, at, prefix)
            return []
        finally:
            self.probing = False

    def work(self) -> list[Output]:
        """Stepwise: one bounded step of the search in progress (:data:`boardd.core.recovery.STEP_NODES` positions).

        When the search ends, its result is applied as the call that started it would have, then that call and
        those that came meanwhile are processed in order (until one of them starts another search): the outputs
        of all of that. The record and the outputs are those of the same calls without steps.
        """
        outs: list[Output] = []
        if self._probe is not None:
            return self._probe_step()
        if self.downtime.search is not None:
            try:
                if not self.downtime.step(outs):
                    return outs
            except Exception:  # never crash on input: the held board stays held (the next tick searches again)
                _LOGGER.exception("engine failed in the recovery search")
                at = self._held_back[1] if self._held_back is not None else (self._last_t or 0.0)
                self.findings.raise_finding(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event="recovery")],
                                            text="internal error in the recovery search (logged)")
        held, self._held_back = self._held_back, None
        if held is not None:  # the search's outputs and the call's together, as within that call without steps
            event, at = held
            outs = self._rest(outs, event, at)
        return self._queued(outs)

    def _queued(self, outs: list[Output]) -> list[Output]:
        """The calls that came while a search ran, in order, until one of them starts another."""
        while self._queue and not self._searching():
            event, at = self._queue.pop(0)
            outs.extend(self._advance_now(at) if event is None else self._feed_now(event))
        return outs

    def _probe_step(self) -> list[Output]:
        """One step of the search a probed call asked for; when it is over, that call again (then the queue)."""
        assert self._probe is not None and self._retry is not None
        failed = False
        try:
            next(self._probe)
        except StopIteration:
            pass  # its result is kept (Engine.search_cache): the call finds it
        except Exception:  # never crash on input: the call again, searching within it (as without steps)
            _LOGGER.exception("engine failed in the recovery search")
            failed = True
        else:
            return []
        self._probe = None
        (event, at, prefix), self._retry = self._retry, None
        if failed:
            self.stepwise, stepwise = False, self.stepwise
            try:
                outs = self._call(event, at, prefix)
            finally:
                self.stepwise = stepwise
        else:
            outs = self._call(event, at, prefix)
        return self._queued(outs)

    def _call(self, event: Event | None, at: float, prefix: tuple[Output, ...] | None) -> list[Output]:
        """A probed call processed again: the whole call, or its rest after the held board's search."""
        if prefix is None:
            return self._advance_now(at) if event is None else self._feed_now(event)
        return self._rest(list(prefix), event, at)

    def _rest(self, outs: list[Output], event: Event | None, at: float) -> list[Output]:
        """The rest of a call after the held board's search (its outputs *outs*), probed when it may search."""
        if event is None:
            def call() -> list[Output]:
                return self._advance_rest(outs, at)
        else:
            def call() -> list[Output]:
                return self._feed_rest(outs, event)
        if self.stepwise and self._may_search(event):
            return self._probed(call, event, at, outs)
        return call()

    def finish_work(self) -> list[Output]:
        """Stepwise: every step left at once (:meth:`work` until not :attr:`busy`)."""
        outs: list[Output] = []
        while self.busy:
            outs.extend(self.work())
        return outs

    def feed(self, event: Event) -> list[Output]:
        """Process one event. Timers due before ``event.at`` fire first (as ``advance(event.at)``).

        An event whose time goes backwards is processed at the last known time and
        reported (``SENSOR_FAULT``, detail "time went backwards"). Nothing raises.

        Stepwise, while :attr:`busy` the event waits (queued, in order) and nothing is returned: :meth:`work`
        processes it once the search has ended. Busy with stepwise turned off: the rest is done first, at once.
        """
        downtime = self.downtime
        if self.busy:  # (not inlined: the merge of the stepwise searches showed an inlined copy drifting from it)
            if not self.stepwise:  # stepwise turned off meanwhile: the rest at once, then this event
                return [*self.finish_work(), *self._feed_now(event)]
            self._queue.append((event, event.at))
            return []
        if downtime.held is None and not (self.stepwise and self._may_search(event)):
            # (what _feed_now does then, without the calls: every event of a game, no search to probe for)
            if type(event) is SquareChanged and self.quiet:
                return self._feed_square(event)
            return self._feed_rest([], event)
        return self._feed_now(event)

    def _feed_now(self, event: Event) -> list[Output]:
        if self.stepwise and self._may_search(event):
            return self._probed(lambda: self._feed_whole(event), event, event.at, None)
        return self._feed_whole(event)

    def _feed_whole(self, event: Event) -> list[Output]:
        outs: list[Output] = []
        at = event.at
        last = self._last_t
        if self.downtime.held is not None and (last is None or at >= last):
            self.downtime.tick(outs, at)  # after a restart: the held board, once quiet, is recovered first
            if self.downtime.search is not None:  # stepwise: the event waits for the search (Engine.work)
                self._held_back = (event, at)
                return outs
        return self._feed_rest(outs, event)

    def _feed_square(self, event: SquareChanged) -> list[Output]:
        """:meth:`_feed_rest` of a square change in time order with no press pending (nothing to defer it to,
        :meth:`_defer`), no restart outage to reconcile (``Downtime.pending``) and the board link up: the timers
        due, then the change into the board input, as :meth:`_dispatch` does; anything else takes the full path."""
        at = event.at
        last = self._last_t
        g = self.g
        downtime = self.downtime
        if last is None or at < last or g.press is not None or downtime.pending \
                or g.board_link.state is not LinkState.UP or downtime.open_gap is not None \
                or downtime.gap_event is not None:
            return self._feed_rest([], event)  # (a gap's first move after it, its event's timer: the full path)
        outs: list[Output] = []
        armed = self._timers_armed()
        if armed:
            self._fire_safely(outs, at, inclusive=False)
        self._last_t = at
        g.field_updates = True
        try:
            if armed:
                self._dispatch(outs, event, at)  # (a timer may have changed what the dispatch reads)
            else:
                self.board_input.on_board(outs, [(event.square, event.content)], at, snapshot=False)
        except Exception:  # never crash on input: log, count, keep going
            _LOGGER.exception("engine failed on %r", event)
            self.findings.raise_finding(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event="SquareChanged")],
                                        text="internal error while processing this event (logged)")
        if not outs:
            if self.correction.unpublished is None:
                return outs  # what the publication gives for an empty batch with nothing waiting
        else:
            _republish_state(outs, at, False)
        return self.correction.publication(outs, at, flush=False)

    def _feed_rest(self, outs: list[Output], event: Event) -> list[Output]:
        """:meth:`feed` after the held board's tick."""
        at = event.at
        last = self._last_t
        if (type(event) is ClockReading and last is not None and at >= last and not self._timers_armed()
                and self.downtime.open_gap is None):
            # fast path of the most frequent event: no timer can be due, no gap waiting for the move after it
            self._last_t = at
            try:
                self.clock_readings.on_clock(outs, event, at)
            except Exception:  # never crash on input
                _LOGGER.exception("engine failed on %r", event)
                self.findings.raise_finding(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event="ClockReading")],
                            text="internal error while processing this event (logged)")
            if not outs or (len(outs) == 1 and type(outs[0]) is ClockUpdate):
                if self.correction.unpublished is None:
                    # a reading that changes nothing, or only the times shown (most): what the publication gives
                    # then (it passes a batch without moves and retractions through as it is)
                    return outs
            else:
                _republish_state(outs, at, False)
            return self.correction.publication(outs, at)
        if self._last_t is not None and at < self._last_t:
            self._backwards += 1
            if self._backwards_reported is None or self._last_t - self._backwards_reported >= _BACKWARDS_REPORT_S:
                self._backwards_reported = self._last_t
                self.findings.raise_finding(outs, "SENSOR_FAULT", None, self._last_t,
                            [Evidence(at=at, event="time went backwards")],
                            text=f"event time {at:.3f} s before the last one ({self._last_t:.3f} s): processed at "
                                 f"the last known time ({self._backwards} such event(s) so far)")
            else:
                _LOGGER.debug("event time went backwards (%d so far)", self._backwards)
            at = self._last_t
        if self._timers_armed():
            self._fire_safely(outs, at, inclusive=False)
        self._last_t = at
        try:
            if type(event) is ClockReading:
                self.clock_readings.on_clock(outs, event, at)
            else:
                self._dispatch(outs, event, at)
            if self.downtime.open_gap is not None:
                self.downtime.after_gap(outs, at)
        except Exception:  # never crash on input: log, count, keep going
            _LOGGER.exception("engine failed on %r", event)
            self.findings.raise_finding(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event=type(event).__name__)],
                        text="internal error while processing this event (logged)")
        _republish_state(outs, at, type(event) in _STATE_COMMANDS)
        # (an arbiter's command: the moves whose publication waited are what he sees, Correction.publication)
        return self.correction.publication(outs, at, flush=type(event) not in (SquareChanged, BoardSnapshot,
                                                                               ClockReading, LinkChanged, BoardLog))

    def advance(self, now: float) -> list[Output]:
        """Fire every timer due at or before *now* (stepwise, while :attr:`busy`: queued as :meth:`feed`)."""
        if self.busy:
            if not self.stepwise:
                return [*self.finish_work(), *self._advance_now(now)]
            self._queue.append((None, now))
            return []
        return self._advance_now(now)

    def _advance_now(self, now: float) -> list[Output]:
        if self.stepwise and self._may_search(None):
            return self._probed(lambda: self._advance_whole(now), None, now, None)
        return self._advance_whole(now)

    def _advance_whole(self, now: float) -> list[Output]:
        outs: list[Output] = []
        if self._last_t is not None and now < self._last_t:
            return outs
        if self.downtime.held is not None:
            self.downtime.tick(outs, now)
            if self.downtime.search is not None:  # stepwise: the timers wait for the search (Engine.work)
                self._held_back = (None, now)
                return outs
        return self._advance_rest(outs, now)

    def _advance_rest(self, outs: list[Output], now: float) -> list[Output]:
        """:meth:`advance` after the held board's tick."""
        self._fire_safely(outs, now, inclusive=True)
        if self.downtime.open_gap is not None:
            try:
                self.downtime.after_gap(outs, now)
            except Exception:  # never crash on input
                _LOGGER.exception("engine failed after a gap")
                self.findings.raise_finding(outs, "SENSOR_FAULT", None, now, [Evidence(at=now, event="gap")],
                                            text="internal error while filling a gap (logged)")
        # the daemon's own clock may run a little ahead of the event stamps of queued events: advancing does
        # not move the event time line, so such events are not "time going backwards"
        if outs:
            _republish_state(outs, now, False)
        return self.correction.publication(outs, now)

    def next_deadline(self) -> float | None:
        """When the next timer is due, or None."""
        downtime = self.downtime
        if not self._timers_armed() and downtime.held is None and downtime.gap_event is None:
            # nothing armed (the usual case: the daemon and the replay ask before every event, most of them clock
            # readings while a player thinks): every term of _next_deadline_of_all is None then
            return None
        return self._next_deadline_of_all()

    def _next_deadline_of_all(self) -> float | None:
        """:meth:`next_deadline`, every timer asked: the earliest of the armed timers."""
        due = [d for d in (self.g.cand.deadline if self.g.cand else None,
                           self.g.press.due(self.rules.timing.t_latency, self.rules.timing.t_bounce)
                           if self.g.press else None, self.clock_readings.model_flag_due(),
                           self.board_input.impossible_due(),
                           self.g.restore_check if self.g.phase.state is Phase.AWAIT_RESTORE else None,
                           self.g.oot_recheck, self.g.undo_due,
                           self.g.start_pending[0] if self.g.start_pending else None,
                           self.clock_readings.held_due(), self.downtime.due())
               if d is not None]
        return min(due) if due else None

    @property
    def state(self) -> GameState:
        """The whole truth about the current game, as published: without the moves whose publication waits (made
        during a restoration found later, maybe its hands: ``Correction.hold_back``)."""
        return self._state(self.correction.unpublished_from())

    def _state(self, hidden: int | None) -> GameState:
        """The state; *hidden*: the first ply left out (the record before it, its position and turn).

        Built twice a move (the made and the completed move's ``state``): the open findings picked by identity
        (an enum's class attribute costs a Python call), the object through its slots (:func:`_game_state`)."""
        game = self.g
        g = game.game
        records = game.records if hidden is None else game.records[:hidden - 1]
        fen = _fen(game.board) if hidden is None else game.fen_before(hidden)
        if game.irr:
            open_details = tuple([irr for irr in game.irr.values()
                                  if irr.status is not _RESOLVED and irr.status is not _NOTED])
            open_ids = tuple([irr.id for irr in open_details])
        else:
            open_details = open_ids = ()
        findings = self.findings
        return _game_state(
            g.id, g.white, g.black, g.event, g.site, g.date, g.round, g.board_no, g.time_control, g.edition,
            game.start_fen, g.chess960, fen, tuple(records),
            game.board.turn if hidden is None else fen.split(" ")[1] == "w", game.clock, game.result,
            game.termination, open_ids, findings.count(chess.WHITE), findings.count(chess.BLACK), game.category,
            game.regime, open_details, self.dismissals.retractable())

    @property
    def irregularities(self) -> tuple[Irregularity, ...]:
        """Every finding of the current game, in the order raised (latest version of each)."""
        return tuple(self.g.irr.values())

    @property
    def physical_fen(self) -> str:
        """The physical placement (board FEN, official frame)."""
        return self.g.phys.base_board().board_fen()

    def pgn(self) -> str:
        """The game as PGN (delegates to :func:`boardd.core.record.game_pgn` when available)."""
        try:
            from boardd.core import record  # noqa: PLC0415 - optional sibling module
            game_pgn = getattr(record, "game_pgn", None)
            if game_pgn is not None:
                return str(game_pgn(self._state(None)))  # the archive: every move made, published or not yet
        except ImportError:
            pass
        return self._minimal_pgn()

    def _minimal_pgn(self) -> str:
        g = self.g.game
        tags = [("Event", g.event), ("Site", g.site), ("Date", g.date), ("Round", g.round),
                ("White", g.white), ("Black", g.black), ("Result", self.g.result), ("TimeControl", g.time_control)]
        if self.g.start_fen != _STANDARD_FEN or g.chess960:
            # a Chess960 game states its start position, even the standard array's (518), and its variant, as
            # boardd.core.record.game_pgn does: read without them, its castling is standard chess's
            tags += [("SetUp", "1"), ("FEN", self.g.start_fen)]
        if g.chess960:
            tags.append(("Variant", "Chess960"))
        lines = [f'[{k} "{v}"]' for k, v in tags]
        board = chess.Board(self.g.start_fen, chess960=g.chess960)
        words: list[str] = []
        for rec in self.g.records:
            if board.turn == chess.WHITE:
                words.append(f"{board.fullmove_number}.")
            elif not words:
                words.append(f"{board.fullmove_number}...")
            words.append(rec.san if rec.legal else "{" + rec.san + "}")
            board = chess.Board(rec.fen_after, chess960=g.chess960)
        words.append(self.g.result)
        return "\n".join(lines) + "\n\n" + " ".join(words) + "\n"

    def _timers_armed(self) -> bool:
        """Whether a timer of :meth:`_fire` is armed (else none can be due): the one list of their fields, asked by
        the fast paths of :meth:`feed`, :meth:`next_deadline` (which adds the held board's and the gap's) and
        :meth:`_fire` itself. (Inlined copies of it drifted apart at merges: keep it the only one.)"""
        g = self.g
        return (g.press is not None or g.cand is not None or g.model_started or g.impossible_since is not None
                or g.restore_check is not None or g.held_reading is not None or g.oot_recheck is not None
                or g.undo_due is not None or g.start_pending is not None)

    def _fire_safely(self, outs: list[Output], now: float, *, inclusive: bool) -> None:
        """The due timers, as :meth:`_fire`; an internal error is logged and reported as the events' are."""
        try:
            self._fire(outs, now, inclusive=inclusive)
        except Exception:  # never crash on input: a timer is judged from the events before it
            _LOGGER.exception("engine failed on a timer due at %.3f", now)
            self.findings.raise_finding(outs, "SENSOR_FAULT", None, now, [Evidence(at=now, event="timer")],
                                        text="internal error while processing the timers (logged)")

    def _fire(self, outs: list[Output], now: float, *, inclusive: bool) -> None:
        if not self._timers_armed():
            return
        t = self.rules.timing
        for _ in range(10000):
            options: list[tuple[float, int]] = []
            if self.g.press is not None:
                options.append((self.g.press.due(t.t_latency, t.t_bounce), 0))
            if self.g.cand is not None:
                options.append((self.g.cand.deadline, 1))
            flag_due = self.clock_readings.model_flag_due()
            if flag_due is not None:
                options.append((flag_due, 2))
            bad_due = self.board_input.impossible_due()
            if bad_due is not None:
                options.append((bad_due, 3))
            if self.g.restore_check is not None and self.g.phase.state is Phase.AWAIT_RESTORE:
                options.append((self.g.restore_check, 4))
            held_due = self.clock_readings.held_due()
            if held_due is not None:
                options.append((held_due, 5))
            if self.g.oot_recheck is not None:
                options.append((self.g.oot_recheck, 6))
            if self.g.undo_due is not None:
                options.append((self.g.undo_due, 7))
            if self.g.start_pending is not None:
                options.append((self.g.start_pending[0], 8))
            if not options:
                return
            due, kind = min(options)
            if due > now or (due == now and not inclusive):
                return
            if kind == 8:
                self.whose_change.started_due(outs, due)
            elif kind == 7:
                self.made_moves.take_back(outs, due)
            elif kind == 6:
                self.whose_change.recheck_out_of_turn(outs, due)
            elif kind == 5:
                self.clock_readings.confirm_held(outs)
            elif kind == 0:
                self.presses.judge_press(outs, due)
            elif kind == 1:
                self.made_moves.settle(outs, due)
            elif kind == 4:
                self.restoration.restore_overdue(outs, due)
            elif kind == 3:
                self.board_input.impossible_overdue(outs, due)
            else:
                self.clock_readings.model_flag_fall(outs, due)

    def _dispatch(self, outs: list[Output], event: Event, at: float) -> None:
        match event:
            case ClockReading():
                self.clock_readings.on_clock(outs, event, at)
            case SquareChanged():
                self.g.field_updates = True
                if self._defer(event, at):
                    return
                if self.downtime.pending and self.downtime.on_square(outs, event, at):
                    return
                if self.g.board_down:
                    self.links.board_back(outs, at)  # field updates again without a dump: nothing to reconcile with
                self.board_input.on_board(outs, [(event.square, event.content)], at, snapshot=False)
            case BoardSnapshot():
                if self._defer(event, at):
                    return
                if self.downtime.pending and self.downtime.on_snapshot(outs, event, at):
                    return
                self.board_input.on_snapshot(outs, event, at)
            case LinkChanged():
                self.downtime.on_link(outs, event, at)
                self.links.on_link(outs, event, at)
            case BoardLog():
                self.downtime.on_log(event)
            case NewGame():
                self.downtime.settle_gap(outs, at)  # the old game's gap waiting for a move after it: its event
                self._reset(event.game, at, self.g)
                outs.append(GameEvent(at=at, type="GAME_START", details={"game_id": event.game.id}))
                outs.append(StateChanged(at=at))
            case SetPlayers():
                self.g.game = dataclasses.replace(self.g.game, white=event.white, black=event.black)
                outs.append(StateChanged(at=at))
            case Acknowledge():
                self.findings.set_status(outs, event.irregularity_id, Status.ACKNOWLEDGED, None)
            case Resolve():
                before = self.dismissals.before()
                if event.accept:
                    self.findings.upheld(event.irregularity_id)
                self.findings.arbiter = event.irregularity_id  # the ruling written on it now is the arbiter's
                self.findings.alone = event.irregularity_id if event.alone else None
                try:
                    closed = self.restoration.on_resolve(outs, event, at)
                finally:
                    self.findings.arbiter = None
                    self.findings.alone = None
                self.findings.on_ruling(outs, event.irregularity_id, accept=event.accept, at=at, closed=closed)
                if event.alone:
                    self.findings.left_open(outs, event.irregularity_id)
                self.dismissals.ruled(event, before)
            case Reopen():
                self.dismissals.reopen(outs, event, at)
            case Reinstate():
                self.restoration.on_reinstate(outs, event.ply, at)
            case SetClock():
                self.clock_readings.on_set_clock(outs, event, at)
            case SetResult():
                if event.result != "*":
                    # an illegal move that ended the game is no move of it; its finding closes with the result
                    self.correction.game_ended(outs, event.result, event.termination, at)
                self.g.result = event.result
                self.g.termination = event.termination
                if event.result != "*":
                    self.g.phase.fire(PhaseTrigger.RESULT_SET)
                    self.g.game_end_at = at
                    self.clock_readings.game_over(at)
                outs.append(GameEvent(at=at, type="ARBITER_ACTION", code=None,
                                      details={"result": event.result, "termination": event.termination}))
                outs.append(StateChanged(at=at))
            case SetOrientation():
                self.orientation.set_orientation(outs, not event.white_at_a1, at, forced=True)
            case FillGap():
                self.downtime.fill(outs, event.ply, event.moves, at)

    def _defer(self, event: Event, at: float) -> bool:
        """Board events after the latency window of a pending press wait until the press is judged."""
        press = self.g.press
        if press is not None and press.fast_record is None and at > press.first_at + self.rules.timing.t_latency:
            self.g.buffer.append(event)
            return True
        return False
