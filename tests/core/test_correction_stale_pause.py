"""The pause of an illegal move's correction read from a clock that reports late (protocols.md §2.5; 6.11, 7.1).

The DgtPi reads the DGT 3000's time about every 2 s, and "needs 2secs for a stopped clock to return the correct(!)
time" (protocols.md §2.5, picochess): the first reading of a pause may show the side that ran as it was up to the
reading period (2 s) plus the display's second (1 s) before; the next reading shows the true time. Before, the
engine took the stale reading as the times "when the arbiter took the clock": the true time that followed read as
the arbiter taking seconds off the side that ran, and after the replacement move the comparison with the suggestion
gave a spurious ``ARBITER_ADJUST`` note (``off by Black -0:02``), or the ruling named a change nobody made. Now a
reading within that period after the pause that only lowers the side that ran, by at most that much, is the pause's
own time settling.
"""

from __future__ import annotations

import random

import pytest

from boardd.core.engine import Engine
from boardd.core.outputs import IrregularityUpdated, Output, Status
from tests.core.test_illegal_count import _found, _play

#: 4.Nf3-f5 (illegal) pressed (Black's clock runs), the clock paused ({stale}: the pause's reading late), a reading
#: {tick} later with the true time, the knight put back, {times}, the lever to White, resumed; White replaces the
#: move with the knight (touch-move) and presses; Black replies
_CYCLE = ("0 L f3 · 300 P f5 wN · 700 C W · 1500 PAUSE {stale} · {tick} TICK · 5000 L f5 · 5300 P f3 wN · "
          "{times}7800 LEVERX W · 8000 RESUME · 9000 L f3 · 9300 P h4 wN · 9700 C W · 10500 L g8 · 10800 P f6 bN · "
          "11100 C B")


def _cycle(stale: float, tick_ms: int, times: str, tc: str = "5400+30") -> tuple[Engine, list[Output]]:
    steps = "".join(f"{6000 + 100 * i} ADD {item} · " for i, item in enumerate(times.split(",")) if item)
    return _play("L", _CYCLE.format(stale=stale, tick=1500 + tick_ms, times=steps), tc=tc)


def _ruling(engine: Engine) -> str:
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.RESOLVED and illegal.ruling is not None
    assert [m.uci for m in engine.state.moves][-2:] == ["f3h4", "g8f6"]
    return illegal.ruling


@pytest.mark.parametrize("stale", [0.0, 1.0, 2.0, 2.9])
@pytest.mark.parametrize("tick_ms", [1000, 2000, 2900])
def test_the_suggested_times_applied_give_no_note(stale: float, tick_ms: int) -> None:
    """The arbiter applies the suggestion (+2:00 to Black, White's 30 s increment taken back): no note, however late
    the pause's reading was (up to the reading period and the display's second)."""
    engine, _ = _cycle(stale, tick_ms, "B 120,W -30")
    assert _found(engine, "ARBITER_ADJUST") == []
    assert _ruling(engine).endswith("; +2:00 seen on the clock for Black; -0:30 for the offender")


@pytest.mark.parametrize("stale", [2.0, 2.9])
def test_times_left_unchanged_name_no_change(stale: float) -> None:
    """The arbiter leaves the times as they are (7.1): the note says so; it names no change of Black's."""
    engine, _ = _cycle(stale, 2000, "")
    (note,) = _found(engine, "ARBITER_ADJUST")
    assert note.suggestion.text.startswith("penalty time applied on the clock: Black's time unchanged, White's time "
                                           "unchanged;"), note.suggestion.text
    assert "seen on the clock" not in _ruling(engine)


@pytest.mark.parametrize("seed", range(20))
def test_randomised_late_pause_readings(seed: int) -> None:
    """Randomised: the pause's reading late by 0-2.9 s, the true reading 0.5-2.9 s later, the penalty applied."""
    rng = random.Random(seed)
    engine, _ = _cycle(round(rng.uniform(0.0, 2.9), 2), rng.randint(500, 2900), "B 120,W -30")
    assert _found(engine, "ARBITER_ADJUST") == []


def test_a_real_change_of_the_side_that_ran_is_still_seen() -> None:
    """Guard: the arbiter gives Black only +1:00 (the 2018 standard penalty is 2:00): the note, off by -1:00."""
    engine, _ = _cycle(2.0, 2000, "B 60,W -30")
    (note,) = _found(engine, "ARBITER_ADJUST")
    assert "off by Black -1:00" in note.suggestion.text, note.suggestion.text


def test_a_pause_shorter_than_the_reading_period_settles_at_the_restart() -> None:
    """The knight put back at once and the clock restarted within the DgtPi's reading period, the times left as they
    were: the true time of the side that ran comes only with the restart's reading. It settles the pause's time
    there too: the ruling names no change of Black's time (before: "-0:02 seen on the clock for Black")."""
    text = ("0 L f3 · 300 P f5 wN · 700 C W · 1500 PAUSE 2 · 1700 L f5 · 2000 P f3 wN · 2400 LEVERX W · "
            "2600 RESUME · 3600 L f3 · 3900 P h4 wN · 4300 C W · 5100 L g8 · 5400 P f6 bN · 5700 C B")
    engine, _ = _play("L", text, tc="5400+30")
    assert "seen on the clock" not in _ruling(engine), _ruling(engine)


@pytest.mark.parametrize("stale", [0.0, 2.0, 2.5, 2.9])
def test_the_times_suggested_at_the_pause_are_those_of_the_pause(stale: float) -> None:
    """The suggestion told at the pause ("the clock should show ...; it showed ... when the arbiter took it") gives the
    times of the moment of the pause, however late the pause's own reading shows the side that ran: Black's time is
    reckoned from the reading before the pause (his clock ran from White's press at 0.7 s to the pause at 1.5 s).
    Before, it gave the late reading: Black 1:29:59 and 1:31:59 for a reading 2 s late."""
    engine, outs = _cycle(stale, 2000, "B 120,W -30")
    told = [o.irregularity.suggestion.text for o in outs if isinstance(o, IrregularityUpdated)
            and o.irregularity.code == "ILLEGAL_MOVE" and "the clock should show" in o.irregularity.suggestion.text]
    assert told, "no suggestion of the times"
    assert told[0].endswith("; the clock should show White 1:29:15, Black 1:31:57 (it showed White 1:29:45, Black "
                            "1:29:57 when the arbiter took it; the rest at his judgement, 7.1)"), told[0]
    assert _found(engine, "ARBITER_ADJUST") == []


@pytest.mark.parametrize("seed", range(12))
def test_randomised_late_pause_readings_suggest_the_pause_times(seed: int) -> None:
    """Randomised: the pause's reading late by 2-2.9 s (two display steps or more: less is the readings' own seconds),
    the true reading 0.5-2.9 s later; the suggestion gives the times of the pause (as with a reading on time), and the
    suggested times applied give no note."""
    rng = random.Random(1000 + seed)
    stale, tick = round(rng.uniform(2.0, 2.9), 2), rng.randint(500, 2900)
    on_time, _ = _cycle(0.0, tick, "B 120,W -30")
    late, _ = _cycle(stale, tick, "B 120,W -30")
    (a,), (b,) = _found(on_time, "ILLEGAL_MOVE"), _found(late, "ILLEGAL_MOVE")
    assert b.suggestion.text == a.suggestion.text
    assert _found(late, "ARBITER_ADJUST") == []
