"""The next game: after a game end, pieces set up in the start position again (``auto_new_game``)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path

import chess

from boardd.daemon.journal import Journal
from tests.daemon._helpers import consumer, write_config
from tests.daemon._world import Step, script
from tests.daemon.test_daemon_mqtt import TEMPO, daemon, state_moves
from tests.mosquitto import Broker

MATE = ["f2f3", "e7e5", "g2g4", "d8h4"]  # fool's mate: the game ends on the board, 0-1
NEXT = ["d2d4", "d7d5", "c2c4"]
#: The mate position back to the start: (square, piece placed or None for a lift).
RESET = [(chess.H4, None), (chess.D8, "q"), (chess.G4, None), (chess.G2, "P"), (chess.E5, None), (chess.E7, "p"),
         (chess.F3, None), (chess.F2, "P")]


def mate_reset_next() -> list[Step]:
    """Fool's mate, the pieces put back one by one, then d4 d5 c4 (all with clock presses)."""
    steps = script(MATE, seed=1)
    t = steps[-1].t + 1.0
    for square, piece in RESET:
        t += 0.3
        steps.append(Step(t, "sq", square, piece))
    t += 1.0
    steps += [dataclasses.replace(s, t=s.t + t) for s in script(NEXT, seed=2)]
    return steps


async def test_start_position_after_a_game_end_starts_the_next_game(tmp_path: Path, mosquitto: Broker) -> None:
    cfg = write_config(tmp_path, mosquitto.port, tempo=TEMPO, game="auto_new_game = true")
    async with consumer(mosquitto.port) as c, daemon(cfg, mate_reset_next(), tmp_path / "world.json", TEMPO):
        await c.wait_for(lambda: state_moves(c) == NEXT and c.moves("completed")[-len(NEXT):] == NEXT, 30,
                         "the next game's moves")
        first = next(p for p in c.of("event") if p["type"] == "GAME_END")
        starts = [p for p in c.of("event") if p["type"] == "GAME_START"]
        set_up = [p for p in c.of("event") if p["type"] == "START_POSITION_SET_UP"]
    assert first["result"] == "0-1"
    assert len(set_up) == 1 and set_up[0]["new_game"] == "started"
    assert len(starts) == 2 and starts[1]["game_id"] == set_up[0]["next_game_id"] != set_up[0]["game_id"]
    state = c.retained["state"]
    assert state["game"]["id"] == starts[1]["game_id"] and state["result"] == "*"
    # like a new-game command without fields: players reset, round and board number kept
    assert (state["game"]["white"], state["game"]["black"]) == ("?", "?")
    assert (state["game"]["round"], state["game"]["board_no"], state["game"]["time_control"]) == ("1", 1, "300+0")
    assert c.moves("completed")[-len(NEXT):] == NEXT
    j = Journal.open(tmp_path / "state" / "t1.sqlite")
    games = j.games()
    assert [g.id for g in games][-2:] == [set_up[0]["game_id"], starts[1]["game_id"]]
    assert games[-2].result == "0-1"


async def test_without_auto_new_game_the_arbiter_is_told_and_nothing_starts(tmp_path: Path,
                                                                            mosquitto: Broker) -> None:
    cfg = write_config(tmp_path, mosquitto.port, tempo=TEMPO)  # auto_new_game defaults to false
    steps = mate_reset_next()
    async with consumer(mosquitto.port) as c, daemon(cfg, steps, tmp_path / "world.json", TEMPO):
        started = time.monotonic()
        await c.wait_for(lambda: any(p["type"] == "START_POSITION_SET_UP" for p in c.of("event")), 30,
                         "the start position reported")
        game_id = c.retained["state"]["game"]["id"]
        # the next game's moves are played on the board (the whole script): they are not recorded
        await asyncio.sleep(max(0.0, started + steps[-1].t / TEMPO + 1.0 - time.monotonic()))
    assert any(p["code"] == "MOVE_AFTER_GAME_END" for p in c.of("irregularity"))
    [set_up] = [p for p in c.of("event") if p["type"] == "START_POSITION_SET_UP"]
    assert set_up["new_game"] == "awaiting new-game command" and set_up["game_id"] == game_id
    assert set_up["result"] == "0-1" and "next_game_id" not in set_up
    assert len([p for p in c.of("event") if p["type"] == "GAME_START"]) == 1
    assert state_moves(c) == MATE and c.retained["state"]["game"]["id"] == game_id
