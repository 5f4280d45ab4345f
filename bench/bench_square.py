"""The square change alone: instructions and where the time goes (issue 12, sixth round).

Run: ``python -m bench.bench_square [--games N] {run,sample}``

The events of ``bench.bench_core``'s first N games (``casual``, seed = game index) are simulated
first; each game is fed to a fresh :class:`~boardd.core.engine.Engine`, the due timers fired before
every event as ``bench.bench_core`` does. Every square change goes through ``itertools.starmap``, so
that callgrind counts only inside those ``Engine.feed`` calls::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no --toggle-collect=starmap_next \\
        .venv/bin/python -m bench.bench_square --games 6 run

(the instructions collected, divided by the square changes printed, are a square change's cost;
run it with another checkout first on ``sys.path`` to compare). ``sample`` takes CPU-time samples
(``SIGPROF``) only while a square change is fed and prints each function's share of them, the
functions it calls included: the proportions, not the instruction counts (a sample lands more
often at a function's entry, so shares of small functions are overstated).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from bench.bench_core import load_games
from boardd.core.engine import Engine
from boardd.core.events import Event, SquareChanged
from drivers.sim import simulate_game


def _feed_game(events: Sequence[Event], inside: list[bool]) -> int:
    """One game through a fresh engine; True in *inside* while a square change is fed. Returns the changes fed."""
    engine = Engine()
    feed = engine.feed
    squares = 0
    for event in events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            engine.advance(deadline)
        if type(event) is SquareChanged:
            inside[0] = True
            for _ in itertools.starmap(feed, ((event,),)):
                pass
            inside[0] = False
            squares += 1
        else:
            feed(event)
    while (deadline := engine.next_deadline()) is not None:
        engine.advance(deadline)
    return squares


def _sample(games: list[list[Event]], repeat: int) -> None:
    inside = [False]
    total = 0
    shares: collections.Counter[tuple[str, str]] = collections.Counter()

    def on_tick(_signum: int, frame: FrameType | None) -> None:
        nonlocal total
        if not inside[0]:
            return
        total += 1
        seen = set()
        while frame is not None:
            code = frame.f_code
            key = (code.co_filename.rsplit("/", 1)[-1], code.co_name)
            if key not in seen:
                seen.add(key)
                shares[key] += 1
            frame = frame.f_back

    signal.signal(signal.SIGPROF, on_tick)
    signal.setitimer(signal.ITIMER_PROF, 0.0003, 0.0003)
    try:
        for _ in range(repeat):
            for events in games:
                _feed_game(events, inside)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    print(f"{total} samples while a square change was fed; share of each function (with what it calls):")
    for (filename, name), count in shares.most_common(60):
        print(f"{100 * count / max(total, 1):6.1f} %  {filename}:{name}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=10, help="sample: feed the games this many times")
    parser.add_argument("mode", choices=("run", "sample"))
    args = parser.parse_args(argv)
    games = [simulate_game(game, seed=index, profile="casual").events
             for index, game in enumerate(load_games(args.games))]
    if args.mode == "sample":
        _sample(games, args.repeat)
        return 0
    inside = [False]
    print(f"square changes {sum(_feed_game(events, inside) for events in games)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
