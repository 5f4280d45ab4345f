"""One incident, one alert: the tablet's folding of findings (pure), and the hub's view of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chess

from boardd.consumers.web.hub import Hub
from boardd.consumers.web.incidents import finding_status, fold, incident_of
from boardd.core.contract import Publisher
from boardd.core.engine import Engine
from tests.consumers.feed import Feed, Publication, ScriptedGame, load_games, script
from tests.core.scenario import Arb, parse, start_clock
from tests.core.test_scenarios import Scn
from tests.core.test_scenarios import run as run_scenario

PREFIX = "hall1"


def flag(ident: str, severity: str = "warning", status: str = "open", ply: int = 10, **more: Any) -> dict[str, Any]:
    return {"id": ident, "code": f"CODE_{ident}", "severity": severity, "status": status, "ply": ply, **more}


def test_related_findings_fold_under_their_primary_and_info_is_a_log() -> None:
    flags = [
        flag("10-1", "warning", ply=10, code="CLOCK_PRESS_NO_MOVE", incident=None),
        flag("10-2", "warning", ply=10, code="OUT_OF_TURN_CHANGE", incident="10-1"),
        flag("11-1", "info", "noted", ply=11, code="ADJUST_OBSERVED", incident=None),
        flag("12-1", "illegal-move", "resolved", ply=12, incident=None, ruling="position reinstated at ply 11"),
        flag("12-2", "info", "noted", ply=12, code="ARBITER_ADJUST", incident="12-1"),
        flag("13-1", "info", "noted", ply=13, code="CLOCK_PAUSED"),  # no incident field at all
    ]
    incidents, log = fold(flags)
    assert [(i["id"], i["related"], i["status"], i["needs_arbiter"]) for i in incidents] == [
        ("12-1", ["12-2"], "resolved", False),  # newest first; its info note folds inside (and is in the log)
        ("10-1", ["10-2"], "open", True),
    ]
    assert incidents[1]["severity"] == "warning" and incidents[1]["target"] == "10-1" and incidents[1]["ply"] == 10
    assert log == ["11-1", "12-2", "13-1"]


def test_a_related_finding_before_its_primary_makes_a_card_until_the_primary_arrives() -> None:
    related = flag("20-2", "warning", ply=20, incident="20-1")
    incidents, log = fold([related])
    assert incidents == [{"id": "20-1", "primary": None, "related": ["20-2"], "target": "20-2", "status": "open",
                          "severity": "warning", "needs_arbiter": True, "two_hands": None, "ply": 20}]
    assert log == []
    incidents, _ = fold([related, flag("20-1", "illegal-move", ply=20)])
    assert [(i["primary"], i["related"], i["target"], i["severity"]) for i in incidents] == [
        ("20-1", ["20-2"], "20-1", "illegal-move")]
    # The primary decides: resolved by the board, the incident is out of the way even if the related one
    # was never re-published.
    incidents, _ = fold([related, flag("20-1", "illegal-move", "resolved", ply=20)])
    assert [(i["status"], i["needs_arbiter"]) for i in incidents] == [("resolved", False)]


def test_a_finding_after_the_primary_was_resolved_keeps_the_incident_open() -> None:
    before = flag("4-2", "warning", ply=4, code="OUT_OF_TURN_CHANGE", incident="4-1")  # never re-published
    resolved = flag("4-1", "illegal-move", "resolved", ply=4, ruling="position reinstated at ply 4")
    after = flag("5-4", "warning", ply=5, code="TOUCH_MOVE_VIOLATION", incident="4-1")
    incidents, _ = fold([before, resolved])
    assert [(i["status"], i["needs_arbiter"]) for i in incidents] == [("resolved", False)]
    incidents, _ = fold([before, resolved, after])
    assert [(i["id"], i["status"], i["needs_arbiter"], i["target"], i["severity"], i["related"])
            for i in incidents] == [("4-1", "open", True, "5-4", "warning", ["4-2", "5-4"])]
    incidents, _ = fold([before, resolved, {**after, "status": "acknowledged"}])
    assert [(i["status"], i["target"]) for i in incidents] == [("acknowledged", "5-4")]
    incidents, _ = fold([before, resolved, {**after, "status": "resolved"}])
    assert [(i["status"], i["target"]) for i in incidents] == [("resolved", "4-1")]


def test_payloads_of_an_older_daemon_and_odd_links() -> None:
    # No incident field; info findings still "open": each non-info finding is its own incident, info is a log.
    incidents, log = fold([flag("1-1", "info"), flag("2-1", "warning"), flag("3-1", "illegal-move", "acknowledged")])
    assert [(i["id"], i["status"]) for i in incidents] == [("3-1", "acknowledged"), ("2-1", "open")]
    assert log == ["1-1"]
    assert finding_status(flag("x", "info", "open")) == "noted"
    assert finding_status(flag("x", "info", "resolved")) == "resolved"
    assert finding_status({"id": "x", "severity": "warning", "status": "bogus"}) == "open"
    assert incident_of({"id": "x", "incident": "x"}) is None and incident_of({"id": "x", "incident": ""}) is None
    # A chain folds to its root; a cycle stops instead of looping.
    incidents, _ = fold([flag("a"), flag("b", incident="a"), flag("c", incident="b")])
    assert [(i["id"], i["related"]) for i in incidents] == [("a", ["b", "c"])]
    incidents, _ = fold([flag("p", incident="q"), flag("q", incident="p")])
    assert sum(len(i["related"]) + (i["primary"] is not None) for i in incidents) == 2
    # An info primary with a warning under it: the warning still asks for the arbiter.
    incidents, log = fold([flag("i", "info", "noted"), flag("w", "warning", incident="i")])
    assert [(i["id"], i["status"], i["severity"], i["target"]) for i in incidents] == [("i", "open", "warning", "w")]
    assert log == ["i"]


def one_game(pgn_dir: Path) -> ScriptedGame:
    (game,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    return script(game, board="t1", board_no=1, round_no=4, seed=0)


def test_hub_arbiter_view_carries_incidents_log_and_rank(pgn_dir: Path) -> None:
    feed = Feed(one_game(pgn_dir), prefix=PREFIX)
    hub = Hub(prefix=PREFIX)
    for topic, payload, _, _ in [p for step in feed.publications(upto=12) for p in step]:
        hub.take(topic, payload, now=1.0)
    for topic, payload, _, _ in [
        feed.irregularity("12-2", code="OUT_OF_TURN_CHANGE", severity="warning", ply=12, incident="12-1"),
        feed.irregularity("11-1", code="ADJUST_OBSERVED", severity="info", ply=11, status="noted", incident=None),
        feed.irregularity("12-1", ply=12, incident=None),
    ]:
        hub.take(topic, payload, now=2.0)
    view = hub.arbiter_view("t1", 2.0)
    assert view is not None
    assert [(i["id"], i["related"], i["status"]) for i in view["incidents"]] == [("12-1", ["12-2"], "open")]
    assert view["log"] == ["11-1"] and view["rank"] == 3
    # The board resolves the illegal move itself: no open incident remains, the rank drops.
    hub.take(*feed.irregularity("12-1", ply=12, status="resolved", incident=None,
                                ruling="position reinstated at ply 11; +2:00 seen on the clock")[:2], now=3.0)
    view = hub.arbiter_view("t1", 3.0)
    assert view is not None
    assert [(i["id"], i["status"], i["needs_arbiter"]) for i in view["incidents"]] == [("12-1", "resolved", False)]
    assert view["rank"] == 0
    # A newer state that lists no open finding keeps the noted one noted (it never was open).
    hub.take(*feed.state(12, {"white": 5000.0, "black": 5000.0}, "white")[:2], now=4.0)
    view = hub.arbiter_view("t1", 4.0)
    assert view is not None
    assert {f["id"]: f["status"] for f in view["flags"]} == {"12-2": "resolved", "11-1": "noted", "12-1": "resolved"}


# --- the real engine's correction cycle, as published, through the hub ---------------------------------------

#: White plays e2-e5 and presses; the arbiter pauses the clock, puts the pawn back, gives Black 2 minutes,
#: sets the lever to White and restarts; White plays e4, Black e5 (7.5.1, the correction cycle of issue 10).
CORRECTION = ("0 L e2 · 300 P e5 wP · 800 C W · 2000 PAUSE · 2500 L e5 · 2800 P e2 wP · 4000 ADD B 120 · "
              "4500 LEVERX W · 5000 RESUME · 6000 L e2 · 6300 P e4 wP · 6800 C W · 8000 L e7 · 8300 P e5 bP · 8800 C B")


def correction_cycle(prefix: str = PREFIX) -> list[tuple[str, list[Publication]]]:
    """The publications of a real engine (``boardd.core``) for :data:`CORRECTION`, per scenario item."""
    engine = Engine()
    publisher = Publisher(board="t1", prefix=prefix, ts=lambda at: f"2026-11-24T14:00:{10 + at:06.3f}Z")
    clock, first = start_clock(chess.WHITE, -1.0)

    def wire(publications: list[Any]) -> list[Publication]:
        return [(p.topic, p.payload_bytes(), p.retain, p.qos) for p in publications]

    steps = [("start", wire(publisher.snapshot(engine.state, at=-1.0)) +
              wire(publisher.render(engine.feed(first), engine.state, at=-1.0)))]
    for item, event in zip(CORRECTION.split(" · "), parse(CORRECTION, clock), strict=True):
        assert not isinstance(event, Arb)
        due = wire(publisher.render(engine.advance(event.at), engine.state, at=event.at))  # the engine's timers
        steps.append((item, due + wire(publisher.render(engine.feed(event), engine.state, at=event.at))))
    steps.append(("later", wire(publisher.render(engine.advance(12.0), engine.state, at=12.0))))
    assert [m.uci for m in engine.state.moves] == ["e2e4", "e7e5"]
    return steps


def test_the_real_engines_correction_cycle_is_one_incident_that_resolves_itself() -> None:
    hub = Hub(prefix=PREFIX)
    seen: list[tuple[str, list[tuple[str, str, bool]], int]] = []
    for item, publications in correction_cycle():
        for topic, payload, _, _ in publications:
            hub.take(topic, payload, now=1.0)
        view = hub.arbiter_view("t1", 1.0)
        assert view is not None
        seen.append((item, [(i["severity"], i["status"], i["needs_arbiter"]) for i in view["incidents"]], view["rank"]))
        assert len(view["incidents"]) <= 1, (item, view["incidents"])  # one incident, one alert, at every step
    # Open from when the engine raised it until the pawn is back; resolved by the board from then on.
    states = [(incidents, rank) for _, incidents, rank in seen if incidents]
    back = next(n for n, (item, _, _) in enumerate(seen) if item == "2800 P e2 wP")
    assert states[0] == ([("illegal-move", "open", True)], 3)
    assert all(step[1:] == ([("illegal-move", "resolved", False)], 0) for step in seen[back:])
    view = hub.arbiter_view("t1", 1.0)
    assert view is not None
    (incident,) = view["incidents"]
    flags = {f["id"]: f for f in view["flags"]}
    primary = flags[incident["id"]]
    assert primary["code"] == "ILLEGAL_MOVE" and primary["ruling"].startswith("position reinstated at ply 0")
    assert "+2:00 seen on the clock" in primary["ruling"]
    # The arbiter's own steps (pause, penalty time) are notes: in the log, folded in the incident, never a card.
    assert view["log"] and all(flags[i]["status"] == "noted" for i in view["log"])
    assert set(view["log"]) <= set(incident["related"])


def test_the_real_engines_touch_move_breach_after_a_self_resolved_illegal_move_still_needs_the_arbiter() -> None:
    """§3.7 (rules-spec S37): Bf1-c5 illegal, put back by the arbiter, then White plays Nc3 after touching the bishop.

    The board resolved the illegal move's incident; the breach of the replacement move is an incident of its
    own (the engine opens a new one after a resolved primary), and it needs the arbiter.
    """
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 1600 PAUSE · 1700 LEVER W · "
                   "2000 L c5 · 2200 P f1 wB · 2500 RESUME · 3000 L b1 · 3300 P c3 wN · 3800 C W",
              ("Nc3",), ("ILLEGAL_MOVE/GEOMETRY", "TOUCH_MOVE_VIOLATION"),
              allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    played = run_scenario(scn)
    hub = Hub(prefix=PREFIX)
    publisher = Publisher(board="t1", prefix=PREFIX)
    for publication in [*publisher.snapshot(played.engine.state, at=0.0),
                        *publisher.render(played.outs, played.engine.state, at=4.0)]:
        hub.take(publication.topic, publication.payload_bytes(), now=1.0)
    view = hub.arbiter_view("t1", 1.0)
    assert view is not None
    flags = {f["id"]: f for f in view["flags"]}
    by_code = {flags[i["id"]]["code"]: i for i in view["incidents"]}
    assert set(by_code) == {"ILLEGAL_MOVE", "TOUCH_MOVE_VIOLATION"}
    assert flags[by_code["ILLEGAL_MOVE"]["id"]]["status"] == "resolved" and not by_code["ILLEGAL_MOVE"]["needs_arbiter"]
    assert by_code["TOUCH_MOVE_VIOLATION"]["needs_arbiter"] and by_code["TOUCH_MOVE_VIOLATION"]["status"] == "open"
    assert view["rank"] == 2


def test_a_two_hands_incident_names_the_press_finding_the_arbiter_rules_on() -> None:
    """R19: the card of a suspected two-handed move leads with the suspicion; its Confirm two hands / Dismiss
    address the TWO_HANDS_AT_PRESS folded under it (``two_hands``), for the whole incident."""
    suspected = flag("30-1", ply=30, code="TWO_HANDS_SUSPECTED", incident=None)
    at_press = flag("31-2", ply=31, code="TWO_HANDS_AT_PRESS", incident="30-1")
    (incident,), _ = fold([suspected, at_press])
    assert (incident["target"], incident["related"], incident["two_hands"]) == ("30-1", ["31-2"], "31-2")
    (incident,), _ = fold([suspected])  # not pressed yet: nothing to confirm
    assert incident["two_hands"] is None
    (incident,), _ = fold([at_press])  # its primary not received yet: it leads, and is the one ruled on
    assert (incident["target"], incident["two_hands"]) == ("31-2", "31-2")
    # Confirmed: both resolved (the daemon closes the incident as one), nothing left to rule on.
    (incident,), _ = fold([{**suspected, "status": "resolved"},
                           {**at_press, "status": "resolved", "severity": "illegal-move"}])
    assert (incident["status"], incident["needs_arbiter"], incident["two_hands"]) == ("resolved", False, None)
    # Led by another finding (here an illegal move): its actions rule on that primary (the two-handed findings
    # close with it), and Confirm two hands still addresses the press finding (the daemon closes the incident).
    illegal = flag("31-1", "illegal-move", ply=31, code="ILLEGAL_MOVE", incident=None)
    (incident,), _ = fold([illegal, {**at_press, "incident": "31-1"}])
    assert (incident["target"], incident["two_hands"]) == ("31-1", "31-2")
