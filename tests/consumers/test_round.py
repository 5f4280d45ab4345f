"""``boardd round``: a 10-board round from a TRF through a real Mosquitto into 10 daemons, results back."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiomqtt

from boardd.consumers.relay import MqttSettings, RelayConfig
from boardd.core.tournament import read_trf, split_lines
from boardd.daemon.config import load_config
from boardd.daemon.service import serve
from tests.consumers.feed import read_pgn_games
from tests.consumers.test_relay import running_relay
from tests.core.trf import swiss, trf_text
from tests.daemon._helpers import send_command, write_config
from tests.daemon._world import WorldBoard, physical, script, to_event
from tests.mosquitto import Broker

TEMPO = 2.5
BOARDD = [sys.executable, "-m", "boardd"]
FOOLS_MATE = ["f2f3", "e7e5", "g2g4", "d8h4"]


class GatedWorld(WorldBoard):
    """A world board that shows the start position and plays its script only once ``gate`` is set."""

    def __init__(self, *args: Any, gate: asyncio.Event, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = gate

    async def events(self) -> AsyncIterator[Any]:
        yield ev_snapshot(self)
        await self.gate.wait()
        start = time.monotonic()
        for step in self.steps:
            delay = start + step.t / self.tempo - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            yield to_event(step, self.time_source())
        await asyncio.Event().wait()


def ev_snapshot(world: WorldBoard) -> Any:
    from boardd.core import events as ev

    return ev.BoardSnapshot(at=world.time_source(), squares=physical([]).squares)


@contextlib.asynccontextmanager
async def hall(tmp_path: Path, port: int, n: int, gates: dict[str, asyncio.Event]) -> AsyncIterator[None]:
    """*n* daemons (boards t1..tn), each with its own configuration, journal and simulated board."""
    stop = asyncio.Event()
    tasks = []
    for i in range(1, n + 1):
        board = f"t{i}"
        directory = tmp_path / board
        directory.mkdir()
        cfg = write_config(directory, port, board=board, tempo=TEMPO)
        gate = gates.setdefault(board, asyncio.Event())
        steps = script(FOOLS_MATE, seed=i)

        def make(_kind: str, _options: object, *, time_source: Any, steps: Any = steps, gate: Any = gate,
                 directory: Path = directory) -> GatedWorld:
            return GatedWorld(steps, state_file=directory / "world.json", tempo=TEMPO, time_source=time_source,
                              gate=gate)

        tasks.append(asyncio.create_task(serve(load_config(cfg), stop=stop, driver_factory=make), name=board))
    try:
        yield
    finally:
        stop.set()
        for code in await asyncio.wait_for(asyncio.gather(*tasks), 30):
            assert code == 0


class States:
    """Every board's retained state, and every command seen on the broker."""

    def __init__(self) -> None:
        self.states: dict[str, dict[str, Any]] = {}
        self.commands: list[str] = []
        self.ready = asyncio.Event()

    async def run(self, port: int) -> None:
        async with aiomqtt.Client("127.0.0.1", port, identifier=f"watch-{time.monotonic_ns()}") as client:
            await client.subscribe("boardd/+/state", qos=1)
            await client.subscribe("boardd/+/cmd/#", qos=1)
            self.ready.set()
            async for msg in client.messages:
                topic = msg.topic.value
                if "/cmd/" in topic:
                    self.commands.append(topic)
                else:
                    self.states[topic.split("/")[1]] = json.loads(bytes(msg.payload))  # type: ignore[arg-type]

    async def wait(self, predicate: Any, within: float, what: str) -> None:
        deadline = time.monotonic() + within
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: "
                                     f"{ {b: (s['game']['white'], s['result']) for b, s in self.states.items()} }")
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def watching(port: int) -> AsyncIterator[States]:
    watch = States()
    task = asyncio.create_task(watch.run(port))
    try:
        await asyncio.wait_for(watch.ready.wait(), 10)
        yield watch
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def boardd(*args: str | Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(*BOARDD, *map(str, args), stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_ten_board_round_imported_played_and_results_written(tmp_path: Path, mosquitto: Broker) -> None:
    players = swiss(20, 2)
    trf = tmp_path / "open.trf"
    trf.write_bytes(trf_text(players, eol="\r").encode("latin-1"))
    pairings = read_trf(trf.read_text(encoding="latin-1"), 3)
    gates: dict[str, asyncio.Event] = {}
    relay_config = RelayConfig(mqtt=MqttSettings(port=mosquitto.port), http_port=None, out_dir=tmp_path / "live",
                               debounce=0.1)
    async with watching(mosquitto.port) as watch, hall(tmp_path, mosquitto.port, 10, gates), \
            running_relay(relay_config) as relay:
        await watch.wait(lambda: len(watch.states) == 10, 20, "10 boards online")
        code, out, err = await boardd("round", "import", trf, "--round", "3", "--port", mosquitto.port)
        assert code == 0, out + err
        assert out.count(": ok") == 10 and "round 3: 10/10 boards started" in out
        for game in pairings.games:
            assert f"board {game.board_no} (t{game.board_no}): {game.white.name} ({game.white.rating}) - " in out

        def started() -> bool:
            return all(watch.states[f"t{g.board_no}"]["game"]["white"] == g.white.name for g in pairings.games)

        await watch.wait(started, 20, "the round's games on the boards")
        for g in pairings.games:
            game = watch.states[f"t{g.board_no}"]["game"]
            assert (game["white"], game["black"], game["round"], game["board_no"]) == (g.white.name, g.black.name,
                                                                                       "3", g.board_no)
        # the roster: retained, with ratings and FIDE ids
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, identifier="roster-reader") as client:
            await client.subscribe("boardd/_round/3", qos=1)
            async with asyncio.timeout(5):
                msg = await anext(aiter(client.messages))
        roster = json.loads(bytes(msg.payload))  # type: ignore[arg-type]
        assert msg.retain and roster["round"] == 3 and len(roster["games"]) == 10
        assert roster["games"][0]["white"]["fide_id"] == pairings.games[0].white.fide_id

        # boards 1 and 2 are played to mate on the board; the others get the arbiter's result
        gates["t1"].set()
        gates["t2"].set()
        verdicts = {3: ("1-0", "resignation"), 4: ("1/2-1/2", "agreement"), 5: ("0-1", "resignation"),
                    6: ("1-0", "forfeit"), 7: ("0-1", "forfeit"), 8: ("1/2-1/2", "normal"), 9: ("1-0", "time")}
        for board_no, (result, termination) in verdicts.items():
            answer = await send_command(mosquitto.port, f"t{board_no}", "set-result",
                                        {"id": f"r{board_no}", "result": result, "termination": termination})
            assert answer["ok"], answer
        await watch.wait(lambda: all(watch.states[f"t{b}"]["result"] != "*" for b in [1, 2, *verdicts]), 30,
                         "results")
        # the relay's round PGN: every game with the FIDE ids of the roster, read by python-chess without errors
        await watch.wait(lambda: len(read_pgn_games(relay.hall.round_pgn(3))) == 10 and all(
            g.headers["Result"] != "*" for g in read_pgn_games(relay.hall.round_pgn(3))[:9]), 10, "relay round")
        relayed = read_pgn_games(relay.hall.round_pgn(3))
        for game, pairing in zip(relayed, pairings.games, strict=True):
            assert not game.errors
            assert (game.headers["Round"], game.headers["White"], game.headers["Black"]) == (
                f"3.{pairing.board_no}", pairing.white.name, pairing.black.name)
            assert (game.headers["WhiteFideId"], game.headers["BlackFideId"]) == (pairing.white.fide_id,
                                                                                  pairing.black.fide_id)
            assert game.headers["WhiteElo"] == str(pairing.white.rating) and game.headers["Event"] == "Test Open 2026"
        assert [m.uci() for m in relayed[0].mainline_moves()] == FOOLS_MATE and relayed[0].headers["Result"] == "0-1"
        out_trf, out_csv = tmp_path / "after.trf", tmp_path / "after.csv"
        code, out, err = await boardd("round", "results", trf, "--round", "3", "--port", mosquitto.port,
                                      "--out", out_trf, "--csv", out_csv)
        # board 10 is still playing: listed, exit code 3, the other nine written
        assert code == 3, out + err
        assert "board  10 t10" in out and "still playing" in out and "9/10 games finished" in out

    written = out_trf.read_bytes()
    assert b"\n" not in written and written.count(b"\r") == trf.read_bytes().count(b"\r")  # CR-only kept
    text = written.decode("latin-1")
    again = read_trf(text, 3)
    assert again.games == pairings.games
    lines = {int(line[4:8]): line for line in split_lines(text) if line.startswith("001")}
    expected = {1: ("0", "1"), 2: ("0", "1"), 3: ("1", "0"), 4: ("=", "="), 5: ("0", "1"), 6: ("+", "-"),
                7: ("-", "+"), 8: ("=", "="), 9: ("1", "0"), 10: (" ", " ")}
    for g in pairings.games:
        w, b = expected[g.board_no]
        assert lines[g.white.rank][111:119].rstrip() == f"{g.black.rank:4d} w {w}".rstrip()
        assert lines[g.black.rank][111:119].rstrip() == f"{g.white.rank:4d} b {b}".rstrip()
    rows = list(csv.DictReader(out_csv.read_text().splitlines()))
    assert [int(r["board"]) for r in rows] == list(range(1, 11))
    assert [r["result"] for r in rows] == ["0-1", "0-1", "1-0", "1/2-1/2", "0-1", "1-0", "0-1", "1/2-1/2", "1-0", "*"]
    assert rows[5]["termination"] == "forfeit" and rows[0]["white"] == pairings.games[0].white.name


async def test_dry_run_and_bad_files_send_nothing(tmp_path: Path, mosquitto: Broker) -> None:
    players = swiss(8, 1)
    trf = tmp_path / "r.trf"
    trf.write_text(trf_text(players), encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text("board;white;black;white elo\n1;A;B;2100\n2;C;D;21OO\n", encoding="utf-8")
    async with watching(mosquitto.port) as watch:
        code, out, _ = await boardd("round", "import", trf, "--round", "2", "--port", mosquitto.port, "--dry-run",
                                    "--map", "2=t17")
        assert code == 0
        games = [line for line in out.splitlines() if line.startswith("board ")]
        assert len(games) == 4 and "t17" in games[1] and '"board_no": 2' in games[1]
        assert "cmd/new-game" in games[0] and "dry run: nothing sent" in out
        code, out, err = await boardd("round", "import", bad, "--round", "1", "--port", mosquitto.port)
        assert code == 2 and "line 3 column 4 (white rating)" in err and "21OO" in err
        # a well-formed file for boards the broker does not know: nothing sent either
        code, out, err = await boardd("round", "import", trf, "--round", "2", "--port", mosquitto.port,
                                      "--board-id", "hall-{n}")
        assert code == 1 and "hall-1" in out and "nothing sent" in out
        await asyncio.sleep(0.5)
    assert watch.commands == []
