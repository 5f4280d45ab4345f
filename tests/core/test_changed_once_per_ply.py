"""A promotion's piece or a Chess960 castling order changed again in one ply (R05, R27, R07): one finding per ply.

The player promotes and lets go of the new piece (presumed released), then exchanges it for another piece, and
again (or puts a first piece on the promotion square, replaces it before letting go, then changes the released
one); in Chess960 he steps the king onto its castling square, lets go, completes the castling with the rook, takes
the rook back and completes it again. Randomised timing, seeded; with and without a clock; every edition.

The Laws: the first piece placed on the promotion square is the choice (4.4.4, R05: ``PROMOTION_CHOICE_CHANGED``
suggesting it); a castling in an order that could be read as a king move is for the arbiter to check (Guidelines
II.3, R27: ``CHESS960_CASTLING_ORDER``, info). It is one incident of the player: each is raised once for the ply,
a later change of the same ply updating it (``IrregularityUpdated``: its evidence and text, the suggestion kept),
as ``RELEASED_MOVE_CHANGED`` is since the oneply work. Before: one finding per change.
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import GameInfo, SquareChanged
from boardd.core.outputs import Irregularity, IrregularityRaised, IrregularityUpdated
from boardd.core.settings import RulesConfig
from tests.core.test_released_move_undone import T_SETTLE, Table, _fed, published

T_FLICKER = RulesConfig().timing.t_flicker
PROMOTION = "4k3/pP6/8/8/8/8/7P/4K3 w - - 0 1"  # (pawns left: no promotion ends the game)


def _raised(outs: list, code: str) -> list[Irregularity]:
    return [o.irregularity for o in outs if isinstance(o, IrregularityRaised) and o.irregularity.code == code]


def _updated(outs: list, ident: str) -> list[Irregularity]:
    return [o.irregularity for o in outs if isinstance(o, IrregularityUpdated) and o.irregularity.id == ident]


@pytest.mark.parametrize("seed", range(24))
def test_a_promotion_changed_again_is_one_promotion_choice_changed(seed: int) -> None:
    rng = random.Random(seed)
    clock = seed % 2 == 0
    table = Table(PROMOTION, clock=clock, edition=(2009, 2014, 2018, 2023)[seed % 4])
    white = chess.WHITE
    pieces = [chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT]
    rng.shuffle(pieces)
    untouched = seed % 3 == 0  # a first piece put on b8 and replaced before it was let go (not released)
    chosen = pieces[: 4 if untouched else 3]
    t = 0.0
    table.feed(SquareChanged(at=t, square=chess.B7, content=None))
    t += rng.uniform(0.1, 0.5)
    table.feed(SquareChanged(at=t, square=chess.B8, content=chess.Piece(chosen[0], white)))
    if untouched:
        t += rng.uniform(T_FLICKER + 0.01, T_SETTLE - 0.04)  # (a shorter touch reads as a sensor flicker)
        table.feed(SquareChanged(at=t, square=chess.B8, content=None))
        t += rng.uniform(0.05, T_SETTLE * 0.3)
        table.feed(SquareChanged(at=t, square=chess.B8, content=chess.Piece(chosen[1], white)))
    released = chosen[1:] if untouched else chosen
    t += T_SETTLE + rng.uniform(0.05, 5.0)
    table.advance(t)
    for piece in released[1:]:
        t += rng.uniform(0.3, 8.0)
        table.feed(SquareChanged(at=t, square=chess.B8, content=None))
        t += rng.uniform(0.1, 1.5)
        table.feed(SquareChanged(at=t, square=chess.B8, content=chess.Piece(piece, white)))
        t += T_SETTLE + rng.uniform(0.05, 5.0)
        table.advance(t)
    last = chess.Move(chess.B7, chess.B8, promotion=released[-1])
    assert published(table.outs) == [last.uci()], "the board's promotion, the ones before retracted"
    table.board.push(last)
    if clock:
        table.press(white, t)
    reply = next(m for m in table.board.legal_moves if table.board.piece_at(m.from_square).piece_type == chess.KING)
    table.play(reply, t + rng.uniform(0.5, 3.0), press=clock)
    table.advance(table.events[-1].at + 10.0)
    base = chess.Board(PROMOTION)
    (choice,) = _raised(table.outs, "PROMOTION_CHOICE_CHANGED")
    assert choice.suggestion.move == base.san(chess.Move(chess.B7, chess.B8, promotion=chosen[0])), \
        "the first piece placed stands (4.4.4)"
    assert len(_updated(table.outs, choice.id)) >= len(chosen) - 2, "each later change updates it"
    final = table.engine.g.irr[choice.id]
    assert final.suggestion.move == choice.suggestion.move
    (changed,) = _raised(table.outs, "RELEASED_MOVE_CHANGED")
    assert changed.suggestion.move == base.san(chess.Move(chess.B7, chess.B8, promotion=released[0]))
    assert sorted(table.strong()) == ["PROMOTION_CHOICE_CHANGED", "RELEASED_MOVE_CHANGED"], "one per ply each"
    assert len(_raised(table.outs, "PROMOTION_ORDER_2009")) == (1 if table.engine.g.edition == 2009 else 0), \
        "E2009's promotion ritual (the pawn not exchanged on the square): one per ply too"


_K, _R = chess.Piece(chess.KING, chess.WHITE), chess.Piece(chess.ROOK, chess.WHITE)


@pytest.mark.parametrize("seed", range(12))
def test_a_chess960_castling_completed_again_is_one_castling_order_note(seed: int) -> None:
    """Kc1 released (the king's step next to its start onto its castling square), the rook to d1 (O-O-O, the
    order noted), the rook back to a1, and to d1 again (two or three times)."""
    rng = random.Random(seed)
    fen = "4k3/8/8/8/8/8/8/RK6 w A - 0 1"
    engine = Engine(RulesConfig(clock_expected=False),
                    GameInfo(chess960=True, start_fen=fen, edition=(2009, 2014, 2018, 2023)[seed % 4]))
    outs: list = []
    t = 1.0

    def feed(square: str, piece: chess.Piece | None, pause: float) -> None:
        nonlocal t
        outs.extend(_fed(engine, SquareChanged(at=t, square=chess.parse_square(square), content=piece)))
        t += pause

    feed("b1", None, rng.uniform(0.1, 0.4))
    feed("c1", _K, T_SETTLE + rng.uniform(0.1, 3.0))
    rounds = 2 + seed % 2
    for i in range(rounds):
        feed("a1", None, rng.uniform(0.1, 0.4))
        feed("d1", _R, T_SETTLE + rng.uniform(0.1, 3.0))
        outs.extend(engine.advance(t))
        if i < rounds - 1:
            feed("d1", None, rng.uniform(0.1, 0.4))
            feed("a1", _R, T_SETTLE + rng.uniform(0.1, 3.0))
            outs.extend(engine.advance(t))
    assert [m.san for m in engine.state.moves] == ["O-O-O"]
    (order,) = _raised(outs, "CHESS960_CASTLING_ORDER")
    assert len(_updated(outs, order.id)) >= rounds - 1, "each later completion updates the note"
    assert len(_raised(outs, "RELEASED_MOVE_CHANGED")) == 1, "the castling released and changed: one (R07)"


@pytest.mark.parametrize("clock", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_the_last_change_ending_the_game_still_updates(clock: bool, seed: int) -> None:
    """b8=Q released, changed to b8=R, then to b8=N: king and knight against king, a dead position that ends the
    game at once (5.2.2) and completes the move. Still one PROMOTION_CHOICE_CHANGED and one RELEASED_MOVE_CHANGED,
    updated. Before: the game end cleared the ply's findings first, and the last change raised both again."""
    rng = random.Random(seed)
    fen = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
    table = Table(fen, clock=clock, edition=(2009, 2014, 2018, 2023)[seed])
    t = 0.0
    table.feed(SquareChanged(at=t, square=chess.B7, content=None))
    t += rng.uniform(0.1, 0.5)
    table.feed(SquareChanged(at=t, square=chess.B8, content=chess.Piece(chess.QUEEN, chess.WHITE)))
    for piece in (chess.ROOK, chess.KNIGHT):
        t += T_SETTLE + rng.uniform(0.05, 5.0)
        table.advance(t)
        t += rng.uniform(0.3, 5.0)
        table.feed(SquareChanged(at=t, square=chess.B8, content=None))
        t += rng.uniform(0.1, 1.0)
        table.feed(SquareChanged(at=t, square=chess.B8, content=chess.Piece(piece, chess.WHITE)))
    table.advance(t + 10.0)
    assert [m.san for m in table.engine.state.moves] == ["b8=N"]
    assert len(_raised(table.outs, "PROMOTION_CHOICE_CHANGED")) == 1
    (changed,) = _raised(table.outs, "RELEASED_MOVE_CHANGED")
    assert changed.suggestion.move == "b8=Q+"
    assert _updated(table.outs, changed.id)
