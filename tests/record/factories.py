"""Hand-built :class:`GameState` values for the record and contract tests (no engine needed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import chess
import chess.pgn

from boardd.core.outputs import ClockState, Completion, GameState, MoveRecord

#: Synthetic clock: (ply index, side) -> (remaining after the move, emt), both in seconds.
ClockFn = Callable[[int, chess.Color], tuple[float, float]]


def fractional_clock(index: int, side: chess.Color) -> tuple[float, float]:
    """Remaining time falling from 1:30:00 with +30 s a move; emt with tenths and hundredths."""
    emt = (index * 37.31) % 190 + 0.07
    used = sum((i * 37.31) % 190 + 0.07 for i in range(index % 2, index + 1, 2))
    moves = index // 2 + 1
    return max(0.0, 5400 + 30 * moves - used), emt


def whole_clock(index: int, side: chess.Color) -> tuple[float, float]:
    """Whole seconds only (what a DGT clock over serial gives)."""
    emt = float((index * 13) % 97 + 1)
    return float(5400 - 11 * index), emt


def records_from_moves(
    start: chess.Board, moves: Sequence[chess.Move], *, clock: ClockFn | None = whole_clock, t0: float = 100.0,
    detail: bool = True,
) -> tuple[list[MoveRecord], chess.Board]:
    """MoveRecords (all legal, completed by a press) for *moves* played from *start*.

    ``detail=False`` leaves ``san`` and ``fen_after`` empty (the PGN writer needs neither for legal
    moves): the round trip over ~30,000 real plies is then twice as fast.
    """
    board = start.copy(stack=False)
    records = []
    for index, move in enumerate(moves):
        side = board.turn
        san = board.san(move) if detail else ""
        board.push(move)
        remaining, emt = clock(index, side) if clock is not None else (None, None)
        records.append(MoveRecord(
            ply=index + 1,
            uci=move.uci(),
            san=san,
            side=side,
            fen_after=board.fen() if detail else "",
            made_at=t0 + 10.0 * index,
            completed_at=t0 + 10.0 * index + 0.5,
            completion=Completion.PRESS,
            clock_white=remaining if side == chess.WHITE else None,
            clock_black=remaining if side == chess.BLACK else None,
            emt=emt,
        ))
    return records, board


def make_state(
    records: Sequence[MoveRecord] = (),
    *,
    start_fen: str = chess.STARTING_FEN,
    chess960: bool = False,
    fen: str | None = None,
    turn: chess.Color | None = None,
    game_id: str = "r3-b12",
    white: str = "Carlsen, Magnus",
    black: str = "Nepomniachtchi, Ian",
    event: str = "Test Open",
    site: str = "Wijk aan Zee NED",
    date: str = "2026.11.21",
    round_: str = "3",
    board_no: int | None = 12,
    time_control: str = "40/5400+30:1800+30",
    result: str = "*",
    termination: str | None = None,
    clock: ClockState | None = None,
    open_irregularities: tuple[str, ...] = (),
    illegal_white: int = 0,
    illegal_black: int = 0,
) -> GameState:
    """A GameState with sensible defaults."""
    if fen is None:
        fen = records[-1].fen_after if records else start_fen
    if turn is None:
        turn = chess.Board(fen, chess960=chess960).turn if fen != "x" else chess.WHITE
    return GameState(
        game_id=game_id, white=white, black=black, event=event, site=site, date=date, round=round_,
        board_no=board_no, time_control=time_control, edition=2023, start_fen=start_fen, chess960=chess960,
        fen=fen, moves=tuple(records), turn=turn,
        clock=clock or ClockState(white=5400.0, black=5400.0, running=None),
        result=result, termination=termination, open_irregularities=open_irregularities,
        illegal_moves_white=illegal_white, illegal_moves_black=illegal_black,
        category="standard", regime="competition",
    )


def state_from_pgn_game(game: chess.pgn.Game, *, clock: ClockFn | None = whole_clock,
                        detail: bool = True) -> GameState:
    """A GameState replaying *game*'s mainline with synthetic clocks."""
    start = game.board()
    records, final = records_from_moves(start, list(game.mainline_moves()), clock=clock, detail=detail)
    return make_state(records, start_fen=start.fen(), chess960=start.chess960, fen=final.fen(),
                      result=game.headers.get("Result", "*"), white=game.headers.get("White", "?"),
                      black=game.headers.get("Black", "?"))
