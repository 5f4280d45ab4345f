"""A two-handed move nested in another finding's incident, from the engine to the tablet (pure, no broker).

Black's king makes an illegal move (not yet ruled on); White then castles queenside with both hands. White's
TWO_HANDS_SUSPECTED joins the incident under way (led by Black's illegal move), and so does the
TWO_HANDS_AT_PRESS of the press that completed it. The engine (``boardd.daemon.replay.Replay``: engine and
contract publisher) publishes what the daemon would; the web service's hub folds it; a model of the tablet
page (:class:`tests.consumers.alerts.Tablet`) counts the cards. One incident is one card; the press finding
names its suspicion in data (``related``), not only in its text; the card's Confirm two hands (the hub's
``two_hands``) rules on the press finding and the whole incident closes: nothing open on the board, in the
state nor on the tablet.
"""

from __future__ import annotations

import json

import chess
import pytest

from boardd.core.events import Event, Resolve
from boardd.daemon.replay import Replay, ReplayOptions
from tests.consumers.alerts import Tablet, Watch
from tests.core.scenario import POSITIONS, history_events, parse, start_clock

PREFIX = "hall"
BOARD = "t1"
NESTED = "0 L e8 · 300 P e6 bK · 600 C B · 2000 L e1 · 2030 L a1 · 2330 P c1 wK · 2360 P d1 wR · 2700 C W"


def _events() -> list[Event]:
    _, history = POSITIONS["B"]
    assert history
    clock, reading = start_clock(chess.WHITE, -20.0)
    events: list[Event] = [reading, *history_events(history, clock, start=-19.5)]
    for item in parse(NESTED, clock):
        assert isinstance(item, Event)
        events.append(item)
    return events


@pytest.mark.parametrize("accept", [True, False])
def test_a_nested_two_hands_incident_is_one_card_and_closes_as_one(accept: bool) -> None:
    replay = Replay(None, ReplayOptions(board=BOARD, prefix=PREFIX))
    tablet = Tablet()
    watch = Watch(PREFIX, [tablet])
    wire: list[dict[str, object]] = []

    def feed(event: Event | float) -> None:
        publications = replay.fire_timers(event) if isinstance(event, float) else replay.feed(event)
        for publication in publications:
            payload = publication.payload_bytes()
            if publication.topic.endswith("/irregularity"):
                wire.append(json.loads(payload))
            watch.take(publication.topic, payload)

    for event in _events():
        feed(event)
    feed(10.0)  # the press is judged once its timers ran
    by_code = {str(body["code"]): body for body in wire}
    illegal, suspected, at_press = (by_code[c] for c in ("ILLEGAL_MOVE", "TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"))
    # the contract: nested under Black's illegal move, the press finding names the suspicion it completes
    assert suspected["incident"] == at_press["incident"] == illegal["id"]
    assert at_press["related"] == [suspected["id"]] and "related" not in suspected
    # the hub: one incident, led by Black's illegal move, whose card offers Confirm two hands on the press finding
    view = watch.hub.arbiter_view(BOARD, watch.now)
    assert view is not None
    (incident,) = [i for i in view["incidents"] if i["needs_arbiter"]]
    assert (incident["id"], incident["target"], incident["two_hands"]) == (illegal["id"], illegal["id"], at_press["id"])
    assert sorted(incident["related"]) == sorted([suspected["id"], at_press["id"]])
    # the arbiter rules through the card: the whole incident closes, whatever its primary
    feed(Resolve(at=30.0, irregularity_id=str(at_press["id"]), ruling="two hands", accept=accept))
    view = watch.hub.arbiter_view(BOARD, watch.now)
    assert view is not None and view["open_ids"] == [] and view["rank"] == 0
    assert not [i for i in view["incidents"] if i["needs_arbiter"]]
    assert {f["id"]: f["status"] for f in view["flags"]} == {illegal["id"]: "resolved", suspected["id"]: "resolved",
                                                            at_press["id"]: "resolved"}
    assert replay.engine.state.illegal_moves_white == (1 if accept else 0)  # White's own two-handed move
    # the page: one card for the incident, gone once ruled on; a late joiner sees nothing open
    assert tablet.cards[(BOARD, str(view["state"]["game"]["id"]), str(illegal["id"]))] == 1
    assert sum(tablet.cards.values()) == 1 and tablet.needing[BOARD] == set()
    late = Tablet()
    watch.attach(late)
    assert late.needing[BOARD] == set()
