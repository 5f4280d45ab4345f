"""The engine's own clock (a game without a clock) after the game is over (Article 5: the game ends there).

Without a clock the engine keeps time with its clock model. Once the game is over (the arbiter's result, or a
checkmate on the board) that clock is shown stopped where the game ended, and no flag timer stays armed: before, the
published clock ran on after the result, the daemon's timer stayed due, and at the model's flag time the state
showed the side to move at 0:00 in a game long over.
"""

from __future__ import annotations

import chess
import chess.pgn
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Event, SetResult
from drivers.sim import simulate_game


def _play(events: list[Event]) -> tuple[Engine, float]:
    engine = Engine()
    last = 0.0
    for event in events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            engine.advance(deadline)
        engine.feed(event)
        last = event.at
    while (deadline := engine.next_deadline()) is not None and deadline < last + 10.0:
        engine.advance(deadline)  # the last move released (without a clock: after T_settle)
    return engine, last + 10.0


@pytest.mark.parametrize("seed", range(8))
def test_the_engine_clock_stops_at_the_arbiters_result(seed: int) -> None:
    sim = simulate_game(seed=seed, profile="casual", clock=False, max_plies=6 + 2 * seed)
    engine, last = _play(list(sim.events))
    assert engine.state.result == "*"
    assert engine.state.clock.model == "engine"
    engine.feed(SetResult(at=last + 5.0, result="1/2-1/2", termination="agreement"))
    stopped = engine.state.clock
    assert stopped.running is None
    assert engine.next_deadline() is None
    # an hour later nothing has moved: no flag, the times where the game ended
    assert engine.advance(last + 3600.0) == []
    assert engine.state.clock == stopped
    assert stopped.white is not None and stopped.black is not None
    assert stopped.white > 0 and stopped.black > 0


def test_the_engine_clock_stops_at_a_checkmate() -> None:
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    for uci in ("f2f3", "e7e5", "g2g4", "d8h4"):
        node = node.add_variation(chess.Move.from_uci(uci))
    sim = simulate_game(game, seed=1, profile="clean", clock=False)
    engine, last = _play(list(sim.events))
    assert engine.state.result == "0-1"
    assert [m.uci for m in engine.state.moves] == ["f2f3", "e7e5", "g2g4", "d8h4"]
    stopped = engine.state.clock
    assert stopped.running is None
    assert engine.advance(last + 3600.0) == []
    assert engine.next_deadline() is None
    assert engine.state.clock == stopped
