"""Property tests of boardd.core.contract: any batch of outputs maps to valid, strictly ordered publications."""

from __future__ import annotations

import json

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from boardd.core.contract import Publisher, topic_kind, validate_payload
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Completion,
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

TIMES = st.floats(min_value=0, max_value=4e9, allow_nan=False)
SECONDS = st.none() | st.floats(min_value=0, max_value=20_000, allow_nan=False)
COLORS = st.sampled_from([chess.WHITE, chess.BLACK])
TEXT = st.text(max_size=12)

RETAIN_QOS = {"status": (True, 1), "state": (True, 1), "move": (False, 1), "irregularity": (False, 1),
              "clock": (False, 0), "pgn": (True, 1), "event": (False, 1), "cmd-result": (False, 1)}

_RECORDS, _ = records_from_moves(chess.Board(), [chess.Move.from_uci(u) for u in ("e2e4", "c7c5", "g1f3")])


@st.composite
def move_records(draw: st.DrawFn) -> MoveRecord:
    base = draw(st.sampled_from(_RECORDS))
    completed = draw(st.booleans())
    return MoveRecord(ply=base.ply, uci=base.uci, san=base.san, side=base.side, fen_after=base.fen_after,
                      made_at=draw(TIMES), completed_at=draw(TIMES) if completed else None,
                      completion=draw(st.sampled_from(list(Completion))) if completed else None,
                      clock_white=draw(SECONDS), clock_black=draw(SECONDS), emt=draw(SECONDS),
                      legal=draw(st.booleans()))


@st.composite
def irregularities(draw: st.DrawFn) -> Irregularity:
    return Irregularity(
        id=draw(st.sampled_from(["1-1", "2-1", "2-2"])), code=draw(st.sampled_from(
            ["ILLEGAL_MOVE", "CLOCK_PRESS_NO_MOVE", "SENSOR_FLICKER", "TAKEBACK_DETECTED"])),
        severity=draw(st.sampled_from(list(Severity))), confidence=draw(st.sampled_from(list(Confidence))),
        side=draw(st.none() | COLORS), ply=draw(st.integers(0, 300)), edition=draw(st.sampled_from([2009, 2023])),
        articles=tuple(draw(st.lists(TEXT, max_size=3))), t_raised=draw(TIMES), t_first_evidence=draw(TIMES),
        evidence=tuple(Evidence(at=draw(TIMES), event=draw(TEXT)) for _ in range(draw(st.integers(0, 3)))),
        subtype=draw(st.none() | TEXT),
        suggestion=Suggestion(text=draw(TEXT), add_to_opponent_s=draw(st.none() | st.integers(0, 120)),
                              remove_from_offender_s=draw(SECONDS), verify=draw(st.booleans())),
        status=draw(st.sampled_from(list(Status))), claim_deadline=draw(st.none() | TIMES),
    )


OUTPUTS: st.SearchStrategy[Output] = st.one_of(
    st.builds(MoveMade, move=move_records()),
    st.builds(MoveCompleted, move=move_records()),
    st.builds(MovesRetracted, at=TIMES, to_ply=st.integers(0, 3), reason=TEXT),
    st.builds(IrregularityRaised, irregularity=irregularities()),
    st.builds(IrregularityUpdated, irregularity=irregularities()),
    st.builds(GameEvent, at=TIMES, type=st.sampled_from(["GAME_START", "GAME_END", "BOARD_DISCONNECTED"]),
              code=st.none() | TEXT,
              details=st.dictionaries(TEXT, st.none() | st.integers() | TEXT | st.lists(st.integers(), max_size=3),
                                      max_size=4)),
    st.builds(ClockUpdate, at=TIMES, clock=st.builds(ClockState, white=SECONDS, black=SECONDS,
                                                     running=st.none() | COLORS, flag_white=st.booleans(),
                                                     flag_black=st.booleans(), model=st.none() | TEXT)),
    st.builds(LinkUpdate, at=TIMES, link=st.sampled_from(["board", "clock"]), up=st.booleans(), detail=TEXT),
    st.builds(StateChanged, at=TIMES),
)


@settings(max_examples=100, deadline=None)
@given(batches=st.lists(st.lists(OUTPUTS, max_size=8), min_size=1, max_size=5), start_seq=st.integers(0, 10**9))
def test_any_outputs_give_valid_ordered_publications(batches: list[list[Output]], start_seq: int) -> None:
    publisher = Publisher(board="t12", session=3, seq=start_seq)
    state = make_state(_RECORDS)
    last = start_seq
    for index, batch in enumerate(batches):
        publications = publisher.render(batch, state, at=1_700_000_000.0 + index)
        kinds = []
        for publication in publications:
            split = topic_kind(publication.topic)
            assert split is not None and split[0] == "t12"
            kind = split[1]
            kinds.append(kind)
            assert (publication.retain, publication.qos) == RETAIN_QOS[kind]
            if kind == "pgn":
                assert isinstance(publication.payload, str)
                continue
            payload = json.loads(publication.payload_bytes())
            assert validate_payload(kind, payload) == [], (kind, payload)
            assert payload["seq"] == last + 1
            last = payload["seq"]
        changed = any(isinstance(output, StateChanged) for output in batch)
        assert kinds.count("state") == kinds.count("pgn") == (1 if changed else 0)
        if changed:
            assert kinds[-2:] == ["state", "pgn"]
        assert len(publications) == len([o for o in batch if not isinstance(o, StateChanged)]) + 2 * changed
    assert publisher.seq == last
