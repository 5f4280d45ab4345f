"""A reusable asyncio driver for serial boards that report whole positions (Millennium, Certabo).

Theory of operation
-------------------
One task owns the link (:mod:`drivers.transport`): it opens the port, lets the
family send its start-up commands, then reads. Each received chunk is
stamped with ``time_source()`` and fed to the family's pure decoder; the
family maps every message to (at most) a 64-square reading. Readings equal to
the previous one are dropped (these boards repeat their status many times a
second), so the engine sees a :class:`~boardd.core.events.BoardSnapshot` only when
something changed, plus the first one after (re)connecting and the one
answering a :class:`~drivers.base.RequestDump`.

The board is "up" when its first valid message arrives (a USB-serial adapter
can exist without a board behind it). Silence is handled with two timers: after
``poll_s`` without data the family's poll is sent; after ``watchdog_s`` the link
is declared dead. A link that fails (EOF, read error, unplug) gives
``LinkChanged(BOARD, up=False)``, then the port is reopened with jittered
exponential backoff: that loop, the event queue and ``last_activity`` (moved by
every received chunk) are :class:`drivers._loop.LinkDriver`'s.

Family classes subclass :class:`SerialSnapshotDriver` and implement the
``_hello``, ``_poll``, ``_reading`` and ``_request_dump`` hooks (and ``_link_lost``
to reset per-connection state); none of them does I/O other than writing to the link.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from boardd.core.errors import DeviceDisconnectedError
from boardd.core.events import BoardSnapshot, Content
from drivers._loop import LinkDriver, read_within
from drivers.base import DeviceInfo, DriverCommand, ReconnectPolicy, RequestDump, TimeSource, UnsupportedCommandError
from drivers.transport import SerialLink, Tap

__all__ = ["SerialSnapshotDriver", "StreamDecoder"]

_LOGGER = logging.getLogger(__name__)


class StreamDecoder(Protocol):
    """What the driver needs from a family's pure decoder."""

    stats: Counter[str]

    def feed(self, data: bytes) -> Sequence[object]:
        """Decode received bytes into messages."""
        ...

    def reset(self) -> None:
        """Forget a partial message."""
        ...


class SerialSnapshotDriver(LinkDriver[SerialLink]):
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
        super().__init__(name=family, port=port, reconnect=reconnect, time_source=time_source, rng=rng)
        self.family = family
        self.port = port
        self.baudrate = baudrate
        self._decoder = decoder
        self._poll_s = poll_s
        self._watchdog_s = watchdog_s
        self._tap = tap
        self._last_squares: tuple[Content, ...] | None = None
        self._force_snapshot = False
        self._serial: str | None = None
        self._version: str | None = None

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

    async def _open(self) -> SerialLink:
        return await SerialLink.open(self.port, baudrate=self.baudrate, tap=self._tap)

    async def _serve(self, link: SerialLink) -> None:
        loop = asyncio.get_running_loop()
        self._decoder.reset()
        self._last_squares = None
        self._hello(link)
        last_rx = loop.time()
        polled = False
        while True:
            deadlines = []
            if self._poll_s > 0 and not polled:
                deadlines.append(last_rx + self._poll_s)
            if self._watchdog_s > 0:
                deadlines.append(last_rx + self._watchdog_s)
            data = await read_within(link, max(0.0, min(deadlines) - loop.time()) if deadlines else None)
            if data is None:
                now = loop.time()
                if self._watchdog_s > 0 and now - last_rx >= self._watchdog_s:
                    self.stats["watchdog"] += 1
                    raise DeviceDisconnectedError(f"no data for {self._watchdog_s:g} s")
                if self._poll_s > 0 and not polled:
                    polled = True
                    self._poll(link)
                continue
            at = self._now()
            self._alive()
            last_rx = loop.time()
            polled = False
            for message in self._decoder.feed(data):
                self._on_message(message, at)

    def _on_message(self, message: object, at: float) -> None:
        if not self._connected:
            self._up(at)
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
