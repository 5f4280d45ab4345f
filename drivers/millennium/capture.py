"""Replaying Millennium captures (:mod:`drivers.capture`), and the base shared by the snapshot boards.

A capture codec wraps the family's pure decoder and mapping, drops identical
consecutive snapshots (as the drivers do) and gives raw captures a synthetic time
line: one report per scan of the family (:meth:`SnapshotCaptureCodec.spacing`).
"""

from __future__ import annotations

from collections.abc import Sequence

from boardd.core.events import BoardEvent, BoardSnapshot, Content
from drivers.millennium.codec import MillenniumDecoder, Status

__all__ = ["MillenniumCaptureCodec", "SnapshotCaptureCodec"]


class SnapshotCaptureCodec:
    """Common part of the snapshot boards' capture codecs: snapshots with duplicates dropped."""

    #: Seconds a position report advances a raw capture's time line.
    SCAN = 0.05

    def __init__(self) -> None:
        self._last: tuple[Content, ...] | None = None

    def snapshot(self, squares: tuple[Content, ...] | None, at: float) -> list[BoardEvent]:
        """A snapshot of *squares* unless it repeats the previous one."""
        if squares is None or squares == self._last:
            return []
        self._last = squares
        return [BoardSnapshot(at=at, squares=squares)]

    def spacing(self, message: object) -> float:
        """Synthetic seconds before *message* in a raw capture."""
        return self.SCAN

    def sent(self, data: bytes) -> None:
        """Host bytes change nothing in the replay."""

    def link_changed(self, up: bool, at: float) -> list[BoardEvent]:
        """The link was lost: as the driver, forget a partial message and the last snapshot (the first
        one of the next connection is reported even when nothing changed)."""
        if not up:
            self._reset()
        return []

    def _reset(self) -> None:
        """Forget the last snapshot (subclasses: their decoder's partial message too)."""
        self._last = None


class MillenniumCaptureCodec(SnapshotCaptureCodec):
    """Millennium captures: status messages become snapshots (one per 41 ms scan in raw captures)."""

    SCAN = 20 * 0.002048

    def __init__(self) -> None:
        super().__init__()
        self.decoder = MillenniumDecoder()

    def decode(self, data: bytes) -> Sequence[object]:
        """Decode received bytes."""
        return self.decoder.feed(data)

    def _reset(self) -> None:
        super()._reset()
        self.decoder.reset()

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """A snapshot for a changed status."""
        return self.snapshot(message.squares() if isinstance(message, Status) else None, at)
