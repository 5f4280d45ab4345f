"""The arbiter's rulings that hold (seed 004 on 7.5.1-7.5.5; Arbiters' Manual: two irregularities in one move count
once): a press without a move judged a distraction while the illegal move of the same move stands
(``Resolve.alone``), a penalty applied from the card that carried it stays applied when a dismissal is taken back,
and the Undo of a dismissal (``Reopen``) puts back what the dismissal ended on the board (the awaited
reinstatement, the correction cycle of the illegal move), as long as nothing was played since.
"""

from __future__ import annotations

import pytest

from boardd.core.events import Reopen, Resolve
from boardd.core.outputs import IrregularityUpdated, Status
from tests.core.test_illegal_count import _count, _found, _play
from tests.core.test_illegal_count_once import _E2018, _press_then_illegal


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
def test_the_press_dismissed_alone_leaves_the_illegal_move_open_and_counted(edition: int, tc: str, add_s: int,
                                                                            seed: int) -> None:
    """White presses without a move, Black presses back, White plays Ng1-g3 (illegal) and presses: one move,
    counted once, the press the card's lead with the penalty. The arbiter judges the press a distraction, the
    illegal move real: ``resolve`` the press with ``accept`` false and ``alone``. The press is resolved, the illegal
    move stays open (published after the press's ruling: the card stays, led by it), still counted (the move's
    penalty now on it), and its cycle still awaits the position before it. (Before: closed with the press,
    uncounted.) Undone, the press carries the penalty again."""
    engine, _ = _play("S1", _press_then_illegal(seed), edition=edition, tc=tc)
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]  # White's (Black's press back is his own)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.incident == press.id and _count(engine) == (1, 0)
    assert press.suggestion.add_to_opponent_s == add_s and illegal.suggestion.add_to_opponent_s is None
    outs = engine.feed(Resolve(at=30.0, irregularity_id=press.id, ruling="distraction", accept=False, alone=True))
    found = {i.id: i for i in engine.irregularities}
    assert found[press.id].status is Status.RESOLVED and found[press.id].ruling == "distraction"
    assert found[illegal.id].status is Status.OPEN and found[illegal.id].suggestion.add_to_opponent_s == add_s
    assert _count(engine) == (1, 0) and illegal.id in engine.state.open_irregularities
    updated = [o.irregularity.id for o in outs if isinstance(o, IrregularityUpdated)]
    assert updated.index(illegal.id) > updated.index(press.id)
    assert engine.correction.cycle is not None and engine.correction.cycle.irregularity_id == illegal.id
    engine.feed(Reopen(at=31.0, irregularity_id=press.id))
    found = {i.id: i for i in engine.irregularities}
    assert found[press.id].status is Status.OPEN and found[press.id].suggestion.add_to_opponent_s == add_s
    assert found[illegal.id].suggestion.add_to_opponent_s is None and _count(engine) == (1, 0)


@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
def test_a_penalty_applied_from_the_later_card_is_not_suggested_again_after_the_undo(edition: int, tc: str,
                                                                                     add_s: int) -> None:
    """The press dismissed alone, the move's penalty moved onto the illegal move; the arbiter applies it from that
    card (``resolve`` with ``accept``: +2 min given). Then he takes the press's dismissal back (Undo): the press
    counts again, but the move's penalty was applied already: it stays on the illegal move, and the reopened press
    suggests none ("counted once with" the illegal move). (Before: it moved back onto the press, which suggested
    the penalty a second time: an arbiter applying every card's suggestion would give it twice.)"""
    engine, _ = _play("S1", _press_then_illegal(1), edition=edition, tc=tc)
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]  # White's (Black's press back is his own)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    engine.feed(Resolve(at=30.0, irregularity_id=press.id, ruling="distraction", accept=False, alone=True))
    engine.feed(Resolve(at=40.0, irregularity_id=illegal.id, ruling=f"+{add_s} s to Black"))
    engine.feed(Reopen(at=50.0, irregularity_id=press.id))
    found = {i.id: i for i in engine.irregularities}
    assert found[press.id].status is Status.OPEN and _count(engine) == (1, 0)
    assert found[illegal.id].suggestion.add_to_opponent_s == add_s
    assert found[press.id].suggestion.add_to_opponent_s is None and found[press.id].suggestion.result is None
    assert f"counted once with {illegal.id}" in found[press.id].suggestion.text


