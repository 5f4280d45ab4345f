"""Time controls and the clock model (rules-spec 7.2-7.5).

Theory of operation
-------------------
:class:`TimeControl` is the value the arbiter configures: one or more periods
(``moves`` per period, or ``None`` for "all remaining moves"), plus one bonus
mode (Fischer increment, simple delay or Bronstein delay) that applies from
``bonus_from_move`` on. It parses and formats the PGN ``TimeControl`` tag
(PGN standard 9.6.1) with two boardd extensions for delays: ``5400d5`` (simple
delay, the Laws' "time-delay mode", 6.3.2) and ``5400b5`` (Bronstein).

:class:`ClockModel` is a sans-I/O model of a FIDE-approved electronic clock.
Every method takes the event time ``at``; nothing here reads a clock. The
model keeps, per side, the main time left at the start of the current turn
and the seconds used in that turn; the time shown at any instant follows from
those and the bonus mode:

* NONE / FISCHER: ``left = turn_start - used`` (Fischer adds ``bonus_s`` at
  the press, 7.3 #2);
* DELAY_SIMPLE: ``left = turn_start - max(0, used - delay)``: the main time
  does not move during the first ``delay`` seconds; unused delay is not
  banked;
* DELAY_BRONSTEIN: ``left = turn_start - used`` while thinking (so the flag
  can fall inside the delay window), and ``min(used, delay)`` is credited
  back at the press.

Period transitions add the next period's time when a side completes the last
move of a period; time saved carries over (6.3.2). Once a flag has fallen in
the last period, neither increment nor delay is credited any more (FIDE
equipment standard 5.1 I). A flag that falls in an earlier period is
remembered (the clock shows it) but the clock keeps counting moves and adds
the next period as real clocks do.
"""

from __future__ import annotations

import copy
import enum
import logging
import math
import re
from dataclasses import dataclass

import chess

from boardd.core.errors import ConfigError

__all__ = ["BonusMode", "ClockModel", "Period", "PressResult", "TimeControl"]

_LOGGER = logging.getLogger(__name__)

#: Categories use the time available within the first 60 moves (rules-spec 7.1, O10).
_T60_MOVES = 60

_FIELD_RE = re.compile(r"^(?:(?P<moves>\d+)/)?(?P<seconds>\d+)(?:(?P<mode>[+db])(?P<bonus>\d+))?$")


class BonusMode(enum.Enum):
    """How the clock credits time per move (rules-spec 7.2, 7.3 #2)."""

    NONE = "none"
    FISCHER = "fischer"
    DELAY_SIMPLE = "delay"
    DELAY_BRONSTEIN = "bronstein"


_MODE_CHAR = {BonusMode.FISCHER: "+", BonusMode.DELAY_SIMPLE: "d", BonusMode.DELAY_BRONSTEIN: "b"}
_CHAR_MODE = {char: mode for mode, char in _MODE_CHAR.items()}


