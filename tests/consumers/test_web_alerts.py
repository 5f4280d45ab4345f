"""One incident, one alert, in the pages themselves (real Mosquitto, real ``boardd web``, headless Chromium).

* The tablet's banner rings once per incident *of a game*: finding ids are unique within a game only (the
  engine counts them afresh for every game), so the next round's illegal move on the same board may have an
  id the page announced before; it must ring all the same.
* The hall view's tile says how many incidents need the arbiter: not the notes (info findings, ``noted``),
  nor the related findings folded under an incident.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.consumers.feed import Feed, load_games, script
from tests.consumers.test_web import PREFIX, browser, publish, running_web, wait_until
from tests.consumers.test_web_incidents import log_in
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]


async def test_the_next_rounds_illegal_move_rings_although_its_id_was_seen(mosquitto: Broker, pgn_dir: Path) -> None:
    first, second = load_games(pgn_dir / "tatamast22.pgn", 2)
    round4 = Feed(script(first, board="t1", board_no=1, round_no=4, seed=1), prefix=PREFIX)
    round5 = Feed(script(second, board="t1", board_no=1, round_no=5, seed=2), prefix=PREFIX)
    round5.seq = 10_000  # the same daemon session goes on
    await publish(mosquitto, [p for step in round4.publications(upto=6) for p in step])
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: "t1" in service.hub.hall.boards)
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        banner = page.locator("#banner")
        await publish(mosquitto, [round4.irregularity("6-1", ply=6, side="black", incident=None)])
        await banner.wait_for(state="visible", timeout=3000)
        await page.click("#banner-seen")
        await banner.wait_for(state="hidden", timeout=2000)
        # The same incident updated (acknowledged, then resolved): no second banner.
        await publish(mosquitto, [round4.irregularity("6-1", ply=6, side="black", incident=None, status="acknowledged"),
                                  round4.irregularity("6-1", ply=6, side="black", incident=None, status="resolved",
                                                      ruling="+2 min to White")])
        await page.wait_for_selector('.tboard.quiet[data-board="t1"]', state="attached", timeout=3000)  # nothing left
        assert await banner.is_hidden()
        # Round 5 on the same board: the new game's first finding at ply 6 is "6-1" again.
        await publish(mosquitto, [p for step in round5.publications(upto=6) for p in step])
        await wait_until(lambda: (service.hub.hall.boards["t1"].state or {}).get("game", {}).get("id") == "t1-r5.1")
        await publish(mosquitto, [round5.irregularity("6-1", ply=6, side="white", incident=None)])
        await banner.wait_for(state="visible", timeout=3000)
        assert "Board 1" in await page.locator("#banner-text").inner_text()
        assert errors == []


async def test_the_hall_tile_counts_incidents_not_notes(mosquitto: Broker, pgn_dir: Path) -> None:
    (game,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    feed = Feed(script(game, board="t1", board_no=1, round_no=4, seed=1), prefix=PREFIX)
    await publish(mosquitto, [p for step in feed.publications(upto=6) for p in step])
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: "t1" in service.hub.hall.boards)
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        await publish(mosquitto, [
            feed.irregularity("3-1", code="ADJUST_OBSERVED", severity="info", ply=3, status="noted", incident=None),
            feed.irregularity("4-2", code="CLOCK_PAUSED", severity="info", ply=4, status="noted", incident=None),
            feed.irregularity("6-3", code="CLOCK_PRESS_NO_MOVE", severity="warning", ply=6, incident=None),
            feed.irregularity("6-4", code="OUT_OF_TURN_CHANGE", severity="warning", ply=6, incident="6-3"),
        ])
        await wait_until(lambda: len(service.hub.extra["t1"].irregularities) == 4)
        await page.goto(f"http://127.0.0.1:{service.http_port}/arbiter/hall")
        tile = page.locator('.tile[data-board="t1"]')
        await page.wait_for_function("() => document.querySelector('.tile[data-board=\"t1\"]')?.dataset.rank === '2'",
                                     timeout=5000)
        assert "; 1 open incident(s)" in str(await tile.get_attribute("title"))
        assert errors == []
