"""Command parsing: every kind, strict validation, tokens."""

from __future__ import annotations

import json

import pytest

from boardd.core import events as ev
from boardd.daemon.commands import COMMAND_NAMES, CommandError, command_id_of, parse_command
from boardd.daemon.config import COMMAND_ROLES, CommandsConfig

DEFAULTS = ev.GameInfo(event="Open", site="Here", round="1", board_no=4, time_control="900+10", edition=2018)


def parse(name: str, obj: object, **kw: object) -> ev.ArbiterCommand:
    return parse_command(name, json.dumps(obj).encode(), at=12.5, defaults=DEFAULTS, **kw).event  # type: ignore[arg-type]


def test_every_kind() -> None:
    assert set(COMMAND_NAMES) == {"new-game", "set-players", "ack", "resolve", "reopen", "reinstate", "set-clock",
                                  "set-result", "flip", "fill-gap"}
    fill = parse("fill-gap", {"id": "g1", "ply": 23, "moves": ["Nf3", "e7e5"]})
    assert fill == ev.FillGap(at=12.5, ply=23, moves=("Nf3", "e7e5"))
    for bad in ({"id": "g2", "ply": 0, "moves": ["e4"]}, {"id": "g3", "ply": 3, "moves": []},
                {"id": "g4", "ply": 3, "moves": "e4"}, {"id": "g5", "ply": 3, "moves": ["e4\n"]}):
        with pytest.raises(CommandError):
            parse("fill-gap", bad)
    ng = parse("new-game", {"id": "c1", "white": "Carlsen", "black": "Nakamura", "round": 5, "board_no": 1})
    assert isinstance(ng, ev.NewGame) and ng.at == 12.5
    assert (ng.game.white, ng.game.black, ng.game.round, ng.game.board_no) == ("Carlsen", "Nakamura", "5", 1)
    assert (ng.game.event, ng.game.time_control, ng.game.edition) == ("Open", "900+10", 2018)
    fen = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1"
    ng960 = parse("new-game", {"id": "c2", "start_fen": fen, "chess960": True, "edition": 2023,
                               "time_control": "180+2"})
    assert isinstance(ng960, ev.NewGame) and ng960.game.start_fen == fen and ng960.game.chess960
    assert ng960.game.edition == 2023 and ng960.game.time_control == "180+2"
    assert parse("set-players", {"id": "c", "white": "A", "black": "B"}) == ev.SetPlayers(at=12.5, white="A",
                                                                                           black="B")
    assert parse("ack", {"id": "c", "irregularity": "7-1"}) == ev.Acknowledge(at=12.5, irregularity_id="7-1")
    assert parse("resolve", {"id": "c", "irregularity": "7-1", "ruling": "2 min added", "accept": False}) == \
        ev.Resolve(at=12.5, irregularity_id="7-1", ruling="2 min added", accept=False)
    assert parse("reopen", {"id": "c", "irregularity": "7-1"}) == ev.Reopen(at=12.5, irregularity_id="7-1")
    assert parse("reinstate", {"id": "c", "ply": 14}) == ev.Reinstate(at=12.5, ply=14)
    assert parse("set-clock", {"id": "c", "white": 300, "black": 280.5, "moves_white": 20}) == \
        ev.SetClock(at=12.5, white=300.0, black=280.5, moves_white=20)
    assert parse("set-result", {"id": "c", "result": "0-1", "termination": "resignation"}) == \
        ev.SetResult(at=12.5, result="0-1", termination="resignation")
    assert parse("flip", {"id": "c"}) == ev.SetOrientation(at=12.5, white_at_a1=False)
    assert parse("flip", {"id": "c"}, white_at_a1=False) == ev.SetOrientation(at=12.5, white_at_a1=True)
    assert parse("flip", {"id": "c", "white_at_a1": True}) == ev.SetOrientation(at=12.5, white_at_a1=True)


