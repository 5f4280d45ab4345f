"""``bench._daemon_confine``: the daemon's CPU quota lands on the process and its cgroup goes away afterwards."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bench._daemon_confine import (
    Confinement,
    ConfinementError,
    cpu_quota,
    parse_ionice,
    parse_sched,
    probe_mechanism,
    run_confined,
)

SHOW = "import os; print(open('/proc/self/cgroup').read()); print(os.nice(0)); print(sorted(os.sched_getaffinity(0)))"


def _mechanism() -> str:
    try:
        return probe_mechanism("auto")
    except ConfinementError as exc:
        pytest.skip(str(exc))


def _leftovers() -> list[Path]:
    roots = [Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/unified")]
    return [p for r in roots if r.is_dir() for p in r.glob(f"boardd-bench-{os.getpid()}-*")]


def test_quota_applies_to_the_child_and_is_removed() -> None:
    mechanism = _mechanism()
    with cpu_quota(Confinement(cpu_quota=25)) as quota:
        assert quota is not None and quota.mechanism == mechanism
        result = run_confined(Confinement(), [*quota.prefix(), sys.executable, "-c", SHOW])
        assert result.returncode == 0, result.stderr
        assert quota.unit in result.stdout.decode()
        assert quota.quota_us == 25_000
        if quota.path is not None:
            assert quota.path.is_dir()
    assert _leftovers() == []


def test_quota_removed_when_the_command_or_the_run_fails() -> None:
    _mechanism()
    result = run_confined(Confinement(cpu_quota=25), ["/nonexistent/boardd"])
    assert result.returncode != 0
    assert _leftovers() == []
    with pytest.raises(RuntimeError), cpu_quota(Confinement(cpu_quota=50)):
        raise RuntimeError("a failing run")
    assert _leftovers() == []


def test_unit_like_settings_reach_the_process() -> None:
    if os.geteuid() != 0:
        pytest.skip("a negative niceness needs root")
    cpu = min(os.sched_getaffinity(0))
    base = os.nice(0)
    result = run_confined(Confinement(nice=-3, cpus=str(cpu)), [sys.executable, "-c", SHOW])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().strip().splitlines()
    assert lines[-2] == str(max(-20, base - 3))
    assert lines[-1] == f"[{cpu}]"


def test_parsers_and_refusals() -> None:
    assert parse_sched("fifo:20") == ("fifo", 20)
    assert parse_sched("rr") == ("rr", 10)
    assert parse_ionice("realtime:4") == ("realtime", 4)
    assert parse_ionice("idle") == ("idle", None)
    with pytest.raises(ConfinementError):
        parse_sched("fifo:0")
    with pytest.raises(ConfinementError):
        parse_ionice("fast")
    with pytest.raises(ConfinementError):
        probe_mechanism("cgroup3")
    assert Confinement().describe() == "none"
    assert "25% of one core" in Confinement(cpu_quota=25).describe()
