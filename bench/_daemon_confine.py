"""How ``bench.bench_daemon e2e`` confines the daemon process: a CPU quota, a CPU pin, unit-like priorities.

A Raspberry Pi-class proxy on a bigger machine, applied to the daemon process **only** (not to the
broker, the emulator or the recording subscriber of the benchmark, which stand for the hall):

* **CPU quota** (``--e2e-cpu-quota PCT``, % of one core), what ``CPUQuota=PCT%`` of a systemd unit does:
  the first mechanism available among

  1. ``systemd-run --scope -p CPUQuota=PCT%`` when systemd runs as the service manager
     (``/run/systemd/system`` exists);
  2. a cgroup v2 child with ``cpu.max = "<PCT*1000> 100000"`` (the ``cpu`` controller enabled in the
     parent's ``cgroup.subtree_control``);
  3. a cgroup v1 ``cpu`` child with ``cpu.cfs_period_us = 100000`` and ``cpu.cfs_quota_us = PCT*1000``
     (exactly what systemd writes for ``CPUQuota=`` on a v1 hierarchy). Where the kernel has
     real-time group scheduling (``cpu.rt_runtime_us``), the child also gets PCT % of a 100 ms
     real-time period, so that a ``--e2e-sched fifo:N`` daemon is confined too (CFS quotas and
     their throttling counters do not apply to real-time tasks). systemd's ``CPUQuota=`` does not
     do that: a real-time daemon under systemd is not held by ``CPUQuota=``.

  The cgroup is created for one daemon run and removed after it (also when the run fails); the
  daemon enters it before it executes Python (a ``sh -c 'echo $$ > cgroup.procs; exec ...'``
  wrapper), so all its threads are in it. Nothing is available: :class:`ConfinementError` says why.
* **CPU pin** (``--e2e-cpus LIST``, ``taskset -c LIST``): e.g. one core for a single-core Pi Zero
  class device; the ``--e2e-load`` processes are pinned to the same CPUs, so they compete for it.
* **Unit-like settings**: ``nice -n N`` (``Nice=``), ``chrt --fifo/--rr P`` (``CPUSchedulingPolicy=``
  and ``CPUSchedulingPriority=``), ``ionice -c CLASS -n LEVEL`` (``IOSchedulingClass=`` and
  ``IOSchedulingPriority=``).

The wrappers ``exec`` each other, so the daemon keeps the process id the benchmark started.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MECHANISMS", "Confinement", "ConfinementError", "CpuQuota", "cpu_quota", "parse_ionice", "parse_sched"]

MECHANISMS = ("auto", "systemd", "cgroup2", "cgroup1")
#: The CFS period systemd uses for ``CPUQuota=`` (100 ms).
PERIOD_US = 100_000
_PREFIX = "boardd-bench"
_IONICE_CLASSES = {"realtime": "1", "best-effort": "2", "idle": "3"}


class ConfinementError(RuntimeError):
    """The requested confinement cannot be applied on this machine (the message says why)."""


def parse_sched(text: str | None) -> tuple[str, int] | None:
    """``fifo:10`` / ``rr:5`` / ``other`` -> (policy, priority), as ``CPUSchedulingPolicy=`` and ``...Priority=``."""
    if not text:
        return None
    policy, _, prio = text.partition(":")
    policy = policy.strip().lower()
    if policy not in ("fifo", "rr", "other", "batch", "idle"):
        raise ConfinementError(f"unknown scheduling policy {policy!r}: fifo, rr, other, batch or idle")
    priority = int(prio) if prio else (10 if policy in ("fifo", "rr") else 0)
    if policy in ("fifo", "rr") and not 1 <= priority <= 99:
        raise ConfinementError(f"real-time priority {priority} out of 1..99")
    return policy, priority


def parse_ionice(text: str | None) -> tuple[str, int | None] | None:
    """``realtime:4`` / ``best-effort:0`` / ``idle`` -> (class, level), as ``IOSchedulingClass=``/``...Priority=``."""
    if not text:
        return None
    cls, _, level = text.partition(":")
    cls = cls.strip().lower()
    if cls not in _IONICE_CLASSES:
        raise ConfinementError(f"unknown I/O class {cls!r}: realtime, best-effort or idle")
    return cls, (int(level) if level and cls != "idle" else None)


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise ConfinementError(f"{tool} is not installed (needed for the requested setting)")
    return path


@dataclass(frozen=True, slots=True)
class Confinement:
    """What to apply to the daemon process; the defaults apply nothing."""

    #: % of one core (``CPUQuota=``), None: no quota.
    cpu_quota: float | None = None
    #: which quota mechanism (:data:`MECHANISMS`; ``auto``: the first available).
    mechanism: str = "auto"
    #: CPU list for ``taskset -c`` (``"1"``, ``"0,1"``), None: no pin.
    cpus: str | None = None
    nice: int = 0
    #: (policy, priority) for ``chrt``, see :func:`parse_sched`.
    sched: tuple[str, int] | None = None
    #: (class, level) for ``ionice``, see :func:`parse_ionice`.
    ionice: tuple[str, int | None] | None = None

    def describe(self) -> str:
        """One line for the benchmark's header."""
        parts = []
        if self.cpu_quota is not None:
            parts.append(f"CPU quota {self.cpu_quota:g}% of one core ({self.mechanism})")
        if self.cpus is not None:
            parts.append(f"pinned to CPU {self.cpus}")
        if self.nice:
            parts.append(f"nice {self.nice}")
        if self.sched is not None:
            parts.append(f"scheduling {self.sched[0]}" + (f" {self.sched[1]}" if self.sched[0] in ("fifo", "rr")
                                                          else ""))
        if self.ionice is not None:
            parts.append(f"ionice {self.ionice[0]}" + (f" {self.ionice[1]}" if self.ionice[1] is not None else ""))
        return ", ".join(parts) or "none"

    def check(self) -> None:
        """Raise :class:`ConfinementError` now (before any game) when something cannot be applied."""
        self.prefix()
        if self.cpu_quota is not None:
            probe_mechanism(self.mechanism)

    def prefix(self) -> list[str]:
        """The command prefix for the settings other than the quota (each tool ``exec``s the next)."""
        out: list[str] = []
        if self.nice:
            out += [_need("nice"), "-n", str(self.nice)]
        if self.ionice is not None:
            cls, level = self.ionice
            out += [_need("ionice"), "-c", _IONICE_CLASSES[cls], *(["-n", str(level)] if level is not None else [])]
        if self.sched is not None:
            policy, priority = self.sched
            out += [_need("chrt"), f"--{policy}", str(priority)]
        if self.cpus is not None:
            out += [_need("taskset"), "-c", self.cpus]
        return out


