"""Pure codec of the Millennium ChessLink protocol (protocols.md §4): bytes <-> typed messages.

Theory of operation
-------------------
Every ChessLink message is printable ASCII: a letter, its payload, and two
upper-case hex digits of the XOR of all preceding characters (the "Y parity",
§4.2). On the wire each byte carries odd parity in bit 7 (38400 baud, 7O1 as
the vendor document says; we open the port 8N1 and handle bit 7 ourselves, as
picochess and python-mchess do).

The board replies with lower-case letters of known length (``v`` 7, ``s`` 67,
``l`` 3, ``x`` 3, ``w`` 7, ``r`` 7, §4.3). Reply letters also occur inside a
status payload (``r``, ``n``, ``b``, ...), so :class:`MillenniumDecoder` only
accepts a candidate message when every byte has odd parity *and* the
checksum matches; otherwise it drops one byte and tries again at the next
reply letter. Dropped bytes are counted in ``stats["discarded_bytes"]`` and
TRACE-logged.

Status square order follows practice, not the vendor text (§4.4, §9.8): the
64 characters are ``h1 g1 ... a1, h2 ... a2, ..., h8 ... a8`` for a board in
its normal orientation. An unknown piece letter in a checksum-valid status is
reported as :data:`boardd.core.events.Marker.UNKNOWN` and counted.

:func:`encode` writes host commands; :class:`HostDecoder` reads them (the
emulator's side); :func:`encode_message` writes board replies. Nothing here
does I/O or reads a clock.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Final, TypeAlias

import chess

from boardd.core.errors import ProtocolError
from boardd.core.events import BoardSnapshot, Content, Marker
from drivers._codec import TRACE, BufferedDecoder

__all__ = [
    "TRACE",
    "ChecksumError",
    "EepromRead",
    "EepromReply",
    "EepromWrite",
    "HostCommand",
    "HostDecoder",
    "LedsAck",
    "LedsOff",
    "LedsOffAck",
    "MillenniumDecoder",
    "MillenniumMessage",
    "MillenniumProtocolError",
    "ParityError",
    "Reset",
    "SetLeds",
    "Status",
    "StatusRequest",
    "Version",
    "VersionRequest",
    "add_parity",
    "checksum",
    "decode_message",
    "encode",
    "encode_message",
    "frame",
    "square_of_index",
    "status_from_snapshot",
    "strip_parity",
]

_LOGGER = logging.getLogger(__name__)

#: Reply letter -> total length in characters (letter + payload + 2 checksum digits), §4.3.
REPLY_LENGTHS: Final[dict[str, int]] = {"v": 7, "s": 67, "l": 3, "x": 3, "w": 7, "r": 7}
#: Host command letter -> total length (the ``L`` command carries 2 + 81*2 hex digits).
COMMAND_LENGTHS: Final[dict[str, int]] = {"V": 3, "S": 3, "X": 3, "T": 3, "W": 7, "R": 5, "L": 167}

_PIECE_LETTERS: Final = frozenset("KQRBNPkqrbnp")
#: Any byte that, parity removed, is a reply letter.
_REPLY_START = re.compile(b"[" + re.escape(bytes(sorted({c | p for c in b"vslxwr" for p in (0, 0x80)}))) + b"]")
_HEX = frozenset(b"0123456789ABCDEF")


class MillenniumProtocolError(ProtocolError):
    """Bytes from a Millennium board did not follow the protocol."""


class ParityError(MillenniumProtocolError):
    """A byte does not have odd parity in bit 7."""


class ChecksumError(MillenniumProtocolError):
    """The two hex digits are not the XOR of the message (or not hex at all)."""


# --- parity and checksum ----------------------------------------------------------


def _odd_parity_byte(value: int) -> int:
    value &= 0x7F
    return value | 0x80 if bin(value).count("1") % 2 == 0 else value


_WITH_PARITY: Final = bytes(_odd_parity_byte(v) for v in range(256))
_PARITY_OK: Final = frozenset(_odd_parity_byte(v) for v in range(128))


def add_parity(text: bytes) -> bytes:
    """Set bit 7 of every byte so that each has an odd number of ones (the "X parity")."""
    return text.translate(_WITH_PARITY)


def strip_parity(data: bytes) -> bytes:
    """Check odd parity of every byte and return the 7-bit characters.

    Raises:
        ParityError: a byte has even parity.
    """
    for byte in data:
        if byte not in _PARITY_OK:
            raise ParityError(f"byte 0x{byte:02x} has even parity", raw=data)
    return bytes(b & 0x7F for b in data)


def checksum(text: bytes) -> bytes:
    """The two upper-case hex digits of the XOR of *text* (the "Y parity")."""
    value = 0
    for char in text:
        value ^= char
    return f"{value:02X}".encode("ascii")


def frame(text: str) -> bytes:
    """*text* with its checksum appended and parity set: the bytes on the wire."""
    raw = text.encode("ascii")
    return add_parity(raw + checksum(raw))


# --- square order ---------------------------------------------------------------------


def square_of_index(index: int) -> chess.Square:
    """python-chess square of character *index* (0..63) of a status message: h1, g1 ... a1, h2 ... a8."""
    return chess.square(7 - index % 8, index // 8)


_SQUARE_OF_INDEX: Final = tuple(square_of_index(i) for i in range(64))
_CONTENT_OF_LETTER: Final[dict[str, Content]] = {
    ".": None, **{letter: chess.Piece.from_symbol(letter) for letter in _PIECE_LETTERS}}


# --- messages --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Status:
    """``s``: the 64 square characters in wire order (``.`` empty, ``KQRBNP``/``kqrbnp`` pieces)."""

    placement: str

    def squares(self) -> tuple[Content, ...]:
        """Contents by python-chess square; unknown letters become :data:`Marker.UNKNOWN`."""
        squares: list[Content] = [None] * 64
        for index, letter in enumerate(self.placement):
            squares[_SQUARE_OF_INDEX[index]] = _CONTENT_OF_LETTER.get(letter, Marker.UNKNOWN)
        return tuple(squares)

    @property
    def unknown_letters(self) -> int:
        """How many characters are neither ``.`` nor a piece letter."""
        return sum(1 for c in self.placement if c != "." and c not in _PIECE_LETTERS)


@dataclass(frozen=True, slots=True)
class Version:
    """``v``: firmware version (two hex bytes)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}"

    @property
    def model(self) -> str:
        """Model guess from the version number (BearChess's thresholds, §4.3)."""
        number = self.major << 8 | self.minor
        if number <= 0x010F:
            return "exclusive"
        if number <= 0x01FF:
            return "king-performance"
        return "eone"


