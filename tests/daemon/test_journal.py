"""Journal: append/reopen, outbox ack semantics, sessions, integrity, retention, power cuts."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import chess
import pytest

from boardd.core import events as ev
from boardd.daemon.journal import Journal, event_from_record, event_to_record


@dataclass(frozen=True)
class Pub:
    topic: str
    payload: bytes
    retain: bool = False
    qos: int = 1

    def payload_bytes(self) -> bytes:
        return self.payload


def pub(seq: int, topic: str = "boardd/t1/move", qos: int = 1) -> Pub:
    return Pub(topic, json.dumps({"v": 1, "seq": seq}).encode(), qos=qos)


SAMPLE_EVENTS: list[ev.Event] = [
    ev.NewGame(at=0.0, game=ev.GameInfo(id="g1", white="A", black="B", round="3", board_no=2)),
    ev.BoardSnapshot.from_board(chess.Board(), at=0.1),
    ev.SquareChanged(at=1.0, square=chess.E2, content=None),
    ev.SquareChanged(at=1.2, square=chess.E4, content=chess.Piece.from_symbol("P")),
    ev.SquareChanged(at=1.3, square=chess.E4, content=ev.Marker.UNKNOWN),
    ev.ClockReading(at=1.5, left=5399.0, right=5400.0, running=ev.ClockSide.RIGHT, lever_high=ev.ClockSide.RIGHT),
    ev.LinkChanged(at=2.0, link=ev.Link.CLOCK, up=False, detail="cable"),
    ev.SetPlayers(at=3.0, white="C", black="D"),
    ev.Acknowledge(at=3.1, irregularity_id="1-1"),
    ev.Resolve(at=3.2, irregularity_id="1-1", ruling="warned", accept=False, claim=True),
    ev.Reinstate(at=3.3, ply=0),
    ev.SetClock(at=3.4, white=60.0, black=61.5, moves_white=3),
    ev.SetResult(at=3.5, result="1/2-1/2", termination="agreement"),
    ev.SetOrientation(at=3.6, white_at_a1=False),
]


def test_event_codec_round_trip() -> None:
    for event in SAMPLE_EVENTS:
        type_name, data = event_to_record(event)
        assert event_from_record(type_name, event.at, data) == event


def test_append_reopen_and_session(tmp_path: Path) -> None:
    path = tmp_path / "t1.sqlite"
    j = Journal.open(path)
    assert j.start_session() == 1
    ids = [j.record(e, [pub(i + 1)], seq=i + 1) for i, e in enumerate(SAMPLE_EVENTS)]
    assert ids == list(range(1, len(SAMPLE_EVENTS) + 1))
    j.begin_game(ev.GameInfo(id="g1", white="A"), first_event=1)
    j.close()
    j = Journal.open(path)
    assert j.session == 1 and j.seq == len(SAMPLE_EVENTS)
    assert j.start_session() == 2
    assert [e for _, e in j.events()] == SAMPLE_EVENTS
    assert [e for _, e in j.events(since=13)] == SAMPLE_EVENTS[12:]
    game = j.current_game()
    assert game is not None and game.id == "g1" and game.info.white == "A" and game.first_event == 1
    assert j.integrity_check() == ["ok"]
    j.close()
    assert Journal.open(path).start_session() == 3


def test_outbox_ack_semantics(tmp_path: Path) -> None:
    j = Journal.open(tmp_path / "j.sqlite")
    j.start_session()
    j.record(SAMPLE_EVENTS[2], [pub(1), pub(2, "boardd/t1/clock", qos=0), pub(3, "boardd/t1/state")], seq=3)
    j.record(None, [pub(4, "boardd/t1/cmd-result")], seq=4)
    rows = j.unacked()
    # QoS 0 is not stored; order and envelope seq are kept
    assert [(r.seq, r.topic) for r in rows] == [(1, "boardd/t1/move"), (3, "boardd/t1/state"),
                                                (4, "boardd/t1/cmd-result")]
    assert all(r.session == 1 for r in rows)
    j.ack([rows[0].id])
    assert [r.seq for r in j.unacked()] == [3, 4]
    assert [r.seq for r in j.unacked(after=rows[1].id)] == [4]
    j.close()
    # unacked rows survive a restart and keep their old session/seq (consumers dedupe on them)
    j = Journal.open(tmp_path / "j.sqlite")
    j.start_session()
    assert [(r.session, r.seq) for r in j.unacked()] == [(1, 3), (1, 4)]
    assert j.unacked_count() == 2
    j.ack(r.id for r in j.unacked())
    assert j.unacked() == [] and j.unacked_count() == 0


def test_corrupt_file_is_moved_aside(tmp_path: Path, caplog: object) -> None:
    path = tmp_path / "t1.sqlite"
    j = Journal.open(path)
    j.start_session()
    for i in range(200):
        j.record(SAMPLE_EVENTS[2], [pub(i)], seq=i)
    j.close()
    data = bytearray(path.read_bytes())
    for off in range(4096, len(data), 512):  # trash every page after the first
        data[off:off + 64] = os.urandom(64)
    path.write_bytes(bytes(data))
    j2 = Journal.open(path)
    assert j2.recovered_from is not None and j2.recovered_from.exists()
    assert ".corrupt-" in j2.recovered_from.name
    assert j2.last_event_id() == 0 and j2.integrity_check() == ["ok"]
    j2.close()


def test_not_a_database_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "t1.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    j = Journal.open(path)
    assert j.recovered_from is not None
    assert j.recovered_from.read_bytes().startswith(b"this is not sqlite")
    j.start_session()
    assert j.session == 1


def _ts(day: str, hour: int) -> float:
    return datetime.fromisoformat(f"{day}T{hour:02d}:00:00").timestamp()


def test_retention_archives_whole_days(tmp_path: Path) -> None:
    j = Journal.open(tmp_path / "j.sqlite")
    j.start_session()
    days = ["2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21"]
    for n, day in enumerate(days):
        first = j.record(ev.NewGame(at=n * 10.0, game=ev.GameInfo(id=f"g{n}")), [pub(n)], seq=n, wall=_ts(day, 15))
        assert first is not None
        j.record(SAMPLE_EVENTS[2], [], seq=n, wall=_ts(day, 16))
        j.begin_game(ev.GameInfo(id=f"g{n}"), first_event=first, wall=_ts(day, 15))
        j.ack(r.id for r in j.unacked())
        if n < 3:
            j.end_game(f"g{n}", result="1-0", pgn=f'[Event "g{n}"]\n\n1-0', wall=_ts(day, 19))
    archive = tmp_path / "archive"
    written = j.prune(archive_dir=archive, retention_days=2, now=_ts("2026-11-21", 18))
    # today (21) and yesterday (20) stay; 18 and 19 are archived
    assert [p.name for p in written] == ["2026-11-18-g0.pgn", "2026-11-19-g1.pgn"]
    assert written[0].read_text().startswith('[Event "g0"]')
    assert [g.id for g in j.games()] == ["g2", "g3"]
    remaining = [e for _, e in j.events()]
    assert len(remaining) == 4 and isinstance(remaining[0], ev.NewGame) and remaining[0].game.id == "g2"
    # a second prune is a no-op; the current game is never pruned even far in the future
    assert j.prune(archive_dir=archive, retention_days=2, now=_ts("2026-11-21", 19)) == []
    j.prune(archive_dir=archive, retention_days=1, now=_ts("2026-12-30", 12))
    assert [g.id for g in j.games()] == ["g3"]


#: The start of the journal scripts run in a child process: a journal opened on argv[1] with
#: ``synchronous = argv[2]``, and a minimal publication.
JOURNAL_SCRIPT = r"""
import json, sys, time
from boardd.core import events as ev
from boardd.daemon.journal import Journal

