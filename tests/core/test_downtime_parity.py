"""Downtime audit: the daemon restarted while play went on; the clock read since the restart says who has the move.

Built from the Laws, not from the simulator: a player completes his move by pressing (6.2.1), so the side whose
clock runs has the move. The search for the moves missed takes the fewest plies; when those leave the other side
to move, they fit only if the last mover has not pressed yet, and a sequence one ply longer (a piece that took two
moves where one would do: Ra1-a2 ... Ra2-a3) may be what was played. Then neither is taken (never invent a move):
a gap with its candidates, one event, and the game goes on from the board with nobody accused.

Random games (standard and Chess960, castling whenever it may), a restart for 1..14 plies, with or without the
board's own log (DGT EEPROM, protocols.md §1.9), with castling done in several physical orders (R27).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import HOLD_S, RESTART_DETAIL
from boardd.core.events import (
    BoardLog,
    BoardSnapshot,
    ClockSide,
    Content,
    FillGap,
    GameInfo,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
    SquareChanged,
)
from boardd.core.outputs import GameEvent, IrregularityRaised, Output, Severity
from boardd.core.settings import RulesConfig
from tests.core.scenario import ClockSim

Step = tuple[int, Content]


def _steps(board: chess.Board, move: chess.Move, rng: random.Random) -> list[Step]:
    """The square changes of *move* as a hand makes them (castling: king first, rook first, or both lifted)."""
    mover = board.piece_at(move.from_square)
    assert mover is not None
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = board.is_kingside_castling(move)
        rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, rank)
        king_to, rook_to = chess.square(6 if kingside else 2, rank), chess.square(5 if kingside else 3, rank)
        rook = board.piece_at(rook_from)
        orders: list[list[Step]] = []
        if king_to != rook_from:  # one hand, king first (4.4.1): the only way in standard chess
            orders.append([(move.from_square, None), (king_to, mover), (rook_from, None), (rook_to, rook)])
        if board.chess960:  # R27, II.3.2.5.1: the king off the board first, then the rook; or both in hand
            # (the king lifted first: the rook touched first is 4.4.2, CASTLING_ROOK_FIRST, no lawful procedure)
            orders += [[(move.from_square, None), (rook_from, None), (rook_to, rook), (king_to, mover)],
                       [(move.from_square, None), (rook_from, None), (king_to, mover), (rook_to, rook)]]
        steps = rng.choice(orders)
        # a piece that does not move (Chess960: king or rook already on its square) is lifted and put back
        still = {sq for sq, to in ((move.from_square, king_to), (rook_from, rook_to)) if sq == to}
        return [s for s in steps if s[0] not in still]
    captured = move.to_square
    if board.is_en_passant(move):
        captured = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
    placed = chess.Piece(move.promotion, mover.color) if move.promotion else mover
    out: list[Step] = [(move.from_square, None)]
    if board.piece_at(captured) is not None:
        out.insert(rng.randrange(2), (captured, None))
    return [*out, (move.to_square, placed)]


def _game(rng: random.Random, plies: int, chess960: bool) -> tuple[chess.Board, list[chess.Move]]:
    start = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
    start.chess960 = chess960
    board = start.copy()
    moves: list[chess.Move] = []
    for _ in range(plies):
        legal = list(board.legal_moves)
        if not legal or board.is_game_over():
            break
        castles = [m for m in legal if board.is_castling(m)]
        move = rng.choice(castles) if castles and rng.random() < 0.6 else rng.choice(legal)
        moves.append(move)
        board.push(move)
    return start, moves


class Played:
    """What a game through the engine ended with: play on to the end, the findings that ask for the arbiter,
    the recoveries published (the restart's and the link outage's rigs)."""

    engine: Engine
    outs: list[Output]
    t: float

    def finish(self) -> None:
        self.t += 5.0
        self.outs += self.engine.advance(self.t)

    @property
    def strong(self) -> list[str]:
        return [f"{o.irregularity.code} ply {o.irregularity.ply}" for o in self.outs
                if isinstance(o, IrregularityRaised) and o.irregularity.severity is not Severity.INFO]

    @property
    def recovered(self) -> list[dict[str, object]]:
        return [dict(o.details) for o in self.outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]


class Restart(Played):
    """One game through the engine: moves seen, a restart, moves missed, the board back, moves seen again."""

    def __init__(self, start: chess.Board, rng: random.Random) -> None:
        self.board = start.copy()
        self.rng = rng
        self.engine = Engine(RulesConfig(), GameInfo(start_fen=start.fen(), chess960=start.chess960,
                                                     time_control="5400+30"))
        self.clock = ClockSim(white=5400, black=5400, running=start.turn, lever=start.turn, last=0.0)
        self.outs: list[Output] = []
        self.phys: list[Content] = [start.piece_at(sq) for sq in chess.SQUARES]
        self.t = 0.0
        self.outs += self.engine.feed(BoardSnapshot(at=0.0, squares=tuple(self.phys)))
        self.outs += self.engine.feed(self.clock.reading(0.2))
        self.t = 1.0
        self.log: list[LogEntry] = []

    def play(self, moves: Sequence[chess.Move], *, seen: bool, press_last: bool = True) -> None:
        for i, move in enumerate(moves):
            self.t += self.rng.uniform(2.0, 6.0)
            for square, content in _steps(self.board, move, self.rng):
                self.t += self.rng.uniform(0.1, 0.4)
                self.phys[square] = content
                if seen:
                    self.outs += self.engine.feed(SquareChanged(at=self.t, square=square, content=content))
                else:
                    self.log.append(LoggedChange(square=square, content=content))
            side = self.board.turn
            self.board.push(move)
            if not press_last and i == len(moves) - 1:
                continue
            self.t += self.rng.uniform(0.3, 1.0)
            self.press(side, seen=seen)

    def press(self, side: chess.Color, *, seen: bool) -> None:
        reading = self.clock.press(side, self.t)
        if seen:
            self.outs += self.engine.feed(reading)
        else:
            lever = ClockSide.LEFT if side == chess.WHITE else ClockSide.RIGHT
            shown = reading.left if lever is ClockSide.LEFT else reading.right
            self.log.append(LoggedPress(side=lever, shown=float(int(shown or 0))))

    def down(self) -> None:
        self.t += 1.0
        self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.CLOCK, up=False, detail=RESTART_DETAIL))
        self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.BOARD, up=False, detail=RESTART_DETAIL))

    def up(self, *, eeprom: bool) -> None:
        self.t += 5.0
        self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.BOARD, up=True, detail="pty"))
        if eeprom and self.log:
            self.outs += self.engine.feed(BoardLog(at=self.t, entries=tuple(self.log)))
        self.outs += self.engine.feed(BoardSnapshot(at=self.t, squares=tuple(self.phys)))
        self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.CLOCK, up=True, detail="pty"))
        self.outs += self.engine.feed(self.clock.reading(self.t + 0.1))
        self.t += 3.0
        self.outs += self.engine.advance(self.t)



def _sans(board: chess.Board, text: str) -> list[chess.Move]:
    work = board.copy()
    moves = []
    for san in text.split():
        moves.append(work.parse_san(san))
        work.push(moves[-1])
    return moves


def test_a_rook_that_took_two_moves_is_not_recorded_as_one() -> None:
    """Ra2 Kd8 Ra3 missed: Ra3 Kd8 is shorter but leaves White to move, while Black's clock runs. Neither
    Ra3 Kd8 nor one of the Ra1-x-a3 routes can be told: a gap listing both kinds, nobody accused after it."""
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = Restart(start, random.Random(1))
    r.play(_sans(r.board, "Kd1 Ke7"), seen=True)
    r.down()
    r.play(_sans(r.board, "Ra2 Kd8 Ra3"), seen=False)
    r.up(eeprom=False)
    r.play(_sans(r.board, "Kc8 Rb3 Kc7"), seen=True)
    r.finish()
    assert r.strong == []
    [event] = r.recovered
    assert event["kind"] == "ambiguous"
    candidates = event["candidates"]
    assert isinstance(candidates, list)
    assert ["a1a2", "e7d8", "a2a3"] in candidates and ["a1a3", "e7d8"] in candidates
    moves = [m.uci for m in r.engine.state.moves]
    assert moves[:2] == ["e1d1", "e8e7"]
    assert moves[2] == "0000" and r.engine.state.moves[2].recovered == "gap"
    assert moves[3:] == ["d8c8", "a3b3", "c8c7"]


def test_with_the_boards_log_the_rook_route_is_known() -> None:
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = Restart(start, random.Random(2))
    r.play(_sans(r.board, "Kd1 Ke7"), seen=True)
    r.down()
    r.play(_sans(r.board, "Ra2 Kd8 Ra3"), seen=False)
    r.up(eeprom=True)
    r.play(_sans(r.board, "Kc8 Rb3"), seen=True)
    r.finish()
    assert r.strong == []
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in r.board.move_stack]
    assert [e["kind"] for e in r.recovered] == ["unique"]


@pytest.mark.parametrize("press_after", [0.5, 4.0])
def test_a_move_not_pressed_yet_at_the_restart_is_still_recovered(press_after: float) -> None:
    """e4 missed and not pressed when the clock is read again: no sequence leaves White to move, so e4 it is
    (6.2.1: the press that comes later completes it)."""
    start = chess.Board()
    r = Restart(start, random.Random(3))
    r.down()
    r.play(_sans(r.board, "e4"), seen=False, press_last=False)
    r.t += 5.0
    r.outs += r.engine.feed(LinkChanged(at=r.t, link=Link.BOARD, up=True, detail="pty"))
    r.outs += r.engine.feed(BoardSnapshot(at=r.t, squares=tuple(r.phys)))
    r.outs += r.engine.feed(LinkChanged(at=r.t, link=Link.CLOCK, up=True, detail="pty"))
    r.outs += r.engine.feed(r.clock.reading(r.t + 0.1))
    r.t += press_after
    r.press(chess.WHITE, seen=True)
    r.t += 3.0
    r.outs += r.engine.advance(r.t)
    r.play(_sans(r.board, "e5 Nf3"), seen=True)
    r.finish()
    assert r.strong == []
    assert [m.uci for m in r.engine.state.moves] == ["e2e4", "e7e5", "g1f3"]
    assert [e["kind"] for e in r.recovered] == ["unique"]


def _case(seed: int) -> tuple[Restart, int, int, int, bool]:
    rng = random.Random(seed)
    chess960 = rng.random() < 0.5
    start, moves = _game(rng, rng.randrange(14, 50), chess960)
    k = rng.randrange(0, max(1, len(moves) - 3))
    n = rng.randrange(1, min(14, len(moves) - k - 1) + 1)
    m = min(len(moves) - k - n, 3)
    eeprom = rng.random() < 0.5
    r = Restart(start, rng)
    r.play(moves[:k], seen=True)
    r.down()
    r.play(moves[k:k + n], seen=False)
    r.up(eeprom=eeprom)
    r.play(moves[k + n:k + n + m], seen=True)
    r.finish()
    return r, k, n, m, eeprom


@pytest.mark.parametrize("seed", range(40))
def test_restarts_in_random_games_recover_or_flag_once_and_accuse_no_one(seed: int) -> None:
    r, k, _n, m, eeprom = _case(seed)
    want = [mv.uci() for mv in r.board.move_stack]
    got = [rec.uci for rec in r.engine.state.moves]
    assert got[:k] == want[:k]  # nothing recorded before the outage is lost
    assert r.strong == []
    [event] = r.recovered  # one incident, one event
    if event["kind"] == "unique":
        assert got == want  # never a move that was not played
    else:
        assert not eeprom or event["method"] == "search"
        gaps = [rec for rec in r.engine.state.moves if rec.recovered == "gap"]
        assert len(gaps) == 1 and gaps[0].uci == "0000" and not gaps[0].legal
        assert got[len(got) - m:] == want[len(want) - m:]  # the game goes on from the board


def test_a_failing_timer_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine.feed and advance never raise (the daemon would stop recording): an internal error in a timer
    (here the press judgement, where a gap's missing move stack once raised IndexError) is a SENSOR_FAULT."""
    r = Restart(chess.Board(), random.Random(4))

    def broken(*_args: object) -> None:
        r.engine.g.press = None
        raise IndexError("pop from empty list")

    monkeypatch.setattr(r.engine.presses, "judge_press", broken)
    r.play(_sans(r.board, "e4"), seen=True)  # the press is judged when the next event comes
    r.outs += r.engine.feed(SquareChanged(at=r.t + 1.0, square=chess.E7, content=None))
    r.outs += r.engine.advance(r.t + 2.0)
    assert [o.irregularity.code for o in r.outs if isinstance(o, IrregularityRaised)
            and o.irregularity.severity is not Severity.INFO] == ["SENSOR_FAULT"]


