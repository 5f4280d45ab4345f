"""The simulator's Laws procedures (``procedures=True``, :class:`Correction`): its own ground truth, no engine.

Each procedure is generated and the events are checked against what the Laws describe:
the Chess960 castling methods of the 2009/2014 appendix F.3 (both colours and wings,
random start arrays, destinations that coincide with start squares), one-hand captures at
150-300 ms in either order, and the arbiter's correction cycle of 7.5.1 / 7.5.2 (restored
position, penalty on the clock, the offender's side running at the restart, the tablet's
``Reinstate`` naming the right ply, the limit-reaching illegal move ending the game). What the
engine makes of them is measured by ``bench/bench_false_alarms.py``, not asserted here.
"""

from __future__ import annotations

import argparse
import io
import itertools
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core import eventlog
from boardd.core.clock import TimeControl
from boardd.core.events import ClockReading, ClockSide, Event, Reinstate, SetClock, SetResult, SquareChanged
from drivers.sim import (
    Castling960,
    Correction,
    CorrectionKind,
    SimulatedGame,
    castling960_methods,
    choose_move,
    configure_parser,
    correction_applicable,
    correction_codes,
    random_game,
    run,
    simulate_game,
)
from drivers.sim._inject import _king_rook
from drivers.sim._procedures import category_of, penalty_seconds


def castling_game(seed: int, *, max_plies: int = 40) -> chess.pgn.Game:
    """A Chess960 game from a random start array in which both sides castle as soon as they can."""
    rng = random.Random(seed)
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    game = chess.pgn.Game()
    game.setup(board)
    node: chess.pgn.GameNode = game
    while len(board.move_stack) < max_plies and not board.is_game_over():
        castlings = [m for m in board.legal_moves if board.is_castling(m)]
        back = [m for m in board.legal_moves if chess.square_rank(m.from_square) in (0, 7)
                and board.piece_type_at(m.from_square) not in (chess.KING, chess.ROOK)]
        if castlings:
            move = rng.choice(castlings)
        elif back and rng.random() < 0.7:
            move = rng.choice(back)
        else:
            move = choose_move(board, rng)
        node = node.add_variation(move)
        board.push(move)
    return game


@dataclass
class Ply:
    """The square changes that took the board from the position before a ply to the position after it."""

    board: chess.Board
    move: chess.Move
    changes: list[SquareChanged]


def plies_of(sim: SimulatedGame) -> list[Ply]:
    """Cut the board changes into plies: a ply ends when the board shows the position after it (clean handling).

    A ply whose move was released, taken back and made again (``undo/same-again``) starts again once the
    position before it is back on the board."""
    fen = sim.game.start_fen
    board = chess.Board(fen, chess960=sim.game.chess960) if fen else chess.Board()
    placement = dict(board.piece_map())
    result: list[Ply] = []
    current: list[SquareChanged] = []
    pending = list(sim.moves)
    again = {ply for ply, label in sim.handled if label == "undo/same-again"}
    taken_back: bool | None = False
    for event in sim.events:
        if not isinstance(event, SquareChanged) or not pending:
            continue
        current.append(event)
        if event.content is None:
            placement.pop(event.square, None)
        else:
            placement[event.square] = event.content
        move = board.parse_uci(pending[0])
        after = board.copy()
        after.push(move)
        ply = len(result) + 1
        if ply in again and taken_back is not True:
            if placement == after.piece_map():
                taken_back = None  # made once ...
            elif taken_back is None and placement == board.piece_map():
                taken_back, current = True, []  # ... then taken back: the ply starts again
            continue
        if placement == after.piece_map():
            result.append(Ply(board.copy(), move, current))
            board, current, taken_back = after, [], False
            pending.pop(0)
    assert not pending, f"the board never showed the position after {pending[0]}"
    return result


