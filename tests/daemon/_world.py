"""A simulated board for daemon tests: a "world" that plays a game and survives daemon crashes.

The world is a fixed script of board and clock events at world times. It keeps
its progress in a small JSON file, so when the daemon process is killed and
restarted the world resumes where it was (as if the players waited for the
arbiter to restart the board): the driver first reports a full snapshot of the
physical position (like a real board after a reconnect), then continues.
Events that were emitted but never journaled by a killed daemon are therefore
covered by that snapshot.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import chess

from boardd.core import events as ev


@dataclass(frozen=True)
class Step:
    t: float
    kind: str  # "sq", "clock" or "link" (the clock's link lost, up False, or back)
    square: int = 0
    piece: str | None = None
    running: str | None = None
    left: float = 0.0
    right: float = 0.0
    up: bool = True


def script(moves: list[str], *, seed: int, base: float = 300.0, incidents: bool = False,
           long_outage: bool = False) -> list[Step]:
    """Clean one-hand handling of *moves* with a press after each move, at world times.

    *incidents*: at seeded plies, an illegal move corrected as the Laws have it (7.5.1: the mover puts a piece
    on a square it cannot reach and presses, the arbiter pauses the clock, the position is put back, the clock
    restarted with 2 minutes more for the opponent, 7.5.5; then the move), and the clock's link lost for a
    move (no readings meanwhile; the press of that move unseen, the next reading shows it).

    *long_outage* (with *incidents*): the clock's link stays lost for two or three moves (:func:`outage_span`), each
    pressed unseen, a reply sometimes begun before the press of the move it answers (the move was made: the
    opponent has the move, 1.3); the last mover presses before the link is back, or after it (the first reading
    shows his clock still running, the next one his press). Those moves' clocks run as clocks do (each from the
    press before to its own), so the first reading after the return shows what the presses left.
    """
    rng = random.Random(seed)
    board = chess.Board()
    steps: list[Step] = []
    t = 0.5
    clock = {chess.WHITE: base, chess.BLACK: base}
    steps.append(Step(t, "clock", running="left", left=base, right=base))
    illegal_at, outage_at = _incidents(rng, len(moves)) if incidents else (-1, -1)
    span, last_pressed = outage_span(moves, seed=seed) if long_outage and incidents else (1, True)
    timing = random.Random(seed * 7919 + 17)  # (its own stream: the seed's other draws as without the long outage)
    last_press = t  # when the clock last started the side to move's clock (a long outage's times)
    early: tuple[chess.Color, float] | None = None  # a long outage's press made after the reply's first lift

    def reading(running: str | None) -> Step:
        return Step(t, "clock", running=running, left=round(clock[chess.WHITE]), right=round(clock[chess.BLACK]))

    for index, uci in enumerate(moves):
        move = chess.Move.from_uci(uci)
        mover = board.turn
        piece = board.piece_at(move.from_square)
        assert piece is not None
        side = "left" if mover == chess.WHITE else "right"
        other = "right" if mover == chess.WHITE else "left"
        if index == outage_at:
            t += rng.uniform(0.1, 0.3)
            steps.append(Step(t, "link", up=False))
        if index == illegal_at:
            target = _unreachable(board, move.from_square, rng)
            t += rng.uniform(0.3, 0.6)
            steps.append(Step(t, "sq", move.from_square, None))
            t += 0.15
            steps.append(Step(t, "sq", target, piece.symbol()))
            t += rng.uniform(0.6, 0.8)
            clock[mover] -= 1.0
            steps.append(reading(other))  # the illegal move's press
            t += rng.uniform(0.8, 1.2)
            clock[not mover] -= 1.0
            steps.append(reading(None))  # the arbiter pauses the clock
            t += rng.uniform(0.8, 1.2)
            steps.append(Step(t, "sq", target, None))
            t += 0.15
            steps.append(Step(t, "sq", move.from_square, piece.symbol()))  # the position put back
            t += rng.uniform(1.0, 1.5)
            clock[not mover] += 120.0
            steps.append(reading(side))  # restarted: the offender's clock, +2 min for the opponent
        think = rng.uniform(0.3, 0.6)
        t += think
        if span == 1 or not outage_at <= index < outage_at + span:
            clock[mover] -= think
        if early is not None:  # the move before pressed after this one's first lift (below): its clock stops then
            clock[early[0]] -= t + early[1] - last_press
            last_press = t + early[1]
            early = None
        if board.is_castling(move):
            rook_from, rook_to = _castling_rook(board, move)
            for sq, pc in ((move.from_square, None), (move.to_square, piece.symbol()),
                           (rook_from, None), (rook_to, "R" if mover else "r")):
                t += 0.12
                steps.append(Step(t, "sq", sq, pc))
        else:
            steps.append(Step(t, "sq", move.from_square, None))
            if board.is_en_passant(move):
                t += 0.12
                steps.append(Step(t, "sq", move.to_square + (-8 if mover else 8), None))
            elif board.piece_at(move.to_square) is not None:
                t += 0.12
                steps.append(Step(t, "sq", move.to_square, None))
            placed = chess.Piece(move.promotion, mover).symbol() if move.promotion else piece.symbol()
            t += 0.15
            steps.append(Step(t, "sq", move.to_square, placed))
        t += rng.uniform(0.6, 0.8)
        board.push(move)
        if span > 1 and outage_at <= index < outage_at + span:
            # a long outage: this press unseen (or, the last move's, maybe made after the link is back)
            last = index == outage_at + span - 1
            if not last and timing.random() < 0.3:
                early = (mover, timing.uniform(0.05, 0.3))  # pressed just after the reply's first lift
                continue
            if not last or last_pressed:
                clock[mover] -= t - last_press
                last_press = t
            if not last:
                continue
            t += timing.uniform(1.5, 2.0)
            steps.append(Step(t, "link", up=True))
            t += 0.05
            clock[not mover if last_pressed else mover] -= t - last_press
            steps.append(reading(other if last_pressed else side))  # the first reading: the lever as left
            last_press = t
            if not last_pressed:
                t += timing.uniform(0.3, 0.8)
                clock[mover] -= t - last_press
                last_press = t
                steps.append(reading(other))  # his press, seen
            continue
        if index == outage_at:  # the press unseen; the link back a move later, its reading shows it
            t += rng.uniform(1.5, 2.0)
            steps.append(Step(t, "link", up=True))
            t += 0.05
        steps.append(reading(other))
        last_press = t
    return steps


def outage_span(moves: list[str], *, seed: int) -> tuple[int, bool]:
    """The moves :func:`script` with ``incidents`` and ``long_outage`` makes while the clock's link is lost (from
    :func:`incident_moves`' second index: two or three, clear of the illegal move and the ply before it, so one
    when that follows too soon), and whether the last of them is pressed before the link is back."""
    illegal_at, outage_at = incident_moves(moves, seed=seed)
    if outage_at < 0:
        return 1, True
    rng = random.Random(seed * 7919 + 5)
    span = rng.choice((2, 3))
    end = illegal_at - 1 if illegal_at > outage_at else len(moves)
    span = max(1, min(span, end - outage_at))
    last_pressed = rng.random() < 0.6
    return span, last_pressed or span == 1  # (one move: the default outage, pressed unseen)


def incident_moves(moves: list[str], *, seed: int) -> tuple[int, int]:
    """The indices (in *moves*) of the moves :func:`script` with ``incidents`` plays with an illegal move first and
    with the clock's link lost (-1: none)."""
    return _incidents(random.Random(seed), len(moves))


