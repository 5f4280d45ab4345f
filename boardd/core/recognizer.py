"""Move recognition: the physical board against the official position (rules-spec §3.2–§3.3).

Theory of operation
-------------------
The recogniser keeps no time and makes no decisions about the Laws: it answers one
question, fast, after every board event: *how does the physical board differ from
the official position?* The answer is a :class:`Diff` of one of the classes of
rules-spec §3.2 (``NONE``, ``LEGAL``, ``PARTIAL``, ``IN_HAND``, ``ILLEGAL_1``,
``TWO_MOVES``, ``OPP_ONLY``, ``UNRECOGNISED``). The :mod:`boardd.core.engine` turns
these answers, their timing and the clock presses into moves and findings.

python-chess is the rules oracle. For speed, a :class:`PositionIndex` is built once
per official position: for every legal move it stores the piece placement after the
move as a tuple of eight bitboards (a *key*). The physical board keeps the same key
up to date incrementally (:class:`PhysicalBoard`), so recognising a finished move is
one dictionary look-up; the more expensive partial/illegal analysis runs only when
the placement is neither the official one, nor a legal target, nor "pieces in the air".
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

import chess

from boardd.core._slots import slot_setters
from boardd.core.events import Content, Marker

__all__ = [
    "Diff",
    "DiffClass",
    "Key",
    "PhysicalBoard",
    "PositionIndex",
    "board_key",
    "describe_change",
    "illegal_subtype",
    "key_after",
]

_LOGGER = logging.getLogger(__name__)

#: A piece placement as eight bitboards: white, black, pawns, knights, bishops, rooks, queens, kings.
Key = tuple[int, int, int, int, int, int, int, int]

_PIECE_INDEX = {chess.PAWN: 2, chess.KNIGHT: 3, chess.BISHOP: 4, chess.ROOK: 5, chess.QUEEN: 6, chess.KING: 7}


def board_key(board: chess.BaseBoard) -> Key:
    """The placement key of a python-chess board."""
    return (board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], board.pawns, board.knights,
            board.bishops, board.rooks, board.queens, board.kings)


def key_after(board: chess.Board, move: chess.Move) -> Key | None:
    """The placement key after *move*, a plain move or capture of *board* (no castling, en passant or promotion),
    from the bitboards without a push; ``None`` for the other moves (and for a move from an empty square)."""
    origin, target = move.from_square, move.to_square
    moved = board.piece_type_at(origin)
    if moved is None or move.promotion or (moved == chess.PAWN and target == board.ep_square) \
            or (moved == chess.KING and board.is_castling(move)):
        return None
    bits = (1 << origin) | (1 << target)
    after = [k & ~bits for k in board_key(board)]
    after[0 if board.turn == chess.WHITE else 1] |= 1 << target
    after[_PIECE_INDEX[moved]] |= 1 << target
    return (after[0], after[1], after[2], after[3], after[4], after[5], after[6], after[7])


def _popcount(bb: int) -> int:
    return bb.bit_count()


def _squares(bb: int) -> list[int]:
    out = []
    while bb:
        lsb = bb & -bb
        out.append(lsb.bit_length() - 1)
        bb ^= lsb
    return out


#: One ``chess.Piece`` per colour (index 0 White, 1 Black) and key index (2 pawns … 7 kings): shared by the official
#: squares of every :class:`PositionIndex` (read only).
_KEY_PIECES = tuple((None, None, *(chess.Piece(piece_type, color) for piece_type in chess.PIECE_TYPES))
                    for color in (chess.WHITE, chess.BLACK))
assert all(_KEY_PIECES[0][i].piece_type == t for t, i in _PIECE_INDEX.items())  # type: ignore[union-attr]


def _squares_of(key: Key) -> list[chess.Piece | None]:
    """The 64 squares of a placement key (what python-chess's ``piece_at`` gives for each square)."""
    squares: list[chess.Piece | None] = [None] * 64
    white = key[0]
    pieces_white, pieces_black = _KEY_PIECES
    for i in range(2, 8):
        bb = key[i]
        while bb:
            lsb = bb & -bb
            sq = lsb.bit_length() - 1
            squares[sq] = pieces_white[i] if white & lsb else pieces_black[i]
            bb ^= lsb
    return squares


class PhysicalBoard:
    """The debounced 64-square reading, with an incrementally maintained placement key.

    Markers (DGT result pieces, unreadable pieces) are kept apart in :attr:`markers`:
    they are not chess pieces and never take part in a move.
    """

    __slots__ = ("_key", "_key_tuple", "markers", "squares")

    def __init__(self, board: chess.BaseBoard | None = None) -> None:
        self.squares: list[Content] = [None] * 64
        self.markers = 0
        self._key = [0, 0, 0, 0, 0, 0, 0, 0]
        self._key_tuple: Key | None = None  # the key as returned, made at the first call after a change
        if board is not None:
            for sq, piece in board.piece_map().items():
                self.set(sq, piece)

    def set(self, square: int, content: Content) -> Content:
        """Set *square* to *content*; return the previous content."""
        old = self.squares[square]
        if old is content or (old is not None and content is not None and old == content):
            return old  # (a piece's == is a Python call: only asked when both are something)
        bit = 1 << square
        key = self._key
        self._key_tuple = None
        if isinstance(old, chess.Piece):
            key[0 if old.color else 1] &= ~bit
            key[_PIECE_INDEX[old.piece_type]] &= ~bit
        elif isinstance(old, Marker):
            self.markers &= ~bit
        if isinstance(content, chess.Piece):
            key[0 if content.color else 1] |= bit
            key[_PIECE_INDEX[content.piece_type]] |= bit
        elif isinstance(content, Marker):
            self.markers |= bit
        self.squares[square] = content
        return old

    def key(self) -> Key:
        """Placement key of the chess pieces on the board (markers excluded)."""
        key = self._key_tuple
        if key is None:
            k = self._key
            key = self._key_tuple = (k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7])
        return key

    def base_board(self) -> chess.BaseBoard:
        """A python-chess board with the chess pieces of this reading."""
        board = chess.BaseBoard.empty()
        for sq, content in enumerate(self.squares):
            if isinstance(content, chess.Piece):
                board.set_piece_at(sq, content)
        return board

    def count(self, piece: chess.Piece) -> int:
        """How many of *piece* stand on the board."""
        k = self._key
        return _popcount(k[0 if piece.color else 1] & k[_PIECE_INDEX[piece.piece_type]])


