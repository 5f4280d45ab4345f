"""Part 3 of ``bench.bench_daemon``: many ``boardd run`` processes (simulated boards) against one Mosquitto.

Every daemon serves one board with the simulator driver (``kind = "sim"``) at a
given tempo, with the rules' timing divided by the same tempo (players moving
faster). One recording subscriber on ``boardd/#`` (QoS 1) keeps every message
with its arrival time. After the window the daemons get SIGTERM (clean stop:
outbox drained, offline status) and their journals are read: every QoS 1
publication is an outbox row with its ``seq``, so loss and duplicates are
counted exactly for QoS 1; the other seq numbers a subscriber never saw are QoS 0
clock messages not delivered (or seq numbers never published, such as that of
the last will, which a clean stop does not send).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench._daemon_common import (
    DaemonProcess,
    broker,
    cpu_seconds,
    loadavg,
    mqtt_section,
    outbox_rows,
    percentile,
    proc_sample,
)
from bench._daemon_mqtt import Received, iso_seconds, recorder
from boardd.core.settings import Timing

__all__ = ["HallResult", "hall"]


@dataclass
class HallResult:
    """What one hall run measured."""

    daemons: int
    processes: int
    tempo: float
    window_s: float = 0.0
    startup_s: float = 0.0
    online: int = 0
    load_start: str = ""
    load_end: str = ""
    broker_cpu_s: float = 0.0
    daemons_cpu_s: float = 0.0
    bench_cpu_s: float = 0.0
    daemons_rss_kb: int = 0
    in_window: int = 0
    by_topic: Counter[str] = field(default_factory=Counter)
    latency_qos1: list[float] = field(default_factory=list)
    latency_clock: list[float] = field(default_factory=list)
    outbox_total: int = 0
    outbox_unacked: int = 0
    qos1_lost: int = 0
    duplicates: int = 0
    other_gaps: int = 0
    received_total: int = 0
    #: (seconds into the window, n, p50 s, p99 s) of ts -> arrival, all JSON messages, per slice.
    slices: list[tuple[float, int, float, float]] = field(default_factory=list)
    exit_codes: Counter[int | None] = field(default_factory=Counter)
    nice: int = 0
    #: Lines of the broker's log about messages dropped for a slow client (queue full).
    broker_drops: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _timing_table(tempo: float) -> str:
    d = Timing()
    names = ("t_flicker", "t_settle", "t_scan", "t_simul", "t_latency", "t_knock", "t_adjust", "t_bounce")
    return "[board.rules.timing]\n" + "".join(f"{n} = {getattr(d, n) / tempo:.4f}\n" for n in names)


def _config(path: Path, *, port: int, boards: list[tuple[str, int]], tempo: float, state: Path,
            synchronous: str) -> None:
    sections = "".join(f"""
[[board]]
id = "{board}"
[board.driver]
kind = "sim"
port = "random"
seed = {seed}
profile = "casual"
tempo = {tempo}
loop = true
time_control = "900+10"
[board.rules]
edition = 2023
{_timing_table(tempo)}
[board.game]
event = "bench hall"
board_no = {seed}
time_control = "900+10"
""" for board, seed in boards)
    path.write_text(f"""{mqtt_section(port)}
[journal]
directory = "{state}"
synchronous = "{synchronous}"

