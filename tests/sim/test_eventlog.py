"""The JSON Lines event log: exact round trip, strict reading, skippable bad lines."""

from __future__ import annotations

import io
import json

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardd.core import eventlog
from boardd.core.errors import EventLogError
from boardd.core.events import (
    Acknowledge,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Event,
    GameInfo,
    Link,
    LinkChanged,
    Marker,
    NewGame,
    Reinstate,
    Resolve,
    SetClock,
    SetOrientation,
    SetPlayers,
    SetResult,
    SquareChanged,
)
from boardd.core.settings import Category, Regime, RulesConfig, Timing

# --- strategies -------------------------------------------------------------------

times = st.floats(min_value=-1e6, max_value=1e9, allow_nan=False, allow_infinity=False)
clock_times = st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
pieces = st.builds(chess.Piece, st.sampled_from(chess.PIECE_TYPES), st.booleans())
contents: st.SearchStrategy[Content] = st.none() | pieces | st.sampled_from(list(Marker))
sides = st.none() | st.sampled_from(list(ClockSide))
text = st.text(max_size=20)
games = st.builds(
    GameInfo, id=text, white=text, black=text, event=text, site=text, date=text, round=text,
    board_no=st.none() | st.integers(0, 500), time_control=st.sampled_from(["40/5400+30:1800+30", "900+10", "180+2"]),
    edition=st.sampled_from([2009, 2014, 2018, 2023]), start_fen=st.none() | st.just(chess.STARTING_FEN),
    chess960=st.booleans(),
)

events: st.SearchStrategy[Event] = st.one_of(
    st.builds(SquareChanged, at=times, square=st.sampled_from(chess.SQUARES), content=contents),
    st.builds(BoardSnapshot, at=times, squares=st.tuples(*([contents] * 64))),
    st.builds(ClockReading, at=times, left=clock_times, right=clock_times, running=sides, lever_high=sides,
              left_flag=st.booleans(), right_flag=st.booleans(), battery_low=st.booleans(),
              connected=st.booleans(), model=st.none() | st.sampled_from(["dgt3000", "dgtxl"])),
    st.builds(LinkChanged, at=times, link=st.sampled_from(list(Link)), up=st.booleans(), detail=text),
    st.builds(NewGame, at=times, game=games),
    st.builds(SetPlayers, at=times, white=text, black=text),
    st.builds(Acknowledge, at=times, irregularity_id=text),
    st.builds(Resolve, at=times, irregularity_id=text, ruling=text, accept=st.booleans(), claim=st.booleans()),
    st.builds(Reinstate, at=times, ply=st.integers(0, 600)),
    st.builds(SetClock, at=times, white=st.floats(0, 1e5), black=st.floats(0, 1e5),
              moves_white=st.none() | st.integers(0, 200), moves_black=st.none() | st.integers(0, 200)),
    st.builds(SetResult, at=times, result=st.sampled_from(["1-0", "0-1", "1/2-1/2", "*"]), termination=text),
    st.builds(SetOrientation, at=times, white_at_a1=st.booleans()),
)


def _roundtrip(event: Event) -> Event:
    line = json.dumps(eventlog.event_to_json(event))
    ((line_no, back),) = list(eventlog.read_events([line]))
    assert line_no == 1
    return back


@given(events)
@settings(max_examples=400)
def test_every_event_round_trips_exactly(event: Event) -> None:
    assert _roundtrip(event) == event


@given(st.lists(events, max_size=20), st.booleans())
@settings(max_examples=100)
def test_write_then_read_a_whole_log(log: list[Event], with_header: bool) -> None:
    header = eventlog.LogHeader(rules=RulesConfig(category=Category.RAPID, regime=Regime.OTHERWISE,
                                                  timing=Timing(t_settle=0.5, d_far=4),
                                                  white_clock_side=ClockSide.RIGHT),
                                game=GameInfo(white="A", black="B"), board="t12", extra={"sim": {"seed": 3}})
    stream = io.StringIO()
    written = eventlog.write_events(stream, log, header if with_header else None)
    assert written == len(log)
    lines = stream.getvalue().splitlines()
    assert [event for _, event in eventlog.read_events(lines)] == log
    assert eventlog.read_header(lines) == (header if with_header else None)


@pytest.mark.parametrize("marker", list(Marker))
def test_every_marker_in_square_and_snapshot(marker: Marker) -> None:
    square = SquareChanged(at=1.5, square=chess.E4, content=marker)
    obj = eventlog.event_to_json(square)
    assert obj["piece"] == f"marker:{marker.value}"
    assert _roundtrip(square) == square
    board = chess.BaseBoard()
    squares = list(BoardSnapshot.from_board(board, at=0).squares)
    squares[chess.D4] = marker
    snapshot = BoardSnapshot(at=0.0, squares=tuple(squares))
    text_board = eventlog.event_to_json(snapshot)["board"]
    assert text_board.split("/")[4] == "3" + {"draw": "=", "white-wins": "+", "black-wins": "-",
                                               "unknown": "?"}[marker.value] + "4"
    assert _roundtrip(snapshot) == snapshot


