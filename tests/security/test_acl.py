"""Roles and ACLs of config/mosquitto, enforced by a real Mosquitto running our hall config.

MQTT 3.1.1 brokers drop a refused PUBLISH silently, so every refusal is checked twice: by the
PUBACK reason code Mosquitto gives MQTT v5 clients (135, Not authorized), and by a subscriber
with arbiter rights that must see nothing before a sentinel message published afterwards.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import MQTTProtocolVersion

from tests.mosquitto import Broker, free_port, mosquitto_binary
from tests.security._hall import CONFIG, Client, hall_config, make_accounts, make_ca, pi_config

pytestmark = pytest.mark.broker

CONTRACT = Path(__file__).resolve().parents[3] / "shared" / "docs" / "mqtt-contract.md"
NOT_AUTHORIZED = 135
#: The topics a board publishes, as the ACL must list them (checked against the contract below).
BOARD_TOPICS = ("status", "state", "move", "irregularity", "clock", "pgn", "event", "cmd-result")


@dataclass
class Hall:
    broker: Broker
    plain_port: int
    tls_port: int
    credentials: dict[str, str]
    ca: Path
    accounts: Path

    def client(self, user: str | None, *, password: str | None = None, **kwargs: object) -> Client:
        """A connected client on the loopback listener (asserts the CONNACK was a success)."""
        if user is not None and password is None:
            password = self.credentials[user]
        client = Client(self.plain_port, user, password, **kwargs)  # type: ignore[arg-type]
        reason = client.connect()
        assert not reason.is_failure, f"{user} could not connect: {reason}"
        return client


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hall]:
    """The hall broker with our config, accounts for boards t1 and t2, and a test CA."""
    base = tmp_path_factory.mktemp("hall")
    accounts = base / "accounts"
    credentials = make_accounts(accounts, "t1", "t2")
    ca = make_ca(base / "ca")
    plain_port, tls_port = free_port(), free_port()
    broker = Broker(port=plain_port, directory=base / "broker", persistence=True,
                    extra_config=hall_config(accounts, ca, plain_port, tls_port))
    broker.directory.mkdir()
    broker.start()
    try:
        yield Hall(broker, plain_port, tls_port, credentials, ca, accounts)
    finally:
        broker.stop()


@pytest.fixture
def watcher(hall: Hall) -> Iterator[Client]:
    """An arbiter subscribed to everything: what it does not see did not get through."""
    client = hall.client("arbiter")
    client.subscribe("boardd/#")
    try:
        yield client
    finally:
        client.close()


def assert_nothing_before_sentinel(hall: Hall, watcher: Client, board: str = "t1") -> None:
    """A board publishes a sentinel after the refused publish: the watcher must see only that."""
    sentinel_board = hall.client(f"board-{board}")
    try:
        assert sentinel_board.publish(f"boardd/{board}/event", b"sentinel").value == 0
    finally:
        sentinel_board.close()
    seen = watcher.expect(f"boardd/{board}/event")
    assert [(m.topic, m.payload) for m in seen] == [(f"boardd/{board}/event", b"sentinel")]


def assert_publish_refused(hall: Hall, watcher: Client, user: str, topics: Iterable[str], *,
                           payload: bytes = b'{"forged": true}', sentinel_board: str = "t1") -> None:
    """*user*'s publish to each of *topics* is refused (NOT_AUTHORIZED) and reaches no subscriber."""
    client = hall.client(user)
    try:
        for topic in topics:
            assert client.publish(topic, payload).value == NOT_AUTHORIZED, topic
    finally:
        client.close()
    assert_nothing_before_sentinel(hall, watcher, board=sentinel_board)


# --- Authentication --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", [mqtt.MQTTv5, mqtt.MQTTv311])
def test_anonymous_client_is_refused(hall: Hall, protocol: MQTTProtocolVersion) -> None:
    client = Client(hall.plain_port, protocol=protocol)
    reason = client.connect()
    client.close()
    assert reason.is_failure
    # v5: 135 Not authorized; v3.1.1: return code 5, which paho maps to the same reason.
    assert reason.value == NOT_AUTHORIZED


