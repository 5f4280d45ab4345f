"""Shapes and pure helpers shared by the engine's rooms (no state of their own)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import chess

from boardd.core._slots import slot_setters as _slot_setters
from boardd.core.events import (
    ClockReading,
    ClockSide,
    Content,
    SetClock,
    SetOrientation,
    SetPlayers,
    content_symbol,
)
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Evidence,
    IrregularityRaised,
    IrregularityUpdated,
    MoveRecord,
    Output,
    StateChanged,
)

_LOGGER = logging.getLogger("boardd.core.engine")



_STANDARD_FEN = chess.STARTING_FEN
_CENTRE_BB = chess.BB_D4 | chess.BB_E4 | chess.BB_D5 | chess.BB_E5
_TAKEBACK_DEPTH = 8
_JUMP_DEPTH = 3
#: "Time went backwards" is reported at most once per this many seconds (the rest is counted and logged).
_BACKWARDS_REPORT_S = 60.0
#: A board dump changing at most this many squares is treated as ordinary changes (one instant).
_SNAPSHOT_INCREMENTAL = 4


_CLOCK_STATE_SET = _slot_setters(ClockState, ("white", "black", "running", "flag_white", "flag_black", "model"))
_CLOCK_UPDATE_SET = _slot_setters(ClockUpdate, ("at", "clock"))


def _clock_update(at: float, white: float | None, black: float | None, old: ClockState) -> ClockUpdate:
    """``ClockUpdate(at, ClockState(white, black, <the rest of old>))`` for the per-second clock path.

    A frozen dataclass's ``__init__`` sets every field through ``object.__setattr__``, which is
    most of the cost of a clock reading (measured 1.7 µs for ``ClockState`` vs 0.45 µs through
    the slot descriptors). The objects are the same (equality, hash, repr); if the dataclasses
    ever get other fields, the normal constructors are used.
    """
    if _CLOCK_STATE_SET is None or _CLOCK_UPDATE_SET is None:
        state = ClockState(white=white, black=black, running=old.running, flag_white=old.flag_white,
                           flag_black=old.flag_black, model=old.model)
        return ClockUpdate(at=at, clock=state)
    set_white, set_black, set_running, set_fw, set_fb, set_model = _CLOCK_STATE_SET
    state = object.__new__(ClockState)
    set_white(state, white)
    set_black(state, black)
    set_running(state, old.running)
    set_fw(state, old.flag_white)
    set_fb(state, old.flag_black)
    set_model(state, old.model)
    set_at, set_clock = _CLOCK_UPDATE_SET
    update = object.__new__(ClockUpdate)
    set_at(update, at)
    set_clock(update, state)
    return update


#: Arbiter commands that change the retained state (players, clock times, orientation) even without a finding.
_STATE_COMMANDS = (SetClock, SetPlayers, SetOrientation)


def _republish_state(outs: list[Output], at: float, always: bool) -> None:
    """Append one ``StateChanged`` to a batch that changes the state but has none yet.

    The retained ``state`` carries the open irregularities in full (ids, status, suggestion), so a
    batch that raises or updates a finding changes it; so do the commands of :data:`_STATE_COMMANDS`.
    One per batch is enough: the contract publisher renders the state once per batch.
    """
    changed = always
    for out in outs:
        kind = type(out)
        if kind is StateChanged:
            return
        if kind is IrregularityRaised or kind is IrregularityUpdated:
            changed = True
    if changed:
        outs.append(StateChanged(at=at))


def _side_letter(color: chess.Color) -> str:
    return "W" if color == chess.WHITE else "B"


def _piece_text(piece: chess.Piece) -> str:
    return ("w" if piece.color == chess.WHITE else "b") + piece.symbol().upper()


def _content_text(content: Content) -> str:
    if isinstance(content, chess.Piece):
        return _piece_text(content)
    return content_symbol(content)


def _change_text(square: int, old: Content, new: Content) -> str:
    """A board change as evidence text: ``L e2`` (lifted), ``P e4 wP`` (put down), ``X e4 wP→bN`` (replaced)."""
    name = chess.SQUARE_NAMES[square]
    return (f"L {name}" if new is None
            else f"P {name} {_content_text(new)}" if old is None
            else f"X {name} {_content_text(old)}→{_content_text(new)}")


@dataclass(slots=True)
class _Candidate:
    """A LEGAL(m) state waiting for T_settle (release inference)."""

    move: chess.Move
    at: float
    deadline: float
    replace: bool = False  # post-made replacement of the last mover's move (R07)


@dataclass(slots=True)
class _Press:
    """A lever transition group waiting to be judged."""

    first_at: float
    last_at: float
    lever_before: chess.Color | None
    lever_after: chess.Color | None
    transitions: int
    evidence: list[Evidence] = field(default_factory=list)
    pre_clock: ClockState | None = None
    #: completed at the first transition (fast path): the record before completion and the previous press time
    fast_record: MoveRecord | None = None
    fast_prev_press_at: float | None = None
    #: made while the board link was down: recorded for the reconciliation, never judged
    blind: bool = False

    def due(self, timing_latency: float, timing_bounce: float) -> float:
        if self.fast_record is not None:
            return self.last_at + timing_bounce  # only the bounce is still open
        return max(self.first_at + timing_latency, self.last_at + timing_bounce)


@dataclass(frozen=True, slots=True)
class _BlindPress:
    """A press seen while the board link was down: who pressed, when, and what the clock showed then."""

    side: chess.Color
    at: float
    clock: ClockState


@dataclass(slots=True)
class _Window:
    """An open claim window ("otherwise" regime, R22) of an illegal-move-class finding."""

    irregularity_id: str
    offender: chess.Color
    claimed: bool = False




#: A suspect reading that no other reading follows within this time is taken as meant (s): a running DGT clock
#: sends a reading at least every second, so a glitch is contradicted well before; silence after it is not.
_CLOCK_HOLD_S = 2.0


def _suspect_reading(reading: ClockReading) -> bool:
    """Does *reading* need the next reading to confirm it (picochess's "0:00:00 glitch" filter)?

    Suspect (unless a flag bit is set): the running side shows 0:00. A big drop of a running time is not
    suspect by itself: it is what the clock shows after an arbiter's correction, and in a replay of a raw
    capture the time between readings is inferred, not measured.
    """
    if reading.left_flag or reading.right_flag:
        return False  # the clock's own flag bit: no confirmation needed
    running = reading.running
    return running is not None and (reading.left if running is ClockSide.LEFT else reading.right) == 0


def _clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _rotation(quarter_turns: int) -> tuple[int, ...]:
    """Board-frame square -> official square for a board turned *quarter_turns* times."""
    out = []
    for sq in chess.SQUARES:
        f, r = chess.square_file(sq), chess.square_rank(sq)
        for _ in range(quarter_turns):
            f, r = 7 - r, f
        out.append(chess.square(f, r))
    return tuple(out)


_ROTATIONS = tuple(_rotation(k) for k in range(4))


_SYMBOLS = {(color, ptype): chess.Piece(ptype, color).symbol() for color in chess.COLORS for ptype in chess.PIECE_TYPES}


_DIGITS = [str(n) for n in range(9)]


#: The last position :func:`_fen` wrote, and its FEN: a move's record, then the ``state`` at the move made and at its
#: completion ask for the same position's FEN (issue 12).
#: One entry, read and replaced whole (an engine per thread may share it: each sees a consistent pair).
_LAST_FEN: list[tuple[tuple[object, ...], str]] = [((), "")]


def _fen(board: chess.Board) -> str:
    """``board.fen()``, computed from the bitboards (python-chess's board_fen is slow per square)."""
    occupied_co = board.occupied_co
    key = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
           occupied_co[chess.WHITE], occupied_co[chess.BLACK], board.turn, board.castling_rights, board.ep_square,
           board.halfmove_clock, board.fullmove_number, board.chess960)
    last_key, last_fen = _LAST_FEN[0]
    if last_key == key:
        return last_fen
    fen = _write_fen(board)
    _LAST_FEN[0] = (key, fen)
    return fen


def _write_fen(board: chess.Board) -> str:
    ep = chess.SQUARE_NAMES[board.ep_square] if board.ep_square is not None and board.has_legal_en_passant() else "-"
    turn = "w" if board.turn else "b"
    return f"{_placement(board)} {turn} {_castling(board)} {ep} {board.halfmove_clock} {board.fullmove_number}"


#: The text of a rank by its eight squares' contents (:func:`_rank_text`). Bounded by :data:`_RANKS_KEEP`.
_RANKS: dict[tuple[int, ...], str] = {}
_RANKS_KEEP = 4096
_PIECE_LETTERS = " pnbrqk"


def _rank_text(bitboards: tuple[int, ...], rank: int) -> str:
    """One rank of the FEN's placement field, from the piece bitboards (pawns ... kings, white, black)."""
    shift = rank * 8
    pawns, knights, bishops, rooks, queens, kings, white, _ = bitboards
    key = (pawns >> shift & 0xFF, knights >> shift & 0xFF, bishops >> shift & 0xFF, rooks >> shift & 0xFF,
           queens >> shift & 0xFF, kings >> shift & 0xFF, white >> shift & 0xFF)
    text = _RANKS.get(key)
    if text is not None:
        return text
    text = ""
    empty = 0
    for file in range(8):
        bit = 1 << file
        ptype = next((index + 1 for index in range(6) if key[index] & bit), 0)
        if not ptype:
            empty += 1
            continue
        if empty:
            text += _DIGITS[empty]
            empty = 0
        letter = _PIECE_LETTERS[ptype]
        text += letter.upper() if key[6] & bit else letter
    if empty:
        text += _DIGITS[empty]
    if len(_RANKS) >= _RANKS_KEEP:
        _RANKS.clear()
    _RANKS[key] = text
    return text


#: The placement :func:`_placement` wrote last: its piece bitboards and its ranks' texts (rank 8 first). A move
#: changes two ranks or three: those are written again, the others kept (issue 12). Read and replaced whole.
_LAST_PLACEMENT: list[tuple[tuple[int, ...], tuple[str, ...]]] = [((0,) * 8, ("8",) * 8)]


def _placement(board: chess.Board) -> str:
    """The FEN's placement field (``board.board_fen()``): the ranks that differ from the last one written, again."""
    occupied_co = board.occupied_co
    bitboards = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                 occupied_co[chess.WHITE], occupied_co[chess.BLACK])
    last_bitboards, last_ranks = _LAST_PLACEMENT[0]
    changed = ((board.pawns ^ last_bitboards[0]) | (board.knights ^ last_bitboards[1])
               | (board.bishops ^ last_bitboards[2]) | (board.rooks ^ last_bitboards[3])
               | (board.queens ^ last_bitboards[4]) | (board.kings ^ last_bitboards[5])
               | (bitboards[6] ^ last_bitboards[6]))  # (black: the occupied squares that are not white's)
    if not changed:
        return "/".join(last_ranks)
    ranks = list(last_ranks)
    for rank in range(8):
        if changed >> (rank * 8) & 0xFF:
            ranks[7 - rank] = _rank_text(bitboards, rank)
    kept = tuple(ranks)
    _LAST_PLACEMENT[0] = (bitboards, kept)
    return "/".join(kept)


