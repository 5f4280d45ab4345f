"""Audit rig: Chess960 castling as hands do it on a sensor board, built from the Laws (2018/2023 Guidelines II.3,
2009/2014 Appendix F.3; rules-spec R27, R04, R16) and a DGT-class board's reports (rules-spec §2 scan granularity,
protocols.md §1.5-1.7), not from the simulator.

A case: a start array, a side and a wing; random plies from the array (no king or rook moves, so the rights stay)
until that castling is legal for the side to move (or, for the illegal categories, until it is not and why). The
hands then castle by one of the real procedures (king first, rook first, FIDE's recommended one with the king off
the board, both lifted, one scan, a swap, the king or rook left in place or lifted and put back, a lone king step,
the rook over the king), with random timing and the board's noise (slides over the squares passed, a brief wrong
placement, the place of a fast move reported before its lift). Completed by a press, or without a clock by the
opponent's next move. Under the 2018 and 2023 editions.

:func:`run` feeds one case and returns what is wrong with the engine's result ([] = right).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess

from boardd.core.engine import Engine
from boardd.core.events import Content, Event, GameInfo, SquareChanged
from boardd.core.outputs import Irregularity, IrregularityRaised, Output, Severity
from boardd.core.settings import RulesConfig
from tests.core.correction_audit_rig import Rig
from tests.core.scenario import ClockSim, start_clock

KING_ROOK = ("king_first", "rook_first", "recommended", "both_king_placed_first", "both_rook_placed_first",
             "same_scan", "king_first_slow", "rook_first_slow", "recommended_slow")
#: the piece that stays (its final square is its start) lifted and put back around the other's move
STAYS = ("other_only", "stayer_lifted_first", "stayer_off_board")
#: the "king takes rook" way (the DGT e-board software's and some GUIs' entry of a Chess960 castling, carried to
#: the board by players used to it): the rook lifted, the king put down on the rook's square for a moment or a
#: while ("linger"), then king and rook to their final squares in either order. Not in the samples of
#: :func:`cases` by default (their seeds stay as they were); swept by ``scripts/chess960_audit.py --procedure``.
KING_TAKES_ROOK = ("king_on_rook", "king_on_rook_rook_first")
NOISE = ("none", "slide", "wrong_square", "place_before_lift")

#: the info notes a legal castling may carry: the order note where a lone step settled first (slow procedures),
#: a piece lifted and put back
ORDER_NOTE = "CHESS960_CASTLING_ORDER"
#: notes on the hands and sensors, not on the move: a piece lifted and put back, a reading reverted in one scan
SENSOR_NOTES = {"ADJUST_OBSERVED", "SENSOR_FLICKER"}


@dataclass(frozen=True, slots=True)
class Case:
    seed: int
    n: int  # start array
    color: chess.Color
    kingside: bool
    edition: int
    press: bool  # a clock, pressed; else no clock (the opponent's move completes it)
    procedure: str
    noise: str


def _geometry(board: chess.Board, move: chess.Move) -> tuple[int, int, int, int]:
    rank = chess.square_rank(move.from_square)
    kingside = board.is_kingside_castling(move)
    return move.from_square, chess.square(6 if kingside else 2, rank), move.to_square, \
        chess.square(5 if kingside else 3, rank)


def castle_move(board: chess.Board, kingside: bool) -> chess.Move | None:
    """The legal castling on that wing, if any."""
    for m in board.legal_moves:
        if board.is_castling(m) and board.is_kingside_castling(m) == kingside:
            return m
    return None


def reach(rng: random.Random, n: int, color: chess.Color, kingside: bool, plies: int = 60) -> chess.Board | None:
    """Random plies from array *n* (back-rank minor pieces and queen out first, no king or rook moves, no captures
    of a rook) until *color* to move can castle on that wing."""
    board = chess.Board.from_chess960_pos(n)
    for _ in range(plies):
        if board.turn == color and castle_move(board, kingside) is not None:
            return board
        moves = [m for m in board.legal_moves if not board.is_castling(m)
                 and board.piece_type_at(m.from_square) not in (chess.KING, chess.ROOK)
                 and board.piece_type_at(m.to_square) not in (chess.ROOK, chess.KING)]
        if not moves:
            return None
        home = chess.BB_RANK_1 if board.turn == chess.WHITE else chess.BB_RANK_8
        out = [m for m in moves if chess.BB_SQUARES[m.from_square] & home]
        board.push(rng.choice(out) if out and rng.random() < 0.7 else rng.choice(moves))
        if board.is_game_over():
            return None
    return None


Step = tuple[int, Content] | str


def castling_steps(board: chess.Board, move: chess.Move, procedure: str) -> list[Step] | None:
    """The hands' lifts and places ("pause": longer than the release time; "scan": the next two in one scan)."""
    ks, kd, rs, rd = _geometry(board, move)
    king, rook = board.piece_at(ks), board.piece_at(rs)
    if procedure in KING_TAKES_ROOK:
        if ks == kd:  # the king already on its final square: nothing to put on the rook
            return None
        steps: list[Step] = [(ks, None), (rs, None), (rs, king), "linger"]
        if kd == rs:  # the rook's square is the king's final square: the king stays there
            return [*steps, (rd, rook)]
        ends: list[Step] = [(kd, king), (rd, rook)]
        return [*steps, (rs, None), *(ends[::-1] if procedure.endswith("rook_first") else ends)]
    if ks == kd or rs == rd:  # one piece stays where it is
        mover, ms, md, stayer, ss = (rook, rs, rd, king, ks) if ks == kd else (king, ks, kd, rook, rs)
        if procedure == "other_only":
            return [(ms, None), (md, mover)]
        if procedure == "stayer_lifted_first":  # the stayer touched first, put back, then the mover
            return [(ss, None), (ss, stayer), (ms, None), (md, mover)]
        if procedure == "stayer_off_board":  # the recommended procedure to the letter: the stayer off, back last
            return [(ss, None), (ms, None), (md, mover), (ss, stayer)]
        return None
    if procedure.startswith("king_first"):
        return None if kd == rs else [(ks, None), (kd, king), *(["pause"] if "slow" in procedure else []),
                                      (rs, None), (rd, rook)]
    if procedure.startswith("rook_first"):
        return None if rd == ks else [(rs, None), (rd, rook), *(["pause"] if "slow" in procedure else []),
                                      (ks, None), (kd, king)]
    if procedure.startswith("recommended"):
        return [(ks, None), (rs, None), (rd, rook), *(["pause"] if "slow" in procedure else []), (kd, king)]
    if procedure == "both_king_placed_first":
        return [(rs, None), (ks, None), (kd, king), (rd, rook)]
    if procedure == "both_rook_placed_first":
        return [(ks, None), (rs, None), (rd, rook), (kd, king)]
    if procedure == "same_scan":
        return ["scan", (ks, None), (rs, None), "scan", (kd, king), (rd, rook)]
    return None


