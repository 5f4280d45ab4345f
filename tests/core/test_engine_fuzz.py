"""Property test: arbitrary board and clock input never crashes the engine or loses its consistency."""

from __future__ import annotations

import chess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardd.core.engine import Engine
from boardd.core.events import BoardSnapshot, ClockReading, ClockSide, Content, Event, Marker, SquareChanged
from boardd.core.outputs import IrregularityRaised
from boardd.core.settings import RulesConfig

_PIECES: list[Content] = [None, Marker.UNKNOWN, Marker.DRAW]
_PIECES += [chess.Piece(t, c) for c in chess.COLORS for t in chess.PIECE_TYPES]

contents = st.sampled_from(_PIECES)
times = st.floats(min_value=-5.0, max_value=600.0, allow_nan=False)


@st.composite
def event(draw: st.DrawFn) -> Event:
    kind = draw(st.integers(0, 9))
    at = draw(times)
    if kind <= 6:
        return SquareChanged(at=at, square=draw(st.integers(0, 63)), content=draw(contents))
    if kind == 7:
        board = chess.Board()
        squares = [board.piece_at(sq) for sq in chess.SQUARES]
        for _ in range(draw(st.integers(0, 6))):
            squares[draw(st.integers(0, 63))] = draw(contents)
        return BoardSnapshot(at=at, squares=tuple(squares))
    side = draw(st.sampled_from([ClockSide.LEFT, ClockSide.RIGHT, None]))
    return ClockReading(at=at, left=draw(st.floats(0, 600)), right=draw(st.floats(0, 600)), running=side,
                        lever_high=draw(st.sampled_from([ClockSide.LEFT, ClockSide.RIGHT, None])),
                        left_flag=draw(st.booleans()), right_flag=draw(st.booleans()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(event(), min_size=1, max_size=40), st.booleans())
def test_random_input_never_crashes(events: list[Event], clock_expected: bool) -> None:
    engine = Engine(RulesConfig(clock_expected=clock_expected))
    outs = []
    for ev in sorted(events, key=lambda e: e.at)[: len(events) // 2] + events[len(events) // 2:]:
        outs += engine.feed(ev)
        deadline = engine.next_deadline()
        if deadline is not None and deadline < ev.at + 1.0:
            outs += engine.advance(ev.at + 1.0)
    internal = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)
                and "internal error" in o.irregularity.suggestion.text]
    assert not internal
    state = engine.state
    chess.Board(state.fen)  # the official position is always a readable FEN
    assert all(m.ply == i + 1 for i, m in enumerate(state.moves))
