"""The driver interface: what every board family provides, and how one is opened.

Theory of operation
-------------------
A *driver* turns a device's bytes into :mod:`boardd.core.events` and turns a few
:data:`DriverCommand` values into bytes. The daemon only ever sees this
module's :class:`BoardDriver` Protocol; it never imports a family module
directly but calls :func:`open_driver`, which imports the selected family
lazily (a Raspberry Pi with a DGT board never pays for Chessnut's HID stack).

How to write a driver (read this before adding a family)
--------------------------------------------------------
One module per family, ``drivers/<family>.py`` (or a package), in two halves:

1. **A pure codec** on top: a decoder class with ``feed(data: bytes) -> list[Message]``
   that buffers partial input, drops to the next start-of-message marker on
   garbage, counts the bytes it discarded and TRACE-logs them (level 5, hex,
   ``>>`` for received, ``<<`` for sent), and raises only its own
   :class:`boardd.core.errors.ProtocolError` subclasses. An ``encode(command) -> bytes``
   for host commands. A mapping layer from messages to :mod:`boardd.core.events`.
   No asyncio, no clock reads in the codec: the time of an event is passed in.
2. **A thin asyncio adapter** at the bottom, built on
   :mod:`drivers.transport` (serial device paths, ``/dev/serial/by-id/...``,
   ``socket://host:port``, ``rfc2217://``, hot-plug with jittered backoff).

The adapter class satisfies :class:`BoardDriver` structurally (no inheritance):

* It is an **async context manager**. ``__aenter__`` starts the reader task
  and returns at once, even if the device is absent: a missing device is a
  link that is down, not an error (the daemon must start before the board is
  plugged in). ``__aexit__`` cancels and awaits every task and closes the port.
  Not re-entrant.
* ``events()`` returns an async iterator of :data:`boardd.core.events.BoardEvent`
  for a **single consumer**. It ends when the context exits. Transient device
  trouble never raises out of it: the driver emits
  ``LinkChanged(link=Link.BOARD, up=False)``, reconnects with
  :class:`ReconnectPolicy`, then emits ``LinkChanged(..., up=True)`` followed by a
  full :class:`boardd.core.events.BoardSnapshot` so the engine can reconcile moves
  made while the link was down. It raises :class:`boardd.core.errors.DriverError`
  only for permanent problems (a port string that can never work).
* Every event is stamped on receipt with ``at = time_source()``; drivers take
  ``time_source: Callable[[], float] = time.monotonic`` as a keyword argument so
  tests and replays can inject time. Events are yielded in non-decreasing ``at``.
* Squares are python-chess numbers (a1=0 .. h8=63) **in the board's own frame**:
  orientation is the engine's business. Contents are ``chess.Piece``, ``None``
  (empty) or :class:`boardd.core.events.Marker` for readings that are not pieces.
  A driver never invents a move or a piece: an unreadable code becomes
  ``Marker.UNKNOWN`` (or is dropped and counted), never a guess.
* Boards that only send snapshots (Millennium, Chessnut, Certabo) emit
  :class:`boardd.core.events.BoardSnapshot` (drop identical consecutive ones);
  boards that send per-square changes (DGT) emit
  :class:`boardd.core.events.SquareChanged` and a snapshot on connect, on request
  and for periodic reconciliation.
* Clocks emit :class:`boardd.core.events.ClockReading` with *left/right* sides of the
  physical clock (which player sits where is configuration) and
  ``lever_high``; a clock that is absent or unplugged is
  ``LinkChanged(link=Link.CLOCK, up=False)``.
* ``send(command)`` accepts the :data:`DriverCommand` values. A command the device
  cannot perform raises :class:`UnsupportedCommandError`; a command while the
  link is down raises :class:`boardd.core.errors.DeviceDisconnectedError`. boardd never
  beeps or writes text to a clock during play (rules-spec G2):
  :class:`ClockDisplay` exists for operator tools outside play only.
* ``info`` returns a :class:`DeviceInfo` snapshot (what is known so far).
* ``last_activity`` is the ``time_source()`` time of the driver's last sign of life (data from
  the device, or a reconnection attempt); the daemon's systemd watchdog stops pinging when it
  stands still, i.e. when the driver hangs. A driver must therefore make an idle healthy device
  answer every few seconds (a keep-alive request after silence) unless the device streams.
  :class:`drivers._loop.DriverBase` provides it, with the event queue and the task.
* Hide nothing: count discarded bytes and rejected readings in a ``stats``
  mapping, and log them (WARNING for device misbehaviour, TRACE for bytes).

Registering a family: add a :class:`DriverKind` member and its module to
``_REGISTRY``. The module provides ``Options`` (a frozen dataclass whose first
field is ``port``, built from the ``[driver.<kind>]`` config table) and
``create_driver(options, *, time_source) -> BoardDriver``. A ``create_driver`` that
also accepts ``tap=`` (a :data:`drivers.transport.Tap`, called with every chunk
received and sent) makes the family recordable with ``boardd record``; a family
that registers a :class:`drivers.capture.CaptureCodec` can be replayed with
``boardd replay --driver <kind>``.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Protocol, Self, TypeAlias, runtime_checkable

from boardd.core.errors import ConfigError, DriverError
from boardd.core.events import BoardEvent, ClockSide

__all__ = [
    "BoardDriver",
    "ClockDisplay",
    "DeviceInfo",
    "DriverCommand",
    "DriverFactory",
    "DriverKind",
    "ReconnectPolicy",
    "RequestDump",
    "SetClock",
    "TimeSource",
    "UnsupportedCommandError",
    "family_module",
    "open_driver",
    "options_from_mapping",
]

_LOGGER = logging.getLogger(__name__)

#: A function returning the current time in seconds on the daemon's monotonic line.
TimeSource: TypeAlias = Callable[[], float]


class UnsupportedCommandError(DriverError):
    """The device cannot perform this command (a board without a clock asked to set it).

    Attributes:
        command: the command that was refused.
        driver: the driver name.
    """

    def __init__(self, command: object, *, driver: str) -> None:
        super().__init__(f"{driver}: command not supported: {command!r}")
        self.command = command
        self.driver = driver


# --- Commands ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestDump:
    """Ask for a full board reading; the driver answers with a :class:`boardd.core.events.BoardSnapshot`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SetClock:
    """Set both clock times and start one side (DGT SetNRun), for a new game or an arbiter correction.

    Attributes:
        left_s: seconds to show on the left side (0 .. 9:59:59).
        right_s: seconds to show on the right side.
        running: the side that starts running, ``None`` to leave the clock paused.
    """

    left_s: int
    right_s: int
    running: ClockSide | None = None

    def __post_init__(self) -> None:
        for name in ("left_s", "right_s"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value < 10 * 3600:
                raise ValueError(f"{name} must be whole seconds in 0..35999, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockDisplay:
    """Show text on the clock. Operator tool outside play only (rules-spec G2); empty text ends it.

    Attributes:
        text: up to 8 characters (DGT 3000) or 6 (DGT XL); empty returns the clock to the times.
        beep: sound the clock's beeper.
    """

    text: str = ""
    beep: bool = False


#: Everything a driver can be asked to do.
DriverCommand: TypeAlias = RequestDump | SetClock | ClockDisplay


# --- Device information ----------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceInfo:
    """What a driver knows about its device; fields are ``None`` until the device said so.

    Attributes:
        driver: the driver kind (``"dgt"``, ``"millennium"``, ...).
        port: the port URL or device path the driver opens.
        serial: the device's serial number.
        version: firmware version as text (``"3.10"``).
        clock_model: ``"dgt3000"``, ``"dgtxl"``, ... when a clock answered.
        connected: the board link is up.
    """

    driver: str
    port: str
    serial: str | None = None
    version: str | None = None
    clock_model: str | None = None
    connected: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ReconnectPolicy:
    """Jittered exponential backoff for reopening a device that went away.

    The n-th retry (n = 0, 1, ...) waits ``min(maximum, initial * factor**n)``
    seconds, multiplied by a random factor in ``[1 - jitter, 1 + jitter]``.
    """

    initial: float = 0.5
    maximum: float = 10.0
    factor: float = 2.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        if not 0 < self.initial <= self.maximum:
            raise ConfigError(f"need 0 < initial <= maximum, got {self.initial!r}, {self.maximum!r}",
                              key="reconnect")
        if self.factor < 1 or not 0 <= self.jitter < 1:
            raise ConfigError("need factor >= 1 and 0 <= jitter < 1", key="reconnect")

    def delay(self, attempt: int, random_unit: float) -> float:
        """The wait before retry number *attempt*, given a uniform random number in [0, 1)."""
        base = min(self.maximum, self.initial * self.factor ** min(attempt, 64))
        return base * (1.0 + self.jitter * (2.0 * random_unit - 1.0))


# --- The interface ------------------------------------------------------------


@runtime_checkable
class BoardDriver(Protocol):
    """A connected board (and the clock behind it). See the module docstring for the contract."""

    @property
    def info(self) -> DeviceInfo:
        """Current knowledge about the device."""
        ...

    @property
    def last_activity(self) -> float:
        """The driver's ``time_source()`` time of its last sign of life (read-only; the watchdog's input).

        It moves when bytes, a report or a packet arrive from the device, and at every reconnection
        attempt while the device is missing, so it stands still only when the driver's loop no longer
        turns (or a connected device has fallen silent, until the driver's own watchdog gives the link
        up and starts reconnecting). Each driver keeps an idle healthy device talking (a keep-alive
        request or poll after a few seconds of silence, or a device that streams by itself), so
        ``time_source() - last_activity`` stays below the driver's keep-alive period plus a round
        trip while connected, and below its watchdog plus the largest reconnection delay otherwise.
        Starts at the time the driver was created (entered).
        """
        ...

    async def __aenter__(self) -> Self:
        """Start the driver; returns even when the device is absent (link down)."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop every task and close the device."""
        ...

    def events(self) -> AsyncIterator[BoardEvent]:
        """The events of the device, for one consumer, until the context exits.

        Raises:
            DriverError: a permanent problem (the port can never be opened).
        """
        ...

    async def send(self, command: DriverCommand) -> None:
        """Send *command* to the device.

        Raises:
            UnsupportedCommandError: the device cannot do this.
            DeviceDisconnectedError: the link is down.
        """
        ...


#: A callable building a driver from typed options (what a family module's ``create_driver`` is).
DriverFactory: TypeAlias = Callable[..., BoardDriver]


class DriverKind(enum.StrEnum):
    """The board families boardd can drive (the ``driver`` key of the configuration)."""

    DGT = "dgt"
    MILLENNIUM = "millennium"
    CHESSNUT = "chessnut"
    CERTABO = "certabo"
    DGT3000_I2C = "dgt3000-i2c"
    SIM = "sim"


#: kind -> module implementing it (imported only when selected).
_REGISTRY: dict[DriverKind, str] = {
    DriverKind.DGT: "drivers.dgt",
    DriverKind.MILLENNIUM: "drivers.millennium",
    DriverKind.CHESSNUT: "drivers.chessnut",
    DriverKind.CERTABO: "drivers.certabo",
    DriverKind.DGT3000_I2C: "drivers.dgt3000_i2c",
    DriverKind.SIM: "drivers.sim",
}


def family_module(kind: DriverKind | str) -> ModuleType:
    """Import and return the module implementing *kind*.

    Raises:
        ConfigError: unknown kind.
        DriverError: the module cannot be imported.
    """
    kind = _kind(kind)
    module_name = _REGISTRY[kind]
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise DriverError(f"driver {kind.value!r} is not available: {exc}") from exc


def options_from_mapping(kind: DriverKind | str, values: Mapping[str, object]) -> object:
    """Build the typed options of *kind* from a configuration table (``[driver.dgt]``).

    Unknown keys are rejected so that a typo in the configuration is caught at start-up.

    Raises:
        ConfigError: unknown kind, unknown key, or a value the options refuse.
        DriverError: the family's module cannot be imported.
    """
    kind = _kind(kind)
    module = family_module(kind)
    options_type = getattr(module, "Options", None)
    if not isinstance(options_type, type) or not dataclasses.is_dataclass(options_type):
        raise DriverError(f"driver {kind.value!r} defines no Options dataclass")
    known = {f.name for f in dataclasses.fields(options_type)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
                          key=f"driver.{kind.value}")
    try:
        return options_type(**values)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc), key=f"driver.{kind.value}") from exc


