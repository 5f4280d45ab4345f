"""An illegal-move finding closes once the Laws say nothing is left to do on it (7.5.1, 7.5.5, A.5.2).

* The arbiter ends the game (``SetResult``: the second illegal move, 7.5.5, a resignation, an agreement): the
  game is over, nothing is reinstated any more. Every illegal-move finding still open or acknowledged is resolved
  with the result, once (the tablet no longer shows it as needing attention; ``open_irregularities`` without it).
* The rapid/blitz "otherwise" regime: the claim window closed without a claim or ruling (R22, A.4.2 / A.5.2):
  ``ILLEGAL_MOVE_STANDS`` is noted and the illegal move's finding is resolved with that ruling, once: the arbiter
  no longer acts on it (only the players' agreement corrects it).

Before: the finding stayed ``open`` for good in both cases.
"""

from __future__ import annotations

import json

import chess
import pytest

from boardd.core.contract import Publisher, topic_kind
from boardd.core.engine import Engine
from boardd.core.events import Acknowledge, Resolve, SetResult
from boardd.core.outputs import Irregularity, IrregularityRaised, IrregularityUpdated, Output, Severity, Status
from boardd.core.settings import Regime
from tests.core.correction_audit_rig import Rig
from tests.core.test_illegal_count import _PRESS, _found, _knight, _play
from tests.core.test_scenarios import SCENARIOS, run


def _updates(outs: list[Output], irr: Irregularity) -> list[Irregularity]:
    return [o.irregularity for o in outs if isinstance(o, IrregularityUpdated) and o.irregularity.id == irr.id]


def _final(engine: Engine, irr: Irregularity) -> Irregularity:
    return next(i for i in engine.irregularities if i.id == irr.id)


def _open_on_the_wire(engine: Engine, outs: list[Output], at: float) -> list[str]:
    """The ``open_irregularities`` of the last ``state`` the daemon publishes for *outs*."""
    states = [json.loads(p.payload_bytes()) for p in Publisher(board="b1").render(outs, engine.state, at=at)
              if (kind := topic_kind(p.topic)) is not None and kind[1] == "state"]
    assert states, "a state follows the result"
    return list(states[-1]["open_irregularities"])


def _set_result(engine: Engine, at: float, result: str, termination: str) -> list[Output]:
    return engine.feed(SetResult(at=at, result=result, termination=termination))


def test_the_second_illegal_move_closes_with_the_result() -> None:
    """7.5.5: White's second illegal move (a press upheld, then the knight f3-f5): the limit is noted and the
    arbiter declares 0-1. The illegal move's finding goes out resolved with the result, once; a second SetResult
    (the arbiter sends it again) changes nothing."""
    engine, _ = _play("L", f"{_PRESS} · 1000 ARB uphold CLOCK_PRESS_NO_MOVE · {_knight(3000)}")
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.OPEN and illegal.suggestion.result == "0-1"
    outs = _set_result(engine, 20.0, "0-1", "rules infraction")
    (update,) = _updates(outs, illegal)
    assert update.status is Status.RESOLVED
    assert update.ruling == ("game ended by the arbiter: 0-1 (rules infraction); the illegal move is not part of "
                             "the game (7.5.5)")
    assert illegal.id not in _open_on_the_wire(engine, outs, 20.0)
    assert [m.uci for m in engine.state.moves] == ["e2e4", "e7e5", "g1f3", "b8c6"]
    again = _set_result(engine, 21.0, "0-1", "rules infraction")
    assert _updates(again, illegal) == []
    assert _final(engine, illegal).ruling == update.ruling


@pytest.mark.parametrize(("result", "termination"), [("1/2-1/2", "agreement"), ("1-0", "resignation")])
def test_an_illegal_move_never_put_right_closes_with_the_result(result: str, termination: str) -> None:
    """The first illegal move (the knight f3-f5, pressed), the game ended before anything was put back (a draw
    agreed, Black resigns): closed with the result, once, the illegal move out of the record (the game ended
    before it was replaced)."""
    engine, _ = _play("L", _knight(0))
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.OPEN
    outs = _set_result(engine, 10.0, result, termination)
    (update,) = _updates(outs, illegal)
    assert update.status is Status.RESOLVED and update.ruling is not None
    assert update.ruling.startswith(f"game ended by the arbiter: {result} ({termination})")
    assert illegal.id not in _open_on_the_wire(engine, outs, 10.0)


