"""A restoration's detour that reads as a legal move (7.5.1: the position immediately before the illegal move is
reinstated; on a running clock the players put it back themselves, in any order, a piece set down on the way).

The real procedure, randomised (:func:`legal_detoured` over the hands of
:func:`tests.core.correction_audit_rig.restore_steps`): the order of the hands, detours that form a legal move of
the side to move (the offender's piece set down on a wrong square where it reads as his move; the illegally moved
piece put back first when that is a legal move too), how long the hand stops there, the clock running or paused by
the arbiter, the illegal move found at once or only after the opponent's reply (and maybe one more move each).
Such a state is the restoration's hands: the broadcast must not show it as a move made and retracted again
(:func:`made_then_retracted`); the record ends right and every move published is a move of the game.

And the other side of it, never losing a real move: after an illegal move nobody noticed, the players play on,
with and without presses, the reply at once, capturing the piece just moved (the state that a hold of "states on
the way" once read as the hands moving on, 6988c16): every move recorded and published, none retracted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess
import pytest

from boardd.core.laws.codes import is_illegal_move_class
from boardd.core.outputs import MoveMade, MovesRetracted, Output
from tests.core.correction_audit_rig import Rig, Step, random_running, restore_steps, run_steps
from tests.core.test_correction_audit import _finish
from tests.core.test_correction_running import (
    Case,
    _cases,
    _found_later_setup,
    _illegal_move,
    _judged,
    _mates,
    _setup,
    made_then_retracted,
)


def legal_detoured(rng: random.Random, phys: dict[int, chess.Piece], official: chess.Board, target: chess.BaseBoard,
                   steps: list[Step], *, share: float = 0.8, back: float = 0.0,
                   marks: list[int] | None = None) -> tuple[list[Step], int]:
    """*steps* with detours that form legal moves: a piece of the side to move in *official* set down on the way on
    an empty square where the board then shows the official position plus one of his legal moves (the hand putting
    it back stops there, maybe for a while, and moves on). The restoration's hands, not a move. Returns the steps
    and how many such detours they have.

    *back*: the share of detours after which the hand first puts the piece back where it came from (the square it
    was just lifted from: the board as before the detour), maybe for a while (under or over ``T_settle``), lifts it
    again and goes on; *marks* gets the index of each such step putting it back."""
    cur = dict(phys)
    out: list[Step] = []
    made = 0
    afters: dict[str, chess.Move] = {}
    for m in official.legal_moves:
        official.push(m)
        afters[official.board_fen()] = m
        official.pop()
    lifted: int | None = None
    phys_before_lift: chess.Piece | None = None
    for what, sq, piece in steps:
        # (not the wrong piece put back where it was lifted: moved elsewhere, it would be a move of its own)
        if what == "place" and piece is not None and piece.color == official.turn and sq != lifted \
                and rng.random() < share:
            options = []
            for e in chess.SQUARES:
                if e in cur or e == sq or target.piece_at(e) == piece:
                    continue
                probe = chess.BaseBoard.empty()
                probe.set_piece_map({**cur, e: piece})
                if probe.board_fen() in afters:
                    options.append(e)
            if options:
                e = rng.choice(options)
                made += 1
                out += [("place", e, piece)] + ([("wait", e, None)] if rng.random() < 0.7 else []) \
                    + [("lift", e, None)]
                if back and lifted is not None and phys_before_lift == piece and rng.random() < back:
                    if marks is not None:
                        marks.append(len(out))
                    out += [("place", lifted, piece)] + ([("wait", lifted, None)] if rng.random() < 0.5 else []) \
                        + [("lift", lifted, None)]
        out.append((what, sq, piece))
        lifted = sq if what == "lift" else None
        phys_before_lift = cur.get(sq) if what == "lift" else None
        if what == "lift":
            cur.pop(sq, None)
        elif piece is not None:
            cur[sq] = piece
    return out, made


def published(outs: list[Output]) -> list[str]:
    """The moves the broadcast stands at after *outs*: made moves minus the retracted ones (uci, by ply)."""
    made: dict[int, str] = {}
    for out in outs:
        if isinstance(out, MoveMade):
            made[out.move.ply] = out.move.uci
        elif isinstance(out, MovesRetracted):
            made = {ply: uci for ply, uci in made.items() if ply <= out.to_ply}
    return [made[ply] for ply in sorted(made)]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One restoration: what went wrong (empty: right), how many detours read as moves, which flashed."""

    problems: list[str]
    detours: int
    flashed: list[str]