class DiffClass(enum.Enum):
    """Diff classes of rules-spec §3.2."""

    NONE = "none"
    LEGAL = "legal"
    PARTIAL = "partial"
    IN_HAND = "in_hand"
    ILLEGAL_1 = "illegal_1"
    TWO_MOVES = "two_moves"
    OPP_ONLY = "opp_only"
    UNRECOGNISED = "unrecognised"


@dataclass(frozen=True, slots=True)
class Diff:
    """The answer of :meth:`PositionIndex.classify`.

    Attributes:
        kind: the class.
        move: LEGAL: the move; ILLEGAL_1: the physical (illegal) move; PARTIAL: the first candidate.
        candidates: PARTIAL: every legal move the state is an intermediate state of.
        subtype: ILLEGAL_1: the ``ILLEGAL_MOVE`` subtype; PARTIAL: the code a press would raise.
        changed: bitboard of the squares whose reading differs from the official position.
        relocations: ILLEGAL_1 / TWO_MOVES: the (from, to) pairs of the side to move.
    """

    kind: DiffClass
    move: chess.Move | None = None
    candidates: tuple[chess.Move, ...] = ()
    subtype: str | None = None
    changed: int = 0
    relocations: tuple[tuple[int, int], ...] = ()


_NONE = Diff(DiffClass.NONE)

_DIFF_SET = slot_setters(Diff, ("kind", "move", "candidates", "subtype", "changed", "relocations"))


def _diff(kind: DiffClass, move: chess.Move | None = None, candidates: tuple[chess.Move, ...] = (),
          subtype: str | None = None, changed: int = 0) -> Diff:
    """``Diff(kind, move, candidates, subtype, changed)`` through the slot setters (:mod:`boardd.core._slots`):
    :meth:`PositionIndex.classify` makes one for nearly every board change."""
    if _DIFF_SET is None:
        return Diff(kind, move, candidates, subtype, changed)
    set_kind, set_move, set_candidates, set_subtype, set_changed, set_relocations = _DIFF_SET
    diff = object.__new__(Diff)
    set_kind(diff, kind)
    set_move(diff, move)
    set_candidates(diff, candidates)
    set_subtype(diff, subtype)
    set_changed(diff, changed)
    set_relocations(diff, ())
    return diff


