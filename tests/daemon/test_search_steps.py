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
import dataclasses
import sqlite3
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
    start = play(RUY[:2])  # the first run's moves (_first_run)
    shown = play(RUY[:14])  # 12 plies played while the daemon was down: the search exhausts its budget
    boards: list[_Board] = []
    async with consumer(mosquitto.port) as c:
        await _first_run(tmp_path, mosquitto.port, c, boards)
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


async def _first_run(tmp_path: Path, port: int, c: Any, boards: list[_Board]) -> None:
    """The daemon's first run: the game, e4 e5 played on the board (no clock)."""
    start = play(RUY[:2])
    task, stop = await _serve(tmp_path, port, boards)
    try:
        await _play_live(boards, start)
        await c.wait_for(lambda: len((c.retained.get("state") or {}).get("moves", [])) == 2, 10, "e4 e5")
        await c.wait_for(lambda: len(c.of("move")) == 2, 10, "e4 e5 made")
    finally:
        stop.set()
        await task


async def _killed_search(tmp_path: Path, port: int, c: Any, boards: list[_Board],
                         waiting: tuple[ev.Event | Tick, ...] = ()) -> chess.Board:
    """A first run (the game, e4 e5), then the journal a second run left when killed between the restart
    search's trigger (journaled) and its commit: the restart's outages, the dump showing Nf3 Nc6 too, the timers
    that started the search, and *waiting* (events that came meanwhile, journaled, their outputs never). Returns
    the position shown."""
    shown = play(RUY[:4])  # 2 plies played while the daemon was down: found by the search at once
    await _first_run(tmp_path, port, c, boards)
    cfg = load_config(write_config(tmp_path, port))
    journal = Journal.open(cfg.boards[0].journal.path)
    try:
        journal.start_session()
        last = journal.last_event_at()
        game = journal.current_game()
        assert last is not None and game is not None and game.outputs is not None
        # the second run's engine, as the daemon has it: the replay, then stepwise; what a call returns at once
        # was committed (its count with it), what waits for the search was not
        engine = Engine(cfg.boards[0].rules)
        for _, item in journal.events(game.first_event):
            engine.advance(item.at) if isinstance(item, Tick) else engine.feed(item)
        engine.stepwise = True
        count = game.outputs
        for event in (ev.LinkChanged(at=last + 1.0, link=ev.Link.CLOCK, up=False, detail=RESTART_DETAIL),
                      ev.LinkChanged(at=last + 1.0, link=ev.Link.BOARD, up=False, detail=RESTART_DETAIL),
                      ev.BoardSnapshot(at=last + 2.0, squares=placement(shown)),
                      Tick(at=last + 3.1), Tick(at=last + 4.0), Tick(at=last + 5.0),
                      *(dataclasses.replace(e, at=last + 5.0 + e.at) for e in waiting)):
            outputs = engine.advance(event.at) if isinstance(event, Tick) else engine.feed(event)
            count += len(outputs)
            journal.record(event, [], seq=journal.seq, outputs=(game.id, count) if outputs else None)
        assert engine.busy  # the search (and the calls waiting for it) never committed
    finally:
        journal.close()
    return shown


async def test_moves_of_a_search_killed_before_its_commit_are_published_at_the_next_start(
        tmp_path: Path, mosquitto: Broker) -> None:
    """A journal holding the restart search's trigger but not its commit (killed between the two).

    The search's outputs are journaled apart from the events that started it (``Runtime.work``); the next
    start's replay rebuilds the recovered moves, and their ``move`` messages must go out then (before, they
    never did: only the retained state and pgn showed them).
    """
    boards: list[_Board] = []
    async with consumer(mosquitto.port) as c:
        shown = await _killed_search(tmp_path, mosquitto.port, c, boards)
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


async def test_every_output_of_a_search_killed_before_its_commit_is_published_once(
        tmp_path: Path, mosquitto: Broker) -> None:
    """Not only the moves: the ``MOVES_RECOVERED`` event, and the clock update and the finding of the calls that
    waited for the search (a reading with the clock paused, then a set-result closing nothing: its
    ``GAME_END``), all published at the next start, once, in the order the replay made them (the live run's),
    the moves with their ``recovered`` marker; a later start publishes none of them again.

    Before, only the moves went out: the event, the reading's clock and the result's game end were in the
    retained state only.
    """
    boards: list[_Board] = []
    reading = ev.ClockReading(at=0.5, left=3000.0, right=2990.0, running=None, lever_high=ev.ClockSide.LEFT)
    result = ev.SetResult(at=1.0, result="1/2-1/2", termination="agreement")
    async with consumer(mosquitto.port) as c:
        await _killed_search(tmp_path, mosquitto.port, c, boards, waiting=(reading, result))
        sessions = {p["session"] for _, p in c.messages}
        for run in range(2):  # the third run publishes what is owed; the fourth (a clean restart) nothing
            before = len(c.messages)
            task, stop = await _serve(tmp_path, mosquitto.port, boards)
            try:
                await c.wait_for(lambda s=sessions: (c.retained.get("state") or {}).get("result") == "1/2-1/2"
                                 and c.retained["state"]["session"] not in s, 15, "the rebuilt game")
                await c.wait_for(lambda b=before: any(t.endswith("/status") for t, _ in c.messages[b:]), 10,
                                 "the start-up status")
                sessions |= {p["session"] for _, p in c.messages}
            finally:
                stop.set()
                await task
            later = [(t.rsplit("/", 1)[-1], p) for t, p in c.messages[before:]]
            kinds = [k for k, _ in later if k in {"move", "event", "clock", "irregularity"}]
            if run == 1:
                assert kinds == [], f"published again at the fourth start: {kinds}"
                break
            owed = later[:later.index(next(x for x in later if x[0] == "status"))]  # before the start-up status
            assert [k for k, _ in owed] == kinds, (owed, kinds)
            assert [(k, p.get("ply"), p.get("phase"), p.get("type"), p.get("recovered_by")) for k, p in owed] == [
                ("move", 1, "completed", None, None), ("move", 2, "completed", None, None),  # by the replies found
                ("move", 3, "made", None, "search"), ("move", 3, "completed", None, "search"),
                ("move", 4, "made", None, "search"),
                ("event", None, None, "MOVES_RECOVERED", None),
                ("clock", None, None, None, None),  # the reading that waited: Black's press completes Nc6
                ("move", 4, "completed", None, "search"),
                ("event", None, None, "ARBITER_ACTION", None)]  # the result that waited
            recovered = next(p for k, p in owed if k == "event" and p["type"] == "MOVES_RECOVERED")
            assert (recovered["kind"], recovered["method"], recovered["moves"]) == ("unique", "search", ["Nf3", "Nc6"])
            assert (owed[6][1]["white"], owed[6][1]["black"], owed[6][1]["running"]) == (3000, 2990, None)
        # every move of the record, each phase once over all the runs
        assert sorted((p["ply"], p["phase"]) for p in c.of("move")) == [
            (ply, phase) for ply in range(1, 5) for phase in ("completed", "made")]
    assert c.duplicates == 0


