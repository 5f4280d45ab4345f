"""Without a clock the player who has just moved moves again before the reply (R13): one ``OUT_OF_TURN_CHANGE``,
and no move lost.

Making a move on the opponent's turn is an irregularity, not an illegal move (seed 004, exercise 17): raised once
when the piece is put down, nothing counted, the position before it suggested for reinstatement (7.6). If nobody
intervenes play goes on from the board (G6): the opponent's reply from the physical position makes the
out-of-turn move enter the record (``legal=False``, the opponent still to move) and the reply after it. The
arbiter reinstates (7.6) or rules without reinstating (the board's position then enters the record at once).

Before: nothing raised at all (the change was read as the mover still changing his released move) and the record
stopped there: 507 real moves lost in the 100 games of the audit's wrong-side kind (498 with the generator that
leaves out the released move changed or undone, R07/R29).
"""

from __future__ import annotations

import json
import random

import chess
import pytest

from boardd.core.contract import Publisher
from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, Reinstate, Resolve
from boardd.core.outputs import MovesRetracted, Output, Severity
from boardd.core.record import game_pgn
from boardd.core.settings import RulesConfig
from tests.core.noclock_audit import cases, judge
from tests.core.test_noclock_illegal import BN, BP, WB, WN, WP, _feed, _raised, _sq

#: the wrong side moving, two seeds: real games, random ply, random pauses and capture orders after it
CASES = [c for c in cases(7070, 160) + cases(4242, 160) if c.kind == "wrong-side"]


@pytest.mark.parametrize("chunk", range(4))
def test_no_clock_games_where_the_mover_moves_again_raise_it_once_and_lose_no_move(chunk: int) -> None:
    """Every game: OUT_OF_TURN_CHANGE raised once, nothing else above info, the record exact (the out-of-turn
    move a ``legal=False`` entry, every later move after it). Before: 0 of 80 raised, all 80 lost moves."""
    bad = []
    for case in CASES[chunk::4]:
        verdict = judge(case)
        assert verdict is not None
        if verdict.problems or verdict.lost:
            bad.append((case, verdict.lost, verdict.problems))
    assert bad == []


def test_the_samples_cover_every_edition() -> None:
    assert len(CASES) == 80
    assert {c.edition for c in CASES} == {2009, 2014, 2018, 2023}


def _strong(outs: list[Output]) -> list[str]:
    return [i.code for i in _raised(outs) if i.severity is not Severity.INFO]


def _record(engine: Engine) -> list[str]:
    return [m.uci if m.legal else "!" + m.uci for m in engine.state.moves]


def _opening(rng: random.Random) -> tuple[list[Event], float]:
    """1.e4 e5 2.Nf3 by hand with random pauses; then White's bishop f1-c4 on Black's turn. Returns the events
    and when the bishop was put down."""
    t = 1.0
    events: list[Event] = []
    for frm, to, piece in (("e2", "e4", WP), ("e7", "e5", BP), ("g1", "f3", WN), ("f1", "c4", WB)):
        events.append(_sq(t, frm, None))
        t = round(t + rng.uniform(0.15, 0.6), 3)
        events.append(_sq(t, to, piece))
        t = round(t + rng.uniform(0.8, 5.0), 3)
    return events, events[-1].at


