"""One incident, one alert: findings that follow from one incident carry its primary's id (``incident``);
info findings are ``noted`` (a log entry, never open); TWO_HANDS_AT_PRESS is a warning until confirmed."""

from __future__ import annotations

import chess

from boardd.core.events import Resolve
from boardd.core.outputs import Irregularity, IrregularityRaised, IrregularityUpdated, Severity, Status
from tests.core.test_scenarios import SCENARIOS, Run, Scn, _code, check, run


def _incidents(scn: Scn) -> list[tuple[str, str | None]]:
    r = run(scn)
    ids = {i.id: _code(i) for i in r.raised}
    return [(_code(i), ids.get(i.incident) if i.incident else None) for i in r.raised
            if i.severity is not Severity.INFO]


def test_t50_takeback_and_the_press_without_a_move_fold_under_the_change_out_of_turn() -> None:
    assert _incidents(SCENARIOS["T50"]) == [("OUT_OF_TURN_CHANGE", None),
                                            ("TAKEBACK_DETECTED", "OUT_OF_TURN_CHANGE"),
                                            ("CLOCK_PRESS_NO_MOVE", "OUT_OF_TURN_CHANGE")]


def test_t30_piece_in_hand_and_other_hand_are_one_incident() -> None:
    got = _incidents(SCENARIOS["T30"])
    assert got[0] == ("CLOCK_PRESS_PIECE_IN_HAND", None)
    assert all(primary == "CLOCK_PRESS_PIECE_IN_HAND" for _, primary in got[1:]) and len(got) == 3


def test_t04_rook_first_and_the_changed_move_are_one_incident() -> None:
    assert _incidents(SCENARIOS["T04"]) == [("CASTLING_ROOK_FIRST", None),
                                            ("RELEASED_MOVE_CHANGED", "CASTLING_ROOK_FIRST")]


def test_separate_incidents_two_moves_apart_stay_separate() -> None:
    # rook-first castling (incident 1); two moves later Black presses without a move (incident 2)
    scn = Scn("A", "0 L h1 · 120 P f1 wR · 400 L e1 · 650 P g1 wK · 1000 C W · 2000 L d7 · 2300 P d6 bP · "
                   "2600 C B · 4000 L d2 · 4300 P d3 wP · 4600 C W · 6000 C B", ("O-O", "d6", "d3"))
    assert _incidents(scn) == [("CASTLING_ROOK_FIRST", None), ("CLOCK_PRESS_NO_MOVE", None)]


def test_info_findings_are_noted_and_not_open() -> None:
    r = run(SCENARIOS["T52"])  # a pause during a promotion: PROMOTION_PAUSE_REQUEST (info)
    infos = [i for i in r.engine.irregularities if i.severity is Severity.INFO]
    assert infos and all(i.status is Status.NOTED for i in infos)
    assert not set(r.engine.state.open_irregularities) & {i.id for i in infos}


