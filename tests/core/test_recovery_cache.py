"""A held gap is not searched twice for the same answer (``Downtime._recover`` keeps its last result).

After a restart the held board is searched once it has been quiet ``SETTLE_S``; nothing explaining it, it is held
on (a move in progress?) and searched again after ``GAP_QUIET_S`` of quiet. With nothing changed meanwhile (the
same record, board, log and clock) the second search is the first one again: up to the whole node budget (1-2.5 s
of one engine call on the bench, several times that on a Pi) for the same answer. The result is reused; any
change of an input searches again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import chess
import pytest

import boardd.core.engine.downtime as downtime_module
from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import BoardSnapshot, ClockReading, ClockSide, GameInfo, Link, LinkChanged
from boardd.core.outputs import GameEvent, Output
from boardd.core.settings import RulesConfig

START = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every search the engine's downtime runs (``recover_steps``, or ``recover`` with plies to search; the log's
    replay alone, at ``max_plies=0``, is not one), counted."""
    calls: list[int] = []

    def counting(real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: object, **kwargs: object) -> Any:
            if kwargs.get("max_plies") != 0:
                calls.append(1)
            return real(*args, **kwargs)
        return counted

    for name in ("recover", "recover_steps"):
        if hasattr(downtime_module, name):
            monkeypatch.setattr(downtime_module, name, counting(getattr(downtime_module, name)))
    yield calls


def _squares(board: chess.Board) -> tuple[chess.Piece | None, ...]:
    return tuple(board.piece_at(sq) for sq in chess.SQUARES)


def _restart(engine: Engine, shown: chess.Board, *, clock: bool) -> list[Output]:
    outs: list[Output] = []
    outs += engine.feed(BoardSnapshot(at=0.0, squares=_squares(START)))
    if clock:
        outs += engine.feed(ClockReading(at=0.2, left=300.0, right=300.0, running=ClockSide.LEFT,
                                         lever_high=ClockSide.LEFT))
    outs += engine.feed(LinkChanged(at=1.0, link=Link.CLOCK, up=False, detail=RESTART_DETAIL))
    outs += engine.feed(LinkChanged(at=1.0, link=Link.BOARD, up=False, detail=RESTART_DETAIL))
    outs += engine.feed(LinkChanged(at=30.0, link=Link.BOARD, up=True, detail="pty"))
    outs += engine.feed(BoardSnapshot(at=30.0, squares=_squares(shown)))
    return outs


def _recovered(outs: list[Output]) -> list[dict[str, object]]:
    return [dict(o.details) for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]


def _gap_board() -> chess.Board:
    """A white queen more than the record had: no sequence of moves explains it (a gap)."""
    shown = START.copy()
    shown.set_piece_at(chess.D4, chess.Piece(chess.QUEEN, chess.WHITE))
    return shown


def test_held_gap_is_searched_once_when_nothing_changed(searches: list[int]) -> None:
    """Quiet 1 s: searched, a gap, held on; quiet 1.5 s: the same inputs, the gap taken without searching again
    (before: ``recover`` ran twice, the second time for the same answer)."""
    engine = Engine(RulesConfig(), GameInfo(start_fen=START.fen()))
    outs = _restart(engine, _gap_board(), clock=False)
    outs += engine.advance(31.2)  # quiet SETTLE_S: searched, nothing explains it, held on
    assert len(searches) == 1 and not _recovered(outs)
    outs += engine.advance(32.0)  # quiet GAP_QUIET_S: the gap
    [event] = _recovered(outs)
    assert event["kind"] == "gap"
    assert len(searches) == 1
    assert [m.recovered for m in engine.state.moves] == ["gap"]


def test_a_changed_input_searches_again(searches: list[int]) -> None:
    """The board changing while held (a piece moved on: another placement) is new input: searched again."""
    engine = Engine(RulesConfig(), GameInfo(start_fen=START.fen()))
    outs = _restart(engine, _gap_board(), clock=False)
    outs += engine.advance(31.2)
    assert len(searches) == 1
    moved = _gap_board()
    moved.remove_piece_at(chess.D4)
    moved.set_piece_at(chess.D5, chess.Piece(chess.QUEEN, chess.WHITE))
    outs += engine.feed(BoardSnapshot(at=31.4, squares=_squares(moved)))
    outs += engine.advance(32.5)  # quiet SETTLE_S again: the new board searched
    assert len(searches) == 2
    outs += engine.advance(33.0)  # quiet GAP_QUIET_S: the same inputs as the second search
    assert len(searches) == 2
    [event] = _recovered(outs)
    assert event["kind"] == "gap"


def test_the_cache_changes_no_result() -> None:
    """A unique answer and a gap: the record and the event as without the cache (the cache emptied each call)."""
    unique = START.copy()
    unique.push_san("Ra2")
    unique.push_san("Kd8")
    for shown in (unique, _gap_board()):
        results = []
        for cached in (True, False):
            engine = Engine(RulesConfig(), GameInfo(start_fen=START.fen()))
            outs = _restart(engine, shown, clock=False)
            for t in (31.2, 32.0, 33.0, 60.0):
                if not cached:
                    engine.search_cache.clear()
                outs += engine.advance(t)
            results.append(([(m.uci, m.recovered) for m in engine.state.moves], _recovered(outs)))
        assert results[0] == results[1]
