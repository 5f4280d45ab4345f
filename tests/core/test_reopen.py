"""Taking back a dismissal (``Reopen``, the tablet's Undo): a Dismiss pressed by mistake.

The findings the dismissal closed need the arbiter again (their status and ruling as before it), a counted one
counts again (the state's ``illegal_moves``, the later findings' suggestions, the limit note), and the command is
journaled like the others. A ``reopen`` of something that was not dismissed changes nothing.
"""

from __future__ import annotations

import io

from boardd.core import eventlog
from boardd.core.events import Reopen, Resolve
from boardd.core.outputs import IrregularityUpdated, StateChanged, Status
from tests.core.test_illegal_count import _MOVES, _PRESS, _count, _found, _knight, _play
from tests.core.test_scenarios import Scn, run

#: R19: two knights moved with two hands; the press was an illegal move of its own
_TWO_KNIGHTS = Scn("S1", "0 L g1 · 600 L b1 · 1000 P f3 wN · 1100 P c3 wN · 1500 C W", ("!",),
                   ("TWO_HANDS_SUSPECTED", "ILLEGAL_MOVE/TWO_PIECES_MOVED", "TWO_HANDS_AT_PRESS"))


def test_a_dismissed_press_reopened_needs_the_arbiter_and_counts_again() -> None:
    """White's press without a move dismissed by mistake after his illegal move: the illegal move became his
    first (+2:00). Taken back: the press is open again, unruled, counted; the illegal move is the second again
    (0-1) and its limit note is noted again."""
    engine, _ = _play("L", f"{_PRESS} · {_MOVES} · {_knight(3000)} · 5000 ARB dismiss CLOCK_PRESS_NO_MOVE")
    (press,) = _found(engine, "CLOCK_PRESS_NO_MOVE")
    assert press.status is Status.RESOLVED and _count(engine) == (1, 0)
    assert press.id not in engine.state.open_irregularities
    outs = engine.feed(Reopen(at=9.0, irregularity_id=press.id))
    (press,) = _found(engine, "CLOCK_PRESS_NO_MOVE")
    assert press.status is Status.OPEN and press.ruling is None
    assert press.id in engine.state.open_irregularities
    assert _count(engine) == (2, 0)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.suggestion.result == "0-1"
    (limit,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert limit.status is Status.NOTED
    assert any(isinstance(o, IrregularityUpdated) and o.irregularity.id == press.id for o in outs)
    assert any(isinstance(o, StateChanged) for o in outs)
    # taken back once: nothing more to take back
    assert engine.dismissals.reopen_error(press.id) is not None
    assert engine.feed(Reopen(at=9.5, irregularity_id=press.id)) == []


def test_a_reopened_finding_takes_a_later_ruling_as_any_open_one() -> None:
    """After the undo the arbiter rules again: upheld, it stays counted and his new words are the ruling."""
    engine, _ = _play("L", f"{_knight(0)} · 1500 ARB dismiss ILLEGAL_MOVE")
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert _count(engine) == (0, 0)
    engine.feed(Reopen(at=3.0, irregularity_id=illegal.id))
    assert _count(engine) == (1, 0) and _found(engine, "ILLEGAL_MOVE")[0].status is Status.OPEN
    engine.feed(Resolve(at=4.0, irregularity_id=illegal.id, ruling="+2 min to Black"))
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.RESOLVED and illegal.ruling == "+2 min to Black"
    assert _count(engine) == (1, 0)
    assert engine.dismissals.reopen_error(illegal.id) is not None  # upheld: no dismissal to take back


def test_a_two_handed_move_dismissed_then_reopened_is_one_open_incident_again() -> None:
    """The two-handed press dismissed closes the incident as one (the suspicion, the illegal move of the same
    press 'resolved with' it) and uncounts the illegal move it closed (count2: a dismissal uncounts what it
    closes); taken back, all three are open again and the illegal move counts once again."""
    r = run(_TWO_KNIGHTS)
    found = {i.code: i for i in r.engine.irregularities}
    at_press = found["TWO_HANDS_AT_PRESS"]
    r.engine.feed(Resolve(at=10.0, irregularity_id=at_press.id, ruling="one hand", accept=False))
    assert r.engine.state.open_irregularities == ()
    assert r.engine.state.illegal_moves_white == 0  # the illegal move closed with it is uncounted
    r.engine.feed(Reopen(at=11.0, irregularity_id=at_press.id))
    again = {i.code: i for i in r.engine.irregularities}
    assert {again[c].status for c in ("TWO_HANDS_SUSPECTED", "ILLEGAL_MOVE", "TWO_HANDS_AT_PRESS")} == {Status.OPEN}
    assert all(again[c].ruling is None for c in ("TWO_HANDS_SUSPECTED", "ILLEGAL_MOVE", "TWO_HANDS_AT_PRESS"))
    assert set(r.engine.state.open_irregularities) == {found[c].id for c in ("TWO_HANDS_SUSPECTED", "ILLEGAL_MOVE",
                                                                             "TWO_HANDS_AT_PRESS")}
    assert r.engine.state.illegal_moves_white == 1


def test_reopen_of_what_was_not_dismissed_changes_nothing() -> None:
    """An open finding, one resolved with accept, an unknown id: refused with the reason, no output."""
    engine, _ = _play("L", f"{_knight(0)} · 1500 ARB uphold ILLEGAL_MOVE")
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert "not dismissed" in (engine.dismissals.reopen_error(illegal.id) or "")
    assert "unknown irregularity" in (engine.dismissals.reopen_error("99-9") or "")
    for ident in (illegal.id, "99-9"):
        assert engine.feed(Reopen(at=9.0, irregularity_id=ident)) == []
    assert _count(engine) == (1, 0)


def test_reopen_is_journaled_like_the_other_commands() -> None:
    event = Reopen(at=12.5, irregularity_id="30-4")
    obj = eventlog.event_to_json(event)
    assert obj["type"] == "reopen" and obj["id"] == "30-4"
    assert eventlog.event_from_json(obj) == event
    out = io.StringIO()
    eventlog.write_events(out, [event])
    assert [e for _, e in eventlog.read_events(io.StringIO(out.getvalue()))] == [event]
