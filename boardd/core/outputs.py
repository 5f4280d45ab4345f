"""Typed outputs of the engine: what it found, before anyone decides how to publish it.

:mod:`boardd.core.contract` maps these (plus :class:`GameState`) to the MQTT contract;
the tests read them directly. Times (``*_at``) are event times from the input.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

import chess

__all__ = [
    "ClockState",
    "ClockUpdate",
    "Completion",
    "Confidence",
    "Evidence",
    "GameEvent",
    "GameState",
    "Irregularity",
    "IrregularityRaised",
    "IrregularityUpdated",
    "LinkUpdate",
    "MoveCompleted",
    "MoveMade",
    "MoveRecord",
    "MovesRetracted",
    "Output",
    "Severity",
    "StateChanged",
    "Status",
    "Suggestion",
]


class Completion(enum.Enum):
    """How a move was completed (6.2.1)."""

    PRESS = "press"
    GAME_END = "game_end"
    NEXT_MOVE = "next_move"


class Severity(enum.Enum):
    """rules-spec 5: info, warning, or the illegal-move penalty class (IMP)."""

    INFO = "info"
    WARNING = "warning"
    ILLEGAL_MOVE = "illegal-move"


class Confidence(enum.Enum):
    """auto = follows from sensor data; suspected = the arbiter must verify."""

    AUTO = "auto"
    SUSPECTED = "suspected"


class Status(enum.Enum):
    """Arbiter-side status of an irregularity."""

    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    NOTED = "noted"  # an info finding: for the record, it asks for no action


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveRecord:
    """One move of the official record.

    ``legal`` is False for an illegal move that stood because nobody intervened
    (rules-spec G6, R22); ``uci``/``san`` then describe the physical change.
    ``recovered`` says how a move rebuilt after the daemon missed it (downtime) was found
    (``"eeprom"``, ``"search"``, ``"arbiter"``); empty for a move seen being played.
    ``recovered_reason`` says what made it missed: the ``MOVES_RECOVERED`` reason of its incident
    (``"daemon restarted"``, ``"board link down"``, ``"missed updates"``; empty when not known).
    ``out_of_turn`` marks a move made on the opponent's turn that stood (R13, no clock: the player who had
    just moved moved again; ``legal`` is False, ``side`` the same as the entry before it, the opponent's turn
    skipped).
    """

    ply: int
    uci: str
    san: str
    side: chess.Color
    fen_after: str
    made_at: float
    completed_at: float | None = None
    completion: Completion | None = None
    clock_white: float | None = None
    clock_black: float | None = None
    emt: float | None = None
    legal: bool = True
    recovered: str = ""
    recovered_reason: str = ""
    out_of_turn: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """One event behind a finding, as text in the scenario notation (``"L e1"``, ``"P g1 wK"``,
    ``"C W"``, ``"FLAG B"``) with its time."""

    at: float
    event: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Suggestion:
    """The law-based suggestion attached to a finding (rules-spec 6). Advisory only (G1)."""

    text: str = ""
    move: str | None = None
    add_to_opponent_s: int | None = None
    remove_from_offender_s: float | None = None
    result: str | None = None
    reinstate_ply: int | None = None
    constraints: tuple[str, ...] = ()
    verify: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Irregularity:
    """A finding for the arbiter: a rules-spec 5.2 code, or a 5.1 info code."""

    id: str
    code: str
    severity: Severity
    confidence: Confidence
    side: chess.Color | None
    ply: int
    edition: int
    articles: tuple[str, ...]
    t_raised: float
    t_first_evidence: float
    evidence: tuple[Evidence, ...] = ()
    subtype: str | None = None
    suggestion: Suggestion = field(default_factory=Suggestion)
    status: Status = Status.OPEN
    claim_deadline: float | None = None
    category: str = "standard"
    regime: str = "competition"
    ruling: str | None = None
    #: the id of the primary finding of the same incident, None for a primary (contract ``incident``)
    incident: str | None = None
    #: ids of the findings this one is about, whatever their place in the incident (contract ``related``): a
    #: TWO_HANDS_AT_PRESS names the TWO_HANDS_SUSPECTED it completes, then the illegal move the same press
    #: was (counted once with it)
    related: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockState:
    """Clock as the engine believes it (seconds remaining; ``running`` is a colour or None)."""

    white: float | None = None
    black: float | None = None
    running: chess.Color | None = None
    flag_white: bool = False
    flag_black: bool = False
    model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GameState:
    """The whole truth about the current game: enough for a late joiner (contract ``state``)."""

    game_id: str
    white: str
    black: str
    event: str
    site: str
    date: str
    round: str
    board_no: int | None
    time_control: str
    edition: int
    start_fen: str
    chess960: bool
    fen: str
    moves: tuple[MoveRecord, ...]
    turn: chess.Color
    clock: ClockState
    result: str
    termination: str | None
    open_irregularities: tuple[str, ...]
    illegal_moves_white: int
    illegal_moves_black: int
    category: str
    regime: str
    #: The latest version of every irregularity that is not resolved (ids as in ``open_irregularities``),
    #: so that a late joiner sees the open flags with their details. Empty when the engine does not fill it.
    open_irregularity_details: tuple[Irregularity, ...] = ()
    #: The findings the arbiter dismissed (``Resolve`` with ``accept`` false) that a ``Reopen`` can still take
    #: back, as they are now (resolved): a web service restarted after the dismissal still offers its Undo.
    dismissed_irregularity_details: tuple[Irregularity, ...] = ()

    @property
    def ply(self) -> int:
        """Number of half-moves in the official record."""
        return len(self.moves)


# --- Outputs ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveMade:
    """A move was made (4.7): published with ``phase = made``."""

    move: MoveRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveCompleted:
    """A move was completed (6.2.1): published with ``phase = completed``."""

    move: MoveRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class MovesRetracted:
    """Moves after ``to_ply`` left the official record (takeback, reinstatement)."""

    at: float
    to_ply: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IrregularityRaised:
    """A new finding."""

    irregularity: Irregularity


@dataclass(frozen=True, slots=True, kw_only=True)
class IrregularityUpdated:
    """A finding changed (acknowledged, resolved, claim window closed, escalated)."""

    irregularity: Irregularity


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEvent:
    """A record event that is not a move or an irregularity (contract ``event``).

    ``type`` is one of GAME_START, GAME_END, TAKEBACK_DETECTED, REINSTATED,
    ARBITER_ACTION, BOARD_DISCONNECTED, BOARD_RECONNECTED, CLOCK_DISCONNECTED,
    CLOCK_RECONNECTED, RESULT_SIGNAL, ORIENTATION_CHANGED. ``code`` carries the
    rules-spec code where there is one (e.g. ``GAME_END_CHECKMATE``).
    """

    at: float
    type: str
    code: str | None = None
    details: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockUpdate:
    """A clock reading, in White/Black terms (contract ``clock``)."""

    at: float
    clock: ClockState


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkUpdate:
    """Board or clock link changed (contract ``status``)."""

    at: float
    link: str
    up: bool
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChanged:
    """The official record, the clock run-state or the result changed: republish state and pgn."""

    at: float


Output: TypeAlias = (
    MoveMade
    | MoveCompleted
    | MovesRetracted
    | IrregularityRaised
    | IrregularityUpdated
    | GameEvent
    | ClockUpdate
    | LinkUpdate
    | StateChanged
)
