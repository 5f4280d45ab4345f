"""``Engine._minimal_pgn`` (the PGN when :mod:`boardd.core.record` is not there) tags a Chess960 game as the full
record's PGN does (``record.game_pgn``, and the relay's): ``Variant "Chess960"`` with ``SetUp`` and ``FEN``, the
standard array (position 518) included. Without them python-chess (and lichess) read the castling as standard
chess's: Chess960 castling from another array does not even parse.
"""

from __future__ import annotations

import io
import random

import chess
import chess.pgn
import pytest

from boardd.core.record import game_pgn
from tests.core.test_downtime_parity import Restart, _sans

_SETUP_TAGS = ("Variant", "SetUp", "FEN")


def _played(start: chess.Board, sans: str) -> Restart:
    r = Restart(start, random.Random(11))
    r.play(_sans(r.board, sans), seen=True)
    r.finish()
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in r.board.move_stack]
    return r


@pytest.mark.parametrize(("position", "sans"), [
    (518, "e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6"),  # the standard array: castling king g1 and rook h1 -> f1
    (300, "f3 f6 Bf2 Bf7 O-O O-O"),  # QBNRKRBN: the king e1 -> g1, the rook stays on f1
])
def test_a_chess960_game_reads_back_as_chess960(position: int, sans: str) -> None:
    start = chess.Board.from_chess960_pos(position)
    start.chess960 = True
    r = _played(start, sans)
    text = r.engine._minimal_pgn()
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None and not game.errors, text
    assert game.headers.get("Variant") == "Chess960" and game.headers.get("SetUp") == "1"
    assert game.headers.get("FEN") == start.fen()
    assert game.board().chess960
    assert [m.uci() for m in game.mainline_moves()] == [m.uci for m in r.engine.state.moves]
    # the same tags of the start as the full record's PGN
    full = chess.pgn.read_game(io.StringIO(game_pgn(r.engine.state)))
    assert full is not None
    assert {t: full.headers.get(t) for t in _SETUP_TAGS} == {t: game.headers.get(t) for t in _SETUP_TAGS}


def test_a_standard_game_has_no_setup_tags() -> None:
    r = _played(chess.Board(), "e4 e5 Nf3 Nc6 Bc4 Bc5 O-O")
    game = chess.pgn.read_game(io.StringIO(r.engine._minimal_pgn()))
    assert game is not None and not game.errors
    assert all(t not in game.headers for t in _SETUP_TAGS)
    assert not game.board().chess960
    assert [m.uci() for m in game.mainline_moves()] == [m.uci for m in r.engine.state.moves]
