"""boardd.core.contract: topics, envelope, seq, payloads per mqtt-contract.md, and the validator."""

from __future__ import annotations

import json

import chess
import pytest

from boardd.core.contract import (
    Publication,
    Publisher,
    iso_timestamp,
    topic_kind,
    validate_board_id,
    validate_payload,
)
from boardd.core.errors import ConfigError
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Confidence,
    Evidence,
    GameEvent,
    Irregularity,
    IrregularityRaised,
    IrregularityUpdated,
    LinkUpdate,
    MoveCompleted,
    MoveMade,
    MoveRecord,
    MovesRetracted,
    Output,
    Severity,
    StateChanged,
    Status,
    Suggestion,
)
from tests.record.factories import make_state, records_from_moves

#: The contract's table, written out here (not read from boardd.core.contract.TOPICS).
CONTRACT_TABLE = {
    "status": (True, 1),
    "state": (True, 1),
    "move": (False, 1),
    "irregularity": (False, 1),
    "clock": (False, 0),
    "pgn": (True, 1),
    "event": (False, 1),
    "cmd-result": (False, 1),
}

T0 = 1_795_285_982.0   # 2026-11-21T18:33:02Z


def kind_of(publication: Publication) -> str:
    split = topic_kind(publication.topic)
    assert split is not None
    return split[1]


def game_outputs() -> tuple[list[Output], list[MoveRecord]]:
    """1.e4 made and completed, an irregularity raised and resolved, a clock reading, a game event."""
    records, _ = records_from_moves(chess.Board(), [chess.Move.from_uci("e2e4")], t0=T0)
    made = MoveRecord(ply=1, uci="e2e4", san="e4", side=chess.WHITE, fen_after=records[0].fen_after, made_at=T0)
    irregularity = Irregularity(
        id="1-1", code="CLOCK_PRESS_NO_MOVE", severity=Severity.ILLEGAL_MOVE, confidence=Confidence.SUSPECTED,
        side=chess.BLACK, ply=1, edition=2023, articles=("7.5.3",), t_raised=T0 + 5, t_first_evidence=T0 + 4.5,
        evidence=(Evidence(at=T0 + 4.5, event="C B"),),
        suggestion=Suggestion(text="restart Black's clock; +2:00 White", add_to_opponent_s=120, verify=True),
    )
    resolved = Irregularity(**{**{f: getattr(irregularity, f) for f in irregularity.__slots__},
                               "status": Status.RESOLVED, "ruling": "penalty applied"})
    outputs: list[Output] = [
        MoveMade(move=made),
        MoveCompleted(move=records[0]),
        StateChanged(at=T0 + 0.5),
        IrregularityRaised(irregularity=irregularity),
        IrregularityUpdated(irregularity=resolved),
        ClockUpdate(at=T0 + 6, clock=ClockState(white=5397.5, black=5400.0, running=chess.BLACK, model="DGT3000")),
        GameEvent(at=T0 + 7, type="GAME_START", details={"white": "A", "board_no": 12}),
        MovesRetracted(at=T0 + 8, to_ply=0, reason="takeback"),
        StateChanged(at=T0 + 8),
    ]
    return outputs, records


def test_every_topic_payload_is_valid_and_seq_strictly_increases() -> None:
    outputs, records = game_outputs()
    publisher = Publisher(board="t12", session=7, seq=41)
    state = make_state(records)
    publications = [publisher.status(state="online", board_link={"driver": "dgt", "port": "/dev/ttyACM0",
                                                                 "serial": "12345", "connected": True},
                                     clock_link={"model": "DGT3000", "connected": True}, at=T0)]
    publications += publisher.render(outputs, state, at=T0 + 8)
    publications.append(publisher.command_result(command_id="c-1", ok=True, at=T0 + 9, applied="ack"))
    publications.append(publisher.command_result(command_id="c-2", ok=False, error="no such irregularity",
                                                 at=T0 + 9))
    publications.append(publisher.will())
    kinds = [kind_of(p) for p in publications]
    assert kinds == ["status", "move", "move", "irregularity", "irregularity", "clock", "event", "event",
                     "state", "pgn", "cmd-result", "cmd-result", "status"]
    seqs = []
    for publication in publications:
        kind = kind_of(publication)
        assert (publication.retain, publication.qos) == CONTRACT_TABLE[kind], kind
        assert publication.topic == f"boardd/t12/{kind}"
        if kind == "pgn":
            assert isinstance(publication.payload, str)
            assert publication.payload.startswith("[Event ")
            continue
        payload = json.loads(publication.payload_bytes())
        assert validate_payload(kind, payload) == [], (kind, payload)
        assert payload["v"] == 1
        assert payload["board"] == "t12"
        assert payload["session"] == 7
        seqs.append(payload["seq"])
    assert seqs == list(range(42, 42 + len(seqs)))
    assert publisher.seq == seqs[-1]