class Pub:
    topic = "boardd/t1/move"; retain = False; qos = 1
    def __init__(self, seq): self.seq = seq
    def payload_bytes(self): return json.dumps({"v": 1, "seq": self.seq}).encode()

j = Journal.open(sys.argv[1], synchronous=sys.argv[2])
j.start_session()
"""

HAMMER = JOURNAL_SCRIPT + r"""
n = j.last_event_id()
print("ready", flush=True)
while True:
    n += 1
    j.record(ev.SquareChanged(at=float(n), square=n % 64, content=None), [Pub(n), Pub(n)], seq=n)
    sys.stdout.write(f"{n}\n"); sys.stdout.flush()
"""


def test_power_cut_during_writes(tmp_path: Path) -> None:
    """SIGKILL a process hammering the journal at random moments: integrity holds, at most the event in flight
    is lost, and every committed event has both of its outbox rows (one transaction)."""
    script = tmp_path / "hammer.py"
    script.write_text(HAMMER)
    rng = random.Random(1234)
    path = tmp_path / "j.sqlite"
    for round_no in range(8):
        proc = subprocess.Popen([sys.executable, str(script), str(path), "full"], stdout=subprocess.PIPE,
                                text=True, cwd=Path(__file__).resolve().parents[2])
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.02, 0.3))
        proc.send_signal(signal.SIGKILL)
        confirmed = [int(line) for line in proc.stdout.read().split() if line.strip().isdigit()]
        proc.wait()
        last_confirmed = confirmed[-1] if confirmed else 0
        j = Journal.open(path)
        assert j.recovered_from is None, f"round {round_no}: journal was corrupt"
        assert j.integrity_check() == ["ok"]
        last = j.last_event_id()
        # everything the writer saw committed is there; at most one more (committed, not yet printed)
        assert last_confirmed <= last <= last_confirmed + 1, (round_no, last_confirmed, last)
        ids = [i for i, _ in j.events()]
        assert ids == list(range(1, last + 1))
        con = sqlite3.connect(path)
        assert con.execute("SELECT COUNT(*) FROM outbox").fetchone()[0] == 2 * last
        con.close()
        j.close()


def test_new_game_registered_in_the_event_transaction(tmp_path: Path) -> None:
    j = Journal.open(tmp_path / "j.sqlite")
    j.start_session()
    first = j.record(ev.NewGame(at=1.0, game=ev.GameInfo(id="g1", white="A")), [pub(1)], seq=1)
    j.record(SAMPLE_EVENTS[2], [], seq=1)
    second = j.record(ev.NewGame(at=5.0, game=ev.GameInfo(id="g2", white="B")), [pub(2)], seq=2,
                      closing=("g1", "1-0", '[Event "x"]\n\n1-0'))
    games = j.games()
    assert [(g.id, g.first_event) for g in games] == [("g1", first), ("g2", second)]
    assert games[0].ended is not None and games[0].result == "1-0" and games[0].pgn is not None
    assert games[1].ended is None and games[1].info.white == "B"
    current = j.current_game()
    assert current is not None and current.id == "g2"
    # a NewGame without an id (replayed from an old journal) registers nothing
    j.record(ev.NewGame(at=6.0, game=ev.GameInfo()), [], seq=2)
    assert len(j.games()) == 2


def test_prune_keeps_a_game_without_pgn(tmp_path: Path) -> None:
    j = Journal.open(tmp_path / "j.sqlite")
    j.start_session()
    a = j.record(ev.NewGame(at=0.0, game=ev.GameInfo(id="old")), [], seq=0, wall=_ts("2026-11-10", 10))
    b = j.record(ev.NewGame(at=1.0, game=ev.GameInfo(id="new")), [], seq=0, wall=_ts("2026-11-10", 12))
    assert a is not None and b is not None
    j._conn.execute("UPDATE games SET pgn = NULL, ended = NULL WHERE id = 'old'")  # as if never closed
    assert j.prune(archive_dir=tmp_path / "archive", retention_days=1, now=_ts("2026-11-21", 12)) == []
    assert [g.id for g in j.games()] == ["old", "new"] and j.last_event_id() == b


SYNC_PROBE = JOURNAL_SCRIPT + r"""
for n in range(1, 6):
    _, rows = j.record_rows(ev.SquareChanged(at=float(n), square=n, content=None), [Pub(n)], seq=n)
    sys.stdout.write(f"committed {n}\n"); sys.stdout.flush()
    j.ack([r.id for r in rows])
    sys.stdout.write(f"acked {n}\n"); sys.stdout.flush()
