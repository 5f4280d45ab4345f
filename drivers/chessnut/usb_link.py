"""Blocking USB HID access to a Chessnut board through pyusb (protocols.md §6.4).

Every call here blocks; the driver runs them in ``asyncio.to_thread``. A board is
found by VID ``0x2d80`` and a PID whose high byte is ``0x80``..``0x86`` (the vendor
SDK's rule). The interface with an interrupt IN endpoint is claimed (the kernel's
``usbhid`` driver is detached first when it holds it). Reports go out on the
interrupt OUT endpoint when there is one, else as HID SET_REPORT control
transfers; the first byte of a command is the report id.

A device that went away makes every call raise
:class:`boardd.core.errors.DeviceDisconnectedError`; a read that times out returns
``None``. A missing libusb (no pyusb backend) is permanent:
:class:`boardd.core.errors.DriverError`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Final

import usb.core
import usb.util

from boardd.core.errors import DeviceDisconnectedError, DriverError

__all__ = ["CHESSNUT_VID", "HidLink", "is_chessnut"]

_LOGGER = logging.getLogger(__name__)

CHESSNUT_VID: Final = 0x2D80
_PID_FAMILIES: Final = frozenset(range(0x8000, 0x8700, 0x100))
#: HID class request SET_REPORT, output report.
_SET_REPORT: Final = 0x09
_OUTPUT_REPORT: Final = 0x0200


def is_chessnut(device: Any) -> bool:
    """The vendor SDK's test: VID 0x2d80 and ``pid & 0xff00`` in 0x8000..0x8600."""
    return bool(device.idVendor == CHESSNUT_VID and (device.idProduct & 0xFF00) in _PID_FAMILIES)


class HidLink:
    """An open Chessnut HID interface. Create with :meth:`open`."""

    def __init__(self, device: Any, interface: int, ep_in: Any, ep_out: Any | None) -> None:
        self.device = device
        self.interface = interface
        self._ep_in = ep_in
        self._ep_out = ep_out
        self._lock = threading.Lock()  # close() waits for a read in flight
        self._closed = False
        self.description = f"usb {device.idVendor:04x}:{device.idProduct:04x}"

    @classmethod
    def open(cls, *, backend: Any = None, serial: str = "") -> HidLink:
        """Find and claim the first Chessnut board (or the one with *serial*).

        Raises:
            DeviceDisconnectedError: no board is plugged in, or it went away while opening.
            DriverError: pyusb has no backend (libusb missing).
        """
        try:
            devices = list(usb.core.find(find_all=True, backend=backend, custom_match=is_chessnut))
        except usb.core.NoBackendError as exc:
            raise DriverError(f"pyusb has no backend (install libusb): {exc}") from exc
        except usb.core.USBError as exc:
            raise DeviceDisconnectedError(f"USB enumeration failed: {exc}") from exc
        if serial:
            devices = [d for d in devices if _serial_of(d) == serial]
        if not devices:
            raise DeviceDisconnectedError("no Chessnut board on USB" + (f" with serial {serial}" if serial else ""))
        device = devices[0]
        try:
            with contextlib.suppress(usb.core.USBError):  # already configured by the kernel
                device.set_configuration()
            config = device.get_active_configuration()
            for intf in config:
                ep_in = usb.util.find_descriptor(intf, custom_match=lambda e: _is_interrupt(e, usb.util.ENDPOINT_IN))
                if ep_in is None:
                    continue
                ep_out = usb.util.find_descriptor(intf,
                                                  custom_match=lambda e: _is_interrupt(e, usb.util.ENDPOINT_OUT))
                number = intf.bInterfaceNumber
                with contextlib.suppress(NotImplementedError, usb.core.USBError):
                    if device.is_kernel_driver_active(number):
                        device.detach_kernel_driver(number)
                usb.util.claim_interface(device, number)
                link = cls(device, number, ep_in, ep_out)
                _LOGGER.debug("opened Chessnut %s interface %d", link.description, number)
                return link
        except usb.core.USBError as exc:
            raise DeviceDisconnectedError(f"cannot open Chessnut board: {exc}") from exc
        raise DeviceDisconnectedError("Chessnut board has no HID interrupt endpoint")

    def read(self, timeout_ms: int) -> bytes | None:
        """One input report, or ``None`` when none came within *timeout_ms*.

        Raises:
            DeviceDisconnectedError: the board went away or the link is closed.
        """
        with self._lock:
            if self._closed:
                raise DeviceDisconnectedError("Chessnut link closed")
            try:
                data = self._ep_in.read(self._ep_in.wMaxPacketSize, timeout=timeout_ms)
            except usb.core.USBTimeoutError:
                return None
            except usb.core.USBError as exc:
                if exc.errno == 110:  # ETIMEDOUT from backends that do not raise USBTimeoutError
                    return None
                raise DeviceDisconnectedError(f"Chessnut board went away: {exc}") from exc
        return bytes(data)

    def write(self, report: bytes, timeout_ms: int = 500) -> None:
        """Send one output report (first byte = report id).

        Raises:
            DeviceDisconnectedError: the board went away or the link is closed.
        """
        if self._closed:
            raise DeviceDisconnectedError("Chessnut link closed")
        try:
            if self._ep_out is not None:
                self._ep_out.write(report, timeout=timeout_ms)
            else:
                self.device.ctrl_transfer(0x21, _SET_REPORT, _OUTPUT_REPORT | report[0], self.interface, report,
                                          timeout=timeout_ms)
        except usb.core.USBError as exc:
            raise DeviceDisconnectedError(f"Chessnut write failed: {exc}") from exc

    def close(self) -> None:
        """Release the interface; idempotent, never raises."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(Exception):
                usb.util.release_interface(self.device, self.interface)
            with contextlib.suppress(Exception):
                usb.util.dispose_resources(self.device)


def _is_interrupt(endpoint: Any, direction: int) -> bool:
    return bool(usb.util.endpoint_direction(endpoint.bEndpointAddress) == direction
                and usb.util.endpoint_type(endpoint.bmAttributes) == usb.util.ENDPOINT_TYPE_INTR)


def _serial_of(device: Any) -> str:
    try:
        return str(device.serial_number or "")
    except (usb.core.USBError, ValueError, NotImplementedError):
        return ""
