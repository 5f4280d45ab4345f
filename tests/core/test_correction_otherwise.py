"""7.5.2 in rapid and blitz without adequate supervision (the "otherwise" regime: E2009 A.4 c, E2018 A.4.2 / A.4.4,
E2023 A.5.2 / A.5.4; rules-spec R22, R23).

The pawn left on the last rank and the clock pressed. The opponent claims before his next move (he stops the clock
and calls the arbiter, the claim entered on the tablet); the arbiter applies 7.5.2 through 7.5.5: the pawn is
replaced by a queen (E2009: the piece the player chooses), the penalty time added, the clock restarted. Or nobody
claims and the opponent moves: the illegal move stands, the illegal position (a pawn on the last rank) is still on
the board after the next completed move: the arbiter declares the game drawn (R23), said once.

Before the fix the exchange after the claim was not recorded (no pending fix in this regime): the record kept the
pawn on the last rank, the opponent's next move was read as touching it (TOUCH_CAPTURE_SUSPECTED) and
ILLEGAL_POSITION_PERSISTS suggested a draw for a position the arbiter had put right. Without a claim, once the draw
had been suggested, every later completed move raised ILLEGAL_POSITION_PENDING again for the same pawn.
"""

from __future__ import annotations

import dataclasses
import random

import chess
import pytest

from boardd.core.events import Resolve
from boardd.core.outputs import Severity, Status
from boardd.core.settings import Regime
from tests.core.correction_audit_rig import Rig, pawn_to_last_rank, random_hands, restore_steps, run_steps
from tests.core.test_correction_audit import (
    PROMOTIONS,
    _correct,
    _finish,
    _illegal_moves,
    _open,
    _random_game,
    random_clocking,
)
from tests.core.test_scenarios import Scn, check, run

_PRESS = "0 L b7 · 300 P b8 wP · 700 C W"
_INFO = ("CLOCK_PAUSED", "ARBITER_ADJUST")


@pytest.mark.parametrize("tc", ["900+10", "180+2"])
@pytest.mark.parametrize("edition", [2018, 2023])
def test_the_claimed_pawn_exchanged_for_a_queen_is_recorded(edition: int, tc: str) -> None:
    scn = Scn("K", _PRESS + " · 1500 PAUSE · 1700 ARB claim · 3500 L b8 · 4000 P b8 wQ · 4500 ADD B 60 · 5000 RESUME · "
              "6000 L g8 · 6300 P g7 bK · 6800 C B", ("b8=Q+", "Kg7"),
              ("PAWN_NOT_REPLACED", "ILLEGAL_POSITION_PENDING"), edition=edition, tc=tc, regime=Regime.OTHERWISE,
              allow_info=_INFO)
    r = run(scn)
    check(scn, r)
    pawn = next(i for i in r.engine.irregularities if i.code == "PAWN_NOT_REPLACED")
    assert pawn.status is Status.RESOLVED and pawn.ruling is not None
    assert pawn.ruling.startswith("claim by the opponent; put right on the board: b8=Q+ stands"), pawn.ruling
    assert not [i for i in r.raised if i.code == "ILLEGAL_POSITION_PERSISTS"]
    pending = next(i for i in r.engine.irregularities if i.code == "ILLEGAL_POSITION_PENDING")
    assert pending.status is Status.RESOLVED


@pytest.mark.parametrize("tc", ["900+10", "180+2"])
@pytest.mark.parametrize("edition", [2014, 2018, 2023])
def test_a_pawn_left_on_the_last_rank_unclaimed_is_a_draw_said_once(edition: int, tc: str) -> None:
    scn = Scn("K", _PRESS + " · 2000 L g8 · 2300 P g7 bK · 2800 C B · 4000 L e1 · 4300 P e2 wK · 4800 C W · "
              "6000 L g7 · 6300 P g6 bK · 6800 C B · 8000 L e2 · 8300 P e3 wK · 8800 C W",
              ("!", "Kg7", "Ke2", "Kg6", "Ke3"), ("PAWN_NOT_REPLACED", "ILLEGAL_POSITION_PENDING",
                                                  "ILLEGAL_MOVE_STANDS", "ILLEGAL_POSITION_PERSISTS"),
              edition=edition, tc=tc, regime=Regime.OTHERWISE, allow_info=_INFO, result={
                  "ILLEGAL_POSITION_PERSISTS": "1/2-1/2"})
    check(scn, run(scn))


