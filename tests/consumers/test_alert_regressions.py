"""One incident, one alert: defects found by the audit (tests/consumers/test_alert_audit.py), pinned.

* The arbiter acknowledges on the tablet an illegal move the board has already resolved (the pieces were
  put back while he walked over): the finding went back to ``acknowledged``, its card came back, a second
  alert for one incident.
* The arbiter resolves an incident (its primary, the only finding the tablet's buttons address) whose
  related findings ask for action too (T30: piece in hand, other hand, change out of turn): they stayed
  open in the engine, so the retained ``state`` listed them for good, and a tablet that joined later (or a
  restarted web service) drew the resolved incident as an open card ("main finding not received yet").
"""

from __future__ import annotations

from collections.abc import Iterable

import chess

from boardd.core.contract import Publication, Publisher
from boardd.core.engine import Engine
from boardd.core.events import Acknowledge, Event, Resolve
from boardd.core.outputs import IrregularityUpdated, Output, Severity, Status
from tests.consumers.alerts import Tablet, Watch
from tests.consumers.test_incidents import CORRECTION
from tests.core.scenario import Arb, parse, start_clock
from tests.core.test_scenarios import SCENARIOS
from tests.core.test_scenarios import run as run_scenario

PREFIX = "hall1"


class Board:
    """A real engine and the daemon's publisher, watched by a live tablet; retained messages kept for late joiners."""

    def __init__(self, engine: Engine, *, at: float) -> None:
        self.engine = engine
        self.publisher = Publisher(board="t1", prefix=PREFIX)
        self.tablet = Tablet()
        self.watch = Watch(PREFIX, [self.tablet])
        self.retained: dict[str, bytes] = {}
        self.publish(self.publisher.snapshot(engine.state, at=at))

    def publish(self, publications: Iterable[Publication]) -> None:
        for p in publications:
            self.watch.take(p.topic, p.payload_bytes())
            if p.retain:
                self.retained[p.topic] = p.payload_bytes()

    def feed(self, event: Event) -> list[Output]:
        outs = [*self.engine.advance(event.at), *self.engine.feed(event)]
        self.publish(self.publisher.render(outs, self.engine.state, at=event.at))
        return outs

    def late_tablet(self) -> Tablet:
        """A tablet (or a restarted web service) that sees only the retained messages."""
        watch = Watch(PREFIX)
        for topic, payload in self.retained.items():
            watch.take(topic, payload)
        tablet = Tablet()
        watch.attach(tablet)
        return tablet


def test_an_acknowledgement_after_the_board_resolved_the_illegal_move_does_not_reopen_it() -> None:
    engine = Engine()
    clock, first = start_clock(chess.WHITE, -1.0)
    board = Board(engine, at=-1.0)
    board.feed(first)
    illegal: str | None = None
    for item, event in zip(CORRECTION.split(" · "), parse(CORRECTION, clock), strict=True):
        assert not isinstance(event, Arb)
        board.feed(event)
        if illegal is None:
            illegal = next((i.id for i in engine.irregularities if i.severity is Severity.ILLEGAL_MOVE), None)
        if item == "2800 P e2 wP":  # the pawn is back: the board resolved it; the arbiter's tap arrives now
            assert illegal is not None
            assert next(i for i in engine.irregularities if i.id == illegal).status is Status.RESOLVED
            board.feed(Acknowledge(at=2.9, irregularity_id=illegal))
    assert illegal is not None
    found = next(i for i in engine.irregularities if i.id == illegal)
    assert found.status is Status.RESOLVED and found.ruling and found.ruling.startswith("position reinstated")
    assert illegal not in engine.state.open_irregularities
    # one card, one banner, and nothing left for the arbiter
    assert board.tablet.cards == {("t1", illegal): 1}
    assert board.tablet.banners == {("t1", illegal): 1}
    assert board.tablet.needing["t1"] == set()


def test_resolving_an_incident_closes_its_related_findings_for_a_late_joiner_too() -> None:
    played = run_scenario(SCENARIOS["T30"])
    engine = played.engine
    asking = [i for i in engine.irregularities if i.severity is not Severity.INFO]
    primary = next(i for i in asking if i.incident is None)
    assert primary.code == "CLOCK_PRESS_PIECE_IN_HAND" and len(asking) == 3
    assert {i.incident for i in asking if i is not primary} == {primary.id}
    board = Board(engine, at=2.0)
    assert board.tablet.needing["t1"] == {primary.id}
    assert board.late_tablet().needing["t1"] == {primary.id}
    # the arbiter resolves the incident from the tablet (its buttons address the primary)
    board.feed(Resolve(at=30.0, irregularity_id=primary.id, ruling="+2 min to Black"))
    assert engine.state.open_irregularities == ()
    assert all(i.status is Status.RESOLVED for i in engine.irregularities if i.severity is not Severity.INFO)
    related = [i for i in engine.irregularities if i.incident == primary.id and i.severity is not Severity.INFO]
    assert all(i.ruling == f"resolved with {primary.id}: +2 min to Black" for i in related)
    assert board.tablet.needing["t1"] == set() and board.tablet.cards == {("t1", primary.id): 1}
    late = board.late_tablet()
    assert late.needing["t1"] == set() and not late.cards and not late.banners


def test_an_acknowledgement_of_an_open_finding_still_acknowledges_it() -> None:
    played = run_scenario(SCENARIOS["T30"])
    primary = next(i for i in played.engine.irregularities if i.severity is not Severity.INFO and i.incident is None)
    outs = played.engine.feed(Acknowledge(at=30.0, irregularity_id=primary.id))
    assert [o.irregularity.status for o in outs if isinstance(o, IrregularityUpdated)] == [Status.ACKNOWLEDGED]
    assert primary.id in played.engine.state.open_irregularities
