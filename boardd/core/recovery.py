"""Recovering the moves played while the daemon was not reading the board (a crash, a reboot, a power cut).

Theory of operation
-------------------
Pure: a position in, a position out, no I/O, no clock. :func:`recover` gets

* the official position the journal ends with (a ``chess.Board`` with its move stack; Chess960 too),
* the physical placement the board shows now (64 contents in the official frame),
* optionally what the board logged itself meanwhile (:class:`boardd.core.events.BoardLog` entries,
  the DGT EEPROM, protocols.md §1.9, mapped into the official frame), and
* optionally the side to move now (from the clock: the running side), which fixes the parity,

and returns a :class:`Recovery`:

``unique``     one move sequence explains the board: its moves, how they were found;
``ambiguous``  several sequences of the fewest plies fit (transpositions, the same piece by two
               routes): the candidates, for the arbiter to choose; or the one found moves a piece
               away and back (:data:`COMES_BACK`): a single candidate, for the arbiter too;
``gap``        nothing within ``max_plies`` (default 12) explains it: the record goes on from the
               physical position with a marked gap;
``none``       the board shows the official position.

**With the board's log** the log is replayed onto the official placement: the placement after every
logged change is a point where a move may have been completed; a depth-first walk takes, in order,
the points that show a legal successor of the position so far and must end at the board's placement
(a slide reports the intermediate squares: a match the rest of the log cannot continue from is given
up again). Changes already seen before the crash replay onto the placement they produced, so a log
that starts a little early does no harm. A log that does not lead to the board (a lost record) falls
back to the search.

**The search** is an iterative deepening over legal moves, pruned by the squares that changed (every
move touches a changed square or one touched before: a piece that wanders away and back is not found),
by material (no more pieces of a colour than it has now) and by a counting bound: a move changes its
own colour's placement on two squares (four castling, once) and the other colour's only by a capture,
and exactly as many captures of a colour remain as it has pieces more than the board shows, so its
moves left plus those captures must cover the squares where its placement differs. All sequences of the fewest plies are
collected (up to ``max_candidates``); one is the answer, several are ambiguous. A node budget bounds
the work: when it runs out, nothing is proven (a longer or another sequence may fit as well as those found),
so the answer is never taken as fact (``detail`` :data:`BUDGET_EXHAUSTED`, :attr:`Recovery.exhausted`):
``ambiguous`` with the sequences found at the depth it ran out at (candidates for the arbiter), ``gap`` when
none was.

**What the board cannot show.** The only sequence found is not taken as fact when one of its pieces
leaves its square and comes back to it (``Bxh6 g5 Bxg5 Kg7 Be3 Kg8`` for two pawns gone from g7 and h6):
the board shows none of those moves, only what they captured, and the same board follows from pieces
taken off by hand (knocked over, removed by mistake: 7.4, 7.6), which no search can rule out. Fewest
plies then is no evidence of play: the sequence is a candidate for the arbiter (``ambiguous``, one
candidate, ``detail`` :data:`COMES_BACK`), as after a gap. Over 400 stretches of 2-12 plies of the real
games of ``shared/data/pgn`` none of the 64 sequences the search alone recovered moved a piece away
and back; 36 of 40 boards with two pawns taken off by hand were explained by one that did.

**Times** (:func:`place_presses`): the board's log holds the presser's time at every lever change;
with the clock reading at the restart, the increment and the clock the journal ended with, the time of
every press is computed backwards from the reading (each side's clock only runs between the other
side's press and its own).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, TypeVar

import chess

from boardd.core.events import ClockSide, Content, LogEntry, LoggedChange, LoggedPress

__all__ = ["BUDGET_EXHAUSTED", "COMES_BACK", "DEFAULT_MAX_PLIES", "ILLEGAL_LAST", "STEP_NODES", "TWICE_LAST",
           "Recovery", "RecoveryKind", "Steps", "again_move", "comes_back", "finish", "place_presses", "recover",
           "recover_illegal_steps", "recover_steps", "recover_twice_steps", "sans_of", "target_board"]

#: How far the search looks (the brief asks for at least 10 plies).
DEFAULT_MAX_PLIES = 12
#: Positions the search may visit before it gives up (a gap, never a guess).
DEFAULT_NODE_BUDGET = 400_000
#: Positions the stepwise search (:func:`recover_steps`) visits between two of its steps.
STEP_NODES = 1000
#: ``Recovery.detail`` of the one sequence found that moves a piece away and back (module docstring).
COMES_BACK = "a piece moves away and back"
#: ``Recovery.detail`` of a search that ran out of its node budget: what it found is not all that fits.
BUDGET_EXHAUSTED = "search budget exhausted"
#: :func:`recover_illegal_steps`: the legal plies found, an illegal move of the side to move after them on the board
ILLEGAL_LAST = "then an illegal move"
#: :func:`recover_twice_steps`: the legal plies found, then one move of their last mover on the board (out of turn)
TWICE_LAST = "then a move out of turn"


class RecoveryKind(enum.Enum):
    """What the recovery found."""

    NONE = "none"
    UNIQUE = "unique"
    AMBIGUOUS = "ambiguous"
    GAP = "gap"


@dataclass(frozen=True, slots=True)
class Recovery:
    """The result of :func:`recover`.

    Attributes:
        kind: see :class:`RecoveryKind`.
        moves: the sequence (``unique``).
        candidates: the sequences that fit (``ambiguous``). :func:`recover` gives them all of one length; the
            engine may add those one ply longer that leave the side whose clock runs to move
            (``Downtime._recover``).
        method: ``"eeprom"`` (the board's log; ``"changes"`` when the only log was the changes seen after
            the restart) or ``"search"``.
        changes_used: for ``eeprom``: the index of the log entry that completed each move.
        nodes: positions visited (the work done).
        detail: ``gap``: the plies searched; :data:`COMES_BACK`; :data:`BUDGET_EXHAUSTED` (``gap``, or ``ambiguous``
            with the sequences found before the budget ran out: never a fact).
    """

    kind: RecoveryKind
    moves: tuple[chess.Move, ...] = ()
    candidates: tuple[tuple[chess.Move, ...], ...] = ()
    method: str = "search"
    changes_used: tuple[int, ...] = ()
    nodes: int = 0
    detail: str = ""
    sans: tuple[str, ...] = field(default=())

    def sequences(self) -> tuple[tuple[chess.Move, ...], ...]:
        """The sequences found: the one (``unique``) or the candidates (``ambiguous``); none otherwise."""
        if self.kind is RecoveryKind.UNIQUE:
            return (self.moves,)
        return self.candidates if self.kind is RecoveryKind.AMBIGUOUS else ()

    @property
    def exhausted(self) -> bool:
        """The search ran out of its node budget: a longer or another sequence may fit as well (no proof)."""
        return self.detail == BUDGET_EXHAUSTED

    def describe(self) -> str:
        """One line for the finding and the event."""
        if self.kind is RecoveryKind.UNIQUE:
            how = {"eeprom": "from the board's own log (EEPROM)",
                   "changes": "from the changes seen after the restart"}.get(
                self.method, "by search constrained by the changed squares")
            then = {ILLEGAL_LAST: "; then an illegal move, on the board",
                    TWICE_LAST: "; then a move out of turn of their last mover, on the board"}.get(self.detail, "")
            return f"{len(self.moves)} move(s) recovered {how}: {' '.join(self.sans)}{then}"
        if self.kind is RecoveryKind.AMBIGUOUS and self.detail == COMES_BACK and len(self.candidates) == 1:
            return (f"1 sequence of {len(self.candidates[0])} plies fits, but {COMES_BACK}: the board cannot show "
                    "it (pieces taken off by hand?); the arbiter chooses")
        if self.kind is RecoveryKind.AMBIGUOUS and self.exhausted:
            plies = "/".join(str(n) for n in sorted({len(c) for c in self.candidates}))
            return (f"{BUDGET_EXHAUSTED} ({self.nodes} positions): {len(self.candidates)} sequence(s) of {plies} "
                    "plies found, others may fit; the arbiter chooses")
        if self.kind is RecoveryKind.AMBIGUOUS:
            plies = "/".join(str(n) for n in sorted({len(c) for c in self.candidates}))
            return f"{len(self.candidates)} sequences of {plies} plies fit; the arbiter chooses"
        if self.kind is RecoveryKind.GAP and self.exhausted:
            return f"{BUDGET_EXHAUSTED} ({self.nodes} positions) before a sequence explained the board: a gap"
        if self.kind is RecoveryKind.GAP:
            return f"no sequence of up to {self.detail} plies explains the board: a gap"
        return "the board shows the official position"


def _placement_key(board: chess.BaseBoard) -> tuple[int, ...]:
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK])


def target_board(target: Sequence[Content]) -> chess.BaseBoard:
    """The pieces of *target* (a square's content in square order) on an empty board: markers and empties left out."""
    base = chess.BaseBoard.empty()
    for square, content in enumerate(target):
        if isinstance(content, chess.Piece):
            base.set_piece_at(square, content)
    return base


def sans_of(board: chess.Board, moves: Sequence[chess.Move]) -> tuple[str, ...]:
    """The SAN of *moves* played from *board* in turn."""
    work = board.copy(stack=False)
    out: list[str] = []
    for move in moves:
        out.append(work.san(move))
        work.push(move)
    return tuple(out)


_T = TypeVar("_T")
#: A computation done in steps: ``next()`` does one (``None``); its ``StopIteration.value`` is the result.
Steps: TypeAlias = Generator[None, None, _T]


def finish(steps: Steps[_T]) -> _T:
    """Every step of *steps* at once: its result."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            result: _T = stop.value
            return result


def recover(board: chess.Board, target: Sequence[Content], *, log: Sequence[LogEntry] = (),
            turn: chess.Color | None = None, max_plies: int = DEFAULT_MAX_PLIES, max_candidates: int = 8,
            node_budget: int = DEFAULT_NODE_BUDGET, min_plies: int = 1) -> Recovery:
    """The moves that lead from *board* to the placement *target* (official frame); see the module docstring.

    The search tries *min_plies* to *max_plies* plies (the board's log is replayed whatever its length).
    """
    return finish(recover_steps(board, target, log=log, turn=turn, max_plies=max_plies,
                                max_candidates=max_candidates, node_budget=node_budget, min_plies=min_plies))


def recover_steps(board: chess.Board, target: Sequence[Content], *, log: Sequence[LogEntry] = (),
                  turn: chess.Color | None = None, max_plies: int = DEFAULT_MAX_PLIES, max_candidates: int = 8,
                  node_budget: int = DEFAULT_NODE_BUDGET, min_plies: int = 1,
                  step: int = STEP_NODES) -> Steps[Recovery]:
    """:func:`recover` in steps: the search pauses (yields) after every *step* positions it visits.

    The pauses change neither the order of the visit nor the count of positions: every step size gives the
    result of :func:`recover`. The replay of the board's log pauses the same way (every *step* positions of its
    walk, and of the walks after the plies it may lack at its start).
    """
    goal = target_board(target)
    goal_key = _placement_key(goal)
    if _placement_key(board) == goal_key and (turn is None or turn == board.turn):
        return Recovery(kind=RecoveryKind.NONE)
    changes = [e for e in log if isinstance(e, LoggedChange)]
    if changes:
        found = yield from _replay(board, log, goal_key, turn, max_moves=max(max_plies, 10) * 3, budget=node_budget,
                                   step=step)
        if found is None:
            found = yield from _replay_after_lost(board, log, goal, goal_key, turn,
                                                  max_moves=max(max_plies, 10) * 3, budget=node_budget, step=step)
        if found is not None:
            moves, used, nodes = found
            return Recovery(kind=RecoveryKind.UNIQUE, moves=tuple(moves), method="eeprom", changes_used=tuple(used),
                            nodes=nodes, sans=sans_of(board, moves))
    if max_plies <= 0:
        return Recovery(kind=RecoveryKind.GAP, detail="0")
    search = _Search(board, goal, goal_key, node_budget, max_candidates, step=step)
    for depth in range(max(1, min_plies), max_plies + 1):
        if turn is not None and (board.turn if depth % 2 == 0 else not board.turn) != turn:
            continue
        found_seqs = yield from search.run(depth)
        if search.exhausted:  # no proof: those found so far (all of this depth) are candidates, never a fact
            return Recovery(kind=RecoveryKind.AMBIGUOUS if found_seqs else RecoveryKind.GAP,
                            candidates=tuple(found_seqs), nodes=search.nodes, detail=BUDGET_EXHAUSTED)
        if found_seqs:
            if len(found_seqs) == 1 and comes_back(board, found_seqs[0]):
                return Recovery(kind=RecoveryKind.AMBIGUOUS, candidates=(found_seqs[0],), nodes=search.nodes,
                                detail=COMES_BACK)
            if len(found_seqs) == 1:
                return Recovery(kind=RecoveryKind.UNIQUE, moves=found_seqs[0], nodes=search.nodes,
                                sans=sans_of(board, found_seqs[0]))
            return Recovery(kind=RecoveryKind.AMBIGUOUS, candidates=tuple(found_seqs), nodes=search.nodes)
    return Recovery(kind=RecoveryKind.GAP, nodes=search.nodes, detail=str(max_plies))


def log_placements(board: chess.Board, log: Sequence[LogEntry]) -> list[tuple[int, list[Content]]]:
    """The placements the board's log walks through from *board*'s: after each of its changes, its index in *log*
    and the 64 squares' contents then (the log's other entries, such as presses, are skipped)."""
    placement = board.copy(stack=False)
    cuts: list[tuple[int, list[Content]]] = []
    for i, entry in enumerate(log):
        if not isinstance(entry, LoggedChange):
            continue
        placement.remove_piece_at(entry.square)
        if isinstance(entry.content, chess.Piece):
            placement.set_piece_at(entry.square, entry.content)
        cuts.append((i, [placement.piece_at(sq) for sq in chess.SQUARES]))
    return cuts


def recover_illegal_steps(board: chess.Board, target: Sequence[Content], *, log: Sequence[LogEntry] = (),
                          max_plies: int = DEFAULT_MAX_PLIES, proven: int = 0, max_candidates: int = 8,
                          node_budget: int = DEFAULT_NODE_BUDGET, step: int = STEP_NODES) -> Steps[Recovery]:
    """The legal plies after which the board shows one illegal move of the side to move (7.5.1).

    For a board no legal sequence explains (a ``gap`` of :func:`recover_steps`): the last ply played may have been
    an illegal one, a piece put on an empty square it cannot go to (a capture is not looked for). ``unique`` (the
    legal plies; the illegal move is left to the board, as live play leaves it, for the engine to judge at its
    press) when one way is known:

    * **the board's log** (*log*): its placements, latest first; the latest one that the log's own walk leads to
      by legal moves (:func:`recover_steps` with the log) and from which the board is one illegal move of the
      side then to move (method ``eeprom``);
    * else **the search**, as :func:`recover_steps`, its goal one such move away from the board or one piece of the
      other side put elsewhere (displaced, 7.4: no move of his; the counting bound gives each side one move more):
      one sequence of the fewest plies (1 to *max_plies* - 1), within the budget, no piece away and back, and it
      the illegal move's (a displaced piece explaining the board as well in as few plies is no move to judge).
      The fewest plies hold only against every legal sequence as short (the illegal move counted): *proven* is
      the depth up to which the caller's search found none; beyond it, a legal search up to that length must find
      none within the budget.

    Otherwise ``gap`` (nothing to take: several ways, none, no proof).
    """
    goal = target_board(target)
    nodes = 0
    if any(isinstance(e, LoggedChange) for e in log):
        found, nodes = yield from _log_walk(
            board, log, lambda cut: chess.popcount(cut.occupied ^ goal.occupied) == 2,
            lambda after: _Search(after, goal, _placement_key(goal), 1, 1, illegal_last=True)._one_illegal(after),
            node_budget=node_budget, step=step)
        if found is not None:
            return dataclasses.replace(found, nodes=nodes, detail=ILLEGAL_LAST)
    search = _Search(board, goal, _placement_key(goal), node_budget, max_candidates, step=step, illegal_last=True)
    for depth in range(max_plies):
        found_seqs = yield from search.run(depth)
        if search.exhausted:
            break
        if not found_seqs:
            continue
        if depth == 0 or len(found_seqs) != 1 or comes_back(board, found_seqs[0]):
            break  # (none played before it: the one-ply case is live play's, or a piece displaced)
        after = board.copy(stack=False)
        for move in found_seqs[0]:
            after.push(move)
        if not search._one_illegal(after):
            break  # a piece of the other side put elsewhere (displaced, 7.4) explains the board as well: no move
        nodes += search.nodes
        if depth + 1 > proven:  # a legal sequence as short may fit: it must be ruled out within the budget
            legal = _Search(board, goal, _placement_key(goal), node_budget, max_candidates, step=step)
            for plies in range(max(1, proven + 1), depth + 2):
                if (yield from legal.run(plies)) or legal.exhausted:
                    return Recovery(kind=RecoveryKind.GAP, nodes=nodes + legal.nodes)
            nodes += legal.nodes
        return Recovery(kind=RecoveryKind.UNIQUE, moves=found_seqs[0], nodes=nodes,
                        sans=sans_of(board, found_seqs[0]), detail=ILLEGAL_LAST)
    return Recovery(kind=RecoveryKind.GAP, nodes=nodes + search.nodes,
                    detail=BUDGET_EXHAUSTED if search.exhausted else "")


def again_move(board: chess.Board, goal: chess.BaseBoard) -> chess.Move | None:
    """The one move of the player who has just moved (*board*'s side not to move) that leads from *board*'s placement
    to *goal*'s (R13: his move on the opponent's turn), if there is one."""
    again = board.copy(stack=False)
    again.turn = not board.turn
    again.ep_square = None
    goal_key = _placement_key(goal)
    fits = []
    for move in again.legal_moves:
        again.push(move)
        if _placement_key(again) == goal_key:
            fits.append(move)
        again.pop()
    return fits[0] if len(fits) == 1 else None


def recover_twice_steps(board: chess.Board, target: Sequence[Content], *, log: Sequence[LogEntry] = (),
                        node_budget: int = DEFAULT_NODE_BUDGET, step: int = STEP_NODES) -> Steps[Recovery]:
    """The legal plies after which the board shows one more move of their last mover (R13, no clock: the player who
    had just moved moved again on the opponent's turn, 1.3 and 6.2.5), for a board no legal sequence explains.

    ``unique`` (the legal plies; the move out of turn is left to the board, as live play leaves it, ``detail``
    :data:`TWICE_LAST`) when one way is known:

    * none played before it: the board is one move of the record's last mover from the official position (his
      released move not changed: the board is no move of his from the position before it, R07);
    * **the board's log** (*log*, it shows the order of the changes): its placements, latest first; the latest one
      the log's own walk leads to by legal plies (:func:`recover_steps` with the log) and from which the board is
      one move of their last mover (method ``eeprom``).

    Otherwise ``gap``. Without the log, plies before it are not searched: the two moves of the same player may
    have been made in either order (Nf3 then Bc4 out of turn, or Bc4 then Nf3), so the order is rarely one.
    """
    goal = target_board(target)
    nodes = 0
    if board.move_stack and again_move(board, goal) is not None:
        before = board.copy(stack=1)
        before.pop()
        before.turn = not before.turn  # (the released move's own player to move again: a changed move)
        if again_move(before, goal) is None:
            return Recovery(kind=RecoveryKind.UNIQUE, detail=TWICE_LAST)
    if any(isinstance(e, LoggedChange) for e in log):
        found, nodes = yield from _log_walk(
            board, log, lambda cut: 2 <= chess.popcount(cut.occupied ^ goal.occupied) + len(
                [sq for sq in chess.scan_forward(cut.occupied & goal.occupied)
                 if cut.piece_at(sq) != goal.piece_at(sq)]) <= 4,
            lambda after: again_move(after, goal) is not None, node_budget=node_budget, step=step)
        if found is not None:
            return dataclasses.replace(found, nodes=nodes, detail=TWICE_LAST)
    return Recovery(kind=RecoveryKind.GAP, nodes=nodes)


def _log_walk(board: chess.Board, log: Sequence[LogEntry], near: Callable[[chess.BaseBoard], bool],
              then: Callable[[chess.Board], bool], *, node_budget: int, step: int
              ) -> Steps[tuple[Recovery | None, int]]:
    """The board's log's placements, latest first: the latest one *near* the board that its own walk reaches by
    legal plies (:func:`recover_steps` with the log up to it) after which *then* holds (the position after them);
    with the positions visited."""
    nodes = 0
    for i, squares in reversed(log_placements(board, log)):
        if not near(target_board(squares)):
            continue
        found = yield from recover_steps(board, squares, log=log[:i + 1], node_budget=node_budget, max_plies=0,
                                         step=step)
        nodes += found.nodes
        if found.kind is not RecoveryKind.UNIQUE or not found.moves:
            continue
        after = board.copy(stack=False)
        for move in found.moves:
            after.push(move)
        if then(after):
            return found, nodes
    return None, nodes


def comes_back(board: chess.Board, moves: Sequence[chess.Move]) -> bool:
    """Does a piece that *moves* move from *board* end on the square it started from (module docstring)?

    Pieces are followed by identity: a capture removes its victim, castling moves king and rook (a Chess960
    king or rook already on its castling square does not move).
    """
    where = {square: square for square in chess.SQUARES if board.piece_at(square) is not None}
    moved: set[int] = set()
    work = board.copy(stack=False)
    for move in moves:
        if work.is_castling(move):
            rank = chess.square_rank(move.from_square)
            kingside = work.is_kingside_castling(move)
            rook = work.piece_at(move.to_square)
            rook_from = move.to_square if rook is not None and rook.piece_type == chess.ROOK \
                and rook.color == work.turn else chess.square(7 if kingside else 0, rank)
            steps = [(move.from_square, chess.square(6 if kingside else 2, rank)),
                     (rook_from, chess.square(5 if kingside else 3, rank))]
        else:
            victim = move.to_square
            if work.is_en_passant(move):
                victim = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
            where.pop(victim, None)
            steps = [(move.from_square, move.to_square)]
        pieces = [(where.pop(start), start, end) for start, end in steps]
        for piece, start, end in pieces:
            where[end] = piece
            if start != end:
                moved.add(piece)
        work.push(move)
    return any(where.get(home) == home for home in moved)


def _replay(board: chess.Board, log: Sequence[LogEntry], goal_key: tuple[int, ...], turn: chess.Color | None,
            *, max_moves: int, budget: int,
            step: int = STEP_NODES) -> Steps[tuple[list[chess.Move], list[int], int] | None]:
    """Walk the log's placements from the official one; see the module docstring. Pauses (yields) after every
    *step* positions of the walk."""
    placement = board.copy(stack=False)
    keys: list[tuple[int, ...]] = []
    index: list[int] = []
    for i, entry in enumerate(log):
        if isinstance(entry, LoggedPress):
            continue
        placement.remove_piece_at(entry.square)
        if isinstance(entry.content, chess.Piece):
            placement.set_piece_at(entry.square, entry.content)
        keys.append(_placement_key(placement))
        index.append(i)
    if not keys or keys[-1] != goal_key:
        return None
    work = board.copy(stack=False)
    path: list[chess.Move] = []
    used: list[int] = []
    nodes = 0

    step = max(1, step)

    def walk(start: int) -> Steps[bool]:
        nonlocal nodes
        nodes += 1
        if nodes > budget:
            return False
        if nodes % step == 0:
            yield  # a pause between steps: the walk goes on from here, unchanged
        if _placement_key(work) == goal_key and (turn is None or work.turn == turn):
            return True
        if len(path) >= max_moves:
            return False
        successors: dict[tuple[int, ...], chess.Move] = {}
        for legal in work.legal_moves:
            work.push(legal)
            successors.setdefault(_placement_key(work), legal)
            work.pop()
        for j in range(start, len(keys)):
            found = successors.get(keys[j])
            if found is None:
                continue
            move = found
            work.push(move)
            path.append(move)
            used.append(index[j])
            if (yield from walk(j + 1)):
                return True
            work.pop()
            path.pop()
            used.pop()
        return False

    if (yield from walk(0)):
        return path, used, nodes
    return None


#: Plies the log may lack at its start (read by a daemon that died before it kept them).
LOST_PLIES = 2


def _replay_after_lost(board: chess.Board, log: Sequence[LogEntry], goal: chess.BaseBoard,
                       goal_key: tuple[int, ...], turn: chess.Color | None, *, max_moves: int,
                       budget: int, step: int = STEP_NODES) -> Steps[tuple[list[chess.Move], list[int], int] | None]:
    """The log replayed after up to :data:`LOST_PLIES` plies it lacks at its start (found by trying them).

    A daemon killed between reading the board's bytes and journaling them loses the changes of that
    moment: the board's log then starts a ply or two after the journal. Each lost ply must touch a square
    where the board now differs from the official position, or one the log changes; the first prefix
    after which the log leads to the board wins, shortest first, when it is the only one of its length.
    """
    logged = 0
    for entry in log:
        if isinstance(entry, LoggedChange):
            logged |= chess.BB_SQUARES[entry.square]
    differ = 0
    for square in chess.SQUARES:
        if board.piece_at(square) != goal.piece_at(square):
            differ |= chess.BB_SQUARES[square]
    relevant = differ | logged
    nodes = 0
    frontier: list[tuple[chess.Board, list[chess.Move]]] = [(board, [])]
    for _ in range(LOST_PLIES):
        following: list[tuple[chess.Board, list[chess.Move]]] = []
        fits: list[tuple[list[chess.Move], list[int]]] = []
        for position, prefix in frontier:
            for move in position.legal_moves:
                if not (chess.BB_SQUARES[move.from_square] | chess.BB_SQUARES[move.to_square]) & relevant:
                    continue
                after = position.copy(stack=False)
                after.push(move)
                nodes += 1
                if nodes > budget:
                    return None
                if nodes % max(1, step) == 0:
                    yield  # a pause between steps (the walks below pause on their own)
                found = yield from _replay(after, log, goal_key, turn, max_moves=max_moves, budget=budget, step=step)
                if found is not None:
                    moves, used, more = found
                    nodes += more
                    fits.append(([*prefix, move, *moves], [-1] * (len(prefix) + 1) + used))
                following.append((after, [*prefix, move]))
        if len(fits) == 1:
            return fits[0][0], fits[0][1], nodes
        if fits:
            return None  # several lost plies fit (d2-d3 or d2-d4 before cxd3): the search reports them
        frontier = following
    return None


class _Search:
    """All shortest legal sequences to a placement, pruned (module docstring)."""

    def __init__(self, board: chess.Board, goal: chess.BaseBoard, goal_key: tuple[int, ...], budget: int,
                 max_candidates: int, *, step: int = STEP_NODES, illegal_last: bool = False) -> None:
        self.board = board
        #: the goal is one illegal move of the side to move away (:func:`recover_illegal_steps`)
        self.illegal_last = illegal_last
        self.step = max(1, step)
        self.goal = goal
        self.goal_key = goal_key
        self.budget = budget
        self.max_candidates = max_candidates
        self.nodes = 0
        self.exhausted = False
        self.goal_counts = {c: chess.popcount(goal.occupied_co[c]) for c in chess.COLORS}
        diff = 0
        for square in chess.SQUARES:
            if board.piece_at(square) != goal.piece_at(square):
                diff |= chess.BB_SQUARES[square]
        self.changed = diff

    def _diff(self, work: chess.Board, color: chess.Color) -> int:
        """Squares where *color*'s content differs from the goal."""
        mask = 0
        own, goal_own = work.occupied_co[color], self.goal.occupied_co[color]
        for have, want in ((work.pawns, self.goal.pawns), (work.knights, self.goal.knights),
                           (work.bishops, self.goal.bishops), (work.rooks, self.goal.rooks),
                           (work.queens, self.goal.queens), (work.kings, self.goal.kings)):
            mask |= (have & own) ^ (want & goal_own)
        return chess.popcount(mask)

    def _feasible(self, work: chess.Board, left: int) -> bool:
        counts = {c: chess.popcount(work.occupied_co[c]) for c in chess.COLORS}
        movers = {work.turn: (left + 1) // 2, not work.turn: left // 2}
        if self.illegal_last:  # one piece more put elsewhere, of either colour (no capture: material as is)
            movers = {color: count + 1 for color, count in movers.items()}
        for color in chess.COLORS:
            if counts[color] < self.goal_counts[color]:
                return False
            if counts[color] - self.goal_counts[color] > movers[not color]:
                return False  # each capture takes one ply of the other colour
            rights = work.castling_rights & (chess.BB_RANK_1 if color == chess.WHITE else chess.BB_RANK_8)
            own = movers[color] * 2 + (2 if rights and movers[color] else 0)  # castling: four squares, once
            # the other colour changes this one's placement only by capturing, and exactly this many remain
            if own + counts[color] - self.goal_counts[color] < self._diff(work, color):
                return False
        return True

    def _one_illegal(self, work: chess.Board, *, any_side: bool = False) -> bool:
        """Is the goal *work* with one piece of the side to move put on an empty square it cannot move to (7.5.1)?
        *any_side*: or one piece of the other side put elsewhere (displaced: no move of his, 7.4)."""
        goal = self.goal
        gone, come = work.occupied & ~goal.occupied, goal.occupied & ~work.occupied
        if chess.popcount(gone) != 1 or chess.popcount(come) != 1:
            return False
        fro, to = chess.lsb(gone), chess.lsb(come)
        piece = work.piece_at(fro)
        if piece is None or goal.piece_at(to) != piece:
            return False
        if piece.color != work.turn:
            if not any_side:
                return False
            moved = gone | come
            return all((have & ~moved) == (want & ~moved)
                       for have, want in zip(_placement_key(work), self.goal_key, strict=True))
        moved = gone | come
        if any((have & ~moved) != (want & ~moved) for have, want in zip(_placement_key(work), self.goal_key,
                                                                         strict=True)):
            return False
        return not any(m.from_square == fro and m.to_square == to for m in work.legal_moves)

    def run(self, depth: int) -> Steps[list[tuple[chess.Move, ...]]]:
        """The sequences of *depth* plies; pauses (yields) after every ``step`` positions visited."""
        work = self.board.copy(stack=False)
        found: list[tuple[chess.Move, ...]] = []
        path: list[chess.Move] = []

        failed: set[tuple[object, ...]] = set()
        step = self.step

        def rec(left: int, touched: int) -> Steps[bool]:
            if self.exhausted or len(found) > self.max_candidates:
                return True
            self.nodes += 1
            if self.nodes > self.budget:
                self.exhausted = True
                return True
            if self.nodes % step == 0:
                yield  # a pause between steps: the visit goes on from here, unchanged
            if left == 0:
                if (self._one_illegal(work, any_side=True) if self.illegal_last
                        else _placement_key(work) == self.goal_key):
                    found.append(tuple(path))
                    return True
                return False
            if not self._feasible(work, left):
                return False
            key = (work._transposition_key(), left)
            if key in failed:
                return False
            hit = False
            allowed = self.changed | touched
            for move in list(work.legal_moves):
                bits = chess.BB_SQUARES[move.from_square] | chess.BB_SQUARES[move.to_square]
                if not bits & allowed:
                    continue
                if work.is_castling(move):
                    rank = chess.square_rank(move.from_square)
                    bits |= chess.BB_RANKS[rank] & (work.rooks | work.kings) & work.occupied_co[work.turn]
                    bits |= chess.BB_SQUARES[chess.square(6 if work.is_kingside_castling(move) else 2, rank)]
                    bits |= chess.BB_SQUARES[chess.square(5 if work.is_kingside_castling(move) else 3, rank)]
                elif work.is_en_passant(move):
                    bits |= chess.BB_SQUARES[chess.square(chess.square_file(move.to_square),
                                                          chess.square_rank(move.from_square))]
                work.push(move)
                path.append(move)
                hit = (yield from rec(left - 1, touched | bits)) or hit
                path.pop()
                work.pop()
            if not hit:
                failed.add(key)
            return hit

        yield from rec(depth, 0)
        return found[: self.max_candidates + 1]


def place_presses(presses: Sequence[LoggedPress], *, now: float, left: float | None, right: float | None,
                  running: ClockSide | None, start_left: float | None, start_right: float | None,
                  increment: float = 0.0) -> list[float | None]:
    """The time of every logged press, computed backwards from the clock reading at *now*.

    Args:
        presses: the logged presses, oldest first (``shown``: the presser's time when its lever went down).
        now, left, right, running: the first clock reading after the restart.
        start_left, start_right: the clock the journal ended with.
        increment: seconds the clock adds at every press.

    Returns:
        One time per press (``None`` where the readings do not allow it: no running clock, unknown times).
    """
    out: list[float | None] = [None] * len(presses)
    if running is None or not presses:
        return out
    start = {ClockSide.LEFT: start_left, ClockSide.RIGHT: start_right}

    def before(i: int) -> float | None:
        """The presser's time when its clock started to run before press *i*."""
        side = presses[i].side
        for j in range(i - 1, -1, -1):
            if presses[j].side is side:
                return presses[j].shown + increment
        return start[side]

    now_running = left if running is ClockSide.LEFT else right
    last = len(presses) - 1
    # the side running now started at the last press; its time then was after its own last press
    run_from: float | None = None
    for j in range(last, -1, -1):
        if presses[j].side is running:
            run_from = presses[j].shown + increment
            break
    if run_from is None:
        run_from = start[running]
    if run_from is None or now_running is None or presses[last].side is running:
        return out
    t = now - max(0.0, run_from - now_running)
    out[last] = t
    for i in range(last, 0, -1):
        used_from = before(i)
        if used_from is None:
            break
        t -= max(0.0, used_from - presses[i].shown)
        out[i - 1] = t
    return out
