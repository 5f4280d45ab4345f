"""One move, one penalty (rules-spec §3.5, §6; Arbiters' Manual: two irregularities in one move count as one).

count2 made a player's illegal-move-class findings of one move count once; this makes the *suggestion* follow the
count: the move's 7.5.5 penalty (``add_to_opponent_s``, or the loss at the limit) is suggested on one finding of
the move, its first still counted (the incident's card on the tablet), and the later ones carry none, their text
naming the finding that carries it. An arbiter who applies every card's suggestion gives the penalty once. If the
carrier is dismissed, the penalty moves to the finding still counted; a reopen of the dismissal moves it back.
ILLEGAL_MOVE_LIMIT_REACHED: once per move.

Editions 2018/2023 (7.5.3 makes the press without a move an illegal move), standard, rapid and blitz; timings from
seeded generators (gaps above ``T_bounce``/``T_settle``).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import chess
import pytest

from boardd.core.contract import Publisher, topic_kind
from boardd.core.engine import Engine
from boardd.core.events import Reopen, Resolve
from boardd.core.outputs import Irregularity, Output, Status
from boardd.core.settings import Regime
from tests.core.test_illegal_count import _count, _found, _play
from tests.core.test_illegal_count_once import (
    _E2018,
    _in_hand_then_illegal,
    _press_then_illegal,
    _press_twice,
    _times,
)

_SEEDS = range(4)
_SCENARIOS = [_press_then_illegal, _in_hand_then_illegal, _press_twice]


def _white_counted(engine: Engine) -> list[Irregularity]:
    return [i for i in engine.irregularities if i.severity.value == "illegal-move" and i.side == chess.WHITE]


def _carriers(findings: list[Irregularity]) -> list[Irregularity]:
    return [i for i in findings if i.suggestion.add_to_opponent_s is not None or i.suggestion.result is not None]


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
@pytest.mark.parametrize("scenario", _SCENARIOS)
def test_the_moves_penalty_is_suggested_once(scenario: Callable[[int], str], edition: int, tc: str, add_s: int,
                                             seed: int) -> None:
    """One move, two findings: the first carries the penalty, the second none and names the first; both still
    reinstate (7.5.1). Applying every suggestion gives add_s once (before: twice)."""
    engine, _ = _play("S1", scenario(seed), edition=edition, tc=tc)
    first, later = _white_counted(engine)
    assert _carriers([first, later]) == [first]
    assert first.suggestion.add_to_opponent_s == add_s and first.suggestion.result is None
    assert later.suggestion.add_to_opponent_s is None and later.suggestion.result is None
    assert f"the move's penalty is suggested on {first.id}" in later.suggestion.text
    assert later.suggestion.reinstate_ply is not None
    assert sum(i.suggestion.add_to_opponent_s or 0 for i in (first, later)) == add_s
    assert _count(engine) == (1, 0)


def _second_move(seed: int) -> str:
    """A press upheld after the arbiter restarted the clock (White's first illegal move), 2.Nf3 Nf6, then White's
    second: a press without a move handed back and the knight f3-f5 (illegal) pressed, one move."""
    a, b, c, d, e, f, g, h, i, j, k, m, n, o = _times(seed, 14)
    return (f"{a} C W · {b} PAUSE · {b + 100} LEVER W · {c} RESUME · {c + 100} ARB uphold CLOCK_PRESS_NO_MOVE · "
            f"{d} L g1 · {e} P f3 wN · {f} C W · {g} L g8 · {h} P f6 bN · {i} C B · "
            f"{j} C W · {k} C B · {m} L f3 · {n} P f5 wN · {o} C W")


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
def test_at_the_limit_the_loss_is_suggested_once(edition: int, tc: str, add_s: int, seed: int) -> None:
    """The second illegal move of two findings: one carries 0-1, the other no result; one limit note (before: 0-1
    on both)."""
    del add_s
    engine, _ = _play("S1", _second_move(seed), edition=edition, tc=tc)
    move = _white_counted(engine)[1:]
    assert len(move) == 2
    assert [i.suggestion.result for i in move] == ["0-1", None]
    assert move[1].suggestion.add_to_opponent_s is None
    assert f"suggested on {move[0].id}" in move[1].suggestion.text
    assert [n.suggestion.result for n in _found(engine, "ILLEGAL_MOVE_LIMIT_REACHED")] == ["0-1"]
    assert _count(engine) == (2, 0)


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc", "add_s"), _E2018)
def test_the_carrier_dismissed_the_penalty_moves_and_a_reopen_moves_it_back(edition: int, tc: str, add_s: int,
                                                                             seed: int) -> None:
    """The illegal move upheld (its card said: penalty on the press), then the press dismissed on its own (a
    distraction): the penalty moves to the illegal move, still counted. The dismissal taken back (cmd/reopen): the
    press carries it again, the illegal move none (before: the penalty stayed on the illegal move too)."""
    engine, _ = _play("S1", f"{_press_then_illegal(seed)} · 20000 ARB uphold ILLEGAL_MOVE · "
                            "20500 ARB dismiss CLOCK_PRESS_NO_MOVE 0", edition=edition, tc=tc)
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert press.status is Status.RESOLVED and _count(engine) == (1, 0)
    assert illegal.suggestion.add_to_opponent_s == add_s and "counted once" not in illegal.suggestion.text
    engine.feed(Reopen(at=60.0, irregularity_id=press.id))
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert press.status is Status.OPEN and _count(engine) == (1, 0)
    assert press.suggestion.add_to_opponent_s == add_s
    assert illegal.suggestion.add_to_opponent_s is None
    assert f"suggested on {press.id}" in illegal.suggestion.text


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize(("edition", "tc"), [(2018, "900+10"), (2023, "900+10"), (2023, "180+2")])
def test_in_the_otherwise_regime_both_claimed_the_penalty_is_suggested_once(edition: int, tc: str,
                                                                           seed: int) -> None:
    """R22: the press and the illegal move of one move, both claimed in the window: counted once, the penalty on
    the first claimed only (before: on both)."""
    engine, _ = _play("S1", _press_then_illegal(seed), edition=edition, tc=tc, regime=Regime.OTHERWISE)
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    for at, ident in ((40.0, press.id), (41.0, illegal.id)):
        engine.feed(Resolve(at=at, irregularity_id=ident, ruling="claim by the opponent", accept=True, claim=True))
    press = _found(engine, "CLOCK_PRESS_NO_MOVE")[0]
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert _count(engine) == (1, 0)
    assert _carriers([press, illegal]) == [press]
    assert f"suggested on {press.id}" in illegal.suggestion.text


def _wire(engine: Engine, outs: list[Output], at: float) -> list[dict[str, object]]:
    publications = Publisher(board="b1").render(outs, engine.state, at=at)
    return [json.loads(p.payload_bytes()) for p in publications
            if (kind := topic_kind(p.topic)) is not None and kind[1] == "irregularity"]


@pytest.mark.parametrize("seed", _SEEDS)
def test_the_irregularity_payload_carries_the_penalty_once(seed: int) -> None:
    """On the wire (what the tablet shows: ``+N s to the opponent`` from ``add_to_opponent_s``): the later
    finding's suggestion has ``add_to_opponent_s`` and ``result`` null and its text names the carrier."""
    engine, outs = _play("S1", _press_then_illegal(seed), edition=2023)
    first, later = _white_counted(engine)
    wire = {p["id"]: p for p in _wire(engine, outs, 60.0)}
    sug_first = wire[first.id]["suggestion"]
    sug_later = wire[later.id]["suggestion"]
    assert isinstance(sug_first, dict) and isinstance(sug_later, dict)
    assert sug_first["add_to_opponent_s"] == 120
    assert sug_later["add_to_opponent_s"] is None and sug_later["result"] is None
    assert first.id in str(sug_later["text"])
