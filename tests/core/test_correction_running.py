"""Audit of the restoration after an illegal move on a RUNNING clock (7.5.1; rapid/blitz without the arbiter at the
board: the players put the position back themselves; or the arbiter does it without pausing, 6.11.2 "may"), with the
hands of :func:`tests.core.correction_audit_rig.restore_running`: any order and pace, two hands (both players at
once), the wrong piece first, a piece set down on a wrong square on the way, and the clock pressed by the opponent
(before, during or after), by the offender, or by nobody.

One incident, one alert: the illegal-move finding, resolved by the reinstatement; the restoration's hand movements
belong to it (info notes at most), never a warning of their own (OUT_OF_TURN_CHANGE, ADJUST_OUT_OF_TURN,
TAKEBACK_DETECTED, TWO_HANDS_SUSPECTED...). The record ends right. And what leads AWAY from the position being
reinstated is still flagged (:func:`test_away_from_the_reinstatement_is_still_flagged`).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

import chess
import pytest

from boardd.core.events import Reinstate
from boardd.core.laws.codes import is_illegal_move_class
from boardd.core.outputs import Irregularity, MoveMade, MovesRetracted, Output, Status
from tests.core.correction_audit_rig import (
    Rig,
    Running,
    detoured,
    pawn_to_last_rank,
    random_running,
    restore_running,
    restore_steps,
    run_steps,
    swap_steps,
)
from tests.core.test_correction_audit import (
    CASTLINGS,
    PENALTY,
    PROMOTIONS,
    _check,
    _finish,
    _judged_at_press,
    _open,
    _random_game,
)
from tests.core.test_correction_cycle import _illegal_moves

#: the editions and categories of the running-clock cases (competition regime: 7.5.5, A.3, B.2/B.3; §6.3)
RUNNING_PENALTY = {**PENALTY, (2009, "900+10"): 120, (2009, "180+2"): 120, (2014, "900+10"): 120,
                   (2018, "900+10"): 120}


@dataclass(frozen=True, slots=True)
class Case:
    seed: int
    edition: int
    tc: str


def _cases(n: int, salt: int) -> list[Case]:
    rng = random.Random(salt)
    keys = sorted(RUNNING_PENALTY)
    return [Case(seed, *rng.choice(keys)) for seed in range(n)]


def _illegal_move(rig: Rig, rng: random.Random, *, no_king: bool = False) -> tuple[chess.Move, chess.Piece]:
    """The offender makes an illegal move (any kind the position has), one hand."""
    candidates = _illegal_moves(rig.board)
    if no_king:
        candidates = [i for i in candidates if rig.board.piece_type_at(i.from_square) != chess.KING] or candidates
    ill = rng.choice(candidates)
    piece = rig.board.piece_at(ill.from_square)
    assert piece is not None
    if ill.to_square in rig.phys and rng.random() < 0.5:
        rig.lift(ill.to_square)
        rig.t += rng.uniform(0.1, 0.6)
    rig.by_hand(rng, ill, piece)
    return chess.Move(ill.from_square, ill.to_square), piece


def _setup(case: Case, rng: random.Random) -> tuple[Rig, chess.Color, int, chess.Board]:
    start = _random_game(rng, rng.randrange(6, 30))
    rig = Rig(None, edition=case.edition, tc=case.tc, seconds=float(case.tc.split("+")[0]))
    _open(rig, start)
    return rig, rig.board.turn, len(rig.board.move_stack), rig.board.copy()


def _judged(rig: Rig, rng: random.Random, offender: chess.Color, case: Case) -> tuple[Irregularity | None, list[str]]:
    return _judged_at_press(rig, rng, offender, case, lambda first: len(first) == 1  # type: ignore[arg-type]
                            and is_illegal_move_class(first[0].code, case.edition), penalties=RUNNING_PENALTY)


def running_restoration(case: Case) -> list[str]:
    """An illegal move, the press; the position put back on the running clock; the replacement and play on."""
    rng = random.Random(case.seed)
    rig, offender, ply, before = _setup(case, rng)
    move, _ = _illegal_move(rig, rng)
    how = random_running(rng)
    tablet = rng.choice(("none", "none", "before", "after"))
    finding, problems = _judged(rig, rng, offender, case)
    if finding is None:
        return problems
    start = len(rig.outs)
    if tablet == "before":
        rig.feed(Reinstate(at=rig.t, ply=ply))
        rig.t += rng.uniform(0.2, 1.0)
    restore_running(rig, rng, before, offender, how)
    if tablet == "after":
        rig.feed(Reinstate(at=rig.t, ply=ply))
        rig.t += rng.uniform(0.2, 1.0)
    problems += _no_move_shown(rig, start)
    _finish(rig, rng, move.from_square)
    problems += _one_alert(rig, finding)
    return problems + ([f"{how} tablet {tablet}"] if problems else [])


def _one_alert(rig: Rig, finding: Irregularity) -> list[str]:
    """The audit's checks, stricter on the incident: a warning that joined the illegal move's incident (folded
    under it, resolved with it) is still a warning the arbiter saw arrive. Only the wait for the position the
    arbiter asked for on the tablet (POSITION_DIVERGENCE of the incident, §3.7 step 2) is part of the alert."""
    problems = _check(rig, finding)
    joined = [(i.code, i.subtype) for i in rig.strong() if i.id != finding.id and i.incident == finding.id
              and i.code != "POSITION_DIVERGENCE"]
    if joined:
        problems.append(f"warnings joined to the incident: {joined}")
    return problems


def _no_move_shown(rig: Rig, start: int) -> list[str]:
    """No move published as made during the restoration (from ``rig.outs[start]``) and retracted again."""
    shown = made_then_retracted(rig.outs[start:])
    return [f"published as made and retracted during the restoration: {shown}"] if shown else []


def _mates(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return board.is_checkmate()
    finally:
        board.pop()


def _found_later_setup(case: Case, rng: random.Random, plies: tuple[int, ...] = (1, 2, 3)) -> tuple[
        Rig, chess.Color, chess.Board, chess.Move, Irregularity | None, chess.Board, list[str]]:
    """An illegal move and the press; the opponent replies, the offender maybe moves again (the illegal move not
    noticed yet): the rig, the offender, the position before the illegal move, the illegal move, its finding, the
    board of the moves after it, and what was wrong so far."""
    rig, offender, _, before = _setup(case, rng)
    move, _ = _illegal_move(rig, rng, no_king=True)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    first = rig.strong()
    later = chess.Board(None)
    if len(first) != 1 or not is_illegal_move_class(first[0].code, case.edition):
        return rig, offender, before, move, None, later, [f"at the press: {[(i.code, i.subtype) for i in first]}"]
    finding = first[0]
    later.set_board_fen(rig.engine.state.fen.split(" ")[0])
    later.turn = not offender
    later.castling_rights = chess.BB_EMPTY
    for _ in range(rng.choice(plies)):
        moves = [m for m in later.legal_moves if not later.is_castling(m) and not m.promotion
                 and not later.is_en_passant(m) and not _mates(later, m)]  # (the game would be over: 5.1.1)
        if not moves or later.is_game_over():
            break
        saved, rig.board = rig.board, later
        rig.t += rng.uniform(0.5, 2.0)
        rig.play(rng.choice(moves))
        rig.board = saved
    rig.outs += rig.engine.advance(rig.t)
    mid = [(i.code, i.subtype) for i in rig.strong() if i.id != finding.id]
    return rig, offender, before, move, finding, later, [f"before the correction: {mid}"] if mid else []


def _running_after_reply(rng: random.Random) -> Running:
    """How a found-later restoration runs: the opponent presses after the position is back, if at all (a press
    before that, after moves that followed the illegal move, is a press like any other: the pieces have not
    said yet that the position is being put back)."""
    how = random_running(rng)
    if how.press in ("opponent-before", "opponent-during"):
        how = dataclasses.replace(how, press="opponent-after")
    return how


def found_later_running(case: Case) -> list[str]:
    """7.5.1 found later (the opponent replied, the offender maybe moved again): the players put the position
    before the illegal move back in any order on the running clock (not move by move), no tablet."""
    rng = random.Random(case.seed)
    rig, offender, before, move, finding, later, problems = _found_later_setup(case, rng)
    if finding is None:
        return problems
    how = _running_after_reply(rng)
    start = len(rig.outs)
    restore_running(rig, rng, before, offender, how)
    problems += _no_move_shown(rig, start)
    _finish(rig, rng, move.from_square)
    problems += _one_alert(rig, finding)
    return problems + ([f"later plies {len(later.move_stack)} {how}"] if problems else [])


def running_castling_or_promotion(case: Case) -> list[str]:
    """An illegal castling (or one left incomplete at the press), or (E2009, reinstated: 7.4 a) a pawn left on the
    last rank, put back on the running clock; then the replacement (castling on that side if legal, 4.7.2)."""
    rng = random.Random(case.seed)
    castling = case.edition != 2009 or case.seed % 2 == 0
    if castling:
        fen, kf, kt, rf, rt, code = CASTLINGS[case.seed % len(CASTLINGS)]
        moves = [(kf, kt)] + ([(rf, rt)] if rf is not None and rt is not None else [])
    else:
        fen, src, dst = PROMOTIONS[case.seed % len(PROMOTIONS)]
        moves, code = [(src, dst)], "PAWN_NOT_REPLACED"
    rig = Rig(fen, edition=case.edition, tc=case.tc, seconds=float(case.tc.split("+")[0]))
    rig.t = 0.0
    rig.outs.clear()
    offender = rig.board.turn
    before = rig.board.copy()
    for a, b in moves:
        src, dst = chess.parse_square(a), chess.parse_square(b)
        piece = rig.phys[src]
        rig.lift(src)
        rig.t += rng.uniform(0.3, 0.6)
        if dst in rig.phys:
            rig.lift(dst)
            rig.t += rng.uniform(0.05, 0.3)
        rig.place(dst, piece)
        rig.t += rng.uniform(0.3, 0.8)
    finding, problems = _judged_at_press(rig, rng, offender, case, lambda first: [i.code for i in first] == [code],
                                         penalties=RUNNING_PENALTY)
    if finding is None:
        return problems
    how = random_running(rng)
    restore_running(rig, rng, before, offender, how)
    if code == "CASTLING_INCOMPLETE_AT_PRESS":
        castle = next(m for m in rig.board.legal_moves if rig.board.is_castling(m)
                      and chess.square_name(m.to_square) in moves[0])
        rig.t += rng.uniform(1.0, 3.0)
        rig.play(castle)
        for _ in range(3):
            legal = list(rig.board.legal_moves)
            if not legal or rig.board.is_game_over():
                break
            rig.play(rng.choice(legal))
        rig.settle()
    else:
        _finish(rig, rng, chess.parse_square(moves[0][0]))
    problems += _one_alert(rig, finding)
    return problems + ([f"{code} {how}"] if problems else [])


RUNNING_CASES = _cases(160, 9301)
LATER_RUNNING_CASES = _cases(80, 9302)
CASTLING_RUNNING_CASES = _cases(60, 9304)


@pytest.mark.parametrize("case", RUNNING_CASES, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in RUNNING_CASES])
def test_restoration_on_a_running_clock_is_one_alert(case: Case) -> None:
    assert running_restoration(case) == []


@pytest.mark.parametrize("case", LATER_RUNNING_CASES,
                         ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in LATER_RUNNING_CASES])
def test_found_later_restored_on_a_running_clock_is_one_alert(case: Case) -> None:
    assert found_later_running(case) == []


#: seeds of a wider sample (salts 2222, 1111) that failed: the offender's pieces put back with two hands after the
#: opponent's reply (TWO_HANDS_SUSPECTED), the captured piece coming back on a wrong square when the opponent pressed
LATER_RUNNING_EXTRA = [Case(81, 2018, "180+2"), Case(92, 2018, "900+10")]
RUNNING_EXTRA = [Case(225, 2023, "900+10")]


@pytest.mark.parametrize("case", LATER_RUNNING_EXTRA,
                         ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in LATER_RUNNING_EXTRA])
def test_found_later_after_the_reply_two_hands_restoring_is_one_alert(case: Case) -> None:
    assert found_later_running(case) == []


@pytest.mark.parametrize("case", RUNNING_EXTRA, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in RUNNING_EXTRA])
def test_captured_piece_back_on_a_wrong_square_at_the_opponents_press_is_one_alert(case: Case) -> None:
    assert running_restoration(case) == []


@pytest.mark.parametrize("case", CASTLING_RUNNING_CASES,
                         ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in CASTLING_RUNNING_CASES])
def test_castling_or_promotion_restored_on_a_running_clock_is_one_alert(case: Case) -> None:
    assert running_castling_or_promotion(case) == []


# ---------------------------------------------------------------------------------------------- away from it


def _capture_targets(rig: Rig) -> set[int]:
    """Squares the side to move in the official position can capture on (a piece lifted there may be his)."""
    board = chess.Board(rig.engine.state.fen)
    return {m.to_square for m in board.legal_moves if board.is_capture(m)}


def away(case: Case, kind: str) -> list[str]:
    """What leads away from the position being reinstated is a change of its own, flagged as before.

    ``other-piece``: in the middle of the restoration the offender moves another of his pieces (one the opponent
    cannot capture: the lift is the offender's) to an empty square and leaves it there: a warning, or at least the
    illegal move's alert stays open (the position before it never came back). ``left-wrong``: the last
    piece of the restoration set down on a wrong square and left there. ``opponent-moves``: the position back,
    the opponent moves one of his pieces (the offender has the move; one the offender cannot capture).
    ``second-illegal``: the position back and the offender's clock running again, the replacement move is illegal
    too and pressed.
    """
    rng = random.Random(case.seed)
    if kind.startswith("later-"):
        return _away_later(case, kind, rng)
    rig, offender, _, before = _setup(case, rng)
    _illegal_move(rig, rng)
    finding, problems = _judged(rig, rng, offender, case)
    if finding is None:
        return problems
    how = random_running(rng)

    def flagged(*, or_open: bool = False) -> list[str]:
        """A warning of its own; or (*or_open*) the illegal move's alert still open: the board never showed the
        position before it, so the arbiter is not told the incident is over."""
        raised = [i.code for i in rig.strong() if i.id != finding.id]
        final = next(i for i in rig.engine.irregularities if i.id == finding.id)
        if raised or (or_open and final.status is not Status.RESOLVED):
            return []
        return [f"{kind} not flagged ({final.status}): {how}"]

    if kind in ("other-piece", "left-wrong"):
        steps = list(restore_steps(rng, rig.phys, before, how.hands))
        rig.t += rng.uniform(0.3, 3.0)
        if kind == "left-wrong":
            last = max(i for i, (what, _, _) in enumerate(steps) if what == "place")
            _, sq, piece = steps[last]
            empties = [e for e in chess.SQUARES if e not in rig.phys and before.piece_at(e) is None
                       and 1 <= chess.square_distance(e, sq) <= 2]
            if not empties:
                return []
            steps[last] = ("place", rng.choice(empties), piece)
            run_steps(rig, rng, iter(steps), how.hands)
        else:
            cut = rng.randrange(len(steps))  # while the position is not back yet
            run_steps(rig, rng, iter(steps[:cut]), how.hands)
            targets = _capture_targets(rig)
            own = [sq for sq, p in rig.phys.items() if p.color == offender and before.piece_at(sq) == p
                   and sq not in targets]
            sq = rng.choice(own)
            empties = [e for e in chess.SQUARES if e not in rig.phys and before.piece_at(e) is None
                       and 1 <= chess.square_distance(e, sq) <= 3]
            if not empties:
                return []
            piece = rig.phys[sq]
            rig.lift(sq)
            rig.t += rng.uniform(0.2, 0.8)
            rig.place(rng.choice(empties), piece)
            rig.t += rng.uniform(0.3, 1.5)
            run_steps(rig, rng, iter(steps[cut:]), how.hands)
        rig.settle(12.0)
        return flagged(or_open=True)
    restore_running(rig, rng, before, offender, how)
    rig.settle(2.0)
    if kind == "opponent-moves":
        board = rig.board.copy()
        board.turn = not offender
        targets = _capture_targets(rig)  # (a piece the offender can capture, lifted, may be his capture)
        moves = [m for m in board.legal_moves if not board.is_capture(m) and not board.is_castling(m)
                 and not m.promotion and m.from_square not in targets]
        if not moves:
            return []
        move = rng.choice(moves)
        piece = rig.phys[move.from_square]
        rig.lift(move.from_square)
        rig.t += rng.uniform(0.2, 0.8)
        rig.place(move.to_square, piece)
        rig.settle(3.0)
        return flagged()
    if rig.clock.running != offender:
        rig.press(not offender)  # the offender's clock restarted (else his press would not move the lever)
        rig.t += rng.uniform(0.5, 1.5)
    candidates = _illegal_moves(rig.board)
    if not candidates:
        return []
    ill = rng.choice(candidates)
    piece = rig.phys[ill.from_square]
    rig.by_hand(rng, ill, piece, think=(0.5, 1.5))
    rig.press(offender)
    rig.settle(3.0)
    second = [i for i in rig.strong() if i.id != finding.id and is_illegal_move_class(i.code, case.edition)]
    return [] if second else [f"{kind} not flagged: {[i.code for i in rig.strong()]} {how}"]


def _away_later(case: Case, kind: str, rng: random.Random) -> list[str]:
    """After an illegal move not noticed, two moves later (its reinstatement possible, 7.5.1):

    ``later-takeback``: the players take the last move back and leave it so (TAKEBACK_DETECTED);
    ``later-out-of-turn``: the offender moves a piece on the opponent's time, a move of his were it his turn
    (OUT_OF_TURN_CHANGE). Not the position before the illegal move: flagged (the findings of the hands wait while
    the board may be on its way back; they come out once the hands stop).
    """
    rig, offender, _, _, finding, later, problems = _found_later_setup(case, rng, plies=(2,))
    if finding is None or len(later.move_stack) != 2:
        return problems
    if kind == "later-takeback":
        last = later.pop()
        piece = rig.phys[last.to_square]
        rig.t += rng.uniform(0.5, 2.0)
        rig.lift(last.to_square)
        rig.t += rng.uniform(0.2, 0.8)
        rig.place(last.from_square, piece)
        captured = later.piece_at(last.to_square)
        if captured is not None:
            rig.t += rng.uniform(0.2, 0.8)
            rig.place(last.to_square, captured)
        code = "TAKEBACK_DETECTED"
    else:
        targets = _capture_targets(rig)
        board = later.copy()
        board.turn = offender
        moves = [m for m in board.legal_moves if not board.is_capture(m) and not board.is_castling(m)
                 and not m.promotion and m.from_square not in targets]
        if not moves:
            return problems
        move = rng.choice(moves)
        piece = rig.phys[move.from_square]
        rig.t += rng.uniform(0.5, 2.0)
        rig.lift(move.from_square)
        rig.t += rng.uniform(0.2, 0.8)
        rig.place(move.to_square, piece)
        code = "OUT_OF_TURN_CHANGE"
    rig.settle(12.0)
    raised = [i.code for i in rig.strong() if i.id != finding.id]
    return problems + ([] if code in raised else [f"{kind} not flagged: {raised}"])


AWAY_KINDS = ("other-piece", "left-wrong", "opponent-moves", "second-illegal", "later-takeback", "later-out-of-turn")
AWAY_CASES = [(case, kind) for case in _cases(24, 9303) for kind in AWAY_KINDS]


@pytest.mark.parametrize(("case", "kind"), AWAY_CASES,
                         ids=[f"{kind}-seed{c.seed}-{c.edition}-{c.tc}" for c, kind in AWAY_CASES])
def test_away_from_the_reinstatement_is_still_flagged(case: Case, kind: str) -> None:
    assert away(case, kind) == []


def test_a_press_without_a_move_opens_no_wait_for_the_findings_of_hands() -> None:
    """After an unresolved press without a move (7.5.3, illegal-move class from 2018) there is nothing on the board
    to put back: the next move's touch-move suspicion is raised when the move is made, not held until the press."""
    rig = Rig(None, edition=2023, tc="180+2", seconds=180.0)
    rig.t = 0.0
    rig.press(chess.WHITE)  # White presses without moving
    rig.settle(2.0)
    assert [i.code for i in rig.strong()] == ["CLOCK_PRESS_NO_MOVE"]
    rig.outs.clear()
    knight = chess.Piece(chess.KNIGHT, chess.WHITE)
    pawn = chess.Piece(chess.PAWN, chess.WHITE)
    rig.lift(chess.G1)  # the knight touched, put back; then the pawn moved
    rig.t += 0.5
    rig.place(chess.G1, knight)
    rig.t += 1.0
    rig.lift(chess.E2)
    rig.t += 0.4
    rig.place(chess.E4, pawn)
    rig.settle(1.5)  # the move is made (released), not pressed yet
    assert "TOUCH_MOVE_SUSPECTED" in [i.code for i in rig.raised()]


def test_the_reply_to_an_illegal_move_not_noticed_raises_its_touch_findings_when_made() -> None:
    """An illegal move not noticed, the opponent's reply made with a touch-move suspicion: raised when the reply is
    made, not held until its press (the reply is a move; only the findings of hands after it may be the position
    going back)."""
    rig = Rig(None, edition=2023, tc="900+10", seconds=900.0)
    rig.t = 0.0
    rig.lift(chess.F1)  # Bf1-c4 through the pawn on e2: illegal (blocked)
    rig.t += 0.4
    rig.place(chess.C4, chess.Piece(chess.BISHOP, chess.WHITE))
    rig.t += 0.6
    rig.press(chess.WHITE)
    rig.settle(2.0)
    assert [i.code for i in rig.strong()] == ["ILLEGAL_MOVE"]
    rig.outs.clear()
    rig.lift(chess.G8)  # Black lifts his knight (longer than an adjustment), puts it back, plays e7-e5
    rig.t += 2.5
    rig.place(chess.G8, chess.Piece(chess.KNIGHT, chess.BLACK))
    rig.t += 1.0
    rig.lift(chess.E7)
    rig.t += 0.4
    rig.place(chess.E5, chess.Piece(chess.PAWN, chess.BLACK))
    rig.settle(1.5)  # made, not pressed yet
    assert "TOUCH_MOVE_SUSPECTED" in [i.code for i in rig.raised()]


# ------------------------------------------------------------------------------------------- 7.5.2 on a running clock


def _pawn_left(case: Case, rng: random.Random) -> tuple[Rig, chess.Color, chess.Board, chess.Move,
                                                        Irregularity | None, list[str]]:
    """E2014+: a pawn moved to the last rank, the clock pressed, the pawn not replaced (7.5.2)."""
    fen, src, dst = PROMOTIONS[case.seed % len(PROMOTIONS)]
    a, b = chess.parse_square(src), chess.parse_square(dst)
    rig = Rig(fen, edition=case.edition, tc=case.tc, seconds=float(case.tc.split("+")[0]))
    rig.t = 0.0
    rig.outs.clear()
    offender = rig.board.turn
    before = rig.board.copy()
    pawn = rig.phys[a]
    pawn_to_last_rank(rig, rng, a, b, pawn)
    finding, problems = _judged_at_press(rig, rng, offender, case, lambda first: [(i.code, i.subtype) for i in first]
                                         == [("PAWN_NOT_REPLACED", None)], penalties=RUNNING_PENALTY)
    queen = chess.Move(a, b, promotion=chess.QUEEN)
    if finding is not None and finding.suggestion.move != before.san(queen):
        problems.append(f"suggested move {finding.suggestion.move}")
    return rig, offender, before, queen, finding, problems


def _play_on(rig: Rig, rng: random.Random, plies: int = 3) -> None:
    rig.t += rng.uniform(1.0, 3.0)
    for _ in range(plies):
        moves = list(rig.board.legal_moves)
        if not moves or rig.board.is_game_over():
            break
        rig.play(rng.choice(moves))
    rig.settle()


def running_queen_swap(case: Case) -> list[str]:
    """7.5.2 (2014+): the pawn exchanged for a queen on the running clock (the opponent's: the move stands), by the
    arbiter or a player, in any order, with detours and two hands; then play on. One alert (the PAWN_NOT_REPLACED
    finding: on a running clock without the arbiter seen it may stay open for him, the penalty is his), and the
    record shows the promotion to a queen."""
    rng = random.Random(case.seed)
    rig, offender, _, queen, finding, problems = _pawn_left(case, rng)
    if finding is None:
        return problems
    how = random_running(rng)
    rig.t += rng.uniform(0.5, 4.0)
    steps = swap_steps(rng, rig.phys, queen.to_square, chess.Piece(chess.QUEEN, offender), how.hands,
                       origin=queen.from_square)
    run_steps(rig, rng, iter(steps), how.hands)
    rig.board.push(queen)
    _play_on(rig, rng)
    got = [p for p in _one_alert(rig, finding) if not p.startswith("finding not resolved")]
    if rig.engine.state.moves[0].san != rig.board.root().san(queen):
        got.append(f"record {rig.engine.state.moves[0].san}")
    return problems + got + ([f"{how} {steps}"] if got else [])


SWAP_CASES = [Case(c.seed, c.edition, c.tc) for c in _cases(240, 9305) if c.edition >= 2014]


@pytest.mark.parametrize("case", SWAP_CASES, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in SWAP_CASES])
def test_pawn_exchanged_for_a_queen_on_a_running_clock_is_one_alert(case: Case) -> None:
    assert running_queen_swap(case) == []