SEEDS = range(6)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_out_of_turn_move_stands_and_the_reply_is_recorded_after_it(seed: int) -> None:
    """2.Nf3 then 3.Bc4 before Black replied; Black plays Nc6 (the capture-free reply) and White d3. One
    OUT_OF_TURN_CHANGE when the bishop is put down (the position before it to reinstate: ply 3), no illegal move
    counted; the record keeps every move: the bishop's a legal=False entry of White's, made when put down, the
    turn skipped (Black still to move), Nf3 completed by it (6.2.1.2)."""
    rng = random.Random(seed)
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=rng.choice((2009, 2014, 2018, 2023))))
    events, put = _opening(rng)
    t = round(put + rng.uniform(0.8, 5.0), 3)
    events += [_sq(t, "b8", None), _sq(t + 0.3, "c6", BN), _sq(t + 3.0, "d2", None), _sq(t + 3.3, "d3", WP)]
    outs = _feed(engine, events, t + 30.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    (oot,) = [i for i in _raised(outs) if i.code == "OUT_OF_TURN_CHANGE"]
    assert (oot.side, oot.t_raised, oot.suggestion.reinstate_ply) == (chess.WHITE, put, 3)
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "!f1c4", "b8c6", "d2d3"]
    moves = engine.state.moves
    assert [m.side for m in moves] == [chess.WHITE, chess.BLACK, chess.WHITE, chess.WHITE, chess.BLACK, chess.WHITE]
    assert moves[3].made_at == put and moves[2].completed_at == put
    assert chess.Board(moves[3].fen_after).turn == chess.BLACK
    assert (engine.state.illegal_moves_white, engine.state.illegal_moves_black) == (0, 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_arbiter_reinstates_the_position_before_it_after_the_reply(seed: int) -> None:
    """7.6: Reinstate to the finding's ply after Black's reply stood: the bishop and the reply are taken back
    (the arbiter's hands put the pieces back in random order), Black then replies again: the record is the game
    without the out-of-turn move, nothing else raised."""
    rng = random.Random(100 + seed)
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events, put = _opening(rng)
    t = round(put + rng.uniform(0.8, 5.0), 3)
    events += [_sq(t, "b8", None), _sq(t + 0.3, "c6", BN)]
    outs = _feed(engine, events, t + 2.0)
    (oot,) = [i for i in _raised(outs) if i.code == "OUT_OF_TURN_CHANGE"]
    assert oot.suggestion.reinstate_ply is not None
    outs += _feed(engine, [Reinstate(at=t + 3.0, ply=oot.suggestion.reinstate_ply)], t + 3.0)
    assert any(isinstance(o, MovesRetracted) and o.to_ply == 3 for o in outs)
    back = [("c4", None), ("f1", WB), ("c6", None), ("b8", BN)]
    pairs = [back[:2], back[2:]]
    rng.shuffle(pairs)
    at = t + 4.0
    later: list[Event] = []
    for (sq1, c1), (sq2, c2) in pairs:
        later += [_sq(at, sq1, c1), _sq(at + 0.4, sq2, c2)]
        at += 1.0
    later += [_sq(at + 2.0, "g8", None), _sq(at + 2.3, "f6", BN), _sq(at + 5.0, "d2", None), _sq(at + 5.3, "d4", WP)]
    outs += _feed(engine, later, at + 30.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "g8f6", "d2d4"]


def test_the_arbiter_reinstates_before_the_reply() -> None:
    """Reinstate while the bishop still stands on c4: the board is put back (f1), Black replies: recorded."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2018))
    events, put = _opening(random.Random(7))
    outs = _feed(engine, events, put + 2.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    outs += _feed(engine, [Reinstate(at=put + 3.0, ply=3), _sq(put + 4.0, "c4", None), _sq(put + 4.4, "f1", WB),
                           _sq(put + 7.0, "b8", None), _sq(put + 7.3, "c6", BN)], put + 30.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "b8c6"]


@pytest.mark.parametrize("accept", [True, False])
def test_a_ruling_without_reinstatement_adopts_the_board_at_once(accept: bool) -> None:
    """R13: "continue recognition from the physical position only if the arbiter confirms": resolving the
    finding (upheld or dismissed) without a reinstatement puts the out-of-turn move in the record at once,
    Black to move; his reply follows it."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events, put = _opening(random.Random(11))
    outs = _feed(engine, events, put + 2.0)
    (oot,) = [i for i in _raised(outs) if i.code == "OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e2e4", "e7e5", "g1f3"]
    outs = _feed(engine, [Resolve(at=put + 3.0, irregularity_id=oot.id, accept=accept,
                                  ruling="play on from the board")], put + 3.0)
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "!f1c4"]
    outs += _feed(engine, [_sq(put + 6.0, "b8", None), _sq(put + 6.3, "c6", BN)], put + 30.0)
    assert _strong(outs) == []
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "!f1c4", "b8c6"]


