"""Pure codec of Chessnut boards (Air, Air+, Go, Pro, Move; protocols.md §6): bytes <-> typed messages.

Theory of operation
-------------------
Every message starts with a type byte and a length byte counting the bytes
after it. The board data frame is ``01 24`` + 32 position bytes + 4 more
bytes over BLE (38 bytes in practice, §6.3, §9.10) and ``01 3d`` + 32 position
bytes + padding in a USB HID input report (§6.4). Position byte 0 holds h8 in
its low nibble and g8 in its high nibble, byte 3 b8/a8, byte 4 h7/g7 ... byte
31 b1/a1; nibble codes ``0`` empty, ``1`` q ``2`` k ``3`` b ``4`` p ``5`` n ``6`` R
``7`` P ``8`` r ``9`` B ``10`` N ``11`` Q ``12`` K. Codes 13-15 are not pieces: they
become :data:`boardd.core.events.Marker.UNKNOWN` and are counted.

USB HID and BLE deliver one message per report/notification, so
:meth:`ChessnutDecoder.feed_report` decodes a report on its own (trailing
padding ignored): a bad report can never spoil the next one. Captures store a
plain byte stream, which :meth:`ChessnutDecoder.feed` decodes with the length
bytes, accepting only the known types with their known lengths and dropping
one byte at a time otherwise (counted, TRACE-logged).

Other messages: battery ``2a 02 b2 b3`` (tolerant reading of §9.11:
``percent = b2 & 0x7f``, ``charging = b2 & 0x80 or b3 == 1``), acknowledgement
``23 01 00``, button ``0f 01 <button>``. Host commands (:class:`Command`) are
the same bytes over BLE and USB, the first byte being the HID report id.
Nothing here does I/O.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, TypeAlias

import chess

from boardd.core.errors import ProtocolError
from boardd.core.events import Content, Marker
from drivers._codec import TRACE, BufferedDecoder

__all__ = [
    "PIECE_CODES",
    "TRACE",
    "Ack",
    "Battery",
    "BoardFrame",
    "Button",
    "ChessnutDecoder",
    "ChessnutMessage",
    "ChessnutProtocolError",
    "Command",
    "FrameError",
    "decode_message",
    "encode_battery",
    "encode_frame",
    "encode_leds",
    "position_bytes",
    "squares_of_position",
]

_LOGGER = logging.getLogger(__name__)

#: Nibble code -> piece (§6.3).
PIECE_CODES: Final[dict[int, chess.Piece]] = {
    code: chess.Piece.from_symbol(symbol) for code, symbol in enumerate(".qkbpnRPrBNQK") if symbol != "."
}
_CODE_OF: Final = {piece: code for code, piece in PIECE_CODES.items()}

#: Board frame length byte over BLE (36) and USB HID (61).
BLE_FRAME: Final = 0x24
USB_FRAME: Final = 0x3D
#: Known message types -> accepted length bytes.
_KNOWN: Final[dict[int, frozenset[int]]] = {
    0x01: frozenset({BLE_FRAME, USB_FRAME}),
    0x2A: frozenset({2}),
    0x23: frozenset({1}),
    0x0F: frozenset({1}),
}


class ChessnutProtocolError(ProtocolError):
    """Bytes from a Chessnut board did not follow the protocol."""


class FrameError(ChessnutProtocolError):
    """A message is too short, has an unknown type or a length that type never has."""


class Command(bytes, enum.Enum):
    """Fixed host commands (§6.2); the first byte is the HID report id over USB."""

    REALTIME = bytes((0x21, 0x01, 0x00))
    UPLOAD_MODE = bytes((0x21, 0x01, 0x01))
    BATTERY = bytes((0x29, 0x01, 0x00))
    MCU_VERSION = bytes((0x27, 0x01, 0x01))
    BLE_VERSION = bytes((0x27, 0x01, 0x00))


@dataclass(frozen=True, slots=True)
class BoardFrame:
    """A full reading: the 32 position bytes (and what followed them: uptime over BLE, padding over USB)."""

    position: bytes
    usb: bool = False

    def squares(self) -> tuple[Content, ...]:
        """Contents by python-chess square; codes 13-15 become :data:`Marker.UNKNOWN`."""
        return squares_of_position(self.position)

    @property
    def unknown_codes(self) -> int:
        """How many nibbles are not a piece code."""
        return sum(1 for b in self.position for n in (b & 0x0F, b >> 4) if n > 12)


@dataclass(frozen=True, slots=True)
class Battery:
    """Battery level in percent and whether it is charging."""

    percent: int
    charging: bool


@dataclass(frozen=True, slots=True)
class Ack:
    """``23 01 00``: a command was accepted."""


@dataclass(frozen=True, slots=True)
class Button:
    """``0f 01 <button>``: a button on the board."""

    button: int


ChessnutMessage: TypeAlias = BoardFrame | Battery | Ack | Button


def _square(index: int, high: bool) -> chess.Square:
    row, column = divmod(index, 4)
    file = 6 - 2 * column if high else 7 - 2 * column
    return chess.square(file, 7 - row)


def squares_of_position(position: bytes) -> tuple[Content, ...]:
    """The 64 contents of 32 position bytes (h8 = low nibble of byte 0 ... a1 = high nibble of byte 31)."""
    if len(position) != 32:
        raise FrameError(f"a position has 32 bytes, got {len(position)}", raw=position)
    squares: list[Content] = [None] * 64
    for index, byte in enumerate(position):
        for high, code in ((False, byte & 0x0F), (True, byte >> 4)):
            if code:
                squares[_square(index, high)] = PIECE_CODES.get(code, Marker.UNKNOWN)
    return tuple(squares)


def position_bytes(squares: Iterable[Content]) -> bytes:
    """Inverse of :func:`squares_of_position` (markers become code 15)."""
    by_square = list(squares)
    if len(by_square) != 64:
        raise ValueError("64 squares expected")
    out = bytearray(32)
    for index in range(32):
        for high in (False, True):
            content = by_square[_square(index, high)]
            code = 0 if content is None else _CODE_OF[content] if isinstance(content, chess.Piece) else 15
            out[index] |= code << 4 if high else code
    return bytes(out)


def decode_message(data: bytes) -> ChessnutMessage:
    """Decode one message (type, length, payload); bytes after it are ignored.

    Raises:
        FrameError: too short, unknown type, or a length the type never has.
    """
    if len(data) < 2:
        raise FrameError("a message has at least 2 bytes", raw=data)
    kind, length = data[0], data[1]
    if length not in _KNOWN.get(kind, ()):
        raise FrameError(f"unknown message type 0x{kind:02x} with length {length}", raw=data[:8])
    if len(data) < 2 + length:
        raise FrameError(f"message 0x{kind:02x} truncated: {len(data) - 2} of {length} bytes", raw=data[:8])
    payload = data[2:2 + length]
    match kind:
        case 0x01:
            return BoardFrame(bytes(payload[:32]), usb=length == USB_FRAME)
        case 0x2A:
            return Battery(percent=payload[0] & 0x7F, charging=bool(payload[0] & 0x80) or payload[1] == 1)
        case 0x23:
            return Ack()
        case _:
            return Button(payload[0])


def encode_frame(squares: Iterable[Content], *, usb: bool = True, uptime: int = 0) -> bytes:
    """The board frame for *squares*: a 64-byte USB input report, or the 38-byte BLE notification."""
    position = position_bytes(squares)
    if usb:
        return (bytes((0x01, USB_FRAME)) + position).ljust(64, b"\0")
    return bytes((0x01, BLE_FRAME)) + position + (uptime & 0xFFFF).to_bytes(2, "little") + b"\0\0"


def encode_battery(percent: int, charging: bool) -> bytes:
    """Battery notification as picochess's test vector has it (``2a 02 64 01``: 100 %, charging)."""
    return bytes((0x2A, 0x02, percent & 0x7F, 1 if charging else 0))


