"""The relay: hall model, PGN folder, HTTP with ETags, lichess push; through a real Mosquitto."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import aiomqtt
import chess
import chess.pgn
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from boardd.consumers.relay import (
    FolderWriter,
    GameSlot,
    Hall,
    LichessPusher,
    MqttSettings,
    PgnHttpServer,
    Relay,
    RelayConfig,
    etag_matches,
    relay_config,
)
from boardd.core.record import game_pgn
from tests.consumers.feed import Feed, Publication, ScriptedGame, interleave, load_games, read_pgn_games, script
from tests.consumers.pipeline import SimulatedBoard, merge, simulate_board
from tests.mosquitto import Broker

PREFIX = "hall1"


def round_of(pgn_dir: Path, boards: int = 8, round_no: int = 3) -> list[ScriptedGame]:
    games = load_games(pgn_dir / "tatamast22.pgn", boards)
    return [script(g, board=f"t{i + 1}", board_no=i + 1, round_no=round_no, seed=i) for i, g in enumerate(games)]


async def publish_all(broker: Broker, publications: list[Publication]) -> None:
    async with aiomqtt.Client("127.0.0.1", broker.port, max_inflight_messages=100) as client:
        client.pending_calls_threshold = 1000
        for start in range(0, len(publications), 50):  # batches keep the order and bound in-flight calls
            batch = publications[start:start + 50]
            await asyncio.gather(*(client.publish(t, p, qos=q, retain=r) for t, p, r, q in batch))


def assert_same_games(text: str, expected: list[ScriptedGame], round_no: int) -> None:
    games = read_pgn_games(text)
    assert len(games) == len(expected)
    for game, want in zip(games, expected, strict=True):
        assert game.headers["Round"] == f"{round_no}.{want.board_no}"
        assert game.headers["Board"] == str(want.board_no)
        assert game.headers["White"] == want.white
        assert game.headers["Black"] == want.black
        assert game.headers["Result"] == want.result
        nodes = list(game.mainline())
        assert [n.move for n in nodes] == want.moves
        assert [n.clock() for n in nodes] == want.clocks
        assert [n.emt() for n in nodes] == want.emts


async def wait_for(predicate: Any, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def running_relay(config: RelayConfig) -> AsyncIterator[Relay]:
    relay = Relay(config)
    task = asyncio.create_task(relay.serve())
    try:
        await asyncio.wait_for(relay.connected.wait(), 10)
        yield relay
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# --- through Mosquitto ------------------------------------------------------------------------


def assert_same_as_simulated(text: str, boards: list[SimulatedBoard], round_no: int) -> None:
    """Relay games = simulated games: moves, and per move the mover's clock and emt of the engine's record.

    Clocks are compared at PGN precision: they must equal the daemon's own PGN of the record
    (boardd.core.record.game_pgn: whole seconds rounded down, tenths under 10 s, as DGT LiveChess writes), and
    lie within one second below the engine's exact times.
    """
    games = read_pgn_games(text)
    assert len(games) == len(boards)
    for board_no, (game, board) in enumerate(zip(games, boards, strict=True), start=1):
        state = board.state
        assert game.headers["Round"] == f"{round_no}.{board_no}"
        assert game.headers["Board"] == str(board_no)
        assert (game.headers["White"], game.headers["Black"]) == (state.white, state.black)
        assert game.headers["Result"] == state.result
        nodes = list(game.mainline())
        assert [n.move.uci() for n in nodes] == board.moves
        (official,) = read_pgn_games(game_pgn(state))
        assert [(n.clock(), n.emt()) for n in nodes] == [(n.clock(), n.emt()) for n in official.mainline()]
        assert len(nodes) == len(state.moves)
        for node, record in zip(nodes, state.moves, strict=True):
            mover_clock = record.clock_white if record.side == chess.WHITE else record.clock_black
            assert mover_clock is not None and record.emt is not None and node.clock() is not None
            assert mover_clock - 1 < node.clock() <= mover_clock + 1e-6, record
            assert record.emt - 1 < (node.emt() or -9) <= record.emt + 1e-6, record


@pytest.mark.broker
@pytest.mark.slow
async def test_round_of_eight_simulated_boards_through_mosquitto(mosquitto: Broker, tmp_path: Path,
                                                                 pgn_dir: Path) -> None:
    """drivers.sim → engine → contract → Mosquitto → relay: the round's games.pgn is the simulated round."""
    games = load_games(pgn_dir / "tatamast22.pgn", 8)
    boards = [simulate_board(g, board=f"t{i + 1}", prefix=PREFIX, seed=i, max_plies=60) for i, g in enumerate(games)]
    assert any(b.state.result != "*" for b in boards) and any(b.state.result == "*" for b in boards)
    publications = merge(boards)
    out = tmp_path / "live"
    slots = {b.board: GameSlot(round=3, board_no=i + 1) for i, b in enumerate(boards)}  # the round's pairings
    config = RelayConfig(mqtt=MqttSettings(port=mosquitto.port, prefix=PREFIX), out_dir=out, http_port=0,
                         debounce=0.1, slots=slots)
    games_pgn = out / "round-3" / "games.pgn"
    final_plies = [len(b.moves) for b in boards]

    def complete() -> bool:
        if not games_pgn.exists():
            return False
        games = read_pgn_games(games_pgn.read_text())
        return [len(list(g.mainline_moves())) for g in games] == final_plies and all(
            g.headers["Result"] == b.state.result for g, b in zip(games, boards, strict=True))

    async with running_relay(config) as relay:
        await publish_all(mosquitto, publications)
        await wait_for(complete, 30)
        assert_same_as_simulated(games_pgn.read_text(), boards, 3)
        for board_no, board in enumerate(boards, start=1):  # one file per game
            (single,) = read_pgn_games((out / "round-3" / f"game-{board_no}.pgn").read_text())
            assert [n.move.uci() for n in single.mainline()] == board.moves
        assert not [p for p in (out / "round-3").iterdir() if p.name.startswith(".")], "temp files left behind"
        url = f"http://127.0.0.1:{relay.http_port}/round-3/games.pgn"
        async with aiohttp.ClientSession() as http:
            async with http.get(url) as response:
                assert response.status == 200
                assert_same_as_simulated(await response.text(), boards, 3)
                etag = response.headers["ETag"]
            async with http.get(url, headers={"If-None-Match": etag}) as response:
                assert response.status == 304  # what a polling lichess sees between moves
        assert relay.hall.rejected == 0

    # A relay started after the games: retained state + pgn are enough to rebuild the round.
    late_out = tmp_path / "late"
    late = RelayConfig(mqtt=MqttSettings(port=mosquitto.port, prefix=PREFIX), out_dir=late_out, http_port=None,
                       debounce=0.1, slots=slots)
    games_pgn = late_out / "round-3" / "games.pgn"
    async with running_relay(late):
        await wait_for(complete)
        assert_same_as_simulated(games_pgn.read_text(), boards, 3)


