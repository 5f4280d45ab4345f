"""systemd units, sysusers snippet and udev rules in systemd/: syntax and required settings.

Where systemd-analyze exists it verifies the units as systemd itself would load them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from boardd.daemon.config import DEFAULT_STATE_DIR
from tests.systemd._units import SYSTEMD, copy_units, one, parse_unit, systemd_analyze, words

UNITS = ("boardd.service", "boardd@.service")
PROTOCOLS = Path(__file__).resolve().parents[3] / "shared" / "docs" / "protocols.md"

@pytest.mark.parametrize("name", UNITS)
def test_unit_required_settings(name: str) -> None:
    unit = parse_unit(SYSTEMD / name)
    assert set(unit) == {"Unit", "Service", "Install"}
    assert one(unit, "Service", "Type") == "notify"
    assert one(unit, "Service", "NotifyAccess") == "main"
    assert one(unit, "Service", "WatchdogSec") == "30"
    assert one(unit, "Service", "Restart") in {"on-failure", "always"}
    assert float(one(unit, "Service", "RestartSec")) > 0
    assert one(unit, "Unit", "StartLimitIntervalSec") == "0"
    assert one(unit, "Service", "User") == "boardd"
    assert "dialout" in words(unit, "Service", "SupplementaryGroups")
    # The daemon's default journal directory ([journal] directory) must be the writable state dir.
    assert one(unit, "Service", "StateDirectory") == "boardd"
    assert one(unit, "Service", "ReadWritePaths") == str(DEFAULT_STATE_DIR)
    for key, value in {"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
                       "NoNewPrivileges": "yes"}.items():
        assert one(unit, "Service", key) == value, key
    # Serial and USB access must survive the hardening.
    assert "PrivateDevices" not in unit["Service"]
    allowed = unit["Service"]["DeviceAllow"]
    for node in ("char-ttyUSB rw", "char-ttyACM rw", "char-usb_device rw", "char-hidraw rw"):
        assert node in allowed
    assert {"network-online.target", "mosquitto.service"} <= set(words(unit, "Unit", "After"))
    assert "network-online.target" in words(unit, "Unit", "Wants")
    # mosquitto is wanted, never required: the daemon must run (and record moves) without a broker.
    assert "Requires" not in unit["Unit"] and "BindsTo" not in unit["Unit"]
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


def test_template_runs_the_instance_config() -> None:
    unit = parse_unit(SYSTEMD / "boardd@.service")
    assert one(unit, "Service", "ExecStart") == "/usr/bin/env boardd run --config /etc/boardd/%i.toml"
    # Instances share /var/lib/boardd: the daemon's journal is one file per board id.
    assert one(unit, "Service", "StateDirectory") == "boardd"
    plain = parse_unit(SYSTEMD / "boardd.service")
    assert one(plain, "Service", "ExecStart") == "/usr/bin/env boardd run --config /etc/boardd/boardd.toml"


def test_single_and_template_units_agree() -> None:
    """The two units differ only where the instance name matters."""
    plain = parse_unit(SYSTEMD / "boardd.service")
    template = parse_unit(SYSTEMD / "boardd@.service")
    per_instance = {"Description", "ExecStart", "SyslogIdentifier"}
    for section in plain:
        assert set(plain[section]) == set(template[section]), section
        for key in set(plain[section]) - per_instance:
            assert plain[section][key] == template[section][key], f"[{section}] {key}"


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    copy_units(UNITS, tmp_path)
    # A template is verified through an instance; systemd finds boardd@.service next to it.
    result = systemd_analyze(tmp_path, "verify", "--man=no", "./boardd.service", "./boardd@t12.service")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr


def test_systemd_analyze_verify_catches_mistakes(tmp_path: Path) -> None:
    """The check above can fail: a typo in a key is reported."""
    text = (SYSTEMD / "boardd.service").read_text().replace("WatchdogSec=", "WatchDogSec=")
    (tmp_path / "boardd.service").write_text(text)
    result = systemd_analyze(tmp_path, "verify", "--man=no", "./boardd.service")
    assert "Unknown key 'WatchDogSec'" in result.stderr


@pytest.mark.parametrize("name", UNITS)
def test_hardening_exposure(name: str, tmp_path: Path) -> None:
    """systemd's own exposure score stays at or below 4.0 ("OK"); measured 3.7 when written."""
    copy_units(UNITS, tmp_path)
    target = "./boardd.service" if name == "boardd.service" else "./boardd@t12.service"
    result = systemd_analyze(tmp_path, "security", "--offline=yes", "--threshold=40", target)
    assert result.returncode == 0, result.stdout[-500:] + result.stderr