def test_an_illegal_move_found_later_still_open_closes_with_the_result() -> None:
    """The knight f3-f5 pressed, Black replies, White plays on (the cycle closed when play went on; the finding
    stays open: it may still be found during the game, 7.5.1). The game ends: closed with the result, and the
    record keeps the moves played (nothing to retract: the illegal move stood until the end)."""
    engine, _ = _play("L", f"{_knight(0)} · 1500 L g8 · 1800 P f6 bN · 2100 C B · 3000 L f1 · 3300 P c4 wB · "
                           "3700 C W")
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.OPEN
    moves = [m.uci for m in engine.state.moves]
    outs = _set_result(engine, 15.0, "1-0", "resignation")
    (update,) = _updates(outs, illegal)
    assert update.status is Status.RESOLVED and update.ruling == "game ended by the arbiter: 1-0 (resignation)"
    assert [m.uci for m in engine.state.moves] == moves


def test_a_reinstated_illegal_move_is_not_reopened_by_the_result() -> None:
    """Guard: an illegal move put right by the arbiter (resolved by the board) keeps its ruling at the result."""
    engine, _ = _play("L", f"{_knight(0)} · 1500 PAUSE · 2000 L f5 · 2300 P f3 wN · 2600 LEVERX W · 3000 RESUME · "
                           "4000 L f1 · 4300 P c4 wB · 4700 C W")
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.RESOLVED
    outs = _set_result(engine, 15.0, "1/2-1/2", "agreement")
    assert _updates(outs, illegal) == []
    assert _final(engine, illegal).ruling == illegal.ruling


@pytest.mark.parametrize(("edition", "tc"), [(2018, "900+10"), (2023, "900+10"), (2023, "180+2"),
                                             (2014, "900+10"), (2009, "1200+0")])
def test_an_illegal_move_that_stands_is_closed_once(edition: int, tc: str) -> None:
    """R22 (A.4.2 / A.5.2; E2014 A.4 b; E2009 A.4 c): the knight f3-f5 pressed, no claim, Black's reply made:
    ILLEGAL_MOVE_STANDS is noted and the illegal move's finding is resolved with that ruling, once (before: it
    stayed open, a card asking for an action the Laws no longer allow the arbiter)."""
    engine, outs = _play("L", f"{_knight(0)} · 1500 L g8 · 1800 P f6 bN · 2100 C B · 3000 L f1 · 3300 P c4 wB · "
                              "3700 C W", edition=edition, tc=tc, regime=Regime.OTHERWISE)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    (stands,) = _found(engine, "ILLEGAL_MOVE_STANDS")
    assert stands.incident == illegal.id and stands.status is Status.NOTED
    updates = _updates(outs, illegal)
    assert [u.status for u in updates] == [Status.RESOLVED]
    assert updates[0].ruling == ("the illegal move stands: no claim or ruling before the opponent's move was made "
                                 f"({', '.join(stands.articles)})")
    assert illegal.id not in engine.state.open_irregularities
    # the game ends later: the finding is not touched again
    assert _updates(_set_result(engine, 20.0, "1-0", "resignation"), illegal) == []


# ------------------------------------------------------------------ every finding of the game closes with the result

def _strong(engine: Engine) -> list[Irregularity]:
    return [i for i in engine.irregularities if i.severity is not Severity.INFO]


@pytest.mark.parametrize("name", ["T08", "T04", "T30", "T50", "T08-E2014"])
def test_every_open_finding_closes_with_the_result(name: str) -> None:
    """3.8 and the contract's lifecycle: at the arbiter's result every finding of the game still open or
    acknowledged is republished resolved, once, with the result as its ruling (an incident's primary with it, the
    findings that joined it ``resolved with`` the primary), whatever its severity: a suspected two-handed move
    (T08: TWO_HANDS_SUSPECTED + TWO_HANDS_AT_PRESS, warnings until confirmed), a rook-first castling changed (T04),
    a press with a piece in hand (T30), a takeback by agreement (T50). No finding is raised by the result (no new
    alert), the notes stay noted, a second result changes nothing. Before, only illegal-move findings closed: the
    warnings stayed open, the tablet showed a finished game's cards as needing attention."""
    r = run(SCENARIOS[name])
    engine = r.engine
    notes = {i.id: i for i in engine.irregularities if i.severity is Severity.INFO}
    waiting = [i for i in _strong(engine) if i.status in (Status.OPEN, Status.ACKNOWLEDGED)]
    assert waiting, "the scenario leaves findings open"
    outs = _set_result(engine, 60.0, "1-0", "resignation")
    assert [o for o in outs if isinstance(o, IrregularityRaised)] == []
    ruling = "game ended by the arbiter: 1-0 (resignation)"
    for irr in waiting:
        (update,) = _updates(outs, irr)
        assert update.status is Status.RESOLVED
        primary = irr.incident if irr.incident is not None and irr.incident in {w.id for w in waiting} else None
        assert update.ruling == (ruling if primary is None else f"resolved with {primary}: {ruling}")
    assert engine.state.open_irregularities == ()
    assert _open_on_the_wire(engine, outs, 60.0) == []
    assert {i.id: i for i in engine.irregularities if i.severity is Severity.INFO} == notes
    again = _set_result(engine, 61.0, "1-0", "resignation")
    assert [o for o in again if isinstance(o, (IrregularityRaised, IrregularityUpdated))] == []


