"""A Chessnut board behind an emulated USB bus: a pyusb backend standing in for the device (protocols.md §6).

:class:`ChessnutUsbEmulator` is a ``usb.backend.IBackend``: ``usb.core.find(backend=emu.backend)``
enumerates one HID device (VID ``0x2d80``, PID ``0x8002`` by default) with an interrupt IN and
(optionally) an interrupt OUT endpoint, string descriptors, and a kernel driver bound to its
interface, so the driver's real pyusb code runs against it. The device behaves as §6 and
the §9 emulator checklist describe it:

* after ``21 01 00`` (real-time mode) it sends a board frame (``01 3d`` + 32 bytes, padded
  to 64) every scan -- identical frames repeated while nothing changes; ``21 01 01`` stops;
* ``29 01 00`` is answered with ``2a 02 <percent> <charging>``; ``0a 08`` + 8 bytes sets the
  LEDs; beeps and unknown ``0x27``/``0x31`` commands are accepted and ignored (counted);
* :meth:`unplug` makes the device vanish (reads fail with ``ENODEV``, enumeration finds
  nothing), :meth:`replug` brings it back in its power-up state (not streaming).

:meth:`ChessnutUsbEmulator.bleak_module` gives a stand-in for ``bleak`` through which the same
board is reached over "BLE" (38-byte ``01 24`` notifications, commands on the operation
characteristic).

The physical board and the scripting API (:meth:`lift`, :meth:`place`, :meth:`move`,
:meth:`play`, :meth:`wait_scan`) are those of the other emulators.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import queue
import threading
import time
import types
from typing import Any

import chess
import usb.backend
import usb.core

from drivers.base import TimeSource
from drivers.chessnut.ble_link import FEN_NOTIFY, OP_NOTIFY, OP_WRITE
from drivers.chessnut.codec import encode_battery, encode_frame
from drivers.millennium.pty_emulator import PtyBoardEmulator

__all__ = ["ChessnutUsbEmulator"]

_ENODEV = 19
_GONE = object()


class _Descriptor:
    """A descriptor as pyusb backends return them: attributes, 0 for the ones not given."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __getattr__(self, name: str) -> Any:
        if name == "extra_descriptors":
            return []
        if name.startswith("__"):
            raise AttributeError(name)
        return 0


class _Handle:
    def __init__(self, generation: int) -> None:
        self.generation = generation


