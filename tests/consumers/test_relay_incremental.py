"""The relay's broadcast PGN kept move by move (issue 12) equals the one rebuilt from the start, byte for byte.

``Hall.game_pgn`` extends each board's walk of the record and its movetext, re-writing from the first ply whose
move, clock or comment changed; ``build_game_pgn`` rebuilds the game through python-chess's exporter. The
messages are those of the daemon's publisher for records that grow, change their last clocks, are retracted
and put back, get illegal moves that stand (the broadcast then restarts after them), null moves and game ends,
with move messages carrying other clocks, in standard, Chess960 and set-up games, with hall and slot tags.
"""

from __future__ import annotations

import dataclasses
import io
import json
import random

import chess
import chess.pgn
import pytest

from boardd.consumers.relay import GameSlot, Hall, _PgnReader, _read_pgn, build_game_pgn
from boardd.core.contract import Publisher
from boardd.core.outputs import GameState
from boardd.core.record import game_pgn
from drivers.sim import random_game
from tests.record.factories import make_state, records_from_moves
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


def _check(hall: Hall, reference: Hall, board: str) -> None:
    """The kept broadcast PGN == the one *reference* (fed the same messages) rebuilds after reading each PGN
    text whole (the relay before issue 12)."""
    kept = hall.game_pgn(board)
    record = reference.boards[board]
    slot = reference.slot_of(board)
    if record.state is None:   # a PGN before any state: nothing to build yet
        assert kept is None
        return
    assert slot is not None and kept is not None
    roster = reference.roster_tags(board, slot)
    if roster:
        slot = GameSlot(round=slot.round, board_no=slot.board_no, tags={**roster, **slot.tags})
    record.reader = None   # a fresh reader reads the text whole and takes every clock of it
    assert kept == build_game_pgn(record, slot, reference.tags)
    assert hall.boards[board].pgn_headers == record.pgn_headers
    assert hall.boards[board].comments == record.comments
    assert hall.boards[board].clocks == record.clocks


@pytest.mark.parametrize("seed", range(24))
def test_broadcast_kept_equals_rebuilt(seed: int) -> None:
    rng = random.Random(seed)
    tags = rng.choice([{}, {"Site": "Wijk aan Zee", "Annotator": "boardd"}, {"Variant": "Standard"}])
    slots = {"t1": GameSlot(round=3, board_no=7, tags=rng.choice([{}, {"WhiteElo": "2800", "GameId": "x1"}]))} \
        if seed % 3 == 0 else {}
    hall = Hall(prefix="boardd", slots=slots, tags=tags)
    reference = Hall(prefix="boardd", slots=slots, tags=tags)
    publisher = Publisher(board="t1")
    checked = 0
    for state in _random_walk(seed, 140):
        for topic, payload in _feed("t1", publisher, state, rng):
            update = hall.handle(topic, payload)
            reference.handle(topic, payload)
            if update is not None and update.record_changed and rng.random() < 0.7:
                _check(hall, reference, "t1")
                checked += 1
    _check(hall, reference, "t1")
    assert checked > 50


@pytest.mark.parametrize("seed", range(6))
def test_broadcast_of_a_chess960_game_from_the_standard_array_kept_equals_rebuilt(seed: int) -> None:
    # position 518 is the classical array: the broadcast states it (FEN, SetUp) like any other Chess960 start
    rng = random.Random(seed)
    hall, reference = Hall(prefix="boardd"), Hall(prefix="boardd")
    publisher = Publisher(board="t1")
    with_fen = 0
    for state in _random_walk(seed, 140, chess960_pos=518):
        for topic, payload in _feed("t1", publisher, state, rng):
            update = hall.handle(topic, payload)
            reference.handle(topic, payload)
            if update is not None and update.record_changed:
                _check(hall, reference, "t1")
                text = hall.game_pgn("t1")
                if text is None:   # a PGN before any state
                    continue
                game = chess.pgn.read_game(io.StringIO(text))
                assert game is not None and game.headers["Variant"] == "Chess960" and game.board().chess960
                assert game.headers.get("SetUp") == "1" and "FEN" in game.headers
                with_fen += game.headers["FEN"] == chess.STARTING_FEN
    assert with_fen > 10


def test_a_new_game_on_the_board_starts_afresh() -> None:
    rng = random.Random(5)
    hall, reference = Hall(prefix="boardd"), Hall(prefix="boardd")
    publisher = Publisher(board="t1")
    for seed in (1, 2, 3):
        for state in _random_walk(seed, 60):
            for topic, payload in _feed("t1", publisher, state, rng):
                hall.handle(topic, payload)
                reference.handle(topic, payload)
            _check(hall, reference, "t1")


@pytest.mark.parametrize("seed", range(16))
def test_pgn_read_move_by_move_equals_read_whole(seed: int) -> None:
    # The daemon's successive PGN texts, and now and then a foreign one (a variation, a NAG, a comment over
    # two lines, another start position, a text without tags): what the reader keeps is what python-chess
    # reads from the whole text.
    rng = random.Random(seed)
    reader = _PgnReader()
    incremental = 0
    for state in [*_random_walk(seed, 120), *_long_game(seed)]:
        text = game_pgn(state)
        roll = rng.random()
        if roll < 0.03:
            text = text.replace(" } ", " } ( 1. e4 ) ", 1)
        elif roll < 0.06:
            text = text.replace(" } ", " } $1 ", 1)
        elif roll < 0.08:
            text = text.replace("[%clk", "\n[%clk", 1)
        elif roll < 0.09:
            text = text[text.index("\n\n") + 2:]
        elif roll < 0.1:
            text = text.replace("[Event", '[FEN "4k3/8/8/8/8/8/8/4K2R w K - 0 1"]\n[Event', 1)
        expected = _read_pgn(text)
        parsed = reader.read(text)
        if expected is None:
            assert parsed is None
            continue
        assert parsed is not None
        incremental += parsed.fresh is not None
        assert (parsed.headers, parsed.comments, parsed.clocks) == (expected[0].headers, expected[0].comments,
                                                                   expected[0].clocks)
        assert (parsed.error is None) == (expected[0].error is None)
        if parsed.fresh is not None:
            assert set(parsed.fresh) <= set(parsed.clocks)
    assert incremental > 60


def _long_game(seed: int) -> list[GameState]:
    """The states of a game of 150 plies played without incident, each move made, then completed."""
    game = random_game(seed, max_plies=150)
    records, _ = records_from_moves(chess.Board(), list(game.mainline_moves()))
    states = []
    for index, record in enumerate(records):
        made = dataclasses.replace(record, clock_white=None, clock_black=None, emt=None, completed_at=None,
                                   completion=None)
        states.append(make_state([*records[:index], made], result="*"))
        states.append(make_state(records[:index + 1], result="1-0" if index == len(records) - 1 else "*"))
    return states
