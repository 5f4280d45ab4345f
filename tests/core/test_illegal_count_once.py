"""One move, one count (rules-spec §3.5: every illegal-move-class outcome increments ``illegal_count[S]`` once per
move, even if several illegal-move-class facts coincide; Arbiters' Manual: two irregularities in one move count as
one); a dismissal uncounts what it closes; ILLEGAL_MOVE_LIMIT_REACHED follows every counted illegal move.

*The same move* (7.5.5: "after the action taken under 7.5.1-7.5.4 for the first completed illegal move ... for the
second"): the same player's illegal-move-class findings from the same position (the opponent has not moved since),
with no action of the arbiter in between (a ruling on one of them, the position reinstated, the clock paused: the
arbiter at the board). A press without a move (7.5.3, E2018+) handed back by the opponent, then the illegal move
pressed from the same position, is one move; the same after the arbiter restarted the clock is the second.

Timings are drawn from seeded generators (gaps above ``T_bounce``/``T_settle``), per edition and category.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import chess
import pytest

from boardd.core.contract import Publisher, topic_kind
from boardd.core.engine import Engine
from boardd.core.events import GameInfo, Reinstate, Resolve
from boardd.core.outputs import Irregularity, IrregularityRaised, Output, StateChanged, Status
from boardd.core.settings import Regime, RulesConfig
from tests.core.test_correction_ruled import _two_knights_two_hands
from tests.core.test_illegal_count import _count, _found, _play
from tests.core.test_noclock_illegal import BN, OPENING, WN, _feed, _sq

_TC = "40/5400+30:1800+30"
#: (edition, time control, first offence's penalty in s) with presses of the illegal-move class (7.5.3, E2018+)
_E2018 = [(2018, _TC, 120), (2023, _TC, 120), (2018, "180+2", 60), (2023, "900+10", 60), (2023, "180+2", 60)]
_ALL = [(2009, _TC, 120), (2014, _TC, 120), (2014, "180+2", 60), *_E2018]
_SEEDS = range(3)


def _times(seed: int, n: int) -> list[int]:
    """*n* increasing times (ms) with gaps of 0.45-2.5 s (above T_bounce and T_settle)."""
    rng = random.Random(seed)
    out, t = [], rng.randint(0, 400)
    for _ in range(n):
        out.append(t)
        t += rng.randint(450, 2500)
    return out


def _press_then_illegal(seed: int) -> str:
    """White presses without a move, Black presses back, White moves Ng1-g3 (illegal) and presses."""
    a, b, c, d, e = _times(seed, 5)
    return f"{a} C W · {b} C B · {c} L g1 · {d} P g3 wN · {e} C W"


def _in_hand_then_illegal(seed: int) -> str:
    """White presses with the knight in hand, Black presses back, White puts it on g3 (illegal) and presses."""
    a, b, c, d, e = _times(seed, 5)
    return f"{a} L g1 · {b} C W · {c} C B · {d} P g3 wN · {e} C W"


def _press_twice(seed: int) -> str:
    """White presses without a move, Black presses back, White presses again (no move, or the knight in hand)."""
    a, b, c, d = _times(seed, 4)
    return f"{a} C W · {b} C B · {c} L g1 · {d} C W" if seed % 2 else f"{a} C W · {b} C B · {d} C W"


def _counted(engine_irr: list[Irregularity]) -> list[Irregularity]:
    return [i for i in engine_irr if i.severity.value == "illegal-move"]


# -- one move, one count ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
@pytest.mark.parametrize("scenario", [_press_then_illegal, _in_hand_then_illegal, _press_twice])
def test_a_press_and_an_illegal_move_of_the_same_move_count_once(scenario: Callable[[int], str], edition: int,
                                                                  tc: str, add_s: int, seed: int) -> None:
    """Both findings are White's, from the same position, no action of the arbiter between them: one illegal move.
    The first carries the first offence's penalty, the second none (the move's penalty is suggested once: see
    test_penalty_once.py), neither 0-1, no ILLEGAL_MOVE_LIMIT_REACHED, White's count 1.
    Before: counted twice, 0-1 and the limit noted."""
    engine, _ = _play("S1", scenario(seed), edition=edition, tc=tc)
    white = [i for i in _counted(list(engine.irregularities)) if i.side == chess.WHITE]
    assert len(white) == 2
    assert all(i.suggestion.result is None for i in white)
    assert [i.suggestion.add_to_opponent_s for i in white] == [add_s, None]
    assert f"counted once with {white[0].id}" in white[1].suggestion.text
    assert _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED") == []
    assert _count(engine) == (1, 0)


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
def test_after_the_arbiters_restart_the_illegal_move_is_the_second(edition: int, tc: str, add_s: int,
                                                                    seed: int) -> None:
    """Guard: the arbiter paused the clock and gave White his clock back (the action taken under 7.5.3): the
    illegal move from the same position is the second (7.5.5): loss, the limit noted, count 2."""
    a, b, c, d, e, f = _times(seed, 6)
    text = f"{a} C W · {b} PAUSE · {b + 100} LEVER W · {c} RESUME · {d} L g1 · {e} P g3 wN · {f} C W"
    engine, _ = _play("S1", text, edition=edition, tc=tc)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.suggestion.result == "0-1"
    assert [i.suggestion.result for i in _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")] == ["0-1"]
    assert _count(engine) == (2, 0)


@pytest.mark.parametrize("seed", _SEEDS)
def test_after_the_opponents_move_the_next_illegal_move_is_the_second(seed: int) -> None:
    """Guard: a press without a move handed back, White's move and Black's reply, then White's illegal move: two
    moves, two counts (the second loses)."""
    a, b, c, d, e, f, g, h = _times(seed, 8)
    text = (f"{a} C W · {b} C B · {c} L g1 · {d} P f3 wN · {e} C W · {f} L g8 · {g} P f6 bN · "
            f"{h} C B · {h + 500} L f3 · {h + 900} P f5 wN · {h + 1500} C W")
    engine, _ = _play("S1", text)
    assert _count(engine)[0] == 2
    assert [i.suggestion.result for i in _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")] == ["0-1"]


def test_one_of_the_same_moves_findings_dismissed_the_move_still_counts_once() -> None:
    """The press judged a distraction (dismissed on its own after the illegal move was ruled apart): the illegal
    move of the same move still counts, once."""
    engine, _ = _play("S1", f"{_press_then_illegal(0)} · 9000 ARB uphold ILLEGAL_MOVE · "
                            "9500 ARB dismiss CLOCK_PRESS_NO_MOVE 0")
    assert _count(engine) == (1, 0)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.suggestion.add_to_opponent_s == 120 and illegal.suggestion.result is None


# -- a dismissal uncounts what it closes ----------------------------------------------------------------------------


@pytest.mark.parametrize(("edition", "tc", "add_s"), _ALL)
def test_dismissing_the_incident_uncounts_the_illegal_move_closed_with_it(edition: int, tc: str, add_s: int) -> None:
    """White's press (the incident's primary: the tablet's card) and his illegal move folded under it; the arbiter
    dismisses the card: the illegal move is closed "resolved with" it, its cycle ends (the board put back is a
    takeback), and it is uncounted too (before: still counted). Upheld again, it counts again."""
    del add_s
    engine, _ = _play("S1", f"{_press_then_illegal(1)} · 9000 ARB dismiss CLOCK_PRESS_NO_MOVE 0",
                      edition=edition, tc=tc)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]
    assert illegal.incident == press.id and illegal.status is Status.RESOLVED
    assert illegal.ruling is not None and illegal.ruling.startswith(f"resolved with {press.id}")
    assert _count(engine) == (0, 0)
    engine.feed(Resolve(at=20.0, irregularity_id=press.id, ruling="upheld"))
    assert _count(engine) == (1, 0)


def test_the_two_hands_card_dismissed_uncounts_the_illegal_move_it_closes() -> None:
    """Both knights moved with two hands and pressed (R19): the illegal move joins the two hands' incident, whose
    card leads with the suspicion; its Dismiss closes the whole incident, the illegal move "resolved with"
    it (its cycle ends). White's count follows: 0 (before: 1)."""
    rig, illegal, at_press = _two_knights_two_hands()
    assert rig.engine.state.illegal_moves_white == 1
    rig.feed(Resolve(at=rig.t, irregularity_id=at_press.id, ruling="dismissed: not a two-handed move", accept=False))
    closed = next(i for i in rig.engine.irregularities if i.id == illegal.id)
    assert closed.status is Status.RESOLVED
    assert rig.engine.state.illegal_moves_white == 0