def add_noise(board: chess.Board, steps: list[Step], noise: str, rng: random.Random) -> list[Step]:
    """The board's and hand's noise on a place: a slide (the squares passed reported), a brief wrong placement
    on a neighbouring empty square, or (handled at feeding time) the place reported before the lift."""
    if noise == "flicker":  # a piece that takes no part reads empty for a moment, somewhere in the castling
        used = {step[0] for step in steps if not isinstance(step, str)}
        others = sorted(sq for sq in board.piece_map() if sq not in used)
        sq = rng.choice(others)
        # with no other change within T_flicker (rules-spec §2.4: else it cannot be told from a touch): before the
        # first hand movement or after the last, 0.3 s clear of the others
        at = rng.choice((0, len(steps)))
        return [*steps[:at], "quiet", (sq, None), "flicker", (sq, board.piece_at(sq)), "quiet", *steps[at:]]
    if noise not in ("slide", "wrong_square"):
        return steps
    occupied = set(board.piece_map())
    out: list[Step] = []
    last_lift: int | None = None
    done = False
    for step in steps:
        if isinstance(step, str):
            out.append(step)
            continue
        sq, content = step
        if content is None:
            occupied.discard(sq)
            last_lift = sq
            out.append(step)
            continue
        if not done and last_lift is not None and noise == "slide" \
                and chess.square_rank(last_lift) == chess.square_rank(sq) and abs(last_lift - sq) > 1:
            d = 1 if sq > last_lift else -1
            path = list(range(last_lift + d, sq, d))
            if not any(p in occupied for p in path):
                for p in path:
                    out += [(p, content), (p, None)]
                done = True
        elif not done and noise == "wrong_square":
            near = [e for e in chess.SQUARES if e not in occupied and e != sq and chess.square_distance(e, sq) == 1
                    and e != last_lift]
            if near:
                e = rng.choice(near)
                out += [(e, content), "brief", (e, None)]
                done = True
        occupied.add(sq)
        out.append(step)
        last_lift = None
    return out


def travel(t: float, fed: float, sq: int, nxt: int) -> float:
    """One hand travels to the next square: about 50 ms a square at the least, yet under the release time (a
    piece standing longer is released as a move: that is what the slow procedures do)."""
    return max(t, min(fed + 0.05 * max(0, chess.square_distance(sq, nxt) - 1) + 0.02, fed + 0.38))


class Play:
    """A game from a position, fed to the engine event by event (timers fired as the daemon does)."""

    def __init__(self, start: chess.Board, *, edition: int, press: bool, rng: random.Random) -> None:
        self.board = start.copy(stack=False)
        self.rng = rng
        self.press_clock = press
        self.engine = Engine(RulesConfig(clock_expected=press),
                             GameInfo(chess960=True, start_fen=start.fen(), time_control="5400+30", edition=edition))
        self.clock = ClockSim(white=5400, black=5400, running=start.turn, lever=start.turn, last=0.0)
        self.outs: list[Output] = []
        #: the time of each square's first lift
        self.lifts: dict[int, float] = {}
        self.t = 0.3
        if press:
            self.feed(self.clock.reading(0.3))

    def feed(self, event: Event) -> None:
        while (deadline := self.engine.next_deadline()) is not None and deadline < event.at:
            self.outs += self.engine.advance(deadline)
        if isinstance(event, SquareChanged) and event.content is None:
            self.lifts.setdefault(event.square, event.at)
        self.outs += self.engine.feed(event)

    def steps(self, steps: list[Step], *, place_before_lift: bool = False, fast: bool = False) -> None:
        in_scan = 0
        pending: list[Step] = list(steps)
        i = 0
        while i < len(pending):
            step = pending[i]
            i += 1
            if step == "scan":
                in_scan = 2
                continue
            if step == "pause":
                self.t += self.rng.uniform(0.7, 1.6)
                continue
            if step == "linger":  # a piece left standing a moment or a while (under or over the release time)
                self.t += self.rng.uniform(0.0, 1.5)
                continue
            if step in ("brief", "flicker"):  # (the gap after a wrong placement or a flicker: taken before)
                continue
            if step == "quiet":  # nothing changes for 0.3 s (more than T_flicker)
                self.t += 0.3
                continue
            assert not isinstance(step, str)
            sq, content = step
            nxt = pending[i] if i < len(pending) else None
            if place_before_lift and content is None and isinstance(nxt, tuple) and nxt[1] is not None \
                    and nxt[0] != sq:
                # a fast move inside one scan: the new square read before the old one (rules-spec §2)
                self.feed(SquareChanged(at=self.t, square=nxt[0], content=nxt[1]))
                self.t += self.rng.uniform(0.0, 0.08)
                self.feed(SquareChanged(at=self.t, square=sq, content=None))
                self.t += self.rng.uniform(0.1, 0.4)
                i += 1
                continue
            self.feed(SquareChanged(at=self.t, square=sq, content=content))
            fed = self.t
            if nxt == "brief":  # a wrong placement seen and corrected at once (under the release time)
                self.t += self.rng.uniform(0.05, 0.3)
            elif nxt == "flicker":  # a sensor flicker: the square back within T_flicker
                self.t += self.rng.uniform(0.03, 0.2)
            elif content is None and isinstance(nxt, tuple) and nxt[0] == sq:  # lifted and put back: a touch
                self.t += self.rng.uniform(0.3, 0.9)
            elif in_scan:
                in_scan -= 1
                self.t += 0.0 if in_scan else self.rng.uniform(0.2, 0.3)
            elif fast:
                self.t += self.rng.uniform(0.02, 0.12)
            else:
                self.t += self.rng.choice((self.rng.uniform(0.01, 0.06), self.rng.uniform(0.1, 0.35)))
            if isinstance(nxt, tuple) and not in_scan:
                self.t = travel(self.t, fed, sq, nxt[0])

    def finish_move(self, move: chess.Move) -> None:
        if self.press_clock:
            self.t += self.rng.uniform(0.2, 0.9)
            self.feed(self.clock.press(self.board.turn, self.t))
        self.board.push(move)
        self.t += self.rng.uniform(0.8, 2.5)

    def plain(self, move: chess.Move) -> None:
        mover = self.board.piece_at(move.from_square)
        assert mover is not None
        steps: list[Step] = [(move.from_square, None)]
        if self.board.piece_at(move.to_square) is not None:
            steps.insert(self.rng.randrange(2), (move.to_square, None))
        steps.append((move.to_square, chess.Piece(move.promotion, mover.color) if move.promotion else mover))
        self.steps(steps)
        self.finish_move(move)

    def settle(self) -> None:
        self.t += 5.0
        self.outs += self.engine.advance(self.t)

    def findings(self, *severities: Severity) -> list[str]:
        return [f"{o.irregularity.code}/{o.irregularity.subtype}" if o.irregularity.subtype else o.irregularity.code
                for o in self.outs if isinstance(o, IrregularityRaised) and o.irregularity.severity in severities]

    def record(self) -> list[str]:
        return [m.uci if m.legal else "!" + m.uci for m in self.engine.state.moves]


