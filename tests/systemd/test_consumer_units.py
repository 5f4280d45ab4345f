"""boardd-relay.service and boardd-web.service: settings, systemd's own checks, their example configs,
and the sd_notify contract their ``Type=notify`` relies on (the real CLI in a subprocess)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import aiomqtt
import pytest

from boardd.consumers.relay import load_config, relay_config
from boardd.consumers.web.app import web_config
from boardd.consumers.web.auth import hash_password, verify_password
from boardd.consumers.web.links import LinkPolicy
from boardd.core.contract import Publisher
from tests.mosquitto import Broker
from tests.record.factories import make_state
from tests.systemd._units import SYSTEMD, copy_units, one, parse_unit, systemd_analyze, words

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
#: unit -> (sub-command, example config)
CONSUMERS = {"boardd-relay.service": ("relay", "relay.toml"), "boardd-web.service": ("web", "web.toml")}


@pytest.mark.parametrize("name", CONSUMERS)
def test_consumer_unit_required_settings(name: str) -> None:
    unit = parse_unit(SYSTEMD / name)
    command, config = CONSUMERS[name]
    assert set(unit) == {"Unit", "Service", "Install"}
    # Type=notify holds because boardd.consumers.relay.run_service sends READY=1 (test below).
    assert one(unit, "Service", "Type") == "notify"
    assert one(unit, "Service", "NotifyAccess") == "main"
    assert "WatchdogSec" not in unit["Service"]  # no progress signal to feed it (see the unit's comment)
    assert one(unit, "Service", "ExecStart") == f"/usr/bin/env boardd {command} --config /etc/boardd/{config}"
    assert one(unit, "Service", "Restart") in {"on-failure", "always"}
    assert float(one(unit, "Service", "RestartSec")) > 0
    assert float(one(unit, "Service", "TimeoutStopSec")) > 0
    assert one(unit, "Unit", "StartLimitIntervalSec") == "0"
    assert one(unit, "Service", "User") == "boardd"
    assert one(unit, "Service", "ConfigurationDirectory") == "boardd"
    for key, value in {"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "NoNewPrivileges": "yes",
                       "PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictNamespaces": "yes",
                       "SystemCallArchitectures": "native", "LockPersonality": "yes"}.items():
        assert one(unit, "Service", key) == value, key
    # Consumers touch no board or clock: no device nodes, no dialout, no Bluetooth or netlink.
    assert "DeviceAllow" not in unit["Service"] and "SupplementaryGroups" not in unit["Service"]
    assert set(words(unit, "Service", "RestrictAddressFamilies")) == {"AF_UNIX", "AF_INET", "AF_INET6"}
    assert "@system-service" in words(unit, "Service", "SystemCallFilter")
    assert {"network-online.target", "mosquitto.service"} <= set(words(unit, "Unit", "After"))
    assert "network-online.target" in words(unit, "Unit", "Wants")
    # The broker is wanted, never required: both services reconnect by themselves.
    assert "Requires" not in unit["Unit"] and "BindsTo" not in unit["Unit"]
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


def test_relay_writes_where_its_unit_lets_it() -> None:
    unit = parse_unit(SYSTEMD / "boardd-relay.service")
    state_dir = Path("/var/lib") / one(unit, "Service", "StateDirectory")
    doc, mqtt = load_config(CONFIG / "relay.toml")
    config = relay_config(doc, mqtt, path="config/relay.toml")
    assert config.out_dir is not None and state_dir in config.out_dir.parents
    # The web writes nothing: no state directory, no writable paths.
    web = parse_unit(SYSTEMD / "boardd-web.service")
    assert "StateDirectory" not in web["Service"] and "ReadWritePaths" not in web["Service"]


def test_example_configs_load_through_the_services_loaders() -> None:
    doc, mqtt = load_config(CONFIG / "relay.toml")
    relay = relay_config(doc, mqtt, path="config/relay.toml")
    assert (mqtt.host, mqtt.port, mqtt.prefix, mqtt.username) == ("127.0.0.1", 1883, "boardd", "relay")
    assert relay.http_port == 8081 and relay.default_round == 1 and relay.debounce == 0.5
    assert relay.tags == {"Site": "Wijk aan Zee NED"}
    assert relay.slots == {} and relay.lichess_round_id is None  # the commented examples stay commented

    doc, mqtt = load_config(CONFIG / "web.toml")
    web = web_config(doc, mqtt, path="config/web.toml")
    assert (mqtt.username, mqtt.prefix) == ("web", "boardd")
    assert (web.host, web.port, web.idle_timeout, web.cookie_secure, web.sound) == ("127.0.0.1", 8080, 14400.0,
                                                                                     False, True)
    assert web.users == {}  # no account ships with the example
    assert web.links == LinkPolicy(grace=3.0, unstable=3, window=60.0, settle=10.0)  # the tablet's link debounce


def uncomment(text: str) -> str:
    """The example with its commented tables and ``key = value`` lines switched on."""
    return re.sub(r"^# (\[\[?[a-z.]+\]\]?|[a-z_]+ = .*)$", r"\1", text, flags=re.MULTILINE)


def test_commented_examples_are_valid_when_switched_on(tmp_path: Path) -> None:
    """What the examples show behind '#' is the loaders' format, not prose."""
    token = tmp_path / "lichess.token"
    token.write_text("lip_secret\n")
    relay_text = uncomment((CONFIG / "relay.toml").read_text()).replace("/etc/boardd/lichess.token", str(token))
    (tmp_path / "relay.toml").write_text(relay_text)
    doc, mqtt = load_config(tmp_path / "relay.toml")
    relay = relay_config(doc, mqtt)
    assert set(relay.slots) == {"t1", "t2"} and relay.slots["t1"].tags == {"WhiteFideId": "1503014",
                                                                            "BlackFideId": "4100018"}
    assert relay.lichess_round_id == "AbCd1234" and relay.lichess_token == "lip_secret"
    assert relay.lichess_rounds == {2: "EfGh5678", 3: "IjKl9012"} and relay.lichess_round == 1

    encoded = hash_password("correct horse battery", n=2**12)
    web_text = (CONFIG / "web.toml").read_text().replace('# arbiter = "scrypt$16384$8$1$<salt>$<hash>"',
                                                         f'arbiter = "{encoded}"')
    arbiter_token = tmp_path / "arbiter.token"
    arbiter_token.write_text("t0ken\n")
    web_text = web_text.replace('# command_token_file = "/etc/boardd/arbiter.token"',
                                f'command_token_file = "{arbiter_token}"')
    (tmp_path / "web.toml").write_text(web_text)
    doc, mqtt = load_config(tmp_path / "web.toml")
    web = web_config(doc, mqtt)
    assert web.command_token == "t0ken" and verify_password("correct horse battery", web.users["arbiter"])


