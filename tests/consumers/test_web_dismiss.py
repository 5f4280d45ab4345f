"""Dismiss on an illegal-move-class card, end to end: engine → Mosquitto → ``boardd web`` → Chromium → back.

White presses the clock without a move (CLOCK_PRESS_NO_MOVE, an illegal move from 2018: 7.5.5 counts it). The
arbiter judges it a distraction (Arbiters' Manual): the card has **Dismiss** beside **Resolve**, secondary to
it. The click goes through the web service to ``{prefix}/{board}/cmd/resolve`` with ``accept: false``, where
a stand-in for the daemon's command handler (``parse_command``, then the same engine through ``Replay``)
applies it: the press is uncounted, the state's ``illegal_moves`` drop, the card closes. White's illegal move
that follows is his first: the first offence's +2:00, not 0-1 (tests/core/test_illegal_count.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chess
import pytest

from boardd.core.clock import TimeControl
from boardd.core.contract import Publication
from boardd.core.events import Event, Resolve
from boardd.core.outputs import Status
from boardd.daemon.replay import Replay, ReplayOptions
from tests.consumers.test_web import PREFIX, publish, wait_until
from tests.consumers.test_web_two_hands import BOARD, tablet_rig
from tests.core.scenario import POSITIONS, history_events, parse, start_clock
from tests.core.test_illegal_count import _MOVES, _PRESS, _TC, _knight
from tests.core.test_illegal_count_once import _press_then_illegal
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

#: the press and the moves after it end before this; the arbiter rules after it; the illegal move follows
_RULE_AT = 10.0
_KNIGHT_MS = 20000


def _events(position: str = "L", text: str = f"{_PRESS} · {_MOVES} · {_knight(_KNIGHT_MS)}") -> list[Event]:
    """The game of ``position`` (its history played first), then the scenario ``text`` (rules-spec §8)."""
    fen, history = POSITIONS[position]
    assert history is not None and chess.Board(fen).turn is chess.WHITE
    t0 = -float(len(history.split())) - 12.0
    clock, reading = start_clock(chess.WHITE, t0, seconds=float(TimeControl.parse(_TC).periods[0].seconds))
    events: list[Event] = [reading, *history_events(history, clock, start=t0 + 0.5)]
    for item in parse(text, clock):
        assert isinstance(item, Event)
        events.append(item)
    return events


def _white_count(service: Any) -> Any:
    """White's illegal-move count in the retained state the hub holds for the board."""
    return (service.hub.hall.boards[BOARD].state.get("illegal_moves") or {}).get("white")


def _counted(press: str) -> Callable[[Any], bool]:
    """The web service has the board's press and White's count of 1 (the retained state)."""
    return lambda service: BOARD in service.hub.extra and press in service.hub.extra[BOARD].irregularities \
        and _white_count(service) == 1


def _pubs(publications: list[Publication]) -> list[tuple[str, bytes, bool, int]]:
    return [(p.topic, p.payload_bytes(), p.retain, p.qos) for p in publications]


def _replayed(events: list[Event], until: float) -> tuple[Replay, list[tuple[str, bytes, bool, int]]]:
    """The board's engine fed ``events`` before ``until`` (its timers run to a second before), and what it
    published."""
    replay = Replay(None, ReplayOptions(board=BOARD, prefix=PREFIX, edition=2023, time_control=_TC))
    publications = _pubs([p for e in events if e.at < until for p in replay.feed(e)])
    return replay, publications + _pubs(list(replay.fire_timers(until - 1.0)))


async def test_dismissing_a_press_without_a_move_uncounts_it(mosquitto: Broker) -> None:
    events = _events()
    replay, publications = _replayed(events, _RULE_AT)
    after = [e for e in events if e.at >= _RULE_AT]
    (press,) = [i for i in replay.engine.irregularities if i.code == "CLOCK_PRESS_NO_MOVE"]
    assert press.status is Status.OPEN and replay.engine.state.illegal_moves_white == 1
    async with tablet_rig(mosquitto, replay, _RULE_AT - 1.0, publications, _counted(press.id)) as rig:
        service, page, received, errors, dialogs = rig.service, rig.page, rig.received, rig.errors, rig.dialogs
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


async def _rulings(received: list[tuple[str, dict[str, Any]]], count: int) -> tuple[str, dict[str, Any]]:
    """The ``count``-th command the stand-in daemon received (its name and payload)."""
    await wait_until(lambda: len(received) >= count, 5)
    return received[count - 1]