j.close()
"""


def _syncs_between_markers(tmp_path: Path, mode: str) -> list[tuple[str, int]]:
    """Run SYNC_PROBE under strace: [(marker printed, WAL syncs since the previous marker), ...]."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    script = tmp_path / "probe.py"
    script.write_text(SYNC_PROBE)
    trace = tmp_path / "trace.txt"
    proc = subprocess.run(["strace", "-f", "-y", "-qq", "-e", "trace=fsync,fdatasync,write", "-o", str(trace),
                           sys.executable, str(script), str(tmp_path / "j.sqlite"), mode],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], check=False)
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    out: list[tuple[str, int]] = []
    syncs = 0
    for line in trace.read_text().splitlines():
        if ("fdatasync(" in line or "fsync(" in line) and "-wal>" in line:
            syncs += 1
        elif "write(1" in line and ('"committed' in line or '"acked' in line):
            marker = line.split('"', 2)[1].replace("\\n", "")
            out.append((marker, syncs))
            syncs = 0
    assert len(out) == 10, trace.read_text()[-2000:]
    return out


def test_full_commit_is_on_disk_before_it_returns_and_acks_are_not_synced(tmp_path: Path) -> None:
    """The daemon hands a committed move to MQTT only after record_rows returned: with FULL that means
    after the WAL's fsync (a power cut right after cannot lose a move that may have been published).
    A SIGKILL cannot test this (the page cache survives a killed process): the system calls can."""
    markers = _syncs_between_markers(tmp_path, "full")
    assert all(syncs >= 1 for marker, syncs in markers if marker.startswith("committed")), markers
    # acks are not flushed on their own (at-least-once: a lost ack is a resend), the next commit flushes them
    assert all(syncs == 0 for marker, syncs in markers if marker.startswith("acked")), markers