def test_move_payloads() -> None:
    outputs, records = game_outputs()
    publisher = Publisher(board="t12")
    made, completed = (json.loads(p.payload_bytes()) for p in publisher.render(outputs[:2], make_state(), at=T0))
    assert made["phase"] == "made"
    assert made["completed_at"] is None
    assert made["completion"] is None
    assert made["clock"] is None
    assert made["made_at"] == "2026-11-21T18:33:02.000Z"
    assert completed["phase"] == "completed"
    assert completed["completion"] == "press"
    assert completed["completed_at"] == iso_timestamp(T0 + 0.5)
    assert completed["completed_at_s"] == T0 + 0.5
    assert completed["clock"] == {"white": records[0].clock_white, "black": None}
    assert completed["emt"] == records[0].emt
    assert (completed["ply"], completed["uci"], completed["san"], completed["side"]) == (1, "e2e4", "e4", "white")
    assert completed["fen_after"] == records[0].fen_after


def test_irregularity_payload() -> None:
    outputs, _ = game_outputs()
    raised, updated = (json.loads(p.payload_bytes())
                       for p in Publisher(board="t12").render(outputs[3:5], make_state(), at=T0))
    assert raised["code"] == "CLOCK_PRESS_NO_MOVE"
    assert raised["severity"] == "illegal-move"
    assert raised["confidence"] == "suspected"
    assert raised["side"] == "black"
    assert raised["articles"] == ["7.5.3"]
    assert raised["evidence"] == [{"at": iso_timestamp(T0 + 4.5), "at_s": T0 + 4.5, "event": "C B"}]
    assert raised["suggestion"]["add_to_opponent_s"] == 120
    assert raised["suggestion"]["verify"] is True
    assert raised["status"] == "open"
    assert updated["status"] == "resolved"
    assert updated["id"] == raised["id"] == "1-1"
    assert updated["ruling"] == "penalty applied"


def test_state_payload_is_the_whole_truth() -> None:
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3")]
    records, board = records_from_moves(chess.Board(), moves)
    state = make_state(records, clock=ClockState(white=5390.25, black=5381.0, running=chess.BLACK),
                       open_irregularities=("2-1",), illegal_black=1)
    publications = Publisher(board="t12").render([StateChanged(at=T0)], state, at=T0)
    assert [kind_of(p) for p in publications] == ["state", "pgn"]
    payload = json.loads(publications[0].payload_bytes())
    assert validate_payload("state", payload) == []
    assert payload["game"]["id"] == "r3-b12"
    assert payload["game"]["round"] == "3"
    assert payload["game"]["board_no"] == 12
    assert payload["game"]["time_control"] == "40/5400+30:1800+30"
    assert payload["game"]["edition"] == 2023
    assert payload["fen"] == board.fen()
    assert payload["moves"] == ["e2e4", "e7e5", "g1f3"]
    assert payload["san"] == ["e4", "e5", "Nf3"]
    assert payload["turn"] == "black"
    assert payload["ply"] == 3
    assert payload["clock"]["white"] == 5390.25
    assert payload["clock"]["running"] == "black"
    assert payload["result"] == "*"
    assert payload["open_irregularities"] == ["2-1"]
    assert payload["illegal_moves"] == {"white": 0, "black": 1}
    assert payload["last_move"] == "g1f3"
    assert payload["check"] is None
    assert isinstance(publications[1].payload, str)
    assert "1. e4" in publications[1].payload


@pytest.mark.parametrize(("moves", "mark"), [(("f2f3", "e7e5", "g2g4", "d8h4"), "#"),
                                             (("e2e4", "f7f6", "d1h5"), "+"), ((), None)])
def test_state_check_mark(moves: tuple[str, ...], mark: str | None) -> None:
    records, _ = records_from_moves(chess.Board(), [chess.Move.from_uci(u) for u in moves])
    publication = Publisher(board="t12").snapshot(make_state(records), at=T0)[0]
    payload = json.loads(publication.payload_bytes())
    assert payload["check"] == mark
    assert payload["last_move"] == (moves[-1] if moves else None)