def cases(seed: int, count: int, *, arrays: list[int] | None = None,
          procedures: tuple[str, ...] = KING_ROOK + STAYS) -> list[Case]:
    """*count* random cases (every array in *arrays* in turn, else random arrays) by one of *procedures*."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n = arrays[i % len(arrays)] if arrays else rng.randrange(960)
        out.append(Case(seed=rng.randrange(1 << 30), n=n, color=rng.choice(chess.COLORS), kingside=rng.random() < 0.5,
                        edition=rng.choice((2018, 2023)), press=rng.random() < 0.7,
                        procedure=rng.choice(procedures), noise=rng.choice(NOISE)))
    return out


def category(board: chess.Board, move: chess.Move) -> str:
    ks, kd, rs, rd = _geometry(board, move)
    if ks == kd:
        return "rook only (king on its final square)"
    if rs == rd:
        return "king only (rook on its final square)"
    if kd == rs or rd == ks:
        return "king and rook swap"
    if abs(ks - kd) == 1:
        return "king moves one square"
    if min(ks, kd) < rs < max(ks, kd) or min(rs, rd) < ks < max(rs, rd):
        return "rook passes the king"
    return "king and rook move"


def pgn_problems(pgn: str, start: chess.Board, moves: list[chess.Move]) -> list[str]:
    """The PGN as a reader takes it: ``[Variant "Chess960"]``, ``[SetUp "1"]``, ``[FEN]`` of the start (the
    array's castling rights), O-O / O-O-O, and the moves read back to the same game (python-chess's chess960
    reading: the castling is the king onto its rook)."""
    import io

    import chess.pgn

    game = chess.pgn.read_game(io.StringIO(pgn))
    if game is None:
        return ["pgn unreadable"]
    out = []
    if game.headers.get("Variant") != "Chess960" or game.headers.get("SetUp") != "1":
        out.append(f"pgn tags {dict(game.headers)}")
    if game.headers.get("FEN") != start.fen():
        out.append(f"pgn FEN {game.headers.get('FEN')} != {start.fen()}")
    if list(game.mainline_moves()) != moves or not game.board().chess960:
        out.append(f"pgn moves {[m.uci() for m in game.mainline_moves()]}")
    if not any(tok in ("O-O", "O-O-O") for tok in pgn.replace(".", " ").split()):
        out.append("pgn castling not written O-O / O-O-O")
    return out


def run(case: Case) -> tuple[str, str, list[str]]:
    """(geometry category, procedure, problems) for a legal castling; problems [] = right."""
    rng = random.Random(case.seed)
    board = reach(rng, case.n, case.color, case.kingside)
    if board is None:
        return "unreachable", case.procedure, []
    move = castle_move(board, case.kingside)
    assert move is not None
    cat = category(board, move)
    steps = castling_steps(board, move, case.procedure)
    procedure = case.procedure
    if steps is None:  # not physically possible for this geometry: the first that is
        for procedure in (*KING_ROOK, *STAYS):
            steps = castling_steps(board, move, procedure)
            if steps is not None:
                break
    assert steps is not None
    steps = add_noise(board, steps, case.noise, rng)
    play = Play(board, edition=case.edition, press=case.press, rng=rng)
    play.steps(steps, place_before_lift=case.noise == "place_before_lift")
    play.finish_move(move)
    reply = rng.choice(sorted((m for m in play.board.legal_moves if not play.board.is_castling(m)),
                              key=lambda m: m.uci()))
    play.plain(reply)
    play.settle()
    problems = []
    truth = [move.uci(), reply.uci()]
    if play.record() != truth:
        problems.append(f"record {play.record()} != {truth}")
    elif play.engine.state.moves[0].san not in ("O-O", "O-O-O"):
        problems.append(f"san {play.engine.state.moves[0].san}")
    else:
        problems += pgn_problems(play.engine.pgn(), board, [move, reply])
    strong = play.findings(Severity.WARNING, Severity.ILLEGAL_MOVE)
    ks, kd, rs, _ = _geometry(board, move)
    king_t, rook_t = play.lifts.get(ks), play.lifts.get(rs)
    # 4.4.2 (R27: 4.4 carries over): in a castling that moves the king, the rook lifted more than a scan before
    # the king -> CASTLING_ROOK_FIRST, one alert (a king-only castling too: the rook lifted and put back, or held
    # off the board, first); the rook released on its square first was a made rook move (4.7):
    # RELEASED_MOVE_CHANGED joins it. Rook-only castling has the rook first as its normal way.
    rook_first = ks != kd and rook_t is not None and king_t is not None \
        and rook_t < king_t - RulesConfig().timing.t_scan
    if rook_first:
        if "CASTLING_ROOK_FIRST" not in strong or set(strong) - {"CASTLING_ROOK_FIRST", "RELEASED_MOVE_CHANGED"} \
                or ("RELEASED_MOVE_CHANGED" in strong and "slow" not in procedure):
            problems.append(f"rook first: findings {strong}")
        primaries = [o.irregularity.code for o in play.outs if isinstance(o, IrregularityRaised)
                     and o.irregularity.severity is not Severity.INFO and o.irregularity.incident is None]
        if len(primaries) != 1:
            problems.append(f"rook first: {len(primaries)} alerts {primaries}")
    elif strong:
        problems.append(f"findings {strong}")
    info = set(play.findings(Severity.INFO)) - SENSOR_NOTES
    if info - {ORDER_NOTE} or (info and "slow" not in procedure):
        problems.append(f"info {sorted(info)}")
    return cat, f"{procedure}/{case.noise}/{'press' if case.press else 'no clock'}", problems


# -------------------------------------------------------------------------- castling the Laws do not allow (R16, R04)

WHY = ("blocked", "in_check", "attacked", "no_right")


def _path(board: chess.Board, move: chess.Move) -> set[int]:
    """The squares that must be empty but for king and rook: both paths, end squares included (II.3)."""
    ks, kd, rs, rd = _geometry(board, move)
    out: set[int] = set()
    for a, b in ((ks, kd), (rs, rd)):
        lo, hi = min(a, b), max(a, b)
        out |= set(range(lo, hi + 1))
    return out - {ks, rs}


def make_illegal(rng: random.Random, board: chess.Board, move: chess.Move, why: str) -> chess.Board | None:
    """*board* changed so that the castling *move* (legal on it) is not: a piece in the way (not on an end square,
    where the hands could not put king or rook), the king in check, a square the king crosses or lands on
    attacked, or the right gone (king or rook moved and back). None where this position cannot have it."""
    ks, kd, rs, rd = _geometry(board, move)
    side = board.turn
    out = board.copy(stack=False)
    if why == "no_right":
        out.castling_rights &= ~chess.BB_SQUARES[rs]
    elif why == "blocked":
        free = [sq for sq in _path(board, move) if sq not in (kd, rd) and board.piece_at(sq) is None]
        if not free:
            return None
        out.set_piece_at(rng.choice(free), chess.Piece(rng.choice((chess.KNIGHT, chess.BISHOP)), side))
    else:
        lo, hi = min(ks, kd), max(ks, kd)
        targets = [ks] if why == "in_check" else [sq for sq in range(lo, hi + 1) if sq != ks]
        if not targets:
            return None
        target = rng.choice(targets)
        # an enemy rook up the target's file, on one of the empty squares next up the file (the line open)
        file = chess.square_file(target)
        ranks = range(1, 8) if side == chess.WHITE else range(6, -1, -1)
        line = []
        for r in ranks:
            if out.piece_at(chess.square(file, r)) is not None:
                break
            line.append(chess.square(file, r))
        if not line:
            return None
        out.set_piece_at(rng.choice(line), chess.Piece(chess.ROOK, not side))
    for color in chess.COLORS:  # a piece added: a pawn of that side off the board (16 men at most)
        pawns = sorted(out.pieces(chess.PAWN, color))
        if chess.popcount(out.occupied_co[color]) > 16:
            if not pawns:
                return None
            out.remove_piece_at(rng.choice(pawns))
    if out.is_check() != (why == "in_check") or not out.is_valid():
        return None
    if castle_move(out, board.is_kingside_castling(move)) is not None:
        return None
    out.clear_stack()
    return out


@dataclass(frozen=True, slots=True)
class IllegalCase:
    seed: int
    n: int
    color: chess.Color
    kingside: bool
    edition: int
    why: str
    procedure: str
    correct: bool  # the arbiter's correction follows (7.5.1)


def illegal_cases(seed: int, count: int) -> list[IllegalCase]:
    rng = random.Random(seed)
    return [IllegalCase(seed=rng.randrange(1 << 30), n=rng.randrange(960), color=rng.choice(chess.COLORS),
                        kingside=rng.random() < 0.5, edition=rng.choice((2018, 2023)), why=rng.choice(WHY),
                        procedure=rng.choice(KING_ROOK + STAYS), correct=rng.random() < 0.6)
            for _ in range(count)]


def run_illegal(case: IllegalCase) -> tuple[str, str, list[str]]:
    """Castling that is illegal, done by hand and pressed: ILLEGAL_MOVE/CASTLING_ILLEGAL (R16, R04); with the
    arbiter's correction (7.5.1) from test_correction_audit's rig: the position back, a king move as the
    replacement (4.4.3, 4.7.2), play going on, one alert."""
    from boardd.core.laws.codes import is_illegal_move_class
    from tests.core.correction_audit_rig import random_hands
    from tests.core.test_correction_audit import PENALTY, _check, _correct, _finish, random_clocking

    rng = random.Random(case.seed)
    legal_board = reach(rng, case.n, case.color, case.kingside)
    if legal_board is None:
        return "unreachable", case.why, []
    move = castle_move(legal_board, case.kingside)
    assert move is not None
    board = make_illegal(rng, legal_board, move, case.why)
    if board is None:
        return "not constructible", case.why, []
    cat = category(legal_board, move)
    steps = castling_steps(board, move, case.procedure)
    procedure = case.procedure
    if steps is None:
        for procedure in (*KING_ROOK, *STAYS):
            steps = castling_steps(board, move, procedure)
            if steps is not None:
                break
    assert steps is not None
    rig = Rig960(board, edition=case.edition)
    offender = board.turn
    lifts, first = castle_and_press(rig, rng, steps, offender)
    label = f"{case.why}/{procedure}"
    codes = [(i.code, i.subtype) for i in first]
    if "slow" in procedure and [c for c, _ in codes] == ["RELEASED_MOVE_CHANGED", "ILLEGAL_MOVE"]:
        # the king or rook stood released as a legal move of its own before the other came (4.7): that move was
        # made, and the castling pressed after it is illegal: both are the arbiter's (not judged further here)
        return cat, label, [] if codes[1] == ("ILLEGAL_MOVE", "CASTLING_ILLEGAL") else [f"subtype {codes}"]
    if len(first) != 1 or not is_illegal_move_class(first[0].code, case.edition):
        return cat, label, [f"at the press: {codes}"]
    problems = []
    if codes != [("ILLEGAL_MOVE", "CASTLING_ILLEGAL")]:
        problems.append(f"subtype {codes}")
    if not case.correct:
        return cat, label, problems
    finding = first[0]
    clocking = random_clocking(rng)
    hands = random_hands(rng, noisy=clocking.paused and not clocking.pause_late)
    _correct(rig, rng, board, offender, reinstate_ply=0, hands=hands, clocking=clocking,
             penalty=PENALTY[(case.edition, "5400+30")])
    rig.t += rng.uniform(1.0, 3.0)
    # the replacement (7.5.1 with Article 4): king touched first, or king and rook inside one scan (order unknown,
    # touched together, 4.4.1) -> another king move, castling on the other wing among them (4.4.3); the rook
    # touched first -> no castling on that side, the rook moves if it can (4.4.2, 4.3.1); then any legal move
    ks, _, rs, _ = _geometry(board, move)
    king_t, rook_t = lifts.get(ks), lifts.get(rs)
    rook_first = rook_t is not None and (king_t is None or rook_t < king_t - RulesConfig().timing.t_scan)
    touched = rs if rook_first else ks
    _finish(rig, rng, touched)
    problems += _check(rig, finding)
    return cat, label, problems + ([f"hands {hands} clock {clocking}"] if problems else [])


def _finish_more(rig: Rig960, rng: random.Random, more: int = 3) -> None:
    for _ in range(more):
        moves = list(rig.board.legal_moves)
        if not moves or rig.board.is_game_over():
            break
        rig.t += rng.uniform(0.5, 2.0)
        rig.play(rng.choice(moves))
    rig.settle()


def castle_and_press(rig: Rig960, rng: random.Random, steps: list[Step],
                     offender: chess.Color) -> tuple[dict[int, float], list[Irregularity]]:
    """The castling by hand, the offender's press 0.3-0.9 s later, 0.5-3 s of quiet: (lifts, strong findings)."""
    lifts = play_steps(rig, rng, steps)
    rig.t += rng.uniform(0.3, 0.9)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    return lifts, rig.strong()


