"""The quiet-state guards of the square change (issue 12): an engine with them and one forced onto the full path
(``Engine.quiet = False``) give the same outputs and the same complete internal state after every event.

The streams: seeded simulated games in every handling profile, each injection kind (the Laws' procedures on and
off), Chess960 among them, and the checked-in device captures. The state: a deep snapshot of the ``Game`` and of
every room (the lazily filled caches of a ``PositionIndex`` and a ``PhysicalBoard``'s key tuple left out: they are
what their position gives, computed when first asked). Controls: a guard that admits one state too many and a
quiet path that skips one state update are seen by the comparison.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.engine.modes import Machine
from boardd.core.engine.state import Game
from boardd.core.events import Event, GameInfo
from boardd.core.outputs import Output
from boardd.core.recognizer import PhysicalBoard, PositionIndex
from drivers.capture import events_from_capture
from drivers.sim import (
    NO_CLOCK_KINDS,
    PROFILES,
    Injection,
    InjectionKind,
    moved_twice_candidates,
    random_game,
    seeded_injection,
    simulate_game,
)

_CAPTURES = Path(__file__).resolve().parents[1] / "drivers" / "captures"
_ENGINE_OWN = ("_last_t", "_backwards", "_backwards_reported", "_held_back", "_queue", "stepwise")


def _snap(value: Any, seen: dict[int, int]) -> Any:
    """A comparable deep copy of *value* (objects already seen in this snapshot by their order of first sight)."""
    if value is None or isinstance(value, bool | int | float | str | bytes | enum.Enum):
        return value
    if isinstance(value, chess.Piece | chess.Move):
        return repr(value)
    if isinstance(value, chess.Board):
        return ("Board", value.fen(), value.chess960, tuple(m.uci() for m in value.move_stack), len(value._stack))
    if isinstance(value, chess.BaseBoard):
        return ("BaseBoard", value.board_fen())
    if isinstance(value, PositionIndex):  # (its caches are what its position gives: left out)
        return ("PositionIndex", _snap(value.board, seen), value.key)
    if isinstance(value, PhysicalBoard):  # (the key tuple: a cache of _key)
        return ("PhysicalBoard", _snap(value.squares, seen), value.markers, tuple(value._key))
    if isinstance(value, Machine):
        return ("Machine", value.state)
    if isinstance(value, list | tuple):
        return (type(value).__name__, *(_snap(v, seen) for v in value))
    if isinstance(value, set | frozenset):
        return ("set", *sorted(repr(_snap(v, seen)) for v in value))
    if isinstance(value, dict):
        return ("dict", *((_snap(k, seen), _snap(v, seen)) for k, v in value.items()))
    if id(value) in seen:
        return ("seen", seen[id(value)])
    seen[id(value)] = len(seen)
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, *((f.name, _snap(getattr(value, f.name), seen))
                                        for f in dataclasses.fields(value)))
    if callable(value) and not hasattr(value, "__dict__"):
        return ("callable", getattr(value, "__qualname__", repr(value)))
    fields = dict(vars(value)) if hasattr(value, "__dict__") else {}
    for slot in getattr(type(value), "__slots__", ()):
        if hasattr(value, slot):
            fields[slot] = getattr(value, slot)
    return (type(value).__name__, *((k, _snap(v, seen)) for k, v in sorted(fields.items())))


def snapshot(engine: Engine) -> Any:
    """The engine's complete state: its Game, every room (without its links to the engine, the Game, the rules)
    and the façade's own fields."""
    seen: dict[int, int] = {}
    rooms = []
    for name, room in sorted(vars(engine).items()):
        if isinstance(room, Game) or name in _ENGINE_OWN or name in ("rules", "quiet") or not hasattr(room, "e"):
            continue
        fields = {k: v for k, v in vars(room).items() if k not in ("e", "g", "rules")}
        rooms.append((name, _snap(fields, seen)))
    own = tuple((name, _snap(getattr(engine, name), seen)) for name in _ENGINE_OWN)
    return (_snap(engine.g, seen), tuple(rooms), own)


def _sim_streams(count_per_kind: int = 1) -> Iterator[tuple[str, GameInfo | None, list[Event]]]:
    """Every profile with every injection kind (and none), Chess960 every third game, the Laws' procedures on
    every other."""
    index = 0
    for kind in (None, *InjectionKind):
        for profile in PROFILES:
            for _ in range(count_per_kind):
                seed = 3000 + index
                game = random_game(seed, max_plies=50, chess960=index % 3 == 2)
                sim = simulate_game(game, seed=seed, profile=profile, injections=seeded_injection(kind, game, seed),
                                    procedures=index % 2 == 1)
                index += 1
                yield f"{profile}/{kind.value if kind else 'none'}/{seed}", None, list(sim.events)


def _noclock_streams() -> Iterator[tuple[str, GameInfo | None, list[Event]]]:
    """Games without a clock (each move completed by the reply): none, every hands-only injection, and the same
    player moving twice before the reply, in every profile, Chess960 every third game."""
    index = 0
    for kind in (None, *sorted(NO_CLOCK_KINDS, key=lambda k: k.value), "moved-twice"):
        for profile in PROFILES:
            seed = 5000 + index
            game = random_game(seed, max_plies=50, chess960=index % 3 == 2)
            index += 1
            twice = None
            injections: list[Injection] = []
            if kind == "moved-twice":
                board = game.board()
                for ply, move in enumerate(game.mainline_moves(), 1):
                    if 3 <= ply < 45 and moved_twice_candidates(board, move):
                        twice = ply
                        break
                    board.push(move)
                if twice is None:
                    continue
            elif isinstance(kind, InjectionKind):
                injections = seeded_injection(kind, game, seed)
            sim = simulate_game(game, seed=seed, profile=profile, injections=injections, clock=False,
                                moved_twice=twice, procedures=index % 2 == 1)
            label = kind.value if isinstance(kind, InjectionKind) else (kind or "none")
            yield f"noclock/{profile}/{label}/{seed}", None, list(sim.events)


