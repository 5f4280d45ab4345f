"""Issue 12, ninth round: what the square change now computes once instead of at every call, against what it
computed before.

* ``PositionIndex.squares`` read off the key's bitboards (``recognizer._squares_of``) against python-chess's
  ``piece_at`` of every square, over many positions: standard and Chess960 games, positions in check, with an en
  passant square, with a promotion to make; a control: a wrong table is caught by the same comparison.
* ``MadeMoves._after_unsettled``: the index of the position after an unsettled candidate, made once per candidate
  and reused at the next changes, against an index made afresh at every call (as before): two engines fed in
  lockstep (the simulated streams and the device captures of ``test_quiet_state``), outputs, deadlines and the deep
  state snapshot equal after every event and timer; a control: a cache that outlives its candidate is caught.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.made_moves import MadeMoves
from boardd.core.events import Event, GameInfo
from boardd.core.outputs import Output
from boardd.core.recognizer import Key, PositionIndex, _squares_of, board_key
from tests.core.test_quiet_state import _SIM, _capture_streams, snapshot


def _positions(seed: int, games: int, *, chess960: bool) -> Iterator[chess.Board]:
    """Every position of *games* random games (moves drawn with a bias to captures, checks and promotions)."""
    rng = random.Random(seed)
    for _ in range(games):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        for _ply in range(160):
            yield board.copy(stack=False)
            moves = list(board.legal_moves)
            if not moves or board.is_insufficient_material():
                break
            sharp = [m for m in moves if m.promotion or board.is_capture(m) or board.gives_check(m)]
            board.push(rng.choice(sharp if sharp and rng.random() < 0.5 else moves))


def _table_errors(squares_of: Callable[[Key], list[chess.Piece | None]], boards: list[chess.Board]) -> int:
    """How many squares of *boards* the table gets wrong, against python-chess."""
    return sum(table != truth for board in boards
               for table, truth in zip(squares_of(board_key(board)), [board.piece_at(sq) for sq in chess.SQUARES],
                                       strict=True))


_BOARDS = [*_positions(12, 30, chess960=False), *_positions(13, 30, chess960=True)]


def test_the_positions_cover_the_hard_cases() -> None:
    assert len(_BOARDS) > 3000
    assert sum(board.is_check() for board in _BOARDS) > 100
    assert sum(board.has_legal_en_passant() for board in _BOARDS) > 10
    assert sum(any(m.promotion for m in board.legal_moves) for board in _BOARDS) > 20
    assert sum(board.chess960 for board in _BOARDS) > 1000


def test_official_squares_equal_python_chess() -> None:
    assert _table_errors(_squares_of, _BOARDS) == 0
    for board in _BOARDS[::7]:
        index = PositionIndex(board)
        assert index.squares == [board.piece_at(sq) for sq in chess.SQUARES]
        assert [index.piece_at(sq) for sq in chess.SQUARES] == index.squares


def test_a_wrong_square_table_is_caught() -> None:
    def colours_swapped_on_h8(key: Key) -> list[chess.Piece | None]:
        squares = _squares_of(key)
        piece = squares[chess.H8]
        if piece is not None:
            squares[chess.H8] = chess.Piece(piece.piece_type, not piece.color)
        return squares

    def promoted_pawn_forgotten(key: Key) -> list[chess.Piece | None]:
        squares = _squares_of(key)
        return [None if p is not None and p.piece_type == chess.QUEEN and chess.square_rank(sq) in (0, 7)
                and sq not in (chess.D1, chess.D8) else p for sq, p in enumerate(squares)]

    assert _table_errors(colours_swapped_on_h8, _BOARDS) > 0
    assert _table_errors(promoted_pawn_forgotten, _BOARDS) > 0


def _fresh_after(made: MadeMoves) -> None:
    """The former way: the index after the unsettled candidate made afresh at every call."""
    def after_unsettled(unsettled: tuple[Any, str, bool]) -> PositionIndex:
        after = made.g.board.copy(stack=False)
        after.push(unsettled[0].move)
        return PositionIndex(after)

    made._after_unsettled = after_unsettled  # type: ignore[method-assign]


def _cache_outlives_its_candidate(made: MadeMoves) -> None:
    """A wrong cache: the first index made is kept for every later candidate."""
    original = made._after_unsettled

    def after_unsettled(unsettled: tuple[Any, str, bool]) -> PositionIndex:
        cached = made._unsettled_after
        return cached[1] if cached is not None else original(unsettled)

    made._after_unsettled = after_unsettled  # type: ignore[method-assign]


def _lockstep(events: list[Event], game: GameInfo | None, reference: Callable[[MadeMoves], None]) -> int:
    """*events* fed to an engine as it is and to one whose made-moves room is changed by *reference*; outputs, next
    deadline and state snapshot equal after every event and timer. Returns the events fed."""
    engines = [Engine(game=game) if game is not None else Engine() for _ in range(2)]
    tested, ref = engines
    reference(ref.made_moves)
    reset = ref._reset

    def reset_changed(*args: Any, **kwargs: Any) -> None:
        reset(*args, **kwargs)  # (a NewGame makes fresh rooms: changed again)
        reference(ref.made_moves)

    ref._reset = reset_changed  # type: ignore[method-assign]

    def state(engine: Engine) -> Any:
        """The snapshot without the cache itself (the reference has none) and without the reference's replaced
        method: everything else must be equal."""
        made = engine.made_moves
        cached = made._unsettled_after
        replaced = vars(made).pop("_after_unsettled", None)
        made._unsettled_after = None
        try:
            return snapshot(engine)
        finally:
            made._unsettled_after = cached
            if replaced is not None:
                made._after_unsettled = replaced  # type: ignore[method-assign]

    def same(a: list[Output], b: list[Output], what: str) -> None:
        assert a == b, f"outputs differ at {what}"
        assert tested.next_deadline() == ref.next_deadline(), f"next deadline differs at {what}"
        assert state(tested) == state(ref), f"state differs at {what}"

    for number, event in enumerate(events):
        while (deadline := ref.next_deadline()) is not None and deadline < event.at:
            same(tested.advance(deadline), ref.advance(deadline), f"timer {deadline} before event {number}")
        same(tested.feed(event), ref.feed(event), f"event {number} {event!r}")
    while (deadline := ref.next_deadline()) is not None:
        same(tested.advance(deadline), ref.advance(deadline), f"timer {deadline} at the end")
    return len(events)


_STREAMS = [*_SIM, *_capture_streams()]


@pytest.mark.parametrize(("name", "game", "events"), _STREAMS, ids=[s[0] for s in _STREAMS])
def test_the_cached_after_index_equals_a_fresh_one(name: str, game: GameInfo | None, events: list[Event]) -> None:
    assert _lockstep(events, game, _fresh_after) > 50, name


def _checked_calls(spoil: Callable[[MadeMoves], None] | None = None) -> tuple[int, int]:
    """Every stream fed to an engine (*spoil*: its made-moves room made wrong); at every call of
    ``_after_unsettled`` the index it returns is compared with one made afresh from the board (the former code):
    the same position (FEN, Chess960, key) and the same class of the physical board. Returns the calls that reused
    a kept index and the calls that differed."""
    reused = differed = 0

    def check(made: MadeMoves) -> None:
        if spoil is not None:
            spoil(made)
        kept = made._after_unsettled

        def after_unsettled(unsettled: tuple[Any, str, bool]) -> PositionIndex:
            nonlocal reused, differed
            cached = made._unsettled_after
            reused += cached is not None and cached[0] is unsettled
            index = kept(unsettled)
            after = made.g.board.copy(stack=False)
            after.push(unsettled[0].move)
            fresh = PositionIndex(after)
            differed += (index.board.fen(), index.board.chess960, index.key, index.classify(made.g.phys)) != (
                fresh.board.fen(), fresh.board.chess960, fresh.key, fresh.classify(made.g.phys))
            return index

        made._after_unsettled = after_unsettled  # type: ignore[method-assign]

    for _name, game, events in _STREAMS:
        engine = Engine(game=game) if game is not None else Engine()
        check(engine.made_moves)
        reset = engine._reset

        def reset_checked(*args: Any, _reset: Any = reset, _engine: Engine = engine, **kwargs: Any) -> None:
            _reset(*args, **kwargs)
            check(_engine.made_moves)

        engine._reset = reset_checked  # type: ignore[method-assign]
        for event in events:
            while (deadline := engine.next_deadline()) is not None and deadline < event.at:
                engine.advance(deadline)
            engine.feed(event)
    return reused, differed


def test_every_kept_index_is_the_fresh_one() -> None:
    """At every call: the kept index is the one the former code made; the streams do reuse it (not idle)."""
    reused, differed = _checked_calls()
    assert differed == 0
    assert reused > 100


def test_a_cache_that_outlives_its_candidate_is_caught() -> None:
    """Control: keeping the first index made for every later candidate is seen by the same per-call check. (The
    lockstep above alone does not see it on these streams: a reply made before its move settled is rare in them,
    and for the other calls a wrong position answers "no" as the right one does.)"""
    _reused, differed = _checked_calls(_cache_outlives_its_candidate)
    assert differed > 100