def swap_away(case: Case, kind: str) -> list[str]:
    """What leads away from the 7.5.2 exchange is flagged: ``queen-left-wrong``, the pawn off and the queen set down
    on a wrong square and left there; ``other-piece``, the exchange done, the offender moves another of his pieces
    on the opponent's time and leaves it."""
    rng = random.Random(case.seed)
    rig, offender, _, queen, finding, problems = _pawn_left(case, rng)
    if finding is None:
        return problems
    how = random_running(rng)
    rig.t += rng.uniform(0.5, 4.0)
    square = queen.to_square
    piece = chess.Piece(chess.QUEEN, offender)
    if kind == "queen-left-wrong":
        if square in _capture_targets(rig):
            return problems  # the pawn lifted may be the opponent's capture (his move): not the exchange's hands
        near = [e for e in chess.SQUARES if e not in rig.phys and e != queen.from_square
                and 1 <= chess.square_distance(e, square) <= 2]
        rig.lift(square)
        rig.t += rng.uniform(0.2, 1.0)
        rig.place(rng.choice(near), piece)
    else:
        steps = swap_steps(rng, rig.phys, square, piece, how.hands, origin=queen.from_square)
        run_steps(rig, rng, iter(steps), how.hands)
        rig.t += rng.uniform(0.5, 2.0)
        targets = _capture_targets(rig)
        own = [sq for sq, p in rig.phys.items() if p.color == offender and sq != square and sq not in targets]
        empties = [(sq, e) for sq in own for e in chess.SQUARES if e not in rig.phys
                   and 1 <= chess.square_distance(e, sq) <= 2]
        sq, e = rng.choice(empties)
        moved = rig.phys[sq]
        rig.lift(sq)
        rig.t += rng.uniform(0.2, 0.8)
        rig.place(e, moved)
    rig.settle(12.0)
    raised = [i.code for i in rig.strong() if i.id != finding.id]
    return problems + ([] if "OUT_OF_TURN_CHANGE" in raised else [f"{kind} not flagged: {raised} {how}"])


