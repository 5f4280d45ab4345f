"""Bench false-alarm games that once raised unwarranted findings: each judged again, nothing unwarranted.

- undo/same-again on a promotion (clean:496, casual:389, casual:468, clumsy:968): the promoted piece lifted where
  the opponent could capture it and the pawn put back from beside the board were read as the opponent starting
  (OPPONENT_STARTED_BEFORE_MOVE_MADE, then ADJUST_OUT_OF_TURN, OUT_OF_TURN_CHANGE or TOUCH_CAPTURE_SUSPECTED);
- press-no-move (clumsy:555, clumsy:755): the move after the arbiter's correction, a piece touched first and put
  back, raised TOUCH_MOVE_SUSPECTED rightly, but the simulator had not listed it (its ply notes were dropped).
"""

from __future__ import annotations

import pytest

from bench.bench_false_alarms import Item, judge


@pytest.mark.parametrize("label", ["clean:496", "casual:389", "casual:468", "clumsy:968", "clumsy:555",
                                   "clumsy:755"])
def test_bench_game_raises_nothing_unwarranted(label: str) -> None:
    profile, _, index = label.partition(":")
    outcome = judge(Item(profile, int(index)))
    assert outcome is not None and not outcome.error
    assert outcome.exact, outcome.difference
    assert outcome.unwarranted == []
    assert outcome.missing == []
