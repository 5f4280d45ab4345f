"""Clock handling: multi-period controls (T55), time keeping without a clock, flags from the model."""

from __future__ import annotations

import chess

from boardd.engine import Engine
from boardd.events import ClockReading, ClockSide, GameInfo, SetClock, SquareChanged
from boardd.outputs import ClockUpdate, Completion, IrregularityRaised, MoveMade, Output, Severity
from boardd.settings import RulesConfig


def raised(outs: list[Output]) -> list[tuple[str, str | None]]:
    return [(o.irregularity.code, o.irregularity.suggestion.result) for o in outs if isinstance(o, IrregularityRaised)]


# White to move, 39 moves completed by each side (FEN move 40)
_FEN_40 = "4k3/8/8/8/8/8/3PK3/7r w - - 0 40"


def test_t55a_no_clock_the_engine_keeps_time_and_adds_the_next_period() -> None:
    """T55a: White completes move 40 with 12 s left → 12 + 30 + 1800 = 1842 s (engine keeps time, no clock)."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(start_fen=_FEN_40))
    outs = engine.feed(SquareChanged(at=0.0, square=chess.D2, content=None))  # White's clock starts
    outs += engine.feed(SetClock(at=0.0, white=20.0, black=600.0, moves_white=39, moves_black=39))
    outs += engine.feed(SquareChanged(at=7.6, square=chess.D4, content=chess.Piece(chess.PAWN, chess.WHITE)))
    outs += engine.advance(8.0)  # made at 7.6 → press of the engine's own clock at 7.6 s, 12.4 s left
    made = [o.move for o in outs if isinstance(o, MoveMade)]
    assert [m.san for m in made] == ["d4"]
    assert engine.state.clock.white is not None
    assert abs(engine.state.clock.white - (12.4 + 30 + 1800)) < 1e-6
    assert engine.state.clock.running == chess.BLACK


def test_no_clock_flag_falls_by_the_model() -> None:
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(time_control="180+2"))
    engine.feed(SquareChanged(at=0.0, square=chess.E2, content=None))
    engine.feed(SquareChanged(at=0.3, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE)))
    outs = engine.advance(1.0)
    assert engine.next_deadline() is not None  # Black's flag time
    outs += engine.advance(1000.0)
    assert ("FLAG_FALL", "1-0") in raised(outs)
    moves = engine.state.moves
    assert moves[0].san == "e4" and moves[0].completion is None  # completed only by White's next move


def _reading(at: float, white: float, black: float, running: chess.Color) -> ClockReading:
    side = ClockSide.LEFT if running == chess.WHITE else ClockSide.RIGHT
    return ClockReading(at=at, left=white, right=black, running=side, lever_high=side)


def test_t55b_flag_in_the_first_period_before_move_40_loses() -> None:
    fen = "4k3/8/8/8/8/8/3PK3/7r w - - 0 38"  # White thinking about move 38, Black can mate
    engine = Engine(RulesConfig(), GameInfo(start_fen=fen))
    engine.feed(_reading(0.0, 3.0, 100.0, chess.WHITE))
    outs = engine.feed(ClockReading(at=3.0, left=0.0, right=100.0, running=ClockSide.LEFT,
                                    lever_high=ClockSide.LEFT, left_flag=True))
    assert raised(outs) == [("FLAG_FALL", "0-1")]


def test_t55b_flag_after_the_40th_move_is_a_counter_mismatch_not_a_loss() -> None:
    fen = "4k3/8/8/8/8/8/3PK3/7r w - - 0 41"  # 40 moves completed: the period requirement was met
    engine = Engine(RulesConfig(), GameInfo(start_fen=fen))
    engine.feed(_reading(0.0, 3.0, 100.0, chess.WHITE))
    outs = engine.feed(ClockReading(at=3.0, left=0.0, right=100.0, running=ClockSide.LEFT,
                                    lever_high=ClockSide.LEFT, left_flag=True))
    assert raised(outs) == [("CLOCK_MOVE_COUNTER_MISMATCH", None)]


def test_t55c_clock_adds_the_period_one_move_early() -> None:
    """T55c: a press without a move was counted by the clock; it adds 30 min after White's 39th real move."""
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 39"))
    outs = engine.feed(_reading(0.0, 100.0, 900.0, chess.WHITE))
    outs += engine.feed(SquareChanged(at=1.0, square=chess.D2, content=None))
    outs += engine.feed(SquareChanged(at=1.3, square=chess.D4, content=chess.Piece(chess.PAWN, chess.WHITE)))
    # the press: the clock adds increment and the second period (100 - 2 + 30 + 1800)
    outs += engine.feed(_reading(2.0, 1928.0, 900.0, chess.BLACK))
    outs += engine.advance(3.0)
    assert [m.san for m in engine.state.moves] == ["d4"]
    assert engine.state.moves[0].completion is Completion.PRESS
    assert raised(outs) == [("CLOCK_MOVE_COUNTER_MISMATCH", None)]