@pytest.mark.parametrize(("name", "payload", "fragment", "cid"), [
    ("ack", b"{not json", "not JSON", ""),
    ("ack", b"[1, 2]", "JSON object", ""),
    ("ack", b'{"irregularity": "1-1"}', "'id' is required", ""),
    ("ack", b'{"id": 5, "irregularity": "1-1"}', "'id' is required", ""),
    ("explode", b'{"id": "c9"}', "unknown command", "c9"),
    ("ack", b'{"id": "c9"}', "'irregularity' is required", "c9"),
    ("ack", b'{"id": "c9", "irregularity": "1-1", "extra": 1}', "unknown field(s) extra", "c9"),
    ("reopen", b'{"id": "c9"}', "'irregularity' is required", "c9"),
    ("reopen", b'{"id": "c9", "irregularity": ""}', "must not be empty", "c9"),
    ("reopen", b'{"id": "c9", "irregularity": 7}', "must be a string", "c9"),
    ("reopen", b'{"id": "c9", "irregularity": "7-1", "accept": false}', "unknown field(s) accept", "c9"),
    ("reinstate", b'{"id": "c9", "ply": -1}', "ply", "c9"),
    ("reinstate", b'{"id": "c9", "ply": "3"}', "ply", "c9"),
    ("reinstate", b'{"id": "c9", "ply": true}', "ply", "c9"),
    ("set-clock", b'{"id": "c9", "white": -5, "black": 10}', "white", "c9"),
    ("set-clock", b'{"id": "c9", "white": 5}', "'black' is required", "c9"),
    ("set-result", b'{"id": "c9", "result": "2-0"}', "result", "c9"),
    ("set-players", b'{"id": "c9", "white": "A\\u0000", "black": "B"}', "printable", "c9"),
    ("set-players", b'{"id": "c9", "white": 1, "black": "B"}', "string", "c9"),
    ("new-game", b'{"id": "c9", "edition": 2017}', "edition", "c9"),
    ("new-game", b'{"id": "c9", "start_fen": "xx"}', "FEN", "c9"),
    ("new-game", b'{"id": "c9", "time_control": "forever"}', "TimeControl", "c9"),
    ("flip", b'{"id": "c9", "white_at_a1": "yes"}', "true or false", "c9"),
])
def test_rejections(name: str, payload: bytes, fragment: str, cid: str) -> None:
    with pytest.raises(CommandError) as info:
        parse_command(name, payload, at=1.0, defaults=DEFAULTS)
    assert fragment in str(info.value)
    assert info.value.command_id == cid


def test_tokens() -> None:
    auth = CommandsConfig(tokens={"arbiter": "arbiter-secret", "operator": "operator-secret"})
    ok = parse_command("ack", b'{"id": "a", "irregularity": "1-1", "token": "arbiter-secret"}', at=0, auth=auth)
    assert ok.role == "arbiter"
    with pytest.raises(CommandError, match="not authorised"):
        parse_command("ack", b'{"id": "a", "irregularity": "1-1"}', at=0, auth=auth)
    with pytest.raises(CommandError, match="not authorised"):
        parse_command("ack", b'{"id": "a", "irregularity": "1-1", "token": "nope"}', at=0, auth=auth)
    with pytest.raises(CommandError, match="role 'operator' may not send 'set-result'"):
        parse_command("set-result", b'{"id": "a", "result": "1-0", "token": "operator-secret"}', at=0, auth=auth)
    op = parse_command("flip", b'{"id": "a", "token": "operator-secret"}', at=0, auth=auth)
    assert op.role == "operator"


def test_the_arbiter_role_may_send_every_command() -> None:
    """With tokens configured, a command no role may send is a command nobody can send (fill-gap was one)."""
    assert set(COMMAND_NAMES) - COMMAND_ROLES["arbiter"] == set()
    auth = CommandsConfig(tokens={"arbiter": "arbiter-secret", "operator": "operator-secret"})
    fill = parse_command("fill-gap", b'{"id": "g", "ply": 12, "moves": ["e4"], "token": "arbiter-secret"}',
                         at=0, auth=auth)
    assert fill.role == "arbiter"
    with pytest.raises(CommandError, match="role 'operator' may not send 'fill-gap'"):
        parse_command("fill-gap", b'{"id": "g", "ply": 12, "moves": ["e4"], "token": "operator-secret"}',
                      at=0, auth=auth)


