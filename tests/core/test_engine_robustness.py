"""Bad input, takebacks, orientation, missed updates, result gestures, set-up (issue 2 item 6)."""

from __future__ import annotations

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import (
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    FillGap,
    GameInfo,
    Link,
    LinkChanged,
    Marker,
    Resolve,
    SetOrientation,
    SquareChanged,
)
from boardd.core.outputs import GameEvent, IrregularityRaised, MoveMade, MovesRetracted, Output, Status
from boardd.core.settings import RulesConfig
from tests.core.scenario import history_events, parse, start_clock

WP = chess.Piece(chess.PAWN, chess.WHITE)
WK = chess.Piece(chess.KING, chess.WHITE)
BK = chess.Piece(chess.KING, chess.BLACK)


def codes(outs: list[Output]) -> list[str]:
    return [o.irregularity.code for o in outs if isinstance(o, IrregularityRaised)]


def events(outs: list[Output], kind: str) -> list[GameEvent]:
    return [o for o in outs if isinstance(o, GameEvent) and o.type == kind]


def feed_all(engine: Engine, evs: list) -> list[Output]:  # type: ignore[type-arg]
    outs: list[Output] = []
    for ev in evs:
        outs += engine.feed(ev)
    return outs


def snapshot(board: chess.BaseBoard, at: float, *, turned: bool = False) -> BoardSnapshot:
    squares: list[Content] = [board.piece_at(sq) for sq in chess.SQUARES]
    if turned:
        squares = squares[::-1]
    return BoardSnapshot(at=at, squares=tuple(squares))


# --- bad input -------------------------------------------------------------------------------


def test_time_going_backwards_is_processed_at_the_last_time_and_reported() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(SquareChanged(at=5.0, square=chess.E2, content=None))
    outs += engine.feed(SquareChanged(at=4.0, square=chess.E4, content=WP))  # 1 s in the past
    assert codes(outs) == ["SENSOR_FAULT"]
    irr = next(o.irregularity for o in outs if isinstance(o, IrregularityRaised))
    assert "backwards" in irr.evidence[0].event and irr.t_raised == 5.0
    outs = engine.advance(6.0)
    made = [o.move for o in outs if isinstance(o, MoveMade)]
    assert [(m.san, m.made_at) for m in made] == [("e4", 5.0)]  # the move is not lost


def test_unknown_marker_is_a_sensor_fault_and_suspends_that_square() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(SquareChanged(at=1.0, square=chess.A2, content=Marker.UNKNOWN))
    assert codes(outs) == ["SENSOR_FAULT"]
    outs = feed_all(engine, [SquareChanged(at=2.0, square=chess.E2, content=None),
                             SquareChanged(at=2.3, square=chess.E4, content=WP)])
    outs += engine.advance(3.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]


def test_three_kings_on_the_board_never_make_a_move_and_do_not_crash() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = feed_all(engine, [SquareChanged(at=1.0, square=chess.D4, content=WK)])
    outs += engine.advance(3.0)
    assert not [o for o in outs if isinstance(o, MoveMade)]
    assert codes(outs) == ["SENSOR_FAULT"]
    assert "2 kings" in next(o.irregularity for o in outs if isinstance(o, IrregularityRaised)).suggestion.text
    assert engine.state.ply == 0
    outs = feed_all(engine, [SquareChanged(at=4.0, square=chess.D4, content=None),
                             SquareChanged(at=5.0, square=chess.E2, content=None),
                             SquareChanged(at=5.3, square=chess.E4, content=WP)])
    outs += engine.advance(6.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]


