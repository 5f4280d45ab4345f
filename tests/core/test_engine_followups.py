"""Engine follow-ups: state republished on findings, bounded can-mate, fast press completion."""

from __future__ import annotations

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Acknowledge, ClockReading, SetClock, SetOrientation, SetPlayers
from boardd.core.laws import positions
from boardd.core.laws.codes import is_illegal_move_class
from boardd.core.outputs import (
    Completion,
    IrregularityRaised,
    IrregularityUpdated,
    MoveCompleted,
    MoveMade,
    Output,
    StateChanged,
    Status,
)
from tests.core.scenario import parse, start_clock


def _feed_all(engine: Engine, events: list[object]) -> list[Output]:
    outs: list[Output] = []
    for ev in events:
        outs += engine.feed(ev)  # type: ignore[arg-type]
    return outs


def _started() -> tuple[Engine, object]:
    engine = Engine()
    clock, first = start_clock(chess.WHITE, -1.0)
    engine.feed(first)
    return engine, clock


# ---------------------------------------------------------------- 1. state republished when findings change


def test_press_without_move_raises_and_republishes_state_in_the_same_batch() -> None:
    engine, clock = _started()
    outs = _feed_all(engine, parse("0 C W", clock))  # type: ignore[arg-type]
    outs += engine.advance(1.0)
    raised = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]
    assert "CLOCK_PRESS_NO_MOVE" in [i.code for i in raised]
    assert sum(isinstance(o, StateChanged) for o in outs) == 1
    # the StateChanged comes with (after) the finding, and the state then lists it as open
    first_raise = next(i for i, o in enumerate(outs) if isinstance(o, IrregularityRaised))
    assert next(i for i, o in enumerate(outs) if isinstance(o, StateChanged)) > first_raise
    assert set(engine.state.open_irregularities) >= {i.id for i in raised}


def test_status_change_republishes_state_once() -> None:
    engine, clock = _started()
    _feed_all(engine, parse("0 C W", clock))  # type: ignore[arg-type]
    engine.advance(1.0)
    irr_id = engine.state.open_irregularities[0]
    outs = engine.feed(Acknowledge(at=2.0, irregularity_id=irr_id))
    assert [type(o) for o in outs] == [IrregularityUpdated, StateChanged]


def test_unknown_ack_changes_nothing_and_publishes_nothing() -> None:
    engine, _ = _started()
    assert engine.feed(Acknowledge(at=2.0, irregularity_id="9-99")) == []


def test_time_going_backwards_finding_republishes_state() -> None:
    engine, clock = _started()
    _feed_all(engine, parse("0 L e2 · 350 P e4 wP", clock))  # type: ignore[arg-type]
    outs = engine.feed(ClockReading(at=0.1, left=5400.0, right=5400.0, running=None))
    assert any(isinstance(o, IrregularityRaised) and o.irregularity.code == "SENSOR_FAULT" for o in outs)
    assert sum(isinstance(o, StateChanged) for o in outs) == 1


@pytest.mark.parametrize("command", [
    SetClock(at=1.0, white=3000.0, black=2000.0),
    SetPlayers(at=1.0, white="Carlsen", black="Nepo"),
    SetOrientation(at=1.0, white_at_a1=False),
])
def test_state_commands_republish_state_once(command: object) -> None:
    engine, _ = _started()
    outs = engine.feed(command)  # type: ignore[arg-type]
    assert sum(isinstance(o, StateChanged) for o in outs) == 1


def test_quiet_clock_reading_publishes_no_state() -> None:
    engine, clock = _started()
    outs = _feed_all(engine, [clock.reading(0.5), clock.reading(1.5)])  # type: ignore[attr-defined]
    assert not any(isinstance(o, StateChanged) for o in outs)


# ---------------------------------------------------------------- 2. can-mate without proof is unknown