def _restore_with_detours(rig: Rig, rng: random.Random, before: chess.Board, offender: chess.Color, *,
                          paused: bool, back: float = 0.0, undone: list[str] | None = None) -> tuple[int, int]:
    """Put *before* back with legal detours, the clock running (or paused by the arbiter first, restarted for the
    offender after); the opponent presses after the position is back when the offender's clock does not run.
    *back*: detours put back where they came from first (:func:`legal_detoured`); whenever the board then shows the
    official position again, the record must be the one before the restoration (*undone* gets what was wrong).
    Returns (the index in rig.outs where the restoration started, the number of detours)."""
    how = random_running(rng)
    official = chess.Board(rig.engine.state.fen)
    marks: list[int] = []
    steps, detours = legal_detoured(rng, rig.phys, official, before, list(restore_steps(rng, rig.phys, before,
                                                                                          how.hands)),
                                    back=back, marks=marks)
    record = [r.uci for r in rig.engine.g.records]

    def check() -> None:
        now = [r.uci for r in rig.engine.g.records]
        shown = chess.BaseBoard.empty()
        shown.set_piece_map(rig.phys)
        if undone is not None and shown.board_fen() == official.board_fen() and now != record:
            undone.append(f"back where it came from, the record is {now[len(record) - 1:]}, not {record[-1:]}")

    start = len(rig.outs)
    rig.t += rng.uniform(0.3, 4.0)
    if paused:
        rig.feed(rig.clock.pause(rig.t))
        rig.t += rng.uniform(0.5, 2.0)
    run_steps(rig, rng, iter(steps), how.hands, between=[(i, check) for i in marks])
    rig.t += rng.uniform(0.2, 1.5)
    if paused:
        if rig.clock.running != offender:
            rig.feed(rig.clock.press(not offender, rig.t))  # the lever to the offender, while paused
            rig.t += rng.uniform(0.3, 1.0)
        rig.feed(rig.clock.resume(rig.t))
        rig.t += rng.uniform(0.3, 1.0)
    elif rig.clock.running != offender:
        rig.press(not offender)
        rig.t += rng.uniform(0.3, 1.5)
    return start, detours


def _outcome(rig: Rig, rng: random.Random, start: int, detours: int, touched: int) -> Outcome:
    flashed = made_then_retracted(rig.outs[start:])
    _finish(rig, rng, touched)
    problems = []
    truth = [m.uci() for m in rig.board.move_stack]
    if rig.record() != truth:
        problems.append(f"record {rig.record()} != game {truth}")
    shown = published(rig.outs)
    if shown[-len(truth):] != truth[-len(shown):] or len(shown) < len(truth) - 40:
        problems.append(f"published {shown[-6:]} != game {truth[-6:]}")
    return Outcome(problems, detours, flashed)


def found_later(case: Case, *, paused: bool = False, back: float = 0.0) -> Outcome:
    """7.5.1 found after the opponent's reply (and maybe one more move each): put back with legal detours (*back*:
    some put back where they came from first)."""
    rng = random.Random(case.seed)
    rig, offender, before, move, finding, _, problems = _found_later_setup(case, rng)
    if finding is None:
        return Outcome(problems, 0, [])
    undone: list[str] = []
    start, detours = _restore_with_detours(rig, rng, before, offender, paused=paused, back=back, undone=undone)
    out = _outcome(rig, rng, start, detours, move.from_square)
    return Outcome(problems + undone + out.problems, detours, out.flashed)


def found_at_once(case: Case, *, paused: bool = False) -> Outcome:
    """7.5.1 found at the press (the opponent's clock runs): put back with legal detours of the side to move (the
    opponent's pieces: a captured piece coming back, one of his lifted by mistake)."""
    rng = random.Random(case.seed)
    rig, offender, _, before = _setup(case, rng)
    move, _ = _illegal_move(rig, rng)
    finding, problems = _judged(rig, rng, offender, case)
    if finding is None:
        return Outcome(problems, 0, [])
    start, detours = _restore_with_detours(rig, rng, before, offender, paused=paused)
    out = _outcome(rig, rng, start, detours, move.from_square)
    return Outcome(problems + out.problems, detours, out.flashed)


LATER_CASES = _cases(160, 9311)
AT_ONCE_CASES = _cases(60, 9312)


def _flash_table() -> dict[str, tuple[int, int, int]]:
    """Per kind: (cases with a legal detour, cases that flashed, flashes)."""
    table = {}
    for name, run, cases in (("later-running", found_later, LATER_CASES),
                             ("later-paused", lambda c: found_later(c, paused=True), LATER_CASES[:60]),
                             ("at-once-running", found_at_once, AT_ONCE_CASES),
                             ("at-once-paused", lambda c: found_at_once(c, paused=True), AT_ONCE_CASES)):
        outcomes = [run(c) for c in cases]
        table[name] = (sum(1 for o in outcomes if o.detours), sum(1 for o in outcomes if o.flashed),
                       sum(len(o.flashed) for o in outcomes))
    return table


