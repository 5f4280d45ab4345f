"""Without a clock the opponent may start his reply as soon as the move is made (1.3, 4.7), before the board has
presumed the release (``T_settle``, rules-spec §3.4.1): a change on other squares does not stop the move from
being made, and the reply complete on the board is recorded after it (``MadeMoves.replied_before_settled``).

Found by the false-alarm bench's games without a clock (``drivers.sim``, ``clock=False``) with the reply started
0.15-0.5 s after the release: when the reply's first report was its piece set down on its square (the new
square reported before the old one clears, within one scan: T65) and the next report, its lift, completed it,
the candidate was dropped only after the reply had been looked for; nothing was made again and the record
stopped there, nothing raised (casual:128 of that run: 27 moves lost).
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo
from boardd.core.outputs import Severity
from boardd.core.settings import RulesConfig
from tests.core.test_noclock_illegal import BP, WN, WP, _feed, _raised, _sq

BK, WB = chess.Piece(chess.KING, chess.BLACK), chess.Piece(chess.BISHOP, chess.WHITE)


def _record(engine: Engine) -> list[str]:
    return [m.uci if m.legal else "!" + m.uci for m in engine.state.moves]


@pytest.mark.parametrize("seed", range(8))
def test_a_reply_reported_new_square_first_inside_t_settle_is_recorded(seed: int) -> None:
    """1.e4 d5 2.Nc3, then Black's d5-d4 started 0.15-0.38 s after the knight was set down on c3, reported d4
    first and d5 0.01-0.18 s later (one scan: the lift from d5, a square White could capture on, reads as White's
    capture until the reply is seen whole); then 3.Nce2. Before: the record stopped at 2.Nc3, nothing raised."""
    rng = random.Random(seed)
    t = 1.0
    events: list[Event] = []
    for frm, to, piece in (("e2", "e4", WP), ("d7", "d5", BP), ("b1", "c3", WN)):
        events.append(_sq(t, frm, None))
        t = round(t + rng.uniform(0.2, 0.6), 3)
        events.append(_sq(t, to, piece))
        t = round(t + rng.uniform(1.0, 3.0), 3)
    t = round(events[-1].at + rng.uniform(0.15, 0.38), 3)
    events.append(_sq(t, "d4", BP))
    t = round(t + rng.uniform(0.01, 0.18), 3)
    events.append(_sq(t, "d5", None))
    t = round(t + rng.uniform(1.0, 3.0), 3)
    events += [_sq(t, "c3", None), _sq(round(t + 0.4, 3), "e2", WN)]
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=rng.choice((2009, 2014, 2018, 2023))))
    outs = _feed(engine, events, t + 30.0)
    assert _record(engine) == ["e2e4", "d7d5", "b1c3", "d5d4", "c3e2"]
    assert [i.code for i in _raised(outs) if i.severity is not Severity.INFO] == []
    moves = engine.state.moves
    assert moves[2].completed_at == moves[4].made_at  # Nc3 completed by White's next move (6.2.1.2)


def test_a_king_move_reported_new_square_first_answered_at_once() -> None:
    """The bench game itself, cut to the pieces that matter: Black's king c8-c7 (c7 reported before c8 clears),
    White's g2-g4 0.36 s after, reported g4 first (g2 a square Black's bishop on h3 could capture on)."""
    board = chess.Board("2k5/8/8/8/8/7b/6P1/4K3 b - - 0 1")
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2014, start_fen=board.fen()))
    events: list[Event] = [_sq(2.111, "c7", BK), _sq(2.197, "c8", None), _sq(2.560, "g4", WP),
                           _sq(2.583, "g2", None), _sq(5.0, "c7", None), _sq(5.4, "d7", BK)]
    outs = _feed(engine, events, 30.0)
    assert _record(engine) == ["c8c7", "g2g4", "c7d7"]
    assert [i.code for i in _raised(outs) if i.severity is not Severity.INFO] == []
