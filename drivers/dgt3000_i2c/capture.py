"""Replaying DGT 3000 I²C captures (:mod:`drivers.capture`): packets back to back -> clock readings.

``boardd record --driver dgt3000-i2c`` writes every packet the clock sent as ``rx`` (dest
byte first) and every command the host wrote as ``tx`` (the whole packet, dest byte first):
a Set-and-run among them tells the replay which side the host started, as it told the
driver (under central control the clock runs what it is told).
"""

from __future__ import annotations

from collections.abc import Sequence

from boardd.core.events import BoardEvent, ClockSide
from drivers.dgt3000_i2c.codec import (
    Ack,
    Button,
    Dgt3000Decoder,
    Dgt3000Message,
    Dgt3000ProtocolError,
    Hello,
    SetAndRun,
    Time,
    UnknownPacket,
    decode_command,
)
from drivers.dgt3000_i2c.mapping import ClockButton, Dgt3000Mapper

__all__ = ["Dgt3000CaptureCodec"]


class Dgt3000CaptureCodec:
    """Time and lever packets become clock readings (buttons are operator input, left out).

    Args:
        switch_on_lever: the recording driver started the side whose lever went up (its default).
    """

    def __init__(self, *, switch_on_lever: bool = True) -> None:
        self.switch_on_lever = switch_on_lever
        self.decoder = Dgt3000Decoder()
        self.mapper = Dgt3000Mapper()

    def decode(self, data: bytes) -> Sequence[Dgt3000Message]:
        """Decode received bytes."""
        return self.decoder.feed(data)

    def spacing(self, message: object) -> float:
        """One Time packet per second in raw captures; other packets 10 ms."""
        return 1.0 if isinstance(message, Time) else 0.01

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """Clock readings of *message*; a lever press starts the other side, as the driver does it."""
        if not isinstance(message, (Ack, Button, Hello, Time, UnknownPacket)):
            return []
        if isinstance(message, Button) and self.switch_on_lever:
            side = self.mapper.lever_switch(message)
            if side is not None:
                self.mapper.note_running(side)
        return [e for e in self.mapper.map(message, at) if not isinstance(e, ClockButton)]

    def link_changed(self, up: bool, at: float) -> list[BoardEvent]:
        """The clock was lost: as the driver, forget its state (and a partial packet)."""
        if not up:
            self.decoder.reset()
            self.mapper.reset()
        return []

    def sent(self, data: bytes) -> None:
        """A Set-and-run the host sent sets the running side; other host packets change nothing."""
        if not data:
            return
        try:
            command = decode_command(data[0] >> 1, data)
        except Dgt3000ProtocolError:
            return
        if isinstance(command, SetAndRun):
            running = (ClockSide.LEFT if command.left_mode == 1 else ClockSide.RIGHT if command.right_mode == 1
                       else None)
            self.mapper.note_running(running)
