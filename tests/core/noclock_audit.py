"""No-clock games with one illegal move: a seeded generator from real games, and its judge.

A real game (``/work/shared/data/pgn``) is played by hand on a board without a clock
(``RulesConfig(clock_expected=False)``): one hand per move, the victim of a capture lifted before or after the
capturer, a thinking pause between moves. At a random ply the player to move makes one illegal move of a kind
(the piece cannot go there, his king left in check, a castling the Laws do not allow, or the side that does not
have the move moves), releases it, and both players play on from the position on the board (nobody notices):
the game's own moves while they are legal there, else a seeded legal move.

Without a clock a move is completed by the same player's next move (6.2.1.2); the opponent starting his reply
shows the move was made (1.3). Judged: the illegal move raised once as ILLEGAL_MOVE with its subtype (7.5.1, R16),
the record goes on (the illegal move stands as a ``legal=False`` entry, every later real move recorded after it).
Built from the Laws and a sensor board's reports, not from the simulator.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, SquareChanged
from boardd.core.outputs import Irregularity, IrregularityRaised, Output, Severity
from boardd.core.settings import RulesConfig

PGN_DIR = Path("/work/shared/data/pgn")
KINDS = ("geometry", "self-check", "castling", "wrong-side")
#: the subtype each kind must be raised with
SUBTYPE = {"geometry": {"GEOMETRY", "BLOCKED"}, "self-check": {"SELF_CHECK"}, "castling": {"CASTLING_ILLEGAL"},
           "wrong-side": set()}


@functools.cache
def real_games() -> tuple[tuple[str, ...], ...]:
    """The standard games of the corpus, as UCI move lists."""
    out = []
    for path in sorted(PGN_DIR.glob("*.pgn")):
        with path.open(encoding="utf-8", errors="replace") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                if game.headers.get("FEN") or game.headers.get("Variant"):
                    continue
                moves = tuple(m.uci() for m in game.mainline_moves())
                if len(moves) >= 16:
                    out.append(moves)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class NoClockCase:
    seed: int
    kind: str
    edition: int


def cases(seed: int, count: int) -> list[NoClockCase]:
    rng = random.Random(seed)
    return [NoClockCase(seed=rng.randrange(1 << 30), kind=KINDS[i % len(KINDS)],
                        edition=rng.choice((2009, 2014, 2018, 2023))) for i in range(count)]


def _geometry(board: chess.Board, rng: random.Random) -> chess.Move | None:
    """A piece of the side to move onto an empty square (or an opponent's piece) it cannot reach."""
    side = board.turn
    pseudo = {(m.from_square, m.to_square) for m in board.pseudo_legal_moves}
    options = []
    for sq in board.pieces(chess.KNIGHT, side) | board.pieces(chess.BISHOP, side) | board.pieces(chess.ROOK, side) \
            | board.pieces(chess.QUEEN, side):
        for to in chess.SQUARES:
            target = board.piece_at(to)
            if (sq, to) in pseudo or (target is not None and (target.color == side or target.piece_type == chess.KING)):
                continue
            if chess.square_distance(sq, to) <= 3:
                options.append(chess.Move(sq, to))
    return rng.choice(options) if options else None


def _self_check(board: chess.Board, rng: random.Random) -> chess.Move | None:
    legal = set(board.legal_moves)
    options = [m for m in board.pseudo_legal_moves if m not in legal and not board.is_castling(m)
               and not m.promotion and not board.is_en_passant(m)]
    return rng.choice(options) if options else None


def _castling(board: chess.Board, rng: random.Random) -> chess.Move | None:
    """The king two squares towards its own unmoved rook, the squares between empty, but castling not allowed."""
    side = board.turn
    rank = 0 if side == chess.WHITE else 7
    king = chess.square(4, rank)
    if board.piece_at(king) != chess.Piece(chess.KING, side):
        return None
    options = []
    for rook_file, king_file, between in ((7, 6, (5, 6)), (0, 2, (1, 2, 3))):
        rook = chess.square(rook_file, rank)
        if board.piece_at(rook) != chess.Piece(chess.ROOK, side) or any(board.piece_at(chess.square(f, rank))
                                                                       for f in between):
            continue
        move = chess.Move(king, chess.square(king_file, rank))
        if move not in board.legal_moves:
            options.append(move)
    return rng.choice(options) if options else None


def _wrong_side(board: chess.Board, rng: random.Random) -> chess.Move | None:
    """The side that does not have the move (who has just moved) makes a (quiet) move of his.

    Not the piece he has just moved taken on to a square it could have reached in the first place, nor back to
    where it came from: the board cannot tell these from his released move changed (4.7), which the spec reads
    as such (R07, §3.5: ``RELEASED_MOVE_CHANGED``, the record gets the move the board shows), or undone (the
    board back at the position before it, R29).
    """
    other = board.copy(stack=False)
    other.turn = not board.turn
    other.ep_square = None
    changed: set[chess.Move] = set()
    if board.move_stack:
        before = board.copy()
        last = before.pop()
        changed = {m for m in other.legal_moves if m.from_square == last.to_square
                   and (m.to_square == last.from_square
                        or chess.Move(last.from_square, m.to_square) in before.legal_moves)}
    options = [m for m in other.legal_moves if not other.is_capture(m) and not other.is_castling(m)
               and not m.promotion and not other.gives_check(m) and m not in changed]
    return rng.choice(options) if options else None


FINDERS = {"geometry": _geometry, "self-check": _self_check, "castling": _castling, "wrong-side": _wrong_side}


class Hand:
    """Board events of one hand, in time (a sensor board's reports; no clock)."""

    def __init__(self, rng: random.Random, phys: dict[int, chess.Piece]) -> None:
        self.rng = rng
        self.phys = phys
        self.t = 1.0
        self.events: list[Event] = []

    def lift(self, sq: int) -> None:
        del self.phys[sq]
        self.events.append(SquareChanged(at=round(self.t, 3), square=sq, content=None))

    def place(self, sq: int, piece: chess.Piece) -> None:
        self.phys[sq] = piece
        self.events.append(SquareChanged(at=round(self.t, 3), square=sq, content=piece))

    def step(self, low: float = 0.15, high: float = 0.6) -> None:
        self.t += self.rng.uniform(low, high)

    def think(self) -> None:
        self.t += self.rng.uniform(0.8, 6.0)

    def relocate(self, frm: int, to: int, placed: chess.Piece | None = None, captured: int | None = None) -> None:
        """One hand: the victim first or the capturer first, then the piece put down."""
        piece = self.phys[frm]
        if captured is not None and captured in self.phys and self.rng.random() < 0.6:
            self.lift(captured)
            self.step()
            captured = None
        self.lift(frm)
        self.step()
        if captured is not None and captured in self.phys:
            self.lift(captured)
            self.step(0.1, 0.3)
        self.place(to, placed or piece)

    def move(self, board: chess.Board, move: chess.Move) -> None:
        if board.is_castling(move):
            rank = chess.square_rank(move.from_square)
            kingside = board.is_kingside_castling(move)
            rook_from = chess.square(7 if kingside else 0, rank)
            self.relocate(move.from_square, chess.square(6 if kingside else 2, rank))
            self.step()
            self.relocate(rook_from, chess.square(5 if kingside else 3, rank))
            return
        captured = move.to_square if board.piece_at(move.to_square) else None
        if board.is_en_passant(move):
            captured = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
        placed = chess.Piece(move.promotion, board.turn) if move.promotion else None
        self.relocate(move.from_square, move.to_square, placed, captured)


@dataclass
class Built:
    events: list[Event]
    expected: list[str]  # the record the Laws keep: "!" marks the illegal move that stood
    illegal_ply: int
    kind: str


def _physical_after(board: chess.Board, move: chess.Move, side: chess.Color) -> chess.Board:
    """The position on the board after the illegal move, *side* having moved: the opponent to move."""
    after = chess.Board(None)
    for sq, piece in board.piece_map().items():
        after.set_piece_at(sq, piece)
    moved = after.remove_piece_at(move.from_square)
    assert moved is not None
    after.set_piece_at(move.to_square, moved)
    if board.is_castling(move) or (moved.piece_type == chess.KING and chess.square_distance(move.from_square,
                                                                                               move.to_square) == 2):
        rank = chess.square_rank(move.from_square)
        kingside = chess.square_file(move.to_square) == 6
        rook = after.remove_piece_at(chess.square(7 if kingside else 0, rank))
        assert rook is not None
        after.set_piece_at(chess.square(5 if kingside else 3, rank), rook)
    after.turn = not side
    after.castling_rights = board.castling_rights
    after.castling_rights = after.clean_castling_rights()
    return after


def _placement(board: chess.Board, move: chess.Move) -> str:
    board.push(move)
    try:
        return board.board_fen()
    finally:
        board.pop()


def build(case: NoClockCase, *, after_plies: int | None = None) -> Built | None:
    rng = random.Random(case.seed)
    games = real_games()
    for _ in range(40):
        moves = rng.choice(games)
        board = chess.Board()
        fits = []
        for i, uci in enumerate(moves[:-4]):
            if i >= 2:
                found = FINDERS[case.kind](board, random.Random(case.seed + i))
                if found is not None:
                    fits.append(i)
            board.push_uci(uci)
        if fits:
            break
    else:
        return None
    at = rng.choice(fits)
    board = chess.Board()
    hand = Hand(rng, dict(board.piece_map()))
    expected: list[str] = []
    placements = {board.board_fen()}
    for uci in moves[:at]:
        move = chess.Move.from_uci(uci)
        hand.move(board, move)
        expected.append(move.uci())
        board.push(move)
        placements.add(board.board_fen())
        hand.think()
    illegal = FINDERS[case.kind](board, random.Random(case.seed + at))
    assert illegal is not None
    side = board.turn if case.kind != "wrong-side" else not board.turn
    if case.kind == "castling":
        # the king first, then the rook over it (the castling by hand, 3.8.2)
        rank = chess.square_rank(illegal.from_square)
        kingside = chess.square_file(illegal.to_square) == 6
        hand.relocate(illegal.from_square, illegal.to_square)
        hand.step()
        hand.relocate(chess.square(7 if kingside else 0, rank), chess.square(5 if kingside else 3, rank))
    else:
        target = illegal.to_square if board.piece_at(illegal.to_square) else None
        hand.relocate(illegal.from_square, illegal.to_square, captured=target)
    expected.append("!" + illegal.uci())
    after = _physical_after(board, illegal, side)
    placements.add(after.board_fen())
    # both play on, nobody notices: the game's own moves while they are legal, else a seeded legal move
    n = after_plies if after_plies is not None else rng.randint(2, 6)
    rest = list(moves[at + 1:])
    for _ in range(n):
        if after.is_game_over():
            break
        hand.think()
        # (never back to an earlier position: the board would show a takeback, R29)
        fresh = [m for m in sorted(after.legal_moves, key=lambda m: m.uci()) if _placement(after, m) not in placements]
        wanted = chess.Move.from_uci(rest.pop(0)) if rest else None
        if not fresh:
            break
        move = wanted if wanted in fresh and wanted is not None else rng.choice(fresh)
        hand.move(after, move)
        expected.append(move.uci())
        after.push(move)
        placements.add(after.board_fen())
    return Built(hand.events, expected, at + 1, case.kind)


def run_engine(built: Built, edition: int) -> tuple[list[str], list[Irregularity]]:
    engine = Engine(RulesConfig(clock_expected=False), GameInfo(edition=edition))
    outs: list[Output] = []
    for event in built.events:
        while (deadline := engine.next_deadline()) is not None and deadline < event.at:
            outs += engine.advance(deadline)
        outs += engine.feed(event)
    outs += engine.advance(built.events[-1].at + 30.0)
    record = [m.uci if m.legal else "!" + m.uci for m in engine.state.moves]
    return record, [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]


@dataclass
class Verdict:
    case: NoClockCase
    lost: int  # real moves missing from the record
    raised: bool  # ILLEGAL_MOVE with the kind's subtype
    exact: bool
    problems: list[str]


def judge(case: NoClockCase) -> Verdict | None:
    built = build(case)
    if built is None:
        return None
    record, found = run_engine(built, case.edition)
    problems = []
    # a move on the opponent's turn is an irregularity, not an illegal move (R13, seed 004 exercise 17)
    code = "OUT_OF_TURN_CHANGE" if case.kind == "wrong-side" else "ILLEGAL_MOVE"
    illegal = [i for i in found if i.code == code]
    raised = len(illegal) == 1 and (illegal[0].subtype in SUBTYPE[case.kind] or not SUBTYPE[case.kind])
    if not raised:
        problems.append(f"{code} raised {[(i.code, i.subtype) for i in illegal]}")
    strong = [f"{i.code}/{i.subtype}" for i in found if i.severity is not Severity.INFO and i.code != code]
    if strong:
        problems.append(f"other findings {strong}")
    real = [m.lstrip("!") for m in built.expected]
    got = [m.lstrip("!") for m in record]
    lost = sum(1 for k, m in enumerate(real) if k >= len(got) or got[k] != m)
    exact = record == built.expected
    if not exact:
        problems.append(f"record {record} != {built.expected}")
    return Verdict(case, lost, raised, exact, problems)
