"""boardd.core.recovery: the moves played while the daemon was down, from the board's log or by search."""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.events import ClockSide, Content, LogEntry, LoggedChange, LoggedPress
from boardd.core.recovery import COMES_BACK, RecoveryKind, comes_back, place_presses, recover

GAME = ("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7 c4 c6 cxb5 axb5 Nc3 Bb7 "
        "Bg5 b4 Nb1 h6 Bh4 c5 dxe5 Nxe4 Bxe7 Qxe7 exd6 Qf6 Nbd2 Nxd6 Nc4 Nxc4 Bxc4 Nb6 Ne5 Rae8 Bxf7+ Rxf7 "
        "Nxf7 Rxe1+ Qxe1 Kxf7")
RUY = GAME.split()


def placement(board: chess.BaseBoard) -> tuple[Content, ...]:
    return tuple(board.piece_at(sq) for sq in chess.SQUARES)


def play(sans: list[str], board: chess.Board | None = None) -> chess.Board:
    board = board.copy() if board is not None else chess.Board()
    for san in sans:
        board.push_san(san)
    return board


def log_of(board: chess.Board, moves: list[chess.Move], *, rng: random.Random | None = None,
           slide: bool = False) -> list[LogEntry]:
    """What a DGT board logs for *moves* from *board*: lifts and placements, then the mover's press."""
    work = board.copy()
    out: list[LogEntry] = []
    clock = {chess.WHITE: 300.0, chess.BLACK: 300.0}
    for move in moves:
        piece = work.piece_at(move.from_square)
        assert piece is not None
        if work.is_castling(move):
            rank = chess.square_rank(move.from_square)
            king_side = work.is_kingside_castling(move)
            rook_from = move.to_square if work.chess960 else chess.square(7 if king_side else 0, rank)
            rook = work.piece_at(rook_from)
            out += [LoggedChange(square=move.from_square, content=None),
                    LoggedChange(square=rook_from, content=None),
                    LoggedChange(square=chess.square(6 if king_side else 2, rank), content=piece),
                    LoggedChange(square=chess.square(5 if king_side else 3, rank), content=rook)]
        else:
            if work.is_en_passant(move):
                out.append(LoggedChange(square=chess.square(chess.square_file(move.to_square),
                                                            chess.square_rank(move.from_square)), content=None))
            out.append(LoggedChange(square=move.from_square, content=None))
            placed = chess.Piece(move.promotion, piece.color) if move.promotion else piece
            if slide and piece.piece_type in (chess.BISHOP, chess.ROOK, chess.QUEEN):
                for square in chess.SquareSet(chess.between(move.from_square, move.to_square)):
                    out += [LoggedChange(square=square, content=placed), LoggedChange(square=square, content=None)]
            out.append(LoggedChange(square=move.to_square, content=placed))
        if rng is not None and len(out) >= 2 and rng.random() < 0.5:
            out[-1], out[-2] = out[-2], out[-1]  # the order within one scan is not known
        clock[work.turn] -= 7
        out.append(LoggedPress(side=ClockSide.LEFT if work.turn == chess.WHITE else ClockSide.RIGHT,
                               shown=clock[work.turn]))
        work.push(move)
    return out


@pytest.mark.parametrize("start", [0, 9, 20, 31, 40])
@pytest.mark.parametrize("plies", [1, 2, 5, 10, 14])
def test_the_boards_log_recovers_long_gaps_exactly(start: int, plies: int) -> None:
    board = play(RUY[:start])
    end = play(RUY[start:start + plies], board)
    moves = list(end.move_stack[start:])
    result = recover(board, placement(end), log=log_of(board, moves, rng=random.Random(start * 31 + plies)))
    assert result.kind is RecoveryKind.UNIQUE and result.method == "eeprom"
    assert list(result.moves) == moves
    assert list(result.sans) == RUY[start:start + plies]


def test_a_slide_in_the_log_is_not_taken_for_a_move() -> None:
    board = play(["e4", "e5", "Nf3", "Nc6"])
    end = play(["Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5", "Bb3", "d6", "c3"], board)
    moves = list(end.move_stack[4:])
    result = recover(board, placement(end), log=log_of(board, moves, slide=True))
    assert result.kind is RecoveryKind.UNIQUE and list(result.moves) == moves


def test_a_log_starting_before_the_journal_ends_does_no_harm() -> None:
    """Changes the daemon had seen before it died are in the log too (written, read, not journaled)."""
    before = play(RUY[:6])
    board = play(RUY[6:8], before)
    end = play(RUY[8:18], board)
    log = log_of(before, list(end.move_stack[6:]))
    result = recover(board, placement(end), log=log)
    assert result.kind is RecoveryKind.UNIQUE and list(result.sans) == RUY[8:18]


