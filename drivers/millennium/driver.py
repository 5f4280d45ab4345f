"""The Millennium ChessLink driver: asyncio adapter over :mod:`drivers.millennium.codec`.

On every (re)connection the driver asks for the version (``V``), sets the scan
time (``W01``) and the report mode (``W02``: on change by default, with the
board's own debounce when configured; protocols.md §4.3), then asks for a status
(``S``). Status messages become :class:`~boardd.core.events.BoardSnapshot` events
(identical consecutive ones are dropped). With reports "on change" a quiet
board sends nothing, so the driver polls ``S`` after ``poll_s`` of silence and
declares the link dead after ``watchdog_s``.

Liveness: every status answering the poll moves ``last_activity``, so an idle
healthy board moves it at least every ``poll_s`` (2 s) plus a round trip; with
``report="scan"`` the board streams a status per scan (~24/s) anyway.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass

from boardd.core.events import Content
from drivers.base import ReconnectPolicy, TimeSource
from drivers.millennium.codec import (
    EepromWrite,
    MillenniumDecoder,
    Status,
    StatusRequest,
    Version,
    VersionRequest,
    encode,
)
from drivers.millennium.serial_driver import SerialSnapshotDriver
from drivers.transport import SerialLink, Tap

__all__ = ["MillenniumDriver", "MillenniumOptions", "Options", "create_driver"]

_LOGGER = logging.getLogger(__name__)

#: Report modes of E²ROM address 02 (§4.3).
REPORT_MODES = {"scan": 0x00, "change": 0x03}


@dataclass(frozen=True, slots=True, kw_only=True)
class MillenniumOptions:
    """Options of the Millennium driver (``[driver.millennium]``).

    Attributes:
        port: device path or URL.
        baudrate: 38400 for the USB ChessLink module.
        scan_time: E²ROM 01, scan time in 2.048 ms units (15..255; 20 = the board's default 41 ms).
        report: ``"change"`` (a status per change) or ``"scan"`` (a status every scan).
        debounce_scans: with ``report="change"``, let the board debounce 2..5 scans (0 = off); written
            as ``W0204``..``W0207``, the vendor document's mapping (python-mchess's comment is off by one, §9.9).
        poll_s: ask for a status after this much silence.
        watchdog_s: declare the link dead after this much silence.
        reconnect_initial_s: first reconnection delay.
        reconnect_max_s: largest reconnection delay.
    """

    port: str
    baudrate: int = 38400
    scan_time: int = 20
    report: str = "change"
    debounce_scans: int = 0
    poll_s: float = 2.0
    watchdog_s: float = 6.0
    reconnect_initial_s: float = 0.25
    reconnect_max_s: float = 5.0

    def __post_init__(self) -> None:
        if not self.port:
            raise ValueError("port must not be empty")
        if not 15 <= self.scan_time <= 255:
            raise ValueError("scan_time must be 15..255 (units of 2.048 ms)")
        if self.report not in REPORT_MODES:
            raise ValueError(f"report must be one of {sorted(REPORT_MODES)}")
        if self.debounce_scans not in (0, 2, 3, 4, 5):
            raise ValueError("debounce_scans must be 0 or 2..5")
        if self.watchdog_s <= self.poll_s:
            raise ValueError("watchdog_s must be longer than poll_s")

    @property
    def report_mode(self) -> int:
        """The value written to E²ROM address 02."""
        if self.report == "change" and self.debounce_scans:
            return 0x04 + self.debounce_scans - 2
        return REPORT_MODES[self.report]


Options = MillenniumOptions


def create_driver(options: MillenniumOptions, *, time_source: TimeSource = time.monotonic,
                  tap: Tap | None = None) -> MillenniumDriver:
    """Factory used by :func:`drivers.base.open_driver` (and, with *tap*, by ``boardd record``)."""
    return MillenniumDriver(options, time_source=time_source, tap=tap)


class MillenniumDriver(SerialSnapshotDriver):
    """A Millennium ChessLink board (Exclusive, King Performance, eONE, Supreme) on USB serial.

    Args:
        options: port and timing.
        time_source: stamps the events.
        tap: raw traffic observer.
        rng: random source of the backoff jitter.
    """

    def __init__(self, options: MillenniumOptions, *, time_source: TimeSource = time.monotonic,
                 tap: Tap | None = None, rng: random.Random | None = None) -> None:
        super().__init__(family="millennium", port=options.port, baudrate=options.baudrate,
                         decoder=MillenniumDecoder(), poll_s=options.poll_s, watchdog_s=options.watchdog_s,
                         reconnect=ReconnectPolicy(initial=options.reconnect_initial_s,
                                                   maximum=options.reconnect_max_s),
                         time_source=time_source, tap=tap, rng=rng)
        self.options = options
        self.model: str | None = None

    def _hello(self, link: SerialLink) -> None:
        link.write(encode(VersionRequest()) + encode(EepromWrite(0x01, self.options.scan_time))
                   + encode(EepromWrite(0x02, self.options.report_mode)) + encode(StatusRequest()))

    def _poll(self, link: SerialLink) -> None:
        link.write(encode(StatusRequest()))

    def _request_dump(self, link: SerialLink) -> None:
        link.write(encode(StatusRequest()))

    def _reading(self, message: object, at: float) -> tuple[Content, ...] | None:
        if isinstance(message, Version):
            self._version = str(message)
            self.model = message.model
            return None
        if isinstance(message, Status):
            return message.squares()
        return None
