"""Link outages over real games: the plies missed meanwhile are recorded only when their order is known.

The board link is lost (USB unplugged, a Bluetooth drop) while the daemon runs; one to three plies are played
unseen; the board comes back and its dump is reconciled (``Restoration.forward_jump``). Several move orders
often lead to the same board (c3 h6 d3 and d3 h6 c3): a broadcast PGN that records one of them as fact may be
wrong. The cases are drawn from the games of ``shared/data/pgn`` (seeded), with the clock on its own link
(its presses seen during the outage), on the board's jack (lost with it: its presses only in the board's log),
or absent, and with or without the board's own log (DGT EEPROM, protocols.md §1.9) read at the reconnection.

What must hold, whatever the case:

* the order is unique (one sequence reaches the board, or the log gives it): recorded exactly;
* otherwise nothing wrong is recorded: one gap entry, one ``MOVES_RECOVERED`` (kind ``ambiguous``) whose
  candidates include the true order, nothing above ``info`` raised; the game is recognised after the gap;
  the arbiter's ``fill-gap`` with the true order gives the real game.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.engine import Engine
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
from boardd.core.outputs import Completion, GameEvent, IrregularityRaised, MovesRetracted, Output
from boardd.core.settings import RulesConfig
from tests.conftest import PGN_DIR
from tests.core.scenario import ClockSim
from tests.core.test_downtime_parity import Played, _steps

#: Where the clock is during the board's outage.
CLOCKS = ("own-link", "on-the-board", "none")


@functools.cache
def _games() -> tuple[tuple[str, bool, tuple[str, ...]], ...]:
    """(start FEN, Chess960, UCI moves) of every game of the shared PGN files with at least 12 plies."""
    out = []
    for path in sorted(Path(PGN_DIR).glob("*.pgn")):
        with path.open(encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                moves = tuple(m.uci() for m in game.mainline_moves())
                if len(moves) >= 12:
                    out.append((board.fen(), board.chess960, moves))
    return tuple(out)


def _orders(board: chess.Board, target: tuple[int, ...], plies: int) -> list[tuple[chess.Move, ...]]:
    """Every legal sequence of *plies* plies from *board* to the placement *target* (each move touching a square
    that differs, or one an earlier move touched: the pieces that did not move stay out)."""
    changed = 0
    found: list[tuple[chess.Move, ...]] = []
    work = board.copy(stack=False)

    def key(b: chess.Board) -> tuple[int, ...]:
        return (b.pawns, b.knights, b.bishops, b.rooks, b.queens, b.kings, b.occupied_co[chess.WHITE],
                b.occupied_co[chess.BLACK])

    start = key(board)
    for square in chess.SQUARES:
        bit = chess.BB_SQUARES[square]
        if any((a & bit) != (b & bit) for a, b in zip(start, target, strict=True)):
            changed |= bit

    def walk(left: int, touched: int, path: list[chess.Move]) -> None:
        if left == 0:
            if key(work) == target:
                found.append(tuple(path))
            return
        for move in list(work.legal_moves):
            bits = chess.BB_SQUARES[move.from_square] | chess.BB_SQUARES[move.to_square]
            if work.is_castling(move):
                bits |= chess.BB_RANKS[chess.square_rank(move.from_square)]
            if not bits & (changed | touched):
                continue
            work.push(move)
            path.append(move)
            walk(left - 1, touched | bits, path)
            path.pop()
            work.pop()

    walk(plies, 0, [])
    return found


@dataclass
class Outage(Played):
    """One game through the engine: moves seen, the board link lost for some plies, the board back, play on."""

    start: chess.Board
    rng: random.Random
    clock_at: str

    def __post_init__(self) -> None:
        self.board = self.start.copy()
        with_clock = self.clock_at != "none"
        self.engine = Engine(RulesConfig(clock_expected=with_clock),
                             GameInfo(start_fen=self.start.fen(), chess960=self.start.chess960,
                                      time_control="5400+30"))
        self.clock = ClockSim(white=5400, black=5400, running=self.start.turn, lever=self.start.turn, last=0.0)
        self.phys: list[Content] = [self.start.piece_at(sq) for sq in chess.SQUARES]
        self.outs: list[Output] = list(self.engine.feed(BoardSnapshot(at=0.0, squares=tuple(self.phys))))
        if with_clock:
            self.outs += self.engine.feed(self.clock.reading(0.2))
        self.t = 1.0
        self.log: list[LogEntry] = []

    def play(self, moves: Sequence[chess.Move], *, seen: bool, press_last: bool = True) -> None:
        for i, move in enumerate(moves):
            self.t += self.rng.uniform(2.0, 5.0)
            for square, content in _steps(self.board, move, self.rng):
                self.t += self.rng.uniform(0.1, 0.4)
                self.phys[square] = content
                if seen:
                    self.outs += self.engine.feed(SquareChanged(at=self.t, square=square, content=content))
                else:
                    self.log.append(LoggedChange(square=square, content=content))
            side = self.board.turn
            self.board.push(move)
            if press_last or i < len(moves) - 1:
                self.t += self.rng.uniform(0.3, 1.0)
                self.press(side, board_seen=seen)
            self.outs += self.engine.advance(self.t)

    def press(self, side: chess.Color, *, board_seen: bool) -> None:
        if self.clock_at == "none":
            return
        reading = self.clock.press(side, self.t)
        if board_seen or self.clock_at == "own-link":
            self.outs += self.engine.feed(reading)  # a clock on its own link is seen during the board's outage
        else:
            lever = ClockSide.LEFT if side == chess.WHITE else ClockSide.RIGHT
            shown = reading.left if lever is ClockSide.LEFT else reading.right
            self.log.append(LoggedPress(side=lever, shown=float(int(shown or 0))))

    def down(self) -> None:
        self.t += 0.5
        self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.BOARD, up=False, detail="unplugged"))
        if self.clock_at == "on-the-board":
            self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.CLOCK, up=False,
                                                      detail="board link down"))

    def up(self, *, eeprom: bool) -> None:
        self.t += 2.0
        self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.BOARD, up=True, detail="usb"))
        if eeprom and self.log:
            self.outs += self.engine.feed(BoardLog(at=self.t, entries=tuple(self.log)))
        self.outs += self.engine.feed(BoardSnapshot(at=self.t, squares=tuple(self.phys)))
        if self.clock_at == "on-the-board":
            self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.CLOCK, up=True, detail="usb"))
            self.back_reading = self.clock.reading(self.t + 0.1)
            self.outs += self.engine.feed(self.back_reading)
        self.t += 2.0
        self.outs += self.engine.advance(self.t)


@dataclass(frozen=True)
class Case:
    seed: int
    game: int
    before: int  # plies seen before the outage
    missed: int  # plies played during it
    after: int  # plies seen after it
    clock_at: str
    eeprom: bool
    press_last: bool  # the last missed ply pressed before the board is back


def _case(seed: int) -> Case:
    rng = random.Random(seed)
    games = _games()
    index = rng.randrange(len(games))
    if seed % 10 == 9:  # a Chess960 game (castling by the procedures of R27) every tenth case
        index = rng.choice([i for i, game in enumerate(games) if game[1]])
    plies = len(games[index][2])
    missed = rng.choice((1, 2, 3, 3))
    before = rng.randrange(2, min(plies - missed - 1, 60))
    clock_at = CLOCKS[seed % 3]
    return Case(seed=seed, game=index, before=before, missed=missed, after=min(3, plies - before - missed),
                clock_at=clock_at, eeprom=rng.random() < 0.5, press_last=clock_at == "none" or rng.random() < 0.7)


def _run(case: Case) -> tuple[Outage, list[chess.Move]]:
    fen, chess960, ucis = _games()[case.game]
    start = chess.Board(fen, chess960=chess960)
    work = start.copy()
    moves = []
    for uci in ucis[:case.before + case.missed + case.after]:
        move = chess.Move.from_uci(uci)
        moves.append(move)
        work.push(move)
    r = Outage(start, random.Random(case.seed), case.clock_at)
    r.play(moves[:case.before], seen=True)
    r.down()
    r.play(moves[case.before:case.before + case.missed], seen=False, press_last=case.press_last)
    r.up(eeprom=case.eeprom)
    if not case.press_last:
        r.press(not r.board.turn, board_seen=True)  # the last mover presses now, the board back
        r.t += 1.0
        r.outs += r.engine.advance(r.t)
    r.play(moves[case.before + case.missed:], seen=True)
    r.finish()
    return r, moves


def _check(case: Case) -> str:
    """Assert the invariants of one case; the kind of outcome ("exact", "gap")."""
    r, moves = _run(case)
    want = [m.uci() for m in moves]
    got = [rec.uci for rec in r.engine.state.moves]
    k, n = case.before, case.missed
    assert got[:k] == want[:k]  # nothing recorded before the outage is lost
    assert r.strong == [], (case, r.strong)
    events = r.recovered
    assert len(events) <= 1, events  # one incident, one event
    pre = r.start.copy()
    for move in moves[:k]:
        pre.push(move)
    mid = pre.copy()
    for move in moves[k:k + n]:
        mid.push(move)
    target = (mid.pawns, mid.knights, mid.bishops, mid.rooks, mid.queens, mid.kings,
              mid.occupied_co[chess.WHITE], mid.occupied_co[chess.BLACK])
    gaps = [rec for rec in r.engine.state.moves if rec.recovered == "gap"]
    if not gaps:
        assert got == want, (case, got[k:], want[k:])  # never a move that was not played, never a wrong order
        return "exact"
    # the order was not known: it must not have been (no log; several orders), and nothing wrong is recorded
    assert not (case.eeprom and r.log), case
    assert n >= 2 and sum(len(_orders(pre, target, p)) for p in range(1, n + 2)) > 1, case  # not unique
    [gap] = gaps
    assert gap.ply == k + 1 and gap.uci == "0000" and not gap.legal
    [event] = events
    assert event["kind"] == "ambiguous" and event["reason"] == "board link down", event
    candidates = event["candidates"]
    assert isinstance(candidates, list) and want[k:k + n] in candidates, (case, candidates)
    assert got[k + 1:] == want[k + n:]  # the game is recognised after the gap
    r.engine.feed(FillGap(at=r.t + 1.0, ply=gap.ply, moves=tuple(want[k:k + n])))
    assert [rec.uci for rec in r.engine.state.moves] == want
    assert r.engine.state.fen.split()[:4] == r.board.fen().split()[:4]
    return "gap"


SEEDS = range(100)


@pytest.mark.parametrize("seed", SEEDS)
def test_link_outage_in_a_real_game_records_only_a_known_order(seed: int) -> None:
    _check(_case(seed))


def test_the_random_cases_cover_both_outcomes_every_clock_and_the_log() -> None:
    cases = [_case(seed) for seed in SEEDS]
    seen = {(c.clock_at, c.eeprom, c.missed) for c in cases}
    assert {(clock, eeprom) for clock, eeprom, _ in seen} == {(c, e) for c in CLOCKS for e in (True, False)}
    assert {(eeprom, missed) for _, eeprom, missed in seen} >= {(e, m) for e in (True, False) for m in (1, 2, 3)}
    assert any(not c.press_last for c in cases) and any(_games()[c.game][1] for c in cases)
    outcomes = [_check(c) for c in cases if c.missed == 3 and not c.eeprom]
    assert "gap" in outcomes and "exact" in outcomes


# --- the evidence that tells the order ---------------------------------------------------------------------------


def _line(start: chess.Board, sans: str, missed: range, clock_at: str, *, eeprom: bool) -> Outage:
    """*sans* played from *start*, the plies of *missed* while the board link is down (each ply pressed)."""
    r = Outage(start, random.Random(7), clock_at)
    board = start.copy()
    line = [board.push_san(san) for san in sans.split()]
    r.play(line[:missed.start], seen=True)
    r.down()
    r.play(line[missed.start:missed.stop], seen=False)
    r.up(eeprom=eeprom)
    r.play(line[missed.stop:], seen=True)
    r.finish()
    assert r.strong == []
    return r


def test_presses_seen_meanwhile_tell_a_pawn_that_took_two_moves() -> None:
    """e4 d6 is shorter than e3 d6 e4, but Black's clock runs: both fit the board (Downtime._recover). The clock on
    its own link saw three presses, White, Black, White: only the three plies were completed by them (6.2.1)."""
    r = _line(chess.Board(), "Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "own-link", eeprom=False)
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in r.board.move_stack]
    assert [m.recovered for m in r.engine.state.moves] == ["", "", "search", "search", "search", "", ""]
    [event] = r.recovered  # recovered by search alone: said so as after a restart
    assert (event["kind"], event["method"], event["reason"], event["from_ply"], event["to_ply"]) == \
        ("unique", "search", "board link down", 3, 5)
    notes = [o.details for o in r.outs if isinstance(o, GameEvent) and o.type == "PRESSES_NOT_JUDGED"]
    assert [(n["presses"], n["matched"]) for n in notes] == [(3, 3)]


def test_without_the_presses_the_first_move_after_tells_the_pawns_two_moves() -> None:
    """The clock on the board's jack went down with it: no press seen, and the clock read again shows Black's
    time running: e4 d6 (Black not pressed yet) or e3 d6 e4. A gap with both kinds; Black's Nc6, the first move
    after it, says Black had the move: e3 d6 e4, the only sequence of that parity, fills it (``search``), and the
    incident's one event, which waited for that move, says ``unique``. (Before: the gap stayed for the arbiter.)"""
    r = _line(chess.Board(), "Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "on-the-board", eeprom=False)
    [event] = r.recovered  # e4 d6 was recorded at the dump, retracted at the clock's first reading (a gap), filled
    assert (event["kind"], event["method"], event["reason"]) == ("unique", "search", "board link down")
    assert event["moves"] == ["e3", "d6", "e4"] and (event["from_ply"], event["to_ply"]) == (3, 5)
    assert [o.to_ply for o in r.outs if isinstance(o, MovesRetracted)] == [2, 2]
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in r.board.move_stack]
    assert [m.recovered for m in r.engine.state.moves] == ["", "", "search", "search", "search", "", ""]