SWAP_AWAY_CASES = [(case, kind) for case in SWAP_CASES[:30] for kind in ("queen-left-wrong", "other-piece")]


@pytest.mark.parametrize(("case", "kind"), SWAP_AWAY_CASES,
                         ids=[f"{kind}-seed{c.seed}-{c.edition}-{c.tc}" for c, kind in SWAP_AWAY_CASES])
def test_away_from_the_queen_exchange_is_still_flagged(case: Case, kind: str) -> None:
    assert swap_away(case, kind) == []


# ------------------------------------------------------------------- a press in the middle of a found-later restoration


def later_press_mid_restoration(case: Case) -> list[str]:
    """7.5.1 found later, the position put back on the running clock, and the clock pressed once or twice in the
    middle (whoever's clock runs: the opponent giving the offender his clock, the offender stopping his, the arbiter's
    hand), before the position is back. Nobody is making a move: such a press is the clock handled in the
    correction, never a press without a move (7.5.3, from 2018 an illegal move: a second one could lose the game)."""
    rng = random.Random(case.seed)
    rig, offender, before, move, finding, later, problems = _found_later_setup(case, rng)
    if finding is None:
        return problems
    how = random_running(rng)
    steps = list(restore_steps(rng, rig.phys, before, how.hands))
    if how.hands.wrong_square:
        steps = detoured(rng, rig.phys, before, steps, 0.5)
    rig.t += rng.uniform(0.3, 4.0)
    # after the pieces have begun to say that the position is going back (a step on a square the restoration
    # changes); before that a press is a press like any other
    official = chess.BaseBoard()
    official.set_piece_map(rig.phys)
    begun = next(i for i, (_, sq, _) in enumerate(steps) if before.piece_at(sq) != official.piece_at(sq))
    slots = list(range(begun, max(begun + 1, len(steps) - 1)))
    at = sorted(rng.sample(slots, min(rng.choice((1, 1, 2)), len(slots))))

    def press() -> None:
        rig.t += rng.uniform(0.2, 0.8)
        rig.press(rig.clock.running)  # type: ignore[arg-type]
        rig.t += rng.uniform(0.5, 1.0)

    run_steps(rig, rng, iter(steps), how.hands, [(i, press) for i in at])
    rig.t += rng.uniform(0.2, 1.5)
    if rig.clock.running != offender:
        rig.press(not offender)  # the offender's clock restarted
        rig.t += rng.uniform(0.3, 1.5)
    _finish(rig, rng, move.from_square)
    problems += _one_alert(rig, finding)
    presses = [i for i in rig.raised() if i.code in ("CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND")
               and is_illegal_move_class(i.code, case.edition)]
    if presses:
        problems.append(f"a press during the restoration counted as an illegal move: {[i.code for i in presses]}")
    return problems + ([f"later plies {len(later.move_stack)} {how} presses at {at} of {len(steps)}"]
                       if problems else [])