def play_steps(rig: Rig960, rng: random.Random, steps: list[Step]) -> dict[int, float]:
    """Feed the hands' steps; the time of each square's first lift."""
    lifts: dict[int, float] = {}
    in_scan = 0
    for i, step in enumerate(steps):
        if step == "scan":
            in_scan = 2
            continue
        if step == "pause":
            rig.t += rng.uniform(0.7, 1.6)
            continue
        if step == "linger":
            rig.t += rng.uniform(0.0, 1.5)
            continue
        if isinstance(step, str):
            continue
        sq, content = step
        fed = rig.t
        if content is None:
            lifts.setdefault(sq, rig.t)
            rig.lift(sq)
        else:
            assert isinstance(content, chess.Piece)
            rig.place(sq, content)
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        if content is None and isinstance(nxt, tuple) and nxt[0] == sq:  # lifted and put back: a touch
            rig.t += rng.uniform(0.3, 0.9)
        elif in_scan:
            in_scan -= 1
            rig.t += 0.0 if in_scan else rng.uniform(0.2, 0.3)
        else:
            rig.t += rng.choice((rng.uniform(0.01, 0.06), rng.uniform(0.1, 0.35)))
        if isinstance(nxt, tuple) and not in_scan:
            rig.t = travel(rig.t, fed, sq, nxt[0])
    return lifts