def test_with_the_boards_log_the_order_is_the_logs() -> None:
    """A rook by one of seven routes (Ra2 Kd8 Ra3, Ra5 Kd8 Ra3, ...): the board's log read at the reconnection
    tells; the moves say so (recovered_by eeprom), in one event."""
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = _line(start, "Kd1 Ke7 Ra2 Kd8 Ra3 Kc8 Rb3", range(2, 5), "on-the-board", eeprom=True)
    moves = r.engine.state.moves
    assert [m.uci for m in moves] == [m.uci() for m in r.board.move_stack]
    assert [m.recovered for m in moves] == ["", "", "eeprom", "eeprom", "eeprom", "", ""]
    [event] = r.recovered
    assert (event["kind"], event["method"], event["reason"], event["from_ply"], event["to_ply"]) == \
        ("unique", "eeprom", "board link down", 3, 5)
    assert event["moves"] == ["Ra2", "Kd8", "Ra3"]
    r = _line(start, "Kd1 Ke7 Ra2 Kd8 Ra3 Kc8 Rb3", range(2, 5), "own-link", eeprom=False)
    [event] = r.recovered
    assert event["kind"] == "ambiguous" and ["a1a5", "e7d8", "a5a3"] in event["candidates"]  # type: ignore[operator]


def test_transposed_moves_with_the_log_are_recorded_without_it_a_gap() -> None:
    """c3 h6 d3 (recorded d3 h6 c3 before): the log tells the order; without it, the arbiter does."""
    for eeprom in (True, False):
        r = Outage(chess.Board(), random.Random(8), "on-the-board")
        board = chess.Board()
        line = [board.push_san(san) for san in ("e4", "e5", "c3", "h6", "d3", "Nf6", "Nf3")]
        r.play(line[:2], seen=True)
        r.down()
        r.play(line[2:5], seen=False)
        r.up(eeprom=eeprom)
        r.play(line[5:], seen=True)
        r.finish()
        assert r.strong == []
        got = [m.uci for m in r.engine.state.moves]
        if eeprom:
            assert got == [m.uci() for m in line]
            continue
        assert got == ["e2e4", "e7e5", "0000", "g8f6", "g1f3"]
        # the gap says what happened: the board link was down (the daemon was not)
        assert r.engine.state.moves[2].san.startswith("gap after the board link was down: ")
        # the broadcast PGN stops at the gap and says why; the moves after it keep their numbers (3... Nf6)
        assert r.engine.state.fen.endswith(" b KQkq - 2 4")
        pgn = r.engine.pgn()
        assert "a gap, for the arbiter's fill-gap" in pgn and "(gap)" in pgn and "illegal" not in pgn
        assert "; 3... Nf6 (g8f6)" in pgn and "; 4. Nf3 (g1f3)" in pgn
        [event] = r.recovered
        assert sorted(event["candidates"]) == [["c2c3", "h7h6", "d2d3"], ["d2d3", "h7h6", "c2c3"]]  # type: ignore[type-var]
        r.engine.feed(FillGap(at=r.t + 1.0, ply=3, moves=("c3", "h6", "d3")))
        assert [m.san for m in r.engine.state.moves] == ["e4", "e5", "c3", "h6", "d3", "Nf6", "Nf3"]
        assert "3. d3" in r.engine.pgn()


