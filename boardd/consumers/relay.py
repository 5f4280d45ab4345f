"""``boardd relay``: the live-transmission relay of a hall.

Theory of operation
-------------------
The relay is a pure consumer of the MQTT contract (``docs/consumers.md``). One aiomqtt client
subscribes to ``{prefix}/+/state``, ``/move``, ``/pgn`` and ``/status`` of every board. A
:class:`Hall` (pure: topic + bytes in, :class:`BoardUpdate` out) dedupes on
``(board, session, seq)``, keeps the newest retained ``state`` of each board, the per-ply
clocks from ``move`` messages and from the daemon's retained ``pgn``, and builds each game's
broadcast PGN (``[Round "r.b"]``, ``[Board]``, ``{[%clk h:mm:ss]}``, ``{[%emt h:mm:ss]}``)
as python-chess's exporter writes it. Both are kept move by move (issue 12): the daemon's PGN
texts are read from the last line the new one shares with the previous one
(:class:`_PgnReader`), the broadcast PGN re-written from the first ply that changed
(:class:`_Broadcast`); :func:`build_game_pgn` rebuilds it from the start (the reference).

Three sinks consume the round PGNs:

* :class:`FolderWriter` writes the DGT LiveChess layout (``round-N/games.pgn`` and
  ``round-N/game-B.pgn``), debounced, atomically (temp file in the same directory, fsync,
  rename, fsync of the directory);
* :class:`PgnHttpServer` (aiohttp) serves the same files with a strong ``ETag``,
  ``If-None-Match`` → 304 and ``Cache-Control: no-cache``, so a lichess broadcast can poll it
  as its source URL;
* :class:`LichessPusher` posts the whole round PGN to
  ``{base}/api/broadcast/round/{id}/push`` (lila diffs it server-side, so a push is
  idempotent), at most every ``min_interval`` seconds, always sending the latest text, with
  exponential backoff on errors and ``Retry-After`` on 429.

As a service (``systemd/boardd-relay.service``, ``Type=notify``), :func:`run_service` sends
``READY=1`` once the HTTP port listens and ``STOPPING=1`` on SIGTERM, then cancels the service so
that the folder is flushed; ``boardd web`` runs the same way. :func:`mqtt_session` is
``async with client`` that also survives a stop signal in the middle of a connect.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import hashlib
import io
import json
import logging
import os
import random
import re
import signal
import sys
import tempfile
import time
import tomllib
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import aiomqtt
import chess
import chess.pgn
from aiohttp import web
from chess.pgn import TAG_REGEX

from boardd.core.errors import ConfigError
from boardd.core.record import clock_tag, comment_token, format_clock, shared_prefix, write_token
from boardd.daemon.sdnotify import Notifier

__all__ = [
    "BoardRecord",
    "BoardUpdate",
    "FolderWriter",
    "GameSlot",
    "Hall",
    "LichessPusher",
    "MqttSettings",
    "PgnHttpServer",
    "Relay",
    "RelayConfig",
    "atomic_write",
    "build_game_pgn",
    "config_from_args",
    "configure_parser",
    "consume_forever",
    "etag_for",
    "etag_matches",
    "load_config",
    "mqtt_session",
    "mqtt_settings",
    "relay_config",
    "run",
    "run_service",
]

_LOGGER = logging.getLogger(__name__)

#: Topic kinds the relay subscribes to.
RELAY_KINDS = ("state", "move", "pgn", "status")
#: ``{prefix}/_round/{N}``: the retained round rosters of ``boardd round import`` (docs/tournament.md).
ROSTER_LEVEL = "_round"
_BOARD_RE = re.compile(r"^[A-Za-z0-9_-]+$")
_ROUND_RE = re.compile(r"^\s*(\d+)(?:\.(\d+))?")
#: How many (session, seq) pairs per board are remembered for dedupe.
_SEEN_WINDOW = 4096
#: lichess: a broadcast round holds at most 64 games (chapters); a push takes up to 100 games
#: (BroadcastPgnPush). A larger round is split over several lichess round ids (docs/consumers.md).
LICHESS_MAX_GAMES = 64
_CLOCK_COMMANDS = re.compile(r"\[%(?:clk|emt)\s[^\]]*\]")


# --- Pure part: the hall model ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSlot:
    """Where a board's game goes in the broadcast: round number, board number and extra tags.

    ``tags`` (e.g. ``WhiteFideId``, ``WhiteElo``, ``GameId``) override what the board publishes.
    """

    round: int
    board_no: int
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardUpdate:
    """What one accepted message changed.

    Attributes:
        board: the board id.
        kind: the topic kind (``state``, ``move``, ...).
        payload: the decoded payload (a dict, or the text of ``pgn``).
        record_changed: the game record (moves, clocks, tags, result) may have changed.
    """

    board: str
    kind: str
    payload: Any
    record_changed: bool


@dataclass(slots=True)
class BoardRecord:
    """Everything the relay knows about one board (mutable, owned by :class:`Hall`)."""

    board: str
    session: int | None = None
    max_seq: int | None = None
    seen: set[tuple[int, int]] = field(default_factory=set)
    seen_order: deque[tuple[int, int]] = field(default_factory=deque)
    state: dict[str, Any] | None = None
    state_key: tuple[int, int] | None = None
    status: dict[str, Any] | None = None
    status_key: tuple[int, int] | None = None
    pgn_text: str | None = None
    pgn_headers: dict[str, str] = field(default_factory=dict)
    pgn_parsed: bool = True
    #: the daemon's own comments (without clock commands): (ply, uci) -> text; ply 0 = before the moves
    comments: dict[tuple[int, str], str] = field(default_factory=dict)
    #: bumped on every change of state, pgn or clocks; keys the cache of the built PGN
    version: int = 0
    built: tuple[tuple[int, GameSlot], str] | None = None
    #: (ply, uci) -> (clock after the move in seconds, emt in seconds); from pgn and move messages.
    clocks: dict[tuple[int, str], tuple[float | None, float | None]] = field(default_factory=dict)
    #: the first ply whose clock or comment may have changed since the broadcast PGN was last built
    dirty: int = 0
    #: the broadcast PGN, kept move by move (built by :meth:`Hall.game_pgn`)
    broadcast: _Broadcast | None = None
    #: the daemon's PGN texts, read move by move
    reader: _PgnReader | None = None
    #: the keys of :attr:`clocks` a move message has set since the last PGN was read
    overridden: set[tuple[int, str]] = field(default_factory=set)

    def parse_pgn(self) -> None:
        """Take tags and per-ply clocks from the daemon's retained PGN (once per new text)."""
        if self.pgn_parsed or self.pgn_text is None:
            return
        self.pgn_parsed = True
        if self.reader is None:
            self.reader = _PgnReader()
        parsed = self.reader.read(self.pgn_text)
        if parsed is None:
            _LOGGER.warning("%s: pgn payload has no game: ignored", self.board)
            return
        if parsed.error is not None:
            _LOGGER.warning("%s: pgn payload has errors: %s", self.board, parsed.error)
        self.pgn_headers = parsed.headers
        old_comments = self.comments
        self.comments = dict(parsed.comments)
        # The daemon's PGN is its official rendering of the record: its clocks win over the move messages'
        # (which carry the same times rounded to the millisecond). Those of the moves read before were taken
        # then: only those a move message has changed since are taken again.
        clocks = parsed.clocks
        keys = list(clocks) if parsed.fresh is None else [*parsed.fresh, *(k for k in self.overridden if k in clocks)]
        for key in keys:
            if self.clocks.get(key) != clocks[key]:
                self.clocks[key] = clocks[key]
                self.dirty = min(self.dirty, key[0])
        self.overridden.clear()
        if self.comments != old_comments:
            changed = {key for key in old_comments.keys() | self.comments.keys()
                       if old_comments.get(key) != self.comments.get(key)}
            self.dirty = min(self.dirty, *(ply for ply, _ in changed))

    def remember(self, key: tuple[int, int]) -> bool:
        """Record ``(session, seq)``; False when it was already seen (a duplicate)."""
        if key in self.seen:
            return False
        self.seen.add(key)
        self.seen_order.append(key)
        if len(self.seen_order) > _SEEN_WINDOW:
            self.seen.discard(self.seen_order.popleft())
        return True


