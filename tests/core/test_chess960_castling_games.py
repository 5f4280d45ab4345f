"""Chess960 castling in whole games, as players physically do it (2009/2014 Appendix F.3, 2018/2023 Guidelines
II.3; rules-spec R27), with the other pieces on the board and the game going on afterwards.

The four methods (king and rook moves, a swap, the king alone, the rook alone) and the ways hands do them: king
first, rook first, the recommended procedure (king off the board, rook, king), both lifted and placed in either
order, both lifted or placed within one board scan, the king slid square by square, the king set down on the
rook's square for a moment; with random timing, some of it slower than the release time (a king step may settle
as a move of its own before the rook comes: R27's order note, info). Each game is checked for its record, no
finding above info but CASTLING_ROOK_FIRST where king and rook both move and the rook was lifted more than a scan
before the king (4.4.2, which R27 carries over; with RELEASED_MOVE_CHANGED where that rook had settled), and its
PGN (Variant, SetUp, FEN as boardd writes them, read back by
python-chess to the same moves). Castling that the Laws do not allow (rights gone, king in check, a square
attacked or in the way) is an illegal move at the press, whatever the physical method (R04, R16).
"""

from __future__ import annotations

import io
import random
from collections import Counter

import chess
import chess.pgn
import pytest

from boardd.core.engine import Engine
from boardd.core.events import BoardSnapshot, Content, GameInfo, SquareChanged
from boardd.core.outputs import IrregularityRaised, Output, Severity
from boardd.core.settings import RulesConfig
from tests.core.scenario import ClockSim

#: the info notes a castling may carry (R27's order note; a piece lifted and put back)
ALLOWED_INFO = {"CHESS960_CASTLING_ORDER", "ADJUST_OBSERVED"}

PROCEDURES = ("king_first", "rook_first", "recommended", "both_king_placed_first", "both_rook_placed_first",
              "same_scan", "king_slide", "king_on_rook_square", "king_first_slow", "rook_first_slow")

#: one hand step: lift (piece None) or place, and whether the next step comes within one scan
Step = tuple[int, Content]


def _squares(board: chess.Board, move: chess.Move) -> tuple[int, int, int, int]:
    rank = chess.square_rank(move.from_square)
    kingside = board.is_kingside_castling(move)
    return move.from_square, chess.square(6 if kingside else 2, rank), move.to_square, \
        chess.square(5 if kingside else 3, rank)


def castling_steps(board: chess.Board, move: chess.Move, procedure: str) -> list[Step | str] | None:
    """The hand's steps for *procedure*, or None where the board does not allow it (a square still taken).

    ``"pause"`` is a wait longer than the release time; ``"scan"`` groups the next two steps in one scan.
    """
    ks, kd, rs, rd = _squares(board, move)
    king, rook = board.piece_at(ks), board.piece_at(rs)
    if ks == kd:  # rook only: the king stands on its square
        return [(rs, None), (rd, rook)] if procedure in ("rook_first", "recommended") else None
    if rs == rd:  # king only: the rook stands on its square
        if procedure == "king_slide":
            step = 1 if kd > ks else -1
            path = list(range(ks + step, kd, step))
            if any(board.piece_at(sq) is not None for sq in path):
                return None
            return [(ks, None), *[s for sq in path for s in ((sq, king), (sq, None))], (kd, king)]
        return [(ks, None), (kd, king)] if procedure in ("king_first", "recommended") else None
    if procedure in ("king_first", "king_first_slow"):
        return None if kd == rs else [(ks, None), (kd, king), *(["pause"] if "slow" in procedure else []),
                                      (rs, None), (rd, rook)]
    if procedure in ("rook_first", "rook_first_slow"):
        return None if rd == ks else [(rs, None), (rd, rook), *(["pause"] if "slow" in procedure else []),
                                      (ks, None), (kd, king)]
    if procedure == "recommended":
        return [(ks, None), (rs, None), (rd, rook), (kd, king)]
    if procedure == "both_king_placed_first":
        return [(rs, None), (ks, None), (kd, king), (rd, rook)]
    if procedure == "both_rook_placed_first":
        return [(ks, None), (rs, None), (rd, rook), (kd, king)]
    if procedure == "same_scan":
        return ["scan", (ks, None), (rs, None), "scan", (kd, king), (rd, rook)]
    if procedure == "king_slide":  # over empty squares (the rook lifted first if it is in the way)
        step = 1 if kd > ks else -1
        path = list(range(ks + step, kd, step))
        if any(board.piece_at(sq) is not None and sq != rs for sq in path):
            return None
        early = rs in path or kd == rs
        steps: list[Step | str] = [(rs, None)] if early else []
        steps.append((ks, None))
        for sq in path:
            steps += [(sq, king), (sq, None)]
        steps.append((kd, king))
        return [*steps, *([] if early else [(rs, None)]), (rd, rook)]
    if procedure == "king_on_rook_square":
        return None if kd == rs else [(rs, None), (ks, None), (rs, king), (rs, None), (kd, king), (rd, rook)]
    raise ValueError(procedure)


