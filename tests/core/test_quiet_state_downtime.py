"""The quiet-state oracle (tests/core/test_quiet_state.py) on recovery after downtime.

The quiet path of a square change (``Engine.quiet``) must give what the full path gives also around a restart, a
board link outage and the board's own log, stepwise (the searches probed and done in steps) or not: after every
call the outputs, the next deadline and the whole state are equal. (The merge of the stepwise searches with the
fast paths of issue 12 needed three fixes in ``Engine.feed`` / ``_feed_square`` / ``_feed_rest``; this is the
test that keeps them together.)
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import GameInfo
from boardd.core.outputs import Output
from boardd.core.settings import RulesConfig
from tests.core.test_downtime_no_clock import NoClock
from tests.core.test_quiet_state import snapshot
from tests.core.test_recovery_steps import Call, _eeprom_restart, _outage, _restart


def _streams() -> list[tuple[str, tuple[Engine, list[Call]], tuple[Engine, list[Call]]]]:
    made = []
    for start, plies, after in ((10, 6, 3), (20, 9, 2), (4, 5, 2)):
        made.append((f"restart-{start}-{plies}", _restart(start, plies, after), _restart(start, plies, after)))
        for clock_at in ("own-link", "jack"):
            made.append((f"outage-{clock_at}-{start}-{plies}", _outage(start, plies, after, clock_at),
                         _outage(start, plies, after, clock_at)))
    for start, plies in ((4, 8), (10, 10)):
        made.append((f"eeprom-{start}-{plies}", _eeprom_restart(start, plies, 2), _eeprom_restart(start, plies, 2)))
    return made


_STREAMS = _streams()


def _drain(engine: Engine) -> list[Output]:
    outs: list[Output] = []
    while engine.busy:
        outs += engine.work()
    return outs


@pytest.mark.parametrize("stepwise", [False, True])
@pytest.mark.parametrize(("name", "a", "b"), _STREAMS, ids=[s[0] for s in _STREAMS])
def test_quiet_equals_full_around_downtime(name: str, a: tuple[Engine, list[Call]], b: tuple[Engine, list[Call]],
                                           stepwise: bool) -> None:
    (quiet, calls), (full, _) = a, b
    full.quiet = False
    assert quiet.quiet
    for engine in (quiet, full):
        engine.stepwise = stepwise
        engine.downtime.step_nodes = 20
    squares = 0
    for number, call in enumerate(calls):
        if isinstance(call, float):
            got_q, got_f = quiet.advance(call), full.advance(call)
        else:
            squares += type(call).__name__ == "SquareChanged"
            got_q, got_f = quiet.feed(call), full.feed(call)
        got_q += _drain(quiet)
        got_f += _drain(full)
        assert got_q == got_f, f"{name}: outputs differ at call {number} {call!r}"
        assert quiet.next_deadline() == full.next_deadline(), f"{name}: next deadline differs at call {number}"
        assert snapshot(quiet) == snapshot(full), f"{name}: state differs at call {number}"
    assert squares >= 4, "the stream has square changes for the quiet path to take"
    assert quiet.state == full.state


def _noclock_calls(restart: bool, missed: tuple[str, ...], then: tuple[str, ...]) -> list[Call]:
    """The calls of tests/core/test_downtime_no_clock.py's no-clock gap (the first move after it settles who had
    the move: ``Downtime.after_gap``), recorded as that rig feeds them."""
    start = chess.Board()
    work = start.copy()
    moves = [work.push_san(s) for s in (*missed, *then)]
    calls: list[Call] = []
    feed, advance = Engine.feed, Engine.advance
    try:
        Engine.feed = lambda self, event: calls.append(event) or feed(self, event)  # type: ignore[method-assign]
        Engine.advance = lambda self, now: calls.append(now) or advance(self, now)  # type: ignore[method-assign]
        r = NoClock(start, random.Random(3), restart=restart)
        r.down()
        r.play(moves[:len(missed)], seen=False)
        r.up()
        r.play(moves[len(missed):], seen=True)
        r.finish()
    finally:
        Engine.feed, Engine.advance = feed, advance  # type: ignore[method-assign]
    return calls


@pytest.mark.parametrize("stepwise", [False, True])
@pytest.mark.parametrize("restart", [True, False])
@pytest.mark.parametrize(("missed", "then"), [(("e4", "Nf6"), ("d4", "e6", "c4")),
                                              (("e3", "Nf6", "e4"), ("e6", "d4", "d5"))])
def test_quiet_equals_full_around_a_no_clock_gap(restart: bool, missed: tuple[str, ...], then: tuple[str, ...],
                                                  stepwise: bool) -> None:
    calls = _noclock_calls(restart, missed, then)
    game = GameInfo(start_fen="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", time_control="5400+30")
    quiet = Engine(RulesConfig(clock_expected=False), game)
    full = Engine(RulesConfig(clock_expected=False), game)
    test_quiet_equals_full_around_downtime(f"noclock-{restart}-{len(missed)}", (quiet, calls), (full, calls), stepwise)
    assert any(m.recovered == "search" for m in full.state.moves), "the gap was filled by the move after it"
