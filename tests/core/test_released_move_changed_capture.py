"""A released move changed into a capture, or a released capture changed (R07, 4.7; R03, R05, R27): one incident.

The player makes a move and lets go of it (presumed released after ``T_settle``), then changes it into another legal
move from the same position: a quiet move into a capture (the victim lifted before or after his own piece, his piece
maybe set down for a moment beside it first), a capture into a quiet move or another capture (the piece captured
first put back from beside the board before, between or after the other steps), a promotion into another piece or
square, castling into a king or rook move and back. The steps in any valid order with randomised timing, seeded;
then he presses the clock (at once or later), or, without a clock, the opponent replies and the mover's next move
completes the move (6.2.1.2). Every edition.

The Laws: the first released legal move stands (4.7; rules-spec R07: "suggested move = the first released legal
move"). The board shows the second move: the record and the broadcast follow it (``MovesRetracted``, then the
move), with one ``RELEASED_MOVE_CHANGED`` for the ply suggesting the first move (a promotion's piece changed on the
same square also ``PROMOTION_CHOICE_CHANGED``, R05; in Chess960 a lone king step completed into castling by the rook
``CHESS960_CASTLING_ORDER`` instead, R27). The victim lifted by the mover's hand is not the opponent starting (no
``OPPONENT_STARTED_BEFORE_MOVE_MADE``, ``CLOCK_NOT_PRESSED``), nor his piece put down before the victim is put back
a change out of turn (``OUT_OF_TURN_CHANGE``). Before: a quiet released move changed into a capture stayed in the
record (the board showing the capture), with the opponent's early start flagged against the wrong player.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess
import pytest

from boardd.core.events import SquareChanged
from boardd.core.outputs import Irregularity, IrregularityRaised, Status
from tests.core.test_released_move_undone import T_SETTLE, Table, _journal_rebuilds, _reply, published

#: name -> (start FEN, first released move, the move it is changed into)
CHANGES = {
    "quiet-to-capture": ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", "c4d3", "c4f7"),
    "quiet-to-capture-other-piece": ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", "c4b3",
                                     "f3e5"),
    "quiet-to-capture-black": ("rnb1kbnr/pppp1ppp/8/4p1q1/4P3/3P4/PPP2PPP/RNBQKBNR b KQkq - 0 3", "g5f6", "g5c1"),
    "capture-to-quiet": ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", "c4f7", "c4d3"),
    "capture-to-capture": ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", "c4f7", "f3e5"),
    "capture-to-capture-same-piece": ("4k3/8/p7/8/8/8/4K3/R6n w - - 0 1", "a1a6", "a1h1"),
    "promotion-to-capture-promotion": ("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q", "b7a8q"),
    "capture-promotion-to-promotion": ("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7a8q", "b7b8n"),
    "quiet-to-capture-promotion": ("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "e1d2", "b7a8q"),
    "quiet-to-castling": ("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1", "e1f1", "e1g1"),
    "castling-to-capture": ("r3k2r/pppppppp/8/8/8/8/PPPPPPP1/R3K2R w KQkq - 0 1", "e1g1", "h1h7"),
    "capture-to-castling-black": ("r3k2r/1ppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1", "a8a2", "e8c8"),
}


def transition(table: Table, rng: random.Random, before: chess.Board, after: chess.Board, t: float, *,
               mover_back_first: bool = False) -> float:
    """The board goes from *before* to *after* by the mover's hand, the steps in any valid order (a piece is put
    down only on an empty square, from the hand or from beside the board: a captured piece put back), each under
    ``T_settle`` after the one before (one gesture). *mover_back_first*: the mover's pieces are put down only once
    all of his lifts are done (the released move's pieces off their squares before the new move is set down; the
    captured piece put back and the new victim lifted at any time). The time of the last step."""
    mover = not before.turn
    todo: list[tuple[str, int]] = []
    for sq in chess.SQUARES:
        if before.piece_at(sq) != after.piece_at(sq):
            if before.piece_at(sq) is not None:
                todo.append(("lift", sq))
            if after.piece_at(sq) is not None:
                todo.append(("place", sq))
    in_hand: list[chess.Piece] = []
    box = [p for p in (chess.Piece(k, c) for k in chess.PIECE_TYPES for c in chess.COLORS)
           for _ in range(max(0, len(after.pieces(p.piece_type, p.color)) - len(before.pieces(p.piece_type, p.color))))]
    occupied = {sq for sq in chess.SQUARES if before.piece_at(sq) is not None}
    while todo:
        lifting = any(op[0] == "lift" and _color(before, op[1]) == mover for op in todo)
        ready = [op for op in todo if op[0] == "lift" or (op[1] not in occupied and (
            after.piece_at(op[1]) in in_hand or after.piece_at(op[1]) in box)
            and not (mover_back_first and lifting and _color(after, op[1]) == mover))]
        what, sq = op = rng.choice(ready)
        todo.remove(op)
        if what == "lift":
            piece = before.piece_at(sq)
            assert piece is not None
            in_hand.append(piece)
            occupied.discard(sq)
            table.feed(SquareChanged(at=t, square=sq, content=None))
        else:
            piece = after.piece_at(sq)
            assert piece is not None
            (in_hand if piece in in_hand else box).remove(piece)
            occupied.add(sq)
            table.feed(SquareChanged(at=t, square=sq, content=piece))
        if todo:
            t += rng.uniform(0.05, 0.3)
    return t


def _color(board: chess.Board, square: int) -> chess.Color | None:
    piece = board.piece_at(square)
    return None if piece is None else piece.color


@dataclass(frozen=True)
class Case:
    seed: int
    kind: str
    clock: bool
    edition: int
    quick: bool  # pressed (or the reply started) within T_settle of the last step


def _cases() -> list[Case]:
    kinds = sorted(CHANGES)
    return [Case(seed, kinds[seed % len(kinds)], (seed // len(kinds)) % 2 == 0, (2009, 2014, 2018, 2023)[seed % 4],
                 seed % 3 == 0) for seed in range(96)]


def _raised(table: Table) -> list[Irregularity]:
    return [o.irregularity for o in table.outs if isinstance(o, IrregularityRaised)]


def _rook_square(board: chess.Board, castling: chess.Move) -> int:
    rank = chess.square_rank(castling.from_square)
    return chess.square(7 if board.is_kingside_castling(castling) else 0, rank)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c.kind}-{'clock' if c.clock else 'noclock'}-"
                                                         f"{c.edition}-{'quick' if c.quick else 'slow'}-{c.seed}")
def test_a_released_move_changed_into_or_from_a_capture_is_one_alert(case: Case) -> None:
    _changed_is_one_alert(case, mover_back_first=not case.clock)


@pytest.mark.parametrize("case", [c for c in _cases() if not c.clock],
                         ids=lambda c: f"{c.kind}-noclock-{c.edition}-{'quick' if c.quick else 'slow'}-{c.seed}")
def test_no_clock_change_in_any_order_is_one_alert(case: Case) -> None:
    """Without a clock, the steps in any order: the new move (a capture, maybe by another piece) may be set down in
    full while a piece of the released move still stands, and the rest put right within ``T_settle`` of each other
    (one gesture, R07): a moment of two moves of his on the board, not a move on the opponent's turn (R13). One
    incident, one alert: RELEASED_MOVE_CHANGED. Before: 2 of these 48 (castling then Rxh7, the rook set down on h7
    with the king still on g1) raised OUT_OF_TURN_CHANGE at the rook's placement, withdrawn a moment later."""
    _changed_is_one_alert(case, mover_back_first=False)


