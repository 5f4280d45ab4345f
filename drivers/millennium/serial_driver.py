"""A reusable asyncio driver for serial boards that report whole positions (Millennium, Certabo).

Theory of operation
-------------------
One task owns the link (:mod:`drivers.transport`): it opens the port, lets the
family send its start-up commands, then reads. Each received chunk is
stamped with ``time_source()`` and fed to the family's pure decoder; the
family maps every message to (at most) a 64-square reading. Readings equal to
the previous one are dropped (these boards repeat their status many times a
second), so the engine sees a :class:`~boardd.events.BoardSnapshot` only when
something changed, plus the first one after (re)connecting and the one
answering a :class:`~drivers.base.RequestDump`.

The board is "up" when its first valid message arrives (a USB-serial adapter
can exist without a board behind it). Silence is handled with two timers: after
``poll_s`` without data the family's poll is sent; after ``watchdog_s`` the link
is declared dead. A link that fails (EOF, read error, unplug) gives
``LinkChanged(BOARD, up=False)``, then the port is reopened with jittered
exponential backoff.

Family classes subclass :class:`SerialSnapshotDriver` and implement the
``_hello``, ``_poll``, ``_reading`` and ``_request_dump`` hooks; none of them
does I/O other than writing to the link.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Final, Protocol, Self, cast

from boardd.errors import DeviceDisconnectedError, DriverError
from boardd.events import BoardEvent, BoardSnapshot, Content, Link, LinkChanged
from drivers.base import DeviceInfo, DriverCommand, ReconnectPolicy, RequestDump, TimeSource, UnsupportedCommandError
from drivers.transport import Backoff, SerialLink, Tap

__all__ = ["CLOSED", "QueueIterator", "SerialSnapshotDriver", "StreamDecoder", "stop_task"]

_LOGGER = logging.getLogger(__name__)

#: Put in a driver's queue when it stops: the events iterator ends there.
CLOSED: Final = object()


async def stop_task(task: asyncio.Task[None]) -> None:
    """Cancel *task* and wait until it has ended.

    The cancellation is repeated while the task runs on: a library (``asyncio.wait_for`` on
    Python 3.11) may swallow one that arrives together with a result.
    """
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
    if not task.cancelled() and task.exception() is not None:
        _LOGGER.error("%s ended with an error", task.get_name(), exc_info=task.exception())


class StreamDecoder(Protocol):
    """What the driver needs from a family's pure decoder."""

    stats: Counter[str]

    def feed(self, data: bytes) -> Sequence[object]:
        """Decode received bytes into messages."""
        ...

    def reset(self) -> None:
        """Forget a partial message."""
        ...


class QueueIterator:
    """Async iterator over a driver's event queue; survives cancelled waits (``wait_for``)."""

    def __init__(self, queue: asyncio.Queue[object]) -> None:
        self._queue = queue

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> BoardEvent:
        item = await self._queue.get()
        if item is CLOSED:
            self._queue.put_nowait(CLOSED)
            raise StopAsyncIteration
        if isinstance(item, DriverError):
            self._queue.put_nowait(item)
            raise item
        return cast(BoardEvent, item)