@pytest.mark.parametrize("clock_after", [3.0, None])
def test_the_search_waits_for_the_clocks_first_reading(clock_after: float | None) -> None:
    """The board is back before the clock (a clock on its own link): the search waits for the clock's first
    reading, which tells who has the move; a clock that does not come back holds it HOLD_S at most."""
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = Restart(start, random.Random(5))
    r.play(_sans(r.board, "Kd1 Ke7"), seen=True)
    r.down()
    r.play(_sans(r.board, "Ra2 Kd8 Ra3"), seen=False)
    r.t += 5.0
    r.outs += r.engine.feed(LinkChanged(at=r.t, link=Link.BOARD, up=True, detail="pty"))
    r.outs += r.engine.feed(BoardSnapshot(at=r.t, squares=tuple(r.phys)))
    back = r.t
    if clock_after is not None:
        r.t += clock_after
        r.outs += r.engine.advance(r.t)
        assert r.recovered == []  # held: the clock has not been read yet
        r.outs += r.engine.feed(LinkChanged(at=r.t, link=Link.CLOCK, up=True, detail="pty"))
        r.outs += r.engine.feed(r.clock.reading(r.t))
        r.t += 2.0
        r.outs += r.engine.advance(r.t)
        assert [m.recovered for m in r.engine.state.moves][2:] == ["gap"]  # both kinds: the side to move open
        assert r.recovered == []  # its one event waits for the first move after it (Downtime.after_gap)
        r.play(_sans(r.board, "Kc8 Rb3"), seen=True)
        r.finish()
        [event] = r.recovered
        assert event["kind"] == "ambiguous"  # Black had the move: the rook's routes of three plies, several
        assert r.strong == []
        assert [m.uci for m in r.engine.state.moves][3:] == ["d8c8", "a3b3"]
    else:
        deadline = r.engine.next_deadline()
        assert deadline is not None and deadline == pytest.approx(back + HOLD_S)  # no busy timer meanwhile
        r.t = back + HOLD_S + 0.1
        r.outs += r.engine.advance(r.t)
        assert [m.recovered for m in r.engine.state.moves][2:] == ["gap"]  # recovered without the clock, as before
        r.play(_sans(r.board, "Kc8 Rb3"), seen=True)
        r.finish()
        assert len(r.recovered) == 1  # its one event, once the first move after it did not settle it


