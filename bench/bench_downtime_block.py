"""Downtime recovery: the longest single engine call at the reconciling dump (the daemon's loop is blocked that long).

Run: ``python -m bench downtime-block [--cases N] [--seed S]``

The daemon calls ``Engine.feed`` / ``Engine.advance`` synchronously in its asyncio loop: while one call runs it
publishes nothing and reads no board or clock event. After a restart the held board is recovered by the search
of ``boardd.core.recovery`` (up to 12 plies, ``Downtime.node_budget`` positions, twice when the running clock
asks for the search one ply longer) inside one such call. This bench replays restarts over the real games of
``../shared/data/pgn`` (seeded draws: a game, a ply, 2-14 plies played while the daemon was down, all pressed,
the clock read again after the restart, so the running side may ask for the longer search) and times every
engine call (``time.thread_time``: the CPU it takes, what a quiet machine waits; ``time.perf_counter`` too).
It prints, over the cases, the longest call of each case (median, p90, max), the engine's CPU over the whole
restart (the sum of its calls: a search done twice counts twice) and the outcome kinds (unique / ambiguous / gap,
and how many ran out of the node budget).

``--mode stepwise`` (or ``both``, the default) runs the same restarts with ``Engine.stepwise`` on, as the daemon
does: every call, and every ``Engine.work()`` step after it until the engine is no longer busy, is timed; the
figure is then the longest single step (what the loop waits for before it can publish or read again). The
outcomes must be those of the plain run.

``--scenario`` (default ``restart``): ``eeprom`` (a restart whose board logged every change and press), ``outage``
(the board link lost while the daemon runs, the clock on its own link), ``outage-jack`` (the clock on the board's
jack, lost with it); see ``_case``.

Timing is of the engine alone (no broker, no journal): it is the time the daemon's loop cannot yield.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn

from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import (
    BoardLog,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Event,
    GameInfo,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
)
from boardd.core.outputs import GameEvent, Output
from boardd.core.settings import RulesConfig

PGN_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pgn"


def _lines(limit: int) -> list[list[chess.Move]]:
    out: list[list[chess.Move]] = []
    for path in sorted(PGN_DIR.glob("*.pgn")):
        with path.open(encoding="utf-8", errors="replace") as handle:
            while len(out) < limit and (game := chess.pgn.read_game(handle)) is not None:
                if game.headers.get("Variant", "Standard").lower() in ("standard", "") and \
                        len(list(game.mainline_moves())) >= 40:
                    out.append(list(game.mainline_moves()))
        if len(out) >= limit:
            break
    return out


def _reading(at: float, running: chess.Color) -> ClockReading:
    side = ClockSide.LEFT if running == chess.WHITE else ClockSide.RIGHT
    return ClockReading(at=at, left=3000.0, right=3000.0, running=side, lever_high=side)


def _changes(board: chess.Board, move: chess.Move) -> list[LoggedChange]:
    """The square changes of *move* (the lifts first, then the puts), as the board logs them."""
    after = board.copy(stack=False)
    after.push(move)
    lifts = [sq for sq in chess.SQUARES if board.piece_at(sq) is not None and board.piece_at(sq) != after.piece_at(sq)]
    puts = [sq for sq in chess.SQUARES if after.piece_at(sq) is not None and board.piece_at(sq) != after.piece_at(sq)]
    return [*(LoggedChange(square=sq, content=None) for sq in lifts if sq not in puts),
            *(LoggedChange(square=sq, content=after.piece_at(sq)) for sq in puts)]


def _case(moves: list[chess.Move], start: int, plies: int, *, stepwise: bool = False,
          scenario: str = "restart") -> tuple[float, float, float, str]:
    """One restart (or link outage): the longest engine call or step (CPU s, wall s), the CPU of them all, the outcome.

    Scenarios: ``restart`` (the held board's search), ``eeprom`` (a restart whose board logged every change and
    press: the log's replay), ``outage`` (the board link lost, the clock on its own link: ``forward_jump``'s search
    at the reconciling dump), ``outage-jack`` (the clock on the board's jack, out of sight with it: the search at
    the dump, then ``_revise``'s at the clock's first reading).
    """
    board = chess.Board()
    for move in moves[:start]:
        board.push(move)
    engine = Engine(RulesConfig(), GameInfo(start_fen=board.fen(), time_control="5400+30"))
    engine.stepwise = stepwise
    after = board.copy()
    for move in moves[start:start + plies + 1]:  # the ply seen first, then those missed
        after.push(move)
    calls: list[tuple[float, float]] = []  # CPU, wall
    outs: list[Output] = []

    def steps() -> None:
        while engine.busy:
            t0, c0 = time.perf_counter(), time.thread_time()
            outs.extend(engine.work())
            calls.append((time.thread_time() - c0, time.perf_counter() - t0))

    def feed(event: Event) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        outs.extend(engine.feed(event))
        calls.append((time.thread_time() - c0, time.perf_counter() - t0))
        steps()

    def advance(at: float) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        outs.extend(engine.advance(at))
        calls.append((time.thread_time() - c0, time.perf_counter() - t0))
        steps()

    feed(BoardSnapshot(at=0.0, squares=tuple(board.piece_at(sq) for sq in chess.SQUARES)))
    feed(_reading(0.2, board.turn))
    # one ply seen before the outage: a record that is not empty (a game whose record is empty takes a board with
    # pieces missing for pieces still being set up, not for captures missed)
    first = moves[start]
    board.push(first)
    feed(BoardSnapshot(at=0.5, squares=tuple(board.piece_at(sq) for sq in chess.SQUARES)))
    feed(_reading(0.8, board.turn))
    advance(0.9)
    start += 1
    outage = scenario.startswith("outage")
    detail = "unplugged" if outage else RESTART_DETAIL
    if scenario != "outage":
        feed(LinkChanged(at=1.0, link=Link.CLOCK, up=False, detail=detail))
    feed(LinkChanged(at=1.0, link=Link.BOARD, up=False, detail=detail))
    log: list[LogEntry] = []
    work = board.copy()
    for i, move in enumerate(moves[start:start + plies]):
        log += _changes(work, move)
        side = ClockSide.LEFT if work.turn == chess.WHITE else ClockSide.RIGHT
        work.push(move)
        log.append(LoggedPress(side=side, shown=3000.0 - 5 * i))
        if scenario == "outage":
            feed(_reading(1.0 + 5.0 * (i + 1), work.turn))  # the clock on its own link: the presses are seen
    t = 1.0 + 5.0 * plies + 1.0
    feed(LinkChanged(at=t, link=Link.BOARD, up=True, detail="pty"))
    if scenario == "eeprom":
        feed(BoardLog(at=t, entries=tuple(log)))
    feed(BoardSnapshot(at=t, squares=tuple(after.piece_at(sq) for sq in chess.SQUARES)))
    if scenario != "outage":
        feed(LinkChanged(at=t, link=Link.CLOCK, up=True, detail="pty"))
        feed(_reading(t + 0.1, after.turn))
    for dt in (0.5, 1.2, 2.0, 3.0, 25.0):
        advance(t + dt)
    events = [o.details for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    kind = str(events[0]["kind"]) if events else "none"
    if events and "incomplete" in events[0]:
        kind += " (budget exhausted)"
    return max(c for c, _ in calls), max(w for _, w in calls), sum(c for c, _ in calls), kind


SCENARIOS = ("restart", "eeprom", "outage", "outage-jack")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--min-plies", type=int, default=2)
    parser.add_argument("--max-plies", type=int, default=14)
    parser.add_argument("--mode", choices=("plain", "stepwise", "both"), default="both")
    parser.add_argument("--scenario", choices=SCENARIOS, default="restart")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    lines = _lines(200)
    cases: list[tuple[list[chess.Move], int, int]] = []
    for _ in range(args.cases):
        moves = rng.choice(lines)
        plies = rng.randint(args.min_plies, args.max_plies)
        cases.append((moves, rng.randrange(0, len(moves) - plies - 1), plies))
    print(f"downtime-block: {args.scenario}: {args.cases} cases of {args.min_plies}-{args.max_plies} plies "
          f"(seed {args.seed})")
    outcomes: dict[bool, list[str]] = {}
    for stepwise in {"plain": (False,), "stepwise": (True,), "both": (False, True)}[args.mode]:
        longest: list[float] = []
        walls: list[float] = []
        totals: list[float] = []
        kinds: list[str] = []
        for moves, start, plies in cases:
            worst, wall, total, kind = _case(moves, start, plies, stepwise=stepwise, scenario=args.scenario)
            longest.append(worst)
            walls.append(wall)
            totals.append(total)
            kinds.append(kind)
        outcomes[stepwise] = kinds
        longest.sort()
        totals.sort()
        p90 = longest[min(len(longest) - 1, int(0.9 * len(longest)))]
        what = "single step (Engine.stepwise: a call or a work())" if stepwise else "single engine call"
        print(f"  {'stepwise' if stepwise else 'plain'}:")
        print(f"    longest {what} per restart (CPU time): median {statistics.median(longest):.3f} s, "
              f"p90 {p90:.3f} s, max {longest[-1]:.3f} s")
        print(f"    the same in wall time (other load counts): median {statistics.median(walls):.3f} s, "
              f"max {max(walls):.3f} s")
        print(f"    engine CPU over the whole restart: median {statistics.median(totals):.3f} s, "
              f"max {totals[-1]:.3f} s, sum {sum(totals):.1f} s")
        print("    outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(Counter(kinds).items())))
    if len(outcomes) == 2:
        same = outcomes[False] == outcomes[True]
        print(f"  stepwise outcomes {'identical to' if same else 'DIFFER from'} the plain ones, restart by restart")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
