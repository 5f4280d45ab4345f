"""The I²C bus seen by the DGT 3000 driver, and its Raspberry Pi implementation (optional extra ``i2c``).

The DGT 3000 is a multi-master device (§2.1): the host writes commands to the
clock's address as a master, and the clock writes its packets to the host's
*slave* addresses (general call 0x00, and 0x10 for acks). :class:`I2CBus` is
that view: blocking :meth:`~I2CBus.write` (False when nobody acknowledged the
address: the clock sleeps or is absent) and :meth:`~I2CBus.receive` (the next
packet written to us, dest byte included, or ``None`` after *timeout*). The
driver calls both from a worker thread. Tests use the emulated bus in
:mod:`drivers.dgt3000_i2c.emulator`.

:class:`PiI2CBus` is the DGT Pi wiring: master writes through the kernel's
``/dev/i2c-N`` with ``smbus2`` and slave reception through the Pi's BSC slave
peripheral with ``pigpio`` (``bsc_i2c``), both imported lazily. It has not been
run against hardware by this project; ``smbus2``/``pigpio`` are optional. The BSC
peripheral listens on one address at a time: dgtpicom switches it between the general
call (0x00, Time/Button packets) and 0x10 (acks); this class listens on the one given.
"""

from __future__ import annotations

import errno
import importlib
import logging
import time
from typing import Any, Protocol

from boardd.core.errors import DeviceDisconnectedError, DriverError

__all__ = ["I2CBus", "PiI2CBus"]

_LOGGER = logging.getLogger(__name__)


class I2CBus(Protocol):
    """A blocking I²C bus with a master and a slave side."""

    def write(self, address: int, data: bytes) -> bool:
        """Master-write *data* (the bytes after the address) to 7-bit *address*; False on NACK.

        Raises:
            DeviceDisconnectedError: the bus itself failed (not just a NACK).
        """
        ...

    def receive(self, timeout: float) -> bytes | None:
        """The next packet written to the host's slave addresses (dest byte first), or ``None``."""
        ...

    def close(self) -> None:
        """Release the bus."""
        ...


class PiI2CBus:
    """DGT Pi: master on ``/dev/i2c-<bus>`` (smbus2), slave on the BSC peripheral (pigpio).

    Args:
        bus: I²C bus number of the master (1 on a Pi).
        slave_address: 7-bit slave address the host listens on for acks (0x10).

    Raises:
        DriverError: ``smbus2`` or ``pigpio`` is not installed, or the pigpio daemon is not running.
        DeviceDisconnectedError: the bus device cannot be opened.
    """

    def __init__(self, bus: int = 1, slave_address: int = 0x10) -> None:
        try:  # optional extras, imported only on a Pi
            smbus2 = importlib.import_module("smbus2")
            pigpio = importlib.import_module("pigpio")
        except ImportError as exc:
            raise DriverError(f"DGT 3000 on I²C needs the 'i2c' extra (smbus2, pigpio): {exc}") from exc
        self._smbus2: Any = smbus2
        try:
            self._master: Any = smbus2.SMBus(bus)
        except OSError as exc:
            raise DeviceDisconnectedError(f"cannot open /dev/i2c-{bus}: {exc}") from exc
        self._pi: Any = pigpio.pi()
        if not self._pi.connected:
            raise DriverError("pigpio daemon not running (needed for the I²C slave side)")
        # BSC control: address << 16 | enable I2C (0x004) | enable transmit/receive (0x300) | BSC on (0x001).
        self._control = (slave_address << 16) | 0x305
        self._pi.bsc_i2c(slave_address)
        self._dest = slave_address << 1
        self._pending = bytearray()

    def write(self, address: int, data: bytes) -> bool:
        """Master write; an unanswered address is a NACK (``EREMOTEIO``/``ENXIO``), not an error."""
        message = self._smbus2.i2c_msg.write(address, data)
        try:
            self._master.i2c_rdwr(message)
        except OSError as exc:
            if exc.errno in (errno.EREMOTEIO, errno.ENXIO, errno.EIO):
                return False
            raise DeviceDisconnectedError(f"I²C write failed: {exc}") from exc
        return True

    def receive(self, timeout: float) -> bytes | None:
        """Poll the BSC FIFO every 2 ms for up to *timeout*; one packet per call (by its length byte)."""
        deadline = time.monotonic() + timeout
        while True:
            _status, count, data = self._pi.bsc_xfer(self._control, [])
            if count > 0:
                self._pending += bytes(data)
            # The BSC slave strips the address: put back the dest byte the clock addressed.
            if len(self._pending) >= 2 and len(self._pending) >= self._pending[1] - 1:
                length = self._pending[1] - 1
                packet, self._pending = bytes(self._pending[:length]), self._pending[length:]
                return bytes((self._dest,)) + packet
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.002)

    def close(self) -> None:
        """Stop the BSC slave and close the master device."""
        try:
            self._pi.bsc_close()
            self._pi.stop()
        finally:
            self._master.close()
