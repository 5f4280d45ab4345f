"""``boardd setup --root DIR``: a Pi's whole set-up written into a temporary tree, twice."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from boardd.daemon.setup import SHIPPED, shipped
from tests.mosquitto import Broker
from tests.systemd._units import SYSTEMD, systemd_analyze

BOARDD = [sys.executable, "-m", "boardd"]


def boardd(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOARDD, *map(str, args)], capture_output=True, text=True, check=False, timeout=120)


def tree(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every path under *root*: (kind, mode, content hash or link target)."""
    found: dict[str, tuple[str, int, str]] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = ("link", 0, os.readlink(path))
        elif path.is_dir():
            found[rel] = ("dir", path.stat().st_mode & 0o7777, "")
        else:
            found[rel] = ("file", path.stat().st_mode & 0o7777, hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def test_the_package_ships_the_repository_units_and_rules() -> None:
    for name in SHIPPED:
        assert shipped(name) == (SYSTEMD / name).read_bytes(), f"boardd/daemon/data/{name} differs from systemd/{name}"


def test_setup_into_a_tree_twice_changes_nothing(tmp_path: Path, mosquitto: Broker) -> None:
    root = tmp_path / "root"
    password = tmp_path / "pw"
    password.write_text("board-secret\n")
    args = ["setup", "--board", "t12", "--hall", f"127.0.0.1:{mosquitto.port}", "--root", root,
            "--password-file", password, "--device", "/dev/boardd/dgt-A9XK3L2Q"]
    first = boardd(*args)
    assert first.returncode == 0, first.stdout + first.stderr
    out = first.stdout
    for path in ("usr/lib/sysusers.d/boardd.conf", "etc/udev/rules.d/99-boardd.rules",
                 "etc/systemd/system/boardd@.service", "etc/boardd/t12.toml", "etc/boardd/mqtt.pass"):
        assert f"wrote /{path}" in out
        assert (root / path).is_file()
    assert f"broker: 127.0.0.1:{mosquitto.port} reachable" in out
    assert "check-config /etc/boardd/t12.toml: OK" in out
    config = (root / "etc/boardd/t12.toml").read_text()
    assert 'id = "t12"' in config and 'port = "/dev/boardd/dgt-A9XK3L2Q"' in config and "board_no = 12" in config
    assert 'username = "board-t12"' in config and 'password_file = "mqtt.pass"' in config
    assert (root / "etc/boardd/t12.toml").stat().st_mode & 0o777 == 0o640
    assert (root / "etc/boardd/mqtt.pass").read_text() == "board-secret\n"
    wants = root / "etc/systemd/system/multi-user.target.wants/boardd@t12.service"
    assert wants.is_symlink() and os.readlink(wants) == "/etc/systemd/system/boardd@.service"
    if os.geteuid() == 0:  # systemd-sysusers --root needs to write the tree's /etc/passwd as root
        assert "boardd:" in (root / "etc/passwd").read_text()
        assert any(line.startswith("dialout:") and "boardd" in line
                   for line in (root / "etc/group").read_text().splitlines())
    before = tree(root)

    second = boardd(*args)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "wrote" not in second.stdout and "replaced" not in second.stdout
    assert second.stdout.count("unchanged /") == 5
    assert tree(root) == before  # running it twice changes nothing

    # the tree is what systemd and boardd accept
    check = boardd("check-config", root / "etc/boardd/t12.toml")
    assert check.returncode == 0 and check.stdout.startswith("OK "), check.stdout + check.stderr
    units = root / "etc/systemd/system"
    verified = systemd_analyze(units, "verify", "--man=no", "./boardd@t12.service")
    assert verified.returncode == 0 and verified.stderr == "", verified.stderr


def test_an_edited_configuration_is_kept_unless_forced(tmp_path: Path) -> None:
    root = tmp_path / "root"
    args = ["setup", "--board", "b7", "--hall", "hall.invalid", "--root", root, "--no-probe", "--no-broker-check"]
    assert boardd(*args).returncode == 0
    path = root / "etc/boardd/b7.toml"
    edited = path.read_text().replace('edition = 2023', 'edition = 2018')
    path.write_text(edited)
    again = boardd(*args)
    assert again.returncode == 0 and "kept /etc/boardd/b7.toml" in again.stdout
    assert path.read_text() == edited
    forced = boardd(*args, "--force")
    assert forced.returncode == 0 and "replaced /etc/boardd/b7.toml" in forced.stdout
    assert "edition = 2023" in path.read_text()


def test_dry_run_changes_nothing_and_bad_arguments_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    dry = boardd("setup", "--board", "t3", "--hall", "hall.example", "--tls-ca", ca, "--root", root, "--dry-run",
                 "--no-probe", "--no-broker-check")
    assert dry.returncode == 0, dry.stderr
    assert "would write /etc/boardd/t3.toml" in dry.stdout and "would write /etc/boardd/tls/ca.crt" in dry.stdout
    assert "would run systemctl --root=" in dry.stdout and "hall broker hall.example:8883" in dry.stdout
    assert list(root.iterdir()) == []
    bad = boardd("setup", "--board", "t 3", "--hall", "h", "--root", root)
    assert bad.returncode == 2 and "board id" in bad.stderr
    missing = boardd("setup", "--board", "t3", "--hall", "h", "--root", root, "--tls-ca", tmp_path / "nope.crt")
    assert missing.returncode == 2 and "file not found" in missing.stderr
