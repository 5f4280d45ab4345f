"""``boardd web``: hub views, security of the tablet, and real headless Chromium on both pages."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import aiomqtt
import pytest

from boardd.consumers.relay import MqttSettings
from boardd.consumers.web.app import WebConfig, WebService
from boardd.consumers.web.auth import LoginThrottle, SessionStore, hash_password, verify_password
from boardd.consumers.web.hub import Hub
from boardd.consumers.web.tablet import apply_delta
from tests.consumers.feed import Feed, Publication, ScriptedGame, interleave, load_games, script
from tests.mosquitto import Broker

PREFIX = "hall1"
USER, PASSWORD = "arbiter", "correct horse battery"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HAVE_CHROMIUM = os.path.exists(CHROMIUM)
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
SIZES = {"1080p": (1920, 1080), "tablet-landscape": (1024, 768), "tablet-portrait": (768, 1024)}


def round_of(pgn_dir: Path, boards: int = 8) -> list[ScriptedGame]:
    games = load_games(pgn_dir / "tatamast22.pgn", boards)
    return [script(g, board=f"t{i + 1}", board_no=i + 1, round_no=4, seed=i) for i, g in enumerate(games)]


async def publish(broker: Broker, publications: list[Publication]) -> None:
    async with aiomqtt.Client("127.0.0.1", broker.port) as client:
        client.pending_calls_threshold = 1000
        for start in range(0, len(publications), 50):
            batch = publications[start:start + 50]
            await asyncio.gather(*(client.publish(t, p, qos=q, retain=r) for t, p, r, q in batch))


@contextlib.asynccontextmanager
async def running_web(broker: Broker) -> AsyncIterator[WebService]:
    config = WebConfig(mqtt=MqttSettings(port=broker.port, prefix=PREFIX), host="127.0.0.1", port=0,
                       users={USER: hash_password(PASSWORD, n=2**12)}, command_token="t0ken-arbiter", title="Test Open")
    service = WebService(config)
    task = asyncio.create_task(service.serve())
    try:
        await asyncio.wait_for(service.connected.wait(), 10)
        assert service.http_port  # the HTTP site starts before the MQTT link
        yield service
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def wait_until(predicate: Any, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def browser() -> AsyncIterator[Any]:
    if not HAVE_CHROMIUM:
        pytest.fail("Chromium missing: run scripts/system-deps.sh chromium")
    from playwright.async_api import async_playwright

    before = _descendants(os.getpid())
    playwright = await async_playwright().start()
    try:
        instance = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            await _bounded(instance.close(), "Chromium's close")
    finally:
        # Playwright's stop waits without a bound for its node driver to exit; on a loaded machine it was seen to
        # hang there after every assertion had passed (the whole session then stopped by pytest-timeout). Bound
        # it, and kill the driver and its browsers should they not go.
        if not await _bounded(playwright.stop(), "Playwright's stop"):
            for pid in _descendants(os.getpid()) - before:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


_TEARDOWN_S = 20.0


async def _bounded(step: Any, what: str) -> bool:
    """Await a teardown *step* for at most ``_TEARDOWN_S``; ``False`` (with a warning) when it did not end."""
    try:
        await asyncio.wait_for(step, _TEARDOWN_S)
    except TimeoutError:
        warnings.warn(f"{what} did not end in {_TEARDOWN_S:.0f} s", RuntimeWarning, stacklevel=2)
        return False
    return True


def _descendants(root: int) -> set[int]:
    """The process ids below *root* (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


# --- pure: hub, auth ------------------------------------------------------------------------------


def test_public_view_never_carries_irregularity_data(pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX)
    steps = feed.publications(upto=6)
    hub = Hub(prefix=PREFIX)
    public: list[str] = []
    arbiter: list[str] = []
    flagged = [feed.irregularity("6-1", ply=6, side="black"),
               feed.state(6, {"white": 5000.0, "black": 5100.0}, "white", open_irregularities=("6-1",), illegal=(0, 1)),
               feed._json("event", False, 1, type="TAKEBACK_DETECTED", to_ply=5),
               feed.irregularity("6-1", ply=6, side="black", status="acknowledged")]
    for topic, payload, _, _ in [p for step in steps for p in step] + flagged:
        for message in hub.take(topic, payload, now=100.0):
            (public if message.audience == "public" else arbiter).append(message.text)
    assert public and arbiter
    for text in public:
        for secret in ("6-1", "ILLEGAL", "illegal", "irregular", "SELF_CHECK", "TAKEBACK", "phase", "made_at",
                       "completion", "evidence"):
            assert secret not in text, (secret, text)
    page: dict[str, dict[str, Any]] = {}
    for text in arbiter:  # the tablet: the board's view, then deltas
        body = json.loads(text)
        page["t1"] = body["view"] if body["t"] == "board" else apply_delta(page["t1"], body)
    assert [json.loads(text)["t"] for text in arbiter].count("board") == 1
    last_arbiter = page["t1"]
    assert last_arbiter == hub.arbiter_view("t1", 100.0)
    assert last_arbiter["flags"][0]["id"] == "6-1"
    assert last_arbiter["flags"][0]["status"] == "acknowledged"
    assert last_arbiter["flags"][0]["title"] != "ILLEGAL_MOVE/SELF_CHECK"  # plain words from boardd.core.laws
    assert last_arbiter["rank"] == 0  # acknowledged: no longer an open flag
    assert json.loads(hub.snapshot("public", 100.0))["boards"][0]["white"] == game.white


def test_hub_clock_age_and_late_joiner_flags(pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX)
    hub = Hub(prefix=PREFIX)
    for topic, payload, _, _ in [p for step in feed.publications(upto=3) for p in step]:
        hub.take(topic, payload, now=10.0)
    batch = hub.flush_clocks(11.0)  # clock readings go out batched, one message for every board
    assert [m.audience for m in batch] == ["public", "arbiter"]
    assert json.loads(batch[0].text)["t"] == "clocks" and "t1" in json.loads(batch[0].text)["clocks"]
    assert hub.flush_clocks(11.2) == []
    view = hub.public_view("t1", 12.5)
    assert view is not None and view["clock"]["age"] == 2.5
    assert view["clock"]["running"] == "black"  # after 3 plies
    assert view["online"] is True
    bridge = "$SYS/broker/connection/bridge-t1/state"
    (public, arbiter) = hub.take(bridge, b"0", now=13.0)  # the Pi lost power: its last will never arrives
    assert json.loads(arbiter.text)["set"]["online"] is False  # the tablet (a delta): the link as reported
    assert json.loads(public.text)["view"]["online"] is True    # the hall screen: once it has lasted link_grace
    assert hub.take(bridge, b"0", now=13.5) == []
    (public,) = [m for m in hub.links_due(16.0) if m.audience == "public"]
    assert json.loads(public.text)["view"]["online"] is False
    assert json.loads(hub.take(bridge, b"1", now=17.0)[0].text)["view"]["online"] is True
    topic, payload, _, _ = feed.state(3, {"white": 1.0, "black": 2.0}, "black", open_irregularities=("2-1",))
    hub.take(topic, payload, now=20.0)
    flags = hub.arbiter_view("t1", 20.0)["flags"]  # type: ignore[index]
    assert [f["id"] for f in flags] == ["2-1"] and flags[0]["status"] == "open"
    hub.take(*feed.irregularity("3-1", ply=3)[:2], now=21.0)
    assert [f["id"] for f in hub.arbiter_view("t1", 21.0)["flags"]] == ["3-1", "2-1"]  # type: ignore[index]
    # A new game on the board (next round): the old game's flags are gone.
    feed.g.round = "5.1"
    hub.take(*feed.state(0, {"white": 5400.0, "black": 5400.0}, None)[:2], now=22.0)
    assert hub.arbiter_view("t1", 22.0)["flags"] == []  # type: ignore[index]


def degraded_status(feed: Feed) -> Publication:
    """The status boardd publishes when the board's USB link drops (contract ``degraded``)."""
    return feed._json("status", True, 1, state="degraded",
                      board_link={"driver": "dgt", "port": "/dev/ttyACM0", "serial": "B1", "connected": False},
                      clock_link={"model": "dgt3000", "connected": True}, software="test",
                      link_change={"link": "board", "up": False, "detail": "USB read failed: device gone"})


def test_degraded_board_is_distinct_with_its_reason(pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    feed = Feed(game, prefix=PREFIX)
    hub = Hub(prefix=PREFIX)
    for topic, payload, _, _ in [p for step in feed.publications(upto=2) for p in step]:
        hub.take(topic, payload, now=1.0)
    assert hub.public_view("t1", 1.0)["link"] == "online"  # type: ignore[index]
    public, arbiter = hub.take(*degraded_status(feed)[:2], now=2.0)
    public_view, arbiter_view = json.loads(public.text)["view"], json.loads(arbiter.text)["set"]  # the tablet: a delta
    assert public_view["link"] == "online"  # the hall screen: a drop shows once it has lasted link_grace (3 s)
    public_view = hub.public_view("t1", 5.5)
    assert public_view is not None
    assert public_view["link"] == "degraded" and public_view["online"] is True  # boardd runs; its board does not
    assert "ttyACM0" not in public.text and "USB" not in public.text  # the why is for the tablet only
    assert arbiter_view["link"] == "degraded"
    assert arbiter_view["link_why"] == ["board disconnected (dgt /dev/ttyACM0)", "USB read failed: device gone"]
    clock_gone = feed._json("status", True, 1, state="degraded", software="test",
                             board_link={"driver": "dgt", "port": "/dev/ttyACM0", "connected": True},
                             clock_link={"model": "dgt3000", "connected": False})
    hub.take(*clock_gone[:2], now=3.0)
    assert hub.link("t1") == ("degraded", ["clock disconnected (dgt3000)"])
    hub.take(*feed._json("status", True, 1, state="offline", board_link={}, clock_link={})[:2], now=4.0)
    assert hub.link("t1")[0] == "offline" and hub.public_view("t1", 6.0)["online"] is False  # type: ignore[index]
    hub.take(*feed.publications(upto=0)[0][0][:2], now=5.0)  # online again
    assert hub.link("t1") == ("online", [])
    hub.take("$SYS/broker/connection/bridge-t1/state", b"0", now=6.0)
    assert hub.link("t1")[0] == "offline" and "bridge" in hub.link("t1")[1][0]


def test_password_hash_sessions_and_throttle() -> None:
    encoded = hash_password("pw-1", n=2**10)
    assert encoded.startswith("scrypt$1024$8$1$")
    assert verify_password("pw-1", encoded)
    assert not verify_password("pw-2", encoded)
    assert not verify_password("pw-1", "scrypt$garbage")
    assert hash_password("pw-1", n=2**10) != encoded  # salted
    store = SessionStore(idle_timeout=10, max_age=100)
    session = store.create("a", now=0.0)
    assert store.get(session.token, 5.0) is session
    assert store.get(session.token, 14.0) is session  # touched at 5
    assert store.get(session.token, 30.0) is None
    assert store.get("forged", 0.0) is None
    throttle = LoginThrottle(limit=2, lockout=60)
    throttle.failed("ip", 0.0)
    throttle.failed("ip", 1.0)
    assert throttle.is_locked("ip", 2.0)
    assert not throttle.is_locked("ip", 62.0)


# --- HTTP security without a browser -----------------------------------------------------------------


@pytest.mark.broker
async def test_tablet_refuses_the_unauthenticated(mosquitto: Broker, pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    await publish(mosquitto, [p for step in Feed(game, prefix=PREFIX).publications(upto=2) for p in step])
    async with running_web(mosquitto) as service:
        base = f"http://127.0.0.1:{service.http_port}"
        await wait_until(lambda: "t1" in service.hub.hall.boards)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            page = await http.get(f"{base}/arbiter", allow_redirects=False)
            assert page.status == 303 and page.headers["Location"] == "/arbiter/login"
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(f"{base}/arbiter/ws")
            assert refused.value.status == 401
            cmd = {"board": "t1", "name": "ack", "irregularity": "1-1"}
            assert (await http.post(f"{base}/arbiter/api/cmd", json=cmd)).status == 401
            bad = await http.post(f"{base}/arbiter/login", data={"username": USER, "password": "wrong"},
                                  allow_redirects=False)
            assert bad.status == 303 and "failed" in bad.headers["Location"]
            assert not http.cookie_jar.filter_cookies(base + "/arbiter")
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # IP host
            login = await http.post(f"{base}/arbiter/login", data={"username": USER, "password": PASSWORD},
                                    allow_redirects=False)
            assert login.status == 303
            cookie = login.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/arbiter" in cookie
            page = await http.get(f"{base}/arbiter")
            assert page.status == 200
            html = await page.text()
            csrf = html.split('name="csrf-token" content="')[1].split('"')[0]
            assert len(csrf) > 30
            assert (await http.post(f"{base}/arbiter/api/cmd", json=cmd)).status == 403  # no CSRF header
            assert (await http.post(f"{base}/arbiter/api/cmd", json=cmd,
                                    headers={"X-CSRF-Token": "x" * 43})).status == 403
            assert (await http.post(f"{base}/arbiter/logout", data={"csrf": "é" * 43})).status == 403  # not a 500
            assert (await http.post(f"{base}/arbiter/api/cmd", json=cmd,
                                    headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"})).status == 403
            with pytest.raises(aiohttp.WSServerHandshakeError) as cross:
                await http.ws_connect(f"{base}/arbiter/ws", origin="http://evil.example")
            assert cross.value.status == 403
            assert (await http.post(f"{base}/arbiter/api/cmd", json={**cmd, "name": "set-clock"},
                                    headers={"X-CSRF-Token": csrf})).status == 400  # not a tablet command
            assert (await http.post(f"{base}/arbiter/api/cmd", json={**cmd, "name": "new-game"},
                                    headers={"X-CSRF-Token": csrf})).status == 400  # new-game has no irregularity
            for bad in ({"name": "set-result", "result": "2-0"}, {"name": "set-result"},
                        {"name": "new-game", "white": "A\nB"}, {"name": "new-game", "board_no": 0},
                        {"name": "flip", "white_at_a1": True}):
                refused = await http.post(f"{base}/arbiter/api/cmd", json={"board": "t1", **bad},
                                          headers={"X-CSRF-Token": csrf})
                assert refused.status == 400, (bad, refused.status, await refused.text())
            assert (await http.post(f"{base}/arbiter/api/cmd", json={**cmd, "board": "t9"},
                                    headers={"X-CSRF-Token": csrf})).status == 400
            ok = await http.post(f"{base}/arbiter/api/cmd", json=cmd, headers={"X-CSRF-Token": csrf})
            assert ok.status == 202
            ws = await http.ws_connect(f"{base}/arbiter/ws")
            snapshot = json.loads((await ws.receive(timeout=5)).data)
            assert snapshot["t"] == "snapshot" and snapshot["boards"][0]["board"] == "t1"
            await ws.send_str("ping")  # keeps the session alive, no answer
            # Logging out ends the session's live sockets too (4401: back to the login page).
            assert (await http.post(f"{base}/arbiter/logout", data={"csrf": "forged"})).status == 403
            out = await http.post(f"{base}/arbiter/logout", data={"csrf": csrf}, allow_redirects=False)
            assert out.status == 303
            closed = await ws.receive(timeout=5)
            assert closed.type == aiohttp.WSMsgType.CLOSE and closed.data == 4401
            assert (await http.get(f"{base}/arbiter", allow_redirects=False)).status == 303
            headers = (await http.get(f"{base}/")).headers  # the public page needs no login
            assert "default-src 'self'" in headers["Content-Security-Policy"]
            assert headers["X-Frame-Options"] == "DENY"


# --- real browser ------------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.broker
async def test_broadcast_page_shows_a_move_within_one_second(mosquitto: Broker, pgn_dir: Path) -> None:
    expected = round_of(pgn_dir)
    feeds = [Feed(g, prefix=PREFIX) for g in expected]
    steps = [f.publications() for f in feeds]
    await publish(mosquitto, interleave([s[:21] for s in steps]))  # 20 plies on every board
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: all((r.state or {}).get("ply") == 20 for r in service.hub.hall.boards.values())
                         and len(service.hub.hall.boards) == 8)
        page = await chromium.new_page(viewport={"width": 1920, "height": 1080})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        frames: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
        await page.goto(f"http://127.0.0.1:{service.http_port}/")
        await page.wait_for_selector('.card[data-board="t8"][data-ply="20"]', timeout=5000)
        assert await page.locator(".card").count() == 8
        name = page.locator('.card[data-board="t1"] .player.white .name')
        assert await name.get_attribute("title") == expected[0].white
        assert (await name.inner_text()).startswith(expected[0].white.split(",")[0])
        # The arbiter-only traffic of this board must not reach the page.
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            for topic, payload, retain, qos in [feeds[0].irregularity("21-1", ply=21)]:
                await client.publish(topic, payload, qos=qos, retain=retain)
            # Nor the open flags the retained state carries in full for late joiners (t6 is not played on).
            topic, payload, retain, qos = steps[5][20][-2]
            flagged = json.loads(payload)
            flagged_seq = feeds[5].seq = feeds[5].seq + 1
            flag_body = json.loads(feeds[5].irregularity("20-7", ply=20)[1])
            flagged.update(seq=flagged_seq, open_irregularities=["20-7"], irregularities=[
                {k: v for k, v in flag_body.items() if k not in {"v", "board", "session", "seq", "ts"}}])
            await client.publish(topic, json.dumps(flagged).encode(), qos=qos, retain=retain)
            await wait_until(lambda: "20-7" in service.hub.extra["t6"].irregularities)
            latencies = []
            for board in (0, 3, 7):
                started = time.monotonic()
                for topic, payload, retain, qos in steps[board][21]:
                    await client.publish(topic, payload, qos=qos, retain=retain)
                await page.wait_for_selector(f'.card[data-board="t{board + 1}"][data-ply="21"]', timeout=1000)
                latencies.append(time.monotonic() - started)
        assert max(latencies) < 1.0, latencies
        last = expected[0].moves[20].uci()
        key = await page.locator('.card[data-board="t1"] svg.board').get_attribute("data-key")
        assert key is not None and key.endswith("|" + last)  # last move highlighted
        clock_before = await page.locator('.card[data-board="t2"] .clock.running').inner_text()
        await asyncio.sleep(1.2)
        clock_after = await page.locator('.card[data-board="t2"] .clock.running').inner_text()
        assert clock_before != clock_after  # the running side counts down in the browser
        assert frames
        assert not [f for f in frames if "21-1" in f or "ILLEGAL" in f or "irregular" in f]
        assert not [f for f in frames if "20-7" in f or "evidence" in f or "P f1 wK" in f]
        for name, (width, height) in SIZES.items():
            await page.set_viewport_size({"width": width, "height": height})
            laid_out = f"() => document.querySelector('.boards').dataset.layoutFor === '{width}x{height}'"
            await page.wait_for_function(laid_out, timeout=2000)
            await page.screenshot(path=str(SCREENSHOTS / f"broadcast-{name}.png"))
        # A Pi that lost power: its bridge notification says 0; the card says so once it has lasted the
        # grace period (3 s: a blink of the link is no news for spectators) and its clock stops.
        await publish(mosquitto, [("$SYS/broker/connection/bridge-t2/state", b"0", True, 1)])
        await page.wait_for_selector('.card.offline[data-board="t2"]', timeout=5000)
        assert "no signal" in await page.locator('.card[data-board="t2"] .board-no').inner_text()
        assert await page.locator('.card[data-board="t2"] .clock.running').count() == 0
        assert errors == []
        # Readable from 3 m on a 1080p hall screen (55": ~0.63 mm a pixel; 24 px ≈ 15 mm letters).
        await page.set_viewport_size({"width": 1920, "height": 1080})
        # The layout runs on the resize event, which may arrive after set_viewport_size returns.
        await page.wait_for_function("() => document.querySelector('.boards').dataset.layoutFor === '1920x1080'",
                                     timeout=2000)
        sizes = await page.evaluate("""() => ({
            name: parseFloat(getComputedStyle(document.querySelector('.player .name')).fontSize),
            clock: parseFloat(getComputedStyle(document.querySelector('.player .clock')).fontSize),
            bottom: Math.max(...[...document.querySelectorAll('.card')].map((c) => c.getBoundingClientRect().bottom)),
        })""")
        assert sizes["name"] >= 24 and sizes["clock"] >= 36, sizes
        assert sizes["bottom"] <= 1080, sizes  # all 8 boards on screen, no scrolling
        await page.close()
        # One slice of the hall per screen: ?boards=2-3,8 (and ?round=N).
        section = await chromium.new_page(viewport={"width": 1920, "height": 1080})
        await section.goto(f"http://127.0.0.1:{service.http_port}/?round=4&boards=2-3,8")
        await section.wait_for_selector('.card[data-board="t8"]', timeout=5000)
        assert [await c.get_attribute("data-board") for c in await section.locator(".card").all()] == ["t2", "t3", "t8"]
        await section.goto(f"http://127.0.0.1:{service.http_port}/?round=5")
        await section.wait_for_selector("body[data-snapshots]", state="attached", timeout=5000)
        assert await section.locator(".card").count() == 0  # the snapshot had 8 boards, all of round 4
        await section.close()


@pytest.mark.browser
@pytest.mark.broker
async def test_tablet_flag_ack_round_trip(mosquitto: Broker, pgn_dir: Path) -> None:
    from boardd.daemon.commands import parse_command
    from boardd.daemon.config import CommandsConfig

    expected = round_of(pgn_dir, boards=4)
    feeds = [Feed(g, prefix=PREFIX) for g in expected]
    await publish(mosquitto, interleave([f.publications(upto=12) for f in feeds]))
    commands: list[tuple[str, dict[str, Any]]] = []

    async def daemon_side() -> None:
        """Stands in for boardd on board t3: answers cmd/ack and publishes the updated flag."""
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe(f"{PREFIX}/t3/cmd/#", qos=1)
            async for message in client.messages:
                name = message.topic.value.rsplit("/", 1)[1]
                raw = message.payload if isinstance(message.payload, bytes) else b""
                parsed = parse_command(name, raw, at=0.0, auth=CommandsConfig(tokens={"arbiter": "t0ken-arbiter"}))
                body = json.loads(raw)
                commands.append((name, body))
                status = {"ack": "acknowledged", "resolve": "resolved"}[name]
                for topic, payload, retain, qos in [
                        feeds[2].cmd_result(parsed.id),
                        feeds[2].irregularity("12-1", ply=12, side="black", status=status,
                                                 ruling=body.get("ruling"))]:
                    await client.publish(topic, payload, qos=qos, retain=retain)

    async with running_web(mosquitto) as service, browser() as chromium:
        daemon = asyncio.create_task(daemon_side())
        try:
            await wait_until(lambda: len(service.hub.hall.boards) == 4)
            page = await chromium.new_page(viewport={"width": 1024, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            base = f"http://127.0.0.1:{service.http_port}"
            await page.goto(f"{base}/arbiter")
            assert page.url.endswith("/arbiter/login")
            await page.fill('input[name="username"]', USER)
            await page.fill('input[name="password"]', PASSWORD)
            await page.click('button[type="submit"]')
            await page.wait_for_selector('.tboard[data-board="t4"]', state="attached", timeout=5000)
            # Nothing needs the arbiter yet: every board is one line in a closed section.
            assert await page.locator(".tboard.quiet").count() == 4
            assert not await page.locator('.tboard[data-board="t4"]').is_visible()
            assert "Nothing needs you." in await page.locator("#boards").inner_text()
            assert not await page.locator("#banner").is_visible()
            # A warning on t1, then an illegal move on t3: t3 goes first and the banner shows.
            await publish(mosquitto, [feeds[0].irregularity("11-1", code="CLOCK_BOUNCE", severity="warning", ply=11),
                                      feeds[2].irregularity("12-1", ply=12, side="black")])
            flag = page.locator('.tboard[data-board="t3"] .flag[data-flag="12-1"]')
            await flag.wait_for(timeout=2000)
            await page.locator("#banner").wait_for(state="visible", timeout=2000)
            assert "Board 3" in await page.locator("#banner-text").inner_text()
            order = [await b.get_attribute("data-board") for b in await page.locator(".tboard").all()]
            assert order[:2] == ["t3", "t1"]
            assert await flag.get_attribute("data-status") == "open"
            text = await flag.inner_text()
            assert "7.5.1" in text and text.split("Side")[1].split("\n")[1].strip() == "Black"
            assert "P f1 wK" in text  # evidence with times
            assert f"12 (6… {expected[2].sans[11]})" in text  # the ply with its move
            await publish_screens(page, "arbiter")
            small = await page.evaluate("""() => [...document.querySelectorAll('button, input')]
                .filter((e) => e.offsetParent !== null)
                .map((e) => e.getBoundingClientRect())
                .filter((r) => r.height < 44 || r.width < 44).length""")
            assert small == 0  # every touch target at least 44 × 44 px
            await flag.locator("button.ack").click()
            await page.wait_for_selector('.tboard[data-board="t3"] .flag[data-flag="12-1"][data-status="acknowledged"]',
                                         timeout=3000)
            await page.wait_for_selector('.tboard[data-board="t3"] .outcome.ok', timeout=3000)
            assert commands and commands[0][0] == "ack"
            assert commands[0][1]["irregularity"] == "12-1" and commands[0][1]["id"].startswith("web-")
            # Resolve with a ruling: the flag goes to resolved, with the ruling shown.
            await flag.locator("input.ruling-text").fill("warning to White; +2 min to Black")
            await flag.locator("button.resolve").click()
            # Resolved: out of the way (t3 has nothing else for the arbiter: it folds to one line), ruling kept.
            await page.wait_for_selector('.tboard.quiet[data-board="t3"]', state="attached", timeout=3000)
            assert commands[1] == ("resolve", {"id": commands[1][1]["id"], "irregularity": "12-1",
                                               "ruling": "warning to White; +2 min to Black", "token": "t0ken-arbiter"})
            await page.locator(".quiet-boards > summary").click()
            await page.locator('.tboard[data-board="t3"] .quiet-row > summary').click()
            await page.locator('.tboard[data-board="t3"] .resolved-log > summary').click()
            resolved = page.locator('.tboard[data-board="t3"] .resolved-log .flag[data-flag="12-1"]')
            assert await resolved.get_attribute("data-status") == "resolved"
            assert "Ruling: warning to White; +2 min to Black" in await resolved.inner_text()
            assert await resolved.locator("button").count() == 0  # no actions on a resolved incident
            assert errors == []
            # An unauthenticated page in another context cannot open the arbiter socket.
            other = await chromium.new_page()
            await other.goto(f"{base}/")
            opened = await other.evaluate("""() => new Promise((resolve) => {
                const ws = new WebSocket("ws://" + location.host + "/arbiter/ws");
                ws.onopen = () => resolve("open"); ws.onerror = () => resolve("refused");
            })""")
            assert opened == "refused"
            status = await other.evaluate("""async () => (await fetch("/arbiter/api/cmd", {method: "POST",
                headers: {"Content-Type": "application/json"},
                body: JSON.stringify({board: "t3", name: "ack", irregularity: "12-1"})})).status""")
            assert status == 401
            assert len(commands) == 2
        finally:
            daemon.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await daemon


@pytest.mark.browser
@pytest.mark.broker
async def test_tablet_board_trouble_events_and_board_commands(mosquitto: Broker, pgn_dir: Path) -> None:
    from boardd.daemon.commands import parse_command
    from boardd.daemon.config import CommandsConfig

    expected = round_of(pgn_dir, boards=2)
    feeds = [Feed(g, prefix=PREFIX) for g in expected]
    await publish(mosquitto, interleave([f.publications(upto=10) for f in feeds]))
    commands: list[tuple[str, str, dict[str, Any]]] = []

    async def collect() -> None:
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe(f"{PREFIX}/+/cmd/#", qos=1)
            async for message in client.messages:
                _, board, _, name = message.topic.value.split("/")
                raw = message.payload if isinstance(message.payload, bytes) else b""
                parse_command(name, raw, at=0.0, auth=CommandsConfig(tokens={"arbiter": "t0ken-arbiter"}))  # valid
                commands.append((board, name, json.loads(raw)))

    async with running_web(mosquitto) as service, browser() as chromium:
        collector = asyncio.create_task(collect())
        try:
            await wait_until(lambda: len(service.hub.hall.boards) == 2)
            page = await chromium.new_page(viewport={"width": 1024, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            dialogs: list[str] = []
            answer = {"accept": False}

            async def on_dialog(dialog: Any) -> None:
                dialogs.append(dialog.message)
                await (dialog.accept() if answer["accept"] else dialog.dismiss())

            page.on("dialog", on_dialog)
            base = f"http://127.0.0.1:{service.http_port}"
            await page.goto(f"{base}/arbiter/login")
            await page.fill('input[name="username"]', USER)
            await page.fill('input[name="password"]', PASSWORD)
            await page.click('button[type="submit"]')
            await page.wait_for_selector('.tboard.quiet[data-board="t2"][data-link="online"]', state="attached",
                                         timeout=5000)
            assert await page.locator(".link-state").count() == 0
            # t2's board drops off USB (boardd says degraded), t1's players signal 1-0 with the kings.
            feeds[0].now += 5
            await publish(mosquitto, [
                degraded_status(feeds[1]),
                feeds[1]._json("event", False, 1, type="BOARD_DISCONNECTED", code=None, at=feeds[1].iso(feeds[1].now),
                               at_s=feeds[1].now),
                feeds[0]._json("event", False, 1, type="RESULT_SIGNAL", code=None, result="1-0",
                               gesture="kings on the centre squares", at=feeds[0].iso(feeds[0].now),
                               at_s=feeds[0].now)])
            t1, t2 = page.locator('.tboard[data-board="t1"]'), page.locator('.tboard[data-board="t2"]')
            # t2 needs the arbiter once its link has been down for the grace period ([web] link_grace, 3 s)
            await page.wait_for_selector('.tboard:not(.quiet)[data-board="t2"][data-link="degraded"]', timeout=6000)
            assert await t2.locator(".link-state").inner_text() == "DEGRADED"
            why = await t2.locator(".link-why").inner_text()
            assert "board disconnected (dgt /dev/ttyACM0)" in why and "USB read failed" in why
            assert not await t2.locator(".event-list").is_visible()  # the event log is folded: one click away
            await t2.locator(".event-log > summary").click()
            assert "Board disconnected" in await t2.locator(".event-list").inner_text()
            assert [await b.get_attribute("data-board") for b in await page.locator(".tboard").all()] == ["t2", "t1"]
            assert "1 with link trouble" in await page.locator("#summary").inner_text()
            signal = t1.locator('.event[data-type="RESULT_SIGNAL"]')
            assert "Result signalled on the board: 1-0" in await signal.inner_text()
            # Dismissing the confirmation sends nothing; confirming records the signalled result.
            await signal.locator("button.accept-result").click()
            await asyncio.sleep(0.5)
            assert commands == [] and "1-0" in dialogs[-1] and expected[0].white in dialogs[-1]
            answer["accept"] = True
            await signal.locator("button.accept-result").click()
            await wait_until(lambda: len(commands) == 1, 5)
            assert commands[0][:2] == ("t1", "set-result")
            assert {k: v for k, v in commands[0][2].items() if k != "id"} == {"result": "1-0", "token": "t0ken-arbiter"}
            assert commands[0][2]["id"].startswith("web-")
            # Board actions on t2: they stay open, and typed names stay, while moves redraw the tablet.
            await t2.locator(".board-actions summary").click()
            await t2.locator("input.new-white").fill("Carlsen, Magnus")
            await publish(mosquitto, feeds[1].publications(upto=11)[11][:2])  # t2's next move redraws the tablet
            moved = "() => document.querySelector('.tboard[data-board=\"t2\"] .tboard-head .ply').textContent"
            await page.wait_for_function(moved + ".startsWith('6.')", timeout=3000)
            assert await t2.locator(".board-actions").get_attribute("open") is not None
            assert await t2.locator("input.new-white").input_value() == "Carlsen, Magnus"
            small = await page.evaluate("""() => [...document.querySelectorAll('button, input, select, summary')]
                .filter((e) => e.offsetParent !== null)
                .map((e) => e.getBoundingClientRect())
                .filter((r) => r.height < 44 || r.width < 44).length""")
            assert small == 0
            await publish_screens(page, "arbiter-board-actions")
            await t2.locator("input.new-black").fill("Nepomniachtchi, Ian")
            await t2.locator("input.new-round").fill("5")
            await t2.locator("button.new-game").click()
            await wait_until(lambda: len(commands) == 2, 5)
            assert "Carlsen, Magnus – Nepomniachtchi, Ian, round 5" in dialogs[-1]
            assert commands[1][:2] == ("t2", "new-game")
            assert {k: v for k, v in commands[1][2].items() if k != "id"} == {
                "white": "Carlsen, Magnus", "black": "Nepomniachtchi, Ian", "round": "5", "token": "t0ken-arbiter"}
            await t2.locator("select.result-choice").select_option("1/2-1/2")
            await t2.locator("button.set-result").click()
            await wait_until(lambda: len(commands) == 3, 5)
            assert commands[2][:2] == ("t2", "set-result") and commands[2][2]["result"] == "1/2-1/2"
            await t2.locator("button.flip").click()
            await wait_until(lambda: len(commands) == 4, 5)
            assert commands[3][:2] == ("t2", "flip") and set(commands[3][2]) == {"id", "token"}
            # The daemon's answer shows on the board.
            await publish(mosquitto, [feeds[1].cmd_result(commands[3][2]["id"], ok=False, error="no board")])
            await t2.locator(".outcome.bad").wait_for(timeout=3000)
            assert "flip: refused by the board — no board" in await t2.locator(".outcome.bad").inner_text()
            assert errors == []
        finally:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector


async def publish_screens(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        await page.set_viewport_size({"width": width, "height": height})
        await page.screenshot(path=str(SCREENSHOTS / f"{name}-{size}.png"))
    await page.set_viewport_size({"width": 1024, "height": 768})


async def test_a_socket_that_falls_behind_is_closed_not_waited_for() -> None:
    from boardd.consumers.web.app import _Client

    service = WebService(WebConfig(mqtt=MqttSettings(prefix=PREFIX)))
    slow = _Client("public", asyncio.Queue(maxsize=3))
    fast = _Client("public", asyncio.Queue(maxsize=100))
    arbiter = _Client("arbiter", asyncio.Queue(maxsize=100))
    service.clients |= {slow, fast, arbiter}
    for n in range(5):
        service.publish_to_clients("public", f"m{n}")
    assert slow not in service.clients and service.dropped_clients == 1
    assert slow.queue.get_nowait() is None  # the send loop closes the socket (1013) on this
    assert [fast.queue.get_nowait() for _ in range(5)] == [f"m{n}" for n in range(5)]
    assert arbiter.queue.empty()  # public texts never go to other audiences (and vice versa)


@pytest.mark.broker
async def test_web_reconnects_after_a_broker_restart(mosquitto: Broker, pgn_dir: Path) -> None:
    (game,) = round_of(pgn_dir, boards=1)
    steps = Feed(game, prefix=PREFIX).publications(upto=8)
    async with running_web(mosquitto) as service:
        await publish(mosquitto, [p for step in steps[:4] for p in step])
        await wait_until(lambda: (service.hub.public_view("t1", 0.0) or {}).get("ply") == 3)
        mosquitto.restart()
        await wait_until(lambda: not service.connected.is_set())
        await wait_until(service.connected.is_set, 20)
        async with aiohttp.ClientSession() as http:
            ws = await http.ws_connect(f"http://127.0.0.1:{service.http_port}/ws")
            assert json.loads((await ws.receive(timeout=5)).data)["boards"][0]["ply"] == 3  # kept across the restart
            await publish(mosquitto, [p for step in steps[4:] for p in step])
            seen = 0
            while seen != 8:
                body = json.loads((await ws.receive(timeout=5)).data)
                if body["t"] == "board":
                    seen = body["view"]["ply"]
            await ws.close()


@pytest.mark.browser
@pytest.mark.broker
async def test_tablet_two_hands_needs_an_explicit_confirmation(mosquitto: Broker, pgn_dir: Path) -> None:
    """R19: TWO_HANDS_AT_PRESS is a warning; its card offers Dismiss (resolve, accept false) and Confirm (resolve,
    accept true, after a dialog): the plain button can never turn a suspicion into an illegal move."""
    expected = round_of(pgn_dir, boards=2)
    feeds = [Feed(g, prefix=PREFIX) for g in expected]
    await publish(mosquitto, interleave([f.publications(upto=8) for f in feeds]))
    commands: list[dict[str, Any]] = []

    async def daemon_side() -> None:
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe(f"{PREFIX}/t2/cmd/#", qos=1)
            async for message in client.messages:
                raw = message.payload if isinstance(message.payload, bytes) else b""
                commands.append(json.loads(raw))

    async with running_web(mosquitto) as service, browser() as chromium:
        daemon = asyncio.create_task(daemon_side())
        try:
            await wait_until(lambda: len(service.hub.hall.boards) == 2)
            page = await chromium.new_page(viewport={"width": 1024, "height": 768})
            dialogs: list[str] = []

            async def accept(dialog: Any) -> None:
                dialogs.append(dialog.message)
                await dialog.accept()

            page.on("dialog", lambda dialog: asyncio.ensure_future(accept(dialog)))
            await page.goto(f"http://127.0.0.1:{service.http_port}/arbiter")
            await page.fill('input[name="username"]', USER)
            await page.fill('input[name="password"]', PASSWORD)
            await page.click('button[type="submit"]')
            await page.wait_for_selector('.tboard[data-board="t2"]', state="attached", timeout=5000)
            await publish(mosquitto, [feeds[1].irregularity("8-1", code="TWO_HANDS_AT_PRESS", severity="warning",
                                                            ply=8, side="black")])
            flag = page.locator('.tboard[data-board="t2"] .flag[data-flag="8-1"]')
            await flag.wait_for(timeout=3000)
            assert await flag.locator("button.resolve").inner_text() == "Dismiss"
            await flag.locator("button.confirm").click()
            await wait_until(lambda: len(commands) == 1)
            assert commands[0]["accept"] is True and commands[0]["irregularity"] == "8-1"
            assert dialogs and "7.5.4" in dialogs[0]
            await flag.locator("button.resolve").click()
            await wait_until(lambda: len(commands) == 2)
            assert commands[1]["accept"] is False and commands[1]["ruling"].startswith("dismissed")
        finally:
            daemon.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await daemon