@pytest.mark.parametrize("case", LATER_CASES, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in LATER_CASES])
def test_found_later_detours_that_read_as_moves_are_not_published(case: Case) -> None:
    out = found_later(case)
    assert out.problems == [] and out.flashed == []


@pytest.mark.parametrize("case", LATER_CASES[:60], ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in LATER_CASES[:60]])
def test_found_later_detours_on_a_paused_clock_are_not_published(case: Case) -> None:
    out = found_later(case, paused=True)
    assert out.problems == [] and out.flashed == []


@pytest.mark.parametrize("case", AT_ONCE_CASES, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in AT_ONCE_CASES])
@pytest.mark.parametrize("paused", [False, True])
def test_found_at_once_detours_are_not_published(case: Case, paused: bool) -> None:
    out = found_at_once(case, paused=paused)
    assert out.problems == [] and out.flashed == []


@pytest.mark.parametrize("case", LATER_CASES, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in LATER_CASES])
@pytest.mark.parametrize("paused", [False, True])
def test_found_later_detours_put_back_where_they_came_from_leave_the_record(case: Case, paused: bool) -> None:
    """Half the detours put back where they came from first (the piece on its square again, for a moment or a
    while, then on its way): whenever the board shows the official position again the record is the one before
    the restoration (the detour, made and kept back, taken out unseen); nothing flashed, the record ends right.
    Before: the detour stayed in the record (Engine.pgn, the journal; kept back from the broadcast) in 7 of 160
    restorations on a running clock (30 with a legal detour) and 7 of 160 on a paused one."""
    out = found_later(case, paused=paused, back=0.5)
    assert out.problems == [] and out.flashed == []


# ------------------------------------------------------------------------------------ never losing a real move


#: the fastest start of the next move in :func:`play_on` with *blitz*: the opponent's hand 0.2 s after the piece was
#: set down, before it is presumed released (``T_settle``, 0.4 s; the piece just set down captured even within
#: ``T_flicker``, 0.25 s)
_BLITZ_S = (0.2, 0.45)


def play_on(case: Case, *, blitz: bool = False, illegal: bool = True) -> list[str]:
    """An illegal move, pressed, nobody notices; the opponent replies (pressed or not) and the players play on
    2-5 moves, each pressed or not, the next move often at once (0.2-1.5 s after the piece is set down), often
    with the piece the restoration would move, or capturing the piece just moved (the hands of a restoration
    would lift that one too). Every move must be recorded and published (and stay published).

    *blitz*: the next move often starts before the piece just set down is presumed released (``_BLITZ_S``, under
    ``T_settle``); *illegal* False: the same play without the unnoticed illegal move before it (the control)."""
    rng = random.Random(case.seed)
    rig, offender, _, _ = _setup(case, rng)
    if illegal:
        _illegal_move(rig, rng, no_king=True)
        rig.press(offender)
        rig.t += rng.uniform(0.5, 3.0)
        rig.outs += rig.engine.advance(rig.t)
        first = rig.strong()
        if len(first) != 1 or not is_illegal_move_class(first[0].code, case.edition):
            return []  # (judged otherwise at the press: not this test's case)
    rig.board = chess.Board(rig.engine.state.fen)
    rig.board.castling_rights = chess.BB_EMPTY
    played: list[chess.Move] = []
    for _ in range(rng.randrange(3, 7)):
        board = rig.board
        moves = [m for m in board.legal_moves if not board.is_castling(m) and not m.promotion
                 and not board.is_en_passant(m) and not _mates(board, m)]
        if not moves or board.is_game_over():
            break
        last = played[-1] if played else None
        captures = [m for m in moves if last is not None and m.to_square == last.to_square]
        moved_again = [m for m in moves if last is not None and len(played) > 1
                       and m.from_square == played[-2].to_square]
        pool = captures if captures and rng.random() < 0.7 else moved_again if moved_again and rng.random() < 0.5 \
            else moves
        move = rng.choice(pool)
        side = board.turn
        piece = board.piece_at(move.from_square)
        assert piece is not None
        if board.piece_at(move.to_square) is not None and rng.random() < 0.5:
            rig.lift(move.to_square)
            rig.t += rng.uniform(0.1, 0.5)
        rig.lift(move.from_square)
        rig.t += rng.uniform(0.2, 0.6)
        if move.to_square in rig.phys:
            rig.lift(move.to_square)
            rig.t += rng.uniform(0.05, 0.3)
        rig.place(move.to_square, piece)
        board.push(move)
        played.append(move)
        if rng.random() < 0.5:
            rig.t += rng.uniform(0.2, 1.5)
            rig.press(side)
        if blitz and rng.random() < 0.6:
            rig.t += rng.uniform(*_BLITZ_S)
        else:
            rig.t += rng.uniform(0.45, 1.5) if rng.random() < 0.7 else rng.uniform(2.0, 9.0)
    rig.settle(12.0)
    truth = [m.uci() for m in played]
    record = rig.record()[-len(truth):] if truth else []
    problems = []
    if record != truth:
        problems.append(f"record ends {rig.record()[-len(truth) - 1:]} != played {truth}")
    shown = published(rig.outs)
    if shown[-len(truth):] != truth:
        problems.append(f"published ends {shown[-len(truth) - 1:]} != played {truth}")
    if not illegal:
        # (only the presses left out are irregular in the control games)
        problems += [f"raised {i.code}" for i in rig.strong()
                     if i.code not in ("CLOCK_NOT_PRESSED", "MOVE_COMPLETED_WITHOUT_PRESS")]
    return problems


