"""boardd replay end to end on simulated games (drivers.sim): the record, every payload, the PGN."""

from __future__ import annotations

import io
import json
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.contract import Publication, topic_kind, validate_payload
from boardd.core.eventlog import read_events, read_header, write_events
from boardd.daemon.replay import Replay
from drivers.sim import load_pgn_game, random_game, simulate_game


def replay_log(text: str) -> tuple[Replay, list[Publication]]:
    lines = text.splitlines()
    replay = Replay(read_header(lines))
    publications = list(replay.run(read_events(lines)))
    return replay, publications


def check_publications(publications: list[Publication]) -> dict[str, int]:
    """Every JSON payload is valid, seq strictly increases; returns counts per topic kind."""
    counts: dict[str, int] = {}
    last_seq = 0
    for publication in publications:
        split = topic_kind(publication.topic)
        assert split is not None
        kind = split[1]
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "pgn":
            continue
        payload = json.loads(publication.payload_bytes())
        assert validate_payload(kind, payload) == [], (kind, payload)
        assert payload["seq"] > last_seq
        last_seq = payload["seq"]
    return counts


@pytest.mark.parametrize(("name", "index", "plies"), [
    ("molinari-bordais-1979.pgn", 0, None),
    ("cutechess-fischerrandom.pgn", 1, 60),    # Chess960 with castling
    ("tatamast22.pgn", 5, 80),
])
def test_simulated_pgn_game_replays_to_its_record(pgn_dir: Path, name: str, index: int, plies: int | None) -> None:
    source = load_pgn_game(pgn_dir / name, index + 1)
    sim = simulate_game(source, seed=11, profile="casual", max_plies=plies)
    buffer = io.StringIO()
    write_events(buffer, sim.events, sim.header)
    replay, publications = replay_log(buffer.getvalue())
    assert replay.stats.bad_lines == 0
    assert replay.stats.failed_events == 0

    counts = check_publications(publications)
    assert counts["move"] == 2 * len(sim.moves)          # made + completed, every move
    state = replay.engine.state
    assert [m.uci for m in state.moves] == sim.moves

    # The last pgn publication is the game, with a clock after every completed move.
    pgn_text = next(p.payload for p in reversed(publications) if p.topic.endswith("/pgn"))
    assert isinstance(pgn_text, str)
    game = chess.pgn.read_game(io.StringIO(pgn_text))
    assert game is not None
    assert game.errors == []
    assert [m.uci() for m in game.mainline_moves()] == [m.uci() for m in list(source.mainline_moves())[:len(sim.moves)]]
    assert game.board().chess960 == source.board().chess960
    clocks = [node.clock() for node in game.mainline()]
    assert all(clock is not None for clock in clocks)


def test_random_game_with_clumsy_handling() -> None:
    sim = simulate_game(random_game(5, max_plies=60), seed=5, profile="clumsy")
    buffer = io.StringIO()
    write_events(buffer, sim.events, sim.header)
    replay, publications = replay_log(buffer.getvalue())
    check_publications(publications)
    assert [m.uci for m in replay.engine.state.moves] == sim.moves
