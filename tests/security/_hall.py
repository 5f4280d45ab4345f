"""Helpers for the broker security tests: render our config/mosquitto files for a test run,
and a small synchronous MQTT client (paho) that reports what the broker answered."""

from __future__ import annotations

import os
import queue
import shutil
import ssl
import subprocess
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

CONFIG = Path(__file__).resolve().parents[2] / "config" / "mosquitto"
TIMEOUT = 5.0


def require_tools(*names: str) -> None:
    """Fail (not skip) when a tool the deployment relies on is missing: system-deps.sh installs them."""
    for name in names:
        if shutil.which(name) is None and not Path("/usr/sbin", name).exists():
            pytest.fail(f"{name} is not installed (scripts/system-deps.sh mosquitto installs mosquitto_passwd; "
                        "openssl comes with Debian)")


def adapt(text: str, replacements: dict[str, str]) -> str:
    """Replace each key by its value; every key must occur, so the test really runs our file."""
    for old, new in replacements.items():
        assert old in text, f"expected {old!r} in the shipped config"
        text = text.replace(old, new)
    return text


def make_accounts(out: Path, *boards: str) -> dict[str, str]:
    """Run make-accounts.sh; returns user -> clear-text password."""
    require_tools("mosquitto_passwd")
    subprocess.run([str(CONFIG / "make-accounts.sh"), str(out), *boards], check=True, capture_output=True)
    credentials = {}
    for line in (out / "credentials.txt").read_text().splitlines():
        user, _, password = line.partition(":")
        credentials[user] = password
    return credentials


def make_ca(out: Path, *clients: str) -> Path:
    """Run make-test-ca.sh for a server reachable as localhost/127.0.0.1."""
    require_tools("openssl")
    args = [str(CONFIG / "make-test-ca.sh"), str(out), "localhost", "IP:127.0.0.1"]
    for client in clients:
        args += ["-c", client]
    subprocess.run(args, check=True, capture_output=True)
    return out


def _privileges() -> str:
    """Run as root, mosquitto drops to user 'mosquitto', which cannot enter pytest's 0700 temp dirs.

    In production the files are root:mosquitto 0640 (README.md); here the broker keeps our uid.
    """
    return "user root\n" if os.geteuid() == 0 else ""


def hall_config(accounts: Path, ca: Path, plain_port: int, tls_port: int) -> str:
    """boardd-hall.conf with test paths and ports (loopback only)."""
    return _privileges() + adapt((CONFIG / "boardd-hall.conf").read_text(), {
        "/etc/mosquitto/boardd/": f"{accounts}/hall/",
        "/etc/mosquitto/certs/": f"{ca}/",
        "listener 1883 127.0.0.1\n": f"listener {plain_port} 127.0.0.1\n",
        "listener 8883\n": f"listener {tls_port} 127.0.0.1\n",
    })


def pi_config(accounts: Path, board: str, ca: Path, port: int, hall_tls_port: int) -> str:
    """The rendered boardd-pi.conf of ``board`` with test paths and ports; reconnect backoff shortened."""
    return _privileges() + adapt((accounts / "pi" / board / "boardd-pi.conf").read_text(), {
        "/etc/mosquitto/boardd/": f"{accounts}/pi/{board}/",
        "/etc/mosquitto/ca_certificates/": f"{ca}/",
        "listener 1883 127.0.0.1\n": f"listener {port} 127.0.0.1\n",
        "address hall.boardd.lan:8883\n": f"address 127.0.0.1:{hall_tls_port}\n",
        "restart_timeout 5 60\n": "restart_timeout 1 2\n",
    })


@dataclass(frozen=True, slots=True)
class Message:
    """A message as a subscriber received it."""

    topic: str
    payload: bytes
    retain: bool


class Client:
    """A paho client driven synchronously: every call waits for the broker's answer."""

    def __init__(self, port: int, username: str | None = None, password: str | None = None, *,
                 protocol: MQTTProtocolVersion = mqtt.MQTTv5, cafile: Path | None = None, client_id: str | None = None,
                 clean_start: bool = True) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"test-{uuid.uuid4().hex[:8]}",
                                  protocol=protocol)
        self.protocol = protocol
        self.clean_start = clean_start
        if username is not None:
            self.client.username_pw_set(username, password)
        if cafile is not None:
            self.client.tls_set(ca_certs=str(cafile), tls_version=ssl.PROTOCOL_TLS_CLIENT)
        self.port = port
        self.messages: queue.Queue[Message] = queue.Queue()
        self._connack: queue.Queue[ReasonCode] = queue.Queue()
        self._acks: dict[int, queue.Queue[list[ReasonCode] | ReasonCode]] = {}
        self._lock = threading.Lock()
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self.client.on_subscribe = self._on_subscribe

    # paho callbacks (network thread)
    def _on_connect(self, _c: object, _u: object, _f: object, reason: ReasonCode, _p: object) -> None:
        self._connack.put(reason)

    def _on_message(self, _c: object, _u: object, message: mqtt.MQTTMessage) -> None:
        self.messages.put(Message(message.topic, bytes(message.payload), bool(message.retain)))

    def _ack_queue(self, mid: int) -> queue.Queue[list[ReasonCode] | ReasonCode]:
        with self._lock:
            return self._acks.setdefault(mid, queue.Queue())

    def _on_publish(self, _c: object, _u: object, mid: int, reason: ReasonCode, _p: object) -> None:
        self._ack_queue(mid).put(reason)

    def _on_subscribe(self, _c: object, _u: object, mid: int, reasons: list[ReasonCode], _p: object) -> None:
        self._ack_queue(mid).put(reasons)

    def connect(self) -> ReasonCode:
        """Connect and return the CONNACK reason code (raises OSError/SSLError on transport failure)."""
        if self.protocol == mqtt.MQTTv5:
            properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            if not self.clean_start:
                properties.SessionExpiryInterval = 3600
            self.client.connect("127.0.0.1", self.port, keepalive=30, clean_start=self.clean_start,
                                properties=properties)
        else:
            self.client.connect("127.0.0.1", self.port, keepalive=30)
        self.client.loop_start()
        try:
            return self._connack.get(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError("no CONNACK") from None

    def subscribe(self, topic: str, qos: int = 1) -> list[ReasonCode]:
        result, mid = self.client.subscribe(topic, qos)
        assert result == mqtt.MQTT_ERR_SUCCESS
        assert mid is not None
        answer = self._ack_queue(mid).get(timeout=TIMEOUT)
        assert isinstance(answer, list)
        return answer

    def publish(self, topic: str, payload: bytes | str, qos: int = 1, retain: bool = False) -> ReasonCode:
        """Publish at QoS 1 and return the PUBACK reason code (MQTT v5 carries 'Not authorized')."""
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        answer = self._ack_queue(info.mid).get(timeout=TIMEOUT)
        assert isinstance(answer, ReasonCode)
        return answer

    def expect(self, topic: str, timeout: float = TIMEOUT) -> list[Message]:
        """Every message received until one on ``topic`` arrives (that one included)."""
        seen: list[Message] = []
        while True:
            try:
                message = self.messages.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"nothing on {topic}; got {seen}") from None
            seen.append(message)
            if message.topic == topic:
                return seen

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
