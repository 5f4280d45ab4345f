"""One incident, one alert on the arbiter tablet: real Mosquitto, real ``boardd web``, headless Chromium.

Crafted irregularity payloads (mqtt-contract.md, "Additions in v1": ``incident``, ``noted``, a
finding re-published ``resolved`` with its ``ruling`` when the board resolves it itself) go through
the broker; the tablet must show one card per incident with its related findings folded, no card
for a finding that asks for no action (those are lines of the board's event log), and an illegal
move's card must leave the open cards by itself once the board resolved it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from boardd.consumers.web.hub import BoardExtra
from tests.consumers.feed import Feed, Publication, interleave, load_games, script
from tests.consumers.test_incidents import correction_cycle
from tests.consumers.test_web import (
    PASSWORD,
    PREFIX,
    USER,
    browser,
    publish,
    publish_screens,
    round_of,
    running_web,
    wait_until,
)
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

RULING = "position reinstated at ply 13; +2:00 seen on the clock"


async def log_in(chromium: Any, port: int, errors: list[str], *, width: int = 1024, height: int = 768) -> Any:
    page = await chromium.new_page(viewport={"width": width, "height": height})
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.dismiss()))
    await page.goto(f"http://127.0.0.1:{port}/arbiter/login")
    await page.fill('input[name="username"]', USER)
    await page.fill('input[name="password"]', PASSWORD)
    await page.click('button[type="submit"]')
    await page.wait_for_selector("#summary:not(:empty)", timeout=5000)
    return page


async def ids(locator: Any, attribute: str) -> list[str]:
    return [str(await node.get_attribute(attribute)) for node in await locator.all()]


async def needing(page: Any) -> list[str]:
    """The boards drawn in full (they need the arbiter), top to bottom."""
    js = "() => [...document.querySelectorAll('.tboard:not(.quiet)')].map((e) => e.dataset.board)"
    return list(await page.evaluate(js))


def findings_of_one_game(feed: Feed) -> dict[str, Publication]:
    """Every finding of the scenario, keyed by id (published in the test's own order)."""
    return {
        # Incident 1: a press without a move, and what follows from it (contract: related -> primary id).
        "12-1": feed.irregularity("12-1", code="CLOCK_PRESS_NO_MOVE", severity="warning", ply=12, side="black",
                                  incident=None),
        "12-2": feed.irregularity("12-2", code="OUT_OF_TURN_CHANGE", severity="warning", ply=12, side="white",
                                  incident="12-1"),
        "12-3": feed.irregularity("12-3", code="CLOCK_PRESS_OTHER_HAND_SUSPECTED", severity="warning", ply=12,
                                  side="black", incident="12-1"),
        # Findings that ask for no action: a log, never a card (one from an older daemon: no incident, "open").
        "13-1": feed.irregularity("13-1", code="ADJUST_OBSERVED", severity="info", ply=13, status="noted",
                                  incident=None),
        "13-2": feed.irregularity("13-2", code="CLOCK_PAUSED", severity="info", ply=13),
        # Incident 2: an illegal move; the arbiter's restoration raises a related takeback warning and an
        # info note; the board then resolves the illegal move itself.
        "14-1": feed.irregularity("14-1", ply=14, side="white", incident=None),
        "14-2": feed.irregularity("14-2", code="TAKEBACK_DETECTED", severity="warning", ply=14, incident="14-1"),
        "14-3": feed.irregularity("14-3", code="ARBITER_ADJUST", severity="info", ply=14, status="noted",
                                  incident="14-1"),
        "14-1 resolved": feed.irregularity("14-1", ply=14, side="white", status="resolved", ruling=RULING,
                                           incident=None),
        # Then White's replacement move breaks touch-move (the engine files it under the same incident).
        "15-4": feed.irregularity("15-4", code="TOUCH_MOVE_VIOLATION", severity="warning", ply=15, side="white",
                                  incident="14-1"),
    }


async def test_one_card_per_incident_no_info_cards_and_self_resolved_illegal_move(mosquitto: Broker,
                                                                                    pgn_dir: Path) -> None:
    games = round_of(pgn_dir, boards=2)
    feeds = [Feed(g, prefix=PREFIX) for g in games]
    await publish(mosquitto, interleave([f.publications(upto=14) for f in feeds]))
    found = findings_of_one_game(feeds[0])
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 2)
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        t1 = page.locator('.tboard[data-board="t1"]')
        # A related finding before its primary: a card already, waiting for the main finding.
        await publish(mosquitto, [found["12-2"]])
        card = t1.locator('.open-incidents .flag[data-incident="12-1"]')
        await card.wait_for(timeout=3000)
        assert await card.get_attribute("data-flag") == "12-2"
        assert "not received yet" in await card.locator(".awaiting").inner_text()
        # The primary, a second related finding, two findings that ask for no action, the illegal move.
        await publish(mosquitto, [found[k] for k in ("12-1", "12-3", "13-1", "13-2", "14-1", "14-2", "14-3")])
        await page.wait_for_selector('.tboard[data-board="t1"] .flag[data-incident="14-1"]', timeout=3000)
        await page.wait_for_function("""() => document.querySelector(
            '.tboard[data-board="t1"] .flag[data-incident="12-1"]')?.dataset.flag === '12-1'""", timeout=3000)
        await page.locator("#banner").wait_for(state="visible", timeout=2000)
        assert "Board 1" in await page.locator("#banner-text").inner_text()
        # One card per incident, the illegal move first; nothing anywhere for the info findings but log lines.
        assert await ids(t1.locator(".open-incidents .flag"), "data-incident") == ["14-1", "12-1"]
        assert await page.locator(".flag").count() == 2
        for note in ("13-1", "13-2", "14-3"):
            assert await page.locator(f'.flag[data-flag="{note}"]').count() == 0, note
        # 14-3 names the illegal move's incident: folded there too (context), never a card of its own.
        assert await page.locator('.related-finding[data-flag="14-3"]').count() == 1
        assert await card.locator(".awaiting").count() == 0
        assert "+2 related" in await card.locator(".flag-head").inner_text()
        # Related findings are folded: present, hidden until the arbiter unfolds them.
        related = card.locator(".related-finding")
        assert await ids(related, "data-flag") == ["12-2", "12-3"]
        assert not await related.first.is_visible()
        await card.locator(".related > summary").click()
        assert await related.first.is_visible()
        assert "The side without the move changed the position" in await related.first.inner_text()
        # Only cards that need the arbiter have actions; related findings have none of their own.
        assert await card.locator("button.ack").count() == 1 and await related.locator("button").count() == 0
        # The info findings are in the board's event log (folded), as notes.
        log = t1.locator(".event-log")
        assert "(3 notes)" in await log.locator("summary").inner_text()
        assert not await log.locator(".event-list").is_visible()
        await log.locator("summary").click()
        notes = log.locator('.event.note[data-type="FINDING"]')
        assert sorted(await ids(notes, "data-flag")) == ["13-1", "13-2", "14-3"]
        assert "A piece was lifted and put back" in await log.inner_text()
        assert "1 need" in await page.locator("#summary").inner_text()
        assert "2 open incidents" in await page.locator("#summary").inner_text()
        await publish_screens(page, "arbiter-incidents")
        # The board resolves the illegal move itself: its card leaves the open cards without any click.
        await publish(mosquitto, [found["14-1 resolved"]])
        await page.wait_for_selector('.tboard[data-board="t1"] .open-incidents .flag[data-incident="14-1"]',
                                     state="detached", timeout=3000)
        assert await ids(t1.locator(".open-incidents .flag"), "data-incident") == ["12-1"]
        resolved = t1.locator('.resolved-log .flag[data-incident="14-1"]')
        assert await resolved.get_attribute("data-status") == "resolved"
        assert not await resolved.is_visible()  # out of the way: the Resolved section is folded
        await t1.locator(".resolved-log > summary").click()
        assert RULING in await resolved.inner_text()
        assert await resolved.locator("button").count() == 0
        assert "1 open incident" in await page.locator("#summary").inner_text()
        # The replacement move breaks touch-move: filed under the resolved incident, it must not fold away.
        await publish(mosquitto, [found["15-4"]])
        again = t1.locator('.open-incidents .flag[data-incident="14-1"]')
        await again.wait_for(timeout=3000)
        assert await again.get_attribute("data-flag") == "15-4"
        assert f"(resolved: {RULING})" in await again.locator(".follows").inner_text()
        assert await again.locator("button.ack").count() == 1
        assert "2 open incidents" in await page.locator("#summary").inner_text()
        # Board 2 never needed the arbiter: one line, in the closed section.
        assert await page.locator('.tboard.quiet[data-board="t2"]').count() == 1
        assert not await page.locator('.tboard[data-board="t2"]').is_visible()
        assert errors == []
    # The same messages, as the hub folded them (what the page drew from).
    view = service.hub.arbiter_view("t1", 0.0)
    assert view is not None
    assert [(i["id"], i["related"], i["status"], i["target"]) for i in view["incidents"]] == [
        ("14-1", ["14-2", "14-3", "15-4"], "open", "15-4"), ("12-1", ["12-2", "12-3"], "open", "12-1")]
    assert view["log"] == ["13-1", "13-2", "14-3"]


