"""Crash: ``boardd run`` is SIGKILLed at random points of a game and restarted.

The world (tests/daemon/_world.py) keeps playing the same game across restarts;
after dedupe on (board, session, seq) the subscriber must see every move made and
completed exactly once, in order, and the final retained state must equal the
game an uninterrupted run records (the script's moves; see test_daemon_mqtt for
the uninterrupted run itself). What the consumer received over all the runs, per
topic (moves by ply and phase, findings by id, the game's events by type), equals
what an uninterrupted run of the same game publishes, but for what a restart adds
(its link events, ``MOVES_RECOVERED``, the ``recovered`` marker).

The game has incidents (seeded, ``script(incidents=True)``): an illegal move the
arbiter corrects (7.5.1, the clock paused, the position put back, +2 min) and the
clock's link lost for a move. The kills wait on conditions, not on the machine's
speed: each lands at a seeded ply of the game (the consumer has seen that many
moves made), then a seeded fraction of a move later; a loaded machine delays the
game, not the kill's place in it. Not next to the moves with an incident: a
daemon down while an illegal move is played and corrected cannot judge it (the
recovery never judges, docs/downtime.md), and a restart's clock outage merges
with the script's, so what it publishes is rightly not what an uninterrupted run
publishes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from boardd.daemon.journal import Journal
from tests.daemon._helpers import consumer, random_moves
from tests.daemon._world import incident_moves, save_steps, script, world_board_table
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


#: The events a restart adds to a game (the outages it marks, and what the recovery found).
RESTART_EVENTS = frozenset({"CLOCK_DISCONNECTED", "CLOCK_RECONNECTED", "BOARD_DISCONNECTED", "BOARD_RECONNECTED",
                            "MOVES_RECOVERED"})


def world_done(tmp_path: Path, board: str, steps: list[Any]) -> bool:
    """Has the world played its last step (its progress file, ``tests/daemon/_world.py``)?"""
    try:
        return int(json.loads((tmp_path / f"{board}-world.json").read_text())["next"]) >= len(steps)
    except (OSError, ValueError, KeyError):
        return False


async def settled(c: Any, *, still: float = 1.0, within: float = 60.0) -> None:
    """Until the consumer received nothing new for *still* seconds (a condition on the messages: a loaded
    machine waits longer, a quiet one no more than that)."""
    deadline = time.monotonic() + within
    count = -1
    while count != len(c.messages):
        assert time.monotonic() < deadline, "the messages never stopped"
        count = len(c.messages)
        await asyncio.sleep(still)


def by_ply(c: Any, phase: str) -> list[str]:
    """The record as a consumer folds the ``move`` messages of *phase*: by ply, the last word on each, a
    ``MovesRetracted`` (the illegal move taken out, an ``event``... or a later message of the same ply) overwritten."""
    folded: dict[int, str] = {}
    for payload in c.of("move"):
        if payload["phase"] == phase:
            folded[payload["ply"]] = payload["uci"]
    return [folded[ply] for ply in sorted(folded)]


def received(c: Any) -> dict[str, Any]:
    """What the consumer received, per topic, keyed as the contract's consumers key it."""
    findings: dict[str, tuple[object, object]] = {}
    for payload in c.of("irregularity"):
        findings[payload["id"]] = (payload["code"], payload["status"])  # the last word on each
    return {"move": sorted((p["ply"], p["phase"], p["uci"]) for p in c.of("move")),
            "irregularity": findings,
            "event": sorted(p["type"] for p in c.of("event") if p["type"] not in RESTART_EVENTS)}


