"""The Engine: board and clock events in, moves and findings out (rules-spec §3–§4).

Theory of operation
-------------------
The engine is a pure state machine. :meth:`Engine.feed` takes one event of
:mod:`boardd.core.events` and returns the outputs of :mod:`boardd.core.outputs`; time only
comes from the events' ``at``. Timers (release inference ``T_settle``, the press
window ``T_latency``/``T_bounce``, a persisting impossible reading, the flag of the
engine's own clock model) are deadlines that fire when a later event arrives or when
the caller calls :meth:`Engine.advance` (the daemon sleeps until :meth:`next_deadline`).

* **Positions.** The *official* position is a ``chess.Board`` with the move stack of the
  record. The *physical* position is the sensor reading in the official frame
  (:class:`~boardd.core.recognizer.PhysicalBoard`; the board may be turned round, see
  *Orientation*). After every change, :class:`~boardd.core.recognizer.PositionIndex` classifies
  the difference (§3.2: NONE, LEGAL, PARTIAL, IN_HAND, ILLEGAL_1, TWO_MOVES, OPP_ONLY,
  UNRECOGNISED).
* **Made.** A ``LEGAL(m)`` state that stays ``T_settle`` without change is a *made* move
  (§3.4): it enters the record (``MoveMade``) and the opponent has the move. A made move
  changed by its player before the opponent starts is replaced (``MovesRetracted`` +
  ``MoveMade``) with ``RELEASED_MOVE_CHANGED`` and the law-based move as suggestion.
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
  player's next move (6.2.1.2) or by game end; no press-related codes are raised.
* **Orientation.** The first board dump (or, before the first move, the first move seen
  only in a turned frame) decides how the board stands: turned round (180°) is handled
  transparently (``GameEvent ORIENTATION_CHANGED``); a quarter turn is also
  ``SETUP_INCORRECT`` (7.2.2). ``SetOrientation`` forces the frame.
* **Board dumps** are applied as changes at one instant. A dump that is no move in
  progress is reconciled: up to three plies of missed updates are recovered by forward
  search, otherwise ``POSITION_DIVERGENCE``. Resolving it with ``accept`` reinstates the official position;
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
  rules-spec §5; severity, confidence and articles come from :mod:`boardd.core.laws` for the
  game's edition, penalties from ``laws.suggest_penalty`` (the illegal count goes up once
  per move). Bad input never raises: time going backwards, unknown markers, impossible
  readings and internal errors become ``SENSOR_FAULT`` findings.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import chess

from boardd.core import _lawshim as laws
from boardd.core.clock import ClockModel, TimeControl
from boardd.core.events import (
    Acknowledge,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Event,
    GameInfo,
    Link,
    LinkChanged,
    Marker,
    NewGame,
    Reinstate,
    Resolve,
    SetClock,
    SetOrientation,
    SetPlayers,
    SetResult,
    SquareChanged,
    content_symbol,
)
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Completion,
    Evidence,
    GameEvent,
    GameState,
    Irregularity,
    IrregularityRaised,
    IrregularityUpdated,
    LinkUpdate,
    MoveCompleted,
    MoveMade,
    MoveRecord,
    MovesRetracted,
    Output,
    Severity,
    StateChanged,
    Status,
    Suggestion,
)
from boardd.core.recognizer import Diff, DiffClass, PhysicalBoard, PositionIndex, describe_change
from boardd.core.settings import Regime, RulesConfig

__all__ = ["Engine"]

_LOGGER = logging.getLogger(__name__)

_STANDARD_FEN = chess.STARTING_FEN
_CENTRE_BB = chess.BB_D4 | chess.BB_E4 | chess.BB_D5 | chess.BB_E5
_TAKEBACK_DEPTH = 8
_JUMP_DEPTH = 3
#: "Time went backwards" is reported at most once per this many seconds (the rest is counted and logged).
_BACKWARDS_REPORT_S = 60.0
#: A board dump changing at most this many squares is treated as ordinary changes (one instant).
_SNAPSHOT_INCREMENTAL = 4


class _Mode(enum.Enum):
    NORMAL = "normal"
    AWAIT_RESTORE = "await_restore"
    GAME_OVER = "game_over"


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Any, ...] | None:
    """The slot descriptors' setters of a frozen slotted dataclass, if its fields are exactly *names*."""
    fields = tuple(f.name for f in dataclasses.fields(cls))
    slots = [cls.__dict__.get(name) for name in names]
    if fields != names or not all(isinstance(slot, types.MemberDescriptorType) for slot in slots):
        return None
    return tuple(slot.__set__ for slot in slots)  # type: ignore[union-attr]


_CLOCK_STATE_SET = _slot_setters(ClockState, ("white", "black", "running", "flag_white", "flag_black", "model"))
_CLOCK_UPDATE_SET = _slot_setters(ClockUpdate, ("at", "clock"))


def _clock_update(at: float, white: float | None, black: float | None, old: ClockState) -> ClockUpdate:
    """``ClockUpdate(at, ClockState(white, black, <the rest of old>))`` for the per-second clock path.

    A frozen dataclass's ``__init__`` sets every field through ``object.__setattr__``, which is
    most of the cost of a clock reading (measured 1.7 µs for ``ClockState`` vs 0.45 µs through
    the slot descriptors). The objects are the same (equality, hash, repr); if the dataclasses
    ever get other fields, the normal constructors are used.
    """
    if _CLOCK_STATE_SET is None or _CLOCK_UPDATE_SET is None:
        state = ClockState(white=white, black=black, running=old.running, flag_white=old.flag_white,
                           flag_black=old.flag_black, model=old.model)
        return ClockUpdate(at=at, clock=state)
    set_white, set_black, set_running, set_fw, set_fb, set_model = _CLOCK_STATE_SET
    state = object.__new__(ClockState)
    set_white(state, white)
    set_black(state, black)
    set_running(state, old.running)
    set_fw(state, old.flag_white)
    set_fb(state, old.flag_black)
    set_model(state, old.model)
    set_at, set_clock = _CLOCK_UPDATE_SET
    update = object.__new__(ClockUpdate)
    set_at(update, at)
    set_clock(update, state)
    return update


#: Arbiter commands that change the retained state (players, clock times, orientation) even without a finding.
_STATE_COMMANDS = (SetClock, SetPlayers, SetOrientation)


def _republish_state(outs: list[Output], at: float, always: bool) -> None:
    """Append one ``StateChanged`` to a batch that changes the state but has none yet.

    The retained ``state`` carries the open irregularities in full (ids, status, suggestion), so a
    batch that raises or updates a finding changes it; so do the commands of :data:`_STATE_COMMANDS`.
    One per batch is enough: the contract publisher renders the state once per batch.
    """
    changed = always
    for out in outs:
        kind = type(out)
        if kind is StateChanged:
            return
        if kind is IrregularityRaised or kind is IrregularityUpdated:
            changed = True
    if changed:
        outs.append(StateChanged(at=at))


def _side_letter(color: chess.Color) -> str:
    return "W" if color == chess.WHITE else "B"


def _piece_text(piece: chess.Piece) -> str:
    return ("w" if piece.color == chess.WHITE else "b") + piece.symbol().upper()


def _content_text(content: Content) -> str:
    if isinstance(content, chess.Piece):
        return _piece_text(content)
    return content_symbol(content)


@dataclass(slots=True)
class _Candidate:
    """A LEGAL(m) state waiting for T_settle (release inference)."""

    move: chess.Move
    at: float
    deadline: float
    replace: bool = False  # post-made replacement of the last mover's move (R07)


@dataclass(slots=True)
class _Press:
    """A lever transition group waiting to be judged."""

    first_at: float
    last_at: float
    lever_before: chess.Color | None
    lever_after: chess.Color | None
    transitions: int
    evidence: list[Evidence] = field(default_factory=list)
    pre_clock: ClockState | None = None
    #: completed at the first transition (fast path): the record before completion and the previous press time
    fast_record: MoveRecord | None = None
    fast_prev_press_at: float | None = None
    #: made while the board link was down: recorded for the reconciliation, never judged
    blind: bool = False

    def due(self, timing_latency: float, timing_bounce: float) -> float:
        if self.fast_record is not None:
            return self.last_at + timing_bounce  # only the bounce is still open
        return max(self.first_at + timing_latency, self.last_at + timing_bounce)


@dataclass(frozen=True, slots=True)
class _BlindPress:
    """A press seen while the board link was down: who pressed, when, and what the clock showed then."""

    side: chess.Color
    at: float
    clock: ClockState


@dataclass(slots=True)
class _Window:
    """An open claim window ("otherwise" regime, R22) of an illegal-move-class finding."""

    irregularity_id: str
    offender: chess.Color
    claimed: bool = False


