"""Incremental record (issue 12): what is extended move by move equals a rebuild from the start, byte for byte.

``game_pgn`` keeps the movetext of recent games and writes only the moves added since the last render;
``rebuild_pgn`` writes the whole game through python-chess's exporter. Likewise the publisher's ``state``
payload keeps its move lists and is compared with one built afresh. The records are driven through
retractions, records whose clocks change after the move, illegal moves that stood (and moves after them),
reinstatements with other moves, game ends and several games rendered in turn.
"""

from __future__ import annotations

import dataclasses
import json
import random

import chess
import pytest

from boardd.core.contract import Publication, Publisher, _check_mark_of
from boardd.core.engine import Engine
from boardd.core.outputs import ClockState, GameState, MoveMade, MoveRecord, StateChanged
from boardd.core.record import game_pgn, rebuild_pgn
from drivers.sim import (
    PROFILES,
    InjectionKind,
    SimulationError,
    random_game,
    seeded_injection,
    simulate_game,
)
from tests.record.factories import make_state


def _payloads(publisher: Publisher, state: GameState) -> list[object]:
    """The ``state`` and ``pgn`` payloads of a snapshot, as they go on the wire, without the ``seq``."""
    state_pub, pgn_pub = publisher.snapshot(state, at=1000.0)
    payload = dict(state_pub.payload)  # type: ignore[arg-type]
    del payload["seq"]
    return [payload, pgn_pub.payload]


def _check(state: GameState, publisher: Publisher) -> None:
    """Incremental (a long-lived publisher, the PGN cache) == rebuilt (a new publisher, python-chess's exporter).

    The ``state`` payload's text, joined from cached fragments, is ``json.dumps`` of its object; its check mark
    (taken from the movetext's SAN when it can be) is the one python-chess finds in ``state.fen``.
    """
    assert game_pgn(state) == rebuild_pgn(state)
    fresh = _payloads(Publisher(board=publisher.board), state)
    kept = _payloads(publisher, state)
    assert kept == fresh
    assert kept[1] == rebuild_pgn(state)
    state_pub, pgn_pub = publisher.snapshot(state, at=1001.5)
    assert state_pub.json is not None
    assert state_pub.payload_bytes() == _reference_dumps(state_pub.payload).encode()
    assert state_pub.replay_line() == _reference_line(state_pub)
    assert pgn_pub.replay_line() == _reference_line(pgn_pub)
    assert state_pub.payload["check"] == _check_mark_of(state.fen, state.chess960)  # type: ignore[index]


