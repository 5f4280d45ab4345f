"""The held board of a restart is recovered when its timer fires, at the deadline itself.

``Downtime.due`` arms the timer at ``quiet_since + SETTLE_S`` (``GAP_QUIET_S``, ``held_since + HOLD_S``); the tick it
fires compared ``at - quiet_since < SETTLE_S``, which for some times rounds below the wait at the deadline itself
(127.0125 + 1.0 is 128.0125, but 128.0125 - 127.0125 is 0.99999...): the timer fired, did nothing and stayed due at
the same time. ``boardd replay`` stopped firing it ("engine timer at 128.012 s keeps re-arming"; the alert-rings
bench's clean:18, a daemon restart whose board came back at 127.0125 s) and the daemon's loop would have spun on it.
"""

from __future__ import annotations

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL, SETTLE_S
from boardd.core.events import BoardSnapshot, Content, Link, LinkChanged, SetResult, SquareChanged
from boardd.core.outputs import GameEvent, Output
from boardd.core.settings import RulesConfig

#: times the board comes back at where (back + SETTLE_S) - back rounds below SETTLE_S (the bench's first), and others
_ROUNDING = [127.0125, 63.5666, 511.715, 1023.0503]
_EXACT = [127.5, 64.0, 99.3]


def _squares(board: chess.Board) -> tuple[Content, ...]:
    return tuple(board.piece_at(sq) for sq in chess.SQUARES)


def _restart(engine: Engine, back: float, shown: chess.Board) -> list[Output]:
    """The daemon restarts at ``back - 20`` and reads the board again at ``back``: a dump of ``shown``."""
    down = back - 20.0
    outs = engine.feed(LinkChanged(at=down, link=Link.CLOCK, up=False, detail=RESTART_DETAIL))
    outs += engine.feed(LinkChanged(at=down, link=Link.BOARD, up=False, detail=RESTART_DETAIL))
    outs += engine.feed(LinkChanged(at=back, link=Link.BOARD, up=True, detail="pty"))
    outs += engine.feed(BoardSnapshot(at=back, squares=_squares(shown)))
    return outs


def _e4(engine: Engine, at: float) -> list[Output]:
    board = chess.Board()
    outs = engine.feed(BoardSnapshot(at=at, squares=_squares(board)))
    outs += engine.feed(SquareChanged(at=at + 1.0, square=chess.E2, content=None))
    outs += engine.feed(SquareChanged(at=at + 1.3, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE)))
    return outs


def _fire_due(engine: Engine) -> tuple[list[Output], list[float]]:
    """Fire the engine's timers at their deadlines (as the daemon and ``boardd replay`` do), at most 5 times."""
    outs: list[Output] = []
    fired: list[float] = []
    while (due := engine.next_deadline()) is not None and len(fired) < 5:
        fired.append(due)
        outs += engine.advance(due)
    return outs, fired


@pytest.mark.parametrize("back", _ROUNDING + _EXACT)
def test_a_move_played_while_the_daemon_was_down_is_recovered_at_the_deadline(back: float) -> None:
    engine = Engine(RulesConfig())
    _e4(engine, back - 40.0)
    engine.advance(back - 21.0)  # the e4 press-less move settles
    assert [m.uci for m in engine.state.moves] == ["e2e4"]
    shown = chess.Board()
    shown.push_uci("e2e4")
    shown.push_uci("e7e5")
    _restart(engine, back, shown)
    assert engine.next_deadline() == back + SETTLE_S
    outs, fired = _fire_due(engine)
    recovered = [o for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    assert fired[0] == back + SETTLE_S and len(set(fired)) == len(fired)  # (before: the same deadline, 5 times)
    assert recovered and [m.uci for m in engine.state.moves] == ["e2e4", "e7e5"]
    assert engine.next_deadline() is None


@pytest.mark.parametrize("back", _ROUNDING + _EXACT)
def test_a_board_held_after_the_game_ended_is_released_at_the_deadline(back: float) -> None:
    """The bench's game: over (the arbiter set the result) when the daemon restarted; the board's dump, held until
    quiet, is then taken as it is (no recovery in a finished game)."""
    engine = Engine(RulesConfig())
    _e4(engine, back - 40.0)
    engine.feed(SetResult(at=back - 25.0, result="1-0", termination="resignation"))
    shown = chess.Board()
    shown.push_uci("e2e4")
    shown.remove_piece_at(chess.D8)  # the players start putting the pieces away
    _restart(engine, back, shown)
    assert engine.next_deadline() == back + SETTLE_S
    _, fired = _fire_due(engine)
    assert fired[0] == back + SETTLE_S and back + SETTLE_S not in fired[1:]  # (before: the same one, 5 times)
    assert engine.downtime.held is None
    assert engine.state.result == "1-0" and [m.uci for m in engine.state.moves] == ["e2e4"]
