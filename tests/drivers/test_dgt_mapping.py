"""DGT messages -> boardd.core.events: squares, pieces, markers, clock status bits as the captures show."""

from __future__ import annotations

from collections.abc import Sequence

import chess
import pytest

from boardd.core.events import BoardSnapshot, ClockReading, ClockSide, Content, Link, LinkChanged, Marker, SquareChanged
from drivers.dgt.codec import BoardDump, ClockAck, ClockTimes, DgtDecoder, FieldUpdate, SerialNr, Version
from drivers.dgt.mapping import ClockButton, DgtMapper, field_to_square, square_to_field
from tests.drivers.test_dgt_codec import START_CODES, h


def feed(mapper: DgtMapper, hex_text: str, at: float = 1.0) -> list[object]:
    out: list[object] = []
    for message in DgtDecoder().feed(h(hex_text)):
        out += mapper.map(message, at)
    return out


def test_field_numbering() -> None:
    assert field_to_square(0) == chess.A8
    assert field_to_square(7) == chess.H8
    assert field_to_square(0x34) == chess.E2
    assert field_to_square(63) == chess.H1
    assert all(square_to_field(field_to_square(f)) == f for f in range(64))


def test_start_position_dump_is_the_start_position() -> None:
    [snapshot] = DgtMapper().map(BoardDump(codes=START_CODES), 2.5)
    assert snapshot == BoardSnapshot.from_board(chess.BaseBoard(), at=2.5)


def test_rotated_board_dump_is_reported_in_the_board_frame() -> None:
    # capture 2.inbytes: White sits at the "black" edge: the dump starts 02 03 04 05 06 04 03 02 01 ...
    board = chess.BaseBoard().transform(chess.flip_vertical).transform(chess.flip_horizontal)
    codes = [0] * 64
    table = {chess.Piece.from_symbol(s): c for s, c in zip("PRNBKQprnbkq", range(1, 13), strict=True)}
    for square in chess.SQUARES:
        piece = board.piece_at(square)
        codes[square_to_field(square)] = 0 if piece is None else table[piece]
    assert codes[:9] == [2, 3, 4, 5, 6, 4, 3, 2, 1]
    [snapshot] = DgtMapper().map(BoardDump(codes=tuple(codes)), 0.0)
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.placement() == BoardSnapshot.from_board(board, at=0).placement()


def test_field_updates_of_1_e4() -> None:
    mapper = DgtMapper()
    events = feed(mapper, "8e 00 05 34 00  8e 00 05 24 01", at=3.0)
    assert events == [SquareChanged(at=3.0, square=chess.E2, content=None),
                      SquareChanged(at=3.0, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE))]


@pytest.mark.parametrize(("code", "content"), [
    (0x05, chess.Piece(chess.KING, chess.WHITE)),  # K before Q
    (0x06, chess.Piece(chess.QUEEN, chess.WHITE)),
    (0x0B, chess.Piece(chess.KING, chess.BLACK)),
    (0x0C, chess.Piece(chess.QUEEN, chess.BLACK)),
    (0x0D, Marker.DRAW),
    (0x0E, Marker.WHITE_WINS),
    (0x0F, Marker.BLACK_WINS),
])
def test_piece_codes(code: int, content: Content) -> None:
    [event] = DgtMapper().map(FieldUpdate(field=0x1C, code=code), 0.0)
    assert event == SquareChanged(at=0.0, square=chess.E5, content=content)


@pytest.mark.parametrize("code", [0x10, 0x33, 0x7F])
def test_unknown_piece_codes_are_unknown_markers_and_counted(code: int) -> None:
    mapper = DgtMapper()
    [event] = mapper.map(FieldUpdate(field=0x34, code=code), 0.0)
    assert event == SquareChanged(at=0.0, square=chess.E2, content=Marker.UNKNOWN)
    codes = list(START_CODES)
    codes[0] = code
    [snapshot] = mapper.map(BoardDump(codes=tuple(codes)), 0.0)
    assert isinstance(snapshot, BoardSnapshot)
    assert snapshot.squares[chess.A8] is Marker.UNKNOWN
    assert sum(1 for c in snapshot.squares if c is Marker.UNKNOWN) == 1
    assert mapper.stats["unknown_piece_codes"] == 2


def readings(events: Sequence[object]) -> list[ClockReading]:
    return [e for e in events if isinstance(e, ClockReading)]


