"""The Laws of Chess tables: codes, articles, severities, penalties, categories, can-mate.

Theory of operation
-------------------
Everything here is pure data plus pure functions of python-chess boards:

* :func:`code_info` is the code table of rules-spec 5.1/5.2, resolved for one edition of the
  Laws (2009, 2014, 2018, 2023): the articles to cite, the severity (which changes with the
  edition for the 7.5.3/7.5.4 codes), the confidence, a default suggestion and a title in plain
  words for the arbiter's tablet. Article strings are transcribed from the spec table; "—"
  (no such provision in that edition) gives an empty tuple.
* :func:`is_illegal_move_class` (6.2) and :func:`suggest_penalty` (6.3) decide what an
  illegal-move-class event costs, per edition, category and supervision regime.
* :func:`category_of` is 7.1 (with the multi-period convention O10).
* :func:`flag_suggestion` / :func:`both_flags_suggestion` are the flag-fall rulings of 7.4
  (6.9 with the can-mate exception, 6.4 / 6.10.2 clock errors, 6.11 / A.4 / Guidelines III.3.1).
* :func:`draw_claim_available` and :func:`automatic_draw` are 9.2/9.3 and 9.6, per edition.
* :func:`can_mate` is the unilateral "can this side still checkmate by any series of legal moves"
  test of 6.9 / 7.5.5 / 5.2.2 (rules-spec 7.6): python-chess's material test for the certain
  "no", then a bounded cooperative (helpmate) search that either finds a mate (certain "yes"),
  exhausts every reachable position (certain "no", e.g. a locked pawn fortress) or gives up
  (``None``: the arbiter decides). :func:`mating_line` returns the mate found as evidence.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess

from boardd.core.outputs import Confidence, Severity
from boardd.core.settings import EDITIONS, Category, Regime

if TYPE_CHECKING:
    from boardd.core.clock import TimeControl

__all__ = [
    "ILLEGAL_MOVE_SUBTYPES",
    "CodeInfo",
    "FlagSuggestion",
    "PenaltySuggestion",
    "automatic_draw",
    "both_flags_suggestion",
    "can_mate",
    "category_of",
    "code_info",
    "draw_claim_available",
    "flag_fall_result",
    "flag_suggestion",
    "incorrect_draw_claim_penalty_s",
    "is_dead_position",
    "is_illegal_move_class",
    "known_codes",
    "mating_line",
    "suggest_penalty",
]

_LOGGER = logging.getLogger(__name__)

_INFO = Severity.INFO
_WARN = Severity.WARNING
_IMP = Severity.ILLEGAL_MOVE
_AUTO = Confidence.AUTO
_SUSP = Confidence.SUSPECTED


def _check_edition(edition: int) -> int:
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition of the Laws {edition!r}; expected one of {EDITIONS}")
    return edition


# --- The code table (rules-spec 5.1, 5.2) ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One code resolved for one edition of the Laws.

    Attributes:
        code: the code, e.g. ``"CASTLING_ROOK_FIRST"`` or ``"ILLEGAL_MOVE"``.
        articles: the articles of that edition (empty when the edition has no such provision).
        severity: info, warning or the illegal-move penalty class, for that edition.
        confidence: auto (follows from the sensor data) or suspected (the arbiter verifies).
        default_suggestion: the default suggestion of the 5.2 table, in plain words.
        title: what the code means, in plain words, for the arbiter's tablet.
    """

    code: str
    articles: tuple[str, ...]
    severity: Severity
    confidence: Confidence
    default_suggestion: str
    title: str


@dataclass(frozen=True, slots=True)
class _Row:
    articles: dict[int, tuple[str, ...]]
    severity: dict[int, Severity]
    confidence: Confidence
    suggestion: dict[int, str]
    title: str


def _cell(text: str) -> tuple[str, ...]:
    """Split one article cell of the spec table into articles.

    ``"4.3 + 7.5 a"`` and ``"6.1, 6.4, 6.8–6.9"`` give one article per part; a note in parentheses
    after an article (``"4.7 (A.4.2 agreed correction)"``) becomes an entry of its own, kept in its
    parentheses; a cell that is all in parentheses (``"(6.7 b–c)"``, nearest provision) stays whole.
    """
    if text.strip() in ("", "—"):
        return ()
    parts: list[str] = []
    for chunk in text.split(", "):
        for piece in (p.strip() for p in chunk.split(" + ")):
            if " (" in piece and not piece.startswith("("):
                head, _, note = piece.partition(" (")
                parts.extend((head, "(" + note))
            elif piece:
                parts.append(piece)
    return tuple(parts)


def _arts(e2009: str, e2014: str, e2018: str, e2023: str = "same") -> dict[int, tuple[str, ...]]:
    """Articles per edition, transcribed from the "09 / 14 / 18 / 23" columns ("same" = as 2018)."""
    result: dict[int, tuple[str, ...]] = {}
    previous: tuple[str, ...] = ()
    for edition, text in zip(EDITIONS, (e2009, e2014, e2018, e2023), strict=True):
        previous = previous if text == "same" else _cell(text)
        result[edition] = previous
    return result


def _row(articles: dict[int, tuple[str, ...]], severity: Severity | dict[int, Severity], confidence: Confidence,
         suggestion: str | dict[int, str], title: str) -> _Row:
    sev = dict.fromkeys(EDITIONS, severity) if isinstance(severity, Severity) else severity
    sug = dict.fromkeys(EDITIONS, suggestion) if isinstance(suggestion, str) else suggestion
    return _Row(articles=articles, severity=sev, confidence=confidence, suggestion=sug, title=title)


_NONE = _arts("—", "—", "—", "—")
#: 7.5.3 / 7.5.4 codes: warnings in E2009/E2014, illegal-move class from E2018 (6.2).
_IMP_FROM_2018 = {2009: _WARN, 2014: _WARN, 2018: _IMP, 2023: _IMP}