class PositionIndex:
    """Everything the recogniser needs about one official position, computed once.

    Args:
        board: the official position (not modified; copied without its move stack).
    """

    __slots__ = ("_after", "_captures", "_castlings", "_key", "_legal", "_safety", "_squares", "_targets", "_touched",
                 "board")

    def __init__(self, board: chess.Board) -> None:
        self.board = board.copy(stack=False)
        self._key = board_key(self.board)
        self._targets: dict[Key, chess.Move] | None = None
        self._touched: dict[chess.Move, int] = {}
        self._after: dict[chess.Move, list[chess.Piece | None]] = {}
        self._legal: list[chess.Move] | None = None
        self._squares: list[chess.Piece | None] | None = None
        self._captures: int | None = None
        self._safety: tuple[int, int] | None = None
        self._castlings: dict[Key, chess.Move] | None = None

    @property
    def squares(self) -> list[chess.Piece | None]:
        """The 64 official squares (computed once): ``board.piece_at`` of each square, read off the bitboards of the
        key (one shared, never modified ``chess.Piece`` per colour and type, instead of 64 python-chess calls)."""
        squares = self._squares
        if squares is None:
            squares = self._squares = _squares_of(self._key)
        return squares

    @property
    def capture_targets(self) -> int:
        """Bitboard of opponent pieces the side to move attacks (a superset of the legal captures; e.p. victim)."""
        if self._captures is None:
            board = self.board
            turn = board.turn
            # an opponent piece is attacked when one of the side's pieces attacks its square: the union of the
            # side's attacks (tables for pawns, knights and king, python-chess for the sliders) taken once,
            # instead of python-chess's attackers of every opponent square
            own = board.occupied_co[turn]
            attacked = 0
            pawn_attacks = chess.BB_PAWN_ATTACKS[turn]
            for sq in chess.scan_forward(board.pawns & own):
                attacked |= pawn_attacks[sq]
            for sq in chess.scan_forward(board.knights & own):
                attacked |= chess.BB_KNIGHT_ATTACKS[sq]
            for sq in chess.scan_forward(board.kings & own):
                attacked |= chess.BB_KING_ATTACKS[sq]
            for sq in chess.scan_forward((board.bishops | board.rooks | board.queens) & own):
                attacked |= board.attacks_mask(sq)
            bb = attacked & board.occupied_co[not turn]
            if board.ep_square is not None:
                bb |= 1 << (board.ep_square - 8 if turn == chess.WHITE else board.ep_square + 8)
            self._captures = bb
        return self._captures

    @property
    def legal_moves(self) -> list[chess.Move]:
        """The legal moves of the official position (computed once)."""
        if self._legal is None:
            self._legal = list(self.board.legal_moves)
        return self._legal

    def _king_and_blockers(self) -> tuple[int, int]:
        """The side to move's king and its pinned pieces (python-chess's slider blockers), computed once;
        ``(-1, 0)`` when python-chess must be asked whole: in check, without a king, or on a variant board
        (whose ``is_variant_end`` may say something)."""
        safety = self._safety
        if safety is None:
            board = self.board
            king = board.king(board.turn)
            if king is None or type(board) is not chess.Board or board.checkers_mask():
                safety = (-1, 0)
            else:
                safety = (king, board._slider_blockers(king))
            self._safety = safety
        return safety

    def is_legal(self, move: chess.Move) -> bool:
        """``board.is_legal(move)``, with the position's part of the answer computed once.

        python-chess finds the king's checkers and the pinned pieces (slider blockers) again at every call;
        they depend on the position only, so they are kept here.
        """
        king, blockers = self._king_and_blockers()
        board = self.board
        if king < 0:
            return board.is_legal(move)
        pseudo = self._plain_pseudo_legal(move)
        if pseudo is None:
            pseudo = board.is_pseudo_legal(move)
        return pseudo and board._is_safe(king, blockers, move)

    def _plain_pseudo_legal(self, move: chess.Move) -> bool | None:
        """``board.is_pseudo_legal(move)`` for a move of a piece of the side to move other than its king, without a
        promotion, that is no castling, no en passant and no pawn step onto the last rank; ``None`` for the others
        (python-chess answers them). Its steps for these moves, without generating the pawn's moves: a piece's
        target is one its attacks reach, a pawn's one step or two from its rank onto empty squares, or a capture."""
        board = self.board
        origin, target = move.from_square, move.to_square
        fbit, tbit = 1 << origin, 1 << target
        turn = board.turn
        own = board.occupied_co[turn]
        if move.promotion or move.drop or not own & fbit or board.kings & fbit:
            return None
        if own & tbit:
            return False  # (the target is no vacant or opponent square)
        if not board.pawns & fbit:
            return bool(board.attacks_mask(origin) & tbit)
        if tbit & chess.BB_BACKRANKS or target == board.ep_square:
            return None
        if chess.BB_PAWN_ATTACKS[turn][origin] & tbit:
            return bool(board.occupied_co[not turn] & tbit)
        step = 8 if turn == chess.WHITE else -8
        if target == origin + step:
            return not board.occupied & tbit
        if target == origin + 2 * step and fbit & (chess.BB_RANK_2 if turn == chess.WHITE else chess.BB_RANK_7):
            return not board.occupied & (tbit | 1 << (origin + step))
        return False

    def _legal_moves_masked(self, from_mask: int, to_mask: int) -> list[chess.Move]:
        """``list(board.generate_legal_moves(from_mask, to_mask))``, in python-chess's order.

        Out of check, python-chess's legal moves are its pseudo-legal moves that pass ``_is_safe`` with the
        king and blockers of the position (kept here). For a narrow *to_mask*, *from_mask* is first narrowed
        to the pieces that can reach it (the side's attackers of those squares, its pawns and king: a
        superset of the moves' origins), which python-chess generates piece by piece in the same order.
        """
        board = self.board
        king, blockers = self._king_and_blockers()
        if king < 0:
            return list(board.generate_legal_moves(from_mask, to_mask))
        if not from_mask & board.occupied_co[board.turn]:
            return []  # every move of chess starts from a piece of the side to move
        if to_mask.bit_count() <= 4:
            turn = board.turn
            reach = board.occupied_co[turn] & (board.pawns | board.kings)
            for square in chess.scan_forward(to_mask):
                reach |= board.attackers_mask(turn, square)
            from_mask &= reach
        is_safe = board._is_safe
        return [move for move in board.generate_pseudo_legal_moves(from_mask, to_mask)
                if is_safe(king, blockers, move)]

    @property
    def targets(self) -> dict[Key, chess.Move]:
        """Placement key after each legal move -> the move (computed once, with bitboard arithmetic)."""
        if self._targets is None:
            self._targets = self._build_targets()
        return self._targets

    def _build_targets(self) -> dict[Key, chess.Move]:
        board = self.board
        base = list(self._key)
        turn = board.turn
        ci = 0 if turn == chess.WHITE else 1
        oi = 1 - ci
        targets: dict[Key, chess.Move] = {}
        touched = self._touched
        for move in self.legal_moves:
            f, t = move.from_square, move.to_square
            if board.is_castling(move):
                work = board.copy(stack=False)
                work.push(move)
                key = board_key(work)
                before = self.squares
                touched[move] = sum(1 << sq for sq in chess.SQUARES if work.piece_at(sq) != before[sq])
                targets[key] = move
                continue
            piece_type = board.piece_type_at(f)
            assert piece_type is not None
            k = base.copy()
            fbit = 1 << f
            tbit = 1 << t
            nt = ~tbit
            for i in range(8):
                k[i] &= nt
            k[ci] &= ~fbit
            k[_PIECE_INDEX[piece_type]] &= ~fbit
            k[ci] |= tbit
            k[_PIECE_INDEX[move.promotion or piece_type]] |= tbit
            bits = fbit | tbit
            if piece_type == chess.PAWN and board.ep_square == t and not base[0] & tbit and not base[1] & tbit:
                cap = t - 8 if turn == chess.WHITE else t + 8
                cbit = 1 << cap
                k[oi] &= ~cbit
                k[2] &= ~cbit
                bits |= cbit
            touched[move] = bits
            targets[(k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7])] = move
        return targets

    @property
    def key(self) -> Key:
        """Placement key of the official position."""
        return self._key

    def piece_at(self, square: int) -> chess.Piece | None:
        """Official content of *square*."""
        if self._squares is not None:
            return self._squares[square]
        return self.board.piece_at(square)

    def after(self, move: chess.Move) -> list[chess.Piece | None]:
        """The 64 squares after the legal *move* (computed on demand, cached)."""
        after = self._after.get(move)
        if after is None:
            work = self.board.copy(stack=False)
            work.push(move)
            after = [work.piece_at(sq) for sq in chess.SQUARES]
            self._after[move] = after
        return after

    def changed_squares(self, phys: PhysicalBoard) -> int:
        """Bitboard of squares whose physical reading differs from the official one."""
        key = phys.key()
        off = self._key
        diff = phys.markers
        for i in range(8):
            diff |= key[i] ^ off[i]
        return diff

    def classify(self, phys: PhysicalBoard) -> Diff:
        """Classify the physical board against the official position (side to move = ``board.turn``)."""
        key = phys.key()
        off = self._key
        markers = phys.markers
        if key == off and not markers:
            return _NONE
        # (changed_squares, unrolled)
        changed = (markers | (key[0] ^ off[0]) | (key[1] ^ off[1]) | (key[2] ^ off[2]) | (key[3] ^ off[3])
                   | (key[4] ^ off[4]) | (key[5] ^ off[5]) | (key[6] ^ off[6]) | (key[7] ^ off[7]))
        if self._targets is not None:
            move = self._targets.get(key)
        elif 2 <= changed.bit_count() <= 4:
            move = self._quick_move(phys, key, changed)
        else:
            move = None  # (what _quick_move answers for one changed square or more than four)
        if markers:
            return _diff(DiffClass.UNRECOGNISED, changed=changed)
        if move is not None:
            return _diff(DiffClass.LEGAL, move=move, changed=changed)
        turn = self.board.turn
        own_official = self.board.occupied_co[turn]
        opp_official = self.board.occupied_co[not turn]
        squares = phys.squares
        if not changed & (key[0] | key[1]):  # (no marker: the changed squares where something stands now)
            if changed & own_official:
                return _diff(DiffClass.IN_HAND, changed=changed)
            cands = self._partials(squares, changed)
            if cands:
                return _diff(DiffClass.PARTIAL, move=cands[0], candidates=cands, changed=changed,
                             subtype=self._partial_code(cands, squares))
            return _diff(DiffClass.OPP_ONLY, changed=changed)
        cands = self._partials(squares, changed)
        if cands:
            return _diff(DiffClass.PARTIAL, move=cands[0], candidates=cands, changed=changed,
                         subtype=self._partial_code(cands, squares))
        return self._analyse(squares, changed, own_official, opp_official)

    def legal_move(self, phys: PhysicalBoard) -> chess.Move | None:
        """The move when :meth:`classify` would answer ``LEGAL``, else ``None``: its first steps only, without the
        analysis of the other classes (for the callers that ask whether the board shows a legal move and no more)."""
        key = phys.key()
        off = self._key
        if phys.markers or key == off:
            return None
        if self._targets is not None:
            return self._targets.get(key)
        changed = ((key[0] ^ off[0]) | (key[1] ^ off[1]) | (key[2] ^ off[2]) | (key[3] ^ off[3])
                   | (key[4] ^ off[4]) | (key[5] ^ off[5]) | (key[6] ^ off[6]) | (key[7] ^ off[7]))
        if 2 <= changed.bit_count() <= 4:
            return self._quick_move(phys, key, changed)
        return None

    def _quick_move(self, phys: PhysicalBoard, key: Key, changed: int) -> chess.Move | None:
        """The legal move leading to *key*, found from the changed squares without generating all moves."""
        n = changed.bit_count()
        if n < 2 or n > 4:
            return None
        board = self.board
        turn = board.turn
        ci = 0 if turn == chess.WHITE else 1
        off = self._key
        own_gone = changed & off[ci] & ~(key[ci] & ~changed)
        own_new = changed & key[ci]
        if n == 4 or own_gone.bit_count() == 2:
            # only a castling moves two own pieces: in standard chess, the castlings' keys are the targets' that
            # can match (in Chess960 a king-only castling shares its key with a king's step: the targets decide)
            if board.chess960 or type(board) is not chess.Board:
                return self.targets.get(key)
            return self._castling_targets().get(key)
        if own_gone.bit_count() != 1 or own_new.bit_count() != 1:
            return None
        origin = own_gone.bit_length() - 1
        target = own_new.bit_length() - 1
        if origin == target:
            return None
        placed = phys.squares[target]
        moved = board.piece_type_at(origin)
        if not isinstance(placed, chess.Piece) or moved is None:
            return None
        promotion = placed.piece_type if placed.piece_type != moved and moved == chess.PAWN else None
        move = chess.Move(origin, target, promotion=promotion)
        if not self.is_legal(move):
            if board.chess960 and moved in (chess.KING, chess.ROOK):
                return self.targets.get(key)  # king-only or rook-only Chess960 castling
            return None
        if promotion is None and not (moved == chess.PAWN and target == board.ep_square) \
                and not (moved == chess.KING and board.is_castling(move)):
            # a plain move or capture: the key after it, from the official key without a push/pop
            bits = (1 << origin) | (1 << target)
            moved_to = 1 << target
            after = [k & ~bits for k in off]
            after[ci] |= moved_to
            after[_PIECE_INDEX[moved]] |= moved_to
            return move if tuple(after) == key else None
        board.push(move)  # the index owns this copy of the position: push/pop in place
        try:
            return move if board_key(board) == key else None
        finally:
            board.pop()

    def _castling_targets(self) -> dict[Key, chess.Move]:
        """Placement key after each legal castling move -> the move (standard chess; computed once): the entries of
        :attr:`targets` for the castlings, without generating every other move. Out of check python-chess's legal
        castlings are its castling moves (``_is_safe`` passes them); in check it generates none."""
        castlings = self._castlings
        if castlings is None:
            castlings = self._castlings = {}
            board = self.board
            for move in list(board.generate_castling_moves()):
                board.push(move)  # the index owns this copy of the position: push/pop in place
                try:
                    castlings[board_key(board)] = move
                finally:
                    board.pop()
        return castlings

    # -- partial states (§3.3) ------------------------------------------------

    def _partials(self, squares: list[Content], changed: int) -> tuple[chess.Move, ...]:
        """Legal moves of which the physical board is an intermediate state (§3.3)."""
        board = self.board
        out: list[chess.Move] = []
        changed_list = _squares(changed)
        pawn = chess.Piece(chess.PAWN, board.turn)
        # a move touches every changed square, so it starts or ends on one of them (e.p. victim: the e.p. square)
        to_mask = changed
        if board.ep_square is not None:
            to_mask |= chess.BB_SQUARES[board.ep_square]
        seen: set[tuple[int, int, int | None, int | None]] = set()
        off = self._key
        kings = board.kings
        pawns = board.pawns
        ep_square = board.ep_square
        legal = self._legal
        if legal is not None:
            # the legal list, when the position has made it (its targets, a parked capture), filtered by the masks:
            # python-chess generates in the same order with the masks as without them, and selects a castling
            # move by the rook's square (in its Chess960 form), not by where the king goes
            moves = [m for m in legal if changed >> m.from_square & 1]
            moves += [m for m in legal if to_mask >> (
                board._to_chess960(m).to_square if kings >> m.from_square & 1 and board.is_castling(m)
                else m.to_square) & 1]
        else:
            moves = [*self._legal_moves_masked(changed, chess.BB_ALL), *self._legal_moves_masked(chess.BB_ALL, to_mask)]
        for move in moves:
            f, t = move.from_square, move.to_square
            # a move's fields, as its equality compares them (a Move's own hash is a Python call)
            fields = (f, t, move.promotion, move.drop)
            if fields in seen:
                continue
            seen.add(fields)
            if not move.promotion and not (kings >> f) & 1 and not ((pawns >> f) & 1 and t == ep_square):
                # a plain move or capture touches its two squares only: after it the origin is empty and the
                # target holds the moved piece (no push/pop needed)
                if changed & ~((1 << f) | (1 << t)):
                    continue
                if (changed >> f) & 1 and squares[f] is not None:
                    continue
                if (changed >> t) & 1:
                    content = squares[t]
                    if content is not None and content != board.piece_at(f):
                        continue
                out.append(move)
                continue
            # Chess960: the king's square is part of its castling even where the king stays on it (the rook alone
            # passing it): the king beside the board while the rook moves is the recommended way (§3.3, II.3)
            touched = 1 << f if board.chess960 and (kings >> f) & 1 and board.is_castling(move) else 0
            board.push(move)
            try:
                for a, b in zip(board_key(board), off, strict=True):
                    touched |= a ^ b
                if changed & ~touched:
                    continue
                ok = True
                for sq in changed_list:
                    content = squares[sq]
                    if content is None:
                        continue
                    after = board.piece_at(sq)
                    if content == after:
                        continue
                    if move.promotion and sq == move.to_square and content == pawn:
                        continue  # pawn put on the promotion square first (R06 P1)
                    ok = False
                    break
            finally:
                board.pop()
            if ok:
                out.append(move)
        return tuple(out)

    def _partial_code(self, cands: tuple[chess.Move, ...], squares: list[Content]) -> str:
        board = self.board
        move = cands[0]
        if board.is_castling(move):
            return "CASTLING_INCOMPLETE_AT_PRESS"
        if move.promotion:
            if squares[move.to_square] == chess.Piece(chess.PAWN, board.turn):
                return "PAWN_NOT_REPLACED"
            return "PROMOTION_INCOMPLETE_AT_PRESS"
        if board.is_en_passant(move):
            return "EN_PASSANT_INCOMPLETE_AT_PRESS"
        return "POSITION_MISMATCH_AT_PRESS"

    # -- illegal shapes (§3.2 ILLEGAL_1 / TWO_MOVES) --------------------------

    def _wrong_colour_promotion(self, squares: list[Content], changed: int, own_missing: int, own_added: int,
                                *, opp_added: int, opp_missing: int) -> Diff:
        """A pawn taken off the seventh rank and a piece of the opponent's colour put on the promotion square
        (3.7.5.1: a new piece of the same colour): an illegal move, ``PROMOTION_INVALID_PIECE``."""
        if own_added or opp_added.bit_count() != 1 or own_missing.bit_count() != 1:
            return Diff(DiffClass.UNRECOGNISED, changed=changed)
        target = chess.lsb(opp_added)
        origin = promotion_origin(self.board, own_missing, target)
        placed = squares[target]
        if origin is None or not isinstance(placed, chess.Piece) or opp_missing & ~(1 << target):
            return Diff(DiffClass.UNRECOGNISED, changed=changed)
        if chess.square_file(origin) != chess.square_file(target) and not opp_missing & (1 << target):
            return Diff(DiffClass.UNRECOGNISED, changed=changed)  # a diagonal step needs a capture
        move = chess.Move(origin, target, promotion=placed.piece_type)
        return Diff(DiffClass.ILLEGAL_1, move=move, subtype="PROMOTION_INVALID_PIECE", changed=changed,
                    relocations=((origin, target),))

    def _castling_onto_each_other(self, squares: list[Content], involved: int
                                  ) -> tuple[chess.Move, tuple[tuple[int, int], ...]] | None:
        """Chess960: king and rook in their castled places where one (or each) landed on the other's start
        square (f1/g1 or c1/d1 swapped, king b1 to c1 with the rook from c1), and castling is not legal there
        (II.3.2: a castling shape, so the illegal move is a castling, R16). The change names only the two squares
        where the other piece now stands, so the relocations are read from the pieces: None if it is no such shape.
        """
        turn = self.board.turn
        back = 0 if turn == chess.WHITE else 7
        king_from = self.board.king(turn)
        if king_from is None or chess.square_rank(king_from) != back:
            return None
        for king_file, rook_file in ((2, 3), (6, 5)):
            king_to, rook_to = chess.square(king_file, back), chess.square(rook_file, back)
            if squares[king_to] != chess.Piece(chess.KING, turn) or squares[rook_to] != chess.Piece(chess.ROOK, turn):
                continue
            for rook_from in chess.SquareSet(self.board.rooks & self.board.occupied_co[turn] & chess.BB_RANKS[back]):
                moved = {king_from, king_to, rook_from, rook_to}
                if king_from == king_to or rook_from == rook_to or len(moved) == 4:
                    continue  # one piece stays, or no square shared: the other shapes of _analyse
                if sum(1 << sq for sq in moved) != involved:
                    continue
                if any(squares[sq] is not None for sq in moved - {king_to, rook_to}):
                    continue
                return chess.Move(king_from, rook_from), ((king_from, king_to), (rook_from, rook_to))
        return None

    def _castling_finished_wrong(self, squares: list[Content], own_missing: int, own_added: int
                                 ) -> tuple[chess.Move, tuple[tuple[int, int], ...]] | None:
        """The king and a rook it may castle with (the right kept) both relocated along the back rank, and nothing
        else changed, but not into their castled places (those are the other castling shapes of :meth:`_analyse`):
        a castling finished wrong, the rook or the king on a wrong square, or king and rook each on the other's
        castled square (II.3 / 3.8.2: castling is the joint move of king and rook that ends on c1+d1 or g1+f1; a
        joint king and rook move that ends elsewhere is an illegal castling, R16, not two moves or a displaced
        piece). The castling meant is the one with that rook."""
        board = self.board
        turn = board.turn
        back = 0 if turn == chess.WHITE else 7
        king_from = board.king(turn)
        if king_from is None or chess.square_rank(king_from) != back or own_added.bit_count() != 2 \
                or own_missing.bit_count() != 2 or not own_missing & (1 << king_from):
            return None
        rook_from = chess.lsb(own_missing & ~(1 << king_from))
        if board.piece_at(rook_from) != chess.Piece(chess.ROOK, turn) or chess.square_rank(rook_from) != back \
                or not board.castling_rights & chess.BB_SQUARES[rook_from]:
            return None
        king, rook = chess.Piece(chess.KING, turn), chess.Piece(chess.ROOK, turn)
        ends = {squares[sq]: sq for sq in _squares(own_added)}
        king_to, rook_to = ends.get(king), ends.get(rook)
        if king_to is None or rook_to is None or chess.square_rank(king_to) != back \
                or chess.square_rank(rook_to) != back or king_to == king_from or rook_to == rook_from:
            return None
        kingside = rook_from > king_from
        if (chess.square_file(king_to), chess.square_file(rook_to)) == ((6, 5) if kingside else (2, 3)):
            return None  # the castled places: the other shapes (_castling_onto_each_other, the two relocations)
        if board.chess960:
            move = chess.Move(king_from, rook_from)
        else:
            move = chess.Move(king_from, chess.square(6 if kingside else 2, back))
        return move, ((king_from, king_to), (rook_from, rook_to))

    def _lone_castling(self, origin: int, target: int) -> bool:
        """Chess960: one piece relocated along the back rank into its castled place, the other already standing
        in its own (II.3: castling by the king alone, the rook on d1/f1; or by the rook alone over the king on
        c1/g1). When that is not legal it is an illegal castling (R16), not a king's two-square step or a rook
        blocked by its own king."""
        board = self.board
        turn = board.turn
        back = 0 if turn == chess.WHITE else 7
        moved = board.piece_at(origin)
        if not board.chess960 or moved is None or chess.square_rank(origin) != back \
                or chess.square_rank(target) != back:
            return False
        file_from, file_to = chess.square_file(origin), chess.square_file(target)
        if moved.piece_type == chess.KING and file_to in (2, 6):
            rook_file = 3 if file_to == 2 else 5
            rook = chess.square(rook_file, back)
            # the wing's rook already on d1/f1, between the king and its castled square
            return board.piece_at(rook) == chess.Piece(chess.ROOK, turn) and \
                min(file_from, file_to) < rook_file < max(file_from, file_to)
        if moved.piece_type == chess.ROOK and file_to in (3, 5):
            king = chess.square(2 if file_to == 3 else 6, back)
            # the king already on c1/g1, the rook passing over it
            return board.piece_at(king) == chess.Piece(chess.KING, turn) and \
                min(file_from, file_to) < chess.square_file(king) < max(file_from, file_to)
        return False

    def _analyse(self, squares: list[Content], changed: int, own: int, opp: int) -> Diff:
        turn = self.board.turn
        official = self.squares
        own_missing = 0  # official own piece no longer there
        own_added = 0  # own piece where the official content differs
        opp_missing = 0
        opp_added = 0
        for sq in _squares(changed):
            was = official[sq]
            now = squares[sq]
            if was is not None:
                if was.color == turn:
                    own_missing |= 1 << sq
                else:
                    opp_missing |= 1 << sq
            if isinstance(now, chess.Piece):
                if now.color == turn:
                    own_added |= 1 << sq
                else:
                    opp_added |= 1 << sq
        if opp_added:
            return self._wrong_colour_promotion(squares, changed, own_missing, own_added, opp_added=opp_added,
                                                opp_missing=opp_missing)
        if not own_missing and not own_added:
            return Diff(DiffClass.OPP_ONLY, changed=changed)
        if own_missing & own_added and not opp_missing and self.board.chess960:
            swapped = self._castling_onto_each_other(squares, own_missing | own_added)
            if swapped is not None:
                return Diff(DiffClass.ILLEGAL_1, move=swapped[0], subtype="CASTLING_ILLEGAL", changed=changed,
                            relocations=swapped[1])
        if not opp_missing:
            wrong = self._castling_finished_wrong(squares, own_missing, own_added)
            if wrong is not None:
                return Diff(DiffClass.ILLEGAL_1, move=wrong[0], subtype="CASTLING_ILLEGAL", changed=changed,
                            relocations=wrong[1])
        tos = _squares(own_added)
        froms = [sq for sq in _squares(own_missing) if not own_added & (1 << sq)]
        if len(froms) == 1 and len(tos) == 1:
            origin, target = froms[0], tos[0]
            moved = official[origin]
            placed = squares[target]
            assert moved is not None
            assert isinstance(placed, chess.Piece)
            promotion: int | None = None
            if placed != moved:
                if moved.piece_type == chess.PAWN and chess.square_rank(target) in (0, 7):
                    promotion = placed.piece_type
                else:
                    return Diff(DiffClass.UNRECOGNISED, changed=changed)
            extra_opp = opp_missing & ~(1 << target)
            if extra_opp:
                ep_sq = chess.square(chess.square_file(target), chess.square_rank(origin))
                if not (moved.piece_type == chess.PAWN and extra_opp == 1 << ep_sq):
                    return Diff(DiffClass.UNRECOGNISED, changed=changed)
            move = chess.Move(origin, target, promotion=promotion)
            subtype = "CASTLING_ILLEGAL" if self._lone_castling(origin, target) else \
                illegal_subtype(self.board, move, squares)
            return Diff(DiffClass.ILLEGAL_1, move=move, subtype=subtype, changed=changed,
                        relocations=((origin, target),))
        if len(froms) == 2 and len(tos) == 2:
            pairs = _pair(official, squares, froms, tos)
            if pairs is None:
                return Diff(DiffClass.UNRECOGNISED, changed=changed)
            king = [p for p in pairs if official[p[0]] == chess.Piece(chess.KING, turn)]
            rook = [p for p in pairs if official[p[0]] == chess.Piece(chess.ROOK, turn)]
            if king and rook and not opp_missing:
                kf, kt = king[0]
                back = 0 if turn == chess.WHITE else 7
                if (chess.square_rank(kf) == back and chess.square_rank(kt) == back
                        and chess.square_file(kt) in (2, 6) and chess.square_rank(rook[0][1]) == back
                        and chess.square_file(rook[0][1]) in (3, 5)):
                    move = chess.Move(kf, kt) if not self.board.chess960 else chess.Move(kf, rook[0][0])
                    return Diff(DiffClass.ILLEGAL_1, move=move, subtype="CASTLING_ILLEGAL", changed=changed,
                                relocations=tuple(pairs))
            return Diff(DiffClass.TWO_MOVES, changed=changed, relocations=tuple(pairs))
        return Diff(DiffClass.UNRECOGNISED, changed=changed)


