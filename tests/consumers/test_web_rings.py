"""The tablet's attention signal (banner, pulse, beep): one incident, one ring. Real Mosquitto, real ``boardd web``,
headless Chromium.

* **Link trouble rings** like an irregularity that needs the arbiter: once when the board enters the needs-you
  list for its link (down for the grace period, or unstable), not with each drop, not again while it stays,
  not when it leaves; the arbiter's "Seen" and the sound switch are respected.
* **Info findings never ring**: a real engine game full of notes (announced adjustments, sensor flicker, a
  paused clock, a late press) and notes of the kinds the engine files as info (the promotion ritual of 2009, a
  Chess960 castling order, an arbiter's clock adjustment), also as an older daemon sends them (``open``), ring
  nothing and put no board in the needs-you list, on the tablet and in the hall view; the game's warning
  (a touch-move suspicion) rings once and enters the list.

The page's rings are counted by the banner (``data-rings``: one more for each ring), its beeps by the
oscillators the page creates (the sound switched on by a click, as the arbiter does).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from boardd.consumers.relay import MqttSettings
from boardd.consumers.web.app import WebConfig, WebService
from boardd.consumers.web.auth import hash_password
from boardd.core.laws.codes import code_info
from boardd.daemon.replay import Replay, ReplayOptions
from drivers.sim import InjectionKind
from tests.consumers.feed import Feed, interleave
from tests.consumers.test_alert_audit import games
from tests.consumers.test_web import PASSWORD, PREFIX, USER, browser, publish, round_of, running_web, wait_until
from tests.consumers.test_web_links import POLICY, flap, status, web_with
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

#: Counts the oscillators the page starts: three for an illegal move, two for a warning, one for the link.
BEEPS = """
window.__beeps = 0;
if (window.AudioContext) {
  const start = AudioContext.prototype.createOscillator;
  AudioContext.prototype.createOscillator = function () { window.__beeps += 1; return start.call(this); };
}
"""


async def tablet(chromium: Any, port: int, errors: list[str]) -> Any:
    """A tablet page, logged in, with the sound switched on (a click, as the arbiter does)."""
    context = await chromium.new_context(viewport={"width": 1024, "height": 900})
    await context.add_init_script(BEEPS)
    page = await context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"http://127.0.0.1:{port}/arbiter/login")
    await page.fill('input[name="username"]', USER)
    await page.fill('input[name="password"]', PASSWORD)
    await page.click('button[type="submit"]')
    await page.wait_for_selector("#summary:not(:empty)", timeout=5000)
    await page.click("#sound")
    assert await page.locator("#sound").get_attribute("aria-pressed") == "true"
    return page


async def rings(page: Any) -> tuple[int, int]:
    """(rings, beeps) so far."""
    got = await page.evaluate("() => [Number(document.getElementById('banner').dataset.rings || 0), window.__beeps]")
    return int(got[0]), int(got[1])


async def rung(page: Any, count: int) -> None:
    await page.wait_for_function(f"() => Number(document.getElementById('banner').dataset.rings || 0) >= {count}",
                                 timeout=8000)


async def test_link_trouble_rings_once_per_incident(mosquitto: Broker, pgn_dir: Path) -> None:
    rng = random.Random(21)
    feeds = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=2)]
    await publish(mosquitto, interleave([f.publications(upto=4) for f in feeds]))
    await publish(mosquitto, [status(f, up=True) for f in feeds])
    published = time.monotonic()
    async with web_with(mosquitto, POLICY) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 2)
        errors: list[str] = []
        page = await tablet(chromium, service.http_port, errors)
        banner = page.locator("#banner")
        assert await rings(page) == (0, 0)
        t1, t2 = feeds
        base = t2.now

        def now_on_t2() -> None:
            """Board 2's Pi dates its next status now (its clock moved on with ours)."""
            t2.now = base + time.monotonic() - published

        t1.now += time.monotonic() - published  # the Pi's clock moved on while the page started
        # 1. Board 1's loose connector (~4 s): one ring when it enters the list (unstable), one beep.
        drops = await flap(mosquitto, t1, rng, 4.0)
        await page.wait_for_function(f"""() => (document.querySelector('.tboard[data-board="t1"] .link-alert')
            || {{}}).textContent === 'Link: link unstable: {drops} drops in the last minute; up now'""", timeout=5000)
        assert await rings(page) == (1, 1), drops
        assert (await page.locator("#banner-text").inner_text()).startswith("LINK — Board 1 — link unstable: ")
        assert await banner.get_attribute("data-kind") == "link"
        # 2. The arbiter has seen it; the connector goes on (~2 s): it stays in the list, nothing rings again.
        await page.click("#banner-seen")
        await banner.wait_for(state="hidden", timeout=2000)
        more = drops + await flap(mosquitto, t1, rng, 2.0)
        await page.wait_for_function(f"""() => document.querySelector('.tboard[data-board="t1"] .link-alert')
            .textContent.includes(': {more} drops')""", timeout=5000)
        assert await rings(page) == (1, 1) and await banner.is_hidden()
        # 3. Board 2 really goes: it rings after the grace period, once.
        now_on_t2()
        await publish(mosquitto, [status(t2, up=False)])
        gone = time.monotonic()
        await rung(page, 2)
        waited = time.monotonic() - gone
        assert POLICY.grace - 0.3 <= waited <= POLICY.grace + 1.5, waited
        assert await rings(page) == (2, 2)
        assert (await page.locator("#banner-text").inner_text()).startswith("LINK — Board 2 — link down for 2 s")
        await page.wait_for_selector('.tboard:not(.quiet)[data-board="t2"]', state="attached", timeout=3000)
        # 4. The arbiter switches the sound off. Board 2 comes back and its incident ends (settle, 3 s): it leaves
        # the list without a ring; the banner entry for it goes by itself (it no longer needs the arbiter).
        await page.click("#sound")
        now_on_t2()
        await publish(mosquitto, [status(t2, up=True)])
        await page.wait_for_selector('.tboard.quiet[data-board="t2"]', state="attached", timeout=8000)
        assert await rings(page) == (2, 2)
        await banner.wait_for(state="hidden", timeout=2000)
        # 5. It goes again: a new incident, a new ring, and no beep (the sound is off).
        now_on_t2()
        await publish(mosquitto, [status(t2, up=False)])
        await rung(page, 3)
        assert await rings(page) == (3, 2)
        assert await banner.is_visible()
        print(f"t1: {more} drops, 1 ring; t2: rang {waited:.2f} s after its link went down, then again (muted)")
        assert errors == []