def test_put_back_by_its_player_before_the_reply() -> None:
    """The bishop taken back to f1 before Black touches anything: raised once (it happened, 6.2.5), the record
    unchanged and Black's reply recorded normally."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events, put = _opening(random.Random(3))
    events += [_sq(put + 1.5, "c4", None), _sq(put + 1.8, "f1", WB), _sq(put + 5.0, "b8", None),
               _sq(put + 5.3, "c6", BN), _sq(put + 8.0, "f1", None), _sq(put + 8.3, "b5", WB)]
    outs = _feed(engine, events, put + 30.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]


def test_the_reply_captures_victim_first() -> None:
    """1.e4 e5 2.Nf3 Nf6, then Black's bishop f8-c5 before White replied; White captures 3.Nxe5 lifting the
    victim first (a piece of the offender's colour: no reply seen yet), then the knight: judged at the knight's
    lift, 3.Nxe5 recorded after the bishop."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    bb = chess.Piece(chess.BISHOP, chess.BLACK)
    events = [_sq(1.0, "e2", None), _sq(1.3, "e4", WP), _sq(3.0, "e7", None), _sq(3.3, "e5", BP),
              _sq(5.0, "g1", None), _sq(5.3, "f3", WN), _sq(7.0, "g8", None), _sq(7.3, "f6", BN),
              _sq(9.0, "f8", None), _sq(9.3, "c5", bb),
              _sq(12.0, "e5", None), _sq(12.4, "f3", None), _sq(12.7, "e5", WN)]
    outs = _feed(engine, events, 40.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "g8f6", "!f8c5", "f3e5"]


def test_the_entry_is_marked_out_of_turn_for_the_record_the_contract_and_the_pgn() -> None:
    """The entry says what it is (an irregularity, not an illegal move: seed 004 ex. 17): ``out_of_turn`` on the
    record and the ``move`` message, ``(out of turn, f1c4)`` in the PGN's tail comment; the move number goes on
    after the skipped ply (3. Bc4 with Black to move, then 3...Nc6, as ``2... -- 3. Bc4 Nc6``)."""
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events, put = _opening(random.Random(2))
    events += [_sq(put + 3.0, "b8", None), _sq(put + 3.3, "c6", BN)]
    outs = _feed(engine, events, put + 30.0)
    moves = engine.state.moves
    assert [m.out_of_turn for m in moves] == [False, False, False, True, False]
    assert moves[3].fen_after.split()[1:] == ["b", "KQkq", "-", "0", "3"]
    assert moves[4].fen_after.split()[1] == "w" and moves[4].fen_after.split()[5] == "4"
    bodies = [json.loads(p.payload_bytes()) for p in Publisher(board="t1").render(outs, engine.state, at=put + 30.0)
              if p.topic.endswith("/move")]
    entry = [b for b in bodies if b["uci"] == "f1c4"]
    assert entry and all(b["out_of_turn"] is True and b["legal"] is False and b["side"] == "white" for b in entry)
    assert not any("out_of_turn" in b for b in bodies if b["uci"] != "f1c4")
    pgn = game_pgn(engine.state)
    assert "3. Bf1-c4 (out of turn, f1c4)" in pgn and "3... Nb8-c6" not in pgn and "move made on the opponent" in pgn


@pytest.mark.parametrize("seed", range(8))
def test_an_out_of_turn_capture_victim_first_or_last(seed: int) -> None:
    """3.Bb5, then White again 4.Bxc6 before Black replied, the knight lifted before or after the bishop (by
    chance), random pauses; Black recaptures with the b- or d-pawn (victim first or last), White plays d3. One
    OUT_OF_TURN_CHANGE (the victim lifted by White is no early start of Black's opponent: before, also
    OPPONENT_STARTED_BEFORE_MOVE_MADE), the record whole."""
    rng = random.Random(seed)
    t = 1.0
    events: list[Event] = []

    def move(frm: str, to: str, piece: chess.Piece, victim: str | None = None) -> None:
        nonlocal t
        if victim is not None and rng.random() < 0.5:
            events.append(_sq(t, victim, None))
            t = round(t + rng.uniform(0.15, 0.6), 3)
            victim = None
        events.append(_sq(t, frm, None))
        t = round(t + rng.uniform(0.15, 0.6), 3)
        if victim is not None:
            events.append(_sq(t, victim, None))
            t = round(t + rng.uniform(0.1, 0.3), 3)
        events.append(_sq(t, to, piece))
        t = round(t + rng.uniform(0.8, 5.0), 3)

    move("e2", "e4", WP)
    move("e7", "e5", BP)
    move("g1", "f3", WN)
    move("b8", "c6", BN)
    move("f1", "b5", WB)
    move("b5", "c6", WB, victim="c6")
    pawn = rng.choice(("b7", "d7"))
    move(pawn, "c6", BP, victim="c6")
    move("d2", "d3", WP)
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=rng.choice((2009, 2014, 2018, 2023))))
    outs = _feed(engine, events, t + 30.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "!b5c6", pawn + "c6", "d2d3"]


