"""A flapping board link in the hall view (/arbiter/hall): real Mosquitto, real ``boardd web``, headless Chromium.

Board 1's USB connector is loose (a status degraded/online every 100-400 ms, seeded, ~6 s). A MutationObserver
records every value the hall shows for it: board 1's dot (the tile's ``data-link``) and the link figure of the
hall's summary line. The dot and the figure say when a board needs the arbiter: board 1's changes once (to
"unstable"), the count goes 0 → 1 once, not with each drop. Board 2's board then really goes: its dot and the
count show it after the grace period.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from pathlib import Path

import pytest

from tests.consumers.feed import Feed, interleave
from tests.consumers.test_web import PASSWORD, PREFIX, USER, browser, publish, round_of, wait_until
from tests.consumers.test_web_links import POLICY, flap, status, web_with
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

WATCH = r"""() => {
  const seen = {links: [], counts: []};
  const tile = () => document.querySelector('.tile[data-board="t1"]');
  // the link figure of the summary ("N with link trouble"; before: "N link down")
  const figure = () => {
    const m = document.getElementById("counts").textContent.match(/(\d+) (?:with link trouble|link down)/);
    return m ? Number(m[1]) : null;
  };
  const note = () => {
    const link = tile().dataset.link, count = figure();
    if (seen.links[seen.links.length - 1] !== link) seen.links.push(link);
    if (seen.counts[seen.counts.length - 1] !== count) seen.counts.push(count);
  };
  note();
  new MutationObserver(note).observe(document.body,
    {childList: true, subtree: true, attributes: true, characterData: true});
  window.__hall = seen;
}"""


async def test_a_flapping_link_does_not_flicker_in_the_hall_view(mosquitto: Broker, pgn_dir: Path) -> None:
    rng = random.Random(5)
    feeds = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=2)]
    await publish(mosquitto, interleave([f.publications(upto=4) for f in feeds]))
    await publish(mosquitto, [status(f, up=True) for f in feeds])
    published = time.monotonic()
    async with web_with(mosquitto, POLICY) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 2)
        page = await chromium.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        base = f"http://127.0.0.1:{service.http_port}"
        await page.goto(f"{base}/arbiter/login")
        await page.fill('input[name="username"]', USER)
        await page.fill('input[name="password"]', PASSWORD)
        await page.click('button[type="submit"]')
        await page.wait_for_url(f"{base}/arbiter")
        await page.goto(f"{base}/arbiter/hall")
        await page.wait_for_function("() => document.querySelectorAll('.tile').length === 2", timeout=10000)
        await page.evaluate(WATCH)
        t1 = feeds[0]
        t1.now += time.monotonic() - published  # the Pi's clock moved on while the page started
        drops = await flap(mosquitto, t1, rng, 6.0)
        assert drops >= 10
        await asyncio.sleep(0.5)
        seen = await page.evaluate("() => window.__hall")
        assert seen["links"] == ["online", "unstable"], seen   # one change of the dot, for the incident
        assert seen["counts"] == [0, 1], seen                  # the count went up once and stayed
        # Board 2 really goes: its dot and the count show it after the grace period (2 s here).
        t2 = feeds[1]
        t2.now += 30
        await publish(mosquitto, [status(t2, up=False)])
        gone = time.monotonic()
        await page.wait_for_function(
            "() => document.querySelector('.tile[data-board=\"t2\"]').dataset.link === 'degraded'", timeout=6000)
        waited = time.monotonic() - gone
        assert POLICY.grace - 0.3 <= waited <= POLICY.grace + 1.5, waited
        counts = await page.locator("#counts").inner_text()
        assert re.search(r"\b2 with link trouble", counts), counts
        seen = await page.evaluate("() => window.__hall")
        assert seen["links"] == ["online", "unstable"] and seen["counts"] == [0, 1, 2], seen
        print(f"t1: {drops} drops, dot values {seen['links']}, link counts {seen['counts']}; "
              f"t2 shown down {waited:.2f} s after its link went down")
        assert errors == []


DETAIL = r"""() => {
  const seen = {lists: 0, links: []};
  new MutationObserver((records) => {
    seen.lists += records.filter((r) => r.type === "childList").length;
  }).observe(document.getElementById("detail-flags"), {childList: true, subtree: true});
  new MutationObserver((records) => {
    seen.lists += records.filter((r) => r.type === "childList").length;
  }).observe(document.getElementById("detail-events"), {childList: true, subtree: true});
  const link = document.getElementById("detail-link");
  new MutationObserver(() => {
    if (seen.links[seen.links.length - 1] !== link.textContent) seen.links.push(link.textContent);
  }).observe(link, {childList: true, subtree: true, characterData: true});
  window.__detail = seen;
}"""


async def test_the_open_detail_of_a_flapping_board_keeps_its_lists(mosquitto: Broker, pgn_dir: Path) -> None:
    """The arbiter opened board 1's detail in the hall view (its open warning and its log); its connector is
    loose (~5 s, seeded). The detail's link line follows the drops in place; its incident and log lists are not
    rebuilt (a MutationObserver counts their child-list changes: 0; before, one rebuild per view, ~2 per drop)."""
    rng = random.Random(9)
    feeds = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=2)]
    await publish(mosquitto, interleave([f.publications(upto=4) for f in feeds]))
    await publish(mosquitto, [status(f, up=True) for f in feeds])
    published = time.monotonic()
    async with web_with(mosquitto, POLICY) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 2)
        await publish(mosquitto, [feeds[0].irregularity("4-1", code="CLOCK_PRESS_NO_MOVE", severity="warning", ply=4)])
        await wait_until(lambda: len(service.hub.extra["t1"].irregularities) == 1)
        page = await chromium.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        base = f"http://127.0.0.1:{service.http_port}"
        await page.goto(f"{base}/arbiter/login")
        await page.fill('input[name="username"]', USER)
        await page.fill('input[name="password"]', PASSWORD)
        await page.click('button[type="submit"]')
        await page.wait_for_url(f"{base}/arbiter")
        await page.goto(f"{base}/arbiter/hall")
        await page.click('.tile[data-board="t1"]')
        await page.wait_for_selector('#detail-flags li[data-flag="4-1"]', timeout=5000)
        await page.evaluate(DETAIL)
        t1 = feeds[0]
        t1.now += time.monotonic() - published
        drops = await flap(mosquitto, t1, rng, 5.0)
        await page.wait_for_function(
            f"() => document.getElementById('detail-link').textContent.includes('{drops} drops')", timeout=5000)
        seen = await page.evaluate("() => window.__detail")
        print(f"t1: {drops} drops; detail lists rebuilt {seen['lists']}x, link line written {len(seen['links'])}x")
        assert seen["lists"] == 0, seen
        assert len(seen["links"]) >= drops, seen   # the link line follows each drop
        assert await page.locator('#detail-flags li[data-flag="4-1"]').count() == 1
        assert errors == []
