"""A DGT capture of a blitz game in which an illegal move is completed and the arbiter corrects it (7.5.1) on
the DGT board and DGT 3000 (paused, or on the running clock): replayed, the record is the game, the illegal
move's finding resolves itself and no step of the correction raises a warning."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from boardd.daemon import replay
from tests.drivers.captures.realistic import Options, generate, load_game

GAMES = [(88, 40, "paused"), (30, 31, "running"), (12, 19, "paused-lever-at-restart"), (5, 57, "paused"),
         (61, 24, "running"), (7, 20, "paused-lever-at-restart")]


@pytest.mark.parametrize("case", GAMES, ids=[f"game{i}-ply{p}-{f}" for i, p, f in GAMES])
def test_the_arbiters_correction_in_a_dgt_capture(case: tuple[int, int, str], pgn_dir: Path, tmp_path: Path,
                                                  capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    index, ply, form = case
    game = load_game(pgn_dir / "tatamast22.pgn", index)
    capture = generate(game, Options(seed=index, correction_at_ply=ply, correction_form=form))
    assert capture.counts["correction"] == 1
    path = tmp_path / "c.jsonl"
    path.write_text(capture.jsonl())
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt", "--time-control", "180+2"])) == 0
    out = [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]
    state = [p["payload"] for p in out if p["topic"].endswith("/state")][-1]
    assert state["moves"] == capture.moves
    findings: dict[str, dict[str, object]] = {}
    for p in out:
        if p["topic"].endswith("/irregularity"):
            findings[p["payload"]["id"]] = p["payload"]
    strong = [f for f in findings.values() if f["severity"] != "info"]
    assert [(f["code"], f["status"]) for f in strong] == [("ILLEGAL_MOVE", "resolved")], strong
    assert str(strong[0]["ruling"]).startswith("position reinstated")
