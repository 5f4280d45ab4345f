"""The board's journal: an append-only SQLite file of events in and publications out.

Theory of operation
-------------------
One file per board (``/var/lib/boardd/<board>.sqlite``), in WAL mode. Tables:

``events``
    every board/clock event and every accepted arbiter command, in arrival
    order (``id`` is the journal sequence number), with the session and the
    wall-clock time it was written.
``outbox``
    every publication (topic, payload bytes, retain, QoS) with the
    ``(session, seq)`` of its envelope, the game it was written in (``game``: the
    game of the newest ``NewGame`` journaled before or with it; ``''`` before the
    first game) and an ``acked`` flag set only after the broker acknowledged it
    (PUBACK). QoS 0 traffic (clock ticks) is not stored (except the owed outputs a
    start publishes, :meth:`Journal.record_rows` ``volatile``).
``games``
    one row per game: the :class:`~boardd.core.events.GameInfo` (JSON), the first
    event of the game, start/end wall times, the PGN once it is over, and
    ``outputs``: how many of the engine's outputs of the game (after its
    ``GAME_START``) were committed (``NULL``: unknown, a journal of schema 1).

The rows of a game are found by the game's id and the row ids (commit order), never
by wall time: a wall clock stepped back (NTP on a Pi without a real-time clock)
changes nothing. A journal of schema 1 (outbox rows without ``game``) is migrated
when opened (:func:`_migrate_v1`).
``meta``
    the session counter (incremented at every start) and the last envelope seq.

An event and the publications it caused are written in **one transaction**
(:meth:`Journal.record`). A crash or power cut therefore loses at most the event
in flight together with its publications; it can never leave a published move
whose event is missing, nor an event whose publications were forgotten. (The
daemon commits the retained ``state``/``pgn`` snapshot of a move in a second
transaction right after the move's, so that the move is not delayed by it; a
crash in between loses only that snapshot, republished at every (re)connect.)
Acks are committed without an ``fsync`` (:meth:`Journal.ack`): a lost ack only
means a resend. On
start the daemon rebuilds the current game by replaying the journal's events of
that game through a fresh engine, and re-sends the unacknowledged outbox rows.

Durability: ``synchronous=FULL`` is the default. In WAL mode FULL costs one
``fsync`` of the WAL per commit; NORMAL only syncs at checkpoints and may lose
the last transactions (never consistency) on a power cut. The event rate of a
board is tiny (a clock reading per second, a few square changes per move), so
the cost of FULL is affordable and it makes every committed move survive a
power cut; ``[journal] synchronous = "normal"`` trades that for fewer SD-card
writes. ``python -m bench.bench_daemon journal`` measures it; on the shared development VM (2 cores,
load ~5, virtio disk; one event + two outbox rows per commit) FULL gave p50 0.17-3.3 ms,
p99 4-14 ms, max 20-40 ms per commit, NORMAL p50 0.06-0.08 ms, p99 0.9-12 ms. An SD card's
fsync is slower still, which is why the journal does not run on the event loop: the
longest loop stall while committing was 32-45 ms with direct calls against 13-16 ms through
the journal thread (FULL).

Threading: :class:`Journal` is synchronous and single-threaded. The daemon
wraps it in :class:`AsyncJournal`, which runs every call on one dedicated
worker thread, so an ``fsync`` stalled by a slow SD card never blocks the event
loop (and with it the MQTT keepalive and the board reader); calls stay strictly
ordered because there is exactly one worker.

Integrity: :meth:`Journal.open` runs ``PRAGMA quick_check``. A corrupt (or
non-SQLite) file is renamed to ``<name>.corrupt-<UTC time>``, a fresh journal is
started and the problem is logged at ERROR with both paths: the board keeps
recording, the damaged file stays for forensics.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from boardd.core import eventlog
from boardd.core import events as ev
from boardd.core.errors import BoarddError, EventError, EventLogError

__all__ = [
    "AsyncJournal",
    "GameRow",
    "Journal",
    "JournalError",
    "OutboxRow",
    "PublicationLike",
    "Tick",
    "envelope_seq",
    "event_from_record",
    "event_to_record",
]

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL,
    wall REAL NOT NULL,
    at REAL NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    wall REAL NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    retain INTEGER NOT NULL,
    qos INTEGER NOT NULL,
    acked INTEGER NOT NULL DEFAULT 0,
    game TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS outbox_unacked ON outbox (id) WHERE acked = 0;
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    first_event INTEGER NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    result TEXT,
    pgn TEXT,
    archived TEXT,
    outputs INTEGER
);
"""
#: After the migration (the column exists then).
_INDEXES = "CREATE INDEX IF NOT EXISTS outbox_game ON outbox (game, topic, id);"


