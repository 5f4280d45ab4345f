"""``boardd demo``: a simulated board, the real daemon and a broker, printed like a broadcast screen.

Theory of operation
-------------------
Nothing here is a mock-up: the demo runs the real pipeline of ``boardd run``
(:func:`boardd.daemon.service.serve`: journal, engine, contract, outbox, MQTT) in-process,
fed by the simulator (:func:`drivers.sim.simulate_game`) through :class:`DemoBoard`,
a thin driver that delivers the simulated board and clock events in scaled real
time. The broker is the one given with ``--broker host:port`` (e.g. Mosquitto) when
it is reachable, otherwise an embedded amqtt broker on a free local port (the
optional ``broker`` extra). The demo then subscribes to the board's topics like any
consumer and prints moves, clocks, irregularities, flags and the result as they
arrive.

Speed: ``--tempo`` divides every simulated delay *and* the recogniser's timing
parameters (``T_settle``, ``T_latency``, ...) by the same factor, as if the players
handled the pieces that much faster: scaling only the delays would make normal
handling look like sensor noise to the recogniser. Think times are short
(``--think`` median, default 1 s of game time), so a 40-ply game takes about a
minute at the default tempo. Such quick players would *gain* time under an
increment (+30 s a move for 1 s of thought: clocks climbing from 1:30:00 look
like a bug), so the demo's clock runs :data:`DEMO_TIME_CONTROL`, 90 minutes
without increment, unless ``--time-control`` asks for another; when that one's
increment exceeds the think time, the demo says why the clocks grow.

Arbiter commands that the simulation contains (a reinstatement after an injected
illegal move) are sent over MQTT to ``cmd/`` as the arbiter's tablet would. When a
game from a PGN file ends without a board-detectable end (resignation, agreement),
the demo enters the PGN's result with a ``set-result`` command.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

import aiomqtt
import chess
import chess.pgn

from boardd.core import events as ev
from boardd.core.errors import BoarddError
from boardd.core.settings import RulesConfig, Timing
from boardd.daemon.config import (
    BoardConfig,
    CommandsConfig,
    Config,
    DriverConfig,
    JournalConfig,
    LoggingConfig,
    MqttConfig,
)
from boardd.daemon.service import serve

__all__ = ["DemoBoard", "configure_parser", "default_pgn", "run", "scaled_rules"]

_LOGGER = logging.getLogger(__name__)

BOARD_ID = "demo"
DEFAULT_GAME = ("kasparov-deep-blue-1997.pgn", 6)
#: Length of random games (about a minute at the default tempo).
RANDOM_PLIES = 40
#: The demo's clock (see the module docstring): no increment, so that quick simulated players lose time.
DEMO_TIME_CONTROL = "5400"
_TIMING_FIELDS = ("t_flicker", "t_settle", "t_scan", "t_simul", "t_latency", "t_knock", "t_adjust", "t_bounce")


def default_pgn() -> tuple[Path, int] | None:
    """The shared real game next to the checkout (``../shared/data/pgn``), if present."""
    here = Path(__file__).resolve()
    for base in (here.parents[2] / "shared", Path.cwd().parent / "shared", Path.cwd() / "shared"):
        path = base / "data" / "pgn" / DEFAULT_GAME[0]
        if path.is_file():
            return path, DEFAULT_GAME[1]
    return None


def scaled_rules(tempo: float, base: RulesConfig | None = None) -> RulesConfig:
    """*base* rules with every timing parameter divided by *tempo*."""
    base = base or RulesConfig()
    timing = Timing(**{name: getattr(base.timing, name) / tempo for name in _TIMING_FIELDS},
                    d_far=base.timing.d_far)
    return dataclasses.replace(base, timing=timing)


class DemoBoard:
    """A board driver over simulated games: board events paced by ``tempo``, stamped on delivery.

    Games are queued with :meth:`play`; arbiter commands found in a simulation are handed to
    ``on_command`` (the demo publishes them on ``cmd/``). Satisfies ``drivers.base.BoardDriver``.
    """

    def __init__(self, *, tempo: float, time_source: Callable[[], float] = time.monotonic,
                 on_command: Callable[[ev.ArbiterCommand], None] = lambda _c: None) -> None:
        self.tempo = tempo
        self.time_source = time_source
        self.on_command = on_command
        self._games: asyncio.Queue[tuple[list[ev.Event], asyncio.Event]] = asyncio.Queue()
        self.finished = asyncio.Event()
        self.sent: list[object] = []
        self.stats = {"events": 0, "games": 0}

    @property
    def info(self) -> Any:
        """Device information (``drivers.base.DeviceInfo`` when available)."""
        try:
            from drivers.base import DeviceInfo  # noqa: PLC0415

            return DeviceInfo(driver="sim", port="demo", serial="SIM-DEMO", version="demo", clock_model="dgt3000",
                              connected=True)
        except ImportError:  # pragma: no cover - drivers are part of the package
            return None

    async def __aenter__(self) -> DemoBoard:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        return None

    async def send(self, command: object) -> None:
        """Accept driver commands (a clock set by new-game/set-clock) like a DGT board would."""
        self.sent.append(command)

    async def send_confirmed(self, command: object) -> bool:
        """Accept a command and confirm it, as a DGT clock acknowledges a setting.

        The simulated clock of the next queued game starts from its own time control, which the
        demo also gives the ``new-game`` command, so the setting is what the clock then shows.
        """
        self.sent.append(command)
        return True

    def play(self, events: list[ev.Event]) -> asyncio.Event:
        """Queue one simulated game; the returned event is set once all of its events were delivered."""
        done = asyncio.Event()
        self.finished = done
        self._games.put_nowait((events, done))
        return done

    async def events(self) -> AsyncIterator[ev.BoardEvent]:
        """Board and clock events of the queued games, in scaled real time."""
        while True:
            game, done = await self._games.get()
            self.stats["games"] += 1
            previous = game[0].at
            for event in game:
                delay = (event.at - previous) / self.tempo
                previous = event.at
                if delay > 0:
                    await asyncio.sleep(delay)
                if isinstance(event, ev.SquareChanged | ev.BoardSnapshot | ev.ClockReading | ev.LinkChanged
                              | ev.BoardLog):
                    self.stats["events"] += 1
                    yield dataclasses.replace(event, at=self.time_source())
                elif not isinstance(event, ev.NewGame):  # the demo starts games itself
                    self.on_command(event)
            done.set()


# --- output ----------------------------------------------------------------------


def _clock(seconds: object) -> str:
    if not isinstance(seconds, int | float):
        return "-:--:--"
    total = max(0, int(seconds))
    return f"{total // 3600}:{total % 3600 // 60:02d}:{total % 60:02d}"


class Screen:
    """Prints the board's topics in a readable form (a terminal broadcast screen)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.seen: set[tuple[str, int, int]] = set()
        self.state: dict[str, Any] = {}
        self.game_over = asyncio.Event()
        self.moves_completed = 0
        self.flags: set[str] = set()
        self.results: dict[str, Any] = {}
        self.result_event = asyncio.Event()
        self.errors = 0
        self.game_id: str | None = None
        self._status: str | None = None

    def line(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def handle(self, kind: str, raw: bytes) -> None:
        """One message of ``boardd/demo/<kind>``."""
        if kind == "pgn" or kind.startswith("cmd/"):
            return
        payload = json.loads(raw)
        key = (payload.get("board", ""), int(payload.get("session", 0)), int(payload.get("seq", 0)))
        if key in self.seen:
            return
        self.seen.add(key)
        match kind:
            case "move":
                self._move(payload)
            case "state":
                if self.game_id is not None and payload["game"]["id"] != self.game_id:
                    return  # a late state of the previous game
                self.state = payload
                if payload.get("result", "*") != "*":
                    self.game_over.set()
            case "irregularity":
                who = payload.get("side") or "-"
                self.line(f"   ! {payload['code']}{'/' + payload['subtype'] if payload.get('subtype') else ''} "
                          f"({payload['severity']}, {payload['confidence']}, {who}) id {payload['id']} "
                          f"[{payload['status']}] {(payload.get('suggestion') or {}).get('text', '')}".rstrip())
            case "clock":
                for side in ("white", "black"):
                    if (payload.get("flag") or {}).get(side) and side not in self.flags:
                        self.flags.add(side)
                        self.line(f"   ⚑ {side.capitalize()}'s flag fell ({_clock(payload.get(side))})")
            case "event":
                self._event(payload)
            case "status":
                link = "connected" if payload["board_link"].get("connected") else "not connected"
                text = f"   · status {payload['state']}: board {link}"
                if text != self._status:  # boardd republishes the same status (e.g. on every connect)
                    self._status = text
                    self.line(text)
            case "cmd-result":
                self.results[payload["id"]] = payload
                self.result_event.set()
                if not payload.get("ok"):
                    self.errors += 1
                    self.line(f"   · command {payload['id']} refused: {payload.get('error')}")

    def new_game(self) -> None:
        """Forget the previous game's end (its late messages must not end the next one)."""
        self.game_over.clear()
        self.state = {}

    def _move(self, move: dict[str, Any]) -> None:
        if move["phase"] != "completed":
            return
        ply = int(move["ply"])
        number = (ply + 1) // 2
        prefix = f"{number:>3}.    " if move["side"] == "white" else f"{number:>3}...  "
        clock = move.get("clock") or {}
        emt = move.get("emt")
        used = f" (used {emt:.1f}s)" if isinstance(emt, int | float) else ""
        self.moves_completed += 1
        self.line(f"{prefix}{move['san']:<8} White {_clock(clock.get('white'))}  Black {_clock(clock.get('black'))}"
                  f"{used}")

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "GAME_START":
            self.flags.clear()
            self.line("   · game started")
        elif kind == "GAME_END":
            self.line(f"   · game over: {event.get('code')} {event.get('result', '')}".rstrip())
            self.game_over.set()
        elif kind == "ARBITER_ACTION":
            details = {k: v for k, v in event.items()
                       if k not in _ENVELOPE and not k.startswith("at") and v is not None}
            self.line("   · arbiter: " + ", ".join(f"{k} {v}" for k, v in details.items()))
        elif kind in {"TAKEBACK_DETECTED", "REINSTATED", "MOVES_RETRACTED"}:
            self.line(f"   · {kind.lower().replace('_', ' ')} to ply {event.get('to_ply', event.get('ply', '?'))}")
        elif kind:
            self.line(f"   · {kind.lower().replace('_', ' ')}")


_ENVELOPE = {"v", "board", "session", "seq", "ts", "type"}


# --- broker ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


@contextlib.asynccontextmanager
async def _broker(spec: str | None, out: TextIO) -> AsyncIterator[tuple[str, int]]:
    if spec:
        host, _, port_text = spec.rpartition(":")
        host = host or "127.0.0.1"
        try:
            port = int(port_text)
        except ValueError:
            raise SystemExit(f"boardd demo: --broker wants host:port, got {spec!r}") from None
        if _reachable(host, port):
            print(f"broker: {host}:{port}", file=out, flush=True)
            yield host, port
            return
        print(f"broker {host}:{port} is not reachable; using the embedded broker", file=out, flush=True)
    try:
        from amqtt.broker import Broker  # noqa: PLC0415 - optional extra
    except ImportError:
        raise SystemExit("boardd demo: no reachable broker and amqtt is not installed: "
                         "pip install 'boardd[broker]', or pass --broker host:port (e.g. a local Mosquitto)") from None
    port = _free_port()
    broker = Broker({"listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{port}"}},
                     "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}}})
    for name in ("amqtt", "transitions"):
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    await broker.start()
    print(f"broker: embedded amqtt on 127.0.0.1:{port}", file=out, flush=True)
    try:
        yield "127.0.0.1", port
    finally:
        await broker.shutdown()


# --- the demo ----------------------------------------------------------------------


def _count_games(path: Path) -> int:
    count = 0
    with path.open(encoding="utf-8-sig") as stream:
        while chess.pgn.skip_game(stream):
            count += 1
    return count


def _load_game(args: argparse.Namespace, index: int) -> tuple[chess.pgn.Game | None, int]:
    """Game number *index* (0-based) of the demo: from --pgn (cycling through the file), the shared real
    game, or a seeded random game."""
    from drivers.sim import load_pgn_game, random_game  # noqa: PLC0415

    seed = args.seed + index
    if args.random:
        return random_game(seed, max_plies=RANDOM_PLIES), seed
    if args.pgn:
        path, first = Path(args.pgn), args.game
        if not path.is_file():
            raise BoarddError(f"no PGN file {path}")
    else:
        found = default_pgn()
        if found is None:
            return random_game(seed, max_plies=RANDOM_PLIES), seed
        path, first = found
    count = max(_count_games(path), 1)
    return load_pgn_game(path, (first - 1 + index) % count + 1), seed


def _simulate(args: argparse.Namespace, index: int) -> Any:
    from drivers.sim import Injection, SimulationError, simulate_game  # noqa: PLC0415

    game, seed = _load_game(args, index)
    injections = [Injection.parse(text) for text in args.inject] if index == 0 else []
    try:
        return game, simulate_game(game, seed=seed, profile=args.profile, injections=injections,
                                   think_median=args.think, time_control=args.time_control or DEMO_TIME_CONTROL)
    except SimulationError as exc:  # e.g. rook-first at a ply that is not a castling
        raise BoarddError(f"cannot simulate this game: {exc}") from None


def _clock_note(time_control: str, think: float) -> str | None:
    """Why the clocks will climb, when the increment exceeds the simulated players' think time."""
    from boardd.core.clock import TimeControl  # noqa: PLC0415

    try:
        bonus = TimeControl.parse(time_control).bonus_s
    except (BoarddError, ValueError):
        return None
    if bonus <= think:
        return None
    return (f"note: the simulated players think about {think:g} s a move and gain {bonus:g} s a move, "
            "so their clocks grow (use a larger --think or a time control without increment)")


def _injection(text: str) -> str:
    """argparse type of --inject: ``KIND@PLY`` with a known kind, else a usage error listing the kinds."""
    from drivers.sim import Injection  # noqa: PLC0415

    try:
        Injection.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _command_payload(command: ev.ArbiterCommand, cid: str) -> tuple[str, dict[str, object]] | None:
    match command:
        case ev.Reinstate(ply=ply):
            return "reinstate", {"id": cid, "ply": ply}
        case ev.SetClock(white=white, black=black):
            return "set-clock", {"id": cid, "white": white, "black": black}
        case ev.SetResult(result=result, termination=termination):
            return "set-result", {"id": cid, "result": result, "termination": termination}
        case ev.Resolve(irregularity_id=irr, ruling=ruling, accept=accept):
            return "resolve", {"id": cid, "irregularity": irr, "ruling": ruling, "accept": accept}
        case ev.Acknowledge(irregularity_id=irr):
            return "ack", {"id": cid, "irregularity": irr}
        case ev.SetOrientation(white_at_a1=white_at_a1):
            return "flip", {"id": cid, "white_at_a1": white_at_a1}
        case ev.SetPlayers(white=white, black=black):
            return "set-players", {"id": cid, "white": white, "black": black}
    return None


async def _demo(args: argparse.Namespace, out: TextIO) -> int:
    # SIGTERM (service managers, containers, ``timeout``) and SIGINT (Ctrl-C) stop the demo in order: the
    # games, then the daemon (offline status, journal closed), then the broker; exit status 0. The daemon's
    # own handlers set the same event while it runs.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    state_dir = Path(tempfile.mkdtemp(prefix="boardd-demo-"))
    try:
        async with _broker(args.broker, out) as (host, port):
            if stop.is_set():
                return 0
            return await _run_games(args, out, host, port, state_dir, stop=stop)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
        for sig in installed:
            loop.remove_signal_handler(sig)


async def _until_stopped(stop: asyncio.Event, work: Awaitable[int]) -> int:
    """*work*'s result, or 0 when *stop* is set first (a stop signal): *work* is then cancelled."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        stopped = not task.done()
        if stopped:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return 0 if stopped else task.result()


async def _run_games(args: argparse.Namespace, out: TextIO, host: str, port: int, state_dir: Path, *,
                     stop: asyncio.Event) -> int:
    game, sim = _simulate(args, 0)
    info: ev.GameInfo = sim.game
    rules = scaled_rules(args.tempo)
    board = BoardConfig(id=BOARD_ID, driver=DriverConfig(kind="sim"), rules=rules,
                        game=dataclasses.replace(info, id=""),
                        journal=JournalConfig(path=state_dir / f"{BOARD_ID}.sqlite", archive_dir=state_dir / "archive",
                                              synchronous="normal"))
    config = Config(path=state_dir / "demo.toml", mqtt=MqttConfig(host=host, port=port, keepalive=10,
                                                                  client_id=f"boardd-demo-{port}"),
                    boards=(board,), commands=CommandsConfig(), logging=LoggingConfig())
    screen = Screen(out)
    pending: list[tuple[str, dict[str, object]]] = []
    counter = iter(range(1, 1_000_000))

    def queue_command(command: ev.ArbiterCommand) -> None:
        item = _command_payload(command, f"demo-{next(counter)}")
        if item is not None:
            pending.append(item)

    board_driver = DemoBoard(tempo=args.tempo, on_command=queue_command)

    def factory(_kind: str, _options: object, *, time_source: Callable[[], float]) -> DemoBoard:
        board_driver.time_source = time_source
        return board_driver

    root = f"{config.mqtt.prefix}/{BOARD_ID}"
    async with asyncio.TaskGroup() as tg:
        daemon = tg.create_task(serve(config, stop=stop, driver_factory=factory), name="daemon")
        async with aiomqtt.Client(host, port, identifier=f"boardd-demo-screen-{port}") as client:
            await client.subscribe(f"{root}/#", qos=1)
            reader = tg.create_task(_read(client, root, screen), name="screen")
            arbiter = _Arbiter(client, root, screen)
            async def play(game: chess.pgn.Game | None, sim: Any, info: ev.GameInfo) -> int:
                status = 0
                for index in range(args.games):
                    if index > 0:
                        game, sim = _simulate(args, index)
                        info = sim.game
                        screen.new_game()
                        answer = await arbiter.command("new-game", {
                            "id": f"demo-new-{index}", "white": info.white, "black": info.black, "event": info.event,
                            "site": info.site, "round": info.round, "time_control": info.time_control,
                            "edition": info.edition, **({"start_fen": info.start_fen, "chess960": info.chess960}
                                                        if info.start_fen else {})})
                        screen.game_id = str((answer or {}).get("game_id")) if answer else None
                    _banner(screen, info, game)
                    if index == 0 and (note := _clock_note(info.time_control, args.think)):
                        screen.line(note)
                    board_driver.play(sim.events)
                    if not await _follow(args, arbiter, board_driver, pending, game):
                        status = 1
                return status

            try:
                return await _until_stopped(stop, play(game, sim, info))
            finally:
                stop.set()
                reader.cancel()
                await asyncio.wait_for(asyncio.shield(daemon), 15)


async def _read(client: aiomqtt.Client, root: str, screen: Screen) -> None:
    prefix = root + "/"
    async for message in client.messages:
        topic = message.topic.value
        payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
        try:
            screen.handle(topic[len(prefix):], payload)
        except (ValueError, KeyError, TypeError) as exc:
            _LOGGER.warning("could not show %s: %s", topic, exc)


@dataclasses.dataclass
class _Arbiter:
    """The demo's arbiter tablet: publishes commands and waits for their cmd-result."""

    client: aiomqtt.Client
    root: str
    screen: Screen

    async def command(self, name: str, payload: dict[str, object], wait_s: float = 10.0) -> dict[str, Any] | None:
        cid = str(payload["id"])
        await self.client.publish(f"{self.root}/cmd/{name}", json.dumps(payload).encode(), qos=1)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait_s):
                while cid not in self.screen.results:
                    self.screen.result_event.clear()
                    await self.screen.result_event.wait()
        return self.screen.results.get(cid)