class _Backend(usb.backend.IBackend):  # type: ignore[misc]
    """The pyusb side of the emulator (called from the driver's worker threads)."""

    def __init__(self, emulator: ChessnutUsbEmulator) -> None:
        self.emu = emulator

    # enumeration and descriptors
    def enumerate_devices(self) -> Any:
        if self.emu.plugged:
            yield self.emu.generation

    def get_device_descriptor(self, dev: Any) -> _Descriptor:
        return _Descriptor(bLength=18, bDescriptorType=1, bcdUSB=0x0200, bMaxPacketSize0=64, idVendor=0x2D80,
                           idProduct=self.emu.pid, bcdDevice=0x0100, iManufacturer=1, iProduct=2, iSerialNumber=3,
                           bNumConfigurations=1, address=7, bus=1, port_number=2, port_numbers=(2,), speed=2)

    def get_configuration_descriptor(self, dev: Any, config: int) -> _Descriptor:
        return _Descriptor(bLength=9, bDescriptorType=2, wTotalLength=41, bNumInterfaces=1, bConfigurationValue=1,
                           bmAttributes=0x80, bMaxPower=50)

    def get_interface_descriptor(self, dev: Any, intf: int, alt: int, config: int) -> _Descriptor:
        if intf != 0 or alt != 0:
            raise IndexError("no such interface")
        return _Descriptor(bLength=9, bDescriptorType=4, bInterfaceNumber=0, bAlternateSetting=0,
                           bNumEndpoints=2 if self.emu.interrupt_out else 1, bInterfaceClass=3)

    def get_endpoint_descriptor(self, dev: Any, ep: int, intf: int, alt: int, config: int) -> _Descriptor:
        if ep == 0:
            return _Descriptor(bLength=7, bDescriptorType=5, bEndpointAddress=0x81, bmAttributes=3,
                               wMaxPacketSize=64, bInterval=1)
        if ep == 1 and self.emu.interrupt_out:
            return _Descriptor(bLength=7, bDescriptorType=5, bEndpointAddress=0x02, bmAttributes=3,
                               wMaxPacketSize=64, bInterval=1)
        raise IndexError("no such endpoint")

    # handles
    def _check(self, handle: _Handle) -> None:
        if not self.emu.plugged or handle.generation != self.emu.generation:
            raise usb.core.USBError("No such device (it may have been disconnected)", error_code=-4, errno=_ENODEV)

    def open_device(self, dev: Any) -> _Handle:
        handle = _Handle(dev)
        self._check(handle)
        self.emu.stats["opens"] += 1
        return handle

    def close_device(self, dev_handle: _Handle) -> None:
        self.emu.stats["closes"] += 1

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        self._check(dev_handle)

    def get_configuration(self, dev_handle: _Handle) -> int:
        self._check(dev_handle)
        return 1

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        self._check(dev_handle)

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._check(dev_handle)
        self.emu.stats["claims"] += 1

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        self.emu.stats["releases"] += 1

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        return self.emu.kernel_driver

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        self.emu.kernel_driver = False
        self.emu.stats["kernel_detaches"] += 1

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        self.emu.kernel_driver = True

    # transfers
    def intr_write(self, dev_handle: _Handle, ep: int, intf: int, data: Any, timeout: int) -> int:
        self._check(dev_handle)
        self.emu.host_report(bytes(data))
        return len(data)

    def intr_read(self, dev_handle: _Handle, ep: int, intf: int, buff: Any, timeout: int) -> int:
        self._check(dev_handle)
        try:
            report = self.emu.reports.get(timeout=(timeout or 1000) / 1000)
        except queue.Empty:
            raise usb.core.USBTimeoutError("Operation timed out", error_code=-7, errno=110) from None
        if report is _GONE:
            raise usb.core.USBError("No such device (it may have been disconnected)", error_code=-4, errno=_ENODEV)
        size = min(len(report), len(buff))
        buff[:size] = array.array("B", report[:size])
        return size

    def ctrl_transfer(self, dev_handle: _Handle, bmRequestType: int, bRequest: int, wValue: int,  # noqa: PLR0917
                      wIndex: int, data: Any, timeout: int) -> int:
        self._check(dev_handle)
        if bmRequestType == 0x21 and bRequest == 0x09:  # HID SET_REPORT (no interrupt OUT endpoint)
            self.emu.host_report(bytes(data))
            return len(data)
        if bmRequestType == 0x80 and bRequest == 0x06 and wValue >> 8 == 3:  # string descriptor
            index = wValue & 0xFF
            if index == 0:
                raw = bytes((4, 3, 0x09, 0x04))
            else:
                text = {1: "Chessnut", 2: "Chessnut Air", 3: self.emu.serial}.get(index, "")
                encoded = text.encode("utf-16-le")
                raw = bytes((2 + len(encoded), 3)) + encoded
            size = min(len(raw), len(data))
            data[:size] = array.array("B", raw[:size])
            return size
        raise usb.core.USBError("Pipe error", error_code=-9, errno=32)


