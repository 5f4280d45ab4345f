"""The recogniser alone: diff classes of rules-spec §3.2/§3.3 and the illegal-move subtypes of R16."""

from __future__ import annotations

import itertools
import random

import chess
import pytest

from boardd.core.recognizer import DiffClass, PhysicalBoard, PositionIndex, board_key, describe_change, illegal_subtype


def phys_after(fen: str, changes: dict[str, str | None], *, chess960: bool = False) -> tuple[PositionIndex,
                                                                                            PhysicalBoard]:
    board = chess.Board(fen, chess960=chess960)
    phys = PhysicalBoard(board)
    for name, symbol in changes.items():
        phys.set(chess.parse_square(name), None if symbol is None else chess.Piece.from_symbol(symbol))
    return PositionIndex(board), phys


START = chess.STARTING_FEN
E = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
A = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
H = "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3"
J = "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1"


@pytest.mark.parametrize(("fen", "changes", "kind", "detail"), [
    (START, {}, DiffClass.NONE, None),
    (START, {"e2": None}, DiffClass.IN_HAND, None),
    (START, {"e2": None, "e4": "P"}, DiffClass.LEGAL, "e2e4"),
    (START, {"e4": "P"}, DiffClass.PARTIAL, "POSITION_MISMATCH_AT_PRESS"),  # new square before the old one
    (E, {"d5": None}, DiffClass.PARTIAL, "POSITION_MISMATCH_AT_PRESS"),  # captured piece removed first
    (E, {"e4": None, "d5": None}, DiffClass.IN_HAND, None),
    (E, {"e4": None, "d5": "P"}, DiffClass.LEGAL, "e4d5"),
    (A, {"e1": None, "g1": "K"}, DiffClass.PARTIAL, "CASTLING_INCOMPLETE_AT_PRESS"),
    (A, {"e1": None, "g1": "K", "h1": None, "f1": "R"}, DiffClass.LEGAL, "e1g1"),
    (H, {"e5": None, "d6": "P"}, DiffClass.PARTIAL, "EN_PASSANT_INCOMPLETE_AT_PRESS"),
    (H, {"e5": None, "d6": "P", "d5": None}, DiffClass.LEGAL, "e5d6"),
    (J, {"e7": None, "e8": "P"}, DiffClass.PARTIAL, "PAWN_NOT_REPLACED"),
    (J, {"e8": "Q"}, DiffClass.PARTIAL, "PROMOTION_INCOMPLETE_AT_PRESS"),
    (J, {"e7": None, "e8": "N"}, DiffClass.LEGAL, "e7e8n"),
    (START, {"g8": None}, DiffClass.OPP_ONLY, None),
    (START, {"g1": None, "f3": "N", "b1": None, "c3": "N"}, DiffClass.TWO_MOVES, None),
    (START, {"e2": None, "e4": "P", "e7": None, "e5": "p"}, DiffClass.UNRECOGNISED, None),
])
def test_classify(fen: str, changes: dict[str, str | None], kind: DiffClass, detail: str | None) -> None:
    index, phys = phys_after(fen, changes)
    diff = index.classify(phys)
    assert diff.kind is kind
    if kind is DiffClass.LEGAL:
        assert diff.move is not None and diff.move.uci() == detail
    elif kind is DiffClass.PARTIAL:
        assert diff.subtype == detail


