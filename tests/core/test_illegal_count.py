"""The illegal-move count (7.5.5; E2009 7.4 b: the third) follows the arbiter's rulings.

rules-spec §6.1: ``n`` counts the *penalised* illegal-move-class events. A finding the arbiter dismisses (a press
he judges a distraction, Arbiters' Manual; a suspected illegal move that was a sensor fault) is no illegal move:
it is uncounted, the state's ``illegal_moves`` drop, and a later finding's penalty suggestion is the one of the
count given that ruling (republished when it was already out, its ILLEGAL_MOVE_LIMIT_REACHED withdrawn).
A press without a move that hands the clock back in the other player's incident (T50's takeback by agreement,
a press pressed back) is no illegal move of the presser.
"""

from __future__ import annotations

import chess
import pytest

from boardd.core.clock import TimeControl
from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, Resolve
from boardd.core.outputs import Irregularity, IrregularityUpdated, Output, Severity, StateChanged, Status
from boardd.core.settings import Regime, RulesConfig
from tests.core.scenario import POSITIONS, Arb, history_events, parse, start_clock
from tests.core.test_scenarios import SCENARIOS, _arb, run

_TC = "40/5400+30:1800+30"
#: White presses without a move; the arbiter restarts White's clock (paused, lever back, resumed)
_PRESS = "0 C W · 500 PAUSE · 600 LEVER W · 700 RESUME"
#: then 3.Bc4 Nf6: the press's incident is over (an illegal move now is an incident of its own)
_MOVES = "1000 L f1 · 1300 P c4 wB · 1600 C W · 2000 L g8 · 2300 P f6 bN · 2600 C B"
#: White's illegal knight move (f3-f5), reinstated by the arbiter, at +t ms
_KNIGHT = "{t} L f3 · {t3} P f5 wN · {t7} C W"
_REINSTATE = "{t} ARB reinstate · {t1} PAUSE · {t2} LEVER W · {t5} L f5 · {t7} P f3 wN · {t9} RESUME"


def _knight(t: int) -> str:
    return _KNIGHT.format(t=t, t3=t + 300, t7=t + 700)


def _reinstate(t: int) -> str:
    return _REINSTATE.format(t=t, t1=t + 100, t2=t + 200, t5=t + 500, t7=t + 700, t9=t + 900)


def _play(pos: str, text: str, *, edition: int = 2023, tc: str = _TC,
          regime: Regime = Regime.COMPETITION) -> tuple[Engine, list[Output]]:
    """Play *text* from position *pos*; ``ARB dismiss|uphold <CODE> [index]`` rules on that finding (the
    latest of that code by default): ``resolve`` with ``accept`` false (dismissed) or true."""
    fen, history = POSITIONS[pos]
    engine = Engine(RulesConfig(regime=regime), GameInfo(edition=edition, time_control=tc,
                                                         start_fen=None if history is not None else fen))
    turn = chess.Board(fen).turn
    t0 = -float(len(history.split()) if history else 0) - 12.0
    clock, reading = start_clock(chess.WHITE if history is not None else turn, t0,
                                 seconds=float(TimeControl.parse(tc).periods[0].seconds))
    events: list[Event | Arb] = [reading]
    if history:
        events.extend(history_events(history, clock, start=t0 + 0.5))
    events.extend(parse(text, clock))
    outs: list[Output] = []
    for ev in events:
        if isinstance(ev, Arb):
            outs += engine.advance(ev.at)
            words = ev.text.split()
            if words[0] in ("dismiss", "uphold"):
                found = [i for i in engine.irregularities if i.code == words[1]]
                target = found[int(words[2]) if len(words) > 2 else -1]
                accept = words[0] == "uphold"
                event: Event = Resolve(at=ev.at, irregularity_id=target.id, accept=accept,
                                       ruling="upheld" if accept else "dismissed: no illegal move")
            else:
                event = _arb(engine, ev)
            outs += engine.feed(event)
        else:
            outs += engine.feed(ev)
    last = events[-1].at
    outs += engine.advance(last + 5.0)
    return engine, outs


def _found(engine: Engine, code: str) -> list[Irregularity]:
    return [i for i in engine.irregularities if i.code == code]


def _count(engine: Engine) -> tuple[int, int]:
    return engine.state.illegal_moves_white, engine.state.illegal_moves_black