def test_documented_examples_read() -> None:
    lines = [
        '{"type": "header", "format": "boardd-events", "version": 1, "rules": {}, "board": "t12"}',
        '{"t": 0, "type": "snapshot", "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}',
        '{"t": 0.35, "type": "square", "sq": "e4", "piece": "P"}',
        '{"t": 1.2, "type": "clock", "left": 5400.0, "right": 5400.0, "running": "left", "lever": "left",'
        ' "left_flag": false, "right_flag": false, "battery_low": false, "connected": true, "model": "dgt3000"}',
        '{"t": 5, "type": "link", "link": "board", "up": false, "detail": "usb"}',
        '{"t": 6, "type": "flip"}',
        '{"t": 7, "type": "resolve", "id": "3-1", "ruling": "ok", "accept": false, "claim": true}',
    ]
    got = list(eventlog.read_events(lines))
    assert [n for n, _ in got] == [2, 3, 4, 5, 6, 7]
    assert got[0][1] == BoardSnapshot.from_board(chess.BaseBoard(), at=0.0)
    assert got[1][1] == SquareChanged(at=0.35, square=chess.E4, content=chess.Piece(chess.PAWN, chess.WHITE))
    assert got[2][1] == ClockReading(at=1.2, left=5400.0, right=5400.0, running=ClockSide.LEFT,
                                     lever_high=ClockSide.LEFT, model="dgt3000")
    assert got[3][1] == LinkChanged(at=5.0, link=Link.BOARD, up=False, detail="usb")
    assert got[4][1] == SetOrientation(at=6.0, white_at_a1=False)
    assert got[5][1] == Resolve(at=7.0, irregularity_id="3-1", ruling="ok", accept=False, claim=True)
    header = eventlog.read_header(lines)
    assert header is not None
    assert header.board == "t12"
    assert header.rules == RulesConfig()


BAD_LINES = {
    "not json": "{not json",
    "not an object": "[1, 2]",
    "unknown type": '{"t": 1, "type": "teleport"}',
    "bad square": '{"t": 1, "type": "square", "sq": "z9", "piece": "P"}',
    "bad piece": '{"t": 1, "type": "square", "sq": "e4", "piece": "X"}',
    "bad marker": '{"t": 1, "type": "square", "sq": "e4", "piece": "marker:maybe"}',
    "negative clock": '{"t": 1, "type": "clock", "left": -3, "right": 10, "running": null, "lever": null}',
    "missing t": '{"type": "square", "sq": "e4", "piece": null}',
    "string t": '{"t": "1", "type": "square", "sq": "e4", "piece": null}',
    "unknown key": '{"t": 1, "type": "square", "sq": "e4", "piece": null, "colour": "w"}',
    "bad side": '{"t": 1, "type": "clock", "left": 3, "right": 10, "running": "white", "lever": null}',
    "bad result": '{"t": 1, "type": "set-result", "result": "2-0"}',
    "negative ply": '{"t": 1, "type": "reinstate", "ply": -1}',
    "short snapshot": '{"t": 1, "type": "snapshot", "board": "8/8/8/8/8/8/8"}',
    "late header": '{"type": "header", "format": "boardd-events", "version": 1}',
    "bad game": '{"t": 1, "type": "new-game", "game": {"edition": "2023"}}',
}


@pytest.mark.parametrize("bad", BAD_LINES.values(), ids=BAD_LINES.keys())
def test_bad_line_raises_with_line_number_or_is_skipped(bad: str) -> None:
    good = '{"t": 0.5, "type": "square", "sq": "e2", "piece": null}'
    lines = [good, "", bad, good]
    with pytest.raises(EventLogError) as info:
        list(eventlog.read_events(lines))
    assert info.value.line_no == 3
    assert str(info.value).startswith("line 3: ")
    errors: list[EventLogError] = []
    got = list(eventlog.read_events(lines, on_error=errors.append))
    assert [n for n, _ in got] == [1, 4]
    assert [e.line_no for e in errors] == [3]


def test_bad_header_is_reported() -> None:
    lines = ['{"type": "header", "format": "boardd-events", "version": 99}']
    with pytest.raises(EventLogError, match="line 1: unsupported event log version 99"):
        eventlog.read_header(lines)
    errors: list[EventLogError] = []
    assert list(eventlog.read_events(lines, on_error=errors.append)) == []
    assert errors[0].line_no == 1
    with pytest.raises(EventLogError, match=r"timing\.t_settle"):
        eventlog.rules_from_json({"timing": {"t_settle": 99}})
    with pytest.raises(EventLogError, match="unknown key"):
        eventlog.rules_from_json({"colour": "w"})


def test_rules_and_game_round_trip() -> None:
    rules = RulesConfig(category=Category.BLITZ, regime=Regime.OTHERWISE, timing=Timing(t_latency=0.5),
                        white_clock_side=ClockSide.RIGHT, blitz_adequate_penalty_2023=2, result_gesture=False,
                        clock_expected=False)
    assert eventlog.rules_from_json(json.loads(json.dumps(eventlog.rules_to_json(rules)))) == rules
    game = GameInfo(id="g1", white="W", black="B", board_no=12, time_control="900+10", edition=2018,
                    start_fen="rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1", chess960=True)
    assert eventlog.game_from_json(json.loads(json.dumps(eventlog.game_to_json(game)))) == game


def test_comments_and_blank_lines_are_skipped() -> None:
    lines = ["# a hand-written scenario", "", '{"t": 0, "type": "ack", "id": "1-1"}']
    assert list(eventlog.read_events(lines)) == [(3, Acknowledge(at=0.0, irregularity_id="1-1"))]
