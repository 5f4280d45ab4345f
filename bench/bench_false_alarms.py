"""False alarms and exact records: simulated games handled the way the Laws describe, replayed by the engine.

Run: ``python -m bench false-alarms`` (or ``python -m bench.bench_false_alarms``)
``[--games N] [--workers 2] [--failures FILE] [--dump PROFILE:INDEX FILE]``.

For each handling profile (clean, casual, clumsy) it simulates ``--games`` games (default
1000) with ``drivers.sim.simulate_game(..., procedures=True)`` -- the Laws' whole
repertoire: one-hand captures with the victim lifted first and the capturer 150-300 ms later
anywhere on the board (or capturer first), Chess960 castling by every method of the 2009/2014
Laws' appendix F.3 -- and feeds the events to :class:`boardd.core.engine.Engine` as the daemon
does (timers fired on time). The games are a fixed mix, by index:

* ``standard``: random standard games (35 %);
* ``noclock``: games on a board without a clock (``simulate_game(..., clock=False)``, the engine's
  ``clock_expected`` false: no reading, no press, a move completed by the reply, 6.2.1.2, the reply started
  from just past ``T_settle`` after the release, ``--reply-from``), in turn a standard game, a Chess960 game,
  one injection of each kind that can be played without a clock (``drivers.sim.NO_CLOCK_KINDS``) and the
  player who has just moved moving again before the reply, the arbiter reinstating (``moved-twice``) (10 %);
* ``chess960``: Chess960 games from random start arrays, played so that both sides castle
  early (25 %); every castling method applicable to the position is drawn at random;
* ``injection``: one injection of :class:`drivers.sim.InjectionKind`, every kind in turn (15 %);
* ``correction``: the arbiter's correction cycle of 7.5.1 / 7.5.2 (:class:`drivers.sim.Correction`,
  every kind in turn, one game in five in Chess960, and one in six a second illegal move by
  the same player, which reaches the limit from E2014 and ends the game) with the clock paused
  or running, the pieces put back in a random order, the times set on the clock, the tablet,
  both or neither, the lever turned in the pause or at the restart, the tablet's Reinstate
  before, during, after or never (15 %).

Editions rotate (2009, 2014, 2018, 2023) and so do the time controls (blitz 3+2, rapid 15+10,
standard 90+30). The simulator's ground truth is the game's own record (up to where the Laws
end it, or up to the illegal move that lost) and the findings its script warrants
(``SimulatedGame.expected_codes``); it never asks the engine.

Printed per profile and family: the share of games whose record is exact, and the findings of
severity warning or illegal-move that the handling did not warrant, per 100 games, by code.
For injections and corrections: the share in which the warranted findings were all raised and
the share with an exact record. Chess960: the same per castling method. Asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import io
import logging
import multiprocessing
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

from boardd.core import eventlog
from boardd.core.engine import Engine
from boardd.core.outputs import Irregularity, IrregularityRaised, Output, Severity
from drivers.sim import (
    NO_CLOCK_KINDS,
    PROFILES,
    Correction,
    CorrectionKind,
    Injection,
    InjectionKind,
    SimulatedGame,
    SimulationError,
    applicable,
    choose_move,
    correction_applicable,
    correction_counts,
    moved_twice_candidates,
    random_game,
    simulate_game,
)

EDITIONS = (2009, 2014, 2018, 2023)
TIME_CONTROLS = ("180+2", "900+10", "5400+30")
FAMILIES = ("standard", "noclock", "chess960", "injection", "correction")
#: The no-clock games in turn: a standard game, a Chess960 game, then each injection that needs no clock.
NOCLOCK_VARIANTS: tuple[str, ...] = ("standard", "chess960",
                                     *(kind.value for kind in InjectionKind if kind in NO_CLOCK_KINDS), "moved-twice")
#: The correction variants in turn: every kind, and a second illegal move by the same player.
CORRECTION_VARIANTS: tuple[str, ...] = (*(kind.value for kind in CorrectionKind), "second-illegal")


def incident_number(index: int) -> int:
    """The how-many-th game of its incident family (injection or correction) game *index* is."""
    slot = index % 20
    return (index // 20) * 3 + (slot - 14 if slot < 17 else slot - 17)


def noclock_number(index: int) -> int:
    """The how-many-th no-clock game game *index* is."""
    return (index // 20) * 2 + index % 20 - 7


def family_of(index: int) -> str:
    """The family of game *index* (a fixed mix: 35 % standard, 10 % without a clock, 25 % Chess960, 15 % each
    incident)."""
    slot = index % 20
    if slot < 7:
        return "standard"
    if slot < 9:
        return "noclock"
    if slot < 14:
        return "chess960"
    if slot < 17:
        return "injection"
    return "correction"


# --- the games ---------------------------------------------------------------------------


def castling_game(seed: int, *, max_plies: int = 50) -> chess.pgn.Game:
    """A Chess960 game from a random start array in which both sides castle as soon as they can."""
    rng = random.Random(f"castling960:{seed}")
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    game = chess.pgn.Game()
    game.setup(board)
    game.headers.update(Event="boardd false-alarm bench", Site="simulator", Date="????.??.??", Round=str(seed),
                        White="A", Black="B", Variant="Chess960")
    node: chess.pgn.GameNode = game
    while len(board.move_stack) < max_plies and not board.is_game_over(claim_draw=False):
        castlings = [m for m in board.legal_moves if board.is_castling(m)]
        if castlings and rng.random() < 0.9:
            move = rng.choice(castlings)
        else:
            # Clear the back rank: moves of the pieces standing between king and rooks first.
            back = [m for m in board.legal_moves if chess.square_rank(m.from_square) in (0, 7)
                    and board.piece_type_at(m.from_square) not in (chess.KING, chess.ROOK)]
            move = rng.choice(back) if back and rng.random() < 0.6 else choose_move(board, rng)
        node = node.add_variation(move)
        board.push(move)
    outcome = board.outcome(claim_draw=False)
    game.headers["Result"] = outcome.result() if outcome is not None else "*"
    return game


def _fits(game: chess.pgn.Game, test: object, *, first: int = 3) -> list[int]:
    board = game.board()
    moves = list(game.mainline_moves())
    plies = []
    for index, move in enumerate(moves):
        ply = index + 1
        if ply >= first and ply < len(moves) - 1 and test(board, move, ply < len(moves)):  # type: ignore[operator]
            plies.append(ply)
        board.push(move)
    return plies


@dataclass(frozen=True, slots=True)
class Item:
    """One bench game: enough to rebuild it exactly."""

    profile: str
    index: int

    @property
    def family(self) -> str:
        return family_of(self.index)

    @property
    def label(self) -> str:
        return f"{self.profile}:{self.index}"


def build(item: Item, *, reply_from: float | None = None) -> tuple[SimulatedGame, str]:
    """Simulate *item*; returns the game and a description of what it contains (*reply_from*: the no-clock
    games' earliest reply, default the simulator's)."""
    index, family = item.index, item.family
    rng = random.Random(f"false-alarms:{index}")
    number = (incident_number(index) if family in ("injection", "correction")
              else noclock_number(index) if family == "noclock" else index)
    edition = EDITIONS[number % len(EDITIONS)]
    time_control = TIME_CONTROLS[(number // 4) % len(TIME_CONTROLS)]
    injections: list[Injection] = []
    corrections: list[Correction] = []
    what = family
    clock = True
    moved_twice: int | None = None
    if family == "noclock":
        clock = False
        variant = NOCLOCK_VARIANTS[number % len(NOCLOCK_VARIANTS)]
        what = f"noclock/{variant}"
        if variant == "chess960":
            game = castling_game(index)
        elif variant == "standard":
            game = random_game(index, max_plies=80)
        elif variant == "moved-twice":
            game = None
            for attempt in range(50):
                game = random_game(index * 100 + attempt, max_plies=60)
                plies = _fits(game, lambda b, m, _n: bool(moved_twice_candidates(b, m)))
                if plies:
                    moved_twice = rng.choice(plies)
                    break
        else:
            kind = InjectionKind(variant)
            game = None
            for attempt in range(50):
                game = random_game(index * 100 + attempt, max_plies=60)
                plies = _fits(game, lambda b, m, has_next, kind=kind: applicable(kind, b, m, has_next=has_next))
                if plies:
                    injections.append(Injection(kind, rng.choice(plies)))
                    break
    elif family == "chess960":
        game = castling_game(index)
    elif family == "injection":
        kinds = list(InjectionKind)
        kind = kinds[number % len(kinds)]
        game = None
        for attempt in range(50):
            game = random_game(index * 100 + attempt, max_plies=60)
            plies = _fits(game, lambda b, m, has_next, kind=kind: applicable(kind, b, m, has_next=has_next))
            if plies:
                injections.append(Injection(kind, rng.choice(plies)))
                break
        what = f"injection/{kind.value}"
        # (E2009 too: the injection's arbiter exchanges the pawn for a queen, one of the pieces the player may
        # choose under 7.4 a; the reinstatement form is the pawn-not-replaced correction cycle)
    elif family == "correction":
        variant = CORRECTION_VARIANTS[number % len(CORRECTION_VARIANTS)]
        chess960 = (number // len(CORRECTION_VARIANTS)) % 4 == 3
        game = None
        for attempt in range(50):
            game = random_game(index * 100 + attempt, max_plies=60, chess960=chess960)
            if variant == "second-illegal":
                corrections = _second_illegal(game, rng)
            else:
                kind = CorrectionKind(variant)
                plies = _fits(game, lambda b, m, _n, kind=kind: correction_applicable(kind, b, m))
                low = rng.uniform(12.0, 20.0) if (number // len(CORRECTION_VARIANTS)) % 3 == 1 else None
                corrections = [Correction(kind, rng.choice(plies), low)] if plies else []
            if corrections:
                break
        what = f"correction/{variant}" + ("/960" if chess960 else "")
        if any(c.seconds_left is not None for c in corrections):
            what += "/seconds-left"
    else:
        game = random_game(index, max_plies=80)
    assert game is not None
    sim = simulate_game(game, seed=index, profile=item.profile, injections=injections, corrections=corrections,
                        procedures=True, edition=edition, time_control=time_control, think_median=1.0, clock=clock,
                        moved_twice=moved_twice, **({} if reply_from is None else {"reply_from": reply_from}))
    return sim, what


def _second_illegal(game: chess.pgn.Game, rng: random.Random) -> list[Correction]:
    """Two illegal moves by the same player (any kinds that fit), the second at least two of his moves later."""
    fits: dict[int, list[CorrectionKind]] = defaultdict(list)
    board = game.board()
    for index, move in enumerate(game.mainline_moves()):
        for kind in CorrectionKind:  # (illegal moves: not a changed promotion choice, an Article 4 matter)
            if index >= 2 and correction_counts(kind) and correction_applicable(kind, board, move):
                fits[index + 1].append(kind)
        board.push(move)
    plies = sorted(fits)
    for first in plies:
        later = [ply for ply in plies if ply >= first + 4 and (ply - first) % 2 == 0]
        if later:
            second = rng.choice(later)
            return [Correction(rng.choice(fits[first]), first), Correction(rng.choice(fits[second]), second)]
    return []


# --- the judge ------------------------------------------------------------------------------


def run_engine(sim: SimulatedGame) -> tuple[list[str], list[Irregularity]]:
    """Feed the events, firing every timer on time as the daemon does; the record and every finding."""
    engine = Engine(sim.header.rules, sim.game)
    outputs: list[Output] = []
    for event in sim.events:
        deadline = engine.next_deadline()
        while deadline is not None and deadline < event.at:
            outputs += engine.advance(deadline)
            following = engine.next_deadline()
            if following is not None and following <= deadline:
                break
            deadline = following
        outputs += engine.feed(event)
    outputs += engine.advance(sim.events[-1].at + 30.0)
    found = [o.irregularity for o in outputs if isinstance(o, IrregularityRaised)]
    return [record.uci for record in engine.state.moves], found


def expected_record(sim: SimulatedGame) -> list[str]:
    """The game's moves up to where the Laws end it on the board (mate, stalemate, fivefold, ...)."""
    fen = sim.game.start_fen
    board = chess.Board(fen, chess960=sim.game.chess960) if fen else chess.Board()
    record = []
    for uci in sim.moves:
        record.append(uci)
        board.push(board.parse_uci(uci))
        if board.is_game_over(claim_draw=False):
            break
    return record


