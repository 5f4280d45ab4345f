"""A byte-level Millennium ChessLink board on a pty (protocols.md §4, §9 emulator checklist).

* Checks odd parity and the XOR checksum of every command; bad ones are ignored (counted).
* Answers ``V``, ``S``, ``X``, ``L``, ``W``, ``R`` with the lower-case reply; ``T`` resets
  (silent for ``reset_s``).
* Keeps the E²ROM: address 01 (scan time, 2.048 ms units), 02 (report mode: every scan by
  default, off, periodic, on change, on change after a 2-5 scan debounce), 03 (period).
* Scans every scan time: while a piece is swept across the board each scan sees it on
  the square it is on, so the intermediate squares are reported.
* Automatic reports may come between a command and its reply, as on the real board.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import chess

from boardd.core.events import BoardSnapshot, Content
from drivers.base import TimeSource
from drivers.millennium.codec import (
    EepromRead,
    EepromReply,
    EepromWrite,
    HostCommand,
    HostDecoder,
    LedsAck,
    LedsOff,
    LedsOffAck,
    Reset,
    SetLeds,
    Status,
    StatusRequest,
    Version,
    VersionRequest,
    encode_message,
    status_from_snapshot,
)
from drivers.millennium.pty_emulator import PtyBoardEmulator, run_cli

__all__ = ["MillenniumEmulator"]

_DEFAULT_EEPROM = {0x00: 0x00, 0x01: 20, 0x02: 0x00, 0x03: 0x0A, 0x04: 0x0F}


class MillenniumEmulator(PtyBoardEmulator):
    """A Millennium board on a pty.

    Args:
        scan_interval: seconds per scan; ``None`` follows E²ROM 01 (2.048 ms units, 41 ms by default).
        version: firmware (major, minor).
        reset_s: how long the board is silent after ``T``.
        fen: initial placement.
        seed: random seed.
        directory: where the device link is created.
        time_source: time line.
    """

    def __init__(self, *, scan_interval: float | None = None, version: tuple[int, int] = (1, 3),
                 reset_s: float = 3.0, fen: str = chess.STARTING_BOARD_FEN, seed: int = 0,
                 directory: Path | None = None, time_source: TimeSource = time.monotonic) -> None:
        self._fixed_scan = scan_interval
        super().__init__(scan_interval=scan_interval or 20 * 0.002048, seed=seed, fen=fen, directory=directory,
                         link_name="usb-Millennium_ChessLink-if00", time_source=time_source)
        self.version = version
        self.reset_s = reset_s
        self.eeprom: dict[int, int] = dict(_DEFAULT_EEPROM)
        self.received: list[HostCommand] = []
        self.leds: tuple[int, ...] = (0,) * 81
        self._decoder = HostDecoder()
        self._sensed: list[Content] = list(self.physical)
        self._reported: list[Content] | None = None
        self._stable_scans = 0
        self._silent_until = 0.0
        self._scans_since_report = 0

    def _on_plug(self) -> None:
        self._decoder = HostDecoder()
        self._reported = None

    def status(self) -> Status:
        """The status the board would send now (its last scan)."""
        return status_from_snapshot(BoardSnapshot(at=0.0, squares=tuple(self._sensed)))

    def _on_bytes(self, data: bytes) -> None:
        if time.monotonic() < self._silent_until:
            return
        for command in self._decoder.feed(data):
            self.received.append(command)
            self._handle(command)
        self.stats["bad_commands"] = self._decoder.stats["discarded_bytes"]

    def _handle(self, command: HostCommand) -> None:
        match command:
            case StatusRequest():
                self.write(encode_message(self.status()))
            case VersionRequest():
                self.write(encode_message(Version(*self.version)))
            case LedsOff():
                self.leds = (0,) * 81
                self.write(encode_message(LedsOffAck()))
            case SetLeds(patterns=patterns):
                self.leds = patterns
                self.write(encode_message(LedsAck()))
            case EepromWrite(address=address, value=value):
                self.eeprom[address] = value
                if address == 0x01 and self._fixed_scan is None:
                    scan = (value if value >= 15 else 20) * 0.002048
                    self._scan_range = (scan, scan)
                self.write(encode_message(EepromReply(True, address, value)))
            case EepromRead(address=address):
                self.write(encode_message(EepromReply(False, address, self.eeprom.get(address, 0))))
            case Reset():
                self._silent_until = time.monotonic() + self.reset_s
                self._reported = None
                self.stats["resets"] += 1

    def _scan(self) -> None:
        if time.monotonic() < self._silent_until:
            return
        changed = self.physical != self._sensed
        self._sensed = list(self.physical)
        self._stable_scans = 0 if changed else self._stable_scans + 1
        self._scans_since_report += 1
        mode = self.eeprom.get(0x02, 0) & 0x07
        send = False
        if mode == 0:
            send = True
        elif mode == 2:
            period = max(1, self.eeprom.get(0x03, 10)) * 0.004096
            scan = self._scan_range[0]
            send = self._scans_since_report * scan >= period
        elif mode == 3:
            send = self._sensed != self._reported
        elif mode >= 4:
            send = self._sensed != self._reported and self._stable_scans >= mode - 2
        if send:
            self._scans_since_report = 0
            self._reported = list(self._sensed)
            self.stats["reports"] += 1
            self.write(encode_message(self.status()))


def main(argv: list[str] | None = None) -> None:
    """``python -m drivers.millennium.emulator``: a Millennium board on a pty; prints its path."""
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--scan", type=float, default=None, help="seconds per scan (default: E2ROM scan time)")

    run_cli(lambda args: MillenniumEmulator(scan_interval=args.scan), "Emulated Millennium ChessLink board on a pty",
            argv, options)


if __name__ == "__main__":
    main()