#: Castling fields written, by everything ``castling_xfen`` reads (the rights, the kings, the back-rank rooks, whether
#: the board has a move stack, Chess960): a game has a handful. Bounded by :data:`_CASTLING_KEEP`.
_CASTLING: dict[tuple[int, ...], str] = {}
_CASTLING_KEEP = 256


def _castling(board: chess.Board) -> str:
    """``board.castling_xfen()``."""
    rights = board.castling_rights
    if not rights:
        return "-"  # (python-chess writes the clean rights, a subset of these)
    occupied_co = board.occupied_co
    kings = board.kings & ~board.promoted
    rooks = board.rooks
    key = (rights, kings & occupied_co[chess.WHITE], kings & occupied_co[chess.BLACK],
           rooks & occupied_co[chess.WHITE] & chess.BB_RANK_1, rooks & occupied_co[chess.BLACK] & chess.BB_RANK_8,
           bool(board._stack), board.chess960)
    text = _CASTLING.get(key)
    if text is None:
        text = board.castling_xfen()
        if len(_CASTLING) >= _CASTLING_KEEP:
            _CASTLING.clear()
        _CASTLING[key] = text
    return text


def _nearest_legal(board: chess.Board, squares: list[Content], changed: int,
                   touched: int | None = None) -> chess.Move | None:
    """The legal move whose position differs least from the physical board (at most two squares off); on a tie,
    the move of the piece touched first (*touched*: the piece the player set out to move, 4.3)."""
    best: tuple[tuple[int, int], chess.Move] | None = None
    seen: set[chess.Move] = set()
    for move in [*board.generate_legal_moves(from_mask=changed), *board.generate_legal_moves(to_mask=changed)]:
        if move in seen:
            continue
        seen.add(move)
        board.push(move)
        off = sum(1 for sq in _bits(changed) if board.piece_at(sq) != squares[sq])
        board.pop()
        rank = (off, 0 if move.from_square == touched else 1)
        if off <= 2 and (best is None or rank < best[0]):
            best = (rank, move)
    return best[1] if best else None