class Engine:
    """The sans-I/O recogniser and rules engine (docs/architecture.md).

    Args:
        rules: how to judge (timing, regime, clock side, ...).
        game: the game (players, time control, edition, start position); ``None`` = defaults.
    """

    def __init__(self, rules: RulesConfig = RulesConfig(), game: GameInfo | None = None) -> None:  # noqa: B008
        self.rules = rules
        self._last_t: float | None = None
        self._backwards = 0
        self._backwards_reported: float | None = None
        self._irr_counter = 0
        #: the board sends field updates (DGT): its snapshots are dumps, not scans (kept across games)
        self._field_updates = False
        self._reset(game or GameInfo(), at=None)

    # ------------------------------------------------------------------ setup

    def _reset(self, game: GameInfo, at: float | None) -> None:
        self.game = game
        self.edition = game.edition
        if self.rules.category is not None:
            self.category = self.rules.category.value
        else:
            self.category = laws.category_of(game.time_control, game.edition)
        self.regime = Regime.COMPETITION.value if self.category == "standard" else self.rules.regime.value
        self._increment = laws.increment_of(game.time_control)
        self._tc: TimeControl | None = None
        try:
            tc = TimeControl.parse(game.time_control)
            self._tc = tc if tc.is_timed else None
        except Exception:  # an unparsable control: no time keeping, no period checks
            _LOGGER.warning("time control %r not understood; no time keeping", game.time_control)
        self._model: ClockModel | None = ClockModel(self._tc) if self._tc is not None else None
        self._model_started = False
        self._model_flag_done = False
        fen = game.start_fen or _STANDARD_FEN
        self._start_fen = fen
        self._board = chess.Board(fen, chess960=game.chess960)
        self._index = PositionIndex(self._board)
        self._records: list[MoveRecord] = []
        start = self._board
        self._base_moves = {chess.WHITE: start.fullmove_number - (0 if start.turn == chess.BLACK else 1),
                            chess.BLACK: start.fullmove_number - 1}
        self._keys: list[tuple[int, ...]] = [self._index.key]
        self._phys = PhysicalBoard(self._board)
        self._raw: list[Content] = [self._board.piece_at(sq) for sq in chess.SQUARES]
        self._markers: dict[int, Marker] = {}
        self._raw_touched: set[int] = set()
        self._resync = False
        #: the board link is down (from its LinkChanged until the next board event): presses are not judged
        self._board_down = False
        self._blind_presses: list[_BlindPress] = []
        self._blind_count = 0  # presses seen during the outage (reported when the board is back)
        self._blind_matched = 0  # of which completed a recovered move
        #: the POSITION_DIVERGENCE of the dump after an outage: presses are not judged until it is resolved
        self._outage_divergence: str | None = None
        self._setting_up = False
        self._pending_fix: tuple[int, tuple[int, ...], chess.Move, chess.Board, str] | None = None
        self._impossible_since: tuple[float, str] | None = None
        self._impossible_raised = False
        self._divergence_key: tuple[int, ...] | None = None
        self._adopted_open: int | None = None  # ply of a position adopted with the side to move unknown
        self._rot = 0  # quarter turns from the board's own frame to the official frame
        self._orientation_known = False
        self._seen_board = False
        self._irr: dict[str, Irregularity] = {}
        self._illegal = {chess.WHITE: 0, chess.BLACK: 0}
        self._mode = _Mode.NORMAL
        self._result = "*"
        self._termination: str | None = None
        self._restore_key: tuple[int, ...] | None = None
        self._restore_check: float | None = None
        # segment
        self._seg_start = at if at is not None else 0.0
        self._seg_lifts: list[tuple[float, int, chess.Piece]] = []
        self._prev_lifts: list[tuple[float, int, chess.Piece]] = []
        self._extra_lifts: list[tuple[float, int, chess.Piece]] = []
        self._seg_places: list[tuple[float, int, chess.Piece]] = []
        self._seg_evidence: list[Evidence] = []
        self._burst: dict[int, tuple[float, Content]] = {}
        self._recent: list[tuple[float, int]] = []
        self._last_board_t = -1e18
        self._match_t = 0.0
        self._cand: _Candidate | None = None
        self._uncompleted: dict[chess.Color, int] = {}
        self._opp_started = False
        self._oot_raised = False
        self._after_game_raised = False
        self._pressed_no_move: chess.Color | None = None
        self._promo_seen = False
        self._illegal_settled: tuple[float, chess.Move] | None = None
        # §3.7: the replacement move after a reinstatement (irregularity id, ply, touched square)
        self._replacement: tuple[str, int, int] | None = None
        self._replacement_due: tuple[str, int, int] | None = None
        self._gesture_sent: str | None = None
        self._gesture_hold = False  # a kings-in-the-centre signal was given and a king is still on the centre
        self._limit_pending = False
        self._limit_mate: bool | None = None  # can-mate answer behind the last penalty (None: unproven)
        self._claim_windows: list[_Window] = []
        self._pending_position: tuple[str, int] | None = None
        self._draw_avail = {chess.WHITE: False, chess.BLACK: False}
        self._key_counts: dict[tuple[int, ...], int] = {}
        self._repeated: list[tuple[int, ...]] = []
        self._parked = False
        self._two_hands: dict[chess.Color, Irregularity | None] = {}
        self._mask: set[int] = set()
        self._last_diff = Diff(DiffClass.NONE)
        self._opp_early_raised = False
        self._castle_king: tuple[float, chess.Move] | None = None
        self._castle_released: tuple[float, chess.Move, str] | None = None
        self._illegal_state: tuple[float, chess.Move] | None = None
        # clock (the side may be corrected at the game's first clock start, see _check_clock_side)
        self._white_left = self.rules.white_clock_side is ClockSide.LEFT
        self._shown: tuple[object, ...] | None = None
        self._prev_reading: ClockReading | None = None
        self._held_reading: ClockReading | None = None  # a suspect reading waiting for confirmation
        self._clock_glitches = 0
        self._pre_clock: ClockState | None = None
        self._lever: chess.Color | None = None
        self._running: chess.Color | None = None
        self._clock_seen = False
        #: the clock link is down: moves complete as without a clock, the clock is unknown (no press codes)
        self._clock_down = False
        self._clock_resync = False  # the first reading after the link came back sets the lever (no press)
        self._clockless: set[int] = set()  # plies made (or left uncompleted) while the clock link was down
        self._clock_started = False
        self._paused = False
        self._press: _Press | None = None
        self._buffer: list[Event] = []
        self._flag = {chess.WHITE: False, chess.BLACK: False}
        self._flag_t: dict[chess.Color, float] = {}
        self._clock = ClockState()
        self._last_press_at: float | None = None
        self._game_end_at: float | None = None

    # ------------------------------------------------------------------ public API

    def feed(self, event: Event) -> list[Output]:
        """Process one event. Timers due before ``event.at`` fire first (as ``advance(event.at)``).

        An event whose time goes backwards is processed at the last known time and
        reported (``SENSOR_FAULT``, detail "time went backwards"). Nothing raises.
        """
        outs: list[Output] = []
        at = event.at
        last = self._last_t
        if (type(event) is ClockReading and last is not None and at >= last and self._press is None
                and self._cand is None and not self._model_started and self._impossible_since is None
                and self._restore_check is None):
            # fast path of the most frequent event: no timer can be due
            self._last_t = at
            try:
                self._on_clock(outs, event, at)
            except Exception:  # never crash on input
                _LOGGER.exception("engine failed on %r", event)
                self._raise(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event="ClockReading")],
                            text="internal error while processing this event (logged)")
            if outs and (len(outs) > 1 or type(outs[0]) is not ClockUpdate):
                _republish_state(outs, at, False)
            return outs
        if self._last_t is not None and at < self._last_t:
            self._backwards += 1
            if self._backwards_reported is None or self._last_t - self._backwards_reported >= _BACKWARDS_REPORT_S:
                self._backwards_reported = self._last_t
                self._raise(outs, "SENSOR_FAULT", None, self._last_t,
                            [Evidence(at=at, event="time went backwards")],
                            text=f"event time {at:.3f} s before the last one ({self._last_t:.3f} s): processed at "
                                 f"the last known time ({self._backwards} such event(s) so far)")
            else:
                _LOGGER.debug("event time went backwards (%d so far)", self._backwards)
            at = self._last_t
        if (self._press is not None or self._cand is not None or self._model_started
                or self._impossible_since is not None or self._restore_check is not None):
            self._fire(outs, at, inclusive=False)
        self._last_t = at
        try:
            if type(event) is ClockReading:
                self._on_clock(outs, event, at)
            else:
                self._dispatch(outs, event, at)
        except Exception:  # never crash on input: log, count, keep going
            _LOGGER.exception("engine failed on %r", event)
            self._raise(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event=type(event).__name__)],
                        text="internal error while processing this event (logged)")
        _republish_state(outs, at, type(event) in _STATE_COMMANDS)
        return outs

    def advance(self, now: float) -> list[Output]:
        """Fire every timer due at or before *now*."""
        outs: list[Output] = []
        if self._last_t is not None and now < self._last_t:
            return outs
        self._fire(outs, now, inclusive=True)
        # the daemon's own clock may run a little ahead of the event stamps of queued events: advancing does
        # not move the event time line, so such events are not "time going backwards"
        if outs:
            _republish_state(outs, now, False)
        return outs

    def next_deadline(self) -> float | None:
        """When the next timer is due, or None."""
        due = [d for d in (self._cand.deadline if self._cand else None,
                           self._press.due(self.rules.timing.t_latency, self.rules.timing.t_bounce)
                           if self._press else None, self._model_flag_due(), self._impossible_due(),
                           self._restore_check if self._mode is _Mode.AWAIT_RESTORE else None,
                           self._held_due())
               if d is not None]
        return min(due) if due else None

    @property
    def state(self) -> GameState:
        """The whole truth about the current game."""
        g = self.game
        open_details = tuple(irr for irr in self._irr.values() if irr.status is not Status.RESOLVED)
        open_ids = tuple(irr.id for irr in open_details)
        return GameState(
            game_id=g.id, white=g.white, black=g.black, event=g.event, site=g.site, date=g.date,
            round=g.round, board_no=g.board_no, time_control=g.time_control, edition=g.edition,
            start_fen=self._start_fen, chess960=g.chess960, fen=self._board.fen(),
            moves=tuple(self._records), turn=self._board.turn, clock=self._clock, result=self._result,
            termination=self._termination, open_irregularities=open_ids, open_irregularity_details=open_details,
            illegal_moves_white=self._illegal[chess.WHITE], illegal_moves_black=self._illegal[chess.BLACK],
            category=self.category, regime=self.regime)

    @property
    def irregularities(self) -> tuple[Irregularity, ...]:
        """Every finding of the current game, in the order raised (latest version of each)."""
        return tuple(self._irr.values())

    @property
    def physical_fen(self) -> str:
        """The physical placement (board FEN, official frame)."""
        return self._phys.base_board().board_fen()

    def pgn(self) -> str:
        """The game as PGN (delegates to :func:`boardd.core.record.game_pgn` when available)."""
        try:
            from boardd.core import record  # noqa: PLC0415 - optional sibling module
            game_pgn = getattr(record, "game_pgn", None)
            if game_pgn is not None:
                return str(game_pgn(self.state))
        except ImportError:
            pass
        return self._minimal_pgn()

    def _minimal_pgn(self) -> str:
        g = self.game
        tags = [("Event", g.event), ("Site", g.site), ("Date", g.date), ("Round", g.round),
                ("White", g.white), ("Black", g.black), ("Result", self._result), ("TimeControl", g.time_control)]
        if self._start_fen != _STANDARD_FEN:
            tags += [("SetUp", "1"), ("FEN", self._start_fen)]
        lines = [f'[{k} "{v}"]' for k, v in tags]
        board = chess.Board(self._start_fen, chess960=g.chess960)
        words: list[str] = []
        for rec in self._records:
            if board.turn == chess.WHITE:
                words.append(f"{board.fullmove_number}.")
            elif not words:
                words.append(f"{board.fullmove_number}...")
            words.append(rec.san if rec.legal else "{" + rec.san + "}")
            board = chess.Board(rec.fen_after, chess960=g.chess960)
        words.append(self._result)
        return "\n".join(lines) + "\n\n" + " ".join(words) + "\n"

    # ------------------------------------------------------------------ timers

    def _fire(self, outs: list[Output], now: float, *, inclusive: bool) -> None:
        if (self._press is None and self._cand is None and not self._model_started and self._impossible_since is None
                and self._restore_check is None and self._held_reading is None):
            return
        t = self.rules.timing
        for _ in range(10000):
            options: list[tuple[float, int]] = []
            if self._press is not None:
                options.append((self._press.due(t.t_latency, t.t_bounce), 0))
            if self._cand is not None:
                options.append((self._cand.deadline, 1))
            flag_due = self._model_flag_due()
            if flag_due is not None:
                options.append((flag_due, 2))
            bad_due = self._impossible_due()
            if bad_due is not None:
                options.append((bad_due, 3))
            if self._restore_check is not None and self._mode is _Mode.AWAIT_RESTORE:
                options.append((self._restore_check, 4))
            held_due = self._held_due()
            if held_due is not None:
                options.append((held_due, 5))
            if not options:
                return
            due, kind = min(options)
            if due > now or (due == now and not inclusive):
                return
            if kind == 5:
                # nothing contradicted the suspect reading in time: the clock meant it (a clock that stops
                # sending after it, e.g. at a flag fall without the flag bit, must not leave it pending)
                held = self._held_reading
                assert held is not None
                self._held_reading = None
                self._on_clock(outs, held, held.at, confirmed=True)
            elif kind == 0:
                self._judge_press(outs, due)
            elif kind == 1:
                self._settle(outs, due)
            elif kind == 4:
                self._restore_check = None
                if self._phys.key() != self._divergence_key:
                    self._divergence_key = self._phys.key()
                    self._raise(outs, "POSITION_DIVERGENCE", None, due, [Evidence(at=due, event="board")],
                                text="the board does not show the reinstated position: "
                                     f"{describe_change(self._board, self._phys.squares)} (from the reinstated "
                                     "position); recognition resumes when it does",
                                reinstate_ply=len(self._records))
            elif kind == 3:
                assert self._impossible_since is not None
                self._impossible_raised = True
                self._raise(outs, "SENSOR_FAULT", None, due, [Evidence(at=self._impossible_since[0], event="reading")],
                            text=f"impossible reading: {self._impossible_since[1]}; no move is inferred from it until "
                                 "the readings make sense (check the board and the pieces)")
            else:
                self._model_flag_done = True
                running = self._model.running if self._model is not None else None
                if running is not None:
                    self._model_clock(due, running)
                    self._flag[running] = True
                    self._on_flag(outs, running == chess.WHITE, running == chess.BLACK, False, due)

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, outs: list[Output], event: Event, at: float) -> None:
        match event:
            case ClockReading():
                self._on_clock(outs, event, at)
            case SquareChanged():
                self._field_updates = True
                if self._defer(event, at):
                    return
                if self._board_down:
                    self._board_back(outs, at)  # field updates again without a dump: nothing to reconcile with
                self._on_board(outs, [(event.square, event.content)], at, snapshot=False)
            case BoardSnapshot():
                if self._defer(event, at):
                    return
                self._on_snapshot(outs, event, at)
            case LinkChanged():
                self._on_link(outs, event, at)
            case NewGame():
                self._reset(event.game, at)
                outs.append(GameEvent(at=at, type="GAME_START", details={"game_id": event.game.id}))
                outs.append(StateChanged(at=at))
            case SetPlayers():
                self.game = dataclasses.replace(self.game, white=event.white, black=event.black)
                outs.append(StateChanged(at=at))
            case Acknowledge():
                self._set_status(outs, event.irregularity_id, Status.ACKNOWLEDGED, None)
            case Resolve():
                self._on_resolve(outs, event, at)
            case Reinstate():
                self._on_reinstate(outs, event.ply, at)
            case SetClock():
                self._on_set_clock(outs, event, at)
            case SetResult():
                self._result = event.result
                self._termination = event.termination
                if event.result != "*":
                    self._mode = _Mode.GAME_OVER
                    self._game_end_at = at
                outs.append(GameEvent(at=at, type="ARBITER_ACTION", code=None,
                                      details={"result": event.result, "termination": event.termination}))
                outs.append(StateChanged(at=at))
            case SetOrientation():
                self._set_orientation(outs, not event.white_at_a1, at, forced=True)

    def _defer(self, event: Event, at: float) -> bool:
        """Board events after the latency window of a pending press wait until the press is judged."""
        press = self._press
        if press is not None and press.fast_record is None and at > press.first_at + self.rules.timing.t_latency:
            self._buffer.append(event)
            return True
        return False

    # ------------------------------------------------------------------ findings

    def _new_id(self) -> str:
        self._irr_counter += 1
        return f"{len(self._records)}-{self._irr_counter}"

    def _raise(self, outs: list[Output], code: str, side: chess.Color | None, at: float,
               evidence: Iterable[Evidence] = (), *, subtype: str | None = None, text: str = "",
               move: str | None = None, reinstate_ply: int | None = None, constraints: tuple[str, ...] = (),
               verify: bool = False, result: str | None = None, add_s: int | None = None,
               remove_s: float | None = None, claim_deadline: float | None = None,
               first_at: float | None = None, penalty: laws.Penalty | None = None) -> Irregularity:
        full = f"{code}/{subtype}" if subtype else code
        if penalty is not None:
            add_s = penalty.add_to_opponent_s
            remove_s = penalty.remove_from_offender_s
            result = penalty.result
            text = f"{text}: {penalty.text}" if text else penalty.text
            if reinstate_ply is None and not penalty.stands:
                reinstate_ply = len(self._records)
        facts = laws.code_facts(full, self.edition)
        ev = tuple(evidence)
        irr = Irregularity(
            id=self._new_id(), code=code, severity=facts.severity, confidence=facts.confidence, side=side,
            ply=len(self._records), edition=self.edition, articles=facts.articles, t_raised=at,
            t_first_evidence=first_at if first_at is not None else (ev[0].at if ev else at), evidence=ev,
            subtype=subtype, suggestion=Suggestion(text=text, move=move, add_to_opponent_s=add_s,
                                                  remove_from_offender_s=remove_s, result=result,
                                                  reinstate_ply=reinstate_ply, constraints=constraints,
                                                  verify=verify),
            claim_deadline=claim_deadline, category=self.category, regime=self.regime)
        self._irr[irr.id] = irr
        outs.append(IrregularityRaised(irregularity=irr))
        level = logging.INFO if facts.severity is Severity.INFO else logging.WARNING
        _LOGGER.log(level, "%s %s side=%s ply=%d at=%.3f", irr.id, full, side, irr.ply, at)
        return irr

    def _update(self, outs: list[Output], irr: Irregularity) -> None:
        self._irr[irr.id] = irr
        outs.append(IrregularityUpdated(irregularity=irr))

    def _set_status(self, outs: list[Output], irr_id: str, status: Status, ruling: str | None) -> None:
        irr = self._irr.get(irr_id)
        if irr is None:
            _LOGGER.warning("arbiter command for unknown irregularity %s", irr_id)
            return
        self._update(outs, dataclasses.replace(irr, status=status, ruling=ruling if ruling else irr.ruling))

    # ------------------------------------------------------------------ board input

    def _map(self, square: int) -> int:
        return _ROTATIONS[self._rot][square]

    def _on_snapshot(self, outs: list[Output], snap: BoardSnapshot, at: float) -> None:
        first = not self._seen_board
        blind = self._board_down
        if blind:
            self._resync = True  # the board is back (link event or not): its dump reconciles the outage
            if self._press is not None and self._press.blind:
                self._judge_press(outs, at)  # made during the outage: recorded for the reconciliation below
        if first and not self._orientation_known and len(self._records) == 0:
            self._detect_orientation_snapshot(outs, snap.squares, at)
        changes = [(sq, c) for sq, c in enumerate(snap.squares) if self._raw[sq] != c]
        if first:
            self._check_setup(outs, snap.squares, at)
        if changes:
            # boards that only send full frames (Millennium, Chessnut, Certabo) report every scan as a snapshot:
            # a few changed squares are ordinary changes; the first dump, one after a link outage, or a large
            # jump is a reconciliation (missed updates, divergence)
            reconcile = first or self._resync or len(changes) > _SNAPSHOT_INCREMENTAL
            if not reconcile and not self._field_updates and self._scan_jump(snap.squares):
                reconcile = True  # a lost scan: the next one is two or three plies ahead (missed updates)
            if reconcile and not self._records and \
                    sum(1 for c in snap.squares if isinstance(c, chess.Piece)) < self._board.occupied.bit_count():
                self._setting_up = True  # the pieces are being set up: quiet until the start position is there
            self._on_board(outs, changes, at, snapshot=reconcile)
        self._resync = False
        self._seen_board = True
        if blind:
            cand = self._cand
            seen = next((p for p in self._blind_presses if p.side == self._board.turn), None)
            if cand is not None and not cand.replace and seen is not None:
                # one ply missed: the dump shows it as a move in progress; the press seen during the outage
                # completed it
                self._cand = None
                self._blind_presses.remove(seen)
                self._blind_matched += 1
                self._make(outs, cand.move, min(cand.at, seen.at), completed=True, completion=Completion.PRESS,
                           press_at=seen.at, recovered=True, clock=seen.clock)
            self._board_back(outs, at)

    def _board_back(self, outs: list[Output], at: float) -> None:
        """The board reports again after an outage: the presses seen meanwhile are settled.

        The reconciling dump (:meth:`_forward_jump`) has given the matching ones to the recovered moves; the
        rest are dropped. None was judged: what the board could not see accuses no one. One ``GameEvent
        PRESSES_NOT_JUDGED`` says how many there were and how many completed a recovered move.
        """
        self._board_down = False
        presses = self._blind_count
        if presses:
            outs.append(GameEvent(at=at, type="PRESSES_NOT_JUDGED", code=None,
                                  details={"presses": presses, "matched": self._blind_matched,
                                           "reason": "board link down"}))
            _LOGGER.info("board back: %d press(es) during the outage not judged, %d matched to recovered moves",
                         presses, self._blind_matched)
        self._blind_presses = []
        self._blind_count = 0
        self._blind_matched = 0

    def _scan_jump(self, squares: tuple[Content, ...]) -> bool:
        """Does a few-square scan of a snapshot-only board show two or three plies played at once?

        Boards that only send full frames (Millennium, Chessnut, Certabo) lose a frame now and then
        (Bluetooth drop, USB hiccup): the next one is then ahead by more than one ply. It is a jump only
        when it is neither an ordinary intermediate state (no change, one legal move, a move in progress,
        one illegal move) nor, while the last move may still be changed, a replacement of it (R07), and a
        sequence of 2..``_JUMP_DEPTH`` legal moves leads from the official position to it.
        """
        if self._mode is not _Mode.NORMAL or self._setting_up or self._mask or self._pending_fix is not None \
                or self._press is not None:
            return False
        mapped = chess.BaseBoard.empty()
        for raw_sq, content in enumerate(squares):
            if isinstance(content, Marker):
                return False
            if content is not None:
                mapped.set_piece_at(self._map(raw_sq), content)
        view = PhysicalBoard(mapped)
        ordinary = (DiffClass.NONE, DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND, DiffClass.ILLEGAL_1)
        if self._index.classify(view).kind in ordinary:
            return False
        if self._post_made_open() and self._base_index().classify(view).kind in ordinary:
            return False
        return _search(self._board, view.key(), _JUMP_DEPTH, self._index.changed_squares(view)) is not None

    def _on_board(self, outs: list[Output], changes: list[tuple[int, Content]], at: float, *,
                  snapshot: bool) -> None:
        timing = self.rules.timing
        if not self._model_started and self._model is not None and self._keeps_time() and not snapshot:
            self._model.start(at, self._board.turn)  # no clock: White's time starts with the first activity
            self._model_started = True
        changed_any = False
        batch: list[tuple[int, Content, Content]] = []
        for raw_sq, content in changes:
            self._raw_touched.add(raw_sq)
            if self._raw[raw_sq] == content:
                continue
            self._raw[raw_sq] = content
            sq = self._map(raw_sq)
            if isinstance(content, Marker):
                self._on_marker(outs, sq, content, at)
                continue
            if sq in self._markers:
                del self._markers[sq]
            old = self._phys.set(sq, content)
            if old == content:
                continue
            changed_any = True
            batch.append((sq, old, content))
            text = (f"L {chess.square_name(sq)}" if content is None
                    else f"P {chess.square_name(sq)} {_content_text(content)}" if old is None
                    else f"X {chess.square_name(sq)} {_content_text(old)}→{_content_text(content)}")
            self._seg_evidence.append(Evidence(at=at, event=text))
            if len(self._seg_evidence) > 200:
                del self._seg_evidence[:100]
            burst = self._burst.get(sq)
            if burst is None or at - burst[0] > timing.t_flicker:
                burst = (at, old)
                self._burst[sq] = burst
            self._recent.append((at, sq))
            if len(self._recent) > 64:
                del self._recent[:32]
            if (not snapshot and burst[1] == content and at - burst[0] <= timing.t_flicker
                    and not any(t >= burst[0] - timing.t_flicker and s != sq for t, s in self._recent)):
                # the square reverted within T_flicker with nothing else nearby: a sensor glitch
                self._burst.pop(sq, None)
                self._raise(outs, "SENSOR_FLICKER", None, at,
                            [Evidence(at=burst[0], event=f"{chess.square_name(sq)} glitch"),
                             Evidence(at=at, event=text)],
                            text="sensor glitch ignored (not a touch, not a displacement)")
                self._seg_lifts = [x for x in self._seg_lifts if not (x[1] == sq and x[0] >= burst[0])]
                self._seg_places = [x for x in self._seg_places if not (x[1] == sq and x[0] >= burst[0])]
                self._mask.discard(sq)
                batch.pop()
                self._last_board_t = at
                continue
            if content is None and isinstance(old, chess.Piece):
                self._seg_lifts.append((at, sq, old))
                if not snapshot and not self._setting_up:
                    self._check_two_hands_lift(outs, at, sq, old)
            elif isinstance(content, chess.Piece):
                if not snapshot and not self._setting_up:
                    self._check_two_hands_castling(outs, at, content)
                    self._check_two_hands_places(outs, at, sq, content)
                self._seg_places.append((at, sq, content))
            self._last_board_t = at
        if self._markers:
            self._check_result_gesture(outs, at)
        if not changed_any:
            return
        if not self._orientation_known and not self._records:
            self._detect_orientation_changes(outs, at)
        self._check_result_gesture(outs, at)
        if self._gesture_hold:
            if self._phys.key()[7] & _CENTRE_BB:
                # a king still stands on the centre after the result signal: nothing is inferred from it
                self._cand = None
                self._last_diff = Diff(DiffClass.NONE)
                return
            # the kings have left the centre: recognition resumes from the board as it is (a fresh segment,
            # the gesture's lifts and placements are nobody's move)
            self._gesture_hold = False
            self._seg_lifts = []
            self._seg_places = []
            self._seg_evidence = []
            self._mask.clear()
            batch = []
        self._evaluate(outs, at, snapshot=snapshot, batch=batch)
        self._check_impossible(at)

    def _apply_fix(self, outs: list[Output], at: float) -> bool:
        """The board now shows the law-based outcome of the last illegal completion: record that move instead."""
        assert self._pending_fix is not None
        ply, key, move, pre, irr_id = self._pending_fix
        if ply != len(self._records):
            self._pending_fix = None  # play went on: the physical record stands
            return False
        if self._phys.key() != key:
            return False
        self._pending_fix = None
        old = self._records[-1]
        del self._records[-1]
        del self._keys[-1]
        outs.append(MovesRetracted(at=at, to_ply=ply - 1, reason=f"board put right after {irr_id}"))
        self._board = self._replay_board(ply - 1) or pre.copy()
        self._rebuild_index()
        side = self._board.turn
        san = self._board.san(move)
        self._board.push(move)
        rec = MoveRecord(ply=ply, uci=move.uci(), san=san, side=side, fen_after=_fen(self._board),
                         made_at=old.made_at, completed_at=old.completed_at, completion=old.completion,
                         clock_white=old.clock_white, clock_black=old.clock_black, emt=old.emt)
        self._records.append(rec)
        self._rebuild_index()
        self._keys.append(self._index.key)
        self._mask.clear()
        self._oot_raised = False
        outs.append(MoveMade(move=rec))
        outs.append(MoveCompleted(move=rec))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"fixed": irr_id, "move": san}))
        outs.append(StateChanged(at=at))
        return True

    def _fix_in_progress(self) -> bool:
        """Changes on the squares where the board differs from a pending fix are the fix, not out-of-turn play."""
        pending = self._pending_fix
        if pending is None or pending[0] != len(self._records):
            return False
        after = pending[3].copy(stack=False)
        after.push(pending[2])
        official = self._index
        fix_squares = {sq for sq in chess.SQUARES if after.piece_at(sq) != official.piece_at(sq)}
        return all(sq in fix_squares for sq in self._mask)

    def _check_impossible(self, at: float) -> None:
        """Readings no chess position can have (two kings of a colour, 17 pieces, 9 pawns)."""
        key = self._phys.key()
        problem = None
        for ci, name in ((0, "White"), (1, "Black")):
            side = key[ci]
            if (side & key[7]).bit_count() > 1:
                problem = f"{name} has {(side & key[7]).bit_count()} kings"
            elif side.bit_count() > 16:
                problem = f"{name} has {side.bit_count()} pieces"
            elif (side & key[2]).bit_count() > 8:
                problem = f"{name} has {(side & key[2]).bit_count()} pawns"
        if problem is not None and self._last_diff.kind in (DiffClass.PARTIAL, DiffClass.LEGAL):
            problem = None  # e.g. the new piece put on the promotion square before the pawn is taken off (R06 P3)
        if problem is None:
            self._impossible_since = None
            self._impossible_raised = False
        elif self._impossible_since is None or self._impossible_since[1] != problem:
            self._impossible_since = (at, problem)  # a transient within one scan is normal: wait T_settle
            self._impossible_raised = False

    def _impossible_due(self) -> float | None:
        if self._impossible_since is None or self._impossible_raised:
            return None
        return self._impossible_since[0] + self.rules.timing.t_settle

    def _on_marker(self, outs: list[Output], sq: int, marker: Marker, at: float) -> None:
        self._markers[sq] = marker
        # inference on that square is suspended: the square keeps its official content
        self._phys.set(sq, self._index.piece_at(sq))
        if marker is Marker.UNKNOWN:
            self._raise(outs, "SENSOR_FAULT", None, at, [Evidence(at=at, event=f"? {chess.square_name(sq)}")],
                        text=f"unreadable piece on {chess.square_name(sq)}; inference suspended on that square")

    def _check_result_gesture(self, outs: list[Output], at: float) -> None:
        if not self.rules.result_gesture:
            return
        result: str | None = None
        how = ""
        markers = set(self._markers.values()) - {Marker.UNKNOWN} if self._markers else None
        if markers:
            if len(markers) == 1:
                result = {Marker.DRAW: "1/2-1/2", Marker.WHITE_WINS: "1-0", Marker.BLACK_WINS: "0-1"}[markers.pop()]
                how = "result piece"
        else:
            # bitboards of the placement key (0 white, 1 black, 7 kings): exactly one king of each colour,
            # both on the centre squares
            key = self._phys.key()
            kings = key[7]
            if kings & _CENTRE_BB and (kings & key[0]).bit_count() == 1 and (kings & key[1]).bit_count() == 1 \
                    and kings & _CENTRE_BB == kings:
                light = (kings & chess.BB_LIGHT_SQUARES).bit_count()
                result = "1-0" if light == 2 else "0-1" if light == 0 else "1/2-1/2"
                how = "kings on the centre squares"
        if result is None:
            self._gesture_sent = None
            return
        if self._gesture_sent == result:
            return
        self._gesture_sent = result
        if how == "kings on the centre squares":
            self._gesture_hold = True
            self._retract_gesture_moves(outs, at)
        outs.append(GameEvent(at=at, type="RESULT_SIGNAL", code=None,
                              details={"result": result, "gesture": how}))

    def _retract_gesture_moves(self, outs: list[Output], at: float) -> None:
        """The king move(s) onto the centre that form the gesture leave the record (lila#11783).

        Only the trailing made-not-completed king moves whose king still stands on its centre square
        are taken back (at most one per side); a move completed by a press stands. Findings raised about
        those moves only because they were taken for moves (the press not made) are withdrawn.
        """
        kings = self._phys.key()[7]
        ply = len(self._records)
        sides: set[chess.Color] = set()
        while ply > 0:
            rec = self._records[ply - 1]
            if rec.completed_at is not None or not rec.legal or rec.side in sides or len(rec.uci) != 4:
                break
            to_sq = chess.parse_square(rec.uci[2:4])
            after = chess.Board(rec.fen_after, chess960=self.game.chess960)
            if after.piece_type_at(to_sq) != chess.KING or not (chess.BB_SQUARES[to_sq] & _CENTRE_BB & kings):
                break
            sides.add(rec.side)
            ply -= 1
        if ply == len(self._records):
            return
        retracted = self._records[ply:]
        self._retract_to(outs, ply, at, "result gesture (kings on the centre squares), not a move")
        for irr in list(self._irr.values()):
            if irr.code in ("CLOCK_NOT_PRESSED", "MOVE_COMPLETED_WITHOUT_PRESS") and irr.ply >= ply \
                    and irr.status is not Status.RESOLVED and any(r.side == irr.side for r in retracted):
                self._update(outs, dataclasses.replace(
                    irr, status=Status.RESOLVED,
                    ruling="withdrawn: the king move was a result gesture, not a move"))

    # ------------------------------------------------------------------ orientation and set-up

    def _set_orientation(self, outs: list[Output], flipped: bool, at: float, *, forced: bool,
                         rot: int | None = None) -> None:
        self._orientation_known = True
        new_rot = rot if rot is not None else (2 if flipped else 0)
        if new_rot == self._rot:
            return
        self._rot = new_rot
        for raw_sq in range(64):
            if raw_sq not in self._raw_touched:
                # never read: assume the square holds what the official position says (in the new frame)
                self._raw[raw_sq] = self._index.piece_at(self._map(raw_sq))
        for raw_sq, content in enumerate(self._raw):
            if isinstance(content, Marker):
                continue
            self._phys.set(self._map(raw_sq), content)
        self._mask.clear()
        self._cand = None
        self._last_diff = Diff(DiffClass.NONE)
        outs.append(GameEvent(at=at, type="ORIENTATION_CHANGED", code=None,
                              details={"white_at_a1": new_rot == 0, "quarter_turns": new_rot, "forced": forced}))

    def _detect_orientation_snapshot(self, outs: list[Output], squares: tuple[Content, ...], at: float) -> None:
        expected = self._index
        occupied = sum(1 for c in squares if c is not None)
        if occupied < 4:
            return
        scores = [sum(1 for raw in chess.SQUARES if squares[raw] == expected.piece_at(table[raw]))
                  for table in _ROTATIONS]
        best = max(range(4), key=lambda k: (scores[k], k == self._rot))
        if scores[best] < 56 or best == self._rot:
            self._orientation_known = scores[self._rot] >= 56 or self._orientation_known
            return
        if best in (1, 3):
            self._raise(outs, "SETUP_INCORRECT", None, at, [Evidence(at=at, event="board dump")],
                        text="board turned a quarter round (white square not on the right, 2.1): the game goes on "
                             "but the position must be transferred to a correctly placed board (7.2.2); "
                             "recognition follows the turned board")
        self._set_orientation(outs, best == 2, at, forced=False, rot=best)

    def _detect_orientation_changes(self, outs: list[Output], at: float) -> None:
        """Before the first move: a first change that only makes sense on a turned board flips it."""
        diff = self._index.classify(self._phys)
        if diff.kind in (DiffClass.NONE, DiffClass.LEGAL, DiffClass.IN_HAND, DiffClass.PARTIAL):
            if diff.kind is DiffClass.LEGAL:
                self._orientation_known = True
            return
        turned = PhysicalBoard()
        for raw_sq, content in enumerate(self._raw):
            cell = content if raw_sq in self._raw_touched else self._index.piece_at(63 - raw_sq)
            if isinstance(cell, chess.Piece):
                turned.set(63 - raw_sq, cell)
        tdiff = self._index.classify(turned)
        if tdiff.kind is DiffClass.LEGAL:  # only a whole move decides: a lift alone could be an adjustment
            self._set_orientation(outs, True, at, forced=False)

    def _check_setup(self, outs: list[Output], squares: tuple[Content, ...], at: float) -> None:
        if self._records:
            return
        phys: list[Content] = [None] * 64
        for raw, content in enumerate(squares):
            phys[self._map(raw)] = content
        expected = self._board
        wrong = [sq for sq in chess.SQUARES if phys[sq] != expected.piece_at(sq)]
        if not wrong or len(wrong) > 16:
            return
        # only a set-up error if the same material is there (otherwise: pieces still being set up)
        def material(cells: Iterable[Content]) -> list[str]:
            return sorted(content_symbol(c) for c in cells if isinstance(c, chess.Piece))
        if material(phys) != material(expected.piece_at(sq) for sq in chess.SQUARES):
            return
        kinds: list[str] = []
        names = ", ".join(chess.square_name(sq) for sq in wrong)
        for color in (chess.WHITE, chess.BLACK):
            back = 0 if color == chess.WHITE else 7
            d, e = chess.square(3, back), chess.square(4, back)
            if (phys[d] == chess.Piece(chess.KING, color) and phys[e] == chess.Piece(chess.QUEEN, color)
                    and expected.piece_at(d) == chess.Piece(chess.QUEEN, color)):
                kinds.append("king and queen swapped")
        board = chess.Board(None, chess960=self._board.chess960)
        for sq in chess.SQUARES:
            c = phys[sq]
            if isinstance(c, chess.Piece):
                board.set_piece_at(sq, c)
        board.turn = expected.turn
        board.castling_rights = expected.castling_rights
        board.castling_rights = board.clean_castling_rights()
        board.ep_square = None
        self._raise(outs, "SETUP_INCORRECT", None, at, [Evidence(at=at, event="board dump")],
                    text=(("; ".join(kinds) + "; " if kinds else "") + f"squares differing from the start: {names}. "
                          "Standard play: cancel and replay (7.2.1); castling rights of a misplaced king/rook "
                          "removed"))
        self._board = board
        self._start_fen = board.fen()
        self._rebuild_index()
        self._keys = [self._index.key]

    # ------------------------------------------------------------------ recognition

    def _rebuild_index(self) -> None:
        self._index = PositionIndex(self._board)

    def _evaluate(self, outs: list[Output], at: float, *, snapshot: bool,
                  batch: list[tuple[int, Content, Content]] | None = None) -> None:
        if self._mode is _Mode.GAME_OVER:
            if not self._after_game_raised:
                self._after_game_raised = True
                self._raise(outs, "MOVE_AFTER_GAME_END", None, at, self._seg_evidence[-1:],
                            text="board activity after the end of the game (analysis?)")
            return
        if self._mode is _Mode.AWAIT_RESTORE:
            self._restore_check = at + self.rules.timing.t_adjust
            if self._phys.key() == self._restore_key:
                self._restore_check = None
                self._mode = _Mode.NORMAL
                self._seg_lifts = []
                self._seg_places = []
                self._seg_evidence = []
                self._mask.clear()
                outs.append(GameEvent(at=at, type="REINSTATED", details={"ply": len(self._records)}))
            return
        if self._pending_fix is not None and self._apply_fix(outs, at):
            return
        if self._setting_up:
            if self._phys.key() == self._index.key and not self._mask:
                self._setting_up = False  # the start position is complete: the game can begin
                self._seg_lifts = []
                self._seg_places = []
                self._seg_evidence = []
                self._two_hands.clear()
            return
        if self._adopted_open is not None:
            if self._adopted_open == len(self._records):
                self._adopted_turn()
            else:
                self._adopted_open = None
        turn = self._board.turn
        mover = not turn
        post_open = self._post_made_open()
        before = self._last_diff
        opp_touch = False
        if not post_open and not snapshot:
            for sq, old, new in batch or ():
                if self._opp_change(sq, old, new, turn):
                    self._mask.add(sq)
                    opp_touch = True
        if self._mask:
            # the opponent's own activity is kept apart; restore squares that are back to normal
            restored = [sq for sq in self._mask if self._phys.squares[sq] == self._index.piece_at(sq)]
            for sq in restored:
                self._mask.discard(sq)
            restored = [sq for sq in restored if isinstance(self._phys.squares[sq], chess.Piece)]
            if restored and not self._mask and not self._oot_raised and not snapshot:
                sq = restored[0]
                piece = self._phys.squares[sq]
                self._raise(outs, "ADJUST_OUT_OF_TURN", mover, at, self._seg_evidence[-2:],
                            text=f"{_content_text(piece)} on {chess.square_name(sq)} lifted and put back on the "
                                 "opponent's time (6.2.5); actor unknown: the player on move may have touched it "
                                 "(4.3.2)")
        view = self._masked_view() if self._mask else self._phys
        diff = self._index.classify(view)
        self._last_diff = diff
        if opp_touch and not self._opp_early_raised and before.kind in (DiffClass.PARTIAL, DiffClass.IN_HAND) \
                and diff.kind is not DiffClass.NONE:
            self._opp_early_raised = True
            self._raise(outs, "OPPONENT_STARTED_BEFORE_MOVE_MADE", mover, at, self._seg_evidence[-1:],
                        text="the opponent touched a piece while the move was still being made (1.3); touch-move "
                             "applies to him")
        if self._cand is not None and not (diff.kind is DiffClass.LEGAL and diff.move == self._cand.move):
            self._cand = None
        if post_open and diff.kind in (DiffClass.OPP_ONLY, DiffClass.UNRECOGNISED):
            base = self._base_index()
            bdiff = base.classify(self._phys)
            if bdiff.kind is DiffClass.LEGAL and bdiff.move is not None:
                self._cand = _Candidate(bdiff.move, at, at + self.rules.timing.t_settle, replace=True)
            self._track_castle_king(bdiff, at, base)
            if snapshot and bdiff.kind not in (DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND):
                self._reconcile(outs, at)  # a dump that is no change of the last move: missed updates or R15
            return
        self._track_castle_king(diff, at, self._index)
        if diff.kind is DiffClass.NONE:
            self._match_t = at
            if self._mask or self._phys.key() != self._index.key:
                self._out_of_turn(outs, mover, at, snapshot)
            else:
                self._check_adjust(outs, at)
            return
        if diff.kind is DiffClass.LEGAL:
            assert diff.move is not None
            self._note_started(outs, turn, at)
            if self._cand is None:
                self._cand = _Candidate(diff.move, at, at + self.rules.timing.t_settle)
                self._match_t = at
            self._check_out_of_turn_move(outs, turn, at)
            return
        if self._illegal_state is not None and (diff.kind is not DiffClass.ILLEGAL_1 or diff.move !=
                                                self._illegal_state[1]):
            if at - self._illegal_state[0] >= self.rules.timing.t_settle:
                self._illegal_settled = self._illegal_state
            self._illegal_state = None
        if diff.kind is DiffClass.ILLEGAL_1 and diff.move is not None and self._illegal_state is None:
            self._illegal_state = (at, diff.move)
        if diff.kind is DiffClass.PARTIAL and diff.move is not None and diff.move.promotion:
            self._promo_seen = True
        if snapshot and diff.kind in (DiffClass.UNRECOGNISED, DiffClass.TWO_MOVES, DiffClass.OPP_ONLY):
            self._reconcile(outs, at)
            return
        if diff.kind is DiffClass.OPP_ONLY and self._parked_capture(_bits(diff.changed)):
            self._parked = True
        self._note_started(outs, turn, at)
        self._check_out_of_turn_move(outs, turn, at)

    def _opp_change(self, sq: int, old: Content, new: Content, turn: chess.Color) -> bool:
        """Is this change the doing of the side without the move (not part of the mover's move)?"""
        opp = not turn
        old_opp = isinstance(old, chess.Piece) and old.color == opp
        new_opp = isinstance(new, chess.Piece) and new.color == opp
        if not old_opp and not new_opp:
            return False
        if sq in self._mask:
            return True
        targets = self._capture_targets()
        if old_opp and new is None and (sq in targets or self._index.piece_at(sq) is None):
            return False  # the mover removing the piece he captures (or a parked captured piece)
        if new_opp and self._index.piece_at(sq) == new and sq in targets:
            return False  # a piece to be captured put back
        if new_opp and not old_opp and any(x[2] == new and x[1] in targets for x in self._seg_lifts):
            self._parked = True
            return False  # a captured piece parked on another square (§5 CAPTURED_PIECE_PARKED)
        # a capture seen as a replacement is the mover's; anything else is the opponent's
        return not (old_opp and isinstance(new, chess.Piece) and new.color == turn)

    def _capture_targets(self) -> set[int]:
        return set(_bits(self._index.capture_targets))

    def _masked_view(self) -> PhysicalBoard:
        view = PhysicalBoard()
        for sq, content in enumerate(self._phys.squares):
            if sq in self._mask:
                content = self._index.piece_at(sq)
            if isinstance(content, chess.Piece):
                view.set(sq, content)
        return view

    def _track_castle_king(self, diff: Diff, at: float, index: PositionIndex) -> None:
        """R07: a king released on its castling square commits to castling (4.7.2)."""
        state = None
        if diff.kind is DiffClass.PARTIAL and diff.move is not None and index.board.is_castling(diff.move) \
                and not index.board.chess960:
            king_to = chess.square(6 if index.board.is_kingside_castling(diff.move) else 2,
                                   chess.square_rank(diff.move.from_square))
            if self._phys.squares[king_to] == chess.Piece(chess.KING, index.board.turn):
                state = (at, diff.move)
        prev = self._castle_king
        if prev is not None and (state is None or state[1] != prev[1]):
            if at - prev[0] >= self.rules.timing.t_settle:
                self._castle_released = (prev[0], prev[1], index.board.san(prev[1]))
            self._castle_king = None
        if state is not None and self._castle_king is None:
            self._castle_king = state

    def _parked_capture(self, changed: list[int]) -> bool:
        """An opponent piece that a legal move could capture was put down elsewhere (captured piece parked)."""
        targets = {m.to_square for m in self._index.legal_moves if self._index.board.is_capture(m)}
        gone = [sq for sq in changed if self._phys.squares[sq] is None and self._index.piece_at(sq) is not None]
        return bool(gone) and all(sq in targets for sq in gone)

    def _genuine_lifts(self, color: chess.Color | None = None) -> list[tuple[float, int, chess.Piece]]:
        """Lifts of pieces from their official squares, minus scan artefacts (piece seen elsewhere first)."""
        out = []
        for t, sq, piece in self._seg_lifts:
            if self._index.piece_at(sq) != piece or (color is not None and piece.color != color):
                continue
            if any(p == piece and tp < t and psq != sq for tp, psq, p in self._seg_places):
                continue  # new square reported before the old one was cleared (same scan)
            out.append((t, sq, piece))
        return out

    def _check_two_hands_lift(self, outs: list[Output], at: float, sq: int, piece: chess.Piece) -> None:
        """R01 (a): two lifts of different pieces within T_simul, at least D_far apart."""
        timing = self.rules.timing
        side = self._board.turn
        if self._two_hands.get(side) is not None or self._mode is not _Mode.NORMAL or sq in self._mask:
            return
        lifts = self._genuine_lifts()
        if not any(t == at and s == sq for t, s, _ in lifts):
            return
        for t0, sq0, p0 in lifts:
            if sq0 == sq or at - t0 > timing.t_simul or sq0 in self._mask:
                continue
            if chess.square_distance(sq0, sq) < timing.d_far:
                continue
            kinds = {p0.piece_type, piece.piece_type}
            if kinds == {chess.KING, chess.ROOK} and p0.color == piece.color:
                continue  # castling: judged by rule (c)
            self._two_hands[side] = self._raise(
                outs, "TWO_HANDS_SUSPECTED", side, at,
                [Evidence(at=t0, event=f"L {chess.square_name(sq0)}"),
                 Evidence(at=at, event=f"L {chess.square_name(sq)}")],
                text=f"two lifts {1000 * (at - t0):.0f} ms apart, {chess.square_distance(sq0, sq)} squares apart "
                     "(4.1); a fast single hand cannot be excluded below the scan period")
            return

    def _check_two_hands_places(self, outs: list[Output], at: float, sq: int, piece: chess.Piece) -> None:
        """R01 (b): two own pieces put down within T_simul, at least D_far apart."""
        timing = self.rules.timing
        side = self._board.turn
        if piece.color != side or self._two_hands.get(side) is not None or self._mode is not _Mode.NORMAL:
            return
        ghost = sum(1 for content in self._phys.squares if content == piece) > \
            len(self._board.pieces(piece.piece_type, piece.color))
        for t0, sq0, p0 in reversed(self._seg_places):
            if ghost and p0 == piece:
                continue  # one piece seen on two squares: its new square reported before the old one cleared (§1.5)
            if at - t0 > timing.t_simul:
                break
            if p0.color != side or chess.square_distance(sq0, sq) < timing.d_far or self._phys.squares[sq0] != p0:
                continue  # (a piece placed and lifted again was a transit of the same hand)
            self._two_hands[side] = self._raise(
                outs, "TWO_HANDS_SUSPECTED", side, at,
                [Evidence(at=t0, event=f"P {chess.square_name(sq0)} {_piece_text(p0)}"),
                 Evidence(at=at, event=f"P {chess.square_name(sq)} {_piece_text(piece)}")],
                text=f"two pieces put down {1000 * (at - t0):.0f} ms apart, {chess.square_distance(sq0, sq)} "
                     "squares apart (4.1)")
            return

    def _check_two_hands_castling(self, outs: list[Output], at: float, piece: chess.Piece) -> None:
        """R01 (c): king and rook both off the board for more than one scan while castling."""
        side = self._board.turn
        if piece.color != side or piece.piece_type not in (chess.KING, chess.ROOK) or self._board.chess960:
            return
        if self._two_hands.get(side) is not None or self._mode is not _Mode.NORMAL:
            return
        lifts = self._genuine_lifts(side)
        king = next((x for x in lifts if x[2].piece_type == chess.KING), None)
        rook = next((x for x in lifts if x[2].piece_type == chess.ROOK), None)
        if king is None or rook is None:
            return
        if any(p.piece_type in (chess.KING, chess.ROOK) and p.color == side for _, _, p in self._seg_places):
            return  # one of them was already put down
        both_off = at - max(king[0], rook[0])
        if both_off > self.rules.timing.t_scan:
            self._two_hands[side] = self._raise(
                outs, "TWO_HANDS_SUSPECTED", side, at,
                [Evidence(at=king[0], event=f"L {chess.square_name(king[1])}"),
                 Evidence(at=rook[0], event=f"L {chess.square_name(rook[1])}")],
                text=f"king and rook both off the board for {1000 * both_off:.0f} ms (4.1)")

    def _knock(self, pre: chess.BaseBoard, side: chess.Color, lifts: list[tuple[float, int, chess.Piece]],
               involved: set[int]) -> bool:
        """R15 knock signature: an own piece not part of the move lifted within T_knock of another change."""
        t_knock = self.rules.timing.t_knock
        events = [(t, s) for t, s, _ in lifts] + [(t, s) for t, s, _ in self._seg_places]
        for t, sq, piece in lifts:
            if piece.color != side or sq in involved or pre.piece_at(sq) != piece:
                continue
            if any(abs(t2 - t) <= t_knock and s2 != sq for t2, s2 in events):
                return True
        return False

    def _own_changed(self, color: chess.Color) -> bool:
        """Do *color*'s pieces on the board differ from the official position (bitboards)?"""
        key = self._phys.key()
        off = self._index.key
        ci = 0 if color == chess.WHITE else 1
        mine = key[ci] | off[ci]
        diff = 0
        for i in range(2, 8):
            diff |= key[i] ^ off[i]
        diff = (diff | (key[ci] ^ off[ci])) & mine
        if diff & key[ci]:
            return True  # a piece of *color* where the official content differs
        missing = diff & off[ci] & ~key[ci]
        if missing and self._index.board.turn != color:
            missing &= ~self._index.capture_targets  # the opponent capturing it
        return bool(missing)

    def _keeps_time(self) -> bool:
        """No clock: the engine keeps time itself with the ClockModel (moves complete by the next move)."""
        return self._model is not None and (not self.rules.clock_expected or not self._clock_seen)

    def _press_expected(self, ply: int) -> bool:
        """Is a press expected to complete the move of *ply*? (A clock is there and was there when it was made.)"""
        return self.rules.clock_expected and self._clock_seen and not self._clock_down and ply not in self._clockless

    def _model_flag_due(self) -> float | None:
        model = self._model
        if model is None or not self._model_started or self._model_flag_done or not self._keeps_time():
            return None
        running = model.running
        return None if running is None else model.flag_time(running)

    def _model_clock(self, at: float, running: chess.Color | None) -> None:
        model = self._model
        assert model is not None
        self._clock = ClockState(white=model.remaining(chess.WHITE, at), black=model.remaining(chess.BLACK, at),
                                 running=running, model="engine")

    def _law_moves(self, color: chess.Color) -> int:
        """Moves *color* has completed by the Laws (6.2.1), counting the moves before a set-up start."""
        return self._base_moves[color] + sum(1 for r in self._records if r.side == color and r.completed_at is not None)

    def _post_made_open(self) -> bool:
        mover = not self._board.turn
        ply = self._uncompleted.get(mover)
        return ply is not None and ply == len(self._records) and not self._opp_started and self._board.move_stack != []

    def _base_index(self) -> PositionIndex:
        board = self._board.copy()
        board.pop()
        return PositionIndex(board)

    def _note_started(self, outs: list[Output], side: chess.Color, at: float) -> None:
        """The side to move is touching pieces: the previous mover's post-made window closes."""
        if self._opp_started:
            return
        if not any(x[1] for x in self._seg_lifts) and not self._seg_places:
            return
        self._opp_started = True
        mover = not side
        ply = self._uncompleted.get(mover)
        press_pending = self._press is not None and self._press.lever_before == mover
        if ply is not None and self._press_expected(ply) and ply == len(self._records) \
                and not press_pending:
            self._raise(outs, "CLOCK_NOT_PRESSED", mover, at, self._seg_evidence[-1:],
                        text="the mover has not pressed and the opponent is already moving (arbiter only, 12.6)")
        # R08: Article 4 claims against the previous mover close at this first touch
        for irr in list(self._irr.values()):
            if irr.side == mover and irr.claim_deadline is None and irr.code in _ARTICLE4 and irr.t_raised <= at \
                    and irr.status is not Status.RESOLVED and irr.ply >= len(self._records) - 1:
                self._update(outs, dataclasses.replace(irr, claim_deadline=at))

    def _check_out_of_turn_move(self, outs: list[Output], side: chess.Color, at: float) -> None:
        if self._pressed_no_move == side and not self._oot_raised and self._seg_places:
            last = self._seg_places[-1]
            if last[0] > (self._last_press_at or -1e18) + self.rules.timing.t_latency:
                self._oot_raised = True
                self._raise(outs, "OUT_OF_TURN_CHANGE", side, at, self._seg_evidence[-1:],
                            text="change made on the opponent's time after the press; the arbiter may reinstate "
                                 "(7.6)")

    def _check_adjust(self, outs: list[Output], at: float) -> None:
        """Board back to the official position: a lift-and-replace is a possible adjust (R02)."""
        lifts = [x for x in self._seg_lifts if x[0] >= at - self.rules.timing.t_adjust]
        if not lifts:
            return
        t0, sq, piece = lifts[-1]
        if self._phys.squares[sq] == piece:
            side = self._board.turn
            actor = piece.color
            if actor == side and self._pressed_no_move != side:
                self._raise(outs, "ADJUST_OBSERVED", actor, at,
                            [Evidence(at=t0, event=f"L {chess.square_name(sq)}"),
                             Evidence(at=at, event=f"P {chess.square_name(sq)} {_piece_text(piece)}")],
                            text="possible adjustment (j'adoube is not observable)")

    def _out_of_turn(self, outs: list[Output], actor: chess.Color, at: float, snapshot: bool) -> None:
        """Changes by the side without the move (R13), takebacks (R29), missed updates."""
        key = self._phys.key()
        # takeback: the physical board is an earlier official position
        for back in range(1, min(_TAKEBACK_DEPTH, len(self._records)) + 1):
            if self._keys[-1 - back] == key:
                if not self._oot_raised and not snapshot:
                    self._oot_raised = True
                    self._raise(outs, "OUT_OF_TURN_CHANGE", actor, at, self._seg_evidence[-4:],
                                text="the side without the move changed the position")
                self._takeback(outs, len(self._records) - back, at)
                return
        if snapshot:
            self._reconcile(outs, at)
            return
        squares = self._phys.squares
        placed = [sq for sq in self._mask if isinstance(squares[sq], chess.Piece)
                  and squares[sq] != self._index.piece_at(sq)]
        if not placed or self._fix_in_progress():
            return  # only lifts so far (wait for where the piece goes), or the board being put right
        if all(self._index.piece_at(sq) is not None for sq in placed) and len(placed) == len(self._mask):
            return  # a piece read as another one on the same square: wait (sensor or flicker)
        if not self._oot_raised:
            self._oot_raised = True
            self._raise(outs, "OUT_OF_TURN_CHANGE", actor, at, self._seg_evidence[-4:],
                        text="the side without the move changed the position; the arbiter may reinstate (7.6)",
                        reinstate_ply=len(self._records))

    def _forward_jump(self, outs: list[Output], at: float) -> bool:
        """Missed updates (link outage, full dump): up to three legal plies leading to the physical board."""
        target = self._phys.key()
        path = _search(self._board, target, _JUMP_DEPTH, self._index.changed_squares(self._phys))
        if not path:
            return False
        _LOGGER.info("missed updates recovered: %s", " ".join(m.uci() for m in path))
        presses = self._gap_presses()
        blind = self._blind_presses
        previous = -1e18
        for i, move in enumerate(path):
            last = i == len(path) - 1
            side = self._board.turn
            if self._board_down:
                # a board outage: the presses seen meanwhile complete the recovered moves, in order (a press
                # that fits no recovered move, a double press or one without moving, is left out)
                seen = next((p for p in blind if p.side == side and p.at > previous), None)
                if seen is not None:
                    blind.remove(seen)
                    previous = seen.at
                    self._blind_matched += 1
                    self._make(outs, move, min(at, seen.at), completed=True, completion=Completion.PRESS,
                               press_at=seen.at, recovered=True, clock=seen.clock)
                    continue
                # not pressed during the outage (or the press cannot be told): no [%clk] from a later clock
                rec = self._make(outs, move, at, completed=not last, completion=Completion.NEXT_MOVE,
                                 recovered=True, clock=ClockState())
                if not last or any(p.side == side for p in blind):
                    self._clockless.add(rec.ply)  # whether it was pressed cannot be told: no press codes for it
                continue
            press = presses[side].pop(0) if presses[side] else None
            if press is not None:
                # the press seen while the frame was lost completed this move: made by then at the latest
                self._withdraw_gap_press(outs, press, self._board.san(move))
                self._make(outs, move, min(at, press.t_raised), completed=True, completion=Completion.PRESS,
                           press_at=press.t_raised, recovered=True)
                continue
            self._make(outs, move, at, completed=not last, completion=Completion.NEXT_MOVE, recovered=True)
        self._divergence_key = None
        return True

    def _gap_presses(self) -> dict[chess.Color, list[Irregularity]]:
        """Snapshot-only boards: the presses judged "no move" since the official position, oldest first.

        A lost frame hides the move from the press that completed it; the recovered jump explains them.
        """
        found: dict[chess.Color, list[Irregularity]] = {chess.WHITE: [], chess.BLACK: []}
        if self._field_updates:
            return found
        for irr in self._irr.values():
            if irr.code == "CLOCK_PRESS_NO_MOVE" and irr.ply == len(self._records) and irr.side is not None \
                    and irr.status is not Status.RESOLVED:
                found[irr.side].append(irr)
        for presses in found.values():
            presses.sort(key=lambda irr: irr.t_raised)
        return found

    def _withdraw_gap_press(self, outs: list[Output], irr: Irregularity, san: str) -> None:
        """A "press without a move" explained by a recovered move: resolved, its illegal-move count undone."""
        side = irr.side
        assert side is not None
        if laws.is_illegal_move_class(irr.code, irr.edition) and self.regime != Regime.OTHERWISE.value \
                and self._illegal[side] > 0:
            self._illegal[side] -= 1  # counted by _penalty when it was raised
        self._limit_pending = False
        if self._pressed_no_move == side:
            self._pressed_no_move = None
        self._update(outs, dataclasses.replace(
            irr, status=Status.RESOLVED,
            ruling=f"withdrawn: a board frame was lost; {san} was on the board at the press (recovered)"))

    def _reconcile(self, outs: list[Output], at: float) -> None:
        """A board dump that is no move in progress: missed updates, else POSITION_DIVERGENCE (R15)."""
        if self._forward_jump(outs, at):
            return
        key = self._phys.key()
        if key == self._divergence_key:
            return
        if not self._records and self._phys.key()[0].bit_count() + self._phys.key()[1].bit_count() < \
                self._index.board.occupied.bit_count():
            self._setting_up = True  # pieces still being set up before the game: nothing to report yet
            return
        self._divergence_key = key
        irr = self._raise(outs, "POSITION_DIVERGENCE", None, at, [Evidence(at=at, event="board dump")],
                          text="the board differs from the official position and no sequence of up to "
                               f"{_JUMP_DEPTH} legal moves explains it: "
                               f"{describe_change(self._board, self._phys.squares)}; reinstate the last official "
                               "position" + ("; clock presses are not judged until this is resolved"
                                             if self._board_down else ""),
                          reinstate_ply=len(self._records))
        if self._board_down:
            self._outage_divergence = irr.id

    # ------------------------------------------------------------------ made moves

    def _settle(self, outs: list[Output], now: float) -> None:
        cand = self._cand
        assert cand is not None
        self._cand = None
        if cand.replace:
            self._replace_last(outs, cand.move, cand.at)
            return
        self._make(outs, cand.move, cand.at, completed=False)

    def _replace_last(self, outs: list[Output], move: chess.Move, at: float) -> None:
        """R07: the last mover changed his made move before the opponent started."""
        old = self._records[-1]
        ply = len(self._records) - 1
        self._board.pop()
        self._records.pop()
        self._keys.pop()
        outs.append(MovesRetracted(at=at, to_ply=ply, reason="released move changed"))
        side = self._board.turn
        lifts = self._prev_lifts + self._seg_lifts
        self._seg_lifts = lifts
        base = self._board.copy(stack=False)
        self._make(outs, move, at, completed=False, replaced=old)
        old_move = chess.Move.from_uci(old.uci)
        if base.chess960 and base.is_castling(move) and old_move.from_square == move.from_square:
            # R27: a lone king step next to its start, then the rook: castling in a non-standard order
            self._raise(outs, "CHESS960_CASTLING_ORDER", side, at, self._seg_evidence[-4:],
                        text=f"{old.san} was presumed released, then the rook completed {base.san(move)}: the "
                             "arbiter checks the intention (Guidelines II.3)")
            return
        if old_move.promotion and move.promotion and old_move.to_square == move.to_square:
            self._raise(outs, "PROMOTION_CHOICE_CHANGED", side, at, self._seg_evidence[-4:], move=old.san,
                        text="the first piece placed on the promotion square stands (4.4.4)")
        self._raise(outs, "RELEASED_MOVE_CHANGED", side, at, self._seg_evidence[-6:], move=old.san,
                    text=f"{old.san} was presumed released; the first released move stands (4.7)")

    def _make(self, outs: list[Output], move: chess.Move, at: float, *, completed: bool,
              completion: Completion | None = None, press_at: float | None = None,
              replaced: MoveRecord | None = None, recovered: bool = False,
              clock: ClockState | None = None) -> MoveRecord:
        board = self._board
        side = board.turn
        san = board.san(move)
        pre_lifts = list(self._seg_lifts)
        pre_board = board.copy(stack=False)
        # previous own move not completed: completed now by this move (6.2.1.2)
        prev_ply = self._uncompleted.pop(side, None)
        if prev_ply is not None and prev_ply <= len(self._records):
            self._complete(outs, prev_ply, at, Completion.NEXT_MOVE)
            if self._press_expected(prev_ply) and not recovered:
                self._raise(outs, "MOVE_COMPLETED_WITHOUT_PRESS", side, at, [],
                            text=f"{self._records[prev_ply - 1].san} completed by the player's next move (6.2.1.2)")
        board.push(move)
        if self._model is not None and self._model_started and self._keeps_time():
            self._model.press(side, at)
            self._model_clock(at, board.turn)
        emt = max(0.0, at - self._seg_start)
        shown = self._clock if clock is None else clock
        rec = MoveRecord(ply=len(self._records) + 1, uci=move.uci(), san=san, side=side, fen_after=_fen(board),
                         made_at=at, clock_white=shown.white, clock_black=shown.black, emt=emt)
        self._records.append(rec)
        self._rebuild_index()
        self._keys.append(self._index.key)
        if self._clock_down:
            self._clockless.add(rec.ply)
        outs.append(MoveMade(move=rec))
        if self._parked and pre_board.is_capture(move):
            self._raise(outs, "CAPTURED_PIECE_PARKED", side, at, self._seg_evidence[-6:],
                        text="the captured piece was put down on another square during the move, then taken off")
        self._parked = False
        touch_done = False
        if self._illegal_settled is not None and not replaced:
            t_ill, ill = self._illegal_settled
            self._raise(outs, "ILLEGAL_PLACEMENT_CORRECTED", side, at,
                        [Evidence(at=t_ill, event=f"P {chess.square_name(ill.to_square)}")],
                        text="illegal placement corrected before the press: no penalty")
            if move.from_square != ill.from_square and any(m.from_square == ill.from_square
                                                           for m in pre_board.legal_moves):
                touch_done = True
                self._raise(outs, "TOUCH_MOVE_VIOLATION", side, at,
                            [Evidence(at=t_ill, event=f"L {chess.square_name(ill.from_square)}")],
                            text="the correction was made with a different piece although the touched piece can "
                                 "move (4.3, 7.5.1)",
                            constraints=(f"move the piece on {chess.square_name(ill.from_square)}",))
        self._illegal_settled = None
        self._illegal_state = None
        if self.edition == 2009 and move.promotion and not any(
                p[1] == move.to_square and p[2].piece_type == chess.PAWN for p in self._seg_places):
            self._raise(outs, "PROMOTION_ORDER_2009", side, at, self._seg_evidence[-4:],
                        text="E2009: the pawn was not exchanged on the promotion square (3.7 e, 4.6 c): arbiter")
        due = self._replacement_due
        if due is not None and len(self._records) - 1 == due[1] and not recovered:
            self._replacement_due = None
            moved = {move.from_square}
            if pre_board.is_castling(move):
                moved.add(_castling_rook_square(pre_board, move))
            if due[2] not in moved:
                touch_done = True
                self._raise(outs, "TOUCH_MOVE_VIOLATION", side, at, self._seg_evidence[-4:],
                            text=f"the replacement move after the reinstatement ({due[0]}) was made with another "
                                 f"piece although the piece on {chess.square_name(due[2])} can move (4.3, 7.5.1)",
                            constraints=(f"move the piece on {chess.square_name(due[2])}",))
        if move.promotion and not replaced and not recovered:
            first_piece = next((p for _, sq, p in self._seg_places if sq == move.to_square and p.color == side
                                and p.piece_type not in (chess.PAWN, chess.KING)), None)
            if first_piece is not None and first_piece.piece_type != move.promotion:
                first_move = chess.Move(move.from_square, move.to_square, promotion=first_piece.piece_type)
                self._raise(outs, "PROMOTION_CHOICE_CHANGED", side, at, self._seg_evidence[-4:],
                            move=pre_board.san(first_move) if first_move in pre_board.legal_moves else None,
                            text="the first piece placed on the promotion square stands (4.4.4)")
        if recovered:
            touch_done = True
            self._castle_released = None
            pre_lifts = []
        if not touch_done:
            self._check_touch_rules(outs, pre_board, move, side, at=at, lifts=pre_lifts, replaced=replaced)
        if self._castle_released is not None and move != self._castle_released[1] and replaced is None:
            t_rel, _, castle_san = self._castle_released
            king_sq = chess.square_name(chess.square(6 if pre_board.is_kingside_castling(self._castle_released[1])
                                                     else 2, chess.square_rank(move.from_square)))
            self._raise(outs, "CASTLING_KING_RELEASED_NOT_COMPLETED", side, at,
                        [Evidence(at=t_rel, event=f"P {king_sq} {'w' if side else 'b'}K")], move=castle_san,
                        text=f"the king was presumed released on {king_sq}: {castle_san} is required if legal, "
                             "otherwise another king move (4.7.2)")
        involved = {move.from_square, move.to_square}
        if pre_board.is_castling(move):
            involved |= {_castling_rook_square(pre_board, move)}
        if self._knock(pre_board, side, pre_lifts, involved):
            self._raise(outs, "DISPLACED_PIECES", side, at, self._seg_evidence[-6:],
                        text="a piece was knocked during the move and restored before the press (7.4)")

        # the opponent now has the move (1.3): a new segment
        self._two_hands.pop(not side, None)
        self._prev_lifts = pre_lifts
        self._opp_early_raised = False
        self._castle_king = None
        self._castle_released = None
        self._new_segment(at)
        self._promo_seen = False
        self._pressed_no_move = None if self._pressed_no_move == side else self._pressed_no_move
        self._close_claim_windows(outs, side, at)
        ended = self._check_game_end(outs, rec, at)
        if ended:
            pass
        elif completed:
            self._complete(outs, rec.ply, press_at if press_at is not None else at,
                           completion or Completion.PRESS, clock=clock)
        else:
            self._uncompleted[side] = rec.ply
            if not self.rules.clock_expected or recovered:
                pass
        outs.append(StateChanged(at=at))
        return rec

    def _complete(self, outs: list[Output], ply: int, at: float, how: Completion,
                  clock: ClockState | None = None) -> None:
        """Complete *ply*; its clock times are *clock* (default: the clock now)."""
        rec = self._records[ply - 1]
        if rec.completed_at is not None:
            return
        shown = self._clock if clock is None else clock
        rec = dataclasses.replace(rec, completed_at=at, completion=how, clock_white=shown.white,
                                  clock_black=shown.black)
        self._records[ply - 1] = rec
        if self._uncompleted.get(rec.side) == ply:
            del self._uncompleted[rec.side]
        outs.append(MoveCompleted(move=rec))
        self._after_completion(outs, rec, at)

    def _after_completion(self, outs: list[Output], rec: MoveRecord, at: float) -> None:
        """R23: both kings in check / pawn on the last rank after a completed move ("otherwise" regime)."""
        board = self._board
        illegal_pos = _illegal_position(board)
        if self._pending_position is not None:
            _, ply = self._pending_position
            if ply < rec.ply:
                self._pending_position = None
                if illegal_pos:
                    self._raise(outs, "ILLEGAL_POSITION_PERSISTS", None, at, [], result="1/2-1/2",
                                text="the illegal position is still on the board after the next completed move: "
                                     "draw (A.5.4)")
                    return
        if illegal_pos and self.regime == Regime.OTHERWISE.value:
            irr = self._raise(outs, "ILLEGAL_POSITION_PENDING", None, at, [],
                              text=f"{illegal_pos}: wait for the next completed move; draw if it is still there")
            self._pending_position = (irr.id, rec.ply)

    def _check_game_end(self, outs: list[Output], rec: MoveRecord, at: float) -> bool:
        board = self._board
        code: str | None = None
        result = "1/2-1/2"
        if board.is_checkmate():
            code, result = "GAME_END_CHECKMATE", ("1-0" if rec.side == chess.WHITE else "0-1")
        elif board.is_stalemate():
            code = "GAME_END_STALEMATE"
        elif laws.is_dead_position(board):
            code = "GAME_END_DEAD_POSITION"
        else:
            code = laws.automatic_draw(board, self.edition)
        if code is None:
            self._check_draw_claim(outs, at)
            return False
        flag_t = self._flag_t.get(rec.side)
        if flag_t is not None and flag_t < rec.made_at + self.rules.timing.t_settle:
            # the mover's flag fell before the move was made: the arbiter decides (6.9)
            return False
        self._complete(outs, rec.ply, at, Completion.GAME_END)
        self._result = result
        self._termination = code
        self._mode = _Mode.GAME_OVER
        self._game_end_at = at
        outs.append(GameEvent(at=at, type="GAME_END", code=code, details={"result": result, "ply": rec.ply}))
        return True

    def _check_draw_claim(self, outs: list[Output], at: float) -> None:
        board = self._board
        side = board.turn
        key = self._index.key
        counts = self._key_counts
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 2:
            self._repeated.append(key)
        # a threefold claim needs this placement three times, or one a move away seen twice already: the costly
        # python-chess test runs only then
        maybe = counts[key] >= 3 or any(_squares_apart(k, key) <= 4 for k in self._repeated)
        threefold = maybe and board.can_claim_threefold_repetition()
        fifty = board.halfmove_clock >= 99 and board.can_claim_fifty_moves()
        available = threefold or fifty
        if available and not self._draw_avail[side]:
            kind = "threefold repetition (9.2)" if threefold else "50 moves (9.3)"
            self._raise(outs, "DRAW_CLAIM_AVAILABLE", side, at, [],
                        text=f"a claim by {'White' if side else 'Black'} would be correct: {kind} (arbiter only)")
        self._draw_avail[side] = available

    # ------------------------------------------------------------------ Article 4 heuristics at made time

    def _check_touch_rules(self, outs: list[Output], pre: chess.Board, move: chess.Move, side: chess.Color, *,
                           at: float, lifts: list[tuple[float, int, chess.Piece]],
                           replaced: MoveRecord | None) -> None:
        t_scan = self.rules.timing.t_scan
        own = [x for x in lifts if x[2].color == side]
        if pre.is_castling(move) and not pre.chess960:
            king_lift = next((x for x in own if x[1] == move.from_square and x[2].piece_type == chess.KING), None)
            rook_from = _castling_rook_square(pre, move)
            rook_lift = next((x for x in own if x[1] == rook_from), None)
            if king_lift and rook_lift and rook_lift[0] < king_lift[0] - t_scan:
                self._raise(outs, "CASTLING_ROOK_FIRST", side, at,
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
                self._raise(outs, "TOUCH_CAPTURE_SUSPECTED", side, at,
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
                self._raise(outs, "TOUCH_MOVE_SUSPECTED", side, at,
                            [Evidence(at=first[0], event=f"L {chess.square_name(first[1])}")],
                            text=f"{_piece_text(first[2])} on {chess.square_name(first[1])} was lifted first and "
                                 "could move (4.3.1); j'adoube is not observable",
                            constraints=(f"move the piece on {chess.square_name(first[1])}",))


    # ------------------------------------------------------------------ clock

    def _color_of(self, side: ClockSide | None) -> chess.Color | None:
        if side is None:
            return None
        return chess.WHITE if side == self.rules.white_clock_side else chess.BLACK

    def _new_segment(self, at: float) -> None:
        """Start the opponent's segment at *at*: no lifts, placements or evidence yet, nothing masked."""
        self._mask.clear()
        self._last_diff = Diff(DiffClass.NONE)
        self._seg_lifts = []
        self._seg_places = []
        self._seg_evidence = []
        self._seg_start = at
        self._opp_started = False
        self._oot_raised = False

    def _held_due(self) -> float | None:
        held = self._held_reading
        return None if held is None else held.at + _CLOCK_HOLD_S

    def _on_clock(self, outs: list[Output], reading: ClockReading, at: float, *, confirmed: bool = False) -> None:
        prev = self._prev_reading
        held = self._held_reading
        left, right = reading.left, reading.right
        if not confirmed and (held is not None or not (left and right)):
            # a side at 0:00 (or unknown), or a suspect reading pending: the full test
            if _suspect_reading(reading):
                if held is None:
                    self._held_reading = reading  # wait for the next reading (or the flag bit) to confirm it
                    return
                self._held_reading = None  # two suspect readings in a row: the clock means it
            elif held is not None:
                self._held_reading = None
                self._clock_glitch(outs, held, at)
        self._pre_clock = self._clock
        self._prev_reading = reading
        if self._clock_down:
            self._clock_down = False  # readings again: the clock is back (whether or not its link event came)
        if (prev is not None and left and right and reading.running is prev.running
                and reading.lever_high is prev.lever_high and reading.left_flag is prev.left_flag
                and reading.right_flag is prev.right_flag and reading.model == prev.model
                and not self._paused and self._clock_seen and prev.left and prev.right):
            # same lever, run state and flags: only the times moved (the common case, about one reading per second)
            if int(left) == int(prev.left) and int(right) == int(prev.right):
                return  # the display shows the same: nothing to publish
            update = _clock_update(at, left, right, self._clock) if self._white_left else \
                _clock_update(at, right, left, self._clock)
            self._clock = update.clock
            outs.append(update)
            return
        if not self._clock_started and reading.running is not None and len(self._records) < 2:
            self._check_clock_side(outs, reading, at)
        if self._white_left:
            white, black = reading.left, reading.right
            fw, fb = reading.left_flag, reading.right_flag
        else:
            white, black = reading.right, reading.left
            fw, fb = reading.right_flag, reading.left_flag
        running = None if reading.running is None else (reading.running is ClockSide.LEFT) == self._white_left
        lever = running if reading.lever_high is None else (reading.lever_high is ClockSide.LEFT) == self._white_left
        flag_w = fw or (white == 0 and running is True)
        flag_b = fb or (black == 0 and running is False)
        shown = (None if white is None else int(white), None if black is None else int(black), running, flag_w,
                 flag_b, reading.model)
        if shown != self._shown:
            # publish when what a display would show changes (seconds, run state, flags)
            self._shown = shown
            self._clock = ClockState(white=white, black=black, running=running, flag_white=flag_w,
                                     flag_black=flag_b, model=reading.model)
            outs.append(ClockUpdate(at=at, clock=self._clock))
        if (self._clock_seen and not self._clock_resync and running == self._running and lever == self._lever
                and not self._paused
                and flag_w == self._flag[chess.WHITE] and flag_b == self._flag[chess.BLACK]):
            return  # nothing but the times changed (the common case: ~1 reading per second)
        first = not self._clock_seen or self._clock_resync
        self._clock_seen = True
        self._clock_resync = False
        if running is not None and not self._clock_started:
            # the clock is set before it is started: judge the setting when it starts (6.6)
            self._check_clock_setting(outs, white, black, at)
        # pause / resume (R14)
        was_paused = self._paused
        if running is not None:
            self._clock_started = True
        # stopped before the game's first start is not a pause (6.6: the arbiter starts White's clock)
        self._paused = reading.running is None and not first and lever is not None and self._clock_started
        if self._paused and not was_paused:
            self._on_pause(outs, at)
        if was_paused and not self._paused:
            self._lever = lever  # the lever may be set during a pause: no press
            if lever is not None and lever == self._pressed_no_move:
                self._pressed_no_move = None  # the arbiter restarted the presser's clock (7.5.3): his own time again
            outs.append(StateChanged(at=at))
        elif first:
            self._lever = lever
        elif lever is not None and self._lever is not None and lever != self._lever and not self._paused:
            self._on_transition(outs, self._lever, lever, at)
            self._lever = lever
        elif self._lever is None:
            self._lever = lever
        self._running = running
        # flags (R26)
        new_w = flag_w and not self._flag[chess.WHITE]
        new_b = flag_b and not self._flag[chess.BLACK]
        self._flag[chess.WHITE] = flag_w
        self._flag[chess.BLACK] = flag_b
        if new_w or new_b:
            self._on_flag(outs, new_w, new_b, flag_w and flag_b, at)

    def _check_clock_side(self, outs: list[Output], reading: ClockReading, at: float) -> None:
        """The game's first clock start tells on which side White's time is (before ply 2).

        White's clock is started first (6.6: by the arbiter, or by the first press of a clock left stopped,
        which starts Black's clock after White's move). If the side that starts running is the other
        colour's by the configured ``white_clock_side``, the clock stands the other way round: the sides
        are swapped (``GameEvent CLOCK_SIDE_CHANGED``), as the board's orientation is. Later the
        configuration is kept: a wrong side then shows in the findings.
        """
        if self._mode is not _Mode.NORMAL or not self._fresh_setting(reading):
            return
        moving = self._cand is not None and not self._cand.replace  # White's first move about to be made
        if moving:
            # White's clock started as the move is made (by the arbiter) fits the configuration as well as
            # Black's started by White's press: only a press (the lever moved since the last reading) tells
            before = None if self._lever is None else (
                ClockSide.LEFT if (self._lever == chess.WHITE) == self._white_left else ClockSide.RIGHT)
            if before is None or reading.lever_high is None or reading.lever_high is before:
                return
        expected = self._board.turn if not moving else not self._board.turn
        running_white = (reading.running is ClockSide.LEFT) == self._white_left
        if running_white == (expected == chess.WHITE):
            return
        self._white_left = not self._white_left
        # what was remembered in the old frame (lever, run state, flags) belongs to the other colour
        if self._lever is not None:
            self._lever = not self._lever
        if self._running is not None:
            self._running = not self._running
        self._flag = {chess.WHITE: self._flag[chess.BLACK], chess.BLACK: self._flag[chess.WHITE]}
        self._shown = None
        side = ClockSide.LEFT if self._white_left else ClockSide.RIGHT
        outs.append(GameEvent(at=at, type="CLOCK_SIDE_CHANGED", code=None,
                              details={"white_clock_side": side.value,
                                       "configured": self.rules.white_clock_side.value,
                                       "ply": len(self._records)}))

    def _clock_glitch(self, outs: list[Output], held: ClockReading, at: float) -> None:
        """A clock reading that the next one did not confirm: ignored (not published, no flag), counted.

        Reported as ``SENSOR_FLICKER`` (a reading reverted at once: info, ignore and log) at the 1st-3rd,
        10th, 100th... glitch of the game; every one is logged.
        """
        self._clock_glitches += 1
        n = self._clock_glitches
        _LOGGER.info("clock glitch ignored (%d this game): %r", n, held)
        if n > 3 and 10 ** (len(str(n)) - 1) != n:
            return
        shown = f"left {_clock_text(held.left)}, right {_clock_text(held.right)}"
        self._raise(outs, "SENSOR_FLICKER", None, at, [Evidence(at=held.at, event=f"clock {shown}")],
                    text=f"clock reading ignored ({shown}, no flag bit, not confirmed by the next reading): a glitch "
                         f"of the clock link, not a flag fall ({n} such reading(s) this game)")

    def _on_transition(self, outs: list[Output], before: chess.Color, after: chess.Color, at: float) -> None:
        ev = Evidence(at=at, event=f"C {_side_letter(before)}")
        press = self._press
        if press is not None and at - press.last_at <= self.rules.timing.t_bounce:
            press.last_at = at
            press.lever_after = after
            press.transitions += 1
            press.evidence.append(ev)
            return
        press = _Press(first_at=at, last_at=at, lever_before=before, lever_after=after, transitions=1,
                       evidence=[ev], pre_clock=self._pre_clock, blind=self._presses_blind())
        self._press = press
        if not press.blind and self._clean_press(before):
            self._complete_fast(outs, press)

    def _clean_press(self, side: chess.Color) -> bool:
        """Fast path of §3.5: *side* presses with a settled made move and nothing else going on.

        The ``T_latency`` window exists for board events that race the press; when the presser's
        made move is already settled (release presumed), is the last move of the record, the board
        shows exactly the official position (nothing in hand, no change masked) and no other
        recognition is pending, no board event can change the outcome of the table's first row.
        """
        if self._mode is not _Mode.NORMAL or self._paused or side == self._board.turn:
            return False
        ply = self._uncompleted.get(side)
        if ply is None or ply != len(self._records) or self._records[ply - 1].completed_at is not None:
            return False
        if (self._cand is not None or self._buffer or self._mask or self._pending_fix is not None
                or self._two_hands.get(side) is not None or self._impossible_since is not None
                or self._castle_king is not None or self._replacement is not None):
            return False
        return self._phys.key() == self._index.key

    def _complete_fast(self, outs: list[Output], press: _Press) -> None:
        """Complete the presser's move at the press itself (``completed_at`` = press time).

        The press stays open for ``T_bounce`` after its last transition: a bounce that keeps the
        press is ``CLOCK_BOUNCE`` only; one that ends with the lever back where it was is no press,
        and :meth:`_judge_press` withdraws the completion (see :meth:`_close_fast`).
        """
        side = press.lever_before
        assert side is not None
        ply = self._uncompleted[side]
        press.fast_record = self._records[ply - 1]
        press.fast_prev_press_at = self._last_press_at
        self._on_press(outs, side, press.first_at, press.evidence[0])

    def _close_fast(self, outs: list[Output], press: _Press, due: float) -> None:
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
        if press.lever_after != side:
            self._check_period(outs, side, press)
            return
        ply = old.ply
        if ply > len(self._records) or self._records[ply - 1].uci != old.uci \
                or self._records[ply - 1].completed_at != press.first_at:
            return  # the record moved on (arbiter, retraction): nothing to withdraw
        self._records[ply - 1] = old
        self._uncompleted[side] = ply
        self._last_press_at = press.fast_prev_press_at
        outs.append(MoveMade(move=old))
        outs.append(StateChanged(at=due))

    def _judge_press(self, outs: list[Output], due: float) -> None:
        press = self._press
        assert press is not None
        self._press = None
        if press.transitions > 1:
            withdrawn = press.fast_record is not None and press.lever_after == press.lever_before
            self._raise(outs, "CLOCK_BOUNCE", None, press.first_at, press.evidence,
                        text="several lever transitions within T_bounce: one physical event; only the final lever "
                             "state counts (6.2.4)"
                             + ("; the lever ended where it was, so there was no press: the completion of "
                                f"{press.fast_record.san if press.fast_record else ''} is withdrawn"
                                if withdrawn else ""))
        if press.fast_record is not None:
            self._close_fast(outs, press, due)
            return
        if press.blind:
            self._blind_press(outs, press)
        elif press.lever_before is not None and press.lever_after is not None and \
                press.lever_before != press.lever_after:
            side = press.lever_before
            done = self._law_moves(side)
            self._on_press(outs, side, press.first_at, press.evidence[0])
            if self._law_moves(side) > done:
                self._check_period(outs, side, press)
        buffered, self._buffer = self._buffer, []
        for event in buffered:
            self._fire(outs, event.at, inclusive=False)
            if self._defer(event, event.at):
                continue
            self._dispatch(outs, event, event.at)

    def _presses_blind(self) -> bool:
        """Are presses recorded but not judged (board link down, or its divergence not yet resolved)?"""
        if self._board_down:
            return True
        if self._outage_divergence is None:
            return False
        irr = self._irr.get(self._outage_divergence)
        if irr is None or irr.status is Status.RESOLVED:
            self._outage_divergence = None
            return False
        return True

    def _blind_press(self, outs: list[Output], press: _Press) -> None:
        """A press made while the board link was down: recorded with the clock it showed, not judged.

        The presser's own made move still waiting for its press (the last move of the record) is completed
        by it, as it would be with the board. Any later press waits for the board's return: the reconciling
        dump gives it to the recovered move it completed, in order (:meth:`_forward_jump`).
        """
        side = press.lever_before
        if side is None or press.lever_after is None or side == press.lever_after:
            return  # the lever ended where it was: no press
        self._last_press_at = press.first_at
        if not self._board_down:
            # the record still lacks what the outage hid (an open divergence), or the board came back while
            # the press was pending: there is no position to judge it against
            reason = f"POSITION_DIVERGENCE {self._outage_divergence} open" if self._presses_blind() \
                else "board link down"
            outs.append(GameEvent(at=press.first_at, type="PRESSES_NOT_JUDGED", code=None,
                                  details={"presses": 1, "matched": 0, "reason": reason}))
            return
        self._blind_count += 1
        ply = self._uncompleted.get(side)
        if ply is not None and ply == len(self._records) and side != self._board.turn \
                and self._mode is _Mode.NORMAL and not any(p.side == side for p in self._blind_presses):
            self._blind_matched += 1
            self._complete(outs, ply, press.first_at, Completion.PRESS)
            outs.append(StateChanged(at=press.first_at))
            return
        self._blind_presses.append(_BlindPress(side=side, at=press.first_at, clock=self._clock))

    def _fresh_setting(self, reading: ClockReading) -> bool:
        """Whether *reading* shows a clock set for this game's start (both sides at the control's first period).

        Only such a clock tells on which side White sits: a clock still showing the previous game's times
        (no new setting after ``new-game``) runs for whoever pressed last in that game. Without a known time
        control, or from a set-up position, any reading counts.
        """
        tc = self._tc
        if tc is None or self.game.start_fen is not None or reading.left is None or reading.right is None:
            return True
        base = float(tc.periods[0].seconds)
        low, high = sorted((reading.left, reading.right))
        return abs(high - base) <= 2 and base - 120 <= low <= base + 2

    def _check_clock_setting(self, outs: list[Output], white: float | None, black: float | None, at: float) -> None:
        """CLOCK_SETTING_SUSPECT: at the start, the clock does not show the configured time (6.10.2)."""
        tc = self._tc
        if tc is None or white is None or black is None or self._records or self.game.start_fen is not None:
            return
        base = float(tc.periods[0].seconds)
        # Black's time does not run before White's first move; White's may have run a little
        if abs(black - base) > 2 or not base - 120 <= white <= base + 2:
            self._raise(outs, "CLOCK_SETTING_SUSPECT", None, at, [Evidence(at=at, event="clock")],
                        text=f"the clock shows White {white:.0f} s, Black {black:.0f} s; the control "
                             f"{tc.pgn()} starts with {base:.0f} s each: correct the setting (6.10.2)")

    def _check_period(self, outs: list[Output], side: chess.Color, press: _Press) -> None:
        """T55c: the clock's period transition against the moves completed by the Laws (6.10.2, 7.3 #3)."""
        tc = self._tc
        pre = press.pre_clock
        if tc is None or pre is None:
            return
        before = pre.white if side == chess.WHITE else pre.black
        after = self._clock.white if side == chess.WHITE else self._clock.black
        if before is None or after is None:
            return
        done = self._law_moves(side)
        boundary = tc.period_of_move(done) != tc.period_of_move(done + 1)
        added_period = after - before > tc.bonus_s + 60
        if added_period == boundary:
            return
        name = "White" if side == chess.WHITE else "Black"
        what = (f"the clock added the next period's time at {name}'s press, but by the Laws {name} has completed "
                f"{done} moves" if added_period else
                f"{name} completed move {done}, the end of a period, but the clock added no period time")
        self._raise(outs, "CLOCK_MOVE_COUNTER_MISMATCH", side, press.first_at, press.evidence,
                    text=f"{what}: correct the move counter and the time (6.10.2, 7.1)")

    def _on_pause(self, outs: list[Output], at: float) -> None:
        diff = self._index.classify(self._phys)
        if (diff.kind is DiffClass.PARTIAL and diff.move is not None and diff.move.promotion) or (
                diff.kind is DiffClass.IN_HAND and self._promo_seen):
            self._raise(outs, "PROMOTION_PAUSE_REQUEST", self._board.turn, at, [Evidence(at=at, event="PAUSE")],
                        text="clock paused during a promotion: supply the piece (6.11.2)")
        else:
            self._raise(outs, "CLOCK_PAUSED", None, at, [Evidence(at=at, event="PAUSE")],
                        text="clock paused: the arbiter checks the reason (6.11)")
        outs.append(StateChanged(at=at))

    def _on_flag(self, outs: list[Output], new_w: bool, new_b: bool, both: bool, at: float) -> None:
        timing = self.rules.timing
        for color, new in ((chess.WHITE, new_w), (chess.BLACK, new_b)):
            if new:
                self._flag_t[color] = at
        if self._mode is _Mode.GAME_OVER:
            end = self._game_end_at
            last = self._records[-1] if self._records else None
            if last is not None and end is not None and self._termination and \
                    self._termination.startswith("GAME_END") and abs(at - last.made_at) < \
                    timing.t_settle + timing.t_latency and ((new_w and last.side == chess.WHITE) or
                                                            (new_b and last.side == chess.BLACK)):
                self._raise(outs, "MATE_FLAG_RACE", last.side, at, [Evidence(at=last.made_at, event="made"),
                                                                     Evidence(at=at, event="FLAG")],
                            text="game-ending move and flag within the uncertainty of release; the arbiter decides")
            return
        if both:
            self._raise(outs, "BOTH_FLAGS_FALLEN", None, at, [Evidence(at=at, event="FLAG W"),
                                                               Evidence(at=at, event="FLAG B")],
                        text="both flags down: the first flag decides if known (clock display); otherwise 6.11 / "
                             "Guidelines III.3.1", result="1/2-1/2")
            return
        color = chess.WHITE if new_w else chess.BLACK
        # a game-ending move placed but not yet presumed released: a race (7.4)
        cand = self._cand
        if cand is not None and not cand.replace and self._board.turn == color:
            probe = self._board.copy(stack=False)
            probe.push(cand.move)
            if probe.is_checkmate() or probe.is_stalemate() or laws.is_dead_position(probe):
                self._raise(outs, "MATE_FLAG_RACE", color, at,
                            [Evidence(at=cand.at, event="placed"),
                             Evidence(at=at, event=f"FLAG {_side_letter(color)}")],
                            text="game-ending move and flag within the uncertainty of release: the mate stands only "
                                 "if the piece was released before the flag (arbiter)")
                return
        tc = self._tc
        done = self._law_moves(color)
        if tc is not None and done >= 1 and tc.period_of_move(done) != tc.period_of_move(done + 1):
            self._raise(outs, "CLOCK_MOVE_COUNTER_MISMATCH", color, at,
                        [Evidence(at=at, event=f"FLAG {_side_letter(color)}")],
                        text=f"flag after {done} completed moves, the end of a period: the move requirement was met, "
                             "so this is not a loss on time; the clock did not add the next period (6.4, 6.10.2)")
            return
        opp = not color
        mate = laws.can_mate(self._board, opp)
        result = "1/2-1/2" if mate is False else ("0-1" if color == chess.WHITE else "1-0")
        self._raise(outs, "FLAG_FALL", color, at, [Evidence(at=at, event=f"FLAG {_side_letter(color)}")],
                    result=result,
                    text=("the opponent cannot checkmate: draw (6.9)" if mate is False else
                          "loss on time unless the move requirement was met or the game already ended (6.4, 6.9)"))

    # ------------------------------------------------------------------ press table (§3.5)

    def _on_press(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence) -> None:
        self._last_press_at = at
        if self._mode is _Mode.GAME_OVER or self._mode is _Mode.AWAIT_RESTORE:
            return
        turn = self._board.turn
        if side == turn and self._uncompleted.get(side) is not None:
            # late press (6.2.2): the opponent has already replied; this press completes the earlier move
            ply = self._uncompleted[side]
            self._complete(outs, ply, at, Completion.PRESS)
            self._raise(outs, "CLOCK_LATE_PRESS", side, at, [ev],
                        text="press after the opponent's reply: allowed (6.2.2)")
            outs.append(StateChanged(at=at))
            return
        if side != turn:
            own_ply = self._uncompleted.get(side)
            if own_ply is not None:
                ply = own_ply
                if self._own_changed(side):
                    base = self._base_index()
                    bdiff = base.classify(self._phys)
                    if bdiff.kind is not DiffClass.LEGAL and bdiff.kind is not DiffClass.NONE:
                        # the made move was changed into something that is not a legal move
                        last = self._records[-1]
                        self._board.pop()
                        self._records.pop()
                        self._keys.pop()
                        self._rebuild_index()
                        outs.append(MovesRetracted(at=at, to_ply=len(self._records), reason="released move changed"))
                        self._uncompleted.pop(side, None)
                        self._raise(outs, "RELEASED_MOVE_CHANGED", side, at, self._seg_evidence[-6:], move=last.san,
                                    text=f"{last.san} was presumed released; the first released move stands (4.7)",
                                    reinstate_ply=last.ply)
                        self._extra_lifts = self._prev_lifts  # the mover's segment before his made move
                        try:
                            self._press_as_mover(outs, side, at, ev, bdiff)
                        finally:
                            self._extra_lifts = []
                        return
                late = ply < len(self._records)
                self._complete(outs, ply, at, Completion.PRESS)
                self._press_completed(outs, side, at, ev)
                if late:
                    self._raise(outs, "CLOCK_LATE_PRESS", side, at, [ev],
                                text="press after the opponent's reply: allowed (6.2.2)")
                outs.append(StateChanged(at=at))
                return
            self._raise(outs, "CLOCK_PRESS_NO_MOVE", side, at, [ev], penalty=self._penalty(side, "CLOCK_PRESS_NO_MOVE"),
                        text="press without a move")
            return
        diff = self._index.classify(self._phys)
        self._press_as_mover(outs, side, at, ev, diff)

    def _press_as_mover(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence, diff: Diff) -> None:
        timing = self.rules.timing
        kind = diff.kind
        if kind is DiffClass.LEGAL and diff.move is not None and self._board.turn == side:
            made_at = self._match_t
            self._cand = None
            if made_at > at:
                self._raise(outs, "LATENCY_RACE", side, at, [ev, Evidence(at=made_at, event="placed")],
                            text="the press and the placement that finished the move fell within T_latency")
                if made_at - at > timing.t_latency / 2:
                    self._raise(outs, "CLOCK_PRESS_OTHER_HAND_SUSPECTED", side, at, [ev],
                                text="placement registered well after the press (6.2.3)")
            self._make(outs, diff.move, made_at, completed=True, completion=Completion.PRESS, press_at=at)
            self._press_completed(outs, side, at, ev)
            return
        if kind is DiffClass.NONE:
            self._raise(outs, "CLOCK_PRESS_NO_MOVE", side, at, [ev], penalty=self._penalty(side, "CLOCK_PRESS_NO_MOVE"),
                        text="press without a move")
            self._pressed_no_move = side
            return
        if kind is DiffClass.IN_HAND:
            missing = [sq for sq in _bits(diff.changed) if self._index.piece_at(sq) is not None
                       and self._index.piece_at(sq).color == side]  # type: ignore[union-attr]
            if self._promo_seen and len(missing) == 1:
                self._illegal_press(outs, side, at, ev, "PROMOTION_INCOMPLETE_AT_PRESS", subtype=None, diff=diff)
                return
            self._raise(outs, "CLOCK_PRESS_PIECE_IN_HAND", side, at, [ev],
                        penalty=self._penalty(side, "CLOCK_PRESS_PIECE_IN_HAND"), text="press with a piece in hand")
            self._raise(outs, "CLOCK_PRESS_OTHER_HAND_SUSPECTED", side, at, [ev],
                        text="press while a piece is still in the air: the other hand pressed? (6.2.3)")
            self._pressed_no_move = side
            return
        if kind is DiffClass.PARTIAL:
            code = diff.subtype or "POSITION_MISMATCH_AT_PRESS"
            self._illegal_press(outs, side, at, ev, code, subtype=None, diff=diff)
            return
        if kind is DiffClass.ILLEGAL_1:
            self._illegal_press(outs, side, at, ev, "ILLEGAL_MOVE", subtype=diff.subtype, diff=diff)
            return
        first = self._genuine_lifts(side)
        involved = {first[0][1]} if first else set()
        for a, b in diff.relocations:
            if a in involved:
                involved.add(b)
        knock = self._knock(self._index.board, side, self._seg_lifts, involved) if involved else False
        if kind is DiffClass.TWO_MOVES:
            if knock:
                self._illegal_press(outs, side, at, ev, "DISPLACED_NOT_RESTORED_AT_PRESS", subtype=None, diff=diff)
            else:
                self._illegal_press(outs, side, at, ev, "ILLEGAL_MOVE", subtype="TWO_PIECES_MOVED", diff=diff)
            return
        code = "DISPLACED_NOT_RESTORED_AT_PRESS" if knock else "POSITION_MISMATCH_AT_PRESS"
        self._illegal_press(outs, side, at, ev, code, subtype=None, diff=diff)

    def _press_completed(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence) -> None:
        """R19: a move made with two hands (suspected) and completed by a press."""
        suspected = self._two_hands.pop(side, None)
        if suspected is None:
            return
        self._raise(outs, "TWO_HANDS_AT_PRESS", side, at, [*suspected.evidence, ev],
                    penalty=self._penalty(side, "TWO_HANDS_AT_PRESS"),
                    text=f"two-handed move ({suspected.id}) completed by a press; the arbiter must confirm (7.5.4)")

    def _penalty(self, side: chess.Color, code: str, subtype: str | None = None) -> laws.Penalty | None:
        """Penalty suggestion of an illegal-move-class code (the count goes up once per move)."""
        full = f"{code}/{subtype}" if subtype else code
        self._limit_pending = False
        if not laws.is_illegal_move_class(full, self.edition):
            return None
        n = self._illegal[side] + 1
        if self.regime != Regime.OTHERWISE.value:
            self._illegal[side] = n
        mate = laws.can_mate(self._board, not side)
        pen = laws.suggest_penalty(edition=self.edition, category=self.category, regime=self.regime, n=n,
                                   offender=side, opp_can_mate=mate,
                                   observed_in_window=True, increment_earned_s=self._increment,
                                   blitz_adequate_penalty_2023=self.rules.blitz_adequate_penalty_2023)
        self._limit_pending = pen.result is not None and n >= (3 if self.edition == 2009 else 2)
        self._limit_mate = mate
        return pen

    def _illegal_press(self, outs: list[Output], side: chess.Color, at: float, ev: Evidence, code: str, *,
                       subtype: str | None, diff: Diff) -> None:
        """An illegal-move-class (or mismatch) completion: report it, then play on from the physical board (G6)."""
        pre = self._board.copy(stack=False)
        pen = self._penalty(side, code, subtype)
        constraints = self._replacement_constraints(pre, diff)
        verify = code in ("CASTLING_INCOMPLETE_AT_PRESS", "PROMOTION_INCOMPLETE_AT_PRESS")
        desc = describe_change(pre, self._phys.squares)
        move_text: str | None = None
        if code == "PAWN_NOT_REPLACED" and diff.move is not None:
            queen = chess.Move(diff.move.from_square, diff.move.to_square, promotion=chess.QUEEN)
            if queen in pre.legal_moves and self.edition >= 2014:
                move_text = pre.san(queen)
        elif code == "CASTLING_INCOMPLETE_AT_PRESS" and diff.move is not None:
            move_text = pre.san(diff.move)
        elif code in ("POSITION_MISMATCH_AT_PRESS", "DISPLACED_NOT_RESTORED_AT_PRESS", "ILLEGAL_MOVE") and \
                subtype in (None, "TWO_PIECES_MOVED"):
            near = _nearest_legal(pre, self._phys.squares, diff.changed)
            if near is not None:
                move_text = pre.san(near)
        text = desc if pen is not None else f"position at the press: {desc}; the arbiter inspects"
        if move_text and pen is None:
            text += f"; closest legal move: {move_text} (the rest is restored on the offender's own time, 7.4)"
        irr = self._raise(outs, code, side, at, [*self._seg_evidence[-8:], ev], subtype=subtype, text=text,
                          move=move_text, constraints=constraints, verify=verify, penalty=pen,
                          reinstate_ply=len(self._records))
        if laws.is_illegal_move_class(f"{code}/{subtype}" if subtype else code, self.edition):
            if self.regime == Regime.OTHERWISE.value:
                self._claim_windows.append(_Window(irr.id, side))
            elif self._limit_pending and irr.suggestion.result:
                self._raise(outs, "ILLEGAL_MOVE_LIMIT_REACHED", side, at, [ev], result=irr.suggestion.result,
                            text="the illegal-move count reached the limit"
                                 + (": draw, the opponent cannot mate" if irr.suggestion.result == "1/2-1/2" else
                                    ": loss unless the arbiter finds that the opponent cannot mate"
                                    if self._limit_mate is None else ""))
        fix: chess.Move | None = None
        if code == "PAWN_NOT_REPLACED" and move_text and self.regime != Regime.OTHERWISE.value:
            fix = chess.Move.from_uci(diff.move.uci()[:4] + "q") if diff.move is not None else None
        elif code in ("DISPLACED_NOT_RESTORED_AT_PRESS", "POSITION_MISMATCH_AT_PRESS") and move_text:
            fix = pre.parse_san(move_text)
        two_hands = self._two_hands.pop(side, None)
        if two_hands is not None:
            # R19: a two-handed move that is also illegal for another reason counts once
            self._raise(outs, "TWO_HANDS_AT_PRESS", side, at, [*two_hands.evidence, ev],
                        text=f"two-handed move ({two_hands.id}) completed by a press; counted once with {irr.id} "
                             "(Arbiters' Manual)")
        self._adopt_physical(outs, side, at, desc, diff)
        if fix is not None and fix in pre.legal_moves:
            after = pre.copy(stack=False)
            after.push(fix)
            from boardd.core.recognizer import board_key  # noqa: PLC0415

            # when the board is put right (the arbiter's fix, 7.4.1 / 7.5.2), the law-based move replaces the record
            self._pending_fix = (len(self._records), board_key(after), fix, pre, irr.id)
        touched = diff.relocations[0][0] if diff.relocations else None
        if touched is None:
            first = self._genuine_lifts(side)
            touched = first[0][1] if first else None
        if touched is not None and any(m.from_square == touched for m in pre.legal_moves):
            self._replacement = (irr.id, len(self._records) - 1, touched)

    def _replacement_constraints(self, pre: chess.Board, diff: Diff) -> tuple[str, ...]:
        """Touch-move constraints for the replacement move after reinstatement (§3.7)."""
        # the first piece touched (lifted) counts first; then the pieces that were moved
        squares: list[int] = []
        for _, sq, piece in self._extra_lifts + self._seg_lifts:
            if piece.color == pre.turn and pre.piece_at(sq) == piece and sq not in squares:
                squares.append(sq)
        for origin, _ in diff.relocations:
            if origin not in squares:
                squares.append(origin)
        for sq in squares:
            moves = [m for m in pre.legal_moves if m.from_square == sq]
            if moves:
                touched = pre.piece_at(sq)
                name = _piece_text(touched) if touched else "piece"
                return (f"the {name} on {chess.square_name(sq)} must move: "
                        + ", ".join(sorted(pre.san(m) for m in moves)),)
        return ("any legal move (no touched piece can move, 4.5): "
                + ", ".join(sorted(pre.san(m) for m in pre.legal_moves)),)

    def _adopt_physical(self, outs: list[Output], side: chess.Color, at: float, desc: str, diff: Diff) -> None:
        """G6: play continues from the physical position (MoveRecord.legal=False)."""
        if diff.kind in (DiffClass.NONE, DiffClass.IN_HAND) and not self._promo_seen:
            return
        board = chess.Board(None, chess960=self._board.chess960)
        for sq, content in enumerate(self._phys.squares):
            if isinstance(content, chess.Piece):
                board.set_piece_at(sq, content)
        board.turn = not side
        board.castling_rights = self._board.castling_rights
        board.castling_rights = board.clean_castling_rights()
        board.ep_square = None
        board.fullmove_number = self._board.fullmove_number + (1 if side == chess.BLACK else 0)
        move = diff.move if diff.kind is DiffClass.ILLEGAL_1 and diff.move is not None else None
        rec = MoveRecord(ply=len(self._records) + 1, uci=move.uci() if move else "0000", san=desc, side=side,
                         fen_after=board.fen(), made_at=self._last_board_t if self._last_board_t > -1e17 else at,
                         completed_at=at, completion=Completion.PRESS, clock_white=self._clock.white,
                         clock_black=self._clock.black, legal=False)
        self._records.append(rec)
        # keep the python-chess move stack in step with the record: restart from the physical position
        self._board = board
        self._rebuild_index()
        self._keys.append(self._index.key)
        self._uncompleted.pop(side, None)
        outs.append(MoveMade(move=rec))
        outs.append(MoveCompleted(move=rec))
        self._prev_lifts = self._seg_lifts
        self._opp_early_raised = False
        self._castle_king = None
        self._castle_released = None
        self._new_segment(at)
        self._promo_seen = False
        self._illegal_state = None
        self._illegal_settled = None
        self._close_claim_windows(outs, side, at)
        self._after_completion(outs, rec, at)
        outs.append(StateChanged(at=at))

    def _close_claim_windows(self, outs: list[Output], mover: chess.Color, at: float) -> None:
        """R22: the opponent's next MADE move closes the claim window of an illegal move."""
        keep: list[_Window] = []
        for win in self._claim_windows:
            if win.offender == mover:
                keep.append(win)
                continue
            irr = self._irr.get(win.irregularity_id)
            if irr is not None and irr.status is not Status.RESOLVED and not win.claimed:
                self._raise(outs, "ILLEGAL_MOVE_STANDS", win.offender, at, [],
                            text=f"no claim or ruling before the opponent's move was made: {irr.code} stands")
        self._claim_windows = keep

    # ------------------------------------------------------------------ arbiter

    def _on_resolve(self, outs: list[Output], event: Resolve, at: float) -> None:
        irr = self._irr.get(event.irregularity_id)
        if irr is None:
            _LOGGER.warning("resolve for unknown irregularity %s", event.irregularity_id)
            return
        win = next((w for w in self._claim_windows if w.irregularity_id == irr.id), None)
        ruling = event.ruling or ("accepted" if event.accept else "dismissed")
        if win is not None and event.accept:
            win.claimed = True
            self._claim_windows.remove(win)
            side = win.offender
            n = self._illegal[side] + 1
            self._illegal[side] = n
            pen = laws.suggest_penalty(edition=self.edition, category=self.category, regime=self.regime, n=n,
                                       offender=side, opp_can_mate=laws.can_mate(self._board, not side),
                                       observed_in_window=True, increment_earned_s=self._increment,
                                       blitz_adequate_penalty_2023=self.rules.blitz_adequate_penalty_2023)
            sug = dataclasses.replace(irr.suggestion, add_to_opponent_s=pen.add_to_opponent_s, result=pen.result,
                                      remove_from_offender_s=pen.remove_from_offender_s, text=pen.text)
            self._update(outs, dataclasses.replace(irr, suggestion=sug, status=Status.RESOLVED, ruling=ruling))
            return
        was_open = irr.status is not Status.RESOLVED
        self._update(outs, dataclasses.replace(irr, status=Status.RESOLVED, ruling=ruling))
        if irr.code == "POSITION_DIVERGENCE" and was_open and irr.ply == len(self._records) \
                and self._mode is _Mode.NORMAL and self._phys.key() != self._index.key:
            if event.accept:
                self._on_reinstate(outs, len(self._records), at)  # the suggestion: put the position back
            else:
                self._adopt_divergence(outs, irr, at)

    def _adopt_divergence(self, outs: list[Output], irr: Irregularity, at: float) -> None:
        """A POSITION_DIVERGENCE dismissed (no reinstatement): the game goes on from the board.

        The board still differs from the official position, so the physical position is adopted as a record
        entry with ``legal=False`` (like an illegal move that stood, G6): the moves played from it are
        recorded again instead of the record staying stuck. The side to move is the side whose clock runs;
        without a running clock it is unknown: the side to move stays as it was, and the first move of the
        other side turns it round (:meth:`_adopted_turn`). (An accepted divergence is a reinstatement.)
        """
        if self._setting_up or self._markers or self._impossible_since is not None:
            return
        clock_live = self._clock_seen and not self._clock_down and not self._paused and self._running is not None
        turn = self._running if clock_live and self._running is not None else self._board.turn
        board = chess.Board(None, chess960=self._board.chess960)
        for sq, content in enumerate(self._phys.squares):
            if isinstance(content, chess.Piece):
                board.set_piece_at(sq, content)
        board.turn = turn
        board.castling_rights = self._board.castling_rights
        board.castling_rights = board.clean_castling_rights()
        board.ep_square = None
        board.fullmove_number = self._board.fullmove_number + (1 if turn == chess.WHITE and
                                                               self._board.turn == chess.BLACK else 0)
        desc = describe_change(self._board, self._phys.squares)
        rec = MoveRecord(ply=len(self._records) + 1, uci="0000", san=f"position adopted ({irr.id}): {desc}",
                         side=not turn, fen_after=board.fen(), made_at=at, completed_at=at, completion=None,
                         clock_white=self._clock.white, clock_black=self._clock.black, legal=False)
        self._records.append(rec)
        self._board = board
        self._rebuild_index()
        self._keys.append(self._index.key)
        self._uncompleted.clear()
        self._adopted_open = None if clock_live else rec.ply
        self._divergence_key = None
        self._cand = None
        self._new_segment(at)
        outs.append(MoveMade(move=rec))
        outs.append(MoveCompleted(move=rec))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"adopted": irr.id, "ply": rec.ply}))
        outs.append(StateChanged(at=at))

    def _adopted_turn(self) -> None:
        """After a position adopted without knowing the side to move: the first move tells it."""
        ordinary = (DiffClass.NONE, DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND)
        if self._index.classify(self._phys).kind in ordinary:
            return
        flipped = self._board.copy(stack=False)
        flipped.turn = not flipped.turn
        index = PositionIndex(flipped)
        if index.classify(self._phys).kind not in (DiffClass.LEGAL, DiffClass.PARTIAL, DiffClass.IN_HAND):
            return
        self._adopted_open = None
        rec = self._records[-1]
        self._records[-1] = dataclasses.replace(rec, side=not rec.side, fen_after=flipped.fen())
        self._board = flipped
        self._index = index
        self._keys[-1] = index.key
        self._mask.clear()
        self._oot_raised = False

    def _on_reinstate(self, outs: list[Output], ply: int, at: float) -> None:
        ply = max(0, min(ply, len(self._records)))
        rep = self._replacement
        self._replacement_due = rep if rep is not None and rep[1] == ply else None
        self._retract_to(outs, ply, at, "reinstated by the arbiter")
        if self._phys.key() != self._index.key:
            self._mode = _Mode.AWAIT_RESTORE
            self._restore_key = self._index.key
        else:
            self._mode = _Mode.NORMAL
            outs.append(GameEvent(at=at, type="REINSTATED", details={"ply": ply}))
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", details={"reinstate_ply": ply}))

    def _retract_to(self, outs: list[Output], ply: int, at: float, reason: str) -> None:
        if ply >= len(self._records):
            return
        fen = self._records[ply - 1].fen_after if ply > 0 else self._start_fen
        board = chess.Board(fen, chess960=self.game.chess960)
        # rebuild the move stack from the last legal restart so repetition checks keep working
        del self._records[ply:]
        del self._keys[ply + 1:]
        self._board = self._replay_board(ply) or board
        self._rebuild_index()
        for color in (chess.WHITE, chess.BLACK):
            p = self._uncompleted.get(color)
            if p is not None and p > ply:
                del self._uncompleted[color]
        self._cand = None
        self._mask.clear()
        self._seg_lifts = []
        self._seg_places = []
        self._seg_start = at
        self._opp_started = False
        self._oot_raised = False
        self._pressed_no_move = None
        outs.append(MovesRetracted(at=at, to_ply=ply, reason=reason))
        outs.append(StateChanged(at=at))

    def _replay_board(self, ply: int) -> chess.Board | None:
        board = chess.Board(self._start_fen, chess960=self.game.chess960)
        for rec in self._records[:ply]:
            if not rec.legal:
                board = chess.Board(rec.fen_after, chess960=self.game.chess960)
                continue
            try:
                board.push_uci(rec.uci)
            except ValueError:
                return None
        return board

    def _takeback(self, outs: list[Output], ply: int, at: float) -> None:
        retracted = [r.san for r in self._records[ply:]]
        self._retract_to(outs, ply, at, "takeback")
        hint = ""
        if any(i.code == "ILLEGAL_MOVE_STANDS" for i in self._irr.values()):
            hint = " Mutual correction of an illegal move is allowed without the arbiter (A.5.2/A.4.2)."
        self._raise(outs, "TAKEBACK_DETECTED", None, at, self._seg_evidence[-4:],
                    text=f"the board returned to the position after ply {ply}: {' '.join(retracted)} retracted. "
                         f"Under the Laws a released legal move stands (4.7).{hint}",
                    move=retracted[0] if retracted else None, reinstate_ply=ply + len(retracted))
        outs.append(GameEvent(at=at, type="TAKEBACK_DETECTED", details={"to_ply": ply, "moves": retracted}))

    def _on_set_clock(self, outs: list[Output], event: SetClock, at: float) -> None:
        self._clock = dataclasses.replace(self._clock, white=event.white, black=event.black)
        if self._model is not None:
            self._model.set_times(at, event.white, event.black, event.moves_white, event.moves_black)
            self._model_flag_done = False
            if event.moves_white is not None:
                self._base_moves[chess.WHITE] += event.moves_white - self._law_moves(chess.WHITE)
            if event.moves_black is not None:
                self._base_moves[chess.BLACK] += event.moves_black - self._law_moves(chess.BLACK)
        self._raise(outs, "ARBITER_ADJUST", None, at, [Evidence(at=at, event="ARB set clock")],
                    text=f"clock set by the arbiter: White {event.white:.0f} s, Black {event.black:.0f} s")
        outs.append(ClockUpdate(at=at, clock=self._clock))

    def _on_link(self, outs: list[Output], event: LinkChanged, at: float) -> None:
        name = event.link.value
        outs.append(LinkUpdate(at=at, link=name, up=event.up, detail=event.detail))
        kind = f"{name.upper()}_{'RECONNECTED' if event.up else 'DISCONNECTED'}"
        outs.append(GameEvent(at=at, type=kind, details={"detail": event.detail}))
        if event.link is Link.BOARD and event.up:
            self._resync = True  # the next board dump reconciles what was missed
        elif event.link is Link.BOARD:
            self._board_down = True  # presses are recorded, not judged, until the board reports again
        if event.link is Link.CLOCK and not event.up and not self._clock_down:
            self._clock_lost(outs, at)
        elif event.link is Link.CLOCK and event.up:
            self._clock_down = False

    def _clock_lost(self, outs: list[Output], at: float) -> None:
        """The clock link went down: play on as without a clock until its readings come back.

        Moves are completed by the player's next move (6.2.1.2) and no press-related code is raised for
        moves made, or left uncompleted, while it is down; the clock is published as unknown (no times, not
        running), so no move carries a frozen ``[%clk]``. The first reading after the outage takes the lever
        as it finds it (presses during the outage were not seen).
        """
        self._clock_down = True
        if not self._clock_seen:
            return  # no clock yet (the engine keeps time if it can): nothing to forget
        self._clock_resync = True
        self._clockless.update(self._uncompleted.values())
        self._held_reading = None
        self._prev_reading = None
        self._shown = None
        self._paused = False
        self._clock = ClockState()
        outs.append(ClockUpdate(at=at, clock=self._clock))
        outs.append(StateChanged(at=at))


