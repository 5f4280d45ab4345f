"""The Chessnut driver over USB HID or BLE: asyncio adapter over :mod:`drivers.chessnut.codec`.

Theory of operation
-------------------
One task owns the device. It finds and claims the board
(:meth:`~drivers.chessnut.usb_link.HidLink.open`, in a worker thread), switches
it to real-time mode (``21 01 00``, required after every connect, §6.2) and asks
for the battery, then reads input reports with a short blocking read in
``asyncio.to_thread`` (``read_timeout_ms``, 100 ms as in the vendor SDK). Over BLE
(``port = "ble:<address>"``, :mod:`drivers.chessnut.ble_link`) the same commands go to
the operation characteristic and notifications replace the reports. Board
frames become :class:`~boardd.core.events.BoardSnapshot` events; the board repeats
identical frames, which are dropped (§6.5).

Hot-plug: a read or write error (``ENODEV``: the board was unplugged) gives
``LinkChanged(BOARD, up=False)``; the driver then looks for the board again with
jittered backoff, and when it is back emits ``LinkChanged(up=True)`` and the first
frame as a snapshot. A board that stays silent for ``poll_s`` is sent real-time
mode again; after ``watchdog_s`` it is declared gone. Writes are spaced by at
least ``write_interval_s`` (the SDK waits 200 ms between HID writes).

Liveness: in real-time mode the board keeps sending frames (identical ones repeat
while nothing changes, §6.5), each moving ``last_activity``; after ``poll_s`` (2 s)
of silence real-time mode is requested again as the keep-alive. ``boardd record``
passes a tap to the link (:class:`_UsbLink`, :class:`~drivers.chessnut.ble_link.BleLink`):
every report read and written.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

from boardd.core.errors import DeviceDisconnectedError
from boardd.core.events import BoardSnapshot, Content
from drivers._loop import LinkDriver
from drivers.base import DeviceInfo, DriverCommand, ReconnectPolicy, RequestDump, TimeSource, UnsupportedCommandError
from drivers.chessnut.ble_link import BleLink
from drivers.chessnut.codec import Battery, BoardFrame, ChessnutDecoder, Command
from drivers.chessnut.usb_link import HidLink
from drivers.transport import Tap

__all__ = ["ChessnutDriver", "ChessnutOptions", "Options", "create_driver"]

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChessnutOptions:
    """Options of the Chessnut driver (``[driver.chessnut]``).

    Attributes:
        port: ``"usb"`` for the first Chessnut on USB, ``"usb:<serial>"`` for a given board, or
            ``"ble:<address>"`` for a board over Bluetooth LE (extra ``ble``).
        read_timeout_ms: blocking read slice in the worker thread.
        write_interval_s: least time between two HID writes.
        battery_s: ask for the battery level this often (0 = only at connect).
        poll_s: resend real-time mode after this much silence.
        watchdog_s: declare the board gone after this much silence.
        reconnect_initial_s: first reconnection delay.
        reconnect_max_s: largest reconnection delay.
    """

    port: str = "usb"
    read_timeout_ms: int = 100
    write_interval_s: float = 0.2
    battery_s: float = 60.0
    poll_s: float = 2.0
    watchdog_s: float = 6.0
    reconnect_initial_s: float = 0.25
    reconnect_max_s: float = 5.0

    def __post_init__(self) -> None:
        if self.port != "usb" and not self.port.startswith("usb:") and not self.port.startswith("ble:"):
            raise ValueError(f"port must be 'usb', 'usb:<serial>' or 'ble:<address>', got {self.port!r}")
        if self.port == "ble:":
            raise ValueError("ble: needs the board's address")
        if self.read_timeout_ms <= 0 or self.watchdog_s <= self.poll_s:
            raise ValueError("need read_timeout_ms > 0 and watchdog_s > poll_s")

    @property
    def serial(self) -> str:
        """The USB serial number asked for ("" = any board, or BLE)."""
        return self.port.partition(":")[2] if self.port.startswith("usb") else ""

    @property
    def ble_address(self) -> str:
        """The BLE address ("" = USB)."""
        return self.port.partition(":")[2] if self.port.startswith("ble:") else ""

    @property
    def reconnect(self) -> ReconnectPolicy:
        """Backoff policy."""
        return ReconnectPolicy(initial=self.reconnect_initial_s, maximum=self.reconnect_max_s)


Options = ChessnutOptions


def create_driver(options: ChessnutOptions, *, time_source: TimeSource = time.monotonic,
                  tap: Tap | None = None) -> ChessnutDriver:
    """Factory used by :func:`drivers.base.open_driver` (and, with *tap*, by ``boardd record``)."""
    return ChessnutDriver(options, time_source=time_source, tap=tap)


class _Link(Protocol):
    description: str

    async def read(self, timeout_ms: int) -> bytes | None: ...

    async def write(self, report: bytes) -> None: ...

    async def close(self) -> None: ...


class _UsbLink:
    """The blocking :class:`HidLink` driven from worker threads; *tap* sees every report (on the event loop)."""

    def __init__(self, link: HidLink, tap: Tap | None = None) -> None:
        self._link = link
        self._tap = tap
        self.description = link.description

    async def read(self, timeout_ms: int) -> bytes | None:
        report = await asyncio.to_thread(self._link.read, timeout_ms)
        if report is not None and self._tap is not None:
            self._tap("rx", report)
        return report

    async def write(self, report: bytes) -> None:
        if self._tap is not None:
            self._tap("tx", report)
        await asyncio.to_thread(self._link.write, report)

    async def close(self) -> None:
        await asyncio.to_thread(self._link.close)


class ChessnutDriver(LinkDriver[_Link]):
    """A Chessnut board on USB HID or BLE; a :class:`~drivers.base.BoardDriver`.

    Args:
        options: which board and timing.
        time_source: stamps the events.
        backend: the pyusb backend (``None``: libusb; tests pass an emulated one).
        tap: raw traffic observer (``boardd record``): every report read and written.
        rng: random source of the backoff jitter.
    """

    def __init__(self, options: ChessnutOptions | None = None, *, time_source: TimeSource = time.monotonic,
                 backend: Any = None, tap: Tap | None = None, rng: random.Random | None = None) -> None:
        self.options = options or ChessnutOptions()
        super().__init__(name="Chessnut", port=self.options.port, reconnect=self.options.reconnect,
                         time_source=time_source, rng=rng)
        self._usb_backend = backend
        self._tap = tap
        self._decoder = ChessnutDecoder()
        self._last_squares: tuple[Content, ...] | None = None
        self._force_snapshot = False
        self._last_write = float("-inf")
        self._write_lock = asyncio.Lock()
        self.battery: Battery | None = None

    @property
    def info(self) -> DeviceInfo:
        """What is known about the board."""
        return DeviceInfo(driver="chessnut", port=self.options.port, connected=self._connected,
                          serial=self.options.serial or None)

    @property
    def counters(self) -> Counter[str]:
        """Driver and decoder counters."""
        total: Counter[str] = Counter()
        total.update(self.stats)
        total.update(self._decoder.stats)
        return total

    async def send(self, command: DriverCommand) -> None:
        """Only :class:`~drivers.base.RequestDump` is supported: the next frame is emitted even if unchanged.

        Raises:
            DeviceDisconnectedError: the board is not connected.
            UnsupportedCommandError: the board has no clock.
        """
        if not isinstance(command, RequestDump):
            raise UnsupportedCommandError(command, driver="chessnut")
        if self._link is None or not self._connected:
            raise DeviceDisconnectedError("chessnut: board not connected")
        self._force_snapshot = True

    # --- internals -----------------------------------------------------------------------

    async def _write(self, link: _Link, report: bytes) -> None:
        async with self._write_lock:
            loop = asyncio.get_running_loop()
            wait = self._last_write + self.options.write_interval_s - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            await link.write(report)
            self._last_write = loop.time()

    async def _open(self) -> _Link:
        if self.options.ble_address:
            return await BleLink.open(self.options.ble_address, tap=self._tap)
        link = await asyncio.to_thread(HidLink.open, backend=self._usb_backend, serial=self.options.serial)
        _LOGGER.debug("Chessnut board found: %s", link.description)
        return _UsbLink(link, self._tap)

    async def _serve(self, link: _Link) -> None:
        loop = asyncio.get_running_loop()
        options = self.options
        self._decoder.reset()
        self._last_squares = None
        await self._write(link, Command.REALTIME.value)
        await self._write(link, Command.BATTERY.value)
        last_rx = loop.time()
        battery_at = last_rx + options.battery_s if options.battery_s > 0 else None
        polled = False
        while True:
            report = await link.read(options.read_timeout_ms)
            now = loop.time()
            if report is None:
                if now - last_rx >= options.watchdog_s:
                    self.stats["watchdog"] += 1
                    raise DeviceDisconnectedError(f"no report for {options.watchdog_s:g} s")
                if not polled and now - last_rx >= options.poll_s:
                    polled = True
                    await self._write(link, Command.REALTIME.value)
                continue
            last_rx = now
            polled = False
            at = self._now()
            self._alive()
            for message in self._decoder.feed_report(report):
                self._on_message(message, at)
            if battery_at is not None and now >= battery_at:
                battery_at = now + options.battery_s
                await self._write(link, Command.BATTERY.value)

    def _on_message(self, message: object, at: float) -> None:
        if not self._connected:
            self._up(at)
        if isinstance(message, Battery):
            self.battery = message
            return
        if not isinstance(message, BoardFrame):
            return
        squares = message.squares()
        if squares == self._last_squares and not self._force_snapshot:
            self.stats["duplicate_snapshots"] += 1
            return
        self._force_snapshot = False
        self._last_squares = squares
        self.stats["snapshots"] += 1
        self._emit(BoardSnapshot(at=at, squares=squares))
