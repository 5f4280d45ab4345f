"""The retained ``state`` carries the open irregularities in full (``irregularities``), for late joiners."""

from __future__ import annotations

import copy
import dataclasses
import json

import chess

from boardd.core.contract import Publication, Publisher, topic_kind, validate_payload
from boardd.core.outputs import (
    Confidence,
    Evidence,
    GameState,
    Irregularity,
    IrregularityRaised,
    IrregularityUpdated,
    Severity,
    StateChanged,
    Status,
    Suggestion,
)
from tests.record.factories import make_state, records_from_moves

T0 = 1_795_285_982.0   # 2026-11-21T18:33:02Z


def flag(ident: str, *, status: Status = Status.OPEN, code: str = "ILLEGAL_MOVE", subtype: str | None = "SELF_CHECK",
         severity: Severity = Severity.ILLEGAL_MOVE) -> Irregularity:
    return Irregularity(
        id=ident, code=code, subtype=subtype, severity=severity, confidence=Confidence.AUTO, side=chess.WHITE,
        ply=3, edition=2023, articles=("7.5.1",), t_raised=T0 + 30, t_first_evidence=T0 + 28.5,
        evidence=(Evidence(at=T0 + 28.5, event="L e1"), Evidence(at=T0 + 29.0, event="P f1 wK"),
                  Evidence(at=T0 + 30.0, event="C W")),
        suggestion=Suggestion(text="reinstate ply 2; +2 min to Black", add_to_opponent_s=120, reinstate_ply=2),
        status=status, claim_deadline=T0 + 90, ruling="warned" if status is not Status.OPEN else None)


def game_state(*flags: Irregularity, ids: tuple[str, ...] | None = None) -> GameState:
    board = chess.Board()
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3")]
    records, _ = records_from_moves(board, moves, t0=T0)
    open_ids = ids if ids is not None else tuple(f.id for f in flags if f.status is not Status.RESOLVED)
    return dataclasses.replace(make_state(records, open_irregularities=open_ids), open_irregularity_details=flags)


def state_payload(publications: list[Publication]) -> dict[str, object]:
    (state,) = [p for p in publications if topic_kind(p.topic) == ("b12", "state")]
    assert isinstance(state.payload, dict)
    # What goes on the wire, decoded again.
    decoded = json.loads(state.payload_bytes())
    assert isinstance(decoded, dict)
    return decoded


def test_state_carries_each_unresolved_flag_as_the_irregularity_topic_does() -> None:
    acknowledged = flag("3-2", status=Status.ACKNOWLEDGED, code="CLOCK_BOUNCE", subtype=None,
                        severity=Severity.WARNING)
    state = game_state(flag("3-1"), acknowledged, flag("2-1", status=Status.RESOLVED))
    publisher = Publisher(board="b12", session=4)
    live = publisher.render([IrregularityRaised(irregularity=flag("3-1")),
                             IrregularityUpdated(irregularity=acknowledged)], state, at=T0 + 31)
    payload = state_payload(publisher.snapshot(state, at=T0 + 32))
    assert validate_payload("state", payload) == []
    assert payload["open_irregularities"] == ["3-1", "3-2"]
    embedded = payload["irregularities"]
    assert isinstance(embedded, list) and [item["id"] for item in embedded] == ["3-1", "3-2"]
    for item, publication in zip(embedded, live, strict=True):
        topic_payload = json.loads(publication.payload_bytes())
        expected = {k: v for k, v in topic_payload.items() if k not in {"v", "board", "session", "seq", "ts", "change"}}
        assert item == expected
    first = embedded[0]
    assert first["code"] == "ILLEGAL_MOVE" and first["subtype"] == "SELF_CHECK"
    assert [e["event"] for e in first["evidence"]] == ["L e1", "P f1 wK", "C W"]
    assert first["evidence"][0]["at"] == "2026-11-21T18:33:30.500Z"
    assert first["suggestion"]["add_to_opponent_s"] == 120 and first["suggestion"]["reinstate_ply"] == 2
    assert first["claim_deadline_s"] == T0 + 90
    assert embedded[1]["status"] == "acknowledged" and embedded[1]["ruling"] == "warned"


