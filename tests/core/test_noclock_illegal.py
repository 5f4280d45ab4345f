"""Without a clock (``RulesConfig(clock_expected=False)``) an illegal move is judged when the opponent starts his
reply, and the game goes on being recorded (7.5.1, R16, 6.2.1.2, G6).

No press ever comes: before, an illegal move released on the board was never judged, and every move after it was
lost (the record stopped). The seeded games of :mod:`tests.core.noclock_audit` are real games with one illegal move
injected and both players playing on by hand; then the cases one by one.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess
import pytest

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, Reinstate, SquareChanged
from boardd.core.outputs import Completion, Irregularity, IrregularityRaised, MoveRecord, Output, Severity
from boardd.core.settings import RulesConfig
from tests.core.noclock_audit import cases, judge

#: geometry, self-check and illegal castling in turn (the wrong side moving is R13, see the audit module)
CASES = [c for c in cases(7070, 160) if c.kind != "wrong-side"][:120]


@pytest.mark.parametrize("chunk", range(4))
def test_no_clock_games_with_an_illegal_move_raise_it_and_lose_no_move(chunk: int) -> None:
    """Every game: ILLEGAL_MOVE raised once with the kind's subtype, nothing else above info, the record exact
    (the illegal move standing as a ``legal=False`` entry, every later move after it). Before: 0 of 120 raised,
    all 120 lost moves."""
    bad = []
    for case in CASES[chunk::4]:
        verdict = judge(case)
        assert verdict is not None
        if verdict.problems:
            bad.append((case, verdict.lost, verdict.problems))
    assert bad == []


def test_the_samples_cover_every_kind_and_edition() -> None:
    assert {c.kind for c in CASES} == {"geometry", "self-check", "castling"}
    assert {c.edition for c in CASES} == {2009, 2014, 2018, 2023}


# -- the cases one by one ----------------------------------------------------------------------------------------

WB, BN, BP = chess.Piece(chess.BISHOP, chess.WHITE), chess.Piece(chess.KNIGHT, chess.BLACK), \
    chess.Piece(chess.PAWN, chess.BLACK)
WP, WN = chess.Piece(chess.PAWN, chess.WHITE), chess.Piece(chess.KNIGHT, chess.WHITE)


def _feed(engine: Engine, events: Sequence[Event], end: float) -> list[Output]:
    outs: list[Output] = []
    for event in events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            outs += engine.advance(deadline)
        outs += engine.feed(event)
    outs += engine.advance(end)
    return outs


def _sq(at: float, square: str, piece: chess.Piece | None) -> SquareChanged:
    return SquareChanged(at=at, square=chess.parse_square(square), content=piece)


def _raised(outs: list[Output]) -> list[Irregularity]:
    return [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]


def _strong(outs: list[Output]) -> list[tuple[str, str | None]]:
    return [(i.code, i.subtype) for i in _raised(outs) if i.severity is not Severity.INFO]


#: 1.e4 e5 2.Nf3 played by hand, no clock
OPENING = [_sq(1.0, "e2", None), _sq(1.3, "e4", WP), _sq(3.0, "e7", None), _sq(3.3, "e5", BP),
           _sq(5.0, "g1", None), _sq(5.3, "f3", WN)]


@pytest.mark.parametrize("edition", [2009, 2014, 2018, 2023])
def test_an_illegal_knight_move_is_judged_when_the_reply_starts_and_the_game_goes_on(edition: int) -> None:
    """2...Ng8-g6?? (GEOMETRY) released, White replies 3.Bc4 and Black plays 3...Nc6. The illegal move is raised
    when White lifts his bishop (the reply started: the arbiter rules before White's move is made, 7.5.1; the claim
    window of A.5.2 closes when it is made), with the edition's penalty; it stands in the record and the moves after
    it are recorded. Before: nothing raised, the record stopped at 2.Nf3."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=edition))
    events = [*OPENING, _sq(7.0, "g8", None), _sq(7.4, "g6", BN),
              _sq(10.0, "f1", None), _sq(10.4, "c4", WB), _sq(12.0, "b8", None), _sq(12.3, "c6", BN)]
    outs = _feed(engine, events, 30.0)
    assert _strong(outs) == [("ILLEGAL_MOVE", "GEOMETRY")]
    (illegal,) = [i for i in _raised(outs) if i.code == "ILLEGAL_MOVE"]
    assert illegal.t_raised == 10.0  # White's first touch: the reply started
    assert (illegal.suggestion.add_to_opponent_s, illegal.suggestion.reinstate_ply) == (120, 3)  # 7.5.5, 7.5.1
    moves: list[MoveRecord] = list(engine.state.moves)
    assert [m.uci for m in moves] == ["e2e4", "e7e5", "g1f3", "g8g6", "f1c4", "b8c6"]
    assert [m.legal for m in moves] == [True, True, True, False, True, True]
    assert moves[3].made_at == 7.4  # made when the knight was put down (released), not at the reply


