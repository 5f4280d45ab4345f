"""Clock handling: multi-period controls (T55), time keeping without a clock, flags from the model."""

from __future__ import annotations

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import (
    BoardSnapshot,
    ClockReading,
    ClockSide,
    GameInfo,
    Link,
    LinkChanged,
    Resolve,
    SetClock,
    SquareChanged,
)
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Completion,
    GameEvent,
    IrregularityRaised,
    MoveMade,
    Output,
    Severity,
)
from boardd.core.settings import RulesConfig
from tests.core.scenario import ClockSim, move_events, start_clock


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


def test_a_big_drop_of_the_running_time_is_published_as_the_clock_shows_it() -> None:
    # an arbiter's correction on the clock, or a raw capture whose time line is inferred: not a glitch
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 30"))
    engine.feed(_reading(0.0, 100.0, 100.0, chess.WHITE))
    outs = engine.feed(_reading(1.0, 20.0, 100.0, chess.WHITE))
    assert raised(outs) == [] and _updates(outs) == [(20.0, 100.0)]


def test_a_zero_reading_followed_by_silence_is_taken_as_meant() -> None:
    # a clock without a flag bit that stops sending at 0:00: the flag fall must not stay pending forever
    engine = Engine(RulesConfig(), GameInfo(start_fen="4k3/8/8/8/8/8/3PK3/7r w - - 0 30"))
    engine.feed(_reading(0.0, 1.0, 100.0, chess.WHITE))
    assert engine.feed(_reading(1.0, 0.0, 100.0, chess.WHITE)) == []
    assert engine.next_deadline() == pytest.approx(3.0)
    assert raised(engine.advance(2.9)) == []
    outs = engine.advance(3.0)
    assert raised(outs) == [("FLAG_FALL", "0-1")]
    assert engine.state.clock.white == 0.0 and engine.state.clock.flag_white


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


# --- clock link down mid-game --------------------------------------------------------------------------------------

_OPENING = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d4", "exd4", "cxd4", "Bb4+", "Bd2", "Bxd2+",
            "Nbxd2", "d5"]


def _play(engine: Engine, board: chess.Board, sans: list[str], t: float, clock: ClockSim | None) -> tuple[
        list[Output], float]:
    outs: list[Output] = []
    for san in sans:
        move = board.parse_san(san)
        for ev in move_events(board, move, t, clock):
            outs += engine.feed(ev)
        outs += engine.advance(t + 0.9)
        board.push(move)
        t += 1.0
    return outs, t


def _clocked_opening(plies: int) -> tuple[Engine, ClockSim, chess.Board, list[Output], float]:
    """A 300+3 game, White's clock started at 0, the first *plies* of the opening played and pressed."""
    engine = Engine(RulesConfig(), GameInfo(time_control="300+3"))
    clock, first = start_clock(chess.WHITE, 0.0, seconds=300.0)
    board = chess.Board()
    outs = engine.feed(first)
    more, t = _play(engine, board, _OPENING[:plies], 1.0, clock)
    return engine, clock, board, outs + more, t


def test_clock_unplugged_mid_game_moves_go_on_as_without_a_clock() -> None:
    engine, clock, board, outs, t = _clocked_opening(4)
    assert all(m.completion is Completion.PRESS for m in engine.state.moves)
    down = engine.feed(LinkChanged(at=t, link=Link.CLOCK, up=False, detail="unplugged"))
    assert [o.clock for o in down if isinstance(o, ClockUpdate)] == [ClockState()]  # unknown, not running
    assert engine.state.clock.running is None and engine.state.clock.white is None
    more, t = _play(engine, board, _OPENING[4:], t, None)
    outs += more + down
    outs += engine.advance(t + 5.0)
    assert [c for c, _ in raised(outs)] == []  # no CLOCK_NOT_PRESSED, no MOVE_COMPLETED_WITHOUT_PRESS
    moves = engine.state.moves
    assert [m.san for m in moves] == _OPENING
    # made while the clock was away: completed by the player's next move, no frozen clock times
    assert all(m.completion is Completion.NEXT_MOVE for m in moves[4:-2])
    assert all(m.clock_white is None and m.clock_black is None for m in moves[4:])
    assert "[%clk" not in engine.pgn().split("3. Bc4")[1]
    assert engine.state.clock.running is None

    # the clock comes back (White to move; the lever where the players left it): its readings count again
    clock.running = clock.lever = chess.WHITE
    back = engine.feed(LinkChanged(at=t, link=Link.CLOCK, up=True))
    back += engine.feed(clock.reading(t + 0.5))
    assert engine.state.clock.running == chess.WHITE and engine.state.clock.white == clock.white
    more, t = _play(engine, board, ["O-O", "dxc4"], t + 1.0, clock)
    back += more + engine.advance(t + 2.0)
    assert raised(back) == []
    assert [(m.san, m.completion) for m in engine.state.moves[-2:]] == [("O-O", Completion.PRESS),
                                                                         ("dxc4", Completion.PRESS)]
    assert engine.state.moves[-1].clock_black is not None


