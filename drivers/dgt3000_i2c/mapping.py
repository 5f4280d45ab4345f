"""Pure mapping of DGT 3000 I²C messages to :class:`boardd.core.events.ClockReading` (protocols.md §2.4).

* **Times**: a Time packet gives both sides' displayed times; packets flagged
  "no update" (echoes) are ignored, as dgtpicom does.
* **Lever**: bit 0 of Time byte 19, and state bit ``0x40`` of Button packets. Which
  side a set bit means is named inconsistently by the sources (§9.13);
  ``lever_set_left_high`` (default True: dgtpicom.h's "bit set = right side down")
  picks the reading. A lever change is emitted at once as a reading with the new
  ``lever_high``, so the engine sees the press without waiting for the next Time packet.
* **Running side**: under central control the clock runs what the host commanded
  (:meth:`Dgt3000Mapper.note_running`); without a command, the side whose time went
  down within ``hold_s`` is taken as running. The Time packet has no run/pause bit
  (§2.4): a time going down is running only as time runs, by at most the seconds since
  the previous Time packet plus one (the display's second), and not within ``hold_s``
  of a setting button (back, minus, plus, forward: the arbiter setting the stopped
  clock's times by hand, each press a Button packet, §2.4-2.5). A step of the setting
  (ten seconds, a minute) is no running clock.
* **Flags**: the Time packet has no flag bit (§2.4), only the times. A flag falls when a *running* side reaches
  zero (rules-spec 6.1, 7.4; §2.2: the clock's zero indication): the side shows 0:00 having gone down to it as
  time runs (or the host runs it at 0:00). It stays fallen while the side shows 0:00 (the clock blocked at
  zero, stopped or not) and is up again once the side shows time (the arbiter corrects it, 6.10.2). A side
  *set* to 0:00 while stopped (a set-and-run with both stopped, the clock's configuration at 0:00:00, the
  arbiter's minus button, a step down in one packet) is no flag fall.
* **Play/pause under central control**: the clock does not stop by itself then (the host runs it); a press of
  play/pause is the pause (6.11: the arbiter, or a player seeking him, stops the clock) or, paused, the restart of
  the side whose lever is up (rules-spec §7.5: ``PAUSED(X) --resume--> RUNNING(X')``, X' from the lever).
  :meth:`Dgt3000Mapper.play_switch` says which; the driver commands it and the reading of the button shows it.
* **Buttons** (back, minus, play, plus, forward, on/off) are operator input, not board
  events: they come out as :class:`ClockButton` values.

Pure: time comes from the ``at`` passed in.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from boardd.core.events import ClockReading, ClockSide
from drivers.dgt3000_i2c.codec import BUTTON_LEVER, BUTTON_PLAY, Button, Dgt3000Message, Hello, Time

__all__ = ["BUTTON_NAMES", "ClockButton", "Dgt3000Mapper"]

_LOGGER = logging.getLogger(__name__)

#: Button bit -> name (§2.4).
BUTTON_NAMES = {0x01: "back", 0x02: "minus", 0x04: "play", 0x08: "plus", 0x10: "forward", 0x20: "on/off"}

#: the buttons of the clock's time setting (back, minus, plus, forward): what follows them is set by hand
_SETTING_BUTTONS = 0x01 | 0x02 | 0x08 | 0x10


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockButton:
    """A button pressed on the clock (operator input)."""

    at: float
    name: str


class Dgt3000Mapper:
    """Messages -> clock readings and buttons.

    Args:
        lever_set_left_high: a set lever bit means the left lever is up (see the module docstring).
        hold_s: without a commanded running side, a side counts as running this long after its time went down.
    """

    def __init__(self, *, lever_set_left_high: bool = True, hold_s: float = 1.5) -> None:
        self.lever_set_left_high = lever_set_left_high
        self.hold_s = hold_s
        self.left: int | None = None
        self.right: int | None = None
        self.lever: bool | None = None
        self.commanded: ClockSide | None = None
        self.commanded_known = False
        self._went_down: dict[ClockSide, float] = {}
        #: when the last Time packet came, and until when a time change is the arbiter's setting (a setting
        #: button pressed)
        self._time_at: float | None = None
        self._setting_until = float("-inf")
        #: the sides whose flag fell: they reached zero running, and show 0:00 since
        self._fallen: dict[ClockSide, bool] = {ClockSide.LEFT: False, ClockSide.RIGHT: False}
        #: the side that ran when play/pause paused the clock under central control
        self._paused_side: ClockSide | None = None
        self.hello: bytes | None = None
        self.stats: Counter[str] = Counter()

    def reset(self) -> None:
        """The clock link was lost: forget the clock's state."""
        self.left = self.right = None
        self.lever = None
        self.commanded_known = False
        self.commanded = None
        self._went_down.clear()
        self._time_at = None
        self._setting_until = float("-inf")
        self._fallen = {ClockSide.LEFT: False, ClockSide.RIGHT: False}

    def note_running(self, side: ClockSide | None) -> None:
        """The host commanded *side* to run (``None``: both stopped)."""
        self.commanded = side
        self.commanded_known = True

    def lever_switch(self, button: Button) -> ClockSide | None:
        """The side to start when *button* moved the lever under central control (``None``: no switch).

        The clock does not switch sides by itself then: the host starts the side whose lever went up,
        with the last times shown, once a side has been commanded and the times are known.
        """
        if not button.lever_changed or self.commanded is None or self.left is None or self.right is None:
            return None
        up = ClockSide.LEFT if bool(button.current & BUTTON_LEVER) == self.lever_set_left_high else ClockSide.RIGHT
        return None if up == self.commanded else up

    def play_switch(self, button: Button) -> tuple[ClockSide | None] | None:
        """What a press of play/pause means under central control: ``(None,)`` pause, ``(side,)`` run *side*
        again, ``None`` nothing (no press of play, no side commanded yet, times or side unknown).

        The clock does not pause by itself then: running, the press pauses both sides (6.11); paused by the host,
        it starts the side whose lever is up (the side that ran before the pause when the lever is unknown).
        """
        if not button.pressed & BUTTON_PLAY or not self.commanded_known or self.left is None or self.right is None:
            return None
        if self.commanded is not None:
            self._paused_side = self.commanded
            return (None,)
        side = self.lever_high() or self._paused_side
        return None if side is None else (side,)

    def lever_high(self) -> ClockSide | None:
        """The side whose lever is up, if known."""
        if self.lever is None:
            return None
        return ClockSide.LEFT if self.lever == self.lever_set_left_high else ClockSide.RIGHT

    def running(self, at: float) -> ClockSide | None:
        """The running side at *at*."""
        if self.commanded_known:
            return self.commanded
        recent = [(t, side) for side, t in self._went_down.items() if at - t <= self.hold_s]
        return max(recent)[1] if recent else None

    def reading(self, at: float) -> ClockReading | None:
        """The current reading, if the times are known."""
        if self.left is None or self.right is None:
            return None
        return ClockReading(at=at, left=float(self.left), right=float(self.right), running=self.running(at),
                            lever_high=self.lever_high(), left_flag=self._fallen[ClockSide.LEFT],
                            right_flag=self._fallen[ClockSide.RIGHT],
                            model="dgt3000")

    def map(self, message: Dgt3000Message, at: float) -> list[ClockReading | ClockButton]:
        """The readings and buttons *message* means."""
        out: list[ClockReading | ClockButton] = []
        match message:
            case Time(no_update=True):
                self.stats["time_echoes"] += 1
            case Time(left_s=left, right_s=right, lever=lever):
                # running as time runs: down by the seconds since the last packet (plus the display's second), and
                # not just after a setting button
                limit = None if self._time_at is None else at - self._time_at + 1.0
                setting = at <= self._setting_until
                for side, before, now in ((ClockSide.LEFT, self.left, left), (ClockSide.RIGHT, self.right, right)):
                    ran = False
                    if before is not None and now < before:
                        if not setting and (limit is None or before - now <= limit):
                            self._went_down[side] = at
                            ran = True
                        else:
                            self.stats["times_set_by_hand"] += 1
                    if now > 0:
                        self._fallen[side] = False
                    elif not self._fallen[side] and (ran or (self.commanded_known and self.commanded is side)):
                        self._fallen[side] = True  # a running side reached zero (6.1)
                        self.stats["flags"] += 1
                self._time_at = at
                self.left, self.right, self.lever = left, right, lever
                reading = self.reading(at)
                if reading is not None:
                    out.append(reading)
            case Button() as button:
                shown = False
                if button.lever_changed or self.lever is None:
                    self.lever = bool(button.current & BUTTON_LEVER)
                    if button.lever_changed:
                        self.stats["lever_changes"] += 1
                        reading = self.reading(at)
                        if reading is not None:
                            out.append(reading)
                            shown = True
                if button.pressed & BUTTON_PLAY and self.commanded_known and not shown:
                    # under central control play/pause changes what runs (play_switch, commanded by the driver)
                    reading = self.reading(at)
                    if reading is not None:
                        out.append(reading)
                for bit, name in BUTTON_NAMES.items():
                    if button.pressed & bit:
                        self.stats["buttons"] += 1
                        out.append(ClockButton(at=at, name=name))
                if button.pressed & _SETTING_BUTTONS:
                    self._setting_until = at + self.hold_s
            case Hello(data=data):
                self.hello = data
        return out
