"""Pure codec of Certabo RFID boards (protocols.md §5): text lines <-> typed frames, calibration, LEDs.

Theory of operation
-------------------
The board streams text lines ``:`` + 320 space-separated decimal numbers +
`` \\r\\n``: five numbers per square are the 5-byte id of the RFID chip in the
piece standing there (``0 0 0 0 0`` when empty; the vendor treats an id with
more than two zeros as empty), cell 0 = a8, cell 7 = h8, ..., cell 63 = h1.
Occupancy-only boards on the same stack (Tabutronic Sentio) send 8 numbers, one
bit mask per rank from rank 8, bit 7 = a-file. picochess's parser also sees
bare ``L``/``D`` lines (LED kind). :class:`CertaboDecoder` splits the byte
stream at line ends, drops anything before the ``:`` and rejects lines with the
wrong count of numbers, non-numbers or values above 255 (counted, logged, never
raised).

The board knows nothing about pieces: a :class:`Calibration` (chip id ->
piece) is learnt from frames of the start position (:class:`Calibrator`: per
square the most frequent id over ``samples`` frames; extra queens on d3/d6 are
learnt too, as picochess does) and saved as JSON. :class:`CertaboMapper` turns
frames into 64 contents: chips read intermittently are smoothed by a per-square
majority over the last ``history`` frames (picochess and certabo-lichess use 3),
and a chip the calibration does not know is :data:`boardd.core.events.Marker.UNKNOWN`
(counted, logged once per id) -- never a guessed piece.

Host -> board: 8 LED bytes, byte 0 = rank 8, bit 0 = a-file (:func:`encode_leds`).
Nothing here does I/O (except the explicit :meth:`Calibration.load`/:meth:`Calibration.dump`).
"""

from __future__ import annotations

import json
import logging
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeAlias

import chess

from boardd.core.errors import ProtocolError
from boardd.core.events import Content, Marker
from drivers._codec import TRACE, BufferedDecoder

__all__ = [
    "TRACE",
    "Calibration",
    "CalibrationError",
    "Calibrator",
    "CertaboDecoder",
    "CertaboFrameError",
    "CertaboMapper",
    "CertaboMessage",
    "CertaboProtocolError",
    "ChipFrame",
    "ChipId",
    "LedKind",
    "OccupancyFrame",
    "decode_line",
    "encode_frame",
    "encode_leds",
    "square_of_cell",
]

_LOGGER = logging.getLogger(__name__)

#: A chip id: 5 bytes.
ChipId: TypeAlias = bytes
#: Longest line accepted (320 numbers of up to 3 digits and their spaces fit in 1300 bytes).
MAX_LINE: Final = 2048
#: Extra queens accepted during calibration (picochess: d6 black, d3 white).
EXTRA_QUEENS: Final = {chess.D3: chess.Piece(chess.QUEEN, chess.WHITE), chess.D6: chess.Piece(chess.QUEEN, chess.BLACK)}


class CertaboProtocolError(ProtocolError):
    """Bytes from a Certabo board did not follow the protocol."""


class CertaboFrameError(CertaboProtocolError):
    """A line has the wrong number of values or values that are not bytes."""


class CalibrationError(CertaboProtocolError):
    """Calibration frames do not show a start position, or a calibration file is unreadable."""


