"""A byte-level DGT board + clock on a pseudo-terminal, for tests, benchmarks and demos.

Theory of operation
-------------------
:class:`DgtEmulator` opens a pty (``os.openpty()``) and publishes its slave
side under a stable symlink (:attr:`DgtEmulator.path`, like a
``/dev/serial/by-id/...`` link), so the real driver opens it with pyserial
exactly as it would open hardware. It then behaves like the board and the
clock as protocols.md §1 and the real captures describe them:

* **Modes** (§1.6): IDLE after power-up or ``40``; ``44`` UPDATE_BOARD (field
  updates only), ``43`` UPDATE (field updates, BWTIME at least every second,
  clock acks) and ``4b`` UPDATE_NICE (BWTIME only when something shown changed,
  clock acks). ``41``/``42``/``45``/``47``/``48``/``49``/``4c``/``4d``/``55`` are answered at
  once in every mode.
* **Scans**: every ``scan_interval`` (default 200-250 ms, jittered) the sensors
  are read: every square whose physical content differs from the last scan is
  reported as a field update, *in random order within the scan* (the order is
  undocumented, §9.14). So a move made within one scan may report the new
  square before the old one, a capture is a replacement (the victim's square is
  never seen empty), and :meth:`slide` reports the intermediate squares.
* **Clock**: the running side counts down in real time; BWTIME goes out after
  the scan's field updates, once per displayed-second change and whenever the
  status byte changes. The status byte follows the capture (§1.7.1): D0
  running, D1 lever high on the right, D3/D4 the side to move (left/right),
  D5 no clock. A :meth:`press` is only visible through that byte. SetNRun
  (binary minutes/seconds) sets the times and the running side; acks are sent
  (only in UPDATE/UPDATE_NICE) after ``ack_delay``. As on the real clock (§1.8),
  SetNRun is processed only in mode 23 (:attr:`DgtEmulator.clock_mode`): in any
  other mode the clock keeps its times and answers with an error ack (``ack0`` 0x40).
* **EEPROM log** (§1.9): with ``host_timeout`` set, bytes written to the host and left unread
  for that long mean the host is gone (crashed, rebooting): the unread bytes are lost (as on a USB
  reset), the board falls back to IDLE and logs every field change and every lever change (the
  presser's time as shown when the lever went down) in its EEPROM ring buffer, together with the
  changes written to the host in the last ``2 * host_timeout`` before (a host that died may have read
  them without keeping them), until a host sets an update mode again.
  ``49`` sends the log and appends ``EE_DOWNLOADED``: the records after the last such tag are the
  ones no host has seen (:attr:`DgtEmulator.ee_log`).
* **Hot-plug**: :meth:`unplug` closes the pty and removes the link (the host's
  reads fail); the physical board keeps changing under the script; :meth:`replug`
  opens a new pty under the same path, and the board starts again in IDLE.

The script API (:meth:`lift`, :meth:`place`, :meth:`move`, :meth:`press` ...)
changes the physical state at once; :meth:`wait_scan` waits until a scan has
reported it. :meth:`play` plays a whole ``chess.pgn`` game with clock presses.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import logging
import math
import random
import signal
import sys
import termios
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import chess
import chess.pgn

from boardd.core.errors import DriverError
from boardd.core.events import BoardSnapshot, ClockReading, ClockSide, Content, Link, LinkChanged, Marker, SquareChanged
from drivers._pty import PtyPort, play_until_stopped
from drivers.base import TimeSource
from drivers.dgt.codec import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    ClockAck,
    ClockAscii,
    ClockBeep,
    ClockButtonRequest,
    ClockDisplayXL,
    ClockEnd,
    ClockSetNRun,
    ClockTimes,
    ClockVersionRequest,
    Command,
    DgtMessage,
    EEClock,
    EEFieldChange,
    EEMoves,
    EERecord,
    EETag,
    EETagRecord,
    FieldUpdate,
    HardwareVersion,
    HostCommand,
    HostDecoder,
    LongSerialNr,
    SerialNr,
    SetNRunMode,
    Trademark,
    Version,
    encode_ee_log,
    encode_message,
)
from drivers.dgt.mapping import code_from_content, square_to_field

__all__ = ["DgtEmulator", "Mode"]

_LOGGER = logging.getLogger(__name__)


class Mode:
    """Board modes (§1.6)."""

    IDLE = "idle"
    UPDATE_BOARD = "update_board"
    UPDATE = "update"
    UPDATE_NICE = "update_nice"


_ACK_MODES = frozenset({Mode.UPDATE, Mode.UPDATE_NICE})
_BUTTON_CODES = {"back": 0x31, "plus": 0x32, "run": 0x33, "minus": 0x34, "ok": 0x35}


class DgtEmulator(PtyPort):
    """A DGT e-board with a clock, on a pty. Use as ``async with DgtEmulator() as emu:``.

    Args:
        scan_interval: seconds per sensor scan, or a (low, high) range drawn per scan.
        seed: seed of the scan order and jitter.
        time_source: the clock's time line (monotonic seconds).
        ack_delay: delay of clock acks.
        clock: a clock is plugged into the board.
        clock_version: (major, minor) of the clock (2.x is a DGT 3000).
        increment: seconds added to a side when it presses (Fischer).
        fen: initial placement (board frame: White at a1).
        directory: where the stable symlink is created (a temporary directory by default).
        trickle: seconds between bytes, to deliver messages byte by byte (0.00104 is 9600 baud).
        noise: probability of 1-6 bytes of line noise before each write (never a valid frame).
        host_timeout: bytes left unread this long mean the host is gone: the board logs in its EEPROM
            (None: never; the host is assumed to read everything).
    """

    _tmp_prefix = "dgt-emu-"

    def __init__(
        self,
        *,
        scan_interval: float | tuple[float, float] = (0.20, 0.25),
        seed: int = 0,
        time_source: TimeSource = time.monotonic,
        ack_delay: float = 0.05,
        clock: bool = True,
        clock_version: tuple[int, int] = (2, 0),
        increment: float = 0.0,
        fen: str = chess.STARTING_BOARD_FEN,
        version: tuple[int, int] = (3, 10),
        serial: str = "12345",
        long_serial: str | None = "3.10A12345",
        directory: Path | None = None,
        trickle: float = 0.0,
        noise: float = 0.0,
        host_timeout: float | None = None,
    ) -> None:
        super().__init__(directory=directory, link_name="usb-Digital_Game_Technology_DGT_Board-if00")
        self._scan_range = scan_interval if isinstance(scan_interval, tuple) else (scan_interval, scan_interval)
        self._rng = random.Random(seed)
        self._time = time_source
        self.ack_delay = ack_delay
        self.clock_connected = clock
        self.clock_version = clock_version
        self.increment = increment
        self.version = version
        self.serial = serial
        self.long_serial = long_serial
        board = chess.BaseBoard(fen)
        self.physical: list[Content] = [board.piece_at(sq) for sq in chess.SQUARES]
        self._sensed: list[Content] = list(self.physical)
        self.mode = Mode.IDLE
        self.stats: Counter[str] = Counter()
        self.received: list[HostCommand] = []
        self.received_at: list[float] = []
        #: How many of the next clock commands the clock misses (no effect, no ack).
        self.drop_acks = 0
        #: The clock's timing mode (its mode selector); SetNRun works only in mode 23 (protocols.md §1.8).
        self.clock_mode = 23
        # Clock state: remaining seconds at ``_clock_ref``.
        self._left = 0.0
        self._right = 0.0
        self._clock_ref = time_source()
        self.running: ClockSide | None = None
        self.lever_high = ClockSide.LEFT
        self._flag = {ClockSide.LEFT: False, ClockSide.RIGHT: False}
        self._last_bwtime: bytes | None = None
        self._last_bwtime_at = -math.inf
        # I/O.
        self._decoder = HostDecoder()
        self._scan_done = asyncio.Event()
        self._scans = 0
        self._pending_acks: set[asyncio.TimerHandle] = set()
        #: Seconds between bytes (0: write messages at once); 0.00104 is 9600 baud.
        self.trickle = trickle
        #: Probability of line noise (1-6 garbage bytes) before each write.
        self.noise = noise
        self._noise_rng = random.Random(seed + 1)
        self._trickle_buf = bytearray()
        self._trickle_handle: asyncio.TimerHandle | None = None
        #: Called with every chunk written to the host (benchmarks measure latency with it).
        self.on_write: list[Callable[[bytes], None]] = []
        # EEPROM (§1.9): the ring buffer's records, oldest first.
        self.host_timeout = host_timeout
        self.ee_log: list[EERecord] = [EETagRecord(tag=EETag.POWERUP)]
        if fen == chess.STARTING_BOARD_FEN:
            self.ee_log.append(EETagRecord(tag=EETag.BEGINPOS))
        #: The board is logging: no host reads it.
        self.recording = False
        self._unread_since: float | None = None
        #: Records of what was written to the host but not seen read yet: (scan number, record).
        self._unconfirmed: list[tuple[int, float, EERecord]] = []

    # --- lifecycle -----------------------------------------------------------------

    def _on_plug(self) -> None:
        self._decoder = HostDecoder()

    def _close_pty(self) -> None:
        for handle in self._pending_acks:
            handle.cancel()
        self._pending_acks.clear()
        if self._trickle_handle is not None:
            self._trickle_handle.cancel()
            self._trickle_handle = None
        self._trickle_buf.clear()
        super()._close_pty()

    def unplug(self) -> None:
        """Pull the USB cable: the pty closes and the device path disappears."""
        self._close_pty()
        self.stats["unplugs"] += 1

    def replug(self) -> None:
        """Plug the board back in: a new pty under the same path; the board restarts in IDLE."""
        if self.plugged:
            return
        self.mode = Mode.IDLE
        self._last_bwtime = None
        self._sensed = list(self.physical)
        self._open_pty()
        self.stats["replugs"] += 1

    # --- bytes ---------------------------------------------------------------------

    def _on_host_bytes(self, data: bytes) -> None:
        now = self._time()
        for command in self._decoder.feed(data):
            self.received.append(command)
            self.received_at.append(now)
            self._handle(command)

    def send(self, message: DgtMessage) -> None:
        """Write one board message to the host (dropped while unplugged)."""
        self._write(encode_message(message))

    def _write(self, data: bytes) -> None:
        if self._master is None or self.hung:
            return
        for hook in self.on_write:
            hook(data)
        if self.noise and self._noise_rng.random() < self.noise:
            # Line noise between messages: bytes without an id, or a stray unknown id 0xff.
            garbage = bytes(self._noise_rng.choice((0xFF, *range(0x80))) for _ in range(self._noise_rng.randint(1, 6)))
            self.stats["noise_bytes"] += len(garbage)
            data = garbage + data
        if self.trickle > 0:
            self._trickle_buf += data
            if self._trickle_handle is None:
                self._trickle_one()
            return
        self._send_raw(data)

    def _trickle_one(self) -> None:
        """Write one byte, then the next one ``trickle`` seconds later (a slow line)."""
        self._trickle_handle = None
        if not self._trickle_buf or self._master is None:
            self._trickle_buf.clear()
            return
        self._send_raw(bytes(self._trickle_buf[:1]))
        del self._trickle_buf[:1]
        if self._trickle_buf:
            assert self._loop is not None
            self._trickle_handle = self._loop.call_later(self.trickle, self._trickle_one)

    # --- host commands ---------------------------------------------------------------

    def _handle(self, command: HostCommand) -> None:
        match command:
            case Command.RESET:
                self.mode = Mode.IDLE
            case Command.SEND_UPDATE:
                self.mode = Mode.UPDATE
                self._host_back()
            case Command.SEND_UPDATE_BRD:
                self.mode = Mode.UPDATE_BOARD
                self._host_back()
            case Command.SEND_UPDATE_NICE:
                self.mode = Mode.UPDATE_NICE
                self._host_back()
            case Command.SEND_CLK:
                self._send_bwtime()
            case Command.SEND_BRD:
                self.send(self.dump())
            case Command.RETURN_SERIALNR:
                self.send(SerialNr(text=self.serial))
            case Command.RETURN_LONG_SERIALNR if self.long_serial is not None:  # older firmware: no answer
                self.send(LongSerialNr(text=self.long_serial))
            case Command.SEND_VERSION:
                self.send(Version(major=self.version[0], minor=self.version[1]))
            case Command.SEND_HARDWARE_VERSION:
                self.send(HardwareVersion(major=1, minor=0))
            case Command.RETURN_BUSADRES:
                self.send(BusAddress(address=int(self.serial) & 0x3FFF if self.serial.isdigit() else 0))
            case Command.SEND_TRADEMARK:
                self.send(Trademark(text="Digital Game Technology\r\nboardd emulator"))
            case Command.SEND_BATTERY_STATUS:
                self.send(BatteryStatus(percent=87, data=bytes((87, 0x7F, 0x7F, 1, 2, 0, 0, 0, 2))))
            case Command.SEND_EE_MOVES:
                self.send(EEMoves(data=encode_ee_log(self.ee_log)))
                self.ee_log.append(EETagRecord(tag=EETag.DOWNLOADED))
                self.stats["ee_downloads"] += 1
            case ClockSetNRun() | ClockEnd() | ClockVersionRequest() | ClockButtonRequest() | ClockBeep() \
                    | ClockAscii() | ClockDisplayXL():
                self._clock_command(command)
            case _:
                self.stats["ignored_commands"] += 1

    def _clock_command(self, command: HostCommand) -> None:
        if not self.clock_connected:
            return
        if self.drop_acks > 0:  # the clock misses this command: no effect, no ack
            self.drop_acks -= 1
            self.stats["missed_clock_commands"] += 1
            return
        ack0, ack2 = 0x10, 0
        match command:
            case ClockSetNRun() if self.clock_mode != 23:  # refused: the times stay as they are
                self.stats["refused_clock_commands"] += 1
                ack0, sub = 0x40, 0x0A
            case ClockSetNRun(left_s=left, right_s=right, mode=mode):
                self._settle_clock()
                self._left, self._right = float(left), float(right)
                self._flag = {ClockSide.LEFT: False, ClockSide.RIGHT: False}
                if mode & SetNRunMode.PAUSE:
                    self.running = None
                elif mode & SetNRunMode.LEFT_RUNS:
                    self.running = self.lever_high = ClockSide.LEFT
                elif mode & SetNRunMode.RIGHT_RUNS:
                    self.running = self.lever_high = ClockSide.RIGHT
                sub = 0x0A
            case ClockVersionRequest():
                sub = 0x09
                ack2 = (self.clock_version[0] << 4) | self.clock_version[1]
            case ClockEnd():
                sub = 0x03
            case ClockButtonRequest():
                sub = 0x08
            case ClockBeep():
                sub = 0x0B
            case ClockAscii():
                sub = 0x0C
            case _:
                sub = 0x01
        if self.mode in _ACK_MODES:
            self._ack_later(ClockAck(ack0=ack0, ack1=sub, ack2=ack2, ack3=0))

    def _ack_later(self, ack: ClockAck) -> None:
        assert self._loop is not None

        def fire() -> None:
            self._pending_acks.discard(handle)
            self.send(ack)

        handle = self._loop.call_later(self.ack_delay, fire)
        self._pending_acks.add(handle)

    # --- board ------------------------------------------------------------------------

    def dump(self) -> BoardDump:
        """The dump the board would send now (the last scan)."""
        codes = [0] * 64
        for square, content in enumerate(self._sensed):
            codes[square_to_field(square)] = 0x7F if content is Marker.UNKNOWN else code_from_content(content)
        return BoardDump(codes=tuple(codes))

    def lift(self, square: chess.Square) -> None:
        """Lift whatever stands on *square*."""
        self.physical[square] = None

    def place(self, square: chess.Square, content: Content) -> None:
        """Put *content* on *square* (replacing what stood there: a capture as the board sees it)."""
        self.physical[square] = content

    def move(self, from_square: chess.Square, to_square: chess.Square) -> None:
        """Move a piece within one scan (the two reports come in either order)."""
        piece = self.physical[from_square]
        self.physical[from_square] = None
        self.physical[to_square] = piece

    async def slide(self, from_square: chess.Square, to_square: chess.Square) -> None:
        """Slide a piece along a line, one square per scan, so the intermediate squares are reported."""
        path = list(chess.SquareSet(chess.between(from_square, to_square)))  # ascending square numbers
        if to_square < from_square:
            path.reverse()
        current = from_square
        for square in [*path, to_square]:
            self.move(current, square)
            current = square
            await self.wait_scan()

    async def wait_scan(self, count: int = 1) -> None:
        """Wait until *count* scans have completed (and their messages were written).

        Raises:
            RuntimeError: the emulator is not running.
            TimeoutError: the scans did not come (the event loop is starved), after a generous bound.
        """
        if self._task is None or self._task.done():
            raise RuntimeError("the emulator is not running (use it as an async context manager)")
        target = self._scans + count
        async with asyncio.timeout(5.0 + 20 * count * self._scan_range[1]):
            while self._scans < target:
                self._scan_done.clear()
                await self._scan_done.wait()

    # --- EEPROM log ----------------------------------------------------------------------

    def _unread(self) -> int:
        """Bytes written to the host that it has not read yet (the pty's queue and ours)."""
        if self._slave is None:
            return 0
        try:
            raw = fcntl.ioctl(self._slave, termios.FIONREAD, b"\0\0\0\0")
        except OSError:
            return 0
        return int.from_bytes(raw, sys.byteorder) + len(self._out)

    def _check_host(self, scan: int) -> None:
        """Is a host still reading? Unread bytes for ``host_timeout`` mean it is gone."""
        if self.host_timeout is None or self.recording or self.mode == Mode.IDLE:
            return
        if self._unread() == 0:
            self._unread_since = None
            # read, but a host that dies may not have kept it yet: the board keeps it a while longer
            keep_after = self._time() - 2 * self.host_timeout
            self._unconfirmed = [(n, t, r) for n, t, r in self._unconfirmed if n >= scan or t >= keep_after]
            return
        now = self._time()
        if self._unread_since is None:
            self._unread_since = now
        elif now - self._unread_since >= self.host_timeout:
            self._host_gone()

    def _host_gone(self) -> None:
        """Nobody reads: what was not read is lost, the board logs from now on (IDLE, as after a reset)."""
        if self._slave is not None:
            with contextlib.suppress(OSError):
                termios.tcflush(self._slave, termios.TCIFLUSH)
        self._out.clear()
        self._trickle_buf.clear()
        self.mode = Mode.IDLE
        self.recording = True
        self._unread_since = None
        self.ee_log.extend(r for _, _, r in self._unconfirmed)
        self._unconfirmed.clear()
        self.stats["host_gone"] += 1

    def _host_back(self) -> None:
        self.recording = False
        self._unread_since = None
        self._unconfirmed.clear()

    def _note(self, record: EERecord, scan: int) -> None:
        """A change the host should see: logged at once while no host reads, else kept until it is read."""
        if self.recording:
            self.ee_log.append(record)
        elif self.host_timeout is not None and self.mode != Mode.IDLE:
            self._unconfirmed.append((scan, self._time(), record))

    def _scan(self) -> None:
        scan = self._scans + 1
        self._check_host(scan)
        changed = [sq for sq in chess.SQUARES if self.physical[sq] != self._sensed[sq]]
        self._rng.shuffle(changed)
        updates: list[bytes] = []
        for square in changed:
            content = self.physical[square]
            self._sensed[square] = content
            code = 0x7F if content is Marker.UNKNOWN else code_from_content(content)
            updates.append(encode_message(FieldUpdate(field=square_to_field(square), code=code)))
            if content is not Marker.UNKNOWN:
                self._note(EEFieldChange(field=square_to_field(square), code=code), scan)
        if updates and self.mode != Mode.IDLE:
            self._write(b"".join(updates))
            self.stats["field_updates"] += len(updates)

    async def _scan_loop(self) -> None:
        while True:
            low, high = self._scan_range
            await asyncio.sleep(self._rng.uniform(low, high))
            if self.plugged:
                try:
                    self._scan()
                    self._tick_clock()
                except Exception:  # an emulator bug must not stop the scans (and every waiting script)
                    self.stats["scan_errors"] += 1
                    _LOGGER.exception("DGT emulator scan failed")
            self._scans += 1
            self._scan_done.set()

    # --- clock ----------------------------------------------------------------------------

    def _settle_clock(self) -> None:
        """Bring the remaining times up to now."""
        now = self._time()
        elapsed = max(0.0, now - self._clock_ref)
        self._clock_ref = now
        if self.running is ClockSide.LEFT:
            self._left = max(0.0, self._left - elapsed)
        elif self.running is ClockSide.RIGHT:
            self._right = max(0.0, self._right - elapsed)
        for side in (ClockSide.LEFT, ClockSide.RIGHT):
            if self.time_of(side, settled=True) <= 0 and self.running is side:
                self._flag[side] = True

    def time_of(self, side: ClockSide, *, settled: bool = False) -> float:
        """Remaining seconds on *side*."""
        if not settled:
            self._settle_clock()
        return self._left if side is ClockSide.LEFT else self._right

    def set_clock(self, left: float, right: float, running: ClockSide | None = None) -> None:
        """Set the clock by hand (as an arbiter does on the clock's buttons)."""
        self._settle_clock()
        self._left, self._right = float(left), float(right)
        self.running = running
        if running is not None:
            self.lever_high = running

    def start(self, side: ClockSide) -> None:
        """Start *side*'s time (the opponent presses to start the game)."""
        self._settle_clock()
        self.running = self.lever_high = side

    def pause(self) -> None:
        """Stop the clock (the start/stop button)."""
        self._settle_clock()
        self.running = None

    def press(self, side: ClockSide, *, remaining: float | None = None) -> bool:
        """*side* presses its lever: its time stops (plus the increment), the other side runs.

        Args:
            side: the side pressing.
            remaining: set the presser's remaining time (before the increment), e.g. from a PGN ``%clk``.

        Returns:
            False when the lever was already down on that side (nothing changes).
        """
        self._settle_clock()
        if self.lever_high is not side:
            self.stats["ignored_presses"] += 1
            return False
        if remaining is not None:
            if side is ClockSide.LEFT:
                self._left = float(remaining)
            else:
                self._right = float(remaining)
        shown = min(10 * 3600 - 1, math.ceil(self.time_of(side, settled=True) - 1e-9))
        self._note(EEClock(left=side is ClockSide.LEFT, seconds=max(0, shown)), self._scans + 1)
        if self.running is side and self.increment:
            if side is ClockSide.LEFT:
                self._left += self.increment
            else:
                self._right += self.increment
        self.lever_high = side.other
        if self.running is not None:
            self.running = side.other
        self.stats["presses"] += 1
        return True

    def press_button(self, name: str) -> None:
        """Press a clock button (back, plus, run, minus, ok): an auto ack in UPDATE/NICE modes."""
        if self.mode in _ACK_MODES and self.clock_connected:
            self.send(ClockAck(ack0=0x10, ack1=0x88, ack2=0x05, ack3=_BUTTON_CODES[name]))

    def clock_times(self) -> ClockTimes:
        """The BWTIME the clock would send now."""
        self._settle_clock()
        status = 0
        if not self.clock_connected:
            return ClockTimes(right_s=0, left_s=0, right_flags=0, left_flags=0, status=0x20)
        if self.running is not None:
            status |= 0x01
        if self.lever_high is ClockSide.RIGHT:
            status |= 0x02 | 0x10
        else:
            status |= 0x08

        def shown(value: float) -> int:
            return min(10 * 3600 - 1, math.ceil(value - 1e-9))

        def flags(side: ClockSide) -> int:
            return 0x50 if self._flag[side] else 0

        return ClockTimes(right_s=shown(self._right), left_s=shown(self._left), right_flags=flags(ClockSide.RIGHT),
                          left_flags=flags(ClockSide.LEFT), status=status)

    def _send_bwtime(self) -> None:
        data = encode_message(self.clock_times())
        self._last_bwtime = data
        self._last_bwtime_at = self._time()
        self._write(data)
        self.stats["bwtime"] += 1

    def _tick_clock(self) -> None:
        if self.mode not in _ACK_MODES:
            return
        data = encode_message(self.clock_times())
        if data != self._last_bwtime or (self.mode == Mode.UPDATE and self._time() - self._last_bwtime_at >= 1.0):
            self._send_bwtime()

    # --- whole games ------------------------------------------------------------------------

    async def play(
        self,
        game: chess.pgn.Game,
        *,
        white_side: ClockSide = ClockSide.LEFT,
        think_scans: int = 1,
        pause_scans: int = 1,
        use_clk: bool = True,
        unplug_at_ply: Iterable[int] = (),
        unplugged_scans: int = 3,
        reconnect_scans: int = 500,
    ) -> int:
        """Play *game* on the board with clock presses; returns the number of plies played.

        Each move is made on the board (castling king first, en passant with the
        victim lifted, promotion placing the new piece), reported by a scan, then the
        mover presses (with the PGN ``%clk`` as the remaining time when present) after
        *think_scans* scans, and the opponent moves *pause_scans* scans after the press.
        For every ply in *unplug_at_ply* the board is unplugged before that move is
        made, the move is made while it is away, the board is plugged back in after
        *unplugged_scans* scans, and the mover presses once the host has reconnected
        (the clock hangs on the board's jack: a press while unplugged would be unseen).
        """
        unplug = set(unplug_at_ply)
        board = game.board()
        if self.running is None:
            self.start(white_side)
        ply = 0
        for node in game.mainline():
            move = node.move
            away = ply in unplug
            if away:
                self.unplug()
            self._apply(board, move)
            await self.wait_scan(think_scans)
            if away:
                await self.wait_scan(unplugged_scans)
                self.replug()
                await self.wait_host(reconnect_scans)
            mover = white_side if board.turn == chess.WHITE else white_side.other
            clk = node.clock() if use_clk else None
            self.press(mover, remaining=clk)
            board.push(move)
            ply += 1
            await self.wait_scan(pause_scans)
        return ply

    async def perform(self, events: Iterable[object], *, speed: float = 1.0) -> int:
        """Act out a stream of :mod:`boardd.core.events` (e.g. ``drivers.sim.simulate_game(...).events``) physically.

        Square changes become placements/lifts (the scans then report them with the DGT
        dynamics: changes quicker than a scan merge, as on a real board); clock readings set
        the clock (times, running side, lever, flags); a board snapshot sets the whole board;
        ``LinkChanged(BOARD)`` unplugs/replugs. Other events (arbiter commands) are skipped.
        Event times are followed in real time divided by *speed*. Returns the events acted out.
        """
        loop = asyncio.get_running_loop()
        first_at: float | None = None
        start = loop.time()
        acted = 0
        for event in events:
            at = getattr(event, "at", None)
            if not isinstance(at, (int, float)):
                continue
            if first_at is None:
                first_at = at
            delay = start + (at - first_at) / speed - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            match event:
                case SquareChanged(square=square, content=content):
                    self.physical[square] = content
                case BoardSnapshot(squares=squares):
                    self.physical = list(squares)
                case ClockReading() if event.connected:
                    self._settle_clock()
                    self._left = event.left if event.left is not None else self._left
                    self._right = event.right if event.right is not None else self._right
                    self.running = event.running
                    self.lever_high = event.lever_high or self.lever_high
                    self._flag = {ClockSide.LEFT: event.left_flag, ClockSide.RIGHT: event.right_flag}
                case LinkChanged(link=Link.BOARD, up=False):
                    self.unplug()
                case LinkChanged(link=Link.BOARD, up=True):
                    self.replug()
                case _:
                    continue
            acted += 1
        return acted

    async def wait_host(self, max_scans: int = 500) -> bool:
        """Wait until the host has put the board in an update mode (it reconnected); False on giving up."""
        for _ in range(max_scans):
            if self.mode in (Mode.UPDATE, Mode.UPDATE_NICE, Mode.UPDATE_BOARD):
                await self.wait_scan()
                return True
            await self.wait_scan()
        return False

    def _apply(self, board: chess.Board, move: chess.Move) -> None:
        piece = board.piece_at(move.from_square)
        if board.is_castling(move):
            rank = chess.square_rank(move.from_square)
            kingside = board.is_kingside_castling(move)
            rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, rank)
            rook = board.piece_at(rook_from)
            self.lift(move.from_square)
            self.lift(rook_from)
            self.place(chess.square(6 if kingside else 2, rank), piece)
            self.place(chess.square(5 if kingside else 3, rank), rook)
            return
        if board.is_en_passant(move):
            self.lift(chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square)))
        self.lift(move.from_square)
        if move.promotion and piece is not None:
            piece = chess.Piece(move.promotion, piece.color)
        self.place(move.to_square, piece)


