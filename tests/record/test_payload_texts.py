"""Issue 12, ninth round: the ``clock`` and ``move`` payloads' JSON and the ``state``'s ``clock`` and
``illegal_moves`` objects are built in a fixed key order at render (``contract._clock_payload_text``,
``_move_payload_text``, ``_clock_object_text``), and publications through their slots (``_new_publication``).

Each is compared with what was written before: the replay line with the payload serialised by the C encoder
(``json.dumps`` with sorted keys, cleaned when not JSON-clean, the line breaks JSON leaves escaped), for
thousands of random clocks, moves and states, odd values included (None, 0.0 and -0.0, huge and tiny numbers,
non-finite times, non-ASCII text and line separators, a foreign object, a custom ``ts``). Controls: a text with
two keys swapped, one that writes a value the encoder would have cleaned, and a state whose clock text is stale
are each seen by the comparison.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Callable, Iterator

import chess
import pytest

from boardd.core import contract
from boardd.core.contract import Publication, Publisher, _dumps, _jsonable, _line_head, _new_publication
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Completion,
    GameState,
    MoveCompleted,
    MoveMade,
    MoveRecord,
)


def _reference(value: object) -> str:
    """``json.dumps`` as the publisher called it before, cleaned as ``_dumps`` cleans, line breaks escaped."""
    try:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = json.dumps(_jsonable(value), separators=(",", ":"), sort_keys=True, ensure_ascii=False,
                          allow_nan=False)
    return text.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _reference_line(publication: Publication) -> str:
    return f"{_line_head(publication.topic, publication.retain, publication.qos)}{_reference(publication.payload)}}}"


def _same_as_before(publication: Publication) -> bool:
    if publication.json is not None and publication.json != _reference(publication.payload):
        return False
    return publication.replay_line() == _reference_line(publication) and \
        publication.payload_bytes() == _reference(publication.payload).encode("utf-8")


def _number(rng: random.Random) -> float | None:
    return rng.choice([None, 0.0, -0.0, 0.0004, 0.0005, 1e-7, 3.0, 59.95, 5400.0, 1e17, 1e300, -2.5, math.inf,
                       -math.inf, math.nan, rng.uniform(0, 10_000), rng.uniform(0, 1), rng.randrange(7200) / 10])


def _text(rng: random.Random) -> str:
    return rng.choice(["dgt3000", "Chronos", "é", "丁", "a\u2028b", "q\"uote", "back\\slash", "nl\nx", "\x85", ""])


class _Foreign:
    def __repr__(self) -> str:
        return "<foreign>"


def _clock(rng: random.Random) -> ClockState:
    model: object = rng.choice([None, _text(rng), _text(rng), _Foreign()])
    return ClockState(white=_number(rng), black=_number(rng), running=rng.choice([None, chess.WHITE, chess.BLACK]),
                      flag_white=rng.random() < 0.2, flag_black=rng.random() < 0.2,
                      model=model)  # type: ignore[arg-type]


def _ts(rng: random.Random) -> Callable[[float], str]:
    """The daemon passes its own ``ts``: a plain ISO text, or any text."""
    odd = rng.choice(["", "é", "\u2028", "\"", "Z"])
    return lambda seconds: contract.iso_timestamp(seconds) + odd


def _at(rng: random.Random) -> float:
    return rng.choice([0.0, -0.0, 1795285982.125, rng.uniform(0, 1e5), math.nan, 1e20])


def _move(rng: random.Random, ply: int) -> MoveRecord:
    recovered = rng.random() < 0.1
    return MoveRecord(ply=ply, uci=rng.choice(["e2e4", "e7e8q", "0000"]), san=rng.choice(["e4", "e8=Q+", "O-O", "é"]),
                      side=rng.choice([chess.WHITE, chess.BLACK]), fen_after=chess.STARTING_FEN,
                      made_at=_at(rng), completed_at=rng.choice([None, _at(rng)]),
                      completion=rng.choice([None, *Completion]), clock_white=_number(rng),
                      clock_black=_number(rng), emt=_number(rng), legal=rng.random() < 0.8,
                      recovered="daemon restarted" if recovered else "",
                      recovered_reason="daemon restarted" if recovered else "",
                      out_of_turn=rng.random() < 0.1)


def _publications(seed: int) -> Iterator[Publication]:
    rng = random.Random(seed)
    publisher = Publisher(board=rng.choice(["t1", "board_7", "A-b"]), session=rng.randrange(3),
                          seq=rng.randrange(1000), ts=rng.choice([None, _ts(rng)]))
    for ply in range(1, 200):
        at = _at(rng)
        outputs = [ClockUpdate(at=_at(rng), clock=_clock(rng)),
                   rng.choice([MoveMade, MoveCompleted])(move=_move(rng, ply))]
        rng.shuffle(outputs)
        yield from publisher.render(outputs, None, at=at)


@pytest.mark.parametrize("seed", range(12))
def test_clock_and_move_payloads_are_written_as_before(seed: int) -> None:
    built = 0
    for publication in _publications(seed):
        assert _same_as_before(publication), publication
        built += publication.json is not None
    assert built > 100   # (most payloads take the fixed order: the comparison is not of the fallback alone)


def _state(rng: random.Random) -> GameState:
    fields = {f.name: None for f in dataclasses.fields(GameState)}
    fields.update(game_id="g", white="W", black="B", event="E", site="S", date="2026.11.29", round="1",
                  board_no=None, time_control="300+2", edition=2023, start_fen=chess.STARTING_FEN, chess960=False,
                  fen=chess.STARTING_FEN, moves=(), turn=chess.WHITE, clock=_clock(rng), result="*",
                  termination=None, open_irregularities=(), category="standard", regime="standard",
                  illegal_moves_white=rng.choice([0, 1, 2, True, 10**20]), illegal_moves_black=rng.randrange(3),
                  open_irregularity_details=(), dismissed_irregularity_details=())
    return GameState(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(6))
def test_state_clock_and_illegal_moves_are_written_as_before(seed: int) -> None:
    rng = random.Random(seed)
    publisher = Publisher(board="t1", ts=rng.choice([None, _ts(rng)]))
    for _ in range(300):
        state_pub, pgn_pub = publisher.snapshot(_state(rng), at=_at(rng))
        assert _same_as_before(state_pub)
        assert pgn_pub.replay_line() == _reference_line(pgn_pub)


def test_control_swapped_keys_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    original = contract._clock_payload_text

    def swapped(payload: dict[str, object]) -> str | None:
        text = original(payload)
        return None if text is None else text.replace('"black":', '"BLACK":').replace('"white":', '"black":') \
            .replace('"BLACK":', '"white":')
    monkeypatch.setattr(contract, "_clock_payload_text", swapped)
    assert not all(_same_as_before(publication) for publication in _publications(0))


def test_control_a_value_the_encoder_cleans_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    # a fragment that writes what json.dumps(allow_nan=True) or repr would, instead of refusing
    def lenient(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, default=repr)
    monkeypatch.setattr(contract, "_fragment", lenient)
    assert not all(_same_as_before(publication) for publication in _publications(1))


def test_control_a_stale_state_clock_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    first: list[str] = []

    def stale(clock: dict[str, object]) -> str:
        first.append(first[0] if first else contract._fragment(clock))
        return first[-1]
    monkeypatch.setattr(contract, "_clock_object_text", stale)
    rng = random.Random(3)
    publisher = Publisher(board="t1")
    assert not all(_same_as_before(publisher.snapshot(_state(rng), at=float(n))[0]) for n in range(20))


def test_publications_through_their_slots_equal_the_constructor() -> None:
    for args in [("boardd/t1/clock", {"a": 1}, False, 0, "{\"a\":1}"), ("boardd/t1/pgn", "1. e4 *\n", True, 1, None)]:
        fast, slow = _new_publication(*args), Publication(*args)
        assert type(fast) is Publication
        assert fast == slow and hash(fast.topic) == hash(slow.topic) and repr(fast) == repr(slow)
        assert fast.json == slow.json and fast.replay_line() == slow.replay_line()
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.topic = "x"  # type: ignore[misc]
    assert _dumps({"b": 1, "a": [2]}) == '{"a":[2],"b":1}'
