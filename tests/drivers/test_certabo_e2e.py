"""Certabo end to end: emulated RFID board on a real pty -> shared transport -> driver -> engine.

Same time scaling as the Millennium tests (``SCALE`` x wall clock; a 20 ms emulator line is
0.2 s of game time). The per-square majority filter of the driver (3 frames) is on.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import chess
import pytest

from boardd.core.events import BoardSnapshot, GameInfo, LinkChanged, Marker
from drivers.base import DriverKind, open_driver
from drivers.certabo import CertaboDriver, CertaboOptions
from drivers.certabo.codec import Calibration
from drivers.certabo.emulator import CertaboEmulator
from drivers.millennium.pty_emulator import PtyBoardEmulator
from drivers.sim import load_pgn_game
from tests.drivers.test_millennium_e2e import (
    PROMOTION,
    SCAN,
    SCRIPT,
    expect_back_with,
    expect_dump_on_request,
    game_of,
    game_time,
    problems,
    run_through_engine,
)


def options(emu: CertaboEmulator, **kwargs: object) -> CertaboOptions:
    return CertaboOptions(port=emu.path, reconnect_initial_s=0.05, reconnect_max_s=0.2, **kwargs)  # type: ignore[arg-type]


async def test_auto_calibration_then_captures_and_castling(tmp_path: Path) -> None:
    moves = SCRIPT.split()
    cal_file = tmp_path / "certabo.json"
    async with CertaboEmulator(scan_interval=SCAN) as emu:
        driver = CertaboDriver(options(emu, calibration=str(cal_file), calibration_samples=5),
                               time_source=game_time)

        async def script(board: PtyBoardEmulator) -> None:
            assert await board.play(game_of(SCRIPT), think_scans=5) == len(moves)

        engine, outputs, _seen = await run_through_engine(emu, driver, script, GameInfo(time_control="5400"))
    assert [m.uci for m in engine.state.moves] == moves
    assert all(m.legal for m in engine.state.moves)
    assert problems(outputs) == []
    assert driver.counters["uncalibrated_frames"] >= 4  # the calibration frames emitted nothing
    saved = json.loads(cal_file.read_text())
    assert len(saved["pieces"]) == 32
    assert Calibration.load(cal_file).pieces == {c: p for c, p in emu.calibration().pieces.items()
                                                 if c in Calibration.load(cal_file).pieces}
    assert emu.stats["led_frames"] == 1 and emu.leds == bytes(8)  # LEDs off after opening


@pytest.mark.parametrize("noise", [0.0, 0.02])
async def test_promotion_with_a_saved_calibration_and_noisy_chips(tmp_path: Path, noise: float) -> None:
    moves = PROMOTION.split()
    async with CertaboEmulator(scan_interval=SCAN, noise=noise, seed=3) as emu:
        cal_file = tmp_path / "certabo.json"
        emu.calibration().dump(cal_file)  # calibrated once with the extra queens, as picochess does
        driver = CertaboDriver(options(emu, calibration=str(cal_file)), time_source=game_time)

        async def script(board: PtyBoardEmulator) -> None:
            assert await board.play(game_of(PROMOTION), think_scans=6) == len(moves)

        engine, outputs, _ = await run_through_engine(emu, driver, script, GameInfo(time_control="5400"))
    assert [m.uci for m in engine.state.moves] == moves
    assert problems(outputs) == []
    if noise:
        assert emu.stats["noisy_reads"] > 0


async def test_uncalibrated_chip_is_unknown_never_an_invented_piece() -> None:
    async with CertaboEmulator(scan_interval=SCAN) as emu, \
            CertaboDriver(options(emu, history=1), time_source=game_time, calibration=emu.calibration()) as driver:
        events = driver.events()
        assert isinstance(await asyncio.wait_for(anext(events), 5), LinkChanged)
        assert isinstance(await asyncio.wait_for(anext(events), 5), BoardSnapshot)
        # Two more white queens: the set has one extra queen, the third one's chip is in no calibration.
        emu.place(chess.D4, chess.Piece(chess.QUEEN, chess.WHITE))
        emu.place(chess.E4, chess.Piece(chess.QUEEN, chess.WHITE))
        snap = await asyncio.wait_for(anext(events), 5)
        assert isinstance(snap, BoardSnapshot)
        contents = [snap.squares[sq] for sq in (chess.D1, chess.D4, chess.E4)]
        assert contents.count(Marker.UNKNOWN) == 1
        assert contents.count(chess.Piece(chess.QUEEN, chess.WHITE)) == 2
        assert driver.counters["unknown_chips"] >= 1


async def test_unplug_replug_and_dump_on_request() -> None:
    async with CertaboEmulator(scan_interval=SCAN) as emu, \
            CertaboDriver(options(emu, history=1), time_source=game_time, calibration=emu.calibration()) as driver:
        events = driver.events()
        assert isinstance(await asyncio.wait_for(anext(events), 5), LinkChanged)
        first = await asyncio.wait_for(anext(events), 5)
        assert isinstance(first, BoardSnapshot)
        emu.unplug()
        down = await asyncio.wait_for(anext(events), 5)
        assert isinstance(down, LinkChanged) and not down.up
        emu.move(chess.G1, chess.F3)
        emu.replug()
        snap = await expect_back_with(events, chess.F3, chess.Piece(chess.KNIGHT, True))
        await expect_dump_on_request(events, driver, snap)


async def test_registry_opens_certabo_and_bad_calibration_file_is_a_config_error(tmp_path: Path) -> None:
    driver = open_driver(DriverKind.CERTABO, {"port": str(tmp_path / "none"), "reconnect_initial_s": 0.05})
    assert isinstance(driver, CertaboDriver)
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    with pytest.raises(Exception, match="calibration"):
        CertaboDriver(CertaboOptions(port="x", calibration=str(bad)))


@pytest.mark.slow
async def test_full_game_with_noisy_chips_reaches_the_record(pgn_dir: Path) -> None:
    game = load_pgn_game(pgn_dir / "tatamast22.pgn", 73)  # Mamedyarov-Karjakin 2022: both castle, en passant
    moves = [m.uci() for m in game.mainline_moves()]
    async with CertaboEmulator(scan_interval=SCAN, noise=0.01, seed=5) as emu:
        # 1 % misreads per chip and line: a 5-frame majority (3 of 5 agree) keeps them out.
        driver = CertaboDriver(options(emu, history=5), time_source=game_time, calibration=emu.calibration())

        async def script(board: PtyBoardEmulator) -> None:
            assert await board.play(game, think_scans=6) == len(moves)

        engine, outputs, _ = await run_through_engine(emu, driver, script, GameInfo(time_control="5400"))
    assert [m.uci for m in engine.state.moves] == moves
    assert problems(outputs) == []


async def test_recorded_capture_calibrates_and_replays_the_moves(tmp_path: Path) -> None:
    from drivers.capture import CaptureWriter, events_from_capture

    path = tmp_path / "certabo.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        writer = CaptureWriter(stream, family="certabo", port="pty")
        async with CertaboEmulator(scan_interval=SCAN) as emu, \
                CertaboDriver(options(emu), time_source=game_time, tap=writer) as driver:
            events = driver.events()
            assert isinstance(await asyncio.wait_for(anext(events), 5), LinkChanged)
            assert isinstance(await asyncio.wait_for(anext(events), 5), BoardSnapshot)  # after 7 calibration frames
            await emu.play(game_of("e2e4 e7e5"), think_scans=4)
            final = emu.reading()
    snaps = [e for e in events_from_capture(path, "certabo") if isinstance(e, BoardSnapshot)]
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    assert snaps[0].placement() == BoardSnapshot.from_board(chess.Board(), at=0).placement()
    assert snaps[-1].placement() == BoardSnapshot.from_board(board, at=0).placement()
    assert sum(c is not None for c in final) == 32


async def test_events_end_when_the_driver_stops() -> None:
    async with CertaboEmulator(scan_interval=SCAN) as emu:
        driver = CertaboDriver(options(emu), time_source=game_time, calibration=emu.calibration())
        async with driver:
            events = driver.events()
            assert isinstance(await asyncio.wait_for(anext(events), 5), LinkChanged)
        async with asyncio.timeout(5):  # what was queued, then the end (no hang)
            rest = [e async for e in events]
        assert all(isinstance(e, (LinkChanged, BoardSnapshot)) for e in rest)