LATER_PRESS_CASES = _cases(120, 9306)


@pytest.mark.parametrize("case", LATER_PRESS_CASES,
                         ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in LATER_PRESS_CASES])
def test_press_in_the_middle_of_a_found_later_restoration_is_no_players_press(case: Case) -> None:
    assert later_press_mid_restoration(case) == []


def later_press_away(case: Case, kind: str) -> list[str]:
    """Presses that are no restoration's, two moves after an illegal move not noticed (its reinstatement possible):
    ``no-move``, the side to move presses without moving (CLOCK_PRESS_NO_MOVE, 7.5.3); ``in-hand``, he presses with a
    piece of his in the hand that no restoration moves (CLOCK_PRESS_PIECE_IN_HAND). Judged as before."""
    rng = random.Random(case.seed)
    rig, _, before, _, finding, later, problems = _found_later_setup(case, rng, plies=(2,))
    if finding is None or len(later.move_stack) != 2:
        return problems
    side = rig.clock.running
    assert side is not None
    rig.t += rng.uniform(0.5, 2.0)
    code = "CLOCK_PRESS_NO_MOVE"
    if kind == "in-hand":
        official = chess.BaseBoard(rig.engine.state.fen.split(" ")[0])
        own = [sq for sq, p in rig.phys.items() if p.color == side and before.piece_at(sq) == official.piece_at(sq)]
        rig.lift(rng.choice(own))
        rig.t += rng.uniform(0.3, 1.0)
        code = "CLOCK_PRESS_PIECE_IN_HAND"
    rig.press(side)
    rig.settle(3.0)
    raised = [i.code for i in rig.strong() if i.id != finding.id]
    return problems + ([] if code in raised else [f"{kind} not flagged: {raised}"])