@dataclass(frozen=True, slots=True, kw_only=True)
class Tick:
    """A journal-only row: the daemon called ``engine.advance(at)`` (a timer fired).

    Replaying the journal repeats these calls, so the rebuilt engine went through
    exactly the same ``feed``/``advance`` sequence as the live one.
    """

    at: float


class JournalError(BoarddError):
    """The journal file cannot be used (unwritable directory, unrecoverable corruption)."""


class PublicationLike(Protocol):
    """What the journal needs from a :class:`boardd.core.contract.Publication`."""

    @property
    def topic(self) -> str: ...
    @property
    def retain(self) -> bool: ...
    @property
    def qos(self) -> int: ...
    def payload_bytes(self) -> bytes: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxRow:
    """One stored publication."""

    id: int
    session: int
    seq: int
    topic: str
    payload: bytes
    retain: bool
    qos: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GameRow:
    """One game of the journal."""

    id: str
    info: ev.GameInfo
    first_event: int
    started: float
    ended: float | None
    result: str | None
    pgn: str | None
    #: How many engine outputs of the game (after its ``GAME_START``) were committed; None: unknown (schema 1).
    outputs: int | None = None


# --- event codec ---------------------------------------------------------------
# Rows use the event-log JSON of :mod:`boardd.core.eventlog`, so a journal can be exported
# as an event log and replayed with ``boardd replay``.


def event_to_record(event: ev.Event | Tick) -> tuple[str, str]:
    """Encode *event* as ``(type, event-log JSON text)`` for the ``events`` table."""
    if isinstance(event, Tick):
        return "tick", "{}"
    obj = eventlog.event_to_json(event)
    return str(obj["type"]), json.dumps(obj, separators=(",", ":"), sort_keys=True)


def event_from_record(type_name: str, at: float, data: str) -> ev.Event | Tick:
    """Inverse of :func:`event_to_record` (*at* is the row's time column and wins).

    Raises:
        EventError: the row cannot be decoded.
    """
    if type_name == "tick":
        return Tick(at=at)
    try:
        obj = json.loads(data)
        obj["t"] = at
        return eventlog.event_from_json(obj)
    except (ValueError, TypeError, EventLogError) as exc:
        raise EventError(f"bad {type_name} row in the journal: {exc}") from None


def game_info_to_json(info: ev.GameInfo) -> str:
    """GameInfo as JSON text."""
    return json.dumps(eventlog.game_to_json(info), sort_keys=True)


def game_info_from_json(text: str) -> ev.GameInfo:
    """Inverse of :func:`game_info_to_json`."""
    return eventlog.game_from_json(json.loads(text))


# --- the journal ------------------------------------------------------------------


def _utc_stamp(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).strftime("%Y%m%dT%H%M%SZ")