def test_snapshot_garbage_33_pieces_is_a_sensor_fault_not_a_crash() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    board = chess.Board()
    engine.feed(snapshot(board, 0.0))
    junk = [board.piece_at(sq) for sq in chess.SQUARES]
    junk[chess.E4] = chess.Piece(chess.QUEEN, chess.BLACK)  # 33 pieces
    junk[chess.D5] = WK  # and a third king
    outs = engine.feed(BoardSnapshot(at=1.0, squares=tuple(junk)))
    outs += engine.advance(3.0)
    assert codes(outs) == ["SENSOR_FAULT"]  # two white kings, 17 white pieces: an impossible reading
    assert engine.state.ply == 0
    # the board is put right: play goes on
    outs = engine.feed(snapshot(board, 4.0))
    outs += feed_all(engine, [SquareChanged(at=5.0, square=chess.D2, content=None),
                              SquareChanged(at=5.2, square=chess.D4, content=WP)])
    outs += engine.advance(6.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["d4"]


def test_link_changes_are_reported() -> None:
    engine = Engine()
    outs = engine.feed(LinkChanged(at=1.0, link=Link.BOARD, up=False, detail="usb"))
    outs += engine.feed(LinkChanged(at=2.0, link=Link.BOARD, up=True))
    assert [e.type for e in outs if isinstance(e, GameEvent)] == ["BOARD_DISCONNECTED", "BOARD_RECONNECTED"]


# --- takebacks (R29) -----------------------------------------------------------------------


def test_takeback_of_two_plies_is_detected_and_retracted() -> None:
    engine = Engine()
    clock, first = start_clock(chess.WHITE, -10.0)
    engine.feed(first)
    feed_all(engine, history_events("e4 e5 Nf3 Nc6", clock, start=-9.0))
    engine.advance(-0.5)
    assert engine.state.ply == 4
    # Black's knight back to b8 and White's knight back to g1 (during White's time)
    outs = feed_all(engine, parse("0 L c6 · 300 P b8 bN · 1000 L f3 · 1300 P g1 wN", clock))
    outs += engine.advance(3.0)
    retracted = [o for o in outs if isinstance(o, MovesRetracted)]
    assert retracted and retracted[-1].to_ply == 2
    assert "TAKEBACK_DETECTED" in codes(outs)
    assert [m.san for m in engine.state.moves] == ["e4", "e5"]
    assert engine.state.turn == chess.WHITE


# --- orientation ---------------------------------------------------------------------------


def test_board_turned_round_is_detected_from_the_first_snapshot() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(snapshot(chess.Board(), 0.0, turned=True))
    assert len(events(outs, "ORIENTATION_CHANGED")) == 1
    assert not codes(outs)
    # e2-e4 in the board's own frame is d7-d5 (square 63 - sq)
    outs = feed_all(engine, [SquareChanged(at=1.0, square=63 - chess.E2, content=None),
                             SquareChanged(at=1.3, square=63 - chess.E4, content=WP)])
    outs += engine.advance(2.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]


def test_board_turned_round_is_detected_from_the_first_changes() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = feed_all(engine, [SquareChanged(at=1.0, square=63 - chess.G1, content=None),
                             SquareChanged(at=1.3, square=63 - chess.F3, content=chess.Piece(chess.KNIGHT, True))])
    outs += engine.advance(2.0)
    assert len(events(outs, "ORIENTATION_CHANGED")) == 1
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["Nf3"]


def test_set_orientation_forces_the_frame() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(SetOrientation(at=0.0, white_at_a1=False))
    assert events(outs, "ORIENTATION_CHANGED")[0].details["forced"] is True
    outs = feed_all(engine, [SquareChanged(at=1.0, square=63 - chess.E2, content=None),
                             SquareChanged(at=1.3, square=63 - chess.E4, content=WP)])
    outs += engine.advance(2.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]


# --- missed updates ------------------------------------------------------------------------


def _jump(moves: str, extra: chess.Square | None = None) -> tuple[Engine, list[Output]]:
    """*moves* played while the board link is down (and a white knight put on *extra*: no sequence explains it)."""
    engine = Engine(RulesConfig(clock_expected=False))
    engine.feed(snapshot(chess.Board(), 0.0))
    board = chess.Board()
    for san in moves.split():
        board.push_san(san)
    if extra is not None:
        board.set_piece_at(extra, chess.Piece(chess.KNIGHT, chess.WHITE))
    outs = engine.feed(LinkChanged(at=1.0, link=Link.BOARD, up=False))
    outs += engine.feed(LinkChanged(at=5.0, link=Link.BOARD, up=True))
    outs += engine.feed(snapshot(board, 5.1))
    outs += engine.advance(7.0)
    return engine, outs


@pytest.mark.parametrize(("played", "after"), [("e4 c5", "Nf3 d6"), ("e3 c5 e4", "Nc6 Nf3")])
def test_missed_updates_of_either_parity_leave_the_side_to_move_to_the_next_move(played: str, after: str) -> None:
    """e4 c5 on the board, no clock: e4 c5 (White to move) or e3 c5 e4 (Black to move) fit; nothing tells which.
    Neither is recorded (e4 c5 once was, and Black's next move was then out of turn): a gap with both kinds; the
    next move tells the side to move and is recorded, and of that parity one sequence fits: it fills the gap
    (``Downtime.after_gap``), and the incident's one event, which waited for that move, says ``unique``."""
    engine, outs = _jump(played)
    [gap] = engine.state.moves
    assert (gap.uci, gap.legal, gap.recovered) == ("0000", False, "gap")
    assert events(outs, "MOVES_RECOVERED") == []  # waits for the first move after the gap
    board = chess.Board()
    for san in played.split():
        board.push_san(san)
    more = _moves(engine, board, after, 8.0)
    assert [m.san for m in engine.state.moves] == played.split() + after.split() and not codes(outs + more)
    assert [m.recovered for m in engine.state.moves] == ["search"] * len(played.split()) + [""] * 2
    [event] = events(outs + more, "MOVES_RECOVERED")
    assert (event.details["kind"], event.details["moves"]) == ("unique", played.split())


def test_missed_updates_three_plies_recovered() -> None:
    # Bc4 needs e4 first: one order only; and a knight's move takes one ply or three: one length only (with
    # c5 for Nc6, c6-c5 fits too and leaves White to move: no clock tells which, a gap; see above)
    engine, outs = _jump("e4 Nc6 Bc4")
    assert [m.san for m in engine.state.moves] == ["e4", "Nc6", "Bc4"]
    assert not codes(outs)
    # recovered by search: said so, as after a restart (the moves' recovered_by, one event)
    assert [m.recovered for m in engine.state.moves] == ["search"] * 3
    [event] = events(outs, "MOVES_RECOVERED")
    assert (event.details["kind"], event.details["method"], event.details["reason"]) == \
        ("unique", "search", "board link down")


def test_missed_updates_in_an_order_the_board_cannot_tell_leave_a_gap() -> None:
    """d4 Nf6 c4 and c4 Nf6 d4 lead to the same board: neither is recorded (the first found once was), one
    MOVES_RECOVERED lists both for the arbiter, who fills the gap; the game goes on meanwhile."""
    engine, outs = _jump("d4 Nf6 c4")
    [gap] = engine.state.moves
    assert (gap.uci, gap.legal, gap.recovered) == ("0000", False, "gap")
    assert not codes(outs)
    [event] = events(outs, "MOVES_RECOVERED")
    assert event.details["kind"] == "ambiguous" and event.details["reason"] == "board link down"
    candidates = event.details["candidates"]
    assert isinstance(candidates, list)
    assert sorted(candidates) == [["c2c4", "g8f6", "d2d4"], ["d2d4", "g8f6", "c2c4"]]
    board = chess.Board()
    for san in ["d4", "Nf6", "c4"]:
        board.push_san(san)
    more = _moves(engine, board, "e6 Nc3", 8.0)  # Black to move after three plies
    assert [m.san for m in engine.state.moves][1:] == ["e6", "Nc3"] and not codes(more)
    engine.feed(FillGap(at=12.0, ply=1, moves=("d4", "Nf6", "c4")))
    assert [m.san for m in engine.state.moves] == ["d4", "Nf6", "c4", "e6", "Nc3"]


def test_missed_updates_more_than_three_plies_are_searched_as_after_a_restart() -> None:
    """Five plies missed on a link outage: no longer a divergence; Nf3 and Bb5 (e5 and Nc6) commute, a gap."""
    engine, outs = _jump("e4 e5 Nf3 Nc6 Bb5")
    assert not codes(outs)
    [gap] = engine.state.moves
    assert (gap.uci, gap.recovered) == ("0000", "gap")
    board = chess.Board()
    for san in ("e4", "e5", "Nf3", "Nc6", "Bb5"):
        board.push_san(san)
    outs += _moves(engine, board, "a6", 8.0)  # no clock: both parities fit; Black's a6 tells, still several orders
    [event] = events(outs, "MOVES_RECOVERED")
    assert (event.details["kind"], event.details["reason"]) == ("ambiguous", "board link down")
    assert ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"] in event.details["candidates"]  # type: ignore[operator]


def test_missed_updates_no_sequence_explains_is_a_divergence() -> None:
    engine, outs = _jump("e4 e5 Nf3 Nc6 Bb5", extra=chess.H2)  # and a third white knight for the pawn on h2
    assert engine.state.ply == 0
    assert "POSITION_DIVERGENCE" in codes(outs)


def _divergence_id(engine: Engine) -> str:
    return next(i.id for i in engine.irregularities if i.code == "POSITION_DIVERGENCE")


def _moves(engine: Engine, board: chess.Board, sans: str, t: float) -> list[Output]:
    outs: list[Output] = []
    for san in sans.split():
        move = board.parse_san(san)
        outs += feed_all(engine, [SquareChanged(at=t, square=move.from_square, content=None),
                                  SquareChanged(at=t + 0.2, square=move.to_square, content=board.piece_at(
                                      move.from_square))])
        outs += engine.advance(t + 1.0)
        board.push(move)
        t += 1.0
    return outs


def test_dismissed_divergence_adopts_the_board_and_the_record_goes_on() -> None:
    """After an outage no sequence explains the record was stuck at the divergence; dismissing it plays on from
    the board."""
    engine, _ = _jump("e4 e5 Nf3 Nc6 Bb5", extra=chess.H2)
    board = chess.Board()
    for san in ["e4", "e5", "Nf3", "Nc6", "Bb5"]:
        board.push_san(san)
    board.set_piece_at(chess.H2, chess.Piece(chess.KNIGHT, chess.WHITE))
    outs = engine.feed(Resolve(at=8.0, irregularity_id=_divergence_id(engine), accept=False,
                               ruling="play on from the board"))
    assert [(m.legal, m.uci) for m in engine.state.moves] == [(False, "0000")]
    assert engine.state.moves[0].san.startswith("position adopted")
    assert events(outs, "ARBITER_ACTION")
    # Black was to move (5 plies missed): the side to move was unknown, Black's first move tells it
    outs = _moves(engine, board, "a6 Ba4 Nf6", 10.0)
    assert [m.san for m in engine.state.moves[1:]] == ["a6", "Ba4", "Nf6"]
    assert not codes(outs)
    assert engine.state.fen.split()[0] == board.board_fen()


def test_accepted_divergence_waits_for_the_official_position() -> None:
    engine, _ = _jump("e4 e5 Nf3 Nc6 Bb5", extra=chess.H2)
    outs = engine.feed(Resolve(at=8.0, irregularity_id=_divergence_id(engine), accept=True))
    assert engine.state.ply == 0 and not events(outs, "REINSTATED")
    outs = engine.feed(snapshot(chess.Board(), 9.0))  # the arbiter has the start position put back
    assert events(outs, "REINSTATED")
    outs = _moves(engine, chess.Board(), "d4 d5", 10.0)
    assert [m.san for m in engine.state.moves] == ["d4", "d5"] and not codes(outs)


# --- result gesture (lila#11783) -----------------------------------------------------------


def test_kings_in_the_centre_are_a_result_signal_not_a_move() -> None:
    fen = "8/8/8/8/8/8/8/K6k w - - 0 60"
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(start_fen=fen))
    outs = feed_all(engine, [SquareChanged(at=1.0, square=chess.A1, content=None),
                             SquareChanged(at=1.5, square=chess.E4, content=WK),
                             SquareChanged(at=2.0, square=chess.H1, content=None),
                             SquareChanged(at=2.5, square=chess.D5, content=BK)])
    outs += engine.advance(5.0)
    signals = events(outs, "RESULT_SIGNAL")
    assert len(signals) == 1 and signals[0].details["result"] == "1-0"  # both kings on light squares
    assert engine.state.ply == 0 and not [o for o in outs if isinstance(o, MoveMade)]