class ChessnutUsbEmulator(PtyBoardEmulator):
    """A Chessnut board on an emulated USB bus. Use as ``async with ChessnutUsbEmulator() as emu:``.

    Args:
        scan_interval: seconds between frames while in real-time mode (the rate is undocumented).
        pid: USB product id.
        serial: USB serial number string.
        interrupt_out: the interface has an interrupt OUT endpoint (else commands come as SET_REPORT).
        fen: initial placement.
        seed: random seed.
        battery: (percent, charging).
        time_source: time line.
    """

    def __init__(self, *, scan_interval: float | tuple[float, float] = 0.2, pid: int = 0x8002,
                 serial: str = "CN0001", interrupt_out: bool = True, fen: str = chess.STARTING_BOARD_FEN,
                 seed: int = 0, battery: tuple[int, bool] = (87, False),
                 time_source: TimeSource = time.monotonic) -> None:
        super().__init__(scan_interval=scan_interval, seed=seed, fen=fen, time_source=time_source)
        self.pid = pid
        self.serial = serial
        self.interrupt_out = interrupt_out
        self.battery = battery
        self.backend = _Backend(self)
        self.reports: queue.Queue[Any] = queue.Queue()
        self.received: list[bytes] = []
        self.leds = bytes(8)
        self.kernel_driver = True
        self.realtime = False
        self.generation = 0
        self._present = False
        self._lock = threading.Lock()
        #: Frames are BLE notifications (set by :meth:`bleak_module`).
        self.ble = False

    # USB presence instead of a pty
    @property
    def plugged(self) -> bool:
        """The device is on the bus."""
        return self._present

    def _open_pty(self) -> None:
        self.generation += 1
        self.reports = queue.Queue()
        self.realtime = False
        self.kernel_driver = True
        self._present = True
        self._host_seen.clear()

    def _close_pty(self) -> None:
        if self._present:
            self._present = False
            self.reports.put(_GONE)  # wakes a read in flight with ENODEV

    def write(self, data: bytes) -> None:
        """Queue an input report for the host (none while :attr:`hung`: the board is there but silent)."""
        if self._present and not self.hung:
            for hook in self.on_write:
                hook(data)
            self.reports.put(data)

    def host_report(self, report: bytes) -> None:
        """An output report from the host (called from its worker thread)."""
        with self._lock:
            self.received.append(report)
        self._host_seen_threadsafe()
        kind = report[:1]
        if report[:3] == b"\x21\x01\x00":
            self.realtime = True
        elif report[:3] == b"\x21\x01\x01":
            self.realtime = False
        elif report[:3] == b"\x29\x01\x00":
            battery = encode_battery(*self.battery)
            self.write(battery if self.ble else battery.ljust(64, b"\0"))
        elif kind == b"\x0a" and len(report) >= 10 and report[1] == 0x08:
            self.leds = report[2:10]
        else:
            self.stats["ignored_commands"] += 1

    def _host_seen_threadsafe(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._host_seen.set)

    def _scan(self) -> None:
        if self.realtime:
            self.write(encode_frame(self.physical, usb=not self.ble, uptime=self._scans))
            self.stats["frames"] += 1

    # --- BLE -----------------------------------------------------------------------------

    def bleak_module(self) -> types.ModuleType:
        """A stand-in for the ``bleak`` package whose ``BleakClient`` talks to this board over "BLE".

        Frames are then the 38-byte BLE notifications (``01 24`` ...); :meth:`unplug` is the
        board switched off (the connection drops, connecting fails until :meth:`replug`).
        """
        self.ble = True
        emulator = self

        class BleakError(Exception):
            pass

        class BleakClient:
            def __init__(self, address: str, *, disconnected_callback: Any = None, timeout: float = 10.0) -> None:
                self.address = address
                self._on_disconnect = disconnected_callback
                self._callbacks: dict[str, Any] = {}
                self._pump: asyncio.Task[None] | None = None
                self._generation = -1

            async def connect(self) -> None:
                if not emulator.plugged or self.address != emulator.serial:
                    raise BleakError(f"Device with address {self.address} was not found")
                self._generation = emulator.generation
                emulator.stats["ble_connects"] += 1
                self._pump = asyncio.create_task(self._notify())

            async def _notify(self) -> None:
                while emulator.plugged and emulator.generation == self._generation:
                    try:
                        data = emulator.reports.get_nowait()
                    except queue.Empty:
                        await asyncio.sleep(0.002)
                        continue
                    if data is _GONE:
                        break
                    char = FEN_NOTIFY if data[:1] == b"\x01" else OP_NOTIFY
                    callback = self._callbacks.get(char)
                    if callback is not None:
                        callback(char, bytearray(data))
                if self._on_disconnect is not None:
                    self._on_disconnect(self)

            async def start_notify(self, char: str, callback: Any) -> None:
                self._callbacks[char] = callback

            async def write_gatt_char(self, char: str, data: bytes, response: bool = False) -> None:
                if not emulator.plugged or emulator.generation != self._generation:
                    raise BleakError("Not connected")
                if char != OP_WRITE:
                    raise BleakError(f"characteristic {char} is not writable")
                emulator.host_report(bytes(data))

            async def disconnect(self) -> None:
                if self._pump is not None:
                    self._pump.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await self._pump

        module = types.ModuleType("bleak")
        module.BleakClient = BleakClient  # type: ignore[attr-defined]
        module.exc = types.SimpleNamespace(BleakError=BleakError)  # type: ignore[attr-defined]
        return module
