"""DGT codec: annotated hex cases (real captures from protocols.md §1) through decode and encode."""

from __future__ import annotations

import contextlib
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.dgt.codec import (
    EE_MOVES_SIZE,
    BatteryStatus,
    BoardDump,
    BusAddress,
    ClockAck,
    ClockAscii,
    ClockBeep,
    ClockButtonRequest,
    ClockDisplayXL,
    ClockEnd,
    ClockMessageError,
    ClockSetNRun,
    ClockTimes,
    ClockVersionRequest,
    Command,
    DgtDecoder,
    DgtMessage,
    DgtProtocolError,
    EEMoves,
    FieldUpdate,
    FrameError,
    HardwareVersion,
    HostCommand,
    HostDecoder,
    LongSerialNr,
    RawHostCommand,
    SerialNr,
    SetNRunMode,
    Trademark,
    Unknown,
    Version,
    decode_message,
    encode,
    encode_message,
)
from drivers.dgt.driver import xl_segments


def h(text: str) -> bytes:
    """Annotated hex: everything after ``#`` is a comment."""
    return bytes.fromhex(text.split("#", maxsplit=1)[0])


START_DUMP = h(
    "86 00 43"
    " 08 09 0a 0c 0b 0a 09 08"  # a8..h8: r n b q k b n r
    " 07 07 07 07 07 07 07 07"
    + " 00" * 32 +
    " 01 01 01 01 01 01 01 01"
    " 02 03 04 06 05 04 03 02"  # a1..h1: R N B Q K B N R
)
START_CODES = tuple(START_DUMP[3:])
EE_DATA = bytes((0x6A, 0x6F)) + bytes([0x7F] * (EE_MOVES_SIZE - 6)) + bytes((0x6B,))

#: (bytes, message): one table drives decoding, encoding and the round trip.
MESSAGES: list[tuple[bytes, DgtMessage]] = [
    (h("8e 00 05 34 00  # e2 -> empty (capture 1.inbytes, 1.e4)"), FieldUpdate(field=0x34, code=0)),
    (h("8e 00 05 24 01  # e4 <- white pawn"), FieldUpdate(field=0x24, code=1)),
    (h("8d 00 0a 20 03 02 20 03 02 08  # 0:03:02 both, Fischer icon, stopped, left to move"),
     ClockTimes(right_s=182, left_s=182, right_flags=0x20, left_flags=0x20, status=0x08)),
    (h("8d 00 0a 20 03 02 20 03 01 09  # left running: 0:03:01"),
     ClockTimes(right_s=182, left_s=181, right_flags=0x20, left_flags=0x20, status=0x09)),
    (h("8d 00 0a 20 03 02 20 02 59 09  # left 0:02:59 (BCD 0x59)"),
     ClockTimes(right_s=182, left_s=179, right_flags=0x20, left_flags=0x20, status=0x09)),
    (h("8d 00 0a 20 03 02 20 03 01 13  # lever pressed: right running, right high"),
     ClockTimes(right_s=182, left_s=181, right_flags=0x20, left_flags=0x20, status=0x13)),
    (h("8d 00 0a 30 00 00 20 00 41 12  # right flag fallen (0x30 = D4 + D5), stopped"),
     ClockTimes(right_s=0, left_s=41, right_flags=0x30, left_flags=0x20, status=0x12)),
    (h("8d 00 0a 09 59 59 00 00 00 08  # 9:59:59 on the right: the largest time"),
     ClockTimes(right_s=35999, left_s=0, right_flags=0, left_flags=0, status=0x08)),
    (h("8d 00 0a 0a 10 09 0a 20 00 00  # version ack: clock 2.0 (DGT 3000)"), ClockAck(0x10, 0x09, 0x20, 0x00)),
    (h("8d 00 0a 0a 10 08 2a 05 31 00  # auto ack: Back button"), ClockAck(0x10, 0x88, 0x05, 0x31)),
    (h("8d 00 0a 0a 10 0c 0a 00 00 00  # ASCII display ack"), ClockAck(0x10, 0x0C, 0x00, 0x00)),
    (h("8d 00 0a 1a 40 0a 0a 7f 7f 00  # error ack with high bits on ack2/ack3"), ClockAck(0x40, 0x0A, 0xFF, 0x7F)),
    (START_DUMP, BoardDump(codes=START_CODES)),
    (h("93 00 05 03 0a  # version 3.10 (picochess issue #108)"), Version(major=3, minor=10)),
    (h("96 00 05 01 00  # hardware version 1.0"), HardwareVersion(major=1, minor=0)),
    (h("91 00 08 31 32 33 34 35  # serial 12345"), SerialNr(text="12345")),
    (h("a2 00 0d 33 2e 31 30 41 31 32 33 34 35  # long serial 3.10A12345"), LongSerialNr(text="3.10A12345")),
    (h("90 00 05 08 01  # bus address of serial 01025"), BusAddress(address=0x401)),
    (h("92 00 07 44 47 54 21  # trademark"), Trademark(text="DGT!")),
    (h("a0 00 0c 58 7f 7f 01 02 00 00 00 02  # battery 88 %, discharging"),
     BatteryStatus(percent=0x58, data=h("58 7f 7f 01 02 00 00 00 02"))),
    (h("8f 3e 03") + EE_DATA, EEMoves(data=EE_DATA)),
    (h("99 00 04 11  # unknown id"), Unknown(message_id=0x99, data=b"\x11")),
]
IDS = [type(m).__name__ + str(i) for i, (_, m) in enumerate(MESSAGES)]