class Hall:
    """The boards of a hall as the relay sees them. Pure: no I/O, no clock.

    Args:
        prefix: the MQTT topic prefix (``boardd``).
        slots: board id -> :class:`GameSlot` from the configuration; boards not listed take
            their round and board number from ``state.game``.
        default_round: the round used when neither the configuration nor the board says.
        tags: tags added to every game (``Event``, ``Site``, ...) unless the board sets them.
    """

    def __init__(self, *, prefix: str = "boardd", slots: Mapping[str, GameSlot] | None = None,
                 default_round: int = 1, tags: Mapping[str, str] | None = None) -> None:
        self.prefix = prefix.rstrip("/")
        self.slots = dict(slots or {})
        self.default_round = default_round
        self.tags = dict(tags or {})
        self.boards: dict[str, BoardRecord] = {}
        #: games that left their board (a new game started there): round -> board number -> PGN
        self.archive: dict[int, dict[int, str]] = {}
        #: the round rosters of ``boardd round import`` (docs/tournament.md): round -> board id -> game entry
        self.rosters: dict[int, dict[str, Mapping[str, Any]]] = {}
        #: counters for logs and tests
        self.duplicates = 0
        self.gaps = 0
        self.stale = 0
        self.rejected = 0

    # Decoding.

    def parse_topic(self, topic: str) -> tuple[str, str] | None:
        """``{prefix}/{board}/{kind}`` -> ``(board, kind)``, or None for foreign topics."""
        head = self.prefix + "/"
        if not topic.startswith(head):
            return None
        rest = topic[len(head):].split("/")
        if len(rest) != 2 or not _BOARD_RE.match(rest[0]):
            return None
        return rest[0], rest[1]

    def handle(self, topic: str, payload: bytes) -> BoardUpdate | None:
        """Take one MQTT message. Returns what changed, or None (duplicate, stale, foreign, bad).

        Bad payloads are logged and counted (``rejected``), never raised.
        """
        if topic.startswith(f"{self.prefix}/{ROSTER_LEVEL}/"):
            return self._handle_roster(topic, payload)
        parsed = self.parse_topic(topic)
        if parsed is None:
            return None
        board, kind = parsed
        record = self.boards.get(board)
        if record is None:
            record = self.boards[board] = BoardRecord(board=board)
        if kind == "pgn":
            return self._handle_pgn(record, payload)
        if not payload:
            return None  # a retained message being cleared
        try:
            obj = json.loads(payload)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.rejected += 1
            _LOGGER.warning("%s: %s payload is not JSON (%s): dropped", board, kind, exc)
            return None
        envelope = _envelope(obj)
        if envelope is None:
            self.rejected += 1
            _LOGGER.warning("%s: %s payload without a valid envelope: dropped", board, kind)
            return None
        session, seq = envelope
        if record.session is not None and session < record.session:
            self.stale += 1
            _LOGGER.debug("%s: message of old session %d (now %d): dropped", board, session, record.session)
            return None
        if record.session is None or session > record.session:
            if record.session is not None:
                _LOGGER.info("%s: daemon session %d -> %d", board, record.session, session)
            record.session = session
            record.max_seq = None
        key = (session, seq)
        if not record.remember(key):
            self.duplicates += 1
            return None
        if record.max_seq is not None and seq > record.max_seq + 1:
            # QoS 0 clock readings may be lost legitimately; the retained state is the truth.
            self.gaps += 1
            _LOGGER.debug("%s: seq gap %d -> %d", board, record.max_seq, seq)
        if record.max_seq is None or seq > record.max_seq:
            record.max_seq = seq
        if kind == "state":
            if record.state_key is not None and key < record.state_key:
                self.stale += 1
                return None
            if record.state is not None and _game_id(record.state) != _game_id(obj):
                self._archive(record)
            record.state, record.state_key = obj, key
            record.version += 1
            return BoardUpdate(board=board, kind=kind, payload=obj, record_changed=True)
        if kind == "status":
            if record.status_key is not None and key < record.status_key:
                self.stale += 1
                return None
            record.status, record.status_key = obj, key
            return BoardUpdate(board=board, kind=kind, payload=obj, record_changed=False)
        if kind == "move":
            changed = self._take_move_clock(record, obj)
            return BoardUpdate(board=board, kind=kind, payload=obj, record_changed=changed)
        return BoardUpdate(board=board, kind=kind, payload=obj, record_changed=False)

    def _handle_roster(self, topic: str, payload: bytes) -> BoardUpdate | None:
        """A round roster (``{prefix}/_round/{N}``, retained): FIDE ids and ratings of the round's games."""
        tail = topic.rsplit("/", 1)[-1]
        try:
            obj = json.loads(payload) if payload else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            obj = None
        if not tail.isdigit() or (payload and (not isinstance(obj, dict) or not isinstance(obj.get("games"), list))):
            self.rejected += 1
            _LOGGER.warning("%s: not a round roster: dropped", topic)
            return None
        round_no = int(tail)
        old = self.rosters.pop(round_no, {})
        entries: dict[str, Mapping[str, Any]] = {str(g["board"]): g for g in (obj or {}).get("games", [])
                   if isinstance(g, dict) and isinstance(g.get("board"), str)}
        if entries:
            self.rosters[round_no] = entries
        for board in set(old) | set(entries):
            if board in self.boards:
                self.boards[board].version += 1
        return BoardUpdate(board=ROSTER_LEVEL, kind="roster", payload=obj, record_changed=True)

    def roster_tags(self, board: str, slot: GameSlot) -> dict[str, str]:
        """``WhiteFideId``, ``WhiteElo``, ``WhiteTitle`` (and Black's) from the round roster, when the
        board's game is the roster's game (same round, same players)."""
        entry = self.rosters.get(slot.round, {}).get(board)
        record = self.boards.get(board)
        info = ((record.state or {}).get("game") or {}) if record is not None else {}
        if entry is None or not isinstance(info, dict):
            return {}
        tags: dict[str, str] = {}
        for side, prefix in (("white", "White"), ("black", "Black")):
            player = entry.get(side)
            if not isinstance(player, dict) or player.get("name") != info.get(side):
                return {}
            for key, suffix in (("fide_id", "FideId"), ("rating", "Elo"), ("title", "Title")):
                if player.get(key):
                    tags[prefix + suffix] = str(player[key])
        return tags

    def _archive(self, record: BoardRecord) -> None:
        """A new game on this board: keep the finished one in its round, start the record afresh."""
        slot = self.slot_of(record.board)
        pgn = self.game_pgn(record.board)
        state = record.state or {}
        if slot is not None and pgn is not None and (state.get("moves") or state.get("result", "*") != "*"):
            self.archive.setdefault(slot.round, {})[slot.board_no] = pgn
            _LOGGER.info("%s: game %s archived in round %d as board %d", record.board, _game_id(state), slot.round,
                         slot.board_no)
        record.clocks.clear()
        record.pgn_text, record.pgn_headers, record.pgn_parsed, record.built = None, {}, True, None
        record.comments = {}
        record.broadcast, record.reader, record.dirty = None, None, 0
        record.overridden.clear()

    def _handle_pgn(self, record: BoardRecord, payload: bytes) -> BoardUpdate | None:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            self.rejected += 1
            _LOGGER.warning("%s: pgn payload is not UTF-8: dropped", record.board)
            return None
        if not text.strip() or text == record.pgn_text:
            return None
        # Parsed lazily, when a game is rebuilt (debounced), not for every message.
        record.pgn_text = text
        record.pgn_parsed = False
        record.version += 1
        return BoardUpdate(board=record.board, kind="pgn", payload=text, record_changed=True)

    @staticmethod
    def _take_move_clock(record: BoardRecord, obj: Mapping[str, Any]) -> bool:
        ply, uci, side = obj.get("ply"), obj.get("uci"), obj.get("side")
        if not isinstance(ply, int) or not isinstance(uci, str):
            return False
        clock = obj.get("clock") if isinstance(obj.get("clock"), dict) else None
        remaining = _num(clock.get(side)) if clock is not None and side in ("white", "black") else None
        emt = _num(obj.get("emt"))
        if remaining is None and emt is None:
            return False
        old = record.clocks.get((ply, uci))
        new = (remaining if remaining is not None else (old[0] if old else None),
               emt if emt is not None else (old[1] if old else None))
        if new == old:
            return False
        record.clocks[(ply, uci)] = new
        record.overridden.add((ply, uci))
        record.dirty = min(record.dirty, ply)
        record.version += 1
        return True

    # Round mapping.

    def slot_of(self, board: str) -> GameSlot | None:
        """The round and board number of ``board``'s game, or None before anything is known."""
        if board in self.slots:
            return self.slots[board]
        record = self.boards.get(board)
        if record is None or record.state is None:
            return None
        game = record.state.get("game") or {}
        round_no, board_from_round = self.default_round, None
        match = _ROUND_RE.match(str(game.get("round") or ""))
        if match:
            round_no = int(match.group(1))
            board_from_round = int(match.group(2)) if match.group(2) else None
        board_no = game.get("board_no")
        if not isinstance(board_no, int) or board_no <= 0:
            board_no = board_from_round or self._fallback_board_no(board)
        return GameSlot(round=round_no, board_no=board_no)

    def _fallback_board_no(self, board: str) -> int:
        known = sorted(b for b, r in self.boards.items() if r.state is not None)
        return known.index(board) + 1 if board in known else len(known) + 1

    def rounds(self) -> dict[int, list[tuple[int, str]]]:
        """Round number -> sorted ``(board_no, board)`` of the boards playing a game of that round now."""
        result: dict[int, list[tuple[int, str]]] = {}
        for board, record in self.boards.items():
            if record.state is None:
                continue
            slot = self.slot_of(board)
            if slot is not None:
                result.setdefault(slot.round, []).append((slot.board_no, board))
        for games in result.values():
            games.sort()
        return result

    def round_numbers(self) -> list[int]:
        """Every round with a game, live or archived."""
        return sorted(set(self.rounds()) | set(self.archive))

    def round_games(self, round_no: int) -> list[tuple[int, str]]:
        """``(board_no, PGN)`` of every game of a round by board number: live games, then archived ones
        whose board number no live game of the round uses."""
        games: dict[int, str] = {}
        for board_no, board in self.rounds().get(round_no, []):
            pgn = self.game_pgn(board)
            if pgn is not None:
                games.setdefault(board_no, pgn)
        for board_no, pgn in self.archive.get(round_no, {}).items():
            games.setdefault(board_no, pgn)
        return sorted(games.items())

    def game_pgn(self, board: str) -> str | None:
        """The broadcast PGN of ``board``'s current game, or None without a state."""
        record = self.boards.get(board)
        slot = self.slot_of(board)
        if record is None or record.state is None or slot is None:
            return None
        roster = self.roster_tags(board, slot)
        if roster:
            slot = GameSlot(round=slot.round, board_no=slot.board_no, tags={**roster, **slot.tags})
        key = (record.version, slot)
        if record.built is None or record.built[0] != key:
            if record.broadcast is None:
                record.broadcast = _Broadcast()
            record.built = (key, record.broadcast.build(record, slot, self.tags))
        return record.built[1]

    def round_pgn(self, round_no: int) -> str:
        """All games of a round, by board number, separated by a blank line."""
        return "\n".join(pgn for _, pgn in self.round_games(round_no))


