"""Whole games on the emulated DGT board through the real driver into the engine.

Bytes go through a pty, pyserial, the codec and the mapping, and the engine must
recognise exactly the game's moves, with the clock times the emulated clock showed
at each press, across an unplug/replug in the middle of the game.

Time runs ``SCALE`` times faster than the wall clock for the emulator's clock, the
driver's time stamps and the engine alike (all take a time source), so a DGT scan
of 0.2 s game time takes 0.04 s here; the engine's timing parameters are untouched.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.engine import Engine
from boardd.core.events import GameInfo, NewGame
from boardd.core.outputs import IrregularityRaised, Output, Severity
from drivers.dgt import DgtDriver, DgtOptions
from drivers.dgt.emulator import DgtEmulator
from drivers.sim import load_pgn_game, simulate_game

SCALE = 5.0


def game_time() -> float:
    return time.monotonic() * SCALE


def annotate_clocks(game: chess.pgn.Game, start: float = 5400.0) -> list[float]:
    """Give every move a ``%clk`` (whole seconds, as a clock shows): what the mover presses with."""
    remaining = {chess.WHITE: start, chess.BLACK: start}
    clocks: list[float] = []
    for ply, node in enumerate(game.mainline()):
        mover = not node.board().turn
        remaining[mover] -= 7 + (ply * 13) % 29
        node.set_clock(remaining[mover])
        clocks.append(remaining[mover])
    return clocks


Script = Callable[[DgtEmulator], Awaitable[None]]


async def through_engine(script: Script, game_info: GameInfo) -> tuple[Engine, list[Output], DgtDriver]:
    """Run *script* on the emulator while the real driver feeds the engine (in game time)."""
    engine = Engine()
    outputs: list[Output] = []
    fen = chess.Board(game_info.start_fen, chess960=game_info.chess960).board_fen() if game_info.start_fen \
        else chess.STARTING_BOARD_FEN
    async with DgtEmulator(scan_interval=0.2 / SCALE, seed=11, time_source=game_time, fen=fen) as emu:
        emu.set_clock(5400, 5400)
        options = DgtOptions(port=emu.path, settle_dump_s=0.3 / SCALE, periodic_dump_s=0,
                             reconnect_initial_s=0.05, reconnect_max_s=0.2)
        async with DgtDriver(options, time_source=game_time) as driver:
            outputs += engine.feed(NewGame(at=game_time(), game=game_info))
            events = driver.events()

            async def pump() -> None:
                while True:
                    deadline = engine.next_deadline()
                    wait = None if deadline is None else max(0.0, deadline - game_time()) / SCALE
                    try:
                        async with asyncio.timeout(wait):
                            event = await anext(events)
                    except TimeoutError:
                        # Fire what was due, at its due time: an event stamped just before the deadline
                        # may still be on its way, and must not find the engine already later than itself.
                        assert deadline is not None
                        outputs.extend(engine.advance(deadline))
                        continue
                    outputs.extend(engine.feed(event))

            pumping = asyncio.create_task(pump())
            try:
                assert await emu.wait_host(100)
                await emu.wait_scan(3)
                await script(emu)
                await emu.wait_scan(10)
            finally:
                pumping.cancel()
    return engine, outputs, driver


def problems(outputs: list[Output]) -> list[str]:
    """Everything raised that is not mere information: code, subtype, ply and evidence."""
    raised = [o.irregularity for o in outputs if isinstance(o, IrregularityRaised)]
    return [f"{i.code}/{i.subtype} ply {i.ply}: {[e.event for e in i.evidence]}"
            for i in raised if i.severity is not Severity.INFO]


@pytest.mark.slow
@pytest.mark.parametrize(("file", "index", "what"), [
    ("tatamast22.pgn", 72, "Mamedyarov-Karjakin 2022: 46 plies, both castle, en passant"),
    ("London1851.pgn", 104, "Ranken-Boden 1851: 42 plies, both castle, a promotion"),
])
async def test_full_game_with_unplug_reaches_the_record(pgn_dir: Path, file: str, index: int, what: str) -> None:
    game = load_pgn_game(pgn_dir / file, index + 1)
    clocks = annotate_clocks(game)
    moves = [m.uci() for m in game.mainline_moves()]

    async def script(emu: DgtEmulator) -> None:
        plies = await emu.play(game, think_scans=3, pause_scans=4, unplug_at_ply=[len(moves) // 2])
        assert plies == len(moves)
        assert emu.stats["unplugs"] == 1 and emu.stats["replugs"] == 1

    engine, outputs, driver = await through_engine(script, GameInfo(time_control="5400"))
    record = engine.state.moves
    assert [m.uci for m in record] == moves, what
    assert all(m.legal and m.completed_at is not None for m in record)
    # The clock of the mover at each completed move is what the clock showed after the press.
    shown = [m.clock_white if m.side == chess.WHITE else m.clock_black for m in record]
    assert shown == clocks
    # Nothing but information (a draw claim becomes available in a repetition, for instance).
    assert problems(outputs) == []
    counters = driver.counters
    assert counters["disconnects"] == 1 and counters["connects"] == 2
    assert counters["discarded_bytes"] == 0 and counters["invalid_frames"] == 0


@pytest.mark.slow
async def test_simulated_human_handling_acted_out_on_the_emulated_board(pgn_dir: Path) -> None:
    """drivers.sim's events (casual hands: hesitations, adjustments) played physically on the emulated board."""
    game = load_pgn_game(pgn_dir / "molinari-bordais-1979.pgn")
    simulated = simulate_game(game, seed=4, profile="casual", think_median=2.0)
    new_game = next(e for e in simulated.events if isinstance(e, NewGame))

    async def script(emu: DgtEmulator) -> None:
        assert await emu.perform(simulated.events, speed=SCALE) > len(simulated.moves)

    engine, outputs, _driver = await through_engine(script, new_game.game)
    assert [m.uci for m in engine.state.moves] == simulated.moves
    assert problems(outputs) == []


@pytest.mark.slow
async def test_chess960_castlings_on_the_emulated_board(pgn_dir: Path) -> None:
    """Chess960 castlings as the sensors see them: 9...O-O puts the king where the rook stood
    (g8: a replacement, never empty) and 21.O-O-O leaves the rook on d1 (only e1 and c1 change)."""
    full = load_pgn_game(pgn_dir / "cutechess-fischerrandom.pgn")
    board = full.board()
    for move in list(full.mainline_moves())[:42]:
        board.push(move)
    game = chess.pgn.Game.from_board(board)
    start = full.board()
    replay = start.copy()
    castlings = []
    for ply, move in enumerate(game.mainline_moves()):
        if replay.is_castling(move):
            castlings.append(ply)
        replay.push(move)
    assert start.chess960 and castlings == [17, 40]
    moves = [m.uci() for m in game.mainline_moves()]
    info = GameInfo(time_control="5400", start_fen=start.fen(), chess960=True)

    async def script(emu: DgtEmulator) -> None:
        assert await emu.play(game, think_scans=3, pause_scans=4) == len(moves)

    engine, outputs, _driver = await through_engine(script, info)
    assert [m.uci for m in engine.state.moves] == moves
    assert problems(outputs) == []
