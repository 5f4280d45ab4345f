"""A board link outage of more than three plies is what a restart is: the same search, the same outcomes.

An arbiter must see the same thing whether the Pi was down (a restart: ``Downtime``) or the USB cable was out
(a link outage while the daemon runs: ``Restoration.forward_jump``). Both search up to ``DEFAULT_MAX_PLIES``
plies; a unique order is recorded with ``recovered_by: "search"`` and one ``MOVES_RECOVERED``, several leave a
gap with the candidates for ``fill-gap``; nobody is accused. Before, more than ``_JUMP_DEPTH`` (3) plies missed
on a link outage raised ``POSITION_DIVERGENCE``.
"""

from __future__ import annotations

import random

import chess
import pytest

from boardd.core.engine.common import _JUMP_DEPTH
from boardd.core.engine.downtime import GAP_TEXT, OUTAGE_DETAIL, RESTART_DETAIL
from boardd.core.events import FillGap
from boardd.core.recovery import DEFAULT_MAX_PLIES
from tests.core.test_downtime_parity import Restart
from tests.core.test_link_outage_order import Outage, _games


def _stretch(seed: int) -> tuple[chess.Board, list[chess.Move], int, int]:
    """A real game of the shared PGN files, *k* plies seen, then 4..8 missed, then up to 3 seen."""
    rng = random.Random(seed)
    games = _games()
    fen, chess960, ucis = games[rng.randrange(len(games))]
    start = chess.Board(fen, chess960=chess960)
    n = rng.randrange(_JUMP_DEPTH + 1, 9)
    k = rng.randrange(2, max(3, min(len(ucis) - n - 3, 60)))
    work = start.copy()
    moves = []
    for uci in ucis[:k + n + 3]:
        moves.append(chess.Move.from_uci(uci))
        work.push(moves[-1])
    return start, moves, k, n


def _outcome(outs_moves: list[tuple[str, str]], events: list[dict[str, object]]) -> tuple[object, ...]:
    [event] = events  # one incident, one event
    candidates = event["candidates"]
    assert isinstance(candidates, list)
    return (tuple(outs_moves), event["kind"], event["method"], tuple(event["moves"]),  # type: ignore[arg-type]
            tuple(sorted(tuple(c) for c in candidates)), event["from_ply"], event["to_ply"])


@pytest.mark.parametrize("seed", range(12))
def test_a_long_link_outage_ends_as_a_restart_does(seed: int) -> None:
    """4..8 plies of a real game missed, no board log, the clock on the board's jack (out of sight with it,
    read again after the dump): the link outage's record and event are the restart's, word for word but the
    reason (and the gap's text)."""
    start, moves, k, n = _stretch(seed)
    outage = Outage(start, random.Random(seed), "on-the-board")
    outage.play(moves[:k], seen=True)
    outage.down()
    outage.play(moves[k:k + n], seen=False)
    outage.up(eeprom=False)
    outage.play(moves[k + n:], seen=True)
    outage.finish()
    restart = Restart(start, random.Random(seed))
    restart.play(moves[:k], seen=True)
    restart.down()
    restart.play(moves[k:k + n], seen=False)
    restart.up(eeprom=False)
    restart.play(moves[k + n:], seen=True)
    restart.finish()
    assert restart.strong == []
    if [e["kind"] for e in restart.recovered] == ["gap"]:
        # no sequence within the restart's search budget: the restart holds the board until it is quiet (no move
        # in progress) and leaves a gap without candidates; the link outage has no such hold, and a move in
        # progress at its dump must not become the record's position: POSITION_DIVERGENCE, as before (the
        # arbiter reinstates or adopts the board). Kept apart on purpose; the same search found nothing.
        assert outage.strong == ["POSITION_DIVERGENCE ply " + str(k)] and outage.recovered == []
        return
    assert outage.strong == []  # no POSITION_DIVERGENCE, nobody accused
    got = [(rec.uci, rec.recovered) for rec in outage.engine.state.moves]
    want = [(rec.uci, rec.recovered) for rec in restart.engine.state.moves]
    assert _outcome(got, outage.recovered) == _outcome(want, restart.recovered)
    assert outage.recovered[0]["reason"] == OUTAGE_DETAIL and restart.recovered[0]["reason"] == RESTART_DETAIL
    if outage.recovered[0]["kind"] == "unique":
        assert [u for u, _ in got] == [m.uci() for m in moves]  # never a move that was not played
        assert {how for _, how in got[k:k + n]} == {"search"}
    else:
        gap = outage.engine.state.moves[k]
        assert gap.san.startswith(f"{GAP_TEXT[OUTAGE_DETAIL]}: ")
        assert restart.engine.state.moves[k].san.startswith(f"{GAP_TEXT[RESTART_DETAIL]}: ")


def test_six_plies_missed_on_a_link_outage_are_searched_as_after_a_restart() -> None:
    """e4 e5 seen; Nf3 Nc6 Bb5 a6 Ba4 Nf6 missed (the clock on its own link, no board log): the knights' and
    the pawn's moves commute, so a gap with the candidates (the true order among them), not a divergence; the
    arbiter fills it and the game goes on."""
    assert DEFAULT_MAX_PLIES >= 6 > _JUMP_DEPTH
    board = chess.Board()
    line = [board.push_san(san) for san in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"]]
    r = Outage(chess.Board(), random.Random(5), "own-link")
    r.play(line[:2], seen=True)
    r.down()
    r.play(line[2:8], seen=False)
    r.up(eeprom=False)
    r.play(line[8:], seen=True)
    r.finish()
    assert r.strong == []
    [event] = r.recovered
    assert (event["kind"], event["reason"], event["from_ply"], event["to_ply"]) == ("ambiguous", OUTAGE_DETAIL, 3, 3)
    moves = r.engine.state.moves
    assert [m.uci for m in moves] == ["e2e4", "e7e5", "0000", "e1g1", "f8e7"]
    assert moves[2].recovered == "gap" and moves[2].san.startswith("gap after the board link was down: ")
    r.engine.feed(FillGap(at=r.t + 1.0, ply=3, moves=tuple(m.uci() for m in line[2:8])))
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in line]


@pytest.mark.parametrize("clock_at", ["own-link", "none"])
def test_five_plies_in_one_order_missed_on_a_link_outage_are_recorded_as_search(clock_at: str) -> None:
    """13...Kd8 14. hxg5 hxg5 15. Rxh8+ Bxh8 of a real game missed (no board log): one order only; the moves
    are recorded, marked ``search``, in one ``MOVES_RECOVERED``; before, a POSITION_DIVERGENCE."""
    start, moves, k, n = _stretch(104)
    assert (k, n) == (25, 5)
    r = Outage(start, random.Random(104), clock_at)
    r.play(moves[:k], seen=True)
    r.down()
    r.play(moves[k:k + n], seen=False)
    r.up(eeprom=False)
    r.play(moves[k + n:], seen=True)
    r.finish()
    assert r.strong == []
    assert [m.uci for m in r.engine.state.moves] == [m.uci() for m in moves]
    assert [m.recovered for m in r.engine.state.moves][k - 1:] == ["", *["search"] * n, "", "", ""]
    [event] = r.recovered
    assert (event["kind"], event["method"], event["reason"], event["from_ply"], event["to_ply"]) == \
        ("unique", "search", OUTAGE_DETAIL, k + 1, k + n)
    assert event["moves"] == ["Kd8", "hxg5", "hxg5", "Rxh8+", "Bxh8"]