def test_two_hands_at_press_is_a_warning_until_the_arbiter_confirms_it() -> None:
    r = run(SCENARIOS["T08"])
    at_press = next(i for i in r.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    assert at_press.severity is Severity.WARNING and at_press.incident is not None
    assert r.engine.state.illegal_moves_white == 0
    outs = r.engine.feed(Resolve(at=10.0, irregularity_id=at_press.id, ruling="confirmed", accept=True))
    assert not [o for o in outs if isinstance(o, IrregularityRaised)]
    confirmed = next(i for i in r.engine.irregularities if i.id == at_press.id)
    assert confirmed.severity is Severity.ILLEGAL_MOVE and confirmed.status is Status.RESOLVED
    assert confirmed.suggestion.add_to_opponent_s == 120 and r.engine.state.illegal_moves_white == 1


def test_two_hands_confirmed_under_2014_stays_discretionary() -> None:
    r = run(SCENARIOS["T08-E2014"])
    at_press = next(i for i in r.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    r.engine.feed(Resolve(at=10.0, irregularity_id=at_press.id, ruling="confirmed", accept=True))
    confirmed = next(i for i in r.engine.irregularities if i.id == at_press.id)
    assert confirmed.severity is Severity.WARNING and r.engine.state.illegal_moves_white == 0
    assert at_press.side == chess.WHITE


def test_an_entry_that_is_no_legal_move_names_what_the_hand_did() -> None:
    """Issue 10: no null move enters the record where the change can be named (the entry stays legal=False)."""
    cases = {"T06": "e1g1", "T18": "e5d6", "T09": "e1g1"}
    for name, uci in cases.items():
        r = run(SCENARIOS[name])
        last = r.engine.state.moves[-1]
        assert (last.uci, last.legal) == (uci, False), name
    pawn = run(Scn("J", "0 L e7 · 300 P e8 wP · 1000 C W", ("!",), ("PAWN_NOT_REPLACED",)))
    assert [(m.uci, m.legal) for m in pawn.engine.state.moves] == [("e7e8", False)]


def _two_hands_incident(scenario: str) -> tuple[object, str, str]:
    r = run(SCENARIOS[scenario])
    at_press = next(i for i in r.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    primary = next(i for i in r.engine.irregularities if i.id == at_press.incident)
    assert primary.code == "TWO_HANDS_SUSPECTED" and primary.status is Status.OPEN
    return r, at_press.id, primary.id


def test_confirming_two_hands_closes_the_incident_as_one() -> None:
    """The ruling on TWO_HANDS_AT_PRESS closes its TWO_HANDS_SUSPECTED too (one incident, nothing left open);
    the primary goes out first, so no consumer sees an open incident with an illegal-move finding in it."""
    r, at_press, primary = _two_hands_incident("T08")
    outs = r.engine.feed(Resolve(at=10.0, irregularity_id=at_press, ruling="confirmed", accept=True))
    updated = [(o.irregularity.id, o.irregularity.status, o.irregularity.severity) for o in outs
               if isinstance(o, IrregularityUpdated)]
    assert updated == [(primary, Status.RESOLVED, Severity.WARNING), (at_press, Status.RESOLVED, Severity.ILLEGAL_MOVE)]
    closed = next(i for i in r.engine.irregularities if i.id == primary)
    assert closed.ruling == f"resolved with {at_press}: confirmed"
    assert r.engine.state.open_irregularities == () and r.engine.state.illegal_moves_white == 1


def test_dismissing_two_hands_closes_the_incident_without_a_penalty() -> None:
    r, at_press, primary = _two_hands_incident("T08")
    r.engine.feed(Resolve(at=10.0, irregularity_id=at_press, ruling="dismissed", accept=False))
    found = {i.id: i for i in r.engine.irregularities}
    assert found[primary].status is Status.RESOLVED and found[at_press].status is Status.RESOLVED
    assert found[at_press].severity is Severity.WARNING and r.engine.state.illegal_moves_white == 0
    assert r.engine.state.open_irregularities == ()


# Black's illegal move (Ke8-e6, not yet ruled on), then White castles queenside with both hands, within the
# one completed move an incident stays open for: White's two-handed move is an incident of its own (each
# player's irregularity is ruled on and counted for that player, 7.5.5), not a finding of Black's incident.
_NESTED = Scn("B", "0 L e8 · 300 P e6 bK · 600 C B · 2000 L e1 · 2030 L a1 · 2330 P c1 wK · 2360 P d1 wR · 2700 C W",
              ("!", "O-O-O"), ("ILLEGAL_MOVE/GEOMETRY", "TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"))


def _nested() -> tuple[Run, Irregularity, Irregularity, Irregularity]:
    r = run(_NESTED)
    check(_NESTED, r)
    found = {i.code: i for i in r.engine.irregularities}
    illegal, suspected, at_press = found["ILLEGAL_MOVE"], found["TWO_HANDS_SUSPECTED"], found["TWO_HANDS_AT_PRESS"]
    # two incidents: Black's illegal move, White's two hands (before: White's joined Black's)
    assert illegal.incident is None and suspected.incident is None and at_press.incident == suspected.id
    assert at_press.related == (suspected.id,)  # the relation in data, not only in the text
    return r, illegal, suspected, at_press


def test_two_hands_after_the_opponents_illegal_move_is_an_incident_of_its_own() -> None:
    """Confirming White's two hands closes White's incident and counts for White; Black's illegal move, not yet
    ruled on, stays open for its own ruling (before: it was closed "resolved with" White's press finding)."""
    r, illegal, suspected, at_press = _nested()
    outs = r.engine.feed(Resolve(at=10.0, irregularity_id=at_press.id, ruling="confirmed", accept=True))
    updated = [(o.irregularity.id, o.irregularity.status) for o in outs if isinstance(o, IrregularityUpdated)]
    assert updated == [(suspected.id, Status.RESOLVED), (at_press.id, Status.RESOLVED)]
    found = {i.id: i for i in r.engine.irregularities}
    assert found[suspected.id].ruling == f"resolved with {at_press.id}: confirmed"
    assert found[at_press.id].severity is Severity.ILLEGAL_MOVE
    assert found[illegal.id].status is Status.OPEN and found[illegal.id].ruling is None
    state = r.engine.state
    assert state.open_irregularities == (illegal.id,)
    assert (state.illegal_moves_white, state.illegal_moves_black) == (1, 1)


def test_two_hands_after_the_opponents_illegal_move_dismissed_leaves_that_move_open() -> None:
    r, illegal, _, at_press = _nested()
    r.engine.feed(Resolve(at=10.0, irregularity_id=at_press.id, ruling="dismissed", accept=False))
    state = r.engine.state
    assert state.open_irregularities == (illegal.id,)
    assert (state.illegal_moves_white, state.illegal_moves_black) == (0, 1)


def test_a_ruling_on_the_opponents_illegal_move_leaves_the_two_hands_open() -> None:
    """The arbiter rules on Black's illegal move: White's two-handed move still waits for its own ruling
    (before: it closed with Black's finding, unconfirmed)."""
    r, illegal, suspected, at_press = _nested()
    r.engine.feed(Resolve(at=10.0, irregularity_id=illegal.id, ruling="+2 min to White"))
    found = {i.id: i for i in r.engine.irregularities}
    assert found[illegal.id].status is Status.RESOLVED
    assert found[suspected.id].status is found[at_press.id].status is Status.OPEN
    assert set(r.engine.state.open_irregularities) == {suspected.id, at_press.id}


def test_two_hands_counted_once_names_the_illegal_move_and_is_not_counted_twice() -> None:
    """R19: the two-handed press was an illegal move of its own (two knights moved): the press finding names
    both the suspicion and that illegal move (``related``); confirming it counts nothing more (before: 2)."""
    scn = Scn("S1", "0 L g1 · 600 L b1 · 1000 P f3 wN · 1100 P c3 wN · 1500 C W", ("!",),
              ("TWO_HANDS_SUSPECTED", "ILLEGAL_MOVE/TWO_PIECES_MOVED", "TWO_HANDS_AT_PRESS"))
    r = run(scn)
    found = {i.code: i for i in r.engine.irregularities}
    at_press = found["TWO_HANDS_AT_PRESS"]
    assert at_press.related == (found["TWO_HANDS_SUSPECTED"].id, found["ILLEGAL_MOVE"].id)
    assert r.engine.state.illegal_moves_white == 1
    r.engine.feed(Resolve(at=10.0, irregularity_id=at_press.id, ruling="confirmed", accept=True))
    assert r.engine.state.illegal_moves_white == 1 and r.engine.state.open_irregularities == ()


# One occurrence, one alert; two players' occurrences, two alerts. White castles with the rook lifted first
# (4.4.2, CASTLING_ROOK_FIRST); within the next completed move Black does something of his own. Black's finding
# is ruled on and counted for Black: it must not fold under White's castling, where the ruling on White's
# castling would close it "resolved with" a finding about another player's move.
_ROOK_FIRST = "0 L h1 · 120 P f1 wR · 400 L e1 · 650 P g1 wK · 1000 C W"


def _primaries(r: Run) -> dict[str, str | None]:
    ids = {i.id: _code(i) for i in r.raised}
    return {_code(i): ids.get(i.incident) if i.incident else None for i in r.raised
            if i.severity is not Severity.INFO}


def test_the_opponents_touch_move_after_a_rook_first_castling_is_an_incident_of_its_own() -> None:
    """Black adjusts his g8 knight (no "j'adoube" is observable), then plays d6 although the knight could move
    (4.3.1, TOUCH_MOVE_SUSPECTED): Black's occurrence, not a finding of White's castling (before: it joined)."""
    scn = Scn("A", f"{_ROOK_FIRST} · 2000 L g8 · 2300 P g8 bN · 3000 L d7 · 3300 P d6 bP · 3600 C B",
              ("O-O", "d6"), ("CASTLING_ROOK_FIRST", "TOUCH_MOVE_SUSPECTED"), allow_info=("ADJUST_OBSERVED",))
    r = run(scn)
    check(scn, r)
    assert _primaries(r) == {"CASTLING_ROOK_FIRST": None, "TOUCH_MOVE_SUSPECTED": None}
    adjust = next(i for i in r.raised if i.code == "ADJUST_OBSERVED")
    assert adjust.incident is None  # Black's own adjustment is no note of White's castling either
    found = {i.code: i for i in r.engine.irregularities}
    r.engine.feed(Resolve(at=10.0, irregularity_id=found["CASTLING_ROOK_FIRST"].id, ruling="castling stands"))
    assert r.engine.state.open_irregularities == (found["TOUCH_MOVE_SUSPECTED"].id,)


def test_the_opponents_press_without_a_move_after_a_castling_is_his_own_illegal_move() -> None:
    """Black presses without a move after White's rook-first castling (7.5.3, counted for Black): its own
    incident; the ruling on White's castling leaves it open (before: closed "resolved with" the castling)."""
    scn = Scn("A", f"{_ROOK_FIRST} · 2000 C B", ("O-O",), ("CASTLING_ROOK_FIRST", "CLOCK_PRESS_NO_MOVE"))
    r = run(scn)
    check(scn, r)
    assert _primaries(r) == {"CASTLING_ROOK_FIRST": None, "CLOCK_PRESS_NO_MOVE": None}
    found = {i.code: i for i in r.engine.irregularities}
    r.engine.feed(Resolve(at=10.0, irregularity_id=found["CASTLING_ROOK_FIRST"].id, ruling="castling stands"))
    assert r.engine.state.open_irregularities == (found["CLOCK_PRESS_NO_MOVE"].id,)
    assert r.engine.state.illegal_moves_black == 1


def test_a_castling_after_the_opponents_early_start_is_an_incident_of_its_own() -> None:
    """Black lifts his c6 knight while White castles (1.3, OPPONENT_STARTED_BEFORE_MOVE_MADE, Black's), and
    White had lifted the rook first (White's): two incidents (before: White's castling joined Black's)."""
    scn = Scn("A", "0 L h1 · 120 P f1 wR · 400 L e1 · 500 L c6 · 650 P g1 wK · 1000 C W · 1500 P d4 bN · "
                   "1800 C B", ("O-O", "Nd4"), ("OPPONENT_STARTED_BEFORE_MOVE_MADE", "CASTLING_ROOK_FIRST"))
    r = run(scn)
    check(scn, r)
    assert _primaries(r) == {"OPPONENT_STARTED_BEFORE_MOVE_MADE": None, "CASTLING_ROOK_FIRST": None}


def test_a_players_findings_stay_in_his_incident_after_the_opponents_opened_one() -> None:
    """T30 with Black starting meanwhile: White presses with the knight in hand, Black lifts b8 (his early
    start, his incident), White puts the knight down on Black's time: that change finishes White's press with a
    piece in hand and joins it, though Black's incident is the latest (before: Black's joined White's)."""
    scn = Scn("S1", "0 L g1 · 400 C W · 900 L b8 · 1400 P f3 wN · 1700 P c6 bN · 2000 C B", ("Nf3", "Nc6"),
              ("CLOCK_PRESS_PIECE_IN_HAND", "CLOCK_PRESS_OTHER_HAND_SUSPECTED", "OPPONENT_STARTED_BEFORE_MOVE_MADE",
               "OUT_OF_TURN_CHANGE"))
    r = run(scn)
    check(scn, r)
    assert _primaries(r) == {"CLOCK_PRESS_PIECE_IN_HAND": None,
                             "CLOCK_PRESS_OTHER_HAND_SUSPECTED": "CLOCK_PRESS_PIECE_IN_HAND",
                             "OPPONENT_STARTED_BEFORE_MOVE_MADE": None,
                             "OUT_OF_TURN_CHANGE": "CLOCK_PRESS_PIECE_IN_HAND"}


def test_the_press_that_hands_the_clock_back_follows_from_the_incident() -> None:
    """The other player's press without a move that hands the clock back to the player whose act is
    unfinished on the board is the clock handled in that occurrence, as in T50's takeback by agreement: White
    presses with the knight in hand (or without a move), Black presses back, White then plays Nf3."""
    in_hand = Scn("S1", "0 L g1 · 400 C W · 900 C B · 1400 P f3 wN · 1800 C W", ("Nf3",),
                  ("CLOCK_PRESS_PIECE_IN_HAND", "CLOCK_PRESS_OTHER_HAND_SUSPECTED", "CLOCK_PRESS_NO_MOVE",
                   "OUT_OF_TURN_CHANGE"))
    r = run(in_hand)
    check(in_hand, r)
    assert _primaries(r)["CLOCK_PRESS_NO_MOVE"] == "CLOCK_PRESS_PIECE_IN_HAND"
    no_move = run(Scn("S1", "0 C W · 600 C B · 1500 L g1 · 1800 P f3 wN · 2100 C W"))
    presses = [i for i in no_move.raised if i.code == "CLOCK_PRESS_NO_MOVE"]
    assert [(i.side, i.incident) for i in presses] == [(chess.WHITE, None), (chess.BLACK, presses[0].id)]