@dataclass(frozen=True, slots=True)
class LedsAck:
    """``l``: the LED pattern was accepted."""


@dataclass(frozen=True, slots=True)
class LedsOffAck:
    """``x``: all LEDs are off."""


@dataclass(frozen=True, slots=True)
class EepromReply:
    """``w`` (after a write) or ``r`` (after a read): address and value."""

    write: bool
    address: int
    value: int


MillenniumMessage: TypeAlias = Status | Version | LedsAck | LedsOffAck | EepromReply


def _hex_byte(text: bytes, raw: bytes) -> int:
    if len(text) != 2 or not set(text) <= _HEX:
        raise MillenniumProtocolError(f"expected two hex digits, got {text!r}", raw=raw)
    return int(text, 16)


def decode_message(data: bytes) -> MillenniumMessage:
    """Decode one complete reply as received (parity bits included).

    Raises:
        ParityError: a byte has even parity.
        ChecksumError: the checksum does not match.
        MillenniumProtocolError: unknown letter, wrong length or a bad payload.
    """
    text = strip_parity(data)
    if not text:
        raise MillenniumProtocolError("empty message")
    letter = chr(text[0])
    expected = REPLY_LENGTHS.get(letter)
    if expected is None:
        raise MillenniumProtocolError(f"unknown reply letter {letter!r}", raw=data)
    if len(text) != expected:
        raise MillenniumProtocolError(f"reply {letter!r} has {len(text)} characters, expected {expected}", raw=data)
    if checksum(text[:-2]) != text[-2:]:
        raise ChecksumError(f"checksum {text[-2:]!r} != {checksum(text[:-2])!r}", raw=data)
    payload = text[1:-2]
    match letter:
        case "s":
            try:
                placement = payload.decode("ascii")
            except UnicodeDecodeError:  # pragma: no cover - 7-bit bytes always decode
                raise MillenniumProtocolError("status is not ASCII", raw=data) from None
            return Status(placement)
        case "v":
            return Version(_hex_byte(payload[:2], data), _hex_byte(payload[2:], data))
        case "l":
            return LedsAck()
        case "x":
            return LedsOffAck()
        case _:  # "w" / "r"
            return EepromReply(letter == "w", _hex_byte(payload[:2], data), _hex_byte(payload[2:], data))