@pytest.mark.parametrize(("raw", "message"), MESSAGES, ids=IDS)
def test_decode_message(raw: bytes, message: DgtMessage) -> None:
    assert decode_message(raw) == message


@pytest.mark.parametrize(("raw", "message"), MESSAGES, ids=IDS)
def test_encode_message(raw: bytes, message: DgtMessage) -> None:
    assert encode_message(message) == raw


@pytest.mark.parametrize(("raw", "message"), MESSAGES, ids=IDS)
def test_feed_whole_and_byte_by_byte(raw: bytes, message: DgtMessage) -> None:
    assert DgtDecoder().feed(raw) == [message]
    decoder = DgtDecoder()
    out: list[DgtMessage] = []
    for i in range(len(raw)):
        out += decoder.feed(raw[i:i + 1])
        if i < len(raw) - 1:
            assert out == []
    assert out == [message]
    assert decoder.pending == 0


@pytest.mark.parametrize(("raw", "message"), MESSAGES, ids=IDS)
def test_garbage_before_and_a_broken_message_inside(raw: bytes, message: DgtMessage) -> None:
    decoder = DgtDecoder()
    garbage = h("00 13 7f 8e 00")  # stray bytes, then a field update cut short by the next id
    broken = raw[:-1]  # the same message, truncated, then interrupted by the next id
    assert decoder.feed(garbage + broken + raw) == [message]
    assert decoder.stats["discarded_bytes"] == len(garbage) + len(broken)


def test_truncated_message_waits_for_the_rest() -> None:
    decoder = DgtDecoder()
    assert decoder.feed(START_DUMP[:40]) == []
    assert decoder.pending == 40
    assert decoder.feed(START_DUMP[40:]) == [BoardDump(codes=START_CODES)]


def test_all_messages_in_one_stream() -> None:
    stream = b"".join(raw for raw, _ in MESSAGES)
    assert DgtDecoder().feed(stream) == [m for _, m in MESSAGES]


def test_discarded_bytes_are_trace_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(5, logger="drivers.dgt.codec")
    DgtDecoder().feed(h("01 02 8e 00 05 34 00"))
    assert any(">> discarded 2 byte(s)" in r.getMessage() and "01 02" in r.getMessage() for r in caplog.records)


# --- bad input: counted, logged, never a crash, never an invented message ------------------------