PLAY_ON_CASES = _cases(160, 9313)


@pytest.mark.parametrize("case", PLAY_ON_CASES, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in PLAY_ON_CASES])
def test_moves_played_on_after_an_unnoticed_illegal_move_are_all_recorded_and_published(case: Case) -> None:
    assert play_on(case) == []


@pytest.mark.parametrize("case", PLAY_ON_CASES, ids=[f"seed{c.seed}-{c.edition}-{c.tc}" for c in PLAY_ON_CASES])
@pytest.mark.parametrize("illegal", [True, False], ids=["after-illegal", "plain"])
def test_blitz_moves_started_before_the_last_one_settled_are_all_recorded_and_published(case: Case,
                                                                                      illegal: bool) -> None:
    """The opponent's hand on the board 0.2-0.45 s after the piece was set down (blitz), before T_settle: the move
    and his reply are both recorded: the board showing the official position plus the move plus a legal reply to it
    is both (his hand dropped the candidate: a lift of a piece the mover could have captured, or of the piece just
    set down, which shows it was released), and a reply completed while his hands were kept apart (masked) is judged
    when the move settles, not only at the next change. In the control games (no illegal move) nothing but the
    presses left out is raised.
    Before: moves lost in 30 of 160 games after an unnoticed illegal move, 36 of 160 without one (nothing raised,
    or only later and about something else)."""
    assert play_on(case, blitz=True, illegal=illegal) == []


if __name__ == "__main__":  # the measurement: .venv/bin/python -m tests.core.test_correction_detours
    for kind, (detoured_cases, flashed, flashes) in _flash_table().items():
        print(f"{kind}: {detoured_cases} with a detour that reads as a move, {flashed} flashed ({flashes} moves)")


# ------------------------------------------------------------------------------ one restoration, step by step


def test_a_detour_of_the_offenders_piece_that_reads_as_his_move_is_not_published() -> None:
    """1.Bf1-c4 through the pawn (illegal, pressed, not noticed), 1...e5 pressed; the restoration: the bishop set
    down on b5 for a while (Bb5 is legal for White) on its way back to f1, then the pawn back to e7. No Bb5 on the
    broadcast (move topic nor state), the position reinstated (the retraction of the published moves goes out).
    Before: Bb5 made at T_settle and retracted."""
    from tests.core.test_correction_running import _bishop_through_the_pawn_not_noticed

    rig = _bishop_through_the_pawn_not_noticed()
    bishop = chess.Piece(chess.BISHOP, chess.WHITE)
    rig.lift(chess.C4)
    rig.t += 0.4
    rig.place(chess.B5, bishop)
    rig.t += 1.5  # well past T_settle
    rig.outs += rig.engine.advance(rig.t)
    assert rig.engine.state.moves[-1].uci == "e7e5"  # the state does not show it either
    assert "Bb5" in rig.engine.pgn()  # the archive has every move made
    rig.lift(chess.B5)
    rig.t += 0.4
    rig.place(chess.F1, bishop)
    rig.t += 0.8
    rig.lift(chess.E5)
    rig.t += 0.4
    rig.place(chess.E7, chess.Piece(chess.PAWN, chess.BLACK))
    rig.settle(8.0)
    assert not [o for o in rig.outs if isinstance(o, MoveMade)]
    assert [o.to_ply for o in rig.outs if isinstance(o, MovesRetracted)] == [0]  # what was published goes back
    assert rig.record() == []
    assert made_then_retracted(rig.outs) == []


