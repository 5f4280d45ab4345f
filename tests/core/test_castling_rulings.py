"""Three castling rulings (rules-spec R01, R04, R16, R18, R27; Laws 4.1, 4.4, 6.2, 7.5; Guidelines II.3), each
over many seeded random orders and timings, built from the Laws and hands, not from the simulator.

1. Chess960, two-piece castling (king and rook both move), the rook lifted first by more than one scan:
   the 4.4.2 case (R27: 4.4 carries over; only rook-only castling has the rook first as its normal way):
   ``CASTLING_ROOK_FIRST`` (warning), one alert. The king lifted first (king first, the recommended way with the
   king off the board, the king held while the rook is fetched, "king takes rook"), or both inside one scan
   (order unknown, touched together, 4.4.1): lawful, nothing above info.
2. A press with king AND rook both in hand during a castling (the only legal move they both take part in):
   the castling is incomplete (rules-spec §3.3: "king and rook both in hand" / "king off board" are partial
   castling states; §3.5) -> ``CASTLING_INCOMPLETE_AT_PRESS``, one alert, whatever the hands do afterwards.
3. Standard castling done the Chess960 way by one hand in sequence (the king put beside the board, the rook,
   then the king; or the king put down on the rook's square, then both to their squares) is not two hands
   (4.1); king and rook lifted together (T08) still is.
4. Chess960 king-only castling (Guidelines II.3.2.3: the rook already on its final square), the rook touched
   first: lifted and put back, or held off the board while the king moves, its lift more than one scan before the
   king's: 4.4.2 all the same (touching the rook, then the king: no castling on that side) ->
   ``CASTLING_ROOK_FIRST`` (warning), one alert, the castling recorded as played. The king lifted first, or
   rook and king inside one scan (order unknown, 4.4.1), or a rook-only castling (II.3.2.4: the rook first is its
   normal way): nothing above info.
5. "King takes rook" with the king put down on its rook's square for less than ``T_flicker`` (a moment, 20-240
   ms): a step of the castling, not a sensor glitch (rules-spec §2.4: the piece read is the king in the air beside
   the square, the rook just lifted from it). No ``SENSOR_FLICKER``, nothing above info; in standard chess the
   touch-down is the one hand's evidence (R01 (c)), as a longer one is: no ``TWO_HANDS_SUSPECTED``.
6. A press with the king alone in the hand (Chess960, the rook not touched yet, the castling legal): the code
   table's ``CLOCK_PRESS_PIECE_IN_HAND`` ("own piece still in the air"; 09/14 a warning), not
   ``CASTLING_INCOMPLETE_AT_PRESS`` ("king moved two squares, rook not": nothing was put down, and only the king
   was touched: 4.3.1 binds a king move, castling one of them; 4.4.1 needs the rook touched too, 4.7.2 the king
   released on its castling square). One alert, whether the hands then castle on the opponent's time or not.
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.settings import RulesConfig
from tests.core.chess960_audit import Rig960, castle_move, reach
from tests.core.correction_audit_rig import Rig

T_SCAN = RulesConfig().timing.t_scan
#: info notes a castling by one hand may carry: the king seen on a square it cannot go to (standard chess, "king
#: takes rook"), corrected at once; a piece lifted and put back
_INFO_NOTES = {"ILLEGAL_PLACEMENT_CORRECTED", "ADJUST_OBSERVED"}
N = 120
N960 = 160


def _geometry(board: chess.Board, move: chess.Move) -> tuple[int, int, int, int]:
    rank = chess.square_rank(move.from_square)
    kingside = board.is_kingside_castling(move)
    rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, rank)
    return (move.from_square, chess.square(6 if kingside else 2, rank), rook_from,
            chess.square(5 if kingside else 3, rank))


def _strong_primaries(rig: Rig) -> list[str]:
    return [i.code for i in rig.strong() if i.incident is None]


def _reply(rig: Rig, rng: random.Random) -> None:
    replies = sorted((m for m in rig.board.legal_moves if not rig.board.is_castling(m)), key=lambda m: m.uci())
    rig.t += rng.uniform(0.5, 2.0)
    rig.play(rng.choice(replies))
    rig.settle()


def _castle_and_reply(rig: Rig, board: chess.Board, move: chess.Move,
                      steps: list[Step], rng: random.Random) -> list[str]:
    """The castling's *steps* (square, piece or None for a lift, the wait after), the press, the opponent's reply;
    the problems with the record (it must be the castling and the reply)."""
    for sq, piece, after in steps:
        if piece is None:
            rig.lift(sq)
        else:
            rig.place(sq, piece)
        rig.t += after
    rig.t += rng.uniform(0.3, 0.9)
    rig.press(board.turn)
    board.push(move)
    rig.board = board
    _reply(rig, rng)
    return [] if rig.record()[:1] == [move.uci()] and len(rig.record()) == 2 else [f"record {rig.record()}"]


# ----------------------------------------------------------------------------------- 1. Chess960: who is touched first

Step = tuple[int, chess.Piece | None, float]  # (square, piece put down or None for a lift, seconds after it)


def _castling960_cases(count: int, seed: int) -> list[tuple[int, int, bool]]:
    rng = random.Random(seed)
    return [(rng.randrange(1 << 30), rng.randrange(960), rng.random() < 0.5) for _ in range(count)]


def _steps960(rng: random.Random, procedure: str, squares: tuple[int, int, int, int], king: chess.Piece,
              rook: chess.Piece) -> list[Step] | None:
    """The hands' lifts and places for *procedure* (None: not possible in this geometry); *squares*: the king's
    start and final squares, the rook's."""
    ks, kd, rs, rd = squares
    gap = T_SCAN + rng.uniform(0.05, 0.6)  # the rook's lift ahead of the king's: more than one scan

    def ends(hold: float) -> list[Step]:
        """King and rook, both in the air, put down in a random order the squares allow."""
        order = [(rd, rook), (kd, king)]
        if rd == ks or (kd != rs and rng.random() < 0.5):
            order.reverse()
        return [(order[0][0], order[0][1], hold), (order[1][0], order[1][1], 0.0)]

    def via_rook_square(first: list[Step]) -> list[Step]:
        """ "King takes rook": the king put down on the rook's square a moment or a while, then both to their
        squares (the king stays there when it is its final square)."""
        steps = [*first, (rs, king, rng.uniform(0.05, 1.5))]
        if kd == rs:
            return [*steps, (rd, rook, 0.0)]
        return [*steps, (rs, None, rng.uniform(0.2, 0.5)), *ends(rng.uniform(0.1, 0.4))]

    if procedure == "rook_first":  # the rook to its square (not left to be released), then the king
        if rd == ks:
            return None
        lift_gap = rng.uniform(0.12, min(0.3, gap - 0.02))
        return [(rs, None, lift_gap), (rd, rook, gap - lift_gap), (ks, None, rng.uniform(0.2, 0.35)),
                (kd, king, 0.0)]
    if procedure == "rook_first_both_in_hand":  # the rook taken, then the king, both put down
        return [(rs, None, gap), (ks, None, rng.uniform(0.25, 0.6)), *ends(rng.uniform(0.05, 0.4))]
    if procedure == "king_takes_rook_rook_first":  # the rook taken off like a victim, then the king onto its square
        return via_rook_square([(rs, None, gap), (ks, None, rng.uniform(0.25, 0.6))])
    if procedure == "recommended":  # II.3.2.5.1: the king off the board beside its square, the rook, the king
        return [(ks, None, rng.uniform(0.4, 1.2)), (rs, None, rng.uniform(0.25, 0.6)),
                (rd, rook, rng.uniform(0.3, 0.9)), (kd, king, 0.0)]
    if procedure == "king_in_hand":  # the king held while the same hand fetches the rook
        return [(ks, None, rng.uniform(0.1, 0.6)), (rs, None, rng.uniform(0.25, 0.6)), *ends(rng.uniform(0.05, 0.4))]
    if procedure == "king_takes_rook":  # the king lifted, the rook taken, the king onto the rook's square
        return via_rook_square([(ks, None, rng.uniform(0.15, 0.5)), (rs, None, rng.uniform(0.25, 0.6))])
    if procedure == "same_scan":  # rook and king lifted in one scan: order unknown, touched together (4.4.1)
        return [(rs, None, rng.uniform(0.0, 0.03)), (ks, None, rng.uniform(0.3, 0.6)), *ends(rng.uniform(0.05, 0.4))]
    raise AssertionError(procedure)