def rook_first_only(strong_codes: list[str], rook_first: int) -> bool:
    """The findings above info of castlings done every way: only what the *rook_first* castlings (king and rook
    both moving, the rook lifted more than a scan before the king) raise: CASTLING_ROOK_FIRST each (4.4.2, which
    R27 carries over), a RELEASED_MOVE_CHANGED with it where the rook was released on its square first (4.7)."""
    strong = Counter(strong_codes)
    return strong["CASTLING_ROOK_FIRST"] == rook_first \
        and set(strong) <= {"CASTLING_ROOK_FIRST", "RELEASED_MOVE_CHANGED"} \
        and strong["RELEASED_MOVE_CHANGED"] <= rook_first


def _plain_steps(board: chess.Board, move: chess.Move, rng: random.Random) -> list[Step | str]:
    mover = board.piece_at(move.from_square)
    assert mover is not None
    captured = move.to_square
    if board.is_en_passant(move):
        captured = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
    placed = chess.Piece(move.promotion, mover.color) if move.promotion else mover
    steps: list[Step | str] = [(move.from_square, None)]
    if board.piece_at(captured) is not None:
        steps.insert(rng.randrange(2), (captured, None))
    return [*steps, (move.to_square, placed)]


class Game:
    """A Chess960 game fed to the engine as lifts, places and presses."""

    def __init__(self, start: chess.Board, rng: random.Random, *, turned: bool = False, variant: str = "") -> None:
        self.start = start
        self.board = start.copy()
        self.rng = rng
        #: the board turned round: its squares are numbered from the far edge (raw = 63 - square)
        self.raw = (lambda sq: 63 - sq) if turned else (lambda sq: sq)
        info = GameInfo(chess960=True, start_fen=start.fen(), time_control="5400+30") if not variant else \
            GameInfo(variant=variant, chess960=variant == "chess960", time_control="5400+30")
        self.engine = Engine(RulesConfig(), info)
        self.clock = ClockSim(white=5400, black=5400, running=start.turn, lever=start.turn, last=0.0)
        self.outs: list[Output] = []
        self.outs += self.engine.feed(BoardSnapshot(at=0.0, squares=tuple(start.piece_at(self.raw(s))
                                                                          for s in chess.SQUARES)))
        self.outs += self.engine.feed(self.clock.reading(0.3))
        self.t = 0.3
        self.used: Counter[str] = Counter()
        #: castlings (king and rook both moving) whose rook was lifted more than a scan before the king (4.4.2)
        self.rook_first = 0

    def _gap(self, slide: bool) -> float:
        if slide:  # a slide: the hand does not stop on the squares it passes
            return self.rng.choice((0.0, self.rng.uniform(0.02, 0.06), self.rng.uniform(0.06, 0.15)))
        return self.rng.choice((0.0, self.rng.uniform(0.01, 0.06), self.rng.uniform(0.1, 0.35),
                                self.rng.uniform(0.45, 1.2)))

    def play(self, move: chess.Move, procedure: str | None = None, *, press: bool = True) -> None:
        steps: list[Step | str] | None = None
        if self.board.is_castling(move):
            order = [procedure] if procedure else self.rng.sample(PROCEDURES, len(PROCEDURES))
            for name in order:
                steps = castling_steps(self.board, move, name)
                if steps is not None:
                    self.used[name] += 1
                    procedure = name
                    break
        if steps is None:
            steps = _plain_steps(self.board, move, self.rng)
        slide = procedure in ("king_slide", "king_on_rook_square")
        self.t += self.rng.uniform(0.8, 3.0)
        in_scan = 0
        lifts: dict[int, float] = {}
        for step in steps:
            if step == "scan":
                in_scan = 2
                continue
            if step == "pause":
                self.t += self.rng.uniform(0.6, 1.5)
                continue
            assert not isinstance(step, str)
            square, content = step
            if content is None:
                lifts.setdefault(square, self.t)
            self.outs += self.engine.feed(SquareChanged(at=self.t, square=self.raw(square), content=content))
            if in_scan:
                in_scan -= 1
                self.t += 0.0 if in_scan else self.rng.uniform(0.2, 0.3)
            else:
                self.t += self._gap(slide)
        if press:
            self.t += self.rng.uniform(0.15, 0.9)
            self.outs += self.engine.feed(self.clock.press(self.board.turn, self.t))
        if self.board.is_castling(move):
            ks, kd, rs, rd = _squares(self.board, move)
            if ks != kd and rs != rd and lifts[rs] < lifts[ks] - RulesConfig().timing.t_scan:
                self.rook_first += 1
        self.board.push(move)

    def strong_ok(self) -> bool:
        """Nothing above info but what the rook-first castlings raise: CASTLING_ROOK_FIRST each (4.4.2, which R27
        carries over to a castling that moves king and rook), a RELEASED_MOVE_CHANGED with it where the rook was
        released on its square before the king came (4.7)."""
        return rook_first_only(self.codes(Severity.WARNING, Severity.ILLEGAL_MOVE), self.rook_first)

    def finish(self) -> None:
        self.t += 5.0
        self.outs += self.engine.advance(self.t)

    def codes(self, *severities: Severity) -> list[str]:
        return [f"{o.irregularity.code}/{o.irregularity.subtype}" if o.irregularity.subtype else o.irregularity.code
                for o in self.outs if isinstance(o, IrregularityRaised) and o.irregularity.severity in severities]


