"""The relay's broadcast of a game without a clock in which a player moved twice (R13): the out-of-turn entry
(``legal=false``, ``out_of_turn``) leaves the opponent to move, as the daemon's record does.

The state tells the entries apart: ``illegal_plies`` lists every entry that is no legal move, ``out_of_turn_plies``
those made on the opponent's turn (docs/mqtt-additions.md). Before: the relay read the out-of-turn bishop move
as an illegal move of the side to move, set up the position after it with the wrong side to move, and the
broadcast stopped before the opponent's reply (nothing of the game after the incident was shown).
"""

from __future__ import annotations

import json
import random

import chess
import pytest

from boardd.consumers.relay import GameSlot, Hall, build_game_pgn
from boardd.core.contract import Publisher
from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo
from boardd.core.settings import RulesConfig
from tests.consumers.feed import read_pgn_games
from tests.core.test_noclock_illegal import BN, WB, WP, _feed, _sq
from tests.core.test_noclock_twice import _opening


def _engine(seed: int, *, third: bool) -> Engine:
    """1.e4 e5 2.Nf3, 3.Bc4 on Black's turn (and d2-d3, a third move), then Black's Nc6 and White's next move."""
    rng = random.Random(seed)
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023, white="A", black="B"))
    events: list[Event]
    events, put = _opening(rng)
    t = round(put + rng.uniform(1.0, 3.0), 3)
    if third:
        events += [_sq(t, "d2", None), _sq(t + 0.4, "d3", WP)]
        t += 3.0
    events += [_sq(t, "b8", None), _sq(t + 0.3, "c6", BN)]
    if third:
        events += [_sq(t + 3.0, "c1", None), _sq(t + 3.3, "e3", WB)]
    else:
        events += [_sq(t + 3.0, "d2", None), _sq(t + 3.3, "d3", WP)]
    _feed(engine, events, t + 30.0)
    return engine


@pytest.mark.parametrize("third", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_broadcast_goes_on_after_a_move_out_of_turn(seed: int, third: bool) -> None:
    engine = _engine(seed, third=third)
    records = engine.state.moves
    oot = [m.ply for m in records if m.out_of_turn]
    assert oot == ([4, 5] if third else [4])
    publisher = Publisher(board="t1", prefix="hall1")
    state_pub, pgn_pub = publisher.snapshot(engine.state, at=1000.0)
    state = json.loads(state_pub.payload_bytes())
    assert state["illegal_plies"] == oot and state["out_of_turn_plies"] == oot
    hall = Hall(prefix="hall1")
    hall.handle(state_pub.topic, state_pub.payload_bytes())
    hall.handle(pgn_pub.topic, pgn_pub.payload_bytes())
    kept = hall.game_pgn("t1")
    assert kept is not None
    (relayed,) = read_pgn_games(kept)
    assert not relayed.errors
    last = records[oot[-1] - 1]
    shown, daemon = chess.Board(relayed.headers["FEN"]), chess.Board(last.fen_after)
    assert (shown.board_fen(), shown.turn, shown.fullmove_number) == (daemon.board_fen(), chess.BLACK,
                                                                       daemon.fullmove_number)
    assert [m.uci() for m in relayed.mainline_moves()] == [m.uci for m in records[oot[-1]:]]
    assert "A move out of turn stood" in relayed.comment and "Bf1-c4 (out of turn)" in relayed.comment
    record = hall.boards["t1"]
    slot = hall.slot_of("t1") or GameSlot(round=None, board_no=None, tags={})
    record.reader = None
    assert kept == build_game_pgn(record, slot, hall.tags)  # the kept walk and the rebuild agree


def test_a_state_without_moves_out_of_turn_has_no_such_field() -> None:
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    _feed(engine, [_sq(1.0, "e2", None), _sq(1.4, "e4", WP)], 5.0)
    state_pub, _ = Publisher(board="t1").snapshot(engine.state, at=10.0)
    assert "out_of_turn_plies" not in json.loads(state_pub.payload_bytes())
