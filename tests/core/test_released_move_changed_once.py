"""A released legal move changed directly twice or three times in one ply (R07, 4.7): one incident, one alert.

The player makes a move and lets go of it (presumed released after ``T_settle``), then moves the same piece on to
another square (a quiet move or a capture, the captured piece put back when the capture is undone) and lets go of
it, and again; then presses the clock (or, without a clock, the opponent replies and the mover's next move completes
the move, 6.2.1.2). Randomised timing, seeded; with and without a clock; every edition.

The Laws: the first released legal move stands (4.7, rules-spec R07: "suggested move = the first released legal
move"). It is one incident of the player: ``RELEASED_MOVE_CHANGED`` is raised once for the ply with the first
released move as the suggestion; each later change updates that same finding (``IrregularityUpdated``: its
evidence and text), never a new alert. Before: one ``RELEASED_MOVE_CHANGED`` per replacement, the second suggesting
the second move (released after the first had already been), and the press path (the made move changed into a
position that is no legal move) raising a second one beside the first.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess
import pytest

from boardd.core.events import SquareChanged
from boardd.core.outputs import Irregularity, IrregularityRaised, IrregularityUpdated
from tests.core.test_released_move_undone import T_SETTLE, Table, _journal_rebuilds, _reply, published

#: (start FEN, the square of the piece that moves on, whether its moves must include a capture)
POSITIONS = {
    "bishop": ("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", chess.F1, False),
    "capture": ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", chess.C4, True),
    "capture-black": ("rnb1kbnr/pppp1ppp/8/4p1q1/4P3/3P4/PPP2PPP/RNBQKBNR b KQkq - 0 3", chess.G5, True),
    "rook": ("4k3/8/p7/8/8/8/8/R3K3 w - - 0 1", chess.A1, True),
}


def transition(table: Table, rng: random.Random, before: chess.Board, after: chess.Board, t: float) -> float:
    """The board goes from *before* to *after* by hand in one gesture (each step under ``T_settle`` after the one
    before), the mover's piece lifted first, a captured piece put back before the mover's piece is set down (set
    down first, without a clock, it reads as a change out of turn: another matter), the rest in any order; a piece
    no longer on the board comes from the box. The time of the last step."""
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
    cleared = {sq for what, sq in todo if what == "lift"}
    started = False
    while todo:
        ready = [op for op in todo if (op[0] == "lift" and (started or _color(before, op[1]) == mover))
                 or (op[0] == "place" and started and op[1] not in cleared
                     and (_color(after, op[1]) != mover or not any(o[0] == "place" and _color(after, o[1]) != mover
                                                                   for o in todo))
                     and (after.piece_at(op[1]) in in_hand or after.piece_at(op[1]) in box))]
        op = rng.choice(ready)
        todo.remove(op)
        what, sq = op
        if what == "lift":
            piece = before.piece_at(sq)
            assert piece is not None
            in_hand.append(piece)
            cleared.discard(sq)
            started = True
            table.feed(SquareChanged(at=t, square=sq, content=None))
        else:
            piece = after.piece_at(sq)
            assert piece is not None
            (in_hand if piece in in_hand else box).remove(piece)
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
    changes: int  # 2 or 3 direct changes after the first released move


def _cases() -> list[Case]:
    return [Case(seed, sorted(POSITIONS)[seed % len(POSITIONS)], seed % 2 == 0, (2009, 2014, 2018, 2023)[seed % 4],
                 2 + (seed // 2) % 2) for seed in range(48)]


def _moves(rng: random.Random, board: chess.Board, square: int, n: int, capture: bool) -> list[chess.Move]:
    """*n* different legal moves of the piece on *square*; if *capture*, the first released one a capture (the
    captured piece put back when it is changed)."""
    mine = [m for m in board.legal_moves if m.from_square == square]
    caps = [m for m in mine if board.is_capture(m)]
    quiet = [m for m in mine if not board.is_capture(m)]
    if capture:
        return [rng.choice(caps), *rng.sample(quiet, n - 1)]
    return rng.sample(quiet, n)


def _raised(table: Table, code: str) -> list[Irregularity]:
    return [o.irregularity for o in table.outs if isinstance(o, IrregularityRaised) and o.irregularity.code == code]


def _updates(table: Table, ident: str) -> list[Irregularity]:
    return [o.irregularity for o in table.outs if isinstance(o, IrregularityUpdated) and o.irregularity.id == ident]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c.kind}-{'clock' if c.clock else 'noclock'}-"
                                                         f"{c.edition}-{c.changes}x-{c.seed}")
def test_a_released_move_changed_again_is_one_alert(case: Case) -> None:
    rng = random.Random(case.seed)
    fen, square, capture = POSITIONS[case.kind]
    table = Table(fen, clock=case.clock, edition=case.edition)
    base = chess.Board(fen)
    mover = base.turn
    moves = _moves(rng, base, square, case.changes + 1, capture)
    sans = [base.san(m) for m in moves]
    t = table.play(moves[0], 0.0, press=False) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    assert published(table.outs) == [moves[0].uci()]
    shown = table.board
    for move in moves[1:]:
        after = base.copy(stack=False)
        after.push(move)
        t = transition(table, rng, shown, after, t + rng.uniform(0.3, 10.0))
        t += T_SETTLE + rng.uniform(0.05, 5.0)
        table.advance(t)
        shown = after
        assert published(table.outs) == [move.uci()], "the board's move, the one before retracted"
    table.board = shown
    t += rng.uniform(0.1, 20.0)
    if case.clock:
        table.press(mover, t)
    reply = _reply(rng, table.board)
    last = table.play(reply, t + rng.uniform(0.3, 3.0), press=case.clock)
    expected = [moves[-1].uci(), reply.uci()]
    if not case.clock:
        nxt = _reply(rng, table.board)
        table.play(nxt, last + rng.uniform(0.5, 5.0), press=False)
        expected.append(nxt.uci())
    table.advance(table.events[-1].at + 10.0)
    assert [m.uci for m in table.engine.state.moves] == expected
    assert table.strong() == ["RELEASED_MOVE_CHANGED"], "one incident, one alert"
    (changed,) = _raised(table, "RELEASED_MOVE_CHANGED")
    assert changed.suggestion.move == sans[0] and changed.side == mover, "the first released move stands (4.7)"
    updates = _updates(table, changed.id)
    assert len(updates) >= case.changes - 1, "each later change updates the finding"
    final = table.engine.g.irr[changed.id]
    assert final.suggestion.move == sans[0]
    assert all(san in final.suggestion.text for san in sans), final.suggestion.text
    cited = changed.suggestion.text.rsplit("(", 1)[1]  # the article as raised, in the edition's numbering
    assert final.suggestion.text.endswith("(" + cited), "an update cites the edition's article, as the raise did"
    assert len(final.evidence) >= len(changed.evidence) + case.changes - 1
    _journal_rebuilds(table)


@pytest.mark.parametrize("clock", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_changed_after_a_takeback_then_changed_again_updates(clock: bool, seed: int) -> None:
    """Bc4 released, taken back, Bb5 made (RELEASED_MOVE_CHANGED, suggesting Bc4), then the bishop moved on to a
    third square: the same finding updated. Before: the third move was not told to the arbiter at all."""
    rng = random.Random(seed)
    fen, square, _ = POSITIONS["bishop"]
    table = Table(fen, clock=clock, edition=(2009, 2014, 2018, 2023)[seed % 4])
    base = chess.Board(fen)
    first, second, third = _moves(rng, base, square, 3, False)
    t = table.play(first, 0.0, press=False) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    t = table.take_back(rng, t + rng.uniform(0.5, 10.0)) + T_SETTLE + rng.uniform(1.0, 30.0)
    table.advance(t)
    assert table.engine.state.moves == ()
    t = table.play(second, t, press=False) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    after = base.copy(stack=False)
    after.push(third)
    t = transition(table, rng, table.board, after, t + rng.uniform(0.3, 10.0)) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    table.board = after
    if clock:
        table.press(chess.WHITE, t)
    table.play(_reply(rng, table.board), t + rng.uniform(0.3, 3.0), press=clock)
    table.advance(table.events[-1].at + 10.0)
    assert table.strong() == ["RELEASED_MOVE_CHANGED"]
    (changed,) = _raised(table, "RELEASED_MOVE_CHANGED")
    assert changed.suggestion.move == base.san(first)
    assert _updates(table, changed.id), "the later change updates the finding"
    assert base.san(third) in table.engine.g.irr[changed.id].suggestion.text


@pytest.mark.parametrize("seed", range(12))
def test_changed_then_changed_into_no_legal_move_at_the_press(seed: int) -> None:
    """Bc4 released, moved on to a legal square (RELEASED_MOVE_CHANGED), then set down on a square it cannot reach
    (not a legal move) and the clock pressed: the press path's RELEASED_MOVE_CHANGED is the same finding, updated,
    still suggesting the first released move. Before: a second RELEASED_MOVE_CHANGED suggesting the second move."""
    rng = random.Random(seed)
    fen, square, _ = POSITIONS["bishop"]
    table = Table(fen, clock=True, edition=(2009, 2014, 2018, 2023)[seed % 4])
    base = chess.Board(fen)
    first, second = _moves(rng, base, square, 2, False)
    t = table.play(first, 0.0, press=False) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    after = base.copy(stack=False)
    after.push(second)
    t = transition(table, rng, table.board, after, t + rng.uniform(0.3, 10.0)) + T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    assert len(_raised(table, "RELEASED_MOVE_CHANGED")) == 1
    bishop = chess.Piece(chess.BISHOP, chess.WHITE)
    illegal = rng.choice((chess.F3, chess.F4, chess.H3, chess.G5, chess.C3))
    t += rng.uniform(0.3, 10.0)
    table.feed(SquareChanged(at=t, square=second.to_square, content=None))
    t += rng.uniform(0.05, 0.3)
    table.feed(SquareChanged(at=t, square=illegal, content=bishop))
    t += rng.uniform(0.05, 5.0) if seed % 2 else T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    table.press(chess.WHITE, t)
    table.advance(t + 5.0)
    raised = _raised(table, "RELEASED_MOVE_CHANGED")
    assert len(raised) == 1, [i.suggestion.move for i in raised]
    assert raised[0].suggestion.move == base.san(first)
    assert _updates(table, raised[0].id)
    assert table.engine.g.irr[raised[0].id].suggestion.move == base.san(first)
