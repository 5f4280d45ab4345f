"""Daemon journal benchmark: commit latency per durability mode, and what the event loop sees.

Run: ``python -m bench.bench_daemon journal [--commits N] [--dir PATH]``
(this was ``bench/bench_daemon.py`` before the end-to-end parts took that name).

What it measures:

* **Commit latency** of :meth:`boardd.daemon.journal.Journal.record` (one board event plus two outbox
  rows in one transaction, the daemon's unit of work) for ``synchronous=FULL`` and ``NORMAL``
  in WAL mode: p50, p99 and max over N commits, and commits per second. Point ``--dir`` at the
  storage you care about (an SD card on a Pi): fsync cost is a property of the medium.
* **Event-loop stall**: the longest gap between two ticks of a 1 ms heartbeat task while the
  same commits run through :class:`boardd.daemon.journal.AsyncJournal` (one worker thread), compared
  with calling the journal directly on the loop. This is why the daemon does not write on the loop.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from boardd.core import events as ev
from boardd.daemon.journal import AsyncJournal, Journal


class _Pub:
    topic = "boardd/t1/move"
    retain = False
    qos = 1

    def __init__(self, seq: int) -> None:
        self.seq = seq

    def payload_bytes(self) -> bytes:
        return json.dumps({"v": 1, "board": "t1", "session": 1, "seq": self.seq, "uci": "e2e4", "san": "e4",
                           "fen_after": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}).encode()


def _event(i: int) -> ev.Event:
    return ev.SquareChanged(at=float(i) / 10, square=i % 64, content=None)


def commit_latency(directory: Path, mode: str, commits: int) -> dict[str, float]:
    journal = Journal.open(directory / f"bench-{mode}.sqlite", synchronous=mode)
    journal.start_session()
    latencies = []
    start = time.perf_counter()
    for i in range(commits):
        t0 = time.perf_counter()
        journal.record(_event(i), [_Pub(2 * i), _Pub(2 * i + 1)], seq=2 * i + 1)
        latencies.append(time.perf_counter() - t0)
    total = time.perf_counter() - start
    journal.close()
    latencies.sort()
    return {"p50_ms": latencies[len(latencies) // 2] * 1e3, "p99_ms": latencies[int(len(latencies) * 0.99)] * 1e3,
            "max_ms": latencies[-1] * 1e3, "per_s": commits / total}


async def loop_stall(directory: Path, mode: str, commits: int, *, threaded: bool) -> float:
    journal = Journal.open(directory / f"stall-{mode}-{threaded}.sqlite", synchronous=mode)
    journal.start_session()
    ajournal = AsyncJournal(journal)
    gaps: list[float] = []
    running = True

    async def heartbeat() -> None:
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    for i in range(commits):
        if threaded:
            await ajournal.record(_event(i), [_Pub(2 * i), _Pub(2 * i + 1)], seq=2 * i + 1)
        else:
            journal.record(_event(i), [_Pub(2 * i), _Pub(2 * i + 1)], seq=2 * i + 1)
            await asyncio.sleep(0)
    running = False
    await beat
    await ajournal.aclose()
    return max(gaps) * 1e3 if gaps else 0.0


def run_journal(commits: int, where: Path | None) -> int:
    """Print the journal figures (*commits* commits per mode, files under *where* or a temp dir)."""
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        directory = Path(tmp)
        print(f"journal commit latency ({commits} commits of 1 event + 2 outbox rows, WAL) in {directory}")
        for mode in ("full", "normal"):
            r = commit_latency(directory, mode, commits)
            print(f"  synchronous={mode:<6}  p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  "
                  f"max {r['max_ms']:.3f} ms  {r['per_s']:.0f} commits/s")
        print("longest event-loop stall while committing (1 ms heartbeat)")
        for mode in ("full", "normal"):
            direct = asyncio.run(loop_stall(directory, mode, commits // 2, threaded=False))
            threaded = asyncio.run(loop_stall(directory, mode, commits // 2, threaded=True))
            print(f"  synchronous={mode:<6}  on the loop {direct:.2f} ms   journal thread {threaded:.2f} ms")
    return 0
