"""Arbiter and operator commands: ``{root}/cmd/{name}`` payloads to :mod:`boardd.core.events` commands.

Theory of operation
-------------------
A command arrives as a JSON object on ``{prefix}/{board}/cmd/{name}``. This
module is pure: :func:`parse_command` validates the payload strictly (known
fields only, exact types, bounded strings, no control characters), checks the
optional shared-secret token of the sender's role, and returns the
:class:`boardd.core.events.ArbiterCommand` to feed to the engine. Any problem raises
:class:`CommandError` carrying the command id (when one could be read), so the
daemon can answer ``{root}/cmd-result`` with ``ok: false`` and change nothing.

Payloads (``id`` is the caller's command id, echoed in the answer; ``token``
is required only when tokens are configured)::

    new-game     {"id", "white"?, "black"?, "event"?, "site"?, "date"?, "round"?, "board_no"?,
                  "time_control"?, "edition"?, "start_fen"?, "chess960"?,
                  "variant"?}
    set-players  {"id", "white", "black"}
    ack          {"id", "irregularity"}
    resolve      {"id", "irregularity", "ruling"?, "accept"?, "claim"?, "alone"?}
    reopen       {"id", "irregularity"}            (takes back the arbiter's dismissal of it)
    reinstate    {"id", "ply"}
    set-clock    {"id", "white", "black", "moves_white"?, "moves_black"?}   (seconds)
    set-result   {"id", "result", "termination"?}
    flip         {"id", "white_at_a1"?}       (without it: turn the board round)
    fill-gap     {"id", "ply", "moves"}       (a downtime gap: the moves it stands for, UCI or SAN)

Fields missing from ``new-game`` come from the board's configured game defaults.

The answer on ``{root}/cmd-result`` of a ``new-game`` (with a timed control) or ``set-clock`` sent
to a board with a clock comes once the physical clock has answered: ``clock_set`` is true only
when the clock acknowledged the setting; ``clock_answer`` is ``ack``, ``refused`` (an error ack:
a DGT clock sets times only in mode 23), ``not confirmed`` (no answer within the daemon's wait,
or a driver that cannot report one) or ``failed`` (not sent); ``clock_error`` explains the last
three. The game record takes the arbiter's setting in every case.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import chess

from boardd.core import events as ev
from boardd.core.errors import BoarddError, EventError
from boardd.core.settings import EDITIONS
from boardd.daemon.config import COMMAND_ROLES, CommandsConfig

__all__ = ["COMMAND_NAMES", "CommandError", "ParsedCommand", "default_new_game", "parse_command"]

MAX_TEXT = 200
MAX_PAYLOAD = 16 * 1024
_ID_RE = re.compile(r"[\x20-\x7e]{1,100}")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


class CommandError(BoarddError, ValueError):
    """A command was refused (malformed, unknown, unauthorised, impossible).

    Attributes:
        command_id: the command's ``id`` when it could be read, else ``""``.
        name: the command name from the topic.
    """

    def __init__(self, message: str, *, command_id: str = "", name: str = "") -> None:
        super().__init__(message)
        self.command_id = command_id
        self.name = name


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedCommand:
    """A validated command: its id, name, sender role and the engine event."""

    id: str
    name: str
    role: str | None
    event: ev.ArbiterCommand


class _Fields:
    def __init__(self, payload: Mapping[str, Any], name: str, command_id: str, allowed: set[str]) -> None:
        self.payload = payload
        self.name = name
        self.command_id = command_id
        unknown = sorted(set(payload) - allowed - {"id", "token"})
        if unknown:
            raise self.error(f"unknown field(s) {', '.join(unknown)}; {name} takes: {', '.join(sorted(allowed))}")

    def error(self, message: str) -> CommandError:
        return CommandError(message, command_id=self.command_id, name=self.name)

    def text(self, key: str, *, required: bool = False, default: str | None = None) -> Any:
        if key not in self.payload:
            if required:
                raise self.error(f"field {key!r} is required")
            return default
        value = self.payload[key]
        if not isinstance(value, str):
            raise self.error(f"field {key!r} must be a string, got {type(value).__name__}")
        if len(value) > MAX_TEXT or _CONTROL_RE.search(value):
            raise self.error(f"field {key!r} must be at most {MAX_TEXT} printable characters")
        return value.strip()

    def integer(self, key: str, *, required: bool = False, lo: int = 0, hi: int = 10**6) -> Any:
        if key not in self.payload:
            if required:
                raise self.error(f"field {key!r} is required")
            return None
        value = self.payload[key]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.error(f"field {key!r} must be an integer in {lo}..{hi}, got {value!r}")
        return value

    def number(self, key: str, *, required: bool = False, lo: float = 0.0, hi: float = 100 * 3600.0) -> Any:
        if key not in self.payload:
            if required:
                raise self.error(f"field {key!r} is required")
            return None
        value = self.payload[key]
        if (isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value)
                or not lo <= value <= hi):
            raise self.error(f"field {key!r} must be a number in {lo:g}..{hi:g}, got {value!r}")
        return float(value)

    def boolean(self, key: str, default: bool | None = None) -> Any:
        if key not in self.payload:
            return default
        value = self.payload[key]
        if not isinstance(value, bool):
            raise self.error(f"field {key!r} must be true or false, got {value!r}")
        return value


def _new_game(f: _Fields, at: float, defaults: ev.GameInfo, _white_at_a1: bool) -> ev.ArbiterCommand:
    edition = f.integer("edition", lo=2000, hi=2100)
    if edition is not None and edition not in EDITIONS:
        raise f.error(f"field 'edition' must be one of {', '.join(map(str, EDITIONS))}, got {edition}")
    time_control = f.text("time_control")
    if time_control is not None:
        _check_time_control(f, time_control)
    start_fen = f.text("start_fen")
    chess960 = f.boolean("chess960")
    variant = f.text("variant")
    if variant is not None and variant not in ev.VARIANTS:
        raise f.error(f"field 'variant' must be one of {', '.join(ev.VARIANTS)}, got {variant!r}")
    # the variant as the game will have it: said by `chess960`, by `variant` or by the board's configuration; a
    # Chess960 start position is checked as one (its castling rights name the rooks of its array, X-FEN or
    # Shredder-FEN), not as a standard position
    is960 = (bool(chess960) if chess960 is not None else start_fen is not None and defaults.chess960) \
        or variant == "chess960"
    # `auto` (said, or the board's configuration when the command says neither): a Chess960 position is one
    auto = variant == "auto" if variant is not None else chess960 is None and defaults.variant == "auto"
    if auto and not is960 and start_fen is not None and chess960 is None:
        is960 = ev.is_chess960_position(start_fen)
    if start_fen is not None:
        try:
            board = chess.Board(start_fen, chess960=is960)
        except ValueError as exc:
            raise f.error(f"field 'start_fen' is not a valid FEN: {exc}") from None
        if not board.is_valid():
            raise f.error(f"field 'start_fen' is not a legal position: {board.status()!r}")
    rnd = f.payload.get("round")
    if rnd is not None and not isinstance(rnd, str):
        if isinstance(rnd, int) and not isinstance(rnd, bool) and rnd >= 0:
            rnd = str(rnd)
        else:
            raise f.error(f"field 'round' must be a string or a non-negative integer, got {rnd!r}")
    elif rnd is not None:
        rnd = f.text("round")
    game = replace(
        defaults,
        id="",
        white=f.text("white", default="?") or "?",
        black=f.text("black", default="?") or "?",
        event=f.text("event", default=defaults.event),
        site=f.text("site", default=defaults.site),
        date=f.text("date", default=defaults.date),
        round=rnd if rnd is not None else defaults.round,
        board_no=f.integer("board_no", lo=1, hi=10000) or defaults.board_no,
        time_control=time_control or defaults.time_control,
        edition=edition or defaults.edition,
        start_fen=start_fen,
        chess960=is960,
        variant=variant if variant is not None else ("" if chess960 is not None else defaults.variant),
    )
    return ev.NewGame(at=at, game=game)


def _check_time_control(f: _Fields, value: str) -> None:
    try:
        from boardd.core.clock import TimeControl  # noqa: PLC0415 - optional until the clock module lands
    except ImportError:
        if not re.fullmatch(r"[0-9][0-9/+:*.]*", value):
            raise f.error(f"field 'time_control' must be a PGN TimeControl, got {value!r}") from None
        return
    try:
        TimeControl.parse(value)
    except ValueError as exc:
        raise f.error(f"field 'time_control' must be a PGN TimeControl: {exc}") from None


def _set_players(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    return ev.SetPlayers(at=at, white=f.text("white", required=True), black=f.text("black", required=True))


def _irregularity_id(f: _Fields) -> str:
    value: str = f.text("irregularity", required=True)
    if not value:
        raise f.error("field 'irregularity' must not be empty")
    return value


def _ack(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    return ev.Acknowledge(at=at, irregularity_id=_irregularity_id(f))


def _resolve(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    return ev.Resolve(at=at, irregularity_id=_irregularity_id(f), ruling=f.text("ruling", default=""),
                      accept=f.boolean("accept", True), claim=f.boolean("claim", False),
                      alone=f.boolean("alone", False))


def _reopen(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    return ev.Reopen(at=at, irregularity_id=_irregularity_id(f))


def _reinstate(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    return ev.Reinstate(at=at, ply=f.integer("ply", required=True, lo=0, hi=2000))


def _set_clock(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    return ev.SetClock(at=at, white=f.number("white", required=True), black=f.number("black", required=True),
                       moves_white=f.integer("moves_white", hi=2000), moves_black=f.integer("moves_black", hi=2000))


def _set_result(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    result = f.text("result", required=True)
    if result not in {"1-0", "0-1", "1/2-1/2", "*"}:
        raise f.error(f"field 'result' must be 1-0, 0-1, 1/2-1/2 or *, got {result!r}")
    return ev.SetResult(at=at, result=result, termination=f.text("termination", default="normal") or "normal")


def _flip(f: _Fields, at: float, _d: ev.GameInfo, white_at_a1: bool) -> ev.ArbiterCommand:
    value = f.boolean("white_at_a1")
    return ev.SetOrientation(at=at, white_at_a1=(not white_at_a1) if value is None else value)


def _fill_gap(f: _Fields, at: float, _d: ev.GameInfo, _o: bool) -> ev.ArbiterCommand:
    ply = f.integer("ply", required=True, lo=1, hi=2000)
    moves = f.payload.get("moves")
    if not isinstance(moves, list) or not 1 <= len(moves) <= 60 or not all(
            isinstance(m, str) and 2 <= len(m) <= 8 and not _CONTROL_RE.search(m) for m in moves):
        raise f.error("field 'moves' must be a list of 1..60 moves (UCI or SAN strings)")
    return ev.FillGap(at=at, ply=ply, moves=tuple(m.strip() for m in moves))


_Parser = Callable[[_Fields, float, ev.GameInfo, bool], ev.ArbiterCommand]

#: name -> (allowed fields, parser)
_COMMANDS: dict[str, tuple[set[str], _Parser]] = {
    "new-game": ({"white", "black", "event", "site", "date", "round", "board_no", "time_control", "edition",
                  "start_fen", "chess960", "variant"}, _new_game),
    "set-players": ({"white", "black"}, _set_players),
    "ack": ({"irregularity"}, _ack),
    "resolve": ({"irregularity", "ruling", "accept", "claim", "alone"}, _resolve),
    "reopen": ({"irregularity"}, _reopen),
    "reinstate": ({"ply"}, _reinstate),
    "set-clock": ({"white", "black", "moves_white", "moves_black"}, _set_clock),
    "set-result": ({"result", "termination"}, _set_result),
    "flip": ({"white_at_a1"}, _flip),
    "fill-gap": ({"ply", "moves"}, _fill_gap),
}

#: Every command name boardd answers.
COMMAND_NAMES = tuple(_COMMANDS)


def default_new_game(at: float, defaults: ev.GameInfo) -> ev.NewGame:
    """The game a ``new-game`` command without fields starts: players ``?``, the rest from *defaults*.

    The daemon's ``auto_new_game`` starts the next game with it (no id yet: the daemon assigns one).
    """
    allowed, _ = _COMMANDS["new-game"]
    event = _new_game(_Fields({}, "new-game", "", allowed), at, defaults, True)
    assert isinstance(event, ev.NewGame)
    return event


def command_id_of(payload: bytes) -> str:
    """Best-effort command id of a raw payload (for the error answer), ``""`` if none."""
    try:
        obj = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return ""
    value = obj.get("id") if isinstance(obj, dict) else None
    return value if isinstance(value, str) and _ID_RE.fullmatch(value) else ""


def parse_command(name: str, payload: bytes, *, at: float, auth: CommandsConfig | None = None,
                  defaults: ev.GameInfo | None = None, white_at_a1: bool = True) -> ParsedCommand:
    """Validate the command *name* (last topic level) with JSON *payload*.

    Args:
        name: ``new-game``, ``set-players``, ... (the topic's last level).
        payload: the raw MQTT payload.
        at: event time to stamp on the resulting command.
        auth: tokens per role; without tokens every well-formed command is accepted.
        defaults: the board's configured game, for fields ``new-game`` leaves out.
        white_at_a1: the current orientation, so that ``flip`` without argument turns the board round.

    Raises:
        CommandError: anything wrong; ``command_id`` is set when the payload had a readable id.
    """
    if len(payload) > MAX_PAYLOAD:
        raise CommandError(f"payload larger than {MAX_PAYLOAD} bytes", name=name)
    try:
        obj = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CommandError(f"payload is not JSON: {exc}", name=name) from None
    if not isinstance(obj, dict):
        raise CommandError("payload must be a JSON object", name=name)
    command_id = obj.get("id")
    if not isinstance(command_id, str) or not _ID_RE.fullmatch(command_id):
        raise CommandError("field 'id' is required: a string of 1..100 printable ASCII characters", name=name)
    spec = _COMMANDS.get(name)
    if spec is None:
        raise CommandError(f"unknown command {name!r}; known: {', '.join(COMMAND_NAMES)}", command_id=command_id,
                           name=name)
    role: str | None = None
    if auth is not None and auth.tokens:
        role = auth.role_of(obj.get("token"))
        if role is None:
            raise CommandError("not authorised: missing or wrong token", command_id=command_id, name=name)
        if name not in COMMAND_ROLES.get(role, frozenset()):
            raise CommandError(f"not authorised: role {role!r} may not send {name!r}", command_id=command_id,
                               name=name)
    allowed, parser = spec
    fields = _Fields(obj, name, command_id, allowed)
    try:
        event = parser(fields, at, defaults or ev.GameInfo(), white_at_a1)
    except EventError as exc:
        raise CommandError(str(exc), command_id=command_id, name=name) from None
    return ParsedCommand(id=command_id, name=name, role=role, event=event)
