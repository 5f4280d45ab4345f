"""Every scenario of rules-spec §8.2 (T01–T66 and variants) against the Engine.

For each scenario the test checks the moves recorded during the scenario (SAN; an
illegal completed move is recorded with ``legal=False`` and shown here as ``"!"`` +
its long-algebraic description's first word) and the codes raised. Strictness:
the multiset of warning/illegal-move codes must equal the expected one; info codes
must be exactly the expected ones, except codes a scenario explicitly allows.

Deliberate interpretations are marked ``# interpretation:`` with the spec reference.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import chess
import pytest

from boardd.core.clock import TimeControl
from boardd.core.engine import Engine
from boardd.core.events import Event, GameInfo, Reinstate, Resolve
from boardd.core.outputs import GameEvent, Irregularity, IrregularityRaised, Output, Severity
from boardd.core.settings import Regime, RulesConfig
from tests.core.scenario import POSITIONS, Arb, history_events, parse, start_clock


@dataclass(frozen=True)
class Scn:
    pos: str
    events: str
    moves: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    edition: int = 2023
    tc: str = "40/5400+30:1800+30"
    regime: Regime = Regime.COMPETITION
    chess960: bool = False
    pre: str = ""  # events before the scenario (negative times), e.g. an earlier illegal move
    allow_info: tuple[str, ...] = ()
    made: tuple[float, ...] = ()
    completed: tuple[float | None, ...] = ()
    game_end: str | None = None
    result: dict[str, str] = field(default_factory=dict)  # code -> expected result suggestion
    xfail: str | None = None


_PRE_ILLEGAL_L = ("-6000 L f1 · -5700 P c5 wB · -5500 C W · -5000 ARB reinstate · -4900 PAUSE · -4800 LEVER W · "
                  "-4500 L c5 · -4300 P f1 wB · -4000 RESUME")
_PRE_ILLEGAL_N = ("-6000 L e1 · -5700 P e3 wK · -5500 C W · -5000 ARB reinstate · -4900 PAUSE · -4800 LEVER W · "
                  "-4500 L e3 · -4300 P e1 wK · -4000 RESUME")
_BLITZ = "180+2"
_RAPID = "900+10"

SCENARIOS: dict[str, Scn] = {
    "T01": Scn("S0", "0 L e2 · 350 P e4 wP · 700 C W", ("e4",), made=(0.35,), completed=(0.7,)),
    "T02": Scn("A", "0 L e1 · 300 P g1 wK · 700 L h1 · 1000 P f1 wR · 1400 C W", ("O-O",), made=(1.0,)),
    "T03": Scn("B", "0 L e8 · 250 P c8 bK · 600 L a8 · 900 P d8 bR · 1200 C B", ("O-O-O",)),
    "T04": Scn("A", "0 L h1 · 300 P f1 wR · 900 L e1 · 1200 P g1 wK · 1500 C W", ("O-O",),
               ("CASTLING_ROOK_FIRST", "RELEASED_MOVE_CHANGED")),
    "T05": Scn("A", "0 L h1 · 120 P f1 wR · 400 L e1 · 650 P g1 wK · 1000 C W", ("O-O",), ("CASTLING_ROOK_FIRST",)),
    "T05-variant": Scn("A", "0 L h1 · 100 L e1 · 350 P f1 wR · 650 P g1 wK · 1000 C W", ("O-O",)),
    "T06": Scn("A", "0 L e1 · 300 P g1 wK · 900 C W", ("!",), ("CASTLING_INCOMPLETE_AT_PRESS",)),
    "T07": Scn("A", "0 L e1 · 300 P g1 wK · 1100 L g1 · 1400 P f1 wK · 1800 C W", ("Kf1",),
               ("CASTLING_KING_RELEASED_NOT_COMPLETED",)),
    "T08": Scn("A", "0 L e1 · 30 L h1 · 330 P g1 wK · 360 P f1 wR · 700 C W", ("O-O",),
               ("TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS")),
    "T08-E2014": Scn("A", "0 L e1 · 30 L h1 · 330 P g1 wK · 360 P f1 wR · 700 C W", ("O-O",),
                     ("TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"), edition=2014),
    "T09": Scn("C", "0 L e1 · 300 P g1 wK · 700 L h1 · 1000 P f1 wR · 1300 C W", ("!",),
               ("ILLEGAL_MOVE/CASTLING_ILLEGAL",)),
    "T10": Scn("D", "0 L e1 · 300 P g1 wK · 600 L h1 · 900 P f1 wR · 1200 C W", ("!",),
               ("ILLEGAL_MOVE/CASTLING_ILLEGAL",)),
    "T11": Scn("E", "0 L e4 · 350 L d5 · 600 P d5 wP · 900 C W", ("exd5",)),
    "T12": Scn("E", "0 L d5 · 300 L e4 · 550 P d5 wP · 900 C W", ("exd5",)),
    "T13": Scn("E", "0 L e4 · 400 X d5 bP→wP · 700 C W", ("exd5",)),
    "T14a": Scn("E", "0 L d5 · 200 P h5 bP · 500 L e4 · 750 P d5 wP · 1200 L h5 · 1500 C W", ("exd5",),
                ("CAPTURED_PIECE_PARKED",)),
    "T14b": Scn("E", "0 L d5 · 200 P h5 bP · 500 L e4 · 750 P d5 wP · 1500 C W", ("!",),
                ("POSITION_MISMATCH_AT_PRESS",)),
    "T15": Scn("G", "0 L b1 · 20 L b5 · 350 P b5 wQ · 700 C W", ("Qxb5+",)),
    "T15-victim-first": Scn("V", "0 L f5 · 240 L e4 · 500 P f5 wP · 900 C W", ("exf5",)),
    "T16": Scn("H", "0 L e5 · 300 P d6 wP · 700 L d5 · 1000 C W", ("exd6",)),
    "T17": Scn("H", "0 L d5 · 300 L e5 · 600 P d6 wP · 900 C W", ("exd6",)),
    "T18": Scn("H", "0 L e5 · 300 P d6 wP · 800 C W", ("!",), ("EN_PASSANT_INCOMPLETE_AT_PRESS",)),
    "T19": Scn("I", "0 L e5 · 350 L d5 · 600 P d6 wP · 900 C W", ("!",), ("ILLEGAL_MOVE/EN_PASSANT_INVALID",)),
    "T20": Scn("J", "0 L e7 · 300 P e8 wP · 700 L e8 · 1300 P e8 wQ · 1700 C W", ("e8=Q",)),
    "T20-E2009": Scn("J", "0 L e7 · 300 P e8 wP · 700 L e8 · 1300 P e8 wQ · 1700 C W", ("e8=Q",), edition=2009),
    "T21": Scn("J", "0 L e7 · 900 P e8 wQ · 1300 C W", ("e8=Q",)),
    "T21-E2009": Scn("J", "0 L e7 · 900 P e8 wQ · 1300 C W", ("e8=Q",), ("PROMOTION_ORDER_2009",), edition=2009),
    "T22": Scn("J", "0 P e8 wQ · 400 L e7 · 800 C W", ("e8=Q",)),
    "T22-E2009": Scn("J", "0 P e8 wQ · 400 L e7 · 800 C W", ("e8=Q",), ("PROMOTION_ORDER_2009",), edition=2009),
    "T23": Scn("K", "0 L b7 · 300 L a8 · 600 P a8 wQ · 900 C W", ("bxa8=Q+",)),
    # interpretation: 1.bxa8=N leaves K+N v K, a dead position (5.2.2): the game ends at once (GameEvent, no code).
    "T24": Scn("K", "0 L a8 · 400 P a8 wN · 800 L b7 · 1100 C W", ("bxa8=N",), game_end="GAME_END_DEAD_POSITION"),
    "T24-E2009": Scn("K", "0 L a8 · 400 P a8 wN · 800 L b7 · 1100 C W", ("bxa8=N",), ("PROMOTION_ORDER_2009",),
                     edition=2009, game_end="GAME_END_DEAD_POSITION"),
    # interpretation: the physical 1.e8=N+ leaves K+N v K, a dead position (5.2.2): GAME_END as a GameEvent.
    "T25": Scn("J", "0 L e7 · 500 P e8 wQ · 1000 L e8 · 1300 P e8 wN · 1600 C W", ("e8=N+",),
               ("PROMOTION_CHOICE_CHANGED", "RELEASED_MOVE_CHANGED"), game_end="GAME_END_DEAD_POSITION"),
    "T26": Scn("J", "0 L e7 · 300 P e8 wP · 700 C W", ("!",), ("PAWN_NOT_REPLACED",)),
    "T26-E2009": Scn("J", "0 L e7 · 300 P e8 wP · 700 C W", ("!",), ("PAWN_NOT_REPLACED",), edition=2009),
    "T27": Scn("J", "0 L e7 · 300 P e8 wP · 700 C W · 2500 L g7 · 2800 P f6 bK · 3100 C B", ("!", "Kf6"),
               ("PAWN_NOT_REPLACED", "ILLEGAL_POSITION_PENDING", "ILLEGAL_MOVE_STANDS", "ILLEGAL_POSITION_PERSISTS"),
               tc=_RAPID, regime=Regime.OTHERWISE, result={"ILLEGAL_POSITION_PERSISTS": "1/2-1/2"}),
    "T28": Scn("J", "0 L e7 · 300 P e8 wP · 700 L e8 · 1000 C W · 2000 P e8 wQ", ("!",),
               ("PROMOTION_INCOMPLETE_AT_PRESS", "OUT_OF_TURN_CHANGE")),
    "T29": Scn("S1", "0 C W", (), ("CLOCK_PRESS_NO_MOVE",)),
    "T29-E2014": Scn("S1", "0 C W", (), ("CLOCK_PRESS_NO_MOVE",), edition=2014),
    "T29-E2009": Scn("S1", "0 C W", (), ("CLOCK_PRESS_NO_MOVE",), edition=2009),
    "T30": Scn("S1", "0 L g1 · 400 C W · 1400 P f3 wN", ("Nf3",),
               ("CLOCK_PRESS_PIECE_IN_HAND", "CLOCK_PRESS_OTHER_HAND_SUSPECTED", "OUT_OF_TURN_CHANGE")),
    "T31": Scn("S1", "0 L g1 · 330 C W · 400 P f3 wN", ("Nf3",), ("LATENCY_RACE",), completed=(0.33,)),
    "T32": Scn("L", "0 L f1 · 300 P c5 wB · 1300 L c5 · 1600 P c4 wB · 2000 C W", ("Bc4",),
               ("ILLEGAL_PLACEMENT_CORRECTED",)),
    "T33": Scn("L", "0 L f1 · 300 P c5 wB · 1300 L c5 · 1500 P f1 wB · 2000 L b1 · 2300 P c3 wN · 2700 C W",
               ("Nc3",), ("ILLEGAL_PLACEMENT_CORRECTED", "TOUCH_MOVE_VIOLATION")),
    "T34": Scn("L", "0 L f1 · 300 P c5 wB · 800 C W", ("!",), ("ILLEGAL_MOVE/GEOMETRY",)),
    "T35": Scn("L", "0 L f3 · 300 P f5 wN · 700 C W", ("!",), ("ILLEGAL_MOVE/GEOMETRY", "ILLEGAL_MOVE_LIMIT_REACHED"),
               pre=_PRE_ILLEGAL_L, result={"ILLEGAL_MOVE_LIMIT_REACHED": "0-1"}),
    "T36": Scn("N", "0 L e2 · 300 P e5 wP · 700 C W", ("!",), ("ILLEGAL_MOVE/GEOMETRY", "ILLEGAL_MOVE_LIMIT_REACHED"),
               pre=_PRE_ILLEGAL_N, result={"ILLEGAL_MOVE_LIMIT_REACHED": "1/2-1/2"}),
    "T37": Scn("L", "0 L f3 · 300 P f5 wN · 700 C W", ("!",), ("ILLEGAL_MOVE/GEOMETRY",), edition=2009,
               pre=_PRE_ILLEGAL_L),
    # the claim counts it (R22) and A.4 b makes the first the limit: ILLEGAL_MOVE_LIMIT_REACHED, 0-1 (rules-spec 5.2)
    "T38": Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 ARB claim", ("!",),
               ("ILLEGAL_MOVE/GEOMETRY", "ILLEGAL_MOVE_LIMIT_REACHED"), edition=2014, tc=_RAPID,
               regime=Regime.OTHERWISE, result={"ILLEGAL_MOVE_LIMIT_REACHED": "0-1"}),
    "T38-noclaim": Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 L g8 · 1800 P f6 bN · 2100 C B", ("!", "Nf6"),
                       ("ILLEGAL_MOVE/GEOMETRY", "ILLEGAL_MOVE_STANDS"), edition=2014, tc=_RAPID,
                       regime=Regime.OTHERWISE),
    "T40": Scn("L", "0 L f1 · 300 P c5 wB · 600 C W · 1500 L g8 · 1800 P f6 bN · 2100 C B", ("!", "Nf6"),
               ("ILLEGAL_MOVE/GEOMETRY", "ILLEGAL_MOVE_STANDS"), tc=_BLITZ, regime=Regime.OTHERWISE),
    "T41": Scn("O", "0 L a1 · 300 P a8 wR · 600 C W · 2000 L h7 · 2300 P h6 bP · 2600 C B", ("!", "!"),
               ("ILLEGAL_MOVE/SELF_CHECK", "ILLEGAL_POSITION_PENDING", "ILLEGAL_MOVE_STANDS",
                "ILLEGAL_MOVE/SELF_CHECK", "ILLEGAL_POSITION_PERSISTS"), tc=_RAPID, regime=Regime.OTHERWISE,
               result={"ILLEGAL_POSITION_PERSISTS": "1/2-1/2"}),
    "T41-standard": Scn("O", "0 L a1 · 300 P a8 wR · 600 C W", ("!",), ("ILLEGAL_MOVE/SELF_CHECK",)),
    "T42": Scn("P", "0 L a1 · 60 P a2 wR · 110 L a2 · 160 P a3 wR · 210 L a3 · 260 P a4 wR · 310 L a4 · "
                    "360 P a5 wR · 900 C W", ("Ra5",)),
    "T43": Scn("P", "0 L a1 · 60 P a2 wR · 110 L a2 · 160 P a3 wR · 900 L a3 · 950 P a4 wR · 1000 L a4 · "
                    "1050 P a5 wR · 1500 C W", ("Ra5",), ("RELEASED_MOVE_CHANGED",)),
    "T44": Scn("L2", "0 L e4 · 40 P e4 wP · 1000 L b8 · 1300 P c6 bN · 1600 C B · 2000 X f3 wN→wB · "
                     "2050 X f3 wB→wN", ("Nc6",), ("SENSOR_FLICKER", "SENSOR_FLICKER")),
    "T45": Scn("L", "0 L f3 · 600 P f3 wN · 1500 L d2 · 1800 P d4 wP · 2100 C W", ("d4",),
               ("ADJUST_OBSERVED", "TOUCH_MOVE_SUSPECTED")),
    "T46": Scn("L", "0 L f3 · 600 P f3 wN · 1500 L d2 · 1800 P d4 wP · 2100 C W · 3000 L f3 · 3500 P f3 wN",
               ("d4",), ("ADJUST_OBSERVED", "TOUCH_MOVE_SUSPECTED", "ADJUST_OUT_OF_TURN")),
    "T47a": Scn("L", "0 L f1 · 200 L d2 · 320 P c4 wB · 900 P d2 wP · 1300 C W", ("Bc4",), ("DISPLACED_PIECES",)),
    "T47b": Scn("L", "0 L f1 · 200 L d2 · 320 P c4 wB · 700 C W", ("!",), ("DISPLACED_NOT_RESTORED_AT_PRESS",)),
    "T47c": Scn("L", "0 L f1 · 200 L d2 · 230 P d3 wP · 320 P c4 wB · 700 C W", ("!",),
                ("DISPLACED_NOT_RESTORED_AT_PRESS",)),
    "T48": Scn("S0", "0 L e2 · 300 P e4 wP · 2000 L e7 · 2300 P e5 bP · 4000 C W · 4800 C B", ("e4", "e5"),
               ("CLOCK_NOT_PRESSED", "CLOCK_LATE_PRESS"), completed=(4.0, 4.8)),
    "T49": Scn("S0", "0 L e2 · 300 P e4 wP · 2000 L e7 · 2300 P e5 bP · 3000 L g1 · 3300 P f3 wN · 3600 C W",
               ("e4", "e5", "Nf3"), ("CLOCK_NOT_PRESSED", "CLOCK_NOT_PRESSED", "MOVE_COMPLETED_WITHOUT_PRESS"),
               completed=(3.3, None, 3.6)),
    # interpretation: CLOCK_NOT_PRESSED (info, §5.1, as in T48) is raised in T49 too, each time a player starts
    # moving while the opponent's made move is not completed (Black at 2000, White at 3000).
    "T50": Scn("L2", "0 L f3 · 300 P g1 wN · 700 C B · 1500 L f1 · 1800 P c4 wB · 2100 C W", ("Bc4",),
               ("OUT_OF_TURN_CHANGE", "TAKEBACK_DETECTED", "CLOCK_PRESS_NO_MOVE")),
    "T52": Scn("J", "0 L e7 · 300 P e8 wP · 700 PAUSE · 20000 L e8 · 21000 P e8 wQ · 22000 RESUME · 22500 C W",
               ("e8=Q",), ("PROMOTION_PAUSE_REQUEST",)),
    "T53-Q1": Scn("Q1", "0 FLAG B", (), ("FLAG_FALL",), result={"FLAG_FALL": "1-0"}),
    "T53-Q2": Scn("Q2", "0 FLAG W", (), ("FLAG_FALL",), result={"FLAG_FALL": "1/2-1/2"}),
    "T54a": Scn("R", "0 L c7 · 300 P c8 wQ · 2500 FLAG W", ("c8=Q#",), game_end="GAME_END_CHECKMATE"),
    "T54b": Scn("R", "0 L c7 · 150 FLAG W · 300 P c8 wQ", ("c8=Q#",), ("FLAG_FALL",),
                result={"FLAG_FALL": "1/2-1/2"}),
    "T54c": Scn("R", "0 L c7 · 300 P c8 wQ · 450 FLAG W", ("c8=Q#",), ("MATE_FLAG_RACE",)),
    "T56": Scn("S", "0 L a1 · 200 L c3 · 450 P c3 wB · 5000 FLAG W", ("Bxc3",), game_end="GAME_END_DEAD_POSITION",
               made=(0.45,), completed=(0.45,)),
    "T57": Scn("S0", " · ".join(
        f"{i * 1000} L {a} · {i * 1000 + 300} P {b} {p} · {i * 1000 + 700} C {s}"
        for i, (a, b, p, s) in enumerate([("g1", "f3", "wN", "W"), ("g8", "f6", "bN", "B"),
                                          ("f3", "g1", "wN", "W"), ("f6", "g8", "bN", "B")] * 4)),
        ("Nf3", "Nf6", "Ng1", "Ng8") * 4, ("DRAW_CLAIM_AVAILABLE", "DRAW_CLAIM_AVAILABLE"),
        game_end="GAME_END_FIVEFOLD"),
    "T57-E2014": Scn("S0", " · ".join(
        f"{i * 1000} L {a} · {i * 1000 + 300} P {b} {p} · {i * 1000 + 700} C {s}"
        for i, (a, b, p, s) in enumerate([("g1", "f3", "wN", "W"), ("g8", "f6", "bN", "B"),
                                          ("f3", "g1", "wN", "W"), ("f6", "g8", "bN", "B")] * 4)),
        ("Nf3", "Nf6", "Ng1", "Ng8") * 4, ("DRAW_CLAIM_AVAILABLE", "DRAW_CLAIM_AVAILABLE"), edition=2014,
        game_end="GAME_END_FIVEFOLD"),
    "T57-E2009": Scn("S0", " · ".join(
        f"{i * 1000} L {a} · {i * 1000 + 300} P {b} {p} · {i * 1000 + 700} C {s}"
        for i, (a, b, p, s) in enumerate([("g1", "f3", "wN", "W"), ("g8", "f6", "bN", "B"),
                                          ("f3", "g1", "wN", "W"), ("f6", "g8", "bN", "B")] * 4)),
        ("Nf3", "Nf6", "Ng1", "Ng8") * 4, ("DRAW_CLAIM_AVAILABLE", "DRAW_CLAIM_AVAILABLE"), edition=2009),
    "T58": Scn("T960", "0 L b1 · 500 L a1 · 800 P d1 wR · 1200 P c1 wK · 1500 C W", ("O-O-O",), chess960=True),
    "T59": Scn("U960", "0 L e1 · 400 P g1 wK · 900 C W", ("O-O",), chess960=True),
    "T59-standard": Scn("A", "0 L e1 · 400 P g1 wK · 900 C W", ("!",), ("CASTLING_INCOMPLETE_AT_PRESS",)),
    "T61": Scn("V", "0 L f5 · 500 P f5 bB · 800 L e4 · 1000 L d5 · 1200 P d5 wP · 1500 C W", ("exd5",),
               ("TOUCH_CAPTURE_SUSPECTED",)),
    "T62": Scn("A", "0 L e1 · 300 P g1 wK · 600 L c6 · 900 L h1 · 1200 P f1 wR · 1500 C W · 2000 P d4 bN · 2300 C B",
               ("O-O", "Nd4"), ("OPPONENT_STARTED_BEFORE_MOVE_MADE",)),
    "T63": Scn("S1", "0 L g1 · 300 P f3 wN · 700 C W · 2000 C W · 2060 C B · 2120 C W", ("Nf3",), ("CLOCK_BOUNCE",)),
    "T64": Scn("S1", "0 L g1 · 300 P f3 wN · 1200 L b1 · 1500 P c3 wN · 1900 C W", ("!",),
               ("ILLEGAL_MOVE/TWO_PIECES_MOVED", "RELEASED_MOVE_CHANGED")),
    "T65": Scn("S1", "0 P f3 wN · 40 L g1 · 500 C W", ("Nf3",)),
}

# T39: the penalty matrix for the first illegal move of T34, per configuration.
T39 = [
    (2009, "5400+30", Regime.COMPETITION, 120, None), (2009, _RAPID, Regime.COMPETITION, 120, None),
    (2009, _BLITZ, Regime.COMPETITION, 120, None), (2014, "5400+30", Regime.COMPETITION, 120, None),
    (2014, _RAPID, Regime.COMPETITION, 120, None), (2014, _BLITZ, Regime.COMPETITION, 60, None),
    (2014, _RAPID, Regime.OTHERWISE, None, "0-1"), (2014, _BLITZ, Regime.OTHERWISE, None, "0-1"),
    (2018, "5400+30", Regime.COMPETITION, 120, None), (2018, _RAPID, Regime.COMPETITION, 120, None),
    (2018, _RAPID, Regime.OTHERWISE, 120, None), (2018, _BLITZ, Regime.COMPETITION, 60, None),
    (2018, _BLITZ, Regime.OTHERWISE, 60, None), (2023, "5400+30", Regime.COMPETITION, 120, None),
    (2023, _RAPID, Regime.COMPETITION, 60, None), (2023, _RAPID, Regime.OTHERWISE, 60, None),
    (2023, _BLITZ, Regime.OTHERWISE, 60, None), (2023, _BLITZ, Regime.COMPETITION, 60, None),
]


@dataclass
class Run:
    engine: Engine
    raised: list[Irregularity]
    outs: list[Output]
    first_ply: int


def _arb(engine: Engine, arb: Arb) -> Event:
    if arb.text.startswith("reinstate"):
        # the tablet sends the ply of the finding's suggestion (the position before the illegal move)
        plies = [i.suggestion.reinstate_ply for i in engine.irregularities
                 if i.severity is Severity.ILLEGAL_MOVE and i.suggestion.reinstate_ply is not None]
        return Reinstate(at=arb.at, ply=plies[-1] if plies else max(0, len(engine.state.moves) - 1))
    if arb.text.startswith("claim"):
        target = [i for i in engine.irregularities if i.severity is Severity.ILLEGAL_MOVE][-1]
        return Resolve(at=arb.at, irregularity_id=target.id, ruling="claim by the opponent", accept=True, claim=True)
    raise ValueError(arb.text)


def run(scn: Scn, *, edition: int | None = None, tc: str | None = None, regime: Regime | None = None) -> Run:
    fen, history = POSITIONS[scn.pos]
    game = GameInfo(edition=edition or scn.edition, time_control=tc or scn.tc,
                    start_fen=None if history is not None else fen, chess960=scn.chess960)
    engine = Engine(RulesConfig(regime=regime or scn.regime), game)
    n_hist = len(history.split()) if history else 0
    turn = chess.Board(fen).turn
    t0 = -float(n_hist) - 12.0
    clock, reading = start_clock(chess.WHITE if history is not None else turn, t0,
                                 seconds=float(TimeControl.parse(tc or scn.tc).periods[0].seconds))
    events: list[Event | Arb] = [reading]
    if history:
        events.extend(history_events(history, clock, start=t0 + 0.5))
    events.extend(parse(scn.pre, clock) if scn.pre else [])
    outs: list[Output] = []
    start_index = len(events)
    events.extend(parse(scn.events, clock))
    raised: list[Irregularity] = []
    first_ply = 0
    for i, ev in enumerate(events):
        if i == start_index:
            outs += engine.advance(-0.001)
            first_ply = len(engine.state.moves)
            pre_codes = [i.code for i in engine.irregularities]
            assert all(c in ("ILLEGAL_MOVE", "CLOCK_PAUSED") for c in pre_codes), pre_codes
        got: list[Output] = []
        if isinstance(ev, Arb):
            got += engine.advance(ev.at)  # the arbiter acts on what is known at that time
        event = _arb(engine, ev) if isinstance(ev, Arb) else ev
        got += engine.feed(event)
        if i >= start_index:
            outs += got
    outs += engine.advance(events[-1].at + 5.0)
    raised = [o.irregularity for o in outs if isinstance(o, IrregularityRaised)]
    return Run(engine, raised, outs, first_ply)


def _code(irr: Irregularity) -> str:
    return f"{irr.code}/{irr.subtype}" if irr.subtype else irr.code


def check(scn: Scn, r: Run) -> None:
    moves = [m for m in r.engine.state.moves if m.made_at >= 0 or (m.completed_at or -1) >= 0]
    got_moves = tuple(m.san if m.legal else "!" for m in moves)
    raised = [_code(i) for i in r.raised]
    assert got_moves == scn.moves, (got_moves, raised)
    strong = Counter(c for c, i in zip(raised, r.raised, strict=True) if i.severity is not Severity.INFO)
    info = Counter(c for c, i in zip(raised, r.raised, strict=True)
                   if i.severity is Severity.INFO and i.code not in scn.allow_info)
    from boardd.core.laws.codes import code_info

    def severity(code: str) -> Severity:
        return code_info(code, scn.edition).severity

    exp_strong = Counter(c for c in scn.codes if severity(c) is not Severity.INFO)
    exp_info = Counter(c for c in scn.codes if severity(c) is Severity.INFO)
    assert strong == exp_strong, (raised, scn.codes)
    assert info == exp_info, (raised, scn.codes)
    for i, t in enumerate(scn.made):
        assert moves[i].made_at == pytest.approx(t), moves[i]
    for i, ct in enumerate(scn.completed):
        assert moves[i].completed_at == (pytest.approx(ct) if ct is not None else None), moves[i]
    ends = [o.code for o in r.outs if isinstance(o, GameEvent) and o.type == "GAME_END"]
    assert ends == ([scn.game_end] if scn.game_end else []), ends
    for code, result in scn.result.items():
        found = [i for i in r.raised if _code(i) == code or i.code == code]
        assert found and found[-1].suggestion.result == result, (code, [i.suggestion for i in found])


_PARAMS = [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=s.xfail) if s.xfail else ())
           for name, s in SCENARIOS.items()]


@pytest.mark.parametrize("name", _PARAMS)
def test_scenario(name: str) -> None:
    scn = SCENARIOS[name]
    check(scn, run(scn))


@pytest.mark.parametrize(("edition", "tc", "regime", "add_s", "result"), T39)
def test_t39_penalty_matrix(edition: int, tc: str, regime: Regime, add_s: int | None, result: str | None) -> None:
    scn = SCENARIOS["T34"]
    r = run(scn, edition=edition, tc=tc, regime=regime)
    illegal = [i for i in r.raised if i.code == "ILLEGAL_MOVE"]
    assert len(illegal) == 1
    sug = illegal[0].suggestion
    assert (sug.add_to_opponent_s, sug.result) == (add_s, result)


def test_t34_suggestion_details() -> None:
    r = run(SCENARIOS["T34"])
    irr = next(i for i in r.raised if i.code == "ILLEGAL_MOVE")
    assert irr.subtype == "GEOMETRY" and irr.side == chess.WHITE
    assert irr.suggestion.add_to_opponent_s == 120 and irr.suggestion.remove_from_offender_s == 30
    assert irr.suggestion.reinstate_ply == 4
    assert irr.suggestion.constraints and "Bc4" in irr.suggestion.constraints[0]
    assert r.engine.state.illegal_moves_white == 1


def test_t51_move_out_of_turn() -> None:
    """T51: after 1.e4 (Black to move) White pushes d4; Black's reply e5 is still recognised."""
    scn = Scn("E", "0 L d2 · 300 P d4 wP · 1500 L e7 · 1800 P e5 bP · 2100 C B", ("e5",), ("OUT_OF_TURN_CHANGE",))
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    engine = Engine(RulesConfig(), GameInfo())
    clock, reading = start_clock(chess.WHITE, -5.0)
    engine.feed(reading)
    for ev in history_events("e4", clock, start=-4.0):
        engine.feed(ev)
    engine.advance(-0.5)
    assert engine.state.fen == fen
    outs: list[Output] = []
    for ev in parse(scn.events, clock):
        assert not isinstance(ev, Arb)
        outs += engine.feed(ev)
    outs += engine.advance(10.0)
    raised = [_code(o.irregularity) for o in outs if isinstance(o, IrregularityRaised)]
    assert raised == ["OUT_OF_TURN_CHANGE"]
    assert [m.san for m in engine.state.moves] == ["e4", "e5"]


