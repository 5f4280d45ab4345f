"""systemd service notifications (sd_notify) and a progress-based watchdog.

Theory of operation
-------------------
Under ``Type=notify`` systemd passes the address of a Unix datagram socket in
``$NOTIFY_SOCKET``. A service reports its state by sending newline-separated
``KEY=value`` assignments to it, one datagram per notification (sd_notify(3)):
``READY=1`` when started, ``STATUS=…`` for ``systemctl status``, ``RELOADING=1``,
``STOPPING=1`` and, when ``WatchdogSec=`` is set, ``WATCHDOG=1`` keep-alives. The
protocol is stable and is the API; systemd upstream recommends a few lines of
raw socket code over a library, which is what :class:`Notifier` is. An address
starting with ``/`` is a path, one starting with ``@`` is in the abstract
namespace. Without ``$NOTIFY_SOCKET`` (not started by systemd, or a unit without
``Type=notify``) every call is a silent no-op, so the daemon calls it
unconditionally.

Sending never blocks the event loop (the socket is non-blocking) and never
raises: a notification that cannot be sent is logged and counted, because a
broken notify socket must not take the board daemon down.

The watchdog (:class:`ProgressWatchdog`) pings ``WATCHDOG=1`` only while every
component of the daemon reported *progress* within the watchdog interval. A
live event loop is not enough: a board reader stuck in a driver or an MQTT task
wedged in a publish would keep a naive timer pinging. With a progress check,
such a stall stops the pings and systemd kills and restarts the service
(``WatchdogSec=`` + ``Restart=``). What counts as progress for each component
is documented on :class:`ProgressWatchdog`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping

__all__ = ["DEFAULT_COMPONENTS", "Notifier", "ProgressWatchdog"]

_LOGGER = logging.getLogger(__name__)

#: The components the daemon reports progress for (see :class:`ProgressWatchdog`).
DEFAULT_COMPONENTS: tuple[str, ...] = ("board", "mqtt")


def _socket_address(raw: str) -> str | bytes | None:
    """The ``sendto`` address for a ``$NOTIFY_SOCKET`` value, or None if unsupported."""
    if raw.startswith("/"):
        return raw
    if raw.startswith("@") and len(raw) > 1:
        # Abstract namespace: a leading NUL byte instead of the '@'.
        return b"\0" + raw[1:].encode()
    return None


def _parse_watchdog(environ: Mapping[str, str], pid: int) -> float | None:
    """The watchdog timeout in seconds from ``WATCHDOG_USEC``/``WATCHDOG_PID``, or None."""
    raw_usec = environ.get("WATCHDOG_USEC", "").strip()
    if not raw_usec:
        return None
    try:
        usec = int(raw_usec)
    except ValueError:
        _LOGGER.warning("ignoring invalid WATCHDOG_USEC=%r", raw_usec)
        return None
    if usec <= 0:
        return None
    raw_pid = environ.get("WATCHDOG_PID", "").strip()
    if raw_pid:
        try:
            watchdog_pid = int(raw_pid)
        except ValueError:
            _LOGGER.warning("ignoring invalid WATCHDOG_PID=%r", raw_pid)
            return None
        if watchdog_pid != pid:
            # The watchdog belongs to another process (our parent, typically).
            return None
    return usec / 1_000_000


class Notifier:
    """Sends sd_notify(3) messages to systemd; a no-op when not under systemd.

    Build it with :meth:`from_environment`. Every method returns True when the
    datagram was sent and False otherwise (no socket configured, or a send
    error, which is logged once per kind and counted in :attr:`failures`).

    Example:
        >>> notifier = Notifier.from_environment({})
        >>> notifier.enabled, notifier.ready(), notifier.watchdog_interval()
        (False, False, None)
    """

    def __init__(self, address: str | None = None, *, watchdog_seconds: float | None = None) -> None:
        """Create a notifier for one socket address.

        Args:
            address: the ``$NOTIFY_SOCKET`` value (``/path`` or ``@abstract``),
                or None for a notifier that does nothing.
            watchdog_seconds: the watchdog timeout systemd enforces, if any.

        Raises:
            ValueError: ``watchdog_seconds`` is not positive.
        """
        if watchdog_seconds is not None and not watchdog_seconds > 0:
            raise ValueError(f"watchdog_seconds must be positive, not {watchdog_seconds!r}")
        self.address = address
        self._target: str | bytes | None = None
        if address:
            self._target = _socket_address(address)
            if self._target is None:
                _LOGGER.warning("unsupported NOTIFY_SOCKET address %r: notifications disabled", address)
        self._watchdog_seconds = watchdog_seconds
        self._sock: socket.socket | None = None
        self._failed_kinds: set[str] = set()
        #: Datagrams sent successfully.
        self.sent = 0
        #: Datagrams that could not be sent.
        self.failures = 0

    @classmethod
    def from_environment(
        cls,
        environ: MutableMapping[str, str] | None = None,
        *,
        unset_environment: bool = False,
    ) -> Notifier:
        """A notifier configured from ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and ``WATCHDOG_PID``.

        ``WATCHDOG_USEC`` is honoured only when ``WATCHDOG_PID`` is unset or
        names this process, as sd_watchdog_enabled(3) does.

        Args:
            environ: the environment to read (default ``os.environ``).
            unset_environment: remove the three variables afterwards, so that
                child processes do not notify systemd on our behalf.
        """
        env: MutableMapping[str, str] = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or None
        watchdog = _parse_watchdog(env, os.getpid())
        if unset_environment:
            for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
                env.pop(key, None)
        return cls(address, watchdog_seconds=watchdog)

    @property
    def enabled(self) -> bool:
        """True when there is a socket to notify (the service runs under systemd)."""
        return self._target is not None

    def watchdog_interval(self) -> float | None:
        """The watchdog timeout (``WatchdogSec=``) in seconds, or None when the watchdog is off.

        Ping at least twice per interval (:class:`ProgressWatchdog` does).
        """
        return self._watchdog_seconds if self.enabled else None

    def notify(self, *assignments: str) -> bool:
        """Send ``KEY=value`` assignments in one datagram.

        Args:
            assignments: e.g. ``"READY=1"``, ``"STATUS=waiting for board"``.

        Returns:
            True if systemd was notified.

        Raises:
            ValueError: no assignment, or one that is not ``KEY=value`` or
                contains a newline (it would split into two assignments).
        """
        if not assignments:
            raise ValueError("notify() needs at least one KEY=value assignment")
        for item in assignments:
            key, sep, _ = item.partition("=")
            if not sep or not key or "\n" in item:
                raise ValueError(f"not a single KEY=value assignment: {item!r}")
        if self._target is None:
            return False
        payload = "\n".join(assignments).encode()
        kind = assignments[0].partition("=")[0]
        try:
            if self._sock is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                sock.setblocking(False)
                self._sock = sock
            self._sock.sendto(payload, self._target)
        except OSError as exc:
            self.failures += 1
            if kind not in self._failed_kinds:
                self._failed_kinds.add(kind)
                _LOGGER.warning("sd_notify %s to %r failed: %s", kind, self.address, exc)
            else:
                _LOGGER.debug("sd_notify %s to %r failed again: %s", kind, self.address, exc)
            return False
        self.sent += 1
        self._failed_kinds.discard(kind)
        return True

    def ready(self, status: str | None = None) -> bool:
        """``READY=1``: start-up finished (send it once the board port is open, not after MQTT).

        Args:
            status: an optional ``STATUS=`` text sent in the same datagram.
        """
        if status is None:
            return self.notify("READY=1")
        return self.notify("READY=1", "STATUS=" + _one_line(status))

    def status(self, text: str) -> bool:
        """``STATUS=…``: a one-line state shown by ``systemctl status``; newlines become spaces."""
        return self.notify("STATUS=" + _one_line(text))

    def stopping(self) -> bool:
        """``STOPPING=1``: shutdown has begun (send it on SIGTERM, before the last publishes)."""
        return self.notify("STOPPING=1")

    def reloading(self) -> bool:
        """``RELOADING=1`` with ``MONOTONIC_USEC``, as ``Type=notify-reload`` requires.

        Send :meth:`ready` again when the reload is complete.
        """
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def watchdog(self) -> bool:
        """``WATCHDOG=1``: one keep-alive. Prefer :class:`ProgressWatchdog` to calling this on a timer."""
        return self.notify("WATCHDOG=1")

    def watchdog_trigger(self) -> bool:
        """``WATCHDOG=trigger``: ask systemd to act as if the watchdog had expired (self-detected hang)."""
        return self.notify("WATCHDOG=trigger")

    def extend_timeout(self, seconds: float) -> bool:
        """``EXTEND_TIMEOUT_USEC``: ask for more time to start or stop (e.g. a slow board probe).

        Raises:
            ValueError: ``seconds`` is not positive.
        """
        if not seconds > 0:
            raise ValueError(f"seconds must be positive, not {seconds!r}")
        return self.notify(f"EXTEND_TIMEOUT_USEC={round(seconds * 1_000_000)}")

    def close(self) -> None:
        """Close the socket; a later notification opens a new one."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __repr__(self) -> str:
        return f"Notifier({self.address!r}, watchdog_seconds={self._watchdog_seconds!r})"


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())