def encode_leds(squares: Iterable[chess.Square]) -> bytes:
    """LED command: ``0a 08`` + 8 bytes, byte 0 = rank 8, bit 7 = a-file (§6.2)."""
    leds = bytearray(8)
    for square in squares:
        leds[7 - chess.square_rank(square)] |= 0x80 >> chess.square_file(square)
    return bytes((0x0A, 0x08)) + bytes(leds)


class ChessnutDecoder(BufferedDecoder):
    """Decoder of Chessnut reports (one message each) and of captured byte streams; survives any input.

    ``stats`` counts ``messages``, ``discarded_bytes``, ``invalid_reports``, ``unknown_pieces`` (codes) and
    ``unknown_piece_frames`` (frames with one or more); a frame with unknown codes is WARNING-logged at the
    1st-3rd, 10th, 100th, ... such frame, as every codec rejects input (``BufferedDecoder._warn_sparsely``).
    """

    _logger = _LOGGER

    def _accept(self, message: ChessnutMessage) -> ChessnutMessage:
        self.stats["messages"] += 1
        if isinstance(message, BoardFrame) and message.unknown_codes:
            self.stats["unknown_pieces"] += message.unknown_codes
            self.stats["unknown_piece_frames"] += 1
            self._warn_sparsely("unknown_piece_frames", "Chessnut frame with %d unknown piece code(s): %s",
                                message.unknown_codes, message.position.hex(" "))
        return message

    def feed_report(self, report: bytes) -> list[ChessnutMessage]:
        """Decode one USB HID input report or BLE notification (trailing padding ignored)."""
        if _LOGGER.isEnabledFor(TRACE):
            _LOGGER.log(TRACE, ">> %s", report.hex(" "))
        try:
            message = decode_message(report)
        except FrameError as exc:
            self.stats["invalid_reports"] += 1
            self.stats["discarded_bytes"] += len(report)
            _LOGGER.debug("Chessnut report dropped: %s", exc)
            return []
        return [self._accept(message)]

    def feed(self, data: bytes) -> list[ChessnutMessage]:
        """Decode a byte stream (captures): messages back to back, garbage skipped a byte at a time."""
        self._buffer += data
        buf = self._buffer
        messages: list[ChessnutMessage] = []
        while buf:
            lengths = _KNOWN.get(buf[0])
            if lengths is None or (len(buf) >= 2 and buf[1] not in lengths):
                start = 1
                while start < len(buf) and buf[start] not in _KNOWN:
                    start += 1
                self._discard(start, "no known message id")
                continue
            if len(buf) < 2 or len(buf) < 2 + buf[1]:
                break
            size = 2 + buf[1]
            message = decode_message(bytes(buf[:size]))
            del buf[:size]
            messages.append(self._accept(message))
        return messages
