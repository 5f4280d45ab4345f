"""Per-move steps that walked the whole game (issue 12, growth) give what the walk gave.

* ``MadeMoves.law_moves`` (asked at every press: ``ClockReadings.check_period``, the press's period check) keeps
  its count record by record instead of counting the whole record each time: at every step of simulated games
  with retractions, takebacks, illegal moves and corrections, it equals :func:`completed_moves` of the record.
* ``Recognition.earlier_position`` searches the keys at C speed instead of a Python loop over every ply: at every
  step it equals the loop it replaced, for every depth the engine asks.

Each comparison has a control: a wrong stand-in (a count that never looks back at records already counted; a
search that also takes the current ply) fails the same comparison.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import cast

import chess

from boardd.core.engine import Engine
from boardd.core.engine.common import _TAKEBACK_DEPTH
from boardd.core.engine.made_moves import MadeMoves, completed_moves
from boardd.core.engine.recognition import Recognition
from boardd.core.events import Event, GameInfo
from boardd.core.settings import RulesConfig
from drivers.sim import Injection, InjectionKind, random_game, simulate_game

_KINDS = list(InjectionKind)


def _games() -> Iterator[tuple[str, list[Event]]]:
    """Simulated games at a known time control (the period check asks ``law_moves``), each with an injection
    (retractions, takebacks, illegal moves and their corrections, released moves taken back)."""
    for seed in range(len(_KINDS) * 2):
        kind = _KINDS[seed % len(_KINDS)]
        game = random_game(3100 + seed, max_plies=60)
        profile = ("clean", "casual", "clumsy")[seed % 3]
        try:
            events = simulate_game(game, seed=seed, profile=profile, injections=[Injection(kind, 6 + seed % 7)],
                                   time_control="180+2").events
        except Exception:   # an injection that does not fit this game: the game without it
            events = simulate_game(game, seed=seed, profile=profile, time_control="180+2").events
        yield f"{seed}:{kind.value}", events


def _steps(check: Callable[[Engine], None]) -> int:
    """Feed every game, calling *check* after every event and timer; the number of checks."""
    checks = 0
    for _, events in _games():
        engine = Engine(RulesConfig(), GameInfo(time_control="180+2"))
        for event in events:
            while (deadline := engine.next_deadline()) is not None and deadline < event.at:
                engine.advance(deadline)
                check(engine)
                checks += 1
            engine.feed(event)
            check(engine)
            checks += 1
    return checks


# --- law_moves --------------------------------------------------------------------------------------------------


def _law_moves_mismatches(law_moves: Callable[[MadeMoves, chess.Color], int]) -> list[str]:
    mismatches: list[str] = []

    def check(engine: Engine) -> None:
        for color in (chess.WHITE, chess.BLACK):
            expected = engine.g.base_moves[color] + completed_moves(engine.g.records, color)
            got = law_moves(engine.made_moves, color)
            if got != expected:
                mismatches.append(f"ply {len(engine.g.records)} {color}: {got} != {expected}")

    assert _steps(check) > 5000
    return mismatches


def test_law_moves_equals_counting_the_record() -> None:
    assert _law_moves_mismatches(MadeMoves.law_moves) == []


def test_law_moves_control_a_count_that_never_looks_back_fails() -> None:
    # a stand-in that counts only the records appended since it last counted: it misses the completion of a
    # move already counted (the press sets completed_at on the last record) and every retraction
    seen: dict[int, tuple[int, dict[bool, int]]] = {}

    def appended_only(made: MadeMoves, color: chess.Color) -> int:
        length, counts = seen.get(id(made), (0, {chess.WHITE: 0, chess.BLACK: 0}))
        for record in made.g.records[length:]:
            if record.completed_at is not None:
                counts[record.side] += 1
        seen[id(made)] = (len(made.g.records), counts)
        return made.g.base_moves[color] + counts[color]

    assert _law_moves_mismatches(appended_only) != []


# --- earlier_position -------------------------------------------------------------------------------------------


def _walk(recognition: Recognition, depth: int | None) -> int | None:
    """The loop ``earlier_position`` was (main at e7d0d95): every ply's key, latest first."""
    key = recognition.g.phys.key()
    keys = recognition.g.keys
    last = len(keys) - 1
    for ply in range(last - 1, -1 if depth is None else max(-1, last - depth - 1), -1):
        if keys[ply] == key:
            return ply
    return None


def _earlier_mismatches(search: Callable[[Recognition, int | None], int | None]) -> tuple[list[str], int]:
    mismatches: list[str] = []
    found = 0

    def check(engine: Engine) -> None:
        nonlocal found
        for depth in (None, _TAKEBACK_DEPTH, 0, 1, 2, 3):
            expected = _walk(engine.recognition, depth)
            got = search(engine.recognition, depth)
            found += expected is not None
            if got != expected:
                mismatches.append(f"ply {len(engine.g.records)} depth {depth}: {got} != {expected}")

    _steps(check)
    return mismatches, found


def test_earlier_position_equals_the_walk() -> None:
    mismatches, found = _earlier_mismatches(Recognition.earlier_position)
    assert mismatches == []
    assert found > 10   # the board showed earlier positions (takebacks, a move made back)


def _random_searches(search: Callable[[Recognition, int | None], int | None]) -> list[str]:
    """Both searches on random key lists with repeats (a position that stood several times, the current one
    among them or not), for every depth."""
    rng = random.Random(12)
    mismatches = []
    for _ in range(3000):
        keys = [(rng.randrange(4),) for _ in range(rng.randrange(1, 14))]
        key = (rng.randrange(5),)
        phys = SimpleNamespace(key=lambda k=key: k)
        fake = cast(Recognition, SimpleNamespace(g=SimpleNamespace(keys=keys, phys=phys)))
        for depth in (None, *range(16)):
            got, expected = search(fake, depth), _walk(fake, depth)
            if got != expected:
                mismatches.append(f"{keys} {key} depth {depth}: {got} != {expected}")
    return mismatches


def test_earlier_position_equals_the_walk_on_random_keys() -> None:
    assert _random_searches(Recognition.earlier_position) == []


def test_earlier_position_control_the_earliest_match_fails() -> None:
    def earliest(recognition: Recognition, depth: int | None) -> int | None:
        keys, key = recognition.g.keys, recognition.g.phys.key()
        low = 0 if depth is None else max(0, len(keys) - 1 - depth)
        return next((ply for ply in range(low, len(keys) - 1) if keys[ply] == key), None)

    assert _random_searches(earliest) != []


def test_earlier_position_control_a_search_that_takes_the_current_ply_fails() -> None:
    def with_current(recognition: Recognition, depth: int | None) -> int | None:
        keys, key = recognition.g.keys, recognition.g.phys.key()
        low = 0 if depth is None else max(0, len(keys) - 1 - depth)
        return next((ply for ply in range(len(keys) - 1, low - 1, -1) if keys[ply] == key), None)

    mismatches, _ = _earlier_mismatches(with_current)
    assert mismatches != []