def _kind(kind: DriverKind | str) -> DriverKind:
    try:
        return DriverKind(kind)
    except ValueError:
        known = ", ".join(k.value for k in DriverKind)
        raise ConfigError(f"unknown driver {kind!r}; known: {known}", key="driver") from None


def open_driver(
    kind: DriverKind | str | DriverFactory,
    options: object,
    *,
    time_source: TimeSource = time.monotonic,
) -> BoardDriver:
    """Create (but do not start) the driver for *kind*; use the result as ``async with``.

    Args:
        kind: a :class:`DriverKind` (or its string), or a factory callable for tests and
            third-party drivers, called as ``kind(options, time_source=time_source)``.
        options: the family's ``Options`` instance, or a mapping turned into one with
            :func:`options_from_mapping`.
        time_source: the clock used to stamp events.

    Raises:
        ConfigError: unknown kind or bad options.
        DriverError: the family's module cannot be imported or has no factory.
    """
    if callable(kind) and not isinstance(kind, str):
        return kind(options, time_source=time_source)
    kind = _kind(kind)
    if isinstance(options, Mapping):
        options = options_from_mapping(kind, options)
    module = family_module(kind)
    factory = getattr(module, "create_driver", None)
    if factory is None:
        raise DriverError(f"driver {kind.value!r} defines no create_driver()")
    driver: BoardDriver = factory(options, time_source=time_source)
    _LOGGER.debug("opened driver %s with %r", kind.value, options)
    return driver
