"""The arbiter's correction cycle of 7.5.1 in every physical form, with randomised order and timing.

After an illegal move completed by a press (geometry, an illegal capture, a move leaving the king in check,
in standard chess and in Chess960), the arbiter pauses the clock or corrects on the running clock; the
pieces go back in any order (a captured piece comes back from beside the board); the times are corrected
(the penalty to the opponent, the increment taken back) or not; the clock is restarted with the offender's
side running (the lever moved while paused, at the restart, or the arbiter pressing the opponent's side on
a running clock); the tablet's reinstate may come before, during or after the physical restoration, or not
at all; the offender replaces the move with the piece he touched (4.3 via 7.5.1) and presses; the
opponent replies.

Outcome for every form: the record is the legal game; the illegal-move finding resolves itself; no step of
the cycle raises a finding of severity warning or above; the penalty time seen on the clock is compared
with the suggestion (an info note when it differs).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, Reinstate
from boardd.core.laws.codes import is_illegal_move_class
from boardd.core.outputs import Irregularity, IrregularityRaised, Output, Severity, Status
from boardd.core.settings import RulesConfig
from tests.core.scenario import ClockSim, move_events, start_clock

TIME_CONTROL = "5400+30"


@dataclass(frozen=True, slots=True)
class Illegal:
    """An illegal move as the hand makes it: the piece from one square to another (maybe capturing)."""

    kind: str
    from_square: int
    to_square: int


def _illegal_moves(board: chess.Board) -> list[Illegal]:
    """Illegal moves the side to move could make on the board: self-check, geometry, illegal capture."""
    out: list[Illegal] = []
    legal_targets = {(m.from_square, m.to_square) for m in board.legal_moves}
    after_legal = {_placement_after(board, m) for m in board.legal_moves}
    for move in board.pseudo_legal_moves:
        if move not in board.legal_moves and not board.is_castling(move) and not move.promotion \
                and not board.is_en_passant(move):
            out.append(Illegal("self-check", move.from_square, move.to_square))
    for sq in board.pieces(chess.KNIGHT, board.turn) | board.pieces(chess.BISHOP, board.turn) | \
            board.pieces(chess.ROOK, board.turn) | board.pieces(chess.QUEEN, board.turn):
        for to in chess.SQUARES:
            if to == sq or (sq, to) in legal_targets or chess.square_distance(sq, to) > 3:
                continue
            target = board.piece_at(to)
            if target is not None and (target.color == board.turn or target.piece_type == chess.KING):
                continue
            if chess.Move(sq, to) in board.pseudo_legal_moves:
                continue
            probe = board.copy(stack=False)
            piece = probe.remove_piece_at(sq)
            probe.set_piece_at(to, piece)
            # the placement must not be a legal move's (then it is no illegal move on the board)
            if probe.board_fen() in after_legal:
                continue
            out.append(Illegal("capture" if target is not None else "geometry", sq, to))
    return out


def _placement_after(board: chess.Board, move: chess.Move) -> str:
    probe = board.copy(stack=False)
    probe.push(move)
    return probe.board_fen()


def _position(rng: random.Random, chess960: bool) -> tuple[chess.Board, list[chess.Move]]:
    """A position some random plies into a game (standard or Chess960) with an illegal move available."""
    while True:
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        start = board.copy()
        played = []
        for _ in range(rng.randrange(6, 40)):
            moves = [m for m in board.legal_moves if not board.is_castling(m)]
            if not moves:
                break
            move = rng.choice(moves)
            board.push(move)
            played.append(move)
        if board.is_game_over() or not _illegal_moves(board):
            continue
        return start, played


@dataclass
class Form:
    seed: int
    chess960: bool
    paused: bool
    restart: str  # "lever-while-paused" | "lever-after-resume" | "arbiter-press" (running clock)
    restart_first: bool  # running clock: the arbiter presses before putting the pieces back
    penalty: str  # "suggested" | "none" | "other" | "suggested-and-increment"
    tablet: str  # "none" | "before" | "during" | "after" | "after-restart"
    victim_first: bool


def _forms() -> list[Form]:
    rng = random.Random(751)
    forms = []
    for seed in range(160):
        paused = rng.random() < 0.6
        restart = rng.choice(("lever-while-paused", "lever-after-resume")) if paused else "arbiter-press"
        forms.append(Form(seed=seed, chess960=seed % 5 == 4, paused=paused, restart=restart,
                          restart_first=not paused and rng.random() < 0.3,
                          penalty=rng.choice(("suggested", "none", "other", "suggested-and-increment")),
                          tablet=rng.choice(("none", "before", "during", "after", "after-restart")),
                          victim_first=rng.random() < 0.5))
    return forms


FORMS = _forms()


class Driver:
    """Feeds events one at a time (timers fired as the daemon does) and keeps the outputs."""

    def __init__(self, start: chess.Board, chess960: bool) -> None:
        fen = None if start.fen() == chess.STARTING_FEN and not chess960 else start.fen()
        self.engine = Engine(RulesConfig(), GameInfo(time_control=TIME_CONTROL, start_fen=fen, chess960=chess960))
        self.outs: list[Output] = []
        self.clock: ClockSim
        self.clock, reading = start_clock(chess.WHITE, -100.0, seconds=5400.0)
        self.feed(reading)

    def feed(self, event: Event) -> None:
        while (deadline := self.engine.next_deadline()) is not None and deadline < event.at:
            self.outs += self.engine.advance(deadline)
        self.outs += self.engine.feed(event)

    def raised(self) -> list[Irregularity]:
        return [o.irregularity for o in self.outs if isinstance(o, IrregularityRaised)]


def _play(driver: Driver, board: chess.Board, moves: list[chess.Move], t: float) -> float:
    for move in moves:
        for event in move_events(board, move, t, driver.clock):
            driver.feed(event)
        board.push(move)
        t += 1.5
    return t


def _side(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"


@pytest.mark.parametrize("form", FORMS, ids=[f"seed{f.seed}-{'960' if f.chess960 else 'std'}-"
                                             f"{'paused' if f.paused else 'running'}-{f.restart}-{f.penalty}-"
                                             f"tablet-{f.tablet}" for f in FORMS])
def test_correction_cycle(form: Form) -> None:
    rng = random.Random(form.seed)
    start, history = _position(rng, form.chess960)
    board = start.copy()
    driver = Driver(start, form.chess960)
    clock = driver.clock
    t = _play(driver, board, history, -90.0 + 1.0)
    t = max(t, 0.0)
    driver.outs.clear()
    offender = board.turn
    opponent = not offender
    ply = len(board.move_stack)
    illegal = rng.choice(_illegal_moves(board))
    piece = board.piece_at(illegal.from_square)
    victim = board.piece_at(illegal.to_square)
    assert piece is not None

    def gap(low: float = 0.15, high: float = 0.9) -> float:
        return rng.uniform(low, high)

    # the illegal move, made and pressed
    if victim is not None and form.victim_first:
        driver.feed(_lift(t, illegal.to_square))
        t += gap()
    driver.feed(_lift(t, illegal.from_square))
    t += gap()
    if victim is not None and not form.victim_first:
        driver.feed(_lift(t, illegal.to_square))
        t += gap(0.05, 0.3)
    driver.feed(_place(t, illegal.to_square, piece))
    t += gap(0.3, 1.2)
    driver.feed(clock.press(offender, t))
    t += gap(1.0, 4.0)
    driver.feed(clock.reading(t))
    first = [i for i in driver.raised() if i.severity is not Severity.INFO]
    assert len(first) == 1 and is_illegal_move_class(first[0].code, first[0].edition), \
        [(i.code, i.subtype) for i in first]
    finding = first[0]
    suggested = float(finding.suggestion.add_to_opponent_s or 0)

    def tablet(when: str) -> None:
        nonlocal t
        if form.tablet == when:
            driver.feed(Reinstate(at=t, ply=ply))
            t += gap()

    def restart() -> None:
        nonlocal t
        if form.restart == "arbiter-press":
            driver.feed(clock.press(opponent, t))
            t += gap(0.5, 2.0)

    # the arbiter steps in
    tablet("before")
    if form.paused:
        driver.feed(clock.pause(t))
        t += gap(2.0, 6.0)
    elif form.restart_first:
        restart()
    # pieces back, in a random order (the victim comes back from beside the board)
    steps = [("lift", illegal.to_square, None), ("place", illegal.from_square, piece)]
    if victim is not None:
        steps.insert(1 if rng.random() < 0.5 else 2, ("place", illegal.to_square, victim))
    for i, (what, sq, content) in enumerate(steps):
        if what == "lift":
            driver.feed(_lift(t, sq))
        else:
            driver.feed(_place(t, sq, content))
        t += gap(0.3, 1.5)
        if i == 0:
            tablet("during")
    t += gap(0.5, 2.0)
    tablet("after")
    # the times, while paused
    if form.paused:
        for _ in range(rng.randrange(0, 3)):
            driver.feed(clock.reading(t))
            t += gap(0.5, 1.0)
        added = {"suggested": suggested, "none": 0.0, "other": suggested / 2 or 60.0,
                 "suggested-and-increment": suggested}[form.penalty]
        if added:
            _add(clock, opponent, added)
            driver.feed(clock.reading(t))
            t += gap(1.0, 3.0)
        if form.penalty == "suggested-and-increment":
            _add(clock, offender, -30.0)
            driver.feed(clock.reading(t))
            t += gap(1.0, 3.0)
        if form.restart == "lever-while-paused":
            clock.lever = offender
            driver.feed(clock.reading(t))
            t += gap(0.5, 2.0)
        driver.feed(clock.resume(t))
        t += gap(0.3, 1.0)
        if form.restart == "lever-after-resume":
            driver.feed(clock.press(opponent, t))
            t += gap(0.5, 1.5)
    elif not form.restart_first:
        restart()
    tablet("after-restart")
    # the offender's replacement move: the touched piece if it can move (4.3 via 7.5.1)
    own = [m for m in board.legal_moves if m.from_square == illegal.from_square]
    replacement = rng.choice(own or list(board.legal_moves))
    t = _play(driver, board, [replacement], t + gap(1.0, 3.0))
    reply_moves = list(board.legal_moves)
    if reply_moves:
        t = _play(driver, board, [rng.choice(reply_moves)], t + gap(1.0, 3.0))
    driver.outs += driver.engine.advance(t + 10.0)

    state = driver.engine.state
    assert [m.uci for m in state.moves] == [m.uci() for m in board.move_stack], "record differs from the game"
    assert all(m.legal for m in state.moves)
    strong = [(i.code, i.subtype) for i in driver.raised() if i.severity is not Severity.INFO]
    assert strong == [(finding.code, finding.subtype)], strong
    final = next(i for i in driver.engine.irregularities if i.id == finding.id)
    assert final.status is Status.RESOLVED
    assert final.ruling is not None and final.ruling.startswith(f"position reinstated at ply {ply}"), final.ruling
    adjust = [i for i in driver.raised() if i.code == "ARBITER_ADJUST"]
    applied = {"suggested": suggested, "suggested-and-increment": suggested}.get(form.penalty)
    # the suggestion names the penalty and the increment of the illegal press (R21 (a), (b)): the times set are
    # compared with both (the "suggested" form leaves the increment to the offender: one note says so)
    taken_back = form.penalty == "suggested-and-increment" or not finding.suggestion.remove_from_offender_s
    if form.paused and applied is not None and taken_back:
        assert not adjust, adjust
        if suggested:
            assert f"seen on the clock for {_side(opponent).capitalize()}" in final.ruling
    elif form.paused and (suggested or not taken_back):
        assert len(adjust) == 1 and adjust[0].incident == finding.id, adjust
    assert all(i.status is Status.NOTED for i in driver.raised() if i.severity is Severity.INFO)


def _add(clock: ClockSim, color: chess.Color, seconds: float) -> None:
    if color == chess.WHITE:
        clock.white += seconds
    else:
        clock.black += seconds


def _lift(at: float, square: int) -> Event:
    from boardd.core.events import SquareChanged

    return SquareChanged(at=at, square=square, content=None)


def _place(at: float, square: int, piece: chess.Piece | None) -> Event:
    from boardd.core.events import SquareChanged

    return SquareChanged(at=at, square=square, content=piece)


def test_the_forms_cover_every_variation() -> None:
    assert {f.restart for f in FORMS} == {"lever-while-paused", "lever-after-resume", "arbiter-press"}
    assert {f.tablet for f in FORMS} == {"none", "before", "during", "after", "after-restart"}
    assert {f.penalty for f in FORMS} == {"suggested", "none", "other", "suggested-and-increment"}
    assert any(f.chess960 for f in FORMS) and any(f.restart_first for f in FORMS)


def test_an_illegal_move_noticed_after_the_reply_takes_both_back_without_a_takeback_finding() -> None:
    """7.5.1: found after Black replied, the position before the illegal move is reinstated (the reply with it);
    the reply taken back first is a step of the reinstatement, not a takeback by the players."""
    from tests.core.test_correction_fixes import assert_reinstated
    from tests.core.test_scenarios import Scn, check, run

    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 2000 L g8 · 2300 P f6 bN · 2700 C B · 5000 PAUSE · "
                   "6000 L f6 · 6400 P g8 bN · 7000 L c5 · 7400 P f1 wB · 8000 ADD B 120 · 8500 ADD W -30 · "
                   "9000 RESUME · 10000 L f1 · 10300 P c4 wB · 10800 C W",
              ("Bc4",), ("ILLEGAL_MOVE/GEOMETRY",), allow_info=("CLOCK_PAUSED",))
    r = run(scn)
    check(scn, r)
    assert_reinstated(r)
