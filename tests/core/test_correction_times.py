"""The clock after an illegal move's correction, compared with the suggestion (rules-spec R21, 7.1, 7.5.5).

R21: the arbiter is offered (a) the penalty to add to the opponent (7.5.5), (b) the increment the offender earned
by the illegal press, to take back (Arbiters' Manual), (c) the time spent since, at his judgement (7.1: which
includes leaving the times unchanged). The suggestion says what times the clock should show: once the clock is
paused in the cycle (the arbiter at the board) the illegal move's finding is updated with them, counted from the
times it showed then, (a) and (b) applied. After the replacement move, the times he set are compared with (a)
and (b), each side that the suggestion names: a difference of 2 s or more (a reading is to the second,
protocols.md §1.7.1: a change read as two readings' difference is off by up to 1 s either way) is one info note
``ARBITER_ADJUST`` of the incident, naming both sides; none when they agree. (c) is never compared.

Before: only the penalty (a) was compared; the increment taken back (or not) was reported in the ruling only, and
the suggestion never said what times to set.
"""

from __future__ import annotations

import pytest

from boardd.core.engine import Engine
from boardd.core.outputs import Irregularity, IrregularityUpdated, Output, Status
from tests.core.test_illegal_count import _found, _play

#: 4.Nf3-f5 (illegal) pressed, the clock paused, the knight put back, {times}, the lever to White, resumed; White
#: replaces it with the knight (touch-move) and presses
_CYCLE = ("0 L f3 · 300 P f5 wN · 700 C W · 1500 PAUSE · 2000 L f5 · 2300 P f3 wN · {times}3800 LEVERX W · "
          "4000 RESUME · 5000 L f3 · 5300 P h4 wN · 5700 C W · 6500 L g8 · 6800 P f6 bN · 7100 C B")


def _cycle(times: str, tc: str) -> tuple[Engine, list[Output]]:
    steps = "".join(f"{3000 + 100 * i} ADD {item} · " for i, item in enumerate(times.split(",")) if item)
    return _play("L", _CYCLE.format(times=steps), tc=tc)


def _adjust(engine: Engine) -> list[Irregularity]:
    return _found(engine, "ARBITER_ADJUST")


def _check_rest(engine: Engine) -> Irregularity:
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.RESOLVED
    assert [m.uci for m in engine.state.moves][-2:] == ["f3h4", "g8f6"]
    strong = [i.code for i in engine.irregularities if i.severity.value != "info"]
    assert strong == ["ILLEGAL_MOVE"], strong
    return illegal


@pytest.mark.parametrize("tc", ["5400+30", "40/5400+30:1800+30", "900+10", "5400"])
def test_the_suggestion_says_what_times_the_clock_should_show(tc: str) -> None:
    """At the pause the illegal move's finding is updated once: the times the clock should show (the pause's,
    +2:00 (standard) / +1:00 (rapid 2023) for Black, White's increment taken back)."""
    engine, outs = _cycle("B 120,W -30", tc)
    illegal = _check_rest(engine)
    inc = {"5400+30": 30, "40/5400+30:1800+30": 30, "900+10": 10, "5400": 0}[tc]
    penalty = 60 if tc == "900+10" else 120
    text = illegal.suggestion.text
    assert "the clock should show White " in text, text
    updates = [o.irregularity for o in outs if isinstance(o, IrregularityUpdated) and o.irregularity.id == illegal.id]
    # told while the finding is still open (at the pause, before the pieces are back), and the same text after
    assert updates[0].status is Status.OPEN and updates[0].suggestion.text == text
    assert {u.suggestion.text for u in updates} == {text}
    shown = text.split("it showed White ")[1]
    w0, b0 = shown.split(", Black ")[0], shown.split(", Black ")[1].split(" ")[0]
    should = text.split("the clock should show White ")[1]
    w1, b1 = should.split(", Black ")[0], should.split(", Black ")[1].split(" ")[0]

    def secs(hms: str) -> int:
        h, m, s = (int(x) for x in hms.split(":"))
        return 3600 * h + 60 * m + s

    assert secs(w0) - secs(w1) == inc and secs(b1) - secs(b0) == penalty


@pytest.mark.parametrize("tc", ["5400+30", "900+10"])
def test_penalty_and_increment_as_suggested_no_note(tc: str) -> None:
    penalty = 60 if tc == "900+10" else 120
    inc = 10 if tc == "900+10" else 30
    engine, _ = _cycle(f"B {penalty},W -{inc}", tc)
    illegal = _check_rest(engine)
    assert _adjust(engine) == []
    assert illegal.ruling is not None and illegal.ruling.endswith(f"seen on the clock for Black; -0:{inc:02d} for "
                                                                  "the offender")


@pytest.mark.parametrize("tc", ["5400+30", "900+10"])
def test_the_increment_not_taken_back_is_one_note(tc: str) -> None:
    """The penalty added, the increment of the illegal press left to White: one note naming White's difference
    (before: none, only the penalty was compared)."""
    penalty = 60 if tc == "900+10" else 120
    inc = 10 if tc == "900+10" else 30
    engine, _ = _cycle(f"B {penalty}", tc)
    illegal = _check_rest(engine)
    (note,) = _adjust(engine)
    assert note.incident == illegal.id and note.status is Status.NOTED
    assert f"off by White +0:{inc:02d}" in note.suggestion.text, note.suggestion.text
    assert "Black" not in note.suggestion.text.split("off by ")[1].split(" (")[0]


def test_no_increment_in_the_control_nothing_to_take_back() -> None:
    """Without an increment the suggestion names only the penalty: White's time untouched is no difference."""
    engine, _ = _cycle("B 120", "5400")
    _check_rest(engine)
    assert _adjust(engine) == []


def test_nothing_set_one_note_naming_both_sides() -> None:
    """7.1: the arbiter may leave the times unchanged; the record says so once, both sides in one note."""
    engine, _ = _cycle("", "5400+30")
    _check_rest(engine)
    (note,) = _adjust(engine)
    assert "off by Black -2:00, White +0:30" in note.suggestion.text, note.suggestion.text


@pytest.mark.parametrize(("times", "noted"), [("B 121,W -31", False), ("B 119,W -29", False),
                                              ("B 123,W -30", True), ("B 120,W -27", True)])
def test_the_tolerance_is_the_readings_resolution(times: str, noted: bool) -> None:
    """A second either way is the readings' resolution (whole seconds): no note; three seconds is a difference."""
    engine, _ = _cycle(times, "5400+30")
    _check_rest(engine)
    assert bool(_adjust(engine)) is noted
