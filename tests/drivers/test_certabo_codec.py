"""Certabo codec: lines, square order, calibration, majority filter, unknown chips, LEDs (protocols.md §5)."""

from __future__ import annotations

import logging
from pathlib import Path

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardd.core.events import BoardSnapshot, Marker
from drivers.certabo.codec import (
    Calibration,
    CalibrationError,
    Calibrator,
    CertaboDecoder,
    CertaboFrameError,
    CertaboMapper,
    ChipFrame,
    ChipId,
    LedKind,
    OccupancyFrame,
    decode_line,
    encode_frame,
    encode_leds,
    square_of_cell,
)

# A real line fragment from picochess's test data: chips "3 0 84 252 153", then noise "196 3 166 0 65".
REAL_FRAGMENT = "3 0 84 252 153 196 3 166 0 65 3 0 84 2 3"


def start_chips(seed: int = 0) -> tuple[list[ChipId | None], dict[ChipId, chess.Piece]]:
    board = chess.BaseBoard()
    chips: list[ChipId | None] = [None] * 64
    pieces: dict[ChipId, chess.Piece] = {}
    for square, piece in board.piece_map().items():
        chip = bytes((3, 0, 0x80 + seed, square + 1, 17))
        chips[square] = chip
        pieces[chip] = piece
    return chips, pieces


def line(chips: list[ChipId | None]) -> bytes:
    return encode_frame(chips)


def test_cell_order_is_a8_first_h1_last() -> None:
    assert [chess.square_name(square_of_cell(c)) for c in (0, 7, 8, 63)] == ["a8", "h8", "a7", "h1"]


def test_real_fragment_decodes_chip_and_noise_on_the_first_cells() -> None:
    numbers = REAL_FRAGMENT.split() + ["0"] * (320 - 15)
    frame = decode_line((":" + " ".join(numbers) + " ").encode())
    assert isinstance(frame, ChipFrame)
    assert frame.chips[chess.A8] == bytes((3, 0, 84, 252, 153))
    assert frame.chips[chess.B8] == bytes((196, 3, 166, 0, 65))  # noise is a chip id too (one zero)
    assert frame.chips[chess.C8] == bytes((3, 0, 84, 2, 3))
    assert frame.chips[chess.D8] is None
    assert frame.occupied() == {chess.A8, chess.B8, chess.C8}


def test_vendor_empty_rule_more_than_two_zeros() -> None:
    numbers = ["3", "0", "0", "0", "7"] + ["0"] * 315
    frame = decode_line(" ".join(numbers).encode())
    assert isinstance(frame, ChipFrame) and frame.chips[chess.A8] is None


def test_round_trip_whole_byte_by_byte_and_with_garbage() -> None:
    chips, _ = start_chips()
    wire = line(chips)
    assert wire.startswith(b":") and wire.endswith(b" \r\n")
    assert CertaboDecoder().feed(wire) == [ChipFrame(tuple(chips))]
    decoder = CertaboDecoder()
    got = [m for b in wire for m in decoder.feed(bytes([b]))]
    assert got == [ChipFrame(tuple(chips))]
    decoder = CertaboDecoder()
    noisy = b"\x00\xffjunk" + wire + b"garbage without colon\r\n" + b"xx" + wire
    assert decoder.feed(noisy) == [ChipFrame(tuple(chips))] * 2
    assert decoder.stats["discarded_bytes"] == len(b"\x00\xffjunk") + len(b"garbage without colon\r\n") + 2
    assert decoder.stats["invalid_lines"] == 1


def test_truncated_line_is_rejected_when_the_next_one_starts() -> None:
    chips, _ = start_chips()
    wire = line(chips)
    decoder = CertaboDecoder()
    assert decoder.feed(wire[:500]) == []
    # The cut line runs into the next one: the text after the last ':' is a complete line.
    assert decoder.feed(wire) == [ChipFrame(tuple(chips))]
    assert decoder.stats["discarded_bytes"] == 500


