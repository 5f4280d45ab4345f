"""Capture files: JSON Lines and raw binary, replayed as events; ``boardd record`` against the emulator."""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import logging
import math
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import chess
import chess.pgn
import pytest

import drivers.record
from boardd.core.engine import Engine
from boardd.core.errors import BoarddError
from boardd.core.events import (
    BoardEvent,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    GameInfo,
    Link,
    LinkChanged,
    NewGame,
    SquareChanged,
)
from drivers.base import BoardDriver
from drivers.capture import CaptureError, CaptureWriter, events_from_capture, read_capture
from drivers.dgt import DgtOptions
from drivers.dgt.codec import ClockTimes, Command, FieldUpdate, encode_message
from drivers.dgt.emulator import DgtEmulator, Mode
from drivers.dgt.mapping import code_from_content, square_to_field
from drivers.millennium.codec import frame as millennium_frame
from drivers.record import configure_parser as configure_record
from drivers.record import record
from drivers.record import run as run_record
from tests.drivers.test_dgt_codec import START_DUMP, h
from tests.drivers.test_dgt_driver import eventually
from tests.drivers.test_millennium_codec import START as MILLENNIUM_START

#: A game start as the real capture 1.inbytes has it: dump, clock stopped, White starts, 1.e4, press.
RAW_GAME = (
    START_DUMP
    + h("8d 00 0a 20 03 02 20 03 02 08")  # stopped, left to move
    + h("8d 00 0a 20 03 02 20 03 01 09")  # left running
    + h("8e 00 05 34 00  8e 00 05 24 01")  # e2 empty, e4 white pawn
    + h("8d 00 0a 20 03 02 20 03 01 13")  # pressed: right running
)


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_writer_and_reader_round_trip(tmp_path: Path) -> None:
    clock = FakeTime()
    stream = io.StringIO()
    writer = CaptureWriter(stream, family="dgt", port="/dev/ttyACM0", time_source=clock)
    clock.now += 0.5
    writer("tx", h("4b 4d 42"))
    clock.now += 0.25
    writer("rx", START_DUMP)
    clock.now += 1.0
    writer.link(False)
    clock.now += 1.0
    writer.link(True)
    writer("rx", h("8e 00 05 34 00"))
    path = tmp_path / "c.jsonl"
    path.write_text(stream.getvalue())
    first = json.loads(stream.getvalue().splitlines()[0])
    assert first == {"t": 0.0, "capture": "dgt", "port": "/dev/ttyACM0", "v": 1}
    records = list(read_capture(path))
    assert [(r.t, r.direction, r.data) for r in records] == [
        (0.5, "tx", h("4b 4d 42")), (0.75, "rx", START_DUMP), (1.75, "link-down", b""), (2.75, "link-up", b""),
        (2.75, "rx", h("8e 00 05 34 00"))]
    events = list(events_from_capture(path, "dgt"))
    assert events[0] == LinkChanged(at=0.75, link=Link.BOARD, up=True, detail="capture")
    assert isinstance(events[1], BoardSnapshot) and events[1].at == 0.75
    assert events[2] == LinkChanged(at=1.75, link=Link.BOARD, up=False, detail="capture")
    assert events[3] == LinkChanged(at=2.75, link=Link.BOARD, up=True, detail="capture")
    assert events[4] == SquareChanged(at=2.75, square=chess.E2, content=None)


@pytest.mark.parametrize("encoding", ["binary", "base64 lines"])
def test_raw_capture_gets_synthetic_times_in_byte_order(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "game.inbytes"
    if encoding == "binary":
        path.write_bytes(RAW_GAME)
    else:
        path.write_bytes(b"\n".join(base64.b64encode(RAW_GAME[i:i + 57]) for i in range(0, len(RAW_GAME), 57)))
    events = list(events_from_capture(path, "dgt"))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["LinkChanged", "BoardSnapshot", "LinkChanged", "ClockReading", "ClockReading",
                     "SquareChanged", "SquareChanged", "ClockReading"]
    times = [e.at for e in events]
    assert times == sorted(times)
    squares = [e for e in events if isinstance(e, SquareChanged)]
    press = events[-1]
    assert isinstance(press, ClockReading) and press.running is ClockSide.RIGHT
    # the move settles (T_settle = 0.4 s) before the press completes it; one scan holds both reports
    assert press.at - squares[-1].at >= 0.4
    assert squares[1].at - squares[0].at <= 0.25


def test_bad_lines_and_time_going_backwards_are_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([
        '{"t": 0.0, "capture": "dgt", "v": 1}',
        '{"t": 1.0, "rx": "8e 00 05 34 00"}',
        'not json',
        '{"t": "soon", "rx": "00"}',
        '{"t": 2.0, "rx": "zz"}',
        '{"t": 3.0}',
        '{"t": 0.5, "rx": "8e 00 05 24 01"}',
        '',
    ]))
    stats: Counter[str] = Counter()
    with caplog.at_level(logging.WARNING):
        events = list(events_from_capture(path, "dgt", stats=stats))
    assert stats == Counter({"bad_lines": 4, "time_backwards": 1})
    assert [e.at for e in events] == [1.0, 1.0, 1.0]
    assert any(":3:" in r.getMessage() for r in caplog.records)


