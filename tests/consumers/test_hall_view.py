"""The hall view (/arbiter/hall): 100 boards in headless Chromium at 1280x800 and 390x844."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.consumers.feed import Feed, interleave, load_games, script
from tests.consumers.test_web import (
    PASSWORD,
    PREFIX,
    SCREENSHOTS,
    USER,
    browser,
    degraded_status,
    publish,
    running_web,
    wait_until,
)
from tests.mosquitto import Broker

SIZES = {"tablet": (1280, 800), "phone": (390, 844)}


async def login(page: Any, base: str) -> None:
    await page.goto(f"{base}/arbiter/login")
    await page.fill('input[name="username"]', USER)
    await page.fill('input[name="password"]', PASSWORD)
    await page.click('button[type="submit"]')
    await page.wait_for_url(f"{base}/arbiter")


async def test_hall_view_of_100_boards_fits_and_shows_what_matters(mosquitto: Broker, pgn_dir: Path) -> None:
    (real,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    games = [script(real, board=f"t{n}", board_no=n, round_no=5, seed=n, max_plies=2 + n % 9) for n in range(1, 101)]
    feeds = [Feed(g, prefix=PREFIX) for g in games]
    await publish(mosquitto, interleave([f.publications() for f in feeds]))
    async with running_web(mosquitto) as service, browser() as chromium:
        await wait_until(lambda: len(service.hub.hall.boards) == 100, 20)
        # incidents: an illegal move on board 7, a warning on board 12; board 20's USB link is down
        await publish(mosquitto, [feeds[6].irregularity("5-1", ply=5, side="white"),
                                  feeds[11].irregularity("3-1", code="CLOCK_BOUNCE", severity="warning", ply=3),
                                  degraded_status(feeds[19]),
                                  feeds[6]._json("event", False, 1, type="BOARD_DISCONNECTED")])
        page = await chromium.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        base = f"http://127.0.0.1:{service.http_port}"
        assert (await page.goto(f"{base}/arbiter/hall")) is not None
        assert page.url.endswith("/arbiter/login")  # the hall view is for arbiters only
        await login(page, base)
        await page.goto(f"{base}/arbiter/hall")
        await page.wait_for_function("() => document.querySelectorAll('.tile').length === 100", timeout=10000)
        await page.wait_for_function(
            "() => document.querySelector('.tile[data-board=\"t7\"]').dataset.rank === '3' && "
            "document.querySelector('.tile[data-board=\"t20\"]').dataset.link === 'degraded'", timeout=5000)
        order = await page.eval_on_selector_all(".tile", "nodes => nodes.map(n => n.dataset.board)")
        assert order == [f"t{n}" for n in range(1, 101)]
        tile = page.locator('.tile[data-board="t7"]')
        text = await tile.inner_text()
        g = games[6]
        assert "7" in text and g.white.split(",")[0] in text and g.black.split(",")[0] in text
        plies = len(g.moves)
        assert f"move {plies // 2 + 1}" in text  # the move number
        assert text.count(":") >= 2  # both clocks
        assert await page.locator('.tile[data-board="t12"]').get_attribute("data-rank") == "2"
        colours = await page.eval_on_selector_all(
            '.tile[data-board="t7"], .tile[data-board="t12"], .tile[data-board="t1"]',
            "nodes => nodes.map(n => getComputedStyle(n).backgroundColor)")
        assert len(set(colours)) == 3  # illegal move, warning and a quiet board look different
        measured: dict[str, dict[str, float]] = {}
        for name, (width, height) in SIZES.items():
            await page.set_viewport_size({"width": width, "height": height})
            await page.wait_for_timeout(100)
            m = await page.evaluate("""() => {
                const tiles = [...document.querySelectorAll('.tile')].map(t => t.getBoundingClientRect());
                const overflow = [...document.querySelectorAll('.tile .top, .tile .pl')]
                    .filter(n => n.scrollWidth > n.clientWidth + 1).length;
                const grid = document.getElementById('hall').getBoundingClientRect();
                return {height: document.scrollingElement.scrollHeight, width: document.scrollingElement.scrollWidth,
                        content: Math.round(grid.bottom + window.scrollY),
                        minW: Math.min(...tiles.map(r => r.width)), minH: Math.min(...tiles.map(r => r.height)),
                        columns: new Set(tiles.map(r => Math.round(r.left))).size, overflow};
            }""")
            measured[name] = m
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(SCREENSHOTS / f"hall-100-{name}.png"), full_page=True)
            assert m["width"] <= width, (name, m)  # no sideways scrolling
            assert m["height"] <= 2 * height, (name, m)  # within two screens at 100 boards
            assert m["minW"] >= 44 and m["minH"] >= 44, (name, m)  # each tile is a touch target
            assert m["overflow"] == 0, (name, m)  # clocks and move numbers are never cut
        print("hall view, 100 boards:", measured)
        assert measured["tablet"]["content"] <= 800  # one screen on the tablet
        # one click to the board's incidents and log
        await page.set_viewport_size({"width": 1280, "height": 800})
        await tile.click()
        detail = page.locator("#detail")
        await detail.wait_for(state="visible", timeout=2000)
        assert "Board 7 (t7)" in await page.locator("#detail-title").inner_text()
        flag = page.locator('#detail-flags li[data-flag="5-1"]')
        assert "illegal-move" in await flag.inner_text() and "open" in await flag.inner_text()
        assert "BOARD_DISCONNECTED" in await page.locator("#detail-events").inner_text()
        assert await page.locator("#detail-tablet").get_attribute("href") == "/arbiter#board-t7"
        await page.click("#detail-close")
        await detail.wait_for(state="hidden", timeout=2000)
        # the round's result table
        await page.click("#show-results")
        rows = page.locator("#results tbody tr")
        await wait_until(lambda: True)
        assert await rows.count() == 100
        finished = [g for g in games if g.result != "*"]
        cells = await page.eval_on_selector_all("#results tbody td.r", "nodes => nodes.map(n => n.textContent)")
        assert cells.count("playing") == 100 - len(finished)
        # a section: ?boards=1-20 on a phone
        section = await chromium.new_page(viewport={"width": 390, "height": 844})
        await section.context.add_cookies(await page.context.cookies())
        await section.goto(f"{base}/arbiter/hall?boards=1-20")
        await section.wait_for_function("() => document.querySelectorAll('.tile').length === 20", timeout=10000)
        await section.wait_for_timeout(300)
        assert await section.locator(".tile").count() == 20
        await section.screenshot(path=str(SCREENSHOTS / "hall-section-phone.png"), full_page=True)
        height = await section.evaluate("() => document.scrollingElement.scrollHeight")
        assert height <= 844
        assert errors == []


async def test_round_upload_preview_reassign_and_send(mosquitto: Broker, pgn_dir: Path, tmp_path: Path) -> None:
    """The tablet's round upload: a TRF previewed, board 4 reassigned to t9, sent; bad files send nothing."""
    import asyncio
    import json

    import aiomqtt

    from boardd.core.tournament import read_trf
    from tests.core.trf import swiss, trf_text

    (real,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    boards = {name: Feed(script(real, board=name, board_no=i + 1, round_no=1, seed=i, max_plies=2), prefix=PREFIX)
              for i, name in enumerate(["t1", "t2", "t3", "t4", "t9"])}
    await publish(mosquitto, interleave([f.publications() for f in boards.values()]))
    trf = tmp_path / "open.trf"
    trf.write_bytes(trf_text(swiss(8, 1), eol="\r").encode("latin-1"))
    pairings = read_trf(trf.read_text(encoding="latin-1"), 2)
    bad = tmp_path / "bad.csv"
    bad.write_text("board,white,black,white elo\n1,A,B,2000\n2,C,D,2x00\n")
    received: list[tuple[str, dict[str, Any]]] = []

    async def daemons() -> None:
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe(f"{PREFIX}/+/cmd/new-game", qos=1)
            async for message in client.messages:
                board = message.topic.value.split("/")[1]
                body = json.loads(bytes(message.payload))  # type: ignore[arg-type]
                received.append((board, body))
                topic, payload, retain, qos = boards[board].cmd_result(body["id"])
                await client.publish(topic, payload, qos=qos, retain=retain)

    async with running_web(mosquitto) as service, browser() as chromium:
        answering = asyncio.create_task(daemons())
        try:
            await wait_until(lambda: len(service.hub.hall.boards) == 5, 10)
            page = await chromium.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
            base = f"http://127.0.0.1:{service.http_port}"
            await login(page, base)
            await page.goto(f"{base}/arbiter/hall")
            await page.click("#show-round")
            # a bad file: the line and the column, no plan, nothing sent
            await page.set_input_files("#round-file", str(bad))
            await page.fill("#round-no", "1")
            await page.click("#round-preview")
            message = page.locator("#round-message.error")
            await message.wait_for(timeout=5000)
            assert "line 3 column 4 (white rating)" in await message.inner_text()
            assert not await page.locator("#round-send").is_visible()
            # the TRF: preview, reassign board 4, send
            await page.set_input_files("#round-file", str(trf))
            await page.fill("#round-no", "2")
            await page.click("#round-preview")
            rows = page.locator("#round-plan tbody tr")
            await page.locator("#round-send").wait_for(state="visible", timeout=5000)
            assert await rows.count() == 4
            first = await rows.nth(0).inner_text()
            g1 = pairings.games[0]
            assert g1.white.name in first and str(g1.white.rating) in first and g1.white.fide_id in first
            assert received == []  # the preview sends nothing
            await page.fill('#round-plan input[data-board-no="4"]', "t9")
            await page.click("#round-send")
            await page.wait_for_function(
                "() => document.querySelectorAll('#round-plan td.answer.ok').length === 4", timeout=10000)
            sent = dict(received)
            assert set(sent) == {"t1", "t2", "t3", "t9"} and len(received) == 4
            for game in pairings.games:
                body = sent["t9" if game.board_no == 4 else f"t{game.board_no}"]
                assert (body["white"], body["black"], body["round"], body["board_no"]) == (
                    game.white.name, game.black.name, "2", game.board_no)
                assert body["token"] == "t0ken-arbiter"
            async with aiomqtt.Client("127.0.0.1", mosquitto.port) as reader:
                await reader.subscribe(f"{PREFIX}/_round/2", qos=1)
                async with asyncio.timeout(5):
                    msg = await anext(aiter(reader.messages))
            roster = json.loads(bytes(msg.payload))  # type: ignore[arg-type]
            assert msg.retain and [g["board"] for g in roster["games"]] == ["t1", "t2", "t3", "t9"]
            # a board the hall has never seen: refused, nothing more sent
            await page.click("#round-preview")
            await page.locator("#round-send").wait_for(state="visible", timeout=5000)
            assert await page.locator("#round-plan td.answer.ok").count() == 0  # a new plan: no old answers
            await page.fill('#round-plan input[data-board-no="4"]', "t77")
            await page.click("#round-send")
            await page.locator("#round-message.error").wait_for(timeout=5000)
            assert "t77 unknown to the hall" in await page.locator("#round-message").inner_text()
            await asyncio.sleep(0.3)
            assert len(received) == 4
            await page.screenshot(path=str(SCREENSHOTS / "hall-round-upload.png"))
            assert errors == []
        finally:
            answering.cancel()


async def test_round_upload_with_a_chess960_start(mosquitto: Broker, pgn_dir: Path, tmp_path: Path) -> None:
    """The round upload's Chess960 start (as ``boardd round import --chess960 N|FEN``): a bad one is refused with
    nothing sent; a number is previewed (its array shown) and sent to every board as its X-FEN with ``variant:
    chess960``, which the daemon takes as a Chess960 game from that array; a FEN is taken as well."""
    import asyncio
    import json

    import aiomqtt
    import chess

    from boardd.core import events as ev
    from boardd.daemon.commands import parse_command
    from tests.core.trf import swiss, trf_text

    (real,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    boards = {name: Feed(script(real, board=name, board_no=i + 1, round_no=1, seed=i, max_plies=2), prefix=PREFIX)
              for i, name in enumerate(["t1", "t2", "t3", "t4"])}
    await publish(mosquitto, interleave([f.publications() for f in boards.values()]))
    trf = tmp_path / "open.trf"
    trf.write_bytes(trf_text(swiss(8, 1), eol="\r").encode("latin-1"))
    received: list[tuple[str, dict[str, Any]]] = []

    async def daemons() -> None:
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe(f"{PREFIX}/+/cmd/new-game", qos=1)
            async for message in client.messages:
                board = message.topic.value.split("/")[1]
                body = json.loads(bytes(message.payload))  # type: ignore[arg-type]
                received.append((board, body))
                topic, payload, retain, qos = boards[board].cmd_result(body["id"])
                await client.publish(topic, payload, qos=qos, retain=retain)

    array = chess.Board.from_chess960_pos(357)
    async with running_web(mosquitto) as service, browser() as chromium:
        answering = asyncio.create_task(daemons())
        try:
            await wait_until(lambda: len(service.hub.hall.boards) == 4, 10)
            page = await chromium.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
            base = f"http://127.0.0.1:{service.http_port}"
            await login(page, base)
            await page.goto(f"{base}/arbiter/hall")
            await page.click("#show-round")
            await page.set_input_files("#round-file", str(trf))
            await page.fill("#round-no", "2")
            # a number out of range: refused, no plan, nothing sent
            await page.fill("#round-chess960", "960")
            await page.click("#round-preview")
            await page.locator("#round-message.error").wait_for(timeout=5000)
            refused = await page.locator("#round-message").inner_text()
            assert "Chess960 start: a start array is numbered 0-959" in refused
            assert not await page.locator("#round-send").is_visible()
            # start array 357: previewed with its array, sent with it to every board
            await page.fill("#round-chess960", "357")
            await page.click("#round-preview")
            await page.locator("#round-send").wait_for(state="visible", timeout=5000)
            message = await page.locator("#round-message").inner_text()
            assert f"Chess960 start 357 ({array.board_fen()})" in message, message
            assert received == []
            await page.click("#round-send")
            await page.wait_for_function(
                "() => document.querySelectorAll('#round-plan td.answer.ok').length === 4", timeout=10000)
            assert sorted(b for b, _ in received) == ["t1", "t2", "t3", "t4"]
            for _, body in received:
                assert body["start_fen"] == array.fen() and body["variant"] == "chess960"
                game = parse_command("new-game", json.dumps(body).encode(), at=1.0).event
                assert isinstance(game, ev.NewGame) and game.game.chess960
                assert chess.Board(game.game.start_fen, chess960=True).chess960_pos() == 357
            # a FEN (Shredder-FEN castling rights) is taken as well; empty: the boards' own variant
            received.clear()
            await page.fill("#round-chess960", chess.Board.from_chess960_pos(0).fen(shredder=True))
            await page.click("#round-preview")
            await page.locator("#round-send").wait_for(state="visible", timeout=5000)
            await page.click("#round-send")
            await wait_until(lambda: len(received) == 4, 10)
            assert {body["start_fen"] for _, body in received} == {chess.Board.from_chess960_pos(0).fen()}
            received.clear()
            await page.fill("#round-chess960", "")
            await page.click("#round-preview")
            await page.locator("#round-send").wait_for(state="visible", timeout=5000)
            assert "Chess960" not in await page.locator("#round-message").inner_text()
            await page.click("#round-send")
            await wait_until(lambda: len(received) == 4, 10)
            assert all("start_fen" not in body and "variant" not in body for _, body in received)
            await page.screenshot(path=str(SCREENSHOTS / "hall-round-upload-chess960.png"))
            assert errors == []
        finally:
            answering.cancel()
