"""Chess960 castling made while the daemon was down, recovered from the board's own log (DGT EEPROM,
protocols.md §1.9), by every lawful procedure of the audit rig (:mod:`tests.core.chess960_audit`: king first,
the king beside the board, both in hand, one scan, king or rook left in place or lifted and put back, "king takes
rook", slow halves) with the board's noise (slides over the squares passed, a brief wrong placement), and the
opponent's reply; then play goes on seen. The log has no timing, so the order of the changes is all there is.
Rook-first orders (4.4.2, CASTLING_ROOK_FIRST live) are left out: the log cannot tell their timing.
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.events import LoggedChange
from tests.core.chess960_audit import (
    KING_ROOK,
    KING_TAKES_ROOK,
    STAYS,
    _geometry,
    add_noise,
    castle_move,
    castling_steps,
    category,
    reach,
)
from tests.core.test_downtime_parity import Restart

LAWFUL = tuple(p for p in (*KING_ROOK, *STAYS, *KING_TAKES_ROOK) if not p.startswith("rook_first"))


def _one(seed: int) -> tuple[str, str, list[str]]:
    rng = random.Random(seed)
    board = None
    while board is None:
        board = reach(rng, rng.randrange(960), rng.choice(chess.COLORS), rng.random() < 0.5)
    move = castle_move(board, board.is_kingside_castling(next(m for m in board.legal_moves if board.is_castling(m))))
    assert move is not None
    start = chess.Board(board.fen(), chess960=True)
    steps = None
    for procedure in (rng.choice(LAWFUL), *LAWFUL):  # the drawn one, else the first the squares allow
        steps = castling_steps(start, move, procedure)
        if steps is not None:
            break
    assert steps is not None
    ks, kd, rs, _ = _geometry(start, move)
    lifts = [sq for sq, content in (s for s in steps if not isinstance(s, str)) if content is None]
    if ks != kd and rs in lifts and (ks not in lifts or lifts.index(rs) < lifts.index(ks)):
        return "n/a (rook first)", procedure, []
    noise = rng.choice(("none", "slide", "wrong_square"))
    steps = add_noise(start, steps, noise, rng)
    r = Restart(start, rng)
    r.down()
    for step in steps:
        if isinstance(step, str):
            continue
        square, content = step
        r.phys[square] = content
        r.log.append(LoggedChange(square=square, content=content))
    r.press(start.turn, seen=False)
    r.board.push(move)
    reply = rng.choice(sorted((m for m in r.board.legal_moves if not r.board.is_castling(m)), key=lambda m: m.uci()))
    r.play([reply], seen=False)
    r.up(eeprom=True)
    more = [m for m in r.board.legal_moves if not r.board.is_castling(m)]
    if more:
        r.play([rng.choice(sorted(more, key=lambda m: m.uci()))], seen=True)
    r.finish()
    want = [m.uci() for m in r.board.move_stack]
    got = [rec.uci for rec in r.engine.state.moves]
    problems = []
    if got != want:
        problems.append(f"record {got} != {want}")
    if r.strong:
        problems.append(f"findings {r.strong}")
    if [e["kind"] for e in r.recovered] != ["unique"]:
        problems.append(f"recovered {r.recovered}")
    return category(start, move), f"{procedure}/{noise}", problems


CASES = range(120)


@pytest.mark.parametrize("chunk", range(4))
def test_a_castling_made_while_the_daemon_was_down_is_recovered_from_the_boards_log(chunk: int) -> None:
    results = [(seed, _one(seed)) for seed in CASES[chunk::4]]
    assert [(s, r) for s, r in results if r[2]] == []


def test_the_downtime_samples_cover_every_geometry_and_lawful_procedure() -> None:
    results = [_one(seed) for seed in CASES]
    judged = [r for r in results if not r[0].startswith("n/a")]
    assert {r[0] for r in judged} >= {"king and rook move", "king and rook swap", "king moves one square",
                                      "king only (rook on its final square)", "rook only (king on its final square)",
                                      "rook passes the king"}
    assert len({r[1].split("/")[0] for r in judged}) >= 10