_TABLE: dict[str, _Row] = {
    # --- 5.1 move-record events (not irregularities) -----------------------------------------
    # MOVE_MADE / MOVE_COMPLETED have no article column in 5.1; the crosswalk (rules-spec 1) gives
    # "when a move is made" and "clock press completes the move".
    "MOVE_MADE": _row(_arts("4.6 a–c", "4.7 a–c", "4.7.1–4.7.3"), _INFO, _AUTO, "none",
                      "Legal move made (release presumed)"),
    "MOVE_COMPLETED": _row(_arts("6.7 a", "6.2 a", "6.2.1, 6.2.1.1, 6.2.1.2"), _INFO, _AUTO, "none",
                           "Move completed by a press, a game end or the player's next move"),
    "MOVE_COMPLETED_WITHOUT_PRESS": _row(_arts("—", "6.2 a.2", "6.2.1.2"), _INFO, _AUTO, "none",
                                         "Move completed by the same player's next move, without a press"),
    # 12.6 (13.6 in E2009): the arbiter must not tell a player that he forgot to press (G2).
    "CLOCK_NOT_PRESSED": _row(_arts("13.6", "12.6", "12.6"), _INFO, _AUTO,
                              "none; never signal this to the players",
                              "The mover has not pressed and the opponent is already moving"),
    "CLOCK_LATE_PRESS": _row(_arts("6.7 a", "6.2 a", "6.2.2"), _INFO, _AUTO, "none (a late press is allowed)",
                             "Clock pressed after the opponent's reply"),
    "LATENCY_RACE": _row(_NONE, _INFO, _AUTO, "none",
                         "Press and the placement that finished the move came within the latency window"),
    "GAME_END_CHECKMATE": _row(_arts("5.1 a", "5.1 a", "5.1.1"), _INFO, _AUTO, "the game is over: checkmate",
                               "Checkmate"),
    "GAME_END_STALEMATE": _row(_arts("5.2 a", "5.2 a", "5.2.1"), _INFO, _AUTO, "the game is drawn: stalemate",
                               "Stalemate"),
    "GAME_END_DEAD_POSITION": _row(_arts("5.2 b, 9.6", "5.2 b, 9.7", "5.2.2"), _INFO, _AUTO,
                                   "the game is drawn: neither player can checkmate",
                                   "Dead position"),
    "GAME_END_FIVEFOLD": _row(_arts("—", "9.6 a", "9.6.1"), _INFO, _AUTO, "the game is drawn (no claim needed)",
                              "Fivefold repetition"),
    "GAME_END_75_MOVES": _row(_arts("—", "9.6 b", "9.6.2"), _INFO, _AUTO, "the game is drawn (no claim needed)",
                              "75 moves without a pawn move or capture"),
    "DRAW_CLAIM_AVAILABLE": _row(_arts("9.2–9.3", "9.2–9.3", "9.2–9.3"), _INFO, _AUTO,
                                 "none; arbiter only, never prompt the players",
                                 "A threefold-repetition or 50-move claim would be correct"),
    "MOVE_AFTER_GAME_END": _row(_NONE, _INFO, _AUTO, "none", "Board activity after the game ended"),
    "ARBITER_ADJUST": _row(_arts("6.13, 6.10 b", "7.1, 6.10 b", "7.1, 6.10.2"), _INFO, _AUTO, "none",
                           "Clock time or move counter changed by the arbiter"),
    # --- 5.2 irregularity codes ------------------------------------------------------------------
    "SENSOR_FLICKER": _row(_NONE, _INFO, _AUTO, "ignore; log", "Sensor reading reverted within the flicker time"),
    "SENSOR_FAULT": _row(_NONE, _WARN, _AUTO, "check the board; suspend inference on the affected squares",
                         "Unknown piece code, persistent impossible reading or board disconnect"),
    "SETUP_INCORRECT": _row(
        _arts("7.1–7.2, A.4 a", "7.2–7.3, A.4 a", "7.2.1–7.3, A.4.1", "7.2.1–7.3, A.5.1"), _WARN, _AUTO,
        {2009: "standard: cancel and replay, or transfer the position; colours per 7.2; rapid/blitz "
               "\"otherwise\" after 3 moves: continue, no castling with a misplaced king/rook",
         2014: "standard: cancel and replay (7.2 a) or transfer (7.2 b); colours per 7.3; rapid/blitz "
               "\"otherwise\" after 10 moves: continue, no castling with a misplaced king/rook",
         2018: "standard: cancel and replay (7.2.1) or transfer (7.2.2); colours per 7.3; rapid/blitz "
               "\"otherwise\" after 10 moves: continue, no castling with a misplaced king/rook",
         2023: "standard: cancel and replay (7.2.1) or transfer (7.2.2); colours per 7.3; rapid/blitz "
               "\"otherwise\" after 10 moves: continue, no castling with a misplaced king/rook"},
        "Start position, board orientation or colours wrong"),
    "ADJUST_OBSERVED": _row(_arts("4.2", "4.2", "4.2.1"), _INFO, _SUSP, "none (j'adoube is not observable)",
                            "A piece was lifted and put back on its square by the player having the move"),
    "ADJUST_OUT_OF_TURN": _row(_arts("4.2", "4.2, 6.2 d", "4.2.1, 6.2.5"), _WARN, _SUSP,
                               {2009: "warning (13.4 a); actor unknown", 2014: "warning (12.9 a); actor unknown",
                                2018: "warning (12.9.1); actor unknown", 2023: "warning (12.9.1); actor unknown"},
                               "A piece was lifted and put back during the opponent's time"),
    "TOUCH_MOVE_SUSPECTED": _row(
        _arts("4.3 a, 4.5", "4.3 a, 4.5", "4.3.1, 4.5"), _WARN, _SUSP,
        "the first-touched piece must move (if claimed before the opponent touches a piece, 4.8, "
        "or if the arbiter saw it)",
        "Own piece lifted first, then a different piece moved although the first could move"),
    "TOUCH_CAPTURE_SUSPECTED": _row(_arts("4.3 b–c", "4.3 b–c", "4.3.2–4.3.3"), _WARN, _SUSP,
                                    "the touched piece must be captured",
                                    "Opponent's piece lifted first and could be captured, another move made"),
    "TOUCH_MOVE_VIOLATION": _row(_arts("4.3 + 7.4 a", "4.3 + 7.5 a", "4.3 + 7.5.1"), _WARN, _AUTO,
                                 "enforce the touched piece",
                                 "Replacement or corrected move made with a different piece although the "
                                 "touched piece can move"),
    "RELEASED_MOVE_CHANGED": _row(_arts("4.6", "4.7", "4.7"), _WARN, _SUSP, "the first released move stands",
                                  "Legal move presumed released, then changed"),
    "CASTLING_ROOK_FIRST": _row(_arts("4.4 b", "4.4 b", "4.4.2"), _WARN, _AUTO,
                                {2009: "no castling on that side this move; the rook must move if it can (4.3 a)",
                                 2014: "no castling on that side this move; the rook must move if it can (4.3 a)",
                                 2018: "no castling on that side this move; the rook must move if it can (4.3.1)",
                                 2023: "no castling on that side this move; the rook must move if it can (4.3.1)"},
                                "Rook lifted before the king, castling performed or attempted (lift order "
                                "certain; intent for the arbiter)"),
    "CASTLING_KING_RELEASED_NOT_COMPLETED": _row(
        _arts("4.6 b, 4.4 c", "4.7 b", "4.7.2"), _WARN, _SUSP,
        "castle on that side if legal, otherwise another king move",
        "King released on its castling square, then another move"),
    "PROMOTION_CHOICE_CHANGED": _row(_arts("4.4 d", "4.4 d", "4.4.4"), _WARN, _AUTO, "the first piece placed stands",
                                     "First piece placed on the promotion square replaced by another type"),
    "PROMOTION_ORDER_2009": _row(_arts("3.7 e, 4.6 c", "—", "—", "—"), _INFO, _AUTO,
                                 {2009: "arbiter judgement; this order is legal from 2014 (4.6)",
                                  2014: "none: legal from 2014 (4.6)", 2018: "none: legal (4.6.1–4.6.3)",
                                  2023: "none: legal (4.6.1–4.6.3)"},
                                 "Promotion not done as pawn on the square, pawn removed, new piece placed "
                                 "(E2009 only)"),
    "OPPONENT_STARTED_BEFORE_MOVE_MADE": _row(_arts("1.1", "1.1", "1.3"), _WARN, _SUSP,
                                              "the opponent must wait for the move to be made; touch-move "
                                              "applies to him",
                                              "Opponent lifted a piece while the mover's move was still partial"),
    "TWO_HANDS_SUSPECTED": _row(_arts("4.1", "4.1", "4.1"), _WARN, _SUSP,
                                "Article 4 breach; see TWO_HANDS_AT_PRESS",
                                "Simultaneous far-apart lifts or placements (two hands?) before the press"),
    "TWO_HANDS_AT_PRESS": _row(_arts("4.1", "4.1", "7.5.4"), _IMP_FROM_2018, _SUSP,
                               {2009: "discretionary (4.1, 13.4)", 2014: "discretionary (4.1, 12.9)",
                                2018: "reinstate + illegal-move penalty (7.5.4, 7.5.5)",
                                2023: "reinstate + illegal-move penalty (7.5.4, 7.5.5)"},
                               "A single move made with two hands, completed by a press"),
    # E2009 6.7 c lists forcible pressing, picking up, knocking over and not pressing before moving;
    # a press without a move is for the arbiter's discretion under 13.4 (spec footnote).
    "CLOCK_PRESS_NO_MOVE": _row(_arts("6.7 c, 13.4", "6.2 c", "7.5.3"), _IMP_FROM_2018, _SUSP,
                                {2009: "discretionary (13.4)", 2014: "discretionary: improper handling (6.2 c, 12.9)",
                                 2018: "restart the presser's clock + illegal-move penalty (7.5.5); the arbiter "
                                       "decides between error and distraction",
                                 2023: "restart the presser's clock + illegal-move penalty (7.5.5); the arbiter "
                                       "decides between error and distraction"},
                                "Clock pressed without a move by the presser"),
    "CLOCK_PRESS_PIECE_IN_HAND": _row(_arts("(6.7 b–c)", "6.2 b–c", "6.2.3–6.2.4 + 7.5.3"), _IMP_FROM_2018, _SUSP,
                                      {2009: "discretionary (13.4); the piece in hand is touch-move bound",
                                       2014: "discretionary (12.9); the piece in hand is touch-move bound",
                                       2018: "restart the presser's clock + illegal-move penalty (7.5.5); the "
                                             "piece in hand is touch-move bound",
                                       2023: "restart the presser's clock + illegal-move penalty (7.5.5); the "
                                             "piece in hand is touch-move bound"},
                                      "Clock pressed while the presser's own piece was still in the air"),
    "CLOCK_PRESS_OTHER_HAND_SUSPECTED": _row(_arts("6.7 b", "6.2 b", "6.2.3"), _WARN, _SUSP,
                                             "warning (not an illegal move)",
                                             "Press overlapping a placement or a piece in the air: other hand?"),
    "CLOCK_BOUNCE": _row(_arts("6.7 c", "6.2 c", "6.2.4"), _WARN, _SUSP, "check the clock; improper handling",
                         "Several lever transitions in quick succession"),
    "CLOCK_PAUSED": _row(_arts("6.12", "6.12", "6.11.2–6.11.4"), _INFO, _AUTO,
                         "arbiter checks the reason; penalise if none", "Clock paused"),
    "PROMOTION_PAUSE_REQUEST": _row(_arts("6.12 b", "6.12 b", "6.11.2"), _INFO, _AUTO, "supply the piece",
                                    "Clock paused during a partial promotion"),
    # The "(+7.1)" of the spec row applies to every edition that has 7.1 (E2014+; 6.13 in E2009).
    "CLOCK_MOVE_COUNTER_MISMATCH": _row(_arts("6.10 b", "6.10 b, 7.1", "6.10.2, 7.1"), _WARN, _AUTO,
                                        "correct the clock setting",
                                        "Clock move counter or period transition disagrees with the completed moves"),
    "CLOCK_SETTING_SUSPECT": _row(
        _arts("6.10 b, A.4 a", "6.10 b, A.4 a.1", "6.10.2, A.4.1.1", "6.10.2, A.5.1.1"), _WARN, _AUTO,
        "correct (in rapid/blitz \"otherwise\", only before 10 moves unless the schedule is affected)",
        "Initial times or increment differ from the configured control"),
    "FLAG_FALL": _row(
        _arts("6.1, 6.3, 6.8–6.9, A.4 d", "6.1, 6.4, 6.8–6.9, A.4 c", "6.1, 6.4, 6.8–6.9, A.4.3, A.4.5",
              "6.1, 6.4, 6.8–6.9, A.5.3, A.5.5"), _INFO, _AUTO,
        "loss on time, or draw if the opponent cannot checkmate (6.9)", "A flag fell"),
    "BOTH_FLAGS_FALLEN": _row(_arts("6.11, A.4 d.3", "6.11, A.4 c", "III.3.1", "III.3.1"), _INFO, _AUTO,
                              "first flag decides if the order is known; otherwise see 7.4 (draw in the last period)",
                              "Both flags down"),
    "MATE_FLAG_RACE": _row(_arts("5.1 a, 6.9", "5.1 a, 6.9", "5.1.1, 6.9"), _WARN, _SUSP,
                           "arbiter decides the order: the mate stands only if it was made before the flag fell",
                           "Mating, stalemating or dead-position move and flag fall within the release uncertainty"),
    "CAPTURED_PIECE_PARKED": _row(_arts("4.6 a", "4.7 a", "4.7.1"), _INFO, _AUTO,
                                  "none; if still on the board at the press see POSITION_MISMATCH_AT_PRESS",
                                  "Captured piece put down on another square during the move, removed before the "
                                  "press"),
    "DISPLACED_PIECES": _row(_arts("7.3", "7.4", "7.4.1–7.4.3"), _INFO, _SUSP, "none, or discretionary",
                             "Pieces knocked over or displaced, restored before the press"),
    "DISPLACED_NOT_RESTORED_AT_PRESS": _row(_arts("7.3", "7.4", "7.4.1–7.4.3"), _WARN, _SUSP,
                                            "the offender restores on his own time; clock paused if needed",
                                            "Pieces knocked over or displaced, not restored at the press"),
    "POSITION_DIVERGENCE": _row(_arts("7.5", "7.6", "7.6"), _WARN, _AUTO, "reinstate the last correct position",
                                "Physical position differs from the official one with no move in progress"),
    "OUT_OF_TURN_CHANGE": _row(_arts("1.1, 7.5", "1.1, 6.2 d, 7.6", "1.3, 6.2.5, 7.6"), _WARN, _SUSP,
                               "reinstate; not an illegal move unless completed by that side's press",
                               "The side without the move changed the position"),
    "POSITION_MISMATCH_AT_PRESS": _row(_arts("7.3–7.5", "7.4–7.6", "7.4–7.6"), _WARN, _SUSP,
                                       "arbiter inspects; reinstate as needed",
                                       "Clock pressed with a position that is no recognisable move"),
    "ILLEGAL_PLACEMENT_CORRECTED": _row(_arts("4.6, 7.4 a", "4.7, 7.5 a", "4.7, 7.5.1"), _INFO, _AUTO,
                                        "no penalty (the move was not completed); check touch-move",
                                        "Piece released on an illegal square, corrected before the press"),
    "ILLEGAL_MOVE": _row(_arts("7.4 a", "7.5 a", "7.5.1"), _IMP, _AUTO, "reinstate + illegal-move penalty",
                         "Illegal move completed"),
    "CASTLING_INCOMPLETE_AT_PRESS": _row(_arts("4.6 b, 7.4 a", "4.7 b, 7.5 a", "4.7.2, 7.5.1"), _IMP, _AUTO,
                                         "reinstate; must castle on that side if legal (arbiter to verify)",
                                         "King moved two squares, rook not moved, clock pressed"),
    "EN_PASSANT_INCOMPLETE_AT_PRESS": _row(_arts("7.4 a", "7.5 a", "7.5.1"), _IMP, _AUTO,
                                           "reinstate; the pawn must move",
                                           "En passant capturing pawn placed, captured pawn still on the board, "
                                           "clock pressed"),
    "PROMOTION_INCOMPLETE_AT_PRESS": _row(_arts("7.4 a", "7.5 a", "7.5.1 (7.5.2 by analogy)"), _IMP, _SUSP,
                                          "reinstate, or queen by analogy (arbiter)",
                                          "Promotion not finished at the press"),
    "PAWN_NOT_REPLACED": _row(_arts("7.4 a", "7.5 a", "7.5.2"), _IMP, _AUTO,
                              {2009: "reinstate; the pawn must move, free choice of piece + illegal-move penalty",
                               2014: "the pawn becomes a queen of its colour + illegal-move penalty",
                               2018: "the pawn becomes a queen of its colour + illegal-move penalty",
                               2023: "the pawn becomes a queen of its colour + illegal-move penalty"},
                              "Pawn left on the last rank at the press"),
    "ILLEGAL_MOVE_LIMIT_REACHED": _row(_arts("7.4 b", "7.5 b, A.4 b", "7.5.5"), _INFO, _AUTO,
                                       "loss, or draw if the opponent cannot checkmate",
                                       "The illegal-move count reached the loss threshold"),
    "ILLEGAL_MOVE_STANDS": _row(_arts("A.4 c, B.3 c", "A.4 b", "A.4.2", "A.5.2"), _INFO, _AUTO,
                                "none; the illegal move stands",
                                "\"Otherwise\" regime: the claim window closed without a ruling"),
    "ILLEGAL_POSITION_PENDING": _row(_arts("A.4 c", "A.4 d", "A.4.4", "A.5.4"), _WARN, _AUTO,
                                     "\"otherwise\" regime: wait one move; standard: illegal-move penalty",
                                     "Both kings in check or a pawn on the last rank after a completed move"),
    "ILLEGAL_POSITION_PERSISTS": _row(_arts("—", "A.4 d", "A.4.4", "A.5.4"), _INFO, _AUTO,
                                      "draw (\"otherwise\" regime only)",
                                      "Illegal position still on the board after the next completed move"),
    "TAKEBACK_DETECTED": _row(_arts("4.6", "4.7", "4.7 (A.4.2 agreed correction)", "4.7 (A.5.2)"), _WARN, _AUTO,
                              "arbiter; legal moves cannot be taken back",
                              "Return to an earlier official position after a completed move"),
    "CHESS960_CASTLING_ORDER": _row(_arts("F.3", "F.3", "II.3"), _INFO, _SUSP, "arbiter checks the intention",
                                    "Chess960 castling done in an order that could be read as a king move"),
}

