"""An emulated I²C bus with a DGT 3000 on it (protocols.md §2, §9 emulator checklist).

:class:`Dgt3000Emulator` implements :class:`~drivers.dgt3000_i2c.bus.I2CBus` and is the clock:

* packet level as dgtpicom sees it: every command's CRC is checked; a sleeping or absent
  clock does not acknowledge its address (``write`` returns False);
* a wake ping to 0x28 wakes it and it answers with Hello (to the general call address);
* change state to mode 25 is acked positively (status 0x08) only under central control,
  else negatively; set central control is acked; set-and-run (BCD) sets the times and which
  side counts down, acked with 0x08; display/end display get broadcast acks;
* in mode 25 it sends a Time packet every ``time_interval`` and whenever the lever moves;
  a lever move also sends a Button packet (state bit 0x40). Under central control it does
  not switch sides itself: the host must (the driver does);
* :meth:`switch_off` (the on/off button: a Button packet, then sleep), :meth:`unplug` /
  :meth:`replug` (the clock leaves the bus / comes back asleep).

The bus is called from the driver's worker threads: state is guarded by a lock, and
outgoing packets wait in a thread-safe queue.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections import Counter

from boardd.core.events import ClockSide
from drivers.base import TimeSource
from drivers.dgt3000_i2c.codec import (
    BUTTON_LEVER,
    BUTTON_MINUS,
    BUTTON_ONOFF,
    BUTTON_PLUS,
    Ack,
    Button,
    ChangeState,
    Dgt3000ProtocolError,
    Display,
    EndDisplay,
    Hello,
    HostCommand,
    PowerOff,
    SetAndRun,
    SetCentralControl,
    Time,
    Wake,
    decode_command,
    encode_message,
)

__all__ = ["Dgt3000Emulator"]

class Dgt3000Emulator:
    """A DGT 3000 on an emulated I²C bus; pass ``lambda: emu`` as the driver's bus factory.

    Args:
        time_source: the clock's time line.
        time_interval: seconds between Time packets in mode 25.
        lever_set_left_high: how the lever bit reads (must match the driver's option).
        asleep: the clock starts asleep (needs a wake ping).
    """

    def __init__(self, *, time_source: TimeSource = time.monotonic, time_interval: float = 1.0,
                 lever_set_left_high: bool = True, asleep: bool = True) -> None:
        self._time = time_source
        self.time_interval = time_interval
        self.lever_set_left_high = lever_set_left_high
        self._lock = threading.Lock()
        self._out: queue.Queue[bytes] = queue.Queue()
        self.on_bus = True
        self.awake = not asleep
        self.central_control = False
        self.mode25 = False
        self._left = 0.0
        self._right = 0.0
        self._ref = time_source()
        self.modes = {ClockSide.LEFT: 0, ClockSide.RIGHT: 0}
        self.lever = False
        self._buttons = 0
        self.text = ""
        self._next_time = math.inf
        self.received: list[HostCommand] = []
        self.stats: Counter[str] = Counter()

    # --- the bus (host side) ------------------------------------------------------------------

    def write(self, address: int, data: bytes) -> bool:
        """A master write from the host (the bytes after the address)."""
        with self._lock:
            if not self.on_bus:
                return False
            if address not in (0x08, 0x28) or (address == 0x08 and not self.awake):
                self.stats["nacks"] += 1
                return False
            packet = bytes((address << 1,)) + data
            try:
                command = decode_command(address, packet)
            except Dgt3000ProtocolError:
                self.stats["bad_commands"] += 1
                return True  # the bytes were acknowledged on the wire; the clock ignores them
            self.received.append(command)
            self._handle(command)
            return True

    def receive(self, timeout: float) -> bytes | None:
        """The next packet the clock writes to the host, or ``None`` after *timeout* seconds."""
        deadline = time.monotonic() + timeout
        while True:
            self._tick()
            try:
                return self._out.get_nowait()
            except queue.Empty:
                pass
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                return self._out.get(timeout=min(remaining, 0.01))
            except queue.Empty:
                continue

    def close(self) -> None:
        """The host released the bus."""
        self.stats["closes"] += 1

    # --- clock behaviour --------------------------------------------------------------------

    def _send(self, data: bytes) -> None:
        if self.on_bus:
            self._out.put(data)

    def _ack(self, command: int, status: int, *, broadcast: bool = False) -> None:
        self._send(encode_message(Ack(command, status, broadcast=broadcast)))

    def _handle(self, command: HostCommand) -> None:
        match command:
            case Wake():
                self.awake = True
                self._send(encode_message(Hello(bytes((0x22, 0x01)))))
            case SetCentralControl():
                self.central_control = True
                self._ack(0x0F, 0x08)
            case ChangeState(mode=25):
                if self.central_control:
                    self.mode25 = True
                    self._next_time = self._time()
                    self._ack(0x0B, 0x08)
                else:
                    self._ack(0x0B, 0x00)
            case ChangeState():
                self._ack(0x0B, 0x00)
            case PowerOff():
                self._sleep()
            case SetAndRun(left_s=left, right_s=right, left_mode=lm, right_mode=rm):
                self._settle()
                self._left, self._right = float(left), float(right)
                self.modes = {ClockSide.LEFT: lm, ClockSide.RIGHT: rm}
                self._ack(0x0A, 0x08)
                self._send_time()
            case Display(text=text):
                already = bool(self.text)
                self.text = text
                self._ack(0x06, 0x23 if already else 0x20, broadcast=True)
            case EndDisplay():
                if not self.text:
                    self._ack(0x07, 0x05)
                else:
                    self.text = ""
                    self._ack(0x07, 0x00, broadcast=True)

    def _sleep(self) -> None:
        self.awake = self.mode25 = self.central_control = False
        self._next_time = math.inf

    def _settle(self) -> None:
        now = self._time()
        elapsed, self._ref = now - self._ref, now
        for side in ClockSide:
            mode = self.modes[side]
            delta = -elapsed if mode == 1 else elapsed if mode == 2 else 0.0
            if side is ClockSide.LEFT:
                self._left = max(0.0, self._left + delta)
            else:
                self._right = max(0.0, self._right + delta)

    def time_of(self, side: ClockSide) -> float:
        """Remaining seconds on *side* now."""
        with self._lock:
            self._settle()
            return self._left if side is ClockSide.LEFT else self._right

    def _shown(self) -> tuple[int, int]:
        self._settle()
        return math.ceil(self._left - 1e-9), math.ceil(self._right - 1e-9)

    def _send_time(self) -> None:
        left, right = self._shown()
        self._send(encode_message(Time(left, right, lever=self.lever)))
        self.stats["time_packets"] += 1

    def _tick(self) -> None:
        with self._lock:
            if self.awake and self.mode25 and self._time() >= self._next_time:
                self._next_time = self._time() + self.time_interval
                self._send_time()

    # --- the script API ---------------------------------------------------------------------

    @property
    def lever_high(self) -> ClockSide:
        """The side whose lever is up."""
        return ClockSide.LEFT if self.lever == self.lever_set_left_high else ClockSide.RIGHT

    def press(self, side: ClockSide) -> None:
        """The player on *side* presses their lever (it goes down, the other side's comes up)."""
        with self._lock:
            new_lever = (side is ClockSide.RIGHT) == self.lever_set_left_high
            if new_lever == self.lever:
                self.stats["presses_ignored"] += 1
                return
            previous = self._buttons | (BUTTON_LEVER if self.lever else 0)
            self.lever = new_lever
            current = self._buttons | (BUTTON_LEVER if self.lever else 0)
            self.stats["presses"] += 1
            if self.awake and self.mode25:
                self._send(encode_message(Button(current, previous)))
                self._send_time()

    def press_button(self, bits: int) -> None:
        """Press and release buttons (``BUTTON_*`` bits)."""
        with self._lock:
            lever = BUTTON_LEVER if self.lever else 0
            if self.awake:
                self._send(encode_message(Button(bits | lever, lever)))
                self._send(encode_message(Button(lever, bits | lever)))

    def set_by_hand(self, side: ClockSide, seconds: int, *, step: int = 60) -> None:
        """The arbiter sets a stopped side's time on the clock itself: *seconds* more (fewer if negative) in steps
        of *step* seconds, each a press of plus (or minus) and its Button packets, then a Time packet showing the
        step (the Time packet has no run/pause bit, protocols.md §2.4: the time of a stopped side going down)."""
        if step <= 0:
            raise ValueError(f"step must be positive, got {step}")
        sign = 1 if seconds >= 0 else -1
        left = abs(seconds)
        while left > 0:
            part = min(step, left)
            left -= part
            self.press_button(BUTTON_PLUS if sign > 0 else BUTTON_MINUS)
            with self._lock:
                self._settle()
                if self.modes[side]:
                    raise RuntimeError("the clock's times are set by hand only while that side is stopped")
                if side is ClockSide.LEFT:
                    self._left = max(0.0, self._left + sign * part)
                else:
                    self._right = max(0.0, self._right + sign * part)
                self.stats["set_by_hand"] += 1
                if self.awake and self.mode25:
                    self._send_time()

    def switch_off(self) -> None:
        """The on/off button: the clock reports it, then sleeps until woken."""
        self.press_button(BUTTON_ONOFF)
        with self._lock:
            self._sleep()

    def unplug(self) -> None:
        """The clock leaves the bus (cable pulled)."""
        with self._lock:
            self.on_bus = False
            self._sleep()

    def replug(self) -> None:
        """The clock is back on the bus, asleep."""
        with self._lock:
            self.on_bus = True

    def set_running(self, side: ClockSide | None) -> None:
        """Make *side* count down (as a set-and-run would)."""
        with self._lock:
            self._settle()
            self.modes = {s: 1 if s is side else 0 for s in ClockSide}