async def run_seed(tmp_path: Path, port: int, seed: int, kills: int, tag: str = "",
                   ) -> tuple[dict[str, Any], bool, dict[str, Any]]:
    """Play seed's game with *kills* SIGKILLs at seeded plies; returns (final state, a kill hit a session, what the
    consumer received per topic)."""
    rng = random.Random(seed)
    board = f"c{seed}{tag}"
    moves = random_moves(seed + 100, PLIES)
    steps = script(moves, seed=seed, incidents=True)
    steps_file = tmp_path / f"{board}-steps.json"
    save_steps(steps, steps_file)
    config = crash_config(tmp_path, port, board, steps_file)
    log = tmp_path / f"{board}.log"
    # the plies the kills land at (the consumer has seen that many moves made), in game order
    # (not while a move with an incident is under way: the kill lands in move ``ply`` or the end of the one before)
    busy = {i for i in incident_moves(moves, seed=seed) if i >= 0}
    quiet = [ply for ply in range(PLIES) if not busy & {ply - 1, ply, ply + 1}]
    plies = sorted(rng.choice(quiet) for _ in range(kills))
    async with consumer(port, board) as c:
        for ply in plies:
            seen = {p["session"] for _, p in c.messages}
            proc = start(config, log)
            # kill only once this daemon is up (its session is on the broker): on a loaded machine the
            # interpreter alone can take seconds to start, and a kill before that tests nothing
            await c.wait_for(lambda seen=seen: bool({p["session"] for _, p in c.messages} - seen), 60,
                             f"seed {seed}: daemon online before the kill")
            await c.wait_for(lambda ply=ply: len(set(c.moves("made"))) >= ply, 120, f"seed {seed}: ply {ply} made")
            await asyncio.sleep(rng.uniform(0.0, 1.5 / TEMPO))  # somewhere within the ply (a move takes ~1.5 s)
            proc.send_signal(signal.SIGKILL)
            await asyncio.to_thread(proc.wait, 10)
        before = {p["session"] for _, p in c.messages}
        proc = start(config, log)
        try:
            await c.wait_for(lambda: bool({p["session"] for _, p in c.messages} - before), 60,
                             f"seed {seed}: the final daemon online")
            await c.wait_for(lambda: (c.retained.get("state") or {}).get("moves") == moves
                             and by_ply(c, "made") == moves and world_done(tmp_path, board, steps), 120,
                             f"seed {seed}: the whole game")
            await settled(c)  # what the last steps made (a completion, the timers after them)
        except AssertionError as exc:
            proc.kill()
            raise AssertionError(f"{exc}\n{log.read_text()[-3000:]}") from None
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 20) == 0, log.read_text()[-2000:]
        # after dedupe on (board, session, seq): every move of the record made and completed, each message once
        # (the illegal move's are published and overwritten by the move that replaced it, as without kills)
        assert by_ply(c, "made") == moves, f"seed {seed}: made {c.moves('made')}"
        keys = [(p["ply"], p["phase"], p["uci"]) for p in c.of("move")]
        assert len(keys) == len(set(keys)), f"seed {seed}: a move message published twice: {keys}"
        games = {p["game"]["id"] for t, p in c.messages if t.endswith("/state")}
        assert len(games) == 1, f"seed {seed}: the game was not rebuilt after a crash: {games}"
        hit = len({p["session"] for _, p in c.messages}) >= 2
        final = dict(c.retained["state"])
        got = received(c)
    journal = Journal.open(tmp_path / "state" / f"{board}.sqlite")
    assert journal.integrity_check() == ["ok"]
    assert journal.unacked_count() == 0
    assert len(journal.games()) == 1
    journal.close()
    return final, hit, got


RECORD = ("moves", "san", "fen", "ply", "turn", "result", "termination", "illegal_moves")


#: The seeds also run without kills, for the per-topic comparison (each costs a daemon run).
REFERENCE_SEEDS = (0, 1, 2, 3)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # 24 daemon runs: ~170 s on a quiet machine, more than the default 300 s at load average 20
async def test_sigkill_at_random_points(tmp_path: Path, mosquitto: Broker) -> None:
    """20 seeds, one or two SIGKILLs each, two seeds at a time; four seeds also run uninterrupted for reference."""
    kills = {seed: 1 + seed % 2 for seed in SEEDS}
    results: dict[int, tuple[dict[str, Any], bool, dict[str, Any]]] = {}
    seeds = list(SEEDS)
    for lane in range(0, len(seeds), 2):
        batch = seeds[lane:lane + 2]
        done = await asyncio.gather(*(run_seed(tmp_path, mosquitto.port, seed, kills[seed]) for seed in batch))
        results.update(zip(batch, done, strict=True))
    # the uninterrupted run of the same game records exactly the same thing, and publishes the same per topic
    for lane in range(0, len(REFERENCE_SEEDS), 2):
        batch = list(REFERENCE_SEEDS[lane:lane + 2])
        refs = await asyncio.gather(*(run_seed(tmp_path, mosquitto.port, seed, 0, tag="ref") for seed in batch))
        for seed, (reference, _, published) in zip(batch, refs, strict=True):
            crashed, _, got = results[seed]
            assert {k: crashed[k] for k in RECORD} == {k: reference[k] for k in RECORD}
            assert got == published, f"seed {seed}: received {got}, an uninterrupted run publishes {published}"
    assert sum(kills.values()) >= 30
    hits = sum(1 for _, hit, _ in results.values() if hit)
    assert hits >= len(SEEDS) * 3 // 4, f"only {hits} seeds had a kill during the game"
