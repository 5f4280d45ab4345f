"""Chess960 castling and the arbiter's corrections on a Chess960 board, by the audit rig of
:mod:`tests.core.chess960_audit` (built from the Laws and a sensor board's reports, not from the simulator).

Seeded samples here; ``scripts/chess960_audit.py`` sweeps every start array. Plus the cases the audit found, one
by one: a castling the Laws do not allow done by the king alone or the rook alone is an illegal *castling*
(R16), king and rook lifted inside one scan are touched together (4.4.1, rules-spec §2), and after an illegal
castling begun with the king the player is free when the king cannot move (4.4.3).
"""

from __future__ import annotations

import chess
import pytest

from tests.core.chess960_audit import Rig960

# -- the defects one by one --------------------------------------------------------------------------------------

_K, _R = chess.Piece(chess.KING, chess.WHITE), chess.Piece(chess.ROOK, chess.WHITE)


def _pressed(fen: str, steps: list[tuple[str, chess.Piece | None, float]]) -> Rig960:
    rig = Rig960(chess.Board(fen, chess960=True))
    rig.t = 1.0
    for square, piece, pause in steps:
        if piece is None:
            rig.lift(chess.parse_square(square))
        else:
            rig.place(chess.parse_square(square), piece)
        rig.t += pause
    rig.t += 0.4
    rig.press(chess.WHITE)
    rig.settle(3.0)
    return rig


LONE = [
    ("4k3/8/8/8/8/8/8/1K3R2 w - - 0 1", [("b1", None, 0.3), ("g1", _K, 0.3)], "king alone over f1, no right"),
    ("4k3/8/8/8/8/8/8/3R2K1 w - - 0 1", [("g1", None, 0.3), ("c1", _K, 0.3)], "king alone over d1, no right"),
    ("4k1r1/8/8/8/8/8/8/1K3R2 w F - 0 1", [("b1", None, 0.3), ("g1", _K, 0.3)], "king alone onto an attacked g1"),
    ("4k3/8/8/8/8/8/8/6KR w - - 0 1", [("h1", None, 0.3), ("f1", _R, 0.3)], "rook alone over the king, no right"),
    ("4k3/8/8/8/8/8/8/RBK5 w A - 0 1", [("a1", None, 0.3), ("d1", _R, 0.3)], "rook alone, a bishop in the way"),
    ("2r1k3/8/8/8/8/8/8/R1K5 w A - 0 1", [("a1", None, 0.3), ("d1", _R, 0.3)], "rook alone, the king in check"),
]


@pytest.mark.parametrize(("fen", "steps", "why"), LONE, ids=[c[-1] for c in LONE])
def test_a_lone_king_or_rook_castling_that_is_illegal_is_an_illegal_castling(
        fen: str, steps: list[tuple[str, chess.Piece | None, float]], why: str) -> None:
    """II.3: castling by the king alone (the rook on d1/f1 already) or the rook alone (over the king on c1/g1) is
    castling; when the Laws do not allow it, the illegal move is a castling (R16 CASTLING_ILLEGAL), as for the
    two-piece shapes. It read as the king's GEOMETRY or the rook BLOCKED by its own king before."""
    board = chess.Board(fen, chess960=True)
    assert not any(board.is_castling(m) for m in board.legal_moves), why
    rig = _pressed(fen, steps)
    assert [(i.code, i.subtype) for i in rig.strong()] == [("ILLEGAL_MOVE", "CASTLING_ILLEGAL")], why