@pytest.mark.parametrize(("fen", "changes", "subtype"), [
    ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", {"f1": None, "c5": "B"}, "GEOMETRY"),
    (START, {"f1": None, "c4": "B"}, "BLOCKED"),
    (START, {"a1": None, "a3": "R"}, "BLOCKED"),
    ("4k3/7p/8/8/8/8/4r3/R3K3 w - - 0 1", {"a1": None, "a8": "R"}, "SELF_CHECK"),
    ("4k3/8/8/8/2b5/8/8/4K2R w K - 0 1", {"e1": None, "g1": "K", "h1": None, "f1": "R"}, "CASTLING_ILLEGAL"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1", {"e1": None, "g1": "K", "h1": None, "f1": "R"}, "CASTLING_ILLEGAL"),
    ("r1bqkb1r/ppp1pppp/2n2n2/3pP3/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 2 4", {"e5": None, "d5": None, "d6": "P"},
     "EN_PASSANT_INVALID"),
    (START, {"d1": None, "d2": "Q"}, "OWN_PIECE_CAPTURED"),
    ("4k3/8/8/8/8/8/8/4KR2 w - - 0 1", {"f1": None, "f8": "R", "e8": None}, None),
    ("8/4P1k1/8/8/8/8/8/4K3 w - - 0 1", {"e7": None, "e8": "K"}, "PROMOTION_INVALID_PIECE"),
])
def test_illegal_single_moves(fen: str, changes: dict[str, str | None], subtype: str | None) -> None:
    index, phys = phys_after(fen, changes)
    diff = index.classify(phys)
    if subtype is None:
        assert diff.kind is DiffClass.UNRECOGNISED  # not a single relocation of the mover
        return
    assert diff.kind is DiffClass.ILLEGAL_1, diff
    assert diff.subtype == subtype


def test_illegal_subtype_king_capture_and_promotion_piece() -> None:
    board = chess.Board("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1")
    assert illegal_subtype(board, chess.Move(chess.E7, chess.E8)) == "KING_CAPTURED"
    board = chess.Board("8/4P1k1/8/8/8/8/8/4K3 w - - 0 1")
    assert illegal_subtype(board, chess.Move(chess.E7, chess.E8, promotion=chess.KING)) == "PROMOTION_INVALID_PIECE"


def test_describe_change() -> None:
    board = chess.Board(E)
    phys = PhysicalBoard(board)
    phys.set(chess.E4, None)
    phys.set(chess.D5, chess.Piece(chess.PAWN, chess.WHITE))
    phys.set(chess.H5, chess.Piece(chess.PAWN, chess.BLACK))
    assert describe_change(board, phys.squares) == "e4xd5 +bP h5"


def test_markers_never_match_a_move() -> None:
    from boardd.core.events import Marker

    index, phys = phys_after(START, {"e2": None, "e4": "P"})
    phys.set(chess.A4, Marker.DRAW)
    assert index.classify(phys).kind is DiffClass.UNRECOGNISED


def test_every_legal_move_of_random_positions_is_recognised() -> None:
    """The fast path (move from the changed squares) agrees with the oracle for every legal move."""
    rng = random.Random(1)
    checked = 0
    for game in range(40):
        board = chess.Board() if game % 4 else chess.Board.from_chess960_pos(rng.randrange(960))
        for _ in range(rng.randrange(1, 60)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        index = PositionIndex(board)
        for move in board.legal_moves:
            work = board.copy(stack=False)
            work.push(move)
            phys = PhysicalBoard(work)
            diff = index.classify(phys)
            assert diff.kind is DiffClass.LEGAL, (board.fen(), move)
            assert board_key(work) == board_key(_after(board, diff.move))
            checked += 1
    assert checked > 1000


def _after(board: chess.Board, move: chess.Move | None) -> chess.Board:
    assert move is not None
    work = board.copy(stack=False)
    work.push(move)
    return work


def _intermediate_states(board: chess.Board, move: chess.Move) -> list[list[chess.Piece | None]]:
    """Every board on the way of *move*: any part of its changed squares already as after the move."""
    before = [board.piece_at(sq) for sq in chess.SQUARES]
    board.push(move)
    after = [board.piece_at(sq) for sq in chess.SQUARES]
    board.pop()
    touched = [sq for sq in chess.SQUARES if before[sq] != after[sq]]
    states = []
    for size in range(1, len(touched)):
        for subset in itertools.combinations(touched, size):
            squares = list(before)
            for sq in subset:
                squares[sq] = after[sq]
            states.append(squares)
    return states


@pytest.mark.parametrize("seed", range(6))
def test_partials_are_the_same_with_the_legal_list_made_or_not(seed: int) -> None:
    """``PositionIndex._partials`` filters the position's legal list when it has made it, and asks python-chess with
    the masks when not: the same candidates in the same order, castling (selected by the rook's square) included."""
    rng = random.Random(seed)
    chess960 = seed % 2 == 1
    board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
    for sq in chess.SQUARES:   # the back ranks cleared but for kings and rooks: castling comes early and often
        piece = board.piece_at(sq)
        if piece is not None and piece.piece_type in (chess.KNIGHT, chess.BISHOP, chess.QUEEN):
            board.remove_piece_at(sq)
    castling_seen = 0
    for _ in range(40):
        legal = list(board.legal_moves)
        if not legal:
            break
        lazy, made = PositionIndex(board), PositionIndex(board)
        made.legal_moves  # noqa: B018 - the list made, as targets or a parked capture make it
        for move in legal:
            for squares in _intermediate_states(board, move):
                changed = sum(1 << sq for sq in chess.SQUARES if squares[sq] != lazy.squares[sq])
                expected = lazy._partials(squares, changed)
                assert made._partials(squares, changed) == expected, (board.fen(), move.uci(), bin(changed))
                castling_seen += any(board.is_castling(m) for m in expected)
        board.push(rng.choice(legal))
    assert castling_seen > 0   # castling partials were compared, not only plain moves