def _json_record(line: str) -> object:
    """What the JSON path of ``_parse_line`` makes of *line* (the reference for its fast path)."""
    obj = json.loads(line)
    t = obj["t"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        return "bad time"
    for direction in ("rx", "tx"):
        if direction in obj:
            return (float(t), direction, bytes.fromhex(obj[direction]))
    return "other"


@pytest.mark.parametrize("line", [
    '{"t": 0.634, "rx": "93 00 05 03 0a"}', '{"t": 12, "tx": "4b"}', '{"t": 0, "rx": ""}',
    '{"t": -0.5, "rx": "8e0005"}', '{"t": 1e3, "rx": "AB cd"}', '{"t": 1.5E-2, "tx": "45 55"}',
    '{"t": 123456789012345678901234567890, "rx": "00"}', '{"t": 1e400, "rx": "00"}',
    '{"t":1.0,"rx":"00"}', '{"rx": "00", "t": 1.0}', '{"t": 1.0, "rx": "\u0030\u0030"}',
    '{"t": 1.0, "rx": "00", "tx": "01"}', '{"t": 01.0, "rx": "00"}', '{"t": 1., "rx": "00"}',
    '{"t": 1.0, "rx": "0"}', '{"t": 1.0, "rx": "zz"}', '{"t": true, "rx": "00"}', '{"t": 1.0, "rx": "00"} ',
])
def test_the_fast_line_reader_reads_what_the_json_reader_reads(line: str) -> None:
    """A data line is read without the JSON parser when it has the shape ``boardd record`` writes; what it
    reads must be what ``json.loads`` reads, and any other line must still go through ``json.loads``."""
    from drivers.capture import _DATA_LINE, _parse_line

    try:
        expected = _json_record(line)
    except ValueError as exc:   # not JSON, or the hex does not decode
        expected = type(exc)
    try:
        record = _parse_line(line)
        got: object = record if record is not None else "other"
    except ValueError as exc:
        got = "bad time" if "bad time" in str(exc) else type(exc)
    assert got == expected
    if line in ('{"t": 0.634, "rx": "93 00 05 03 0a"}', '{"t": 12, "tx": "4b"}'):
        assert _DATA_LINE.fullmatch(line) is not None   # the shape written is the shape read fast


def test_unknown_family_and_missing_file_are_errors(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="no capture codec"):
        list(events_from_capture(tmp_path / "x", "telepathy"))
    with pytest.raises(CaptureError, match="cannot read"):
        list(events_from_capture(tmp_path / "missing.jsonl", "dgt"))


async def test_record_then_replay_gives_the_live_events(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    async with DgtEmulator(scan_interval=0.02) as emu:
        emu.set_clock(60, 60)
        stop = asyncio.Event()
        with out.open("w") as stream:
            task = asyncio.create_task(record(emu.path, stream, stop=stop))
            await eventually(lambda: emu.mode == Mode.UPDATE_NICE)
            emu.start(ClockSide.LEFT)
            emu.move(chess.E2, chess.E4)
            await emu.wait_scan(2)
            emu.press(ClockSide.LEFT)
            await emu.wait_scan(3)
            emu.unplug()
            await asyncio.sleep(0.2)
            emu.replug()
            await eventually(lambda: emu.mode == Mode.UPDATE_NICE and Command.SEND_BRD in emu.received[-6:])
            await asyncio.sleep(0.2)
            stop.set()
            counts = await task
    assert counts["rx_bytes"] > 0 and counts["tx_bytes"] > 0 and counts["disconnects"] == 1
    events = list(events_from_capture(out, "dgt"))
    links = [(e.link, e.up) for e in events if isinstance(e, LinkChanged) and e.link is Link.BOARD]
    assert links == [(Link.BOARD, True), (Link.BOARD, False), (Link.BOARD, True)]
    moved = [(chess.square_name(e.square), e.content) for e in events if isinstance(e, SquareChanged)]
    assert sorted(moved, key=lambda m: m[0]) == [("e2", None), ("e4", chess.Piece(chess.PAWN, chess.WHITE))]
    snapshots = [e for e in events if isinstance(e, BoardSnapshot)]
    assert len(snapshots) >= 2
    after = chess.BaseBoard()
    after.remove_piece_at(chess.E2)
    after.set_piece_at(chess.E4, chess.Piece(chess.PAWN, chess.WHITE))
    assert snapshots[-1].placement() == BoardSnapshot.from_board(after, at=0).placement()
    assert any(isinstance(e, ClockReading) and e.running is ClockSide.RIGHT for e in events)


def raw_capture_of(game: chess.pgn.Game) -> bytes:
    """The bytes a DGT board sends for *game* in UPDATE_NICE mode, without any time information."""
    board = game.board()
    left = right = 5400
    out = [START_DUMP, encode_message(ClockTimes(right_s=right, left_s=left, right_flags=0, left_flags=0,
                                                 status=0x09))]  # White's (left) time runs
    for ply, move in enumerate(game.mainline_moves()):
        before = board.piece_map()
        board.push(move)
        after = board.piece_map()
        changed = sorted(set(before) | set(after), key=lambda sq: (after.get(sq) is None, sq))  # new before old
        for square in changed:
            if before.get(square) != after.get(square):
                out.append(encode_message(FieldUpdate(field=square_to_field(square),
                                                      code=code_from_content(after.get(square)))))
        if ply % 2 == 0:
            left -= 3
        else:
            right -= 3
        status = 0x13 if board.turn == chess.BLACK else 0x09  # the lever: the side to move runs
        out.append(encode_message(ClockTimes(right_s=right, left_s=left, right_flags=0, left_flags=0, status=status)))
    return b"".join(out)


def test_raw_capture_of_a_whole_game_replays_through_the_engine(tmp_path: Path, pgn_dir: Path) -> None:
    """Synthetic times must keep each move settled before its press: the engine gets every move."""
    with (pgn_dir / "kasparov-deep-blue-1997.pgn").open(encoding="utf-8") as stream:
        game = chess.pgn.read_game(stream)
    assert game is not None
    path = tmp_path / "game.bin"
    path.write_bytes(raw_capture_of(game))
    engine = Engine()
    engine.feed(NewGame(at=0.0, game=GameInfo(time_control="5400")))
    last = 0.0
    for event in events_from_capture(path, "dgt"):
        engine.feed(event)
        last = event.at
    engine.advance(last + 5.0)
    record = engine.state.moves
    assert [m.uci for m in record] == [m.uci() for m in game.mainline_moves()]
    assert all(m.completion is not None for m in record)


@pytest.fixture
def emulator_process(tmp_path: Path) -> Iterator[str]:
    """``python -m drivers.dgt.emulator`` in a child process; yields the device path it prints."""
    child = subprocess.Popen([sys.executable, "-m", "drivers.dgt.emulator", "--directory", str(tmp_path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2])
    try:
        assert child.stdout is not None
        yield child.stdout.readline().strip()
    finally:
        child.terminate()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def test_record_command_writes_a_replayable_capture(emulator_process: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.jsonl"
    parser = argparse.ArgumentParser()
    configure_record(parser)
    args = parser.parse_args(["--port", emulator_process, "-o", str(out), "--duration", "1.0"])
    assert run_record(args) == 0
    assert "recorded rx_bytes=" in capsys.readouterr().err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["capture"] == "dgt" and lines[0]["port"] == emulator_process
    assert {"tx": lines[1]["tx"]} == {"tx": "4b 4d 49 42 45 55 2b 03 03 09 00"}
    events = list(events_from_capture(out, "dgt"))
    assert isinstance(events[0], LinkChanged) and events[0].up
    snapshot = next(e for e in events if isinstance(e, BoardSnapshot))
    assert snapshot.placement() == BoardSnapshot.from_board(chess.BaseBoard(), at=0).placement()


def test_record_command_reports_a_bad_output_path(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    configure_record(parser)
    args = parser.parse_args(["--port", "/dev/null", "-o", str(tmp_path / "no" / "such" / "dir.jsonl")])
    assert run_record(args) == 2


async def test_record_refuses_a_family_without_a_tap(monkeypatch: pytest.MonkeyPatch) -> None:
    from drivers import base

    monkeypatch.setitem(base._REGISTRY, base.DriverKind.MILLENNIUM, "drivers.dgt.mapping")  # no create_driver
    monkeypatch.setattr("drivers.dgt.mapping.Options", DgtOptions, raising=False)
    with pytest.raises(BoarddError, match="not supported"):
        await record("/dev/null", io.StringIO(), driver="millennium", duration=0.1)


def tee_recorded_events(monkeypatch: pytest.MonkeyPatch) -> list[BoardEvent]:
    """The events ``record()``'s driver emits live, in order (its ``events()`` teed into the list)."""
    live: list[BoardEvent] = []
    recording_driver = drivers.record._recording_driver

    def teeing(kind: str, port: str, writer: CaptureWriter) -> BoardDriver:
        driver = recording_driver(kind, port, writer)
        events = driver.events

        async def tee() -> AsyncIterator[BoardEvent]:
            async for event in events():
                live.append(event)
                yield event

        driver.events = tee  # type: ignore[method-assign]
        return driver

    monkeypatch.setattr(drivers.record, "_recording_driver", teeing)
    return live


def links(events: list[BoardEvent]) -> list[tuple[Link, bool]]:
    return [(e.link, e.up) for e in events if isinstance(e, LinkChanged)]


async def test_recorded_board_link_loss_replays_the_clock_link_it_takes_down(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock hangs on the board's jack: when the board link drops, the driver reports the clock
    down too, and up again at its first reading after the reconnection. The replay must say the same."""
    live = tee_recorded_events(monkeypatch)
    out = tmp_path / "rec.jsonl"
    async with DgtEmulator(scan_interval=0.02) as emu:
        emu.set_clock(60, 60)
        stop = asyncio.Event()
        with out.open("w") as stream:
            task = asyncio.create_task(record(emu.path, stream, stop=stop))
            await eventually(lambda: (Link.CLOCK, True) in links(live))
            emu.start(ClockSide.LEFT)
            await emu.wait_scan(3)
            emu.unplug()
            await eventually(lambda: (Link.CLOCK, False) in links(live))
            emu.replug()
            await eventually(lambda: links(live).count((Link.CLOCK, True)) == 2)
            stop.set()
            await task
    assert links(live) == [(Link.BOARD, True), (Link.CLOCK, True), (Link.BOARD, False), (Link.CLOCK, False),
                           (Link.BOARD, True), (Link.CLOCK, True)]
    assert links(list(events_from_capture(out, "dgt"))) == links(live)


def test_a_link_line_resets_what_the_driver_resets_per_connection(tmp_path: Path) -> None:
    """After a recorded reconnection the replay starts afresh, as the driver's new connection does:
    a partial message cut by the link loss is dropped (not glued to the next bytes), and a board
    reporting the same position again is reported again (the engine reconciles with it)."""
    report = millennium_frame("s" + MILLENNIUM_START)
    lines = [{"t": 0.0, "capture": "millennium", "v": 1}, {"t": 0.5, "rx": report.hex(" ")},
             {"t": 1.0, "rx": report[:5].hex(" ")}, {"t": 1.5, "link": "down"}, {"t": 2.5, "link": "up"},
             {"t": 3.0, "rx": report.hex(" ")}]
    path = tmp_path / "reconnect.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    events = list(events_from_capture(path, "millennium"))
    assert [(type(e).__name__, e.at) for e in events if isinstance(e, (BoardSnapshot, LinkChanged))] == [
        ("LinkChanged", 0.5), ("BoardSnapshot", 0.5), ("LinkChanged", 1.5), ("LinkChanged", 2.5),
        ("BoardSnapshot", 3.0)]
    first, last = [e for e in events if isinstance(e, BoardSnapshot)]
    assert last.squares == first.squares == BoardSnapshot.from_board(chess.BaseBoard(), at=0).squares
