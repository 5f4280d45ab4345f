"""Private bridge to :mod:`boardd.core.laws` and :mod:`boardd.core.clock` (written by another engineer).

The engine must work while those modules are still being written: every helper here
uses the real module when it can be imported and a conservative local fallback
otherwise. The fallbacks follow rules-spec §5/§6/§7 closely enough for the engine's
own tests; the real modules are the reference.
"""

from __future__ import annotations

import importlib
import logging
import re
from dataclasses import dataclass
from types import ModuleType

import chess

from boardd.core.outputs import Confidence, Severity

_LOGGER = logging.getLogger(__name__)


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_LAWS = _module("boardd.core.laws")
#: Above this many pieces :func:`is_dead_position` does not call the laws (it runs after every move).
_SEARCH_MAX_PIECES = 6

_IMP = {"CASTLING_INCOMPLETE_AT_PRESS", "EN_PASSANT_INCOMPLETE_AT_PRESS", "PROMOTION_INCOMPLETE_AT_PRESS",
        "PAWN_NOT_REPLACED"}
_IMP_2018 = {"CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND", "TWO_HANDS_AT_PRESS"}
_WARNING = {
    "SENSOR_FAULT", "SETUP_INCORRECT", "ADJUST_OUT_OF_TURN", "TOUCH_MOVE_SUSPECTED", "TOUCH_CAPTURE_SUSPECTED",
    "TOUCH_MOVE_VIOLATION", "RELEASED_MOVE_CHANGED", "CASTLING_ROOK_FIRST", "CASTLING_KING_RELEASED_NOT_COMPLETED",
    "PROMOTION_CHOICE_CHANGED", "OPPONENT_STARTED_BEFORE_MOVE_MADE", "TWO_HANDS_SUSPECTED",
    "CLOCK_PRESS_OTHER_HAND_SUSPECTED", "CLOCK_BOUNCE", "CLOCK_MOVE_COUNTER_MISMATCH", "CLOCK_SETTING_SUSPECT",
    "MATE_FLAG_RACE", "DISPLACED_NOT_RESTORED_AT_PRESS", "POSITION_DIVERGENCE", "OUT_OF_TURN_CHANGE",
    "POSITION_MISMATCH_AT_PRESS", "ILLEGAL_POSITION_PENDING", "TAKEBACK_DETECTED",
    "CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND", "TWO_HANDS_AT_PRESS",
}
_SUSPECTED = {
    "ADJUST_OBSERVED", "ADJUST_OUT_OF_TURN", "TOUCH_MOVE_SUSPECTED", "TOUCH_CAPTURE_SUSPECTED",
    "RELEASED_MOVE_CHANGED", "CASTLING_KING_RELEASED_NOT_COMPLETED", "OPPONENT_STARTED_BEFORE_MOVE_MADE",
    "TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS", "CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND",
    "CLOCK_PRESS_OTHER_HAND_SUSPECTED", "CLOCK_BOUNCE", "MATE_FLAG_RACE", "DISPLACED_PIECES",
    "DISPLACED_NOT_RESTORED_AT_PRESS", "OUT_OF_TURN_CHANGE", "POSITION_MISMATCH_AT_PRESS",
    "PROMOTION_INCOMPLETE_AT_PRESS", "CHESS960_CASTLING_ORDER",
}


@dataclass(frozen=True, slots=True)
class CodeFacts:
    """Severity, confidence and articles of a code for an edition."""

    severity: Severity
    confidence: Confidence
    articles: tuple[str, ...]
    title: str = ""


def is_illegal_move_class(code: str, edition: int) -> bool:
    """Whether *code* counts toward the illegal-move limit in *edition* (rules-spec §6.2)."""
    if _LAWS is not None and hasattr(_LAWS, "is_illegal_move_class"):
        try:
            return bool(_LAWS.is_illegal_move_class(code, edition))
        except (KeyError, ValueError):  # a code (or edition) the table does not know: the local table decides
            _LOGGER.debug("laws.is_illegal_move_class has no entry for %s/%s", code, edition)
    if code.startswith("ILLEGAL_MOVE/") or code in _IMP:
        return True
    return code in _IMP_2018 and edition >= 2018


