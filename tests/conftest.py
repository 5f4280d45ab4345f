"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mosquitto import Broker

#: ../shared/data/pgn next to the checkout (CI clones main with shared/ beside it).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
PGN_DIR = SHARED / "data" / "pgn"


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A private Mosquitto broker on a free port, stopped at the end of the test."""
    broker = Broker(directory=tmp_path / "mosquitto")
    broker.directory.mkdir(parents=True, exist_ok=True)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def pgn_dir() -> Path:
    """Directory of the real games used by tests and benchmarks."""
    if not PGN_DIR.is_dir():
        pytest.fail(f"shared PGN data not found at {PGN_DIR}")
    return PGN_DIR
