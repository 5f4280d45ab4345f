"""The arbiter's rulings and the board's reinstatement: a dismissal ends the wait it makes moot (the moves the
reinstatement took back are the record again), and a ruling he wrote stays when the board reinstates."""

from __future__ import annotations

import chess

from boardd.core.engine.modes import Phase
from boardd.core.events import Reinstate, Resolve, SquareChanged
from boardd.core.outputs import GameEvent, MoveMade, MovesRetracted, Status
from tests.core.test_scenarios import SCENARIOS, Run, run

_WHITE_BISHOP = chess.Piece(chess.BISHOP, chess.WHITE)
_BLACK_PAWN = chess.Piece(chess.PAWN, chess.BLACK)


def _black_plays_d6(r: Run, at: float) -> list[str]:
    """Black lifts d7 and puts the pawn on d6: the SAN of the moves the engine makes of it."""
    outs = [*r.engine.feed(SquareChanged(at=at, square=chess.D7, content=None)),
            *r.engine.feed(SquareChanged(at=at + 0.3, square=chess.D6, content=_BLACK_PAWN)),
            *r.engine.advance(at + 2.0)]
    return [o.move.san for o in outs if isinstance(o, MoveMade)]


def test_dismissing_two_hands_after_reinstate_ends_the_wait_and_gives_the_castling_back() -> None:
    """T08: the arbiter presses Reinstate on the two-handed castling's card (the position before O-O), then
    finds it was one hand and dismisses it. The board still shows O-O: the wait ends, O-O is the record again
    (republished) and Black's reply is recognised. Before: the engine kept waiting for the position before O-O,
    O-O lost from the record, Black's move never recorded."""
    r = run(SCENARIOS["T08"])
    at_press = next(i for i in r.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    before = [m.san for m in r.engine.state.moves]
    assert before[-1] == "O-O"
    outs = r.engine.feed(Reinstate(at=5.0, ply=len(before) - 1))
    assert [o.to_ply for o in outs if isinstance(o, MovesRetracted)] == [len(before) - 1]
    assert r.engine.g.phase.state is Phase.AWAIT_RESTORE
    outs = r.engine.feed(Resolve(at=8.0, irregularity_id=at_press.id, ruling="one hand after all", accept=False))
    assert r.engine.g.phase.state is Phase.PLAY
    assert [m.san for m in r.engine.state.moves] == before
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["O-O"]
    withdrawn = [o.details for o in outs if isinstance(o, GameEvent) and o.type == "ARBITER_ACTION"]
    assert withdrawn == [{"reinstatement_withdrawn": len(before) - 1, "irregularity": at_press.id}]
    assert r.engine.state.open_irregularities == ()
    assert _black_plays_d6(r, 10.0) == ["d6"]


def test_dismissing_the_illegal_move_after_reinstate_ends_the_wait_and_keeps_the_ruling() -> None:
    """T34: Reinstate pressed (the finding resolves: position reinstated), then the arbiter dismisses the
    illegal move (not one: e.g. the board misread). The wait ends, the entry is the record again, and the
    correction of that reinstatement writes nothing over his ruling later."""
    r = run(SCENARIOS["T34"])
    illegal = next(i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE")
    n = len(r.engine.state.moves)
    assert illegal.suggestion.reinstate_ply is not None
    r.engine.feed(Reinstate(at=5.0, ply=illegal.suggestion.reinstate_ply))
    assert r.engine.g.phase.state is Phase.AWAIT_RESTORE and len(r.engine.state.moves) == n - 1
    r.engine.feed(Resolve(at=8.0, irregularity_id=illegal.id, ruling="dismissed: board misread", accept=False))
    assert r.engine.g.phase.state is Phase.PLAY and len(r.engine.state.moves) == n
    # the board put back later is no reinstatement of a dismissed finding: the ruling stays his
    r.engine.feed(SquareChanged(at=10.0, square=chess.C5, content=None))
    r.engine.feed(SquareChanged(at=10.3, square=chess.F1, content=_WHITE_BISHOP))
    r.engine.advance(15.0)
    found = next(i for i in r.engine.irregularities if i.id == illegal.id)
    assert found.ruling == "dismissed: board misread"


def test_a_ruling_that_confirms_keeps_the_wait() -> None:
    """An accepted ruling on the finding (the suggestion applied) still awaits the position; so does a dismissal
    of another incident's finding."""
    r = run(SCENARIOS["T34"])
    illegal = next(i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE")
    assert illegal.suggestion.reinstate_ply is not None
    r.engine.feed(Reinstate(at=5.0, ply=illegal.suggestion.reinstate_ply))
    r.engine.feed(Resolve(at=8.0, irregularity_id=illegal.id, ruling="+2 min to Black", accept=True))
    assert r.engine.g.phase.state is Phase.AWAIT_RESTORE
    r.engine.feed(Resolve(at=9.0, irregularity_id="no-such-finding", ruling="dismissed", accept=False))
    assert r.engine.g.phase.state is Phase.AWAIT_RESTORE


def test_the_arbiters_ruling_stays_when_the_board_reinstates_the_position() -> None:
    """T34: the arbiter rules first (+2 min to Black, the bishop back), then the players put the bishop back:
    the reinstatement adds its note after his words (before: "position reinstated at ply 4 (...)" replaced
    them)."""
    r = run(SCENARIOS["T34"])
    illegal = next(i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE")
    words = "+2 min to Black; Bf1 back, a bishop move"
    r.engine.feed(Resolve(at=3.0, irregularity_id=illegal.id, ruling=words, accept=True))
    r.engine.feed(SquareChanged(at=5.0, square=chess.C5, content=None))
    outs = r.engine.feed(SquareChanged(at=5.3, square=chess.F1, content=_WHITE_BISHOP))
    assert any(isinstance(o, MovesRetracted) for o in outs)  # reinstated by the board (7.5.1)
    found = next(i for i in r.engine.irregularities if i.id == illegal.id)
    assert found.status is Status.RESOLVED and found.ruling is not None
    assert found.ruling.startswith(f"{words}; position reinstated at ply {illegal.suggestion.reinstate_ply}")


def test_confirmed_two_hands_suggests_the_position_before_the_castling() -> None:
    """T08 confirmed (7.5.4): the suggestion's reinstatement is the position before O-O, and the tablet's
    Reinstate with it takes O-O back (before: the ply after O-O, a reinstatement that took nothing back)."""
    r = run(SCENARIOS["T08"])
    at_press = next(i for i in r.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    n = len(r.engine.state.moves)
    r.engine.feed(Resolve(at=8.0, irregularity_id=at_press.id, ruling="confirmed", accept=True))
    confirmed = next(i for i in r.engine.irregularities if i.id == at_press.id)
    assert confirmed.suggestion.reinstate_ply == n - 1
    outs = r.engine.feed(Reinstate(at=9.0, ply=confirmed.suggestion.reinstate_ply))
    assert [o.to_ply for o in outs if isinstance(o, MovesRetracted)] == [n - 1]


def test_a_withdrawal_after_two_reinstatements_gives_back_what_both_took() -> None:
    """Reinstate pressed twice while waiting (the second further back, the first castling's position mistyped):
    the dismissal gives back every move the two took back."""
    r = run(SCENARIOS["T08"])
    at_press = next(i for i in r.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    before = [m.san for m in r.engine.state.moves]
    r.engine.feed(Reinstate(at=5.0, ply=len(before) - 1))
    r.engine.feed(Reinstate(at=6.0, ply=len(before) - 3))
    assert len(r.engine.state.moves) == len(before) - 3
    r.engine.feed(Resolve(at=8.0, irregularity_id=at_press.id, ruling="one hand after all", accept=False))
    assert r.engine.g.phase.state is Phase.PLAY and [m.san for m in r.engine.state.moves] == before