@pytest.mark.parametrize("reinstate", [None, "before", "after"])
def test_the_out_of_turn_move_put_back_before_the_reply_never_enters_the_record(reinstate: str | None) -> None:
    """1.Ke2, then White's queen d6-c7 on Black's turn (raised), put back on d6 by its player (the arbiter's
    Reinstate to the finding's ply before it, after it, or none); Black replies Qd8xd6 (the queen lifted, then
    White's). The out-of-turn move was undone on the board: it is no entry, the reply follows 1.Ke2. Before: the
    out-of-turn position was kept after the put-back, and the reply (read from it: Black's queen capturing on
    c7) entered it in the record (``!d6c7``, ``out_of_turn``) instead of the capture (the bench's games without a
    clock, the player moving twice: seed 21 of branch noclock's sample)."""
    wq, bq, wk = chess.Piece(chess.QUEEN, chess.WHITE), chess.Piece(chess.QUEEN, chess.BLACK), \
        chess.Piece(chess.KING, chess.WHITE)
    fen = "3q3k/8/3Q4/8/8/8/8/4K3 w - - 0 1"
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023, start_fen=fen))
    events: list[Event] = [_sq(1.0, "e1", None), _sq(1.4, "e2", wk), _sq(4.0, "d6", None), _sq(4.4, "c7", wq)]
    t = 7.0
    if reinstate == "before":
        events.append(Reinstate(at=t, ply=1))
        t += 1.0
    events += [_sq(t, "c7", None), _sq(t + 0.4, "d6", wq)]
    t += 2.0
    if reinstate == "after":
        events.append(Reinstate(at=t, ply=1))
        t += 1.0
    events += [_sq(t, "d8", None), _sq(t + 0.3, "d6", None), _sq(t + 0.6, "d6", bq),
               _sq(t + 3.0, "e2", None), _sq(t + 3.4, "f3", wk)]
    outs = _feed(engine, events, t + 30.0)
    (oot,) = [i for i in _raised(outs) if i.code == "OUT_OF_TURN_CHANGE"]
    assert oot.suggestion.reinstate_ply == 1
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e1e2", "d8d6", "e2f3"]