def test_t55c_correct_period_transition_is_silent() -> None:
    engine = Engine(RulesConfig(), GameInfo(start_fen=_FEN_40))
    outs = engine.feed(_reading(0.0, 100.0, 900.0, chess.WHITE))
    outs += engine.feed(SquareChanged(at=1.0, square=chess.D2, content=None))
    outs += engine.feed(SquareChanged(at=1.3, square=chess.D4, content=chess.Piece(chess.PAWN, chess.WHITE)))
    outs += engine.feed(_reading(2.0, 1928.0, 900.0, chess.BLACK))
    outs += engine.advance(3.0)
    assert [m.san for m in engine.state.moves] == ["d4"]
    assert raised(outs) == []


def test_clock_sides_are_mapped_to_white_and_black() -> None:
    engine = Engine(RulesConfig(white_clock_side=ClockSide.RIGHT))
    engine.feed(ClockReading(at=0.0, left=100.0, right=200.0, running=ClockSide.RIGHT, lever_high=ClockSide.RIGHT))
    assert engine.state.clock.white == 200.0 and engine.state.clock.black == 100.0
    assert engine.state.clock.running == chess.WHITE
    # White (right side) presses after 1.e4: a press by White, not by Black
    engine.feed(SquareChanged(at=1.0, square=chess.E2, content=None))
    engine.feed(SquareChanged(at=1.3, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE)))
    outs = engine.feed(ClockReading(at=2.0, left=100.0, right=199.0, running=ClockSide.LEFT,
                                    lever_high=ClockSide.LEFT))
    outs += engine.advance(3.0)
    assert raised(outs) == []
    assert engine.state.moves[0].completion is Completion.PRESS and engine.state.moves[0].completed_at == 2.0


def test_clock_not_yet_started_is_not_a_pause() -> None:
    engine = Engine()
    outs = engine.feed(ClockReading(at=0.0, left=5400.0, right=5400.0, running=None, lever_high=ClockSide.LEFT))
    outs += engine.feed(ClockReading(at=1.0, left=5400.0, right=5400.0, running=None, lever_high=ClockSide.LEFT))
    outs += engine.feed(_reading(2.0, 5400.0, 5400.0, chess.WHITE))
    outs += engine.feed(ClockReading(at=9.0, left=5393.0, right=5400.0, running=None, lever_high=ClockSide.LEFT))
    assert raised(outs) == [("CLOCK_PAUSED", None)]  # only the stop after the start


def test_clock_setting_suspect_at_the_start() -> None:
    engine = Engine(RulesConfig(), GameInfo(time_control="900+10"))
    outs = engine.feed(ClockReading(at=0.0, left=600.0, right=600.0, running=None, lever_high=ClockSide.LEFT))
    assert raised(outs) == []  # not started yet: the arbiter may still be setting it
    outs = engine.feed(ClockReading(at=1.0, left=600.0, right=600.0, running=ClockSide.LEFT,
                                    lever_high=ClockSide.LEFT))
    assert raised(outs) == [("CLOCK_SETTING_SUSPECT", None)]
    engine = Engine(RulesConfig(), GameInfo(time_control="900+10"))
    assert raised(engine.feed(ClockReading(at=0.0, left=897.0, right=900.0, running=ClockSide.LEFT,
                                           lever_high=ClockSide.LEFT))) == []