@pytest.mark.parametrize(("fen", "color", "expected"), [
    # material certainties (python-chess): bare king, lone minor piece
    ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", chess.BLACK, False),
    ("4k3/8/8/8/8/2n5/8/4K3 w - - 0 1", chess.BLACK, False),
    # a finished game answers directly
    ("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", chess.BLACK, True),
    ("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", chess.WHITE, False),
    ("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1", chess.WHITE, False),  # stalemate
    # a locked king-and-pawn fortress: proven dead by the exhaustive closure
    ("8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/8 w - - 0 1", chess.WHITE, False),
    # everything else is unproven, whatever the piece count (no search inside feed)
    ("8/8/8/4k3/8/8/8/4K2R b - - 0 60", chess.WHITE, None),
    ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", chess.BLACK, None),
    ("8/4nk2/8/7R/3b1PP1/6K1/8/8 b - - 0 75", chess.WHITE, None),
])
def test_can_mate_answers_only_what_is_proven(fen: str, color: chess.Color, expected: bool | None) -> None:
    assert positions.can_mate_in_feed(chess.Board(fen), color) is expected


def test_can_mate_does_not_search_the_expensive_endgame() -> None:
    # laws.can_mate took about a second on this 7-piece endgame (shared machine); the engine's tier must not
    board = chess.Board("8/4nk2/8/7R/3b1PP1/6K1/8/8 b - - 0 75")
    calls: list[int] = []
    original = positions.can_mate
    assert original is not None
    try:
        positions.can_mate = lambda *a: calls.append(1)  # type: ignore[assignment,misc]
        positions.can_mate_in_feed(board, chess.WHITE)
        positions.can_mate_in_feed(board, chess.BLACK)
    finally:
        positions.can_mate = original  # type: ignore[misc]
    assert calls == []


def test_is_illegal_move_class_follows_the_edition() -> None:
    # (the shim's fallback for codes the table does not know is gone with the shim: the engine raises only
    # codes of the table, see tests/core/test_engine_modes.py)
    assert is_illegal_move_class("CLOCK_PRESS_NO_MOVE", 2014) is False
    assert is_illegal_move_class("CLOCK_PRESS_NO_MOVE", 2018) is True


