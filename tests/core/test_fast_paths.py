"""The engine's fast paths (issue 12, fifth round) give the answers of the full paths they stand in for.

Each fast path either answers the same question with work done once per position
(``PositionIndex.is_legal``, ``PositionIndex.capture_targets``, ``PositionIndex._legal_moves_masked``), answers
only the part of it that its caller asks (``PositionIndex.legal_move``, ``key_after``, ``MadeMoves._after_shows``:
a legal move or not, without classifying the rest), or proves cheaply that a check has nothing to say
(``TwoHands.far_lift_seen``). The engine tests below run
seeded simulated games (every handling profile, injected irregularities, Chess960) once with the fast paths
and once with them replaced by the full paths, and compare every output.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.made_moves import MadeMoves
from boardd.core.engine.two_hands import TwoHands
from boardd.core.events import Event
from boardd.core.outputs import Output
from boardd.core.recognizer import DiffClass, PhysicalBoard, PositionIndex, board_key, key_after
from drivers.sim import Injection, InjectionKind, random_game, simulate_game


def _positions(n_games: int, *, chess960: bool) -> Iterator[chess.Board]:
    for seed in range(n_games):
        game = random_game(seed, max_plies=120, chess960=chess960)
        board = game.board()
        for move in game.mainline_moves():
            yield board
            board = board.copy(stack=False)
            board.push(move)
        yield board


def _all_moves(board: chess.Board) -> Iterator[chess.Move]:
    """Every from/to pair (and the promotions), legal or not: what a physical board may show."""
    for origin in chess.SQUARES:
        for target in chess.SQUARES:
            if origin != target:
                yield chess.Move(origin, target)
                if board.piece_type_at(origin) == chess.PAWN and chess.square_rank(target) in (0, 7):
                    yield chess.Move(origin, target, promotion=chess.QUEEN)


@pytest.mark.parametrize("chess960", [False, True])
def test_index_is_legal_is_python_chess_is_legal(chess960: bool) -> None:
    checked = in_check = 0
    for board in _positions(6, chess960=chess960):
        index = PositionIndex(board)
        in_check += board.is_check()
        for move in _all_moves(board):
            assert index.is_legal(move) == board.is_legal(move), (board.fen(), move.uci())
            checked += 1
    assert checked > 100_000 and in_check > 5


@pytest.mark.parametrize("chess960", [False, True])
def test_masked_legal_moves_are_python_chess_in_its_order(chess960: bool) -> None:
    rng = random.Random(5)
    checked = 0
    for board in _positions(6, chess960=chess960):
        index = PositionIndex(board)
        masks = [(chess.BB_ALL, chess.BB_ALL)]
        for _ in range(12):
            few = 0
            for sq in rng.sample(chess.SQUARES, k=rng.randint(1, 5)):
                few |= chess.BB_SQUARES[sq]
            masks += [(few, chess.BB_ALL), (chess.BB_ALL, few)]
        for from_mask, to_mask in masks:
            expected = list(board.generate_legal_moves(from_mask, to_mask))
            assert index._legal_moves_masked(from_mask, to_mask) == expected, (board.fen(), from_mask, to_mask)
            checked += 1
    assert checked > 10_000


def test_key_after_is_the_key_after_the_push() -> None:
    plain = special = 0
    for board in [*_positions(6, chess960=False), *_positions(3, chess960=True)]:
        for move in board.legal_moves:
            after = board.copy(stack=False)
            after.push(move)
            key = key_after(board, move)
            if key is None:
                special += 1
                assert move.promotion or board.is_castling(move) or board.is_en_passant(move), move.uci()
            else:
                plain += 1
                assert key == board_key(after), (board.fen(), move.uci())
    assert plain > 10_000 and special > 50


def _readings(board: chess.Board, rng: random.Random) -> Iterator[PhysicalBoard]:
    """Physical boards around *board*: after each legal move, and with one to four squares changed at random."""
    for move in board.legal_moves:
        after = board.copy(stack=False)
        after.push(move)
        yield PhysicalBoard(after)
    pieces = [None, *(chess.Piece(t, c) for t in chess.PIECE_TYPES for c in chess.COLORS)]
    for _ in range(30):
        phys = PhysicalBoard(board)
        for sq in rng.sample(chess.SQUARES, k=rng.randint(1, 4)):
            phys.set(sq, rng.choice(pieces))
        yield phys


def test_legal_move_is_what_classify_calls_legal() -> None:
    rng = random.Random(7)
    legal = other = 0
    for board in [*_positions(4, chess960=False), *_positions(2, chess960=True)]:
        for targets in (False, True):
            index = PositionIndex(board)
            if targets:
                index.targets  # noqa: B018 (the targets made first: the look-up path)
            for phys in _readings(board, rng):
                diff = PositionIndex(board).classify(phys)
                expected = diff.move if diff.kind is DiffClass.LEGAL else None
                assert index.legal_move(phys) == expected, (board.fen(), phys.key())
                legal += expected is not None
                other += expected is None
    assert legal > 5_000 and other > 5_000


def _capture_targets_by_attackers(board: chess.Board) -> int:
    """The definition: the opponent pieces the side to move attacks, square by square (and the e.p. victim)."""
    turn = board.turn
    bb = 0
    for sq in chess.scan_reversed(board.occupied_co[not turn]):
        if board.is_attacked_by(turn, sq):
            bb |= 1 << sq
    if board.ep_square is not None:
        bb |= 1 << (board.ep_square - 8 if turn == chess.WHITE else board.ep_square + 8)
    return bb


def test_capture_targets_are_the_attacked_opponent_pieces() -> None:
    rng = random.Random(12)
    boards = list(_positions(8, chess960=False)) + list(_positions(4, chess960=True))
    for board in boards:
        assert PositionIndex(board).capture_targets == _capture_targets_by_attackers(board), board.fen()
        # and with pieces taken off at random (positions no game reaches: the physical board's)
        sparse = board.copy(stack=False)
        for sq in rng.sample(list(chess.scan_forward(sparse.occupied & ~sparse.kings)), k=3):
            sparse.remove_piece_at(sq)
        sparse.ep_square = None
        assert PositionIndex(sparse).capture_targets == _capture_targets_by_attackers(sparse), sparse.fen()


def _outputs(events: list[Event]) -> list[Output]:
    engine = Engine()
    outs: list[Output] = []
    for event in events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            outs += engine.advance(deadline)
        outs += engine.feed(event)
    while (deadline := engine.next_deadline()) is not None:
        outs += engine.advance(deadline)
    outs.append(engine.state)  # type: ignore[arg-type]  # the final state, compared whole
    return outs


def _games() -> Iterator[list[Event]]:
    kinds = list(InjectionKind)
    for seed in range(36):
        profile = ("clean", "casual", "clumsy")[seed % 3]
        game = random_game(1000 + seed, max_plies=60, chess960=seed % 6 == 5)
        injections = [Injection(kinds[seed % len(kinds)], 7 + seed % 11)] if seed % 2 else []
        try:
            yield simulate_game(game, seed=seed, profile=profile, injections=injections).events
        except Exception:  # an injection that does not fit the game: the game without it
            yield simulate_game(game, seed=seed, profile=profile).events


def _full_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PositionIndex, "is_legal", lambda self, move: self.board.is_legal(move))
    monkeypatch.setattr(PositionIndex, "capture_targets",
                        property(lambda self: _capture_targets_by_attackers(self.board)))
    monkeypatch.setattr(TwoHands, "far_lift_seen", lambda self, at, sq, side: True)
    monkeypatch.setattr(MadeMoves, "_after_shows", lambda self, unsettled, *, legal: self._after_unsettled(
        unsettled).classify(self.g.phys).kind is (DiffClass.LEGAL if legal else DiffClass.NONE))
    monkeypatch.setattr(PositionIndex, "_legal_moves_masked",
                        lambda self, from_mask, to_mask: list(self.board.generate_legal_moves(from_mask, to_mask)))


def test_engine_fast_paths_equal_full_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    games = list(_games())
    fast = [_outputs(events) for events in games]
    _full_paths(monkeypatch)
    full = [_outputs(events) for events in games]
    assert sum(len(outs) for outs in fast) > 2000
    for index, (a, b) in enumerate(zip(fast, full, strict=True)):
        assert a == b, f"game {index}"


def test_full_paths_are_really_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above is not vacuous: with a wrong stand-in, outputs do differ."""
    games = list(_games())[:12]
    fast = [_outputs(events) for events in games]
    monkeypatch.setattr(PositionIndex, "capture_targets", property(lambda self: 0))
    monkeypatch.setattr(TwoHands, "far_lift_seen", lambda self, at, sq, side: False)
    monkeypatch.setattr(MadeMoves, "_after_shows", lambda self, unsettled, *, legal: False)
    assert [_outputs(events) for events in games] != fast
