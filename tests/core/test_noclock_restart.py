"""Without a clock, a daemon restart while a move out of turn is pending (R13; docs/downtime.md).

The player who has just moved moves again before the reply (``WhoseChange.moved_twice``): ``OUT_OF_TURN_CHANGE``
is raised and the move waits for the reply to enter the record (G6). The daemon restarts now: it replays its
journal (the same events), journals the two outages (``daemon restarted``) and gets the board's dump, which shows
the same board: nothing was played meanwhile. The engine must then see the same as if it had stayed up: the reply
enters the move out of turn (``legal=False``) and then itself, the same findings, nothing recovered.

Before: the dump was held and searched from the official position (the opponent to move): no move of his explains
a second move of the other player's, so the record got a gap (``0000``) instead of the move out of turn.

With a DGT board, its own log (the EEPROM, protocols.md §1.9) comes before the dump: the records no host has
downloaded, which hold the changes of the board's last seconds before it noticed the host gone (a host that died may
not have kept them; ``drivers/dgt/emulator.py``: ``2 * host_timeout``), here the move out of turn's. Nothing was
played meanwhile all the same: the engine must see the same as without the log. Before: the log was replayed from
the official position, the move out of turn read as the side to move's (a second ``OUT_OF_TURN_CHANGE``, the record
wrong).
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
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

T_SETTLE = RulesConfig().timing.t_settle
CASES = [c for c in cases(5151, 96) if c.kind == "wrong-side"]


def _run(events: list[Event], edition: int, restart: tuple[int, float, float] | None,
         log_since: float | None = None) -> tuple[list[str], list[str], float]:
    """The engine fed *events*; *restart*: (index, down, up): the daemon down before ``events[index]`` from
    *down* (after the journal's last event) and the board's dump at *up* (before that event); *log_since*: the
    board's log before the dump, with the changes from that time on. The record, the findings above info, when
    the first was raised."""
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
            if log_since is not None:
                logged = tuple(LoggedChange(square=e.square, content=e.content) for e in events[:i]
                               if isinstance(e, SquareChanged) and e.at >= log_since)
                assert logged  # (the move out of turn's changes at least)
                outs += engine.feed(BoardLog(at=up, entries=logged, source="eeprom"))
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


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.edition}-{c.seed}")
def test_a_restart_with_the_boards_log_of_its_last_seconds_sees_the_same(case: NoClockCase) -> None:
    built = build(case)
    assert built is not None
    record, found, t_put = _run(built.events, case.edition, None)
    put = next(i for i, e in enumerate(built.events) if e.at == t_put)
    rng = random.Random(case.seed + 1)
    t_next = built.events[put + 1].at
    down = rng.uniform(t_put + T_SETTLE + 0.05, t_next - 0.2)
    up = rng.uniform(down + 0.01, t_next - 0.1)
    since = t_put - rng.uniform(0.5, 8.0)  # the board keeps the changes of its last seconds before the host died
    assert _run(built.events, case.edition, (put + 1, down, up), since) == (record, found, t_put)


def test_the_samples_cover_every_edition() -> None:
    assert len(CASES) == 24 and {c.edition for c in CASES} == {2009, 2014, 2018, 2023}