def test_normal_commit_is_not_synced(tmp_path: Path) -> None:
    """The probe can tell: with synchronous=NORMAL no commit syncs the WAL (after the first, which includes
    opening the file)."""
    markers = _syncs_between_markers(tmp_path, "normal")
    assert all(syncs == 0 for _marker, syncs in markers[1:]), markers


def test_record_rows_returns_the_stored_rows_and_ack_keeps_the_mode(tmp_path: Path) -> None:
    j = Journal.open(tmp_path / "j.sqlite", synchronous="full")
    j.start_session()
    event_id, rows = j.record_rows(SAMPLE_EVENTS[2], [pub(1), pub(2, qos=0), pub(3, "boardd/t1/state")], seq=3)
    assert event_id == 1
    assert rows == j.unacked()  # the QoS 0 one is not stored
    assert [(r.seq, r.topic) for r in rows] == [(1, "boardd/t1/move"), (3, "boardd/t1/state")]
    j.ack([rows[0].id])
    assert j._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again for the next commit
    assert [r.id for r in j.unacked()] == [rows[1].id]
    j.close()


def test_prepare_wal_grows_the_wal_once_and_keeps_the_journal(tmp_path: Path) -> None:
    """Issue 12: the WAL reaches its working size at start, later commits reuse it, nothing of the pad stays."""
    path = tmp_path / "t1.sqlite"
    j = Journal.open(path, synchronous="full")
    j.start_session()
    first = j.record(SAMPLE_EVENTS[0], [pub(1)], seq=1)
    j.prepare_wal()
    wal = Path(f"{path}-wal")
    size = wal.stat().st_size
    assert size >= 1000 * 4096
    for i, event in enumerate(SAMPLE_EVENTS[1:], start=2):
        j.record(event, [pub(i)], seq=i)
    assert wal.stat().st_size == size  # reused from its start, not grown
    j.prepare_wal()  # already at its size: nothing written
    assert wal.stat().st_size == size
    tables = {r[0] for r in j._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "wal_pad" not in tables
    assert [e for _, e in j.events(first)] == SAMPLE_EVENTS
    j.close()
    again = Journal.open(path)
    assert again.integrity_check() == ["ok"]
    again.close()


def _outbox(path: Path) -> list[tuple[int, str, float]]:
    con = sqlite3.connect(path)
    try:
        rows = con.execute("SELECT id, game, wall FROM outbox ORDER BY id").fetchall()
        return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]
    finally:
        con.close()


def test_a_wall_clock_stepped_back_loses_no_row_of_the_current_game(tmp_path: Path) -> None:
    """The rows of a game are the game's, whatever the wall clock said when they were written.

    An old game archived and pruned while the current game has rows written after the wall clock was stepped
    back (NTP on a Pi without a real-time clock, the clock ahead when the game started): before, the prune
    deleted every acked row older than the current game's start by wall time, so the current game's own rows
    went with the old game's, and the game's ``move`` rows were no longer found (``since_wall``).
    """
    path = tmp_path / "j.sqlite"
    j = Journal.open(path)
    j.start_session()
    j.record(ev.NewGame(at=0.0, game=ev.GameInfo(id="old")), [pub(1)], seq=1, wall=_ts("2026-11-10", 10))
    j.end_game("old", result="1-0", pgn='[Event "old"]\n\n1-0', wall=_ts("2026-11-10", 11))
    j.record(ev.NewGame(at=10.0, game=ev.GameInfo(id="new")), [pub(2, "boardd/t1/event")], seq=2,
             wall=_ts("2026-11-21", 12))
    j.record(SAMPLE_EVENTS[2], [pub(3)], seq=3, wall=_ts("2026-11-21", 12) + 5)
    stepped = _ts("2026-11-21", 11)  # the wall clock stepped back an hour
    j.record(SAMPLE_EVENTS[3], [pub(4)], seq=4, wall=stepped)
    j.record(None, [pub(5)], seq=5, wall=stepped + 1)
    j.ack(r.id for r in j.unacked())
    assert j.prune(archive_dir=tmp_path / "archive", retention_days=1, now=_ts("2026-11-21", 13))
    assert [g.id for g in j.games()] == ["new"]
    con = sqlite3.connect(path)
    assert [r[0] for r in con.execute("SELECT seq FROM outbox ORDER BY id")] == [2, 3, 4, 5]  # only old's went
    con.close()
    assert [json.loads(p)["seq"] for p in j.outbox_payloads("boardd/t1/move", game="new")] == [3, 4, 5]
    assert [g for _, g, _ in _outbox(path)] == ["new"] * 4
    j.close()


