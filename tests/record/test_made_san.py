"""A made move's SAN worked out once (issue 12): the engine notes it when it makes the move
(``record.note_made_move``), and the PGN's movetext takes it from there instead of asking python-chess for the
move's legality and SAN again at the next snapshot.

* every note the engine makes is python-chess's answer in that very position (the key, the move parse_uci gives
  for the UCI, its legality, its SAN with the check suffix), over simulated games in every handling profile, with
  every injection kind, Chess960 every third game;
* the movetext of those games asks python-chess for a SAN again in fewer than 1 state in 100 (a move put back by
  another path than ``MadeMoves.make`` is not noted), and is the rebuild's byte for byte;
* a control: a wrong note (another SAN for the same position and move) changes the PGN, which the comparison
  with the rebuild sees.
"""

from __future__ import annotations

from collections.abc import Iterator

import chess
import pytest

from boardd.core import record
from boardd.core.engine import Engine, made_moves
from boardd.core.events import Event
from boardd.core.outputs import GameState, StateChanged
from boardd.core.record import PositionKey, game_pgn, position_key, rebuild_pgn
from drivers.sim import PROFILES, InjectionKind, random_game, seeded_injection, simulate_game


def _streams() -> Iterator[list[Event]]:
    """Every profile with every injection kind (and none), Chess960 every third game."""
    index = 0
    for kind in (None, *InjectionKind):
        for profile in PROFILES:
            seed = 6100 + index
            game = random_game(seed, max_plies=50, chess960=index % 3 == 2)
            index += 1
            sim = simulate_game(game, seed=seed, profile=profile, injections=seeded_injection(kind, game, seed))
            yield list(sim.events)


def _states(engine: Engine, events: list[Event]) -> Iterator[GameState]:
    """The engine's state at every ``StateChanged`` while *events* are fed (timers fired), and at the end."""
    for event in events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            if any(isinstance(out, StateChanged) for out in engine.advance(deadline)):
                yield engine.state
        if any(isinstance(out, StateChanged) for out in engine.feed(event)):
            yield engine.state
    while (deadline := engine.next_deadline()) is not None:
        engine.advance(deadline)
    yield engine.state


def test_every_note_is_python_chess_in_that_position(monkeypatch: pytest.MonkeyPatch) -> None:
    engines: list[Engine] = []
    checked: list[tuple[str, bool, bool, bool, bool, bool]] = []
    real = made_moves.note_made_move

    def checking(before: PositionKey, uci: str, move: chess.Move, san: str) -> None:
        board = engines[-1].g.board.copy()
        pushed = board.pop()   # (noted right after the move went on the official board)
        checked.append((uci, pushed == move, position_key(board) == before, board.is_legal(move),
                        board.parse_uci(uci) == move, board.san(move) == san))
        real(before, uci, move, san)

    monkeypatch.setattr(made_moves, "note_made_move", checking)
    chess960 = 0
    for events in _streams():
        engine = Engine()
        engines.append(engine)
        for state in _states(engine, events):
            chess960 += state.chess960
    wrong = [item for item in checked if not all(item[1:])]
    assert wrong == []
    assert len(checked) > 1000
    assert chess960 > 100


def _count_sans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = chess.Board.san_and_push

    def counting(board: chess.Board, move: chess.Move) -> str:
        calls[0] += 1
        return real(board, move)

    monkeypatch.setattr(chess.Board, "san_and_push", counting)
    return calls


def test_the_movetext_takes_the_noted_san_and_equals_the_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    # (a move the engine put back on the board by another path, a reinstatement, is not noted: python-chess's SAN)
    calls = _count_sans(monkeypatch)
    states = again = 0
    for events in _streams():
        record._MOVETEXTS.clear()
        engine = Engine()
        for state in _states(engine, events):
            before = calls[0]
            text = game_pgn(state)
            again += calls[0] - before
            assert text == rebuild_pgn(state)
            states += 1
    assert states > 1000
    assert again * 100 < states, f"python-chess worked out {again} SANs again in {states} states"


def test_control_a_wrong_note_changes_the_pgn() -> None:
    events = next(_streams())
    engine = Engine()
    states = list(_states(engine, events))
    state = states[-1]
    assert len(state.moves) > 20
    record._MOVETEXTS.clear()
    assert game_pgn(state) == rebuild_pgn(state)
    # the same notes, the SAN of the 10th move spoiled: the movetext now writes it
    board = chess.Board()
    for made in state.moves[:9]:
        board.push_uci(made.uci)
    key = (position_key(board), state.moves[9].uci)
    move, san = record._MADE[key]
    try:
        record._MADE[key] = (move, san + "?")
        record._MOVETEXTS.clear()
        spoiled = game_pgn(state)
        assert spoiled != rebuild_pgn(state)
        assert f"{san}? " in spoiled
    finally:
        record._MADE[key] = (move, san)
        record._MOVETEXTS.clear()
