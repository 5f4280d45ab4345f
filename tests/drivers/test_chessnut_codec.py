"""Chessnut codec: board frames (nibble order, piece codes), battery, ack, stream and report decoding (§6)."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardd.core.events import BoardSnapshot, Marker
from drivers.chessnut.codec import (
    Ack,
    Battery,
    BoardFrame,
    Button,
    ChessnutDecoder,
    ChessnutMessage,
    Command,
    FrameError,
    decode_message,
    encode_battery,
    encode_frame,
    encode_leds,
    position_bytes,
    squares_of_position,
)

# picochess's real-format start position (BLE, 38 bytes) and the colour-swapped board (§6.3).
START = bytes.fromhex("01 24 58 23 31 85 44 44 44 44" + " 00" * 16 + " 77 77 77 77 a6 c9 9b 6a ff ff ff ff")
SWAPPED = bytes.fromhex("01 24 a6 b9 9c 6a 77 77 77 77" + " 00" * 16 + " 44 44 44 44 58 13 32 85 ff ff ff ff")


def start_placement() -> str:
    return BoardSnapshot.from_board(chess.BaseBoard(), at=0).placement()


def test_real_start_frame_is_the_start_position() -> None:
    assert len(START) == 38
    message = decode_message(START)
    assert isinstance(message, BoardFrame) and not message.usb
    assert BoardSnapshot(at=0, squares=message.squares()).placement() == start_placement()
    # byte 0x58: g8 = 5 (n) high nibble, h8 = 8 (r) low nibble; byte 0x6a: a1 = 6 (R), b1 = 10 (N)
    squares = message.squares()
    assert squares[chess.G8] == chess.Piece.from_symbol("n") and squares[chess.H8] == chess.Piece.from_symbol("r")
    assert squares[chess.A1] == chess.Piece.from_symbol("R") and squares[chess.B1] == chess.Piece.from_symbol("N")


def test_swapped_colours_frame_has_white_on_top() -> None:
    message = decode_message(SWAPPED)
    assert isinstance(message, BoardFrame)
    squares = message.squares()
    assert squares[chess.A8] == chess.Piece.from_symbol("R") and squares[chess.E2] == chess.Piece.from_symbol("p")
    assert squares[chess.D1] == chess.Piece.from_symbol("k")  # a rotated set-up, not a reordered one


def test_position_round_trip_and_usb_report() -> None:
    board = chess.Board()
    for san in ("e4", "d5", "exd5", "Qxd5"):
        board.push_san(san)
    snap = BoardSnapshot.from_board(board, at=0)
    assert squares_of_position(position_bytes(snap.squares)) == snap.squares
    report = encode_frame(snap.squares, usb=True)
    assert len(report) == 64 and report[:2] == b"\x01\x3d"
    message = decode_message(report)
    assert isinstance(message, BoardFrame) and message.usb and message.squares() == snap.squares
    ble = encode_frame(snap.squares, usb=False, uptime=0x1234)
    assert len(ble) == 38 and ble[34:36] == b"\x34\x12"


def test_unknown_piece_codes_are_markers_and_counted() -> None:
    frame = bytearray(START)
    frame[2 + 12] = 0xD0  # position byte 12: rank 5, high nibble = g5 -> code 13
    decoder = ChessnutDecoder()
    [message] = decoder.feed_report(bytes(frame))
    assert isinstance(message, BoardFrame)
    assert message.squares()[chess.G5] is Marker.UNKNOWN
    assert decoder.stats["unknown_pieces"] == 1


@pytest.mark.parametrize(("wire", "message"), [
    ("2a 02 64 01", Battery(percent=100, charging=True)),  # picochess test vector
    ("2a 02 d5 00", Battery(percent=85, charging=True)),  # official README: bit 7 of byte 2 = charging
    ("2a 02 32 00", Battery(percent=50, charging=False)),
    ("23 01 00", Ack()),
    ("0f 01 02", Button(2)),
])
def test_small_messages(wire: str, message: ChessnutMessage) -> None:
    assert decode_message(bytes.fromhex(wire)) == message
    assert ChessnutDecoder().feed(bytes.fromhex(wire)) == [message]


def test_battery_encoding_round_trips() -> None:
    assert decode_message(encode_battery(42, True)) == Battery(42, True)


@pytest.mark.parametrize(("wire", "why"), [
    ("01", "at least 2"),
    ("01 24 58 23", "truncated"),
    ("01 20" + " 00" * 32, "length 32"),
    ("77 01 00", "unknown message type"),
])
def test_bad_messages_raise_frame_errors(wire: str, why: str) -> None:
    with pytest.raises(FrameError, match=why):
        decode_message(bytes.fromhex(wire))
    decoder = ChessnutDecoder()
    assert decoder.feed_report(bytes.fromhex(wire)) == []
    assert decoder.stats["invalid_reports"] == 1


def test_stream_whole_byte_by_byte_and_with_garbage() -> None:
    messages = [decode_message(START), Ack(), Battery(100, True), decode_message(SWAPPED)]
    wire = START + bytes.fromhex("23 01 00 2a 02 64 01") + SWAPPED
    assert ChessnutDecoder().feed(wire) == messages
    decoder = ChessnutDecoder()
    assert [m for b in wire for m in decoder.feed(bytes([b]))] == messages
    decoder = ChessnutDecoder()
    garbage = bytes.fromhex("ff 00 77 01 99")  # "01 99" is a board frame type with an impossible length
    assert decoder.feed(garbage + START + garbage + SWAPPED) == [messages[0], messages[3]]
    assert decoder.stats["discarded_bytes"] == 2 * len(garbage)


def test_truncated_stream_waits_for_the_rest() -> None:
    decoder = ChessnutDecoder()
    assert decoder.feed(START[:20]) == []
    assert decoder.pending == 20
    assert decoder.feed(START[20:]) == [decode_message(START)]


def test_commands_and_leds() -> None:
    assert Command.REALTIME.value.hex(" ") == "21 01 00"
    assert Command.BATTERY.value.hex(" ") == "29 01 00"
    leds = encode_leds([chess.A8, chess.H1, chess.E4])
    assert leds[:2] == b"\x0a\x08" and leds[2] == 0x80 and leds[9] == 0x01 and leds[2 + 4] == 0x08


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_any_report_decodes_or_is_counted_and_the_next_report_is_decoded(report: bytes) -> None:
    decoder = ChessnutDecoder()
    got = decoder.feed_report(report)
    assert len(got) <= 1
    assert decoder.feed_report(encode_frame(decode_message(START).squares())) != []  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_stream_noise_never_raises_and_the_decoder_recovers(noise: bytes) -> None:
    decoder = ChessnutDecoder()
    decoder.feed(noise)
    # A false header can swallow at most one message length (63 bytes); then the stream is in step again.
    got = decoder.feed(START * 3)
    assert decode_message(START) in got


def test_capture_of_usb_reports_replays_as_snapshots(tmp_path: Path) -> None:
    from drivers.capture import events_from_capture

    board = chess.Board()
    reports = [encode_frame(BoardSnapshot.from_board(board, at=0).squares)] * 3
    board.push_uci("e2e4")
    reports += [encode_frame(BoardSnapshot.from_board(board, at=0).squares), encode_battery(50, False)]
    path = tmp_path / "chessnut.bin"
    path.write_bytes(b"".join(reports))
    events = list(events_from_capture(path, "chessnut"))
    snaps = [e for e in events if isinstance(e, BoardSnapshot)]
    assert len(snaps) == 2  # repeated frames dropped
    assert snaps[1].squares[chess.E4] == chess.Piece(chess.PAWN, chess.WHITE)
    assert snaps[1].at > snaps[0].at


def test_unknown_piece_codes_warn_sparsely_over_1000_garbage_frames(caplog: pytest.LogCaptureFixture) -> None:
    # Issue 12: 1,000 frames with unknown piece codes, fed both ways (HID reports and a byte stream), log a
    # WARNING at the 1st, 2nd, 3rd, 10th, 100th and 1000th such frame only, each with its count; all are counted.
    rng = random.Random(12)
    frames = []
    for _ in range(1000):
        frame = bytearray(START)
        for index in rng.sample(range(32), rng.randint(1, 4)):
            frame[2 + index] = rng.choice((0xD0, 0x0E, 0xFF, 0xDD))   # 13, 14, 15: no piece has these codes
        frames.append(bytes(frame))
    for feed in ("report", "stream"):
        decoder = ChessnutDecoder()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="drivers.chessnut.codec"):
            for frame in frames:
                messages = decoder.feed_report(frame) if feed == "report" else decoder.feed(frame)
                assert len(messages) == 1
        assert decoder.stats["unknown_piece_frames"] == 1000
        assert decoder.stats["unknown_pieces"] >= 1000
        warned = [r.getMessage() for r in caplog.records if "unknown piece code" in r.getMessage()]
        assert [int(text.split("#")[1].split(";")[0]) for text in warned] == [1, 2, 3, 10, 100, 1000], warned
