"""``bench downtime-audit`` replays its recordings as the daemon runs the engine: timers at their deadlines."""

from __future__ import annotations

import random
from functools import cache

import chess

from bench.bench_downtime_audit import Case, record, replay
from bench.bench_downtime_block import _lines


@cache
def _games() -> list[list[chess.Move]]:
    return _lines(200)


def _recordings(situation: str, seed: int, count: int) -> list[tuple[int, Case]]:
    """The audit's recordings of *situation* (``--seed`` *seed*, the first *count*), numbered as it numbers them."""
    rng = random.Random(f"{seed}-{situation}")
    return [(i, record(rng, _games(), situation)) for i in range(count)]


def test_an_illegal_move_that_stood_during_the_gap_without_a_clock_is_raised_once() -> None:
    """No clock, the board's log read at its return: a piece put where it cannot go during the gap (a restart or a
    board link outage), the opponent's reply seen after the return completes it (7.5.1). The audit must score it as
    the daemon runs it: ``ILLEGAL_MOVE`` once, the illegal move in the record as it stood (``illegal raised``, one
    alert). Its replay fired the engine's timers only at the end: the held board was recovered at the time of the
    reply's first change, the illegal placement looked "put down" as the reply began, and nothing was raised
    (``held``, 0 alerts: ``--seed 1`` cases 0, 20 and 28). The daemon's timer task (and ``boardd replay``) fires
    them at their deadlines, before the next event."""
    cases = [
        (seed, i, case)
        for seed in (1, 2, 3)
        for i, case in _recordings("illegal", seed, 30)
        if case.clock == "none" and case.eeprom and case.illegal
    ]
    assert len(cases) >= 12  # (randomised: restarts and link outages, 1-12 plies, hand orders and timings)
    assert {case.restart for _, _, case in cases} == {True, False}
    outcomes = {(seed, i): replay(case) for seed, i, case in cases}
    scored = {key: (out.kind, out.alerts) for key, out in outcomes.items()}
    assert scored == dict.fromkeys(scored, ("illegal raised", 1))
