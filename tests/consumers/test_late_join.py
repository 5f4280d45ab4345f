"""A tablet that starts mid-round sees the open flags with their details, from the retained ``state``.

The publications come from the real :class:`boardd.core.contract.Publisher` (what the daemon sends); the
web service and the broker are real, and so is the browser (headless Chromium).
"""

from __future__ import annotations

import dataclasses
import json

import aiomqtt
import chess
import pytest

from boardd.consumers.web.hub import Hub
from boardd.core.contract import Publication, Publisher
from boardd.core.outputs import (
    Confidence,
    Evidence,
    GameState,
    Irregularity,
    IrregularityRaised,
    IrregularityUpdated,
    Severity,
    StateChanged,
    Status,
    Suggestion,
)
from tests.consumers.test_web import PASSWORD, PREFIX, USER, browser, running_web, wait_until
from tests.mosquitto import Broker
from tests.record.factories import make_state, records_from_moves

T0 = 1_795_285_982.0
BOARD = "t5"
MOVES = ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6")


def finding(ident: str, *, status: Status = Status.OPEN, code: str = "ILLEGAL_MOVE", subtype: str | None = "SELF_CHECK",
            severity: Severity = Severity.ILLEGAL_MOVE, ply: int = 5, side: chess.Color = chess.WHITE) -> Irregularity:
    return Irregularity(
        id=ident, code=code, subtype=subtype, severity=severity, confidence=Confidence.AUTO, side=side, ply=ply,
        edition=2023, articles=("7.5.1",), t_raised=T0 + 300, t_first_evidence=T0 + 298.5,
        evidence=(Evidence(at=T0 + 298.5, event="L e1"), Evidence(at=T0 + 299.0, event="P f1 wK"),
                  Evidence(at=T0 + 300.0, event="C W")),
        suggestion=Suggestion(text="reinstate the position before ply 5; +2 min to Black", add_to_opponent_s=120,
                              reinstate_ply=4),
        status=status)


def game_state(*flags: Irregularity) -> GameState:
    records, _ = records_from_moves(chess.Board(), [chess.Move.from_uci(u) for u in MOVES], t0=T0)
    open_ids = tuple(f.id for f in flags if f.status is not Status.RESOLVED)
    base = make_state(records, game_id="r4-b5", board_no=5, round_=f"4.{5}", open_irregularities=open_ids)
    details = tuple(f for f in flags if f.status is not Status.RESOLVED)
    return dataclasses.replace(base, open_irregularity_details=details)


def messages(publications: list[Publication]) -> list[tuple[str, bytes]]:
    return [(p.topic, p.payload_bytes()) for p in publications]


def feed_hub(hub: Hub, publications: list[Publication], now: float = 10.0) -> None:
    for topic, payload in messages(publications):
        hub.take(topic, payload, now)


def flags(hub: Hub) -> dict[str, dict[str, object]]:
    view = hub.arbiter_view(BOARD, 20.0)
    assert view is not None
    return {str(f["id"]): f for f in view["flags"]}


# --- pure: the hub -------------------------------------------------------------------------------


def test_a_hub_started_late_takes_the_flags_from_the_state() -> None:
    illegal, bounce = finding("5-1"), finding("5-2", code="CLOCK_BOUNCE", subtype=None, severity=Severity.WARNING,
                                                  status=Status.ACKNOWLEDGED)
    publisher = Publisher(board=BOARD, prefix=PREFIX, session=2)
    # Before the hub starts: the live messages are gone (not retained); the state stays.
    publisher.render([IrregularityRaised(irregularity=illegal)], game_state(illegal), at=T0 + 300)
    state = game_state(illegal, bounce)
    hub = Hub(prefix=PREFIX)
    feed_hub(hub, publisher.snapshot(state, at=T0 + 301))
    seen = flags(hub)
    assert list(seen) == ["5-1", "5-2"]
    assert seen["5-1"]["code"] == "ILLEGAL_MOVE" and seen["5-1"]["status"] == "open"
    assert seen["5-1"]["title"] != "details not received (joined late)"
    assert [e["event"] for e in seen["5-1"]["evidence"]] == ["L e1", "P f1 wK", "C W"]  # type: ignore[attr-defined]
    assert seen["5-2"]["status"] == "acknowledged" and seen["5-2"]["severity"] == "warning"
    view = hub.arbiter_view(BOARD, 20.0)
    assert view is not None and view["rank"] == 3  # an open illegal move: top of the tablet
    assert "irregularities" not in view["state"]  # carried once, as the flags


