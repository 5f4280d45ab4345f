"""The tablet redraws only the board that changed: real Mosquitto, real ``boardd web``, headless Chromium.

Board 2 has an open warning: its card is in the needs-you list, with its buttons and a ruling the arbiter is
typing. Board 1's USB connector is loose (a status every 100-400 ms, seeded, ~5 s) and it gets a move: its card
is redrawn. A MutationObserver counts every time a board's card (``.tboard``) is inserted into or removed from
the page: board 2's must be 0 while board 1 changes (before: every render replaced every card), and board 2's
card must be the very node it was (the arbiter's typing and focus untouched). Then its buttons still work:
Acknowledge and Resolve reach a stand-in for the daemon, and the card shows the outcome.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tests.consumers.feed import Feed, interleave
from tests.consumers.test_web import PREFIX, browser, publish, round_of, wait_until
from tests.consumers.test_web_incidents import log_in
from tests.consumers.test_web_links import POLICY, flap, status, web_with
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

WATCH = """() => {
  const seen = {t1: 0, t2: 0, renders: 0};
  const count = (node, delta) => {
    if (node.nodeType !== 1) return;
    for (const card of [node, ...node.querySelectorAll(".tboard")]) {
      if (card.matches(".tboard") && card.dataset.board in seen) seen[card.dataset.board] += delta;
    }
  };
  new MutationObserver((records) => {
    seen.renders += 1;
    for (const record of records) {
      record.addedNodes.forEach((node) => count(node, 1));
      record.removedNodes.forEach((node) => count(node, 1));
    }
  }).observe(document.getElementById("boards"), {childList: true, subtree: true});
  window.__cards = seen;
  window.__t2 = document.querySelector('.tboard[data-board="t2"]');
}"""


async def test_only_the_changed_board_is_redrawn_and_buttons_still_work(mosquitto: Broker, pgn_dir: Path) -> None:
    rng = random.Random(3)
    feeds = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=2)]
    await publish(mosquitto, interleave([f.publications(upto=4) for f in feeds]))
    await publish(mosquitto, [status(f, up=True) for f in feeds])
    published = time.monotonic()
    commands: list[tuple[str, dict[str, Any]]] = []

    async def daemon_side() -> None:
        """Stands in for boardd on board t2: answers ack/resolve and publishes the updated finding."""
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe(f"{PREFIX}/t2/cmd/#", qos=1)
            async for message in client.messages:
                name = message.topic.value.rsplit("/", 1)[1]
                body = json.loads(message.payload if isinstance(message.payload, bytes) else b"{}")
                commands.append((name, body))
                after = {"ack": "acknowledged", "resolve": "resolved"}[name]
                for topic, payload, retain, qos in [
                        feeds[1].cmd_result(body["id"]),
                        feeds[1].irregularity("4-1", code="CLOCK_BOUNCE", severity="warning", ply=4, status=after,
                                              ruling=body.get("ruling"))]:
                    await client.publish(topic, payload, qos=qos, retain=retain)

    async with web_with(mosquitto, POLICY) as service, browser() as chromium:
        daemon = asyncio.create_task(daemon_side())
        try:
            await wait_until(lambda: len(service.hub.hall.boards) == 2)
            # not retained: published once the service listens
            await publish(mosquitto, [feeds[1].irregularity("4-1", code="CLOCK_BOUNCE", severity="warning", ply=4)])
            errors: list[str] = []
            page = await log_in(chromium, service.http_port, errors, height=1400)
            card = page.locator('.tboard:not(.quiet)[data-board="t2"]')
            await card.locator('.flag[data-flag="4-1"] button.ack').wait_for(timeout=5000)
            await page.evaluate(WATCH)
            # the arbiter starts typing a ruling on board 2's card
            ruling = card.locator('.flag[data-flag="4-1"] input.ruling-text')
            await ruling.click()
            await ruling.type("warned for the ")
            # board 1: a loose connector and a move
            t1 = feeds[0]
            t1.now += time.monotonic() - published
            drops = await flap(mosquitto, t1, rng, 5.0)
            await publish(mosquitto, [p for step in t1.publications(upto=5)[5:] for p in step])
            await page.wait_for_selector('.tboard:not(.quiet)[data-board="t1"] .link-state', timeout=3000)
            await asyncio.sleep(0.5)  # the page draws at most every 150 ms
            seen = await page.evaluate("() => window.__cards")
            same = await page.evaluate("""() => window.__t2 === document.querySelector('.tboard[data-board="t2"]')
                && window.__t2.isConnected""")
            print(f"t1: {drops} drops; card insertions/removals: t1 {seen['t1']}, t2 {seen['t2']}; "
                  f"{seen['renders']} mutation batches")
            assert seen["t1"] >= 2, seen     # board 1 changed: its card was redrawn (the observer works)
            assert seen["t2"] == 0, seen     # board 2 did not: never redrawn
            assert same
            # the arbiter's typing is where it was: focus and text
            assert await ruling.evaluate("(node) => node === document.activeElement")
            await ruling.type("second time")
            # the buttons still work after the updates
            await card.locator('.flag[data-flag="4-1"] button.ack').click()
            await page.wait_for_selector('.tboard[data-board="t2"] .flag[data-flag="4-1"][data-status="acknowledged"]',
                                         timeout=3000)
            await card.locator('.flag[data-flag="4-1"] button.resolve').click()
            await page.wait_for_selector('.tboard.quiet[data-board="t2"]', state="attached", timeout=3000)
            assert [name for name, _ in commands] == ["ack", "resolve"]
            assert commands[1][1]["irregularity"] == "4-1" and commands[1][1]["ruling"] == "warned for the second time"
            assert errors == []
        finally:
            daemon.cancel()


FLAPPING = """() => {
  const seen = {changes: 0, texts: [], badges: [], first: null};
  const card = () => document.querySelector('.tboard:not(.quiet)[data-board="t1"]');
  const count = (node) => {
    if (node.nodeType !== 1) return;
    for (const c of [node, ...node.querySelectorAll(".tboard")]) {
      if (c.matches('.tboard[data-board="t1"]')) seen.changes += 1;
    }
  };
  new MutationObserver((records) => {
    for (const record of records) {
      record.addedNodes.forEach(count);
      record.removedNodes.forEach(count);
    }
    const now = card();
    if (now && !seen.first) seen.first = now;
    const text = now && now.querySelector(".link-alert") ? now.querySelector(".link-alert").textContent : null;
    if (text && seen.texts[seen.texts.length - 1] !== text) seen.texts.push(text);
    const badge = now && now.querySelector(".link-state") ? now.querySelector(".link-state").textContent : null;
    if (badge && seen.badges[seen.badges.length - 1] !== badge) seen.badges.push(badge);
  }).observe(document.getElementById("boards"), {childList: true, subtree: true, characterData: true});
  window.__t1 = seen;
}"""


async def test_a_flapping_boards_card_is_built_once_and_its_count_updated_in_place(mosquitto: Broker,
                                                                                  pgn_dir: Path) -> None:
    """Board 1's connector is loose for ~6 s (a status every 100-400 ms, seeded): the board enters the needs-you
    list once ("link unstable"), and from then on its card is the same node: "N drops in the last minute"
    counts up, the badge and "down now / up now" follow each drop, all written in place. Counted by a
    MutationObserver: board 1's card is inserted or removed twice in all (its quiet line leaves, its full card
    comes) — before, the keyed rendering rebuilt it with every drop (the link text is part of what it shows)."""
    rng = random.Random(7)
    feeds = [Feed(g, prefix=PREFIX) for g in round_of(pgn_dir, boards=2)]
    await publish(mosquitto, interleave([f.publications(upto=4) for f in feeds]))
    await publish(mosquitto, [status(f, up=True) for f in feeds])
    published = time.monotonic()
    async with web_with(mosquitto, POLICY) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 2)
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        await page.wait_for_selector('.tboard.quiet[data-board="t1"]', state="attached", timeout=5000)
        await page.evaluate(FLAPPING)
        t1 = feeds[0]
        t1.now += time.monotonic() - published  # the Pi's clock moved on while the page started
        drops = await flap(mosquitto, t1, rng, 6.0)
        assert drops >= 10
        # the last drop's count reaches the page (it draws at most every 150 ms)
        await page.wait_for_function(
            f"""() => (document.querySelector('.tboard[data-board="t1"] .link-alert') || {{}}).textContent
                === 'Link: link unstable: {drops} drops in the last minute; up now'""", timeout=5000)
        seen = await page.evaluate("""() => ({changes: window.__t1.changes, texts: window.__t1.texts,
            badges: window.__t1.badges, same: window.__t1.first === document.querySelector(
              '.tboard:not(.quiet)[data-board="t1"]') && window.__t1.first.isConnected})""")
        print(f"t1: {drops} drops; card insertions/removals {seen['changes']}; {len(seen['texts'])} link texts "
              f"shown in place: {seen['texts'][0]!r} … {seen['texts'][-1]!r}; badges {seen['badges']}")
        assert seen["changes"] == 2, seen   # the quiet line out, the full card in: once
        assert seen["same"], seen           # the card the board entered with is the card shown now
        counts = [int(text.split(": ")[2].split()[0]) for text in seen["texts"]]
        assert counts[0] == POLICY.unstable and counts[-1] == drops and len(set(counts)) >= drops - counts[0], seen
        assert seen["badges"] == ["LINK UNSTABLE"], seen
        assert "1 with link trouble" in await page.locator("#summary").inner_text()
        assert errors == []