def test_state_and_pgn_once_per_render_and_only_after_a_change() -> None:
    publisher = Publisher(board="t12")
    state = make_state()
    several = publisher.render([StateChanged(at=1.0), StateChanged(at=2.0), StateChanged(at=3.0)], state, at=3.0)
    assert [kind_of(p) for p in several] == ["state", "pgn"]
    clock_only = publisher.render([ClockUpdate(at=4.0, clock=ClockState(white=1.0, black=2.0))], state, at=4.0)
    assert [kind_of(p) for p in clock_only] == ["clock"]
    assert publisher.render([], state, at=5.0) == []


def test_snapshot_for_reconnect() -> None:
    publisher = Publisher(board="t12", seq=10)
    publications = publisher.snapshot(make_state(), at=T0)
    assert [kind_of(p) for p in publications] == ["state", "pgn"]
    assert all(p.retain for p in publications)
    assert publisher.seq == 11


def test_clock_payload() -> None:
    [publication] = Publisher(board="b-1").render(
        [ClockUpdate(at=T0, clock=ClockState(white=61.5, black=None, running=chess.WHITE, flag_black=True,
                                             model="DGT3000"))], make_state(), at=T0)
    payload = json.loads(publication.payload_bytes())
    assert validate_payload("clock", payload) == []
    assert (payload["white"], payload["black"], payload["running"]) == (61.5, None, "white")
    assert payload["flag"] == {"white": False, "black": True}
    assert payload["model"] == "DGT3000"
    assert publication.qos == 0
    assert not publication.retain


def test_event_payload_details_and_envelope_clash() -> None:
    event = GameEvent(at=T0, type="GAME_END", code="GAME_END_CHECKMATE",
                      details={"result": "1-0", "seq": 99, "moves": ("e2e4",), "side": Severity.INFO,
                               "evidence": Evidence(at=1.5, event="C W"), "move": chess.Move.from_uci("e7e8q")})
    [publication] = Publisher(board="t12").render([event], make_state(), at=T0)
    payload = json.loads(publication.payload_bytes())
    assert validate_payload("event", payload) == []
    assert payload["type"] == "GAME_END"
    assert payload["code"] == "GAME_END_CHECKMATE"
    assert payload["result"] == "1-0"
    assert payload["moves"] == ["e2e4"]
    assert payload["side"] == "info"
    assert payload["evidence"] == {"at": 1.5, "event": "C W"}
    assert payload["move"] == "e7e8q"
    assert payload["seq"] == 1           # the detail named "seq" did not overwrite the envelope


def test_link_updates_degrade_and_restore_status() -> None:
    publisher = Publisher(board="t12")
    publisher.status(state="online", board_link={"driver": "dgt", "port": "/dev/ttyACM0", "connected": True},
                     clock_link={"model": "DGT3000", "connected": True}, at=0.0)
    states = []
    for update in (LinkUpdate(at=1.0, link="clock", up=False, detail="cable"),
                   LinkUpdate(at=2.0, link="clock", up=True),
                   LinkUpdate(at=3.0, link="board", up=False, detail="USB unplugged"),
                   LinkUpdate(at=4.0, link="board", up=True)):
        [publication] = publisher.render([update], make_state(), at=update.at)
        payload = json.loads(publication.payload_bytes())
        assert validate_payload("status", payload) == []
        assert publication.retain
        states.append((payload["state"], payload["board_link"]["connected"], payload["clock_link"]["connected"]))
    assert states == [("degraded", True, False), ("online", True, True), ("degraded", False, True),
                      ("online", True, True)]
    assert payload["board_link"]["port"] == "/dev/ttyACM0"


def test_board_without_clock_is_online() -> None:
    publisher = Publisher(board="t12")
    publisher.status(state="online", board_link={"driver": "sim", "connected": True},
                     clock_link={"model": None, "connected": False}, at=0.0)
    [publication] = publisher.render([LinkUpdate(at=1.0, link="board", up=True)], make_state(), at=1.0)
    assert json.loads(publication.payload_bytes())["state"] == "online"