def _castle960(seed: int, n: int, kingside: bool, procedure: str) -> tuple[list[str], list[str]] | None:
    """Castle by *procedure* on array *n*, press, the opponent replies: (strong primaries, record problems)."""
    rng = random.Random(seed)
    board = reach(rng, n, rng.choice(chess.COLORS), kingside)
    if board is None:
        return None
    move = castle_move(board, kingside)
    assert move is not None
    ks, kd, rs, rd = _geometry(board, move)
    if ks == kd or rs == rd:
        return None  # one piece stays: rook-only castling has the rook first as its normal way (R27)
    king, rook = board.piece_at(ks), board.piece_at(rs)
    assert king is not None and rook is not None
    steps = _steps960(rng, procedure, (ks, kd, rs, rd), king, rook)
    if steps is None:
        return None
    rig = Rig960(board, edition=rng.choice((2014, 2018, 2023)))
    rig.t += 0.5
    problems = _castle_and_reply(rig, board, move, steps, rng)
    return _strong_primaries(rig), problems


ROOK_FIRST_960 = ("rook_first", "rook_first_both_in_hand", "king_takes_rook_rook_first")
LAWFUL_960 = ("recommended", "king_in_hand", "king_takes_rook", "same_scan")


def _run_960(procedures: tuple[str, ...], expected: list[str], seed: int) -> tuple[int, int, list[str]]:
    done = bad = 0
    shown: list[str] = []
    for i, (case_seed, n, kingside) in enumerate(_castling960_cases(N960, seed)):
        procedure = procedures[i % len(procedures)]
        out = _castle960(case_seed, n, kingside, procedure)
        if out is None:
            continue
        primaries, problems = out
        done += 1
        if primaries != expected or problems:
            bad += 1
            if len(shown) < 5:
                shown.append(f"{procedure} n={n} seed={case_seed}: {primaries} {problems}")
    return done, bad, shown


