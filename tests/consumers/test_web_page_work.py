"""The tablet page's work for one message does not grow with the game: real Mosquitto, ``boardd web``, Chromium.

Two boards on one arbiter tablet, each with an open incident (its card drawn in full) and a flaky sensor's
info notes: 10 on ``t1``, 600 on ``t2`` (they reach the page as deltas, one by one). Then each board gets one
more note, then one move. The page's work is counted, not timed: V8's precise coverage (Chromium's DevTools
protocol, ``Profiler.takePreciseCoverage`` with block counts) gives how many times each block of the page's
own scripts (``/static/``) ran between two readings: the delta's ``applyDelta``, the ring check, the render
150 ms later (signatures, the cards rebuilt, the DOM nodes made). That count must be about the same for the
board with 600 notes as for the board with 10 (before: it grew with the notes, every delta re-sorted the
findings, derived the log again, JSON-encoded the whole view for the card's signature and sorted every note
for the event log). What the page shows stays right: the view equals the hub's, the notes are log lines
(never cards, never a ring), the incident rang once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import tests.consumers.test_alert_audit as audit
from boardd.consumers.web.hub import Message
from drivers.sim import CorrectionKind, InjectionKind
from tests.consumers.alerts import Tablet, Watch
from tests.consumers.feed import Feed
from tests.consumers.test_web import PREFIX, browser, publish, round_of, running_web, wait_until
from tests.consumers.test_web_incidents import log_in
from tests.mosquitto import Broker

pytestmark = [pytest.mark.browser, pytest.mark.broker]

NOTES = {"t1": 10, "t2": 600}


def view_of(board: str) -> str:
    return f"() => JSON.stringify(boards.get('{board}') ? boards.get('{board}').view : null)"


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k != "clock"}


async def blocks_run(session: Any) -> int:
    """Blocks of the page's own scripts run since the last reading (the reading resets the counters)."""
    coverage = await session.send("Profiler.takePreciseCoverage")
    return sum(
        r["count"]
        for script in coverage["result"]
        if "/static/" in script["url"]
        for function in script["functions"]
        for r in function["ranges"]
    )


MARK = """() => document.querySelectorAll('.open-incidents .flag[data-incident="12-1"]')
  .forEach((card) => { card.marked = true; })"""
MARKED = """() => Object.fromEntries([...document.querySelectorAll('.tboard')].map((board) =>
  [board.dataset.board, board.querySelector('.open-incidents .flag[data-incident="12-1"]').marked === true]))"""


async def settled(page: Any, condition: str) -> None:
    """The message arrived (condition) and the page drew it (no render pending), and nothing else follows."""
    await page.wait_for_function(condition, timeout=10000)
    await asyncio.sleep(0.4)
    await page.wait_for_function("() => renderTimer === null", timeout=5000)


async def test_a_message_costs_the_page_the_same_with_600_notes_as_with_10(mosquitto: Broker, pgn_dir: Path) -> None:
    games = round_of(pgn_dir, boards=2)
    feeds = {game.board: Feed(game, prefix=PREFIX) for game in games}
    steps = {board: feed.publications(upto=14) for board, feed in feeds.items()}
    await publish(mosquitto, [p for board in feeds for step in steps[board][:13] for p in step])
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(
            lambda: all(
                (service.hub.hall.boards.get(b) or None) is not None
                and service.hub.hall.boards[b].state is not None
                and service.hub.hall.boards[b].state.get("ply") == 12
                for b in feeds
            )
        )
        errors: list[str] = []
        page = await log_in(chromium, service.http_port, errors)
        session = await page.context.new_cdp_session(page)
        await session.send("Profiler.enable")
        await session.send("Profiler.startPreciseCoverage", {"callCount": True, "detailed": True})
        await page.reload()  # the page's scripts compiled again, now with block counters
        await page.wait_for_selector("#summary:not(:empty)", timeout=5000)
        # an illegal move on each board (its card in full, one ring), then the flaky sensor's notes, as deltas
        await publish(
            mosquitto, [feed.irregularity("12-1", ply=12, side="black", incident=None) for feed in feeds.values()]
        )
        await page.wait_for_function("() => Number(banner.dataset.rings) === 2", timeout=5000)
        await publish(
            mosquitto,
            [
                feeds[board].irregularity(
                    f"12-n{n}", code="ADJUST_OBSERVED", severity="info", status="noted", ply=12, incident=None
                )
                for board, count in NOTES.items()
                for n in range(count)
            ],
        )
        for board, count in NOTES.items():
            await settled(page, f"() => boards.get('{board}').view.log.length === {count}")
        # the incident's card, marked: a note or a move on its board draws the board's card again, not it
        await page.evaluate(MARK)
        work: dict[str, dict[str, int]] = {"note": {}, "move": {}}
        for board, count in NOTES.items():
            await blocks_run(session)
            await publish(
                mosquitto,
                [
                    feeds[board].irregularity(
                        "12-more", code="ADJUST_OBSERVED", severity="info", status="noted", ply=12, incident=None
                    )
                ],
            )
            await settled(page, f"() => boards.get('{board}').view.log.length === {count + 1}")
            work["note"][board] = await blocks_run(session)
            await publish(mosquitto, steps[board][13])
            await settled(page, f"() => boards.get('{board}').view.ply === 13")
            work["move"][board] = await blocks_run(session)
        print("page work (blocks run) per message:", json.dumps(work))
        for kind, by_board in work.items():
            assert by_board["t1"] > 100, (kind, by_board)  # counted: the delta and the card's render ran
            assert by_board["t2"] <= 1.25 * by_board["t1"] + 200, (kind, by_board)
        # and the page shows the same: the hub's views, the notes as log lines, two rings (one per incident)
        for board, count in NOTES.items():
            await wait_until(lambda b=board: service.hub.hall.boards[b].state["ply"] == 13)  # type: ignore[index]
            live = json.loads(await page.evaluate(view_of(board)))
            fresh = service.hub.arbiter_view(board, service.clock())
            assert fresh is not None and comparable(live) == comparable(fresh)
            card = page.locator(f'.tboard[data-board="{board}"]')
            assert await card.locator(".open-incidents .flag").count() == 1
            events = len(live["events"])
            said = ([f"{events} event{'' if events == 1 else 's'}"] if events else []) + [f"{count + 1} notes"]
            assert await card.locator(".event-log summary").inner_text() == f"Event log ({', '.join(said)})"
            assert await card.locator(".event-list li.note").count() == min(30, count + 1)
        assert await page.evaluate(MARKED) == {"t1": True, "t2": True}
        assert await page.evaluate("() => Number(banner.dataset.rings)") == 2
        assert errors == []