class Rig960(Rig):
    """The correction audit's rig on a Chess960 board (the start array's castling rights, X-FEN)."""

    def __init__(self, start: chess.Board, *, edition: int = 2023, tc: str = "5400+30") -> None:
        self.engine = Engine(RulesConfig(), GameInfo(edition=edition, time_control=tc, start_fen=start.fen(),
                                                    chess960=True))
        self.board = chess.Board(start.fen(), chess960=True)
        self.phys = dict(self.board.piece_map())
        self.outs = []
        self.clock, reading = start_clock(self.board.turn, -100.0, seconds=float(tc.split("+", maxsplit=1)[0]))
        self.feed(reading)
        self.t = 0.0


# ------------------------------------------------------- the king on its castling square, the rook never moved (4.7.2)


@dataclass(frozen=True, slots=True)
class LaterCase:
    seed: int
    n: int
    color: chess.Color  # the side that castles
    kingside: bool
    edition: int
    kind: str  # "king-only-pressed" | "found-later"


def later_cases(seed: int, count: int, kind: str) -> list[LaterCase]:
    rng = random.Random(seed)
    return [LaterCase(seed=rng.randrange(1 << 30), n=rng.randrange(960), color=rng.choice(chess.COLORS),
                      kingside=rng.random() < 0.5, edition=rng.choice((2018, 2023)), kind=kind)
            for _ in range(count)]


def run_king_released(case: LaterCase) -> tuple[str, str, list[str]]:
    """The king put on its castling square and released, the rook never moved, the clock pressed. A king step
    that is a legal king move is that move (R27: no finding). Otherwise CASTLING_INCOMPLETE_AT_PRESS (R16, the
    arbiter to verify), corrected (7.5.1): the position back, then castling on that side (4.7.2), one alert."""

    rng = random.Random(case.seed)
    board = reach(rng, case.n, case.color, case.kingside)
    if board is None:
        return "unreachable", case.kind, []
    move = castle_move(board, case.kingside)
    assert move is not None
    ks, kd, rs, rd = _geometry(board, move)
    cat = category(board, move)
    if ks == kd or rs in (rd, kd):
        return "n/a (king stays, rook stays, or king onto the rook)", case.kind, []
    rig = Rig960(board, edition=case.edition)
    king = board.piece_at(ks)
    assert king is not None
    rig.lift(ks)
    rig.t += rng.uniform(0.2, 0.6)
    rig.place(kd, king)
    rig.t += rng.uniform(0.5, 2.0)
    step = chess.Move(ks, kd)
    if step in board.legal_moves:  # a lone king step onto its castling square: the king move (R27)
        rig.board.push(step)
        rig.press(case.color)
        rig.t += 1.0
        reply = rng.choice(sorted(rig.board.legal_moves, key=lambda m: m.uci()))
        rig.play(reply)
        rig.settle()
        problems = []
        if rig.record() != [step.uci(), reply.uci()]:
            problems.append(f"record {rig.record()}")
        if rig.strong():
            problems.append(f"findings {[(i.code, i.subtype) for i in rig.strong()]}")
        return "king step (a legal king move)", case.kind, problems
    rig.press(case.color)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    codes = [(i.code, i.subtype) for i in rig.strong()]
    if codes != [("CASTLING_INCOMPLETE_AT_PRESS", None)]:
        return cat, case.kind, [f"at the press: {codes}"]
    finding = rig.strong()[0]
    problems = []
    if finding.suggestion.move != board.san(move):
        problems.append(f"suggested {finding.suggestion.move}")
    problems += corrected_then_castled(rig, rng, board, offender=case.color, move=move, finding=finding,
                                       edition=case.edition)
    return cat, case.kind, problems  # (4.7.2: castle on that side)


def corrected_then_castled(rig: Rig960, rng: random.Random, board: chess.Board, *, offender: chess.Color,
                           move: chess.Move, finding: Irregularity, edition: int,
                           allow: tuple[str, ...] = ()) -> list[str]:
    """The arbiter's correction (7.5.1: any hands and clocking, the penalty of *edition* at 90+30), then the
    castling *move* the Laws bind, a few more moves, and the check of the one alert (problems, [] = right)."""
    from tests.core.correction_audit_rig import random_hands
    from tests.core.test_correction_audit import PENALTY, _check, _correct, random_clocking

    clocking = random_clocking(rng)
    hands = random_hands(rng, noisy=clocking.paused and not clocking.pause_late)
    _correct(rig, rng, board, offender, reinstate_ply=0, hands=hands, clocking=clocking,
             penalty=PENALTY[(edition, "5400+30")])
    rig.t += rng.uniform(1.0, 3.0)
    rig.play(move)
    _finish_more(rig, rng)
    problems = _check(rig, finding, allow=allow)
    return problems + ([f"hands {hands} clock {clocking}"] if problems else [])


# ------------------------------------------------------------------ an illegal move found later, across a castling


