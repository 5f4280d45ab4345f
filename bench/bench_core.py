"""Recogniser benchmark: board events per second, against a naive baseline, and memory per board.

Run: ``python -m bench.bench_core [--games N] [--profile casual]``

What it measures (issues 2 and 12):

* **Throughput** of :class:`boardd.core.engine.Engine` on one core, replaying every game of
  ``../shared/data/pgn/`` as simulated under the ``casual`` handling profile (slides with
  transit squares, adjustments, flicker, captures in either order, new-before-old reports).
  Events are generated first and are not part of the timing. The time of every ``feed`` is
  charged to its kind of event, so **square changes per second** and **clock readings per
  second** are reported apart (the stream has some twenty clock readings for every square
  change; counting them together flatters the figure); timers are charged apart too, and the
  whole-stream figure (every event and timer counted in, per square change) is printed as well.
* **Baselines**, implemented here, both fed the same events and both with a debounce
  (:data:`DEBOUNCE_S`: a matching placement becomes the move once it has stood that long,
  as a picochess board waits for the position to settle; without it a sliding piece or a piece
  put down on the wrong square for a moment is taken as the move, and no game is reproduced):
  *naive* compares the placement after every change with the placement after every legal move
  (push, compare, pop); *picochess* is picochess's method (the board FENs after every legal
  move computed once per position, the board's FEN after every change looked up in them). Each
  prints how many games it reproduced; a baseline that does not reproduce the games is no
  baseline. They know nothing about clocks, irregularities or timing.
  Engine and baselines run in the same process, interleaved game by game, so machine noise
  hits both alike.
* **Memory** of the whole engine state for a game of 100 moves (200 plies), by tracemalloc:
  the memory still allocated after the game, with the engine alive, minus what was allocated
  before it was created.

Targets: >= 100,000 square changes/s and >= 5x a working baseline; < 1 MB per board.
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
from boardd.core.events import BoardSnapshot, ClockReading, Event, SquareChanged
from drivers.sim import random_game, simulate_game

PGN_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pgn"

#: How long a placement must stand before a baseline takes it as the move (seconds of event time).
DEBOUNCE_S = 0.5


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


class _Debounced:
    """What both baselines share: the physical placement, the official position, and the debounce.

    A placement that equals the position after a legal move is a *candidate*; it becomes the move
    only once it has stood for :data:`DEBOUNCE_S` (judged at the next event, whatever it is: the
    next change, a clock reading, a snapshot; and at the end of the game). A change before that
    cancels it: sliding pieces pass over squares a legal move could end on, a piece is put down on
    the wrong square for a moment, and a picochess board waits for the position to settle too.
    """

    def __init__(self, board: chess.Board) -> None:
        self.official = board.copy(stack=False)
        self.physical: list[chess.Piece | None] = [self.official.piece_at(sq) for sq in chess.SQUARES]
        self.moves: list[str] = []
        self.pending: tuple[chess.Move, float] | None = None

    def _settle(self, now: float) -> None:
        if self.pending is not None and now - self.pending[1] >= DEBOUNCE_S:
            move = self.pending[0]
            self.official.push(move)
            self.moves.append(move.uci())
            self.pending = None
            self.moved()

    def moved(self) -> None:
        """The official position changed."""

    def match(self) -> chess.Move | None:
        raise NotImplementedError

    def feed(self, event: Event) -> None:
        self._settle(event.at)
        if isinstance(event, SquareChanged):
            self.physical[event.square] = event.content if isinstance(event.content, chess.Piece) else None
        elif isinstance(event, BoardSnapshot):
            self.physical = [c if isinstance(c, chess.Piece) else None for c in event.squares]
        else:
            return
        move = self.match()
        self.pending = (move, event.at) if move is not None else None

    def finish(self) -> None:
        self._settle(float("inf"))


class NaiveBaseline(_Debounced):
    """After every change, the placement after every legal move of the official position (push, compare, pop)."""

    def match(self) -> chess.Move | None:
        physical = {sq: piece for sq, piece in enumerate(self.physical) if piece is not None}
        board = self.official
        for move in board.legal_moves:
            board.push(move)
            matched = board.piece_map() == physical
            board.pop()
            if matched:
                return move
        return None


class PicochessBaseline(_Debounced):
    """picochess's method: the board FENs after every legal move, computed once per official position
    (``compute_legal_fens``); after every change the board's FEN, looked up in that list."""

    def __init__(self, board: chess.Board) -> None:
        super().__init__(board)
        self.moved()

    def moved(self) -> None:
        board = self.official
        self.legal: list[tuple[str, chess.Move]] = []
        for move in board.legal_moves:
            board.push(move)
            self.legal.append((board.board_fen(), move))
            board.pop()

    def match(self) -> chess.Move | None:
        fen = _board_fen(self.physical)
        for candidate, move in self.legal:
            if candidate == fen:
                return move
        return None


def _board_fen(squares: list[chess.Piece | None]) -> str:
    """The board part of a FEN, as a board driver builds it from its 64 fields."""
    rows = []
    for rank in range(7, -1, -1):
        row, empty = [], 0
        for file in range(8):
            piece = squares[rank * 8 + file]
            if piece is None:
                empty += 1
                continue
            if empty:
                row.append(str(empty))
                empty = 0
            row.append(piece.symbol())
        if empty:
            row.append(str(empty))
        rows.append("".join(row))
    return "/".join(rows)


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