@dataclass(frozen=True, slots=True)
class _Mount:
    version: int
    root: Path
    #: the current process's cgroup below *root* (where the per-run child is created)
    own: Path


def _mounts() -> list[tuple[str, str, list[str]]]:
    out = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[2] in ("cgroup", "cgroup2"):
                out.append((fields[1], fields[2], fields[3].split(",")))
    return out


def _own_path(version: int, controller: str) -> str:
    """The current process's cgroup in the v1 hierarchy of *controller* (or the v2 one), from /proc/self/cgroup."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _hid, controllers, path = line.split(":", 2)
            if version == 2 and controllers == "":
                return path
            if version == 1 and controller in controllers.split(","):
                return path
    return "/"


def _cgroup1() -> _Mount | None:
    for mountpoint, fstype, options in _mounts():
        if fstype == "cgroup" and "cpu" in options:
            own = Path(mountpoint) / _own_path(1, "cpu").lstrip("/")
            return _Mount(1, Path(mountpoint), own if own.is_dir() else Path(mountpoint))
    return None


def _cgroup2() -> _Mount | None:
    for mountpoint, fstype, _options in _mounts():
        if fstype == "cgroup2":
            root = Path(mountpoint)
            # v2 forbids processes in an inner cgroup with controllers enabled: the child goes below the
            # mount's root, whose cgroup.subtree_control must list cpu.
            try:
                enabled = (root / "cgroup.subtree_control").read_text().split()
            except OSError:
                return None
            return _Mount(2, root, root) if "cpu" in enabled else None
    return None


def _systemd() -> bool:
    return Path("/run/systemd/system").is_dir() and shutil.which("systemd-run") is not None


def probe_mechanism(preferred: str = "auto") -> str:
    """The quota mechanism to use (``systemd``, ``cgroup2``, ``cgroup1``), or :class:`ConfinementError`."""
    if preferred not in MECHANISMS:
        raise ConfinementError(f"unknown quota mechanism {preferred!r}: {', '.join(MECHANISMS)}")
    reasons = []
    if preferred in ("auto", "systemd"):
        if _systemd():
            return "systemd"
        reasons.append("systemd is not the service manager here (no /run/systemd/system) or systemd-run is missing")
    if preferred in ("auto", "cgroup2"):
        mount = _cgroup2()
        if mount is not None and os.access(mount.own, os.W_OK):
            return "cgroup2"
        reasons.append("no writable cgroup v2 hierarchy with the cpu controller enabled"
                       if mount is None else f"cgroup v2 at {mount.own} is not writable (root needed)")
    if preferred in ("auto", "cgroup1"):
        mount1 = _cgroup1()
        if mount1 is not None and os.access(mount1.own, os.W_OK):
            return "cgroup1"
        reasons.append("no cgroup v1 cpu hierarchy mounted" if mount1 is None
                       else f"cgroup v1 cpu hierarchy at {mount1.own} is not writable (root needed)")
    raise ConfinementError("cannot set a CPU quota: " + "; ".join(reasons))


class CpuQuota:
    """One daemon run's CPU quota: the command prefix that enters it, its throttling figures, its removal."""

    def __init__(self, percent: float, mechanism: str, *, realtime: bool = False) -> None:
        if not 0 < percent <= 100 * (os.cpu_count() or 1):
            raise ConfinementError(f"CPU quota {percent}% out of range")
        self.percent = percent
        self.mechanism = mechanism
        self.path: Path | None = None
        self.unit = f"{_PREFIX}-{os.getpid()}-{time.monotonic_ns()}"
        self._realtime = realtime

    @property
    def quota_us(self) -> int:
        """The quota per :data:`PERIOD_US` in microseconds."""
        return max(1000, round(self.percent * PERIOD_US / 100))

    def create(self) -> None:
        """Create the cgroup (nothing for systemd: the scope is created by ``systemd-run``)."""
        if self.mechanism == "systemd":
            return
        mount = _cgroup2() if self.mechanism == "cgroup2" else _cgroup1()
        if mount is None:
            raise ConfinementError(f"the {self.mechanism} hierarchy went away")
        path = mount.own / self.unit
        path.mkdir()
        self.path = path
        try:
            if self.mechanism == "cgroup2":
                (path / "cpu.max").write_text(f"{self.quota_us} {PERIOD_US}\n")
            else:
                (path / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
                (path / "cpu.cfs_quota_us").write_text(f"{self.quota_us}\n")
                rt = path / "cpu.rt_runtime_us"
                if self._realtime and rt.exists():  # the same share, on the same 100 ms period
                    (path / "cpu.rt_period_us").write_text(f"{PERIOD_US}\n")
                    rt.write_text(f"{round(PERIOD_US * min(self.percent, 95.0) / 100)}\n")
        except OSError as exc:
            self.remove()
            raise ConfinementError(f"cannot configure {path}: {exc}") from exc

    def prefix(self) -> list[str]:
        """The command prefix that puts the daemon in the quota before it runs Python."""
        if self.mechanism == "systemd":
            return ["systemd-run", "--scope", "--quiet", "--collect", f"--unit={self.unit}",
                    "-p", f"CPUQuota={self.percent:g}%", "--"]
        assert self.path is not None
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs")]

    def stats(self) -> dict[str, int]:
        """Throttling counters of the cgroup (``nr_periods``, ``nr_throttled``, ``throttled_us``); {} if none."""
        if self.path is None:
            return {}
        out: dict[str, int] = {}
        with contextlib.suppress(OSError, ValueError):
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, value = line.split()
                out[key] = int(value)
        if "throttled_time" in out:  # v1: ns
            out["throttled_us"] = out.pop("throttled_time") // 1000
        if "throttled_usec" in out:  # v2
            out["throttled_us"] = out.pop("throttled_usec")
        return {k: out[k] for k in ("nr_periods", "nr_throttled", "throttled_us") if k in out}

    def remove(self) -> None:
        """Remove the cgroup; processes still in it (there should be none) go back to the parent first."""
        path, self.path = self.path, None
        if path is None or not path.exists():
            return
        with contextlib.suppress(OSError):
            for pid in (path / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (path.parent / "cgroup.procs").write_text(f"{pid}\n")
        for _ in range(50):
            try:
                path.rmdir()
                return
            except OSError:
                time.sleep(0.1)  # the last thread of an exiting process may still be accounted
        path.rmdir()


@contextlib.contextmanager
def cpu_quota(confinement: Confinement) -> Iterator[CpuQuota | None]:
    """The quota of one daemon run (None without ``cpu_quota``), removed when the block ends."""
    if confinement.cpu_quota is None:
        yield None
        return
    quota = CpuQuota(confinement.cpu_quota, probe_mechanism(confinement.mechanism),
                     realtime=confinement.sched is not None and confinement.sched[0] in ("fifo", "rr"))
    quota.create()
    try:
        yield quota
    finally:
        quota.remove()


def run_confined(confinement: Confinement, command: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Run *command* under *confinement* and wait (used by the tests of this module)."""
    with cpu_quota(confinement) as quota:
        prefix = quota.prefix() if quota is not None else []
        return subprocess.run([*prefix, *confinement.prefix(), *command], check=False, capture_output=True)
