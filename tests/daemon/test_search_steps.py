"""The restart's recovery search does not stop the daemon: it runs in steps between the loop's other work.

A restart on a game in progress: the board's dump shows 12 plies more than the journal (no board log), and the
search for them runs out of its whole node budget (150,000 positions: seconds on this machine, several times
that on a Pi). Before, that search ran within one engine call in the daemon's event loop: nothing was
published and no command answered meanwhile (a command sent then waited for the search). Now the engine does
it in steps (``Engine.work``) and the daemon yields to the loop between them: a command sent while the search
runs is answered at once, before ``MOVES_RECOVERED``; the command's event is processed after the search, in
order; the record is the one the engine gives without steps (and the journal's replay rebuilds it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import chess

from boardd.core import events as ev
from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.settings import RulesConfig
from boardd.daemon.config import load_config
from boardd.daemon.journal import Journal, Tick
from boardd.daemon.service import serve
from tests.core.test_recovery import RUY, placement, play
from tests.daemon._helpers import consumer, send_command, write_config
from tests.mosquitto import Broker


@dataclass
class _Info:
    driver: str = "fake"
    port: str = "fake"
    serial: str | None = "F-1"
    version: str | None = None
    clock_model: str | None = None
    connected: bool = True


class _Board:
    """A driver whose events the test pushes (stamped on the daemon's time line on receipt)."""

    def __init__(self, time_source: Callable[[], float]) -> None:
        self.time_source = time_source
        self.info = _Info()
        self.queue: asyncio.Queue[Callable[[float], ev.BoardEvent]] = asyncio.Queue()

    async def __aenter__(self) -> _Board:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        return None

    async def send(self, command: Any) -> None:
        return None

    async def send_confirmed(self, command: Any) -> bool:
        return True

    async def events(self) -> AsyncIterator[ev.BoardEvent]:
        while True:
            make = await self.queue.get()
            yield make(self.time_source())


def _snapshot(board: chess.Board) -> Callable[[float], ev.BoardEvent]:
    return lambda at: ev.BoardSnapshot(at=at, squares=placement(board))


async def _serve(tmp_path: Path, port: int, boards: list[_Board]) -> tuple[asyncio.Task[Any], asyncio.Event]:
    def make(_kind: str, _options: Any, *, time_source: Callable[[], float]) -> _Board:
        boards.append(_Board(time_source))
        return boards[-1]

    stop = asyncio.Event()
    cfg = load_config(write_config(tmp_path, port))
    task = asyncio.create_task(serve(cfg, stop=stop, driver_factory=make))
    return task, stop


async def _until(predicate: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def _plain_record(start: chess.Board, shown: chess.Board) -> tuple[list[str], str]:
    """The same restart through an engine without steps: the record's moves (uci) and the position."""
    engine = Engine(RulesConfig())
    engine.feed(ev.BoardSnapshot(at=0.0, squares=placement(chess.Board())))
    work = chess.Board()
    t = 1.0
    for move in start.move_stack:
        piece = work.piece_at(move.from_square)
        engine.feed(ev.SquareChanged(at=t, square=move.from_square, content=None))
        engine.feed(ev.SquareChanged(at=t + 0.2, square=move.to_square, content=piece))
        work.push(move)
        t += 1.5
    engine.advance(t + 5.0)
    engine.feed(ev.LinkChanged(at=t + 6.0, link=ev.Link.CLOCK, up=False, detail=RESTART_DETAIL))
    engine.feed(ev.LinkChanged(at=t + 6.0, link=ev.Link.BOARD, up=False, detail=RESTART_DETAIL))
    engine.feed(ev.BoardSnapshot(at=t + 10.0, squares=placement(shown)))
    for dt in (1.1, 2.0, 3.0, 40.0):
        engine.advance(t + 10.0 + dt)
    return [m.uci for m in engine.state.moves], engine.state.fen


async def _play_live(boards: list[_Board], start: chess.Board) -> None:
    """The first run's driver opened: the start position dumped, then *start*'s moves lifted and placed live."""
    await _until(lambda: bool(boards), 10, "the driver opened")
    boards[-1].queue.put_nowait(_snapshot(chess.Board()))
    work = chess.Board()
    for move in start.move_stack:
        piece = work.piece_at(move.from_square)
        boards[-1].queue.put_nowait(lambda at, m=move: ev.SquareChanged(at=at, square=m.from_square, content=None))
        boards[-1].queue.put_nowait(lambda at, m=move, p=piece: ev.SquareChanged(at=at, square=m.to_square,
                                                                                 content=p))
        work.push(move)
        await asyncio.sleep(1.5)


async def test_a_command_during_the_restart_search_is_answered_at_once(tmp_path: Path, mosquitto: Broker) -> None:
    start = play(RUY[:2])
    shown = play(RUY[:14])  # 12 plies played while the daemon was down: the search exhausts its budget
    boards: list[_Board] = []
    async with consumer(mosquitto.port) as c:
        task, stop = await _serve(tmp_path, mosquitto.port, boards)
        try:  # the first run: the game, e4 e5
            await _play_live(boards, start)
            await c.wait_for(lambda: len((c.retained.get("state") or {}).get("moves", [])) == 2, 10, "e4 e5")
        finally:
            stop.set()
            await task
        task, stop = await _serve(tmp_path, mosquitto.port, boards)
        try:  # the restart: the dump shows 12 plies more
            await _until(lambda: len(boards) == 2, 10, "the driver opened again")
            boards[-1].queue.put_nowait(_snapshot(shown))
            await asyncio.sleep(1.5)  # quiet SETTLE_S (1 s): the search has started
            sent = time.monotonic()
            result = await send_command(mosquitto.port, "t1", "set-players", {"id": "p1", "white": "W", "black": "B"})
            answered = time.monotonic() - sent
            recovered_then = [p for p in c.of("event") if p.get("type") == "MOVES_RECOVERED"]
            assert result["ok"] is True
            assert recovered_then == []  # the search was still running: before, the answer waited for it
            await c.wait_for(lambda: [p for p in c.of("event") if p.get("type") == "MOVES_RECOVERED"], 60,
                             "MOVES_RECOVERED")
            searched = time.monotonic() - sent
            # answered long before the search ended (a quiet machine: ~20 ms against seconds; loaded, < 1.5 s)
            assert answered < searched / 2, (answered, searched)
            [event] = [p for p in c.of("event") if p.get("type") == "MOVES_RECOVERED"]
            assert event.get("incomplete") == "search budget exhausted"
            await c.wait_for(lambda: ((c.retained.get("state") or {}).get("game") or {}).get("white") == "W", 10,
                             "the players set")
        finally:
            stop.set()
            await task
    state = c.retained["state"]
    assert (state["moves"], state["fen"]) == _plain_record(start, shown)
    assert state["moves"][-1] == "0000"  # the gap


async def test_moves_of_a_search_killed_before_its_commit_are_published_at_the_next_start(
        tmp_path: Path, mosquitto: Broker) -> None:
    """A journal holding the restart search's trigger but not its commit (killed between the two).

    The search's outputs are journaled apart from the events that started it (``Runtime.work``); the next
    start's replay rebuilds the recovered moves, and their ``move`` messages must go out then (before, they
    never did: only the retained state and pgn showed them).
    """
    start = play(RUY[:2])
    shown = play(RUY[:4])  # 2 plies played while the daemon was down: found by the search at once
    boards: list[_Board] = []
    async with consumer(mosquitto.port) as c:
        task, stop = await _serve(tmp_path, mosquitto.port, boards)
        try:  # the first run: the game, e4 e5
            await _play_live(boards, start)
            await c.wait_for(lambda: len(c.of("move")) == 2, 10, "e4 e5 made")
        finally:
            stop.set()
            await task
        # the second run, killed between the search's trigger (journaled) and its commit: its journal written
        # as that run left it (the restart's outages, the dump, the timers that started the search; no outputs)
        cfg = load_config(write_config(tmp_path, mosquitto.port))
        journal = Journal.open(cfg.boards[0].journal.path)
        try:
            journal.start_session()
            last = journal.last_event_at()
            assert last is not None
            for event in (ev.LinkChanged(at=last + 1.0, link=ev.Link.CLOCK, up=False, detail=RESTART_DETAIL),
                          ev.LinkChanged(at=last + 1.0, link=ev.Link.BOARD, up=False, detail=RESTART_DETAIL),
                          ev.BoardSnapshot(at=last + 2.0, squares=placement(shown)),
                          Tick(at=last + 3.1), Tick(at=last + 4.0), Tick(at=last + 5.0)):
                journal.record(event, [], seq=journal.seq)
        finally:
            journal.close()
        task, stop = await _serve(tmp_path, mosquitto.port, boards)
        try:  # the third run: its replay rebuilds e4 e5 Nf3 Nc6
            await c.wait_for(lambda: len((c.retained.get("state") or {}).get("moves", [])) == 4, 15,
                             "the rebuilt record")
            await c.wait_for(lambda: len(c.of("move")) >= 4, 10, "the recovered moves published")
            await asyncio.sleep(1.0)  # nothing more comes
        finally:
            stop.set()
            await task
    expected = [m.uci() for m in shown.move_stack]
    assert c.retained["state"]["moves"] == expected
    made = [(p["ply"], p["uci"]) for p in c.of("move") if p["phase"] == "made"]
    assert made == list(enumerate(expected, 1))  # every move of the record made once, in ply order
    recovered = [(p["ply"], p.get("recovered"), p.get("recovered_by")) for p in c.of("move") if p["ply"] > 2]
    assert recovered and all(r[1:] == (True, "search") for r in recovered), recovered
    assert c.duplicates == 0