def _load_game(path: str, index: int) -> chess.pgn.Game:
    from drivers.sim import load_pgn_game  # noqa: PLC0415 (only the command line needs it)

    try:
        return load_pgn_game(path, index + 1)
    except DriverError as exc:
        raise SystemExit(str(exc)) from exc


async def _serve(args: argparse.Namespace) -> None:
    game = _load_game(args.pgn, args.game) if args.pgn else None
    # SIGINT/SIGTERM stop the emulator at any point, during the game too (the pty closed, exit 0).
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with DgtEmulator(directory=Path(args.directory) if args.directory else None) as emu:
        emu.set_clock(args.seconds, args.seconds)
        print(emu.path, flush=True)

        async def play() -> None:
            if game is not None:
                await emu.wait_host()
                await emu.play(game, think_scans=args.think_scans, pause_scans=args.think_scans)
            # A line on stdin, or its end (the parent went away), stops too; a stdin that cannot be
            # watched (a regular file, closed) leaves the signals.
            with contextlib.suppress(OSError, ValueError):
                loop.add_reader(sys.stdin.fileno(), stop.set)
            await stop.wait()

        await play_until_stopped(play(), stop)


def main(argv: list[str] | None = None) -> None:
    """``python -m drivers.dgt.emulator``: an emulated DGT board on a pty; prints its path.

    Point ``boardd run``/``record``/``ports --probe`` at the printed path. With ``--pgn``
    the board plays that game (with clock presses) once a host has connected.
    """
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0] if main.__doc__ else None)
    parser.add_argument("--directory", help="where to create the device link (default: a temporary directory)")
    parser.add_argument("--seconds", type=int, default=5400, help="clock time of each side")
    parser.add_argument("--pgn", help="play this PGN file's game")
    parser.add_argument("--game", type=int, default=0, help="index of the game in the PGN file")
    parser.add_argument("--think-scans", type=int, default=5, help="scans between a move and the press")
    args = parser.parse_args(argv)
    asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