def test_wrong_password_is_refused(hall: Hall) -> None:
    client = Client(hall.plain_port, "arbiter", "not-the-password")
    reason = client.connect()
    client.close()
    assert reason.is_failure


def test_unknown_user_is_refused(hall: Hall) -> None:
    client = Client(hall.plain_port, "board-t99", "whatever")
    reason = client.connect()
    client.close()
    assert reason.is_failure


# --- Display / relay: read-only -------------------------------------------------------------------------------


@pytest.mark.parametrize("user", ["display", "relay"])
@pytest.mark.parametrize(
    "topic",
    ["boardd/t1/cmd/ack", "boardd/t1/cmd/new-game", "boardd/t1/state", "boardd/t1/move", "boardd/t1/status",
     "boardd/display/state", "other/topic"],
)
def test_read_only_roles_cannot_publish(hall: Hall, watcher: Client, user: str, topic: str) -> None:
    assert_publish_refused(hall, watcher, user, [topic])


def test_display_cannot_write_under_its_own_name(hall: Hall, watcher: Client) -> None:
    """A %u pattern ACL would let 'display' write boardd/display/...: ours has none."""
    assert_publish_refused(hall, watcher, "display", [f"boardd/display/{kind}" for kind in BOARD_TOPICS], payload=b"x")


def test_v311_refusal_is_silent_but_effective(hall: Hall, watcher: Client) -> None:
    """MQTT 3.1.1 has no reason code in PUBACK: the broker acknowledges and drops."""
    client = hall.client("display", protocol=mqtt.MQTTv311)
    try:
        assert client.publish("boardd/t1/cmd/set-result", b'{"result": "1-0"}').value == 0
    finally:
        client.close()
    assert_nothing_before_sentinel(hall, watcher)


@pytest.mark.parametrize("user", ["display", "relay"])
def test_read_only_roles_do_not_see_commands(hall: Hall, user: str) -> None:
    """Commands may carry the arbiter's token ([commands.tokens]): hall screens must not read them."""
    reader = hall.client(user)
    reader.subscribe("boardd/#")
    arbiter = hall.client("arbiter")
    board = hall.client("board-t1")
    try:
        assert arbiter.publish("boardd/t1/cmd/ack", b'{"id": "1-1", "token": "s3cret"}').value == 0
        assert board.publish("boardd/t1/cmd-result", b'{"id": "1-1", "ok": true}').value == 0
        seen = reader.expect("boardd/t1/cmd-result")
        assert [m.topic for m in seen] == ["boardd/t1/cmd-result"]
    finally:
        for client in (reader, arbiter, board):
            client.close()


def test_display_reads_every_board(hall: Hall) -> None:
    display = hall.client("display")
    display.subscribe("boardd/#")
    try:
        for board in ("t1", "t2"):
            publisher = hall.client(f"board-{board}")
            assert publisher.publish(f"boardd/{board}/move", b'{"ply": 1}').value == 0
            publisher.close()
            assert display.expect(f"boardd/{board}/move")[-1].payload == b'{"ply": 1}'
    finally:
        display.close()


# --- Board daemons --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", BOARD_TOPICS)
def test_board_publishes_its_own_topics(hall: Hall, watcher: Client, kind: str) -> None:
    board = hall.client("board-t1")
    try:
        assert board.publish(f"boardd/t1/{kind}", b"{}").value == 0
    finally:
        board.close()
    assert watcher.expect(f"boardd/t1/{kind}")[-1].payload == b"{}"


@pytest.mark.parametrize(
    "topic",
    [
        "boardd/t2/move",  # another board's root
        "boardd/t2/state",
        "boardd/t2/cmd-result",
        "boardd/t1/cmd/ack",  # its own commands
        "boardd/t1/cmd/set-result",
        "boardd/t1/cmd",
        "boardd/t1/state/extra",  # not a contract topic
        "boardd/t1/whatever",
        "boardd/t1",
        "$SYS/broker/connection/bridge-t2/state",  # another Pi's bridge state
    ],
)
def test_board_cannot_publish_outside_its_topics(hall: Hall, watcher: Client, topic: str) -> None:
    assert_publish_refused(hall, watcher, "board-t1", [topic], sentinel_board="t2")