def _seen_methods(seeds: range) -> dict[Castling960, list[tuple[chess.Color, bool, Ply]]]:
    seen: dict[Castling960, list[tuple[chess.Color, bool, Ply]]] = {method: [] for method in Castling960}
    for seed in seeds:
        sim = simulate_game(castling_game(seed), seed=seed, profile="clean", procedures=True, think_median=1.0)
        labels = dict(sim.handled)
        for index, ply in enumerate(plies_of(sim)):
            label = labels.get(index + 1, "")
            if not label.startswith("960/"):
                continue
            method = Castling960(label.removeprefix("960/"))
            assert method in castling960_methods(ply.board, ply.move)
            king_from, _, rook_from, _ = _king_rook(ply.board, ply.move)
            seen[method].append((ply.board.turn, rook_from > king_from, ply))
    return seen


def _lift(square: int) -> tuple[int, None]:
    return (square, None)


def _check_method(method: Castling960, ply: Ply) -> None:
    king_from, king_to, rook_from, rook_to = _king_rook(ply.board, ply.move)
    king = chess.Piece(chess.KING, ply.board.turn)
    rook = chess.Piece(chess.ROOK, ply.board.turn)
    steps = [(c.square, c.content) for c in ply.changes]
    if method is Castling960.KING_OFF_BOARD:  # F.3 recommendation: king off first, placed last
        assert steps[0] == _lift(king_from) and steps[-1] == (king_to, king)
        if rook_from != rook_to:
            assert steps[1:-1] == [_lift(rook_from), (rook_to, rook)]
    elif method is Castling960.KING_IN_HAND:
        assert {steps[0], steps[1]} == {_lift(king_from), _lift(rook_from)}
        assert {steps[2], steps[3]} == {(king_to, king), (rook_to, rook)} and len(steps) == 4
        assert ply.changes[1].at - ply.changes[0].at <= 0.30 + 1e-3  # the same hand, one scan or so later
    elif method is Castling960.DOUBLE_MOVE:  # F.3 b.1: a king move, then a rook move
        assert steps == [_lift(king_from), (king_to, king), _lift(rook_from), (rook_to, rook)]
    elif method is Castling960.DOUBLE_MOVE_RELEASED:  # F.3 b.1 to the letter: the king move released, then the rook
        assert steps == [_lift(king_from), (king_to, king), _lift(rook_from), (rook_to, rook)]
        assert ply.changes[2].at - ply.changes[1].at >= 0.50 - 1e-3  # (over the release time: a made king move)
    elif method is Castling960.SWAP:  # F.3 b.2: both in the air, the king lands on the rook's square
        assert king_to == rook_from and rook_to == king_from
        assert {steps[0], steps[1]} == {_lift(king_from), _lift(rook_from)}
        assert {steps[2], steps[3]} == {(king_to, king), (rook_to, rook)}
    elif method is Castling960.KING_ONLY:  # F.3 b.3: the rook already stands on its final square
        assert rook_from == rook_to and steps == [_lift(king_from), (king_to, king)]
    elif method is Castling960.KING_ON_ROOK:  # "king takes rook": the king put down on the rook's square first
        assert {steps[0], steps[1]} == {_lift(king_from), _lift(rook_from)} and steps[2] == (rook_from, king)
        if king_to == rook_from:
            assert steps[3:] == [(rook_to, rook)]
        else:
            assert steps[3] == _lift(rook_from) and {steps[4], steps[5]} == {(king_to, king), (rook_to, rook)}
            assert len(steps) == 6
    elif method is Castling960.GRASPED_TOGETHER:  # side by side, one hand round both, inside one scan
        assert chess.square_distance(king_from, rook_from) == 1 and not (king_to == rook_from and rook_to == king_from)
        assert {steps[0], steps[1]} == {_lift(king_from), _lift(rook_from)}
        assert {steps[2], steps[3]} == {(king_to, king), (rook_to, rook)} and len(steps) == 4
        assert ply.changes[1].at - ply.changes[0].at <= 0.20 + 1e-3
    elif method is Castling960.KING_TOUCHED_ROOK_ONLY:  # the king lifted and put back first, then the rook
        assert king_from == king_to
        assert steps == [_lift(king_from), (king_from, king), _lift(rook_from), (rook_to, rook)]
        assert ply.changes[1].at - ply.changes[0].at >= 0.30 - 1e-3  # (a touch the board sees, not a flicker)
    else:  # F.3 b.4: the king already stands on its final square, the rook passes it
        assert king_from == king_to and steps == [_lift(rook_from), (rook_to, rook)]