[logging]
level = "warning"
{sections}""")


def _envelope(m: Received) -> tuple[str, int, int, float] | None:
    if m.topic.endswith("/pgn"):
        return None
    payload = m.json()
    if not payload:
        return None
    try:
        return str(payload["board"]), int(payload["session"]), int(payload["seq"]), iso_seconds(payload["ts"])
    except (KeyError, TypeError, ValueError):
        return None


async def hall(workdir: Path, *, daemons: int, seconds: float, tempo: float = 10.0, synchronous: str = "normal",
               start_timeout: float = 180.0, nice: int = 0, boards_per_process: int = 1) -> HallResult:
    """Run *daemons* simulated boards for *seconds* against one broker and measure; see the module docstring.

    *nice* > 0 runs the daemons at a lower scheduling priority than the broker and the
    subscriber (in a hall each daemon has its own Raspberry Pi; here they share two cores).
    *boards_per_process* > 1 gives each ``boardd run`` several ``[[board]]`` sections.
    """
    per = max(1, boards_per_process)
    result = HallResult(daemons=daemons, tempo=tempo, nice=nice, processes=-(-daemons // per))
    boards = [f"h{i:03d}" for i in range(1, daemons + 1)]
    procs: list[DaemonProcess] = []
    state = workdir / "state"
    with broker(workdir / "mosquitto") as b:
        assert b.process is not None
        broker_pid = b.process.pid
        async with recorder(b.port, "boardd/#") as rec:
            t0 = time.monotonic()
            try:
                for first in range(0, daemons, per):
                    group = [(board, i + 1) for i, board in enumerate(boards) if first <= i < first + per]
                    config = workdir / f"{group[0][0]}.toml"
                    _config(config, port=b.port, boards=group, tempo=tempo, state=state, synchronous=synchronous)
                    proc = DaemonProcess(config, workdir / f"{group[0][0]}.log", nice=nice)
                    proc.start()
                    procs.append(proc)

                def online() -> set[str]:
                    seen: set[str] = set()
                    for m in rec.messages:
                        if m.topic.endswith("/status") and b'"online"' in m.payload:
                            seen.add(m.topic.split("/")[1])
                    return seen

                await rec.wait_for(lambda: len(online()) >= daemons, start_timeout)
                result.startup_s = time.monotonic() - t0
                result.online = len(online())
                if result.online < daemons:
                    result.errors.append(f"only {result.online}/{daemons} daemons online after {start_timeout:.0f} s")
                await asyncio.sleep(2.0)  # let the start-up bursts (state, pgn) settle
                result.load_start = loadavg()
                alive = [p for p in procs if p.alive()]
                first = len(rec.messages)
                cpu_b0 = cpu_seconds(broker_pid)
                cpu_d0 = {p.pid: cpu_seconds(p.pid) for p in alive}
                bench0 = time.process_time()
                w0 = time.monotonic()
                await asyncio.sleep(seconds)
                result.window_s = time.monotonic() - w0
                result.bench_cpu_s = time.process_time() - bench0
                result.broker_cpu_s = cpu_seconds(broker_pid) - cpu_b0
                for p in alive:
                    with contextlib.suppress(OSError):
                        result.daemons_cpu_s += cpu_seconds(p.pid) - cpu_d0[p.pid]
                    sample = proc_sample(p.pid)
                    if sample is not None:
                        result.daemons_rss_kb += sample.rss_kb
                result.load_end = loadavg()
                window = rec.messages[first:]
            finally:
                codes = await asyncio.gather(*(asyncio.to_thread(p.stop, 30.0) for p in procs))
                result.exit_codes.update(codes)
            await asyncio.sleep(2.0)  # the last publications (offline status) arrive
            everything = list(rec.messages)
        with contextlib.suppress(OSError):
            result.broker_drops = [line for line in b.log_path.read_text(errors="replace").splitlines()
                                   if "dropped" in line.lower()]
    _analyse(result, window, everything, [state / f"{board}.sqlite" for board in boards])
    for proc in procs:
        if proc.process is not None and proc.process.returncode not in (0, None):
            result.errors.append(f"{proc.config.stem}: exit {proc.process.returncode}: {proc.tail(300)!r}")
            break
    return result


def _analyse(result: HallResult, window: list[Received], everything: list[Received], journals: list[Path],
             slice_s: float = 10.0) -> None:
    result.in_window = len(window)
    by_slice: dict[int, list[float]] = defaultdict(list)
    start = window[0].at if window else 0.0
    for m in window:
        result.by_topic[m.topic.rsplit("/", 1)[-1]] += 1
        env = _envelope(m)
        if env is None or m.retain:
            continue
        latency = m.at - env[3]
        by_slice[int((m.at - start) // slice_s)].append(latency)
        if m.topic.endswith("/clock"):
            result.latency_clock.append(latency)
        else:
            result.latency_qos1.append(latency)
    result.slices = [(k * slice_s, len(v), percentile(v, 0.5), percentile(v, 0.99))
                     for k, v in sorted(by_slice.items())]
    received: dict[tuple[str, int], Counter[int]] = defaultdict(Counter)
    pgn_received: Counter[str] = Counter()
    for m in everything:
        if m.topic.endswith("/pgn"):
            pgn_received[m.topic.split("/")[1]] += 1
            continue
        env = _envelope(m)
        if env is not None and not m.retain:
            received[(env[0], env[1])][env[2]] += 1
    result.received_total = sum(sum(c.values()) for c in received.values()) + sum(pgn_received.values())
    result.duplicates = sum(n - 1 for c in received.values() for n in c.values() if n > 1)
    for path in journals:
        board = path.stem
        try:
            rows = outbox_rows(path)
        except Exception as exc:  # report and go on with the others
            result.errors.append(f"{board}: cannot read the journal: {exc}")
            continue
        by_session: dict[int, set[int]] = defaultdict(set)
        pgn_rows = 0
        for session, seq, topic, _wall, acked in rows:
            result.outbox_total += 1
            result.outbox_unacked += 0 if acked else 1
            if topic.endswith("/pgn"):  # PGN text has no envelope (seq 0 in the outbox): counted per board
                pgn_rows += 1
                continue
            by_session[session].add(seq)
            # our subscriber is there before the daemons start, so every delivery is live (retain flag clear)
            if seq not in received.get((board, session), Counter()):
                result.qos1_lost += 1
        result.qos1_lost += max(0, pgn_rows - pgn_received[board])
        result.duplicates += max(0, pgn_received[board] - pgn_rows)
        for session, seqs in by_session.items():
            got = set(received.get((board, session), Counter()))
            top = max(seqs | got)
            result.other_gaps += len(set(range(1, top + 1)) - seqs - got)
