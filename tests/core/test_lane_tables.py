"""Issue 12, ninth and eleventh rounds: what the square change now computes once, or from the bitboards, instead
of at every call, against what it computed before.

* ``PositionIndex.squares`` read off the key's bitboards (``recognizer._squares_of``) against python-chess's
  ``piece_at`` of every square, over many positions: standard and Chess960 games, positions in check, with an en
  passant square, with a promotion to make; a control: a wrong table is caught by the same comparison.
* A candidate dropped before it settled (``MadeMoves.unsettled``): does the board show the position after its move,
  or a legal reply to it? ``MadeMoves._after_shows`` answers from the placement key after the move
  (``recognizer.key_after``, from the bitboards without a push: the pre-filter) while that key already says no, and
  only then from ``MadeMoves._after_unsettled``, the index of the position after the move made once per candidate
  and reused. The former way: that index made afresh at every call and its ``classify``. Two engines fed in
  lockstep (the simulated streams, the device captures of ``test_quiet_state`` and games of the blitz race):
  outputs, deadlines and the deep state snapshot equal after every event and timer. And at every call in the
  streams: the pre-filter's key is the key of the position pushed afresh, the answer is the fresh index's, and the
  kept index is the fresh one. Controls: a key that outlives its candidate, a key that leaves a captured piece on
  its square and an index that outlives its candidate are each caught by the same per-call check.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from typing import Any

import chess
import pytest

from boardd.core.engine import Engine, made_moves
from boardd.core.engine.made_moves import MadeMoves
from boardd.core.events import Event, GameInfo
from boardd.core.outputs import Output
from boardd.core.recognizer import DiffClass, Key, PositionIndex, _squares_of, board_key
from boardd.core.recognizer import key_after as recognizer_key_after
from drivers.sim import PROFILES, random_game, simulate_game
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
    """The former way: the index after the unsettled candidate made afresh at every call, and its ``classify`` asked
    whether the board shows that position or a legal move from it (no pre-filter, no kept index)."""
    def after_unsettled(unsettled: tuple[Any, str, bool]) -> PositionIndex:
        after = made.g.board.copy(stack=False)
        after.push(unsettled[0].move)
        return PositionIndex(after)

    def after_shows(unsettled: tuple[Any, str, bool], *, legal: bool) -> bool:
        return after_unsettled(unsettled).classify(made.g.phys).kind is (DiffClass.LEGAL if legal else DiffClass.NONE)

    made._after_unsettled = after_unsettled  # type: ignore[method-assign]
    made._after_shows = after_shows  # type: ignore[method-assign]


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
        methods: everything else must be equal."""
        made = engine.made_moves
        cached = made._unsettled_after
        replaced: dict[str, Any] = {name: vars(made).pop(name) for name in ("_after_unsettled", "_after_shows")
                                    if name in vars(made)}
        made._unsettled_after = None
        try:
            return snapshot(engine)
        finally:
            made._unsettled_after = cached
            vars(made).update(replaced)

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


def _blitz_streams() -> Iterator[tuple[str, GameInfo | None, list[Event]]]:
    """Games without a clock, quick players, every reply started from 0.15 s after the release (inside ``T_settle``:
    the blitz race of rules-spec §3.4.1, ``simulate_game``'s *reply_from*), in every profile, Chess960 every third
    game, the Laws' procedures on every other: the opponent's reply captures or lifts the piece just set down
    before the move settled, and the board then shows a legal reply from the position after it, or that position
    again (the piece touched and put back): the calls of ``_after_shows`` that answer yes, which the other streams
    never give."""
    index = 0
    for profile in PROFILES:
        for _ in range(6):
            seed = 7000 + index
            game = random_game(seed, max_plies=80, chess960=index % 3 == 2)
            sim = simulate_game(game, seed=seed, profile=profile, clock=False, reply_from=0.15, think_median=0.6,
                                procedures=index % 2 == 1)
            index += 1
            yield f"blitz/{profile}/{seed}", None, list(sim.events)


_STREAMS = [*_SIM, *_capture_streams(), *_blitz_streams()]