def run_found_later(case: LaterCase) -> tuple[str, str, list[str]]:
    """7.5.1: an illegal move (not a king or rook move of the castling side's opponent... any piece but the
    king) pressed and not noticed; the opponent castles (a real procedure) and maybe the offender plays on;
    then the position before the illegal move is reinstated, from the tablet or move by move on a paused
    clock (the castling taken back by hand: king and rook back to their start squares), and play goes on."""
    import dataclasses

    from boardd.core.events import Reinstate
    from boardd.core.laws.codes import is_illegal_move_class
    from tests.core.correction_audit_rig import random_hands, restore_steps, run_steps
    from tests.core.test_correction_audit import PENALTY, _check, _correct, _finish, random_clocking
    from tests.core.test_correction_cycle import _illegal_moves

    rng = random.Random(case.seed)
    castler = case.color
    reached = reach(rng, case.n, castler, case.kingside)
    if reached is None or not reached.move_stack:
        return "unreachable", case.kind, []
    start = reached.copy()
    start.pop()  # the offender (the castler's opponent) to move, before his last move
    start = chess.Board(start.fen(), chess960=True)
    offender = start.turn
    options = []
    for ill in _illegal_moves(start):
        piece = start.piece_at(ill.from_square)
        if piece is None or piece.piece_type == chess.KING:
            continue
        after = chess.Board(None, chess960=True)
        after.set_board_fen(start.board_fen())
        after.remove_piece_at(ill.from_square)
        after.set_piece_at(ill.to_square, piece)
        after.turn = castler
        after.castling_rights = start.castling_rights & (chess.BB_RANK_1 if castler == chess.WHITE
                                                         else chess.BB_RANK_8)
        if after.is_valid() and castle_move(after, case.kingside) is not None:
            options.append((ill, after))
    if not options:
        return "no illegal move leaving the castling", case.kind, []
    ill, later = rng.choice(options)
    rig = Rig960(start, edition=case.edition)
    ply = 0
    piece = start.piece_at(ill.from_square)
    assert piece is not None
    rig.by_hand(rng, ill, piece)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    first = rig.strong()
    if len(first) != 1 or not is_illegal_move_class(first[0].code, case.edition):
        return "found later", case.kind, [f"at the press: {[(i.code, i.subtype) for i in first]}"]
    finding = first[0]
    # the castler castles by hand (any real procedure) and presses; the offender may reply
    castle = castle_move(later, case.kingside)
    assert castle is not None
    cat = category(later, castle)
    procedure = rng.choice(KING_ROOK + STAYS)
    steps = castling_steps(later, castle, procedure)
    for alt in (procedure, *KING_ROOK, *STAYS):
        steps = castling_steps(later, castle, alt)
        if steps is not None:
            procedure = alt
            break
    assert steps is not None
    rig.t += rng.uniform(0.8, 2.0)
    lifts = play_steps(rig, rng, steps)
    rig.t += rng.uniform(0.3, 0.9)
    rig.press(castler)
    ks, kd, rs, _ = _geometry(later, castle)
    # the castler's rook lifted first in a castling that moves the king (4.4.2): his own occurrence
    # (CASTLING_ROOK_FIRST, RELEASED_MOVE_CHANGED where the rook settled first), not the offender's
    castler_rook_first = ks != kd and rs in lifts and ks in lifts \
        and lifts[rs] < lifts[ks] - RulesConfig().timing.t_scan
    history = [later.copy()]
    later.push(castle)
    played = 1
    if rng.random() < 0.5:
        moves = [m for m in later.legal_moves if not later.is_castling(m) and not m.promotion
                 and not later.is_en_passant(m)]
        if moves:
            saved = rig.board
            rig.board = later
            rig.t += rng.uniform(0.5, 2.0)
            history.append(later.copy())
            rig.play(rng.choice(moves))
            rig.board = saved
            played += 1
    rig.outs += rig.engine.advance(rig.t)
    mid = [(i.code, i.subtype) for i in rig.strong() if i.id != finding.id
           and not (castler_rook_first and i.side == castler
                    and i.code in ("CASTLING_ROOK_FIRST", "RELEASED_MOVE_CHANGED"))]
    problems = [f"before the correction: {mid}"] if mid else []
    clocking = random_clocking(rng)
    hands = random_hands(rng, noisy=clocking.paused and not clocking.pause_late)
    use_tablet = rng.random() < 0.5
    if use_tablet:
        rig.feed(Reinstate(at=rig.t, ply=ply))
        rig.t += 0.5
    else:  # move by move on a paused clock: the castling taken back with the rest
        clocking = dataclasses.replace(clocking, paused=True, pause_late=False,
                                       restart=rng.choice(("lever-while-paused", "lever-after-resume")))
        rig.t += rng.uniform(0.5, 3.0)
        rig.feed(rig.clock.pause(rig.t))
        rig.t += rng.uniform(0.5, 2.0)
        for target in reversed(history):
            run_steps(rig, rng, restore_steps(rng, rig.phys, target, hands), hands)
        clocking = dataclasses.replace(clocking, paused=False, restart="resume-only")
    _correct(rig, rng, start, offender, reinstate_ply=ply, hands=hands,
             clocking=dataclasses.replace(clocking, tablet="none"), penalty=PENALTY[(case.edition, "5400+30")])
    _finish(rig, rng, ill.from_square)
    problems += _check(rig, finding, allow=("CASTLING_ROOK_FIRST", "RELEASED_MOVE_CHANGED") if castler_rook_first
                       else ())
    label = f"{procedure}/{'tablet' if use_tablet else 'by hand'}/{played} later"
    return cat, label, problems + ([f"hands {hands} clock {clocking}"] if problems else [])


def run_castling_found_later(case: LaterCase) -> tuple[str, str, list[str]]:
    """7.5.1: an illegal castling (any procedure) pressed and not noticed, the opponent replies (and maybe the
    offender plays on); the position before the castling reinstated from the tablet or move by move on a paused
    clock; the replacement the Laws bind (4.4.3 / 4.4.2 as in :func:`run_illegal`), play going on, one alert."""
    import dataclasses

    from boardd.core.events import Reinstate
    from boardd.core.laws.codes import is_illegal_move_class
    from tests.core.correction_audit_rig import random_hands, restore_steps, run_steps
    from tests.core.test_correction_audit import PENALTY, _check, _correct, _finish, random_clocking

    rng = random.Random(case.seed)
    legal_board = reach(rng, case.n, case.color, case.kingside)
    if legal_board is None:
        return "unreachable", case.kind, []
    move = castle_move(legal_board, case.kingside)
    assert move is not None
    why = rng.choice(WHY)
    board = make_illegal(rng, legal_board, move, why)
    if board is None:
        return "not constructible", case.kind, []
    cat = category(legal_board, move)
    procedure = rng.choice(KING_ROOK[:6] + STAYS)  # (not the slow ones: a released half is a move of its own)
    steps = None
    for alt in (procedure, *KING_ROOK[:6], *STAYS):
        steps = castling_steps(board, move, alt)
        if steps is not None:
            procedure = alt
            break
    assert steps is not None
    rig = Rig960(board, edition=case.edition)
    offender = board.turn
    lifts, first = castle_and_press(rig, rng, steps, offender)
    if len(first) != 1 or not is_illegal_move_class(first[0].code, case.edition):
        return cat, f"{why}/{procedure}", [f"at the press: {[(i.code, i.subtype) for i in first]}"]
    finding = first[0]
    later = chess.Board(None, chess960=True)
    later.set_board_fen(rig.engine.state.fen.split(" ")[0])
    later.turn = not offender
    history = []
    for _ in range(rng.choice((1, 2))):
        moves = [m for m in later.legal_moves if not later.is_castling(m) and not m.promotion
                 and not later.is_en_passant(m)]
        if not moves or later.is_game_over():
            break
        saved = rig.board
        rig.board = later
        rig.t += rng.uniform(0.5, 2.0)
        history.append(later.copy())
        rig.play(rng.choice(moves))
        rig.board = saved
    rig.outs += rig.engine.advance(rig.t)
    mid = [(i.code, i.subtype) for i in rig.strong() if i.id != finding.id]
    problems = [f"before the correction: {mid}"] if mid else []
    clocking = random_clocking(rng)
    hands = random_hands(rng, noisy=clocking.paused and not clocking.pause_late)
    use_tablet = rng.random() < 0.5 or len(history) < 2
    if use_tablet:
        rig.feed(Reinstate(at=rig.t, ply=0))
        rig.t += 0.5
    else:
        clocking = dataclasses.replace(clocking, paused=True, pause_late=False,
                                       restart=rng.choice(("lever-while-paused", "lever-after-resume")))
        rig.t += rng.uniform(0.5, 3.0)
        rig.feed(rig.clock.pause(rig.t))
        rig.t += rng.uniform(0.5, 2.0)
        for target in reversed(history):
            run_steps(rig, rng, restore_steps(rng, rig.phys, target, hands), hands)
        clocking = dataclasses.replace(clocking, paused=False, restart="resume-only")
    _correct(rig, rng, board, offender, reinstate_ply=0, hands=hands,
             clocking=dataclasses.replace(clocking, tablet="none"), penalty=PENALTY[(case.edition, "5400+30")])
    ks, _, rs, _ = _geometry(board, move)
    king_t, rook_t = lifts.get(ks), lifts.get(rs)
    rook_first = rook_t is not None and (king_t is None or rook_t < king_t - RulesConfig().timing.t_scan)
    rig.t += rng.uniform(1.0, 3.0)
    _finish(rig, rng, rs if rook_first else ks)
    problems += _check(rig, finding)
    label = f"{why}/{procedure}/{'tablet' if use_tablet else 'by hand'}/{len(history)} later"
    return cat, label, problems + ([f"hands {hands} clock {clocking}"] if problems else [])


