"""A DGT board unplugged for three plies, at the byte level: the order of the plies is recorded only when known.

The captures are written from the wire protocol (protocols.md §1.3-§1.9), as in
``test_replay_dgt_chess960_bytes``: field updates (``8e``) as the hand makes the moves, BWTIME (``8d``) with
the lever in its status byte, White's clock on the left. The link is lost (a ``link`` line: the clock on the
board's jack goes with it); c3 h6 d3 are played unseen; at the reconnection the driver sends its start-up
sequence (§1.11: UPDATE_NICE, version, EEPROM log ``49``, dump ``42``) and the board answers in that order:
the EEPROM log (``8f``, §1.9; what it recorded while no host read it, after its last ``EE_DOWNLOADED``), then
the dump (``86``). ``boardd replay --driver dgt`` replays them as the daemon would.

* Without the board's log the order cannot be known (d3 h6 c3 reaches the same board; it was recorded so):
  the state's moves hold one gap entry ``0000``, one ``MOVES_RECOVERED`` event lists both orders, nothing
  above info is raised, and the moves after the gap are recognised.
* With it, the moves are recorded in the order played, ``recovered_by: eeprom``, and the PGN says so.
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.daemon import replay
from drivers.dgt.codec import EE_MOVES_SIZE, EEClock, EEFieldChange, EERecord, EETag, EETagRecord, encode_ee_log
from tests.contract.test_replay_dgt_chess960_bytes import Capture, _code, _field

BEFORE = ("e4", "e5")
MISSED = ("c3", "h6", "d3")
AFTER = ("Nf6", "Nf3", "Nc6")


def _play(cap: Capture, board: chess.Board, san: str, *, seen: bool, log: list[EERecord]) -> None:
    move = board.parse_san(san)
    piece = board.piece_at(move.from_square)
    cap.advance(2.0)
    for square, content in ((move.from_square, None), (move.to_square, piece)):
        if seen:
            cap.change(square, content)
        else:
            log.append(EEFieldChange(field=_field(square), code=_code(content)))
        cap.advance(0.3)
    cap.advance(0.4)
    side = board.turn
    if seen:
        cap.press(side)
    else:  # the clock runs on, unseen; the board logs the presser's time (§1.9)
        cap._tick()
        cap.running = not side
        cap.last_tick = cap.t
        shown = cap.white if side == chess.WHITE else cap.black
        log.append(EEClock(left=side == chess.WHITE, seconds=int(shown)))
    board.push(move)


def _capture(*, eeprom: bool) -> tuple[str, chess.Board]:
    board = chess.Board()
    cap = Capture(board)
    cap.advance(1.0)
    cap.running = chess.WHITE
    cap.last_tick = cap.t
    cap.bwtime(lever=chess.WHITE)
    log: list[EERecord] = [EETagRecord(tag=EETag.POWERUP), EETagRecord(tag=EETag.DOWNLOADED)]
    for san in BEFORE:
        _play(cap, board, san, seen=True, log=log)
    cap.advance(1.0)
    cap.lines.append(json.dumps({"t": round(cap.t, 3), "link": "down"}))
    for san in MISSED:
        _play(cap, board, san, seen=False, log=log)
    cap.advance(1.0)
    cap.lines.append(json.dumps({"t": round(cap.t, 3), "link": "up"}))
    cap.tx("4b")
    cap.tx("4d")
    cap.tx("49")
    cap.tx("42")
    cap.rx([0x93, 0x00, 0x05, 0x01, 0x02])  # the version: the board answers
    if eeprom:  # a board that logged while no host read it
        frame = bytes((0x8F, 0x3E, 0x03)) + encode_ee_log(log)
        assert len(frame) == EE_MOVES_SIZE
        cap.rx(list(frame))
    cap.rx([0x86, 0x00, 0x43, *(_code(board.piece_at(sq)) for sq in sorted(chess.SQUARES, key=_field))])
    cap.bwtime(lever=board.turn)
    for san in AFTER:
        cap.advance(0.5)
        cap.bwtime(lever=cap.running if cap.running is not None else board.turn)
        _play(cap, board, san, seen=True, log=log)
    cap.advance(4.0)
    return cap.text(), board


def _replay(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> list[dict[str, object]]:
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt", "--time-control", "5400+30"])) == 0
    return [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]


def _published(out: list[dict[str, object]], topic: str) -> list[dict[str, object]]:
    return [p["payload"] for p in out if str(p["topic"]).endswith(topic) and isinstance(p["payload"], dict)]


def test_dgt_bytes_without_the_boards_log_leave_a_gap_with_both_orders(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    text, board = _capture(eeprom=False)
    path = tmp_path / "outage.jsonl"
    path.write_text(text)
    out = _replay(path, capsysbinary)
    state = _published(out, "/state")[-1]
    played = [m.uci() for m in board.move_stack]
    assert state["moves"] == [*played[:2], "0000", *played[5:]]  # d3 h6 c3 was recorded here as fact
    raised = _published(out, "/irregularity")
    assert not [(p["code"], p.get("subtype")) for p in raised if p["severity"] != "info"]
    [event] = [p for p in _published(out, "/event") if p.get("type") == "MOVES_RECOVERED"]
    assert (event["kind"], event["reason"], event["from_ply"]) == ("ambiguous", "board link down", 3)
    assert sorted(event["candidates"]) == [["c2c3", "h7h6", "d2d3"], ["d2d3", "h7h6", "c2c3"]]  # type: ignore[type-var]
    gap = [p for p in _published(out, "/move") if p.get("ply") == 3][-1]
    assert gap["recovered_by"] == "gap"


def test_dgt_bytes_with_the_boards_log_record_the_order_played(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    text, board = _capture(eeprom=True)
    path = tmp_path / "outage.jsonl"
    path.write_text(text)
    out = _replay(path, capsysbinary)
    state = _published(out, "/state")[-1]
    assert state["moves"] == [m.uci() for m in board.move_stack]
    raised = _published(out, "/irregularity")
    assert not [(p["code"], p.get("subtype")) for p in raised if p["severity"] != "info"]
    [event] = [p for p in _published(out, "/event") if p.get("type") == "MOVES_RECOVERED"]
    assert (event["kind"], event["method"], event["moves"]) == ("unique", "eeprom", list(MISSED))
    moves = {p["ply"]: p for p in _published(out, "/move")}
    assert [moves[ply].get("recovered_by") for ply in range(1, 9)] == [None, None, "eeprom", "eeprom", "eeprom",
                                                                      None, None, None]
    pgn_text = [p["payload"] for p in out if str(p["topic"]).endswith("/pgn")][-1]
    text = pgn_text if isinstance(pgn_text, str) else str(pgn_text.get("pgn", "")) if isinstance(pgn_text, dict) \
        else ""
    # the board link was lost while the daemon ran: the PGN says so (it once read "recovered after downtime")
    assert "recovered after the board link was down (eeprom)" in text and "downtime" not in text
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert [m.uci() for m in game.mainline_moves()] == [m.uci() for m in board.move_stack]
