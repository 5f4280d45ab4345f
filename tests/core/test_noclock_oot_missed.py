"""Without a clock, a move out of turn made while the board was out of sight (R13; docs/downtime.md).

The player who has just moved moves again on the opponent's turn (1.3, 6.2.5): live, ``OUT_OF_TURN_CHANGE`` is raised
(7.6: the arbiter may reinstate) and the opponent's reply enters the move out of turn in the record (``legal: false``,
G6) before itself. Here the daemon restarted (or the board's link was down) before the last plies and the move out of
turn were made, and the board came back showing them, the reply made afterwards. The engine must see what live play
saw: the same record and the same one finding, no gap (``0000``) or ``POSITION_DIVERGENCE`` beside it (one incident,
one alert). The plies before the move out of turn are known from the board's log (its changes in order); without it
only when nothing was played before the move out of turn (the two moves of one player may have been made in either
order: the board alone cannot tell which was out of turn).

Before: a gap for the arbiter after a restart, ``POSITION_DIVERGENCE`` after a link outage, the move out of turn not
raised (or raised against the reply beside the gap: two alerts).
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import OUTAGE_DETAIL, RESTART_DETAIL, SETTLE_S
from boardd.core.events import (
    BoardLog,
    BoardSnapshot,
    Content,
    Event,
    GameInfo,
    Link,
    LinkChanged,
    LoggedChange,
    SquareChanged,
)
from boardd.core.outputs import IrregularityRaised, Output, Severity
from boardd.core.settings import RulesConfig
from tests.core.noclock_audit import NoClockCase, build, cases

CASES = [c for c in cases(7373, 96) if c.kind == "wrong-side"]


def _feed(engine: Engine, outs: list[Output], events: list[Event]) -> None:
    for event in events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            outs += engine.advance(deadline)
        outs += engine.feed(event)


def _run(events: list[Event], edition: int, out: tuple[int, int, float, float, str, bool] | None
         ) -> tuple[list[str], list[str]]:
    """The engine fed *events*; *out*: (first, last, down, up, why, log): the board out of sight (the daemon
    restarted, or the board's link down, *why*) from *down* to *up*, ``events[first:last]`` made meanwhile, unseen;
    the board back at *up* with its dump (after the board's log of those changes when *log*). The record; the
    findings above info."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=edition))
    outs: list[Output] = []
    if out is None:
        _feed(engine, outs, events)
    else:
        first, last, down, up, why, log = out
        _feed(engine, outs, events[:first])
        _feed(engine, outs, [LinkChanged(at=down, link=link, up=False, detail=why)
                             for link in ((Link.CLOCK, Link.BOARD) if why == RESTART_DETAIL else (Link.BOARD,))])
        squares: list[Content] = [chess.Board().piece_at(sq) for sq in chess.SQUARES]
        for e in events[:last]:
            assert isinstance(e, SquareChanged)
            squares[e.square] = e.content
        unseen = tuple(LoggedChange(square=e.square, content=e.content) for e in events[first:last]
                       if isinstance(e, SquareChanged))
        back: list[Event] = [LinkChanged(at=up, link=Link.BOARD, up=True, detail="usb")]
        if log:
            back.append(BoardLog(at=up, entries=unseen, source="eeprom"))
        back.append(BoardSnapshot(at=up, squares=tuple(squares)))
        _feed(engine, outs, back)
        _feed(engine, outs, events[last:])
    outs += engine.advance(events[-1].at + 30.0)
    record = [m.uci if m.legal else "!" + m.uci for m in engine.state.moves]
    raised = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)
              and o.irregularity.severity is not Severity.INFO]
    return record, [f"{i.code}@{i.ply}" for i in raised]


def _placements(events: list[Event]) -> list[str]:
    """The board's placement before each event."""
    board = chess.Board()
    seen = []
    for e in events:
        seen.append(board.board_fen())
        assert isinstance(e, SquareChanged)
        board.remove_piece_at(e.square)
        if isinstance(e.content, chess.Piece):
            board.set_piece_at(e.square, e.content)
    return seen


def _out_of_sight(case: NoClockCase, why: str, log: bool, missed: int | None = None
                  ) -> tuple[list[Event], tuple[int, int, float, float, str, bool], int, list[str]]:
    """The case's events (the reply after the move out of turn maybe later: a longer think) and the stretch out of
    sight: *missed* (else random 0-3) legal plies before the move out of turn and it; the live record."""
    built = build(case)
    assert built is not None
    rng = random.Random(case.seed * 7 + len(why) + log)
    oot = built.illegal_ply - 1  # the move out of turn's index in the record
    k = min(oot - 1, rng.randint(0, 3) if missed is None else missed)
    board = chess.Board()
    for uci in built.expected[:oot - k]:
        board.push_uci(uci)
    start_fen = board.board_fen()
    for uci in built.expected[oot - k:oot]:
        board.push_uci(uci)
    oot_move = chess.Move.from_uci(built.expected[oot][1:])
    board.turn = not board.turn
    board.push(oot_move)
    oot_fen = board.board_fen()
    events = list(built.events)
    before = _placements(events)
    first = max(i for i, fen in enumerate(before) if fen == start_fen and i < len(events)
                and before.index(oot_fen) > i) if start_fen in before else -1
    assert first > 0
    last = before.index(oot_fen)  # the reply's first change (the board shows the move out of turn before it)
    # the board back after a quiet second at least, before the reply (a think of random length)
    pause = rng.uniform(SETTLE_S + 0.3, 6.0)
    shift = max(0.0, events[last - 1].at + pause - events[last].at)
    events = events[:last] + [SquareChanged(at=round(e.at + shift, 3), square=e.square, content=e.content)
                              for e in events[last:] if isinstance(e, SquareChanged)]
    down = rng.uniform(events[first - 1].at + 0.05, events[first].at - 0.01)
    up = rng.uniform(events[last - 1].at + 0.05, events[last].at - SETTLE_S - 0.2)
    return events, (first, last, down, up, why, log), k, built.expected


@pytest.mark.parametrize("why", [RESTART_DETAIL, OUTAGE_DETAIL])
@pytest.mark.parametrize("log", [True, False], ids=["log", "nolog"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.edition}-{c.seed}")
def test_a_move_out_of_turn_made_out_of_sight_is_seen_as_live(case: NoClockCase, log: bool, why: str) -> None:
    events, out, k, expected = _out_of_sight(case, why, log, None if log else 0)
    live = _run(events, case.edition, None)
    assert live[0] == expected and [f.split("@")[0] for f in live[1]] == ["OUT_OF_TURN_CHANGE"], live
    assert _run(events, case.edition, out) == live, (k, out)