#: The schema of journals written before the outbox was keyed by game (schema 1), verbatim.
SCHEMA_1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, session INTEGER NOT NULL, wall REAL NOT NULL, at REAL NOT NULL, type TEXT NOT NULL,
    data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY, session INTEGER NOT NULL, seq INTEGER NOT NULL, wall REAL NOT NULL, topic TEXT NOT NULL,
    payload BLOB NOT NULL, retain INTEGER NOT NULL, qos INTEGER NOT NULL, acked INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS outbox_unacked ON outbox (id) WHERE acked = 0;
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY, info TEXT NOT NULL, first_event INTEGER NOT NULL, started REAL NOT NULL, ended REAL,
    result TEXT, pgn TEXT, archived TEXT);
INSERT INTO meta VALUES ('schema', '1'), ('session', '2'), ('seq', '6');
"""


def test_a_schema_1_journal_is_migrated_on_open(tmp_path: Path) -> None:
    """Outbox rows of schema 1 get their game from the transactions, not from the wall clock.

    Two games; the second's rows include some written after the wall clock was stepped back to before its
    start. Each game's rows start with the rows of its ``NewGame`` transaction (same session and wall) and run
    to the next game's: every row of the second game is its own, none of the first's is. The output count of a
    migrated game is unknown (None); the journal then writes the new columns.
    """
    path = tmp_path / "j.sqlite"
    con = sqlite3.connect(path, isolation_level=None)
    con.executescript(SCHEMA_1)
    g1, g2 = json.dumps({"id": "g1"}), json.dumps({"id": "g2"})
    con.executescript(f"""
    INSERT INTO events VALUES (1, 1, 1000.0, 0.0, 'new-game', '{{}}'), (2, 1, 1001.0, 1.0, 'tick', '{{}}'),
                              (3, 2, 2000.0, 2.0, 'new-game', '{{}}'), (4, 2, 1500.0, 3.0, 'tick', '{{}}');
    INSERT INTO games VALUES ('g1', '{g1}', 1, 1000.0, 2000.0, '1-0', 'pgn', NULL),
                             ('g2', '{g2}', 3, 2000.0, NULL, NULL, NULL, NULL);
    INSERT INTO outbox (id, session, seq, wall, topic, payload, retain, qos, acked) VALUES
        (1, 1, 1, 900.0, 'boardd/t1/status', CAST('{{"seq":1}}' AS BLOB), 1, 1, 1),
        (2, 1, 2, 1000.0, 'boardd/t1/event', CAST('{{"seq":2}}' AS BLOB), 0, 1, 1),
        (3, 1, 3, 1001.0, 'boardd/t1/move', CAST('{{"seq":3}}' AS BLOB), 0, 1, 1),
        (4, 2, 4, 2000.0, 'boardd/t1/event', CAST('{{"seq":4}}' AS BLOB), 0, 1, 1),
        (5, 2, 5, 1500.0, 'boardd/t1/move', CAST('{{"seq":5}}' AS BLOB), 0, 1, 0),
        (6, 2, 6, 1500.5, 'boardd/t1/move', CAST('{{"seq":6}}' AS BLOB), 0, 1, 0);
    """)
    con.close()
    j = Journal.open(path)
    assert j._meta("schema", "") == "2"
    assert [(i, g) for i, g, _ in _outbox(path)] == [(1, ""), (2, "g1"), (3, "g1"), (4, "g2"), (5, "g2"),
                                                     (6, "g2")]
    assert [g.outputs for g in j.games()] == [None, None]
    assert [json.loads(p)["seq"] for p in j.outbox_payloads("boardd/t1/move", game="g2")] == [5, 6]
    assert [r.id for r in j.unacked()] == [5, 6] and (j.session, j.seq) == (2, 6)
    j.start_session()
    j.record(SAMPLE_EVENTS[2], [pub(7)], seq=7, wall=1400.0, outputs=("g2", 9))
    assert _outbox(path)[-1][:2] == (7, "g2") and [g.outputs for g in j.games()] == [None, 9]
    j.close()
    j = Journal.open(path)  # opened again: nothing migrated twice
    assert [g for _, g, _ in _outbox(path)] == ["", "g1", "g1", "g2", "g2", "g2", "g2"]
    j.close()
