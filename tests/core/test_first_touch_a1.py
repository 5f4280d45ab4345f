"""The opponent's first touch is a touch wherever it is: a lift from a1 (square 0) too.

`WhoseChange.note_started` once tested ``any(square for ... in seg_lifts)``: a segment whose only lift was
from a1 (square index 0) counted as "nothing touched", so White starting with the a1 rook neither raised
CLOCK_NOT_PRESSED against Black's unpressed move nor closed Black's Article 4 claim windows (R08).
"""

from __future__ import annotations

from tests.core.test_scenarios import Scn, check, run

#: 1. a4 (pressed); 1... e5 made, Black does not press; White starts his reply with the a1 rook or the b1 knight,
#: Black presses late, White presses.
_ROOK = "0 L a2 · 300 P a4 wP · 600 C W · 2000 L e7 · 2300 P e5 bP · 4000 L a1 · 4300 P a3 wR · 5000 C B · 5800 C W"
_KNIGHT = "0 L a2 · 300 P a4 wP · 600 C W · 2000 L e7 · 2300 P e5 bP · 4000 L b1 · 4300 P c3 wN · 5000 C B · 5800 C W"


def _codes(events: str, sans: tuple[str, ...]) -> list[str]:
    r = run(Scn("S0", events, sans, ()))
    assert [m.san for m in r.engine.state.moves] == list(sans)
    return sorted(i.code for i in r.raised)


def test_a_lift_from_a1_is_the_opponent_starting_as_from_any_square() -> None:
    knight = _codes(_KNIGHT, ("a4", "e5", "Nc3"))
    rook = _codes(_ROOK, ("a4", "e5", "Ra3"))
    assert "CLOCK_NOT_PRESSED" in knight  # the reference: Black's move not pressed when White starts
    assert rook == knight


def test_r08_claim_window_closes_at_a_lift_from_a1() -> None:
    # Black touches his knight, adjusts (j'adoube without a word is suspected), moves the pawn: White's first
    # touch (the a1 rook) closes Black's Article 4 claims (R08)
    scn = Scn("S0", "0 L a2 · 300 P a4 wP · 600 C W · 1500 L g8 · 1800 P g8 bN · 2500 L e7 · 2800 P e5 bP · 3100 C B"
                    " · 4000 L a1 · 4300 P a3 wR · 4600 C W", ("a4", "e5", "Ra3"), ("ADJUST_OBSERVED",
                                                                                  "TOUCH_MOVE_SUSPECTED"))
    r = run(scn)
    check(scn, r)
    touch = next(i for i in r.engine.irregularities if i.code == "TOUCH_MOVE_SUSPECTED")
    assert touch.claim_deadline == 4.0