def _game_id(state: Mapping[str, Any]) -> object:
    game = state.get("game")
    return game.get("id") if isinstance(game, dict) else None


def _envelope(obj: object) -> tuple[int, int] | None:
    if not isinstance(obj, dict):
        return None
    session, seq = obj.get("session"), obj.get("seq")
    if not isinstance(session, int) or not isinstance(seq, int) or isinstance(session, bool):
        return None
    return session, seq


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def build_game_pgn(record: BoardRecord, slot: GameSlot, hall_tags: Mapping[str, str]) -> str:
    """The broadcast PGN of one board: tags, moves, ``%clk`` and ``%emt`` per move.

    The official record is ``state.moves`` (UCI); clocks come from the daemon's PGN and
    ``move`` messages, matched on ``(ply, uci)`` so a takeback never mixes clocks of
    retracted moves into the new line.
    """
    state = record.state or {}
    info = state.get("game") or {}
    moves = state.get("moves") or []
    record.parse_pgn()  # no-op unless a new PGN text arrived
    game = chess.pgn.Game()
    game.headers = _broadcast_headers(record, slot, hall_tags, state, info)
    start_fen = record.pgn_headers.get("FEN") or info.get("start_fen")
    chess960 = bool(info.get("chess960")) or "960" in record.pgn_headers.get("Variant", "")
    board = chess.Board(str(start_fen), chess960=chess960) if start_fen else chess.Board()
    plies = _plies(record.board, moves)
    restart = _after_last_illegal(board, plies, _out_of_turn(state))
    first = 1
    if restart is not None:
        # An illegal move that stood (rules-spec G6, R22): the game goes on from the physical position
        # after it, so the broadcast shows it move by move (SetUp/FEN, see docs/consumers.md).
        first, board, note = restart
        _setup_headers(game.headers, board.fen(), board.chess960)
        game.comment = note
        _LOGGER.info("%s: illegal move stood at ply %d: PGN continues from the position after it", record.board,
                     first - 1)
    elif start_fen:
        _setup_headers(game.headers, board.fen(), board.chess960)
        board = game.board()
    node: chess.pgn.GameNode = game
    if restart is None:
        game.comment = record.comments.get((0, ""), "")
    for ply, move in plies[first - 1:]:
        if not board.is_legal(move):
            # Only when the position after the illegal move cannot be set up (an impossible position):
            # stop before it. The daemon's PGN carries the rest of the record in a comment on the last
            # legal move (kept above); without it, say where the record continues.
            if "illegal" not in node.comment:
                note = f"the record continues with {move.uci()} (illegal) at ply {ply}; see the board's state"
                node.comment = f"{node.comment} {note}".strip()
            _LOGGER.info("%s: illegal move %s at ply %d stood: PGN stops before it", record.board, move, ply)
            break
        board.push(move)
        node = node.add_variation(move)
        clock, emt = record.clocks.get((ply, move.uci()), (None, None))
        # Same rendering as the daemon's own PGN (boardd.core.record): h:mm:ss, tenths under 10 s.
        parts = [f"[%clk {format_clock(clock)}]"] if clock is not None else []
        if emt is not None:
            parts.append(f"[%emt {format_clock(emt)}]")
        if text := record.comments.get((ply, move.uci())):
            parts.append(text)
        node.comment = " ".join(parts)
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
    return game.accept(exporter) + "\n"


def _plies(board_id: str, moves: Sequence[object]) -> list[tuple[int, chess.Move]]:
    """``(ply, move)`` of the record, cut before a move that is not UCI."""
    plies: list[tuple[int, chess.Move]] = []
    for ply, uci in enumerate(moves, start=1):
        try:
            plies.append((ply, chess.Move.from_uci(str(uci))))
        except ValueError:
            _LOGGER.warning("%s: bad UCI %r at ply %d: record cut there", board_id, uci, ply)
            break
    return plies


def _long_notation(board: chess.Board, move: chess.Move) -> str:
    """rules-spec §8's notation of an illegal move: ``Bf1-c5``, ``e2-e5``."""
    piece = board.piece_at(move.from_square)
    letter = piece.symbol().upper() if piece is not None and piece.piece_type != chess.PAWN else ""
    promotion = chess.piece_symbol(move.promotion).upper() if move.promotion else ""
    return f"{letter}{chess.square_name(move.from_square)}-{chess.square_name(move.to_square)}{promotion}"


def _out_of_turn(state: Mapping[str, object]) -> frozenset[int]:
    """The state's ``out_of_turn_plies`` (docs/mqtt-additions.md; absent: none)."""
    plies = state.get("out_of_turn_plies")
    if not isinstance(plies, list):
        return frozenset()
    return frozenset(p for p in plies if isinstance(p, int) and not isinstance(p, bool))


def _record_word(board: chess.Board, move: chess.Move, *, first: bool, out_of_turn: bool = False
                 ) -> tuple[str, bool] | None:
    """The record's word for *move* from *board* (its move number when due, then the SAN, or rules-spec §8's
    notation of an illegal move with "(illegal)", of a move on the opponent's turn with "(out of turn)") and
    whether the move is legal; None for a move from an empty square (no word stands for it)."""
    number = f"{board.fullmove_number}." if board.turn == chess.WHITE else (
        f"{board.fullmove_number}..." if first else "")
    legal = not out_of_turn and board.is_legal(move)
    if legal:
        text = board.san(move)
    elif board.piece_at(move.from_square) is None:
        return None
    else:
        text = f"{_long_notation(board, move)} ({'out of turn' if out_of_turn else 'illegal'})"
    return (f"{number} {text}".strip() if number else text), legal


def _push_entry(board: chess.Board, move: chess.Move, *, out_of_turn: bool) -> None:
    """Push a record entry; an entry made out of turn (R13) leaves the opponent to move, his turn skipped (the
    daemon's ``fen_after`` of it)."""
    if not out_of_turn:
        board.push(move)
        return
    board.turn = not board.turn  # (pushed as the move of the player who made it)
    board.ep_square = None
    board.push(move)
    if board.turn == chess.BLACK:
        board.fullmove_number += 1  # the move number goes on by one, whatever the side (the daemon's record)


def _restart_note(words: Sequence[str], *, out_of_turn: bool = False) -> str:
    """The comment of a broadcast game that restarts after an illegal move (or a move out of turn) that stood: the
    record up to it."""
    what = "A move out of turn" if out_of_turn else "An illegal move"
    return f"{what} stood; the game goes on from the position after it. The record up to it: {' '.join(words)}"


def _after_last_illegal(start: chess.Board, plies: Sequence[tuple[int, chess.Move]],
                        out_of_turn: frozenset[int] = frozenset()) -> tuple[int, chess.Board, str] | None:
    """Where the broadcast game restarts after the last illegal move that stood.

    Returns ``(first ply after it, the physical position after it, the comment with the moves up
    to it)``, or None when no illegal move stood or the position after it cannot be set up (a move
    from an empty square, or a position python-chess and lila refuse: then the PGN stops before it).
    """
    board = start.copy(stack=False)
    words: list[str] = []
    last: int | None = None
    after: chess.Board | None = None
    for ply, move in plies:
        found = _record_word(board, move, first=not words, out_of_turn=ply in out_of_turn)
        if found is None:
            return None
        word, legal = found
        if not legal:
            last = ply
        words.append(word)
        try:
            _push_entry(board, move, out_of_turn=ply in out_of_turn)
        except (AssertionError, ValueError):
            return None
        if last == ply:
            after = board.copy(stack=False)
    if last is None or after is None:
        return None
    after.clear_stack()
    if not after.is_valid():
        return None
    return last + 1, after, _restart_note(words[:last], out_of_turn=last in out_of_turn)


# --- The daemon's PGN, read move by move (issue 12) ------------------------------------------------

#: The clock and time of the moves of the daemon's PGN, keyed (ply, uci).
_Clocks = dict[tuple[int, str], tuple[float | None, float | None]]
#: A move number at the start of a movetext line (``12.`` or ``12...``), then a move (not a comment).
_LINE_NUMBER = re.compile(r"\d+\.(?:\.\.)? +[^ {]")
#: Outside comments, what would make python-chess's reader do more than read moves and the result.
_NOT_PLAIN = re.compile(r"[();$%!?\[\]{}]")
_COMMENT = re.compile(r"\{[^}\n]*\}")


@dataclass(slots=True)
class _Parsed:
    """What :meth:`BoardRecord.parse_pgn` takes from one PGN text: python-chess's reading of it."""

    headers: dict[str, str]
    #: (0, "") -> the game's comment, (ply, uci) -> a move's comment; without clock commands, when not empty
    comments: dict[tuple[int, str], str]
    #: (ply, uci) -> (clock, emt) of every move with a clock or a time
    clocks: _Clocks
    #: the keys of :attr:`clocks` read from this text, not kept from the previous one (all of them: None)
    fresh: list[tuple[int, str]] | None
    error: Exception | None = None


