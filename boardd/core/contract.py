"""Pure mapping of engine outputs to the MQTT contract (``shared/docs/mqtt-contract.md``, v1).

Theory of operation
-------------------
A :class:`Publisher` belongs to one board and one daemon session. It turns the
engine's outputs (:mod:`boardd.core.outputs`) and the current :class:`GameState` into
:class:`Publication` values: topic, payload, retain flag and QoS, exactly as the
contract's table says. It does no I/O: the daemon hands publications to the MQTT
client (and its outbox), ``boardd replay`` prints them.

Envelope
    Every JSON payload starts with ``v`` (contract version, 1), ``board``,
    ``session``, ``seq`` and ``ts``. ``seq`` is strictly increasing per
    publisher across all topics; the daemon persists :attr:`Publisher.seq` and
    passes it back at the next start. ``ts`` is ``ts(at)`` where ``at`` is the
    event time the publication is about (the ``at`` of :meth:`Publisher.render`):
    the daemon passes a ``ts`` that maps its monotonic time line to wall-clock
    UTC; replay uses :func:`iso_timestamp` on the event times, which makes its
    output deterministic.

Event times
    Fields that are event times (``made_at``, ``completed_at``, evidence ``at``,
    …) are ISO-8601 strings from the same ``ts`` function, so they are on the
    same wall-clock time line as ``ts``. Each also comes as raw seconds in an
    extra field with an ``_s`` suffix (``made_at_s``): exact, and what tools
    that compute durations want. Extra fields are allowed by the contract.

State and PGN
    The retained ``state`` and ``pgn`` topics are (re)published after a
    :class:`~boardd.core.outputs.StateChanged`, once per :meth:`Publisher.render`
    call however many ``StateChanged`` the batch holds, after the batch's other
    publications (so a consumer that sees the move first and the state second
    sees them consistent). :meth:`Publisher.snapshot` gives the same pair for a
    (re)connect.

Open irregularities in the state
    ``irregularity`` messages are not retained, so the ``state`` also carries
    ``irregularities`` (an extra field): the full object of every finding that
    is not resolved (:attr:`GameState.open_irregularity_details`), as in the
    ``irregularity`` payload without the envelope and without ``change``. Their
    ids are the ``open_irregularities``. A consumer that (re)connects builds its
    flag list from it; a live ``irregularity`` with a higher ``seq`` than the
    state's is newer. The field is left out when the state lists open ids
    without their details (an engine that does not fill them).

Status
    :meth:`Publisher.status` publishes the retained ``status``; the publisher
    remembers the board and clock links and re-publishes ``status`` when a
    :class:`~boardd.core.outputs.LinkUpdate` arrives: ``degraded`` while the board
    link, or a clock link that has been seen up, is down; ``online`` otherwise.
    :meth:`Publisher.will` is the MQTT last will (``offline``). It takes its
    ``seq`` when it is built, that is when the daemon connects, so it arrives
    later than publications with higher numbers; consumers treat ``offline`` as
    the latest status whatever its ``seq`` (dedupe on (board, session, seq) is
    unaffected: the number is never reused).

JSON
    :meth:`Publication.payload_bytes` is compact JSON (``,``/``:`` separators),
    keys sorted, UTF-8 (not ASCII-escaped), no NaN/Infinity (they become
    ``null``). Sorted keys make the bytes canonical: replay output is
    byte-identical across runs and Python versions. The ``pgn`` payload is the
    PGN text as UTF-8.

Cost
    The ``state`` and ``pgn`` payloads are as long as the game (the whole move list, the whole
    PGN), so the publisher does not serialise them whole per message (issue 12): the ``state``
    text is joined from fragments kept per publisher (each move's UCI and SAN serialised once,
    the array text extended by appending; the ``game`` object and each open finding serialised
    once) and handed over as :attr:`Publication.json`; the ``pgn`` JSON string is joined from
    movetext lines escaped once each (:func:`~boardd.core.record.escaped_pgn`), which also tells
    the check mark. ``tests/record/test_incremental.py`` compares both with ``json.dumps``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import json
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import chess

from boardd import __version__
from boardd.core._slots import slot_setters
from boardd.core.errors import ConfigError
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Evidence,
    GameEvent,
    GameState,
    Irregularity,
    IrregularityRaised,
    IrregularityUpdated,
    LinkUpdate,
    MoveCompleted,
    MoveMade,
    MoveRecord,
    MovesRetracted,
    Output,
    StateChanged,
    Status,
    Suggestion,
)
from boardd.core.record import escaped_pgn, shared_prefix

__all__ = [
    "CONTRACT_VERSION",
    "TOPICS",
    "Publication",
    "Publisher",
    "TopicSpec",
    "iso_timestamp",
    "topic_kind",
    "validate_board_id",
    "validate_payload",
]

_LOGGER = logging.getLogger(__name__)

#: The ``v`` of every payload (mqtt-contract.md: changing or removing a field bumps it).
CONTRACT_VERSION: Final = 1

_BOARD_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_ISO_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$")
_ENVELOPE_KEYS = frozenset({"v", "board", "session", "seq", "ts"})
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """Retain flag and QoS of one topic kind (the contract's table)."""

    retain: bool
    qos: int


#: Topic kind (the part after ``{prefix}/{board}/``) -> retain and QoS.
TOPICS: Final[Mapping[str, TopicSpec]] = {
    "status": TopicSpec(retain=True, qos=1),
    "state": TopicSpec(retain=True, qos=1),
    "move": TopicSpec(retain=False, qos=1),
    "irregularity": TopicSpec(retain=False, qos=1),
    "clock": TopicSpec(retain=False, qos=0),
    "pgn": TopicSpec(retain=True, qos=1),
    "event": TopicSpec(retain=False, qos=1),
    "cmd-result": TopicSpec(retain=False, qos=1),
}


@functools.lru_cache(maxsize=4096)
def iso_timestamp(seconds: float) -> str:
    """ISO-8601 UTC with milliseconds and ``Z`` for *seconds* since the Unix epoch (pure, no clock read).

    Rounded down to the millisecond; values outside years 1..9999 are clamped.

    >>> iso_timestamp(0.3)
    '1970-01-01T00:00:00.300Z'
    >>> iso_timestamp(1795285982.125)
    '2026-11-21T18:33:02.125Z'
    """
    if not math.isfinite(seconds):
        seconds = 0.0
    whole, millis = divmod(math.floor(seconds * 1000 + 1e-6), 1000)
    head, clamped = _iso_second(whole)
    return head + f"{millis if clamped is None else clamped:03d}Z"


@functools.lru_cache(maxsize=256)
def _iso_second(whole: int) -> tuple[str, int | None]:
    """The text of :func:`iso_timestamp` up to the milliseconds for the whole second *whole*, and the milliseconds
    of the clamped moment when the second is outside years 1..9999 (else None). Event times come many to a
    second: ``strftime`` once per second (issue 12). A moment is out of range exactly when its whole second is:
    the range ends at a whole second (the minimum) and at .999999 of one (the maximum)."""
    try:
        moment = _EPOCH + dt.timedelta(seconds=whole)
        clamped = None
    except OverflowError:
        moment = dt.datetime.max.replace(tzinfo=dt.UTC) if whole > 0 else dt.datetime.min.replace(tzinfo=dt.UTC)
        clamped = moment.microsecond // 1000
    return moment.strftime("%Y-%m-%dT%H:%M:%S."), clamped


def validate_board_id(board: str) -> str:
    """Return *board* if it is a valid board id (``[A-Za-z0-9_-]+``).

    Raises:
        ConfigError: it is not.
    """
    if not isinstance(board, str) or not _BOARD_ID.fullmatch(board):
        raise ConfigError(f"board id must be made of [A-Za-z0-9_-] only, got {board!r}", key="board")
    return board


def _validate_prefix(prefix: str) -> str:
    if (
        not isinstance(prefix, str)
        or not prefix
        or any(c in prefix for c in "+#\0")
        or prefix.startswith("/")
        or prefix.endswith("/")
        or "//" in prefix
    ):
        raise ConfigError(f"MQTT topic prefix must be non-empty levels without +, # or //, got {prefix!r}",
                          key="prefix")
    return prefix


def topic_kind(topic: str, *, prefix: str = "boardd") -> tuple[str, str] | None:
    """Split ``{prefix}/{board}/{kind}`` into ``(board, kind)``; None when it is not a boardd topic.

    >>> topic_kind("boardd/t12/state")
    ('t12', 'state')
    """
    head = prefix + "/"
    if not topic.startswith(head):
        return None
    board, _, kind = topic[len(head):].partition("/")
    if not _BOARD_ID.fullmatch(board) or not kind:
        return None
    return board, kind


# --- JSON helpers -------------------------------------------------------------


def _color(color: chess.Color | None) -> str | None:
    if color is None:
        return None
    return "white" if color == chess.WHITE else "black"


def _seconds(value: float | None) -> float | None:
    """Seconds as a JSON number, rounded to the millisecond; None for unknown or non-finite."""
    if value is None or not math.isfinite(value):
        return None
    return _rounded(value) if value else round(float(value), 3)   # (0.0 and -0.0 are one key of a cache)


@functools.lru_cache(maxsize=4096)
def _rounded(value: float) -> float:
    """``round(value, 3)`` (a decimal conversion: a few µs), kept: a clock's times and an event's time come again
    in several payloads (the side not running keeps its time over many readings)."""
    return round(float(value), 3)


def _jsonable(value: object) -> object:
    """Make *value* JSON-serialisable (details of :class:`GameEvent`, ``**extra`` of command results)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_jsonable(item) for item in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, chess.Move):
        return value.uci()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return str(value)


@dataclass(frozen=True, slots=True)
class Publication:
    """One MQTT message: topic, payload (a JSON object, or the PGN text), retain flag, QoS.

    ``json`` is the payload's JSON text (:func:`_dumps` of ``payload``: the object, or the PGN text as a JSON
    string) when the publisher has already built it from cached fragments (the ``state`` and ``pgn`` topics,
    whose text is as long as the game: issue 12), else None and it is serialised when asked for. Payloads are
    never changed once built, so the two stay the same; ``json`` takes no part in comparisons.
    """

    topic: str
    payload: str | dict[str, object]
    retain: bool
    qos: int
    json: str | None = field(default=None, compare=False, repr=False)

    def payload_bytes(self) -> bytes:
        """The payload on the wire: compact JSON with sorted keys, or the PGN text, as UTF-8."""
        if isinstance(self.payload, str):
            return self.payload.encode("utf-8")
        text = self.json if self.json is not None else _dumps(self.payload)
        return text.encode("utf-8")

    def replay_line(self) -> str:
        """This publication as one line of ``boardd replay`` output (no newline).

        ``{"topic": ..., "retain": ..., "qos": ..., "payload": ...}`` in that key order, compact;
        the payload object has sorted keys, a PGN payload is a JSON string.
        """
        head, payload = self.replay_parts()
        return head + payload + "}"

    def replay_parts(self) -> tuple[str, str]:
        """:meth:`replay_line` in two parts, the line being ``head + payload + "}"``: the start up to the payload,
        and the payload's JSON (a ``state`` or ``pgn`` line is as long as the game, issue 12: a writer can write
        the parts without joining them)."""
        return _line_head(self.topic, self.retain, self.qos), \
            self.json if self.json is not None else _dumps(self.payload)


def _make_new_publication() -> Callable[[str, str | dict[str, object], bool, int, str | None], Publication]:
    """``_new_publication(topic, payload, retain, qos, json)``: the :class:`Publication`, set through its slots (its
    frozen ``__init__`` sets each field through ``object.__setattr__``: issue 12, one or two publications a board
    message); the constructor when its fields are not those five."""
    setters = slot_setters(Publication, ("topic", "payload", "retain", "qos", "json"))
    if setters is None:  # pragma: no cover - the fields changed: the constructor
        def slow(topic: str, payload: str | dict[str, object], retain: bool, qos: int,
                 json: str | None) -> Publication:
            return Publication(topic=topic, payload=payload, retain=retain, qos=qos, json=json)
        return slow
    new = object.__new__
    set_topic, set_payload, set_retain, set_qos, set_json = setters

    def new_publication(topic: str, payload: str | dict[str, object], retain: bool, qos: int,
                        json: str | None) -> Publication:
        publication = new(Publication)
        set_topic(publication, topic)
        set_payload(publication, payload)
        set_retain(publication, retain)
        set_qos(publication, qos)
        set_json(publication, json)
        return publication
    return new_publication


_new_publication: Final = _make_new_publication()


@functools.lru_cache(maxsize=1024)
def _line_head(topic: str, retain: bool, qos: int) -> str:
    """The start of a :meth:`Publication.replay_line`, up to the payload (a few topics per board)."""
    return f'{{"topic":{_dumps(topic)},"retain":{_dumps(retain)},"qos":{qos},"payload":'


#: Characters ``str.splitlines()`` breaks on that JSON leaves unescaped: escaped, so a payload stays one line.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


#: ``json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)``, built once
#: (``json.dumps`` with these arguments builds an encoder per call).
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
_encode_string: Final[Callable[[str], str]] = json.encoder.encode_basestring


def _make_encode() -> Callable[[object], str]:
    """:data:`_ENCODER`'s ``encode``, with its C encoder built once instead of per call (issue 12: a payload costs
    a few µs; ``JSONEncoder.encode`` also defines a closure and builds the C encoder at every call).

    The C encoder is the one ``encode`` builds, with the same arguments but no circular-reference markers (a
    payload is a tree; a cycle would end in a ``RecursionError`` either way, as :func:`_jsonable` recurses too).
    Without the C accelerator, ``encode`` itself.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    iterencode = make(None, _ENCODER.default, _encode_string, None, _ENCODER.key_separator,
                      _ENCODER.item_separator, True, False, False)
    join = "".join

    def encode(value: object) -> str:
        return join(iterencode(value, 0))
    return encode


