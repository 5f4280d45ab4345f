"""The boardd exception tree: one base, split by cause."""

from __future__ import annotations

__all__ = [
    "BoarddError",
    "ConfigError",
    "DeviceDisconnectedError",
    "DriverError",
    "EventError",
    "EventLogError",
    "ProtocolError",
]


class BoarddError(Exception):
    """Base class of every error boardd raises on purpose."""


class EventError(BoarddError, ValueError):
    """An event could not be constructed: the values are impossible."""


class EventLogError(BoarddError, ValueError):
    """A line of an event log (JSON Lines) could not be read.

    Attributes:
        line_no: 1-based line number in the input, when known.
    """

    def __init__(self, message: str, *, line_no: int | None = None) -> None:
        super().__init__(f"line {line_no}: {message}" if line_no is not None else message)
        self.line_no = line_no


class ConfigError(BoarddError, ValueError):
    """A configuration file or value is invalid.

    Attributes:
        path: the file, when known.
        key: the dotted key, when known.
    """

    def __init__(self, message: str, *, path: str | None = None, key: str | None = None) -> None:
        where = ""
        if path:
            where += f"{path}: "
        if key:
            where += f"[{key}] "
        super().__init__(where + message)
        self.path = path
        self.key = key


class ProtocolError(BoarddError, ValueError):
    """Bytes from a device did not follow its protocol.

    Attributes:
        raw: the offending bytes.
    """

    def __init__(self, message: str, *, raw: bytes = b"") -> None:
        super().__init__(f"{message} [{raw.hex(' ')}]" if raw else message)
        self.raw = raw


class DriverError(BoarddError):
    """A driver could not talk to its device."""


class DeviceDisconnectedError(DriverError):
    """The device went away (unplugged, Bluetooth drop). Transient: retried with backoff."""
