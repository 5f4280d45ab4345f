"""The asyncio half every device driver shares: the event queue, stopping, liveness, one reconnect loop.

Theory of operation
-------------------
:class:`DriverBase` is what every hardware driver has in common: a queue of
events read by :meth:`~DriverBase.events` (a :class:`QueueIterator`, which
survives cancelled waits and ends at :data:`CLOSED`), ``__aenter__`` starting
one task (``_run``) and ``__aexit__`` stopping it (:func:`stop_task`), event
stamping with the injected ``time_source`` (never backwards), and
:attr:`~DriverBase.last_activity`, the time of the driver's last sign of life
that the daemon's systemd watchdog looks at.

:class:`LinkDriver` adds the loop of the drivers whose task owns one link at a
time (DGT, Millennium, Certabo, Chessnut): open the link (``_open``), talk to it
(``_serve``) until it fails, close it, announce ``LinkChanged(BOARD, up=False)``
once, wait with jittered backoff (:class:`drivers.transport.Backoff`) and
start again. A device that is missing is a link that is down, never an error;
only :class:`boardd.core.errors.DriverError` from ``_open`` (a port that can never
work) ends the loop, and every later wait on the events raises it. An
unexpected exception in ``_serve`` is a bug: it is counted (``internal_errors``),
logged with its traceback, and the link is reopened, so the driver carries on.

Liveness: ``last_activity`` moves when bytes, a report or a packet arrive from
the device (the family's ``_serve`` calls :meth:`DriverBase._alive`) and at every
reconnection attempt. A driver whose loop still turns therefore moves it at
least every ``max(keep-alive period, watchdog + largest backoff)`` seconds; one
that hangs does not.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from types import TracebackType
from typing import Final, Generic, Protocol, Self, TypeVar, cast

from boardd.core.errors import DeviceDisconnectedError, DriverError
from boardd.core.events import BoardEvent, Link, LinkChanged
from drivers.base import ReconnectPolicy, TimeSource
from drivers.transport import Backoff

__all__ = ["CLOSED", "DriverBase", "LinkDriver", "QueueIterator", "read_within", "stop_task"]

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


class QueueIterator:
    """Async iterator over a driver's event queue; unlike an async generator it survives cancelled waits."""

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
            self._queue.put_nowait(item)  # the driver has stopped: every later wait fails the same way
            raise item
        return cast(BoardEvent, item)


class _Readable(Protocol):
    async def read(self) -> bytes: ...


async def read_within(link: _Readable, seconds: float | None) -> bytes | None:
    """The next chunk from *link*, or ``None`` when nothing came within *seconds*.

    Raises:
        DeviceDisconnectedError: the link failed.
    """
    try:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that
        # arrives together with data, and the driver would never stop.
        async with asyncio.timeout(seconds):
            return await link.read()
    except TimeoutError:
        return None


class DriverBase:
    """The queue, task, time stamps and liveness of a driver. Subclasses implement ``_run``.

    Args:
        name: the family's name in logs and task names (``"DGT"``, ``"millennium"``).
        port: the port the driver opens, for logs and events.
        time_source: stamps the events and :attr:`last_activity`.
    """

    def __init__(self, *, name: str, port: str, time_source: TimeSource) -> None:
        self._name = name
        self._port = port
        self._time_source = time_source
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._entered = False
        self._last_at = float("-inf")
        self._last_activity = time_source()
        self.stats: Counter[str] = Counter()

    @property
    def last_activity(self) -> float:
        """``time_source()`` time of the last sign of life: data from the device or a reconnection attempt."""
        return self._last_activity

    def _alive(self) -> None:
        """Note a sign of life now."""
        self._last_activity = self._time_source()

    async def __aenter__(self) -> Self:
        if self._entered:
            raise RuntimeError(f"{type(self).__name__} is not re-entrant")
        self._entered = True
        self._alive()
        self._task = asyncio.create_task(self._run(), name=f"{self._name} {self._port}")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._task is not None:
            await stop_task(self._task)
            self._task = None
        await self._shutdown()
        self._queue.put_nowait(CLOSED)

    def events(self) -> AsyncIterator[BoardEvent]:
        """The device's events until the context exits (cancellation-safe: a timed-out wait loses nothing).

        Raises:
            DriverError: the port can never be opened.
        """
        return QueueIterator(self._queue)

    async def _run(self) -> None:
        """The driver's task (subclasses)."""
        raise NotImplementedError

    async def _shutdown(self) -> None:
        """Release the device after the task has stopped (subclasses)."""

    def _now(self) -> float:
        at = self._time_source()
        if at < self._last_at:
            self.stats["time_backwards"] += 1
            at = self._last_at
        self._last_at = at
        return at

    def _emit(self, event: BoardEvent) -> None:
        self._queue.put_nowait(event)

    def _fail(self, error: DriverError) -> None:
        """A permanent problem: every wait on the events raises *error* from now on."""
        _LOGGER.error("%s driver cannot use %s: %s", self._name, self._port, error)
        self._queue.put_nowait(error)