def code_of(irregularity: Irregularity) -> str:
    return f"{irregularity.code}/{irregularity.subtype}" if irregularity.subtype else irregularity.code


@dataclass
class Outcome:
    """What the engine made of one bench game (small: it crosses the process boundary)."""

    item: Item
    what: str
    exact: bool
    first_difference: str = ""
    unwarranted: list[tuple[int, str, str]] = field(default_factory=list)  # (ply, code, procedure at that ply)
    missing: list[str] = field(default_factory=list)
    procedures: list[str] = field(default_factory=list)
    error: str = ""


def _procedure_near(sim: SimulatedGame, ply: int) -> str:
    by_ply = dict(sim.handled)
    for candidate in (ply, ply + 1, ply - 1):
        if candidate in by_ply:
            return f"{by_ply[candidate]}@{candidate}"
    return ""


def judge(item: Item, only: str = "", reply_from: float | None = None) -> Outcome | None:
    """Simulate, replay and compare with the simulator's ground truth (None: *only* does not match)."""
    try:
        sim, what = build(item, reply_from=reply_from)
    except SimulationError as exc:
        return Outcome(item, "?", False, error=f"simulation error: {exc}")
    if only and only not in what and not any(only in label for _, label in sim.handled):
        return None
    record, found = run_engine(sim)
    wanted = expected_record(sim)
    exact = record == wanted
    difference = ""
    if not exact:
        at = next((i for i, (a, b) in enumerate(zip(record, wanted, strict=False)) if a != b),
                  min(len(record), len(wanted)))
        got = record[at] if at < len(record) else "(end)"
        want = wanted[at] if at < len(wanted) else "(end)"
        difference = f"ply {at + 1}: {got} instead of {want} ({len(record)} vs {len(wanted)} plies)"
    warranted = Counter(code for _, code in sim.expected_codes)
    raised = [i for i in found if i.severity is not Severity.INFO]
    unwarranted = []
    for irregularity in raised:
        code = code_of(irregularity)
        if warranted[code] > 0:
            warranted[code] -= 1
        else:
            unwarranted.append((irregularity.ply, code, _procedure_near(sim, irregularity.ply)))
    # Raised: every warranted code among all findings (the simulator also lists info codes it causes on purpose).
    every = Counter(code_of(i) for i in found if i.severity is Severity.INFO)
    missing = [code for code, count in (warranted - every).items() for _ in range(count)]
    return Outcome(item, what, exact, difference, unwarranted, missing, [label for _, label in sim.handled])


