"""Rules configuration of the core: edition, category, regime, timing parameters.

These are pure values (rules-spec 0.2 G5, 2.4, 6.1). The daemon's TOML loader
(:mod:`boardd.daemon.config`) builds them; tests build them directly.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from boardd.core.errors import ConfigError
from boardd.core.events import EDITIONS, ClockSide

__all__ = ["EDITIONS", "Category", "Regime", "RulesConfig", "Timing"]

class Category(enum.Enum):
    """Time-control category (rules-spec 7.1)."""

    STANDARD = "standard"
    RAPID = "rapid"
    BLITZ = "blitz"


class Regime(enum.Enum):
    """Supervision regime (rules-spec 6.1): adequate supervision, or "otherwise"."""

    COMPETITION = "competition"
    OTHERWISE = "otherwise"


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Timing parameters in seconds (rules-spec 2.4). Defaults are the spec's."""

    t_flicker: float = 0.250
    t_settle: float = 0.400
    t_scan: float = 0.250
    t_simul: float = 0.250
    d_far: int = 3
    t_latency: float = 0.250
    t_knock: float = 0.150
    t_adjust: float = 2.000
    t_bounce: float = 0.300

    def __post_init__(self) -> None:
        for name in ("t_flicker", "t_settle", "t_scan", "t_simul", "t_latency", "t_knock",
                     "t_adjust", "t_bounce"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value <= 60:
                raise ConfigError(f"must be a number of seconds in 0..60, got {value!r}",
                                  key=f"timing.{name}")
        if not isinstance(self.d_far, int) or not 1 <= self.d_far <= 7:
            raise ConfigError(f"must be an integer 1..7, got {self.d_far!r}", key="timing.d_far")


@dataclass(frozen=True, slots=True, kw_only=True)
class RulesConfig:
    """How the engine judges a game. The edition comes with the game (``GameInfo.edition``).

    Attributes:
        category: force a category; ``None`` derives it from the time control (7.1).
        regime: supervision regime for rapid/blitz; standard play is always COMPETITION.
        timing: the timing parameters of rules-spec 2.4.
        white_clock_side: which side of the clock White's time is on (6.5).
        blitz_adequate_penalty_2023: minutes for E2023 blitz under adequate supervision (O1).
        result_gesture: treat kings on the centre squares / DGT result pieces as a result signal.
        clock_expected: a clock is connected; when False the engine keeps time itself and
            a lever press never arrives, so moves complete by the next move (6.2.1.2).
    """

    category: Category | None = None
    regime: Regime = Regime.COMPETITION
    timing: Timing = field(default_factory=Timing)
    white_clock_side: ClockSide = ClockSide.LEFT
    blitz_adequate_penalty_2023: int = 1
    result_gesture: bool = True
    clock_expected: bool = True

    def __post_init__(self) -> None:
        if self.blitz_adequate_penalty_2023 not in (1, 2):
            raise ConfigError("must be 1 or 2 (minutes)", key="rules.blitz_adequate_penalty_2023")
