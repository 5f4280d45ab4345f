"""``boardd round``: a round from the pairing program to the boards, and its results back.

Theory of operation
-------------------
``boardd round import FILE --round N`` reads the round's pairings (FIDE TRF, JaVaFo/bbpPairings
output with ``--players TRF``, or a CSV/TSV list: :mod:`boardd.core.tournament`), checks the
whole file, maps every board number to a configured board id (``--board-id t{n}`` by default,
``--map 3=t17`` to reassign one), and then:

* with ``--dry-run``: prints one line per game (board, board id, White, Black) and the command
  that would be sent, and sends nothing;
* otherwise: connects to the broker, reads the retained ``status`` of every board (a board
  that the broker does not know stops the import: nothing is sent), publishes the round's
  roster retained on ``{prefix}/_round/{N}`` (docs/tournament.md), sends ``new-game`` to every
  board (players, round, board number; ``event`` and ``time_control`` when given) and prints
  each board's ``cmd-result``. The exit code is 0 only when every board answered ``ok``.

``boardd round results FILE --round N`` reads the same file and mapping, takes the retained
``state`` of every board of the round, and writes the round's results: into the TRF
(``--out``; that round's column on both players' lines) and/or as CSV (``--csv``). A board
whose state shows another game (other round or players) or a game without result is listed
as still playing.

Everything the command needs from the broker is in the MQTT contract
(``../shared/docs/mqtt-contract.md``); the roster topic is boardd's own addition (docs/tournament.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiomqtt
import chess

from boardd.consumers.relay import MqttSettings, load_config
from boardd.core.errors import BoarddError, ConfigError
from boardd.core.tournament import (
    Pairing,
    Player,
    RoundFile,
    TournamentFileError,
    decode,
    describe,
    read_round,
    results_csv,
    trf_result_codes,
    write_trf_results,
)

__all__ = [
    "BoardPlan",
    "BoardsMap",
    "collect_results",
    "configure_parser",
    "import_round",
    "new_game_payload",
    "plan_round",
    "roster_payload",
    "roster_topic",
    "run",
]

_BOARD_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class BoardsMap:
    """Board number -> board id: ``template`` (``{n}`` is the number) unless ``explicit`` says otherwise."""

    template: str = "t{n}"
    explicit: Mapping[int, str] | None = None

    @classmethod
    def parse(cls, template: str, pairs: Sequence[str]) -> BoardsMap:
        """From ``--board-id`` and ``--map`` values (``3=t17`` or ``3=t17,4=t18``).

        Raises:
            ConfigError: a malformed pair, or a template without ``{n}``.
        """
        if "{n}" not in template:
            raise ConfigError(f"--board-id must contain {{n}} (the board number), got {template!r}")
        explicit: dict[int, str] = {}
        for chunk in pairs:
            for pair in filter(None, (p.strip() for p in chunk.split(","))):
                number, sep, board = pair.partition("=")
                if not sep or not number.strip().isdigit() or not _BOARD_ID_RE.fullmatch(board.strip()):
                    raise ConfigError(f"--map expects BOARD_NO=BOARD_ID (e.g. 3=t17), got {pair!r}")
                explicit[int(number)] = board.strip()
        return cls(template, explicit)

    def board_id(self, board_no: int) -> str:
        """The board id of board number *board_no*."""
        if self.explicit and board_no in self.explicit:
            return self.explicit[board_no]
        return self.template.replace("{n}", str(board_no))


@dataclass(frozen=True, slots=True)
class BoardPlan:
    """One game of the round on one board: what is sent there."""

    pairing: Pairing
    board: str
    command: dict[str, Any]


def new_game_payload(pairing: Pairing, round_no: int, *, command_id: str, event: str = "",
                     time_control: str = "", token: str = "", start_fen: str = "") -> dict[str, Any]:
    """The ``new-game`` command of one game (mqtt-contract.md; fields of boardd.daemon.commands).

    *start_fen*: the round's Chess960 start position (X-FEN), sent with ``variant: chess960``.
    """
    payload: dict[str, Any] = {"id": command_id, "white": pairing.white.name[:200], "black": pairing.black.name[:200],
                               "round": str(round_no), "board_no": pairing.board_no}
    if event:
        payload["event"] = event[:200]
    if time_control:
        payload["time_control"] = time_control
    if token:
        payload["token"] = token
    if start_fen:
        payload["start_fen"] = start_fen
        payload["variant"] = "chess960"
    return payload


def chess960_start(text: str) -> str:
    """The X-FEN of ``--chess960``: a start array's number (0-959, Scharnagl) or a Chess960 FEN.

    Raises:
        ConfigError: neither.
    """
    text = text.strip()
    if text.isdigit():
        if not 0 <= int(text) <= 959:
            raise ConfigError(f"--chess960: a start array is numbered 0-959, got {text}")
        return chess.Board.from_chess960_pos(int(text)).fen()
    try:
        board = chess.Board(text, chess960=True)
    except ValueError as exc:
        raise ConfigError(f"--chess960: not a start number nor a FEN: {exc}") from None
    if not board.is_valid():
        raise ConfigError(f"--chess960: not a legal position: {board.status()!r}")
    return board.fen()


def plan_round(round_file: RoundFile, boards: BoardsMap, *, event: str = "", time_control: str = "",
               token: str = "", stamp: str = "", start_fen: str = "") -> list[BoardPlan]:
    """The command for every game; two games on one board id is an error. *start_fen*: the round's Chess960
    start position (every game of a Chess960 round from the same array, as usual), else the boards' own.

    Raises:
        TournamentFileError: a board id that is not a valid id, or used twice.
    """
    plans: list[BoardPlan] = []
    used: dict[str, int] = {}
    for pairing in round_file.games:
        board = boards.board_id(pairing.board_no)
        if not _BOARD_ID_RE.fullmatch(board) or board == "_round":
            raise TournamentFileError(f"board {pairing.board_no} maps to {board!r}, not a board id ([A-Za-z0-9_-])",
                                      line=pairing.line, field="board")
        if board in used:
            raise TournamentFileError(f"boards {used[board]} and {pairing.board_no} both map to board id {board!r}",
                                      line=pairing.line, field="board")
        used[board] = pairing.board_no
        command_id = f"round{round_file.round}-b{pairing.board_no}{'-' + stamp if stamp else ''}"
        plans.append(BoardPlan(pairing, board, new_game_payload(pairing, round_file.round, command_id=command_id,
                                                                event=event, time_control=time_control,
                                                                token=token, start_fen=start_fen)))
    return plans


def roster_topic(prefix: str, round_no: int) -> str:
    """The retained roster of round *round_no* (docs/tournament.md)."""
    return f"{prefix}/_round/{round_no}"


def _player_json(player: Player) -> dict[str, Any]:
    return {"name": player.name, "rank": player.rank or None, "rating": player.rating,
            "fide_id": player.fide_id or None, "title": player.title or None, "federation": player.federation or None}


def roster_payload(round_file: RoundFile, plans: Sequence[BoardPlan], *, event: str = "") -> dict[str, Any]:
    """The roster object: the round's games with board ids, ratings and FIDE ids (docs/tournament.md)."""
    return {
        "v": 1,
        "round": round_file.round,
        "event": event or round_file.event or None,
        "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "games": [{"board_no": p.pairing.board_no, "board": p.board, "white": _player_json(p.pairing.white),
                   "black": _player_json(p.pairing.black)} for p in plans],
        "byes": [{"player": _player_json(b.player), "kind": b.kind} for b in round_file.byes],
    }


