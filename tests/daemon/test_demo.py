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
    assert proc.stdout.count("status online: board connected") == 1  # boardd republishes it: shown once
    assert "Traceback" not in proc.stderr
    # Quick simulated players and no increment: clocks only ever fall from 1:30:00 (with +30 s a move
    # for 0.4 s of thought they used to climb, which reads as a bug).
    clocks = [int(h) * 3600 + int(m) * 60 + int(s) for h, m, s in re.findall(r"(?:White|Black) (\d+):(\d\d):(\d\d)",
                                                                               proc.stdout)]
    assert clocks and max(clocks) <= 5400 and min(clocks) < 5400
    assert "time control 5400" in proc.stdout and "clocks grow" not in proc.stdout


def test_demo_with_mosquitto_and_injection(mosquitto: Broker) -> None:
    proc = demo("--broker", f"127.0.0.1:{mosquitto.port}", "--pgn", str(SHORT), "--tempo", "3", "--think", "0.4",
                "--inject", "illegal-move@5")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert f"broker: 127.0.0.1:{mosquitto.port}" in proc.stdout
    assert "ILLEGAL_MOVE" in proc.stdout
    assert "refused" not in proc.stdout  # the simulation's reinstatement was accepted by the daemon
    assert len(sans(proc.stdout)) >= 10
    assert "Result 0-1" in proc.stdout


def test_demo_help_lists_valid_kinds_and_profiles() -> None:
    from drivers.sim import PROFILES, Injection, InjectionKind

    proc = demo("--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())  # argparse wraps lines
    examples = re.findall(r"e\.g\. (\S+@\d+), or (\S+@\d+)", text)
    assert examples, text
    for example in examples[0]:
        Injection.parse(example)  # every example in the help is a valid kind
    assert all(kind.value in text for kind in InjectionKind)
    assert "{" + ",".join(PROFILES) + "}" in text


def test_demo_bad_injection_or_profile_is_a_usage_error_not_a_traceback() -> None:
    proc = demo("--inject", "castling-rook-first@9")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --inject: bad injection 'castling-rook-first@9'" in proc.stderr
    assert "rook-first, pawn-not-replaced" in proc.stderr  # the valid kinds
    proc = demo("--profile", "sloppy")
    assert proc.returncode == 2 and "invalid choice: 'sloppy'" in proc.stderr and "clumsy" in proc.stderr
    proc = demo("--random", "--inject", "rook-first@1", timeout=60)  # a valid kind at a ply that is no castling
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "cannot simulate this game: rook-first@1 does not fit ply 1" in proc.stderr


def test_demo_explains_growing_clocks_under_a_large_increment() -> None:
    from boardd.daemon.demo import _clock_note

    note = _clock_note("5400+30", 1.0)
    assert note is not None and "gain 30 s a move" in note and "clocks grow" in note
    assert _clock_note("5400", 1.0) is None and _clock_note("180+2", 5.0) is None
    assert _clock_note("-", 1.0) is None  # untimed: nothing to explain


def test_demo_rejects_bad_arguments() -> None:
    proc = demo("--tempo", "0")
    assert proc.returncode == 2 and "--tempo" in proc.stderr
    proc = demo("--pgn", "/nonexistent/game.pgn")
    assert proc.returncode == 1 and "no PGN file" in proc.stderr
