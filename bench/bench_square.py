"""The square change alone: instructions and where the time goes (issue 12, sixth round).

Run: ``python -m bench.bench_square [--games N] {run,sample,ops}``

The events of ``bench.bench_core``'s first N games (``casual``, seed = game index) are simulated
first; each game is fed to a fresh :class:`~boardd.core.engine.Engine`, the due timers fired before
every event as ``bench.bench_core`` does. Every square change goes through ``itertools.starmap``, so
that callgrind counts only inside those ``Engine.feed`` calls::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no --toggle-collect=starmap_next \\
        .venv/bin/python -m bench.bench_square --games 6 run

(the instructions collected, divided by the square changes printed, are a square change's cost;
run it with another checkout first on ``sys.path`` to compare). ``run --only in_hand|legal|rest`` counts one
class of square change (a lift, a legal placement, the others), each change's class learnt by a first pass over
the same events. ``sample`` takes CPU-time samples
(``SIGPROF``) only while a square change is fed and prints each function's share of them, the
functions it calls included: the proportions, not the instruction counts (a sample lands more
often at a function's entry, so shares of small functions are overstated).

``ops [--only ...]`` counts the Python bytecodes executed while each counted square change is fed (a trace
function with opcode events): per change, for every function its own and its inclusive count (the functions it
calls included) and its calls, then the caller -> callee edges by inclusive count. Callgrind sees only the
interpreter's C functions (its evaluation loop is nearly half of the instructions, the rest what the bytecodes
call: integer and tuple operations, allocation, frames), not which Python function runs; the bytecode counts
are the per-function tree, exact and repeatable (about 60 instructions a bytecode here).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import signal
import sys
from collections.abc import Callable, Sequence
from types import FrameType

from bench.bench_core import load_games
from boardd.core.engine import Engine
from boardd.core.events import Event, SquareChanged
from boardd.core.recognizer import Diff, DiffClass, PhysicalBoard, PositionIndex
from drivers.sim import simulate_game


def _feed_game(events: Sequence[Event], inside: list[bool], counted: Sequence[bool] | None = None,
               through: Callable[[Callable[[Event], object], Event], object] | None = None) -> int:
    """One game through a fresh engine; True in *inside* while a square change is fed. Returns the changes fed
    through ``starmap`` (with *counted*: only the square changes whose entry is True, the others fed directly;
    with *through*: the counted ones fed by ``through(feed, event)`` instead)."""
    engine = Engine()
    feed = engine.feed
    squares = 0
    index = -1
    for event in events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            engine.advance(deadline)
        if type(event) is SquareChanged:
            index += 1
            if counted is not None and not counted[index]:
                feed(event)
                continue
            if through is not None:
                through(feed, event)
                squares += 1
                continue
            inside[0] = True
            for _ in itertools.starmap(feed, ((event,),)):
                pass
            inside[0] = False
            squares += 1
        else:
            feed(event)
    while (deadline := engine.next_deadline()) is not None:
        engine.advance(deadline)
    return squares


_CLASSES = {"in_hand": (DiffClass.IN_HAND,), "legal": (DiffClass.LEGAL,),
            "rest": tuple(kind for kind in DiffClass if kind not in (DiffClass.IN_HAND, DiffClass.LEGAL))}


def _classes(events: Sequence[Event]) -> list[DiffClass]:
    """The class of each square change of a game: what the first ``PositionIndex.classify`` during its feed (the
    official position's, in ``Recognition.evaluate``) answered. A first pass with ``classify`` wrapped."""
    kinds: list[DiffClass] = []
    first = [True]
    classify = PositionIndex.classify

    def recording(index: PositionIndex, phys: PhysicalBoard) -> Diff:
        diff = classify(index, phys)
        if first[0]:
            first[0] = False
            kinds.append(diff.kind)
        return diff

    engine = Engine()
    setattr(PositionIndex, "classify", recording)  # noqa: B010 (a method replaced for the first pass)
    try:
        for event in events:
            while (deadline := engine.next_deadline()) is not None and deadline < event.at:
                engine.advance(deadline)
            if type(event) is SquareChanged:
                first[0] = True
                engine.feed(event)
                if first[0]:
                    kinds.append(DiffClass.NONE)  # (not classified: a change the gates handled before)
            else:
                engine.feed(event)
    finally:
        setattr(PositionIndex, "classify", classify)  # noqa: B010
    return kinds


def _sample(games: list[list[Event]], repeat: int) -> None:
    inside = [False]
    total = 0
    shares: collections.Counter[tuple[str, str]] = collections.Counter()

    def on_tick(_signum: int, frame: FrameType | None) -> None:
        nonlocal total
        if not inside[0]:
            return
        total += 1
        seen = set()
        while frame is not None:
            code = frame.f_code
            key = (code.co_filename.rsplit("/", 1)[-1], code.co_name)
            if key not in seen:
                seen.add(key)
                shares[key] += 1
            frame = frame.f_back

    signal.signal(signal.SIGPROF, on_tick)
    signal.setitimer(signal.ITIMER_PROF, 0.0003, 0.0003)
    try:
        for _ in range(repeat):
            for events in games:
                _feed_game(events, inside)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    print(f"{total} samples while a square change was fed; share of each function (with what it calls):")
    for (filename, name), count in shares.most_common(60):
        print(f"{100 * count / max(total, 1):6.1f} %  {filename}:{name}")


def _ops(games: list[list[Event]], wanted: tuple[DiffClass, ...] | None, top: int) -> None:
    """Bytecodes per counted square change, per function (own, inclusive, calls) and per caller -> callee edge."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    edges: collections.Counter[tuple[str, str]] = collections.Counter()
    stack: list[str] = []

    def tracer(frame: FrameType, event: str, _arg: object) -> object:
        if event == "call":
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            code = frame.f_code
            name = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_qualname}"
            calls[name] += 1
            stack.append(name)
            return tracer
        if event == "opcode":
            own[stack[-1]] += 1
            for name in set(stack):
                inclusive[name] += 1
            for pair in set(itertools.pairwise(stack)):
                edges[pair] += 1
        elif event == "return":
            stack.pop()
        return tracer

    def traced(feed: Callable[[Event], object], event: Event) -> None:
        stack.clear()
        sys.settrace(tracer)  # type: ignore[arg-type]
        try:
            feed(event)
        finally:
            sys.settrace(None)

    fed = sum(_feed_game(events, [False], None if wanted is None else [kind in wanted for kind in _classes(events)],
                         through=traced) for events in games)
    n = max(fed, 1)
    print(f"{fed} square changes, {sum(own.values()) / n:.1f} bytecodes a change")
    print("inclusive      own   calls  (per change)  function")
    for name, count in inclusive.most_common(top):
        print(f"{count / n:9.1f} {own[name] / n:8.1f} {calls[name] / n:7.3f}  {name}")
    print("inclusive  (per change)  caller -> callee")
    for (caller, callee), count in edges.most_common(top):
        print(f"{count / n:9.1f}  {caller} -> {callee}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=10, help="sample: feed the games this many times")
    parser.add_argument("--only", choices=sorted(_CLASSES),
                        help="run: count only the square changes of this class (in_hand, legal, rest: the others),"
                             " learnt in a first pass; the others are fed outside starmap")
    parser.add_argument("--top", type=int, default=50, help="ops: the functions and edges printed")
    parser.add_argument("mode", choices=("run", "sample", "ops"))
    args = parser.parse_args(argv)
    games = [simulate_game(game, seed=index, profile="casual").events
             for index, game in enumerate(load_games(args.games))]
    if args.mode == "sample":
        _sample(games, args.repeat)
        return 0
    if args.mode == "ops":
        _ops(games, None if args.only is None else _CLASSES[args.only], args.top)
        return 0
    inside = [False]
    if args.only is not None:
        wanted = _CLASSES[args.only]
        counted = [[kind in wanted for kind in _classes(events)] for events in games]
        print(f"square changes {sum(_feed_game(events, inside, c) for events, c in zip(games, counted, strict=True))}"
              f" ({args.only} only, of {sum(len(c) for c in counted)})", file=sys.stderr)
        return 0
    print(f"square changes {sum(_feed_game(events, inside) for events in games)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
