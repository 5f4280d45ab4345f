"""Scaffolding shared by the pure codecs' incremental decoders (no I/O, no clock).

Every family's decoder (``drivers.<family>.codec``) keeps the bytes of a message
not yet complete in a buffer, counts what it does in a ``stats`` counter, and
must account for every byte it throws away: ``stats["discarded_bytes"]`` plus a
TRACE log line (level 5, hex) in the family's own logger. :class:`BufferedDecoder`
holds that bookkeeping; the framing itself (``feed``) stays in each codec.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import ClassVar, Final

__all__ = ["TRACE", "BufferedDecoder"]

#: Log level of raw bytes (below DEBUG), as in zigpy-znp.
TRACE: Final = 5
logging.addLevelName(TRACE, "TRACE")


class BufferedDecoder:
    """Receive buffer, ``stats`` counter and discarded-byte accounting of a stream decoder.

    Subclasses set ``_logger`` to their codec module's logger (where discarded bytes are
    TRACE-logged as ``>> discarded N byte(s) (why): hex``) and implement ``feed``.
    """

    #: Logger of the codec module.
    _logger: ClassVar[logging.Logger] = logging.getLogger(__name__)
    #: At most this many discarded bytes are written out in hex (None: all of them).
    _trace_limit: ClassVar[int | None] = None

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.stats: Counter[str] = Counter()

    @property
    def pending(self) -> int:
        """Bytes buffered while waiting for the rest of a message."""
        return len(self._buffer)

    def reset(self) -> None:
        """Forget a partial message (the link was reopened); its bytes count as discarded."""
        self._discard(len(self._buffer), "link reset")

    def _discard(self, count: int, why: str) -> None:
        """Drop the first *count* buffered bytes, counted and TRACE-logged with the reason *why*."""
        if count <= 0:
            return
        dropped = bytes(self._buffer[:count])
        del self._buffer[:count]
        self._count_discarded(dropped, why)

    def _count_discarded(self, dropped: bytes, why: str) -> None:
        """Account for *dropped* bytes (already out of the buffer): count them and TRACE-log them."""
        if not dropped:
            return
        self.stats["discarded_bytes"] += len(dropped)
        if self._logger.isEnabledFor(TRACE):
            self._logger.log(TRACE, ">> discarded %d byte(s) (%s): %s", len(dropped), why,
                             dropped[:self._trace_limit].hex(" "))

    def _warn_sparsely(self, key: str, message: str, *args: object) -> None:
        """WARNING-log the occurrence ``stats[key]`` of a rejected input (the caller counted it) only
        when it is the 1st, 2nd, 3rd, 10th, 100th, ... one, with the count: a noisy line must not
        flood the log. Every frame is TRACE-logged in hex anyway; the count needs no clock."""
        count = self.stats[key]
        if count <= 3 or str(count).rstrip("0") == "1":  # 1, 2, 3, 10, 100, ...
            self._logger.warning("%s (%s #%d; logged at 1-3, 10, 100, ... and in hex at TRACE)",
                                 message % args, key, count)
