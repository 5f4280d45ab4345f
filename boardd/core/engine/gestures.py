"""Result gestures (rules-spec §3.6; articles 5, 9.1): kings in the centre and result pieces, never a move."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _CENTRE_BB, centre_kings_result
from boardd.core.events import (
    Marker,
)
from boardd.core.outputs import (
    GameEvent,
    Output,
    Status,
)

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


class Gestures:
    """Result gestures (rules-spec §3.6; articles 5, 9.1): kings in the centre and result pieces, never a move."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.gesture_sent: str | None = None

    def check_result_gesture(self, outs: list[Output], at: float) -> None:
        if not self.rules.result_gesture:
            return
        result: str | None = None
        how = ""
        markers = set(self.g.markers.values()) - {Marker.UNKNOWN} if self.g.markers else None
        if markers:
            if len(markers) == 1:
                result = {Marker.DRAW: "1/2-1/2", Marker.WHITE_WINS: "1-0", Marker.BLACK_WINS: "0-1"}[markers.pop()]
                how = "result piece"
        else:
            # bitboards of the placement key (0 white, 1 black, 7 kings): exactly one king of each colour,
            # both on the centre squares
            key = self.g.phys.key()
            result = centre_kings_result(key[0], key[1], key[7])
            if result is not None:
                how = "kings on the centre squares"
        if result is None:
            self.gesture_sent = None
            return
        if self.gesture_sent == result:
            return
        self.gesture_sent = result
        if how == "kings on the centre squares":
            self.g.gesture_hold = True
            self.retract_gesture_moves(outs, at)
            self.withdraw_early_start(outs)
        details: dict[str, object] = {"result": result, "gesture": how}
        ended, self.e.downtime.ended_gap = self.e.downtime.ended_gap, None
        if ended is not None:
            # the game ended while the board was out of sight: the gap before it is this incident's (one alert)
            details["gap_ply"] = ended
        outs.append(GameEvent(at=at, type="RESULT_SIGNAL", code=None, details=details))

    def withdraw_early_start(self, outs: list[Output]) -> None:
        """Both players putting their kings in the centre is one gesture: neither started before the other."""
        self.e.recognition.early_pending = None
        for irr in list(self.g.irr.values()):
            if irr.code == "OPPONENT_STARTED_BEFORE_MOVE_MADE" and irr.status is not Status.RESOLVED \
                    and irr.ply >= len(self.g.records) - 2:
                self.e.findings.update_finding(outs, dataclasses.replace(
                    irr, status=Status.RESOLVED,
                    ruling="withdrawn: both kings were put on the centre squares, a result gesture"))

    def retract_gesture_moves(self, outs: list[Output], at: float) -> None:
        """The king move(s) onto the centre that form the gesture leave the record (lila#11783).

        Only the trailing made-not-completed king moves whose king still stands on its centre square
        are taken back (at most one per side); a move completed by a press stands. Findings raised about
        those moves only because they were taken for moves (the press not made) are withdrawn.
        """
        kings = self.g.phys.key()[7]
        ply = len(self.g.records)
        sides: set[chess.Color] = set()
        while ply > 0:
            rec = self.g.records[ply - 1]
            if rec.completed_at is not None or not rec.legal or rec.side in sides or len(rec.uci) != 4:
                break
            to_sq = chess.parse_square(rec.uci[2:4])
            after = chess.Board(rec.fen_after, chess960=self.g.game.chess960)
            if after.piece_type_at(to_sq) != chess.KING or not (chess.BB_SQUARES[to_sq] & _CENTRE_BB & kings):
                break
            sides.add(rec.side)
            ply -= 1
        if ply == len(self.g.records):
            return
        retracted = self.g.records[ply:]
        self.e.restoration.retract_to(outs, ply, at, "result gesture (kings on the centre squares), not a move")
        for irr in list(self.g.irr.values()):
            if irr.code in ("CLOCK_NOT_PRESSED", "MOVE_COMPLETED_WITHOUT_PRESS") and irr.ply >= ply \
                    and irr.status is not Status.RESOLVED and any(r.side == irr.side for r in retracted):
                self.e.findings.update_finding(outs, dataclasses.replace(
                    irr, status=Status.RESOLVED,
                    ruling="withdrawn: the king move was a result gesture, not a move"))