@pytest.mark.parametrize(("sans", "missed", "eeprom"), [("Nf3 Nf6 e3 d6 e4 Nc6 Nc3 e5 d4", range(2, 6), True),
                                                      ("e4 d5 exd5 Qxd5 Nc3 Qa5 d4", range(2, 4), False)])
def test_the_last_move_pressed_during_a_link_outage_is_completed_at_the_clocks_first_reading(
        sans: str, missed: range, eeprom: bool) -> None:
    """The clock on the board's jack, lost with it; plies missed and all pressed, Black's the last (the board's log
    tells the order, or the search finds one sequence). The clock read again shows White's time running: Black's
    last move was pressed during the outage, so it is completed at that first reading (``press``) with the time it
    shows for Black, as after a restart (``Downtime.clock_back``). Before: completed by Black's next move, with
    Black's time after that move as its ``[%clk]`` (the clock of another press)."""
    r = _line(chess.Board(), sans, missed, "on-the-board", eeprom=eeprom)
    moves = r.engine.state.moves
    assert [m.uci for m in moves] == [m.uci() for m in r.board.move_stack]
    first = r.back_reading
    last = moves[missed.stop - 1]
    assert last.side == chess.BLACK and last.recovered == ("eeprom" if eeprom else "search")
    assert last.completion is Completion.PRESS and last.completed_at == first.at
    assert last.clock_black == first.right  # White on the left: Black's time as the first reading shows it


