"""The clock's move counter after an illegal move (7.1 / R21: "adjusts the move counter if necessary").

A DGT clock counts the presses of each player and adds the next period's time at the press that completes the
period's last move (e.g. 40/5400+30:1800+30). The press that completed an illegal move is counted too; after the
reinstatement the offender's replacement is pressed again, so unless the arbiter takes one off the counter while he
sets the times (DGT 3000 time-setting mode), the clock adds the period one move early: at the press of the
offender's last move but one. The arbiter who restarts by moving the lever on the running clock (pressing the
opponent's side) adds one to the opponent's counter the same way. Each counter ahead is one incident, told once: at
the press where the clock adds the period early (CLOCK_MOVE_COUNTER_MISMATCH, naming the press it counted); the
press that completes the period by the Laws, where the clock adds nothing more, is the same offset, not a second
alert. The counters corrected by the arbiter: nothing.

Before the fix each counter left ahead gave two CLOCK_MOVE_COUNTER_MISMATCH warnings (the second saying "the clock
added no period time", which it had, one move before) and none named the press that caused it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import chess
import pytest

from boardd.core.outputs import Severity
from tests.core.correction_audit_rig import Rig, random_hands
from tests.core.scenario import ClockSim
from tests.core.test_correction_audit import Case, _correct, _illegal_moves, random_clocking


@dataclass
class CountingClock(ClockSim):
    """A clock that counts each player's presses and adds the second period's time at the *moves*-th one."""

    moves: int = 40
    extra: float = 1800.0
    count: dict[chess.Color, int] = field(default_factory=lambda: {chess.WHITE: 0, chess.BLACK: 0})

    def press(self, color: chess.Color, at: float) -> object:  # type: ignore[override]
        self._tick(at)
        self.count[color] += 1
        if self.count[color] == self.moves:
            if color == chess.WHITE:
                self.white += self.extra
            else:
                self.black += self.extra
        return super().press(color, at)


def counter_after_illegal(seed: int, edition: int, corrected: bool) -> list[str]:
    rng = random.Random(seed)
    moves = rng.randrange(5, 9)
    rig = Rig(None, edition=edition, tc=f"{moves}/5400+30:1800+30", seconds=5400.0)
    clock = CountingClock(white=rig.clock.white, black=rig.clock.black, running=rig.clock.running,
                          lever=rig.clock.lever, last=rig.clock.last, moves=moves)
    rig.clock = clock
    rig.t = 0.0
    # a few moves, then an illegal move of the side to move before the end of the period
    for _ in range(rng.randrange(2, 2 * moves - 5)):
        legal = [m for m in rig.board.legal_moves if not rig.board.is_castling(m)]
        rig.play(rng.choice(legal))
    candidates = _illegal_moves(rig.board)
    if not candidates or rig.board.is_game_over():
        return []
    offender = rig.board.turn
    ply = len(rig.board.move_stack)
    before = rig.board.copy()
    ill = rng.choice(candidates)
    piece = rig.board.piece_at(ill.from_square)
    assert piece is not None
    rig.by_hand(rng, ill, piece)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    illegal = [i for i in rig.raised() if i.severity is Severity.ILLEGAL_MOVE]
    if len(illegal) != 1:
        return [f"at the press: {[(i.code, i.subtype) for i in rig.strong()]}"]
    clocking = random_clocking(rng)
    opponent_presses = clock.count[not offender]
    _correct(rig, rng, before, offender, reinstate_ply=ply, hands=random_hands(rng, noisy=False),
             clocking=clocking, penalty=120)
    restarts = clock.count[not offender] - opponent_presses  # the arbiter's restart by the lever, counted too
    if corrected:  # the arbiter takes the presses the Laws do not count off the counter (7.1)
        clock.count[offender] -= 1
        clock.count[not offender] -= restarts
    # play on past the end of the offender's period
    touched = ill.from_square
    while rig.engine.state.moves and sum(1 for m in rig.engine.state.moves if m.side == offender) <= moves:
        legal = list(rig.board.legal_moves)
        if not legal or rig.board.is_game_over():
            return []
        own = [m for m in legal if m.from_square == touched]
        touched = None
        rig.t += rng.uniform(0.5, 2.0)
        rig.play(rng.choice(own or legal))
    rig.settle()
    counter = [i for i in rig.raised() if i.code == "CLOCK_MOVE_COUNTER_MISMATCH"]
    problems = []
    if corrected and counter:
        problems.append(f"counter corrected, yet {[i.suggestion.text for i in counter]}")
    if not corrected:
        # one per side whose counter is ahead: the offender's (the illegal press), the opponent's if the arbiter
        # restarted by pressing his side; each naming the press
        sides = [offender] + ([not offender] if restarts else [])
        if sorted(i.side for i in counter if i.side is not None) != sorted(sides) or len(counter) != len(sides):
            problems.append(f"{len(counter)} CLOCK_MOVE_COUNTER_MISMATCH for {sides}: "
                            f"{[i.suggestion.text for i in counter]}")
        elif not all(illegal[0].id in i.suggestion.text for i in counter):
            problems.append(f"not naming the press of {illegal[0].id}: {[i.suggestion.text for i in counter]}")
    truth = [m.uci() for m in rig.board.move_stack]
    if rig.record() != truth:
        problems.append(f"record {rig.record()} != game {truth}")
    return problems + ([f"clock {clocking}"] if problems else [])


CASES = [Case(seed, edition, "") for seed in range(40) for edition in (2009, 2014, 2018, 2023)]


@pytest.mark.parametrize("corrected", [False, True], ids=["counter-left", "counter-corrected"])
@pytest.mark.parametrize("case", CASES, ids=[f"seed{c.seed}-{c.edition}" for c in CASES])
def test_the_counted_illegal_press_is_one_alert(case: Case, corrected: bool) -> None:
    assert counter_after_illegal(case.seed, case.edition, corrected) == []