def test_every_chess960_castling_method_is_played_as_the_laws_describe() -> None:
    seen = _seen_methods(range(160))
    for method, uses in seen.items():
        assert uses, f"{method} never played"
        for _, _, ply in uses:
            _check_method(method, ply)
    colours_wings = Counter((colour, hside) for uses in seen.values() for colour, hside, _ in uses)
    assert len(colours_wings) == 4, colours_wings  # white and black, a-side and h-side


def test_chess960_castling_methods_follow_the_start_squares() -> None:
    """The four F.3 b methods are exactly those the squares allow (random arrays, coinciding squares)."""
    count = Counter()
    for seed in range(300):
        board = chess.Board.from_chess960_pos(random.Random(seed).randrange(960))
        for colour in chess.COLORS:
            board.turn = colour
            # Clear the back rank between the castling pieces so that every castling is legal.
            for square in chess.SquareSet(chess.BB_RANK_1 if colour else chess.BB_RANK_8):
                if board.piece_type_at(square) not in (chess.KING, chess.ROOK):
                    board.remove_piece_at(square)
            for move in [m for m in board.legal_moves if board.is_castling(m)]:
                king_from, king_to, rook_from, rook_to = _king_rook(board, move)
                methods = set(castling960_methods(board, move))
                assert (Castling960.ROOK_ONLY in methods) == (king_from == king_to)
                assert (Castling960.KING_ONLY in methods) == (rook_from == rook_to)
                assert (Castling960.SWAP in methods) == (king_to == rook_from and rook_to == king_from)
                assert (Castling960.KING_ON_ROOK in methods) == (king_from != king_to)
                assert (Castling960.KING_TOUCHED_ROOK_ONLY in methods) == (king_from == king_to)
                assert (Castling960.DOUBLE_MOVE_RELEASED in methods) == (Castling960.DOUBLE_MOVE in methods) == (
                    king_from != king_to and rook_from not in (rook_to, king_to))
                assert (Castling960.GRASPED_TOGETHER in methods) == (
                    king_from != king_to and rook_from != rook_to and chess.square_distance(king_from, rook_from) == 1
                    and not (king_to == rook_from and rook_to == king_from))
                count.update(methods)
    assert set(count) == set(Castling960)


@pytest.mark.parametrize("profile", ["clean", "casual"])
def test_one_hand_captures_lift_victim_and_capturer_150_to_300_ms_apart(profile: str) -> None:
    styles = Counter()
    far = 0
    for seed in range(12):
        sim = simulate_game(random_game(seed), seed=seed, profile=profile, procedures=True, think_median=1.0)
        labels = dict(sim.handled)
        for index, ply in enumerate(plies_of(sim)):
            label = labels.get(index + 1, "")
            if not label.startswith("capture/"):
                continue
            victim = ply.move.to_square if not ply.board.is_en_passant(ply.move) else (
                ply.move.to_square + (-8 if ply.board.turn else 8))
            involved = (victim, ply.move.from_square, ply.move.to_square)
            changes = [c for c in ply.changes if c.square in involved]  # flicker elsewhere is not the capture
            while len(changes) > 2 and changes[0].square == changes[1].square:  # a j'adoube first (casual)
                changes = changes[2:]
            first, second = changes[0], changes[1]
            order = (victim, ply.move.from_square) if label == "capture/victim-first" else (
                ply.move.from_square, victim)
            assert (first.square, second.square) == order and first.content is None and second.content is None
            assert 0.15 - 1e-3 <= second.at - first.at <= 0.30 + 1e-3
            assert changes[-1].square == ply.move.to_square
            styles[label] += 1
            far += chess.square_distance(victim, ply.move.from_square) >= 3
    assert styles["capture/victim-first"] and styles["capture/capturer-first"]
    assert far  # captures from three squares away or more: the case the two-hands heuristic must leave alone