def _timed_engine(events: Sequence[Event]) -> tuple[Engine, dict[str, float]]:
    """The engine over *events* (timers fired as :func:`_run_engine`), with the time spent per kind of input."""
    spent = dict.fromkeys(("square", "clock", "other", "timers"), 0.0)
    engine = Engine()
    clock = time.perf_counter
    for event in events:
        kind = "square" if isinstance(event, SquareChanged) else "clock" if isinstance(event, ClockReading) else "other"
        # Engine.feed fires the timers due before the event itself; fire them first so they count as timers.
        started = clock()
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            engine.advance(deadline)
        middle = clock()
        engine.feed(event)
        ended = clock()
        spent["timers"] += middle - started
        spent[kind] += ended - middle
    started = clock()
    while (deadline := engine.next_deadline()) is not None:
        engine.advance(deadline)
    spent["timers"] += clock() - started
    return engine, spent


def _timed_baseline(kind: type[_Debounced], game: chess.pgn.Game, events: Sequence[Event]) -> tuple[list[str], float]:
    baseline = kind(game.board())
    started = time.perf_counter()
    for event in events:
        baseline.feed(event)
    baseline.finish()
    return baseline.moves, time.perf_counter() - started


def throughput(games: list[chess.pgn.Game], profile: str) -> None:
    print(f"simulating {len(games)} games under the {profile!r} profile ...", file=sys.stderr)
    sims = []
    for index, game in enumerate(games):
        sims.append((game, simulate_game(game, seed=index, profile=profile)))
    n_events = sum(len(sim.events) for _, sim in sims)
    n_squares = sum(1 for _, sim in sims for e in sim.events if isinstance(e, SquareChanged))
    n_clock = sum(1 for _, sim in sims for e in sim.events if isinstance(e, ClockReading))
    n_other = n_events - n_squares - n_clock

    spent = dict.fromkeys(("square", "clock", "other", "timers"), 0.0)
    baselines: dict[str, type[_Debounced]] = {"naive": NaiveBaseline, "picochess": PicochessBaseline}
    base_time = dict.fromkeys(baselines, 0.0)
    base_ok = dict.fromkeys(baselines, 0)
    engine_ok = 0
    mismatches: list[str] = []
    gc.disable()
    try:
        for game, sim in sims:
            engine, times = _timed_engine(sim.events)
            for key, value in times.items():
                spent[key] += value
            got = [m.uci for m in engine.state.moves]
            if got == _expected_record(game, sim.moves):
                engine_ok += 1
            elif len(mismatches) < 5:
                mismatches.append(f"engine: {game.headers.get('White')}-{game.headers.get('Black')}: "
                                  f"{len(got)} of {len(sim.moves)} plies")
            for name, kind in baselines.items():
                moves, elapsed = _timed_baseline(kind, game, sim.events)
                base_time[name] += elapsed
                # the baseline knows no game end: it reproduces the game as played
                if moves == sim.moves:
                    base_ok[name] += 1
                elif len(mismatches) < 10:
                    first = next((i for i, (a, b) in enumerate(zip(moves, sim.moves, strict=False)) if a != b),
                                 min(len(moves), len(sim.moves)))
                    mismatches.append(f"{name}: {game.headers.get('White')}-{game.headers.get('Black')}: "
                                      f"{len(moves)} plies for {len(sim.moves)}, first difference at ply {first + 1}")
    finally:
        gc.enable()

    engine_board = spent["square"] + spent["other"]
    engine_total = sum(spent.values())
    print(f"games                      {len(sims)}  reproduced: engine {engine_ok}, "
          + ", ".join(f"{name} baseline {base_ok[name]}" for name in baselines))
    print(f"events                     {n_events}  (square changes {n_squares}, clock readings {n_clock}, "
          f"other {n_other})")
    square_rate = n_squares / spent["square"]
    print(f"engine, square changes     {spent['square']:8.3f} s   {square_rate:12,.0f} square changes/s")
    print(f"engine, clock readings     {spent['clock']:8.3f} s   {n_clock / spent['clock']:12,.0f} clock readings/s")
    print(f"engine, other events       {spent['other']:8.3f} s   ({n_other} snapshots, link changes)")
    print(f"engine, timers             {spent['timers']:8.3f} s")
    print(f"engine, everything         {engine_total:8.3f} s   {n_squares / engine_total:12,.0f} square changes/s "
          "with every other event and timer counted in")
    for name in baselines:
        rate = n_squares / base_time[name]
        print(f"{name + ' baseline':<26} {base_time[name]:8.3f} s   {rate:12,.0f} square changes/s "
              f"(reproduced {base_ok[name]} of {len(sims)})")
    print("ratio engine / baseline, same events (target >= 5x against a working baseline):")
    for name in baselines:
        note = "" if base_ok[name] == len(sims) else "   this baseline did NOT reproduce every game"
        print(f"  {name:<10} whole stream {base_time[name] / engine_total:6.2f} x   "
              f"square changes only {base_time[name] / engine_board:6.2f} x{note}")
    print("  (whole stream: the engine's time for every event and timer; square changes only: its time for the "
          "square changes and snapshots, the events a baseline works on)")
    print(f"target >= 100,000 square changes/s: {'met' if square_rate >= 100_000 else 'NOT met'} "
          f"({square_rate:,.0f}/s on square changes alone, {n_squares / engine_total:,.0f}/s with everything)")
    for line in mismatches:
        print(f"  mismatch: {line}")


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
