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

import dataclasses
from collections.abc import Iterable

import chess

from boardd.core.contract import Publication, Publisher
from boardd.core.engine import Engine
from boardd.core.events import Acknowledge, Event, NewGame, Resolve
from boardd.core.outputs import IrregularityUpdated, Output, Severity, Status
from tests.consumers.alerts import Tablet, Watch
from tests.consumers.test_incidents import CORRECTION
from tests.core.scenario import Arb, parse, start_clock
from tests.core.test_scenarios import SCENARIOS
from tests.core.test_scenarios import run as run_scenario

PREFIX = "hall1"
GAME = ""  # the engine's game has no id (GameInfo())


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
    assert board.tablet.cards == {("t1", GAME, illegal): 1}
    assert board.tablet.banners == {("t1", GAME, illegal): 1}
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
    assert board.tablet.needing["t1"] == set() and board.tablet.cards == {("t1", GAME, primary.id): 1}
    late = board.late_tablet()
    assert late.needing["t1"] == set() and not late.cards and not late.banners


def test_an_acknowledgement_of_an_open_finding_still_acknowledges_it() -> None:
    played = run_scenario(SCENARIOS["T30"])
    primary = next(i for i in played.engine.irregularities if i.severity is not Severity.INFO and i.incident is None)
    outs = played.engine.feed(Acknowledge(at=30.0, irregularity_id=primary.id))
    assert [o.irregularity.status for o in outs if isinstance(o, IrregularityUpdated)] == [Status.ACKNOWLEDGED]
    assert primary.id in played.engine.state.open_irregularities


def _two_games() -> tuple[list[Event], list[Event], str]:
    """Round 1 (an illegal move, corrected) and round 2 (a touch-move breach, left open) on one board."""
    from drivers.sim import Correction, CorrectionKind, Injection, InjectionKind, random_game, simulate_game

    first = simulate_game(random_game(1, max_plies=30), seed=1, profile="casual",
                          corrections=(Correction(CorrectionKind.ILLEGAL_GEOMETRY, 9),))
    second = simulate_game(random_game(2, max_plies=30), seed=2, profile="casual", start_at=first.events[-1].at + 60,
                           injections=(Injection(InjectionKind.TOUCH_MOVE, 12),))

    def named(events: list[Event], game_id: str) -> list[Event]:
        return [dataclasses.replace(e, game=dataclasses.replace(e.game, id=game_id)) if isinstance(e, NewGame) else e
                for e in events]

    return named(first.events, "t1-r1"), named(second.events, "t1-r2"), "t1-r2"


def test_a_daemon_restarted_in_the_second_game_keeps_the_ids_it_published() -> None:
    """The daemon rebuilds the current game from its NewGame in a fresh engine (boardd.daemon.service): the
    finding ids must be those published before, or the tablet shows the open ones again as new incidents."""
    round1, round2, game = _two_games()
    engine = Engine()
    board = Board(engine, at=round1[0].at)
    for event in round1:
        board.feed(event)
    cut: int | None = None
    for n, event in enumerate(round2):
        board.feed(event)
        if any(i.code == "TOUCH_MOVE_SUSPECTED" for i in engine.irregularities):
            cut = n + 1
            break
    assert cut is not None
    published = [(i.id, i.code) for i in engine.irregularities]
    (touch,) = [i.id for i in engine.irregularities if i.code == "TOUCH_MOVE_SUSPECTED"]
    assert touch in engine.state.open_irregularities and board.tablet.needing["t1"] == {touch}
    # restart: the current game replayed into a fresh engine, a new session; the state published again
    rebuilt = Engine()
    for event in round2[:cut]:
        rebuilt.advance(event.at)
        rebuilt.feed(event)
    assert [(i.id, i.code) for i in rebuilt.irregularities] == published
    board.engine = rebuilt
    board.publisher = Publisher(board="t1", prefix=PREFIX, session=2, seq=board.publisher.seq)
    board.publish(board.publisher.snapshot(rebuilt.state, at=round2[cut].at))
    for event in round2[cut:]:
        board.feed(event)
    assert board.tablet.cards[("t1", game, touch)] == 1
    assert [key for key, n in board.tablet.cards.items() if key[1] == game] == [("t1", game, touch)]
    assert board.tablet.needing["t1"] == {touch}