def test_chess960_rook_first_two_piece_castling_is_the_4_4_2_case() -> None:
    done, bad, shown = _run_960(ROOK_FIRST_960, ["CASTLING_ROOK_FIRST"], 9601)
    assert done >= 60
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


def test_chess960_king_first_or_together_is_lawful() -> None:
    done, bad, shown = _run_960(LAWFUL_960, [], 9602)
    assert done >= 60
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


# ------------------------------------------------------------------- 2. a press with king and rook both in the hand

STANDARD_CASTLE = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R {} KQkq - 0 1"


def _both_in_hand(seed: int, *, chess960: bool) -> tuple[list[str], list[str]] | None:
    """King and rook lifted (either first, or in one scan), the press, then the hands finish the castling on the
    opponent's time (either piece first) and the opponent replies: (strong primaries, record problems)."""
    rng = random.Random(seed)
    kingside = rng.random() < 0.5
    if chess960:
        board = reach(rng, rng.randrange(960), rng.choice(chess.COLORS), kingside)
        if board is None:
            return None
    else:
        board = chess.Board(STANDARD_CASTLE.format(rng.choice("wb")))
    move = castle_move(board, kingside)
    assert move is not None
    ks, kd, rs, rd = _geometry(board, move)
    if ks == kd or rs == rd:
        return None  # one piece alone in hand: nothing on the board says castling (CLOCK_PRESS_PIECE_IN_HAND)
    king, rook = board.piece_at(ks), board.piece_at(rs)
    assert king is not None and rook is not None
    rig: Rig = Rig960(board, edition=rng.choice((2014, 2018, 2023))) if chess960 else \
        Rig(board.fen(), edition=rng.choice((2014, 2018, 2023)))
    rig.t += 0.5
    # the king first (at once or after fetching), or both inside one scan in either order (a rook lifted first by
    # more than a scan is the rook-first case, part 1)
    first, second = (ks, rs) if rng.random() < 0.6 else (rs, ks)
    rig.lift(first)
    rig.t += rng.uniform(0.15, 0.6) if first == ks and rng.random() < 0.6 else rng.uniform(0.0, 0.05)
    rig.lift(second)
    rig.t += rng.uniform(0.2, 1.0)
    rig.press(board.turn)
    rig.t += rng.uniform(0.1, 2.5)
    ends = [(rd, rook), (kd, king)]
    if rd == ks or (kd != rs and rng.random() < 0.5):
        ends.reverse()
    for sq, piece in ends:
        rig.place(sq, piece)
        rig.t += rng.uniform(0.1, 0.6)
    board.push(move)
    rig.board = board
    _reply(rig, rng)
    problems = [] if rig.record()[:1] == [move.uci()] and len(rig.record()) == 2 else [f"record {rig.record()}"]
    strong = [i.code for i in rig.strong()]
    if "CASTLING_INCOMPLETE_AT_PRESS" not in strong or "CLOCK_PRESS_PIECE_IN_HAND" in strong:
        problems.append(f"raised {strong}")
    return _strong_primaries(rig), problems