async def test_a_link_incident_that_starts_again_while_the_tablet_is_away_rings(mosquitto: Broker,
                                                                                pgn_dir: Path) -> None:
    """Board 1's link goes (one ring). The tablet's socket goes down, and its reconnections fail, while the link
    comes back, its incident ends and the link goes again: a new incident. When the socket is back the page must
    ring for it (before: it never saw the first end and took the second for the first: no ring). Another socket
    drop during that incident rings nothing (one incident, one ring)."""
    (t1,) = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=1)]
    await publish(mosquitto, [*interleave([t1.publications(upto=4)]), status(t1, up=True)])
    published = time.monotonic()
    base = t1.now

    def now_on_t1() -> None:
        """Board 1's Pi dates its next status now (its clock moved on with ours)."""
        t1.now = base + time.monotonic() - published

    away = False

    async def socket(route: Any) -> None:
        """The tablet's network: while ``away``, its socket is refused; else it reaches the service."""
        if away:
            await route.close()
        else:
            route.connect_to_server()

    async with web_with(mosquitto, POLICY) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 1)
        errors: list[str] = []
        page = await tablet(chromium, service.http_port, errors)
        await page.route_web_socket("**/arbiter/ws", socket)

        def drop_socket() -> None:
            for client in list(service.clients):
                if client.audience == "arbiter":
                    client.queue.put_nowait(None)  # the service closes it; the page reconnects through socket()

        def link_incident() -> bool:
            return service.hub.link_alert("t1", service.clock()) is not None

        now_on_t1()
        await publish(mosquitto, [status(t1, up=False)])
        await rung(page, 1)
        first = await page.evaluate("() => boards.get('t1').view.link_alert.since")
        # The tablet is away while the incident ends (up for the settle time) and a new one starts (grace).
        away = True
        drop_socket()
        await page.wait_for_function("() => document.getElementById('link').dataset.state === 'closed'",
                                     timeout=5000)
        now_on_t1()
        await publish(mosquitto, [status(t1, up=True)])
        await wait_until(lambda: not link_incident(), POLICY.settle + 3)
        now_on_t1()
        await publish(mosquitto, [status(t1, up=False)])
        await wait_until(link_incident, POLICY.grace + 3)
        assert await rings(page) == (1, 1)
        away = False
        await rung(page, 2)   # the reconnected page's snapshot: a new incident, one ring
        assert await page.evaluate("() => boards.get('t1').view.link_alert.since") != first
        assert await rings(page) == (2, 2)
        assert (await page.locator("#banner-text").inner_text()).startswith("LINK — Board 1 — link down")
        # The socket drops again, the same incident goes on: nothing rings again.
        drop_socket()
        await page.wait_for_function("() => document.getElementById('link').dataset.state === 'closed'",
                                     timeout=5000)
        await page.wait_for_function("() => document.getElementById('link').dataset.state === 'open'",
                                     timeout=10000)
        await page.wait_for_function("() => boards.has('t1')", timeout=5000)
        await asyncio.sleep(1.0)
        assert await rings(page) == (2, 2) and link_incident()
        assert errors == []


