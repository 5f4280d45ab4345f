"""The square change's cheaper paths (issue 12, sixth round) give the answers of what they replace.

Each test compares a cheaper computation with the one it stands in for, on the positions of seeded random
games (standard and Chess960), and the engine tests feed seeded simulated games once with the cheaper paths
and once with the former ones swapped back in, comparing every output.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator

import chess
import chess.pgn
import pytest

from boardd.core import recognizer
from boardd.core.engine import made_moves
from boardd.core.engine.common import _change_text, _fen, _write_fen
from boardd.core.engine.state import Game
from boardd.core.events import Content, Event
from boardd.core.outputs import Evidence, IrregularityRaised
from boardd.core.recognizer import Diff, PositionIndex
from drivers.sim import simulate_game
from tests.core.test_fast_paths import _games, _outputs, _positions


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


def _former_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """The square change as it was before this round: python-chess's FEN as the unsettled candidate's key, the
    evidence text written at every change, every legal move's key built for a castling, the Diff's constructor."""
    monkeypatch.setattr(made_moves, "_fen", lambda board: board.fen())

    def note_change(self: Game, at: float, square: int, old: Content, new: Content) -> None:
        self.seg_evidence.append(Evidence(at=at, event=_change_text(square, old, new)))
        if len(self.seg_evidence) > 200:
            del self.seg_evidence[:100]

    monkeypatch.setattr(Game, "note_change", note_change)
    monkeypatch.setattr(PositionIndex, "_castling_targets", lambda self: self.targets)
    monkeypatch.setattr(recognizer, "_diff", lambda kind, move=None, candidates=(), subtype=None, changed=0:
                        Diff(kind, move, candidates, subtype, changed))


#: games with castlings on both wings (the quick move's castling case), each fed under three handling profiles
_CASTLING_GAMES = (
    "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O Nf6 5. d3 O-O 6. Nc3 d6 7. Bg5 h6 8. Bh4 a6",
    "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 5. e3 O-O 6. Qc2 Nbd7 7. O-O-O c5 8. Kb1 b6",
    "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 g6 6. Be3 Bg7 7. f3 O-O 8. Qd2 Nc6 9. O-O-O d5",
)


def _castling_games() -> Iterator[list[Event]]:
    for index, text in enumerate(_CASTLING_GAMES):
        game = chess.pgn.read_game(io.StringIO(text))
        assert game is not None
        for seed, profile in enumerate(("clean", "casual", "clumsy")):
            yield simulate_game(game, seed=10 * index + seed, profile=profile).events


def test_engine_square_change_paths_equal_former_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    games = [*_games(), *_castling_games()]
    now = [_outputs(events) for events in games]
    _former_paths(monkeypatch)
    former = [_outputs(events) for events in games]
    assert sum(len(outs) for outs in now) > 2000
    assert sum(isinstance(o, IrregularityRaised) and bool(o.irregularity.evidence) for outs in now for o in outs) > 50
    for index, (a, b) in enumerate(zip(now, former, strict=True)):
        assert a == b, f"game {index}"


def test_former_paths_are_really_swapped_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above is not vacuous: with wrong stand-ins (no castling recognised, evidence texts lost),
    the outputs differ."""
    games = list(_games())[:12]
    now = [_outputs(events) for events in games]
    monkeypatch.setattr(Game, "note_change", lambda self, at, square, old, new: None)
    assert [_outputs(events) for events in games] != now
    monkeypatch.undo()
    castlings = list(_castling_games())
    now = [_outputs(events) for events in castlings]
    monkeypatch.setattr(PositionIndex, "_castling_targets", lambda self: {})
    assert [_outputs(events) for events in castlings] != now
