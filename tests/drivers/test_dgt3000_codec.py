"""DGT 3000 I²C codec: CRC-8, documented packets, clock messages, decoders, mapping (protocols.md §2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardd.core.events import ClockReading, ClockSide
from drivers.dgt3000_i2c.codec import (
    BUTTON_LEVER,
    Ack,
    Button,
    ChangeState,
    ClockSrcError,
    CrcError,
    Dgt3000Decoder,
    Dgt3000Message,
    Dgt3000ProtocolError,
    Display,
    EndDisplay,
    Hello,
    PowerOff,
    SetAndRun,
    SetCentralControl,
    Time,
    UnknownPacket,
    Wake,
    crc8,
    decode_command,
    decode_packet,
    encode,
    encode_message,
)
from drivers.dgt3000_i2c.mapping import ClockButton, Dgt3000Mapper

# Every host packet with the bytes protocols.md §2.3 gives (CRCs verified there).
COMMANDS = [
    (Wake(), 0x28, "50 20 05 0d 46"),
    (SetCentralControl(), 0x08, "10 20 05 0f 48"),
    (ChangeState(25), 0x08, "10 20 06 0b 39 b9"),
    (PowerOff(), 0x08, "10 20 06 0b 00 16"),
    (EndDisplay(), 0x08, "10 20 05 07 70"),
    (SetAndRun(300, 300, 1, 0), 0x08, "10 20 0c 0a 00 05 00 00 05 00 01 02"),
    (Display("hello world"), 0x08, "10 20 15 06 68 65 6c 6c 6f 20 77 6f 72 6c 64 ff 00 03 00 00 2e"),
]


@pytest.mark.parametrize(("command", "address", "wire"), COMMANDS)
def test_host_packets_match_the_documented_bytes(command: object, address: int, wire: str) -> None:
    assert encode(command) == (address, bytes.fromhex(wire))  # type: ignore[arg-type]
    assert decode_command(address, bytes.fromhex(wire)) == command


def test_crc8_atm() -> None:
    assert crc8(b"") == 0
    assert crc8(b"123456789") == 0xF4  # the CRC-8/ATM check value
    assert crc8(bytes.fromhex("00 10 07 02 22 01")) == 0x05  # the ESP32 port's Hello


def test_set_and_run_uses_bcd_and_mode_bits() -> None:
    _, wire = encode(SetAndRun(1 * 3600 + 59 * 60 + 58, 0, 2, 1))
    assert wire[4:11] == bytes((0x01, 0x59, 0x58, 0x00, 0x00, 0x00, 0x02 + (1 << 2)))
    with pytest.raises(ValueError):
        SetAndRun(10 * 3600, 0)
    with pytest.raises(ValueError):
        Display("twelve chars")


def test_real_hello_and_clock_messages() -> None:
    assert decode_packet(bytes.fromhex("00 10 07 02 22 01 05")) == Hello(bytes((0x22, 0x01)))
    messages: list[Dgt3000Message] = [
        Ack(0x0B, 0x08), Ack(0x06, 0x20, broadcast=True), Hello(b"\x22\x01"),
        Time(5 * 3600 + 7, 59 * 60 + 59, lever=True), Time(0, 1, lever=False, no_update=True),
        Button(BUTTON_LEVER, 0), UnknownPacket(3, b"\x01\x02"),
    ]
    for message in messages:
        wire = encode_message(message)
        assert decode_packet(wire) == message
        assert wire[2] == len(wire) and crc8(wire[:-1]) == wire[-1]
    time_packet = encode_message(Time(7, 600, lever=True))
    assert len(time_packet) == 24 and time_packet[7] == 0x07 and time_packet[12] == 0x10 and time_packet[19] == 1


@pytest.mark.parametrize(("wire", "error"), [
    ("00 10 07 02 22 01 06", CrcError),
    ("00 30 07 02 22 01 " + f"{crc8(bytes.fromhex('00 30 07 02 22 01')):02x}", ClockSrcError),
    ("00 10 08 02 22 01 05", Dgt3000ProtocolError),  # length byte says 8
    ("00 10 05", Dgt3000ProtocolError),
])
def test_bad_packets_raise_and_are_counted(wire: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        decode_packet(bytes.fromhex(wire))
    decoder = Dgt3000Decoder()
    assert decoder.feed_packet(bytes.fromhex(wire)) == []
    assert decoder.stats["bad_crc"] + decoder.stats["invalid_packets"] == 1


def test_time_packet_with_wrong_length_or_non_bcd_is_rejected() -> None:
    good = bytearray(encode_message(Time(60, 60, lever=False)))
    good[6] = 0x6A  # minutes not BCD
    good[-1] = crc8(bytes(good[:-1]))
    with pytest.raises(Dgt3000ProtocolError, match="BCD"):
        decode_packet(bytes(good))


def test_stream_decoder_whole_byte_by_byte_garbage_and_truncation() -> None:
    messages: list[Dgt3000Message] = [Hello(b"\x22\x01"), Time(300, 299, lever=True), Ack(0x0A, 0x08),
                                      Button(0, BUTTON_LEVER)]
    wire = b"".join(encode_message(m) for m in messages)
    assert Dgt3000Decoder().feed(wire) == messages
    decoder = Dgt3000Decoder()
    assert [m for b in wire for m in decoder.feed(bytes([b]))] == messages
    decoder = Dgt3000Decoder()
    garbage = bytes.fromhex("ff 00 10 09 20")
    broken = bytearray(encode_message(Time(1, 2, lever=False)))
    broken[-1] ^= 0xFF
    # wire[:30] holds the whole Hello and a Time cut one byte short
    assert decoder.feed(garbage + wire[:30] + bytes(broken) + wire) == [messages[0], *messages]
    assert decoder.stats["discarded_bytes"] > 0


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=120))
def test_arbitrary_bytes_never_raise_and_the_decoder_recovers(noise: bytes) -> None:
    decoder = Dgt3000Decoder()
    assert len(decoder.feed_packet(noise)) <= 1
    decoder.feed(noise)
    message = Time(300, 299, lever=True)
    # A false header can hold back at most 64 bytes: three 24-byte packets always get one through.
    assert message in decoder.feed(encode_message(message) * 3)
    assert decoder.feed_packet(encode_message(message)) == [message]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 35999), st.integers(0, 35999), st.integers(0, 2), st.integers(0, 2))
def test_set_and_run_round_trips(left: int, right: int, lm: int, rm: int) -> None:
    command = SetAndRun(left, right, lm, rm)
    assert decode_command(*encode(command)) == command


def readings_of(out: list[ClockReading | ClockButton]) -> list[ClockReading]:
    assert all(isinstance(o, ClockReading) for o in out)
    return [o for o in out if isinstance(o, ClockReading)]


def test_mapper_times_lever_running_and_buttons() -> None:
    mapper = Dgt3000Mapper()
    assert mapper.map(Button(0, 0), 0.0) == []  # lever state learnt, no times yet
    [reading] = readings_of(mapper.map(Time(300, 300, lever=True), 0.5))
    assert reading.lever_high is ClockSide.LEFT and reading.running is None and reading.model == "dgt3000"
    [reading] = readings_of(mapper.map(Time(299, 300, lever=True), 1.5))
    assert reading.running is ClockSide.LEFT  # inferred: the left time went down
    assert mapper.map(Time(299, 300, lever=True, no_update=True), 1.6) == []
    [reading] = readings_of(mapper.map(Time(299, 300, lever=True), 4.0))
    assert reading.running is None  # nothing went down for longer than hold_s
    mapper.note_running(ClockSide.RIGHT)
    [press] = readings_of(mapper.map(Button(0, BUTTON_LEVER), 4.2))
    assert press.lever_high is ClockSide.RIGHT and press.running is ClockSide.RIGHT
    out = mapper.map(Button(0x01 | 0x08, 0), 5.0)
    assert [b.name for b in out if isinstance(b, ClockButton)] == ["back", "plus"]
    assert mapper.stats["lever_changes"] == 1 and mapper.stats["time_echoes"] == 1
    mapper.reset()
    assert mapper.reading(6.0) is None


def test_lever_bit_reading_is_configurable() -> None:
    mapper = Dgt3000Mapper(lever_set_left_high=False)
    [reading] = readings_of(mapper.map(Time(10, 10, lever=True), 0.0))
    assert reading.lever_high is ClockSide.RIGHT


def test_capture_of_packets_replays_as_clock_readings(tmp_path: Path) -> None:
    from drivers.capture import events_from_capture

    packets: list[Dgt3000Message] = [Hello(b"\x22\x01"), Time(300, 300, lever=True), Time(299, 300, lever=True),
               Button(0, BUTTON_LEVER), Time(299, 299, lever=False)]
    path = tmp_path / "dgt3000.bin"
    path.write_bytes(b"\x00\xff" + b"".join(encode_message(p) for p in packets))
    readings = [e for e in events_from_capture(path, "dgt3000-i2c") if isinstance(e, ClockReading)]
    assert [(r.left, r.right, r.lever_high) for r in readings] == [
        (300, 300, ClockSide.LEFT), (299, 300, ClockSide.LEFT), (299, 300, ClockSide.RIGHT),
        (299, 299, ClockSide.RIGHT)]
