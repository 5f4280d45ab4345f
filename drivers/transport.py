"""Byte transports shared by the serial board families: device paths and URLs, hot-plug backoff.

Theory of operation
-------------------
:meth:`SerialLink.open` opens a port given as a device path
(``/dev/ttyACM0``, ``/dev/serial/by-id/usb-DGT...``, ``/dev/rfcomm0``) or a
pyserial URL (``socket://host:port`` for ser2net and tests, ``rfc2217://``,
``loop://``), with the family's line settings. Paths and ``socket://`` are
driven by the event loop (pyserial-asyncio-fast: no threads, no polling);
URL schemes without a file descriptor (``rfc2217://``, ``loop://``) are read
by a worker thread with a short blocking read.

A link that goes away (read error, EOF, the pty's other end closed, USB
unplugged) makes :meth:`SerialLink.read` raise
:class:`boardd.errors.DeviceDisconnectedError`; opening a device that is not
there raises the same error. Both are transient: drivers retry with
:class:`Backoff` (jittered, capped exponential delays, drivers.base.ReconnectPolicy)
until the device returns. A port string that can never work (unknown URL
scheme) raises :class:`boardd.errors.DriverError`.

Every chunk read or written can be passed to a *tap* (``tap("rx", data)`` /
``tap("tx", data)``): that is how ``boardd record`` captures traffic.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import urllib.parse
from collections.abc import Callable
from typing import Final

import serial
import serial_asyncio_fast

from boardd.errors import DeviceDisconnectedError, DriverError
from drivers.base import ReconnectPolicy

__all__ = ["TRACE", "Backoff", "SerialLink", "Tap"]

_LOGGER = logging.getLogger(__name__)

#: Log level of raw bytes.
TRACE: Final = 5

#: A raw traffic observer: ``tap("rx" | "tx", data)``.
Tap = Callable[[str, bytes], None]

#: URL schemes opened through pyserial's file descriptor and the event loop.
_LOOP_SCHEMES = frozenset({"", "socket"})
#: URL schemes pyserial knows but that have no usable file descriptor.
_THREAD_SCHEMES = frozenset({"rfc2217", "loop", "spy", "alt", "hwgrep"})

_EOF: Final = b""


class Backoff:
    """Delays between reconnection attempts: ``policy.delay(n)`` with a seeded random source."""

    def __init__(self, policy: ReconnectPolicy, *, rng: random.Random | None = None) -> None:
        self.policy = policy
        self._rng = rng or random.Random()
        self.attempt = 0

    def next_delay(self) -> float:
        """The wait before the next attempt; each call moves one step up the ladder."""
        delay = self.policy.delay(self.attempt, self._rng.random())
        self.attempt += 1
        return delay

    def reset(self) -> None:
        """The device is back: start again from the initial delay next time."""
        self.attempt = 0


class _Receiver(asyncio.Protocol):
    """Collects received chunks in a queue; EOF and errors become the empty chunk."""

    def __init__(self, queue: asyncio.Queue[bytes], lost: list[BaseException | None], gone: asyncio.Event) -> None:
        self._queue = queue
        self._lost = lost
        self._gone = gone

    def data_received(self, data: bytes) -> None:
        self._queue.put_nowait(bytes(data))

    def eof_received(self) -> bool | None:
        self._queue.put_nowait(_EOF)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost.append(exc)
        self._queue.put_nowait(_EOF)
        self._gone.set()


def _scheme(url: str) -> str:
    if "://" not in url:
        return ""
    return urllib.parse.urlparse(url).scheme.lower()


class SerialLink:
    """An open byte link to a device. Create with :meth:`open`; close with :meth:`close`."""

    def __init__(self, url: str, *, tap: Tap | None = None) -> None:
        self.url = url
        self._tap = tap
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._lost: list[BaseException | None] = []
        self._gone = asyncio.Event()  # the transport has closed the device
        self._transport: asyncio.Transport | None = None
        self._serial: serial.SerialBase | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def open(cls, url: str, *, baudrate: int = 9600, tap: Tap | None = None) -> SerialLink:
        """Open *url* at *baudrate*, 8N1, no flow control.

        Raises:
            DeviceDisconnectedError: the device is not there (yet) or refused the connection.
            DriverError: the port string can never work (unknown URL scheme).
        """
        scheme = _scheme(url)
        if scheme not in _LOOP_SCHEMES | _THREAD_SCHEMES:
            raise DriverError(f"unsupported port URL scheme {scheme!r} in {url!r}")
        link = cls(url, tap=tap)
        settings = {"baudrate": baudrate, "bytesize": serial.EIGHTBITS, "parity": serial.PARITY_NONE,
                    "stopbits": serial.STOPBITS_ONE, "xonxoff": False, "rtscts": False}
        loop = asyncio.get_running_loop()
        try:
            if scheme in _LOOP_SCHEMES:
                transport, _ = await serial_asyncio_fast.create_serial_connection(
                    loop, lambda: _Receiver(link._queue, link._lost, link._gone), url, **settings)
                link._transport = transport
            else:
                link._serial = await asyncio.to_thread(serial.serial_for_url, url, timeout=0.2, **settings)
                link._reader_task = asyncio.create_task(link._thread_reader(), name=f"serial-reader {url}")
        except (OSError, serial.SerialException) as exc:
            raise DeviceDisconnectedError(f"cannot open {url}: {exc}") from exc
        except ValueError as exc:
            raise DriverError(f"bad port {url!r}: {exc}") from exc
        _LOGGER.debug("opened %s", url)
        return link

    async def _thread_reader(self) -> None:
        assert self._serial is not None
        device = self._serial
        try:
            while not self._closed:
                data = await asyncio.to_thread(device.read, 4096)
                if data:
                    self._queue.put_nowait(bytes(data))
        except (OSError, serial.SerialException) as exc:
            self._lost.append(exc)
        self._queue.put_nowait(_EOF)

    @property
    def is_open(self) -> bool:
        """The link has not been closed and has not failed."""
        return not self._closed and not self._lost

    async def read(self) -> bytes:
        """The next chunk of received bytes (never empty).

        Raises:
            DeviceDisconnectedError: the device went away or the link was closed.
        """
        if self._closed:
            raise DeviceDisconnectedError(f"{self.url}: link closed")
        data = await self._queue.get()
        if not data:
            self._queue.put_nowait(_EOF)  # every later read fails too
            cause = self._lost[0] if self._lost else None
            raise DeviceDisconnectedError(f"{self.url}: device went away ({cause or 'end of file'})")
        if _LOGGER.isEnabledFor(TRACE):
            _LOGGER.log(TRACE, ">> %s", data.hex(" "))
        if self._tap is not None:
            self._tap("rx", data)
        return data

    def write(self, data: bytes) -> None:
        """Queue *data* for sending (does not block).

        Raises:
            DeviceDisconnectedError: the link is closed or failed.
        """
        if not self.is_open:
            raise DeviceDisconnectedError(f"{self.url}: link is down")
        if _LOGGER.isEnabledFor(TRACE):
            _LOGGER.log(TRACE, "<< %s", data.hex(" "))
        if self._tap is not None:
            self._tap("tx", data)
        try:
            if self._transport is not None:
                self._transport.write(data)
            elif self._serial is not None:
                self._serial.write(data)
        except (OSError, serial.SerialException) as exc:
            self._lost.append(exc)
            self._queue.put_nowait(_EOF)
            raise DeviceDisconnectedError(f"{self.url}: write failed: {exc}") from exc

    async def close(self) -> None:
        """Close the link; idempotent, never raises."""
        if self._closed:
            return
        self._closed = True
        if self._transport is not None:
            if not self._transport.is_closing():  # a failed transport is already closing itself
                self._transport.abort()
            self._transport = None
            # The transport closes the device in a background task: wait, so no descriptor outlives close().
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2.0):
                    await self._gone.wait()
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader_task
        if self._serial is not None:
            with contextlib.suppress(Exception):
                self._serial.close()
            self._serial = None
        self._queue.put_nowait(_EOF)
        _LOGGER.debug("closed %s", self.url)
