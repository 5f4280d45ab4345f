"""The Pi-to-hall bridge of config/mosquitto, with two real Mosquitto instances over TLS.

Pi broker: the rendered boardd-pi.conf of board t1 (loopback listener, bridge to the hall).
Hall broker: boardd-hall.conf (TLS listener) with accounts for t1 and t2.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.mosquitto import Broker, free_port
from tests.security._hall import Client, hall_config, make_accounts, make_ca, pi_config

pytestmark = pytest.mark.broker

BRIDGE_STATE = "$SYS/broker/connection/bridge-t1/state"


@dataclass
class Site:
    hall: Broker
    pi: Broker
    credentials: dict[str, str]

    def hall_client(self, user: str, **kwargs: object) -> Client:
        client = Client(self.hall.port, user, self.credentials[user], **kwargs)  # type: ignore[arg-type]
        assert not client.connect().is_failure
        return client

    def pi_client(self, **kwargs: object) -> Client:
        """The board daemon's connection to its local broker."""
        client = Client(self.pi.port, "board-t1", self.credentials["board-t1"], **kwargs)  # type: ignore[arg-type]
        assert not client.connect().is_failure
        return client

    def wait_bridge_up(self) -> None:
        """The bridge's retained notification on the hall says 1 (connected)."""
        watcher = self.hall_client("display")
        try:
            watcher.subscribe(BRIDGE_STATE)
            while True:
                message = watcher.expect(BRIDGE_STATE, timeout=15)[-1]
                if message.payload == b"1":
                    return
        finally:
            watcher.close()


@dataclass(frozen=True)
class Material:
    accounts: Path
    credentials: dict[str, str]
    ca: Path


@pytest.fixture(scope="module")
def material(tmp_path_factory: pytest.TempPathFactory) -> Material:
    """Accounts for boards t1, t2 and a test CA, made once for the module."""
    base = tmp_path_factory.mktemp("bridge-material")
    credentials = make_accounts(base / "accounts", "t1", "t2")
    return Material(base / "accounts", credentials, make_ca(base / "ca"))


@pytest.fixture
def site(tmp_path: Path, material: Material) -> Iterator[Site]:
    """A fresh hall broker and Pi broker (t1), the bridge connected."""
    accounts, credentials, ca = material.accounts, material.credentials, material.ca
    hall_plain, hall_tls, pi_port = free_port(), free_port(), free_port()
    hall = Broker(port=hall_plain, directory=tmp_path / "hall", persistence=True,
                  extra_config=hall_config(accounts, ca, hall_plain, hall_tls))
    pi = Broker(port=pi_port, directory=tmp_path / "pi", persistence=True,
                extra_config=pi_config(accounts, "t1", ca, pi_port, hall_tls))
    for broker in (hall, pi):
        broker.directory.mkdir()
    hall.start()
    try:
        pi.start()
        try:
            site = Site(hall, pi, credentials)
            site.wait_bridge_up()
            yield site
        finally:
            pi.stop()
    finally:
        hall.stop()


def test_pi_move_arrives_at_the_hall_once(site: Site) -> None:
    display = site.hall_client("display")
    display.subscribe("boardd/#")
    daemon = site.pi_client()
    try:
        assert daemon.publish("boardd/t1/move", b'{"ply": 1, "uci": "e2e4"}').value == 0
        assert daemon.publish("boardd/t1/event", b"end").value == 0
        seen = display.expect("boardd/t1/event")
        assert [(m.topic, m.payload) for m in seen] == [
            ("boardd/t1/move", b'{"ply": 1, "uci": "e2e4"}'),
            ("boardd/t1/event", b"end"),
        ]
    finally:
        daemon.close()
        display.close()