@pytest.mark.parametrize("clock_at", CLOCKS)
def test_a_board_set_up_again_during_a_link_outage_takes_nothing_back(clock_at: str) -> None:
    """Twenty plies of a real game seen; the board link lost; two more plies, then the game over and the pieces set
    up for the next one (the start position) before the link is back. No takeback was seen: the record stays as it
    was (nothing retracted), and the arbiter gets one finding, ``POSITION_DIVERGENCE``, which says the board shows
    the start position. Before: the dump was taken for a takeback of the whole game (``TAKEBACK_DETECTED`` to ply 0,
    every move retracted)."""
    fen, _, ucis = next(g for g in _games() if not g[1] and len(g[2]) > 30)
    start = chess.Board(fen)
    moves = [chess.Move.from_uci(u) for u in ucis[:22]]
    r = Outage(start, random.Random(11), clock_at)
    r.play(moves[:20], seen=True)
    r.down()
    r.play(moves[20:22], seen=False)
    r.phys = [start.piece_at(sq) for sq in chess.SQUARES]  # set up again
    r.up(eeprom=False)
    r.finish()
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in moves[:20]]
    assert not [o for o in r.outs if isinstance(o, MovesRetracted)]
    assert r.strong == ["POSITION_DIVERGENCE ply 20"]
    [irr] = [o.irregularity for o in r.outs if isinstance(o, IrregularityRaised)
             and o.irregularity.code == "POSITION_DIVERGENCE"]
    assert "the board shows the start position" in irr.suggestion.text


_SHORT_GAME = "e4 e5 Nf3 Nc6 d4 exd4 Bc4 Bc5 c3 Nf6 e5 d5 Bb5 Ne4 Nxd4"


