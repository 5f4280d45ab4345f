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


@pytest.mark.parametrize("label", ["casual:988", "clumsy:7", "clumsy:667", "clumsy:707"])
def test_no_clock_quick_reply_games_raise_nothing_unwarranted(label: str) -> None:
    """Games without a clock, the reply started from 0.15 s after the release (``--reply-from 0.15``: inside
    ``T_settle``, the blitz race of rules-spec §3.4.1), that raised unwarranted findings at 93a9970:

    - casual:988 (noclock/chess960): Black's queen put down on e3, White's bishop captures it 0.29 s later, set down
      on f2 on its way from g1: the bishop's lift, read while the queen's move had not settled, was held as Black's
      opponent starting before the move was made and the transit confirmed it (OPPONENT_STARTED_BEFORE_MOVE_MADE);
      the reply shows the move was released (4.7), the touch came after the queen stood on e3;
    - clumsy:7, clumsy:667, clumsy:707: the reply (a capture of the piece just moved, inside T_settle) with one of
      the replying player's own pieces knocked and put back on the way: the piece put back read as lifted and
      replaced on the opponent's time (ADJUST_OUT_OF_TURN), before the reply made the first move as released.
    """
    profile, _, index = label.partition(":")
    outcome = judge(Item(profile, int(index)), reply_from=0.15)
    assert outcome is not None and not outcome.error
    assert outcome.exact, outcome.difference
    assert outcome.unwarranted == []


@pytest.mark.parametrize("label", ["clumsy:408", "clumsy:727", "clumsy:747", "clumsy:847", "clumsy:887"])
def test_no_clock_quick_touch_is_the_opponents(label: str) -> None:
    """The same no-clock games with replies from 0.15 s: the opponent lifts a piece of his that the move just set
    down could capture, 0.2-0.4 s after it (inside ``T_settle``), and puts it back, then moves another piece. The
    lift dropped the move's candidate (read as the mover's capture under way) and the put-back made a new one: the
    move was made at the put-back and the touch was the mover's, so the warranted TOUCH_MOVE_SUSPECTED of the
    opponent was missing (5 games at 93a9970). The move stood on its squares (rules-spec §3.4.1): made as placed,
    the touch the opponent's."""
    profile, _, index = label.partition(":")
    outcome = judge(Item(profile, int(index)), reply_from=0.15)
    assert outcome is not None and not outcome.error
    assert outcome.exact, outcome.difference
    assert outcome.missing == [] and outcome.unwarranted == []
