"""The recovery search in bounded steps (``Engine.stepwise``): the same results, nothing lost or reordered.

The held board's search after a restart can take seconds within one engine call (``bench downtime-block``): the
daemon's loop then publishes nothing and reads nothing. Stepwise, the call that starts it returns at once; the
daemon calls ``Engine.work()`` (one step: ``STEP_NODES`` positions) until ``Engine.busy`` is False. The call
that started the search, and every call that comes meanwhile (queued, in order), are processed once it ends:
the search explains the board as it was when it went quiet, what comes after is play judged against it.
"""

from __future__ import annotations

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import (
    BoardLog,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Event,
    GameInfo,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
    SetPlayers,
    SquareChanged,
)
from boardd.core.outputs import GameEvent, GameState, Output
from boardd.core.recovery import finish, recover, recover_steps
from boardd.core.settings import RulesConfig
from tests.core.test_recovery import RUY, placement, play

Call = Event | float  # an event to feed, or a time to advance to


@pytest.mark.parametrize(("start", "plies", "budget"), [(0, 4, 400_000), (10, 10, 400_000), (10, 10, 3000),
                                                         (20, 7, 150_000)])
def test_every_step_size_gives_the_same_result(start: int, plies: int, budget: int) -> None:
    """The pauses change neither the visit nor the count: step 1, 7, 1000 give ``recover``'s answer."""
    board = play(RUY[:start])
    target = placement(play(RUY[start:start + plies], board))
    whole = recover(board, target, node_budget=budget)
    for step in (1, 7, 1000):
        steps = recover_steps(board, target, node_budget=budget, step=step)
        pauses = 0
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                result = stop.value
                break
            pauses += 1
        assert result == whole
        assert pauses == whole.nodes // step or pauses == min(whole.nodes, budget) // step


def test_finish_runs_every_step() -> None:
    board = play(RUY[:6])
    target = placement(play(RUY[6:10], board))
    assert finish(recover_steps(board, target, step=3)) == recover(board, target)


def _reading(at: float, running: chess.Color) -> ClockReading:
    side = ClockSide.LEFT if running == chess.WHITE else ClockSide.RIGHT
    return ClockReading(at=at, left=3000.0, right=3000.0, running=side, lever_high=side)


def _moves(board: chess.Board, sans: list[str], at: float) -> list[Call]:
    """The square changes of *sans* played on from *board* (0.4 s apart), each pressed."""
    out: list[Call] = []
    work = board.copy()
    for san in sans:
        move = work.parse_san(san)
        mover = work.turn
        out.append(SquareChanged(at=at, square=move.from_square, content=None))
        out.append(SquareChanged(at=at + 0.2, square=move.to_square, content=work.piece_at(move.from_square)))
        work.push(move)
        out.append(_reading(at + 0.3, not mover))
        at += 0.4
    return out


def _restart(start: int, plies: int, after: int) -> tuple[Engine, list[Call]]:
    """RUY up to *start*, *plies* played while the daemon was down, then *after* more plies played at once."""
    board = play(RUY[:start])
    shown = play(RUY[start:start + plies], board)
    engine = Engine(RulesConfig(), GameInfo(start_fen=board.fen(), time_control="5400+30"))
    t = 1.0 + 5.0 * plies
    calls: list[Call] = [
        BoardSnapshot(at=0.0, squares=placement(board)), _reading(0.2, board.turn),
        LinkChanged(at=1.0, link=Link.CLOCK, up=False, detail=RESTART_DETAIL),
        LinkChanged(at=1.0, link=Link.BOARD, up=False, detail=RESTART_DETAIL),
        LinkChanged(at=t, link=Link.BOARD, up=True, detail="pty"), BoardSnapshot(at=t, squares=placement(shown)),
        LinkChanged(at=t, link=Link.CLOCK, up=True, detail="pty"), _reading(t + 0.1, shown.turn),
        t + 0.5, t + 1.2,  # quiet SETTLE_S: the search starts here
        SetPlayers(at=t + 1.25, white="W", black="B"),  # a command meanwhile
        *_moves(shown, RUY[start + plies:start + plies + after], t + 1.3),
        t + 4.0, t + 6.0, t + 30.0]
    return engine, calls


def _run(engine: Engine, calls: list[Call], *, stepwise: bool) -> tuple[list[Output], GameState, int, int]:
    """Outputs, state, calls that came while busy, steps."""
    engine.stepwise = stepwise
    engine.downtime.step_nodes = 20  # many steps for a short search: play comes while it runs
    outs: list[Output] = []
    while_busy = steps = 0
    for call in calls:
        while_busy += engine.busy
        outs += engine.feed(call) if not isinstance(call, float) else engine.advance(call)
        if engine.busy:
            steps += 1
            outs += engine.work()  # one step per call: the calls after it come while the search runs
    while engine.busy:
        steps += 1
        outs += engine.work()
    return outs, engine.state, while_busy, steps