@pytest.mark.parametrize("clock_at", CLOCKS)
@pytest.mark.parametrize(("seen", "missed"), [(3, 9), (4, 4), (8, 1), (2, 12)])
def test_a_board_set_up_again_early_in_the_game_takes_nothing_back(clock_at: str, seen: int, missed: int) -> None:
    """As above, the game short: *seen* plies seen (within ``_TAKEBACK_DEPTH``, 8, of the start), *missed* more
    played while the board link was down, then the pieces set up for the next game. The start position after an
    outage is no takeback anyone saw, however few plies the record holds: the record stays, one
    ``POSITION_DIVERGENCE`` that says the board shows the start position. Before: ``TAKEBACK_DETECTED`` to ply 0,
    every move seen retracted (``bench downtime-audit`` ``reset`` 28: 3 seen, 9 missed, the WRONG)."""
    board = chess.Board()
    line = [board.push_san(san) for san in _SHORT_GAME.split()][:seen + missed]
    start = chess.Board()
    r = Outage(start, random.Random(seen * 31 + missed), clock_at)
    r.play(line[:seen], seen=True)
    r.down()
    r.play(line[seen:], seen=False)
    r.phys = [start.piece_at(sq) for sq in chess.SQUARES]  # set up again
    r.up(eeprom=False)
    r.finish()
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in line[:seen]]
    assert not [o for o in r.outs if isinstance(o, MovesRetracted)]
    assert r.strong == [f"POSITION_DIVERGENCE ply {seen}"]
    [irr] = [o.irregularity for o in r.outs if isinstance(o, IrregularityRaised)
             and o.irregularity.code == "POSITION_DIVERGENCE"]
    assert "the board shows the start position" in irr.suggestion.text


def test_a_gap_whose_candidates_agree_is_left_open_when_the_clock_read_again_fits_one_ply_more() -> None:
    """The clock on the board's jack, lost with it; Ra3 Ke8 Kd2 Kd8 missed. The fewest plies, Ra3 Kd8 Kd2 or Kd2
    Kd8 Ra3, commute (a gap) and agree: Black to move. The clock read again runs for White: either White has not
    pressed yet, or the black king took two steps (four plies, White to move), as a restart's search would list.
    The side to move is left open: White's Rb3 next is White's move after the gap, recorded, nobody accused.
    Before: the gap kept Black to move, and White's Rb3 raised ``OUT_OF_TURN_CHANGE`` against White."""
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = _line(start, "Kd1 Ke7 Ra3 Ke8 Kd2 Kd8 Rb3 Kc8", range(2, 6), "on-the-board", eeprom=False)
    [event] = r.recovered
    assert event["kind"] == "ambiguous"
    moves = r.engine.state.moves
    assert [m.uci for m in moves] == ["e1d1", "e8e7", "0000", "a3b3", "d8c8"]
    assert all(m.legal for m in moves if m.uci != "0000")
    assert moves[2].side == chess.BLACK  # the gap ends with Black's move: White moved next


def test_fill_gap_shifts_the_clockless_plies() -> None:
    """c3 h6 d3 missed while the board link was down (a gap: the order is not known), the clock on its own link.
    Then the clock link drops and Black plays Nf6 unseen by the clock (a clockless ply: no press is expected for
    it), the arbiter fills the gap (three plies for one: Nf6 is ply 6 now, not 4) and White starts his move. Black's
    Nf6 is still the ply made without a clock: no ``CLOCK_NOT_PRESSED`` against Black; the filled moves have no
    ``[%clk]`` (no clock was seen for them), the moves seen keep theirs. Before: ``fill-gap`` left the clockless
    plies where they were (3 and 4: the filled h6 and d3), so Nf6 at ply 6 was taken for a ply pressed with the
    clock in sight, and White's lift raised ``CLOCK_NOT_PRESSED`` against Black."""
    r = Outage(chess.Board(), random.Random(8), "own-link")
    board = chess.Board()
    line = [board.push_san(san) for san in ("e4", "e5", "c3", "h6", "d3", "Nf6", "Nf3")]
    r.play(line[:2], seen=True)
    r.down()
    r.play(line[2:5], seen=False)
    r.up(eeprom=False)
    assert [m.uci for m in r.engine.state.moves] == ["e2e4", "e7e5", "0000"]
    r.t += 1.0
    r.outs += r.engine.feed(LinkChanged(at=r.t, link=Link.CLOCK, up=False, detail="clock unplugged"))
    r.play(line[5:6], seen=True, press_last=False)  # Black's Nf6, the clock out of sight
    r.t += 3.0
    r.outs += r.engine.advance(r.t)
    assert [m.san for m in r.engine.state.moves][-1] == "Nf6"
    r.t += 1.0
    r.outs += r.engine.feed(FillGap(at=r.t, ply=3, moves=("c3", "h6", "d3")))
    assert [m.san for m in r.engine.state.moves] == ["e4", "e5", "c3", "h6", "d3", "Nf6"]
    r.t += 1.0
    r.outs += r.engine.feed(LinkChanged(at=r.t, link=Link.CLOCK, up=True, detail="clock plugged in"))
    r.outs += r.engine.feed(r.clock.reading(r.t + 0.1))
    r.t += 1.0
    r.play(line[6:], seen=True)
    r.finish()
    assert [m.san for m in r.engine.state.moves] == ["e4", "e5", "c3", "h6", "d3", "Nf6", "Nf3"]
    assert r.strong == []
    assert not [o for o in r.outs if isinstance(o, IrregularityRaised) and o.irregularity.code == "CLOCK_NOT_PRESSED"]
    pgn = " ".join(r.engine.pgn().split())
    assert "2. c3 { recovered after the board link was down (arbiter) } 2... h6 { recovered" in pgn, pgn
    assert "3. d3 { recovered after the board link was down (arbiter) } 3... Nf6 { [%emt" in pgn, pgn
    assert "4. Nf3 { [%clk 1:29:" in pgn, pgn