def test_the_arbiter_fills_the_gap_with_the_line_that_fits_the_record() -> None:
    """The gap lists lines of two lengths; the record after it says who moved next (Black's Kc8). A fill that
    leaves the other side to move is refused (it made Kd8 and Kc8 two Black moves in a row, both legal=True)."""
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = Restart(start, random.Random(1))
    r.play(_sans(r.board, "Kd1 Ke7"), seen=True)
    r.down()
    r.play(_sans(r.board, "Ra2 Kd8 Ra3"), seen=False)
    r.up(eeprom=False)
    r.play(_sans(r.board, "Kc8 Rb3 Kc7"), seen=True)
    r.finish()
    [gap] = [m for m in r.engine.state.moves if m.recovered == "gap"]
    error = r.engine.downtime.fill_error(gap.ply, ("Ra3", "Kd8"))
    assert error is not None and "Black's move Kc8" in error
    before = [m.uci for m in r.engine.state.moves]
    r.engine.feed(FillGap(at=r.t + 1.0, ply=gap.ply, moves=("Ra3", "Kd8")))
    assert [m.uci for m in r.engine.state.moves] == before  # nothing changes
    assert r.engine.downtime.fill_error(gap.ply, ("Ra2", "Kd8", "Ra3")) is None
    r.engine.feed(FillGap(at=r.t + 2.0, ply=gap.ply, moves=("Ra2", "Kd8", "Ra3")))
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in r.board.move_stack]
    assert all(m.legal for m in r.engine.state.moves)