def test_board_reads_its_own_commands_only(hall: Hall) -> None:
    board = hall.client("board-t1")
    board.subscribe("boardd/#")
    arbiter = hall.client("arbiter")
    other = hall.client("board-t2")
    try:
        assert arbiter.publish("boardd/t2/cmd/ack", b'{"id": "x"}').value == 0
        assert other.publish("boardd/t2/state", b"{}").value == 0
        assert arbiter.publish("boardd/t1/cmd/ack", b'{"id": "1-1"}').value == 0
        seen = board.expect("boardd/t1/cmd/ack")
        assert [(m.topic, m.payload) for m in seen] == [("boardd/t1/cmd/ack", b'{"id": "1-1"}')]
    finally:
        for client in (board, arbiter, other):
            client.close()


def test_board_cannot_read_its_own_published_topics(hall: Hall) -> None:
    """Read rights are only for cmd/: a board gets no copy of its own (or anyone's) state."""
    board = hall.client("board-t1")
    board.subscribe("boardd/t1/#")
    try:
        assert board.publish("boardd/t1/state", b"{}").value == 0
        arbiter = hall.client("arbiter")
        assert arbiter.publish("boardd/t1/cmd/flip", b"{}").value == 0
        arbiter.close()
        assert [m.topic for m in board.expect("boardd/t1/cmd/flip")] == ["boardd/t1/cmd/flip"]
    finally:
        board.close()


# --- Arbiter ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["new-game", "set-players", "ack", "resolve", "reinstate", "set-clock",
                                     "set-result", "flip"])
def test_arbiter_sends_commands_to_any_board(hall: Hall, command: str) -> None:
    boards = {name: hall.client(f"board-{name}") for name in ("t1", "t2")}
    for board in boards.values():
        board.subscribe("boardd/+/cmd/#")
    arbiter = hall.client("arbiter")
    try:
        for name, board in boards.items():
            assert arbiter.publish(f"boardd/{name}/cmd/{command}", b'{"id": "c1"}').value == 0
            assert board.expect(f"boardd/{name}/cmd/{command}")[-1].payload == b'{"id": "c1"}'
    finally:
        for client in (*boards.values(), arbiter):
            client.close()


@pytest.mark.parametrize("topic", ["boardd/t1/state", "boardd/t1/move", "boardd/t1/cmd-result", "boardd/t1/status"])
def test_arbiter_cannot_forge_board_topics(hall: Hall, watcher: Client, topic: str) -> None:
    assert_publish_refused(hall, watcher, "arbiter", [topic])


def test_arbiter_reads_command_results(hall: Hall, watcher: Client) -> None:
    board = hall.client("board-t1")
    try:
        assert board.publish("boardd/t1/cmd-result", b'{"v": 1, "id": "c1", "ok": true}').value == 0
    finally:
        board.close()
    assert watcher.expect("boardd/t1/cmd-result")[-1].payload == b'{"v": 1, "id": "c1", "ok": true}'


# --- TLS listener ----------------------------------------------------------------------------------------------


def _connect_packet(client_id: bytes = b"plain") -> bytes:
    """A minimal MQTT 3.1.1 CONNECT (no credentials)."""
    variable = b"\x00\x04MQTT\x04\x02\x00\x3c" + len(client_id).to_bytes(2, "big") + client_id
    return bytes([0x10, len(variable)]) + variable