def test_clock_sequence_of_the_real_capture() -> None:
    mapper = DgtMapper()
    events = feed(mapper, "8d 00 0a 20 03 02 20 03 02 08", at=1.0)
    assert events[0] == LinkChanged(at=1.0, link=Link.CLOCK, up=True, detail="")
    [stopped] = readings(events)
    assert (stopped.left, stopped.right, stopped.running, stopped.lever_high) == (182, 182, None, ClockSide.LEFT)
    [left_runs] = readings(feed(mapper, "8d 00 0a 20 03 02 20 03 01 09", at=2.0))
    assert (left_runs.left, left_runs.running, left_runs.lever_high) == (181, ClockSide.LEFT, ClockSide.LEFT)
    [left_runs] = readings(feed(mapper, "8d 00 0a 20 03 02 20 02 59 09", at=4.0))
    assert left_runs.left == 179
    # White pressed: left got +2 s, right runs, right high. The increment comes with the lever change.
    [pressed] = readings(feed(mapper, "8d 00 0a 20 03 02 20 03 01 13", at=5.0))
    assert (pressed.left, pressed.right, pressed.running, pressed.lever_high) == (
        181, 182, ClockSide.RIGHT, ClockSide.RIGHT)
    [ended] = readings(feed(mapper, "8d 00 0a 30 00 00 20 00 41 12", at=9.0))
    assert (ended.running, ended.lever_high, ended.right_flag, ended.left_flag) == (
        None, ClockSide.RIGHT, True, False)
    assert mapper.stats["clock_time_up"] == 0


def test_flag_shown_bit_and_battery() -> None:
    [reading] = readings(feed(DgtMapper(), "8d 00 0a 00 01 00 40 00 00 0d"))
    assert reading.left_flag and not reading.right_flag
    assert reading.battery_low
    assert reading.running is ClockSide.LEFT


def test_no_clock_bit_is_a_clock_link_down_without_reading() -> None:
    mapper = DgtMapper()
    feed(mapper, "8d 00 0a 00 05 00 00 05 00 08")
    assert feed(mapper, "8d 00 0a 00 00 00 00 00 00 20", at=2.0) == [
        LinkChanged(at=2.0, link=Link.CLOCK, up=False, detail="no clock connected")]
    assert feed(mapper, "8d 00 0a 00 00 00 00 00 00 28", at=3.0) == []  # still down: said once
    events = feed(mapper, "8d 00 0a 00 05 00 00 05 00 08", at=4.0)
    assert events[0] == LinkChanged(at=4.0, link=Link.CLOCK, up=True, detail="")
    assert len(readings(events)) == 1


def test_all_zero_clock_message_is_ignored_and_counted() -> None:
    mapper = DgtMapper()
    assert feed(mapper, "8d 00 0a 00 00 00 00 00 00 00") == []
    assert mapper.stats["clock_zero"] == 1


def test_time_going_up_without_lever_change_is_counted_but_reported() -> None:
    mapper = DgtMapper()
    feed(mapper, "8d 00 0a 00 05 00 00 04 00 09")
    [reading] = readings(feed(mapper, "8d 00 0a 00 05 00 00 04 30 09", at=2.0))
    assert reading.left == 270
    assert mapper.stats["clock_time_up"] == 1
    mapper.note_clock_set()  # the host's SetNRun explains the next increase
    feed(mapper, "8d 00 0a 00 05 00 00 10 00 09", at=3.0)
    assert mapper.stats["clock_time_up"] == 1


def test_clock_acks() -> None:
    mapper = DgtMapper()
    assert feed(mapper, "8d 00 0a 0a 10 09 0a 20 00 00") == []
    assert mapper.clock_model == "dgt3000"
    assert mapper.clock_version == "2.0"
    [reading] = readings(feed(mapper, "8d 00 0a 00 05 00 00 05 00 08"))
    assert reading.model == "dgt3000"
    xl = DgtMapper()
    xl.map(ClockAck(0x10, 0x09, 0x1E, 0), 0.0)
    assert xl.clock_model == "dgtxl"
    [button] = feed(mapper, "8d 00 0a 0a 10 08 2a 05 31 00", at=7.0)
    assert button == ClockButton(at=7.0, button="back", ack2=0x05, ack3=0x31)
    assert feed(mapper, "8d 00 0a 1a 40 0a 0a 7f 7f 00") == []
    assert mapper.stats["clock_error_acks"] == 1


def test_identity_messages_update_the_device_info() -> None:
    mapper = DgtMapper()
    assert mapper.map(Version(major=3, minor=10), 0.0) == []
    assert mapper.map(SerialNr(text="01025"), 0.0) == []
    assert (mapper.version, mapper.serial) == ("3.10", "01025")


def test_clock_times_are_decoded_with_hours() -> None:
    [reading] = readings(DgtMapper().map(
        ClockTimes(right_s=2 * 3600 + 5, left_s=9 * 3600 + 59 * 60 + 59, right_flags=0, left_flags=0, status=0x13),
        0.0))
    assert (reading.right, reading.left) == (7205, 35999)


def test_board_link_loss_takes_the_clock_link_down_once() -> None:
    mapper = DgtMapper()
    assert mapper.reset_link(1.0) == []  # no clock known yet
    feed(mapper, "8d 00 0a 00 05 00 00 05 00 08")
    assert mapper.reset_link(2.0) == [LinkChanged(at=2.0, link=Link.CLOCK, up=False, detail="board link down")]
    assert mapper.reset_link(3.0) == []
    events = feed(mapper, "8d 00 0a 00 05 00 00 05 00 08", at=4.0)
    assert events[0] == LinkChanged(at=4.0, link=Link.CLOCK, up=True, detail="")
