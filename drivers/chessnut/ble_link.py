"""Chessnut over Bluetooth LE with ``bleak`` (optional extra ``ble``, imported lazily; protocols.md §6.1).

The board's FEN service notifies board frames (``01 24`` + 36 bytes) on
``1b7e8262-…``; the operation service takes commands on ``1b7e8272-…`` and
notifies answers (battery, acks) on ``1b7e8273-…``. Every notification is one
message, queued for :meth:`BleLink.read`. A disconnection (board switched off,
out of range) makes reads and writes raise
:class:`boardd.core.errors.DeviceDisconnectedError`; a missing ``bleak`` is
permanent (:class:`boardd.core.errors.DriverError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable
from typing import Any, Final

from boardd.core.errors import DeviceDisconnectedError, DriverError

__all__ = ["FEN_NOTIFY", "OP_NOTIFY", "OP_WRITE", "BleLink"]

_LOGGER = logging.getLogger(__name__)

FEN_NOTIFY: Final = "1b7e8262-2877-41c3-b46e-cf057c562023"
OP_WRITE: Final = "1b7e8272-2877-41c3-b46e-cf057c562023"
OP_NOTIFY: Final = "1b7e8273-2877-41c3-b46e-cf057c562023"
_GONE: Final = b""


class BleLink:
    """A connected Chessnut board over BLE. Create with :meth:`open`."""

    def __init__(self, client: Any, address: str, *, tap: Callable[[str, bytes], None] | None = None) -> None:
        self._client = client
        self._tap = tap
        self._queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._gone = False
        self.description = f"ble {address}"

    @classmethod
    async def open(cls, address: str, *, connect_timeout: float = 10.0,
                   tap: Callable[[str, bytes], None] | None = None) -> BleLink:
        """Connect to the board at *address* and subscribe to its notifications.

        *tap* (``boardd record``) is called with every notification read (``"rx"``) and command written (``"tx"``).

        Raises:
            DeviceDisconnectedError: the board cannot be reached (off, out of range, busy).
            DriverError: ``bleak`` is not installed.
        """
        try:
            bleak = importlib.import_module("bleak")
        except ImportError as exc:
            raise DriverError(f"Chessnut over BLE needs the 'ble' extra (bleak): {exc}") from exc
        link: BleLink | None = None

        def disconnected(_client: Any) -> None:
            if link is not None:
                link.lost()

        client = bleak.BleakClient(address, disconnected_callback=disconnected, timeout=connect_timeout)
        link = cls(client, address, tap=tap)
        try:
            await client.connect()
            await client.start_notify(FEN_NOTIFY, link._notified)
            await client.start_notify(OP_NOTIFY, link._notified)
        except (OSError, TimeoutError, getattr(bleak.exc, "BleakError", OSError)) as exc:
            with contextlib.suppress(Exception):
                await client.disconnect()
            raise DeviceDisconnectedError(f"cannot connect to Chessnut {address}: {exc}") from exc
        _LOGGER.debug("connected to Chessnut %s over BLE", address)
        return link

    def _notified(self, _characteristic: Any, data: bytearray) -> None:
        self._queue.put_nowait(bytes(data))

    def lost(self) -> None:
        """The connection dropped (bleak's disconnected callback)."""
        self._gone = True
        self._queue.put_nowait(_GONE)

    async def read(self, timeout_ms: int) -> bytes | None:
        """One notification, or ``None`` after *timeout_ms*.

        Raises:
            DeviceDisconnectedError: the board disconnected.
        """
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                data = await self._queue.get()
        except TimeoutError:
            return None
        if data == _GONE:
            self._queue.put_nowait(_GONE)
            raise DeviceDisconnectedError("Chessnut BLE connection lost")
        if self._tap is not None:
            self._tap("rx", data)
        return data

    async def write(self, report: bytes) -> None:
        """Write a command to the operation characteristic.

        Raises:
            DeviceDisconnectedError: the board disconnected.
        """
        if self._gone:
            raise DeviceDisconnectedError("Chessnut BLE connection lost")
        if self._tap is not None:
            self._tap("tx", report)
        try:
            await self._client.write_gatt_char(OP_WRITE, report, response=True)
        except Exception as exc:  # bleak raises its own BleakError, OSError or EOFError here
            raise DeviceDisconnectedError(f"Chessnut BLE write failed: {exc}") from exc

    async def close(self) -> None:
        """Disconnect; never raises."""
        self._gone = True
        with contextlib.suppress(Exception):
            await self._client.disconnect()
