"""The simulator's correction cycles of an illegal castling (corrected to another king move, the other castling
among them, 4.4.3) and of a changed promotion choice (the first piece put back, 4.4.4), standard and Chess960, in
every edition, replayed through the engine and judged from the Laws (tests/core/sim_correction_audit.py).

Before the fix the changed promotion put right on the board left the record on the piece it was changed to (the
opponent's next moves then misread: POSITION_MISMATCH_AT_PRESS, TOUCH_CAPTURE_SUSPECTED, null moves), the finding
open, and the CLOCK_NOT_PRESSED read from the mover's hand lifting his own piece stood outside the incident.
"""

from __future__ import annotations

import pytest

from boardd.core.outputs import Status
from tests.core.sim_correction_audit import EDITIONS, CorrectionKind, audit, plies
from tests.core.test_scenarios import Scn, check, run

CASES = [((kind, c960, other), edition, seed, ply)
         for kind, c960, other in ((CorrectionKind.CASTLING_ILLEGAL, False, False),
                                   (CorrectionKind.CASTLING_ILLEGAL, False, True),
                                   (CorrectionKind.CASTLING_ILLEGAL, True, False),
                                   (CorrectionKind.PROMOTION_CHOICE_CHANGED, False, False),
                                   (CorrectionKind.PROMOTION_CHOICE_CHANGED, True, False))
         for edition in EDITIONS for seed, ply in plies(kind, c960, 3, other)]


@pytest.mark.parametrize(("family", "edition", "seed", "ply"), CASES,
                         ids=[f"{k.value}{'-960' if c else ''}{'-other' if o else ''}-{e}-game{s}"
                              for (k, c, o), e, s, _ in CASES])
def test_correction_cycle_is_judged_by_the_laws(family: tuple[CorrectionKind, bool, bool], edition: int, seed: int,
                                               ply: int) -> None:
    kind, c960, _other = family
    label, problems = audit(kind, seed, ply, edition, c960)
    assert problems == [], label


# ------------------------------------------------------------------------------------------- by hand (R05, T25)

_CHANGED = "0 L b7 · 300 P b8 wQ · 1500 L b8 · 1800 P b8 wN · 2200 C W"
_REPLY = "8000 L g8 · 8300 P g7 bK · 8800 C B"


@pytest.mark.parametrize("paused", [True, False])
@pytest.mark.parametrize("edition", [2009, 2014, 2018, 2023])
def test_first_piece_put_back_after_the_press_is_the_record(edition: int, paused: bool) -> None:
    """b8=Q released, changed to b8=N, pressed; the queen put back on b8 (paused: by the arbiter; running: by the
    player): the record is b8=Q+ (4.4.4: the first piece stands), the opponent's reply read as his move, one alert;
    resolved when the arbiter had paused the clock."""
    fix = "3500 PAUSE · 4500 L b8 · 4900 P b8 wQ · 5500 RESUME" if paused else "4500 L b8 · 4900 P b8 wQ"
    scn = Scn("K", f"{_CHANGED} · {fix} · {_REPLY}", ("b8=Q+", "Kg7"),
              ("PROMOTION_CHOICE_CHANGED", "RELEASED_MOVE_CHANGED"), edition=edition, tc="5400+30",
              allow_info=("CLOCK_PAUSED", "PROMOTION_ORDER_2009", "CLOCK_NOT_PRESSED"))
    r = run(scn)
    check(scn, r)
    changed = next(i for i in r.engine.irregularities if i.code == "PROMOTION_CHOICE_CHANGED")
    released = next(i for i in r.engine.irregularities if i.code == "RELEASED_MOVE_CHANGED")
    assert released.incident == changed.id
    assert not changed.suggestion.add_to_opponent_s
    # the queen lifted off b8 read as Black starting: the mover's hand, withdrawn (one incident, his)
    assert all(i.status is Status.RESOLVED for i in r.engine.irregularities if i.code == "CLOCK_NOT_PRESSED")
    if paused:
        assert changed.status is Status.RESOLVED and changed.ruling == "put right on the board: b8=Q+ stands"
        assert released.status is Status.RESOLVED
    else:
        assert changed.status is Status.OPEN


@pytest.mark.parametrize("edition", [2009, 2023])
def test_king_down_on_its_rook_in_an_illegal_castling_is_not_a_flicker(edition: int) -> None:
    """The "king takes rook" way (R27) of a castling the lost right forbids (T10): the king set down on h1 for 100 ms
    is the hand, not a sensor glitch; the one alert is the illegal castling (before: a SENSOR_FLICKER note beside
    it, outside its incident, and the evidence of the king's step dropped)."""
    scn = Scn("D", "0 L e1 · 200 L h1 · 600 P h1 wK · 700 L h1 · 1000 P g1 wK · 1300 P f1 wR · 1700 C W", ("!",),
              ("ILLEGAL_MOVE/CASTLING_ILLEGAL",), edition=edition, tc="5400+30")
    r = run(scn)
    check(scn, r)
    assert not [i for i in r.engine.irregularities if i.code == "SENSOR_FLICKER"]