#: A suspect reading that no other reading follows within this time is taken as meant (s): a running DGT clock
#: sends a reading at least every second, so a glitch is contradicted well before; silence after it is not.
_CLOCK_HOLD_S = 2.0


def _suspect_reading(reading: ClockReading) -> bool:
    """Does *reading* need the next reading to confirm it (picochess's "0:00:00 glitch" filter)?

    Suspect (unless a flag bit is set): the running side shows 0:00. A big drop of a running time is not
    suspect by itself: it is what the clock shows after an arbiter's correction, and in a replay of a raw
    capture the time between readings is inferred, not measured.
    """
    if reading.left_flag or reading.right_flag:
        return False  # the clock's own flag bit: no confirmation needed
    running = reading.running
    return running is not None and (reading.left if running is ClockSide.LEFT else reading.right) == 0


def _clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _rotation(quarter_turns: int) -> tuple[int, ...]:
    """Board-frame square -> official square for a board turned *quarter_turns* times."""
    out = []
    for sq in chess.SQUARES:
        f, r = chess.square_file(sq), chess.square_rank(sq)
        for _ in range(quarter_turns):
            f, r = 7 - r, f
        out.append(chess.square(f, r))
    return tuple(out)


_ROTATIONS = tuple(_rotation(k) for k in range(4))


