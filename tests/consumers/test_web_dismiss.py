"""Dismiss on an illegal-move-class card, end to end: engine → Mosquitto → ``boardd web`` → Chromium → back.

White presses the clock without a move (CLOCK_PRESS_NO_MOVE, an illegal move from 2018: 7.5.5 counts it). The
arbiter judges it a distraction (Arbiters' Manual): the card has **Dismiss** beside **Resolve**, secondary to
it. The click goes through the web service to ``{prefix}/{board}/cmd/resolve`` with ``accept: false``, where
a stand-in for the daemon's command handler (``parse_command``, then the same engine through ``Replay``)
applies it: the press is uncounted, the state's ``illegal_moves`` drop, the card closes. White's illegal move
that follows is his first: the first offence's +2:00, not 0-1 (tests/core/test_illegal_count.py).
"""

from __future__ import annotations

from typing import Any

import chess
import pytest

from boardd.core.clock import TimeControl
from boardd.core.contract import Publication
from boardd.core.events import Event
from boardd.core.outputs import Status
from boardd.daemon.replay import Replay, ReplayOptions
from tests.consumers.test_web import PREFIX, browser, publish, running_web, wait_until
from tests.consumers.test_web_two_hands import BOARD, daemon_side, log_in
from tests.core.scenario import POSITIONS, history_events, parse, start_clock
from tests.core.test_illegal_count import _MOVES, _PRESS, _TC, _knight
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

#: the press and the moves after it end before this; the arbiter rules after it; the illegal move follows
_RULE_AT = 10.0
_KNIGHT_MS = 20000


def _events() -> list[Event]:
    fen, history = POSITIONS["L"]
    assert history is not None and chess.Board(fen).turn is chess.WHITE
    t0 = -float(len(history.split())) - 12.0
    clock, reading = start_clock(chess.WHITE, t0, seconds=float(TimeControl.parse(_TC).periods[0].seconds))
    events: list[Event] = [reading, *history_events(history, clock, start=t0 + 0.5)]
    for item in parse(f"{_PRESS} · {_MOVES} · {_knight(_KNIGHT_MS)}", clock):
        assert isinstance(item, Event)
        events.append(item)
    return events


def _white_count(service: Any) -> Any:
    """White's illegal-move count in the retained state the hub holds for the board."""
    return (service.hub.hall.boards[BOARD].state.get("illegal_moves") or {}).get("white")


def _pubs(publications: list[Publication]) -> list[tuple[str, bytes, bool, int]]:
    return [(p.topic, p.payload_bytes(), p.retain, p.qos) for p in publications]


async def test_dismissing_a_press_without_a_move_uncounts_it(mosquitto: Broker) -> None:
    events = _events()
    replay = Replay(None, ReplayOptions(board=BOARD, prefix=PREFIX, edition=2023, time_control=_TC))
    before = [e for e in events if e.at < _RULE_AT]
    after = [e for e in events if e.at >= _RULE_AT]
    publications = _pubs([p for e in before for p in replay.feed(e)])
    publications += _pubs(list(replay.fire_timers(_RULE_AT - 1.0)))
    (press,) = [i for i in replay.engine.irregularities if i.code == "CLOCK_PRESS_NO_MOVE"]
    assert press.status is Status.OPEN and replay.engine.state.illegal_moves_white == 1
    received: list[tuple[str, dict[str, object]]] = []
    async with running_web(mosquitto) as service, browser() as chromium, \
            daemon_side(mosquitto, replay, _RULE_AT - 1.0, received):
        await publish(mosquitto, publications)
        await wait_until(lambda: BOARD in service.hub.extra and press.id in service.hub.extra[BOARD].irregularities)
        await wait_until(lambda: _white_count(service) == 1)
        errors: list[str] = []
        dialogs: list[str] = []
        assert service.http_port is not None
        page = await log_in(chromium, service.http_port, errors, dialogs)
        board = page.locator(f'.tboard[data-board="{BOARD}"]')
        card = board.locator(f'.open-incidents .flag[data-flag="{press.id}"]')
        await card.wait_for(timeout=5000)
        # Resolve stays; Dismiss beside it, after it, styled apart (not the primary look).
        assert await card.locator("button.resolve").inner_text() == "Resolve"
        dismiss = card.locator("button.dismiss")
        assert await dismiss.count() == 1 and await dismiss.inner_text() == "Dismiss"
        assert await card.locator(".actions button").evaluate_all(
            "bs => bs.map(b => b.className).indexOf('dismiss') === bs.map(b => b.className).indexOf('resolve') + 1")
        looks = await card.evaluate(
            """c => [c.querySelector('button.resolve'), c.querySelector('button.dismiss')].map(b => {
                 const s = getComputedStyle(b); return [s.backgroundColor, s.borderStyle, s.minHeight]; })""")
        assert looks[0][:2] != looks[1][:2] and looks[0][2] == looks[1][2] == "48px"
        await card.locator("input.ruling-text").fill("distraction, no move")
        await dismiss.focus()
        await page.keyboard.press("Enter")  # a keyboard press, as any button
        await wait_until(lambda: len(received) == 1, 5)
        name, payload = received[0]
        assert name == "resolve" and payload["irregularity"] == press.id and payload["accept"] is False
        assert payload["ruling"] == "distraction, no move"
        assert dialogs == []  # no confirmation, as Resolve
        # The engine uncounted it; the card closed; the retained state the tablet reads says so.
        found = {i.id: i for i in replay.engine.irregularities}
        assert found[press.id].status is Status.RESOLVED and found[press.id].ruling == "distraction, no move"
        assert replay.engine.state.illegal_moves_white == 0
        await card.wait_for(state="detached", timeout=5000)
        view = service.hub.arbiter_view(BOARD, 0.0)
        assert view is not None
        (incident,) = [i for i in view["incidents"] if i["id"] == (press.incident or press.id)]
        assert incident["status"] == "resolved" and not incident["needs_arbiter"]
        await wait_until(lambda: _white_count(service) == 0, 5)
        # White's illegal move that follows is his first: +2:00 to Black, no 0-1.
        later = [p for e in after for p in replay.feed(e)] + list(replay.fire_timers(after[-1].at + 5.0))
        await publish(mosquitto, _pubs(later))
        (illegal,) = [i for i in replay.engine.irregularities if i.code == "ILLEGAL_MOVE"]
        assert illegal.suggestion.result is None and illegal.suggestion.add_to_opponent_s == 120
        assert replay.engine.state.illegal_moves_white == 1
        second = board.locator(f'.open-incidents .flag[data-flag="{illegal.id}"]')
        await second.wait_for(timeout=5000)
        await second.locator(".suggestion", has_text="+120 s to the opponent").wait_for(timeout=5000)
        assert await second.locator("button.dismiss").count() == 1
        assert errors == []