def test_newer_live_news_wins_over_an_older_state_and_the_reverse() -> None:
    illegal = finding("5-1")
    publisher = Publisher(board=BOARD, prefix=PREFIX, session=2)
    hub = Hub(prefix=PREFIX)
    older_state = publisher.snapshot(game_state(illegal), at=T0 + 301)  # seq n: the flag is open
    ack = publisher.render([IrregularityUpdated(irregularity=dataclasses.replace(illegal, status=Status.ACKNOWLEDGED))],
                           game_state(illegal), at=T0 + 302)            # seq n+2: acknowledged
    feed_hub(hub, ack)
    feed_hub(hub, older_state)  # arrives late (another route, a reconnect): must not reopen the flag
    assert flags(hub)["5-1"]["status"] == "acknowledged"
    # A newer state that no longer lists the flag: it was resolved while this hub did not hear it.
    feed_hub(hub, publisher.render([StateChanged(at=T0 + 400)], game_state(), at=T0 + 400))
    assert flags(hub)["5-1"]["status"] == "resolved"
    view = hub.arbiter_view(BOARD, 20.0)
    assert view is not None and view["rank"] == 0


def test_a_newer_state_updates_an_older_live_flag() -> None:
    illegal = finding("5-1")
    publisher = Publisher(board=BOARD, prefix=PREFIX, session=2)
    hub = Hub(prefix=PREFIX)
    feed_hub(hub, publisher.render([IrregularityRaised(irregularity=illegal), StateChanged(at=T0 + 300)],
                                   game_state(illegal), at=T0 + 300))
    assert flags(hub)["5-1"]["status"] == "open"
    # The acknowledgement itself was lost (the hub was reconnecting); the next state tells it.
    acknowledged = dataclasses.replace(illegal, status=Status.ACKNOWLEDGED)
    publisher.render([IrregularityUpdated(irregularity=acknowledged)], game_state(acknowledged), at=T0 + 310)
    feed_hub(hub, publisher.render([StateChanged(at=T0 + 320)], game_state(acknowledged), at=T0 + 320))
    assert flags(hub)["5-1"]["status"] == "acknowledged"


def test_broadcast_view_never_sees_the_state_flags() -> None:
    illegal = finding("5-1")
    publisher = Publisher(board=BOARD, prefix=PREFIX, session=2)
    hub = Hub(prefix=PREFIX)
    public: list[str] = []
    for topic, payload in messages(publisher.snapshot(game_state(illegal), at=T0 + 301)):
        public += [m.text for m in hub.take(topic, payload, 10.0) if m.audience == "public"]
    public.append(hub.snapshot("public", 11.0))
    assert len(public) == 2 and json.loads(public[0])["view"]["ply"] == len(MOVES)
    for text in public:
        for secret in ("5-1", "ILLEGAL", "SELF_CHECK", "irregular", "evidence", "7.5.1", "P f1 wK"):
            assert secret not in text, (secret, text)


def test_a_state_with_a_bad_irregularities_field_is_survived() -> None:
    publisher = Publisher(board=BOARD, prefix=PREFIX, session=2)
    (state, _pgn) = publisher.snapshot(game_state(), at=T0)
    assert isinstance(state.payload, dict)
    hub = Hub(prefix=PREFIX)
    broken = {**state.payload, "open_irregularities": ["x"], "irregularities": [{"code": "NO_ID"}, "x", {"id": "x"}]}
    hub.take(state.topic, json.dumps(broken).encode(), 10.0)
    assert list(flags(hub)) == ["x"]  # the one with an id; the others are logged and skipped
    hub.take(state.topic, json.dumps({**broken, "seq": broken["seq"] + 1, "irregularities": 7}).encode(), 11.0)
    assert list(flags(hub)) == ["x"]


# --- real broker, web service and Chromium -------------------------------------------------------


async def publish_all(broker: Broker, publications: list[Publication]) -> None:
    async with aiomqtt.Client("127.0.0.1", broker.port) as client:
        for p in publications:
            await client.publish(p.topic, p.payload_bytes(), qos=p.qos, retain=p.retain)