def test_command_id_of() -> None:
    assert command_id_of(b'{"id": "abc"}') == "abc"
    assert command_id_of(b"garbage") == ""
    assert command_id_of(b'{"id": 3}') == ""


@pytest.mark.parametrize("fields", [{"variant": "chess960"}, {"chess960": True}, {}],
                         ids=["variant chess960", "chess960 true", "the board's configured variant"])
@pytest.mark.parametrize("n", [0, 518, 959, 357])
def test_new_game_takes_a_chess960_start_position_however_it_says_chess960(n: int, fields: dict[str, object]) -> None:
    """A Chess960 game started from the position the arbiter (or the round) gives: the X-FEN of any of the 960
    arrays, with KQkq or the Shredder-FEN rook files (HAha). The variant may be said by `variant` (as
    docs/mqtt-additions.md documents it), by `chess960`, or by the board's configuration (`variant = "chess960"`).
    Before, the FEN was checked as a standard position unless `chess960` was true: `variant: chess960` with the
    start array of most arrays was refused ('BAD_CASTLING_RIGHTS'), and so was every new-game without the field
    on a board configured for Chess960."""
    import chess

    board = chess.Board.from_chess960_pos(n)
    defaults = ev.GameInfo(variant="chess960", chess960=True) if not fields else DEFAULTS
    for fen in (board.fen(), board.fen(shredder=True)):
        ng = parse_command("new-game", json.dumps({"id": "c", "start_fen": fen, **fields}).encode(), at=1.0,
                           defaults=defaults).event
        assert isinstance(ng, ev.NewGame)
        assert ng.game.start_fen == fen and ng.game.chess960 and ng.game.effective_variant == "chess960"
        assert chess.Board(ng.game.start_fen, chess960=True).chess960_pos() == n


@pytest.mark.parametrize("fields", [{"variant": "auto"}, {}], ids=["variant auto", "the board's configured auto"])
@pytest.mark.parametrize("n", [0, 959, 357, 518])
def test_new_game_with_variant_auto_reads_a_chess960_start_position_as_one(n: int, fields: dict[str, object]) -> None:
    """`variant: auto` (said, or the board's configuration) accepts a Chess960 start array on the board: it must
    accept one given as the `start_fen` too. Before, the FEN was checked as standard chess: refused
    ('BAD_CASTLING_RIGHTS') for every array but the standard one. The standard array (518) stays a standard game."""
    import chess

    board = chess.Board.from_chess960_pos(n)
    defaults = ev.GameInfo(variant="auto") if not fields else DEFAULTS
    for fen in (board.fen(), board.fen(shredder=True)):
        ng = parse_command("new-game", json.dumps({"id": "c", "start_fen": fen, **fields}).encode(), at=1.0,
                           defaults=defaults).event
        assert isinstance(ng, ev.NewGame)
        assert ng.game.start_fen == fen and ng.game.effective_variant == "auto"
        assert ng.game.chess960 is (n != 518)
        assert chess.Board(fen, chess960=True).chess960_pos() == n


def test_new_game_with_variant_auto_keeps_standard_positions_and_refuses_nonsense() -> None:
    import chess

    standard = chess.Board()
    standard.push_uci("e2e4")
    ng = parse("new-game", {"id": "c", "variant": "auto", "start_fen": standard.fen()})
    assert isinstance(ng, ev.NewGame) and not ng.game.chess960
    # a Chess960 position later in the game (castling rights of rooks standard chess cannot castle with)
    later = chess.Board.from_chess960_pos(0)
    later.push_uci("e2e4")
    ng = parse("new-game", {"id": "c", "variant": "auto", "start_fen": later.fen(shredder=True)})
    assert isinstance(ng, ev.NewGame) and ng.game.chess960
    # `chess960: false` said: standard chess, the array refused as before
    with pytest.raises(CommandError, match="not a legal position"):
        parse("new-game", {"id": "c", "variant": "auto", "chess960": False,
                           "start_fen": chess.Board.from_chess960_pos(0).fen()})
    with pytest.raises(CommandError, match="not a legal position"):
        parse("new-game", {"id": "c", "variant": "auto", "start_fen": "8/8/8/8/8/8/8/8 w - - 0 1"})