@pytest.mark.parametrize(("name", "game", "events"), _STREAMS, ids=[s[0] for s in _STREAMS])
def test_the_prefilter_and_kept_index_equal_a_fresh_index(name: str, game: GameInfo | None,
                                                          events: list[Event]) -> None:
    assert _lockstep(events, game, _fresh_after) > 50, name


@dataclasses.dataclass
class _Calls:
    """What the per-call check saw over all the streams."""

    #: calls of ``MadeMoves._after_shows``, and of them: the board showed the position after the move or a legal
    #: reply (the fresh index's answer yes), the pre-filter had a key (a plain move or capture), it answered from
    #: that key alone (no index made nor reused), the key was not the fresh position's, the answer not the fresh one
    shows: int = 0
    shown: int = 0
    keyed: int = 0
    prefiltered: int = 0
    keys_differed: int = 0
    answers_differed: int = 0
    #: calls of ``MadeMoves._after_unsettled`` (from ``_after_shows`` when the key does not say no, and from
    #: ``reply_under_way``), of them those that returned the kept index, and those whose index was not the fresh one
    indexes: int = 0
    reused: int = 0
    indexes_differed: int = 0


_KeyAfter = Callable[[chess.Board, chess.Move], Key | None]


def _checked_calls(monkeypatch: pytest.MonkeyPatch, spoil_key: Callable[[_KeyAfter], _KeyAfter] | None = None,
                   spoil_index: Callable[[MadeMoves], None] | None = None) -> _Calls:
    """Every stream fed to an engine (*spoil_key*: the pre-filter's ``key_after`` made wrong; *spoil_index*: the
    made-moves room made wrong). At every call of ``_after_shows`` the key the pre-filter used is compared with the
    key of the position after the move pushed afresh, and the answer with the fresh index's ``classify`` (the former
    code); at every call of ``_after_unsettled`` the index returned with one made afresh: the same position (FEN,
    Chess960, key) and the same class of the physical board."""
    seen = _Calls()
    used: list[Key | None] = []
    key_after = spoil_key(recognizer_key_after) if spoil_key is not None else recognizer_key_after

    def recorded_key_after(board: chess.Board, move: chess.Move) -> Key | None:
        key = key_after(board, move)
        used.append(key)
        return key

    monkeypatch.setattr(made_moves, "key_after", recorded_key_after)

    def fresh(made: MadeMoves, unsettled: tuple[Any, str, bool]) -> PositionIndex:
        after = made.g.board.copy(stack=False)
        after.push(unsettled[0].move)
        return PositionIndex(after)

    def check(made: MadeMoves) -> None:
        if spoil_index is not None:
            spoil_index(made)
        kept_index, kept_shows = made._after_unsettled, made._after_shows

        def after_unsettled(unsettled: tuple[Any, str, bool]) -> PositionIndex:
            cached = made._unsettled_after
            seen.indexes += 1
            seen.reused += cached is not None and cached[0] is unsettled
            index = kept_index(unsettled)
            other = fresh(made, unsettled)
            seen.indexes_differed += (index.board.fen(), index.board.chess960, index.key, index.classify(made.g.phys)
                                      ) != (other.board.fen(), other.board.chess960, other.key,
                                            other.classify(made.g.phys))
            return index

        def after_shows(unsettled: tuple[Any, str, bool], *, legal: bool) -> bool:
            used.clear()
            indexes = seen.indexes
            answer = kept_shows(unsettled, legal=legal)
            other = fresh(made, unsettled)
            truth = other.classify(made.g.phys).kind is (DiffClass.LEGAL if legal else DiffClass.NONE)
            seen.shows += 1
            seen.shown += truth
            seen.answers_differed += answer != truth
            if used and used[0] is not None:
                seen.keyed += 1
                seen.prefiltered += seen.indexes == indexes
                seen.keys_differed += used[0] != other.key
            return answer

        made._after_unsettled = after_unsettled  # type: ignore[method-assign]
        made._after_shows = after_shows  # type: ignore[method-assign]

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
    return seen