async def test_a_dismissal_is_undone_from_the_bar_or_from_its_card_in_resolved(mosquitto: Broker) -> None:
    """The arbiter dismisses White's press without a move by mistake. The tablet offers its Undo at the top of the
    page (the board has left the needs-you list with its only incident) and on the dismissed card in the board's
    Resolved section, shown when the board's line is opened. Undo sends ``reopen``: the engine reopens the press
    and counts it again, the card is back among the open incidents, and nothing rings (the same incident). A
    reopen with nothing to take back is refused by the board; one without its finding by the service (400)."""
    replay, publications = _replayed(_events(), _RULE_AT)
    (press,) = [i for i in replay.engine.irregularities if i.code == "CLOCK_PRESS_NO_MOVE"]
    async with tablet_rig(mosquitto, replay, _RULE_AT - 1.0, publications, _counted(press.id)) as rig:
        service, page, received, errors, dialogs = rig.service, rig.page, rig.received, rig.errors, rig.dialogs
        board = page.locator(f'.tboard[data-board="{BOARD}"]')
        card = board.locator(f'.open-incidents .flag[data-flag="{press.id}"]')
        bar = page.locator("#undo")
        await card.wait_for(timeout=5000)
        assert await bar.is_hidden()
        await card.locator("button.dismiss").click()
        assert (await _rulings(received, 1))[1]["accept"] is False
        await card.wait_for(state="detached", timeout=5000)
        assert replay.engine.state.illegal_moves_white == 0
        # 1. Undo at the top of the page, once the board confirmed the dismissal.
        await bar.wait_for(state="visible", timeout=5000)
        assert (await page.locator("#undo-text").inner_text()).startswith(f"Dismissed: {BOARD} — ")
        assert "quiet" in (await board.get_attribute("class") or "")
        # The dismissed card is in the board's Resolved section: a board with nothing for the arbiter is one
        # line, its Resolved section drawn when the line is opened.
        await page.locator(".quiet-boards > summary").click()
        await board.locator(".quiet-row > summary").click()
        await board.locator(f'.resolved-log .flag[data-flag="{press.id}"]').wait_for(state="attached", timeout=5000)
        await page.click("#undo-button")
        name, payload = await _rulings(received, 2)
        assert name == "reopen" and payload["irregularity"] == press.id and set(payload) == {"id", "irregularity",
                                                                                             "token"}
        found = {i.id: i for i in replay.engine.irregularities}
        assert found[press.id].status is Status.OPEN and found[press.id].ruling is None
        assert replay.engine.state.illegal_moves_white == 1
        await card.wait_for(timeout=5000)
        await wait_until(lambda: _white_count(service) == 1, 5)
        assert await bar.is_hidden()
        assert await page.locator("#banner").is_hidden()  # reopened by the arbiter: no new incident, no ring
        # 2. Dismissed again, undone from the dismissed card in Resolved.
        await card.locator("button.dismiss").click()
        await _rulings(received, 3)
        await card.wait_for(state="detached", timeout=5000)
        await board.locator(".resolved-log > summary").click()
        undo = board.locator(f'.resolved-log .flag[data-flag="{press.id}"] button.undo')
        await undo.wait_for(timeout=5000)
        assert await undo.inner_text() == "Undo dismissal"
        await bar.wait_for(state="visible", timeout=5000)  # the bar offers it too: it goes with this undo
        await undo.click()
        name, payload = await _rulings(received, 4)
        assert name == "reopen" and payload["irregularity"] == press.id
        assert await bar.is_hidden()
        await card.wait_for(timeout=5000)
        assert replay.engine.state.illegal_moves_white == 1
        assert await card.locator("button.undo").count() == 0  # open again: nothing to undo
        # 3. Nothing to take back: the board refuses, with its reason on the card.
        await page.evaluate(f"sendCommand('{BOARD}', '{press.id}', 'reopen', {{irregularity: '{press.id}'}})")
        await card.locator(".outcome.bad", has_text="no dismissal to take back").wait_for(timeout=5000)
        assert replay.engine.state.illegal_moves_white == 1
        # 4. Malformed: the service refuses it before anything reaches the broker.
        refused = await page.evaluate("""async () => {
            const r = await fetch('/arbiter/api/cmd', {method: 'POST', headers: {'Content-Type': 'application/json',
              'X-CSRF-Token': CSRF}, body: JSON.stringify({board: 't1', name: 'reopen'})});
            return [r.status, await r.text()]; }""")
        assert refused == [400, "irregularity is required"]
        assert len(received) == 5
        assert errors == [] and dialogs == []