def _incidents(rng: random.Random, count: int) -> tuple[int, int]:
    illegal_at = rng.randrange(1, count) if count > 2 else -1
    outage_at = rng.choice([i for i in range(1, count) if abs(i - illegal_at) > 1] or [-1]) if count > 4 else -1
    return illegal_at, outage_at


def _unreachable(board: chess.Board, square: int, rng: random.Random) -> int:
    """An empty square of the middle ranks the piece on *square* cannot move to (an illegal move's target)."""
    legal = {m.to_square for m in board.legal_moves if m.from_square == square}
    empty = [sq for sq in chess.SQUARES if 2 <= chess.square_rank(sq) <= 5 and board.piece_at(sq) is None
             and sq not in legal and chess.square_distance(sq, square) >= 2]
    return rng.choice(empty)


def _castling_rook(board: chess.Board, move: chess.Move) -> tuple[int, int]:
    rank = chess.square_rank(move.from_square)
    if chess.square_file(move.to_square) > chess.square_file(move.from_square):
        return chess.square(7, rank), chess.square(5, rank)
    return chess.square(0, rank), chess.square(3, rank)


def to_event(step: Step, at: float) -> ev.BoardEvent:
    if step.kind == "link":
        return ev.LinkChanged(at=at, link=ev.Link.CLOCK, up=step.up, detail="clock cable")
    if step.kind == "sq":
        return ev.SquareChanged(at=at, square=step.square,
                                content=chess.Piece.from_symbol(step.piece) if step.piece else None)
    side = ev.ClockSide(step.running) if step.running else None
    return ev.ClockReading(at=at, left=step.left, right=step.right, running=side, lever_high=side)


