"""The arbiter setting the clock's times after an illegal move (7.5.1, 7.1, 7.5.5), in odd reading sequences.

protocols.md does not say what a DGT clock reports while its times are being set by hand: §1.7 describes the
BWTIME readings (whole seconds, sent on a change in UPDATE_NICE) and the auto-acks of its buttons (back, plus,
run, minus, ok: operator events, not game events), §2.4-2.5 the DGT 3000's Time and Button packets ("DgtPi needs
2 secs for a stopped clock to return the correct time"), §1.7.1 picochess ignoring times that go up unexpectedly.
Nothing says the readings while stopped come one step at a time. So the engine must not depend on it: whatever
the readings show between the pause and the restart, no alert follows, and the times the arbiter ends with are
compared with the suggestion as they are (rules-spec R21: the penalty to the opponent and the increment of the
illegal press; one info note when they differ by more than a reading's resolution).

Randomised (seeded): the times set one step at a time (minutes and seconds, overshooting and coming back), in one
jump, or jumping up and down by far more than the penalty; runs of identical readings while paused (a stale
reading of a stopped clock); the lever turned to and fro while paused; the clock started in the middle of the
setting (a few running readings, paused again, the setting finished); the pieces put back before, during or after
the setting; the lever given to the offender while paused or by the arbiter's press after the restart.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from boardd.core.outputs import Severity, Status
from tests.core.test_illegal_count import _found, _play

#: (illegal move, the touched piece's replacement): position "L" (1.e4 e5 2.Nf3 Nc6), White to move
_ILLEGAL = [(("f3", "f5", "wN"), ("f3", "h4")), (("f1", "c5", "wB"), ("f1", "c4"))]
#: (time control, penalty s, increment s): E2023 standard and rapid (A.3: one minute)
_CONTROLS = [("5400+30", 120, 30), ("900+10", 60, 10), ("5400", 120, 0)]


class _Script:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.t = 0
        self.items: list[str] = []
        self.paused = False
        self.lever_white = False  # after White's (illegal) press the lever is high on Black's side

    def at(self, text: str, low: int = 150, high: int = 900) -> None:
        self.t += self.rng.randint(low, high)
        self.items.append(f"{self.t} {text}")

    def pause(self) -> None:
        self.at("PAUSE")
        self.paused = True

    def resume(self) -> None:
        self.at("RESUME")
        self.paused = False

    def ticks(self, n: int) -> None:
        for _ in range(n):
            self.at("TICK", 200, 1100)

    def add(self, color: str, seconds: int) -> None:
        self.at(f"ADD {color} {seconds}", 80, 700)

    def lever(self, white: bool) -> None:
        self.at(f"LEVERX {'W' if white else 'B'}", 200, 900)
        self.lever_white = white


def _steps(rng: random.Random, change: int) -> list[int]:
    """The readings' changes that make *change* seconds: one jump, steps of a minute / ten seconds / a second
    (overshooting and coming back), or far up and down again first."""
    style = rng.choice(("jump", "steps", "overshoot", "far"))
    if style == "jump" or change == 0:
        out = [change] if change else []
    else:
        sign = 1 if change > 0 else -1
        unit = rng.choice((60, 10, 1)) if abs(change) >= 60 else rng.choice((10, 1))
        n, rest = divmod(abs(change), unit)
        out = [sign * unit] * n + ([sign * rest] if rest else [])
        if style == "overshoot":
            out += [sign * unit, -sign * unit]
        elif style == "far":
            if rng.random() < 0.5:
                far = rng.choice((600, 1800, 3000))  # up far first (a wrong digit set), back down
                out = [far, -far, *out]
            else:
                far = rng.choice((300, 500))  # down first (never below zero: the rapid control has 15 min)
                out = [-far, far, *out]
    if len(out) > 14:  # (a setting by the second of two minutes: keep the test quick)
        out = [sum(out)]
    return out


def _correction(rng: random.Random, penalty: int, inc: int,
                illegal: tuple[str, str, str]) -> tuple[str, int, dict[str, int]]:
    """The arbiter's part between the illegal press and the replacement move (its text, its end in ms), and the
    total changes he set."""
    frm, to, piece = illegal
    s = _Script(rng)
    s.t = 1200
    # what he sets: as suggested, or not quite (a penalty forgotten, the increment left, a second or two)
    add_b = rng.choice((penalty, penalty, penalty, 0, penalty // 2, penalty + rng.choice((-1, 1, 3))))
    take_w = rng.choice((inc, inc, 0, inc + rng.choice((-1, 1, 4)))) if inc else rng.choice((0, 0, 0, 5))
    black = [("B", x) for x in _steps(rng, add_b)]
    white = [("W", x) for x in _steps(rng, -take_w)]
    if rng.random() < 0.5:
        steps = black + white if rng.random() < 0.5 else white + black  # side by side, as the clock's menu goes
    else:  # the sides interleaved, each side's steps in their order
        steps = []
        while black or white:
            steps.append((black if black and (not white or rng.random() < 0.5) else white).pop(0))
    pieces_when = rng.choice(("before", "during", "after"))
    mid_start = rng.random() < 0.35 and len(steps) >= 2
    cut = rng.randrange(1, len(steps)) if mid_start else -1
    s.pause()
    s.ticks(rng.randrange(0, 4))  # a run of readings of the stopped clock (stale or not)
    done_pieces = False

    def pieces() -> None:
        nonlocal done_pieces
        if not done_pieces:
            done_pieces = True
            s.at(f"L {to}", 200, 900)
            s.at(f"P {frm} {piece}", 200, 900)

    if pieces_when == "before":
        pieces()
    for i, (color, seconds) in enumerate(steps):
        if i == cut:
            # the clock started in the middle of the setting: a few running readings, paused again
            s.resume()
            s.ticks(rng.randrange(1, 4))
            s.pause()
            s.ticks(rng.randrange(0, 3))
        if pieces_when == "during" and i == len(steps) // 2:
            pieces()
        if rng.random() < 0.2:
            s.ticks(rng.randrange(1, 4))
        if rng.random() < 0.15:
            s.lever(not s.lever_white)  # the lever turned while paused (to and fro)
        s.add(color, seconds)
    pieces()
    s.ticks(rng.randrange(0, 3))
    restart = rng.choice(("lever-paused", "press-after"))
    if restart == "lever-paused":
        if not s.lever_white:
            s.lever(True)
        s.resume()
    else:
        if s.lever_white:
            s.lever(False)
        s.resume()
        s.ticks(rng.randrange(0, 2))
        s.lever(True)  # the arbiter presses Black's side: White's clock runs
    return " · ".join(s.items), s.t, {"B": add_b, "W": -take_w}


@dataclass(frozen=True, slots=True)
class Case:
    """One seeded case: the events (scenario text, position "L"), the control, what the suggestion says, what the
    arbiter set (total changes per side, "B"/"W"), the replacement move."""

    text: str
    tc: str
    penalty: int
    inc: int
    changes: dict[str, int]
    replacement: str

    @property
    def noted(self) -> bool:
        """Do the times set differ from the suggestion by 2 s or more (one note)?"""
        return abs(self.changes["B"] - self.penalty) >= 2 or (self.inc > 0 and abs(self.changes["W"] + self.inc) >= 2)


def case(seed: int, controls: list[tuple[str, int, int]] = _CONTROLS) -> Case:
    rng = random.Random(7000 + seed)
    (frm, to, piece), (rfrm, rto) = rng.choice(_ILLEGAL)
    tc, penalty, inc = rng.choice(controls)
    middle, t, changes = _correction(rng, penalty, inc, (frm, to, piece))
    text = (f"0 L {frm} · 300 P {to} {piece} · 700 C W · {middle} · {t + 800} L {rfrm} · {t + 1100} P {rto} {piece} "
            f"· {t + 1500} C W · {t + 2500} L g8 · {t + 2800} P f6 bN · {t + 3200} C B")
    return Case(text, tc, penalty, inc, changes, f"{rfrm}{rto}")


@pytest.mark.parametrize("seed", range(100))
def test_odd_time_setting_sequences_raise_no_alert(seed: int) -> None:
    c = case(seed)
    text, tc, changes, rfrm, rto = c.text, c.tc, c.changes, c.replacement[:2], c.replacement[2:]
    engine, _ = _play("L", text, tc=tc)
    state = engine.state
    moves = [m.uci for m in state.moves]
    assert moves[-2:] == [f"{rfrm}{rto}", "g8f6"] and all(m.legal for m in state.moves), (moves, text)
    strong = [(i.code, i.subtype) for i in engine.irregularities if i.severity is not Severity.INFO]
    assert [c for c, _ in strong] == ["ILLEGAL_MOVE"], (strong, text)
    (illegal,) = _found(engine, "ILLEGAL_MOVE")
    assert illegal.status is Status.RESOLVED, text
    assert illegal.ruling is not None and illegal.ruling.startswith("position reinstated at ply 4"), illegal.ruling
    # the times set, as they are, compared with the suggestion: one note exactly when they differ (2 s or more)
    off = c.noted
    notes = [i for i in _found(engine, "ARBITER_ADJUST") if i.incident == illegal.id]
    assert len(notes) == int(off), ([n.suggestion.text for n in notes], changes, text)
    assert all(i.status is Status.NOTED for i in engine.irregularities if i.severity is Severity.INFO)
