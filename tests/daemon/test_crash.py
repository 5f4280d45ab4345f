"""Crash: ``boardd run`` is SIGKILLed at random points of a game and restarted.

The world (tests/daemon/_world.py) keeps playing the same game across restarts;
after dedupe on (board, session, seq) the subscriber must see every move made and
completed exactly once, in order, and the final retained state must equal the
game an uninterrupted run records (the script's moves; see test_daemon_mqtt for
the uninterrupted run itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from boardd.daemon.journal import Journal
from tests.daemon._helpers import consumer, random_moves
from tests.daemon._world import save_steps, script, world_board_table
from tests.mosquitto import Broker

ROOT = Path(__file__).resolve().parents[2]
TEMPO = 2.5
SEEDS = range(20)
PLIES = 8


def crash_config(tmp_path: Path, port: int, board: str, steps_file: Path) -> Path:
    path = tmp_path / f"{board}.toml"
    path.write_text(f"""
[mqtt]
host = "127.0.0.1"
port = {port}
keepalive = 5

[journal]
directory = "{tmp_path / 'state'}"
{world_board_table(tmp_path, board, steps_file, TEMPO, white=f"W{board}", black=f"B{board}")}""")
    return path


def start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(log, "ab") as fh:
        return subprocess.Popen([sys.executable, "-m", "boardd", "-v", "run", "--config", str(config)],
                                stdout=fh, stderr=fh, cwd=ROOT, env=env)


async def run_seed(tmp_path: Path, port: int, seed: int, kills: int, tag: str = "") -> tuple[dict[str, Any], bool]:
    """Play seed's game with *kills* SIGKILLs at random moments; returns (final state, a kill hit a session)."""
    rng = random.Random(seed)
    board = f"c{seed}{tag}"
    moves = random_moves(seed + 100, PLIES)
    steps = script(moves, seed=seed)
    steps_file = tmp_path / f"{board}-steps.json"
    save_steps(steps, steps_file)
    config = crash_config(tmp_path, port, board, steps_file)
    log = tmp_path / f"{board}.log"
    game_s = steps[-1].t / TEMPO
    async with consumer(port, board) as c:
        for _ in range(kills):
            seen = {p["session"] for _, p in c.messages}
            proc = start(config, log)
            # kill only once this daemon is up (its session is on the broker): on a loaded machine the
            # interpreter alone can take seconds to start, and a kill before that tests nothing
            with contextlib.suppress(AssertionError):
                await c.wait_for(lambda seen=seen: bool({p["session"] for _, p in c.messages} - seen), 30,
                                 f"seed {seed}: daemon online before the kill")
            await asyncio.sleep(rng.uniform(0.2, 0.5 + game_s * 0.6))
            proc.send_signal(signal.SIGKILL)
            await asyncio.to_thread(proc.wait, 10)
        before = {p["session"] for _, p in c.messages}
        proc = start(config, log)
        try:
            await c.wait_for(lambda: bool({p["session"] for _, p in c.messages} - before), 30,
                             f"seed {seed}: the final daemon online")
            await c.wait_for(lambda: (c.retained.get("state") or {}).get("moves") == moves
                             and c.moves("completed") == moves, 60, f"seed {seed}: the whole game")
        except AssertionError:
            proc.kill()
            raise AssertionError(log.read_text()[-3000:]) from None
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 20) == 0, log.read_text()[-2000:]
        # after dedupe on (board, session, seq): every move made and completed exactly once, in order
        assert c.moves("made") == moves, f"seed {seed}: made {c.moves('made')}"
        assert c.moves("completed") == moves
        games = {p["game"]["id"] for t, p in c.messages if t.endswith("/state")}
        assert len(games) == 1, f"seed {seed}: the game was not rebuilt after a crash: {games}"
        hit = len({p["session"] for _, p in c.messages}) >= 2
        final = dict(c.retained["state"])
    journal = Journal.open(tmp_path / "state" / f"{board}.sqlite")
    assert journal.integrity_check() == ["ok"]
    assert journal.unacked_count() == 0
    assert len(journal.games()) == 1
    journal.close()
    return final, hit


RECORD = ("moves", "san", "fen", "ply", "turn", "result", "termination", "illegal_moves")


@pytest.mark.slow
@pytest.mark.timeout(900)  # 22 daemon runs: ~140 s on a quiet machine, more than the default 300 s at load average 20
async def test_sigkill_at_random_points(tmp_path: Path, mosquitto: Broker) -> None:
    """20 seeds, one or two SIGKILLs each, two seeds at a time; two seeds also run uninterrupted for reference."""
    kills = {seed: 1 + seed % 2 for seed in SEEDS}
    results: dict[int, tuple[dict[str, Any], bool]] = {}
    seeds = list(SEEDS)
    for lane in range(0, len(seeds), 2):
        batch = seeds[lane:lane + 2]
        done = await asyncio.gather(*(run_seed(tmp_path, mosquitto.port, seed, kills[seed]) for seed in batch))
        results.update(zip(batch, done, strict=True))
    # the uninterrupted run of the same game records exactly the same thing
    for seed in (0, 1):
        reference, _ = await run_seed(tmp_path, mosquitto.port, seed, 0, tag="ref")
        crashed = results[seed][0]
        assert {k: crashed[k] for k in RECORD} == {k: reference[k] for k in RECORD}
    assert sum(kills.values()) >= 30
    hits = sum(1 for _, hit in results.values() if hit)
    assert hits >= len(SEEDS) * 3 // 4, f"only {hits} seeds had a kill during the game"
