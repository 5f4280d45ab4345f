"""Shared machinery of the byte-level emulators of snapshot boards on a pseudo-terminal.

:class:`PtyBoardEmulator` opens a pty, publishes its slave side under a stable
symlink (like ``/dev/serial/by-id/...``), keeps the *physical* position the
script changes (:meth:`lift`, :meth:`place`, :meth:`move`, :meth:`slide`,
:meth:`play`), runs the family's sensor scan every ``scan_interval`` and
simulates hot-plug (:meth:`unplug` closes the pty and removes the link,
:meth:`replug` opens a new one under the same path). Subclasses implement
``_on_bytes`` (host commands) and ``_scan`` (what the board sends per scan).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import chess
import chess.pgn

from boardd.core.events import Content
from drivers._pty import PtyPort, play_until_stopped
from drivers.base import TimeSource

__all__ = ["PtyBoardEmulator", "move_steps"]


def move_steps(board: chess.Board, move: chess.Move, *, slide: bool = False) -> list[list[tuple[int, Content]]]:
    """How a player's hand makes *move* on a board: groups of (square, new content), one group per scan.

    A capture is a replacement (the victim's square is never seen empty); castling moves the
    king first, then the rook; en passant removes the captured pawn last; a promotion puts
    the new piece down. With *slide*, a rook/bishop/queen passes the squares in between.
    """
    piece = board.piece_at(move.from_square)
    assert piece is not None, f"no piece on {chess.square_name(move.from_square)}"
    steps: list[list[tuple[int, Content]]] = [[(move.from_square, None)]]
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = board.is_kingside_castling(move)
        king_to = chess.square(6 if kingside else 2, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        rook_from = move.to_square if board.piece_at(move.to_square) == chess.Piece(chess.ROOK, piece.color) \
            else chess.square(7 if kingside else 0, rank)
        rook = chess.Piece(chess.ROOK, piece.color)
        if rook_from == king_to:  # Chess960: the rook stands where the king goes
            steps[0].append((rook_from, None))
        steps.append([(king_to, piece)])
        if rook_from != king_to:
            steps.append([(rook_from, None)])
        steps.append([(rook_to, rook)])
        return steps
    if slide and piece.piece_type in (chess.ROOK, chess.BISHOP, chess.QUEEN):
        path = list(chess.SquareSet(chess.between(move.from_square, move.to_square)))
        if move.to_square < move.from_square:
            path.reverse()
        for square in path:
            steps.append([(square, piece)])
            steps.append([(square, board.piece_at(square))])
    landed = chess.Piece(move.promotion, piece.color) if move.promotion else piece
    steps.append([(move.to_square, landed)])
    if board.is_en_passant(move):
        steps.append([(move.to_square + (-8 if piece.color == chess.WHITE else 8), None)])
    return steps


class PtyBoardEmulator(PtyPort):
    """A board on a pty. Use as ``async with SomeEmulator() as emu:``.

    Args:
        scan_interval: seconds per sensor scan, or a (low, high) range drawn per scan.
        seed: seed of the jitter and noise.
        fen: initial placement (board frame, White at a1).
        directory: where the stable symlink is created (a temporary directory by default).
        link_name: file name of the symlink.
        time_source: time line used for ``received_at``.
    """

    def __init__(self, *, scan_interval: float | tuple[float, float], seed: int = 0,
                 fen: str = chess.STARTING_BOARD_FEN, directory: Path | None = None,
                 link_name: str = "board", time_source: TimeSource = time.monotonic) -> None:
        super().__init__(directory=directory, link_name=link_name)
        self._scan_range = scan_interval if isinstance(scan_interval, tuple) else (scan_interval, scan_interval)
        self._rng = random.Random(seed)
        self._time = time_source
        board = chess.BaseBoard(fen)
        self.physical: list[Content] = [board.piece_at(sq) for sq in chess.SQUARES]
        self.stats: Counter[str] = Counter()
        self._scan_done = asyncio.Event()
        self._scans = 0
        self._host_seen = asyncio.Event()
        #: Called with every chunk written to the host.
        self.on_write: list[Callable[[bytes], None]] = []

    # --- lifecycle -------------------------------------------------------------------------

    def _open_pty(self) -> None:
        self._host_seen.clear()
        super()._open_pty()

    def unplug(self) -> None:
        """Pull the cable: the pty closes and the device path disappears."""
        self._close_pty()
        self.stats["unplugs"] += 1

    def replug(self) -> None:
        """Plug the board back in: a new pty under the same path; the board restarts."""
        if not self.plugged:
            self._open_pty()
            self.stats["replugs"] += 1

    # --- bytes -------------------------------------------------------------------------------

    def _on_host_bytes(self, data: bytes) -> None:
        self._host_seen.set()
        self._on_bytes(data)

    def _on_bytes(self, data: bytes) -> None:
        """Bytes from the host (subclasses)."""

    def write(self, data: bytes) -> None:
        """Write *data* to the host (dropped while unplugged)."""
        if self._master is None or self.hung:
            return
        for hook in self.on_write:
            hook(data)
        self._send_raw(data)

    # --- physical board -----------------------------------------------------------------------

    def lift(self, square: chess.Square) -> None:
        """Lift whatever stands on *square*."""
        self.physical[square] = None

    def place(self, square: chess.Square, content: Content) -> None:
        """Put *content* on *square* (replacing what stood there)."""
        self.physical[square] = content

    def move(self, from_square: chess.Square, to_square: chess.Square) -> None:
        """Move a piece within one scan."""
        self.physical[to_square] = self.physical[from_square]
        self.physical[from_square] = None

    async def wait_scan(self, count: int = 1) -> None:
        """Wait until *count* scans have completed.

        Raises:
            RuntimeError: the scan loop is not running (it failed, or the emulator was not entered).
        """
        target = self._scans + count
        while self._scans < target:
            if self._task is None or self._task.done():
                raise RuntimeError(f"{type(self).__name__}: the scan loop is not running")
            self._scan_done.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._scan_done.wait()

    async def wait_host(self, within: float = 5.0) -> bool:
        """Wait until the host has sent something (it opened the port)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self._host_seen.wait()
        return self._host_seen.is_set()

    async def _scan_loop(self) -> None:
        while True:
            low, high = self._scan_range
            await asyncio.sleep(self._rng.uniform(low, high))
            if self.plugged:
                self._scan()
            self._scans += 1
            self._scan_done.set()

    def _scan(self) -> None:
        """One sensor scan (subclasses)."""

    def content_for(self, content: Content, square: chess.Square) -> Content:
        """What the physical model stores for a piece put down by :meth:`play` (subclasses may map ids)."""
        return content

    async def play(self, game: chess.pgn.Game, *, think_scans: int = 2, step_scans: int = 1, slide: bool = False,
                   unplug_at_ply: int | None = None, unplugged_scans: int = 8, replugged_scans: int = 0) -> int:
        """Play the main line of *game* with a human's hand; returns the plies played.

        At *unplug_at_ply* (before that ply) the board is unplugged, the move is made while the host
        cannot see it, the board is plugged back in *unplugged_scans* later, and the next move
        waits until the host has reopened the device and *replugged_scans* more scans.
        """
        board = game.board()
        plies = 0
        for ply, move in enumerate(game.mainline_moves()):
            if unplug_at_ply == ply:
                self.unplug()
            for group in move_steps(board, move, slide=slide):
                for square, content in group:
                    self.place(square, self.content_for(content, square))
                await self.wait_scan(step_scans)
            if unplug_at_ply == ply:
                await self.wait_scan(unplugged_scans)
                self.replug()
                await self.wait_host()
                await self.wait_scan(replugged_scans)
            board.push(move)
            plies += 1
            await self.wait_scan(think_scans)
        return plies


def run_cli(make: Callable[[argparse.Namespace], PtyBoardEmulator], description: str,
            argv: list[str] | None = None, extra: Callable[[argparse.ArgumentParser], None] | None = None) -> None:
    """``python -m drivers.<family>.emulator``: a board on a pty until Ctrl-C; prints the device path.

    With ``--pgn FILE`` the board plays that game (``--game N`` picks the N-th, 0-based) with a
    human's hand, ``--think`` scans between moves.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--pgn", help="play this game (PGN file)")
    parser.add_argument("--game", type=int, default=0, help="index of the game in the file")
    parser.add_argument("--think", type=int, default=10, help="scans between moves")
    if extra is not None:
        extra(parser)
    args = parser.parse_args(argv)

    game: chess.pgn.Game | None = None
    if args.pgn:
        with open(args.pgn, encoding="utf-8") as stream:
            for _ in range(args.game):
                chess.pgn.skip_game(stream)
            game = chess.pgn.read_game(stream)
        if game is None:
            raise SystemExit(f"no game {args.game} in {args.pgn}")

    async def serve() -> None:
        # SIGTERM and SIGINT stop the emulator at any point (during the game too): the pty is closed, exit 0.
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with make(args) as emu:
            print(emu.path, flush=True)

            async def play() -> None:
                if game is not None:
                    await emu.wait_host(3600.0)
                    plies = await emu.play(game, think_scans=args.think)
                    print(f"played {plies} plies", flush=True)
                await stop.wait()

            await play_until_stopped(play(), stop)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