class Journal:
    """The synchronous journal of one board. Not thread-safe: use it from one thread.

    Attributes:
        path: the database file.
        recovered_from: when the file was corrupt at open, where the damaged file was moved.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self.recovered_from: Path | None = None
        self._session = int(self._meta("session", "0"))
        self._seq = int(self._meta("seq", "0"))
        current = self.current_game()
        #: The game the outbox rows written now belong to (the newest game; '' before the first).
        self._game = current.id if current is not None else ""
        #: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA (as the connection was opened).
        self._synchronous = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(
            int(conn.execute("PRAGMA synchronous").fetchone()[0]), "FULL")

    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, *, synchronous: str = "full", check: bool = True,
             clock: Callable[[], float] = time.time) -> Journal:
        """Open (or create) the journal at *path*, checking its integrity.

        A corrupt file is moved aside (``<name>.corrupt-<time>``) and a new journal
        started; :attr:`recovered_from` then names the moved file.

        Raises:
            JournalError: the directory cannot be created or the file cannot be opened.
        """
        path = Path(path)
        if synchronous not in {"full", "normal"}:
            raise JournalError(f"synchronous must be 'full' or 'normal', got {synchronous!r}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(f"cannot create the journal directory {path.parent}: {exc}") from exc
        recovered: Path | None = None
        try:
            conn = cls._connect(path, synchronous, check)
        except sqlite3.DatabaseError as exc:
            recovered = path.with_name(f"{path.name}.corrupt-{_utc_stamp(clock())}")
            _LOGGER.error("journal %s is corrupt (%s): moved to %s, starting a NEW journal; the current game "
                          "cannot be rebuilt from it", path, exc, recovered)
            for suffix in ("", "-wal", "-shm"):
                src = Path(f"{path}{suffix}")
                if src.exists():
                    src.rename(Path(f"{recovered}{suffix}"))
            try:
                conn = cls._connect(path, synchronous, check)
            except sqlite3.DatabaseError as exc2:
                raise JournalError(f"cannot create a fresh journal at {path}: {exc2}") from exc2
        journal = cls(conn, path)
        journal.recovered_from = recovered
        return journal

    @staticmethod
    def _connect(path: Path, synchronous: str, check: bool) -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
            conn.execute("PRAGMA busy_timeout=5000")
            if check:
                rows = [r[0] for r in conn.execute("PRAGMA quick_check")]
                if rows != ["ok"]:
                    raise sqlite3.DatabaseError("quick_check: " + "; ".join(map(str, rows[:5])))
            conn.executescript(_SCHEMA)
            version = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if version is not None and int(version[0]) > SCHEMA_VERSION:
                raise sqlite3.DatabaseError(f"journal schema {version[0]} is newer than this boardd")
            columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(outbox)")}
            if "game" not in columns:
                _migrate_v1(conn, path)
            conn.execute(_INDEXES)
            conn.execute("INSERT INTO meta VALUES ('schema', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                         (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        """Checkpoint and close the file."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.close()

    def prepare_wal(self) -> None:
        """Grow the WAL to its working size now, at start, instead of during the first game.

        :meth:`close` truncates the WAL and SQLite deletes it at the last close, so after every
        start the WAL grows again from nothing to ``wal_autocheckpoint`` pages (1000: about 4 MB,
        some 350 commits of a game, half the first game after a start), and each of those
        commits' fsyncs also writes the file's new size. Writing one row of that size and
        deleting it, then a passive checkpoint, leaves a WAL of the working size that SQLite
        reuses from its start; the pages go to the file's free list (about 4 MB, reused by later
        rows). Two commits and a checkpoint at start (30-47 ms on the development VM);
        ``python -m bench.bench_daemon journal`` measures the commits with and without it (there,
        the first 350 FULL commits: p50 0.35 ms against 0.23-0.24 ms, p90 0.40-0.45 against
        0.28-0.30 ms). A failure is logged and costs nothing else.
        """
        conn = self._conn
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                return
            pages = int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
            size = pages * int(conn.execute("PRAGMA page_size").fetchone()[0])
            with contextlib.suppress(OSError):
                if pages <= 0 or Path(f"{self.path}-wal").stat().st_size >= size:
                    return
            conn.execute("CREATE TABLE IF NOT EXISTS wal_pad (x BLOB)")
            conn.execute("INSERT INTO wal_pad VALUES (zeroblob(?))", (size,))
            conn.execute("DROP TABLE wal_pad")
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as exc:
            _LOGGER.warning("journal %s: could not grow the WAL at start (%s); it grows with the first game",
                            self.path, exc)

    def integrity_check(self) -> list[str]:
        """Full ``PRAGMA integrity_check``: ``["ok"]`` when healthy."""
        return [str(r[0]) for r in self._conn.execute("PRAGMA integrity_check")]

    # -- meta --------------------------------------------------------------------

    def _meta(self, key: str, default: str) -> str:
        row = self._conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else default

    def _set_meta(self, key: str, value: object) -> None:
        self._conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                           (key, str(value)))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    @property
    def session(self) -> int:
        """The current session (0 before the first :meth:`start_session`)."""
        return self._session

    @property
    def seq(self) -> int:
        """The last envelope seq persisted."""
        return self._seq

    def start_session(self) -> int:
        """Increment and return the session counter (once per daemon start)."""
        with self._transaction():
            self._session = int(self._meta("session", "0")) + 1
            self._set_meta("session", self._session)
        return self._session

    # -- writing -------------------------------------------------------------------

    def record(self, event: ev.Event | Tick | None, publications: Sequence[PublicationLike], *, seq: int,
               wall: float | None = None, closing: tuple[str, str, str] | None = None,
               outputs: tuple[str, int] | None = None, volatile: bool = False) -> int | None:
        """Append *event* (may be None) and its *publications* in one transaction; see :meth:`record_rows`.

        Returns:
            The event's journal id, or None when *event* is None.
        """
        return self.record_rows(event, publications, seq=seq, wall=wall, closing=closing, outputs=outputs,
                                volatile=volatile)[0]

    def record_rows(self, event: ev.Event | Tick | None, publications: Sequence[PublicationLike], *, seq: int,
                    wall: float | None = None, closing: tuple[str, str, str] | None = None,
                    outputs: tuple[str, int] | None = None, volatile: bool = False,
                    ) -> tuple[int | None, list[OutboxRow]]:
        """Append *event* (may be None) and its *publications* in one transaction.

        A :class:`~boardd.core.events.NewGame` (with a game id) also registers the game, starting at
        this event, in the same transaction, and closes the previous game given by *closing*.

        Args:
            event: the event that was fed to the engine, or None for publications alone
                (a command result, a republished state).
            publications: what the contract made of it; QoS 0 ones are not stored.
            seq: the publisher's seq after rendering *publications* (persisted in meta).
            wall: wall-clock time of the write (default now; only stored, never used to find rows).
            closing: ``(game id, result, PGN)`` of the game a NewGame replaces.
            outputs: ``(game id, count)``: the engine outputs of that game committed so far, this
                transaction's included (the game row's ``outputs``).
            volatile: store the QoS 0 publications too (the owed outputs published at a start).

        Returns:
            The event's journal id (None when *event* is None) and the outbox rows written, committed
            (with ``synchronous=FULL``: on disk) when this returns.
        """
        wall = time.time() if wall is None else wall
        event_id: int | None = None
        game = self._game
        with self._transaction():
            if event is not None:
                type_name, data = event_to_record(event)
                cur = self._conn.execute(
                    "INSERT INTO events (session, wall, at, type, data) VALUES (?, ?, ?, ?, ?)",
                    (self._session, wall, float(event.at), type_name, data))
                event_id = cur.lastrowid
                if isinstance(event, ev.NewGame) and event.game.id and event_id is not None:
                    if closing is not None and closing[0]:
                        self._conn.execute("UPDATE games SET ended=?, result=?, pgn=? WHERE id=? AND ended IS NULL",
                                           (wall, closing[1], closing[2], closing[0]))
                    self._conn.execute(
                        "INSERT INTO games (id, info, first_event, started, outputs) VALUES (?, ?, ?, ?, 0) "
                        "ON CONFLICT(id) DO NOTHING", (event.game.id, game_info_to_json(event.game), event_id, wall))
                    game = event.game.id
            rows = self._insert_outbox(publications, wall, game, volatile)
            if outputs is not None:
                self._conn.execute("UPDATE games SET outputs=? WHERE id=?", (outputs[1], outputs[0]))
            if seq != self._seq:
                self._set_meta("seq", seq)
        self._seq = seq
        self._game = game
        return event_id, rows

    def _insert_outbox(self, publications: Sequence[PublicationLike], wall: float, game: str,
                       volatile: bool) -> list[OutboxRow]:
        rows = []
        for pub in publications:
            if pub.qos == 0 and not volatile:
                continue
            payload = pub.payload_bytes()
            pseq = _seq_of(pub, payload)
            cur = self._conn.execute(
                "INSERT INTO outbox (session, seq, wall, topic, payload, retain, qos, game) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (self._session, pseq, wall, pub.topic, payload, int(pub.retain), pub.qos, game))
            assert cur.lastrowid is not None
            rows.append(OutboxRow(id=cur.lastrowid, session=self._session, seq=pseq, topic=pub.topic, payload=payload,
                                  retain=bool(pub.retain), qos=pub.qos))
        return rows

    def begin_game(self, info: ev.GameInfo, *, first_event: int, wall: float | None = None) -> None:
        """Register a new game starting at journal event *first_event* (id must be set)."""
        if not info.id:
            raise JournalError("a game needs an id")
        wall = time.time() if wall is None else wall
        with self._transaction():
            self._conn.execute(
                "INSERT INTO games (id, info, first_event, started, outputs) VALUES (?, ?, ?, ?, 0) "
                "ON CONFLICT(id) DO UPDATE SET info=excluded.info",
                (info.id, game_info_to_json(info), first_event, wall))
        current = self.current_game()
        self._game = current.id if current is not None else ""

    def end_game(self, game_id: str, *, result: str, pgn: str, wall: float | None = None) -> None:
        """Store the final result and PGN of *game_id* (may be called again to update)."""
        wall = time.time() if wall is None else wall
        with self._transaction():
            self._conn.execute("UPDATE games SET ended=?, result=?, pgn=? WHERE id=?",
                               (wall, result, pgn, game_id))

    def update_game_info(self, info: ev.GameInfo) -> None:
        """Replace the stored GameInfo of ``info.id`` (players changed)."""
        with self._transaction():
            self._conn.execute("UPDATE games SET info=? WHERE id=?", (game_info_to_json(info), info.id))

    # -- reading ---------------------------------------------------------------------

    def last_event_id(self) -> int:
        """Id of the newest event (0 when empty)."""
        row = self._conn.execute("SELECT MAX(id) FROM events").fetchone()
        return int(row[0] or 0)

    def last_event_at(self) -> float | None:
        """Event time of the newest event, or None."""
        row = self._conn.execute("SELECT at FROM events ORDER BY id DESC LIMIT 1").fetchone()
        return float(row[0]) if row else None

    def current_game(self) -> GameRow | None:
        """The newest game, or None."""
        row = self._conn.execute(
            "SELECT id, info, first_event, started, ended, result, pgn, outputs FROM games "
            "ORDER BY first_event DESC, started DESC LIMIT 1").fetchone()
        return _game_row(row) if row else None

    def games(self) -> list[GameRow]:
        """All games still in the journal, oldest first."""
        rows = self._conn.execute("SELECT id, info, first_event, started, ended, result, pgn, outputs FROM games "
                                  "ORDER BY first_event, started").fetchall()
        return [_game_row(r) for r in rows]

    def events(self, since: int = 0, *, on_error: Callable[[int, Exception], None] | None = None,
               ) -> Iterator[tuple[int, ev.Event | Tick]]:
        """Events with id >= *since*, in order, as ``(id, event)``.

        A row that cannot be decoded is passed to *on_error* (and skipped) or raises.

        Raises:
            EventError: a bad row and no *on_error*.
        """
        cur = self._conn.execute("SELECT id, type, at, data FROM events WHERE id >= ? ORDER BY id", (since,))
        for event_id, type_name, at, data in cur:
            try:
                yield int(event_id), event_from_record(type_name, float(at), data)
            except EventError as exc:
                if on_error is None:
                    raise
                on_error(int(event_id), exc)

    def unacked(self, *, limit: int = 100, after: int = 0) -> list[OutboxRow]:
        """Unacknowledged outbox rows with id > *after*, oldest first."""
        rows = self._conn.execute(
            "SELECT id, session, seq, topic, payload, retain, qos FROM outbox WHERE acked = 0 AND id > ? "
            "ORDER BY id LIMIT ?", (after, limit)).fetchall()
        return [OutboxRow(id=r[0], session=r[1], seq=r[2], topic=r[3], payload=bytes(r[4]), retain=bool(r[5]),
                          qos=r[6]) for r in rows]

    def outbox_payloads(self, topic: str, *, game: str) -> list[bytes]:
        """Payloads of the outbox rows on *topic* written in *game* (acked or not), oldest first."""
        rows = self._conn.execute("SELECT payload FROM outbox WHERE game = ? AND topic = ? ORDER BY id",
                                  (game, topic)).fetchall()
        return [bytes(r[0]) for r in rows]

    def unacked_count(self) -> int:
        """How many outbox rows wait for a PUBACK."""
        return int(self._conn.execute("SELECT COUNT(*) FROM outbox WHERE acked = 0").fetchone()[0])

    def ack(self, ids: Iterable[int]) -> None:
        """Mark outbox rows as acknowledged by the broker.

        Without an ``fsync`` even under ``synchronous=FULL``: the WAL frames reach the disk with the
        next commit's ``fsync`` (or the checkpoint). An ack lost in a power cut only makes the
        rows be sent again (delivery is at-least-once, consumers dedupe), while an fsync per PUBACK
        batch would double the disk flushes of a move and queue the next event's commit behind it.
        """
        id_list = [(i,) for i in ids]
        if not id_list:
            return
        relax = self._synchronous == "FULL"
        if relax:
            self._conn.execute("PRAGMA synchronous=NORMAL")
        try:
            with self._transaction():
                self._conn.executemany("UPDATE outbox SET acked = 1 WHERE id = ?", id_list)
        finally:
            if relax:
                self._conn.execute("PRAGMA synchronous=FULL")

    # -- retention -------------------------------------------------------------------

    def prune(self, *, archive_dir: Path, retention_days: int, now: float | None = None) -> list[Path]:
        """Archive and prune games that ended before the retention window.

        The window counts whole local calendar days (a tournament day): with
        ``retention_days=2`` everything of today and yesterday stays. Older
        finished games are written to ``archive_dir/<date>-<game id>.pgn`` and
        their events, acknowledged outbox rows and game row are deleted. The
        current (newest) game is never pruned.

        Returns:
            The PGN files written.
        """
        now = time.time() if now is None else now
        today = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
        cutoff = today.timestamp() - 86400 * max(retention_days - 1, 0)
        games = self.games()
        if len(games) < 2:
            return []
        written: list[Path] = []
        for game, nxt in itertools.pairwise(games):
            # An unfinished game (abandoned: a new one was started) counts as ended when the next one started.
            ended = game.ended if game.ended is not None else nxt.started
            if ended >= cutoff:
                continue
            if not game.pgn:
                _LOGGER.warning("journal: game %s has no PGN yet; its events are kept (not archived)", game.id)
                continue
            archive_dir.mkdir(parents=True, exist_ok=True)
            day = datetime.fromtimestamp(game.started).strftime("%Y-%m-%d")
            target = archive_dir / f"{day}-{game.id}.pgn"
            tmp = target.with_suffix(".pgn.tmp")
            tmp.write_text(game.pgn if game.pgn.endswith("\n") else game.pgn + "\n", encoding="utf-8")
            with open(tmp, "rb+") as fh:  # the archive must be on disk before the rows go
                os.fsync(fh.fileno())
            tmp.replace(target)
            written.append(target)
            with self._transaction():
                self._conn.execute("DELETE FROM events WHERE id >= ? AND id < ?", (game.first_event, nxt.first_event))
                # the game's rows and every row before the next game's first (by commit order, not wall time)
                self._conn.execute("DELETE FROM outbox WHERE acked = 1 AND (game = ? OR id < "
                                   "(SELECT MIN(id) FROM outbox WHERE game = ?))", (game.id, nxt.id))
                self._conn.execute("DELETE FROM games WHERE id = ?", (game.id,))
            _LOGGER.info("journal: archived game %s to %s and pruned its rows", game.id, target)
        return written


def _game_row(row: tuple[Any, ...]) -> GameRow:
    return GameRow(id=row[0], info=game_info_from_json(row[1]), first_event=int(row[2]), started=float(row[3]),
                   ended=None if row[4] is None else float(row[4]), result=row[5], pgn=row[6],
                   outputs=None if row[7] is None else int(row[7]))


def _migrate_v1(conn: sqlite3.Connection, path: Path) -> None:
    """Schema 1 -> 2: the outbox rows get their game, the games their (unknown) output count.

    A game's rows start with those its ``NewGame`` was committed with (same session and wall value: one
    transaction writes one wall for the event and its rows), and run until the next game's first row (row ids
    are commit order). Only a game whose ``NewGame`` transaction had no rows falls back to the first row at or
    after its start's wall time (what schema 1 used). ``outputs`` stays NULL: unknown.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("ALTER TABLE outbox ADD COLUMN game TEXT NOT NULL DEFAULT ''")
        if "outputs" not in {str(r[1]) for r in conn.execute("PRAGMA table_info(games)")}:
            conn.execute("ALTER TABLE games ADD COLUMN outputs INTEGER")
        starts: list[tuple[str, int]] = []
        floor = 0
        for game_id, first_event, started in conn.execute(
                "SELECT id, first_event, started FROM games ORDER BY first_event, started").fetchall():
            row = conn.execute("SELECT MIN(o.id) FROM outbox o JOIN events e ON e.id = ? "
                               "WHERE o.session = e.session AND o.wall = e.wall", (first_event,)).fetchone()
            if row[0] is None:
                row = conn.execute("SELECT MIN(id) FROM outbox WHERE wall >= ?", (started,)).fetchone()
            if row[0] is None:
                continue
            floor = max(floor, int(row[0]))
            starts.append((str(game_id), floor))
        for (game_id, first), nxt in zip(starts, [*starts[1:], None], strict=True):
            if nxt is None:
                conn.execute("UPDATE outbox SET game = ? WHERE id >= ?", (game_id, first))
            else:
                conn.execute("UPDATE outbox SET game = ? WHERE id >= ? AND id < ?", (game_id, first, nxt[1]))
        conn.execute("INSERT INTO meta VALUES ('schema', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                     (str(SCHEMA_VERSION),))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    _LOGGER.info("journal %s: migrated to schema %d (outbox rows keyed by game: %d game(s))", path,
                 SCHEMA_VERSION, len(starts))


def _seq_of(pub: PublicationLike, payload: bytes) -> int:
    """The envelope seq of *pub*: from its payload object when it has one, else parsed from *payload*."""
    body = getattr(pub, "payload", None)
    if isinstance(body, dict):
        value = body.get("seq", 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0
    return envelope_seq(payload)


def envelope_seq(payload: bytes) -> int:
    """The envelope ``seq`` of a JSON payload (0 for PGN text)."""
    if not payload.startswith(b"{"):
        return 0
    try:
        value = json.loads(payload).get("seq", 0)
    except ValueError:
        return 0
    return int(value) if isinstance(value, int) else 0


class AsyncJournal:
    """:class:`Journal` for the event loop: every call runs on one dedicated worker thread.

    One worker keeps the calls strictly ordered; the loop only awaits a future,
    so a slow ``fsync`` delays the pipeline of this board but never the loop.
    """

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                               thread_name_prefix=f"journal-{journal.path.stem}")

    async def call(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """Run ``fn(*args, **kwargs)`` on the journal thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    async def record(self, event: ev.Event | Tick | None, publications: Sequence[PublicationLike], *,
                     seq: int, closing: tuple[str, str, str] | None = None) -> int | None:
        """See :meth:`Journal.record`."""
        return await self.call(self.journal.record, event, publications, seq=seq, closing=closing)

    async def record_rows(self, event: ev.Event | Tick | None, publications: Sequence[PublicationLike], *,
                          seq: int, closing: tuple[str, str, str] | None = None,
                          outputs: tuple[str, int] | None = None) -> tuple[int | None, list[OutboxRow]]:
        """See :meth:`Journal.record_rows`."""
        return await self.call(self.journal.record_rows, event, publications, seq=seq, closing=closing,
                               outputs=outputs)

    async def unacked(self, *, limit: int = 100, after: int = 0) -> list[OutboxRow]:
        """See :meth:`Journal.unacked`."""
        return await self.call(self.journal.unacked, limit=limit, after=after)

    async def ack(self, ids: Sequence[int]) -> None:
        """See :meth:`Journal.ack`."""
        await self.call(self.journal.ack, list(ids))

    async def aclose(self) -> None:
        """Close the journal on its thread and stop the worker."""
        await self.call(self.journal.close)
        self._executor.shutdown(wait=True)
