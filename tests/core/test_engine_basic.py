"""Engine basics: plain moves, captures, presses, timers, PGN (rules-spec §3.4–§3.5)."""

from __future__ import annotations

import chess

from boardd.core.engine import Engine
from boardd.core.events import GameInfo, SquareChanged
from boardd.core.outputs import Completion, MoveCompleted, MoveMade
from tests.core.scenario import history_events, parse, start_clock


def test_plain_move_made_after_settle_completed_by_press() -> None:
    engine = Engine()
    clock, first = start_clock(chess.WHITE, -1.0)
    outs = engine.feed(first)
    for ev in parse("0 L e2 · 350 P e4 wP", clock):
        outs += engine.feed(ev)
    assert not [o for o in outs if isinstance(o, MoveMade)]
    assert engine.next_deadline() == 0.35 + 0.4
    outs = engine.advance(0.75)
    made = [o.move for o in outs if isinstance(o, MoveMade)]
    assert [(m.san, m.made_at) for m in made] == [("e4", 0.35)]
    outs = []
    for ev in parse("800 C W", clock):
        outs += engine.feed(ev)
    outs += engine.advance(2.0)
    done = [o.move for o in outs if isinstance(o, MoveCompleted)]
    assert [(m.san, m.completed_at, m.completion) for m in done] == [("e4", 0.8, Completion.PRESS)]
    assert engine.state.turn == chess.BLACK


def test_history_is_replayed_and_pgn_lists_moves() -> None:
    engine = Engine(game=GameInfo(white="A", black="B"))
    clock, first = start_clock(chess.WHITE, -20.0)
    engine.feed(first)
    for ev in history_events("e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6 d4 exd4", clock, start=-19.0):
        engine.feed(ev)
    engine.advance(0.0)
    sans = [m.san for m in engine.state.moves]
    assert sans == ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O", "Nf6", "d4", "exd4"]
    assert all(m.completion is Completion.PRESS for m in engine.state.moves)
    assert not engine.irregularities
    pgn = engine.pgn()
    assert "5. d4" in pgn and "exd4" in pgn and '[White "A"]' in pgn


def test_capture_without_clock_completes_by_next_move() -> None:
    from boardd.core.settings import RulesConfig

    engine = Engine(RulesConfig(clock_expected=False))
    events = [SquareChanged(at=0.0, square=chess.E2, content=None),
              SquareChanged(at=0.3, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE)),
              SquareChanged(at=2.0, square=chess.D7, content=None),
              SquareChanged(at=2.3, square=chess.D5, content=chess.Piece(chess.PAWN, chess.BLACK)),
              SquareChanged(at=4.0, square=chess.D5, content=None),
              SquareChanged(at=4.2, square=chess.E4, content=None),
              SquareChanged(at=4.4, square=chess.D5, content=chess.Piece(chess.PAWN, chess.WHITE))]
    for ev in events:
        engine.feed(ev)
    engine.advance(10.0)
    moves = engine.state.moves
    assert [m.san for m in moves] == ["e4", "d5", "exd5"]
    assert moves[0].completion is Completion.NEXT_MOVE and moves[0].completed_at == 4.4
    assert moves[2].completed_at is None
    assert not engine.irregularities
