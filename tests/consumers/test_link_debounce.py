"""A flapping board link is one incident on the tablet; a sustained outage still alerts promptly (pure).

The board's daemon (engine and contract publisher, ``boardd.daemon.replay.Replay``) reports a loose USB
connector: ``LinkChanged`` down/up at seeded random intervals of a few hundred milliseconds, each one a
retained ``status`` (``degraded``/``online``) with its ``link_change.at_s``. The web service's hub gets them
with a small delivery delay, on a clock of its own (another origin than the Pi's), and its ``links_due``
runs every 0.25 s as in ``boardd web``. A model of the tablet page (:class:`tests.consumers.alerts.Tablet`)
counts how often the board *enters* the needs-you list for its link: once per incident, never per drop.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import pytest

from boardd.consumers.relay import MqttSettings
from boardd.consumers.web.app import web_config
from boardd.consumers.web.hub import Hub
from boardd.consumers.web.links import LinkPolicy, LinkWatch
from boardd.consumers.web.tablet import apply_delta
from boardd.core.errors import ConfigError
from boardd.core.events import Link, LinkChanged
from boardd.daemon.replay import Replay, ReplayOptions
from tests.consumers.alerts import Tablet

PREFIX = "hall1"
BOARD = "t1"
PI = 1_795_000_000.0   # the Pi's clock (epoch seconds) ...
WEB = 5_000.0          # ... and the web service's monotonic clock: other origins
TICK = 0.25            # boardd web calls links_due with the clock flush


@dataclass
class Rig:
    """A board's daemon, the hub, a tablet; the hub's clock runs on ``links_due`` ticks between messages."""

    rng: random.Random
    policy: LinkPolicy = field(default_factory=LinkPolicy)
    replay: Replay = field(init=False)
    hub: Hub = field(init=False)
    tablet: Tablet = field(default_factory=Tablet)
    now: float = WEB
    shown: list[tuple[float, bool]] = field(default_factory=list)   # (hub time, board needs the arbiter for its link)

    def __post_init__(self) -> None:
        self.replay = Replay(None, ReplayOptions(board=BOARD, prefix=PREFIX))
        self.hub = Hub(prefix=PREFIX, links=self.policy)
        self.tablet.snapshot([])

    def _send(self, messages: list[object]) -> None:
        for message in messages:
            audience, text = message.audience, message.text  # type: ignore[attr-defined]
            body = json.loads(text)
            if audience == "arbiter" and body.get("t") in ("board", "delta"):
                view = body["view"] if body["t"] == "board" else apply_delta(self.tablet.shown[body["board"]], body)
                self.tablet.view(view)
                self.shown.append((self.now, self.tablet.linked.get(BOARD, False)))

    def run_until(self, hub_time: float) -> None:
        """The web service's clock loop up to ``hub_time``."""
        while self.now + TICK <= hub_time:
            self.now += TICK
            self._send(self.hub.links_due(self.now))  # type: ignore[arg-type]
        self.now = max(self.now, hub_time)

    def deliver(self, publications: list[tuple[str, bytes]], hub_time: float) -> None:
        self.run_until(hub_time)
        for topic, payload in publications:
            self._send(self.hub.take(topic, payload, self.now))  # type: ignore[arg-type]

    def link(self, up: bool, pi_time: float, *, delay: float | None = None) -> None:
        """The daemon sees the board's USB link change at ``pi_time``; the hub gets it a little later."""
        event = LinkChanged(at=pi_time, link=Link.BOARD, up=up, detail="/dev/ttyACM0" if up else "USB read failed")
        publications = [(p.topic, p.payload_bytes()) for p in self.replay.feed(event)]
        lag = self.rng.uniform(0.005, 0.08) if delay is None else delay
        self.deliver(publications, pi_time - PI + WEB + lag)

    def alert(self) -> dict[str, object] | None:
        view = self.hub.arbiter_view(BOARD, self.now)
        assert view is not None
        return view["link_alert"]  # type: ignore[no-any-return]

    def flap(self, start: float, seconds: float, *, low: float = 0.05, high: float = 0.6) -> tuple[float, int]:
        """A loose connector: down and up at random intervals for ``seconds`` from ``start`` (Pi time)."""
        t, drops = start, 0
        while t < start + seconds:
            self.link(False, t)
            drops += 1
            t += self.rng.uniform(low, high)
            self.link(True, t)
            t += self.rng.uniform(low, high)
        return t, drops