def test_illegal_move_limit_with_unproven_mate_says_loss_unless_the_arbiter_finds_otherwise() -> None:
    from tests.core.test_scenarios import SCENARIOS, run

    r = run(SCENARIOS["T35"])
    limit = [i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE_LIMIT_REACHED"]
    assert [i.suggestion.result for i in limit] == ["0-1"]
    assert "unless the arbiter finds that the opponent cannot mate" in limit[0].suggestion.text


def test_illegal_move_limit_against_a_bare_king_is_a_draw() -> None:
    from tests.core.test_scenarios import SCENARIOS, run

    r = run(SCENARIOS["T36"])
    limit = [i for i in r.engine.irregularities if i.code == "ILLEGAL_MOVE_LIMIT_REACHED"]
    assert [i.suggestion.result for i in limit] == ["1/2-1/2"]


# ---------------------------------------------------------------- 3. fast completion of a clean press


def _made_e4() -> tuple[Engine, object]:
    engine, clock = _started()
    _feed_all(engine, parse("0 L e2 · 300 P e4 wP", clock))  # type: ignore[arg-type]
    made = [o for o in engine.advance(0.9) if isinstance(o, MoveMade)]
    assert [o.move.san for o in made] == ["e4"]
    return engine, clock


def test_clean_press_completes_in_the_feed_of_the_reading_itself() -> None:
    engine, clock = _made_e4()
    outs = engine.feed(clock.press(chess.WHITE, 1.0))  # type: ignore[attr-defined]
    done = [o.move for o in outs if isinstance(o, MoveCompleted)]
    assert [(m.san, m.completed_at, m.completion) for m in done] == [("e4", 1.0, Completion.PRESS)]
    assert any(isinstance(o, StateChanged) for o in outs)
    assert engine.state.moves[-1].completed_at == 1.0
    # only the bounce window is left open, and closing it changes nothing
    assert engine.next_deadline() == pytest.approx(1.0 + engine.rules.timing.t_bounce)
    assert engine.advance(2.0) == []
    assert not engine.irregularities


def test_bounce_after_a_fast_completion_keeps_the_completion() -> None:
    engine, clock = _made_e4()
    outs = engine.feed(clock.press(chess.WHITE, 1.0))  # type: ignore[attr-defined]
    outs += engine.feed(clock.press(chess.BLACK, 1.06))  # type: ignore[attr-defined]
    outs += engine.feed(clock.press(chess.WHITE, 1.12))  # type: ignore[attr-defined]
    outs += engine.advance(2.0)
    assert [o.move.completed_at for o in outs if isinstance(o, MoveCompleted)] == [1.0]
    assert [i.code for i in engine.irregularities] == ["CLOCK_BOUNCE"]
    assert not any(isinstance(o, MoveMade) for o in outs)
    assert engine.state.moves[-1].completed_at == 1.0 and engine.state.turn == chess.BLACK


def test_bounce_back_to_the_presser_withdraws_the_fast_completion() -> None:
    engine, clock = _made_e4()
    engine.feed(clock.press(chess.WHITE, 1.0))  # type: ignore[attr-defined]
    outs = engine.feed(clock.press(chess.BLACK, 1.06))  # type: ignore[attr-defined]
    assert not any(isinstance(o, IrregularityRaised) for o in outs)  # the bounce is judged when it is over
    outs = engine.advance(2.0)
    bounce = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]
    assert [i.code for i in bounce] == ["CLOCK_BOUNCE"] and "withdrawn" in bounce[0].suggestion.text
    remade = [o.move for o in outs if isinstance(o, MoveMade)]
    assert [(m.san, m.completed_at, m.completion) for m in remade] == [("e4", None, None)]
    assert isinstance(outs[-1], StateChanged)
    assert engine.state.moves[-1].completed_at is None
    # the lever back on White's side was no press by Black (T63) and the next real press completes e4
    outs = engine.feed(clock.press(chess.WHITE, 3.0))  # type: ignore[attr-defined]
    assert [o.move.completed_at for o in outs if isinstance(o, MoveCompleted)] == [3.0]
    engine.advance(4.0)
    assert [i.code for i in engine.irregularities] == ["CLOCK_BOUNCE"]


def test_reply_within_t_latency_after_a_fast_completion_is_a_post_press_event() -> None:
    engine, clock = _made_e4()
    engine.feed(clock.press(chess.WHITE, 1.0))  # type: ignore[attr-defined]
    outs = _feed_all(engine, parse("100 L e7 · 280 P e5 bP", clock, offset=1.0))  # type: ignore[arg-type]
    assert engine.physical_fen.startswith("rnbqkbnr/pppp1ppp/8/4p3/4P3")  # not buffered behind the press
    outs += engine.advance(2.0)
    made = [o.move for o in outs if isinstance(o, MoveMade)]
    assert [(m.san, round(m.made_at, 6)) for m in made] == [("e5", 1.28)]
    assert not engine.irregularities


def test_press_racing_the_placement_still_waits_for_t_latency() -> None:
    # T31: the move is not settled at the press, so the press is judged T_latency later
    engine, clock = _started()
    outs = _feed_all(engine, parse("0 L g1 · 330 C W", clock))  # type: ignore[arg-type]
    assert not any(isinstance(o, MoveCompleted) for o in outs)
    outs = _feed_all(engine, parse("400 P f3 wN", clock))  # type: ignore[arg-type]
    outs += engine.advance(1.0)
    done = [o.move for o in outs if isinstance(o, MoveCompleted)]
    assert [(m.san, m.completed_at) for m in done] == [("Nf3", 0.33)]
    assert [i.code for i in engine.irregularities] == ["LATENCY_RACE"]