def _raw_exchange(port: int, packet: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(packet)
        received = b""
        try:
            while chunk := sock.recv(1024):
                received += chunk
                if received[:1] == b"\x20" and len(received) >= 4:
                    break
        except ConnectionResetError:
            pass
        return received


def test_plain_mqtt_on_the_tls_port_is_refused(hall: Hall) -> None:
    # The same bytes get a CONNACK (refused: anonymous) on the loopback listener...
    assert _raw_exchange(hall.plain_port, _connect_packet()) == b"\x20\x02\x00\x05"
    # ...but on the TLS listener they are not MQTT at all: the broker closes without a CONNACK.
    answer = _raw_exchange(hall.tls_port, _connect_packet())
    assert not answer.startswith(b"\x20")


def test_tls_client_with_the_test_ca_is_accepted(hall: Hall, watcher: Client) -> None:
    client = Client(hall.tls_port, "board-t1", hall.credentials["board-t1"], cafile=hall.ca / "boardd-ca.crt")
    try:
        assert not client.connect().is_failure
        assert client.publish("boardd/t1/status", b'{"state": "online"}').value == 0
        # The ACL applies on the TLS listener too.
        assert client.publish("boardd/t2/status", b'{"state": "online"}').value == NOT_AUTHORIZED
    finally:
        client.close()
    assert watcher.expect("boardd/t1/status")[-1].payload == b'{"state": "online"}'


def test_tls_requires_credentials_too(hall: Hall) -> None:
    client = Client(hall.tls_port, cafile=hall.ca / "boardd-ca.crt")
    try:
        assert client.connect().value == NOT_AUTHORIZED
    finally:
        client.close()


def test_tls_client_with_another_ca_rejects_the_server(hall: Hall, tmp_path: Path) -> None:
    other_ca = make_ca(tmp_path / "other-ca")
    client = Client(hall.tls_port, "arbiter", hall.credentials["arbiter"], cafile=other_ca / "boardd-ca.crt")
    with pytest.raises(OSError, match="CERTIFICATE_VERIFY_FAILED"):
        client.connect()
    client.close()


def test_plain_listener_is_loopback_only() -> None:
    text = (CONFIG / "boardd-hall.conf").read_text()
    listeners = re.findall(r"^listener .*$", text, flags=re.MULTILINE)
    assert listeners == ["listener 1883 127.0.0.1", "listener 8883"]
    tls_section = text.split("listener 8883", 1)[1]
    assert re.search(r"^certfile ", tls_section, flags=re.MULTILINE)
    assert re.search(r"^keyfile ", tls_section, flags=re.MULTILINE)


# --- Shipped files ---------------------------------------------------------------------------------------------


DEBIAN_MAIN_CONF = """\
pid_file {d}/mosquitto.pid
persistence true
persistence_location {d}/
log_dest file {d}/mosquitto.log
include_dir {d}/conf.d
"""


@pytest.mark.parametrize("snippet", ["hall", "pi"])
def test_snippets_load_as_conf_d_under_debians_main_config(tmp_path: Path, snippet: str) -> None:
    """Debian's mosquitto.conf sets persistence_location and logging, then includes conf.d/*.conf:
    our snippets must not repeat what it sets (a second persistence_location is fatal)."""
    accounts = tmp_path / "accounts"
    make_accounts(accounts, "t1")
    ca = make_ca(tmp_path / "ca")
    (tmp_path / "conf.d").mkdir()
    port, other = free_port(), free_port()
    text = hall_config(accounts, ca, port, other) if snippet == "hall" else pi_config(accounts, "t1", ca, port, other)
    (tmp_path / "conf.d" / f"boardd-{snippet}.conf").write_text(text)
    (tmp_path / "mosquitto.conf").write_text(DEBIAN_MAIN_CONF.format(d=tmp_path))
    broker = subprocess.Popen([mosquitto_binary(), "-c", str(tmp_path / "mosquitto.conf")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        client = Client(port)
        deadline = 50
        while True:
            try:
                reason = client.connect()
                break
            except ConnectionRefusedError:
                assert broker.poll() is None, broker.stderr.read() if broker.stderr else ""
                deadline -= 1
                assert deadline, "the broker did not start listening"
                time.sleep(0.1)
        client.close()
        # It runs our security settings: anonymous clients are refused.
        assert reason.value == NOT_AUTHORIZED
    finally:
        broker.terminate()
        broker.wait(5)
    log = (tmp_path / "mosquitto.log").read_text()
    assert "Config loaded from" in log
    # The Pi's bridge has no hall to reach here; any other error would be about our config.
    errors = [line for line in log.splitlines() if "rror" in line and "Error creating bridge" not in line]
    assert errors == [], log


def test_acl_lists_exactly_the_contract_topics() -> None:
    """The board topics in the ACL are the contract's {root}/... topics (except cmd/, which it reads)."""
    if not CONTRACT.is_file():
        pytest.fail(f"MQTT contract not found at {CONTRACT}")
    contract = set(re.findall(r"^\| `\{root\}/([a-z-]+)`", CONTRACT.read_text(), flags=re.MULTILINE))
    assert contract == set(BOARD_TOPICS)
    acl = (CONFIG / "acl.example").read_text()
    written = set(re.findall(r"^topic write boardd/t1/(\S+)$", acl, flags=re.MULTILINE))
    assert written == set(BOARD_TOPICS)
    assert re.findall(r"^topic read boardd/t1/(\S+)$", acl, flags=re.MULTILINE) == ["cmd/#"]
    assert re.findall(r"^topic deny (\S+)$", acl, flags=re.MULTILINE) == ["boardd/+/cmd/#"] * 2


def test_acl_topics_match_the_publisher() -> None:
    """What boardd.core.contract publishes is what the ACL lets a board write: nothing silently dropped."""
    from boardd.core.contract import TOPICS

    assert set(TOPICS) == set(BOARD_TOPICS)


def test_acl_example_is_what_the_script_generates(tmp_path: Path) -> None:
    make_accounts(tmp_path, "t1", "t2", "t3", "t4")
    assert (tmp_path / "hall" / "acl").read_text() == (CONFIG / "acl.example").read_text()


def test_acl_has_no_pattern_and_comments_only_at_line_start() -> None:
    for line in (CONFIG / "acl.example").read_text().splitlines():
        assert not line.startswith("pattern")
        if "#" in line and not line.startswith("#"):
            # '#' inside a line is only ever the MQTT wildcard at the end of a topic filter.
            assert re.fullmatch(r"topic (read|write|readwrite|deny) \S*#", line), line


def test_passwd_example_hashes_with_mosquitto_passwd(tmp_path: Path) -> None:
    """passwd.example is the clear-text template documented in the README: -U must hash it in place."""
    work = tmp_path / "passwd"
    work.write_text((CONFIG / "passwd.example").read_text())
    subprocess.run(["mosquitto_passwd", "-U", str(work)], check=True, capture_output=True)
    lines = work.read_text().splitlines()
    users = [line.split(":", 1)[0] for line in lines]
    assert users == ["arbiter", "display", "relay", "board-t1", "board-t2"]
    assert all(line.split(":", 1)[1].startswith("$7$") for line in lines)


def test_rendered_pi_config_has_no_placeholder_left(tmp_path: Path) -> None:
    credentials = make_accounts(tmp_path, "t7")
    text = (tmp_path / "pi" / "t7" / "boardd-pi.conf").read_text()
    assert not re.search(r"@[A-Z]+@", text)
    assert "remote_username board-t7\n" in text
    assert f"remote_password {credentials['board-t7']}\n" in text
    assert "topic boardd/# out 1\n" in text
    # Each Pi knows its own board's account only.
    assert [line.split(":")[0] for line in (tmp_path / "pi" / "t7" / "passwd").read_text().splitlines()] == [
        "board-t7"]


def test_make_accounts_keeps_existing_passwords(tmp_path: Path) -> None:
    first = make_accounts(tmp_path, "t1")
    second = make_accounts(tmp_path, "t1", "t2")
    assert second["board-t1"] == first["board-t1"]
    assert second["arbiter"] == first["arbiter"]
    assert "board-t2" in second
    assert (tmp_path / "credentials.txt").stat().st_mode & 0o777 == 0o600


def test_make_accounts_rejects_bad_board_ids(tmp_path: Path) -> None:
    for bad in ("t/1", "t#", "t+", "hall 1"):
        result = subprocess.run([str(CONFIG / "make-accounts.sh"), str(tmp_path), bad], check=False,
                                capture_output=True, text=True)
        assert result.returncode == 2
        assert "invalid board id" in result.stderr