@pytest.mark.parametrize("seed", range(6))
def test_a_flapping_link_is_one_incident_and_a_sustained_outage_alerts_promptly(seed: int) -> None:
    rig = Rig(random.Random(seed))
    rig.link(True, PI)  # the daemon starts: status online, state
    rig.run_until(WEB + 30)
    assert rig.tablet.link_alerts[BOARD] == 0
    # 1. The connector works loose: 20 to 40 s of drops every few hundred ms.
    start = PI + 30
    end, drops = rig.flap(start, rig.rng.uniform(20, 40))
    assert drops >= 20
    assert rig.tablet.link_alerts[BOARD] == 1, rig.tablet.history  # one incident, not one per drop
    entered = next(t for t, on in rig.shown if on)
    assert entered - (start - PI + WEB) < 2.5  # the third drop makes it unstable: within a couple of seconds
    alert = rig.alert()
    assert alert is not None and alert["kind"] == "unstable" and alert["drops"] >= 3
    assert f"{alert['drops']} drops in the last minute" in str(alert["text"])
    # It calms down: the incident ends once a minute has fewer than 3 drops and the link has been up 10 s.
    rig.run_until(end - PI + WEB + 61)
    assert rig.alert() is None and rig.tablet.linked[BOARD] is False
    changes = [on for n, (_, on) in enumerate(rig.shown) if n == 0 or on != rig.shown[n - 1][1]]
    assert changes == [False, True, False]  # entered once, left once: no flicker in between
    # 2. A single short drop (a daemon restart, a cable re-plugged at once): nothing for the arbiter.
    quiet = end + 70
    rig.link(False, quiet)
    rig.link(True, quiet + rig.rng.uniform(0.2, 2.5))
    rig.run_until(quiet - PI + WEB + 20)
    assert rig.tablet.link_alerts[BOARD] == 1
    # 3. The board really goes: the arbiter needs to know within the grace period (3 s) and a tick.
    gone = quiet + 30
    rig.link(False, gone)
    rig.run_until(gone - PI + WEB + 10)
    assert rig.tablet.link_alerts[BOARD] == 2
    entered = [t for n, (t, on) in enumerate(rig.shown) if on and not rig.shown[n - 1][1]][-1]
    assert 3.0 <= entered - (gone - PI + WEB) <= 3.0 + TICK + 0.1
    alert = rig.alert()
    assert alert is not None and alert["kind"] == "down" and alert["down"] is True
    view = rig.hub.arbiter_view(BOARD, rig.now)
    assert view is not None and view["link"] == "degraded" and view["link_why"]
    # Back: it stays (watched) for 10 s, then leaves; still the same incident.
    rig.link(True, gone + 60)
    alert = rig.alert()
    assert alert is not None and alert["kind"] == "back"
    rig.run_until(gone - PI + WEB + 60 + 11)
    assert rig.alert() is None and rig.tablet.link_alerts[BOARD] == 2
    assert sum(rig.tablet.banners.values()) == 0  # no incident of the game rang
    assert rig.tablet.link_rings[BOARD] == 2      # the link: once per incident, not per drop, not when it ended


def test_drops_delivered_in_a_bunch_count_as_the_drops_they_were() -> None:
    """The broker held the status messages back (a network hiccup): they arrive together, 8 s late. Their own
    times (``link_change.at_s``) say they were drops a few hundred ms apart: one unstable-link incident."""
    rig = Rig(random.Random(7))
    rig.link(True, PI)
    rig.run_until(WEB + 5)
    held: list[tuple[str, bytes]] = []
    t = PI + 10
    for _ in range(6):
        for up in (False, True):
            event = LinkChanged(at=t, link=Link.BOARD, up=up, detail="USB")
            held += [(p.topic, p.payload_bytes()) for p in rig.replay.feed(event)]
            t += rig.rng.uniform(0.1, 0.4)
    rig.deliver(held, t - PI + WEB + 8)
    alert = rig.alert()
    assert rig.tablet.link_alerts[BOARD] == 1
    assert alert is not None and alert["kind"] == "unstable" and alert["drops"] == 6