def test_press_with_a_piece_in_hand_takes_the_slow_path() -> None:
    engine, clock = _made_e4()
    _feed_all(engine, parse("950 L g1", clock))  # type: ignore[arg-type]
    outs = engine.feed(clock.press(chess.WHITE, 1.0))  # type: ignore[attr-defined]
    assert not any(isinstance(o, MoveCompleted) for o in outs)
    outs = engine.advance(2.0)
    # judged T_latency later by the table of §3.5 (the made move was changed: R07)
    assert [i.code for i in engine.irregularities] == ["RELEASED_MOVE_CHANGED", "POSITION_MISMATCH_AT_PRESS"]
    assert [o.move.completed_at for o in outs if isinstance(o, MoveCompleted)] == [1.0]


def _published(script: str) -> tuple[Engine, list[tuple[str, float | None, float]]]:
    """Play *script* from the start as the daemon does (timers fired before each event); for every completion
    the move, its ``completed_at`` and how long after it the completion was published (0: at the press)."""
    engine, clock = _started()
    done: list[tuple[str, float | None, float]] = []

    def note(outs: list[Output], now: float) -> None:
        done.extend((o.move.san, o.move.completed_at, round(now - (o.move.completed_at or now), 6))
                    for o in outs if isinstance(o, MoveCompleted))

    for ev in parse(script, clock):  # type: ignore[arg-type]
        while (deadline := engine.next_deadline()) is not None and deadline < ev.at:
            note(engine.advance(deadline), deadline)
        note(engine.feed(ev), ev.at)  # type: ignore[arg-type]
    while (deadline := engine.next_deadline()) is not None:
        note(engine.advance(deadline), deadline)
    return engine, done


_LATER = "7000 L e7 · 7300 P e5 bP · 7800 C B · 9000 L g1 · 9300 P f3 wN · 9800 C W"


def _record(engine: Engine) -> list[tuple[str, float, float | None, Completion | None]]:
    return [(m.san, m.made_at, m.completed_at, m.completion) for m in engine.state.moves]


def test_after_a_reinstated_illegal_press_and_its_replacement_presses_complete_at_the_press_again() -> None:
    """§3.7: the touched pawn's replacement (4.3 via 7.5.1) ends the correction cycle; the replacement kept for
    the touch-move check no longer takes the presses to the T_latency path (publish 250 ms later for ever)."""
    incident = ("0 L e2 · 300 P e5 wP · 800 C W · 3000 L e5 · 3300 P e2 wP · 4000 C B · "
                "5000 L e2 · 5300 P e4 wP · 5800 C W · " + _LATER)
    engine, done = _published(incident)
    control, expected = _published("5000 L e2 · 5300 P e4 wP · 5800 C W · " + _LATER)
    assert [i.code for i in engine.irregularities if i.code == "ILLEGAL_MOVE"] == ["ILLEGAL_MOVE"]
    assert engine.g.replacement is not None  # kept: a later reinstatement to its ply arms touch-move again
    assert done[-3:] == expected == [("e4", 5.8, 0.0), ("e5", 7.8, 0.0), ("Nf3", 9.8, 0.0)]
    assert _record(engine) == _record(control)


def test_after_an_illegal_move_that_stood_presses_complete_at_the_press_again() -> None:
    """The illegal move stands (the opponent replied, the offender played on: the cycle closed): the next
    presses complete at the press; only the reply, while the arbiter could still put the position back, waits."""
    engine, done = _published("0 L e2 · 300 P e5 wP · 800 C W · 2000 L e7 · 2300 P e6 bP · 2800 C B · "
                              "4000 L g1 · 4300 P f3 wN · 4800 C W · 6000 L g8 · 6300 P f6 bN · 6800 C B · "
                              "8000 L b1 · 8300 P c3 wN · 8800 C W")
    latency = engine.rules.timing.t_latency
    assert [(san, ct) for san, ct, _ in done] == [("e2-e5", 0.8), ("e6", 2.8), ("Nf3", 4.8), ("Nf6", 6.8),
                                                  ("Nc3", 8.8)]
    assert [lag for _, _, lag in done[2:]] == [0.0, 0.0, 0.0]
    assert done[1][2] >= latency