def test_a_log_that_lost_records_still_recovers() -> None:
    board = play(RUY[:10])
    end = play(RUY[10:12], board)
    log = log_of(board, list(end.move_stack[10:]))[3:]  # the first changes were lost
    result = recover(board, placement(end), log=log)
    assert result.kind is RecoveryKind.UNIQUE
    assert list(result.sans) == RUY[10:12]


@pytest.mark.parametrize("plies", [1, 2])
def test_search_alone_recovers_short_gaps(plies: int) -> None:
    board = play(RUY[:30])
    end = play(RUY[30:30 + plies], board)
    result = recover(board, placement(end))
    assert result.kind is RecoveryKind.UNIQUE and result.method == "search"
    assert list(result.sans) == RUY[30:30 + plies]


def test_search_alone_lists_every_order_that_fits() -> None:
    board = play(RUY[:30])
    end = play(RUY[30:33], board)  # Bh4 c5 dxe5: the same position after dxe5 c5 Bh4
    result = recover(board, placement(end))
    assert result.kind is RecoveryKind.AMBIGUOUS
    assert tuple(end.move_stack[30:]) in result.candidates and len(result.candidates) == 2


def test_search_reports_transpositions_as_ambiguous() -> None:
    board = chess.Board()
    end = play(["e4", "e5", "Nf3", "Nc6"])
    result = recover(board, placement(end))
    assert result.kind is RecoveryKind.AMBIGUOUS
    lines = {tuple(board.variation_san(list(c)).split()) for c in result.candidates}
    assert ("1.", "e4", "e5", "2.", "Nf3", "Nc6") in lines and ("1.", "Nf3", "Nc6", "2.", "e4", "e5") in lines
    assert all(len(c) == 4 for c in result.candidates)


def test_search_finds_ten_ply_sequences_and_says_when_they_are_ambiguous() -> None:
    board = play(RUY[:6])
    end = play(RUY[6:16], board)  # quiet moves of both sides: many orders fit
    result = recover(board, placement(end), max_plies=12)
    assert result.kind in (RecoveryKind.UNIQUE, RecoveryKind.AMBIGUOUS)
    fits = [result.moves] if result.kind is RecoveryKind.UNIQUE else list(result.candidates)
    for line in fits:
        work = board.copy()
        for move in line:
            assert work.is_legal(move)
            work.push(move)
        assert placement(work) == placement(end) and len(line) == 10


def test_an_unreachable_board_is_a_gap() -> None:
    board = play(RUY[:10])
    target = list(placement(board))
    target[chess.E1], target[chess.E8] = target[chess.E8], target[chess.E1]  # kings swapped: no legal way
    result = recover(board, tuple(target), max_plies=4)
    assert result.kind is RecoveryKind.GAP


def test_no_change_is_nothing_to_recover() -> None:
    board = play(RUY[:10])
    assert recover(board, placement(board)).kind is RecoveryKind.NONE


def test_chess960_castling_from_the_log_and_by_search() -> None:
    board = chess.Board.from_chess960_pos(518 - 100)  # RKNBBQNR? any 960 start
    board = chess.Board(board.fen(), chess960=True)
    sans: list[str] = []
    rng = random.Random(960)
    work = board.copy()
    while len(sans) < 12:
        castles = [m for m in work.legal_moves if work.is_castling(m)]
        move = castles[0] if castles else rng.choice(sorted(work.legal_moves, key=lambda m: m.uci()))
        sans.append(work.san(move))
        work.push(move)
    moves = list(work.move_stack)
    result = recover(board, placement(work), log=log_of(board, moves))
    assert result.kind is RecoveryKind.UNIQUE and list(result.moves) == moves
    # the last two plies by search alone
    mid = board.copy()
    for move in moves[:-2]:
        mid.push(move)
    short = recover(mid, placement(work))
    assert short.kind in (RecoveryKind.UNIQUE, RecoveryKind.AMBIGUOUS)
    if short.kind is RecoveryKind.UNIQUE:
        assert list(short.moves) == moves[-2:]


