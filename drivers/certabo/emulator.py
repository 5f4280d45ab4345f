"""A byte-level Certabo board on a pty (protocols.md §5, §9 emulator checklist).

Every ``scan_interval`` (the vendor's simulator sends one line per second; the real
rate is not documented, 0.25 s by default here) the board sends
``:`` + 320 numbers + `` \\r\\n`` with the chip id of the piece on every square.
Each piece of the set carries its own chip (:attr:`CertaboEmulator.chips`); two
extra queens (one per colour) exist for promotions, as picochess calibrates them;
further promoted pieces get chips no calibration knows. With ``noise`` a chip is
now and then misread (a random id) or not read at all (an empty square), as
real boards do. 8-byte LED frames from the host are accepted and kept.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import chess

from boardd.core.events import Marker
from drivers.base import TimeSource
from drivers.certabo.codec import Calibration, ChipId, encode_frame
from drivers.millennium.pty_emulator import PtyBoardEmulator, run_cli

__all__ = ["CertaboEmulator"]

#: How many chips of each piece the emulated set has (start position + one extra queen per colour).
_SET = {chess.PAWN: 8, chess.KNIGHT: 2, chess.BISHOP: 2, chess.ROOK: 2, chess.QUEEN: 2, chess.KING: 1}


class CertaboEmulator(PtyBoardEmulator):
    """A Certabo board on a pty.

    Args:
        scan_interval: seconds between lines (or a range).
        noise: probability per occupied square and line of a misread (random id) or a missed chip.
        fen: initial placement.
        seed: random seed of the chips and the noise.
        directory: where the device link is created.
        time_source: time line.
    """

    def __init__(self, *, scan_interval: float | tuple[float, float] = 0.25, noise: float = 0.0,
                 fen: str = chess.STARTING_BOARD_FEN, seed: int = 0, directory: Path | None = None,
                 time_source: TimeSource = time.monotonic) -> None:
        super().__init__(scan_interval=scan_interval, seed=seed, fen=fen, directory=directory,
                         link_name="usb-Silicon_Labs_CP2102_USB_to_UART_Bridge_Controller_0001-if00-port0",
                         time_source=time_source)
        self.noise = noise
        self._noise_rng = random.Random(seed + 1)
        chip_rng = random.Random(seed + 2)
        #: piece -> the chips of that kind in the set (typical ids ``3 0 8x yy zz``).
        self.chips: dict[chess.Piece, list[ChipId]] = {}
        used: set[ChipId] = set()
        for color in chess.COLORS:
            for piece_type, count in _SET.items():
                ids: list[ChipId] = []
                while len(ids) < count:
                    chip = bytes((3, 0, 0x80 + chip_rng.randrange(16), chip_rng.randrange(1, 256),
                                  chip_rng.randrange(1, 256)))
                    if chip not in used:
                        used.add(chip)
                        ids.append(chip)
                self.chips[chess.Piece(piece_type, color)] = ids
        self.leds: bytes = bytes(8)
        self._led_buf = b""
        self.lines_sent = 0

    def calibration(self) -> Calibration:
        """The calibration of this set (what calibrating with the extra queens learns)."""
        return Calibration({chip: piece for piece, chips in self.chips.items() for chip in chips})

    def reading(self) -> list[ChipId | None]:
        """Chip ids the board reads now, by square (without noise).

        Pieces of one kind get that kind's chips in square order; a piece beyond the set
        (a third queen) gets a chip no calibration knows.
        """
        used: dict[chess.Piece, int] = {}
        chips: list[ChipId | None] = [None] * 64
        for square, content in enumerate(self.physical):
            if content is None:
                continue
            if isinstance(content, Marker):
                chips[square] = bytes((9, 9, 9, 9, square + 1))
                continue
            index = used.get(content, 0)
            used[content] = index + 1
            pool = self.chips[content]
            chips[square] = pool[index] if index < len(pool) else bytes((7, 7, 7, index, square + 1))
        return chips

    def _on_bytes(self, data: bytes) -> None:
        # LED frames are 8 raw bytes; keep the last complete one.
        self._led_buf += data
        while len(self._led_buf) >= 8:
            self.leds, self._led_buf = self._led_buf[:8], self._led_buf[8:]
            self.stats["led_frames"] += 1

    def _scan(self) -> None:
        chips = self.reading()
        if self.noise:
            for square, chip in enumerate(chips):
                if chip is not None and self._noise_rng.random() < self.noise:
                    self.stats["noisy_reads"] += 1
                    chips[square] = None if self._noise_rng.random() < 0.5 else bytes(
                        self._noise_rng.randrange(1, 256) for _ in range(5))
        self.write(encode_frame(chips))
        self.lines_sent += 1


def main(argv: list[str] | None = None) -> None:
    """``python -m drivers.certabo.emulator``: a Certabo board on a pty; prints its path."""

    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--scan", type=float, default=0.25, help="seconds between lines")
        parser.add_argument("--noise", type=float, default=0.0, help="probability of a misread chip")

    run_cli(lambda args: CertaboEmulator(scan_interval=args.scan, noise=args.noise),
            "Emulated Certabo RFID board on a pty", argv, options)


if __name__ == "__main__":
    main()
