"""Clock readings (rules-spec §3.5; articles 6.x: flags, pauses, periods, settings, the clock model)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import (
    _CLOCK_HOLD_S,
    _LOGGER,
    _clock_text,
    _clock_update,
    _Press,
    _side_letter,
    _suspect_reading,
)
from boardd.core.engine.modes import LinkState, LinkTrigger, Phase
from boardd.core.events import (
    ClockReading,
    ClockSide,
    SetClock,
)
from boardd.core.laws.positions import can_mate_in_feed, is_dead_in_feed
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Evidence,
    GameEvent,
    Output,
    StateChanged,
)
from boardd.core.recognizer import Diff, DiffClass
from boardd.core.settings import Regime

_LINK_DOWN = LinkState.DOWN

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


class ClockReadings:
    """Clock readings (rules-spec §3.5; articles 6.x: flags, pauses, periods, settings, the clock model)."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.model_flag_done = False  # the clock model's flag fell (no clock)
        self.flag = {chess.WHITE: False, chess.BLACK: False}  # the flags as last read (R26)
        self.white_left = self.rules.white_clock_side is ClockSide.LEFT
        self.clock_glitches = 0
        self.lever: chess.Color | None = None
        self.clock_started = False
        #: a period transition off the Laws' count (:meth:`check_period`): side -> (moves completed, period added)
        self.counter_off: dict[chess.Color, tuple[int, bool]] = {}

    def keeps_time(self) -> bool:
        """No clock: the engine keeps time itself with the ClockModel (moves complete by the next move)."""
        return self.g.model is not None and (not self.rules.clock_expected or not self.g.clock_seen)

    def model_flag_due(self) -> float | None:
        model = self.g.model
        if model is None or not self.g.model_started or self.model_flag_done or not self.keeps_time():
            return None
        running = model.running
        due = None if running is None else model.flag_time(running)
        end = self.g.game_end_at
        if due is not None and end is not None and self.g.phase.state is Phase.GAME_OVER \
                and due > end + self.rules.timing.t_settle + self.rules.timing.t_latency:
            return None  # the game is over (5): only a flag racing the game's end is judged (on_flag: MATE_FLAG_RACE)
        return due

    def game_over(self, at: float) -> None:
        """The game ended at *at*: the engine's own clock (no clock) is shown stopped there, not running on.
        (The model itself is left as it is: a game-ending illegal move reinstated plays on from it, 7.5.1.)"""
        if self.keeps_time() and self.g.model_started:
            self.model_clock(at, None)

    def model_clock(self, at: float, running: chess.Color | None) -> None:
        model = self.g.model
        assert model is not None
        self.g.clock = ClockState(white=model.remaining(chess.WHITE, at), black=model.remaining(chess.BLACK, at),
                                 running=running, model="engine")

    def color_of(self, side: ClockSide | None) -> chess.Color | None:
        if side is None:
            return None
        return chess.WHITE if side == self.rules.white_clock_side else chess.BLACK

    def new_segment(self, at: float) -> None:
        """Start the opponent's segment at *at*: no lifts, placements or evidence yet, nothing masked."""
        self.g.mask.clear()
        self.g.last_diff = Diff(DiffClass.NONE)
        self.g.seg_lifts = []
        self.g.seg_places = []
        self.g.seg_evidence = []
        self.g.seg_start = at
        self.g.opp_started = False
        self.g.oot_raised = False

    def _last_running(self, prev: ClockReading | None) -> tuple[float, float] | None:
        """The time of the side that ran in the reading before a pause, and when it was read (the pause's own reading
        may show that side late, protocols.md §2.5: :meth:`Correction.on_pause` reckons the time of the pause from
        this one), or None."""
        ran = self.g.running
        if prev is None or prev.running is None or ran is None:
            return None
        value = prev.left if (ran == chess.WHITE) == self.white_left else prev.right
        return None if value is None else (value, prev.at)

    def held_due(self) -> float | None:
        held = self.g.held_reading
        return None if held is None else held.at + _CLOCK_HOLD_S

    def on_clock(self, outs: list[Output], reading: ClockReading, at: float, *, confirmed: bool = False) -> None:
        """A clock reading: filtered (suspect readings wait), published, then lever, pause and flags (§3.5)."""
        g = self.g  # the hot path (about one reading per second per board): one lookup
        prev = g.prev_reading
        held = g.held_reading
        left, right = reading.left, reading.right
        if not confirmed and (held is not None or not (left and right)):
            # a side at 0:00 (or unknown), or a suspect reading pending: the full test
            if _suspect_reading(reading):
                if held is None:
                    g.held_reading = reading  # wait for the next reading (or the flag bit) to confirm it
                    return
                g.held_reading = None  # two suspect readings in a row: the clock means it
            elif held is not None:
                g.held_reading = None
                self.clock_glitch(outs, held, at)
        g.pre_clock = g.clock
        g.prev_reading = reading
        if g.clock_link.state is _LINK_DOWN:  # (g.clock_down without the property call: the hot path)
            # readings again: the clock is back (whether or not its link event came)
            g.clock_link.fire(LinkTrigger.DEVICE_REPORTS)
        if (prev is not None and left and right and reading.running is prev.running
                and reading.lever_high is prev.lever_high and reading.left_flag is prev.left_flag
                and reading.right_flag is prev.right_flag and reading.model == prev.model
                and not g.paused and g.clock_seen and prev.left and prev.right):
            # same lever, run state and flags: only the times moved (the common case, about one reading per second)
            if int(left) == int(prev.left) and int(right) == int(prev.right):
                return  # the display shows the same: nothing to publish
            update = _clock_update(at, left, right, g.clock) if self.white_left else \
                _clock_update(at, right, left, g.clock)
            g.clock = update.clock
            outs.append(update)
            return
        self._on_reading_changed(outs, reading, at, prev)

    def _on_reading_changed(self, outs: list[Output], reading: ClockReading, at: float,
                            prev: ClockReading | None = None) -> None:
        """A reading whose lever, run state or flags may have changed (*prev*: the reading before it)."""
        if not self.clock_started and reading.running is not None and len(self.g.records) < 2:
            self.check_clock_side(outs, reading, at)
        if self.white_left:
            white, black = reading.left, reading.right
            fw, fb = reading.left_flag, reading.right_flag
        else:
            white, black = reading.right, reading.left
            fw, fb = reading.right_flag, reading.left_flag
        running = None if reading.running is None else (reading.running is ClockSide.LEFT) == self.white_left
        lever = running if reading.lever_high is None else (reading.lever_high is ClockSide.LEFT) == self.white_left
        flag_w = fw or (white == 0 and running is True)
        flag_b = fb or (black == 0 and running is False)
        shown = (None if white is None else int(white), None if black is None else int(black), running, flag_w,
                 flag_b, reading.model)
        if shown != self.g.shown:
            # publish when what a display would show changes (seconds, run state, flags)
            self.g.shown = shown
            self.g.clock = ClockState(white=white, black=black, running=running, flag_white=flag_w,
                                      flag_black=flag_b, model=reading.model)
            outs.append(ClockUpdate(at=at, clock=self.g.clock))
        if (self.g.clock_seen and not self.g.clock_resync and running == self.g.running and lever == self.lever
                and not self.g.paused
                and flag_w == self.flag[chess.WHITE] and flag_b == self.flag[chess.BLACK]):
            return  # nothing but the times changed (the common case: ~1 reading per second)
        first = not self.g.clock_seen or self.g.clock_resync
        resync = self.g.clock_resync
        self.g.clock_seen = True
        self.g.clock_resync = False
        if running is not None and not self.clock_started:
            # the clock is set before it is started: judge the setting when it starts (6.6)
            self.check_clock_setting(outs, white, black, at)
        before = self.lever  # the lever last seen (before the outage, if any): _pause_and_lever takes the new one
        self._pause_and_lever(outs, reading, lever, first=first, at=at, prev=prev)
        if first:
            # after a restart or a clock outage: was the last move (recovered, or made before it) pressed?
            self.e.downtime.clock_back(outs, lever, at, resync=resync, before=before)
        self.g.running = running
        # flags (R26)
        new_w = flag_w and not self.flag[chess.WHITE]
        new_b = flag_b and not self.flag[chess.BLACK]
        self.flag[chess.WHITE] = flag_w
        self.flag[chess.BLACK] = flag_b
        if new_w or new_b:
            self.on_flag(outs, new_w, new_b, flag_w and flag_b, at)

    def _pause_and_lever(self, outs: list[Output], reading: ClockReading, lever: chess.Color | None, *,
                         first: bool, at: float, prev: ClockReading | None = None) -> None:
        """Pause and resume (R14), and a lever transition: a press (§3.5)."""
        was_paused = self.g.paused
        if reading.running is not None:
            self.clock_started = True
        # stopped before the game's first start is not a pause (6.6: the arbiter starts White's clock)
        self.g.paused = reading.running is None and not first and lever is not None and self.clock_started
        if self.g.paused and was_paused:
            self.e.correction.paused_reading(self.g.clock.white, self.g.clock.black, at)  # (a late pause time)
        if self.g.paused and not was_paused:
            self.e.correction.on_pause(self.g.clock.white, self.g.clock.black, ran=self.g.running, at=at,
                                       last=self._last_running(prev))
            self.on_pause(outs, at)
            self.e.correction.tell_times(outs, at)  # the arbiter at the board: what times to set
        if was_paused and not self.g.paused:
            self.e.correction.on_resume(outs, self.g.clock.white, self.g.clock.black, at)
            self.lever = lever  # the lever may be set during a pause: no press
            if lever is not None and lever == self.g.pressed_no_move:
                self.g.pressed_no_move = None  # the arbiter restarted the presser's clock (7.5.3): his own time again
            outs.append(StateChanged(at=at))
        elif first:
            self.lever = lever
        elif lever is not None and self.lever is not None and lever != self.lever and not self.g.paused:
            self.e.presses.on_transition(outs, self.lever, lever, at)
            self.lever = lever
        elif self.lever is None:
            self.lever = lever

    def confirm_held(self, outs: list[Output]) -> None:
        """Nothing contradicted the suspect reading in time: the clock meant it.

        (A clock that stops sending after it, e.g. at a flag fall without the flag bit, must not leave it pending.)
        """
        held = self.g.held_reading
        assert held is not None
        self.g.held_reading = None
        self.on_clock(outs, held, held.at, confirmed=True)

    def model_flag_fall(self, outs: list[Output], due: float) -> None:
        """The engine's own clock model (no clock) reached zero: the running side's flag falls (6.9)."""
        self.model_flag_done = True
        running = self.g.model.running if self.g.model is not None else None
        if running is not None:
            self.model_clock(due, running)
            self.flag[running] = True
            self.on_flag(outs, running == chess.WHITE, running == chess.BLACK, False, due)

    def check_clock_side(self, outs: list[Output], reading: ClockReading, at: float) -> None:
        """The game's first clock start tells on which side White's time is (before ply 2).

        White's clock is started first (6.6: by the arbiter, or by the first press of a clock left stopped,
        which starts Black's clock after White's move). If the side that starts running is the other
        colour's by the configured ``white_clock_side``, the clock stands the other way round: the sides
        are swapped (``GameEvent CLOCK_SIDE_CHANGED``), as the board's orientation is. Later the
        configuration is kept: a wrong side then shows in the findings.
        """
        if not self.g.playing or not self.fresh_setting(reading):
            return
        moving = self.g.cand is not None and not self.g.cand.replace  # White's first move about to be made
        if moving:
            # White's clock started as the move is made (by the arbiter) fits the configuration as well as
            # Black's started by White's press: only a press (the lever moved since the last reading) tells
            before = None if self.lever is None else (
                ClockSide.LEFT if (self.lever == chess.WHITE) == self.white_left else ClockSide.RIGHT)
            if before is None or reading.lever_high is None or reading.lever_high is before:
                return
        expected = self.g.board.turn if not moving else not self.g.board.turn
        running_white = (reading.running is ClockSide.LEFT) == self.white_left
        if running_white == (expected == chess.WHITE):
            return
        self.white_left = not self.white_left
        # what was remembered in the old frame (lever, run state, flags) belongs to the other colour
        if self.lever is not None:
            self.lever = not self.lever
        if self.g.running is not None:
            self.g.running = not self.g.running
        self.flag = {chess.WHITE: self.flag[chess.BLACK], chess.BLACK: self.flag[chess.WHITE]}
        self.g.shown = None
        side = ClockSide.LEFT if self.white_left else ClockSide.RIGHT
        outs.append(GameEvent(at=at, type="CLOCK_SIDE_CHANGED", code=None,
                              details={"white_clock_side": side.value,
                                       "configured": self.rules.white_clock_side.value,
                                       "ply": len(self.g.records)}))

    def clock_glitch(self, outs: list[Output], held: ClockReading, at: float) -> None:
        """A clock reading that the next one did not confirm: ignored (not published, no flag), counted.

        Reported as ``SENSOR_FLICKER`` (a reading reverted at once: info, ignore and log) at the 1st-3rd,
        10th, 100th... glitch of the game; every one is logged.
        """
        self.clock_glitches += 1
        n = self.clock_glitches
        _LOGGER.info("clock glitch ignored (%d this game): %r", n, held)
        if n > 3 and 10 ** (len(str(n)) - 1) != n:
            return
        shown = f"left {_clock_text(held.left)}, right {_clock_text(held.right)}"
        self.e.findings.raise_finding(outs, "SENSOR_FLICKER", None, at, [Evidence(at=held.at, event=f"clock {shown}")],
                    text=f"clock reading ignored ({shown}, no flag bit, not confirmed by the next reading): a glitch "
                         f"of the clock link, not a flag fall ({n} such reading(s) this game)")

    def fresh_setting(self, reading: ClockReading) -> bool:
        """Whether *reading* shows a clock set for this game's start (both sides at the control's first period).

        Only such a clock tells on which side White sits: a clock still showing the previous game's times
        (no new setting after ``new-game``) runs for whoever pressed last in that game. Without a known time
        control, or from a set-up position, any reading counts.
        """
        tc = self.g.tc
        if tc is None or self.g.game.start_fen is not None or reading.left is None or reading.right is None:
            return True
        base = float(tc.periods[0].seconds)
        low, high = sorted((reading.left, reading.right))
        return abs(high - base) <= 2 and base - 120 <= low <= base + 2

    def check_clock_setting(self, outs: list[Output], white: float | None, black: float | None, at: float) -> None:
        """CLOCK_SETTING_SUSPECT: at the start, the clock does not show the configured time (6.10.2)."""
        tc = self.g.tc
        if tc is None or white is None or black is None or self.g.records or self.g.game.start_fen is not None:
            return
        base = float(tc.periods[0].seconds)
        # Black's time does not run before White's first move; White's may have run a little
        if abs(black - base) > 2 or not base - 120 <= white <= base + 2:
            self.e.findings.raise_finding(outs, "CLOCK_SETTING_SUSPECT", None, at, [Evidence(at=at, event="clock")],
                        text=f"the clock shows White {white:.0f} s, Black {black:.0f} s; the control "
                             f"{tc.pgn()} starts with {base:.0f} s each: correct the setting (6.10.2)")

    def check_period(self, outs: list[Output], side: chess.Color, press: _Press) -> None:
        """T55c: the clock's period transition against the moves completed by the Laws (6.10.2, 7.3 #3)."""
        tc = self.g.tc
        pre = press.pre_clock
        if tc is None or pre is None:
            return
        before = pre.white if side == chess.WHITE else pre.black
        after = self.g.clock.white if side == chess.WHITE else self.g.clock.black
        if before is None or after is None:
            return
        done = self.e.made_moves.law_moves(side)
        boundary = tc.period_of_move(done) != tc.period_of_move(done + 1)
        added_period = after - before > tc.bonus_s + 60
        if added_period == boundary:
            return
        off = self.counter_off.pop(side, None)
        if off is not None and off == (done - 1, not added_period):
            # the same offset of the clock's counter one move later: the period time came one move early (a press
            # the Laws do not count, e.g. an illegal move's, 7.5.1, counted by the clock), or one move late: the
            # finding of the first press already asked for the counter and the time (one incident, one alert)
            return
        self.counter_off[side] = (done, added_period)
        name = "White" if side == chess.WHITE else "Black"
        what = (f"the clock added the next period's time at {name}'s press, but by the Laws {name} has completed "
                f"{done} moves" if added_period else
                f"{name} completed move {done}, the end of a period, but the clock added no period time")
        counted = self.e.correction.counted_presses(side)
        if counted and added_period:
            what += f"; presses of {name}'s side the Laws do not count: {', '.join(counted)} (7.5.1)"
        self.e.findings.raise_finding(outs, "CLOCK_MOVE_COUNTER_MISMATCH", side, press.first_at, press.evidence,
                    text=f"{what}: correct the move counter and the time (6.10.2, 7.1)")

    def on_pause(self, outs: list[Output], at: float) -> None:
        self.e.findings.intervened(at)  # the arbiter at the board: what follows is another move (7.5.5)
        diff = self.g.index.classify(self.g.phys)
        if (diff.kind is DiffClass.PARTIAL and diff.move is not None and diff.move.promotion) or (
                diff.kind is DiffClass.IN_HAND and self.g.promo_seen):
            self.e.findings.raise_finding(outs, "PROMOTION_PAUSE_REQUEST", self.g.board.turn, at, [Evidence(at=at,
                                                                                                            event="PAUSE")],
                        text="clock paused during a promotion: supply the piece (6.11.2)")
        else:
            self.e.findings.raise_finding(outs, "CLOCK_PAUSED", None, at, [Evidence(at=at, event="PAUSE")],
                        text="clock paused: the arbiter checks the reason "
                             f"({'6.12' if self.g.edition < 2018 else '6.11.2'})")
        outs.append(StateChanged(at=at))

    def on_flag(self, outs: list[Output], new_w: bool, new_b: bool, both: bool, at: float) -> None:
        timing = self.rules.timing
        for color, new in ((chess.WHITE, new_w), (chess.BLACK, new_b)):
            if new:
                self.g.flag_t[color] = at
        if self.g.phase.state is Phase.GAME_OVER:
            end = self.g.game_end_at
            last = self.g.records[-1] if self.g.records else None
            if last is not None and end is not None and self.g.termination and \
                    self.g.termination.startswith("GAME_END") and abs(at - last.made_at) < \
                    timing.t_settle + timing.t_latency and ((new_w and last.side == chess.WHITE) or
                                                            (new_b and last.side == chess.BLACK)):
                self.e.findings.raise_finding(outs, "MATE_FLAG_RACE", last.side, at, [Evidence(at=last.made_at,
                                                                                               event="made"),
                                                                     Evidence(at=at, event="FLAG")],
                            text="game-ending move and flag within the uncertainty of release; the arbiter decides")
            return
        if both:
            self.both_flags(outs, new_w, new_b, at)
            return
        color = chess.WHITE if new_w else chess.BLACK
        # a game-ending move placed but not yet presumed released: a race (7.4)
        cand = self.g.cand
        if cand is not None and not cand.replace and self.g.board.turn == color:
            probe = self.g.board.copy(stack=False)
            probe.push(cand.move)
            if probe.is_checkmate() or probe.is_stalemate() or is_dead_in_feed(probe):
                self.e.findings.raise_finding(outs, "MATE_FLAG_RACE", color, at,
                            [Evidence(at=cand.at, event="placed"),
                             Evidence(at=at, event=f"FLAG {_side_letter(color)}")],
                            text="game-ending move and flag within the uncertainty of release: the mate stands only "
                                 "if the piece was released before the flag (arbiter)")
                return
        tc = self.g.tc
        done = self.e.made_moves.law_moves(color)
        if tc is not None and done >= 1 and tc.period_of_move(done) != tc.period_of_move(done + 1):
            self.e.findings.raise_finding(outs, "CLOCK_MOVE_COUNTER_MISMATCH", color, at,
                        [Evidence(at=at, event=f"FLAG {_side_letter(color)}")],
                        text=f"flag after {done} completed moves, the end of a period: the move requirement was met, "
                             "so this is not a loss on time; the clock did not add the next period (6.4, 6.10.2)")
            return
        opp = not color
        mate = can_mate_in_feed(self.g.board, opp)
        result = "1/2-1/2" if mate is False else ("0-1" if color == chess.WHITE else "1-0")
        self.e.findings.raise_finding(outs, "FLAG_FALL", color, at, [Evidence(at=at,
                                                                              event=f"FLAG {_side_letter(color)}")],
                    result=result,
                    text=("the opponent cannot checkmate: draw (6.9)" if mate is False else
                          "loss on time unless the move requirement was met or the game already ended (6.4, 6.9)"))

    def both_flags(self, outs: list[Output], new_w: bool, new_b: bool, at: float) -> None:
        """Both flags down (rules-spec §7.4): the first flag decides when the order is known; otherwise 6.11
        (2009/2014) or Guidelines III.3.1 (2018/2023: standard and rapid without increment only)."""
        evidence = [Evidence(at=self.g.flag_t.get(chess.WHITE, at), event="FLAG W"),
                    Evidence(at=self.g.flag_t.get(chess.BLACK, at), event="FLAG B")]
        if not (new_w and new_b):
            first = chess.BLACK if new_w else chess.WHITE  # the other flag was already down before this reading
            mate = can_mate_in_feed(self.g.board, not first)
            name = "White" if first == chess.WHITE else "Black"
            result = "1/2-1/2" if mate is False else ("0-1" if first == chess.WHITE else "1-0")
            self.e.findings.raise_finding(
                outs, "BOTH_FLAGS_FALLEN", first, at, evidence, result=result, articles=("6.9",),
                text=f"both flags down, {name}'s first: the first flag decides (6.9)"
                     + (": draw, the opponent cannot checkmate" if mate is False else ""))
            return
        tc = self.g.tc
        done = max(self.e.made_moves.law_moves(chess.WHITE), self.e.made_moves.law_moves(chess.BLACK))
        last = tc is None or tc.period_of_move(done + 1) == len(tc.periods) - 1
        category = self.g.category
        rule = "6.11" if self.g.edition < 2018 else "Guidelines III.3.1"
        applies = self.g.edition < 2018 or (category in ("standard", "rapid") and not self.g.increment)
        if self.g.edition == 2009 and category == "rapid" and self.g.regime == Regime.OTHERWISE.value:
            rule, applies, last = "A.4 d.3", True, True
        if not applies:
            self.e.findings.raise_finding(
                outs, "BOTH_FLAGS_FALLEN", None, at, evidence, articles=("6.9",),
                text="both flags down, order unknown: Guidelines III.3.1 does not apply here ("
                     + ("blitz" if category == "blitz" else "increment") + "); the arbiter decides")
            return
        self.e.findings.raise_finding(
            outs, "BOTH_FLAGS_FALLEN", None, at, evidence, result="1/2-1/2" if last else None,
            text=f"both flags down, order unknown: {'draw in the last period' if last else 'play continues'} "
                 f"({rule})")

    def on_set_clock(self, outs: list[Output], event: SetClock, at: float) -> None:
        self.e.correction.on_times_set(outs, (self.g.clock.white, self.g.clock.black), event.white, event.black, at)
        self.g.clock = dataclasses.replace(self.g.clock, white=event.white, black=event.black)
        if self.g.model is not None:
            self.g.model.set_times(at, event.white, event.black, event.moves_white, event.moves_black)
            self.model_flag_done = False
            if event.moves_white is not None:
                self.g.base_moves[chess.WHITE] += event.moves_white - self.e.made_moves.law_moves(chess.WHITE)
            if event.moves_black is not None:
                self.g.base_moves[chess.BLACK] += event.moves_black - self.e.made_moves.law_moves(chess.BLACK)
        self.e.findings.raise_finding(outs, "ARBITER_ADJUST", None, at, [Evidence(at=at, event="ARB set clock")],
                    text=f"clock set by the arbiter: White {event.white:.0f} s, Black {event.black:.0f} s")
        outs.append(ClockUpdate(at=at, clock=self.g.clock))
