"""Parts 1 and 2 of ``bench.bench_daemon``: a real ``boardd run`` reading the DGT byte emulator on a pty.

One *session* = one Mosquitto, one emulator, one daemon subprocess, one recording
subscriber, one game with clock presses, then (optionally) an idle period. The same
session gives the end-to-end latencies (part 1), the memory samples and the idle CPU
(part 2).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess.pgn

from bench._daemon_common import DaemonProcess, ProcSample, broker, cpu_seconds, mqtt_section, outbox_rows, proc_sample
from bench._daemon_confine import Confinement, cpu_quota
from bench._daemon_mqtt import Received, iso_seconds, mosquitto_baseline, recorder
from boardd.core.events import ClockSide
from drivers.dgt.codec import ClockTimes, MessageId, decode_message
from drivers.dgt.emulator import DgtEmulator

__all__ = ["PressTiming", "SessionResult", "dgt_session"]

BOARD = "bench1"


@dataclass(frozen=True, slots=True)
class PressTiming:
    """One completed move, all times wall-clock seconds on this machine.

    Attributes:
        ply: 1-based ply.
        written: the BWTIME carrying the lever change was written to the pty (emulator hook).
        stamped: the daemon's event time of the press (``completed_at_s`` of the move).
        rendered: the envelope ``ts`` (event time the daemon rendered the publication for; ms, floored).
        journaled: the outbox row's ``wall`` (the daemon's time.time() when the journal transaction began).
        arrived: the QoS 1 subscriber received the ``completed`` move message.
    """

    ply: int
    written: float
    stamped: float
    rendered: float
    journaled: float | None
    arrived: float

    @property
    def total(self) -> float:
        """Press bytes written -> move message at the subscriber."""
        return self.arrived - self.written


@dataclass
class SessionResult:
    """What one DGT session measured."""

    label: str
    plies_played: int = 0
    presses: list[PressTiming] = field(default_factory=list)
    missing_plies: list[int] = field(default_factory=list)
    memory: list[ProcSample] = field(default_factory=list)
    game_cpu_s: float = 0.0
    game_wall_s: float = 0.0
    idle_cpu_s: float | None = None
    idle_wall_s: float | None = None
    irregularities: Counter[str] = field(default_factory=Counter)
    #: ``code (subtype) at ply`` of every irregularity raised, for the report.
    irregularity_details: list[str] = field(default_factory=list)
    baseline_ack: list[float] = field(default_factory=list)
    baseline_arrival: list[float] = field(default_factory=list)
    messages: int = 0
    exit_status: int | None = None
    log_tail: str = ""
    #: the CPU quota's mechanism and its throttling counters over the daemon's run (``bench._daemon_confine``).
    quota_mechanism: str | None = None
    quota_stats: dict[str, int] = field(default_factory=dict)
    #: the same counters when the game started (what start-up used of the quota).
    quota_at_play: dict[str, int] = field(default_factory=dict)
    #: wall time when the game started on the emulator (after the daemon published its first state).
    play_started: float = 0.0
    #: ``bench._daemon_trace`` events (kind, wall, duration s, detail) when traced.
    trace: list[tuple[str, float, float, str]] = field(default_factory=list)


def _config(path: Path, *, port: int, device: str, state: Path, zero_wait: bool, synchronous: str) -> None:
    timing = "[board.rules.timing]\nt_latency = 0.0\nt_bounce = 0.0\n" if zero_wait else ""
    path.write_text(f"""{mqtt_section(port)}
[journal]
directory = "{state}"
synchronous = "{synchronous}"

[logging]
level = "info"