def test_the_reply_captures_the_illegally_moved_piece_victim_first() -> None:
    """Ng8-g6?? (GEOMETRY), White's reply captures a black pawn with the victim lifted first (a pawn of the
    offender's colour: no reply seen yet), then the capturer (3.Nxe5): judged at the capturer's lift."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events = [*OPENING, _sq(7.0, "g8", None), _sq(7.4, "g6", BN),
              _sq(10.0, "e5", None), _sq(10.3, "f3", None), _sq(10.6, "e5", WN),
              _sq(13.0, "b8", None), _sq(13.3, "c6", BN)]
    outs = _feed(engine, events, 30.0)
    assert _strong(outs) == [("ILLEGAL_MOVE", "GEOMETRY")]
    assert [i.t_raised for i in _raised(outs) if i.code == "ILLEGAL_MOVE"] == [10.3]
    assert [m.uci for m in engine.state.moves] == ["e2e4", "e7e5", "g1f3", "g8g6", "f3e5", "b8c6"]


def test_an_illegal_placement_corrected_before_the_reply_is_no_illegal_move() -> None:
    """Ng8-g6 put down and left (released, 1 s), then moved on to f6 by Black before White starts: corrected
    before completion (no press, no reply yet): no ILLEGAL_MOVE, 2...Nf6 recorded and White's reply after it."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events = [*OPENING, _sq(7.0, "g8", None), _sq(7.4, "g6", BN), _sq(8.4, "g6", None), _sq(8.7, "f6", BN),
              _sq(11.0, "b1", None), _sq(11.3, "c3", WN)]
    outs = _feed(engine, events, 30.0)
    assert [c for c, _ in _strong(outs)] == []
    assert [m.uci for m in engine.state.moves] == ["e2e4", "e7e5", "g1f3", "g8f6", "b1c3"]