def _read_pgn(text: str) -> tuple[_Parsed, chess.pgn.Game] | None:
    """The whole text through ``chess.pgn.read_game`` (what :class:`_PgnReader` keeps move by move)."""
    game = chess.pgn.read_game(io.StringIO(text))
    if game is None:
        return None
    head = _CLOCK_COMMANDS.sub("", game.comment).strip()
    comments = {(0, ""): head} if head else {}
    clocks: _Clocks = {}
    for ply, node in enumerate(game.mainline(), start=1):
        uci = node.move.uci()
        if note := _CLOCK_COMMANDS.sub("", node.comment).strip():
            # e.g. boardd.core.record's note on the moves after an illegal move that stood
            comments[(ply, uci)] = note
        clock, emt = node.clock(), node.emt()
        if clock is not None or emt is not None:
            clocks[(ply, uci)] = (clock, emt)
    parsed = _Parsed(headers=dict(game.headers), comments=comments, clocks=clocks, fresh=None,
                     error=game.errors[0] if game.errors else None)
    return parsed, game


class _PgnReader:
    """``chess.pgn.read_game`` of a board's successive PGN texts, move by move.

    A text differs from the previous one by its clock tags and its last line or two. When it is plain (tags, a
    blank line, then move numbers, moves, one-line comments and the result last: what :mod:`boardd.core.record`
    writes) and shares its first movetext lines with the previous one, only the lines from the last shared one
    that starts with a move number are read, by python-chess, from the position reached there (a ``FEN``
    tag); the moves before it are kept. Anything else is read whole.
    """

    def __init__(self) -> None:
        self.parsed: _Parsed | None = None
        self.base: tuple[str | None, str | None] | None = None
        self.board: chess.Board | None = None
        self.lines: list[str] = []
        #: moves on each movetext line (python-chess's move tokens outside comments)
        self.line_moves: list[int] = []
        #: (ply, uci) of each move read
        self.keys: list[tuple[int, str]] = []

    def read(self, text: str) -> _Parsed | None:
        """python-chess's reading of *text* (None: no game in it)."""
        try:
            parsed = self._incremental(text)
        except (ValueError, AssertionError):
            parsed = None
        return parsed if parsed is not None else self._whole(text)

    def _whole(self, text: str) -> _Parsed | None:
        self.parsed = self.board = self.base = None
        result = _read_pgn(text)
        if result is None:
            return None
        parsed, game = result
        split = _split(text)
        if split is None or parsed.error is not None:
            return parsed
        headers, lines = split
        counts = [_plain_moves(line, last=index == len(lines) - 1) for index, line in enumerate(lines)]
        board = game.board()
        keys = []
        for ply, node in enumerate(game.mainline(), start=1):
            keys.append((ply, node.move.uci()))
            board.push(node.move)
        if None not in counts and sum(count or 0 for count in counts) == len(keys):
            self.parsed, self.base, self.board = parsed, (headers.get("FEN"), headers.get("Variant")), board
            self.lines, self.line_moves, self.keys = lines, [count or 0 for count in counts], keys
        return parsed

    def _incremental(self, text: str) -> _Parsed | None:
        old, board = self.parsed, self.board
        split = _split(text)
        if old is None or board is None or split is None:
            return None
        header_map, lines = split
        if (header_map.get("FEN"), header_map.get("Variant")) != self.base:
            return None
        common = shared_prefix(self.lines, lines)
        added_counts = [_plain_moves(line, last=index == len(lines) - 1)
                        for index, line in enumerate(lines[common:], start=common)]
        if None in added_counts or (common and common == len(self.lines) and self.lines
                                    and _has_result(self.lines[-1])):
            return None   # not plain, or a line that held the result is now followed by more lines
        counts = self.line_moves[:common] + [count or 0 for count in added_counts]
        cut = min(common, len(lines) - 1)   # read from the last shared line that starts with a move number
        while cut > 0 and not _LINE_NUMBER.match(lines[cut]):
            cut -= 1
        keep = sum(counts[:cut])
        if cut == 0 or keep == 0 or keep > len(self.keys):
            return None
        while len(board.move_stack) > keep:
            board.pop()
        tags = f'[FEN "{board.fen()}"]\n' + ('[Variant "Chess960"]\n' if board.chess960 else "")
        game = chess.pgn.read_game(io.StringIO(tags + "\n" + "\n".join(lines[cut:])))
        if game is None or game.errors or game.comment or game.board().chess960 != board.chess960:
            self.parsed = None
            return None
        added = list(game.mainline())
        if len(added) != sum(counts[cut:]):
            self.parsed = None
            return None
        headers = chess.pgn.Headers()
        for name, value in header_map.items():
            headers[name] = value
        if headers.get("Result", "*") == "*":
            headers["Result"] = game.headers["Result"]
        comments, clocks = old.comments, old.clocks
        for key in self.keys[keep:]:
            comments.pop(key, None)
            clocks.pop(key, None)
        del self.keys[keep:]
        fresh = []
        for ply, node in enumerate(added, start=keep + 1):
            key = (ply, node.move.uci())
            if note := _CLOCK_COMMANDS.sub("", node.comment).strip():
                comments[key] = note
            clock, emt = node.clock(), node.emt()
            if clock is not None or emt is not None:
                clocks[key] = (clock, emt)
                fresh.append(key)
            self.keys.append(key)
            board.push(node.move)
        parsed = self.parsed = _Parsed(headers=dict(headers), comments=comments, clocks=clocks, fresh=fresh)
        self.lines, self.line_moves = lines, counts
        return parsed


def _split(text: str) -> tuple[dict[str, str], list[str]] | None:
    """The tags and the movetext lines of a text that starts with tag lines then a blank line, or None."""
    head, blank, movetext = text.partition("\n\n")
    if not blank or not head.startswith("[") or not movetext or movetext.startswith(("[", "%", ";")):
        return None
    headers: dict[str, str] = {}
    for line in head.split("\n"):
        match = TAG_REGEX.match(line)
        if match is None or not line.startswith("["):
            return None
        headers[match.group(1)] = match.group(2)
    return headers, movetext.rstrip("\n").split("\n")


def _plain_moves(line: str, *, last: bool) -> int | None:
    """How many moves python-chess's reader finds on a plain movetext line; None when the line is not plain
    (a blank line, a comment over several lines, variations, NAGs, escapes, a result that is not last)."""
    bare = _COMMENT.sub(" ", line)
    if not line.strip() or _NOT_PLAIN.search(bare):
        return None
    moves = 0
    for match in chess.pgn.MOVETEXT_REGEX.finditer(bare):
        if match.group(1):
            moves += 1
        elif match.group(7) and not last:
            return None
    return moves


def _has_result(line: str) -> bool:
    return any(match.group(7) for match in chess.pgn.MOVETEXT_REGEX.finditer(_COMMENT.sub(" ", line)))


# --- The broadcast PGN, kept move by move (issue 12) ---------------------------------------------

#: :attr:`BoardRecord.dirty` when no clock or comment changed since the last build.
_CLEAN = 1 << 30


class _Walk:
    """:func:`_plies` and :func:`_after_last_illegal` of a record, kept move by move.

    The record (``state.moves``) of one message differs from the last one's by a move or two, or a
    retraction: :meth:`update` goes back to the last item the two share and walks on from there (one
    legality test and one SAN per new move). :attr:`version` changes whenever the walk does.
    """

    def __init__(self, board_id: str, start: chess.Board) -> None:
        self.board_id = board_id
        self.start = start
        self.ucis: list[str] = []
        self.moves: list[chess.Move] = []
        #: ``move.uci()`` of each move (the key of the clocks and comments)
        self.keys: list[str] = []
        self.bad = False   # a UCI that does not parse cut the record after self.moves
        self.version = 0
        #: the state's ``out_of_turn_plies``
        self.out_of_turn: frozenset[int] = frozenset()
        self._reset()

    def _reset(self) -> None:
        self.board = self.start.copy(stack=False)
        self.walked = 0
        self.words: list[str] = []
        self.illegal: list[int] = []
        self.afters: dict[int, chess.Board] = {}
        self.stopped = False   # _after_last_illegal gave up at move ``walked``
        self.broken = False    # ... because the push failed: the board is not to be trusted
        self._result: tuple[int, tuple[int, chess.Board, str, str] | None] | None = None
        self.version += 1

    def update(self, moves: Sequence[object], out_of_turn: frozenset[int] = frozenset()) -> None:
        """Bring the walk to the record *moves* (``state.moves``; *out_of_turn*: its ``out_of_turn_plies``)."""
        if out_of_turn != self.out_of_turn:
            self.out_of_turn = out_of_turn  # (rare: walked again from the start)
            self._reset()
        ucis = list(map(str, moves))
        keep = shared_prefix(self.ucis, ucis)
        if keep < len(self.moves):
            del self.moves[keep:], self.keys[keep:]
            self.bad = False
        elif self.bad and keep <= len(self.moves):
            self.bad = False
        if self.walked > keep or (self.stopped and self.walked >= keep):
            if self.broken or any(ply > keep for ply in self.out_of_turn):  # (a pop would not undo the turn)
                self._reset()
            else:
                while self.walked > keep:
                    self.board.pop()
                    self.walked -= 1
                del self.words[keep:]
                while self.illegal and self.illegal[-1] > keep:
                    self.afters.pop(self.illegal.pop(), None)
                self.stopped = False
                self.version += 1
        self.ucis = ucis
        if not self.bad:
            for index in range(len(self.moves), len(ucis)):
                try:
                    move = chess.Move.from_uci(ucis[index])
                except ValueError:
                    _LOGGER.warning("%s: bad UCI %r at ply %d: record cut there", self.board_id, ucis[index],
                                    index + 1)
                    self.bad = True
                    break
                self.moves.append(move)
                self.keys.append(move.uci())
        self._walk()

    def _walk(self) -> None:
        board, words = self.board, self.words
        while not self.stopped and self.walked < len(self.moves):
            self.version += 1
            move = self.moves[self.walked]
            ply = self.walked + 1
            found = _record_word(board, move, first=not words, out_of_turn=ply in self.out_of_turn)
            if found is None:
                self.stopped = True
                return
            word, legal = found
            if not legal:
                self.illegal.append(ply)
            words.append(word)
            try:
                _push_entry(board, move, out_of_turn=ply in self.out_of_turn)
            except (AssertionError, ValueError):
                self.stopped = self.broken = True
                return
            if self.illegal and self.illegal[-1] == ply:
                self.afters[ply] = board.copy(stack=False)
            self.walked += 1

    def restart(self) -> tuple[int, chess.Board, str, str] | None:
        """:func:`_after_last_illegal` of the record and the FEN of its board (the walk's: never to be changed)."""
        if self._result is not None and self._result[0] == self.version:
            return self._result[1]
        result: tuple[int, chess.Board, str, str] | None = None
        if not self.stopped and self.illegal:
            last = self.illegal[-1]
            after = self.afters[last]
            after.clear_stack()
            if after.is_valid():
                result = (last + 1, after, _restart_note(self.words[:last], out_of_turn=last in self.out_of_turn),
                          after.fen())
        self._result = (self.version, result)
        return result