def _random_game(seed: int) -> Game:
    rng = random.Random(seed)
    start = chess.Board.from_chess960_pos(rng.randrange(960))
    game = Game(start, rng)
    for _ in range(rng.randrange(16, 44)):
        legal = list(game.board.legal_moves)
        if not legal or game.board.is_game_over():
            break
        castles = [m for m in legal if game.board.is_castling(m)]
        game.play(rng.choice(castles) if castles and rng.random() < 0.85 else rng.choice(legal))
    game.finish()
    return game


def _check_pgn(game: Game) -> None:
    pgn = chess.pgn.read_game(io.StringIO(game.engine.pgn()))
    assert pgn is not None and not pgn.errors
    assert pgn.headers.get("Variant") == "Chess960"
    # every start array states itself, the standard one (518) too (PGN's Chess960 convention, lichess's import)
    assert (pgn.headers.get("SetUp"), pgn.headers.get("FEN")) == ("1", game.start.fen())
    assert pgn.board().chess960
    assert [m.uci() for m in pgn.mainline_moves()] == [m.uci() for m in game.board.move_stack]


@pytest.mark.parametrize("chunk", range(12))
def test_chess960_games_castle_every_way_and_go_on(chunk: int) -> None:
    used: Counter[str] = Counter()
    castlings = 0
    for seed in range(chunk * 50, chunk * 50 + 50):
        game = _random_game(seed)
        assert [m.uci for m in game.engine.state.moves] == [m.uci() for m in game.board.move_stack], seed
        assert game.strong_ok(), (seed, game.codes(Severity.WARNING, Severity.ILLEGAL_MOVE))
        assert set(game.codes(Severity.INFO)) <= ALLOWED_INFO, (seed, game.codes(Severity.INFO))
        _check_pgn(game)
        used += game.used
        castlings += sum(game.used.values())
    assert castlings >= 25 and len(used) >= 6, used


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 32, 64, 100, 200, 300, 400,
                               500, 518, 600, 700, 800, 900, 950, 959])
@pytest.mark.parametrize("procedure", PROCEDURES)
def test_each_start_array_castles_both_wings_by_each_procedure(n: int, procedure: str) -> None:
    """The back rank cleared of the other pieces (so both castlings are legal at once), each colour, each wing."""
    for color in chess.COLORS:
        board = chess.Board.from_chess960_pos(n)
        for sq in chess.SquareSet(board.occupied & (chess.BB_RANK_1 | chess.BB_RANK_8)):
            if board.piece_type_at(sq) not in (chess.KING, chess.ROOK):
                board.remove_piece_at(sq)
        board.turn = color
        for move in [m for m in board.legal_moves if board.is_castling(m)]:
            if castling_steps(board, move, procedure) is None:
                continue
            game = Game(board, random.Random(n * 97 + len(procedure)))
            game.play(move, procedure)
            reply = next(m for m in sorted(game.board.legal_moves, key=lambda m: m.uci())
                         if not game.board.is_castling(m))
            game.play(reply)
            game.finish()
            assert [m.uci for m in game.engine.state.moves] == [move.uci(), reply.uci()], (n, color, move)
            assert game.engine.state.moves[0].san in ("O-O", "O-O-O")
            assert game.strong_ok(), (n, color, move, game.codes(Severity.WARNING, Severity.ILLEGAL_MOVE))
            assert set(game.codes(Severity.INFO)) <= ALLOWED_INFO
            _check_pgn(game)