# --- MQTT -------------------------------------------------------------------------------------


def _client(settings: MqttSettings, role: str) -> aiomqtt.Client:
    return aiomqtt.Client(settings.host, settings.port, username=settings.username, password=settings.password,
                          identifier=f"boardd-round-{role}-{time.monotonic_ns()}", keepalive=settings.keepalive)


async def _retained(client: aiomqtt.Client, topics: Sequence[str], wanted: set[str], within: float) -> dict[str, Any]:
    """Retained JSON payloads of *topics* by topic; returns once every *wanted* topic came or after *within* s."""
    found: dict[str, Any] = {}
    for topic in topics:
        await client.subscribe(topic, qos=1)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(within):
            async for message in client.messages:
                if not message.retain:
                    continue
                raw = message.payload
                try:
                    found[message.topic.value] = json.loads(raw if isinstance(raw, bytes | bytearray) else str(raw))
                except ValueError:
                    continue
                if wanted <= set(found):
                    break
    return found


async def import_round(settings: MqttSettings, round_file: RoundFile, plans: Sequence[BoardPlan], *,
                       event: str = "", wait: float = 15.0, discover: float = 3.0,
                       out: Any = sys.stdout) -> int:
    """Send the round: check that every board is known, publish the roster, send, print the answers.

    Returns the exit code: 0 when every board answered ``ok``.
    """
    prefix = settings.prefix
    status_topics = {f"{prefix}/{plan.board}/status": plan for plan in plans}
    async with _client(settings, "import") as client:
        statuses = await _retained(client, list(status_topics), set(status_topics), discover)
        missing = [plan for topic, plan in status_topics.items() if topic not in statuses]
        if missing:
            for plan in missing:
                print(f"board {plan.pairing.board_no} ({plan.board}): unknown to the broker (no retained status)",
                      file=out)
            print(f"nothing sent: {len(missing)} board(s) unknown; fix --board-id/--map or start them", file=out)
            return 1
        for topic in status_topics:
            await client.unsubscribe(topic)
        for plan in plans:
            await client.subscribe(f"{prefix}/{plan.board}/cmd-result", qos=1)
        roster = roster_payload(round_file, plans, event=event)
        await client.publish(roster_topic(prefix, round_file.round), json.dumps(roster).encode(), qos=1, retain=True)
        pending = {(plan.board, plan.command["id"]): plan for plan in plans}
        for plan in plans:
            await client.publish(f"{prefix}/{plan.board}/cmd/new-game", json.dumps(plan.command).encode(), qos=1)
        answers: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                async for message in client.messages:
                    board = message.topic.value[len(prefix) + 1:].split("/", 1)[0]
                    try:
                        answer = json.loads(message.payload if isinstance(message.payload, bytes | bytearray)
                                            else str(message.payload))
                    except ValueError:
                        continue
                    if isinstance(answer, dict) and pending.pop((board, answer.get("id")), None) is not None:
                        answers[board] = answer
                    if not pending:
                        break
    failures = 0
    for plan in plans:
        answer = answers.get(plan.board)
        head = f"board {plan.pairing.board_no} ({plan.board}): {describe(plan.pairing)}: "
        if answer is None:
            failures += 1
            print(head + f"NO ANSWER within {wait:g} s", file=out)
        elif answer.get("ok"):
            clock = f", clock {answer['clock_answer']}" if answer.get("clock_answer") else ""
            print(head + f"ok{clock}", file=out)
        else:
            failures += 1
            print(head + f"REFUSED: {answer.get('error', '?')}", file=out)
    print(f"round {round_file.round}: {len(plans) - failures}/{len(plans)} boards started", file=out)
    return 0 if failures == 0 else 1


