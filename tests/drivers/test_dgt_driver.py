"""DGT driver end to end through a real pty: pyserial on one side, the byte-level emulator on the other."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import chess
import pytest
import serial

from boardd.core.errors import ConfigError, DeviceDisconnectedError, DriverError
from boardd.core.events import (
    BoardEvent,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Link,
    LinkChanged,
    Marker,
    SquareChanged,
)
from drivers.base import (
    BoardDriver,
    ClockDisplay,
    DriverKind,
    RequestDump,
    SetClock,
    UnsupportedCommandError,
    open_driver,
    options_from_mapping,
)
from drivers.dgt import DgtDriver, DgtOptions
from drivers.dgt.codec import ClockAscii, ClockEnd, ClockSetNRun, ClockVersionRequest, Command, DgtMessage, SetNRunMode
from drivers.dgt.emulator import DgtEmulator, Mode
from drivers.dgt.mapping import ClockButton

WP = chess.Piece(chess.PAWN, chess.WHITE)
WR = chess.Piece(chess.ROOK, chess.WHITE)
BN = chess.Piece(chess.KNIGHT, chess.BLACK)
SCAN = 0.02  # fast scans keep the tests short; the dynamics are the same


def options(path: str, **overrides: float) -> DgtOptions:
    values: dict[str, float] = {"settle_dump_s": 0.0, "periodic_dump_s": 0.0, "reconnect_initial_s": 0.05,
                                "reconnect_max_s": 0.2, **overrides}
    return DgtOptions(port=path, **values)  # type: ignore[arg-type]


class Events:
    """Reads a driver's events with timeouts."""

    def __init__(self, driver: DgtDriver) -> None:
        self.iterator = driver.events()
        self.seen: list[BoardEvent] = []

    async def until(self, predicate: Callable[[BoardEvent], bool], within: float = 3.0) -> list[BoardEvent]:
        """Events up to and including the first one matching *predicate*."""
        out: list[BoardEvent] = []
        async with asyncio.timeout(within):
            async for event in self.iterator:
                out.append(event)
                self.seen.append(event)
                if predicate(event):
                    return out
        raise AssertionError(f"driver stopped; got {out}")

    async def squares(self, count: int, within: float = 3.0) -> list[SquareChanged]:
        """The next *count* square changes (other events are skipped)."""
        found: list[SquareChanged] = []
        while len(found) < count:
            [*_, event] = await self.until(lambda e: isinstance(e, SquareChanged), within)
            assert isinstance(event, SquareChanged)
            found.append(event)
        return found