def _board_from(squares: list[Content], like: chess.Board, turn: chess.Color) -> chess.Board:
    """A board with the chess pieces of *squares* (markers left out), *turn* to move, the castling rights of *like*
    that the placement still allows, no en passant square (the record adopting a physical position, G6)."""
    board = chess.Board(None, chess960=like.chess960)
    for sq, content in enumerate(squares):
        if isinstance(content, chess.Piece):
            board.set_piece_at(sq, content)
    board.turn = turn
    board.castling_rights = like.castling_rights
    board.castling_rights = board.clean_castling_rights()
    return board


def _bits(bb: int) -> list[int]:
    out = []
    while bb:
        lsb = bb & -bb
        out.append(lsb.bit_length() - 1)
        bb ^= lsb
    return out


def _castling_king_square(board: chess.Board, move: chess.Move) -> int:
    """Where the king of the castling *move* ends: the c- or g-file of its rank (standard and Chess960)."""
    return chess.square(6 if board.is_kingside_castling(move) else 2, chess.square_rank(move.from_square))


def _castling_rook_square(board: chess.Board, move: chess.Move) -> int:
    if board.chess960 or board.piece_type_at(move.to_square) == chess.ROOK:
        return move.to_square
    rank = chess.square_rank(move.from_square)
    return chess.square(7 if chess.square_file(move.to_square) > chess.square_file(move.from_square) else 0, rank)


