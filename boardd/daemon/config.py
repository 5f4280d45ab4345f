"""Daemon configuration: one TOML file, validated into frozen dataclasses.

Theory of operation
-------------------
:func:`load_config` reads a file with :mod:`tomllib` and walks it with a small
typed reader (:class:`_Table`) that knows, for every table, the keys it may
hold. Every problem becomes a :class:`boardd.core.errors.ConfigError` carrying the
file, the dotted key and what was expected; unknown keys are errors too, with a
"did you mean" hint, so that a typo (``keepalvie``) cannot silently fall back
to a default at a tournament.

Layout (see ``config/*.toml`` for complete examples)::

    [mqtt]                      # broker connection, shared by all boards
    host = "broker.local"
    port = 8883
    username = "board-t12"
    password_file = "/etc/boardd/mqtt.pass"
    keepalive = 15
    prefix = "boardd"
    [mqtt.tls]
    ca = "/etc/boardd/ca.crt"

    [journal]                   # defaults for every board
    directory = "/var/lib/boardd"
    retention_days = 2

    [commands.tokens]           # optional shared secret per role
    arbiter = "..."

    [[board]]                   # one section per board handled by this process
    id = "t12"
    [board.driver]
    kind = "dgt"
    port = "/dev/serial/by-id/usb-DGT_..."
    [board.rules]
    edition = 2023
    white_clock_side = "left"
    [board.game]
    event = "Club championship"
    time_control = "40/5400+30:1800+30"

``boardd check-config FILE`` validates any of the three kinds of configuration file: the
daemon's (``[[board]]``), the relay's (``[relay]``, boardd/consumers/relay.py) and the web
service's (``[web]``, boardd/consumers/web/app.py). The kind is told by those top-level tables
(or ``--kind``); relay and web files are checked key by key here (unknown keys and
wrong types named, as for the daemon) and then built with their service's own
loader. It prints ``OK``, the kind and a summary (boards, broker, topics), or the
error naming file, key and what was expected (exit 1).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import socket
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boardd.core.errors import ConfigError
from boardd.core.events import VARIANTS, ClockSide, GameInfo
from boardd.core.settings import EDITIONS, Category, Regime, RulesConfig, Timing

__all__ = [
    "BOARD_ID_RE",
    "COMMAND_ROLES",
    "CONFIG_KINDS",
    "BoardConfig",
    "CommandsConfig",
    "Config",
    "DriverConfig",
    "JournalConfig",
    "LoggingConfig",
    "MqttConfig",
    "TlsConfig",
    "check_consumer_config",
    "config_kind",
    "configure_parser",
    "environment_warnings",
    "load_config",
    "parse_config",
    "run",
]

#: Board ids are MQTT topic levels and file names: keep them to a safe alphabet.
BOARD_ID_RE = re.compile(r"[A-Za-z0-9_-]+")

#: Roles that may hold a command token, and the commands each role may send.
COMMAND_ROLES: Mapping[str, frozenset[str]] = {
    "arbiter": frozenset({"new-game", "set-players", "ack", "resolve", "reopen", "reinstate", "set-clock",
                          "set-result", "flip", "fill-gap"}),
    "operator": frozenset({"new-game", "set-players", "flip"}),
}

#: Driver kinds known to the daemon: ``drivers.base.DriverKind`` values, plus ``external`` for a
#: third-party (or test) driver given as ``factory = "package.module:callable"``; the callable is
#: called as ``factory(options, time_source=...)`` with the other keys of the table as a dict.
DRIVER_KINDS = ("dgt", "millennium", "chessnut", "certabo", "dgt3000-i2c", "sim", "external")
_FACTORY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*")

DEFAULT_STATE_DIR = Path("/var/lib/boardd")


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsConfig:
    """TLS towards the broker. ``ca`` None means the system trust store."""

    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    insecure: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MqttConfig:
    """Broker connection.

    Attributes:
        client_id: ``None`` lets the daemon derive a stable id per board
            (``boardd-<board>-<hostname>``, see :meth:`client_id_for`).
        password: the password itself, already read from ``password_file`` when given.
    """

    host: str = "localhost"
    port: int = 1883
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: TlsConfig | None = None
    client_id: str | None = None
    keepalive: int = 15
    prefix: str = "boardd"

    def client_id_for(self, board_id: str) -> str:
        """The MQTT client id for *board_id*: configured, or stable from board and hostname."""
        if self.client_id:
            return self.client_id if self.client_id.endswith(board_id) else f"{self.client_id}-{board_id}"
        host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname())[:40] or "host"
        return f"boardd-{board_id}-{host}"


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverConfig:
    """Which driver reads the board, and its options (passed to ``drivers.base.open_driver``)."""

    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def port(self) -> str | None:
        """The configured port, if the driver has one."""
        port = self.options.get("port")
        return str(port) if port is not None else None


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalConfig:
    """Where and how the SQLite journal of a board lives.

    Attributes:
        path: the journal file of this board (``<directory>/<board>.sqlite`` by default).
        archive_dir: where PGN files of pruned games go.
        retention_days: whole tournament days kept in the journal before archiving.
        synchronous: SQLite ``synchronous`` mode, ``"full"`` (default) or ``"normal"``.
    """

    path: Path
    archive_dir: Path
    retention_days: int = 2
    synchronous: str = "full"


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardConfig:
    """One board handled by the daemon.

    ``auto_new_game`` (``[board.game] auto_new_game``, default false): when a game has ended and the
    pieces are set up in the start position again, start the next game by itself (as a ``new-game``
    command without fields would, keeping the round and board number). Off, the daemon publishes a
    ``START_POSITION_SET_UP`` event and waits for the arbiter's ``new-game`` command.
    """

    id: str
    driver: DriverConfig
    rules: RulesConfig
    game: GameInfo
    journal: JournalConfig
    auto_new_game: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandsConfig:
    """Optional command authentication: one shared-secret token per role.

    When ``tokens`` is empty, every command reaching ``cmd/`` is accepted (the
    broker ACL is then the only gate).
    """

    tokens: Mapping[str, str] = field(default_factory=dict)

    def role_of(self, token: object) -> str | None:
        """The role a token belongs to, or None."""
        if not isinstance(token, str):
            return None
        for role, secret in self.tokens.items():
            if _consteq(token, secret):
                return role
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggingConfig:
    """Logging level and format (``plain`` or ``journal`` with ``<N>`` priority prefixes)."""

    level: str = "info"
    format: str = "plain"


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The whole configuration file."""

    path: Path
    mqtt: MqttConfig
    boards: tuple[BoardConfig, ...]
    commands: CommandsConfig = field(default_factory=CommandsConfig)
    logging: LoggingConfig = field(default_factory=LoggingConfig)

    def board(self, board_id: str) -> BoardConfig:
        """The board named *board_id*.

        Raises:
            ConfigError: no such board in the file.
        """
        for board in self.boards:
            if board.id == board_id:
                return board
        known = ", ".join(b.id for b in self.boards)
        raise ConfigError(f"no board {board_id!r} in this file (boards: {known})", path=str(self.path),
                          key="board.id")


