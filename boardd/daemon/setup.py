"""``boardd setup``: one command sets up a board's Pi (replaces docs/deployment.md §2's manual steps).

Theory of operation
-------------------
``boardd setup --board t12 --hall HOST[:PORT] [--tls-ca FILE] [--password-file FILE] [--dry-run] [--root DIR]``
does, in this order, and prints one line per step (``wrote``, ``unchanged``, ``kept``, ``ran``,
``skipped``, ``warning``):

1. installs the files the package ships (``boardd/daemon/data/``, identical to the repository's
   ``systemd/``): ``/usr/lib/sysusers.d/boardd.conf``, ``/etc/udev/rules.d/99-boardd.rules``,
   ``/etc/systemd/system/boardd@.service``;
2. creates the ``boardd`` user (``systemd-sysusers``) and reloads udev (``udevadm``);
3. finds the board: ``boardd ports --probe`` (a DGT answer first, then a known USB adapter; its
   ``/dev/serial/by-id`` name), unless ``--device`` names it;
4. writes ``/etc/boardd/t12.toml`` from the template (:func:`render_config`), the broker's CA as
   ``/etc/boardd/tls/ca.crt`` and the MQTT password as ``/etc/boardd/mqtt.pass`` (both referred to
   relative to the configuration, root:boardd 0640), and validates the file as ``boardd check-config``;
5. checks the broker (a TCP connection, and the TLS handshake with the CA);
6. enables and starts ``boardd@t12.service``.

**Idempotent**: a file whose content is already right is not touched (``unchanged``); a configuration
that exists with other content (the operator edited it) is kept unless ``--force``; ``systemd-sysusers``
and ``systemctl enable`` change nothing the second time. Running it twice changes nothing.

**--root DIR** writes into a directory tree instead of ``/`` (for tests and image building): the
files go under DIR, ``systemd-sysusers --root`` and ``systemctl --root enable`` work on the tree, and
what needs a running system (udev reload, starting the service) is skipped and said so. Without
``--root`` it must run as root. **--dry-run** prints what it would do and changes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import grp
import importlib.resources
import os
import shutil
import socket
import ssl
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from boardd.core.errors import ConfigError
from boardd.daemon.config import BOARD_ID_RE, load_config, summary

__all__ = ["SHIPPED", "Setup", "configure_parser", "render_config", "run"]

#: package data file -> where it goes on the Pi
SHIPPED: dict[str, str] = {
    "boardd.sysusers.conf": "usr/lib/sysusers.d/boardd.conf",
    "99-boardd.rules": "etc/udev/rules.d/99-boardd.rules",
    "boardd@.service": "etc/systemd/system/boardd@.service",
}
_NO_DEVICE = "/dev/serial/by-id/CONNECT-THE-BOARD-AND-RUN-boardd-setup-AGAIN"


def shipped(name: str) -> bytes:
    """A file the package ships (boardd/daemon/data/)."""
    return (importlib.resources.files("boardd.daemon") / "data" / name).read_bytes()


def render_config(*, board: str, host: str, port: int, tls: bool, username: str, password: bool,
                  driver: str, device: str, board_no: int | None) -> str:
    """The daemon configuration of one board's Pi (a ``boardd check-config``-valid TOML document)."""
    lines = [
        f"# boardd on the Pi of board {board}: written by boardd setup (edit freely: setup keeps an edited file).",
        "# Validate with: boardd check-config /etc/boardd/" + board + ".toml",
        "",
        "[mqtt]",
        f'host = "{host}"',
        f"port = {port}",
        f'username = "{username}"',
    ]
    if password:
        lines.append('password_file = "mqtt.pass"')
    lines += ["keepalive = 15", 'prefix = "boardd"']
    if tls:
        lines += ["[mqtt.tls]", 'ca = "tls/ca.crt"']
    lines += [
        "",
        "[journal]",
        'directory = "/var/lib/boardd"',
        "retention_days = 2",
        'synchronous = "full"',
        "",
        "[logging]",
        'level = "info"',
        'format = "journal"',
        "",
        "[[board]]",
        f'id = "{board}"',
        "",
        "[board.driver]",
        f'kind = "{driver}"',
        f'port = "{device}"',
        "",
        "[board.rules]",
        "edition = 2023",
        'regime = "competition"',
        "",
        "[board.game]",
        "# The round's players, round and board number come from the arbiter (boardd round import).",
    ]
    if board_no is not None:
        lines.append(f"board_no = {board_no}")
    lines.append('time_control = "40/5400+30:1800+30"')
    return "\n".join(lines) + "\n"


