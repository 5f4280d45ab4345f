"""A rig for the arbiter's correction audit: real correction procedures (7.5.1, 7.5.2, 7.4, 7.6) with random order
and timing, built from the Laws, not from the simulator.

The hands: pieces lifted and put back in any order, several lifted at once and put back one at a time, two
hands (lifts inside one scan, far apart), the wrong piece lifted first and put back, a piece put down on a
wrong square and moved on; fast (one scan) or slow (seconds). The clock: paused first or not, times corrected
or not, the lever moved while paused, at the restart or by the arbiter pressing on a running clock.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import chess

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, SquareChanged
from boardd.core.outputs import Irregularity, IrregularityRaised, Output, Severity
from boardd.core.settings import Regime, RulesConfig
from tests.core.scenario import ClockSim, move_events, start_clock


class Rig:
    """An engine fed one event at a time (timers fired as the daemon does), with a clock and the game's truth."""

    def __init__(self, start_fen: str | None, *, edition: int = 2023, tc: str = "5400+30",
                 regime: Regime = Regime.COMPETITION, seconds: float = 5400.0) -> None:
        self.engine = Engine(RulesConfig(regime=regime),
                             GameInfo(edition=edition, time_control=tc, start_fen=start_fen))
        self.board = chess.Board(start_fen) if start_fen else chess.Board()
        self.phys: dict[int, chess.Piece] = dict(self.board.piece_map())
        self.outs: list[Output] = []
        self.clock: ClockSim
        self.clock, reading = start_clock(self.board.turn, -100.0, seconds=seconds)
        self.feed(reading)
        self.t = -99.0

    def feed(self, event: Event) -> None:
        while (deadline := self.engine.next_deadline()) is not None and deadline < event.at:
            self.outs += self.engine.advance(deadline)
        self.outs += self.engine.feed(event)

    def lift(self, sq: int, at: float | None = None) -> None:
        assert sq in self.phys, chess.square_name(sq)
        del self.phys[sq]
        self.feed(SquareChanged(at=self.t if at is None else at, square=sq, content=None))

    def place(self, sq: int, piece: chess.Piece, at: float | None = None) -> None:
        assert sq not in self.phys, chess.square_name(sq)
        self.phys[sq] = piece
        self.feed(SquareChanged(at=self.t if at is None else at, square=sq, content=piece))

    def by_hand(self, rng: random.Random, move: chess.Move, piece: chess.Piece, *,
                think: tuple[float, float] = (0.3, 1.5)) -> None:
        """*move* (legal or not) made by hand, as players do: the piece lifted, a piece on the target square lifted,
        *piece* put down there, then *think* seconds (randomised) before whatever comes next (the press)."""
        self.lift(move.from_square)
        self.t += rng.uniform(0.2, 0.8)
        if move.to_square in self.phys:
            self.lift(move.to_square)
            self.t += rng.uniform(0.05, 0.3)
        self.place(move.to_square, piece)
        self.t += rng.uniform(*think)

    def play(self, move: chess.Move, gap: float = 1.5) -> None:
        """A clean legal move (one hand) and the press."""
        for ev in move_events(self.board, move, self.t, self.clock):
            if isinstance(ev, SquareChanged):
                if ev.content is None:
                    self.phys.pop(ev.square, None)
                else:
                    self.phys[ev.square] = ev.content
            self.feed(ev)
        self.board.push(move)
        self.t += gap

    def press(self, color: chess.Color) -> None:
        self.feed(self.clock.press(color, self.t))

    def settle(self, seconds: float = 10.0) -> None:
        self.t += seconds
        self.outs += self.engine.advance(self.t)

    def raised(self) -> list[Irregularity]:
        return [o.irregularity for o in self.outs if isinstance(o, IrregularityRaised)]

    def strong(self) -> list[Irregularity]:
        return [i for i in self.raised() if i.severity is not Severity.INFO]

    def record(self) -> list[str]:
        return [m.uci if m.legal else "!" + m.uci for m in self.engine.state.moves]