# -- ILLEGAL_MOVE_LIMIT_REACHED with every counted illegal move ------------------------------------------------------

_UPHELD = "{a} C W · {b} PAUSE · {b1} LEVER W · {c} RESUME · {c1} ARB uphold CLOCK_PRESS_NO_MOVE"
_THEN_BLACK = "{d} L g1 · {e} P f3 wN · {f} C W · {g} L g8 · {h} P f6 bN · {i} C B"


def _first_then(seed: int, second: str) -> str:
    a, b, c, d, e, f, g, h, i, j, k = _times(seed, 11)
    first = _UPHELD.format(a=a, b=b, b1=b + 100, c=c, c1=c + 100)
    moves = _THEN_BLACK.format(d=d, e=e, f=f, g=g, h=h, i=i)
    return f"{first} · {moves} · " + second.format(j=j, k=k)


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
@pytest.mark.parametrize("second", ["{j} C W", "{j} L f1 · {k} C W"])
def test_a_second_press_notes_the_limit(second: str, edition: int, tc: str, add_s: int, seed: int) -> None:
    """The second illegal move is a press without a move (or with a piece in hand, 7.5.3): 0-1 and
    ILLEGAL_MOVE_LIMIT_REACHED, like an illegal move judged at the press (before: the result, no note)."""
    del add_s
    engine, _ = _play("S1", _first_then(seed, second), edition=edition, tc=tc)
    latest = _counted(list(engine.irregularities))[-1]
    assert latest.code in ("CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND") and latest.suggestion.result == "0-1"
    (limit,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert limit.suggestion.result == "0-1" and limit.incident == (latest.incident or latest.id)
    assert _count(engine) == (2, 0)


def test_a_confirmed_two_handed_second_illegal_move_notes_the_limit() -> None:
    """E2023: a press without a move upheld, then a legal move made with two hands, confirmed (7.5.4): the second
    illegal move: the limit noted (before: the result only)."""
    engine, _ = _play("A", "0 C W · 500 PAUSE · 600 LEVER W · 700 RESUME · 800 ARB uphold CLOCK_PRESS_NO_MOVE · "
                           "2000 L e1 · 2030 L h1 · 2330 P g1 wK · 2360 P f1 wR · 2700 C W")
    (at_press,) = _found(engine, "TWO_HANDS_AT_PRESS")
    engine.feed(Resolve(at=9.0, irregularity_id=at_press.id, ruling="confirmed", accept=True))
    (limit,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert limit.suggestion.result == "0-1" and limit.status is Status.NOTED
    assert _count(engine) == (2, 0)


_OTHERWISE = [(2014, "900+10", 1), (2018, "900+10", 2), (2023, "900+10", 2), (2023, "180+2", 2)]


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "limit"), _OTHERWISE)
def test_in_the_otherwise_regime_the_claim_that_reaches_the_limit_notes_it(edition: int, tc: str, limit: int,
                                                                           seed: int) -> None:
    """R22: counted at the claim (the arbiter's ruling in the window). The claim that makes the count reach the
    limit (E2014 A.4 b: the first; E2018+ 7.5.5: the second) notes ILLEGAL_MOVE_LIMIT_REACHED (before: never)."""
    t = _times(seed, 4 * limit)
    parts = []
    for k in range(limit):
        a, b, c, d = t[4 * k: 4 * k + 4]
        parts += [f"{a} L f3 · {b} P f5 wN · {c} C W", f"{d} ARB claim ILLEGAL_MOVE",
                  f"{d + 100} ARB reinstate", f"{d + 200} PAUSE", f"{d + 300} LEVER W", f"{d + 500} L f5",
                  f"{d + 700} P f3 wN", f"{d + 900} RESUME"]
    engine, _ = _play("L", " · ".join(parts), edition=edition, tc=tc, regime=Regime.OTHERWISE)
    illegal = _found(engine, "ILLEGAL_MOVE")
    assert len(illegal) == limit and illegal[-1].suggestion.result == "0-1"
    (note,) = _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")
    assert note.suggestion.result == "0-1" and note.incident == (illegal[-1].incident or illegal[-1].id)