def _illegal_knight(clock_at: str, *, live: bool, eeprom: bool, edition: int) -> Outage:
    """e4 e5 Nf3 seen; Black's knight put from b8 to b6 (no knight's move) and his clock pressed, seen (*live*) or
    while the board link was down (the board back afterwards, with its log when *eeprom*)."""
    r = Outage(chess.Board(), random.Random(8), clock_at)
    r.engine = Engine(RulesConfig(clock_expected=clock_at != "none"),
                      GameInfo(start_fen=chess.STARTING_FEN, time_control="5400+30", edition=edition))
    r.outs = list(r.engine.feed(BoardSnapshot(at=0.0, squares=tuple(r.phys))))
    if clock_at != "none":
        r.outs += r.engine.feed(r.clock.reading(0.2))
    board = chess.Board()
    r.play([board.push_san(san) for san in ("e4", "e5", "Nf3")], seen=True)
    if not live:
        r.down()
    r.t += 3.0
    for square, content in ((chess.B8, None), (chess.B6, chess.Piece(chess.KNIGHT, chess.BLACK))):
        r.phys[square] = content
        if live:
            r.outs += r.engine.feed(SquareChanged(at=r.t, square=square, content=content))
        else:
            r.log.append(LoggedChange(square=square, content=content))
        r.t += 0.3
    r.press(chess.BLACK, board_seen=live)
    if not live:
        r.up(eeprom=eeprom)
    r.finish()
    return r


@pytest.mark.parametrize("edition", [2009, 2023])
@pytest.mark.parametrize("eeprom", [False, True])
@pytest.mark.parametrize("clock_at", ["own-link", "on-the-board"])
def test_an_illegal_move_in_a_one_ply_link_outage_is_raised_as_live(clock_at: str, eeprom: bool,
                                                                    edition: int) -> None:
    """One ply missed while the board link was down, an illegal one (Nb8-b6) completed by Black's press (seen on the
    clock's own link, or told by the clock's first reading when it is on the board's jack: White's time running).
    The board back, the engine raises the ``ILLEGAL_MOVE`` the press raised live, once, with the same subtype,
    articles and penalty of the edition, and the record goes on from the board (the illegal move stands, G6).
    Before: nothing was raised, the record stayed at Nf3 (and White's next press was taken for a press without a
    move)."""
    live = _illegal_knight(clock_at, live=True, eeprom=eeprom, edition=edition)
    down = _illegal_knight(clock_at, live=False, eeprom=eeprom, edition=edition)

    def raised(r: Outage) -> list[tuple[object, ...]]:
        return [(i.code, i.subtype, i.side, i.ply, i.articles, i.severity, i.suggestion.add_to_opponent_s,
                 i.suggestion.result, i.suggestion.reinstate_ply)
                for i in (o.irregularity for o in r.outs if isinstance(o, IrregularityRaised))]

    assert raised(live)[0][0] == "ILLEGAL_MOVE"
    assert raised(down) == raised(live)
    assert [m.uci for m in down.engine.state.moves] == [m.uci for m in live.engine.state.moves] \
        == ["e2e4", "e7e5", "g1f3", "b8b6"]
    last = down.engine.state.moves[-1]
    assert not last.legal and last.completion is Completion.PRESS
    assert last.made_at <= (last.completed_at or 0.0)
    assert down.engine.state.illegal_moves_black == live.engine.state.illegal_moves_black == 1


@pytest.mark.parametrize(("sans", "missed", "eeprom"), [("Nf3 Nf6 e3 d6 e4 Nc6 Nc3 e5 d4", range(2, 6), True),
                                                      ("e4 d5 exd5 Qxd5 Nc3 Qa5 d4 c6", range(2, 6), False)])
def test_the_boards_log_gives_the_clk_of_moves_recovered_after_a_link_outage(sans: str, missed: range,
                                                                            eeprom: bool) -> None:
    """The clock on the DGT board's jack, lost with it: four plies played and pressed while the link was down. The
    board's log (protocols.md §1.9) holds every lever change with the presser's time as it went down: the recovered
    moves' ``[%clk]`` are those times (plus the increment, none here), the last one's the clock's first reading
    (it completes it). Without the log (the search finds the moves) the times are not known: no ``[%clk]``, none
    invented. Before: no ``[%clk]`` on the moves recovered from the log either."""
    r = Outage(chess.Board(), random.Random(7), "on-the-board")
    r.engine = Engine(RulesConfig(), GameInfo(start_fen=chess.STARTING_FEN, time_control="5400+0"))
    r.outs = list(r.engine.feed(BoardSnapshot(at=0.0, squares=tuple(r.phys))))
    r.outs += r.engine.feed(r.clock.reading(0.2))
    board = chess.Board()
    line = [board.push_san(san) for san in sans.split()]
    r.play(line[:missed.start], seen=True)
    r.down()
    r.play(line[missed.start:missed.stop], seen=False)
    logged = [e.shown for e in r.log if isinstance(e, LoggedPress)]
    r.up(eeprom=eeprom)
    r.play(line[missed.stop:], seen=True)
    r.finish()
    moves = r.engine.state.moves
    assert [m.uci for m in moves] == [m.uci() for m in line]
    assert [m.recovered for m in moves[2:6]] == ["eeprom" if eeprom else "search"] * 4
    clk = [m.clock_white if m.side == chess.WHITE else m.clock_black for m in moves[2:6]]
    assert clk[3] is not None and abs(clk[3] - logged[3]) < 1.0  # the clock's first reading completed it
    if eeprom:
        assert clk[:3] == logged[:3]
        assert "[%clk" in " ".join(r.engine.pgn().split()).split("2. e3")[1].split("3. e4")[0]
    else:
        assert clk[:3] == [None, None, None]


