"""The work done once per made move and the timers (issue 12, sixth round) give the answers of the full computation.

* ``Engine.next_deadline`` returns at once when no timer is armed: it equals the earliest armed timer
  (``Engine._next_deadline_of_all``) at every step of seeded games, with and without a clock (the engine's clock model),
  with injected irregularities and in Chess960.
* The repetition facts of a move (``laws.positions.push_noting_facts``: the position's key before it, whether it is
  irreversible) are those a scratch board restored from the move's stack state gives, also after takebacks.
* A recorded move's SAN (its check or mate suffix taken from the board the move was pushed on) is python-chess's SAN
  of the move in the position before it, and the game ends (mate, stalemate, dead position, fivefold, 75 moves) are
  those python-chess finds, on games played out to their end.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine import made_moves as made_moves_module
from boardd.core.events import ClockReading, Event, GameInfo, NewGame, SquareChanged
from boardd.core.laws import positions
from boardd.core.outputs import GameEvent, MoveMade, MovesRetracted, Output
from drivers.sim import Injection, InjectionKind, random_game, simulate_game
from tests.core.test_fast_paths import _outputs


def _games(count: int, *, clockless: bool = False, procedures: bool = False) -> Iterator[list[Event]]:
    kinds = list(InjectionKind)
    for seed in range(count):
        profile = ("clean", "casual", "clumsy")[seed % 3]
        game = random_game(2000 + seed, max_plies=70, chess960=seed % 5 == 4)
        injections = [Injection(kinds[(seed // 2) % len(kinds)], 6 + seed % 13)] if seed % 2 else []
        try:
            events = simulate_game(game, seed=seed, profile=profile, injections=injections,
                                   procedures=procedures).events
        except Exception:  # an injection that does not fit the game: the game without it
            events = simulate_game(game, seed=seed, profile=profile, procedures=procedures).events
        yield [e for e in events if not isinstance(e, ClockReading)] if clockless else events


@pytest.mark.parametrize("clockless", [False, True])
def test_next_deadline_is_the_earliest_armed_timer(clockless: bool) -> None:
    """Every injection kind at least once (a timer added for a new kind must be in the shortcut's guard: the
    take-back timer of branch undo was missing from it after the decode merge), with the Laws' procedures."""
    shortcut = armed = 0
    for events in _games(2 * len(InjectionKind), clockless=clockless, procedures=True):
        engine = Engine()
        for event in events:
            while True:
                deadline = engine.next_deadline()
                assert deadline == engine._next_deadline_of_all(), event
                if deadline is None:
                    shortcut += 1
                else:
                    armed += 1
                if deadline is None or deadline >= event.at:
                    break
                engine.advance(deadline)
            engine.feed(event)
    # both answers are exercised (without a clock the model's flag is armed as soon as White's time runs)
    assert shortcut > (10 if clockless else 1000) and armed > 500


def _facts_from_scratch(board: chess.Board, index: int) -> tuple[object, bool]:
    """The definition: the stack state restored into an empty board, its key and the move's irreversibility."""
    scratch = chess.Board(None, chess960=board.chess960)
    board._stack[index].restore(scratch)
    return scratch._transposition_key(), scratch.is_irreversible(board.move_stack[index])


@pytest.mark.parametrize("chess960", [False, True])
def test_noted_facts_are_those_of_the_restored_state(chess960: bool) -> None:
    rng = random.Random(3)
    checked = irreversible = 0
    for seed in range(8):
        game = random_game(300 + seed, max_plies=160, chess960=chess960)
        board = game.board()
        for move in game.mainline_moves():
            positions.push_noting_facts(board, move)
            if rng.random() < 0.1:   # a takeback, and the move made again
                board.pop()
                positions.push_noting_facts(board, move)
            noted = positions._STATE_FACTS[board._stack[-1]]
            assert noted == _facts_from_scratch(board, len(board.move_stack) - 1), (board.fen(), move)
            checked += 1
            irreversible += noted[1]
    assert checked > 600 and 0 < irreversible < checked


