"""``boardd ports``: list candidate board devices, optionally probing them.

Candidates come from pyserial's ``list_ports`` (USB serial adapters, ACM
devices, ``/dev/rfcomm*`` Bluetooth serial ports), with the stable
``/dev/serial/by-id/...`` links that point at them and a guess of the board
family from the USB VID:PID (:data:`KNOWN_USB_IDS`: every id protocols.md
names, §1.1, §5.1, §6.4). A serial id identifies the *adapter chip*, not the
board: an FTDI ``0403:6001`` is what DGT boards use, and also thousands of
other gadgets, so the guess is only a hint. Chessnut boards are USB HID, not
serial ports: they are listed from the USB bus (pyusb) as ``usb:<serial>``,
the port the Chessnut driver takes. The docs name no USB id for the
Millennium ChessLink module, the DGT Smart Board (USB CDC, ``/dev/ttyACM*``)
or the Revelation II's USB port, so those show without a guess.

``--probe`` asks each port, at DGT line settings, for its version and serial
number (``4d``, ``45``, ``55``: read-only requests that change no board mode) and
reports what answered within the timeout. The probe is stateless: it always
closes the port, answered or not (style guide §10.20).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from serial.tools import list_ports

from boardd.core.errors import DriverError
from drivers.dgt.codec import Command, DgtDecoder, LongSerialNr, SerialNr, Version, encode
from drivers.transport import SerialLink

__all__ = ["KNOWN_USB_IDS", "PortCandidate", "ProbeResult", "UsbId", "candidates", "configure_parser",
           "hid_candidates", "probe_dgt", "run"]

_LOGGER = logging.getLogger(__name__)



@dataclass(frozen=True, slots=True)
class UsbId:
    """A documented USB id: vendor, the product ids it covers, the family and an honest label."""

    vid: int
    pids: range
    kind: str
    label: str
    source: str

    def matches(self, vid: int, pid: int | None) -> bool:
        return vid == self.vid and pid is not None and pid in self.pids


#: Every USB id the protocol notes name (protocols.md), with what it really identifies.
KNOWN_USB_IDS: tuple[UsbId, ...] = (
    UsbId(0x0403, range(0x6001, 0x6002), "dgt",
          "DGT e-board? (FTDI FT232R USB serial chip: DGT USB boards, and many other devices)", "protocols.md §1.1"),
    UsbId(0x10C4, range(0xEA60, 0xEA61), "certabo",
          "Certabo? (Silicon Labs CP210x USB serial chip: Certabo boards, and many other devices)",
          "protocols.md §5.1"),
    # The vendor SDK accepts pid & 0xff00 in 0x8000..0x8600 (web drivers use 8001 and 8002).
    UsbId(0x2D80, range(0x8000, 0x8700), "chessnut",
          "Chessnut board (USB HID, vendor 2d80: not a serial port; port = \"usb\" or \"usb:<serial>\")",
          "protocols.md §6.4"),
)

BY_ID = Path("/dev/serial/by-id")

#: How long the probe waits for a long serial number once version and short serial are in.
_LONG_SERIAL_GRACE_S = 0.3


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeResult:
    """What a port answered to the DGT probe."""

    protocol: str
    version: str | None = None
    serial: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PortCandidate:
    """A serial device that could be a board."""

    device: str
    by_id: tuple[str, ...] = ()
    vid: int | None = None
    pid: int | None = None
    serial_number: str | None = None
    description: str = ""
    guess: str | None = None
    guess_text: str = ""
    probe: ProbeResult | None = field(default=None)

    @property
    def usb_id(self) -> str:
        """``vvvv:pppp`` or empty."""
        return f"{self.vid:04x}:{self.pid:04x}" if self.vid is not None and self.pid is not None else ""


def _guess(vid: int | None, pid: int | None, device: str) -> tuple[str | None, str]:
    if vid is not None:
        for known in KNOWN_USB_IDS:
            if known.matches(vid, pid):
                return known.kind, known.label
    if "rfcomm" in device:
        return "dgt", "Bluetooth serial (DGT_BT / Revelation II use SPP)"
    return None, ""


def _by_id_links(directory: Path = BY_ID) -> dict[str, list[str]]:
    links: dict[str, list[str]] = {}
    with contextlib.suppress(OSError):
        for link in sorted(directory.iterdir()):
            with contextlib.suppress(OSError):
                links.setdefault(str(link.resolve()), []).append(str(link))
    return links


def candidates(*, by_id_dir: Path = BY_ID) -> list[PortCandidate]:
    """Serial devices present now, with by-id links and a family guess (no device is opened)."""
    links = _by_id_links(by_id_dir)
    found: list[PortCandidate] = []
    for info in sorted(list_ports.comports(), key=lambda p: p.device):
        device = str(info.device)
        kind, text = _guess(info.vid, info.pid, device)
        found.append(PortCandidate(
            device=device, by_id=tuple(links.get(str(Path(device).resolve()), ())), vid=info.vid, pid=info.pid,
            serial_number=info.serial_number, description=str(info.description or ""), guess=kind, guess_text=text))
    return found


def hid_candidates(*, backend: Any = None) -> list[PortCandidate]:
    """Chessnut boards on the USB bus (HID, invisible to the serial port list); none when pyusb cannot look."""
    try:
        import usb.core  # noqa: PLC0415 - optional here: only Chessnut needs it

        from drivers.chessnut.usb_link import is_chessnut  # noqa: PLC0415
    except ImportError:
        return []
    try:
        devices: Iterable[Any] = list(usb.core.find(find_all=True, backend=backend, custom_match=is_chessnut))
    except (usb.core.NoBackendError, usb.core.USBError) as exc:
        _LOGGER.debug("USB enumeration: %s", exc)
        return []
    found: list[PortCandidate] = []
    for device in devices:
        vid, pid = int(device.idVendor), int(device.idProduct)
        serial_number = product = ""
        with contextlib.suppress(usb.core.USBError, ValueError, NotImplementedError):  # no access to the strings
            serial_number = str(device.serial_number or "")
            product = str(device.product or "")
        kind, text = _guess(vid, pid, "")
        found.append(PortCandidate(device=f"usb:{serial_number}" if serial_number else "usb", vid=vid, pid=pid,
                                   serial_number=serial_number or None, description=product or "USB HID",
                                   guess=kind, guess_text=text))
    return sorted(found, key=lambda c: c.device)


async def probe_dgt(port: str, *, wait: float = 1.0) -> ProbeResult | None:
    """Ask *port* for a DGT version and serial number; ``None`` if nothing DGT-like answered.

    The port is always closed again. Errors opening it count as "no answer".
    """
    try:
        link = await SerialLink.open(port)
    except DriverError as exc:
        _LOGGER.debug("probe %s: %s", port, exc)
        return None
    decoder = DgtDecoder()
    version: str | None = None
    short: str | None = None
    long: str | None = None
    loop = asyncio.get_running_loop()
    end = loop.time() + wait
    try:
        link.write(encode(Command.SEND_VERSION) + encode(Command.RETURN_SERIALNR)
                   + encode(Command.RETURN_LONG_SERIALNR))
        while version is None or long is None:
            remaining = end - loop.time()
            if remaining <= 0:
                break
            try:
                async with asyncio.timeout(remaining):
                    data = await link.read()
            except (TimeoutError, DriverError):
                break
            for message in decoder.feed(data):
                if isinstance(message, Version):
                    version = str(message)
                elif isinstance(message, SerialNr):
                    short = message.text
                elif isinstance(message, LongSerialNr):
                    long = message.text
            if version is not None and short is not None:
                # Older boards have no long serial number: give it a moment, not the whole timeout.
                end = min(end, loop.time() + _LONG_SERIAL_GRACE_S)
    finally:
        await link.close()
    serial = long or short
    if version is None and serial is None:
        return None
    return ProbeResult(protocol="dgt", version=version, serial=serial)


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd ports``."""
    parser.add_argument("--probe", action="store_true", help="ask each port for a DGT version/serial (read-only)")
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds to wait for a probe answer")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("extra", nargs="*", help="more ports or URLs to probe (socket://host:port, ...)")


async def _probe_all(found: list[PortCandidate], wait: float) -> list[PortCandidate]:
    results = await asyncio.gather(*(probe_dgt(c.device, wait=wait) for c in found))
    return [replace(c, probe=r) for c, r in zip(found, results, strict=True)]


def run(args: argparse.Namespace) -> int:
    """``boardd ports``: 0 always (an empty list is an answer), 2 on a usage error."""
    found = candidates()
    found += [PortCandidate(device=port) for port in args.extra]
    if args.probe and found:
        found = asyncio.run(_probe_all(found, args.timeout))
    found += hid_candidates()  # not serial ports: never probed with DGT requests
    if args.json:
        print(json.dumps([{**asdict(c), "usb_id": c.usb_id} for c in found], indent=2))
        return 0
    if not found:
        print("no serial devices found", file=sys.stderr)
        return 0
    print(f"{'DEVICE':<20} {'USB ID':<10} {'GUESS':<9} DESCRIPTION")
    for c in found:
        line = f"{c.device:<20} {c.usb_id or '-':<10} {c.guess or '-':<9} {c.description}"
        if c.guess_text:
            line += f"  [{c.guess_text}]"
        print(line)
        for link in c.by_id:
            print(f"    {link}")
        if args.probe and not c.device.startswith("usb"):
            answer = (f"DGT board, version {c.probe.version or '?'}, serial {c.probe.serial or '?'}"
                      if c.probe else "no DGT answer")
            print(f"    probe: {answer}")
    if not any(c.guess or c.probe for c in found):
        hint = "" if args.probe else ", or try --probe"
        print(f"no board found: no device above is a known board adapter (connect a board, check its cable{hint})")
    return 0