def _paused_clock_king_game() -> tuple[Engine, list[Output]]:
    """Kings on f3 and c6 (pawns make it no dead position), the clock started then paused."""
    engine = Engine(RulesConfig(), GameInfo(start_fen="8/p7/2k5/8/8/5K2/P7/8 w - - 0 30", time_control="300+3"))
    outs = feed_all(engine, [ClockReading(at=0.0, left=200.0, right=200.0, running=ClockSide.LEFT,
                                          lever_high=ClockSide.LEFT),
                             ClockReading(at=1.0, left=199.0, right=200.0, running=None, lever_high=ClockSide.LEFT)])
    return engine, outs


def test_legal_king_move_into_the_centre_then_the_gesture_is_taken_back() -> None:
    """lila#11783: Kf3-e4 is legal and made; when Black's king joins it on d5 it was a result gesture."""
    engine, outs = _paused_clock_king_game()
    outs += feed_all(engine, [SquareChanged(at=2.0, square=chess.F3, content=None),
                              SquareChanged(at=2.3, square=chess.E4, content=WK)])
    outs += engine.advance(4.0)
    assert [m.san for m in engine.state.moves] == ["Ke4"]  # made: nothing tells it from a move yet
    outs += feed_all(engine, [SquareChanged(at=5.0, square=chess.C6, content=None),
                              SquareChanged(at=5.3, square=chess.D5, content=BK)])
    outs += engine.advance(10.0)
    signals = events(outs, "RESULT_SIGNAL")
    assert [s.details["result"] for s in signals] == ["1-0"]  # e4 and d5: both light squares
    assert [o.to_ply for o in outs if isinstance(o, MovesRetracted)] == [0]
    assert engine.state.moves == () and engine.state.ply == 0
    assert engine.state.fen == "8/p7/2k5/8/8/5K2/P7/8 w - - 0 30"
    assert "Ke4" not in engine.pgn()
    # nothing is inferred from the gesture position; the press finding about Ke4 is withdrawn
    assert [c for c in codes(outs) if c != "CLOCK_PAUSED"] == ["CLOCK_NOT_PRESSED"]
    assert not any(i.status is not Status.RESOLVED for i in engine.irregularities if i.code == "CLOCK_NOT_PRESSED")
    # the kings go back: the game goes on from the official position
    outs = feed_all(engine, [SquareChanged(at=12.0, square=chess.D5, content=None),
                             SquareChanged(at=12.2, square=chess.C6, content=BK),
                             SquareChanged(at=13.0, square=chess.E4, content=None),
                             SquareChanged(at=13.2, square=chess.F3, content=WK)])
    outs += engine.advance(15.0)
    assert engine.state.ply == 0 and not codes(outs)


