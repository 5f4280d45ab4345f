"""Replaying Chessnut captures (:mod:`drivers.capture`): reports stored back to back."""

from __future__ import annotations

from collections.abc import Sequence

from boardd.core.events import BoardEvent
from drivers.chessnut.codec import BoardFrame, ChessnutDecoder
from drivers.millennium.capture import SnapshotCaptureCodec

__all__ = ["ChessnutCaptureCodec"]


class ChessnutCaptureCodec(SnapshotCaptureCodec):
    """Board frames become snapshots (0.2 s per frame in raw captures)."""

    SCAN = 0.2

    def __init__(self) -> None:
        super().__init__()
        self.decoder = ChessnutDecoder()

    def decode(self, data: bytes) -> Sequence[object]:
        """Decode received bytes (USB reports keep their padding: it is skipped as garbage)."""
        return self.decoder.feed(data)

    def _reset(self) -> None:
        super()._reset()
        self.decoder.reset()

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """A snapshot for a changed frame."""
        return self.snapshot(message.squares() if isinstance(message, BoardFrame) else None, at)