[[board]]
id = "{BOARD}"
[board.driver]
kind = "dgt"
port = "{device}"
[board.rules]
edition = 2023
white_clock_side = "left"
{timing}
[board.game]
event = "bench"
time_control = "5400+0"
white = "White"
black = "Black"
""")


class _PressHook:
    """Emulator write hook: the wall time of every BWTIME whose lever bit changed (one per press)."""

    def __init__(self) -> None:
        self.lever: int | None = None
        self.times: list[float] = []

    def __call__(self, data: bytes) -> None:
        now = time.time()
        if not data or data[0] != MessageId.BWTIME:
            return
        try:
            message = decode_message(bytes(data))
        except Exception:  # not one whole BWTIME frame: not ours to judge
            return
        if not isinstance(message, ClockTimes) or message.status & 0x20:
            return
        lever = message.status & 0x02
        if self.lever is not None and lever != self.lever:
            self.times.append(now)
        self.lever = lever


async def _sample_memory(pid: int, out: list[ProcSample], every: float) -> None:
    while True:
        sample = proc_sample(pid)
        if sample is not None:
            out.append(sample)
        await asyncio.sleep(every)


async def dgt_session(workdir: Path, game: chess.pgn.Game, *, label: str, zero_wait: bool, idle_s: float = 0.0,
                      think_scans: int = 2, pause_scans: int = 2, synchronous: str = "full",
                      baseline: bool = True, nodelay: bool = True, module: str = "boardd",
                      nice: int = 0, confinement: Confinement | None = None,
                      trace: bool = False) -> SessionResult:
    """Play *game* on the emulator in front of a real daemon and measure; see the module docstring."""
    result = SessionResult(label=label)
    trace_file = workdir / "trace.json"
    env = {"BOARDD_BENCH_TRACE": str(trace_file)} if trace else None
    module = "bench._daemon_trace" if trace else module
    with broker(workdir / "mosquitto", nodelay=nodelay) as b:
        if baseline:
            result.baseline_ack, result.baseline_arrival = await mosquitto_baseline(b.port)
        async with DgtEmulator(directory=workdir, seed=1) as emu, recorder(b.port, f"boardd/{BOARD}/#") as rec:
            emu.set_clock(5400, 5400)
            hook = _PressHook()
            emu.on_write.append(hook)
            config = workdir / "boardd.toml"
            _config(config, port=b.port, device=emu.path, state=workdir / "state", zero_wait=zero_wait,
                    synchronous=synchronous)
            confinement = confinement or Confinement()
            settings = confinement.prefix()
            stack = contextlib.ExitStack()
            quota = stack.enter_context(cpu_quota(confinement))  # removed by stack.close() below
            daemon = DaemonProcess(config, workdir / "boardd.log", module=module, nice=nice,
                                   prefix=[*(quota.prefix() if quota is not None else []), *settings], env=env)
            sampler: asyncio.Task[None] | None = None
            try:
                daemon.start()
                if not await emu.wait_host(max_scans=200):
                    raise RuntimeError(f"the daemon never opened the emulated board:\n{daemon.tail()}")

                def started() -> bool:
                    return any(m.topic.endswith("/state") for m in rec.messages)

                if not await rec.wait_for(started, 30):
                    raise RuntimeError(f"no state from the daemon:\n{daemon.tail()}")
                await emu.wait_scan(4)
                sampler = asyncio.create_task(_sample_memory(daemon.pid, result.memory, 0.25))
                cpu0, wall0 = cpu_seconds(daemon.pid), time.monotonic()
                result.play_started = time.time()
                if quota is not None:
                    result.quota_at_play = quota.stats()
                result.plies_played = await emu.play(game, think_scans=think_scans, pause_scans=pause_scans,
                                                     use_clk=False, white_side=ClockSide.LEFT)

                def all_completed() -> bool:
                    return len(_completed(rec.messages)) >= result.plies_played

                await rec.wait_for(all_completed, 15)
                result.game_cpu_s = cpu_seconds(daemon.pid) - cpu0
                result.game_wall_s = time.monotonic() - wall0
                if idle_s > 0:
                    emu.pause()
                    await asyncio.sleep(2.0)  # the paused clock's BWTIME and its publications go through
                    cpu0, wall0 = cpu_seconds(daemon.pid), time.monotonic()
                    await asyncio.sleep(idle_s)
                    result.idle_cpu_s = cpu_seconds(daemon.pid) - cpu0
                    result.idle_wall_s = time.monotonic() - wall0
            finally:
                try:
                    if sampler is not None:
                        sampler.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await sampler
                    result.exit_status = await asyncio.to_thread(daemon.stop)
                    result.log_tail = daemon.tail(800)
                    if quota is not None:
                        result.quota_mechanism, result.quota_stats = quota.mechanism, quota.stats()
                finally:
                    stack.close()  # the quota's cgroup goes, whatever happened
            result.messages = len(rec.messages)
            messages = list(rec.messages)
    _collect(result, messages, hook.times, workdir / "state" / f"{BOARD}.sqlite")
    with contextlib.suppress(OSError):  # for a look afterwards (--keep)
        (workdir / "presses.json").write_text(json.dumps([dataclasses.astuple(p) for p in result.presses]))
    if trace:
        with contextlib.suppress(OSError, ValueError):
            result.trace = [(str(k), float(w), float(d), str(x))
                            for k, w, d, x in json.loads(trace_file.read_text())["events"]]
    return result


def _completed(messages: list[Received]) -> dict[int, tuple[float, dict[str, Any]]]:
    out: dict[int, tuple[float, dict[str, Any]]] = {}
    for m in messages:
        if not m.topic.endswith("/move"):
            continue
        payload = m.json()
        if payload and payload.get("phase") == "completed" and payload.get("ply") not in out:
            out[int(payload["ply"])] = (m.at, payload)
    return out


def _collect(result: SessionResult, messages: list[Received], press_times: list[float], journal: Path) -> None:
    walls: dict[tuple[int, int], float] = {}
    with contextlib.suppress(Exception):
        walls = {(session, seq): wall for session, seq, _topic, wall, _acked in outbox_rows(journal)}
    for m in messages:
        if m.topic.endswith("/irregularity"):
            payload = m.json() or {}
            if payload.get("status", "open") == "open":
                result.irregularities[str(payload.get("code"))] += 1
                result.irregularity_details.append(
                    f"{payload.get('code')} ({payload.get('subtype')}) ply {payload.get('ply')}")
    completed = _completed(messages)

    for ply in range(1, result.plies_played + 1):
        if ply not in completed or ply > len(press_times):
            result.missing_plies.append(ply)
            continue
        arrived, payload = completed[ply]
        stamped = payload.get("completed_at_s")
        if not isinstance(stamped, (int, float)):
            result.missing_plies.append(ply)
            continue
        result.presses.append(PressTiming(
            ply=ply, written=press_times[ply - 1], stamped=float(stamped), rendered=iso_seconds(payload["ts"]),
            journaled=walls.get((int(payload["session"]), int(payload["seq"]))), arrived=arrived))