@pytest.mark.parametrize(("start", "plies", "after"), [(10, 6, 4), (10, 10, 3), (20, 9, 2), (4, 3, 2)])
def test_stepwise_engine_gives_the_same_record_and_outputs(start: int, plies: int, after: int) -> None:
    """A restart whose search takes many steps, play and a command coming while it runs: the outputs (in order) and
    the record are those of the engine without steps (the moves played after the dump judged against the record
    the search recovered, never searched as downtime)."""
    plain = _run(*_restart(start, plies, after), stepwise=False)
    stepped = _run(*_restart(start, plies, after), stepwise=True)
    assert plain[2:] == (0, 0)
    assert stepped[0] == plain[0]
    assert stepped[1] == plain[1]
    assert [e for e in plain[0] if isinstance(e, GameEvent) and e.type == "MOVES_RECOVERED"]
    assert stepped[1].moves[-1].recovered == ""  # the last move played after the dump is play, not recovered
    assert stepped[1].white == "W"
    if plies >= 6:
        assert stepped[3] > 10 and stepped[2] >= 3  # many steps, calls queued meanwhile: the test tests something


def test_not_stepwise_nothing_waits() -> None:
    """Off (the default: replay, the journal's rebuild, the corpus): the search runs within the call, never busy."""
    engine, calls = _restart(10, 10, 2)
    assert engine.stepwise is False
    for call in calls:
        engine.feed(call) if not isinstance(call, float) else engine.advance(call)
        assert not engine.busy
    assert engine.work() == []


def test_finish_work_does_the_rest_at_once() -> None:
    engine, calls = _restart(10, 6, 2)
    engine.stepwise = True
    outs: list[Output] = []
    for call in calls:
        outs += engine.feed(call) if not isinstance(call, float) else engine.advance(call)
    assert engine.busy
    outs += engine.finish_work()
    assert not engine.busy
    plain = _run(*_restart(10, 6, 2), stepwise=False)
    assert outs == plain[0]


def test_stepwise_turned_off_while_busy_finishes_first() -> None:
    """The daemon's stepping task stops (``stepwise`` off) with a search in progress: the next call does the rest
    at once, then itself: the outputs of the plain engine, nothing lost."""
    engine, calls = _restart(10, 6, 2)
    engine.stepwise = True
    engine.downtime.step_nodes = 20
    outs: list[Output] = []
    for i, call in enumerate(calls):
        if engine.busy and i > len(calls) - 4:
            engine.stepwise = False
        outs += engine.feed(call) if not isinstance(call, float) else engine.advance(call)
    assert not engine.busy
    plain = _run(*_restart(10, 6, 2), stepwise=False)
    assert outs == plain[0]


# --- the searches made in the middle of a call: probed, undone, searched in steps, the call processed again ---


def _changes(board: chess.Board, san: str) -> list[LoggedChange]:
    """The square changes of *san* from *board* as the board logs them: the lifts, then the puts."""
    after = play([san], board)
    differ = [sq for sq in chess.SQUARES if board.piece_at(sq) != after.piece_at(sq)]
    return [*(LoggedChange(square=sq, content=None) for sq in differ if after.piece_at(sq) is None),
            *(LoggedChange(square=sq, content=after.piece_at(sq)) for sq in differ if after.piece_at(sq) is not None)]


def _outage(start: int, plies: int, after: int, clock_at: str) -> tuple[Engine, list[Call]]:
    """RUY up to *start*, one ply seen, the board link lost for *plies* (the clock on its own link: its presses
    seen; on the board's jack: lost with it, read again after the dump), then *after* plies seen."""
    board = play(RUY[:start])
    engine = Engine(RulesConfig(), GameInfo(start_fen=board.fen(), time_control="5400+30"))
    calls: list[Call] = [BoardSnapshot(at=0.0, squares=placement(board)), _reading(0.2, board.turn),
                         *_moves(board, RUY[start:start + 1], 0.5), 1.5]
    seen = play(RUY[start:start + 1], board)
    calls.append(LinkChanged(at=2.0, link=Link.BOARD, up=False, detail="unplugged"))
    if clock_at == "jack":
        calls.append(LinkChanged(at=2.0, link=Link.CLOCK, up=False, detail="board link down"))
    shown = seen
    for i, san in enumerate(RUY[start + 1:start + 1 + plies]):
        shown = play([san], shown)
        if clock_at == "own-link":
            calls.append(_reading(2.0 + 5.0 * (i + 1), shown.turn))
    t = 3.0 + 5.0 * plies
    calls += [LinkChanged(at=t, link=Link.BOARD, up=True, detail="usb"), BoardSnapshot(at=t, squares=placement(shown))]
    if clock_at == "jack":
        calls += [LinkChanged(at=t, link=Link.CLOCK, up=True, detail="usb"), _reading(t + 0.1, shown.turn)]
    calls += [SetPlayers(at=t + 0.2, white="W", black="B"),  # a command while the search runs
              *_moves(shown, RUY[start + 1 + plies:start + 1 + plies + after], t + 0.5), t + 4.0, t + 30.0]
    return engine, calls