#: R19: White moves two knights, one with each hand (g1-f3, b1-c3), and presses: a suspected two-handed move that
#: was an illegal move of its own (two pieces moved), counted once
_TWO_KNIGHTS = "0 L g1 · 600 L b1 · 1000 P f3 wN · 1100 P c3 wN · 1500 C W"


async def test_the_illegal_move_of_a_two_handed_press_has_its_own_dismiss(mosquitto: Broker) -> None:
    """The card of the suspected two-handed move offers Confirm two hands and, as its Dismiss, the ruling that it
    was one hand; the illegal move the same press was (two knights moved) is folded in it, counted. The arbiter
    finds the second knight was a sensor fault: **Dismiss illegal move** dismisses that finding (before: no way
    to from the card). White's count drops to 0; the two hands still await the ruling (the card stays, with its
    Confirm two hands), and the dismissal can be undone from the card."""
    replay, publications = _replayed(_events("S1", _TWO_KNIGHTS), 10.0)
    found = {i.code: i for i in replay.engine.irregularities}
    suspected, illegal, at_press = (found[c] for c in ("TWO_HANDS_SUSPECTED", "ILLEGAL_MOVE", "TWO_HANDS_AT_PRESS"))
    assert at_press.related == (suspected.id, illegal.id) and replay.engine.state.illegal_moves_white == 1
    async with tablet_rig(mosquitto, replay, 10.0, publications, lambda service: BOARD in service.hub.extra
                          and len(service.hub.extra[BOARD].irregularities) == 3) as rig:
        page, received, errors, dialogs = rig.page, rig.received, rig.errors, rig.dialogs
        card = page.locator(f'.tboard[data-board="{BOARD}"] .open-incidents .flag[data-incident="{suspected.id}"]')
        await card.wait_for(timeout=5000)
        assert await card.locator("button.confirm").inner_text() == "Confirm two hands"
        assert await card.locator("button.resolve").inner_text() == "Dismiss"
        dismiss = card.locator("button.dismiss")
        assert await dismiss.inner_text() == "Dismiss illegal move"
        await dismiss.click()
        name, payload = await _rulings(received, 1)
        assert name == "resolve" and payload["irregularity"] == illegal.id and payload["accept"] is False
        state = replay.engine.state
        assert state.illegal_moves_white == 0 and set(state.open_irregularities) == {suspected.id, at_press.id}
        # the card stays for the two hands; the illegal move's dismissal can be undone from it
        undo = card.locator("button.undo")
        await undo.wait_for(timeout=5000)
        assert await card.locator("button.dismiss").count() == 0 and await card.locator("button.confirm").count() == 1
        await undo.click()
        name, payload = await _rulings(received, 2)
        assert name == "reopen" and payload["irregularity"] == illegal.id
        assert replay.engine.state.illegal_moves_white == 1
        await card.locator("button.dismiss").wait_for(timeout=5000)
        assert errors == [] and dialogs == []


async def test_a_web_service_started_after_the_dismissal_still_offers_its_undo(mosquitto: Broker) -> None:
    """White's press without a move was dismissed from a tablet of the web service before this one (restarted
    since: it never saw the answer to that command). The retained state names the dismissals a reopen can take
    back (``dismissed``, mqtt-additions.md): the dismissed card is in the board's Resolved section with its **Undo
    dismissal**, which sends ``reopen``; the engine counts the press again and the card is open. (Before: no Undo,
    the dismissed finding not even in Resolved.)"""
    replay, publications = _replayed(_events(), _RULE_AT)
    (press,) = [i for i in replay.engine.irregularities if i.code == "CLOCK_PRESS_NO_MOVE"]
    publications += _pubs(replay.feed(Resolve(at=_RULE_AT - 0.5, irregularity_id=press.id,
                                              ruling="distraction, no move", accept=False)))
    assert replay.engine.state.illegal_moves_white == 0

    def ready(service: Any) -> bool:
        return BOARD in service.hub.extra and _white_count(service) == 0

    async with tablet_rig(mosquitto, replay, _RULE_AT - 0.5, publications, ready) as rig:
        service, page, received, errors, dialogs = rig.service, rig.page, rig.received, rig.errors, rig.dialogs
        board = page.locator(f'.tboard[data-board="{BOARD}"]')
        assert "quiet" in (await board.get_attribute("class") or "")
        await page.locator(".quiet-boards > summary").click()
        await board.locator(".quiet-row > summary").click()
        await board.locator(".resolved-log > summary").click()
        undo = board.locator(f'.resolved-log .flag[data-flag="{press.id}"] button.undo')
        await undo.wait_for(timeout=5000)
        assert await undo.inner_text() == "Undo dismissal"
        await undo.click()
        name, payload = await _rulings(received, 1)
        assert name == "reopen" and payload["irregularity"] == press.id
        assert replay.engine.state.illegal_moves_white == 1
        await board.locator(f'.open-incidents .flag[data-flag="{press.id}"]').wait_for(timeout=5000)
        await wait_until(lambda: _white_count(service) == 1, 5)
        assert await page.locator("#banner").is_hidden()  # the same incident: nothing rings
        assert errors == [] and dialogs == []


