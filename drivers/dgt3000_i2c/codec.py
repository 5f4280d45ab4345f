"""Pure codec of the DGT 3000 clock on I²C (DGT Pi; protocols.md §2): packets <-> typed messages.

Theory of operation
-------------------
Both directions use the same packet::

    [dest address byte] [src address byte] [length] [type] [data ...] [CRC-8]

``length`` counts every byte, dest and CRC included; the CRC is CRC-8 with
polynomial 0x07 and initial value 0 over all bytes before it (§2.2). The host's
source byte is ``0x20``, the clock's ``0x10``. The clock writes its packets to
the host's slave addresses: general call (dest ``0x00``: Hello, Time, Button,
display acks) and ``0x10`` (dest ``0x20``: command acks).

On the bus every packet is one transaction, so :meth:`Dgt3000Decoder.feed_packet`
decodes one packet on its own (rejections counted, never raised). Captures store
packets back to back; :meth:`Dgt3000Decoder.feed` frames them by the length byte
and the CRC, dropping one byte and trying again when they do not check out.

Host commands (:class:`Wake`, :class:`SetCentralControl`, :class:`ChangeState`,
:class:`SetAndRun`, :class:`Display`, :class:`EndDisplay`, :class:`PowerOff`) are
written by :func:`encode` and read back by :func:`decode_command` (the emulator's
side). Set-and-run carries minutes and seconds in BCD (§2.3, §9.4). Nothing here
does I/O.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import Final, TypeAlias

from boardd.core.errors import ProtocolError
from drivers._codec import TRACE, BufferedDecoder

__all__ = [
    "CLOCK_ADDRESS",
    "HOST_ACK_DEST",
    "HOST_SRC",
    "TRACE",
    "WAKE_ADDRESS",
    "Ack",
    "Button",
    "ChangeState",
    "ClockSrcError",
    "CrcError",
    "Dgt3000Decoder",
    "Dgt3000Message",
    "Dgt3000ProtocolError",
    "Display",
    "EndDisplay",
    "Hello",
    "HostCommand",
    "PacketType",
    "PowerOff",
    "SetAndRun",
    "SetCentralControl",
    "Time",
    "UnknownPacket",
    "Wake",
    "crc8",
    "decode_command",
    "decode_packet",
    "encode",
    "encode_message",
    "packet",
]

_LOGGER = logging.getLogger(__name__)

#: 7-bit I²C address of the clock (address byte 0x10).
CLOCK_ADDRESS: Final = 0x08
#: 7-bit address wake-up pings go to (address byte 0x50).
WAKE_ADDRESS: Final = 0x28
#: Source byte of host packets, and the dest byte of acks to the host (its slave address 0x10).
HOST_SRC: Final = 0x20
HOST_ACK_DEST: Final = 0x20
#: Source byte of clock packets.
CLOCK_SRC: Final = 0x10

#: Button state bits (§2.4): back, minus, play/pause, plus, forward, on/off, lever.
BUTTON_BACK, BUTTON_MINUS, BUTTON_PLAY, BUTTON_PLUS, BUTTON_FORWARD, BUTTON_ONOFF, BUTTON_LEVER = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40)


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
        table.append(crc)
    return tuple(table)


_CRC_TABLE: Final = _crc_table()


def crc8(data: bytes) -> int:
    """CRC-8/ATM (poly 0x07, init 0) of *data*.

    >>> hex(crc8(bytes.fromhex("10 20 05 0f")))
    '0x48'
    """
    crc = 0
    for byte in data:
        crc = _CRC_TABLE[crc ^ byte]
    return crc


class PacketType(enum.IntEnum):
    """Packet type codes (§2.2)."""

    ACK = 1
    HELLO = 2
    DEBUG = 3
    TIME = 4
    BUTTON = 5
    DISPLAY = 6
    END_DISPLAY = 7
    SET_AND_RUN = 10
    CHANGE_STATE = 11
    PING = 13
    SET_CENTRAL_CONTROL = 15


class Dgt3000ProtocolError(ProtocolError):
    """Bytes on the I²C bus did not follow the DGT 3000 protocol."""


class CrcError(Dgt3000ProtocolError):
    """The CRC-8 does not match."""


class ClockSrcError(Dgt3000ProtocolError):
    """A packet the host received does not come from the clock (source byte != 0x10)."""


def packet(dest: int, src: int, kind: int, data: bytes = b"") -> bytes:
    """Frame a packet: length and CRC added."""
    head = bytes((dest, src, len(data) + 5, kind)) + data
    return head + bytes((crc8(head),))


# --- clock -> host ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ack:
    """The clock acknowledges command *command* with *status* (0x08 = positive for most commands)."""

    command: int
    status: int
    broadcast: bool = False


@dataclass(frozen=True, slots=True)
class Hello:
    """The clock announces itself (after a wake ping or being switched on)."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Time:
    """The times shown (seconds), the lever state bit, and the "no update" echo flag."""

    left_s: int
    right_s: int
    lever: bool
    no_update: bool = False