def test_an_illegal_move_that_stood_and_is_found_later_still_binds_the_touched_piece() -> None:
    """7.5.1 found later: reinstated after the cycle closed, the replacement still falls under touch-move."""
    from tests.core.test_scenarios import Scn, check, run

    scn = Scn("S0", "0 L e2 · 300 P e5 wP · 800 C W · 2000 L e7 · 2300 P e6 bP · 2800 C B · 4000 L g1 · "
                    "4300 P f3 wN · 4800 C W · 5500 ARB reinstate · 5600 PAUSE · 5700 LEVER W · 6000 L f3 · "
                    "6200 P g1 wN · 6400 L e6 · 6600 P e7 bP · 6800 L e5 · 7000 P e2 wP · 7500 RESUME · "
                    "8000 L b1 · 8300 P c3 wN · 8800 C W",
              ("Nc3",), ("ILLEGAL_MOVE/GEOMETRY", "TOUCH_MOVE_VIOLATION"),
              allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    check(scn, run(scn))


# ---------------------------------------------------------------- 4. throughput shortcuts keep behaviour


def test_quick_move_key_arithmetic_agrees_with_push_for_every_legal_move() -> None:
    import random

    from boardd.core.recognizer import DiffClass, PhysicalBoard, PositionIndex

    rng = random.Random(7)
    fens = ["r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant
            "8/1P4k1/8/8/8/8/6p1/4K2R b K - 0 1",  # promotions, castling rights
            "4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1"]  # a pinned knight: its moves are not legal
    boards = [chess.Board(f) for f in fens]
    board = chess.Board()
    for _ in range(60):  # a random game for variety
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
        boards.append(board.copy(stack=False))
    checked = 0
    for official in boards:
        index = PositionIndex(official)
        for move in official.legal_moves:
            after = official.copy(stack=False)
            after.push(move)
            phys = PhysicalBoard(after)
            diff = index.classify(phys)
            assert diff.kind is DiffClass.LEGAL and diff.move == move, (official.fen(), move)
            checked += 1
        # a pseudo-move that is not legal (pinned piece, king into check) is never LEGAL
        for move in official.generate_pseudo_legal_moves():
            if official.is_legal(move):
                continue
            after = official.copy(stack=False)
            after.push(move)
            assert index.classify(PhysicalBoard(after)).kind is not DiffClass.LEGAL
    assert checked > 500


#: an illegal move (e2-e5, ply 0) that stood: Black replied and the game went on for 8 plies in all
_STOOD_8 = ("0 L e2 · 300 P e5 wP · 800 C W · 2000 L e7 · 2300 P e6 bP · 2800 C B · 4000 L d2 · 4300 P d4 wP · "
            "4800 C W · 6000 L g8 · 6300 P f6 bN · 6800 C B · 8000 L g1 · 8300 P f3 wN · 8800 C W · 10000 L f8 · "
            "10300 P e7 bB · 10800 C B · 12000 L b1 · 12300 P c3 wN · 12800 C W · 14000 L e8 · 14200 L h8 · "
            "14400 P g8 bK · 14600 P f8 bR · 14800 C B")


class _UnreadBoard:
    def key(self) -> object:
        raise AssertionError("the physical board was read")


def test_no_search_for_an_illegal_move_found_later_without_a_recent_one() -> None:
    # Correction._found_later runs at every board change while no correction is under way: without an
    # illegal-move finding of the last _TAKEBACK_DEPTH plies it has nothing to find and reads nothing
    from boardd.core.engine.common import _TAKEBACK_DEPTH

    engine, _ = _published("0 L e2 · 300 P e4 wP · 800 C W · 2000 L e7 · 2300 P e5 bP · 2800 C B")
    assert engine.g.illegal_ply == -1 and engine.correction.cycle is None
    engine.g.phys = _UnreadBoard()  # type: ignore[assignment]
    engine.correction._found_later()
    engine, _ = _published(_STOOD_8 + " · 16000 L a2 · 16300 P a3 wP · 16800 C W")
    assert engine.g.illegal_ply == 0 and len(engine.state.moves) == _TAKEBACK_DEPTH + 1
    engine.g.phys = _UnreadBoard()  # type: ignore[assignment]
    engine.correction._found_later()


@pytest.mark.parametrize(("extra", "reinstated"), [("", True), (" · 16000 L a2 · 16300 P a3 wP · 16800 C W", False)])
def test_an_illegal_move_found_later_is_reopened_up_to_the_takeback_depth(extra: str, reinstated: bool) -> None:
    """7.5.1 found later: the start position back on the board 8 plies after the illegal e2-e5 reinstates it
    (the search's depth, _TAKEBACK_DEPTH); 9 plies after, it does not (a takeback, as before the search was
    gated on the latest illegal move)."""
    from boardd.core.events import BoardSnapshot

    engine, _ = _published(_STOOD_8 + extra)
    squares = tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES)
    outs = engine.feed(BoardSnapshot(at=30.0, squares=squares)) + engine.advance(40.0)
    illegal = next(i for i in engine.irregularities if i.code == "ILLEGAL_MOVE")
    raised = [o.irregularity.code for o in outs if isinstance(o, IrregularityRaised)]
    if reinstated:
        assert illegal.status is Status.RESOLVED and illegal.ruling is not None
        assert illegal.ruling.startswith("position reinstated at ply 0") and raised == []
    else:
        assert illegal.status is Status.OPEN and raised == ["TAKEBACK_DETECTED"]
    assert engine.state.moves == ()


