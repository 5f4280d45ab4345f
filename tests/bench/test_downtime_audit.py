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


@pytest.mark.timeout(900)
def test_a_gap_without_a_clock_is_one_alert_when_the_other_side_moves_next() -> None:
    """``--seed 1`` ``illegal`` 29: no clock, the daemon restarted, 7 plies missed and the last an illegal move (the
    king put into check, on d1), the board's log not read. Nine legal sequences of 8 plies explain the board too: a gap
    (``ambiguous``), its candidates leaving White to move. Black's reply, seen after the return, was taken for a move
    out of turn: ``OUT_OF_TURN_CHANGE`` beside the gap, two alerts for one incident. Without a clock nothing says the
    players went by the fewest plies (an illegal move not completed yet passed the turn with the reply, 7.5.1): the
    first move after the gap tells the side to move, as after a position adopted without a clock; one alert."""
    (_, case), = [r for r in _recordings("illegal", 1, 30) if r[0] == 29]
    out = replay(case)
    assert (out.kind, out.alerts) == ("gap0", 1), out.notes


@pytest.mark.timeout(900)
def test_joined_findings_fold_under_their_incident_in_the_audit() -> None:
    """``--seed 1`` ``promotion`` 5: a 12-ply link outage nothing explains (``POSITION_DIVERGENCE``), then White's
    rook put on d1 after the return: ``ADJUST_OUT_OF_TURN``, joined to the divergence (``incident``). One incident, one
    card on the tablet (the contract's ``incident``: consumers fold it under its primary); the audit counted two."""
    (_, case), = [r for r in _recordings("promotion", 1, 6) if r[0] == 5]
    out = replay(case)
    assert (out.kind, out.alerts) == ("divergence", 1), out.notes


@pytest.mark.timeout(900)
def test_a_piece_displaced_out_of_sight_and_put_back_binds_no_touch() -> None:
    """``displaced``, the daemon restarted: the board back with a piece of the side to move off its square (7.4; or
    his illegal move not completed: it cannot be told), the legal plies before it recovered. The audit now plays on as
    a real game does: the piece is put back (soon, or after a while), then three plies. Taken as the side to move's
    illegal placement, its correction made him move that piece (4.3): ``TOUCH_MOVE_VIOLATION`` on an exact record
    (``--seed 1`` cases 12, 13, 14, 21, 24, 25, 26). Nobody was seen touching it: the placement was first seen in the
    dump of the board's return; put right, it binds no piece (its ``ILLEGAL_PLACEMENT_CORRECTED`` stays a note)."""
    touched = {12, 13, 14, 21, 24, 25, 26}  # (every restart of the 30 whose legal plies were recovered, the piece off)
    cases = [(i, case) for i, case in _recordings("displaced", 1, 30) if i in touched]
    assert all(case.restart and case.displaced for _, case in cases)
    outcomes = {i: replay(case) for i, case in cases}
    wrong = {key: (out.kind, out.alerts, out.notes) for key, out in outcomes.items()
             if (out.kind, out.alerts) != ("exact", 0)}
    assert not wrong, f"{len(wrong)} of {len(outcomes)}: {wrong}"
