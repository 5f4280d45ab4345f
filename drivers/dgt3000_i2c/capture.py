"""Replaying DGT 3000 I²C captures (:mod:`drivers.capture`): packets back to back -> clock readings."""

from __future__ import annotations

from collections.abc import Sequence

from boardd.events import BoardEvent
from drivers.dgt3000_i2c.codec import Ack, Button, Dgt3000Decoder, Dgt3000Message, Hello, Time, UnknownPacket
from drivers.dgt3000_i2c.mapping import ClockButton, Dgt3000Mapper

__all__ = ["Dgt3000CaptureCodec"]


class Dgt3000CaptureCodec:
    """Time and lever packets become clock readings (buttons are operator input, left out)."""

    def __init__(self) -> None:
        self.decoder = Dgt3000Decoder()
        self.mapper = Dgt3000Mapper()

    def decode(self, data: bytes) -> Sequence[Dgt3000Message]:
        """Decode received bytes."""
        return self.decoder.feed(data)

    def spacing(self, message: object) -> float:
        """One Time packet per second in raw captures; other packets 10 ms."""
        return 1.0 if isinstance(message, Time) else 0.01

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """Clock readings of *message*."""
        if not isinstance(message, (Ack, Button, Hello, Time, UnknownPacket)):
            return []
        return [e for e in self.mapper.map(message, at) if not isinstance(e, ClockButton)]

    def sent(self, data: bytes) -> None:
        """Host packets change nothing in the replay."""
