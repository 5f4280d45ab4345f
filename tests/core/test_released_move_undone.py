"""A released move taken back on the board before it was completed (R07, 4.7, 6.2.1): what is published follows
the board.

The real procedure, randomised: the player makes a move (a quiet move, a capture, castling, a promotion) and lets
go of it (presumed released after ``T_settle``: made and published before the press, as the broadcast wants), then
after 0.5-10 s puts the position back as it was (the pieces back in any order, a captured piece put back), thinks
1-120 s, and then makes the same move again, or a different one, or presses the clock with the move still taken
back; the opponent replies, maybe at once (blitz). With a clock and without one (the move then completed by the
player's next move, 6.2.1.2; E2009 has no such rule but the engine completes it the same way), in every edition.

The Laws: a move is made when released (4.7) and completed by the press (6.2.1), the time until the press being the
mover's. So: while the board shows the position before the move, settled, the record and the broadcast do not show
it (``MovesRetracted``); the same move made again is recorded once, made when put down again, its move time the
mover's whole thinking; a different move is ``RELEASED_MOVE_CHANGED`` once, suggesting the first released move
(R07); a press with the move taken back completed it by the Laws: ``TAKEBACK_DETECTED`` (R29), not a press
without a move, and the record keeps the move (4.7: a released legal move stands; the takeback is the arbiter's to
rule on), made when released, completed by the press; putting it back on the board then flags nothing more.
Nothing is lost: every move played is recorded and published once, the journal (the same events fed again)
rebuilds the same game, and the PGN has the moves played.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

import chess
import chess.pgn
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, SquareChanged
from boardd.core.outputs import (
    Irregularity,
    IrregularityRaised,
    MoveMade,
    MoveRecord,
    MovesRetracted,
    Output,
    Severity,
)
from boardd.core.settings import RulesConfig
from drivers.sim._procedures import takeback_order
from tests.core.scenario import ClockSim, move_events, start_clock
from tests.core.test_correction_running import made_then_retracted

T_SETTLE = RulesConfig().timing.t_settle

#: (start FEN, the first released move, the different move made after taking it back)
POSITIONS = {
    "quiet": (chess.STARTING_FEN, "g1f3", "e2e4"),
    "capture": ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "e4d5", "g1f3"),
    "castling": ("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1", "e1g1", "a1b1"),
    "castling-black": ("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1", "e8c8", "h8g8"),
    "promotion": ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q", "e1d2"),
    "capture-promotion": ("rn2k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7a8q", "e1e2"),
}


class Table:
    """An engine fed one event at a time (its timers fired as the daemon does), with or without a clock."""

    def __init__(self, fen: str, *, clock: bool, edition: int) -> None:
        self.engine = Engine(RulesConfig(clock_expected=clock),
                             GameInfo(edition=edition, time_control="5400+30", start_fen=fen))
        self.board = chess.Board(fen)
        self.events: list[Event] = []
        self.outs: list[Output] = []
        self.clock: ClockSim | None = None
        if clock:
            self.clock, reading = start_clock(self.board.turn, -100.0)
            self.feed(reading)

    def feed(self, event: Event) -> None:
        self.events.append(event)
        self.outs += _fed(self.engine, event)

    def advance(self, t: float) -> None:
        self.outs += self.engine.advance(t)

    def press(self, color: chess.Color, t: float) -> None:
        assert self.clock is not None
        self.feed(self.clock.press(color, t))

    def play(self, move: chess.Move, t: float, *, press: bool) -> float:
        """A clean legal move (one hand) from *t*, pressed if *press*; the time its last piece was put down."""
        last = t
        for ev in move_events(self.board, move, t, self.clock if press else None):
            if isinstance(ev, SquareChanged):
                last = ev.at
            self.feed(ev)
        self.board.push(move)
        return last

    def take_back(self, rng: random.Random, t: float) -> float:
        """The position before the last move put back by hand, the pieces in any order, each step under
        ``T_settle`` after the one before (one gesture); the time of the last step."""
        after = self.board.copy(stack=False)
        self.board.pop()
        steps = takeback_order(rng, self.board, after)  # a captured piece, a promotion's pawn: from beside the board
        for i, (sq, content) in enumerate(steps):
            self.feed(SquareChanged(at=t, square=sq, content=content))
            if i < len(steps) - 1:
                t += rng.uniform(0.05, 0.3)
        return t

    def findings(self) -> list[Irregularity]:
        return [o.irregularity for o in self.outs if isinstance(o, IrregularityRaised)]

    def strong(self) -> list[str]:
        return [i.code for i in self.findings() if i.severity is not Severity.INFO]


def _fed(engine: Engine, event: Event) -> list[Output]:
    outs: list[Output] = []
    while (deadline := engine.next_deadline()) is not None and deadline < event.at:
        outs += engine.advance(deadline)
    return outs + engine.feed(event)


def published(outs: list[Output]) -> list[str]:
    """The record as a consumer of the move messages and retractions keeps it."""
    record: list[str] = []
    for out in outs:
        if isinstance(out, MoveMade):
            del record[out.move.ply - 1:]
            record.append(out.move.uci)
        elif isinstance(out, MovesRetracted):
            del record[out.to_ply:]
    return record


@dataclass(frozen=True)
class Case:
    seed: int
    kind: str
    clock: bool
    edition: int
    then: str  # "same" | "other" | "press" (with a clock: pressed with the move taken back)


def _cases() -> list[Case]:
    out = []
    for seed in range(96):
        rng = random.Random(seed)
        clock = seed % 2 == 0
        then = rng.choice(["same", "other", "press"] if clock else ["same", "other"])
        out.append(Case(seed, sorted(POSITIONS)[seed % len(POSITIONS)], clock, (2009, 2014, 2018, 2023)[seed % 4],
                        then))
    return out


def _reply(rng: random.Random, board: chess.Board) -> chess.Move:
    quiet = [m for m in board.legal_moves if not board.is_capture(m) and not board.is_castling(m)]
    return rng.choice(quiet or list(board.legal_moves))


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c.kind}-{'clock' if c.clock else 'noclock'}-"
                                                         f"{c.edition}-{c.then}-{c.seed}")
def test_released_move_taken_back_leaves_the_broadcast(case: Case) -> None:
    rng = random.Random(case.seed)
    fen, first_uci, other_uci = POSITIONS[case.kind]
    table = Table(fen, clock=case.clock, edition=case.edition)
    mover = table.board.turn
    first = chess.Move.from_uci(first_uci)
    first_san = table.board.san(first)
    put = table.play(first, 0.0, press=False)
    table.advance(put + T_SETTLE + 0.05)
    assert published(table.outs) == [first_uci], "made and published before the press (presumed released)"
    made = table.engine.state.moves[0]
    start = made.made_at - (made.emt or 0.0)
    back = table.take_back(rng, put + rng.uniform(0.5, 10.0))
    think = rng.uniform(1.0, 120.0)
    if case.then == "press" and rng.random() < 0.3:
        think = rng.uniform(0.05, T_SETTLE * 0.9)  # pressed at once, before the board stood T_settle
    else:
        table.advance(back + think)
        assert table.engine.state.moves == (), "the board shows the position before the move: no move in the record"
        assert published(table.outs) == [] and made_then_retracted(table.outs) == [first_san]
    t = back + think
    if case.then == "press":
        table.press(mover, t)
        table.advance(t + 5.0)
        codes = [i.code for i in table.findings()]
        assert codes.count("TAKEBACK_DETECTED") == 1 and "CLOCK_PRESS_NO_MOVE" not in codes, codes
        takeback = next(i for i in table.findings() if i.code == "TAKEBACK_DETECTED")
        assert takeback.suggestion.move == first_san and takeback.side == mover
        # 4.7, R29: the released move stands, completed by the press (6.2.1): the record keeps it (made when it
        # was released) until the arbiter rules, though the board shows the position before it
        (kept,) = table.engine.state.moves
        assert (kept.uci, kept.made_at, kept.completed_at) == (first_uci, pytest.approx(put), pytest.approx(t))
        assert kept.emt == pytest.approx(made.emt)
        assert published(table.outs) == [first_uci] and takeback.suggestion.reinstate_ply == 1
        # the move put back on the board (the arbiter's ruling, or the player's hands), then the opponent replies:
        # nothing more to flag, the reply recorded after it
        shown = table.board.copy(stack=False)
        table.board.push(first)
        at = t + rng.uniform(5.5, 30.0)
        for sq, content in takeback_order(rng, table.board, shown):
            table.feed(SquareChanged(at=at, square=sq, content=content))
            at += rng.uniform(0.1, 0.5)
        reply = _reply(rng, table.board)
        table.play(reply, at + rng.uniform(1.0, 5.0), press=True)
        table.advance(table.events[-1].at + 10.0)
        assert [m.uci for m in table.engine.state.moves] == [first_uci, reply.uci()]
        assert published(table.outs) == [first_uci, reply.uci()]
        assert table.strong() == ["TAKEBACK_DETECTED"], "one incident, one alert"
        _journal_rebuilds(table)
        return
    second = first if case.then == "same" else chess.Move.from_uci(other_uci)
    put2 = table.play(second, t, press=case.clock)
    reply_at = put2 + rng.uniform(0.1, 3.0)  # the opponent's reply, maybe at once (blitz)
    reply = _reply(rng, table.board)
    expected = [second.uci(), reply.uci()]
    table.play(reply, max(reply_at, put2 + (1.0 if case.clock else 0.1)), press=case.clock)
    if not case.clock:  # the mover's next move completes his move (6.2.1.2)
        nxt = _reply(rng, table.board)
        table.play(nxt, table.events[-1].at + rng.uniform(0.5, 5.0), press=False)
        expected.append(nxt.uci())
    table.advance(table.events[-1].at + 10.0)
    moves = table.engine.state.moves
    assert [m.uci for m in moves] == expected
    assert published(table.outs) == expected, "every move played published once, the retracted one gone"
    assert made_then_retracted(table.outs) == [first_san]
    rec: MoveRecord = moves[0]
    assert rec.made_at == pytest.approx(put2), "made when it was put down again (released then)"
    assert rec.emt == pytest.approx(put2 - start), "the move time is the mover's, all of it until the move stood"
    assert rec.completed_at is not None
    if not case.clock:
        # the engine's clock: the mover's ran on while the move was taken back, the opponent's did not
        remade = next(o.move for o in table.outs if isinstance(o, MoveMade) and o.move.made_at == rec.made_at)
        mine, theirs = (remade.clock_white, remade.clock_black) if mover == chess.WHITE else (remade.clock_black,
                                                                                                remade.clock_white)
        assert theirs == pytest.approx(5400.0)
        assert mine == pytest.approx(5400.0 + 30.0 - (put2 - start), abs=0.01)
    strong = table.strong()
    if case.then == "same":
        assert strong == [], "the same move made again: nothing to flag"
    else:
        assert strong == ["RELEASED_MOVE_CHANGED"], "one incident, one alert"
        changed = next(i for i in table.findings() if i.code == "RELEASED_MOVE_CHANGED")
        assert changed.suggestion.move == first_san and changed.side == mover
    game = chess.pgn.read_game(io.StringIO(table.engine.pgn()))
    assert game is not None and [m.uci() for m in game.mainline_moves()] == expected, "the PGN: the moves played"
    _journal_rebuilds(table)


def _journal_rebuilds(table: Table) -> None:
    """The journal: the same events fed to a fresh engine give the same game."""
    engine = Engine(table.engine.rules, table.engine.g.game)
    outs: list[Output] = []
    for ev in table.events:
        outs += _fed(engine, ev)
    outs += engine.advance(table.events[-1].at + 10.0)
    assert engine.state.moves == table.engine.state.moves
    assert [i.code for i in engine.irregularities] == [i.code for i in table.engine.irregularities]


@pytest.mark.parametrize("clock", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_a_flicker_back_is_no_takeback(clock: bool, seed: int) -> None:
    """The piece lifted and set down on its square again for less than ``T_settle`` (a hand passing, a sensor
    flicker), then back on the square of the move: nothing retracted, the move made when first released."""
    rng = random.Random(seed)
    table = Table(chess.STARTING_FEN, clock=clock, edition=2023)
    knight = chess.Piece(chess.KNIGHT, chess.WHITE)
    put = table.play(chess.Move.from_uci("g1f3"), 0.0, press=False)
    t = put + rng.uniform(0.5, 10.0)
    table.feed(SquareChanged(at=t, square=chess.F3, content=None))
    t += rng.uniform(0.05, 0.3)
    table.feed(SquareChanged(at=t, square=chess.G1, content=knight))
    t += rng.uniform(0.05, T_SETTLE * 0.9)
    table.feed(SquareChanged(at=t, square=chess.G1, content=None))
    t += rng.uniform(0.05, 0.3)
    table.feed(SquareChanged(at=t, square=chess.F3, content=knight))
    table.advance(t + 30.0)
    assert not [o for o in table.outs if isinstance(o, MovesRetracted)]
    assert [m.made_at for m in table.engine.state.moves] == [pytest.approx(put)]
    assert table.strong() == []


@pytest.mark.parametrize("seed", range(8))
def test_a_published_detour_put_back_leaves_the_broadcast(seed: int) -> None:
    """1.Bf1-c4 through the pawn (illegal, pressed, not noticed), 1...e5; White sets the bishop down on b5 (Bb5, a
    legal move: made, kept back as maybe a restoration's hands) and it stands more than 6 s: published. Then it goes
    back to c4 and White thinks: the broadcast no longer shows Bb5. Then White plays on (Nf3: the released Bb5
    changed, RELEASED_MOVE_CHANGED once), or puts the position before the illegal move back (nothing more to flag),
    or presses with the bishop back (TAKEBACK_DETECTED: Bb5 was released, then taken back; the press completed it
    and the record keeps it, 4.7). Before: Bb5 stayed on the broadcast while the bishop stood on c4."""
    from tests.core.test_correction_running import _bishop_through_the_pawn_not_noticed

    rng = random.Random(seed)
    rig = _bishop_through_the_pawn_not_noticed()
    bishop = chess.Piece(chess.BISHOP, chess.WHITE)
    rig.lift(chess.C4)
    rig.t += rng.uniform(0.2, 0.6)
    rig.place(chess.B5, bishop)
    rig.t += rng.uniform(6.5, 15.0)
    rig.outs += rig.engine.advance(rig.t)
    assert published(rig.outs)[-1:] == ["c4b5"]
    rig.lift(chess.B5)
    rig.t += rng.uniform(0.1, 0.35)
    rig.place(chess.C4, bishop)
    rig.t += rng.uniform(1.0, 120.0)
    rig.outs += rig.engine.advance(rig.t)
    assert [m.uci for m in rig.engine.state.moves] == ["f1c4", "e7e5"]
    assert made_then_retracted(rig.outs) == ["Bb5"]
    then = ("play on", "restore", "press")[seed % 3]
    if then == "play on":
        rig.board = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/2B5/8/PPPPPPPP/RNBQK1NR w KQkq - 0 2")
        rig.play(chess.Move.from_uci("g1f3"))
        rig.play(chess.Move.from_uci("b8c6"))
        expected, codes = ["!f1c4", "e7e5", "g1f3", "b8c6"], ["RELEASED_MOVE_CHANGED"]
    elif then == "restore":
        # the position before the illegal move put back, in any order (7.5.1)
        pawn = chess.Piece(chess.PAWN, chess.BLACK)
        for a, b, piece in rng.sample([(chess.C4, chess.F1, bishop), (chess.E5, chess.E7, pawn)], 2):
            rig.lift(a)
            rig.t += rng.uniform(0.2, 0.8)
            rig.place(b, piece)
            rig.t += rng.uniform(0.3, 3.0)
        expected, codes = [], []
    else:
        rig.press(chess.WHITE)
        # 4.7, R29: Bb5 released stands, completed by the press: the record keeps it until the arbiter rules
        expected, codes = ["!f1c4", "e7e5", "c4b5"], ["TAKEBACK_DETECTED"]
    rig.settle(8.0)
    assert rig.record() == expected
    assert [i.code for i in rig.strong()] == codes
    assert all(i.suggestion.move == "Bb5" for i in rig.strong())
    assert made_then_retracted(rig.outs) == ["Bb5"]


@pytest.mark.parametrize("seed", range(6))
def test_a_detour_put_back_then_the_restoration_in_any_order(seed: int) -> None:
    """The same detour (Bb5 set down on the way, kept back or published after 6 s) put back on c4, then the position
    before the illegal move put back in any order (7.5.1: the pawn first or the bishop first): a reinstatement, no
    takeback and no out-of-turn change. Before: the detour, a made move of the offender after the reply, closed the
    illegal move's cycle (it stood), and stayed closed once the detour was taken back: the pawn put back first
    read as the players taking moves back (TAKEBACK_DETECTED twice, OUT_OF_TURN_CHANGE)."""
    from tests.core.test_correction_running import _bishop_through_the_pawn_not_noticed

    rng = random.Random(seed)
    rig = _bishop_through_the_pawn_not_noticed()
    bishop = chess.Piece(chess.BISHOP, chess.WHITE)
    pawn = chess.Piece(chess.PAWN, chess.BLACK)
    rig.lift(chess.C4)
    rig.t += rng.uniform(0.2, 0.6)
    rig.place(chess.B5, bishop)
    rig.t += rng.uniform(1.0, 5.0) if seed % 2 else rng.uniform(6.5, 15.0)
    rig.outs += rig.engine.advance(rig.t)
    rig.lift(chess.B5)
    rig.t += rng.uniform(0.1, 0.35)
    rig.place(chess.C4, bishop)
    rig.t += rng.uniform(1.0, 60.0)
    rig.outs += rig.engine.advance(rig.t)
    order = [(chess.E5, chess.E7, pawn), (chess.C4, chess.F1, bishop)]
    for a, b, piece in order if seed % 3 else order[::-1]:
        rig.lift(a)
        rig.t += rng.uniform(0.2, 0.8)
        rig.place(b, piece)
        rig.t += rng.uniform(0.3, 3.0)
    rig.settle(8.0)
    assert rig.record() == []
    assert [i.code for i in rig.strong()] == []


#: Promotions whose new piece the opponent can capture: lifting it to take the move back reads at first as the
#: opponent starting a capture, and the pawn then comes back from beside the board (the simulator's
#: ``undo/same-again`` on a promotion, bench false-alarms clean:496, casual:389, casual:468).
PROMOTIONS_ATTACKED = {
    "promotion-attacked": ("3rk3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q"),
    "underpromotion-attacked": ("3rk3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8n"),
    "capture-promotion-attacked": ("rr2k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7a8q"),
    "black-promotion-attacked": ("4k3/8/8/8/8/8/6p1/4K2R b - - 0 1", "g2g1q"),
}


@pytest.mark.parametrize("clock", [True, False], ids=["clock", "noclock"])
@pytest.mark.parametrize("kind", sorted(PROMOTIONS_ATTACKED))
@pytest.mark.parametrize("seed", range(6))
def test_a_capturable_promotion_taken_back_and_made_again_flags_nothing(kind: str, clock: bool, seed: int) -> None:
    """R07: the promoted piece lifted (the opponent could capture it there), the pawn put back from beside the
    board (and a captured piece), in any order; then the same promotion made again: the last mover's hands
    throughout, nothing for the opponent (no early start, no touch, no change out of turn)."""
    rng = random.Random(seed)
    fen, uci = PROMOTIONS_ATTACKED[kind]
    table = Table(fen, clock=clock, edition=(2014, 2018, 2023)[seed % 3])
    mover = table.board.turn
    move = chess.Move.from_uci(uci)
    put = table.play(move, 0.0, press=False)
    table.advance(put + T_SETTLE + 0.05)
    back = table.take_back(rng, put + rng.uniform(0.5, 10.0))
    table.advance(back + T_SETTLE + 0.05)
    assert table.engine.state.moves == (), "taken back: no move in the record"
    t = back + rng.uniform(1.0, 60.0)
    put2 = table.play(move, t, press=clock)
    reply = _reply(rng, table.board)
    expected = [uci, reply.uci()]
    table.play(reply, put2 + rng.uniform(1.0, 3.0), press=clock)
    if not clock:
        nxt = _reply(rng, table.board)
        table.play(nxt, table.events[-1].at + rng.uniform(0.5, 5.0), press=False)
        expected.append(nxt.uci())
    table.advance(table.events[-1].at + 10.0)
    assert [m.uci for m in table.engine.state.moves] == expected
    assert table.strong() == [], "the same move made again: nothing to flag"
    assert table.engine.state.moves[0].side == mover