# --- the report ------------------------------------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:5.1f} %" if whole else "    -  "


def _per100(count: int, games: int) -> str:
    return f"{100.0 * count / games:.1f}" if games else "-"


def _codes(outcomes: list[Outcome]) -> str:
    counts = Counter(code for outcome in outcomes for _, code, _ in outcome.unwarranted)
    games = len(outcomes)
    return ", ".join(f"{code} {_per100(n, games)}" for code, n in counts.most_common()) or "none"


def report(outcomes: list[Outcome], out: Iterable[str] | None = None) -> Iterator[str]:
    """The printed figures, line by line."""
    del out
    by_profile: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_profile[outcome.item.profile].append(outcome)
    for profile in PROFILES:
        games = by_profile.get(profile, [])
        if not games:
            continue
        exact = sum(o.exact for o in games)
        alarms = sum(len(o.unwarranted) for o in games)
        yield (f"\n## {profile}: {len(games)} games, exact records {_pct(exact, len(games))}, "
               f"unwarranted warning/illegal-move findings {_per100(alarms, len(games))} per 100 games")
        yield (f"{'family':<32} {'games':>5} {'exact':>8} {'raised':>8} {'false/100':>9}  "
               "false findings per 100 games, by code")
        groups: dict[str, list[Outcome]] = defaultdict(list)
        for outcome in games:
            groups[outcome.item.family].append(outcome)
            if outcome.item.family in ("injection", "correction", "noclock"):
                groups[outcome.what].append(outcome)
        for name in sorted(groups, key=lambda n: (FAMILIES.index(n.split("/")[0]), n.count("/"), n)):
            group = groups[name]
            n = len(group)
            incident = name.split("/")[0] in ("injection", "correction") or name.startswith("noclock/")
            raised = _pct(sum(not o.missing for o in group), n) if incident else "       "
            false = sum(len(o.unwarranted) for o in group)
            indent = "  " if "/" in name else ""
            yield (f"{indent + name:<32} {n:>5} {_pct(sum(o.exact for o in group), n):>8} {raised:>8} "
                   f"{_per100(false, n):>9}  {_codes(group)}")
        yield from _method_lines(games)
        yield from _cycle_lines([o for o in games if o.item.family == "correction"])