@pytest.mark.parametrize(("raw", "counter"), [
    (h("8e 00 06 34 00 00  # field update with a wrong length"), "invalid_frames"),
    (h("8e 00 05 40 01  # field 64 does not exist"), "invalid_frames"),
    (h("8d 00 0a 0b 00 00 00 00 00 09  # right hours 11"), "bad_clock"),
    (h("8d 00 0a 00 00 00 0f 00 00 09  # left hours 15"), "bad_clock"),
    (h("8d 00 0a 00 6a 00 00 00 00 09  # minutes 6a are not BCD"), "bad_clock"),
    (h("8d 00 0a 00 00 5a 00 00 00 09  # seconds 5a are not BCD"), "bad_clock"),
    (h("86 00 42" + " 00" * 63 + "  # dump one byte short"), "invalid_frames"),
    (h("93 00 02  # length below the header size"), "invalid_frames"),
])
def test_bad_frames_are_counted_and_the_next_message_survives(raw: bytes, counter: str,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    decoder = DgtDecoder()
    follow = h("93 00 05 03 0a")
    with caplog.at_level(logging.WARNING):
        assert decoder.feed(raw + follow) == [Version(major=3, minor=10)]
    assert decoder.stats[counter] == 1


def test_a_noisy_line_does_not_flood_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """250 bad clock messages: all counted, warnings only at the 1st-3rd, 10th and 100th, with the count."""
    decoder = DgtDecoder()
    bad = h("8d 00 0a 0b 00 00 00 00 00 09")
    with caplog.at_level(logging.WARNING, logger="drivers.dgt.codec"):
        assert decoder.feed(bad * 250 + h("93 00 05 03 0a")) == [Version(major=3, minor=10)]
    assert decoder.stats["bad_clock"] == 250
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [w.split("#")[1].split(";")[0] for w in warnings] == ["1", "2", "3", "10", "100"]
    assert all(w.startswith("DGT clock message rejected") for w in warnings)


def test_bad_frames_raise_codec_errors_when_decoded_directly() -> None:
    with pytest.raises(ClockMessageError):
        decode_message(h("8d 00 0a 0b 00 00 00 00 00 09"))
    with pytest.raises(FrameError):
        decode_message(h("8e 00 05 40 01"))
    with pytest.raises(FrameError):
        decode_message(h("8e 00 06 34 00 00"))
    with pytest.raises(FrameError):
        decode_message(h("8e 00 07 34 00"))  # length field disagrees with the frame
    assert issubclass(ClockMessageError, DgtProtocolError)


def test_unknown_ids_are_counted() -> None:
    decoder = DgtDecoder()
    assert decoder.feed(h("99 00 04 11 a5 00 03")) == [Unknown(0x99, b"\x11"), Unknown(0xA5, b"")]
    assert decoder.stats["unknown_messages"] == 2


def test_encode_rejects_impossible_values() -> None:
    with pytest.raises(FrameError):
        encode_message(FieldUpdate(field=0x80, code=0))
    with pytest.raises(FrameError):
        encode_message(BoardDump(codes=(0,) * 63))
    with pytest.raises(FrameError):
        encode_message(ClockTimes(right_s=36000, left_s=0, right_flags=0, left_flags=0, status=0))


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise_and_the_decoder_resyncs(garbage: bytes) -> None:
    decoder = DgtDecoder()
    decoder.feed(garbage)
    valid = h("8e 00 05 34 00")
    out = decoder.feed(valid)
    assert out and out[-1] == FieldUpdate(field=0x34, code=0)
    assert decoder.pending == 0


@given(st.lists(st.binary(max_size=40), max_size=12))
def test_arbitrary_chunks_only_raise_codec_errors(chunks: list[bytes]) -> None:
    decoder = DgtDecoder()
    for chunk in chunks:
        for message in decoder.feed(chunk):
            # whatever comes out re-encodes to a frame that decodes to itself
            assert decode_message(encode_message(message)) == message
    for chunk in chunks:
        with contextlib.suppress(DgtProtocolError):
            decode_message(chunk)


# --- host commands ------------------------------------------------------------------------------

COMMANDS: list[tuple[bytes, HostCommand]] = [
    (h("40  # reset"), Command.RESET),
    (h("41  # send clock"), Command.SEND_CLK),
    (h("42  # dump"), Command.SEND_BRD),
    (h("43  # update"), Command.SEND_UPDATE),
    (h("44  # update board"), Command.SEND_UPDATE_BRD),
    (h("45  # serial"), Command.RETURN_SERIALNR),
    (h("49  # EE moves"), Command.SEND_EE_MOVES),
    (h("4b  # update nice"), Command.SEND_UPDATE_NICE),
    (h("4c  # battery"), Command.SEND_BATTERY_STATUS),
    (h("4d  # version"), Command.SEND_VERSION),
    (h("55  # long serial"), Command.RETURN_LONG_SERIALNR),
    (h("2b 0a 03 0a 00 05 00 00 05 00 01 00  # SetNRun left 0:05:00 running, right 0:05:00"),
     ClockSetNRun(left_s=300, right_s=300, mode=SetNRunMode.LEFT_RUNS)),
    (h("2b 0a 03 0a 01 1e 3b 00 3b 3b 04 00  # SetNRun 1:30:59 / 0:59:59 paused: binary, not BCD"),
     ClockSetNRun(left_s=5459, right_s=3599, mode=SetNRunMode.PAUSE)),
    (h("2b 03 03 03 00  # END"), ClockEnd()),
    (h("2b 03 03 09 00  # clock version"), ClockVersionRequest()),
    (h("2b 03 03 08 00  # button"), ClockButtonRequest()),
    (h("2b 04 03 0b 05 00  # beep 5 x 64 ms"), ClockBeep(units=5)),
    (h("2b 0c 03 0c 6e 65 77 20 67 61 6d 65 03 00  # 'new game' + beep"), ClockAscii(text="new game", beep=True)),
    (h("2b 0b 03 01 38 7b 74 00 5c 38 00 01 00  # XL 'hello '"),
     ClockDisplayXL(segments=h("38 7b 74 00 5c 38"), icons=0, beep=False)),
    (h("60 04 01 34 24 00  # Revelation II LEDs e2-e4"), RawHostCommand(command=0x60, payload=h("01 34 24"))),
]


@pytest.mark.parametrize(("raw", "command"), COMMANDS, ids=[str(c) for _, c in COMMANDS])
def test_host_commands_encode_and_decode(raw: bytes, command: HostCommand) -> None:
    assert encode(command) == raw
    assert HostDecoder().feed(raw) == [command]
    decoder = HostDecoder()
    out: list[HostCommand] = []
    for byte in raw:
        out += decoder.feed(bytes((byte,)))
    assert out == [command]


def test_xl_segments_match_the_documented_example() -> None:
    assert xl_segments("hello ") == h("38 7b 74 00 5c 38")


def test_setnrun_rejects_times_beyond_the_display() -> None:
    with pytest.raises(FrameError):
        encode(ClockSetNRun(left_s=36000, right_s=0))


@given(st.binary(max_size=200))
def test_host_decoder_survives_anything(data: bytes) -> None:
    HostDecoder().feed(data)