def test_a_press_dismissed_as_a_distraction_does_not_make_the_next_illegal_move_the_second() -> None:
    """White presses without a move; the arbiter judges it a distraction (dismissed). White's illegal move that
    follows is his first: +2:00 to Black, no ILLEGAL_MOVE_LIMIT_REACHED, White's count 1 (before: 0-1)."""
    engine, _ = _play("L", f"{_PRESS} · 1000 ARB dismiss CLOCK_PRESS_NO_MOVE · {_knight(3000)}")
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.suggestion.result is None and illegal.suggestion.add_to_opponent_s == 120
    assert "+2:00 to Black" in illegal.suggestion.text
    assert _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED") == []
    assert _count(engine) == (1, 0)


def test_a_press_upheld_still_counts() -> None:
    """Guard: a press the arbiter upholds (accept) counts; the next illegal move is the second: 0-1."""
    engine, _ = _play("L", f"{_PRESS} · 1000 ARB uphold CLOCK_PRESS_NO_MOVE · {_knight(3000)}")
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.suggestion.result == "0-1"
    assert [i.suggestion.result for i in _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")] == ["0-1"]
    assert _count(engine) == (2, 0)


def test_a_dismissed_illegal_move_is_uncounted_in_the_state() -> None:
    """A suspected illegal move dismissed (a sensor fault, say): White's count goes back to 0, and the state's
    change is published."""
    engine, outs = _play("L", f"{_knight(0)} · 1500 ARB dismiss ILLEGAL_MOVE")
    assert _count(engine) == (0, 0)
    assert any(isinstance(o, StateChanged) and o.at == 1.5 for o in outs)
    assert _found(engine, "ILLEGAL_MOVE")[0].status is Status.RESOLVED


def test_a_dismissal_after_the_second_illegal_move_republishes_its_suggestion() -> None:
    """The second illegal move is out with "0-1" and ILLEGAL_MOVE_LIMIT_REACHED when the arbiter dismisses the
    first (the press): the second is republished with the first offence's +2:00, the limit note withdrawn, the
    count 1. Upheld again (the arbiter reverses his ruling), it is the second again."""
    text = f"{_PRESS} · {_MOVES} · {_knight(3000)} · 5000 ARB dismiss CLOCK_PRESS_NO_MOVE"
    engine, outs = _play("L", text)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.OPEN
    assert illegal.suggestion.result is None and illegal.suggestion.add_to_opponent_s == 120
    assert "+2:00 to Black" in illegal.suggestion.text and "0-1" not in illegal.suggestion.text
    updated = [o.irregularity for o in outs if isinstance(o, IrregularityUpdated) and o.irregularity.id == illegal.id]
    assert updated and updated[-1].suggestion.result is None
    (limit,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert limit.status is Status.RESOLVED and limit.ruling is not None and limit.ruling.startswith("withdrawn")
    assert _count(engine) == (1, 0)
    # the arbiter reverses his dismissal: the press counts again, the open illegal move is the second
    engine.feed(Resolve(at=9.0, irregularity_id=_found(engine, "CLOCK_PRESS_NO_MOVE")[0].id, ruling="upheld"))
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.suggestion.result == "0-1" and "2nd illegal move" in illegal.suggestion.text
    (limit,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert limit.status is Status.NOTED and limit.suggestion.result == "0-1"
    assert _count(engine) == (2, 0)


def test_the_limit_note_of_a_dismissed_illegal_move_is_withdrawn() -> None:
    """The second illegal move itself dismissed (a sensor fault): its ILLEGAL_MOVE_LIMIT_REACHED is withdrawn and
    White's count is back to 1; upheld again, the note is noted again."""
    text = f"{_PRESS} · 800 ARB uphold CLOCK_PRESS_NO_MOVE · {_MOVES} · {_knight(3000)} · 5000 ARB dismiss ILLEGAL_MOVE"
    engine, _ = _play("L", text)
    (limit,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert limit.status is Status.RESOLVED and limit.ruling is not None and limit.ruling.startswith("withdrawn")
    assert _count(engine) == (1, 0)
    engine.feed(Resolve(at=9.0, irregularity_id=_found(engine, "ILLEGAL_MOVE")[0].id, ruling="upheld"))
    (limit,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert limit.status is Status.NOTED and limit.suggestion.result == "0-1"
    assert _count(engine) == (2, 0)


def test_a_ruled_later_finding_keeps_the_suggestion_it_was_ruled_on() -> None:
    """The second illegal move already ruled on (0-1, resolved) keeps that suggestion when the first is dismissed
    afterwards; only the count changes."""
    text = (f"{_PRESS} · {_MOVES} · {_knight(3000)} · 4500 ARB uphold ILLEGAL_MOVE · "
            "5000 ARB dismiss CLOCK_PRESS_NO_MOVE")
    engine, _ = _play("L", text)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.suggestion.result == "0-1"
    assert _count(engine) == (1, 0)


# Per edition and category: the first illegal move dismissed, the second is the first offence (E2009: the third
# illegal move is the second offence, +2:00, not the loss).
_EDITIONS = [
    (2009, _TC, 3, 120), (2014, _TC, 2, 120), (2018, _TC, 2, 120), (2023, _TC, 2, 120),
    (2014, "180+2", 2, 60), (2018, "180+2", 2, 60), (2023, "900+10", 2, 60), (2023, "180+2", 2, 60),
]


@pytest.mark.parametrize(("edition", "tc", "limit", "add_s"), _EDITIONS)
def test_per_edition_a_dismissed_illegal_move_is_not_one_of_the_limit(edition: int, tc: str, limit: int,
                                                                       add_s: int) -> None:
    parts = []
    t = 0
    for _ in range(limit - 1):
        parts += [_knight(t), _reinstate(t + 1500)]
        t += 4000
    parts += [f"{t} ARB dismiss ILLEGAL_MOVE 0", _knight(t + 1000)]
    engine, _ = _play("L", " · ".join(parts), edition=edition, tc=tc)
    found = _found(engine, "ILLEGAL_MOVE")
    assert len(found) == limit
    assert found[-1].suggestion.result is None and found[-1].suggestion.add_to_opponent_s == add_s
    assert _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED") == []
    assert _count(engine) == (limit - 1, 0)
    # without the dismissal the same game reaches the limit
    undismissed = " · ".join(p for p in parts if "dismiss" not in p)
    engine, _ = _play("L", undismissed, edition=edition, tc=tc)
    assert _found(engine, "ILLEGAL_MOVE")[-1].suggestion.result == "0-1"
    assert _count(engine) == (limit, 0)


def test_t50_the_press_in_a_takeback_by_agreement_is_no_illegal_move_of_the_presser() -> None:
    """T50: White takes 2.Nf3 back on Black's time, Black presses to give him the clock back. The press follows
    from White's incident (one ruling, on the takeback: 2.Nf3 stands, 4.7): it is no press of Black's own to
    penalise (7.5.3 is a player passing the move without making one). Not counted, no penalty suggested (before:
    +2:00 to White, the player who took his move back), a warning folded under the incident."""
    r = run(SCENARIOS["T50"])
    (press,) = _found(r.engine, "CLOCK_PRESS_NO_MOVE")
    assert press.side == chess.BLACK and press.incident is not None
    assert press.severity is Severity.WARNING
    assert press.suggestion.add_to_opponent_s is None and press.suggestion.result is None
    assert press.suggestion.reinstate_ply is None
    assert _count(r.engine) == (0, 0)


@pytest.mark.parametrize("text", ["0 C W · 600 C B · 1500 L g1 · 1800 P f3 wN · 2100 C W",
                                  "0 L g1 · 400 C W · 900 C B · 1400 P f3 wN · 1800 C W"])
def test_a_press_handed_back_counts_for_the_player_who_pressed_first_only(text: str) -> None:
    """White presses without a move (or with the knight in hand), Black presses back: White's press is his
    illegal move (7.5.3, counted); Black's is the clock handed back in White's incident, not counted."""
    engine, _ = _play("S1", text)
    black = [i for i in engine.irregularities if i.side == chess.BLACK]
    assert [(i.code, i.severity) for i in black] == [("CLOCK_PRESS_NO_MOVE", Severity.WARNING)]
    assert _count(engine) == (1, 0)


def test_the_press_of_the_other_player_in_no_incident_still_counts() -> None:
    """Guard: Black's press without a move of his own (not handing back anything) is his illegal move."""
    engine, _ = _play("L2", "0 C B")
    (press,) = _found(engine, "CLOCK_PRESS_NO_MOVE")
    assert press.severity is Severity.ILLEGAL_MOVE and press.suggestion.add_to_opponent_s == 120
    assert _count(engine) == (0, 1)
