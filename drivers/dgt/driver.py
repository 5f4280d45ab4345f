"""The DGT board driver: the asyncio adapter over :mod:`drivers.dgt.codec` and :mod:`drivers.transport`.

Theory of operation
-------------------
One task (``_run``) owns the link. It opens the port, sends the start-up
sequence (protocols.md §1.11: UPDATE_NICE ``4b``, version ``4d``, EEPROM log ``49`` (§1.9: what the
board recorded while no host read it, emitted as a ``BoardLog`` before the dump), dump ``42``,
serial ``45`` and long serial ``55``, clock version ``2b 03 03 09 00``), then
reads. Every received chunk is stamped with ``time_source()`` and decoded;
the messages are mapped to events and queued for :meth:`DgtDriver.events`.

The board is "up" when it first answers after the port opened (a port can
exist without a board behind it, e.g. rfcomm): ``LinkChanged(BOARD, up=True)``
is emitted then, and the dump requested at start-up follows as a
``BoardSnapshot`` so the engine can reconcile.

Timers (all on the event loop's clock; none fires while nothing is due, so an
idle driver costs no CPU):

* **settle dump**: ``settle_dump_s`` after the last field update, a dump is
  requested (the DGT scan reports intermediate squares; picochess does the same);
* **periodic dump**: every ``periodic_dump_s`` a dump reconciles any lost update;
* **hello**: until the board has answered, the start-up sequence is resent every
  ``hello_s``;
* **keep-alive / watchdog**: after ``keepalive_s`` of silence ``45`` is sent; after
  ``watchdog_s`` of silence the link is declared dead (a Bluetooth port that
  hangs instead of failing).
* **clock commands** go one at a time: the next is sent when the clock has
  acknowledged the previous one (matched by its command code), a command not
  acknowledged within ``clock_ack_timeout_s`` is resent, and given up (counted,
  logged) after ``clock_tries`` sends, as protocols.md §1.8 and picochess do.
  The queue survives a reconnection. An error ack (``ack0`` 0x40: e.g. SetNRun while
  the clock is not in mode 23) ends the command as refused (counted, logged);
  :meth:`DgtDriver.send_confirmed` waits for that answer (ack, refusal, or giving up).

When the link fails (read error, EOF, pty closed, watchdog), the driver emits
``LinkChanged(BOARD, up=False)`` (and forgets the clock state), then reopens
the port with jittered exponential backoff until it is back, and starts again
(the loop is :class:`drivers._loop.LinkDriver`'s).

Liveness: every chunk received moves ``last_activity``. An idle board (clock
stopped or absent) sends nothing by itself, so the keep-alive (``45``, as picochess
does) makes it answer after every ``keepalive_s`` (5 s) of silence: a healthy board
moves ``last_activity`` at least every 5 s plus a round trip.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass

from boardd.core.errors import DeviceDisconnectedError
from boardd.core.events import BoardEvent, ClockSide, Link, LinkChanged
from drivers._loop import LinkDriver, read_within
from drivers.base import (
    ClockDisplay,
    DeviceInfo,
    DriverCommand,
    ReconnectPolicy,
    RequestDump,
    SetClock,
    TimeSource,
    UnsupportedCommandError,
)
from drivers.dgt.codec import (
    ClockAck,
    ClockAscii,
    ClockDisplayXL,
    ClockEnd,
    ClockSetNRun,
    ClockVersionRequest,
    Command,
    DgtDecoder,
    FieldUpdate,
    HostCommand,
    SetNRunMode,
    encode,
)
from drivers.dgt.mapping import ClockButton, DgtMapper
from drivers.transport import SerialLink, Tap

__all__ = ["DgtDriver", "DgtOptions", "create_driver", "xl_segments"]

_LOGGER = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True, kw_only=True)
class DgtOptions:
    """Options of the DGT driver (``[driver.dgt]`` in the configuration).

    Attributes:
        port: device path or URL (``/dev/ttyACM0``, ``/dev/serial/by-id/...``, ``socket://host:4000``).
        baudrate: line speed (DGT boards use 9600).
        settle_dump_s: request a dump this long after the last field update (0 disables).
        periodic_dump_s: request a dump this often (0 disables).
        hello_s: resend the start-up sequence this often until the board answers.
        keepalive_s: after this much silence, poll the board (``45``).
        watchdog_s: after this much silence, declare the link dead and reconnect.
        reconnect_initial_s: first reconnection delay.
        reconnect_max_s: largest reconnection delay.
        clock: ask the clock for its version at start-up.
        clock_ack_timeout_s: resend a clock command not acknowledged within this time.
        clock_tries: give a clock command up after this many unacknowledged sends.
    """

    port: str
    baudrate: int = 9600
    settle_dump_s: float = 0.3
    periodic_dump_s: float = 30.0
    hello_s: float = 2.0
    keepalive_s: float = 5.0
    watchdog_s: float = 16.0
    reconnect_initial_s: float = 0.25
    reconnect_max_s: float = 5.0
    clock: bool = True
    clock_ack_timeout_s: float = 2.0
    clock_tries: int = 3

    def __post_init__(self) -> None:
        if not self.port:
            raise ValueError("port must not be empty")
        if self.watchdog_s <= self.keepalive_s:
            raise ValueError("watchdog_s must be longer than keepalive_s")

    @property
    def reconnect(self) -> ReconnectPolicy:
        """The backoff policy for reconnecting."""
        return ReconnectPolicy(initial=self.reconnect_initial_s, maximum=self.reconnect_max_s)


#: Clock command type -> the command code its ack carries in ack1 (§1.7.2).
_ACK_CODES: dict[type, int] = {ClockDisplayXL: 0x01, ClockEnd: 0x03, ClockVersionRequest: 0x09, ClockSetNRun: 0x0A,
                               ClockAscii: 0x0C}

#: The configuration module looks for ``Options``.
Options = DgtOptions


# 7-segment patterns of the DGT XL (protocols.md §1.8, picochess's table).
_SEGMENTS: dict[str, int] = {
    "0": 0x3F, "1": 0x06, "2": 0x5B, "3": 0x4F, "4": 0x66, "5": 0x6D, "6": 0x7D, "7": 0x07, "8": 0x7F,
    "9": 0x6F, "a": 0x5F, "b": 0x7C, "c": 0x58, "d": 0x5E, "e": 0x7B, "f": 0x71, "g": 0x3D, "h": 0x74,
    "i": 0x10, "j": 0x1E, "k": 0x75, "l": 0x38, "m": 0x55, "n": 0x54, "o": 0x5C, "p": 0x73, "q": 0x67,
    "r": 0x50, "s": 0x6D, "t": 0x78, "u": 0x3E, "v": 0x2A, "w": 0x7E, "x": 0x64, "y": 0x6E, "z": 0x5B,
    " ": 0x00, "-": 0x40, "/": 0x52, "|": 0x36, "\\": 0x64, "?": 0x53, "@": 0x65, "=": 0x48, "_": 0x08,
}


def xl_segments(text: str) -> bytes:
    """The six segment bytes (order C B A F E D) showing *text* (6 characters) on a DGT XL."""
    chars = [_SEGMENTS.get(c, 0x00) for c in text.lower().ljust(6)[:6]]
    a, b, c, d, e, f = chars
    return bytes((c, b, a, f, e, d))


def create_driver(options: DgtOptions, *, time_source: TimeSource = time.monotonic,
                  tap: Tap | None = None) -> DgtDriver:
    """Factory used by :func:`drivers.base.open_driver` (and, with *tap*, by ``boardd record``)."""
    return DgtDriver(options, time_source=time_source, tap=tap)


class DgtDriver(LinkDriver[SerialLink]):
    """A DGT e-board (USB, serial, Bluetooth SPP) with the clock on its jack; a :class:`~drivers.base.BoardDriver`.

    Args:
        options: port and timing.
        time_source: stamps the events.
        tap: raw traffic observer (``boardd record``).
        rng: random source of the backoff jitter (seed it in tests).
    """

    def __init__(self, options: DgtOptions, *, time_source: TimeSource = time.monotonic,
                 tap: Tap | None = None, rng: random.Random | None = None) -> None:
        super().__init__(name="DGT", port=options.port, reconnect=options.reconnect, time_source=time_source,
                         rng=rng)
        self.options = options
        self._tap = tap
        self._decoder = DgtDecoder()
        self._mapper = DgtMapper()
        self._buttons: asyncio.Queue[ClockButton] = asyncio.Queue(maxsize=64)
        self._clock_queue: deque[HostCommand] = deque()
        #: The caller waiting for the clock's answer to a queued command (by identity): True ack, False refused.
        self._clock_waiters: dict[int, asyncio.Future[bool]] = {}
        self._clock_pending: HostCommand | None = None
        self._clock_tries = 0
        self._clock_timer: asyncio.TimerHandle | None = None
        self._clock_version_asked = False

    # --- BoardDriver -----------------------------------------------------------

    @property
    def info(self) -> DeviceInfo:
        """What the board and clock said about themselves so far."""
        mapper = self._mapper
        return DeviceInfo(driver="dgt", port=self.options.port, serial=mapper.long_serial or mapper.serial,
                          version=mapper.version, clock_model=mapper.clock_model, connected=self._connected)

    @property
    def counters(self) -> Counter[str]:
        """Every counter of the driver, codec and mapper (discarded bytes, rejected readings, reconnects)."""
        total: Counter[str] = Counter()
        total.update(self.stats)
        total.update(self._decoder.stats)
        total.update(self._mapper.stats)
        return total

    async def buttons(self) -> AsyncIterator[ClockButton]:
        """Clock button presses (auto acks), for operator tools; the oldest are dropped beyond 64."""
        while True:
            yield await self._buttons.get()

    async def send(self, command: DriverCommand) -> None:
        """Send *command* to the board / clock.

        Raises:
            DeviceDisconnectedError: the board is not connected.
            UnsupportedCommandError: not a command this driver knows.
        """
        match command:
            case RequestDump():
                self._write(Command.SEND_BRD)
            case SetClock(left_s=left, right_s=right, running=running):
                mode = {None: SetNRunMode.PAUSE, ClockSide.LEFT: SetNRunMode.LEFT_RUNS,
                        ClockSide.RIGHT: SetNRunMode.RIGHT_RUNS}[running]
                self._mapper.note_clock_set()
                self._queue_clock(ClockSetNRun(left_s=left, right_s=right, mode=mode))
            case ClockDisplay(text=""):
                self._queue_clock(ClockEnd())
            case ClockDisplay(text=text, beep=beep):
                if self._mapper.clock_model == "dgtxl":
                    self._queue_clock(ClockDisplayXL(segments=xl_segments(text), beep=beep))
                else:
                    self._queue_clock(ClockAscii(text=text, beep=beep))
            case _:
                raise UnsupportedCommandError(command, driver="dgt")

    async def send_confirmed(self, command: DriverCommand) -> bool:
        """Send a clock command and wait for the clock's answer to it.

        Returns:
            True when the clock acknowledged it, False when it refused it (an error ack: a SetNRun
            while the clock is not in mode 23, protocols.md §1.8).

        Raises:
            TimeoutError: no ack after ``clock_tries`` sends (the command was given up).
            DeviceDisconnectedError: the board is not connected.
            UnsupportedCommandError: not a clock command (board commands have no ack).
        """
        if not isinstance(command, SetClock | ClockDisplay):
            raise UnsupportedCommandError(command, driver="dgt")
        before = len(self._clock_queue)
        await self.send(command)
        if len(self._clock_queue) <= before:  # pragma: no cover - send queues exactly one clock command
            raise DeviceDisconnectedError(f"dgt {self.options.port}: clock command not queued")
        queued = self._clock_queue[-1]
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._clock_waiters[id(queued)] = waiter
        try:
            return await waiter
        finally:
            self._clock_waiters.pop(id(queued), None)

    # --- clock commands: one at a time, each waits for its ack (protocols.md §1.8) ------

    def _clock_done(self, command: HostCommand, answer: bool | BaseException) -> None:
        """Hand the clock's answer to *command* to whoever waits for it."""
        waiter = self._clock_waiters.pop(id(command), None)
        if waiter is None or waiter.done():
            return
        if isinstance(answer, BaseException):
            waiter.set_exception(answer)
        else:
            waiter.set_result(answer)

    def _queue_clock(self, command: HostCommand) -> None:
        if self._link is None or not self._connected:
            raise DeviceDisconnectedError(f"dgt {self.options.port}: board not connected")
        self._clock_queue.append(command)
        if self._clock_pending is None:
            self._clock_next()

    def _clock_next(self) -> None:
        """Send the head of the clock queue (again) and arm its ack timeout."""
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        self._clock_pending = None
        link = self._link
        if not self._clock_queue or link is None or not self._connected:
            return
        command = self._clock_queue[0]
        self._clock_pending = command
        self._clock_tries += 1
        try:
            link.write(encode(command))
        except DeviceDisconnectedError:
            return  # resent after reconnecting
        self._clock_timer = asyncio.get_running_loop().call_later(self.options.clock_ack_timeout_s,
                                                                  self._clock_timeout)

    def _clock_timeout(self) -> None:
        self._clock_timer = None
        if self._clock_tries >= self.options.clock_tries:
            dropped = self._clock_queue.popleft()
            self._clock_tries = 0
            self.stats["clock_commands_dropped"] += 1
            _LOGGER.warning("DGT clock did not acknowledge %r after %d tries: dropped", dropped,
                            self.options.clock_tries)
            self._clock_done(dropped, TimeoutError(f"the clock did not acknowledge after "
                                                   f"{self.options.clock_tries} sends"))
        else:
            self.stats["clock_command_retries"] += 1
        self._clock_next()

    def _clock_acked(self, ack: ClockAck) -> None:
        pending = self._clock_pending
        if pending is None or ack.is_auto or ack.command != _ACK_CODES.get(type(pending)):
            return
        done = self._clock_queue.popleft()
        self._clock_tries = 0
        if ack.is_error:  # the clock answered: it will not do it (resending would not help)
            self.stats["clock_commands_refused"] += 1
            _LOGGER.warning("DGT clock refused %r (error ack %02x %02x %02x %02x)", done, ack.ack0, ack.ack1,
                            ack.ack2, ack.ack3)
        self._clock_done(done, not ack.is_error)
        self._clock_next()

    def _clock_changed(self, up: bool) -> None:
        """A clock was plugged into the board (ask which model it is) or pulled out."""
        if not up:
            self._clock_version_asked = False
        elif not self._clock_version_asked and self.options.clock:
            self._clock_version_asked = True
            self._queue_clock(ClockVersionRequest())

    def _clock_link_lost(self) -> None:
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        self._clock_pending = None
        self._clock_tries = 0

    # --- internals ---------------------------------------------------------------

    def _write(self, command: HostCommand) -> None:
        link = self._link
        if link is None or not self._connected:
            raise DeviceDisconnectedError(f"dgt {self.options.port}: board not connected")
        link.write(encode(command))

    def _hello(self, link: SerialLink) -> None:
        # the EEPROM log before the dump: what the board recorded while no host read it (§1.9) comes first
        sequence = [Command.SEND_UPDATE_NICE, Command.SEND_VERSION, Command.SEND_EE_MOVES, Command.SEND_BRD,
                    Command.RETURN_SERIALNR, Command.RETURN_LONG_SERIALNR]
        data = b"".join(encode(c) for c in sequence)
        if self.options.clock:
            data += encode(ClockVersionRequest())
            self._clock_version_asked = True
        link.write(data)

    async def _open(self) -> SerialLink:
        return await SerialLink.open(self.options.port, baudrate=self.options.baudrate, tap=self._tap)

    async def _shutdown(self) -> None:
        self._clock_link_lost()
        for waiter in self._clock_waiters.values():
            if not waiter.done():
                waiter.set_exception(DeviceDisconnectedError(f"dgt {self.options.port}: driver stopped"))
        self._clock_waiters.clear()
        await super()._shutdown()

    def _link_lost(self) -> None:
        self._clock_link_lost()

    def _down_events(self, at: float) -> list[BoardEvent]:
        return list(self._mapper.reset_link(at))

    async def _serve(self, link: SerialLink) -> None:
        """Talk to an open link until it fails (raises DeviceDisconnectedError)."""
        loop = asyncio.get_running_loop()
        options = self.options
        self._decoder.reset()
        self._hello(link)
        now = loop.time()
        last_rx = now
        hello_at: float | None = now + options.hello_s
        settle_at: float | None = None
        periodic_at: float | None = now + options.periodic_dump_s if options.periodic_dump_s > 0 else None
        keepalive_sent = False
        while True:
            deadlines = [d for d in (hello_at, settle_at, periodic_at) if d is not None]
            deadlines.append(last_rx + (options.watchdog_s if keepalive_sent else options.keepalive_s))
            data = await read_within(link, max(0.0, min(deadlines) - loop.time()))
            if data is None:
                now = loop.time()
                if hello_at is not None and now >= hello_at:
                    self._hello(link)
                    hello_at = now + options.hello_s
                if settle_at is not None and now >= settle_at:
                    settle_at = None
                    link.write(encode(Command.SEND_BRD))
                if periodic_at is not None and now >= periodic_at:
                    periodic_at = now + options.periodic_dump_s
                    link.write(encode(Command.SEND_BRD))
                if now - last_rx >= options.watchdog_s:
                    self.stats["watchdog"] += 1
                    raise DeviceDisconnectedError(f"no data for {options.watchdog_s:.0f} s")
                if not keepalive_sent and now - last_rx >= options.keepalive_s:
                    keepalive_sent = True
                    link.write(encode(Command.RETURN_SERIALNR))
                continue
            at = self._now()
            self._alive()
            last_rx = loop.time()
            keepalive_sent = False
            for message in self._decoder.feed(data):
                if not self._connected:
                    self._up(at)
                    hello_at = None
                    if self._clock_queue:
                        self._clock_next()
                if isinstance(message, FieldUpdate) and options.settle_dump_s > 0:
                    settle_at = last_rx + options.settle_dump_s
                elif isinstance(message, ClockAck):
                    self._clock_acked(message)
                try:
                    mapped = self._mapper.map(message, at)
                except ValueError as exc:  # an event refused its values: count, log, keep going
                    self.stats["mapping_errors"] += 1
                    _LOGGER.warning("DGT message %r not mapped: %s", message, exc)
                    continue
                for event in mapped:
                    if isinstance(event, LinkChanged) and event.link is Link.CLOCK:
                        self._clock_changed(event.up)
                    if isinstance(event, ClockButton):
                        if self._buttons.full():
                            self._buttons.get_nowait()
                        self._buttons.put_nowait(event)
                    else:
                        self._emit(event)