def _illegal_after_plies(clock_at: str, *, live: bool, eeprom: bool, edition: int, start: chess.Board, seen: str,
                         missed: str, illegal: tuple[chess.Square, chess.Square]) -> Outage:
    """*seen* played in sight; *missed* (legal) and then an illegal move (*illegal*: a piece put on an empty square
    it cannot go to) and its press, seen (*live*) or while the board link was down (the board back afterwards,
    with its log when *eeprom*)."""
    r = Outage(start, random.Random(5), clock_at)
    r.engine = Engine(RulesConfig(clock_expected=clock_at != "none"),
                      GameInfo(start_fen=start.fen(), time_control="5400+30", edition=edition))
    r.outs = list(r.engine.feed(BoardSnapshot(at=0.0, squares=tuple(r.phys))))
    if clock_at != "none":
        r.outs += r.engine.feed(r.clock.reading(0.2))
    board = start.copy()
    r.play([board.push_san(san) for san in seen.split()], seen=True)
    if not live:
        r.down()
    r.play([board.push_san(san) for san in missed.split()], seen=live)
    r.t += 3.0
    fro, to = illegal
    piece = r.phys[fro]
    for square, content in ((fro, None), (to, piece)):
        r.phys[square] = content
        if live:
            r.outs += r.engine.feed(SquareChanged(at=r.t, square=square, content=content))
        else:
            r.log.append(LoggedChange(square=square, content=content))
        r.t += 0.3
    r.press(r.board.turn, board_seen=live)
    if not live:
        r.up(eeprom=eeprom)
    r.finish()
    return r


_ILLEGAL_LAST = [
    # the board's log gives the order (the bishop's illegal step from c5 to b5; from the board alone it may have come
    # from e7, d6, b4 or a3 as well)
    (chess.Board(), "e4 e5 Nf3", "Nc6 Bc4 Bc5 c3", (chess.C5, chess.B5), True),
    # the board alone is legal play (h3 and d6 first, then Nf3 Nc6: the log read as lacking its first two plies);
    # the whole log in order shows h4 and then the pawn put back to h3
    (chess.Board(), "e4 e5", "Nf3 Nc6 h4 d6", (chess.H4, chess.H3), True),
    # the search alone finds one way (positions of the real games, ``bench downtime-audit``'s kind of illegal move: the
    # next mover's piece put one square off where it cannot go)
    (chess.Board("2bq1r1k/3pnpbp/p1pQp1p1/2P5/1r2PP2/2N5/PP2B1PP/R1B2RK1 w - - 3 14"), "Kh1 Kg8", "e5 f6",
     (chess.A2, chess.B3), False),
    (chess.Board("2bq1r1k/3pnpbp/p1pQp1p1/2P5/1r2PP2/2N5/PP2B1PP/R1B2RK1 w - - 3 14"), "Kh1 Kg8", "e5 f6",
     (chess.A2, chess.B3), True),
    (chess.Board("r2q1rk1/ppp1npp1/3b1n1p/4Nb2/2BP4/2N1B3/PPQ2PPP/R3K2R w KQ - 5 13"), "h3 Kh7", "Qb3",
     (chess.D6, chess.D5), False),
]