def _cases(kind: CorrectionKind, count: int, *, chess960: bool = False) -> list[tuple[chess.pgn.Game, int, int]]:
    cases = []
    for seed in range(300):
        game = random_game(seed, chess960=chess960)
        board = game.board()
        moves = list(game.mainline_moves())
        for index, move in enumerate(moves[:-2]):
            if index >= 2 and correction_applicable(kind, board, move):
                cases.append((game, index + 1, seed))
                break
            board.push(move)
        if len(cases) == count:
            return cases
    raise AssertionError(f"only {len(cases)} games fit {kind}")


def _side(sim: SimulatedGame, colour: chess.Color) -> ClockSide:
    left = sim.header.rules.white_clock_side
    return left if colour == chess.WHITE else left.other


def _placement_at(events: list[Event], start: dict[int, chess.Piece], until: int) -> dict[int, chess.Piece]:
    placement = dict(start)
    for event in events[:until]:
        if isinstance(event, SquareChanged):
            if event.content is None:
                placement.pop(event.square, None)
            else:
                placement[event.square] = event.content
    return placement


def test_promotion_choice_changed_is_put_back_without_reinstatement_or_penalty() -> None:
    """The promotion's first piece released on the square, exchanged for another, the press (4.4.4: the first piece
    stands); then the first piece put back on the square: no tablet Reinstate, no times set, the record the game."""
    kind = CorrectionKind.PROMOTION_CHOICE_CHANGED
    for game, ply, seed in _cases(kind, 8):
        sim = simulate_game(game, seed=seed, profile="clean", corrections=[Correction(kind, ply)], procedures=True,
                            edition=2023, think_median=1.0)
        board = game.board()
        moves = list(game.mainline_moves())
        for move in moves[:ply - 1]:
            board.push(move)
        move = moves[ply - 1]
        assert move.promotion is not None
        assert sim.moves == [m.uci() for m in _uci(game)]
        label = next(label for at, label in sim.handled if at == ply and label.startswith("correction/"))
        assert label.startswith(f"correction/{kind.value} ")
        assert not [e for e in sim.events if isinstance(e, (Reinstate, SetClock))], label
        placed = [e.content for e in sim.events if isinstance(e, SquareChanged) and e.square == move.to_square
                  and e.content is not None]
        first = chess.Piece(move.promotion, board.turn)
        # the first piece, another of the mover's, and the first piece again, one after the other on the square
        assert any(a == c == first and b is not None and b != first and b.color == board.turn
                   for a, b, c in zip(placed, placed[1:], placed[2:], strict=False)), (label, placed)


