"""A real Mosquitto broker for tests: own port, own config, stoppable and restartable."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def mosquitto_binary() -> str:
    """Path of the mosquitto executable (Debian puts it in /usr/sbin)."""
    found = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
    if not found:
        raise RuntimeError("mosquitto is not installed: run scripts/system-deps.sh mosquitto")
    return found


class Broker:
    """One mosquitto process with a config written to a private directory.

    ``extra_config`` is appended to the generated config (listeners, ACLs, ...);
    without it the broker listens on 127.0.0.1:``port`` with anonymous access.
    """

    def __init__(self, *, port: int | None = None, extra_config: str = "",
                 directory: Path | None = None, persistence: bool = False) -> None:
        self.port = port or free_port()
        self.directory = directory or Path(tempfile.mkdtemp(prefix="boardd-mosq-"))
        self.extra_config = extra_config
        self.persistence = persistence
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.directory / "mosquitto.log"

    @property
    def config_path(self) -> Path:
        return self.directory / "mosquitto.conf"

    def write_config(self) -> None:
        lines = []
        if os.geteuid() == 0 and "\nuser " not in "\n" + self.extra_config:
            # Run as root, mosquitto drops to user 'mosquitto', which cannot enter pytest's 0700 temp dirs:
            # with persistence it then fails to save its database ("Permission denied" in its log) and
            # forgets every session on a restart. In production the files are root:mosquitto 0640.
            lines.append("user root")
        if "listener" not in self.extra_config:
            lines += [f"listener {self.port} 127.0.0.1", "allow_anonymous true"]
        lines += [
            f"persistence {'true' if self.persistence else 'false'}",
            f"persistence_location {self.directory}/",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            self.extra_config,
        ]
        self.config_path.write_text("\n".join(lines) + "\n")

    def start(self, timeout: float = 10.0) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        self.write_config()
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        self.process = subprocess.Popen(
            [mosquitto_binary(), "-c", str(self.config_path)], stdout=log, stderr=log
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log_path.read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return
            time.sleep(0.05)
        raise RuntimeError("mosquitto did not start listening")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> Broker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