def _consteq(a: str, b: str) -> bool:
    import hmac  # noqa: PLC0415 - tiny, only used here

    return hmac.compare_digest(a.encode(), b.encode())


# --- typed reader ------------------------------------------------------------


class _Table:
    """A TOML table being read: typed getters, and a check that nothing unknown was left."""

    def __init__(self, data: Mapping[str, Any], *, path: str, key: str, allowed: tuple[str, ...]) -> None:
        self.data = data
        self.file = path
        self.key = key
        self.allowed = allowed
        for name in data:
            if name not in allowed:
                hint = difflib.get_close_matches(name, allowed, n=1)
                suffix = f"; did you mean {hint[0]!r}?" if hint else f"; expected one of: {', '.join(allowed)}"
                raise self.error(name, f"unknown key {name!r}{suffix}")

    def dotted(self, name: str) -> str:
        return f"{self.key}.{name}" if self.key else name

    def error(self, name: str, message: str) -> ConfigError:
        return ConfigError(message, path=self.file, key=self.dotted(name))

    def _get(self, name: str, types: tuple[type, ...], expected: str, default: Any) -> Any:
        if name not in self.data:
            return default
        value = self.data[name]
        if isinstance(value, bool) and bool not in types:
            raise self.error(name, f"expected {expected}, got {value!r}")
        if not isinstance(value, types):
            raise self.error(name, f"expected {expected}, got {type(value).__name__} {value!r}")
        return value

    def get_str(self, name: str, default: str | None = None, *, required: bool = False) -> Any:
        if required and name not in self.data:
            raise self.error(name, "required key is missing (expected a string)")
        value = self._get(name, (str,), "a string", default)
        return value

    def get_int(self, name: str, default: int | None = None, *, lo: int | None = None, hi: int | None = None) -> Any:
        value = self._get(name, (int,), "an integer", default)
        if value is not None and ((lo is not None and value < lo) or (hi is not None and value > hi)):
            wanted = (f"in {lo}..{hi}" if lo is not None and hi is not None
                      else f">= {lo}" if lo is not None else f"<= {hi}")
            raise self.error(name, f"expected an integer {wanted}, got {value!r}")
        return value

    def get_float(self, name: str, default: float | None = None) -> Any:
        value = self._get(name, (int, float), "a number", default)
        return float(value) if value is not None else None

    def get_bool(self, name: str, default: bool | None = None) -> Any:
        return self._get(name, (bool,), "true or false", default)

    def get_choice(self, name: str, choices: tuple[str, ...], default: str | None = None) -> Any:
        value = self.get_str(name, default)
        if value is not None and value not in choices:
            raise self.error(name, f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def get_path(self, name: str, default: Path | None = None) -> Path | None:
        value = self.get_str(name)
        if value is None:
            return default
        if not value:
            raise self.error(name, "expected a file path, got an empty string")
        return Path(value).expanduser()

    def get_table(self, name: str, allowed: tuple[str, ...]) -> _Table:
        value = self._get(name, (dict,), "a table", {})
        return _Table(value, path=self.file, key=self.dotted(name), allowed=allowed)


# --- sections ------------------------------------------------------------------


def _read_secret(table: _Table, name: str, base: Path) -> str | None:
    path = table.get_path(name)
    if path is None:
        return None
    if not path.is_absolute():
        path = base / path
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise table.error(name, f"cannot read {path}: {exc.strerror or exc}") from None


def _tls(table: _Table, base: Path) -> TlsConfig:
    def resolve(name: str) -> Path | None:
        value = table.get_path(name)
        if value is not None and not value.is_absolute():
            value = base / value
        return value

    tls = TlsConfig(ca=resolve("ca"), cert=resolve("cert"), key=resolve("key"),
                    insecure=table.get_bool("insecure", False))
    if (tls.cert is None) != (tls.key is None):
        raise table.error("cert", "cert and key go together (client certificate authentication)")
    return tls


def _mqtt(root: _Table, base: Path) -> MqttConfig:
    t = root.get_table("mqtt", ("host", "port", "username", "password", "password_file", "tls", "client_id",
                            "keepalive", "prefix"))
    password = t.get_str("password")
    password_file = _read_secret(t, "password_file", base)
    if password is not None and password_file is not None:
        raise t.error("password_file", "give either password or password_file, not both")
    prefix = t.get_str("prefix", "boardd")
    if not prefix or any(c in prefix for c in "#+\0") or prefix.startswith("/") or prefix.endswith("/"):
        raise t.error("prefix", f"expected a topic prefix without wildcards or outer slashes, got {prefix!r}")
    client_id = t.get_str("client_id")
    if client_id is not None and not BOARD_ID_RE.fullmatch(client_id):
        raise t.error("client_id", f"expected [A-Za-z0-9_-]+, got {client_id!r}")
    host = t.get_str("host", "localhost")
    if not host:
        raise t.error("host", "expected a host name, got an empty string")
    tls = _tls(t.get_table("tls", ("ca", "cert", "key", "insecure")), base) if "tls" in t.data else None
    return MqttConfig(
        host=host,
        port=t.get_int("port", 8883 if tls else 1883, lo=1, hi=65535),
        username=t.get_str("username"),
        password=password if password is not None else password_file,
        tls=tls,
        client_id=client_id,
        keepalive=t.get_int("keepalive", 15, lo=5, hi=600),
        prefix=prefix,
    )


_TIMING_KEYS = ("t_flicker", "t_settle", "t_scan", "t_simul", "d_far", "t_latency", "t_knock", "t_adjust",
                "t_bounce")


def _rules(board: _Table) -> tuple[RulesConfig, int]:
    t = board.get_table("rules", ("edition", "category", "regime", "timing", "white_clock_side",
                              "blitz_adequate_penalty_2023", "result_gesture", "clock_expected"))
    edition = t.get_int("edition", 2023)
    if edition not in EDITIONS:
        raise t.error("edition", f"expected one of {', '.join(map(str, EDITIONS))}, got {edition!r}")
    category = t.get_choice("category", tuple(c.value for c in Category))
    regime = t.get_choice("regime", tuple(r.value for r in Regime), Regime.COMPETITION.value)
    side = t.get_choice("white_clock_side", tuple(s.value for s in ClockSide), ClockSide.LEFT.value)
    tt = t.get_table("timing", _TIMING_KEYS)
    timing_kwargs: dict[str, Any] = {}
    for name in _TIMING_KEYS:
        value = tt.get_int(name) if name == "d_far" else tt.get_float(name)
        if value is not None:
            timing_kwargs[name] = value
    penalty = t.get_int("blitz_adequate_penalty_2023", 1)
    result_gesture = t.get_bool("result_gesture", True)
    clock_expected = t.get_bool("clock_expected", True)
    try:
        rules = RulesConfig(
            category=Category(category) if category else None,
            regime=Regime(regime),
            timing=Timing(**timing_kwargs),
            white_clock_side=ClockSide(side),
            blitz_adequate_penalty_2023=penalty,
            result_gesture=result_gesture,
            clock_expected=clock_expected,
        )
    except ConfigError as exc:
        raise ConfigError(str(exc).split("] ", 1)[-1], path=board.file,
                          key=f"{t.key}.{exc.key}" if exc.key else t.key) from None
    return rules, edition


def _time_control(t: _Table, name: str, default: str) -> str:
    value: str = t.get_str(name, default)
    try:
        from boardd.core.clock import TimeControl  # noqa: PLC0415 - optional until the clock module lands
    except ImportError:
        if not re.fullmatch(r"[0-9/+:*.\-?a-z]+", value):
            raise t.error(name, f"expected a PGN TimeControl such as 40/5400+30:1800+30, got {value!r}") from None
        return value
    try:
        TimeControl.parse(value)
    except (ValueError, ConfigError) as exc:
        raise t.error(name, f"expected a PGN TimeControl such as 40/5400+30:1800+30: {exc}") from None
    return value


_GAME_KEYS = ("event", "site", "date", "round", "board_no", "time_control", "white", "black", "start_fen", "chess960",
              "variant", "auto_new_game")


def _game(board: _Table, edition: int) -> GameInfo:
    t = board.get_table("game", _GAME_KEYS)
    start_fen = t.get_str("start_fen")
    if start_fen is not None:
        import chess  # noqa: PLC0415

        try:
            chess.Board(start_fen, chess960=True)
        except ValueError as exc:
            raise t.error("start_fen", f"expected a FEN: {exc}") from None
    variant = t.get_str("variant", "") or ""
    if variant not in ("", *VARIANTS):
        raise t.error("variant", f"expected one of {', '.join(VARIANTS)}, got {variant!r}")
    rnd = t.data.get("round", "?")
    if isinstance(rnd, int) and not isinstance(rnd, bool):
        rnd = str(rnd)
    elif not isinstance(rnd, str):
        raise t.error("round", f"expected a string or an integer, got {rnd!r}")
    return GameInfo(
        event=t.get_str("event", "?"),
        site=t.get_str("site", "?"),
        date=t.get_str("date", "????.??.??"),
        round=rnd,
        board_no=t.get_int("board_no", None, lo=1, hi=10000),
        time_control=_time_control(t, "time_control", "40/5400+30:1800+30"),
        white=t.get_str("white", "?"),
        black=t.get_str("black", "?"),
        start_fen=start_fen,
        chess960=t.get_bool("chess960", False) or variant == "chess960",
        variant=variant,
        edition=edition,
    )


def _driver(board: _Table) -> DriverConfig:
    if "driver" not in board.data:
        raise board.error("driver", "required table is missing (expected [board.driver] with kind = ...)")
    raw = board.data["driver"]
    if not isinstance(raw, dict):
        raise board.error("driver", f"expected a table, got {raw!r}")
    kind = raw.get("kind")
    key = f"{board.key}.driver.kind"
    if not isinstance(kind, str):
        raise ConfigError(f"expected one of {', '.join(DRIVER_KINDS)}", path=board.file, key=key)
    if kind not in DRIVER_KINDS:
        hint = difflib.get_close_matches(kind, DRIVER_KINDS, n=1)
        raise ConfigError(f"unknown driver {kind!r}" + (f"; did you mean {hint[0]!r}?" if hint else
                          f"; expected one of {', '.join(DRIVER_KINDS)}"), path=board.file, key=key)
    options = {k: v for k, v in raw.items() if k != "kind"}
    for name, value in options.items():
        if isinstance(value, dict):
            raise ConfigError("driver options are plain values", path=board.file,
                              key=f"{board.key}.driver.{name}")
    if kind != "sim" and "port" in options and not isinstance(options["port"], str):
        raise ConfigError(f"expected a device path or URL string, got {options['port']!r}", path=board.file,
                          key=f"{board.key}.driver.port")
    if kind not in ("sim", "external") and "://" in options.get("port", ""):
        _check_port_url(options["port"], board)
    if kind == "external":
        factory = options.get("factory")
        if not isinstance(factory, str) or not _FACTORY_RE.fullmatch(factory):
            raise ConfigError(f"expected factory = \"package.module:callable\", got {factory!r}", path=board.file,
                              key=f"{board.key}.driver.factory")
        return DriverConfig(kind=kind, options=options)
    _check_driver_options(kind, options, board)
    return DriverConfig(kind=kind, options=options)


def _check_port_url(url: str, board: _Table) -> None:
    """A pyserial URL that can never work (``rfc2217://host`` without a port, an unknown option)."""
    try:
        from drivers.transport import check_port  # noqa: PLC0415 - drivers are optional here
    except ImportError:
        return
    from boardd.core.errors import DriverError  # noqa: PLC0415

    try:
        check_port(url)
    except DriverError as exc:
        raise ConfigError(str(exc), path=board.file, key=f"{board.key}.driver.port") from None


def _check_driver_options(kind: str, options: Mapping[str, Any], board: _Table) -> None:
    """Let the driver family validate its options, when its module is installed."""
    try:
        from drivers.base import options_from_mapping  # noqa: PLC0415 - drivers are optional here
    except ImportError:
        return
    from boardd.core.errors import DriverError  # noqa: PLC0415

    try:
        options_from_mapping(kind, options)
    except ConfigError as exc:
        message = str(exc).split("] ", 1)[-1]
        raise ConfigError(message, path=board.file, key=f"{board.key}.driver") from None
    except DriverError:
        return  # family module not available in this installation: checked when the daemon opens it


def _journal_defaults(root: _Table) -> tuple[Path, Path | None, int, str]:
    t = root.get_table("journal", ("directory", "archive_dir", "retention_days", "synchronous"))
    directory = t.get_path("directory", DEFAULT_STATE_DIR) or DEFAULT_STATE_DIR
    return (directory, t.get_path("archive_dir"), t.get_int("retention_days", 2, lo=0, hi=3650),
            t.get_choice("synchronous", ("full", "normal"), "full"))


def _board(raw: object, index: int, path: str, base: Path, journal_defaults: tuple[Path, Path | None, int, str]
           ) -> BoardConfig:
    if not isinstance(raw, dict):
        raise ConfigError("expected a [[board]] table", path=path, key=f"board[{index}]")
    t = _Table(raw, path=path, key=f"board[{index}]", allowed=("id", "driver", "rules", "game", "journal"))
    board_id = t.get_str("id", required=True)
    if not BOARD_ID_RE.fullmatch(board_id):
        raise t.error("id", f"expected a board id made of [A-Za-z0-9_-] (e.g. t12), got {board_id!r}")
    if board_id == "_round":
        raise t.error("id", "'_round' is reserved: {prefix}/_round/N carries the round roster (docs/tournament.md)")
    t.key = f"board.{board_id}"
    driver = _driver(t)
    rules, edition = _rules(t)
    game = _game(t, edition)
    auto_new_game = t.get_table("game", _GAME_KEYS).get_bool("auto_new_game", False)
    directory, archive_dir, retention, synchronous = journal_defaults
    if not directory.is_absolute():
        directory = (base / directory).resolve()
    journal_path = t.get_path("journal", directory / f"{board_id}.sqlite") or directory / f"{board_id}.sqlite"
    if not journal_path.is_absolute():
        journal_path = (base / journal_path).resolve()
    archive = archive_dir or directory / "archive"
    if not archive.is_absolute():
        archive = base / archive
    journal = JournalConfig(path=journal_path, archive_dir=archive, retention_days=retention,
                            synchronous=synchronous)
    return BoardConfig(id=board_id, driver=driver, rules=rules, game=game, journal=journal,
                       auto_new_game=auto_new_game)


def parse_config(data: Mapping[str, Any], *, path: str | Path = "<config>") -> Config:
    """Validate already-parsed TOML *data*. Relative paths are relative to the file's directory.

    Raises:
        ConfigError: the first problem found, naming the file and the key.
    """
    spath = str(path)
    base = Path(path).resolve().parent if str(path) != "<config>" else Path.cwd()
    root = _Table(data, path=spath, key="", allowed=("mqtt", "board", "journal", "commands", "logging"))
    mqtt = _mqtt(root, base)
    journal_defaults = _journal_defaults(root)
    boards_raw = data.get("board")
    if boards_raw is None:
        raise ConfigError("no board configured (expected at least one [[board]] section)", path=spath, key="board")
    if not isinstance(boards_raw, list):
        raise ConfigError("expected [[board]] sections (an array of tables)", path=spath, key="board")
    boards = tuple(_board(raw, i, spath, base, journal_defaults) for i, raw in enumerate(boards_raw))
    seen: set[str] = set()
    for board in boards:
        if board.id in seen:
            raise ConfigError(f"board id {board.id!r} appears twice", path=spath, key=f"board.{board.id}.id")
        seen.add(board.id)
    journals = [b.journal.path for b in boards]
    if len(set(journals)) != len(journals):
        raise ConfigError("two boards share one journal file", path=spath, key="board.journal")
    cmd = root.get_table("commands", ("tokens",))
    tokens_table = cmd.get_table("tokens", tuple(COMMAND_ROLES) + tuple(f"{r}_file" for r in COMMAND_ROLES))
    tokens: dict[str, str] = {}
    for role in COMMAND_ROLES:
        value = tokens_table.get_str(role)
        from_file = _read_secret(tokens_table, f"{role}_file", base)
        if value is not None and from_file is not None:
            raise tokens_table.error(f"{role}_file", f"give either {role} or {role}_file, not both")
        secret = value if value is not None else from_file
        if secret is not None:
            if len(secret) < 8:
                raise tokens_table.error(role, "a token must have at least 8 characters")
            tokens[role] = secret
    log = root.get_table("logging", ("level", "format"))
    levels = ("trace", "debug", "info", "warning", "error")
    logging_config = LoggingConfig(level=log.get_choice("level", levels, "info"),
                                   format=log.get_choice("format", ("plain", "journal"), "plain"))
    return Config(path=Path(path), mqtt=mqtt, boards=boards, commands=CommandsConfig(tokens=tokens),
                  logging=logging_config)


def load_config(path: str | Path) -> Config:
    """Read and validate the TOML file at *path*.

    Raises:
        ConfigError: missing/unreadable file, bad TOML, or an invalid value (file and key named).
    """
    return parse_config(_load_toml(str(path)), path=path)


def summary(config: Config) -> str:
    """A human-readable summary of *config* (no secrets)."""
    m = config.mqtt
    auth = f"user {m.username}" if m.username else "anonymous"
    lines = [f"mqtt: {'mqtts' if m.tls else 'mqtt'}://{m.host}:{m.port} ({auth}, keepalive {m.keepalive}s, "
             f"prefix {m.prefix!r})"]
    if config.commands.tokens:
        lines.append(f"commands: tokens for {', '.join(sorted(config.commands.tokens))}")
    for b in config.boards:
        g = b.game
        lines.append(f"board {b.id}: driver {b.driver.kind}"
                     + (f" on {b.driver.port}" if b.driver.port else "")
                     + f"; rules E{g.edition} {b.rules.category.value if b.rules.category else 'auto'}"
                     f"/{b.rules.regime.value}, white on the {b.rules.white_clock_side.value}"
                     f"; time control {g.time_control}; journal {b.journal.path}"
                     f"; topics {m.prefix}/{b.id}/#")
    return "\n".join(lines)


def environment_warnings(config: Config) -> list[str]:
    """Things that are valid but will not work on *this* machine as it is now (files, devices)."""
    found: list[str] = []
    tls = config.mqtt.tls
    if tls is not None:
        for name in ("ca", "cert", "key"):
            path = getattr(tls, name)
            if path is not None and not path.exists():
                found.append(f"mqtt.tls.{name}: {path} does not exist (needed to connect)")
        if tls.insecure:
            found.append("mqtt.tls.insecure = true: the broker's certificate is not verified")
    for board in config.boards:
        port = board.driver.port
        if port and port.startswith("/dev/") and not Path(port).exists():
            found.append(f"board.{board.id}.driver.port: {port} is not present (the daemon waits for it)")
        directory = board.journal.path.parent
        existing = next((p for p in (directory, *directory.parents) if p.exists()), None)
        if existing is not None and not os.access(existing, os.W_OK):
            found.append(f"board.{board.id}: cannot write the journal under {existing} as this user "
                         "(systemd's StateDirectory=boardd provides /var/lib/boardd)")
    return found


# --- the other kinds of configuration file: relay and web ------------------------------

#: Kinds of configuration file -> the top-level table that marks them.
CONFIG_KINDS: dict[str, str] = {"daemon": "board", "relay": "relay", "web": "web"}

#: ``[mqtt]`` of the consumers (boardd.consumers.relay.MqttSettings): no TLS, no password file.
_CONSUMER_MQTT_KEYS = ("host", "port", "username", "password", "prefix", "identifier", "keepalive")
_RELAY_KEYS = ("out_dir", "http_host", "http_port", "round", "debounce", "tags", "boards", "lichess")
_RELAY_BOARD_KEYS = ("board", "board_no", "round", "white", "black", "white_fide_id", "black_fide_id", "game_id",
                     "tags")
_LICHESS_KEYS = ("base", "round_id", "token", "token_file", "round", "rounds", "min_interval")
_WEB_KEYS = ("host", "port", "title", "cookie_secure", "idle_timeout", "sound", "command_token",
             "command_token_file", "users", "link_grace", "link_unstable_drops", "link_window", "link_settle", "ring")
#: ``[web] ring``: what gives the tablet's attention signal (boardd.consumers.web.app.RINGS).
_WEB_RINGS = ("illegal-move", "warning", "link")


def config_kind(data: Mapping[str, Any], *, path: str = "<config>") -> str:
    """Which service *data* configures, from its top-level tables.

    Raises:
        ConfigError: none of ``[[board]]``, ``[relay]``, ``[web]``, or more than one.
    """
    kinds = [kind for kind, table in CONFIG_KINDS.items() if table in data]
    if len(kinds) == 1:
        return kinds[0]
    if not kinds:
        for name in data:
            hint = difflib.get_close_matches(name, list(CONFIG_KINDS.values()), n=1)
            if hint and name not in ("mqtt",):
                raise ConfigError(f"unknown table {name!r}; did you mean {hint[0]!r}?", path=path, key=name)
        raise ConfigError("cannot tell what this file configures: expected [[board]] sections (the daemon), "
                          "a [relay] table (boardd relay) or a [web] table (boardd web); or give --kind", path=path)
    raise ConfigError(f"mixes the tables of the {' and the '.join(kinds)} configurations "
                      "(one file per service); or give --kind", path=path)


def _free_table(table: _Table, name: str) -> _Table:
    """A table whose keys are names chosen by the user (tags, accounts, rounds)."""
    values: Mapping[str, Any] = table._get(name, (dict,), "a table", {})
    return _Table(values, path=table.file, key=table.dotted(name), allowed=tuple(values))


def _string_table(table: _Table, name: str) -> dict[str, str]:
    raw = _free_table(table, name)
    for key in raw.data:
        raw.get_str(key)
    return dict(raw.data)


def _check_consumer_mqtt(root: _Table) -> None:
    t = root.get_table("mqtt", _CONSUMER_MQTT_KEYS)
    for name in ("host", "username", "password", "prefix", "identifier"):
        t.get_str(name)
    t.get_int("port", lo=1, hi=65535)
    t.get_int("keepalive", lo=1, hi=65535)
    prefix = t.get_str("prefix")
    if prefix is not None and (not prefix or any(c in prefix for c in "+#")):
        raise t.error("prefix", f"expected a topic prefix without wildcards, got {prefix!r}")


def _check_relay_keys(root: _Table) -> None:
    r = root.get_table("relay", _RELAY_KEYS)
    r.get_path("out_dir")
    r.get_str("http_host")
    r.get_int("http_port", lo=0, hi=65535)
    r.get_int("round", lo=1, hi=10000)
    debounce = r.get_float("debounce")
    if debounce is not None and debounce < 0:
        raise r.error("debounce", f"expected seconds >= 0, got {debounce!r}")
    _string_table(r, "tags")
    boards = r.data.get("boards", [])
    if not isinstance(boards, list):
        raise r.error("boards", "expected [[relay.boards]] entries (an array of tables)")
    for index, entry in enumerate(boards):
        if not isinstance(entry, dict):
            raise r.error(f"boards[{index}]", "expected a [[relay.boards]] table")
        b = _Table(entry, path=r.file, key=f"relay.boards[{index}]", allowed=_RELAY_BOARD_KEYS)
        board = b.get_str("board", required=True)
        if not BOARD_ID_RE.fullmatch(board):
            raise b.error("board", f"expected a board id made of [A-Za-z0-9_-] (e.g. t12), got {board!r}")
        if "board_no" not in entry:
            raise b.error("board_no", "required key is missing (expected the board's number in the round)")
        b.get_int("board_no", lo=1, hi=10000)
        b.get_int("round", lo=1, hi=10000)
        for name in ("white", "black", "game_id"):
            b.get_str(name)
        for name in ("white_fide_id", "black_fide_id"):
            b._get(name, (str, int), "a FIDE id (string or integer)", None)
        _string_table(b, "tags")
    lichess = r.get_table("lichess", _LICHESS_KEYS)
    for name in ("base", "round_id", "token"):
        lichess.get_str(name)
    lichess.get_path("token_file")
    lichess.get_int("round", lo=1, hi=10000)
    interval = lichess.get_float("min_interval")
    if interval is not None and interval <= 0:
        raise lichess.error("min_interval", f"expected seconds > 0, got {interval!r}")
    for round_no in _string_table(lichess, "rounds"):
        if not round_no.isdigit():
            raise lichess.error(f"rounds.{round_no}", "expected round number = \"lichess round id\"")


def _check_web_keys(root: _Table) -> None:
    w = root.get_table("web", _WEB_KEYS)
    w.get_str("host")
    w.get_int("port", lo=0, hi=65535)
    w.get_str("title")
    w.get_bool("cookie_secure")
    w.get_bool("sound")
    idle = w.get_float("idle_timeout")
    if idle is not None and idle <= 0:
        raise w.error("idle_timeout", f"expected seconds > 0, got {idle!r}")
    w.get_str("command_token")
    w.get_path("command_token_file")
    # the tablet's link debounce (boardd.consumers.web.links.LinkPolicy)
    for key in ("link_grace", "link_settle"):
        seconds = w.get_float(key)
        if seconds is not None and seconds < 0:
            raise w.error(key, f"expected seconds >= 0, got {seconds!r}")
    window = w.get_float("link_window")
    if window is not None and window <= 0:
        raise w.error("link_window", f"expected seconds > 0, got {window!r}")
    w.get_int("link_unstable_drops", lo=2)
    # the tablet's attention signal: a list of what rings (empty: nothing); info findings never ring
    rings = w._get("ring", (list,), f"a list of {', '.join(map(repr, _WEB_RINGS))}", [])
    for index, item in enumerate(rings):
        if item not in _WEB_RINGS:
            hint = " (info findings are notes: they never ring)" if item == "info" else ""
            raise w.error(f"ring[{index}]", f"expected one of {', '.join(_WEB_RINGS)}, got {item!r}{hint}")
        if item in rings[:index]:
            raise w.error(f"ring[{index}]", f"{item!r} is named twice")
    users = _free_table(w, "users")
    for name, encoded in users.data.items():
        if not isinstance(encoded, str) or not encoded.startswith("scrypt$"):
            raise users.error(name, "expected a password hash \"scrypt$...\" (boardd web --hash-password makes one)")


def check_consumer_config(data: Mapping[str, Any], kind: str, *, path: str) -> list[str]:
    """Validate a relay or web configuration; the summary lines.

    Every key is checked here (unknown keys and wrong types are named), then the
    service's own builder makes its configuration from the same document.

    Raises:
        ConfigError: the first problem found, naming the file and the key.
    """
    root = _Table(data, path=path, key="", allowed=("mqtt", CONFIG_KINDS[kind]))
    _check_consumer_mqtt(root)
    from boardd.consumers.relay import mqtt_settings  # noqa: PLC0415 - optional extras

    mqtt = mqtt_settings(data.get("mqtt", {}), path)
    auth = f"user {mqtt.username}" if mqtt.username else "anonymous"
    lines = [f"mqtt: mqtt://{mqtt.host}:{mqtt.port} ({auth}, keepalive {mqtt.keepalive}s, prefix {mqtt.prefix!r})"]
    if kind == "relay":
        _check_relay_keys(root)
        from boardd.consumers.relay import RELAY_KINDS, relay_config  # noqa: PLC0415

        relay = relay_config(data, mqtt, path=path)
        lines.append("subscribes: " + ", ".join(f"{mqtt.prefix}/+/{k}" for k in RELAY_KINDS))
        outputs = [f"folder {relay.out_dir}"] if relay.out_dir else []
        outputs.append(f"PGN over HTTP on {relay.http_host}:{relay.http_port}" if relay.http_port is not None
                       else "no HTTP")
        if relay.lichess_round_id or relay.lichess_rounds:
            rounds = {**({relay.lichess_round or relay.default_round: relay.lichess_round_id}
                         if relay.lichess_round_id else {}), **relay.lichess_rounds}
            token = "token set" if relay.lichess_token else "NO TOKEN: nothing will be pushed"
            outputs.append(f"lichess push to {relay.lichess_base} rounds "
                           + ", ".join(f"{n}={rid}" for n, rid in sorted(rounds.items())) + f" ({token})")
        lines.append("relay: " + "; ".join(outputs) + f"; default round {relay.default_round}")
        for board, slot in sorted(relay.slots.items(), key=lambda item: (item[1].round, item[1].board_no)):
            lines.append(f"board {board}: round {slot.round} board {slot.board_no}")
        if not relay.slots:
            lines.append("boards: every board on the broker (numbered from state.game.board_no, else by id)")
    else:
        _check_web_keys(root)
        from boardd.consumers.web.app import web_config  # noqa: PLC0415
        from boardd.consumers.web.hub import BRIDGE_TOPIC, WEB_KINDS  # noqa: PLC0415

        web = web_config(data, mqtt, path=path)
        lines.append("subscribes: " + ", ".join([*(f"{mqtt.prefix}/+/{k}" for k in WEB_KINDS), BRIDGE_TOPIC]))
        lines.append(f"publishes: {mqtt.prefix}/<board>/cmd/<command> (arbiter tablet)")
        lines.append(f"web: http://{web.host}:{web.port}/ title {web.title!r}, "
                     f"{len(web.users)} arbiter account(s)" + (", command token set" if web.command_token else ""))
        links = web.links
        lines.append(f"tablet: link trouble after {links.grace:g} s down or {links.unstable} drops in "
                     f"{links.window:g} s, over after {links.settle:g} s up; rings once per incident for "
                     + (", ".join(web.ring) if web.ring else "nothing"))
    return lines


def _load_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError("file not found", path=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=path) from None


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd check-config``."""
    parser.add_argument("config", metavar="FILE", help="the TOML configuration file (daemon, relay or web)")
    parser.add_argument("--kind", choices=tuple(CONFIG_KINDS),
                        help="what the file configures (default: told by its [[board]], [relay] or [web] tables)")


def run(args: argparse.Namespace) -> int:
    """``boardd check-config FILE``: print OK, the kind and a summary, or the error; exit 0/1."""
    path = os.fspath(args.config)
    try:
        data = _load_toml(path)
        kind = args.kind or config_kind(data, path=path)
        if kind == "daemon":
            config = parse_config(data, path=path)
            lines = [summary(config)]
            warnings = environment_warnings(config)
        else:
            lines = check_consumer_config(data, kind, path=path)
            warnings = []
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"OK {path} ({kind} configuration)")
    print("\n".join(lines))
    for text in warnings:
        print(f"warning: {text}")
    return 0