async def test_a_press_card_dismisses_the_press_only_and_keeps_the_illegal_move(mosquitto: Broker) -> None:
    """White presses without a move, Black presses back, White plays Ng1-g3 (illegal) and presses: one move, one
    card (the press leads, the illegal move folded under it, counted once). The arbiter judges the press a
    distraction and the illegal move real: **Dismiss press only** (secondary, beside Dismiss) sends ``resolve``
    with ``accept: false`` and ``alone: true``; the engine resolves the press alone. The card stays, now led by the
    illegal move with the move's penalty (+120 s), the count still 1; nothing rings (the same incident); its Undo
    puts the press back at the lead. (Before: no button dismissed only the press; Dismiss closed the illegal move
    with it and uncounted it.)"""
    replay, publications = _replayed(_events("S1", _press_then_illegal(0)), 15.0)
    press = next(i for i in replay.engine.irregularities if i.code == "CLOCK_PRESS_NO_MOVE")
    (illegal,) = [i for i in replay.engine.irregularities if i.code == "ILLEGAL_MOVE"]
    assert illegal.incident == press.id

    def ready(service: Any) -> bool:
        return BOARD in service.hub.extra and illegal.id in service.hub.extra[BOARD].irregularities

    async with tablet_rig(mosquitto, replay, 14.0, publications, ready) as rig:
        service, page, received, errors, dialogs = rig.service, rig.page, rig.received, rig.errors, rig.dialogs
        card = page.locator(f'.tboard[data-board="{BOARD}"] .open-incidents .flag[data-incident="{press.id}"]')
        await card.wait_for(timeout=5000)
        assert await card.get_attribute("data-flag") == press.id
        alone = card.locator("button.dismiss-alone")
        assert await alone.inner_text() == "Dismiss press only"
        assert await card.locator("button.dismiss").inner_text() == "Dismiss"
        await card.locator("input.ruling-text").fill("distraction")
        await alone.click()
        name, payload = await _rulings(received, 1)
        assert name == "resolve" and payload["irregularity"] == press.id
        assert payload["accept"] is False and payload["alone"] is True
        found = {i.id: i for i in replay.engine.irregularities}
        assert found[press.id].status is Status.RESOLVED and found[illegal.id].status is Status.OPEN
        assert replay.engine.state.illegal_moves_white == 1
        # the same card, now led by the illegal move, the move's penalty on it
        led = page.locator(f'.tboard[data-board="{BOARD}"] .open-incidents .flag[data-flag="{illegal.id}"]')
        await led.wait_for(timeout=5000)
        assert await led.get_attribute("data-incident") == press.id
        await led.locator(".suggestion", has_text="+120 s to the opponent").wait_for(timeout=5000)
        assert await led.locator("button.dismiss-alone").count() == 0
        assert await page.locator("#banner").is_hidden()
        # Undo from the bar: the press leads again
        await page.locator("#undo").wait_for(state="visible", timeout=5000)
        await page.click("#undo-button")
        name, payload = await _rulings(received, 2)
        assert name == "reopen" and payload["irregularity"] == press.id
        await page.locator(f'.tboard[data-board="{BOARD}"] .open-incidents .flag[data-flag="{press.id}"]').wait_for(
            timeout=5000)
        assert replay.engine.state.illegal_moves_white == 1
        assert errors == [] and dialogs == []
        del service


#: after White's illegal knight move f3-f5 (dismissed at _PLAYED_ON_RULE), the game goes on from the board: 3...Nf6
#: 4.d3, each pressed
_PLAY_ON = "6000 L g8 · 6300 P f6 bN · 6600 C B · 8000 L d2 · 8300 P d3 wP · 8600 C W"
_PLAYED_ON_RULE = 4.0