LATER_PRESS_AWAY = [(case, kind) for case in _cases(24, 9307) for kind in ("no-move", "in-hand")]


@pytest.mark.parametrize(("case", "kind"), LATER_PRESS_AWAY,
                         ids=[f"{kind}-seed{c.seed}-{c.edition}-{c.tc}" for c, kind in LATER_PRESS_AWAY])
def test_a_players_press_after_an_illegal_move_not_noticed_is_still_judged(case: Case, kind: str) -> None:
    assert later_press_away(case, kind) == []


def test_a_two_handed_move_after_an_illegal_move_not_noticed_is_completed_by_its_press() -> None:
    """Two moves after an illegal move not noticed (its reinstatement possible, the findings of hands withheld) a
    legal move made with two hands and pressed: the press completes it (no restoration's clock handling) and
    publishes the two-hands suspicion with its TWO_HANDS_AT_PRESS."""
    rig = Rig(None, edition=2023, tc="900+10", seconds=900.0)
    rig.t = 0.0
    rig.lift(chess.F1)  # Bf1-c4 through the pawn on e2: illegal (blocked), pressed
    rig.t += 0.4
    rig.place(chess.C4, chess.Piece(chess.BISHOP, chess.WHITE))
    rig.t += 0.6
    rig.press(chess.WHITE)
    rig.settle(2.0)
    assert [i.code for i in rig.strong()] == ["ILLEGAL_MOVE"]
    rig.board = chess.Board("rnbqkbnr/pppppppp/8/8/2B5/8/PPPPPPPP/RNBQK1NR b KQkq - 1 1")
    rig.play(chess.Move.from_uci("e7e5"))
    rig.t += 1.0
    # Nc3 with two hands: the knight and the h-pawn lifted inside one scan, far apart, both put down at once
    rig.lift(chess.B1)
    rig.lift(chess.H2, at=rig.t + 0.03)
    rig.t += 0.4
    rig.place(chess.C3, chess.Piece(chess.KNIGHT, chess.WHITE))
    rig.place(chess.H2, chess.Piece(chess.PAWN, chess.WHITE), at=rig.t + 0.03)
    rig.t += 0.8
    rig.press(chess.WHITE)
    rig.settle(3.0)
    assert rig.record()[-1] == "b1c3"
    assert "TWO_HANDS_AT_PRESS" in [i.code for i in rig.raised()]
    assert rig.engine.state.moves[-1].completed_at is not None
    assert not [o for o in rig.outs if getattr(o, "type", None) == "ARBITER_ACTION"
                and "clock_pressed_during_restoration" in getattr(o, "details", {})]