def _squares_apart(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    diff = 0
    for x, y in zip(a, b, strict=True):
        diff |= x ^ y
    return diff.bit_count()


_SYMBOLS = {(color, ptype): chess.Piece(ptype, color).symbol() for color in chess.COLORS for ptype in chess.PIECE_TYPES}


def _fen(board: chess.Board) -> str:
    """``board.fen()``, computed from the bitboards (python-chess's board_fen is slow per square)."""
    cells = ["1"] * 64
    for color in chess.COLORS:
        occ = board.occupied_co[color]
        for ptype, bb in ((chess.PAWN, board.pawns), (chess.KNIGHT, board.knights), (chess.BISHOP, board.bishops),
                          (chess.ROOK, board.rooks), (chess.QUEEN, board.queens), (chess.KING, board.kings)):
            sym = _SYMBOLS[(color, ptype)]
            for sq in chess.scan_forward(bb & occ):
                cells[sq] = sym
    ranks = []
    for rank in range(7, -1, -1):
        row = "".join(cells[rank * 8:rank * 8 + 8])
        for n in range(8, 1, -1):
            row = row.replace("1" * n, str(n))
        ranks.append(row)
    ep = chess.SQUARE_NAMES[board.ep_square] if board.ep_square is not None and board.has_legal_en_passant() else "-"
    castling = board.castling_xfen()
    turn = "w" if board.turn else "b"
    return f"{'/'.join(ranks)} {turn} {castling} {ep} {board.halfmove_clock} {board.fullmove_number}"


def _nearest_legal(board: chess.Board, squares: list[Content], changed: int) -> chess.Move | None:
    """The legal move whose position differs least from the physical board (at most two squares off)."""
    best: tuple[int, chess.Move] | None = None
    seen: set[chess.Move] = set()
    for move in [*board.generate_legal_moves(from_mask=changed), *board.generate_legal_moves(to_mask=changed)]:
        if move in seen:
            continue
        seen.add(move)
        board.push(move)
        off = sum(1 for sq in _bits(changed) if board.piece_at(sq) != squares[sq])
        board.pop()
        if off <= 2 and (best is None or off < best[0]):
            best = (off, move)
    return best[1] if best else None


def _bits(bb: int) -> list[int]:
    out = []
    while bb:
        lsb = bb & -bb
        out.append(lsb.bit_length() - 1)
        bb ^= lsb
    return out


def _castling_rook_square(board: chess.Board, move: chess.Move) -> int:
    if board.chess960 or board.piece_type_at(move.to_square) == chess.ROOK:
        return move.to_square
    rank = chess.square_rank(move.from_square)
    return chess.square(7 if chess.square_file(move.to_square) > chess.square_file(move.from_square) else 0, rank)


def _illegal_position(board: chess.Board) -> str | None:
    pawns_last = board.pawns & (chess.BB_RANK_1 | chess.BB_RANK_8)
    if pawns_last:
        return "pawn on the last rank"
    wk = board.king(chess.WHITE)
    bk = board.king(chess.BLACK)
    if wk is not None and bk is not None and board.is_attacked_by(chess.BLACK, wk) \
            and board.is_attacked_by(chess.WHITE, bk):
        return "both kings in check"
    return None


def _search(board: chess.Board, target: tuple[int, ...], depth: int, changed: int) -> list[chess.Move] | None:
    """Shortest sequence of 2..depth legal moves from *board* to the placement *target* (pruned)."""
    from boardd.core.recognizer import board_key  # noqa: PLC0415

    work = board.copy(stack=False)

    def rec(d: int, touched: int) -> list[chess.Move] | None:
        if board_key(work) == target:
            return []
        if d == 0:
            return None
        for move in list(work.legal_moves):
            bits = (1 << move.from_square) | (1 << move.to_square)
            if not bits & (changed | touched):
                continue
            work.push(move)
            sub = rec(d - 1, touched | bits)
            work.pop()
            if sub is not None:
                return [move, *sub]
        return None

    for d in range(2, depth + 1):
        found = rec(d, 0)
        if found:
            return found
    return None


_ARTICLE4 = frozenset({"TOUCH_MOVE_SUSPECTED", "TOUCH_CAPTURE_SUSPECTED", "TOUCH_MOVE_VIOLATION",
                       "RELEASED_MOVE_CHANGED", "CASTLING_ROOK_FIRST", "CASTLING_KING_RELEASED_NOT_COMPLETED",
                       "PROMOTION_CHOICE_CHANGED", "TWO_HANDS_SUSPECTED"})
