"""The DGT 3000 I²C driver (DGT Pi): asyncio adapter over the codec, the mapping and an :class:`I2CBus`.

Theory of operation
-------------------
The clock is configured as dgtpicom does it (§2.3): change state to mode 25 and
wait for its ack; without a positive ack, set central control and try again;
when the clock does not even acknowledge its address (asleep, switched off),
send a wake ping (the clock answers with Hello) and try again, up to ``tries``
times. Configured means ``LinkChanged(CLOCK, up=True)``.

A reader task receives packets (blocking ``receive`` slices in a worker thread):
acks resolve the command waiting for them, everything else goes through
:class:`~drivers.dgt3000_i2c.mapping.Dgt3000Mapper` and out as
:class:`~boardd.core.events.ClockReading` events; buttons go to :meth:`Dgt3000Driver.buttons`.

Under central control the clock does not switch sides by itself: with
``switch_on_lever`` the driver starts the side whose lever went up (Set-and-run
with the last times shown), as picochess does on the DGT Pi. It adds no
increment: the time control stays the arbiter's business (rules-spec G2). Nor
does it pause by itself: a press of play/pause stops both sides (6.11: the
arbiter stopping the clock for an incident), and, paused, starts the side whose
lever is up again (:meth:`Dgt3000Mapper.play_switch`).

The on/off button makes the clock sleep: the driver re-configures (waking it),
as picochess does. A clock that stops answering (``watchdog_s`` without a packet
and no ack to a probe) is ``LinkChanged(CLOCK, up=False)``; the driver keeps
trying to configure it with jittered backoff.

Liveness: in mode 25 the clock pushes Time packets (dgtpicom only listens to them;
how often a stopped clock sends is undocumented, the emulator sends one per second);
every packet moves ``last_activity``, and after ``watchdog_s`` (5 s) of silence the
probe (change state 25, acknowledged) is the keep-alive: at least one packet per 5 s
plus the ack time. Each configuration attempt while the
clock is missing is a sign of life too. With a tap (``boardd record``) every packet
received and every command written is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from boardd.core.errors import DeviceDisconnectedError, DriverError
from boardd.core.events import ClockSide, Link, LinkChanged
from drivers._loop import DriverBase, stop_task
from drivers.base import (
    ClockDisplay,
    DeviceInfo,
    DriverCommand,
    ReconnectPolicy,
    SetClock,
    TimeSource,
    UnsupportedCommandError,
)
from drivers.dgt3000_i2c.bus import I2CBus, PiI2CBus
from drivers.dgt3000_i2c.codec import (
    BUTTON_ONOFF,
    Ack,
    Button,
    ChangeState,
    Dgt3000Decoder,
    Display,
    EndDisplay,
    HostCommand,
    PacketType,
    SetAndRun,
    SetCentralControl,
    Wake,
    encode,
)
from drivers.dgt3000_i2c.mapping import ClockButton, Dgt3000Mapper
from drivers.transport import Backoff, Tap

__all__ = ["Dgt3000Driver", "Dgt3000Options", "Options", "create_driver"]

_LOGGER = logging.getLogger(__name__)

#: Command -> (packet type its ack names, the positive status or None when any ack will do).
_ACKS: dict[type, tuple[int, int | None]] = {
    ChangeState: (PacketType.CHANGE_STATE, 0x08),
    SetCentralControl: (PacketType.SET_CENTRAL_CONTROL, None),
    SetAndRun: (PacketType.SET_AND_RUN, 0x08),
    Display: (PacketType.DISPLAY, None),
    EndDisplay: (PacketType.END_DISPLAY, None),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Dgt3000Options:
    """Options of the DGT 3000 I²C driver (``[driver.dgt3000-i2c]``).

    Attributes:
        port: the master's I²C device, ``/dev/i2c-<n>``.
        ack_timeout_s: wait this long for an ack (dgtpicom: 10 ms; ESP32 port: 50 ms).
        tries: send a command this many times before giving up.
        switch_on_lever: start the side whose lever went up (the clock is under central control).
        lever_set_left_high: how to read the lever bit (§9.13).
        watchdog_s: probe the clock after this much silence; no answer = link down.
        reconnect_initial_s: first retry delay after the clock went away.
        reconnect_max_s: largest retry delay.
    """

    port: str = "/dev/i2c-1"
    ack_timeout_s: float = 0.05
    tries: int = 3
    switch_on_lever: bool = True
    lever_set_left_high: bool = True
    watchdog_s: float = 5.0
    reconnect_initial_s: float = 0.5
    reconnect_max_s: float = 10.0

    def __post_init__(self) -> None:
        if not self.port.startswith("/dev/i2c-") or not self.port.removeprefix("/dev/i2c-").isdigit():
            raise ValueError(f"port must be /dev/i2c-<n>, got {self.port!r}")
        if self.tries < 1 or self.ack_timeout_s <= 0:
            raise ValueError("need tries >= 1 and ack_timeout_s > 0")

    @property
    def bus_number(self) -> int:
        """The ``n`` of ``/dev/i2c-n``."""
        return int(self.port.removeprefix("/dev/i2c-"))


Options = Dgt3000Options


def create_driver(options: Dgt3000Options, *, time_source: TimeSource = time.monotonic,
                  tap: Tap | None = None) -> Dgt3000Driver:
    """Factory used by :func:`drivers.base.open_driver` (the Raspberry Pi bus; with *tap*, ``boardd record``)."""
    return Dgt3000Driver(options, time_source=time_source, tap=tap)


class Dgt3000Driver(DriverBase):
    """A DGT 3000 clock on I²C; a :class:`~drivers.base.BoardDriver` that only has a clock.

    Args:
        options: bus and timing.
        time_source: stamps the events.
        bus_factory: opens the bus (blocking; default: :class:`PiI2CBus` on ``options.port``).
        tap: raw traffic observer (``boardd record``): every packet received (``rx``) and written (``tx``,
            dest byte first).
        rng: random source of the backoff jitter.
    """

    def __init__(self, options: Dgt3000Options | None = None, *, time_source: TimeSource = time.monotonic,
                 bus_factory: Callable[[], I2CBus] | None = None, tap: Tap | None = None,
                 rng: random.Random | None = None) -> None:
        self.options = options or Dgt3000Options()
        super().__init__(name="DGT 3000", port=self.options.port, time_source=time_source)
        self._tap = tap
        self._bus_factory = bus_factory or (lambda: PiI2CBus(self.options.bus_number))
        self._backoff = Backoff(ReconnectPolicy(initial=self.options.reconnect_initial_s,
                                                maximum=self.options.reconnect_max_s), rng=rng)
        self._decoder = Dgt3000Decoder()
        self.mapper = Dgt3000Mapper(lever_set_left_high=self.options.lever_set_left_high)
        self._buttons: asyncio.Queue[ClockButton] = asyncio.Queue(maxsize=64)
        self._reader: asyncio.Task[None] | None = None
        self._bus: I2CBus | None = None
        self._connected = False
        self._last_rx = 0.0
        self._waiters: dict[int, asyncio.Future[Ack]] = {}
        self._command_lock = asyncio.Lock()
        self._reconfigure = asyncio.Event()
        self._background: set[asyncio.Task[None]] = set()

    # --- BoardDriver --------------------------------------------------------------------

    @property
    def info(self) -> DeviceInfo:
        """What is known about the clock."""
        return DeviceInfo(driver="dgt3000-i2c", port=self.options.port, clock_model="dgt3000",
                          version=self.mapper.hello.hex(" ") if self.mapper.hello else None,
                          connected=self._connected)

    @property
    def counters(self) -> Counter[str]:
        """Driver, decoder and mapping counters."""
        total: Counter[str] = Counter()
        total.update(self.stats)
        total.update(self._decoder.stats)
        total.update(self.mapper.stats)
        return total

    async def _shutdown(self) -> None:
        for task in (self._reader, *self._background):
            if task is not None:
                await stop_task(task)
        self._reader = None
        bus, self._bus = self._bus, None
        if bus is not None:
            await asyncio.to_thread(bus.close)

    async def buttons(self) -> AsyncIterator[ClockButton]:
        """Clock button presses, for operator tools; the oldest are dropped beyond 64."""
        while True:
            yield await self._buttons.get()

    async def send(self, command: DriverCommand) -> None:
        """Set the clock, or show text on it (operator tools outside play only).

        Raises:
            DeviceDisconnectedError: the clock is not configured, or did not acknowledge.
            UnsupportedCommandError: a board command (the DGT 3000 is only a clock).
        """
        match command:
            case SetClock(left_s=left, right_s=right, running=running):
                await self._set_and_run(left, right, running)
            case ClockDisplay(text=""):
                await self._command(EndDisplay())
            case ClockDisplay(text=text, beep=beep):
                await self._command(Display(text[:11], beep=3 if beep else 0))
            case _:
                raise UnsupportedCommandError(command, driver="dgt3000-i2c")

    # --- internals -------------------------------------------------------------------------

    async def _set_and_run(self, left: int, right: int, running: ClockSide | None) -> None:
        command = SetAndRun(left, right, 1 if running is ClockSide.LEFT else 0, 1 if running is ClockSide.RIGHT else 0)
        await self._command(command)
        self.mapper.note_running(running)

    async def _write(self, command: HostCommand) -> bool:
        bus = self._bus
        if bus is None:
            raise DeviceDisconnectedError("dgt3000-i2c: bus not open")
        address, data = encode(command)
        if _LOGGER.isEnabledFor(5):
            _LOGGER.log(5, "<< %02x: %s", address, data.hex(" "))
        if self._tap is not None:
            self._tap("tx", data)
        return await asyncio.to_thread(bus.write, address, data[1:])

    async def _command(self, command: HostCommand, *, require_link: bool = True) -> Ack:
        """Send *command*; resend it when the ack does not come (up to ``tries`` times).

        Raises:
            DeviceDisconnectedError: the address was not acknowledged, a negative ack, or no ack at all.
        """
        if require_link and not self._connected:
            raise DeviceDisconnectedError("dgt3000-i2c: clock not connected")
        kind, positive = _ACKS[type(command)]
        async with self._command_lock:
            last = "no ack"
            for _ in range(self.options.tries):
                future: asyncio.Future[Ack] = asyncio.get_running_loop().create_future()
                self._waiters[kind] = future
                try:
                    if not await self._write(command):
                        self.stats["nacks"] += 1
                        last = "clock does not answer on the bus"
                        break  # asleep or absent: resending will not help (the caller may wake it)
                    async with asyncio.timeout(self.options.ack_timeout_s):
                        ack = await future
                except TimeoutError:
                    self.stats["ack_timeouts"] += 1
                    continue
                finally:
                    self._waiters.pop(kind, None)
                if positive is None or ack.status == positive:
                    return ack
                last = f"negative ack 0x{ack.status:02x}"
                self.stats["negative_acks"] += 1
                break  # the clock refused: the caller decides (set central control first)
            raise DeviceDisconnectedError(f"dgt3000-i2c: {type(command).__name__} failed: {last}")

    async def _configure(self) -> bool:
        """dgtpicom's configure: mode 25; else central control; else wake; up to ``tries`` rounds."""
        for _ in range(self.options.tries):
            try:
                await self._command(ChangeState(25), require_link=False)
                return True
            except DeviceDisconnectedError as exc:
                if "does not answer" in str(exc):
                    self.stats["wakes"] += 1
                    await self._write(Wake())
                    await asyncio.sleep(0.02)  # the clock answers the ping within ~10 ms
                    continue
            with contextlib.suppress(DeviceDisconnectedError):
                await self._command(SetCentralControl(), require_link=False)
        return False

    def _link(self, up: bool, detail: str) -> None:
        if up == self._connected:
            return
        self._connected = up
        self.stats["connects" if up else "disconnects"] += 1
        if not up:
            self.mapper.reset()
        self._emit(LinkChanged(at=self._now(), link=Link.CLOCK, up=up, detail=detail))
        (_LOGGER.info if up else _LOGGER.warning)("DGT 3000 clock %s: %s", "configured" if up else "lost", detail)

    async def _run(self) -> None:
        announced = False
        while self._bus is None:
            try:
                self._bus = await asyncio.to_thread(self._bus_factory)
            except DeviceDisconnectedError as exc:
                self._alive()
                if not announced:
                    announced = True
                    self._emit(LinkChanged(at=self._now(), link=Link.CLOCK, up=False, detail=str(exc)))
                await asyncio.sleep(self._backoff.next_delay())
            except DriverError as exc:
                self._fail(exc)
                return
        self._reader = asyncio.create_task(self._read_loop(), name="dgt3000-i2c reader")
        loop = asyncio.get_running_loop()
        while True:
            configured = await self._configure()
            self._alive()  # a (re)connection attempt
            if configured:
                self._backoff.reset()
                self._link(True, self.options.port)
                self._last_rx = loop.time()
                await self._watch()
            elif self._connected:
                self._link(False, "clock does not answer")
            elif not announced:
                self._emit(LinkChanged(at=self._now(), link=Link.CLOCK, up=False, detail="clock does not answer"))
                _LOGGER.warning("DGT 3000 clock does not answer on %s", self.options.port)
            announced = True
            await asyncio.sleep(self._backoff.next_delay())

    async def _watch(self) -> None:
        """While configured: re-configure on request (on/off), probe after silence."""
        loop = asyncio.get_running_loop()
        while True:
            self._reconfigure.clear()
            wait = max(0.0, self._last_rx + self.options.watchdog_s - loop.time())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._reconfigure.wait()
            if self._reconfigure.is_set():
                self.stats["reconfigures"] += 1
                if await self._configure():
                    continue
                self._link(False, "clock switched off and does not wake")
                return
            if loop.time() - self._last_rx < self.options.watchdog_s:
                continue
            self.stats["probes"] += 1
            try:
                await self._command(ChangeState(25), require_link=False)
                self._last_rx = loop.time()
            except DeviceDisconnectedError as exc:
                self.stats["watchdog"] += 1
                self._link(False, str(exc))
                return

    async def _read_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            bus = self._bus
            if bus is None:
                return
            try:
                data = await asyncio.to_thread(bus.receive, 0.1)
            except DeviceDisconnectedError as exc:
                self._link(False, str(exc))
                await asyncio.sleep(self._backoff.next_delay())
                continue
            if data is None:
                continue
            if self._tap is not None:
                self._tap("rx", data)
            at = self._now()
            self._alive()
            self._last_rx = loop.time()
            for message in self._decoder.feed_packet(data):
                if isinstance(message, Ack):
                    waiter = self._waiters.get(message.command)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(message)
                    else:
                        self.stats["unexpected_acks"] += 1
                    continue
                if isinstance(message, Button):
                    self._on_button(message)
                for item in self.mapper.map(message, at):
                    if isinstance(item, ClockButton):
                        if self._buttons.full():
                            self._buttons.get_nowait()
                        self._buttons.put_nowait(item)
                    elif self._connected:
                        self._emit(item)

    def _on_button(self, button: Button) -> None:
        if button.pressed & BUTTON_ONOFF:
            self._reconfigure.set()
        if not (self.options.switch_on_lever and self._connected):
            return
        left, right = self.mapper.left, self.mapper.right
        if left is None or right is None:
            return
        play = self.mapper.play_switch(button)
        if play is not None:
            # play/pause under central control: the pause (6.11), or the restart of the side whose lever is up
            self.stats["pauses" if play[0] is None else "restarts"] += 1
            to_run: ClockSide | None = play[0]
        else:
            to_run = self.mapper.lever_switch(button)
            if to_run is None:
                return
        self.mapper.note_running(to_run)
        task = asyncio.create_task(self._switch(left, right, to_run))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _switch(self, left: int, right: int, side: ClockSide | None) -> None:
        try:
            await self._set_and_run(left, right, side)
        except DeviceDisconnectedError as exc:
            self.stats["switch_failures"] += 1
            what = "stop the clock" if side is None else f"start the {side.value} side"
            _LOGGER.warning("DGT 3000: could not %s: %s", what, exc)