#: Subtypes of ``ILLEGAL_MOVE`` (rules-spec 4 R16). The pattern codes CASTLING_INCOMPLETE_AT_PRESS,
#: EN_PASSANT_INCOMPLETE_AT_PRESS and PROMOTION_INCOMPLETE_AT_PRESS are codes of their own (5.2);
#: :func:`code_info` also accepts them written as ``ILLEGAL_MOVE/<pattern code>``.
ILLEGAL_MOVE_SUBTYPES: frozenset[str] = frozenset({
    "GEOMETRY",
    "BLOCKED",
    "SELF_CHECK",
    "CASTLING_ILLEGAL",
    "EN_PASSANT_INVALID",
    "PROMOTION_INVALID_PIECE",
    "KING_CAPTURED",
    "OWN_PIECE_CAPTURED",
    "WRONG_SIDE_MOVED",
    "TWO_PIECES_MOVED",
})

_SUBTYPE_TITLES = {
    "GEOMETRY": "the piece cannot move that way",
    "BLOCKED": "the path was not clear",
    "SELF_CHECK": "the move leaves or puts the own king in check",
    "CASTLING_ILLEGAL": "castling not allowed (rights lost, in check, crossing or landing on an attacked square, "
                        "pieces between)",
    "EN_PASSANT_INVALID": "en passant not immediately after the double step",
    "PROMOTION_INVALID_PIECE": "promotion to a king, a pawn or a piece of the other colour",
    "KING_CAPTURED": "the opponent's king was captured",
    "OWN_PIECE_CAPTURED": "an own piece was captured",
    "WRONG_SIDE_MOVED": "the side not having the move moved and pressed",
    "TWO_PIECES_MOVED": "two pieces were moved",
}

