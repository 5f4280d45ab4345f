"""Real-time scheduling for the board daemon, taken only where the service manager allows it.

A clock press must reach the broker within 10 ms (p99) even while something else on the Pi is busy:
as a ``SCHED_FIFO`` task the daemon runs as soon as it is woken, instead of waiting for the busy
process's time slice at each hop (pty read, journal thread, MQTT). docs/deployment.md gives the figures.

The unit grants it with ``LimitRTPRIO=10`` (``RLIMIT_RTPRIO``), and the daemon takes it itself at start,
before any thread exists (threads inherit the policy). Not systemd's ``CPUSchedulingPolicy=``: on a kernel
built with ``CONFIG_RT_GROUP_SCHED`` systemd cannot give a service real-time time, and the start would
fail (status 214) and loop under ``Restart=always``, leaving the board dark. Here a refusal is logged and
the daemon goes on with the normal scheduler. Without the limit (a developer's shell, the tests, a
container) nothing changes.
"""

from __future__ import annotations

import logging
import os
import resource

__all__ = ["DEFAULT_PRIORITY", "take_realtime"]

_LOGGER = logging.getLogger(__name__)

#: The priority asked for: above every normal task, below the kernel's interrupt threads (50).
DEFAULT_PRIORITY = 10


def take_realtime(priority: int = DEFAULT_PRIORITY) -> str:
    """Switch this process to ``SCHED_FIFO`` when ``RLIMIT_RTPRIO`` allows it; say what was done.

    The priority is *priority*, or the soft limit when that is lower. Never raises: a refusal (the
    kernel's real-time group has no budget, a seccomp filter, a platform without the call) is logged
    as a warning and the process keeps the normal scheduler.
    """
    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_RTPRIO)
    except (AttributeError, OSError, ValueError):
        return "normal scheduling (no real-time limit on this platform)"
    if soft != resource.RLIM_INFINITY and soft < 1:
        return "normal scheduling (LimitRTPRIO not set)"
    wanted = priority if soft == resource.RLIM_INFINITY else min(priority, soft)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(wanted))
    except (AttributeError, OSError) as exc:
        _LOGGER.warning("real-time scheduling refused (%s): going on with the normal scheduler; presses may "
                        "wait for busy processes", exc)
        return f"normal scheduling (SCHED_FIFO {wanted} refused: {exc})"
    _LOGGER.info("real-time scheduling: SCHED_FIFO priority %d", wanted)
    return f"SCHED_FIFO priority {wanted}"