def test_t66_sliding_capture_out_of_order() -> None:
    fen = "4k3/8/8/8/2n5/8/8/2Q1K3 w - - 0 1"
    engine = Engine(RulesConfig(), GameInfo(start_fen=fen))
    clock, reading = start_clock(chess.WHITE, -1.0)
    outs = engine.feed(reading)
    for ev in parse("0 L c4 · 40 P c2 wQ · 80 P c3 wQ · 120 L c1 · 160 L c2 · 200 P c4 wQ · 240 L c3 · 700 C W",
                    clock):
        assert not isinstance(ev, Arb)
        outs += engine.feed(ev)
    outs += engine.advance(5.0)
    assert [m.san for m in engine.state.moves] == ["Qxc4"]
    assert not [o for o in outs if isinstance(o, IrregularityRaised)]


@pytest.mark.parametrize(("edition", "add_s", "result"), [(2023, 60, None), (2014, None, "1/2-1/2"),
                                                          (2018, 120, None)])
def test_t27_variants_arbiter_acts_in_the_claim_window(edition: int, add_s: int | None, result: str | None) -> None:
    """T27 variants: the arbiter acts at 1500 (before Black's move): E2023 +1:00 (A.3) and the pawn becomes a
    queen; E2014 A.4: loss, but Black has a bare king, so a draw; E2018 A.4: +2:00."""
    # E2014: the claimed illegal move is the limit (A.4 b): ILLEGAL_MOVE_LIMIT_REACHED with the draw
    limit = ("ILLEGAL_MOVE_LIMIT_REACHED",) if result else ()
    scn = Scn("J", "0 L e7 · 300 P e8 wP · 700 C W · 1500 ARB claim", ("!",),
              ("PAWN_NOT_REPLACED", "ILLEGAL_POSITION_PENDING", *limit), tc=_RAPID, regime=Regime.OTHERWISE,
              edition=edition, result={"ILLEGAL_MOVE_LIMIT_REACHED": result} if result else {})
    r = run(scn)
    check(scn, r)
    final = r.engine.irregularities[0]
    assert final.code == "PAWN_NOT_REPLACED" and final.ruling
    assert (final.suggestion.add_to_opponent_s, final.suggestion.result) == (add_s, result)
    if edition >= 2014:
        assert final.suggestion.move == "e8=Q"
    assert r.engine.state.illegal_moves_white == 1


