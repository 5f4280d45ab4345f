"""Helpers for the simulator tests: replay events on a model of the physical board and clock lever."""

from __future__ import annotations

from dataclasses import dataclass, field

import chess

from boardd.core.events import BoardSnapshot, ClockReading, ClockSide, Content, Event, SquareChanged


@dataclass
class Press:
    """A lever transition seen in the readings: *side* pressed at *at* with the board as *placement*."""

    at: float
    side: ClockSide
    placement: dict[int, chess.Piece]


@dataclass
class Replay:
    """What the events did to the board and the clock lever."""

    board: list[Content] = field(default_factory=lambda: [None] * 64)
    presses: list[Press] = field(default_factory=list)
    readings: list[ClockReading] = field(default_factory=list)
    changes: list[SquareChanged] = field(default_factory=list)

    def placement(self) -> dict[int, chess.Piece]:
        return {sq: c for sq, c in enumerate(self.board) if isinstance(c, chess.Piece)}


def replay(events: list[Event]) -> Replay:
    """Apply the board events and collect presses (lever changes) with the board at that moment."""
    state = Replay()
    lever: ClockSide | None = None
    for event in events:
        if isinstance(event, BoardSnapshot):
            state.board = list(event.squares)
        elif isinstance(event, SquareChanged):
            state.board[event.square] = event.content
            state.changes.append(event)
        elif isinstance(event, ClockReading):
            state.readings.append(event)
            if lever is not None and event.lever_high is not None and event.lever_high != lever:
                state.presses.append(Press(event.at, lever, state.placement()))
            lever = event.lever_high
    return state


def positions(start: chess.Board, moves: list[str]) -> list[dict[int, chess.Piece]]:
    """Piece placement after each move (index 0 = after the first move)."""
    board = start.copy()
    out = []
    for uci in moves:
        board.push(board.parse_uci(uci))
        out.append(board.piece_map())
    return out