# --- the page's applyDelta (board.js, in place) is the reference's (tablet.apply_delta) --------------------------

STREAMS: dict[int, list[dict[str, Any]]] = {}  # a tablet page (its id) -> what it received, and its view after


class Recorder(Watch):
    """The hub's messages to each tablet page, with the view the reference (``apply_delta``) gives after each."""

    def __init__(self, prefix: str, tablets: Iterable[Tablet] = ()) -> None:
        super().__init__(prefix, tablets)
        for tablet in self.tablets:
            STREAMS.setdefault(id(tablet), []).append({"snapshot": []})

    def deliver(self, messages: Iterable[Message]) -> None:
        for message in messages:
            super().deliver([message])
            body = json.loads(message.text)
            if message.audience != "arbiter" or body["t"] not in ("board", "delta"):
                continue
            board = body["board"] if body["t"] == "delta" else body["view"]["board"]
            for tablet in self.tablets:
                STREAMS[id(tablet)].append({"msg": body, "expect": tablet.shown[board]})

    def attach(self, tablet: Tablet) -> None:
        self.deliver(self.hub.sync(self.now))
        views = self.views()
        STREAMS.setdefault(id(tablet), []).append({"snapshot": views})
        tablet.snapshot(views)
        self.tablets.append(tablet)


# In the page: a tablet's messages applied as arbiter.js does (a snapshot's views, a board's view, a delta
# through applyDelta on the view held), each view compared with the reference's, and board.js's index of it
# (the log, the notes newest first for the event log) with what a fresh view gives. The first difference.
REPLAY = """([key, text]) => {
  const pages = window.pages || (window.pages = new Map());
  if (!pages.has(key)) pages.set(key, new Map());
  const page = pages.get(key);
  const same = (a, b) => {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  };
  let step = 0, deltas = 0, moved = 0;
  for (const entry of JSON.parse(text)) {
    step += 1;
    if (entry.snapshot) { entry.snapshot.forEach((v) => page.set(v.board, v)); continue; }
    const msg = entry.msg;
    const view = msg.t === "delta" ? applyDelta(page.get(msg.board), msg) : msg.view;
    if (msg.t === "delta") { deltas += 1; moved += (msg.flags || []).length + (msg.incidents || []).length; }
    page.set(view.board, view);
    if (!same(JSON.parse(JSON.stringify(view)), entry.expect)) return {step, msg, view, expect: entry.expect};
    const index = viewIndex(view), fresh = viewIndex(JSON.parse(JSON.stringify(view)));
    const ids = (list) => list.map((f) => f.id);
    if (!same(index.log, fresh.log) || !same(ids(index.notes), ids(fresh.notes)) ||
        index.byId.size !== view.flags.length || index.incById.size !== view.incidents.length) {
      return {step, msg, index: [index.log, ids(index.notes)], fresh: [fresh.log, ids(fresh.notes)]};
    }
  }
  return {deltas, moved};
}"""


async def test_the_page_applies_deltas_in_place_as_the_reference_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded games through the engine and the hub (the arbiter ruling, the board resolving, takebacks and
    reinstatements, web restarts and late pages, messages reordered and redelivered): every tablet page's
    stream replayed in Chromium through board.js gives the reference's view after every message."""
    monkeypatch.setattr(audit, "Watch", Recorder)
    STREAMS.clear()
    for kind in (InjectionKind.TWO_HANDS_CASTLING, CorrectionKind.ILLEGAL_CAPTURE, InjectionKind.LATE_PRESS):
        for sim in audit.games(kind, range(2)):
            audit.play(sim, seed=sim.seed, wire=True)
    assert len(STREAMS) >= 2
    board_js = (Path(__file__).parents[2] / "boardd/consumers/web/static/board.js").read_text()
    deltas = moved = 0
    async with browser() as chromium:
        page = await chromium.new_page()
        await page.set_content("<html><body></body></html>")
        await page.add_script_tag(content=board_js)
        for key, stream in STREAMS.items():
            for start in range(0, len(stream), 400):
                outcome = await page.evaluate(REPLAY, [str(key), json.dumps(stream[start : start + 400])])
                assert "deltas" in outcome, (start, outcome)
                deltas += outcome["deltas"]
                moved += outcome["moved"]
    assert deltas > 500 and moved > 100, (deltas, moved)