def test_systemd_analyze_verify_consumer_units(tmp_path: Path) -> None:
    copy_units(CONSUMERS, tmp_path)
    result = systemd_analyze(tmp_path, "verify", "--man=no", *(f"./{name}" for name in CONSUMERS))
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr


def test_systemd_analyze_verify_catches_a_typo(tmp_path: Path) -> None:
    text = (SYSTEMD / "boardd-web.service").read_text().replace("PrivateDevices=", "PrivateDevice=")
    (tmp_path / "boardd-web.service").write_text(text)
    result = systemd_analyze(tmp_path, "verify", "--man=no", "./boardd-web.service")
    assert "Unknown key 'PrivateDevice'" in result.stderr


@pytest.mark.parametrize("name", CONSUMERS)
def test_consumer_hardening_exposure(name: str, tmp_path: Path) -> None:
    """systemd's exposure score stays at or below 2.0; measured 1.4 for both when written."""
    copy_units([name], tmp_path)
    result = systemd_analyze(tmp_path, "security", "--offline=yes", "--threshold=20", f"./{name}")
    assert result.returncode == 0, result.stdout[-500:] + result.stderr


# --- sd_notify from the real CLI --------------------------------------------------------------------


@contextlib.asynccontextmanager
async def notify_socket(tmp_path: Path) -> AsyncIterator[tuple[str, socket.socket]]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    try:
        yield str(path), sock
    finally:
        sock.close()


async def datagram(sock: socket.socket) -> str:
    loop = asyncio.get_running_loop()
    return (await asyncio.wait_for(loop.sock_recv(sock, 4096), 20)).decode()


