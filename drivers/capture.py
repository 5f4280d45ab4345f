"""Device captures: raw traffic recorded from a board, replayed as :mod:`boardd.core.events`.

Formats
-------
**JSON Lines** (what ``boardd record`` writes), one object per line::

    {"t": 0.0, "capture": "dgt", "port": "/dev/ttyACM0", "v": 1}   header (optional)
    {"t": 0.512, "tx": "4b"}                                        bytes sent to the device
    {"t": 0.634, "rx": "93 00 05 03 0a"}                            bytes received
    {"t": 12.5, "link": "down"}                                     the device went away / came back

A ``link`` line is about the link the family's driver opens itself, its *transport link*
(:func:`transport_link`): the board's for the boards, the clock's for the DGT 3000 on I²C
(its only device). Links the family's messages tell about (a DGT clock on the board's jack,
``LinkChanged(CLOCK)`` from its status byte) are not recorded: the replay derives them again,
and a codec with ``link_changed(up, at)`` gives the events its driver adds when its link
changes (the DGT board: the clock on its jack goes down with it) and resets what the driver
resets per connection (a decoder's partial message, the last snapshot).

``t`` is seconds since the start of the recording (non-decreasing; a step
backwards is clamped and counted). Hex may contain spaces. Lines that cannot
be read are skipped, counted and logged with their line number.

**Raw binary**: the received bytes only, without times (a file of hex text or
of base64 text lines, like arnsholt/dgtdriver's ``*.inbytes``, is decoded
first). Times are synthesised by the family's codec: from the whole capture
when it has a ``timeline(messages)`` (DGT: from the running clock's readings,
:meth:`drivers.dgt.mapping.DgtCaptureCodec.timeline`), else per message in byte
order (:meth:`CaptureCodec.spacing`). Either way the field updates of a move
come before the clock status that completes it, more than ``T_settle``
earlier, and the squares a sliding piece passes over never last ``T_settle``.

Families register a :class:`CaptureCodec` factory with :func:`register_codec`;
``boardd replay --driver dgt FILE`` calls :func:`events_from_capture`.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from boardd.core.errors import BoarddError
from boardd.core.events import BoardEvent, Link, LinkChanged
from drivers.base import TimeSource

__all__ = [
    "CaptureCodec",
    "CaptureError",
    "CaptureRecord",
    "CaptureWriter",
    "events_from_capture",
    "read_capture",
    "register_codec",
    "transport_link",
]

_LOGGER = logging.getLogger(__name__)

#: Format version written in the header line.
FORMAT_VERSION = 1


class CaptureError(BoarddError, ValueError):
    """A capture file cannot be read at all (or names an unknown device family)."""


@dataclass(frozen=True, slots=True)
class CaptureRecord:
    """One line of a capture: ``direction`` is ``"rx"``, ``"tx"``, ``"link-up"`` or ``"link-down"``."""

    t: float
    direction: str
    data: bytes = b""


class CaptureCodec(Protocol):
    """What a board family provides to replay its captures.

    Optional: ``timeline(messages) -> list[float]`` (raw captures' times, see :func:`_raw_times`) and
    ``link_changed(up, at) -> list[BoardEvent]``, called after each change of the transport link: the
    events the driver adds to it, and on ``up=False`` the reset of what the driver resets when its link
    is lost (a decoder's partial message, the last snapshot) so that the next connection replays as new.
    """

    def decode(self, data: bytes) -> Sequence[object]:
        """Decode received bytes (buffering partial messages) into the family's messages."""
        ...

    def spacing(self, message: object) -> float:
        """Seconds a message advances the synthetic time line of a raw capture (before it)."""
        ...

    def events(self, message: object, at: float) -> list[BoardEvent]:
        """The events a message means, stamped *at*."""
        ...

    def sent(self, data: bytes) -> None:
        """Bytes the host sent (a codec may note that the host set the clock)."""
        ...


_CODECS: dict[str, Callable[[], CaptureCodec]] = {}
_LINKS: dict[str, Link] = {}


def register_codec(family: str, factory: Callable[[], CaptureCodec], *, link: Link = Link.BOARD) -> None:
    """Register the capture codec of a device family (``"millennium"``, ...); *link* is its transport link."""
    _CODECS[family] = factory
    _LINKS[family] = link


def transport_link(family: str) -> Link:
    """The link a family's driver opens itself: what a capture's ``link`` lines are about."""
    return _LINKS.get(family, Link.BOARD)


def _dgt_codec() -> CaptureCodec:
    codec: CaptureCodec = importlib.import_module("drivers.dgt.mapping").DgtCaptureCodec()
    return codec


register_codec("dgt", _dgt_codec)


def _lazy_codec(module: str, name: str) -> Callable[[], CaptureCodec]:
    def factory() -> CaptureCodec:
        codec: CaptureCodec = getattr(importlib.import_module(module), name)()
        return codec
    return factory


register_codec("millennium", _lazy_codec("drivers.millennium.capture", "MillenniumCaptureCodec"))
register_codec("certabo", _lazy_codec("drivers.certabo.capture", "CertaboCaptureCodec"))
register_codec("chessnut", _lazy_codec("drivers.chessnut.capture", "ChessnutCaptureCodec"))
register_codec("dgt3000-i2c", _lazy_codec("drivers.dgt3000_i2c.capture", "Dgt3000CaptureCodec"), link=Link.CLOCK)


#: A data line as ``boardd record`` writes it (``{"t": 0.634, "rx": "93 00 05 03 0a"}``): its JSON read without
#: the JSON parser. Strict: a JSON number, hex digits and spaces only in the string (no escapes), nothing else
#: in the object; any other line (other spacing or key order, escapes, a header) goes through ``json.loads``.
_DATA_LINE = re.compile(r'\{"t": (-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?), '
                        r'"(rx|tx)": "([0-9a-fA-F ]*)"\}')


#: A record as read, before it becomes a :class:`CaptureRecord`: ``(t, direction, data)``.
_Record = tuple[float, str, bytes]


def _parse_line(line: str) -> _Record | None:
    """The record of a line; None for a header or a blank line.

    Raises:
        ValueError: the line is not a capture line.
    """
    fast = _DATA_LINE.fullmatch(line)
    if fast is not None:
        seconds = float(fast[1])
        if math.isfinite(seconds):
            return seconds, fast[2], bytes.fromhex(fast[3])
    if not line.strip():
        return None
    obj = json.loads(line)
    if not isinstance(obj, dict):
        raise ValueError("a capture line is a JSON object")
    t = obj.get("t")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
        raise ValueError(f"bad time {t!r}")
    for direction in ("rx", "tx"):
        if direction in obj:
            value = obj[direction]
            if not isinstance(value, str):
                raise ValueError(f"{direction} must be a hex string")
            return float(t), direction, bytes.fromhex(value)
    link = obj.get("link")
    if link in ("up", "down"):
        return float(t), f"link-{link}", b""
    if "capture" in obj:
        return None  # header
    raise ValueError("a capture line has rx, tx or link")


_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n")


_HEX_TEXT = frozenset(b"0123456789abcdefABCDEF \t\r\n")


def _maybe_text(raw: bytes) -> bytes:
    """Raw captures saved as text are decoded: hex (``8e 00 05 34 00``, what some serial sniffers
    save) or base64 lines. Hex is tried first: base64 of binary data practically always has
    letters beyond ``f``."""
    if raw and set(raw) <= _HEX_TEXT:
        digits = bytes(b for b in raw if b not in b" \t\r\n")
        if len(digits) % 2 == 0 and (b" " in raw or b"\n" in raw.strip()):
            return bytes.fromhex(digits.decode("ascii"))
    return _maybe_base64(raw)


def _maybe_base64(raw: bytes) -> bytes:
    """Raw captures stored as base64 text lines (arnsholt/dgtdriver's ``*.inbytes``) are decoded."""
    if not raw or not set(raw) <= _BASE64:
        return raw
    try:
        return b"".join(base64.b64decode(line, validate=True) for line in raw.split() if line)
    except binascii.Error:
        return raw


def read_capture(path: Path, *, stats: Counter[str] | None = None) -> Iterator[CaptureRecord]:
    """The records of a capture file, JSON Lines or raw binary (raw: one ``rx`` record at ``t=0``).

    Raises:
        CaptureError: the file cannot be read.
    """
    for t, direction, data in _records(path, stats):
        yield CaptureRecord(t, direction, data)


def _records(path: Path, stats: Counter[str] | None) -> Iterator[_Record]:
    """:func:`read_capture` as tuples (a record object a line costs as much as reading the line)."""
    counters = stats if stats is not None else Counter()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CaptureError(f"cannot read capture {path}: {exc}") from exc
    if raw.lstrip()[:1] != b"{":
        yield 0.0, "raw", _maybe_text(raw)
        return
    last_t = 0.0
    fullmatch, isfinite, fromhex = _DATA_LINE.fullmatch, math.isfinite, bytes.fromhex
    for line_no, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        # _parse_line's first test without the call (nearly every line)
        fast = fullmatch(line)
        if fast is not None and isfinite(seconds := float(fast[1])):
            record: _Record = seconds, fast[2], fromhex(fast[3])
        else:
            try:
                parsed = _parse_line(line)
            except ValueError as exc:
                counters["bad_lines"] += 1
                _LOGGER.warning("%s:%d: capture line skipped: %s", path, line_no, exc)
                continue
            if parsed is None:
                continue
            record = parsed
        t = record[0]
        if t < last_t:
            counters["time_backwards"] += 1
            _LOGGER.warning("%s:%d: time went backwards (%.3f < %.3f); clamped", path, line_no, t, last_t)
            record = last_t, record[1], record[2]
        else:
            last_t = t
        yield record


def _raw_times(codec: CaptureCodec, messages: Sequence[object], start: float) -> list[float]:
    """Synthetic times of the messages of a raw capture: the codec's ``timeline(messages)`` when it
    has one (it may look at the whole capture, e.g. the clock's readings), else its ``spacing``."""
    timeline = getattr(codec, "timeline", None)
    if timeline is not None:
        return [start + t for t in timeline(messages)]
    times = []
    at = start
    for message in messages:
        at += codec.spacing(message)
        times.append(at)
    return times


def events_from_capture(path: Path, driver: str, *, stats: Counter[str] | None = None) -> Iterator[BoardEvent]:
    """Replay a capture of device family *driver* as events, in time order.

    Raises:
        CaptureError: unknown family, its codec module cannot be imported, or the file cannot be read.
    """
    factory = _CODECS.get(driver)
    if factory is None:
        raise CaptureError(f"no capture codec for driver {driver!r}; known: {', '.join(sorted(_CODECS))}")
    try:
        codec = factory()
    except ImportError as exc:
        raise CaptureError(f"the capture codec of driver {driver!r} cannot be loaded: {exc}") from exc
    link = transport_link(driver)
    link_changed: Callable[[bool, float], list[BoardEvent]] | None = getattr(codec, "link_changed", None)
    connected = False

    def changed(up: bool, at: float) -> Iterator[BoardEvent]:
        yield LinkChanged(at=at, link=link, up=up, detail="capture")
        if link_changed is not None:
            yield from link_changed(up, at)

    decode, events = codec.decode, codec.events
    for at, direction, data in _records(path, stats):
        if direction == "rx":  # nearly every record
            for message in decode(data):
                if not connected:
                    connected = True
                    yield from changed(True, at)
                yield from events(message, at)
            continue
        if direction == "tx":
            codec.sent(data)
            continue
        if direction in ("link-up", "link-down"):
            up = direction == "link-up"
            if up != connected:
                connected = up
                yield from changed(up, at)
            continue
        messages = decode(data)  # raw
        for message, t in zip(messages, _raw_times(codec, messages, at), strict=True):
            if not connected:
                connected = True
                yield from changed(True, t)
            yield from events(message, t)


class CaptureWriter:
    """Writes a JSON Lines capture; use an instance as a transport tap (``tap("rx", data)``).

    Args:
        stream: a text stream opened for writing.
        family: device family for the header line.
        port: the port recorded, for the header line.
        time_source: clock; times are written relative to the writer's creation.
    """

    def __init__(self, stream: IO[str], *, family: str, port: str = "",
                 time_source: TimeSource = time.monotonic) -> None:
        self._stream = stream
        self._time = time_source
        self._t0 = time_source()
        self.counts: Counter[str] = Counter()
        self._write({"t": 0.0, "capture": family, "port": port, "v": FORMAT_VERSION})

    def _write(self, obj: dict[str, object]) -> None:
        self._stream.write(json.dumps(obj, separators=(", ", ": ")) + "\n")

    def _t(self) -> float:
        return round(self._time() - self._t0, 6)

    def __call__(self, direction: str, data: bytes) -> None:
        """Record *data* travelling in *direction* (``"rx"`` or ``"tx"``)."""
        self.counts[direction] += len(data)
        self._write({"t": self._t(), direction: data.hex(" ")})

    def link(self, up: bool) -> None:
        """Record that the device came (back) or went away."""
        self._write({"t": self._t(), "link": "up" if up else "down"})

    def flush(self) -> None:
        """Flush the stream."""
        self._stream.flush()