def _banner(screen: Screen, info: ev.GameInfo, game: chess.pgn.Game | None) -> None:
    where = ", ".join(x for x in (info.event, info.site, game.headers.get("Date") if game else None)
                      if x and x != "?" and "?" not in x)
    screen.line("")
    screen.line(f"{info.white} - {info.black}" + (f"   ({where})" if where else ""))
    screen.line(f"time control {info.time_control}, Laws of Chess {info.edition}")


async def _follow(args: argparse.Namespace, arbiter: _Arbiter, board: DemoBoard,
                  pending: list[tuple[str, dict[str, object]]], game: chess.pgn.Game | None) -> bool:
    """Until the game is over: forward the simulation's arbiter commands, enter a PGN result at the end."""
    screen = arbiter.screen
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        while pending:
            name, payload = pending.pop(0)
            await arbiter.command(name, payload)
        if screen.game_over.is_set():
            break
        if board.finished.is_set():
            await asyncio.sleep(1.0 / args.tempo + 0.5)  # let the last press be judged
            if screen.game_over.is_set():
                break
            result = game.headers.get("Result", "*") if game is not None else "*"
            termination = (game.headers.get("Termination") if game is not None else None) or "normal"
            if result == "*":  # an unfinished (random) game: the players agree a draw
                result, termination = "1/2-1/2", "agreement"
            screen.line(f"   · the arbiter enters the result {result} ({termination})")
            await arbiter.command("set-result", {"id": f"demo-result-{time.monotonic_ns()}", "result": result,
                                                 "termination": termination})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(screen.game_over.wait(), 10)
            break
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(screen.game_over.wait(), 0.2)
    else:
        screen.line("demo: the game did not finish in time")
        return False
    for _ in range(50):  # the retained state follows the game-end event in the same batch
        if screen.state.get("result", "*") != "*":
            break
        await asyncio.sleep(0.05)
    state = screen.state
    screen.line(f"Result {state.get('result', '?')} ({state.get('termination') or '-'}) after "
                f"{state.get('ply', 0)} plies; open irregularities: {len(state.get('open_irregularities') or [])}")
    return True


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd demo``."""
    parser.add_argument("--broker", metavar="HOST:PORT",
                        help="use this MQTT broker (e.g. Mosquitto); default: an embedded amqtt broker")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--pgn", metavar="FILE", help="play a game from this PGN file (default: a shared real game)")
    source.add_argument("--random", action="store_true", help="play a seeded random game")
    parser.add_argument("--game", type=int, default=1, metavar="N", help="game number in --pgn (default 1)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random game and of the handling")
    parser.add_argument("--tempo", type=float, default=2.0,
                        help="speed factor for handling and the recogniser's timing (default 2)")
    parser.add_argument("--think", type=float, default=1.0, metavar="SECONDS",
                        help="median think time per move, in game seconds (default 1)")
    from drivers.sim import PROFILES, InjectionKind  # noqa: PLC0415

    parser.add_argument("--profile", default="casual", choices=PROFILES,
                        help="how the simulated players handle the pieces (default casual)")
    parser.add_argument("--inject", action="append", default=[], metavar="KIND@PLY", type=_injection,
                        help="inject an irregularity in the first game (repeatable), e.g. illegal-move@5, or "
                             "rook-first@17 (White castles at ply 17 of the default game); kinds: "
                             + ", ".join(k.value for k in InjectionKind))
    parser.add_argument("--time-control", dest="time_control", metavar="TC",
                        help=f"PGN TimeControl of the simulated clock (default {DEMO_TIME_CONTROL}: 90 min without "
                             "increment, as the simulated players think only --think seconds a move)")
    parser.add_argument("--games", type=int, default=1, metavar="N", help="play N games one after the other")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds per game")


def run(args: argparse.Namespace) -> int:
    """``boardd demo``: exits 0 when the game(s) ended normally."""
    if args.tempo <= 0 or args.tempo > 20:
        print("boardd demo: --tempo must be in (0, 20]: faster handling than that is below sensor timing",
              file=sys.stderr)
        return 2
    if args.games < 1:
        print("boardd demo: --games must be >= 1", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_demo(args, sys.stdout))
    except KeyboardInterrupt:
        return 130
    except BoarddError as exc:
        print(f"boardd demo: {exc}", file=sys.stderr)
        return 1
    except ExceptionGroup as group:
        errors = group.subgroup(BoarddError)
        if errors is None:
            raise
        for err in _leaves(errors):
            print(f"boardd demo: {err}", file=sys.stderr)
        return 1


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found
