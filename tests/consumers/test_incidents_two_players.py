"""Two players, two occurrences, two cards; one occurrence, one card (engine → contract → hub → page model).

White castles with the rook lifted first (4.4.2, ``CASTLING_ROOK_FIRST``) and Black, on his move, presses the
clock without a move (7.5.3, ``CLOCK_PRESS_NO_MOVE``, counted for Black). Each is ruled on and counted for its
player: two incidents, two cards, and the ruling on White's castling leaves Black's card (before: Black's press
folded under White's castling and closed with it, "resolved with" a finding about another player's move).
The takeback by agreement of rules-spec T50 stays one card: Black's press hands the clock back to White, whose
knight was taken back on Black's time.
"""

from __future__ import annotations

import json

import chess

from boardd.core.events import Event, Resolve
from boardd.daemon.replay import Replay, ReplayOptions
from tests.consumers.alerts import Tablet, Watch
from tests.core.scenario import POSITIONS, history_events, parse, start_clock

PREFIX = "hall"
BOARD = "t1"


def _board(position: str, events: str) -> tuple[Replay, Watch, Tablet, list[dict[str, object]]]:
    _, history = POSITIONS[position]
    assert history
    clock, reading = start_clock(chess.WHITE, -20.0)
    replay = Replay(None, ReplayOptions(board=BOARD, prefix=PREFIX))
    tablet = Tablet()
    watch = Watch(PREFIX, [tablet])
    wire: list[dict[str, object]] = []
    feed: list[Event] = [reading, *history_events(history, clock, start=-19.5)]
    for item in parse(events, clock):
        assert isinstance(item, Event)
        feed.append(item)
    publications = [p for event in feed for p in replay.feed(event)] + replay.fire_timers(10.0)
    for publication in publications:
        payload = publication.payload_bytes()
        if publication.topic.endswith("/irregularity"):
            wire.append(json.loads(payload))
        watch.take(publication.topic, payload)
    return replay, watch, tablet, wire


def test_rook_first_castling_and_the_opponents_press_without_a_move_are_two_cards() -> None:
    replay, watch, tablet, wire = _board("A", "0 L h1 · 120 P f1 wR · 400 L e1 · 650 P g1 wK · 1000 C W · 2000 C B")
    by_code = {str(body["code"]): body for body in wire}
    castling, press = by_code["CASTLING_ROOK_FIRST"], by_code["CLOCK_PRESS_NO_MOVE"]
    assert castling.get("incident") is None and press.get("incident") is None
    view = watch.hub.arbiter_view(BOARD, watch.now)
    assert view is not None
    assert {i["id"] for i in view["incidents"] if i["needs_arbiter"]} == {castling["id"], press["id"]}
    game = str(view["state"]["game"]["id"])
    assert sum(tablet.cards.values()) == 2
    # the ruling on White's castling: Black's press without a move stays for its own ruling
    for p in replay.feed(Resolve(at=30.0, irregularity_id=str(castling["id"]), ruling="castling stands")):
        watch.take(p.topic, p.payload_bytes())
    view = watch.hub.arbiter_view(BOARD, watch.now)
    assert view is not None and view["open_ids"] == [press["id"]]
    assert [i["id"] for i in view["incidents"] if i["needs_arbiter"]] == [press["id"]]
    assert tablet.needing[BOARD] == {str(press["id"])} and tablet.cards[(BOARD, game, str(press["id"]))] == 1
    assert replay.engine.state.illegal_moves_black == 1
    late = Tablet()
    watch.attach(late)
    assert late.needing[BOARD] == {str(press["id"])}


def test_a_takeback_by_agreement_is_one_card() -> None:
    replay, watch, tablet, wire = _board("L2", "0 L f3 · 300 P g1 wN · 700 C B · 1500 L f1 · 1800 P c4 wB · 2100 C W")
    by_code = {str(body["code"]): body for body in wire}
    change = by_code["OUT_OF_TURN_CHANGE"]
    assert by_code["CLOCK_PRESS_NO_MOVE"]["incident"] == by_code["TAKEBACK_DETECTED"]["incident"] == change["id"]
    view = watch.hub.arbiter_view(BOARD, watch.now)
    assert view is not None
    assert [i["id"] for i in view["incidents"] if i["needs_arbiter"]] == [change["id"]]
    assert sum(tablet.cards.values()) == 1
    for p in replay.feed(Resolve(at=30.0, irregularity_id=str(change["id"]), ruling="Nf3 stands, reinstated")):
        watch.take(p.topic, p.payload_bytes())
    assert replay.engine.state.open_irregularities == ()