@pytest.mark.parametrize("edition", [2009, 2023])
@pytest.mark.parametrize("clock_at", ["own-link", "on-the-board"])
@pytest.mark.parametrize("case", _ILLEGAL_LAST)
def test_an_illegal_last_ply_of_a_longer_link_outage_is_raised_as_live(
        case: tuple[chess.Board, str, str, tuple[chess.Square, chess.Square], bool], clock_at: str,
        edition: int) -> None:
    """Several plies missed while the board link was down, the last an illegal move completed by its mover's press
    (seen on the clock's own link, or told by the clock's first reading when it is on the board's jack). The board
    back, the legal plies before it are recovered (marked so) and the ``ILLEGAL_MOVE`` the press raised live is
    raised, once, with the subtype, articles and penalty of the edition; the illegal move stands in the record (G6).
    Before: no legal sequence explains the board: ``POSITION_DIVERGENCE``, the plies not recorded, no
    ``ILLEGAL_MOVE`` (no illegal move counted towards 7.5.5's second one)."""
    start, seen, missed, illegal, eeprom = case
    live = _illegal_after_plies(clock_at, live=True, eeprom=eeprom, edition=edition, start=start, seen=seen,
                                missed=missed, illegal=illegal)
    down = _illegal_after_plies(clock_at, live=False, eeprom=eeprom, edition=edition, start=start, seen=seen,
                                missed=missed, illegal=illegal)

    def raised(r: Outage) -> list[tuple[object, ...]]:
        return [(i.code, i.subtype, i.side, i.ply, i.articles, i.severity, i.suggestion.add_to_opponent_s,
                 i.suggestion.result, i.suggestion.reinstate_ply)
                for i in (o.irregularity for o in r.outs if isinstance(o, IrregularityRaised))]

    assert raised(live)[0][0] == "ILLEGAL_MOVE"
    assert raised(down) == raised(live)
    assert [m.uci for m in down.engine.state.moves] == [m.uci for m in live.engine.state.moves]
    moves = down.engine.state.moves
    k, n = len(seen.split()), len(missed.split())
    assert [m.recovered for m in moves[k:k + n]] == ["eeprom" if eeprom else "search"] * n
    last = moves[-1]
    assert last.uci == chess.Move(*illegal).uci() and not last.legal and last.completion is Completion.PRESS
    side = last.side
    assert (down.engine.state.illegal_moves_white, down.engine.state.illegal_moves_black) == \
        (live.engine.state.illegal_moves_white, live.engine.state.illegal_moves_black) == \
        ((1, 0) if side == chess.WHITE else (0, 1))
    assert [e["kind"] for e in down.recovered] == ["unique"]  # the plies recovered: no question to the arbiter


@pytest.mark.parametrize("edition", [2009, 2023])
@pytest.mark.parametrize("eeprom", [False, True])
@pytest.mark.parametrize("reply", ["d4", "Nc3", "Bc4"])
def test_without_a_clock_the_reply_after_the_boards_return_completes_an_illegal_move_missed(
        reply: str, eeprom: bool, edition: int) -> None:
    """No clock in the game. Black's knight put from b8 to b6 (no knight's move) while the board link was down, the
    board back showing it. 7.5.1: in a game without a clock an illegal move is completed when the opponent has made
    his move: White's reply, seen after the board's return, completes it, and the ``ILLEGAL_MOVE`` is raised as the
    same reply raised it live (subtype, side, ply, articles and penalty of the edition), once; the illegal move and
    the reply stand in the record (G6). Before: nothing was raised."""
    live = _illegal_knight("none", live=True, eeprom=eeprom, edition=edition)
    down = _illegal_knight("none", live=False, eeprom=eeprom, edition=edition)
    for r in (live, down):
        board = chess.Board()
        for san in ("e4", "e5", "Nf3"):
            board.push_san(san)
        board.push(chess.Move.null())
        r.board = board
        r.play([board.parse_san(reply)], seen=True)
        r.finish()

    def raised(r: Outage) -> list[tuple[object, ...]]:
        return [(i.code, i.subtype, i.side, i.ply, i.articles, i.severity, i.suggestion.add_to_opponent_s,
                 i.suggestion.result, i.suggestion.reinstate_ply)
                for i in (o.irregularity for o in r.outs if isinstance(o, IrregularityRaised))]

    assert raised(live) and raised(live)[0][0] == "ILLEGAL_MOVE"
    assert raised(down) == raised(live)
    assert [m.uci for m in down.engine.state.moves] == [m.uci for m in live.engine.state.moves]
    assert [m.uci for m in down.engine.state.moves][3] == "b8b6"
    assert down.engine.state.illegal_moves_black == live.engine.state.illegal_moves_black == 1


@pytest.mark.parametrize("clock_at", CLOCKS)
@pytest.mark.parametrize("eeprom", [False, True])
def test_a_piece_displaced_during_a_link_outage_is_no_illegal_move_of_invented_plies(clock_at: str,
                                                                                      eeprom: bool) -> None:
    """h4 d6 missed (both pressed), then Black's bishop knocked from c8 to c5 (7.4: displaced, no move; a square of
    the other colour, no bishop's move reaches it). No legal sequence explains the board. Read as "plies, then an
    illegal move of the side to move", h3 d6 h4 and the bishop's "illegal move" fit, one way: moves not played,
    and Black accused. A piece of the other side displaced after h4 d6 explains it in fewer plies: nothing is taken
    from that search, no ``ILLEGAL_MOVE``, no move recorded that was not played."""
    board = chess.Board()
    line = [board.push_san(san) for san in ("e4", "e5", "h4", "d6")]
    r = Outage(chess.Board(), random.Random(3), clock_at)
    r.play(line[:2], seen=True)
    r.down()
    r.play(line[2:], seen=False)
    r.t += 2.0
    for square, content in ((chess.C8, None), (chess.C5, chess.Piece(chess.BISHOP, chess.BLACK))):
        r.phys[square] = content
        r.log.append(LoggedChange(square=square, content=content))
    r.up(eeprom=eeprom)
    r.finish()
    assert "ILLEGAL_MOVE" not in " ".join(r.strong)
    played = [m.uci() for m in line]
    recorded = [m.uci for m in r.engine.state.moves if m.legal and m.uci != "0000"]
    assert recorded == played[:len(recorded)]