async def test_fifty_boards_show_only_what_needs_the_arbiter(mosquitto: Broker, pgn_dir: Path) -> None:
    played = [g for g in load_games(pgn_dir / "tatamast22.pgn", 91) if len(list(g.mainline_moves())) >= 6][:50]
    assert len(played) == 50
    feeds = [Feed(script(g, board=f"t{i + 1}", board_no=i + 1, round_no=4, seed=i), prefix=PREFIX)
             for i, g in enumerate(played)]
    await publish(mosquitto, interleave([f.publications(upto=6) for f in feeds]))
    findings: list[Publication] = []
    for n, feed in enumerate(feeds, start=1):  # every board logs something that asks for no action
        findings.append(feed.irregularity(f"5-{n}", code="CLOCK_PAUSED", severity="info", ply=5, status="noted",
                                          incident=None))
    by_no = {n: feeds[n - 1] for n in (7, 23, 41)}
    findings += [
        by_no[7].irregularity("6-1", ply=6, side="black", incident=None),
        by_no[23].irregularity("6-1", code="CLOCK_PRESS_NO_MOVE", severity="warning", ply=6, incident=None),
        by_no[23].irregularity("6-2", code="OUT_OF_TURN_CHANGE", severity="warning", ply=6, incident="6-1"),
        by_no[41].irregularity("6-1", ply=6, side="black", incident=None),
        by_no[41].irregularity("6-1", ply=6, side="black", incident=None, status="resolved", ruling=RULING),
    ]
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 50, 20)
        await publish(mosquitto, findings)  # live only (not retained): after the service subscribed
        await wait_until(lambda: all(service.hub.extra[f"t{n}"].irregularities for n in range(1, 51)))
        await wait_until(lambda: (service.hub.extra["t41"].irregularities.get("6-1") or {}).get("status") == "resolved")
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        await page.wait_for_selector('.tboard[data-board="t23"] .flag[data-incident="6-1"]', timeout=5000)
        # Two boards need the arbiter, in order of severity; the other 48 are one line each, folded away.
        assert await needing(page) == ["t7", "t23"]
        assert await page.locator(".tboard.quiet").count() == 48
        visible = await page.evaluate("""() => [...document.querySelectorAll('.tboard')]
            .filter((e) => e.checkVisibility()).map((e) => e.dataset.board)""")
        assert visible == ["t7", "t23"]
        assert await page.locator(".flag").count() == 2  # 50 info findings, one resolved illegal move: no cards
        assert await page.locator(".flag .related-finding").count() == 1
        summary = await page.locator("#summary").inner_text()
        assert summary.startswith("50 boards · 2 open incidents · 2 need you"), summary
        assert "48 boards with nothing for you" in await page.locator(".quiet-boards > summary").inner_text()
        # The arbiter does not scroll through 50 boards: under the two cards there is one line, then the page ends.
        await publish_screens(page, "arbiter-50-boards")
        layout = await page.evaluate("""() => ({
            page: document.documentElement.scrollHeight,
            cards: document.querySelector('.tboard[data-board="t23"]').getBoundingClientRect().bottom + scrollY,
            quiet: document.querySelector('.quiet-boards').getBoundingClientRect().height})""")
        assert layout["quiet"] < 80 and layout["page"] - layout["cards"] < 150, layout
        # Opened, the quiet boards are one line each; t41's resolved illegal move is in its Resolved section.
        await page.locator(".quiet-boards > summary").click()
        rows = await page.evaluate("""() => [...document.querySelectorAll('.tboard.quiet')]
            .map((e) => e.getBoundingClientRect().height)""")
        assert len(rows) == 48 and max(rows) < 80, rows
        assert await page.evaluate("() => document.documentElement.scrollHeight") > layout["page"] + 48 * 40
        t41 = page.locator('.tboard[data-board="t41"]')
        await t41.locator(".quiet-row > summary").click()
        assert await t41.locator('.resolved-log .flag[data-incident="6-1"]').get_attribute("data-status") == "resolved"
        assert await t41.locator(".open-incidents").count() == 0
        # A new illegal move on a quiet board brings it up, first.
        await publish(mosquitto, [feeds[29].irregularity("6-1", ply=6, side="white", incident=None)])
        await page.wait_for_selector('.tboard:not(.quiet)[data-board="t30"]', timeout=3000)
        order = await needing(page)
        assert order == ["t7", "t30", "t23"], order
        assert errors == []