@pytest.mark.parametrize("kind", [k for k in CorrectionKind if k is not CorrectionKind.PROMOTION_CHOICE_CHANGED])
@pytest.mark.parametrize("edition", [2009, 2023])
def test_correction_cycle_restores_penalises_and_replays(kind: CorrectionKind, edition: int) -> None:
    steps: Counter[str] = Counter()
    for game, ply, seed in _cases(kind, 8, chess960=kind is CorrectionKind.ILLEGAL_GEOMETRY and edition == 2009):
        sim = simulate_game(game, seed=seed, profile="clean", corrections=[Correction(kind, ply)], procedures=True,
                            edition=edition, think_median=1.0)
        moves = list(game.mainline_moves())
        board = game.board()
        for move in moves[:ply - 1]:
            board.push(move)
        assert sim.moves == [m.uci() for m in _uci(game)]  # the record is the legal game
        assert [(p, c) for p, c in sim.expected_codes if p == ply] == [(ply, c) for c in correction_codes(kind)]
        label = next(label for at, label in sim.handled if at == ply and label.startswith("correction/"))
        assert label.startswith(f"correction/{kind.value} ")
        steps.update(label.split(" ")[1:])
        offender = board.turn
        queen_rule = kind is CorrectionKind.PAWN_NOT_REPLACED and (edition >= 2014 or " exchanged" in label)
        # The tablet's Reinstate names the position before the illegal move, and only when the label says so.
        reinstates = [e for e in sim.events if isinstance(e, Reinstate)]
        if "reinstate-none" in label:
            assert not reinstates
        else:
            assert [r.ply for r in reinstates] == [ply - 1]
        # The illegal press: the lever leaves the offender with a position that no legal move gives.
        readings = [(i, e) for i, e in enumerate(sim.events) if isinstance(e, ClockReading)]
        start = game.board().piece_map()
        legal_after = set()
        for move in board.legal_moves:
            board.push(move)
            legal_after.add(frozenset(board.piece_map().items()))
            board.pop()
        window = plies_of(sim)[ply - 1].changes
        first_at, last_at = window[0].at, window[-1].at
        illegal_presses = []
        previous = None
        for i, reading in readings:
            if previous is not None and first_at <= reading.at <= last_at and (
                    previous.lever_high == _side(sim, offender)) and reading.lever_high == _side(sim, offender).other:
                placement = frozenset(_placement_at(sim.events, start, i).items())
                if placement not in legal_after and placement != frozenset(board.piece_map().items()):
                    illegal_presses.append(i)
            previous = reading
        assert len(illegal_presses) == 1, label
        pressed = illegal_presses[0]
        # The position before the illegal move comes back (not under 7.5.2 from E2014: the pawn becomes a queen).
        if not queen_rule:
            back = [i for i in range(pressed, len(sim.events)) if isinstance(sim.events[i], SquareChanged)
                    and _placement_at(sim.events, start, i + 1) == board.piece_map()]
            assert back, label
            restored = back[0]
            # The clock restarts with the offender's time running before he touches a piece again.
            touch = next(i for i in range(restored + 1, len(sim.events)) if isinstance(sim.events[i], SquareChanged))
            running = [e.running for e in sim.events[restored:touch] if isinstance(e, ClockReading) and e.running]
            assert running and running[-1] == _side(sim, offender), label
        # The times: penalty to the opponent (unless left unchanged), seen on the clock or sent from the tablet.
        if "times-unchanged" not in label:
            opponent = not offender
            penalty = penalty_seconds(edition, category_of(TimeControl.parse(sim.game.time_control), edition))
            if "times-other-penalty" in label:  # the arbiter's judgement differs: the other of 1 and 2 minutes
                penalty = 180.0 - penalty
            if "noticed-after-reply" in label:  # the reply's increment is taken back with it
                penalty -= TimeControl.parse(sim.game.time_control).bonus_s
            shown = [(e.left if _side(sim, opponent) is ClockSide.LEFT else e.right)
                     for i, e in readings if i >= pressed]
            jumps = [b - a for a, b in itertools.pairwise(shown) if a is not None and b is not None]
            assert any(abs(jump - penalty) <= 1.0 for jump in jumps), (label, penalty, max(jumps))
            if "times-tablet" in label or "times-both" in label:
                assert any(isinstance(e, SetClock) for e in sim.events)
    assert steps["paused"]  # the common case is among the eight


def test_illegal_move_found_after_the_reply_undoes_both() -> None:
    """7.5.1 "found during the game": the opponent has replied and pressed; both moves are taken back."""
    found = 0
    for game, ply, seed in _cases(CorrectionKind.ILLEGAL_GEOMETRY, 60):
        sim = simulate_game(game, seed=seed, corrections=[Correction(CorrectionKind.ILLEGAL_GEOMETRY, ply)],
                            procedures=True, think_median=1.0)
        label = next(label for at, label in sim.handled if at == ply and label.startswith("correction/"))
        if "noticed-after-reply" not in label:
            continue
        found += 1
        assert "restart-play" in label and sim.moves == [m.uci() for m in game.mainline_moves()]
        board = game.board()
        for move in list(game.mainline_moves())[:ply - 1]:
            board.push(move)
        offender = _side(sim, board.turn)
        # Two presses after the illegal move's start: the offender's, then the opponent's after his reply.
        window = plies_of(sim)[ply - 1].changes
        levers = [e.lever_high for e in sim.events
                  if isinstance(e, ClockReading) and window[0].at <= e.at <= window[-1].at]
        changes = [b for a, b in itertools.pairwise(levers) if a != b]
        assert changes[:2] == [offender.other, offender], label
    assert found >= 3


