"""The simulator's correction cycles of an illegal castling and of a changed promotion choice, replayed through the
engine and judged from the Laws (not from the simulator): the record, the code, the articles, the penalty for the
configured edition, and one alert per incident.

* ``castling-illegal`` (R04, R16; E2009/E2014 4.4 c, E2018+ 4.4.3, 7.5.1 / 7.4 a): the castling that is not legal
  (the right lost, in check, through or onto an attacked square), pressed; reinstated; the replacement is another
  move of the king, the castling with the other rook among them. The record: the illegal castling, its retraction,
  the replacement. One finding ILLEGAL_MOVE/CASTLING_ILLEGAL, the penalty of the edition and category, resolved
  when the arbiter handled it; every note from it to the replacement joins its incident.
* ``promotion-choice-changed`` (R05; E2009/E2014 4.4 d, E2018+ 4.4.4): the first piece that touched the promotion
  square stands; exchanged for another and pressed, then put back on the square: the record is the first piece's
  promotion, PROMOTION_CHOICE_CHANGED is the one alert (RELEASED_MOVE_CHANGED joins it), no time penalty (an
  Article 4 matter, rules-spec §6), resolved when the arbiter paused the clock; no note left outside the incident.

``python scripts/correction_audit.py`` prints the table.
"""

from __future__ import annotations

import dataclasses
from functools import cache

from boardd.core.engine import Engine
from boardd.core.laws.codes import code_info
from boardd.core.outputs import IrregularityRaised, MoveMade, MovesRetracted, Output, Severity, Status
from drivers.sim import Correction, CorrectionKind, SimulatedGame, correction_applicable, random_game, simulate_game
from drivers.sim._clock import parse_time_control
from drivers.sim._procedures import category_of, penalty_seconds

KINDS = (CorrectionKind.CASTLING_ILLEGAL, CorrectionKind.PROMOTION_CHOICE_CHANGED)
EDITIONS = (2009, 2014, 2018, 2023)


@cache
def plies(kind: CorrectionKind, chess960: bool, count: int,
          castling_reply: bool = False) -> tuple[tuple[int, int], ...]:
    """(game seed, ply) of random games where *kind* fits (*castling_reply*: the game's move there is a castling,
    the other castling as the replacement)."""
    out = []
    for seed in range(6000):
        game = random_game(seed, chess960=chess960)
        board = game.board()
        for index, move in enumerate(list(game.mainline_moves())[:-2]):
            if index >= 2 and correction_applicable(kind, board, move) \
                    and (not castling_reply or board.is_castling(move)):
                out.append((seed, index + 1))
                break
            board.push(move)
        if len(out) == count:
            break
    return tuple(out)


def replay(sim: SimulatedGame) -> tuple[Engine, list[Output]]:
    engine = Engine(sim.header.rules, sim.game)
    outs: list[Output] = []
    events = sim.events
    latest = events[0].at
    for event in events:
        latest = max(latest, event.at)
        while (due := engine.next_deadline()) is not None and due < latest:
            outs += engine.advance(due)
        outs += engine.feed(event if event.at >= latest else dataclasses.replace(event, at=latest))
    outs += engine.advance(latest + 30.0)
    return engine, outs


