"""Benchmark of the consumers: ``boardd relay`` and ``boardd web`` with a hall of boards.

    python -m bench.bench_consumers [--boards 200] [--tempo 10] [--duration 60]
    python -m bench.bench_consumers --relay-growth [PLIES ...]   # the relay alone, in process, long games
    python -m bench.bench_consumers --hub-findings [N ...]       # the web hub alone, in process, N findings

A private Mosquitto, the relay and the web service each run in their own process. This
process plays ``--boards`` games from the shared PGNs at ``--tempo`` times real speed with
contract-shaped traffic (move made, state, move completed, state, pgn per ply; a clock
reading per board per game second by default) and holds a public
and an arbiter WebSocket on the web service. It prints:

By default a clock reading is published per board per *game* second (``tempo`` per wall second):
the worst case. ``--clock-rate 1`` is what real clocks send (about one reading per second).

* end-to-end latency from the publication of a move's ``state`` to its arrival in the
  WebSocket client (p50/p90/p99/max);
* CPU (user+system seconds, % of one core) and memory (RSS now, peak) of each service, read
  from /proc;
* what the relay wrote, and whether its final HTTP round PGN has every published move.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import aiomqtt

from boardd.consumers.web.auth import hash_password
from tests.consumers.feed import Feed, load_games, read_pgn_games, script
from tests.mosquitto import Broker, free_port

ROOT = Path(__file__).resolve().parents[1]
PGN = ROOT.parent / "shared" / "data" / "pgn" / "tatamast22.pgn"
PREFIX = "bench"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """user + system CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_mem(pid: int) -> tuple[float, float]:
    """(RSS, peak RSS) in MiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


async def wait_http(url: str, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    async with aiohttp.ClientSession() as http:
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(url) as response:
                    if response.status < 500:
                        return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not come up")
            await asyncio.sleep(0.2)


def spawn(module: str, *argv: str) -> subprocess.Popen[bytes]:
    """Run a service's ``run(args)`` in its own process (the same code path as ``boardd <command>``)."""
    code = ("import argparse, logging, sys, importlib; logging.basicConfig(level=logging.WARNING); "
            f"m = importlib.import_module({module!r}); p = argparse.ArgumentParser(); m.configure_parser(p); "
            "sys.exit(m.run(p.parse_args(sys.argv[1:])))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code, *argv], env=env, cwd=ROOT)


def _scripted_round(boards: int, tempo: float, duration: float) -> list[tuple[Feed, list[float], list[Any]]]:
    games = load_games(PGN, min(boards, 91))
    budget = duration * tempo  # game seconds that will be played
    out = []
    for i in range(boards):
        game = script(games[i % len(games)], board=f"b{i + 1:03d}", board_no=i + 1, round_no=1, seed=i)
        feed = Feed(game, prefix=PREFIX, session=1)
        plies, spent = 0, 0.0
        while plies < len(game.emts) and spent <= budget:
            spent += game.emts[plies]
            plies += 1
        out.append((feed, game.emts, feed.publications(upto=plies)))
    return out


def move_publisher(port: int, boards: int, tempo: float, duration: float, out_path: str) -> None:
    """Child process: plays the boards' moves; writes {"board/ply": monotonic publish time} to out_path."""
    published: dict[str, float] = {}

    async def board(client: aiomqtt.Client, feed: Feed, emts: list[float], steps: list[Any], end: float) -> None:
        for topic, payload, retain, qos in steps[0]:
            await client.publish(topic, payload, qos=qos, retain=retain)
        for ply, step in enumerate(steps[1:], start=1):
            wait = emts[ply - 1] / tempo
            if time.monotonic() + wait > end:
                return
            await asyncio.sleep(wait)
            for index, (topic, payload, retain, qos) in enumerate(step):
                if index == 1:  # the state after the move is made: what the screen shows
                    published[f"{feed.g.board}/{ply}"] = time.monotonic()
                await client.publish(topic, payload, qos=qos, retain=retain)

    async def main() -> None:
        round_ = _scripted_round(boards, tempo, duration)
        async with aiomqtt.Client("127.0.0.1", port, max_inflight_messages=1000) as client:
            client.pending_calls_threshold = 100_000
            end = time.monotonic() + duration
            await asyncio.gather(*(board(client, f, e, s, end) for f, e, s in round_))

    asyncio.run(main())
    Path(out_path).write_text(json.dumps(published))


def clock_publisher(port: int, boards: int, rate: float, duration: float, out_path: str) -> None:
    """Child process: ``rate`` clock readings per board per second (QoS 0), paced in 100 ms slices."""
    import paho.mqtt.client as mqtt

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", port)
    client.loop_start()
    seq = dict.fromkeys(range(boards), 10**6)
    sent = 0
    per_slice = boards * rate / 10.0
    start = time.monotonic()
    owed = 0.0
    board = 0
    while (now := time.monotonic()) - start < duration:
        owed += per_slice
        while owed >= 1.0:
            owed -= 1.0
            seq[board] += 1
            payload = json.dumps({"v": 1, "board": f"b{board + 1:03d}", "session": 1, "seq": seq[board],
                                  "ts": "2026-11-21T14:00:00.000Z", "white": 3000.0 - sent / boards,
                                  "black": 3000.0, "running": "white", "flag": {"white": False, "black": False},
                                  "model": "bench"})
            client.publish(f"{PREFIX}/b{board + 1:03d}/clock", payload, qos=0)
            sent += 1
            board = (board + 1) % boards
        time.sleep(max(0.0, 0.1 - (time.monotonic() - now)))
    client.loop_stop()
    client.disconnect()
    Path(out_path).write_text(json.dumps({"sent": sent, "seconds": time.monotonic() - start}))


class Bench:
    """One run."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.published: dict[tuple[str, int], float] = {}
        self.received: dict[tuple[str, int, str], float] = {}
        self.ws_messages = {"public": 0, "arbiter": 0}
        self.latencies: list[float] = []
        self.arbiter_latencies: list[float] = []
        self.mqtt_received: dict[tuple[str, int], float] = {}
        self.mqtt_latencies: list[float] = []

    async def mqtt_baseline(self, port: int) -> None:
        """A bare subscriber to the states: how long the broker alone takes (the floor of the figures)."""
        async with aiomqtt.Client("127.0.0.1", port) as client:
            await client.subscribe(f"{PREFIX}/+/state", qos=1)
            async for message in client.messages:
                now = time.monotonic()
                raw = message.payload if isinstance(message.payload, bytes) else b"{}"
                body = json.loads(raw)
                self.mqtt_received.setdefault((body["board"], body["ply"]), now)

    async def ws_client(self, url: str, audience: str, http: aiohttp.ClientSession) -> None:
        async with http.ws_connect(url, max_msg_size=64 * 1024 * 1024) as ws:
            async for message in ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                now = time.monotonic()
                self.ws_messages[audience] += 1
                body = json.loads(message.data)
                if body.get("t") == "board":
                    board, ply = body["view"]["board"], body["view"]["ply"]
                elif body.get("t") == "delta" and "ply" in body.get("set", {}):  # the tablet: what changed
                    board, ply = body["board"], body["set"]["ply"]
                else:
                    continue
                self.received.setdefault((board, ply, audience), now)

    async def run(self) -> int:
        args = self.args
        clock_rate = args.clock_rate if args.clock_rate is not None else args.tempo
        workdir = Path(tempfile.mkdtemp(prefix="bench-consumers-"))
        broker = Broker(directory=workdir / "mosquitto", extra_config="max_queued_messages 100000")
        broker.directory.mkdir(parents=True)
        broker.start()
        relay_port, web_port = free_port(), free_port()
        config = workdir / "web.toml"
        config.write_text(f'[web.users]\nbench = "{hash_password("bench-password", n=2**12)}"\n')
        common = ["--port", str(broker.port), "--prefix", PREFIX]
        relay = spawn("boardd.consumers.relay", *common, "--out-dir", str(workdir / "out"),
                      "--http-port", str(relay_port), "--round", "1")
        web = spawn("boardd.consumers.web.app", "-c", str(config), *common, "--http-port", str(web_port))
        context = multiprocessing.get_context("spawn")
        try:
            await wait_http(f"http://127.0.0.1:{relay_port}/healthz")
            await wait_http(f"http://127.0.0.1:{web_port}/healthz")
            jar = aiohttp.CookieJar(unsafe=True)
            async with aiohttp.ClientSession(cookie_jar=jar) as http:
                base = f"http://127.0.0.1:{web_port}"
                credentials = {"username": "bench", "password": "bench-password"}
                login = await http.post(f"{base}/arbiter/login", data=credentials)
                assert login.status == 200, login.status
                ws = f"ws://127.0.0.1:{web_port}"
                sockets = [asyncio.create_task(self.ws_client(f"{ws}/ws", "public", http)),
                           asyncio.create_task(self.ws_client(f"{ws}/arbiter/ws", "arbiter", http)),
                           asyncio.create_task(self.mqtt_baseline(broker.port))]
                await asyncio.sleep(0.5)
                moves_out, clocks_out = workdir / "moves.json", workdir / "clocks.json"
                publishers = [
                    context.Process(target=move_publisher, args=(broker.port, args.boards, args.tempo, args.duration,
                                                                 str(moves_out))),
                    context.Process(target=clock_publisher, args=(broker.port, args.boards, clock_rate,
                                                                  args.duration, str(clocks_out))),
                ]
                for process in publishers:
                    process.start()
                # The children import and script the games first; measure from the first move on.
                while not any(self.received) and all(p.is_alive() for p in publishers):  # noqa: ASYNC110
                    await asyncio.sleep(0.05)  # polling child processes: there is no event to wait on
                cpu0 = {name: proc_cpu(p.pid) for name, p in (("relay", relay), ("web", web))}
                started = time.monotonic()
                while any(p.is_alive() for p in publishers):  # noqa: ASYNC110
                    await asyncio.sleep(0.2)
                await asyncio.sleep(2.0)  # drain
                elapsed = time.monotonic() - started
                cpu = {name: proc_cpu(p.pid) - cpu0[name] for name, p in (("relay", relay), ("web", web))}
                mem = {name: proc_mem(p.pid) for name, p in (("relay", relay), ("web", web))}
                async with http.get(f"http://127.0.0.1:{relay_port}/round-1/games.pgn") as response:
                    relay_games = read_pgn_games(await response.text())
                for task in sockets:
                    task.cancel()
            published = {tuple(k.split("/")): v for k, v in json.loads(moves_out.read_text()).items()}
            self.published = {(b, int(p)): t for (b, p), t in published.items()}
            clocks = json.loads(clocks_out.read_text())
            for key, at in self.mqtt_received.items():
                if key in self.published:
                    self.mqtt_latencies.append(at - self.published[key])
            for (board, ply, audience), at in self.received.items():
                sent = self.published.get((board, ply))
                if sent is not None:
                    (self.latencies if audience == "public" else self.arbiter_latencies).append(at - sent)
            self.report(elapsed, cpu=cpu, mem=mem, relay_games=relay_games, out=workdir / "out" / "round-1",
                        clocks=clocks)
        finally:
            for process in (relay, web):
                process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(10)
                if process.poll() is None:
                    process.kill()
            broker.stop()
        return 0

    def report(self, elapsed: float, *, cpu: dict[str, float], mem: dict[str, tuple[float, float]],
               relay_games: list[Any], out: Path, clocks: dict[str, float]) -> None:
        args = self.args
        plies = len(self.published)
        load = os.getloadavg()
        print(f"consumers bench: {args.boards} boards, tempo {args.tempo}x, {elapsed:.1f} s measured; "
              f"machine load average {load[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"  published: {plies} plies ({plies * 6} move/state/clock/pgn messages, {plies * 6 / elapsed:.0f}/s), "
              f"{clocks['sent']:.0f} clock readings ({clocks['sent'] / clocks['seconds']:.0f}/s)")
        series = (("browser (public /ws)", self.latencies), ("tablet (/arbiter/ws)", self.arbiter_latencies),
                  ("bare MQTT subscriber (baseline)", self.mqtt_latencies))
        for name, values in series:
            if not values:
                print(f"  {name}: no samples")
                continue
            values = sorted(values)
            q = statistics.quantiles(values, n=100, method="inclusive")
            print(f"  latency publication -> {name}: n={len(values)} p50={q[49] * 1000:.1f} ms "
                  f"p90={q[89] * 1000:.1f} ms p99={q[98] * 1000:.1f} ms max={values[-1] * 1000:.1f} ms")
        print(f"  websocket messages: public {self.ws_messages['public']}, arbiter {self.ws_messages['arbiter']}")
        for name in ("relay", "web"):
            print(f"  {name}: CPU {cpu[name]:.1f} s = {100 * cpu[name] / elapsed:.1f} % of one core; "
                  f"RSS {mem[name][0]:.0f} MiB (peak {mem[name][1]:.0f} MiB)")
        published_plies: dict[str, int] = {}
        for board, ply in self.published:
            published_plies[board] = max(published_plies.get(board, 0), ply)
        complete = sum(1 for g in relay_games
                       if len(list(g.mainline_moves())) == published_plies.get(f"b{int(g.headers['Board']):03d}", 0))
        files = len(list(out.glob("game-*.pgn"))) if out.exists() else 0
        print(f"  relay: {len(relay_games)} games over HTTP, {complete} with every published move; "
              f"{files} game files in {out}")


def relay_growth(plies_list: list[int], repeat: int) -> int:
    """In process, no broker: the relay's cost per message as the game grows (issue 12).

    The publications of ``boardd replay --driver dgt`` on the captures of ``bench.bench_replay`` (one random
    game cut after each number of plies) are fed to a :class:`~boardd.consumers.relay.Hall` one by one, and the
    board's broadcast PGN is asked for after every message that changed the record (the relay's worst case:
    its folder writer and HTTP server debounce). Prints the time per message and per rebuild.
    """
    from collections import Counter

    from bench.bench_replay import make_capture
    from boardd.consumers.relay import Hall
    from boardd.daemon.replay import Replay, ReplayOptions
    from drivers.capture import events_from_capture

    print(f"relay growth (in process, best of {repeat}): every record change rebuilds the board's PGN")
    print(f"{'plies':>6} {'messages':>9} {'rebuilds':>9} {'seconds':>8} {'us/message':>11} {'us/rebuild':>11} "
          f"{'final PGN us':>13}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for plies in plies_list:
            path, _, played = make_capture(plies, Path(tmp))
            replay = Replay(None, ReplayOptions(driver="dgt"))
            events = ((None, event) for event in events_from_capture(path, "dgt", stats=Counter()))
            messages = [(pub.topic, pub.payload_bytes()) for pub in replay.run(events)]
            best = None
            for _ in range(repeat):
                hall = Hall(prefix="boardd")
                rebuilds = 0
                started = time.perf_counter()
                for topic, payload in messages:
                    update = hall.handle(topic, payload)
                    if update is not None and update.record_changed:
                        hall.game_pgn(update.board)
                        rebuilds += 1
                elapsed = time.perf_counter() - started
                best = elapsed if best is None else min(best, elapsed)
            assert best is not None
            # One rebuild of the final game from scratch (a fresh hall fed the last state and pgn).
            final = Hall(prefix="boardd")
            last = {topic: payload for topic, payload in messages if topic.endswith(("/state", "/pgn"))}
            for topic, payload in last.items():
                final.handle(topic, payload)
            started = time.perf_counter()
            final.game_pgn("sim")
            one = time.perf_counter() - started
            rows.append((played, len(messages), rebuilds, best, one))
            print(f"{played:>6} {len(messages):>9} {rebuilds:>9} {best:>8.3f} {1e6 * best / len(messages):>11.1f} "
                  f"{1e6 * best / max(rebuilds, 1):>11.1f} {1e6 * one:>13.0f}")
    first, last_row = rows[0], rows[-1]
    growth = (last_row[3] / last_row[1]) / (first[3] / first[1])
    print(f"time per message, {last_row[0]} plies / {first[0]} plies: {growth:.2f}x; "
          f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


def hub_findings(counts: list[int], moves: int, repeat: int) -> int:
    """In process, no broker: the web hub's tablet frames and CPU per board message against the game's findings.

    A board of the shared PGNs plays 10 moves, gets ``N`` sensor-flicker notes (info, ``noted``: about 1 kB each;
    issue 12 saw 635 in one game), then plays ``moves`` more (move made, state, clock, completed, state: the
    contract traffic of ``tests.consumers.feed``). For each message the hub's tablet frames are counted in bytes
    and the hub's CPU (``time.process_time``, best of ``repeat``) is measured two ways in the same run:

    * **delta** (now): ``Hub.take`` and the ``delta`` frames it returns (``boardd.consumers.web.tablet``);
    * **full view** (before): the same ``Hub.take``, then what the hub did on every message before: every
      finding's status derived and all of them folded again (``tests.consumers.test_hub_deltas.from_scratch``)
      and the board's whole view encoded as one ``board`` frame (includes the delta's own work: an upper bound
      of the saving, not a lower one).
    """
    from boardd.consumers.web.hub import Hub, _dumps
    from tests.consumers.test_hub_deltas import from_scratch

    longest = max(load_games(PGN, 30), key=lambda g: len(list(g.mainline_moves())))
    game = script(longest, board="b001", board_no=1, round_no=1, seed=1)
    moves = min(moves, len(game.moves) - 10)
    print(f"web hub (in process, best of {repeat}): a board with N findings plays {moves} moves "
          f"({moves * 5} messages); tablet frame bytes and hub CPU per message")
    print(f"{'N':>5} {'mode':>9} {'frames':>7} {'bytes/frame':>12} {'max frame':>10} {'us/message':>11}")
    rows: dict[tuple[int, str], tuple[float, float]] = {}
    for count in counts:
        for mode in ("full view", "delta"):
            best: float | None = None
            sizes: list[int] = []
            for _ in range(repeat):
                feed = Feed(game, prefix=PREFIX, session=1)
                steps = feed.publications(upto=10 + moves)
                hub = Hub(prefix=PREFIX)
                for topic, payload, _, _ in [p for step in steps[:11] for p in step]:
                    hub.take(topic, payload, 1.0)
                for n in range(count):
                    topic, payload, _, _ = feed.irregularity(f"{n // 3 + 1}-{n % 3 + 1}", code="SENSOR_FLICKER",
                                                             severity="info", status="noted", ply=n * 10 // count,
                                                             incident=None)
                    hub.take(topic, payload, 2.0)
                messages = [(t, p) for step in steps[11:] for t, p, _, _ in step if not t.endswith("/pgn")]
                sizes = []
                started = time.process_time()
                for topic, payload in messages:
                    out = [m for m in hub.take(topic, payload, 3.0) if m.audience == "arbiter"]
                    if mode == "full view" and out:
                        view = {**(hub.arbiter_view("b001", 3.0) or {}), **from_scratch(hub, "b001")}
                        out_text = [_dumps({"t": "board", "view": view})]
                    else:
                        out_text = [m.text for m in out]
                    sizes += [len(text.encode()) for text in out_text]
                elapsed = time.process_time() - started
                best = elapsed if best is None else min(best, elapsed)
            assert best is not None and sizes
            per_message = 1e6 * best / len(messages)
            rows[(count, mode)] = (sum(sizes) / len(sizes), per_message)
            print(f"{count:>5} {mode:>9} {len(sizes):>7} {sum(sizes) / len(sizes):>12.0f} {max(sizes):>10} "
                  f"{per_message:>11.1f}")
    low, high = min(counts), max(counts)
    for mode in ("full view", "delta"):
        print(f"{mode}: {high} findings / {low}: bytes per frame {rows[(high, mode)][0] / rows[(low, mode)][0]:.2f}x, "
              f"CPU per message {rows[(high, mode)][1] / rows[(low, mode)][1]:.2f}x")
    for count in counts:
        print(f"{count} findings, full view / delta: bytes per frame "
              f"{rows[(count, 'full view')][0] / rows[(count, 'delta')][0]:.1f}x, CPU per message "
              f"{rows[(count, 'full view')][1] / rows[(count, 'delta')][1]:.1f}x")
    print(f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=200)
    parser.add_argument("--tempo", type=float, default=10.0, help="game seconds per real second")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of play (bounded run)")
    parser.add_argument("--clock-rate", type=float,
                        help="clock readings per board per wall second (default: tempo, i.e. one per game second)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--relay-growth", type=int, nargs="*", metavar="PLIES",
                        help="instead: the relay alone in process, cost per message for games of these lengths "
                             "(default 40 120 300 400; no broker)")
    parser.add_argument("--hub-findings", type=int, nargs="*", metavar="N",
                        help="instead: the web hub alone in process, tablet frame bytes and CPU per message on a "
                             "board with N findings, delta against the full view (default 10 600; no broker)")
    parser.add_argument("--moves", type=int, default=40, help="--hub-findings: moves played after the findings")
    parser.add_argument("--repeat", type=int, default=3,
                        help="--relay-growth, --hub-findings: runs per case, the best is kept")
    args = parser.parse_args()
    if args.relay_growth is not None:
        return relay_growth(args.relay_growth or [40, 120, 300, 400], args.repeat)
    if args.hub_findings is not None:
        return hub_findings(args.hub_findings or [10, 600], args.moves, args.repeat)
    random.seed(args.seed)
    return asyncio.run(Bench(args).run())


if __name__ == "__main__":
    raise SystemExit(main())
