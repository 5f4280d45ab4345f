"""Contract-shaped MQTT traffic for scripted games (python-chess), for the consumer tests.

Each game becomes the sequence of publications a boardd daemon would make (mqtt-contract.md):
``status``, ``event`` GAME_START, ``state`` at ply 0, then per ply ``move`` (made), ``state``,
``clock``, ``move`` (completed, with ``clock`` and ``emt``), ``state``, ``pgn``; at the end a
``state`` with the result and the final ``pgn``. Clock times are simulated with a seeded RNG
and are what the tests compare against.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn

Publication = tuple[str, bytes, bool, int]


@dataclass
class ScriptedGame:
    """One game with its simulated clocks: the expected record."""

    board: str
    white: str
    black: str
    event: str
    round: str
    board_no: int
    result: str
    moves: list[chess.Move]
    sans: list[str] = field(default_factory=list)
    clocks: list[float] = field(default_factory=list)  # mover's clock after each ply
    emts: list[float] = field(default_factory=list)


def load_games(path: Path, count: int) -> list[chess.pgn.Game]:
    """The first ``count`` games of a PGN file."""
    games = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        while len(games) < count:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            games.append(game)
    return games


def script(game: chess.pgn.Game, *, board: str, board_no: int, round_no: int, seed: int,
           max_plies: int | None = None, base: float = 5400.0, increment: float = 30.0) -> ScriptedGame:
    """Attach simulated clocks (``base`` + ``increment``) to a real game."""
    rng = random.Random(seed)
    moves = list(game.mainline_moves())[:max_plies]
    scripted = ScriptedGame(board=board, white=game.headers.get("White", "?"), black=game.headers.get("Black", "?"),
                            event=game.headers.get("Event", "?"), round=f"{round_no}.{board_no}",
                            board_no=board_no, result=game.headers.get("Result", "*") if max_plies is None else "*",
                            moves=moves)
    remaining = {chess.WHITE: base, chess.BLACK: base}
    position = game.board()
    for move in moves:
        side = position.turn
        scripted.sans.append(position.san(move))
        emt = float(rng.randint(1, max(1, min(240, int(remaining[side]) // 20))))  # nobody flags
        remaining[side] = remaining[side] - emt + increment
        scripted.clocks.append(remaining[side])
        scripted.emts.append(emt)
        position.push(move)
    return scripted


class Feed:
    """Publications of one board, with the envelope (v, board, session, seq, ts)."""

    def __init__(self, scripted: ScriptedGame, *, prefix: str = "boardd", session: int = 1) -> None:
        self.g = scripted
        self.prefix = prefix
        self.session = session
        self.seq = 0
        self.t0 = dt.datetime(2026, 11, 21, 14, 0, tzinfo=dt.UTC)
        self.now = 0.0

    def iso(self, seconds: float) -> str:
        """Wall-clock ISO time of a game time (the contract's ``ts`` and event-time format)."""
        return (self.t0 + dt.timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _env(self, **payload: Any) -> dict[str, Any]:
        self.seq += 1
        ts = self.iso(self.now)
        return {"v": 1, "board": self.g.board, "session": self.session, "seq": self.seq, "ts": ts, **payload}

    def topic(self, kind: str) -> str:
        return f"{self.prefix}/{self.g.board}/{kind}"

    def _json(self, kind: str, retain: bool, qos: int, **payload: Any) -> Publication:
        return self.topic(kind), json.dumps(self._env(**payload)).encode(), retain, qos

    def state(self, ply: int, clock: dict[str, float], running: str | None, *, result: str = "*",
              open_irregularities: tuple[str, ...] = (), illegal: tuple[int, int] = (0, 0)) -> Publication:
        position = chess.Board()
        for move in self.g.moves[:ply]:
            position.push(move)
        game = {"id": f"{self.g.board}-r{self.g.round}", "white": self.g.white, "black": self.g.black,
                "event": self.g.event, "round": self.g.round, "board_no": self.g.board_no,
                "time_control": "5400+30", "edition": 2023}
        return self._json("state", True, 1, game=game, fen=position.fen(),
                          moves=[m.uci() for m in self.g.moves[:ply]], san=self.g.sans[:ply],
                          turn="white" if position.turn else "black", ply=ply,
                          clock={"white": clock["white"], "black": clock["black"], "running": running},
                          result=result, termination=None if result == "*" else "normal",
                          open_irregularities=list(open_irregularities),
                          illegal_moves={"white": illegal[0], "black": illegal[1]})

    def pgn(self, ply: int, result: str = "*") -> Publication:
        game = chess.pgn.Game()
        game.headers.update({"Event": self.g.event, "Site": "Wijk aan Zee", "Date": "2026.11.21",
                             "Round": self.g.round, "White": self.g.white, "Black": self.g.black,
                             "Result": result})
        node: chess.pgn.GameNode = game
        for i, move in enumerate(self.g.moves[:ply]):
            node = node.add_variation(move)
            node.set_clock(self.g.clocks[i])
            node.set_emt(self.g.emts[i])
        return self.topic("pgn"), str(game).encode(), True, 1

    def irregularity(self, ident: str, *, code: str = "ILLEGAL_MOVE/SELF_CHECK", severity: str = "illegal-move",
                     side: str = "white", ply: int = 1, status: str = "open", ruling: str | None = None,
                     **fields: Any) -> Publication:
        """An ``irregularity`` publication (contract shape); ``fields`` add to it (e.g. ``incident``)."""
        return self._json("irregularity", False, 1, id=ident, code=code, subtype=code.partition("/")[2] or None,
                          severity=severity, confidence="auto", side=side, ply=ply, edition=2023,
                          articles=["7.5.1"],
                          evidence=[{"at": self.iso(self.now - 1.2), "at_s": self.now - 1.2, "event": "L e1"},
                                    {"at": self.iso(self.now - 0.4), "at_s": self.now - 0.4, "event": "P f1 wK"},
                                    {"at": self.iso(self.now), "at_s": self.now, "event": "C W"}],
                          suggestion={"text": "reinstate the position before the illegal move; +2 min to Black",
                                      "move": None, "add_to_opponent_s": 120, "result": None,
                                      "reinstate_ply": ply - 1, "constraints": [], "verify": False},
                          status=status, ruling=ruling, t_raised=self.iso(self.now), t_raised_s=self.now, **fields)

    def cmd_result(self, ident: str, *, ok: bool = True, error: str | None = None) -> Publication:
        """The daemon's answer to a command."""
        extra = {} if ok else {"error": error or "refused"}
        return self._json("cmd-result", False, 1, id=ident, ok=ok, **extra)

    def publications(self, *, upto: int | None = None) -> list[list[Publication]]:
        """Per step (index 0 = game start, i = ply i, last = game end) the publications."""
        steps: list[list[Publication]] = []
        clock = {"white": 5400.0, "black": 5400.0}
        steps.append([
            self._json("status", True, 1, state="online",
                       board_link={"driver": "sim", "port": "sim://", "serial": self.g.board, "connected": True},
                       clock_link={"model": "sim", "connected": True}, software="test"),
            self._json("event", False, 1, type="GAME_START"),
            self.state(0, clock, "white"),
            self.pgn(0),
        ])
        plies = len(self.g.moves) if upto is None else upto
        position = chess.Board()
        for i in range(plies):
            move = self.g.moves[i]
            side = "white" if position.turn else "black"
            other = "black" if side == "white" else "white"
            position.push(move)
            self.now += self.g.emts[i]
            made = {"ply": i + 1, "uci": move.uci(), "san": self.g.sans[i], "side": side,
                    "fen_after": position.fen(), "made_at": self.iso(self.now), "completed_at": None,
                    "completion": None, "clock": None, "emt": None}
            clock = dict(clock)
            clock[side] = self.g.clocks[i]
            steps.append([
                self._json("move", False, 1, phase="made", **made),
                self.state(i + 1, clock, side),
                self._json("clock", False, 0, white=clock["white"], black=clock["black"], running=other,
                           flag={"white": False, "black": False}, model="sim"),
                self._json("move", False, 1, **{**made, "phase": "completed", "completed_at": self.iso(self.now + 0.3),
                                                "completion": "press", "clock": dict(clock),
                                                "emt": self.g.emts[i]}),
                self.state(i + 1, clock, other),
                self.pgn(i + 1),
            ])
        if upto is None:
            steps.append([self.state(plies, clock, None, result=self.g.result), self.pgn(plies, self.g.result)])
        return steps


def interleave(feeds: list[list[list[Publication]]]) -> list[Publication]:
    """Round-robin the steps of several boards, as a hall would publish them."""
    out: list[Publication] = []
    longest = max(len(f) for f in feeds)
    for step in range(longest):
        for feed in feeds:
            if step < len(feed):
                out.extend(feed[step])
    return out


def read_pgn_games(text: str) -> list[chess.pgn.Game]:
    """All games of a PGN text."""
    games = []
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    return games