def physical(steps: list[Step]) -> ev.BoardSnapshot:
    squares: list[ev.Content] = [chess.Board().piece_at(sq) for sq in chess.SQUARES]
    for step in steps:
        if step.kind == "sq":
            squares[step.square] = chess.Piece.from_symbol(step.piece) if step.piece else None
    return ev.BoardSnapshot(at=0.0, squares=tuple(squares))


@dataclass
class _Info:
    driver: str = "world"
    port: str = "world"
    serial: str | None = "W-1"
    version: str | None = None
    clock_model: str | None = "sim"
    connected: bool = True


class WorldBoard:
    """A BoardDriver over :func:`script`, resumable through *state_file*.

    ``tempo`` divides world time: world second ``t`` happens ``t / tempo`` real seconds after the resume.
    """

    def __init__(self, steps: list[Step], *, state_file: Path, tempo: float = 1.0,
                 time_source: Callable[[], float] = time.monotonic) -> None:
        self.steps = steps
        self.state_file = state_file
        self.tempo = tempo
        self.time_source = time_source
        self.info = _Info()
        self.sent: list[Any] = []

    async def __aenter__(self) -> WorldBoard:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        return None

    async def send(self, command: Any) -> None:
        self.sent.append(command)

    async def send_confirmed(self, command: Any) -> bool:
        """The world's clock acknowledges every setting (as a DGT clock in mode 23 does)."""
        self.sent.append(command)
        return True

    def _load(self) -> int:
        try:
            return int(json.loads(self.state_file.read_text())["next"])
        except (OSError, ValueError, KeyError):
            return 0

    def _save(self, index: int) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"next": index}))
        tmp.replace(self.state_file)

    async def events(self) -> AsyncIterator[ev.BoardEvent]:
        index = self._load()
        snap = physical(self.steps[:index])
        yield ev.BoardSnapshot(at=self.time_source(), squares=snap.squares)
        last_clock = next((s for s in reversed(self.steps[:index]) if s.kind != "sq"), None)
        if last_clock is not None and last_clock.kind == "clock":  # (the clock's link down: no reading)
            yield to_event(last_clock, self.time_source())
        # Each step comes its scripted interval after the one before, from when that one was emitted: a loop late
        # to wake (a loaded machine) delays the rest of the game, as players who wait, and never squeezes the steps
        # it missed into a burst (an opponent's lift a few ms after the press, within the engine's latency
        # window, made a POSITION_MISMATCH_AT_PRESS of a clean game: tests/daemon/test_crash.py under load).
        last_real = time.monotonic()
        last_world = self.steps[index].t if index < len(self.steps) else 0.0
        while index < len(self.steps):
            step = self.steps[index]
            due = last_real + max(0.0, step.t - last_world) / self.tempo
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            last_real, last_world = time.monotonic(), step.t
            index += 1
            self._save(index)
            yield to_event(step, self.time_source())
        await asyncio.Event().wait()  # the board stays connected after the game


def factory(steps: list[Step], state_file: Path, tempo: float) -> Callable[..., WorldBoard]:
    def make(_kind: str, _options: object, *, time_source: Callable[[], float]) -> WorldBoard:
        return WorldBoard(steps, state_file=state_file, tempo=tempo, time_source=time_source)
    return make


def from_options(options: dict[str, Any], *, time_source: Callable[[], float]) -> WorldBoard:
    """``[board.driver] kind = "external"``, ``factory = "tests.daemon._world:from_options"``.

    Options: ``steps`` (JSON file written by :func:`save_steps`), ``state`` (progress file), ``tempo``.
    """
    steps = [Step(**s) for s in json.loads(Path(options["steps"]).read_text())]
    return WorldBoard(steps, state_file=Path(options["state"]), tempo=float(options.get("tempo", 1.0)),
                      time_source=time_source)


def world_board_table(tmp_path: Path, board: str, steps_file: Path, tempo: float, *, white: str,
                      black: str | None = None) -> str:
    """The ``[[board]]`` TOML table of a daemon config whose board *board* is a :class:`WorldBoard`.

    The board replays *steps_file* (see :func:`save_steps`) at *tempo*, keeps its progress in
    ``<tmp_path>/<board>-world.json`` and plays a 300+0 game with the timing scaled by *tempo*.
    """
    from tests.daemon._helpers import scaled_timing

    black_line = "" if black is None else f'black = "{black}"\n'
    return f"""
[[board]]
id = "{board}"
[board.driver]
kind = "external"
factory = "tests.daemon._world:from_options"
steps = "{steps_file}"
state = "{tmp_path / (board + '-world.json')}"
tempo = {tempo}
[board.game]
time_control = "300+0"
white = "{white}"
{black_line}{scaled_timing(tempo)}
"""


def save_steps(steps: list[Step], path: Path) -> None:
    from dataclasses import asdict

    path.write_text(json.dumps([asdict(s) for s in steps]))
