"""Tests of boardd.core.clock: TimeControl parse/format and the sans-I/O ClockModel (rules-spec 7.2-7.5)."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from boardd.core.clock import BonusMode, ClockModel, Period, PressResult, TimeControl
from boardd.core.errors import ConfigError

W, B = chess.WHITE, chess.BLACK

OLYMPIAD = "40/5400+30:1800+30"
CANDIDATES = "40/6000+30:20/3000+30:900+30"


# --- TimeControl.parse / pgn ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("300", TimeControl(periods=(Period(None, 300),))),
        ("900+10", TimeControl(periods=(Period(None, 900),), bonus_mode=BonusMode.FISCHER, bonus_s=10)),
        ("180+2", TimeControl(periods=(Period(None, 180),), bonus_mode=BonusMode.FISCHER, bonus_s=2)),
        ("5400+30", TimeControl(periods=(Period(None, 5400),), bonus_mode=BonusMode.FISCHER, bonus_s=30)),
        (OLYMPIAD, TimeControl(periods=(Period(40, 5400), Period(None, 1800)), bonus_mode=BonusMode.FISCHER,
                               bonus_s=30)),
        (CANDIDATES, TimeControl(periods=(Period(40, 6000), Period(20, 3000), Period(None, 900)),
                                 bonus_mode=BonusMode.FISCHER, bonus_s=30)),
        ("5400d5", TimeControl(periods=(Period(None, 5400),), bonus_mode=BonusMode.DELAY_SIMPLE, bonus_s=5)),
        ("5400b5", TimeControl(periods=(Period(None, 5400),), bonus_mode=BonusMode.DELAY_BRONSTEIN, bonus_s=5)),
        ("40/7200:20/3600:900+30", TimeControl(periods=(Period(40, 7200), Period(20, 3600), Period(None, 900)),
                                               bonus_mode=BonusMode.FISCHER, bonus_s=30, bonus_from_move=61)),
        ("40/9000", TimeControl(periods=(Period(40, 9000),))),
        ("-", TimeControl(periods=())),
        ("?", TimeControl(periods=())),
        (" 900+10 ", TimeControl(periods=(Period(None, 900),), bonus_mode=BonusMode.FISCHER, bonus_s=10)),
    ],
)
def test_parse(text: str, expected: TimeControl) -> None:
    assert TimeControl.parse(text) == expected


@pytest.mark.parametrize("text", ["300", "900+10", OLYMPIAD, CANDIDATES, "5400d5", "5400b5", "40/7200:20/3600:900+30",
                                  "40/9000", "-"])
def test_pgn_round_trip_of_canonical_text(text: str) -> None:
    assert TimeControl.parse(text).pgn() == text


@pytest.mark.parametrize(
    "text",
    ["abc", "40/", "-5", "", "   ", "40/5400+30:", ":300", "300:40/5400", "900+10:900+5", "900+", "9x", "*180",
     "40/0", "0", "0+30", "40/5400+30:1800d30", "40/5400+30:1800", "300-2", "1e3"],
)
def test_parse_rejects_garbage(text: str) -> None:
    with pytest.raises(ConfigError):
        TimeControl.parse(text)


def test_parse_rejects_non_string() -> None:
    with pytest.raises(ConfigError, match="string"):
        TimeControl.parse(300)  # type: ignore[arg-type]


def test_parse_error_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"field 2 'x'"):
        TimeControl.parse("40/5400:x")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"periods": (Period(None, 300), Period(None, 300))},
        {"periods": (Period(None, 300),), "bonus_mode": BonusMode.FISCHER, "bonus_s": 0},
        {"periods": (Period(None, 300),), "bonus_s": 5},
        {"periods": (Period(40, 300), Period(None, 300)), "bonus_mode": BonusMode.FISCHER, "bonus_s": 5,
         "bonus_from_move": 30},
        {"periods": (), "bonus_mode": BonusMode.FISCHER, "bonus_s": 5},
        {"periods": [Period(None, 300)]},
    ],
)
def test_invalid_time_controls_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        TimeControl(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("moves", "seconds"), [(0, 300), (None, 0), (None, -1), (-3, 300)])
def test_invalid_periods_are_rejected(moves: int | None, seconds: int) -> None:
    with pytest.raises(ConfigError):
        Period(moves, seconds)


_periods = st.lists(st.tuples(st.integers(1, 80), st.integers(1, 20000)), min_size=0, max_size=3)


@st.composite
def time_controls(draw: st.DrawFn) -> TimeControl:
    head = draw(_periods)
    last_moves = draw(st.one_of(st.none(), st.integers(1, 80)))
    periods = (*(Period(m, s) for m, s in head), Period(last_moves, draw(st.integers(1, 20000))))
    mode = draw(st.sampled_from(list(BonusMode)))
    if mode is BonusMode.NONE:
        return TimeControl(periods=periods)
    starts = [1]
    for period in periods[:-1]:
        starts.append(starts[-1] + (period.moves or 0))
    return TimeControl(periods=periods, bonus_mode=mode, bonus_s=draw(st.integers(1, 60)),
                       bonus_from_move=draw(st.sampled_from(starts)))


@given(time_controls())
def test_parse_inverts_pgn(tc: TimeControl) -> None:
    assert TimeControl.parse(tc.pgn()) == tc


@given(time_controls(), st.integers(1, 300))
def test_period_of_move_is_monotonic_and_consistent(tc: TimeControl, move_no: int) -> None:
    index = tc.period_of_move(move_no)
    assert index <= tc.period_of_move(move_no + 1) <= index + 1
    # The period's cumulative end (if any) is at or after the move.
    end = tc._period_end(index)
    assert end is None or move_no <= end


# --- Derived values -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "base", "t60_minutes"),
    [
        ("180+2", 180, 5),
        ("900+10", 900, 25),
        (OLYMPIAD, 7200, 150),
        (CANDIDATES, 9000, 180),  # the 15-minute period starts at move 61: outside the first 60 moves
        ("40/7200:20/3600:900+30", 10800, 180),  # third period starts at move 61: excluded, so is its bonus
        ("40/9000", 18000, 300),  # a repeating 40-move period: moves 1 and 41 start within 60
        ("5400d5", 5400, 95),
    ],
)
def test_base_and_t60(text: str, base: int, t60_minutes: float) -> None:
    tc = TimeControl.parse(text)
    assert tc.base_s == base
    assert tc.t60_s == t60_minutes * 60


@pytest.mark.parametrize(
    ("text", "move_no", "index"),
    [(OLYMPIAD, 1, 0), (OLYMPIAD, 40, 0), (OLYMPIAD, 41, 1), (OLYMPIAD, 200, 1), (CANDIDATES, 60, 1),
     (CANDIDATES, 61, 2), ("300", 1, 0), ("40/9000", 81, 2)],
)
def test_period_of_move(text: str, move_no: int, index: int) -> None:
    assert TimeControl.parse(text).period_of_move(move_no) == index


@pytest.mark.parametrize("move_no", [0, -1])
def test_period_of_move_rejects_bad_numbers(move_no: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        TimeControl.parse("300").period_of_move(move_no)


def test_untimed_control() -> None:
    tc = TimeControl.parse("-")
    assert not tc.is_timed
    assert tc.pgn() == "-"
    with pytest.raises(ConfigError):
        ClockModel(tc)


def _running(clock: ClockModel) -> chess.Color | None:
    """Read ``running`` through a call, so that mypy does not keep an earlier narrowing."""
    return clock.running


# --- ClockModel: basics ------------------------------------------------------------------------


def test_not_started() -> None:
    clock = ClockModel(TimeControl.parse("300"))
    assert clock.running is None
    assert clock.active is None
    assert not clock.paused
    assert clock.remaining(W, 100.0) == 300.0
    assert clock.flag_time(W) is None
    assert not clock.flagged(W, 1000.0)


def test_sudden_death_runs_down_and_switches() -> None:
    clock = ClockModel(TimeControl.parse("300"))
    clock.start(10.0)
    assert clock.running == W
    assert clock.remaining(W, 40.0) == pytest.approx(270.0)
    assert clock.remaining(B, 40.0) == 300.0
    result = clock.press(W, 40.0)
    assert result == PressResult(side=W, at=40.0, bonus_s=0.0, period_added_s=0, moves_completed=1, remaining_s=270.0)
    assert clock.running == B
    assert clock.remaining(W, 100.0) == pytest.approx(270.0)
    assert clock.remaining(B, 100.0) == pytest.approx(240.0)
    assert clock.moves_completed(W) == 1
    assert clock.moves_completed(B) == 0


def test_fischer_increment_at_the_press() -> None:
    clock = ClockModel(TimeControl.parse("180+2"))
    clock.start(0.0)
    result = clock.press(W, 5.0)
    assert result.bonus_s == 2.0
    assert result.remaining_s == pytest.approx(177.0)
    result = clock.press(B, 15.0)
    assert result.remaining_s == pytest.approx(172.0)


def test_simple_delay_main_time_stands_still_and_is_not_banked() -> None:
    clock = ClockModel(TimeControl.parse("300d5"))
    clock.start(0.0)
    assert clock.remaining(W, 4.0) == 300.0  # inside the delay: no decrease
    result = clock.press(W, 3.0)  # pressed within the delay: main time unchanged, 2 s not banked
    assert result.remaining_s == 300.0
    assert result.bonus_s == pytest.approx(3.0)
    clock.press(B, 11.0)  # Black used 8 s: 5 s delay + 3 s of main time
    assert clock.remaining(B, 11.0) == pytest.approx(297.0)
    assert clock.remaining(W, 11.0) == 300.0  # the delay restarts at White's new turn
    assert clock.remaining(W, 20.0) == pytest.approx(296.0)


def test_bronstein_credits_the_time_used_up_to_the_delay() -> None:
    clock = ClockModel(TimeControl.parse("300b5"))
    clock.start(0.0)
    assert clock.remaining(W, 3.0) == pytest.approx(297.0)  # main time runs at once
    result = clock.press(W, 3.0)
    assert result.bonus_s == pytest.approx(3.0)
    assert result.remaining_s == pytest.approx(300.0)
    result = clock.press(B, 11.0)
    assert result.bonus_s == pytest.approx(5.0)
    assert result.remaining_s == pytest.approx(297.0)


def test_bronstein_flag_can_fall_inside_the_delay_window_but_simple_delay_cannot() -> None:
    bronstein = ClockModel(TimeControl.parse("300b5"))
    simple = ClockModel(TimeControl.parse("300d5"))
    for clock in (bronstein, simple):
        clock.start(0.0)
        clock.set_times(0.0, 2.0, 300.0)
    # 3 s into the move: Bronstein's main time (2 s) is gone; the simple delay still protects it.
    assert bronstein.flagged(W, 3.0)
    assert bronstein.flag_time(W) == pytest.approx(2.0)
    assert not simple.flagged(W, 3.0)
    assert simple.flag_time(W) == pytest.approx(7.0)
    assert simple.remaining(W, 6.0) == pytest.approx(1.0)


def test_t55a_fortieth_move_with_12_seconds_left() -> None:
    clock = ClockModel(TimeControl.parse(OLYMPIAD))
    clock.start(0.0)
    at = 0.0
    for _ in range(39):
        at += 10.0
        clock.press(W, at)
        at += 10.0
        clock.press(B, at)
    clock.set_times(at, 12.0 + 20.0, clock.remaining(B, at))  # White will press move 40 with 12 s left
    result = clock.press(W, at + 20.0)
    assert result.moves_completed == 40
    assert result.period_added_s == 1800
    assert result.bonus_s == 30.0
    assert result.remaining_s == pytest.approx(1842.0)


def test_candidates_three_periods_time_carries_over() -> None:
    clock = ClockModel(TimeControl.parse(CANDIDATES))
    clock.start(0.0)
    at = 0.0
    added: dict[int, int] = {}
    for move_no in range(1, 62):
        at += 60.0
        result = clock.press(W, at)
        if result.period_added_s:
            added[move_no] = result.period_added_s
        at += 1.0
        clock.press(B, at)
    assert added == {40: 3000, 60: 900}
    # 6000 + 3000 + 900 + 61 x 30 s increment - 61 x 60 s used
    assert clock.remaining(W, at) == pytest.approx(6000 + 3000 + 900 + 61 * 30 - 61 * 60)
    assert clock.period_index(W) == 2


def test_repeating_last_period_keeps_adding() -> None:
    clock = ClockModel(TimeControl.parse("2/100"))
    clock.start(0.0)
    adds = []
    for at in range(1, 13, 2):
        adds.append(clock.press(W, float(at)).period_added_s)
        clock.press(B, float(at + 1))
    assert adds == [0, 100, 0, 100, 0, 100]


def test_no_bonus_from_move_before_the_bonus_starts() -> None:
    clock = ClockModel(TimeControl.parse("1/100:100+30"))
    clock.start(0.0)
    first = clock.press(W, 10.0)
    assert first.bonus_s == 0.0
    assert first.period_added_s == 100
    clock.press(B, 20.0)
    assert clock.press(W, 30.0).bonus_s == 30.0


# --- Pause, resume, flags, odd presses ----------------------------------------------------------


def test_pause_time_belongs_to_nobody() -> None:
    clock = ClockModel(TimeControl.parse("300"))
    clock.start(0.0)
    clock.pause(10.0)
    assert clock.paused
    assert clock.running is None
    assert clock.active == W
    assert clock.flag_time(W) is None
    assert clock.remaining(W, 500.0) == pytest.approx(290.0)
    clock.resume(510.0)
    assert _running(clock) == W
    assert clock.remaining(W, 520.0) == pytest.approx(280.0)


def test_pause_keeps_the_delay_already_used() -> None:
    clock = ClockModel(TimeControl.parse("300d5"))
    clock.start(0.0)
    clock.pause(3.0)
    clock.resume(100.0)
    # 3 s of delay used before the pause: 2 s left, then main time runs.
    assert clock.remaining(W, 104.0) == pytest.approx(298.0)


def test_resume_for_the_other_side_changes_turn_without_bonus() -> None:
    clock = ClockModel(TimeControl.parse("300+5"))
    clock.start(0.0)
    clock.pause(10.0)
    clock.resume(20.0, side=B)
    assert clock.running == B
    assert clock.moves_completed(W) == 0
    assert clock.remaining(W, 30.0) == pytest.approx(290.0)
    assert clock.remaining(B, 30.0) == pytest.approx(290.0)


def test_press_while_paused_selects_the_side_for_resume() -> None:
    clock = ClockModel(TimeControl.parse("300+5"))
    clock.start(0.0)
    clock.pause(10.0)
    result = clock.press(W, 15.0)
    assert result.bonus_s == 0.0
    assert result.moves_completed == 0
    assert clock.paused
    clock.resume(20.0)
    assert clock.running == B
    assert clock.remaining(W, 25.0) == pytest.approx(290.0)


def test_press_by_black_before_the_start_starts_whites_clock() -> None:
    clock = ClockModel(TimeControl.parse("300"))
    result = clock.press(B, 5.0)
    assert result.moves_completed == 0
    assert clock.running == W
    assert clock.remaining(W, 15.0) == pytest.approx(290.0)


def test_press_on_the_stopped_side_is_ignored() -> None:
    clock = ClockModel(TimeControl.parse("300+5"))
    clock.start(0.0)
    clock.press(W, 10.0)
    result = clock.press(W, 12.0)
    assert result.moves_completed == 1
    assert result.bonus_s == 0.0
    assert clock.running == B
    assert clock.remaining(B, 12.0) == pytest.approx(298.0)


def test_flag_time_and_flagged() -> None:
    clock = ClockModel(TimeControl.parse("60"))
    clock.start(100.0)
    assert clock.flag_time(W) == pytest.approx(160.0)
    assert clock.flag_time(B) is None
    assert not clock.flagged(W, 159.9)
    assert clock.flagged(W, 160.0)
    assert clock.remaining(W, 200.0) == 0.0  # never negative


def test_no_increment_after_the_flag_in_the_last_period() -> None:
    clock = ClockModel(TimeControl.parse("60+30"))
    clock.start(0.0)
    result = clock.press(W, 61.0)
    assert result.bonus_s == 0.0
    assert result.remaining_s == 0.0
    assert clock.flagged(W, 61.0)
    assert clock.flag_fallen_at(W) == pytest.approx(60.0)


@pytest.mark.parametrize("text", ["60d5", "60b5"])
def test_no_delay_credit_after_the_flag_in_the_last_period(text: str) -> None:
    clock = ClockModel(TimeControl.parse(text))
    clock.start(0.0)
    result = clock.press(W, 70.0)
    assert result.bonus_s == 0.0
    assert result.remaining_s == 0.0


def test_flag_in_an_earlier_period_is_remembered_and_the_next_period_still_comes() -> None:
    clock = ClockModel(TimeControl.parse("1/60+30:600+30"))
    clock.start(0.0)
    result = clock.press(W, 70.0)
    assert result.bonus_s == 30.0  # not the last period: equipment standard 5.1 I does not apply
    assert result.period_added_s == 600
    assert result.remaining_s == pytest.approx(630.0)
    assert clock.flagged(W, 70.0)
    assert clock.flag_fallen_at(W) == pytest.approx(60.0)


def test_set_times_and_counters() -> None:
    clock = ClockModel(TimeControl.parse(OLYMPIAD))
    clock.start(0.0)
    clock.press(W, 100.0)
    clock.set_times(200.0, 5000.0, 4000.0, moves_white=3, moves_black=2)
    assert clock.remaining(W, 200.0) == 5000.0
    assert clock.remaining(B, 200.0) == pytest.approx(4000.0)
    assert clock.remaining(B, 210.0) == pytest.approx(3990.0)
    assert clock.moves_completed(W) == 3
    assert clock.moves_completed(B) == 2


def test_set_times_clears_a_flag() -> None:
    clock = ClockModel(TimeControl.parse("60"))
    clock.start(0.0)
    clock.pause(70.0)
    assert clock.flagged(W, 70.0)
    clock.set_times(70.0, 120.0, 60.0)
    assert not clock.flagged(W, 70.0)


@pytest.mark.parametrize(("white", "black", "mw"), [(-1.0, 0.0, None), (float("nan"), 0.0, None),
                                                    (0.0, float("inf"), None), (1.0, 1.0, -1)])
def test_set_times_rejects_bad_values(white: float, black: float, mw: int | None) -> None:
    clock = ClockModel(TimeControl.parse("60"))
    with pytest.raises(ValueError):
        clock.set_times(0.0, white, black, moves_white=mw)


def test_time_going_backwards_does_not_add_time() -> None:
    clock = ClockModel(TimeControl.parse("300"))
    clock.start(10.0)
    assert clock.remaining(W, 5.0) == 300.0
    result = clock.press(W, 5.0)
    assert result.remaining_s == 300.0


# --- observe ------------------------------------------------------------------------------------


def test_observe_accepts_a_consistent_reading() -> None:
    clock = ClockModel(TimeControl.parse("900+10"))
    clock.start(0.0)
    clock.press(W, 30.0)
    # A clock with whole-second resolution: Black has 900 - 12.4 = 887.6, shown as 887.
    assert clock.observe(42.4, 880.0, 887.0, B) == []


def test_observe_detects_a_time_mismatch_and_the_running_side() -> None:
    clock = ClockModel(TimeControl.parse("900+10"))
    clock.start(0.0)
    clock.press(W, 30.0)
    problems = clock.observe(42.4, 1000.0, 887.0, W)
    assert len(problems) == 2
    assert problems[0].startswith("white: clock shows 1000.0 s, model expects 880.0 s (+120.0 s)")
    assert problems[1] == "running: clock shows white, model expects black"


def test_observe_ignores_missing_times_and_respects_tolerance() -> None:
    clock = ClockModel(TimeControl.parse("900"))
    clock.start(0.0)
    assert clock.observe(10.0, None, None, W) == []
    assert clock.observe(10.0, 892.0, 900.0, W, tolerance_s=2.0) == []
    assert clock.observe(10.0, 892.0, 900.0, W, tolerance_s=1.0) != []


def test_observe_while_paused_expects_nothing_running() -> None:
    clock = ClockModel(TimeControl.parse("900"))
    clock.start(0.0)
    clock.pause(10.0)
    assert clock.observe(20.0, 890.0, 900.0, None) == []
    assert clock.observe(20.0, 890.0, 900.0, W) == ["running: clock shows white, model expects none"]


def test_t55c_period_added_early_is_named() -> None:
    # The real clock counted a press without a move at move 20, so it adds the 30 minutes after
    # White's 39th real move; the model (real moves only) still expects one more move first.
    clock = ClockModel(TimeControl.parse(OLYMPIAD))
    clock.start(0.0)
    at = 0.0
    for _ in range(39):
        at += 60.0
        clock.press(W, at)
        at += 60.0
        clock.press(B, at)
    white = clock.remaining(W, at)
    assert clock.moves_to_control(W) == 1
    problems = clock.observe(at, white + 1800.0, clock.remaining(B, at), W)
    assert problems == [f"white: clock shows {white + 1800:.1f} s, model expects {white:.1f} s (+1800.0 s); "
                        "matches the next period's time"]


def test_period_not_added_and_increment_are_named() -> None:
    clock = ClockModel(TimeControl.parse("1/600+30:300+30"))
    clock.start(0.0)
    clock.press(W, 10.0)  # move 1 completes the first period: +30 s and +300 s
    white = clock.remaining(W, 10.0)
    assert white == pytest.approx(920.0)
    assert clock.observe(10.0, white - 300.0, None, B)[0].endswith("; matches the missing period's time")
    assert clock.observe(10.0, white - 30.0, None, B)[0].endswith("; matches one increment")
    assert clock.observe(10.0, white - 77.0, None, B)[0].endswith("(-77.0 s)")


def test_moves_to_control() -> None:
    clock = ClockModel(TimeControl.parse(CANDIDATES))
    clock.start(0.0)
    assert clock.moves_to_control(W) == 40
    clock.press(W, 1.0)
    assert clock.moves_to_control(W) == 39
    assert clock.moves_to_control(B) == 40
    assert ClockModel(TimeControl.parse("300")).moves_to_control(W) is None


# --- Property: time is conserved --------------------------------------------------------------------

_operations = st.lists(
    st.tuples(st.sampled_from(["press_w", "press_b", "pause", "resume", "resume_w", "resume_b", "start"]),
              st.floats(0.0, 50.0, allow_nan=False)),
    max_size=40,
)


@given(_operations, st.sampled_from(["10000", "10/10000+30:10000+30", "3/8000:2/300:9000+5"]))
def test_time_is_conserved(operations: list[tuple[str, float]], text: str) -> None:
    """Whatever the sequence of presses, pauses and resumes: the times shown add up to the initial
    times plus every bonus and period credited, minus the time the clock actually ran."""
    tc = TimeControl.parse(text)
    clock = ClockModel(tc)
    at = 0.0
    ran = 0.0
    credited = 0.0
    for name, step in operations:
        running_before = clock.running
        at += step
        if running_before is not None:
            ran += step
        if name.startswith("press"):
            result = clock.press(W if name == "press_w" else B, at)
            credited += result.bonus_s + result.period_added_s
        elif name == "pause":
            clock.pause(at)
        elif name == "start":
            clock.start(at)
        else:
            side = {"resume": None, "resume_w": W, "resume_b": B}[name]
            clock.resume(at, side)
        assert clock.running is None or not clock.paused
        total = clock.remaining(W, at) + clock.remaining(B, at)
        assert total == pytest.approx(2 * tc.periods[0].seconds + credited - ran)
        assert clock.remaining(W, at) >= 0.0
        assert clock.remaining(B, at) >= 0.0
    # The side not running does not lose time.
    if clock.running is not None:
        idle = not clock.running
        assert clock.remaining(idle, at + 100.0) == clock.remaining(idle, at)
