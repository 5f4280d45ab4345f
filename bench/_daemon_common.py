"""Shared plumbing of ``bench.bench_daemon``: broker, daemon subprocesses, /proc sampling, statistics, tables.

Nothing here asserts anything: the benchmark prints what it measured.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.mosquitto import Broker, free_port

__all__ = [
    "ROOT",
    "Broker",
    "DaemonProcess",
    "ProcSample",
    "Table",
    "broker",
    "cpu_seconds",
    "free_port",
    "loadavg",
    "mqtt_section",
    "outbox_rows",
    "percentile",
    "proc_sample",
    "summary",
]

_LOGGER = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
_TICK = os.sysconf("SC_CLK_TCK")


def loadavg() -> str:
    """The 1/5/15-minute load averages, as /proc/loadavg prints them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process *pid* (all its threads, dead ones included), from /proc."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state): utime is field 14, stime field 15
    return (int(fields[11]) + int(fields[12])) / _TICK


@dataclass(frozen=True, slots=True)
class ProcSample:
    """One /proc/<pid>/status reading (kB)."""

    at: float
    rss_kb: int
    hwm_kb: int


def proc_sample(pid: int) -> ProcSample | None:
    """VmRSS and VmHWM of *pid*, or None when the process is gone."""
    values: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if len(values) < 2:
        return None
    return ProcSample(time.monotonic(), values["VmRSS"], values["VmHWM"])


def percentile(values: Sequence[float], q: float) -> float:
    """The *q*-quantile (0..1) by the nearest-rank method (NaN for no values)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def summary(values_s: Sequence[float]) -> str:
    """``p50 / p99 / max`` of durations given in seconds, printed in ms."""
    if not values_s:
        return "no samples"
    return (f"{percentile(values_s, 0.5) * 1e3:8.2f} {percentile(values_s, 0.99) * 1e3:8.2f} "
            f"{max(values_s) * 1e3:8.2f}")


@dataclass
class Table:
    """A plain-text table: a title, a header row and rows of strings."""

    title: str
    header: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        """Append a row (cells are formatted with ``str``)."""
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        """The table as text, columns left-aligned (first) and right-aligned (others)."""
        widths = [len(h) for h in self.header]
        for row in self.rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(cell))
        lines = [self.title, "-" * len(self.title)]

        def fmt(row: Sequence[str]) -> str:
            return "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row))

        lines.append(fmt(self.header))
        lines.extend(fmt(r) for r in self.rows)
        return "\n".join(lines)


@contextlib.contextmanager
def broker(directory: Path, *, nodelay: bool = True) -> Iterator[Broker]:
    """A private Mosquitto on a free loopback port (never the system broker on 1883), files in *directory*.

    Queue limits as ``config/mosquitto/boardd-hall.conf`` (``max_queued_messages 5000``,
    ``max_inflight_messages 20``); *nodelay* sets ``set_tcp_nodelay true`` as that file does
    (Mosquitto's default is false: Nagle's algorithm on the broker's sockets).
    """
    directory.mkdir(parents=True, exist_ok=True)
    extra = ["max_queued_messages 5000", "max_inflight_messages 20"]
    if nodelay:
        extra.append("set_tcp_nodelay true")
    b = Broker(directory=directory, extra_config="\n".join(extra))
    b.start()
    try:
        yield b
    finally:
        b.stop()


def mqtt_section(port: int, *, keepalive: int = 15) -> str:
    """The ``[mqtt]`` table of a generated daemon configuration."""
    return f'[mqtt]\nhost = "127.0.0.1"\nport = {port}\nkeepalive = {keepalive}\nprefix = "boardd"\n'


class DaemonProcess:
    """``boardd run --config FILE`` as a real subprocess, its output in a log file."""

    def __init__(self, config: Path, log: Path, *, module: str = "boardd", nice: int = 0,
                 prefix: Sequence[str] = (), env: dict[str, str] | None = None) -> None:
        self.config = config
        self.log = log
        #: Scheduling niceness of the daemon (``nice -n``; 0: as the benchmark itself).
        self.nice = nice
        #: a command prefix that ends by exec'ing the rest (``bench._daemon_confine``: cgroup, taskset, chrt...).
        self.prefix = list(prefix)
        #: extra environment variables of the daemon.
        self.env = dict(env or {})
        #: the module run with ``python -m`` (``boardd``, or a wrapper of its command line).
        self.module = module
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        """The daemon's process id."""
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        """Start the daemon (does not wait for it to connect)."""
        env = {**os.environ, "PYTHONPATH": str(ROOT), **self.env}
        env.pop("NOTIFY_SOCKET", None)
        with open(self.log, "ab") as fh:
            prefix = [*self.prefix, *(["nice", "-n", str(self.nice)] if self.nice else [])]
            self.process = subprocess.Popen(
                [*prefix, sys.executable, "-m", self.module, "run", "--config", str(self.config)],
                stdout=fh, stderr=fh, cwd=ROOT, env=env, stdin=subprocess.DEVNULL)

    def alive(self) -> bool:
        """True while the process runs."""
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM (clean shutdown: outbox drained, offline status), SIGKILL after *timeout*; the exit status."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                _LOGGER.warning("daemon %d did not stop within %.0f s: killed", self.process.pid, timeout)
                self.process.kill()
                self.process.wait(5)
        return self.process.returncode

    def tail(self, chars: int = 1500) -> str:
        """The end of the daemon's log."""
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def outbox_rows(journal: Path) -> list[tuple[int, int, str, float, int]]:
    """``(session, seq, topic, wall, acked)`` of every outbox row of a (stopped) daemon's journal.

    Read-only and outside :mod:`boardd.daemon.journal` on purpose: the benchmark only looks.
    """
    conn = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT session, seq, topic, wall, acked FROM outbox ORDER BY id").fetchall()
    finally:
        conn.close()
    return [(int(r[0]), int(r[1]), str(r[2]), float(r[3]), int(r[4])) for r in rows]
