"""The square change's cheaper paths (issue 12, sixth round) give the answers of what they replace.

Each test compares a cheaper computation with the one it stands in for, on the positions of seeded random
games (standard and Chess960), and the engine tests feed seeded simulated games once with the cheaper paths
and once with the former ones swapped back in, comparing every output.
"""

from __future__ import annotations

from collections.abc import Iterator

import chess
import pytest

from boardd.core.engine.common import _fen, _write_fen
from drivers.sim import random_game


def _positions(n_games: int, *, chess960: bool) -> Iterator[chess.Board]:
    for seed in range(n_games):
        game = random_game(seed, max_plies=120, chess960=chess960)
        board = game.board()
        for move in game.mainline_moves():
            yield board
            board = board.copy(stack=False)
            board.push(move)
        yield board


@pytest.mark.parametrize("chess960", [False, True])
def test_fen_is_python_chess_fen(chess960: bool) -> None:
    """``_fen`` (the made-move check's key of the official position) is ``board.fen()``: the en passant square
    only when a capture there is legal, the castling rights in X-FEN, the clocks."""
    checked = ep = 0
    for board in _positions(8, chess960=chess960):
        expected = board.fen()
        assert _write_fen(board) == expected
        assert _fen(board) == expected
        assert _fen(board) == expected  # (the cached answer)
        ep += board.ep_square is not None
        checked += 1
    assert checked > 500 and ep > 10
