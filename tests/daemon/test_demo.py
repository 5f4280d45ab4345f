"""``boardd demo`` as a new user runs it: a subprocess, embedded broker or Mosquitto, exit 0 at game end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import chess.pgn

from tests.conftest import PGN_DIR
from tests.mosquitto import Broker

ROOT = Path(__file__).resolve().parents[2]
SHORT = PGN_DIR / "molinari-bordais-1979.pgn"


def demo(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "boardd", "demo", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, check=False)


def sans(stdout: str) -> list[str]:
    return re.findall(r"^\s*\d+\.(?:\.\.)?\s+(\S+)\s+White", stdout, flags=re.MULTILINE)


def test_demo_embedded_broker_real_game() -> None:
    proc = demo("--pgn", str(SHORT), "--tempo", "3", "--think", "0.4", "--games", "2")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    with SHORT.open() as fh:
        game = chess.pgn.read_game(fh)
    assert game is not None
    board = game.board()
    expected = []
    for move in game.mainline_moves():
        expected.append(board.san(move))
        board.push(move)
    assert sans(proc.stdout) == expected * 2  # the file's one game, played twice (the second via new-game)
    assert "embedded amqtt" in proc.stdout
    assert proc.stdout.count(f"Result {game.headers['Result']}") == 2
    assert "Molinari - Bordais" in proc.stdout


def test_demo_with_mosquitto_and_injection(mosquitto: Broker) -> None:
    proc = demo("--broker", f"127.0.0.1:{mosquitto.port}", "--pgn", str(SHORT), "--tempo", "3", "--think", "0.4",
                "--inject", "illegal-move@5")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert f"broker: 127.0.0.1:{mosquitto.port}" in proc.stdout
    assert "ILLEGAL_MOVE" in proc.stdout
    assert "refused" not in proc.stdout  # the simulation's reinstatement was accepted by the daemon
    assert len(sans(proc.stdout)) >= 10
    assert "Result 0-1" in proc.stdout


def test_demo_rejects_bad_arguments() -> None:
    proc = demo("--tempo", "0")
    assert proc.returncode == 2 and "--tempo" in proc.stderr
    proc = demo("--pgn", "/nonexistent/game.pgn")
    assert proc.returncode == 1 and "no PGN file" in proc.stderr
