"""Daemon journal benchmark: commit latency per durability mode, and what the event loop sees.

Run: ``python -m bench.bench_daemon journal [--commits N] [--dir PATH]``
(this was ``bench/bench_daemon.py`` before the end-to-end parts took that name).

What it measures:

* **Commit latency** of :meth:`boardd.daemon.journal.Journal.record` (one board event plus two outbox
  rows in one transaction, the daemon's unit of work) for ``synchronous=FULL`` and ``NORMAL``
  in WAL mode: p50, p99 and max over N commits, and commits per second. Point ``--dir`` at the
  storage you care about (an SD card on a Pi): fsync cost is a property of the medium.
* **WAL growth** (issue 12, the first game after a start): the daemon's journal closes with
  ``wal_checkpoint(TRUNCATE)`` and SQLite deletes the WAL at the last close, so after every start
  the WAL grows from nothing to its working size (``wal_autocheckpoint``: 1000 pages, about 4 MB,
  some 350 commits of a game: half the first game) and each of those commits' fsyncs also has to
  write the file's new size. Measured: the same commits on a fresh WAL against a WAL grown to its
  working size beforehand (:meth:`boardd.daemon.journal.Journal.prepare_wal`, which the daemon
  calls at start: a 4 MB row written and deleted, then a passive checkpoint; SQLite then reuses
  the file from its start), taking turns three times; and what ``prepare_wal`` costs.
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


_PREPARE: list[float] = []


def wal_growth(directory: Path, commits: int, *, pregrown: bool, tag: str) -> list[float]:
    """Commit latencies (s) of *commits* FULL commits on a fresh journal, its WAL grown first if *pregrown*."""
    journal = Journal.open(directory / f"wal-{tag}.sqlite", synchronous="full")
    journal.start_session()
    if pregrown:
        t0 = time.perf_counter()
        journal.prepare_wal()  # what the daemon does at start (BoardRuntime.open)
        _PREPARE.append(time.perf_counter() - t0)
    latencies = []
    for i in range(commits):
        t0 = time.perf_counter()
        journal.record(_event(i), [_Pub(2 * i), _Pub(2 * i + 1)], seq=2 * i + 1)
        latencies.append(time.perf_counter() - t0)
    journal.close()
    return latencies


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
        print("WAL growth after a start: 350 FULL commits on a fresh WAL vs a WAL grown beforehand "
              "(Journal.prepare_wal; ms), 3 turns")
        fresh: list[float] = []
        grown: list[float] = []
        for turn in range(3):
            fresh += wal_growth(directory, 350, pregrown=False, tag=f"fresh-{turn}")
            grown += wal_growth(directory, 350, pregrown=True, tag=f"grown-{turn}")
        for label, values in (("fresh WAL (grows)", fresh), ("WAL grown first", grown)):
            values.sort()
            cells = "  ".join(f"p{round(q * 100)} {values[int(len(values) * q)] * 1e3:.3f}" for q in (0.5, 0.9, 0.99))
            print(f"  {label:<18}  {cells}  max {values[-1] * 1e3:.3f}")
        print(f"  Journal.prepare_wal at start: {', '.join(f'{t * 1e3:.1f}' for t in _PREPARE)} ms")
        print("longest event-loop stall while committing (1 ms heartbeat)")
        for mode in ("full", "normal"):
            direct = asyncio.run(loop_stall(directory, mode, commits // 2, threaded=False))
            threaded = asyncio.run(loop_stall(directory, mode, commits // 2, threaded=True))
            print(f"  synchronous={mode:<6}  on the loop {direct:.2f} ms   journal thread {threaded:.2f} ms")
    return 0
