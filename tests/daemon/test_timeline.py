"""The daemon's time line: Unix seconds at start, monotonic after, never behind the journal."""

from __future__ import annotations

from boardd.daemon.service import TimeLine


class FakeClock:
    def __init__(self, mono: float, wall: float) -> None:
        self.mono = mono
        self.wall = wall

    def monotonic(self) -> float:
        return self.mono

    def time(self) -> float:
        return self.wall


def test_starts_at_wall_time_and_follows_monotonic() -> None:
    clock = FakeClock(mono=100.0, wall=1_800_000_000.0)
    line = TimeLine(monotonic=clock.monotonic, wall=clock.time)
    assert line.now() == 1_800_000_000.0
    clock.mono += 2.5
    clock.wall -= 3600  # NTP steps the wall clock back: event time does not follow
    assert line.now() == 1_800_000_002.5
    assert line.mono_of(1_800_000_010.0) == 110.0


def test_never_behind_the_journal_floor() -> None:
    clock = FakeClock(mono=5.0, wall=1_000.0)  # wall clock wrong after a reboot without RTC
    line = TimeLine(floor=2_000.0, monotonic=clock.monotonic, wall=clock.time)
    assert line.now() > 2_000.0
    clock.mono += 1.0
    assert 2_001.0 < line.now() < 2_001.01