_encode: Final = _make_encode()


def _dumps(value: object) -> str:
    try:
        text = _encode(value)
    except (TypeError, ValueError):
        # A NaN or a foreign object slipped into a payload: publish it cleaned rather than not at all.
        _LOGGER.warning("payload not JSON-clean (NaN or foreign type); cleaned: %r", value)
        text = _encode(_jsonable(value))
    return _escape_breaks(text)


def _escape_breaks(text: str) -> str:
    """:data:`_LINE_BREAKS` escaped. Character by character, so escaping fragments = escaping their join."""
    if text.isascii():   # O(1) in CPython; the usual case
        return text
    for char, escape in _LINE_BREAKS.items():
        if char in text:
            text = text.replace(char, escape)
    return text


def _fragment(value: object) -> str:
    """:func:`_dumps` of *value*, but raising (TypeError, ValueError) where it would clean the value.

    The usual scalars skip the encoder (the same text: ``json`` writes ints and floats with their ``repr``).
    """
    kind = type(value)
    if kind is str:
        return _escape_breaks(_encode_string(value))   # type: ignore[arg-type]
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):   # type: ignore[arg-type]
        return float.__repr__(value)
    return _escape_breaks(_encode(value))


def _json_inner(text: str) -> str:
    """The inside of :func:`_dumps` of the string *text* (character by character: escaping parts = escaping
    their join)."""
    return _escape_breaks(_encode_string(text))[1:-1]


