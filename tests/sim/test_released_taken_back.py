"""The released move taken back before the press, as the simulator plays it (injection ``released-taken-back``, R07).

The player makes another legal move and lets go of it (it stands ``T_settle`` + 0.5-10 s: made and published),
puts the position back by hand (the pieces in a random valid order, a captured piece from beside the board, both
pieces of a castling, the pawn of a promotion), thinks, then makes the game's move and presses. The events must
show exactly that, and the engine must record the game's move and raise ``RELEASED_MOVE_CHANGED`` once, for the
mover, suggesting the first released move.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from dataclasses import dataclass

import chess
import pytest

from bench.bench_false_alarms import _fits, code_of, expected_record, run_engine
from boardd.core.outputs import Severity
from boardd.core.settings import RulesConfig
from drivers.sim import PROFILES, Injection, InjectionKind, SimulatedGame, applicable, random_game, simulate_game
from drivers.sim._inject import released_candidates
from drivers.sim._procedures import takeback_order
from tests.sim.physical import replay

KIND = InjectionKind.RELEASED_TAKEN_BACK
T_SETTLE = RulesConfig().timing.t_settle
EDITIONS = (2009, 2014, 2018, 2023)
TIME_CONTROLS = ("180+2", "900+10", "5400+30")
SEEDS = range(24)


@pytest.fixture(autouse=True)
def _quiet_engine(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)


@dataclass(frozen=True)
class Played:
    """What the events show at the injected ply."""

    first: chess.Move  # the move released first (read off the board)
    stood: float  # how long it stood
    thought: float  # how long the position before the move stood after the takeback
    takeback_steps: int
    takeback_longest_gap: float


def _simulate(seed: int) -> tuple[SimulatedGame, int]:
    game = random_game(seed, max_plies=60)
    fits = _fits(game, lambda board, move, has_next: applicable(KIND, board, move, has_next=has_next))
    ply = random.Random(seed).choice(fits)
    sim = simulate_game(game, seed=seed, profile=PROFILES[seed % 3], injections=[Injection(KIND, ply)],
                        procedures=seed % 2 == 1, edition=EDITIONS[seed % 4],
                        time_control=TIME_CONTROLS[(seed // 4) % 3], think_median=1.0)
    return sim, ply


def _board_before(sim: SimulatedGame, ply: int) -> chess.Board:
    board = chess.Board()
    for uci in sim.moves[:ply - 1]:
        board.push_uci(uci)
    return board


def _read(sim: SimulatedGame, ply: int) -> Played:
    """The ply's board changes, from the previous press to the mover's press, checked step by step."""
    state = replay(sim.events)
    assert len(state.presses) >= ply
    start = state.presses[ply - 2].at if ply > 1 else 0.0
    press = state.presses[ply - 1]
    board = _board_before(sim, ply)
    before = board.piece_map()
    game_move = board.parse_uci(sim.moves[ply - 1])
    placement = dict(before)
    timeline: list[tuple[float, dict[int, chess.Piece]]] = [(start, dict(placement))]
    for change in state.changes:
        if not start < change.at < press.at:
            continue
        if isinstance(change.content, chess.Piece):
            placement[change.square] = change.content
        else:
            assert change.content is None
            placement.pop(change.square, None)
        timeline.append((change.at, dict(placement)))
    after_game = board.copy()
    after_game.push(game_move)
    assert placement == after_game.piece_map() == press.placement, "the game's move stands at the press"
    # The first released move: the one legal move whose position stood longer than T_settle before the takeback.
    firsts: dict[chess.Move, float] = {}
    ends = [at for at, _ in timeline[1:]] + [press.at]
    for (at, shown), until in zip(timeline, ends, strict=True):
        for move in board.legal_moves:
            board.push(move)
            if shown == board.piece_map() and until - at > T_SETTLE:
                firsts[move] = until - at
            board.pop()
    assert len(firsts) == 2 and game_move in firsts, f"one other move released, then the game's: {firsts}"
    (first,) = set(firsts) - {game_move}
    # It stood, then the position before it came back and stood while the player thought.
    index_first = next(i for i, (_, shown) in enumerate(timeline) if _is_after(board, first, shown))
    index_back = next(i for i in range(index_first + 1, len(timeline)) if timeline[i][1] == before)
    thought = ends[index_back] - timeline[index_back][0]
    gaps = [timeline[i][0] - timeline[i - 1][0] for i in range(index_first + 2, index_back + 1)]
    steps = index_back - index_first
    # Every takeback step puts a piece on an empty square or lifts one off an occupied one.
    for i in range(index_first + 1, index_back + 1):
        previous, shown = timeline[i - 1][1], timeline[i][1]
        changed = [sq for sq in chess.SQUARES if previous.get(sq) != shown.get(sq)]
        assert len(changed) == 1 and (previous.get(changed[0]) is None) != (shown.get(changed[0]) is None)
    return Played(first, firsts[first], thought, steps, max(gaps, default=0.0))


def _is_after(board: chess.Board, move: chess.Move, shown: dict[int, chess.Piece]) -> bool:
    board.push(move)
    try:
        return shown == board.piece_map()
    finally:
        board.pop()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_events_show_the_procedure_and_the_engine_flags_it_once(seed: int) -> None:
    sim, ply = _simulate(seed)
    assert sim.expected_codes.count((ply, "RELEASED_MOVE_CHANGED")) == 1
    times = [event.at for event in sim.events]
    assert times == sorted(times)
    played = _read(sim, ply)
    board = _board_before(sim, ply)
    assert played.first != board.parse_uci(sim.moves[ply - 1])
    assert T_SETTLE + 0.5 - 1e-3 <= played.stood <= T_SETTLE + 10.0 + 1e-3
    assert 1.0 - 1e-3 <= played.thought <= 60.0 + 1e-3
    assert played.takeback_longest_gap < T_SETTLE, "the takeback is one gesture"
    # The engine on main: the game's record, exactly the warranted findings, the released move changed once.
    record, found = run_engine(sim)
    assert record == expected_record(sim)
    strong = Counter(code_of(i) for i in found if i.severity is not Severity.INFO)
    assert strong == Counter(code for _, code in sim.expected_codes), [(i.ply, code_of(i)) for i in found]
    (changed,) = [i for i in found if i.code == "RELEASED_MOVE_CHANGED"]
    assert changed.side == board.turn
    assert changed.suggestion.move == board.san(played.first)


def test_the_first_move_varies() -> None:
    """Over the seeds: the same piece and another piece, quiet moves and captures, one and several takeback steps."""
    same_piece = other_piece = captures = 0
    steps = set()
    for seed in SEEDS:
        sim, ply = _simulate(seed)
        played = _read(sim, ply)
        board = _board_before(sim, ply)
        game_move = board.parse_uci(sim.moves[ply - 1])
        if played.first.from_square == game_move.from_square:
            same_piece += 1
        else:
            other_piece += 1
        captures += board.is_capture(played.first)
        steps.add(played.takeback_steps)
    assert same_piece >= 3 and other_piece >= 3, (same_piece, other_piece)
    assert captures >= 1 and len(steps) >= 2, (captures, steps)


@pytest.mark.parametrize(("fen", "uci"), [
    ("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1", "e1g1"),
    ("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1", "e8c8"),
    ("rn2k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7a8q"),
    ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q"),
    ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "e4d5"),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "e5d6"),
])
def test_takeback_order_puts_the_position_back_in_every_valid_order(fen: str, uci: str) -> None:
    before = chess.Board(fen)
    after = before.copy()
    after.push_uci(uci)
    orders = set()
    for seed in range(40):
        order = takeback_order(random.Random(seed), before, after)
        board = after.piece_map()
        for square, content in order:
            if content is None:
                assert square in board
                del board[square]
            else:
                assert isinstance(content, chess.Piece) and square not in board
                board[square] = content
        assert board == before.piece_map()
        orders.add(tuple(order))
    assert len(orders) >= 2, "the order is drawn"


def test_the_kind_fits_where_another_move_can_be_released() -> None:
    """Any other legal move but one that ends the game on the board (it could not be taken back)."""
    mate_in_one = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    game_move = chess.Move.from_uci("a1a2")
    candidates = released_candidates(mate_in_one, game_move)
    assert applicable(KIND, mate_in_one, game_move, has_next=True)
    assert chess.Move.from_uci("a1a8") not in candidates and game_move not in candidates
    assert len(candidates) == mate_in_one.legal_moves.count() - 2
    only = chess.Board("7k/8/8/8/8/8/1r6/K7 w - - 0 1")  # the king must take the rook: nothing else to release
    assert [m.uci() for m in only.legal_moves] == ["a1b2"]
    assert not applicable(KIND, only, chess.Move.from_uci("a1b2"), has_next=True)


# --- the benign variant: the same move made again (procedures=True) -------------------------------------


def _again_games(count: int) -> list[tuple[SimulatedGame, list[int]]]:
    found = []
    for seed in range(200):
        sim = simulate_game(seed=seed, profile=PROFILES[seed % 3], procedures=True, think_median=1.0,
                            edition=EDITIONS[seed % 4], time_control=TIME_CONTROLS[seed % 3])
        plies = [ply for ply, label in sim.handled if label == "undo/same-again"]
        if plies:
            found.append((sim, plies))
        if len(found) == count:
            return found
    raise AssertionError(f"only {len(found)} games with a move made again")


@pytest.mark.parametrize("index", range(8))
def test_the_same_move_made_again_raises_nothing(index: int) -> None:
    sim, plies = _again_games(8)[index]
    state = replay(sim.events)
    for ply in plies:
        board = _board_before(sim, ply)
        before = board.piece_map()
        board.push_uci(sim.moves[ply - 1])
        after = board.piece_map()
        start = state.presses[ply - 2].at if ply > 1 else 0.0
        placement = dict(before)
        shown: list[tuple[float, dict[int, chess.Piece]]] = []
        for change in (c for c in state.changes if start < c.at < state.presses[ply - 1].at):
            if isinstance(change.content, chess.Piece):
                placement[change.square] = change.content
            else:
                placement.pop(change.square, None)
            shown.append((change.at, dict(placement)))
        made = [i for i, (_, p) in enumerate(shown) if p == after]
        back = [i for i, (_, p) in enumerate(shown) if p == before]
        assert made and back and made[0] < back[-1] < made[-1], "made, taken back, made again"
        stood = shown[made[0] + 1][0] - shown[made[0]][0]
        assert stood >= T_SETTLE + 0.5 - 1e-3, "released: it stood past T_settle"
        assert shown[back[-1] + 1][0] - shown[back[-1]][0] >= 1.0 - 1e-3, "the player thought"
    record, found = run_engine(sim)
    assert record == expected_record(sim)
    strong = Counter(code_of(i) for i in found if i.severity is not Severity.INFO)
    assert strong == Counter(code for _, code in sim.expected_codes), [(i.ply, code_of(i)) for i in found]


def test_the_variant_leaves_the_simulators_draws_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its draws come from a generator of their own: without it, the same procedures are drawn at the same plies,
    and a game in which it is not played is the same game event for event."""
    from drivers.sim import _core

    kept = changed = 0
    for seed in range(12):
        sim = simulate_game(seed=seed, profile=PROFILES[seed % 3], procedures=True, think_median=1.0)
        with monkeypatch.context() as patch:
            patch.setattr(_core, "RELEASED_AGAIN_RATE", 0.0)
            without = simulate_game(seed=seed, profile=PROFILES[seed % 3], procedures=True, think_median=1.0)
        assert [h for h in sim.handled if h[1] != "undo/same-again"] == list(without.handled)
        if any(label == "undo/same-again" for _, label in sim.handled):
            changed += 1
            assert sim.events != without.events
        else:
            kept += 1
            assert sim.events == without.events
    assert kept and changed