class _Movetext:
    """The exporter's movetext from one base (the first ply, the board the moves are checked on, the board
    python-chess's exporter writes them from, the game's comment), kept move by move: the exporter's state
    before each move and after its SAN, so that a change at one ply re-writes from there on only."""

    def __init__(self, key: tuple[object, ...], loop: chess.Board, board: chess.Board, first: int,
                 head: str) -> None:
        self.key = key
        self.loop = loop
        self.board = board
        self.first = first
        self.head = head
        self.lines: list[str] = []
        self.current = ""
        self.force = True
        if head:
            self.current = write_token(self.lines, self.current, comment_token(head))
        #: per move written: its uci key and comment; the exporter's state before it and after its SAN
        self.keys: list[str] = []
        self.comments: list[str] = []
        self.before: list[tuple[int, str, bool]] = []
        self.after_san: list[tuple[int, str]] = []
        #: the move (index from ``first``) the loop board refused, once seen
        self.stop: int | None = None

    def truncate(self, length: int) -> None:
        if self.stop is not None and self.stop >= length:
            self.stop = None
        if length >= len(self.keys):
            return
        del self.keys[length:], self.comments[length:], self.after_san[length:]
        lines, self.current, self.force = self.before[length]
        del self.before[length:], self.lines[lines:]
        while len(self.board.move_stack) > length:
            self.board.pop()
            self.loop.pop()

    def extend(self, record: BoardRecord, walk: _Walk) -> None:
        """Write the moves of *walk* after :attr:`keys`, up to the end or the first the loop board refuses."""
        if self.stop is not None:
            return
        offset = self.first - 1
        lines, loop, board = self.lines, self.loop, self.board
        for index in range(len(self.keys), len(walk.moves) - offset):
            move, key = walk.moves[offset + index], walk.keys[offset + index]
            if not loop.is_legal(move):
                self.stop = index
                _LOGGER.info("%s: illegal move %s at ply %d stood: PGN stops before it", record.board, move,
                             offset + index + 1)
                return
            loop.push(move)
            ply = offset + index + 1
            clock, emt = record.clocks.get((ply, key), (None, None))
            parts = [f"[%clk {format_clock(clock)}]"] if clock is not None else []
            if emt is not None:
                parts.append(f"[%emt {format_clock(emt)}]")
            if text := record.comments.get((ply, key)):
                parts.append(text)
            comment = " ".join(parts)
            self.before.append((len(lines), self.current, self.force))
            current = self.current
            if board.turn == chess.WHITE:
                current = write_token(lines, current, f"{board.fullmove_number}. ")
            elif self.force:
                current = write_token(lines, current, f"{board.fullmove_number}... ")
            current = write_token(lines, current, board.san(move) + " ")
            board.push(move)
            self.after_san.append((len(lines), current))
            self.force = False
            if comment:
                current = write_token(lines, current, comment_token(comment))
                self.force = True
            self.current = current
            self.keys.append(key)
            self.comments.append(comment)

    def render(self, walk: _Walk, result: str) -> list[str]:
        """The movetext lines, the result token last (and the note on a move the loop board refused)."""
        extra: list[str] = []
        if self.stop is None:
            lines, current = len(self.lines), self.current
        else:
            move = walk.moves[self.first - 1 + self.stop]
            note = (f"the record continues with {move.uci()} (illegal) at ply {self.first + self.stop}; "
                    "see the board's state")
            if self.stop == 0:
                lines, current = 0, ""
                comment = self.head if "illegal" in self.head else f"{self.head} {note}".strip()
            else:
                lines, current = self.after_san[self.stop - 1]
                comment = self.comments[self.stop - 1]
                comment = comment if "illegal" in comment else f"{comment} {note}".strip()
            if comment:
                current = write_token(extra, current, comment_token(comment))
        current = write_token(extra, current, result + " ")
        out = self.lines[:lines]
        out.extend(extra)
        if current:
            out.append(current.rstrip())
        return out


def _setup_headers(headers: chess.pgn.Headers, fen: str, chess960: bool) -> None:
    """What ``chess.pgn.Game.setup`` does to the tags for a standard board with this FEN, except that a Chess960
    game states its start position even from the standard array (518), as the daemon's PGN does
    (:mod:`boardd.core.record`; lichess reads the castling as Chess960's only with a FEN)."""
    if fen == chess.STARTING_FEN and not chess960:
        headers.pop("FEN", None)
        headers.pop("SetUp", None)
    else:
        headers["FEN"] = fen
        headers["SetUp"] = "1"
    if chess960:
        headers["Variant"] = "Chess960"
    else:
        headers.pop("Variant", None)


class _Broadcast:
    """:func:`build_game_pgn` of one board, kept move by move (issue 12).

    The walk of the record (:class:`_Walk`) and the movetext (:class:`_Movetext`) are extended, or re-written
    from the first ply whose move, clock or comment changed (:attr:`BoardRecord.dirty`); the tags are set
    afresh (a few dict operations). Where python-chess's exporter would start from another position than the
    record's (tags that set ``FEN`` or ``Variant``), it is :func:`build_game_pgn`, rebuilt.
    """

    def __init__(self) -> None:
        self.walk: _Walk | None = None
        self.text: _Movetext | None = None
        self._start_key: tuple[object, bool] | None = None
        self._start: tuple[chess.Board, str] | None = None

    def _start_board(self, start_fen: object, chess960: bool) -> tuple[chess.Board, str]:
        """The start position (``ValueError`` when the FEN is refused, as :func:`build_game_pgn` raises) and its
        FEN as ``Game.setup`` writes it."""
        key = (start_fen, chess960)
        if self._start is None or self._start_key != key:
            board = chess.Board(str(start_fen), chess960=chess960) if start_fen else chess.Board()
            self._start_key, self._start = key, (board, board.fen())
        return self._start

    def build(self, record: BoardRecord, slot: GameSlot, hall_tags: Mapping[str, str]) -> str:
        state = record.state or {}
        info = state.get("game") or {}
        moves = state.get("moves") or []
        record.parse_pgn()  # no-op unless a new PGN text arrived
        headers = _broadcast_headers(record, slot, hall_tags, state, info)
        start_fen = record.pgn_headers.get("FEN") or info.get("start_fen")
        chess960 = bool(info.get("chess960")) or "960" in record.pgn_headers.get("Variant", "")
        start, start_setup_fen = self._start_board(start_fen, chess960)
        walk = self.walk
        if walk is None or walk.start is not start:
            walk = self.walk = _Walk(record.board, start)
            self.text = None
        walk.update(moves, _out_of_turn(state))
        restart = walk.restart()
        if restart is not None:
            first, loop_base, head, fen = restart
            _LOGGER.info("%s: illegal move stood at ply %d: PGN continues from the position after it", record.board,
                         first - 1)
            _setup_headers(headers, fen, loop_base.chess960)
        else:
            first, loop_base, head = 1, start, record.comments.get((0, ""), "")
            if start_fen:
                _setup_headers(headers, start_setup_fen, start.chess960)
            elif "FEN" in headers or "Variant" in headers:
                self.text = None
                record.dirty = _CLEAN
                return build_game_pgn(record, slot, hall_tags)
        key = (first, start_fen, chess960, headers.get("FEN"), headers.get("Variant"), head)
        text = self.text
        if text is None or text.key != key:
            board = headers.board()
            loop = loop_base.copy(stack=False) if restart is not None else (
                board.copy(stack=False) if start_fen else chess.Board())
            text = self.text = _Movetext(key, loop, board, first, head)
        offset = first - 1
        keep = shared_prefix(text.keys, walk.keys[offset:offset + len(text.keys)])
        text.truncate(min(keep, max(record.dirty - first, 0)))
        record.dirty = _CLEAN
        text.extend(record, walk)
        lines = text.render(walk, headers.get("Result", "*"))
        header_lines = [f'[{name} "{value}"]'.rstrip() for name, value in headers.items()]
        return "\n".join([*header_lines, "", *lines]).rstrip() + "\n"