def test_sysusers_snippet(tmp_path: Path) -> None:
    path = SYSTEMD / "boardd.sysusers.conf"
    entries = [line.split(maxsplit=3) for line in path.read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert entries[0][:3] == ["u", "boardd", "-"]
    assert ["m", "boardd", "dialout"] in entries
    binary = shutil.which("systemd-sysusers")
    if binary is None:
        pytest.skip("systemd-sysusers is not installed")
    (tmp_path / "etc").mkdir()
    result = subprocess.run([binary, "--dry-run", f"--root={tmp_path}", str(path)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "Creating user 'boardd'" in result.stdout + result.stderr


# --- udev rules ------------------------------------------------------------------------------------------------

#: Keys udev accepts (udev(7)), with the operators that make sense for each.
MATCH_KEYS = {"ACTION", "DEVPATH", "KERNEL", "KERNELS", "NAME", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER", "DRIVERS",
              "ATTR", "ATTRS", "ENV", "TAG", "TAGS", "TEST", "PROGRAM", "RESULT", "SYMLINK"}
ASSIGN_KEYS = {"NAME", "SYMLINK", "OWNER", "GROUP", "MODE", "SECLABEL", "ATTR", "SYSCTL", "ENV", "TAG", "RUN",
               "LABEL", "GOTO", "IMPORT", "OPTIONS"}
TOKEN = re.compile(r'\s*([A-Z]+)(\{[^}]+\})?\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*(,|$)')


def parse_rule(line: str) -> list[tuple[str, str, str, str]]:
    """(key, attribute, operator, value) for each comma-separated token; asserts the whole line parses."""
    tokens = []
    position = 0
    while position < len(line):
        match = TOKEN.match(line, position)
        assert match, f"cannot parse udev rule at column {position}: {line[position:]!r}"
        key, attribute, operator, value, _ = match.groups()
        tokens.append((key, attribute or "", operator, value))
        position = match.end()
    return tokens


def rules() -> list[list[tuple[str, str, str, str]]]:
    lines = (SYSTEMD / "99-boardd.rules").read_text().splitlines()
    assert not any(line.rstrip().endswith("\\") for line in lines), "one rule per line"
    return [parse_rule(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_udev_rules_are_valid() -> None:
    parsed = rules()
    assert len(parsed) == 4
    for rule in parsed:
        matches = [t for t in rule if t[2] in {"==", "!="}]
        assigns = [t for t in rule if t[2] not in {"==", "!="}]
        assert matches and assigns
        for key, attribute, _, _ in matches:
            assert key in MATCH_KEYS, key
            assert bool(attribute) == (key in {"ATTR", "ATTRS", "ENV"}), key
        for key, _, _, _ in assigns:
            assert key in ASSIGN_KEYS, key
        values = {(key, attribute): value for key, attribute, _, value in rule}
        assert values[("GROUP", "")] == "dialout"
        assert values[("MODE", "")] == "0660"
        assert ("TAG", "", "+=", "systemd") in rule
        for attribute in ("{idVendor}", "{idProduct}"):
            value = values.get(("ATTRS", attribute)) or values[("ATTR", attribute)]
            assert re.fullmatch(r"[0-9a-f?\[\]-]{4,9}", value), value
        if ("SYMLINK", "") in values:
            assert values[("SYMLINK", "")].startswith("boardd/")
        if values.get(("SUBSYSTEM", "")) == "tty":
            assert ("ENV", "{ID_MM_DEVICE_IGNORE}", "=", "1") in rule


def test_udev_rules_cover_the_documented_usb_ids() -> None:
    """The ids come from the protocol reference: DGT FTDI, Certabo CP210x, Chessnut 2d80."""
    ids = {(values.get(("SUBSYSTEM", "")), values.get(("ATTRS", "{idVendor}")) or values.get(("ATTR", "{idVendor}")),
            values.get(("ATTRS", "{idProduct}")) or values.get(("ATTR", "{idProduct}")))
           for values in ({(k, a): v for k, a, _, v in rule} for rule in rules())}
    assert ids == {("tty", "0403", "6001"), ("tty", "10c4", "ea60"), ("hidraw", "2d80", "8[0-6]??"),
                   ("usb", "2d80", "8[0-6]??")}
    if not PROTOCOLS.is_file():
        pytest.fail(f"protocol reference not found at {PROTOCOLS}")
    text = PROTOCOLS.read_text()
    assert "`0403:6001`" in text
    assert "`10c4:ea60`" in text
    assert "VID `0x2d80`" in text


def test_udev_parser_rejects_broken_rules() -> None:
    with pytest.raises(AssertionError, match="cannot parse"):
        parse_rule('SUBSYSTEM=="tty", GROUP="dialout" # trailing comment')
    with pytest.raises(AssertionError, match="cannot parse"):
        parse_rule('SUBSYSTEM=="tty" GROUP="dialout"')
    with pytest.raises(AssertionError, match="cannot parse"):
        parse_rule("SUBSYSTEM==tty")