def test_king_move_into_the_centre_completed_by_a_press_is_not_a_gesture_move() -> None:
    engine = Engine(RulesConfig(), GameInfo(start_fen="8/p7/2k5/8/8/5K2/P7/8 w - - 0 30", time_control="300+3"))
    clock, first = start_clock(chess.WHITE, 0.0, seconds=200.0)
    outs = feed_all(engine, [first, SquareChanged(at=2.0, square=chess.F3, content=None),
                             SquareChanged(at=2.3, square=chess.E4, content=WK)])
    outs += engine.advance(3.0)
    outs += feed_all(engine, [clock.press(chess.WHITE, 3.5)])
    outs += engine.advance(4.0)
    assert engine.state.moves[0].completed_at is not None
    outs += feed_all(engine, [SquareChanged(at=5.0, square=chess.C6, content=None),
                              SquareChanged(at=5.3, square=chess.D5, content=BK)])
    outs += engine.advance(10.0)
    assert len(events(outs, "RESULT_SIGNAL")) == 1
    assert not [o for o in outs if isinstance(o, MovesRetracted)]
    assert [m.san for m in engine.state.moves] == ["Ke4"]  # a completed move stands


def test_dgt_result_piece_is_a_result_signal() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(SquareChanged(at=1.0, square=chess.E4, content=Marker.DRAW))
    assert [e.details["result"] for e in events(outs, "RESULT_SIGNAL")] == ["1/2-1/2"]
    assert not codes(outs)
    assert engine.state.ply == 0


