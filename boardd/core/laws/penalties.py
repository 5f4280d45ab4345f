"""Penalty logic of the Laws: categories (rules-spec §7.1), illegal-move penalties (§6.3, §6.4), flag rulings.

* :func:`category_of` is 7.1 (with the multi-period convention O10).
* :func:`suggest_penalty` (6.3) decides what an illegal-move-class event costs, per edition, category and
  supervision regime; :func:`incorrect_draw_claim_penalty_s` is the price of an incorrect draw claim.
* :func:`flag_suggestion` / :func:`both_flags_suggestion` are the flag-fall rulings of 7.4 (6.9 with the
  can-mate exception, 6.4 / 6.10.2 clock errors, 6.11 / A.4 / Guidelines III.3.1).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess

from boardd.core.settings import Category, Regime

if TYPE_CHECKING:
    from boardd.core.clock import TimeControl
from boardd.core.laws.codes import check_edition
from boardd.core.laws.positions import can_mate

__all__ = ["FlagSuggestion", "PenaltySuggestion", "both_flags_suggestion", "category_of", "flag_fall_result",
           "flag_suggestion", "incorrect_draw_claim_penalty_s", "suggest_penalty"]

_LOGGER = logging.getLogger(__name__)


# --- Categories (rules-spec 7.1) --------------------------------------------------------------------


def category_of(tc: TimeControl, edition: int) -> Category:
    """The category of ``tc`` under ``edition`` (7.1), from ``T60 = base + 60 x bonus``.

    E2009: blitz below 15 minutes, rapid from 15 to below 60. E2014+: blitz up to 10 minutes
    inclusive, rapid above 10 and below 60. Standard from 60 minutes. Multi-period controls count
    the periods that begin within the first 60 moves (O10). An untimed control is standard.

    Raises:
        ValueError: unknown edition.
    """
    check_edition(edition)
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
    check_edition(edition)
    _check_penalty_args(n, increment_earned_s, blitz_adequate_penalty_2023)
    opponent = not offender
    otherwise = regime is Regime.OTHERWISE and category in (Category.RAPID, Category.BLITZ)
    base = _BASE_ARTICLE[edition]
    regime_articles = _REGIME_ARTICLES.get((category, otherwise), {}).get(edition, ())
    if otherwise:
        if not observed_in_window:
            cite = ", ".join(regime_articles)
            return PenaltySuggestion(
                stands=True, add_to_opponent_s=None, remove_from_offender_s=None, result=None, reinstate=False,
                articles=regime_articles,
                text=f"the illegal move stands: no ruling or claim before {_side(opponent)}'s next move ({cite})")
        if edition == 2014:
            return _loss(list(regime_articles), f"{_side(offender)}'s illegal move observed or claimed in time",
                         offender, opp_can_mate)
        if edition == 2009 and category is Category.BLITZ:
            return _loss(list(regime_articles),
                         f"{_side(opponent)} claimed {_side(offender)}'s illegal move before moving",
                         offender, opp_can_mate)
    limit = 3 if edition == 2009 else 2
    ordinal = _ORDINAL.get(n, f"{n}th")
    if n >= limit:
        return _loss([base, *regime_articles], f"{ordinal} illegal move by {_side(offender)}", offender, opp_can_mate)
    return _time_penalty(edition, category, otherwise=otherwise, articles=(base, *regime_articles),
                         offender=offender, increment_earned_s=increment_earned_s,
                         blitz_adequate_penalty_2023=blitz_adequate_penalty_2023)


def _check_penalty_args(n: int, increment_earned_s: float, blitz_adequate_penalty_2023: int) -> None:
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n counts the current illegal move and must be >= 1, got {n!r}")
    if increment_earned_s < 0:
        raise ValueError(f"increment_earned_s must be >= 0, got {increment_earned_s!r}")
    if blitz_adequate_penalty_2023 not in (1, 2):
        raise ValueError(f"blitz_adequate_penalty_2023 must be 1 or 2, got {blitz_adequate_penalty_2023!r}")


def _loss(articles: list[str], why: str, offender: chess.Color, opp_can_mate: bool | None) -> PenaltySuggestion:
    """The game lost by the offender, or drawn when the opponent cannot checkmate (6.9 / 7.5.5)."""
    opponent = not offender
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


def _time_penalty(edition: int, category: Category, *, otherwise: bool, articles: tuple[str, ...],
                  offender: chess.Color, increment_earned_s: float,
                  blitz_adequate_penalty_2023: int) -> PenaltySuggestion:
    """Time to the opponent (2 minutes, 1 in the editions' faster categories) and the position reinstated."""
    opponent = not offender
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
    arts = _dedupe([a for a in (*articles, minute_article) if a])
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
    check_edition(edition)
    if edition == 2009:
        return 180
    if category is Category.BLITZ or (edition == 2023 and category is Category.RAPID):
        return 60
    return 120



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
    check_edition(edition)
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
    check_edition(edition)
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