@pytest.mark.broker
async def test_relay_survives_broker_restart(mosquitto: Broker, tmp_path: Path, pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX, session=1)
    steps = feed.publications()
    config = RelayConfig(mqtt=MqttSettings(port=mosquitto.port, prefix=PREFIX), out_dir=None, http_port=None)
    async with running_relay(config) as relay:
        await publish_all(mosquitto, [p for step in steps[:11] for p in step])
        await wait_for(lambda: ((relay.hall.boards.get("t1") and relay.hall.boards["t1"].state) or {}).get("ply") == 10)
        mosquitto.restart()  # no persistence: retained messages are gone with the broker
        await wait_for(lambda: not relay.connected.is_set(), 10)
        await wait_for(relay.connected.is_set, 20)
        await publish_all(mosquitto, [p for step in steps[11:] for p in step])
        await wait_for(lambda: relay.hall.boards["t1"].state is not None
                       and relay.hall.boards["t1"].state.get("result") == game.result)
        assert_same_games(relay.hall.round_pgn(3), [game], 3)


# --- pure hall ----------------------------------------------------------------------------------


def test_hall_dedupes_and_ignores_stale_sessions(pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    old = Feed(game, prefix=PREFIX, session=1).publications(upto=4)
    new_steps = Feed(game, prefix=PREFIX, session=2).publications()
    hall = Hall(prefix=PREFIX)
    flat = [p for step in new_steps for p in step]
    for topic, payload, _, _ in flat:
        hall.handle(topic, payload)
    once = hall.round_pgn(3)
    for topic, payload, _, _ in flat:  # QoS 1 redelivery and retained replays
        assert hall.handle(topic, payload) is None or topic.endswith("/pgn")
    assert hall.duplicates == sum(1 for t, *_ in flat if not t.endswith("/pgn"))
    for topic, payload, _, _ in (p for step in old for p in step):  # a previous daemon run
        hall.handle(topic, payload)
    assert hall.stale > 0
    assert hall.round_pgn(3) == once
    assert_same_games(once, [game], 3)


def test_relay_pgn_carries_the_current_clock_tags(pgn_dir: Path) -> None:
    """lila#14843: ``[WhiteClock]``/``[BlackClock]`` from the latest state, in DGT's ``hh:mm:ss`` form."""
    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX)
    hall = Hall(prefix=PREFIX)
    for topic, payload, _, _ in [p for step in feed.publications(upto=5) for p in step]:
        hall.handle(topic, payload)
    (live,) = read_pgn_games(hall.game_pgn("t1") or "")
    white_after, black_after = game.clocks[4], game.clocks[3]  # the last clock each side had after its move
    expected = {"WhiteClock": white_after, "BlackClock": black_after}
    for tag, seconds in expected.items():
        hours, rest = divmod(int(seconds), 3600)
        assert live.headers[tag] == f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}", (tag, seconds)
    topic, payload, _, _ = feed.state(5, {"white": 3599.5, "black": 61.0}, "black")
    hall.handle(topic, payload)
    (later,) = read_pgn_games(hall.game_pgn("t1") or "")
    assert (later.headers["WhiteClock"], later.headers["BlackClock"]) == ("00:59:59", "00:01:01")


