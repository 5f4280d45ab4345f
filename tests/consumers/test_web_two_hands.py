"""A suspected two-handed move, end to end: engine → contract → Mosquitto → ``boardd web`` → headless Chromium → back.

The simulator plays a game with a castling made with two hands (rules-spec R19): the engine raises
``TWO_HANDS_SUSPECTED`` and, at the press, ``TWO_HANDS_AT_PRESS`` in the same incident. The tablet shows one
card, led by the suspicion, with **Confirm two hands** and **Dismiss**; the click goes through the web
service to ``{prefix}/{board}/cmd/resolve``, where a stand-in for the daemon's command handler
(``boardd.daemon.commands.parse_command``, then the same engine through ``boardd.daemon.replay.Replay``)
applies it and publishes what the daemon would. The incident must then close as one: no card left for it,
no related card, the engine's findings all resolved, and a confirmation counted as an illegal move with the
edition's penalty (2023, blitz: 7.5.4, 7.5.5 and A.3).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiomqtt
import pytest

from boardd.consumers.web.app import WebService
from boardd.core.engine.modes import Phase
from boardd.core.events import Reopen
from boardd.core.outputs import Severity, Status
from boardd.daemon.commands import parse_command
from boardd.daemon.replay import Replay, ReplayOptions
from drivers.sim import InjectionKind
from tests.consumers.test_alert_audit import games
from tests.consumers.test_two_hands_nested import _events
from tests.consumers.test_web import PASSWORD, PREFIX, USER, browser, publish, running_web, wait_until
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

BOARD = "t1"


def two_hands_board() -> tuple[Replay, float, list[tuple[str, bytes, bool, int]], str, str]:
    """The simulated board up to the end of its game (not finished): replay, publications, the two findings."""
    sim = games(InjectionKind.TWO_HANDS_CASTLING)[0]
    replay = Replay(sim.header, ReplayOptions(board=BOARD, prefix=PREFIX))
    publications = [(p.topic, p.payload_bytes(), p.retain, p.qos) for event in sim.events for p in replay.feed(event)]
    at_press = next(i for i in replay.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    assert at_press.incident is not None and at_press.status is Status.OPEN
    primary = next(i for i in replay.engine.irregularities if i.id == at_press.incident)
    assert primary.code == "TWO_HANDS_SUSPECTED" and primary.status is Status.OPEN
    assert replay.engine.state.result == "*"
    return replay, sim.events[-1].at, publications, primary.id, at_press.id


@contextlib.asynccontextmanager
async def daemon_side(broker: Broker, replay: Replay, last_at: float,
                      received: list[tuple[str, dict[str, Any]]], times: list[float] | None = None) -> Any:
    """The daemon's command handler for the board: parse, feed the engine, publish its outputs and the answer.

    *times*: the board's time line, shared with a test that feeds the board more events meanwhile (a command is
    applied a second after its last entry, and appended to it)."""
    ready = asyncio.Event()
    times = times if times is not None else [last_at]

    async def serve() -> None:
        async with aiomqtt.Client("127.0.0.1", broker.port) as client:
            await client.subscribe(f"{PREFIX}/{BOARD}/cmd/#", qos=1)
            ready.set()
            async for message in client.messages:
                raw = message.payload if isinstance(message.payload, bytes) else b""
                name = str(message.topic).rsplit("/", 1)[-1]
                received.append((name, json.loads(raw)))
                at = times[-1] + 1.0  # the daemon's timeline: after the board's last event
                times.append(at)
                parsed = parse_command(name, raw, at=at)
                # as the daemon's _check_against_state: a reopen with no dismissal to take back is refused
                error = replay.engine.dismissals.reopen_error(parsed.event.irregularity_id) \
                    if isinstance(parsed.event, Reopen) else None
                out = [*(replay.feed(parsed.event) if error is None else []),
                       replay.publisher.command_result(command_id=parsed.id, ok=error is None, error=error, at=at,
                                                       command=name)]
                for p in out:
                    await client.publish(p.topic, p.payload_bytes(), qos=p.qos, retain=p.retain)

    task = asyncio.create_task(serve())
    try:
        await asyncio.wait_for(ready.wait(), 10)
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@dataclass
class Rig:
    """A logged-in tablet page and the stand-in daemon behind it: the commands it received, the page's errors
    and the dialogs it accepted."""

    service: WebService
    page: Any
    received: list[tuple[str, dict[str, Any]]]
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@contextlib.asynccontextmanager
async def tablet_rig(broker: Broker, replay: Replay, last_at: float, publications: list[tuple[str, bytes, bool, int]],
                     ready: Callable[[WebService], bool]) -> AsyncIterator[Rig]:
    """The web service, Chromium and the stand-in daemon; the board's ``publications`` out, then (once the service
    is ``ready`` with them) the tablet page logged in."""
    received: list[tuple[str, dict[str, Any]]] = []
    async with running_web(broker) as service, browser() as chromium, daemon_side(broker, replay, last_at, received):
        await publish(broker, publications)
        await wait_until(lambda: ready(service))
        rig = Rig(service=service, page=None, received=received)
        assert service.http_port is not None
        rig.page = await log_in(chromium, service.http_port, rig.errors, rig.dialogs)
        yield rig


async def log_in(chromium: Any, port: int, errors: list[str], dialogs: list[str]) -> Any:
    page = await chromium.new_page(viewport={"width": 1024, "height": 768})
    page.on("pageerror", lambda error: errors.append(str(error)))

    async def accept(dialog: Any) -> None:
        dialogs.append(dialog.message)
        await dialog.accept()

    page.on("dialog", lambda dialog: asyncio.ensure_future(accept(dialog)))
    await page.goto(f"http://127.0.0.1:{port}/arbiter/login")
    await page.fill('input[name="username"]', USER)
    await page.fill('input[name="password"]', PASSWORD)
    await page.click('button[type="submit"]')
    await page.wait_for_selector("#summary:not(:empty)", timeout=5000)
    return page


@pytest.mark.parametrize("button", ["confirm", "resolve"])
async def test_two_hands_incident_is_confirmed_or_dismissed_as_one(mosquitto: Broker, button: str) -> None:
    replay, last_at, publications, primary, at_press = two_hands_board()
    await publish(mosquitto, publications)
    received: list[tuple[str, dict[str, Any]]] = []
    async with running_web(mosquitto) as service, browser() as chromium, \
            daemon_side(mosquitto, replay, last_at, received):
        await wait_until(lambda: BOARD in service.hub.hall.boards and len(service.hub.extra[BOARD].irregularities) > 1)
        errors: list[str] = []
        dialogs: list[str] = []
        page = await log_in(chromium, service.http_port, errors, dialogs)
        board = page.locator(f'.tboard[data-board="{BOARD}"]')
        card = board.locator(f'.open-incidents .flag[data-incident="{primary}"]')
        await card.wait_for(timeout=5000)
        # One card for the incident, led by the suspicion, the press finding folded inside; no card of its own.
        assert await card.get_attribute("data-flag") == primary
        assert await board.locator(f'.flag[data-flag="{at_press}"]').count() == 0
        assert await card.locator(f'.related-finding[data-flag="{at_press}"]').count() == 1
        assert await card.locator("button.confirm").inner_text() == "Confirm two hands"
        assert await card.locator("button.resolve").inner_text() == "Dismiss"
        await card.locator(f"button.{button}").click()
        await wait_until(lambda: len(received) == 1, 5)
        name, payload = received[0]
        assert name == "resolve" and payload["irregularity"] == at_press
        assert payload["accept"] is (button == "confirm")
        if button == "confirm":
            assert dialogs and "7.5.4" in dialogs[0]
        # The engine applied it; the incident closed as one.
        found = {i.id: i for i in replay.engine.irregularities}
        assert found[primary].status is Status.RESOLVED and found[at_press].status is Status.RESOLVED
        assert found[primary].ruling is not None and found[primary].ruling.startswith(f"resolved with {at_press}")
        assert primary not in replay.engine.state.open_irregularities
        assert at_press not in replay.engine.state.open_irregularities
        state = replay.engine.state
        illegal = state.illegal_moves_white if found[at_press].side else state.illegal_moves_black
        if button == "confirm":  # 2023, blitz 3+2: an illegal move (7.5.4); 7.5.5 with A.3: one minute, not two
            assert found[at_press].severity is Severity.ILLEGAL_MOVE and illegal == 1
            assert found[at_press].suggestion.add_to_opponent_s == 60
        else:
            assert found[at_press].severity is Severity.WARNING and illegal == 0
        # On the page: the card leaves the open incidents (into Resolved), nothing of it is left open.
        await card.wait_for(state="detached", timeout=5000)
        assert await board.locator(f'.open-incidents .flag[data-flag="{at_press}"]').count() == 0
        assert await board.locator(f'.open-incidents [data-flag="{at_press}"]').count() == 0
        await page.locator(f'.resolved-log .flag[data-incident="{primary}"]').wait_for(state="attached", timeout=5000)
        assert await page.locator(f'.flag[data-incident="{at_press}"]').count() == 0
        await page.locator(f'.flag[data-incident="{primary}"] .outcome.ok').wait_for(state="attached", timeout=5000)
        assert await page.locator("#banner").is_hidden()  # a confirmation rings nothing: it is resolved already
        view = service.hub.arbiter_view(BOARD, 0.0)
        assert view is not None
        (incident,) = [i for i in view["incidents"] if i["id"] == primary]
        assert incident["status"] == "resolved" and not incident["needs_arbiter"] and incident["two_hands"] is None
        assert errors == []


async def test_two_hands_after_the_opponents_illegal_move_is_a_card_of_its_own(mosquitto: Broker) -> None:
    """White's two-handed castling right after Black's illegal move (not yet ruled on): two incidents, two
    cards. White's card has Confirm two hands; confirmed, White's incident closes and White's illegal move is
    counted, while Black's card stays for its own ruling (7.5.5: each player's irregularity for that player)."""
    replay = Replay(None, ReplayOptions(board=BOARD, prefix=PREFIX))
    publications = [(p.topic, p.payload_bytes(), p.retain, p.qos) for event in _events() for p in replay.feed(event)]
    publications += [(p.topic, p.payload_bytes(), p.retain, p.qos) for p in replay.fire_timers(10.0)]
    found = {i.code: i for i in replay.engine.irregularities}
    illegal, suspected, at_press = (found[c].id for c in ("ILLEGAL_MOVE", "TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"))
    async with tablet_rig(mosquitto, replay, 10.0, publications, lambda service: BOARD in service.hub.extra
                          and len(service.hub.extra[BOARD].irregularities) == 3) as rig:
        page, received, errors = rig.page, rig.received, rig.errors
        board = page.locator(f'.tboard[data-board="{BOARD}"]')
        white = board.locator(f'.open-incidents .flag[data-incident="{suspected}"]')
        black = board.locator(f'.open-incidents .flag[data-incident="{illegal}"]')
        await white.wait_for(timeout=5000)
        await black.wait_for(timeout=5000)
        assert await board.locator(".open-incidents .flag.incident").count() == 2  # one card per incident
        assert await black.locator("button.confirm").count() == 0
        await white.locator("button.confirm").click()
        await wait_until(lambda: len(received) == 1, 5)
        assert received[0][0] == "resolve" and received[0][1]["irregularity"] == at_press
        assert received[0][1]["accept"] is True
        state = replay.engine.state
        assert state.open_irregularities == (illegal,)
        assert (state.illegal_moves_white, state.illegal_moves_black) == (1, 1)
        await white.wait_for(state="detached", timeout=5000)
        assert await board.locator(".open-incidents .flag.incident").count() == 1
        assert await black.count() == 1
        assert errors == []


async def test_reinstate_then_dismiss_ends_the_wait_for_the_board(mosquitto: Broker) -> None:
    """The arbiter presses Reinstate on the two-handed castling's card, then finds it was one hand and presses
    Dismiss. The dismissal makes the reinstatement moot: the daemon stops waiting for the position before the
    castling, the castling is the record again and play goes on from the board (before: the engine kept
    awaiting the restoration, the castling lost from the record)."""
    replay, last_at, publications, primary, at_press = two_hands_board()
    moves = [m.san for m in replay.engine.state.moves]
    await publish(mosquitto, publications)
    received: list[tuple[str, dict[str, Any]]] = []
    async with running_web(mosquitto) as service, browser() as chromium, \
            daemon_side(mosquitto, replay, last_at, received):
        await wait_until(lambda: BOARD in service.hub.hall.boards and len(service.hub.extra[BOARD].irregularities) > 1)
        errors: list[str] = []
        dialogs: list[str] = []
        page = await log_in(chromium, service.http_port, errors, dialogs)
        board = page.locator(f'.tboard[data-board="{BOARD}"]')
        card = board.locator(f'.open-incidents .flag[data-incident="{primary}"]')
        await card.wait_for(timeout=5000)
        await card.locator("button.reinstate").click()
        await wait_until(lambda: len(received) == 1, 5)
        assert received[0][0] == "reinstate" and dialogs and dialogs[0].startswith("Reinstate")
        # the position before the castling (the suspicion's ply: it was seen while the castling was being made)
        suspected = next(i for i in replay.engine.irregularities if i.id == primary)
        castling = max(ply for ply, san in enumerate(moves) if san.startswith("O-O"))
        assert received[0][1]["ply"] == suspected.ply == castling
        assert replay.engine.g.phase.state is Phase.AWAIT_RESTORE
        assert len(replay.engine.state.moves) < len(moves)
        await card.locator("button.resolve").click()  # Dismiss
        await wait_until(lambda: len(received) == 2, 5)
        name, payload = received[1]
        assert name == "resolve" and payload["irregularity"] == at_press and payload["accept"] is False
        assert replay.engine.g.phase.state is Phase.PLAY
        assert [m.san for m in replay.engine.state.moves] == moves
        await card.wait_for(state="detached", timeout=5000)
        # the retained state the tablet reads has the castling again
        await wait_until(lambda: len(service.hub.hall.boards[BOARD].state.get("moves") or ()) == len(moves), 5)
        assert errors == []
