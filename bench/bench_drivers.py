"""Driver benchmarks: ``python -m bench.bench_drivers`` prints figures (nothing is asserted).

1. DGT codec throughput: messages/s decoded (and decoded + mapped to events) from a
   realistic stream (field updates, clock messages, dumps) fed in 32-byte chunks.
2. Latency through a real pty: from the moment the emulator has written the last byte
   of a field update / clock message / dump to the moment the driver's event comes out
   of ``events()``, over a whole game (p50, p99, max).
3. Idle CPU of a connected driver: the emulator runs in a child process (its scans
   would otherwise count), the board is still and the clock stopped; process CPU time
   of the driver's process over a few seconds, as % of one core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import deque
from pathlib import Path

import chess
import chess.pgn

from boardd.core.events import BoardSnapshot, ClockReading, SquareChanged
from drivers.dgt import DgtDriver, DgtOptions
from drivers.dgt.codec import BoardDump, ClockTimes, DgtDecoder, FieldUpdate, encode_message
from drivers.dgt.emulator import DgtEmulator
from drivers.dgt.mapping import DgtMapper

PGN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pgn" / "tatamast22.pgn"


def _stream(moves: int = 2000) -> tuple[bytes, int]:
    """A byte stream like UPDATE_NICE traffic: per move 2-4 field updates and 3 clock messages; a dump per 20."""
    parts: list[bytes] = []
    count = 0
    start = [8, 9, 10, 12, 11, 10, 9, 8] + [7] * 8 + [0] * 32 + [1] * 8 + [2, 3, 4, 6, 5, 4, 3, 2]
    dump = BoardDump(codes=tuple(start))
    for n in range(moves):
        for k in range(2 + n % 3):
            parts.append(encode_message(FieldUpdate(field=(n * 7 + k * 13) % 64, code=(n + k) % 13)))
            count += 1
        for s in range(3):
            parts.append(encode_message(ClockTimes(right_s=3600 - n, left_s=3600 - n - s, right_flags=0, left_flags=0,
                                                   status=0x09 if n % 2 else 0x13)))
            count += 1
        if n % 20 == 0:
            parts.append(encode_message(dump))
            count += 1
    return b"".join(parts), count


def bench_codec() -> None:
    data, count = _stream()
    chunks = [data[i:i + 32] for i in range(0, len(data), 32)]
    best_decode = best_map = float("inf")
    for _ in range(5):
        decoder = DgtDecoder()
        start = time.perf_counter()
        decoded = 0
        for chunk in chunks:
            decoded += len(decoder.feed(chunk))
        best_decode = min(best_decode, time.perf_counter() - start)
        assert decoded == count
        decoder, mapper = DgtDecoder(), DgtMapper()
        start = time.perf_counter()
        for chunk in chunks:
            for message in decoder.feed(chunk):
                mapper.map(message, 0.0)
        best_map = min(best_map, time.perf_counter() - start)
    print(f"codec: {count} messages, {len(data)} bytes in 32-byte chunks (best of 5)")
    print(f"  decode:         {count / best_decode:12,.0f} messages/s  ({len(data) / best_decode / 1e6:.2f} MB/s)")
    print(f"  decode + map:   {count / best_map:12,.0f} messages/s")


async def bench_latency() -> None:
    with PGN.open(encoding="utf-8") as stream:
        for _ in range(72):
            chess.pgn.skip_game(stream)
        game = chess.pgn.read_game(stream)
    assert game is not None
    written: dict[type, deque[float]] = {SquareChanged: deque(), ClockReading: deque(), BoardSnapshot: deque()}
    kinds = {FieldUpdate: SquareChanged, ClockTimes: ClockReading, BoardDump: BoardSnapshot}
    probe = DgtDecoder()

    def on_write(data: bytes) -> None:
        now = time.monotonic()
        for message in probe.feed(data):
            kind = kinds.get(type(message))
            if kind is not None and not (isinstance(message, ClockTimes) and message.is_all_zero):
                written[kind].append(now)

    latencies: dict[type, list[float]] = {kind: [] for kind in written}
    async with DgtEmulator(scan_interval=0.05, seed=5) as emu:
        emu.set_clock(5400, 5400)
        emu.on_write.append(on_write)
        async with DgtDriver(DgtOptions(port=emu.path, settle_dump_s=0.3, periodic_dump_s=0)) as driver:

            async def consume() -> None:
                async for event in driver.events():
                    now = time.monotonic()
                    queue = written.get(type(event))
                    if queue:
                        latencies[type(event)].append(now - queue.popleft())

            consumer = asyncio.create_task(consume())
            await emu.wait_host(200)
            for queue in written.values():
                queue.clear()
            for values in latencies.values():
                values.clear()
            played = await emu.play(game, think_scans=3, pause_scans=3)
            await emu.wait_scan(10)
            consumer.cancel()
    samples = [x for values in latencies.values() for x in values]
    print(f"latency pty -> events(): {played} plies of {game.headers['White']} - {game.headers['Black']}")
    for kind, values in [*latencies.items(), (object, samples)]:
        if not values:
            continue
        ordered = sorted(values)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        name = "all" if kind is object else kind.__name__
        print(f"  {name:<14} n={len(values):4d}  p50={statistics.median(values) * 1e3:6.2f} ms"
              f"  p99={p99 * 1e3:6.2f} ms  max={ordered[-1] * 1e3:6.2f} ms")


_CHILD = """
import asyncio, sys
from drivers.dgt.emulator import DgtEmulator
async def main():
    async with DgtEmulator() as emu:
        emu.set_clock(5400, 5400)
        print(emu.path, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
asyncio.run(main())
"""


ROOT = Path(__file__).resolve().parents[1]


async def bench_idle(seconds: float) -> None:
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", _CHILD, stdin=asyncio.subprocess.PIPE,
                                                 stdout=asyncio.subprocess.PIPE, cwd=ROOT)
    assert child.stdout is not None and child.stdin is not None
    try:
        path = (await child.stdout.readline()).decode().strip()
        async with DgtDriver(DgtOptions(port=path)) as driver:
            async with asyncio.timeout(10):
                async for event in driver.events():
                    if isinstance(event, ClockReading):
                        break
            await asyncio.sleep(1.0)  # let the start-up answers settle
            cpu0, wall0 = time.process_time(), time.monotonic()
            received0 = driver.counters["messages"]
            await asyncio.sleep(seconds)
            cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
            received = driver.counters["messages"] - received0
        print(f"idle connected driver: {cpu * 1e3:.1f} ms CPU in {wall:.1f} s = {100 * cpu / wall:.3f} % of a core"
              f" ({received} messages received meanwhile: keep-alive answers)")
    finally:
        child.stdin.write(b"\n")
        await child.stdin.drain()
        try:
            async with asyncio.timeout(5):
                await child.wait()
        except TimeoutError:
            child.kill()
            await child.wait()


def main() -> None:
    """Run the benchmarks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    bench_codec()
    from bench.bench_drivers_other import bench_all as bench_other_codecs  # Millennium, Certabo, Chessnut, DGT 3000

    bench_other_codecs()
    asyncio.run(bench_latency())
    asyncio.run(bench_idle(args.idle_seconds))


if __name__ == "__main__":
    main()
