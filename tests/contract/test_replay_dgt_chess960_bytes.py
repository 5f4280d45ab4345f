"""Chess960 castling at the byte level: DGT captures written from the wire protocol (protocols.md §1.3-§1.7), not
from the project's simulator, replayed with ``boardd replay --driver dgt``.

The board's dump (``86``, a8 = field 0 ... h1 = 63), one field update (``8e 00 05 field piece``) per square the
hand changes, in the physical order of the castling procedure (R27; Guidelines II.3), and BWTIME (``8d``) about
once a second with the lever and the running side in the status byte (D0 running, D1 lever high on the right,
D3/D4 the side to move as the capture in §1.7.1 shows). White's clock on the left. Every game must come back as
played, with no finding above info, the start array taken from the board (variant ``auto``) and a Chess960 PGN.
"""

from __future__ import annotations

import argparse
import io
import json
import random
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.settings import RulesConfig
from boardd.daemon import replay
from tests.core.test_chess960_castling_games import PROCEDURES, castling_steps, rook_first_only

_CODES = {None: 0x00, "P": 0x01, "R": 0x02, "N": 0x03, "B": 0x04, "K": 0x05, "Q": 0x06,
          "p": 0x07, "r": 0x08, "n": 0x09, "b": 0x0A, "k": 0x0B, "q": 0x0C}