def test_t37_third_illegal_move_in_e2009_loses() -> None:
    scn = Scn("L", "0 L f3 · 300 P f5 wN · 700 C W · 1500 ARB reinstate · 1600 PAUSE · 1700 LEVER W · "
                   "2000 L f5 · 2200 P f3 wN · 2500 RESUME · 3000 L f1 · 3300 P c5 wB · 3700 C W",
              ("!",), ("ILLEGAL_MOVE/GEOMETRY", "ILLEGAL_MOVE/GEOMETRY", "ILLEGAL_MOVE_LIMIT_REACHED"),
              edition=2009, pre=_PRE_ILLEGAL_L, allow_info=("CLOCK_PAUSED",),
              result={"ILLEGAL_MOVE_LIMIT_REACHED": "0-1"})
    r = run(scn)
    check(scn, r)  # the second illegal move was taken back by the reinstatement; the third stands in the record
    second = next(i for i in r.raised if i.code == "ILLEGAL_MOVE")
    assert second.suggestion.add_to_opponent_s == 120 and second.suggestion.result is None  # 7.4 b: n=2
    assert r.engine.state.illegal_moves_white == 3


def test_suggestion_details_of_castling_and_illegal_moves() -> None:
    t06 = next(i for i in run(SCENARIOS["T06"]).raised if i.code == "CASTLING_INCOMPLETE_AT_PRESS")
    assert t06.suggestion.move == "O-O" and t06.suggestion.verify and t06.suggestion.add_to_opponent_s == 120
    assert t06.suggestion.remove_from_offender_s == 30 and t06.suggestion.reinstate_ply == 6
    t09 = next(i for i in run(SCENARIOS["T09"]).raised if i.code == "ILLEGAL_MOVE")
    assert t09.suggestion.constraints == ("the wK on e1 must move: Kd1, Kd2, Kf2",)
    t41 = next(i for i in run(SCENARIOS["T41-standard"]).raised if i.code == "ILLEGAL_MOVE")
    assert t41.suggestion.constraints[0].startswith("any legal move")
    assert "Kxe2" in t41.suggestion.constraints[0] and "Kd1" in t41.suggestion.constraints[0]
    t26 = next(i for i in run(SCENARIOS["T26"]).raised if i.code == "PAWN_NOT_REPLACED")
    assert t26.suggestion.move == "e8=Q"
    t26_2009 = next(i for i in run(SCENARIOS["T26-E2009"]).raised if i.code == "PAWN_NOT_REPLACED")
    assert t26_2009.suggestion.move is None and "e7" in t26_2009.suggestion.constraints[0]