# ------------------------------------------------------------------- detours that read as legal moves (found later)


def made_then_retracted(outs: list[Output]) -> list[str]:
    """Moves published as made (move topic, state, live PGN) and retracted again: a move the broadcast showed that
    was never played."""
    made: dict[int, str] = {}
    gone = []
    for out in outs:
        if isinstance(out, MoveMade):
            made[out.move.ply] = out.move.san
        elif isinstance(out, MovesRetracted):
            gone += [san for ply, san in sorted(made.items()) if ply > out.to_ply]
            made = {ply: san for ply, san in made.items() if ply <= out.to_ply}
    return gone


def _bishop_through_the_pawn_not_noticed() -> Rig:
    """1.Bf1-c4 through the pawn on e2 (illegal, pressed, not noticed), 1...e5 pressed: White on move."""
    rig = Rig(None, edition=2023, tc="900+10", seconds=900.0)
    rig.t = 0.0
    rig.lift(chess.F1)
    rig.t += 0.4
    rig.place(chess.C4, chess.Piece(chess.BISHOP, chess.WHITE))
    rig.t += 0.6
    rig.press(chess.WHITE)
    rig.settle(2.0)
    assert [i.code for i in rig.strong()] == ["ILLEGAL_MOVE"]
    rig.board = chess.Board("rnbqkbnr/pppppppp/8/8/2B5/8/PPPPPPPP/RNBQK1NR b KQkq - 1 1")
    rig.play(chess.Move.from_uci("e7e5"))
    rig.t += 1.0
    rig.outs.clear()
    return rig