def encode_message(message: MillenniumMessage) -> bytes:
    """The bytes the board sends for *message* (the emulator's side)."""
    match message:
        case Status(placement=placement):
            if len(placement) != 64:
                raise ValueError("a status has 64 characters")
            return frame("s" + placement)
        case Version(major=major, minor=minor):
            return frame(f"v{major:02X}{minor:02X}")
        case LedsAck():
            return frame("l")
        case LedsOffAck():
            return frame("x")
        case EepromReply(write=write, address=address, value=value):
            return frame(f"{'w' if write else 'r'}{address:02X}{value:02X}")
    raise TypeError(f"not a Millennium message: {message!r}")  # pragma: no cover


def status_from_snapshot(snapshot: BoardSnapshot) -> Status:
    """The status a board in normal orientation sends for *snapshot* (markers become ``?``)."""
    chars = []
    for index in range(64):
        content = snapshot.squares[square_of_index(index)]
        chars.append("." if content is None else content.symbol() if isinstance(content, chess.Piece) else "?")
    return Status("".join(chars))


def _bad_prefix(buf: bytearray, letter: str) -> str:
    """Why the incomplete frame at the head of *buf* can never become valid ("" if it still can)."""
    for index, byte in enumerate(buf):
        if byte not in _PARITY_OK:
            return "parity"
        char = byte & 0x7F
        if index and letter != "s" and char not in _HEX:
            return "not hex"
        if index and not 0x20 <= char < 0x7F:
            return "not printable"
    return ""


class MillenniumDecoder(BufferedDecoder):
    """Incremental decoder of board -> host bytes; survives any input.

    ``stats`` counts ``messages``, ``discarded_bytes``, ``bad_checksum``, ``bad_parity``,
    ``unknown_pieces`` (letters) and ``unknown_piece_frames`` (statuses with one or more, WARNING-logged
    at the 1st-3rd, 10th, 100th, ... one).

    >>> MillenniumDecoder().feed(bytes.fromhex("76 b0 31 b0 b3 37 34"))
    [Version(major=1, minor=3)]
    """

    _logger = _LOGGER

    def _complete_frame_after_head(self) -> int:
        """Offset of a complete, valid message inside the incomplete one at the head (0 if none).

        Piece letters, ``.`` and hex digits are never reply letters followed by a valid
        frame, so such a message proves the head was a false start.
        """
        buf = self._buffer
        for found in _REPLY_START.finditer(buf, 1):
            start = found.start()
            length = REPLY_LENGTHS[chr(buf[start] & 0x7F)]
            if start + length <= len(buf):
                try:
                    decode_message(bytes(buf[start:start + length]))
                except MillenniumProtocolError:
                    continue
                return start
        return 0

    def feed(self, data: bytes) -> list[MillenniumMessage]:
        """Add received bytes; return every message completed by them, in order."""
        self._buffer += data
        buf = self._buffer
        messages: list[MillenniumMessage] = []
        while buf:
            letter = chr(buf[0] & 0x7F)
            length = REPLY_LENGTHS.get(letter)
            if length is None:
                found = _REPLY_START.search(buf, 1)
                self._discard(found.start() if found else len(buf), "no reply letter")
                continue
            if len(buf) < length:
                # Reject a false start early (a garbage byte that looks like a reply letter)
                # instead of waiting for a whole frame length of data.
                bad = _bad_prefix(buf, letter)
                if bad:
                    self.stats["bad_parity" if bad == "parity" else "invalid_frames"] += 1
                    self._discard(1, f"false start ({bad})")
                    continue
                later = self._complete_frame_after_head()
                if later:
                    self.stats["invalid_frames"] += 1
                    self._discard(later, "false start (a complete message follows)")
                    continue
                break
            candidate = bytes(buf[:length])
            try:
                message = decode_message(candidate)
            except ParityError:
                self.stats["bad_parity"] += 1
                self._discard(1, "parity error")
                continue
            except ChecksumError:
                self.stats["bad_checksum"] += 1
                self._discard(1, "checksum mismatch")
                continue
            except MillenniumProtocolError as exc:
                self.stats["invalid_frames"] += 1
                self._discard(1, str(exc))
                continue
            del buf[:length]
            if _LOGGER.isEnabledFor(TRACE):
                _LOGGER.log(TRACE, ">> %s", candidate.hex(" "))
            if isinstance(message, Status) and message.unknown_letters:
                self.stats["unknown_pieces"] += message.unknown_letters
                self.stats["unknown_piece_frames"] += 1
                self._warn_sparsely("unknown_piece_frames", "Millennium status with %d unknown piece letter(s): %r",
                                    message.unknown_letters, message.placement)
            self.stats["messages"] += 1
            messages.append(message)
        return messages


