"""The Certabo driver: asyncio adapter over :mod:`drivers.certabo.codec` and :mod:`drivers.transport`.

The board streams full readings by itself, so the driver sends nothing but an
"all LEDs off" frame after opening. Readings become
:class:`~boardd.core.events.BoardSnapshot` events through the calibration; until the
board is calibrated (no calibration file, or a file that does not exist yet) no
snapshot is emitted and, with ``auto_calibrate``, the first ``calibration_samples``
frames of the start position calibrate it (saved to ``calibration`` when a path
is given). Silence longer than ``watchdog_s`` declares the link dead.

Liveness: the board streams its readings by itself (no request exists; the vendor's
simulator sends one line per second, the real rate is undocumented, protocols.md §5),
and every line moves ``last_activity``: no keep-alive is needed or possible. A board
that stays silent for ``watchdog_s`` (5 s) is reopened, each attempt a sign of life.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from boardd.core.errors import ConfigError
from boardd.core.events import Content
from drivers.base import ReconnectPolicy, TimeSource
from drivers.certabo.codec import (
    Calibration,
    CalibrationError,
    Calibrator,
    CertaboDecoder,
    CertaboMapper,
    ChipFrame,
    LedKind,
    OccupancyFrame,
    encode_leds,
)
from drivers.millennium.serial_driver import SerialSnapshotDriver
from drivers.transport import SerialLink, Tap

__all__ = ["CertaboDriver", "CertaboOptions", "Options", "create_driver"]

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class CertaboOptions:
    """Options of the Certabo driver (``[driver.certabo]``).

    Attributes:
        port: device path or URL.
        baudrate: 38400 for the CP210x USB bridge.
        calibration: JSON file of the chip calibration ("" = keep it in memory only).
        auto_calibrate: learn the calibration from the start position when there is none.
        calibration_samples: start-position frames needed to calibrate.
        calibrate_rotated: the board is turned round while calibrating (White on its ranks 7-8).
        history: frames in the per-square majority filter (1 = off).
        watchdog_s: declare the link dead after this much silence.
        reconnect_initial_s: first reconnection delay.
        reconnect_max_s: largest reconnection delay.
    """

    port: str
    baudrate: int = 38400
    calibration: str = ""
    auto_calibrate: bool = True
    calibration_samples: int = 7
    calibrate_rotated: bool = False
    history: int = 3
    watchdog_s: float = 5.0
    reconnect_initial_s: float = 0.25
    reconnect_max_s: float = 5.0

    def __post_init__(self) -> None:
        if not self.port:
            raise ValueError("port must not be empty")
        if self.calibration_samples < 1 or self.history < 1:
            raise ValueError("calibration_samples and history must be >= 1")


Options = CertaboOptions


def create_driver(options: CertaboOptions, *, time_source: TimeSource = time.monotonic,
                  tap: Tap | None = None) -> CertaboDriver:
    """Factory used by :func:`drivers.base.open_driver` (and, with *tap*, by ``boardd record``)."""
    return CertaboDriver(options, time_source=time_source, tap=tap)


class CertaboDriver(SerialSnapshotDriver):
    """A Certabo RFID board (or a Tabutronic Sentio, occupancy only) on USB serial.

    Args:
        options: port, calibration and timing.
        time_source: stamps the events.
        tap: raw traffic observer.
        rng: random source of the backoff jitter.
        calibration: a calibration to use instead of the file (tests, tools).

    Raises:
        ConfigError: the calibration file exists but cannot be read.
    """

    def __init__(self, options: CertaboOptions, *, time_source: TimeSource = time.monotonic,
                 tap: Tap | None = None, rng: random.Random | None = None,
                 calibration: Calibration | None = None) -> None:
        super().__init__(family="certabo", port=options.port, baudrate=options.baudrate, decoder=CertaboDecoder(),
                         poll_s=0.0, watchdog_s=options.watchdog_s,
                         reconnect=ReconnectPolicy(initial=options.reconnect_initial_s,
                                                   maximum=options.reconnect_max_s),
                         time_source=time_source, tap=tap, rng=rng)
        self.options = options
        if calibration is None and options.calibration and Path(options.calibration).exists():
            try:
                calibration = Calibration.load(Path(options.calibration))
            except CalibrationError as exc:
                raise ConfigError(str(exc), key="driver.certabo.calibration") from exc
        calibrator = (Calibrator(samples=options.calibration_samples, rotated=options.calibrate_rotated)
                      if options.auto_calibrate else None)
        self.mapper = CertaboMapper(calibration, history=options.history, calibrator=calibrator)
        self.rgb_leds: bool | None = None

    @property
    def counters(self) -> Counter[str]:
        """Driver, decoder and mapper counters."""
        total = super().counters
        total.update(self.mapper.stats)
        return total

    def _hello(self, link: SerialLink) -> None:
        link.write(encode_leds([]))

    def _link_lost(self) -> None:
        self.mapper.reset()

    def _reading(self, message: object, at: float) -> tuple[Content, ...] | None:
        if isinstance(message, LedKind):
            self.rgb_leds = message.rgb
            return None
        if not isinstance(message, (ChipFrame, OccupancyFrame)):
            return None
        was_calibrated = self.mapper.calibration is not None
        squares = self.mapper.squares(message)
        if not was_calibrated and self.mapper.calibration is not None and self.options.calibration:
            try:
                self.mapper.calibration.dump(Path(self.options.calibration))
            except OSError as exc:
                self.stats["calibration_save_errors"] += 1
                _LOGGER.warning("Certabo calibration not saved to %s: %s", self.options.calibration, exc)
        return squares