def test_noting_the_facts_changes_no_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine with the facts noted at the push and with them restored from the stack later: same outputs."""
    games = list(_games(12))
    noted = [_outputs(events) for events in games]
    monkeypatch.setattr(made_moves_module, "push_noting_facts", lambda board, move: board.push(move))
    restored = [_outputs(events) for events in games]
    assert sum(len(outs) for outs in noted) > 1000
    for index, (a, b) in enumerate(zip(noted, restored, strict=True)):
        assert a == b, f"game {index}"


def _records_against_python_chess(start_fen: str, chess960: bool, outs: list[Output]) -> int:
    """Every legal move made: its SAN is python-chess's in the position before it (the records as published, cut
    back at every retraction). The number of moves checked."""
    fens = [start_fen]
    checked = 0
    for out in outs:
        if isinstance(out, MovesRetracted):
            del fens[out.to_ply + 1:]
        elif isinstance(out, MoveMade):
            rec = out.move
            del fens[rec.ply:]
            if rec.legal:
                before = chess.Board(fens[rec.ply - 1], chess960=chess960)
                assert rec.san == before.san(chess.Move.from_uci(rec.uci)), (fens[rec.ply - 1], rec.uci)
                checked += 1
            fens.append(rec.fen_after)
    return checked


_ENDS = {chess.Termination.CHECKMATE: "GAME_END_CHECKMATE", chess.Termination.STALEMATE: "GAME_END_STALEMATE",
         chess.Termination.FIVEFOLD_REPETITION: "GAME_END_FIVEFOLD",
         chess.Termination.SEVENTYFIVE_MOVES: "GAME_END_75_MOVES"}


def _clean_events(game_board: chess.Board, moves: list[chess.Move], chess960: bool) -> list[Event]:
    """A game played square change by square change, 2 s a move, no clock (the engine's model keeps time)."""
    start = game_board.fen()
    info = GameInfo(start_fen=start, chess960=chess960) if chess960 else GameInfo()
    events: list[Event] = [NewGame(at=0.0, game=info)]
    board = game_board.copy()
    at = 1.0
    for move in moves:
        before = [board.piece_at(sq) for sq in chess.SQUARES]
        board.push(move)
        after = [board.piece_at(sq) for sq in chess.SQUARES]
        changed = [sq for sq in chess.SQUARES if before[sq] != after[sq]]
        for sq in sorted(changed, key=lambda s: after[s] is not None):   # lifts first, then placements
            at += 0.05
            events.append(SquareChanged(at=at, square=sq, content=after[sq]))
        at += 2.0
    return events


@pytest.mark.parametrize("chess960", [False, True])
def test_san_and_game_end_are_python_chess_s(chess960: bool) -> None:
    ends: dict[str, int] = {}
    checked = 0
    for seed in range(40):
        game = random_game(seed, max_plies=600, chess960=chess960, biased=seed % 2 == 0)
        moves = list(game.mainline_moves())
        start = game.board()
        outs = _outputs(_clean_events(start, moves, chess960))  # (the last one: the final state)
        checked += _records_against_python_chess(start.fen(), chess960, outs)
        board = start.copy()
        for move in moves:
            board.push(move)
        outcome = board.outcome(claim_draw=False)
        code = next((o.code for o in outs if isinstance(o, GameEvent) and o.type == "GAME_END"), None)
        if outcome is not None and outcome.termination in _ENDS:
            expected = _ENDS[outcome.termination]
            assert code == expected, (seed, board.fen())
            ends[expected] = ends.get(expected, 0) + 1
        if code is not None:
            assert len(outs[-1].moves) == len(moves), seed  # type: ignore[attr-defined]   # the engine ended the game where it ended
    assert checked > 2000
    assert ends.get("GAME_END_CHECKMATE", 0) >= 3   # the mate suffix and the mate itself are exercised


def _boards_in_turn(rng: random.Random) -> Iterator[chess.Board]:
    """Positions in the orders the engine asks for FENs: move by move, with takebacks, jumps to another game, set-up
    positions without a move stack (castling rights python-chess cleans), promotions."""
    for seed in range(16):
        chess960 = seed % 4 == 3
        game = random_game(500 + seed, max_plies=200, chess960=chess960, biased=seed % 3 != 0)
        board = game.board()
        yield board.copy()
        for move in game.mainline_moves():
            board.push(move)
            yield board
            if rng.random() < 0.15:   # a takeback and the move again
                board.pop()
                yield board
                board.push(move)
                yield board
            if rng.random() < 0.05:   # the same position set up again, without its stack
                yield chess.Board(board.fen(), chess960=chess960)
    for fen in ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "r3k2r/8/8/8/8/8/8/R2K3R w KQkq - 0 1",
                "r3k2r/8/8/8/8/8/8/1R2K2R w KQkq - 0 1",
                "4k3/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "rk5r/8/8/8/8/8/8/RK5R w KQkq - 0 1",
                "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", "rr2k1rr/8/8/8/8/8/8/RR2K1RR w GBgb - 0 1",
                "r1k4r/8/8/8/8/8/8/R1K1R2R w KQkq - 0 1"):
        for chess960 in (False, True):
            yield chess.Board(fen, chess960=chess960)


def test_fen_written_by_changed_ranks_is_python_chess_s() -> None:
    from boardd.core.engine import common

    rng = random.Random(8)
    checked = 0
    castling = set()
    for board in _boards_in_turn(rng):
        assert common._placement(board) == board.board_fen(), board.fen()
        assert common._castling(board) == board.castling_xfen(), board.fen()
        assert common._fen(board) == board.fen(), board.fen()
        castling.add(board.castling_xfen())
        checked += 1
    assert checked > 3000 and len(castling) > 12   # many castling fields, Shredder-style ones among them
    assert any(c.isalpha() and c.lower() not in "kq" for text in castling for c in text)


def test_automatic_draw_told_whether_mate_answers_as_asking_the_board() -> None:
    """``automatic_draw(..., checkmate=...)`` (the engine knows from its legal-move probe) = asking the board, on
    positions of played games and on the 75-move and fivefold cases, a mate on the 150th half-move among them."""
    from boardd.core.laws.codes import EDITIONS

    boards = [chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 150 120"),   # mate on the 75th move: it takes precedence
              chess.Board("7k/8/5K2/8/8/8/8/5Q2 b - - 150 120"),   # not mate, 75 moves
              chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 150 80")]
    board = chess.Board()
    for san in ["Nf3", "Nf6", "Ng1", "Ng8"] * 4:
        board.push_san(san)
        boards.append(board.copy())
    for seed in range(4):
        game = random_game(700 + seed, max_plies=200, chess960=seed == 3)
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            boards.append(board.copy())
    answers = set()
    for board in boards:
        mate = board.is_checkmate()
        for edition in EDITIONS:
            answer = positions.automatic_draw(board, edition, checkmate=mate)
            assert answer == positions.automatic_draw(board, edition), (board.fen(), edition)
            answers.add((answer, mate))
    assert boards[0].is_checkmate() and not boards[1].is_checkmate() and not boards[1].is_stalemate()
    assert {(None, True), ("seventy-five", False), ("fivefold", False)} <= answers