@dataclass(frozen=True, slots=True)
class Period:
    """One period of a time control.

    Attributes:
        moves: moves to complete in this period, or ``None`` for all remaining moves.
        seconds: time added for this period.
    """

    moves: int | None
    seconds: int

    def __post_init__(self) -> None:
        if self.moves is not None and (not isinstance(self.moves, int) or self.moves < 1):
            raise ConfigError(f"a period needs a positive number of moves, got {self.moves!r}")
        if not isinstance(self.seconds, int) or self.seconds < 1:
            raise ConfigError(f"a period needs a positive number of seconds, got {self.seconds!r}")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A time control: periods plus one bonus mode (rules-spec 7.2).

    An empty ``periods`` tuple means "unknown / not timed" (PGN ``-`` or ``?``).
    If the last period has a move count, it repeats (PGN semantics).

    Attributes:
        periods: the periods in order.
        bonus_mode: increment or delay mode.
        bonus_s: the increment or delay in seconds.
        bonus_from_move: first move (1-based, per player) that earns the bonus. It must be 1 or
            the first move of a period, so that the PGN form can express it.

    Example:
        >>> tc = TimeControl.parse("40/5400+30:1800+30")
        >>> tc.t60_s / 60
        150.0
        >>> tc.pgn()
        '40/5400+30:1800+30'
    """

    periods: tuple[Period, ...]
    bonus_mode: BonusMode = BonusMode.NONE
    bonus_s: int = 0
    bonus_from_move: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.periods, tuple) or not all(isinstance(p, Period) for p in self.periods):
            raise ConfigError("periods must be a tuple of Period")
        for period in self.periods[:-1]:
            if period.moves is None:
                raise ConfigError("only the last period may cover all remaining moves")
        if not isinstance(self.bonus_s, int) or self.bonus_s < 0:
            raise ConfigError(f"bonus must be a non-negative number of seconds, got {self.bonus_s!r}")
        if (self.bonus_mode is BonusMode.NONE) != (self.bonus_s == 0):
            raise ConfigError("a bonus mode needs a positive bonus, and a bonus needs a mode")
        if not self.periods and self.bonus_s:
            raise ConfigError("an untimed control cannot have a bonus")
        if not isinstance(self.bonus_from_move, int) or self.bonus_from_move < 1:
            raise ConfigError(f"bonus_from_move must be a positive move number, got {self.bonus_from_move!r}")
        if self.bonus_s and self.bonus_from_move not in self._period_starts():
            raise ConfigError(
                f"the bonus must start at move 1 or at the first move of a period, got move {self.bonus_from_move}"
            )

    # --- PGN ----------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse a PGN ``TimeControl`` value (plus boardd's delay forms).

        Forms: ``"-"`` or ``"?"`` (untimed/unknown), ``"300"`` (sudden death),
        ``"900+10"`` (Fischer), ``"40/5400+30:1800+30"`` (periods separated by ``:``),
        ``"5400d5"`` (simple delay), ``"5400b5"`` (Bronstein delay). All fields must use the
        same bonus; fields before the bonus starts may have none (``"40/7200:20/3600:900+30"``
        means +30 s from move 61).

        Raises:
            ConfigError: the text is not a time control boardd can model (with the reason).
        """
        if not isinstance(text, str):
            raise ConfigError(f"time control must be a string, got {type(text).__name__}", key="time_control")
        value = text.strip()
        if value in ("-", "?"):
            return cls(periods=())
        if not value:
            raise ConfigError("empty time control (use '-' for an untimed game)", key="time_control")
        periods: list[Period] = []
        bonuses: list[tuple[BonusMode, int] | None] = []
        for number, field_text in enumerate(value.split(":"), start=1):
            if field_text.startswith("*"):
                raise ConfigError(f"sandclock controls are not supported: {text!r}", key="time_control")
            match = _FIELD_RE.match(field_text)
            if match is None:
                raise ConfigError(
                    f"cannot read field {number} {field_text!r} of {text!r}: expected SECONDS, MOVES/SECONDS, "
                    "optionally followed by +INC, dDELAY or bBRONSTEIN",
                    key="time_control",
                )
            moves = int(match["moves"]) if match["moves"] is not None else None
            try:
                periods.append(Period(moves=moves, seconds=int(match["seconds"])))
            except ConfigError as exc:
                raise ConfigError(f"field {number} of {text!r}: {exc}", key="time_control") from None
            bonuses.append((_CHAR_MODE[match["mode"]], int(match["bonus"])) if match["mode"] else None)
        for period in periods[:-1]:
            if period.moves is None:
                raise ConfigError(f"only the last field of {text!r} may be sudden death", key="time_control")
        present = [b for b in bonuses if b is not None and b[1] > 0]
        if not present:
            return cls(periods=tuple(periods))
        if len(set(present)) > 1:
            raise ConfigError(f"all fields of {text!r} must use the same increment or delay", key="time_control")
        first = next(i for i, b in enumerate(bonuses) if b is not None and b[1] > 0)
        if any(b is None or b[1] == 0 for b in bonuses[first:]):
            raise ConfigError(f"once the bonus starts it must appear in every later field of {text!r}",
                              key="time_control")
        mode, bonus = present[0]
        from_move = 1 + sum(p.moves or 0 for p in periods[:first])
        return cls(periods=tuple(periods), bonus_mode=mode, bonus_s=bonus, bonus_from_move=from_move)

    def pgn(self) -> str:
        """Format as a PGN ``TimeControl`` value (delays in boardd's ``d``/``b`` form)."""
        if not self.periods:
            return "-"
        fields = []
        starts = self._period_starts()
        for index, period in enumerate(self.periods):
            text = str(period.seconds) if period.moves is None else f"{period.moves}/{period.seconds}"
            if self.bonus_s and starts[index] >= self.bonus_from_move:
                text += f"{_MODE_CHAR[self.bonus_mode]}{self.bonus_s}"
            fields.append(text)
        return ":".join(fields)

    def __str__(self) -> str:
        return self.pgn()

    # --- Derived values -----------------------------------------------------

    @property
    def is_timed(self) -> bool:
        """False for an unknown/untimed control (PGN ``-``)."""
        return bool(self.periods)

    def _period_starts(self) -> list[int]:
        """First move (1-based) of each listed period."""
        starts = []
        move = 1
        for period in self.periods:
            starts.append(move)
            move += period.moves or 0
        return starts

    def _period_at(self, index: int) -> Period:
        """Period ``index`` (0-based), continuing with repetitions of a last period that has a move count."""
        return self.periods[min(index, len(self.periods) - 1)]

    def _period_end(self, index: int) -> int | None:
        """Cumulative move count at the end of period ``index``, or None if it is sudden death."""
        total = 0
        for i in range(index + 1):
            moves = self._period_at(i).moves
            if moves is None:
                return None
            total += moves
        return total

    @property
    def base_s(self) -> int:
        """Seconds per player of the periods that begin within the first 60 moves (rules-spec 7.1, O10)."""
        total = 0
        index = 0
        start = 1
        while self.periods and start <= _T60_MOVES:
            period = self._period_at(index)
            total += period.seconds
            if period.moves is None:
                break
            start += period.moves
            index += 1
        return total

    @property
    def t60_s(self) -> float:
        """``base + 60 x bonus``, counting only bonuses earned within the first 60 moves (7.1)."""
        bonus_moves = max(0, _T60_MOVES - self.bonus_from_move + 1) if self.bonus_s else 0
        return float(self.base_s + bonus_moves * self.bonus_s)

    def period_of_move(self, move_no: int) -> int:
        """0-based index of the period that move ``move_no`` (1-based, per player) belongs to.

        A repeating last period keeps counting up (index beyond ``len(periods) - 1``).

        Raises:
            ValueError: ``move_no`` is not a positive integer, or the control is untimed.
        """
        if not isinstance(move_no, int) or move_no < 1:
            raise ValueError(f"move number must be a positive integer, got {move_no!r}")
        if not self.periods:
            raise ValueError("an untimed control has no periods")
        index = 0
        end = 0
        while True:
            moves = self._period_at(index).moves
            if moves is None:
                return index
            end += moves
            if move_no <= end:
                return index
            index += 1

    def is_last_period(self, index: int) -> bool:
        """True if period ``index`` is the final sudden-death period (equipment standard 5.1 I)."""
        return bool(self.periods) and index >= len(self.periods) - 1 and self.periods[-1].moves is None

    def bonus_applies(self, move_no: int) -> bool:
        """True if move ``move_no`` (1-based, per player) earns the increment or delay."""
        return self.bonus_s > 0 and move_no >= self.bonus_from_move