def test_clock_back_with_the_lever_moved_during_the_outage_completes_the_move() -> None:
    """A press made while the clock was not connected was not seen, but the first reading after its return shows
    the lever moved and the opponent's clock running: the press happened (6.2.1). The move is completed then, before
    the reply, with no time of the opponent's (when it was pressed is not known: no ``[%clk]`` invented) and White's
    as the reading shows it: his clock has stood since his press (the time it left him)."""
    engine, clock, board, _, t = _clocked_opening(2)
    engine.feed(LinkChanged(at=t, link=Link.CLOCK, up=False))
    _, t = _play(engine, board, _OPENING[2:3], t, None)  # Nf3 while away: Black to move
    clock.running = clock.lever = chess.BLACK  # White pressed while the clock was not connected
    outs = engine.feed(clock.reading(t + 5.0))  # no link event: the reading itself says the clock is back
    outs += engine.advance(t + 6.0)
    assert raised(outs) == []
    assert engine.state.clock.running == chess.BLACK
    nf3 = engine.state.moves[-1]
    assert (nf3.completion, nf3.completed_at, nf3.clock_white, nf3.clock_black) == (Completion.PRESS, t + 5.0,
                                                                                     clock.white, None)
    outs, t = _play(engine, board, _OPENING[3:4], t + 7.0, clock)  # Black replies and presses
    outs += engine.advance(t + 1.0)
    assert raised(outs) == []
    assert [(m.san, m.completion) for m in engine.state.moves[-2:]] == [("Nf3", Completion.PRESS),
                                                                         ("Nc6", Completion.PRESS)]


def test_clock_back_with_the_lever_where_it_was_invents_no_press() -> None:
    """The clock back with the mover's own clock still running: no press happened meanwhile; none is invented. His
    press, seen after the return, completes the move with the clock's times."""
    engine, clock, board, _, t = _clocked_opening(2)
    engine.feed(LinkChanged(at=t, link=Link.CLOCK, up=False))
    _, t = _play(engine, board, _OPENING[2:3], t, None)  # Nf3 while away, not pressed: White's clock runs on
    outs = engine.feed(clock.reading(t + 5.0))
    outs += engine.advance(t + 6.0)
    assert engine.state.moves[-1].completed_at is None
    outs += engine.feed(clock.press(chess.WHITE, t + 6.5))
    outs += engine.advance(t + 7.0)
    assert raised(outs) == []
    nf3 = engine.state.moves[-1]
    assert (nf3.completion, nf3.completed_at) == (Completion.PRESS, t + 6.5)
    assert nf3.clock_white is not None and nf3.clock_black is not None


# --- board link down mid-game, the clock still reporting ---------------------------------------------------------

#: press-related codes: none may be raised for what happened while the board could not be seen
_PRESS_CODES = {"CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND", "CLOCK_PRESS_OTHER_HAND_SUSPECTED",
                "TWO_HANDS_AT_PRESS", "DISPLACED_NOT_RESTORED_AT_PRESS", "POSITION_MISMATCH_AT_PRESS",
                "CLOCK_NOT_PRESSED", "MOVE_COMPLETED_WITHOUT_PRESS", "ILLEGAL_MOVE", "CLOCK_LATE_PRESS"}


def _dump(board: chess.Board, at: float) -> BoardSnapshot:
    return BoardSnapshot(at=at, squares=tuple(board.piece_at(sq) for sq in chess.SQUARES))


def _blind(engine: Engine, board: chess.Board, sans: list[str], t: float, clock: ClockSim) -> tuple[
        list[Output], float, list[ClockReading]]:
    """Moves played and pressed while the board link is down: only the clock's readings reach the engine."""
    outs: list[Output] = []
    presses: list[ClockReading] = []
    for san in sans:
        move = board.parse_san(san)
        for ev in move_events(board, move, t, clock):
            if isinstance(ev, ClockReading):
                presses.append(ev)
                outs += engine.feed(ev)
        outs += engine.advance(t + 0.9)
        board.push(move)
        t += 1.0
    return outs, t, presses


def _above_info(outs: list[Output]) -> list[str]:
    return [o.irregularity.code for o in outs
            if isinstance(o, IrregularityRaised) and o.irregularity.severity is not Severity.INFO]