def test_a_genuine_move_that_waited_is_published_with_its_own_times() -> None:
    """The illegal move not noticed, White moves the bishop on (Bb5) and leaves it: published once the board stood
    still 6 s (not at T_settle), made_at the time the bishop was set down; the state shows it from then on."""
    from tests.core.test_correction_running import _bishop_through_the_pawn_not_noticed

    rig = _bishop_through_the_pawn_not_noticed()
    rig.lift(chess.C4)
    rig.t += 0.4
    set_down = rig.t
    rig.place(chess.B5, chess.Piece(chess.BISHOP, chess.WHITE))
    rig.settle(5.0)
    assert not [o for o in rig.outs if isinstance(o, MoveMade)]
    rig.settle(1.5)
    made = [o.move for o in rig.outs if isinstance(o, MoveMade)]
    assert [(m.uci, m.made_at) for m in made] == [("c4b5", set_down)]
    assert rig.record()[-1] == "c4b5"



def test_a_detour_put_back_where_it_came_from_is_taken_out_of_the_record_unseen() -> None:
    """The bishop (1.Bf1-c4 through the pawn, not noticed; 1...e5) set down on b5 (Bb5 legal, made and kept back)
    and put back on c4, no press: not a move of the game (completed only by the press, 6.2.1; the player's piece
    back on its square with his clock running), out of the record and the archive, and never on the broadcast (no
    MoveMade, no retraction). White has the move again; the restoration then goes on as without the detour.
    Before: Bb5 stayed in the record (Engine.pgn, the journal's game row), to be published later."""
    from tests.core.test_correction_running import _bishop_through_the_pawn_not_noticed

    rig = _bishop_through_the_pawn_not_noticed()
    bishop = chess.Piece(chess.BISHOP, chess.WHITE)
    rig.lift(chess.C4)
    rig.t += 0.4
    rig.place(chess.B5, bishop)
    rig.t += 1.5  # well past T_settle: made, kept back
    rig.outs += rig.engine.advance(rig.t)
    assert "Bb5" in rig.engine.pgn()
    rig.lift(chess.B5)
    rig.t += 0.4
    rig.place(chess.C4, bishop)
    rig.settle(8.0)
    assert "Bb5" not in rig.engine.pgn()  # the archive: every move made, none undone
    assert [r.uci for r in rig.engine.g.records] == ["f1c4", "e7e5"]
    assert rig.engine.state.turn == chess.WHITE
    assert not [o for o in rig.outs if isinstance(o, MoveMade | MovesRetracted)]
    # the restoration goes on: the bishop home, the pawn back
    rig.lift(chess.C4)
    rig.t += 0.4
    rig.place(chess.F1, bishop)
    rig.t += 0.8
    rig.lift(chess.E5)
    rig.t += 0.4
    rig.place(chess.E7, chess.Piece(chess.PAWN, chess.BLACK))
    rig.settle(8.0)
    assert not [o for o in rig.outs if isinstance(o, MoveMade)]
    assert [o.to_ply for o in rig.outs if isinstance(o, MovesRetracted)] == [0]
    assert rig.record() == []
    assert made_then_retracted(rig.outs) == []


def test_a_detour_put_back_then_played_on_records_the_move_played() -> None:
    """The same detour (Bb5 kept back, the bishop back on c4), then White plays on with another move (Nf3) and
    Black replies: the record is 1.Bc4 e5 2.Nf3 and Black's reply, Bb5 never in it (no released move changed)."""
    from tests.core.test_correction_running import _bishop_through_the_pawn_not_noticed

    rig = _bishop_through_the_pawn_not_noticed()
    bishop = chess.Piece(chess.BISHOP, chess.WHITE)
    rig.lift(chess.C4)
    rig.t += 0.4
    rig.place(chess.B5, bishop)
    rig.t += 1.5
    rig.lift(chess.B5)
    rig.t += 0.4
    rig.place(chess.C4, bishop)
    rig.t += 1.0
    rig.board = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/2B5/8/PPPPPPPP/RNBQK1NR w KQkq - 0 2")
    rig.play(chess.Move.from_uci("g1f3"))
    rig.play(chess.Move.from_uci("b8c6"))
    rig.settle(8.0)
    assert [r.uci for r in rig.engine.g.records] == ["f1c4", "e7e5", "g1f3", "b8c6"]
    assert published(rig.outs) == ["g1f3", "b8c6"]
    assert "RELEASED_MOVE_CHANGED" not in [i.code for i in rig.raised()]
