"""Byte transports shared by the serial board families: device paths and URLs, hot-plug backoff.

Theory of operation
-------------------
:meth:`SerialLink.open` opens a port given as a device path
(``/dev/ttyACM0``, ``/dev/serial/by-id/usb-DGT...``, ``/dev/rfcomm0``) or a
pyserial URL (``socket://host:port`` for ser2net and tests, ``rfc2217://``,
``loop://``), with the family's line settings. Paths and ``socket://`` are
driven by the event loop (pyserial-asyncio-fast: no threads, no polling).
URL schemes without a file descriptor (``rfc2217://`` for ser2net's telnet
mode, ``loop://``) get two threads of their own (never the loop's default
executor, which name resolution needs): a reader that blocks at most
:data:`THREAD_READ_TIMEOUT_S` per read, so that close never waits longer, and
a writer, so that a stalled TCP connection never blocks the event loop.
pyserial's blocking ``open`` (RFC 2217 negotiation of the line settings) and
``close`` (it joins its telnet thread and then sleeps 0.3 s) run in a worker
thread; a connection opened after the caller gave up is closed again.

Opening a network URL takes a bounded time. ``socket://`` connects through
the event loop (``loop.create_connection``), which by itself waits as long as
the kernel retries its SYNs (about two minutes for a host that drops them):
:meth:`SerialLink.open` gives it *open_timeout* (:data:`OPEN_TIMEOUT_S`) and
reports a connection not made by then as the transient
:class:`boardd.core.errors.DeviceDisconnectedError`, so the usual backoff applies.
``rfc2217://`` is bounded by pyserial itself (5 s to connect, then its
``timeout`` option, 3 s by default, per negotiation step).

:func:`check_port` rejects, before any connection attempt, what can never
work: an unknown scheme, a network URL without host or port, an option the
scheme does not know.

A link that goes away (read error, EOF, the pty's other end closed, USB
unplugged) makes :meth:`SerialLink.read` raise
:class:`boardd.core.errors.DeviceDisconnectedError`; opening a device that is not
there raises the same error. Both are transient: drivers retry with
:class:`Backoff` (jittered, capped exponential delays, drivers.base.ReconnectPolicy)
until the device returns. A port string that can never work (unknown URL
scheme) raises :class:`boardd.core.errors.DriverError`.

Every chunk read or written can be passed to a *tap* (``tap("rx", data)`` /
``tap("tx", data)``): that is how ``boardd record`` captures traffic.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import random
import threading
import urllib.parse
from collections.abc import Callable
from typing import Final

import serial
import serial_asyncio_fast

from boardd.core.errors import DeviceDisconnectedError, DriverError
from drivers.base import ReconnectPolicy

__all__ = ["OPEN_TIMEOUT_S", "THREAD_READ_TIMEOUT_S", "TRACE", "Backoff", "SerialLink", "Tap", "check_port"]

_LOGGER = logging.getLogger(__name__)

#: Log level of raw bytes.
TRACE: Final = 5

#: A raw traffic observer: ``tap("rx" | "tx", data)``.
Tap = Callable[[str, bytes], None]

#: URL schemes opened through pyserial's file descriptor and the event loop.
_LOOP_SCHEMES = frozenset({"", "socket"})
#: URL schemes pyserial knows but that have no usable file descriptor.
_THREAD_SCHEMES = frozenset({"rfc2217", "loop", "spy", "alt", "hwgrep"})
#: Query options pyserial accepts in the network URLs (``rfc2217://host:port?timeout=5``).
_URL_OPTIONS: Final = {"socket": frozenset({"logging"}),
                       "rfc2217": frozenset({"logging", "ign_set_control", "poll_modem", "timeout"})}

#: Longest blocking read of a thread-read link: how long :meth:`SerialLink.close` may wait for its reader.
THREAD_READ_TIMEOUT_S: Final = 0.2

#: Longest wait for a ``socket://`` connection (pyserial's own connect timeout for ``rfc2217://``).
OPEN_TIMEOUT_S: Final = 5.0

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


def check_port(url: str) -> None:
    """Reject a port string that can never work (no I/O: a host that is down is not detected here).

    Raises:
        DriverError: unknown URL scheme; ``socket://`` or ``rfc2217://`` without a host or a valid
            port, or with an option pyserial does not know for that scheme.
    """
    scheme = _scheme(url)
    if scheme not in _LOOP_SCHEMES | _THREAD_SCHEMES:
        raise DriverError(f"unsupported port URL scheme {scheme!r} in {url!r}")
    if scheme not in _URL_OPTIONS:
        return
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None or not 0 < port < 65536:
        raise DriverError(f"bad port URL {url!r}: expected {scheme}://HOST:PORT with PORT in 1..65535")
    options = urllib.parse.parse_qs(parts.query, keep_blank_values=True)  # as pyserial reads them
    unknown = sorted(set(options) - _URL_OPTIONS[scheme])
    if unknown:
        raise DriverError(f"bad port URL {url!r}: unknown option {unknown[0]!r} "
                          f"(known: {', '.join(sorted(_URL_OPTIONS[scheme]))})")


def _close_quietly(device: serial.SerialBase) -> None:
    with contextlib.suppress(Exception):
        device.close()


def _close_when_opened(future: asyncio.Future[serial.SerialBase]) -> None:
    """Done-callback of an open the caller no longer waits for: close what it opened (off the loop)."""
    if not future.cancelled() and future.exception() is None:
        threading.Thread(target=_close_quietly, args=(future.result(),), name="serial-close", daemon=True).start()


def _read_available(device: serial.SerialBase) -> bytes:
    """One byte (waiting at most the device's timeout), then whatever else is already there."""
    data = bytes(device.read(1))
    if data:
        waiting = device.in_waiting
        if waiting:
            data += bytes(device.read(waiting))
    return data


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
        self._reader: threading.Thread | None = None
        self._writer: concurrent.futures.ThreadPoolExecutor | None = None
        self._stop = threading.Event()  # tells the reader thread to end
        self._closed = False

    @classmethod
    async def open(cls, url: str, *, baudrate: int = 9600, tap: Tap | None = None,
                   open_timeout: float = OPEN_TIMEOUT_S) -> SerialLink:
        """Open *url* at *baudrate*, 8N1, no flow control.

        A ``socket://`` connection not made within *open_timeout* seconds is given up.

        Raises:
            DeviceDisconnectedError: the device is not there (yet), refused the connection or did not
                answer within *open_timeout* (``socket://``).
            DriverError: the port string can never work (:func:`check_port`).
        """
        check_port(url)
        scheme = _scheme(url)
        link = cls(url, tap=tap)
        settings = {"baudrate": baudrate, "bytesize": serial.EIGHTBITS, "parity": serial.PARITY_NONE,
                    "stopbits": serial.STOPBITS_ONE, "xonxoff": False, "rtscts": False}
        loop = asyncio.get_running_loop()
        try:
            if scheme == "socket":
                # Cancelling create_connection closes its half-open socket: nothing outlives the timeout.
                deadline = asyncio.timeout(open_timeout)
                try:
                    async with deadline:
                        transport, _ = await serial_asyncio_fast.create_serial_connection(
                            loop, lambda: _Receiver(link._queue, link._lost, link._gone), url, **settings)
                except TimeoutError:
                    if not deadline.expired():
                        raise  # the kernel's own ETIMEDOUT: an OSError like the others
                    raise DeviceDisconnectedError(
                        f"cannot open {url}: no connection within {open_timeout:g} s") from None
                link._transport = transport
            elif scheme in _LOOP_SCHEMES:
                transport, _ = await serial_asyncio_fast.create_serial_connection(
                    loop, lambda: _Receiver(link._queue, link._lost, link._gone), url, **settings)
                link._transport = transport
            else:
                opening = loop.run_in_executor(
                    None, functools.partial(serial.serial_for_url, url, timeout=THREAD_READ_TIMEOUT_S, **settings))
                try:
                    device = await asyncio.shield(opening)
                except asyncio.CancelledError:
                    opening.add_done_callback(_close_when_opened)
                    raise
                link._start_threads(device, loop)
        except (OSError, serial.SerialException) as exc:
            raise DeviceDisconnectedError(f"cannot open {url}: {exc}") from exc
        except ValueError as exc:
            raise DriverError(f"bad port {url!r}: {exc}") from exc
        _LOGGER.debug("opened %s", url)
        return link

    def _start_threads(self, device: serial.SerialBase, loop: asyncio.AbstractEventLoop) -> None:
        self._serial = device
        self._writer = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                             thread_name_prefix=f"serial-writer {self.url}")
        self._reader = threading.Thread(target=self._read_thread, args=(device, loop), name=f"serial-reader {self.url}",
                                        daemon=True)
        self._reader.start()

    def _read_thread(self, device: serial.SerialBase, loop: asyncio.AbstractEventLoop) -> None:
        """The reader of a thread-read link: hands every chunk, and the end, to the event loop."""
        try:
            while not self._stop.is_set():
                try:
                    data = _read_available(device)
                except (OSError, serial.SerialException) as exc:
                    if not self._stop.is_set():
                        loop.call_soon_threadsafe(self._failed, exc)
                    return
                if data:
                    loop.call_soon_threadsafe(self._queue.put_nowait, data)
        except RuntimeError:  # the event loop is closed: nobody is listening any more
            return

    def _failed(self, exc: BaseException) -> None:
        """The device failed (in the event loop's thread): every read from now on raises."""
        if not self._lost:
            self._lost.append(exc)
        self._queue.put_nowait(_EOF)

    def _wrote(self, future: concurrent.futures.Future[int | None], loop: asyncio.AbstractEventLoop) -> None:
        exc = future.exception()
        if exc is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(self._failed, exc)

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
            elif self._serial is not None and self._writer is not None:
                # in order, off the loop; a failure shows as a failed read, as with the transports
                written = self._writer.submit(self._serial.write, data)
                written.add_done_callback(functools.partial(self._wrote, loop=asyncio.get_running_loop()))
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
        if self._serial is not None:
            device, reader, writer = self._serial, self._reader, self._writer
            self._serial = self._reader = self._writer = None
            self._stop.set()

            def release() -> None:
                # pending writes first (a probe's last request), then the device, then the reader
                if writer is not None:
                    writer.shutdown(wait=True)
                _close_quietly(device)
                if reader is not None:
                    reader.join()

            # In a thread: an RFC 2217 close takes 0.3 s or more, which the event loop must not wait out.
            # Shielded: a cancelled close still releases the device.
            await asyncio.shield(asyncio.to_thread(release))
        self._queue.put_nowait(_EOF)
        _LOGGER.debug("closed %s", self.url)