async def test_a_dismissal_undone_after_play_went_on_reopens_the_finding_for_a_reinstatement(
        mosquitto: Broker) -> None:
    """White's illegal knight move (f3-f5) dismissed by mistake (a sensor fault, the arbiter thought); the game goes
    on from the board (3...Nf6 4.d3). Then the arbiter finds it was an illegal move after all and presses Undo on
    the dismissed card. What he expects (7.5.1, "if during a game it is found that an illegal move has been
    completed"; seed 004): the Undo is still allowed, the finding is open again, with its suggestion (reinstate the
    position before it, ply 4) and counted again; the correction cycle the dismissal ended is not restarted by
    itself (play went on: the moves since stay in the record, nothing is awaited on the board, no takeback or
    reinstatement is read into the next changes); nothing rings (the same incident, reopened by him). He reinstates
    from the reopened card: the moves after it are taken back and the position before it awaited."""
    from boardd.core.engine.modes import Phase
    from tests.consumers.test_web import browser, running_web
    from tests.consumers.test_web_two_hands import daemon_side, log_in

    events = _events("L", f"{_knight(0)} · {_PLAY_ON}")
    replay, publications = _replayed(events, _PLAYED_ON_RULE)
    (illegal,) = [i for i in replay.engine.irregularities if i.code == "ILLEGAL_MOVE"]
    assert illegal.suggestion.reinstate_ply == 4 and replay.engine.state.illegal_moves_white == 1
    times = [_PLAYED_ON_RULE - 1.0]
    received: list[tuple[str, dict[str, Any]]] = []
    async with running_web(mosquitto) as service, browser() as chromium, \
            daemon_side(mosquitto, replay, times[0], received, times):
        await publish(mosquitto, publications)
        await wait_until(lambda: _white_count(service) == 1)
        errors: list[str] = []
        dialogs: list[str] = []
        page = await log_in(chromium, service.http_port, errors, dialogs)
        board = page.locator(f'.tboard[data-board="{BOARD}"]')
        card = board.locator(f'.open-incidents .flag[data-flag="{illegal.id}"]')
        await card.wait_for(timeout=5000)
        await card.locator("button.dismiss").click()
        name, payload = await _rulings(received, 1)
        assert name == "resolve" and payload["irregularity"] == illegal.id and payload["accept"] is False
        await card.wait_for(state="detached", timeout=5000)
        assert replay.engine.correction.cycle is None and replay.engine.state.illegal_moves_white == 0
        # the game goes on from the board
        played = _pubs([p for e in events if e.at >= times[-1] for p in replay.feed(e)])
        times.append(events[-1].at + 1.0)
        played += _pubs(list(replay.fire_timers(times[-1])))
        await publish(mosquitto, played)
        moves = [m.uci for m in replay.engine.state.moves]
        assert moves[4:] == ["f3f5", "g8f6", "d2d3"]
        await wait_until(lambda: len((service.hub.hall.boards[BOARD].state or {}).get("moves") or []) == 7)
        # Undo from the dismissed card in the board's Resolved section
        await page.locator(".quiet-boards > summary").click()
        await board.locator(".quiet-row > summary").click()
        await board.locator(".resolved-log > summary").click()
        undo = board.locator(f'.resolved-log .flag[data-flag="{illegal.id}"] button.undo')
        await undo.wait_for(timeout=5000)
        await undo.click()
        name, payload = await _rulings(received, 2)
        assert name == "reopen" and payload["irregularity"] == illegal.id
        found = {i.id: i for i in replay.engine.irregularities}
        assert found[illegal.id].status is Status.OPEN and found[illegal.id].ruling is None
        assert replay.engine.state.illegal_moves_white == 1  # counted again
        # play went on: the cycle is not restarted, the record stays, nothing awaited
        assert replay.engine.correction.cycle is None and replay.engine.g.phase.state is Phase.PLAY
        assert [m.uci for m in replay.engine.state.moves] == moves
        assert [i.code for i in replay.engine.irregularities] == ["ILLEGAL_MOVE"]
        # the card is open again with its reinstatement (ply 4), and nothing rang
        await card.wait_for(timeout=5000)
        assert await card.locator("input.ply").input_value() == "4"
        assert await card.locator("button.undo").count() == 0
        assert await page.locator("#banner").is_hidden()
        await wait_until(lambda: _white_count(service) == 1, 5)
        # he reinstates from it (the tablet asks him to confirm)
        await card.locator("button.reinstate").click()
        name, payload = await _rulings(received, 3)
        assert name == "reinstate" and payload["ply"] == 4 and dialogs and "ply 4" in dialogs[-1]
        assert [m.uci for m in replay.engine.state.moves] == moves[:4]
        assert replay.engine.g.phase.state is Phase.AWAIT_RESTORE
        cycle = replay.engine.correction.cycle
        assert cycle is not None and cycle.irregularity_id == illegal.id
        assert errors == []