def test_a_flapping_bridge_is_one_incident_too() -> None:
    """The Pi's bridge notification (``$SYS/broker/connection/bridge-<board>/state``) has no time: the hub's."""
    rig = Rig(random.Random(3))
    rig.link(True, PI)
    bridge = f"$SYS/broker/connection/bridge-{BOARD}/state"
    t = WEB + 10
    for _ in range(15):
        rig.deliver([(bridge, b"0")], t)
        t += rig.rng.uniform(0.1, 0.5)
        rig.deliver([(bridge, b"1")], t)
        t += rig.rng.uniform(0.1, 0.5)
    assert rig.tablet.link_alerts[BOARD] == 1
    rig.deliver([(bridge, b"0")], t + 80)  # later, the Pi loses power for good
    rig.run_until(t + 80 + 3.3)
    assert rig.tablet.link_alerts[BOARD] == 2
    alert = rig.alert()
    assert alert is not None and alert["kind"] == "down"


def test_link_watch_uses_the_message_times_against_its_own_clock() -> None:
    watch = LinkWatch(LinkPolicy(grace=3.0, settle=10.0))
    watch.observe(True, now=100.0, at=9_000.0)             # down; anchors the board's clock: 9000 s there is 100 here
    watch.observe(False, now=110.2, at=9_010.0)            # up, 0.2 s late: dated 110.0
    assert watch.up_since == pytest.approx(110.0)
    # No tick ran in between (the messages came together): by their own times it was down 10 s, an incident.
    assert watch.alert(110.2) == {"kind": "back", "down": False, "drops": 1,
                                  "text": "link back up (1 drop in the last minute); watched for 10 s",
                                  "since": 110.2}
    watch.update(119.9)
    assert watch.active
    watch.update(120.0)
    assert watch.alert(120.0) is None                      # up for 10 s: it ends
    watch.observe(True, now=130.0, at=8_000.0)             # a retained status of long ago, or a clock step: now
    assert watch.down_since == pytest.approx(130.0)
    watch.update(132.9)
    assert watch.alert(132.9) is None
    watch.update(133.0)
    assert watch.alert(133.0) == {"kind": "down", "down": True, "drops": 2, "text": "link down for 3 s or more",
                                  "since": 133.0}                # a new incident: a new since


def test_the_debounce_is_configurable() -> None:
    config = web_config({"web": {"link_grace": 5, "link_unstable_drops": 4, "link_window": 30, "link_settle": 2}},
                        MqttSettings())
    assert config.links == LinkPolicy(grace=5.0, unstable=4, window=30.0, settle=2.0)
    assert web_config({}, MqttSettings()).links == LinkPolicy()
    with pytest.raises(ConfigError):
        web_config({"web": {"link_unstable_drops": 1}}, MqttSettings())


