"""A move made while the clock's link is down: the press the clock could not report still completes it (6.2.1).

The clock's link (its cable, a Bluetooth drop) is lost around one move: before the mover lifts the piece, while
it is in the air, or after it is placed and before the press; the press is made while no reading reaches the
engine; the link comes back (with or without its link event) and the first reading shows the opponent's clock
running. That reading is the evidence that the press happened unseen: the move is completed then, before the
opponent's reply (the record's completions in order), with no clock times (when the press happened is not known:
no ``[%clk]`` invented), and no ``CLOCK_LATE_PRESS`` at a later press. The opponent's reply, an illegal move in
half of the cases, is then judged as any (``ILLEGAL_MOVE``, 7.5.1, once). The control: the mover did not press
during the outage (the reading shows his clock still running) and presses once it is back: that press, seen,
completes the move with its clock times; nothing is invented at the reconnection.

Seeded over many games, orders and timings (the plain engine; the daemon's world script plays one such order).
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, Link, LinkChanged, SquareChanged
from boardd.core.outputs import Completion, IrregularityRaised, MoveCompleted, Output
from boardd.core.record import format_clock
from boardd.core.settings import RulesConfig
from tests.core.scenario import ClockSim, move_events, start_clock
from tests.daemon._helpers import random_moves
from tests.daemon._world import _unreachable, incident_moves, script, to_event

SEEDS = range(240)
PLIES = 10
#: when the clock's link is lost, relative to the outage move
DOWN = ("before the lift", "piece in the air", "placed, before the press")


@dataclass(frozen=True)
class Case:
    seed: int
    moves: tuple[str, ...]
    ply: int  # the outage move's ply (1-based)
    down: str
    pressed: bool  # the mover pressed during the outage (else after the link is back, seen)
    link_event: bool  # the link's return is reported (else the first reading tells)
    illegal_reply: bool  # the opponent's reply is an illegal move first (7.5.1), then the move


def _case(seed: int) -> Case:
    rng = random.Random(seed)
    return Case(seed=seed, moves=tuple(random_moves(rng.randrange(10**6), PLIES)), ply=rng.randrange(3, PLIES - 1),
                down=rng.choice(DOWN), pressed=rng.random() < 0.8, link_event=rng.random() < 0.7,
                illegal_reply=rng.random() < 0.5)


def _play(case: Case) -> tuple[Engine, list[Output], float | None]:
    rng = random.Random(case.seed * 7919 + 1)
    engine = Engine(RulesConfig(), GameInfo(time_control="300+0"))
    clock, first = start_clock(chess.WHITE, 0.0, seconds=300.0)
    outs = engine.feed(first)
    board = chess.Board()
    t = 1.0
    engine_time = [0.0]
    frozen: float | None = None

    def feed(*events: Event) -> None:
        for event in events:
            assert event.at >= engine_time[0], (case, event)  # (the script itself in time order)
            engine_time[0] = event.at
            outs.extend(engine.feed(event))

    for ply, uci in enumerate(case.moves, start=1):
        move = chess.Move.from_uci(uci)
        side = board.turn
        if ply == case.ply + 1 and case.illegal_reply:
            t = _illegal_first(feed, board, move, clock, t=t, rng=rng)
        lost = t
        if ply == case.ply and case.down == DOWN[0]:
            t += rng.uniform(0.05, 0.5)  # the link lost, then the lift
        events = move_events(board, move, t, None)
        press_at = events[-1].at + rng.uniform(0.5, 0.9)
        if ply == case.ply:
            down = LinkChanged(at=0.0, link=Link.CLOCK, up=False, detail="clock cable")
            if case.down == DOWN[0]:
                events.insert(0, _at(down, lost))
            elif case.down == DOWN[1]:
                events.insert(1, _at(down, rng.uniform(events[0].at + 0.01, events[1].at - 0.01)))
            else:
                events.append(_at(down, rng.uniform(events[-1].at + 0.01, press_at - 0.01)))
            feed(*events)
            if case.pressed:
                clock.press(side, press_at)  # unseen: no reading reaches the engine
                frozen = clock.white if side == chess.WHITE else clock.black
            back = press_at + rng.uniform(0.2, 3.0)
            if case.link_event:
                feed(LinkChanged(at=back, link=Link.CLOCK, up=True, detail="clock cable"))
            feed(clock.reading(back + rng.uniform(0.02, 0.3)))
            t = back + 0.5
            if not case.pressed:
                t += rng.uniform(0.2, 1.0)
                feed(clock.press(side, t))  # the press, seen
        else:
            feed(*events, clock.press(side, press_at))
            t = press_at
        outs.extend(engine.advance(t + 0.2))
        board.push(move)
        t += rng.uniform(0.3, 1.2)
    outs.extend(engine.advance(t + 10.0))
    return engine, outs, frozen


def _at(event: LinkChanged, at: float) -> LinkChanged:
    return LinkChanged(at=at, link=event.link, up=event.up, detail=event.detail)


def _illegal_first(feed: Callable[..., None], board: chess.Board, move: chess.Move, clock: ClockSim, *, t: float,
                   rng: random.Random) -> float:
    """As the Laws have it (7.5.1, 7.5.5): the mover puts the piece on a square it cannot reach and presses, the
    arbiter pauses the clock, the position is put back, the clock restarted for the offender, 2 minutes more for the
    opponent; the move follows."""
    side = board.turn
    piece = board.piece_at(move.from_square)
    target = _unreachable(board, move.from_square, rng)
    feed(SquareChanged(at=t, square=move.from_square, content=None),
         SquareChanged(at=t + 0.15, square=target, content=piece))
    t += 0.15 + rng.uniform(0.6, 0.8)
    feed(clock.press(side, t))
    t += rng.uniform(0.8, 1.2)
    feed(clock.pause(t))
    t += rng.uniform(0.8, 1.2)
    feed(SquareChanged(at=t, square=target, content=None),
         SquareChanged(at=t + 0.15, square=move.from_square, content=piece))
    t += 0.15 + rng.uniform(1.0, 1.5)
    clock._tick(t)
    if side == chess.WHITE:
        clock.black += 120.0
    else:
        clock.white += 120.0
    clock.lever = clock.running = side
    feed(clock.reading(t))
    return t + rng.uniform(0.3, 0.6)


def _codes(outs: list[Output]) -> Counter[str]:
    return Counter(o.irregularity.code for o in outs if isinstance(o, IrregularityRaised))


@pytest.mark.parametrize("seed", SEEDS)
def test_move_made_during_a_clock_outage_completed_by_its_unseen_press(seed: int) -> None:
    case = _case(seed)
    engine, outs, frozen = _play(case)
    records = engine.state.moves
    assert [m.uci for m in records] == list(case.moves), case
    rec = records[case.ply - 1]
    assert rec.completion is Completion.PRESS, case
    # completed in order: before the opponent's reply, as every move of the record
    completed = [o.move.ply for o in outs if isinstance(o, MoveCompleted)
                 and o.move.uci == records[o.move.ply - 1].uci]  # (not the illegal move, retracted)
    assert completed == list(range(1, PLIES + 1)), (case, completed)
    assert all(a.completed_at is not None and b.completed_at is not None and a.completed_at <= b.completed_at
               for a, b in itertools.pairwise(records)), case
    if case.pressed:
        # the press time is not known: the opponent's clock then is not; the mover's has stood since his press
        # and shows the time it left him, as a reading just after the press would have (his [%clk])
        mine, theirs = (rec.clock_white, rec.clock_black) if rec.side == chess.WHITE else \
            (rec.clock_black, rec.clock_white)
        assert (mine, theirs) == (frozen, None), (case, rec, frozen)
        assert frozen is not None and re.search(rf"{re.escape(rec.san)}\s\{{ \[%clk {format_clock(frozen)}\] \[%emt",
                                                engine.pgn()), case
    else:
        assert rec.clock_white is not None and rec.clock_black is not None, case  # its press was seen
    # the illegal reply: raised once; the arbiter's pause noted, his time change noted (info)
    expected = Counter({"ILLEGAL_MOVE": 1, "CLOCK_PAUSED": 1, "ARBITER_ADJUST": 1}) if case.illegal_reply else Counter()
    assert _codes(outs) == expected, case


@pytest.mark.parametrize("seed", range(40))
def test_world_script_outage_move_completed_in_order(seed: int) -> None:
    """The daemon tests' world (``tests/daemon/_world.py``, as ``test_crash`` plays it) on the plain engine: its move
    made while the clock's link is down is completed at the first reading after the link's return, in order; the
    illegal move of the game is raised once, as ``ILLEGAL_MOVE``."""
    moves = random_moves(seed + 100, 8)
    steps = script(moves, seed=seed, incidents=True)
    outage = incident_moves(moves, seed=seed)[1]
    engine = Engine(RulesConfig(), GameInfo(time_control="300+0"))
    outs: list[Output] = []
    for step in steps:
        outs += engine.feed(to_event(step, step.t))
    outs += engine.advance(steps[-1].t + 10.0)
    records = engine.state.moves
    assert [m.uci for m in records] == moves
    assert all(m.completion is Completion.PRESS for m in records), [(m.uci, m.completion) for m in records]
    completed = [o.move.ply for o in outs if isinstance(o, MoveCompleted)
                 and o.move.uci == records[o.move.ply - 1].uci]
    assert completed == list(range(1, len(moves) + 1))
    if outage >= 0:
        rec = records[outage]
        # pressed while unseen: no [%clk] invented but the mover's, his clock stopped since (the return's reading)
        back = next(s for s in steps[next(i for i, s in enumerate(steps) if s.kind == "link" and s.up):]
                    if s.kind == "clock")
        mine = back.left if rec.side == chess.WHITE else back.right
        assert (rec.clock_white, rec.clock_black) == ((mine, None) if rec.side == chess.WHITE else (None, mine))
    codes = _codes(outs)
    assert codes["ILLEGAL_MOVE"] == 1, codes
    assert not codes.keys() & {"CLOCK_LATE_PRESS", "CLOCK_PRESS_NO_MOVE", "ILLEGAL_PLACEMENT_CORRECTED",
                               "MOVE_COMPLETED_WITHOUT_PRESS", "CLOCK_NOT_PRESSED"}, codes
