"""The search's node budget running out proves nothing: what it found is never recorded as fact.

Recovering the plies the daemon missed (a restart, a link outage) searches the fewest plies that explain the
board, and, when the clock's running side contradicts them, the sequences one ply longer that fit it
(``Downtime._recover``, ``Downtime._revise``). A search that stops on its node budget has not shown that no
longer (or other) sequence fits: the shorter one found is then only a candidate, a gap for the arbiter's
``fill-gap`` with the reason said (``incomplete: "search budget exhausted"``), never a recorded move. Where the
budget suffices nothing changes.

The budgets here are small (injected through ``Downtime.node_budget``) so that the short search fits in them
and the longer one does not; the real budget runs out the same way on longer gaps.
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.recovery import BUDGET_EXHAUSTED, Recovery, RecoveryKind, recover
from tests.core.test_downtime_parity import Restart, _sans
from tests.core.test_link_outage_order import Outage
from tests.core.test_recovery import RUY, placement, play

ROOK = chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")


def _outage(sans: str, missed: range, clock_at: str, budget: int | None) -> Outage:
    """*sans* from the start, the plies of *missed* while the board link is down (each ply pressed)."""
    r = Outage(chess.Board(), random.Random(7), clock_at)
    if budget is not None:
        r.engine.downtime.node_budget = budget
    board = chess.Board()
    line = [board.push_san(san) for san in sans.split()]
    r.play(line[:missed.start], seen=True)
    r.down()
    r.play(line[missed.start:missed.stop], seen=False)
    r.up(eeprom=False)
    r.play(line[missed.stop:], seen=True)
    r.finish()
    return r


def _restart(budget: int | None) -> Restart:
    """Ra2 Kd8 Ra3 played while the daemon was down; Black's clock runs at the restart."""
    r = Restart(ROOK, random.Random(1))
    if budget is not None:
        r.engine.downtime.node_budget = budget
    r.play(_sans(r.board, "Kd1 Ke7"), seen=True)
    r.down()
    r.play(_sans(r.board, "Ra2 Kd8 Ra3"), seen=False)
    r.up(eeprom=False)
    r.play(_sans(r.board, "Kc8 Rb3 Kc7"), seen=True)
    r.finish()
    return r


# --- recover(): the search itself ------------------------------------------------------------------------------


@pytest.mark.parametrize(("start", "plies"), [(0, 4), (6, 3), (20, 5), (31, 2)])
def test_a_search_out_of_budget_is_never_a_unique_answer(start: int, plies: int) -> None:
    """Every budget from 1 up: either the full answer (the budget sufficed) or no fact (exhausted, said so: never
    ``unique``; before, ``gap`` with "no sequence of up to 12 plies", whatever was searched)."""
    board = play(RUY[:start])
    target = placement(play(RUY[start:start + plies], board))
    full = recover(board, target)
    assert full.sequences() and not full.exhausted
    seen_exhausted = False
    for budget in range(1, full.nodes + 2):
        result = recover(board, target, node_budget=budget)
        if result.exhausted:
            seen_exhausted = True
            assert result.kind in (RecoveryKind.GAP, RecoveryKind.AMBIGUOUS)
            assert result.detail == BUDGET_EXHAUSTED and BUDGET_EXHAUSTED in result.describe()
            assert all(len(c) == plies for c in result.candidates)  # those found at the depth it stopped at
        else:
            assert result == full
    assert seen_exhausted


def test_a_gap_out_of_budget_says_so_not_that_nothing_fits() -> None:
    board = play(RUY[:10])
    target = placement(play(RUY[10:20], board))
    result = recover(board, target, node_budget=50)
    assert (result.kind, result.exhausted) == (RecoveryKind.GAP, True)
    assert "no sequence of up to" not in result.describe()  # 12 plies were not searched: before, it said so
    assert Recovery(kind=RecoveryKind.GAP, detail="12").describe().startswith("no sequence of up to 12 plies")


# --- the engine: the search one ply longer ----------------------------------------------------------------------


def test_restart_longer_search_out_of_budget_records_no_guess() -> None:
    """Ra3 Kd8 (2 plies, 19 positions) fits the board, but leaves White to move while Black's clock runs: the
    3-ply search for the routes that fit the clock (177 positions) runs out at 50. That proves nothing: before,
    Ra3 Kd8 was recorded as the moves played (Ra2 Kd8 Ra3 was); now a gap, its candidate, the reason."""
    r = _restart(50)
    assert r.strong == []
    [event] = r.recovered
    assert (event["kind"], event["method"], event.get("incomplete")) == ("ambiguous", "search", BUDGET_EXHAUSTED)
    candidates = event["candidates"]
    assert isinstance(candidates, list)
    assert ["a1a3", "e7d8"] in candidates  # with the 3-ply routes found before the budget ran out
    assert BUDGET_EXHAUSTED in str(event["text"])
    moves = r.engine.state.moves
    assert [m.recovered for m in moves] == ["", "", "gap", "", "", ""]
    assert [m.uci for m in moves][3:] == ["d8c8", "a3b3", "c8c7"]  # the game goes on from the board