async def noted(page: Any, board: str, note: str) -> None:
    """The page has the board's note (in the view it draws from: a quiet board's log is drawn when opened)."""
    await page.wait_for_function(f"() => (boards.get('{board}')?.view.log || []).includes('{note}')", timeout=8000)
    await page.wait_for_function("() => renderTimer === null", timeout=3000)   # and drew it


def engine_game(kind: InjectionKind, board: str) -> tuple[list[tuple[str, bytes, bool, int]], Replay]:
    """The simulator's game with ``kind`` through the real engine and the contract publisher."""
    sim = games(kind)[0]
    replay = Replay(sim.header, ReplayOptions(board=board, prefix=PREFIX))
    return [(p.topic, p.payload_bytes(), p.retain, p.qos) for event in sim.events for p in replay.feed(event)], replay


def info(feed: Feed, ident: str, code: str, ply: int, status: str) -> tuple[str, bytes, bool, int]:
    """A finding of ``code`` with the severity the Laws table gives it (info), published ``status``."""
    severity = code_info(code, 2023 if code != "PROMOTION_ORDER_2009" else 2009).severity.value
    assert severity == "info", code
    return feed.irregularity(ident, code=code, severity=severity, ply=ply, status=status, incident=None)


async def test_info_findings_never_ring_nor_need_the_arbiter_warnings_do(mosquitto: Broker, pgn_dir: Path) -> None:
    touch, touch_replay = engine_game(InjectionKind.TOUCH_MOVE, "t1")     # adjustments, flicker, pause; a warning
    late, late_replay = engine_game(InjectionKind.LATE_PRESS, "t2")       # late press, paused clock: info only
    found = {i.id: i for i in touch_replay.engine.irregularities}
    (warning,) = [i for i in found.values() if i.severity.value == "warning"]
    assert warning.code == "TOUCH_MOVE_SUSPECTED"
    notes = [i.id for i in found.values() if i.severity.value == "info"]
    assert {found[i].code for i in notes} >= {"ADJUST_OBSERVED", "SENSOR_FLICKER"}
    assert {i.severity.value for i in late_replay.engine.irregularities} == {"info"}
    # the board's publications up to the warning (exclusive), and from it
    cut = next(n for n, (topic, payload, _, _) in enumerate(touch)
               if topic.endswith("/irregularity") and f'"id":"{warning.id}"'.encode() in payload.replace(b" ", b""))
    (game3,) = round_of(pgn_dir, boards=3)[2:]
    third = Feed(game3, prefix=PREFIX)
    async with running_web(mosquitto) as service, browser() as chromium:
        start = [next(n for n, p in enumerate(game) if p[0].endswith("/state")) + 1 for game in (touch, late)]
        await publish(mosquitto, touch[:start[0]] + late[:start[1]] +
                      [p for step in third.publications(upto=6) for p in step])
        await wait_until(lambda: {"t1", "t2", "t3"} <= set(service.hub.hall.boards))
        errors: list[str] = []
        page = await tablet(chromium, service.http_port, errors)
        await page.wait_for_selector('.tboard[data-board="t3"]', state="attached", timeout=5000)
        hall = await page.context.new_page()
        hall.on("pageerror", lambda error: errors.append(str(error)))
        await hall.goto(f"http://127.0.0.1:{service.http_port}/arbiter/hall")
        await hall.wait_for_function("() => document.querySelectorAll('.tile').length === 3", timeout=5000)
        # Everything up to the warning: notes only, live (after the page's first snapshot).
        await publish(mosquitto, touch[start[0]:cut] + late[start[1]:] + [
            info(third, "2-1", "PROMOTION_ORDER_2009", 2, "noted"),      # the promotion ritual of 2009
            info(third, "3-2", "CHESS960_CASTLING_ORDER", 3, "noted"),   # castling order, arbiter to verify
            info(third, "4-3", "ARBITER_ADJUST", 4, "noted"),            # the arbiter's clock adjustment
            info(third, "5-4", "ADJUST_OBSERVED", 5, "open"),            # an older daemon: an info finding 'open'
            info(third, "6-5", "CLOCK_LATE_PRESS", 6, "open"),
        ])
        last_note = max((i for i in notes if found[i].ply < warning.ply), key=lambda i: found[i].ply)
        for board, note in [("t1", last_note), ("t2", late_replay.engine.irregularities[-1].id), ("t3", "6-5")]:
            await noted(page, board, note)
        assert await rings(page) == (0, 0)
        assert await page.locator("#banner").is_hidden()
        assert await page.locator(".tboard:not(.quiet)").count() == 0     # nobody needs the arbiter
        assert await page.locator(".flag").count() == 0                   # no card for a note
        assert "0 need you" in await page.locator("#summary").inner_text()
        assert await hall.evaluate("() => [...document.querySelectorAll('.tile')].map((t) => t.dataset.rank)") == \
            ["0", "0", "0"]
        assert " 0 alerts " in await hall.locator("#counts").inner_text()
        # The warning: one ring (two beeps), board 1 enters the list with its card; the hall's tile turns amber.
        await publish(mosquitto, touch[cut:])
        await rung(page, 1)
        await page.locator(f'.tboard:not(.quiet)[data-board="t1"] .flag[data-incident="{warning.id}"]').wait_for(
            timeout=5000)
        text = await page.locator("#banner-text").inner_text()
        assert text.startswith("WARNING — t1 — ") and "Own piece lifted first" in text, text
        assert await page.locator("#banner").get_attribute("data-kind") == "warning"
        await hall.wait_for_function("() => document.querySelector('.tile[data-board=\"t1\"]').dataset.rank === '2'",
                                     timeout=5000)
        # the rest of the game (more notes, the pause) rings nothing more
        after = [i for i in notes if found[i].ply > warning.ply]
        for note in after:
            await noted(page, "t1", note)
        # the notes are lines of the board's event log, not cards
        log = page.locator('.tboard[data-board="t1"] .event-log')
        assert await log.locator('li[data-type="FINDING"]').count() == len(notes)
        assert await page.locator(f'.tboard[data-board="t1"] .flag[data-flag="{last_note}"]').count() == 0
        assert await rings(page) == (1, 2)
        assert await page.locator(".tboard:not(.quiet)").count() == 1
        # The hall view's detail of board 1: the warning is its one incident; the notes are a list of their own.
        await hall.click('.tile[data-board="t1"]')
        await hall.wait_for_selector(f'#detail-flags li[data-flag="{warning.id}"]', timeout=5000)
        shown = [await li.get_attribute("data-flag") for li in await hall.locator("#detail-flags li").all()]
        assert shown == [warning.id], shown
        assert await hall.locator("#detail-notes li[data-flag]").count() == len(notes)
        assert errors == []


