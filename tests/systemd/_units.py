"""Helpers of the systemd unit tests: a strict unit-file parser and systemd-analyze in a scratch directory."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"

Unit = dict[str, dict[str, list[str]]]


def parse_unit(path: Path) -> Unit:
    """Sections -> key -> values (keys may repeat). Fails on anything systemd would misread."""
    sections: Unit = {}
    current: dict[str, list[str]] | None = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{path.name}:{number}"
        if not line.strip() or line.startswith(("#", ";")):
            continue
        assert not line.endswith("\\"), f"{where}: no line continuations, please"
        if match := re.fullmatch(r"\[([A-Za-z]+)\]", line):
            current = sections.setdefault(match[1], {})
            continue
        match = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)=(.*)", line)
        assert match, f"{where}: not a Key=value line: {line!r}"
        assert current is not None, f"{where}: assignment before the first section"
        key, value = match[1], match[2]
        # systemd has no trailing comments: a '#' would become part of the value.
        assert "#" not in value, f"{where}: '#' in a value (trailing comment?): {line!r}"
        current.setdefault(key, []).append(value)
    return sections


def one(unit: Unit, section: str, key: str) -> str:
    """The single value of ``[section] key`` (fails when it is missing or repeated)."""
    values = unit.get(section, {}).get(key, [])
    assert len(values) == 1, f"[{section}] {key}: expected one value, got {values}"
    return values[0]


def words(unit: Unit, section: str, key: str) -> list[str]:
    """Every whitespace-separated word of every ``[section] key`` line."""
    return [word for value in unit.get(section, {}).get(key, []) for word in value.split()]


def copy_units(names: Iterable[str], directory: Path) -> None:
    """Copy the named files of systemd/ into *directory* (systemd-analyze checks unit files by path)."""
    for name in names:
        shutil.copy(SYSTEMD / name, directory / name)


def systemd_analyze(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``systemd-analyze ARGS`` in *cwd*, output captured as text; skips the test where it is not installed."""
    binary = shutil.which("systemd-analyze")
    if binary is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    return subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, check=False)
