"""boardd replay: event log -> engine -> contract, printed as the contract's "Replay output"."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.contract import topic_kind, validate_payload
from boardd.core.events import BoardSnapshot, ClockReading, ClockSide, SquareChanged
from boardd.daemon import replay

ROOT = Path(__file__).resolve().parents[2]

HEADER = ('{"type": "header", "format": "boardd-events", "version": 1, "rules": {}, "game": {"id": "g1", '
          '"white": "Anand", "black": "Carlsen", "round": "3", "board_no": 12, "time_control": "900+10"}, '
          '"board": "t12"}')

#: 1.e4 e5 2.Nf3, each completed by a press (White's time on the left of the clock).
EVENTS = [
    '{"t": 0.0, "type": "snapshot", "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}',
    '{"t": 0.5, "type": "clock", "left": 900, "right": 900, "running": "left", "lever": "left"}',
    '{"t": 1.0, "type": "square", "sq": "e2", "piece": null}',
    '{"t": 1.3, "type": "square", "sq": "e4", "piece": "P"}',
    '{"t": 2.0, "type": "clock", "left": 908, "right": 900, "running": "right", "lever": "right"}',
    '{"t": 3.0, "type": "square", "sq": "e7", "piece": null}',
    '{"t": 3.3, "type": "square", "sq": "e5", "piece": "p"}',
    '{"t": 4.0, "type": "clock", "left": 908, "right": 908, "running": "left", "lever": "left"}',
    '{"t": 5.0, "type": "square", "sq": "g1", "piece": null}',
    '{"t": 5.4, "type": "square", "sq": "f3", "piece": "N"}',
    '{"t": 6.0, "type": "clock", "left": 914, "right": 908, "running": "right", "lever": "right"}',
]
LOG = "\n".join([HEADER, *EVENTS]) + "\n"

GARBAGE = [
    "this is not json",
    '{"t": 1.1, "type": "teleport", "sq": "e4"}',
    '{"t": 1.2, "type": "square", "sq": "z9", "piece": null}',
    '{"t": -1, "type": "clock", "left": -5, "right": 900, "running": "left"}',
    '[1, 2, 3]',
    '{"type": "header", "format": "boardd-events", "version": 1}',
    '{"t": 2.5, "type": "square", "sq": "e4"',
]


def args_for(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    return parser.parse_args(list(argv))


def run_in_process(tmp_path: Path, text: str, *argv: str, capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[
        int, bytes, str]:
    path = tmp_path / "game.jsonl"
    path.write_text(text, encoding="utf-8")
    code = replay.run(args_for(str(path), *argv))
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err.decode()


def decode(out: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.decode("utf-8").splitlines()]


def kind(line: dict[str, object]) -> str:
    split = topic_kind(str(line["topic"]))
    assert split is not None
    return split[1]


def test_hand_written_game_replays_to_the_expected_publications(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = run_in_process(tmp_path, LOG, capsysbinary=capsysbinary)
    assert code == 0
    lines = decode(out)
    assert [list(line) for line in lines] == [["topic", "retain", "qos", "payload"]] * len(lines)

    # Connect: status online, then the retained state and pgn of the empty game.
    assert [kind(line) for line in lines[:3]] == ["status", "state", "pgn"]
    assert lines[0]["payload"]["state"] == "online"   # type: ignore[index]

    # Every move is made, then completed by the press; state and pgn follow each.
    moves = [line["payload"] for line in lines if kind(line) == "move"]
    assert [(m["uci"], m["phase"], m["completion"]) for m in moves] == [  # type: ignore[index]
        ("e2e4", "made", None), ("e2e4", "completed", "press"),
        ("e7e5", "made", None), ("e7e5", "completed", "press"),
        ("g1f3", "made", None), ("g1f3", "completed", "press"),
    ]
    completed = [m for m in moves if m["phase"] == "completed"]  # type: ignore[index]
    assert [m["clock"] for m in completed] == [  # type: ignore[index]
        {"white": 908.0, "black": 900.0}, {"white": 908.0, "black": 908.0}, {"white": 914.0, "black": 908.0}]
    assert [m["made_at"] for m in moves[::2]] == [  # type: ignore[index]
        "1970-01-01T00:00:01.300Z", "1970-01-01T00:00:03.300Z", "1970-01-01T00:00:05.400Z"]
    clocks = [line["payload"] for line in lines if kind(line) == "clock"]
    assert [(c["white"], c["black"], c["running"]) for c in clocks] == [  # type: ignore[index]
        (900.0, 900.0, "white"), (908.0, 900.0, "black"), (908.0, 908.0, "white"), (914.0, 908.0, "black")]

    # Retain/QoS per topic, valid payloads, seq strictly increasing (1 went to the last will).
    seqs = []
    for line in lines:
        topic_kind_ = kind(line)
        expected = {"status": (True, 1), "state": (True, 1), "pgn": (True, 1), "move": (False, 1),
                    "clock": (False, 0)}[topic_kind_]
        assert (line["retain"], line["qos"]) == expected
        if topic_kind_ == "pgn":
            assert isinstance(line["payload"], str)
            continue
        payload = line["payload"]
        assert isinstance(payload, dict)
        assert validate_payload(topic_kind_, payload) == []
        assert payload["board"] == "t12"
        seqs.append(payload["seq"])
    assert seqs == list(range(2, 2 + len(seqs)))

    # The last state and pgn are the whole game.
    state = next(line["payload"] for line in reversed(lines) if kind(line) == "state")
    assert state["moves"] == ["e2e4", "e7e5", "g1f3"]  # type: ignore[index]
    assert state["clock"] == {"white": 914.0, "black": 908.0, "running": "black",  # type: ignore[index]
                              "flag": {"white": False, "black": False}, "model": None}
    pgn = next(line["payload"] for line in reversed(lines) if kind(line) == "pgn")
    game = chess.pgn.read_game(io.StringIO(str(pgn)))
    assert game is not None
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5", "g1f3"]
    assert [n.clock() for n in game.mainline()] == [908, 908, 914]
    assert game.headers["Round"] == "3.12"
    assert game.headers["TimeControl"] == "900+10"

    assert "11 events" in err
    assert f"{len(lines)} publications" in err
    assert "0 bad lines" in err


def test_replay_is_deterministic(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    first = run_in_process(tmp_path, LOG, capsysbinary=capsysbinary)
    second = run_in_process(tmp_path, LOG, capsysbinary=capsysbinary)
    assert first[0] == second[0] == 0
    assert first[1] == second[1]
    assert len(first[1]) > 1000


def test_garbage_lines_are_counted_and_every_good_event_still_replays(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], caplog: pytest.LogCaptureFixture) -> None:
    clean = run_in_process(tmp_path, LOG, capsysbinary=capsysbinary)
    dirty_lines = [HEADER]
    for index, line in enumerate(EVENTS):
        dirty_lines.append(line)
        if index < len(GARBAGE):
            dirty_lines.append(GARBAGE[index])
    dirty_lines += ["", "# a comment line is not an error"]
    code, out, err = run_in_process(tmp_path, "\n".join(dirty_lines) + "\n", capsysbinary=capsysbinary)
    assert code == 0
    assert out == clean[1]      # the bad lines change nothing
    assert f"{len(GARBAGE)} bad lines" in err
    # Logged with the line number of the file ("this is not json" is line 3).
    bad = [r.getMessage() for r in caplog.records if r.name == "boardd.daemon.replay"]
    assert [m.split(":")[0] for m in bad] == [f"bad line skipped; line {n}" for n in (3, 5, 7, 9, 11, 13, 15)]


def test_bad_header_is_a_bad_line_and_defaults_are_used(tmp_path: Path,
                                                        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    text = '{"type": "header", "format": "something-else", "version": 1}\n' + "\n".join(EVENTS) + "\n"
    code, out, err = run_in_process(tmp_path, text, capsysbinary=capsysbinary)
    assert code == 0
    lines = decode(out)
    assert lines[0]["topic"] == "boardd/sim/status"
    assert "1 bad lines" in err
    state = next(line["payload"] for line in reversed(lines) if kind(line) == "state")
    assert state["moves"] == ["e2e4", "e7e5", "g1f3"]  # type: ignore[index]


def test_subprocess_with_stdin(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "12345", "LC_ALL": "C"}
    result = subprocess.run([sys.executable, "-m", "boardd", "replay", "-"], input=LOG.encode(),
                            capture_output=True, cwd=ROOT, timeout=120, check=False, env=env)
    assert result.returncode == 0, result.stderr.decode()
    lines = decode(result.stdout)
    assert [kind(line) for line in lines[:3]] == ["status", "state", "pgn"]
    assert sum(1 for line in lines if kind(line) == "move") == 6
    assert b"replay: 11 events" in result.stderr
    assert not any(line.startswith(b"replay:") for line in result.stdout.splitlines())
    # Byte-identical to the in-process run from a file (other hash seed, other locale, other source).
    assert result.stdout == run_in_process(tmp_path, LOG, capsysbinary=capsysbinary)[1]


def test_pgn_only(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, _ = run_in_process(tmp_path, LOG, "--pgn-only", capsysbinary=capsysbinary)
    assert code == 0
    game = chess.pgn.read_game(io.StringIO(out.decode()))
    assert game is not None
    assert game.errors == []
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5", "g1f3"]
    assert not out.startswith(b"{")


def test_pgn_only_archives_every_game(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    second = [
        '{"t": 10.0, "type": "new-game", "game": {"id": "g2", "white": "Carlsen", "black": "Anand"}}',
        '{"t": 10.5, "type": "snapshot", "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}',
        '{"t": 11.0, "type": "square", "sq": "d2", "piece": null}',
        '{"t": 11.3, "type": "square", "sq": "d4", "piece": "P"}',
    ]
    code, out, err = run_in_process(tmp_path, LOG + "\n".join(second) + "\n", "--pgn-only",
                                    capsysbinary=capsysbinary)
    assert code == 0
    handle = io.StringIO(out.decode())
    games = []
    while (game := chess.pgn.read_game(handle)) is not None:
        games.append(game)
    assert [g.headers["GameId"] for g in games] == ["g1", "g2"]
    assert [m.uci() for m in games[0].mainline_moves()] == ["e2e4", "e7e5", "g1f3"]
    assert [m.uci() for m in games[1].mainline_moves()] == ["d2d4"]   # made by the settle timer at the end
    assert "2 games" in err


def test_timers_fire_at_the_end(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    # The log stops right after the placement: the move is made when T_settle expires, after the last line.
    code, out, _ = run_in_process(tmp_path, "\n".join([HEADER, *EVENTS[:4]]) + "\n", capsysbinary=capsysbinary)
    assert code == 0
    moves = [line["payload"] for line in decode(out) if kind(line) == "move"]
    assert [(m["uci"], m["phase"]) for m in moves] == [("e2e4", "made")]  # type: ignore[index]


def test_overrides(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, _ = run_in_process(tmp_path, LOG, "--board", "b-7", "--prefix", "club/boardd", "--edition", "2018",
                                  "--time-control", "180+2", capsysbinary=capsysbinary)
    assert code == 0
    lines = decode(out)
    assert all(str(line["topic"]).startswith("club/boardd/b-7/") for line in lines)
    state = lines[1]["payload"]
    assert state["game"]["edition"] == 2018  # type: ignore[index]
    assert state["game"]["time_control"] == "180+2"  # type: ignore[index]
    assert state["game"]["category"] == "blitz"  # type: ignore[index]


@pytest.mark.parametrize("argv", [("--board", "t 12"), ("--time-control", "ninety minutes"),
                                  ("--prefix", "a/#")])
def test_bad_options_are_usage_errors(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
                                      argv: tuple[str, ...]) -> None:
    code, out, err = run_in_process(tmp_path, LOG, *argv, capsysbinary=capsysbinary)
    assert code == 2
    assert out == b""
    assert err.startswith("boardd replay: ")


def test_missing_file(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code = replay.run(args_for(str(tmp_path / "nope.jsonl")))
    captured = capsysbinary.readouterr()
    assert code == 2
    assert captured.out == b""
    assert b"nope.jsonl" in captured.err


def test_empty_input_still_announces_the_board(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = run_in_process(tmp_path, "", capsysbinary=capsysbinary)
    assert code == 0
    assert [kind(line) for line in decode(out)] == ["status", "state", "pgn"]
    assert "0 events" in err


def test_time_going_backwards_is_not_fatal(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    events = [*EVENTS[:4], '{"t": 0.2, "type": "square", "sq": "d2", "piece": null}',
              '{"t": 0.25, "type": "square", "sq": "d2", "piece": "P"}', *EVENTS[4:]]
    code, out, _ = run_in_process(tmp_path, "\n".join([HEADER, *events]) + "\n", capsysbinary=capsysbinary)
    assert code == 0
    lines = decode(out)
    codes = [line["payload"]["code"] for line in lines if kind(line) == "irregularity"]  # type: ignore[index]
    assert "SENSOR_FAULT" in codes
    state = next(line["payload"] for line in reversed(lines) if kind(line) == "state")
    assert state["moves"][:1] == ["e2e4"]  # type: ignore[index]


# --- Device captures (drivers.capture) ----------------------------------------------------------


def _fake_capture(calls: list[tuple[Path, str]]) -> types.ModuleType:
    module = types.ModuleType("drivers.capture")

    def events_from_capture(path: Path, driver: str, **_: object) -> Iterator[object]:
        calls.append((path, driver))
        board = chess.Board()
        yield BoardSnapshot.from_board(board, at=0.0)
        yield ClockReading(at=0.5, left=300, right=300, running=ClockSide.LEFT, lever_high=ClockSide.LEFT)
        yield SquareChanged(at=1.0, square=chess.E2, content=None)
        yield SquareChanged(at=1.3, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE))
        yield ClockReading(at=2.0, left=298, right=300, running=ClockSide.RIGHT, lever_high=ClockSide.RIGHT)

    module.events_from_capture = events_from_capture  # type: ignore[attr-defined]
    return module


def test_device_capture_goes_through_drivers_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    calls: list[tuple[Path, str]] = []
    monkeypatch.setitem(sys.modules, "drivers.capture", _fake_capture(calls))
    capture = tmp_path / "dgt.bin"
    capture.write_bytes(b"\x8e\x00")
    code = replay.run(args_for(str(capture), "--driver", "dgt", "--board", "t3"))
    out = capsysbinary.readouterr().out
    assert code == 0
    assert calls == [(capture, "dgt")]
    lines = decode(out)
    assert lines[0]["payload"]["board_link"]["driver"] == "dgt"  # type: ignore[index]
    moves = [line["payload"] for line in lines if kind(line) == "move"]
    assert [(m["uci"], m["phase"]) for m in moves] == [("e2e4", "made"), ("e2e4", "completed")]  # type: ignore[index]


def test_device_capture_without_drivers_capture_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    monkeypatch.setitem(sys.modules, "drivers.capture", None)   # import fails
    capture = tmp_path / "dgt.bin"
    capture.write_bytes(b"\x8e\x00")
    code = replay.run(args_for(str(capture), "--driver", "dgt"))
    captured = capsysbinary.readouterr()
    assert code == 2
    assert captured.out == b""
    assert b"drivers.capture" in captured.err


def test_device_capture_that_breaks_off_keeps_what_was_replayed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes],
        caplog: pytest.LogCaptureFixture) -> None:
    module = types.ModuleType("drivers.capture")

    def events_from_capture(path: Path, driver: str, **_: object) -> Iterator[object]:
        yield BoardSnapshot.from_board(chess.Board(), at=0.0)
        yield SquareChanged(at=1.0, square=chess.E2, content=None)
        yield SquareChanged(at=1.3, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE))
        raise OSError("device capture truncated")

    module.events_from_capture = events_from_capture  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "drivers.capture", module)
    capture = tmp_path / "cap.jsonl"
    capture.write_text('{"t": 0, "rx": "8e"}\n')
    code = replay.run(args_for(str(capture), "--driver", "millennium"))
    captured = capsysbinary.readouterr()
    assert code == 1
    moves = [line["payload"] for line in decode(captured.out) if kind(line) == "move"]
    # The move was made by the settle timer that fired after the input stopped.
    assert [(m["uci"], m["phase"]) for m in moves] == [("e2e4", "made")]  # type: ignore[index]
    assert "device capture truncated" in caplog.text
    assert b"replay: 3 events" in captured.err


#: rules-spec T40 (blitz, "otherwise" regime): 3.Bf1-c5 (illegal) stands once Black has moved.
T40_LOG = "\n".join([
    ('{"type": "header", "format": "boardd-events", "version": 1, "rules": {"regime": "otherwise"}, '
     '"game": {"id": "blitz-1", "white": "A", "black": "B", "round": "9", "board_no": 3, "time_control": "180+2"}, '
     '"board": "t3"}'),
    '{"t": 0.0, "type": "snapshot", "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}',
    '{"t": 0.2, "type": "clock", "left": 180, "right": 180, "running": "left", "lever": "left"}',
    '{"t": 1.0, "type": "square", "sq": "e2", "piece": null}',
    '{"t": 1.3, "type": "square", "sq": "e4", "piece": "P"}',
    '{"t": 2.0, "type": "clock", "left": 180, "right": 180, "running": "right", "lever": "right"}',
    '{"t": 3.0, "type": "square", "sq": "e7", "piece": null}',
    '{"t": 3.3, "type": "square", "sq": "e5", "piece": "p"}',
    '{"t": 4.0, "type": "clock", "left": 180, "right": 179, "running": "left", "lever": "left"}',
    '{"t": 5.0, "type": "square", "sq": "g1", "piece": null}',
    '{"t": 5.4, "type": "square", "sq": "f3", "piece": "N"}',
    '{"t": 6.0, "type": "clock", "left": 178, "right": 179, "running": "right", "lever": "right"}',
    '{"t": 7.0, "type": "square", "sq": "b8", "piece": null}',
    '{"t": 7.4, "type": "square", "sq": "c6", "piece": "n"}',
    '{"t": 8.0, "type": "clock", "left": 178, "right": 177, "running": "left", "lever": "left"}',
    '{"t": 9.0, "type": "square", "sq": "f1", "piece": null}',
    '{"t": 9.3, "type": "square", "sq": "c5", "piece": "B"}',
    '{"t": 9.6, "type": "clock", "left": 177, "right": 177, "running": "right", "lever": "right"}',
    '{"t": 10.5, "type": "square", "sq": "g8", "piece": null}',
    '{"t": 10.8, "type": "square", "sq": "f6", "piece": "n"}',
    '{"t": 11.1, "type": "clock", "left": 177, "right": 176, "running": "left", "lever": "left"}',
]) + "\n"


def test_illegal_move_that_stands_end_to_end(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, _ = run_in_process(tmp_path, T40_LOG, capsysbinary=capsysbinary)
    assert code == 0
    lines = decode(out)
    found = [(line["payload"]["code"], line["payload"]["subtype"], line["payload"]["severity"])  # type: ignore[index]
             for line in lines if kind(line) == "irregularity"]
    # the illegal move's finding is closed once with the ruling that it stood (A.5.2), after the note
    assert found == [("ILLEGAL_MOVE", "GEOMETRY", "illegal-move"), ("ILLEGAL_MOVE_STANDS", None, "info"),
                     ("ILLEGAL_MOVE", "GEOMETRY", "illegal-move")]
    closed = [line["payload"] for line in lines if kind(line) == "irregularity"][-1]
    assert closed["status"] == "resolved" and str(closed["ruling"]).startswith("the illegal move stands")  # type: ignore[index]
    illegal = [line["payload"] for line in lines if kind(line) == "move" and not line["payload"]["legal"]]  # type: ignore[index]
    assert [(m["uci"], m["phase"]) for m in illegal] == [("f1c5", "made"), ("f1c5", "completed")]  # type: ignore[index]
    state = next(line["payload"] for line in reversed(lines) if kind(line) == "state")
    assert state["moves"] == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c5", "g8f6"]  # type: ignore[index]
    assert state["illegal_plies"] == [5]  # type: ignore[index]
    assert state["illegal_moves"] == {"white": 0, "black": 0}  # type: ignore[index]   # no penalty: it stood
    pgn = next(str(line["payload"]) for line in reversed(lines) if kind(line) == "pgn")
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    assert game.errors == []
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5", "g1f3", "b8c6"]
    assert "3. Bf1-c5 (illegal, f1c5)" in game.end().comment
    assert "3... Nf6 (g8f6)" in game.end().comment