def _run_both_in_hand(chess960: bool, seed: int) -> tuple[int, int, list[str]]:
    rng = random.Random(seed)
    done = bad = 0
    shown: list[str] = []
    for _ in range(N):
        case_seed = rng.randrange(1 << 30)
        out = _both_in_hand(case_seed, chess960=chess960)
        if out is None:
            continue
        primaries, problems = out
        done += 1
        # one alert: the castling incomplete, or (standard chess, king and rook lifted in one scan: R01 (c)) the
        # two-hands suspicion it joins
        if len(primaries) != 1 or problems:
            bad += 1
            if len(shown) < 5:
                shown.append(f"seed={case_seed}: {primaries} {problems}")
    return done, bad, shown


@pytest.mark.parametrize("chess960", [True, False], ids=["chess960", "standard"])
def test_press_with_king_and_rook_in_hand_is_castling_incomplete(chess960: bool) -> None:
    done, bad, shown = _run_both_in_hand(chess960, 9603 + chess960)
    assert done >= 60
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


# ---------------------------------------------------------- 3. standard castling the Chess960 way: one hand, in turn

def _standard_castle(seed: int, procedure: str) -> tuple[list[str], list[str]]:
    """Standard castling by *procedure*, press, the opponent replies: (codes above info, record problems)."""
    rng = random.Random(seed)
    board = chess.Board(STANDARD_CASTLE.format(rng.choice("wb")))
    move = castle_move(board, rng.random() < 0.5)
    assert move is not None
    ks, kd, rs, rd = _geometry(board, move)
    king, rook = board.piece_at(ks), board.piece_at(rs)
    assert king is not None and rook is not None
    rig = Rig(board.fen(), edition=rng.choice((2009, 2014, 2018, 2023)))
    rig.t += 0.5
    ends = [(rd, rook), (kd, king)]
    if rng.random() < 0.5:
        ends.reverse()
    steps: list[Step]
    if procedure == "king_off_board":  # II.3.2.5.1's way: the king beside the board, the rook, the king
        steps = [(ks, None, rng.uniform(0.4, 1.2)), (rs, None, rng.uniform(0.25, 0.6)),
                 (rd, rook, rng.uniform(0.3, 0.9)), (kd, king, 0.0)]
    elif procedure == "king_on_rook_square":  # "king takes rook": king, rook taken as in a capture, king on its square
        # (the king stands on the rook's square longer than T_flicker: a shorter touch-down reads as a glitch)
        steps = [(ks, None, rng.uniform(0.15, 0.3)), (rs, None, rng.uniform(0.25, 0.6)),
                 (rs, king, rng.uniform(0.3, 1.5)), (rs, None, rng.uniform(0.2, 0.5)),
                 (ends[0][0], ends[0][1], rng.uniform(0.1, 0.5)), (ends[1][0], ends[1][1], 0.0)]
    elif procedure == "two_hands":  # T08: king and rook lifted together, put down together
        first, second = (ks, rs) if rng.random() < 0.5 else (rs, ks)
        steps = [(first, None, rng.uniform(0.0, 0.06)), (second, None, rng.uniform(0.3, 0.45)),
                 (ends[0][0], ends[0][1], rng.uniform(0.0, 0.06)), (ends[1][0], ends[1][1], 0.0)]
    else:
        raise AssertionError(procedure)
    problems = _castle_and_reply(rig, board, move, steps, rng)
    return [i.code for i in rig.strong()], problems