def _field(square: int) -> int:
    """python-chess square -> DGT field (a8 = 0, h1 = 63; §1.4)."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


def _code(piece: chess.Piece | None) -> int:
    return _CODES[piece.symbol() if piece is not None else None]


def _bcd(n: int) -> int:
    return (n // 10) << 4 | n % 10


def _hms(seconds: float) -> list[int]:
    s = max(0, int(seconds))
    return [s // 3600, _bcd(s % 3600 // 60), _bcd(s % 60)]


class Capture:
    """A DGT capture being written: the bytes a board with a clock on its jack sends."""

    def __init__(self, start: chess.Board) -> None:
        self.lines = [json.dumps({"t": 0.0, "capture": "dgt", "port": "/dev/ttyACM0", "v": 1})]
        self.t = 0.1
        self.white, self.black = 5400.0, 5400.0
        self.running: chess.Color | None = None
        self.last_tick = 0.0
        self.last_clock = self.t
        self.tx("4b")
        self.tx("42")
        self.rx([0x86, 0x00, 0x43, *(_code(start.piece_at(sq)) for sq in
                                     sorted(chess.SQUARES, key=_field))])
        self.bwtime(lever=chess.WHITE)

    def tx(self, hex_: str) -> None:
        self.lines.append(json.dumps({"t": round(self.t, 3), "tx": hex_}))

    def rx(self, data: list[int]) -> None:
        self.lines.append(json.dumps({"t": round(self.t, 3), "rx": " ".join(f"{b:02x}" for b in data)}))

    def advance(self, dt: float) -> None:
        """Time passes; the clock sends a BWTIME at every second it shows."""
        end = self.t + dt
        while self.running is not None and self.last_tick + 1.0 <= end:
            self.last_tick += 1.0
            self.t = max(self.t, self.last_tick)
            self._tick()
            self.bwtime(lever=self.running)
        self.t = end
        self._tick()

    def _tick(self) -> None:
        if self.running == chess.WHITE:
            self.white -= self.t - self.last_clock
        elif self.running == chess.BLACK:
            self.black -= self.t - self.last_clock
        self.last_clock = self.t

    def bwtime(self, *, lever: chess.Color) -> None:
        right_high = lever == chess.BLACK  # White on the left: Black's side is the right
        status = (0x01 if self.running is not None else 0) | (0x02 if right_high else 0) | \
            (0x10 if right_high else 0x08)
        self.rx([0x8D, 0x00, 0x0A, *_hms(self.black), *_hms(self.white), status])

    def change(self, square: int, piece: chess.Piece | None) -> None:
        self.rx([0x8E, 0x00, 0x05, _field(square), _code(piece)])

    def press(self, side: chess.Color) -> None:
        self._tick()
        self.running = not side
        self.last_tick = self.t
        self.bwtime(lever=not side)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _game(seed: int) -> tuple[Capture, chess.Board, chess.Board, list[str], int]:
    rng = random.Random(seed)
    start = chess.Board.from_chess960_pos(rng.randrange(960))
    start.chess960 = True
    board = start.copy()
    cap = Capture(start)
    used: list[str] = []
    rook_first = 0  # castlings moving king and rook with the rook lifted more than a scan before the king (4.4.2)
    cap.advance(1.5)
    cap.running = chess.WHITE  # the arbiter starts White's clock
    cap.last_tick = cap.t
    cap.bwtime(lever=chess.WHITE)
    for _ in range(rng.randrange(16, 40)):
        legal = list(board.legal_moves)
        if not legal or board.is_game_over():
            break
        castles = [m for m in legal if board.is_castling(m)]
        move = rng.choice(castles) if castles and rng.random() < 0.85 else rng.choice(legal)
        steps = None
        if board.is_castling(move):
            for name in rng.sample(PROCEDURES, len(PROCEDURES)):
                steps = castling_steps(board, move, name)
                if steps is not None:
                    used.append(name)
                    break
        if steps is None:
            mover = board.piece_at(move.from_square)
            assert mover is not None
            captured = move.to_square
            if board.is_en_passant(move):
                captured = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
            steps = [(move.from_square, None)]
            if board.piece_at(captured) is not None:
                steps.insert(rng.randrange(2), (captured, None))
            steps.append((move.to_square, chess.Piece(move.promotion, mover.color) if move.promotion else mover))
        cap.advance(rng.uniform(1.0, 4.0))
        slide = used and used[-1] in ("king_slide", "king_on_rook_square") and board.is_castling(move)
        in_scan = 0
        lifts: dict[int, float] = {}
        for i, step in enumerate(steps):
            if step == "scan":
                in_scan = 2
                continue
            if step == "pause":
                cap.advance(rng.uniform(0.6, 1.5))
                continue
            assert not isinstance(step, str)
            if step[1] is None:
                lifts.setdefault(step[0], cap.t)
            cap.change(*step)
            if in_scan:
                in_scan -= 1
                cap.advance(0.0 if in_scan else rng.uniform(0.2, 0.25))
            elif used and used[-1] == "king_on_rook_square" and i == 2 and board.is_castling(move):
                # "king takes rook": the king left on the rook's square a moment or a while (the GUI user's
                # habit: the software takes the castling there), then on to its final square
                cap.advance(rng.uniform(0.05, 1.5))
            else:
                cap.advance(rng.uniform(0.02, 0.12) if slide else rng.uniform(0.1, 0.9))
        if board.is_castling(move):
            rank = chess.square_rank(move.from_square)
            kingside = board.is_kingside_castling(move)
            ks, rs = move.from_square, move.to_square
            kd, rd = chess.square(6 if kingside else 2, rank), chess.square(5 if kingside else 3, rank)
            if ks != kd and rs != rd and lifts[rs] < lifts[ks] - RulesConfig().timing.t_scan:
                rook_first += 1
        cap.advance(rng.uniform(0.2, 0.8))
        cap.press(board.turn)
        board.push(move)
    cap.advance(4.0)
    return cap, start, board, used, rook_first


def _replay(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> list[dict[str, object]]:
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt", "--time-control", "5400"])) == 0
    return [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]


@pytest.mark.parametrize("seed", range(60))
def test_a_chess960_dgt_capture_comes_back_as_played(seed: int, tmp_path: Path,
                                                     capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    cap, start, board, _used, rook_first = _game(seed)
    path = tmp_path / "c.jsonl"
    path.write_text(cap.text())
    out = _replay(path, capsysbinary)
    state = [p["payload"] for p in out if str(p["topic"]).endswith("/state")][-1]
    assert isinstance(state, dict)
    assert state["moves"] == [m.uci() for m in board.move_stack]
    raised = [p["payload"] for p in out if str(p["topic"]).endswith("/irregularity")]
    # (each finding once, by its id: an update publishes it again)
    strong = list({p["id"]: str(p["code"]) for p in raised if isinstance(p, dict) and p["severity"] != "info"}.values())
    assert rook_first_only(strong, rook_first), (strong, rook_first)
    # none of these castlings places a piece illegally: the king on its rook's square is a step of the castling
    assert not [p for p in raised if isinstance(p, dict) and p["code"] == "ILLEGAL_PLACEMENT_CORRECTED"]
    pgn_text = [p["payload"] for p in out if str(p["topic"]).endswith("/pgn")][-1]
    text = pgn_text if isinstance(pgn_text, str) else str(pgn_text.get("pgn", "")) if isinstance(pgn_text, dict) \
        else ""
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None and game.headers.get("Variant") == "Chess960"
    if start.fen() != chess.STARTING_FEN:
        assert game.headers.get("FEN") == start.fen()
    assert [m.uci() for m in game.mainline_moves()] == [m.uci() for m in board.move_stack]


def test_the_captures_castle_in_many_ways() -> None:
    used: set[str] = set()
    for seed in range(24):
        used.update(_game(seed)[3])
    assert len(used) >= 7, used