def _illegal_position(board: chess.Board) -> str | None:
    pawns_last = board.pawns & (chess.BB_RANK_1 | chess.BB_RANK_8)
    if pawns_last:
        return "pawn on the last rank"
    wk = board.king(chess.WHITE)
    bk = board.king(chess.BLACK)
    if wk is not None and bk is not None and board.is_attacked_by(chess.BLACK, wk) \
            and board.is_attacked_by(chess.WHITE, bk):
        return "both kings in check"
    return None


def _search(board: chess.Board, target: tuple[int, ...], depth: int, changed: int) -> list[chess.Move] | None:
    """Shortest sequence of 2..depth legal moves from *board* to the placement *target* (pruned)."""
    from boardd.core.recognizer import board_key  # noqa: PLC0415

    work = board.copy(stack=False)

    def rec(d: int, touched: int) -> list[chess.Move] | None:
        if board_key(work) == target:
            return []
        if d == 0:
            return None
        for move in list(work.legal_moves):
            bits = (1 << move.from_square) | (1 << move.to_square)
            if not bits & (changed | touched):
                continue
            work.push(move)
            sub = rec(d - 1, touched | bits)
            work.pop()
            if sub is not None:
                return [move, *sub]
        return None

    for d in range(2, depth + 1):
        found = rec(d, 0)
        if found:
            return found
    return None


_ARTICLE4 = frozenset({"TOUCH_MOVE_SUSPECTED", "TOUCH_CAPTURE_SUSPECTED", "TOUCH_MOVE_VIOLATION",
                       "RELEASED_MOVE_CHANGED", "CASTLING_ROOK_FIRST", "CASTLING_KING_RELEASED_NOT_COMPLETED",
                       "PROMOTION_CHOICE_CHANGED", "TWO_HANDS_SUSPECTED"})


def centre_kings_result(white: int, black: int, kings: int) -> str | None:
    """The result the kings show (bitboards of the white pieces, the black ones, the kings): exactly one king of each
    colour, both on the centre squares; both on light squares 1-0, both on dark 0-1, one of each a draw."""
    if kings & _CENTRE_BB and (kings & white).bit_count() == 1 and (kings & black).bit_count() == 1 \
            and kings & _CENTRE_BB == kings:
        light = (kings & chess.BB_LIGHT_SQUARES).bit_count()
        return "1-0" if light == 2 else "0-1" if light == 0 else "1/2-1/2"
    return None


def squares_kings_result(squares: list[Content]) -> str | None:
    """:func:`centre_kings_result` of a placement (official frame)."""
    white = black = kings = 0
    for sq, content in enumerate(squares):
        if isinstance(content, chess.Piece):
            if content.color == chess.WHITE:
                white |= chess.BB_SQUARES[sq]
            else:
                black |= chess.BB_SQUARES[sq]
            if content.piece_type == chess.KING:
                kings |= chess.BB_SQUARES[sq]
    return centre_kings_result(white, black, kings)