_PATTERN_CODES = frozenset({"CASTLING_INCOMPLETE_AT_PRESS", "EN_PASSANT_INCOMPLETE_AT_PRESS",
                            "PROMOTION_INCOMPLETE_AT_PRESS"})


def known_codes() -> frozenset[str]:
    """Every code of rules-spec 5.1 and 5.2 (``ILLEGAL_MOVE`` without its subtypes)."""
    return frozenset(_TABLE)


def _split_code(code: str) -> tuple[str, str | None]:
    base, sep, subtype = code.partition("/")
    if not sep:
        return code, None
    if base != "ILLEGAL_MOVE" or (subtype not in ILLEGAL_MOVE_SUBTYPES and subtype not in _PATTERN_CODES):
        raise KeyError(code)
    return (subtype, None) if subtype in _PATTERN_CODES else (base, subtype)


def code_info(code: str, edition: int) -> CodeInfo:
    """The table row of ``code`` for ``edition``.

    ``code`` is a 5.1/5.2 code or ``ILLEGAL_MOVE/<subtype>``.

    Raises:
        KeyError: unknown code.
        ValueError: unknown edition.
    """
    _check_edition(edition)
    base, subtype = _split_code(code)
    row = _TABLE[base]
    title = row.title if subtype is None else f"{row.title}: {_SUBTYPE_TITLES[subtype]}"
    return CodeInfo(code=code, articles=row.articles[edition], severity=row.severity[edition],
                    confidence=row.confidence, default_suggestion=row.suggestion[edition], title=title)


_IMP_2009 = frozenset({"ILLEGAL_MOVE", "PAWN_NOT_REPLACED", "PROMOTION_INCOMPLETE_AT_PRESS",
                       "CASTLING_INCOMPLETE_AT_PRESS", "EN_PASSANT_INCOMPLETE_AT_PRESS"})
_IMP_2018 = _IMP_2009 | {"CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND", "TWO_HANDS_AT_PRESS"}


def is_illegal_move_class(code: str, edition: int) -> bool:
    """True if ``code`` counts towards the illegal-move limit in ``edition`` (rules-spec 6.2).

    Raises:
        KeyError: unknown code.
        ValueError: unknown edition.
    """
    _check_edition(edition)
    base, _ = _split_code(code)
    if base not in _TABLE:
        raise KeyError(code)
    return base in (_IMP_2018 if edition >= 2018 else _IMP_2009)