class _Closable(Protocol):
    async def close(self) -> None: ...


LinkT = TypeVar("LinkT", bound=_Closable)


class LinkDriver(DriverBase, Generic[LinkT]):
    """A driver whose task owns one link at a time: open, serve, close, reconnect with backoff.

    Subclasses implement ``_open`` and ``_serve`` (which calls :meth:`_up` when the device first
    answers, and :meth:`DriverBase._alive` for everything it receives), and may override
    ``_link_lost`` and ``_down_events``.

    Args:
        name: the family's name in logs.
        port: the port, for logs and the ``LinkChanged`` details.
        reconnect: backoff policy.
        time_source: stamps the events.
        rng: random source of the backoff jitter.
    """

    def __init__(self, *, name: str, port: str, reconnect: ReconnectPolicy, time_source: TimeSource,
                 rng: random.Random | None = None) -> None:
        super().__init__(name=name, port=port, time_source=time_source)
        self._backoff = Backoff(reconnect, rng=rng)
        self._link: LinkT | None = None
        self._connected = False

    # --- hooks ---------------------------------------------------------------------------

    async def _open(self) -> LinkT:
        """Open the device.

        Raises:
            DeviceDisconnectedError: not there (yet).
            DriverError: can never work.
        """
        raise NotImplementedError

    async def _serve(self, link: LinkT) -> None:
        """Talk to an open link until it fails (raises :class:`DeviceDisconnectedError`)."""
        raise NotImplementedError

    def _link_lost(self) -> None:
        """The link was closed (reset per-connection state); called before the down event."""

    def _down_events(self, at: float) -> Iterable[BoardEvent]:
        """Events that follow ``LinkChanged(BOARD, up=False)`` after a connected link was lost."""
        return ()

    # --- the loop ------------------------------------------------------------------------

    def _up(self, at: float) -> None:
        """The device answered on a fresh link: ``LinkChanged(BOARD, up=True)``."""
        self._connected = True
        self._backoff.reset()
        self.stats["connects"] += 1
        self._emit(LinkChanged(at=at, link=Link.BOARD, up=True, detail=self._port))
        _LOGGER.info("%s board connected on %s", self._name, self._port)

    async def _close_link(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            await link.close()

    async def _shutdown(self) -> None:
        await self._close_link()

    async def _retry_later(self) -> None:
        delay = self._backoff.next_delay()
        _LOGGER.debug("%s: retrying %s in %.2f s", self._name, self._port, delay)
        await asyncio.sleep(delay)

    async def _run(self) -> None:
        announced_down = False
        while True:
            try:
                link = await self._open()
            except DeviceDisconnectedError as exc:
                self._alive()
                if not announced_down:
                    announced_down = True
                    self._emit(LinkChanged(at=self._now(), link=Link.BOARD, up=False, detail=str(exc)))
                    _LOGGER.warning("%s board not available: %s", self._name, exc)
                await self._retry_later()
                continue
            except DriverError as exc:
                self._fail(exc)
                return
            self._alive()
            self._link = link
            reason = "link closed"
            try:
                await self._serve(link)
            except DeviceDisconnectedError as exc:
                reason = str(exc)
            except Exception as exc:  # a bug must not end the driver: log it, reconnect, carry on
                self.stats["internal_errors"] += 1
                _LOGGER.exception("%s driver error on %s; reconnecting", self._name, self._port)
                reason = f"internal error: {exc!r}"
            finally:
                await self._close_link()
            self._link_lost()
            if self._connected:
                self._connected = False
                self.stats["disconnects"] += 1
                at = self._now()
                self._emit(LinkChanged(at=at, link=Link.BOARD, up=False, detail=reason))
                for event in self._down_events(at):
                    self._emit(event)
                _LOGGER.warning("%s board link lost: %s", self._name, reason)
                announced_down = True
            elif not announced_down:  # the port opened but no board ever answered
                announced_down = True
                self._emit(LinkChanged(at=self._now(), link=Link.BOARD, up=False, detail=reason))
                _LOGGER.warning("%s board not answering on %s: %s", self._name, self._port, reason)
            await self._retry_later()