class SerialSnapshotDriver:
    """Base of the snapshot-reporting serial drivers; a :class:`~drivers.base.BoardDriver`.

    Args:
        family: driver kind for logs and :class:`~drivers.base.DeviceInfo`.
        port: device path or URL.
        baudrate: line speed.
        decoder: the family's pure decoder.
        poll_s: after this much silence, ``_poll`` is called (0: never).
        watchdog_s: after this much silence, the link is declared dead (0: never).
        reconnect: backoff policy.
        time_source: stamps the events.
        tap: raw traffic observer (``boardd record``).
        rng: random source of the backoff jitter.
    """

    def __init__(self, *, family: str, port: str, baudrate: int, decoder: StreamDecoder, poll_s: float,
                 watchdog_s: float, reconnect: ReconnectPolicy, time_source: TimeSource = time.monotonic,
                 tap: Tap | None = None, rng: random.Random | None = None) -> None:
        self.family = family
        self.port = port
        self.baudrate = baudrate
        self._decoder = decoder
        self._poll_s = poll_s
        self._watchdog_s = watchdog_s
        self._time_source = time_source
        self._tap = tap
        self._backoff = Backoff(reconnect, rng=rng)
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._link: SerialLink | None = None
        self._connected = False
        self._entered = False
        self._last_at = float("-inf")
        self._last_squares: tuple[Content, ...] | None = None
        self._force_snapshot = False
        self._serial: str | None = None
        self._version: str | None = None
        self.stats: Counter[str] = Counter()

    # --- hooks --------------------------------------------------------------------------

    def _hello(self, link: SerialLink) -> None:
        """Send the start-up commands (called after every open)."""

    def _poll(self, link: SerialLink) -> None:
        """Poke a silent board (called after ``poll_s`` of silence)."""

    def _request_dump(self, link: SerialLink) -> None:
        """Ask for a full reading now (the next reading is emitted even if unchanged)."""

    def _reading(self, message: object, at: float) -> tuple[Content, ...] | None:
        """The 64 contents *message* reports, or ``None`` if it is not a position."""
        return None

    def _link_lost(self) -> None:
        """The link went down (reset per-connection state)."""

    # --- BoardDriver -----------------------------------------------------------------------

    @property
    def info(self) -> DeviceInfo:
        """What the board said about itself so far."""
        return DeviceInfo(driver=self.family, port=self.port, serial=self._serial, version=self._version,
                          connected=self._connected)

    @property
    def counters(self) -> Counter[str]:
        """Driver and decoder counters (discarded bytes, rejected readings, reconnects)."""
        total: Counter[str] = Counter()
        total.update(self.stats)
        total.update(self._decoder.stats)
        return total

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError(f"{type(self).__name__} is not re-entrant")
        self._entered = True
        self._task = asyncio.create_task(self._run(), name=f"{self.family} {self.port}")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._task is not None:
            await stop_task(self._task)
            self._task = None
        await self._close_link()
        self._queue.put_nowait(CLOSED)

    def events(self) -> AsyncIterator[BoardEvent]:
        """Board events until the context exits (cancellation-safe).

        Raises:
            DriverError: the port can never be opened (bad URL).
        """
        return QueueIterator(self._queue)

    async def send(self, command: DriverCommand) -> None:
        """Send *command*: only :class:`~drivers.base.RequestDump` is supported by snapshot boards.

        Raises:
            DeviceDisconnectedError: the board is not connected.
            UnsupportedCommandError: the board has no clock or display.
        """
        if not isinstance(command, RequestDump):
            raise UnsupportedCommandError(command, driver=self.family)
        link = self._link
        if link is None or not self._connected:
            raise DeviceDisconnectedError(f"{self.family} {self.port}: board not connected")
        self._force_snapshot = True
        self._request_dump(link)

    # --- internals -------------------------------------------------------------------------

    def _now(self) -> float:
        at = self._time_source()
        if at < self._last_at:
            self.stats["time_backwards"] += 1
            at = self._last_at
        self._last_at = at
        return at

    def _emit(self, event: BoardEvent) -> None:
        self._queue.put_nowait(event)

    async def _close_link(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            await link.close()

    async def _run(self) -> None:
        announced_down = False
        while True:
            try:
                link = await SerialLink.open(self.port, baudrate=self.baudrate, tap=self._tap)
            except DeviceDisconnectedError as exc:
                if not announced_down:
                    announced_down = True
                    self._emit(LinkChanged(at=self._now(), link=Link.BOARD, up=False, detail=str(exc)))
                    _LOGGER.warning("%s board not available: %s", self.family, exc)
                await asyncio.sleep(self._backoff.next_delay())
                continue
            except DriverError as exc:
                _LOGGER.error("%s driver cannot use %s: %s", self.family, self.port, exc)
                self._queue.put_nowait(exc)
                return
            self._link = link
            reason = "link closed"
            try:
                await self._serve(link)
            except DeviceDisconnectedError as exc:
                reason = str(exc)
            except Exception as exc:  # a bug must not end the driver: log, reconnect, carry on
                self.stats["internal_errors"] += 1
                _LOGGER.exception("%s driver error on %s; reconnecting", self.family, self.port)
                reason = f"internal error: {exc!r}"
            finally:
                await self._close_link()
            self._link_lost()
            self._last_squares = None
            if self._connected:
                self._connected = False
                self.stats["disconnects"] += 1
                self._emit(LinkChanged(at=self._now(), link=Link.BOARD, up=False, detail=reason))
                _LOGGER.warning("%s board link lost: %s", self.family, reason)
                announced_down = True
            elif not announced_down:
                announced_down = True
                self._emit(LinkChanged(at=self._now(), link=Link.BOARD, up=False, detail=reason))
                _LOGGER.warning("%s board not answering on %s: %s", self.family, self.port, reason)
            await asyncio.sleep(self._backoff.next_delay())

    async def _serve(self, link: SerialLink) -> None:
        loop = asyncio.get_running_loop()
        self._decoder.reset()
        self._hello(link)
        last_rx = loop.time()
        polled = False
        while True:
            deadlines = []
            if self._poll_s > 0 and not polled:
                deadlines.append(last_rx + self._poll_s)
            if self._watchdog_s > 0:
                deadlines.append(last_rx + self._watchdog_s)
            timeout = max(0.0, min(deadlines) - loop.time()) if deadlines else None
            try:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that
                # arrives together with data, and the driver would never stop.
                async with asyncio.timeout(timeout):
                    data = await link.read()
            except TimeoutError:
                now = loop.time()
                if self._watchdog_s > 0 and now - last_rx >= self._watchdog_s:
                    self.stats["watchdog"] += 1
                    raise DeviceDisconnectedError(f"no data for {self._watchdog_s:g} s") from None
                if self._poll_s > 0 and not polled:
                    polled = True
                    self._poll(link)
                continue
            at = self._now()
            last_rx = loop.time()
            polled = False
            for message in self._decoder.feed(data):
                self._on_message(message, at)

    def _on_message(self, message: object, at: float) -> None:
        if not self._connected:
            self._connected = True
            self._backoff.reset()
            self.stats["connects"] += 1
            self._emit(LinkChanged(at=at, link=Link.BOARD, up=True, detail=self.port))
            _LOGGER.info("%s board connected on %s", self.family, self.port)
        try:
            squares = self._reading(message, at)
        except ValueError as exc:  # an event refused its values: count, log, keep going
            self.stats["mapping_errors"] += 1
            _LOGGER.warning("%s message %r not mapped: %s", self.family, message, exc)
            return
        if squares is None:
            return
        if squares == self._last_squares and not self._force_snapshot:
            self.stats["duplicate_snapshots"] += 1
            return
        self._force_snapshot = False
        self._last_squares = squares
        self.stats["snapshots"] += 1
        self._emit(BoardSnapshot(at=at, squares=squares))
