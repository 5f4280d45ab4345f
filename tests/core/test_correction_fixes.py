"""Defects found by the correction audit (tests/core/test_correction_audit.py), one regression test each."""

from __future__ import annotations

from boardd.core.outputs import Status
from tests.core.test_scenarios import Run, Scn, check, run

_BACK_D = "2000 PAUSE · 2200 LEVER W · 2500 L c1 · 2600 L d1 · 2900 P e1 wK · 3100 P a1 wR · 3500 RESUME"


def assert_reinstated(result: Run, *, ply: int = 4, seen: str = "+2:00") -> None:
    """The illegal move's finding resolved by the reinstatement at *ply*, with the penalty time *seen* on the
    clock in its ruling."""
    illegal = next(i for i in result.engine.irregularities if i.code == "ILLEGAL_MOVE")
    assert illegal.status is Status.RESOLVED and illegal.ruling is not None
    assert illegal.ruling.startswith(f"position reinstated at ply {ply}")
    assert f"{seen} seen on the clock" in illegal.ruling


def test_illegal_long_castling_begun_with_the_king_binds_the_king() -> None:
    """4.4.3 (via 7.5.1): the king touched first for an illegal castling must make another king move. After
    the reinstatement Kd2 is the lawful replacement (no TOUCH_MOVE_VIOLATION); the finding's constraint names
    the king, and the check of the replacement used the rook (a1 comes before e1 in square order)."""
    scn = Scn("D", "0 L e1 · 300 P c1 wK · 600 L a1 · 900 P d1 wR · 1200 C W · " + _BACK_D +
              " · 4500 L e1 · 4800 P d2 wK · 5200 C W", ("Kd2",), ("ILLEGAL_MOVE/CASTLING_ILLEGAL",),
              allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    r = run(scn)
    check(scn, r)
    illegal = next(i for i in r.raised if i.code == "ILLEGAL_MOVE")
    assert illegal.suggestion.constraints[0].startswith("the wK on e1 must move")


def test_illegal_long_castling_replaced_by_a_rook_move_is_a_touch_move_violation() -> None:
    scn = Scn("D", "0 L e1 · 300 P c1 wK · 600 L a1 · 900 P d1 wR · 1200 C W · " + _BACK_D +
              " · 4500 L a1 · 4800 P b1 wR · 5200 C W", ("Rb1",),
              ("ILLEGAL_MOVE/CASTLING_ILLEGAL", "TOUCH_MOVE_VIOLATION"), allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    check(scn, run(scn))


def test_a_slow_reinstatement_gives_one_divergence_that_resolves_itself() -> None:
    """§3.7 step 2: while the board is put back after the arbiter's reinstate, a pause of T_adjust shows him what
    still differs. One finding for the whole wait, joined to the illegal move's incident and resolved when the
    board shows the position; it was raised again at every slow step (three here) and stayed open."""
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 ARB reinstate · 1600 PAUSE · 2000 L b1 · 4500 P b1 wN · "
                   "7000 L c5 · 9500 P f1 wB · 10000 LEVER W · 10500 RESUME · 11000 L f1 · 11300 P c4 wB · 11800 C W",
              ("Bc4",), ("ILLEGAL_MOVE/GEOMETRY", "POSITION_DIVERGENCE"), allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    r = run(scn)
    check(scn, r)
    illegal = next(i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE")
    divergence = next(i for i in r.engine.irregularities if i.code == "POSITION_DIVERGENCE")
    assert divergence.status is Status.RESOLVED and divergence.incident == illegal.id
    assert "f1" in divergence.suggestion.text  # updated: what still differed at the last slow step


def test_pieces_handled_while_the_arbiter_puts_a_pawn_right_do_not_bind_the_opponent() -> None:
    """7.5.2 on a paused clock: the arbiter lifts the black rook (the wrong piece) and puts it back, then exchanges
    the pawn on b8 for a queen. Black's reply with another piece is no touch-move matter (4.3.1 binds the
    player who touched it); the lift was kept in Black's segment and gave TOUCH_MOVE_SUSPECTED."""
    scn = Scn("K", "0 L b7 · 300 P b8 wP · 700 C W · 2000 PAUSE · 2500 L a8 · 3000 P a8 bR · 3500 L b8 · "
                   "4000 P b8 wQ · 5000 RESUME · 6000 L g8 · 6300 P g7 bK · 6800 C B",
              ("b8=Q+", "Kg7"), ("PAWN_NOT_REPLACED",),
              allow_info=("CLOCK_PAUSED", "ADJUST_OBSERVED", "ARBITER_ADJUST"))
    check(scn, run(scn))


_AFTER_T34 = "3600 LEVER W · 4000 RESUME · 4500 L f1 · 4800 P c4 wB · 5200 C W"


def test_the_arbiter_lifting_the_wrong_piece_first_is_no_adjustment_out_of_turn() -> None:
    """7.5.1 with the clock paused: the arbiter lifts the knight on f3 first (the wrong piece), puts it back, then
    the bishop. Not an adjustment on the opponent's time (6.2.5): the offender's clock is not the one that
    stopped, nobody's runs. It gave ADJUST_OUT_OF_TURN."""
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 PAUSE · 2000 L f3 · 2500 P f3 wN · 3000 L c5 · "
                   "3300 P f1 wB · " + _AFTER_T34, ("Bc4",), ("ILLEGAL_MOVE/GEOMETRY",),
              allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    check(scn, run(scn))


def test_a_piece_the_arbiter_puts_on_a_wrong_square_on_the_way_back_is_no_change_out_of_turn() -> None:
    """7.5.1 with the clock paused: the rook is put down on b1 first, then on a1. It gave OUT_OF_TURN_CHANGE."""
    scn = Scn("P", "0 L a1 · 300 P c3 wR · 800 C W · 1500 PAUSE · 2000 L c3 · 2800 P b1 wR · 3500 L b1 · "
                   "4300 P a1 wR · 5600 LEVER W · 6000 RESUME · 6500 L a1 · 6800 P a5 wR · 7200 C W",
              ("Ra5",), ("ILLEGAL_MOVE/GEOMETRY",), allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    check(scn, run(scn))


def test_an_illegal_move_found_two_moves_later_and_reinstated_from_the_tablet() -> None:
    """7.5.1: found after Black's reply and White's next move, the arbiter reinstates (tablet) the position
    before the illegal move, adds the penalty time and gives White the clock by pressing Black's side. The
    illegal move's cycle had closed when White moved on, so the restart was Black's CLOCK_PRESS_NO_MOVE (from
    2018 an illegal move of Black's, 7.5.3) and the finding stayed open."""
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 2000 L g8 · 2300 P f6 bN · 2700 C B · 3500 L d2 · "
                   "3800 P d3 wP · 4200 C W · 5000 ARB reinstate · 5200 PAUSE · 5500 L d3 · 5800 P d2 wP · "
                   "6000 L f6 · 6300 P g8 bN · 6500 L c5 · 6800 P f1 wB · 7000 ADD B 120 · 7200 ADD W -30 · "
                   "7500 RESUME · 8000 C B · 9000 L f1 · 9300 P c4 wB · 9800 C W",
              ("Bc4",), ("ILLEGAL_MOVE/GEOMETRY",), allow_info=("CLOCK_PAUSED",))
    r = run(scn)
    check(scn, r)
    assert_reinstated(r)
    assert r.engine.state.illegal_moves_black == 0


def test_an_illegal_move_found_two_moves_later_and_put_back_on_the_board_move_by_move() -> None:
    """7.5.1 without the tablet: found two moves later, the arbiter pauses the clock and takes the moves back one
    by one (d3, then Nf6, then the bishop). The board showing the position after Black's reply was a takeback
    (OUT_OF_TURN_CHANGE, TAKEBACK_DETECTED), the restart Black's CLOCK_PRESS_NO_MOVE, the finding stayed open."""
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 2000 L g8 · 2300 P f6 bN · 2700 C B · 3500 L d2 · "
                   "3800 P d3 wP · 4200 C W · 5200 PAUSE · 5500 L d3 · 5800 P d2 wP · 6000 L f6 · 6300 P g8 bN · "
                   "6500 L c5 · 6800 P f1 wB · 7000 ADD B 120 · 7200 ADD W -30 · 7500 RESUME · 8000 C B · "
                   "9000 L f1 · 9300 P c4 wB · 9800 C W",
              ("Bc4",), ("ILLEGAL_MOVE/GEOMETRY",), allow_info=("CLOCK_PAUSED",))
    r = run(scn)
    check(scn, r)
    assert_reinstated(r)


def test_the_arbiters_two_hands_while_putting_the_position_back_are_no_players_two_handed_move() -> None:
    """7.5.1 found after Black's reply, clock paused: the arbiter lifts the bishop and (by mistake) the knight
    with two hands. Not a two-handed move (4.1) of White's, and no suspicion left for White's next move (it
    gave TWO_HANDS_SUSPECTED, then TWO_HANDS_AT_PRESS at Bc4, from 2018 an illegal move once confirmed). The
    bishop's way back (c5 to f1, with the position after the illegal move on the board) is no illegal placement
    of White's either: it gave ILLEGAL_PLACEMENT_CORRECTED at Bc4."""
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 2000 L g8 · 2300 P f6 bN · 2700 C B · 3500 PAUSE · "
                   "4000 L c5 · 4050 L f3 · 4500 P f3 wN · 5000 P f1 wB · 5500 L f6 · 5800 P g8 bN · 6500 ADD B 120 · "
                   "6700 ADD W -30 · 7000 RESUME · 8000 L f1 · 8300 P c4 wB · 8800 C W",
              ("Bc4",), ("ILLEGAL_MOVE/GEOMETRY",), allow_info=("CLOCK_PAUSED",))
    check(scn, run(scn))




def test_a_capture_after_an_illegal_move_found_later_is_taken_back_capturer_first() -> None:
    """7.5.1 without the tablet, clock paused (audit case 103): after the illegal Ng1-d1, Black played Nc5 and
    White Qxc2. Taking Qxc2 back, the arbiter first puts the queen back on f2, then the black queen on c2: the
    state in between is no position of the game; it gave OUT_OF_TURN_CHANGE."""
    from tests.core.test_correction_audit import LATER_CASES, found_later

    case = LATER_CASES[103]
    assert (case.seed, case.edition, case.tc) == (103, 2023, "180+2")
    assert found_later(case) == []
