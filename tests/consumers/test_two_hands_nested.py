"""A two-handed move right after the opponent's illegal move, from the engine to the tablet (pure, no broker).

Black's king makes an illegal move (not yet ruled on); White then castles queenside with both hands, within the
one completed move an incident stays open for. Each player's irregularity is ruled on and counted for that
player (7.5.5): White's TWO_HANDS_SUSPECTED opens an incident of its own (the TWO_HANDS_AT_PRESS of the press
that completed it joins it), Black's illegal move keeps its own. The engine (``boardd.daemon.replay.Replay``:
engine and contract publisher) publishes what the daemon would; the web service's hub folds it; a model of
the tablet page (:class:`tests.consumers.alerts.Tablet`) counts the cards: two incidents, two cards. The card
of White's incident offers Confirm two hands (the hub's ``two_hands``, the press finding named in ``related``);
ruling through it closes White's incident and leaves Black's open for its own ruling.
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
def test_two_hands_after_the_opponents_illegal_move_is_its_own_card(accept: bool) -> None:
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
    # the contract: White's two hands an incident of its own, the press finding naming the suspicion it completes
    assert "incident" not in suspected or suspected["incident"] is None
    assert at_press["incident"] == suspected["id"] and illegal.get("incident") is None
    assert at_press["related"] == [suspected["id"]] and "related" not in suspected
    # the hub: two incidents; White's card offers Confirm two hands on the press finding
    view = watch.hub.arbiter_view(BOARD, watch.now)
    assert view is not None
    needing = {i["id"]: i for i in view["incidents"] if i["needs_arbiter"]}
    assert set(needing) == {illegal["id"], suspected["id"]}
    white = needing[suspected["id"]]
    assert (white["target"], white["two_hands"]) == (suspected["id"], at_press["id"])
    assert white["related"] == [at_press["id"]] and needing[illegal["id"]]["two_hands"] is None
    # the arbiter rules through White's card: White's incident closes, Black's illegal move stays for its ruling
    feed(Resolve(at=30.0, irregularity_id=str(at_press["id"]), ruling="two hands", accept=accept))
    view = watch.hub.arbiter_view(BOARD, watch.now)
    assert view is not None and view["open_ids"] == [illegal["id"]]
    assert [i["id"] for i in view["incidents"] if i["needs_arbiter"]] == [illegal["id"]]
    assert {f["id"]: f["status"] for f in view["flags"]} == {illegal["id"]: "open", suspected["id"]: "resolved",
                                                            at_press["id"]: "resolved"}
    assert replay.engine.state.illegal_moves_white == (1 if accept else 0)  # White's own two-handed move
    assert replay.engine.state.illegal_moves_black == 1
    # the page: one card each, White's gone once ruled on; a late joiner sees Black's only
    game = str(view["state"]["game"]["id"])
    assert tablet.cards[(BOARD, game, str(illegal["id"]))] == 1
    assert tablet.cards[(BOARD, game, str(suspected["id"]))] == 1
    assert sum(tablet.cards.values()) == 2 and tablet.needing[BOARD] == {str(illegal["id"])}
    late = Tablet()
    watch.attach(late)
    assert late.needing[BOARD] == {str(illegal["id"])}