# --- set-up (R25, T60) ----------------------------------------------------------------------


def test_t60_king_and_queen_swapped_at_setup() -> None:
    swapped = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w kq - 0 1")
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(time_control="900+10"))
    outs = engine.feed(snapshot(swapped, 0.0))
    assert codes(outs) == ["SETUP_INCORRECT"]
    irr = next(o.irregularity for o in outs if isinstance(o, IrregularityRaised))
    assert "king and queen swapped" in irr.suggestion.text
    assert not engine.state.fen.split()[2].count("K") and not engine.state.fen.split()[2].count("Q")
    outs = feed_all(engine, [SquareChanged(at=1.0, square=chess.E2, content=None),
                             SquareChanged(at=1.3, square=chess.E4, content=WP)])
    outs += engine.advance(2.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]


def test_board_turned_a_quarter_round_is_a_setup_error_and_play_goes_on() -> None:
    from boardd.core.engine.common import _ROTATIONS

    engine = Engine(RulesConfig(clock_expected=False))
    board = chess.Board()
    to_official = _ROTATIONS[1]
    raw: list[Content] = [None] * 64
    for sq in chess.SQUARES:
        raw[sq] = board.piece_at(to_official[sq])
    outs = engine.feed(BoardSnapshot(at=0.0, squares=tuple(raw)))
    assert codes(outs) == ["SETUP_INCORRECT"]
    assert events(outs, "ORIENTATION_CHANGED")[0].details["quarter_turns"] == 1
    from_official = {official: sq for sq, official in enumerate(to_official)}
    outs = feed_all(engine, [SquareChanged(at=1.0, square=from_official[chess.E2], content=None),
                             SquareChanged(at=1.3, square=from_official[chess.E4], content=WP)])
    outs += engine.advance(2.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]


