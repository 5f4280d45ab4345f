"""The PGN comment on a recovered move says what made it missed: a restart, the board link lost, lost updates.

``GAP_TEXT`` already told a gap after a restart from one after the board link was down; the comment on the moves
recovered (``{recovered after downtime (search)}``) said "downtime" whatever happened, although the daemon ran
throughout a link outage. Now both come from the incident's ``MOVES_RECOVERED`` reason, kept on the record
(``MoveRecord.recovered_reason``); a restart keeps its wording.
"""

from __future__ import annotations

import dataclasses
import random

import chess

from boardd.core.engine.downtime import GAP_TEXT, MISSED_DETAIL, OUTAGE_DETAIL, RESTART_DETAIL
from boardd.core.events import FillGap
from boardd.core.record import RECOVERED_TEXT, game_pgn
from tests.core.test_downtime_parity import Restart, _sans
from tests.core.test_link_outage_order import _line


def test_every_reason_has_its_words() -> None:
    assert set(RECOVERED_TEXT) == set(GAP_TEXT) == {RESTART_DETAIL, OUTAGE_DETAIL, MISSED_DETAIL}
    assert RECOVERED_TEXT[RESTART_DETAIL] == "recovered after downtime"  # the restart's wording is kept


def test_moves_recovered_after_a_link_outage_say_the_link_was_down() -> None:
    """e3 d6 e4 missed while the USB cable was out (the clock on its own link saw the presses): the moves are the
    search's, and the PGN says the board link was down, not that the daemon was (it ran throughout)."""
    r = _line(chess.Board(), "Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "own-link", eeprom=False)
    moves = r.engine.state.moves
    assert [m.recovered_reason for m in moves] == ["", "", OUTAGE_DETAIL, OUTAGE_DETAIL, OUTAGE_DETAIL, "", ""]
    pgn = r.engine.pgn()
    assert pgn.count("recovered after the board link was down (search)") == 3
    assert "downtime" not in pgn


def test_moves_recovered_after_a_restart_keep_the_downtime_words() -> None:
    r = Restart(chess.Board(), random.Random(3))
    r.play(_sans(r.board, "e4 e5"), seen=True)
    r.down()
    r.play(_sans(r.board, "Nf3 Nc6"), seen=False)
    r.up(eeprom=True)
    r.play(_sans(r.board, "Bb5"), seen=True)
    r.finish()
    assert [m.recovered_reason for m in r.engine.state.moves] == ["", "", RESTART_DETAIL, RESTART_DETAIL, ""]
    assert r.engine.pgn().count("recovered after downtime (eeprom)") == 2


def test_a_gap_of_a_link_outage_filled_by_the_arbiter_says_the_link_was_down() -> None:
    """The clock on the board's jack went down with it: Ra3 Kd8, or the rook by one of several routes of two moves
    (Black's Kc8 next says three plies: still several), a gap. The arbiter's moves replace it; they were missed while
    the link was down, and the PGN says so."""
    start = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    r = _line(start, "Kd1 Ke7 Ra2 Kd8 Ra3 Kc8 Rb3", range(2, 5), "on-the-board", eeprom=False)
    [gap] = [m for m in r.engine.state.moves if m.recovered == "gap"]
    assert gap.recovered_reason == OUTAGE_DETAIL and gap.san.startswith(GAP_TEXT[OUTAGE_DETAIL])
    r.engine.feed(FillGap(at=r.t + 1.0, ply=gap.ply, moves=("Ra2", "Kd8", "Ra3")))
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in r.board.move_stack]
    pgn = r.engine.pgn()
    assert pgn.count("recovered after the board link was down (arbiter)") == 3 and "downtime" not in pgn


def test_moves_missed_with_the_board_in_sight_say_updates_were_lost() -> None:
    r = _line(chess.Board(), "Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "own-link", eeprom=False)
    state = r.engine.state
    moves = tuple(dataclasses.replace(m, recovered_reason=MISSED_DETAIL) if m.recovered else m for m in state.moves)
    text = game_pgn(dataclasses.replace(state, moves=moves))
    assert text.count("recovered after missed board updates (search)") == 3