def test_a_new_game_on_a_board_archives_the_old_one(tmp_path: Path, pgn_dir: Path) -> None:
    games = load_games(pgn_dir / "tatamast22.pgn", 2)
    first = script(games[0], board="t1", board_no=1, round_no=3, seed=1)
    second = script(games[1], board="t1", board_no=1, round_no=4, seed=2)
    feed1 = Feed(first, prefix=PREFIX, session=1)
    hall = Hall(prefix=PREFIX)
    for topic, payload, _, _ in [p for step in feed1.publications() for p in step]:
        hall.handle(topic, payload)
    round3 = hall.round_pgn(3)
    feed2 = Feed(second, prefix=PREFIX, session=1)
    feed2.seq = feed1.seq  # same daemon session, next game (new-game command)
    for topic, payload, _, _ in [p for step in feed2.publications(upto=6) for p in step]:
        hall.handle(topic, payload)
    assert hall.round_numbers() == [3, 4]
    assert hall.round_pgn(3) == round3  # the finished game stays in its round
    assert_same_games(round3, [first], 3)
    (live,) = read_pgn_games(hall.round_pgn(4))
    assert [n.move for n in live.mainline()] == second.moves[:6]
    assert [n.clock() for n in live.mainline()] == second.clocks[:6]  # no clock of the old game leaks in
    writer = FolderWriter(hall, tmp_path)
    writer.flush()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.pgn")) == [
        "round-3/game-1.pgn", "round-3/games.pgn", "round-4/game-1.pgn", "round-4/games.pgn"]
    writes = writer.writes
    writer.flush()
    assert writer.writes == writes  # unchanged files are not rewritten