def square_of_cell(cell: int) -> chess.Square:
    """python-chess square of cell *cell* (0 = a8 ... 63 = h1)."""
    return chess.square(cell % 8, 7 - cell // 8)


def is_empty(chip: ChipId) -> bool:
    """The vendor's rule: an id with more than two zero bytes is an empty square."""
    return chip.count(0) > 2


_SQUARE_OF_CELL: Final = tuple(square_of_cell(c) for c in range(64))


@dataclass(frozen=True, slots=True)
class ChipFrame:
    """One full reading: the chip id per python-chess square (``None`` = empty)."""

    chips: tuple[ChipId | None, ...]

    def occupied(self) -> frozenset[chess.Square]:
        """Squares where a chip was read."""
        return frozenset(sq for sq, chip in enumerate(self.chips) if chip is not None)


@dataclass(frozen=True, slots=True)
class OccupancyFrame:
    """An occupancy-only reading (Tabutronic Sentio): which squares are occupied."""

    occupied: frozenset[chess.Square]


@dataclass(frozen=True, slots=True)
class LedKind:
    """``L`` (classic LEDs) or ``D`` (RGB LEDs) marker line."""

    rgb: bool


CertaboMessage: TypeAlias = ChipFrame | OccupancyFrame | LedKind


def decode_line(line: bytes) -> CertaboMessage:
    """Decode one line (without the line end; a leading ``:`` is optional).

    Raises:
        CertaboFrameError: wrong count of numbers, or something that is not a byte value.
    """
    text = line.strip()
    if text in (b"L", b"D"):
        return LedKind(rgb=text == b"D")
    text = text.removeprefix(b":")
    parts = text.split()
    try:
        values = bytes(map(int, parts))
    except ValueError:
        if all(p.isdigit() for p in parts):
            raise CertaboFrameError("a value is not a byte (0..255)", raw=line[:64]) from None
        raise CertaboFrameError("a value is not a decimal number", raw=line[:64]) from None
    if len(values) == 320:
        chips: list[ChipId | None] = [None] * 64
        for cell in range(64):
            chip = values[cell * 5:cell * 5 + 5]
            chips[_SQUARE_OF_CELL[cell]] = None if chip.count(0) > 2 else chip
        return ChipFrame(tuple(chips))
    if len(values) == 8:
        occupied = {chess.square(file, 7 - rank) for rank, mask in enumerate(values) for file in range(8)
                    if mask & (0x80 >> file)}
        return OccupancyFrame(frozenset(occupied))
    raise CertaboFrameError(f"a line has {len(values)} values, expected 320 (or 8)", raw=line[:64])


def encode_frame(chips: Iterable[ChipId | None]) -> bytes:
    """The line the board sends for *chips* (by python-chess square), line end included."""
    by_square = list(chips)
    if len(by_square) != 64:
        raise ValueError("64 squares expected")
    numbers: list[str] = []
    for cell in range(64):
        chip = by_square[square_of_cell(cell)] or b"\0\0\0\0\0"
        if len(chip) != 5:
            raise ValueError("a chip id has 5 bytes")
        numbers += [str(b) for b in chip]
    return b":" + " ".join(numbers).encode("ascii") + b" \r\n"


def encode_leds(squares: Iterable[chess.Square]) -> bytes:
    """The 8 LED bytes lighting *squares*: byte 0 = rank 8, bit 0 = a-file (§5.4).

    >>> encode_leds([chess.D2, chess.D4]).hex(" ")
    '00 00 00 00 08 00 08 00'
    """
    leds = bytearray(8)
    for square in squares:
        leds[7 - chess.square_rank(square)] |= 1 << chess.square_file(square)
    return bytes(leds)


class CertaboDecoder(BufferedDecoder):
    """Incremental line decoder of board -> host bytes; survives any input.

    ``stats`` counts ``messages``, ``discarded_bytes`` (garbage before a ``:``, overlong or
    unreadable lines) and ``invalid_lines``.
    """

    _logger = _LOGGER
    _trace_limit = 80

    def feed(self, data: bytes) -> list[CertaboMessage]:
        """Add received bytes; return every message completed by them, in order."""
        self._buffer += data
        messages: list[CertaboMessage] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_LINE:
                    start = self._buffer.rfind(b":")
                    self._discard(start if start > 0 else len(self._buffer), "overlong line")
                    if len(self._buffer) > MAX_LINE:
                        self._discard(len(self._buffer), "overlong line")
                break
            line = bytes(self._buffer[:end + 1])
            del self._buffer[:end + 1]
            body = line.rstrip(b"\r\n ")
            if not body:
                continue
            colon = body.rfind(b":")
            if colon > 0:
                self._count_discarded(body[:colon], "garbage before ':'")
                body = body[colon:]
            elif colon < 0 and body.strip() not in (b"L", b"D"):
                self.stats["invalid_lines"] += 1
                self._count_discarded(line, "line without ':'")
                continue
            try:
                message = decode_line(body)
            except CertaboFrameError as exc:
                self.stats["invalid_lines"] += 1
                self._count_discarded(body, str(exc))
                _LOGGER.debug("Certabo line rejected: %s", exc)
                continue
            self.stats["messages"] += 1
            messages.append(message)
        return messages


# --- calibration ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Calibration:
    """Chip id -> piece, learnt from the start position."""

    pieces: Mapping[ChipId, chess.Piece]

    def piece_of(self, chip: ChipId) -> chess.Piece | None:
        """The calibrated piece of *chip*, ``None`` if unknown."""
        return self.pieces.get(chip)

    def dump(self, path: Path) -> None:
        """Write the calibration as JSON."""
        data = {"version": 1, "pieces": {" ".join(str(b) for b in chip): piece.symbol()
                                         for chip, piece in sorted(self.pieces.items())}}
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Calibration:
        """Read a calibration written by :meth:`dump`.

        Raises:
            CalibrationError: missing or unreadable file.
        """
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            pieces = {bytes(int(v) for v in chip.split()): chess.Piece.from_symbol(symbol)
                      for chip, symbol in data["pieces"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CalibrationError(f"cannot read calibration {path}: {exc}") from exc
        if any(len(chip) != 5 for chip in pieces):
            raise CalibrationError(f"{path}: a chip id has 5 bytes")
        return cls(pieces)


_START = chess.BaseBoard()


@dataclass
class Calibrator:
    """Learns a :class:`Calibration` from frames showing the start position.

    Args:
        samples: frames needed (picochess: 7, the vendor tool: 15).
        rotated: the board is turned round: White stands on the board's ranks 7-8 (the chips
            cannot tell colours, so this must be said; the calibration is then still right).
    """

    samples: int = 7
    rotated: bool = False
    _counts: dict[chess.Square, Counter[ChipId]] = field(default_factory=dict)
    _frames: int = 0
    rejected: int = 0

    def feed(self, frame: ChipFrame) -> Calibration | None:
        """Add a frame; return the calibration once enough start-position frames were seen.

        Frames whose occupancy is not the start position (optionally with extra queens
        on d3/d6) are ignored and counted in ``rejected``; the count restarts.
        """
        occupied = frame.occupied()
        start = frozenset(chess.SquareSet(_START.occupied))
        extra = {63 - sq for sq in EXTRA_QUEENS} if self.rotated else set(EXTRA_QUEENS)
        if not start <= occupied or not occupied - start <= extra:
            self.rejected += 1
            self._counts.clear()
            self._frames = 0
            return None
        for square in occupied:
            chip = frame.chips[square]
            assert chip is not None
            self._counts.setdefault(square, Counter())[chip] += 1
        self._frames += 1
        if self._frames < self.samples:
            return None
        return self._result()

    def _result(self) -> Calibration | None:
        pieces: dict[ChipId, chess.Piece] = {}
        for square, counts in self._counts.items():
            chip, _ = counts.most_common(1)[0]
            standard = 63 - square if self.rotated else square
            piece = _START.piece_at(standard) or EXTRA_QUEENS.get(standard)
            assert piece is not None
            if chip in pieces and pieces[chip] != piece:
                self.rejected += 1
                _LOGGER.warning("Certabo calibration: chip %s read on two squares; starting again", chip.hex(" "))
                self._counts.clear()
                self._frames = 0
                return None
            pieces[chip] = piece
        return Calibration(pieces)


class CertaboMapper:
    """Frames -> 64 contents, with a per-square majority filter and the calibration.

    Args:
        calibration: chip -> piece; ``None`` until calibrated.
        history: frames in the majority window (1 = no filter).
        calibrator: learns a calibration from the start position while ``calibration`` is ``None``.
    """

    def __init__(self, calibration: Calibration | None = None, *, history: int = 3,
                 calibrator: Calibrator | None = None) -> None:
        if history < 1:
            raise ValueError("history must be >= 1")
        self.calibration = calibration
        self.calibrator = calibrator
        self._window: deque[ChipFrame] = deque(maxlen=history)
        self._stable: list[ChipId | None] | None = None
        self._reported_unknown: set[ChipId] = set()
        self.stats: Counter[str] = Counter()

    def reset(self) -> None:
        """The link was reopened: forget the smoothing window."""
        self._window.clear()
        self._stable = None

    def _smooth(self, frame: ChipFrame) -> list[ChipId | None] | None:
        """The majority reading of the window, ``None`` until the window is full."""
        self._window.append(frame)
        if self._stable is None:
            if len(self._window) < (self._window.maxlen or 1):
                return None
            self._stable = [None] * 64
            for square in range(64):
                self._stable[square] = Counter(f.chips[square] for f in self._window).most_common(1)[0][0]
            return list(self._stable)
        need = len(self._window) // 2 + 1
        stable = self._stable
        # Only squares where some frame of the window disagrees with the stable reading can change.
        current = tuple(stable)
        unsettled = {sq for f in self._window if f.chips != current
                     for sq, chip in enumerate(f.chips) if chip != stable[sq]}
        for square in unsettled:
            counts = Counter(f.chips[square] for f in self._window)
            chip, count = counts.most_common(1)[0]
            if count >= need:
                if chip != self._stable[square]:
                    self._stable[square] = chip
            elif frame.chips[square] != self._stable[square]:
                self.stats["unstable_readings"] += 1
        return list(self._stable)

    def squares(self, message: CertaboMessage) -> tuple[Content, ...] | None:
        """The 64 contents *message* shows, or ``None`` (not a frame, or not calibrated yet)."""
        if isinstance(message, OccupancyFrame):
            self.stats["occupancy_frames"] += 1
            return tuple(Marker.UNKNOWN if sq in message.occupied else None for sq in chess.SQUARES)
        if not isinstance(message, ChipFrame):
            return None
        if self.calibration is None:
            if self.calibrator is not None:
                self.calibration = self.calibrator.feed(message)
                if self.calibration is not None:
                    _LOGGER.info("Certabo calibrated: %d chips", len(self.calibration.pieces))
            if self.calibration is None:
                self.stats["uncalibrated_frames"] += 1
                if self.stats["uncalibrated_frames"] == 1:
                    _LOGGER.warning("Certabo board not calibrated: set up the start position to calibrate")
                return None
        chips = self._smooth(message)
        if chips is None:
            return None
        contents: list[Content] = []
        for chip in chips:
            if chip is None:
                contents.append(None)
                continue
            piece = self.calibration.piece_of(chip)
            if piece is None:
                self.stats["unknown_chips"] += 1
                if chip not in self._reported_unknown and len(self._reported_unknown) < 256:
                    self._reported_unknown.add(chip)
                    _LOGGER.warning("Certabo chip %s is not calibrated: reported as unknown", chip.hex(" "))
                contents.append(Marker.UNKNOWN)
            else:
                contents.append(piece)
        return tuple(contents)