def _reference_dumps(value: object) -> str:
    """What the publisher serialised before issue 12: ``json.dumps`` of the whole object, line breaks escaped."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _reference_line(publication: Publication) -> str:
    return (f'{{"topic":{_reference_dumps(publication.topic)},"retain":{_reference_dumps(publication.retain)},'
            f'"qos":{publication.qos},"payload":{_reference_dumps(publication.payload)}}}')


def _legal_record(board: chess.Board, move: chess.Move, ply: int, rng: random.Random) -> MoveRecord:
    side = board.turn
    san = board.san(move)
    after = board.copy(stack=False)
    after.push(move)
    remaining = rng.choice([None, rng.uniform(0, 6000), rng.uniform(0, 12)])
    return MoveRecord(ply=ply, uci=move.uci(), san=san, side=side, fen_after=after.fen(), made_at=10.0 * ply,
                      clock_white=remaining if side == chess.WHITE else None,
                      clock_black=remaining if side == chess.BLACK else None,
                      emt=rng.choice([None, rng.uniform(0, 300)]))


def _illegal_record(board: chess.Board, ply: int, rng: random.Random) -> tuple[MoveRecord, chess.Board]:
    """A piece of the side to move put on an empty square it cannot reach: the physical position after it."""
    own = [sq for sq, piece in board.piece_map().items() if piece.color == board.turn
           and piece.piece_type != chess.KING]
    empty = [sq for sq in chess.SQUARES if board.piece_at(sq) is None]
    fr, to = rng.choice(own), rng.choice(empty)
    physical = board.copy(stack=False)
    piece = physical.remove_piece_at(fr)
    physical.set_piece_at(to, piece)
    physical.turn = not board.turn
    uci = chess.square_name(fr) + chess.square_name(to)
    record = MoveRecord(ply=ply, uci=uci, san=f"{chess.square_name(fr)}-{chess.square_name(to)}", side=board.turn,
                        fen_after=physical.fen(), made_at=10.0 * ply, legal=False,
                        clock_white=rng.uniform(0, 5000) if board.turn == chess.WHITE else None,
                        clock_black=rng.uniform(0, 5000) if board.turn == chess.BLACK else None)
    return record, physical


def _random_walk(seed: int, steps: int, chess960_pos: int | None = None) -> list[GameState]:
    """States of a game whose record grows, changes its last clocks, is retracted and reinstated, gets
    illegal moves that stand (the game goes on from the physical position), and ends. A Chess960 game from
    the seed's position, or from *chess960_pos*."""
    rng = random.Random(seed)
    chess960 = seed % 4 == 3 or chess960_pos is not None
    start = chess.Board.from_chess960_pos(seed % 960 if chess960_pos is None else chess960_pos) if chess960 \
        else chess.Board()
    if seed % 5 == 4 and chess960_pos is None:   # a set-up position, Black to move
        start = chess.Board("r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R b KQkq - 4 12")
    boards = [start.copy(stack=False)]
    records: list[MoveRecord] = []
    states = []
    result = "*"
    clock = ClockState(white=5400.0, black=5400.0, running=None)
    retracted: list[tuple[MoveRecord, chess.Board]] = []
    for _ in range(steps):
        roll = rng.random()
        board = boards[-1]
        moves = list(board.legal_moves)
        fen = None
        if roll < 0.08 and records:   # retraction (a takeback, a reinstatement going back)
            keep = rng.randrange(len(records))
            retracted = list(zip(records[keep:], boards[keep + 1:], strict=True))
            del records[keep:]
            del boards[keep + 1:]
            result = "*"
        elif roll < 0.12 and retracted:   # the retracted moves put back (some), their clocks maybe changed
            for record, after in retracted[:rng.randrange(1, len(retracted) + 1)]:
                if rng.random() < 0.5:
                    record = dataclasses.replace(record, emt=rng.uniform(0, 50))
                records.append(dataclasses.replace(record, ply=len(records) + 1))
                boards.append(after)
            retracted = []
        elif roll < 0.13 and not board.is_check():   # a null move in the record (the side to move passes)
            after = board.copy(stack=False)
            after.push(chess.Move.null())
            records.append(MoveRecord(ply=len(records) + 1, uci="0000", san="--", side=board.turn,
                                      fen_after=after.fen(), made_at=10.0 * len(records)))
            boards.append(after)
        elif roll < 0.15 and records:   # the official position is not the last move's (an adopted one)
            fen = rng.choice([start.fen(), "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1", "7k/8/8/8/8/8/8/R3K2R b - - 0 1"])
        elif roll < 0.2 and records:   # the last move's clocks change (completed by the press)
            last = records[-1]
            records[-1] = dataclasses.replace(last, emt=rng.uniform(0, 99), clock_white=(
                rng.uniform(0, 9000) if last.side == chess.WHITE else None), clock_black=(
                rng.uniform(0, 9000) if last.side == chess.BLACK else None))
        elif roll < 0.25 and not board.is_game_over():   # an illegal move that stood
            record, physical = _illegal_record(board, len(records) + 1, rng)
            records.append(record)
            boards.append(physical)
        elif roll < 0.28:   # a game end (or the arbiter's result), then maybe taken back
            result = rng.choice(["1-0", "0-1", "1/2-1/2", "*"])
        elif moves:
            move = rng.choice(moves)
            records.append(_legal_record(board, move, len(records) + 1, rng))
            after = board.copy(stack=False)
            after.push(move)
            boards.append(after)
        if rng.random() < 0.3:
            clock = ClockState(white=rng.uniform(0, 9000), black=rng.choice([None, rng.uniform(0, 9)]),
                               running=rng.choice([None, chess.WHITE, chess.BLACK]))
        official = boards[-1] if fen is None else chess.Board(fen)
        states.append(make_state(records, start_fen=start.fen(), chess960=chess960, fen=official.fen(),
                                 turn=official.turn, result=result, clock=clock,
                                 termination="FLAG_FALL" if result != "*" and rng.random() < 0.5 else None,
                                 game_id=f"walk-{seed}"))
    return states


