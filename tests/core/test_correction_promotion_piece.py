"""7.5.2 (E2009: 7.4 a) done with another piece than the queen: the pawn left on the last rank and the clock pressed,
then exchanged on the promotion square for a rook, bishop or knight (or put back and promoted again).

E2009 leaves the choice open (7.4 a: "failing to meet the requirements of the promotion" is an illegal move; the
replacement falls under 4.3 and 4.6, the piece is the player's choice): the board showing the pawn exchanged for
any piece is the illegal move put right, recorded as that promotion, resolved when the arbiter handled it (paused).
From 2014 the pawn is replaced by a queen (7.5 a, 7.5.2): the board still stands as it is (G6, the record is the
promotion it shows, nothing else of the game is misread), and the arbiter is told once, in the same incident:
the finding still open says so; resolved by his hands, a TOUCH_MOVE_VIOLATION joined to it (rules-spec §3.7).

Before the fix the exchange for a non-queen left the record on the pawn move (``!b7b8``), the finding open even
after the arbiter put the board right in E2009, and the opponent's next move read the piece on the promotion
square as a pawn touched (TOUCH_CAPTURE_SUSPECTED); from 2014 a replacement b8=N after the pawn was put back went
unflagged.
"""

from __future__ import annotations

import dataclasses
import random

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.outputs import IrregularityRaised, Output, Severity, Status
from drivers.sim import Correction, CorrectionKind, correction_applicable, random_game, simulate_game
from tests.core.correction_audit_rig import Rig, pawn_to_last_rank, random_hands, restore_steps, run_steps
from tests.core.test_correction_audit import PROMOTIONS, random_clocking
from tests.core.test_scenarios import Scn, check, run

_PRESS = "0 L b7 · 300 P b8 wP · 700 C W"
_REPLY = "6000 L g8 · 6300 P g7 bK · 6800 C B"
_INFO = ("CLOCK_PAUSED", "ARBITER_ADJUST", "PROMOTION_ORDER_2009")


@pytest.mark.parametrize("piece", ["N", "R", "B"])
@pytest.mark.parametrize("edition", [2009, 2014, 2018, 2023])
def test_pawn_exchanged_for_another_piece_on_a_paused_clock(edition: int, piece: str) -> None:
    san = f"b8={piece}" + ("+" if piece == "R" else "")
    codes = ("PAWN_NOT_REPLACED",) if edition == 2009 else ("PAWN_NOT_REPLACED", "TOUCH_MOVE_VIOLATION")
    scn = Scn("K", _PRESS + f" · 2000 PAUSE · 3500 L b8 · 4000 P b8 w{piece} · 4500 ADD B 120 · 5000 RESUME · "
              + _REPLY, (san, "Kg7"), codes, edition=edition, tc="5400+30", allow_info=_INFO)
    r = run(scn)
    check(scn, r)
    pawn = next(i for i in r.engine.irregularities if i.code == "PAWN_NOT_REPLACED")
    assert pawn.status is Status.RESOLVED and pawn.ruling is not None
    assert pawn.ruling.startswith(f"put right on the board: {san} stands")
    assert "+2:00 seen on the clock for Black" in pawn.ruling
    if edition >= 2014:
        violation = next(i for i in r.engine.irregularities if i.code == "TOUCH_MOVE_VIOLATION")
        assert violation.incident == pawn.id and violation.related == (pawn.id,)
        assert violation.suggestion.move == "b8=Q+"
        assert "7.5 a" in violation.suggestion.text if edition == 2014 else "7.5.2" in violation.suggestion.text


@pytest.mark.parametrize("piece", ["N", "R"])
@pytest.mark.parametrize("edition", [2009, 2014, 2023])
def test_pawn_exchanged_for_another_piece_on_a_running_clock(edition: int, piece: str) -> None:
    """Finished by the player on the opponent's time (no arbiter seen): the finding stays open, one alert."""
    san = f"b8={piece}" + ("+" if piece == "R" else "")
    scn = Scn("K", _PRESS + f" · 1500 L b8 · 2000 P b8 w{piece} · " + _REPLY, (san, "Kg7"), ("PAWN_NOT_REPLACED",),
              edition=edition, tc="5400+30", allow_info=_INFO)
    r = run(scn)
    check(scn, r)
    pawn = next(i for i in r.engine.irregularities if i.code == "PAWN_NOT_REPLACED")
    assert pawn.status is Status.OPEN
    assert (f"the board shows {san}" in pawn.suggestion.text) == (edition >= 2014)


@pytest.mark.parametrize("piece", ["Q", "N"])
@pytest.mark.parametrize("edition", [2009, 2014, 2023])
def test_pawn_put_back_then_promoted_again(edition: int, piece: str) -> None:
    """The arbiter puts the pawn back on b7 (the position before, 7.5.1) and the player promotes again: from 2014
    only the queen replaces it (7.5.2); in E2009 the choice is open."""
    san = f"b8={piece}+" if piece == "Q" else f"b8={piece}"
    violation = edition >= 2014 and piece != "Q"
    scn = Scn("K", _PRESS + " · 2000 PAUSE · 3500 L b8 · 4000 P b7 wP · 4200 ADD B 120 · 4500 LEVERX W · "
              f"5000 RESUME · 5500 L b7 · 5700 P b8 w{piece} · 5900 C W · 7000 L g8 · 7300 P g7 bK · 7800 C B",
              (san, "Kg7"), ("PAWN_NOT_REPLACED", "TOUCH_MOVE_VIOLATION") if violation else ("PAWN_NOT_REPLACED",),
              edition=edition, tc="5400+30", allow_info=_INFO)
    r = run(scn)
    check(scn, r)
    pawn = next(i for i in r.engine.irregularities if i.code == "PAWN_NOT_REPLACED")
    assert pawn.status is Status.RESOLVED
    if violation:
        touch = next(i for i in r.engine.irregularities if i.code == "TOUCH_MOVE_VIOLATION")
        assert touch.incident == pawn.id and touch.suggestion.move == "b8=Q+"