def test_a_genuine_move_of_the_piece_a_restoration_would_move_is_recognised() -> None:
    """The illegal move not noticed, White moves the bishop on (Bb5) and presses: the move is completed by the press
    (made when the bishop was set down); without a press it is made once it stayed, or when Black then moves a piece
    of his own (made first, then Black's move)."""
    rig = _bishop_through_the_pawn_not_noticed()
    rig.board = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/2B5/8/PPPPPPPP/RNBQK1NR w KQkq - 0 2")
    rig.play(chess.Move.from_uci("c4b5"))
    rig.settle(1.0)
    assert rig.record()[-1] == "c4b5"
    moves = [o.move for o in rig.outs if isinstance(o, MoveMade)]
    done = rig.engine.state.moves[-1].completed_at
    assert [m.uci for m in moves] == ["c4b5"] and done is not None and moves[0].made_at < done

    for pressed_by_reply in (False, True):
        rig = _bishop_through_the_pawn_not_noticed()
        bishop = chess.Piece(chess.BISHOP, chess.WHITE)
        rig.lift(chess.C4)
        rig.t += 0.4
        rig.place(chess.B5, bishop)  # not pressed
        if pressed_by_reply:
            rig.t += 1.5
            rig.lift(chess.G8)  # Black replies Nf6 at once
            rig.t += 0.4
            rig.place(chess.F6, chess.Piece(chess.KNIGHT, chess.BLACK))
            rig.settle(2.0)
            assert rig.record()[-2:] == ["c4b5", "g8f6"]
        else:
            rig.settle(8.0)
            assert rig.record()[-1] == "c4b5"
        assert made_then_retracted(rig.outs) == []


def test_moves_played_on_after_an_illegal_move_not_noticed_are_never_lost() -> None:
    """1.e2-e5 (illegal, pressed, not noticed), 1...d6 pressed; then 2.exd6 cxd6, neither pressed, Black's reply
    within a second: both moves are recorded (White's press missing is noted). A hold of states "on the way" of a
    restoration (taken out again) dropped both moves and raised nothing: the record stayed at 1...d6 while the
    board showed 2...cxd6."""
    from tests.core.test_scenarios import Scn, run

    r = run(Scn("S0", "0 L e2 · 300 P e5 wP · 600 C W · 2000 L d7 · 2300 P d6 bP · 2600 C B · 4000 L d6 · "
                      "4200 L e5 · 4400 P d6 wP · 5000 L d6 · 5200 L c7 · 5400 P d6 bP · 30000 C B"))
    played = [m.san if m.legal else "!" for m in r.engine.state.moves if m.made_at >= 0]
    assert played == ["!", "d6", "exd6", "cxd6"]