def test_chess960_game_through_the_pipeline(pgn_dir: Path) -> None:
    games = load_games(pgn_dir / "cutechess-fischerrandom.pgn", 4)
    hall = Hall(prefix=PREFIX)
    for i, game in ((0, games[0]), (3, games[3])):  # both castle (plies 18 and 41; 30 and 31)
        board = simulate_board(game, board=f"f{i}", prefix=PREFIX, seed=i, max_plies=45)
        for _, (topic, payload, _, _) in board.publications:
            hall.handle(topic, payload)
        (relayed,) = read_pgn_games(hall.game_pgn(f"f{i}") or "")
        assert relayed.headers["Variant"] == "Chess960" and relayed.headers["SetUp"] == "1"
        assert relayed.board().chess960
        assert [m.uci() for m in relayed.mainline_moves()] == board.moves
        position, castles = relayed.board(), 0
        for move in relayed.mainline_moves():
            castles += position.is_castling(move)
            position.push(move)
        assert castles == 2


def test_an_illegal_move_that_stood_keeps_the_game_visible_move_by_move(pgn_dir: Path) -> None:
    """After an illegal move that stood, the PGN goes on from the physical position (SetUp/FEN)."""
    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX)
    hall = Hall(prefix=PREFIX)
    for topic, payload, _, _ in [p for step in feed.publications(upto=2) for p in step]:
        hall.handle(topic, payload)
    assert [m.uci() for m in game.moves[:2]] == ["d2d4", "d7d5"]
    state = json.loads(feed.state(2, {"white": 5000.0, "black": 5000.0}, "black")[1])
    after = ["e1e3", "g8f6", "e3f4", "f6h5"]  # Ke1-e3 jumps over e2: illegal; the game goes on
    state.update(moves=[*state["moves"], *after], ply=6, seq=10_000)
    hall.handle(f"{PREFIX}/t1/state", json.dumps(state).encode())
    clock = {"white": 4990.0, "black": 4980.0}
    for ply, uci, side in ((4, "g8f6", "black"), (5, "e3f4", "white")):
        hall.handle(f"{PREFIX}/t1/move", json.dumps({**feed._env(), "ply": ply, "uci": uci, "side": side,
                                                     "phase": "completed", "clock": clock, "emt": 3}).encode())
    (relayed,) = read_pgn_games(hall.game_pgn("t1") or "")
    assert not relayed.errors
    position = chess.Board()
    for uci in ["d2d4", "d7d5", "e1e3"]:
        position.push(chess.Move.from_uci(uci))
    assert relayed.headers["SetUp"] == "1" and relayed.headers["FEN"] == position.fen()
    assert [m.uci() for m in relayed.mainline_moves()] == after[1:]
    assert "1. d4 d5 2. Ke1-e3 (illegal)" in relayed.comment
    nodes = list(relayed.mainline())
    assert (nodes[0].clock(), nodes[1].clock()) == (4980.0, 4990.0)
    assert relayed.headers["White"] == game.white and relayed.headers["Round"] == "3.1"
    # the daemon's PGN note (its own form: the record after the illegal move in a comment) is not repeated
    daemon = chess.pgn.read_game(io.StringIO(feed.pgn(2)[1].decode()))
    assert daemon is not None
    daemon.end().comment += " 2. Ke1-e3 (illegal) 4k3/8/8/8/8/4K3/8/8 b - - 0 2"
    hall.handle(f"{PREFIX}/t1/pgn", str(daemon).encode())
    (relayed,) = read_pgn_games(hall.game_pgn("t1") or "")
    assert not relayed.errors and "4k3/8/8" not in str(relayed)
    assert [m.uci() for m in relayed.mainline_moves()] == after[1:]
    # a move from an empty square cannot be set up: the PGN stops before it, with a note
    state.update(moves=[*state["moves"][:2], "e3e4"], ply=3, seq=10_001)
    hall.handle(f"{PREFIX}/t1/state", json.dumps(state).encode())
    (relayed,) = read_pgn_games(hall.game_pgn("t1") or "")
    assert not relayed.errors and "FEN" not in relayed.headers
    assert [m.uci() for m in relayed.mainline_moves()] == ["d2d4", "d7d5"]
    assert "illegal" in relayed.end().comment