@pytest.mark.browser
@pytest.mark.broker
async def test_tablet_started_mid_round_shows_the_open_flag_with_its_details(mosquitto: Broker) -> None:
    illegal = finding("5-1")
    bounce = finding("4-1", code="CLOCK_BOUNCE", subtype=None, severity=Severity.WARNING, ply=4, side=chess.BLACK,
                     status=Status.ACKNOWLEDGED)
    publisher = Publisher(board=BOARD, prefix=PREFIX, session=7)
    state = game_state(illegal, bounce)
    before = [publisher.status(state="online", board_link={"driver": "sim", "port": "sim://", "connected": True},
                               clock_link={"model": "sim", "connected": True}, at=T0),
              # The live messages are published while no web service runs: nobody keeps them.
              *publisher.render([IrregularityRaised(irregularity=dataclasses.replace(bounce, status=Status.OPEN)),
                                 IrregularityUpdated(irregularity=bounce),
                                 IrregularityRaised(irregularity=illegal), StateChanged(at=T0 + 300)],
                                state, at=T0 + 300)]
    await publish_all(mosquitto, before)

    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: BOARD in service.hub.hall.boards and service.hub.hall.boards[BOARD].state is not None)
        page = await chromium.new_page(viewport={"width": 1024, "height": 768})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        base = f"http://127.0.0.1:{service.http_port}"
        await page.goto(f"{base}/arbiter")
        await page.fill('input[name="username"]', USER)
        await page.fill('input[name="password"]', PASSWORD)
        await page.click('button[type="submit"]')
        flag = page.locator(f'.tboard[data-board="{BOARD}"] .flag[data-flag="5-1"]')
        await flag.wait_for(timeout=5000)
        assert await flag.get_attribute("data-status") == "open"
        text = await flag.inner_text()
        assert "details not received" not in text
        assert "7.5.1" in text and "P f1 wK" in text and "C W" in text  # articles and evidence
        assert "+2 min to Black" in text  # the suggestion
        assert "5 (3. Bb5)" in text  # the ply with its move, from the state's SAN
        other = page.locator(f'.tboard[data-board="{BOARD}"] .flag[data-flag="4-1"]')
        assert await other.get_attribute("data-status") == "acknowledged"
        assert await page.locator(f'.tboard[data-board="{BOARD}"] .flag').count() == 2

        # Live news newer than the state wins: the arbiter acknowledged on another tablet.
        acknowledged = dataclasses.replace(illegal, status=Status.ACKNOWLEDGED, ruling=None)
        await publish_all(mosquitto, publisher.render([IrregularityUpdated(irregularity=acknowledged)],
                                                      game_state(acknowledged, bounce), at=T0 + 310))
        card = f'.tboard[data-board="{BOARD}"]'
        await page.wait_for_selector(f'{card} .flag[data-flag="5-1"][data-status="acknowledged"]', timeout=3000)
        # A later state without the flags (both resolved; the live updates were lost): the state wins.
        await publish_all(mosquitto, publisher.render([StateChanged(at=T0 + 400)], game_state(), at=T0 + 400))
        # Nothing left for the arbiter on this board: it folds to one line; opened, both are in "Resolved".
        await page.wait_for_selector(f'.tboard.quiet[data-board="{BOARD}"]', state="attached", timeout=3000)
        await page.locator(".quiet-boards > summary").click()
        await page.locator(f"{card} .quiet-row > summary").click()
        assert await flag.get_attribute("data-status") == "resolved"
        assert await other.get_attribute("data-status") == "resolved"

        # The broadcast screen started after all this never receives a byte of it (G2).
        screen = await chromium.new_page(viewport={"width": 1920, "height": 1080})
        frames: list[str] = []
        screen.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
        await publish_all(mosquitto, publisher.render([IrregularityRaised(irregularity=finding("6-1", ply=6)),
                                                       StateChanged(at=T0 + 500)],
                                                      game_state(finding("6-1", ply=6)), at=T0 + 500))
        await wait_until(lambda: "6-1" in service.hub.extra[BOARD].irregularities)
        await screen.goto(f"{base}/")
        await screen.wait_for_selector(f'.card[data-board="{BOARD}"][data-ply="{len(MOVES)}"]', timeout=5000)
        assert frames
        assert not [f for f in frames if "6-1" in f or "ILLEGAL" in f or "irregular" in f or "evidence" in f]
        assert errors == []