def _pair_text(pair: Mapping[str, object]) -> str:
    """:func:`_fragment` of a ``{"black": …, "white": …}`` object (a flag pair, a move's clock, the illegal-move
    counts), its two keys in sorted order (raising where :func:`_fragment` would)."""
    return f'{{"black":{_fragment(pair["black"])},"white":{_fragment(pair["white"])}}}'


def _clock_object_text(clock: Mapping[str, object]) -> str:
    """:func:`_fragment` of the ``state``'s ``clock`` object (:meth:`Publisher._state_fields`): its five keys and the
    ``flag`` object in sorted order, each value through :func:`_fragment` (raising where it would). Issue 12: the
    C encoder sorts the keys of each object at every call; the order here is fixed."""
    flag = clock["flag"]
    if len(clock) != 5 or type(flag) is not dict or len(flag) != 2:
        return _fragment(clock)
    return (f'{{"black":{_fragment(clock["black"])},"flag":{_pair_text(flag)},"model":{_fragment(clock["model"])},'
            f'"running":{_fragment(clock["running"])},"white":{_fragment(clock["white"])}}}')


def _clock_payload_text(payload: Mapping[str, object]) -> str | None:
    """:func:`_dumps` of a ``clock`` payload as :meth:`Publisher._clock_body` and the envelope make it (twelve keys
    in a fixed sorted order: no sort, one format), None when a value is not JSON-clean (serialised, cleaned, when
    asked) or the keys are not those twelve. Issue 12: a clock reading's publication
    is the most frequent one; the C encoder spent about 50,000 instructions on it, mostly sorting the keys."""
    flag = payload.get("flag")
    if len(payload) != 12 or type(flag) is not dict or len(flag) != 2:
        return None
    try:
        return (f'{{"at":{_fragment(payload["at"])},"at_s":{_fragment(payload["at_s"])},'
                f'"black":{_fragment(payload["black"])},"board":{_fragment(payload["board"])},'
                f'"flag":{_pair_text(flag)},'
                f'"model":{_fragment(payload["model"])},"running":{_fragment(payload["running"])},'
                f'"seq":{_fragment(payload["seq"])},"session":{_fragment(payload["session"])},'
                f'"ts":{_fragment(payload["ts"])},"v":{_fragment(payload["v"])},"white":{_fragment(payload["white"])}}}')
    except (KeyError, TypeError, ValueError):
        return None


#: The keys of a ``move`` payload with the envelope, as :meth:`Publisher._move_fields` makes it (no extras).
_MOVE_KEYS: Final = frozenset({"v", "board", "session", "seq", "ts", "ply", "uci", "san", "side", "fen_after", "phase",
                               "made_at", "made_at_s", "completed_at", "completed_at_s", "completion", "clock", "emt",
                               "legal"})


def _move_payload_text(payload: Mapping[str, object]) -> str | None:
    """:func:`_dumps` of a ``move`` payload (:meth:`Publisher._move_fields` and the envelope) in a fixed sorted
    order, as :func:`_clock_payload_text`; None when a value is not JSON-clean or the payload has other keys (the
    contract additions ``recovered``, ``out_of_turn``): serialised when asked."""
    if len(payload) != len(_MOVE_KEYS) or not _MOVE_KEYS.issuperset(payload):
        return None
    clock = payload["clock"]
    try:
        if clock is None:
            clock_text = "null"
        elif type(clock) is dict and len(clock) == 2:
            clock_text = _pair_text(clock)
        else:
            clock_text = _fragment(clock)
        return (f'{{"board":{_fragment(payload["board"])},"clock":{clock_text},'
                f'"completed_at":{_fragment(payload["completed_at"])},'
                f'"completed_at_s":{_fragment(payload["completed_at_s"])},'
                f'"completion":{_fragment(payload["completion"])},"emt":{_fragment(payload["emt"])},'
                f'"fen_after":{_fragment(payload["fen_after"])},"legal":{_fragment(payload["legal"])},'
                f'"made_at":{_fragment(payload["made_at"])},"made_at_s":{_fragment(payload["made_at_s"])},'
                f'"phase":{_fragment(payload["phase"])},"ply":{_fragment(payload["ply"])},'
                f'"san":{_fragment(payload["san"])},"seq":{_fragment(payload["seq"])},'
                f'"session":{_fragment(payload["session"])},"side":{_fragment(payload["side"])},'
                f'"ts":{_fragment(payload["ts"])},"uci":{_fragment(payload["uci"])},"v":{_fragment(payload["v"])}}}')
    except (KeyError, TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=256)
def _key_fragment(key: str) -> str:
    return _escape_breaks(_encode_string(key)) + ":"


