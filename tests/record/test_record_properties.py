"""Property tests of boardd.core.record: random legal games (standard and Chess960) with random clocks."""

from __future__ import annotations

import io
import math
import random

import chess
import chess.pgn
from hypothesis import given, settings
from hypothesis import strategies as st

from boardd.core.record import format_clock, game_pgn
from tests.record.factories import make_state, records_from_moves


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0, max_value=200_000, allow_nan=False))
def test_format_clock_never_overstates_and_reads_back(seconds: float) -> None:
    text = format_clock(seconds)
    hours, minutes, secs = text.split(":")
    value = int(hours) * 3600 + int(minutes) * 60 + float(secs)
    assert 0 <= int(minutes) < 60
    assert 0 <= float(secs) < 60
    assert value <= seconds + 1e-6                      # rounded down (up to float noise)
    resolution = 0.1 if seconds < 10 else 1.0
    assert seconds - value < resolution + 1e-6          # by less than the resolution
    node = chess.pgn.Game().add_variation(chess.Move.from_uci("e2e4"), comment=f"[%clk {text}]")
    assert node.clock() == value


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), chess960=st.booleans(),
       plies=st.integers(min_value=0, max_value=120),
       clocks=st.lists(st.floats(min_value=0, max_value=10_800, allow_nan=False), min_size=1, max_size=16))
def test_random_games_round_trip(seed: int, chess960: bool, plies: int, clocks: list[float]) -> None:
    rng = random.Random(seed)
    start = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
    board = start.copy()
    moves = []
    for _ in range(plies):
        legal = list(board.legal_moves)
        if not legal:
            break
        move = rng.choice(legal)
        board.push(move)
        moves.append(move)
    records, final = records_from_moves(
        start, moves, clock=lambda i, _side: (clocks[i % len(clocks)], clocks[(i + 1) % len(clocks)]))
    state = make_state(records, start_fen=start.fen(), chess960=chess960)
    text = game_pgn(state)
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert game.errors == []
    assert list(game.mainline_moves()) == moves
    assert game.end().board().fen() == final.fen()
    assert game.board().chess960 == chess960
    for record, node in zip(records, game.mainline(), strict=True):
        remaining = record.clock_white if record.side == chess.WHITE else record.clock_black
        assert remaining is not None
        assert node.clock() is not None
        assert math.isclose(node.clock() or 0.0, _read(format_clock(remaining)))
        assert node.emt() is not None


def _read(text: str) -> float:
    hours, minutes, secs = text.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(secs)