def test_result_gesture_needs_exactly_both_kings_on_the_centre() -> None:
    from boardd.core.events import BoardSnapshot
    from boardd.core.outputs import GameEvent

    def gesture(fen: str) -> list[str]:
        engine = Engine()
        squares = tuple(chess.Board(fen).piece_at(sq) for sq in chess.SQUARES)
        outs = engine.feed(BoardSnapshot(at=0.0, squares=squares))
        return [str(o.details["result"]) for o in outs if isinstance(o, GameEvent) and o.type == "RESULT_SIGNAL"]

    assert gesture("8/8/8/3K4/4k3/8/8/8 w - - 0 1") == ["1-0"]  # d5 and e4: both light
    assert gesture("8/8/8/8/3Kk3/8/8/8 w - - 0 1") == ["1/2-1/2"]  # d4 dark, e4 light
    assert gesture("8/8/8/4K3/3k4/8/8/8 w - - 0 1") == ["0-1"]  # e5 dark, d4 dark
    assert gesture("8/8/8/3Kk3/8/8/8/8 w - - 0 1") == ["1/2-1/2"]  # d5 light, e5 dark
    assert gesture("8/8/8/3K4/4K3/8/8/4k3 w - - 0 1") == []  # two white kings


def test_fast_clock_update_is_the_same_object_as_the_constructors_make() -> None:
    from boardd.core.engine import common as engine_module
    from boardd.core.outputs import ClockState, ClockUpdate

    old = ClockState(white=10.0, black=20.0, running=chess.BLACK, flag_white=True, flag_black=False, model="DGT3000")
    made = engine_module._clock_update(5.0, 9.0, 19.5, old)
    expected = ClockUpdate(at=5.0, clock=ClockState(white=9.0, black=19.5, running=chess.BLACK, flag_white=True,
                                                    flag_black=False, model="DGT3000"))
    assert made == expected and hash(made) == hash(expected) and repr(made) == repr(expected)
    assert engine_module._CLOCK_STATE_SET is not None  # the fast setters are in use with today's dataclasses
    with pytest.raises(AttributeError):
        made.clock.white = 1.0  # type: ignore[misc]