def _run_standard(procedures: tuple[str, ...], expected: list[str], seed: int) -> tuple[int, int, list[str]]:
    rng = random.Random(seed)
    bad = 0
    shown: list[str] = []
    for i in range(N):
        case_seed = rng.randrange(1 << 30)
        procedure = procedures[i % len(procedures)]
        codes, problems = _standard_castle(case_seed, procedure)
        if codes != expected or problems:
            bad += 1
            if len(shown) < 5:
                shown.append(f"{procedure} seed={case_seed}: {codes} {problems}")
    return N, bad, shown


def test_standard_castling_the_chess960_way_is_one_hand() -> None:
    done, bad, shown = _run_standard(("king_off_board", "king_on_rook_square"), [], 9605)
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


def test_standard_castling_with_two_hands_still_suspected() -> None:
    done, bad, shown = _run_standard(("two_hands",), ["TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"], 9606)
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


# ------------------------------------------------------- 4. Chess960 king-only castling: the rook touched first

def _one_piece_steps(rng: random.Random, procedure: str, squares: tuple[int, int, int, int], king: chess.Piece,
                     rook: chess.Piece) -> list[Step]:
    """A castling where one piece stays on its square (king-only or rook-only): the hands' steps."""
    ks, kd, rs, _ = squares
    if ks == kd:  # rook-only (II.3.2.4): the rook passes the king; touching the king first or not
        rd = squares[3]
        if procedure == "rook_only_king_touched":
            return [(ks, None, rng.uniform(0.3, 0.9)), (ks, king, rng.uniform(0.1, 0.6)), (rs, None,
                    rng.uniform(0.2, 0.5)), (rd, rook, 0.0)]
        return [(rs, None, rng.uniform(0.2, 0.6)), (rd, rook, 0.0)]
    gap = T_SCAN + rng.uniform(0.05, 0.6)  # the rook's lift ahead of the king's: more than one scan
    king_step: list[Step] = [(ks, None, rng.uniform(0.2, 0.6)), (kd, king, 0.0)]
    if procedure == "rook_touched_back":  # the rook lifted and put back (on its final square), then the king
        back = rng.uniform(0.26, gap)
        return [(rs, None, back), (rs, rook, gap - back), *king_step]
    if procedure == "rook_off_board":  # the rook held off the board while the king moves, then put back
        return [(rs, None, gap), (ks, None, rng.uniform(0.2, 0.6)), (kd, king, rng.uniform(0.1, 0.5)),
                (rs, rook, 0.0)]
    if procedure == "king_then_rook_touched":  # the king lifted first, the rook lifted and put back, the king down
        return [(ks, None, rng.uniform(0.3, 0.6)), (rs, None, rng.uniform(0.3, 0.6)), (rs, rook,
                rng.uniform(0.1, 0.4)), (kd, king, 0.0)]
    if procedure == "rook_same_scan":  # rook and king lifted inside one scan: order unknown (4.4.1)
        return [(rs, None, rng.uniform(0.0, 0.03)), (ks, None, rng.uniform(0.3, 0.6)), (rs, rook,
                rng.uniform(0.1, 0.4)), (kd, king, 0.0)]
    if procedure == "king_only":  # II.3.2.3 as written: the king alone
        return king_step
    raise AssertionError(procedure)