def _broadcast_headers(record: BoardRecord, slot: GameSlot, hall_tags: Mapping[str, str], state: Mapping[str, Any],
                       info: Mapping[str, Any]) -> chess.pgn.Headers:
    """The tags of :func:`build_game_pgn` before ``Game.setup``."""
    headers = chess.pgn.Headers()
    for key in ("Event", "Site", "Date"):
        value = record.pgn_headers.get(key) or hall_tags.get(key)
        if value:
            headers[key] = value
    if info.get("event"):
        headers["Event"] = str(info["event"])
    headers["Round"] = f"{slot.round}.{slot.board_no}"
    headers["White"] = str(info.get("white") or record.pgn_headers.get("White") or "?")
    headers["Black"] = str(info.get("black") or record.pgn_headers.get("Black") or "?")
    result = str(state.get("result") or "*")
    headers["Result"] = result if result in ("1-0", "0-1", "1/2-1/2", "*") else "*"
    headers["Board"] = str(slot.board_no)
    if info.get("time_control"):
        headers["TimeControl"] = str(info["time_control"])
    if info.get("id"):
        headers["GameId"] = str(info["id"])
    clock = state.get("clock")
    if isinstance(clock, dict):
        # The state's current clock, as DGT LiveChess tags it: lila applies these to the last moves,
        # so viewers see a live clock for the player to move (lila#14843).
        for side, tag in (("white", "WhiteClock"), ("black", "BlackClock")):
            if (seconds := _num(clock.get(side))) is not None:
                headers[tag] = clock_tag(seconds)
    for key, value in hall_tags.items():
        headers.setdefault(key, value)
    for key, value in slot.tags.items():
        headers[key] = value
    return headers