def _changed_is_one_alert(case: Case, *, mover_back_first: bool) -> None:
    rng = random.Random(case.seed)
    fen, first_uci, second_uci = CHANGES[case.kind]
    table = Table(fen, clock=case.clock, edition=case.edition)
    base = chess.Board(fen)
    mover = base.turn
    first, second = chess.Move.from_uci(first_uci), chess.Move.from_uci(second_uci)
    assert first in base.legal_moves and second in base.legal_moves
    first_san = base.san(first)
    t = table.play(first, 0.0, press=False) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    assert published(table.outs) == [first.uci()], "made and published before the press (presumed released)"
    after = base.copy(stack=False)
    after.push(second)
    # mover_back_first: his released move's pieces lifted before the new move is set down (the other order:
    # test_no_clock_change_in_any_order_is_one_alert)
    t = transition(table, rng, table.board, after, t + rng.uniform(0.3, 10.0), mover_back_first=mover_back_first)
    table.board = after
    t += rng.uniform(0.05, T_SETTLE * 0.8) if case.quick else T_SETTLE + rng.uniform(0.05, 5.0)
    if case.clock:
        table.press(mover, t)
    reply = _reply(rng, table.board)
    table.play(reply, t + rng.uniform(0.3, 3.0), press=case.clock)
    expected = [second.uci(), reply.uci()]
    if not case.clock:
        nxt = _reply(rng, table.board)
        table.play(nxt, table.events[-1].at + rng.uniform(0.5, 5.0), press=False)
        expected.append(nxt.uci())
    table.advance(table.events[-1].at + 10.0)
    assert [m.uci for m in table.engine.state.moves] == expected, "the record follows the board"
    assert published(table.outs) == expected, "the broadcast: the moves played, the changed one retracted"
    assert table.engine.state.moves[0].completed_at is not None
    promotion_changed = first.promotion is not None and second.promotion is not None \
        and first.to_square == second.to_square
    # the Laws' other findings of the same ply (R05; R04 / rules-spec T04: the rook of the first move touched
    # before the king of the castling), never a finding of hands read as someone else's
    also = {"PROMOTION_CHOICE_CHANGED"} if promotion_changed else set()
    if base.is_castling(second) and first.from_square == _rook_square(base, second):
        also.add("CASTLING_ROOK_FIRST")
    strong = table.strong()
    assert strong.count("RELEASED_MOVE_CHANGED") == 1 and set(strong) == {"RELEASED_MOVE_CHANGED", *also} \
        and len(strong) == 1 + len(also), f"one incident, one alert: {strong}"
    changed = next(i for i in _raised(table) if i.code == "RELEASED_MOVE_CHANGED")
    assert changed.suggestion.move == first_san and changed.side == mover, "the first released move stands (4.7)"
    # what read as the opponent starting, if anything, was withdrawn: nothing stands against either player but it
    standing = [i for i in table.engine.g.irr.values() if i.status is not Status.RESOLVED
                and i.code in ("OPPONENT_STARTED_BEFORE_MOVE_MADE", "CLOCK_NOT_PRESSED", "OUT_OF_TURN_CHANGE")]
    assert standing == [], [i.code for i in standing]
    _journal_rebuilds(table)