# --- host commands ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusRequest:
    """``S``: send one status now."""


@dataclass(frozen=True, slots=True)
class VersionRequest:
    """``V``: send the firmware version."""


@dataclass(frozen=True, slots=True)
class LedsOff:
    """``X``: switch every LED off."""


@dataclass(frozen=True, slots=True)
class Reset:
    """``T``: hardware reset (no reply; the board restarts in about 3 s)."""


@dataclass(frozen=True, slots=True)
class EepromWrite:
    """``W``: write E²ROM *address* (0x02 = report mode, 0x01 = scan time, ...)."""

    address: int
    value: int


@dataclass(frozen=True, slots=True)
class EepromRead:
    """``R``: read E²ROM *address*."""

    address: int


@dataclass(frozen=True, slots=True)
class SetLeds:
    """``L``: slot time (4.096 ms units) and 81 LED patterns (one bit per slot, b7 first)."""

    slot_time: int
    patterns: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.patterns) != 81 or not all(0 <= p <= 0xFF for p in self.patterns):
            raise ValueError("SetLeds needs 81 patterns of 0..255")
        if not 0 <= self.slot_time <= 0xFF:
            raise ValueError("slot_time must be 0..255")


HostCommand: TypeAlias = StatusRequest | VersionRequest | LedsOff | Reset | EepromWrite | EepromRead | SetLeds


def encode(command: HostCommand) -> bytes:
    """The bytes the host sends for *command* (parity and checksum included).

    >>> encode(VersionRequest()).hex(" ")
    'd6 b5 b6'
    """
    match command:
        case StatusRequest():
            return frame("S")
        case VersionRequest():
            return frame("V")
        case LedsOff():
            return frame("X")
        case Reset():
            return frame("T")
        case EepromWrite(address=address, value=value):
            return frame(f"W{address:02X}{value:02X}")
        case EepromRead(address=address):
            return frame(f"R{address:02X}")
        case SetLeds(slot_time=slot, patterns=patterns):
            return frame("L" + f"{slot:02X}" + "".join(f"{p:02X}" for p in patterns))
    raise TypeError(f"not a Millennium command: {command!r}")  # pragma: no cover


class HostDecoder(BufferedDecoder):
    """Decoder of host -> board bytes (the emulator's side); bad bytes are dropped and counted."""

    _logger = _LOGGER

    def feed(self, data: bytes) -> list[HostCommand]:
        """Add received bytes; return the complete, checksum-valid commands."""
        self._buffer += data
        buf = self._buffer
        commands: list[HostCommand] = []
        while buf:
            letter = chr(buf[0] & 0x7F)
            length = COMMAND_LENGTHS.get(letter)
            if length is None:
                del buf[:1]
                self.stats["discarded_bytes"] += 1
                continue
            if len(buf) < length:
                break
            raw = bytes(buf[:length])
            try:
                text = strip_parity(raw)
                if checksum(text[:-2]) != text[-2:]:
                    raise ChecksumError("bad checksum", raw=raw)
                command = _decode_command(text[:-2].decode("ascii"))
            except (MillenniumProtocolError, ValueError):
                del buf[:1]
                self.stats["discarded_bytes"] += 1
                continue
            del buf[:length]
            commands.append(command)
        return commands


def _decode_command(text: str) -> HostCommand:
    match text[0]:
        case "S":
            return StatusRequest()
        case "V":
            return VersionRequest()
        case "X":
            return LedsOff()
        case "T":
            return Reset()
        case "W":
            return EepromWrite(int(text[1:3], 16), int(text[3:5], 16))
        case "R":
            return EepromRead(int(text[1:3], 16))
        case "L":
            return SetLeds(int(text[1:3], 16), tuple(int(text[i:i + 2], 16) for i in range(3, 165, 2)))
    raise ValueError(f"unknown command {text!r}")  # pragma: no cover
