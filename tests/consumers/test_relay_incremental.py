"""The relay's broadcast PGN kept move by move (issue 12) equals the one rebuilt from the start, byte for byte.

``Hall.game_pgn`` extends each board's walk of the record and its movetext, re-writing from the first ply whose
move, clock or comment changed; ``build_game_pgn`` rebuilds the game through python-chess's exporter. The
messages are those of the daemon's publisher for records that grow, change their last clocks, are retracted
and put back, get illegal moves that stand (the broadcast then restarts after them), null moves and game ends,
with move messages carrying other clocks, in standard, Chess960 and set-up games, with hall and slot tags.
"""

from __future__ import annotations

import json
import random

import pytest

from boardd.consumers.relay import GameSlot, Hall, build_game_pgn
from boardd.core.contract import Publisher
from boardd.core.outputs import GameState
from tests.record.test_incremental import _random_walk


def _feed(board: str, publisher: Publisher, state: GameState, rng: random.Random) -> list[tuple[str, bytes]]:
    """The messages of one state: sometimes a move message with other clocks, the state, the PGN."""
    messages: list[tuple[str, bytes]] = []
    if state.moves and rng.random() < 0.4:
        last = state.moves[-1]
        side = "white" if last.side else "black"
        clock = rng.choice([None, {"white": rng.uniform(0, 600), "black": rng.uniform(0, 600)}])
        body = {"v": 1, "board": board, "session": 1, "seq": publisher.seq + 1, "ts": "2026-11-21T18:33:02.125Z",
                "ply": last.ply, "uci": last.uci, "san": last.san, "side": side, "clock": clock,
                "emt": rng.choice([None, rng.uniform(0, 60)])}
        publisher._seq += 1   # the move message takes its seq in the publisher's sequence
        messages.append((f"boardd/{board}/move", json.dumps(body).encode()))
    state_pub, pgn_pub = publisher.snapshot(state, at=1000.0)
    messages.append((state_pub.topic, state_pub.payload_bytes()))
    if rng.random() < 0.9:   # a PGN can be lost (or arrive later): the move messages' clocks then stand
        messages.append((pgn_pub.topic, pgn_pub.payload_bytes()))
    return messages


def _check(hall: Hall, board: str) -> None:
    kept = hall.game_pgn(board)
    record = hall.boards[board]
    slot = hall.slot_of(board)
    if record.state is None:   # a PGN before any state: nothing to build yet
        assert kept is None
        return
    assert slot is not None and kept is not None
    roster = hall.roster_tags(board, slot)
    if roster:
        slot = GameSlot(round=slot.round, board_no=slot.board_no, tags={**roster, **slot.tags})
    assert kept == build_game_pgn(record, slot, hall.tags)


@pytest.mark.parametrize("seed", range(24))
def test_broadcast_kept_equals_rebuilt(seed: int) -> None:
    rng = random.Random(seed)
    tags = rng.choice([{}, {"Site": "Wijk aan Zee", "Annotator": "boardd"}, {"Variant": "Standard"}])
    slots = {"t1": GameSlot(round=3, board_no=7, tags=rng.choice([{}, {"WhiteElo": "2800", "GameId": "x1"}]))} \
        if seed % 3 == 0 else {}
    hall = Hall(prefix="boardd", slots=slots, tags=tags)
    publisher = Publisher(board="t1")
    checked = 0
    for state in _random_walk(seed, 140):
        for topic, payload in _feed("t1", publisher, state, rng):
            update = hall.handle(topic, payload)
            if update is not None and update.record_changed and rng.random() < 0.7:
                _check(hall, "t1")
                checked += 1
    _check(hall, "t1")
    assert checked > 50


def test_a_new_game_on_the_board_starts_afresh() -> None:
    rng = random.Random(5)
    hall = Hall(prefix="boardd")
    publisher = Publisher(board="t1")
    for seed in (1, 2, 3):
        for state in _random_walk(seed, 60):
            for topic, payload in _feed("t1", publisher, state, rng):
                hall.handle(topic, payload)
            _check(hall, "t1")
