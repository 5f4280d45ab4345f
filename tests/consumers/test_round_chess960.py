"""A Chess960 round from the round import: every game from the same start array (``boardd round import
--chess960 N|FEN``), the boards' ``new-game`` taking it as a Chess960 game (docs/tournament.md)."""

from __future__ import annotations

import json

import chess
import pytest

from boardd.consumers.round import BoardsMap, chess960_start, plan_round
from boardd.core import events as ev
from boardd.core.errors import ConfigError
from boardd.core.tournament import Pairing, Player, RoundFile
from boardd.daemon.commands import parse_command

ROUND = RoundFile(round=3, games=tuple(Pairing(board_no=n, white=Player(name=f"W{n}"), black=Player(name=f"B{n}"))
                                      for n in (1, 2, 3)))


@pytest.mark.parametrize("given", ["357", "0", "959", "518", chess.Board.from_chess960_pos(123).fen(shredder=True)])
def test_every_game_of_the_round_starts_from_the_given_chess960_array(given: str) -> None:
    fen = chess960_start(given)
    n = int(given) if given.isdigit() else 123
    plans = plan_round(ROUND, BoardsMap.parse("t{n}", []), start_fen=fen)
    for plan in plans:
        assert plan.command["start_fen"] == fen and plan.command["variant"] == "chess960"
        # the board's command parser (a board configured for standard chess) takes it as that Chess960 game
        cmd = parse_command("new-game", json.dumps(plan.command).encode(), at=1.0, defaults=ev.GameInfo()).event
        assert isinstance(cmd, ev.NewGame) and cmd.game.chess960 and cmd.game.start_fen == fen
        assert chess.Board(cmd.game.start_fen, chess960=True).chess960_pos() == n


def test_without_the_option_the_boards_keep_their_variant() -> None:
    plans = plan_round(ROUND, BoardsMap.parse("t{n}", []))
    assert all("start_fen" not in p.command and "variant" not in p.command for p in plans)


@pytest.mark.parametrize("bad", ["960", "-1", "not a fen", "8/8/8/8/8/8/8/8 w - - 0 1"])
def test_a_bad_chess960_position_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError):
        chess960_start(bad)