@pytest.mark.parametrize("seed", range(16))
def test_no_clock_capture_changed_with_the_piece_down_before_the_captured_one_is_back(seed: int) -> None:
    """Without a clock: Bxf7 released, then the bishop lifted and set down on d3 (or b5, e2, ...), and only then
    (0.1 s to 10 s later) the pawn put back on f7 from beside the board. One incident: RELEASED_MOVE_CHANGED only.
    Before: OUT_OF_TURN_CHANGE as well (the bishop on d3 with f7 empty read as a second move on Black's turn)."""
    rng = random.Random(seed)
    fen = CHANGES["capture-to-quiet"][0]
    table = Table(fen, clock=False, edition=(2009, 2014, 2018, 2023)[seed % 4])
    base = chess.Board(fen)
    first = chess.Move.from_uci("c4f7")
    second = rng.choice([m for m in base.legal_moves if m.from_square == chess.C4 and not base.is_capture(m)])
    t = table.play(first, 0.0, press=False) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    bishop, pawn = chess.Piece(chess.BISHOP, chess.WHITE), chess.Piece(chess.PAWN, chess.BLACK)
    t += rng.uniform(0.3, 10.0)
    table.feed(SquareChanged(at=t, square=chess.F7, content=None))
    t += rng.uniform(0.1, 0.5)
    table.feed(SquareChanged(at=t, square=second.to_square, content=bishop))
    t += rng.uniform(0.1, 10.0)
    table.feed(SquareChanged(at=t, square=chess.F7, content=pawn))
    t += T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    table.board = base.copy(stack=False)
    table.board.push(second)
    reply = _reply(rng, table.board)
    table.play(reply, t + rng.uniform(0.3, 3.0), press=False)
    nxt = _reply(rng, table.board)
    table.play(nxt, table.events[-1].at + rng.uniform(0.5, 5.0), press=False)
    table.advance(table.events[-1].at + 10.0)
    assert [m.uci for m in table.engine.state.moves] == [second.uci(), reply.uci(), nxt.uci()]
    assert table.strong() == ["RELEASED_MOVE_CHANGED"], "one incident, one alert"
    assert next(i for i in _raised(table) if i.code == "RELEASED_MOVE_CHANGED").suggestion.move == "Bxf7+"