def etag_for(body: bytes) -> str:
    """A strong ETag for ``body`` (quoted, content hash)."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header value matches ``etag`` (RFC 9110 13.1.2, weak compare)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    candidates = [c.strip() for c in if_none_match.split(",")]
    bare = etag.removeprefix("W/")
    return any(c.removeprefix("W/") == bare for c in candidates)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same directory, fsync, rename.

    Readers (an FTP uploader, lichess-org/broadcaster, a web server) see either the old or the
    new file, never a truncated one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# --- Configuration ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MqttSettings:
    """How to reach the broker."""

    host: str = "127.0.0.1"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    prefix: str = "boardd"
    identifier: str | None = None
    keepalive: int = 30


@dataclass(frozen=True, slots=True, kw_only=True)
class RelayConfig:
    """The ``[relay]`` section of the configuration (see docs/consumers.md)."""

    mqtt: MqttSettings = field(default_factory=MqttSettings)
    out_dir: Path | None = None
    http_host: str = "127.0.0.1"
    http_port: int | None = 8081
    debounce: float = 0.5
    default_round: int = 1
    tags: Mapping[str, str] = field(default_factory=dict)
    slots: Mapping[str, GameSlot] = field(default_factory=dict)
    lichess_base: str = "https://lichess.org"
    lichess_round_id: str | None = None
    lichess_token: str | None = None
    lichess_round: int | None = None
    #: more rounds of the same broadcast: round number -> lichess round id
    lichess_rounds: Mapping[int, str] = field(default_factory=dict)
    push_interval: float = 2.5


def mqtt_settings(section: Mapping[str, Any], path: str) -> MqttSettings:
    """The consumers' ``[mqtt]`` table as :class:`MqttSettings` (defaults for what it leaves out).

    Raises:
        ConfigError: a value of the wrong type.
    """
    try:
        return MqttSettings(
            host=str(section.get("host", "127.0.0.1")), port=int(section.get("port", 1883)),
            username=section.get("username"), password=section.get("password"),
            prefix=str(section.get("prefix", "boardd")), identifier=section.get("identifier"),
            keepalive=int(section.get("keepalive", 30)),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc), path=path, key="mqtt") from exc


def load_config(path: Path | None) -> tuple[dict[str, Any], MqttSettings]:
    """Read a TOML file; returns the whole document and its ``[mqtt]`` settings.

    Raises:
        ConfigError: the file cannot be read or is not valid TOML.
    """
    if path is None:
        return {}, MqttSettings()
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(str(exc), path=str(path)) from exc
    return doc, mqtt_settings(doc.get("mqtt", {}), str(path))


def relay_config(doc: Mapping[str, Any], mqtt: MqttSettings, *, path: str = "") -> RelayConfig:
    """Build :class:`RelayConfig` from the TOML document.

    Raises:
        ConfigError: a value has the wrong type or a board is listed twice.
    """
    section = doc.get("relay", {})
    if not isinstance(section, dict):
        raise ConfigError("must be a table", path=path, key="relay")
    slots: dict[str, GameSlot] = {}
    default_round = int(section.get("round", 1))
    for entry in section.get("boards", []):
        try:
            board = str(entry["board"])
            tags = {str(k): str(v) for k, v in (entry.get("tags") or {}).items()}
            for key, tag in (("white", "White"), ("black", "Black"), ("white_fide_id", "WhiteFideId"),
                             ("black_fide_id", "BlackFideId"), ("game_id", "GameId")):
                if key in entry:
                    tags[tag] = str(entry[key])
            slot = GameSlot(round=int(entry.get("round", default_round)), board_no=int(entry["board_no"]), tags=tags)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"bad board entry {entry!r}: {exc}", path=path, key="relay.boards") from exc
        if board in slots:
            raise ConfigError(f"board {board} listed twice", path=path, key="relay.boards")
        slots[board] = slot
    lichess = section.get("lichess", {})
    token = lichess.get("token")
    token_file = lichess.get("token_file")
    if token is None and token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read token_file: {exc}", path=path, key="relay.lichess") from exc
    token = token or os.environ.get("BOARDD_LICHESS_TOKEN")
    try:
        return RelayConfig(
            mqtt=mqtt,
            out_dir=Path(section["out_dir"]) if section.get("out_dir") else None,
            http_host=str(section.get("http_host", "127.0.0.1")),
            http_port=int(section["http_port"]) if section.get("http_port") is not None else 8081,
            debounce=float(section.get("debounce", 0.5)),
            default_round=default_round,
            tags={str(k): str(v) for k, v in (section.get("tags") or {}).items()},
            slots=slots,
            lichess_base=str(lichess.get("base", "https://lichess.org")).rstrip("/"),
            lichess_round_id=lichess.get("round_id"),
            lichess_token=token,
            lichess_round=int(lichess["round"]) if lichess.get("round") is not None else None,
            lichess_rounds={int(k): str(v) for k, v in (lichess.get("rounds") or {}).items()},
            push_interval=float(lichess.get("min_interval", 2.5)),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc), path=path, key="relay") from exc


# --- I/O: sinks --------------------------------------------------------------------------------


class FolderWriter:
    """Writes ``round-N/games.pgn`` and ``round-N/game-B.pgn`` (LiveChess layout), debounced.

    Only files whose content changed are rewritten. Call :meth:`mark` after a change and run
    :meth:`run` as a task; :meth:`flush` writes now.
    """

    def __init__(self, hall: Hall, out_dir: Path, *, debounce: float = 0.5) -> None:
        self.hall = hall
        self.out_dir = out_dir
        self.debounce = debounce
        self._dirty = asyncio.Event()
        self._written: dict[Path, bytes] = {}
        self.writes = 0

    def mark(self) -> None:
        """Something changed: write within ``debounce`` seconds."""
        self._dirty.set()

    def flush(self) -> None:
        """Write every changed file now."""
        for round_no in self.hall.round_numbers():
            directory = self.out_dir / f"round-{round_no}"
            games = self.hall.round_games(round_no)
            for board_no, pgn in games:
                self._write(directory / f"game-{board_no}.pgn", pgn.encode())
            self._write(directory / "games.pgn", "\n".join(pgn for _, pgn in games).encode())

    def _write(self, path: Path, data: bytes) -> None:
        if self._written.get(path) == data:
            return
        atomic_write(path, data)
        self._written[path] = data
        self.writes += 1

    async def run(self) -> None:
        """Debounce loop: wait for a change, wait ``debounce``, write. Errors are logged, retried."""
        while True:
            await self._dirty.wait()
            await asyncio.sleep(self.debounce)
            self._dirty.clear()
            try:
                await asyncio.to_thread(self.flush)
            except OSError:
                _LOGGER.exception("cannot write PGN files under %s; retrying", self.out_dir)
                self._dirty.set()
                await asyncio.sleep(max(1.0, self.debounce))


class PgnHttpServer:
    """Serves round and game PGNs with strong ETags (aiohttp).

    Routes: ``/round-{n}/games.pgn``, ``/round-{n}/game-{b}.pgn``, ``/rounds.json``, ``/healthz``.
    """

    def __init__(self, hall: Hall) -> None:
        self.hall = hall
        self.app = web.Application()
        self.app.add_routes([
            web.get(r"/round-{round:\d+}/games.pgn", self._round),
            web.get(r"/round-{round:\d+}/game-{board:\d+}.pgn", self._game),
            web.get("/rounds.json", self._index),
            web.get("/healthz", self._health),
        ])

    @staticmethod
    def _pgn_response(request: web.Request, text: str) -> web.Response:
        body = text.encode()
        etag = etag_for(body)
        headers = {"ETag": etag, "Cache-Control": "no-cache", "Access-Control-Allow-Origin": "*"}
        if etag_matches(request.headers.get("If-None-Match"), etag):
            return web.Response(status=304, headers=headers)
        return web.Response(body=body, headers=headers, content_type="application/x-chess-pgn", charset="utf-8")

    async def _round(self, request: web.Request) -> web.Response:
        round_no = int(request.match_info["round"])
        if round_no not in self.hall.round_numbers():
            raise web.HTTPNotFound(text=f"no games in round {round_no}\n")
        return self._pgn_response(request, self.hall.round_pgn(round_no))

    async def _game(self, request: web.Request) -> web.Response:
        round_no, board_no = int(request.match_info["round"]), int(request.match_info["board"])
        for number, pgn in self.hall.round_games(round_no):
            if number == board_no:
                return self._pgn_response(request, pgn)
        raise web.HTTPNotFound(text=f"no game on board {board_no} of round {round_no}\n")

    async def _index(self, request: web.Request) -> web.Response:
        rounds: dict[str, list[dict[str, object]]] = {}
        for round_no in self.hall.round_numbers():
            live = dict(self.hall.rounds().get(round_no, []))
            rounds[str(round_no)] = [{"board_no": n, "board": live.get(n)} for n, _ in self.hall.round_games(round_no)]
        return web.json_response({"rounds": rounds}, headers={"Cache-Control": "no-cache"})

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"boards": len(self.hall.boards), "duplicates": self.hall.duplicates,
                                  "gaps": self.hall.gaps, "rejected": self.hall.rejected})


class LichessPusher:
    """Pushes a round's whole PGN to a lichess broadcast round, debounced, with backoff.

    Args:
        source: returns the current round PGN.
        base: ``https://lichess.org`` (tests point it at a local server).
        round_id: the 8-character broadcast round id.
        token: OAuth2 token with ``study:write``.
        min_interval: at least this many seconds between two pushes.
        max_backoff: ceiling of the exponential backoff after errors.
    """

    def __init__(self, *, source: Callable[[], str], base: str, round_id: str, token: str,
                 min_interval: float = 2.5, max_backoff: float = 60.0, timeout: float = 15.0) -> None:
        self.source = source
        self.url = f"{base.rstrip('/')}/api/broadcast/round/{round_id}/push"
        self.token = token
        self.min_interval = min_interval
        self.max_backoff = max_backoff
        self.timeout = timeout
        self._dirty = asyncio.Event()
        self._last_sent: str | None = None
        self.pushes = 0
        self.failures = 0

    def mark(self) -> None:
        """The round changed: push soon (coalesced with other changes)."""
        self._dirty.set()

    def _delay_after(self, status: int | None, retry_after: str | None, failures: int) -> float:
        if status == 429 and retry_after:
            with contextlib.suppress(ValueError):
                return max(float(retry_after), self.min_interval)
        if status == 429:
            return 60.0
        backoff: float = min(self.max_backoff, self.min_interval * (2.0 ** min(failures, 16)))
        return backoff * random.uniform(0.9, 1.1)

    async def run(self) -> None:
        """Push loop: one request in flight, the latest PGN each time."""
        failures = 0
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "text/plain; charset=utf-8",
                   "User-Agent": "boardd-relay"}
        async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
            while True:
                await self._dirty.wait()
                self._dirty.clear()
                body = self.source()
                if not body.strip() or body == self._last_sent:
                    continue
                status: int | None = None
                retry_after: str | None = None
                try:
                    async with session.post(self.url, data=body.encode()) as response:
                        status = response.status
                        retry_after = response.headers.get("Retry-After")
                        text = await response.text()
                except (aiohttp.ClientError, TimeoutError) as exc:
                    _LOGGER.warning("lichess push failed: %s", exc)
                    text = ""
                if status == 200:
                    self._last_sent = body
                    self.pushes += 1
                    failures = 0
                    _log_push_errors(text)
                    await asyncio.sleep(self.min_interval)
                    continue
                failures += 1
                self.failures += 1
                delay = self._delay_after(status, retry_after, failures - 1)
                _LOGGER.warning("lichess push answered %s: %s; next try in %.1f s", status, text[:200], delay)
                self._dirty.set()  # the latest text still has to go out
                await asyncio.sleep(delay)


def _log_push_errors(text: str) -> None:
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        for game in json.loads(text).get("games", []):
            if game.get("error"):
                _LOGGER.warning("lichess rejected a game %s: %s", game.get("tags"), game["error"])


# --- I/O: the relay service ---------------------------------------------------------------------


class Relay:
    """The relay service: MQTT in, PGN folder / HTTP / lichess push out."""

    def __init__(self, config: RelayConfig) -> None:
        self.config = config
        self.hall = Hall(prefix=config.mqtt.prefix, slots=config.slots, default_round=config.default_round,
                         tags=config.tags)
        self.writer = FolderWriter(self.hall, config.out_dir, debounce=config.debounce) if config.out_dir else None
        self.http = PgnHttpServer(self.hall) if config.http_port is not None else None
        targets = dict(config.lichess_rounds)
        if config.lichess_round_id:
            targets[config.lichess_round or config.default_round] = config.lichess_round_id
        #: one pusher per broadcast round (lichess has one round id per round of the tournament): boards
        #: 1-64 of the round; ``more_pushers[(round, k)]`` pushes boards 64k+1..64(k+1) when the round's
        #: entry lists several lichess round ids ("id1,id2": lichess holds 64 games per round)
        self.pushers: dict[int, LichessPusher] = {}
        self.more_pushers: dict[tuple[int, int], LichessPusher] = {}
        self.parts: dict[int, int] = {}
        if targets and not config.lichess_token:
            _LOGGER.warning("lichess round ids set but no token: not pushing")
        elif config.lichess_token:
            for round_no, round_ids in targets.items():
                ids = [i.strip() for i in str(round_ids).split(",") if i.strip()]
                self.parts[round_no] = len(ids)
                for part, round_id in enumerate(ids):
                    pusher = LichessPusher(
                        source=functools.partial(self._push_text, round_no, part), base=config.lichess_base,
                        round_id=round_id, token=config.lichess_token, min_interval=config.push_interval)
                    if part == 0:
                        self.pushers[round_no] = pusher
                    else:
                        self.more_pushers[(round_no, part)] = pusher
        self._truncation_logged: set[int] = set()
        self.connected = asyncio.Event()
        self.messages = 0
        self.http_port: int | None = None

    def _push_text(self, round_no: int, part: int = 0) -> str:
        """Part *part* of the round PGN for lichess: games 64·part+1 .. 64·(part+1) by board order.

        lichess holds at most LICHESS_MAX_GAMES games per broadcast round: the games beyond the
        configured round ids are not pushed, and that is logged once per round as an error.
        """
        games = self.hall.round_games(round_no)
        parts = max(1, self.parts.get(round_no, 1))
        if len(games) > LICHESS_MAX_GAMES * parts and round_no not in self._truncation_logged:
            self._truncation_logged.add(round_no)
            _LOGGER.error("round %d has %d games; lichess holds %d per round and %d lichess round id(s) are set: "
                          "boards %d and later are not pushed (list more ids: [relay.lichess] rounds = "
                          "{ %d = \"id1,id2\" })", round_no, len(games), LICHESS_MAX_GAMES, parts,
                          games[LICHESS_MAX_GAMES * parts][0], round_no)
        chunk = games[LICHESS_MAX_GAMES * part:LICHESS_MAX_GAMES * (part + 1)]
        return "\n".join(pgn for _, pgn in chunk)

    def take(self, topic: str, payload: bytes) -> BoardUpdate | None:
        """Feed one message to the hall and notify the sinks."""
        self.messages += 1
        update = self.hall.handle(topic, payload)
        if update is not None and update.record_changed:
            if self.writer is not None:
                self.writer.mark()
            for pusher in [*self.pushers.values(), *self.more_pushers.values()]:
                pusher.mark()  # cheap: a pusher whose round text did not change sends nothing
        return update

    async def _mqtt_loop(self) -> None:
        settings = self.config.mqtt
        client = aiomqtt.Client(settings.host, settings.port, username=settings.username,
                                password=settings.password, identifier=settings.identifier,
                                keepalive=settings.keepalive)
        topics = [f"{settings.prefix}/+/{kind}" for kind in RELAY_KINDS] + [f"{settings.prefix}/{ROSTER_LEVEL}/+"]
        await consume_forever(client, settings, topics, self.take,
                              connected=self.connected, logger=_LOGGER, name="relay")

    async def serve(self, *, ready: Callable[[Relay], None] | None = None) -> None:
        """Run until cancelled."""
        runner: web.AppRunner | None = None
        try:
            if self.http is not None:
                runner = web.AppRunner(self.http.app, access_log=None)
                await runner.setup()
                site = web.TCPSite(runner, self.config.http_host, self.config.http_port)
                await site.start()
                sockets = getattr(site._server, "sockets", None) or []
                self.http_port = sockets[0].getsockname()[1] if sockets else self.config.http_port
                _LOGGER.info("relay HTTP on %s:%s", self.config.http_host, self.http_port)
            async with asyncio.TaskGroup() as group:
                group.create_task(self._mqtt_loop(), name="relay-mqtt")
                if self.writer is not None:
                    group.create_task(self.writer.run(), name="relay-folder")
                for round_no, pusher in self.pushers.items():
                    group.create_task(pusher.run(), name=f"relay-lichess-{round_no}")
                for (round_no, part), pusher in self.more_pushers.items():
                    group.create_task(pusher.run(), name=f"relay-lichess-{round_no}-{part + 1}")
                if ready is not None:
                    ready(self)
        finally:
            if self.writer is not None:
                with contextlib.suppress(OSError):
                    self.writer.flush()
            if runner is not None:
                await runner.cleanup()


# --- Running as a service -----------------------------------------------------------------------

_S = TypeVar("_S")
#: Seconds a stopping service gives a half-made MQTT connection to finish and disconnect.
_STOP_GRACE = 2.0


@contextlib.asynccontextmanager
async def mqtt_session(client: aiomqtt.Client) -> AsyncIterator[aiomqtt.Client]:
    """``async with client``, except that a connect cancelled half-way (a stop signal) is undone too.

    aiomqtt does not survive a cancelled ``__aenter__``: it leaves an open socket, a pending task and a
    cancelled future that its callbacks trip over, and prints tracebacks at every service stop. So the
    connect is shielded; on cancellation it may finish (a short grace) and is then disconnected cleanly.
    """
    entering = asyncio.ensure_future(client.__aenter__())
    try:
        await asyncio.shield(entering)
    except asyncio.CancelledError:
        done, _ = await asyncio.wait({entering}, timeout=_STOP_GRACE)
        if entering in done and not entering.cancelled() and entering.exception() is None:
            await asyncio.wait({asyncio.ensure_future(client.__aexit__(None, None, None))}, timeout=_STOP_GRACE)
        raise
    try:
        yield client
    except BaseException as exc:
        await client.__aexit__(type(exc), exc, exc.__traceback__)
        raise
    await client.__aexit__(None, None, None)


async def consume_forever(client: aiomqtt.Client, settings: MqttSettings, topics: Sequence[str],
                          take: Callable[[str, bytes], object], *, connected: asyncio.Event, logger: logging.Logger,
                          name: str, on_client: Callable[[aiomqtt.Client | None], None] | None = None) -> None:
    """Keep *client* subscribed to *topics* (QoS 1) and feed every message to *take* as (topic, payload bytes).

    The consumers' MQTT loop (relay, web). *connected* is set while subscribed. A lost connection
    clears it and reconnects after 1 s, doubling up to 30 s, each wait jittered by ±20 %.
    *on_client* is told the live client once subscribed and ``None`` when the session ends.
    Logs go to *logger*, as "<name> subscribed on host:port prefix p". Runs until cancelled.
    """
    delay = 1.0
    while True:
        try:
            async with mqtt_session(client):
                for topic in topics:
                    await client.subscribe(topic, qos=1)
                if on_client is not None:
                    on_client(client)
                connected.set()
                delay = 1.0
                logger.info("%s subscribed on %s:%d prefix %s", name, settings.host, settings.port, settings.prefix)
                async for message in client.messages:
                    raw = message.payload
                    take(message.topic.value, raw if isinstance(raw, bytes) else str(raw).encode())
        except aiomqtt.MqttError as exc:
            connected.clear()
            logger.warning("MQTT connection lost (%s); reconnecting in %.1f s", exc, delay)
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, 30.0)
        finally:
            if on_client is not None:
                on_client(None)


async def run_service(serve: Callable[[Callable[[_S], None]], Coroutine[Any, Any, None]],
                      describe: Callable[[_S], str], *, notifier: Notifier | None = None) -> None:
    """Run a consumer service until SIGTERM/SIGINT, speaking sd_notify to systemd (``Type=notify``).

    ``READY=1`` (with ``STATUS=describe(service)``) goes out when *serve* calls its ready callback,
    that is once the HTTP port is bound; not after MQTT, whose link reconnects by itself.
    ``STOPPING=1`` goes out when the signal arrives, before the service is cancelled, so its
    ``finally`` blocks run (the relay flushes its PGN folder). Without ``$NOTIFY_SOCKET`` the
    notifications are no-ops. Used by ``boardd relay`` and ``boardd web``.

    Args:
        serve: starts the service: ``lambda ready: service.serve(ready=ready)``.
        describe: the one-line status for ``systemctl status``.
        notifier: default :meth:`Notifier.from_environment` (which removes the variables, so
            children do not notify on our behalf).

    Raises:
        Exception: whatever *serve* raises (systemd then sees a failed exit).
    """
    notifier = notifier if notifier is not None else Notifier.from_environment(unset_environment=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    for number in signals:
        loop.add_signal_handler(number, stop.set)

    def ready(service: _S) -> None:
        notifier.ready(describe(service))

    others = asyncio.all_tasks()  # not the service's: never cancelled here
    serving = asyncio.create_task(serve(ready), name="service")
    stopping = asyncio.create_task(stop.wait(), name="service-stop")
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set():
            _LOGGER.info("stop signal: shutting down")
        notifier.stopping()
        serving.cancel()
        # Python 3.11's asyncio.wait_for (which aiomqtt uses for every MQTT call) loses a cancellation that
        # arrives as its future completes (CPython gh-86296): a task can outlive the TaskGroup's one cancel
        # and keep the service from stopping. So the tasks still running after a grace are cancelled again.
        while not (await asyncio.wait({serving}, timeout=_STOP_GRACE))[0]:
            for task in asyncio.all_tasks() - others - {serving, stopping}:
                _LOGGER.debug("task %s still running after the stop: cancelled again", task.get_name())
                task.cancel()
        try:
            await serving
        except asyncio.CancelledError:
            if not stop.is_set():
                raise
    finally:
        stopping.cancel()
        for number in signals:
            loop.remove_signal_handler(number)
        notifier.close()
        # An MQTT client cancelled while it connects leaves a task behind and sits in a reference cycle
        # with its socket. Collected after asyncio.run() has closed the loop, its finaliser would print
        # "Event loop is closed" tracebacks into the journal at every stop: end both while the loop runs.
        for _ in range(5):
            leftovers = asyncio.all_tasks() - others - {asyncio.current_task()}
            if not leftovers:
                break
            for task in leftovers:
                task.cancel()
            await asyncio.wait(leftovers, timeout=_STOP_GRACE)
        gc.collect()


# --- CLI ----------------------------------------------------------------------------------------


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd relay``."""
    parser.add_argument("-c", "--config", type=Path, help="TOML file with [mqtt] and [relay] sections")
    parser.add_argument("--host", help="MQTT broker host (overrides [mqtt] host)")
    parser.add_argument("--port", type=int, help="MQTT broker port")
    parser.add_argument("--prefix", help="topic prefix (default boardd)")
    parser.add_argument("--out-dir", type=Path, help="write round-N/games.pgn and round-N/game-B.pgn here")
    parser.add_argument("--http-host", help="address of the PGN HTTP server (default 127.0.0.1)")
    parser.add_argument("--http-port", type=int, help="port of the PGN HTTP server (default 8081; 0 = any)")
    parser.add_argument("--no-http", action="store_true", help="do not serve PGN over HTTP")
    parser.add_argument("--round", type=int, help="round number when the boards do not say")
    parser.add_argument("--lichess-round", help="lichess broadcast round id to push to")
    parser.add_argument("--lichess-base", help="lichess base URL (default https://lichess.org)")