class ProgressWatchdog:
    """Pings the systemd watchdog only while every daemon component makes progress.

    Every ``interval / 2`` seconds, :meth:`run` sends ``WATCHDOG=1`` if each
    component called :meth:`progress` within the last ``stall_after`` seconds
    (default: the watchdog interval). A component that falls silent stops the
    pings; systemd then kills the service (``WatchdogSignal=``, SIGABRT) and
    restarts it. The stall is also logged and shown as ``STATUS=``, so that
    ``systemctl status`` and the journal say which part hung.

    Progress means *the task's loop is turning*, not *the peer is healthy*: an
    unplugged board or an unreachable broker must not get the daemon killed
    (a restart cures neither, and the board must keep recording moves). The
    daemon reports:

    * ``"board"``: on every event from the driver, and on every turn of the
      board's timer task while the driver's ``last_activity`` (bytes from the
      device, e.g. the answer to an idle poll, or a reconnect attempt while the
      device is missing) is younger than ``stall_after``. Drivers that are
      silent while nothing moves must poll the device more often than that; a
      driver whose loop hangs with the port open stops the pings.
    * ``"mqtt"``: on every completed publish (PUBACK for QoS 1, written for
      QoS 0), on every keep-alive round trip while idle, and on every connect
      attempt (successful or not) of the reconnect loop while the broker is
      down.

    A daemon serving several boards uses one pair per board (``"board:t12"``,
    ``"mqtt:t12"``, …): one hung board then stops the pings too.

    Until :meth:`run` starts, components are given one interval of grace from
    that moment, so a slow first board event does not count as a stall; a
    component that never reports is still caught after that grace.

    Time is injectable (``clock``, ``sleep``) so tests need no real waiting.
    """

    def __init__(
        self,
        notifier: Notifier,
        components: Iterable[str] = DEFAULT_COMPONENTS,
        *,
        interval: float | None = None,
        stall_after: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        """Create a watchdog.

        Args:
            notifier: where the pings go.
            components: names of the components that must report progress.
            interval: the watchdog timeout in seconds; default
                ``notifier.watchdog_interval()``. None (watchdog off) makes
                :meth:`run` return at once.
            stall_after: how long a component may stay silent; default ``interval``.
            clock: a monotonic clock in seconds.
            sleep: an awaitable sleep in seconds.

        Raises:
            ValueError: no components, duplicate names, or a non-positive time.
        """
        names = tuple(components)
        if not names:
            raise ValueError("ProgressWatchdog needs at least one component")
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate component names: {names!r}")
        self.notifier = notifier
        self.components = names
        self.interval = notifier.watchdog_interval() if interval is None else interval
        if self.interval is not None and not self.interval > 0:
            raise ValueError(f"interval must be positive, not {self.interval!r}")
        self.stall_after = stall_after if stall_after is not None else self.interval
        if self.stall_after is not None and not self.stall_after > 0:
            raise ValueError(f"stall_after must be positive, not {self.stall_after!r}")
        self._clock = clock
        self._sleep = sleep
        self._last: dict[str, float | None] = dict.fromkeys(names)
        self._started_at: float | None = None
        self._stalled: tuple[str, ...] = ()
        #: Pings sent (and attempted) by :meth:`check`.
        self.pings = 0
        #: Checks that found a stalled component and withheld the ping.
        self.withheld = 0

    def progress(self, component: str) -> None:
        """Record that ``component`` made progress now. Cheap: call it as often as you like.

        Raises:
            KeyError: ``component`` is not one of :attr:`components` (a typo would
                otherwise silently starve the watchdog).
        """
        if component not in self._last:
            raise KeyError(f"unknown watchdog component {component!r}; known: {self.components!r}")
        self._last[component] = self._clock()

    def last_progress(self, component: str) -> float | None:
        """When ``component`` last reported progress (``clock`` time), or None if it never did.

        Raises:
            KeyError: ``component`` is not one of :attr:`components`.
        """
        if component not in self._last:
            raise KeyError(f"unknown watchdog component {component!r}; known: {self.components!r}")
        return self._last[component]

    def stalled(self, now: float | None = None) -> tuple[str, ...]:
        """The components that made no progress within ``stall_after`` seconds of ``now``."""
        if self.stall_after is None:
            return ()
        at = self._clock() if now is None else now
        result = []
        for name, last in self._last.items():
            reference = last if last is not None else self._started_at
            if reference is None or at - reference > self.stall_after:
                result.append(name)
        return tuple(result)

    def check(self, now: float | None = None) -> bool:
        """One watchdog tick: ping if no component is stalled. Returns True if it pinged."""
        at = self._clock() if now is None else now
        if self._started_at is None:
            self._started_at = at
        stalled = self.stalled(at)
        if stalled:
            self.withheld += 1
            if stalled != self._stalled:
                ages = ", ".join(f"{name} {self._age(name, at)}" for name in stalled)
                _LOGGER.error("watchdog: no progress from %s; withholding WATCHDOG=1", ages)
                self.notifier.status(f"stalled: {ages}")
            self._stalled = stalled
            return False
        if self._stalled:
            _LOGGER.warning("watchdog: progress again from %s", ", ".join(self._stalled))
            self._stalled = ()
        self.pings += 1
        self.notifier.watchdog()
        return True

    def _age(self, name: str, now: float) -> str:
        last = self._last[name]
        if last is None:
            return "(never reported)"
        return f"(silent for {now - last:.1f} s)"

    async def run(self) -> None:
        """Ping every ``interval / 2`` until cancelled; return at once if the watchdog is off."""
        if self.interval is None:
            _LOGGER.debug("systemd watchdog not enabled; progress watchdog idle")
            return
        period = self.interval / 2
        _LOGGER.debug("watchdog: %.3f s timeout, checking every %.3f s", self.interval, period)
        self._started_at = self._clock()
        while True:
            self.check()
            await self._sleep(period)
