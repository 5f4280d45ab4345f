"""One incident, one alert, in the pages themselves (real Mosquitto, real ``boardd web``, headless Chromium).

* The tablet's banner rings once per incident *of a game*: finding ids are unique within a game only (the
  engine counts them afresh for every game), so the next round's illegal move on the same board may have an
  id the page announced before; it must ring all the same.
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
