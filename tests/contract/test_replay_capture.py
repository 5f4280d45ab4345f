"""boardd replay --driver dgt: a DGT capture (JSON Lines and raw bytes) through drivers.capture to publications."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest

from boardd.core.contract import topic_kind, validate_payload
from boardd.core.events import BoardEvent
from boardd.daemon import replay
from drivers.dgt.codec import BoardDump, ClockTimes, FieldUpdate, encode_message
from drivers.dgt.mapping import code_from_content, square_to_field

#: BWTIME status byte (protocols.md §1.7.1, drivers.dgt.codec.ClockTimes): running, left / right to move.
LEFT_RUNNING = 0x09
RIGHT_RUNNING = 0x13


def start_dump() -> bytes:
    board = chess.Board()
    codes = [0] * 64
    for square in chess.SQUARES:
        codes[square_to_field(square)] = code_from_content(board.piece_at(square))
    return encode_message(BoardDump(codes=tuple(codes)))


def field(square: str, piece: str | None) -> bytes:
    content = chess.Piece.from_symbol(piece) if piece else None
    return encode_message(FieldUpdate(field=square_to_field(chess.parse_square(square)),
                                      code=code_from_content(content)))


def clock(left: int, right: int, status: int) -> bytes:
    return encode_message(ClockTimes(right_s=right, left_s=left, right_flags=0, left_flags=0, status=status))


#: (time, bytes received): 1.e4 e5 2.Nf3, each completed by a press; White's time on the left.
TRAFFIC = [
    (0.0, start_dump()),
    (0.5, clock(300, 300, LEFT_RUNNING)),
    (1.0, field("e2", None)), (1.3, field("e4", "P")),
    (2.0, clock(298, 300, RIGHT_RUNNING)),
    (3.0, field("e7", None)), (3.3, field("e5", "p")),
    (4.0, clock(298, 298, LEFT_RUNNING)),
    (5.0, field("g1", None)), (5.4, field("f3", "N")),
    (6.0, clock(296, 298, RIGHT_RUNNING)),
]


def run_replay(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[int, list[dict[str, object]], str]:
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    code = replay.run(parser.parse_args([str(path), "--driver", "dgt", "--board", "t7"]))
    captured = capsysbinary.readouterr()
    return code, [json.loads(line) for line in captured.out.decode().splitlines()], captured.err.decode()


def kind(line: dict[str, object]) -> str:
    split = topic_kind(str(line["topic"]))
    assert split is not None
    return split[1]


def test_json_lines_capture(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "game.capture.jsonl"
    lines = ['{"t": 0.0, "capture": "dgt", "port": "/dev/ttyACM0", "v": 1}',
             *(json.dumps({"t": t, "rx": data.hex(" ")}) for t, data in TRAFFIC)]
    path.write_text("\n".join(lines) + "\n")
    code, lines_out, err = run_replay(path, capsysbinary)
    assert code == 0, err
    assert [kind(line) for line in lines_out[:3]] == ["status", "state", "pgn"]
    assert lines_out[0]["payload"]["board_link"]["driver"] == "dgt"  # type: ignore[index]
    for line in lines_out:
        if kind(line) != "pgn":
            assert validate_payload(kind(line), line["payload"]) == []
    moves = [line["payload"] for line in lines_out if kind(line) == "move"]
    assert [(m["uci"], m["phase"], m["completion"]) for m in moves] == [  # type: ignore[index]
        ("e2e4", "made", None), ("e2e4", "completed", "press"),
        ("e7e5", "made", None), ("e7e5", "completed", "press"),
        ("g1f3", "made", None), ("g1f3", "completed", "press")]
    state = next(line["payload"] for line in reversed(lines_out) if kind(line) == "state")
    assert state["moves"] == ["e2e4", "e7e5", "g1f3"]  # type: ignore[index]
    assert state["clock"]["white"] == 296  # type: ignore[index]


def test_bad_capture_lines_are_counted(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "game.capture.jsonl"
    lines = [json.dumps({"t": t, "rx": data.hex(" ")}) for t, data in TRAFFIC]
    lines[3:3] = ['{"t": 1.1, "rx": "zz"}', "not json"]
    path.write_text("\n".join(lines) + "\n")
    code, lines_out, err = run_replay(path, capsysbinary)
    assert code == 0, err
    assert "2 bad lines" in err
    state = next(line["payload"] for line in reversed(lines_out) if kind(line) == "state")
    assert state["moves"] == ["e2e4", "e7e5", "g1f3"]  # type: ignore[index]


def test_raw_capture_without_times(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / "game.inbytes"
    path.write_bytes(b"".join(data for _, data in TRAFFIC))
    code, lines_out, err = run_replay(path, capsysbinary)
    assert code == 0, err
    state = next(line["payload"] for line in reversed(lines_out) if kind(line) == "state")
    assert state["moves"] == ["e2e4", "e7e5", "g1f3"]  # type: ignore[index]


def test_capture_that_cannot_be_read_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    import drivers.capture

    def no_codec(path: Path, driver: str, **_: object) -> Iterator[BoardEvent]:
        # A generator, like the real one: the error comes at the first read, not at the call.
        if driver:
            raise drivers.capture.CaptureError(f"no capture codec for driver {driver!r}")
        yield from ()

    monkeypatch.setattr(drivers.capture, "events_from_capture", no_codec)
    path = tmp_path / "game.inbytes"
    path.write_bytes(b"".join(data for _, data in TRAFFIC))
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    code = replay.run(parser.parse_args([str(path), "--driver", "certabo"]))
    captured = capsysbinary.readouterr()
    assert code == 2
    assert captured.out == b""
    assert b"no capture codec for driver 'certabo'" in captured.err


@pytest.mark.parametrize("capture", ["tata2022-88-3+2.jsonl", "tata2022-30-3+2-rotated-flag.bin"])
def test_final_prints_the_last_state_and_pgn_only(capture: str, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    # --final (issue 12): the two retained messages of the end of the game, as the full replay's last ones,
    # with the seq of a publisher that published nothing else (and the time of the last event or timer).
    path = Path(__file__).resolve().parents[1] / "drivers" / "captures" / capture
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt"])) == 0
    full = [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt", "--final"])) == 0
    final = [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]
    assert [item["topic"] for item in final] == ["boardd/sim/state", "boardd/sim/pgn"]
    last_state = next(item for item in reversed(full) if item["topic"] == "boardd/sim/state")
    last_pgn = next(item for item in reversed(full) if item["topic"] == "boardd/sim/pgn")
    assert final[1] == last_pgn
    assert final[0]["payload"]["seq"] == 2

    def _body(item: dict[str, object]) -> dict[str, object]:
        payload = dict(item["payload"])  # type: ignore[call-overload]
        del payload["seq"], payload["ts"]
        return payload

    assert _body(final[0]) == _body(last_state)
    assert final[0]["payload"]["ply"] > 100
