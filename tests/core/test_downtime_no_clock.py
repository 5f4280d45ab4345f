"""Without a clock, the side to move after a gap is not the shortest sequence's to decide.

The daemon restarted (a power cut) or the board link was lost while play went on, and no clock is connected:
nothing says whose turn it is when the board is back. The fewest plies that explain the board fix a side to
move, but a piece that took one move more than it needed (a king's walk, a pawn by e3 and e4) explains it too
with the other side to move. The record must not guess (the Laws: a player completes his move by pressing,
6.2.1; with no press seen, no move of the downtime is known): when sequences of both parities fit, the recovery
commits to neither. One gap with both kinds of candidates; the first move made after it (which colour's piece
moves) tells the side to move, and the arbiter fills the gap (``fill-gap``). Before, the shortest sequence was
recorded as fact, and the next real move of the other side raised ``OUT_OF_TURN_CHANGE``.

Seeded random games (standard and Chess960), a restart or a board link outage of 1..10 plies at a random point,
no clock, then three plies seen.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.downtime import GAP_EVENT_WAIT_S, RESTART_DETAIL
from boardd.core.events import BoardSnapshot, Content, FillGap, GameInfo, Link, LinkChanged, SquareChanged
from boardd.core.outputs import Output
from boardd.core.recovery import BUDGET_EXHAUSTED
from boardd.core.settings import RulesConfig
from tests.core.test_downtime_parity import Played, _game, _steps


class NoClock(Played):
    """A game on a board without a clock: moves seen, the board out of sight (restart or link outage), back."""

    def __init__(self, start: chess.Board, rng: random.Random, restart: bool) -> None:
        self.board = start.copy()
        self.rng = rng
        self.restart = restart
        self.engine = Engine(RulesConfig(clock_expected=False),
                             GameInfo(start_fen=start.fen(), chess960=start.chess960, time_control="5400+30"))
        self.phys: list[Content] = [start.piece_at(sq) for sq in chess.SQUARES]
        self.outs: list[Output] = list(self.engine.feed(BoardSnapshot(at=0.0, squares=tuple(self.phys))))
        self.t = 1.0

    def play(self, moves: Sequence[chess.Move], *, seen: bool) -> None:
        for move in moves:
            self.t += self.rng.uniform(2.0, 6.0)
            for square, content in _steps(self.board, move, self.rng):
                self.t += self.rng.uniform(0.1, 0.4)
                self.phys[square] = content
                if seen:
                    self.outs += self.engine.feed(SquareChanged(at=self.t, square=square, content=content))
            self.board.push(move)
            if seen:
                self.outs += self.engine.advance(self.t)

    def down(self) -> None:
        self.t += 1.0
        if self.restart:
            for link in (Link.CLOCK, Link.BOARD):  # BoardRuntime.mark_restart journals both
                self.outs += self.engine.feed(LinkChanged(at=self.t, link=link, up=False, detail=RESTART_DETAIL))
        else:
            self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.BOARD, up=False, detail="unplugged"))

    def up(self) -> None:
        self.t += 5.0
        self.outs += self.engine.feed(LinkChanged(at=self.t, link=Link.BOARD, up=True, detail="usb"))
        self.outs += self.engine.feed(BoardSnapshot(at=self.t, squares=tuple(self.phys)))
        self.t += 3.0
        self.outs += self.engine.advance(self.t)


def _case(seed: int) -> tuple[NoClock, list[str], int, int]:
    rng = random.Random(seed)
    start, moves = _game(rng, rng.randrange(16, 60), rng.random() < 0.3)
    k = rng.randrange(0, max(1, len(moves) - 4))
    n = rng.randrange(1, min(10, len(moves) - k - 3) + 1)
    r = NoClock(start, rng, restart=seed % 2 == 0)
    r.play(moves[:k], seen=True)
    r.down()
    r.play(moves[k:k + n], seen=False)
    r.up()
    r.play(moves[k + n:k + n + 3], seen=True)
    r.finish()
    return r, [m.uci() for m in moves[:k + n + 3]], k, n


def _failure(seed: int) -> str | None:
    """What went wrong in the case of *seed* (None: the record is right, or a gap that holds the game)."""
    r, want, k, n = _case(seed)
    got = [rec.uci for rec in r.engine.state.moves]
    if got[:k] != want[:k]:
        return "a move recorded before the outage lost"
    if not r.restart and not r.recovered and r.strong == [f"POSITION_DIVERGENCE ply {k}"]:
        # no sequence within the search's depth and budget: a link outage raises the divergence for the arbiter
        # (docs/downtime.md, link outages point 4: a move in progress at the dump must not become the record)
        return None
    if r.strong:
        return "accused: " + ", ".join(r.strong)
    if not r.recovered and n == 1 and got == want:
        return None  # one ply missed on a link outage: the board shows a legal move, recognised as usual
    if len(r.recovered) != 1:
        return f"{len(r.recovered)} MOVES_RECOVERED events"
    [event] = r.recovered
    gaps = [rec for rec in r.engine.state.moves if rec.recovered == "gap"]
    if not gaps:
        return None if got == want else "moves recorded that were not played"
    [gap] = gaps
    if gap.ply != k + 1 or got[k + 1:] != want[k + n:]:
        return "the moves after the gap not recorded as played"
    candidates = event["candidates"]
    assert isinstance(candidates, list)
    if want[k:k + n] in candidates:
        # the arbiter fills the gap with the moves played: the game as played, every move legal
        r.engine.feed(FillGap(at=r.t + 1.0, ply=gap.ply, moves=tuple(want[k:k + n])))
        if [rec.uci for rec in r.engine.state.moves] != want or not all(m.legal for m in r.engine.state.moves):
            return "fill-gap with the moves played does not give the game"
    elif event["kind"] != "ambiguous" or not candidates:
        return None  # no sequence found within the budget: a gap without candidates
    return None


SEEDS = range(60)


@pytest.mark.parametrize("seed", SEEDS)
def test_no_clock_outage_records_the_game_or_a_gap_and_accuses_no_one(seed: int) -> None:
    assert _failure(seed) is None


def test_an_odd_king_walk_leaves_the_side_to_move_to_the_next_move() -> None:
    """Kc2 Kd7 Kd2 missed (no clock): Kd2 Kd7 is shorter and leaves White to move; the king's walk leaves Black to
    move. Neither is taken: one gap listing both kinds; Black's next move Kc7 tells the side to move and is
    recorded, nobody accused; the arbiter fills the gap with the walk. Before: Kd2 Kd7 recorded as fact, and
    Kc7 raised OUT_OF_TURN_CHANGE."""
    start = chess.Board("4k3/8/8/8/8/8/8/4K2R w - - 0 1")
    work = start.copy()
    moves = [work.push_san(s) for s in ("Kd1", "Ke7", "Kc2", "Kd7", "Kd2", "Kc7", "Rh3", "Kb6")]
    r = NoClock(start, random.Random(1), restart=True)
    r.play(moves[:2], seen=True)
    r.down()
    r.play(moves[2:5], seen=False)
    r.up()
    r.play(moves[5:], seen=True)
    r.finish()
    assert r.strong == []
    [event] = r.recovered
    assert event["kind"] == "ambiguous"
    candidates = event["candidates"]
    assert isinstance(candidates, list)
    assert ["d1d2", "e7d7"] in candidates and ["d1c2", "e7d7", "c2d2"] in candidates
    got = [m.uci for m in r.engine.state.moves]
    assert got[:2] == ["e1d1", "e8e7"] and got[2] == "0000"
    assert got[3:] == ["d7c7", "h1h3", "c7b6"]
    assert r.engine.state.moves[2].side == chess.WHITE  # the gap ends with White's move: Black moved next
    r.engine.feed(FillGap(at=r.t + 1.0, ply=3, moves=("Kc2", "Kd7", "Kd2")))
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in moves]


@pytest.mark.parametrize(("budget", "kind"), [(None, "unique"), (40, "ambiguous")])
def test_a_longer_search_out_of_budget_leaves_the_parity_open(budget: int | None, kind: str) -> None:
    """e4 Nc6 Bc4 missed on a link outage, no clock: no sequence of four plies fits (a knight's move has one parity),
    so the three are recorded. With a budget that the three-ply search fits in and the four-ply one does not, the
    longer search proves nothing: the three plies are a candidate only (a gap, ``incomplete``), never the record."""
    start = chess.Board()
    work = start.copy()
    moves = [work.push_san(s) for s in ("e4", "Nc6", "Bc4", "Nf6", "d3")]
    r = NoClock(start, random.Random(2), restart=False)
    if budget is not None:
        r.engine.downtime.node_budget = budget
    r.down()
    r.play(moves[:3], seen=False)
    r.up()
    r.play(moves[3:], seen=True)
    r.finish()
    assert r.strong == []
    [event] = r.recovered
    assert event["kind"] == kind
    got = [m.uci for m in r.engine.state.moves]
    if budget is None:
        assert got == [m.uci() for m in moves]
    else:
        assert event["incomplete"] == BUDGET_EXHAUSTED and event["candidates"] == [["e2e4", "b8c6", "f1c4"]]
        assert got == ["0000", "g8f6", "d2d3"]



@pytest.mark.parametrize("restart", [True, False])
@pytest.mark.parametrize(("missed", "then"), [(("e4", "Nf6"), ("d4", "e6", "c4")),
                                              (("e3", "Nf6", "e4"), ("e6", "d4", "d5"))])
def test_the_first_move_after_a_gap_fills_it_when_one_sequence_of_its_parity_fits(
        restart: bool, missed: tuple[str, ...], then: tuple[str, ...]) -> None:
    """No clock; e4 Nf6 (or e3 Nf6 e4) missed: e4 Nf6 leaves White to move, e3 Nf6 e4 Black, both explain the board
    (the knight cannot reach f6 in two moves): one gap with both kinds. The first move after it says who had the
    move: of that parity one sequence only fits, so it is the record, as a clock would have told at the board's
    return (the fewest plies with the running side to move). The gap is filled with it (``recovered: search``), and
    the incident's one ``MOVES_RECOVERED`` (which waited for that move) says ``unique``: nothing for the arbiter,
    nobody accused, the game is the game played. Before: a gap for the arbiter's fill-gap although the first move
    had settled it."""
    start = chess.Board()
    work = start.copy()
    moves = [work.push_san(s) for s in (*missed, *then)]
    r = NoClock(start, random.Random(3), restart=restart)
    r.down()
    r.play(moves[:len(missed)], seen=False)
    r.up()
    r.play(moves[len(missed):], seen=True)
    r.finish()
    assert r.strong == []
    [event] = r.recovered  # one incident, one event: it waited for the first move after the gap
    assert (event["kind"], event["method"], event["moves"]) == ("unique", "search", list(missed))
    assert (event["from_ply"], event["to_ply"]) == (1, len(missed))
    state = r.engine.state
    assert [m.uci for m in state.moves] == [m.uci() for m in moves]
    assert all(m.legal for m in state.moves)
    assert [m.recovered for m in state.moves] == ["search"] * len(missed) + [""] * len(then)
    assert state.moves[0].recovered_reason == (RESTART_DETAIL if restart else "board link down")


@pytest.mark.parametrize("restart", [True, False])
def test_a_gap_whose_event_waits_for_a_move_is_announced_when_none_comes(restart: bool) -> None:
    """e4 Nf6 missed, no clock: a gap with both kinds, its event waiting for the first move after it. No move comes
    (the players stopped, the arbiter is called): the engine's timer publishes the gap's event ``GAP_EVENT_WAIT_S``
    after the gap, as it stands (``ambiguous``), and the gap stays for the arbiter; a move after that fills
    nothing. (On the branch's previous commit no event came at all: a gap nobody was told of.)"""
    start = chess.Board()
    work = start.copy()
    moves = [work.push_san(s) for s in ("e4", "Nf6", "d4")]
    r = NoClock(start, random.Random(3), restart=restart)
    r.down()
    r.play(moves[:2], seen=False)
    r.up()
    assert [m.recovered for m in r.engine.state.moves] == ["gap"] and r.recovered == []
    due = r.engine.next_deadline()
    assert due is not None
    gap_at = r.engine.state.moves[0].made_at
    assert due == pytest.approx(gap_at + GAP_EVENT_WAIT_S)
    r.outs += r.engine.advance(due)
    [event] = r.recovered
    assert event["kind"] == "ambiguous"
    r.t = due + 1.0
    r.play(moves[2:], seen=True)
    r.finish()
    assert len(r.recovered) == 1 and r.strong == []
    assert [m.uci for m in r.engine.state.moves] == ["0000", "d2d4"]
