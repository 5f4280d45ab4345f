"""A flapping board link in the page itself: real Mosquitto, real ``boardd web``, headless Chromium.

Board 1's USB connector is loose: its daemon publishes ``status`` degraded/online every 100-400 ms (seeded)
for several seconds. A MutationObserver in the tablet page records every time board 1's card enters the
needs-you list (the board drawn in full, not as a quiet line) and every render that inserts it: the board
must enter once and stay, not flicker in and out with each drop. Board 2's board then really goes: it must
need the arbiter after the grace period, promptly.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from boardd.consumers.relay import MqttSettings
from boardd.consumers.web.app import WebConfig, WebService
from boardd.consumers.web.auth import hash_password
from boardd.consumers.web.links import LinkPolicy
from tests.consumers.feed import Feed, Publication, interleave
from tests.consumers.test_web import PASSWORD, PREFIX, USER, browser, publish, round_of, wait_until
from tests.consumers.test_web_incidents import log_in
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

POLICY = LinkPolicy(grace=2.0, unstable=3, window=60.0, settle=3.0)

WATCH = """() => {
  const seen = {entries: 0, exits: 0, inserted: 0, at: []};
  let inside = false;
  const card = (board) => document.querySelector(`.tboard:not(.quiet)[data-board="${board}"]`);
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType === 1 && node.matches('.tboard:not(.quiet)[data-board="t1"]')) seen.inserted += 1;
      }
    }
    const now = card("t1") !== null;
    if (now && !inside) { seen.entries += 1; seen.at.push(performance.now()); }
    if (!now && inside) seen.exits += 1;
    inside = now;
  }).observe(document.getElementById("boards"), {childList: true, subtree: true});
  window.__t1 = seen;
}"""


def status(feed: Feed, *, up: bool) -> Publication:
    """The daemon's status on a board link change (the contract's ``link_change`` with its time)."""
    return feed._json("status", True, 1, state="online" if up else "degraded",
                      board_link={"driver": "dgt", "port": "/dev/ttyACM0", "serial": "B1", "connected": up},
                      clock_link={"model": "dgt3000", "connected": True}, software="test",
                      link_change={"link": "board", "up": up, "detail": "/dev/ttyACM0" if up else "USB read failed",
                                   "at": feed.iso(feed.now), "at_s": feed.now})


async def flap(broker: Broker, feed: Feed, rng: random.Random, seconds: float) -> int:
    """A loose connector for *seconds*: the board's status degraded/online every 100-400 ms (seeded), each sent
    when it happens, the Pi's time moving along; the number of drops."""
    started = time.monotonic()
    drops = 0
    while time.monotonic() - started < seconds:
        for up in (False, True):
            pause = rng.uniform(0.1, 0.4)
            await publish(broker, [status(feed, up=up)])
            drops += not up
            await asyncio.sleep(pause)
            feed.now += pause
    return drops


@contextlib.asynccontextmanager
async def web_with(broker: Broker, links: LinkPolicy) -> AsyncIterator[WebService]:
    config = WebConfig(mqtt=MqttSettings(port=broker.port, prefix=PREFIX), host="127.0.0.1", port=0,
                       users={USER: hash_password(PASSWORD, n=2**12)}, title="Test Open", links=links)
    service = WebService(config)
    task = asyncio.create_task(service.serve())
    try:
        await asyncio.wait_for(service.connected.wait(), 10)
        yield service
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_flapping_link_does_not_flicker_in_the_needs_you_list(mosquitto: Broker, pgn_dir: Path) -> None:
    rng = random.Random(11)
    feeds = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=2)]
    await publish(mosquitto, interleave([f.publications(upto=4) for f in feeds]))
    await publish(mosquitto, [status(f, up=True) for f in feeds])
    published = time.monotonic()
    async with web_with(mosquitto, POLICY) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 2)
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        await page.wait_for_selector('.tboard.quiet[data-board="t1"]', state="attached", timeout=5000)
        await page.evaluate(WATCH)
        # The loose connector: ~8 s of drops, each status sent when it happens (the Pi's time moves along).
        t1 = feeds[0]
        # the Pi's time moved on while the page was set up (a status dated at the old time would be a drop
        # that began seconds ago: down past the grace period at once)
        t1.now += time.monotonic() - published
        started = time.monotonic()
        drops = await flap(mosquitto, t1, rng, 8.0)
        assert drops >= 15
        await asyncio.sleep(0.5)  # the page draws at most every 150 ms
        seen = await page.evaluate("() => window.__t1")
        assert seen["entries"] == 1 and seen["exits"] == 0, seen  # in once, and it stayed
        await page.wait_for_selector('.tboard:not(.quiet)[data-board="t1"] .link-state', timeout=3000)
        assert "LINK UNSTABLE" in await page.locator('.tboard[data-board="t1"] .link-state').inner_text()
        alert = await page.locator('.tboard[data-board="t1"] .link-alert').inner_text()
        assert "drops in the last minute" in alert
        summary = await page.locator("#summary").inner_text()
        assert "1 with link trouble" in summary
        # The page saw it early: within ~2 s of the flapping's start (the third drop), not after it.
        first = await page.evaluate("() => window.__t1.at[0] - performance.now()")
        assert time.monotonic() + first / 1000 - started < 3.0
        # Board 2's board really goes: it needs the arbiter after the grace period (2 s here), promptly.
        t2 = feeds[1]
        t2.now += 30
        await publish(mosquitto, [status(t2, up=False)])
        gone = time.monotonic()
        await page.wait_for_selector('.tboard:not(.quiet)[data-board="t2"]', state="attached", timeout=6000)
        waited = time.monotonic() - gone
        assert POLICY.grace - 0.3 <= waited <= POLICY.grace + 1.5, waited
        assert "DEGRADED" in await page.locator('.tboard[data-board="t2"] .link-state').inner_text()
        assert "USB read failed" in await page.locator('.tboard[data-board="t2"] .link-why').inner_text()
        seen = await page.evaluate("() => window.__t1")
        assert seen["entries"] == 1 and seen["exits"] == 0, seen
        print(f"t1: {drops} drops, entered needs-you {seen['entries']}x, its card re-drawn {seen['inserted']}x; "
              f"t2 needed the arbiter {waited:.2f} s after its link went down")
        assert errors == []