@contextlib.asynccontextmanager
async def web_ringing(broker: Broker, ring: tuple[str, ...]) -> AsyncIterator[WebService]:
    config = WebConfig(mqtt=MqttSettings(port=broker.port, prefix=PREFIX), host="127.0.0.1", port=0,
                       users={USER: hash_password(PASSWORD, n=2**12)}, title="Test Open", links=POLICY, ring=ring)
    service = WebService(config)
    task = asyncio.create_task(service.serve())
    try:
        await asyncio.wait_for(service.connected.wait(), 10)
        yield service
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_the_hall_chooses_what_rings(mosquitto: Broker, pgn_dir: Path) -> None:
    """``[web] ring = ["illegal-move"]``: a warning and a board gone ring nothing (they enter the needs-you list
    all the same); an illegal move rings."""
    feeds = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=3)]
    await publish(mosquitto, interleave([f.publications(upto=4) for f in feeds]))
    await publish(mosquitto, [status(f, up=True) for f in feeds])
    published = time.monotonic()
    async with web_ringing(mosquitto, ("illegal-move",)) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 3)
        errors: list[str] = []
        page = await tablet(chromium, service.http_port, errors)
        t1, t2, t3 = feeds
        t2.now += time.monotonic() - published  # the Pi's clock moved on while the page started
        await publish(mosquitto, [t1.irregularity("4-1", code="CLOCK_PRESS_NO_MOVE", severity="warning", ply=4),
                                  status(t2, up=False)])
        await page.wait_for_selector('.tboard:not(.quiet)[data-board="t1"] .flag[data-flag="4-1"]', timeout=5000)
        await page.wait_for_selector('.tboard:not(.quiet)[data-board="t2"] .link-state', timeout=8000)
        assert await rings(page) == (0, 0) and await page.locator("#banner").is_hidden()
        await publish(mosquitto, [t3.irregularity("4-1", ply=4, side="black")])
        await rung(page, 1)
        assert await rings(page) == (1, 3)
        assert (await page.locator("#banner-text").inner_text()).startswith("ILLEGAL MOVE — Board 3 — Black")
        assert await page.locator("#banner").get_attribute("data-kind") == "illegal"
        assert errors == []