@pytest.mark.parametrize(("text", "why"), [
    (b":1 2 3", "3 values"),
    (b":" + b" ".join([b"1"] * 319) + b" x", "not a decimal"),
    (b":" + b" ".join([b"300"] * 320), "not a byte"),
])
def test_bad_lines_raise_and_are_counted_by_the_decoder(text: bytes, why: str) -> None:
    with pytest.raises(CertaboFrameError, match=why.rsplit(maxsplit=1)[-1]):
        decode_line(text)
    decoder = CertaboDecoder()
    assert decoder.feed(text + b"\r\n") == []
    assert decoder.stats["invalid_lines"] == 1


def test_marker_lines_and_occupancy_frames() -> None:
    decoder = CertaboDecoder()
    sentio = b":255 255 0 0 0 0 255 129\r\n"
    messages = decoder.feed(b"L\r\nD\r\n" + sentio)
    assert messages[:2] == [LedKind(rgb=False), LedKind(rgb=True)]
    occupancy = messages[2]
    assert isinstance(occupancy, OccupancyFrame)
    assert chess.A8 in occupancy.occupied and chess.H1 in occupancy.occupied and chess.B1 not in occupancy.occupied
    squares = CertaboMapper().squares(occupancy)
    assert squares is not None and squares[chess.A1] is Marker.UNKNOWN and squares[chess.B1] is None


def test_overlong_garbage_without_line_end_is_dropped() -> None:
    decoder = CertaboDecoder()
    decoder.feed(b"7" * 5000)
    assert decoder.pending <= 2048
    chips, _ = start_chips()
    assert decoder.feed(b"\r\n" + line(chips)) == [ChipFrame(tuple(chips))]


def test_leds_match_picochess_d2_d4() -> None:
    assert encode_leds([chess.D2, chess.D4]).hex(" ") == "00 00 00 00 08 00 08 00"
    assert encode_leds([chess.A8, chess.H1]) == bytes((1, 0, 0, 0, 0, 0, 0, 0x80))


def test_calibrator_learns_the_start_position_with_majority_and_extra_queens() -> None:
    chips, _pieces = start_chips()
    queen_w, queen_b = bytes((3, 0, 0x90, 1, 1)), bytes((3, 0, 0x90, 2, 2))
    chips[chess.D3], chips[chess.D6] = queen_w, queen_b
    calibrator = Calibrator(samples=3)
    noisy = list(chips)
    noisy[chess.E1] = bytes((3, 0, 0x99, 9, 9))  # one misread of the king
    assert calibrator.feed(ChipFrame(tuple(noisy))) is None
    assert calibrator.feed(ChipFrame(tuple(chips))) is None
    calibration = calibrator.feed(ChipFrame(tuple(chips)))
    assert calibration is not None
    assert calibration.piece_of(chips[chess.E1] or b"") == chess.Piece(chess.KING, chess.WHITE)
    assert calibration.piece_of(queen_w) == chess.Piece(chess.QUEEN, chess.WHITE)
    assert calibration.piece_of(queen_b) == chess.Piece(chess.QUEEN, chess.BLACK)
    assert calibration.piece_of(bytes((3, 0, 0x99, 9, 9))) is None
    assert len(calibration.pieces) == 34


def test_calibrator_ignores_frames_that_are_not_the_start_position() -> None:
    chips, _ = start_chips()
    moved = list(chips)
    moved[chess.E4], moved[chess.E2] = moved[chess.E2], None
    calibrator = Calibrator(samples=2)
    assert calibrator.feed(ChipFrame(tuple(chips))) is None
    assert calibrator.feed(ChipFrame(tuple(moved))) is None  # resets the count
    assert calibrator.rejected == 1
    assert calibrator.feed(ChipFrame(tuple(chips))) is None
    assert calibrator.feed(ChipFrame(tuple(chips))) is not None


def test_calibration_file_round_trip_and_bad_files(tmp_path: Path) -> None:
    _, pieces = start_chips()
    path = tmp_path / "cal.json"
    Calibration(pieces).dump(path)
    assert Calibration.load(path).pieces == pieces
    path.write_text("{not json")
    with pytest.raises(CalibrationError):
        Calibration.load(path)
    with pytest.raises(CalibrationError):
        Calibration.load(tmp_path / "missing.json")


