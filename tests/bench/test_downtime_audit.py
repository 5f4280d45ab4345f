"""``bench downtime-audit`` replays its recordings as the daemon runs the engine: timers at their deadlines."""

from __future__ import annotations

import random
from functools import cache

import chess
import pytest

from bench.bench_downtime_audit import Case, record, replay
from bench.bench_downtime_block import _lines


@cache
def _games() -> list[list[chess.Move]]:
    return _lines(200)


def _recordings(situation: str, seed: int, count: int) -> list[tuple[int, Case]]:
    """The audit's recordings of *situation* (``--seed`` *seed*, the first *count*), numbered as it numbers them."""
    rng = random.Random(f"{seed}-{situation}")
    return [(i, record(rng, _games(), situation)) for i in range(count)]


@pytest.mark.timeout(900)  # 8 replays with searches: ~40 s of CPU, more than the default 300 s at load 15-20
def test_an_illegal_move_that_stood_during_the_gap_without_a_clock_is_raised_once() -> None:
    """No clock, the board's log read at its return: a piece put where it cannot go while the daemon was down (a
    restart), the opponent's reply seen after the return completes it (7.5.1). The audit must score it as
    the daemon runs it: ``ILLEGAL_MOVE`` once, the illegal move in the record as it stood (``illegal raised``, one
    alert). Its replay fired the engine's timers only at the end: the held board was recovered at the time of the
    reply's first change, the illegal placement looked "put down" as the reply began, and nothing was raised
    (``held``, 0 alerts: ``--seed 1`` cases 0, 20 and 28). The daemon's timer task (and ``boardd replay``) fires
    them at their deadlines, before the next event."""
    # (restarts only: a restart holds the board until it is quiet; a link outage's dump is reconciled at once)
    cases = [
        (seed, i, case)
        for seed in (1, 3)
        for i, case in _recordings("illegal", seed, 30)
        if case.clock == "none" and case.eeprom and case.illegal and case.restart
    ]
    assert len(cases) >= 8  # (randomised: 1-12 plies, hand orders and timings)
    outcomes = {(seed, i): replay(case) for seed, i, case in cases}
    wrong = {
        key: (out.kind, out.alerts) for key, out in outcomes.items() if (out.kind, out.alerts) != ("illegal raised", 1)
    }
    assert not wrong, f"{len(wrong)} of {len(outcomes)}: {wrong}"
