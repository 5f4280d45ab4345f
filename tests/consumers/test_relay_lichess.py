"""lichess-ready relay output: FIDE ids from the round roster, 64 games per lichess round."""

from __future__ import annotations

import json
from pathlib import Path

from boardd.consumers.relay import LICHESS_MAX_GAMES, Hall, MqttSettings, Relay, RelayConfig
from tests.consumers.feed import Feed, load_games, read_pgn_games, script

PREFIX = "hall1"


def roster(round_no: int, games: list[tuple[int, str, str, str, str, int]]) -> bytes:
    """A roster as boardd round import publishes it; Black's FIDE id is White's + 1."""
    entries = [{"board_no": no, "board": board,
                "white": {"name": white, "fide_id": wid, "rating": 2500, "title": "GM"},
                "black": {"name": black, "fide_id": str(int(wid) + 1), "rating": elo, "title": None}}
               for no, board, white, black, wid, elo in games]
    return json.dumps({"v": 1, "round": round_no, "event": "Open", "games": entries}).encode()


def test_fide_ids_from_the_round_roster_when_the_game_is_the_rosters(pgn_dir: Path) -> None:
    (real,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    g = script(real, board="t1", board_no=1, round_no=3, seed=1, max_plies=6)
    hall = Hall(prefix=PREFIX)
    for step in Feed(g, prefix=PREFIX).publications(upto=6):
        for topic, payload, _, _ in step:
            hall.handle(topic, payload)
    (before,) = read_pgn_games(hall.round_pgn(3))
    assert "WhiteFideId" not in before.headers
    update = hall.handle(f"{PREFIX}/_round/3", roster(3, [(1, "t1", g.white, g.black, "1503014", 2700)]))
    assert update is not None and update.record_changed
    (after,) = read_pgn_games(hall.round_pgn(3))
    assert not after.errors
    assert (after.headers["WhiteFideId"], after.headers["BlackFideId"]) == ("1503014", "1503015")
    assert (after.headers["WhiteElo"], after.headers["BlackElo"], after.headers["WhiteTitle"]) == ("2500", "2700",
                                                                                                  "GM")
    assert "BlackTitle" not in after.headers
    for tag in ("Event", "Round", "White", "Black"):
        assert after.headers[tag] not in ("", "?")
    # a roster of other players (the board shows another game): no ids, never the wrong ones
    hall.handle(f"{PREFIX}/_round/3", roster(3, [(1, "t1", "Someone, Else", g.black, "999", 2700)]))
    (other,) = read_pgn_games(hall.round_pgn(3))
    assert "WhiteFideId" not in other.headers and "BlackFideId" not in other.headers
    # a roster of another round does not apply; a cleared roster removes the ids; junk is counted
    hall.handle(f"{PREFIX}/_round/4", roster(4, [(1, "t1", g.white, g.black, "1503014", 2700)]))
    assert "WhiteFideId" not in read_pgn_games(hall.round_pgn(3))[0].headers
    hall.handle(f"{PREFIX}/_round/3", roster(3, [(1, "t1", g.white, g.black, "1503014", 2700)]))
    assert "WhiteFideId" in read_pgn_games(hall.round_pgn(3))[0].headers
    hall.handle(f"{PREFIX}/_round/3", b"")
    assert "WhiteFideId" not in read_pgn_games(hall.round_pgn(3))[0].headers
    assert hall.handle(f"{PREFIX}/_round/3", b"{not json") is None and hall.rejected == 1
    assert "_round" not in hall.boards


def test_a_hundred_board_round_is_split_over_two_lichess_rounds(pgn_dir: Path) -> None:
    config = RelayConfig(mqtt=MqttSettings(prefix=PREFIX), http_port=None, lichess_token="secret",
                         lichess_rounds={6: "aaaa1111, bbbb2222", 7: "cccc3333"})
    relay = Relay(config)
    assert relay.pushers[6].url.endswith("/round/aaaa1111/push")
    assert relay.more_pushers[(6, 1)].url.endswith("/round/bbbb2222/push")
    (real,) = load_games(pgn_dir / "tatamast22.pgn", 1)
    for n in range(100):
        for round_no in (6, 7):
            g = script(real, board=f"r{round_no}b{n}", board_no=n + 1, round_no=round_no, seed=n, max_plies=2)
            for step in Feed(g, prefix=PREFIX).publications(upto=2):
                for topic, payload, _, _ in step:
                    relay.take(topic, payload)
    first = read_pgn_games(relay.pushers[6].source())
    second = read_pgn_games(relay.more_pushers[(6, 1)].source())
    assert LICHESS_MAX_GAMES == 64
    assert [int(g.headers["Board"]) for g in first] == list(range(1, 65))
    assert [int(g.headers["Board"]) for g in second] == list(range(65, 101))
    assert all(not g.errors for g in first + second)
    # one round id for round 7: boards 65-100 are not pushed, and the log says so (checked in text)
    only = read_pgn_games(relay.pushers[7].source())
    assert len(only) == 64 and 7 in relay._truncation_logged and 6 not in relay._truncation_logged
