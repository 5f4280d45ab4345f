"""The simulated chess clock: :class:`boardd.core.clock.ClockModel` plus what a DGT clock displays.

The simulator drives the same clock model the engine uses, so the times in the
simulated readings are exactly what the rules-spec 7.3 semantics give (bonus at
the press, period transitions, no bonus after the last flag). On top of it this
module adds the display: DGT clocks show whole seconds, so a reading is due each
time the running side's displayed second changes (:meth:`SimClock.next_tick`).
"""

from __future__ import annotations

import math

import chess

from boardd.core.clock import ClockModel, TimeControl
from boardd.core.errors import ConfigError

__all__ = ["SimClock", "parse_time_control"]


def parse_time_control(text: str) -> TimeControl:
    """Parse a PGN TimeControl the simulator can run (timed, whole seconds).

    Raises:
        ValueError: untimed (``"-"``, ``"?"``), fractional (``"10+0.05"``) or malformed.
    """
    try:
        tc = TimeControl.parse(text)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    if not tc.is_timed:
        raise ValueError(f"time control {text!r} is not timed")
    return tc


class SimClock:
    """A two-sided clock in White/Black terms, driven by explicit times."""

    def __init__(self, time_control: str) -> None:
        self.time_control = parse_time_control(time_control)
        self.model = ClockModel(self.time_control)
        #: What each side's last counted press earned (increment or delay credit).
        self.last_bonus = {chess.WHITE: 0.0, chess.BLACK: 0.0}

    @property
    def running(self) -> chess.Color | None:
        """The side whose time runs, or None (not started, paused)."""
        return self.model.running

    def remaining(self, color: chess.Color, at: float) -> float:
        """Seconds left for *color* at *at*."""
        return self.model.remaining(color, at)

    def presses(self, color: chess.Color) -> int:
        """The clock's move counter of *color*."""
        return self.model.moves_completed(color)

    def start(self, at: float, color: chess.Color) -> None:
        """Start (or, after a pause, resume) with *color* running; a changed lever ends the other turn."""
        if self.model.active is None:
            self.model.start(at, color)
        else:
            self.model.resume(at, color)

    def pause(self, at: float) -> None:
        """Stop both times (the pause button)."""
        self.model.pause(at)

    def press(self, color: chess.Color, at: float) -> None:
        """*color* presses its lever."""
        self.last_bonus[color] = self.model.press(color, at).bonus_s

    def correct(self, at: float, white: float, black: float, moves_white: int, moves_black: int) -> None:
        """An arbiter edit of the times and move counters."""
        self.model.set_times(at, white, black, moves_white, moves_black)

    def next_tick(self, after: float) -> float | None:
        """The first time > *after* at which the running side's displayed whole second changes."""
        running = self.model.running
        if running is None:
            return None
        # Rounded so that float noise at a tick (5399.0000001) does not give a second tick 1e-7 s later.
        left = round(self.model.remaining(running, after), 6)
        if left <= 0:
            return None
        below = math.ceil(left) - 1
        return after + (left - below)