@pytest.mark.parametrize("seed", range(40))
def test_random_walk_incremental_equals_rebuild(seed: int) -> None:
    publisher = Publisher(board="t1")
    for state in _random_walk(seed, 160):
        _check(state, publisher)


@pytest.mark.parametrize("seed", range(8))
def test_random_walk_of_a_chess960_game_from_the_standard_array_incremental_equals_rebuild(seed: int) -> None:
    # position 518 is the classical array: its tags (FEN and SetUp all the same) come from another branch
    publisher = Publisher(board="t1")
    states = _random_walk(seed, 160, chess960_pos=518)
    assert states[0].chess960 and states[0].start_fen == chess.STARTING_FEN
    for state in states:
        _check(state, publisher)
        assert f'[FEN "{chess.STARTING_FEN}"]' in game_pgn(state)


def test_games_rendered_in_turn_each_keep_their_record() -> None:
    # Several boards' states rendered in one process, interleaved (an archive, a consumer of many boards).
    walks = [_random_walk(seed, 120) for seed in range(100, 124)]
    publishers = [Publisher(board=f"t{index}") for index in range(len(walks))]
    for step in range(120):
        for walk, publisher in zip(walks, publishers, strict=True):
            _check(walk[step], publisher)


@pytest.mark.parametrize("kind", [None, *InjectionKind])
def test_engine_games_incremental_equals_rebuild(kind: InjectionKind | None) -> None:
    # The engine's own states (takebacks, reinstatements after an illegal move, completions that fill the
    # clocks in) in every handling profile: at every StateChanged, incremental == rebuild.
    checked = 0
    for index, profile in enumerate(PROFILES):
        seed = 7 * index + len(str(kind))
        game = random_game(seed, max_plies=60)
        try:
            sim = simulate_game(game, seed=seed, profile=profile, injections=seeded_injection(kind, game, seed))
        except SimulationError:
            continue
        engine = Engine()
        publisher = Publisher(board="t1")
        for event in sim.events:
            while (deadline := engine.next_deadline()) is not None and deadline < event.at:
                if any(isinstance(o, StateChanged) for o in engine.advance(deadline)):
                    _check(engine.state, publisher)
                    checked += 1
            if any(isinstance(o, StateChanged) for o in engine.feed(event)):
                _check(engine.state, publisher)
                checked += 1
        while (deadline := engine.next_deadline()) is not None:
            engine.advance(deadline)
        _check(engine.state, publisher)
    assert checked > 20


def test_render_needs_the_state_only_for_a_state_change() -> None:
    # The daemon renders every batch without its StateChanged (the snapshot goes apart) and builds no state
    # for it; a batch with one needs the state.
    publisher = Publisher(board="t1")
    state = next(state for state in reversed(_random_walk(1, 30)) if state.moves)
    assert [pub.topic for pub in publisher.render([MoveMade(move=state.moves[-1])], None, at=5.0)] == ["boardd/t1/move"]
    with pytest.raises(ValueError, match="StateChanged"):
        publisher.render([StateChanged(at=5.0)], None, at=5.0)
    kinds = [pub.topic.rsplit("/", 1)[1] for pub in publisher.render([StateChanged(at=5.0)], state, at=5.0)]
    assert kinds == ["state", "pgn"]


def test_state_text_escapes_line_breaks_and_keeps_unicode() -> None:
    # The fragments are escaped one by one: U+2028, U+0085 and U+2029 in names, a SAN or an event still come
    # out escaped (one line), other non-ASCII characters as they are.
    publisher = Publisher(board="t1")
    board = chess.Board()
    records = [_legal_record(board, chess.Move.from_uci("e2e4"), 1, random.Random(1))]
    records.append(dataclasses.replace(records[0], ply=2, uci="e7e5", san="e7\u2028e5", legal=False))
    for white in ("丁立人", "a\u2028b\x85c\u2029d", "plain"):
        state = make_state(records, white=white, event="Open \u2028 2026", game_id="g\u2029")
        _check(state, publisher)
        line = publisher.snapshot(state, at=5.0)[0].replay_line()
        assert len(line.splitlines()) == 1