def exchanged_on_claim(seed: int, edition: int, tc: str) -> list[str]:
    """The pawn on the last rank, the press; the opponent stops the clock and claims; the arbiter exchanges the
    pawn for a queen (E2009: a piece chosen at random) in any order, adds the time, restarts; three more moves."""
    rng = random.Random(seed)
    fen, src, dst = PROMOTIONS[seed % len(PROMOTIONS)]
    a, b = chess.parse_square(src), chess.parse_square(dst)
    rig = Rig(fen, edition=edition, tc=tc, regime=Regime.OTHERWISE, seconds=float(tc.split("+", 1)[0]))
    rig.t = 0.0
    rig.outs.clear()
    offender = rig.board.turn
    pawn = rig.board.piece_at(a)
    assert pawn is not None
    hands = random_hands(rng, noisy=True)
    pawn_to_last_rank(rig, rng, a, b, pawn)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    first = [i for i in rig.raised() if i.severity is Severity.ILLEGAL_MOVE]
    if [i.code for i in first] != ["PAWN_NOT_REPLACED"]:
        return [f"at the press: {[(i.code, i.subtype) for i in rig.raised()]}"]
    rig.feed(rig.clock.pause(rig.t))  # the opponent stops the clock and claims
    rig.t += rng.uniform(1.0, 5.0)
    rig.feed(Resolve(at=rig.t, irregularity_id=first[0].id, ruling="claim by the opponent", accept=True, claim=True))
    rig.t += rng.uniform(0.5, 2.0)
    choice = chess.QUEEN if edition >= 2014 else rng.choice((chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT))
    move = chess.Move(a, b, promotion=choice)
    after = rig.board.copy()
    after.push(move)
    run_steps(rig, rng, restore_steps(rng, rig.phys, after, hands), hands)
    if offender == chess.WHITE:
        rig.clock.black += 60
    else:
        rig.clock.white += 60
    rig.feed(rig.clock.reading(rig.t))
    rig.t += rng.uniform(0.5, 2.0)
    rig.feed(rig.clock.resume(rig.t))
    rig.t += rng.uniform(0.3, 1.0)
    rig.board.push(move)
    rig.t += rng.uniform(1.0, 3.0)
    for _ in range(3):
        moves = list(rig.board.legal_moves)
        if not moves or rig.board.is_game_over():
            break
        rig.play(rng.choice(moves))
    rig.settle()
    problems = []
    truth = [m.uci() for m in rig.board.move_stack]
    if rig.record() != truth:
        problems.append(f"record {rig.record()} != game {truth}")
    unresolved = [(i.code, i.status.value) for i in rig.engine.irregularities
                  if i.severity is not Severity.INFO and i.status is not Status.RESOLVED]
    if unresolved:
        problems.append(f"open: {unresolved}")
    persists = [i.code for i in rig.raised() if i.code == "ILLEGAL_POSITION_PERSISTS"]
    if persists:
        problems.append("a draw suggested for a position put right")
    return problems + ([f"piece {chess.piece_name(choice)} hands {hands}"] if problems else [])


CASES = [(seed, edition, tc) for edition in (2009, 2018, 2023) for tc in ("900+10", "180+2") for seed in range(15)]


@pytest.mark.parametrize(("seed", "edition", "tc"), CASES, ids=[f"seed{s}-{e}-{t}" for s, e, t in CASES])
def test_the_claimed_pawn_exchanged_in_any_order(seed: int, edition: int, tc: str) -> None:
    assert exchanged_on_claim(seed, edition, tc) == []