def promotion_origin(board: chess.Board, own_missing: int, target: int) -> int | None:
    """The square among *own_missing* of the side to move's pawn that could have promoted on *target* (one step
    forward or diagonally), if any."""
    turn = board.turn
    last = 7 if turn == chess.WHITE else 0
    if chess.square_rank(target) != last:
        return None
    for origin in _squares(own_missing):
        if board.piece_at(origin) == chess.Piece(chess.PAWN, turn) and \
                chess.square_rank(origin) == last - (1 if turn == chess.WHITE else -1) and \
                abs(chess.square_file(origin) - chess.square_file(target)) <= 1:
            return origin
    return None


def _pair(official: list[chess.Piece | None], squares: list[Content], froms: list[int],
          tos: list[int]) -> list[tuple[int, int]] | None:
    a, b = froms
    c, d = tos
    if official[a] == squares[c] and official[b] == squares[d]:
        return [(a, c), (b, d)]
    if official[a] == squares[d] and official[b] == squares[c]:
        return [(a, d), (b, c)]
    return None


def illegal_subtype(board: chess.Board, move: chess.Move, squares: list[Content] | None = None) -> str:
    """The ``ILLEGAL_MOVE`` subtype (rules-spec R16) of a physical single-piece move that is not legal."""
    turn = board.turn
    piece = board.piece_at(move.from_square)
    target = board.piece_at(move.to_square)
    if piece is None:
        return "GEOMETRY"
    if target is not None and target.color == turn:
        return "OWN_PIECE_CAPTURED"
    if target is not None and target.piece_type == chess.KING:
        return "KING_CAPTURED"
    if move.promotion in (chess.KING, chess.PAWN):
        return "PROMOTION_INVALID_PIECE"
    if board.is_pseudo_legal(move):
        return "CASTLING_ILLEGAL" if board.is_castling(move) else "SELF_CHECK"
    df = chess.square_file(move.to_square) - chess.square_file(move.from_square)
    dr = chess.square_rank(move.to_square) - chess.square_rank(move.from_square)
    if piece.piece_type == chess.KING and dr == 0 and abs(df) == 2:
        return "CASTLING_ILLEGAL"
    if piece.piece_type == chess.PAWN:
        forward = 1 if turn == chess.WHITE else -1
        if abs(df) == 1 and dr == forward and target is None:
            return "EN_PASSANT_INVALID"
        start_rank = 1 if turn == chess.WHITE else 6
        if df == 0 and (dr == forward or (dr == 2 * forward and chess.square_rank(move.from_square) == start_rank)):
            return "BLOCKED"
        if move.promotion is None and chess.square_rank(move.to_square) in (0, 7) and (
                abs(df) <= 1 and dr == forward):
            return "PROMOTION_INVALID_PIECE"
        return "GEOMETRY"
    slider_lines = {
        chess.BISHOP: df != 0 and abs(df) == abs(dr),
        chess.ROOK: (df == 0) != (dr == 0),
        chess.QUEEN: (df != 0 and abs(df) == abs(dr)) or ((df == 0) != (dr == 0)),
    }
    if slider_lines.get(piece.piece_type, False) and chess.between(move.from_square, move.to_square) & board.occupied:
        return "BLOCKED"
    return "GEOMETRY"