def test_clock_plugged_in_later_gets_its_model() -> None:
    publisher = Publisher(board="t12")
    publisher.status(state="online", board_link={"driver": "dgt", "connected": True},
                     clock_link={"model": None, "connected": False}, at=0.0)
    [up] = publisher.render([LinkUpdate(at=1.0, link="clock", up=True)], make_state(), at=1.0)
    assert json.loads(up.payload_bytes())["clock_link"] == {"model": None, "connected": True}
    identified = publisher.clock_model("dgt3000", at=1.2)  # the clock answered the version request
    assert identified is not None and identified.retain
    payload = json.loads(identified.payload_bytes())
    assert validate_payload("status", payload) == []
    assert payload["state"] == "online" and payload["clock_link"] == {"model": "dgt3000", "connected": True}
    assert payload["link_change"]["detail"] == "clock identified: dgt3000"
    assert publisher.clock_model("dgt3000", at=2.0) is None and publisher.clock_model(None, at=2.0) is None
    # the model stays known through an unplug (connected false) and is in the will
    [down] = publisher.render([LinkUpdate(at=3.0, link="clock", up=False)], make_state(), at=3.0)
    assert json.loads(down.payload_bytes())["clock_link"] == {"model": "dgt3000", "connected": False}
    assert json.loads(publisher.will().payload_bytes())["clock_link"]["model"] == "dgt3000"


def test_will_is_offline() -> None:
    publisher = Publisher(board="t12", session=3)
    publisher.status(state="online", board_link={"driver": "dgt", "connected": True},
                     clock_link={"model": "DGT3000", "connected": True}, at=T0)
    will = publisher.will()
    payload = json.loads(will.payload_bytes())
    assert validate_payload("status", payload) == []
    assert payload["state"] == "offline"
    assert payload["board_link"]["connected"] is False
    assert payload["seq"] == 2
    assert (will.topic, will.retain, will.qos) == ("boardd/t12/status", True, 1)
    assert payload["ts"] == iso_timestamp(T0)
    registered = json.loads(publisher.will(at=T0 + 60).payload_bytes())
    assert registered["ts"] == iso_timestamp(T0 + 60)
    assert registered["seq"] == 3


def test_status_rejects_unknown_state() -> None:
    with pytest.raises(ValueError, match="online"):
        Publisher(board="t12").status(state="up", board_link={}, clock_link={}, at=0.0)


def test_command_result() -> None:
    publisher = Publisher(board="t12")
    ok = json.loads(publisher.command_result(command_id="42", ok=True, at=1.0, ply=3).payload_bytes())
    assert ok["id"] == "42"
    assert ok["ok"] is True
    assert "error" not in ok
    assert ok["ply"] == 3
    failed = json.loads(publisher.command_result(command_id="43", ok=False, error="bad ply", at=1.0).payload_bytes())
    assert (failed["ok"], failed["error"]) == (False, "bad ply")
    assert validate_payload("cmd-result", ok) == []
    assert validate_payload("cmd-result", failed) == []


def test_custom_ts_and_prefix() -> None:
    publisher = Publisher(board="t12", prefix="club/boardd", ts=lambda at: f"2026-01-01T00:00:{int(at):02d}.000Z")
    [publication] = publisher.render([ClockUpdate(at=7.0, clock=ClockState())], make_state(), at=9.0)
    payload = json.loads(publication.payload_bytes())
    assert publication.topic == "club/boardd/t12/clock"
    assert payload["ts"] == "2026-01-01T00:00:09.000Z"
    assert payload["at"] == "2026-01-01T00:00:07.000Z"
    assert publisher.command_filter == "club/boardd/t12/cmd/+"


@pytest.mark.parametrize("board", ["", "t 12", "t/12", "t+1", "t#", "tä", "t12\n"])
def test_bad_board_id_is_a_config_error(board: str) -> None:
    with pytest.raises(ConfigError):
        Publisher(board=board)
    with pytest.raises(ConfigError):
        validate_board_id(board)


@pytest.mark.parametrize("prefix", ["", "/boardd", "boardd/", "a//b", "a/+", "#"])
def test_bad_prefix_is_a_config_error(prefix: str) -> None:
    with pytest.raises(ConfigError):
        Publisher(board="t12", prefix=prefix)


@pytest.mark.parametrize(("session", "seq"), [(-1, 0), (1, -1), (1, True)])
def test_bad_session_or_seq(session: int, seq: int) -> None:
    with pytest.raises(ConfigError):
        Publisher(board="t12", session=session, seq=seq)


def test_payload_bytes_compact_sorted_utf8() -> None:
    publication = Publication(topic="boardd/t12/event", payload={"b": 1, "a": "丁立人", "c": [1.5, None]},
                              retain=False, qos=1)
    assert publication.payload_bytes() == '{"a":"丁立人","b":1,"c":[1.5,null]}'.encode()
    assert Publication(topic="x", payload="[Event \"é\"]", retain=True, qos=1).payload_bytes() == \
        '[Event "é"]'.encode()


def test_payload_stays_on_one_line() -> None:
    publication = Publication(topic="t", payload={"white": "a\u2028b\x85c\nd"}, retain=False, qos=1)
    line = publication.replay_line()
    assert len(line.splitlines()) == 1
    assert json.loads(line)["payload"]["white"] == "a\u2028b\x85c\nd"
    assert json.loads(publication.payload_bytes())["white"] == "a\u2028b\x85c\nd"


