"""A game that ended while the board was out of sight (a board link outage, a daemon restart): the players played
on, then put both kings on the centre squares (the result gesture, rules-spec §3.6) before the board was seen again.

The moves played before the gesture are recovered when the board's own log shows them (DGT EEPROM); otherwise the
record carries the gap mark (for the arbiter's ``fill-gap``), as for any unexplained gap. One incident, one alert:
the ``RESULT_SIGNAL`` (the arbiter enters the result, G1) names the gap (``gap_ply``), and the gap's
``MOVES_RECOVERED`` folds under it (``incident: RESULT_SIGNAL``). Before: after a link outage the missed moves were
dropped without a gap mark; after a restart the arbiter got two alerts (the gap and the result signal).
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.events import LoggedChange
from boardd.core.outputs import GameEvent, Output
from tests.core.test_downtime_parity import Restart
from tests.core.test_link_outage_order import Outage, _games

#: Twenty plies seen, four missed, then the kings on e4 (White) and e5 (Black): a draw signalled.
SEEN, MISSED = 20, 4


def _kings_to_the_centre(r: Outage | Restart) -> None:
    """Both kings put on the centre squares by hand (whatever stood there put aside), unseen: logged."""
    target = r.board.copy(stack=False)
    for color, square in ((chess.WHITE, chess.E4), (chess.BLACK, chess.E5)):
        king = target.king(color)
        assert king is not None
        target.remove_piece_at(square)
        target.remove_piece_at(king)
        target.set_piece_at(square, chess.Piece(chess.KING, color))
    for square in chess.SQUARES:
        if r.phys[square] != target.piece_at(square):
            r.phys[square] = target.piece_at(square)
            r.log.append(LoggedChange(square=square, content=r.phys[square]))


def _alerts(outs: list[Output]) -> list[dict[str, object]]:
    """The events that ask the arbiter: a gap's or ambiguous ``MOVES_RECOVERED``, ``RESULT_SIGNAL`` (an event folded
    under another of its incident, ``incident``, is no second alert)."""
    return [dict(o.details, type=o.type) for o in outs if isinstance(o, GameEvent) and "incident" not in o.details
            and ((o.type == "MOVES_RECOVERED" and o.details.get("kind") in ("ambiguous", "gap"))
                 or o.type == "RESULT_SIGNAL")]


def _run(how: str, clock_at: str, eeprom: bool) -> tuple[Outage | Restart, list[str]]:
    fen, _, ucis = next(g for g in _games() if not g[1] and len(g[2]) > 30)
    start = chess.Board(fen)
    moves = [chess.Move.from_uci(u) for u in ucis[:SEEN + MISSED]]
    r: Outage | Restart = Outage(start, random.Random(5), clock_at) if how == "outage" else \
        Restart(start, random.Random(5))
    r.play(moves[:SEEN], seen=True)
    r.down()
    r.play(moves[SEEN:], seen=False)
    _kings_to_the_centre(r)
    r.up(eeprom=eeprom)
    r.finish()
    return r, [m.uci() for m in moves]


@pytest.mark.parametrize(("how", "clock_at"), [("outage", "own-link"), ("outage", "on-the-board"), ("outage", "none"),
                                               ("restart", "own-link")])
@pytest.mark.parametrize("eeprom", [True, False])
def test_a_game_ended_while_the_board_was_out_of_sight(how: str, clock_at: str, eeprom: bool) -> None:
    r, truth = _run(how, clock_at, eeprom)
    record = r.engine.state.moves
    assert r.strong == []
    [alert] = _alerts(r.outs)
    assert alert["type"] == "RESULT_SIGNAL" and alert["result"] == "1/2-1/2"
    if eeprom:
        # the board's log shows the moves before the gesture: recovered, no gap
        assert [m.uci for m in record] == truth
        assert [m.recovered for m in record[SEEN:]] == ["eeprom"] * MISSED
        assert "gap_ply" not in alert
        return
    # nothing tells the moves: the gap mark, one entry after the moves seen, the signal names it
    assert [m.uci for m in record] == [*truth[:SEEN], "0000"]
    gap = record[SEEN]
    assert gap.recovered == "gap" and not gap.legal
    assert alert["gap_ply"] == SEEN + 1
    [event] = [o.details for o in r.outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"]
    assert event["kind"] == "gap" and event["incident"] == "RESULT_SIGNAL" and event["from_ply"] == SEEN + 1
    assert "the game ended while the board was out of sight" in str(event["text"])
