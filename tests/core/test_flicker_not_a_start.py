"""A sensor flicker of an opponent's square after a move is made and before the mover's press (a square read empty
and back within T_flicker, nothing else near it: rules-spec §2.4) is noise: not the opponent starting. It gave a
``CLOCK_NOT_PRESSED`` note ("the mover has not pressed and the opponent is already moving", §5 table) at the
lift, before the reading could revert: 133 of 960 Chess960 audit cases with a flicker
(``scripts/chess960_audit.py --flicker 960``), and any game with such a flicker. The opponent's lone first lift is now
judged once it stood T_flicker; the real note (the opponent moving while the mover has not pressed, T48) stays."""

from __future__ import annotations

import dataclasses

import pytest

from tests.core import chess960_audit as audit
from tests.core.test_scenarios import Scn, run


def _codes(start: str, events: str) -> list[str]:
    played = run(Scn(start, events, allow_info=("SENSOR_FLICKER", "CLOCK_NOT_PRESSED", "CLOCK_LATE_PRESS")))
    return [f.code for f in played.engine.irregularities]


@pytest.mark.parametrize("ms", [30, 120, 200, 240])
def test_a_flicker_of_the_opponents_square_before_the_press_is_no_start(ms: int) -> None:
    # 1.e4 made (released), a black pawn's square reads empty for a moment, White presses, Black replies
    codes = _codes("S0", f"0 L e2 · 300 P e4 wP · 1200 L d7 · {1200 + ms} P d7 bP · 1800 C W · "
                         "3000 L e7 · 3300 P e5 bP · 3800 C B")
    assert codes == ["SENSOR_FLICKER"]


def test_a_flicker_then_the_opponent_moving_before_the_press_is_still_not_pressed() -> None:
    # the flicker leaves the opponent not started: his real start, White still not pressed, is the note (T48)
    codes = _codes("S0", "0 L e2 · 300 P e4 wP · 1200 L d7 · 1300 P d7 bP · 2000 L e7 · 2300 P e5 bP · "
                         "4000 C W · 4800 C B")
    assert codes == ["SENSOR_FLICKER", "CLOCK_NOT_PRESSED", "CLOCK_LATE_PRESS"]


@pytest.mark.parametrize("held_ms", [300, 900])
def test_a_lift_that_stands_is_the_opponent_starting(held_ms: int) -> None:
    # a lift held longer than T_flicker and put back is a touch, not a glitch: White had not pressed
    codes = _codes("S0", f"0 L e2 · 300 P e4 wP · 1200 L d7 · {1200 + held_ms} P d7 bP · 2500 C W · "
                         "3000 L e7 · 3300 P e5 bP · 3800 C B")
    assert "CLOCK_NOT_PRESSED" in codes


def test_a_quick_real_move_of_the_opponent_is_the_opponent_starting() -> None:
    # lifted and put down on another square within T_flicker: two squares changed, no flicker
    played = run(Scn("S0", "0 L e2 · 300 P e4 wP · 2000 L e7 · 2150 P e5 bP · 4000 C W · 4800 C B",
                     allow_info=("CLOCK_NOT_PRESSED", "CLOCK_LATE_PRESS")))
    (note,) = [f for f in played.engine.irregularities if f.code == "CLOCK_NOT_PRESSED"]
    assert note.t_raised == pytest.approx(2.0)


def test_chess960_castlings_with_a_flicker_raise_nothing() -> None:
    # the audit's flicker part (one random case per start array; every procedure; press or no clock)
    todo = [dataclasses.replace(c, noise="flicker") for c in audit.cases(
        961, 960, arrays=list(range(960)), procedures=(*audit.KING_ROOK, *audit.STAYS, *audit.KING_TAKES_ROOK))]
    bad = [(c, r) for c in todo if (r := audit.run(c))[2]]
    assert bad == []