def test_alone_goes_through_the_command_and_the_event_log() -> None:
    """``cmd/resolve`` takes ``alone`` (a boolean); the event log keeps it (written only when true: logs without it
    read as before)."""
    import io
    import json

    from boardd.core.eventlog import read_events, write_events
    from boardd.daemon.commands import parse_command

    parsed = parse_command("resolve", json.dumps({"id": "c1", "irregularity": "2-1", "accept": False,
                                                  "alone": True}).encode(), at=3.0)
    assert parsed.event == Resolve(at=3.0, irregularity_id="2-1", accept=False, alone=True)
    stream = io.StringIO()
    plain = Resolve(at=4.0, irregularity_id="2-1", accept=False)
    write_events(stream, [parsed.event, plain])
    lines = stream.getvalue().splitlines()
    assert '"alone"' in lines[-2] and '"alone"' not in lines[-1]
    assert [e for _, e in read_events(lines)] == [parsed.event, plain]


# -- the Undo of a dismissal puts back what it ended on the board ----------------------------------------------


def test_the_undo_of_a_dismissal_awaits_the_withdrawn_reinstatement_again() -> None:
    """T34: Reinstate pressed (the board still shows the illegal move), then the illegal move dismissed: the wait is
    withdrawn, the move back in the record. The arbiter takes the dismissal back (Undo): the illegal move is
    counted again, its ruling the Reinstate's, and the reinstatement is awaited again (its move taken back
    again); the board put back then reinstates it. (Before: the finding's ruling back, but the illegal move
    stayed in the record, nothing awaited: the board put back was a takeback.)"""
    import chess

    from boardd.core.engine.modes import Phase
    from boardd.core.events import Reinstate, SquareChanged
    from tests.core.test_scenarios import SCENARIOS, run

    r = run(SCENARIOS["T34"])
    illegal = next(i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE")
    n = len(r.engine.state.moves)
    assert illegal.suggestion.reinstate_ply == n - 1
    r.engine.feed(Reinstate(at=5.0, ply=n - 1))
    r.engine.feed(Resolve(at=8.0, irregularity_id=illegal.id, ruling="dismissed: board misread", accept=False))
    assert r.engine.g.phase.state is Phase.PLAY and len(r.engine.state.moves) == n
    r.engine.feed(Reopen(at=9.0, irregularity_id=illegal.id))
    assert r.engine.g.phase.state is Phase.AWAIT_RESTORE and len(r.engine.state.moves) == n - 1
    state = r.engine.state
    assert state.illegal_moves_white + state.illegal_moves_black == 1  # counted again
    assert next(i for i in r.engine.irregularities if i.id == illegal.id).ruling == \
        f"position reinstated at ply {n - 1} (reinstated by the arbiter)"  # as the Reinstate left it
    outs = [*r.engine.feed(SquareChanged(at=10.0, square=chess.C5, content=None)),
            *r.engine.feed(SquareChanged(at=10.3, square=chess.F1, content=chess.Piece(chess.BISHOP, chess.WHITE))),
            *r.engine.advance(15.0)]
    assert r.engine.g.phase.state is Phase.PLAY and len(r.engine.state.moves) == n - 1
    assert "REINSTATED" in [getattr(o, "type", None) for o in outs]
    assert not [i for i in r.engine.irregularities if i.code == "TAKEBACK_DETECTED"]


def test_the_undo_of_a_dismissal_opens_the_correction_cycle_again() -> None:
    """T34 without Reinstate: the illegal move dismissed ends its correction cycle (the board put back would be the
    players' takeback). Taken back (Undo) before anything was played: the cycle is open again, and the board put
    back is the reinstatement of the position before the illegal move (7.5.1), not a takeback. (Before: the cycle
    stayed ended: TAKEBACK_DETECTED.)"""
    import chess

    from boardd.core.events import SquareChanged
    from tests.core.test_scenarios import SCENARIOS, run

    r = run(SCENARIOS["T34"])
    illegal = next(i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE")
    n = len(r.engine.state.moves)
    assert r.engine.correction.cycle is not None and r.engine.correction.cycle.irregularity_id == illegal.id
    r.engine.feed(Resolve(at=8.0, irregularity_id=illegal.id, ruling="dismissed: board misread", accept=False))
    assert r.engine.correction.cycle is None
    r.engine.feed(Reopen(at=9.0, irregularity_id=illegal.id))
    assert r.engine.correction.cycle is not None and r.engine.correction.cycle.irregularity_id == illegal.id
    outs = [*r.engine.feed(SquareChanged(at=10.0, square=chess.C5, content=None)),
            *r.engine.feed(SquareChanged(at=10.3, square=chess.F1, content=chess.Piece(chess.BISHOP, chess.WHITE))),
            *r.engine.advance(15.0)]
    assert len(r.engine.state.moves) == n - 1
    assert [getattr(o, "details", {}).get("by") for o in outs if getattr(o, "type", None) == "REINSTATED"] == [
        "board"]
    assert not [i for i in r.engine.irregularities if i.code == "TAKEBACK_DETECTED"]