def test_press_times_come_back_from_the_clock_reading() -> None:
    # journal ended at t=100 with both clocks at 300 and White to move; White thinks 10 s, Black 20 s,
    # White 5 s; at t=140 Black's clock has run 5 s more
    presses = [LoggedPress(side=ClockSide.LEFT, shown=290), LoggedPress(side=ClockSide.RIGHT, shown=280),
               LoggedPress(side=ClockSide.LEFT, shown=285)]
    times = place_presses(presses, now=140.0, left=285, right=275, running=ClockSide.RIGHT,
                          start_left=300, start_right=300)
    assert times == [110.0, 130.0, 135.0]
    with_increment = place_presses(presses, now=140.0, left=287, right=277, running=ClockSide.RIGHT,
                                   start_left=300, start_right=300, increment=2)
    assert with_increment == [108.0, 128.0, 135.0]  # White used 7 s of 292 the second time
    assert place_presses(presses, now=1.0, left=1, right=1, running=None, start_left=None,
                         start_right=None) == [None, None, None]


@pytest.mark.parametrize("lost", [1, 2])
def test_a_log_that_lacks_its_first_plies_is_completed_by_search(lost: int) -> None:
    """A daemon killed between reading the board and journaling it: the log starts a ply or two late."""
    board = play(RUY[:12])
    after_lost = play(RUY[12:12 + lost], board)
    end = play(RUY[12 + lost:20], after_lost)
    log = log_of(after_lost, list(end.move_stack[12 + lost:]))
    result = recover(board, placement(end), log=log)
    assert result.kind is RecoveryKind.UNIQUE and list(result.sans) == RUY[12:20]


# --- what the board cannot show: a piece away and back ------------------------------------------------------------


#: Two pawns taken off by hand (g7, h6) during the downtime; the search "explained" them by 6 plies.
HAND = chess.Board("rn3rk1/pppq1pp1/3bbn1p/3p4/3P4/2PBBN1P/PP3PP1/RN1Q1RK1 w - - 1 10")


def test_two_pawns_taken_off_by_hand_are_not_recorded_as_captures() -> None:
    """Bxh6 g5 Bxg5 Kg7 Be3 Kg8 is the only legal way to this board, and the fewest plies. It moves the bishop
    and the king away and back: the board shows none of it, and pawns taken off by hand give the same board
    (7.4, 7.6). Recorded as fact it made a record of play that may not have happened: a candidate instead."""
    target = list(placement(HAND))
    target[chess.G7] = target[chess.H6] = None
    result = recover(HAND, target)
    assert result.kind is RecoveryKind.AMBIGUOUS and result.detail == COMES_BACK
    [line] = result.candidates
    assert HAND.variation_san(list(line)) == "10. Bxh6 g5 11. Bxg5 Kg7 12. Be3 Kg8"
    assert "away and back" in result.describe() and "the arbiter chooses" in result.describe()


def test_a_sequence_whose_pieces_all_end_elsewhere_is_still_recovered() -> None:
    # two pawns gone from f6 and d4, a pawn still on e5: fxe5 dxe5 leaves every piece that moved elsewhere
    board = chess.Board("r1b2rk1/pp4pp/2n1pp1n/q2pP3/3P1P2/P1BB1N2/1P4PP/R2QK2R b KQ - 0 12")
    target = list(placement(board))
    target[chess.F6] = target[chess.D4] = None
    result = recover(board, target)
    assert result.kind is RecoveryKind.UNIQUE and list(result.sans) == ["fxe5", "dxe5"]


@pytest.mark.parametrize(("fen", "sans", "back"), [
    (chess.STARTING_FEN, "Nf3 Nf6 Ng1", True),
    (chess.STARTING_FEN, "Nf3 Nf6 Ng5 Ng8", True),  # the f6 knight is back on g8
    (chess.STARTING_FEN, "Nf3 Nf6 Ng5 Nh5", False),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O Kd8 Kg2 Kc8 Kg1", False),  # back on g1, not on e1
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "Kf1 Kf8 Ke1", True),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6 Kd7 Kd2", False),
])
def test_comes_back_follows_each_piece(fen: str, sans: str, back: bool) -> None:
    board = chess.Board(fen)
    moves = []
    work = board.copy()
    for san in sans.split():
        moves.append(work.parse_san(san))
        work.push(moves[-1])
    assert comes_back(board, moves) is back


def test_chess960_castling_with_the_king_on_its_square_does_not_move_it() -> None:
    board = chess.Board("1r4kr/8/8/8/8/8/8/1R4KR w KQkq - 0 1", chess960=True)
    castle = next(m for m in board.legal_moves if board.is_castling(m) and board.is_kingside_castling(m))
    assert not comes_back(board, [castle])  # the king stays on g1, the rook goes h1-f1