def test_hall_command_arrives_at_the_pi_once_and_is_not_echoed(site: Site) -> None:
    daemon = site.pi_client()
    daemon.subscribe("boardd/t1/cmd/+")
    arbiter = site.hall_client("arbiter")
    arbiter.subscribe("boardd/#")
    try:
        # A command for another board must not reach this Pi (the hall ACL filters what the bridge reads).
        assert arbiter.publish("boardd/t2/cmd/ack", b'{"id": "other"}').value == 0
        assert arbiter.publish("boardd/t1/cmd/ack", b'{"id": "1-1"}').value == 0
        seen = daemon.expect("boardd/t1/cmd/ack")
        assert [(m.topic, m.payload) for m in seen] == [("boardd/t1/cmd/ack", b'{"id": "1-1"}')]
        # The daemon answers; the arbiter gets the answer, and each command exactly once (no bridge loop).
        assert daemon.publish("boardd/t1/cmd-result", b'{"id": "1-1", "ok": true}').value == 0
        seen = arbiter.expect("boardd/t1/cmd-result")
        assert [m.topic for m in seen] == ["boardd/t2/cmd/ack", "boardd/t1/cmd/ack", "boardd/t1/cmd-result"]
    finally:
        daemon.close()
        arbiter.close()
    # The 'out' topic boardd/# also matches the command the Pi received: had it been sent back, the
    # hall would have refused it (a board may not write cmd/) and logged the refusal.
    assert "Denied PUBLISH from bridge-t1" not in site.hall.log_path.read_text()


def test_bridge_state_is_visible_to_the_hall(site: Site) -> None:
    display = site.hall_client("display")
    try:
        display.subscribe(BRIDGE_STATE)
        message = display.expect(BRIDGE_STATE)[-1]
        assert (message.payload, message.retain) == (b"1", True)
        site.pi.stop()
        message = display.expect(BRIDGE_STATE)[-1]
        assert message.payload == b"0"
    finally:
        display.close()


def test_pi_power_cut_shows_as_bridge_state_0_at_the_hall(site: Site) -> None:
    """A Pi that dies abruptly takes its broker with it, so the daemon's last will fires nowhere
    the hall can see: the retained board status stays "online". The bridge's own will (the
    hall-side notification) is what tells the hall; docs/deployment.md says to watch both."""
    daemon = site.pi_client()
    assert daemon.publish("boardd/t1/status", b'{"state": "online"}', retain=True).value == 0
    daemon.close()
    display = site.hall_client("display")
    try:
        display.subscribe("boardd/t1/status")
        assert display.expect("boardd/t1/status")[-1].payload == b'{"state": "online"}'
        display.subscribe(BRIDGE_STATE)
        assert display.expect(BRIDGE_STATE)[-1].payload == b"1"
        assert site.pi.process is not None
        site.pi.process.kill()
        site.pi.process.wait(5)
        site.pi.process = None
        seen = display.expect(BRIDGE_STATE)
        assert seen[-1].payload == b"0"
        assert all(m.topic == BRIDGE_STATE for m in seen)
    finally:
        display.close()
    # A late joiner still reads the stale retained status.
    late = site.hall_client("display")
    try:
        late.subscribe("boardd/t1/status")
        assert late.expect("boardd/t1/status")[-1].payload == b'{"state": "online"}'
    finally:
        late.close()


def test_moves_published_while_the_hall_is_down_arrive_after_it_returns(site: Site) -> None:
    """Store-and-forward: the Pi broker queues QoS 1 messages for the bridge; the hall keeps the
    display's durable session across its own restart (persistence true in boardd-hall.conf)."""
    display = site.hall_client("display", client_id="screen-1", clean_start=False)
    display.subscribe("boardd/t1/move")
    display.close()
    site.hall.stop()
    daemon = site.pi_client()
    try:
        for ply in range(1, 6):
            assert daemon.publish("boardd/t1/move", f'{{"ply": {ply}}}').value == 0
    finally:
        daemon.close()
    site.hall.start()
    site.wait_bridge_up()
    display = site.hall_client("display", client_id="screen-1", clean_start=False)
    try:
        received = [display.expect("boardd/t1/move", timeout=15)[-1].payload for _ in range(5)]
    finally:
        display.close()
    assert received == [f'{{"ply": {ply}}}'.encode() for ply in range(1, 6)]


def test_pi_broker_refuses_anonymous_and_other_accounts(site: Site) -> None:
    anonymous = Client(site.pi.port)
    try:
        assert anonymous.connect().is_failure
    finally:
        anonymous.close()
    # The Pi only knows its own board's account.
    other = Client(site.pi.port, "board-t2", site.credentials["board-t2"])
    try:
        assert other.connect().is_failure
    finally:
        other.close()
