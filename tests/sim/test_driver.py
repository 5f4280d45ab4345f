"""The simulator as a driver (paced, stamped, registry) and as ``boardd simulate``."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from boardd.cli import main
from boardd.core import eventlog
from boardd.core.errors import ConfigError, DriverError
from boardd.core.events import BoardEvent, BoardSnapshot, ClockReading, Link, LinkChanged, SquareChanged
from drivers.base import BoardDriver, ClockDisplay, RequestDump, UnsupportedCommandError, open_driver
from drivers.sim import Injection, InjectionKind, Options, SimulatedBoard, applicable, random_game, simulate_game


class FakeTime:
    """A monotonic time source the test controls: each call advances it by 1 ms."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


async def _collect(board: SimulatedBoard, limit: int) -> list[BoardEvent]:
    events: list[BoardEvent] = []
    async for event in board.events():
        events.append(event)
        if len(events) >= limit:
            break
    return events


def _connected(board: SimulatedBoard) -> bool:
    return board.info.connected


async def test_driver_delivers_the_simulated_board_events_stamped_by_the_time_source() -> None:
    clock = FakeTime()
    game = random_game(4, max_plies=6)
    options = Options(seed=4, profile="casual", tempo=2000.0)
    board = SimulatedBoard(options=options, game=game, time_source=clock)
    assert isinstance(board, BoardDriver)
    async with board:
        assert board.info.connected and board.info.driver == "sim"
        events = await _collect(board, 10_000)
    assert not _connected(board)
    assert isinstance(events[0], LinkChanged) and events[0].link is Link.BOARD and events[0].up
    expected = [e for e in simulate_game(game, seed=4, profile="casual").events
                if isinstance(e, (SquareChanged, BoardSnapshot, ClockReading))]
    delivered = events[1:]
    assert len(delivered) == len(expected)
    for got, want in zip(delivered, expected, strict=True):
        assert type(got) is type(want)
        assert got.at > 1000.0  # re-stamped on delivery by the injected source
    stamps = [e.at for e in events]
    assert stamps == sorted(stamps)
    assert board.stats["games"] == 1


async def test_driver_paces_events_by_tempo() -> None:
    game = random_game(2, max_plies=2)
    sim = simulate_game(game, seed=2, profile="clean")
    span = sim.events[-1].at - sim.events[0].at
    loop = asyncio.get_running_loop()
    async with SimulatedBoard(options=Options(seed=2, profile="clean", tempo=200.0), game=game) as board:
        start = loop.time()
        await _collect(board, 10_000)
        elapsed = loop.time() - start
    assert elapsed >= span / 200.0 * 0.9
    assert elapsed < span / 200.0 + 2.0


async def test_request_dump_gives_a_snapshot_and_other_commands_are_refused() -> None:
    game = random_game(5, max_plies=4)
    async with SimulatedBoard(options=Options(seed=5, tempo=50.0), game=game) as board:
        events = board.events()
        first = [await anext(events) for _ in range(5)]
        await board.send(RequestDump())
        after = [await anext(events) for _ in range(3)]
        with pytest.raises(UnsupportedCommandError):
            await board.send(ClockDisplay(text="hi"))
        await events.aclose()
    assert any(isinstance(e, BoardSnapshot) for e in first)
    assert isinstance(after[0], BoardSnapshot)
    assert board.stats["dumps"] == 1


async def test_loop_plays_game_after_game_and_exit_ends_the_iterator() -> None:
    async with SimulatedBoard(options=Options(seed=1, tempo=10_000.0, loop=True)) as board:
        count = 0
        async for event in board.events():
            count += 1
            if board.stats["games"] >= 2 and isinstance(event, ClockReading):
                break
    assert board.stats["games"] >= 2 and count > 100


async def test_events_need_the_context() -> None:
    board = SimulatedBoard()
    with pytest.raises(DriverError, match="context manager"):
        await anext(board.events())


def test_registry_opens_the_simulator(tmp_path: Path) -> None:
    driver = open_driver("sim", {"port": "random", "seed": 3, "profile": "clean", "tempo": 10.0})
    assert isinstance(driver, SimulatedBoard)
    assert driver.options == Options(port="random", seed=3, profile="clean", tempo=10.0)
    with pytest.raises(ConfigError, match="profile"):
        open_driver("sim", {"profile": "drunk"})
    with pytest.raises(ConfigError, match="tempo"):
        open_driver("sim", {"tempo": 0})
    with pytest.raises(ConfigError, match="KIND@PLY"):
        open_driver("sim", {"injections": ("nonsense",)})


async def test_pgn_port_reads_the_numbered_game(pgn_dir: Path) -> None:
    board = SimulatedBoard(options=Options(port=str(pgn_dir / "kasparov-deep-blue-1997.pgn"), game=6,
                                           tempo=10_000.0))
    async with board:
        events = await _collect(board, 50)
    assert len(events) == 50
    missing = SimulatedBoard(options=Options(port=str(pgn_dir / "nope.pgn")))
    async with missing:
        with pytest.raises(DriverError, match="cannot read PGN"):
            await _collect(missing, 5)


def test_cli_writes_a_self_describing_log(tmp_path: Path) -> None:
    game = random_game(9, max_plies=10)
    board = game.board()
    ply = None
    for index, move in enumerate(game.mainline_moves(), start=1):
        if applicable(InjectionKind.TOUCH_MOVE, board, move, has_next=True):
            ply = index
        board.push(move)
    assert ply is not None
    out = tmp_path / "game.jsonl"
    assert main(["simulate", "--random", "--seed", "9", "--plies", "10", "--profile", "casual",
                 "--inject", f"touch-move@{ply}", "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    header = eventlog.read_header(lines)
    assert header is not None and header.game is not None
    sim = simulate_game(game, seed=9, profile="casual", injections=[Injection(InjectionKind.TOUCH_MOVE, ply)])
    assert header == sim.header
    assert header.extra["simulator"]["expected_codes"] == [[ply, "TOUCH_MOVE_SUSPECTED"]]
    assert [event for _, event in eventlog.read_events(lines)] == sim.events


def test_cli_pgn_to_stdout(pgn_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--pgn", str(pgn_dir / "molinari-bordais-1979.pgn"), "--think", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = json.loads(lines[0])
    assert first["type"] == "header" and first["game"]["white"].startswith("Molinari")
    events = [event for _, event in eventlog.read_events(lines)]
    moves = first["simulator"]["moves"]
    assert sum(1 for a, b in itertools.pairwise(e for e in events if isinstance(e, ClockReading))
               if a.lever_high != b.lever_high) >= len(moves) - 1


def test_cli_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["simulate", "--random", "--inject", "rook-first@1"]) == 2
    assert "does not fit ply 1" in capsys.readouterr().err
    assert main(["simulate", "--pgn", str(tmp_path / "none.pgn")]) == 2
    assert "cannot read PGN" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["simulate", "--random", "--inject", "teleport@3"])