@dataclass(frozen=True, slots=True)
class PressResult:
    """What a press did to the presser's clock.

    Attributes:
        side: who pressed (whose move was completed).
        at: the event time of the press.
        bonus_s: increment or delay earned by this press: the Fischer increment, the Bronstein
            credit, or (simple delay) the delay seconds during which the main time stood still.
            This is what the Arbiters' Manual has the arbiter remove after an illegal press.
        period_added_s: time of the next period added at this press (0 if none).
        moves_completed: the presser's press count after the press.
        remaining_s: the presser's time after the press.
    """

    side: chess.Color
    at: float
    bonus_s: float
    period_added_s: int
    moves_completed: int
    remaining_s: float


class ClockModel:
    """Sans-I/O model of an electronic chess clock (rules-spec 7.3-7.5).

    ``running`` is the side whose clock runs now (None before the start and while paused);
    ``active`` is the side whose turn the clock shows, paused or not.

    Raises:
        ConfigError: the control is untimed (there is nothing to model).
    """

    def __init__(self, tc: TimeControl) -> None:
        if not tc.is_timed:
            raise ConfigError("cannot model the clock of an untimed game (time control '-')", key="time_control")
        self._tc = tc
        first = float(tc.periods[0].seconds)
        self._turn_start = {chess.WHITE: first, chess.BLACK: first}
        self._moves = {chess.WHITE: 0, chess.BLACK: 0}
        self._flag_at: dict[chess.Color, float | None] = {chess.WHITE: None, chess.BLACK: None}
        self._active: chess.Color | None = None
        self._paused = False
        self._used_before = 0.0  # active side's seconds used in this turn before ``_mark``
        self._mark = 0.0  # when the active side's clock last started running

    def __repr__(self) -> str:
        return (f"<ClockModel {self._tc.pgn()} white={self._turn_start[chess.WHITE]:.1f} "
                f"black={self._turn_start[chess.BLACK]:.1f} active={self._active} paused={self._paused}>")

    # --- State ----------------------------------------------------------------

    def snapshot(self) -> ClockModel:
        """An independent copy of the model as it stands now (to go back to: a made move taken back on the board
        before it was completed, rules-spec R07)."""
        twin = copy.copy(self)
        twin._turn_start = dict(self._turn_start)
        twin._moves = dict(self._moves)
        twin._flag_at = dict(self._flag_at)
        return twin

    @property
    def time_control(self) -> TimeControl:
        """The modelled control."""
        return self._tc

    @property
    def running(self) -> chess.Color | None:
        """The side whose clock runs, or None (not started, or paused)."""
        return None if self._paused else self._active

    @property
    def active(self) -> chess.Color | None:
        """The side whose turn the clock shows (also while paused), or None before the start."""
        return self._active

    @property
    def paused(self) -> bool:
        """True while the clock is paused (6.11)."""
        return self._paused

    def moves_completed(self, side: chess.Color) -> int:
        """Presses counted for ``side`` (the clock's move counter, 7.3 #3)."""
        return self._moves[side]

    def period_index(self, side: chess.Color) -> int:
        """0-based period ``side`` is playing in (the period of its next move)."""
        return self._tc.period_of_move(self._moves[side] + 1)

    # --- Time arithmetic ----------------------------------------------------

    def _delay_now(self, side: chess.Color) -> float:
        """Delay seconds for ``side``'s current move (0 unless a delay mode applies)."""
        if self._tc.bonus_mode in (BonusMode.DELAY_SIMPLE, BonusMode.DELAY_BRONSTEIN) and self._tc.bonus_applies(
            self._moves[side] + 1
        ):
            return float(self._tc.bonus_s)
        return 0.0

    def _used(self, at: float) -> float:
        """Seconds the active side has used in its current turn at ``at``."""
        used = self._used_before
        if not self._paused and self._active is not None:
            if at < self._mark:
                _LOGGER.debug("clock model: time went backwards (%.3f < %.3f); using %.3f", at, self._mark, self._mark)
            used += max(0.0, at - self._mark)
        return used

    def _charged(self, side: chess.Color, used: float) -> float:
        """Main time consumed by ``used`` seconds of thinking (before any credit at the press)."""
        if self._tc.bonus_mode is BonusMode.DELAY_SIMPLE:
            return max(0.0, used - self._delay_now(side))
        return used

    def remaining(self, side: chess.Color, at: float) -> float:
        """Time ``side`` has left at ``at``; never negative."""
        if side == self._active:
            return max(0.0, self._turn_start[side] - self._charged(side, self._used(at)))
        return max(0.0, self._turn_start[side])

    def flag_time(self, side: chess.Color) -> float | None:
        """When ``side``'s flag falls if nothing happens; None unless ``side``'s clock is running.

        For a side whose flag has already fallen this is a time in the past.
        """
        if self.running is None or side != self.running:
            return None
        budget = self._turn_start[side]
        if self._tc.bonus_mode is BonusMode.DELAY_SIMPLE:
            budget += self._delay_now(side)
        return self._mark + (budget - self._used_before)

    def flagged(self, side: chess.Color, at: float) -> bool:
        """True if ``side``'s flag has fallen at or before ``at`` (sticky until an arbiter edit)."""
        recorded = self._flag_at[side]
        if recorded is not None and recorded <= at:
            return True
        due = self.flag_time(side)
        return due is not None and due <= at

    def flag_fallen_at(self, side: chess.Color) -> float | None:
        """Time ``side``'s flag fell in a finished turn, if it did (in-progress turns: see :meth:`flag_time`)."""
        return self._flag_at[side]

    def _close_turn(self, at: float) -> float:
        """Freeze the active side's time at ``at``; return the seconds used in the turn."""
        side = self._active
        assert side is not None
        used = self._used(at)
        due = self.flag_time(side) if not self._paused else None
        left = self._turn_start[side] - self._charged(side, used)
        if left <= 0 and self._flag_at[side] is None:
            self._flag_at[side] = due if due is not None else at
        return used

    def _begin_turn(self, side: chess.Color, at: float) -> None:
        self._active = side
        self._used_before = 0.0
        self._mark = at
        self._paused = False

    # --- Transitions ----------------------------------------------------------

    def start(self, at: float, side: chess.Color = chess.WHITE) -> None:
        """Start ``side``'s clock at ``at`` (White at the start of the game, 6.6).

        Starting a clock that already runs restarts the count from ``at`` for ``side`` without
        touching the times of either side (logged).
        """
        if self._active is not None:
            _LOGGER.debug("clock model: start while already started; continuing with %s", chess.COLOR_NAMES[side])
            current = self._active
            used = self._close_turn(at)
            self._turn_start[current] = max(0.0, self._turn_start[current] - self._charged(current, used))
        self._begin_turn(side, at)

    def press(self, side: chess.Color, at: float) -> PressResult:
        """``side`` pressed its lever at ``at``: complete its move and start the opponent's clock.

        Applies the bonus (Fischer, simple delay, Bronstein), the period transition (time carries
        over) and the no-bonus-after-the-last-flag rule. Presses that do not stop a running clock
        of ``side`` change no time and count no move: before the start a press by ``side`` starts
        the opponent's clock (Black starting White's clock); while paused it only selects the side
        that runs on resume; a press on a clock that is already stopped (the opponent's runs) is
        ignored, as real clocks do.
        """
        if self._active is None:
            self._begin_turn(not side, at)
            return self._idle_result(side, at)
        if self._paused:
            if self._active == side:
                used = self._used(at)
                self._active = not side
                self._used_before = 0.0
                # The presser's thinking time so far is kept; no bonus is credited while paused.
                self._turn_start[side] = max(0.0, self._turn_start[side] - self._charged(side, used))
            return self._idle_result(side, at)
        if self._active != side:
            return self._idle_result(side, at)

        used = self._close_turn(at)
        move_no = self._moves[side] + 1
        period = self._tc.period_of_move(move_no)
        left = self._turn_start[side] - self._charged(side, used)
        flag_fell = left <= 0 or self._flag_at[side] is not None
        left = max(0.0, left)
        bonus = 0.0
        if self._tc.bonus_applies(move_no) and not (flag_fell and self._tc.is_last_period(period)):
            if self._tc.bonus_mode is BonusMode.FISCHER:
                bonus = float(self._tc.bonus_s)
            elif self._tc.bonus_mode is BonusMode.DELAY_BRONSTEIN:
                bonus = min(used, float(self._tc.bonus_s))
            elif self._tc.bonus_mode is BonusMode.DELAY_SIMPLE:
                # The delay is not a credit: it only kept the main time still (already in ``left``).
                bonus = min(used, float(self._tc.bonus_s))
        credited = bonus if self._tc.bonus_mode is not BonusMode.DELAY_SIMPLE else 0.0
        left += credited
        added = 0
        end = self._tc._period_end(period)
        if end is not None and move_no == end:
            added = self._tc._period_at(period + 1).seconds
            left += added
        self._turn_start[side] = left
        self._moves[side] = move_no
        self._begin_turn(not side, at)
        return PressResult(side=side, at=at, bonus_s=bonus, period_added_s=added, moves_completed=move_no,
                           remaining_s=left)

    def _idle_result(self, side: chess.Color, at: float) -> PressResult:
        return PressResult(side=side, at=at, bonus_s=0.0, period_added_s=0, moves_completed=self._moves[side],
                           remaining_s=self.remaining(side, at))

    def pause(self, at: float) -> None:
        """Pause both clocks at ``at`` (6.11); time during a pause belongs to nobody."""
        if self._active is None or self._paused:
            return
        used = self._used(at)
        side = self._active
        left = self._turn_start[side] - self._charged(side, used)
        if left <= 0 and self._flag_at[side] is None:
            due = self.flag_time(side)
            self._flag_at[side] = due if due is not None else at
        self._used_before = used
        self._paused = True

    def resume(self, at: float, side: chess.Color | None = None) -> None:
        """Resume at ``at``; ``side`` is the side the lever now shows (None: the side paused).

        Resuming for the other side (the lever was moved during the pause) ends the paused
        side's turn without bonus and without counting a move. Resuming a clock that was never
        started starts it.
        """
        if self._active is None:
            self._begin_turn(chess.WHITE if side is None else side, at)
            return
        if not self._paused:
            return
        if side is None or side == self._active:
            self._paused = False
            self._mark = at
            return
        paused_side = self._active
        self._turn_start[paused_side] = max(
            0.0, self._turn_start[paused_side] - self._charged(paused_side, self._used_before))
        self._begin_turn(side, at)

    def set_times(self, at: float, white: float, black: float, moves_white: int | None = None,
                  moves_black: int | None = None) -> None:
        """Apply an arbiter edit at ``at`` (7.1, 6.10.2, penalties): new times and, optionally, counters.

        Delay already used in the current turn stays used. A flag is cleared for a side given
        time again.

        Raises:
            ValueError: a time is negative or not finite, or a counter is negative.
        """
        for value in (white, black):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"clock time must be a finite number of seconds >= 0, got {value!r}")
        for count in (moves_white, moves_black):
            if count is not None and (not isinstance(count, int) or count < 0):
                raise ValueError(f"move counter must be a non-negative integer, got {count!r}")
        if moves_white is not None:
            self._moves[chess.WHITE] = moves_white
        if moves_black is not None:
            self._moves[chess.BLACK] = moves_black
        for side, value in ((chess.WHITE, float(white)), (chess.BLACK, float(black))):
            if side == self._active:
                self._turn_start[side] = value + self._charged(side, self._used(at))
            else:
                self._turn_start[side] = value
            if value > 0:
                self._flag_at[side] = None

    # --- Validation against a real clock ----------------------------------------

    def moves_to_control(self, side: chess.Color) -> int | None:
        """Moves ``side`` still has to complete in its current period, or None in sudden death."""
        end = self._tc._period_end(self.period_index(side))
        return None if end is None else end - self._moves[side]

    def _explain(self, side: chess.Color, difference: float, tolerance_s: float) -> str:
        """Name a known amount that ``difference`` (clock minus model) matches, if any."""
        index = self.period_index(side)
        candidates: list[tuple[float, str]] = []
        if self._tc._period_end(index) is not None:
            candidates.append((float(self._tc._period_at(index + 1).seconds), "; matches the next period's time"))
        if index > 0:
            candidates.append((-float(self._tc._period_at(index).seconds), "; matches the missing period's time"))
        if self._tc.bonus_mode is BonusMode.FISCHER:
            candidates.append((float(self._tc.bonus_s), "; matches one increment"))
            candidates.append((-float(self._tc.bonus_s), "; matches one increment"))
        for amount, text in candidates:
            if abs(difference - amount) <= tolerance_s:
                return text
        return ""

    def observe(self, at: float, white: float | None, black: float | None, running: chess.Color | None,
                tolerance_s: float = 1.5) -> list[str]:
        """Compare a real clock reading with the model; return the problems found (empty = consistent).

        The model is not changed. A time is a problem when it differs from the model by more than
        ``tolerance_s`` (clocks report whole seconds); a ``None`` time is not checked. The running
        side is a problem when it differs from :attr:`running` (a paused model expects None).
        The caller decides what a problem means: a jump that matches an open penalty suggestion is
        an ``ARBITER_ADJUST`` (then call :meth:`set_times`), a consistent offset from the start is
        ``CLOCK_SETTING_SUSPECT``, a period added at the wrong move is ``CLOCK_MOVE_COUNTER_MISMATCH``.
        To help, a time difference that matches a known amount is named at the end of the text:
        ``"; matches the next period's time"`` (period added early: the clock counted a press that
        was no move), ``"; matches the missing period's time"`` (period not added: a move completed
        without a press, 6.2.1.2), or ``"; matches one increment"``.
        """
        problems: list[str] = []
        for side, shown in ((chess.WHITE, white), (chess.BLACK, black)):
            if shown is None:
                continue
            expected = self.remaining(side, at)
            if abs(shown - expected) > tolerance_s:
                problems.append(
                    f"{chess.COLOR_NAMES[side]}: clock shows {shown:.1f} s, model expects {expected:.1f} s "
                    f"({shown - expected:+.1f} s){self._explain(side, shown - expected, tolerance_s)}"
                )
        if running != self.running:
            def name(color: chess.Color | None) -> str:
                return "none" if color is None else chess.COLOR_NAMES[color]

            problems.append(f"running: clock shows {name(running)}, model expects {name(self.running)}")
        return problems
