"""Hall traffic from the real pipeline: drivers.sim → boardd.core.engine → boardd.core.contract
(via boardd.daemon.replay).

Each board plays a real game with the simulator (DGT-style clock readings, human think times), the
engine recognises it and the contract publisher renders exactly what the daemon would publish.
The boards' publications are merged by event time, as a hall would send them.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import chess.pgn

from boardd.core.outputs import GameState
from boardd.daemon.replay import Replay, ReplayOptions
from drivers.sim import simulate_game
from tests.consumers.feed import Publication


@dataclass
class SimulatedBoard:
    """One board's traffic and the record it must produce."""

    board: str
    moves: list[str]            # the simulator's game (UCI)
    state: GameState            # the engine's final state: the official record with clocks
    publications: list[tuple[float, Publication]]


def simulate_board(game: chess.pgn.Game, *, board: str, prefix: str, seed: int, max_plies: int | None = None,
                   think_median: float = 3.0) -> SimulatedBoard:
    """Simulate, recognise and render one board's game."""
    sim = simulate_game(game, seed=seed, think_median=think_median, max_plies=max_plies)
    replay = Replay(sim.header, ReplayOptions(board=board, prefix=prefix))
    out: list[tuple[float, Publication]] = []
    for event in sim.events:
        out += [(event.at, (p.topic, p.payload_bytes(), p.retain, p.qos)) for p in replay.feed(event)]
    last = sim.events[-1].at if sim.events else 0.0
    out += [(last, (p.topic, p.payload_bytes(), p.retain, p.qos)) for p in replay.finish()]
    return SimulatedBoard(board=board, moves=list(sim.moves), state=replay.engine.state, publications=out)


def merge(boards: list[SimulatedBoard]) -> list[Publication]:
    """All boards' publications in event-time order (stable per board)."""
    streams = [[(at, index, i, pub) for i, (at, pub) in enumerate(b.publications)] for index, b in enumerate(boards)]
    return [pub for _, _, _, pub in heapq.merge(*streams)]