# ------------------------------------------------------------- the clock pressed before the castling is finished (R16)

#: what is not yet down at the press: the rook (the king on its final square, the rook in hand or not yet
#: touched), the king (the recommended procedure pressed before the king is put on: rook on its final square), or
#: both (lifted, neither put down)
UNFINISHED = ("rook_in_hand", "rook_untouched", "king_in_hand", "both_in_hand")


def run_incomplete(case: LaterCase) -> tuple[str, str, list[str]]:
    """Castling pressed before it is finished (R16; rules-spec §3.3: king on its final square with the rook not
    yet moved or in hand, the rook moved with the king off the board -- also where the king's final square is its
    own, the king beside the board while the rook passes --, king and rook both in hand: the only legal move they
    both take part in): CASTLING_INCOMPLETE_AT_PRESS. A king or rook alone in hand, nothing put down:
    CLOCK_PRESS_PIECE_IN_HAND (nothing on the board says castling). A lone king step that is a legal king move,
    pressed: that king move (R27), nothing raised. Otherwise the hands then finish the castling on the opponent's
    time (as players do) and the opponent replies: the castling is the record, and everything raised belongs to
    the one incident (one alert: one primary finding, the others carry its id as ``incident``)."""
    rng = random.Random(case.seed)
    board = reach(rng, case.n, case.color, case.kingside)
    if board is None:
        return "unreachable", case.kind, []
    move = castle_move(board, case.kingside)
    assert move is not None
    ks, kd, rs, rd = _geometry(board, move)
    cat = category(board, move)
    king, rook = board.piece_at(ks), board.piece_at(rs)
    assert king is not None and rook is not None
    how = rng.choice(UNFINISHED)
    before: list[Step]
    after: list[Step]
    if ks == kd and how in ("king_in_hand", "both_in_hand"):
        # the recommended procedure to the letter where the king stays: the king beside the board, the rook moved
        # to its final square, pressed before the king is put back (rules-spec §3.3: castling under way)
        how = "king_off_rook_moved"
        before = [(ks, None), (rs, None), (rd, rook)]
        after = [(kd, king)]
        want = "CASTLING_INCOMPLETE_AT_PRESS"
    elif ks == kd or rs == rd:
        how = "king_in_hand" if ks != kd else "rook_in_hand"
        before = [(ks, None)] if ks != kd else [(rs, None)]
        after = [(kd, king)] if ks != kd else [(rd, rook)]
        want = "CLOCK_PRESS_PIECE_IN_HAND"
    elif how in ("rook_in_hand", "rook_untouched"):
        want = "CASTLING_INCOMPLETE_AT_PRESS"
        if kd == rs:  # the king's final square is the rook's: the rook lifted before the king can go down
            how = "rook_in_hand"
            before = [(rs, None), (ks, None), (kd, king)]
            after = [(rd, rook)]
        else:
            before = [(ks, None), (kd, king), *([(rs, None)] if how == "rook_in_hand" else [])]
            after = [*([] if how == "rook_in_hand" else [(rs, None)]), (rd, rook)]
    elif how == "king_in_hand":
        want = "CASTLING_INCOMPLETE_AT_PRESS"
        before = [(ks, None), (rs, None), (rd, rook)]
        after = [(kd, king)]
    else:  # king and rook both in hand: the castling under way (rules-spec §3.3), incomplete at the press
        want = "CASTLING_INCOMPLETE_AT_PRESS"
        before = [(ks, None), (rs, None)]
        after = [(rd, rook), (kd, king)] if rng.random() < 0.5 or kd == rs else [(kd, king), (rd, rook)]
    step = chess.Move(ks, kd)
    king_step = how == "rook_untouched" and step in board.legal_moves
    rig = Rig960(board, edition=case.edition)
    play_steps(rig, rng, before)
    rig.t += rng.uniform(0.2, 0.8)
    rig.press(case.color)
    rig.t += rng.uniform(0.5, 3.0)
    rig.outs += rig.engine.advance(rig.t)
    if king_step:  # R27: the press completes the king move
        rig.settle()
        problems = [] if rig.record() == [step.uci()] else [f"record {rig.record()}"]
        return cat, "king step pressed (a legal king move)", problems + [f"raised {[i.code for i in rig.raised()]}"
                                                                         for _ in range(bool(rig.raised()))]
    play_steps(rig, rng, after)
    board.push(move)
    rig.board = board
    rig.t += rng.uniform(0.5, 2.0)
    replies = sorted((m for m in board.legal_moves if not board.is_castling(m)), key=lambda m: m.uci())
    rig.play(rng.choice(replies))
    rig.settle()
    problems = []
    if rig.record()[:1] != [move.uci()] or len(rig.record()) != 2:
        problems.append(f"record {rig.record()}")
    primaries = [i.code for i in rig.strong() if i.incident is None]
    if primaries != [want]:
        problems.append(f"primaries {primaries} (all: {[i.code for i in rig.strong()]})")
    return cat, how, problems


# ------------------------------------------------------- castling completed wrong: king or rook on a wrong square (R16)

#: how the hands finish it wrong: the rook (king right) or the king (rook right) on a square next to or away from its
#: castled square, or king and rook each on the other's castled square (king f1 rook g1: the ends mixed up)
WRONG = ("rook_wrong", "king_wrong", "ends_mixed")
#: the articles of ILLEGAL_MOVE per edition (7.4 a / 7.5 a / 7.5.1)
ILLEGAL_ARTICLE = {2009: "7.4 a", 2014: "7.5 a", 2018: "7.5.1", 2023: "7.5.1"}


def wrong_cases(seed: int, count: int) -> list[IllegalCase]:
    """Cases of a legal castling finished with king or rook on a wrong square (``why`` = one of :data:`WRONG`),
    under all four editions."""
    rng = random.Random(seed)
    return [IllegalCase(seed=rng.randrange(1 << 30), n=rng.randrange(960), color=rng.choice(chess.COLORS),
                        kingside=rng.random() < 0.5, edition=rng.choice((2009, 2014, 2018, 2023)),
                        why=rng.choice(WRONG), procedure=rng.choice(("king_first", "recommended",
                                                                     "both_king_placed_first")),
                        correct=rng.random() < 0.6)
            for _ in range(count)]


