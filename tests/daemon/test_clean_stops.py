"""Clean stops (issue 12): every long-running command exits 0 within 5 s of SIGTERM or SIGINT, without a traceback.

Service managers, containers and ``timeout`` send SIGTERM; a person presses Ctrl-C (SIGINT). Each command runs
as a real process; the signal goes once it is up (a line it prints, a file it writes), in the middle of its work
(a game being played, a capture being written).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.mosquitto import Broker, free_port

ROOT = Path(__file__).resolve().parents[2]
STOP_WITHIN_S = 5.0
SIGNALS = [signal.SIGTERM, signal.SIGINT]


class Process:
    """A command line with its output collected in the background."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.args = args
        self.proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(stream, into), daemon=True)
                         for stream, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: object, into: list[str]) -> None:
        for line in iter(stream.readline, b""):  # type: ignore[attr-defined]
            into.append(line.decode(errors="replace"))

    def text(self) -> str:
        return "".join(self.out) + "\n--- stderr ---\n" + "".join(self.err)

    def wait_until(self, ready: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.args} exited {self.proc.returncode} before {what}:\n{self.text()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"{self.args}: no {what} within {timeout} s:\n{self.text()}")
            time.sleep(0.05)

    def stop(self, sig: signal.Signals) -> tuple[int, float]:
        """Send *sig*; (exit status, seconds until the exit). Kills the process after the limit."""
        sent = time.monotonic()
        self.proc.send_signal(sig)
        try:
            status = self.proc.wait(STOP_WITHIN_S)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT if sig is signal.SIGTERM else signal.SIGKILL)
            self.proc.wait(10)
            for reader in self._readers:
                reader.join(5)
            raise AssertionError(f"{self.args}: still running {STOP_WITHIN_S} s after {sig.name}:\n"
                                 f"{self.text()}") from None
        elapsed = time.monotonic() - sent
        for reader in self._readers:
            reader.join(5)
        return status, elapsed

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in started:
        process.close()


def _assert_clean(process: Process, sig: signal.Signals) -> None:
    status, elapsed = process.stop(sig)
    assert status == 0, f"{process.args}: exit {status} after {sig.name}:\n{process.text()}"
    assert elapsed < STOP_WITHIN_S
    assert "Traceback" not in process.text(), process.text()
    assert "ERROR" not in "".join(process.err), process.text()


def _listening(port: int) -> Callable[[], bool]:
    def check() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            return False
    return check


def _start(processes: list[Process], args: list[str], cwd: Path) -> Process:
    process = Process(args, cwd)
    processes.append(process)
    return process


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_demo_with_the_embedded_broker(sig: signal.Signals, processes: list[Process], tmp_path: Path) -> None:
    # The embedded amqtt broker: no "Broadcast loop stopped by exception", no tracebacks; stopped mid-game.
    pytest.importorskip("amqtt")
    demo = _start(processes, ["-m", "boardd", "demo", "--tempo", "4"], tmp_path)
    demo.wait_until(lambda: any("1." in line and "White" in line for line in demo.out), "the first move")
    _assert_clean(demo, sig)
    assert any("embedded amqtt" in line for line in demo.out)


def _sim_config(tmp_path: Path, broker: Broker) -> Path:
    config = tmp_path / "sim.toml"
    config.write_text(f"""
[mqtt]
host = "127.0.0.1"
port = {broker.port}

[journal]
directory = "{tmp_path / 'state'}"

[[board]]
id = "sim1"
[board.driver]
kind = "sim"
port = "random"
seed = 7
profile = "casual"
tempo = 4.0
loop = true
time_control = "900+10"
""", encoding="utf-8")
    return config


@pytest.mark.broker
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_demo_with_mosquitto(sig: signal.Signals, processes: list[Process], tmp_path: Path,
                             mosquitto: Broker) -> None:
    demo = _start(processes, ["-m", "boardd", "demo", "--tempo", "4", "--broker", f"127.0.0.1:{mosquitto.port}"],
                  tmp_path)
    demo.wait_until(lambda: any("1." in line and "White" in line for line in demo.out), "the first move")
    _assert_clean(demo, sig)


@pytest.mark.broker
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_run(sig: signal.Signals, processes: list[Process], tmp_path: Path, mosquitto: Broker) -> None:
    config = _sim_config(tmp_path, mosquitto)
    daemon = _start(processes, ["-m", "boardd", "run", "--config", str(config)], tmp_path)
    daemon.wait_until(lambda: any("connected to" in line for line in daemon.err), "the MQTT connection")
    _assert_clean(daemon, sig)
    assert any("stopped cleanly" in line for line in daemon.err)


@pytest.mark.broker
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_relay(sig: signal.Signals, processes: list[Process], tmp_path: Path, mosquitto: Broker) -> None:
    config = tmp_path / "relay.toml"
    port = free_port()
    config.write_text(f"""
[mqtt]
host = "127.0.0.1"
port = {mosquitto.port}

[relay]
out_dir = "{tmp_path / 'live'}"
http_host = "127.0.0.1"
http_port = {port}
round = 1
""", encoding="utf-8")
    relay = _start(processes, ["-m", "boardd", "relay", "--config", str(config)], tmp_path)
    relay.wait_until(_listening(port), "the HTTP port")
    _assert_clean(relay, sig)


@pytest.mark.broker
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_web(sig: signal.Signals, processes: list[Process], tmp_path: Path, mosquitto: Broker) -> None:
    config = tmp_path / "web.toml"
    port = free_port()
    config.write_text(f"""
[mqtt]
host = "127.0.0.1"
port = {mosquitto.port}

[web]
host = "127.0.0.1"
port = {port}
""", encoding="utf-8")
    web = _start(processes, ["-m", "boardd", "web", "--config", str(config)], tmp_path)
    web.wait_until(_listening(port), "the HTTP port")
    _assert_clean(web, sig)


@pytest.mark.parametrize("family", ["dgt", "millennium", "certabo"])
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_emulators_and_record(family: str, sig: signal.Signals, processes: list[Process], tmp_path: Path,
                              pgn_dir: Path) -> None:
    # The emulator plays a game to `boardd record`; record is stopped mid-game, then the emulator, mid-game.
    pgn = str(pgn_dir / "kasparov-deep-blue-1997.pgn")
    emulator = _start(processes, ["-m", f"drivers.{family}.emulator", "--pgn", pgn], tmp_path)
    emulator.wait_until(lambda: bool(emulator.out), "the device path")
    device = emulator.out[0].strip()
    capture = tmp_path / "capture.jsonl"
    record = _start(processes, ["-m", "boardd", "record", "--driver", family, "--port", device,
                                "-o", str(capture)], tmp_path)
    record.wait_until(lambda: capture.exists() and capture.stat().st_size > 2000, "traffic in the capture")
    _assert_clean(record, sig)
    lines = capture.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]   # every line whole: the capture was closed in order
    assert records[0]["capture"] == family and any("rx" in item for item in records)
    _assert_clean(emulator, sig)