def _method_lines(games: list[Outcome]) -> Iterator[str]:
    """Per Chess960 castling method, capture style and released move made again (``undo/``), in the games
    without incidents: games using it, exact records, false findings at that ply."""
    uses: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in games:
        if outcome.item.family not in ("standard", "chess960"):
            continue  # the handling alone: an incident's own failures are counted above
        for label in set(outcome.procedures):
            if label.startswith(("960/", "capture/", "undo/")):
                uses[label].append(outcome)
    if not uses:
        return
    yield (f"{'procedure (games using it)':<32} {'games':>5} {'exact':>8} {'':>8} {'false@/100':>9}  "
           "false findings at its ply")
    for label in sorted(uses):
        group = uses[label]
        at_ply = [(code) for o in group for _, code, near in o.unwarranted if near.startswith(label + "@")]
        counts = Counter(at_ply)
        text = ", ".join(f"{code} {_per100(n, len(group))}" for code, n in counts.most_common()) or "none"
        yield (f"  {label:<30} {len(group):>5} {_pct(sum(o.exact for o in group), len(group)):>8} {'':>8} "
               f"{_per100(len(at_ply), len(group)):>9}  {text}")


def _cycle_lines(games: list[Outcome]) -> Iterator[str]:
    """Correction cycles by each randomised step (clock paused/running, Reinstate timing, times, restart)."""
    steps: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in games:
        for label in outcome.procedures:
            if label.startswith("correction/"):
                for part in label.split(" ")[1:]:
                    steps[part].append(outcome)
    if not steps:
        return
    yield (f"{'correction step':<32} {'games':>5} {'exact':>8} {'raised':>8} {'false/100':>9}  "
           "false findings per 100 games")
    for step in sorted(steps):
        group = steps[step]
        false = sum(len(o.unwarranted) for o in group)
        yield (f"  {step:<30} {len(group):>5} {_pct(sum(o.exact for o in group), len(group)):>8} "
               f"{_pct(sum(not o.missing for o in group), len(group)):>8} {_per100(false, len(group)):>9}  "
               f"{_codes(group)}")


