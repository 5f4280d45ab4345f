"""The publisher's texts, built from kept parts (issue 12, branch render2), equal their reference definitions.

* Every publication of simulated engine games (every handling profile, injected irregularities, Chess960):
  its ``replay_line`` and ``payload_bytes`` are what ``json.dumps`` of the payload writes (the encoder built once,
  the key order kept per set of keys, the ``state`` joined from fragments, must not change a byte).
* :func:`iso_timestamp`, which formats each whole second once, equals its definition (the millisecond moment
  through ``datetime``) at the edges of the seconds, before 1970 and at the clamped ends of the range.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random

import chess
import pytest

from boardd.core.contract import Publication, Publisher, iso_timestamp
from boardd.core.engine import Engine
from boardd.core.events import GameInfo, NewGame
from boardd.core.outputs import Output
from drivers.sim import PROFILES, InjectionKind, SimulationError, random_game, seeded_injection, simulate_game
from tests.record.factories import make_state, records_from_moves

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _reference_timestamp(seconds: float) -> str:
    """The definition: the moment rounded down to the millisecond, clamped to years 1..9999."""
    if not math.isfinite(seconds):
        seconds = 0.0
    millis = math.floor(seconds * 1000 + 1e-6)
    try:
        moment = _EPOCH + dt.timedelta(milliseconds=millis)
    except OverflowError:
        moment = dt.datetime.max.replace(tzinfo=dt.UTC) if millis > 0 else dt.datetime.min.replace(tzinfo=dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _reference_dumps(value: object) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _check(publication: Publication) -> None:
    payload = _reference_dumps(publication.payload)
    assert publication.replay_line() == (
        f'{{"topic":{_reference_dumps(publication.topic)},"retain":{_reference_dumps(publication.retain)},'
        f'"qos":{publication.qos},"payload":{payload}}}')
    if isinstance(publication.payload, str):
        assert publication.payload_bytes() == publication.payload.encode()
    else:
        assert publication.payload_bytes() == payload.encode()


_EDGES = [0.0, -0.0, 0.3, 0.999, 0.9995, 0.99999999, 1.0, -0.0005, -0.001, -1.0, -1.0001, -59.9999, 1e-7,
          1_795_285_982.125, 1_795_285_982.9999999, 1_795_285_982.0009, 86_399.9999, 86_400.0,
          253_402_300_799.999, 253_402_300_799.9999, 253_402_300_800.0, 1e12, 1e20,
          -62_135_596_800.0, -62_135_596_800.001, -62_135_596_799.9995, -1e12, -1e20,
          float("nan"), float("inf"), -float("inf")]


def test_iso_timestamp_equals_its_definition() -> None:
    rng = random.Random(12)
    values = _EDGES + [rng.uniform(-1e11, 3e11) for _ in range(20_000)] \
        + [rng.uniform(-5.0, 5.0) for _ in range(20_000)] + [round(rng.uniform(0, 2e9), 3) for _ in range(20_000)]
    for value in values:
        assert iso_timestamp(value) == _reference_timestamp(value), value


def test_iso_timestamp_of_clamped_moments() -> None:
    assert iso_timestamp(1e20) == "9999-12-31T23:59:59.999Z"
    assert iso_timestamp(-1e20) == _reference_timestamp(-1e20)
    assert iso_timestamp(-1e20).endswith(".000Z")
    # the same whole second, once clamped: the milliseconds of the clamp, not of the moment
    assert iso_timestamp(253_402_300_800.5) == "9999-12-31T23:59:59.999Z"


def _publish(engine: Engine, publisher: Publisher, outputs: list[Output], at: float) -> int:
    publications = publisher.render(outputs, engine.state, at=at)
    for publication in publications:
        _check(publication)
    return len(publications)


@pytest.mark.parametrize("kind", [None, *InjectionKind])
def test_every_publication_of_engine_games_is_its_json(kind: InjectionKind | None) -> None:
    checked = 0
    for index, profile in enumerate(PROFILES):
        seed = 11 * index + len(str(kind))
        chess960 = index == 1
        game = random_game(seed, max_plies=70, chess960=chess960)
        try:
            sim = simulate_game(game, seed=seed, profile=profile, injections=seeded_injection(kind, game, seed))
        except SimulationError:
            continue
        engine = Engine()
        publisher = Publisher(board="t7", ts=iso_timestamp)
        first = sim.events[0].at if sim.events else 0.0
        for publication in [*publisher.snapshot(engine.state, at=first)]:
            _check(publication)
        for event in sim.events:
            while (deadline := engine.next_deadline()) is not None and deadline < event.at:
                checked += _publish(engine, publisher, engine.advance(deadline), deadline)
            checked += _publish(engine, publisher, engine.feed(event), event.at)
        while (deadline := engine.next_deadline()) is not None:
            checked += _publish(engine, publisher, engine.advance(deadline), deadline)
        # a new game on the same publisher: the kept texts of the last one must not leak into it
        later = (sim.events[-1].at if sim.events else first) + 5.0
        checked += _publish(engine, publisher, engine.feed(NewGame(at=later, game=GameInfo(id="next", white="A"))),
                            later)
    assert checked > 200


def test_pgn_json_of_odd_names() -> None:
    # the line-by-line join of the escaped PGN (line breaks, quotes, backslashes and non-ASCII in the tags, a long
    # tag) gives json.dumps of the PGN text
    board = chess.Board()
    records, _ = records_from_moves(board, [chess.Move.from_uci(uci) for uci in ("e2e4", "e7e5", "g1f3")])
    publisher = Publisher(board="t7")
    states = [make_state(records, white='Q "uote" \\ back\u2028slash', black="丁立人\x85", event="a\nb"),
              make_state(records[:1], white="x" * 200)]
    for state in states:
        for publication in publisher.snapshot(state, at=5.0):
            _check(publication)
        pgn = publisher.snapshot(state, at=6.0)[1]
        assert isinstance(pgn.payload, str) and pgn.payload.endswith("\n")
        assert json.loads(pgn.replay_line())["payload"] == pgn.payload