def audit(kind: CorrectionKind, seed: int, ply: int, edition: int, chess960: bool) -> tuple[str, list[str]]:
    """(the cycle's label, what is wrong)."""
    game = random_game(seed, chess960=chess960)
    sim = simulate_game(game, seed=seed + edition, profile="clean", corrections=[Correction(kind, ply)],
                        edition=edition)
    engine, outs = replay(sim)
    label = next(label for at, label in sim.handled if at == ply and label.startswith("correction/"))
    problems: list[str] = []
    record = [m.uci for m in engine.state.moves]
    if record != sim.moves:
        problems.append(f"record {record[ply - 2:ply + 2]} != game {sim.moves[ply - 2:ply + 2]}")
    raised = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]
    strong = [i for i in raised if i.severity is not Severity.INFO]
    code = correction_codes_of(kind)
    main = [i for i in strong if (i.code, i.subtype) == code]
    if len(main) != 1:
        return label, [*problems, f"findings {[(i.code, i.subtype) for i in strong]}"]
    finding = main[0]
    final = {i.id: i for i in engine.irregularities}
    others = [(i.code, i.subtype) for i in strong if finding.id not in (i.id, i.incident)]
    if others:
        problems.append(f"another alert {others}")
    # every note from the incident's move made to the end of the cycle joins it (one alert), or was withdrawn; E2009's
    # PROMOTION_ORDER_2009 (T21: the piece put on the square without the pawn there first, 3.7 e / 4.6 c) is a
    # note on the way the first piece came, raised before the choice was changed (nothing to join yet)
    begin = next((o.move.made_at for o in outs if isinstance(o, MoveMade) and o.move.ply == ply), 0.0) - 1.0
    end = _cycle_end(outs, ply)
    loose = [i.code for i in raised if i.severity is Severity.INFO and finding.id not in (i.id, i.incident)
             and begin <= i.t_raised <= end
             and final[i.id].status is not Status.RESOLVED
             and not (kind is CorrectionKind.PROMOTION_CHOICE_CHANGED and i.code == "PROMOTION_ORDER_2009")]
    if loose:
        problems.append(f"notes outside the incident {loose}")
    if finding.articles != code_info(finding.code, edition).articles:
        problems.append(f"articles {finding.articles} != {code_info(finding.code, edition).articles}")
    paused = " paused" in label
    if kind is CorrectionKind.CASTLING_ILLEGAL:
        due = _penalty(sim, edition)
        if finding.suggestion.add_to_opponent_s != due:
            problems.append(f"penalty {finding.suggestion.add_to_opponent_s} != {due}")
        trail = _trail(outs, ply)
        if not (trail[:1] == [("made", False)] and ("retracted", ply - 1) in trail
                and trail[-1:] == [("made", True)]):
            problems.append(f"record trail {trail}")
        if final[finding.id].status is not Status.RESOLVED and paused:
            problems.append(f"not resolved: {final[finding.id].status}")
    else:
        if finding.suggestion.add_to_opponent_s:
            problems.append(f"a time penalty {finding.suggestion.add_to_opponent_s} for an Article 4 breach")
        if paused and final[finding.id].status is not Status.RESOLVED:
            problems.append(f"not resolved: {final[finding.id].status}")
    return label, problems


def correction_codes_of(kind: CorrectionKind) -> tuple[str, str | None]:
    return ("ILLEGAL_MOVE", "CASTLING_ILLEGAL") if kind is CorrectionKind.CASTLING_ILLEGAL \
        else ("PROMOTION_CHOICE_CHANGED", None)


def _penalty(sim: SimulatedGame, edition: int) -> float:
    assert sim.game.time_control is not None
    tc = parse_time_control(sim.game.time_control)
    return penalty_seconds(edition, category_of(tc, edition))


def _trail(outs: list[Output], ply: int) -> list[tuple[str, object]]:
    """The record's changes at *ply*: made (legal or not), retracted (to which ply)."""
    trail: list[tuple[str, object]] = []
    for o in outs:
        if isinstance(o, MoveMade) and o.move.ply == ply:
            trail.append(("made", o.move.legal))
        elif isinstance(o, MovesRetracted) and o.to_ply == ply - 1:
            trail.append(("retracted", o.to_ply))
    return trail


def _cycle_end(outs: list[Output], ply: int) -> float:
    """When the ply after the cycle's was made (the cycle over)."""
    return next((o.move.made_at for o in outs if isinstance(o, MoveMade) and o.move.ply == ply + 1),
                float("inf"))


def table() -> dict[tuple[str, str, int], tuple[int, int]]:
    """(kind, variant, edition) -> (cases, right)."""
    out: dict[tuple[str, str, int], tuple[int, int]] = {}
    for kind in KINDS:
        variants = [("standard", False, False), ("960", True, False)]
        if kind is CorrectionKind.CASTLING_ILLEGAL:
            variants.append(("other castling", False, True))
        for name, c960, other in variants:
            for edition in EDITIONS:
                cases = plies(kind, c960, 6, other)
                right = sum(not audit(kind, seed, ply, edition, c960)[1] for seed, ply in cases)
                out[(kind.value, name, edition)] = (len(cases), right)
    return out