@pytest.mark.parametrize(("edition", "severity"), [(2023, Severity.ILLEGAL_MOVE), (2018, Severity.ILLEGAL_MOVE),
                                                   (2014, Severity.WARNING), (2009, Severity.WARNING)])
def test_t29_press_without_a_move_per_edition(edition: int, severity: Severity) -> None:
    r = run(SCENARIOS["T29"], edition=edition)
    irr = next(i for i in r.raised if i.code == "CLOCK_PRESS_NO_MOVE")
    assert irr.severity is severity
    assert (irr.suggestion.add_to_opponent_s == 120) == (edition >= 2018)
    assert r.engine.state.illegal_moves_white == (1 if edition >= 2018 else 0)


def test_t57_draw_claims_for_the_right_sides() -> None:
    r = run(SCENARIOS["T57"])
    claims = [i for i in r.raised if i.code == "DRAW_CLAIM_AVAILABLE"]
    assert [(c.side, c.ply) for c in claims] == [(chess.BLACK, 7), (chess.WHITE, 8)]


def test_r27_chess960_king_step_then_rook_is_castling_in_a_non_standard_order() -> None:
    scn = Scn("T960", "0 L b1 · 300 P c1 wK · 1200 L a1 · 1500 P d1 wR · 1900 C W", ("O-O-O",),
              ("CHESS960_CASTLING_ORDER",), chess960=True)
    check(scn, run(scn))