def code_facts(code: str, edition: int) -> CodeFacts:
    """Facts of *code* (``"ILLEGAL_MOVE/GEOMETRY"`` accepted) for *edition*."""
    if _LAWS is not None and hasattr(_LAWS, "code_info"):
        try:
            info = _LAWS.code_info(code, edition)
            return CodeFacts(_as_severity(info.severity), _as_confidence(info.confidence),
                             tuple(info.articles), str(getattr(info, "title", "")))
        except Exception:  # the table may not know a code yet; fall back
            _LOGGER.debug("laws.code_info has no entry for %s/%s", code, edition)
    if is_illegal_move_class(code, edition):
        severity = Severity.ILLEGAL_MOVE
    elif code in _WARNING:
        severity = Severity.WARNING
    else:
        severity = Severity.INFO
    confidence = Confidence.SUSPECTED if code in _SUSPECTED else Confidence.AUTO
    return CodeFacts(severity, confidence, ())


def _as_severity(value: object) -> Severity:
    if isinstance(value, Severity):
        return value
    text = str(getattr(value, "value", value)).lower()
    if text in ("imp", "illegal-move", "illegal_move"):
        return Severity.ILLEGAL_MOVE
    return Severity.WARNING if text == "warning" else Severity.INFO


def _as_confidence(value: object) -> Confidence:
    if isinstance(value, Confidence):
        return value
    text = str(getattr(value, "value", value)).lower()
    return Confidence.SUSPECTED if text.startswith("susp") else Confidence.AUTO


def category_of(time_control: str, edition: int) -> str:
    """Category name (``standard``/``rapid``/``blitz``) of a PGN TimeControl (rules-spec §7.1)."""
    clock = _module("boardd.core.clock")
    if _LAWS is not None and hasattr(_LAWS, "category_of") and clock is not None:
        try:
            cat = _LAWS.category_of(clock.TimeControl.parse(time_control), edition)
            return str(getattr(cat, "value", cat))
        except Exception:
            _LOGGER.debug("laws.category_of failed for %r", time_control)
    total = 0.0
    inc = 0.0
    moves_done = 0
    for part in time_control.split(":"):
        m = re.fullmatch(r"(?:(\d+)/)?(\d+)(?:[+d](\d+))?", part.strip())
        if not m:
            return "standard"
        if moves_done < 60:
            total += float(m.group(2))
        if m.group(3):
            inc = float(m.group(3))
        moves_done += int(m.group(1)) if m.group(1) else 1000
    t60 = (total + 60 * inc) / 60
    if edition == 2009:
        return "blitz" if t60 < 15 else "rapid" if t60 < 60 else "standard"
    return "blitz" if t60 <= 10 else "rapid" if t60 < 60 else "standard"


def increment_of(time_control: str) -> float:
    """The Fischer increment (seconds) of the first period that has one."""
    m = re.search(r"\+(\d+(?:\.\d+)?)", time_control)
    return float(m.group(1)) if m else 0.0


@dataclass(frozen=True, slots=True)
class Penalty:
    """A penalty suggestion (rules-spec §6)."""

    stands: bool
    add_to_opponent_s: int | None
    remove_from_offender_s: float | None
    result: str | None
    text: str


def can_mate(board: chess.Board, color: chess.Color) -> bool | None:
    """Whether *color* can checkmate by any series of legal moves; None when it is not proven either way.

    Only the bounded, cheap tiers of rules-spec §7.6 run here, because the engine calls this
    inside ``feed`` (flag falls, illegal-move penalties) and must not stall:

    * a finished game answers directly (the mate on the board, stalemate);
    * material certainties (python-chess's test: bare king, lone minor piece, ...);
    * a locked position (kings, bishops and pawns, nothing able to change the structure) that
      :func:`boardd.core.laws.is_dead_position` proves dead (exhaustive, at most
      ``laws.CLOSURE_BUDGET`` positions).

    Everything else is None (unknown): the penalty text then says "loss unless the arbiter finds
    that the opponent cannot mate" (§7.6 tier 3). The helpmate search of :func:`boardd.core.laws.can_mate`
    is deliberately not called: it was measured at up to ~1 s with 6 pieces and ~3 s with 7 pieces
    on the real endgames of ``shared/data/pgn`` (2026-11, a shared 2-core machine), far beyond a
    ``feed`` budget.
    """
    if board.is_checkmate():
        return board.turn != color
    if board.is_stalemate() or board.has_insufficient_material(color):
        return False
    if _LAWS is not None and hasattr(_LAWS, "is_dead_position"):
        try:
            if _LAWS.is_dead_position(board):
                return False
        except Exception:
            _LOGGER.debug("laws.is_dead_position failed")
    return None


