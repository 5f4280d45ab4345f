"""Millennium ChessLink codec: parity, XOR checksum, framing, resync, square order (protocols.md §4)."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardd.core.events import BoardSnapshot, Marker
from drivers.millennium.codec import (
    ChecksumError,
    EepromRead,
    EepromReply,
    EepromWrite,
    HostCommand,
    HostDecoder,
    LedsAck,
    LedsOff,
    LedsOffAck,
    MillenniumDecoder,
    MillenniumMessage,
    MillenniumProtocolError,
    ParityError,
    Reset,
    SetLeds,
    Status,
    StatusRequest,
    Version,
    VersionRequest,
    checksum,
    decode_message,
    encode,
    encode_message,
    frame,
    square_of_index,
    status_from_snapshot,
)

START = "RNBKQBNRPPPPPPPP................................pppppppprnbkqbnr"

# (command, bytes on the wire) from protocols.md §4.2 (the first matches picochess's log).
COMMANDS = [
    (VersionRequest(), "d6 b5 b6"),
    (StatusRequest(), "d3 b5 b3"),
    (LedsOff(), "58 b5 38"),
    (Reset(), "54 b5 34"),
    (EepromWrite(0x02, 0x03), "57 b0 32 b0 b3 b5 b6"),
]


@pytest.mark.parametrize(("command", "wire"), COMMANDS)
def test_commands_match_the_documented_bytes(command: object, wire: str) -> None:
    assert encode(command).hex(" ") == wire  # type: ignore[arg-type]
    assert HostDecoder().feed(bytes.fromhex(wire)) == [command]


def test_start_status_checksum_is_73_as_documented() -> None:
    assert checksum(("s" + START).encode()) == b"73"
    assert decode_message(frame("s" + START)) == Status(START)


def test_version_reply_from_picochess_log() -> None:
    message = decode_message(frame("v0103"))
    assert isinstance(message, Version) and message == Version(1, 3)
    assert str(message) == "1.03" and message.model == "exclusive"
    assert Version(0x01, 0x20).model == "king-performance" and Version(0x02, 0x00).model == "eone"


def test_square_order_is_h1_to_a1_then_up_as_practised() -> None:
    assert [chess.square_name(square_of_index(i)) for i in (0, 7, 8, 63)] == ["h1", "a1", "h2", "a8"]
    squares = Status(START).squares()
    assert BoardSnapshot(at=0, squares=squares).placement() == BoardSnapshot.from_board(
        chess.BaseBoard(), at=0).placement()


def test_rotated_start_reads_as_a_rotated_board() -> None:
    squares = Status(START[::-1]).squares()
    assert squares[chess.D1] == chess.Piece.from_symbol("k")  # orientation is the engine's business
    assert squares[chess.D8] == chess.Piece.from_symbol("K")


MESSAGES: list[MillenniumMessage] = [
    Status(START), Version(1, 3), LedsAck(), LedsOffAck(), EepromReply(True, 2, 3), EepromReply(False, 1, 20),
]


@pytest.mark.parametrize("message", MESSAGES)
def test_round_trip_whole_and_byte_by_byte(message: MillenniumMessage) -> None:
    wire = encode_message(message)
    assert decode_message(wire) == message
    decoder = MillenniumDecoder()
    assert decoder.feed(wire) == [message]
    decoder = MillenniumDecoder()
    got = [m for b in wire for m in decoder.feed(bytes([b]))]
    assert got == [message] and decoder.pending == 0


def test_stream_of_all_messages_with_garbage_before_and_between() -> None:
    decoder = MillenniumDecoder()
    garbage = bytes.fromhex("00 ff 13 f3 72")  # 0x72 is 'r' with a wrong parity bit... and 'r' itself
    stream = garbage + b"".join(encode_message(m) + garbage for m in MESSAGES)
    assert decoder.feed(stream) == MESSAGES
    assert decoder.stats["discarded_bytes"] >= len(garbage) * len(MESSAGES)


def test_garbage_inside_a_message_drops_it_and_resyncs_on_the_next() -> None:
    status = encode_message(Status(START))
    broken = status[:30] + b"\x55\x01" + status[30:]
    decoder = MillenniumDecoder()
    assert decoder.feed(broken + encode_message(Version(1, 3))) == [Version(1, 3)]
    assert decoder.stats["bad_checksum"] + decoder.stats["bad_parity"] >= 1


def test_truncated_message_waits_then_is_dropped_by_the_next() -> None:
    status = encode_message(Status(START))
    decoder = MillenniumDecoder()
    assert decoder.feed(status[:40]) == []
    assert decoder.pending == 40
    assert decoder.feed(status) == [Status(START)]


def test_bad_checksum_and_bad_parity_are_rejected_and_counted() -> None:
    wire = bytearray(encode_message(Version(1, 3)))
    wire[-1] = wire[-1] ^ 0x01 ^ 0x80  # another hex digit, parity kept odd
    with pytest.raises(ChecksumError):
        decode_message(bytes(wire))
    decoder = MillenniumDecoder()
    assert decoder.feed(bytes(wire)) == []
    assert decoder.stats["bad_checksum"] == 1
    wire = bytearray(encode_message(Version(1, 3)))
    wire[2] ^= 0x80  # parity broken
    with pytest.raises(ParityError):
        decode_message(bytes(wire))
    assert decoder.feed(bytes(wire)) == []
    assert decoder.stats["bad_parity"] == 1


def test_wrong_length_and_unknown_letter_are_errors() -> None:
    with pytest.raises(MillenniumProtocolError):
        decode_message(frame("s" + START[:60]))
    with pytest.raises(MillenniumProtocolError):
        decode_message(frame("q"))
    with pytest.raises(MillenniumProtocolError):
        decode_message(frame("vzz03"))


def test_unknown_piece_letter_is_a_marker_and_counted_never_a_guess() -> None:
    placement = START[:20] + "X" + START[21:]
    decoder = MillenniumDecoder()
    [message] = decoder.feed(frame("s" + placement))
    assert isinstance(message, Status)
    squares = message.squares()
    assert squares[square_of_index(20)] is Marker.UNKNOWN
    assert decoder.stats["unknown_pieces"] == 1


def test_status_from_snapshot_round_trips() -> None:
    board = chess.Board()
    board.push_san("e4")
    snap = BoardSnapshot.from_board(board, at=0)
    assert Status(status_from_snapshot(snap).placement).squares() == snap.squares


def test_host_commands_round_trip_and_bad_ones_are_skipped() -> None:
    leds = SetLeds(slot_time=0x20, patterns=tuple(range(81)))
    commands: list[HostCommand] = [VersionRequest(), StatusRequest(), leds, EepromRead(0x01), EepromWrite(0x01, 48),
                                   LedsOff(), Reset()]
    wire = b"".join(encode(c) for c in commands)
    host = HostDecoder()
    assert host.feed(b"\x01\x02" + wire) == commands
    bad = bytearray(encode(VersionRequest()))
    bad[1] ^= 0x80
    assert host.feed(bytes(bad) + encode(StatusRequest())) == [StatusRequest()]
    with pytest.raises(ValueError):
        SetLeds(slot_time=0, patterns=(0,) * 80)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=5))
def test_arbitrary_bytes_never_crash_and_the_next_valid_message_is_decoded(noise: bytes, which: int) -> None:
    decoder = MillenniumDecoder()
    decoder.feed(noise)  # counts and logs instead of raising
    message = MESSAGES[which]
    got = decoder.feed(encode_message(message))
    assert message in got
    for m in got:
        assert isinstance(m, (Status, Version, LedsAck, LedsOffAck, EepromReply))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(MESSAGES), max_size=8), st.data())
def test_any_split_of_a_valid_stream_gives_the_same_messages(messages: list[MillenniumMessage],
                                                             data: st.DataObject) -> None:
    wire = b"".join(encode_message(m) for m in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=6)))
    decoder = MillenniumDecoder()
    got: list[MillenniumMessage] = []
    start = 0
    for cut in [*cuts, len(wire)]:
        got += decoder.feed(wire[start:cut])
        start = cut
    assert got == messages