def test_payload_with_nan_or_foreign_values_is_cleaned_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    publication = Publication(topic="t", payload={"x": float("nan"), "y": {1, 2}, "z": chess.Move.from_uci("a7a8q")},
                              retain=False, qos=1)
    assert json.loads(publication.payload_bytes()) == {"x": None, "y": [1, 2], "z": "a7a8q"}
    assert "not JSON-clean" in caplog.text


def test_replay_line_shape() -> None:
    line = Publication(topic="boardd/t12/pgn", payload="1. e4 *\n", retain=True, qos=1).replay_line()
    assert line == '{"topic":"boardd/t12/pgn","retain":true,"qos":1,"payload":"1. e4 *\\n"}'
    assert list(json.loads(line)) == ["topic", "retain", "qos", "payload"]


def test_iso_timestamp() -> None:
    assert iso_timestamp(0) == "1970-01-01T00:00:00.000Z"
    assert iso_timestamp(0.3) == "1970-01-01T00:00:00.300Z"
    assert iso_timestamp(T0 + 0.125) == "2026-11-21T18:33:02.125Z"
    assert iso_timestamp(float("nan")) == "1970-01-01T00:00:00.000Z"
    assert iso_timestamp(1e20).startswith("9999-12-31T23:59:59")


def test_topic_kind() -> None:
    assert topic_kind("boardd/t12/cmd/ack") == ("t12", "cmd/ack")
    assert topic_kind("other/t12/state") is None
    assert topic_kind("boardd/t12") is None


# --- The validator itself can fail ---------------------------------------------------------


def _valid_move() -> dict[str, object]:
    outputs, _ = game_outputs()
    [publication] = Publisher(board="t12").render(outputs[1:2], make_state(), at=T0)
    payload = json.loads(publication.payload_bytes())
    assert validate_payload("move", payload) == []
    return payload  # type: ignore[no-any-return]


@pytest.mark.parametrize(("change", "problem"), [
    ({"v": 2}, "v:"),
    ({"board": "t 12"}, "board:"),
    ({"seq": "1"}, "seq:"),
    ({"seq": 0}, "seq: must be >= 1"),
    ({"seq": True}, "seq:"),
    ({"ts": "2026-11-21 18:33:02"}, "ts:"),
    ({"ply": 1.0}, "ply:"),
    ({"phase": "done"}, "phase:"),
    ({"side": None}, "side:"),
    ({"completed_at": 12.5}, "completed_at:"),
    ({"completion": "flag"}, "completion:"),
    ({"clock": {"white": "1:00:00", "black": None}}, "clock.white:"),
    ({"emt": float("inf")}, "emt:"),
])
def test_validator_reports_bad_fields(change: dict[str, object], problem: str) -> None:
    payload = {**_valid_move(), **change}
    problems = validate_payload("move", payload)
    assert any(p.startswith(problem) for p in problems), problems


@pytest.mark.parametrize("field", ["ply", "uci", "san", "side", "fen_after", "phase", "made_at", "completed_at",
                                   "completion", "clock", "emt", "v", "board", "session", "seq", "ts"])
def test_validator_reports_missing_fields(field: str) -> None:
    payload = _valid_move()
    del payload[field]
    assert validate_payload("move", payload) == [f"{field}: missing"]


def test_validator_state_consistency_and_nested() -> None:
    publication = Publisher(board="t12").snapshot(make_state(), at=T0)[0]
    payload = json.loads(publication.payload_bytes())
    payload["ply"] = 3
    payload["san"] = ["e4"]
    payload["game"] = {**payload["game"], "board_no": "12"}
    del payload["illegal_moves"]["black"]
    problems = validate_payload("state", payload)
    assert "game.board_no: expected int/NoneType, got str" in problems
    assert "illegal_moves.black: missing" in problems
    assert "ply: 3 but 0 moves" in problems
    assert "san: 1 entries for 0 moves" in problems


def test_validator_other_kinds() -> None:
    assert validate_payload("cmd-result", {"v": 1, "board": "t", "session": 1, "seq": 1,
                                           "ts": "2026-11-21T18:33:02Z", "id": "1", "ok": False}) == [
        "error: required (a string) when ok is false"]
    assert validate_payload("event", []) == ["payload: expected an object, got list"]
    with pytest.raises(ValueError, match="pgn"):
        validate_payload("pgn", {})