def test_the_arbiters_correction_applies_as_with_a_clock() -> None:
    """7.5.1: the illegal move judged at the reply's start; the arbiter reinstates the position before it (the
    reply's knight and the offender's knight put back), the offender then moves the knight he touched (4.3):
    Ng8-f6, the record right and no other finding above info."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events = [*OPENING, _sq(7.0, "g8", None), _sq(7.4, "g6", BN), _sq(10.0, "b1", None)]
    outs = _feed(engine, events, 10.5)
    assert _strong(outs) == [("ILLEGAL_MOVE", "GEOMETRY")]
    outs += _feed(engine, [Reinstate(at=11.0, ply=3), _sq(12.0, "b1", WN), _sq(12.5, "g6", None),
                           _sq(12.8, "g8", BN), _sq(15.0, "g8", None), _sq(15.3, "f6", BN),
                           _sq(18.0, "b1", None), _sq(18.3, "c3", WN)], 40.0)
    assert _strong(outs) == [("ILLEGAL_MOVE", "GEOMETRY")]
    assert [m.uci for m in engine.state.moves] == ["e2e4", "e7e5", "g1f3", "g8f6", "b1c3"]


def test_no_clock_reading_yet_is_a_game_without_a_clock() -> None:
    """A clock expected but never read: the engine keeps time itself (facade: "or no clock reading yet"), no press
    will judge the move, so the same path judges it when the reply starts."""
    engine = Engine(RulesConfig(), GameInfo(edition=2023))
    events = [*OPENING, _sq(7.0, "g8", None), _sq(7.4, "g6", BN), _sq(10.0, "b1", None), _sq(10.3, "c3", WN)]
    outs = _feed(engine, events, 30.0)
    assert _strong(outs) == [("ILLEGAL_MOVE", "GEOMETRY")]
    assert [m.uci for m in engine.state.moves] == ["e2e4", "e7e5", "g1f3", "g8g6", "b1c3"]


def test_time_is_kept_for_the_illegal_move_as_for_a_legal_one() -> None:
    """Time is data: the illegal 2...Ng8-g6 is made when put down (7.4 s) and completes Black's 1...e5 then
    (6.2.1.2); it is completed by Black's next move (3...Nc6, 6.2.1.2), not by a press that never came; the engine's
    clock switches at 7.4 s, so every clock in the record is the one of the same game with the legal 2...Nf6 (White
    thinks 7.4-10.4 s on his own time), and 3.Bc4 took 3 s. Before: the record stopped at 2.Nf3; an intermediate
    form of the fix charged White's 3 s to Black and marked the illegal move completed by a press at 10 s."""
    def game(to: str) -> list[MoveRecord]:
        engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023, time_control="300+0"))
        _feed(engine, [*OPENING, _sq(7.0, "g8", None), _sq(7.4, to, BN), _sq(10.0, "f1", None), _sq(10.4, "c4", WB),
                       _sq(20.0, "b8", None), _sq(20.3, "c6", BN), _sq(50.0, "d2", None), _sq(50.3, "d3", WP)], 60.0)
        return list(engine.state.moves)

    illegal, legal = game("g6"), game("f6")
    assert [m.legal for m in illegal] == [True, True, True, False, True, True, True]
    assert [(m.made_at, m.completed_at, m.completion) for m in illegal] == \
        [(m.made_at, m.completed_at, m.completion) for m in legal]
    assert illegal[3].completion is Completion.NEXT_MOVE and illegal[3].completed_at == 20.3
    assert [(m.clock_white, m.clock_black) for m in illegal] == [(m.clock_white, m.clock_black) for m in legal]
    assert illegal[4].emt == legal[4].emt == pytest.approx(3.0)


def test_an_en_passant_finished_after_a_pause_is_no_illegal_move() -> None:
    """3.exd6 e.p. by hand: the pawn put on d6 and left there 1.2 s (the en passant not finished, PARTIAL), then
    the captured pawn taken off the board. Taking off a black pawn is a change of the opponent's colour, but it is
    White finishing his legal move, not Black's reply: recorded, nothing above info. Passes on main; an earlier
    form of this fix raised EN_PASSANT_INCOMPLETE_AT_PRESS here (found by replaying the false-alarm bench's clean
    games without a clock: 5 such alarms in 210 games)."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    outs = _feed(engine, [_sq(1.0, "e2", None), _sq(1.3, "e4", WP), _sq(3.0, "a7", None), _sq(3.3, "a6", BP),
                          _sq(5.0, "e4", None), _sq(5.3, "e5", WP), _sq(7.0, "d7", None), _sq(7.3, "d5", BP),
                          _sq(9.0, "e5", None), _sq(9.3, "d6", WP), _sq(10.5, "d5", None),
                          _sq(13.0, "b8", None), _sq(13.3, "c6", BN)], 30.0)
    assert _strong(outs) == []
    assert [m.uci for m in engine.state.moves] == ["e2e4", "a7a6", "e4e5", "d7d5", "e5d6", "b8c6"]