def _uci(game: chess.pgn.Game) -> list[chess.Move]:
    return list(game.mainline_moves())


def test_second_illegal_move_ends_the_game_from_2014_and_not_in_2009() -> None:
    game, first, seed = _cases(CorrectionKind.ILLEGAL_GEOMETRY, 1)[0]
    board = game.board()
    moves = list(game.mainline_moves())
    later = []
    for index, move in enumerate(moves):
        if index + 1 >= first + 4 and (index + 1 - first) % 2 == 0 and index + 1 < len(moves) - 1 and (
                correction_applicable(CorrectionKind.ILLEGAL_GEOMETRY, board, move)):
            later.append(index + 1)
        board.push(move)
    second = later[0]
    cycles = [Correction(CorrectionKind.ILLEGAL_GEOMETRY, first), Correction(CorrectionKind.ILLEGAL_GEOMETRY, second)]
    ends = simulate_game(game, seed=seed, corrections=cycles, procedures=True, edition=2023, think_median=1.0)
    assert ends.moves == [m.uci() for m in moves[:second - 1]]
    loser = chess.WHITE if second % 2 == 1 else chess.BLACK
    assert ends.result == ("0-1" if loser == chess.WHITE else "1-0")
    assert [e.result for e in ends.events if isinstance(e, SetResult)] == [ends.result]
    assert [c for _, c in ends.expected_codes] == ["ILLEGAL_MOVE/GEOMETRY"] * 2
    goes_on = simulate_game(game, seed=seed, corrections=cycles, procedures=True, edition=2009, think_median=1.0)
    assert goes_on.result is None and goes_on.moves == [m.uci() for m in moves]


def test_default_handling_carries_no_procedure_and_logs_round_trip() -> None:
    plain = simulate_game(seed=3, profile="casual")
    assert plain.handled == () and "procedures" not in plain.header.extra["simulator"]
    game, ply, seed = _cases(CorrectionKind.ILLEGAL_CAPTURE, 1)[0]
    sim = simulate_game(game, seed=seed, corrections=[Correction.parse(f"illegal-capture@{ply}")], procedures=True)
    stream = io.StringIO()
    eventlog.write_events(stream, sim.events, sim.header)
    lines = stream.getvalue().splitlines()
    header = eventlog.read_header(lines)
    assert header is not None
    assert [event for _, event in eventlog.read_events(lines)] == sim.events
    assert header.extra["simulator"]["corrections"] == [f"illegal-capture@{ply}"]
    assert str(Correction.parse(f"pawn-not-replaced@{ply}")) == f"pawn-not-replaced@{ply}"
    with pytest.raises(ValueError, match="bad correction"):
        Correction.parse("castling@3")


def test_simulate_command_plays_corrections_and_procedures(tmp_path: Path) -> None:
    _, ply, seed = _cases(CorrectionKind.ILLEGAL_GEOMETRY, 1)[0]
    out = tmp_path / "game.jsonl"
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    args = parser.parse_args(["--random", "--seed", str(seed), "--procedures", "--correct",
                              f"illegal-geometry@{ply}", "-o", str(out)])
    assert run(args) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    header = eventlog.read_header(lines)
    assert header is not None
    simulator = header.extra["simulator"]
    assert simulator["procedures"] is True and simulator["corrections"] == [f"illegal-geometry@{ply}"]
    assert [ply, "ILLEGAL_MOVE/GEOMETRY"] in simulator["expected_codes"]
    with pytest.raises(SystemExit):
        parser.parse_args(["--random", "--correct", "castle@3"])
