"""Replaying Certabo captures (:mod:`drivers.capture`): calibrated from the start position they begin with."""

from __future__ import annotations

from collections.abc import Sequence

from boardd.core.events import BoardEvent
from drivers.certabo.codec import Calibrator, CertaboDecoder, CertaboMapper, ChipFrame, OccupancyFrame
from drivers.millennium.capture import SnapshotCaptureCodec

__all__ = ["CertaboCaptureCodec"]


class CertaboCaptureCodec(SnapshotCaptureCodec):
    """Chip frames become snapshots once the start position calibrated them (0.25 s per raw line)."""

    SCAN = 0.25

    def __init__(self) -> None:
        super().__init__()
        self.decoder = CertaboDecoder()
        self.mapper = CertaboMapper(calibrator=Calibrator())

    def decode(self, data: bytes) -> Sequence[object]:
        """Decode received bytes."""
        return self.decoder.feed(data)

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """A snapshot for a changed (majority-filtered) reading."""
        if not isinstance(message, (ChipFrame, OccupancyFrame)):
            return []
        return self.snapshot(self.mapper.squares(message), at)

    def _reset(self) -> None:
        """As the driver when its link is lost: also the decoder's partial frame and the smoothing window."""
        super()._reset()
        self.decoder.reset()
        self.mapper.reset()