def test_every_prefilter_key_and_kept_index_is_the_fresh_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """At every call: the pre-filter's key is the fresh position's, the answer the fresh index's, a kept index the
    fresh one; the streams do ask (not idle), mostly answered by the key alone, and the answer is sometimes yes."""
    seen = _checked_calls(monkeypatch)
    assert (seen.keys_differed, seen.answers_differed, seen.indexes_differed) == (0, 0, 0), seen
    assert seen.shows > 1000 and seen.keyed > 1000 and seen.prefiltered > 1000, seen
    assert seen.shown > 10 and seen.indexes > 20 and seen.reused > 5, seen


def _key_outlives_its_candidate(key_after: _KeyAfter) -> _KeyAfter:
    """A wrong pre-filter: the first key given is kept for every later candidate."""
    first: list[Key] = []

    def stale(board: chess.Board, move: chess.Move) -> Key | None:
        key = key_after(board, move)
        if key is not None and not first:
            first.append(key)
        return first[0] if key is not None else None

    return stale


def _capture_leaves_its_victim(key_after: _KeyAfter) -> _KeyAfter:
    """A wrong pre-filter: a capture's victim is left on its square (its colour's bit not cleared)."""
    def victim_left(board: chess.Board, move: chess.Move) -> Key | None:
        key = key_after(board, move)
        if key is None or not board.occupied_co[not board.turn] & chess.BB_SQUARES[move.to_square]:
            return key
        spoiled = list(key)
        spoiled[1 if board.turn == chess.WHITE else 0] |= chess.BB_SQUARES[move.to_square]
        return (spoiled[0], spoiled[1], spoiled[2], spoiled[3], spoiled[4], spoiled[5], spoiled[6], spoiled[7])

    return victim_left


def _index_outlives_its_candidate(made: MadeMoves) -> None:
    """A wrong cache: the first index made is kept for every later candidate."""
    original = made._after_unsettled

    def after_unsettled(unsettled: tuple[Any, str, bool]) -> PositionIndex:
        cached = made._unsettled_after
        return cached[1] if cached is not None else original(unsettled)

    made._after_unsettled = after_unsettled  # type: ignore[method-assign]


def _mover_read_as_the_opponent(key_after: _KeyAfter) -> _KeyAfter:
    """A wrong pre-filter: the piece moved is given the colour of the side not to move (the turn read backwards)."""
    def colour_swapped(board: chess.Board, move: chess.Move) -> Key | None:
        key = key_after(board, move)
        if key is None:
            return None
        bit = chess.BB_SQUARES[move.to_square]
        return (key[0] ^ bit, key[1] ^ bit, key[2], key[3], key[4], key[5], key[6], key[7])

    return colour_swapped


@pytest.mark.parametrize(("spoil", "at_least"), [(_key_outlives_its_candidate, 500),
                                                 (_mover_read_as_the_opponent, 500),
                                                 (_capture_leaves_its_victim, 1)],
                         ids=["key-outlives-its-candidate", "mover-read-as-the-opponent", "capture-leaves-its-victim"])
def test_a_wrong_prefilter_key_is_caught(monkeypatch: pytest.MonkeyPatch, spoil: Callable[[_KeyAfter], _KeyAfter],
                                         at_least: int) -> None:
    """Control: a spoiled key in the pre-filter is seen by the same per-call check, at every call that uses it (a
    capture is rare among the candidates dropped unsettled: 5 calls in these streams). A key that outlives its
    candidate also gives wrong answers: it hides the replies made before the move settled."""
    seen = _checked_calls(monkeypatch, spoil_key=spoil)
    assert seen.keys_differed >= at_least, seen
    if spoil is _key_outlives_its_candidate:
        assert seen.answers_differed > 5, seen


def test_an_index_that_outlives_its_candidate_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: keeping the first index made for every later candidate is seen by the same per-call check. (The
    pre-filter answers most calls without the index: the calls that reach it are those where the board may show
    the position after the move or a reply, the blitz race's above all.)"""
    seen = _checked_calls(monkeypatch, spoil_index=_index_outlives_its_candidate)
    assert seen.indexes_differed > 10, seen