async def eventually(condition: Callable[[], bool], within: float = 2.0) -> None:
    """Wait until *condition* holds (checked every 10 ms), or fail."""
    for _ in range(int(within / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not met in time")


def running_is(side: ClockSide) -> Callable[[BoardEvent], bool]:
    """Predicate: a clock reading with *side* running."""
    return lambda event: isinstance(event, ClockReading) and event.running is side


def is_snapshot(event: BoardEvent) -> bool:
    return isinstance(event, BoardSnapshot)


def is_reading(event: BoardEvent) -> bool:
    return isinstance(event, ClockReading)


def changes(events: list[SquareChanged]) -> list[tuple[str, str]]:
    return [(chess.square_name(e.square), "." if e.content is None else str(e.content)) for e in events]


@asynccontextmanager
async def connected(fen: str = chess.STARTING_BOARD_FEN, *, trickle: float = 0.0, noise: float = 0.0,
                    **driver_options: float) -> AsyncIterator[tuple[DgtEmulator, DgtDriver, Events]]:
    async with DgtEmulator(scan_interval=SCAN, fen=fen, seed=7, trickle=trickle, noise=noise) as emu:
        emu.set_clock(300, 300)
        async with DgtDriver(options(emu.path, **driver_options), rng=random.Random(1)) as driver:
            events = Events(driver)
            # at 9600 baud the EEPROM log asked for before the dump (protocols.md §1.9) takes about 8 s
            await events.until(is_snapshot, within=60.0 if trickle else 3.0)
            await events.until(is_reading)
            yield emu, driver, events


async def test_connect_reports_link_snapshot_clock_and_identity() -> None:
    async with DgtEmulator(scan_interval=SCAN) as emu:
        emu.set_clock(182, 181)
        async with DgtDriver(options(emu.path)) as driver:
            assert isinstance(driver, BoardDriver)
            events = Events(driver)
            first = await events.until(is_snapshot)
            assert first[0] == LinkChanged(at=first[0].at, link=Link.BOARD, up=True, detail=emu.path)
            assert first[-1].placement() == BoardSnapshot.from_board(chess.BaseBoard(), at=0).placement()  # type: ignore[union-attr]
            [*before, reading] = await events.until(is_reading)
            assert any(isinstance(e, LinkChanged) and e.link is Link.CLOCK and e.up for e in before)
            assert isinstance(reading, ClockReading)
            assert (reading.left, reading.right, reading.running, reading.lever_high) == (
                182, 181, None, ClockSide.LEFT)
            await eventually(lambda: driver.info.clock_model is not None and driver.info.serial is not None)
            info = driver.info
            assert (info.driver, info.version, info.serial, info.clock_model, info.connected) == (
                "dgt", "3.10", "3.10A12345", "dgt3000", True)
            # The start-up sequence of protocols.md §1.11, in that order.
            assert emu.received[:7] == [Command.SEND_UPDATE_NICE, Command.SEND_VERSION, Command.SEND_EE_MOVES,
                                        Command.SEND_BRD,
                                        Command.RETURN_SERIALNR, Command.RETURN_LONG_SERIALNR, ClockVersionRequest()]
            assert emu.mode == Mode.UPDATE_NICE
            times = [e.at for e in events.seen]
            assert times == sorted(times)


async def test_quiet_move_then_press_reports_squares_before_the_clock() -> None:
    async with connected() as (emu, _driver, events):
        emu.start(ClockSide.LEFT)
        await events.until(lambda e: isinstance(e, ClockReading) and e.running is ClockSide.LEFT)
        emu.move(chess.E2, chess.E4)
        emu.press(ClockSide.LEFT, remaining=295)
        got = await events.until(lambda e: isinstance(e, ClockReading) and e.running is ClockSide.RIGHT)
        squares = [e for e in got if isinstance(e, SquareChanged)]
        assert sorted(changes(squares)) == [("e2", "."), ("e4", "P")]
        reading = got[-1]
        assert isinstance(reading, ClockReading)
        assert (reading.left, reading.lever_high) == (295, ClockSide.RIGHT)
        assert got.index(squares[-1]) < got.index(reading)


@pytest.mark.parametrize(("trickle", "noise"), [(0.0, 0.0), (0.00104, 0.0), (0.0, 0.7), (0.00104, 0.7)],
                         ids=["clean", "9600-baud-byte-by-byte", "line-noise", "both"])
async def test_moves_survive_slow_and_noisy_lines(trickle: float, noise: float) -> None:
    async with connected(trickle=trickle, noise=noise) as (emu, driver, events):
        emu.start(ClockSide.LEFT)
        board = chess.Board()
        for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5"):
            move = chess.Move.from_uci(uci)
            mover = ClockSide.LEFT if board.turn == chess.WHITE else ClockSide.RIGHT
            emu.move(move.from_square, move.to_square)
            await emu.wait_scan(2)
            emu.press(mover)
            # a slow line (and the EEPROM log read at connect) under a loaded machine: more than the default wait
            got = await events.until(running_is(mover.other), within=10.0 if trickle else 3.0)
            squares = sorted(changes([e for e in got if isinstance(e, SquareChanged)]))
            piece = board.piece_at(move.from_square)
            assert squares == sorted([(chess.square_name(move.from_square), "."),
                                      (chess.square_name(move.to_square), str(piece))])
            board.push(move)
        counters = driver.counters
        assert counters["unknown_piece_codes"] == 0 and counters["bad_clock"] == 0
        assert (counters["discarded_bytes"] > 0) == (noise > 0)
        assert (emu.stats["noise_bytes"] > 0) == (noise > 0)


async def test_slide_reports_intermediate_squares() -> None:
    async with connected(fen="4k3/8/8/8/8/8/8/R3K3") as (emu, _driver, events):
        await emu.slide(chess.A1, chess.D1)
        squares = await events.squares(6)
        # one scan per step; within a scan the two reports come in either order
        steps = [sorted(changes(squares[i:i + 2])) for i in range(0, 6, 2)]
        assert steps == [[("a1", "."), ("b1", "R")], [("b1", "."), ("c1", "R")], [("c1", "."), ("d1", "R")]]


async def test_capture_is_a_replacement_and_new_may_come_before_old() -> None:
    async with connected(fen="4k3/8/8/1n6/8/8/8/1R2K3") as (emu, _driver, events):
        # Rb1xb5 as a hand does it: the rook is set down on b5 over the knight (b5 is never seen
        # empty), and b1 is only reported empty by the next scan (new square before old).
        emu.place(chess.B5, WR)
        await emu.wait_scan()
        emu.lift(chess.B1)
        squares = await events.squares(2)
        assert changes(squares) == [("b5", "R"), ("b1", ".")]
        assert all(not (e.square == chess.B5 and e.content is None) for e in squares)


async def test_requested_dump_and_settle_dump_follow_the_board() -> None:
    async with connected(settle_dump_s=0.1) as (emu, driver, events):
        emu.move(chess.G1, chess.F3)
        await events.squares(2)
        [*_, settle] = await events.until(is_snapshot)  # requested by the driver after the quiet period
        assert isinstance(settle, BoardSnapshot)
        expected = chess.BaseBoard()
        expected.remove_piece_at(chess.G1)
        expected.set_piece_at(chess.F3, chess.Piece(chess.KNIGHT, chess.WHITE))
        assert settle.placement() == BoardSnapshot.from_board(expected, at=0).placement()
        await driver.send(RequestDump())
        [*_, dump] = await events.until(is_snapshot)
        assert isinstance(dump, BoardSnapshot) and dump.placement() == settle.placement()


async def test_set_clock_sends_binary_setnrun_and_the_clock_follows() -> None:
    async with connected() as (emu, driver, events):
        await driver.send(SetClock(left_s=5400, right_s=5400, running=ClockSide.LEFT))
        got = await events.until(lambda e: isinstance(e, ClockReading) and e.running is ClockSide.LEFT)
        reading = got[-1]
        assert isinstance(reading, ClockReading) and reading.right == 5400 and 5398 <= (reading.left or 0) <= 5400
        assert ClockSetNRun(left_s=5400, right_s=5400, mode=SetNRunMode.LEFT_RUNS) in emu.received
        assert driver.counters["clock_time_up"] == 0  # the host set it: not an anomaly
        await driver.send(ClockDisplay(text="boardd"))
        await driver.send(ClockDisplay())
        await eventually(lambda: ClockEnd() in emu.received)
        assert ClockAscii(text="boardd") in emu.received
        with pytest.raises(UnsupportedCommandError):
            await driver.send("beep")  # type: ignore[arg-type]


async def test_clock_buttons_are_operator_events() -> None:
    async with connected() as (emu, driver, _events):
        buttons = driver.buttons()
        emu.press_button("ok")
        async with asyncio.timeout(2):
            button = await anext(buttons)
        assert button.button == "ok"


async def test_unplug_move_while_away_replug_reports_link_and_fresh_dump() -> None:
    async with connected() as (emu, driver, events):
        emu.start(ClockSide.LEFT)
        emu.move(chess.E2, chess.E4)
        emu.press(ClockSide.LEFT)
        await events.until(lambda e: isinstance(e, ClockReading) and e.running is ClockSide.RIGHT)
        emu.unplug()
        [*_, down] = await events.until(lambda e: isinstance(e, LinkChanged) and e.link is Link.BOARD)
        assert isinstance(down, LinkChanged) and not down.up
        [clock_down] = await events.until(lambda e: True)
        assert clock_down == LinkChanged(at=down.at, link=Link.CLOCK, up=False, detail="board link down")
        assert not driver.info.connected
        with pytest.raises(DeviceDisconnectedError):
            await driver.send(RequestDump())
        emu.move(chess.E7, chess.E5)  # made while the board is away
        await emu.wait_scan(5)
        emu.replug()
        got = await events.until(is_snapshot)
        assert got[0] == LinkChanged(at=got[0].at, link=Link.BOARD, up=True, detail=emu.path)
        assert not any(isinstance(e, SquareChanged) for e in got)
        expected = chess.Board()
        expected.push_uci("e2e4")
        expected.push_uci("e7e5")
        snapshot = got[-1]
        assert isinstance(snapshot, BoardSnapshot)
        assert snapshot.placement() == BoardSnapshot.from_board(expected, at=0).placement()
        assert driver.counters["disconnects"] == 1
        assert driver.counters["connects"] == 2


async def test_driver_started_before_the_board_is_plugged_in(tmp_path: Path) -> None:
    async with DgtEmulator(scan_interval=SCAN, directory=tmp_path) as emu:
        emu.unplug()
        async with DgtDriver(options(emu.path), rng=random.Random(3)) as driver:
            events = Events(driver)
            [down] = await events.until(lambda e: isinstance(e, LinkChanged))
            assert isinstance(down, LinkChanged) and (down.link, down.up) == (Link.BOARD, False)
            await asyncio.sleep(0.3)  # several failed retries: link-down is said once
            emu.replug()
            got = await events.until(is_snapshot)
            assert [e for e in got if isinstance(e, LinkChanged) and e.link is Link.BOARD] == [got[0]]
            assert isinstance(got[0], LinkChanged) and got[0].up


async def test_watchdog_declares_a_hung_link_dead_and_recovers() -> None:
    async with connected(keepalive_s=0.2, watchdog_s=0.5) as (emu, driver, events):
        emu.hung = True
        [*_, down] = await events.until(lambda e: isinstance(e, LinkChanged) and e.link is Link.BOARD, within=5)
        assert isinstance(down, LinkChanged) and not down.up and "no data" in down.detail
        emu.hung = False
        await events.until(is_snapshot, within=5)
        assert driver.counters["watchdog"] == 1


async def test_keepalive_keeps_a_quiet_link_up() -> None:
    async with connected(keepalive_s=0.1, watchdog_s=0.3) as (emu, driver, _events):
        before = emu.received.count(Command.RETURN_SERIALNR)
        await asyncio.sleep(0.8)  # the clock is stopped and nothing moves: only keep-alives
        assert emu.received.count(Command.RETURN_SERIALNR) >= before + 3
        assert driver.info.connected and driver.counters["watchdog"] == 0


async def test_bad_port_url_is_a_permanent_driver_error() -> None:
    async with DgtDriver(options("bogus://nowhere")) as driver:
        for _ in range(2):  # and it stays one
            with pytest.raises(DriverError):
                async with asyncio.timeout(2):
                    async for _event in driver.events():
                        pass


async def test_an_internal_error_is_logged_and_the_driver_reconnects(monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    async with connected() as (emu, driver, events):
        real_map = driver._mapper.map
        failures = [RuntimeError("bug")]

        def flaky(message: DgtMessage, at: float) -> list[BoardEvent | ClockButton]:
            if failures:
                raise failures.pop()
            return real_map(message, at)

        monkeypatch.setattr(driver._mapper, "map", flaky)
        emu.move(chess.E2, chess.E4)
        got = await events.until(is_snapshot)  # reconnected: the dump shows the move
        assert any(isinstance(e, LinkChanged) and e.link is Link.BOARD and not e.up for e in got)
        assert isinstance(got[-1], BoardSnapshot) and got[-1].squares[chess.E4] == WP
        assert driver.counters["internal_errors"] == 1
        assert any("reconnecting" in r.getMessage() for r in caplog.records)


async def test_open_driver_through_the_registry() -> None:
    async with DgtEmulator(scan_interval=SCAN) as emu:
        driver = open_driver(DriverKind.DGT, {"port": emu.path, "periodic_dump_s": 0.0})
        assert isinstance(driver, DgtDriver)
        async with driver:
            await Events(driver).until(is_snapshot)
    with pytest.raises(ConfigError, match="unknown option"):
        options_from_mapping("dgt", {"port": "/dev/null", "baud": 9600})
    with pytest.raises(ConfigError, match="unknown driver"):
        open_driver("telepathy", {})


async def test_socket_url_reaches_the_board_over_tcp() -> None:
    """ser2net-style: the driver opens socket://host:port; a TCP bridge forwards to the pty."""
    async with DgtEmulator(scan_interval=SCAN) as emu:
        bridge = serial.Serial(emu.path, timeout=0)

        async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            loop = asyncio.get_running_loop()
            loop.add_reader(bridge.fileno(), lambda: writer.write(bridge.read(4096)))
            try:
                while data := await reader.read(4096):
                    bridge.write(data)
            finally:
                loop.remove_reader(bridge.fileno())

        server = await asyncio.start_server(forward, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with DgtDriver(options(f"socket://127.0.0.1:{port}")) as driver:
                got = await Events(driver).until(is_snapshot)
                assert isinstance(got[-1], BoardSnapshot)
        finally:
            server.close()
            bridge.close()


# --- the emulator's mode rules, checked with a bare pyserial host ------------------------------------


async def _read_for(port: serial.Serial, seconds: float) -> bytes:
    data = b""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end:
        data += port.read(4096)
        await asyncio.sleep(0.01)
    return data


async def test_emulator_modes_follow_the_spec() -> None:
    from drivers.dgt.codec import ClockAck, ClockTimes, DgtDecoder, FieldUpdate, encode

    async with DgtEmulator(scan_interval=SCAN) as emu:
        emu.set_clock(60, 60)
        port = serial.Serial(emu.path, timeout=0)
        try:
            decoder = DgtDecoder()
            # IDLE: nothing unsolicited, no acks.
            emu.move(chess.E2, chess.E4)
            port.write(encode(ClockVersionRequest()))
            assert decoder.feed(await _read_for(port, 0.2)) == []
            # UPDATE_BOARD: field updates, still no clock messages and no acks.
            port.write(encode(Command.SEND_UPDATE_BRD))
            await asyncio.sleep(0.05)
            emu.move(chess.E4, chess.E5)
            port.write(encode(ClockVersionRequest()))
            got = decoder.feed(await _read_for(port, 0.3))
            assert got and all(isinstance(m, FieldUpdate) for m in got)
            # UPDATE: BWTIME at least every second even with a stopped clock, and acks.
            port.write(encode(Command.SEND_UPDATE) + encode(ClockVersionRequest()))
            got = decoder.feed(await _read_for(port, 1.3))
            assert sum(isinstance(m, ClockTimes) for m in got) >= 2
            assert ClockAck(0x10, 0x09, 0x20, 0) in got
            # UPDATE_NICE: BWTIME only on change.
            port.write(encode(Command.SEND_UPDATE_NICE))
            await _read_for(port, 0.1)
            assert not any(isinstance(m, ClockTimes) for m in decoder.feed(await _read_for(port, 1.2)))
            emu.start(ClockSide.RIGHT)
            got = decoder.feed(await _read_for(port, 1.3))
            times = [m for m in got if isinstance(m, ClockTimes)]
            assert times[0].status == 0x13  # running, right high, right to move (the capture's encoding)
            assert 1 <= len(times) <= 3  # one per displayed-second change
            # Commands answered in every mode.
            port.write(encode(Command.RESET) + encode(Command.SEND_EE_MOVES))
            got = decoder.feed(await _read_for(port, 1.0))
            assert [type(m).__name__ for m in got] == ["EEMoves"]
        finally:
            port.close()


# --- drivers.base: the registry and the commands ----------------------------------------------------


def test_open_driver_accepts_a_factory_and_reports_missing_families(monkeypatch: pytest.MonkeyPatch) -> None:
    from drivers import base

    built: list[tuple[object, object]] = []

    def factory(options: object, *, time_source: Callable[[], float]) -> DgtDriver:
        built.append((options, time_source))
        return DgtDriver(DgtOptions(port="/dev/null"), time_source=time_source)

    clock = lambda: 42.0  # noqa: E731
    driver = open_driver(factory, {"anything": 1}, time_source=clock)
    assert isinstance(driver, DgtDriver) and built == [({"anything": 1}, clock)]
    monkeypatch.setitem(base._REGISTRY, DriverKind.MILLENNIUM, "drivers.no_such_family")
    with pytest.raises(DriverError, match="not available"):
        open_driver("millennium", {"port": "/dev/ttyUSB0"})


def test_set_clock_command_validates_times() -> None:
    assert SetClock(left_s=0, right_s=35999, running=ClockSide.RIGHT).running is ClockSide.RIGHT
    for bad in (-1, 36000, 1.5):
        with pytest.raises(ValueError):
            SetClock(left_s=bad, right_s=0)  # type: ignore[arg-type]


def test_dgt_options_validate() -> None:
    with pytest.raises(ValueError):
        DgtOptions(port="")
    with pytest.raises(ValueError):
        DgtOptions(port="/dev/ttyACM0", keepalive_s=5, watchdog_s=5)
    with pytest.raises(ConfigError):
        options_from_mapping("dgt", {"port": "/dev/ttyACM0", "watchdog_s": 1.0})


# --- clock command flow control ------------------------------------------------------------------------


async def test_clock_commands_wait_for_the_previous_ack() -> None:
    async with connected() as (emu, driver, _events):
        await driver.send(ClockDisplay(text="hi"))
        await driver.send(ClockDisplay())
        await eventually(lambda: ClockEnd() in emu.received)
        sent_text = emu.received_at[emu.received.index(ClockAscii(text="hi"))]
        sent_end = emu.received_at[emu.received.index(ClockEnd())]
        assert sent_end - sent_text >= emu.ack_delay * 0.9  # END only after the ASCII command was acknowledged


async def test_unacknowledged_clock_command_is_resent_then_given_up() -> None:
    async with connected(clock_ack_timeout_s=0.15, clock_tries=2) as (emu, driver, events):
        emu.drop_acks = 1
        await driver.send(SetClock(left_s=600, right_s=900, running=None))
        got = await events.until(lambda e: isinstance(e, ClockReading) and e.right == 900)
        assert isinstance(got[-1], ClockReading) and got[-1].left == 600
        assert emu.received.count(ClockSetNRun(left_s=600, right_s=900, mode=SetNRunMode.PAUSE)) == 2
        assert driver.counters["clock_command_retries"] == 1
        emu.drop_acks = 2  # missed twice: given up
        await driver.send(SetClock(left_s=60, right_s=60))
        await driver.send(ClockDisplay(text="next"))  # the queue goes on after giving up
        await eventually(lambda: ClockAscii(text="next") in emu.received)
        assert driver.counters["clock_commands_dropped"] == 1
        assert emu.stats["missed_clock_commands"] == 3


async def test_port_without_an_answering_board_is_reported_down() -> None:
    async with DgtEmulator(scan_interval=SCAN) as emu:
        emu.hung = True
        async with DgtDriver(options(emu.path, keepalive_s=0.1, watchdog_s=0.3)) as driver:
            [down] = await Events(driver).until(lambda e: isinstance(e, LinkChanged))
            assert isinstance(down, LinkChanged) and not down.up and "no data" in down.detail
            assert emu.received.count(Command.SEND_UPDATE_NICE) == 0  # a hung board hears nothing


# --- clock and result pieces end to end ---------------------------------------------------------------


async def test_flag_fall_is_reported_with_the_flag_bits() -> None:
    async with connected() as (emu, _driver, events):
        emu.set_clock(1, 60, ClockSide.LEFT)
        got = await events.until(lambda e: isinstance(e, ClockReading) and e.left_flag, within=4.0)
        fallen = got[-1]
        assert isinstance(fallen, ClockReading)
        assert (fallen.left, fallen.right, fallen.right_flag) == (0, 60, False)


async def test_clock_unplugged_from_the_board_and_back() -> None:
    async with connected() as (emu, driver, events):
        await eventually(lambda: driver.info.clock_model == "dgt3000")
        emu.clock_connected = False
        [*_, down] = await events.until(lambda e: isinstance(e, LinkChanged))
        assert isinstance(down, LinkChanged) and (down.link, down.up) == (Link.CLOCK, False)
        emu.clock_version = (1, 14)  # a DGT XL is plugged in instead
        emu.clock_connected = True
        got = await events.until(is_reading)
        assert [e for e in got if isinstance(e, LinkChanged)] == [
            LinkChanged(at=got[0].at, link=Link.CLOCK, up=True, detail="")]
        await eventually(lambda: emu.received.count(ClockVersionRequest()) == 2)  # asked which clock it is
        await eventually(lambda: driver.info.clock_model == "dgtxl")


async def test_result_pieces_arrive_as_markers() -> None:
    async with connected(fen="4k3/8/8/8/8/8/8/4K3") as (emu, _driver, events):
        emu.place(chess.D4, Marker.DRAW)
        emu.place(chess.E5, Marker.WHITE_WINS)
        squares = await events.squares(2)
        assert sorted((chess.square_name(e.square), e.content) for e in squares) == [
            ("d4", Marker.DRAW), ("e5", Marker.WHITE_WINS)]