# -- castling the Laws do not allow: an illegal move at the press (R04, R16) ---------------------------------------

ILLEGAL = [
    # (start, king from, king to, rook from, rook to, why)
    ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", "e1", "g1", "h1", "f1", "no castling rights"),
    ("2r1k3/8/8/8/8/8/8/RK6 w A - 0 1", "b1", "c1", "a1", "d1", "the king's square attacked"),
    ("4k3/8/8/8/8/8/8/RN2K3 w A - 0 1", "e1", "c1", "a1", "d1", "a piece on the rook's path"),
    ("4kr2/8/8/8/8/8/8/5KR1 w G - 0 1", "f1", "g1", "g1", "f1", "king and rook swap while the king is in check"),
    ("3rk3/8/8/8/8/8/8/2RK4 w C - 0 1", "d1", "c1", "c1", "d1", "king and rook swap while the king is in check"),
    ("1r2k3/8/8/8/8/8/8/1KR5 w C - 0 1", "b1", "c1", "c1", "d1", "the king in check"),
]


def _possible(case: tuple[str, ...], procedure: str) -> bool:
    """Whether a hand can castle *case* in the order *procedure*: the king cannot be put down on the rook's
    square while the rook still stands there, nor the rook on the king's."""
    _, _, king_to, rook_from, rook_to, _ = case
    return not ((procedure == "king_first" and king_to == rook_from) or
                (procedure == "rook_first" and rook_to == case[1]))


ILLEGAL_ORDERS = [(case, procedure) for case in ILLEGAL
                  for procedure in ("recommended", "king_first", "rook_first", "same_scan")
                  if _possible(case, procedure)]


@pytest.mark.parametrize(("case", "procedure"), ILLEGAL_ORDERS, ids=[f"{c[-1]}-{p}" for c, p in ILLEGAL_ORDERS])
def test_castling_the_laws_do_not_allow_is_an_illegal_move(case: tuple[str, ...], procedure: str) -> None:
    fen, kf, kt, rf, rt, why = case
    board = chess.Board(fen, chess960=True)
    king_from, king_to, rook_from, rook_to = (chess.parse_square(s) for s in (kf, kt, rf, rt))
    assert not any(board.is_castling(m) and m.from_square == king_from and m.to_square == rook_from
                   for m in board.legal_moves), why
    king, rook = board.piece_at(king_from), board.piece_at(rook_from)
    steps: list[Step | str] = {
        "recommended": [(king_from, None), (rook_from, None), (rook_to, rook), (king_to, king)],
        "king_first": [(king_from, None), (king_to, king), (rook_from, None), (rook_to, rook)],
        "rook_first": [(rook_from, None), (rook_to, rook), (king_from, None), (king_to, king)],
        "same_scan": ["scan", (king_from, None), (rook_from, None), "scan", (king_to, king), (rook_to, rook)],
    }[procedure]
    game = Game(board, random.Random(7))
    game.board = board.copy()
    game.t += 1.0
    in_scan = 0
    for step in steps:
        if step == "scan":
            in_scan = 2
            continue
        assert not isinstance(step, str)
        game.outs += game.engine.feed(SquareChanged(at=game.t, square=step[0], content=step[1]))
        if in_scan:
            in_scan -= 1
            game.t += 0.0 if in_scan else 0.25
        else:
            game.t += 0.3
    game.t += 0.5
    game.outs += game.engine.feed(game.clock.press(chess.WHITE, game.t))
    game.finish()
    assert "ILLEGAL_MOVE/CASTLING_ILLEGAL" in game.codes(Severity.ILLEGAL_MOVE), (why, game.codes(*Severity))