def test_without_a_clock_the_second_illegal_move_notes_the_limit() -> None:
    """Guard: judged when the opponent starts his reply (no press), the second illegal move notes the limit."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    outs = _feed(engine, [*OPENING, _sq(7.0, "g8", None), _sq(7.4, "g6", BN), _sq(10.0, "b1", None)], 10.5)
    outs += _feed(engine, [Reinstate(at=11.0, ply=3), _sq(12.0, "b1", WN), _sq(12.5, "g6", None),
                           _sq(12.8, "g8", BN), _sq(15.0, "g8", None), _sq(15.3, "g5", BN),
                           _sq(18.0, "b1", None), _sq(18.3, "c3", WN)], 40.0)
    notes = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)
             and o.irregularity.code == "ILLEGAL_MOVE_LIMIT_REACHED"]
    assert [n.suggestion.result for n in notes] == ["1-0"]
    assert engine.state.illegal_moves_black == 2


# -- what the tablet and the MQTT state carry -----------------------------------------------------------------------


def _wire(engine: Engine, outs: list[Output], at: float) -> list[dict[str, object]]:
    """The payloads the daemon publishes for *outs* (the contract's ``Publisher``), decoded from the wire."""
    publications = Publisher(board="b1").render(outs, engine.state, at=at)
    return [json.loads(p.payload_bytes()) for p in publications
            if (kind := topic_kind(p.topic)) is not None and kind[1] in ("state", "irregularity")]


def test_the_state_on_the_wire_counts_the_move_once_and_follows_the_dismissal() -> None:
    """E2023: the press and the illegal move of one move: the retained ``state`` says ``illegal_moves`` white 1
    (before: 2); the card dismissed, a ``state`` follows with 0 and the illegal move goes out ``resolved``."""
    engine, _ = _play("S1", _press_then_illegal(2))
    (state,) = [p for p in _wire(engine, [StateChanged(at=30.0)], 30.0) if "illegal_moves" in p]
    assert state["illegal_moves"] == {"white": 1, "black": 0}
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]
    outs = engine.feed(Resolve(at=31.0, irregularity_id=press.id, ruling="dismissed: not an irregularity",
                               accept=False))
    wire = _wire(engine, outs, 31.0)
    (state,) = [p for p in wire if "illegal_moves" in p]
    assert state["illegal_moves"] == {"white": 0, "black": 0}
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert [p["status"] for p in wire if p.get("id") == illegal.id] == ["resolved"]


