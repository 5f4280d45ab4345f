"""The simulator: PGN or random games played on a virtual e-board and clock.

The pure part (:func:`simulate_game`) turns a game into the :mod:`boardd.core.events`
a real DGT-class board and clock would produce, with seeded human handling
(:data:`PROFILES`, and with ``procedures=True`` the Laws' whole repertoire of
:mod:`drivers.sim._procedures`), on a board with a clock or (``clock=False``) without one,
injectable irregularities (:class:`Injection`) and the arbiter's correction cycles
(:class:`Correction`). The
driver part (:class:`SimulatedBoard`) yields the same events in scaled real
time for ``boardd demo`` and the daemon. ``boardd simulate`` writes the events
as an event log (``docs/event-log.md``).
"""

from __future__ import annotations

from drivers.sim._cli import configure_parser, run
from drivers.sim._core import (
    DEFAULT_TIME_CONTROL,
    INFO_CODES,
    NO_CLOCK_REPLY_FROM,
    PROFILES,
    SimulatedGame,
    SimulationError,
    moved_twice_candidates,
    simulate_game,
)
from drivers.sim._driver import Options, SimulatedBoard, create_driver, load_pgn_game
from drivers.sim._games import RANDOM_TIME_CONTROL, choose_move, random_game
from drivers.sim._inject import (
    NO_CLOCK_KINDS,
    Injection,
    InjectionKind,
    applicable,
    expected_codes,
    seeded_injection,
)
from drivers.sim._procedures import (
    CaptureStyle,
    Castling960,
    Correction,
    CorrectionKind,
    castling960_methods,
    correction_applicable,
    correction_codes,
    correction_counts,
    illegal_castlings,
)

__all__ = [
    "DEFAULT_TIME_CONTROL",
    "INFO_CODES",
    "NO_CLOCK_KINDS",
    "NO_CLOCK_REPLY_FROM",
    "PROFILES",
    "RANDOM_TIME_CONTROL",
    "CaptureStyle",
    "Castling960",
    "Correction",
    "CorrectionKind",
    "Injection",
    "InjectionKind",
    "Options",
    "SimulatedBoard",
    "SimulatedGame",
    "SimulationError",
    "applicable",
    "castling960_methods",
    "choose_move",
    "configure_parser",
    "correction_applicable",
    "correction_codes",
    "correction_counts",
    "create_driver",
    "expected_codes",
    "illegal_castlings",
    "load_pgn_game",
    "moved_twice_candidates",
    "random_game",
    "run",
    "seeded_injection",
    "simulate_game",
]