@pytest.mark.parametrize("reinstate", [False, True])
def test_the_out_of_turn_move_from_a_square_the_opponent_could_capture_on_is_no_touch_of_his(reinstate: bool) -> None:
    """1.Kd2, then White's rook h1-h3 on Black's turn (raised), put back on h1 (the arbiter's Reinstate after it,
    or none); Black plays Ka7. The rook's lift from h1, a square Black's bishop could capture on, was White's
    hand: nothing of Black's (4.3.2). Before: TOUCH_CAPTURE_SUSPECTED against Black at his move (the bench's games
    without a clock, the player moving twice: seeds 22, 33, 38, 44, 49, 51, 75 of branch noclock's sample)."""
    wr, wk, bk = chess.Piece(chess.ROOK, chess.WHITE), chess.Piece(chess.KING, chess.WHITE), \
        chess.Piece(chess.KING, chess.BLACK)
    fen = "k7/1b6/8/8/8/8/8/4K2R w - - 0 1"
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023, start_fen=fen))
    events: list[Event] = [_sq(1.0, "e1", None), _sq(1.4, "d2", wk), _sq(4.0, "h1", None), _sq(4.4, "h3", wr),
                           _sq(8.0, "h3", None), _sq(8.4, "h1", wr)]
    if reinstate:
        events.append(Reinstate(at=10.0, ply=1))
    events += [_sq(14.0, "a8", None), _sq(14.4, "a7", bk), _sq(17.0, "d2", None), _sq(17.4, "e3", wk)]
    outs = _feed(engine, events, 50.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e1d2", "a8a7", "d2e3"]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_third_move_by_the_same_player_before_the_reply_is_followed(seed: int) -> None:
    """2.Nf3, then 3.Bc4 and 4.d3 on Black's turn; Black replies Nc6, White plays Be3. One OUT_OF_TURN_CHANGE (the
    position before the bishop's move to reinstate), both out-of-turn moves in the record (``legal=False``,
    ``out_of_turn``, Black's turn skipped twice), then the reply and the game. Before: the record stopped at
    2.Nf3, the rest lost."""
    rng = random.Random(200 + seed)
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=rng.choice((2009, 2014, 2018, 2023))))
    events, put = _opening(rng)
    t = round(put + rng.uniform(0.8, 5.0), 3)
    events += [_sq(t, "d2", None), _sq(round(t + rng.uniform(0.2, 0.6), 3), "d3", WP)]
    t = round(t + rng.uniform(1.5, 5.0), 3)
    events += [_sq(t, "b8", None), _sq(t + 0.3, "c6", BN), _sq(t + 3.0, "c1", None), _sq(t + 3.3, "e3", WB)]
    outs = _feed(engine, events, t + 30.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    (oot,) = [i for i in _raised(outs) if i.code == "OUT_OF_TURN_CHANGE"]
    assert oot.suggestion.reinstate_ply == 3
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "!f1c4", "!d2d3", "b8c6", "c1e3"]
    moves = engine.state.moves
    assert [m.side for m in moves] == [True, False, True, True, True, False, True]
    assert [m.out_of_turn for m in moves] == [False, False, False, True, True, False, False]
    assert moves[3].made_at == put
    assert chess.Board(moves[4].fen_after).turn == chess.BLACK
    assert (engine.state.illegal_moves_white, engine.state.illegal_moves_black) == (0, 0)
    outs += _feed(engine, [Reinstate(at=t + 31.0, ply=3)], t + 32.0)
    assert _record(engine) == ["e2e4", "e7e5", "g1f3"]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_move_out_of_turn_slid_on_is_raised_where_it_stands(seed: int) -> None:
    """2.Nf3, then the bishop f1 set down on c4 on Black's turn and slid on within ``T_settle`` to b5 (one gesture):
    one OUT_OF_TURN_CHANGE, raised once b5 has stood ``T_settle`` (at b5's time), not only when Black replies.
    (The raise waits for the position to stand since 2035d06; the slide re-armed no timer there: the finding came
    only with the reply.)"""
    rng = random.Random(300 + seed)
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2023))
    events, put = _opening(rng)
    on = round(put + rng.uniform(0.05, 0.3), 3)
    down = round(on + rng.uniform(0.05, 0.3), 3)
    events += [_sq(on, "c4", None), _sq(down, "b5", WB)]
    outs = _feed(engine, events, down + RulesConfig().timing.t_settle + 0.05)
    (oot,) = [i for i in _raised(outs) if i.code == "OUT_OF_TURN_CHANGE"]
    assert (oot.side, oot.t_raised, oot.suggestion.reinstate_ply) == (chess.WHITE, down, 3)
    t = round(down + rng.uniform(1.0, 5.0), 3)
    outs += _feed(engine, [_sq(t, "b8", None), _sq(t + 0.3, "c6", BN)], t + 30.0)
    assert _strong(outs) == ["OUT_OF_TURN_CHANGE"]
    assert _record(engine) == ["e2e4", "e7e5", "g1f3", "!f1b5", "b8c6"]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_move_out_of_turn_put_back_at_once_then_another_is_raised(seed: int) -> None:
    """2.Nf3, then on Black's turn the bishop f1-c4 put back on f1 within ``T_settle`` (nothing stood: nothing
    raised), and a few seconds later the knight b1-c3: that one is a move out of turn, OUT_OF_TURN_CHANGE once.
    (A finding held for the first, never raised, must not keep the second from being raised.)"""
    rng = random.Random(400 + seed)
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=2018))
    events, put = _opening(rng)
    lift = round(put + rng.uniform(0.05, 0.3), 3)
    back = round(lift + rng.uniform(0.05, 0.3), 3)
    t = round(back + rng.uniform(2.0, 6.0), 3)
    events += [_sq(lift, "c4", None), _sq(back, "f1", WB), _sq(t, "b1", None), _sq(t + 0.3, "c3", WN)]
    outs = _feed(engine, events, t + 0.3 + RulesConfig().timing.t_settle + 0.05)
    assert [(i.code, i.t_raised) for i in _raised(outs) if i.severity is not Severity.INFO] == [
        ("OUT_OF_TURN_CHANGE", t + 0.3)]
