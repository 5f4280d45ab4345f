"""The tablet page applies the hub's deltas: real Mosquitto, real ``boardd web``, headless Chromium.

The page connects mid-game (its snapshot), then the board plays on, notes pile up, an incident opens, folds a
related finding and is resolved by the board, and the moves are taken back: every frame after the snapshot is a
``delta`` (none repeats the board's view), and the page's view (arbiter.js ``boards``, built by board.js
``applyDelta``) ends equal to the hub's fresh view, which a second page opened at the end gets as its snapshot;
the cards show it (the incident's card leaves, the notes are log lines).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.consumers.feed import Feed
from tests.consumers.test_web import PREFIX, browser, publish, round_of, running_web, wait_until
from tests.consumers.test_web_incidents import RULING, log_in
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

VIEW = "() => JSON.stringify(boards.get('t1') ? boards.get('t1').view : null)"


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    """A view without its clock (its age is counted from when each page got it)."""
    return {k: v for k, v in view.items() if k != "clock"}


async def test_the_tablet_applies_deltas_to_the_view_a_snapshot_gives(mosquitto: Broker, pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX)
    steps = feed.publications(upto=24)
    await publish(mosquitto, [p for step in steps[:13] for p in step])
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: (service.hub.hall.boards.get("t1") or None) is not None
                         and service.hub.hall.boards["t1"].state is not None
                         and service.hub.hall.boards["t1"].state.get("ply") == 12)
        errors: list[str] = []
        frames: list[dict[str, Any]] = []
        page = await log_in(chromium, service.http_port, errors)
        page.on("websocket", lambda ws: ws.on("framereceived", lambda text: frames.append(json.loads(text))))
        await page.reload()  # the socket again, now listened to: a snapshot, then deltas
        await page.wait_for_selector("#summary:not(:empty)", timeout=5000)
        notes = [feed.irregularity(f"13-{n}", code="ADJUST_OBSERVED", severity="info", status="noted", ply=13,
                                   incident=None) for n in range(1, 9)]
        illegal = feed.irregularity("14-1", ply=14, side="white", incident=None)
        related = feed.irregularity("14-2", code="TAKEBACK_DETECTED", severity="warning", ply=14, incident="14-1")
        await publish(mosquitto, [p for step in steps[13:15] for p in step] + notes + [illegal, related])
        card = page.locator('.tboard[data-board="t1"] .open-incidents .flag[data-incident="14-1"]')
        await card.wait_for(timeout=5000)
        resolved = feed.irregularity("14-1", ply=14, side="white", status="resolved", ruling=RULING, incident=None)
        related_closed = feed.irregularity("14-2", code="TAKEBACK_DETECTED", severity="warning", ply=14,
                                           incident="14-1", status="resolved", ruling="resolved with 14-1")
        await publish(mosquitto, [resolved, related_closed, *[p for step in steps[15:25] for p in step]])
        await page.wait_for_function("() => boards.get('t1') && boards.get('t1').view.ply === 24", timeout=5000)
        await card.wait_for(state="detached", timeout=5000)
        # the moves taken back to ply 20 (a state with fewer moves): the page drops them
        await publish(mosquitto, [feed.state(20, {"white": 5000.0, "black": 5000.0}, "white")])
        await page.wait_for_function("() => boards.get('t1').view.state.moves.length === 20", timeout=5000)
        await wait_until(lambda: service.hub.hall.boards["t1"].state["ply"] == 20)  # type: ignore[index]
        live = json.loads(await page.evaluate(VIEW))
        fresh = service.hub.arbiter_view("t1", service.clock())
        assert fresh is not None and comparable(live) == comparable(fresh)
        late = await log_in(chromium, service.http_port, errors)
        await late.wait_for_function("() => boards.get('t1') !== undefined", timeout=5000)
        assert comparable(json.loads(await late.evaluate(VIEW))) == comparable(live)
        # what the page drew from the deltas: the incident resolved, the notes in the log, no card for them
        assert len(live["log"]) == 8 and [i["status"] for i in live["incidents"]] == ["resolved"]
        assert await page.locator(".open-incidents .flag").count() == 0
        kinds = [f["t"] for f in frames]
        assert kinds[0] == "snapshot" and "board" not in kinds, kinds
        assert kinds.count("delta") > 20
        assert errors == []
