"""Recogniser benchmark: board events per second, against a naive baseline, and memory per board.

Run: ``python -m bench.bench_core [--games N] [--profile casual]``

What it measures (issue 2):

* **Throughput** of :class:`boardd.core.engine.Engine` on one core, replaying every game of
  ``../shared/data/pgn/`` as simulated under the ``casual`` handling profile (slides with
  transit squares, adjustments, flicker, captures in either order, new-before-old reports).
  Events are generated first and are not part of the timing.
* **Baseline**, implemented here: the method picochess uses. After every board event it
  compares the physical placement with the placement after every legal move of the official
  position (push, compare, pop) and takes the first match. It knows nothing about clocks,
  irregularities or timing, so it does strictly less work per event than the engine.
  Both run in the same process, interleaved game by game, so machine noise hits both alike;
  the figure that matters is the ratio.
* **Memory** of the whole engine state for a game of 100 moves (200 plies), by tracemalloc:
  the memory still allocated after the game, with the engine alive, minus what was allocated
  before it was created.

Targets: >= 100,000 events/s and >= 5x the baseline; < 1 MB per board.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn

from boardd.core.engine import Engine
from boardd.core.events import BoardSnapshot, ClockReading, Event, LinkChanged, SquareChanged
from drivers.sim import random_game, simulate_game

PGN_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pgn"

BOARD_EVENTS = (SquareChanged, BoardSnapshot, ClockReading, LinkChanged)


def load_games(limit: int | None) -> list[chess.pgn.Game]:
    """Every game of the shared PGN files (in file order), up to *limit*."""
    games: list[chess.pgn.Game] = []
    for path in sorted(PGN_DIR.glob("*.pgn")):
        with path.open(encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                if game.errors or not list(game.mainline_moves()):
                    continue
                games.append(game)
                if limit is not None and len(games) >= limit:
                    return games
    return games


class NaiveBaseline:
    """Snapshot matching after every event: the picochess method."""

    def __init__(self, board: chess.Board) -> None:
        self.official = board.copy(stack=False)
        self.physical: dict[int, chess.Piece] = dict(self.official.piece_map())
        self.moves: list[str] = []

    def feed(self, event: Event) -> None:
        if isinstance(event, SquareChanged):
            if isinstance(event.content, chess.Piece):
                self.physical[event.square] = event.content
            else:
                self.physical.pop(event.square, None)
        elif isinstance(event, BoardSnapshot):
            self.physical = {sq: c for sq, c in enumerate(event.squares) if isinstance(c, chess.Piece)}
        else:
            return
        board = self.official
        for move in board.legal_moves:
            board.push(move)
            matched = board.piece_map() == self.physical
            board.pop()
            if matched:
                board.push(move)
                self.moves.append(move.uci())
                return


def _run_engine(events: Sequence[Event]) -> Engine:
    engine = Engine()
    for event in events:
        engine.feed(event)
    deadline = engine.next_deadline()
    while deadline is not None:
        engine.advance(deadline)
        deadline = engine.next_deadline()
    return engine


def _expected_record(game: chess.pgn.Game, moves: list[str]) -> list[str]:
    """The game's moves up to the first automatic end under the 2023 Laws.

    Old games (London 1851, Steinitz-Zukertort 1886) sometimes go on after a fivefold repetition
    or a dead position, which end the game at once today (9.6.1, 5.2.2): the engine rightly stops there.
    """
    board = game.board()
    record: list[str] = []
    for uci in moves:
        board.push_uci(uci)
        record.append(uci)
        if board.is_game_over(claim_draw=False):
            break
    return record


def throughput(games: list[chess.pgn.Game], profile: str) -> None:
    print(f"simulating {len(games)} games under the {profile!r} profile ...", file=sys.stderr)
    sims = []
    for index, game in enumerate(games):
        sims.append((game, simulate_game(game, seed=index, profile=profile)))
    n_events = sum(len(sim.events) for _, sim in sims)
    n_board = sum(1 for _, sim in sims for e in sim.events if isinstance(e, BOARD_EVENTS))
    n_squares = sum(1 for _, sim in sims for e in sim.events if isinstance(e, SquareChanged))

    engine_time = 0.0
    baseline_time = 0.0
    engine_ok = 0
    baseline_ok = 0
    mismatches: list[str] = []
    gc.disable()
    try:
        for game, sim in sims:
            started = time.perf_counter()
            engine = _run_engine(sim.events)
            engine_time += time.perf_counter() - started
            got = [m.uci for m in engine.state.moves]
            if got == _expected_record(game, sim.moves):
                engine_ok += 1
            elif len(mismatches) < 5:
                mismatches.append(f"{game.headers.get('White')}-{game.headers.get('Black')}: "
                                  f"{len(got)} of {len(sim.moves)} plies")

            baseline = NaiveBaseline(game.board())
            started = time.perf_counter()
            for event in sim.events:
                baseline.feed(event)
            baseline_time += time.perf_counter() - started
            if baseline.moves == sim.moves:
                baseline_ok += 1
    finally:
        gc.enable()

    engine_rate = n_board / engine_time
    baseline_rate = n_board / baseline_time
    print(f"games                      {len(sims)}  (engine reproduced {engine_ok}, baseline {baseline_ok})")
    print(f"events                     {n_events}  (board/clock events {n_board}, square changes {n_squares})")
    print(f"engine                     {engine_time:8.3f} s   {engine_rate:12,.0f} board events/s")
    print(f"naive baseline             {baseline_time:8.3f} s   {baseline_rate:12,.0f} board events/s")
    print(f"ratio engine / baseline    {engine_rate / baseline_rate:8.2f} x   (target >= 5x)")
    print(f"target >= 100,000 events/s {'met' if engine_rate >= 100_000 else 'NOT met'}")
    for line in mismatches:
        print(f"  engine mismatch: {line}")


def memory(profile: str) -> None:
    rng = random.Random(7)
    # A game of at least 100 moves: random games stopped at 200 plies, first one that long.
    sim = None
    for seed in range(200):
        game = random_game(seed, max_plies=200)
        if len(list(game.mainline_moves())) >= 200:
            sim = simulate_game(game, seed=rng.randrange(1 << 30), profile=profile)
            break
    if sim is None:
        print("memory: no 200-ply random game found in 200 seeds", file=sys.stderr)
        return
    gc.collect()
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    engine = _run_engine(sim.events)
    gc.collect()
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    plies = len(engine.state.moves)
    retained = after - before
    print(f"memory, {plies} plies ({plies // 2} moves): retained {retained / 1024:,.0f} KiB, "
          f"peak {(peak - before) / 1024:,.0f} KiB   (target < 1024 KiB)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=None, help="use only the first N games")
    parser.add_argument("--profile", default="casual")
    parser.add_argument("--repeat", type=int, default=1, help="repeat the throughput run")
    args = parser.parse_args(argv)
    games = load_games(args.games)
    for _ in range(args.repeat):
        throughput(games, args.profile)
    memory(args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
