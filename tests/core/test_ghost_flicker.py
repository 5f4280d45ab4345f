"""A piece of the side without the move read for a moment on an empty square (no piece of that side lifted)
is a sensor glitch when the reading reverts within T_flicker (rules-spec §5.2 SENSOR_FLICKER, info); only
when it stays is it a change out of turn (OUT_OF_TURN_CHANGE, a warning: the arbiter's tablet alerts).
It was raised at once, before the reading could revert: every such glitch was an alert. Found by the
alert audit (tests/consumers/test_alert_audit.py, test_sensor_flicker_raises_no_alert)."""

from __future__ import annotations

import pytest

from boardd.core.outputs import Severity
from tests.core.test_scenarios import Scn, run


def _findings(events: str) -> tuple[list[str], list[str]]:
    played = run(Scn("C", events, allow_info=("SENSOR_FLICKER",)))
    found = played.engine.irregularities
    return ([f.code for f in found if f.severity is not Severity.INFO],
            [f.code for f in found if f.severity is Severity.INFO])


@pytest.mark.parametrize("ms", [40, 120, 200, 240])
def test_a_ghost_piece_of_the_side_without_the_move_that_reverts_is_flicker(ms: int) -> None:
    # C (4k3/8/8/8/2b5/8/8/4K2R w K): a black knight read on e3 (empty) for a moment, White then plays Rh2
    asking, notes = _findings(f"0 P e3 bN · {ms} L e3 · 2000 L h1 · 2300 P h2 wR · 2800 C W")
    assert asking == [] and notes == ["SENSOR_FLICKER"]


def test_a_piece_that_stays_is_a_change_out_of_turn() -> None:
    asking, _ = _findings("0 P e3 bN · 900 L e3 · 2000 L h1 · 2300 P h2 wR · 2800 C W")
    assert asking == ["OUT_OF_TURN_CHANGE"]


def test_a_piece_lifted_and_put_elsewhere_out_of_turn_is_raised_at_once() -> None:
    played = run(Scn("C", "0 L c4 · 100 P d5 bB · 2000 L d5 · 2100 P c4 bB · 3000 L h1 · 3300 P h2 wR · 3800 C W"))
    (oot,) = [f for f in played.engine.irregularities if f.code == "OUT_OF_TURN_CHANGE"]
    assert oot.t_raised == pytest.approx(0.1)