def test_an_acknowledged_warning_closes_with_the_result() -> None:
    """Acknowledged on the tablet (seen, not ruled on) is still waiting for the arbiter: closed by the result."""
    r = run(SCENARIOS["T08"])
    engine = r.engine
    (suspected,) = [i for i in engine.irregularities if i.code == "TWO_HANDS_SUSPECTED"]
    engine.feed(Acknowledge(at=50.0, irregularity_id=suspected.id))
    assert _final(engine, suspected).status is Status.ACKNOWLEDGED
    outs = _set_result(engine, 60.0, "1/2-1/2", "agreement")
    (update,) = _updates(outs, suspected)
    assert update.status is Status.RESOLVED and update.ruling == "game ended by the arbiter: 1/2-1/2 (agreement)"
    assert engine.state.open_irregularities == ()


def test_a_ruled_warning_keeps_its_ruling_at_the_result() -> None:
    """Guard: a warning the arbiter already ruled on (the two hands dismissed) is not touched by the result."""
    r = run(SCENARIOS["T08"])
    engine = r.engine
    (at_press,) = [i for i in engine.irregularities if i.code == "TWO_HANDS_AT_PRESS"]
    engine.feed(Resolve(at=50.0, irregularity_id=at_press.id, ruling="dismissed", accept=False))
    before = {i.id: i for i in engine.irregularities}
    outs = _set_result(engine, 60.0, "1-0", "resignation")
    assert [o for o in outs if isinstance(o, (IrregularityRaised, IrregularityUpdated))] == []
    assert {i.id: i for i in engine.irregularities} == before


def test_findings_withheld_at_the_result_are_never_published() -> None:
    """An illegal move not noticed (Bf1-c4 through the pawn, pressed), Black replies; White then lifts the knight
    and the h-pawn far apart inside one scan (TWO_HANDS_SUSPECTED, withheld: the hands might be putting the
    position back). The arbiter enters the result before the hands say anything more: nothing is put back any more,
    so the withheld suspicion is never published. Before, it went out 6 s after the result, an open card (a new
    alert) for a game that was over."""
    rig = Rig(None, edition=2023, tc="900+10", seconds=900.0)
    rig.t = 0.0
    rig.lift(chess.F1)
    rig.t += 0.4
    rig.place(chess.C4, chess.Piece(chess.BISHOP, chess.WHITE))
    rig.t += 0.6
    rig.press(chess.WHITE)
    rig.settle(2.0)
    rig.board = chess.Board("rnbqkbnr/pppppppp/8/8/2B5/8/PPPPPPPP/RNBQK1NR b KQkq - 1 1")
    rig.play(chess.Move.from_uci("e7e5"))
    rig.t += 1.0
    rig.lift(chess.B1)
    rig.lift(chess.H2, at=rig.t + 0.03)
    rig.t += 0.4
    rig.place(chess.C3, chess.Piece(chess.KNIGHT, chess.WHITE))
    rig.place(chess.H2, chess.Piece(chess.PAWN, chess.WHITE), at=rig.t + 0.03)
    rig.t += 0.8
    assert [i.code for i in rig.engine.correction.withheld] == ["TWO_HANDS_SUSPECTED"]  # (the case is reached)
    start = len(rig.outs)
    rig.feed(SetResult(at=rig.t, result="1-0", termination="resignation"))
    rig.settle(10.0)
    after = rig.outs[start:]
    assert [o.irregularity.code for o in after if isinstance(o, IrregularityRaised)
            and o.irregularity.severity is not Severity.INFO] == []
    assert rig.engine.state.open_irregularities == ()