_OTHERWISE_PRESS = [(2018, "900+10", 120), (2023, "900+10", 60), (2023, "180+2", 60), (2018, "180+2", 60)]


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "add_s"), _OTHERWISE_PRESS)
def test_in_the_otherwise_regime_a_claimed_press_counts(edition: int, tc: str, add_s: int, seed: int) -> None:
    """R22 covers every illegal-move-class act (7.5.1-7.5.4): a press without a move (or with the piece in hand,
    7.5.3) claimed before the opponent's next move counts, like an illegal move (before: never counted)."""
    a, b, c = _times(seed, 3)
    text = f"{a} C W · {b} ARB claim" if seed % 2 else f"{a} L g1 · {b} C W · {c} ARB claim"
    engine, _ = _play("S1", text, edition=edition, tc=tc, regime=Regime.OTHERWISE)
    (press,) = _counted(list(engine.irregularities))
    assert press.status is Status.RESOLVED and press.suggestion.add_to_opponent_s == add_s
    assert _count(engine) == (1, 0)


@pytest.mark.parametrize("seed", _SEEDS)
def test_in_the_otherwise_regime_an_unclaimed_press_stands(seed: int) -> None:
    """E2023 rapid A.5.2: no claim before Black's next move is made: ILLEGAL_MOVE_STANDS, not counted (before: no
    claim window was opened for a press, nothing said it stood)."""
    a, b, c, d, e, f, g, h = _times(seed, 8)
    text = (f"{a} C W · {b} C B · {c} L g1 · {d} P f3 wN · {e} C W · {f} L g8 · {g} P f6 bN · {h} C B")
    engine, _ = _play("S1", text, tc="900+10", regime=Regime.OTHERWISE)
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]
    (stands,) = _found(engine, "ILLEGAL_MOVE_STANDS")
    assert stands.incident == press.id and stands.side == chess.WHITE
    assert _count(engine) == (0, 0)