@contextlib.asynccontextmanager
async def service(args: list[str], notify: str) -> AsyncIterator[asyncio.subprocess.Process]:
    env = {**os.environ, "NOTIFY_SOCKET": notify, "PYTHONFAULTHANDLER": "1"}
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "boardd", *args, env=env,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def stop(process: asyncio.subprocess.Process) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    done, _ = await asyncio.wait({communicating := asyncio.ensure_future(process.communicate())}, timeout=20)
    if not done:  # what systemd's TimeoutStopSec would end with a SIGKILL: show where it hangs
        process.send_signal(signal.SIGABRT)
        output, _ = await communicating
        raise AssertionError("no exit 20 s after SIGTERM:\n" + output.decode(errors="replace")[-8000:])
    output, _ = communicating.result()
    assert process.returncode is not None
    return process.returncode, output.decode(errors="replace")


def http_port(status: str) -> int:
    match = re.search(r"127\.0\.0\.1:(\d+)", status)
    assert match, status
    return int(match[1])


@pytest.mark.broker
async def test_relay_notifies_ready_and_stopping_and_flushes_its_folder(mosquitto: Broker, tmp_path: Path) -> None:
    out = tmp_path / "live"
    config = tmp_path / "relay.toml"
    # A long debounce: the folder is written only when the relay stops (or 30 s later).
    config.write_text((CONFIG / "relay.toml").read_text().replace("debounce = 0.5", "debounce = 30")
                      .replace('username = "relay"', "").replace('password = "change-me"', ""))
    args = ["relay", "-c", str(config), "--port", str(mosquitto.port), "--http-port", "0", "--out-dir", str(out)]
    async with notify_socket(tmp_path) as (path, sock), service(args, path) as process:
        ready = await datagram(sock)
        assert ready.startswith("READY=1\nSTATUS=relay: PGN on 127.0.0.1:"), ready
        assert f"folder {out}" in ready
        publisher = Publisher(board="t12", session=1)
        state, pgn = publisher.snapshot(make_state(round_="3", board_no=12), at=1_795_285_982.0)
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            for p in (state, pgn):
                await client.publish(p.topic, p.payload_bytes(), qos=1, retain=True)
        url = f"http://127.0.0.1:{http_port(ready)}/round-3/games.pgn"
        async with aiohttp.ClientSession() as session:
            for _ in range(200):
                async with session.get(url) as response:
                    if response.status == 200:
                        break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the relay never served the game")
        assert not (out / "round-3" / "games.pgn").exists()  # still inside the debounce
        code, output = await stop(process)
        assert await datagram(sock) == "STOPPING=1"
    assert code == 0, output
    assert "Traceback" not in output and " ERROR " not in output and "destroyed" not in output, output
    assert '[White "Carlsen, Magnus"]' in (out / "round-3" / "games.pgn").read_text()


@pytest.mark.broker
async def test_web_notifies_ready_and_stopping(mosquitto: Broker, tmp_path: Path) -> None:
    config = tmp_path / "web.toml"
    config.write_text((CONFIG / "web.toml").read_text().replace('username = "web"', "")
                      .replace('password = "change-me"', ""))
    args = ["web", "-c", str(config), "--port", str(mosquitto.port), "--http-port", "0"]
    async with notify_socket(tmp_path) as (path, sock), service(args, path) as process:
        ready = await datagram(sock)
        assert ready.startswith("READY=1\nSTATUS=web on http://127.0.0.1:"), ready
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{http_port(ready)}/") as page:
            assert page.status == 200  # READY means the pages are served
        code, output = await stop(process)
        assert await datagram(sock) == "STOPPING=1"
    assert code == 0, output
    assert "Traceback" not in output and " ERROR " not in output and "destroyed" not in output, output


@pytest.mark.broker
async def test_a_service_that_cannot_start_never_says_ready(tmp_path: Path) -> None:
    """Port taken: no READY=1, a failed exit (systemd restarts it), and STOPPING=1 on the way out."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["web", "--port", "1", "--http-port", str(port)]
        async with notify_socket(tmp_path) as (path, sock), service(args, path) as process:
            output, _ = await asyncio.wait_for(process.communicate(), 20)
            assert process.returncode != 0
            assert "address already in use" in output.decode().lower()
            assert await datagram(sock) == "STOPPING=1"