def test_restart_with_budget_enough_nothing_changes() -> None:
    """The same restart with a budget that suffices (200) and the real one: the same record and event, both kinds
    listed, no ``incomplete``."""
    small, real = _restart(200), _restart(None)
    assert [m.uci for m in small.engine.state.moves] == [m.uci for m in real.engine.state.moves]
    assert small.recovered == real.recovered
    [event] = real.recovered
    assert event["kind"] == "ambiguous" and "incomplete" not in event
    assert ["a1a2", "e7d8", "a2a3"] in event["candidates"]  # type: ignore[operator]


def test_link_outage_presses_do_not_narrow_an_incomplete_search_to_one() -> None:
    """e3 d6 e4 missed, the clock on its own link (three presses seen: White, Black, White). e4 d6 (6 positions)
    fits the board but not the running clock; the 3-ply search runs out at 10 positions, after e3 d6 e4. Before,
    the budget's end read as "nothing longer fits" and e4 d6 was recorded; the presses cannot pick one out of
    an incomplete list either: a gap with what was found."""
    r = _outage("Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "own-link", 10)
    assert r.strong == []
    [event] = r.recovered
    assert (event["kind"], event.get("incomplete")) == ("ambiguous", BUDGET_EXHAUSTED)
    assert event["candidates"] == [["e2e3", "d7d6", "e3e4"]]  # the presses rule e4 d6 out; others may fit
    assert [m.recovered for m in r.engine.state.moves] == ["", "", "gap", "", ""]
    assert [m.uci for m in r.engine.state.moves][3:] == ["b8c6", "b1c3"]


def test_link_outage_with_budget_enough_presses_still_tell() -> None:
    """Budget enough (20, and the real one): the presses tell e3 d6 e4, recorded as found by search."""
    for budget in (20, None):
        r = _outage("Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "own-link", budget)
        assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in r.board.move_stack]
        assert [m.recovered for m in r.engine.state.moves] == ["", "", "search", "search", "search", "", ""]
        [event] = r.recovered
        assert event["kind"] == "unique" and "incomplete" not in event


def test_clock_read_again_longer_search_out_of_budget_retracts() -> None:
    """The clock on the board's jack: e4 d6 recorded at the dump (the clock out of sight), the clock read again
    shows Black's time running. The 3-ply search (``Downtime._revise``) runs out at 7 positions having found
    nothing: before, e4 d6 stood as fact; now it is retracted, a gap with it as the candidate, the reason said."""
    r = _outage("Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "on-the-board", 7)
    assert r.strong == []
    [event] = r.recovered
    assert (event["kind"], event.get("incomplete")) == ("ambiguous", BUDGET_EXHAUSTED)
    assert event["candidates"] == [["e2e4", "d7d6"]]
    assert [m.recovered for m in r.engine.state.moves] == ["", "", "gap", "", ""]
    assert [m.uci for m in r.engine.state.moves][3:] == ["b8c6", "b1c3"]
    enough = _outage("Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "on-the-board", 20)
    real = _outage("Nf3 Nf6 e3 d6 e4 Nc6 Nc3", range(2, 5), "on-the-board", None)
    assert enough.recovered == real.recovered and "incomplete" not in real.recovered[0]
    # with budget enough both kinds fit (e4 d6, e3 d6 e4): a gap, the side to move open; Black's Nc6 after it says
    # Black had the move, and e3 d6 e4 is the only sequence of that parity (Downtime.after_gap): one event, unique
    assert (real.recovered[0]["kind"], real.recovered[0]["moves"]) == ("unique", ["e3", "d6", "e4"])
    assert [m.uci for m in real.engine.state.moves] == [m.uci() for m in real.board.move_stack]


def test_restart_search_out_of_budget_with_nothing_found_is_a_gap_that_says_so() -> None:
    """Budget 5: the first search runs out before any sequence (Ra3 Kd8 needs 19 positions). Before, the gap's
    event said "no sequence of up to 12 plies explains the board" (12 plies were not searched); now it says the
    budget ran out (``incomplete``), and the side to move is left to the first move after it."""
    r = _restart(5)
    assert r.strong == []
    [event] = r.recovered
    assert (event["kind"], event["candidates"], event.get("incomplete")) == ("gap", [], BUDGET_EXHAUSTED)
    assert "no sequence of up to" not in str(event["text"]) and BUDGET_EXHAUSTED in str(event["text"])
    moves = r.engine.state.moves
    assert [m.recovered for m in moves] == ["", "", "gap", "", "", ""]
    assert [m.uci for m in moves][3:] == ["d8c8", "a3b3", "c8c7"]
