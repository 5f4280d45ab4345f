"""Daemon benchmarks: ``python -m bench.bench_daemon [PART ...]`` prints figures (nothing is asserted).

Every part starts its own Mosquitto on a free loopback port (``set_tcp_nodelay true``,
as ``config/mosquitto/boardd-hall.conf``) and the daemon as a real subprocess
(``boardd run --config <generated toml>``). Parts (default: ``e2e resources hall``):

``e2e``
    The DGT byte emulator on a pty plays a real game with clock presses in front of
    the daemon. Latency from the moment the BWTIME carrying the lever change is
    written to the pty to the moment the ``completed`` move message reaches a QoS 1
    subscriber on loopback. The daemon exposes no PUBACK hook, so this is an **upper
    bound** of "PUBACK at the daemon": Mosquitto forwards a QoS 1 message to the
    subscriber after it has sent the PUBACK. Broken down with the message's own times
    (``completed_at_s``: the daemon's stamp of the press; envelope ``ts``: the time the
    completion was rendered for, in ms; the journal outbox row's ``wall``). Runs
    (``--e2e-runs``, default ``settled,early,zero``): ``settled``: the spec's timing, the press
    two scans (400-500 ms) after the move, when the move has settled (``T_settle`` 400 ms) and
    the engine completes it in the feed of the press (``boardd/core/engine/presses.py`` ``Presses.clean_press``);
    ``early``: the spec's timing, the press one scan after the move, before it settled, so the
    engine judges the press ``max(T_latency, T_bounce)`` after it (``_Press.due``); ``zero``:
    ``early`` with ``t_latency = t_bounce = 0``.
    Baseline: bare QoS 1 publish -> PUBACK and publish -> subscriber on the same broker.
    ``--e2e-repeat N`` plays each run N times (a fresh broker and daemon each time) and pools
    the presses, so that p99 is not just the second-slowest press of one game;
    ``--e2e-load K`` keeps K busy-looping processes running during the e2e part (the machine
    shared with other work), ``--e2e-nice N`` starts the daemon with that niceness (what a
    ``Nice=`` line of the systemd unit would do; negative values need root).
    A small-CPU proxy for the daemon process only (``bench/_daemon_confine.py``):
    ``--e2e-cpu-quota PCT`` confines it to PCT % of one core (systemd's ``CPUQuota=``: via
    ``systemd-run --scope`` where systemd runs, else a cgroup v2 or v1 child created per game and
    removed after it; ``--e2e-quota-via`` picks one; the mechanism and the throttling counters are
    printed), ``--e2e-cpus LIST`` pins it (and the ``--e2e-load`` processes) with ``taskset``,
    ``--e2e-sched fifo:P|rr:P`` (``chrt``, ``CPUSchedulingPolicy=``) and ``--e2e-ionice CLASS[:LEVEL]``
    (``IOSchedulingClass=``) try unit settings. ``--e2e-trace`` runs the daemon through
    ``bench/_daemon_trace.py`` and prints the GC pauses and module imports that fell into the
    slowest presses (``--e2e-slowest N`` of each game are listed with their stages).
    ``--e2e-variants 'base;nice=-5;sched=fifo:10'`` compares daemon settings on a shared machine:
    the variants take turns game by game (``--e2e-repeat`` rounds, the order rotating), each
    pooled on its own.
``pipeline``
    Replays the game of the first e2e run in-process and times each step of the daemon's
    pipeline (engine feed, render, serialise, journal commit FULL/NORMAL;
    ``bench/_daemon_pipeline.py``). Needs ``e2e`` in the same invocation.
``resources``
    Resident memory (VmRSS/VmHWM sampled from /proc every 0.25 s) during a 100-move
    (200-ply) random game, then CPU while idle: connected to emulator and broker, no
    moves, clock stopped, process CPU over ``--idle-seconds`` as % of one core.
``hall``
    N daemons with the simulator driver at 10x tempo against one Mosquitto for
    ``--hall-seconds`` (default runs: 50 daemons, 50 daemons at ``nice 10`` so that the broker
    and the subscriber are not starved by them, 20 daemons): messages (subscriber vs the
    journals' outbox seq numbers: QoS 1 loss, duplicates), broker and daemons' CPU from
    /proc, latency envelope ``ts`` -> arrival at the subscriber (same machine, same wall clock).
    ``--hall-boards-per-process`` puts several boards in one ``boardd run``.
``journal``
    SQLite journal commit latency per ``synchronous`` mode and event-loop stalls
    (``bench/_daemon_journal.py``; not part of the default set).

The machine's load average is printed at the start and the end of every part.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import chess.pgn

from bench._daemon_common import ROOT, Table, loadavg, percentile, summary
from bench._daemon_confine import MECHANISMS, Confinement, ConfinementError, parse_ionice, parse_sched
from bench._daemon_dgt import SessionResult, dgt_session
from bench._daemon_hall import HallResult, hall
from bench._daemon_journal import run_journal
from bench._daemon_pipeline import run_pipeline
from drivers.sim import random_game

_LOGGER = logging.getLogger(__name__)

PGN_DIR = ROOT.parent / "shared" / "data" / "pgn"
E2E_GAME = ("kasparov-deep-blue-1997.pgn", 3)  # Deep Blue-Kasparov 1997 game 4: 111 plies, the longest of the file
PARTS = ("e2e", "pipeline", "resources", "hall", "journal")
#: e2e runs: name -> (label, zero_wait, think_scans)
E2E_RUNS = {
    "settled": ("spec timing, press after T_settle", False, 2),
    "early": ("spec timing, press before T_settle", False, 1),
    "zero": ("T_latency=T_bounce=0, press early", True, 1),
}


def _game(name: str, index: int, plies: int | None) -> chess.pgn.Game:
    with (PGN_DIR / name).open(encoding="utf-8-sig") as stream:
        for _ in range(index):
            chess.pgn.skip_game(stream)
        game = chess.pgn.read_game(stream)
    if game is None:
        raise SystemExit(f"no game {index} in {PGN_DIR / name}")
    return _truncate(game, plies)


def _truncate(game: chess.pgn.Game, plies: int | None) -> chess.pgn.Game:
    if plies is None:
        return game
    node: chess.pgn.GameNode = game
    for _ in range(plies):
        if not node.variations:
            break
        node = node.variations[0]
    node.variations.clear()
    return game


def _long_random_game(plies: int) -> chess.pgn.Game:
    """The first seeded random game that lasts *plies* half-moves (truncated there)."""
    for seed in range(1, 500):
        game = random_game(seed, max_plies=plies)
        if len(list(game.mainline_moves())) >= plies:
            return game
    raise SystemExit(f"no random game of {plies} plies")


def _ms(value: float) -> str:
    return f"{value * 1e3:.2f}"


@contextlib.contextmanager
def _cpu_load(processes: int, cpus: str | None = None) -> Iterator[None]:
    """*processes* busy-looping Python processes for the duration of the block (pinned to *cpus* if given)."""
    pin = ["taskset", "-c", cpus] if cpus else []
    hogs = [subprocess.Popen([*pin, sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
            for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _pool(label: str, games: list[SessionResult]) -> SessionResult:
    """The presses of several games of one run as one result (the first game's other fields)."""
    pooled = dataclasses.replace(games[0], label=label, presses=[p for g in games for p in g.presses],
                                 missing_plies=[p for g in games for p in g.missing_plies],
                                 irregularity_details=[d for g in games for d in g.irregularity_details])
    pooled.exit_status = max((g.exit_status or 0 for g in games), default=0)
    return pooled


def _print_e2e(runs: list[SessionResult], games: dict[str, list[SessionResult]] | None = None) -> None:
    table = Table("Part 1: press -> completed move at a QoS 1 subscriber (ms; upper bound of PUBACK at the daemon)",
                  ("run", "presses", "p50", "p99", "max", "<=10 ms p99?"))
    for r in runs:
        totals = [p.total for p in r.presses]
        ok = "yes" if totals and percentile(totals, 0.99) <= 0.010 else "no"
        table.add(r.label, len(totals), _ms(percentile(totals, 0.5)), _ms(percentile(totals, 0.99)),
                  _ms(max(totals, default=float("nan"))), ok)
    print(table.render())
    for label, played in (games or {}).items():
        if len(played) > 1:
            print(f"  {label}, per game p50/p99/max: " + "  ".join(
                f"{_ms(percentile(t, 0.5))}/{_ms(percentile(t, 0.99))}/{_ms(max(t))}"
                for t in ([p.total for p in g.presses] for g in played) if t))
    print()
    stages = Table("Part 1 breakdown per stage (ms, p50 / p99)",
                   ("run", "pty+driver", "engine wait", "render->journal", "journal+MQTT+broker", "total"))
    for r in runs:
        read = [p.stamped - p.written for p in r.presses]
        wait = [p.rendered - p.stamped for p in r.presses]
        journ = [p.journaled - p.rendered for p in r.presses if p.journaled is not None]
        out = [p.arrived - p.journaled for p in r.presses if p.journaled is not None]
        totals = [p.total for p in r.presses]
        stages.add(r.label, *(f"{_ms(percentile(v, 0.5))} / {_ms(percentile(v, 0.99))}"
                              for v in (read, wait, journ, out, totals)))
    print(stages.render())
    print("  pty+driver: BWTIME written -> completed_at_s (the daemon's stamp of the press, on its time line:")
    print("  wall clock at start + monotonic); engine wait: -> envelope ts (ms, floored); render->journal: -> the")
    print("  outbox row's wall (time.time() when the journal transaction began); the rest: fsync, outbox drain,")
    print("  publish, broker, subscriber.")
    for r in runs:
        extra = []
        if r.missing_plies:
            extra.append(f"plies without a measured completion: {r.missing_plies[:10]}")
        if r.irregularities:
            extra.append(f"irregularities raised: {', '.join(r.irregularity_details[:8])}")
        if r.exit_status != 0:
            extra.append(f"daemon exit status {r.exit_status}")
        if extra:
            print(f"  {r.label}: " + "; ".join(extra))
    base = runs[0] if runs and runs[0].baseline_ack else None
    if base is not None:
        print()
        bt = Table("Baseline on the same broker: bare QoS 1 publishes (ms)", ("", "n", "p50", "p99", "max"))
        bt.add("publish -> PUBACK", len(base.baseline_ack), *summary(base.baseline_ack).split())
        bt.add("publish -> subscriber", len(base.baseline_arrival), *summary(base.baseline_arrival).split())
        print(bt.render())
        p99_base = percentile(base.baseline_arrival, 0.99)
        for r in runs:
            totals = [p.total for p in r.presses]
            if totals and p99_base > 0:
                print(f"  {r.label}: p50 is {percentile(totals, 0.5) / percentile(base.baseline_arrival, 0.5):.1f}x"
                      f" and p99 {percentile(totals, 0.99) / p99_base:.1f}x the bare broker's")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _variants(spec: str | None, base: Confinement, nice: int) -> list[tuple[str, Confinement, int]]:
    """``--e2e-variants``: ``base;nice=-5;sched=fifo:10,quota=25`` -> (name, confinement, niceness) each.

    Each variant starts from the options given outside ``--e2e-variants`` and overrides them; keys:
    ``quota`` (% of one core), ``cpus``, ``nice``, ``sched``, ``ionice``; ``base`` alone: no override.
    """
    if not spec:
        return [("base", base, nice)]
    out = []
    for item in (v.strip() for v in spec.split(";")):
        if not item:
            continue
        conf, n = base, nice
        for pair in (p.strip() for p in item.split(",")):
            if pair == "base":
                continue
            key, sep, value = pair.partition("=")
            if not sep:
                raise ValueError(f"variant {item!r}: expected key=value, got {pair!r}")
            if key == "quota":
                conf = dataclasses.replace(conf, cpu_quota=float(value) if value != "none" else None)
            elif key == "cpus":
                conf = dataclasses.replace(conf, cpus=value or None)
            elif key == "nice":
                n = int(value)
            elif key == "sched":
                conf = dataclasses.replace(conf, sched=parse_sched(value))
            elif key == "ionice":
                conf = dataclasses.replace(conf, ionice=parse_ionice(value))
            else:
                raise ValueError(f"variant {item!r}: unknown key {key!r} (quota, cpus, nice, sched, ionice)")
        out.append((item, conf, n))
    return out or [("base", base, nice)]


#: the presses counted as the start of a game (first use of every code path after the daemon started).
_EARLY_PLIES = 10


def _print_games(games: dict[str, list[SessionResult]], slowest: int) -> None:
    """Per game: the quota's throttling, the slowest presses with their stages, what the trace saw in them."""
    for label, played in games.items():
        for n, g in enumerate(played, 1):
            head = f"  {label}, game {n}"
            if g.quota_mechanism is not None:
                st, at = g.quota_stats, g.quota_at_play

                def delta(key: str, st: dict[str, int] = st, at: dict[str, int] = at) -> int:
                    return st.get(key, 0) - at.get(key, 0)

                print(f"{head}: CPU quota via {g.quota_mechanism}: throttled in {st.get('nr_throttled', '?')} of "
                      f"{st.get('nr_periods', '?')} periods, {st.get('throttled_us', 0) / 1e3:.0f} ms in all; "
                      f"during the game {delta('nr_throttled')} of {delta('nr_periods')} periods, "
                      f"{delta('throttled_us') / 1e3:.0f} ms")
            worst = sorted(g.presses, key=lambda p: p.total, reverse=True)[:slowest]
            for p in worst:
                journaled = f"{_ms(p.journaled - p.rendered)} / {_ms(p.arrived - p.journaled)}" \
                    if p.journaled is not None else "? / ?"
                inside = [e for e in g.trace if p.written - 0.001 <= e[1] <= p.arrived]
                seen = "; ".join(f"{k} {d}" + (f" {dur * 1e3:.2f} ms" if k == "gc" else "")
                                 for k, _w, dur, d in inside[:6])
                print(f"{head}: ply {p.ply:3d} total {_ms(p.total)} ms (pty+driver {_ms(p.stamped - p.written)}, "
                      f"render->journal / journal+MQTT {journaled})" + (f"  [{seen}]" if seen else ""))
            early = [p.total for p in g.presses if p.ply <= _EARLY_PLIES]
            later = [p.total for p in g.presses if p.ply > _EARLY_PLIES]
            if early and later:
                rest = f"{_ms(percentile(later, 0.5))}/{_ms(percentile(later, 0.99))}/{_ms(max(later))}"
                print(f"{head}: first {_EARLY_PLIES} presses p50/max {_ms(percentile(early, 0.5))}/"
                      f"{_ms(max(early))} ms, the rest p50/p99/max {rest} ms")
            if g.trace:
                during = [e for e in g.trace if e[1] >= g.play_started]
                gcs = [e for e in during if e[0] == "gc"]
                imports = [e[3] for e in during if e[0] == "import"]
                compiles = [e for e in during if e[0] == "compile"]
                pauses = [e[2] for e in gcs]
                print(f"{head} trace during play: {len(gcs)} GC runs (max {max(pauses, default=0) * 1e3:.2f} ms, "
                      f"gen 2: {sum(1 for e in gcs if e[3].startswith('gen 2'))}), {len(compiles)} compile(), "
                      f"{len(imports)} imports" + (f": {', '.join(imports[:12])}" if imports else ""))


def _print_resources(r: SessionResult) -> None:
    table = Table(f"Part 2: resources of the daemon process ({r.plies_played} plies on the DGT emulator)",
                  ("measure", "value", "target"))
    if r.memory:
        rss = [s.rss_kb for s in r.memory]
        table.add("VmRSS at first sample (MB)", f"{rss[0] / 1024:.1f}", "")
        table.add("VmRSS at end of game (MB)", f"{rss[-1] / 1024:.1f}", "")
        table.add("VmRSS max sampled (MB)", f"{max(rss) / 1024:.1f}", "<= 60")
        table.add("VmHWM (MB)", f"{r.memory[-1].hwm_kb / 1024:.1f}", "<= 60")
        table.add("samples", str(len(rss)), "")
    if r.game_wall_s:
        table.add("CPU during the game (% of one core)", f"{100 * r.game_cpu_s / r.game_wall_s:.2f}", "")
        if r.plies_played:
            table.add("CPU per ply (ms)", f"{1e3 * r.game_cpu_s / r.plies_played:.1f}", "")
    if r.idle_cpu_s is not None and r.idle_wall_s:
        table.add(f"CPU idle over {r.idle_wall_s:.1f} s (% of one core)",
                  f"{100 * r.idle_cpu_s / r.idle_wall_s:.2f}", "< 1")
        table.add("  (CPU seconds, /proc tick = 10 ms)", f"{r.idle_cpu_s:.2f}", "")
    print(table.render())
    if r.irregularities:
        print(f"  irregularities raised: {', '.join(r.irregularity_details[:8])}")
    if r.missing_plies or r.exit_status != 0:
        print(f"  plies without a completion: {r.missing_plies[:10]}; daemon exit status {r.exit_status}")


def _print_hall(results: list[HallResult]) -> None:
    table = Table("Part 3: hall scale (simulated boards, boardd processes, one Mosquitto)",
                  ("boards", "processes", "nice", "tempo", "window s", "msgs", "msg/s", "QoS1 lost", "dups",
                   "QoS0/other gaps", "broker CPU %", "daemons CPU %", "bench CPU %", "daemons RSS MB", "load start",
                   "load end"))
    for r in results:
        w = r.window_s or 1.0
        table.add(r.daemons, r.processes, r.nice, f"{r.tempo:g}", f"{r.window_s:.0f}", r.in_window,
                  f"{r.in_window / w:.0f}", r.qos1_lost, r.duplicates, r.other_gaps, f"{100 * r.broker_cpu_s / w:.1f}",
                  f"{100 * r.daemons_cpu_s / w:.1f}", f"{100 * r.bench_cpu_s / w:.1f}",
                  f"{r.daemons_rss_kb / 1024:.0f}", r.load_start, r.load_end)
    print(table.render())
    lat = Table("Part 3 latency: envelope ts -> arrival at the subscriber (ms; ts is in ms, floored)",
                ("boards", "processes", "kind", "n", "p50", "p99", "max"))
    for r in results:
        lat.add(r.daemons, r.processes, "QoS 1 (move, state, irregularity, ...)", len(r.latency_qos1),
                *summary(r.latency_qos1).split())
        lat.add(r.daemons, r.processes, "QoS 0 clock", len(r.latency_clock), *summary(r.latency_clock).split())
    print(lat.render())
    for r in results:
        name = f"{r.daemons} boards in {r.processes} processes (nice {r.nice})"
        print(f"  {name}: online after {r.startup_s:.1f} s ({r.online}/{r.daemons}); topics in window "
              f"{dict(r.by_topic)}; outbox rows {r.outbox_total} ({r.outbox_unacked} unacked at exit); "
              f"exit codes {dict(r.exit_codes)}")
        print(f"  {name}, ts -> arrival p50/p99 ms per 10 s of the window: " + "  ".join(
            f"[{int(t)}s] {p50 * 1e3:.0f}/{p99 * 1e3:.0f}" for t, _n, p50, p99 in r.slices))
        if r.broker_drops:
            print(f"  {name}: the broker dropped messages for a slow client ({len(r.broker_drops)} log "
                  f"lines), e.g. {r.broker_drops[0][-160:]}")
        for err in r.errors:
            print(f"  {name}: {err}")
    print("  QoS0/other gaps: seq numbers neither in an outbox nor received: QoS 0 clock messages not")
    print("  delivered, or numbers never published (each session's last will takes one).")


def main(argv: list[str] | None = None) -> int:
    """Run the selected parts and print their tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART",
                        help=f"parts to run, among {', '.join(PARTS)} (default: e2e resources hall)")
    parser.add_argument("--e2e-plies", type=int, default=90, help="plies of the e2e game (90; 0: all 111)")
    parser.add_argument("--e2e-runs", default="settled,early,zero",
                        help=f"e2e runs, among {', '.join(E2E_RUNS)} (settled,early,zero)")
    parser.add_argument("--e2e-repeat", type=int, default=1,
                        help="games per e2e run, pooled (1; a fresh broker and daemon for each)")
    parser.add_argument("--e2e-load", type=int, default=0,
                        help="busy-looping processes kept running during the e2e part (0)")
    parser.add_argument("--e2e-nice", type=int, default=0,
                        help="niceness of the e2e daemon (0; negative needs root)")
    parser.add_argument("--e2e-cpu-quota", type=float, default=None, metavar="PCT",
                        help="confine the e2e daemon to PCT %% of one core (systemd's CPUQuota=; 25: a Pi-class proxy)")
    parser.add_argument("--e2e-quota-via", choices=MECHANISMS, default="auto",
                        help="how to set the quota (auto: systemd-run --scope, else cgroup v2, else cgroup v1)")
    parser.add_argument("--e2e-cpus", default=None, metavar="LIST",
                        help="pin the e2e daemon and the --e2e-load processes to these CPUs (taskset -c LIST)")
    parser.add_argument("--e2e-sched", default=None, metavar="POLICY[:PRIO]",
                        help="scheduling policy of the e2e daemon, e.g. fifo:10, rr:5 (chrt; CPUSchedulingPolicy=)")
    parser.add_argument("--e2e-ionice", default=None, metavar="CLASS[:LEVEL]",
                        help="I/O class of the e2e daemon: realtime:N, best-effort:N, idle (IOSchedulingClass=)")
    parser.add_argument("--e2e-variants", default=None, metavar="SPEC;SPEC...",
                        help="daemon settings to compare, taking turns game by game, e.g. "
                        "'base;nice=-5;sched=fifo:10' (keys: quota, cpus, nice, sched, ionice; each overrides the "
                        "other --e2e options)")
    parser.add_argument("--e2e-trace", action="store_true",
                        help="trace the daemon's GC pauses and imports (bench/_daemon_trace.py) and show them "
                        "against the slowest presses")
    parser.add_argument("--e2e-slowest", type=int, default=3, help="slowest presses listed per game (3)")
    parser.add_argument("--resource-plies", type=int, default=200, help="plies of the resources game (200)")
    parser.add_argument("--idle-seconds", type=float, default=15.0, help="idle CPU window (15 s)")
    parser.add_argument("--think-scans", type=int, default=1,
                        help="emulator scans between a move and its press in the resources game (1)")
    parser.add_argument("--pause-scans", type=int, default=2, help="emulator scans between a press and the next "
                        "move (2; a scan is 200-250 ms, the engine judges a press 300 ms after it)")
    parser.add_argument("--synchronous", choices=("full", "normal"), default="full",
                        help="journal mode of the e2e/resources daemon (full, the default of boardd)")
    parser.add_argument("--hall", default="50,50,20", help="daemon counts of the hall runs (50,50,20)")
    parser.add_argument("--hall-seconds", type=float, default=60.0, help="measurement window per hall run (60 s)")
    parser.add_argument("--hall-nice", default="0,10,0",
                        help="niceness of the hall daemons, one per run (0,10,0; 0: same priority as the broker and "
                        "the subscriber, 10: they yield to them, as daemons on their own Pis would not compete)")
    parser.add_argument("--hall-boards-per-process", default="1",
                        help="boards per boardd process, one per run (1: one daemon per board)")
    parser.add_argument("--hall-tempo", type=float, default=10.0, help="simulator tempo (10)")
    parser.add_argument("--hall-synchronous", choices=("full", "normal"), default="normal",
                        help="journal mode of the hall daemons (normal, as config/sim.toml)")
    parser.add_argument("--commits", type=int, default=1000, help="journal part: commits per mode")
    parser.add_argument("--dir", type=Path, default=None, help="where to put working files (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the working files (configs, logs, journals)")
    args = parser.parse_args(argv)
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}: choose among {', '.join(PARTS)}")
    parts = args.parts or ["e2e", "resources", "hall"]
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    print(f"bench_daemon  {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}  load average {loadavg()}")
    with tempfile.TemporaryDirectory(prefix="bench-daemon-", dir=args.dir) as tmp:
        work = Path(tempfile.mkdtemp(prefix="bench-daemon-", dir=args.dir)) if args.keep else Path(tmp)
        if args.keep:
            print(f"working files kept in {work}")
        if "e2e" in parts:
            print(f"\n[e2e] load average at start {loadavg()}")
            try:
                confinement = Confinement(cpu_quota=args.e2e_cpu_quota, mechanism=args.e2e_quota_via,
                                          cpus=args.e2e_cpus, sched=parse_sched(args.e2e_sched),
                                          ionice=parse_ionice(args.e2e_ionice))
                variants = _variants(args.e2e_variants, confinement, args.e2e_nice)
                for _name, variant, _nice in variants:
                    variant.check()
            except (ConfinementError, ValueError) as exc:
                print(f"[e2e] refused: {exc}", file=sys.stderr)
                return 2
            print(f"[e2e] {args.e2e_repeat} game(s) per run, {args.e2e_load} busy process(es) alongside"
                  f"{' pinned to CPU ' + args.e2e_cpus if args.e2e_cpus and args.e2e_load else ''}")
            for name, variant, nice in variants:
                print(f"[e2e] daemon {name!r}: niceness {nice}, confinement: {variant.describe()}")
            if len(variants) > 1:
                print("[e2e] the variants take turns game by game (the order rotates each round), so that they see "
                      "the same machine")
            game = _game(*E2E_GAME, args.e2e_plies or None)
            names = [n.strip() for n in args.e2e_runs.split(",") if n.strip()]
            bad = [n for n in names if n not in E2E_RUNS]
            if bad or not names:
                parser.error(f"unknown e2e run(s) {bad}: choose among {', '.join(E2E_RUNS)}")
            runs: list[SessionResult] = []
            games: dict[str, list[SessionResult]] = {}
            first_dir: Path | None = None
            with _cpu_load(args.e2e_load, args.e2e_cpus):
                for i, name in enumerate(names):
                    label, zero_wait, think = E2E_RUNS[name]
                    for k in range(max(1, args.e2e_repeat)):
                        for j in range(len(variants)):
                            vname, variant, nice = variants[(j + k) % len(variants)]
                            vlabel = label if len(variants) == 1 else f"{label} [{vname}]"
                            played = games.setdefault(vlabel, [])
                            sub = f"e2e-{name}" + (f"-{k}" if k else "") + (f"-{vname}" if len(variants) > 1 else "")
                            first_dir = first_dir or work / _safe(sub)
                            played.append(asyncio.run(dgt_session(
                                work / _safe(sub), game, label=vlabel, zero_wait=zero_wait, think_scans=think,
                                pause_scans=args.pause_scans, synchronous=args.synchronous,
                                baseline=i == 0 and k == 0 and j == 0, nice=nice, confinement=variant,
                                trace=args.e2e_trace)))
                    runs.extend(_pool(vlabel, played) for vlabel, played in games.items()
                                if vlabel.startswith(label) and vlabel not in {r.label for r in runs})
            _print_e2e(runs, games)
            _print_games(games, args.e2e_slowest)
            print(f"[e2e] load average at end {loadavg()}")
        if "pipeline" in parts:
            if "e2e" not in parts:
                parser.error("the pipeline part replays the game of the e2e part: run them together")
            print(f"\n[pipeline] load average at start {loadavg()}")
            print("Pipeline steps in-process, replaying the journal of the first e2e run (ms, p50/p99)")
            assert first_dir is not None
            run_pipeline(first_dir, args.dir)
            print(f"[pipeline] load average at end {loadavg()}")
        if "resources" in parts:
            print(f"\n[resources] load average at start {loadavg()}")
            game = _long_random_game(args.resource_plies)
            res = asyncio.run(dgt_session(work / "resources", game, label="resources", zero_wait=False,
                                          idle_s=args.idle_seconds, think_scans=args.think_scans,
                                          pause_scans=args.pause_scans,
                                          synchronous=args.synchronous, baseline=False))
            _print_resources(res)
            print(f"[resources] load average at end {loadavg()}")
        if "hall" in parts:
            print(f"\n[hall] load average at start {loadavg()}")
            results = []
            counts = [int(c) for c in args.hall.split(",") if c.strip()]
            nices = [int(n) for n in args.hall_nice.split(",") if n.strip()] or [0]
            pers = [int(n) for n in args.hall_boards_per_process.split(",") if n.strip()] or [1]
            for i, count in enumerate(counts):
                nice = nices[min(i, len(nices) - 1)]
                per = pers[min(i, len(pers) - 1)]
                results.append(asyncio.run(hall(work / f"hall-{count}-{nice}-{i}", daemons=count,
                                                seconds=args.hall_seconds, tempo=args.hall_tempo,
                                                synchronous=args.hall_synchronous, nice=nice,
                                                boards_per_process=per)))
            _print_hall(results)
            print(f"[hall] load average at end {loadavg()}")
        if "journal" in parts:
            print(f"\n[journal] load average at start {loadavg()}")
            run_journal(args.commits, args.dir)
            print(f"[journal] load average at end {loadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