# ------------------------------------------------------------------------------------------- randomised audit


def exchanged(seed: int, edition: int) -> list[str]:
    """The pawn set down on the last rank, the press, then the pawn exchanged on that square for a piece chosen at
    random, by the arbiter (paused, any order, two hands, the wrong piece first) or on the running clock; three
    more moves. The record must be the promotion the board shows and the moves after it; the alerts: the
    PAWN_NOT_REPLACED, and from 2014 for another piece than the queen the Law's queen said once."""
    rng = random.Random(seed)
    fen, src, dst = PROMOTIONS[seed % len(PROMOTIONS)]
    a, b = chess.parse_square(src), chess.parse_square(dst)
    rig = Rig(fen, edition=edition, tc="5400+30")
    rig.t = 0.0
    rig.outs.clear()
    offender = rig.board.turn
    pawn = rig.board.piece_at(a)
    assert pawn is not None
    clocking = random_clocking(rng)
    hands = random_hands(rng, noisy=clocking.paused)
    pawn_to_last_rank(rig, rng, a, b, pawn)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 3.0)
    choice = rng.choice((chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT))
    move = chess.Move(a, b, promotion=choice)
    after = rig.board.copy()
    after.push(move)
    if clocking.paused:
        rig.feed(rig.clock.pause(rig.t))
        rig.t += rng.uniform(0.5, 2.0)
    run_steps(rig, rng, restore_steps(rng, rig.phys, after, hands), hands)
    if clocking.paused:
        if offender == chess.WHITE:
            rig.clock.black += 120
        else:
            rig.clock.white += 120
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
    lawful = edition < 2014 or choice == chess.QUEEN
    expected = ["PAWN_NOT_REPLACED"] + ([] if lawful or not clocking.paused else ["TOUCH_MOVE_VIOLATION"])
    strong = [i.code for i in rig.strong()]
    if strong != expected:
        problems.append(f"findings {strong} != {expected}")
    final = {i.code: i for i in rig.engine.irregularities}
    status = final["PAWN_NOT_REPLACED"].status
    if (status is Status.RESOLVED) != clocking.paused:
        problems.append(f"PAWN_NOT_REPLACED {status}")
    if not lawful and not clocking.paused and "the pawn is replaced by a queen" not in \
            final["PAWN_NOT_REPLACED"].suggestion.text.split(";")[-1]:
        problems.append("the open finding does not say the queen")
    if any(i.severity is Severity.ILLEGAL_MOVE and i.code != "PAWN_NOT_REPLACED" for i in rig.raised()):
        problems.append("another illegal-move finding")
    return problems + ([f"piece {chess.piece_name(choice)} hands {hands} clock {clocking}"] if problems else [])


CASES = [(seed, edition) for edition in (2009, 2014, 2018, 2023) for seed in range(30)]


@pytest.mark.parametrize(("seed", "edition"), CASES, ids=[f"seed{s}-{e}" for s, e in CASES])
def test_pawn_exchanged_for_a_chosen_piece_in_any_order(seed: int, edition: int) -> None:
    assert exchanged(seed, edition) == []


# ------------------------------------------------------------------------------------------- the simulator's cycle


def _sim_cases(count: int) -> list[tuple[int, int]]:
    """(game seed, ply) of random games with a queen promotion the pawn-not-replaced cycle can precede."""
    cases = []
    for seed in range(400):
        game = random_game(seed)
        board = game.board()
        for index, move in enumerate(list(game.mainline_moves())[:-2]):
            if index >= 2 and correction_applicable(CorrectionKind.PAWN_NOT_REPLACED, board, move):
                cases.append((seed, index + 1))
                break
            board.push(move)
        if len(cases) == count:
            break
    return cases


SIM_CASES = _sim_cases(12)


@pytest.mark.parametrize(("seed", "ply"), SIM_CASES, ids=[f"game{s}-ply{p}" for s, p in SIM_CASES])
def test_the_simulators_e2009_cycle_exchanging_or_reinstating_is_one_alert(seed: int, ply: int) -> None:
    """drivers.sim's pawn-not-replaced cycle in E2009: the arbiter reinstates (the pawn moves again) or exchanges
    the pawn on its square for the piece chosen, at random; replayed, the record is the game and the finding is the
    one alert, put right by the board."""
    game = random_game(seed)
    sim = simulate_game(game, seed=seed, profile="clean", corrections=[Correction(CorrectionKind.PAWN_NOT_REPLACED,
                                                                                  ply)], edition=2009)
    engine = Engine(sim.header.rules, sim.game)
    outs: list[Output] = []
    latest = sim.events[0].at
    for event in sim.events:
        latest = max(latest, event.at)
        while (due := engine.next_deadline()) is not None and due < latest:
            outs += engine.advance(due)
        outs += engine.feed(event if event.at >= latest else dataclasses.replace(event, at=latest))
    outs += engine.advance(latest + 30.0)
    label = next(label for at, label in sim.handled if at == ply and label.startswith("correction/"))
    assert [m.uci for m in engine.state.moves] == sim.moves, label
    raised = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]
    assert [i.code for i in raised if i.severity is not Severity.INFO] == ["PAWN_NOT_REPLACED"], label
    final = next(i for i in engine.irregularities if i.code == "PAWN_NOT_REPLACED")
    assert final.status is Status.RESOLVED or ("running" in label and " exchanged" in label), (label, final.ruling)