def is_dead_position(board: chess.Board) -> bool:
    """Neither side can mate (5.2.2). The search runs only with few pieces on the board."""
    if board.is_insufficient_material():
        return True
    if board.occupied.bit_count() > _SEARCH_MAX_PIECES:
        return False
    if _LAWS is not None and hasattr(_LAWS, "is_dead_position"):
        try:
            return bool(_LAWS.is_dead_position(board))
        except Exception:
            _LOGGER.debug("laws.is_dead_position failed")
    return board.is_insufficient_material()


def suggest_penalty(*, edition: int, category: str, regime: str, n: int, offender: chess.Color,
                    opp_can_mate: bool | None, observed_in_window: bool = True, increment_earned_s: float = 0.0,
                    blitz_adequate_penalty_2023: int = 1) -> Penalty:
    """Penalty suggestion of rules-spec §6.3 for the *n*-th illegal-move-class event of *offender*."""
    if _LAWS is not None and hasattr(_LAWS, "suggest_penalty"):
        try:
            cat_mod = _module("boardd.core.settings")
            assert cat_mod is not None
            sug = _LAWS.suggest_penalty(
                edition=edition, category=cat_mod.Category(category), regime=cat_mod.Regime(regime), n=n,
                offender=offender, opp_can_mate=opp_can_mate, observed_in_window=observed_in_window,
                increment_earned_s=increment_earned_s, blitz_adequate_penalty_2023=blitz_adequate_penalty_2023)
            return Penalty(bool(sug.stands), sug.add_to_opponent_s, sug.remove_from_offender_s, sug.result,
                           str(sug.text))
        except Exception:
            _LOGGER.debug("laws.suggest_penalty failed; using the local table")
    loss = "0-1" if offender == chess.WHITE else "1-0"
    lose = "1/2-1/2" if opp_can_mate is False else loss
    if regime == "otherwise" and category in ("rapid", "blitz"):
        if not observed_in_window:
            return Penalty(True, None, None, None, "the illegal move stands (not claimed in time)")
        if edition == 2014 or (edition == 2009 and category == "blitz"):
            return Penalty(False, None, None, lose, "game lost by the offender" if lose == loss else "draw")
    limit = 3 if edition == 2009 else 2
    if n >= limit:
        return Penalty(False, None, None, lose, "illegal-move limit reached")
    minutes = 2
    if (edition in (2014, 2018) and category == "blitz") or (edition == 2023 and category == "rapid"):
        minutes = 1
    if edition == 2023 and category == "blitz":
        minutes = 1 if (regime == "otherwise" or blitz_adequate_penalty_2023 == 1) else 2
    return Penalty(False, minutes * 60, increment_earned_s or None, None,
                   f"+{minutes}:00 to the opponent; reinstate the position before the illegal move")


_AUTOMATIC = {"fivefold": "GAME_END_FIVEFOLD", "seventy-five": "GAME_END_75_MOVES"}


def automatic_draw(board: chess.Board, edition: int) -> str | None:
    """``GAME_END_FIVEFOLD`` / ``GAME_END_75_MOVES`` when 9.6 ends the game (never in E2009), else None."""
    if _LAWS is not None and hasattr(_LAWS, "automatic_draw"):
        try:
            found = _LAWS.automatic_draw(board, edition)
            return None if found is None else _AUTOMATIC.get(str(found), str(found))
        except Exception:
            _LOGGER.debug("laws.automatic_draw failed; using python-chess")
    if edition == 2009 or board.is_checkmate():
        return None
    if board.is_fivefold_repetition():
        return "GAME_END_FIVEFOLD"
    return "GAME_END_75_MOVES" if board.is_seventyfive_moves() else None