@dataclass
class Setup:
    """One run of ``boardd setup``; :meth:`run` returns the exit code, :attr:`lines` what it did."""

    board: str
    host: str
    port: int
    root: Path = Path("/")
    tls_ca: Path | None = None
    password_file: Path | None = None
    username: str = ""
    driver: str = "dgt"
    device: str | None = None
    probe: bool = True
    dry_run: bool = False
    force: bool = False
    start: bool = True
    broker_check: bool = True
    lines: list[str] = field(default_factory=list)
    problems: int = 0

    @property
    def live(self) -> bool:
        """Working on the running system (not a tree under --root)."""
        return self.root.resolve() == Path("/")

    def at(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def say(self, text: str) -> None:
        self.lines.append(text)
        print(text, flush=True)

    # Steps.

    def put(self, path: str, data: bytes, *, mode: int = 0o644, group: str | None = None,
            keep_edited: bool = False) -> None:
        target = self.at(path)
        old = target.read_bytes() if target.is_file() else None
        if old == data:
            self._owner(target, mode, group)
            self.say(f"unchanged /{path}")
            return
        if old is not None and keep_edited and not self.force:
            self.say(f"kept /{path} (it differs from what setup writes: edited? --force rewrites it)")
            return
        if self.dry_run:
            self.say(f"would write /{path} ({len(data)} bytes, mode {mode:04o})")
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.setup-tmp")
        tmp.write_bytes(data)
        os.chmod(tmp, mode)
        tmp.replace(target)
        self._owner(target, mode, group)
        self.say(f"{'replaced' if old is not None else 'wrote'} /{path}")

    def _owner(self, target: Path, mode: int, group: str | None) -> None:
        if self.dry_run or not target.exists():
            return
        if (target.stat().st_mode & 0o7777) != mode:
            os.chmod(target, mode)
        if group is None or os.geteuid() != 0:
            return
        gid = self._gid(group)
        if gid is not None and target.stat().st_gid != gid:
            os.chown(target, 0, gid)

    def _gid(self, group: str) -> int | None:
        if self.live:
            with contextlib.suppress(KeyError):
                return grp.getgrnam(group).gr_gid
            return None
        with contextlib.suppress(OSError):
            for line in self.at("etc/group").read_text().splitlines():
                parts = line.split(":")
                if len(parts) >= 3 and parts[0] == group and parts[2].isdigit():
                    return int(parts[2])
        return None

    def command(self, argv: list[str], *, why: str) -> bool:
        if self.dry_run:
            self.say(f"would run {' '.join(argv)} ({why})")
            return True
        binary = shutil.which(argv[0])
        if binary is None:
            self.problems += 1
            self.say(f"warning: {argv[0]} is not installed: cannot {why}")
            return False
        result = subprocess.run([binary, *argv[1:]], capture_output=True, text=True, check=False)
        output = " ".join((result.stdout + result.stderr).split())
        if result.returncode != 0:
            self.problems += 1
            self.say(f"warning: {' '.join(argv)} failed ({result.returncode}): {output[:300]}")
            return False
        self.say(f"ran {' '.join(argv)} ({why})" + (f": {output[:300]}" if output else ": nothing to change"))
        return True

    def find_board(self) -> str:
        if self.device:
            self.say(f"board: {self.device} (given)")
            return self.device
        if not self.probe:
            self.say(f"board: not probed (--no-probe): {_NO_DEVICE}")
            return _NO_DEVICE
        from drivers.ports import candidates, probe_dgt  # noqa: PLC0415 - only setup probes

        found = candidates()

        async def probe_all() -> list[object]:
            return list(await asyncio.gather(*(probe_dgt(c.device, wait=1.0) for c in found)))

        answers = asyncio.run(probe_all()) if found else []
        ranked = sorted(zip(found, answers, strict=True), key=lambda pair: (pair[1] is None, pair[0].guess is None))
        for candidate, answer in ranked:
            if answer is None and candidate.guess is None:
                continue
            name = candidate.by_id[0] if candidate.by_id else candidate.device
            what = f"DGT answered ({getattr(answer, 'serial', None) or '?'})" if answer else candidate.guess_text
            self.say(f"board: {name} ({what})")
            if candidate.guess and candidate.guess != self.driver and answer is None:
                self.driver = candidate.guess
            return name
        self.problems += 1
        self.say(f"warning: no board found (boardd ports --probe saw {len(found)} serial device(s)); "
                 f"the configuration says {_NO_DEVICE}: connect the board and run boardd setup --force again")
        return _NO_DEVICE

    def check_broker(self) -> None:
        if not self.broker_check:
            self.say("broker: not checked (--no-broker-check)")
            return
        try:
            with socket.create_connection((self.host, self.port), timeout=3.0) as sock:
                if self.tls_ca is not None:
                    context = ssl.create_default_context(cafile=str(self.tls_ca))
                    with context.wrap_socket(sock, server_hostname=self.host) as tls:
                        self.say(f"broker: {self.host}:{self.port} reachable, TLS {tls.version()} verified with the CA")
                        return
                self.say(f"broker: {self.host}:{self.port} reachable")
        except (OSError, ssl.SSLError) as exc:
            self.problems += 1
            self.say(f"warning: broker {self.host}:{self.port} not reachable now ({exc}); the daemon keeps "
                     "recording and sends everything once it is")

    def run(self) -> int:
        if not BOARD_ID_RE.fullmatch(self.board):
            raise ConfigError(f"--board: expected a board id made of [A-Za-z0-9_-] (e.g. t12), got {self.board!r}")
        if self.live and not self.dry_run and os.geteuid() != 0:
            raise ConfigError("run as root (sudo boardd setup ...), or give --root DIR to write a tree")
        where = "/" if self.live else str(self.root)
        self.say(f"boardd setup: board {self.board}, hall broker {self.host}:{self.port}, into {where}"
                 + (" (dry run: nothing changes)" if self.dry_run else ""))
        for name, path in SHIPPED.items():
            self.put(path, shipped(name))
        root_args = [] if self.live else [f"--root={self.root}"]
        self.command(["systemd-sysusers", *root_args], why="the boardd user, in dialout")
        if self.live:
            self.command(["udevadm", "control", "--reload"], why="load the board rules")
            self.command(["udevadm", "trigger", "--subsystem-match=tty", "--subsystem-match=hidraw",
                          "--subsystem-match=usb"], why="apply them to boards already plugged in")
        else:
            self.say("skipped udevadm (not the running system)")
        device = self.find_board()
        if self.tls_ca is not None:
            self.put("etc/boardd/tls/ca.crt", self.tls_ca.read_bytes(), mode=0o644)
        if self.password_file is not None:
            self.put("etc/boardd/mqtt.pass", self.password_file.read_bytes().strip() + b"\n", mode=0o640,
                     group="boardd")
        number = int(digits) if (digits := "".join(c for c in self.board if c.isdigit())) else None
        text = render_config(board=self.board, host=self.host, port=self.port, tls=self.tls_ca is not None,
                             username=self.username or f"board-{self.board}", password=self.password_file is not None,
                             driver=self.driver, device=device, board_no=number if number else None)
        config_path = f"etc/boardd/{self.board}.toml"
        self.put(config_path, text.encode(), mode=0o640, group="boardd", keep_edited=True)
        if not self.dry_run or self.at(config_path).exists():
            try:
                config = load_config(self.at(config_path))
            except ConfigError as exc:
                self.problems += 1
                self.say(f"error: /{config_path} does not validate: {exc}")
                return 1
            self.say(f"check-config /{config_path}: OK: {summary(config)}")
        self.check_broker()
        unit = f"boardd@{self.board}.service"
        if self.live:
            self.command(["systemctl", "daemon-reload"], why="read the unit")
            self.command(["systemctl", "enable", *(["--now"] if self.start else []), unit],
                         why="start at boot" + (" and now" if self.start else ""))
        else:
            self.command(["systemctl", *root_args, "enable", unit], why="start at boot")
            self.say(f"skipped systemctl start {unit} (not the running system)")
        self.say(f"done: board {self.board}" + (f", {self.problems} warning(s) above" if self.problems else "")
                 + (f"; journalctl -u {unit} -f" if self.live else ""))
        return 0


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd setup``."""
    parser.add_argument("--board", required=True, help="this Pi's board id (e.g. t12): /etc/boardd/t12.toml")
    parser.add_argument("--hall", required=True, metavar="HOST[:PORT]",
                        help="the hall broker (port default 8883 with --tls-ca, else 1883)")
    parser.add_argument("--tls-ca", type=Path, help="the hall broker's CA certificate (TLS)")
    parser.add_argument("--password-file", type=Path, help="file with this board's MQTT password")
    parser.add_argument("--username", help="MQTT user (default board-<id>, as make-accounts.sh names it)")
    parser.add_argument("--driver", default="dgt", help="board family when the probe cannot tell (default dgt)")
    parser.add_argument("--device", help="the board's device; skips the probe")
    parser.add_argument("--no-probe", action="store_true", help="do not probe serial ports")
    parser.add_argument("--no-broker-check", action="store_true", help="do not try to reach the broker")
    parser.add_argument("--no-start", action="store_true", help="enable the service but do not start it")
    parser.add_argument("--force", action="store_true", help="rewrite an edited configuration file")
    parser.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
    parser.add_argument("--root", type=Path, default=Path("/"), help="write into this directory tree instead of /")


def run(args: argparse.Namespace) -> int:
    """``boardd setup``: 0 when set up (warnings allowed), 1 when the configuration is invalid, 2 on usage errors."""
    host, _, port_text = str(args.hall).rpartition(":") if str(args.hall).count(":") == 1 else (args.hall, "", "")
    try:
        if port_text and not port_text.isdigit():
            raise ConfigError(f"--hall: expected HOST or HOST:PORT, got {args.hall!r}")
        port = int(port_text) if port_text else (8883 if args.tls_ca else 1883)
        for path in (args.tls_ca, args.password_file):
            if path is not None and not path.is_file():
                raise ConfigError("file not found", path=str(path))
        setup = Setup(board=args.board, host=host or args.hall, port=port, root=args.root, tls_ca=args.tls_ca,
                      password_file=args.password_file, username=args.username or "", driver=args.driver,
                      device=args.device, probe=not args.no_probe, dry_run=args.dry_run, force=args.force,
                      start=not args.no_start, broker_check=not args.no_broker_check)
        return setup.run()
    except ConfigError as exc:
        print(f"boardd setup: {exc}", file=sys.stderr)
        return 2
