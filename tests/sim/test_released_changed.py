"""The released move changed by hand into the game's move, as the simulator plays it (injection
``released-changed``, R07, 4.7).

The player makes another legal move and lets go of it (it stands ``T_settle`` + 0.5-10 s: made and published), then
changes it straight into the game's move by hand, one gesture, the steps in a random valid order (the pieces of the
first move lifted, the game's victim lifted before or after them, the piece the first move captured put back from
beside the board at any time, a piece put down only on an empty square), and presses. The events must show exactly
that, and the engine must record the game's move and raise ``RELEASED_MOVE_CHANGED`` once, for the mover,
suggesting the first released move: nothing read as the opponent starting, nothing out of turn.
"""

from __future__ import annotations

import logging
import random
from collections import Counter

import chess
import pytest

from bench.bench_false_alarms import _fits, code_of, expected_record, run_engine
from boardd.core.outputs import Severity
from boardd.core.settings import RulesConfig
from drivers.sim import PROFILES, Injection, InjectionKind, SimulatedGame, applicable, random_game, simulate_game
from drivers.sim._inject import changed_candidates
from tests.sim.physical import replay

KIND = InjectionKind.RELEASED_CHANGED
T_SETTLE = RulesConfig().timing.t_settle
EDITIONS = (2009, 2014, 2018, 2023)
TIME_CONTROLS = ("180+2", "900+10", "5400+30")
SEEDS = range(30)


@pytest.fixture(autouse=True)
def _quiet_engine(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)


def _simulate(seed: int) -> tuple[SimulatedGame, int]:
    game = random_game(seed, max_plies=60, chess960=seed % 6 == 5)
    fits = _fits(game, lambda board, move, has_next: applicable(KIND, board, move, has_next=has_next))
    ply = random.Random(seed).choice(fits)
    sim = simulate_game(game, seed=seed, profile=PROFILES[seed % 3], injections=[Injection(KIND, ply)],
                        procedures=seed % 2 == 1, edition=EDITIONS[seed % 4],
                        time_control=TIME_CONTROLS[(seed // 4) % 3], think_median=1.0)
    return sim, ply


def _board_before(sim: SimulatedGame, ply: int) -> chess.Board:
    fen = sim.game.start_fen
    board = chess.Board(fen, chess960=sim.game.chess960) if fen else chess.Board()
    for uci in sim.moves[:ply - 1]:
        board.push(board.parse_uci(uci))
    return board


def _read(sim: SimulatedGame, ply: int) -> tuple[chess.Move, float, list[float]]:
    """The first released move, how long it stood, and the gaps of the change, read off the board's changes."""
    state = replay(sim.events)
    start = state.presses[ply - 2].at if ply > 1 else 0.0
    press = state.presses[ply - 1]
    board = _board_before(sim, ply)
    game_move = board.parse_uci(sim.moves[ply - 1])
    placement = board.piece_map()
    timeline: list[tuple[float, dict[int, chess.Piece]]] = [(start, dict(placement))]
    for change in state.changes:
        if start < change.at < press.at:
            if isinstance(change.content, chess.Piece):
                placement[change.square] = change.content
            else:
                placement.pop(change.square, None)
            timeline.append((change.at, dict(placement)))
    after_game = board.copy()
    after_game.push(game_move)
    assert placement == after_game.piece_map() == press.placement, "the game's move stands at the press"
    ends = [at for at, _ in timeline[1:]] + [press.at]
    stood = {}
    for (at, shown), until in zip(timeline, ends, strict=True):
        for move in board.legal_moves:
            board.push(move)
            if shown == board.piece_map() and until - at > T_SETTLE:
                stood[move] = until - at
            board.pop()
    assert len(stood) == 2 and game_move in stood, f"one other move released, then the game's: {stood}"
    (first,) = set(stood) - {game_move}
    index_first = max(i for i, (at, shown) in enumerate(timeline) if ends[i] - at > T_SETTLE
                      and shown != after_game.piece_map() and shown != board.piece_map())
    index_game = next(i for i in range(index_first + 1, len(timeline)) if timeline[i][1] == after_game.piece_map())
    gaps = [timeline[i][0] - timeline[i - 1][0] for i in range(index_first + 2, index_game + 1)]
    assert all(timeline[i][1] != board.piece_map() or ends[i] - timeline[i][0] < T_SETTLE
               for i in range(index_first, index_game + 1)), \
        "changed straight into the game's move, the position before it never standing (not taken back)"
    return first, stood[first], gaps


@pytest.mark.parametrize("seed", SEEDS)
def test_the_events_show_the_procedure_and_the_engine_flags_it_once(seed: int) -> None:
    sim, ply = _simulate(seed)
    assert sim.expected_codes.count((ply, "RELEASED_MOVE_CHANGED")) == 1
    assert [e.at for e in sim.events] == sorted(e.at for e in sim.events)
    first, stood, gaps = _read(sim, ply)
    board = _board_before(sim, ply)
    assert first != board.parse_uci(sim.moves[ply - 1])
    assert T_SETTLE + 0.5 - 1e-3 <= stood <= T_SETTLE + 10.0 + 1e-3
    assert max(gaps, default=0.0) < T_SETTLE, "the change is one gesture"
    record, found = run_engine(sim)
    assert record == expected_record(sim)
    strong = Counter(code_of(i) for i in found if i.severity is not Severity.INFO)
    assert strong == Counter(code for _, code in sim.expected_codes), [(i.ply, code_of(i)) for i in found]
    (changed,) = [i for i in found if i.code == "RELEASED_MOVE_CHANGED"]
    assert changed.side == board.turn
    assert changed.suggestion.move == board.san(first)


def test_the_change_varies() -> None:
    """Over the seeds: into a capture and out of one, the same piece and another, the victim lifted first."""
    into = out_of = same = other = 0
    for seed in SEEDS:
        sim, ply = _simulate(seed)
        first, _, _ = _read(sim, ply)
        board = _board_before(sim, ply)
        game_move = board.parse_uci(sim.moves[ply - 1])
        into += board.is_capture(game_move) and not board.is_capture(first)
        out_of += board.is_capture(first)
        same += first.from_square == game_move.from_square
        other += first.from_square != game_move.from_square
    assert into >= 3 and out_of >= 3 and same >= 2 and other >= 3, (into, out_of, same, other)


def test_the_candidates_leave_out_what_the_laws_flag_more() -> None:
    """Not another piece on the same promotion square (4.4.4), not the king or rook before castling (4.4.2)."""
    promotion = chess.Board("4k3/1P6/8/8/8/8/7P/4K3 w - - 0 1")
    queen = chess.Move.from_uci("b7b8q")
    assert all(m.to_square != chess.B8 for m in changed_candidates(promotion, queen))
    castling = chess.Board("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    short = chess.Move.from_uci("e1g1")
    assert all(m.from_square not in (chess.E1, chess.H1) for m in changed_candidates(castling, short))
    assert applicable(KIND, castling, short, has_next=True)
