"""Real-time scheduling taken by the daemon itself where LimitRTPRIO allows it (boardd.daemon.scheduling)."""

from __future__ import annotations

import logging
import os
import resource
import subprocess
import sys

import pytest

from boardd.daemon import scheduling
from boardd.daemon.scheduling import take_realtime


def test_without_the_limit_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (0, 0))
    monkeypatch.setattr(os, "sched_setscheduler", lambda *args: calls.append(args))
    assert take_realtime() == "normal scheduling (LimitRTPRIO not set)"
    assert calls == []


def test_priority_capped_by_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int, int]] = []
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (5, 5))
    monkeypatch.setattr(os, "sched_setscheduler",
                        lambda pid, policy, param: calls.append((pid, policy, param.sched_priority)))
    assert take_realtime(10) == "SCHED_FIFO priority 5"
    assert calls == [(0, os.SCHED_FIFO, 5)]


def test_a_refusal_is_logged_and_the_daemon_goes_on(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    def refuse(*_args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (10, 10))
    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    with caplog.at_level(logging.WARNING, logger=scheduling.__name__):
        said = take_realtime()
    assert said.startswith("normal scheduling (SCHED_FIFO 10 refused")
    assert "real-time scheduling refused" in caplog.text


def _can_grant_rtprio() -> bool:
    """Can this test runner give a child RLIMIT_RTPRIO 10 (as systemd's LimitRTPRIO=10 does)?"""
    _soft, hard = resource.getrlimit(resource.RLIMIT_RTPRIO)
    return hard == resource.RLIM_INFINITY or hard >= 10


@pytest.mark.skipif(not hasattr(os, "SCHED_FIFO"), reason="no POSIX real-time scheduling on this platform")
def test_a_real_process_with_the_limit() -> None:
    """What the unit's LimitRTPRIO=10 gives: the process takes SCHED_FIFO 10, or says why not and keeps SCHED_OTHER.

    The kernel's call is real. Where this runner may not raise the hard limit (no CAP_SYS_RESOURCE, as in
    the development sandbox) the child is told the limit is 10 instead of being given it; a root runner's
    CAP_SYS_NICE then lets the call through, as the limit does for the unprivileged service.
    """
    grant = _can_grant_rtprio()
    pretend = "" if grant else "import resource; resource.getrlimit = lambda _which: (10, 10); "
    code = (pretend + "import os; from boardd.daemon.scheduling import take_realtime; said = take_realtime(); "
            "print(said); print(os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)")

    def limit() -> None:
        if grant:
            resource.setrlimit(resource.RLIMIT_RTPRIO, (10, 10))

    done = subprocess.run([sys.executable, "-c", code], preexec_fn=limit, capture_output=True, text=True,
                          check=True, timeout=30)
    said, numbers = done.stdout.strip().splitlines()
    policy, priority = (int(x) for x in numbers.split())
    if said.startswith("SCHED_FIFO"):
        assert said == "SCHED_FIFO priority 10"
        assert (policy, priority) == (os.SCHED_FIFO, 10)
    else:  # e.g. a kernel real-time group without budget, or no privilege: refused, logged, SCHED_OTHER kept
        assert "refused" in said and policy == os.SCHED_OTHER
        assert "real-time scheduling refused" in done.stderr


def test_without_the_limit_a_real_process_keeps_the_normal_scheduler() -> None:
    code = ("import os; from boardd.daemon.scheduling import take_realtime; print(take_realtime()); "
            "print(os.sched_getscheduler(0))")

    def no_limit() -> None:
        resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))

    done = subprocess.run([sys.executable, "-c", code], preexec_fn=no_limit, capture_output=True, text=True,
                          check=True, timeout=30)
    said, policy = done.stdout.strip().splitlines()
    assert said == "normal scheduling (LimitRTPRIO not set)"
    assert int(policy) == os.SCHED_OTHER