# --- Categories (rules-spec 7.1) --------------------------------------------------------------------


def category_of(tc: TimeControl, edition: int) -> Category:
    """The category of ``tc`` under ``edition`` (7.1), from ``T60 = base + 60 x bonus``.

    E2009: blitz below 15 minutes, rapid from 15 to below 60. E2014+: blitz up to 10 minutes
    inclusive, rapid above 10 and below 60. Standard from 60 minutes. Multi-period controls count
    the periods that begin within the first 60 moves (O10). An untimed control is standard.

    Raises:
        ValueError: unknown edition.
    """
    _check_edition(edition)
    if not tc.is_timed:
        return Category.STANDARD
    minutes = tc.t60_s / 60.0
    if minutes >= 60:
        return Category.STANDARD
    if edition == 2009:
        return Category.BLITZ if minutes < 15 else Category.RAPID
    return Category.BLITZ if minutes <= 10 else Category.RAPID


# --- Penalties (rules-spec 6.3, 6.4) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PenaltySuggestion:
    """What the Laws suggest after an illegal-move-class event (advisory only, G1).

    Attributes:
        stands: "otherwise" regime, window closed: the illegal move stands (no penalty, no count).
        add_to_opponent_s: time to add to the offender's opponent.
        remove_from_offender_s: the increment earned by the illegal press (Arbiters' Manual).
        result: the suggested result when the game is lost ("1-0", "0-1") or drawn ("1/2-1/2").
        reinstate: reinstate the position before the illegal move (7.5.1).
        text: the suggestion in plain words with its articles.
        articles: the articles behind it.
    """

    stands: bool
    add_to_opponent_s: int | None
    remove_from_offender_s: float | None
    result: str | None
    reinstate: bool
    text: str
    articles: tuple[str, ...]


_BASE_ARTICLE = {2009: "7.4 b", 2014: "7.5 b", 2018: "7.5.5", 2023: "7.5.5"}
#: Appendix articles per (category, otherwise regime) and edition (crosswalk, rules-spec 1 and 6.3).
_REGIME_ARTICLES: dict[tuple[Category, bool], dict[int, tuple[str, ...]]] = {
    (Category.RAPID, False): {2009: ("A.3",), 2014: ("A.3",), 2018: ("A.3.1",), 2023: ("A.4",)},
    (Category.RAPID, True): {2009: ("A.4 c",), 2014: ("A.4 b",), 2018: ("A.4.2",), 2023: ("A.5.2",)},
    (Category.BLITZ, False): {2009: ("B.2",), 2014: ("B.3",), 2018: ("B.3",), 2023: ("B.2",)},
    (Category.BLITZ, True): {2009: ("B.3 c",), 2014: ("B.4", "A.4 b"), 2018: ("B.4", "A.4.2"),
                             2023: ("B.3", "A.5.2")},
}
_ORDINAL = {1: "1st", 2: "2nd", 3: "3rd"}


def _side(color: chess.Color) -> str:
    return "White" if color == chess.WHITE else "Black"


