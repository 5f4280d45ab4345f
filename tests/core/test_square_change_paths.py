"""The square change's cheaper paths (issue 12, sixth round) give the answers of what they replace.

Each test compares a cheaper computation with the one it stands in for, on the positions of seeded random
games (standard and Chess960), and the engine tests feed seeded simulated games once with the cheaper paths
and once with the former ones swapped back in, comparing every output.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import chess
import pytest

from boardd.core.engine.common import _fen, _write_fen
from boardd.core.recognizer import PositionIndex
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


_CASTLING_FENS = (
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "r3k2r/8/8/8/8/5q2/8/R3K2R w KQkq - 0 1",  # f1 attacked: O-O-O only
    "r3k2r/8/8/8/8/8/4q3/R3K2R w KQkq - 0 1",  # in check: none
    "r3k2r/8/8/8/8/8/8/RN2K1NR w KQkq - 0 1",  # blocked
    "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1",
)


def _castling_boards() -> Iterator[chess.Board]:
    yield from (chess.Board(fen) for fen in _CASTLING_FENS)
    yield from _positions(10, chess960=False)
    rng = random.Random(3)
    between = [chess.B1, chess.C1, chess.D1, chess.F1, chess.G1, chess.B8, chess.C8, chess.D8, chess.F8, chess.G8]
    for _ in range(200):  # the start position with pieces between king and rooks taken off at random
        board = chess.Board()
        for sq in rng.sample(between, k=rng.randint(2, len(between))):
            board.remove_piece_at(sq)
        for sq in rng.sample([chess.D2, chess.E2, chess.F2, chess.D7, chess.E7, chess.F7], k=2):
            board.remove_piece_at(sq)  # (open lines: a castling through or out of check)
        board.turn = rng.random() < 0.5
        board.push(next(iter(board.legal_moves)))
        yield board


def test_castling_targets_are_the_targets_castlings() -> None:
    """``_castling_targets`` (the quick move's answer when two own pieces left their squares) holds exactly the
    castling entries of ``targets``; and no other legal move changes four squares or empties two own squares."""
    castled = 0
    for board in _castling_boards():
        index = PositionIndex(board)
        fresh = PositionIndex(board)
        expected = {key: move for key, move in index.targets.items() if board.is_castling(move)}
        assert fresh._castling_targets() == expected, board.fen()
        castled += len(expected)
        own = board.occupied_co[board.turn]
        for key, move in index.targets.items():
            if board.is_castling(move):
                continue
            changed = 0
            for a, b in zip(key, index.key, strict=True):
                changed |= a ^ b
            assert changed.bit_count() < 4 and (changed & own).bit_count() < 2, (board.fen(), move.uci())
    assert castled > 100


@pytest.mark.parametrize("chess960", [False, True])
def test_masked_moves_from_no_own_piece_are_none(chess960: bool) -> None:
    """``_legal_moves_masked`` answers at once when no piece of the side to move stands on the origin mask."""
    for board in _positions(4, chess960=chess960):
        index = PositionIndex(board)
        empty_or_theirs = ~board.occupied_co[board.turn] & chess.BB_ALL
        for mask in (empty_or_theirs, empty_or_theirs & chess.BB_RANK_4, chess.BB_SQUARES[chess.E4] & empty_or_theirs):
            assert index._legal_moves_masked(mask, chess.BB_ALL) == list(board.generate_legal_moves(mask)) == []
