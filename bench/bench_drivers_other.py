"""Codec throughput of the other board families: ``python -m bench.bench_drivers_other`` prints figures.

For each family a realistic stream (a game's positions, as the board reports them, with the
family's other messages mixed in) is fed to the pure decoder in 32-byte chunks (per report for
Chessnut USB and DGT 3000 I²C, which deliver one message per transfer), then decoded and
mapped to 64-square readings / clock readings. Best of 5 runs; nothing is asserted.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from boardd.core.events import BoardSnapshot, ClockSide, Content
from drivers.certabo import CertaboDriver, CertaboOptions
from drivers.certabo.codec import Calibration, CertaboDecoder, CertaboMapper, encode_frame
from drivers.certabo.emulator import CertaboEmulator
from drivers.chessnut.codec import ChessnutDecoder, encode_battery
from drivers.chessnut.codec import encode_frame as chessnut_frame
from drivers.dgt3000_i2c.codec import BUTTON_LEVER, Button, Dgt3000Decoder, Time, encode_message
from drivers.dgt3000_i2c.mapping import Dgt3000Mapper
from drivers.millennium import MillenniumDriver, MillenniumOptions
from drivers.millennium.codec import EepromReply, MillenniumDecoder, Status, Version, status_from_snapshot
from drivers.millennium.codec import encode_message as millennium_message
from drivers.millennium.emulator import MillenniumEmulator
from drivers.millennium.pty_emulator import PtyBoardEmulator

PGN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pgn" / "tatamast22.pgn"


def _positions(games: int = 20) -> list[tuple[Content, ...]]:
    """Every position (and the lifted-piece position in between) of the first *games* games."""
    positions: list[tuple[Content, ...]] = []
    with PGN.open(encoding="utf-8") as stream:
        for _ in range(games):
            game = chess.pgn.read_game(stream)
            if game is None:
                break
            board = game.board()
            for move in game.mainline_moves():
                lifted = board.copy()
                lifted.remove_piece_at(move.from_square)
                positions.append(BoardSnapshot.from_board(lifted, at=0).squares)
                board.push(move)
                positions.append(BoardSnapshot.from_board(board, at=0).squares)
    return positions


def _chunks(data: bytes, size: int = 32) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def _best(run: Callable[[], int], expected: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        count = run()
        best = min(best, time.perf_counter() - start)
        assert count == expected, (count, expected)
    return best


def _report(name: str, count: int, size: int, decode_s: float, map_s: float) -> None:
    print(f"{name}: {count} messages, {size} bytes (best of 5)")
    print(f"  decode:         {count / decode_s:12,.0f} messages/s  ({size / decode_s / 1e6:.2f} MB/s)")
    print(f"  decode + map:   {count / map_s:12,.0f} messages/s")


def bench_millennium(positions: list[tuple[Content, ...]]) -> None:
    parts = []
    for n, squares in enumerate(positions):
        parts.append(millennium_message(status_from_snapshot(BoardSnapshot(at=0, squares=squares))))
        if n % 50 == 0:
            parts += [millennium_message(Version(1, 3)), millennium_message(EepromReply(True, 2, 3))]
    data = b"".join(parts)
    chunks = _chunks(data)

    def decode() -> int:
        decoder = MillenniumDecoder()
        return sum(len(decoder.feed(c)) for c in chunks)

    def decode_map() -> int:
        decoder = MillenniumDecoder()
        count = 0
        for chunk in chunks:
            for message in decoder.feed(chunk):
                count += 1
                if isinstance(message, Status):
                    message.squares()
        return count

    _report("millennium", len(parts), len(data), _best(decode, len(parts)), _best(decode_map, len(parts)))


def bench_certabo(positions: list[tuple[Content, ...]]) -> None:
    emu = CertaboEmulator()
    lines = []
    for squares in positions:
        emu.physical = list(squares)
        lines.append(encode_frame(emu.reading()))
    data = b"".join(lines)
    chunks = _chunks(data)
    calibration: Calibration = emu.calibration()

    def decode() -> int:
        decoder = CertaboDecoder()
        return sum(len(decoder.feed(c)) for c in chunks)

    def decode_map() -> int:
        decoder, mapper = CertaboDecoder(), CertaboMapper(calibration, history=3)
        count = 0
        for chunk in chunks:
            for message in decoder.feed(chunk):
                count += 1
                mapper.squares(message)
        return count

    _report("certabo (with 3-frame majority)", len(lines), len(data), _best(decode, len(lines)),
            _best(decode_map, len(lines)))


def bench_chessnut(positions: list[tuple[Content, ...]]) -> None:
    reports = [chessnut_frame(squares, usb=True) for squares in positions]
    reports += [encode_battery(80, False).ljust(64, b"\0")] * (len(positions) // 50)

    def decode() -> int:
        decoder = ChessnutDecoder()
        return sum(len(decoder.feed_report(r)) for r in reports)

    def decode_map() -> int:
        decoder = ChessnutDecoder()
        count = 0
        for report in reports:
            for message in decoder.feed_report(report):
                count += 1
                if hasattr(message, "squares"):
                    message.squares()
        return count

    _report("chessnut (USB reports)", len(reports), 64 * len(reports), _best(decode, len(reports)),
            _best(decode_map, len(reports)))


def bench_dgt3000(ticks: int = 20000) -> None:
    packets: list[bytes] = []
    lever = False
    for n in range(ticks):
        packets.append(encode_message(Time(30000 - n // 2, 30000 - n // 3, lever=lever)))
        if n % 7 == 0:
            previous = BUTTON_LEVER if lever else 0
            lever = not lever
            packets.append(encode_message(Button(BUTTON_LEVER if lever else 0, previous)))

    def decode() -> int:
        decoder = Dgt3000Decoder()
        return sum(len(decoder.feed_packet(p)) for p in packets)

    def decode_map() -> int:
        decoder, mapper = Dgt3000Decoder(), Dgt3000Mapper()
        mapper.note_running(ClockSide.LEFT)
        count = 0
        for at, packet in enumerate(packets):
            for message in decoder.feed_packet(packet):
                count += 1
                mapper.map(message, float(at))
        return count

    _report("dgt3000-i2c (packets)", len(packets), sum(map(len, packets)), _best(decode, len(packets)),
            _best(decode_map, len(packets)))


async def _pty_latency(make_emulator: Callable[[], PtyBoardEmulator], make_driver: Callable[[str], Any],
                       name: str, plies: int = 30) -> None:
    """Time from the emulator's last byte of a changed position to the driver's snapshot (real pty)."""
    with PGN.open(encoding="utf-8") as stream:
        game = chess.pgn.read_game(stream)
    assert game is not None
    written: dict[str, float] = {}
    latencies: list[float] = []
    async with make_emulator() as emu:
        def on_write(data: bytes) -> None:
            written.setdefault(BoardSnapshot(at=0, squares=tuple(emu.physical)).placement(), time.perf_counter())

        emu.on_write.append(on_write)
        async with make_driver(emu.path) as driver:
            events = driver.events()

            async def consume() -> None:
                async for event in events:
                    if isinstance(event, BoardSnapshot):
                        sent = written.get(event.placement())
                        if sent is not None:
                            latencies.append(time.perf_counter() - sent)

            task = asyncio.create_task(consume())
            await emu.wait_host()
            short = chess.pgn.Game.from_board(game.board())
            node: chess.pgn.GameNode = short
            for move in list(game.mainline_moves())[:plies]:
                node = node.add_variation(move)
            await emu.play(short, think_scans=2)
            await emu.wait_scan(5)
            task.cancel()
    latencies.sort()
    print(f"latency pty -> events() ({name}): n={len(latencies)}  p50={statistics.median(latencies) * 1e3:.2f} ms"
          f"  p99={latencies[int(0.99 * (len(latencies) - 1))] * 1e3:.2f} ms  max={latencies[-1] * 1e3:.2f} ms")


def bench_latency() -> None:
    """Millennium and Certabo through a real pty (emulator scans 41 ms / 100 ms)."""
    asyncio.run(_pty_latency(MillenniumEmulator, lambda path: MillenniumDriver(MillenniumOptions(port=path)),
                             "millennium, report on change"))
    certabo = CertaboEmulator(scan_interval=0.1)
    asyncio.run(_pty_latency(lambda: CertaboEmulator(scan_interval=0.1),
                             lambda path: CertaboDriver(CertaboOptions(port=path, history=1),
                                                        calibration=certabo.calibration()),
                             "certabo, majority filter off"))


def bench_all(games: int = 20) -> None:
    """Print the codec figures of Millennium, Certabo, Chessnut and DGT 3000 I²C."""
    positions = _positions(games)
    print(f"positions: {len(positions)} from {games} games of {PGN.name}")
    for bench in (bench_millennium, bench_certabo, bench_chessnut):
        bench(positions)
    bench_dgt3000()
    bench_latency()




if __name__ == "__main__":
    bench_all()