def test_a_board_without_a_clock_is_not_held_for_one() -> None:
    """No clock device in the game (the engine keeps time by its model, which shows times too): nothing to wait
    for, the board is recovered once quiet, as before (waiting held it through every restart of a daemon killed
    more often than HOLD_S)."""
    start = chess.Board()
    engine = Engine(RulesConfig(), GameInfo(time_control="5400+30"))
    board = start.copy()
    phys = [start.piece_at(sq) for sq in chess.SQUARES]
    outs: list[Output] = list(engine.feed(BoardSnapshot(at=0.0, squares=tuple(phys))))
    t = 1.0
    rng = random.Random(6)
    for san, seen in (("e4", True), ("e5", True), ("Nf3", False), ("Nc6", False)):
        move = board.parse_san(san)
        if not seen and san == "Nf3":
            t += 1.0
            outs += engine.feed(LinkChanged(at=t, link=Link.CLOCK, up=False, detail=RESTART_DETAIL))
            outs += engine.feed(LinkChanged(at=t, link=Link.BOARD, up=False, detail=RESTART_DETAIL))
        for square, content in _steps(board, move, rng):
            t += 0.3
            phys[square] = content
            if seen:
                outs += engine.feed(SquareChanged(at=t, square=square, content=content))
        board.push(move)
        t += 2.0
    assert engine.g.clock.white is not None  # the model's times
    outs += engine.feed(LinkChanged(at=t, link=Link.BOARD, up=True, detail="pty"))
    outs += engine.feed(BoardSnapshot(at=t, squares=tuple(phys)))
    outs += engine.advance(t + 2.0)
    recovered = [o for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    assert [e.details["kind"] for e in recovered] == ["unique"]
    assert [m.uci for m in engine.state.moves] == ["e2e4", "e7e5", "g1f3", "b8c6"]


@pytest.mark.parametrize("eeprom", [False, True])
def test_pawns_taken_off_by_hand_are_not_recorded_as_six_plies_of_captures(eeprom: bool) -> None:
    """Two pawns gone from g7 and h6 while the daemon was down, nobody moved. The only legal way to that board,
    Bxh6 g5 Bxg5 Kg7 Be3 Kg8, was recorded as fact (fewest plies, unique); it moves pieces away and back, which the
    board cannot show: a gap with it as the one candidate, nobody accused, the game goes on."""
    start = chess.Board("rn3rk1/pppq1pp1/3bbn1p/3p4/3P4/2PBBN1P/PP3PP1/RN1Q1RK1 w - - 1 10")
    r = Restart(start, random.Random(9))
    r.down()
    for square in (chess.G7, chess.H6):
        r.phys[square] = None
        r.log.append(LoggedChange(square=square, content=None))
    r.up(eeprom=eeprom)
    r.play(_sans(r.board, "Nbd2 c5"), seen=True)
    r.finish()
    assert r.strong == []
    [event] = r.recovered
    assert event["kind"] == "ambiguous" and event["candidates"] == [
        ["e3h6", "g7g5", "h6g5", "g8g7", "g5e3", "g7g8"]]
    assert "away and back" in str(event["text"])
    moves = r.engine.state.moves
    assert [m.recovered for m in moves] == ["gap", "", ""] and [m.san for m in moves[1:]] == ["Nbd2", "c5"]


def _restart_illegal(fen: str, seen: str, missed: str, illegal: tuple[chess.Square, chess.Square], *, eeprom: bool,
                     edition: int, live: bool) -> Restart:
    """*seen*, then *missed* and an illegal move (*illegal*) pressed by its mover, while the daemon was down (the
    board back afterwards, with its log when *eeprom*) or all seen (*live*)."""
    start = chess.Board(fen)
    r = Restart(start, random.Random(4))
    r.engine = Engine(RulesConfig(), GameInfo(start_fen=fen, time_control="5400+30", edition=edition))
    r.outs = list(r.engine.feed(BoardSnapshot(at=0.0, squares=tuple(r.phys))))
    r.outs += r.engine.feed(r.clock.reading(0.2))
    r.play(_sans(r.board, seen), seen=True)
    if not live:
        r.down()
    r.play(_sans(r.board, missed), seen=live)
    fro, to = illegal
    piece = r.phys[fro]
    for square, content in ((fro, None), (to, piece)):
        r.t += 0.3
        r.phys[square] = content
        if live:
            r.outs += r.engine.feed(SquareChanged(at=r.t, square=square, content=content))
        else:
            r.log.append(LoggedChange(square=square, content=content))
    r.t += 0.5
    r.press(r.board.turn, seen=live)
    if not live:
        r.up(eeprom=eeprom)
    r.finish()
    return r


@pytest.mark.parametrize("edition", [2009, 2023])
@pytest.mark.parametrize("case", [
    (chess.STARTING_FEN, "e4 e5 Nf3", "Nc6 Bc4 Bc5 c3", (chess.C5, chess.B5), True),
    ("2bq1r1k/3pnpbp/p1pQp1p1/2P5/1r2PP2/2N5/PP2B1PP/R1B2RK1 w - - 3 14", "Kh1 Kg8", "e5 f6", (chess.A2, chess.B3),
     False),
    ("r2q1rk1/ppp1npp1/3b1n1p/4Nb2/2BP4/2N1B3/PPQ2PPP/R3K2R w KQ - 5 13", "h3 Kh7", "Qb3", (chess.D6, chess.D5),
     True),
])
def test_an_illegal_last_ply_while_the_daemon_was_down_is_raised_as_live(
        case: tuple[str, str, str, tuple[chess.Square, chess.Square], bool], edition: int) -> None:
    """The daemon restarted while *missed* was played and then an illegal move (a piece put on an empty square it
    cannot go to) whose mover pressed. Nothing legal explains the board; live, that press raised ``ILLEGAL_MOVE``
    (7.5.1). The board back and the clock read again (the opponent's time running: the mover pressed), the legal
    plies are recovered (the board's log, or the one sequence the search finds) and the ``ILLEGAL_MOVE`` of live play
    is raised once (the same subtype, side, ply, articles and penalty of the edition), the illegal move standing in
    the record (G6); one alert, no gap. Before: a gap (``0000``) for the arbiter, the illegal move not raised (nor
    counted towards 7.5.5's second one)."""
    fen, seen, missed, illegal, eeprom = case
    live = _restart_illegal(fen, seen, missed, illegal, eeprom=eeprom, edition=edition, live=True)
    down = _restart_illegal(fen, seen, missed, illegal, eeprom=eeprom, edition=edition, live=False)

    def raised(r: Restart) -> list[tuple[object, ...]]:
        return [(i.code, i.subtype, i.side, i.ply, i.articles, i.severity, i.suggestion.add_to_opponent_s,
                 i.suggestion.result, i.suggestion.reinstate_ply)
                for i in (o.irregularity for o in r.outs if isinstance(o, IrregularityRaised))]

    assert raised(live)[0][0] == "ILLEGAL_MOVE"
    assert raised(down) == raised(live)
    k, n = len(seen.split()), len(missed.split())
    moves = down.engine.state.moves
    assert [m.uci for m in moves] == [m.uci for m in live.engine.state.moves] \
        == [m.uci() for m in down.board.move_stack] + [chess.Move(*illegal).uci()]
    assert [m.recovered for m in moves[k:k + n]] == ["eeprom" if eeprom else "search"] * n
    assert not moves[-1].legal
    assert down.strong == [f"ILLEGAL_MOVE ply {k + n}"]  # (the ply of the position it was made from, as live)
    state, seen_live = down.engine.state, live.engine.state
    assert (state.illegal_moves_white, state.illegal_moves_black) == \
        (seen_live.illegal_moves_white, seen_live.illegal_moves_black) != (0, 0)
    assert [e["kind"] for e in down.recovered] == ["unique"]