def config_from_args(args: argparse.Namespace) -> RelayConfig:
    """Merge the TOML file and the command line.

    Raises:
        ConfigError: invalid file or values.
    """
    doc, mqtt = load_config(args.config)
    config = relay_config(doc, mqtt, path=str(args.config or ""))
    mqtt = MqttSettings(host=args.host or mqtt.host, port=args.port or mqtt.port, username=mqtt.username,
                        password=mqtt.password, prefix=args.prefix or mqtt.prefix, identifier=mqtt.identifier,
                        keepalive=mqtt.keepalive)
    http_port = None if args.no_http else (args.http_port if args.http_port is not None else config.http_port)
    return RelayConfig(
        mqtt=mqtt, out_dir=args.out_dir or config.out_dir, http_host=args.http_host or config.http_host,
        http_port=http_port, debounce=config.debounce,
        default_round=args.round if args.round is not None else config.default_round,
        tags=config.tags, slots=config.slots, lichess_base=args.lichess_base or config.lichess_base,
        lichess_round_id=args.lichess_round or config.lichess_round_id, lichess_token=config.lichess_token,
        lichess_round=config.lichess_round, lichess_rounds=config.lichess_rounds, push_interval=config.push_interval,
    )


def run(args: argparse.Namespace) -> int:
    """``boardd relay``."""
    try:
        config = config_from_args(args)
    except ConfigError as exc:
        print(f"boardd relay: {exc}", file=sys.stderr)
        return 2
    relay = Relay(config)
    started = time.monotonic()

    def describe(service: Relay) -> str:
        http = f"PGN on {service.config.http_host}:{service.http_port}" if service.http_port else "no HTTP"
        folder = f", folder {service.config.out_dir}" if service.config.out_dir else ""
        return f"relay: {http}{folder}, {len(service.pushers)} lichess round(s)"

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run_service(lambda ready: relay.serve(ready=ready), describe))
    _LOGGER.info("relay stopped after %.0f s, %d messages", time.monotonic() - started, relay.messages)
    return 0

