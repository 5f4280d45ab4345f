"""The code table of rules-spec §5.1/§5.2: codes, articles per edition, severities, confidence (data).

:func:`code_info` resolves a row for one edition of the Laws (2009, 2014, 2018, 2023): the articles to cite,
the severity (which changes with the edition for the 7.5.3/7.5.4 codes), the confidence, a default suggestion
and a title in plain words for the arbiter's tablet. Article strings are transcribed from the spec table; "—"
(no such provision in that edition) gives an empty tuple. :func:`is_illegal_move_class` is rules-spec §6.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from boardd.core.outputs import Confidence, Severity
from boardd.core.settings import EDITIONS

if TYPE_CHECKING:
    pass

__all__ = [
    "ILLEGAL_MOVE_SUBTYPES",
    "MOVE_RECORD_CODES",
    "CodeInfo",
    "check_edition",
    "code_info",
    "irregularity_codes",
    "is_illegal_move_class",
    "known_codes",
]

_INFO = Severity.INFO
_WARN = Severity.WARNING
_IMP = Severity.ILLEGAL_MOVE
_AUTO = Confidence.AUTO
_SUSP = Confidence.SUSPECTED


def check_edition(edition: int) -> int:
    """*edition* if it is one of the Laws' editions boardd knows.

    Raises:
        ValueError: unknown edition.
    """
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
    # R19 (clarified): a warning until the arbiter confirms it; confirmed in 2018/2023 it is of the illegal-move
    # class (is_illegal_move_class) and the engine raises its severity then.
    "TWO_HANDS_AT_PRESS": _row(_arts("4.1", "4.1", "7.5.4"), _WARN, _SUSP,
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


#: The codes of rules-spec §5.1 (move-record events, not irregularities); every other code of the table is §5.2.
MOVE_RECORD_CODES = frozenset({
    "MOVE_MADE", "MOVE_COMPLETED", "MOVE_COMPLETED_WITHOUT_PRESS", "CLOCK_NOT_PRESSED", "CLOCK_LATE_PRESS",
    "LATENCY_RACE", "GAME_END_CHECKMATE", "GAME_END_STALEMATE", "GAME_END_DEAD_POSITION", "GAME_END_FIVEFOLD",
    "GAME_END_75_MOVES", "DRAW_CLAIM_AVAILABLE", "MOVE_AFTER_GAME_END", "ARBITER_ADJUST",
})


def irregularity_codes() -> tuple[str, ...]:
    """The codes of rules-spec §5.2 in the table's order (``ILLEGAL_MOVE`` as ``ILLEGAL_MOVE/<subtype>``)."""
    return tuple(f"{code}/<subtype>" if code == "ILLEGAL_MOVE" else code
                 for code in _TABLE if code not in MOVE_RECORD_CODES)


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
    check_edition(edition)
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
    check_edition(edition)
    base, _ = _split_code(code)
    if base not in _TABLE:
        raise KeyError(code)
    return base in (_IMP_2018 if edition >= 2018 else _IMP_2009)


