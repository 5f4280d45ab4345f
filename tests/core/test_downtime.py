"""The engine across a daemon restart: what was played while nobody read the board is recovered, never judged.

A simulated game is fed to the engine up to a moment; then the daemon "restarts" (the two outages it
journals), misses the events of the downtime, and sees the board again as a real board shows it after a
reconnection: link up, optionally the board's own log (DGT EEPROM), a dump, and the clock as it is.
"""

from __future__ import annotations

import dataclasses

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import (
    BoardLog,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Event,
    FillGap,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
    NewGame,
    SquareChanged,
)
from boardd.core.outputs import GameEvent, IrregularityRaised, MoveMade, MovesRetracted, Output, Severity
from boardd.core.settings import RulesConfig
from drivers.sim import simulate_game


def _physical(events: list[Event]) -> list[Content]:
    squares: list[Content] = [None] * 64
    for event in events:
        if isinstance(event, BoardSnapshot):
            squares = list(event.squares)
        elif isinstance(event, SquareChanged):
            squares[event.square] = event.content
    return squares


def _log(missed: list[Event]) -> list[LogEntry]:
    entries: list[LogEntry] = []
    lever: ClockSide | None = None
    for event in missed:
        if isinstance(event, SquareChanged):
            entries.append(LoggedChange(square=event.square, content=event.content))
        elif isinstance(event, ClockReading) and event.lever_high is not None:
            if lever is not None and event.lever_high is not lever:
                shown = event.time_of(lever)
                entries.append(LoggedPress(side=lever, shown=float(int(shown or 0))))
            lever = event.lever_high
    return entries


def run(seed: int, cuts: list[tuple[float, float]], *, eeprom: bool) -> tuple[Engine, list[Output], list[str]]:
    sim = simulate_game(seed=seed, max_plies=40)
    engine = Engine(RulesConfig())
    outs: list[Output] = []
    # the simulator's stamps may step back a little (latencies): the daemon's time line never does
    events: list[Event] = []
    latest = sim.events[0].at
    for event in sim.events:
        latest = max(latest, event.at)
        events.append(event if event.at >= latest else dataclasses.replace(event, at=latest))
    seen: list[Event] = []
    i = 0
    back = events[0].at
    for start, end in cuts:
        t0 = events[0].at + start
        t1 = events[0].at + end
        while i < len(events) and events[i].at < t0:
            outs += engine.feed(events[i])
            seen.append(events[i])
            i += 1
        at = max(events[i - 1].at + 0.001, back)
        outs += engine.feed(LinkChanged(at=at, link=Link.CLOCK, up=False, detail=RESTART_DETAIL))
        outs += engine.feed(LinkChanged(at=at, link=Link.BOARD, up=False, detail=RESTART_DETAIL))
        missed: list[Event] = []
        while i < len(events) and events[i].at < t1:
            missed.append(events[i])
            seen.append(events[i])
            i += 1
        back = max(at, t1)
        outs += engine.feed(LinkChanged(at=back, link=Link.BOARD, up=True, detail="pty"))
        if eeprom and _log(missed):
            outs += engine.feed(BoardLog(at=back, entries=tuple(_log(missed))))
        outs += engine.feed(BoardSnapshot(at=back, squares=tuple(_physical(seen))))
        outs += engine.feed(LinkChanged(at=back, link=Link.CLOCK, up=True, detail="pty"))
        last_clock = next((e for e in reversed(seen) if isinstance(e, ClockReading)), None)
        if last_clock is not None:
            outs += engine.feed(ClockReading(at=back, left=last_clock.left, right=last_clock.right,
                                             running=last_clock.running, lever_high=last_clock.lever_high))
    for event in events[i:]:
        if not isinstance(event, NewGame):
            outs += engine.feed(event)
    outs += engine.advance(max(events[-1].at, back) + 60)
    return engine, outs, sim.moves


def _warnings(outs: list[Output]) -> list[str]:
    return [f"{o.irregularity.code} ply {o.irregularity.ply}" for o in outs
            if isinstance(o, IrregularityRaised) and o.irregularity.severity is not Severity.INFO]