# --- clock glitches (picochess's "0:00:00" sanity filter, anchors.md) ---------------------------------------------


def _updates(outs: list[Output]) -> list[tuple[float | None, float | None]]:
    return [(o.clock.white, o.clock.black) for o in outs if isinstance(o, ClockUpdate)]


def test_a_single_zero_reading_without_the_flag_bit_is_a_glitch_not_a_flag_fall() -> None:
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 30"))
    outs = engine.feed(_reading(0.0, 100.0, 100.0, chess.WHITE))
    outs += engine.feed(_reading(1.0, 99.0, 100.0, chess.WHITE))
    glitch = engine.feed(_reading(2.0, 0.0, 0.0, chess.WHITE))  # one 0:00/0:00 reading while White runs
    assert glitch == []  # held: not published, no flag yet
    outs = engine.feed(_reading(3.0, 97.0, 100.0, chess.WHITE))
    assert raised(outs) == [("SENSOR_FLICKER", None)]
    irr = next(o.irregularity for o in outs if isinstance(o, IrregularityRaised))
    assert irr.severity is Severity.INFO and irr.evidence[0].at == 2.0 and "0:00:00" in irr.evidence[0].event
    assert _updates(outs) == [(97.0, 100.0)]
    state = engine.state
    assert state.result == "*" and state.clock.white == 97.0 and not state.clock.flag_white
    assert "FLAG_FALL" not in {i.code for i in engine.irregularities}


def test_an_impossible_drop_of_the_running_time_is_a_glitch_unless_the_next_reading_confirms_it() -> None:
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 30"))
    engine.feed(_reading(0.0, 100.0, 100.0, chess.WHITE))
    assert engine.feed(_reading(1.0, 20.0, 100.0, chess.WHITE)) == []  # 80 s gone in 1 s: held
    outs = engine.feed(_reading(2.0, 98.0, 100.0, chess.WHITE))
    assert raised(outs) == [("SENSOR_FLICKER", None)] and _updates(outs) == [(98.0, 100.0)]
    # the same drop seen twice in a row is what the clock shows (e.g. a time penalty set on the clock)
    assert engine.feed(_reading(3.0, 30.0, 100.0, chess.WHITE)) == []
    outs = engine.feed(_reading(4.0, 29.0, 100.0, chess.WHITE))
    assert raised(outs) == [] and _updates(outs) == [(29.0, 100.0)]


def test_two_consecutive_zero_readings_are_a_flag_fall() -> None:
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 30"))
    engine.feed(_reading(0.0, 2.0, 100.0, chess.WHITE))
    assert engine.feed(_reading(2.0, 0.0, 100.0, chess.WHITE)) == []
    outs = engine.feed(_reading(3.0, 0.0, 100.0, chess.WHITE))
    assert raised(outs) == [("FLAG_FALL", "0-1")]
    assert engine.state.clock.white == 0.0 and engine.state.clock.flag_white


def test_a_zero_with_the_flag_bit_needs_no_confirmation() -> None:
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 30"))
    engine.feed(_reading(0.0, 100.0, 100.0, chess.WHITE))
    # even after an implausible drop: the flag bit is the clock's own word
    outs = engine.feed(ClockReading(at=1.0, left=0.0, right=100.0, running=ClockSide.LEFT,
                                    lever_high=ClockSide.LEFT, left_flag=True))
    assert raised(outs) == [("FLAG_FALL", "0-1")]


def test_glitch_reports_are_thinned_out_but_every_glitch_is_ignored() -> None:
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 30"))
    engine.feed(_reading(0.0, 1000.0, 1000.0, chess.WHITE))
    reported = 0
    for i in range(12):
        t = 1.0 + 2 * i
        engine.feed(_reading(t, 0.0, 1000.0, chess.WHITE))
        reported += len(raised(engine.feed(_reading(t + 1.0, 1000.0 - t - 1.0, 1000.0, chess.WHITE))))
    assert reported == 4  # the 1st-3rd and the 10th
    assert engine.state.result == "*" and not engine.state.clock.flag_white
