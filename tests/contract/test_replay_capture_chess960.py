"""Chess960 DGT captures without a header: ``boardd replay --driver dgt`` takes the start array from the board
(variant ``auto``) and records every castling however it was done on the board (F.3 / Guidelines II.3)."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.daemon import replay
from tests.core.test_chess960_castling_games import rook_first_only
from tests.drivers.captures.realistic import Options, generate


def _random_chess960_game(seed: int) -> chess.pgn.Game:
    rng = random.Random(seed)
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    game = chess.pgn.Game.from_board(board)
    node: chess.pgn.GameNode = game
    for _ in range(50):
        moves = list(board.legal_moves)
        if not moves or board.is_game_over():
            break
        castles = [m for m in moves if board.is_castling(m)]
        move = rng.choice(castles) if castles and rng.random() < 0.7 else rng.choice(moves)
        node = node.add_variation(move)
        board.push(move)
    return game


def _replay(path: Path, capsysbinary: pytest.CaptureFixture[bytes], *extra: str) -> list[dict[str, object]]:
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt", *extra])) == 0
    return [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]


@pytest.mark.parametrize("seed", range(12))
def test_a_chess960_capture_replays_to_the_game(seed: int, tmp_path: Path,
                                                capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    game = _random_chess960_game(seed)
    capture = generate(game, Options(seed=seed))
    path = tmp_path / "c.jsonl"
    path.write_text(capture.jsonl())
    out = _replay(path, capsysbinary)
    state = [p["payload"] for p in out if str(p["topic"]).endswith("/state")][-1]
    assert isinstance(state, dict)
    board = game.board()
    want = []
    for move in game.mainline_moves():
        want.append(board.uci(move))
        board.push(move)
    assert state["moves"] == want
    raised = [p["payload"] for p in out if str(p["topic"]).endswith("/irregularity")]
    # the rook lifted scans before the king (the generator's "rook_first") is 4.4.2, which R27 carries over
    # (each finding once, by its id: an update publishes it again)
    strong = list({p["id"]: str(p["code"]) for p in raised if isinstance(p, dict) and p["severity"] != "info"}.values())
    assert rook_first_only(strong, capture.counts["castling960_rook_first"]), strong
    events = [p["payload"] for p in out if str(p["topic"]).endswith("/event")]
    assert [e["type"] for e in events if isinstance(e, dict) and e["type"] == "CHESS960_START"] == ["CHESS960_START"]


def test_the_generator_castles_in_every_chess960_way() -> None:
    from collections import Counter

    used: Counter[str] = Counter()
    for seed in range(40):
        used.update(generate(_random_chess960_game(seed), Options(seed=seed)).counts)
    assert {k for k in used if k.startswith("castling960_")} >= {
        "castling960_recommended", "castling960_king_first", "castling960_rook_first"}


def test_a_standard_replay_flags_the_chess960_start(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    game = _random_chess960_game(3)
    path = tmp_path / "c.jsonl"
    path.write_text(generate(game, Options(seed=3)).jsonl())
    out = _replay(path, capsysbinary, "--variant", "standard")
    codes = [p["payload"]["code"] for p in out if str(p["topic"]).endswith("/irregularity")
             and isinstance(p["payload"], dict)]
    assert "SETUP_INCORRECT" in codes
