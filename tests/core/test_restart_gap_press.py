"""Daemon restarts (docs/downtime.md), found by the alert audit (tests/consumers/test_alert_audit.py).

* A restart whose downtime the recovery cannot explain leaves a marked gap; the record then goes on from the
  board's position, with no move to undo. A press judged after that (a timer of the engine) took the side's
  gap entry for a made move "changed into something not legal" and popped a move the board does not have:
  IndexError out of ``Engine.advance``, which the daemon's timer loop does not catch.
* A restart that missed nothing: the first dump was held for a quiet second and a move begun within it was
  "recovered" at its first square (a false RELEASED_MOVE_CHANGED).
"""

from __future__ import annotations

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import BoardSnapshot, ClockReading, Content, Link, LinkChanged, SquareChanged
from boardd.core.outputs import Severity
from drivers.sim import Injection, InjectionKind, random_game, simulate_game


def test_a_press_after_a_restart_gap_is_judged_without_crashing() -> None:
    sim = simulate_game(random_game(4, max_plies=60), seed=4, profile="clean",
                        injections=(Injection(InjectionKind.PRESS_PIECE_IN_HAND, 42),))
    events = sim.events
    down, up = 311, 325  # the daemon does not run from events[down] to events[up - 1] (board and clock events only)
    assert {type(e) for e in events[down:up]} == {SquareChanged, ClockReading}
    engine = Engine(sim.header.rules, sim.header.game)
    for event in events[:down]:  # what the journal holds (the restarted daemon replays it)
        engine.advance(event.at)
        engine.feed(event)
    t_down, t_up = events[down].at, events[up - 1].at + 0.01
    for link in (Link.CLOCK, Link.BOARD):
        engine.feed(LinkChanged(at=t_down, link=link, up=False, detail=RESTART_DETAIL))
    squares: list[Content] = [None] * 64
    for event in events[:up]:
        if isinstance(event, BoardSnapshot):
            squares = list(event.squares)
        elif isinstance(event, SquareChanged):
            squares[event.square] = event.content
    engine.feed(LinkChanged(at=t_up, link=Link.BOARD, up=True, detail="usb"))
    engine.feed(BoardSnapshot(at=t_up, squares=tuple(squares)))
    for event in events[up:]:
        engine.advance(event.at)  # raised IndexError (pop from empty list) at the press
        engine.feed(event)
    assert any(m.uci == "0000" for m in engine.state.moves)  # the marked gap
    codes = [i.code for i in engine.irregularities if i.severity is not Severity.INFO]
    assert codes == ["POSITION_MISMATCH_AT_PRESS"]  # the board at the press, for the arbiter to inspect


def test_a_move_begun_just_after_a_restart_that_missed_nothing_is_no_changed_move() -> None:
    """The daemon back before anything was played (its dump shows the official position, the clock not read
    yet): the first dump was held for a quiet second, and a move begun within it was "recovered" at its first
    square; the queen slid on d3-e3-f3-g3 then made a changed move of it (RELEASED_MOVE_CHANGED, a warning:
    a false alert on the tablet). Found by the alert audit (simulated game seed 0, casual handling)."""
    sim = simulate_game(random_game(0, max_plies=60), seed=0, profile="casual")
    events = sim.events
    n = next(i for i, e in enumerate(events) if e.at >= 234.76)  # a clock reading, 0.4 s before the queen's slide
    assert isinstance(events[n], ClockReading) and isinstance(events[n + 1], SquareChanged)
    engine = Engine(sim.header.rules, sim.header.game)
    for event in events[:n]:
        engine.advance(event.at)
        engine.feed(event)
    at = events[n].at  # the daemon is back: this reading was not seen
    for link in (Link.CLOCK, Link.BOARD):
        engine.feed(LinkChanged(at=at, link=link, up=False, detail=RESTART_DETAIL))
    squares: list[Content] = [None] * 64
    for event in events[:n]:
        if isinstance(event, BoardSnapshot):
            squares = list(event.squares)
        elif isinstance(event, SquareChanged):
            squares[event.square] = event.content
    engine.feed(LinkChanged(at=at, link=Link.BOARD, up=True, detail="usb"))
    engine.feed(BoardSnapshot(at=at, squares=tuple(squares)))
    for event in events[n + 1:]:
        engine.advance(event.at)
        engine.feed(event)
    assert [i.code for i in engine.irregularities if i.severity is not Severity.INFO] == []
    assert [m.uci for m in engine.state.moves] == sim.moves