def test_r05_promotion_choice_changed_before_release() -> None:
    """The queen touched e8 (registered) but was replaced by a knight within T_settle: the choice was made (4.4.4)."""
    # interpretation: only PROMOTION_CHOICE_CHANGED; the queen was not presumed released, so no RELEASED_MOVE_CHANGED
    scn = Scn("J", "0 L e7 · 500 P e8 wQ · 800 L e8 · 1000 P e8 wN · 1500 C W", ("e8=N+",),
              ("PROMOTION_CHOICE_CHANGED",), game_end="GAME_END_DEAD_POSITION")
    r = run(scn)
    check(scn, r)
    assert next(i for i in r.raised if i.code == "PROMOTION_CHOICE_CHANGED").suggestion.move == "e8=Q"


def test_s37_replacement_move_after_reinstatement_must_use_the_touched_piece() -> None:
    """§3.7: after T34's illegal Bf1-c5 is reinstated, White plays Nc3 although the bishop can move."""
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 ARB reinstate · 1600 PAUSE · 1700 LEVER W · "
                   "2000 L c5 · 2200 P f1 wB · 2500 RESUME · 3000 L b1 · 3300 P c3 wN · 3800 C W",
              ("Nc3",), ("ILLEGAL_MOVE/GEOMETRY", "TOUCH_MOVE_VIOLATION"),
              allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    check(scn, run(scn))