@functools.lru_cache(maxsize=256)
def _key_order(keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """*keys* sorted, each with the text before its value: ``{"key":`` for the first, ``,"key":`` for the others
    (a payload kind has one or two sets of keys)."""
    return tuple((key, ("," if index else "{") + _key_fragment(key)) for index, key in enumerate(sorted(keys)))


#: Payload keys -> their values already serialised: a text, or a list of texts to join (:func:`_object_text`).
_Raw = dict[str, str | list[str]]


def _object_text(payload: Mapping[str, object], raw: Mapping[str, str | list[str]]) -> str | None:
    """:func:`_dumps` of the object *payload* whose values under the keys of *raw* are already serialised
    there (a text, or a list of texts to join: :meth:`_Fragments.parts`); None when a value is not JSON-clean
    (the publication is then serialised, cleaned, on demand).

    One join of the keys and values: the long values of *raw* (the ``state``'s move lists) are copied once,
    from their parts.
    """
    if not payload:
        return "{}"
    parts: list[str] = []
    append = parts.append
    try:
        for key, head in _key_order(tuple(payload)):
            append(head)
            value = raw.get(key)
            if value is None:
                append(_fragment(payload[key]))
            elif type(value) is str:
                append(value)
            else:
                parts += value
    except (TypeError, ValueError):
        return None
    append("}")
    return "".join(parts)


class _Fragments:
    """A JSON array kept item by item: each item serialised once (:func:`_fragment`), kept in blocks of
    :attr:`BLOCK` items joined once the block is full, so that neither an append nor the array's text
    (:meth:`parts`, joined by the caller with the rest of its payload) copies the whole array (issue 12: the
    move lists are as long as the game); :meth:`truncate` goes back to the first *n* items."""

    __slots__ = ("blocks", "items")

    #: Items per block.
    BLOCK = 32

    def __init__(self) -> None:
        #: every item's text
        self.items: list[str] = []
        #: ``blocks[k]``: the texts of items ``BLOCK * k`` to ``BLOCK * (k + 1) - 1`` joined with commas
        self.blocks: list[str] = []

    def __len__(self) -> int:
        return len(self.items)

    def truncate(self, length: int) -> None:
        if length < len(self.items):
            del self.items[length:]
            del self.blocks[length // self.BLOCK:]

    def append(self, item: object) -> None:
        items = self.items
        items.append(_fragment(item))
        size = len(items)
        if size % self.BLOCK == 0:
            self.blocks.append(",".join(items[size - self.BLOCK:]))

    def parts(self) -> list[str]:
        """The array's text in parts (their join is the text): ``[``, the blocks and the rest with commas, ``]``."""
        blocks = self.blocks
        rest = self.items[len(blocks) * self.BLOCK:]
        if not blocks:
            return ["[", ",".join(rest), "]"]
        parts = ["["]
        for block in blocks:
            parts += (block, ",")
        if rest:
            parts.append(",".join(rest))
        else:
            parts.pop()
        parts.append("]")
        return parts

    def array(self) -> str:
        return "".join(self.parts())


# --- The publisher ---------------------------------------------------------------------


class Publisher:
    """Turns engine outputs into publications for one board and one daemon session.

    Args:
        board: the board id (``[A-Za-z0-9_-]+``).
        prefix: the topic prefix (default ``boardd``); may have several levels (``club/boardd``).
        session: the daemon's session counter.
        seq: the last ``seq`` used in this session (0 for none); the next publication uses ``seq + 1``.
        ts: maps an event time to the ISO-8601 ``Z`` string of ``ts`` and of event-time fields;
            default :func:`iso_timestamp` (event times read as Unix seconds).

    Raises:
        ConfigError: invalid board id, prefix, session or seq.
    """

    def __init__(self, *, board: str, prefix: str = "boardd", session: int = 1, seq: int = 0,
                 ts: Callable[[float], str] | None = None) -> None:
        self._board = validate_board_id(board)
        self._prefix = _validate_prefix(prefix)
        if not isinstance(session, int) or isinstance(session, bool) or session < 0:
            raise ConfigError(f"session must be an integer >= 0, got {session!r}", key="session")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise ConfigError(f"seq must be an integer >= 0, got {seq!r}", key="seq")
        self._session = session
        self._seq = seq
        self._ts = ts if ts is not None else iso_timestamp
        self._board_link: dict[str, object] = {"driver": None, "port": None, "serial": None,
                                               "connected": False}
        self._clock_link: dict[str, object] = {"model": None, "connected": False}
        self._clock_expected = False
        self._software = __version__
        self._last_at = 0.0
        self._move_lists = _MoveLists()
        self._state_irregularity_bodies: dict[int, tuple[Irregularity, dict[str, object], str | None]] = {}
        self._game_cache: tuple[tuple[object, ...], dict[str, object], str | None] | None = None
        self._topics: dict[str, str] = {}

    # Properties.

    @property
    def board(self) -> str:
        """The board id."""
        return self._board

    @property
    def session(self) -> int:
        """The session counter."""
        return self._session

    @property
    def seq(self) -> int:
        """The last ``seq`` used (the daemon persists it)."""
        return self._seq

    @property
    def root(self) -> str:
        """``{prefix}/{board}``."""
        return f"{self._prefix}/{self._board}"

    def topic(self, kind: str) -> str:
        """The full topic of a kind (``"state"`` -> ``"boardd/t12/state"``)."""
        return f"{self.root}/{kind}"

    @property
    def command_filter(self) -> str:
        """The subscription filter for arbiter commands: ``{root}/cmd/+``."""
        return f"{self.root}/cmd/+"

    # Building blocks.

    def _publication(self, kind: str, body: Mapping[str, object], *, at: float,
                     raw: Mapping[str, str | list[str]] | None = None) -> Publication:
        """The publication of *body* with the envelope; with *raw* (body keys -> their values already
        serialised), its JSON text is built now from those fragments (:attr:`Publication.json`)."""
        spec = TOPICS[kind]
        self._seq += 1
        self._last_at = at
        payload: dict[str, object] = {
            "v": CONTRACT_VERSION,
            "board": self._board,
            "session": self._session,
            "seq": self._seq,
            "ts": self._ts(at),
        }
        if _ENVELOPE_KEYS.isdisjoint(body):
            payload.update(body)
        else:
            for key, value in body.items():
                if key in _ENVELOPE_KEYS:
                    _LOGGER.warning("%s payload field %r clashes with the envelope; dropped", kind, key)
                    continue
                payload[key] = value
        if raw is not None:
            text = _object_text(payload, raw)
        elif kind == "clock":
            text = _clock_payload_text(payload)
        elif kind == "move":
            text = _move_payload_text(payload)
        else:
            text = None   # (the C encoder, when asked)
        topic = self._topics.get(kind)
        if topic is None:
            topic = self._topics[kind] = self.topic(kind)
        return _new_publication(topic, payload, spec.retain, spec.qos, text)

    def _time(self, at: float | None) -> str | None:
        return None if at is None else self._ts(at)

    # Public API.

    def render(self, outputs: Sequence[Output], state: GameState | None, *, at: float) -> list[Publication]:
        """Publications for one batch of engine outputs, in order, then ``state`` + ``pgn`` if it changed.

        Args:
            outputs: what :meth:`Engine.feed`/``advance`` returned.
            state: the engine's state after the batch (read only when the batch has a ``StateChanged``; None
                will do for a batch without one: building the state costs).
            at: the event time of the batch (the envelope's ``ts``).

        Raises:
            ValueError: the batch has a ``StateChanged`` and *state* is None.
        """
        publications: list[Publication] = []
        state_changed = False
        for output in outputs:
            if type(output) is ClockUpdate:   # (the most frequent output: before the match's class tests, issue 12)
                publications.append(self._publication("clock", self._clock_body(output.clock, output.at), at=at))
                continue
            match output:
                case MoveMade(move=move):
                    publications.append(self._publication("move", self._move_body(move, "made"), at=at))
                case MoveCompleted(move=move):
                    publications.append(self._publication("move", self._move_body(move, "completed"), at=at))
                case IrregularityRaised(irregularity=irregularity):
                    body = self._irregularity_body(irregularity, "raised")
                    publications.append(self._publication("irregularity", body, at=at))
                case IrregularityUpdated(irregularity=irregularity):
                    body = self._irregularity_body(irregularity, "updated")
                    publications.append(self._publication("irregularity", body, at=at))
                case GameEvent():
                    publications.append(self._publication("event", self._event_body(output), at=at))
                case MovesRetracted(at=retracted_at, to_ply=to_ply, reason=reason):
                    body = {"type": "MOVES_RETRACTED", "code": None, "to_ply": to_ply, "reason": reason,
                            "at": self._ts(retracted_at), "at_s": _seconds(retracted_at)}
                    publications.append(self._publication("event", body, at=at))
                case ClockUpdate(at=clock_at, clock=clock):
                    publications.append(self._publication("clock", self._clock_body(clock, clock_at), at=at))
                case LinkUpdate():
                    publications.append(self._link_status(output, at=at))
                case StateChanged():
                    state_changed = True
                case _:  # a newer engine output this publisher does not know: never crash on it
                    _LOGGER.warning("output %r has no publication; ignored", output)  # type: ignore[unreachable]
        if state_changed:
            if state is None:
                raise ValueError("a StateChanged needs the state")
            publications.extend(self.snapshot(state, at=at))
        return publications

    def snapshot(self, state: GameState, *, at: float) -> list[Publication]:
        """The retained ``state`` and ``pgn`` publications (after a change, or on (re)connect)."""
        pgn, pgn_json, check = escaped_pgn(state, _json_inner, '"')
        body, raw = self._state_body(state, check)
        return [
            self._publication("state", body, at=at, raw=raw),
            _new_publication(self.topic("pgn"), pgn, TOPICS["pgn"].retain, TOPICS["pgn"].qos, pgn_json),
        ]

    def status(self, *, state: str, board_link: Mapping[str, object], clock_link: Mapping[str, object],
               at: float, software: str = __version__) -> Publication:
        """The retained ``status`` publication.

        Args:
            state: ``online``, ``offline`` or ``degraded``.
            board_link: ``{driver, port, serial, connected}`` (missing keys become null/False).
            clock_link: ``{model, connected}``.
            at: event time.
            software: the version string.

        Raises:
            ValueError: *state* is not one of the three.
        """
        if state not in {"online", "offline", "degraded"}:
            raise ValueError(f"status state must be online, offline or degraded, got {state!r}")
        self._board_link = {"driver": None, "port": None, "serial": None, "connected": False,
                            **{str(k): _jsonable(v) for k, v in board_link.items()}}
        self._clock_link = {"model": None, "connected": False,
                            **{str(k): _jsonable(v) for k, v in clock_link.items()}}
        self._clock_expected = self._clock_expected or bool(self._clock_link["connected"])
        self._software = software
        return self._publication("status", self._status_body(state), at=at)

    def will(self, *, at: float | None = None) -> Publication:
        """The MQTT last will: the retained ``status`` with ``"state": "offline"``.

        Takes a fresh ``seq`` now (see the module docstring). The broker sends the will at
        an unknown later time, so ``ts`` is when it was registered: *at* (pass the connect
        time), else the event time of the last publication.
        """
        body = self._status_body("offline")
        body["board_link"] = {**self._board_link, "connected": False}
        body["clock_link"] = {**self._clock_link, "connected": False}
        return self._publication("status", body, at=self._last_at if at is None else at)

    def clock_model(self, model: str | None, *, at: float) -> Publication | None:
        """The ``status`` telling the clock's model once the device has identified it, else None.

        A clock plugged in after start-up is identified only after its link came up (the DGT
        clock answers a version request), so the link's ``status`` went out with the model
        unknown: the daemon passes the driver's model here and this ``status`` completes it
        (``link_change.detail`` "clock identified: <model>"). None when *model* is None or
        already the one published.
        """
        if model is None or model == self._clock_link["model"]:
            return None
        self._clock_link = {**self._clock_link, "model": model, "connected": True}
        self._clock_expected = True
        body = self._status_body("online" if self._board_link["connected"] else "degraded")
        body["link_change"] = {"link": "clock", "up": True, "detail": f"clock identified: {model}",
                               "at": self._ts(at), "at_s": _seconds(at)}
        return self._publication("status", body, at=at)

    def command_result(self, *, command_id: str, ok: bool, error: str | None = None, at: float,
                       **extra: object) -> Publication:
        """The ``cmd-result`` answer to a command (``id``, ``ok``, ``error`` when not ok, extra fields)."""
        body: dict[str, object] = {}
        for key, value in extra.items():
            if key in {"id", "ok", "error"}:
                continue
            body[key] = _jsonable(value)
        body["id"] = command_id
        body["ok"] = bool(ok)
        if error is not None or not ok:
            body["error"] = error if error is not None else "failed"
        return self._publication("cmd-result", body, at=at)

    # Payload bodies.

    def _status_body(self, state: str) -> dict[str, object]:
        return {
            "state": state,
            "board_link": dict(self._board_link),
            "clock_link": dict(self._clock_link),
            "software": self._software,
        }

    def _link_status(self, update: LinkUpdate, *, at: float) -> Publication:
        if update.link == "clock":
            self._clock_link = {**self._clock_link, "connected": update.up}
            self._clock_expected = self._clock_expected or update.up
        else:
            if update.link != "board":
                _LOGGER.warning("link update for unknown link %r; treated as the board link", update.link)
            self._board_link = {**self._board_link, "connected": update.up}
        degraded = not self._board_link["connected"] or (
            self._clock_expected and not self._clock_link["connected"])
        body = self._status_body("degraded" if degraded else "online")
        body["link_change"] = {"link": update.link, "up": update.up, "detail": update.detail,
                               "at": self._ts(update.at), "at_s": _seconds(update.at)}
        return self._publication("status", body, at=at)

    def _move_body(self, move: MoveRecord, phase: str) -> dict[str, object]:
        clock: dict[str, object] | None = None
        if move.clock_white is not None or move.clock_black is not None:
            clock = {"white": _seconds(move.clock_white), "black": _seconds(move.clock_black)}
        if move.recovered:  # contract addition: a move rebuilt after the daemon missed it (downtime)
            return {**self._move_fields(move, phase, clock), "recovered": True, "recovered_by": move.recovered}
        if move.out_of_turn:  # contract addition: a move made on the opponent's turn that stood (R13)
            return {**self._move_fields(move, phase, clock), "out_of_turn": True}
        return self._move_fields(move, phase, clock)

    def _move_fields(self, move: MoveRecord, phase: str, clock: dict[str, object] | None) -> dict[str, object]:
        return {
            "ply": move.ply,
            "uci": move.uci,
            "san": move.san,
            "side": _color(move.side),
            "fen_after": move.fen_after,
            "phase": phase,
            "made_at": self._ts(move.made_at),
            "made_at_s": _seconds(move.made_at),
            "completed_at": self._time(move.completed_at),
            "completed_at_s": _seconds(move.completed_at),
            "completion": move.completion.value if move.completion is not None else None,
            "clock": clock,
            "emt": _seconds(move.emt),
            "legal": move.legal,
        }

    def _evidence(self, evidence: Evidence) -> dict[str, object]:
        return {"at": self._ts(evidence.at), "at_s": _seconds(evidence.at), "event": evidence.event}

    @staticmethod
    def _suggestion(suggestion: Suggestion) -> dict[str, object]:
        return {
            "text": suggestion.text,
            "move": suggestion.move,
            "add_to_opponent_s": suggestion.add_to_opponent_s,
            "remove_from_offender_s": _seconds(suggestion.remove_from_offender_s),
            "result": suggestion.result,
            "reinstate_ply": suggestion.reinstate_ply,
            "constraints": list(suggestion.constraints),
            "verify": suggestion.verify,
        }

    def _irregularity_body(self, irregularity: Irregularity, change: str) -> dict[str, object]:
        return {
            "id": irregularity.id,
            "code": irregularity.code,
            "subtype": irregularity.subtype,
            "severity": irregularity.severity.value,
            "confidence": irregularity.confidence.value,
            "side": _color(irregularity.side),
            "ply": irregularity.ply,
            "edition": irregularity.edition,
            "articles": list(irregularity.articles),
            "evidence": [self._evidence(item) for item in irregularity.evidence],
            "suggestion": self._suggestion(irregularity.suggestion),
            "status": irregularity.status.value,
            "change": change,
            "t_raised": self._ts(irregularity.t_raised),
            "t_raised_s": _seconds(irregularity.t_raised),
            "t_first_evidence": self._ts(irregularity.t_first_evidence),
            "t_first_evidence_s": _seconds(irregularity.t_first_evidence),
            "claim_deadline": self._time(irregularity.claim_deadline),
            "claim_deadline_s": _seconds(irregularity.claim_deadline),
            "category": irregularity.category,
            "regime": irregularity.regime,
            "ruling": irregularity.ruling,
            "incident": irregularity.incident,
            # additive, only on a finding that names others (mqtt-additions.md)
            **({"related": list(irregularity.related)} if irregularity.related else {}),
        }

    def _clock_body(self, clock: ClockState, at: float) -> dict[str, object]:
        return {
            "white": _seconds(clock.white),
            "black": _seconds(clock.black),
            "running": _color(clock.running),
            "flag": {"white": clock.flag_white, "black": clock.flag_black},
            "model": clock.model,
            "at": self._ts(at),
            "at_s": _seconds(at),
        }

    def _event_body(self, event: GameEvent) -> dict[str, object]:
        body: dict[str, object] = {"type": event.type, "code": event.code, "at": self._ts(event.at),
                                   "at_s": _seconds(event.at)}
        for key, value in event.details.items():
            name = str(key)
            if name in body or name in _ENVELOPE_KEYS:
                _LOGGER.warning("event %s detail %r clashes with a payload field; dropped", event.type, name)
                continue
            body[name] = _jsonable(value)
        return body

    def _state_irregularities(self, state: GameState) -> tuple[list[dict[str, object]], str | None] | None:
        """The ``irregularities`` of ``state``: every finding that is not resolved, in full, and their JSON.

        None (the field is left out) when the state lists open ids but carries no details: an engine
        that does not fill :attr:`GameState.open_irregularity_details` must not look like one that
        has nothing open. The objects have the ``irregularity`` payload's fields except ``change``,
        which describes a publication, not the finding. The JSON text is None when a body is not
        JSON-clean (the payload is then serialised, cleaned, on demand).
        """
        details = [item for item in state.open_irregularity_details
                   if item.status not in (Status.RESOLVED, Status.NOTED)]
        if not details and state.open_irregularities:
            return None
        # Open findings pile up over a game (noted ones stay open): each body is built and serialised once per
        # finding object (the engine replaces a finding when it changes) and copied, not rebuilt for every state.
        cache = self._state_irregularity_bodies
        bodies = []
        texts: list[str] | None = []
        kept: dict[int, tuple[Irregularity, dict[str, object], str | None]] = {}
        for item in details:
            hit = cache.get(id(item))
            if hit is None or hit[0] is not item:
                body = self._irregularity_body(item, "")
                del body["change"]
                hit = (item, body, _object_text(body, {}))
            kept[id(item)] = hit
            bodies.append(dict(hit[1]))   # nested values shared: payloads are never changed once built
            if texts is not None:
                if hit[2] is None:
                    texts = None
                else:
                    texts.append(hit[2])
        self._state_irregularity_bodies = kept
        return bodies, None if texts is None else "[" + ",".join(texts) + "]"

    def _state_body(self, state: GameState, check: str | None = None) -> tuple[dict[str, object], _Raw]:
        """The ``state`` body, and the JSON of those of its values that are kept serialised (the move lists,
        the game, the open findings): the publication's text is joined from them (issue 12).

        *check*: the check mark when the PGN's movetext knows it (:func:`~boardd.core.record.pgn_and_check`).
        """
        body, raw = self._state_fields(state, check)
        irregularities = self._state_irregularities(state)
        if irregularities is not None:
            body["irregularities"], text = irregularities
            if text is not None:
                raw["irregularities"] = text
        if state.dismissed_irregularity_details:
            # the arbiter's dismissals a reopen can take back (mqtt-additions.md "Dismissals in the state")
            dismissed = []
            for item in state.dismissed_irregularity_details:
                item_body = self._irregularity_body(item, "")
                del item_body["change"]
                dismissed.append(item_body)
            body["dismissed"] = dismissed
        return body, raw

    def _game_fields(self, state: GameState) -> tuple[dict[str, object], str | None]:
        """The ``game`` object of the state and its JSON, built once per game (the same for every state)."""
        key = (state.game_id, state.white, state.black, state.event, state.site, state.date, state.round,
               state.board_no, state.time_control, state.edition, state.chess960, state.start_fen, state.category,
               state.regime)
        cached = self._game_cache
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        game: dict[str, object] = {
            "id": state.game_id,
            "white": state.white,
            "black": state.black,
            "event": state.event,
            "site": state.site,
            "date": state.date,
            "round": state.round,
            "board_no": state.board_no,
            "time_control": state.time_control,
            "edition": state.edition,
            "chess960": state.chess960,
            "start_fen": state.start_fen,
            "category": state.category,
            "regime": state.regime,
        }
        text = _object_text(game, {})
        self._game_cache = (key, game, text)
        return game, text

    def _state_fields(self, state: GameState, check: str | None) -> tuple[dict[str, object], _Raw]:
        clock = state.clock
        lists = self._move_lists
        lists.update(state.moves)
        game, game_text = self._game_fields(state)
        raw: _Raw = {"moves": lists.ucis.parts(), "san": lists.sans.parts(),
                                           "illegal_plies": lists.illegal_array()}
        if game_text is not None:
            raw["game"] = game_text
        clock_object: dict[str, object] = {
            "white": _seconds(clock.white),
            "black": _seconds(clock.black),
            "running": _color(clock.running),
            "flag": {"white": clock.flag_white, "black": clock.flag_black},
            "model": clock.model,
        }
        illegal_moves = {"white": state.illegal_moves_white, "black": state.illegal_moves_black}
        try:   # (the C encoder sorts the keys of each object at every call: a fixed order instead, issue 12)
            raw["clock"] = _clock_object_text(clock_object)
            raw["illegal_moves"] = _pair_text(illegal_moves)
        except (TypeError, ValueError):
            pass   # (not JSON-clean: _object_text finds it too, and the payload is serialised, cleaned, when asked)
        fields: dict[str, object] = {
            "game": dict(game),
            "fen": state.fen,
            "moves": list(lists.uci_list),
            "san": list(lists.san_list),
            "illegal_plies": list(lists.illegal_plies),
            **({"out_of_turn_plies": list(lists.out_of_turn_plies)} if lists.out_of_turn_plies else {}),
            "last_move": state.moves[-1].uci if state.moves else None,
            "check": _check_mark(state) if check is None else check or None,
            "turn": _color(state.turn),
            "ply": state.ply,
            "clock": clock_object,
            "result": state.result,
            "termination": state.termination,
            "open_irregularities": list(state.open_irregularities),
            "illegal_moves": illegal_moves,
        }
        return fields, raw


class _MoveLists:
    """The ``state`` payload's ``moves``, ``san``, ``illegal_plies`` and ``out_of_turn_plies``, kept move by move
    (issue 12).

    A state differs from the previous one by a move or two: :meth:`update` goes back to the last record the
    two share (:func:`~boardd.core.record.shared_prefix`) and appends the rest, to the lists (copied into each
    payload: the payloads are kept by the MQTT queue) and to their JSON text (each item serialised once).
    """

    def __init__(self) -> None:
        self.records: list[MoveRecord] = []
        self.uci_list: list[str] = []
        self.san_list: list[str] = []
        self.ucis = _Fragments()
        self.sans = _Fragments()
        self.illegal_index: list[int] = []
        self.illegal_plies: list[int] = []
        #: the plies of ``illegal_plies`` entered out of turn (R13, ``MoveRecord.out_of_turn``)
        self.out_of_turn_plies: list[int] = []
        self._illegal_text: str | None = "[]"

    def update(self, moves: Sequence[MoveRecord]) -> None:
        keep = shared_prefix(self.records, moves)
        if keep < len(self.records):
            del self.records[keep:], self.uci_list[keep:], self.san_list[keep:]
            self.ucis.truncate(keep)
            self.sans.truncate(keep)
            while self.illegal_index and self.illegal_index[-1] >= keep:
                self.illegal_index.pop()
                if self.out_of_turn_plies and self.out_of_turn_plies[-1] == self.illegal_plies[-1]:
                    self.out_of_turn_plies.pop()
                self.illegal_plies.pop()
                self._illegal_text = None
        for index in range(keep, len(moves)):
            move = moves[index]
            self.records.append(move)
            self.uci_list.append(move.uci)
            self.san_list.append(move.san)
            self.ucis.append(move.uci)
            self.sans.append(move.san)
            if not move.legal:
                self.illegal_index.append(index)
                self.illegal_plies.append(move.ply)
                if move.out_of_turn:
                    self.out_of_turn_plies.append(move.ply)
                self._illegal_text = None

    def illegal_array(self) -> str:
        """The JSON of ``illegal_plies`` (a few numbers; rebuilt when they change)."""
        if self._illegal_text is None:
            self._illegal_text = "[" + ",".join(map(_fragment, self.illegal_plies)) + "]"
        return self._illegal_text


def _check_mark(state: GameState) -> str | None:
    """``"#"`` (mate), ``"+"`` (check) or None for the official position: what lichess's broadcast JSON shows."""
    return _check_mark_of(state.fen, state.chess960)


@functools.lru_cache(maxsize=256)
def _check_mark_of(fen: str, chess960: bool) -> str | None:
    try:
        board = chess.Board(fen, chess960=chess960)
    except ValueError:
        return None
    if not board.is_check():
        return None
    return "#" if board.is_checkmate() else "+"


# --- Validation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ListOf:
    item: _Spec


@dataclass(frozen=True, slots=True)
class _OneOf:
    values: frozenset[object]


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    nullable: bool = False


_Spec = tuple[type, ...] | dict[str, "_Spec"] | _ListOf | _OneOf | _Pattern

_NONE = type(None)
_NUM: tuple[type, ...] = (int, float)
_NUM_OR_NULL: tuple[type, ...] = (int, float, _NONE)
_STR_OR_NULL: tuple[type, ...] = (str, _NONE)
_SIDE_OR_NULL = _OneOf(frozenset({"white", "black", None}))
_ISO = _Pattern(_ISO_TS)
_ISO_OR_NULL = _Pattern(_ISO_TS, nullable=True)

_ENVELOPE_SPEC: dict[str, _Spec] = {
    "v": _OneOf(frozenset({CONTRACT_VERSION})),
    "board": _Pattern(_BOARD_ID),
    "session": (int,),
    "seq": (int,),
    "ts": _ISO,
}

#: The contract's required fields and their types, per topic kind.
_SPECS: dict[str, dict[str, _Spec]] = {
    "status": {
        "state": _OneOf(frozenset({"online", "offline", "degraded"})),
        "board_link": {"driver": _STR_OR_NULL, "port": _STR_OR_NULL, "serial": _STR_OR_NULL,
                       "connected": (bool,)},
        "clock_link": {"model": _STR_OR_NULL, "connected": (bool,)},
        "software": (str,),
    },
    "state": {
        "game": {"id": (str,), "white": (str,), "black": (str,), "event": (str,), "round": (str,),
                 "board_no": (int, _NONE), "time_control": (str,), "edition": (int,)},
        "fen": (str,),
        "moves": _ListOf((str,)),
        "san": _ListOf((str,)),
        "turn": _OneOf(frozenset({"white", "black"})),
        "ply": (int,),
        "clock": {"white": _NUM_OR_NULL, "black": _NUM_OR_NULL, "running": _SIDE_OR_NULL},
        "result": _OneOf(frozenset({"*", "1-0", "0-1", "1/2-1/2"})),
        "termination": _STR_OR_NULL,
        "open_irregularities": _ListOf((str,)),
        "illegal_moves": {"white": (int,), "black": (int,)},
    },
    "move": {
        "ply": (int,),
        "uci": (str,),
        "san": (str,),
        "side": _OneOf(frozenset({"white", "black"})),
        "fen_after": (str,),
        "phase": _OneOf(frozenset({"made", "completed"})),
        "made_at": _ISO,
        "completed_at": _ISO_OR_NULL,
        "completion": _OneOf(frozenset({"press", "game_end", "next_move", None})),
        "clock": (dict, _NONE),
        "emt": _NUM_OR_NULL,
    },
    "irregularity": {
        "id": (str,),
        "code": (str,),
        "subtype": _STR_OR_NULL,
        "severity": _OneOf(frozenset({"info", "warning", "illegal-move"})),
        "confidence": _OneOf(frozenset({"auto", "suspected"})),
        "side": _SIDE_OR_NULL,
        "ply": (int,),
        "edition": (int,),
        "articles": _ListOf((str,)),
        "evidence": _ListOf({"at": _ISO, "event": (str,)}),
        "suggestion": (dict,),
        "status": _OneOf(frozenset({"open", "acknowledged", "resolved", "noted"})),
    },
    "clock": {
        "white": _NUM_OR_NULL,
        "black": _NUM_OR_NULL,
        "running": _SIDE_OR_NULL,
        "flag": {"white": (bool,), "black": (bool,)},
        "model": _STR_OR_NULL,
    },
    "event": {"type": (str,)},
    "cmd-result": {"id": (str,), "ok": (bool,)},
}


def _check(value: object, spec: _Spec, path: str, problems: list[str]) -> None:
    if isinstance(spec, tuple):
        # bool is an int in Python, never in the contract.
        if isinstance(value, bool) and bool not in spec:
            problems.append(f"{path}: expected {'/'.join(t.__name__ for t in spec)}, got bool")
        elif not isinstance(value, spec):
            problems.append(f"{path}: expected {'/'.join(t.__name__ for t in spec)}, got {type(value).__name__}")
        elif isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{path}: not a finite number")
    elif isinstance(spec, _OneOf):
        if isinstance(value, (dict, list)) or value not in spec.values or isinstance(value, bool):
            problems.append(f"{path}: {value!r} is not one of {sorted(map(repr, spec.values))}")
    elif isinstance(spec, _Pattern):
        if value is None and spec.nullable:
            return
        if not isinstance(value, str) or not spec.regex.fullmatch(value):
            problems.append(f"{path}: {value!r} does not match {spec.regex.pattern}")
    elif isinstance(spec, _ListOf):
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for index, item in enumerate(value):
            _check(item, spec.item, f"{path}[{index}]", problems)
    else:
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        for key, sub in spec.items():
            if key not in value:
                problems.append(f"{path}.{key}: missing" if path else f"{key}: missing")
            else:
                _check(value[key], sub, f"{path}.{key}" if path else key, problems)


def validate_payload(topic_kind: str, payload: object) -> list[str]:
    """Check a JSON payload against the contract: the envelope and the topic's required fields and types.

    Extra fields are allowed (the contract says so). Returns the problems found, empty when valid.

    Args:
        topic_kind: ``status``, ``state``, ``move``, ``irregularity``, ``clock``, ``event`` or ``cmd-result``.
        payload: the decoded JSON object (anything else is reported as a problem).

    Raises:
        ValueError: unknown topic kind (``pgn`` is text, not JSON).
    """
    spec = _SPECS.get(topic_kind)
    if spec is None:
        raise ValueError(f"no JSON payload schema for topic kind {topic_kind!r}")
    problems: list[str] = []
    if not isinstance(payload, dict):
        return [f"payload: expected an object, got {type(payload).__name__}"]
    _check(payload, _ENVELOPE_SPEC, "", problems)
    _check(payload, spec, "", problems)
    seq = payload.get("seq")
    if isinstance(seq, int) and not isinstance(seq, bool) and seq < 1:
        problems.append("seq: must be >= 1")
    if topic_kind == "cmd-result" and payload.get("ok") is False and not isinstance(payload.get("error"), str):
        problems.append("error: required (a string) when ok is false")
    if topic_kind == "move" and isinstance(payload.get("clock"), dict):
        _check(payload["clock"], {"white": _NUM_OR_NULL, "black": _NUM_OR_NULL}, "clock", problems)
    if topic_kind == "state":
        moves, san, ply = payload.get("moves"), payload.get("san"), payload.get("ply")
        if isinstance(moves, list) and isinstance(san, list) and len(moves) != len(san):
            problems.append(f"san: {len(san)} entries for {len(moves)} moves")
        if isinstance(moves, list) and isinstance(ply, int) and ply != len(moves):
            problems.append(f"ply: {ply} but {len(moves)} moves")
        if "irregularities" in payload:
            _check_state_irregularities(payload["irregularities"], payload.get("open_irregularities"), problems)
        if "dismissed" in payload:
            _check_state_dismissed(payload["dismissed"], problems)
    return problems


def _check_state_dismissed(value: object, problems: list[str]) -> None:
    """The optional ``dismissed`` of ``state``: irregularity objects, resolved (the dismissals a reopen takes back)."""
    if not isinstance(value, list):
        problems.append(f"dismissed: expected a list, got {type(value).__name__}")
        return
    for index, item in enumerate(value):
        _check(item, _SPECS["irregularity"], f"dismissed[{index}]", problems)
        if isinstance(item, dict) and item.get("status") != "resolved":
            problems.append(f"dismissed[{index}].status: a dismissal not taken back is resolved")


def _check_state_irregularities(value: object, open_ids: object, problems: list[str]) -> None:
    """The optional ``irregularities`` of ``state``: irregularity objects, not resolved, listed as open."""
    if not isinstance(value, list):
        problems.append(f"irregularities: expected a list, got {type(value).__name__}")
        return
    listed = set(open_ids) if isinstance(open_ids, list) and all(isinstance(i, str) for i in open_ids) else None
    seen: set[str] = set()
    for index, item in enumerate(value):
        path = f"irregularities[{index}]"
        _check(item, _SPECS["irregularity"], path, problems)
        if not isinstance(item, dict):
            continue
        ident, status = item.get("id"), item.get("status")
        if status == "resolved":
            problems.append(f"{path}.status: a resolved irregularity is not open")
        if isinstance(ident, str):
            if ident in seen:
                problems.append(f"{path}.id: {ident!r} listed twice")
            seen.add(ident)
            if listed is not None and ident not in listed:
                problems.append(f"{path}.id: {ident!r} is not in open_irregularities")