@dataclass(frozen=True, slots=True)
class Hands:
    """How the hands restore: the style and the pace."""

    style: str  # "one-by-one" | "lift-all-first" | "mixed"
    pace: str  # "fast" | "normal" | "slow"
    two_hands: bool  # two lifts (or places) inside one scan
    wrong_piece: bool  # a piece that is right lifted first and put back
    wrong_square: bool  # a piece put down on a wrong empty square first, then moved on


def random_hands(rng: random.Random, *, noisy: bool = True) -> Hands:
    """Random hands; *noisy*: the wrong piece first and detours too (the audit keeps them to a paused clock: on
    a running clock who handles the pieces is ambiguous, see the audit's notes)."""
    wrong_piece, wrong_square = rng.random() < 0.3, rng.random() < 0.2
    return Hands(style=rng.choice(("one-by-one", "lift-all-first", "mixed")),
                 pace=rng.choice(("fast", "normal", "normal", "slow")),
                 two_hands=rng.random() < 0.3, wrong_piece=noisy and wrong_piece, wrong_square=noisy and wrong_square)


def gap(rng: random.Random, pace: str) -> float:
    if pace == "fast":
        return rng.uniform(0.05, 0.3)
    if pace == "slow":
        return rng.uniform(1.0, 4.0)
    return rng.uniform(0.25, 1.2)


def restore_steps(rng: random.Random, phys: dict[int, chess.Piece], target: chess.BaseBoard,
                  hands: Hands) -> Iterator[tuple[str, int, chess.Piece | None]]:
    """Lifts and placements that turn *phys* into *target*.

    Only pieces in the hands can be put down: the pieces lifted, and the pieces beside the board that the
    target needs (captured pieces coming back, a queen for a promotion). A piece the target has no room for
    stays beside the board.
    """
    cur = dict(phys)
    goal = dict(target.piece_map())
    pool: Counter[chess.Piece] = Counter(goal.values())
    pool.subtract(Counter(cur.values()))
    pool = +pool  # beside the board, needed by the target
    wrong = [sq for sq in cur if goal.get(sq) != cur[sq]]
    need = [sq for sq in goal if cur.get(sq) != goal[sq]]
    rng.shuffle(wrong)
    rng.shuffle(need)
    if hands.wrong_piece:
        right = [sq for sq in cur if goal.get(sq) == cur[sq]]
        if right:
            sq = rng.choice(right)
            yield ("lift", sq, None)
            yield ("place", sq, cur[sq])
    if hands.style == "lift-all-first":
        for sq in wrong:
            yield ("lift", sq, None)
            pool[cur.pop(sq)] += 1
        wrong = []
    detour_done = not hands.wrong_square
    while wrong or need:
        placeable = [sq for sq in need if sq not in cur and pool[goal[sq]] > 0]
        options = (["lift"] if wrong else []) + (["place"] if placeable else [])
        assert options, (wrong, need, pool)
        choice = rng.choice(options)
        if hands.style == "one-by-one" and wrong:
            choice = "lift"
        if choice == "lift":
            sq = wrong.pop()
            piece = cur.pop(sq)
            pool[piece] += 1
            yield ("lift", sq, None)
            if hands.style == "one-by-one":
                dest = next((d for d in need if d not in cur and goal[d] == piece), None)
                if dest is not None:
                    need.remove(dest)
                    cur[dest] = piece
                    pool[piece] -= 1
                    yield ("place", dest, piece)
        else:
            sq = placeable[0]
            need.remove(sq)
            piece = goal[sq]
            if not detour_done:
                empties = [e for e in chess.SQUARES if e not in cur and e not in goal
                           and chess.square_distance(e, sq) == 1]
                if empties:
                    detour_done = True
                    e = rng.choice(empties)
                    yield ("place", e, piece)
                    yield ("lift", e, None)
            cur[sq] = piece
            pool[piece] -= 1
            yield ("place", sq, piece)


