"""Corrections of the audit (tests/core/test_correction_fixes.py) as DGT byte captures, replayed with
``boardd replay --driver dgt``: the field updates and BWTIME messages a DGT board and DGT 3000 send (protocols.md
§1.4-§1.7), built from the events of the Laws' procedure, not from the simulator. The record is the game with the
illegal move (and the moves after it) removed, and the correction raises nothing but the illegal move."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import chess
import pytest

from boardd.core.events import ClockReading, ClockSide, Event, SquareChanged
from boardd.daemon import replay
from drivers.dgt.codec import BoardDump, ClockTimes, FieldUpdate, Version, encode_message
from drivers.dgt.mapping import code_from_content, square_to_field
from tests.core.scenario import POSITIONS, Arb, history_events, parse, start_clock


def _clock_times(reading: ClockReading) -> ClockTimes:
    def shown(value: float | None) -> int:
        return max(0, min(10 * 3600 - 1, math.ceil((value or 0.0) - 1e-9)))

    status = 0x01 if reading.running is not None else 0
    status |= 0x12 if reading.lever_high is ClockSide.RIGHT else 0x08
    return ClockTimes(right_s=shown(reading.right), left_s=shown(reading.left), right_flags=0x20, left_flags=0x20,
                      status=status)


def _capture(events: list[Event]) -> str:
    """A capture: the version and the start position's dump, then one message per event (times shifted > 1 s)."""
    offset = 1.0 - min(e.at for e in events)
    lines = [json.dumps({"t": 0.0, "capture": "dgt", "port": "/dev/ttyACM0", "v": 1}),
             json.dumps({"t": 0.2, "tx": "4b 4d"}),
             json.dumps({"t": 0.23, "rx": encode_message(Version(major=3, minor=10)).hex(" ")})]
    start = chess.Board()
    codes = [code_from_content(start.piece_at(chess.square(f, 7 - r))) for r in range(8) for f in range(8)]
    lines.append(json.dumps({"t": 0.27, "rx": encode_message(BoardDump(codes=tuple(codes))).hex(" ")}))
    last = ""
    for e in events:
        t = round(e.at + offset, 6)
        if isinstance(e, SquareChanged):
            data = encode_message(FieldUpdate(field=square_to_field(e.square), code=code_from_content(e.content)))
        elif isinstance(e, ClockReading):
            data = encode_message(_clock_times(e))
            if data.hex(" ") == last:
                continue
            last = data.hex(" ")
        else:
            raise TypeError(e)
        lines.append(json.dumps({"t": t, "rx": data.hex(" ")}))
    return "\n".join(lines) + "\n"


def _events(pos: str, text: str) -> list[Event]:
    _fen, history = POSITIONS[pos]
    assert history is not None, "a capture starts from the standard position"
    clock, reading = start_clock(chess.WHITE, -30.0, seconds=5400.0)
    events: list[Event] = [reading, *history_events(history, clock, start=-29.5)]
    parsed = parse(text, clock)
    assert not any(isinstance(e, Arb) for e in parsed)
    events += [e for e in parsed if not isinstance(e, Arb)]
    events.append(clock.reading(max(e.at for e in events) + 3.0))
    return events


CASES = {
    "found-two-moves-later-move-by-move": (
        "L", "0 L f1 · 300 P c5 wB · 800 C W · 2000 L g8 · 2300 P f6 bN · 2700 C B · 3500 L d2 · 3800 P d3 wP · "
             "4200 C W · 5200 PAUSE · 5500 L d3 · 5800 P d2 wP · 6000 L f6 · 6300 P g8 bN · 6500 L c5 · "
             "6800 P f1 wB · 7000 ADD B 120 · 7500 RESUME · 8000 C B · 9000 L f1 · 9300 P c4 wB · 9800 C W",
        ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]),
    "wrong-piece-first-paused": (
        "L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 PAUSE · 2000 L f3 · 2500 P f3 wN · 3000 L c5 · 3300 P f1 wB · "
             "3600 LEVER W · 4000 RESUME · 4500 L f1 · 4800 P c4 wB · 5200 C W · 6000 L g8 · 6300 P f6 bN · 6700 C B",
        ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"]),
    "two-hands-after-the-reply-paused": (
        "L", "0 L f1 · 300 P c5 wB · 800 C W · 2000 L g8 · 2300 P f6 bN · 2700 C B · 3500 PAUSE · 4000 L c5 · "
             "4050 L f3 · 4500 P f3 wN · 5000 P f1 wB · 5500 L f6 · 5800 P g8 bN · 6500 ADD B 120 · 7000 RESUME · "
             "8000 L f1 · 8300 P c4 wB · 8800 C W",
        ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]),
    # the DGT 3000's time-setting mode after an illegal move: the clock paused (status byte: stopped), the pieces put
    # back, then the times set with the +/- keys one step at a time (each step a BWTIME with the clock stopped: Black's
    # minutes up three and down one, White's seconds down in steps of ten, the increment the illegal press earned
    # taken back), the lever to the offender, the restart
    "dgt3000-time-setting-mode": (
        "L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 PAUSE · 2000 L c5 · 2300 P f1 wB · 3000 ADD B 60 · "
             "3400 ADD B 60 · 3800 ADD B 60 · 4200 ADD B -60 · 4600 ADD W -10 · 4800 ADD W -10 · 5000 ADD W -10 · "
             "5500 LEVER W · 5600 TICK · 6000 RESUME · 7000 L f1 · 7300 P c4 wB · 7700 C W",
        ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]),
    # the times set first (paused), the pieces put back afterwards on the running clock of the offender
    "dgt3000-times-set-then-pieces-back-running": (
        "L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 PAUSE · 2000 ADD B 60 · 2400 ADD B 60 · 2800 LEVER W · "
             "2900 TICK · 3300 RESUME · 4000 L c5 · 4300 P f1 wB · 6000 L f1 · 6300 P c4 wB · 6700 C W",
        ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]),
}