def _run_one_piece(procedures: tuple[str, ...], expected: list[str], seed: int, *,
                   rook_only: bool = False) -> tuple[int, int, list[str]]:
    """Castlings on random arrays where the rook (or, *rook_only*, the king) stays, by *procedures* in turn, the
    press and the reply: (cases, wrong, the first wrong ones)."""
    rng = random.Random(seed)
    done = bad = tries = 0
    shown: list[str] = []
    while done < 72 and tries < 6000:
        tries += 1
        case_seed = rng.randrange(1 << 30)
        crng = random.Random(case_seed)
        kingside = crng.random() < 0.5
        board = reach(crng, crng.randrange(960), crng.choice(chess.COLORS), kingside)
        if board is None:
            continue
        move = castle_move(board, kingside)
        assert move is not None
        ks, kd, rs, rd = _geometry(board, move)
        if (ks != kd) if rook_only else (rs != rd or ks == kd):
            continue
        king, rook = board.piece_at(ks), board.piece_at(rs)
        assert king is not None and rook is not None
        procedure = procedures[done % len(procedures)]
        steps = _one_piece_steps(crng, procedure, (ks, kd, rs, rd), king, rook)
        rig = Rig960(board, edition=crng.choice((2014, 2018, 2023)))
        rig.t += 0.5
        problems = _castle_and_reply(rig, board, move, steps, crng)
        primaries = _strong_primaries(rig)
        done += 1
        if primaries != expected or [i.code for i in rig.strong()] != expected or problems:
            bad += 1
            if len(shown) < 5:
                shown.append(f"{procedure} seed={case_seed}: {[i.code for i in rig.strong()]} {problems}")
    return done, bad, shown


def test_chess960_king_only_castling_with_the_rook_touched_first_is_the_4_4_2_case() -> None:
    done, bad, shown = _run_one_piece(("rook_touched_back", "rook_off_board"), ["CASTLING_ROOK_FIRST"], 9607)
    assert done == 72
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


def test_chess960_king_only_castling_with_the_king_first_or_together_is_lawful() -> None:
    done, bad, shown = _run_one_piece(("king_then_rook_touched", "rook_same_scan", "king_only"), [], 9608)
    assert done == 72
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


def test_chess960_rook_only_castling_with_the_rook_first_is_lawful() -> None:
    done, bad, shown = _run_one_piece(("rook_only", "rook_only_king_touched"), [], 9609, rook_only=True)
    assert done == 72
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


# ----------------------------------------------- 5. "king takes rook" with a touch-down shorter than T_flicker

T_FLICKER = RulesConfig().timing.t_flicker


def _brief_king_on_rook(seed: int, *, chess960: bool) -> tuple[list[str], list[str]] | None:
    """The king lifted, the rook taken by the same hand, the king put down on the rook's square under T_flicker and
    taken up, then both to their squares in either order; press, reply: (all codes raised, record problems)."""
    rng = random.Random(seed)
    kingside = rng.random() < 0.5
    if chess960:
        board = reach(rng, rng.randrange(960), rng.choice(chess.COLORS), kingside)
        if board is None:
            return None
    else:
        board = chess.Board(STANDARD_CASTLE.format(rng.choice("wb")))
    move = castle_move(board, kingside)
    assert move is not None
    ks, kd, rs, rd = _geometry(board, move)
    if kd in (ks, rs):
        return None  # the king stays on its square, or its final square is the rook's (it stays there)
    king, rook = board.piece_at(ks), board.piece_at(rs)
    assert king is not None and rook is not None
    rig: Rig = Rig960(board, edition=rng.choice((2014, 2018, 2023))) if chess960 else \
        Rig(board.fen(), edition=rng.choice((2009, 2014, 2018, 2023)))
    rig.t += 0.5
    ends = [(rd, rook, rng.uniform(0.1, 0.5)), (kd, king, 0.0)]
    if rd == ks or rng.random() < 0.5:
        ends.reverse()
        ends = [(ends[0][0], ends[0][1], rng.uniform(0.1, 0.5)), (ends[1][0], ends[1][1], 0.0)]
    steps: list[Step] = [(ks, None, rng.uniform(0.15, 0.3)), (rs, None, rng.uniform(0.25, 0.6)),
                         (rs, king, rng.uniform(0.02, T_FLICKER - 0.01)), (rs, None, rng.uniform(0.2, 0.5)), *ends]
    problems = _castle_and_reply(rig, board, move, steps, rng)
    return [i.code for i in rig.raised()], problems