@pytest.mark.parametrize("variant", ["chess960", "auto"])
@pytest.mark.parametrize("seed", range(8))
def test_a_board_turned_round_shows_the_chess960_array_and_castles(variant: str, seed: int) -> None:
    """A DGT board does not rotate its numbering (protocols.md §1.4): with White at the far edge the dump shows
    the array turned round. The frame is found from the array (as for the standard one), the array is the start
    position (no start FEN given: the variant takes it from the board), and the game is read in that frame."""
    rng = random.Random(seed)
    start = chess.Board.from_chess960_pos(rng.randrange(960))
    game = Game(start, rng, turned=True, variant=variant)
    assert game.engine.state.start_fen == start.fen() and game.engine.state.chess960
    for _ in range(rng.randrange(16, 44)):
        legal = list(game.board.legal_moves)
        if not legal or game.board.is_game_over():
            break
        castles = [m for m in legal if game.board.is_castling(m)]
        game.play(rng.choice(castles) if castles and rng.random() < 0.85 else rng.choice(legal))
    game.finish()
    assert [m.uci for m in game.engine.state.moves] == [m.uci() for m in game.board.move_stack]
    assert game.strong_ok(), game.codes(Severity.WARNING, Severity.ILLEGAL_MOVE)
    _check_pgn(game)


_K, _R = chess.Piece(chess.KING, chess.WHITE), chess.Piece(chess.ROOK, chess.WHITE)
RELEASED_FIRST = [
    # (start, steps (square, piece, seconds to the next), the codes; name)
    ("4k3/8/8/8/8/8/8/RK6 w A - 0 1", [("b1", None, 0.3), ("c1", _K, 0.8), ("a1", None, 0.3), ("d1", _R, 0.4)],
     ["CHESS960_CASTLING_ORDER"], "king step onto its castling square released, then the rook (R27)"),
    ("4k3/8/8/8/8/8/8/4K2R w H - 0 1", [("h1", None, 0.3), ("f1", _R, 0.8), ("e1", None, 0.3), ("g1", _K, 0.4)],
     ["CASTLING_ROOK_FIRST", "RELEASED_MOVE_CHANGED"],
     "rook onto its castling square released, then the king (4.4.2 and 4.7, as T04; R27 carries 4.4 over)"),
    ("4k3/8/8/8/8/8/8/4K2R w H - 0 1", [("e1", None, 0.3), ("f1", _K, 0.8), ("f1", None, 0.1), ("g1", _K, 0.3),
                                        ("h1", None, 0.3), ("f1", _R, 0.4)],
     ["RELEASED_MOVE_CHANGED"], "king stopped on f1 (Kf1 released) on its way to g1 (4.7)"),
    ("4k3/8/8/8/8/8/8/R3K3 w A - 0 1", [("a1", None, 0.3), ("b1", _R, 0.8), ("b1", None, 0.1), ("d1", _R, 0.3),
                                        ("e1", None, 0.3), ("c1", _K, 0.4)],
     ["CASTLING_ROOK_FIRST", "RELEASED_MOVE_CHANGED"], "rook stopped on b1 (Rb1 released) on its way to d1 (4.7), "
                                                       "the rook first (4.4.2)"),
]


@pytest.mark.parametrize("case", RELEASED_FIRST, ids=[c[-1] for c in RELEASED_FIRST])
def test_a_piece_released_before_the_castling_was_finished(case: tuple[str, list[tuple[str, Content, float]],
                                                                        list[str], str]) -> None:
    """R27's order note is for a king step onto its castling square, then the rook (the double-move castling,
    II.3.2.1): castling in an order that could be read as a king move, info for the arbiter. The rook released
    first, on its own square or elsewhere, then the king: the rook touched first (4.4.2, CASTLING_ROOK_FIRST) and
    that rook move made (4.7, RELEASED_MOVE_CHANGED), as in standard chess (T04). A king released on another
    square first (the hand stopped longer than the release time) made that move (4.7): RELEASED_MOVE_CHANGED (R07,
    §3.4.4)."""
    fen, steps, codes, _name = case
    board = chess.Board(fen, chess960=True)
    game = Game(board, random.Random(3))
    t = 1.0
    for square, piece, pause in steps:
        game.outs += game.engine.feed(SquareChanged(at=t, square=chess.parse_square(square), content=piece))
        t += pause
    game.outs += game.engine.feed(game.clock.press(chess.WHITE, t + 0.3))
    game.finish()
    assert [m.san for m in game.engine.state.moves] in (["O-O"], ["O-O-O"])
    assert game.codes(*Severity) == codes
    # one alert: what the rook first raises is one incident
    raised = [o.irregularity for o in game.outs if isinstance(o, IrregularityRaised)]
    assert len([i for i in raised if i.severity is not Severity.INFO and i.incident is None]) <= 1