@dataclass(frozen=True, slots=True)
class Button:
    """Button/lever state now and before (bits ``BUTTON_*``)."""

    current: int
    previous: int

    @property
    def pressed(self) -> int:
        """Bits that went from released to pressed (lever excluded)."""
        return self.current & ~self.previous & ~BUTTON_LEVER & 0xFF

    @property
    def lever_changed(self) -> bool:
        """The lever moved."""
        return bool((self.current ^ self.previous) & BUTTON_LEVER)


@dataclass(frozen=True, slots=True)
class UnknownPacket:
    """A checked packet of a type this codec does not interpret."""

    kind: int
    data: bytes


Dgt3000Message: TypeAlias = Ack | Hello | Time | Button | UnknownPacket


def _bcd(value: int, what: str, raw: bytes) -> int:
    high, low = value >> 4, value & 0x0F
    if high > 5 or low > 9:
        raise Dgt3000ProtocolError(f"{what} 0x{value:02x} is not BCD 00..59", raw=raw)
    return high * 10 + low


def _to_bcd(value: int) -> int:
    return (value // 10) << 4 | value % 10


def decode_packet(data: bytes) -> Dgt3000Message:
    """Decode one received packet (dest byte included).

    Raises:
        CrcError: the CRC does not match.
        ClockSrcError: the source byte is not the clock's.
        Dgt3000ProtocolError: too short, length byte wrong, or a field out of range.
    """
    if len(data) < 5:
        raise Dgt3000ProtocolError(f"a packet has at least 5 bytes, got {len(data)}", raw=data)
    if data[2] != len(data):
        raise Dgt3000ProtocolError(f"length byte {data[2]} but {len(data)} bytes", raw=data)
    if crc8(data[:-1]) != data[-1]:
        raise CrcError(f"CRC 0x{data[-1]:02x} != 0x{crc8(data[:-1]):02x}", raw=data)
    if data[1] != CLOCK_SRC:
        raise ClockSrcError(f"source 0x{data[1]:02x} is not the clock", raw=data)
    kind, body = data[3], data[4:-1]
    match kind:
        case PacketType.ACK:
            if len(body) < 2:
                raise Dgt3000ProtocolError("an ack has 2 data bytes", raw=data)
            return Ack(body[0], body[1], broadcast=data[0] == 0x00)
        case PacketType.HELLO:
            return Hello(bytes(body))
        case PacketType.TIME:
            if len(data) != 24:
                raise Dgt3000ProtocolError(f"a time packet has 24 bytes, got {len(data)}", raw=data)
            left = (data[5] & 0x0F) * 3600 + _bcd(data[6], "minutes", data) * 60 + _bcd(data[7], "seconds", data)
            right = (data[11] & 0x0F) * 3600 + _bcd(data[12], "minutes", data) * 60 + _bcd(data[13], "seconds", data)
            if data[5] & 0x0F > 9 or data[11] & 0x0F > 9:
                raise Dgt3000ProtocolError("hours > 9", raw=data)
            return Time(left, right, lever=bool(data[19] & 1), no_update=data[20] == 1)
        case PacketType.BUTTON:
            if len(body) < 2:
                raise Dgt3000ProtocolError("a button packet has 2 data bytes", raw=data)
            return Button(body[0], body[1])
        case _:
            return UnknownPacket(kind, bytes(body))


def encode_message(message: Dgt3000Message) -> bytes:
    """The packet the clock writes for *message* (the emulator's side)."""
    match message:
        case Ack(command=command, status=status, broadcast=broadcast):
            return packet(0x00 if broadcast else HOST_ACK_DEST, CLOCK_SRC, PacketType.ACK, bytes((command, status)))
        case Hello(data=data):
            return packet(0x00, CLOCK_SRC, PacketType.HELLO, data)
        case Time(left_s=left, right_s=right, lever=lever, no_update=no_update):
            body = bytearray(19)
            for offset, seconds in ((1, left), (7, right)):  # body offset = packet offset - 4
                hours, rest = divmod(seconds, 3600)
                body[offset] = hours
                body[offset + 1] = _to_bcd(rest // 60)
                body[offset + 2] = _to_bcd(rest % 60)
            body[15] = 1 if lever else 0
            body[16] = 1 if no_update else 0
            return packet(0x00, CLOCK_SRC, PacketType.TIME, bytes(body))
        case Button(current=current, previous=previous):
            return packet(0x00, CLOCK_SRC, PacketType.BUTTON, bytes((current, previous)))
        case UnknownPacket(kind=kind, data=data):
            return packet(0x00, CLOCK_SRC, kind, data)
    raise TypeError(f"not a DGT 3000 message: {message!r}")  # pragma: no cover


class Dgt3000Decoder(BufferedDecoder):
    """Decoder of received packets and captured packet streams; survives any input.

    ``stats`` counts ``messages``, ``bad_crc``, ``invalid_packets``, ``discarded_bytes``
    and ``unknown_packets``.
    """

    _logger = _LOGGER

    def _count(self, message: Dgt3000Message) -> Dgt3000Message:
        self.stats["messages"] += 1
        if isinstance(message, UnknownPacket):
            self.stats["unknown_packets"] += 1
            _LOGGER.debug("DGT 3000 packet type %d not interpreted", message.kind)
        return message

    def feed_packet(self, data: bytes) -> list[Dgt3000Message]:
        """Decode one packet as received in one bus transaction."""
        if _LOGGER.isEnabledFor(TRACE):
            _LOGGER.log(TRACE, ">> %s", data.hex(" "))
        try:
            return [self._count(decode_packet(data))]
        except CrcError:
            self.stats["bad_crc"] += 1
        except Dgt3000ProtocolError as exc:
            self.stats["invalid_packets"] += 1
            _LOGGER.debug("DGT 3000 packet rejected: %s", exc)
        self.stats["discarded_bytes"] += len(data)
        return []

    def feed(self, data: bytes) -> list[Dgt3000Message]:
        """Decode packets stored back to back (captures); resynchronise on the CRC."""
        self._buffer += data
        buf = self._buffer
        messages: list[Dgt3000Message] = []
        while len(buf) >= 3:
            if buf[0] not in (0x00, HOST_ACK_DEST) or buf[1] != CLOCK_SRC or not 5 <= buf[2] <= 64:
                self._discard(1, "no packet header")
                continue
            length = buf[2]
            if len(buf) < length:
                break
            candidate = bytes(buf[:length])
            try:
                message = decode_packet(candidate)
            except Dgt3000ProtocolError as exc:
                self._discard(1, str(exc))
                continue
            del buf[:length]
            messages.append(self._count(message))
        return messages


# --- host -> clock --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Wake:
    """Wake-up ping, written to address 0x28; answered by a Hello, never acked."""


@dataclass(frozen=True, slots=True)
class SetCentralControl:
    """Put the clock under the host's control."""


@dataclass(frozen=True, slots=True)
class ChangeState:
    """Change state to ``mode`` (25: the mode the DGT Pi uses; sent as ``0x20 + mode``)."""

    mode: int = 25

    def __post_init__(self) -> None:
        if not 1 <= self.mode <= 0x5F:
            raise ValueError("mode must be 1..95 (PowerOff switches the clock off)")


@dataclass(frozen=True, slots=True)
class PowerOff:
    """Switch the clock off (change state 0, no ack)."""


@dataclass(frozen=True, slots=True)
class SetAndRun:
    """Set both times; each side stops (0), counts down (1) or up (2)."""

    left_s: int
    right_s: int
    left_mode: int = 0
    right_mode: int = 0

    def __post_init__(self) -> None:
        for value in (self.left_s, self.right_s):
            if not 0 <= value < 10 * 3600:
                raise ValueError("times must be 0..9:59:59")
        if self.left_mode not in (0, 1, 2) or self.right_mode not in (0, 1, 2):
            raise ValueError("modes are 0 stop, 1 down, 2 up")


@dataclass(frozen=True, slots=True)
class Display:
    """Show up to 11 characters; beep in 62.5 ms units (max 48); icon bits per side."""

    text: str
    beep: int = 0
    left_icons: int = 0
    right_icons: int = 0

    def __post_init__(self) -> None:
        if len(self.text) > 11 or not self.text.isascii():
            raise ValueError("display text is up to 11 ASCII characters")
        if not 0 <= self.beep <= 48:
            raise ValueError("beep is 0..48 (62.5 ms units)")


@dataclass(frozen=True, slots=True)
class EndDisplay:
    """Back to showing the times."""


HostCommand: TypeAlias = Wake | SetCentralControl | ChangeState | PowerOff | SetAndRun | Display | EndDisplay


def _side(seconds: int) -> bytes:
    hours, rest = divmod(seconds, 3600)
    return bytes((hours, _to_bcd(rest // 60), _to_bcd(rest % 60)))


def encode(command: HostCommand) -> tuple[int, bytes]:
    """(7-bit address, whole packet with dest byte) of *command*.

    The bytes after the dest byte are what goes on the wire after the address.
    """
    match command:
        case Wake():
            # Both implementations send the CRC computed with dest 0x10 although it goes to 0x28 (§2.3).
            return WAKE_ADDRESS, bytes((0x50,)) + packet(0x10, HOST_SRC, PacketType.PING)[1:]
        case SetCentralControl():
            return CLOCK_ADDRESS, packet(0x10, HOST_SRC, PacketType.SET_CENTRAL_CONTROL)
        case ChangeState(mode=mode):
            return CLOCK_ADDRESS, packet(0x10, HOST_SRC, PacketType.CHANGE_STATE, bytes((0x20 + mode,)))
        case PowerOff():
            return CLOCK_ADDRESS, packet(0x10, HOST_SRC, PacketType.CHANGE_STATE, b"\x00")
        case SetAndRun(left_s=left, right_s=right, left_mode=lm, right_mode=rm):
            return CLOCK_ADDRESS, packet(0x10, HOST_SRC, PacketType.SET_AND_RUN,
                                         _side(left) + _side(right) + bytes((lm + (rm << 2),)))
        case Display(text=text, beep=beep, left_icons=li, right_icons=ri):
            return CLOCK_ADDRESS, packet(0x10, HOST_SRC, PacketType.DISPLAY,
                                         text.ljust(11).encode("ascii") + bytes((0xFF, beep, 0x03, li, ri)))
        case EndDisplay():
            return CLOCK_ADDRESS, packet(0x10, HOST_SRC, PacketType.END_DISPLAY)
    raise TypeError(f"not a DGT 3000 command: {command!r}")  # pragma: no cover


def decode_command(address: int, data: bytes) -> HostCommand:
    """The command in a host write of *data* (dest byte included) to *address* (the emulator's side).

    Raises:
        CrcError: bad CRC.
        Dgt3000ProtocolError: anything else that is not a known command.
    """
    if len(data) < 5 or data[2] != len(data):
        raise Dgt3000ProtocolError("bad command length", raw=data)
    check = bytes((0x10,)) + data[1:-1] if address == WAKE_ADDRESS else data[:-1]
    if crc8(check) != data[-1]:
        raise CrcError("bad command CRC", raw=data)
    kind, body = data[3], data[4:-1]
    if address == WAKE_ADDRESS:
        if kind == PacketType.PING:
            return Wake()
        raise Dgt3000ProtocolError("only pings go to the wake address", raw=data)
    match kind:
        case PacketType.SET_CENTRAL_CONTROL:
            return SetCentralControl()
        case PacketType.CHANGE_STATE if len(body) == 1:
            return PowerOff() if body[0] == 0 else ChangeState(body[0] - 0x20)
        case PacketType.SET_AND_RUN if len(body) == 7:
            def seconds(part: bytes) -> int:
                return part[0] * 3600 + _bcd(part[1], "minutes", data) * 60 + _bcd(part[2], "seconds", data)
            return SetAndRun(seconds(body[0:3]), seconds(body[3:6]), body[6] & 0x03, body[6] >> 2 & 0x03)
        case PacketType.DISPLAY if len(body) == 16:
            return Display(body[:11].decode("ascii", "replace").rstrip(), body[12], body[14], body[15])
        case PacketType.END_DISPLAY:
            return EndDisplay()
    raise Dgt3000ProtocolError(f"unknown command type {kind}", raw=data)