def _outage_game(sans_blind: list[str], knocked: chess.Square | None = None) -> tuple[
        Engine, ClockSim, chess.Board, list[Output], float, list[ClockReading]]:
    """Moves played and pressed while the board link is down (and the piece on *knocked* taken off the board)."""
    engine, clock, board, outs, t = _clocked_opening(2)
    outs += engine.feed(LinkChanged(at=t, link=Link.BOARD, up=False, detail="unplugged"))
    more, t, presses = _blind(engine, board, sans_blind, t, clock)
    outs += more
    outs += engine.feed(clock.reading(t + 1.0))  # the clock goes on reporting
    outs += engine.feed(LinkChanged(at=t + 1.5, link=Link.BOARD, up=True))
    shown = board.copy()
    if knocked is not None:
        shown.remove_piece_at(knocked)
        board.remove_piece_at(knocked)
    outs += engine.feed(_dump(shown, t + 1.6))
    outs += engine.advance(t + 2.5)
    return engine, clock, board, outs, t + 2.5, presses


def test_board_outage_plies_pressed_meanwhile_are_recovered_with_their_clocks() -> None:
    """Board unplugged, clock running: two plies played and pressed, then the board comes back."""
    engine, clock, board, outs, t, presses = _outage_game(["Nf3", "Nc6"])
    assert _above_info(outs) == []  # no CLOCK_PRESS_NO_MOVE while the board was away, nothing at the dump
    moves = engine.state.moves
    assert [m.san for m in moves] == ["e4", "e5", "Nf3", "Nc6"]
    # the presses seen during the outage completed the recovered moves, in order, with the clock they showed
    nf3, nc6 = moves[2], moves[3]
    assert (nf3.completion, nf3.completed_at) == (Completion.PRESS, presses[0].at)
    assert (nc6.completion, nc6.completed_at) == (Completion.PRESS, presses[1].at)
    assert nf3.clock_white == presses[0].left and nc6.clock_black == presses[1].right
    assert nf3.clock_white != engine.state.clock.white  # the clock at the press, not at the reconnection
    pgn = " ".join(engine.pgn().split())  # the recovery's comment makes the lines wrap elsewhere
    assert "2. Nf3 { [%clk 0:04:5" in pgn and "2... Nc6 { [%clk 0:04:5" in pgn
    assert [m.recovered for m in moves] == ["", "", "search", "search"] and "(search) } 2... Nc6" in pgn
    notes = [o for o in outs if isinstance(o, GameEvent) and o.type == "PRESSES_NOT_JUDGED"]
    assert [(n.details["presses"], n.details["matched"]) for n in notes] == [(2, 2)]
    # play goes on with the board: presses are judged again
    more, t = _play(engine, board, _OPENING[4:6], t, clock)
    more += engine.advance(t + 1.0)
    assert raised(more) == []
    assert [(m.san, m.completion) for m in engine.state.moves[4:]] == [("Bc4", Completion.PRESS),
                                                                        ("Bc5", Completion.PRESS)]
    # and a press without a move is an irregularity again once the board is back
    more = engine.feed(clock.press(chess.WHITE, t + 2.0)) + engine.advance(t + 3.0)
    assert [c for c, _ in raised(more)] == ["CLOCK_PRESS_NO_MOVE"]


