"""Throughput of the simulator and the event log. Prints figures; asserts nothing.

Run: ``.venv/bin/python bench/bench_sim_eventlog.py [games]``
"""

from __future__ import annotations

import io
import sys
import time

from boardd.core import eventlog
from drivers.sim import PROFILES, random_game, simulate_game


def main(games: int = 50) -> None:
    """Simulate *games* random games per profile, then write and read them as event logs."""
    sources = [random_game(seed) for seed in range(games)]
    for profile in PROFILES:
        start = time.perf_counter()
        sims = [simulate_game(game, seed=seed, profile=profile) for seed, game in enumerate(sources)]
        elapsed = time.perf_counter() - start
        events = sum(len(sim.events) for sim in sims)
        plies = sum(len(sim.moves) for sim in sims)
        print(f"simulate {profile:6s}: {games} games, {plies} plies, {events} events in {elapsed:.2f} s "
              f"= {events / elapsed:,.0f} events/s, {elapsed / games * 1e3:.1f} ms/game")
    texts = []
    start = time.perf_counter()
    for sim in sims:
        stream = io.StringIO()
        eventlog.write_events(stream, sim.events, sim.header)
        texts.append(stream.getvalue())
    written = time.perf_counter() - start
    logs = [text.splitlines() for text in texts]
    start = time.perf_counter()
    count = sum(1 for lines in logs for _ in eventlog.read_events(lines))
    read = time.perf_counter() - start
    size = sum(len(text.encode()) for text in texts)
    print(f"event log: {count} events, {size / 1e6:.1f} MB; write {count / written:,.0f} events/s, "
          f"read {count / read:,.0f} events/s ({size / count:.0f} bytes/event)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
