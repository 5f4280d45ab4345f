"""The state carries the full open findings (late joiners: a tablet started mid-round)."""

from __future__ import annotations

import chess

from boardd.core.contract import Publisher, validate_payload
from boardd.core.engine import Engine
from boardd.core.events import Resolve
from tests.core.scenario import parse, start_clock


def test_open_findings_are_in_the_state_until_resolved() -> None:
    engine = Engine()
    clock, first = start_clock(chess.WHITE, -1.0)
    engine.feed(first)
    for event in parse("0 C W", clock):
        engine.feed(event)
    engine.advance(1.0)
    state = engine.state
    details = {irr.id: irr for irr in state.open_irregularity_details}
    assert tuple(details) == state.open_irregularities
    assert "CLOCK_PRESS_NO_MOVE" in {irr.code for irr in details.values()}

    publications = Publisher(board="t1").render([], state, at=1.0)
    assert publications == []  # nothing to say without outputs
    snapshot = Publisher(board="t1").snapshot(state, at=1.0)
    payload = next(p.payload for p in snapshot if p.topic.endswith("/state"))
    assert isinstance(payload, dict)
    assert validate_payload("state", payload) == []
    assert {i["id"] for i in payload["irregularities"]} == set(state.open_irregularities)

    press_id = next(i for i, irr in details.items() if irr.code == "CLOCK_PRESS_NO_MOVE")
    engine.feed(Resolve(at=2.0, irregularity_id=press_id, ruling="distraction, no penalty", accept=False))
    after = engine.state
    assert press_id not in after.open_irregularities
    assert press_id not in {irr.id for irr in after.open_irregularity_details}