def write_failures(path: Path, outcomes: list[Outcome], *, limit: int = 400) -> int:
    """A markdown table of every game with a wrong record, a missing or an unwarranted finding."""
    bad = [o for o in outcomes if not o.exact or o.unwarranted or o.missing or o.error]
    lines = ["| game | what | record | unwarranted (ply code procedure) | missing |", "|---|---|---|---|---|"]
    for o in bad[:limit]:
        unwarranted = "; ".join(f"{ply} {code} {near}".strip() for ply, code, near in o.unwarranted)
        lines.append(f"| {o.item.label} | {o.what} | {'exact' if o.exact else o.first_difference or o.error} | "
                     f"{unwarranted} | {', '.join(o.missing)} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(bad)


def _init_worker() -> None:
    logging.disable(logging.CRITICAL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per profile (default 1000)")
    parser.add_argument("--profiles", default=",".join(PROFILES), help="comma-separated profiles")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--failures", type=Path, help="write every failing game to this markdown file")
    parser.add_argument("--only", default="", metavar="TEXT",
                        help="judge only the games whose family or a procedure played contains TEXT "
                             "(e.g. noticed-after-reply, 960/swap, correction/illegal-capture)")
    parser.add_argument("--reply-from", type=float, metavar="SECONDS",
                        help="games without a clock: the earliest start of a reply after the move it answers "
                             "(default drivers.sim's, just past T_settle; lower plays the blitz race)")
    parser.add_argument("--dump", nargs=2, metavar=("PROFILE:INDEX", "FILE"),
                        help="write one bench game as an event log (for `boardd replay FILE`) and stop")
    args = parser.parse_args(argv)
    if args.dump:
        profile, _, index = args.dump[0].partition(":")
        sim, what = build(Item(profile, int(index)), reply_from=args.reply_from)
        with Path(args.dump[1]).open("w", encoding="utf-8") as stream:
            eventlog.write_events(stream, sim.events, sim.header)
        print(f"{args.dump[0]} ({what}): {len(sim.events)} events written to {args.dump[1]}")
        print("procedures:", "; ".join(f"{ply}: {label}" for ply, label in sim.handled))
        print("expected:", sim.expected_codes, "record:", " ".join(expected_record(sim)))
        return 0
    items = [Item(profile, index) for profile in args.profiles.split(",") for index in range(args.games)]
    start = time.perf_counter()
    _init_worker()
    if args.workers > 1:
        with multiprocessing.get_context("fork").Pool(args.workers, initializer=_init_worker) as pool:
            judge_one = functools.partial(judge, only=args.only, reply_from=args.reply_from)
            judged = list(pool.imap(judge_one, items, chunksize=16))
    else:
        judged = [judge(item, args.only, args.reply_from) for item in items]
    outcomes = [outcome for outcome in judged if outcome is not None]
    elapsed = time.perf_counter() - start
    print(f"False alarms: {args.games} simulated games per profile (procedures=True), "
          f"{len(items)} in {elapsed:.0f} s on {args.workers} process(es)")
    stream = io.StringIO()
    for line in report(outcomes):
        print(line)
        stream.write(line + "\n")
    if args.failures:
        count = write_failures(args.failures, outcomes)
        print(f"\n{count} failing games listed in {args.failures}")
    return 0


if __name__ == "__main__":
    # Run from the importable module, so that the worker processes can unpickle its functions and classes
    # (under ``python -m`` or runpy this file is ``__main__``).
    from bench import bench_false_alarms  # noqa: PLW0406

    sys.exit(bench_false_alarms.main())