#: the ruling the correction's finding ends with (what the clock showed of the penalty)
RULINGS = {"dgt3000-time-setting-mode": "+2:00 seen on the clock for Black; -0:30 for the offender",
           "dgt3000-times-set-then-pieces-back-running": "+2:00 seen on the clock for Black"}
#: the note of a difference between the times set and the suggestion (R21: the penalty and the increment of the
#: illegal press), when there is one: the second case leaves White the increment the illegal press earned
NOTES = {"dgt3000-times-set-then-pieces-back-running": "off by White +0:30"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_correction_replayed_from_dgt_bytes(name: str, tmp_path: Path,
                                              capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    pos, text, moves = CASES[name]
    path = tmp_path / "c.jsonl"
    path.write_text(_capture(_events(pos, text)))
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt", "--time-control", "40/5400+30:1800+30"])) == 0
    out = [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]
    state = [p["payload"] for p in out if p["topic"].endswith("/state")][-1]
    assert state["moves"] == moves
    findings: dict[str, dict[str, object]] = {}
    for p in out:
        if p["topic"].endswith("/irregularity"):
            findings[p["payload"]["id"]] = p["payload"]
    strong = [(f["code"], f["status"]) for f in findings.values() if f["severity"] != "info"]
    assert strong == [("ILLEGAL_MOVE", "resolved")], strong
    if name in RULINGS:
        ruling = next(str(f["ruling"]) for f in findings.values() if f["code"] == "ILLEGAL_MOVE")
        assert ruling.endswith(RULINGS[name]), ruling
        notes = [str(f["suggestion"]["text"]) for f in findings.values()  # type: ignore[index]
                 if f["code"] == "ARBITER_ADJUST" and f["incident"] is not None]
        if name in NOTES:
            assert len(notes) == 1 and NOTES[name] in notes[0], notes
        else:
            # the times set match the suggestion (the penalty, the increment taken back): no note of a difference
            assert not notes, notes


@pytest.mark.parametrize("seed", range(16))
def test_odd_time_setting_replayed_from_dgt_bytes(seed: int, tmp_path: Path,
                                                 capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """The randomised time settings of tests/core/test_correction_time_setting.py (jumps, steps overshooting, far
    up and down, the lever to and fro, the clock started mid-setting) as DGT bytes: BWTIME sent on a change only
    (UPDATE_NICE, protocols.md §1.6-1.7: a run of identical readings is one message), through the driver's
    mapping (its "time went up" count logs, reports). No alert; one note exactly when the times set differ from
    the suggestion."""
    from tests.core.test_correction_time_setting import case

    c = case(seed, [("40/5400+30:1800+30", 120, 30)])
    path = tmp_path / "c.jsonl"
    path.write_text(_capture(_events("L", c.text)))
    parser = argparse.ArgumentParser()
    replay.configure_parser(parser)
    assert replay.run(parser.parse_args([str(path), "--driver", "dgt", "--time-control", c.tc])) == 0
    out = [json.loads(line) for line in capsysbinary.readouterr().out.decode().splitlines()]
    state = [p["payload"] for p in out if p["topic"].endswith("/state")][-1]
    assert state["moves"][-2:] == [c.replacement, "g8f6"], (state["moves"], c.text)
    findings: dict[str, dict[str, object]] = {}
    for p in out:
        if p["topic"].endswith("/irregularity"):
            findings[p["payload"]["id"]] = p["payload"]
    strong = [(f["code"], f["status"]) for f in findings.values() if f["severity"] != "info"]
    assert strong == [("ILLEGAL_MOVE", "resolved")], (strong, c.text)
    notes = [f for f in findings.values() if f["code"] == "ARBITER_ADJUST" and f["incident"] is not None]
    assert len(notes) == int(c.noted), ([n["suggestion"] for n in notes], c.changes, c.text)