def test_mapper_snapshot_unknown_chips_and_uncalibrated(caplog: pytest.LogCaptureFixture) -> None:
    chips, pieces = start_chips()
    frame = ChipFrame(tuple(chips))
    uncalibrated = CertaboMapper()
    assert uncalibrated.squares(frame) is None
    assert uncalibrated.stats["uncalibrated_frames"] == 1
    mapper = CertaboMapper(Calibration(pieces), history=1)
    squares = mapper.squares(frame)
    assert squares is not None
    assert BoardSnapshot(at=0, squares=squares).placement() == BoardSnapshot.from_board(
        chess.BaseBoard(), at=0).placement()
    stranger = list(chips)
    stranger[chess.D4] = bytes((5, 5, 5, 5, 5))
    with caplog.at_level(logging.WARNING):
        squares = mapper.squares(ChipFrame(tuple(stranger)))
        mapper.squares(ChipFrame(tuple(stranger)))
    assert squares is not None and squares[chess.D4] is Marker.UNKNOWN  # never a guessed piece
    assert mapper.stats["unknown_chips"] == 2
    assert sum("is not calibrated" in r.message for r in caplog.records) == 1  # logged once per chip


def test_majority_filter_hides_a_single_missed_read_and_follows_real_changes() -> None:
    chips, pieces = start_chips()
    mapper = CertaboMapper(Calibration(pieces), history=3)
    noisy_first = list(chips)
    noisy_first[chess.B1] = bytes((9, 9, 9, 9, 9))
    assert mapper.squares(ChipFrame(tuple(noisy_first))) is None  # nothing until the window is full
    assert mapper.squares(ChipFrame(tuple(chips))) is None
    base = mapper.squares(ChipFrame(tuple(chips)))
    assert base is not None and base[chess.B1] == chess.Piece(chess.KNIGHT, chess.WHITE)  # misread outvoted
    missed = list(chips)
    missed[chess.A1] = None
    assert mapper.squares(ChipFrame(tuple(missed))) == base  # one missed read: ignored
    assert mapper.squares(ChipFrame(tuple(chips))) == base
    moved = list(chips)
    moved[chess.E4], moved[chess.E2] = moved[chess.E2], None
    assert mapper.squares(ChipFrame(tuple(moved))) == base  # one frame is not yet a majority
    after = mapper.squares(ChipFrame(tuple(moved)))
    assert after is not None and after[chess.E4] == chess.Piece(chess.PAWN, chess.WHITE) and after[chess.E2] is None


def test_auto_calibration_through_the_mapper() -> None:
    chips, pieces = start_chips()
    mapper = CertaboMapper(history=1, calibrator=Calibrator(samples=2))
    assert mapper.squares(ChipFrame(tuple(chips))) is None
    assert mapper.squares(ChipFrame(tuple(chips))) is not None
    assert mapper.calibration is not None and dict(mapper.calibration.pieces) == pieces


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_crash_and_the_next_line_is_decoded(noise: bytes) -> None:
    decoder = CertaboDecoder()
    decoder.feed(noise)
    chips, _ = start_chips()
    got = decoder.feed(b"\r\n" + line(chips))
    assert got[-1] == ChipFrame(tuple(chips))


def test_calibrating_a_turned_board_labels_the_chips_right() -> None:
    chips, pieces = start_chips()
    rotated = [chips[63 - sq] for sq in range(64)]  # the same set, board turned round
    queen_w = bytes((3, 0, 0x90, 1, 1))
    rotated[63 - chess.D3] = queen_w  # White's extra queen, on the player's d3
    calibrator = Calibrator(samples=1, rotated=True)
    calibration = calibrator.feed(ChipFrame(tuple(rotated)))
    assert calibration is not None
    assert {c: p for c, p in calibration.pieces.items() if c != queen_w} == pieces
    assert calibration.piece_of(queen_w) == chess.Piece(chess.QUEEN, chess.WHITE)
    # Without saying so, the colours would come out swapped (here the frame is refused: the extra queen
    # is not on d3/d6 of the board frame).
    wrong = Calibrator(samples=1).feed(ChipFrame(tuple(rotated)))
    assert wrong is None or wrong.pieces != calibration.pieces