def _eeprom_restart(start: int, plies: int, after: int) -> tuple[Engine, list[Call]]:
    """A restart whose board logged every change and press (the DGT's EEPROM): the log replayed at the dump."""
    board = play(RUY[:start])
    engine = Engine(RulesConfig(), GameInfo(start_fen=board.fen(), time_control="5400+30"))
    log: list[LogEntry] = []
    shown = board
    for i, san in enumerate(RUY[start:start + plies]):
        log += _changes(shown, san)
        side = ClockSide.LEFT if shown.turn == chess.WHITE else ClockSide.RIGHT
        shown = play([san], shown)
        log.append(LoggedPress(side=side, shown=3000.0 - 5 * i))
    t = 1.0 + 5.0 * plies
    calls: list[Call] = [
        BoardSnapshot(at=0.0, squares=placement(board)), _reading(0.2, board.turn),
        LinkChanged(at=1.0, link=Link.CLOCK, up=False, detail=RESTART_DETAIL),
        LinkChanged(at=1.0, link=Link.BOARD, up=False, detail=RESTART_DETAIL),
        LinkChanged(at=t, link=Link.BOARD, up=True, detail="pty"), BoardLog(at=t, entries=tuple(log)),
        BoardSnapshot(at=t, squares=placement(shown)),
        LinkChanged(at=t, link=Link.CLOCK, up=True, detail="pty"), _reading(t + 0.1, shown.turn),
        SetPlayers(at=t + 0.2, white="W", black="B"),
        *_moves(shown, RUY[start + plies:start + plies + after], t + 0.5), t + 4.0, t + 30.0]
    return engine, calls


def _dump_index(calls: list[Call]) -> int:
    """The reconciling dump's call (the last board dump)."""
    return max(i for i, c in enumerate(calls) if isinstance(c, BoardSnapshot))


def _run_counting(engine: Engine, calls: list[Call], *, stepwise: bool, step_nodes: int,
                  at_call: int) -> tuple[list[Output], GameState, bool, int]:
    """Outputs, state, busy after call *at_call* (its search not done within it), steps."""
    engine.stepwise = stepwise
    engine.downtime.step_nodes = step_nodes
    outs: list[Output] = []
    busy_after = False
    steps = 0
    for i, call in enumerate(calls):
        outs += engine.feed(call) if not isinstance(call, float) else engine.advance(call)
        if i == at_call:
            busy_after = engine.busy
        if engine.busy:
            steps += 1
            outs += engine.work()
    while engine.busy:
        steps += 1
        outs += engine.work()
    return outs, engine.state, busy_after, steps


@pytest.mark.parametrize(("start", "plies", "after", "clock_at"),
                         [(10, 8, 3, "own-link"), (10, 6, 2, "jack"), (20, 9, 2, "own-link"), (4, 5, 2, "jack")])
def test_a_link_outage_is_searched_in_steps(start: int, plies: int, after: int, clock_at: str) -> None:
    """The board link lost while the daemon runs: the reconciling dump's search (``Restoration.forward_jump``) and,
    the clock on the board's jack, the search at its first reading (``Downtime._revise``) no longer run within the
    call: the dump returns with the engine busy, the search is done in steps, the calls that came meanwhile
    (a command, play) are processed after it; the outputs and the record are those of the engine without steps.
    (Before: the dump's call did the whole search, never busy.)"""
    engine, calls = _outage(start, plies, after, clock_at)
    plain = _run_counting(engine, calls, stepwise=False, step_nodes=20, at_call=_dump_index(calls))
    engine, calls = _outage(start, plies, after, clock_at)
    stepped = _run_counting(engine, calls, stepwise=True, step_nodes=20, at_call=_dump_index(calls))
    assert [e for e in plain[0] if isinstance(e, GameEvent) and e.type == "MOVES_RECOVERED"]
    assert stepped[0] == plain[0]
    assert stepped[1] == plain[1]
    assert stepped[1].white == "W"
    assert not plain[2] and plain[3] == 0
    assert stepped[2], "the dump's search ran within its call"
    assert stepped[3] > 5


@pytest.mark.parametrize(("start", "plies"), [(4, 8), (10, 10)])
def test_the_board_log_is_replayed_in_steps(start: int, plies: int) -> None:
    """A restart with the board's own log (EEPROM): its replay (``Downtime._try_log``, at the clock's first reading
    that places the logged presses) is done in steps, with the outputs of the engine without steps."""
    engine, calls = _eeprom_restart(start, plies, 2)
    reading = 1 + next(i for i, c in enumerate(calls) if isinstance(c, LinkChanged) and c.link is Link.CLOCK and c.up)
    plain = _run_counting(engine, calls, stepwise=False, step_nodes=2, at_call=reading)
    engine, calls = _eeprom_restart(start, plies, 2)
    stepped = _run_counting(engine, calls, stepwise=True, step_nodes=2, at_call=reading)
    [event] = [e for e in plain[0] if isinstance(e, GameEvent) and e.type == "MOVES_RECOVERED"]
    assert event.details["method"] == "eeprom" and len(event.details["moves"]) == plies  # type: ignore[arg-type]
    assert stepped[0] == plain[0]
    assert stepped[1] == plain[1]
    assert stepped[2], "the log's replay ran within the clock reading's call"
    assert stepped[3] > 2
