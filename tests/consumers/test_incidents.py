"""One incident, one alert: the tablet's folding of findings (pure), and the hub's view of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from boardd.consumers.web.hub import Hub
from boardd.consumers.web.incidents import finding_status, fold, incident_of
from tests.consumers.feed import Feed, ScriptedGame, load_games, script

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
                          "severity": "warning", "needs_arbiter": True, "ply": 20}]
    assert log == []
    incidents, _ = fold([related, flag("20-1", "illegal-move", ply=20)])
    assert [(i["primary"], i["related"], i["target"], i["severity"]) for i in incidents] == [
        ("20-1", ["20-2"], "20-1", "illegal-move")]
    # The primary decides: resolved by the board, the incident is out of the way even if the related one
    # was never re-published.
    incidents, _ = fold([related, flag("20-1", "illegal-move", "resolved", ply=20)])
    assert [(i["status"], i["needs_arbiter"]) for i in incidents] == [("resolved", False)]


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
    assert [(i["id"], i["status"], i["severity"], i["target"]) for i in incidents] == [("i", "open", "warning", "i")]
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