def _capture_streams() -> Iterator[tuple[str, GameInfo | None, list[Event]]]:
    for capture in sorted(_CAPTURES.iterdir()):
        if capture.suffix in (".bin", ".jsonl"):
            yield (f"capture/{capture.name}", GameInfo(time_control="?", variant="auto"),
                   list(events_from_capture(capture, "dgt")))


def _lockstep(events: list[Event], game: GameInfo | None,
              spoil: Callable[[Engine], None] | None = None) -> int:
    """Feed *events* to an engine with the quiet guards and to one on the full path; after every event and timer
    the outputs, the next deadline and the state snapshot must be equal (*spoil*: made wrong on purpose, the
    quiet engine's rooms after every reset). Returns the events fed."""
    quiet = Engine(game=game) if game is not None else Engine()
    full = Engine(game=game) if game is not None else Engine()
    full.quiet = False
    if spoil is not None:
        spoil(quiet)
        reset = quiet._reset

        def reset_spoiled(*args: Any, **kwargs: Any) -> None:  # (a NewGame makes fresh rooms: spoiled again)
            reset(*args, **kwargs)
            spoil(quiet)

        quiet._reset = reset_spoiled  # type: ignore[method-assign]
    steps = 0

    def same(a: list[Output], b: list[Output], what: str) -> None:
        assert a == b, f"outputs differ at {what}"
        assert quiet.next_deadline() == full.next_deadline(), f"next deadline differs at {what}"
        assert snapshot(quiet) == snapshot(full), f"state differs at {what}"

    for number, event in enumerate(events):
        while (deadline := full.next_deadline()) is not None and deadline < event.at:
            same(quiet.advance(deadline), full.advance(deadline), f"timer {deadline} before event {number}")
        same(quiet.feed(event), full.feed(event), f"event {number} {event!r}")
        steps += 1
    while (deadline := full.next_deadline()) is not None:
        same(quiet.advance(deadline), full.advance(deadline), f"timer {deadline} at the end")
    assert quiet.state == full.state
    return steps


_SIM = list(_sim_streams()) + list(_noclock_streams())


@pytest.mark.parametrize(("name", "game", "events"), _SIM, ids=[s[0] for s in _SIM])
def test_quiet_equals_full_on_simulated_games(name: str, game: GameInfo | None, events: list[Event]) -> None:
    assert _lockstep(events, game) == len(events) > 50, name


def test_quiet_equals_full_on_the_captures() -> None:
    streams = list(_capture_streams())
    assert len(streams) >= 4
    for name, game, events in streams:
        assert _lockstep(events, game) > 200, name


def test_snapshot_sees_every_part_of_the_state() -> None:
    """The snapshot is not blind: a change of a segment list, a room's field or a position shows in it."""
    engine = Engine()
    before = snapshot(engine)
    engine.g.seg_lifts.append((1.0, chess.E2, chess.Piece(chess.PAWN, chess.WHITE)))
    assert snapshot(engine) != before
    engine.g.seg_lifts.clear()
    assert snapshot(engine) == before
    engine.recognition.illegal_seen = (0, 1.0, engine.g.last_diff, PhysicalBoard(), None)
    assert snapshot(engine) != before
    engine.recognition.illegal_seen = None
    engine.g.phys.set(chess.E2, None)
    assert snapshot(engine) != before


def _castle_guard_too_wide(engine: Engine) -> None:
    """A wrong guard: track_castle_king skipped whenever no king is on its castling square (the PARTIAL
    condition left out: a king put there is then never noticed)."""
    recognition = engine.recognition
    original = recognition.track_castle_king

    def track(diff: Any, at: float, index: PositionIndex) -> None:
        if engine.g.castle_king is None:
            return
        original(diff, at, index)

    recognition.track_castle_king = track  # type: ignore[method-assign]


def _started_not_noted(engine: Engine) -> None:
    """A wrong quiet path: the first touch of the side to move's segment not noted (``opp_started`` left
    unset: one state update skipped)."""
    whose = engine.whose_change
    original = whose.note_started

    def note(outs: list[Output], side: chess.Color, at: float) -> None:
        if engine.g.records and engine.g.press is None:
            return
        original(outs, side, at)

    whose.note_started = note  # type: ignore[method-assign]


def _lift_check_skipped(engine: Engine) -> None:
    """A wrong guard: the two-hands lift check skipped for every lift of the side to move (not only the
    segment's first)."""
    engine.two_hands.check_two_hands_lift = lambda outs, at, sq, piece: None  # type: ignore[method-assign]


@pytest.mark.parametrize("spoil", [_castle_guard_too_wide, _started_not_noted, _lift_check_skipped])
def test_a_wrong_quiet_path_is_seen(spoil: Callable[[Engine], None]) -> None:
    for _name, game, events in _SIM:
        try:
            _lockstep(events, game, spoil)
        except AssertionError:
            return  # seen
    pytest.fail("a wrong quiet path went unnoticed")