async def test_a_wall_clock_stepped_back_sends_no_move_again(tmp_path: Path, mosquitto: Broker) -> None:
    """The wall clock was an hour ahead when the game started and was stepped back during it (NTP on a Pi without
    a real-time clock): the game's rows carry walls before the game's start. A restart publishes no move again.

    Before, the start found the game's ``move`` rows by wall time (at or after the game's start): it found none
    and published every move of the record again, with the new session's envelope (a consumer saw each twice).
    """
    boards: list[_Board] = []
    async with consumer(mosquitto.port) as c:
        await _first_run(tmp_path, mosquitto.port, c, boards)
        path = load_config(write_config(tmp_path, mosquitto.port)).boards[0].journal.path
        con = sqlite3.connect(path, isolation_level=None)
        (first_event,) = con.execute("SELECT first_event FROM games").fetchone()
        (wall,) = con.execute("SELECT wall FROM events WHERE id = ?", (first_event,)).fetchone()
        # the game started at wall + 1 h by the clock of then; everything later is written on the stepped clock
        con.execute("UPDATE games SET started = started + 3600")
        con.execute("UPDATE events SET wall = wall + 3600 WHERE wall = ?", (wall,))
        con.execute("UPDATE outbox SET wall = wall + 3600 WHERE wall = ?", (wall,))
        con.close()
        before = len(c.messages)
        task, stop = await _serve(tmp_path, mosquitto.port, boards)
        try:
            await c.wait_for(lambda: any(t.endswith("/status") for t, _ in c.messages[before:]), 15,
                             "the start-up status")
            await c.wait_for(lambda: any(t.endswith("/state") for t, _ in c.messages[before:]), 10, "the state")
        finally:
            stop.set()
            await task
    again = [(p["ply"], p["phase"]) for t, p in c.messages[before:] if t.endswith("/move")]
    assert again == [], f"published again: {again}"
    assert c.retained["state"]["moves"] == [m.uci() for m in play(RUY[:2]).move_stack]


async def test_a_migrated_journal_falls_back_to_the_moves_and_counts_from_then_on(
        tmp_path: Path, mosquitto: Broker) -> None:
    """A journal migrated from schema 1 has no count of committed outputs (``games.outputs`` NULL): the start
    publishes the moves the game's outbox lacks (as before the count), stores the count, and a later start
    publishes nothing again."""
    boards: list[_Board] = []
    async with consumer(mosquitto.port) as c:
        shown = await _killed_search(tmp_path, mosquitto.port, c, boards)
        path = load_config(write_config(tmp_path, mosquitto.port)).boards[0].journal.path
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("UPDATE games SET outputs = NULL")  # as the migration leaves a schema-1 game
        con.close()
        for run in range(2):
            before = len(c.messages)
            task, stop = await _serve(tmp_path, mosquitto.port, boards)
            try:
                await c.wait_for(lambda b=before: any(t.endswith("/status") for t, _ in c.messages[b:]), 15,
                                 "the start-up status")
                await c.wait_for(lambda b=before: any(t.endswith("/state") for t, _ in c.messages[b:]), 10,
                                 "the state")
            finally:
                stop.set()
                await task
            later = [(p["ply"], p["phase"]) for t, p in c.messages[before:] if t.endswith("/move")]
            if run == 0:
                # (Nc6 made, not completed: nothing pressed after it)
                assert later == [(1, "completed"), (2, "completed"), (3, "made"), (3, "completed"), (4, "made")], later
            else:
                assert later == [], f"published again: {later}"
        journal = Journal.open(path)
        game = journal.current_game()
        journal.close()
    assert game is not None and game.outputs is not None and game.outputs > 0
    assert c.retained["state"]["moves"] == [m.uci() for m in shown.move_stack]
    assert not any(p["type"] == "MOVES_RECOVERED" for p in c.of("event"))  # the fallback knows only the moves