# ------------------------------------------------------------------------------- the arbiter acting in the window


def second_illegal_corrected_on_the_board(seed: int, edition: int, tc: str) -> list[str]:
    """Two illegal moves by the same player; each time the arbiter (or the opponent calling him) stops the clock
    before the opponent's next move and the position before it is put back on the board, any order; nothing entered
    on the tablet. 7.5.5 applies in the window (A.4.2 / A.5.2; E2014 A.4 b, E2009 A.4 c / B.3 c): the count follows,
    the second illegal move's suggestion is the Laws' (the loss from 2014; E2009 rapid: two minutes again, the third
    loses; E2009 blitz and E2014: already the first)."""
    rng = random.Random(seed)
    start = _random_game(rng, rng.randrange(6, 24))
    rig = Rig(None, edition=edition, tc=tc, regime=Regime.OTHERWISE, seconds=float(tc.split("+", 1)[0]))
    _open(rig, start)
    blitz = tc == "180+2"
    findings = []
    for round_ in range(2):
        offender = rig.board.turn
        ply = len(rig.board.move_stack)
        before = rig.board.copy()
        candidates = [i for i in _illegal_moves(rig.board) if rig.board.piece_at(i.from_square).piece_type
                      != chess.KING]
        if not candidates or rig.board.is_game_over():
            return []
        ill = rng.choice(candidates)
        piece = rig.board.piece_at(ill.from_square)
        assert piece is not None
        rig.by_hand(rng, ill, piece)
        rig.press(offender)
        rig.t += rng.uniform(0.5, 3.0)
        rig.outs += rig.engine.advance(rig.t)
        new = [i for i in rig.raised() if i.severity is Severity.ILLEGAL_MOVE and i.id not in findings]
        if len(new) != 1:
            return [f"round {round_} at the press: {[(i.code, i.subtype) for i in rig.raised()]}"]
        findings.append(new[0].id)
        clocking = dataclasses.replace(random_clocking(rng), paused=True, pause_late=False, tablet="none",
                                       restart=rng.choice(("lever-while-paused", "lever-after-resume")))
        _correct(rig, rng, before, offender, reinstate_ply=ply, hands=random_hands(rng, noisy=True),
                 clocking=clocking, penalty=60 if edition == 2023 or blitz else 120)
        if round_ == 0:
            # the replacement, then the game goes on to the same player's next move
            _finish(rig, rng, ill.from_square, more=1)
    final = {i.id: i for i in rig.engine.irregularities}
    first, second = final[findings[0]], final[findings[1]]
    loss_first = edition == 2014 or (edition == 2009 and blitz)
    loss_second = loss_first or edition >= 2018
    problems = []
    for finding, loss in ((first, loss_first), (second, loss_second)):
        if (finding.suggestion.result is not None) != loss:
            problems.append(f"{finding.id}: {finding.suggestion.text}")
        if finding.status is not Status.RESOLVED:
            problems.append(f"{finding.id} {finding.status}")
    reached = [i for i in rig.raised() if i.code == "ILLEGAL_MOVE_LIMIT_REACHED"]
    if bool(reached) != loss_second:
        problems.append(f"ILLEGAL_MOVE_LIMIT_REACHED: {len(reached)}")
    return problems


CASES_TWO = [(seed, edition, tc) for edition in (2009, 2014, 2018, 2023) for tc in ("900+10", "180+2")
             for seed in range(10)]


@pytest.mark.parametrize(("seed", "edition", "tc"), CASES_TWO, ids=[f"seed{s}-{e}-{t}" for s, e, t in CASES_TWO])
def test_the_arbiter_correcting_on_the_board_in_the_window_counts_the_illegal_move(seed: int, edition: int,
                                                                                    tc: str) -> None:
    assert second_illegal_corrected_on_the_board(seed, edition, tc) == []