def run_steps(rig: Rig, rng: random.Random, steps: Iterator[tuple[str, int, chess.Piece | None]],
              hands: Hands, between: list[tuple[int, object]] | None = None) -> None:
    """Feed the steps with the hands' timing (two hands: some consecutive steps inside one scan)."""
    for i, (what, sq, piece) in enumerate(steps):
        if what == "wait":  # the hand stops (a piece set down on a wrong square, seen, moved on)
            rig.t += rng.uniform(0.3, 1.5)
            continue
        if what == "lift":
            rig.lift(sq)
        else:
            assert piece is not None
            rig.place(sq, piece)
        for j, action in between or ():
            if j == i:
                action()  # type: ignore[operator]
        if hands.two_hands and rng.random() < 0.5:
            rig.t += rng.uniform(0.01, 0.08)
        else:
            rig.t += gap(rng, hands.pace)


# ---------------------------------------------------------------------------------------------- on a running clock


@dataclass(frozen=True, slots=True)
class Running:
    """A restoration on a running clock (rapid/blitz without the arbiter at the board, or the arbiter not pausing):
    who puts the pieces back, with what hands, and who presses the clock (and when)."""

    who: str  # "offender" | "opponent" | "both" (one hand each, at the same time) | "arbiter"
    hands: Hands
    press: str  # "none" | "opponent-before" | "opponent-during" | "opponent-after" | "offender-after"


def random_running(rng: random.Random) -> Running:
    """Random hands of the real procedure: any order and pace, the wrong piece first, detours, two hands (both
    players at once), and the clock handled by whoever does it, or by nobody."""
    who = rng.choice(("offender", "opponent", "both", "arbiter"))
    hands = Hands(style=rng.choice(("one-by-one", "lift-all-first", "mixed")),
                  pace=rng.choice(("fast", "fast", "normal", "slow")),
                  two_hands=who == "both" or rng.random() < 0.3, wrong_piece=rng.random() < 0.35,
                  wrong_square=rng.random() < 0.35)
    press = rng.choice(("none", "opponent-before", "opponent-during", "opponent-after", "opponent-after",
                        "offender-after"))
    return Running(who=who, hands=hands, press=press)


Step = tuple[str, int, chess.Piece | None]


def detoured(rng: random.Random, phys: dict[int, chess.Piece], target: chess.BaseBoard, steps: list[Step],
             share: float) -> list[Step]:
    """*steps* with some placements going first to a wrong empty square near the right one (up to two squares
    away: the hand misses the square, or puts the piece down to take another, and moves it on)."""
    cur = dict(phys)
    out: list[Step] = []
    lifted: int | None = None
    for what, sq, piece in steps:
        # (not the wrong piece put back where it was lifted: moved elsewhere, it would be a move of its own)
        if what == "place" and piece is not None and sq != lifted and rng.random() < share:
            empties = [e for e in chess.SQUARES if e not in cur and target.piece_at(e) is None
                       and 1 <= chess.square_distance(e, sq) <= 2]
            if empties:
                e = rng.choice(empties)
                out += [("place", e, piece)] + ([("wait", e, None)] if rng.random() < 0.6 else []) \
                    + [("lift", e, None)]
        out.append((what, sq, piece))
        lifted = sq if what == "lift" else None
        if what == "lift":
            cur.pop(sq, None)
        else:
            assert piece is not None
            cur[sq] = piece
    return out