def _same_game(state: Mapping[str, Any], plan: BoardPlan, round_no: int) -> bool:
    game = state.get("game") or {}
    rnd = str(game.get("round", "")).split(".")[0].strip()
    return (rnd == str(round_no) and game.get("white") == plan.command["white"]
            and game.get("black") == plan.command["black"])


async def collect_results(settings: MqttSettings, plans: Sequence[BoardPlan], round_no: int, *,
                          within: float = 5.0) -> dict[str, Mapping[str, Any] | None]:
    """The retained ``state`` of every board of the round (None: no state, or another game on the board)."""
    topics = {f"{settings.prefix}/{plan.board}/state": plan for plan in plans}
    async with _client(settings, "results") as client:
        states = await _retained(client, list(topics), set(topics), within)
    found: dict[str, Mapping[str, Any] | None] = {}
    for topic, plan in topics.items():
        state = states.get(topic)
        found[plan.board] = state if isinstance(state, dict) and _same_game(state, plan, round_no) else None
    return found


# --- command line -----------------------------------------------------------------------------


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd round import|results``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (("import", "send a round's pairings to the boards (new-game)"),
                       ("results", "write a round's results for the pairing program (TRF, CSV)")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("file", type=Path, metavar="FILE",
                       help="FIDE TRF, JaVaFo/bbpPairings output (with --players) or CSV/TSV pairing list")
        p.add_argument("--round", type=int, required=True, help="the round number")
        p.add_argument("--players", type=Path, help="the tournament's TRF (players of pairing-engine output)")
        p.add_argument("--board-id", default="t{n}", help="board id of board number {n} (default t{n})")
        p.add_argument("--map", action="append", default=[], metavar="NO=ID",
                       help="reassign a board: 3=t17 (repeat, or comma-separated)")
        p.add_argument("-c", "--config", type=Path,
                       help="a TOML file with an [mqtt] table (the web's: it has the arbiter role)")
        p.add_argument("--host", help="MQTT broker host")
        p.add_argument("--port", type=int, help="MQTT broker port")
        p.add_argument("--prefix", help="topic prefix (default boardd)")
        if name == "import":
            p.add_argument("--dry-run", action="store_true", help="print the games and the commands; send nothing")
            p.add_argument("--event", help="the Event of every game (default: the TRF's 012 line, else the boards')")
            p.add_argument("--time-control", help="PGN TimeControl of every game (default: the boards')")
            p.add_argument("--chess960", metavar="N|FEN",
                           help="the round's Chess960 start position for every game: its number 0-959 or its FEN "
                                "(default: the boards' variant; a board configured for Chess960 takes the array "
                                "set up on it)")
            p.add_argument("--token-file", type=Path, help="file with the arbiter command token of the boards")
            p.add_argument("--wait", type=float, default=15.0, help="seconds to wait for the boards' answers")
        else:
            p.add_argument("--out", type=Path, help="write the TRF with the round's results here")
            p.add_argument("--csv", type=Path, help="write the round's results as CSV here")
            p.add_argument("--wait", type=float, default=5.0, help="seconds to wait for the boards' states")


def _settings(args: argparse.Namespace) -> tuple[MqttSettings, Mapping[str, Any]]:
    doc, mqtt = load_config(args.config)
    return MqttSettings(host=args.host or mqtt.host, port=args.port or mqtt.port, username=mqtt.username,
                        password=mqtt.password, prefix=args.prefix or mqtt.prefix, keepalive=mqtt.keepalive), doc


def _token(args: argparse.Namespace, doc: Mapping[str, Any]) -> str:
    path: Path | None = getattr(args, "token_file", None)
    web = doc.get("web", {}) if isinstance(doc.get("web"), dict) else {}
    if path is None and web.get("command_token_file"):
        path = Path(str(web["command_token_file"]))
    if path is not None:
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the token: {exc.strerror or exc}", path=str(path)) from None
    return str(web.get("command_token", "") or "")


def _read(args: argparse.Namespace) -> tuple[RoundFile, bytes, bytes | None]:
    try:
        data = args.file.read_bytes()
        players = args.players.read_bytes() if args.players else None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=str(exc.filename or args.file)) from None
    return read_round(data, args.round, players_trf=players, source=str(args.file)), data, players