def test_every_relay_pgn_with_illegal_moves_reads_without_errors() -> None:
    """Random games with illegal moves that stood (pseudo-legal into check, jumps, king moves) at random
    plies: every PGN the relay writes reads in python-chess without errors, and shows every move after
    the last illegal one."""
    import random

    rng = random.Random(13)
    restarted = 0
    for n in range(200):
        board = chess.Board()
        moves: list[str] = []
        last_illegal = 0
        for ply in range(1, rng.randint(4, 60)):
            if board.is_game_over():
                break
            if rng.random() < 0.08:
                # an illegal move: a piece of the side to move goes to a random square it cannot reach
                own = [sq for sq in chess.SQUARES if (p := board.piece_at(sq)) and p.color == board.turn]
                frm = rng.choice(own)
                targets = [sq for sq in chess.SQUARES if sq != frm and not (board.piece_at(sq) and
                           board.piece_at(sq).color == board.turn)  # type: ignore[union-attr]
                           and board.piece_type_at(sq) != chess.KING]
                move = chess.Move(frm, rng.choice(targets))
                if board.is_legal(move):
                    continue
                last_illegal = ply
            else:
                move = rng.choice(list(board.legal_moves))
            moves.append(move.uci())
            board.push(move)
            if not board.is_valid():
                break
        state = {"v": 1, "board": "t1", "session": 1, "seq": n + 1, "ts": "2026-11-24T12:00:00Z",
                 "game": {"id": f"g{n}", "white": "A", "black": "B", "round": "1", "board_no": 1},
                 "moves": moves, "result": "*"}
        hall = Hall(prefix=PREFIX)
        hall.handle(f"{PREFIX}/t1/state", json.dumps(state).encode())
        (relayed,) = read_pgn_games(hall.game_pgn("t1") or "")
        assert not relayed.errors, (moves, relayed.errors)
        shown = [m.uci() for m in relayed.mainline_moves()]
        if "FEN" in relayed.headers and last_illegal:
            restarted += 1
            assert shown == moves[len(moves) - len(shown):] and len(shown) >= len(moves) - last_illegal
        else:
            assert shown == moves[:len(shown)]
    assert restarted > 20  # the restart form is the usual case, not an exception


def test_hall_counts_bad_payloads_and_survives() -> None:
    hall = Hall(prefix=PREFIX)
    assert hall.handle(f"{PREFIX}/t1/state", b"{not json") is None
    assert hall.handle(f"{PREFIX}/t1/state", json.dumps({"v": 1, "fen": "x"}).encode()) is None
    assert hall.handle(f"{PREFIX}/t1/pgn", b"\xff\xfe") is None
    assert hall.handle(f"{PREFIX}/t1/state", b"") is None
    assert hall.handle("other/t1/state", b"{}") is None
    assert hall.rejected == 3
    assert hall.rounds() == {}