def test_state_after_a_change_carries_them_too() -> None:
    state = game_state(flag("3-1"))
    publisher = Publisher(board="b12", session=1)
    payload = state_payload(publisher.render([StateChanged(at=T0 + 31)], state, at=T0 + 31))
    assert [item["id"] for item in payload["irregularities"]] == ["3-1"]  # type: ignore[union-attr]


def test_nothing_open_is_an_empty_list() -> None:
    payload = state_payload(Publisher(board="b12", session=1).snapshot(game_state(), at=T0))
    assert payload["irregularities"] == [] and payload["open_irregularities"] == []
    assert validate_payload("state", payload) == []


def test_open_ids_without_details_leave_the_field_out() -> None:
    """An engine that does not fill the details must not look like one with nothing open."""
    state = game_state(ids=("3-1",))
    payload = state_payload(Publisher(board="b12", session=1).snapshot(state, at=T0))
    assert "irregularities" not in payload
    assert payload["open_irregularities"] == ["3-1"]
    assert validate_payload("state", payload) == []  # the field is optional


def test_validator_checks_the_field_when_present() -> None:
    valid = state_payload(Publisher(board="b12", session=1).snapshot(game_state(flag("3-1")), at=T0))
    assert validate_payload("state", valid) == []

    def problems(change: dict[str, object] | None = None, **item_change: object) -> list[str]:
        payload = copy.deepcopy(valid)
        payload.update(change or {})
        items = payload["irregularities"]
        if item_change and isinstance(items, list):
            items[0].update(item_change)
        return validate_payload("state", payload)

    assert problems({"irregularities": {"3-1": {}}}) == ["irregularities: expected a list, got dict"]
    assert problems(severity="fatal") == [
        "irregularities[0].severity: 'fatal' is not one of [\"'illegal-move'\", \"'info'\", \"'warning'\"]"]
    assert problems(status="resolved") == ["irregularities[0].status: a resolved irregularity is not open"]
    assert problems(id="9-9") == ["irregularities[0].id: '9-9' is not in open_irregularities"]
    assert problems({"open_irregularities": ["3-1", "3-1"],
                     "irregularities": valid["irregularities"] * 2}) == [  # type: ignore[operator]
        "irregularities[1].id: '3-1' listed twice"]
    evidence_problem = problems(evidence=[{"at": "yesterday", "event": "C W"}])
    assert evidence_problem == ["irregularities[0].evidence[0].at: 'yesterday' does not match "
                                "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?Z$"]
    missing = copy.deepcopy(valid)
    del missing["irregularities"][0]["code"]  # type: ignore[index]
    assert validate_payload("state", missing) == ["irregularities[0].code: missing"]
    assert problems({"irregularities": ["3-1"]}) == ["irregularities[0]: expected an object, got str"]


def test_game_state_default_keeps_older_code_working() -> None:
    state = make_state()
    assert state.open_irregularity_details == ()


def test_state_carries_the_dismissals_a_reopen_can_take_back() -> None:
    """``dismissed`` (mqtt-additions.md "Dismissals in the state"): the arbiter's dismissals a ``reopen`` can still
    take back, in full and resolved; left out when there is none (the state as before); an open one is refused."""
    dismissed = flag("2-1", status=Status.RESOLVED)
    state = dataclasses.replace(game_state(flag("3-1")), dismissed_irregularity_details=(dismissed,))
    payload = state_payload(Publisher(board="b12", session=4).snapshot(state, at=T0 + 32))
    assert validate_payload("state", payload) == []
    (item,) = payload["dismissed"]  # type: ignore[misc]
    assert item["id"] == "2-1" and item["status"] == "resolved" and item["ruling"] == "warned"
    assert "change" not in item and payload["open_irregularities"] == ["3-1"]
    plain = state_payload(Publisher(board="b12", session=4).snapshot(game_state(flag("3-1")), at=T0 + 32))
    assert "dismissed" not in plain
    wrong = copy.deepcopy(payload)
    wrong["dismissed"][0]["status"] = "open"  # type: ignore[index]
    assert validate_payload("state", wrong) == ["dismissed[0].status: a dismissal not taken back is resolved"]
