"""Two or more moves made during one outage of the clock's link: each completed by its unseen press, in order.

The clock's link (its cable, a Bluetooth drop) is lost around a move (before the lift, while the piece is in the air,
or once it is placed, before the press) and stays lost for two or three moves: White moves and presses, Black replies
(his lift sometimes before White's press: White's move was made, Black had the move, 1.3) and presses, ..., all
unseen. The link comes back (with or without its link event) and the first reading shows the lever. Presses
alternate, the first by the player whose clock ran before the outage, so the lever tells how many there were: every
move was pressed (the lever shows the next mover's clock running), or all but the last (his clock still runs: he
presses once the link is back, seen). The Laws (6.2.1: the press completes the move) make each move completed by its
press: the engine completes them at that reading, in order, before anything later, with no alert (no
``CLOCK_NOT_PRESSED``, ``OUT_OF_TURN_CHANGE``, ``MOVE_COMPLETED_WITHOUT_PRESS``, ``CLOCK_LATE_PRESS``, ...) and no
``[%clk]`` invented: only the last move pressed carries its mover's time, the time his stopped clock shows (it has
stood since his press: the time it left him, exactly as a reading just after the press). The clock times published
at the return are the reading's.

The controls: nobody pressed during the outage (the lever where it was, the other clock not run since): nothing is
completed at the return, the presses seen after it complete the moves with their clock times; and the single move of
the last session (its frozen time now its ``[%clk]``) in ``test_clock_link_press``.

Seeded over games, outage starts and lengths, orders and timings (the plain engine; the daemon's world script plays
such an outage too, ``test_world_script_long_outage``).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, Link, LinkChanged
from boardd.core.outputs import ClockUpdate, Completion, IrregularityRaised, MoveCompleted, Output
from boardd.core.settings import RulesConfig
from tests.core.scenario import move_events, start_clock
from tests.daemon._helpers import random_moves
from tests.daemon._world import incident_moves, outage_span, script, to_event

SEEDS = range(160)
PLIES = 12
#: when the clock's link is lost, relative to the outage's first move
DOWN = ("before the lift", "piece in the air", "placed, before the press")


@dataclass(frozen=True)
class Case:
    seed: int
    moves: tuple[str, ...]
    ply: int  # the outage's first move (1-based)
    count: int  # the moves made during the outage (2 or 3)
    down: str
    last_pressed: bool  # the last of them pressed during the outage too (else once the link is back, seen)
    none_pressed: bool  # the control: nobody pressed during the outage (the presses all seen after it)
    early_reply: bool  # each reply lifted before the press of the move it answers (on the mover's time)
    link_event: bool  # the link's return is reported (else the first reading tells)


def _case(seed: int) -> Case:
    rng = random.Random(seed)
    count = rng.choice((2, 2, 3))
    return Case(seed=seed, moves=tuple(random_moves(rng.randrange(10**6), PLIES)), ply=rng.randrange(2, PLIES - 4),
                count=count, down=rng.choice(DOWN), last_pressed=rng.random() < 0.6,
                none_pressed=count == 2 and rng.random() < 0.15, early_reply=rng.random() < 0.3,
                link_event=rng.random() < 0.7)


@dataclass
class Played:
    engine: Engine
    outs: list[Output]
    frozen: float | None  # the last pressed mover's time at his press (the clock's, exact)
    back_at: float  # the first reading after the outage
    back_clock: tuple[float, float]  # (white, black) it showed


def _play(case: Case) -> Played:
    rng = random.Random(case.seed * 7919 + 3)
    engine = Engine(RulesConfig(), GameInfo(time_control="300+0"))
    clock, first = start_clock(chess.WHITE, 0.0, seconds=300.0)
    outs = engine.feed(first)
    board = chess.Board()
    t = 1.0
    last_t = [0.0]

    def feed(*events: Event) -> None:
        for event in events:
            assert event.at >= last_t[0], (case, event)  # (the script itself in time order)
            last_t[0] = event.at
            outs.extend(engine.feed(event))

    outage = range(case.ply, case.ply + case.count)
    pressed = 0 if case.none_pressed else case.count if case.last_pressed else case.count - 1
    frozen: float | None = None
    back_at, back_clock = 0.0, (0.0, 0.0)
    waiting: list[chess.Color] = []  # the presses still to make once the link is back, in order
    for ply, uci in enumerate(case.moves, start=1):
        move = chess.Move.from_uci(uci)
        side = board.turn
        lost = t
        if ply == case.ply and case.down == DOWN[0]:
            t += rng.uniform(0.05, 0.5)  # the link lost, then the lift
        events = move_events(board, move, t, None)
        press_at = events[-1].at + rng.uniform(0.6, 1.0)
        if ply not in outage:
            feed(*events, clock.press(side, press_at))
            outs.extend(engine.advance(press_at + 0.2))
            board.push(move)
            t = press_at + rng.uniform(0.3, 1.2)
            continue
        if ply == case.ply:
            down = LinkChanged(at=lost, link=Link.CLOCK, up=False, detail="clock cable")
            if case.down == DOWN[1]:
                down = LinkChanged(at=rng.uniform(events[0].at + 0.01, events[1].at - 0.01), link=Link.CLOCK,
                                   up=False, detail="clock cable")
            elif case.down == DOWN[2]:
                down = LinkChanged(at=rng.uniform(events[-1].at + 0.01, press_at - 0.01), link=Link.CLOCK,
                                   up=False, detail="clock cable")
            feed(*sorted([down, *events], key=lambda e: e.at))
        else:
            feed(*events)
        board.push(move)
        index = ply - case.ply
        made = events[-1].at
        if index < pressed:
            clock.press(side, press_at)  # unseen: no reading reaches the engine
            if index == pressed - 1:
                frozen = clock.white if side == chess.WHITE else clock.black
            early = max(made + 0.5, last_t[0] + 0.01)  # (after the link lost, when it was lost after the placing)
            if case.early_reply and ply < outage[-1] and early < press_at - 0.05:
                # the reply's first lift before this press (the move was made: the opponent has the move, 1.3)
                t = rng.uniform(early, press_at - 0.05)
            else:
                t = press_at + rng.uniform(0.3, 1.2)
        else:
            waiting.append(side)
            t = made + rng.uniform(0.6, 1.5)
        if ply == outage[-1]:
            back = t + rng.uniform(0.2, 3.0)
            if case.link_event:
                feed(LinkChanged(at=back, link=Link.CLOCK, up=True, detail="clock cable"))
            back_at = back + rng.uniform(0.02, 0.3)
            reading = clock.reading(back_at)
            back_clock = (reading.left or 0.0, reading.right or 0.0)
            feed(reading)
            t = back_at + rng.uniform(0.3, 0.8)
            for presser in waiting:  # the presses not made during the outage, seen
                feed(clock.press(presser, t))
                t += rng.uniform(0.4, 1.0)
        outs.extend(engine.advance(t))
    outs.extend(engine.advance(t + 10.0))
    return Played(engine, outs, frozen, back_at, back_clock)


#: codes that would accuse players of what normal play during the outage did
_ALERTS = frozenset({"CLOCK_NOT_PRESSED", "OUT_OF_TURN_CHANGE", "MOVE_COMPLETED_WITHOUT_PRESS", "CLOCK_LATE_PRESS",
                     "CLOCK_PRESS_NO_MOVE", "POSITION_MISMATCH_AT_PRESS", "OPPONENT_STARTED_BEFORE_MOVE_MADE"})


def _codes(outs: list[Output]) -> Counter[str]:
    return Counter(o.irregularity.code for o in outs if isinstance(o, IrregularityRaised))


def _completed_plies(outs: list[Output]) -> list[int]:
    """The plies in the order of their first completion published (a later one republishes a ply's)."""
    return list(dict.fromkeys(o.move.ply for o in outs if isinstance(o, MoveCompleted)))


@pytest.mark.parametrize("seed", SEEDS)
def test_moves_made_during_one_clock_outage_completed_by_their_presses(seed: int) -> None:
    case = _case(seed)
    played = _play(case)
    engine, outs = played.engine, played.outs
    records = engine.state.moves
    assert [m.uci for m in records] == list(case.moves), case
    assert all(m.completion is Completion.PRESS for m in records), (case, [(m.ply, m.completion) for m in records])
    # completed in order: the completions published in ply order, their times never going back
    assert _completed_plies(outs) == list(range(1, PLIES + 1)), (case, _completed_plies(outs))
    assert all(a.completed_at is not None and b.completed_at is not None and a.completed_at <= b.completed_at
               for a, b in itertools.pairwise(records)), (case, [(m.ply, m.completed_at) for m in records])
    # none: normal play; the control's White pressed after Black's reply, seen: a late press (6.2.2, info)
    expected = Counter({"CLOCK_LATE_PRESS": 1}) if case.none_pressed else Counter()
    assert _codes(outs) == expected, (case, _codes(outs))
    outage = records[case.ply - 1:case.ply - 1 + case.count]
    pressed = 0 if case.none_pressed else case.count if case.last_pressed else case.count - 1
    for index, rec in enumerate(outage):
        mine = rec.clock_white if rec.side == chess.WHITE else rec.clock_black
        theirs = rec.clock_black if rec.side == chess.WHITE else rec.clock_white
        if index >= pressed:
            assert mine is not None and theirs is not None, (case, rec)  # its press seen: the clock then
        elif index == pressed - 1:
            assert (mine, theirs) == (played.frozen, None), (case, rec, played.frozen)  # the stopped clock's
            assert rec.completed_at == played.back_at, (case, rec)
        else:
            assert (mine, theirs) == (None, None), (case, rec)  # when it was pressed is not known
    # the clock published at the return is the reading's
    shown = [o.clock for o in outs if isinstance(o, ClockUpdate) and o.at == played.back_at]
    assert shown and (shown[-1].white, shown[-1].black) == played.back_clock, (case, shown)
    # the record's movetext: a [%clk] for every move whose mover's time is known, none for the others
    known = sum((m.clock_white if m.side == chess.WHITE else m.clock_black) is not None for m in records)
    assert known == PLIES - max(0, pressed - 1), case
    assert engine.pgn().count("[%clk ") == known, case

def test_family_covers_its_cases() -> None:
    """The seeds above play every outage start, both lengths, the last move pressed or not, the control, the early
    replies and the return with and without its link event."""
    cases = [_case(seed) for seed in SEEDS]
    assert {c.down for c in cases} == set(DOWN)
    assert {c.count for c in cases} == {2, 3}
    assert {(c.count, c.last_pressed) for c in cases if not c.none_pressed} == {(2, True), (2, False), (3, True),
                                                                               (3, False)}
    assert sum(c.none_pressed for c in cases) >= 5
    assert {c.early_reply for c in cases} == {True, False} and {c.link_event for c in cases} == {True, False}


@pytest.mark.parametrize("seed", range(40))
def test_world_script_long_outage(seed: int) -> None:
    """The daemon tests' world (``tests/daemon/_world.py``) with its clock outage spanning two or three moves
    (``long_outage``), on the plain engine: every move completed by its press, in order; the last one pressed during
    the outage carries its mover's stopped time, the others before it none; the game's illegal move raised once, and
    nothing else but its arbiter's notes."""
    moves = random_moves(seed + 100, 10)
    steps = script(moves, seed=seed, incidents=True, long_outage=True)
    outage = incident_moves(moves, seed=seed)[1]
    span, last_pressed = outage_span(moves, seed=seed)
    engine = Engine(RulesConfig(), GameInfo(time_control="300+0"))
    outs: list[Output] = []
    for step in steps:
        outs += engine.feed(to_event(step, step.t))
    outs += engine.advance(steps[-1].t + 10.0)
    records = engine.state.moves
    assert [m.uci for m in records] == moves
    assert all(m.completion is Completion.PRESS for m in records), [(m.uci, m.completion) for m in records]
    assert _completed_plies(outs) == list(range(1, len(moves) + 1)), _completed_plies(outs)
    codes = _codes(outs)
    assert codes["ILLEGAL_MOVE"] == 1, codes
    assert not codes.keys() & _ALERTS, codes
    if outage < 0:
        return
    pressed = span if last_pressed else span - 1
    back = next(s for s in steps[next(i for i, s in enumerate(steps) if s.kind == "link" and s.up):]
                if s.kind == "clock")
    for index, rec in enumerate(records[outage:outage + span]):
        mine = rec.clock_white if rec.side == chess.WHITE else rec.clock_black
        if index == pressed - 1:
            assert mine == (back.left if rec.side == chess.WHITE else back.right), (span, last_pressed, rec)
        elif index < pressed - 1:
            assert (rec.clock_white, rec.clock_black) == (None, None), (span, last_pressed, rec)
        else:
            assert mine is not None, rec  # pressed once the link was back: seen


def test_world_script_long_outage_spans() -> None:
    """The world's long outages cover both lengths, and the last move pressed during the outage or after it."""
    spans = {outage_span(random_moves(seed + 100, 10), seed=seed) for seed in range(40)}
    assert {(2, True), (2, False), (3, True), (3, False)} <= spans, spans


# --- the lever at the return contradicting the moves seen: a press no move explains, one alert ------------------

#: the contradictions: the side to move pressed without moving (the lever moved, no move seen); or the mover
#: pressed his move and the opponent pressed back without one (the lever back, the other clock ran, one move seen)
CONTRA = ("no move", "pressed back")


def _contradiction(seed: int) -> tuple[Engine, list[Output], str, int]:
    rng = random.Random(seed * 104729 + 11)
    kind = CONTRA[seed % 2]
    moves = random_moves(rng.randrange(10**6), PLIES)
    outage_ply = rng.randrange(2, PLIES - 4)
    engine = Engine(RulesConfig(), GameInfo(time_control="300+0"))
    clock, first = start_clock(chess.WHITE, 0.0, seconds=300.0)
    outs = engine.feed(first)
    board = chess.Board()
    t = 1.0
    out_of_phase: chess.Color | None = None  # the player who moves on his opponent's time (his press impossible)
    for ply, uci in enumerate(moves, start=1):
        move = chess.Move.from_uci(uci)
        side = board.turn
        if ply == outage_ply:
            outs += engine.feed(LinkChanged(at=t, link=Link.CLOCK, up=False, detail="clock cable"))
            t += rng.uniform(0.1, 1.0)
            if kind == CONTRA[0]:
                clock.press(side, t)  # no move: his clock stopped, the opponent's runs
                out_of_phase = side
            else:
                events = move_events(board, move, t, None)
                for event in events:
                    outs += engine.feed(event)
                t = events[-1].at + rng.uniform(0.6, 1.0)
                clock.press(side, t)
                t += rng.uniform(0.8, 2.0)
                clock.press(not side, t)  # the opponent presses back, no move of his
                out_of_phase = not side
                board.push(move)
            back = t + rng.uniform(0.3, 2.0)
            if rng.random() < 0.7:
                outs += engine.feed(LinkChanged(at=back, link=Link.CLOCK, up=True, detail="clock cable"))
            outs += engine.feed(clock.reading(back + 0.05))
            t = back + rng.uniform(0.5, 1.5)
            if kind == CONTRA[1]:
                continue
        events = move_events(board, move, t, None)
        for event in events:
            outs += engine.feed(event)
        t = events[-1].at + rng.uniform(0.6, 1.0)
        if side == out_of_phase:
            out_of_phase = None  # his clock is not running: no press; the opponent's next press puts it right
        else:
            outs += engine.feed(clock.press(side, t))
        outs += engine.advance(t + 0.3)
        board.push(move)
        t += rng.uniform(0.3, 1.0)
    outs += engine.advance(t + 10.0)
    assert [m.uci for m in engine.state.moves] == moves, (seed, kind)
    return engine, outs, kind, outage_ply


@pytest.mark.parametrize("seed", range(40))
def test_lever_contradicting_the_moves_seen_one_alert(seed: int) -> None:
    """The clock read again after its link's outage shows a press no move explains: the side to move pressed
    without moving (the lever moved and no move of his is on the board), or the mover's opponent pressed back
    without a move of his (the lever back where it was, the other clock run, one move seen). One
    ``CLOCK_PRESS_NO_MOVE`` (7.5.3, suspected: when he pressed is not known) for the player who had the move; what
    follows on the board (his move on the opponent's time) is that incident's, as after a press seen; the move
    seen in the second case completed by its press."""
    engine, outs, kind, outage_ply = _contradiction(seed)
    found = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]
    alerts = [f for f in found if f.severity.value != "info"]
    assert [f.code for f in found].count("CLOCK_PRESS_NO_MOVE") == 1, (kind, [(f.code, f.incident) for f in found])
    primary = next(f for f in found if f.code == "CLOCK_PRESS_NO_MOVE")
    assert primary.side == (engine.state.moves[outage_ply - 1].side if kind == CONTRA[0] else
                            not engine.state.moves[outage_ply - 1].side), kind
    assert {f.incident or f.id for f in alerts} == {primary.id}, (kind, [(f.code, f.id, f.incident) for f in alerts])
    if kind == CONTRA[1]:
        rec = engine.state.moves[outage_ply - 1]
        assert rec.completion is Completion.PRESS and (rec.clock_white, rec.clock_black) == (None, None), rec