@pytest.mark.parametrize("seed", range(6))
def test_restart_with_the_boards_log_recovers_everything_and_blames_no_one(seed: int) -> None:
    # three restarts, down 15-60 s of game time each (several plies)
    cuts = [(40.0 + 10 * seed, 70.0 + 10 * seed), (150.0, 180.0), (260.0, 275.0)]
    engine, outs, moves = run(seed, cuts, eeprom=True)
    assert [m.uci for m in engine.state.moves] == moves
    assert _warnings(outs) == []
    recovered = [o for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    assert recovered and all(o.details["kind"] == "unique" for o in recovered)
    assert any(o.details["method"] == "eeprom" for o in recovered)
    marked = [r for r in engine.state.moves if r.recovered]
    assert marked and all(r.recovered in ("eeprom", "search") for r in marked)
    made = [o.move.ply for o in outs if isinstance(o, MoveMade)]
    assert sorted(set(made)) == list(range(1, len(moves) + 1))
    assert "recovered after downtime" in engine.pgn()


@pytest.mark.parametrize("seed", range(4))
def test_restart_without_a_log_recovers_short_gaps_by_search(seed: int) -> None:
    cuts = [(40.0 + 5 * seed, 46.0 + 5 * seed)]
    engine, outs, moves = run(seed, cuts, eeprom=False)
    assert _warnings(outs) == []
    events = [o for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    if all(o.details["kind"] == "unique" for o in events):
        assert [m.uci for m in engine.state.moves] == moves
    else:  # a marked gap: the game went on from the board
        assert any(r.recovered == "gap" and not r.legal for r in engine.state.moves)
        assert [m.uci for m in engine.state.moves][-3:] == moves[-3:]


def test_unbridgeable_board_is_a_marked_gap_and_the_game_goes_on() -> None:
    cuts = [(40.0, 150.0)]  # far more than 12 plies missed
    engine, outs, moves = run(3, cuts, eeprom=False)
    assert _warnings(outs) == []
    gaps = [r for r in engine.state.moves if r.recovered == "gap"]
    assert len(gaps) == 1 and gaps[0].uci == "0000" and not gaps[0].legal
    [event] = [o for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    assert event.details["kind"] in ("gap", "ambiguous")
    after = [r.uci for r in engine.state.moves][gaps[0].ply:]
    assert after and after == moves[-len(after):]
    assert chess.Board(engine.state.moves[-1].fen_after).board_fen() == engine.physical_fen


@pytest.mark.parametrize(("seed", "cuts"), [(0, [(40.0, 46.0)]), (3, [(40.0, 150.0)]), (4, [(80.0, 110.0)])])
def test_the_arbiter_fills_a_gap_and_the_record_is_rebuilt(seed: int, cuts: list[tuple[float, float]]) -> None:
    engine, _outs, moves = run(seed, cuts, eeprom=False)
    [gap] = [r for r in engine.state.moves if r.recovered == "gap"]
    assert engine.downtime.fill_error(gap.ply, ("e2e4",)) is not None
    n = next(k for k in range(1, 40)
             if engine.downtime.fill_error(gap.ply, tuple(moves[gap.ply - 1:gap.ply - 1 + k])) is None)
    filled = tuple(moves[gap.ply - 1:gap.ply - 1 + n])
    at = max(r.made_at for r in engine.state.moves) + 100
    out = engine.feed(FillGap(at=at, ply=gap.ply, moves=filled))
    assert [m.uci for m in engine.state.moves] == moves
    assert all(r.recovered == "arbiter" for r in engine.state.moves[gap.ply - 1:gap.ply - 1 + n])
    assert not any(r.recovered == "gap" for r in engine.state.moves)
    [retracted] = [o for o in out if isinstance(o, MovesRetracted)]
    assert retracted.to_ply == gap.ply - 1
    made = [o.move.uci for o in out if isinstance(o, MoveMade)]
    assert made == moves[gap.ply - 1:]
    assert _warnings(out) == []
    assert "0000" not in engine.pgn() and "recovered after downtime (arbiter)" in engine.pgn()


def test_the_logged_presses_place_the_recovered_moves_in_time() -> None:
    """The board's log holds the presser's time at every lever change; with the first clock reading after the
    restart the engine puts the recovered moves' presses back where they were (the synthetic log above
    records the time after the increment, so each press may drift by the increment)."""
    engine, _outs, _moves = run(0, [(40.0, 70.0)], eeprom=True)
    sim = simulate_game(seed=0, max_plies=40)
    presses: list[float] = []
    lever: ClockSide | None = None
    for event in sim.events:
        if isinstance(event, ClockReading) and event.lever_high is not None:
            if lever is not None and event.lever_high is not lever:
                presses.append(event.at)
            lever = event.lever_high
    recovered = [r for r in engine.state.moves if r.recovered == "eeprom"]
    assert len(recovered) >= 5
    for rec in recovered:
        assert rec.completion is not None and rec.completed_at is not None
        assert abs(rec.completed_at - presses[rec.ply - 1]) <= 2.5 + engine.g.increment, rec
    assert all(r.clock_white is not None or r.clock_black is not None for r in recovered)
