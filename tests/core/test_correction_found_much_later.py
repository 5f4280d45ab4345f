"""7.5.1 "if during a game it is found that an illegal move has been completed": found many moves later.

The arbiter who notices an illegal move only after eight or more plies stops the clock, reconstructs the position
immediately before it (the last identifiable one) from the scoresheets, piece by piece in any order (captured pieces
back from beside the board, two hands, the wrong piece first, a piece on a wrong square on the way), and tells the
tablet before, after, or not at all; then the times, the restart, the replacement under touch-move.

The engine looked for the position before an illegal move only in the last ``_TAKEBACK_DEPTH`` (8) plies. Before the
fix, beyond that, the board put back on the paused clock without the tablet was not recognised (the record kept the
later moves, the illegal move's finding stayed open, the offender's press became CLOCK_PRESS_NO_MOVE, an illegal-move
class finding, with POSITION_MISMATCH_AT_PRESS and the like), and with the tablet told only afterwards the
arbiter's hands raised findings of their own (OPPONENT_STARTED_BEFORE_MOVE_MADE, TWO_HANDS_SUSPECTED,
OUT_OF_TURN_CHANGE). With the clock paused the whole game is looked through now (``Correction._depth``).
"""

from __future__ import annotations

import dataclasses
import random

import chess
import pytest

from boardd.core.laws.codes import is_illegal_move_class
from tests.core.correction_audit_rig import Rig, random_hands
from tests.core.test_correction_audit import (
    PENALTY,
    Case,
    _check,
    _correct,
    _finish,
    _illegal_moves,
    _open,
    _random_game,
    random_clocking,
)


def found_much_later(case: Case, plies: int, tablet: str) -> list[str]:
    rng = random.Random(case.seed * 100 + plies)
    start = _random_game(rng, rng.randrange(6, 24))
    rig = Rig(None, edition=case.edition, tc=case.tc, seconds=float(case.tc.split("+")[0]))
    _open(rig, start)
    offender = rig.board.turn
    ply = len(rig.board.move_stack)
    before = rig.board.copy()
    ill = rng.choice([i for i in _illegal_moves(rig.board) if rig.board.piece_at(i.from_square).piece_type
                      != chess.KING] or _illegal_moves(rig.board))
    piece = rig.board.piece_at(ill.from_square)
    assert piece is not None
    rig.by_hand(rng, ill, piece)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    first = rig.strong()
    if len(first) != 1 or not is_illegal_move_class(first[0].code, case.edition):
        return [f"at the press: {[(i.code, i.subtype) for i in first]}"]
    finding = first[0]
    # nobody noticed: play goes on from the illegal position for *plies* plies
    later = chess.Board(None)
    later.set_board_fen(rig.engine.state.fen.split(" ")[0])
    later.turn = not offender
    later.castling_rights = chess.BB_EMPTY
    for _ in range(plies):
        moves = [m for m in later.legal_moves if not later.is_castling(m) and not m.promotion
                 and not later.is_en_passant(m)]
        if not moves or later.is_game_over():
            return []  # (a game that cannot go on that long: nothing to measure)
        saved, rig.board = rig.board, later
        rig.t += rng.uniform(0.5, 2.0)
        rig.play(rng.choice(moves))
        rig.board = saved
    rig.outs += rig.engine.advance(rig.t)
    mid = [(i.code, i.subtype) for i in rig.strong() if i.id != finding.id]
    problems = [f"before the correction: {mid}"] if mid else []
    # the arbiter finds it: he stops the clock first, then puts the position before it back (any order, any hands)
    clocking = dataclasses.replace(random_clocking(rng), paused=True, pause_late=False, tablet=tablet,
                                   restart=rng.choice(("lever-while-paused", "lever-after-resume")))
    hands = random_hands(rng, noisy=True)
    _correct(rig, rng, before, offender, reinstate_ply=ply, hands=hands, clocking=clocking,
             penalty=PENALTY[(case.edition, case.tc)])
    _finish(rig, rng, ill.from_square)
    problems += _check(rig, finding)
    return problems + ([f"hands {hands} clock {clocking}"] if problems else [])


_KEYS = sorted(PENALTY)
CASES = [(Case(seed, *_KEYS[seed % len(_KEYS)]), plies, tablet)
         for seed in range(12) for plies in (8, 11, 16) for tablet in ("none", "before", "after")]


@pytest.mark.parametrize(("case", "plies", "tablet"), CASES,
                         ids=[f"seed{c.seed}-{c.edition}-{c.tc}-{p}plies-tablet-{t}" for c, p, t in CASES])
def test_an_illegal_move_found_many_moves_later_is_reinstated_on_a_paused_clock(case: Case, plies: int,
                                                                                  tablet: str) -> None:
    assert found_much_later(case, plies, tablet) == []