def test_timers_fire_on_the_next_event_too() -> None:
    """An impossible reading is reported when a later event arrives, without an advance() call."""
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(SquareChanged(at=1.0, square=chess.D4, content=WK))
    outs += engine.feed(SquareChanged(at=3.0, square=chess.H4, content=None))
    assert codes(outs) == ["SENSOR_FAULT"]


def test_snapshot_stream_boards_recognise_moves_without_false_divergence() -> None:
    """Millennium/Chessnut/Certabo send full frames: each scan is a BoardSnapshot with a few changes."""
    engine = Engine(RulesConfig(clock_expected=False))
    board = chess.Board("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    engine2 = Engine(RulesConfig(clock_expected=False), GameInfo(start_fen=board.fen()))
    del engine
    frames = []
    work = board.copy()
    work.remove_piece_at(chess.D5)  # captured pawn removed first
    frames.append(work.copy())
    work.remove_piece_at(chess.E4)
    frames.append(work.copy())
    work.set_piece_at(chess.D5, WP)
    frames.append(work.copy())
    outs = engine2.feed(snapshot(board, 0.0))
    for i, frame in enumerate(frames):
        outs += engine2.feed(snapshot(frame, 1.0 + 0.3 * i))
        outs += engine2.feed(snapshot(frame, 1.1 + 0.3 * i))  # the same frame again (every scan)
    outs += engine2.advance(5.0)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["exd5"]
    assert not codes(outs)


def test_setting_up_the_pieces_before_the_game_is_silent() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(BoardSnapshot(at=0.0, squares=(None,) * 64))  # empty board at power-up
    board = chess.Board()
    t = 1.0
    for sq in chess.SQUARES:
        piece = board.piece_at(sq)
        if piece is not None:
            outs += engine.feed(SquareChanged(at=t, square=sq, content=piece))
            t += 0.5
    outs += feed_all(engine, [SquareChanged(at=t + 5, square=chess.E2, content=None),
                              SquareChanged(at=t + 5.3, square=chess.E4, content=WP)])
    outs += engine.advance(t + 10)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]
    assert not codes(outs)