@pytest.mark.parametrize("chess960", [True, False], ids=["chess960", "standard"])
def test_king_takes_rook_with_a_brief_touch_down_is_a_castling_step(chess960: bool) -> None:
    rng = random.Random(9610 + chess960)
    done = bad = tries = 0
    shown: list[str] = []
    while done < 100 and tries < 600:
        tries += 1
        out = _brief_king_on_rook(rng.randrange(1 << 30), chess960=chess960)
        if out is None:
            continue
        codes, problems = out
        done += 1
        wrong = [c for c in codes if c == "SENSOR_FLICKER" or c not in _INFO_NOTES]
        if wrong or problems:
            bad += 1
            if len(shown) < 5:
                shown.append(f"{codes} {problems}")
    assert done == 100
    assert bad == 0, f"{bad}/{done} wrong: {shown}"


# ----------------------------------------------------- 6. a press with the king alone in the hand (Chess960)

def _lone_king_pressed(seed: int) -> tuple[list[str], list[str]] | None:
    """The king lifted (the rook untouched), the press; then the hands castle (the recommended way goes on: the
    rook, then the king) or put the king back, and the opponent replies: (primaries, problems)."""
    rng = random.Random(seed)
    kingside = rng.random() < 0.5
    board = reach(rng, rng.randrange(960), rng.choice(chess.COLORS), kingside)
    if board is None:
        return None
    move = castle_move(board, kingside)
    assert move is not None
    ks, kd, rs, rd = _geometry(board, move)
    if ks == kd:
        return None  # rook-only castling: the king has nowhere to go
    king, rook = board.piece_at(ks), board.piece_at(rs)
    assert king is not None and rook is not None
    rig = Rig960(board, edition=rng.choice((2009, 2014, 2018, 2023)))
    rig.t += 0.5
    rig.lift(ks)
    rig.t += rng.uniform(0.3, 1.2)
    rig.press(board.turn)
    rig.t += rng.uniform(0.3, 2.0)
    if rng.random() < 0.6:  # the castling finished on the opponent's time
        if rs != rd:
            rig.lift(rs)
            rig.t += rng.uniform(0.2, 0.5)
            rig.place(rd, rook)
            rig.t += rng.uniform(0.2, 0.6)
        rig.place(kd, king)
        board.push(move)
        truth = [move.uci()]
    else:  # the king put back
        rig.place(ks, king)
        truth = []
    rig.board = board
    rig.t += rng.uniform(0.5, 1.5)
    rig.outs += rig.engine.advance(rig.t)
    problems = [] if rig.record() == truth else [f"record {rig.record()} != {truth}"]
    codes = [i.code for i in rig.strong()]
    if "CASTLING_INCOMPLETE_AT_PRESS" in codes or codes[:1] != ["CLOCK_PRESS_PIECE_IN_HAND"]:
        problems.append(f"raised {codes}")
    return _strong_primaries(rig), problems


def test_press_with_the_king_alone_in_the_hand_is_a_piece_in_hand() -> None:
    rng = random.Random(9612)
    done = bad = tries = 0
    shown: list[str] = []
    while done < 100 and tries < 600:
        tries += 1
        case_seed = rng.randrange(1 << 30)
        out = _lone_king_pressed(case_seed)
        if out is None:
            continue
        primaries, problems = out
        done += 1
        if primaries != ["CLOCK_PRESS_PIECE_IN_HAND"] or problems:
            bad += 1
            if len(shown) < 5:
                shown.append(f"seed={case_seed}: {primaries} {problems}")
    assert done == 100
    assert bad == 0, f"{bad}/{done} wrong: {shown}"