def test_s37_replacement_move_with_the_touched_piece_is_fine() -> None:
    scn = Scn("L", "0 L f1 · 300 P c5 wB · 800 C W · 1500 ARB reinstate · 1600 PAUSE · 1700 LEVER W · "
                   "2000 L c5 · 2200 P f1 wB · 2500 RESUME · 3000 L f1 · 3300 P c4 wB · 3800 C W",
              ("Bc4",), ("ILLEGAL_MOVE/GEOMETRY",), allow_info=("CLOCK_PAUSED", "ARBITER_ADJUST"))
    check(scn, run(scn))


def test_r08_claim_deadline_is_the_opponents_first_lift() -> None:
    scn = Scn("L", "0 L f3 · 600 P f3 wN · 1500 L d2 · 1800 P d4 wP · 2100 C W · 3000 L g8 · 3300 P f6 bN · 3600 C B",
              ("d4", "Nf6"), ("ADJUST_OBSERVED", "TOUCH_MOVE_SUSPECTED"))
    r = run(scn)
    check(scn, r)
    touch = next(i for i in r.engine.irregularities if i.code == "TOUCH_MOVE_SUSPECTED")
    assert touch.claim_deadline == pytest.approx(3.0)


def test_mismatch_suggestions_name_the_closest_legal_move() -> None:
    t14b = next(i for i in run(SCENARIOS["T14b"]).raised if i.code == "POSITION_MISMATCH_AT_PRESS")
    assert t14b.suggestion.move == "exd5" and "h5" in t14b.suggestion.text
    t47b = next(i for i in run(SCENARIOS["T47b"]).raised if i.code == "DISPLACED_NOT_RESTORED_AT_PRESS")
    assert t47b.suggestion.move == "Bc4" and t47b.suggestion.add_to_opponent_s is None
    # interpretation (T64): the record holds the physical outcome (G6), so "reinstate the position after 2.Nf3" is
    # expressed as: reinstate ply 2 (before the illegal record) with 2.Nf3 as the move that stands.
    t64 = next(i for i in run(SCENARIOS["T64"]).raised if i.code == "ILLEGAL_MOVE")
    assert t64.suggestion.reinstate_ply == 2 and t64.suggestion.move == "Nf3"
    assert t64.suggestion.constraints[0].startswith("the wN on g1 must move")  # g1 was touched first