def test_board_outage_of_five_plies_is_the_restarts_gap_and_accuses_no_one() -> None:
    """Five plies during the outage, in an order the board cannot tell (Nf3, Bc4 and c3 commute): searched as
    after a restart (no longer beyond the search), a gap with the candidates, no press findings; play goes on."""
    engine, clock, board, outs, t, presses = _outage_game(_OPENING[2:7])
    assert len(presses) == 5
    assert _above_info(outs) == []
    [event] = [o.details for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    assert (event["kind"], event["reason"]) == ("ambiguous", "board link down")
    moves = engine.state.moves
    assert [m.san for m in moves[:2]] == ["e4", "e5"] and moves[2].recovered == "gap"
    more, t = _play(engine, board, _OPENING[7:9], t, clock)
    more += engine.advance(t + 1.0)
    assert raised(more) == []
    assert [(m.san, m.completion) for m in engine.state.moves[3:]] == [("Nf6", Completion.PRESS),
                                                                        ("d4", Completion.PRESS)]


def test_board_outage_press_without_a_recoverable_move_accuses_no_one() -> None:
    """Five plies during the outage and a pawn knocked off the board: no sequence explains the board,
    POSITION_DIVERGENCE for the arbiter, no press findings."""
    engine, clock, board, outs, t, presses = _outage_game(_OPENING[2:7], knocked=chess.H2)
    assert len(presses) == 5
    codes = [c for c, _ in raised(outs)]
    assert not _PRESS_CODES & set(codes), codes
    assert _above_info(outs) == ["POSITION_DIVERGENCE"]  # no TWO_HANDS_SUSPECTED / OUT_OF_TURN_CHANGE from a dump
    assert [m.san for m in engine.state.moves] == ["e4", "e5"]
    notes = [o for o in outs if isinstance(o, GameEvent) and o.type == "PRESSES_NOT_JUDGED"]
    assert [(n.details["presses"], n.details["matched"]) for n in notes] == [(5, 0)]
    # play goes on from the board before the arbiter rules: the record lacks the hidden moves, so the
    # presses still cannot be judged against it (no CLOCK_PRESS_NO_MOVE for Black's reply)
    more, t = _play(engine, board, _OPENING[7:9], t, clock)
    more += engine.advance(t + 1.0)
    assert not _PRESS_CODES & {c for c, _ in raised(more)}, raised(more)
    assert len([o for o in more if isinstance(o, GameEvent) and o.type == "PRESSES_NOT_JUDGED"]) == 2
    # the arbiter lets the game go on from the board: presses are judged again
    div = next(i for i in engine.irregularities if i.code == "POSITION_DIVERGENCE")
    engine.feed(Resolve(at=t, irregularity_id=div.id, ruling="play on from the board", accept=False))
    more, t = _play(engine, board, _OPENING[9:11], t + 1.0, clock)
    more += engine.advance(t + 1.0)
    assert raised(more) == []
    assert [(m.san, m.completion) for m in engine.state.moves[-2:]] == [("exd4", Completion.PRESS),
                                                                         ("cxd4", Completion.PRESS)]


def test_board_outage_press_with_the_board_unchanged_is_not_a_press_without_a_move() -> None:
    engine, clock, board, _, t = _clocked_opening(2)
    outs = engine.feed(LinkChanged(at=t, link=Link.BOARD, up=False))
    outs += engine.feed(clock.press(chess.WHITE, t + 1.0))  # unseen: did White move? the board cannot tell
    outs += engine.advance(t + 2.0)
    outs += engine.feed(LinkChanged(at=t + 3.0, link=Link.BOARD, up=True))
    outs += engine.feed(_dump(board, t + 3.1))
    outs += engine.advance(t + 4.0)
    assert raised(outs) == []
    assert [m.san for m in engine.state.moves] == ["e4", "e5"]
    notes = [o for o in outs if isinstance(o, GameEvent) and o.type == "PRESSES_NOT_JUDGED"]
    assert [(n.details["presses"], n.details["matched"]) for n in notes] == [(1, 0)]


def test_board_outage_first_press_completes_the_move_made_before_it() -> None:
    """Nf3 made with the board, the board unplugged before the press: the press completes Nf3."""
    engine, clock, board, outs, t = _clocked_opening(2)
    nf3 = board.parse_san("Nf3")
    for ev in move_events(board, nf3, t, None):
        outs += engine.feed(ev)
    outs += engine.advance(t + 0.7)  # made (settled), not pressed yet
    board.push(nf3)
    outs += engine.feed(LinkChanged(at=t + 0.7, link=Link.BOARD, up=False))
    press = clock.press(chess.WHITE, t + 0.8)
    outs += engine.feed(press) + engine.advance(t + 0.9)
    more, t, presses = _blind(engine, board, ["Nc6"], t + 1.0, clock)
    outs += more
    outs += engine.feed(LinkChanged(at=t, link=Link.BOARD, up=True)) + engine.feed(_dump(board, t + 0.1))
    outs += engine.advance(t + 1.0)
    assert _above_info(outs) == []
    moves = engine.state.moves
    assert [(m.san, m.completion, m.completed_at) for m in moves[2:]] == [
        ("Nf3", Completion.PRESS, press.at), ("Nc6", Completion.PRESS, presses[0].at)]
    notes = [o for o in outs if isinstance(o, GameEvent) and o.type == "PRESSES_NOT_JUDGED"]
    assert [(n.details["presses"], n.details["matched"]) for n in notes] == [(2, 2)]


# --- clock on the other side than configured ------------------------------------------------------------------------


def _clean_game(engine: Engine, clock: ClockSim, sans: list[str]) -> list[Output]:
    outs = engine.feed(clock.reading(0.0))
    more, t = _play(engine, chess.Board(), sans, 1.0, clock)
    return outs + more + engine.advance(t + 5.0)


def _side_events(outs: list[Output]) -> list[GameEvent]:
    return [o for o in outs if isinstance(o, GameEvent) and o.type == "CLOCK_SIDE_CHANGED"]


def test_clock_on_the_wrong_side_is_found_at_the_first_start_and_swapped() -> None:
    engine = Engine(RulesConfig(white_clock_side=ClockSide.LEFT), GameInfo(time_control="300+3"))
    # White's time is on the right; the arbiter starts White's clock
    clock = ClockSim(white=300.0, black=300.0, running=chess.WHITE, lever=chess.WHITE, white_side=ClockSide.RIGHT)
    outs = _clean_game(engine, clock, _OPENING[:12])
    assert raised(outs) == []  # a clean game: no CLOCK_PRESS_NO_MOVE, no late presses
    assert [e.details for e in _side_events(outs)] == [{"white_clock_side": "right", "configured": "left", "ply": 0}]
    moves = engine.state.moves
    assert all(m.completion is Completion.PRESS for m in moves)
    # White's times are White's: White's clock ran first, so after each White move White has used more
    assert moves[0].clock_white is not None and moves[0].clock_black == 300.0
    assert engine.state.clock.white == clock.white and engine.state.clock.black == clock.black


def test_clock_left_stopped_on_the_wrong_side_is_swapped_at_whites_first_press() -> None:
    engine = Engine(RulesConfig(white_clock_side=ClockSide.LEFT), GameInfo(time_control="300+3"))
    clock = ClockSim(white=300.0, black=300.0, running=None, lever=chess.WHITE, white_side=ClockSide.RIGHT)
    outs = _clean_game(engine, clock, _OPENING[:12])
    assert raised(outs) == []
    assert [e.details["ply"] for e in _side_events(outs)] == [1]
    assert engine.state.moves[0].completion is Completion.PRESS and engine.state.moves[0].completed_at == 1.8


def test_clock_on_the_configured_side_is_not_swapped() -> None:
    engine = Engine(RulesConfig(white_clock_side=ClockSide.RIGHT), GameInfo(time_control="300+3"))
    clock = ClockSim(white=300.0, black=300.0, running=chess.WHITE, lever=chess.WHITE, white_side=ClockSide.RIGHT)
    outs = _clean_game(engine, clock, _OPENING[:4])
    assert raised(outs) == [] and _side_events(outs) == []


def test_clock_side_is_not_changed_after_the_second_ply() -> None:
    engine = Engine(RulesConfig(white_clock_side=ClockSide.LEFT), GameInfo(time_control="300+3"))
    board = chess.Board()
    outs, t = _play(engine, board, _OPENING[:2], 1.0, None)  # no clock yet
    clock = ClockSim(white=290.0, black=290.0, running=chess.WHITE, lever=chess.WHITE, white_side=ClockSide.RIGHT,
                     last=t)
    outs += engine.feed(clock.reading(t))
    assert _side_events(outs) == []
    assert engine.state.clock.running == chess.BLACK  # the configuration stands: the findings will show it


def test_a_clock_still_showing_the_previous_games_times_tells_nothing_about_the_side() -> None:
    # after new-game, before the clock is set: it still runs for whoever pressed last in the previous game
    # (seen in `boardd demo --games 2`: the side was swapped and the whole second game was misjudged)
    engine = Engine(RulesConfig(white_clock_side=ClockSide.LEFT), GameInfo(time_control="5400"))
    outs = engine.feed(ClockReading(at=0.0, left=5389.0, right=5386.0, running=ClockSide.RIGHT,
                                    lever_high=ClockSide.RIGHT))
    assert _side_events(outs) == []
    assert [code for code, _ in raised(outs)] == ["CLOCK_SETTING_SUSPECT"]
    assert engine.state.clock.running == chess.BLACK  # the configuration stands


def test_whites_clock_started_as_the_first_move_is_made_is_not_a_wrong_side() -> None:
    # the arbiter starts White's clock (no lever change) while White's first move is being made: that fits
    # the configuration (seen on the DGT emulator: the sides were swapped and every press misjudged)
    engine = Engine(RulesConfig(white_clock_side=ClockSide.LEFT), GameInfo(time_control="5400"))
    outs = engine.feed(ClockReading(at=0.0, left=5400.0, right=5400.0, running=None, lever_high=ClockSide.LEFT))
    board = chess.Board()
    for ev in move_events(board, board.parse_san("d4"), 1.0, None):
        outs += engine.feed(ev)
    outs += engine.feed(ClockReading(at=1.05, left=5400.0, right=5400.0, running=ClockSide.LEFT,
                                     lever_high=ClockSide.LEFT))
    assert _side_events(outs) == []
    assert engine.state.clock.running == chess.WHITE