def test_reinstatement_waits_for_the_board_and_reports_a_wrong_restore() -> None:
    from boardd.core.events import Reinstate

    engine = Engine(RulesConfig(clock_expected=False))
    outs = feed_all(engine, [SquareChanged(at=0.0, square=chess.E2, content=None),
                             SquareChanged(at=0.3, square=chess.E4, content=WP)])
    outs += engine.advance(1.0)
    outs += engine.feed(Reinstate(at=2.0, ply=0))
    assert engine.state.ply == 0 and [o.to_ply for o in outs if isinstance(o, MovesRetracted)] == [0]
    # the arbiter puts the pawn back on e3 by mistake
    outs = feed_all(engine, [SquareChanged(at=3.0, square=chess.E4, content=None),
                             SquareChanged(at=3.2, square=chess.E3, content=WP)])
    outs += engine.advance(6.0)
    assert codes(outs) == ["POSITION_DIVERGENCE"]
    outs = feed_all(engine, [SquareChanged(at=7.0, square=chess.E3, content=None),
                             SquareChanged(at=7.2, square=chess.E2, content=WP)])
    assert [e.type for e in outs if isinstance(e, GameEvent)] == ["REINSTATED"]
    outs = feed_all(engine, [SquareChanged(at=8.0, square=chess.D2, content=None),
                             SquareChanged(at=8.2, square=chess.D4, content=WP)])
    outs += engine.advance(9.0)
    assert [m.san for m in engine.state.moves] == ["d4"]


def test_backwards_time_is_reported_once_per_minute_and_advance_is_not_the_event_time_line() -> None:
    engine = Engine(RulesConfig(clock_expected=False))
    outs = engine.feed(SquareChanged(at=10.0, square=chess.E2, content=None))
    for i in range(5):
        outs += engine.feed(SquareChanged(at=9.0, square=chess.H4 + i, content=None))
    assert codes(outs) == ["SENSOR_FAULT"]
    # the daemon advanced to its own "now"; an event stamped a little earlier is not a fault
    engine = Engine(RulesConfig(clock_expected=False))
    engine.feed(SquareChanged(at=1.0, square=chess.E2, content=None))
    outs = engine.advance(2.0)
    outs += engine.feed(SquareChanged(at=1.9, square=chess.E4, content=WP))
    outs += engine.advance(3.0)
    assert not codes(outs)
    assert [o.move.san for o in outs if isinstance(o, MoveMade)] == ["e4"]