def test_r01b_two_placements_far_apart_and_r19_counted_once() -> None:
    """Two knights put down 100 ms apart, three squares apart (R01 b); the press completes an illegal
    two-piece change, so TWO_HANDS_AT_PRESS is reported but the illegal count goes up once (R19)."""
    scn = Scn("S1", "0 L g1 · 600 L b1 · 1000 P f3 wN · 1100 P c3 wN · 1500 C W", ("!",),
              ("TWO_HANDS_SUSPECTED", "ILLEGAL_MOVE/TWO_PIECES_MOVED", "TWO_HANDS_AT_PRESS"))
    r = run(scn)
    check(scn, r)
    assert r.engine.state.illegal_moves_white == 1
    at_press = next(i for i in r.raised if i.code == "TWO_HANDS_AT_PRESS")
    assert at_press.suggestion.add_to_opponent_s is None and "counted once" in at_press.suggestion.text


def test_t26_arbiter_exchanges_the_pawn_for_a_queen() -> None:
    """7.5.2: the arbiter (or the player on his instruction) exchanges the pawn on e8 for a queen during a pause:
    the record becomes 1.e8=Q (completed at the original press), no out-of-turn change."""
    scn = Scn("J", "0 L e7 · 300 P e8 wP · 700 C W · 2000 PAUSE · 3000 L e8 · 3500 P e8 wQ · 4000 RESUME",
              ("e8=Q",), ("PAWN_NOT_REPLACED",), allow_info=("CLOCK_PAUSED",), completed=(0.7,))
    check(scn, run(scn))


def test_t47b_knocked_pawn_restored_after_the_press_the_move_stands() -> None:
    scn = Scn("L", "0 L f1 · 200 L d2 · 320 P c4 wB · 700 C W · 1500 P d2 wP · 3000 L g8 · 3300 P f6 bN · 3600 C B",
              ("Bc4", "Nf6"), ("DISPLACED_NOT_RESTORED_AT_PRESS",))
    check(scn, run(scn))


def test_t29_arbiter_restarts_the_pressers_clock_then_the_move_is_normal() -> None:
    scn = Scn("S1", "0 C W · 1000 PAUSE · 1200 LEVER W · 1500 RESUME · 2000 L g1 · 2300 P f3 wN · 2700 C W",
              ("Nf3",), ("CLOCK_PRESS_NO_MOVE",), allow_info=("CLOCK_PAUSED",))
    check(scn, run(scn))