def test_the_broadcast_screen_shows_an_outage_not_a_loose_connector() -> None:
    """The broadcast screen's ``online``/``link`` (public view): a flapping link that keeps coming back shows
    online (its moves still arrive; "no signal" blinking on a hall screen tells spectators nothing); an
    outage ("connection trouble", "no signal") shows once it has lasted the grace period, sent by the clock
    loop (no message comes), and ends at once."""
    rig = Rig(random.Random(5))
    public: list[tuple[float, object, object]] = []   # (hub time, online, link) of every public view sent
    send = rig._send

    def spy(messages: list[object]) -> None:
        for message in messages:
            body = json.loads(message.text)  # type: ignore[attr-defined]
            if message.audience == "public" and body.get("t") == "board":  # type: ignore[attr-defined]
                public.append((rig.now, body["view"]["online"], body["view"]["link"]))
        send(messages)

    rig._send = spy  # type: ignore[method-assign]
    rig.link(True, PI)
    rig.run_until(WEB + 30)
    end, drops = rig.flap(PI + 30, 15, low=0.1, high=1.5)
    assert drops >= 8 and rig.tablet.link_alerts[BOARD] == 1  # the tablet: one incident
    assert public and {(online, link) for _, online, link in public} == {(True, "online")}, public
    rig.run_until(end - PI + WEB + 61)
    # the board really goes: "no signal" on the hall screen after the grace period, from the clock loop
    gone = end + 70
    rig.link(False, gone)
    assert public[-1][1:] == (True, "online")
    rig.run_until(gone - PI + WEB + 5)
    down = [t for t, _, link in public if link != "online"]  # degraded: "connection trouble" (offline: no signal)
    assert down and 3.0 <= down[0] - (gone - PI + WEB) <= 3.0 + TICK + 0.1
    assert public[-1][1:] == (True, "degraded")
    rig.link(True, gone + 20)
    assert public[-1][1:] == (True, "online")  # back: at once
    view = rig.hub.arbiter_view(BOARD, rig.now)
    assert view is not None and view["link"] == "online" and view["online"] is True


def test_a_daemon_restart_is_one_outage_not_two_drops() -> None:
    """boardd restarted by systemd (boardd.daemon.service): the retained ``offline`` status at the clean shutdown,
    ``online`` at the new start, then the restart's marker (``LinkChanged`` down, detail ``daemon restarted``:
    ``degraded``) until the driver's dump and first clock message. One outage of the daemon, not a loose connector:
    with one blip of the USB link 20 s later the board has had two drops, below ``link_unstable_drops``: no link
    incident, no ring. (Before: the marker counted as a drop of its own: three drops, "link unstable", a ring.)"""
    from boardd.core.contract import Publisher, iso_timestamp
    from boardd.core.engine.downtime import RESTART_DETAIL
    from boardd.core.events import ClockReading

    rig = Rig(random.Random(5))
    rig.link(True, PI)
    rig.run_until(WEB + 5)
    old = rig.replay.publisher
    board_link = {"driver": "dgt", "port": "/dev/ttyACM0", "serial": None, "connected": True}
    clock_link = {"model": "dgt3000", "connected": True}
    t = PI + 10
    stop = old.status(state="offline", board_link={**board_link, "connected": False},
                      clock_link={**clock_link, "connected": False}, at=t)
    rig.deliver([(stop.topic, stop.payload_bytes())], t - PI + WEB + 0.01)
    t += 1.5  # systemd starts it again
    rig.replay.publisher = Publisher(board=BOARD, prefix=PREFIX, session=old.session + 1, seq=old.seq,
                                     ts=iso_timestamp)
    start = rig.replay.publisher.status(state="online", board_link=board_link, clock_link=clock_link, at=t)
    rig.deliver([(start.topic, start.payload_bytes())], t - PI + WEB + 0.01)
    pubs = [(p.topic, p.payload_bytes()) for link in (Link.CLOCK, Link.BOARD)
            for p in rig.replay.feed(LinkChanged(at=t, link=link, up=False, detail=RESTART_DETAIL))]
    rig.deliver(pubs, t - PI + WEB + 0.02)
    rig.link(True, t + 0.3)  # the driver's board back (its dump follows)
    pubs = [(p.topic, p.payload_bytes()) for p in [
        *rig.replay.feed(LinkChanged(at=t + 0.8, link=Link.CLOCK, up=True, detail="dgt3000")),
        *rig.replay.feed(ClockReading(at=t + 0.8, left=300.0, right=300.0, lever_high=None, running=False))]]
    rig.deliver(pubs, t - PI + WEB + 0.81)
    rig.run_until(t - PI + WEB + 20)
    t += 20
    rig.link(False, t)
    rig.link(True, t + 0.4)
    rig.run_until(t - PI + WEB + 15)
    assert rig.tablet.link_alerts[BOARD] == 0 and rig.tablet.link_rings[BOARD] == 0, rig.shown
    assert rig.alert() is None
