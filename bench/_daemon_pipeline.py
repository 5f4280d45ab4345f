"""In-process cost of the daemon's pipeline steps: ``python -m bench.bench_daemon pipeline --journal FILE``.

Replays the events of a journal (by default the e2e game of Part 1, played first on the DGT
emulator: see ``bench.bench_daemon``) through the same steps :meth:`boardd.daemon.service.BoardRuntime.process`
runs, one at a time, each timed with ``perf_counter``:

``feed``       ``Engine.feed(event)`` (or ``advance`` for a journaled timer tick);
``render``     ``Publisher.render`` (the publication objects);
``serialise``  ``payload_bytes()`` of every publication (the compact JSON the outbox stores);
``commit``     ``Journal.record`` (one transaction: event + outbox rows), per ``synchronous`` mode.

Figures are split by the kind of step: the one that completes a move (the press), the others.
No broker, no thread hop, no MQTT: the stages of Part 1 that are pure computation or disk.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from boardd.core.contract import Publisher
from boardd.core.engine import Engine
from boardd.core.outputs import MoveCompleted
from boardd.daemon.config import load_config
from boardd.daemon.journal import Journal, Tick

__all__ = ["PipelineCosts", "pipeline_costs", "run_pipeline"]


_STEPS = ("feed", "render", "serialise", "commit", "total")


@dataclass
class PipelineCosts:
    """Per-step durations in seconds, for steps that completed a move and for the others."""

    mode: str
    press: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in _STEPS})
    other: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in _STEPS})
    publications_per_press: list[int] = field(default_factory=list)
    bytes_per_press: list[int] = field(default_factory=list)


def pipeline_costs(session_dir: Path, mode: str, workdir: Path) -> PipelineCosts:
    """Replay the current game of a bench session (*session_dir*: ``boardd.toml`` + ``state/``) in *mode*."""
    board = load_config(session_dir / "boardd.toml").boards[0]
    src = Journal.open(board.journal.path, synchronous="normal")
    try:
        game = src.current_game()
        items = [item for _, item in src.events(game.first_event if game else 0)]
    finally:
        src.close()
    costs = PipelineCosts(mode)
    engine = Engine(board.rules)
    target = Journal.open(workdir / f"pipeline-{mode}.sqlite", synchronous=mode)
    session = target.start_session()
    publisher = Publisher(board="bench1", session=session)
    try:
        for item in items:
            t0 = time.perf_counter()
            outputs = engine.advance(item.at) if isinstance(item, Tick) else engine.feed(item)
            t1 = time.perf_counter()
            pubs = publisher.render(outputs, engine.state, at=item.at)
            t2 = time.perf_counter()
            payloads = [p.payload_bytes() for p in pubs]
            t3 = time.perf_counter()
            target.record(item, pubs, seq=publisher.seq)
            t4 = time.perf_counter()
            press = any(isinstance(o, MoveCompleted) for o in outputs)
            bucket = costs.press if press else costs.other
            for name, value in zip(_STEPS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0), strict=True):
                bucket[name].append(value)
            if press:
                costs.publications_per_press.append(len(pubs))
                costs.bytes_per_press.append(sum(len(p) for p in payloads))
    finally:
        target.close()
    return costs


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_pipeline(source: Path, where: Path | None) -> int:
    """Print the step costs of replaying the bench session in *source* with synchronous FULL and NORMAL."""
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        for mode in ("full", "normal"):
            costs = pipeline_costs(source, mode, Path(tmp))
            n_press = len(costs.press["total"])
            n_other = len(costs.other["total"])
            print(f"  synchronous={mode}: {n_press} steps completing a move "
                  f"({_pct([float(x) for x in costs.publications_per_press], 0.5):.0f} publications, "
                  f"{_pct([float(x) for x in costs.bytes_per_press], 0.5):.0f} bytes at p50), {n_other} others")
            for label, bucket in (("press", costs.press), ("other", costs.other)):
                cells = "  ".join(f"{name} {_pct(bucket[name], 0.5) * 1e3:.3f}/{_pct(bucket[name], 0.99) * 1e3:.3f}"
                                  for name in _STEPS)
                print(f"    {label:<5} p50/p99 ms: {cells}")
    return 0
