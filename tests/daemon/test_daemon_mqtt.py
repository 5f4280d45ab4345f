"""The daemon in-process against a private Mosquitto: a whole game, broker outage, commands, restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from boardd.daemon.config import load_config
from boardd.daemon.journal import Journal
from boardd.daemon.service import serve
from drivers.base import SetClock
from tests.daemon._helpers import consumer, random_moves, read_retained, send_command, write_config
from tests.daemon._world import Step, factory, script
from tests.mosquitto import Broker

DRIVERS: list[Any] = []


@contextlib.asynccontextmanager
async def daemon(config_path: Path, steps: Any, state_file: Path, tempo: float) -> AsyncIterator[asyncio.Event]:
    stop = asyncio.Event()
    make = factory(steps, state_file, tempo)

    def keep(*args: Any, **kwargs: Any) -> Any:
        driver = make(*args, **kwargs)
        DRIVERS.append(driver)
        return driver

    task = asyncio.create_task(serve(load_config(config_path), stop=stop, driver_factory=keep), name="daemon")
    try:
        yield stop
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 20) == 0


#: Game speed-up of the simulated world; the recogniser's timing is scaled by the same factor.
TEMPO = 2.5


def state_moves(c: Any) -> list[str]:
    state = c.retained.get("state") or {}
    return list(state.get("moves") or [])


async def test_whole_game_published_once_in_order(tmp_path: Path, mosquitto: Broker) -> None:
    moves = random_moves(7, 16)
    steps = script(moves, seed=7)
    cfg = write_config(tmp_path, mosquitto.port, tempo=TEMPO)
    async with consumer(mosquitto.port) as c:
        async with daemon(cfg, steps, tmp_path / "world.json", tempo=TEMPO):
            await c.wait_for(lambda: c.moves("completed") == moves, 30, "all moves completed")
            await c.wait_for(lambda: state_moves(c) == moves, 10, "retained state")
        await c.wait_for(lambda: (c.retained.get("status") or {}).get("state") == "offline", 10, "offline status")
    assert c.moves("made") == moves
    # a clean game raises no warning at all (no SENSOR_FAULT at start-up, no spurious findings)
    assert [p["code"] for p in c.of("irregularity") if p["severity"] != "info"] == []
    status = c.of("status")[0]
    assert status["state"] in {"online", "degraded"} and status["board_link"]["driver"] == "sim"
    state = c.retained["state"]
    assert state["game"]["white"] == "Alice" and state["game"]["board_no"] == 1 and state["ply"] == len(moves)
    assert "1. " in c.retained["pgn"] and "Alice" in c.retained["pgn"]
    seqs = [p["seq"] for _, p in c.messages if p["session"] == 1]
    assert seqs == sorted(seqs)
    # after a clean stop the retained status says offline (published before disconnecting)
    raw = await read_retained(mosquitto.port, "boardd/t1/status")
    assert raw is not None and json.loads(raw)["state"] == "offline"
    j = Journal.open(tmp_path / "state" / "t1.sqlite")
    assert j.unacked_count() == 0 and j.session == 1


async def test_broker_outage_mid_game(tmp_path: Path) -> None:
    """The broker stops mid-game and comes back: every move reaches the subscriber exactly once, in order.

    The broker persists sessions (as the hall's Mosquitto does), so the subscriber's queue survives the
    restart; the daemon re-sends whatever was not acknowledged from its journal's outbox.
    """
    moves = random_moves(11, 24)
    steps = script(moves, seed=11)
    (tmp_path / "mosq").mkdir()
    with Broker(directory=tmp_path / "mosq", persistence=True) as broker:
        cfg = write_config(tmp_path, broker.port, tempo=TEMPO)
        async with consumer(broker.port, persistent=True) as c, daemon(cfg, steps, tmp_path / "world.json",
                                                                       tempo=TEMPO):
            await c.wait_for(lambda: len(c.moves("completed")) >= 4, 30, "first moves")
            broker.stop()
            await asyncio.sleep(3.0)  # moves keep happening while the broker is down
            broker.start()
            await c.wait_for(lambda: c.moves("completed") == moves, 60, "all moves after the outage")
            await c.wait_for(lambda: state_moves(c) == moves, 10, "retained state after the outage")
        assert c.moves("made") == moves, "every move exactly once, in order (after dedupe)"
        print(f"outage: {len(c.messages)} distinct messages, {c.duplicates} duplicates dropped by dedupe")
        raw = await read_retained(broker.port, "boardd/t1/state")
        assert raw is not None and json.loads(raw)["moves"] == moves


async def test_restart_rebuilds_game_and_increments_session(tmp_path: Path, mosquitto: Broker) -> None:
    moves = random_moves(5, 12)
    steps = script(moves, seed=5)
    cfg = write_config(tmp_path, mosquitto.port, tempo=TEMPO)
    world = tmp_path / "world.json"
    async with consumer(mosquitto.port) as c:
        async with daemon(cfg, steps[: len(steps) // 2], world, tempo=TEMPO):
            await c.wait_for(lambda: len(state_moves(c)) >= 3, 30, "some moves")
            await asyncio.sleep(1.0)
        first = state_moves(c)
        game_id = c.retained["state"]["game"]["id"]
        async with daemon(cfg, steps, world, tempo=TEMPO):
            await c.wait_for(lambda: state_moves(c) == moves, 30, "the rest of the game")
    sessions = {p["session"] for _, p in c.messages}
    assert sessions == {1, 2}
    assert c.retained["state"]["game"]["id"] == game_id, "same game after the restart"
    assert moves[: len(first)] == first
    assert c.moves("made") == moves


async def test_commands_round_trip(tmp_path: Path, mosquitto: Broker) -> None:
    moves = random_moves(3, 6)
    steps = script(moves, seed=3)
    # after the last move White (to move) presses the clock without moving: an irregularity to ack and resolve
    steps.append(Step(steps[-1].t + 1.5, "clock", running="right", left=steps[-1].left, right=steps[-1].right))
    cfg = write_config(tmp_path, mosquitto.port, tempo=TEMPO)
    port = mosquitto.port
    async with consumer(port) as c, daemon(cfg, steps, tmp_path / "world.json", tempo=TEMPO):
        await c.wait_for(lambda: state_moves(c) == moves, 30, "game")
        await c.wait_for(lambda: any(p["code"] == "CLOCK_PRESS_NO_MOVE" for p in c.of("irregularity")), 10,
                         "the press without a move")
        irr = next(p for p in c.of("irregularity") if p["code"] == "CLOCK_PRESS_NO_MOVE")
        r = await send_command(port, "t1", "ack", {"id": "a1", "irregularity": irr["id"]})
        assert r["ok"] is True
        await c.wait_for(lambda: any(p["id"] == irr["id"] and p["status"] == "acknowledged"
                                     for p in c.of("irregularity")), 5, "acknowledged")
        r = await send_command(port, "t1", "resolve", {"id": "a2", "irregularity": irr["id"], "ruling": "warning",
                                                       "accept": False})
        assert r["ok"] is True
        await c.wait_for(lambda: any(p["id"] == irr["id"] and p["status"] == "resolved"
                                     for p in c.of("irregularity")), 5, "resolved")
        # the dismissal taken back (the tablet's Undo): acknowledged again, as before it; then nothing left to
        # take back
        r = await send_command(port, "t1", "reopen", {"id": "u1", "irregularity": irr["id"]})
        assert r["ok"] is True
        await c.wait_for(lambda: [p["status"] for p in c.of("irregularity")
                                  if p["id"] == irr["id"]][-1] == "acknowledged", 5, "reopened")
        await c.wait_for(lambda: irr["id"] in c.retained["state"]["open_irregularities"], 5, "open in the state")
        r = await send_command(port, "t1", "reopen", {"id": "u2", "irregularity": irr["id"]})
        assert r["ok"] is False and "no dismissal to take back" in r["error"], r
        r = await send_command(port, "t1", "reopen", {"id": "u3"})
        assert r["ok"] is False and "'irregularity' is required" in r["error"], r
        r = await send_command(port, "t1", "set-players", {"id": "p1", "white": "Carol", "black": "Dave"})
        assert r["ok"] is True and r["id"] == "p1" and r["v"] == 1
        await c.wait_for(lambda: c.retained["state"]["game"]["white"] == "Carol", 5, "players")
        r = await send_command(port, "t1", "set-clock", {"id": "c1", "white": 120, "black": 90.5})
        assert r["ok"] is True and r["clock_set"] is True
        # the physical clock is set through the driver (White on the left by default)
        assert DRIVERS[-1].sent[-1] == SetClock(left_s=120, right_s=90, running=None)
        await c.wait_for(lambda: any(p["white"] == 120 and p["black"] == 90.5 for p in c.of("clock")), 5, "clock set")
        r = await send_command(port, "t1", "flip", {"id": "f1"})
        assert r["ok"] is True
        r = await send_command(port, "t1", "reinstate", {"id": "r1", "ply": 4})
        assert r["ok"] is True
        await c.wait_for(lambda: state_moves(c) == moves[:4], 5, "reinstated to ply 4")
        r = await send_command(port, "t1", "set-result", {"id": "s1", "result": "1/2-1/2",
                                                          "termination": "agreement"})
        assert r["ok"] is True
        await c.wait_for(lambda: c.retained["state"]["result"] == "1/2-1/2", 5, "result")
        before = dict(c.retained["state"])
        for name, payload, fragment in [
            ("ack", b"{oops", "not JSON"),
            ("explode", {"id": "x1"}, "unknown command"),
            ("ack", {"id": "x2", "irregularity": "99-9"}, "unknown irregularity"),
            ("reinstate", {"id": "x3", "ply": 50}, "cannot reinstate"),
            ("set-clock", {"id": "x4", "white": "soon", "black": 1}, "white"),
            ("set-result", {"id": "x5", "result": "2-0"}, "result"),
        ]:
            r = await send_command(port, "t1", name, payload)
            assert r["ok"] is False and fragment in r["error"], r
        assert c.retained["state"]["moves"] == before["moves"] and c.retained["state"]["result"] == "1/2-1/2"
        r = await send_command(port, "t1", "new-game", {"id": "n1", "white": "Eve", "black": "Frank", "round": 2,
                                                        "time_control": "180+2"})
        assert r["ok"] is True and r["game_id"] != before["game"]["id"]
        await c.wait_for(lambda: c.retained["state"]["game"]["white"] == "Eve" and c.retained["state"]["ply"] == 0,
                         5, "new game")
        assert c.retained["state"]["game"]["time_control"] == "180+2"
        assert DRIVERS[-1].sent[-1] == SetClock(left_s=180, right_s=180, running=None)
    # commands are journaled like board events
    j = Journal.open(tmp_path / "state" / "t1.sqlite")
    kinds = [type(e).__name__ for _, e in j.events()]
    for name in ("SetPlayers", "SetClock", "SetOrientation", "Reopen", "Reinstate", "SetResult", "NewGame"):
        assert name in kinds
    assert [g.id for g in j.games()][-1] == r["game_id"]


async def test_command_tokens(tmp_path: Path, mosquitto: Broker) -> None:
    cfg = write_config(tmp_path, mosquitto.port, tokens='[commands.tokens]\narbiter = "arbiter-token-123"\n')
    steps = script(random_moves(1, 2), seed=1)
    async with consumer(mosquitto.port) as c, daemon(cfg, steps, tmp_path / "world.json", tempo=TEMPO):
        await c.wait_for(lambda: "state" in c.retained, 20, "daemon online")
        r = await send_command(mosquitto.port, "t1", "set-players", {"id": "a", "white": "X", "black": "Y"})
        assert r["ok"] is False and "not authorised" in r["error"]
        r = await send_command(mosquitto.port, "t1", "set-players",
                               {"id": "b", "white": "X", "black": "Y", "token": "arbiter-token-123"})
        assert r["ok"] is True


def multi_config(tmp_path: Path, port: int, boards: dict[str, Path]) -> Path:
    from tests.daemon._world import world_board_table

    text = f'[mqtt]\nhost = "127.0.0.1"\nport = {port}\nkeepalive = 5\n\n[journal]\ndirectory = "{tmp_path}/state"\n'
    for board, steps_file in boards.items():
        text += world_board_table(tmp_path, board, steps_file, TEMPO, white=f"White {board}")
    path = tmp_path / "multi.toml"
    path.write_text(text)
    return path


async def test_several_boards_one_process_and_board_selection(tmp_path: Path, mosquitto: Broker) -> None:
    from tests.daemon._world import save_steps

    games = {"b1": random_moves(21, 8), "b2": random_moves(22, 10)}
    files = {}
    for board, moves in games.items():
        files[board] = tmp_path / f"{board}-steps.json"
        save_steps(script(moves, seed=len(moves)), files[board])
    cfg = multi_config(tmp_path, mosquitto.port, files)
    async with consumer(mosquitto.port, "b1") as c1, consumer(mosquitto.port, "b2") as c2:
        stop = asyncio.Event()
        task = asyncio.create_task(serve(load_config(cfg), stop=stop))
        await c1.wait_for(lambda: state_moves(c1) == games["b1"], 30, "board b1")
        await c2.wait_for(lambda: state_moves(c2) == games["b2"], 30, "board b2")
        stop.set()
        assert await asyncio.wait_for(task, 20) == 0
    assert c1.retained["state"]["game"]["white"] == "White b1" and c2.retained["state"]["game"]["white"] == "White b2"
    assert (tmp_path / "state" / "b1.sqlite").exists() and (tmp_path / "state" / "b2.sqlite").exists()
    # boardd@b2.service: one process per board, selected with --board
    async with consumer(mosquitto.port, "b2") as c2:
        stop = asyncio.Event()
        task = asyncio.create_task(serve(load_config(cfg), boards=["b2"], stop=stop))
        await c2.wait_for(lambda: c2.of("status") and c2.of("status")[-1]["session"] == 2, 20, "b2 restarted")
        stop.set()
        assert await asyncio.wait_for(task, 20) == 0
    assert Journal.open(tmp_path / "state" / "b1.sqlite").session == 1
    assert Journal.open(tmp_path / "state" / "b2.sqlite").session == 2


async def test_systemd_notifications(tmp_path: Path, mosquitto: Broker, monkeypatch: Any) -> None:
    """READY=1 once the board is open, WATCHDOG=1 while board and MQTT make progress, STOPPING=1 at the end."""
    import socket

    sock_path = tmp_path / "notify.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(sock_path))
    server.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", str(sock_path))
    monkeypatch.setenv("WATCHDOG_USEC", "1500000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    moves = random_moves(9, 10)
    cfg = write_config(tmp_path, mosquitto.port, tempo=TEMPO)
    received: list[str] = []
    try:
        async with consumer(mosquitto.port) as c:
            async with daemon(cfg, script(moves, seed=9), tmp_path / "world.json", tempo=TEMPO):
                await c.wait_for(lambda: state_moves(c) == moves, 30, "game")
            while True:
                try:
                    received.append(server.recv(4096).decode())
                except BlockingIOError:
                    break
    finally:
        server.close()
    text = "\n".join(received)
    assert "READY=1" in text and "STOPPING=1" in text
    assert text.count("WATCHDOG=1") >= 2, text
    assert "STATUS=board t1: connected" in text
    assert text.index("READY=1") < text.index("STOPPING=1")


async def test_permanent_driver_failure_stops_cleanly_with_offline_status(tmp_path: Path, mosquitto: Broker) -> None:
    from boardd.core.errors import DriverError

    class BrokenBoard:
        info = None

        async def __aenter__(self) -> BrokenBoard:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        async def send(self, command: object) -> None:
            return None

        async def events(self) -> AsyncIterator[Any]:
            await asyncio.sleep(1.0)
            raise DriverError("port rfc2217://nowhere can never work")
            yield  # pragma: no cover - makes this an async generator

    cfg = write_config(tmp_path, mosquitto.port)
    async with consumer(mosquitto.port) as c:
        status = await asyncio.wait_for(serve(load_config(cfg), driver_factory=lambda *a, **k: BrokenBoard()), 20)
        await c.wait_for(lambda: (c.retained.get("status") or {}).get("state") == "offline", 10, "offline status")
    assert status == 1


async def test_driver_on_another_clock_is_restamped(tmp_path: Path, mosquitto: Broker) -> None:
    """A driver that ignores time_source (stamps time.monotonic()) still yields a correct game."""
    import time as _time

    from tests.daemon._world import WorldBoard

    moves = random_moves(13, 8)
    steps = script(moves, seed=13)

    def make(_kind: str, _options: object, *, time_source: Any) -> WorldBoard:
        return WorldBoard(steps, state_file=tmp_path / "world.json", tempo=TEMPO, time_source=_time.monotonic)

    cfg = write_config(tmp_path, mosquitto.port, tempo=TEMPO)
    async with consumer(mosquitto.port) as c:
        stop = asyncio.Event()
        task = asyncio.create_task(serve(load_config(cfg), stop=stop, driver_factory=make))
        await c.wait_for(lambda: state_moves(c) == moves and c.moves("completed") == moves, 30, "game")
        stop.set()
        assert await asyncio.wait_for(task, 20) == 0
    assert c.moves("completed") == moves
    assert not [p for p in c.of("irregularity") if p["code"] == "SENSOR_FAULT"]
