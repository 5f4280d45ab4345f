"""Orientation and set-up (rules-spec §3.1; articles 2, 7.2): the board's frame and the starting position."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _ROTATIONS
from boardd.core.events import (
    Content,
    Marker,
    content_symbol,
)
from boardd.core.outputs import (
    Evidence,
    GameEvent,
    Output,
    StateChanged,
)
from boardd.core.recognizer import Diff, DiffClass, PhysicalBoard

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


class Orientation:
    """Orientation and set-up (rules-spec §3.1; articles 2, 7.2): the board's frame and the starting position."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules

    def set_orientation(self, outs: list[Output], flipped: bool, at: float, *, forced: bool,
                         rot: int | None = None) -> None:
        self.g.orientation_known = True
        new_rot = rot if rot is not None else (2 if flipped else 0)
        if new_rot == self.g.rot:
            return
        self.g.rot = new_rot
        for raw_sq in range(64):
            if raw_sq not in self.g.raw_touched:
                # never read: assume the square holds what the official position says (in the new frame)
                self.g.raw[raw_sq] = self.g.index.piece_at(self.e.board_input.map(raw_sq))
        for raw_sq, content in enumerate(self.g.raw):
            if isinstance(content, Marker):
                continue
            self.g.phys.set(self.e.board_input.map(raw_sq), content)
        self.g.mask.clear()
        self.g.cand = None
        self.g.last_diff = Diff(DiffClass.NONE)
        outs.append(GameEvent(at=at, type="ORIENTATION_CHANGED", code=None,
                              details={"white_at_a1": new_rot == 0, "quarter_turns": new_rot, "forced": forced}))

    def detect_orientation_snapshot(self, outs: list[Output], squares: tuple[Content, ...], at: float) -> None:
        expected = self.g.index
        occupied = sum(1 for c in squares if c is not None)
        if occupied < 4:
            return
        scores = [sum(1 for raw in chess.SQUARES if squares[raw] == expected.piece_at(table[raw]))
                  for table in _ROTATIONS]
        turned_960 = self._chess960_rotation(squares)
        if turned_960 is not None:
            scores[turned_960] = 64  # a Chess960 start array the variant takes, in that frame (protocols.md §1.4)
        best = max(range(4), key=lambda k: (scores[k], k == self.g.rot))
        if scores[best] < 56 or best == self.g.rot:
            self.g.orientation_known = scores[self.g.rot] >= 56 or self.g.orientation_known
            return
        if best in (1, 3):
            self.e.findings.raise_finding(outs, "SETUP_INCORRECT", None, at, [Evidence(at=at, event="board dump")],
                        text="board turned a quarter round (white square not on the right, 2.1): the game goes on "
                             "but the position must be transferred to a correctly placed board (7.2.2); "
                             "recognition follows the turned board")
        self.set_orientation(outs, best == 2, at, forced=False, rot=best)

    def _chess960_rotation(self, squares: tuple[Content, ...]) -> int | None:
        """The frame (quarter turns) in which the first dump shows a Chess960 start array the variant would take.

        A DGT board does not rotate its numbering when it is turned round (protocols.md §1.4): a Chess960 array
        on a board with White at the far edge matches the standard array on only part of the back ranks, too
        few squares to tell the frame, and was read unturned (white pawns on the seventh rank): no start array.
        """
        game = self.g.game
        if self.g.records or game.start_fen is not None or game.effective_variant == "standard":
            return None
        if any(content is not None and not isinstance(content, chess.Piece) for content in squares):
            return None
        for k, table in enumerate(_ROTATIONS):
            placement = chess.BaseBoard.empty()
            for raw in chess.SQUARES:
                content = squares[raw]
                if isinstance(content, chess.Piece):
                    placement.set_piece_at(table[raw], content)
            if placement.chess960_pos() is not None:
                return k
        return None

    def detect_orientation_changes(self, outs: list[Output], at: float) -> None:
        """Before the first move: a first change that only makes sense on a turned board flips it."""
        diff = self.g.index.classify(self.g.phys)
        if diff.kind in (DiffClass.NONE, DiffClass.LEGAL, DiffClass.IN_HAND, DiffClass.PARTIAL):
            if diff.kind is DiffClass.LEGAL:
                self.g.orientation_known = True
            return
        turned = PhysicalBoard()
        for raw_sq, content in enumerate(self.g.raw):
            cell = content if raw_sq in self.g.raw_touched else self.g.index.piece_at(63 - raw_sq)
            if isinstance(cell, chess.Piece):
                turned.set(63 - raw_sq, cell)
        tdiff = self.g.index.classify(turned)
        if tdiff.kind is DiffClass.LEGAL:  # only a whole move decides: a lift alone could be an adjustment
            self.set_orientation(outs, True, at, forced=False)

    def adopt_chess960_start(self, outs: list[Output], at: float, squares: list[Content] | None = None) -> bool:
        """Before the first move: take a Chess960 start array seen on the board as the start position.

        Only where the variant says so and no start position was given: ``chess960`` takes any of the 960
        arrays (518 is the standard one), ``auto`` any but the standard one (which is already expected).
        ``standard`` never does: there a Chess960-looking set-up is SETUP_INCORRECT (7.2).
        """
        game = self.g.game
        variant = game.effective_variant
        if self.g.records or game.start_fen is not None or variant == "standard" or self.g.mask:
            return False
        placement = chess.BaseBoard.empty()
        cells = squares if squares is not None else self.g.phys.squares
        for sq in chess.SQUARES:
            content = cells[sq]
            if not isinstance(content, chess.Piece):
                if content is not None:
                    return False
                continue
            placement.set_piece_at(sq, content)
        n = placement.chess960_pos()
        if n is None or (variant == "auto" and n == 518):
            return False
        board = chess.Board.from_chess960_pos(n)
        if self.g.board.chess960 and board.board_fen() == self.g.board.board_fen():
            return False
        fen = board.fen()
        self.g.game = dataclasses.replace(game, chess960=True, start_fen=fen)
        self.g.board = board
        self.g.start_fen = fen
        self.e.recognition.rebuild_index()
        self.g.keys = [self.g.index.key]
        outs.append(GameEvent(at=at, type="CHESS960_START", code=None,
                              details={"position": n, "fen": fen, "variant": variant}))
        outs.append(StateChanged(at=at))
        return True

    def check_setup(self, outs: list[Output], squares: tuple[Content, ...], at: float) -> None:
        if self.g.records:
            return
        phys: list[Content] = [None] * 64
        for raw, content in enumerate(squares):
            phys[self.e.board_input.map(raw)] = content
        expected = self.g.board
        wrong = [sq for sq in chess.SQUARES if phys[sq] != expected.piece_at(sq)]
        if not wrong or len(wrong) > 16:
            return
        if self.adopt_chess960_start(outs, at, phys):
            return
        # only a set-up error if the same material is there (otherwise: pieces still being set up)
        def material(cells: Iterable[Content]) -> list[str]:
            return sorted(content_symbol(c) for c in cells if isinstance(c, chess.Piece))
        if material(phys) != material(expected.piece_at(sq) for sq in chess.SQUARES):
            return
        kinds: list[str] = []
        names = ", ".join(chess.square_name(sq) for sq in wrong)
        for color in (chess.WHITE, chess.BLACK):
            back = 0 if color == chess.WHITE else 7
            d, e = chess.square(3, back), chess.square(4, back)
            if (phys[d] == chess.Piece(chess.KING, color) and phys[e] == chess.Piece(chess.QUEEN, color)
                    and expected.piece_at(d) == chess.Piece(chess.QUEEN, color)):
                kinds.append("king and queen swapped")
        board = chess.Board(None, chess960=self.g.board.chess960)
        for sq in chess.SQUARES:
            c = phys[sq]
            if isinstance(c, chess.Piece):
                board.set_piece_at(sq, c)
        board.turn = expected.turn
        board.castling_rights = expected.castling_rights
        board.castling_rights = board.clean_castling_rights()
        board.ep_square = None
        self.e.findings.raise_finding(outs, "SETUP_INCORRECT", None, at, [Evidence(at=at, event="board dump")],
                    text=(("; ".join(kinds) + "; " if kinds else "") + f"squares differing from the start: {names}. "
                          "Standard play: cancel and replay (7.2.1); castling rights of a misplaced king/rook "
                          "removed"))
        self.g.board = board
        self.g.start_fen = board.fen()
        self.e.recognition.rebuild_index()
        self.g.keys = [self.g.index.key]