def _clock_text(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def suggest_penalty(*, edition: int, category: Category, regime: Regime, n: int, offender: chess.Color,
                    opp_can_mate: bool | None, observed_in_window: bool = True, increment_earned_s: float = 0.0,
                    blitz_adequate_penalty_2023: int = 1) -> PenaltySuggestion:
    """The rules-spec 6.3 decision for an illegal-move-class event.

    Args:
        edition: 2009, 2014, 2018 or 2023.
        category: standard, rapid or blitz (7.1).
        regime: COMPETITION (adequate supervision; standard play is always this) or OTHERWISE.
        n: penalised illegal-move-class events by the offender in this game, counting this one.
        offender: the side that made the illegal move.
        opp_can_mate: whether the offender's opponent can still checkmate (7.6); None if unknown.
        observed_in_window: "otherwise" regime: the arbiter ruled or the opponent claimed before
            the opponent's next move was made.
        increment_earned_s: the increment (or delay) the illegal press earned; suggested for removal.
        blitz_adequate_penalty_2023: minutes for E2023 blitz under adequate supervision (O1).

    Raises:
        ValueError: unknown edition, ``n < 1``, a negative increment or a penalty other than 1 or 2.
    """
    _check_edition(edition)
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n counts the current illegal move and must be >= 1, got {n!r}")
    if increment_earned_s < 0:
        raise ValueError(f"increment_earned_s must be >= 0, got {increment_earned_s!r}")
    if blitz_adequate_penalty_2023 not in (1, 2):
        raise ValueError(f"blitz_adequate_penalty_2023 must be 1 or 2, got {blitz_adequate_penalty_2023!r}")
    opponent = not offender
    otherwise = regime is Regime.OTHERWISE and category in (Category.RAPID, Category.BLITZ)
    base = _BASE_ARTICLE[edition]
    regime_articles = _REGIME_ARTICLES.get((category, otherwise), {}).get(edition, ())

    def lose(articles: list[str], why: str) -> PenaltySuggestion:
        arts = _dedupe([a for a in articles if a])
        cite = ", ".join(arts)
        if opp_can_mate is False:
            return PenaltySuggestion(
                stands=False, add_to_opponent_s=None, remove_from_offender_s=None, result="1/2-1/2",
                reinstate=False, articles=arts,
                text=f"1/2-1/2: {why}, but {_side(opponent)} cannot checkmate by any series of legal moves ({cite})")
        result = "0-1" if offender == chess.WHITE else "1-0"
        if opp_can_mate is None:
            text = (f"{result}: {why}; {_side(offender)} loses unless the arbiter finds that the opponent cannot "
                    f"mate ({cite})")
        else:
            text = f"{result}: {why}; {_side(offender)} loses ({cite})"
        return PenaltySuggestion(stands=False, add_to_opponent_s=None, remove_from_offender_s=None, result=result,
                                 reinstate=False, text=text, articles=arts)

    if otherwise:
        if not observed_in_window:
            cite = ", ".join(regime_articles)
            return PenaltySuggestion(
                stands=True, add_to_opponent_s=None, remove_from_offender_s=None, result=None, reinstate=False,
                articles=regime_articles,
                text=f"the illegal move stands: no ruling or claim before {_side(opponent)}'s next move ({cite})")
        if edition == 2014:
            return lose(list(regime_articles), f"{_side(offender)}'s illegal move observed or claimed in time")
        if edition == 2009 and category is Category.BLITZ:
            return lose(list(regime_articles),
                        f"{_side(opponent)} claimed {_side(offender)}'s illegal move before moving")

    limit = 3 if edition == 2009 else 2
    ordinal = _ORDINAL.get(n, f"{n}th")
    if n >= limit:
        return lose([base, *regime_articles], f"{ordinal} illegal move by {_side(offender)}")

    minutes = 2
    minute_article = ""
    if edition in (2014, 2018) and category is Category.BLITZ:
        minutes, minute_article = 1, "B.2"
    elif edition == 2023 and category is Category.RAPID:
        minutes, minute_article = 1, "A.3"
    elif edition == 2023 and category is Category.BLITZ and (otherwise or blitz_adequate_penalty_2023 == 1):
        # Adequate supervision with blitz_adequate_penalty_2023 == 2 keeps the literal B.2 reading
        # (Competition Rules, 7.5.5): 2 minutes (O1).
        minutes, minute_article = 1, "A.3"
    arts = _dedupe([a for a in (base, *regime_articles, minute_article) if a])
    parts = [f"+{_clock_text(minutes * 60)} to {_side(opponent)} ({', '.join(arts)})"]
    remove = float(increment_earned_s) if increment_earned_s > 0 else None
    if remove is not None:
        parts.append(f"remove {_side(offender)}'s {remove:g} s increment")
    parts.append("reinstate")
    if edition == 2009 and otherwise:
        parts.insert(0, f"on {_side(opponent)}'s claim before his own move")
    return PenaltySuggestion(stands=False, add_to_opponent_s=minutes * 60, remove_from_offender_s=remove, result=None,
                             reinstate=True, text="; ".join(parts), articles=arts)


def incorrect_draw_claim_penalty_s(edition: int, category: Category) -> int:
    """Time added to the opponent after an incorrect draw claim (rules-spec 6.4; 9.5 b / 9.5.3).

    E2009: 3 minutes. E2014/E2018: 2 minutes, 1 in blitz (B.2). E2023: 2 minutes, 1 in rapid and
    blitz (A.3).

    Raises:
        ValueError: unknown edition.
    """
    _check_edition(edition)
    if edition == 2009:
        return 180
    if category is Category.BLITZ or (edition == 2023 and category is Category.RAPID):
        return 60
    return 120


# --- Can-mate and dead positions (rules-spec 7.6) -------------------------------------------------

#: Positions the best-first cooperative search expands before it gives up (can_mate returns None).
SEARCH_BUDGET = 500
#: Pieces (kings included) above which can_mate does not try the best-first search: in full
#: positions a cooperative mate is rarely found within the budget, so the cost would buy nothing.
SEARCH_MAX_PIECES = 8
#: Depth (half-moves) and node budget of the exhaustive short-helpmate search run first.
HELPMATE_PLIES = 3
HELPMATE_BUDGET = 500
#: Positions the exhaustive fortress search may visit before it gives up.
CLOSURE_BUDGET = 6000


def _key(board: chess.Board) -> Hashable:
    # python-chess's own position identity (pieces, turn, castling rights, e.p. square).
    return board._transposition_key()


def _king_distance_to_edge(square: chess.Square) -> int:
    file, rank = chess.square_file(square), chess.square_rank(square)
    return min(file, 7 - file, rank, 7 - rank)


def _heuristic(board: chess.Board, color: chess.Color) -> int:
    """Lower is closer to a cooperative mate of ``not color``.

    Rewards a defending king near the edge, the attacking king and the nearest attacking piece close
    to it, attacking material kept, and (without a queen or rook) a pawn near promotion.
    """
    defender_king = board.king(not color)
    attacker_king = board.king(color)
    if defender_king is None or attacker_king is None:
        return 0
    score = 4 * _king_distance_to_edge(defender_king) + chess.square_distance(attacker_king, defender_king)
    attackers = board.occupied_co[color] & ~board.kings
    pieces = attackers & ~board.pawns
    if pieces:
        score += min(chess.square_distance(square, defender_king) for square in chess.scan_forward(pieces))
    if not attackers & (board.queens | board.rooks):
        pawns = attackers & board.pawns
        if pawns:
            target = 7 if color == chess.WHITE else 0
            score += 2 * min(abs(target - chess.square_rank(square)) for square in chess.scan_forward(pawns))
    score -= 2 * chess.popcount(attackers)
    return score


def _corner_distance(square: chess.Square) -> int:
    file, rank = chess.square_file(square), chess.square_rank(square)
    return min(file, 7 - file) + min(rank, 7 - rank)


def _heuristic_minor(board: chess.Board, color: chess.Color) -> int:
    """Like :func:`_heuristic`, tuned for mates with minor pieces: the defending king goes to a corner,
    and (without an attacking queen or rook) its own pieces stay next to it, where they can block."""
    defender_king = board.king(not color)
    attacker_king = board.king(color)
    if defender_king is None or attacker_king is None:
        return 0
    score = 3 * _king_distance_to_edge(defender_king) + 2 * _corner_distance(defender_king)
    score += chess.square_distance(attacker_king, defender_king)
    attackers = board.occupied_co[color] & ~board.kings
    pieces = attackers & ~board.pawns
    if pieces:
        score += min(chess.square_distance(square, defender_king) for square in chess.scan_forward(pieces))
    heavy = attackers & (board.queens | board.rooks)
    if not heavy:
        pawns = attackers & board.pawns
        if pawns:
            target = 7 if color == chess.WHITE else 0
            score += 2 * min(abs(target - chess.square_rank(square)) for square in chess.scan_forward(pawns))
        blockers = board.occupied_co[not color] & ~board.kings
        if blockers:
            score += min(chess.square_distance(square, defender_king) for square in chess.scan_forward(blockers))
    score -= 2 * chess.popcount(attackers)
    return score


def _mated(board: chess.Board) -> bool:
    """Checkmate test that skips move generation unless the side to move is in check."""
    return board.is_check() and not any(board.generate_legal_moves())


#: Outcome of a search: (True, mating line) / (False, []) certain no / (None, []) undecided.
_Outcome = tuple[bool | None, list[chess.Move]]


def _best_first(board: chess.Board, color: chess.Color, budget: int,
                heuristic: Callable[[chess.Board, chess.Color], int]) -> _Outcome:
    """Best-first cooperative search steered by ``heuristic`` (at most ``budget`` expansions)."""
    start = board.copy(stack=False)
    counter = itertools.count()
    frontier: list[tuple[int, int, chess.Board, tuple[chess.Move, ...]]] = [(0, next(counter), start, ())]
    seen = {_key(start)}
    expanded = 0
    while frontier:
        _, _, node, line = heapq.heappop(frontier)
        expanded += 1
        if expanded > budget:
            return None, []
        for move in list(node.generate_legal_moves()):
            node.push(move)
            key = _key(node)
            if key in seen:
                node.pop()
                continue
            seen.add(key)
            if _mated(node):
                node.pop()
                if node.turn == color:
                    return True, [*line, move]
                continue
            child = node.copy(stack=False)
            node.pop()
            if child.has_insufficient_material(color) or not any(child.generate_legal_moves()):
                continue
            heapq.heappush(frontier, (heuristic(child, color), next(counter), child, (*line, move)))
    return False, []


class _BudgetExceeded(Exception):
    """The shallow helpmate search ran out of nodes."""


def _helpmate(board: chess.Board, color: chess.Color, plies: int, failed: set[tuple[Hashable, int]],
              nodes: list[int]) -> bool:
    """Is there a mate of ``not color`` within ``plies`` half-moves, both sides cooperating?

    Exhaustive within the depth (so a short helpmate is never missed), with a transposition set of
    (position, depth) pairs already refuted and a shared node counter ``nodes = [used, budget]``.
    On success the mating line is left pushed on ``board``.

    Raises:
        _BudgetExceeded: more than ``nodes[1]`` positions were visited.
    """
    key = (_key(board), plies)
    if key in failed:
        return False
    attacker_to_move = board.turn == color
    # The last ply must be the attacker's mating move, and a mate needs a check.
    if plies == 1 and not attacker_to_move:
        return False
    for move in list(board.generate_legal_moves()):
        if plies == 1 and not board.gives_check(move):
            continue
        nodes[0] += 1
        if nodes[0] > nodes[1]:
            raise _BudgetExceeded
        board.push(move)
        if _mated(board):
            if attacker_to_move:
                return True
        elif plies > 1 and _helpmate(board, color, plies - 1, failed, nodes):
            return True
        board.pop()
    failed.add(key)
    return False


def _shallow_helpmate(board: chess.Board, color: chess.Color, max_plies: int, budget: int) -> _Outcome:
    """Iterative deepening over :func:`_helpmate`: (True, line) if a mate within ``max_plies`` exists,
    otherwise (None, []) (not found within the depth or the budget)."""
    work = board.copy(stack=False)
    failed: set[tuple[Hashable, int]] = set()
    nodes = [0, budget]
    try:
        for plies in range(1, max_plies + 1):
            if _helpmate(work, color, plies, failed, nodes):
                return True, list(work.move_stack)
    except _BudgetExceeded:
        pass
    return None, []


def _is_fortress_candidate(board: chess.Board) -> bool:
    """Only kings, bishops and pawns, and no pawn can move or capture now: the reachable set may be small."""
    if board.knights | board.rooks | board.queens or not board.pawns:
        return False
    for color in chess.COLORS:
        probe = board.copy(stack=False) if board.turn != color else board
        if probe is not board:
            probe.turn = color
            probe.ep_square = None
        for _move in probe.generate_pseudo_legal_moves(from_mask=probe.pawns & probe.occupied_co[color]):
            return False
    return True


def _closure(board: chess.Board, color: chess.Color | None, budget: int) -> _Outcome:
    """Visit every position reachable from a locked ``board`` (depth first, transposition set).

    Returns (True, line) as soon as a mate of ``not color`` (of either side if ``color`` is None)
    is reached and (False, []) when every reachable position has been visited without one (a
    certain "cannot mate"). Returns (None, []) when more than ``budget`` positions are reachable,
    or as soon as a capture or a pawn move becomes possible: the structure can then change, so
    the position is no fortress this search can settle.
    """
    work = board.copy(stack=False)
    seen = {_key(work)}

    def replies_of(position: chess.Board) -> list[chess.Move] | None:
        moves = list(position.generate_legal_moves())
        for move in moves:
            if position.is_capture(move) or position.piece_type_at(move.from_square) == chess.PAWN:
                return None
        return moves

    first = replies_of(work)
    if first is None:
        return None, []
    stack = [iter(first)]
    while stack:
        move = next(stack[-1], None)
        if move is None:
            stack.pop()
            if stack:
                work.pop()
            continue
        work.push(move)
        key = _key(work)
        if key in seen:
            work.pop()
            continue
        seen.add(key)
        if len(seen) > budget:
            return None, []
        replies = replies_of(work)
        if replies is None:
            return None, []
        if not replies:
            if work.is_check() and (color is None or work.turn != color):
                return True, list(work.move_stack)
            work.pop()
            continue
        stack.append(iter(replies))
    return False, []


def mating_line(board: chess.Board, color: chess.Color) -> tuple[bool | None, list[chess.Move]]:
    """:func:`can_mate` with its evidence: ``(True, moves)`` gives a legal line from ``board`` that ends
    with ``color`` checkmating (both sides cooperating; empty if ``board`` is already that mate).

    ``(False, [])`` and ``(None, [])`` as in :func:`can_mate`.
    """
    if board.is_checkmate():
        return (True, []) if board.turn != color else (False, [])
    if board.is_stalemate() or board.has_insufficient_material(color):
        return False, []
    if _is_fortress_candidate(board):
        decided, line = _closure(board, color, CLOSURE_BUDGET)
        if decided is not None:
            return decided, line
    if chess.popcount(board.occupied) > SEARCH_MAX_PIECES:
        return None, []
    found, line = _shallow_helpmate(board, color, HELPMATE_PLIES, HELPMATE_BUDGET)
    if found:
        return True, line
    # Two steerings share the budget: edge-and-material first (rooks, queens, pawns, bishop pairs),
    # then corner-and-blockers (knight mates, helpmates that need the defender's own pieces).
    found, line = _best_first(board, color, SEARCH_BUDGET // 3, _heuristic)
    if found is None:
        found, line = _best_first(board, color, SEARCH_BUDGET - SEARCH_BUDGET // 3, _heuristic_minor)
    if found is None:
        _LOGGER.debug("can_mate(%s, %s): undecided within the search budget", board.fen(), chess.COLOR_NAMES[color])
    return found, line


def can_mate(board: chess.Board, color: chess.Color) -> bool | None:
    """Can ``color`` checkmate the other king by any series of legal moves (helpmate allowed)?

    Tiers (rules-spec 7.6):

    1. a finished game answers directly (mate, stalemate);
    2. python-chess's material test gives the certain "no" (bare king, a lone minor piece against a
       bare king, bishops all on one colour, ...);
    3. a locked position (only kings, bishops and pawns, no pawn able to move or capture) is searched
       exhaustively (at most :data:`CLOSURE_BUDGET` positions) as long as no capture or pawn move
       ever becomes possible: no mate anywhere in that reachable set is a certain "no" (a
       blocked-pawn fortress); a structure that can change goes on to tier 4;
    4. with at most :data:`SEARCH_MAX_PIECES` pieces (kings included): an exhaustive search for a
       short helpmate (:data:`HELPMATE_PLIES` half-moves, :data:`HELPMATE_BUDGET` nodes), then a
       best-first cooperative search (:data:`SEARCH_BUDGET` expansions, shared by two steerings:
       towards the edge, then towards a corner with the defender's own pieces as blockers);
       a mate found is a certain "yes" (:func:`mating_line` returns it);
    5. otherwise ``None``: undecided, the arbiter decides. Positions with more material return
       None at once: a cooperative mate is nearly always there, but proving it costs more than the
       answer is worth in a daemon.

    Every tier is bounded by its budget; nothing reads a clock. ``board`` is not changed.
    """
    return mating_line(board, color)[0]


def is_dead_position(board: chess.Board) -> bool:
    """5.2.2: True only when it is certain that neither side can checkmate.

    Cheap enough to call after every move: python-chess's material test, and the exhaustive search
    only for locked positions (see :func:`can_mate`, tier 3). It never runs the best-first search.
    """
    if board.is_insufficient_material():
        return True
    if board.is_checkmate():
        return False
    # One exhaustive search serves both sides: the reachable set is the same.
    return _is_fortress_candidate(board) and _closure(board, None, CLOSURE_BUDGET)[0] is False


def flag_fall_result(board: chess.Board, flagged: chess.Color) -> str:
    """6.9: the flagged side loses, unless the opponent cannot checkmate (then draw).

    An undecided can-mate test gives the loss (the arbiter may still find that the opponent cannot
    mate).
    """
    if can_mate(board, not flagged) is False:
        return "1/2-1/2"
    return "0-1" if flagged == chess.WHITE else "1-0"


@dataclass(frozen=True, slots=True)
class FlagSuggestion:
    """What the Laws suggest after a flag fall (rules-spec 7.4). Advisory only (G1).

    Attributes:
        result: "1-0", "0-1", "1/2-1/2", or None when play goes on (clock to be corrected, or both
            flags down in a period that is not the last).
        text: the suggestion in plain words with its articles.
        articles: the articles behind it.
        verify: True when the arbiter must decide something the software cannot see (can-mate
            undecided, order of two flags unknown and no rule applies).
    """

    result: str | None
    text: str
    articles: tuple[str, ...]
    verify: bool = False


_FLAG_ARTICLES = {2009: ("6.3", "6.9"), 2014: ("6.4", "6.9"), 2018: ("6.4", "6.9"), 2023: ("6.4", "6.9")}
_CLOCK_ERROR_ARTICLE = {2009: "6.10 b", 2014: "6.10 b", 2018: "6.10.2", 2023: "6.10.2"}


def flag_suggestion(board: chess.Board, flagged: chess.Color, *, edition: int, tc: TimeControl | None = None,
                    moves_completed: int | None = None) -> FlagSuggestion:
    """6.9 with 6.4: the result to suggest when ``flagged``'s flag falls in position ``board``.

    If ``tc`` and the flagged side's completed moves are given and the flagged side had already
    completed the moves required for its period (so the clock should have added the next period),
    the flag is a clock-setting error, not a loss (6.10.2). Otherwise the flagged side loses,
    unless the opponent cannot checkmate by any series of legal moves (draw); when that cannot be
    decided the loss is suggested with ``verify`` set.

    Raises:
        ValueError: unknown edition, or a negative move count.
    """
    _check_edition(edition)
    if moves_completed is not None and moves_completed < 0:
        raise ValueError(f"moves_completed must be >= 0, got {moves_completed!r}")
    name, opponent = _side(flagged), _side(not flagged)
    if tc is not None and tc.is_timed and moves_completed is not None and moves_completed > 0:
        period = tc.period_of_move(moves_completed)
        end = tc._period_end(period)
        if end is not None and moves_completed == end:
            article = _CLOCK_ERROR_ARTICLE[edition]
            return FlagSuggestion(
                result=None, articles=(article,),
                text=f"no loss: {name} had completed the {end} moves of the period; the clock did not add the next "
                     f"period: correct the clock ({article})")
    articles = _FLAG_ARTICLES[edition]
    cite = ", ".join(articles)
    mate = can_mate(board, not flagged)
    if mate is False:
        return FlagSuggestion(result="1/2-1/2", articles=articles,
                              text=f"1/2-1/2: {name}'s flag fell, but {opponent} cannot checkmate ({cite})")
    result = "0-1" if flagged == chess.WHITE else "1-0"
    if mate is None:
        return FlagSuggestion(result=result, articles=articles, verify=True,
                              text=f"{result}: {name} loses on time unless the arbiter finds that {opponent} cannot "
                                   f"mate ({cite})")
    return FlagSuggestion(result=result, articles=articles, text=f"{result}: {name} loses on time ({cite})")


def both_flags_suggestion(*, edition: int, category: Category, regime: Regime, last_period: bool,
                          increment: bool, first: chess.Color | None = None,
                          board: chess.Board | None = None) -> FlagSuggestion:
    """Both flags down (rules-spec 7.4).

    If the order is known (``first``; electronic clocks show it, equipment standard 5.1 E) the
    first flag decides, as in :func:`flag_suggestion` (``board`` is then required). Otherwise:
    E2009/E2014 6.11: play on in a period that is not the last, draw in the last; E2009 rapid
    "otherwise": draw (A.4 d.3); E2014 rapid/blitz "otherwise": nobody can claim (A.4 c), draw
    by analogy with 6.11; E2018/E2023: Guidelines III.3.1 (same rule) only for games without
    increment, otherwise the arbiter decides (``verify``).

    Raises:
        ValueError: unknown edition, or ``first`` given without ``board``.
    """
    _check_edition(edition)
    if first is not None:
        if board is None:
            raise ValueError("the position is needed to rule on the first flag")
        return flag_suggestion(board, first, edition=edition)
    otherwise = regime is Regime.OTHERWISE and category in (Category.RAPID, Category.BLITZ)
    if edition == 2009 and otherwise and category is Category.RAPID:
        return FlagSuggestion(result="1/2-1/2", articles=("A.4 d.3",), text="1/2-1/2: both flags fell (A.4 d.3)")
    if edition == 2014 and otherwise:
        return FlagSuggestion(result="1/2-1/2", articles=("A.4 c", "6.11"), verify=True,
                              text="1/2-1/2: both flags fell and nobody can claim with time left (A.4 c); draw by "
                                   "analogy with 6.11 (arbiter)")
    if edition >= 2018:
        articles: tuple[str, ...] = ("III.3.1",)
        if increment:
            return FlagSuggestion(result=None, articles=articles, verify=True,
                                  text="both flags fell, order unknown: arbiter's judgement (Guidelines III.3.1 "
                                       "covers games without increment only)")
    else:
        articles = ("6.11",)
    cite = ", ".join(articles)
    if last_period:
        return FlagSuggestion(result="1/2-1/2", articles=articles,
                              text=f"1/2-1/2: both flags fell in the last period, order unknown ({cite})")
    return FlagSuggestion(result=None, articles=articles,
                          text=f"play on: both flags fell in a period that is not the last, order unknown ({cite})")


def draw_claim_available(board: chess.Board) -> str | None:
    """A correct draw claim for the side to move (9.2/9.3): ``"threefold"``, ``"fifty-moves"`` or None.

    Threefold covers both 9.2 cases: the position is about to appear a third time by a move the
    claimant intends to make (9.2.1), or has just appeared a third time (9.2.2); python-chess's
    :meth:`chess.Board.can_claim_threefold_repetition` checks both. The 50-move claim likewise
    covers a move that would complete 50 moves.
    """
    if board.can_claim_threefold_repetition():
        return "threefold"
    if board.can_claim_fifty_moves():
        return "fifty-moves"
    return None


def _consecutive_fivefold(board: chess.Board) -> bool:
    """E2014 9.6 a: the same position at least five times by consecutive alternate moves.

    Implemented as: the current position occurred five times within the last 16 plies, i.e. the
    last four move pairs each returned to it (a cycle of 4 plies, the shortest possible).
    """
    key = _key(board)
    copy = board.copy()
    count = 1
    for _ in range(16):
        if not copy.move_stack:
            break
        copy.pop()
        if _key(copy) == key:
            count += 1
    return count >= 5


def automatic_draw(board: chess.Board, edition: int) -> str | None:
    """An automatic draw (9.6): ``"fivefold"``, ``"seventy-five"`` or None.

    Not in E2009. E2014 9.6 a needs five occurrences "by consecutive alternate moves": we read it as
    the position recurring every four plies over the last sixteen (see :func:`_consecutive_fivefold`);
    E2018+ 9.6.1 counts any five occurrences. A checkmate on the 75th move takes precedence (9.6.2).

    Raises:
        ValueError: unknown edition.
    """
    _check_edition(edition)
    if edition == 2009:
        return None
    if board.is_checkmate():
        return None
    fivefold = _consecutive_fivefold(board) if edition == 2014 else board.is_fivefold_repetition()
    if fivefold:
        return "fivefold"
    if board.is_seventyfive_moves():
        return "seventy-five"
    return None