def test_hall_gap_detection_and_takeback_clocks(pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    steps = Feed(game, prefix=PREFIX, session=1).publications()
    hall = Hall(prefix=PREFIX)
    for step in steps[:5] + steps[7:9]:  # steps 5 and 6 lost
        for topic, payload, _, _ in step:
            hall.handle(topic, payload)
    assert hall.gaps >= 1
    (parsed,) = read_pgn_games(hall.round_pgn(3))
    assert [n.move for n in parsed.mainline()] == game.moves[:8]
    assert [n.clock() for n in parsed.mainline()] == game.clocks[:8]


def test_config_pairings_override_round_and_tags(tmp_path: Path, pgn_dir: Path) -> None:
    import tomllib

    doc = tomllib.loads("""
[relay]
round = 5
tags = { Site = "Wijk aan Zee NED" }
[[relay.boards]]
board = "t1"
board_no = 7
white_fide_id = "1503014"
[relay.lichess]
round_id = "abcd1234"
token = "lip_x"
rounds = { 6 = "efgh5678" }
""")
    config = relay_config(doc, MqttSettings(prefix=PREFIX))
    assert config.slots["t1"] == GameSlot(round=5, board_no=7, tags={"WhiteFideId": "1503014"})
    assert config.lichess_round_id == "abcd1234"
    relay = Relay(config)
    assert {n: p.url.rsplit("/", 2)[1] for n, p in relay.pushers.items()} == {5: "abcd1234", 6: "efgh5678"}
    (game,) = round_of(pgn_dir, boards=1)
    hall = Hall(prefix=PREFIX, slots=config.slots, tags=config.tags)
    for step in Feed(game, prefix=PREFIX).publications(upto=3):
        for topic, payload, _, _ in step:
            hall.handle(topic, payload)
    (parsed,) = read_pgn_games(hall.round_pgn(5))
    assert parsed.headers["Round"] == "5.7"
    assert parsed.headers["Board"] == "7"
    assert parsed.headers["WhiteFideId"] == "1503014"
    assert parsed.headers["Site"] == "Wijk aan Zee"  # the board's own PGN tag wins over the hall default
    # lichess holds at most 64 games a round: a 101-board round is cut (and logged) without a second round id.
    (real,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    for n in range(101):
        g = script(real, board=f"m{n}", board_no=n + 1, round_no=6, seed=n, max_plies=2)
        for step in Feed(g, prefix=PREFIX).publications(upto=2):
            for topic, payload, _, _ in step:
                relay.take(topic, payload)
    assert len(read_pgn_games(relay.hall.round_pgn(6))) == 101
    pushed = read_pgn_games(relay.pushers[6].source())
    assert len(pushed) == 64 and pushed[-1].headers["Board"] == "64"


def test_etag_matching() -> None:
    assert etag_matches('"abc"', '"abc"')
    assert etag_matches('W/"abc", "x"', '"abc"')
    assert etag_matches("*", '"abc"')
    assert not etag_matches('"abd"', '"abc"')
    assert not etag_matches(None, '"abc"')


# --- HTTP ---------------------------------------------------------------------------------------


async def test_http_etag_200_304_then_new_etag_after_a_move(pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    steps = Feed(game, prefix=PREFIX).publications()
    hall = Hall(prefix=PREFIX)
    for step in steps[:4]:
        for topic, payload, _, _ in step:
            hall.handle(topic, payload)
    server = PgnHttpServer(hall)
    async with TestClient(TestServer(server.app)) as client:
        for url in ("/round-3/games.pgn", "/round-3/game-1.pgn"):
            first = await client.get(url)
            assert first.status == 200
            assert first.headers["Cache-Control"] == "no-cache"
            etag = first.headers["ETag"]
            assert etag.startswith('"') and not etag.startswith("W/")
            body = await first.text()
            again = await client.get(url, headers={"If-None-Match": etag})
            assert again.status == 304
            assert await again.read() == b""
            assert again.headers["ETag"] == etag
            for topic, payload, _, _ in steps[4 + (url.endswith("game-1.pgn"))]:
                hall.handle(topic, payload)
            moved = await client.get(url, headers={"If-None-Match": etag})
            assert moved.status == 200
            assert moved.headers["ETag"] != etag
            assert len(await moved.text()) > len(body)
        assert (await client.get("/round-4/games.pgn")).status == 404
        assert (await client.get("/round-3/game-9.pgn")).status == 404
        index = await (await client.get("/rounds.json")).json()
        assert index == {"rounds": {"3": [{"board_no": 1, "board": "t1"}]}}


# --- lichess push ---------------------------------------------------------------------------------


class FakeLichess:
    """Local stand-in for lichess: records pushes, answers with a scripted status sequence."""

    def __init__(self, statuses: list[tuple[int, dict[str, str]]]) -> None:
        self.statuses = statuses
        self.requests: list[tuple[float, str, str, str, str, str]] = []
        self.app = web.Application()
        self.app.add_routes([web.post("/api/broadcast/round/{id}/push", self.push)])

    async def push(self, request: web.Request) -> web.Response:
        body = await request.text()
        self.requests.append((time.monotonic(), request.method, request.path,
                              request.headers.get("Authorization", ""), request.headers.get("Content-Type", ""), body))
        status, headers = self.statuses.pop(0) if self.statuses else (200, {})
        if status == 200:
            games = [{"tags": dict(g.headers), "moves": len(list(g.mainline_moves()))} for g in read_pgn_games(body)]
            return web.json_response({"games": games})
        return web.Response(status=status, text="nope", headers=headers)


async def test_lichess_push_debounces_and_backs_off(pgn_dir: Path) -> None:
    expected = round_of(pgn_dir, boards=3)
    feeds = [Feed(g, prefix=PREFIX).publications() for g in expected]
    hall = Hall(prefix=PREFIX)
    fake = FakeLichess([(500, {}), (500, {}), (429, {"Retry-After": "1"})])
    async with TestServer(fake.app) as server:
        pusher = LichessPusher(source=lambda: hall.round_pgn(3), base=str(server.make_url("")),
                               round_id="abcd1234", token="lip_secret", min_interval=0.2, max_backoff=2.0)
        task = asyncio.create_task(pusher.run())
        try:
            steps = interleave(feeds)
            for topic, payload, _, _ in steps:  # a burst of thousands of changes
                if hall.handle(topic, payload) is not None:
                    pusher.mark()
            await wait_for(lambda: pusher.pushes >= 1, 10)
            burst_requests = len(fake.requests)
            assert burst_requests == 4  # 500, 500, 429, then 200: one request per attempt, not per change
            times = [r[0] for r in fake.requests]
            assert times[1] - times[0] >= 0.18  # backoff after the first 500 (0.2 s, jitter 10 %)
            assert times[2] - times[1] >= 0.36  # doubled after the second
            assert times[3] - times[2] >= 0.95  # Retry-After: 1 honoured
            for _, method, path, auth, ctype, body in fake.requests:
                assert method == "POST"
                assert path == "/api/broadcast/round/abcd1234/push"
                assert auth == "Bearer lip_secret"
                assert ctype.startswith("text/plain")
                assert body == hall.round_pgn(3)
            assert_same_games(fake.requests[-1][5], expected, 3)
            # Nothing changed: no new push. A change: one new push with the latest text.
            pusher.mark()
            await asyncio.sleep(0.5)
            assert len(fake.requests) == burst_requests
            extra = Feed(expected[0], prefix=PREFIX, session=9)
            for topic, payload, _, _ in extra.publications(upto=2)[-1]:
                hall.handle(topic, payload)
            pusher.mark()
            pusher.mark()
            await wait_for(lambda: len(fake.requests) == burst_requests + 1, 5)
            await asyncio.sleep(0.4)
            assert len(fake.requests) == burst_requests + 1
            assert fake.requests[-1][5] == hall.round_pgn(3)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def test_relay_pushes_round_from_mqtt(mosquitto: Broker, pgn_dir: Path) -> None:
    expected = round_of(pgn_dir, boards=2)
    fake = FakeLichess([])
    async with TestServer(fake.app) as server:
        config = RelayConfig(mqtt=MqttSettings(port=mosquitto.port, prefix=PREFIX), http_port=None, default_round=3,
                             lichess_base=str(server.make_url("")).rstrip("/"), lichess_round_id="r0und001",
                             lichess_token="tok", push_interval=0.2)
        async with running_relay(config):
            await publish_all(mosquitto, interleave([Feed(g, prefix=PREFIX).publications() for g in expected]))

            def final() -> bool:
                return bool(fake.requests) and all(
                    g.headers["Result"] != "*" for g in read_pgn_games(fake.requests[-1][5]))

            await wait_for(final)
        assert_same_games(fake.requests[-1][5], expected, 3)
        assert len(fake.requests) < 20


def test_feed_payloads_follow_the_contract(pgn_dir: Path) -> None:
    """The scripted traffic used by these tests passes boardd.core.contract.validate_payload."""
    from boardd.core.contract import validate_payload

    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX)
    publications = [p for step in feed.publications() for p in step]
    publications += [feed.irregularity("3-1", ply=3), feed.cmd_result("web-1"), feed.cmd_result("web-2", ok=False)]
    kinds = set()
    for topic, payload, _, _ in publications:
        kind = topic.rsplit("/", 1)[1]
        if kind == "pgn":
            assert read_pgn_games(payload.decode())
            continue
        kinds.add(kind)
        assert validate_payload(kind, json.loads(payload)) == [], (topic, payload)
    assert kinds == {"status", "event", "state", "move", "clock", "irregularity", "cmd-result"}
