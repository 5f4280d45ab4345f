"""The boardd event log: JSON Lines, one :mod:`boardd.core.events` event per line.

Theory of operation
-------------------
The log is board-agnostic: whatever the driver (DGT, Millennium, Chessnut,
Certabo, the simulator), what reaches the engine is a sequence of
:data:`boardd.core.events.Event` values, and that is what the log stores. Replaying a
log through :class:`boardd.core.engine.Engine` therefore reproduces exactly what the
daemon saw. The format is specified in ``docs/event-log.md``; in short::

    {"type": "header", "format": "boardd-events", "version": 1, "rules": {...}, "game": {...}, "board": "t12"}
    {"t": 0.0, "type": "snapshot", "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}
    {"t": 0.35, "type": "square", "sq": "e2", "piece": null}
    {"t": 0.7, "type": "square", "sq": "e4", "piece": "P"}

Every line is a JSON object with ``"t"`` (seconds, the event's ``at``) and
``"type"``. Reading is strict: an unknown type, an unknown key, a bad square
name, an impossible value (a negative clock time) is an
:class:`boardd.core.errors.EventLogError` carrying the line number. A reader that must
not stop on one bad line (``boardd replay``) passes ``on_error`` and gets every
bad line reported while the good ones keep flowing.

This module is pure: it works on strings, iterables of lines and text streams
handed to it; it opens no files.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

import chess

from boardd.core.errors import BoarddError, EventError, EventLogError
from boardd.core.events import (
    Acknowledge,
    BoardLog,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Event,
    FillGap,
    GameInfo,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
    Marker,
    NewGame,
    Reinstate,
    Reopen,
    Resolve,
    SetClock,
    SetOrientation,
    SetPlayers,
    SetResult,
    SquareChanged,
)
from boardd.core.settings import Category, Regime, RulesConfig, Timing

__all__ = [
    "FORMAT",
    "VERSION",
    "LogHeader",
    "board_from_text",
    "board_to_text",
    "event_from_json",
    "event_to_json",
    "game_from_json",
    "game_to_json",
    "header_from_json",
    "header_to_json",
    "read_events",
    "read_header",
    "rules_from_json",
    "rules_to_json",
    "write_events",
]

_LOGGER = logging.getLogger(__name__)

#: Value of the header's ``"format"`` key.
FORMAT = "boardd-events"
#: Version of the format this module writes (and the highest it reads).
VERSION = 1

_MARKER_PREFIX = "marker:"
#: Extra placement characters of a snapshot board for markers (docs/event-log.md).
_MARKER_CHARS = {"?": Marker.UNKNOWN, "=": Marker.DRAW, "+": Marker.WHITE_WINS, "-": Marker.BLACK_WINS}
_CHAR_OF_MARKER = {marker: char for char, marker in _MARKER_CHARS.items()}

OnError = Callable[[EventLogError], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class LogHeader:
    """The optional first line of a log, which makes it self-describing.

    Attributes:
        version: format version of the log.
        rules: the rules the game was judged under (``boardd replay`` builds its engine from it).
        game: the game, when known (a ``new-game`` command in the log says the same).
        board: the board name or number in the hall (free text, e.g. ``"t12"``).
        extra: any other header keys, kept verbatim (the simulator stores its seed and profile here).
    """

    version: int = VERSION
    rules: RulesConfig = field(default_factory=RulesConfig)
    game: GameInfo | None = None
    board: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


# --- small typed readers ------------------------------------------------------


def _fail(message: str) -> EventLogError:
    return EventLogError(message)


def _get(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _fail(f"{where}: missing key {key!r}")
    return obj[key]


def _as_str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"{what} must be a string, got {value!r}")
    return value


def _as_opt_str(value: Any, what: str) -> str | None:
    return None if value is None else _as_str(value, what)


def _as_bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(f"{what} must be true or false, got {value!r}")
    return value


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{what} must be an integer, got {value!r}")
    return value


def _as_opt_int(value: Any, what: str) -> int | None:
    return None if value is None else _as_int(value, what)


def _as_number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _as_opt_number(value: Any, what: str) -> float | None:
    return None if value is None else _as_number(value, what)


def _check_keys(obj: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise _fail(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")


# --- squares, contents, boards ------------------------------------------------


def _square_from_json(value: Any) -> chess.Square:
    name = _as_str(value, "sq")
    try:
        return chess.parse_square(name)
    except ValueError:
        raise _fail(f"bad square name {name!r} (expected a1..h8)") from None


def _content_to_json(content: Content) -> str | None:
    if content is None:
        return None
    if isinstance(content, Marker):
        return _MARKER_PREFIX + content.value
    return content.symbol()


def _content_from_json(value: Any) -> Content:
    if value is None:
        return None
    text = _as_str(value, "piece")
    if text.startswith(_MARKER_PREFIX):
        try:
            return Marker(text[len(_MARKER_PREFIX):])
        except ValueError:
            raise _fail(f"unknown marker {text!r}") from None
    if len(text) != 1 or text not in "PNBRQKpnbrqk":
        raise _fail(f"bad piece {text!r} (expected a FEN letter PNBRQKpnbrqk, null or marker:...)")
    return chess.Piece.from_symbol(text)


def board_to_text(squares: tuple[Content, ...]) -> str:
    """A snapshot's 64 squares as a FEN piece placement, markers as ``? = + -``.

    Args:
        squares: contents indexed by python-chess square (a1=0 .. h8=63).

    Returns:
        e.g. ``"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"``.
    """
    ranks = []
    for rank in range(7, -1, -1):
        text = ""
        empty = 0
        for file in range(8):
            content = squares[chess.square(file, rank)]
            if content is None:
                empty += 1
                continue
            if empty:
                text += str(empty)
                empty = 0
            text += _CHAR_OF_MARKER[content] if isinstance(content, Marker) else content.symbol()
        if empty:
            text += str(empty)
        ranks.append(text)
    return "/".join(ranks)


def board_from_text(text: str) -> tuple[Content, ...]:
    """Inverse of :func:`board_to_text`.

    Raises:
        EventLogError: the placement is malformed.
    """
    rows = text.split("/")
    if len(rows) != 8:
        raise _fail(f"board placement needs 8 ranks separated by '/', got {text!r}")
    squares: list[Content] = [None] * 64
    for row_index, row in enumerate(rows):
        rank = 7 - row_index
        file = 0
        for char in row:
            if char.isdigit():
                file += int(char)
                continue
            if file > 7:
                break
            if char in _MARKER_CHARS:
                squares[chess.square(file, rank)] = _MARKER_CHARS[char]
            elif char in "PNBRQKpnbrqk":
                squares[chess.square(file, rank)] = chess.Piece.from_symbol(char)
            else:
                raise _fail(f"bad character {char!r} in board placement {text!r}")
            file += 1
        if file != 8:
            raise _fail(f"rank {rank + 1} of board placement {text!r} does not have 8 squares")
    return tuple(squares)


# --- rules and games ------------------------------------------------------------

_TIMING_FLOATS = ("t_flicker", "t_settle", "t_scan", "t_simul", "t_latency", "t_knock", "t_adjust", "t_bounce")


def rules_to_json(rules: RulesConfig) -> dict[str, Any]:
    """The rules configuration as a JSON object (all fields, timing included)."""
    timing: dict[str, Any] = {name: getattr(rules.timing, name) for name in _TIMING_FLOATS}
    timing["d_far"] = rules.timing.d_far
    return {
        "category": None if rules.category is None else rules.category.value,
        "regime": rules.regime.value,
        "timing": timing,
        "white_clock_side": rules.white_clock_side.value,
        "blitz_adequate_penalty_2023": rules.blitz_adequate_penalty_2023,
        "result_gesture": rules.result_gesture,
        "clock_expected": rules.clock_expected,
    }


def rules_from_json(obj: Any) -> RulesConfig:
    """Inverse of :func:`rules_to_json`; missing keys take the defaults of :class:`RulesConfig`.

    Raises:
        EventLogError: unknown keys or invalid values.
    """
    if not isinstance(obj, Mapping):
        raise _fail(f"rules must be an object, got {obj!r}")
    _check_keys(obj, ("category", "regime", "timing", "white_clock_side", "blitz_adequate_penalty_2023",
                      "result_gesture", "clock_expected"), "rules")
    kwargs: dict[str, Any] = {}
    try:
        if obj.get("category") is not None:
            kwargs["category"] = Category(_as_str(obj["category"], "rules.category"))
        if "regime" in obj:
            kwargs["regime"] = Regime(_as_str(obj["regime"], "rules.regime"))
        if "white_clock_side" in obj:
            kwargs["white_clock_side"] = ClockSide(_as_str(obj["white_clock_side"], "rules.white_clock_side"))
        if "blitz_adequate_penalty_2023" in obj:
            kwargs["blitz_adequate_penalty_2023"] = _as_int(obj["blitz_adequate_penalty_2023"],
                                                            "rules.blitz_adequate_penalty_2023")
        for name in ("result_gesture", "clock_expected"):
            if name in obj:
                kwargs[name] = _as_bool(obj[name], f"rules.{name}")
        if "timing" in obj:
            timing = obj["timing"]
            if not isinstance(timing, Mapping):
                raise _fail(f"rules.timing must be an object, got {timing!r}")
            _check_keys(timing, (*_TIMING_FLOATS, "d_far"), "rules.timing")
            timing_kwargs: dict[str, Any] = {
                name: _as_number(timing[name], f"rules.timing.{name}") for name in _TIMING_FLOATS if name in timing
            }
            if "d_far" in timing:
                timing_kwargs["d_far"] = _as_int(timing["d_far"], "rules.timing.d_far")
            kwargs["timing"] = Timing(**timing_kwargs)
        return RulesConfig(**kwargs)
    except EventLogError:
        raise
    except (BoarddError, ValueError) as exc:
        raise _fail(f"invalid rules: {exc}") from None


_GAME_STR = ("id", "white", "black", "event", "site", "date", "round", "time_control")


def game_to_json(game: GameInfo) -> dict[str, Any]:
    """A :class:`GameInfo` as a JSON object (all fields)."""
    obj: dict[str, Any] = {name: getattr(game, name) for name in _GAME_STR}
    obj.update(board_no=game.board_no, edition=game.edition, start_fen=game.start_fen, chess960=game.chess960)
    if game.variant:
        obj["variant"] = game.variant
    return obj


def game_from_json(obj: Any) -> GameInfo:
    """Inverse of :func:`game_to_json`; missing keys take the defaults of :class:`GameInfo`.

    Raises:
        EventLogError: unknown keys or invalid values.
    """
    if not isinstance(obj, Mapping):
        raise _fail(f"game must be an object, got {obj!r}")
    _check_keys(obj, (*_GAME_STR, "board_no", "edition", "start_fen", "chess960", "variant"), "game")
    kwargs: dict[str, Any] = {name: _as_str(obj[name], f"game.{name}") for name in _GAME_STR if name in obj}
    if "board_no" in obj:
        kwargs["board_no"] = _as_opt_int(obj["board_no"], "game.board_no")
    if "edition" in obj:
        kwargs["edition"] = _as_int(obj["edition"], "game.edition")
    if "start_fen" in obj:
        kwargs["start_fen"] = _as_opt_str(obj["start_fen"], "game.start_fen")
    if "chess960" in obj:
        kwargs["chess960"] = _as_bool(obj["chess960"], "game.chess960")
    if "variant" in obj:
        kwargs["variant"] = _as_str(obj["variant"], "game.variant")
    try:
        return GameInfo(**kwargs)
    except EventError as exc:
        raise _fail(str(exc)) from None


# --- events ---------------------------------------------------------------------


def _side_to_json(side: ClockSide | None) -> str | None:
    return None if side is None else side.value


def _side_from_json(value: Any, what: str) -> ClockSide | None:
    if value is None:
        return None
    try:
        return ClockSide(_as_str(value, what))
    except ValueError:
        raise _fail(f"{what} must be \"left\", \"right\" or null, got {value!r}") from None


def event_to_json(event: Event) -> dict[str, Any]:
    """One event as a JSON object (``"t"`` and ``"type"`` first).

    Raises:
        TypeError: *event* is not a :data:`boardd.core.events.Event`.
    """
    head: dict[str, Any] = {"t": event.at}
    match event:
        case SquareChanged():
            return {**head, "type": "square", "sq": chess.square_name(event.square),
                    "piece": _content_to_json(event.content)}
        case BoardSnapshot():
            return {**head, "type": "snapshot", "board": board_to_text(event.squares)}
        case ClockReading():
            obj = {**head, "type": "clock", "left": event.left, "right": event.right,
                   "running": _side_to_json(event.running), "lever": _side_to_json(event.lever_high)}
            # Optional fields are written only when they differ from ClockReading's defaults.
            for name, default in (("left_flag", False), ("right_flag", False), ("battery_low", False),
                                  ("connected", True), ("model", None)):
                value = getattr(event, name)
                if value != default:
                    obj[name] = value
            return obj
        case LinkChanged():
            return {**head, "type": "link", "link": event.link.value, "up": event.up, "detail": event.detail}
        case BoardLog():
            entries: list[list[Any]] = [
                [chess.square_name(e.square), _content_to_json(e.content)] if isinstance(e, LoggedChange)
                else ["press", e.side.value, e.shown] for e in event.entries]
            return {**head, "type": "board-log", "source": event.source, "entries": entries}
        case NewGame():
            return {**head, "type": "new-game", "game": game_to_json(event.game)}
        case SetPlayers():
            return {**head, "type": "set-players", "white": event.white, "black": event.black}
        case Acknowledge():
            return {**head, "type": "ack", "id": event.irregularity_id}
        case Resolve():
            body = {**head, "type": "resolve", "id": event.irregularity_id, "ruling": event.ruling,
                    "accept": event.accept, "claim": event.claim}
            return {**body, "alone": True} if event.alone else body
        case Reopen():
            return {**head, "type": "reopen", "id": event.irregularity_id}
        case Reinstate():
            return {**head, "type": "reinstate", "ply": event.ply}
        case SetClock():
            return {**head, "type": "set-clock", "white": event.white, "black": event.black,
                    "moves_white": event.moves_white, "moves_black": event.moves_black}
        case SetResult():
            return {**head, "type": "set-result", "result": event.result, "termination": event.termination}
        case SetOrientation():
            return {**head, "type": "orientation", "white_at_a1": event.white_at_a1}
        case FillGap():
            return {**head, "type": "fill-gap", "ply": event.ply, "moves": list(event.moves)}
    raise TypeError(f"not a boardd event: {event!r}")


def _square_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "sq", "piece"), "square")
    return SquareChanged(at=at, square=_square_from_json(_get(obj, "sq", "square")),
                         content=_content_from_json(_get(obj, "piece", "square")))


def _snapshot_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "board"), "snapshot")
    return BoardSnapshot(at=at, squares=board_from_text(_as_str(_get(obj, "board", "snapshot"), "board")))


def _clock_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "left", "right", "running", "lever", "left_flag", "right_flag", "battery_low",
                      "connected", "model"), "clock")
    return ClockReading(
        at=at,
        left=_as_opt_number(obj.get("left"), "left"),
        right=_as_opt_number(obj.get("right"), "right"),
        running=_side_from_json(obj.get("running"), "running"),
        lever_high=_side_from_json(obj.get("lever"), "lever"),
        left_flag=_as_bool(obj.get("left_flag", False), "left_flag"),
        right_flag=_as_bool(obj.get("right_flag", False), "right_flag"),
        battery_low=_as_bool(obj.get("battery_low", False), "battery_low"),
        connected=_as_bool(obj.get("connected", True), "connected"),
        model=_as_opt_str(obj.get("model"), "model"),
    )


def _link_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "link", "up", "detail"), "link")
    name = _as_str(_get(obj, "link", "link"), "link")
    try:
        link = Link(name)
    except ValueError:
        raise _fail(f"link must be \"board\" or \"clock\", got {name!r}") from None
    return LinkChanged(at=at, link=link, up=_as_bool(_get(obj, "up", "link"), "up"),
                       detail=_as_str(obj.get("detail", ""), "detail"))


def _board_log_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "source", "entries"), "board-log")
    raw = _get(obj, "entries", "board-log")
    if not isinstance(raw, list):
        raise _fail("board-log entries must be a list")
    entries: list[LogEntry] = []
    for item in raw:
        if not isinstance(item, list) or len(item) not in (2, 3):
            raise _fail(f"a board-log entry is [square, piece] or [\"press\", side, seconds], got {item!r}")
        if item[0] == "press" and len(item) == 3:
            side = _side_from_json(item[1], "press side")
            if side is None:
                raise _fail("a logged press needs its side")
            entries.append(LoggedPress(side=side, shown=_as_number(item[2], "press seconds")))
        elif len(item) == 2:
            entries.append(LoggedChange(square=_square_from_json(item[0]), content=_content_from_json(item[1])))
        else:
            raise _fail(f"bad board-log entry {item!r}")
    return BoardLog(at=at, entries=tuple(entries), source=_as_str(obj.get("source", "eeprom"), "source"))


def _new_game_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "game"), "new-game")
    return NewGame(at=at, game=game_from_json(obj.get("game", {})))


def _set_players_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "white", "black"), "set-players")
    return SetPlayers(at=at, white=_as_str(_get(obj, "white", "set-players"), "white"),
                      black=_as_str(_get(obj, "black", "set-players"), "black"))


def _ack_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "id"), "ack")
    return Acknowledge(at=at, irregularity_id=_as_str(_get(obj, "id", "ack"), "id"))


def _resolve_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "id", "ruling", "accept", "claim", "alone"), "resolve")
    return Resolve(at=at, irregularity_id=_as_str(_get(obj, "id", "resolve"), "id"),
                   ruling=_as_str(obj.get("ruling", ""), "ruling"), accept=_as_bool(obj.get("accept", True), "accept"),
                   claim=_as_bool(obj.get("claim", False), "claim"), alone=_as_bool(obj.get("alone", False), "alone"))


def _reopen_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "id"), "reopen")
    return Reopen(at=at, irregularity_id=_as_str(_get(obj, "id", "reopen"), "id"))


def _reinstate_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "ply"), "reinstate")
    return Reinstate(at=at, ply=_as_int(_get(obj, "ply", "reinstate"), "ply"))


def _set_clock_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "white", "black", "moves_white", "moves_black"), "set-clock")
    return SetClock(at=at, white=_as_number(_get(obj, "white", "set-clock"), "white"),
                    black=_as_number(_get(obj, "black", "set-clock"), "black"),
                    moves_white=_as_opt_int(obj.get("moves_white"), "moves_white"),
                    moves_black=_as_opt_int(obj.get("moves_black"), "moves_black"))


def _set_result_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "result", "termination"), "set-result")
    return SetResult(at=at, result=_as_str(_get(obj, "result", "set-result"), "result"),
                     termination=_as_str(obj.get("termination", "normal"), "termination"))


def _orientation_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "white_at_a1"), "orientation")
    return SetOrientation(at=at, white_at_a1=_as_bool(_get(obj, "white_at_a1", "orientation"), "white_at_a1"))


def _fill_gap_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type", "ply", "moves"), "fill-gap")
    moves = _get(obj, "moves", "fill-gap")
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise _fail("fill-gap moves must be a list of strings")
    return FillGap(at=at, ply=_as_int(_get(obj, "ply", "fill-gap"), "ply"), moves=tuple(moves))


def _flip_event(obj: Mapping[str, Any], at: float) -> Event:
    _check_keys(obj, ("t", "type"), "flip")
    return SetOrientation(at=at, white_at_a1=False)


_READERS: dict[str, Callable[[Mapping[str, Any], float], Event]] = {
    "square": _square_event,
    "snapshot": _snapshot_event,
    "clock": _clock_event,
    "link": _link_event,
    "board-log": _board_log_event,
    "new-game": _new_game_event,
    "set-players": _set_players_event,
    "ack": _ack_event,
    "resolve": _resolve_event,
    "reopen": _reopen_event,
    "reinstate": _reinstate_event,
    "set-clock": _set_clock_event,
    "set-result": _set_result_event,
    "orientation": _orientation_event,
    "flip": _flip_event,
    "fill-gap": _fill_gap_event,
}


def event_from_json(obj: Any) -> Event:
    """Build the event a JSON object describes.

    Raises:
        EventLogError: not an object, missing ``t``/``type``, unknown type or key, bad value
            (without a line number; :func:`read_events` adds it).
    """
    if not isinstance(obj, Mapping):
        raise _fail(f"an event must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if kind == "header":
        raise _fail("a header is only allowed on the first line")
    if not isinstance(kind, str) or kind not in _READERS:
        raise _fail(f"unknown event type {kind!r}")
    at = _as_number(_get(obj, "t", kind), "t")
    try:
        return _READERS[kind](obj, at)
    except EventLogError:
        raise
    except BoarddError as exc:  # EventError from the event constructors: impossible values.
        raise _fail(f"{kind}: {exc}") from None


# --- header ---------------------------------------------------------------------


def header_to_json(header: LogHeader) -> dict[str, Any]:
    """A :class:`LogHeader` as the JSON object of the first line."""
    obj: dict[str, Any] = {"type": "header", "format": FORMAT, "version": header.version,
                           "rules": rules_to_json(header.rules)}
    if header.game is not None:
        obj["game"] = game_to_json(header.game)
    if header.board is not None:
        obj["board"] = header.board
    for key, value in header.extra.items():
        if key not in obj:
            obj[key] = value
    return obj


def header_from_json(obj: Any) -> LogHeader:
    """Inverse of :func:`header_to_json`.

    Raises:
        EventLogError: not a header, another format, a newer version, bad rules or game.
    """
    if not isinstance(obj, Mapping) or obj.get("type") != "header":
        raise _fail("not a header line")
    if obj.get("format") != FORMAT:
        raise _fail(f"header format must be {FORMAT!r}, got {obj.get('format')!r}")
    version = _as_int(obj.get("version"), "header version")
    if not 1 <= version <= VERSION:
        raise _fail(f"unsupported event log version {version} (this boardd reads 1..{VERSION})")
    extra = {key: value for key, value in obj.items()
             if key not in ("type", "format", "version", "rules", "game", "board")}
    return LogHeader(
        version=version,
        rules=rules_from_json(obj.get("rules", {})),
        game=None if obj.get("game") is None else game_from_json(obj["game"]),
        board=_as_opt_str(obj.get("board"), "header board"),
        extra=extra,
    )


def _is_skipped(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _parse_line(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise _fail(f"not JSON: {exc.msg} at column {exc.colno}") from None


def read_header(lines: Iterable[str]) -> LogHeader | None:
    """The header of a log, or ``None`` when the first line is an event.

    Only the first non-blank, non-comment line is looked at.

    Raises:
        EventLogError: the first line is a malformed header (or not JSON).
    """
    for line_no, line in enumerate(lines, start=1):
        if _is_skipped(line):
            continue
        try:
            obj = _parse_line(line)
            if isinstance(obj, Mapping) and obj.get("type") == "header":
                return header_from_json(obj)
        except EventLogError as exc:
            raise EventLogError(str(exc), line_no=line_no) from None
        return None
    return None


def read_events(lines: Iterable[str], *, on_error: OnError | None = None) -> Iterator[tuple[int, Event]]:
    """Read a log: yield ``(line number, event)`` for every event line.

    Blank lines and lines starting with ``#`` are skipped; a header on the first
    such line is skipped too (read it with :func:`read_header`).

    Args:
        lines: the log's lines (an open text file, ``str.splitlines()``, ...).
        on_error: called with the error for each bad line, which is then skipped.
            Without it the first bad line raises.

    Raises:
        EventLogError: a bad line (with ``line_no``), when no ``on_error`` is given.
    """
    first = True
    for line_no, line in enumerate(lines, start=1):
        if _is_skipped(line):
            continue
        try:
            obj = _parse_line(line)
            if first and isinstance(obj, Mapping) and obj.get("type") == "header":
                first = False
                header_from_json(obj)  # validate it: a broken header is a bad line too
                continue
            first = False
            event = event_from_json(obj)
        except EventLogError as exc:
            error = EventLogError(str(exc), line_no=line_no)
            if on_error is None:
                raise error from None
            _LOGGER.debug("event log line %d skipped: %s", line_no, exc)
            on_error(error)
            continue
        yield line_no, event


#: Characters that ``str.splitlines()`` treats as line breaks and JSON leaves unescaped.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _dumps(obj: Mapping[str, Any]) -> str:
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    for char, escape in _LINE_BREAKS.items():
        text = text.replace(char, escape)
    return text


def write_events(stream: TextIO, events: Iterable[Event], header: LogHeader | None = None) -> int:
    """Write a log (header line first, when given) to a text stream.

    Returns:
        The number of event lines written.
    """
    if header is not None:
        stream.write(_dumps(header_to_json(header)) + "\n")
    count = 0
    for event in events:
        stream.write(_dumps(event_to_json(event)) + "\n")
        count += 1
    return count
