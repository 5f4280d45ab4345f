"""A board's link trouble as the arbiter needs it: one incident, not one alert per drop. Pure (no I/O).

A loose USB connector makes a board's link toggle every few hundred milliseconds: the daemon publishes a
``status`` (``degraded``, then ``online``) for each change, and the Pi's bridge notification may do the same
(``offline``/``online``). Shown as it comes, the board would enter and leave the tablet's "needs you" list
each time. :class:`LinkWatch` debounces it with hysteresis (:class:`LinkPolicy`):

* the link must be **down for** ``grace`` seconds before the board needs the arbiter ("board offline");
  a drop shorter than that (a daemon restart, a re-plugged cable) asks for nothing;
* ``unstable`` **drops within** ``window`` seconds make the link *unstable*: one incident at once ("link
  unstable: N drops in the last minute"), whatever the length of each drop;
* an incident **ends** only when the link has been up for ``settle`` seconds and fewer than ``unstable``
  drops remain in the window, so a flapping link stays one incident until it has calmed down.

Times: the caller's clock (``now``: the web service's injectable monotonic clock) says how long a link has
been down when no message comes. The moment of each change is taken from the message itself when it has
one (the status's ``link_change.at_s``, else its envelope ``ts``): messages delivered in a bunch (a broker
queue, a reconnect) still count as the drops they were. The board's clock and the service's may differ;
each board's message times are anchored to the service's clock by the least delayed message seen (delays
only add), and a message later than that by more than :data:`LATE` seconds (a retained status replayed
after a reconnect, a clock step on the Pi) counts as happening when it arrived.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

__all__ = ["LATE", "RESTART_DETAIL", "LinkPolicy", "LinkWatch"]

#: Seconds a message may arrive later than the least delayed one before its own time is no longer trusted.
LATE = 5.0

#: The ``link_change.detail`` of the daemon's restart marker (``boardd.core.engine.downtime.RESTART_DETAIL``): the
#: board and clock out of sight while boardd restarted (docs/downtime.md).
RESTART_DETAIL = "daemon restarted"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkPolicy:
    """How long a link must be down, how many drops make it unstable, how long it must be calm again.

    The ``[web]`` keys ``link_grace``, ``link_unstable_drops``, ``link_window``, ``link_settle``.
    """

    grace: float = 3.0
    unstable: int = 3
    window: float = 60.0
    settle: float = 10.0

    def __post_init__(self) -> None:
        if not (self.grace >= 0 and self.window > 0 and self.settle >= 0 and self.unstable >= 2):
            raise ValueError("link debounce: grace, settle >= 0, window > 0 and unstable drops >= 2")


class LinkWatch:
    """One board's link through time: the raw changes in, the debounced incident out."""

    def __init__(self, policy: LinkPolicy) -> None:
        self.policy = policy
        self.down_since: float | None = None   # service time of the drop, while down
        self.up_since: float | None = None     # service time the link came back, while up
        self.drops: deque[float] = deque()     # service times of the drops within the window
        self.total_drops = 0
        self.active = False                    # an incident the arbiter sees
        self.since: float | None = None        # service time the incident started: its identity (``since``)
        self._offset: float | None = None      # service time - message time, least delayed message

    def when(self, now: float, at: float | None) -> float:
        """The service time of a change the message dates ``at`` (None: it happened when it arrived)."""
        if at is None:
            return now
        lag = now - at
        if self._offset is None or lag < self._offset:
            self._offset = lag
        if lag > self._offset + LATE:
            return now
        return min(now, at + self._offset)

    def observe(self, down: bool, now: float, at: float | None = None, *, drop: bool = True) -> None:
        """The link is ``down`` (offline or degraded) or not, as of a message dated ``at`` arriving at ``now``.

        ``drop`` false: a link going down that is no drop of its own (the daemon's restart marker): it is down
        (``grace`` runs), but it does not count towards ``unstable``."""
        t = self.when(now, at)
        if down and self.down_since is None:
            self.down_since, self.up_since = t, None
            if drop:
                self.drops.append(t)
                self.total_drops += 1
        elif not down and self.down_since is not None:
            # down for the grace period by the messages' own times (delivered late, together): an incident
            self._start(now, t - self.down_since >= self.policy.grace)
            self.down_since, self.up_since = None, t
        elif not down and self.up_since is None:
            self.up_since = t
        self.update(now)

    def update(self, now: float) -> None:
        """Advance the incident to ``now``: it starts after ``grace`` down or with an unstable link, and ends
        once the link has been calm for ``settle``."""
        policy = self.policy
        while self.drops and self.drops[0] < now - policy.window:
            self.drops.popleft()
        if not self.active:
            down_long = self.down_since is not None and now - self.down_since >= policy.grace
            self._start(now, down_long or len(self.drops) >= policy.unstable)
        elif self.down_since is None and len(self.drops) < policy.unstable and \
                (self.up_since is None or now - self.up_since >= policy.settle):
            self.active = False

    def _start(self, now: float, starts: bool) -> None:
        if starts and not self.active:
            self.active, self.since = True, now

    def alert(self, now: float) -> dict[str, Any] | None:
        """The incident for the tablet, or None: ``{"kind", "down", "drops", "text", "since"}``.

        ``kind`` is ``unstable`` (``unstable`` drops or more in the window), ``down`` (down for ``grace`` or
        more) or ``back`` (up again, watched for ``settle`` before the incident ends). ``since`` (the service's
        monotonic time it started, ms precision) tells one incident from the next: a tablet whose socket was
        down while an incident ended and another started sees a new ``since`` and rings for it.
        """
        if not self.active:
            return None
        drops = len(self.drops)
        down = self.down_since is not None
        minute = f"{self.policy.window:g} s" if self.policy.window != 60 else "minute"
        if drops >= self.policy.unstable:
            kind, text = "unstable", f"link unstable: {drops} drops in the last {minute}" + \
                ("; down now" if down else "; up now")
        elif down:
            kind, text = "down", f"link down for {self.policy.grace:g} s or more"
        else:
            kind, text = "back", f"link back up ({drops} drop{'' if drops == 1 else 's'} in the last {minute}); " \
                f"watched for {self.policy.settle:g} s"
        return {"kind": kind, "down": down, "drops": drops, "text": text,
                "since": None if self.since is None else round(self.since, 3)}

    def key(self, now: float) -> tuple[object, ...] | None:
        """What the tablet shows of the incident, without the running duration (a change sends a view)."""
        alert = self.alert(now)
        return None if alert is None else (alert["kind"], alert["down"], alert["drops"])

