"""Audit of the arbiter's correction procedure after an illegal move, per edition (7.5.1, 7.5.5, 7.1; rules-spec
§3.7, R20, R21, §6.3; 6.11): the offender makes an illegal move and presses; the arbiter **stops the clock**,
**restores the position**, **adjusts the times** as the suggestion says (the penalty to the opponent, the increment
of the illegal press taken from the offender) and **restarts** the offender's clock; the offender replaces the move
(touch-move) and play goes on. Every step is randomised in order and timing:

* the pause before the pieces, or after some or all of them are back; the pause's reading on time or late by up to
  2.9 s (the DgtPi reads the DGT 3000 about every 2 s, protocols.md §2.5), the true reading 0.5-2 s later;
* the hands (:func:`tests.core.correction_audit_rig.random_hands`: one by one or all lifted first, fast to slow, two
  hands, the wrong piece first, a piece set down on a wrong square on the way);
* the times set before or after the pieces, side by side in either order, in one jump (the clock's menu) or in
  button steps (a minute, ten seconds, a second a press, each a reading);
* the restart by the lever while paused then play, or play then the arbiter pressing the opponent's side.

For each sequence: exactly one incident (one finding that asks for the arbiter: the illegal move's, resolved by
the correction; nothing else of severity warning or illegal-move, resolved joiners of its incident aside), the
suggestion's penalty for the edition and category (§6.3: +2:00, or +1:00 in blitz from 2014 and in rapid in
2023) and the increment of the illegal press (R21 b), the record equal to the game, and no stray note of the
clock: the pause is noted once (``CLOCK_PAUSED``, 6.11.2), and nothing else of the clock or the times: an
``ARBITER_ADJUST`` when the arbiter applied the suggestion exactly is stray (it was, with a late pause reading,
before the pause's time settled, protocols.md §2.5). The notes of the hands on the board (:data:`HAND_NOTES`: a
fast lift-and-replace read as a sensor glitch, the wrong piece lifted first read as a possible adjustment) are
counted and reported, not judged; every note until the replacement move is completed must be folded under the
illegal move's incident (one incident, one item on the tablet), and the times the suggestion says the clock showed
when the arbiter took it are those of the moment of the pause, however late its reading.
``python -m tests.core.test_correction_arbiter_audit`` prints the table.
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

import chess
import pytest

from boardd.core.engine.correction import _hms
from boardd.core.laws.codes import is_illegal_move_class
from boardd.core.outputs import Severity, Status
from tests.core.correction_audit_rig import Rig, random_hands, restore_steps, run_steps
from tests.core.test_correction_audit import _finish, _open, _random_game
from tests.core.test_correction_cycle import _illegal_moves

EDITIONS = (2009, 2014, 2018, 2023)
#: time control -> (category, increment s); E2009 counts 180+2 as blitz and 900+10 as rapid too (§7.1)
CONTROLS = {"5400+30": ("standard", 30), "900+10": ("rapid", 10), "180+2": ("blitz", 2)}
PER_EDITION = 120
#: notes the procedure itself gives: the pause (6.11.2)
EXPECTED_NOTES = {"CLOCK_PAUSED"}
#: notes of the hands on the board (info), reported, not judged: see the module's docstring
HAND_NOTES = {"SENSOR_FLICKER", "ADJUST_OBSERVED", "CAPTURED_PIECE_PARKED", "DISPLACED_PIECES"}


def expected_penalty(edition: int, tc: str) -> int:
    """§6.3, adequate supervision, the first illegal move: +2:00; +1:00 in blitz (2014, 2018: B.2; 2023: A.3 via
    B.3 and the configurable B.2 default) and in rapid from 2023 (A.3)."""
    category = CONTROLS[tc][0]
    if edition == 2023 and category in ("rapid", "blitz"):
        return 60
    if edition in (2014, 2018) and category == "blitz":
        return 60
    return 120


@dataclass(slots=True)
class Outcome:
    edition: int
    tc: str
    problems: list[str] = field(default_factory=list)
    incidents: int = 0
    penalty_ok: bool = False
    notes: Counter[str] = field(default_factory=Counter)
    #: info notes not folded under the illegal move's incident (``incident`` not its id)
    outside: Counter[str] = field(default_factory=Counter)
    stale: bool = False

    @property
    def stray(self) -> int:
        return sum(n for code, n in self.notes.items() if code not in EXPECTED_NOTES | HAND_NOTES)


def _set_times(rig: Rig, rng: random.Random, changes: dict[chess.Color, float]) -> None:
    """The arbiter sets the times on the paused clock: each side in turn (random order), in one jump or in button
    steps, a reading after each."""
    clock = rig.clock
    sides = [c for c in changes if changes[c]]
    rng.shuffle(sides)
    for color in sides:
        total = changes[color]
        step = rng.choice((0, 60, 10, 1)) if abs(total) <= 120 else rng.choice((0, 60))
        parts = [total] if step == 0 else [step * (1 if total > 0 else -1)] * int(abs(total) // step)
        if step and abs(total) % step:
            parts.append(total - sum(parts))
        for part in parts:
            if color == chess.WHITE:
                clock.white += part
            else:
                clock.black += part
            rig.feed(clock.reading(rig.t))
            rig.t += rng.uniform(0.2, 0.8)
        rig.t += rng.uniform(0.3, 1.5)


def sequence(seed: int, edition: int, tc: str) -> Outcome:
    out = Outcome(edition, tc)
    rng = random.Random(seed * 7919 + edition)
    start = _random_game(rng, rng.randrange(6, 30))
    rig = Rig(None, edition=edition, tc=tc, seconds=float(tc.split("+", maxsplit=1)[0]))
    _open(rig, start)
    offender, opponent = rig.board.turn, not rig.board.turn
    before = rig.board.copy()
    ill = rng.choice(_illegal_moves(rig.board))
    piece = rig.board.piece_at(ill.from_square)
    assert piece is not None
    if rig.board.piece_at(ill.to_square) is not None and rng.random() < 0.5:
        rig.lift(ill.to_square)
        rig.t += rng.uniform(0.1, 0.6)
    rig.by_hand(rng, ill, piece)
    rig.press(offender)
    rig.t += rng.uniform(0.5, 4.0)
    rig.outs += rig.engine.advance(rig.t)
    first = rig.strong()
    if len(first) != 1 or not is_illegal_move_class(first[0].code, edition):
        out.problems.append(f"at the press: {[(i.code, i.subtype) for i in first]}")
        return out
    finding = first[0]
    penalty, increment = expected_penalty(edition, tc), CONTROLS[tc][1]
    out.penalty_ok = (finding.suggestion.add_to_opponent_s == penalty
                      and finding.suggestion.remove_from_offender_s == increment)
    if not out.penalty_ok:
        out.problems.append(f"penalty {finding.suggestion.add_to_opponent_s} / increment "
                            f"{finding.suggestion.remove_from_offender_s} != {penalty} / {increment}")

    # the arbiter: the pause, the pieces, the times, in a random order; the restart last
    hands = random_hands(rng, noisy=True)
    steps = list(restore_steps(rng, rig.phys, before, hands))
    split = rng.choice((0, 0, len(steps) // 2, len(steps)))  # steps before the pause (0: paused first)
    times_first = rng.random() < 0.4
    changes = {opponent: float(penalty), offender: -float(increment)}

    paused_at: list[tuple[float, float]] = []

    def pause() -> None:
        stale = rng.random() < 0.5
        out.stale = stale
        rig.feed(rig.clock.pause(rig.t, round(rng.uniform(0.1, 2.9), 2) if stale else 0.0))
        paused_at.append((rig.clock.white, rig.clock.black))  # the true times of the pause (the clock's, not read)
        rig.t += rng.uniform(0.5, 2.0)  # the next reading (the DgtPi's period): the true time
        rig.feed(rig.clock.reading(rig.t))
        rig.t += rng.uniform(0.2, 1.5)

    run_steps(rig, rng, iter(steps[:split]), hands)
    pause()
    if times_first:
        _set_times(rig, rng, changes)
    run_steps(rig, rng, iter(steps[split:]), hands)
    rig.t += rng.uniform(0.3, 2.0)
    if not times_first:
        _set_times(rig, rng, changes)
    clock = rig.clock
    if rng.random() < 0.5:  # the lever to the offender's side while paused, then play
        clock.lever = offender
        rig.feed(clock.reading(rig.t))
        rig.t += rng.uniform(0.3, 1.0)
        rig.feed(clock.resume(rig.t))
    else:  # play (the opponent's side runs again), then the arbiter presses it: the offender's clock runs
        rig.feed(clock.resume(rig.t))
        rig.t += rng.uniform(0.5, 1.5)
        if clock.running != offender:
            rig.press(opponent)
    rig.t += rng.uniform(0.3, 1.0)
    _finish(rig, rng, ill.from_square)

    truth = [m.uci() for m in rig.board.move_stack]
    if rig.record() != truth:
        out.problems.append(f"record {rig.record()} != game {truth}")
    final = {i.id: i for i in rig.engine.irregularities}
    strong = [i for i in rig.strong() if not (i.id != finding.id and i.incident == finding.id
                                               and final[i.id].status is Status.RESOLVED)]
    out.incidents = len({i.incident or i.id for i in strong})
    if [(i.code, i.subtype) for i in strong] != [(finding.code, finding.subtype)]:
        out.problems.append(f"findings {[(i.code, i.subtype) for i in strong]}")
    if final[finding.id].status is not Status.RESOLVED:
        out.problems.append(f"finding not resolved: {final[finding.id].status}")
    infos = [i for i in rig.raised() if i.severity is Severity.INFO]
    out.notes = Counter(i.code for i in infos)
    out.outside = Counter(i.code for i in infos if i.incident != (finding.incident or finding.id)
                          and i.t_raised <= _replaced_at(rig, finding.ply))
    if out.stray or out.notes["CLOCK_PAUSED"] != 1:
        out.problems.append(f"notes {dict(out.notes)}")
    if out.outside:  # one incident, one alert: the notes of the correction fold under it (the tablet's one item)
        out.problems.append(f"notes outside the incident {dict(out.outside)}")
    # the times of the pause, however late its reading: within two display steps (a reading less late than that is
    # the two readings' own seconds, and stands), and the text's rounding
    white, black = paused_at[0]
    told = _SHOWED.search(final[finding.id].suggestion.text or "")
    if told is None or abs(_seconds(told[1]) - white) > 2.5 or abs(_seconds(told[2]) - black) > 2.5:
        out.problems.append(f"suggested times not those of the pause (White {_hms(white)}, Black {_hms(black)}): "
                            f"{final[finding.id].suggestion.text}")
    return out


_SHOWED = re.compile(r"it showed White (\d+:\d\d:\d\d), Black (\d+:\d\d:\d\d) when the arbiter took it")


def _seconds(hms: str) -> int:
    h, m, s = (int(x) for x in hms.split(":"))
    return 3600 * h + 60 * m + s


def _replaced_at(rig: Rig, ply: int) -> float:
    """When the replacement move was completed (the end of the correction)."""
    moves = rig.engine.state.moves
    done = moves[ply].completed_at if len(moves) > ply else None
    return float("inf") if done is None else done


def _cases(edition: int) -> list[tuple[int, str]]:
    rng = random.Random(5105 + edition)
    return [(seed, rng.choice(list(CONTROLS))) for seed in range(PER_EDITION)]


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_arbiters_correction_gives_one_incident_the_right_penalty_and_no_stray_note(edition: int) -> None:
    outcomes = [sequence(seed, edition, tc) for seed, tc in _cases(edition)]
    bad = [(seed, tc, o.problems) for (seed, tc), o in zip(_cases(edition), outcomes, strict=True) if o.problems]
    assert bad == [], f"{len(bad)} of {len(outcomes)}: {bad[:5]}"
    assert {o.tc for o in outcomes} == set(CONTROLS)  # (every category is audited)
    assert sum(o.stale for o in outcomes) >= PER_EDITION // 4  # (late pause readings are audited)


def table() -> str:
    rows = ["edition | control (penalty) | sequences | one incident | right penalty and increment | stray notes | "
            "late pause readings | notes seen (outside the incident)"]
    for edition in EDITIONS:
        by_tc: dict[str, list[Outcome]] = {}
        for seed, tc in _cases(edition):
            by_tc.setdefault(tc, []).append(sequence(seed, edition, tc))
        for tc in CONTROLS:
            got = by_tc.get(tc, [])
            notes: Counter[str] = Counter()
            outside: Counter[str] = Counter()
            for o in got:
                notes.update(o.notes)
                outside.update(o.outside)
            seen = ", ".join(f"{code} {n} ({outside[code]})" for code, n in sorted(notes.items()))
            rows.append(f"E{edition} | {tc} ({CONTROLS[tc][0]}, +{expected_penalty(edition, tc) // 60}:00) | "
                        f"{len(got)} | {sum(o.incidents == 1 for o in got)} | {sum(o.penalty_ok for o in got)} | "
                        f"{sum(o.stray for o in got)} | {sum(o.stale for o in got)} | {seen}")
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(table() + "\n")