def describe_change(official: chess.BaseBoard, squares: list[Content]) -> str:
    """A long-algebraic description of how *squares* differ from *official* (``"Bf1-c5"``, ``"e4xd5 +bP h5"``)."""
    gone: list[tuple[int, chess.Piece]] = []
    came: list[tuple[int, chess.Piece]] = []
    for sq in chess.SQUARES:
        was = official.piece_at(sq)
        now = squares[sq]
        if was == now:
            continue
        if was is not None:
            gone.append((sq, was))
        if isinstance(now, chess.Piece):
            came.append((sq, now))
    parts: list[str] = []
    used_gone: set[int] = set()
    for sq, piece in came:
        origin = next((g for g, p in gone if g not in used_gone and g != sq
                       and (p == piece or (p.piece_type == chess.PAWN and p.color == piece.color
                                           and chess.square_rank(sq) in (0, 7)))), None)
        if origin is None:
            parts.append(f"+{'wb'[not piece.color]}{piece.symbol().upper()} {chess.square_name(sq)}")
            continue
        used_gone.add(origin)
        mover = official.piece_at(origin)
        assert mover is not None
        letter = "" if mover.piece_type == chess.PAWN else mover.symbol().upper()
        captured = official.piece_at(sq)
        sep = "x" if captured is not None else "-"
        if captured is not None:
            used_gone.add(sq)
        promo = f"={piece.symbol().upper()}" if piece.piece_type != mover.piece_type else ""
        parts.append(f"{letter}{chess.square_name(origin)}{sep}{chess.square_name(sq)}{promo}")
    for sq, piece in gone:
        if sq not in used_gone and not (isinstance(squares[sq], chess.Piece)):
            parts.append(f"-{'wb'[not piece.color]}{piece.symbol().upper()} {chess.square_name(sq)}")
    return " ".join(parts) if parts else "--"
