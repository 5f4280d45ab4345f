"""Issue 3, "Prove it": DGT captures shaped like recordings of real hardware replay to exactly the game.

The captures come from :mod:`tests.drivers.captures.realistic` (protocols.md §1.4-§1.7: a DGT 3000
in UPDATE_NICE, Fischer 3+2, the §1.5 sensor dynamics, the host's traffic, a board turned round, a
flag fall), timestamped (JSON Lines) and raw (no times, starting mid-message, with line garbage,
as hex text). ``boardd replay --driver dgt`` must publish exactly the game's moves, in order, with
the clock's times in the PGN, and raise nothing above ``info`` that the game did not contain.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.engine import Engine
from boardd.core.events import BoardEvent, ClockReading, ClockSide, GameInfo, SquareChanged
from boardd.core.outputs import IrregularityRaised
from boardd.daemon import replay
from drivers.capture import events_from_capture
from drivers.dgt.codec import TRACE, BoardDump, ClockTimes, DgtDecoder, FieldUpdate, SerialNr, encode_message
from drivers.dgt.mapping import DgtCaptureCodec, DgtMapper, code_from_content, square_to_field
from tests.conftest import PGN_DIR
from tests.core.scenario import Arb, parse, start_clock
from tests.drivers.captures.realistic import FIXTURES, Capture, Options, generate, load_game, write_fixtures

CAPTURES_DIR = Path(__file__).parent / "captures"

#: (PGN file, game, options): e.p. and two promotions; O-O-O on both sides with the board turned
#: round; a flag fall, with the opponent starting before the reading of the press arrives (seed 2059).
CASES = {
    "tata88": ("tatamast22.pgn", 88, Options(seed=88)),
    "tata30-rotated": ("tatamast22.pgn", 30, Options(seed=30, rotated=True)),
    "london59-flag": ("London1851.pgn", 59, Options(seed=2059, flag_at_ply=70)),
}
FORMS = ("jsonl", "raw", "raw-mid-message-garbage", "hex-text")


def write(capture: Capture, form: str, path: Path) -> Path:
    if form == "jsonl":
        path.write_text(capture.jsonl(), encoding="utf-8")
    elif form == "raw":
        path.write_bytes(capture.raw())
    elif form == "raw-mid-message-garbage":
        path.write_bytes(capture.raw(skip=3, garbage=0.03))
    else:
        path.write_bytes(capture.raw_hex())
    return path


def run_replay(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> list[dict[str, object]]:
    """``boardd replay --driver dgt PATH`` in-process; its publications."""
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt"])) == 0
    return [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]


def last_payload(publications: list[dict[str, object]], topic: str) -> object:
    return [p["payload"] for p in publications if str(p["topic"]).endswith(topic)][-1]


def raised(publications: list[dict[str, object]]) -> list[tuple[str, str]]:
    out = []
    for p in publications:
        payload = p["payload"]
        if str(p["topic"]).endswith("/irregularity") and isinstance(payload, dict) and payload["change"] == "raised":
            out.append((str(payload["code"]), str(payload["severity"])))
    return out


@pytest.fixture(scope="module")
def captures(pgn_dir: Path) -> dict[str, Capture]:
    return {name: generate(load_game(pgn_dir / pgn, index), options) for name, (pgn, index, options) in CASES.items()}


# --- the generator ---------------------------------------------------------------------------


def test_generated_captures_look_like_the_real_ones(captures: dict[str, Capture]) -> None:
    patterns: Counter[str] = Counter()
    for capture in captures.values():
        patterns.update(capture.counts)
        messages = DgtDecoder().feed(capture.raw())
        clock = [m for m in messages if isinstance(m, ClockTimes)]
        assert sum(isinstance(m, BoardDump) for m in messages) == 1
        assert {m.status for m in clock if not m.is_all_zero} >= {0x08, 0x09, 0x13}
        assert all(m.left_flags & 0x20 and m.right_flags & 0x20 for m in clock if not m.is_all_zero)  # Fischer icon
        assert sum(m.is_all_zero for m in clock) == 1
        # one BWTIME per displayed second of the running side: they outnumber field updates (1.inbytes: 323 to 131)
        assert len(clock) > 1.5 * sum(isinstance(m, FieldUpdate) for m in messages) > 0
        assert any('"tx": "45"' in line for line in capture.jsonl().splitlines())
    for pattern in ("capture_victim_first", "capture_replaced", "castling_king_first", "slide", "pawn_slid",
                    "new_before_old", "transient_placement", "en_passant", "late_increment", "flag_fall"):
        assert patterns[pattern] > 0, pattern
    rotated = DgtDecoder().feed(captures["tata30-rotated"].raw())[1]
    assert isinstance(rotated, BoardDump) and rotated.codes[:8] == (2, 3, 4, 5, 6, 4, 3, 2)  # as board 2 starts
    end = [m for m in DgtDecoder().feed(captures["london59-flag"].raw()) if isinstance(m, ClockTimes)][-1]
    assert (end.left_flags | end.right_flags) & 0x30 == 0x30 and 0 in (end.left_s, end.right_s)
    pgn, index, options = CASES["tata88"]
    assert captures["tata88"].jsonl() == generate(load_game(PGN_DIR / pgn, index), options).jsonl()  # deterministic


def test_checked_in_fixtures_are_what_the_generator_writes(pgn_dir: Path, tmp_path: Path) -> None:
    for path in write_fixtures(pgn_dir, tmp_path):
        assert path.read_bytes() == (CAPTURES_DIR / path.name).read_bytes(), path.name


# --- replays -----------------------------------------------------------------------------------


@pytest.mark.parametrize("case_form", [(case, form) for case in CASES for form in FORMS],
                         ids=[f"{case}-{form}" for case in CASES for form in FORMS])
def test_replay_publishes_exactly_the_game(case_form: tuple[str, str], captures: dict[str, Capture],
                                           tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
                                           caplog: pytest.LogCaptureFixture) -> None:
    case, form = case_form
    capture = captures[case]
    path = write(capture, form, tmp_path / f"{case}.{form}")
    with caplog.at_level(logging.WARNING):
        publications = run_replay(path, capsysbinary)
    state = last_payload(publications, "/state")
    assert isinstance(state, dict)
    assert state["moves"] == capture.moves
    assert state["game"]["time_control"] == "?"  # a capture does not say; no made-up control to contradict
    findings = raised(publications)
    assert [code for code, severity in findings if severity != "info"] == []
    assert (("FLAG_FALL", "info") in findings) == (capture.flagged is not None)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("drivers")]
    pgn = last_payload(publications, "/pgn")
    assert isinstance(pgn, str)
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    clocks = [node.clock() for node in game.mainline()]
    assert len(clocks) == len(capture.clocks)
    for ply, (shown, expected) in enumerate(zip(clocks, capture.clocks, strict=True)):
        # the clock shows whole seconds (rounded up); the increment may show one reading after the press
        assert shown is not None and expected - capture.options.increment_s - 1 <= shown <= expected + 1, ply


@pytest.mark.parametrize("into", [1, 3, 40, 66], ids=["after-id", "after-header", "mid-codes", "last-code"])
def test_raw_capture_starting_inside_the_board_dump_replays_the_game(
        into: int, captures: dict[str, Capture], tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
        caplog: pytest.LogCaptureFixture) -> None:
    """The sniffer started while the 67-byte BOARD_DUMP was in flight: the decoder drops the rest of
    it and resyncs on the next message; with no dump, the time line follows the board from the
    starting position (as the engine does), and the game replays exactly."""
    capture = captures["tata88"]
    data = capture.raw()
    start = data.index(bytes.fromhex("86 00 43"))
    decoder = DgtDecoder()
    messages = decoder.feed(data[start + into:])
    assert not any(isinstance(m, BoardDump) for m in messages)
    assert decoder.stats["discarded_bytes"] == 67 - into
    assert isinstance(messages[0], SerialNr)  # the reply after the dump: resynced at once
    path = tmp_path / "mid-dump.bin"
    path.write_bytes(data[start + into:])
    with caplog.at_level(logging.WARNING):
        publications = run_replay(path, capsysbinary)
    state = last_payload(publications, "/state")
    assert isinstance(state, dict)
    assert state["moves"] == capture.moves
    assert [code for code, severity in raised(publications) if severity != "info"] == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("drivers")]


def test_raw_capture_of_a_turned_board_starting_inside_the_board_dump_times_as_recorded(
        captures: dict[str, Capture], tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """A turned board and no dump: the time line takes the starting position turned round (its first
    updates fit only that), and the raw replay finds nothing that the recorded times do not."""
    capture = captures["tata30-rotated"]
    data = capture.raw()
    raw = tmp_path / "turned-mid-dump.bin"
    raw.write_bytes(data[data.index(bytes.fromhex("86 00 43")) + 20:])
    timed = tmp_path / "turned-no-dump.jsonl"
    timed.write_text("".join(json.dumps({"t": round(t, 6), direction: data.hex(" ")}) + "\n"
                             for t, direction, data in capture.records
                             if not (direction == "rx" and data[0] == 0x86)), encoding="utf-8")
    by_times = run_replay(timed, capsysbinary)
    by_raw = run_replay(raw, capsysbinary)
    for publications in (by_times, by_raw):
        state = last_payload(publications, "/state")
        assert isinstance(state, dict) and state["moves"] == capture.moves
    # (with recorded times the engine warns when a turned board's first move comes without a dump)
    assert sorted(c for c, s in raised(by_raw) if s != "info") == sorted(c for c, s in raised(by_times)
                                                                          if s != "info")


def test_raw_capture_without_a_clock_starting_inside_the_board_dump_replays_the_game(
        pgn_dir: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """The same without clock messages: the clockless gaps follow the board from the starting position."""
    capture = generate(load_game(pgn_dir / "tatamast22.pgn", 88), Options(seed=88))
    data = b"".join(data for _, direction, data in capture.records if direction == "rx" and data[0] != 0x8D)
    path = tmp_path / "noclock-mid-dump.bin"
    path.write_bytes(data[data.index(bytes.fromhex("86 00 43")) + 20:])
    publications = run_replay(path, capsysbinary)
    state = last_payload(publications, "/state")
    assert isinstance(state, dict)
    assert state["moves"] == capture.moves
    assert [code for code, severity in raised(publications) if severity != "info"] == []


@pytest.mark.parametrize("suffix", [".jsonl", ".bin"])
def test_boardd_replay_command_on_the_checked_in_fixtures(suffix: str, pgn_dir: Path) -> None:
    stem, pgn, index, options = FIXTURES[0]
    expected = generate(load_game(pgn_dir / pgn, index), options)
    done = subprocess.run([sys.executable, "-m", "boardd", "replay", "--driver", "dgt",
                           str(CAPTURES_DIR / f"{stem}{suffix}")],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2], check=False)
    assert done.returncode == 0, done.stderr
    publications = [json.loads(line) for line in done.stdout.splitlines()]
    state = last_payload(publications, "/state")
    assert isinstance(state, dict) and state["moves"] == expected.moves
    assert [code for code, severity in raised(publications) if severity != "info"] == []
    assert "WARNING" not in done.stderr


# --- the raw time line (drivers.dgt.mapping.DgtCaptureCodec.timeline) ----------------------------


def fu(square: chess.Square, content: str | None) -> bytes:
    piece = chess.Piece.from_symbol(content) if content else None
    return encode_message(FieldUpdate(field=square_to_field(square), code=code_from_content(piece)))


def bw(left: int, right: int, status: int) -> bytes:
    return encode_message(ClockTimes(right_s=right, left_s=left, right_flags=0x20, left_flags=0x20, status=status))


def raw_events(tmp_path: Path, data: bytes) -> list[BoardEvent]:
    path = tmp_path / "c.bin"
    path.write_bytes(data)
    return list(events_from_capture(path, "dgt"))


START = encode_message(BoardDump(codes=tuple(
    code_from_content(chess.BaseBoard().piece_at(chess.square(f % 8, 7 - f // 8))) for f in range(64))))


def test_raw_times_follow_the_running_clock_seconds(tmp_path: Path) -> None:
    events = raw_events(tmp_path, START + bw(182, 182, 0x08) + bw(182, 182, 0x09) + bw(181, 182, 0x09)
                        + bw(178, 182, 0x09) + bw(178, 182, 0x09) + bw(177, 182, 0x09))
    readings = [e for e in events if isinstance(e, ClockReading)]
    # 181 -> 178: three seconds; a reading showing the same (UPDATE mode) carries no time
    assert readings[3].at - readings[2].at == pytest.approx(3.0)
    assert 0 < readings[4].at - readings[3].at < 0.1
    assert readings[5].at - readings[3].at == pytest.approx(1.0)


def test_raw_slide_across_a_second_never_settles_on_a_square_passed_over(tmp_path: Path) -> None:
    """Rook a1-d1 sliding while the second changes: c1 is a legal Rc1 that must not last T_settle."""
    board = "rnbqkbnr/pppppppp/8/8/8/8/8/R3K3"
    dump = encode_message(BoardDump(codes=tuple(
        code_from_content(chess.BaseBoard(board).piece_at(chess.square(f % 8, 7 - f // 8))) for f in range(64))))
    data = (dump + bw(60, 60, 0x08) + bw(60, 60, 0x09) + bw(59, 60, 0x09)
            + fu(chess.A1, None) + fu(chess.B1, "R") + fu(chess.B1, None) + fu(chess.C1, "R")
            + bw(58, 60, 0x09)
            + fu(chess.C1, None) + fu(chess.D1, "R") + bw(59, 60, 0x13))
    changes = [e for e in raw_events(tmp_path, data) if isinstance(e, SquareChanged)]
    at = {(chess.square_name(e.square), e.content is not None): e.at for e in changes}
    assert at[("c1", False)] - at[("c1", True)] < 0.4
    assert at[("b1", False)] - at[("b1", True)] < 0.4


def test_raw_opponent_starting_before_the_press_reading_hugs_the_press(tmp_path: Path) -> None:
    """White's e4 settles; Black lifts e7 before the reading of White's press arrives (clock latency)."""
    data = (START + bw(60, 60, 0x08) + bw(60, 60, 0x09) + bw(59, 60, 0x09)
            + fu(chess.E2, None) + fu(chess.E4, "P") + bw(58, 60, 0x09) + fu(chess.E7, None)
            + bw(60, 60, 0x13) + fu(chess.E5, "p") + bw(60, 59, 0x13) + bw(60, 59, 0x09))
    events = raw_events(tmp_path, data)
    changes = {chess.square_name(e.square): e.at for e in events if isinstance(e, SquareChanged)}
    press = next(e.at for e in events if isinstance(e, ClockReading) and e.running is ClockSide.RIGHT)
    assert changes["e7"] - changes["e4"] >= 0.4  # e4 was made (settled) before Black began
    assert 0 < press - changes["e7"] < 0.25
    engine = Engine(game=GameInfo(time_control="?"))
    for event in events:
        engine.feed(event)
    engine.advance(events[-1].at + 5)
    assert [m.san for m in engine.state.moves] == ["e4", "e5"]


def test_raw_quick_reply_across_the_first_second_after_the_press_does_not_settle_on_the_way(tmp_path: Path) -> None:
    """White lifts h2 before Black's press reading, sets the pawn on h4, lifts it again after his display
    first changed and plays h3: h4 (a legal h2-h4) must not last T_settle."""
    data = (START + bw(60, 60, 0x08) + bw(60, 60, 0x09) + bw(59, 60, 0x09)
            + fu(chess.E2, None) + fu(chess.E4, "P") + bw(60, 60, 0x13) + bw(60, 59, 0x13)
            + fu(chess.E7, None) + fu(chess.E5, "p") + bw(60, 58, 0x13) + fu(chess.H2, None)
            + bw(60, 60, 0x09) + fu(chess.H4, "P") + bw(59, 60, 0x09) + fu(chess.H4, None) + fu(chess.H3, "P")
            + bw(58, 60, 0x09) + bw(60, 60, 0x13))
    changes = [e for e in raw_events(tmp_path, data) if isinstance(e, SquareChanged) and e.square == chess.H4]
    assert [c.content is None for c in changes] == [False, True]
    assert changes[1].at - changes[0].at < 0.4


def test_raw_promotion_reported_new_square_first_is_the_movers_not_an_early_reply(tmp_path: Path) -> None:
    """a7-a8=Q with the queen seen before a7 cleared: the pawn's lift belongs to the move, not to Black."""
    board = chess.BaseBoard("7k/P7/8/8/8/8/8/K7")
    dump = encode_message(BoardDump(codes=tuple(
        code_from_content(board.piece_at(chess.square(f % 8, 7 - f // 8))) for f in range(64))))
    data = (dump + bw(60, 60, 0x08) + bw(60, 60, 0x09) + bw(59, 60, 0x09)
            + fu(chess.A8, "Q") + fu(chess.A7, None) + bw(61, 60, 0x13) + fu(chess.H8, None) + fu(chess.G8, "k")
            + bw(61, 59, 0x13) + bw(61, 59, 0x09))
    changes = {chess.square_name(e.square): e.at for e in raw_events(tmp_path, data) if isinstance(e, SquareChanged)}
    assert 0 < changes["a7"] - changes["a8"] < 0.4


def test_raw_capture_without_a_clock_lets_a_move_at_rest_settle_and_a_slide_not(tmp_path: Path) -> None:
    """No clock gives times: a move that leaves the board at rest settles before the next update;
    a rook sliding a1-b1-c1 (c1 seen before b1 cleared) never rests on b1."""
    board = chess.BaseBoard("4k3/pppppppp/8/8/8/8/PPPPPPPP/R3K3")
    dump = encode_message(BoardDump(codes=tuple(
        code_from_content(board.piece_at(chess.square(f % 8, 7 - f // 8))) for f in range(64))))
    data = (dump + fu(chess.E2, None) + fu(chess.E4, "P") + fu(chess.E7, None) + fu(chess.E5, "p")
            + fu(chess.A1, None) + fu(chess.B1, "R") + fu(chess.C1, "R") + fu(chess.B1, None) + fu(chess.D7, None))
    changes = [(chess.square_name(e.square), e.content is None, e.at)
               for e in raw_events(tmp_path, data) if isinstance(e, SquareChanged)]
    at = {(name, lifted): t for name, lifted, t in changes}
    assert at[("e7", True)] - at[("e4", False)] >= 0.4 + 0.5  # e4 at rest: settles well before Black starts
    assert at[("e5", False)] - at[("e7", True)] < 0.4
    assert at[("c1", False)] - at[("b1", False)] < 0.4  # b1 only passed over: the rook shows on c1 first
    assert at[("d7", True)] - at[("b1", True)] >= 0.9  # Rc1 at rest once b1 cleared
    assert DgtCaptureCodec().timeline([]) == []


def test_raw_capture_without_a_clock_replays_promotions_exactly(tmp_path: Path) -> None:
    """Promotions of both colours in a raw capture without clock messages: the pawn put down for a
    moment on a square it cannot go to, then its promoted piece on the promotion square (one piece
    going on: it must not settle there, or an illegal placement is reported that the game never
    had). The plain forms are in the generated captures of game 88 (test below)."""
    fen = "7k/P7/8/8/8/8/7p/K7 w - - 0 1"
    board = chess.BaseBoard(fen.split(maxsplit=1)[0])
    dump = encode_message(BoardDump(codes=tuple(
        code_from_content(board.piece_at(chess.square(f % 8, 7 - f // 8))) for f in range(64))))
    data = (dump
            + fu(chess.A7, None) + fu(chess.B8, "P") + fu(chess.B8, None) + fu(chess.A8, "Q")  # a8=Q+, via b8
            + fu(chess.H8, None) + fu(chess.H7, "k")
            + fu(chess.A1, None) + fu(chess.B2, "K")
            + fu(chess.H2, None) + fu(chess.G1, "p") + fu(chess.G1, None) + fu(chess.H1, "n")  # h1=N, via g1
            + fu(chess.B2, None) + fu(chess.C2, "K")
            + fu(chess.H7, None) + fu(chess.G6, "k"))
    events = raw_events(tmp_path, data)
    changes = [(chess.square_name(e.square), e.content is None, e.at) for e in events if isinstance(e, SquareChanged)]
    at: dict[tuple[str, bool], float] = {}
    for name, lifted, t in changes:
        at.setdefault((name, lifted), t)
    assert at[("b8", True)] - at[("b8", False)] < 0.4  # passed over, never settled
    assert at[("g1", True)] - at[("g1", False)] < 0.4
    assert at[("h8", True)] - at[("a8", False)] >= 0.9  # a8=Q at rest before Black answers
    engine = Engine(game=GameInfo(start_fen=fen, time_control="?"))
    outs = []
    for event in events:
        outs += engine.feed(event)
    outs += engine.advance(events[-1].at + 5)
    assert [o.irregularity.code for o in outs if isinstance(o, IrregularityRaised)] == []
    assert [m.san for m in engine.state.moves] == ["a8=Q+", "Kh7", "Kb2", "h1=N", "Kc2", "Kg6"]


@pytest.mark.parametrize("game", [0, 1, 5, 30, 88])
@pytest.mark.parametrize("form", ["jsonl", "raw"])
def test_capture_of_a_board_without_a_clock_replays_to_the_game(game: int, form: str, pgn_dir: Path,
                                                                   tmp_path: Path,
                                                                   capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """The same real-like captures with every clock message taken out (a board used without a clock,
    or a sniffer on a board whose clock is not connected): the moves complete on the opponent's
    next move, and the raw form gets its times from the board's own updates."""
    capture = generate(load_game(pgn_dir / "tatamast22.pgn", game), Options(seed=game, rotated=game == 30))
    records = [(t, d, data) for t, d, data in capture.records if d == "rx" and data[0] != 0x8D]
    path = tmp_path / f"noclock.{form}"
    if form == "raw":
        path.write_bytes(b"".join(data for _, _, data in records))
    else:
        path.write_text("".join(json.dumps({"t": round(t, 6), "rx": data.hex(" ")}) + "\n"
                                for t, _, data in records), encoding="utf-8")
    publications = run_replay(path, capsysbinary)
    state = last_payload(publications, "/state")
    assert isinstance(state, dict)
    assert state["moves"] == capture.moves
    assert [code for code, severity in raised(publications) if severity != "info"] == []


def test_hex_text_raw_capture_is_decoded(tmp_path: Path) -> None:
    data = START + bw(182, 182, 0x08)
    path = tmp_path / "c.txt"
    path.write_text("\n".join(data[i:i + 16].hex(" ") for i in range(0, len(data), 16)) + "\n")
    kinds = [type(e).__name__ for e in events_from_capture(path, "dgt")]
    assert kinds == ["LinkChanged", "BoardSnapshot", "LinkChanged", "ClockReading"]


# --- fixes: mapper, engine ---------------------------------------------------------------------


def test_increment_shown_a_reading_after_the_press_is_not_an_anomaly(caplog: pytest.LogCaptureFixture) -> None:
    mapper = DgtMapper()
    for at, hexbytes in ((1.0, "8d 00 0a 20 03 02 20 03 01 09"), (2.0, "8d 00 0a 20 03 02 20 03 00 13"),
                         (2.6, "8d 00 0a 20 03 02 20 03 02 13"),   # White's +2 s, one reading late
                         (3.0, "8d 00 0a 20 03 01 20 03 02 13")):
        for message in DgtDecoder().feed(bytes.fromhex(hexbytes)):
            mapper.map(message, at)
    assert mapper.stats["clock_time_up"] == 0 and mapper.stats["clock_late_increments"] == 1
    with caplog.at_level(logging.WARNING):
        for message in DgtDecoder().feed(bytes.fromhex("8d 00 0a 20 03 01 20 03 09 13")):  # no press: an anomaly
            mapper.map(message, 6.0)
    assert mapper.stats["clock_time_up"] == 1
    assert "went up" in caplog.text


def test_one_piece_seen_on_two_squares_while_sliding_is_not_two_hands() -> None:
    """Rook a1-d1 in one scan, d1 reported before a1 cleared, then on to f1 (new before old again)."""
    engine = Engine(game=GameInfo(start_fen="4k3/8/8/8/8/8/8/R5K1 w - - 0 1", time_control="?"))
    clock, first = start_clock(chess.WHITE, -1.0)
    outs = engine.feed(first)
    for event in parse("0 P c1 wR · 5 L a1 · 220 P f1 wR · 225 L c1 · 800 C W", clock):
        assert not isinstance(event, Arb)
        outs += engine.feed(event)
    outs += engine.advance(3.0)
    assert [o.irregularity.code for o in outs if isinstance(o, IrregularityRaised)] == []
    assert [m.san for m in engine.state.moves] == ["Rf1"]


# --- bad input (issue 3): counted, hex-dumped at TRACE, never a crash or an invented move --------


def test_bad_input_is_counted_traced_and_invents_no_move(captures: dict[str, Capture], tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    capture = captures["tata88"]
    data = capture.raw()
    # after the first press: insert every kind of bad input the issue lists
    cut = data.index(bytes.fromhex("8d 00 0a 20 03 02")) + 10
    bad = {
        "unknown_messages": "f5 00 05 01 02",          # unknown message id, well framed
        "invalid_frames": "8e 00 07 10 00 00 00",        # field update with a wrong length
        "bad_clock": "8d 00 0a 2c 03 02 20 03 01 09",   # clock hours 12
        "clock_zero": "8d 00 0a 00 00 00 00 00 00 00",  # all-zero clock message
        "clock_time_up": "8d 00 0a 20 03 02 20 05 00 09",  # White's time up by two minutes, no press
        "unknown_piece_codes": "8e 00 05 1c 1f 8e 00 05 1c 00",  # code 0x1f on e5 (empty), then gone
    }
    path = tmp_path / "bad.bin"
    path.write_bytes(data[:cut] + bytes.fromhex(" ".join(bad.values())) + data[cut:])
    codec = DgtCaptureCodec()
    with caplog.at_level(TRACE, logger="drivers"):
        messages = codec.decode(path.read_bytes())
        for message, at in zip(messages, codec.timeline(messages), strict=True):
            codec.events(message, at)
    stats = codec.decoder.stats + codec.mapper.stats
    for counter in bad:
        assert stats[counter] >= 1, counter
    traced = " ".join(r.getMessage() for r in caplog.records if r.levelno == TRACE)
    for counter, frame in bad.items():
        dumped = "00 07 10 00 00 00" if counter == "invalid_frames" else frame[:14]
        assert dumped in traced, counter
    engine = Engine(game=GameInfo(time_control="?"))
    last = 0.0
    for event in events_from_capture(path, "dgt"):
        engine.feed(event)
        last = event.at
    engine.advance(last + 5)
    assert [m.uci for m in engine.state.moves] == capture.moves
    assert math.isfinite(last)