async def test_the_real_engines_correction_cycle_card_resolves_itself(mosquitto: Broker) -> None:
    """The publications of ``boardd.core`` for an illegal move corrected on the board (no tablet command)."""
    steps = correction_cycle(PREFIX)
    split = next(n for n, (item, _) in enumerate(steps) if item == "2800 P e2 wP")  # the pawn is back
    async with running_web(mosquitto) as service, browser() as chromium:
        await publish(mosquitto, [p for _, publications in steps[:split] for p in publications])
        await wait_until(lambda: "0-1" in service.hub.extra.get("t1", BoardExtra()).irregularities)
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        card = page.locator('.tboard[data-board="t1"] .open-incidents .flag[data-incident="0-1"]')
        await card.wait_for(timeout=3000)
        assert await card.get_attribute("data-status") == "open"
        assert await page.locator(".flag").count() == 1  # the clock paused by the arbiter is no card
        assert "CLOCK_PAUSED" in (await page.locator('.tboard[data-board="t1"] .event-log').text_content() or "")
        await publish(mosquitto, [p for _, publications in steps[split:] for p in publications])
        await card.wait_for(state="detached", timeout=3000)
        await page.wait_for_selector('.tboard.quiet[data-board="t1"]', state="attached", timeout=3000)
        assert "Nothing needs you." in await page.locator("#boards").inner_text()
        await page.locator(".quiet-boards > summary").click()
        await page.locator('.tboard[data-board="t1"] .quiet-row > summary').click()
        await page.locator('.tboard[data-board="t1"] .resolved-log > summary').click()
        resolved = page.locator('.tboard[data-board="t1"] .resolved-log .flag[data-incident="0-1"]')
        assert "position reinstated at ply 0" in await resolved.inner_text()
        assert await resolved.locator("button").count() == 0
        assert errors == []
