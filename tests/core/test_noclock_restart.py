"""Without a clock, a daemon restart while a move out of turn is pending (R13; docs/downtime.md).

The player who has just moved moves again before the reply (``WhoseChange.moved_twice``): ``OUT_OF_TURN_CHANGE``
is raised and the move waits for the reply to enter the record (G6). The daemon restarts now: it replays its
journal (the same events), journals the two outages (``daemon restarted``) and gets the board's dump, which shows
the same board: nothing was played meanwhile. The engine must then see the same as if it had stayed up: the reply
enters the move out of turn (``legal=False``) and then itself, the same findings, nothing recovered.

Before: the dump was held and searched from the official position (the opponent to move): no move of his explains
a second move of the other player's, so the record got a gap (``0000``) instead of the move out of turn.
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import BoardSnapshot, Content, Event, GameInfo, Link, LinkChanged, SquareChanged
from boardd.core.outputs import IrregularityRaised, Output, Severity
from boardd.core.settings import RulesConfig
from tests.core.noclock_audit import NoClockCase, build, cases

T_SETTLE = RulesConfig().timing.t_settle
CASES = [c for c in cases(5151, 96) if c.kind == "wrong-side"]


def _run(events: list[Event], edition: int,
         restart: tuple[int, float, float] | None) -> tuple[list[str], list[str], float]:
    """The engine fed *events*; *restart*: (index, down, up): the daemon down before ``events[index]`` from
    *down* (after the journal's last event) and the board's dump at *up* (before that event). The record, the
    findings above info, when the first was raised."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=edition))
    outs: list[Output] = []

    def until(at: float) -> None:
        nonlocal outs
        while (deadline := engine.next_deadline()) is not None and deadline < at:
            outs += engine.advance(deadline)

    squares: list[Content] = [chess.Board().piece_at(sq) for sq in chess.SQUARES]
    for i, event in enumerate(events):
        if restart is not None and i == restart[0]:
            _, down, up = restart
            until(down)
            for link in (Link.CLOCK, Link.BOARD):
                outs += engine.feed(LinkChanged(at=down, link=link, up=False, detail=RESTART_DETAIL))
            until(up)
            outs += engine.feed(LinkChanged(at=up, link=Link.BOARD, up=True, detail="usb"))
            outs += engine.feed(BoardSnapshot(at=up, squares=tuple(squares)))
        until(event.at)
        outs += engine.feed(event)
        if isinstance(event, SquareChanged):
            squares[event.square] = event.content
    outs += engine.advance(events[-1].at + 30.0)
    record = [m.uci if m.legal else "!" + m.uci for m in engine.state.moves]
    raised = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)
              and o.irregularity.severity is not Severity.INFO]
    return record, [f"{i.code}@{i.ply}" for i in raised], raised[0].t_raised if raised else -1.0


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.edition}-{c.seed}")
def test_a_restart_with_the_move_out_of_turn_on_the_board_sees_the_same(case: NoClockCase) -> None:
    built = build(case)
    assert built is not None
    record, found, t_put = _run(built.events, case.edition, None)
    assert record == built.expected and found == [f"OUT_OF_TURN_CHANGE@{built.illegal_ply - 1}"], (record, found)
    # restarted after the move out of turn was put down (raised then) and before the reply's first change
    put = next(i for i, e in enumerate(built.events) if e.at == t_put)
    rng = random.Random(case.seed)
    t_next = built.events[put + 1].at
    down = rng.uniform(t_put + T_SETTLE + 0.05, t_next - 0.2)
    up = rng.uniform(down + 0.01, t_next - 0.1)
    assert _run(built.events, case.edition, (put + 1, down, up)) == (record, found, t_put)


def test_the_samples_cover_every_edition() -> None:
    assert len(CASES) == 24 and {c.edition for c in CASES} == {2009, 2014, 2018, 2023}