def _wrong_ends(rng: random.Random, board: chess.Board, move: chess.Move, why: str) -> tuple[int, int] | None:
    """(king's square, rook's square) after a castling finished wrong: squares free in the castled position (or the
    castled squares themselves), never the castled pair nor a start square (that is an unfinished castling)."""
    ks, kd, rs, rd = _geometry(board, move)
    castled = board.copy(stack=False)
    castled.push(move)
    rank = chess.square_rank(ks)
    free = [chess.square(f, rank) for f in range(8) if castled.piece_at(chess.square(f, rank)) is None]
    if why == "ends_mixed":
        return rd, kd
    if why == "rook_wrong":
        spots = [sq for sq in free if sq not in (rs, kd)]
        fixed, near = kd, rd
    else:
        spots = [sq for sq in free if sq not in (ks, rd)]
        fixed, near = rd, kd
    if not spots:
        return None
    close = [sq for sq in spots if chess.square_distance(sq, near) == 1]
    pick = rng.choice(close) if close and rng.random() < 0.7 else rng.choice(spots)
    return (fixed, pick) if why == "rook_wrong" else (pick, fixed)


def run_wrong(case: IllegalCase) -> tuple[str, str, list[str]]:
    """A legal castling (king touched first, 4.4.1) finished with the king or the rook on a wrong square and
    pressed: not the castling nor any legal move, so an illegal move (7.4 a / 7.5 a / 7.5.1 by edition) with its
    penalty (two minutes to the opponent at 90+30), one alert; corrected, the castling is made (4.4.1: king and rook
    touched: castle on that side, it is legal). Where the wrong squares are themselves a legal move (a king step
    with the rook already home, a rook move with the king home) that move is recorded and nothing is raised."""
    from boardd.core.laws.codes import is_illegal_move_class
    from tests.core.test_correction_audit import PENALTY

    rng = random.Random(case.seed)
    board = reach(rng, case.n, case.color, case.kingside)
    if board is None:
        return "unreachable", case.why, []
    move = castle_move(board, case.kingside)
    assert move is not None
    ends = _wrong_ends(rng, board, move, case.why)
    ks, kd, rs, rd = _geometry(board, move)
    if ends is None or ends in ((kd, rd), (ks, rs)):
        return "not constructible", case.why, []
    cat = category(board, move)
    k2, r2 = ends
    king, rook = board.piece_at(ks), board.piece_at(rs)
    assert king is not None and rook is not None
    placed = {k2: king, r2: rook}
    lifts: list[Step] = [(ks, None)] if ks != k2 else []
    rook_steps: list[Step] = [(rs, None)] if rs != r2 else []
    procedure = case.procedure
    if procedure == "king_first" and k2 not in (rs, ks):
        steps: list[Step] = [*lifts, (k2, king), *rook_steps, *([(r2, rook)] if rs != r2 else [])]
    else:
        procedure = "recommended" if procedure == "king_first" else procedure
        downs: list[Step] = [(sq, placed[sq]) for sq in ((r2, k2) if procedure == "recommended" else (k2, r2))
                             if (sq == k2 and ks != k2) or (sq == r2 and rs != r2)]
        steps = [*lifts, *rook_steps, *downs]
    label = f"{case.why}/{procedure}/E{case.edition}"
    after = chess.BaseBoard(board.board_fen())
    after.remove_piece_at(ks)
    after.remove_piece_at(rs)
    after.set_piece_at(k2, king)
    after.set_piece_at(r2, rook)
    legal = [m for m in board.legal_moves if _placement_after(board, m) == after.board_fen()]
    rig = Rig960(board, edition=case.edition)
    offender = board.turn
    placed_at: dict[int, float] = {}
    place = rig.place

    def timed_place(sq: int, piece: chess.Piece, at: float | None = None) -> None:
        placed_at[sq] = rig.t if at is None else at
        place(sq, piece, at)

    rig.place = timed_place  # type: ignore[method-assign]
    _, first = castle_and_press(rig, rng, steps, offender)
    codes = [(i.code, i.subtype) for i in first]
    timing = RulesConfig().timing
    span = [chess.square_file(sq) for sq in (ks, kd, rs, rd)]
    # Ruling 4: king and rook put down D_far or more apart within T_simul, one of them off the castling's own squares
    # (its king's and rook's start and castled squares and between): two pieces as any, R01 (b) -> the two-hands
    # suspicion, then at the press the illegal castling and TWO_HANDS_AT_PRESS, both joined to its incident (one
    # incident, counted once: R19)
    two_hands = not legal and k2 in placed_at and r2 in placed_at \
        and abs(placed_at[k2] - placed_at[r2]) <= timing.t_simul and chess.square_distance(k2, r2) >= timing.d_far \
        and any(not min(span) <= chess.square_file(sq) <= max(span) for sq in (k2, r2))
    if two_hands:
        if codes[:1] != [("TWO_HANDS_SUSPECTED", None)] or codes[2:] != [("TWO_HANDS_AT_PRESS", None)] \
                or first[1].incident != first[0].id or first[2].incident != first[0].id:
            return cat, label, [f"two hands (R01 (b)): {codes} {[(i.id, i.incident) for i in first]}"]
        first = first[1:2]
        codes = codes[1:2]
    if legal:
        rig.board.push(legal[0])
        rig.t += 1.0
        rig.play(rng.choice(sorted(rig.board.legal_moves, key=lambda m: m.uci())))
        rig.settle()
        problems = [] if rig.record()[:1] == [legal[0].uci()] else [f"record {rig.record()}"]
        return "a legal move (not a castling)", label, problems + ([f"findings {codes}"] if codes else [])
    if len(first) != 1 or not is_illegal_move_class(first[0].code, case.edition) or first[0].code != "ILLEGAL_MOVE":
        return cat, label, [f"at the press: {codes}"]
    finding = first[0]
    problems = []
    if ILLEGAL_ARTICLE[case.edition] not in finding.articles:
        problems.append(f"articles {finding.articles}")
    penalty = PENALTY[(case.edition, "5400+30")]
    if finding.suggestion.add_to_opponent_s != penalty:
        problems.append(f"penalty {finding.suggestion.add_to_opponent_s} != {penalty}")
    castling = board.san(move)
    first_constraint = (*finding.suggestion.constraints, "")[0]
    if ks != k2 and rs != r2 and not first_constraint.startswith(castling + " (4.4.1"):
        # king and rook moved, the king touched first (every procedure here): king and rook touched to castle, the
        # castling legal (4.4.1)
        problems.append(f"constraints {finding.suggestion.constraints}")
    if ks != k2 and rs != r2 and finding.subtype != "CASTLING_ILLEGAL":
        # king and rook both moved, together, along the back rank: a castling done wrong (R16, II.3), whatever
        # the squares (a lone king or rook on a wrong square is that piece's illegal move, its own subtype)
        problems.append(f"subtype {finding.subtype}")
    if not case.correct:
        return cat, label, problems
    # 4.4.1: king and rook touched, the castling legal: castle on that side
    problems += corrected_then_castled(rig, rng, board, offender=offender, move=move, finding=finding,
                                       edition=case.edition,
                                       allow=("TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS") if two_hands else ())
    return cat, label, problems


def _placement_after(board: chess.Board, move: chess.Move) -> str:
    after = board.copy(stack=False)
    after.push(move)
    return after.board_fen()
