"""The engine's modes as explicit state machines with transition tables (rules-spec §3.6, §3.7).

Like h11's connection states, every mode the engine can be in and every way out of it is one row of a
table; :meth:`Machine.fire` looks the row up and refuses (:class:`ModeError`) anything that is not in it.

* **Phase** of the game: the pieces being set up (2, 7.2), play, awaiting the board to show a reinstated
  position (7.5.1, 7.6, §3.7), game over (5, 9.6, or a result set by the arbiter).
* **Board link** (§3.6): up, or down from its ``LinkChanged`` until the board reports again; while it is
  down presses are recorded but not judged.
* **Clock link** (§3.6): up, or down from its ``LinkChanged`` until its link comes back or it sends a
  reading; while it is down moves complete as without a clock.

Per-incident memory (a finding raised once, the ply of an adopted position, the open divergence of an
outage) is not a mode: it lives with the room that keeps it, or in :class:`~boardd.core.engine.state.Game`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = [
    "BOARD_LINK",
    "CLOCK_LINK",
    "PHASES",
    "PLAYING",
    "LinkState",
    "LinkTrigger",
    "Machine",
    "ModeError",
    "Phase",
    "PhaseTrigger",
    "Transition",
    "format_table",
]

S = TypeVar("S", bound=enum.Enum)
T = TypeVar("T", bound=enum.Enum)


class ModeError(RuntimeError):
    """A transition that is not in the machine's table (an engine bug, reported as ``SENSOR_FAULT``)."""


class Phase(enum.Enum):
    """The phase of the game."""

    SETTING_UP = "setting up"
    PLAY = "play"
    AWAIT_RESTORE = "awaiting restoration"
    GAME_OVER = "game over"


class PhaseTrigger(enum.Enum):
    """What moves the game from one phase to another."""

    PIECES_MISSING = "board dump before the first move with pieces missing"
    START_POSITION_SHOWN = "the board shows the start position"
    REINSTATE_PENDING = "arbiter reinstates; the board does not show the position yet"
    REINSTATED = "arbiter reinstates; the board already shows the position"
    RESTORED = "the board shows the reinstated position"
    REINSTATE_WITHDRAWN = "the arbiter's ruling makes the awaited reinstatement moot"
    GAME_END = "a completed move ends the game"
    RESULT_SET = "the arbiter sets a result"


class LinkState(enum.Enum):
    """The state of a device link."""

    UP = "up"
    DOWN = "down"


class LinkTrigger(enum.Enum):
    """What changes a link's state."""

    LINK_DOWN = "LinkChanged down"
    LINK_UP = "LinkChanged up"
    DEVICE_REPORTS = "the device reports (a board event, a clock reading)"


@dataclass(frozen=True, slots=True)
class Transition(Generic[S, T]):
    """One row of a table: in *source*, *trigger* leads to *target* (*why*: the rule behind it)."""

    source: S
    trigger: T
    target: S
    why: str


def _rows(sources: Iterable[S], trigger: T, target: S, why: str) -> tuple[Transition[S, T], ...]:
    return tuple(Transition(source, trigger, target, why) for source in sources)


_P = Phase
_PT = PhaseTrigger
_PLAYING = (_P.SETTING_UP, _P.PLAY)
#: The phases in which the game is played (boards changes recognised, presses judged).
PLAYING = _PLAYING  # (a tuple: an enum's hash is a Python call, a set's membership test asks for it)

#: The phases of the game (rules-spec §3.6, §3.7). ``SETTING_UP`` and ``PLAY`` are both "playing": a press is
#: judged in either (the setting-up phase only keeps the board quiet until the start position is there).
PHASES: tuple[Transition[Phase, PhaseTrigger], ...] = (
    *_rows((_P.PLAY, _P.SETTING_UP), _PT.PIECES_MISSING, _P.SETTING_UP, "2, 7.2: quiet until the pieces are set up"),
    Transition(_P.AWAIT_RESTORE, _PT.PIECES_MISSING, _P.AWAIT_RESTORE, "§3.7: the restoration decides"),
    Transition(_P.GAME_OVER, _PT.PIECES_MISSING, _P.GAME_OVER, "5: the game is over"),
    Transition(_P.SETTING_UP, _PT.START_POSITION_SHOWN, _P.PLAY, "2: the start position is complete"),
    *_rows(tuple(Phase), _PT.REINSTATE_PENDING, _P.AWAIT_RESTORE, "7.5.1, §3.7: wait for the board"),
    *_rows(tuple(Phase), _PT.REINSTATED, _P.PLAY, "7.5.1, §3.7: the board already shows it"),
    Transition(_P.AWAIT_RESTORE, _PT.RESTORED, _P.PLAY, "§3.7: recognition resumes"),
    Transition(_P.AWAIT_RESTORE, _PT.REINSTATE_WITHDRAWN, _P.PLAY, "G1, G6: play on from the board"),
    *_rows(_PLAYING, _PT.GAME_END, _P.GAME_OVER, "5, 9.6: checkmate, stalemate, dead position, 9.6 draws"),
    *_rows(tuple(Phase), _PT.RESULT_SET, _P.GAME_OVER, "arbiter: a result other than *"),
)

_L = LinkState
_LT = LinkTrigger

#: The board link (rules-spec §3.6): presses are not judged while it is down; a board event brings it back.
BOARD_LINK: tuple[Transition[LinkState, LinkTrigger], ...] = (
    *_rows(tuple(LinkState), _LT.LINK_DOWN, _L.DOWN, "§3.6: presses recorded, not judged"),
    Transition(_L.DOWN, _LT.DEVICE_REPORTS, _L.UP, "§3.6: the dump reconciles, the presses are reported"),
)

#: The clock link (rules-spec §3.6): while it is down moves complete as without a clock (6.2.1.2).
CLOCK_LINK: tuple[Transition[LinkState, LinkTrigger], ...] = (
    Transition(_L.UP, _LT.LINK_DOWN, _L.DOWN, "§3.6: play on as without a clock"),
    *_rows(tuple(LinkState), _LT.LINK_UP, _L.UP, "§3.6: the link is back"),
    Transition(_L.DOWN, _LT.DEVICE_REPORTS, _L.UP, "§3.6: a reading: the clock is back"),
)


class Machine(Generic[S, T]):
    """A state and its table. ``fire(trigger)`` moves to the row's target or raises :class:`ModeError`."""

    __slots__ = ("name", "state", "table")

    def __init__(self, name: str, table: tuple[Transition[S, T], ...], initial: S) -> None:
        self.name = name
        self.state = initial
        self.table: dict[tuple[S, T], S] = {(row.source, row.trigger): row.target for row in table}
        if len(self.table) != len(table):
            raise ValueError(f"{name}: two rows for one (state, trigger)")

    def fire(self, trigger: T) -> S:
        """Take the transition of *trigger* from the current state."""
        target = self.table.get((self.state, trigger))
        if target is None:
            raise ModeError(f"{self.name}: no transition from {self.state.name} on {trigger.name}")
        self.state = target
        return target

    def __repr__(self) -> str:
        return f"Machine({self.name}, {self.state.name})"


def format_table(name: str, table: tuple[Transition[S, T], ...]) -> str:
    """The table as text, one row per transition (``source --TRIGGER--> target  why``)."""
    lines = [f"{name}:"]
    for row in table:
        lines.append(f"  {row.source.name:<14} --{row.trigger.name:<22}--> {row.target.name:<14} {row.why}")
    return "\n".join(lines)
