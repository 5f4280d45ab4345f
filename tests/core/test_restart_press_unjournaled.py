"""The daemon killed between a player's press and its journal (found by tests/daemon/test_crash.py under load).

The move was made and journaled, its press was not: the restarted daemon replays the move as made, not completed,
and the board's dump shows the official position (nothing to recover). The first clock reading after the restart
has the opponent's clock running: the mover pressed while the daemon was down. Before, nothing completed the move
then: it waited for its side's next move (``completion: next_move``), so the opponent's reply was made and
completed before it; a consumer of the ``move`` messages saw the completions out of order (tests/daemon/test_crash.py
``seed 4``: ``f2f3`` completed before ``f7f6``).
"""

from __future__ import annotations

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import BoardSnapshot, ClockReading, Content, Event, Link, LinkChanged, SquareChanged
from boardd.core.outputs import Completion, MoveCompleted, MoveMade, Output, Severity
from drivers.sim import random_game, simulate_game


def _presses(events: list[Event]) -> list[int]:
    """Indices of the clock readings whose lever changed (the presses), after the game's first reading."""
    found, lever = [], None
    for n, event in enumerate(events):
        if isinstance(event, ClockReading):
            if lever is not None and event.lever_high is not None and event.lever_high != lever:
                found.append(n)
            lever = event.lever_high if event.lever_high is not None else lever
    return found


def _squares(events: list[Event]) -> tuple[Content, ...]:
    squares: list[Content] = [None] * 64
    for event in events:
        if isinstance(event, BoardSnapshot):
            squares = list(event.squares)
        elif isinstance(event, SquareChanged):
            squares[event.square] = event.content
    return tuple(squares)


def _feed(engine: Engine, event: Event, outs: list[Output]) -> None:
    outs += engine.advance(event.at)
    outs += engine.feed(event)


CASES = [(seed, k) for seed in range(3) for k in (3, 8, 15)]


@pytest.mark.parametrize(("seed", "k"), CASES)
def test_a_press_lost_with_the_daemon_completes_the_move_at_the_first_reading(seed: int, k: int) -> None:
    sim = simulate_game(random_game(seed, max_plies=40), seed=seed, profile="clean")
    events = list(sim.events)
    press = _presses(events)[k]  # the journal ends just before this press (the daemon killed as it came)
    engine = Engine(sim.header.rules, sim.header.game)
    outs: list[Output] = []
    for event in events[:press]:
        _feed(engine, event, outs)
    last = engine.state.moves[-1]
    assert last.completed_at is None  # the move was made; its press is the reading lost with the daemon
    at = events[press].at - 0.001
    for link in (Link.CLOCK, Link.BOARD):  # boardd.daemon.service.mark_restart
        _feed(engine, LinkChanged(at=at, link=link, up=False, detail=RESTART_DETAIL), outs)
    _feed(engine, LinkChanged(at=at, link=Link.BOARD, up=True, detail="world"), outs)
    _feed(engine, BoardSnapshot(at=at, squares=_squares(events[:press])), outs)
    start = len(outs)
    for event in events[press:]:  # the press reading is the first one the restarted daemon reads
        _feed(engine, event, outs)
    after = outs[start:]
    done = next(o for o in after if isinstance(o, MoveCompleted) and o.move.ply == last.ply)
    assert done.move.completion is Completion.PRESS and done.move.completed_at == events[press].at
    # nothing of the next move before the last one's completion; every completion in ply order
    first_next = next(n for n, o in enumerate(after) if isinstance(o, MoveMade) and o.move.ply == last.ply + 1)
    assert after.index(done) < first_next
    completed = [o.move.ply for o in outs if isinstance(o, MoveCompleted)]
    assert completed == sorted(completed) and len(set(completed)) == len(sim.moves)
    assert [m.uci for m in engine.state.moves] == sim.moves
    assert [i.code for i in engine.irregularities if i.severity is not Severity.INFO] == []
    assert chess.Board(engine.state.fen).fen() == engine.state.fen
