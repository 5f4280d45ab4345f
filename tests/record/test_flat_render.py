"""Issue 12, per-move costs that grew with the game: each fast path against what it replaced.

* ``contract._Fragments`` keeps a JSON array in blocks (no copy of the whole array per item or per state): its
  parts joined are ``json.dumps`` of the items, through appends and truncations across block boundaries.
* ``boardd replay`` writes a long payload apart from its line's start and end: the bytes are those of
  ``replay_line()`` and a newline, short or long, ASCII or not.
* ``Engine.state`` builds :class:`GameState` through its slots and picks the open findings by identity: equal
  (fields, type, hash, repr) to the state built as before, by keywords, at every step of simulated games with
  every injection kind.
"""

from __future__ import annotations

import io
import json
import random

import chess
import pytest

from boardd.core.contract import Publication, Publisher, _Fragments
from boardd.core.engine import Engine, facade
from boardd.core.engine.common import _fen
from boardd.core.engine.facade import _GAME_STATE_FIELDS
from boardd.core.outputs import GameState, Status
from boardd.daemon import replay
from drivers.sim import (
    PROFILES,
    InjectionKind,
    SimulationError,
    random_game,
    seeded_injection,
    simulate_game,
)


def _dumps(items: list[object]) -> str:
    """The array as the publisher writes JSON: compact, UTF-8, the line breaks that JSON leaves escaped."""
    text = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
    return text.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


@pytest.mark.parametrize("seed", range(8))
def test_fragments_in_blocks_equal_the_array(seed: int) -> None:
    rng = random.Random(seed)
    fragments = _Fragments()
    items: list[object] = []
    checked = 0
    for _ in range(600):
        roll = rng.random()
        if roll < 0.04 and items:   # back to any length, often to a block's edge or just past it
            keep = rng.choice([rng.randrange(len(items) + 1), len(items) - rng.randrange(1, 40),
                               len(items) // 32 * 32, len(items) // 32 * 32 + 1, len(items) // 32 * 32 - 1])
            keep = max(0, min(keep, len(items)))
            del items[keep:]
            fragments.truncate(keep)
        else:
            item: object = rng.choice(["e2e4", "Nf3", "O-O-O", "丁", "a\u2028b", rng.randrange(500)])
            items.append(item)
            fragments.append(item)
        assert len(fragments) == len(items)
        assert "".join(fragments.parts()) == fragments.array() == _dumps(items)
        checked += len(items) >= 64
    assert checked > 50


def test_fragments_control_a_stale_block_is_seen() -> None:
    # the comparison sees a truncation that keeps a block it cut into
    fragments = _Fragments()
    for ply in range(70):
        fragments.append(ply)
    del fragments.items[40:]   # (the blocks left as they were: the second, items 32..63, is stale)
    assert "".join(fragments.parts()) != _dumps(list(range(40)))


@pytest.mark.parametrize("size", [0, 10, 2047, 2048, 2049, 30_000])
def test_replay_writes_the_line_of_every_publication(size: int) -> None:
    publisher = Publisher(board="t1")
    body = {"text": "é\u2028" + "x" * size, "n": size}
    publications = [publisher._publication("event", body, at=5.0, raw={"text": json.dumps(body["text"],
                                                                                      ensure_ascii=False)}),
                    publisher._publication("clock", {"white": 1.5, "black": None}, at=6.0),
                    Publication(topic="boardd/t1/pgn", payload="1. e4 *\n" + "y" * size, retain=True, qos=1)]
    for publication in publications:
        out = io.BytesIO()
        replay._write_publication(out, publication)
        assert out.getvalue() == (publication.replay_line() + "\n").encode("utf-8")


def _reference_state(engine: Engine) -> GameState:
    """``Engine.state`` as it was built before (keywords, the open findings by ``not in``)."""
    hidden = engine.correction.unpublished_from()
    game = engine.g
    g = game.game
    records = game.records if hidden is None else game.records[:hidden - 1]
    fen = _fen(game.board) if hidden is None else game.fen_before(hidden)
    open_details = tuple(irr for irr in game.irr.values() if irr.status not in (Status.RESOLVED, Status.NOTED))
    return GameState(
        game_id=g.id, white=g.white, black=g.black, event=g.event, site=g.site, date=g.date,
        round=g.round, board_no=g.board_no, time_control=g.time_control, edition=g.edition,
        start_fen=game.start_fen, chess960=g.chess960, fen=fen,
        moves=tuple(records), turn=game.board.turn if hidden is None else fen.split(" ")[1] == "w",
        clock=game.clock, result=game.result, termination=game.termination,
        open_irregularities=tuple(irr.id for irr in open_details), open_irregularity_details=open_details,
        illegal_moves_white=engine.findings.count(chess.WHITE), illegal_moves_black=engine.findings.count(chess.BLACK),
        category=game.category, regime=game.regime, dismissed_irregularity_details=engine.dismissals.retractable())


def _same(state: GameState, reference: GameState) -> None:
    assert type(state) is GameState
    assert state == reference
    assert repr(state) == repr(reference)
    for name in _GAME_STATE_FIELDS:
        assert getattr(state, name) is getattr(reference, name) or getattr(state, name) == getattr(reference, name)


@pytest.mark.parametrize("kind", [None, *InjectionKind])
def test_engine_state_equals_the_state_built_by_keywords(kind: InjectionKind | None) -> None:
    checked = 0
    for index, profile in enumerate(PROFILES):
        seed = 11 * index + len(str(kind))
        game = random_game(seed, max_plies=50)
        try:
            sim = simulate_game(game, seed=seed, profile=profile, injections=seeded_injection(kind, game, seed))
        except SimulationError:
            continue
        engine = Engine()
        for event in sim.events:
            while (deadline := engine.next_deadline()) is not None and deadline < event.at:
                engine.advance(deadline)
            engine.feed(event)
            _same(engine.state, _reference_state(engine))
            checked += 1
        while (deadline := engine.next_deadline()) is not None:
            engine.advance(deadline)
        _same(engine.state, _reference_state(engine))
    assert checked > 100


def test_engine_state_control_swapped_fields_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    # the comparison sees a builder that swaps two fields of one type (the start FEN and the FEN)
    build = facade._game_state

    def swapped(*values: object) -> GameState:
        values_ = list(values)
        values_[10], values_[12] = values_[12], values_[10]
        return build(*values_)

    monkeypatch.setattr(facade, "_game_state", swapped)
    sim = simulate_game(random_game(3, max_plies=10), seed=3, profile=PROFILES[0])
    engine = Engine()
    seen = 0
    for event in sim.events:
        engine.feed(event)
        try:
            _same(engine.state, _reference_state(engine))
        except AssertionError:
            seen += 1
    assert seen > 0