def restore_running(rig: Rig, rng: random.Random, target: chess.BaseBoard, offender: chess.Color,
                    how: Running) -> None:
    """Put *target* back on the board with the clock running (nobody pauses it), pressing as *how* says.

    The opponent's press gives the offender his clock back (7.5.1 via 6.2: the offender replaces his move on his
    own time): before the pieces are touched, in the middle, or once they are back. The offender pressing after
    the restoration presses the side already down: the lever does not move. Nobody pressing: the offender makes
    his replacement on the opponent's running clock and presses then. When the offender's clock runs already
    (the opponent replied and pressed before the illegal move was noticed) nobody presses: that is the clock of
    the position being reinstated.
    """
    opponent = not offender
    steps = list(restore_steps(rng, rig.phys, target, how.hands))
    if how.hands.wrong_square:
        steps = detoured(rng, rig.phys, target, steps, 0.5)
    rig.t += rng.uniform(0.3, 4.0)
    if how.press == "opponent-before" and rig.clock.running != offender:
        rig.press(opponent)
        rig.t += rng.uniform(0.2, 1.5)
    middle = rng.randrange(len(steps)) if steps else 0
    between: list[tuple[int, object]] = []
    if how.press == "opponent-during" and rig.clock.running != offender:
        between.append((middle, lambda: rig.press(opponent)))
    run_steps(rig, rng, iter(steps), how.hands, between)
    rig.t += rng.uniform(0.2, 1.5)
    if how.press == "opponent-after" and rig.clock.running != offender:
        rig.press(opponent)
        rig.t += rng.uniform(0.3, 1.5)
    elif how.press == "offender-after" and rig.clock.running != offender:
        rig.press(offender)  # his side is down already: a press that moves nothing
        rig.t += rng.uniform(0.3, 1.5)


def swap_steps(rng: random.Random, phys: dict[int, chess.Piece], square: int, queen: chess.Piece,
               hands: Hands, *, origin: int) -> list[Step]:
    """7.5.2 (from 2014): the pawn left on the last rank on *square* is exchanged for a *queen* of its colour, by the
    arbiter or a player, on the running clock: the pawn lifted first (the queen in the other hand) or the queen set
    down first next to it (then the pawn off, the queen moved over); the queen or the pawn set down on a wrong square
    for a moment (not the pawn on *origin*, where it came from: that is the position before put back, 7.5.1); a piece
    that is right lifted and put back first (the hand hesitating)."""
    pawn = phys[square]
    near = [e for e in chess.SQUARES if e not in phys and e != origin and 1 <= chess.square_distance(e, square) <= 2]
    out: list[Step] = []
    if hands.wrong_piece:
        sq = rng.choice([s for s in phys if s != square])
        out += [("lift", sq, None), ("place", sq, phys[sq])]
    order = rng.choice(("pawn-first", "pawn-first", "queen-first"))
    if order == "queen-first" and near:
        parked = rng.choice(near)
        out += [("place", parked, queen)] + ([("wait", parked, None)] if rng.random() < 0.5 else [])
        out += [("lift", square, None), ("lift", parked, None), ("place", square, queen)]
        return out
    out.append(("lift", square, None))
    if hands.wrong_square and near:
        e = rng.choice(near)
        moved = rng.choice((pawn, queen))  # the pawn put aside on the board, or the queen missing its square
        out += [("place", e, moved)] + ([("wait", e, None)] if rng.random() < 0.5 else []) + [("lift", e, None)]
    out.append(("place", square, queen))
    return out


def pawn_to_last_rank(rig: Rig, rng: random.Random, a: int, b: int, pawn: chess.Piece) -> None:
    """The pawn on *a* set down on the last rank *b* (a piece there taken off before or after the pawn is
    lifted), and not replaced (7.5.2): the hand leaves it, the press is the caller's."""
    if b in rig.phys and rng.random() < 0.5:
        rig.lift(b)
        rig.t += rng.uniform(0.1, 0.5)
    rig.lift(a)
    rig.t += rng.uniform(0.2, 0.6)
    if b in rig.phys:
        rig.lift(b)
        rig.t += rng.uniform(0.05, 0.3)
    rig.place(b, pawn)
    rig.t += rng.uniform(0.3, 1.5)