def run(args: argparse.Namespace) -> int:
    """``boardd round import|results``."""
    try:
        settings, doc = _settings(args)
        round_file, data, players = _read(args)
        boards = BoardsMap.parse(args.board_id, args.map)
        if args.action == "import":
            event = args.event or round_file.event
            time_control = args.time_control or ""
            if time_control:
                from boardd.core.clock import TimeControl  # noqa: PLC0415

                try:
                    TimeControl.parse(time_control)
                except ValueError as exc:
                    raise ConfigError(f"--time-control: {exc}") from None
            start_fen = chess960_start(args.chess960) if args.chess960 else ""
            plans = plan_round(round_file, boards, event=event, time_control=time_control, token=_token(args, doc),
                               stamp=time.strftime("%H%M%S", time.gmtime()), start_fen=start_fen)
            return _run_import(args, settings, round_file, plans, event)
        plans = plan_round(round_file, boards)
        return _run_results(args, settings, round_file, plans, data=data, players=players)
    except (BoarddError, aiomqtt.MqttError) as exc:
        print(f"boardd round {args.action}: {exc}", file=sys.stderr)
        return 2


def _run_import(args: argparse.Namespace, settings: MqttSettings, round_file: RoundFile, plans: list[BoardPlan],
                event: str) -> int:
    print(f"round {round_file.round}: {len(plans)} games from {args.file} ({round_file.format}; "
          f"{round_file.board_rule})")
    for plan in plans:
        shown = {k: v for k, v in plan.command.items() if k != "token"}
        print(f"board {plan.pairing.board_no:>3} {plan.board:<8} {describe(plan.pairing)}"
              + (f"   -> {settings.prefix}/{plan.board}/cmd/new-game {json.dumps(shown)}" if args.dry_run else ""))
    for bye in round_file.byes:
        print(f"no board: {bye.player.name} ({'bye ' + bye.kind if bye.kind else 'not paired'})")
    if args.dry_run:
        print(f"dry run: nothing sent ({len(plans)} new-game commands and the roster "
              f"{settings.prefix}/_round/{round_file.round} would be)")
        return 0
    code: int = asyncio.run(import_round(settings, round_file, plans, event=event, wait=args.wait))
    return code


