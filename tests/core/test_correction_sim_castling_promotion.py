"""The simulator's correction cycles of an illegal castling (corrected to another king move, the other castling
among them, 4.4.3) and of a changed promotion choice (the first piece put back, 4.4.4), standard and Chess960, in
every edition, replayed through the engine and judged from the Laws (tests/core/sim_correction_audit.py).

Before the fix the changed promotion put right on the board left the record on the piece it was changed to (the
opponent's next moves then misread: POSITION_MISMATCH_AT_PRESS, TOUCH_CAPTURE_SUSPECTED, null moves), the finding
open, and the CLOCK_NOT_PRESSED read from the mover's hand lifting his own piece stood outside the incident.
"""

from __future__ import annotations

import pytest

from tests.core.sim_correction_audit import EDITIONS, CorrectionKind, audit, plies

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