def _run_results(args: argparse.Namespace, settings: MqttSettings, round_file: RoundFile, plans: list[BoardPlan],
                 *, data: bytes, players: bytes | None) -> int:
    states: dict[str, Mapping[str, Any] | None] = asyncio.run(
        collect_results(settings, plans, round_file.round, within=args.wait))
    finished: dict[tuple[int, int], tuple[str, str]] = {}
    rows: list[tuple[Pairing, str, str]] = []
    playing: list[BoardPlan] = []
    for plan in plans:
        state = states.get(plan.board)
        result = str(state.get("result", "*")) if state else "*"
        termination = str(state.get("termination") or "") if state else ""
        codes = trf_result_codes(result, termination)
        rows.append((plan.pairing, result, termination))
        if codes is None:
            playing.append(plan)
            continue
        if plan.pairing.white.rank and plan.pairing.black.rank:
            finished[(plan.pairing.white.rank, plan.pairing.black.rank)] = codes
        print(f"board {plan.pairing.board_no:>3} {plan.board:<8} {describe(plan.pairing)}  {result}"
              + (f" ({termination})" if termination and termination != "normal" else ""))
    for plan in playing:
        why = "still playing" if states.get(plan.board) else "no state of this game on the board"
        print(f"board {plan.pairing.board_no:>3} {plan.board:<8} {describe(plan.pairing)}  * ({why})")
    if args.out:
        trf = players if round_file.format == "pairing-engine" else data
        if round_file.format == "csv" or trf is None:
            raise ConfigError("--out writes a TRF: give a TRF (or pairing-engine output with --players)")
        text = write_trf_results(decode(trf), round_file.round, finished)
        encoding = "utf-8"
        try:
            trf.decode("utf-8")
        except UnicodeDecodeError:
            encoding = "latin-1"
        args.out.write_bytes(text.encode(encoding, errors="replace"))
        print(f"wrote {args.out}: {len(finished)} result(s) in round {round_file.round}")
    if args.csv:
        args.csv.write_text(results_csv(round_file.round, rows), encoding="utf-8")
        print(f"wrote {args.csv}")
    print(f"round {round_file.round}: {len(plans) - len(playing)}/{len(plans)} games finished"
          + (f"; still playing: boards {', '.join(str(p.pairing.board_no) for p in playing)}" if playing else ""))
    return 0 if not playing else 3
